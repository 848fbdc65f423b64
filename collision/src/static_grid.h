/* A uniform grid over the X/Z plane indexing items that never move on their own (a level's static
 * colliders). Gyre is Y-up, so levels spread on X and Z: the cells in use live in one array, found
 * by their (x, z) coordinates through a hash map. Items covering too many cells, and unbounded ones
 * (planes), go in a `big` list that every visit walks.
 *
 * Items are caller-owned records (gy_static_grid_item, usually embedded in the caller's own
 * record): the grid keeps pointers to them, and each record holds the AABB it was indexed with (the
 * cells it covers follow from it) and the stamp that visits use to report an item once.
 *
 * Visit order is deterministic: the big list first, then the cells in the order they were first
 * used (or cell by cell along X then Z for a region smaller than the populated grid), each cell's
 * items in the order left by insertions and swap-removals.
 *
 * Private to the modules built on collision/ (the middleware front end), never installed.
 *
 * Threading: none; one thread writes and visits a grid. */
#ifndef GYRE_COLLISION_STATIC_GRID_H
#define GYRE_COLLISION_STATIC_GRID_H

#include "gyre/array.h"
#include "gyre/core.h"
#include "gyre/hash_map.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_aabb {
    gy_vec3 min, max;
} gy_aabb;

/* The grid's per-item record; the grid reads and writes it, the caller only allocates it and
 * keeps it in place while the item is indexed. */
typedef struct gy_static_grid_item {
    gy_aabb box;          /* world AABB as indexed */
    uint32_t visit_stamp; /* de-duplicates items that span several cells */
} gy_static_grid_item;

/* One cell: the items whose AABB touches an X/Z square. */
typedef struct gy_static_grid_cell {
    int32_t x, z;
    uint32_t count, capacity;
    gy_static_grid_item **items;
} gy_static_grid_cell;

GY_ARRAY_DEFINE(gy_static_grid_cells, gy_static_grid_cell)

typedef struct gy_static_grid {
    const gy_allocator *allocator;
    double cell_size;
    gy_static_grid_cells cells; /* in the order first used; empty cells included until trimmed */
    gy_hash_map index;          /* (x, z) -> index in cells */
    uint32_t cells_empty; /* cells in use that list no item (dropped by gy_static_grid_trim) */
    uint32_t visit_stamp;
    gy_static_grid_item **big;
    uint32_t big_count, big_capacity;
} gy_static_grid;

void gy_static_grid_init(gy_static_grid *g, double cell_size, const gy_allocator *allocator);
void gy_static_grid_fini(gy_static_grid *g);

/* Indexes `item` with `box` (recorded in the item). On failure (GY_ERR_OUT_OF_MEMORY) nothing is
 * indexed and the item is untouched. */
gy_result gy_static_grid_insert(gy_static_grid *g, gy_static_grid_item *item, const gy_aabb *box);
/* Unindexes an item. Emptied cells keep their storage until gy_static_grid_trim, so inserting the
 * item again where it was never allocates; nor does undoing several moves (a remove, then an
 * insert elsewhere) in the reverse of their order, each undo finding the grid as its move left
 * it. */
void gy_static_grid_remove(gy_static_grid *g, gy_static_grid_item *item);
/* Drops the emptied cells once they outnumber the others (streaming would otherwise leave a cell
 * behind everywhere it ever loaded geometry). Never allocates, never fails. */
void gy_static_grid_trim(gy_static_grid *g);

/* Calls `visit` once for every indexed item whose AABB overlaps `box` (bounds included; non-finite
 * query bounds reach the grid's clamped edge), until `visit` returns false. Never allocates. */
typedef bool (*gy_static_grid_visitor)(void *ctx, gy_static_grid_item *item);
void gy_static_grid_visit(gy_static_grid *g, const gy_aabb *box, gy_static_grid_visitor visit,
                          void *ctx);

#ifdef __cplusplus
}
#endif

#endif
