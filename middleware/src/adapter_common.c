/* The adapter-neutral half of every adapter (adapter_common.h). */
#include "adapter_common.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "gyre/math.h"

/* Density scale when a body gives no total mass: relative density 1 means water. */
#define DEFAULT_DENSITY 1000.0

/* ---- rules ---------------------------------------------------------------------------------- */

double gy_adapter_bounce_speed(double approach, double offset, double accel, double e, double h)
{
    /* Speed at the surface, then the v with ½v² + a (offset + v h) = e² · ½ v_s² (semi-implicit
     * Euler: the step ends at offset + v h). */
    double surface_sq = fmax(0.0, approach * approach + 2.0 * accel * offset);
    double ah = accel * h;
    double disc = ah * ah - 2.0 * accel * offset + e * e * surface_sq;
    return fmax(0.0, -ah + sqrt(fmax(0.0, disc)));
}

bool gy_adapter_friction_direction(gy_vec3 rel, gy_vec3 n, gy_vec3 *dir)
{
    gy_vec3 t = gy_v3_mad(rel, n, -gy_v3_dot(rel, n));
    double speed = gy_v3_len(t);
    if (!(speed > GY_ADAPTER_SLIP_SPEED))
        return false;
    *dir = gy_v3_scale(t, 1.0 / speed);
    return true;
}

/* ---- threads -------------------------------------------------------------------------------- */

gy_result gy_adapter_threads_init(gy_adapter_threads *t)
{
    t->count = 0;
    return pthread_mutex_init(&t->lock, NULL) == 0 ? GY_OK : GY_ERR_BACKEND;
}

void gy_adapter_threads_fini(gy_adapter_threads *t)
{
    pthread_mutex_destroy(&t->lock);
}

static bool bound_locked(const gy_adapter_threads *t, pthread_t self, uint32_t *at)
{
    for (uint32_t i = 0; i < t->count; i++) {
        if (pthread_equal(t->ids[i], self)) {
            if (at != NULL)
                *at = i;
            return true;
        }
    }
    return false;
}

bool gy_adapter_threads_ok(const gy_adapter_threads *t)
{
#ifdef NDEBUG
    (void)t;
    return true;
#else
    gy_adapter_threads *mt = (gy_adapter_threads *)t; /* the lock, not the list, changes */
    pthread_mutex_lock(&mt->lock);
    bool ok = bound_locked(mt, pthread_self(), NULL);
    pthread_mutex_unlock(&mt->lock);
    return ok;
#endif
}

gy_result gy_adapter_threads_bind(gy_adapter_threads *t, gy_result (*on_bind)(void))
{
    pthread_t self = pthread_self();
    gy_result r = GY_OK;
    pthread_mutex_lock(&t->lock);
    if (!bound_locked(t, self, NULL)) {
        if (t->count >= GY_ADAPTER_MAX_THREADS)
            r = GY_ERR_CAPACITY;
        else if (on_bind != NULL)
            r = on_bind();
        if (r == GY_OK)
            t->ids[t->count++] = self;
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}

void gy_adapter_threads_unbind(gy_adapter_threads *t, void (*on_unbind)(void))
{
    uint32_t at;
    pthread_mutex_lock(&t->lock);
    if (bound_locked(t, pthread_self(), &at)) {
        t->ids[at] = t->ids[--t->count];
        if (on_unbind != NULL)
            on_unbind();
    }
    pthread_mutex_unlock(&t->lock);
}

bool gy_adapter_threads_may_read(gy_adapter_threads *t)
{
#ifdef NDEBUG
    (void)t;
    return true;
#else
    pthread_mutex_lock(&t->lock);
    bool ok = t->count == 0 || bound_locked(t, pthread_self(), NULL);
    pthread_mutex_unlock(&t->lock);
    return ok;
#endif
}

bool gy_adapter_threads_may_destroy(gy_adapter_threads *t, const gy_logger *log,
                                    const char *adapter)
{
    bool ok = gy_adapter_threads_may_read(t);
    if (!ok)
        gy_log(log, GY_LOG_ERROR,
               "%s: world_destroy from a thread that is not bound while another is; ignored",
               adapter);
    return ok;
}

/* ---- world ---------------------------------------------------------------------------------- */

gy_result gy_adapter_world_def(const gy_backend_world_def *in, gy_backend_world_def *out)
{
    gy_backend_world_def d = in != NULL ? *in : gy_default_backend_world_def();
    if (!gy_vec3_is_finite(d.gravity) || !gy_is_finite(d.world_half_extent))
        return GY_ERR_NON_FINITE;
    if (d.substeps > 16 || d.solver_iterations > 255 || d.world_half_extent < 0.0 ||
        gy_validate_vector(d.gravity, GY_MAX_MAGNITUDE) != GY_OK ||
        d.world_half_extent > GY_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    if (d.substeps == 0)
        d.substeps = 1;
    if (d.solver_iterations == 0)
        d.solver_iterations = 10;
    if (d.world_half_extent == 0.0)
        d.world_half_extent = 4096.0;
    d.allocator = gy_allocator_or_default(d.allocator);
    *out = d;
    return GY_OK;
}

gy_result gy_adapter_check_dt(double dt)
{
    if (!gy_is_finite(dt))
        return GY_ERR_NON_FINITE;
    return dt > 0.0 ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

void gy_adapter_counters(gy_backend_counters *out, const gy_adapter_tally *t,
                         const gy_handle_pool *bodies, const gy_handle_pool *colliders,
                         const gy_handle_pool *joints)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < GY_MOTION_TYPE_COUNT; k++)
        out->bodies[k] = t->bodies[k];
    out->colliders = colliders->live;
    out->sensors = t->sensors;
    out->joints = joints->live;
    out->resources = t->resources;
    out->live_objects = bodies->live + colliders->live + joints->live + t->resources;
}

bool gy_adapter_filter_accepts(const gy_query_filter *f, uint32_t category, gy_motion_type type,
                               bool is_sensor, gy_body_id body, gy_collider_id collider)
{
    gy_query_filter def;
    if (f == NULL) {
        def = gy_default_query_filter();
        f = &def;
    }
    if ((category & f->mask) == 0)
        return false;
    if ((f->motion_types & GY_MOTION_BIT(type)) == 0)
        return false;
    if (is_sensor && !f->include_sensors)
        return false;
    if (f->ignore_body.bits != 0 && f->ignore_body.bits == body.bits)
        return false;
    if (f->ignore_collider.bits != 0 && f->ignore_collider.bits == collider.bits)
        return false;
    return true;
}

/* ---- resources ------------------------------------------------------------------------------ */

gy_result gy_adapter_resource_publish(gy_handle_pool *pool, gy_adapter_tally *t,
                                      gy_adapter_resource *r, gy_resource_id *out)
{
    uint64_t h;
    gy_result res = gy_handle_pool_acquire(pool, r, &h);
    if (res != GY_OK)
        return res;
    r->id.bits = h;
    r->refs = 1;
    r->creator_ref = true;
    t->resources++;
    *out = r->id;
    return GY_OK;
}

bool gy_adapter_resource_unref(gy_adapter_tally *t, gy_adapter_resource *r)
{
    if (--r->refs > 0)
        return false;
    t->resources--;
    return true;
}

static gy_adapter_resource *disown(gy_handle_pool *pool, gy_adapter_tally *t,
                                   gy_adapter_resource *r, uint64_t handle)
{
    /* The id dies with the creator's reference; colliders keep the record alive. */
    gy_handle_pool_release(pool, handle);
    r->creator_ref = false;
    return gy_adapter_resource_unref(t, r) ? r : NULL;
}

gy_adapter_resource *gy_adapter_resource_release(gy_handle_pool *pool, gy_adapter_tally *t,
                                                 gy_resource_id id)
{
    gy_adapter_resource *r = gy_handle_pool_get(pool, id.bits);
    if (r == NULL || !r->creator_ref)
        return NULL;
    return disown(pool, t, r, id.bits);
}

gy_adapter_resource *gy_adapter_resource_release_at(gy_handle_pool *pool, gy_adapter_tally *t,
                                                    uint32_t index)
{
    uint64_t h;
    gy_adapter_resource *r = gy_handle_pool_at(pool, index, &h);
    return r != NULL ? disown(pool, t, r, h) : NULL;
}

static gy_result resource_begin(bool have_world, bool thread_ok, gy_resource_id *out)
{
    if (!have_world || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!thread_ok)
        return GY_ERR_WRONG_THREAD;
    out->bits = 0;
    return GY_OK;
}

gy_result gy_adapter_mesh_begin(bool have_world, bool thread_ok, const gy_mesh_def *def,
                                gy_resource_id *out)
{
    gy_result r = resource_begin(have_world, thread_ok, out);
    if (r == GY_OK)
        r = gy_validate_mesh_def(def);
    if (r == GY_OK &&
        (def->vertex_count > (uint32_t)INT_MAX / 3u || def->index_count > (uint32_t)INT_MAX / 3u))
        r = GY_ERR_INVALID_MESH;
    return r;
}

gy_result gy_adapter_hull_begin(bool have_world, bool thread_ok, const gy_hull_def *def,
                                gy_resource_id *out)
{
    gy_result r = resource_begin(have_world, thread_ok, out);
    return r == GY_OK ? gy_validate_hull_def(def) : r;
}

gy_result gy_adapter_hull_built_begin(bool have_world, bool thread_ok, const gy_hull *hull,
                                      gy_resource_id *out)
{
    gy_result r = resource_begin(have_world, thread_ok, out);
    return r == GY_OK ? gy_validate_hull(hull) : r;
}

gy_result gy_adapter_resource_mesh_init(const gy_allocator *al, const gy_mesh_def *def,
                                        const uint8_t *active_edges, gy_adapter_resource *r)
{
    r->kind = GY_SHAPE_MESH;
    r->vertices = gy_alloc(al, (size_t)def->vertex_count * 3u * sizeof(double));
    r->indices = gy_alloc(al, (size_t)def->index_count * sizeof(uint32_t));
    r->vertex_count = def->vertex_count;
    r->index_count = def->index_count;
    gy_result res = r->vertices != NULL && r->indices != NULL
                        ? gy_adapter_mesh_edges_build_piece(al, def, active_edges, &r->edges)
                        : GY_ERR_OUT_OF_MEMORY;
    if (res != GY_OK) {
        gy_adapter_resource_fini(al, r);
        return res;
    }
    for (uint32_t i = 0; i < def->vertex_count; i++) {
        r->vertices[3u * i + 0u] = def->vertices[i].x;
        r->vertices[3u * i + 1u] = def->vertices[i].y;
        r->vertices[3u * i + 2u] = def->vertices[i].z;
    }
    memcpy(r->indices, def->indices, (size_t)def->index_count * sizeof(uint32_t));
    return GY_OK;
}

gy_result gy_adapter_resource_hull_init(const gy_allocator *al, const gy_hull *hull,
                                        gy_adapter_resource *r)
{
    gy_result res = gy_hull_copy(al, hull, &r->hull);
    if (res == GY_OK)
        r->kind = GY_SHAPE_HULL; /* only now does the head own a hull to free */
    return res;
}

void gy_adapter_resource_fini(const gy_allocator *al, gy_adapter_resource *r)
{
    gy_free(al, r->vertices, (size_t)r->vertex_count * 3u * sizeof(double));
    gy_free(al, r->indices, (size_t)r->index_count * sizeof(uint32_t));
    gy_adapter_mesh_edges_free(al, &r->edges);
    if (r->kind == GY_SHAPE_HULL)
        gy_hull_free(al, &r->hull);
    r->vertices = NULL;
    r->indices = NULL;
    r->vertex_count = r->index_count = 0;
}

/* ---- bodies --------------------------------------------------------------------------------- */

gy_result gy_adapter_body_begin(bool have_world, bool thread_ok, const gy_allocator *al,
                                const gy_handle_pool *resources, const gy_body_def *def,
                                const gy_collider_def *cols, uint32_t n, gy_body_id *out,
                                gy_adapter_resource ***res)
{
    *res = NULL;
    if (!have_world || def == NULL || out == NULL || (n > 0 && cols == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    if (!thread_ok)
        return GY_ERR_WRONG_THREAD;
    out->bits = 0;
    gy_result r = gy_validate_body_def(def);
    if (r != GY_OK)
        return r;
    if (n > (1u << 20))
        return GY_ERR_INVALID_ARGUMENT;
    gy_adapter_resource **list = NULL;
    if (n > 0) {
        list = gy_alloc(al, (size_t)n * sizeof *list);
        if (list == NULL)
            return GY_ERR_OUT_OF_MEMORY;
    }
    r = gy_adapter_resolve_colliders(resources, def, cols, n, list);
    if (r != GY_OK) {
        gy_adapter_body_end(al, list, n);
        return r;
    }
    *res = list;
    return GY_OK;
}

void gy_adapter_body_end(const gy_allocator *al, gy_adapter_resource **res, uint32_t n)
{
    gy_free(al, res, (size_t)n * sizeof *res);
}

gy_result gy_adapter_resolve_colliders(const gy_handle_pool *resources, const gy_body_def *def,
                                       const gy_collider_def *cols, uint32_t n,
                                       gy_adapter_resource **res)
{
    for (uint32_t i = 0; i < n; i++) {
        gy_result r = gy_validate_collider_def(&cols[i], def->type);
        if (r != GY_OK)
            return r;
        res[i] = NULL;
        gy_shape_type t = cols[i].shape.type;
        if (t == GY_SHAPE_HULL || t == GY_SHAPE_MESH) {
            gy_adapter_resource *rs = gy_handle_pool_get(resources, cols[i].shape.resource.bits);
            if (rs == NULL)
                return GY_ERR_STALE_HANDLE;
            if (rs->kind != t)
                return GY_ERR_INVALID_SHAPE;
            res[i] = rs;
        }
    }
    return GY_OK;
}

gy_result gy_adapter_body_mass(const gy_body_def *def, const gy_collider_def *cols, uint32_t n,
                               gy_adapter_resource *const *res, gy_mass *out)
{
    if (def->has_mass_properties) {
        out->mass = def->mass;
        out->center = def->mass_properties.center_of_mass;
        out->inertia = def->mass_properties.inertia;
        return GY_OK;
    }
    bool any = false;
    gy_mass total;
    memset(&total, 0, sizeof total);
    /* Sensors count only on the second pass, reached when nothing else has volume. */
    for (int pass = 0; pass < 2 && !any; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            if (pass == 0 && cols[i].is_sensor)
                continue;
            const gy_hull *hull = res[i] != NULL ? &res[i]->hull : NULL;
            if (gy_shape_volume(&cols[i].shape, hull) <= 0.0)
                continue;
            double density = def->mass > 0.0 ? cols[i].density : DEFAULT_DENSITY * cols[i].density;
            gy_mass m = gy_shape_mass(&cols[i].shape, hull, density);
            m = gy_mass_transform(m, cols[i].local_pose);
            total = any ? gy_mass_add(total, m) : m;
            any = true;
        }
    }
    if (!any) {
        double m = def->mass > 0.0 ? def->mass : 1.0;
        total.mass = m;
        total.center = gy_v3(0.0, 0.0, 0.0);
        total.inertia = gy_mat3_diag(0.1 * m, 0.1 * m, 0.1 * m);
    } else if (def->mass > 0.0) {
        total = gy_mass_scale_to(total, def->mass);
    }
    if (!gy_is_finite(total.mass) || !(total.mass > 0.0) || !gy_vec3_is_finite(total.center))
        return GY_ERR_INVALID_SHAPE;
    *out = total;
    return GY_OK;
}

/* The radius of the sphere about a shape's origin that holds it; 0 for a plane. */
static double shape_reach(const gy_shape *s, const gy_adapter_resource *res)
{
    double far = 0.0;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        return s->radius;
    case GY_SHAPE_CAPSULE:
        return 0.5 * s->height; /* the height includes the caps */
    case GY_SHAPE_BOX:
        return 0.5 * gy_v3_len(s->box_size);
    case GY_SHAPE_CYLINDER:
        return sqrt(s->radius * s->radius + 0.25 * s->height * s->height);
    case GY_SHAPE_HULL:
        for (uint32_t i = 0; res != NULL && i < res->hull.vertex_count; i++)
            far = fmax(far, gy_v3_len(res->hull.vertices[i]));
        return far;
    case GY_SHAPE_MESH:
        for (uint32_t i = 0; res != NULL && i < res->vertex_count; i++) {
            const double *v = &res->vertices[3u * i];
            far = fmax(far, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
        }
        return far;
    default:
        return 0.0;
    }
}

double gy_adapter_body_extent(const gy_collider_def *cols, uint32_t n,
                              gy_adapter_resource *const *res, gy_vec3 com)
{
    double extent = 0.0;
    bool solid = false;
    for (uint32_t i = 0; i < n; i++)
        solid = solid || !cols[i].is_sensor;
    for (uint32_t i = 0; i < n; i++) {
        if (solid && cols[i].is_sensor)
            continue;
        double from_com = gy_v3_len(gy_v3_sub(cols[i].local_pose.position, com));
        extent = fmax(extent, from_com + shape_reach(&cols[i].shape, res[i]));
    }
    return extent;
}

gy_mat3 gy_adapter_inertia_inverse(gy_mat3 m)
{
    double(*a)[3] = m.m;
    double c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    double c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2];
    double c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    double det = a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02;
    gy_mat3 r = gy_mat3_zero();
    if (!(fabs(det) > 0.0))
        return r;
    double inv = 1.0 / det;
    r.m[0][0] = c00 * inv;
    r.m[0][1] = (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * inv;
    r.m[0][2] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * inv;
    r.m[1][0] = c01 * inv;
    r.m[1][1] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * inv;
    r.m[1][2] = (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * inv;
    r.m[2][0] = c02 * inv;
    r.m[2][1] = (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * inv;
    r.m[2][2] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * inv;
    return r;
}

double gy_adapter_damping_loss(double d, double dt)
{
    return 1.0 - exp(-d * dt);
}

double gy_adapter_hull_inner_radius(const gy_hull *h)
{
    double r = INFINITY;
    for (uint32_t f = 0; f < h->triangle_count; f++) {
        const double *p = h->planes[f];
        r = fmin(r, p[3] - (p[0] * h->centroid.x + p[1] * h->centroid.y + p[2] * h->centroid.z));
    }
    return r > 0.0 && isfinite(r) ? r : 0.0;
}

gy_result gy_adapter_hull_shrink(const gy_allocator *al, const gy_hull *h, double margin,
                                 gy_adapter_hull_points *out)
{
    out->count = 0;
    double planes[GY_ADAPTER_HULL_SHRINK_MAX_PLANES][4];
    uint32_t np = 0;
    double scale = 0.0;
    for (uint32_t i = 0; i < h->vertex_count; i++)
        scale = fmax(scale, gy_v3_len(gy_v3_sub(h->vertices[i], h->centroid)));
    const double eps = 1e-9 * (1.0 + scale);
    for (uint32_t f = 0; f < h->triangle_count; f++) {
        const double *p = h->planes[f];
        bool dup = false;
        for (uint32_t k = 0; k < np && !dup; k++)
            dup = fabs(planes[k][0] - p[0]) < 1e-9 && fabs(planes[k][1] - p[1]) < 1e-9 &&
                  fabs(planes[k][2] - p[2]) < 1e-9 && fabs(planes[k][3] - p[3]) < eps;
        if (dup)
            continue;
        if (np == GY_ADAPTER_HULL_SHRINK_MAX_PLANES)
            return GY_OK;
        planes[np][0] = p[0];
        planes[np][1] = p[1];
        planes[np][2] = p[2];
        planes[np][3] = p[3] - margin;
        np++;
    }
    for (uint32_t i = 0; i < np; i++) {
        gy_vec3 ni = gy_v3(planes[i][0], planes[i][1], planes[i][2]);
        for (uint32_t j = i + 1; j < np; j++) {
            gy_vec3 nj = gy_v3(planes[j][0], planes[j][1], planes[j][2]);
            for (uint32_t k = j + 1; k < np; k++) {
                gy_vec3 nk = gy_v3(planes[k][0], planes[k][1], planes[k][2]);
                gy_vec3 jk = gy_v3_cross(nj, nk), ki = gy_v3_cross(nk, ni),
                        ij = gy_v3_cross(ni, nj);
                double det = gy_v3_dot(ni, jk);
                if (fabs(det) < 1e-9)
                    continue;
                gy_vec3 sum = gy_v3_add(
                    gy_v3_add(gy_v3_scale(jk, planes[i][3]), gy_v3_scale(ki, planes[j][3])),
                    gy_v3_scale(ij, planes[k][3]));
                gy_vec3 p = gy_v3_scale(sum, 1.0 / det);
                bool inside = true;
                for (uint32_t m = 0; m < np && inside; m++)
                    inside = planes[m][0] * p.x + planes[m][1] * p.y + planes[m][2] * p.z <=
                             planes[m][3] + eps;
                bool seen = false;
                for (uint32_t q = 0; inside && q < out->count && !seen; q++)
                    seen = gy_v3_len_sq(gy_v3_sub(out->items[q], p)) < eps * eps;
                if (inside && !seen && gy_adapter_hull_points_push(al, out, p) != GY_OK) {
                    gy_adapter_hull_points_free(al, out);
                    return GY_ERR_OUT_OF_MEMORY;
                }
            }
        }
    }
    if (out->count < 4)
        out->count = 0;
    return GY_OK;
}

double gy_adapter_shape_inner_radius(const gy_shape *s, const gy_hull *hull, gy_vec3 *center)
{
    *center = gy_v3(0.0, 0.0, 0.0);
    switch (s->type) {
    case GY_SHAPE_SPHERE:
    case GY_SHAPE_CAPSULE:
        return s->radius;
    case GY_SHAPE_BOX:
        return 0.5 * fmin(s->box_size.x, fmin(s->box_size.y, s->box_size.z));
    case GY_SHAPE_CYLINDER:
        return fmin(s->radius, 0.5 * s->height);
    case GY_SHAPE_HULL:
        if (hull == NULL)
            return 0.0;
        *center = hull->centroid;
        return gy_adapter_hull_inner_radius(hull);
    default:
        return 0.0;
    }
}

bool gy_adapter_shape_convex(const gy_shape *s, const gy_hull *hull, gy_pose pose, gy_convex *out)
{
    memset(out, 0, sizeof *out);
    out->pose = pose;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        out->core = GY_CONVEX_POINT;
        out->radius = s->radius;
        return true;
    case GY_SHAPE_CAPSULE:
        out->core = GY_CONVEX_SEGMENT;
        out->radius = s->radius;
        out->half_length = 0.5 * s->height - s->radius;
        return true;
    case GY_SHAPE_BOX:
        out->core = GY_CONVEX_BOX;
        out->half = gy_v3_scale(s->box_size, 0.5);
        return true;
    case GY_SHAPE_CYLINDER:
        out->core = GY_CONVEX_CYLINDER;
        out->half = gy_v3(s->radius, 0.5 * s->height, 0.0);
        return true;
    case GY_SHAPE_HULL:
        if (hull == NULL || hull->vertex_count == 0)
            return false;
        out->core = GY_CONVEX_CLOUD;
        out->points = hull->vertices;
        out->point_count = hull->vertex_count;
        return true;
    default:
        return false;
    }
}

void gy_adapter_ccd_begin(gy_adapter_ccd_radius *c)
{
    c->best = 0.0;
    c->smallest = INFINITY;
}

void gy_adapter_ccd_add(gy_adapter_ccd_radius *c, const gy_shape *s, const gy_hull *hull,
                        gy_pose local_pose, gy_vec3 com)
{
    gy_vec3 center;
    double r = gy_adapter_shape_inner_radius(s, hull, &center);
    if (r <= 0.0)
        return;
    gy_vec3 at = gy_pose_apply(local_pose, center);
    c->best = fmax(c->best, r - gy_v3_len(gy_v3_sub(at, com)));
    c->smallest = fmin(c->smallest, r);
}

double gy_adapter_ccd_end(const gy_adapter_ccd_radius *c)
{
    double smallest = isfinite(c->smallest) ? c->smallest : 0.0;
    if (c->best > 0.05 * smallest && c->best > 0.0)
        return c->best;
    return smallest;
}

void gy_adapter_kinematic_velocity(gy_vec3 from, gy_quat rotation, gy_vec3 to, gy_quat target,
                                   double dt, gy_vec3 *linear, gy_vec3 *angular)
{
    *linear = gy_v3_scale(gy_v3_sub(to, from), 1.0 / dt);
    gy_vec3 axis;
    double s, angle = gy_quat_turn(rotation, target, &axis, &s);
    *angular = angle > 0.0 ? gy_v3_scale(axis, angle / (s * dt)) : gy_v3(0.0, 0.0, 0.0);
}

gy_result gy_adapter_joint_begin(bool have_world, bool thread_ok, const gy_handle_pool *bodies,
                                 const gy_joint_def *def, gy_joint_id *out, void **a, void **b)
{
    *a = *b = NULL;
    if (!have_world || def == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!thread_ok)
        return GY_ERR_WRONG_THREAD;
    out->bits = 0;
    gy_result r = gy_validate_joint_def(def);
    if (r != GY_OK)
        return r;
    *a = gy_handle_pool_get(bodies, def->a.bits);
    if (*a == NULL)
        return GY_ERR_STALE_HANDLE;
    if (def->b.bits != 0) {
        *b = gy_handle_pool_get(bodies, def->b.bits);
        if (*b == NULL)
            return GY_ERR_STALE_HANDLE;
    }
    return GY_OK;
}

gy_result gy_adapter_joint_length(const gy_joint_def *def, gy_vec3 a_origin, gy_joint_type *type,
                                  double *distance)
{
    *type = def->type;
    *distance = 0.0;
    if (def->type != GY_JOINT_DISTANCE)
        return GY_OK;
    double now = gy_v3_len(gy_v3_sub(a_origin, def->anchor));
    *distance = def->distance >= 0.0 ? def->distance : now;
    if (*distance < 1e-6) {
        if (now >= 1e-6)
            return GY_ERR_INVALID_ARGUMENT;
        *type = GY_JOINT_BALL;
    }
    return GY_OK;
}

/* ---- queries -------------------------------------------------------------------------------- */

gy_result gy_adapter_query_begin(gy_adapter_query *q, bool have_world, bool thread_ok,
                                 const gy_handle_pool *bodies, const gy_handle_pool *colliders,
                                 const gy_query_filter *filter, gy_collector collector,
                                 gy_hit *hits, uint32_t capacity, uint32_t *count)
{
    if (count != NULL)
        *count = 0;
    if (!have_world || count == NULL || (hits == NULL && capacity > 0) ||
        (unsigned)collector > GY_COLLECT_ALL)
        return GY_ERR_INVALID_ARGUMENT;
    if (filter != NULL) {
        gy_result r = gy_validate_query_filter(filter);
        if (r != GY_OK)
            return r;
    }
    if (!thread_ok)
        return GY_ERR_WRONG_THREAD;
    if (filter != NULL && ((filter->ignore_body.bits != 0 &&
                            !gy_handle_pool_is_valid(bodies, filter->ignore_body.bits)) ||
                           (filter->ignore_collider.bits != 0 &&
                            !gy_handle_pool_is_valid(colliders, filter->ignore_collider.bits))))
        return GY_ERR_STALE_HANDLE;
    memset(q, 0, sizeof *q);
    q->filter = filter;
    q->collector = collector;
    q->hits = hits;
    q->capacity = collector == GY_COLLECT_ALL ? capacity : (capacity > 0 ? 1u : 0u);
    q->stop = q->capacity == 0;
    return GY_OK;
}

bool gy_adapter_query_collect(gy_adapter_query *q, const gy_hit *h)
{
    /* What the middleware computed is not handed on unless it is finite: a hit with a NaN point
     * (seen on Bullet under hostile loads) is left out, as if it were not there. */
    if (!gy_vec3_is_finite(h->point) || !gy_vec3_is_finite(h->normal) ||
        !gy_is_finite(h->fraction) || !gy_is_finite(h->distance) || !gy_is_finite(h->penetration))
        return false;
    switch (q->collector) {
    case GY_COLLECT_ANY:
        q->hits[0] = *h;
        q->count = 1;
        q->stop = true;
        return true;
    case GY_COLLECT_CLOSEST:
        if (q->count == 0 || h->fraction < q->hits[0].fraction ||
            (h->fraction == q->hits[0].fraction && h->penetration > q->hits[0].penetration)) {
            q->hits[0] = *h;
            q->count = 1;
        }
        return false;
    case GY_COLLECT_ALL:
    default:
        q->hits[q->count++] = *h;
        if (q->count < q->capacity)
            return false;
        q->stop = true;
        return true;
    }
}

bool gy_adapter_query_wants_statics(const gy_adapter_query *q)
{
    return q->filter == NULL || (q->filter->motion_types & GY_MOTION_BIT(GY_MOTION_STATIC)) != 0;
}

bool gy_adapter_query_wants_moving(const gy_adapter_query *q)
{
    return q->filter == NULL ||
           (q->filter->motion_types &
            (GY_MOTION_BIT(GY_MOTION_DYNAMIC) | GY_MOTION_BIT(GY_MOTION_KINEMATIC))) != 0;
}

gy_result gy_adapter_check_translation(const gy_vec3 *origin, gy_vec3 translation, double *length)
{
    gy_result r = origin != NULL ? gy_validate_vector(*origin, GY_MAX_MAGNITUDE) : GY_OK;
    if (r == GY_OK)
        r = gy_validate_vector(translation, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    *length = gy_v3_len(translation);
    return isfinite(*length) ? GY_OK : GY_ERR_NON_FINITE;
}

gy_result gy_adapter_check_query_shape(const gy_handle_pool *resources, const gy_shape *shape,
                                       gy_pose pose)
{
    gy_result r = gy_validate_query_shape(shape, pose);
    if (r != GY_OK || shape->type != GY_SHAPE_HULL)
        return r;
    const gy_adapter_resource *res = gy_handle_pool_get(resources, shape->resource.bits);
    return res != NULL && res->kind == GY_SHAPE_HULL ? GY_OK : GY_ERR_STALE_HANDLE;
}

void gy_adapter_hit_init(gy_hit *h, gy_body_id body, gy_collider_id collider, uint64_t user_data)
{
    memset(h, 0, sizeof *h);
    h->body = body;
    h->collider = collider;
    h->user_data = user_data;
    h->triangle = -1;
}

/* ---- step records --------------------------------------------------------------------------- */

void gy_adapter_note_error(gy_result *first, gy_result r)
{
    if (*first == GY_OK)
        *first = r;
}

static gy_map_key pair_key(const void *a, const void *b)
{
    return gy_map_key_pair((uint64_t)(uintptr_t)a, (uint64_t)(uintptr_t)b);
}

void gy_adapter_pair_map_reset(gy_adapter_pair_map *m)
{
    gy_hash_map_clear(m);
}

uint32_t gy_adapter_pair_map_find(const gy_adapter_pair_map *m, const void *a, const void *b)
{
    const uint64_t *index = gy_hash_map_find(m, pair_key(a, b));
    return index != NULL ? (uint32_t)*index : UINT32_MAX;
}

void gy_adapter_pair_map_free(const gy_allocator *al, gy_adapter_pair_map *m)
{
    m->allocator = al;
    gy_hash_map_fini(m);
}

static size_t report_block_size(uint32_t capacity, size_t pair_size)
{
    return (size_t)capacity * (sizeof(gy_contact) + pair_size);
}

static void *report_record(const gy_adapter_report *r, size_t pair_size, uint32_t i)
{
    return (unsigned char *)r->pairs + (size_t)i * pair_size;
}

static gy_result report_grow(const gy_allocator *al, gy_adapter_report *r, size_t pair_size,
                             uint32_t need)
{
    if (need <= r->capacity)
        return GY_OK;
    uint64_t grown = gy_capacity_for(r->capacity, 64u, need);
    if (grown > UINT32_MAX)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t cap = (uint32_t)grown;
    unsigned char *block = gy_alloc(al, report_block_size(cap, pair_size));
    if (block == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    unsigned char *records = block + (size_t)cap * sizeof(gy_contact);
    if (r->count > 0) {
        memcpy(block, r->contacts, (size_t)r->count * sizeof(gy_contact));
        memcpy(records, r->pairs, (size_t)r->count * pair_size);
    }
    gy_free(al, r->contacts, report_block_size(r->capacity, pair_size));
    r->contacts = (gy_contact *)(void *)block;
    r->pairs = records;
    r->capacity = cap;
    return GY_OK;
}

uint32_t gy_adapter_report_pair(const gy_allocator *al, gy_adapter_report *r, size_t pair_size,
                                gy_adapter_pair_map *map, const void *a, const void *b,
                                gy_result *error)
{
    /* One probe finds the pair or makes its entry. */
    map->allocator = al;
    uint64_t *entry;
    bool inserted;
    gy_result res = gy_hash_map_upsert(map, pair_key(a, b), &entry, &inserted);
    if (res == GY_OK && !inserted)
        return (uint32_t)*entry;
    if (res == GY_OK) {
        res = report_grow(al, r, pair_size, r->count + 1u);
        if (res != GY_OK)
            gy_hash_map_remove(map, pair_key(a, b), NULL);
    }
    if (res != GY_OK) {
        gy_adapter_note_error(error, res);
        return UINT32_MAX;
    }
    *entry = r->count;
    uint32_t index = r->count++;
    memset(&r->contacts[index], 0, sizeof(gy_contact));
    memset(report_record(r, pair_size, index), 0, pair_size);
    return index;
}

void gy_adapter_report_swap(gy_adapter_report *current, gy_adapter_report *previous)
{
    gy_adapter_report last = *current;
    *current = *previous;
    current->count = 0;
    *previous = last;
}

/* Removes, in order, the entries `drop` picks (by contact or by the adapter's record). */
static void report_remove(gy_adapter_report *r, size_t pair_size,
                          bool (*drop)(const gy_contact *c, const void *pair, const void *ctx),
                          const void *ctx)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        if (drop(&r->contacts[i], report_record(r, pair_size, i), ctx))
            continue;
        if (k != i) {
            r->contacts[k] = r->contacts[i];
            memcpy(report_record(r, pair_size, k), report_record(r, pair_size, i), pair_size);
        }
        k++;
    }
    r->count = k;
}

typedef struct record_drop {
    bool (*drop)(const void *pair, const void *ctx);
    const void *ctx;
} record_drop;

static bool drop_by_record(const gy_contact *c, const void *pair, const void *ctx)
{
    (void)c;
    const record_drop *d = ctx;
    return d->drop(pair, d->ctx);
}

void gy_adapter_report_remove_if(gy_adapter_report *r, size_t pair_size,
                                 bool (*drop)(const void *pair, const void *ctx), const void *ctx)
{
    record_drop d = {drop, ctx};
    report_remove(r, pair_size, drop_by_record, &d);
}

static bool contact_names_body(const gy_contact *c, const void *pair, const void *ctx)
{
    (void)pair;
    const gy_body_id *id = ctx;
    return c->body_a.bits == id->bits || c->body_b.bits == id->bits;
}

void gy_adapter_report_forget_body(gy_adapter_report *current, gy_adapter_report *previous,
                                   size_t pair_size, gy_adapter_pair_map *map, gy_body_id id)
{
    report_remove(current, pair_size, contact_names_body, &id);
    /* The previous report is only read at the next step start; forget there too. */
    report_remove(previous, pair_size, contact_names_body, &id);
    gy_adapter_pair_map_reset(map);
}

void gy_adapter_report_touching(const gy_adapter_report *r, gy_body_id id,
                                void (*visit)(void *ctx, gy_body_id other), void *ctx)
{
    for (uint32_t i = 0; i < r->count; i++) {
        const gy_contact *c = &r->contacts[i];
        if (c->body_a.bits == id.bits)
            visit(ctx, c->body_b);
        else if (c->body_b.bits == id.bits)
            visit(ctx, c->body_a);
    }
}

void gy_adapter_report_free(const gy_allocator *al, gy_adapter_report *r, size_t pair_size)
{
    gy_free(al, r->contacts, report_block_size(r->capacity, pair_size));
    r->contacts = NULL;
    r->pairs = NULL;
    r->count = 0;
    r->capacity = 0;
}

gy_result gy_adapter_broken_push(const gy_allocator *al, gy_adapter_broken *b, gy_joint_id id,
                                 uint64_t user)
{
    /* Room in both first, so a failure leaves the two the same length. */
    gy_result r = gy_adapter_u64s_reserve(al, &b->user, b->ids.count + 1u);
    if (r == GY_OK)
        r = gy_adapter_joint_ids_push(al, &b->ids, id);
    if (r != GY_OK)
        return r;
    return gy_adapter_u64s_push(al, &b->user, user);
}

void gy_adapter_broken_clear(gy_adapter_broken *b)
{
    b->ids.count = 0;
    b->user.count = 0;
}

void gy_adapter_broken_free(const gy_allocator *al, gy_adapter_broken *b)
{
    gy_adapter_joint_ids_free(al, &b->ids);
    gy_adapter_u64s_free(al, &b->user);
}

uint32_t gy_adapter_broken_read(const gy_adapter_broken *b, const gy_joint_id **out,
                                const uint64_t **user)
{
    if (out != NULL)
        *out = b->ids.items;
    if (user != NULL)
        *user = b->user.items;
    return b->ids.count;
}

/* ---- rules the drivers apply ---------------------------------------------------------------- */

void gy_adapter_sleep_reset(gy_adapter_sleep *s)
{
    s->samples = 0;
    s->rest_time = 0.0;
}

double gy_adapter_sleep_turn(double extent)
{
    double turn = GY_ADAPTER_SLEEP_ANGULAR_SPEED;
    if (extent > 0.0)
        turn = fmin(turn, GY_ADAPTER_SLEEP_LINEAR_SPEED / extent);
    return turn;
}

bool gy_adapter_sleep_sample(gy_adapter_sleep *s, gy_vec3 linear, gy_vec3 angular, double turn,
                             double h)
{
    s->linear[s->next] = linear;
    s->angular[s->next] = angular;
    s->next = (s->next + 1u) % GY_ADAPTER_SLEEP_SAMPLES;
    if (s->samples < GY_ADAPTER_SLEEP_SAMPLES)
        s->samples++;
    bool resting = false;
    if (s->samples == GY_ADAPTER_SLEEP_SAMPLES) {
        /* The vector average: jitter about rest cancels, a slow steady drift does not. */
        gy_vec3 lin = gy_v3(0, 0, 0), ang = gy_v3(0, 0, 0);
        for (uint32_t k = 0; k < GY_ADAPTER_SLEEP_SAMPLES; k++) {
            lin = gy_v3_add(lin, s->linear[k]);
            ang = gy_v3_add(ang, s->angular[k]);
        }
        const double n = (double)GY_ADAPTER_SLEEP_SAMPLES;
        resting = gy_v3_len(lin) < GY_ADAPTER_SLEEP_LINEAR_SPEED * n && gy_v3_len(ang) < turn * n;
    }
    s->rest_time = resting ? s->rest_time + h : 0.0;
    return s->rest_time >= GY_ADAPTER_SLEEP_TIME;
}

bool gy_adapter_ballistic_applies(gy_motion_type type, bool awake, bool in_contact,
                                  uint32_t joint_count, double gravity_factor)
{
    return type == GY_MOTION_DYNAMIC && !in_contact && joint_count == 0 && gravity_factor != 0.0 &&
           awake;
}

gy_vec3 gy_adapter_ballistic_shift(gy_vec3 g, double gravity_factor, double h)
{
    double k = -0.5 * gravity_factor * h * h;
    return gy_v3(g.x * k, g.y * k, g.z * k);
}

void gy_adapter_project_locks(const bool linear[3], const bool angular[3], gy_vec3 lock_position,
                              gy_vec3 *position, gy_vec3 *velocity, gy_vec3 *angular_velocity)
{
    double p[3] = {position->x, position->y, position->z};
    double v[3] = {velocity->x, velocity->y, velocity->z};
    double a[3] = {angular_velocity->x, angular_velocity->y, angular_velocity->z};
    const double lock[3] = {lock_position.x, lock_position.y, lock_position.z};
    for (int k = 0; k < 3; k++) {
        if (linear[k]) {
            p[k] = lock[k];
            v[k] = 0.0;
        }
        if (angular[k])
            a[k] = 0.0;
    }
    *position = gy_v3(p[0], p[1], p[2]);
    *velocity = gy_v3(v[0], v[1], v[2]);
    *angular_velocity = gy_v3(a[0], a[1], a[2]);
}

bool gy_adapter_ccd_filter_accepts(uint32_t category, uint32_t mask, bool other_body,
                                   bool c_is_sensor, bool c_contact_response, uint32_t c_category,
                                   uint32_t c_mask)
{
    if (!other_body || c_is_sensor || !c_contact_response)
        return false;
    return (c_category & mask) != 0 && (category & c_mask) != 0;
}

bool gy_adapter_ccd_one_way_accepts(gy_vec3 motion, gy_vec3 n)
{
    return gy_v3_dot(motion, n) < 0.0;
}

/* ---- one-way verdicts ----------------------------------------------------------------------- */

gy_adapter_one_way *gy_adapter_one_way_find(gy_adapter_one_ways *l, const void *platform,
                                            const void *other, uint64_t step)
{
    for (uint32_t i = 0; i < l->count; i++)
        if (l->items[i].platform == platform && l->items[i].other == other) {
            l->items[i].seen_step = step;
            return &l->items[i];
        }
    return NULL;
}

gy_result gy_adapter_one_way_add(const gy_allocator *al, gy_adapter_one_ways *l,
                                 const gy_adapter_one_way *rec)
{
    return gy_adapter_one_ways_push(al, l, *rec);
}

void gy_adapter_one_way_expire(gy_adapter_one_ways *l, uint64_t step)
{
    for (uint32_t i = 0; i < l->count;) {
        if (l->items[i].seen_step != step)
            l->items[i] = l->items[--l->count];
        else
            i++;
    }
}

void gy_adapter_one_way_forget_body(gy_adapter_one_ways *l, const void *body)
{
    for (uint32_t i = 0; i < l->count;) {
        if (l->items[i].platform_body == body || l->items[i].other_body == body)
            l->items[i] = l->items[--l->count];
        else
            i++;
    }
}

void gy_adapter_one_way_free(const gy_allocator *al, gy_adapter_one_ways *l)
{
    gy_adapter_one_ways_free(al, l);
}

/* ---- breakable joints ----------------------------------------------------------------------- */

uint32_t gy_adapter_breakables_add(gy_adapter_breakables *l, void *joint)
{
    assert(l->count < l->capacity);
    l->items[l->count] = joint;
    return l->count++;
}

void *gy_adapter_breakables_remove(gy_adapter_breakables *l, uint32_t index)
{
    assert(index < l->count);
    void *last = l->items[--l->count];
    l->items[index] = last;
    return last;
}
