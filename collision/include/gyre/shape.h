/* Collision shapes as every layer describes them: the primitive kinds, their sizes in the shape's
 * own frame, and the resource (hull or mesh) a shape may name. Plain data; the contract
 * (gyre/backend/backend.h), the collision routines and the query snapshot all speak it.
 *
 * Threading: none (types only). */
#ifndef GYRE_SHAPE_H
#define GYRE_SHAPE_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A refcounted mesh or hull resource. */
typedef struct gy_resource_id {
    uint64_t bits;
} gy_resource_id;

/* The primitive kinds; hull and mesh shapes name a resource. */
typedef enum gy_shape_type {
    GY_SHAPE_SPHERE,
    GY_SHAPE_BOX,
    GY_SHAPE_CAPSULE,
    GY_SHAPE_CYLINDER,
    GY_SHAPE_PLANE,
    GY_SHAPE_HULL,
    GY_SHAPE_MESH,
    GY_SHAPE_TYPE_COUNT
} gy_shape_type;

/* A shape in its own local frame. Capsules and cylinders stand along local Y. */
typedef struct gy_shape {
    gy_shape_type type;
    double radius;           /* sphere, capsule, cylinder: > 0 */
    double height;           /* capsule (total, caps included, > 2 radius) and cylinder: > 0 */
    gy_vec3 box_size;        /* box: full extents, each > 0 */
    gy_vec3 normal;          /* plane: world-space unit normal (static bodies only) */
    double offset;           /* plane: dot(normal, p) = offset */
    gy_resource_id resource; /* hull or mesh: from hull_create / mesh_create */
} gy_shape;

#ifdef __cplusplus
}
#endif

#endif /* GYRE_SHAPE_H */
