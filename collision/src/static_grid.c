/* The static grid (collision/src/static_grid.h). Why a grid of its own rather than a middleware's
 * broad phase: a hash space (ODE's) rebuilds its table from every geom on every collide, and its
 * (and SAP's) collide2 tests every geom; ODE's quadtree splits on X and Y, which for Y-up levels
 * leaves only X to partition, and removing a geom from it costs time proportional to the geoms it
 * holds. Here statics are never re-indexed unless moved and never tested against each other. */
#include "static_grid.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Items covering more cells than this (on either axis) go in the `big` list instead. */
#define GRID_MAX_SPAN 32
/* Cell coordinates are clamped to this range so huge coordinates cannot overflow. */
#define GRID_COORD_LIMIT 1000000000.0
/* gy_static_grid_trim drops emptied cells once there are at least this many and they outnumber
 * the cells still listing items: each drop is paid for by the removals that emptied the cells. */
#define GRID_TRIM_MIN 64u

void gy_static_grid_init(gy_static_grid *g, double cell_size, const gy_allocator *allocator)
{
    memset(g, 0, sizeof *g);
    g->allocator = allocator;
    g->cell_size = cell_size;
    gy_hash_map_init(&g->index, allocator);
}

void gy_static_grid_fini(gy_static_grid *g)
{
    for (uint32_t i = 0; i < g->cells.count; i++)
        gy_free(g->allocator, g->cells.items[i].items,
                (size_t)g->cells.items[i].capacity * sizeof *g->cells.items[i].items);
    gy_static_grid_cells_free(g->allocator, &g->cells);
    gy_hash_map_fini(&g->index);
    gy_free(g->allocator, g->big, (size_t)g->big_capacity * sizeof *g->big);
    memset(g, 0, sizeof *g);
}

static gy_map_key cell_key(int32_t x, int32_t z)
{
    return gy_map_key_pair((uint32_t)x, (uint32_t)z);
}

static int32_t cell_coord(const gy_static_grid *g, double v)
{
    double c = floor(v / g->cell_size);
    if (c > GRID_COORD_LIMIT)
        c = GRID_COORD_LIMIT;
    if (c < -GRID_COORD_LIMIT)
        c = -GRID_COORD_LIMIT;
    return (int32_t)c;
}

static gy_static_grid_cell *find_cell(const gy_static_grid *g, int32_t x, int32_t z)
{
    const uint64_t *i = gy_hash_map_find(&g->index, cell_key(x, z));
    return i != NULL ? &g->cells.items[*i] : NULL;
}

/* Room for `extra` more cells in the array and the index. An emptied cell keeps its storage for
 * the next item placed there until gy_static_grid_trim drops it. */
static gy_result grow_cells(gy_static_grid *g, uint32_t extra)
{
    if (extra > (1u << 29) - g->cells.count)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r = gy_static_grid_cells_reserve(g->allocator, &g->cells, g->cells.count + extra);
    if (r != GY_OK)
        return r;
    return gy_hash_map_reserve(&g->index, g->cells.count + extra);
}

/* Needs room made by grow_cells. */
static gy_static_grid_cell *get_or_add_cell(gy_static_grid *g, int32_t x, int32_t z)
{
    uint64_t *i;
    bool inserted;
    gy_result r = gy_hash_map_upsert(&g->index, cell_key(x, z), &i, &inserted);
    assert(r == GY_OK);
    (void)r;
    if (inserted) {
        assert(g->cells.count < g->cells.capacity);
        *i = g->cells.count;
        g->cells.items[g->cells.count++] = (gy_static_grid_cell){.x = x, .z = z};
        g->cells_empty++;
    }
    return &g->cells.items[*i];
}

static void remove_from_cell(gy_static_grid *g, gy_static_grid_cell *c,
                             const gy_static_grid_item *item)
{
    for (uint32_t i = 0; i < c->count; i++)
        if (c->items[i] == item) {
            c->items[i] = c->items[--c->count];
            if (c->count == 0)
                g->cells_empty++;
            return;
        }
}

/* The cells an indexed AABB covers, inclusive; false when it goes in the `big` list instead.
 * Insert and removal both derive them from the item's box, so the record need not keep them. */
static bool cell_span(const gy_static_grid *g, const gy_aabb *b, int32_t *x0, int32_t *x1,
                      int32_t *z0, int32_t *z1)
{
    if (!isfinite(b->min.x) || !isfinite(b->max.x) || !isfinite(b->min.y) || !isfinite(b->max.y) ||
        !isfinite(b->min.z) || !isfinite(b->max.z))
        return false;
    *x0 = cell_coord(g, b->min.x);
    *x1 = cell_coord(g, b->max.x);
    *z0 = cell_coord(g, b->min.z);
    *z1 = cell_coord(g, b->max.z);
    return (int64_t)*x1 - *x0 < GRID_MAX_SPAN && (int64_t)*z1 - *z0 < GRID_MAX_SPAN;
}

gy_result gy_static_grid_insert(gy_static_grid *g, gy_static_grid_item *item, const gy_aabb *box)
{
    int32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
    if (!cell_span(g, box, &x0, &x1, &z0, &z1)) {
        gy_result r = gy_array_reserve(g->allocator, (void **)&g->big, &g->big_capacity,
                                       g->big_count + 1u, sizeof *g->big);
        if (r != GY_OK)
            return r;
        item->box = *box;
        item->visit_stamp = 0;
        g->big[g->big_count++] = item;
        return GY_OK;
    }
    uint32_t missing = 0;
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++)
            if (find_cell(g, x, z) == NULL)
                missing++;
    gy_result r = grow_cells(g, missing);
    if (r != GY_OK)
        return r;
    /* Reserve every cell's storage first, so a failure leaves nothing half-indexed. */
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_static_grid_cell *cell = get_or_add_cell(g, x, z);
            r = gy_array_reserve(g->allocator, (void **)&cell->items, &cell->capacity,
                                 cell->count + 1u, sizeof *cell->items);
            if (r != GY_OK)
                return r;
        }
    item->box = *box;
    item->visit_stamp = 0;
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_static_grid_cell *cell = find_cell(g, x, z);
            if (cell->count == 0)
                g->cells_empty--;
            cell->items[cell->count++] = item;
        }
    return GY_OK;
}

void gy_static_grid_remove(gy_static_grid *g, gy_static_grid_item *item)
{
    int32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
    if (!cell_span(g, &item->box, &x0, &x1, &z0, &z1)) {
        for (uint32_t i = 0; i < g->big_count; i++)
            if (g->big[i] == item) {
                g->big[i] = g->big[--g->big_count];
                break;
            }
        return;
    }
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_static_grid_cell *cell = find_cell(g, x, z);
            if (cell != NULL)
                remove_from_cell(g, cell, item);
        }
}

void gy_static_grid_trim(gy_static_grid *g)
{
    if (g->cells_empty < GRID_TRIM_MIN || g->cells_empty * 2u < g->cells.count)
        return;
    /* The kept cells close up in their order, so the walk order of the rest does not change. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < g->cells.count; i++) {
        gy_static_grid_cell *c = &g->cells.items[i];
        if (c->count == 0) {
            gy_free(g->allocator, c->items, (size_t)c->capacity * sizeof *c->items);
            gy_hash_map_remove(&g->index, cell_key(c->x, c->z), NULL);
            g->cells_empty--;
            continue;
        }
        if (kept != i) {
            *gy_hash_map_find(&g->index, cell_key(c->x, c->z)) = kept;
            g->cells.items[kept] = *c;
        }
        kept++;
    }
    g->cells.count = kept;
    assert(g->cells_empty == 0);
}

static bool aabb_overlap(const gy_aabb *a, const gy_aabb *b)
{
    return a->min.x <= b->max.x && a->max.x >= b->min.x && a->min.y <= b->max.y &&
           a->max.y >= b->min.y && a->min.z <= b->max.z && a->max.z >= b->min.z;
}

/* Returns false when the visitor asked to stop. */
static bool visit_cell(uint32_t stamp, gy_static_grid_cell *cell, const gy_aabb *box,
                       gy_static_grid_visitor visit, void *ctx)
{
    for (uint32_t i = 0; i < cell->count; i++) {
        gy_static_grid_item *it = cell->items[i];
        if (it->visit_stamp == stamp)
            continue;
        it->visit_stamp = stamp;
        if (aabb_overlap(&it->box, box) && !visit(ctx, it))
            return false;
    }
    return true;
}

/* The stamp wrapped: clear every indexed item's stamp so none is skipped by accident (items
 * outside the grid get theirs cleared when inserted). */
static void clear_stamps(gy_static_grid *g)
{
    for (uint32_t i = 0; i < g->big_count; i++)
        g->big[i]->visit_stamp = 0;
    for (uint32_t i = 0; i < g->cells.count; i++)
        for (uint32_t k = 0; k < g->cells.items[i].count; k++)
            g->cells.items[i].items[k]->visit_stamp = 0;
}

void gy_static_grid_visit(gy_static_grid *g, const gy_aabb *box, gy_static_grid_visitor visit,
                          void *ctx)
{
    if (++g->visit_stamp == 0) {
        clear_stamps(g);
        g->visit_stamp = 1;
    }
    for (uint32_t i = 0; i < g->big_count; i++) {
        gy_static_grid_item *it = g->big[i];
        if (aabb_overlap(&it->box, box) && !visit(ctx, it))
            return;
    }
    if (g->cells.count == 0)
        return;
    double lo_x = isfinite(box->min.x) ? box->min.x : -GRID_COORD_LIMIT * g->cell_size;
    double hi_x = isfinite(box->max.x) ? box->max.x : GRID_COORD_LIMIT * g->cell_size;
    double lo_z = isfinite(box->min.z) ? box->min.z : -GRID_COORD_LIMIT * g->cell_size;
    double hi_z = isfinite(box->max.z) ? box->max.z : GRID_COORD_LIMIT * g->cell_size;
    int32_t x0 = cell_coord(g, lo_x), x1 = cell_coord(g, hi_x);
    int32_t z0 = cell_coord(g, lo_z), z1 = cell_coord(g, hi_z);
    uint64_t span = (uint64_t)((int64_t)x1 - x0 + 1) * (uint64_t)((int64_t)z1 - z0 + 1);
    uint32_t stamp = g->visit_stamp;
    if (span > g->cells.count) {
        /* A region wider than the populated grid: walking the cells is cheaper. */
        for (uint32_t i = 0; i < g->cells.count; i++) {
            gy_static_grid_cell *cell = &g->cells.items[i];
            if (cell->count == 0 || cell->x < x0 || cell->x > x1 || cell->z < z0 || cell->z > z1)
                continue;
            if (!visit_cell(stamp, cell, box, visit, ctx))
                return;
        }
        return;
    }
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_static_grid_cell *cell = find_cell(g, x, z);
            if (cell != NULL && cell->count > 0 && !visit_cell(stamp, cell, box, visit, ctx))
                return;
        }
}
