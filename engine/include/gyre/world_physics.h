/* The game-facing physics API of the World (gyre/world.h): physics components on entities, body
 * writes (velocities, forces, impulses, torques, teleports), character input, the state the
 * physics thread reported, joints, queries with results as entities, per-entity collision
 * callbacks, and runtime collision geometry.
 *
 * Identity. Every body the World asks the physics thread for gets a new gy_physics_body_ref from
 * the subsystem (at add, at every re-enable or update, and at restart): the same index (a dense
 * slot the component keeps for its life, reused after it goes) with a generation never issued
 * before. Replies, proxies and events that name a ref the component no longer has are ignored,
 * so removing and re-adding physics never inherits an old body or pose.
 *
 * Effective enable = the entity is active in the hierarchy AND the component's is_active switch is
 * on. Off releases the body (EXIT callbacks for its touching pairs); on recreates it from the
 * current transform with the authored settings.
 *
 * Validation. Every call checks, in this order, and returns the first failure with nothing
 * recorded: GY_ERR_INVALID_ARGUMENT (NULL world or out pointer), GY_ERR_STALE_HANDLE (null,
 * unknown or destroyed entity), GY_ERR_MISUSE (the entity has no physics component, or is not a
 * character for character input), GY_ERR_NON_FINITE / GY_ERR_INVALID_ARGUMENT (bad numbers:
 * non-finite, or outside the ranges of gyre/backend/backend.h, e.g. a component beyond
 * GY_MAX_MAGNITUDE), GY_ERR_INVALID_MOTION (forces, impulses and torques need a dynamic body;
 * velocities a non-static one), GY_ERR_INACTIVE (the component is not effective, its create failed,
 * or physics is stopped: the write does nothing).
 *
 * Threading: the game thread (see gyre/world.h). Writes are recorded at once into the open command
 * batch and reach the physics thread at the next gy_world_tick. */
#ifndef GYRE_WORLD_PHYSICS_H
#define GYRE_WORLD_PHYSICS_H

#include "gyre/types.h"
#include "gyre/physics/character.h"
#include "gyre/core.h"
#include "gyre/scene.h"
#include "gyre/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- runtime collision geometry ---------------------------------------------------------------
 */

/* A triangle mesh or convex hull the game built at run time (voxel chunk, carved terrain). */
typedef struct gy_geometry {
    uint64_t bits;
} gy_geometry;

/* Copies the data and returns an id holding the creator's reference. A collider names it by
 * putting the id's bits in `def.shape.resource.bits` (shape type Mesh or Hull to match). Each
 * physics component using it pins it until the component lets go (removed, updated away, entity
 * destroyed), so the creator may release right after setting it, even before the body is built.
 * Errors: GY_ERR_INVALID_ARGUMENT (NULL world, def or out), GY_ERR_NON_FINITE (a non-finite
 * coordinate), GY_ERR_INVALID_MESH (too few points or indices, an index out of range, a
 * coordinate beyond GY_MAX_LOCAL_EXTENT: see gy_validate_mesh_def / _hull_def), GY_ERR_CAPACITY,
 * GY_ERR_OUT_OF_MEMORY. */
gy_result gy_geometry_create_mesh(gy_world *world, const gy_mesh_def *def, gy_geometry *out);
gy_result gy_geometry_create_hull(gy_world *world, const gy_hull_def *def, gy_geometry *out);

/* Drops the creator's reference; the geometry goes once no component pins it. Releasing again,
 * or a stale id, is a no-op. */
void gy_geometry_release(gy_world *world, gy_geometry g);

/* True while the geometry is resident (creator reference or pins outstanding). */
bool gy_geometry_is_valid(const gy_world *world, gy_geometry g);

typedef struct gy_geometry_stats {
    uint32_t resident; /* geometries alive now (meshes + hulls) */
    uint32_t meshes;
    uint32_t hulls;
    uint32_t creator_refs; /* creator references not yet released */
    uint32_t pins;         /* collider pins held by physics components */
    uint32_t failed;       /* rejected by the adapter (CREATE_FAILED) */
    uint64_t created;      /* cumulative */
    uint64_t freed;        /* cumulative */
} gy_geometry_stats;

void gy_geometry_get_stats(const gy_world *world, gy_geometry_stats *out);

/* ---- the physics component --------------------------------------------------------------------
 */

/* The authored description is the scene loader's gy_scene_physics (gyre/scene.h), so a scene's
 * components and the game's are one type. The World copies it. Every field acts, or gy_body_add
 * and gy_body_update refuse the description with GY_ERR_INVALID_ARGUMENT and log (GY_LOG_ERROR)
 * the field by name:
 *   - body_type decides the motion (Trigger: static, every collider a sensor). body.type is not
 *     read: leave it at its default (or equal to what body_type gives). body.pose is not read
 *     (the entity's world pose places the body): leave it at identity. Velocities are the
 *     initial ones at every (re)creation (a Static or Trigger body refuses any).
 *   - Dynamic-only settings (mass, mass_properties, damping, gravity_factor, allow_sleeping,
 *     continuous, locks) are refused on other body types unless left at their defaults.
 *   - body.user_data is the host's: kept, returned by gy_body_get_def and
 *     gy_body_get_user_data, never used by Gyre (it names bodies to the adapter by itself).
 *   - is_active is the component switch.
 *   - is_character, max_slope, step_offset: character settings (max_slope and step_offset are
 *     refused away from their defaults on a body that is not a character). A character is
 *     Kinematic with exactly one collider, its capsule; the World runs Gyre's character
 *     controller (gyre/physics/character.h) for it unless the host installed its own hook.
 *   - colliders (1..65535): for Hull and Mesh shapes either def.shape.resource.bits names a
 *     gy_geometry of this World, or resource is null and vertices (+ indices for meshes) are given,
 *     from which the World builds geometry the component owns (colliders sharing the same arrays
 *     share it); vertices on any other shape, or beside a geometry id, are refused. The
 *     collider's user_data is kept in the description. The scene loader's labels (material and
 *     collision names) say where a collider came from and are not kept.
 */
typedef gy_scene_physics gy_physics_component_def;

/* Dynamic, active, gy_default_body_def(), not a character, max_slope 45° (in radians),
 * step_offset 0.3 m, no colliders. */
gy_physics_component_def gy_default_physics_component_def(void);

/* A one-collider description: gy_default_physics_component_def() with `type` and `collider` (read
 * when the description is used, not kept). With gy_default_scene_collider and gy_body_create a body
 * is four lines: gy_scene_collider ball = gy_default_scene_collider(gy_sphere(0.5));
 *     gy_physics_component_def desc = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &ball);
 *     gy_entity e;
 *     gy_body_create(world, gy_v3(0, 5, 0), &desc, &e); */
gy_physics_component_def gy_default_physics_component_def_for(gy_body_type type,
                                                              const gy_scene_collider *collider);

/* Shapes for gy_default_scene_collider: a sphere of `radius`, a box of full extents `size`, a
 * capsule standing along local Y (total `height`, caps included). Checked when used. */
gy_shape gy_sphere(double radius);
gy_shape gy_box(gy_vec3 size);
gy_shape gy_capsule(double radius, double height);

/* Creates a root entity at `position` (no name, identity rotation) and adds the physics
 * component `desc` to it; *out receives it (null on failure, when nothing is left behind).
 * Errors: those of gy_entity_create and gy_body_add. */
gy_result gy_body_create(gy_world *world, gy_vec3 position, const gy_physics_component_def *desc,
                         gy_entity *out);

/* Adds a physics component. Errors: GY_ERR_STALE_HANDLE, GY_ERR_MISUSE (already has one),
 * GY_ERR_INVALID_ARGUMENT / GY_ERR_NON_FINITE / GY_ERR_INVALID_SHAPE / GY_ERR_INVALID_MOTION /
 * GY_ERR_INVALID_MESH (description), GY_ERR_STALE_HANDLE (a geometry id not resident),
 * GY_ERR_CAPACITY, GY_ERR_OUT_OF_MEMORY. */
gy_result gy_body_add(gy_world *world, gy_entity e, const gy_physics_component_def *desc);

/* Removes it: the body is released, its geometry unpinned. GY_ERR_STALE_HANDLE, GY_ERR_MISUSE. */
gy_result gy_body_remove(gy_world *world, gy_entity e);

/* Replaces the authored description (is_active included); the body is recreated with the new
 * settings at the current transform. Errors as gy_body_add (GY_ERR_MISUSE: no component). */
gy_result gy_body_update(gy_world *world, gy_entity e, const gy_physics_component_def *desc);

/* The authored description as stored (colliders point into the World, read-only: bodies with
 * identical descriptions share them; valid until the component changes). Hull and mesh colliders
 * name their gy_geometry in resource.bits. */
gy_result gy_body_get_def(const gy_world *world, gy_entity e, gy_physics_component_def *out);

bool gy_body_exists(const gy_world *world, gy_entity e);

/* The component switch. */
gy_result gy_body_set_active(gy_world *world, gy_entity e, bool active);

/* The enable trio. */
typedef struct gy_body_enable {
    bool entity_active;    /* active in the hierarchy */
    bool component_active; /* the component's switch */
    bool effective;        /* both: a body exists (or is being created) */
} gy_body_enable;

gy_result gy_body_get_enable(const gy_world *world, gy_entity e, gy_body_enable *out);

/* Effective enable (false for a stale entity or one without physics). */
bool gy_body_is_active(const gy_world *world, gy_entity e);

/* ---- writes (recorded, applied at the physics thread's next drain) ----------------------------
 */

gy_result gy_body_set_linear_velocity(gy_world *world, gy_entity e, gy_vec3 v);  /* m/s */
gy_result gy_body_set_angular_velocity(gy_world *world, gy_entity e, gy_vec3 w); /* rad/s */
/* Newtons, for the next physics step only. */
gy_result gy_body_apply_force(gy_world *world, gy_entity e, gy_vec3 force);
/* N·m, for the next physics step only. */
gy_result gy_body_apply_torque(gy_world *world, gy_entity e, gy_vec3 torque);
/* N·s, applied once, in exactly one physics tick; two calls are two impulses. */
gy_result gy_body_apply_impulse(gy_world *world, gy_entity e, gy_vec3 impulse);
gy_result gy_body_apply_impulse_at(gy_world *world, gy_entity e, gy_vec3 impulse,
                                   gy_vec3 world_point);

/* Moves the entity (world pose) and its body there at once; it is drawn at the teleport (not
 * interpolated from where it was) until the results after it come, and physics results from
 * before the teleport never overwrite it. Also valid for
 * an entity without physics (then it is gy_entity_set_world_pose). */
gy_result gy_body_teleport(gy_world *world, gy_entity e, gy_pose pose);

/* A Kinematic body (not a character) travels to `target` (world pose of the body) by velocity,
 * arriving exactly after `duration` seconds, rounded up to whole physics steps (0: the next step),
 * then stops there. On the way it pushes Dynamic bodies and carries what rests on it (bodies and
 * characters), which a teleport does not. The move starts from wherever the body is when the
 * physics thread applies it; a teleport, a velocity write or a new move ends it early (the body
 * then stops where it is, apart from what the write sets). Errors: GY_ERR_STALE_HANDLE,
 * GY_ERR_MISUSE (no component), GY_ERR_NON_FINITE / GY_ERR_INVALID_ARGUMENT (the pose, a
 * negative duration or one longer than 2^30 - 1 steps), GY_ERR_INVALID_MOTION (not Kinematic, or
 * a character), GY_ERR_INACTIVE. */
gy_result gy_body_move_kinematic(gy_world *world, gy_entity e, gy_pose target, double duration);

/* Characters: the desired velocity (m/s; horizontal walk, vertical for jumps), kept by the
 * controller until changed; and a one-off jump of `speed` m/s (> 0) delivered to exactly one
 * physics tick. `flags` reach a host's own character hook unchanged
 * (gy_physics_character_input.flags); Gyre's controller has none, so with it any flag other
 * than 0 is refused (GY_ERR_INVALID_ARGUMENT). */
gy_result gy_character_set_intent(gy_world *world, gy_entity e, gy_vec3 velocity, uint32_t flags);
gy_result gy_character_jump(gy_world *world, gy_entity e, double speed);

/* ---- live changes (recorded, applied at the physics thread's next drain) -----------------------
 * The body is changed in place, never recreated: touching pairs stay touching (no EXIT/ENTER)
 * unless a filter change makes a pair stop (EXIT) or start (ENTER) colliding. Mass, material and
 * filter are also kept in the description, so every later (re)creation has them. */

/* World gravity in m/s² (finite): every body wakes and falls under it from the next physics
 * tick; characters too. Kept across stop/start. GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT
 * (beyond GY_PHYSICS_MAX_MAGNITUDE). */
gy_result gy_world_set_gravity(gy_world *world, gy_vec3 gravity);
/* The gravity last set (the config's until then). */
gy_vec3 gy_world_gravity(const gy_world *world);

/* Turns the kill plane on at height `y` (metres) or off (see gy_world_def.kill_y); checked at
 * the end of every tick from the next one. GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT (beyond
 * GY_MAX_MAGNITUDE; y is not read when turning it off). */
gy_result gy_world_set_kill_plane(gy_world *world, bool enabled, double y);

/* Wakes a Dynamic body, or puts it to sleep at rest where it is (velocities and pending forces
 * dropped) until a write, a contact with an awake body, a joint or gravity wakes it.
 * GY_ERR_STALE_HANDLE, GY_ERR_MISUSE (no component), GY_ERR_INVALID_MOTION (not Dynamic),
 * GY_ERR_INACTIVE (no body now). */
gy_result gy_body_set_awake(gy_world *world, gy_entity e, bool awake);

/* A Dynamic body's total mass in kg, in [GY_MIN_MASS, GY_MAX_MASS] as at creation: mass and
 * inertia scale together (the centre of mass and the share of each collider stay), velocities are
 * kept, so an impulse J then changes the velocity by J / mass. GY_ERR_NON_FINITE,
 * GY_ERR_INVALID_ARGUMENT, GY_ERR_INVALID_MOTION. A component without a body now only keeps it
 * for its next creation. */
gy_result gy_body_set_mass(gy_world *world, gy_entity e, double mass);

/* The material of collider `collider` (index in the description's list), checked as in
 * gy_validate_material; contacts use it from the next tick. GY_ERR_INVALID_ARGUMENT (index past
 * the colliders, bad material), GY_ERR_NON_FINITE. */
gy_result gy_body_set_material(gy_world *world, gy_entity e, uint32_t collider,
                               gy_material material);

/* The collision filter of collider `collider` (as gy_collider_def.category and .mask; queries see
 * the new category too). A pair the new filter refuses gets its EXIT; a pair it newly accepts its
 * ENTER; pairs whose verdict is unchanged keep touching with no EXIT/ENTER.
 * GY_ERR_INVALID_ARGUMENT (index past the colliders). */
gy_result gy_body_set_filter(gy_world *world, gy_entity e, uint32_t collider, uint32_t category,
                             uint32_t mask);

/* The host's per-body value (the description's body.user_data): kept across activation, stop
 * and start, and every live change; replaced only by gy_body_update (with the new description's)
 * or this call. Gyre never reads it. Get returns 0 for an entity without a component. Set:
 * GY_ERR_OUT_OF_MEMORY (the value unchanged) when a value other than 0 cannot be stored. */
gy_result gy_body_set_user_data(gy_world *world, gy_entity e, uint64_t user_data);
uint64_t gy_body_get_user_data(const gy_world *world, gy_entity e);

/* ---- state ------------------------------------------------------------------------------------
 */

typedef struct gy_physics_state {
    gy_pose pose;             /* newest result, or the game's newer teleport */
    gy_vec3 linear_velocity;  /* m/s, as of `tick` (characters: their motion over the tick) */
    gy_vec3 angular_velocity; /* rad/s */
    bool awake;
    bool has_body; /* the physics thread reported the body (assigned and not released) */
    bool failed;   /* its create failed: `error` says why */
    gy_result error;
    bool faulted; /* the adapter produced non-finite state: frozen until teleported */
    gy_motion_type motion;
    gy_body_id body; /* the adapter's handle (for filters), null until assigned */
    /* The body's ref in the physics subsystem: the index (proxies are indexed by it) stays the
     * component's for its life; the generation is the current body's, 0 when not effective. */
    gy_physics_body_ref ref;
    uint64_t tick; /* the physics tick this state describes (0: none yet) */
    /* Characters (from the controller's reply for the newest tick): */
    bool grounded;                /* ground_state == GY_GROUND_WALKABLE */
    gy_ground_state ground_state; /* walkable, steep or airborne (airborne for non-characters) */
    bool hit_ceiling;             /* upward motion stopped by a ceiling in that tick */
    gy_vec3 ground_normal;        /* unit; zero when airborne */
    gy_vec3 platform_velocity;    /* the support's velocity under the feet, m/s */
    gy_entity ground;             /* the entity stood on, null when airborne or unknown */
} gy_physics_state;

/* The body's state as of the newest synced proxy. GY_ERR_STALE_HANDLE, GY_ERR_MISUSE. */
gy_result gy_body_get_state(const gy_world *world, gy_entity e, gy_physics_state *out);

/* ---- collision callbacks ----------------------------------------------------------------------
 */

typedef enum gy_collision_kind {
    GY_COLLISION_ENTER = 0,
    GY_COLLISION_STAY = 1,
    GY_COLLISION_EXIT = 2
} gy_collision_kind;

/* One collider pair of the entity's body, seen from that entity. */
typedef struct gy_collision_event {
    gy_collision_kind kind;
    gy_entity self;                         /* may already be destroyed (EXIT after a destroy) */
    gy_entity other;                        /* likewise */
    uint16_t self_collider, other_collider; /* index in each body's collider list */
    gy_vec3 point;                          /* deepest point, world space */
    gy_vec3 normal;                         /* unit, from self towards other */
    double penetration;                     /* metres */
    double normal_impulse;                  /* N·s over the step; 0 for EXIT */
    double tangent_impulse;                 /* N·s; 0 for EXIT */
    uint64_t tick;                          /* the physics tick (low 32 bits as reported) */
    bool synthesized; /* an EXIT the World produced because a body went away */
} gy_collision_event;

/* Called on the game thread while gy_world_tick drains replies, in reply order, never from the
 * physics thread. It may use the whole World API (including destroying entities). Every ENTER is
 * followed by exactly one EXIT for that pair: on separation, when either body is released
 * (removed, switched off, updated, destroyed), and when physics stops. */
typedef void (*gy_collision_fn)(void *ctx, gy_world *world, const gy_collision_event *event);

/* Sets (fn NULL: clears) the entity's callback; it stays across physics remove/re-add and ends
 * with the entity. GY_ERR_STALE_HANDLE, GY_ERR_OUT_OF_MEMORY (changing nothing). */
gy_result gy_entity_set_collision_callback(gy_world *world, gy_entity e, gy_collision_fn fn,
                                           void *ctx);

/* ---- body events ------------------------------------------------------------------------------
 */

typedef enum gy_body_event_kind {
    GY_BODY_EVENT_SLEEP = 0, /* a Dynamic body fell asleep (never reported at its creation) */
    GY_BODY_EVENT_WAKE = 1,  /* a Dynamic body woke (also one created asleep) */
    GY_BODY_EVENT_KILLED = 2 /* the kill plane removed the entity (gy_world_set_kill_y) */
} gy_body_event_kind;

/* One lifecycle event of an entity's body. */
typedef struct gy_body_event {
    gy_body_event_kind kind;
    gy_entity entity; /* KILLED: already destroyed (its pairs' EXITs came first) */
    uint64_t tick;    /* the physics tick it was found in */
} gy_body_event;

/* Called on the game thread while gy_world_tick drains replies (sleep, wake) or right after it
 * removed a killed entity, never from the physics thread. It may use the whole World API. */
typedef void (*gy_body_event_fn)(void *ctx, gy_world *world, const gy_body_event *event);

/* Sets (fn NULL: clears) the entity's body event callback; it stays across physics remove/re-add
 * and ends with the entity (a KILLED event is still delivered to it). GY_ERR_STALE_HANDLE,
 * GY_ERR_OUT_OF_MEMORY (changing nothing). */
gy_result gy_entity_set_body_callback(gy_world *world, gy_entity e, gy_body_event_fn fn, void *ctx);

/* ---- joints -----------------------------------------------------------------------------------
 */

typedef struct gy_joint {
    uint64_t bits;
} gy_joint;

typedef enum gy_joint_status {
    GY_JOINT_PENDING = 0, /* waiting for both bodies */
    GY_JOINT_LIVE,        /* created (or being created) on the physics thread */
    GY_JOINT_BROKEN,      /* broke (breakable): stays broken until released */
    GY_JOINT_FAILED       /* the adapter refused it */
} gy_joint_status;

/* A joint between entity `a` (physics, not static) and `b` (physics, or null: the world). The
 * def's type, anchor and axis (world space, now), limits, distance and break force are used; its
 * body handles and user data are ignored. Anchor and axis are kept in a's frame, so the joint is
 * recreated in place whenever both bodies are recreated. Errors: GY_ERR_STALE_HANDLE,
 * GY_ERR_MISUSE (a or b without physics, a == b), GY_ERR_INVALID_MOTION (a static),
 * GY_ERR_NON_FINITE / GY_ERR_INVALID_ARGUMENT (def), GY_ERR_CAPACITY, GY_ERR_OUT_OF_MEMORY. */
gy_result gy_joint_create(gy_world *world, gy_entity a, gy_entity b, const gy_joint_def *def,
                          gy_joint *out);

/* Releases it (GY_ERR_STALE_HANDLE for an unknown or released joint). Destroying either entity
 * releases it too. */
gy_result gy_joint_release(gy_world *world, gy_joint j);

gy_result gy_joint_get_status(const gy_world *world, gy_joint j, gy_joint_status *out);

/* Replaces a hinge's or slider's motor (gy_joint_motor in gyre/backend/backend.h; GY_MOTOR_OFF
 * removes it): applied by the physics thread at its next drain, and kept if the joint is recreated.
 * GY_ERR_MISUSE for other joint types; a bad motor changes nothing (gy_validate_joint_motor). */
gy_result gy_joint_set_motor(gy_world *world, gy_joint j, const gy_joint_motor *motor);

/* The motor last given to the joint (at creation or by gy_joint_set_motor). */
gy_result gy_joint_get_motor(const gy_world *world, gy_joint j, gy_joint_motor *out);

/* The joint's state (angle or offset from creation, its rate, the force and torque it applied
 * to a) as of the last tick in which one of its bodies was awake. GY_ERR_INACTIVE while the
 * joint is not live or before its first report. */
gy_result gy_joint_get_state(const gy_world *world, gy_joint j, gy_joint_state *out);

/* ---- queries ----------------------------------------------------------------------------------
 */

typedef struct gy_world_query_filter {
    uint32_t mask;         /* colliders with (category & mask) != 0; default all bits */
    uint32_t motion_types; /* GY_MOTION_BIT set; default GY_MOTION_ALL */
    bool include_sensors;  /* default false */
    gy_entity ignore;      /* this entity's body is skipped; null: none */
} gy_world_query_filter;

gy_world_query_filter gy_default_world_query_filter(void);

/* One hit, translated to the entity that owns the collider. */
typedef struct gy_world_hit {
    gy_entity entity;
    gy_vec3 point;      /* world space */
    gy_vec3 normal;     /* world space, out of the surface hit */
    double fraction;    /* 0..1 along the translation */
    double distance;    /* metres */
    double penetration; /* overlaps and casts starting in contact; else 0 */
    int32_t triangle;   /* mesh triangle, else -1 */
} gy_world_hit;

/* Live exact queries through the adapter (they wait for the physics thread's current step).
 * Collectors as in backend.h. Results go to the caller's `hits` (capacity entries), `*count`
 * receives how many; hits on bodies the World no longer has (removed this frame) are left out.
 * *tick (optional): the physics tick the answer describes. Errors: GY_ERR_INVALID_ARGUMENT,
 * GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT / GY_ERR_INVALID_SHAPE (an origin, translation or
 * position component beyond GY_MAX_MAGNITUDE, a shape size outside its range: the same for live
 * and snapshot queries, running or stopped), GY_ERR_STALE_HANDLE (ignore names a dead entity),
 * GY_ERR_INACTIVE (physics stopped), the adapter's. */
gy_result gy_world_raycast(gy_world *world, gy_vec3 origin, gy_vec3 translation,
                           const gy_world_query_filter *filter, gy_collector collector,
                           gy_world_hit *hits, uint32_t capacity, uint32_t *count, uint64_t *tick);
gy_result gy_world_shape_cast(gy_world *world, const gy_shape *shape, gy_pose pose,
                              gy_vec3 translation, const gy_world_query_filter *filter,
                              gy_collector collector, gy_world_hit *hits, uint32_t capacity,
                              uint32_t *count, uint64_t *tick);
gy_result gy_world_overlap(gy_world *world, const gy_shape *shape, gy_pose pose,
                           const gy_world_query_filter *filter, gy_collector collector,
                           gy_world_hit *hits, uint32_t capacity, uint32_t *count, uint64_t *tick);

/* Lock-free queries against the query snapshot of the newest physics publish (never waits for
 * the physics thread). Overlap shapes: sphere, box, capsule, or a hull naming World geometry in
 * `shape->resource`. Overlap hits fill only `entity` and `triangle`. Shape casts take what
 * gy_world_shape_cast takes (sphere, box, capsule, or a hull naming World geometry in
 * `shape->resource`) and answer as it does, except that `penetration` is 0 for a cast starting in
 * contact (fraction 0). Errors as above; GY_ERR_BUSY before the first publish. */
gy_result gy_world_snapshot_raycast(gy_world *world, gy_vec3 origin, gy_vec3 translation,
                                    const gy_world_query_filter *filter, gy_collector collector,
                                    gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                                    uint64_t *tick);
gy_result gy_world_snapshot_overlap(gy_world *world, const gy_shape *shape, gy_pose pose,
                                    const gy_world_query_filter *filter, gy_collector collector,
                                    gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                                    uint64_t *tick);
gy_result gy_world_snapshot_shape_cast(gy_world *world, const gy_shape *shape, gy_pose pose,
                                       gy_vec3 translation, const gy_world_query_filter *filter,
                                       gy_collector collector, gy_world_hit *hits,
                                       uint32_t capacity, uint32_t *count, uint64_t *tick);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_WORLD_PHYSICS_H */
