/* Private to the ODE adapter: the records behind its handles and the layout of its world. Only
 * files in middleware/ode/ include this header (and ODE's). */
#ifndef GYRE_ODE_INTERNAL_H
#define GYRE_ODE_INTERNAL_H

#include <ode/ode.h>
#include <stddef.h>
#include <pthread.h>

#include "../src/driver.h"
#include "../src/joint_drive.h"
#include "../src/records.h"
#include "gyre/backend/backend.h"
#include "gyre/geometry.h"
#include "gyre/handle_pool.h"
#include "gyre/hash_map.h"
#include "gyre/array.h"

/* The driver records are the front end's opaque gy_driver_* types (driver.h). */
typedef struct gy_driver_body gy_ode_body;

/* A mesh or hull resource: the shared head (id, kind, references, hull) and ODE's data. */
typedef struct gy_ode_resource {
    gy_adapter_resource base; /* first: the resource pool's payloads are read as this */
    /* Mesh: ODE's trimesh data over the head's copies (it keeps pointers into them). */
    dTriMeshDataID trimesh;
    /* Hull: the faces ODE's convex geom points into; it reads the head's hull's planes (4 per
     * face) and vertices (3 per vertex) in place. */
    unsigned int *convex_polys; /* per face: count 3, then its indices */
} gy_ode_resource;
_Static_assert(sizeof(dReal) == sizeof(double) && sizeof(gy_vec3) == 3 * sizeof(double),
               "ODE reads a hull's planes and vertices in place");

/* One collider: an ODE geom plus everything the near callback and queries filter on. The geom's
 * user data (dGeomGetData) points at this record. A static sphere, box, capsule or cylinder has
 * no geom of its own (`geom` NULL): it is tested through the world's shared geom of its shape,
 * posed for it on demand (gy_ode_collider_geom), which spares a level ODE's ~350 bytes a geom. */
typedef struct gy_driver_collider {
    /* First: the Gyre record (records.h); its body: gy_ode_owner; its mesh or hull (holding
     * one reference): gy_ode_collider_resource. */
    gy_adapter_collider base;
    dGeomID geom; /* NULL: a static tested through a shared geom (above) */
} gy_ode_collider;

struct gy_driver_body {
    gy_adapter_body base;    /* first: the Gyre record (records.h) */
    gy_pose pose;            /* static bodies: the authoritative pose (they have no dBody) */
    uint32_t collider_count; /* its records follow the body's in its block (gy_ode_body_record) */
    gy_adapter_settle settle; /* the front end's give-back (overlap.h) */

    /* Motion state, from `motion` to the end: a static's block stops before it
     * (GY_ODE_STATIC_BODY_SIZE), so nothing reached by a static reads or writes these. */
    gy_adapter_motion motion; /* the Gyre record's motion part (base.motion points here) */
    dBodyID body;             /* ODE's body; a static has none (gy_ode_dbody) */
    gy_vec3 com_local;     /* centre of mass in the Gyre body frame; ODE's body origin sits here */
    gy_mat3 inv_inertia;   /* dynamic: inverse inertia about the COM, body axes */
    gy_adapter_push push;  /* the front end's push-out (overlap.h) */
    dJointID lock_lmotor;  /* axis locks, or NULL */
    dJointID lock_amotor;
};

/* Bytes of a static body's record: the fields before the motion state. */
#define GY_ODE_STATIC_BODY_SIZE offsetof(gy_ode_body, motion)

/* A body's collider records lie back to back in its block, right after its record (a static's
 * stops at GY_ODE_STATIC_BODY_SIZE), a static's each after its entry in the front end's static
 * grid (records.h): one allocation, no pointers to them. */
_Static_assert(GY_ODE_STATIC_BODY_SIZE % _Alignof(gy_ode_collider) == 0,
               "collider records after a static's record stay aligned");
_Static_assert(sizeof(gy_ode_body) % _Alignof(gy_ode_collider) == 0,
               "collider records after a moving body's record stay aligned");
_Static_assert(GY_ADAPTER_GRID_ENTRY_SIZE % _Alignof(gy_ode_collider) == 0 &&
                   sizeof(gy_ode_collider) % _Alignof(gy_static_grid_item) == 0,
               "grid entries and collider records after one another stay aligned");

static inline size_t gy_ode_body_record_size(uint8_t type)
{
    return type == GY_MOTION_STATIC ? GY_ODE_STATIC_BODY_SIZE : sizeof(gy_ode_body);
}

/* Bytes a collider takes in its body's block: its record, after its grid entry for a static. */
static inline size_t gy_ode_collider_size(uint8_t type)
{
    return sizeof(gy_ode_collider) + (type == GY_MOTION_STATIC ? GY_ADAPTER_GRID_ENTRY_SIZE : 0u);
}

/* A body's ODE body, NULL for a static (whose record stops before the field). */
static inline dBodyID gy_ode_dbody(const gy_ode_body *b)
{
    return b->base.type == GY_MOTION_STATIC ? NULL : b->body;
}

/* A body's collider record i (of collider_count). */
static inline gy_ode_collider *gy_ode_body_record(const gy_ode_body *b, uint32_t i)
{
    uint8_t type = b->base.type;
    size_t entry = gy_ode_collider_size(type) - sizeof(gy_ode_collider);
    size_t at = gy_ode_body_record_size(type) + entry + (size_t)i * gy_ode_collider_size(type);
    return (gy_ode_collider *)(void *)((char *)(uintptr_t)b + at);
}

/* A moving body's collider records, an array (a static's lie between grid entries). */
static inline gy_ode_collider *gy_ode_body_records(const gy_ode_body *b)
{
    assert(b->base.type != GY_MOTION_STATIC);
    return gy_ode_body_record(b, 0);
}

typedef struct gy_driver_joint {
    gy_adapter_joint base; /* first: the Gyre record (records.h) */
    dJointID joint;
    gy_ode_body *a, *b;
    dJointFeedback feedback; /* the solver's force and torque on a: breaks and joint state */
    double distance;         /* distance joints: the double-ball joint's length, m */
    dJointID limit_motor;    /* hinge limits, ball cone or twist limits: their rows, else NULL */
    dJointFeedback limit_feedback[2]; /* the limit motor's, or each slider limit row's */
} gy_ode_joint;

/* The front end reads the records through their Gyre parts (driver.h). */
_Static_assert(offsetof(gy_ode_body, base) == 0, "a body record starts with its Gyre part");
_Static_assert(offsetof(gy_ode_collider, base) == 0, "a collider record starts with its Gyre part");
_Static_assert(offsetof(gy_ode_joint, base) == 0, "a joint record starts with its Gyre part");

/* Contact joint feedback slots per block (ode_step.c's next_feedback). */
#define GY_ODE_FEEDBACK_BLOCK 256u

struct gy_driver_world {
    const gy_allocator *allocator;
    const gy_logger *logger;
    gy_backend_world_def def;

    dWorldID world;
    dSpaceID dynamic_space; /* dynamic and kinematic colliders */
    /* Static colliders are in no ODE space: the step and the queries find them through the
     * front end's static grid (gy_ode_static_visit) and test them with dCollide, which takes any
     * two geoms. Removing a geom from ODE's quadtree cost time proportional to the number of
     * statics. A solve's contact joints, and its slider limit rows (ode_joint.c), are made in
     * contact_group and emptied after it. */
    dJointGroupID contact_group;

    /* The front end's (driver.h): its handle pools (it gives and takes back the ids), and the
     * two of its parts read most, by their own names. */
    const gy_driver_records *records;
    const gy_handle_pool *resources; /* payload: gy_ode_resource* */
    gy_adapter_tally *tally;         /* bodies by motion type, sensors, live resource records */

    /* The front end's contact report (its records are the front end's own gy_adapter_pair,
     * whose tangent sums the force on b) and one-way verdicts, which the near callback feeds. */
    gy_adapter_contacts *contacts;

    /* Scratch geoms owned by the world for queries (never inserted in a space). */
    dGeomID query_ray;
    dGeomID query_sphere, query_box, query_capsule, query_convex;
    /* The shared geoms of static primitives (GY_ODE_SHARED_*), in no space, and the collider
     * each is posed for now (NULL: none; forgotten whenever a static moves or goes). */
    dGeomID static_geoms[4];
    gy_ode_collider *static_posed[4];

    /* ---- adapter bookkeeping (ode_backend.c, ode_body.c) ---- */
    const gy_driver_moving *moving; /* the front end's: every dynamic and kinematic body */

    /* ---- step state (ode_step.c); every array grows to its peak and is reused ---- */
    dJointFeedback **feedback_blocks; /* fixed-size blocks: joints keep pointers into them */
    uint32_t feedback_block_count, feedback_block_capacity;
    dGeomID ccd_sphere, ccd_box; /* scratch geoms for continuous collision, in no space */
    double substep_dt;
    bool sensor_pass;             /* colliding at the step's end poses, sensor pairs only */
    double damping_dt;      /* substep length the bodies' ODE damping scales were computed for */
    unsigned long rng_seed; /* this world's state of ODE's random generator (row shuffling) */
    gy_result step_error;   /* first allocation failure inside the current step */
};

/* A collider's body record (its Gyre record's owner). */
static inline gy_ode_body *gy_ode_owner(const gy_ode_collider *c)
{
    return (gy_ode_body *)c->base.owner;
}

/* A collider's mesh or hull record, NULL for primitives. */
static inline gy_ode_resource *gy_ode_collider_resource(const gy_ode_collider *c)
{
    bool res = c->base.shape_type == GY_SHAPE_HULL || c->base.shape_type == GY_SHAPE_MESH;
    return res ? (gy_ode_resource *)(void *)c->base.shape.resource : NULL;
}

/* The collider record behind an ODE geom (dGeomGetData), or NULL for the world's scratch geoms. */
static inline gy_ode_collider *gy_ode_geom_collider(dGeomID g)
{
    return (gy_ode_collider *)dGeomGetData(g);
}

/* The geom to test a static primitive with: the world's shared geom of its shape, posed for it
 * (ode_body.c). Stays so until it is asked for another static of the same shape. */
dGeomID gy_ode_static_geom(gy_driver_world *w, gy_ode_collider *c);

/* The geom a collider is tested with (ODE calls on it last until the next such call). */
static inline dGeomID gy_ode_collider_geom(gy_driver_world *w, gy_ode_collider *c)
{
    return c->geom != NULL ? c->geom : gy_ode_static_geom(w, c);
}

/* Shared geoms for statics (ode_body.c): made with the world and freed with it. */
void gy_ode_static_geoms_init(gy_driver_world *w);
void gy_ode_static_geoms_fini(gy_driver_world *w);

/* Conversions between Gyre's and ODE's representations. ODE quaternions are [w, x, y, z]. */
void gy_ode_quat_to_ode(gy_quat q, dQuaternion out);
gy_quat gy_ode_quat_from_ode(const dReal *q);

/* An ODE vector (dVector3, or any three dReals) as Gyre's. */
static inline gy_vec3 gy_ode_vec(const dReal *v)
{
    return gy_v3(v[0], v[1], v[2]);
}

/* Static colliders through the front end's static grid (gy_driver_statics_visit), which holds
 * each by its geom's AABB (gy_ode_collider_box): `aabb` is in ODE's order, which is the driver
 * interface's (minx, maxx, miny, maxy, minz, maxz). This is the only way to find statics: they
 * are in no ODE space. */
typedef bool (*gy_ode_static_visitor)(void *ctx, gy_ode_collider *c);
static inline void gy_ode_static_visit(gy_driver_world *w, const dReal aabb[6],
                                       gy_ode_static_visitor visit, void *ctx)
{
    gy_driver_statics_visit(w->records, aabb, visit, ctx);
}

/* Query primitives (ode_query.c): the driver entries of the same names (driver.h). */
void gy_ode_ray_walk(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                     gy_adapter_search *s);
void gy_ode_shape_walk(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, bool cast, gy_adapter_search *s);
bool gy_ode_ray_test(gy_driver_world *w, gy_driver_query *q, gy_ode_collider *c,
                     gy_driver_hit *out);
bool gy_ode_shape_contact(gy_driver_world *w, gy_driver_query *q, gy_ode_collider *c, double t,
                          gy_driver_hit *out);
void gy_ode_collider_box(gy_driver_world *w, gy_ode_collider *c, double box[6]);
gy_pose gy_ode_collider_body_pose(gy_driver_world *w, gy_ode_collider *c);

/* Creates and frees the world's scratch query geoms (ode_query.c). */
gy_result gy_ode_query_init(gy_driver_world *w);
void gy_ode_query_fini(gy_driver_world *w);

/* Bodies (ode_body.c): the driver entries of the same names (driver.h). */
gy_result gy_ode_body_create(gy_driver_world *w, const gy_body_def *def,
                             const gy_collider_def *cols, uint32_t n,
                             gy_adapter_resource *const *res,
                             const gy_adapter_collider_rare *const *rare, const gy_mass *mass,
                             double sleep_turn, gy_ode_body **out, gy_ode_collider **colliders);
uint32_t gy_ode_body_collider_count(const gy_ode_body *b);
gy_ode_collider *gy_ode_body_collider(gy_ode_body *b, uint32_t i);
void gy_ode_body_release(gy_driver_world *w, gy_ode_body *b);
void gy_ode_body_get_state(gy_driver_world *w, gy_ode_body *b, gy_body_state *out);
void gy_ode_body_set_pose(gy_driver_world *w, gy_ode_body *b, gy_pose pose);
void gy_ode_body_set_linear_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 v);
void gy_ode_body_set_angular_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 v);
gy_vec3 gy_ode_body_point_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 world_point);
void gy_ode_body_put_asleep(gy_driver_world *w, gy_ode_body *b);
void gy_ode_body_set_mass(gy_driver_world *w, gy_ode_body *b, double mass);
void gy_ode_collider_filter_changed(gy_driver_world *w, gy_ode_collider *c);
/* The driver entry body_wake: a dynamic body only. */
void gy_ode_body_wake(gy_driver_world *w, gy_ode_body *b);
/* ODE's capsule and cylinder stand along local Z, Gyre's along Y: a -90° turn about X maps one
 * onto the other and is baked into the geom's (offset) rotation; identity for other shapes. */
gy_quat gy_ode_shape_axis_fix(gy_shape_type t);
/* World-space pose of the body origin and of its centre of mass. */
gy_pose gy_ode_body_pose(const gy_ode_body *b);
gy_vec3 gy_ode_body_com(const gy_ode_body *b);
/* World velocity of a world point moving with the body (zero for statics). */
gy_vec3 gy_ode_body_velocity_at(const gy_ode_body *b, gy_vec3 world_point);
/* Applies Gyre damping to a body's ODE damping scale for a substep of `dt`. */
void gy_ode_body_apply_damping(gy_ode_body *b, double dt);

/* Resources (ode_body.c). */
gy_result gy_ode_mesh_create(gy_driver_world *w, gy_adapter_resource *rec);
gy_result gy_ode_hull_create(gy_driver_world *w, gy_adapter_resource *rec);
void gy_ode_resource_free(gy_driver_world *w, gy_adapter_resource *r);

/* Joints (ode_joint.c). */
gy_result gy_ode_joint_create(gy_driver_world *w, const gy_joint_def *def, gy_ode_body *a,
                              gy_ode_body *b, gy_ode_joint **out);
void gy_ode_joint_release(gy_driver_world *w, gy_ode_joint *j);
void gy_ode_joint_coordinate(gy_driver_world *w, gy_ode_joint *j, double *position, double *rate);
gy_vec3 gy_ode_joint_axis(gy_driver_world *w, gy_ode_joint *j);
void gy_ode_joint_motor_set(gy_driver_world *w, gy_ode_joint *j, bool on, double velocity,
                            double max_force, double h);
void gy_ode_joint_set_spring(gy_driver_world *w, gy_ode_joint *j, double erp, double cfm, double h);
void gy_ode_joint_set_limit_rows(gy_driver_world *w, gy_ode_joint *j,
                                 const gy_joint_limit_row *rows, uint32_t n, double h);
void gy_ode_joint_rotations(gy_driver_world *w, gy_ode_joint *j, gy_quat *qa, gy_quat *qb);
void gy_ode_joint_get_state(gy_driver_world *w, gy_ode_joint *j, gy_joint_state *out);
/* The larger constraint force (N) the last solve applied to either body (driver.h). */
double gy_ode_joint_force(gy_driver_world *w, gy_ode_joint *j);
/* Builds the motors that hold a new dynamic body's locked world axes. */
void gy_ode_locks_build(gy_driver_world *w, gy_ode_body *b);

/* Step (ode_step.c). */
extern const gy_driver_step gy_ode_step;
void gy_ode_step_fini(gy_driver_world *w);

#endif
