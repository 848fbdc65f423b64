/* Private to the ODE adapter: the records behind its handles and the layout of its world. Only
 * files in middleware/ode/ include this header (and ODE's). */
#ifndef GYRE_ODE_INTERNAL_H
#define GYRE_ODE_INTERNAL_H

#include <ode/ode.h>
#include <pthread.h>

#include "gyre/backend.h"
#include "gyre/geometry.h"
#include "gyre/handle_pool.h"

typedef struct gy_ode_body gy_ode_body;

/* A mesh or hull resource. Refcounted: the creator's reference (creator_ref) plus one per collider. */
typedef struct gy_ode_resource {
    gy_resource_id id;
    gy_shape_type kind; /* GY_SHAPE_MESH or GY_SHAPE_HULL */
    uint32_t refs;      /* creator's (if still held) + colliders' */
    bool creator_ref;   /* the creator has not released yet */
    /* Mesh: owned copies handed to ODE's trimesh data. */
    dTriMeshDataID trimesh;
    double *mesh_vertices; /* 3 per vertex (ODE keeps pointers into these) */
    dTriIndex *mesh_indices;
    uint32_t vertex_count, index_count;
    /* Hull: the built hull and the arrays ODE's convex geom points into. */
    gy_hull hull;
    double *convex_planes;     /* 4 per face */
    double *convex_points;     /* 3 per vertex */
    unsigned int *convex_polys; /* per face: count, then indices */
} gy_ode_resource;

/* One collider: an ODE geom plus everything the near callback and queries filter on. The geom's
 * user data (dGeomGetData) points at this record. */
typedef struct gy_ode_collider {
    gy_collider_id id;
    gy_ode_body *body;
    dGeomID geom;
    gy_shape shape;     /* as given (resource ids resolved into `resource`) */
    gy_pose local_pose; /* pose in the Gyre body frame */
    gy_material material;
    bool is_sensor;
    bool contact_response;
    bool one_way;
    gy_vec3 one_way_normal;   /* collider-local, unit */
    gy_vec3 surface_velocity; /* collider-local */
    uint32_t category, mask;
    uint64_t user_data;
    gy_ode_resource *resource; /* mesh/hull, or NULL; holds one reference */
} gy_ode_collider;

struct gy_ode_body {
    gy_body_id id;
    gy_motion_type type;
    dBodyID body;           /* NULL for static bodies */
    gy_pose pose;           /* static bodies: the authoritative pose (they have no dBody) */
    gy_vec3 com_local;      /* centre of mass in the Gyre body frame; ODE's body origin sits here */
    gy_ode_collider **colliders;
    uint32_t collider_count;
    double gravity_factor;
    bool continuous;
    dJointID lock_lmotor; /* axis locks, or NULL */
    dJointID lock_amotor;
    uint64_t user_data;
};

typedef struct gy_ode_joint {
    gy_joint_id id;
    gy_joint_type type;
    dJointID joint;
    gy_ode_body *a, *b;
    dJointFeedback feedback; /* for break detection */
    bool breakable;
    double break_force;
    double distance; /* Distance joints are built from primitives; see ode_joint code */
    uint64_t user_data;
} gy_ode_joint;

struct gy_backend_world {
    const gy_allocator *allocator;
    const gy_logger *logger;
    gy_world_def def;

    dWorldID world;
    dSpaceID top_space;     /* holds the two spaces below */
    dSpaceID dynamic_space; /* dynamic and kinematic colliders */
    dSpaceID static_space;  /* static colliders, in a structure queries need not scan linearly */
    dJointGroupID contact_group;

    gy_handle_pool bodies;    /* payload: gy_ode_body* */
    gy_handle_pool colliders; /* payload: gy_ode_collider* */
    gy_handle_pool joints;    /* payload: gy_ode_joint* */
    gy_handle_pool resources; /* payload: gy_ode_resource* */

    pthread_t owner;
    bool bound;

    /* Per-step output (grown to peak, then reused). */
    gy_contact *contacts;
    uint32_t contact_count, contact_capacity;
    gy_joint_id *broken;
    uint64_t *broken_user;
    uint32_t broken_count, broken_capacity;

    /* Scratch geoms owned by the world for queries (never inserted in a space). */
    dGeomID query_ray;
    dGeomID query_sphere, query_box, query_capsule, query_convex;
};

/* The collider record behind an ODE geom (dGeomGetData), or NULL for the world's scratch geoms. */
static inline gy_ode_collider *gy_ode_geom_collider(dGeomID g)
{
    return (gy_ode_collider *)dGeomGetData(g);
}

/* True when a collider passes a query filter (mask, motion type, sensors, ignores). */
bool gy_ode_filter_accepts(const gy_query_filter *f, const gy_ode_collider *c);

/* Conversions between Gyre's and ODE's representations. ODE quaternions are [w, x, y, z]. */
void gy_ode_quat_to_ode(gy_quat q, dQuaternion out);
gy_quat gy_ode_quat_from_ode(const dReal *q);

/* Query entry points (ode_query.c), wired into the adapter's table. */
gy_result gy_ode_raycast(gy_backend_world *w, gy_vec3 origin, gy_vec3 translation,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count);
gy_result gy_ode_shape_cast(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                            gy_vec3 translation, const gy_query_filter *filter,
                            gy_collector collector, gy_hit *hits, uint32_t capacity,
                            uint32_t *count);
gy_result gy_ode_overlap(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count);

/* Creates and frees the world's scratch query geoms (ode_query.c). */
gy_result gy_ode_query_init(gy_backend_world *w);
void gy_ode_query_fini(gy_backend_world *w);

/* Resolves a shape to a posed scratch geom for shape casts and overlaps (ode_query.c). Returns
 * NULL when the shape type cannot be used in queries. */
dGeomID gy_ode_query_geom(gy_backend_world *w, const gy_shape *shape, gy_pose pose);

#endif
