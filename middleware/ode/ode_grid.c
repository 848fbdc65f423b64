/* The static grid: static colliders indexed on a uniform X/Z grid of cells, found by their
 * coordinates through a hash map. The step collides moving colliders against statics through it
 * (statics are never tested against each other and never re-indexed unless moved), and queries
 * can use it through gy_ode_static_visit; statics are in no ODE space. Why not ODE's spaces: a hash
 * space rebuilds its table from every geom on every collide, and its (and SAP's) collide2 tests
 * every geom; ODE's quadtree splits on X and Y, which for Y-up levels leaves only X to partition,
 * and removing a geom from it costs time proportional to the geoms it holds. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ode_internal.h"

/* Colliders covering more cells than this (on either axis) go in the `big` list instead. */
#define GRID_MAX_SPAN 32
/* Cell coordinates are clamped to this range so huge coordinates cannot overflow. */
#define GRID_COORD_LIMIT 1000000000.0
/* gy_ode_grid_trim drops emptied cells once there are at least this many and they outnumber the
 * cells still listing statics: each drop is paid for by the removals that emptied the cells. */
#define GRID_TRIM_MIN 64u

void gy_ode_grid_init(gy_ode_static_grid *g, double cell_size, const gy_allocator *allocator)
{
    memset(g, 0, sizeof *g);
    g->cell_size = cell_size;
    gy_hash_map_init(&g->index, allocator);
}

void gy_ode_grid_fini(gy_driver_world *w)
{
    gy_ode_static_grid *g = &w->grid;
    for (uint32_t i = 0; i < g->cells.count; i++)
        gy_free(w->allocator, g->cells.items[i].items,
                (size_t)g->cells.items[i].capacity * sizeof *g->cells.items[i].items);
    gy_ode_grid_cells_free(w->allocator, &g->cells);
    gy_hash_map_fini(&g->index);
    gy_free(w->allocator, g->big, (size_t)g->big_capacity * sizeof *g->big);
    memset(g, 0, sizeof *g);
}

static gy_map_key cell_key(int32_t x, int32_t z)
{
    return gy_map_key_pair((uint32_t)x, (uint32_t)z);
}

static int32_t cell_coord(const gy_ode_static_grid *g, double v)
{
    double c = floor(v / g->cell_size);
    if (c > GRID_COORD_LIMIT)
        c = GRID_COORD_LIMIT;
    if (c < -GRID_COORD_LIMIT)
        c = -GRID_COORD_LIMIT;
    return (int32_t)c;
}

static gy_ode_grid_cell *find_cell(const gy_ode_static_grid *g, int32_t x, int32_t z)
{
    const uint64_t *i = gy_hash_map_find(&g->index, cell_key(x, z));
    return i != NULL ? &g->cells.items[*i] : NULL;
}

/* Room for `extra` more cells in the array and the index. An emptied cell keeps its storage for
 * the next static placed there until gy_ode_grid_trim drops it. */
static gy_result grow_cells(gy_driver_world *w, uint32_t extra)
{
    gy_ode_static_grid *g = &w->grid;
    if (extra > (1u << 29) - g->cells.count)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r = gy_ode_grid_cells_reserve(w->allocator, &g->cells, g->cells.count + extra);
    if (r != GY_OK)
        return r;
    return gy_hash_map_reserve(&g->index, g->cells.count + extra);
}

/* Needs room made by grow_cells. */
static gy_ode_grid_cell *get_or_add_cell(gy_ode_static_grid *g, int32_t x, int32_t z)
{
    uint64_t *i;
    bool inserted;
    gy_result r = gy_hash_map_upsert(&g->index, cell_key(x, z), &i, &inserted);
    assert(r == GY_OK);
    (void)r;
    if (inserted) {
        assert(g->cells.count < g->cells.capacity);
        *i = g->cells.count;
        g->cells.items[g->cells.count++] = (gy_ode_grid_cell){.x = x, .z = z};
        g->cells_empty++;
    }
    return &g->cells.items[*i];
}

static void remove_from_cell(gy_ode_static_grid *g, gy_ode_grid_cell *c, const gy_ode_collider *col)
{
    for (uint32_t i = 0; i < c->count; i++)
        if (c->items[i] == col) {
            c->items[i] = c->items[--c->count];
            if (c->count == 0)
                g->cells_empty++;
            return;
        }
}

/* The cells an indexed AABB covers, inclusive; false when it goes in the `big` list instead.
 * Insert and removal both derive them from the collider's `aabb`, so the record need not keep
 * them. */
static bool cell_span(const gy_ode_static_grid *g, const double aabb[6], int32_t *x0, int32_t *x1,
                      int32_t *z0, int32_t *z1)
{
    for (int i = 0; i < 6; i++)
        if (!isfinite(aabb[i]))
            return false;
    *x0 = cell_coord(g, aabb[0]);
    *x1 = cell_coord(g, aabb[1]);
    *z0 = cell_coord(g, aabb[4]);
    *z1 = cell_coord(g, aabb[5]);
    return (int64_t)*x1 - *x0 < GRID_MAX_SPAN && (int64_t)*z1 - *z0 < GRID_MAX_SPAN;
}

gy_result gy_ode_grid_insert(gy_driver_world *w, gy_ode_collider *c)
{
    gy_ode_static_grid *g = &w->grid;
    dReal aabb[6];
    dGeomGetAABB(gy_ode_collider_geom(w, c), aabb);
    for (int i = 0; i < 6; i++)
        c->aabb[i] = aabb[i];
    int32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
    if (!cell_span(g, c->aabb, &x0, &x1, &z0, &z1)) {
        gy_result r = gy_array_reserve(w->allocator, (void **)&g->big, &g->big_capacity,
                                       g->big_count + 1u, sizeof *g->big);
        if (r != GY_OK)
            return r;
        g->big[g->big_count++] = c;
        return GY_OK;
    }
    uint32_t missing = 0;
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++)
            if (find_cell(g, x, z) == NULL)
                missing++;
    gy_result r = grow_cells(w, missing);
    if (r != GY_OK)
        return r;
    /* Reserve every cell's storage first, so a failure leaves nothing half-indexed. */
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_ode_grid_cell *cell = get_or_add_cell(g, x, z);
            r = gy_array_reserve(w->allocator, (void **)&cell->items, &cell->capacity,
                                 cell->count + 1u, sizeof *cell->items);
            if (r != GY_OK)
                return r;
        }
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_ode_grid_cell *cell = find_cell(g, x, z);
            if (cell->count == 0)
                g->cells_empty--;
            cell->items[cell->count++] = c;
        }
    return GY_OK;
}

void gy_ode_grid_remove(gy_driver_world *w, gy_ode_collider *c)
{
    gy_ode_static_grid *g = &w->grid;
    int32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
    if (!cell_span(g, c->aabb, &x0, &x1, &z0, &z1)) {
        for (uint32_t i = 0; i < g->big_count; i++)
            if (g->big[i] == c) {
                g->big[i] = g->big[--g->big_count];
                break;
            }
        return;
    }
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_ode_grid_cell *cell = find_cell(g, x, z);
            if (cell != NULL)
                remove_from_cell(g, cell, c);
        }
}

void gy_ode_grid_trim(gy_driver_world *w)
{
    gy_ode_static_grid *g = &w->grid;
    if (g->cells_empty < GRID_TRIM_MIN || g->cells_empty * 2u < g->cells.count)
        return;
    /* The kept cells close up in their order, so the walk order of the rest does not change. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < g->cells.count; i++) {
        gy_ode_grid_cell *c = &g->cells.items[i];
        if (c->count == 0) {
            gy_free(w->allocator, c->items, (size_t)c->capacity * sizeof *c->items);
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

static bool aabb_overlap(const double *a, const dReal *b)
{
    return a[0] <= b[1] && a[1] >= b[0] && a[2] <= b[3] && a[3] >= b[2] && a[4] <= b[5] &&
           a[5] >= b[4];
}

/* Returns false when the visitor asked to stop. */
static bool visit_cell(gy_driver_world *w, gy_ode_grid_cell *cell, const dReal aabb[6],
                       gy_ode_static_visitor visit, void *ctx)
{
    for (uint32_t i = 0; i < cell->count; i++) {
        gy_ode_collider *c = cell->items[i];
        if (c->visit_stamp == w->visit_stamp)
            continue;
        c->visit_stamp = w->visit_stamp;
        if (aabb_overlap(c->aabb, aabb) && !visit(ctx, c))
            return false;
    }
    return true;
}

void gy_ode_static_visit(gy_driver_world *w, const dReal aabb[6], gy_ode_static_visitor visit,
                         void *ctx)
{
    gy_ode_static_grid *g = &w->grid;
    if (++w->visit_stamp == 0) {
        /* The stamp wrapped: clear every collider's stamp so none is skipped by accident. */
        for (uint32_t i = 0; i < w->records->colliders->count; i++) {
            uint64_t h;
            gy_ode_collider *c = gy_handle_pool_at(w->records->colliders, i, &h);
            if (c != NULL)
                c->visit_stamp = 0;
        }
        w->visit_stamp = 1;
    }
    for (uint32_t i = 0; i < g->big_count; i++) {
        gy_ode_collider *c = g->big[i];
        if (aabb_overlap(c->aabb, aabb) && !visit(ctx, c))
            return;
    }
    if (g->cells.count == 0)
        return;
    double lo_x = isfinite(aabb[0]) ? aabb[0] : -GRID_COORD_LIMIT * g->cell_size;
    double hi_x = isfinite(aabb[1]) ? aabb[1] : GRID_COORD_LIMIT * g->cell_size;
    double lo_z = isfinite(aabb[4]) ? aabb[4] : -GRID_COORD_LIMIT * g->cell_size;
    double hi_z = isfinite(aabb[5]) ? aabb[5] : GRID_COORD_LIMIT * g->cell_size;
    int32_t x0 = cell_coord(g, lo_x), x1 = cell_coord(g, hi_x);
    int32_t z0 = cell_coord(g, lo_z), z1 = cell_coord(g, hi_z);
    uint64_t span = (uint64_t)((int64_t)x1 - x0 + 1) * (uint64_t)((int64_t)z1 - z0 + 1);
    if (span > g->cells.count) {
        /* A region wider than the populated grid: walking the cells is cheaper. */
        for (uint32_t i = 0; i < g->cells.count; i++) {
            gy_ode_grid_cell *cell = &g->cells.items[i];
            if (cell->count == 0 || cell->x < x0 || cell->x > x1 || cell->z < z0 || cell->z > z1)
                continue;
            if (!visit_cell(w, cell, aabb, visit, ctx))
                return;
        }
        return;
    }
    for (int32_t x = x0; x <= x1; x++)
        for (int32_t z = z0; z <= z1; z++) {
            gy_ode_grid_cell *cell = find_cell(g, x, z);
            if (cell != NULL && cell->count > 0 && !visit_cell(w, cell, aabb, visit, ctx))
                return;
        }
}
