/* Queries written once over a driver's walks and raw tests (queries.h, driver.h). */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "gyre/math.h"
#include "queries.h"

/* A convex cast starting within this many metres of a candidate hits it at fraction 0 (the
 * query snapshot's touch tolerance). */
#define CAST_TOUCH 1e-7
/* Stepped casts stop bisecting once the bracket around the time of impact is this short
 * (metres), or a tenth of the shape's inner radius if that is smaller. */
#define CAST_TOLERANCE 1e-4

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
    if (!s->driver->ray_test(s->dw, dq, c, &raw) || !(raw.t >= s->ray_lo && raw.t < s->ray_hi))
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
    const gy_hull *hull = gy_adapter_collider_hull(rec);
    gy_pose body = s->driver->collider_body_pose(s->dw, c);
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

/* The fractions [*t0, *t1] narrowed to where the shape's start box moved along the translation
 * overlaps the collider's box: nothing outside can touch. False when they never meet. Infinite
 * bounds (planes) behave. */
static bool cast_window(const gy_adapter_search *s, gy_driver_collider *c, double *t0, double *t1)
{
    double box[6];
    s->driver->collider_box(s->dw, c, box);
    const double dv[3] = {s->translation.x, s->translation.y, s->translation.z};
    double lo = *t0, hi = *t1;
    for (int i = 0; i < 3; i++) {
        double bmin = s->box0[2 * i] - GY_ADAPTER_QUERY_AABB_PAD;
        double bmax = s->box0[2 * i + 1] + GY_ADAPTER_QUERY_AABB_PAD;
        if (dv[i] == 0.0) {
            if (bmax < box[2 * i] || bmin > box[2 * i + 1])
                return false;
            continue;
        }
        double ta = (box[2 * i] - bmax) / dv[i], tb = (box[2 * i + 1] - bmin) / dv[i];
        if (ta > tb) {
            double t = ta;
            ta = tb;
            tb = t;
        }
        lo = fmax(lo, ta);
        hi = fmin(hi, tb);
        if (!(lo <= hi))
            return false;
    }
    *t0 = lo;
    *t1 = hi;
    return true;
}

/* Narrows a bracket [lo, hi] of the first contact, the shape apart at lo and touching at hi
 * (*touch: that pose's contact), until it is no wider than `tol`; returns lo, the last pose known
 * apart, so a caller moving the shape there never starts in contact. */
static double bisect(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c, double lo,
                     double hi, double tol, gy_driver_hit *touch)
{
    while (hi - lo > tol) {
        double mid = 0.5 * (lo + hi);
        /* A long cast asks for a bracket finer than the doubles near its end can hold (1e-4 m of
         * 1e12 m is 1e-16, under the spacing of doubles near 1): once lo and hi are adjacent,
         * the midpoint is one of them and the loop would never end. */
        if (!(mid > lo && mid < hi))
            break;
        gy_driver_hit h;
        if (s->driver->shape_contact(s->dw, dq, c, mid, &h)) {
            hi = mid;
            *touch = h;
        } else {
            lo = mid;
        }
    }
    return lo;
}

/* A cast with no sweep of the vendor's: the shape advances from `lo` (apart) in steps of its inner
 * radius until it touches, then the last step is bisected to s->tol; the fraction is the last
 * pose apart, point and normal come from the first touching one. Such steps can pass over a
 * mesh's edge that the shape only grazes (a plane is a half-space: never). */
static bool cast_stepped(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c,
                         double lo, double t1, gy_driver_hit *out)
{
    for (;;) {
        double t = fmin(lo + s->step, t1);
        if (!(t > lo))
            return false;
        if (s->driver->shape_contact(s->dw, dq, c, t, out)) {
            out->t = bisect(s, dq, c, lo, t, s->tol, out);
            return true;
        }
        lo = t;
        if (t >= t1)
            return false;
    }
}

/* A vendor's sweep ends within the driver's cast_sweep_slack of the contact, short of it or past
 * it: bisecting between a pose apart just before and one touching just after brings the fraction
 * within CAST_REFINE metres, on the apart side, and point and normal come from the first touching
 * pose, as a stepped cast's do (the sweep's are from its own pose, up to the slack away). Left as
 * the vendor gave it when no such bracket exists (a graze, or a contact at the very start). */
#define CAST_REFINE 1e-5

static bool cast_swept(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c, double t1,
                       gy_driver_hit *out)
{
    const gy_driver *d = s->driver;
    if (!d->cast_sweep(s->dw, dq, c, t1, out))
        return false;
    double reach = d->cast_sweep_slack / s->length;
    double lo = fmax(0.0, out->t - reach), hi = fmin(1.0, out->t + reach);
    gy_driver_hit touch;
    if (d->shape_contact(s->dw, dq, c, lo, &touch) || !d->shape_contact(s->dw, dq, c, hi, &touch))
        return true;
    touch.t = bisect(s, dq, c, lo, hi, CAST_REFINE / s->length, &touch);
    *out = touch;
    return true;
}

/* A shape at its start pose that already touches a candidate hits it at fraction 0 with its
 * penetration, even when the cast moves away (a caller sliding out of a surface skips those);
 * otherwise a cast looks for the first contact in the fractions the boxes leave. */
static void visit_shape(gy_adapter_search *s, gy_driver_query *dq, gy_driver_collider *c)
{
    const gy_driver *d = s->driver;
    double t0 = 0.0, t1 = 1.0;
    if (s->cast) {
        gy_adapter_search_bound(s, &t1);
        if (s->boxed && !cast_window(s, c, &t0, &t1))
            return;
    }
    gy_driver_hit raw;
    if (t0 <= 0.0 && d->shape_contact(s->dw, dq, c, 0.0, &raw)) {
        collect_shape(s, record(c), 0.0, raw.point, raw.normal, raw.depth, raw.triangle);
        return;
    }
    if (!s->cast || !(s->length > 0.0))
        return;
    /* Before the window opens the two are apart. */
    double lo = t0 > 0.0 ? t0 : 0.0;
    if (s->convex && cast_convex(s, c, lo, t1))
        return;
    bool hit = d->cast_sweep != NULL ? cast_swept(s, dq, c, t1, &raw)
                                     : cast_stepped(s, dq, c, lo, t1, &raw);
    if (hit)
        collect_shape(s, record(c), raw.t, raw.point, raw.normal, 0.0, raw.triangle);
}

void gy_adapter_search_cast_box(gy_adapter_search *s, const double box[6])
{
    s->boxed = true;
    memcpy(s->box0, box, sizeof s->box0);
}

void gy_adapter_search_swept_box(const gy_adapter_search *s, double fraction, double box[6])
{
    const double d[3] = {s->translation.x * fraction, s->translation.y * fraction,
                         s->translation.z * fraction};
    for (int i = 0; i < 3; i++) {
        box[2 * i] = fmin(s->box0[2 * i], s->box0[2 * i] + d[i]) - 2.0 * GY_ADAPTER_QUERY_AABB_PAD;
        box[2 * i + 1] =
            fmax(s->box0[2 * i + 1], s->box0[2 * i + 1] + d[i]) + 2.0 * GY_ADAPTER_QUERY_AABB_PAD;
    }
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
    s.ray_lo = -INFINITY;
    s.ray_hi = INFINITY;
    d->ray_walk(dw, origin, s.dir, length, &s);
    *q = s.q;
}

enum { RAY_MAX_PIECES = 64 };

typedef struct ray_statics_ctx {
    gy_adapter_search *s;
    gy_driver_query *dq;
} ray_statics_ctx;

static bool ray_statics_visit(void *ctx, gy_driver_collider *c)
{
    ray_statics_ctx *v = ctx;
    return gy_adapter_search_visit(v->s, v->dq, c);
}

void gy_adapter_search_ray_statics(gy_adapter_search *s, gy_driver_query *dq,
                                   const gy_driver_records *statics, gy_vec3 origin, double length)
{
    double piece = fmax(GY_DRIVER_STATIC_CELL_SIZE, length / RAY_MAX_PIECES);
    uint32_t pieces = (uint32_t)fmin(RAY_MAX_PIECES, ceil(length / piece));
    if (pieces == 0)
        pieces = 1;
    const double pad = GY_ADAPTER_QUERY_AABB_PAD * (1.0 + length);
    ray_statics_ctx v = {s, dq};
    for (uint32_t k = 0; k < pieces && !gy_adapter_search_done(s); k++) {
        double lo = piece * k, hi = k + 1 == pieces ? length : piece * (k + 1);
        double best;
        if (gy_adapter_search_bound(s, &best) && best < lo)
            break; /* every later hit is at least `lo` away */
        gy_vec3 a = gy_v3_mad(origin, s->dir, lo), b = gy_v3_mad(origin, s->dir, hi);
        double box[6] = {fmin(a.x, b.x), fmax(a.x, b.x), fmin(a.y, b.y),
                         fmax(a.y, b.y), fmin(a.z, b.z), fmax(a.z, b.z)};
        for (int i = 0; i < 3; i++) {
            box[2 * i] -= pad;
            box[2 * i + 1] += pad;
        }
        s->ray_lo = k == 0 ? -INFINITY : lo;
        s->ray_hi = k + 1 == pieces ? INFINITY : hi;
        gy_driver_statics_visit(statics, box, ray_statics_visit, &v);
    }
    s->ray_lo = -INFINITY;
    s->ray_hi = INFINITY;
}

/* Steps no longer than the shape's inner radius cannot jump over a wall: its width in any
 * direction is at least twice that. Bisection stops at CAST_TOLERANCE, or a tenth of that
 * radius for a smaller shape. */
static void cast_steps(gy_adapter_search *s, const gy_shape *shape, const gy_hull *hull)
{
    gy_vec3 center;
    double inner = gy_adapter_shape_inner_radius(shape, hull, &center);
    if (!(inner > 0.0))
        inner = 1e-3;
    double tol_m = fmin(CAST_TOLERANCE, 0.1 * inner);
    s->step = s->length > 0.0 ? inner / s->length : 1.0;
    s->tol = s->length > 0.0 ? tol_m / s->length : 1.0;
}

void gy_adapter_search_shape(const gy_driver *d, gy_driver_world *dw, gy_adapter_query *q,
                             const gy_shape *shape, const gy_hull *hull, gy_pose pose,
                             gy_vec3 translation, double length, bool cast)
{
    gy_adapter_search s = search_init(d, dw, q, false, cast, translation, length);
    if (cast) {
        gy_pose start = {pose.position, gy_quat_normalize(pose.rotation)};
        s.convex = gy_adapter_shape_convex(shape, hull, start, &s.shape);
        cast_steps(&s, shape, hull);
    }
    d->shape_walk(dw, shape, pose, translation, length, cast, &s);
    *q = s.q;
}

bool gy_adapter_ray_shape(const gy_shape *s, const gy_hull *hull, gy_vec3 o, gy_vec3 d,
                          double length, double *t, gy_vec3 *n)
{
    gy_line_span span;
    bool got;
    switch (s->type) {
    case GY_SHAPE_PLANE: {
        double l = gy_v3_len(s->normal);
        gy_vec3 pn = gy_v3_scale(s->normal, 1.0 / l);
        double dist0 = gy_v3_dot(pn, o) - s->offset / l, k = gy_v3_dot(pn, d);
        if (k == 0.0)
            return false;
        *t = -dist0 / k;
        *n = dist0 >= 0.0 ? pn : gy_v3_neg(pn);
        return !(*t < 0.0 || *t > length);
    }
    case GY_SHAPE_SPHERE:
        got = gy_line_sphere(o, d, s->radius, &span);
        break;
    case GY_SHAPE_BOX:
        got = gy_line_box(o, d, gy_v3_scale(s->box_size, 0.5), &span);
        break;
    case GY_SHAPE_CAPSULE:
        got = gy_line_capsule(o, d, s->radius, 0.5 * s->height - s->radius, &span);
        break;
    case GY_SHAPE_CYLINDER:
        got = gy_line_cylinder(o, d, s->radius, 0.5 * s->height, &span);
        break;
    case GY_SHAPE_HULL:
        got = hull != NULL && gy_line_hull(o, d, hull, &span);
        break;
    default:
        got = false;
        break;
    }
    return got && gy_line_span_hit(&span, length, true, t, n);
}

void gy_adapter_ray_hit(gy_vec3 origin, gy_vec3 dir, double t, gy_vec3 n, int32_t triangle,
                        gy_driver_hit *out)
{
    out->t = t;
    out->point = gy_v3_mad(origin, dir, t);
    out->normal = n;
    out->depth = 0.0;
    out->triangle = triangle;
}
