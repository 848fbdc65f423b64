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
 * records. The one exception is a joint the step breaks: the driver unregisters it there and
 * then (gy_driver_records_forget_joint), so that a later substep never meets its freed record.
 * Resource records are the front end's own too (it allocates them, fills their head and keeps
 * them in its resource pool), the driver building only their vendor part. The front end looks
 * handles up in its pools and passes the record as the opaque pointers below. Every record
 * starts with its Gyre part (records.h): body records with gy_adapter_body, collider records
 * with gy_adapter_collider, joint records with gy_adapter_joint, resource records with
 * gy_adapter_resource. The driver fills them with the records.h initialisers (ids left zero);
 * the front end reads and keeps them (motion and joint types, materials, filters, policies), so
 * a driver is asked only to translate what changes into vendor state.
 *
 * Threading: every call comes from the thread the front end has bound (or one serialised with
 * it); a driver needs no checks of its own. docs/middleware.md is the guide to writing one. */
#ifndef GYRE_DRIVER_H
#define GYRE_DRIVER_H

#include "adapter_common.h"
#include "contacts.h"
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A driver's world and records; their layouts are private to the driver. */
typedef struct gy_driver_world gy_driver_world;
typedef struct gy_driver_body gy_driver_body;
typedef struct gy_driver_collider gy_driver_collider;
typedef struct gy_driver_joint gy_driver_joint;

/* What the front end lends a driver's world at creation, valid until world_destroy: its handle
 * pools (payload: the driver's records), counters, contact report and resource pool. A driver
 * reads the pools (to reach a body from a reported id, or to walk its joints) and never acquires
 * or releases their handles, except through gy_driver_records_forget_joint. */
typedef struct gy_driver_records {
    const gy_handle_pool *bodies;    /* payload: the driver's body record */
    const gy_handle_pool *colliders; /* payload: the driver's collider record */
    gy_handle_pool *joints;          /* payload: the driver's joint record */
    const gy_handle_pool *resources; /* payload: the driver's resource record */
    gy_adapter_tally *tally;         /* resource references are counted out through it */
    /* The front end's report for this world (contacts.h): the driver's narrow phase feeds it
     * and applies its rules. */
    gy_adapter_contacts *contacts;
} gy_driver_records;

/* Unregisters a joint the step has broken (its id is in the broken list; the record is the
 * driver's to free). Every other release goes through the front end. */
void gy_driver_records_forget_joint(const gy_driver_records *r, gy_joint_id id);

typedef struct gy_driver {
    const char *name; /* registry name, e.g. "ode" (the table's name, flags and vendor string
                       * are given where the registry lists it, in frontend.c) */
    /* The most vertices a hull given built (gy_backend.hull_create_built) may have, 0 for no
     * limit: what the vendor does with a hull's collider in time that grows faster than its
     * size, so that a runtime hull's body is made within a tick's geometry budget. */
    uint32_t built_hull_max_vertices;
    /* Bytes of the driver's record for each reported pair: it starts with the pair's two
     * collider records, then whatever the driver keeps of the pair during the step. */
    size_t pair_size;
    /* Bytes of the driver's resource record: it starts with gy_adapter_resource. */
    size_t resource_size;

    /* `def` is checked and its zero defaults filled in (gy_adapter_world_def). `records` is
     * the front end's (see gy_driver_records). `broken` receives where the driver lists the
     * joints its steps break (the front end empties it before each step and reads it). */
    gy_result (*world_create)(const gy_backend_world_def *def, const gy_driver_records *records,
                              gy_driver_world **out, gy_adapter_broken **broken);
    /* Frees the world; the front end has released every joint, body and resource first. */
    void (*world_destroy)(gy_driver_world *w);
    /* Per-thread vendor set-up and clean-up, run once per bound thread; NULL when none. */
    gy_result (*thread_setup)(void);
    void (*thread_cleanup)(void);
    /* A finite gravity; the driver wakes sleepers so none hangs in the air. */
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
     * primitives) and `mass` the dynamic body's mass properties in the Gyre body frame (zeroed
     * for others). Creates everything or nothing; on success *out is the body's record and
     * colliders[i] collider i's, ids still zero (the front end gives them theirs). */
    gy_result (*body_create)(gy_driver_world *w, const gy_body_def *def,
                             const gy_collider_def *cols, uint32_t n,
                             gy_adapter_resource *const *res, const gy_mass *mass,
                             gy_driver_body **out, gy_driver_collider **colliders);
    /* Releases the body and its colliders (the front end has already released its joints, woken
     * what touched it, forgotten it in the report and taken back its ids). */
    void (*body_release)(gy_driver_world *w, gy_driver_body *b);
    /* The body's collider records, in their definition order; returns their count. */
    uint32_t (*body_colliders)(gy_driver_body *b, gy_driver_collider *const **out);
    /* Wakes a dynamic body (a kinematic one counts as moving in the next step); nothing for
     * statics. */
    void (*body_wake)(gy_driver_world *w, gy_driver_body *b);
    void (*body_get_state)(gy_driver_world *w, gy_driver_body *b, gy_body_state *out);
    /* A valid pose with a normalised rotation. May fail only for statics (re-indexing). */
    gy_result (*body_set_pose)(gy_driver_world *w, gy_driver_body *b, gy_pose pose);
    /* Not static. Wakes the body. */
    void (*body_set_linear_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 v);
    void (*body_set_angular_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 v);
    /* Dynamic only; each wakes the body. */
    void (*body_add_force)(gy_driver_world *w, gy_driver_body *b, gy_vec3 force);
    void (*body_add_torque)(gy_driver_world *w, gy_driver_body *b, gy_vec3 torque);
    /* `point` NULL: at the centre of mass. */
    void (*body_add_impulse)(gy_driver_world *w, gy_driver_body *b, gy_vec3 impulse,
                             const gy_vec3 *point);
    /* Kinematic only; a valid target (rotation normalised) and step. */
    void (*body_move_kinematic)(gy_driver_world *w, gy_driver_body *b, gy_pose target, double dt);
    gy_vec3 (*body_point_velocity)(gy_driver_world *w, gy_driver_body *b, gy_vec3 world_point);
    /* Dynamic only. */
    void (*body_set_awake)(gy_driver_world *w, gy_driver_body *b, bool awake);
    void (*body_set_mass)(gy_driver_world *w, gy_driver_body *b, double mass);

    /* The record's category and mask have changed: refilter its vendor object, and wake what
     * the change may free (the body, or what rests on a static one). */
    void (*collider_filter_changed)(gy_driver_world *w, gy_driver_collider *c);
    /* A collider-local direction turned into the world by the collider's current rotation. */
    gy_vec3 (*collider_to_world)(gy_driver_world *w, gy_driver_collider *c, gy_vec3 local);

    /* `def` is valid; `a` (not static) and `b` (NULL: the world) are its bodies. On success
     * *out is the joint's record, id still zero. */
    gy_result (*joint_create)(gy_driver_world *w, const gy_joint_def *def, gy_driver_body *a,
                              gy_driver_body *b, gy_driver_joint **out);
    /* Its id already taken back. */
    void (*joint_release)(gy_driver_world *w, gy_driver_joint *j);
    /* Hinges and sliders; a valid motor. */
    void (*joint_set_motor)(gy_driver_world *w, gy_driver_joint *j, const gy_joint_motor *m);
    void (*joint_get_state)(gy_driver_world *w, gy_driver_joint *j, gy_joint_state *out);

    /* A finite positive dt taken as `substeps` (the world's, at least 1) substeps of h each; the
     * broken-joint list has been emptied for it. */
    gy_result (*step)(gy_driver_world *w, double dt, double h, uint32_t substeps);
    /* Moving bodies awake now (kinematic ones always count). */
    uint32_t (*awake_bodies)(gy_driver_world *w);

    /* Queries: `q` is prepared (gy_adapter_query_begin), the ray's length is `length` (> 0 or
     * zero), a shape is one queries take, resolved and posed validly. The driver offers each hit
     * to gy_adapter_query_collect through q and stops once q->stop. */
    void (*raycast)(gy_driver_world *w, gy_vec3 origin, gy_vec3 translation, double length,
                    gy_adapter_query *q);
    void (*shape_cast)(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, gy_adapter_query *q);
    void (*overlap)(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_adapter_query *q);
} gy_driver;

/* The driver world under a front-end world (white-box driver tests read it). */
gy_driver_world *gy_frontend_driver_world(gy_backend_world *w);

/* The drivers compiled in (ode/ and bullet/). */
extern const gy_driver gy_ode_driver;
#if defined(GYRE_HAVE_BULLET)
extern const gy_driver gy_bullet_driver;
#endif

#ifdef __cplusplus
}
#endif

#endif
