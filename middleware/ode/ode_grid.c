/* The static grid: static colliders indexed on a uniform X/Z grid of cells kept in an
 * open-addressed hash table. The step collides moving colliders against statics through it
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

void gy_ode_grid_init(gy_ode_static_grid *g, double cell_size)
{
    memset(g, 0, sizeof *g);
    g->cell_size = cell_size;
}

void gy_ode_grid_fini(gy_driver_world *w)
{
    gy_ode_static_grid *g = &w->grid;
    for (uint32_t i = 0; i < g->cell_capacity; i++)
        gy_free(w->allocator, g->cells[i].items,
                (size_t)g->cells[i].capacity * sizeof *g->cells[i].items);
    gy_free(w->allocator, g->cells, (size_t)g->cell_capacity * sizeof *g->cells);
    gy_free(w->allocator, g->big, (size_t)g->big_capacity * sizeof *g->big);
    memset(g, 0, sizeof *g);
}

static uint32_t cell_hash(int32_t x, int32_t z)
{
    uint64_t h = (uint64_t)(uint32_t)x * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)(uint32_t)z * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (uint32_t)h;
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
    if (g->cell_capacity == 0)
        return NULL;
    uint32_t mask = g->cell_capacity - 1u;
    for (uint32_t i = cell_hash(x, z) & mask;; i = (i + 1u) & mask) {
        gy_ode_grid_cell *c = &g->cells[i];
        if (!c->used)
            return NULL;
        if (c->x == x && c->z == z)
            return c;
    }
}

/* Keeps the table at most half full. An emptied cell keeps its storage for the next static placed
 * there until gy_ode_grid_trim drops it. */
static gy_result grow_cells(gy_driver_world *w, uint32_t extra)
{
    gy_ode_static_grid *g = &w->grid;
    uint64_t need = ((uint64_t)g->cells_used + extra) * 2u;
    if (need <= g->cell_capacity)
        return GY_OK;
    uint64_t cap = g->cell_capacity ? g->cell_capacity : 64u;
    while (cap < need)
        cap *= 2u;
    if (cap > (1u << 30))
        return GY_ERR_OUT_OF_MEMORY;
    gy_ode_grid_cell *cells = gy_alloc_zeroed(w->allocator, (size_t)cap * sizeof *cells);
    if (cells == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t mask = (uint32_t)cap - 1u;
    for (uint32_t i = 0; i < g->cell_capacity; i++) {
        gy_ode_grid_cell *c = &g->cells[i];
        if (!c->used)
            continue;
        uint32_t j = cell_hash(c->x, c->z) & mask;
        while (cells[j].used)
            j = (j + 1u) & mask;
        cells[j] = *c;
    }
    gy_free(w->allocator, g->cells, (size_t)g->cell_capacity * sizeof *g->cells);
    g->cells = cells;
    g->cell_capacity = (uint32_t)cap;
    return GY_OK;
}

static gy_ode_grid_cell *get_or_add_cell(gy_ode_static_grid *g, int32_t x, int32_t z)
{
    uint32_t mask = g->cell_capacity - 1u;
    for (uint32_t i = cell_hash(x, z) & mask;; i = (i + 1u) & mask) {
        gy_ode_grid_cell *c = &g->cells[i];
        if (!c->used) {
            c->used = true;
            c->x = x;
            c->z = z;
            c->count = 0;
            g->cells_used++;
            g->cells_empty++;
            return c;
        }
        if (c->x == x && c->z == z)
            return c;
    }
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

gy_result gy_ode_grid_insert(gy_driver_world *w, gy_ode_collider *c)
{
    gy_ode_static_grid *g = &w->grid;
    dReal aabb[6];
    dGeomGetAABB(c->geom, aabb);
    for (int i = 0; i < 6; i++)
        c->aabb[i] = aabb[i];
    bool bounded = true;
    for (int i = 0; i < 6; i++)
        if (!isfinite(aabb[i]))
            bounded = false;
    int32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
    if (bounded) {
        x0 = cell_coord(g, aabb[0]);
        x1 = cell_coord(g, aabb[1]);
        z0 = cell_coord(g, aabb[4]);
        z1 = cell_coord(g, aabb[5]);
        if ((int64_t)x1 - x0 >= GRID_MAX_SPAN || (int64_t)z1 - z0 >= GRID_MAX_SPAN)
            bounded = false;
    }
    if (!bounded) {
        gy_result r = gy_array_reserve(w->allocator, (void **)&g->big, &g->big_capacity,
                                       g->big_count + 1u, sizeof *g->big);
        if (r != GY_OK)
            return r;
        g->big[g->big_count++] = c;
        c->in_big = true;
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
    c->in_big = false;
    c->cell_min[0] = x0;
    c->cell_min[1] = z0;
    c->cell_max[0] = x1;
    c->cell_max[1] = z1;
    return GY_OK;
}

void gy_ode_grid_remove(gy_driver_world *w, gy_ode_collider *c)
{
    gy_ode_static_grid *g = &w->grid;
    if (c->in_big) {
        for (uint32_t i = 0; i < g->big_count; i++)
            if (g->big[i] == c) {
                g->big[i] = g->big[--g->big_count];
                break;
            }
        c->in_big = false;
        return;
    }
    for (int32_t x = c->cell_min[0]; x <= c->cell_max[0]; x++)
        for (int32_t z = c->cell_min[1]; z <= c->cell_max[1]; z++) {
            gy_ode_grid_cell *cell = find_cell(g, x, z);
            if (cell != NULL)
                remove_from_cell(g, cell, c);
        }
}

/* Empties slot `i` of the table by backward-shift deletion: later cells of the same probe run
 * move up, so lookups never meet a hole before their cell. */
static void delete_slot(gy_driver_world *w, uint32_t i)
{
    gy_ode_static_grid *g = &w->grid;
    uint32_t mask = g->cell_capacity - 1u;
    gy_free(w->allocator, g->cells[i].items, (size_t)g->cells[i].capacity * sizeof(void *));
    for (uint32_t j = (i + 1u) & mask; g->cells[j].used; j = (j + 1u) & mask) {
        uint32_t home = cell_hash(g->cells[j].x, g->cells[j].z) & mask;
        /* Cell j may fill the hole only if its home slot is not cyclically within (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        g->cells[i] = g->cells[j];
        i = j;
    }
    memset(&g->cells[i], 0, sizeof g->cells[i]);
    g->cells_used--;
}

void gy_ode_grid_trim(gy_driver_world *w)
{
    gy_ode_static_grid *g = &w->grid;
    if (g->cells_empty < GRID_TRIM_MIN || g->cells_empty * 2u < g->cells_used)
        return;
    /* A deletion can pull a later cell into slot i, so slot i is looked at again; cells moved
     * into slots already passed come from the wrapped start of the table and are not empty. */
    for (uint32_t i = 0; i < g->cell_capacity; i++)
        while (g->cells[i].used && g->cells[i].count == 0) {
            delete_slot(w, i);
            g->cells_empty--;
        }
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
        for (uint32_t i = 0; i < w->colliders.count; i++) {
            uint64_t h;
            gy_ode_collider *c = gy_handle_pool_at(&w->colliders, i, &h);
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
    if (g->cells_used == 0)
        return;
    double lo_x = isfinite(aabb[0]) ? aabb[0] : -GRID_COORD_LIMIT * g->cell_size;
    double hi_x = isfinite(aabb[1]) ? aabb[1] : GRID_COORD_LIMIT * g->cell_size;
    double lo_z = isfinite(aabb[4]) ? aabb[4] : -GRID_COORD_LIMIT * g->cell_size;
    double hi_z = isfinite(aabb[5]) ? aabb[5] : GRID_COORD_LIMIT * g->cell_size;
    int32_t x0 = cell_coord(g, lo_x), x1 = cell_coord(g, hi_x);
    int32_t z0 = cell_coord(g, lo_z), z1 = cell_coord(g, hi_z);
    uint64_t span = (uint64_t)((int64_t)x1 - x0 + 1) * (uint64_t)((int64_t)z1 - z0 + 1);
    if (span > g->cells_used) {
        /* A region wider than the populated grid: walking the table is cheaper. */
        for (uint32_t i = 0; i < g->cell_capacity; i++) {
            gy_ode_grid_cell *cell = &g->cells[i];
            if (!cell->used || cell->count == 0 || cell->x < x0 || cell->x > x1 || cell->z < z0 ||
                cell->z > z1)
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
