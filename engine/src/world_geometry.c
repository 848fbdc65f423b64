/* Runtime collision geometry: meshes and hulls the game builds while running. Each is a handle
 * (creator reference) plus pins from the physics components whose colliders use it; it lives
 * while either is outstanding. The World keeps a copy of the data so a hard start can rebuild it,
 * and mirrors each one on the physics side as a resource named by the gy_physics_resource_ref
 * the subsystem issued it (w->geo_refs maps the ref's index back to the handle). */
#include <string.h>

#include "gyre/geometry.h"
#include "world_internal.h"

gy_w_geometry *gy_w_geometry_get(const gy_world *w, uint64_t handle)
{
    return w != NULL ? gy_handle_pool_get(&w->geo_pool, handle) : NULL;
}

static void free_entry(gy_world *w, gy_w_geometry *g)
{
    if (g->vertices != NULL)
        gy_free(w->alloc, g->vertices, (size_t)g->vertex_count * sizeof *g->vertices);
    if (g->indices != NULL)
        gy_free(w->alloc, g->indices, (size_t)g->index_count * sizeof *g->indices);
    gy_free(w->alloc, g, sizeof *g);
}

static gy_result record_create(gy_world *w, gy_w_geometry *g)
{
    gy_mesh_def m = {g->vertices, g->vertex_count, g->indices, g->index_count};
    gy_hull_def h = {g->vertices, g->vertex_count};
    gy_physics_resource_def d = {g->is_mesh ? &m : NULL, g->is_mesh ? NULL : &h};
    gy_physics_resource_ref ref;
    /* Room for its ref's entry before the create is recorded: nothing after the record may
     * fail. */
    gy_result r = gy_w_ref_table_reserve(w->alloc, &w->geo_refs, 1);
    if (r != GY_OK)
        return r;
    r = gy_physics_record_create_resource(w->physics, &d, &ref);
    if (r != GY_OK)
        return r;
    g->ref = ref;
    gy_w_ref_table_issued(&w->geo_refs, ref.index, g->handle);
    return GY_OK;
}

gy_result gy_w_geometry_create(gy_world *w, bool is_mesh, const gy_vec3 *vertices,
                               uint32_t vertex_count, const uint32_t *indices, uint32_t index_count,
                               uint64_t *out)
{
    gy_result r;
    if (is_mesh) {
        gy_mesh_def m = {vertices, vertex_count, indices, index_count};
        r = gy_validate_mesh_def(&m);
    } else {
        gy_hull_def h = {vertices, vertex_count};
        r = gy_validate_hull_def(&h);
        /* Degenerate clouds (coplanar, collinear) are refused here rather than by a reply, in
         * time linear in the points: the hull itself is built in slices on the physics thread. */
        if (r == GY_OK)
            r = gy_hull_check(w->alloc, vertices, vertex_count);
    }
    if (r != GY_OK)
        return r;
    gy_w_geometry *g = gy_alloc_zeroed(w->alloc, sizeof *g);
    if (g == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    g->is_mesh = is_mesh;
    g->vertex_count = vertex_count;
    g->index_count = is_mesh ? index_count : 0u;
    g->vertices = gy_alloc(w->alloc, (size_t)vertex_count * sizeof *g->vertices);
    g->indices =
        g->index_count ? gy_alloc(w->alloc, (size_t)g->index_count * sizeof *g->indices) : NULL;
    if (g->vertices == NULL || (g->index_count && g->indices == NULL)) {
        free_entry(w, g);
        return GY_ERR_OUT_OF_MEMORY;
    }
    memcpy(g->vertices, vertices, (size_t)vertex_count * sizeof *g->vertices);
    if (g->index_count)
        memcpy(g->indices, indices, (size_t)g->index_count * sizeof *g->indices);
    r = gy_handle_pool_acquire(&w->geo_pool, g, &g->handle);
    if (r == GY_OK && gy_w_running(w)) {
        r = record_create(w, g);
        if (r != GY_OK)
            gy_handle_pool_release(&w->geo_pool, g->handle);
        else
            g->created = true;
    }
    if (r != GY_OK) {
        free_entry(w, g);
        return r;
    }
    g->creator = true;
    w->geo_created++;
    *out = g->handle;
    return GY_OK;
}

static void maybe_free(gy_world *w, gy_w_geometry *g)
{
    if (g->creator || g->pins > 0)
        return;
    if (g->created && gy_w_running(w)) {
        gy_result r = gy_physics_record_release_resource(w->physics, g->ref);
        if (r == GY_OK)
            gy_w_ref_table_released(&w->geo_refs);
        else
            gy_log(
                w->logger, GY_LOG_ERROR,
                "world: releasing geometry resource %u failed (%s); it stays until physics stops",
                g->ref.index, gy_result_message(r));
    }
    gy_w_ref_table_forget(&w->geo_refs, g->ref.index, g->handle);
    g->ref = (gy_physics_resource_ref){0, 0};
    gy_handle_pool_release(&w->geo_pool, g->handle);
    free_entry(w, g);
    w->geo_freed++;
}

void gy_w_geometry_pin(gy_world *w, uint64_t handle)
{
    gy_w_geometry *g = gy_w_geometry_get(w, handle);
    if (g != NULL)
        g->pins++;
}

void gy_w_geometry_unpin(gy_world *w, uint64_t handle)
{
    gy_w_geometry *g = gy_w_geometry_get(w, handle);
    if (g == NULL || g->pins == 0)
        return;
    g->pins--;
    maybe_free(w, g);
}

gy_result gy_geometry_create_mesh(gy_world *w, const gy_mesh_def *def, gy_geometry *out)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || def == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    out->bits = 0;
    return gy_w_geometry_create(w, true, def->vertices, def->vertex_count, def->indices,
                                def->index_count, &out->bits);
}

gy_result gy_geometry_create_hull(gy_world *w, const gy_hull_def *def, gy_geometry *out)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || def == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    out->bits = 0;
    return gy_w_geometry_create(w, false, def->points, def->point_count, NULL, 0, &out->bits);
}

void gy_geometry_release(gy_world *w, gy_geometry id)
{
    if (gy_w_enter(w, __func__) != GY_OK)
        return;
    gy_w_geometry *g = gy_w_geometry_get(w, id.bits);
    if (g == NULL || !g->creator)
        return;
    g->creator = false;
    maybe_free(w, g);
}

bool gy_geometry_is_valid(const gy_world *w, gy_geometry id)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    return gy_w_geometry_get(w, id.bits) != NULL;
}

void gy_geometry_get_stats(const gy_world *w, gy_geometry_stats *out)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return;
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (w == NULL)
        return;
    for (uint32_t i = 0; i < w->geo_pool.count; i++) {
        const gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g == NULL)
            continue;
        out->resident++;
        out->meshes += g->is_mesh;
        out->hulls += !g->is_mesh;
        out->creator_refs += g->creator;
        out->pins += g->pins;
        out->failed += g->failed;
    }
    out->created = w->geo_created;
    out->freed = w->geo_freed;
}

void gy_w_geometry_failed(gy_world *w, gy_physics_resource_ref ref, gy_result r)
{
    gy_w_geometry *g = gy_w_geometry_get(w, gy_w_ref_table_get(&w->geo_refs, ref.index));
    if (g == NULL || g->ref.generation != ref.generation)
        return;
    g->failed = true;
    gy_log(w->logger, GY_LOG_WARN, "world: the adapter refused a runtime %s (%u points): %s",
           g->is_mesh ? "mesh" : "hull", g->vertex_count, gy_result_message(r));
}

void gy_w_geometry_stopped(gy_world *w)
{
    gy_w_ref_table_clear(&w->geo_refs);
    for (uint32_t i = 0; i < w->geo_pool.count; i++) {
        gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g != NULL) {
            g->created = false;
            g->ref = (gy_physics_resource_ref){0, 0};
        }
    }
}

gy_result gy_w_geometry_bootstrap(gy_world *w, gy_physics_resource_def **out, uint32_t *count,
                                  gy_mesh_def **meshes, gy_hull_def **hulls)
{
    *out = NULL;
    *meshes = NULL;
    *hulls = NULL;
    *count = 0;
    uint32_t n = w->geo_pool.live;
    if (n == 0)
        return GY_OK;
    if (gy_w_ref_table_reserve(w->alloc, &w->geo_refs, n) != GY_OK) /* none held: stopped */
        return GY_ERR_OUT_OF_MEMORY;
    gy_physics_resource_def *d = gy_alloc(w->alloc, (size_t)n * sizeof *d);
    gy_mesh_def *m = gy_alloc(w->alloc, (size_t)n * sizeof *m);
    gy_hull_def *h = gy_alloc(w->alloc, (size_t)n * sizeof *h);
    if (d == NULL || m == NULL || h == NULL) {
        if (d != NULL)
            gy_free(w->alloc, d, (size_t)n * sizeof *d);
        if (m != NULL)
            gy_free(w->alloc, m, (size_t)n * sizeof *m);
        if (h != NULL)
            gy_free(w->alloc, h, (size_t)n * sizeof *h);
        return GY_ERR_OUT_OF_MEMORY;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < w->geo_pool.count && k < n; i++) {
        gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g == NULL)
            continue;
        m[k] = (gy_mesh_def){g->vertices, g->vertex_count, g->indices, g->index_count};
        h[k] = (gy_hull_def){g->vertices, g->vertex_count};
        /* The start issues the list's k-th resource index k + 1: the bodies' colliders name it
         * by that (generation not read). */
        g->ref = (gy_physics_resource_ref){k + 1u, 0};
        d[k].mesh = g->is_mesh ? &m[k] : NULL;
        d[k].hull = g->is_mesh ? NULL : &h[k];
        k++;
    }
    *out = d;
    *meshes = m;
    *hulls = h;
    *count = n;
    return GY_OK;
}

void gy_w_geometry_started(gy_world *w, const gy_physics_resource_ref *refs, uint32_t count)
{
    /* The bootstrap list walked the pool in this order. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < w->geo_pool.count && k < count; i++) {
        gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g != NULL) {
            g->created = true;
            g->failed = false;
            g->ref = refs[k++];
            /* Room reserved by the bootstrap. */
            gy_w_ref_table_issued(&w->geo_refs, g->ref.index, g->handle);
        }
    }
}

uint32_t gy_w_geometry_reclaim(gy_world *w)
{
    uint32_t leaked = 0;
    for (uint32_t i = 0; i < w->geo_pool.count; i++) {
        gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g != NULL && g->creator) {
            leaked++;
            g->creator = false;
            maybe_free(w, g);
        }
    }
    return leaked;
}

void gy_w_geometry_fini(gy_world *w)
{
    for (uint32_t i = 0; i < w->geo_pool.count; i++) {
        gy_w_geometry *g = gy_handle_pool_at(&w->geo_pool, i, NULL);
        if (g != NULL)
            free_entry(w, g);
    }
    gy_handle_pool_fini(&w->geo_pool);
    gy_w_ref_table_free(w->alloc, &w->geo_refs);
}
