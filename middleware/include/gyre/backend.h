/* The middleware contract: what every physics adapter (ODE, Bullet, ...) provides to Gyre.
 *
 * An adapter fills one gy_backend table of function pointers. Everything crossing this header is
 * plain data: definition structs (copied, never kept), opaque 64-bit generational handles (see
 * handle_pool.h: low 32 bits slot + 1, high 32 bits generation; all-zero is null) and result
 * structs. No vendor type appears here.
 *
 * Threading: a backend world is owned by one thread at a time. world_create may run anywhere;
 * before any other call from a thread, that thread calls bind_thread (which performs any
 * per-thread initialisation the vendor needs, e.g. ODE's per-thread collision data). Every other
 * call must then come from the bound thread, or be serialised by the caller with that thread and
 * made after the caller itself called bind_thread (see `flags`: GY_BACKEND_QUERIES_EXCLUSIVE).
 * Debug builds reject calls from an unbound thread with GY_ERR_WRONG_THREAD.
 *
 * Units: metres, kilograms, seconds, newtons, radians. Y is up. */
#ifndef GYRE_BACKEND_H
#define GYRE_BACKEND_H

#include "gyre/core.h"
#include "gyre/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles --------------------------------------------------------------------------------- */

typedef struct gy_body_id {
    uint64_t bits;
} gy_body_id;
typedef struct gy_collider_id {
    uint64_t bits;
} gy_collider_id;
typedef struct gy_joint_id {
    uint64_t bits;
} gy_joint_id;

/* An adapter's world; its layout is private to the adapter. */
typedef struct gy_backend_world gy_backend_world;

/* ---- world ----------------------------------------------------------------------------------- */

typedef struct gy_world_def {
    gy_vec3 gravity;            /* default {0, -9.81, 0} */
    uint32_t substeps;          /* middleware substeps per step, 1..16; default 1 */
    uint32_t solver_iterations; /* 1..255; default 10 */
    const gy_allocator *allocator; /* NULL: default allocator */
    const gy_logger *logger;       /* NULL: stderr for warnings and errors */
    /* Hint for static acceleration structures: half-size of the region statics live in, metres.
     * 0 = adapter default (4096). Statics outside it still work, only slower. */
    double world_half_extent;
} gy_world_def;

/* Defaults listed above. */
gy_world_def gy_default_world_def(void);

/* ---- bodies ---------------------------------------------------------------------------------- */

typedef enum gy_motion_type {
    GY_MOTION_STATIC = 0,
    GY_MOTION_KINEMATIC = 1,
    GY_MOTION_DYNAMIC = 2,
    GY_MOTION_TYPE_COUNT
} gy_motion_type;

/* Bit for a motion type in gy_query_filter.motion_types. */
#define GY_MOTION_BIT(t) (1u << (uint32_t)(t))
#define GY_MOTION_ALL    0x7u

/* Expert mass override: centre of mass in body space and the inertia tensor about it. */
typedef struct gy_mass_properties {
    gy_vec3 center_of_mass;
    gy_mat3 inertia; /* kg·m², symmetric positive-definite, about the centre of mass */
} gy_mass_properties;

typedef struct gy_body_def {
    gy_motion_type type; /* default Dynamic */
    gy_pose pose;        /* body origin in world space; default identity */
    gy_vec3 linear_velocity;  /* of the centre of mass, m/s */
    gy_vec3 angular_velocity; /* rad/s */
    /* Dynamic only. > 0: total mass in kg, distributed over colliders by density × volume.
     * 0: mass = Σ 1000 kg/m³ × density × volume. Ignored when has_mass_properties. */
    double mass;
    bool has_mass_properties;
    gy_mass_properties mass_properties; /* requires mass > 0 as the total */
    double linear_damping;  /* ≥ 0, default 0.05 (fraction of velocity removed per second) */
    double angular_damping; /* ≥ 0, default 0.05 */
    double gravity_factor;  /* default 1 */
    bool allow_sleeping;    /* default true */
    bool continuous;        /* continuous collision (fast small bodies); default false */
    bool lock_linear[3];    /* world axes X, Y, Z; default all false */
    bool lock_angular[3];
    uint64_t user_data; /* returned in contacts and hits; Gyre stores the attachment id here */
} gy_body_def;

gy_body_def gy_default_body_def(void);

/* State read back after a step. Pose is the body origin; linear velocity is the centre of mass's. */
typedef struct gy_body_state {
    gy_pose pose;
    gy_vec3 linear_velocity;
    gy_vec3 angular_velocity;
    bool awake; /* false for static bodies and sleepers */
} gy_body_state;

/* ---- shapes, materials, colliders ------------------------------------------------------------ */

typedef enum gy_combine_mode {
    GY_COMBINE_AVERAGE = 0,
    GY_COMBINE_MIN = 1,
    GY_COMBINE_MULTIPLY = 2,
    GY_COMBINE_MAX = 3 /* numeric order is precedence: a pair uses the larger of its two modes */
} gy_combine_mode;

typedef struct gy_material {
    double friction;    /* ≥ 0, default 0.5 */
    double restitution; /* ≥ 0, default 0 */
    gy_combine_mode friction_combine;    /* default average */
    gy_combine_mode restitution_combine; /* default max */
} gy_material;

gy_material gy_default_material(void);

/* Combines two values with the mode of higher precedence (max > multiply > min > average). */
double gy_combine(double a, gy_combine_mode ma, double b, gy_combine_mode mb);

/* gy_collider_def.one_way_slop's default, metres. */
#define GY_DEFAULT_ONE_WAY_SLOP 0.05

typedef struct gy_collider_def {
    gy_shape shape;
    gy_pose local_pose;  /* pose in the body; default identity */
    double density;      /* > 0, relative density for mass distribution; default 1 */
    gy_material material;
    bool is_sensor;        /* reports overlaps, applies no force; default false */
    bool contact_response; /* false: contacts reported, no impulse; default true */
    gy_vec3 surface_velocity; /* collider-local conveyor velocity, m/s; default 0 */
    bool one_way;             /* one-way platform; default false */
    gy_vec3 one_way_normal;   /* collider-local side that bodies land on; default {0, 1, 0} */
    /* Metres, 0..GY_MAX_LOCAL_EXTENT: a body whose first contact with the one-way collider is at
     * most this deep (one resting slightly below its top) lands on it even while the solver
     * pushes it out faster than a body may rise onto the platform; default
     * GY_DEFAULT_ONE_WAY_SLOP. */
    double one_way_slop;
    uint32_t category;        /* default 1 */
    uint32_t mask;            /* default all bits */
    uint64_t user_data;
} gy_collider_def;

gy_collider_def gy_default_collider_def(void);

/* How a collider treats what touches it, with its directions in world space at its current pose
 * (gy_backend.collider_get_policy). Characters, which move by queries, read it to meet colliders
 * exactly as bodies do in the step. */
typedef struct gy_collider_policy {
    bool is_sensor;
    bool contact_response;
    bool one_way;
    gy_vec3 one_way_normal;   /* world space, unit */
    gy_vec3 surface_velocity; /* world space, m/s */
    double one_way_slop;      /* metres (gy_collider_def.one_way_slop) */
} gy_collider_policy;

/* The one-way platform rule, decided at a pair's first contact and kept until the two separate:
 * the contact counts when its normal `normal_po` (platform to mover) is within 60° of the
 * platform's one-way normal `n` (world, unit), the mover's centre `com` lies on that side of the
 * contact `point`, and the mover is not rising through the platform faster than 0.25 m/s (`rel`:
 * its velocity at the point relative to the platform's) unless the contact is no deeper than the
 * platform's `slop` (metres: the solver pushing a body out of a shallow overlap is not a rise).
 * A swept mover (a character) passes INFINITY as `penetration`: its hits have no depth. */
bool gy_one_way_accepts(gy_vec3 normal_po, gy_vec3 n, gy_vec3 rel, gy_vec3 com, gy_vec3 point,
                        double penetration, double slop);

/* ---- resources ------------------------------------------------------------------------------- */

/* Triangle mesh data (copied). Indices are a non-zero multiple of 3, each < vertex_count. */
typedef struct gy_mesh_def {
    const gy_vec3 *vertices;
    uint32_t vertex_count;
    const uint32_t *indices;
    uint32_t index_count;
} gy_mesh_def;

/* Classifies the edges of a valid mesh definition (gy_validate_mesh_def) over all its triangles:
 * writes index_count / 3 flags to `active`, bit k set when edge k (corner k to corner k + 1) may
 * push a body with a normal of its own (boundary edges and convex ridges; not edges between faces
 * meeting flat or in a valley). A piece of a larger mesh created with the whole mesh's flags
 * (gy_backend.mesh_create_piece) keeps the seams it shares with the other pieces smooth. */
gy_result gy_mesh_classify_edges(const gy_allocator *al, const gy_mesh_def *def, uint8_t *active);

/* gy_mesh_classify_edges in slices of bounded work, for a mesh too large to classify in one go
 * (a runtime mesh built under a per-tick budget). The definition's arrays and `active` must outlive
 * the classifier; `active` is complete when run answers true. */
typedef struct gy_mesh_edge_classifier gy_mesh_edge_classifier;
gy_result gy_mesh_edge_classifier_begin(const gy_allocator *al, const gy_mesh_def *def,
                                        uint8_t *active, gy_mesh_edge_classifier **out);
/* Works until done or `budget` units are spent, never more (a vertex welded: 1 unit, a
 * triangle's edges entered: 3, an edge table slot resolved: 1); *used gets what it spent. */
bool gy_mesh_edge_classifier_run(gy_mesh_edge_classifier *c, uint64_t budget, uint64_t *used);
/* Frees the classifier (NULL is fine), done or not. */
void gy_mesh_edge_classifier_free(gy_mesh_edge_classifier *c);
/* The units a classification of `def` costs in all. */
uint64_t gy_mesh_edge_classifier_units(const gy_mesh_def *def);

/* Convex hull points (copied): at least 4, not all coplanar. The hull of the points is built. */
typedef struct gy_hull_def {
    const gy_vec3 *points;
    uint32_t point_count;
} gy_hull_def;

/* ---- joints ---------------------------------------------------------------------------------- */

typedef enum gy_joint_type {
    GY_JOINT_FIXED,
    GY_JOINT_BALL,
    GY_JOINT_HINGE,
    GY_JOINT_SLIDER,
    GY_JOINT_DISTANCE,
    GY_JOINT_TYPE_COUNT
} gy_joint_type;

/* What a hinge or slider motor drives towards. */
typedef enum gy_motor_mode {
    GY_MOTOR_OFF = 0,  /* no motor */
    GY_MOTOR_VELOCITY, /* the relative velocity `target` (rad/s or m/s) */
    GY_MOTOR_POSITION, /* the angle or offset `target` (rad or m, from the pose at creation) */
    GY_MOTOR_MODE_COUNT
} gy_motor_mode;

/* A hinge or slider motor. The sign is that of a relative to b (or the world), positive by the
 * right-hand rule about the axis (hinge) or along it (slider). A position motor arrives without
 * overshooting by more than 5 % of the move and rests on its target; limits win over motors. */
typedef struct gy_joint_motor {
    gy_motor_mode mode;
    double target;
    double max_force; /* > 0: the most torque (N·m, hinge) or force (N, slider) it applies */
} gy_joint_motor;

/* A joint's state after the last step. */
typedef struct gy_joint_state {
    /* Hinge: angle (rad) from the pose at creation; slider: offset (m) from it; distance: the
     * current length (m); ball: the swing angle (rad) between the axis as a and as b carry it;
     * fixed: 0. */
    double position;
    double velocity; /* its rate of change (rad/s or m/s) */
    double twist;    /* ball: a's rotation about the axis relative to b (rad); else 0 */
    gy_vec3 force;   /* N: the constraint force the joint applied to a in the last step */
    gy_vec3 torque;  /* N·m: the constraint torque about a's centre of mass in the last step */
} gy_joint_state;

typedef struct gy_joint_def {
    gy_joint_type type;
    gy_body_id a; /* required, must not be static */
    gy_body_id b; /* null: attached to the world */
    gy_vec3 anchor; /* world-space anchor at creation */
    /* Hinge and slider: world-space axis at creation (normalised by the adapter); ball: the
     * twist axis its cone and twist limits are measured about. */
    gy_vec3 axis;
    bool has_limits;
    double limit_min, limit_max; /* hinge: radians; slider: metres; min ≤ max */
    /* Distance: keep a's origin at this distance from the anchor (which moves with b, or stays in
     * the world when b is null). < 0: the distance at creation. */
    double distance;
    bool breakable;
    double break_force;   /* N; breaks once the constraint force exceeds it (breakable only) */
    gy_joint_motor motor; /* hinge and slider; mode GY_MOTOR_OFF (default): none */
    /* Distance: a spring-damper of this natural frequency (Hz, > 0) and damping ratio (>= 0)
     * around the length, for a's mass (world joint) or the reduced mass of a and b. */
    bool has_spring;
    double spring_frequency, spring_damping_ratio;
    /* Ball: the largest angle (rad, in (0, pi]) between the axis as a carries it and as b (or
     * the world) carries it. */
    bool has_cone;
    double cone_angle;
    /* Ball: the range (rad, within [-pi, pi]) of a's rotation about the axis relative to b. */
    bool has_twist_limits;
    double twist_min, twist_max;
    uint64_t user_data;
} gy_joint_def;

gy_joint_def gy_default_joint_def(void);

/* ---- contacts -------------------------------------------------------------------------------- */

/* One touching collider pair after a step (sensor overlaps and response-off pairs included).
 * a/b order is stable for the pair's lifetime (a.bits < b.bits for colliders). */
typedef struct gy_contact {
    gy_body_id body_a, body_b;
    gy_collider_id collider_a, collider_b;
    uint64_t user_a, user_b; /* the bodies' user_data */
    gy_vec3 point;           /* deepest point, world space */
    gy_vec3 normal;          /* unit, from A to B */
    double penetration;      /* ≥ 0 */
    double normal_impulse;   /* N·s summed over the pair's contact points in this step */
    double tangent_impulse;  /* N·s, magnitude */
    bool is_sensor;          /* either collider is a sensor */
} gy_contact;

/* ---- queries --------------------------------------------------------------------------------- */

typedef struct gy_query_filter {
    uint32_t mask;          /* colliders with (category & mask) != 0; default all bits */
    uint32_t motion_types;  /* GY_MOTION_BIT set; default GY_MOTION_ALL */
    bool include_sensors;   /* default false */
    gy_body_id ignore_body; /* null: none */
    gy_collider_id ignore_collider;
} gy_query_filter;

gy_query_filter gy_default_query_filter(void);

typedef enum gy_collector {
    GY_COLLECT_ANY,     /* stop at the first hit found (not necessarily the closest) */
    GY_COLLECT_CLOSEST, /* the single closest hit */
    GY_COLLECT_ALL      /* every hit, up to the caller's capacity, in no particular order */
} gy_collector;

typedef struct gy_hit {
    gy_body_id body;
    gy_collider_id collider;
    uint64_t user_data; /* the body's */
    int32_t triangle;   /* mesh triangle index, -1 otherwise */
    double fraction;    /* 0..1 along the ray or cast */
    double distance;    /* fraction × length */
    gy_vec3 point;      /* world space */
    gy_vec3 normal;     /* world space, pointing out of the hit surface */
    double penetration; /* overlap depth (overlaps and casts starting in contact), else 0 */
} gy_hit;

/* ---- counters -------------------------------------------------------------------------------- */

typedef struct gy_backend_counters {
    uint32_t bodies[GY_MOTION_TYPE_COUNT]; /* live bodies by motion type */
    uint32_t awake_bodies;
    uint32_t colliders;
    uint32_t sensors;
    uint32_t contact_pairs; /* touching pairs after the last step */
    uint32_t joints;
    uint32_t resources;
    uint32_t live_objects; /* bodies + colliders + joints + resources: 0 after full release */
} gy_backend_counters;

/* ---- the table ------------------------------------------------------------------------------- */

/* Flags an adapter declares. */
enum {
    /* Live queries may not run concurrently with each other (the vendor's collision code is not
     * thread-safe), so callers must take exclusive, not shared, access around them. */
    GY_BACKEND_QUERIES_EXCLUSIVE = 1u << 0,
};

typedef struct gy_backend {
    const char *name; /* registry name, e.g. "ode" */
    uint32_t flags;
    /* The vendor library and the version this adapter was built against, e.g. "ODE 0.16.2". */
    const char *middleware;

    gy_result (*world_create)(const gy_world_def *def, gy_backend_world **out);
    /* Releases everything still alive in the world. */
    void (*world_destroy)(gy_backend_world *w);
    /* Makes the calling thread the world's owner (per-thread vendor set-up included). */
    gy_result (*bind_thread)(gy_backend_world *w);
    /* Undoes bind_thread's per-thread set-up; call before the thread exits. */
    void (*unbind_thread)(gy_backend_world *w);
    gy_result (*set_gravity)(gy_backend_world *w, gy_vec3 gravity);

    /* Resources: create returns a creator reference; every collider using the resource holds its
     * own. resource_release drops the creator reference; releasing an unknown, stale or already
     * released id is a no-op. The resource dies with its last reference. */
    gy_result (*mesh_create)(gy_backend_world *w, const gy_mesh_def *def, gy_resource_id *out);
    /* As mesh_create, for a piece of a larger mesh: `active_edges` (one per triangle, values
     * below 8, from gy_mesh_classify_edges over the whole mesh) replaces the piece's own edge
     * classification, so its edges along the seams are no boundary. */
    gy_result (*mesh_create_piece)(gy_backend_world *w, const gy_mesh_def *def,
                                   const uint8_t *active_edges, gy_resource_id *out);
    gy_result (*hull_create)(gy_backend_world *w, const gy_hull_def *def, gy_resource_id *out);
    void (*resource_release)(gy_backend_world *w, gy_resource_id id);

    /* Creates a body with its colliders in one go (so compound mass can be distributed); nothing
     * is created on failure. `collider_ids` may be NULL, else receives collider_count handles. */
    gy_result (*body_create)(gy_backend_world *w, const gy_body_def *def,
                             const gy_collider_def *colliders, uint32_t collider_count,
                             gy_body_id *out, gy_collider_id *collider_ids);
    /* Releases the body, its colliders, and every joint attached to it. */
    gy_result (*body_release)(gy_backend_world *w, gy_body_id id);
    gy_result (*body_get_state)(gy_backend_world *w, gy_body_id id, gy_body_state *out);
    gy_result (*body_set_pose)(gy_backend_world *w, gy_body_id id, gy_pose pose);
    gy_result (*body_set_linear_velocity)(gy_backend_world *w, gy_body_id id, gy_vec3 v);
    gy_result (*body_set_angular_velocity)(gy_backend_world *w, gy_body_id id, gy_vec3 v);
    /* Forces and torques accumulate until the next step; impulses apply at once. Dynamic only
     * (kinematic and static bodies return GY_ERR_INVALID_MOTION). Every write wakes the body. */
    gy_result (*body_add_force)(gy_backend_world *w, gy_body_id id, gy_vec3 force);
    gy_result (*body_add_torque)(gy_backend_world *w, gy_body_id id, gy_vec3 torque);
    gy_result (*body_add_impulse)(gy_backend_world *w, gy_body_id id, gy_vec3 impulse);
    gy_result (*body_add_impulse_at)(gy_backend_world *w, gy_body_id id, gy_vec3 impulse,
                                     gy_vec3 world_point);
    /* Kinematic only: sets velocities so the body reaches `target` at the end of a step of dt. */
    gy_result (*body_move_kinematic)(gy_backend_world *w, gy_body_id id, gy_pose target,
                                     double dt);
    /* The world-space velocity of a body-fixed point (zero for statics). */
    gy_result (*body_point_velocity)(gy_backend_world *w, gy_body_id id, gy_vec3 world_point,
                                     gy_vec3 *out);
    /* Dynamic only (GY_ERR_INVALID_MOTION otherwise). `awake` true wakes the body as any write
     * does. false puts it to sleep now, at rest (velocities and pending forces zeroed): it stays
     * asleep, even with allow_sleeping off, until a write, a contact with an awake body, a joint
     * or a static placed over it wakes it. */
    gy_result (*body_set_awake)(gy_backend_world *w, gy_body_id id, bool awake);
    /* Dynamic only (GY_ERR_INVALID_MOTION otherwise): the total mass in kg (> 0, finite; else
     * GY_ERR_NON_FINITE / GY_ERR_INVALID_ARGUMENT). Mass and inertia scale together, so the
     * distribution over the colliders and the centre of mass stay; velocities are kept (momentum
     * is not). Wakes the body. */
    gy_result (*body_set_mass)(gy_backend_world *w, gy_body_id id, double mass);
    /* A collider's material (checked by gy_validate_material), used by every contact from the
     * next step on. Touching pairs stay touching. */
    gy_result (*collider_set_material)(gy_backend_world *w, gy_collider_id id,
                                       const gy_material *material);
    /* A collider's category and mask, applied from the next step: a pair the new values reject
     * stops touching (it leaves the contact report), a pair they newly accept starts; pairs whose
     * verdict did not change keep touching without a gap. Wakes the body (and, for a static, the
     * bodies touching or overlapping it) so sleeping pairs are judged again. */
    gy_result (*collider_set_filter)(gy_backend_world *w, gy_collider_id id, uint32_t category,
                                     uint32_t mask);
    /* The collider's policy (gy_collider_policy) at its pose now. */
    gy_result (*collider_get_policy)(gy_backend_world *w, gy_collider_id id,
                                     gy_collider_policy *out);

    gy_result (*joint_create)(gy_backend_world *w, const gy_joint_def *def, gy_joint_id *out);
    gy_result (*joint_release)(gy_backend_world *w, gy_joint_id id);
    /* Replaces a hinge's or slider's motor (checked by gy_validate_joint_motor; GY_MOTOR_OFF
     * removes it). GY_ERR_MISUSE for other joint types. Wakes the joint's bodies. */
    gy_result (*joint_set_motor)(gy_backend_world *w, gy_joint_id id, const gy_joint_motor *motor);
    /* The joint's state after the last step. */
    gy_result (*joint_get_state)(gy_backend_world *w, gy_joint_id id, gy_joint_state *out);

    /* Advances the world by dt seconds (> 0, finite). */
    gy_result (*step)(gy_backend_world *w, double dt);
    /* Touching pairs after the last step; the array stays valid until the next step or release. */
    uint32_t (*contacts)(gy_backend_world *w, const gy_contact **out);
    /* Joints that broke during the last step (already released); valid until the next step. */
    uint32_t (*broken_joints)(gy_backend_world *w, const gy_joint_id **out, const uint64_t **user);

    /* Queries never allocate. They write at most `capacity` hits and return the number written in
     * *count. `translation`'s length is the ray's or cast's range. */
    gy_result (*raycast)(gy_backend_world *w, gy_vec3 origin, gy_vec3 translation,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count);
    /* Sphere, box, capsule and hull shapes may be cast. */
    gy_result (*shape_cast)(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                            gy_vec3 translation, const gy_query_filter *filter,
                            gy_collector collector, gy_hit *hits, uint32_t capacity,
                            uint32_t *count);
    gy_result (*overlap)(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count);

    /* Live objects and per-step counts. From a bound thread, or from any thread once no thread
     * is bound (a stopped world, e.g. just before world_destroy); debug builds give zeros to an
     * unbound thread while another is bound. */
    void (*get_counters)(gy_backend_world *w, gy_backend_counters *out);
} gy_backend;

/* ---- registry -------------------------------------------------------------------------------- */

/* The adapter registered under `name`, or NULL. */
const gy_backend *gy_backend_find(const char *name);

/* Number of adapters compiled in, and the i-th one (NULL when out of range). */
uint32_t gy_backend_count(void);
const gy_backend *gy_backend_at(uint32_t index);

/* ---- accepted ranges -------------------------------------------------------------------------
 * Every number the API takes has one range, checked by the validators below at every boundary
 * (the World, the physics layer, the adapters), whether physics runs or not. A non-finite number
 * is GY_ERR_NON_FINITE; a finite one outside its range is refused with the error that kind of
 * value gets when it is invalid: GY_ERR_INVALID_SHAPE for a shape size, GY_ERR_INVALID_MESH for
 * hull and mesh points, GY_ERR_INVALID_ARGUMENT for everything else. The ranges are far beyond a
 * game's scale; they keep each step's arithmetic far from overflow and every size within what
 * both middlewares' collision code handles (ODE aborts the process on a cylinder 1e-17 m high, a
 * mass of 1e300 or a sphere query of radius 1e300). docs/reliability.md lists them. */

/* Positions, velocities (m/s, rad/s), forces, torques, impulses, joint anchors and limits, plane
 * offsets, world gravity, query origins and translations: each component |x| <= this. */
#define GY_MAX_MAGNITUDE 1e12
/* Shape sizes in metres (radius, box extent, capsule and cylinder height). */
#define GY_MIN_SHAPE_SIZE 1e-5
#define GY_MAX_SHAPE_SIZE 1e6
/* Collider offsets in their body, centres of mass and hull or mesh points: |x| <= this (m). */
#define GY_MAX_LOCAL_EXTENT 1e6
/* A body's explicit mass (kg; 0 still means "from density"). */
#define GY_MIN_MASS 1e-6
#define GY_MAX_MASS 1e12
/* Every inertia tensor component (kg·m²). */
#define GY_MAX_INERTIA 1e24
/* A collider's relative density. */
#define GY_MIN_DENSITY 1e-6
#define GY_MAX_DENSITY 1e6
/* Damping (1/s), friction and restitution: 0 ..= this. */
#define GY_MAX_COEFFICIENT 1e3
/* Gravity factor: |factor| <= this. Wide on purpose: a body that runs away is caught at
 * read-back (docs/reliability.md); the bound keeps one step's velocity gain (this × the largest
 * gravity × a step) hundreds of orders of magnitude below overflow. */
#define GY_MAX_GRAVITY_FACTOR 1e20

/* ---- shared validation (used by every adapter, and by layers above before enqueueing) -------- */

/* GY_ERR_NON_FINITE for a non-finite component, GY_ERR_INVALID_ARGUMENT for one with |x| > limit. */
gy_result gy_validate_vector(gy_vec3 v, double limit);

/* Checks a definition: finite numbers, the ranges above, shape rules for the motion type.
 * Resources are not resolved here (the adapter does that). */
gy_result gy_validate_body_def(const gy_body_def *def);
gy_result gy_validate_shape(const gy_shape *shape);
gy_result gy_validate_collider_def(const gy_collider_def *def, gy_motion_type motion);
gy_result gy_validate_joint_def(const gy_joint_def *def);
/* A motor: a known mode, finite numbers, max_force > 0 unless the mode is GY_MOTOR_OFF. */
gy_result gy_validate_joint_motor(const gy_joint_motor *motor);
gy_result gy_validate_mesh_def(const gy_mesh_def *def);
gy_result gy_validate_hull_def(const gy_hull_def *def);
gy_result gy_validate_query_filter(const gy_query_filter *filter);
/* A material: finite friction and restitution >= 0, known combine modes. */
gy_result gy_validate_material(const gy_material *material);
/* A pose as every boundary takes it: GY_ERR_NON_FINITE for a non-finite component,
 * GY_ERR_INVALID_ARGUMENT for a rotation that is not a unit quaternion (within 1e-3) or a
 * position component beyond GY_MAX_MAGNITUDE. */
gy_result gy_validate_pose(gy_pose pose);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_BACKEND_H */
