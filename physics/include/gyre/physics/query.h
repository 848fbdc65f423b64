/* Reading the query snapshot: the collider bounds, shapes, poses and filter bits the physics
 * thread publishes once per tick, and the raycasts, overlaps and shape casts answered from one
 * published view without touching the simulation (gy_physics_acquire_query_view hands out the
 * view). How the snapshot is built and published is private to the subsystem;
 * docs/physics-thread.md describes its trees.
 *
 * Threading: one game thread reads; every function here is lock-free and wait-free with respect
 * to the physics thread. A view is one complete publish; it stays valid and unchanged until the
 * reader's next acquire.
 *
 * Conventions: units are metres; rays are origin + fraction × translation, fraction in [0, 1]. A
 * ray that starts inside a solid shape (sphere, box, capsule, cylinder, hull, or below a plane)
 * does not hit that shape; mesh triangles are two-sided. Every answer carries the tick of the
 * publish it came from. */
#ifndef GYRE_PHYSICS_QUERY_H
#define GYRE_PHYSICS_QUERY_H

#include "gyre/core.h"
#include "gyre/physics/command.h"
#include "gyre/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One published buffer as the reader sees it. */
typedef struct gy_snapshot_view gy_snapshot_view;
/* Immutable hull or mesh geometry, shared by entries and buffers. */
typedef struct gy_snapshot_geometry gy_snapshot_geometry;

/* What the writer says about one collider. Copied by gy_query_snapshot_set. */
typedef struct gy_snapshot_entry {
    /* Sphere, box, capsule and cylinder as in backend.h (capsules and cylinders along local Y).
     * Plane: world-space normal and offset (dot(normal, p) = offset, solid below), pose ignored.
     * Hull and mesh: `shape.resource` is ignored, `geometry` names the blob. */
    gy_shape shape;
    gy_snapshot_geometry *geometry; /* hull or mesh of the matching kind; NULL for the others */
    gy_pose pose;                   /* the collider's world pose; rotation of unit length */
    uint32_t category;              /* filter category bits */
    gy_motion_type motion;          /* the owning body's motion type */
    bool is_sensor;
    gy_physics_body_ref body; /* the owning body */
} gy_snapshot_entry;

/* A sphere of radius 0.5 at the origin, category 1, dynamic, not a sensor, null body. */
gy_snapshot_entry gy_default_snapshot_entry(void);

/* Reader-side filter. */
typedef struct gy_snapshot_filter {
    uint32_t mask;                   /* entries with (category & mask) != 0; default all bits */
    uint32_t motion_types;           /* GY_MOTION_BIT set; default GY_MOTION_ALL */
    bool include_sensors;            /* default false */
    gy_physics_body_ref ignore_body; /* skip this body's colliders (the caller's own); null: none */
} gy_snapshot_filter;

gy_snapshot_filter gy_default_snapshot_filter(void);

/* One answer (a ray's or a shape cast's). Overlaps fill only body, slot, triangle and tick. */
typedef struct gy_snapshot_hit {
    gy_physics_body_ref body;
    uint32_t slot;    /* the entry's collider slot */
    int32_t triangle; /* mesh triangle index, else -1 */
    double fraction;  /* 0..1 along the translation */
    double distance;  /* fraction × |translation|, metres */
    gy_vec3 point;    /* world space */
    gy_vec3 normal;   /* world space, unit, out of the surface hit (against the ray for meshes) */
    uint64_t tick;    /* the physics tick of the publish that answered */
} gy_snapshot_hit;

/* What a view holds for one slot. */
typedef struct gy_snapshot_entry_info {
    gy_snapshot_entry entry; /* as stored: capsule/cylinder heights and box sizes recomputed
                                from half extents, plane normal normalised */
    gy_vec3 bounds_min;      /* world bounds (outward-rounded); ±inf for planes */
    gy_vec3 bounds_max;
} gy_snapshot_entry_info;

/* ---- the view -------------------------------------------------------------------------------- */

/* The physics tick the view describes. */
uint64_t gy_snapshot_view_tick(const gy_snapshot_view *v);

/* The entry at `slot` as published, or GY_ERR_STALE_HANDLE when the slot is empty. */
gy_result gy_snapshot_view_get(const gy_snapshot_view *v, uint32_t slot,
                               gy_snapshot_entry_info *out);

/* Casts origin → origin + translation. ANY stops at the first accepted hit, CLOSEST keeps the
 * nearest, ALL writes one hit (its nearest) per entry crossed, up to `capacity`, in no particular
 * order. `filter` NULL: defaults. Writes *count (0 when nothing is hit; also for a zero
 * translation). GY_ERR_NON_FINITE, or GY_ERR_INVALID_ARGUMENT (NULL view, count, or hits with a
 * non-zero capacity; an unknown collector). Never allocates. */
gy_result gy_snapshot_view_raycast(const gy_snapshot_view *v, gy_vec3 origin, gy_vec3 translation,
                                   const gy_snapshot_filter *filter, gy_collector collector,
                                   gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count);

/* Entries whose shape overlaps `shape` (sphere, box, capsule or hull; others GY_ERR_UNSUPPORTED)
 * at `pose`: a bounds test, then an exact test (GJK; touching counts). A hull is the convex hull of
 * `hull`'s points in the shape's frame, as for gy_snapshot_view_shape_cast (GY_ERR_STALE_HANDLE
 * when NULL; `shape->resource` is ignored); `hull` is unused for the other shapes. ANY and CLOSEST
 * both report one overlapping entry (overlaps have no order); ALL reports each, up to `capacity`.
 * Errors as for raycast, plus those of gy_validate_shape, gy_validate_pose and
 * gy_validate_hull_def, in that order. Never allocates. */
gy_result gy_snapshot_view_overlap(const gy_snapshot_view *v, const gy_shape *shape,
                                   const gy_hull_def *hull, gy_pose pose,
                                   const gy_snapshot_filter *filter, gy_collector collector,
                                   gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count);

/* Casts `shape` (sphere, box, capsule or hull; others GY_ERR_UNSUPPORTED) from `pose` along
 * `translation`. A hull is the convex hull of `hull`'s points in the shape's frame
 * (GY_ERR_STALE_HANDLE when NULL, as the live cast answers a dead hull; `shape->resource` is
 * ignored); `hull` is unused for the other shapes. Each hit is the first contact with one entry:
 * its fraction, the point on the entry's surface and the normal out of it, found by conservative
 * advancement (gy_convex_cast), so the fraction is never past the contact and at most
 * GY_CONVEX_CAST_GAP metres short of it along the normal. A shape already touching an entry at
 * `pose` hits it at fraction 0. Collectors, filter and errors as for raycast, plus those of
 * gy_validate_shape, gy_validate_pose and gy_validate_hull_def, checked in the live cast's order.
 * Never allocates. */
gy_result gy_snapshot_view_shape_cast(const gy_snapshot_view *v, const gy_shape *shape,
                                      const gy_hull_def *hull, gy_pose pose, gy_vec3 translation,
                                      const gy_snapshot_filter *filter, gy_collector collector,
                                      gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count);

/* One past the highest slot the view can hold an entry at: every live entry has a slot below it
 * (gy_snapshot_view_get says which are live). 0 for NULL. */
uint32_t gy_snapshot_view_slot_limit(const gy_snapshot_view *v);

/* The trees a view holds nodes of. */
typedef enum gy_snapshot_tree {
    GY_SNAPSHOT_TREE_STATIC = 0, /* static entries */
    GY_SNAPSHOT_TREE_MOVING = 1  /* kinematic and dynamic entries (boxes grown by a margin) */
} gy_snapshot_tree;

/* One tree node as gy_snapshot_view_visit_nodes reports it: its box (float bounds widened to
 * doubles), its depth (root 0), and for a leaf the slot of the entry it holds. */
typedef struct gy_snapshot_node {
    gy_snapshot_tree tree;
    uint32_t depth;
    bool leaf;
    uint32_t slot; /* leaves only; UINT32_MAX for internal nodes */
    gy_vec3 min, max;
} gy_snapshot_node;

typedef void (*gy_snapshot_node_fn)(void *ctx, const gy_snapshot_node *node);

/* Calls fn for every node of the view's trees, static tree first, each parent before its
 * children; returns how many. Never allocates (a fixed stack: trees are at most
 * GY_SNAPSHOT_MAX_DEPTH deep). 0 for a NULL view or fn. */
#define GY_SNAPSHOT_MAX_DEPTH 64u
uint32_t gy_snapshot_view_visit_nodes(const gy_snapshot_view *v, gy_snapshot_node_fn fn, void *ctx);

/* A hull's or mesh's triangles in its local frame: for a hull, the convex hull of its points
 * (wound counter-clockwise seen from outside); for a mesh, its triangles as given. */
typedef struct gy_snapshot_triangles {
    const gy_vec3 *vertices;
    uint32_t vertex_count;
    const uint32_t *indices; /* 3 per triangle, into vertices */
    uint32_t triangle_count;
} gy_snapshot_triangles;

/* The triangles of an entry's geometry (gy_snapshot_entry.geometry of a view's entry). Reader or
 * writer thread: blobs never change, and one a view names lives as long as the view. Valid as
 * long as the blob. GY_ERR_INVALID_ARGUMENT for NULL. */
gy_result gy_snapshot_geometry_triangles(const gy_snapshot_geometry *g, gy_snapshot_triangles *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_PHYSICS_QUERY_H */
