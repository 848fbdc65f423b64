/* A binary bounding-volume hierarchy over caller-numbered items (private to physics/).
 *
 * Built top-down with binned SAH (16 bins on each axis); one item per leaf, so a tree of n items
 * has 2n - 1 nodes. Nodes are stored parents-before-children and each node's two children are
 * adjacent, which lets a full refit run as one reverse sweep and keeps both children of a node in
 * the same cache line. Bounds are floats rounded outward, so a node never shrinks below the exact
 * double-precision box of what it holds.
 *
 * A tree built with leaf tracking knows each item's leaf, so a moved item is refit by walking its
 * leaf-to-root path, stopping where a parent's box no longer changes.
 *
 * A tracked tree with an editor (gy_bvh_editor) can also be edited in place: items inserted one by
 * one (descending to the cheapest sibling by surface area, as Box2D's dynamic tree does) and
 * removed, with AVL rotations on the way back up keeping the height within 1.44 log2(n). Edited
 * trees lose the parents-before-children order (`ordered` is false) and may hold free node pairs;
 * every node write is logged per mirror, so up to GY_BVH_MIRRORS copies of the tree (the query
 * snapshot's static tree copies) catch up by copying only the nodes that changed (gy_bvh_mirror).
 *
 * Memory: every array grows only when a larger tree is built or copied; once a tree (and its
 * builder) has seen its peak size, build, copy and refit never allocate.
 *
 * Threading: none. A tree is written by one thread; once published (see query_snapshot.c) it may
 * be read by another thread while nobody writes it. */
#ifndef GYRE_PHYSICS_BVH_H
#define GYRE_PHYSICS_BVH_H

#include "gyre/core.h"

#define GY_BVH_NONE     UINT32_MAX
#define GY_BVH_LEAF_BIT 0x80000000u
/* Item numbers must be below this (the top bit marks leaves). */
#define GY_BVH_MAX_ITEMS 0x7fffffffu
/* Trees are never deeper than this (SAH gives way to balanced splits below depth 32), so a fixed
 * traversal stack of this size always suffices. */
#define GY_BVH_MAX_DEPTH 64
/* `parent` of the nodes of a free pair in an edited tree (the pair's first node links to the next
 * free pair). */
#define GY_BVH_FREE 0xfffffffeu
/* Copies of an edited tree whose changes an editor logs. */
#define GY_BVH_MIRRORS 3u

/* An axis-aligned box in single precision, rounded outward from the double box it stands for. */
typedef struct gy_bvh_box {
    float min[3];
    float max[3];
} gy_bvh_box;

typedef struct gy_bvh_node {
    gy_bvh_box box;
    /* Internal node: index of the first child (the second is next to it).
     * Leaf: GY_BVH_LEAF_BIT | item. */
    uint32_t link;
    uint32_t parent; /* GY_BVH_NONE for the root */
} gy_bvh_node;

typedef struct gy_bvh {
    gy_bvh_node *nodes; /* root at index 0 when node_count > 0 */
    uint32_t node_count;
    uint32_t node_capacity;
    /* item -> leaf node, maintained only when track_leaves; entries of items not in the tree are
     * meaningless. */
    uint32_t *leaf_of;
    uint32_t leaf_of_capacity;
    bool track_leaves;
    uint32_t depth; /* depth of the deepest leaf (root = 0) */
    /* Parents come before children and there are no free nodes: true after a build (and in copies
     * of a built tree), false once the tree was edited in place. */
    bool ordered;
    /* Non-NULL: the tree may be edited in place and logs every node it writes (see above). Set
     * by the owner after gy_bvh_init; never copied. */
    struct gy_bvh_editor *editor;
} gy_bvh;

/* Writer-side state of a tree edited in place: node heights, the free pairs and, per mirror, the
 * nodes that mirror has not seen yet. Per-node arrays grow with the tree's node array and are
 * never shrunk, so editing allocates nothing once the tree has reached its peak size. The logs
 * (dirty bits and lists, 13 of the 14 bytes a node) exist only while logging is on, so a tree with
 * no mirrors need not carry them. */
typedef struct gy_bvh_editor {
    uint8_t *height; /* per node: 0 for leaves, 1 + the taller child's otherwise */
    uint8_t *dirty;  /* per node: bit m set while mirror m lacks the node's current value */
    uint32_t *lists[GY_BVH_MIRRORS]; /* the nodes whose bit m is set, each once */
    uint32_t counts[GY_BVH_MIRRORS];
    uint32_t capacity;  /* entries in each per-node array */
    uint32_t free_head; /* first node of a free pair, or GY_BVH_NONE */
    bool logging;       /* dirty and lists exist and node writes are logged (the default) */
    uint64_t inserts, removes, rotations;
} gy_bvh_editor;

/* Reusable scratch for builds; one builder may serve any number of trees on its thread. */
typedef struct gy_bvh_builder {
    uint32_t *items; /* items in work order */
    uint32_t items_capacity;
    gy_bvh_box *boxes; /* their boxes, in the same order */
    uint32_t boxes_capacity;
} gy_bvh_builder;

/* Conservative float box of a double box. */
gy_bvh_box gy_bvh_box_from(gy_vec3 min, gy_vec3 max);

/* Union of two boxes (inline: refits are made of little else). */
static inline gy_bvh_box gy_bvh_box_union(gy_bvh_box a, gy_bvh_box b)
{
    /* Spelled out rather than looped so the compiler keeps the box in registers (a loop made it
     * go through the stack with narrow stores and a wide reload, stalling every union). */
    gy_bvh_box r = {
        {a.min[0] < b.min[0] ? a.min[0] : b.min[0], a.min[1] < b.min[1] ? a.min[1] : b.min[1],
         a.min[2] < b.min[2] ? a.min[2] : b.min[2]},
        {a.max[0] > b.max[0] ? a.max[0] : b.max[0], a.max[1] > b.max[1] ? a.max[1] : b.max[1],
         a.max[2] > b.max[2] ? a.max[2] : b.max[2]}};
    return r;
}

static inline bool gy_bvh_box_overlaps(const gy_bvh_box *a, const gy_bvh_box *b)
{
    return a->min[0] <= b->max[0] && b->min[0] <= a->max[0] && a->min[1] <= b->max[1] &&
           b->min[1] <= a->max[1] && a->min[2] <= b->max[2] && b->min[2] <= a->max[2];
}

static inline bool gy_bvh_box_equal(const gy_bvh_box *a, const gy_bvh_box *b)
{
    return a->min[0] == b->min[0] && a->min[1] == b->min[1] && a->min[2] == b->min[2] &&
           a->max[0] == b->max[0] && a->max[1] == b->max[1] && a->max[2] == b->max[2];
}
/* Entry parameter of the ray origin + t·dir into `box` within [0, t_max] (touching counts), or a
 * negative number when the ray misses it in that range. inv_dir = gy_bvh_ray_inverse(dir). */
double gy_bvh_box_ray(const gy_bvh_box *box, gy_vec3 origin, gy_vec3 inv_dir, double t_max);
/* 1/dir per axis (±inf for a zero component, which gy_bvh_box_ray handles). */
gy_vec3 gy_bvh_ray_inverse(gy_vec3 dir);

/* An empty tree; `track_leaves` enables gy_bvh_refit_item. */
void gy_bvh_init(gy_bvh *bvh, bool track_leaves);
void gy_bvh_fini(gy_bvh *bvh, const gy_allocator *a);
void gy_bvh_builder_fini(gy_bvh_builder *b, const gy_allocator *a);

/* Rebuilds `bvh` over `items[0..count)` (distinct, each < GY_BVH_MAX_ITEMS, and < item_limit when
 * leaves are tracked), whose boxes are `boxes[item]`. The items array is not modified. With an
 * editor, its heights are recomputed, its free pairs dropped and its logs forgotten (mirrors must
 * take a whole copy). Returns GY_OK or GY_ERR_OUT_OF_MEMORY (the tree is then empty). */
gy_result gy_bvh_build(gy_bvh *bvh, gy_bvh_builder *builder, const gy_allocator *a,
                       const uint32_t *items, uint32_t count, const gy_bvh_box *boxes,
                       uint32_t item_limit);

/* Bins of the surface-area split search. */
#define GY_BVH_BINS 16

/* A build cut into slices: gy_bvh_build_begin takes the items and their boxes, each
 * gy_bvh_build_run does at most about `units` item visits of work and may be called again until it
 * reports the tree done. The tree is the one gy_bvh_build makes, split for split. The tree, the
 * builder and the state must stay put between slices; nothing allocates after begin. */
typedef struct gy_bvh_build_state {
    uint32_t stack[GY_BVH_MAX_DEPTH + 1][4]; /* pending tasks: node, begin, end, depth */
    uint32_t top, count, item_limit;
    /* The task being split: its range, the pass over it (0 none, 1 bounds, 2 bins, 3
     * partition) and how far that pass got. */
    uint32_t node, begin, end, depth, pass, cursor, lo, hi;
    double cmin[3], cmax[3], scale;
    gy_bvh_box all;
    struct {
        gy_bvh_box box;
        uint32_t count;
    } bins[GY_BVH_BINS];
    int axis, split_bin;
} gy_bvh_build_state;

/* Starts a build over the same arguments as gy_bvh_build; reserves everything the build needs.
 * With `items` NULL the items and boxes are not copied: the caller writes item i and its box at
 * builder->items[i] and builder->boxes[i] for every i < count before the first run (so that
 * copy, too, can be spread over slices). Returns GY_OK or GY_ERR_OUT_OF_MEMORY (the tree is then
 * empty). */
gy_result gy_bvh_build_begin(gy_bvh *bvh, gy_bvh_builder *builder, const gy_allocator *a,
                             const uint32_t *items, uint32_t count, const gy_bvh_box *boxes,
                             uint32_t item_limit, gy_bvh_build_state *state);

/* Does up to `units` item visits of the build (a pass over a range visits each of its items once;
 * a slice may exceed `units` by a few constant-cost steps, never by a pass). Adds the visits made
 * to *done_units when non-NULL. Returns true once the tree is complete. */
bool gy_bvh_build_run(gy_bvh *bvh, gy_bvh_builder *builder, gy_bvh_build_state *state,
                      uint64_t units, uint64_t *done_units);

/* Grows the node array to exactly `nodes` when it holds fewer, so that a build or copy of up to
 * that many nodes then allocates nothing (builds otherwise double the array, which for a large
 * tree built once can leave nearly half of it unused). Returns GY_OK or GY_ERR_OUT_OF_MEMORY
 * (unchanged). Not for a tree another thread may be reading (the array moves). */
gy_result gy_bvh_reserve_nodes(gy_bvh *bvh, const gy_allocator *a, uint32_t nodes);

/* Makes `dst` an exact copy of `src` (topology, bounds and leaf map). `dst` must track leaves if
 * `src` does. Returns GY_OK or GY_ERR_OUT_OF_MEMORY (dst is then empty). */
gy_result gy_bvh_copy(gy_bvh *dst, const gy_bvh *src, const gy_allocator *a, uint32_t item_limit);

/* Copies the boxes of `src` into `dst`, a tree of the same topology (a copy of it, not edited
 * since): what a refit of `dst` over the same boxes would give, as one memcpy. */
void gy_bvh_copy_bounds(gy_bvh *dst, const gy_bvh *src);

/* Sets a tracked item's leaf box and updates its ancestors, stopping at the first ancestor whose
 * box does not change. Returns the number of nodes whose box changed. */
uint32_t gy_bvh_refit_item(gy_bvh *bvh, uint32_t item, gy_bvh_box box);

/* Recomputes every box from `boxes[item]`, leaves up, in one sweep (an edited tree: one walk in
 * post-order). Returns the node count. Cheaper than item refits once moved items × (depth + 1)
 * exceeds the node count. Both refits log the nodes they change in the tree's editor, if any. */
uint32_t gy_bvh_refit_all(gy_bvh *bvh, const gy_bvh_box *boxes);
/* As gy_bvh_refit_all with item i's box at boxes[index[i]] (boxes kept by some other order than
 * item number, such as the query snapshot's movers by place in their group). */
uint32_t gy_bvh_refit_all_indexed(gy_bvh *bvh, const gy_bvh_box *boxes, const uint32_t *index);

/* Called for each leaf whose box the ray enters before the current limit; returns the new limit
 * (≤ the one given: the parameter of the best hit so far, to prune farther nodes) or a negative
 * number to stop the traversal. */
typedef double (*gy_bvh_ray_fn)(void *ctx, uint32_t item, double t_max);

/* Walks the leaves the ray origin + t·dir, t in [0, t_max], passes through, nearer child first,
 * skipping nodes that start beyond the current limit. */
void gy_bvh_raycast(const gy_bvh *bvh, gy_vec3 origin, gy_vec3 dir, double t_max, gy_bvh_ray_fn fn,
                    void *ctx);

/* As gy_bvh_raycast for the box `center` ± `half` moved by t·dir: walks the leaves whose boxes it
 * touches for some t in [0, t_max], nearer first (a shape cast's broad phase). */
void gy_bvh_sweep(const gy_bvh *bvh, gy_vec3 center, gy_vec3 half, gy_vec3 dir, double t_max,
                  gy_bvh_ray_fn fn, void *ctx);

/* Called for each leaf whose box overlaps the query box; returns false to stop. */
typedef bool (*gy_bvh_overlap_fn)(void *ctx, uint32_t item);

/* Visits every leaf overlapping `box`. Returns false when the callback stopped it. */
bool gy_bvh_overlap(const gy_bvh *bvh, const gy_bvh_box *box, gy_bvh_overlap_fn fn, void *ctx);

/* ---- editing in place (trees with an editor) ----------------------------------------------- */

void gy_bvh_editor_init(gy_bvh_editor *e);
void gy_bvh_editor_fini(gy_bvh_editor *e, const gy_allocator *a);

/* Turns the logs on (allocating them for the current capacity, with nothing logged: every mirror
 * must then take a whole copy before it can catch up by gy_bvh_mirror) or off (freeing them and
 * forgetting what they held). Returns GY_OK, GY_ERR_INVALID_ARGUMENT for a NULL editor or
 * allocator, or GY_ERR_OUT_OF_MEMORY when turning on (unchanged). */
gy_result gy_bvh_editor_set_logging(gy_bvh_editor *e, const gy_allocator *a, bool on);

/* Inserts `item` (< item_limit, not in the tree) with `box` into a tracked tree with an editor.
 * Returns GY_OK or GY_ERR_OUT_OF_MEMORY (the tree is unchanged). */
gy_result gy_bvh_insert(gy_bvh *bvh, const gy_allocator *a, uint32_t item, gy_bvh_box box,
                        uint32_t item_limit);

/* Removes `item` (in the tree) from a tracked tree with an editor. Never allocates. */
void gy_bvh_remove(gy_bvh *bvh, uint32_t item);

/* Brings `dst` up to date with the edited tree `src` (dst a copy of src, or a mirror brought up
 * to date before, with the same leaf tracking): copies the nodes mirror `m` has not seen and
 * fixes dst's leaf map for them. Returns GY_OK or GY_ERR_OUT_OF_MEMORY (dst is then unchanged and
 * the log kept, so a later call can finish the job). */
gy_result gy_bvh_mirror(gy_bvh *dst, const gy_bvh *src, unsigned m, const gy_allocator *a,
                        uint32_t item_limit);

/* Forgets what mirror `m` had not seen (after it took a whole copy with gy_bvh_copy). */
void gy_bvh_editor_forget(gy_bvh_editor *e, unsigned m);

/* Structural check for tests: parent links, every child inside its parent, each leaf box equal to
 * boxes[item] (when boxes is non-NULL), leaf map, and exactly `count` leaves; for an edited tree
 * also the heights, the AVL balance and the depth. */
bool gy_bvh_is_valid(const gy_bvh *bvh, const gy_bvh_box *boxes, uint32_t count);

#endif
