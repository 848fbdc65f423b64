/* Query snapshot: what a game-thread raycast or overlap needs (each collider's bounds, shape, world
 * pose, filter bits and owner), published by the physics thread once per tick through a triple
 * buffer, with bounding-volume hierarchies to answer queries without testing every collider.
 *
 * Entries are keyed by a dense collider slot chosen by the writer. Static entries live in one tree,
 * kinematic and dynamic entries in another, planes (unbounded) in a short list. At each publish a
 * tree is refit along the paths of what moved (or in one sweep when most of it moved), and rebuilt
 * (binned SAH) when an entry joins or leaves it and at every 64th publish if anything in it moved
 * since its last build. A static tree of at least 1,024 entries is instead edited in place when
 * statics join or leave it (at most a quarter of it at once): each is inserted or removed with an
 * AVL rebalance along its path, so streaming statics in and out costs what changes, not what is
 * resident (a rebuild of 100,000 statics takes about 70 ms here). Each of the three buffers keeps
 * its own copy of the trees and entries and is brought up to date, when it is next written, with
 * exactly the entries (and edited static-tree nodes) that changed since it was last written, so
 * publishing costs what moved, not what exists: 100,000 untouched statics cost nothing per publish.
 * Once the snapshot has reached its peak size, publishing never allocates.
 *
 * Hull and mesh geometry are immutable, refcounted blobs created on the writer's thread. The
 * creator holds one reference, every live entry using a blob holds one, and every buffer that
 * includes it holds one per entry; the blob is freed when the last goes. All reference counting
 * happens on the writer's thread: the triple buffer never hands the writer the buffer the reader
 * holds, so a buffer's references are only dropped once no reader can see them.
 *
 * Threading contract:
 *  - Writer (the physics thread, one thread at a time): create, destroy, the geometry functions,
 *    set, move, remove, publish, get_stats.
 *  - Reader (one game thread): gy_query_snapshot_acquire and every gy_snapshot_view_* function.
 *    Lock-free and wait-free with respect to the writer. A view is one complete publish; it stays
 *    valid and unchanged until the reader's next acquire (or destroy).
 *  - Destroy only after the reader has stopped using its views.
 *
 * Conventions: units are metres; rays are origin + fraction × translation, fraction in [0, 1]. A
 * ray that starts inside a solid shape (sphere, box, capsule, cylinder, hull, or below a plane)
 * does not hit that shape; mesh triangles are two-sided. Every answer carries the tick of the
 * publish it came from. */
#ifndef GYRE_QUERY_SNAPSHOT_H
#define GYRE_QUERY_SNAPSHOT_H

#include "gyre/backend.h"
#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole snapshot: writer state and the three published buffers. */
typedef struct gy_query_snapshot gy_query_snapshot;
/* One published buffer as the reader sees it. */
typedef struct gy_snapshot_view gy_snapshot_view;
/* Immutable hull or mesh geometry, shared by entries and buffers. */
typedef struct gy_snapshot_geometry gy_snapshot_geometry;

/* Slots are below this. */
#define GY_QUERY_SNAPSHOT_MAX_SLOTS (1u << 24)

/* Zero-initialised means defaults. */
typedef struct gy_query_snapshot_def {
    const gy_allocator *allocator; /* NULL: default allocator; used only on the writer's thread */
    uint32_t initial_slots;        /* slots to reserve up front; 0: 64 */
} gy_query_snapshot_def;

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
    uint32_t attachment;  /* the owning body's attachment id; ids are never 0 */
    uint32_t store_index; /* the owning body's dense store index */
} gy_snapshot_entry;

/* A sphere of radius 0.5 at the origin, category 1, dynamic, not a sensor, attachment 0. */
gy_snapshot_entry gy_default_snapshot_entry(void);

/* Reader-side filter. */
typedef struct gy_snapshot_filter {
    uint32_t mask;              /* entries with (category & mask) != 0; default all bits */
    uint32_t motion_types;      /* GY_MOTION_BIT set; default GY_MOTION_ALL */
    bool include_sensors;       /* default false */
    uint32_t ignore_attachment; /* skip this body's colliders (the caller's own); 0: none */
} gy_snapshot_filter;

gy_snapshot_filter gy_default_snapshot_filter(void);

/* One answer (a ray's or a shape cast's). Overlaps fill only attachment, store_index, slot,
 * triangle and tick. */
typedef struct gy_snapshot_hit {
    uint32_t attachment;
    uint32_t store_index;
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

/* Writer counters (cumulative unless noted). */
typedef struct gy_query_snapshot_stats {
    uint64_t publishes;
    uint32_t entries;        /* live entries now */
    uint32_t static_entries; /* of which in the static tree */
    uint32_t moving_entries; /* in the kinematic/dynamic tree */
    uint32_t planes;
    uint32_t slot_capacity;   /* slots the writer's arrays hold now */
    uint64_t static_rebuilds; /* builds of the static tree */
    uint64_t static_edits;    /* publishes that edited it in place instead (large trees) */
    uint64_t moving_rebuilds; /* builds of the moving tree */
    uint64_t tree_copies;     /* rebuilt trees copied into a buffer */
    uint64_t entries_written; /* entries copied into buffers */
    uint64_t nodes_refit; /* tree nodes whose box a refit changed (writer's trees and buffers) */
} gy_query_snapshot_stats;

/* ---- writer (physics thread) ----------------------------------------------------------------- */

/* Creates an empty snapshot; nothing is published until the first publish. Returns
 * GY_ERR_OUT_OF_MEMORY or GY_ERR_INVALID_ARGUMENT (out NULL). */
gy_result gy_query_snapshot_create(const gy_query_snapshot_def *def, gy_query_snapshot **out);

/* Frees everything, dropping the snapshot's geometry references (creators still hold theirs).
 * NULL is ignored. */
void gy_query_snapshot_destroy(gy_query_snapshot *qs);

/* Adds the entry at `slot` or replaces what is there. Rejects non-finite numbers
 * (GY_ERR_NON_FINITE), invalid shapes (GY_ERR_INVALID_SHAPE, or GY_ERR_INVALID_MESH for a missing
 * or mismatched blob), a rotation not of unit length, an unknown motion type or a slot at or above
 * GY_QUERY_SNAPSHOT_MAX_SLOTS (GY_ERR_INVALID_ARGUMENT). Grows storage (GY_ERR_OUT_OF_MEMORY) only
 * past the highest slot seen so far. Visible to the reader from the next publish. */
gy_result gy_query_snapshot_set(gy_query_snapshot *qs, uint32_t slot, const gy_snapshot_entry *e);

/* Moves a live entry to a new world pose. GY_ERR_STALE_HANDLE for an empty slot. */
gy_result gy_query_snapshot_move(gy_query_snapshot *qs, uint32_t slot, gy_pose pose);

/* Changes a live entry's category (a collider's filter changed). GY_ERR_STALE_HANDLE for an
 * empty slot. */
gy_result gy_query_snapshot_set_category(gy_query_snapshot *qs, uint32_t slot, uint32_t category);

/* Empties a slot. GY_ERR_STALE_HANDLE when it is already empty. */
gy_result gy_query_snapshot_remove(gy_query_snapshot *qs, uint32_t slot);

/* Brings the writer's buffer up to date, labels it with `tick` and hands it to the reader.
 * GY_ERR_OUT_OF_MEMORY (only while growing) leaves the previous publish in place; a later publish
 * retries with nothing lost. */
gy_result gy_query_snapshot_publish(gy_query_snapshot *qs, uint64_t tick);

void gy_query_snapshot_get_stats(const gy_query_snapshot *qs, gy_query_snapshot_stats *out);

/* Builds a mesh blob from `def` (copied; validated like gy_validate_mesh_def) with `allocator`
 * (NULL: default), with its own triangle tree. The caller receives the creator reference. */
gy_result gy_snapshot_geometry_create_mesh(const gy_allocator *allocator, const gy_mesh_def *def,
                                           gy_snapshot_geometry **out);

/* A mesh blob built in slices, so a large mesh never costs one tick more than its budget. */
typedef struct gy_snapshot_mesh_build gy_snapshot_mesh_build;

/* Starts building a mesh blob from `def`, which must be valid (gy_validate_mesh_def) and whose
 * arrays must stay readable until the build is finished or cancelled. Allocates everything the
 * build needs here; the slices allocate nothing. GY_ERR_OUT_OF_MEMORY leaves nothing behind. */
gy_result gy_snapshot_mesh_build_begin(const gy_allocator *allocator, const gy_mesh_def *def,
                                       gy_snapshot_mesh_build **out);

/* Does up to `units` units of the build (one unit: a vertex copied, a triangle boxed, or an item
 * visited by the triangle tree's build; a slice may go over by a few constant-cost steps) and
 * adds the units done to *done_units when non-NULL. True once the blob is complete. */
bool gy_snapshot_mesh_build_run(gy_snapshot_mesh_build *b, uint64_t units, uint64_t *done_units);

/* Units a whole build of `def` takes, for queue accounting (an estimate: the tree's share
 * depends on the splits). */
uint64_t gy_snapshot_mesh_build_units(const gy_mesh_def *def);

/* Ends a complete build: returns the blob (the creator reference) and frees the build. */
gy_snapshot_geometry *gy_snapshot_mesh_build_finish(gy_snapshot_mesh_build *b);

/* Drops a build at any point, freeing everything it made. NULL is ignored. */
void gy_snapshot_mesh_build_cancel(gy_snapshot_mesh_build *b);

/* Builds a hull blob: the convex hull of `def`'s points (see gy_hull_build). */
gy_result gy_snapshot_geometry_create_hull(const gy_allocator *allocator, const gy_hull_def *def,
                                           gy_snapshot_geometry **out);

/* Drops one reference (the creator's). Writer thread only. NULL is ignored. */
void gy_snapshot_geometry_release(gy_snapshot_geometry *g);

/* References currently held on a blob (creator + entries + buffers). Writer thread only. */
uint32_t gy_snapshot_geometry_refs(const gy_snapshot_geometry *g);

/* ---- reader (game thread) -------------------------------------------------------------------- */

/* The newest complete publish, or NULL before the first. Invalidates the reader's previous view. */
const gy_snapshot_view *gy_query_snapshot_acquire(gy_query_snapshot *qs);

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

#endif /* GYRE_QUERY_SNAPSHOT_H */
