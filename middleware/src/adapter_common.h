/* What every adapter does the same way, whatever middleware is underneath: thread binding,
 * world definitions, counters, resource reference counts, body mass from colliders, continuous
 * collision radii, kinematic targets, query collectors and the per-step contact report and
 * broken-joint list. Private to middleware/ (the adapters include it; nothing above does), plain
 * C and free of vendor headers, so the C++ Bullet adapter calls the same code as the ODE one.
 *
 * Threading: a world's records are used by the threads bound to it, one call at a time (see
 * GY_BACKEND_QUERIES_EXCLUSIVE); gy_adapter_threads guards only its own list. */
#ifndef GYRE_ADAPTER_COMMON_H
#define GYRE_ADAPTER_COMMON_H

#include <pthread.h>

#include "gyre/array.h"
#include "gyre/backend/backend.h"
#include "gyre/convex.h"
#include "gyre/geometry.h"
#include "gyre/handle_pool.h"
#include "gyre/hash_map.h"
#include "mesh_edges.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rules every adapter applies ------------------------------------------------------------ */

/* Sleep: a dynamic body's velocities averaged over the last GY_ADAPTER_SLEEP_SAMPLES steps (jitter
 * cancels in the vector average) must stay below these for GY_ADAPTER_SLEEP_TIME: its centre of
 * mass slower than GY_ADAPTER_SLEEP_LINEAR_SPEED, and its turn slower than its own limit
 * (gy_adapter_sleep_turn), the turn that moves the point of its colliders furthest from its
 * centre of mass at that same speed, and at most GY_ADAPTER_SLEEP_ANGULAR_SPEED. Judged by how
 * fast its points move, a small ball rolling at a few centimetres a second sleeps (with one
 * turn limit for every body, a ragdoll's head rolling on its neck's cone kept the ragdoll awake
 * for good) and a long beam whose tips sweep at walking pace stays awake. */
#define GY_ADAPTER_SLEEP_LINEAR_SPEED  0.08 /* m/s */
#define GY_ADAPTER_SLEEP_ANGULAR_SPEED 0.5  /* rad/s: the turn limit of the smallest bodies */
#define GY_ADAPTER_SLEEP_SAMPLES       10u
#define GY_ADAPTER_SLEEP_TIME          0.4 /* s */

/* The sleep rule's state for one body, for a driver whose middleware has no equivalent of its
 * own (ODE's auto-disable is configured to the same rule instead). Zero-initialise. */
typedef struct gy_adapter_sleep {
    gy_vec3 linear[GY_ADAPTER_SLEEP_SAMPLES], angular[GY_ADAPTER_SLEEP_SAMPLES];
    uint32_t samples, next; /* how many are filled, and the slot written next */
    double rest_time;       /* s the average has stayed below the thresholds */
} gy_adapter_sleep;

/* Starts the rule over (the body was woken or put to sleep). */
void gy_adapter_sleep_reset(gy_adapter_sleep *s);

/* The sleep rule's turn limit (rad/s) of a body whose colliders reach `extent` metres from its
 * centre of mass (gy_adapter_body_extent). */
double gy_adapter_sleep_turn(double extent);

/* Records an awake body's velocities after a step of h seconds, its turn limit `turn`
 * (gy_adapter_sleep_turn); true when the body wants to sleep now. */
bool gy_adapter_sleep_sample(gy_adapter_sleep *s, gy_vec3 linear, gy_vec3 angular, double turn,
                             double h);

/* Ballistic correction: a solver that integrates x += (v + g h) h moves a free body a full g h²
 * where free fall travels g h²/2. True when a body gets the surplus back: dynamic, awake, in no
 * contact, in no joint, under gravity. */
bool gy_adapter_ballistic_applies(gy_motion_type type, bool awake, bool in_contact,
                                  uint32_t joint_count, double gravity_factor);

/* The position shift (m) that gives the surplus back: −g × factor × h² / 2. */
gy_vec3 gy_adapter_ballistic_shift(gy_vec3 gravity, double gravity_factor, double h);

/* Axis locks: holds a body's centre of mass at `lock_position` on its locked world axes and
 * zeroes its velocities there, removing whatever an iterative solver left on them. */
void gy_adapter_project_locks(const bool linear[3], const bool angular[3], gy_vec3 lock_position,
                              gy_vec3 *position, gy_vec3 *velocity, gy_vec3 *angular_velocity);

/* Continuous collision's candidates: whether a swept body whose first solid collider has
 * (`category`, `mask`) may hit collider `c` of another body (a solid one responding to contacts,
 * whose filter accepts the pair). A one-way collider is then also checked with
 * gy_adapter_ccd_one_way_accepts. */
bool gy_adapter_ccd_filter_accepts(uint32_t category, uint32_t mask, bool other_body,
                                   bool c_is_sensor, bool c_contact_response, uint32_t c_category,
                                   uint32_t c_mask);

/* A one-way collider with world normal `n` stops a sweep only when the body moves against it. */
bool gy_adapter_ccd_one_way_accepts(gy_vec3 motion, gy_vec3 n);

/* Below this approach speed (m/s) contacts do not bounce, so resting bodies settle. */
#define GY_ADAPTER_BOUNCE_MIN_VELOCITY 0.1

/* Restitution that keeps a bounce's energy at any step size. A contact is found a little apart
 * (`offset` > 0, m) or a little overlapped (< 0) while the bodies approach at `approach` m/s
 * (> 0) and are pulled together along the normal at `accel` m/s² (gravity's share; 0 for two
 * bodies falling alike); restitution `e` over a step of `h` s. Returns the separation speed the
 * contact should leave at so that, at the step's end, its kinetic plus potential energy is e²
 * times what it had when it reached the surface: a ball bouncing on the step after it landed
 * 10 cm deep (or caught 2 cm early) rises to exactly e² of its drop, where reflecting the speed
 * it has there gains (or loses) the height of that offset on every bounce. */
double gy_adapter_bounce_speed(double approach, double offset, double accel, double e, double h);

/* Penetration recovery: overlap up to this depth (m) is corrected through the contact rows'
 * velocities (which keeps stacks upright at 10 iterations, where a correction in positions alone
 * lets a 10-box stack fall); deeper overlap is undone in positions alone (split impulse), so
 * pushing a body out of it leaves no speed behind. */
#define GY_ADAPTER_SOLVER_DEPTH 0.01

/* Resting contacts settle this deep (m) into what they stand on, and are pulled down to it when
 * shallower: a narrow phase that reports only overlapping corners (ODE's and Bullet's box-box)
 * loses a corner left at zero depth, and a box resting or riding on a box rocked from one corner
 * to the next (ODE: its tilt wandered within the layer until a corner lifted; Bullet: every step
 * on a box sliding faster than its contact breaking distance per step). */
#define GY_ADAPTER_CONTACT_LAYER 5e-4

/* Continuous collision sweeps a sphere this fraction of the body's inner radius, so resting or
 * sliding contact at the start of the sweep does not register as a hit. */
#define GY_ADAPTER_CCD_SHRINK 0.8

/* Friction is isotropic: a contact's first friction direction follows its slip, so the two
 * clamped friction rows brake a sliding or spinning body by exactly μ N whatever its heading (a
 * frame fixed to the world axes brakes a diagonal slip by up to √2 μ N). Below this slip speed
 * (m/s) the driver keeps its own fixed frame, which keeps resting contacts' warm start steady. */
#define GY_ADAPTER_SLIP_SPEED 1e-2

/* The first friction direction for a contact of unit normal `n` whose bodies' velocities at the
 * point differ by `rel`: the unit tangential part of `rel` in *dir, true; false (and *dir
 * untouched) below GY_ADAPTER_SLIP_SPEED. */
bool gy_adapter_friction_direction(gy_vec3 rel, gy_vec3 n, gy_vec3 *dir);

/* ---- threads -------------------------------------------------------------------------------- */

#define GY_ADAPTER_MAX_THREADS 8u

/* The threads bound to a world. */
typedef struct gy_adapter_threads {
    pthread_mutex_t lock; /* guards ids and count */
    pthread_t ids[GY_ADAPTER_MAX_THREADS];
    uint32_t count;
} gy_adapter_threads;

/* GY_ERR_BACKEND when the mutex cannot be made. */
gy_result gy_adapter_threads_init(gy_adapter_threads *t);
void gy_adapter_threads_fini(gy_adapter_threads *t);

/* True when the calling thread is bound (always true in builds with NDEBUG). */
bool gy_adapter_threads_ok(const gy_adapter_threads *t);

/* Binds the calling thread (a no-op when it already is). `on_bind`, when given, runs under the
 * lock for a thread not yet bound and may refuse it (middleware's per-thread setup).
 * GY_ERR_CAPACITY beyond GY_ADAPTER_MAX_THREADS. */
gy_result gy_adapter_threads_bind(gy_adapter_threads *t, gy_result (*on_bind)(void));

/* Unbinds the calling thread; `on_unbind`, when given, runs under the lock if it was bound. */
void gy_adapter_threads_unbind(gy_adapter_threads *t, void (*on_unbind)(void));

/* Whether the calling thread may read the world's records: a bound one, or any once none is
 * bound (the world has stopped, so nothing changes them). Always true with NDEBUG. */
bool gy_adapter_threads_may_read(gy_adapter_threads *t);

/* Whether the calling thread may destroy the world: the same rule as gy_adapter_threads_may_read.
 * Logs the refusal as `adapter`. Always true with NDEBUG. */
bool gy_adapter_threads_may_destroy(gy_adapter_threads *t, const gy_logger *log,
                                    const char *adapter);

/* ---- world ---------------------------------------------------------------------------------- */

/* Validates a world definition (NULL: the defaults) and fills in its zero defaults: one substep,
 * 10 solver iterations, a 4096 m half extent, the default allocator. */
gy_result gy_adapter_world_def(const gy_backend_world_def *in, gy_backend_world_def *out);

/* GY_ERR_NON_FINITE or GY_ERR_INVALID_ARGUMENT unless dt is a finite positive step (s). */
gy_result gy_adapter_check_dt(double dt);

/* What the counters count besides the handle pools. */
typedef struct gy_adapter_tally {
    uint32_t bodies[GY_MOTION_TYPE_COUNT];
    uint32_t sensors;   /* sensor colliders */
    uint32_t resources; /* live resource records, whoever holds them */
} gy_adapter_tally;

/* Fills every counter but awake_bodies and contact_pairs (zeroed), which the adapter knows. */
void gy_adapter_counters(gy_backend_counters *out, const gy_adapter_tally *t,
                         const gy_handle_pool *bodies, const gy_handle_pool *colliders,
                         const gy_handle_pool *joints);

/* True when a collider with these properties passes a query filter (NULL: the default one). */
bool gy_adapter_filter_accepts(const gy_query_filter *f, uint32_t category, gy_motion_type type,
                               bool is_sensor, gy_body_id body, gy_collider_id collider);

/* ---- resources ------------------------------------------------------------------------------ */

/* The adapter-neutral head of a mesh or hull resource record: adapters put it first in theirs
 * (`base`), so the resource pool's payloads can be read as this. Refcounted: the creator's
 * reference plus one per collider using it. */
typedef struct gy_adapter_resource {
    gy_resource_id id;
    gy_shape_type kind; /* GY_SHAPE_MESH or GY_SHAPE_HULL */
    uint32_t refs;
    bool creator_ref;            /* the creator has not released it yet */
    gy_hull hull;                /* hulls: the built hull */
    gy_adapter_mesh_edges edges; /* meshes: face normals and active edges */
    /* Meshes: owned copies of the definition (drivers may hand them to the middleware). */
    double *vertices;  /* 3 per vertex */
    uint32_t *indices; /* 3 per triangle */
    uint32_t vertex_count, index_count;
} gy_adapter_resource;

/* Fills a new mesh record's head from a valid definition: its kind, copies of the vertices and
 * indices, and the edges (`active_edges` as gy_adapter_mesh_edges_build_piece takes them). On
 * failure (GY_ERR_OUT_OF_MEMORY) the head holds nothing to free. */
gy_result gy_adapter_resource_mesh_init(const gy_allocator *al, const gy_mesh_def *def,
                                        const uint8_t *active_edges, gy_adapter_resource *r);

/* Fills a new hull record's head: its kind and a copy of a valid hull. */
gy_result gy_adapter_resource_hull_init(const gy_allocator *al, const gy_hull *hull,
                                        gy_adapter_resource *r);

/* Frees what a record's head owns (mesh copies and edges, or the hull); drivers call it when
 * they free the record. */
void gy_adapter_resource_fini(const gy_allocator *al, gy_adapter_resource *r);

/* Gives a new record its id (the creator's reference) and counts it. */
gy_result gy_adapter_resource_publish(gy_handle_pool *pool, gy_adapter_tally *t,
                                      gy_adapter_resource *r, gy_resource_id *out);

/* Drops one reference; true (and uncounted) when that was the last: the caller frees it. */
bool gy_adapter_resource_unref(gy_adapter_tally *t, gy_adapter_resource *r);

/* The creator's release: retires the id at once. Returns the record when that dropped its last
 * reference (the caller frees it), NULL otherwise, also for unknown or released ids. */
gy_adapter_resource *gy_adapter_resource_release(gy_handle_pool *pool, gy_adapter_tally *t,
                                                 gy_resource_id id);

/* The same for slot `index` of the pool (world teardown walks every slot). */
gy_adapter_resource *gy_adapter_resource_release_at(gy_handle_pool *pool, gy_adapter_tally *t,
                                                    uint32_t index);

/* What mesh_create and hull_create check before building anything, in the contract's order: the
 * arguments (`have_world`, out), the thread, then the definition; *out is zeroed. Mesh counts must
 * also fit an int's range for a third of them (middleware counts in ints). */
gy_result gy_adapter_mesh_begin(bool have_world, bool thread_ok, const gy_mesh_def *def,
                                gy_resource_id *out);
gy_result gy_adapter_hull_begin(bool have_world, bool thread_ok, const gy_hull_def *def,
                                gy_resource_id *out);
gy_result gy_adapter_hull_built_begin(bool have_world, bool thread_ok, const gy_hull *hull,
                                      gy_resource_id *out);

/* ---- bodies --------------------------------------------------------------------------------- */

/* What body_create checks before building anything, in the contract's order: the arguments
 * (`have_world`, def, out, colliders), the thread, the body definition, the collider count (at
 * most 2^20), then every collider with its resource (gy_adapter_resolve_colliders). On success
 * *res is an array of n resolved resources from `al` (NULL when n is 0), to be given back with
 * gy_adapter_body_end; on failure nothing is left allocated. *out is zeroed. */
gy_result gy_adapter_body_begin(bool have_world, bool thread_ok, const gy_allocator *al,
                                const gy_handle_pool *resources, const gy_body_def *def,
                                const gy_collider_def *cols, uint32_t n, gy_body_id *out,
                                gy_adapter_resource ***res);
void gy_adapter_body_end(const gy_allocator *al, gy_adapter_resource **res, uint32_t n);

/* Validates every collider for a body of `def->type` and resolves its resource into res[i] (NULL
 * for primitives): GY_ERR_STALE_HANDLE for a resource that is gone, GY_ERR_INVALID_SHAPE for one
 * of the wrong kind. References nothing. */
gy_result gy_adapter_resolve_colliders(const gy_handle_pool *resources, const gy_body_def *def,
                                       const gy_collider_def *cols, uint32_t n,
                                       gy_adapter_resource **res);

/* Mass properties of a dynamic body in the Gyre body frame (centre and inertia about it), from
 * geometry.c so that every adapter agrees: each solid collider at its density (def->mass > 0:
 * relative densities, the sum scaled to def->mass; 0: 1000 kg/m³ × density), moved into the body
 * frame and combined; def->mass_properties overrides it all. Sensors carry no mass unless every
 * collider is a sensor; a body with no volume at all gets def->mass (or 1 kg) as a 0.5 m solid
 * sphere. GY_ERR_INVALID_SHAPE when the result is not a positive finite mass. */
gy_result gy_adapter_body_mass(const gy_body_def *def, const gy_collider_def *cols, uint32_t n,
                               gy_adapter_resource *const *res, gy_mass *out);

/* How far a body's solid colliders reach from `com` (its centre of mass, body frame), in metres:
 * the radius of the sphere about it that holds them all (the sensors' too when every collider is
 * a sensor); 0 for a body with none. res[i] is collider i's resource (NULL for primitives). */
double gy_adapter_body_extent(const gy_collider_def *cols, uint32_t n,
                              gy_adapter_resource *const *res, gy_vec3 com);

/* The inverse of a body's inertia tensor (by cofactors), for drivers that apply it themselves;
 * the zero matrix for a singular one. */
gy_mat3 gy_adapter_inertia_inverse(gy_mat3 inertia);

/* A body's damping (gy_body_def) is a rate: d of the velocity (to first order) is removed per
 * second, so a step of dt keeps exp(-d dt) of it. The fraction that step removes. */
double gy_adapter_damping_loss(double d, double dt);

/* Smallest distance from a hull's centroid to a face plane (0 when not positive). */
double gy_adapter_hull_inner_radius(const gy_hull *h);

/* The corners of hull `h` shrunk by `margin` (m): every distinct face plane moved in by it and
 * the intersections of three planes that lie inside all of them, for a middleware that rounds a
 * hull by a margin around its points and so gives back the hull's faces. *out (emptied first)
 * holds at least 4 points, or none when the hull has more than
 * GY_ADAPTER_HULL_SHRINK_MAX_PLANES distinct planes (the plane intersection is cubic) or the
 * shrunk hull is no solid. GY_OK, or GY_ERR_OUT_OF_MEMORY (*out freed). */
#define GY_ADAPTER_HULL_SHRINK_MAX_PLANES 96
GY_ARRAY_DEFINE(gy_adapter_hull_points, gy_vec3)
gy_result gy_adapter_hull_shrink(const gy_allocator *al, const gy_hull *h, double margin,
                                 gy_adapter_hull_points *out);

/* Radius of a shape's inscribed sphere about `*center` (set, shape frame); 0 for shapes with no
 * volume. `hull` is needed for hulls. */
double gy_adapter_shape_inner_radius(const gy_shape *s, const gy_hull *hull, gy_vec3 *center);

/* The shape at `pose` as a rounded convex for gyre/convex.h (a hull's points are borrowed from
 * `hull`, which must outlive the convex); false for planes, meshes and a hull without its data. */
bool gy_adapter_shape_convex(const gy_shape *s, const gy_hull *hull, gy_pose pose, gy_convex *out);

/* A sphere about the centre of mass inside a body's solid colliders, for continuous collision:
 * add every solid collider, then read the radius. When no collider contains the centre of mass
 * (a dumbbell) it is the smallest collider's inner radius: the sweep then guards the centre of
 * mass only. */
typedef struct gy_adapter_ccd_radius {
    double best, smallest;
} gy_adapter_ccd_radius;

void gy_adapter_ccd_begin(gy_adapter_ccd_radius *c);
void gy_adapter_ccd_add(gy_adapter_ccd_radius *c, const gy_shape *s, const gy_hull *hull,
                        gy_pose local_pose, gy_vec3 com);
double gy_adapter_ccd_end(const gy_adapter_ccd_radius *c);

/* The velocities that move a kinematic body from (from, rotation) to (to, target rotation) in
 * dt seconds: linear (to − from) / dt, angular along the shorter turn. */
void gy_adapter_kinematic_velocity(gy_vec3 from, gy_quat rotation, gy_vec3 to, gy_quat target,
                                   double dt, gy_vec3 *linear, gy_vec3 *angular);

/* What joint_create checks before building anything, in the contract's order: the arguments,
 * the thread, the definition, then its bodies: *a and *b (NULL for none) are the payloads of
 * def->a and def->b in `bodies`, GY_ERR_STALE_HANDLE when either is gone. *out is zeroed. The
 * caller checks the bodies' motion types. */
gy_result gy_adapter_joint_begin(bool have_world, bool thread_ok, const gy_handle_pool *bodies,
                                 const gy_joint_def *def, gy_joint_id *out, void **a, void **b);

/* A distance joint's length: def->distance, or (when negative) the distance from a's origin to
 * the anchor now. A length of zero has no direction: it becomes a ball joint (*type) when a's
 * origin already sits on the anchor, and GY_ERR_INVALID_ARGUMENT otherwise. Other joint types
 * pass through with a length of 0. */
gy_result gy_adapter_joint_length(const gy_joint_def *def, gy_vec3 a_origin, gy_joint_type *type,
                                  double *distance);

/* ---- queries -------------------------------------------------------------------------------- */

/* What the three queries collect into: the caller's buffer and the collector's state. */
typedef struct gy_adapter_query {
    const gy_query_filter *filter; /* NULL: the default filter */
    gy_collector collector;
    gy_hit *hits;
    uint32_t capacity; /* 1 for ANY and CLOSEST (0 when the caller gave none) */
    uint32_t count;
    bool stop; /* satisfied: no further candidate can change the result */
} gy_adapter_query;

/* Checks what every query shares and prepares `q`, in the contract's order: arguments
 * (`have_world`, count, hits, collector), the filter, the thread (`thread_ok`), then the filter's
 * ignored ids (GY_ERR_STALE_HANDLE when released: ignoring nothing would hide the caller's
 * bug). *count is zeroed first. The pools may be NULL when there is no world. */
gy_result gy_adapter_query_begin(gy_adapter_query *q, bool have_world, bool thread_ok,
                                 const gy_handle_pool *bodies, const gy_handle_pool *colliders,
                                 const gy_query_filter *filter, gy_collector collector,
                                 gy_hit *hits, uint32_t capacity, uint32_t *count);

/* Offers a hit: ANY keeps the first, CLOSEST the smallest fraction (then the deepest), ALL
 * appends until full. Returns true when this hit satisfied the collector (q->stop set). A hit
 * with a non-finite number is dropped (false). */
bool gy_adapter_query_collect(gy_adapter_query *q, const gy_hit *h);

/* Whether the filter lets through any static collider, or any dynamic or kinematic one. */
bool gy_adapter_query_wants_statics(const gy_adapter_query *q);
bool gy_adapter_query_wants_moving(const gy_adapter_query *q);

/* A ray's or a cast's translation: its length in *length; GY_ERR_NON_FINITE for non-finite
 * input (and `origin`, when given), GY_ERR_INVALID_ARGUMENT beyond GY_MAX_MAGNITUDE. */
gy_result gy_adapter_check_translation(const gy_vec3 *origin, gy_vec3 translation, double *length);

/* A shape and pose for a shape cast or overlap: sphere, box, capsule or a live hull resource
 * (GY_ERR_STALE_HANDLE when gone), a finite pose with a unit rotation; other shapes give
 * GY_ERR_UNSUPPORTED. */
gy_result gy_adapter_check_query_shape(const gy_handle_pool *resources, const gy_shape *shape,
                                       gy_pose pose);

/* A hit naming a collider, zeroed otherwise (triangle -1). */
void gy_adapter_hit_init(gy_hit *h, gy_body_id body, gy_collider_id collider, uint64_t user_data);

/* ---- step records --------------------------------------------------------------------------- */

/* Records the first failure of a step in *first. */
void gy_adapter_note_error(gy_result *first, gy_result r);

/* A map from a pair of collider records to an index in a report, emptied in O(1) at each step.
 * Zero-initialised it is empty. */
typedef gy_hash_map gy_adapter_pair_map;

void gy_adapter_pair_map_reset(gy_adapter_pair_map *m);
uint32_t gy_adapter_pair_map_find(const gy_adapter_pair_map *m, const void *a, const void *b);
void gy_adapter_pair_map_free(const gy_allocator *al, gy_adapter_pair_map *m);

/* A step's contact report: one gy_contact per touching collider pair and, parallel to them, the
 * adapter's own record of `pair_size` bytes for each, in one block grown to the peak and reused.
 * An adapter keeps two (this step's and the last), swapped at each step start. */
typedef struct gy_adapter_report {
    gy_contact *contacts;
    void *pairs;
    uint32_t count, capacity;
} gy_adapter_report;

/* The index of pair (a, b) in a report, looked up in `map`. A new pair is appended with its
 * contact and record zeroed (the caller fills them in: its index equals the count before the
 * call). UINT32_MAX when out of memory, recorded with gy_adapter_note_error in *error. */
uint32_t gy_adapter_report_pair(const gy_allocator *al, gy_adapter_report *r, size_t pair_size,
                                gy_adapter_pair_map *map, const void *a, const void *b,
                                gy_result *error);

/* Makes the current report the previous one and empties the current one (keeping storage). */
void gy_adapter_report_swap(gy_adapter_report *current, gy_adapter_report *previous);

/* Removes, in order, the entries whose adapter record `drop` picks. */
void gy_adapter_report_remove_if(gy_adapter_report *r, size_t pair_size,
                                 bool (*drop)(const void *pair, const void *ctx), const void *ctx);

void gy_adapter_report_free(const gy_allocator *al, gy_adapter_report *r, size_t pair_size);

/* Forgetting a released body: removes, in order, the pairs naming body `id` from this step's and
 * the last step's report, and empties `map` (indices moved, and a new collider could reuse a
 * freed record's address; the map is rebuilt at the next step start). */
void gy_adapter_report_forget_body(gy_adapter_report *current, gy_adapter_report *previous,
                                   size_t pair_size, gy_adapter_pair_map *map, gy_body_id id);

/* Calls visit(ctx, other) for the other body of every pair in `r` naming body `id`, in report
 * order (a static moved, refiltered or removed wakes what rests on it). */
void gy_adapter_report_touching(const gy_adapter_report *r, gy_body_id id,
                                void (*visit)(void *ctx, gy_body_id other), void *ctx);

/* One-way verdicts: the pairs (platform collider, other collider) judged by gy_one_way_accepts,
 * each with the verdict kept until the two separate (a pair not seen for a whole step is
 * dropped; contacts.h's one-way rule). The records are the driver's opaque collider and body
 * pointers. */
typedef struct gy_adapter_one_way {
    const void *platform, *other;           /* colliders */
    const void *platform_body, *other_body; /* their bodies (forgetting a body) */
    uint64_t seen_step;
    bool accepted;
} gy_adapter_one_way;

GY_ARRAY_DEFINE(gy_adapter_one_ways, gy_adapter_one_way)

/* The pair's record, or NULL. Marks it seen in `step`. */
gy_adapter_one_way *gy_adapter_one_way_find(gy_adapter_one_ways *l, const void *platform,
                                            const void *other, uint64_t step);

/* Records a verdict; GY_ERR_OUT_OF_MEMORY (nothing recorded) when the list cannot grow. */
gy_result gy_adapter_one_way_add(const gy_allocator *al, gy_adapter_one_ways *l,
                                 const gy_adapter_one_way *rec);

/* At a step's end: drops the pairs not seen during `step` (they separated). */
void gy_adapter_one_way_expire(gy_adapter_one_ways *l, uint64_t step);

/* Drops every pair naming `body` (its release). */
void gy_adapter_one_way_forget_body(gy_adapter_one_ways *l, const void *body);

void gy_adapter_one_way_free(const gy_allocator *al, gy_adapter_one_ways *l);

GY_ARRAY_DEFINE(gy_adapter_joint_ids, gy_joint_id)
GY_ARRAY_DEFINE(gy_adapter_u64s, uint64_t)

/* Joints broken in a step: ids and user values, side by side as broken_joints() hands them out,
 * grown to the peak and reused. */
typedef struct gy_adapter_broken {
    gy_adapter_joint_ids ids;
    gy_adapter_u64s user; /* user[i] is ids[i]'s */
} gy_adapter_broken;

/* Appends a joint; on GY_ERR_OUT_OF_MEMORY the list is unchanged. */
gy_result gy_adapter_broken_push(const gy_allocator *al, gy_adapter_broken *b, gy_joint_id id,
                                 uint64_t user);
/* Empties the list for a new step, keeping its storage. */
void gy_adapter_broken_clear(gy_adapter_broken *b);
void gy_adapter_broken_free(const gy_allocator *al, gy_adapter_broken *b);
/* The table's broken_joints(): the list of the last step. */
uint32_t gy_adapter_broken_read(const gy_adapter_broken *b, const gy_joint_id **out,
                                const uint64_t **user);

/* The breakable joints of a world (the driver's joint records, kept by the front end), each
 * knowing its index here so a release removes it in O(1) (the last one moves into its slot). */
GY_ARRAY_DEFINE(gy_adapter_breakables, void *)

/* Appends after gy_adapter_breakables_reserve made room (a creation reserves before it can no
 * longer fail); returns the joint's index. */
uint32_t gy_adapter_breakables_add(gy_adapter_breakables *l, void *joint);
/* Removes the joint at `index`; returns the joint that now sits there (whose index the caller
 * updates to `index`; the removed one itself when it was the last). */
void *gy_adapter_breakables_remove(gy_adapter_breakables *l, uint32_t index);

#ifdef __cplusplus
}
#endif

#endif
