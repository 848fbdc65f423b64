/* Scene instances: a loaded, validated scene description (gyre/scene.h) made into World entities,
 * physics components, shared collision geometry and joints (gyre/world.h, gyre/world_physics.h).
 *
 * All or nothing. The description was validated when it was loaded; instantiation checks its
 * arguments before touching the World, and if the World still refuses something part-way (out of
 * memory, capacity) everything this call created is destroyed again before it returns. Nothing it
 * records reaches the physics thread before the next publish, so a rolled-back load leaves no
 * trace there either (the physics thread sees each create cancelled by its release).
 *
 * Two ways to load:
 *   - additive (gy_scene_load_additive): into a running World, inside a scene-barrier mutation
 *     window and the World write lock, next to whatever is there (streaming, `spawn`);
 *   - replace (gy_scene_load_replace): hard stop, the scene instantiated, the previous instance's
 *     entities destroyed, physics started again (rebuilt from the World's components).
 *
 * What is created, per scene entity (in scene order, parents before children):
 *   - an entity with the scene's name, active flag and local transform; roots are moved by the
 *     load's `offset`;
 *   - its physics component (gy_body_add with the scene's gy_scene_physics); Hull and Mesh
 *     colliders that name the same OBJ data share one gy_geometry per load;
 *   - joints, after every body, with anchors moved by `offset`.
 * Plane colliders are in world space: their plane is moved by `offset` as well, so a scene loaded
 * at an offset stays rigid. The scene's `physics` settings are launch-time (see
 * gy_scene_get_world_def); its `script` is for the runner and is not touched here.
 *
 * Threading: the World's owner thread (see gyre/world.h), never while holding the World lock.
 *
 * Streaming from callbacks. gy_scene_load_additive, gy_scene_unload and gy_scene_load_replace
 * called inside a dispatch — a collision callback or the update callback inside gy_world_tick, or
 * a callback run by gy_world_stop_physics / _start_physics — are deferred: the call checks its
 * arguments, returns GY_OK at once (a load hands back a `pending` instance whose handles are
 * null), and the work is performed, in request order, when the dispatching call ends (after
 * gy_world_tick has released the World lock; requests made by callbacks that this work causes
 * run in the same pass). The scene must stay alive until then. A deferred load that fails is
 * logged and leaves `result` set on its instance; freeing a pending instance cancels its load.
 * Inside gy_world_destroy they are refused (GY_ERR_MISUSE). gy_scene_instantiate takes no lock
 * and runs at once, in a callback too. */
#ifndef GYRE_SCENE_INSTANCE_H
#define GYRE_SCENE_INSTANCE_H

#include "gyre/core.h"
#include "gyre/scene.h"
#include "gyre/world.h"
#include "gyre/world_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One load of a scene into a World: what it created, in scene order. The instance does not own
 * the entities (destroying the record leaves them in the World) nor the scene. */
typedef struct gy_scene_instance {
    const gy_scene *scene;  /* the description it was made from (not owned) */
    gy_vec3 offset;         /* metres added to root positions */
    gy_entity *entities;    /* scene->entity_count handles: entities[i] is scene->entities[i] */
    uint32_t entity_count;
    gy_joint *joints;       /* scene->joint_count handles, in scene order */
    uint32_t joint_count;
    /* A load requested from inside a dispatch (see "Streaming from callbacks"): true until the
     * dispatching call ends and the load is performed; its handles are null until then. */
    bool pending;
    /* The outcome of a deferred load (GY_OK for an immediate one): on failure the instance holds
     * null handles, nothing was left in the World, and `failed_entity` is the scene entity the
     * World refused (or -1). The failure is also logged through the World's logger. */
    gy_result result;
    int32_t failed_entity;
    /* private */
    const gy_allocator *allocator_;
    gy_world *world_; /* while pending */
} gy_scene_instance;

/* Fills the physics part of a World configuration from the scene's launch-time settings: backend
 * (`backend_override` when non-NULL, else the scene's, else "ode"), gravity, step rate (rounded to
 * whole hertz, which the physics thread needs), substeps and solver iterations. Other fields of
 * *config are left as they are. GY_ERR_INVALID_ARGUMENT for NULL scene or config. */
gy_result gy_scene_get_world_def(const gy_scene *scene, const char *backend_override,
                                 gy_world_def *config);

/* Creates the scene's entities, components, geometry and joints in the World as it stands,
 * without the barrier or the World lock (the caller provides whatever exclusion it needs; a
 * World whose physics is stopped needs none). `offset` must be finite. `allocator` is for the
 * instance record (NULL: default). On success *out receives the instance (free it with
 * gy_scene_instance_free). On failure nothing is left in the World and *out is NULL. Errors:
 * GY_ERR_INVALID_ARGUMENT (NULL world, scene or out), GY_ERR_NON_FINITE (offset), and those of
 * gy_entity_create, gy_body_add, gy_geometry_create_* and gy_joint_create (the World refused part
 * of the scene; *failed_entity, when non-NULL, receives the index of the scene entity it refused,
 * or -1 when it was not about an entity). */
gy_result gy_scene_instantiate(gy_world *world, const gy_scene *scene, gy_vec3 offset,
                               const gy_allocator *allocator, gy_scene_instance **out,
                               int32_t *failed_entity);

/* Additive load into a World whose physics runs: requests a scene-barrier mutation window
 * (waiting at most `timeout_ns`, 0 = 5 s), takes the World write lock, instantiates, and releases
 * both in reverse order. The creates reach the physics thread at the next publish, all in one
 * batch. A World whose physics is stopped is loaded without the barrier. Errors: those of
 * gy_scene_instantiate, GY_ERR_TIMEOUT (barrier not granted; nothing created), and the barrier's
 * misuse errors. */
gy_result gy_scene_load_additive(gy_world *world, const gy_scene *scene, gy_vec3 offset,
                                 uint64_t timeout_ns, const gy_allocator *allocator,
                                 gy_scene_instance **out, int32_t *failed_entity);

/* Full replace: stops physics (hard stop: the thread is joined, EXIT callbacks dispatched),
 * instantiates the scene, destroys the entities of `previous` (NULL: none) that are still alive,
 * frees that record and starts physics again, rebuilt from the World's components. Entities the
 * World holds outside `previous` are kept. The World keeps its own physics settings (backend,
 * gravity, rate). All or nothing: if instantiation fails, `previous` and its entities stay as
 * they were and physics is started again; the error is returned. Physics that was stopped on
 * entry is left stopped. Errors: those of gy_scene_instantiate, gy_world_stop_physics and
 * gy_world_start_physics (after a start failure the load has happened; physics is stopped). */
gy_result gy_scene_load_replace(gy_world *world, gy_scene_instance *previous,
                                const gy_scene *scene, const gy_allocator *allocator,
                                gy_scene_instance **out, int32_t *failed_entity);

/* Additive unload: destroys the instance's entities that are still alive (inside a barrier
 * window and the World write lock when physics runs, like the load) and frees the record.
 * Entities the game destroyed already are skipped. NULL instance is ignored. Errors:
 * GY_ERR_INVALID_ARGUMENT (NULL world), GY_ERR_TIMEOUT (the record is kept; try again). */
gy_result gy_scene_unload(gy_world *world, gy_scene_instance *instance, uint64_t timeout_ns);

/* Frees the record only (the entities stay in the World). NULL is ignored. */
void gy_scene_instance_free(gy_scene_instance *instance);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_SCENE_INSTANCE_H */
