/* Gyre, everything a host includes: the core types and math, the middleware contract, the physics
 * subsystem, scene loading, and the World with its game-facing physics API and debug draw. */
#ifndef GYRE_GYRE_H
#define GYRE_GYRE_H

#include "gyre/backend.h"
#include "gyre/capture.h"
#include "gyre/core.h"
#include "gyre/geometry.h"
#include "gyre/math.h"
#include "gyre/obj_cache.h"
#include "gyre/physics.h"
#include "gyre/query_snapshot.h"
#include "gyre/scene.h"
#include "gyre/scene_barrier.h"
#include "gyre/scene_instance.h"
#include "gyre/world.h"
#include "gyre/world_debug_draw.h"
#include "gyre/world_physics.h"

#endif /* GYRE_GYRE_H */
