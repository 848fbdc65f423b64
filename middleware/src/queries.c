/* Queries written once over a driver's walks and raw tests (queries.h, driver.h). */
#include <math.h>

#include "driver.h"
#include "gyre/math.h"
#include "queries.h"

/* A convex cast starting within this many metres of a candidate hits it at fraction 0 (the
 * query snapshot's touch tolerance). */
#define CAST_TOUCH 1e-7

static const gy_adapter_collider *record(const struct gy_driver_collider *c)
{
    return (const gy_adapter_collider *)(const void *)c;
}

/* A search over the prepared query `q`, moving along `translation` (|translation| = length). */
static gy_adapter_search search_init(const gy_driver *d, gy_driver_world *dw,
                                     const gy_adapter_query *q, bool ray, bool cast,
                                     gy_vec3 translation, double length)
{
    gy_adapter_search s = {.q = *q, .driver = d, .dw = dw, .ray = ray, .cast = cast};
    s.filter = q->filter != NULL ? *q->filter : gy_default_query_filter();
    s.translation = translation;
    s.length = length;
    return s;
}

bool gy_adapter_search_wants(const gy_adapter_search *s, gy_motion_type type)
{
    return s->q.filter == NULL || (s->q.filter->motion_types & GY_MOTION_BIT(type)) != 0;
}

/* A hit naming the collider and its body: the record's ids and the body's user value. */
static void hit_begin(gy_hit *h, const gy_adapter_collider *rec)
{
    gy_adapter_hit_init(h, rec->owner->id, rec->id, rec->owner->user_data);
}

static void visit_ray(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c)
{
    gy_driver_hit raw;
    if (!s->driver->ray_test(s->dw, dq, c, &raw))
        return;
    double bound;
    if (gy_adapter_search_bound(s, &bound) && raw.t >= bound)
        return;
    gy_hit h;
    hit_begin(&h, record(c));
    h.triangle = raw.triangle;
    h.distance = raw.t;
    h.fraction = fmin(1.0, fmax(0.0, raw.t / s->length));
    h.point = raw.point;
    h.normal = raw.normal;
    /* Mesh triangles are two-sided for rays: a triangle hit from behind faces the ray. */
    if (h.triangle >= 0 && gy_v3_dot(h.normal, s->dir) > 0.0)
        h.normal = gy_v3_neg(h.normal);
    gy_adapter_query_collect(&s->q, &h);
}

/* A shape query's hit at `fraction` of the translation. */
static void collect_shape(gy_adapter_search *s, const gy_adapter_collider *rec, double fraction,
                          gy_vec3 point, gy_vec3 normal, double penetration, int32_t triangle)
{
    gy_hit h;
    hit_begin(&h, rec);
    h.triangle = triangle;
    h.fraction = fraction;
    h.distance = fraction * s->length;
    h.point = point;
    h.normal = normal;
    h.penetration = penetration;
    gy_adapter_query_collect(&s->q, &h);
}

/* Two convex shapes: conservative advancement on GJK distances (gyre/convex.h, the query
 * snapshot's own) lands on the first contact however shallow, where the vendors' casts end short
 * of a graze or step past it. False when the collider is not convex (a plane, a mesh). */
static bool cast_convex(gy_adapter_search *s, gy_driver_collider *c, double lo, double hi)
{
    const gy_adapter_collider *rec = record(c);
    const gy_hull *hull = NULL;
    gy_pose body = s->driver->collider_body_pose(s->dw, c, &hull);
    gy_convex target;
    gy_shape shape = gy_adapter_collider_shape(rec);
    if (!gy_adapter_shape_convex(&shape, hull,
                                 gy_pose_mul(body, gy_adapter_collider_local_pose(rec)), &target))
        return false;
    gy_convex_hit ch;
    if (gy_convex_cast(&s->shape, s->translation, &target, lo, hi, CAST_TOUCH, &ch))
        collect_shape(s, rec, ch.fraction, ch.point, ch.normal, 0.0, -1);
    return true;
}

/* A shape at its start pose that already touches a candidate hits it at fraction 0 with its
 * penetration, even when the cast moves away (a caller sliding out of a surface skips those);
 * otherwise a cast looks for the first contact in the fractions the driver's window leaves. */
static void visit_shape(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c)
{
    const gy_driver *d = s->driver;
    double t0 = 0.0, t1 = 1.0;
    if (s->cast) {
        gy_adapter_search_bound(s, &t1);
        if (d->cast_window != NULL && !d->cast_window(s->dw, dq, c, &t0, &t1))
            return;
    }
    gy_driver_hit raw;
    if (t0 <= 0.0 && d->shape_contact(s->dw, dq, c, &raw)) {
        collect_shape(s, record(c), 0.0, raw.point, raw.normal, raw.depth, raw.triangle);
        return;
    }
    if (!s->cast || !(s->length > 0.0))
        return;
    /* Before the window opens the two are apart. */
    double lo = t0 > 0.0 ? t0 : 0.0;
    if (s->convex && cast_convex(s, c, lo, t1))
        return;
    if (d->cast_test(s->dw, dq, c, lo, t1, &raw))
        collect_shape(s, record(c), raw.t, raw.point, raw.normal, 0.0, raw.triangle);
}

bool gy_adapter_search_visit(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c)
{
    if (s->q.stop)
        return false;
    if (gy_adapter_collider_accepts(&s->filter, record(c))) {
        if (s->ray)
            visit_ray(s, dq, c);
        else
            visit_shape(s, dq, c);
    }
    return !s->q.stop;
}

void gy_adapter_search_ray(const gy_driver *d, gy_driver_world *dw, gy_adapter_query *q,
                           gy_vec3 origin, gy_vec3 translation, double length)
{
    gy_adapter_search s = search_init(d, dw, q, true, false, translation, length);
    s.dir = gy_v3_scale(translation, 1.0 / length);
    d->ray_walk(dw, origin, s.dir, length, &s);
    *q = s.q;
}

void gy_adapter_search_shape(const gy_driver *d, gy_driver_world *dw, gy_adapter_query *q,
                             const gy_shape *shape, const gy_hull *hull, gy_pose pose,
                             gy_vec3 translation, double length, bool cast)
{
    gy_adapter_search s = search_init(d, dw, q, false, cast, translation, length);
    if (cast) {
        gy_pose start = {pose.position, gy_quat_normalize(pose.rotation)};
        s.convex = gy_adapter_shape_convex(shape, hull, start, &s.shape);
    }
    d->shape_walk(dw, shape, pose, translation, length, cast, &s);
    *q = s.q;
}
