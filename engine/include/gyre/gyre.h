/* Gyre for a host using the World: the core types and math, the shared definitions, the World
 * with its game-facing physics API and debug draw, scene loading and capture, and the physics
 * subsystem's definition, counters and diagnostics. A host that drives the physics subsystem
 * without the World adds gyre/physics/commands.h; someone writing a driver includes
 * gyre/backend/backend.h. docs/embedding.md lists every header by audience. */
#ifndef GYRE_GYRE_H
#define GYRE_GYRE_H

#include "gyre/capture.h"
#include "gyre/core.h"
#include "gyre/math.h"
#include "gyre/obj_cache.h"
#include "gyre/physics/physics.h"
#include "gyre/scene.h"
#include "gyre/scene_instance.h"
#include "gyre/types.h"
#include "gyre/world.h"
#include "gyre/world_debug_draw.h"
#include "gyre/world_physics.h"

#endif /* GYRE_GYRE_H */
