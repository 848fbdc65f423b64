/* The driver interface: what a vendor middleware supplies under the adapter front end.
 *
 * The front end (frontend.c) implements the gy_backend contract once: it checks every entry's
 * world, thread, handles and numbers, binds threads, resolves resources and computes masses, and
 * then calls a driver that only translates into vendor calls. A driver therefore never sees a
 * null world, an unbound thread, a stale handle, a non-finite number or a definition outside the
 * ranges of backend.h; the front end has already refused those with the contract's error.
 *
 * Records: a driver keeps one record per body, collider, joint and resource; the front end owns
 * the handles. Its pools (generational id -> driver record) for bodies, colliders and joints,
 * and the counters, live in the front end's world: a driver builds the records (body_create
 * hands back the body's and its colliders' records, joint_create the joint's) and the front end
 * then gives them their ids, and takes the ids back before asking the driver to release the
 * records (a joint the step breaks too: the front end keeps the breakable joints and asks
 * the driver only for their force). It also keeps the list of moving bodies. Resource records are
 * the front end's own too (it allocates them, fills their head and keeps them in its resource
 * pool), the driver building only their vendor part. So is the static grid, the index of the
 * static colliders by world box (collision/src/static_grid.h): the front end indexes a static's
 * colliders when it is made, re-indexes them when it is put elsewhere and unindexes them when it
 * goes, and a driver finds statics through it (gy_driver_statics_visit), keeping them in no
 * vendor broadphase of its own. The front end looks handles up in its pools
 * and passes the record as the opaque pointers below. Every record starts with its Gyre part
 * (records.h): body records with gy_adapter_body, collider records with gy_adapter_collider, joint
 * records with gy_adapter_joint, resource records with gy_adapter_resource. The driver fills them
 * with the records.h initialisers (ids left zero); the front end reads and keeps them (motion and
 * joint types, materials, filters, policies), so a driver is asked only to translate what changes
 * into vendor state.
 *
 * Threading: every call comes from the thread the front end has bound (or one serialised with
 * it); a driver needs no checks of its own. docs/middleware.md is the guide to writing one. */
#ifndef GYRE_DRIVER_H
#define GYRE_DRIVER_H

#include "adapter_common.h"
#include "contacts.h"
#include "queries.h"
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A driver's world and records; their layouts are private to the driver. */
typedef struct gy_driver_world gy_driver_world;
typedef struct gy_driver_body gy_driver_body;
typedef struct gy_driver_collider gy_driver_collider;
typedef struct gy_driver_joint gy_driver_joint;

/* A driver record's Gyre part (every record starts with it, records.h) and back. */
static inline gy_adapter_body *gy_driver_body_rec(gy_driver_body *b)
{
    return (gy_adapter_body *)(void *)b;
}
static inline gy_driver_body *gy_driver_body_of(gy_adapter_body *b)
{
    return (gy_driver_body *)(void *)b;
}
static inline gy_adapter_collider *gy_driver_collider_rec(gy_driver_collider *c)
{
    return (gy_adapter_collider *)(void *)c;
}
static inline gy_driver_collider *gy_driver_collider_of(const gy_adapter_collider *c)
{
    return (gy_driver_collider *)(void *)c;
}
static inline gy_adapter_joint *gy_driver_joint_rec(gy_driver_joint *j)
{
    return (gy_adapter_joint *)(void *)j;
}
static inline gy_driver_joint *gy_driver_joint_of(gy_adapter_joint *j)
{
    return (gy_driver_joint *)(void *)j;
}
/* The moving (dynamic and kinematic) bodies, in the front end's order: a body is appended when
 * made and the last one takes the slot of one released (gy_adapter_motion.moving_index). */
GY_ARRAY_DEFINE(gy_driver_moving, gy_driver_body *)

/* A driver's state for one query, on its walk's stack. */
typedef struct gy_driver_query gy_driver_query;

/* One raw hit of a query's test against one collider, in the world frame. */
typedef struct gy_driver_hit {
    double t;         /* rays: distance from the origin (m); casts: fraction of the translation */
    gy_vec3 point;    /* on the collider's surface */
    gy_vec3 normal;   /* unit, out of the collider (towards the ray's origin or the shape) */
    double depth;     /* shape_contact: the penetration (m, >= 0); otherwise unused */
    int32_t triangle; /* the mesh triangle hit, -1 for other shapes */
} gy_driver_hit;

/* What the front end lends a driver's world at creation, valid until world_destroy: its handle
 * pools (payload: the driver's records), counters, contact report and resource pool. A driver
 * reads the pools (to reach a body from a reported id, or to walk its joints) and the moving
 * list, and never changes them. */
typedef struct gy_driver_records {
    const gy_handle_pool *bodies;    /* payload: the driver's body record */
    const gy_handle_pool *colliders; /* payload: the driver's collider record */
    const gy_handle_pool *joints;    /* payload: the driver's joint record */
    const gy_handle_pool *resources; /* payload: the driver's resource record */
    const gy_driver_moving *moving;  /* valid until a body is created or released */
    gy_adapter_tally *tally;         /* bodies by motion type, sensors, live resources */
    /* The front end's report for this world (contacts.h): the driver's narrow phase feeds it
     * and applies its rules. */
    gy_adapter_contacts *contacts;
    /* The static colliders by world box, which a driver visits (gy_driver_statics_visit). */
    gy_static_grid *statics;
} gy_driver_records;

/* The static grid's cell (m), a few level tiles wide: a walk may cut a long ray into pieces of
 * it, so that each piece visits few cells. */
#define GY_DRIVER_STATIC_CELL_SIZE 4.0

/* Offers visit(ctx, c) every static collider whose box (its collider_box when last placed)
 * overlaps `box` (min x, max x, min y, max y, min z, max z; bounds included), unbounded ones
 * (planes) always, until visit returns false. The order is fixed: unbounded ones first, then by
 * cell in the order the cells were first used, each cell's colliders in the order left by the
 * insertions and removals (static_grid.h), so a driver's pairs come in the same order every run.
 * Never allocates. */
void gy_driver_statics_visit(const gy_driver_records *rec, const double box[6],
                             bool (*visit)(void *ctx, gy_driver_collider *c), void *ctx);

/* A driver's step, in the parts the front end's loop runs (step.h), and the raw state its rules
 * read and write between them. The front end begins the contact report's step before `begin`
 * and ends it after `end`; per substep it records every moving body's centre of mass
 * (gy_adapter_motion.substep_start), calls `solve`, applies the overlap correction (overlap.h), the
 * ballistic correction, the axis-lock projection and continuous collision, breaks the joints
 * whose force (gy_driver.joint_force) exceeded their limit and applies the sleep rule. */
typedef struct gy_driver_step {
    /* Before the substeps of a step of dt (substeps of h each): the driver's own start. */
    void (*begin)(gy_driver_world *w, double dt, double h);
    /* A substep: collide through the pre-solve rules (contacts.h), feeding the report, run
     * the joint drive (gy_joint_drive_solve) and solve h. Marks each pair its solve took
     * (gy_adapter_contacts_solved) and adds only those pairs' impulses (a vendor that solved no
     * sleeping island leaves stale ones in its points). Sets gy_adapter_motion.in_contact on the
     * bodies its solve gave contacts. */
    void (*solve)(gy_driver_world *w, double h);
    /* After the last substep and the front end's report rules (below): the driver's own end of
     * step. Returns the step's first error in the driver (out of memory), GY_OK otherwise. */
    gy_result (*end)(gy_driver_world *w, double dt);
    /* The report's end of step, in this order: the front end reports the pairs the solver took
     * in only some substeps (gy_adapter_contacts_settle_unsolved) and keeps resting pairs
     * (step.h); it marks every sensor pair unseen and, when the
     * world has sensors, `collide_sensors` collides sensor pairs again at the step's end poses
     * through the pre-solve rules (the gate's sensor_pass), giving what it finds its geometry
     * (gy_adapter_contacts_geometry marks it sensor_seen);
     * for a driver without `collides_active_only` the front end then carries over the last
     * report's overlaps its solver never took (gy_adapter_pair.responds false) with no active
     * side, still missing; it drops the sensor pairs neither seen nor carried, and turns each
     * fresh pair's summed tangent into its tangent impulse (normal impulses clamped at 0). */
    void (*collide_sensors)(gy_driver_world *w);

    /* Raw state of a moving body: whether the vendor has it awake, its centre of mass and
     * velocities in the world (set without waking it or touching anything else). */
    bool (*body_awake)(const gy_driver_body *b);
    gy_vec3 (*body_com)(const gy_driver_body *b);
    void (*body_set_com)(gy_driver_body *b, gy_vec3 com);
    void (*body_velocity)(const gy_driver_body *b, gy_vec3 *linear, gy_vec3 *angular);
    void (*body_set_velocity)(gy_driver_body *b, gy_vec3 linear, gy_vec3 angular);
    /* Adds a force at the centre of mass and a torque (world) to an awake dynamic body for the
     * coming substep only: its solve uses them and the vendor clears them. The front end keeps
     * what the host added (gy_adapter_motion.force) and hands it over before every substep. */
    void (*body_apply_force)(gy_driver_body *b, gy_vec3 force, gy_vec3 torque);
    /* The sleep rule (gy_adapter_sleep_*) for a middleware with no equivalent of its own; both
     * NULL when the vendor's own sleep is configured to the same rule. `body_sleep` is a dynamic
     * body's rule state (kept by the driver; the front end starts it over when it wakes the
     * body or puts it to sleep, gy_driver_body_wake);
     * `body_wants_sleep` tells the vendor whether an awake body wants to sleep now (its islands
     * do the rest: an island sleeps when all its bodies want to); an awake body made with
     * allow_sleeping off is told false at every step. */
    gy_adapter_sleep *(*body_sleep)(gy_driver_body *b);
    void (*body_wants_sleep)(gy_driver_body *b, bool wants);
    /* The overlap correction (overlap.h), for a driver whose solver corrects overlap through
     * the velocities; all NULL otherwise. `body_settle` is any body's give-back state (a
     * static's included), kept by the driver: a driver with it has the front end start each
     * substep's `in_contact` and give-back (gy_adapter_overlap_begin), lists its solved points
     * in the report's `points` during `solve` (their impulses reach the report through them)
     * and has the front end settle them after it. `body_push` is a moving body's push-out, for
     * a vendor without a split impulse of its own (NULL: it pushes deep overlap out itself), and
     * `body_set_rotation` (normalised, without waking the body) is read only with it.
     * `body_inv_inertia` is a dynamic body's inverse inertia about the centre of mass in body
     * axes, `body_rotation` its rotation (the centre-of-mass frame's); its mass is the front
     * end's (gy_adapter_motion.mass). */
    gy_adapter_settle *(*body_settle)(gy_driver_body *b);
    gy_adapter_push *(*body_push)(gy_driver_body *b);
    gy_mat3 (*body_inv_inertia)(const gy_driver_body *b);
    gy_quat (*body_rotation)(const gy_driver_body *b);
    void (*body_set_rotation)(gy_driver_body *b, gy_quat rotation);
    /* Whether `moved` (of a moving body) touches `other` once its body is shifted by `shift`;
     * the body is put back exactly, so nothing else sees the move. Required: the front end's
     * resting-pair hysteresis (step.h) reads it, for which a driver reports a pair only while its
     * narrow phase finds it touching and marks the pairs its solver takes
     * (gy_adapter_pair.responds); and after `begin` the front end activates every inactive moving
     * body with a collider (its gy_driver.collider_box) that touches (zero shift) a static placed
     * since the last step (from gy_driver_statics_visit) its filter accepts: no vendor collides a
     * pair without an active side, so geometry streamed in over a sleeper would go unnoticed. */
    bool (*collider_touches_shifted)(gy_driver_world *w, gy_driver_collider *moved,
                                     gy_driver_collider *other, gy_vec3 shift);
    /* Pairs kept without colliding, for a middleware that collides only the pairs with an
     * active side (gy_adapter_motion.active; false: it keeps sleeping pairs itself). The front
     * end sets every moving body's `active` after `begin` and before each later substep's solve;
     * with this flag it then, after `begin`, activates every dynamic sleeper that a solved pair
     * of the last step joined to an active body (woken through body_wake) and carries over the
     * last step's pairs with no active side (step.h). */
    bool collides_active_only;
    /* Continuous collision's geometry. `ccd_gather` offers add(ctx, c) every collider whose
     * bounds come within `radius` of the segment start-end (statics; more is harmless) or within
     * radius + reach (moving bodies), in a fixed order; `ccd_begin` readies a sphere of `radius`
     * that `ccd_sphere_touches` places at `center` and tests against c as it is now;
     * `ccd_body_touches` tests b's solid colliders against c with b's centre of mass at `com`
     * (its rotation as now), leaving b where it was; `ccd_end` follows each ccd_begin. */
    void (*ccd_gather)(gy_driver_world *w, gy_vec3 start, gy_vec3 end, double radius, double reach,
                       void (*add)(void *ctx, gy_driver_collider *c), void *ctx);
    void (*ccd_begin)(gy_driver_world *w, double radius);
    bool (*ccd_sphere_touches)(gy_driver_world *w, gy_driver_collider *c, gy_vec3 center);
    bool (*ccd_body_touches)(gy_driver_world *w, gy_driver_body *b, gy_driver_collider *c,
                             gy_vec3 com);
    void (*ccd_end)(gy_driver_world *w);
} gy_driver_step;

typedef struct gy_driver {
    const char *name; /* registry name, e.g. "ode" (the table's name, flags and vendor string
                       * are given where the registry lists it, in frontend.c) */
    /* The most vertices a hull given built (gy_backend.hull_create_built) may have, 0 for no
     * limit: what the vendor does with a hull's collider in time that grows faster than its
     * size, so that a runtime hull's body is made within a tick's geometry budget. */
    uint32_t built_hull_max_vertices;
    /* Bytes of the driver's record for each reported pair: it starts with gy_adapter_pair
     * (contacts.h), then whatever the driver keeps of the pair during the step. */
    size_t pair_size;
    /* Bytes of the driver's resource record: it starts with gy_adapter_resource. */
    size_t resource_size;
    /* How far (m) the fraction cast_sweep answers may lie from the contact, either way. */
    double cast_sweep_slack;

    /* `def` is checked and its zero defaults filled in (gy_adapter_world_def). `records` is
     * the front end's (see gy_driver_records). */
    gy_result (*world_create)(const gy_backend_world_def *def, const gy_driver_records *records,
                              gy_driver_world **out);
    /* Frees the world; the front end has released every joint, body and resource first. */
    void (*world_destroy)(gy_driver_world *w);
    /* Per-thread vendor set-up and clean-up, run once per bound thread; NULL when none. */
    gy_result (*thread_setup)(void);
    void (*thread_cleanup)(void);
    /* A finite gravity (the front end then wakes every moving body). */
    void (*set_gravity)(gy_driver_world *w, gy_vec3 gravity);

    /* `r` is a new zeroed record of resource_size bytes whose head the front end has filled
     * (gy_adapter_resource_mesh_init: the mesh's copies and edges); the driver builds its
     * vendor objects in the rest. On success the front end gives the record its id and counts
     * it; on any failure it frees the record with resource_free. */
    gy_result (*mesh_create)(gy_driver_world *w, gy_adapter_resource *r);
    /* The same for a hull: the head holds a copy of a valid hull (built by the front end, or
     * checked by gy_validate_hull; a hull given built has at most built_hull_max_vertices
     * vertices). */
    gy_result (*hull_create)(gy_driver_world *w, gy_adapter_resource *r);
    /* Frees a resource record whose last reference is gone (already uncounted), or one whose
     * creation failed: its vendor objects (those built), its head (gy_adapter_resource_fini) and
     * the record itself. */
    void (*resource_free)(gy_driver_world *w, gy_adapter_resource *r);

    /* Every definition is valid, res[i] is collider i's resolved resource (NULL for
     * primitives), rare[i] its side record (the front end's, gy_adapter_collider_rare_make;
     * NULL when its definition sets none), to hand to gy_adapter_collider_record_init, and
     * `mass` the dynamic body's mass properties in the Gyre body frame (zeroed for others) and
     * `sleep_turn` the turn (rad/s) under which a dynamic body may sleep (gy_adapter_sleep_turn;
     * the front end's rule reads it from the motion part, a vendor's own sleep is set to it).
     * Creates everything or nothing; on success *out is the body's record and colliders[i]
     * collider i's, ids still zero (the front end gives them theirs, indexes a static's in its
     * static grid and counts each collider's reference to its resource), and the side records
     * are the records' (the front end frees them with the body); on failure they stay the front
     * end's. A static's collider records each follow their grid entry (records.h,
     * GY_ADAPTER_GRID_ENTRY_SIZE); a moving body's have none. */
    gy_result (*body_create)(gy_driver_world *w, const gy_body_def *def,
                             const gy_collider_def *cols, uint32_t n,
                             gy_adapter_resource *const *res,
                             const gy_adapter_collider_rare *const *rare, const gy_mass *mass,
                             double sleep_turn, gy_driver_body **out,
                             gy_driver_collider **colliders);
    /* Releases the body and its colliders (the front end has already released its joints, woken
     * what touched it, forgotten it in the report, taken back its ids, unindexed a static's
     * colliders and dropped the colliders' resource references; a resource left without any is
     * freed through resource_free after this returns, so the vendor objects using it go
     * first). */
    void (*body_release)(gy_driver_world *w, gy_driver_body *b);
    /* The body's collider count, and its collider record i (i < count) in their definition
     * order: a driver keeps them as it likes (no array of them is asked for). */
    uint32_t (*body_collider_count)(const gy_driver_body *b);
    gy_driver_collider *(*body_collider)(gy_driver_body *b, uint32_t i);
    /* Wakes a dynamic body. The front end calls it (gy_driver_body_wake) after every change
     * that should move a body (the setters below, a new filter, a motor, a joint made or gone),
     * so those leave waking to it; a kinematic body is marked instead
     * (gy_adapter_motion.pose_written). */
    void (*body_wake)(gy_driver_world *w, gy_driver_body *b);
    /* Its pose, velocities (zero for a static) and whether the vendor has a dynamic body awake
     * (`out` zeroed first; the front end reports a kinematic body awake). */
    void (*body_get_state)(gy_driver_world *w, gy_driver_body *b, gy_body_state *out);
    /* A valid pose with a normalised rotation; never allocates. The front end then wakes a
     * moving body, or for a static re-indexes its colliders at their new boxes (collider_box),
     * wakes what the report says touches it and marks it placed. When re-indexing runs out of
     * memory, the front end puts the static back with this entry (at the pose body_get_state
     * gave before the move), so a static's boxes at a pose must not depend on where it was. */
    void (*body_set_pose)(gy_driver_world *w, gy_driver_body *b, gy_pose pose);
    /* Not static. */
    void (*body_set_linear_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 v);
    void (*body_set_angular_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 v);
    /* Any body: the velocity of a world point moving with it (zero on a static). */
    gy_vec3 (*body_point_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 world_point);
    /* Dynamic only: puts the body to sleep now (body_wake wakes it); the front end has stilled
     * it first (the step's body_set_velocity) and dropped its pending force and torque. */
    void (*body_put_asleep)(gy_driver_world *w, gy_driver_body *b);
    /* Dynamic only: a new valid mass, the inertia scaled with it (gy_adapter_motion.mass still
     * holds the old one; the front end sets it after). */
    void (*body_set_mass)(gy_driver_world *w, gy_driver_body *b, double mass);

    /* A collider's world box as it is now (min x, max x, min y, max y, min z, max z), padded
     * as the driver's broadphase would pad it: the front end indexes a static's colliders in its
     * static grid by it (so a static's pairs are those its box finds), wakes what lies under
     * placed statics with it (gy_driver_step.collides_active_only) and windows casts with it
     * (queries, below). Infinite, or as large as the vendor makes it, when unbounded (planes). */
    void (*collider_box)(gy_driver_world *w, gy_driver_collider *c, double box[6]);
    /* The record's category and mask have changed: refilter its vendor object (the front end
     * then wakes a moving body, or what touches a static, and marks the static placed). */
    void (*collider_filter_changed)(gy_driver_world *w, gy_driver_collider *c);
    /* `def` is valid and resolved: a Distance joint's `distance` is its length (at least 1e-6;
     * one of zero length arrives as a Ball, gy_adapter_joint_length); `a` (not static) and `b`
     * (NULL: the world) are its bodies. On success
     * *out is the joint's record, id still zero; the front end then counts the joint on its
     * bodies and wakes them (body_wake), as it does when it has released one. */
    gy_result (*joint_create)(gy_driver_world *w, const gy_joint_def *def, gy_driver_body *a,
                              gy_driver_body *b, gy_driver_joint **out);
    /* Its id already taken back. */
    void (*joint_release)(gy_driver_world *w, gy_driver_joint *j);
    /* The force and torque the joint applied to a in the last solve (the front end measures
     * the joints' coordinates, gy_joint_drive_state). */
    void (*joint_get_state)(gy_driver_world *w, gy_driver_joint *j, gy_joint_state *out);
    /* The joint drive's reads and writes (joint_drive.h): the front end decides, before every
     * solve, each motor's velocity and bound and each limit's rows; these read and set the
     * vendor's joints and nothing more. `joint_coordinate` (hinges and sliders) is a's angle or
     * offset relative to b (or the world) from the pose at creation, and its rate; `joint_axis`
     * the joint's axis in the world (unit). A body's side of a motor (its mass and inertia about
     * the axis) is the front end's, from the step's raw state. */
    void (*joint_coordinate)(gy_driver_world *w, gy_driver_joint *j, double *position,
                             double *rate);
    gy_vec3 (*joint_axis)(gy_driver_world *w, gy_driver_joint *j);
    /* Hinges and sliders: the joint's own motor on, at `velocity` (Gyre's sign) with at most
     * `max_force` (N·m or N; INFINITY: unbounded) over the next solve of h seconds, or off. */
    void (*joint_motor_set)(gy_driver_world *w, gy_driver_joint *j, bool on, double velocity,
                            double max_force, double h);
    /* Limited hinges, sliders and ball joints: their limit rows for the next solve of h seconds,
     * as many as gy_joint_limit_row_count says (the driver made room for them when it built the
     * joint); a slider's rows are linear, along its axis. */
    void (*joint_set_limit_rows)(gy_driver_world *w, gy_driver_joint *j,
                                 const gy_joint_limit_row *rows, uint32_t n, double h);
    /* Distance joints with a spring: the softness the front end chose (gy_joint_spring_softness,
     * ODE's convention: J v' = erp/h · error − cfm · λ) for the joint's row over the next solve
     * of h seconds; the joint is rigid until the first call. */
    void (*joint_set_spring)(gy_driver_world *w, gy_driver_joint *j, double erp, double cfm,
                             double h);
    /* Ball joints: the rotations of a frame fixed in a and one fixed in b (the identity for
     * the world) that the cone and twist are measured between, the same frames at creation and
     * after. */
    void (*joint_rotations)(gy_driver_world *w, gy_driver_joint *j, gy_quat *qa, gy_quat *qb);
    /* The larger constraint force (N) the joint applied to either of its bodies in the last
     * solve: the front end breaks a breakable joint when it exceeds the break force. */
    double (*joint_force)(gy_driver_world *w, gy_driver_joint *j);

    /* The step in parts (above). */
    const gy_driver_step *step;

    /* Queries (queries.h): the front end checks and prepares each query, filters candidates,
     * collects hits and states what they say; a driver finds candidates and runs raw tests.
     * A walk poses the driver's probe, keeps what its tests need in its own query state on its
     * stack (`dq`, opaque to the front end) and offers every candidate collider of its
     * broadphase to gy_adapter_search_visit(s, dq, c) until that returns false. It skips the
     * statics when !gy_adapter_search_statics(s), the moving colliders when
     * !gy_adapter_search_moving(s), and may skip what lies beyond gy_adapter_search_bound(s).
     * A walk that gives the shape's start box (gy_adapter_search_cast_box) has the front end
     * window each cast by the collider's collider_box.
     * A ray runs from `origin` along the unit `dir` for `length` (> 0) metres. A shape query's
     * shape is one queries take, resolved and validly posed (rotation as given); an overlap
     * (`cast` false) has a zero translation. */
    void (*ray_walk)(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                     gy_adapter_search *s);
    void (*shape_walk)(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, bool cast, gy_adapter_search *s);
    /* The raw tests, each against one candidate the filter accepted, with its walk's state.
     * A ray's first hit within its length (a ray starting inside a solid: where it leaves, the
     * normal facing back along the ray; a mesh: its nearest triangle, face normal either way). */
    bool (*ray_test)(gy_driver_world *w, gy_driver_query *dq, gy_driver_collider *c,
                     gy_driver_hit *out);
    /* The query shape posed at `t` (a fraction of the translation; 0: its start pose) touching
     * or overlapping the collider: the deepest point, the normal out of the collider, the
     * penetration. The front end's casts search the fraction with it (queries.c). */
    bool (*shape_contact)(gy_driver_world *w, gy_driver_query *dq, gy_driver_collider *c, double t,
                          gy_driver_hit *out);
    /* The vendor's own cast of the shape against a collider that is not convex (a plane, a
     * mesh; the front end casts convex pairs itself), optional (NULL: the front end steps and
     * bisects shape_contact): its first contact before fraction `hi`, with the contact's point,
     * normal and triangle, within cast_sweep_slack metres of the true one either way (the front
     * end refines the fraction). */
    bool (*cast_sweep)(gy_driver_world *w, gy_driver_query *dq, gy_driver_collider *c, double hi,
                       gy_driver_hit *out);
    /* What the front end's convex cast reads of a collider besides its record: its body's pose
     * (the Gyre body origin in the world). */
    gy_pose (*collider_body_pose)(gy_driver_world *w, gy_driver_collider *c);
} gy_driver;

/* The driver world and the static grid under a front-end world (white-box tests read them). */
gy_driver_world *gy_frontend_driver_world(gy_backend_world *w);
const gy_static_grid *gy_frontend_static_grid(gy_backend_world *w);

/* The drivers compiled in (ode/ and bullet/). */
extern const gy_driver gy_ode_driver;
#if defined(GYRE_HAVE_BULLET)
extern const gy_driver gy_bullet_driver;
#endif

#ifdef __cplusplus
}
#endif

/* A collider-local direction turned into the world by the collider's current rotation (its
 * body's, then its own in the body). */
static inline gy_vec3 gy_driver_collider_to_world(const gy_driver *d, gy_driver_world *w,
                                                  gy_driver_collider *c, gy_vec3 local)
{
    gy_quat q = gy_quat_mul(d->collider_body_pose(w, c).rotation,
                            gy_adapter_collider_local_pose(gy_driver_collider_rec(c)).rotation);
    return gy_quat_rotate(q, local);
}

/* The activity rule (gy_adapter_motion.active): whether body `b`'s pairs must be collided now.
 * An awake dynamic body's are, and a kinematic body's that moves or was woken since the last
 * step (a kinematic body never sleeps, but one at rest brings no pair of its own); a static's
 * never. */
static inline bool gy_driver_body_moving(const gy_driver *d, const gy_driver_body *b)
{
    const gy_adapter_body *rec = (const gy_adapter_body *)(const void *)b;
    switch (rec->type) {
    case GY_MOTION_DYNAMIC:
        return d->step->body_awake(b);
    case GY_MOTION_KINEMATIC: {
        if (rec->motion->pose_written)
            return true;
        gy_vec3 v, a;
        d->step->body_velocity(b, &v, &a);
        return v.x != 0.0 || v.y != 0.0 || v.z != 0.0 || a.x != 0.0 || a.y != 0.0 || a.z != 0.0;
    }
    default:
        return false;
    }
}

/* Starts dynamic body `b`'s sleep rule over, where the front end keeps it (the host woke it or
 * put it to sleep). */
static inline void gy_driver_sleep_restart(const gy_driver *d, gy_driver_body *b)
{
    if (d->step->body_sleep != NULL)
        gy_adapter_sleep_reset(d->step->body_sleep(b));
}

/* Wakes dynamic body `b` through the driver. The sleep rule starts over, as ODE's does on
 * enable: a body woken while still awake and at rest (a write, a joint made) gets a whole sleep
 * time again, rather than sleeping when its earlier rest runs out (a sleeper's rule state is
 * started over at every step it sleeps, step.c). */
static inline void gy_driver_body_wake(const gy_driver *d, gy_driver_world *w, gy_driver_body *b)
{
    d->body_wake(w, b);
    gy_driver_sleep_restart(d, b);
}

/* Wakes body `b` after a change that should move it: a dynamic body through the driver, a
 * kinematic one marked to take part in the next step (gy_adapter_motion.pose_written) with the
 * dynamic bodies jointed to it woken; nothing for a static. */
static inline void gy_driver_wake(const gy_driver *d, gy_driver_world *w, gy_driver_body *b)
{
    gy_adapter_body *rec = gy_driver_body_rec(b);
    if (rec->type == GY_MOTION_DYNAMIC) {
        gy_driver_body_wake(d, w, b);
        return;
    }
    if (rec->type != GY_MOTION_KINEMATIC)
        return;
    gy_adapter_motion *m = gy_adapter_body_motion(rec);
    m->pose_written = true;
    /* A kinematic body joins no island, so a vendor need not wake what hangs from it by a joint:
     * a box asleep under a crane would stay where the crane left it. */
    for (gy_adapter_joint *j = m->joints; j != NULL; j = gy_adapter_joint_next(j, rec)) {
        gy_adapter_body *other = j->a == rec ? j->b : j->a;
        if (other != NULL && other->type == GY_MOTION_DYNAMIC)
            gy_driver_body_wake(d, w, gy_driver_body_of(other));
    }
}

#endif
