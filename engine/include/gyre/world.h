/* The World: the game thread's entities, their transforms and hierarchy, and the host loop that
 * ties them to the physics subsystem (gyre/physics/physics.h). The physics game API (bodies,
 * forces, queries, collision callbacks, joints, runtime geometry) is in gyre/world_physics.h.
 *
 * Entities are generational handles: the all-zero handle is null, and a destroyed entity's handle
 * is rejected (GY_ERR_STALE_HANDLE) even after its slot is reused. Each entity has a name, an
 * active flag, an optional parent and a local transform (position, rotation, scale). World
 * transforms are propagated through the hierarchy before physics and rendering read them. Scale
 * is for rendering only: it is inherited, but never applied to collision shapes.
 *
 * Threading contract
 *   - One thread owns the World: the one that created it, until it hands the World over
 *     (gy_world_release_ownership on the owner, then gy_world_take_ownership on the new owner).
 *     Every function here and in gyre/world_physics.h and gyre/scene_instance.h that takes a World
 *     runs on the owner, unless marked otherwise. Collision callbacks and the update callback run
 *     on it, inside gy_world_tick. A call from any other thread returns GY_ERR_WRONG_THREAD (or
 *     the function's empty answer: false, 0, a null handle) and changes nothing; the check is
 *     always on, in every build type, and the first such call is logged.
 *   - Tools on other threads take the World lock: while a thread holds the write side
 *     (gy_world_lock_write) it may make any call, while it holds the read side only the calls
 *     that take a const World. gy_world_tick takes the write side itself for its whole duration,
 *     so the owner never calls it while holding the lock, and owner code outside tick that may
 *     race a tool holds the write side too. The physics thread never takes the World lock.
 *   - Lock order: the scene barrier (gy_physics_barrier) before the World lock, never while
 *     holding it. Builds with the lock_checks option abort on the inversion.
 *
 * Units: metres, kilograms, seconds, radians; Y is up. */
#ifndef GYRE_WORLD_H
#define GYRE_WORLD_H

#include "gyre/types.h"
#include "gyre/core.h"
#include "gyre/obj_cache.h"
#include "gyre/physics/physics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_world gy_world;

/* An entity: low 32 bits slot + 1, high 32 bits generation; all-zero is null. */
typedef struct gy_entity {
    uint64_t bits;
} gy_entity;

static inline gy_entity gy_entity_null(void)
{
    gy_entity e = {0};
    return e;
}
static inline bool gy_entity_is_null(gy_entity e)
{
    return e.bits == 0;
}
static inline bool gy_entity_equal(gy_entity a, gy_entity b)
{
    return a.bits == b.bits;
}

/* ---- creation -------------------------------------------------------------------------------- */

/* Called at the start of every gy_world_tick (game thread, World write lock held). `dt` is the
 * host frame time in seconds. */
typedef void (*gy_world_update_fn)(void *ctx, gy_world *world, double dt);

typedef struct gy_world_def {
    /* The physics subsystem: backend, gravity, step rate, lockstep, queue sizes, clock. Its
     * allocator and logger are replaced by the ones below. Leave move_characters NULL for the
     * World to run Gyre's character controller on components with is_character (a host hook
     * set here replaces it, and then the World registers no characters). */
    gy_physics_def physics;
    /* Every allocation of the World and the subsystem; NULL: the default allocator. The World
     * counts what it holds through it (physics.meter is replaced by the World's meter), and the
     * subsystem's diagnostics report those bytes (gy_physics_diagnostics.allocator_*_bytes). */
    const gy_allocator *allocator;
    const gy_logger *logger;   /* NULL: stderr for warnings and errors */
    bool start_stopped;        /* leave the physics thread stopped (gy_world_start_physics) */
    gy_world_update_fn update; /* optional game callback, first thing in every tick */
    void *update_ctx;
    /* Lockstep: how long gy_world_tick waits for the physics thread per tick before giving up
     * with GY_ERR_TIMEOUT. 0 = 10 s. */
    uint64_t step_timeout_ns;
    /* How far the drawn poses trail the simulation's clock, in simulated seconds (see
     * gy_world_render_time). 0: automatic, one step plus the time results have lately taken from
     * being due to being published, kept between an eighth and a quarter of a step (exactly one
     * step in lockstep).
     * Otherwise fixed, 0 < render_delay <= 2 steps. The host clock it is measured on is
     * physics.clock (gy_clock_now_ns when NULL), which the game thread then reads too (at each
     * tick, time scale and hold change) besides the physics thread: inject one there to drive a
     * World by hand. */
    double render_delay;
    /* The kill plane: when `kill_plane` is set, at the end of every gy_world_tick each entity
     * whose body is Dynamic or a character and whose centre of mass (a character: its capsule's
     * centre) lies below `kill_y` (metres, finite, within GY_MAX_MAGNITUDE) is destroyed as
     * gy_entity_destroy would, and a GY_BODY_EVENT_KILLED follows its EXITs. Default off;
     * gy_world_set_kill_plane changes it. */
    bool kill_plane;
    double kill_y;
} gy_world_def;

/* gy_default_physics_def() (real time, 60 Hz), default allocator and logger, physics started. */
gy_world_def gy_default_world_def(void);

/* Creates a World and (unless start_stopped) starts its physics thread on an empty world.
 * Errors: GY_ERR_INVALID_ARGUMENT (out NULL, render_delay negative or above two steps),
 * GY_ERR_NON_FINITE (render_delay), those of gy_physics_create / gy_physics_start. */
gy_result gy_world_create(const gy_world_def *config, gy_world **out);

/* What an orderly teardown found. */
typedef struct gy_world_teardown {
    /* Adapter objects (bodies, colliders, joints, resources) still alive after the World released
     * everything it had created: 0 unless something leaked. Valid when `adapter_checked`. */
    uint32_t adapter_live_objects;
    bool adapter_checked; /* false: physics was stopped, or the physics thread did not confirm
                             the releases in time */
    uint32_t entities_destroyed;   /* entities still alive at teardown (not leaks) */
    uint32_t geometries_reclaimed; /* runtime geometry whose creator never released it */
} gy_world_teardown;

/* Orderly teardown: destroys every entity (releasing bodies, joints and geometry, with EXIT
 * callbacks for every pair still touching), waits (bounded) for the physics thread to apply the
 * releases and counts what the adapter still holds, stops the thread and frees everything.
 * Leaks are logged as warnings and returned in *report (optional). Returns GY_OK, or
 * GY_ERR_TIMEOUT when the releases could not be confirmed (the World is freed all the same).
 * NULL is ignored. GY_ERR_MISUSE (nothing freed) from inside gy_world_tick or a callback. */
gy_result gy_world_destroy(gy_world *world, gy_world_teardown *report);

/* Hands the World over (owner only): afterwards no thread owns it until one calls
 * gy_world_take_ownership. GY_ERR_WRONG_THREAD, GY_ERR_MISUSE (inside gy_world_tick or a
 * callback, or while this thread holds the World lock). */
gy_result gy_world_release_ownership(gy_world *world);

/* Any thread: makes the calling thread the owner of a World nobody owns. GY_ERR_BUSY when it is
 * owned (by this thread or another), GY_ERR_INVALID_ARGUMENT for NULL. The hand-over must be
 * ordered by the host (a thread start, a mutex, a queue), as for any object passed between
 * threads. */
gy_result gy_world_take_ownership(gy_world *world);

/* The physics subsystem (for its barrier, stats and diagnostics). Do not record body, joint or
 * resource commands on it directly: the World would not know about them. */
gy_physics *gy_world_physics(gy_world *world);

/* The World's OBJ cache (gyre/obj_cache.h), for gy_scene_load_file_cached: cells streamed into
 * this World parse each OBJ file once while some loaded scene holds it. It lives until the World
 * is destroyed and the last scene holding one of its meshes is freed. NULL for a NULL World. */
gy_obj_cache *gy_world_obj_cache(gy_world *world);

/* ---- entities -------------------------------------------------------------------------------- */

typedef struct gy_entity_def {
    const char *name; /* copied; NULL or "" for none; need not be unique */
    gy_entity parent; /* null: a root */
    bool active;      /* default true */
    gy_vec3 position; /* local to the parent; default 0 */
    gy_quat rotation; /* local, unit length (within 1e-3; normalised); default identity */
    gy_vec3 scale;    /* render scale, each > 0; default {1, 1, 1} */
} gy_entity_def;

gy_entity_def gy_default_entity_def(void);

/* Creates an entity. GY_ERR_STALE_HANDLE for a dead parent, GY_ERR_NON_FINITE,
 * GY_ERR_INVALID_ARGUMENT (rotation not unit, scale <= 0, a position component beyond
 * GY_MAX_MAGNITUDE, gyre/backend/backend.h), GY_ERR_CAPACITY (2^24 entities),
 * GY_ERR_OUT_OF_MEMORY. */
gy_result gy_entity_create(gy_world *world, const gy_entity_def *def, gy_entity *out);

/* Destroys an entity and its whole subtree: physics released (EXIT callbacks for every pair still
 * touching, dispatched at the next drain), joints naming them released. GY_ERR_STALE_HANDLE. */
gy_result gy_entity_destroy(gy_world *world, gy_entity e);

/* True for a live entity; never asserts. */
bool gy_entity_is_valid(const gy_world *world, gy_entity e);

/* Live entities. */
uint32_t gy_world_entity_count(const gy_world *world);

/* Lists the live entities in slot order (a destroyed entity's slot is reused, so this is not
 * creation order): writes min(count, capacity) handles to `out` (NULL with capacity 0 only
 * counts) and returns the count, so a caller can size its array and call again. Linear in the
 * highest entity slot used. */
uint32_t gy_world_get_entities(const gy_world *world, gy_entity *out, uint32_t capacity);

/* The first live entity named `name`, or null. Linear in the entity count. */
gy_entity gy_world_find_entity(const gy_world *world, const char *name);

/* The entity's name ("" when none), or NULL for a stale handle. Valid until it is destroyed. */
const char *gy_entity_name(const gy_world *world, gy_entity e);

/* The entity's own active flag. An entity is active in the hierarchy when it and every ancestor
 * are active; switching it off releases the bodies of its whole subtree, switching it on again
 * recreates them from their current transforms. GY_ERR_STALE_HANDLE. */
gy_result gy_entity_set_active(gy_world *world, gy_entity e, bool active);
bool gy_entity_is_active(const gy_world *world, gy_entity e); /* own flag */
bool gy_entity_is_active_in_hierarchy(const gy_world *world, gy_entity e);

/* Re-parents (null: make it a root), keeping the local transform (so the world pose may change: a
 * body is then teleported). GY_ERR_STALE_HANDLE; GY_ERR_INVALID_ARGUMENT when `parent` is `e` or
 * one of its descendants; GY_ERR_OUT_OF_MEMORY (a root becoming a child), changing nothing. */
gy_result gy_entity_set_parent(gy_world *world, gy_entity e, gy_entity parent);
/* The parent, or null (also for a stale handle). */
gy_entity gy_entity_parent(const gy_world *world, gy_entity e);
/* Children in insertion order: the first child, then each one's next sibling (null at the end). */
gy_entity gy_entity_first_child(const gy_world *world, gy_entity e);
gy_entity gy_entity_next_sibling(const gy_world *world, gy_entity e);

/* ---- transforms ------------------------------------------------------------------------------ */

/* Local transform. Changing the transform of an entity with a live body (or of an ancestor)
 * teleports the body at the next publish, and that body is not interpolated for one frame.
 * Errors: GY_ERR_STALE_HANDLE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT (rotation not unit
 * length within 1e-3, scale <= 0, a position component beyond GY_MAX_MAGNITUDE); a scale other than
 * (1, 1, 1) may give GY_ERR_OUT_OF_MEMORY, changing nothing. */
gy_result gy_entity_set_local_position(gy_world *world, gy_entity e, gy_vec3 position);
gy_result gy_entity_set_local_rotation(gy_world *world, gy_entity e, gy_quat rotation);
gy_result gy_entity_set_local_scale(gy_world *world, gy_entity e, gy_vec3 scale);
gy_result gy_entity_set_local_pose(gy_world *world, gy_entity e, gy_pose pose);
gy_result gy_entity_get_local_pose(const gy_world *world, gy_entity e, gy_pose *out);
gy_result gy_entity_get_local_scale(const gy_world *world, gy_entity e, gy_vec3 *out);

/* Sets the world pose (the local pose is derived from the parent's world pose). */
gy_result gy_entity_set_world_pose(gy_world *world, gy_entity e, gy_pose pose);

/* The world pose and scale now: local transforms composed up the hierarchy (always current, even
 * between propagations). For a body this is its newest physics result or the game's own newer
 * write. */
gy_result gy_entity_get_world_pose(const gy_world *world, gy_entity e, gy_pose *out);
gy_result gy_entity_get_world_scale(const gy_world *world, gy_entity e, gy_vec3 *out);

/* The pose to draw this frame: for a body, its pose at gy_world_render_time, interpolated
 * between the two physics results that bracket it (never extrapolated: at most the newest). A
 * teleported body is drawn at the teleport until the results after it come, and a new body at its
 * creation pose. For other entities: their parent's render pose composed with their local pose. */
gy_result gy_entity_get_render_pose(const gy_world *world, gy_entity e, gy_pose *out);

/* One body's drawn pose. */
typedef struct gy_render_pose {
    gy_entity entity;
    gy_pose pose;
} gy_render_pose;

/* The bodies whose drawn pose changed in the last gy_world_tick, with that pose (the same
 * gy_entity_get_render_pose gives): *out is a dense array of the returned count, valid until the
 * next gy_world_tick or body change. Every other body is drawn where it was drawn last frame, so
 * a host that keeps its own render transforms updates just these. Bodies drawn at a pose the game
 * gave (created, teleported, after a stop) are listed at most 2,048 per frame, the rest in the
 * frames that follow. Entities without a body are not listed. 0 (and *out NULL) for a NULL
 * argument. */
uint32_t gy_world_render_poses(const gy_world *world, const gy_render_pose **out);

/* The bodies the last gy_world_tick moved: those whose newest physics result changed (the pose
 * gy_entity_get_world_pose and gy_body_get_state report). Dense, valid until the next
 * gy_world_tick or body change; 0 (and *out NULL) for a NULL argument. */
uint32_t gy_world_moved_bodies(const gy_world *world, const gy_entity **out);

/* Propagates world transforms through the hierarchy now (gy_world_tick does it before publishing
 * and after syncing from physics). */
void gy_world_update_transforms(gy_world *world);

/* ---- the host loop --------------------------------------------------------------------------- */

/* One host frame of `dt` seconds (0 <= dt, finite; at most 0.25 s is used):
 *   1. the update callback (game logic);
 *   2. world transforms propagated; bodies the game moved are teleported; pending joints and
 *      body (re)creations recorded;
 *   3. commands published once (real time: the physics thread drains them at its next tick;
 *      lockstep: the World runs the ticks the accumulator owes, at most max_catchup_steps,
 *      the first of which drains them);
 *   4. replies drained: body assignments and failures, faults, joint breaks, then collision
 *      events dispatched in order to the entities' callbacks;
 *   5. transforms synced from the newest proxies (a result older than a game-side teleport never
 *      overwrites it), and propagated to children.
 * Takes the World write lock for its duration. Returns GY_OK, GY_ERR_NON_FINITE /
 * GY_ERR_INVALID_ARGUMENT for a bad dt, GY_ERR_TIMEOUT (lockstep tick not finished in time). */
gy_result gy_world_tick(gy_world *world, double dt);

/* The simulated time (seconds; tick t stands for t / step_hz) bodies are drawn at this frame:
 * the simulation's clock at this tick's host-clock reading, less the render delay
 * (gy_world_def.render_delay), never later than the newest result and never earlier than the
 * previous frame's. Real time: the simulation's clock is the newest result's time plus the host
 * time since that tick was due (gy_proxy_frame.due_ns) times the time scale, so it moves with the
 * host clock whenever results arrive; lockstep: the newest result's time plus the accumulator. */
double gy_world_render_time(const gy_world *world);

/* The render time's place in the last step, 0..1: (render time - (newest result's time - one
 * step)) / step. In lockstep with the default delay, the accumulator fraction. */
double gy_world_interpolation_alpha(const gy_world *world);

/* The physics tick of the newest proxies synced into the World (0 before the first). */
uint64_t gy_world_physics_tick(const gy_world *world);

/* The game's time scale, 0..64 (0 freezes the simulation). Real time: the physics thread scales
 * its clock; lockstep: the World scales its accumulator. GY_ERR_NON_FINITE /
 * GY_ERR_INVALID_ARGUMENT. */
gy_result gy_world_set_time_scale(gy_world *world, double scale);

/* The host's hold (application suspended) and resume. Wins over the time scale; on resume the
 * time spent held is never caught up (the physics thread's epoch rule; lockstep: the World drops
 * its accumulator). */
void gy_world_set_hold(gy_world *world, bool hold);

/* Hard stop: joins the physics thread (EXIT callbacks for every touching pair are dispatched
 * before it returns) and destroys the adapter world. Bodies, poses and velocities are kept in the
 * World. GY_ERR_MISUSE when already stopped. */
gy_result gy_world_stop_physics(gy_world *world);

/* Starts the physics thread and rebuilds the adapter world from the World's live components
 * (geometry, effective bodies at their current poses and velocities, joints whose bodies are
 * both present). Every body gets a new ref (gy_physics_body_ref: same index, new generation). A
 * body that can no longer be created as it stands (its entity's world pose composed beyond
 * GY_MAX_MAGNITUDE) stays out alone: its state reports `failed` with the error and a warning names
 * the entity; a reported velocity beyond the range restarts its body at rest. GY_ERR_MISUSE when
 * running; GY_ERR_OUT_OF_MEMORY, GY_ERR_CAPACITY and the adapter's errors (nothing started). */
gy_result gy_world_start_physics(gy_world *world);

/* True while the physics thread runs. */
bool gy_world_physics_running(const gy_world *world);

/* ---- the World lock (tools on other threads) --------------------------------------------------
 */

/* Reader/writer lock around the World for tools on other threads (see the threading contract),
 * noted for the lock-order checks (gy_world_lock_note_*). Any thread. Not recursive. Errors, with
 * nothing taken or released: GY_ERR_INVALID_ARGUMENT (NULL), GY_ERR_MISUSE (taking it on a thread
 * that already holds either side — inside gy_world_tick or a callback the owner holds the write
 * side — or releasing a side the thread does not hold), GY_ERR_BUSY (more than 32 readers at
 * once). */
gy_result gy_world_lock_read(gy_world *world);
gy_result gy_world_unlock_read(gy_world *world);
gy_result gy_world_lock_write(gy_world *world);
gy_result gy_world_unlock_write(gy_world *world);

/* ---- counters -------------------------------------------------------------------------------- */

typedef struct gy_world_stats {
    uint32_t entities;
    uint32_t bodies;           /* physics components */
    uint32_t bodies_effective; /* of which effective (entity active and component active) */
    uint32_t bodies_failed;    /* whose create failed (see gy_body_get_state) */
    uint32_t joints;
    uint32_t touching_pairs; /* collider pairs between ENTER and EXIT, as the game sees them */
    uint64_t ticks;          /* gy_world_tick calls */
    uint64_t
        body_refs_issued; /* body creates the World recorded (each a new gy_physics_body_ref) */
    uint64_t replies_handled;
    uint64_t replies_stale;     /* replies that named a body ref the World no longer has */
    uint64_t events_dispatched; /* collision callbacks called */
    uint64_t exits_synthesized; /* EXITs the World produced for released bodies */
    uint64_t stale_proxies;     /* proxies ignored because a game-side teleport is newer */
    /* Components the next publish's capture reads: every body in the physics run except statics
     * whose proxy has confirmed their pose (those cost nothing per frame until teleported,
     * released or restarted). */
    uint32_t bodies_tracked;
    uint64_t bodies_captured;    /* components read by captures so far (tracked, per publish) */
    uint64_t wrong_thread_calls; /* calls refused with GY_ERR_WRONG_THREAD */
    uint64_t streams_deferred;   /* streaming calls made in a dispatch and run at its end */
    /* The World's OBJ cache (gy_world_obj_cache): files parsed, loads served from a live entry,
     * live entries. */
    uint64_t obj_parses;
    uint64_t obj_hits;
    uint32_t obj_entries;
} gy_world_stats;

void gy_world_get_stats(const gy_world *world, gy_world_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_WORLD_H */
