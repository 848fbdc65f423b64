/* Queries with results as entities: live ones through the adapter (gy_physics_raycast & co.) and
 * lock-free ones against the query snapshot. Hits name bodies by gy_physics_body_ref; a hit whose
 * ref is no longer the component's (removed or recreated this frame) is left out. */
#include <string.h>

#include "world_internal.h"
#include "gyre/backend/backend.h"

gy_world_query_filter gy_default_world_query_filter(void)
{
    gy_world_query_filter f;
    memset(&f, 0, sizeof f);
    f.mask = UINT32_MAX;
    f.motion_types = GY_MOTION_ALL;
    return f;
}

/* Resolves the caller's filter; *ignore_att / *ignore_body name the ignored body (0 if none). */
static gy_result resolve_filter(const gy_world *w, const gy_world_query_filter *in,
                                gy_world_query_filter *f, uint32_t *ignore_att,
                                gy_body_id *ignore_body)
{
    *f = in != NULL ? *in : gy_default_world_query_filter();
    *ignore_att = 0;
    ignore_body->bits = 0;
    if (gy_entity_is_null(f->ignore))
        return GY_OK;
    uint32_t slot = gy_w_entity_slot(w, f->ignore);
    if (slot == GY_W_NONE)
        return GY_ERR_STALE_HANDLE;
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (c != NULL && c->recorded) {
        *ignore_att = c->ref.generation;
        if (c->assigned)
            *ignore_body = c->body;
    }
    return GY_OK;
}

static gy_result reserve_hits(gy_world *w, uint32_t capacity)
{
    return gy_array_reserve(w->alloc, (void **)&w->hit_scratch, &w->hit_capacity, capacity,
                            sizeof *w->hit_scratch);
}

static gy_result reserve_snap(gy_world *w, uint32_t capacity)
{
    return gy_array_reserve(w->alloc, (void **)&w->snap_scratch, &w->snap_capacity, capacity,
                            sizeof *w->snap_scratch);
}

static gy_result check_out(const gy_world *w, const gy_world_hit *hits, uint32_t capacity,
                           const uint32_t *count)
{
    if (w == NULL || count == NULL || (capacity > 0 && hits == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

/* The query's numbers, held to the shared ranges (gyre/backend/backend.h) before anything else
 * looks at them, so a live query and a snapshot one refuse the same input with the same error,
 * whether physics runs or not. Rays have no shape. */
static gy_result check_query(bool ray, gy_vec3 origin, gy_vec3 translation, const gy_shape *shape,
                             gy_pose pose)
{
    if (!ray && shape == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_vector(origin, GY_MAX_MAGNITUDE);
    if (r == GY_OK)
        r = gy_validate_vector(translation, GY_MAX_MAGNITUDE);
    if (r == GY_OK && !ray) {
        r = gy_validate_shape(shape);
        if (r == GY_OK)
            r = gy_validate_pose(pose);
    }
    return r;
}

/* Translates adapter hits into the caller's buffer. */
static uint32_t translate_live(const gy_world *w, const gy_hit *in, uint32_t n, uint32_t ignore_att,
                               gy_world_hit *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t store = (uint32_t)(in[i].user_data >> 32);
        uint32_t att = (uint32_t)in[i].user_data;
        const gy_w_body *c = gy_w_body_by_ref(w, (gy_physics_body_ref){store, att});
        if (c == NULL || att == ignore_att)
            continue;
        gy_world_hit *h = &out[k++];
        h->entity = gy_w_entity_handle(w, gy_w_body_slot(w, c));
        h->point = in[i].point;
        h->normal = in[i].normal;
        h->fraction = in[i].fraction;
        h->distance = in[i].distance;
        h->penetration = in[i].penetration;
        h->triangle = in[i].triangle;
    }
    return k;
}

typedef enum live_kind { LIVE_RAY, LIVE_CAST, LIVE_OVERLAP } live_kind;

static gy_result live_query(gy_world *w, live_kind kind, gy_vec3 origin, const gy_shape *shape,
                            gy_pose pose, gy_vec3 translation, const gy_world_query_filter *filter,
                            gy_collector collector, gy_world_hit *hits, uint32_t capacity,
                            uint32_t *count, uint64_t *tick)
{
    gy_result r = check_out(w, hits, capacity, count);
    if (r != GY_OK)
        return r;
    *count = 0;
    gy_world_query_filter f;
    uint32_t ignore_att;
    gy_query_filter qf = gy_default_query_filter();
    r = resolve_filter(w, filter, &f, &ignore_att, &qf.ignore_body);
    if (r != GY_OK)
        return r;
    r = check_query(kind == LIVE_RAY, origin, translation, shape, pose);
    if (r != GY_OK)
        return r;
    if (!gy_w_running(w))
        return GY_ERR_INACTIVE;
    qf.mask = f.mask;
    qf.motion_types = f.motion_types;
    qf.include_sensors = f.include_sensors;
    r = reserve_hits(w, capacity > 0 ? capacity : 1u);
    if (r != GY_OK)
        return r;
    uint32_t n = 0;
    switch (kind) {
    case LIVE_RAY:
        r = gy_physics_raycast(w->physics, origin, translation, &qf, collector, w->hit_scratch,
                               capacity, &n, tick);
        break;
    case LIVE_CAST:
        r = gy_physics_shape_cast(w->physics, shape, pose, translation, &qf, collector,
                                  w->hit_scratch, capacity, &n, tick);
        break;
    case LIVE_OVERLAP:
        r = gy_physics_overlap(w->physics, shape, pose, &qf, collector, w->hit_scratch, capacity,
                               &n, tick);
        break;
    }
    if (r != GY_OK)
        return r;
    *count = translate_live(w, w->hit_scratch, n, ignore_att, hits);
    return GY_OK;
}

gy_result gy_world_raycast(gy_world *w, gy_vec3 origin, gy_vec3 translation,
                           const gy_world_query_filter *filter, gy_collector collector,
                           gy_world_hit *hits, uint32_t capacity, uint32_t *count, uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return live_query(w, LIVE_RAY, origin, NULL, gy_pose_identity(), translation, filter, collector,
                      hits, capacity, count, tick);
}

gy_result gy_world_shape_cast(gy_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                              const gy_world_query_filter *filter, gy_collector collector,
                              gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                              uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return live_query(w, LIVE_CAST, gy_v3(0, 0, 0), shape, pose, translation, filter, collector,
                      hits, capacity, count, tick);
}

gy_result gy_world_overlap(gy_world *w, const gy_shape *shape, gy_pose pose,
                           const gy_world_query_filter *filter, gy_collector collector,
                           gy_world_hit *hits, uint32_t capacity, uint32_t *count, uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return live_query(w, LIVE_OVERLAP, gy_v3(0, 0, 0), shape, pose, gy_v3(0, 0, 0), filter,
                      collector, hits, capacity, count, tick);
}

/* ---- snapshot -------------------------------------------------------------------------------- */

static uint32_t translate_snapshot(const gy_world *w, const gy_snapshot_hit *in, uint32_t n,
                                   gy_world_hit *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const gy_w_body *c = gy_w_body_by_ref(w, in[i].body);
        if (c == NULL)
            continue;
        gy_world_hit *h = &out[k++];
        memset(h, 0, sizeof *h);
        h->entity = gy_w_entity_handle(w, gy_w_body_slot(w, c));
        h->point = in[i].point;
        h->normal = in[i].normal;
        h->fraction = in[i].fraction;
        h->distance = in[i].distance;
        h->triangle = in[i].triangle;
    }
    return k;
}

typedef enum snapshot_kind { SNAPSHOT_RAY, SNAPSHOT_CAST, SNAPSHOT_OVERLAP } snapshot_kind;

/* The points of the World hull `shape` names for a snapshot cast; NULL when it names no live hull
 * (the cast then answers GY_ERR_STALE_HANDLE, as the live cast does). */
static const gy_hull_def *cast_hull(const gy_world *w, const gy_shape *shape, gy_hull_def *def)
{
    if (shape == NULL || shape->type != GY_SHAPE_HULL)
        return NULL;
    const gy_w_geometry *g = gy_w_geometry_get(w, shape->resource.bits);
    if (g == NULL || g->is_mesh)
        return NULL;
    def->points = g->vertices;
    def->point_count = g->vertex_count;
    return def;
}

static gy_result snapshot_query(gy_world *w, snapshot_kind kind, gy_vec3 origin,
                                gy_vec3 translation, const gy_shape *shape, gy_pose pose,
                                const gy_world_query_filter *filter, gy_collector collector,
                                gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                                uint64_t *tick)
{
    gy_result r = check_out(w, hits, capacity, count);
    if (r != GY_OK)
        return r;
    *count = 0;
    gy_world_query_filter f;
    uint32_t ignore_att;
    gy_body_id ignore_body;
    r = resolve_filter(w, filter, &f, &ignore_att, &ignore_body);
    if (r == GY_OK)
        r = check_query(kind == SNAPSHOT_RAY, origin, translation, shape, pose);
    if (r != GY_OK)
        return r;
    const gy_snapshot_view *v = gy_physics_acquire_query_view(w->physics);
    if (v == NULL)
        return GY_ERR_BUSY;
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    sf.mask = f.mask;
    sf.motion_types = f.motion_types;
    sf.include_sensors = f.include_sensors;
    sf.ignore_body.generation = ignore_att;
    r = reserve_snap(w, capacity > 0 ? capacity : 1u);
    if (r != GY_OK)
        return r;
    uint32_t n = 0;
    gy_hull_def hull;
    switch (kind) {
    case SNAPSHOT_RAY:
        r = gy_snapshot_view_raycast(v, origin, translation, &sf, collector, w->snap_scratch,
                                     capacity, &n);
        break;
    case SNAPSHOT_CAST:
        r = gy_snapshot_view_shape_cast(v, shape, cast_hull(w, shape, &hull), pose, translation,
                                        &sf, collector, w->snap_scratch, capacity, &n);
        break;
    case SNAPSHOT_OVERLAP:
        r = gy_snapshot_view_overlap(v, shape, cast_hull(w, shape, &hull), pose, &sf, collector,
                                     w->snap_scratch, capacity, &n);
        break;
    }
    if (r != GY_OK)
        return r;
    if (tick != NULL)
        *tick = gy_snapshot_view_tick(v);
    *count = translate_snapshot(w, w->snap_scratch, n, hits);
    return GY_OK;
}

gy_result gy_world_snapshot_raycast(gy_world *w, gy_vec3 origin, gy_vec3 translation,
                                    const gy_world_query_filter *filter, gy_collector collector,
                                    gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                                    uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return snapshot_query(w, SNAPSHOT_RAY, origin, translation, NULL, gy_pose_identity(), filter,
                          collector, hits, capacity, count, tick);
}

gy_result gy_world_snapshot_overlap(gy_world *w, const gy_shape *shape, gy_pose pose,
                                    const gy_world_query_filter *filter, gy_collector collector,
                                    gy_world_hit *hits, uint32_t capacity, uint32_t *count,
                                    uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return snapshot_query(w, SNAPSHOT_OVERLAP, gy_v3(0, 0, 0), gy_v3(0, 0, 0), shape, pose, filter,
                          collector, hits, capacity, count, tick);
}

gy_result gy_world_snapshot_shape_cast(gy_world *w, const gy_shape *shape, gy_pose pose,
                                       gy_vec3 translation, const gy_world_query_filter *filter,
                                       gy_collector collector, gy_world_hit *hits,
                                       uint32_t capacity, uint32_t *count, uint64_t *tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return snapshot_query(w, SNAPSHOT_CAST, gy_v3(0, 0, 0), translation, shape, pose, filter,
                          collector, hits, capacity, count, tick);
}
