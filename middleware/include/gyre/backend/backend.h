/* The middleware contract: what every physics adapter (ODE, Bullet, ...) provides to Gyre.
 *
 * An adapter fills one gy_backend table of function pointers. Everything crossing this header is
 * plain data from gyre/types.h (definition structs, handles, result structs). No vendor type
 * appears here.
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
#include "gyre/types.h"

struct gy_hull; /* a built convex hull, gyre/geometry.h */

#ifdef __cplusplus
extern "C" {
#endif

/* Combines two values with the mode of higher precedence (max > multiply > min > average). */
double gy_combine(double a, gy_combine_mode ma, double b, gy_combine_mode mb);

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

/* ---- the table ------------------------------------------------------------------------------- */

/* Flags an adapter declares. */
enum {
    /* Live queries may not run concurrently with each other (the vendor's collision code is not
     * thread-safe), so callers must take exclusive, not shared, access around them. */
    GY_BACKEND_QUERIES_EXCLUSIVE = 1u << 0,
};

struct gy_backend {
    const char *name; /* registry name, e.g. "ode" */
    uint32_t flags;
    /* The vendor library and the version this adapter was built against, e.g. "ODE 0.16.2". */
    const char *middleware;

    gy_result (*world_create)(const gy_backend_world_def *def, gy_backend_world **out);
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
    /* As hull_create, from a hull already built (gy_hull_build's result, copied), in time linear
     * in its size: the adapter's part of a hull built in slices. GY_ERR_INVALID_MESH for a hull
     * that gy_validate_hull refuses; GY_ERR_UNSUPPORTED (and an error logged naming the limit)
     * for a hull of more vertices than the adapter makes a collider of within a tick's budget
     * (ODE: 256, whose convex geom pairs up its edges in time quadratic in their count; Bullet:
     * no limit). */
    gy_result (*hull_create_built)(gy_backend_world *w, const struct gy_hull *hull,
                                   gy_resource_id *out);
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
    gy_result (*body_move_kinematic)(gy_backend_world *w, gy_body_id id, gy_pose target, double dt);
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
};

/* ---- registry -------------------------------------------------------------------------------- */

/* The adapter registered under `name`, or NULL. */
const gy_backend *gy_backend_find(const char *name);

/* Number of adapters compiled in, and the i-th one (NULL when out of range). */
uint32_t gy_backend_count(void);
const gy_backend *gy_backend_at(uint32_t index);

/* ---- shared validation (used by every adapter, and by layers above before enqueueing) -------- */

/* GY_ERR_NON_FINITE for a non-finite component, GY_ERR_INVALID_ARGUMENT for one with |x| > limit.
 */
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

/* Classifies the edges of a valid mesh definition (gy_validate_mesh_def) over all its triangles:
 * writes index_count / 3 flags to `active`, bit k set when edge k (corner k to corner k + 1) may
 * push a body with a normal of its own (boundary edges and convex ridges; not edges between faces
 * meeting flat or in a valley): the flags gy_backend.mesh_create gives a whole mesh. A piece of a
 * larger mesh created with the whole mesh's flags (gy_backend.mesh_create_piece) keeps the seams
 * it shares with the other pieces smooth. */
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
gy_result gy_validate_hull_def(const gy_hull_def *def);
/* A built hull's shape, in time linear in its size: at least 4 finite vertices, at least 4
 * triangles indexing them, finite planes, a positive finite volume; else GY_ERR_INVALID_MESH
 * (GY_ERR_INVALID_ARGUMENT for NULL). Not checked: that it is convex. */
gy_result gy_validate_hull(const struct gy_hull *hull);
gy_result gy_validate_query_filter(const gy_query_filter *filter);
/* A body's mass set after creation: GY_ERR_NON_FINITE when not finite, GY_ERR_INVALID_ARGUMENT
 * outside [GY_MIN_MASS, GY_MAX_MASS] kg (the range a body is created with). */
gy_result gy_validate_mass(double mass);
/* A shape and pose for a shape cast or overlap: GY_ERR_INVALID_ARGUMENT for a null shape, the
 * errors of gy_validate_shape and gy_validate_pose, GY_ERR_UNSUPPORTED for a shape other than a
 * sphere, box, capsule or hull. A hull's resource is not resolved here (the caller does that). */
gy_result gy_validate_query_shape(const gy_shape *shape, gy_pose pose);
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
