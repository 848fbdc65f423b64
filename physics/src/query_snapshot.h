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
 * resident (a rebuild of 100,000 statics takes about 70 ms here).
 *
 * Statics are stored once: their entries live in pages of 32 slots that the writer and the three
 * buffers share, copied by the writer before it changes one a buffer holds, and the buffers share
 * one static tree while statics stay put (when they change, a copy of the tree no buffer holds is
 * brought up to date from a log of the nodes written and edited instead). Each buffer keeps its
 * own moving tree and kinematic, dynamic and plane entries and is brought up to date, when it is
 * next written, with exactly the entries that changed since it was last written, so publishing
 * costs what moved, not what exists: 100,000 untouched statics cost nothing per publish. Once the
 * snapshot has reached its peak size, publishing never allocates (spare pages, tree copies, the
 * static tree's edit logs and its build scratch are kept while statics change, and returned once
 * they have stayed put for 64 publishes, or two for a static tree small enough to be rebuilt at
 * every change).
 *
 * Hull and mesh geometry (and each plane's normal and offset, kept apart from its entry) are
 * immutable, refcounted blobs created on the writer's thread. The
 * creator holds one reference, every live entry using a blob holds one, and every buffer that
 * includes it holds one per entry; the blob is freed when the last goes. All reference counting
 * (of blobs, shared pages and static tree copies) happens on the writer's thread: the triple
 * buffer never hands the writer the buffer the reader holds, so a buffer's references are only
 * dropped once no reader can see them, and a shared page or tree copy is written or freed only
 * when no buffer holds it.
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

#include "gyre/core.h"
#include "gyre/geometry.h"
#include "gyre/physics/query.h"
#include "gyre/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole snapshot: writer state and the three published buffers. */
typedef struct gy_query_snapshot gy_query_snapshot;
/* Slots are below this. */
#define GY_QUERY_SNAPSHOT_MAX_SLOTS (1u << 24)

/* Zero-initialised means defaults. */
typedef struct gy_query_snapshot_def {
    const gy_allocator *allocator; /* NULL: default allocator; used only on the writer's thread */
    uint32_t initial_slots;        /* slots to reserve up front; 0: 64 */
} gy_query_snapshot_def;

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
    uint64_t slots_walked;    /* changed slots the writer looked at to bring a buffer up to date */
    uint64_t nodes_refit;  /* tree nodes whose box a refit changed (writer's trees and buffers) */
    uint32_t static_pages; /* static entry pages the writer holds now (shared with buffers) */
    uint64_t static_page_copies;   /* static pages copied because a buffer held them when changed */
    uint64_t static_tree_switches; /* static tree copies brought up to date to be edited, because
                                      a buffer held the one edited before */
} gy_query_snapshot_stats;

/* Reader: the newest complete publish, or NULL before the first. Invalidates the reader's previous
 * view. */
const gy_snapshot_view *gy_query_snapshot_acquire(gy_query_snapshot *qs);

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
 * GY_QUERY_SNAPSHOT_MAX_SLOTS (GY_ERR_INVALID_ARGUMENT). Grows storage (GY_ERR_OUT_OF_MEMORY) past
 * the highest slot seen so far, past the most entries its group (static, moving, plane) has held,
 * for the first entry of its kind in a page of slots, to copy a static's page a buffer holds, or
 * for a plane's record (not when the slot already holds a plane with the same normal and offset).
 * Visible to the reader from the next publish. */
gy_result gy_query_snapshot_set(gy_query_snapshot *qs, uint32_t slot, const gy_snapshot_entry *e);

/* Moves a live entry to a new world pose. GY_ERR_STALE_HANDLE for an empty slot;
 * GY_ERR_OUT_OF_MEMORY (nothing changed) when a static's page must be copied and cannot be. */
gy_result gy_query_snapshot_move(gy_query_snapshot *qs, uint32_t slot, gy_pose pose);

/* Changes a live entry's category (a collider's filter changed). GY_ERR_STALE_HANDLE for an
 * empty slot; GY_ERR_OUT_OF_MEMORY as for move. */
gy_result gy_query_snapshot_set_category(gy_query_snapshot *qs, uint32_t slot, uint32_t category);

/* Empties a slot. GY_ERR_STALE_HANDLE when it is already empty. Never needs memory. */
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
/* Builds a hull blob from a hull already built with `allocator` (gy_validate_hull checks it, in
 * time linear in its size), taking it rather than copying it: once it is found valid *hull is
 * zeroed and its arrays are the blob's (freed, on GY_ERR_OUT_OF_MEMORY). A hull refused as invalid
 * (GY_ERR_INVALID_ARGUMENT for a NULL hull or out, GY_ERR_INVALID_MESH) stays the caller's. */
gy_result gy_snapshot_geometry_create_hull_built(const gy_allocator *allocator, gy_hull *hull,
                                                 gy_snapshot_geometry **out);

/* Drops one reference (the creator's). Writer thread only. NULL is ignored. */
void gy_snapshot_geometry_release(gy_snapshot_geometry *g);

/* References currently held on a blob (creator + entries + buffers). Writer thread only. */
uint32_t gy_snapshot_geometry_refs(const gy_snapshot_geometry *g);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_QUERY_SNAPSHOT_H */
