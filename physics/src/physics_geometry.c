/* Runtime collision geometry built in slices under a per-tick budget. A mesh or hull created
 * while the simulation runs (a streamed cell's terrain) becomes a job at the back of a queue; each
 * drain spends what is left of the tick's budget (gy_physics_def.geometry_budget, in units: a
 * vertex copied, a triangle boxed, an item visited by the triangle tree's build) on the job at the
 * front, so a large mesh is built over as many ticks as it needs and no tick goes over the budget
 * by more than one constant-cost step. A body naming geometry still queued is parked, with its
 * command's payload, and created the moment the last of its geometry is ready; releasing it first
 * drops it, and releasing queued geometry cancels its job, freeing everything either made.
 *
 * The adapter's own structure (ODE's OPCODE tree, Bullet's BVH, both adapters' edge table) cannot
 * be resumed, so a mesh of more triangles than one piece (gy_phys_geo_piece_triangles) is cut:
 * its edges are classified over the whole mesh in slices (so the seams between pieces are as
 * smooth as the inside of a piece), then one adapter mesh is made per piece, a piece per slice,
 * each charged GY_PHYS_GEO_TRIANGLE_UNITS a triangle; a body naming the resource gets one adapter
 * collider per piece, all mapped back to the one collider it was given (physics_world.c). A
 * smaller mesh is made whole in the job's last slice. A hull is built in slices
 * (gy_hull_build_run: a unit is a point visited or a face a point is measured against), then
 * given built to the adapter (hull_create_built, which copies it) and the query blob in the last
 * slice, charged GY_PHYS_GEO_HULL_ITEM_UNITS a vertex and a triangle. An adapter slice that does
 * not fit what is left of the tick waits for the next tick, where it runs first, so a tick spends
 * at most the budget (plus one hull item) or one adapter slice. Jobs allocate while they are
 * built; a queue that is empty allocates nothing. Physics thread, inside the sim lock. */
#include <string.h>

#include "physics_roster.h"

static const uint32_t *payload_indices(const gy_phys_resource_payload *pl)
{
    return (const uint32_t *)(const void *)(pl->vertices + pl->vertex_count);
}

static gy_mesh_def payload_mesh(const gy_phys_resource_payload *pl)
{
    gy_mesh_def m = {pl->vertices, pl->vertex_count, payload_indices(pl), pl->index_count};
    return m;
}

static void free_payload(gy_phys_sim *p, void *payload)
{
    if (payload != NULL)
        gy_free(p->cfg->alloc, payload, *(const size_t *)payload);
}

uint32_t gy_phys_geo_piece_triangles(uint64_t budget)
{
    uint64_t k = budget / GY_PHYS_GEO_TRIANGLE_UNITS;
    k = k < GY_PHYS_GEO_MIN_PIECE ? GY_PHYS_GEO_MIN_PIECE : k;
    return k > UINT32_MAX / 3u ? UINT32_MAX / 3u : (uint32_t)k;
}

/* Units a job's adapter slices are charged in all: what the adapter's build walks. A hull's
 * adapter slice copies the built hull (into the adapter and into the query blob) and walks it a
 * few times, so it is charged its vertices and triangles; until the hull is built, the most a
 * hull of its points can have (a triangle per point and a half, Euler). */
static uint64_t adapter_units(const gy_phys_geo_job *j)
{
    const gy_phys_resource_payload *pl = j->payload;
    if (pl->is_mesh)
        return (uint64_t)(pl->index_count / 3u) * GY_PHYS_GEO_TRIANGLE_UNITS;
    uint64_t v = j->ready ? j->hull.vertex_count : pl->vertex_count;
    uint64_t t = j->ready ? j->hull.triangle_count : 2u * (uint64_t)pl->vertex_count;
    return (v + t) * GY_PHYS_GEO_HULL_ITEM_UNITS;
}

/* Whether the job's mesh is made in pieces. */
static bool pieced(const gy_phys_sim *p, const gy_phys_resource_payload *pl)
{
    return pl->is_mesh && pl->index_count / 3u > gy_phys_geo_piece_triangles(p->cfg->geo_budget);
}

/* The queue's size, published for the diagnostics and gy_physics_get_geometry_stats. */
static void publish_queue(gy_phys_sim *p)
{
    uint64_t bytes = 0, units = 0;
    for (uint32_t i = 0; i < p->geo_job_count; i++) {
        bytes += p->geo_jobs[i].payload->size;
        units += p->geo_jobs[i].units_left;
    }
    gy_phys_set64(&p->sh->counters.geo_jobs, p->geo_job_count);
    gy_phys_set64(&p->sh->counters.geo_parked, p->parked_count);
    gy_phys_set64(&p->sh->counters.geo_bytes_pending, bytes);
    gy_phys_set64(&p->sh->counters.geo_units_pending, units);
}

static bool key_queued(const gy_phys_sim *p, uint32_t key)
{
    for (uint32_t i = 0; i < p->geo_job_count; i++)
        if (p->geo_jobs[i].key == key)
            return true;
    return false;
}

/* Whether the resource `ref` names exactly (index and generation) is queued for its build. */
static bool ref_queued(const gy_phys_sim *p, gy_physics_resource_ref ref)
{
    for (uint32_t i = 0; i < p->geo_job_count; i++)
        if (p->geo_jobs[i].key == ref.index && p->geo_jobs[i].generation == ref.generation)
            return true;
    return false;
}

void gy_phys_geo_enqueue(gy_phys_sim *p, gy_command *c)
{
    uint32_t key = c->key;
    const gy_phys_resource_payload *peek = gy_command_payload(c);
    bool live = key < p->resource_capacity && p->resources[key].live;
    uint32_t generation = peek != NULL ? peek->generation : 0u;
    if (key == 0 || live || key_queued(p, key) || peek == NULL) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, key, generation, GY_ERR_MISUSE);
        return;
    }
    if (gy_array_reserve(p->cfg->alloc, (void **)&p->geo_jobs, &p->geo_job_capacity,
                         p->geo_job_count + 1u, sizeof *p->geo_jobs) != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, key, generation, GY_ERR_OUT_OF_MEMORY);
        return;
    }
    gy_phys_resource_payload *pl = gy_command_take_payload(c);
    gy_phys_geo_job *j = &p->geo_jobs[p->geo_job_count++];
    memset(j, 0, sizeof *j);
    j->payload = pl;
    j->key = key;
    j->generation = generation;
    j->units_left = adapter_units(j);
    if (!pl->is_mesh)
        j->units_left += GY_PHYS_GEO_HULL_POINT_UNITS * (uint64_t)pl->vertex_count;
    if (pl->is_mesh) {
        gy_mesh_def m = payload_mesh(pl);
        j->units_left += gy_snapshot_mesh_build_units(&m);
        if (pieced(p, pl))
            j->units_left += gy_mesh_edge_classifier_units(&m);
    }
    /* At once, within the budget: geometry that fits is live before the next command of the
     * batch names it (a body, then a joint on that body). */
    gy_phys_geo_run(p);
}

/* Whether any hull or mesh collider of the payload names a queued key. */
static bool body_waits(const gy_phys_sim *p, const gy_phys_body_payload *pl)
{
    for (uint32_t i = 0; i < pl->collider_count; i++) {
        gy_shape_type t = pl->colliders[i].shape.type;
        if ((t == GY_SHAPE_HULL || t == GY_SHAPE_MESH) &&
            ref_queued(p, gy_physics_resource_ref_of_bits(pl->colliders[i].shape.resource.bits)))
            return true;
    }
    return false;
}

bool gy_phys_geo_park(gy_phys_sim *p, gy_command *c)
{
    const gy_phys_body_payload *peek = gy_command_payload(c);
    if (p->geo_job_count == 0 || peek == NULL || !body_waits(p, peek))
        return false;
    if (gy_array_reserve(p->cfg->alloc, (void **)&p->parked, &p->parked_capacity,
                         p->parked_count + 1u, sizeof *p->parked) != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, c->key, peek->generation,
                             GY_ERR_OUT_OF_MEMORY);
        return true;
    }
    gy_phys_parked_body *b = &p->parked[p->parked_count++];
    b->payload = gy_command_take_payload(c);
    b->store_index = c->key;
    publish_queue(p);
    return true;
}

static void remove_parked(gy_phys_sim *p, uint32_t i)
{
    memmove(&p->parked[i], &p->parked[i + 1u],
            (size_t)(p->parked_count - i - 1u) * sizeof *p->parked);
    p->parked_count--;
}

bool gy_phys_geo_unpark(gy_phys_sim *p, gy_physics_body_ref ref)
{
    for (uint32_t i = 0; i < p->parked_count; i++) {
        gy_phys_parked_body *b = &p->parked[i];
        if (b->store_index != ref.index || b->payload->generation != ref.generation)
            continue;
        free_payload(p, b->payload);
        remove_parked(p, i);
        gy_phys_add(&p->sh->counters.geo_parked_cancelled, 1);
        publish_queue(p);
        return true;
    }
    return false;
}

/* Creates, in arrival order, every parked body whose geometry is no longer queued (ready, or
 * failed or cancelled: then the create fails as for any missing resource). */
static void unpark_ready(gy_phys_sim *p)
{
    for (uint32_t i = 0; i < p->parked_count;) {
        gy_phys_parked_body b = p->parked[i];
        if (body_waits(p, b.payload)) {
            i++;
            continue;
        }
        remove_parked(p, i);
        const gy_phys_body_payload *pl = b.payload;
        gy_phys_create_body(p, (gy_physics_body_ref){b.store_index, pl->generation}, &pl->def,
                            pl->colliders, pl->collider_count,
                            pl->is_character ? &pl->character : NULL, pl->start_asleep, false);
        free_payload(p, b.payload);
    }
}

/* Frees what cutting a mesh into pieces made, and the pieces themselves unless installed. */
static void free_pieces(gy_phys_sim *p, gy_phys_geo_job *j)
{
    const gy_allocator *a = p->cfg->alloc;
    const gy_phys_resource_payload *pl = j->payload;
    uint32_t k = gy_phys_geo_piece_triangles(p->cfg->geo_budget);
    gy_mesh_edge_classifier_free(j->classify);
    for (uint32_t i = 0; j->pieces != NULL && i < j->pieces_built; i++)
        p->cfg->backend->resource_release(p->world, j->pieces[i]);
    gy_free(a, j->pieces, (size_t)j->piece_count * sizeof *j->pieces);
    gy_free(a, j->active_edges, (size_t)(pl->index_count / 3u) * sizeof *j->active_edges);
    gy_free(a, j->remap, (size_t)pl->vertex_count * sizeof *j->remap);
    gy_free(a, j->piece_vertices, (size_t)k * 3u * sizeof *j->piece_vertices);
    gy_free(a, j->piece_indices, (size_t)k * 3u * sizeof *j->piece_indices);
    j->classify = NULL;
    j->pieces = NULL;
    j->active_edges = NULL;
    j->remap = NULL;
    j->piece_vertices = NULL;
    j->piece_indices = NULL;
}

static void drop_job(gy_phys_sim *p, uint32_t i)
{
    gy_phys_geo_job *j = &p->geo_jobs[i];
    gy_snapshot_mesh_build_cancel(j->build);
    gy_hull_build_cancel(j->hull_build);
    gy_hull_free(p->cfg->alloc, &j->hull);
    free_pieces(p, j);
    free_payload(p, j->payload);
    memmove(&p->geo_jobs[i], &p->geo_jobs[i + 1u],
            (size_t)(p->geo_job_count - i - 1u) * sizeof *p->geo_jobs);
    p->geo_job_count--;
}

bool gy_phys_geo_cancel(gy_phys_sim *p, gy_physics_resource_ref ref)
{
    for (uint32_t i = 0; i < p->geo_job_count; i++) {
        if (p->geo_jobs[i].key != ref.index || p->geo_jobs[i].generation != ref.generation)
            continue;
        drop_job(p, i);
        gy_phys_add(&p->sh->counters.geo_cancelled, 1);
        unpark_ready(p);
        publish_queue(p);
        return true;
    }
    return false;
}

/* The job's last slice: the adapter's resource and, for a hull, its query blob. */
static void finish_job(gy_phys_sim *p, gy_phys_geo_job *j)
{
    const gy_phys_resource_payload *pl = j->payload;
    gy_result r;
    gy_resource_id id;
    gy_snapshot_geometry *g = NULL;
    if (pl->is_mesh) {
        gy_mesh_def m = payload_mesh(pl);
        r = p->cfg->backend->mesh_create(p->world, &m, &id);
        if (r == GY_OK)
            g = gy_snapshot_mesh_build_finish(j->build);
        else
            gy_snapshot_mesh_build_cancel(j->build);
        j->build = NULL;
    } else {
        /* The adapter copies the hull; the query blob takes the job's (drop_job then frees
         * nothing of it). */
        r = p->cfg->backend->hull_create_built(p->world, &j->hull, &id);
        if (r == GY_OK &&
            (r = gy_snapshot_geometry_create_hull_built(p->cfg->alloc, &j->hull, &g)) != GY_OK)
            p->cfg->backend->resource_release(p->world, id);
    }
    if (r == GY_OK &&
        (r = gy_phys_install_resource(p, (gy_physics_resource_ref){j->key, j->generation}, id, g,
                                      NULL, 0)) != GY_OK) {
        p->cfg->backend->resource_release(p->world, id);
        gy_snapshot_geometry_release(g);
    }
    if (r != GY_OK)
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, j->key, j->generation, r);
    gy_phys_add(&p->sh->counters.geo_built, 1);
}

/* Allocates what cutting the job's mesh needs and starts classifying its edges. */
static gy_result begin_pieces(gy_phys_sim *p, gy_phys_geo_job *j)
{
    const gy_allocator *a = p->cfg->alloc;
    const gy_phys_resource_payload *pl = j->payload;
    uint32_t nt = pl->index_count / 3u, k = gy_phys_geo_piece_triangles(p->cfg->geo_budget);
    j->piece_count = (uint32_t)(((uint64_t)nt + k - 1u) / k);
    j->pieces = gy_alloc(a, (size_t)j->piece_count * sizeof *j->pieces);
    j->active_edges = gy_alloc(a, (size_t)nt * sizeof *j->active_edges);
    j->remap = gy_alloc(a, (size_t)pl->vertex_count * sizeof *j->remap);
    j->piece_vertices = gy_alloc(a, (size_t)k * 3u * sizeof *j->piece_vertices);
    j->piece_indices = gy_alloc(a, (size_t)k * 3u * sizeof *j->piece_indices);
    if (j->pieces == NULL || j->active_edges == NULL || j->remap == NULL ||
        j->piece_vertices == NULL || j->piece_indices == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memset(j->remap, 0xff, (size_t)pl->vertex_count * sizeof *j->remap);
    gy_mesh_def m = payload_mesh(pl);
    return gy_mesh_edge_classifier_begin(a, &m, j->active_edges, &j->classify);
}

/* The job's next piece: its triangles with only the vertices they use, and the whole mesh's
 * edge flags for them. */
static gy_result build_piece(gy_phys_sim *p, gy_phys_geo_job *j)
{
    const gy_phys_resource_payload *pl = j->payload;
    const uint32_t *idx = payload_indices(pl);
    uint32_t nt = pl->index_count / 3u, k = gy_phys_geo_piece_triangles(p->cfg->geo_budget);
    uint32_t first = j->pieces_built * k, count = nt - first < k ? nt - first : k, nv = 0;
    for (uint32_t i = 0; i < 3u * count; i++) {
        uint32_t v = idx[3u * first + i];
        if (j->remap[v] == UINT32_MAX) {
            j->remap[v] = nv;
            j->piece_vertices[nv++] = pl->vertices[v];
        }
        j->piece_indices[i] = j->remap[v];
    }
    for (uint32_t i = 0; i < 3u * count; i++)
        j->remap[idx[3u * first + i]] = UINT32_MAX;
    gy_mesh_def m = {j->piece_vertices, nv, j->piece_indices, 3u * count};
    gy_result r = p->cfg->backend->mesh_create_piece(p->world, &m, j->active_edges + first,
                                                     &j->pieces[j->pieces_built]);
    if (r == GY_OK)
        j->pieces_built++;
    if (count > gy_phys_get(&p->sh->counters.geo_piece_triangles_max))
        gy_phys_set64(&p->sh->counters.geo_piece_triangles_max, count);
    return r;
}

/* Installs a mesh built in pieces; its pieces then belong to the resource. */
static void finish_pieces(gy_phys_sim *p, gy_phys_geo_job *j)
{
    gy_snapshot_geometry *g = gy_snapshot_mesh_build_finish(j->build);
    j->build = NULL;
    gy_result r =
        g == NULL ? GY_ERR_OUT_OF_MEMORY
                  : gy_phys_install_resource(p, (gy_physics_resource_ref){j->key, j->generation},
                                             j->pieces[0], g, j->pieces, j->piece_count);
    if (r == GY_OK) {
        j->pieces = NULL; /* the resource's now */
        j->pieces_built = 0;
    } else {
        gy_snapshot_geometry_release(g);
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, j->key, j->generation, r);
    }
    gy_phys_add(&p->sh->counters.geo_built, 1);
}

/* Runs the job's hull build in what is left of the tick's budget. False when the build failed
 * (the create is answered with its error and the job is to be dropped). */
static bool run_hull(gy_phys_sim *p, gy_phys_geo_job *j)
{
    const gy_phys_resource_payload *pl = j->payload;
    gy_result r = GY_OK;
    if (j->hull_build == NULL)
        r = gy_hull_build_begin(p->cfg->alloc, pl->vertices, pl->vertex_count, &j->hull_build);
    uint64_t used = 0;
    bool done = r == GY_OK &&
                gy_hull_build_run(j->hull_build, p->cfg->geo_budget - p->geo_tick_units, &used);
    p->geo_tick_units += used;
    uint64_t adapter = adapter_units(j);
    /* The estimate never reaches the adapter's share before the hull is done. */
    uint64_t rest = j->units_left - adapter;
    j->units_left -= used < rest ? used : rest - (rest > 0u);
    if (r == GY_OK && done) {
        r = gy_hull_build_finish(j->hull_build, &j->hull);
        j->hull_build = NULL;
        j->ready = r == GY_OK;
        j->units_left = adapter_units(j);
    }
    if (r != GY_OK)
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, j->key, j->generation, r);
    return r == GY_OK;
}

/* Starts counting a new tick's spending when the tick moved on since the last drain. */
static void roll_tick(gy_phys_sim *p)
{
    if (p->geo_tick == p->tick)
        return;
    p->geo_tick = p->tick;
    p->geo_tick_units = 0;
    p->geo_tick_adapter = 0;
    p->geo_tick_ns = 0;
}

void gy_phys_geo_run(gy_phys_sim *p)
{
    roll_tick(p);
    if (p->geo_job_count == 0 && p->geo_tick_units == 0) {
        /* A tick that spent nothing shows as such. */
        gy_phys_set64(&p->sh->counters.geo_tick_units, 0);
        gy_phys_set64(&p->sh->counters.geo_tick_adapter_units, 0);
        gy_phys_set64(&p->sh->counters.geo_tick_ns, 0);
    }
    if (p->geo_job_count == 0 || p->geo_tick_units >= p->cfg->geo_budget)
        return;
    uint64_t t0 = gy_clock_now_ns();
    bool changed = false;
    while (p->geo_job_count > 0 && p->geo_tick_units < p->cfg->geo_budget) {
        gy_phys_geo_job *j = &p->geo_jobs[0];
        gy_phys_add(&p->sh->counters.geo_slices, 1);
        if (!j->ready && !j->payload->is_mesh) {
            if (!run_hull(p, j)) {
                drop_job(p, 0);
                changed = true;
                continue;
            }
            if (!j->ready)
                break;
        }
        uint64_t adapter = adapter_units(j);
        if (!j->ready) {
            gy_result r = GY_OK;
            if (j->build == NULL) {
                gy_mesh_def m = payload_mesh(j->payload);
                r = gy_snapshot_mesh_build_begin(p->cfg->alloc, &m, &j->build);
            }
            if (r != GY_OK) {
                gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, j->key, j->generation, r);
                drop_job(p, 0);
                changed = true;
                continue;
            }
            uint64_t used = 0;
            j->ready =
                gy_snapshot_mesh_build_run(j->build, p->cfg->geo_budget - p->geo_tick_units, &used);
            p->geo_tick_units += used;
            /* The estimate never reaches the adapter's share before the blob is done. */
            uint64_t rest = j->units_left - adapter;
            j->units_left -= used < rest ? used : rest - (rest > 0u);
            if (!j->ready)
                break;
            j->units_left = adapter;
        }
        if (pieced(p, j->payload)) {
            gy_result r = GY_OK;
            if (j->active_edges == NULL)
                r = begin_pieces(p, j);
            if (r == GY_OK && j->classify != NULL) {
                uint64_t used = 0;
                bool done = gy_mesh_edge_classifier_run(
                    j->classify, p->cfg->geo_budget - p->geo_tick_units, &used);
                p->geo_tick_units += used;
                if (!done)
                    break;
                gy_mesh_edge_classifier_free(j->classify);
                j->classify = NULL;
                if (p->geo_tick_units >= p->cfg->geo_budget)
                    break;
            }
            uint32_t k = gy_phys_geo_piece_triangles(p->cfg->geo_budget);
            uint32_t nt = j->payload->index_count / 3u;
            uint32_t left = nt - j->pieces_built * k;
            uint64_t piece = (uint64_t)(left < k ? left : k) * GY_PHYS_GEO_TRIANGLE_UNITS;
            /* A piece runs whole: in what is left of this tick's budget, or first in a tick. */
            if (r == GY_OK && p->geo_tick_units > 0 &&
                p->geo_tick_units + piece > p->cfg->geo_budget)
                break;
            if (r == GY_OK)
                r = build_piece(p, j);
            if (r != GY_OK) {
                gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, j->key, j->generation, r);
                drop_job(p, 0);
                changed = true;
                continue;
            }
            p->geo_tick_units += piece;
            p->geo_tick_adapter += piece;
            j->units_left = j->units_left > piece ? j->units_left - piece : 0;
            if (j->pieces_built < j->piece_count)
                continue;
            finish_pieces(p, j);
            drop_job(p, 0);
            changed = true;
            continue;
        }
        /* A mesh of at most one piece, or a hull: made whole, either in what is left of this
         * tick's budget or as the first work of a tick, alone when it is larger than the budget. */
        if (p->geo_tick_units > 0 && p->geo_tick_units + adapter > p->cfg->geo_budget)
            break;
        finish_job(p, j);
        p->geo_tick_units += adapter;
        p->geo_tick_adapter += adapter;
        drop_job(p, 0);
        changed = true;
    }
    if (changed)
        unpark_ready(p);
    p->geo_tick_ns += gy_clock_now_ns() - t0;
    if (p->geo_tick_units > p->geo_max_units)
        p->geo_max_units = p->geo_tick_units;
    if (p->geo_tick_ns > p->geo_max_ns)
        p->geo_max_ns = p->geo_tick_ns;
    gy_phys_set64(&p->sh->counters.geo_tick_units, p->geo_tick_units);
    gy_phys_set64(&p->sh->counters.geo_tick_adapter_units, p->geo_tick_adapter);
    gy_phys_set64(&p->sh->counters.geo_tick_ns, p->geo_tick_ns);
    if (p->geo_tick_units > gy_phys_get(&p->sh->counters.geo_max_tick_units))
        gy_phys_set64(&p->sh->counters.geo_max_tick_units, p->geo_tick_units);
    if (p->geo_tick_ns > gy_phys_get(&p->sh->counters.geo_max_tick_ns))
        gy_phys_set64(&p->sh->counters.geo_max_tick_ns, p->geo_tick_ns);
    publish_queue(p);
}

void gy_phys_geo_take_max(gy_phys_sim *p, uint64_t *units, uint64_t *ns)
{
    *units = p->geo_max_units;
    *ns = p->geo_max_ns;
    p->geo_max_units = 0;
    p->geo_max_ns = 0;
}

void gy_phys_geo_clear(gy_phys_sim *p)
{
    while (p->geo_job_count > 0)
        drop_job(p, p->geo_job_count - 1u);
    for (uint32_t i = 0; i < p->parked_count; i++)
        free_payload(p, p->parked[i].payload);
    p->parked_count = 0;
    p->geo_tick_units = 0;
    p->geo_tick_ns = 0;
    publish_queue(p);
}

gy_result gy_physics_get_geometry_stats(gy_physics *p, gy_physics_geometry_stats *out)
{
    if (p == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_phys_counters *c = &p->sh.counters;
    memset(out, 0, sizeof *out);
    out->budget = (uint32_t)p->cfg.geo_budget;
    out->jobs = (uint32_t)gy_phys_get(&c->geo_jobs);
    out->bodies_waiting = (uint32_t)gy_phys_get(&c->geo_parked);
    out->bytes_pending = gy_phys_get(&c->geo_bytes_pending);
    out->units_pending = gy_phys_get(&c->geo_units_pending);
    out->tick_units = gy_phys_get(&c->geo_tick_units);
    out->tick_adapter_units = gy_phys_get(&c->geo_tick_adapter_units);
    out->tick_ns = gy_phys_get(&c->geo_tick_ns);
    out->max_tick_units = gy_phys_get(&c->geo_max_tick_units);
    out->max_tick_ns = gy_phys_get(&c->geo_max_tick_ns);
    out->built = gy_phys_get(&c->geo_built);
    out->cancelled = gy_phys_get(&c->geo_cancelled);
    out->bodies_cancelled = gy_phys_get(&c->geo_parked_cancelled);
    out->slices = gy_phys_get(&c->geo_slices);
    out->max_piece_triangles = gy_phys_get(&c->geo_piece_triangles_max);
    return GY_OK;
}
