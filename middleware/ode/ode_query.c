/* Queries on the ODE adapter: raycast, shape cast and overlap. They never allocate: each poses one
 * of the world's scratch geoms, gathers candidates from the static grid (gy_ode_static_visit) and
 * from the dynamic space (dSpaceCollide2), and runs dCollide on each. ODE has no sweep test: a
 * shape cast finds a convex candidate's time of impact by conservative advancement on GJK
 * distances (gyre/convex.h, as the query snapshot does), and a plane's or mesh's by stepping and
 * bisection with dCollide. docs/middleware.md ("Queries") has the details. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "ode_internal.h"

/* Contacts asked of dCollide per candidate (box-box yields up to 8, meshes more; the deepest of
 * the first 16 is plenty for one hit). */
enum { QUERY_MAX_CONTACTS = 16 };

/* Metres added around AABBs so that a candidate whose box merely touches the swept box is still
 * tested, and a pose just before the padded entry time is surely separated. */
#define QUERY_AABB_PAD 1e-6

/* Shape casts stop bisecting once the bracket around the time of impact is this short (metres),
 * or a tenth of the shape's smallest half-extent if that is smaller. */
#define CAST_TOLERANCE 1e-4
/* A convex cast starting within this many metres of a candidate hits it at fraction 0 (the query
 * snapshot's touch tolerance). */
#define CAST_TOUCH 1e-7

/* dCreateConvex needs a valid solid; the scratch convex holds this tetrahedron whenever it is not
 * borrowing a hull resource's arrays, so it never points at freed memory between queries. */
static const dReal tetra_points[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
#define TETRA_S 0.57735026918962576451 /* 1/sqrt(3) */
static const dReal tetra_planes[4][4] = {
    {0, 0, -1, 0}, {0, -1, 0, 0}, {-1, 0, 0, 0}, {TETRA_S, TETRA_S, TETRA_S, TETRA_S}};
static const unsigned int tetra_polys[] = {3, 0, 2, 1, 3, 0, 1, 3, 3, 0, 3, 2, 3, 1, 2, 3};

/* Capsules stand along local Y in Gyre but along Z in ODE: a -90° turn about X maps Z onto Y. */
static gy_quat capsule_axis_fix(void)
{
    gy_quat q = {-0.70710678118654752440, 0.0, 0.0, 0.70710678118654752440};
    return q;
}

static gy_vec3 v3_from_ode(const dReal *v)
{
    return gy_v3(v[0], v[1], v[2]);
}

/* ---- scratch geoms --------------------------------------------------------------------------- */

static void reset_convex(gy_driver_world *w)
{
    dGeomSetConvex(w->query_convex, &tetra_planes[0][0], 4, tetra_points, 4, tetra_polys);
}

void gy_ode_query_fini(gy_driver_world *w)
{
    dGeomID *geoms[] = {&w->query_ray, &w->query_sphere, &w->query_box, &w->query_capsule,
                        &w->query_convex};
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++) {
        if (*geoms[i] != NULL)
            dGeomDestroy(*geoms[i]);
        *geoms[i] = NULL;
    }
}

gy_result gy_ode_query_init(gy_driver_world *w)
{
    w->query_ray = dCreateRay(NULL, 1.0);
    w->query_sphere = dCreateSphere(NULL, 1.0);
    w->query_box = dCreateBox(NULL, 1.0, 1.0, 1.0);
    w->query_capsule = dCreateCapsule(NULL, 0.5, 1.0);
    w->query_convex = dCreateConvex(NULL, &tetra_planes[0][0], 4, tetra_points, 4, tetra_polys);
    if (w->query_ray == NULL || w->query_sphere == NULL || w->query_box == NULL ||
        w->query_capsule == NULL || w->query_convex == NULL) {
        gy_ode_query_fini(w);
        return GY_ERR_BACKEND;
    }
    dGeomID geoms[] = {w->query_ray, w->query_sphere, w->query_box, w->query_capsule,
                       w->query_convex};
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        dGeomSetData(geoms[i], NULL);
    return GY_OK;
}

static const gy_ode_resource *hull_resource(const gy_driver_world *w, gy_resource_id id)
{
    const gy_ode_resource *r = gy_handle_pool_get(w->resources, id.bits);
    return (r != NULL && r->base.kind == GY_SHAPE_HULL) ? r : NULL;
}

dGeomID gy_ode_query_geom(gy_driver_world *w, const gy_shape *shape, gy_pose pose)
{
    if (w == NULL || gy_validate_shape(shape) != GY_OK || !gy_vec3_is_finite(pose.position) ||
        !gy_quat_is_unit(pose.rotation))
        return NULL;
    dGeomID g;
    switch (shape->type) {
    case GY_SHAPE_SPHERE:
        g = w->query_sphere;
        dGeomSphereSetRadius(g, shape->radius);
        break;
    case GY_SHAPE_BOX:
        g = w->query_box;
        dGeomBoxSetLengths(g, shape->box_size.x, shape->box_size.y, shape->box_size.z);
        break;
    case GY_SHAPE_CAPSULE:
        g = w->query_capsule;
        dGeomCapsuleSetParams(g, shape->radius, shape->height - 2.0 * shape->radius);
        pose.rotation = gy_quat_mul(pose.rotation, capsule_axis_fix());
        break;
    case GY_SHAPE_HULL: {
        const gy_ode_resource *r = hull_resource(w, shape->resource);
        if (r == NULL)
            return NULL;
        g = w->query_convex;
        dGeomSetConvex(g, r->convex_planes, r->base.hull.triangle_count, r->convex_points,
                       r->base.hull.vertex_count, r->convex_polys);
        break;
    }
    default:
        return NULL;
    }
    dQuaternion q;
    gy_ode_quat_to_ode(gy_quat_normalize(pose.rotation), q);
    dGeomSetQuaternion(g, q);
    /* Setting the position last also marks the AABB dirty, which dGeomSetConvex does not. */
    dGeomSetPosition(g, pose.position.x, pose.position.y, pose.position.z);
    return g;
}

/* ---- shared collection ----------------------------------------------------------------------- */

typedef struct query_out {
    gy_adapter_query *q; /* the front end's collector */
    dGeomID probe;       /* the geom handed to dSpaceCollide2 */
} query_out;

/* Once the collector is satisfied, zeroed category and collide bits make ODE's AABB loop reject
 * every remaining candidate before the near callback: the closest thing to stopping a traversal
 * that ODE's API offers. */
static void out_collect(query_out *o, const gy_hit *h)
{
    if (gy_adapter_query_collect(o->q, h)) {
        dGeomSetCategoryBits(o->probe, 0);
        dGeomSetCollideBits(o->probe, 0);
    }
}

static void out_end(query_out *o)
{
    dGeomSetCategoryBits(o->probe, ~0ul);
    dGeomSetCollideBits(o->probe, ~0ul);
}

/* The collider behind a candidate geom, when the filter accepts it. */
static const gy_ode_collider *candidate(const query_out *o, dGeomID g)
{
    const gy_ode_collider *c = gy_ode_geom_collider(g);
    if (c == NULL || c->body == NULL)
        return NULL;
    return gy_ode_filter_accepts(o->q->filter, c) ? c : NULL;
}

/* Pads an AABB (ODE order: minx, maxx, miny, maxy, minz, maxz) by `pad` on every side. */
static void aabb_pad(dReal box[6], double pad)
{
    for (int i = 0; i < 3; i++) {
        box[2 * i] -= pad;
        box[2 * i + 1] += pad;
    }
}

static void hit_init(gy_hit *h, const gy_ode_collider *c)
{
    gy_adapter_hit_init(h, c->body->base.id, c->base.id, c->body->base.user_data);
}

/* Triangle index of a contact on `other` when it is a trimesh (dCollide keeps side1/side2 in
 * step with g1/g2 after swapping), else -1. */
static int32_t contact_triangle(const dContactGeom *cg, dGeomID other)
{
    if (dGeomGetClass(other) != dTriMeshClass)
        return -1;
    int side = cg->g2 == other ? cg->side2 : cg->side1;
    return side >= 0 ? side : -1;
}

static const dContactGeom *deepest(const dContactGeom *cg, int n)
{
    const dContactGeom *best = &cg[0];
    for (int i = 1; i < n; i++)
        if (cg[i].depth > best->depth)
            best = &cg[i];
    return best;
}

/* ---- raycast --------------------------------------------------------------------------------- */

/* Statics are visited along the ray in pieces at least a grid cell long and at most this many, so
 * a long oblique ray touches the cells near its line rather than every cell of its AABB, and a
 * closest-hit query stops at the first piece that holds a hit. */
enum { RAY_MAX_PIECES = 64 };

typedef struct ray_query {
    query_out out;
    gy_vec3 origin, dir; /* dir: unit */
    double length;
    /* Static hits are kept only when their distance lies in [piece_lo, piece_hi): a collider
     * reached from several pieces is then reported once, from the piece that holds its hit. */
    double piece_lo, piece_hi;
} ray_query;

/* ODE 0.16's ray-convex test misses convexes turned about some axes (a cube tilted 0.5 rad about
 * X under a vertical ray through its centre reports nothing), so rays meet hull colliders here:
 * the ray is clipped by the hull's face planes in the collider's frame. Like ODE's own ray tests,
 * a ray starting inside reports where it leaves, with the normal facing back along the ray. */
static int ray_hull(const ray_query *q, const gy_ode_collider *c, dContactGeom *out)
{
    const gy_hull *h = &c->resource->base.hull;
    const dReal *p = dGeomGetPosition(c->geom);
    const dReal *R = dGeomGetRotation(c->geom); /* 3×4, row-major */
    gy_vec3 rel = gy_v3_sub(q->origin, gy_v3(p[0], p[1], p[2]));
    /* Into the collider frame: x_local = Rᵀ x_world. */
    gy_vec3 o = gy_v3(R[0] * rel.x + R[4] * rel.y + R[8] * rel.z,
                      R[1] * rel.x + R[5] * rel.y + R[9] * rel.z,
                      R[2] * rel.x + R[6] * rel.y + R[10] * rel.z);
    gy_vec3 d = gy_v3(R[0] * q->dir.x + R[4] * q->dir.y + R[8] * q->dir.z,
                      R[1] * q->dir.x + R[5] * q->dir.y + R[9] * q->dir.z,
                      R[2] * q->dir.x + R[6] * q->dir.y + R[10] * q->dir.z);
    double t_in, t_out;
    uint32_t f_in, f_out;
    if (!gy_hull_clip_line(h, o, d, &t_in, &f_in, &t_out, &f_out))
        return 0;
    double t;
    uint32_t face;
    double sign;
    if (t_in >= 0.0) {
        t = t_in;
        face = f_in;
        sign = 1.0;
    } else {
        t = t_out;
        face = f_out;
        sign = -1.0;
    }
    if (face == UINT32_MAX || !(t >= 0.0) || t > dGeomRayGetLength(q->out.probe))
        return 0;
    const double *pl = h->planes[face];
    gy_vec3 n = gy_v3_normalize(gy_v3(R[0] * pl[0] + R[1] * pl[1] + R[2] * pl[2],
                                      R[4] * pl[0] + R[5] * pl[1] + R[6] * pl[2],
                                      R[8] * pl[0] + R[9] * pl[1] + R[10] * pl[2]));
    gy_vec3 hit = gy_v3_mad(q->origin, q->dir, t);
    memset(out, 0, sizeof *out);
    out->pos[0] = hit.x;
    out->pos[1] = hit.y;
    out->pos[2] = hit.z;
    out->normal[0] = sign * n.x;
    out->normal[1] = sign * n.y;
    out->normal[2] = sign * n.z;
    out->depth = t;
    out->g1 = q->out.probe;
    out->g2 = c->geom;
    out->side1 = out->side2 = -1;
    return 1;
}

/* ODE 0.16's ray-capsule test misses when the ray starts inside the capsule and runs along its
 * axis, so rays meet capsules here, with ODE's convention: a ray starting inside reports where
 * it leaves, with the normal facing back along the ray. */
static int ray_capsule(const ray_query *q, const gy_ode_collider *c, dContactGeom *out)
{
    const dReal *p = dGeomGetPosition(c->geom);
    const dReal *R = dGeomGetRotation(c->geom); /* 3×4, row-major; ODE capsules lie along Z */
    dReal radius, length;
    dGeomCapsuleGetParams(c->geom, &radius, &length);
    gy_vec3 centre = gy_v3(p[0], p[1], p[2]);
    gy_vec3 half = gy_v3_scale(gy_v3(R[2], R[6], R[10]), 0.5 * length);
    gy_vec3 a = gy_v3_sub(centre, half), b = gy_v3_add(centre, half);
    double t_in, t_out;
    if (!gy_adapter_ray_capsule(a, b, radius, q->origin, q->dir, &t_in, &t_out))
        return 0;
    bool inside = t_in < 0.0;
    double t = inside ? t_out : t_in;
    if (!(t >= 0.0) || t > dGeomRayGetLength(q->out.probe))
        return 0;
    gy_vec3 hit = gy_v3_mad(q->origin, q->dir, t);
    /* Outward normal: from the nearest point of the segment. */
    gy_vec3 ab = gy_v3_sub(b, a);
    double k = gy_v3_len_sq(ab) > 0.0
                   ? fmin(1.0, fmax(0.0, gy_v3_dot(gy_v3_sub(hit, a), ab) / gy_v3_len_sq(ab)))
                   : 0.0;
    gy_vec3 n = gy_v3_normalize(gy_v3_sub(hit, gy_v3_mad(a, ab, k)));
    if (inside)
        n = gy_v3_neg(n);
    memset(out, 0, sizeof *out);
    out->pos[0] = hit.x;
    out->pos[1] = hit.y;
    out->pos[2] = hit.z;
    out->normal[0] = n.x;
    out->normal[1] = n.y;
    out->normal[2] = n.z;
    out->depth = t;
    out->g1 = q->out.probe;
    out->g2 = c->geom;
    out->side1 = out->side2 = -1;
    return 1;
}

/* Tests one candidate against the full ray; returns false once the query is satisfied. */
static bool ray_test(ray_query *q, const gy_ode_collider *c, bool by_piece)
{
    dContactGeom cg;
    int n;
    if (c->base.shape.type == GY_SHAPE_HULL && c->resource != NULL)
        n = ray_hull(q, c, &cg);
    else if (c->base.shape.type == GY_SHAPE_CAPSULE)
        n = ray_capsule(q, c, &cg);
    else
        n = dCollide(q->out.probe, c->geom, 1, &cg, sizeof cg);
    if (n < 1)
        return true;
    if (by_piece && !(cg.depth >= q->piece_lo && cg.depth < q->piece_hi))
        return true;
    if (q->out.q->collector == GY_COLLECT_CLOSEST && q->out.q->count > 0 &&
        cg.depth >= q->out.q->hits[0].distance)
        return true;
    gy_hit h;
    hit_init(&h, c);
    h.triangle = contact_triangle(&cg, c->geom);
    h.distance = cg.depth;
    h.fraction = fmin(1.0, fmax(0.0, cg.depth / q->length));
    h.point = v3_from_ode(cg.pos);
    h.normal = v3_from_ode(cg.normal);
    /* Mesh triangles are two-sided for rays; ODE gives the face normal, so turn it to face the
     * ray when the back of a triangle was hit. */
    if (h.triangle >= 0 && gy_v3_dot(h.normal, q->dir) > 0.0)
        h.normal = gy_v3_neg(h.normal);
    out_collect(&q->out, &h);
    return !q->out.q->stop;
}

static bool ray_visit_static(void *ctx, gy_ode_collider *c)
{
    ray_query *q = ctx;
    if (!gy_ode_filter_accepts(q->out.q->filter, c))
        return true;
    return ray_test(q, c, true);
}

static void ray_near(void *data, dGeomID a, dGeomID b)
{
    ray_query *q = data;
    if (q->out.q->stop)
        return;
    dGeomID other = a == q->out.probe ? b : a;
    if (dGeomIsSpace(other)) {
        dSpaceCollide2(q->out.probe, other, q, ray_near);
        return;
    }
    const gy_ode_collider *c = candidate(&q->out, other);
    if (c != NULL)
        ray_test(q, c, false);
}

static void ray_statics(gy_driver_world *w, ray_query *q)
{
    double piece = fmax(w->grid.cell_size, q->length / RAY_MAX_PIECES);
    uint32_t pieces = (uint32_t)fmin(RAY_MAX_PIECES, ceil(q->length / piece));
    if (pieces == 0)
        pieces = 1;
    for (uint32_t k = 0; k < pieces && !q->out.q->stop; k++) {
        double lo = piece * k, hi = k + 1 == pieces ? q->length : piece * (k + 1);
        /* Every later hit is at least `lo` away. */
        if (q->out.q->collector == GY_COLLECT_CLOSEST && q->out.q->count > 0 &&
            q->out.q->hits[0].distance < lo)
            break;
        gy_vec3 a = gy_v3_mad(q->origin, q->dir, lo), b = gy_v3_mad(q->origin, q->dir, hi);
        dReal box[6] = {fmin(a.x, b.x), fmax(a.x, b.x), fmin(a.y, b.y),
                        fmax(a.y, b.y), fmin(a.z, b.z), fmax(a.z, b.z)};
        aabb_pad(box, QUERY_AABB_PAD * (1.0 + q->length));
        q->piece_lo = k == 0 ? -INFINITY : lo;
        q->piece_hi = k + 1 == pieces ? INFINITY : hi;
        gy_ode_static_visit(w, box, ray_visit_static, q);
    }
}

void gy_ode_raycast(gy_driver_world *w, gy_vec3 origin, gy_vec3 translation, double length,
                    gy_adapter_query *fq)
{
    ray_query q;
    q.out.q = fq;
    q.length = length;
    gy_collector collector = fq->collector;
    q.origin = origin;
    q.dir = gy_v3_scale(translation, 1.0 / q.length);
    q.out.probe = w->query_ray;

    dGeomID ray = w->query_ray;
    dGeomRaySet(ray, origin.x, origin.y, origin.z, q.dir.x, q.dir.y, q.dir.z);
    dGeomRaySetLength(ray, q.length);
    dGeomRaySetBackfaceCull(ray, 0);
    /* ANY takes a mesh's first triangle found; the others need each mesh's nearest. */
    dGeomRaySetFirstContact(ray, collector == GY_COLLECT_ANY);
    dGeomRaySetClosestHit(ray, collector != GY_COLLECT_ANY);

    /* Statics first: a closest hit among them shortens the ray before the dynamic space, which
     * ODE's sweep-and-prune scans linearly for a single geom. */
    if (gy_adapter_query_wants_statics(q.out.q))
        ray_statics(w, &q);
    if (!q.out.q->stop && gy_adapter_query_wants_moving(q.out.q)) {
        if (collector == GY_COLLECT_CLOSEST && q.out.q->count > 0)
            dGeomRaySetLength(ray, fmin(q.length, q.out.q->hits[0].distance + QUERY_AABB_PAD));
        dSpaceCollide2(ray, (dGeomID)w->dynamic_space, &q, ray_near);
    }
    out_end(&q.out);
}

/* ---- overlap --------------------------------------------------------------------------------- */

typedef struct overlap_query {
    query_out out;
} overlap_query;

static bool overlap_test(overlap_query *q, const gy_ode_collider *c)
{
    dContactGeom cg[QUERY_MAX_CONTACTS];
    int n = dCollide(q->out.probe, c->geom, QUERY_MAX_CONTACTS, cg, sizeof cg[0]);
    if (n < 1)
        return true;
    const dContactGeom *d = deepest(cg, n);
    gy_hit h;
    hit_init(&h, c);
    h.triangle = contact_triangle(d, c->geom);
    h.point = v3_from_ode(d->pos);
    /* dCollide(g1, g2) normals point from g2 into g1: out of the hit collider, toward ours. */
    h.normal = v3_from_ode(d->normal);
    h.penetration = fmax(0.0, d->depth);
    out_collect(&q->out, &h);
    return !q->out.q->stop;
}

static bool overlap_visit_static(void *ctx, gy_ode_collider *c)
{
    overlap_query *q = ctx;
    return gy_ode_filter_accepts(q->out.q->filter, c) ? overlap_test(q, c) : true;
}

static void overlap_near(void *data, dGeomID a, dGeomID b)
{
    overlap_query *q = data;
    if (q->out.q->stop)
        return;
    dGeomID other = a == q->out.probe ? b : a;
    if (dGeomIsSpace(other)) {
        dSpaceCollide2(q->out.probe, other, q, overlap_near);
        return;
    }
    const gy_ode_collider *c = candidate(&q->out, other);
    if (c != NULL)
        overlap_test(q, c);
}

void gy_ode_overlap(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_adapter_query *fq)
{
    overlap_query q;
    q.out.q = fq;
    q.out.probe = gy_ode_query_geom(w, shape, pose);
    dReal box[6];
    dGeomGetAABB(q.out.probe, box);
    aabb_pad(box, QUERY_AABB_PAD);
    if (gy_adapter_query_wants_statics(q.out.q))
        gy_ode_static_visit(w, box, overlap_visit_static, &q);
    if (!q.out.q->stop && gy_adapter_query_wants_moving(q.out.q))
        dSpaceCollide2(q.out.probe, (dGeomID)w->dynamic_space, &q, overlap_near);
    out_end(&q.out);
    if (shape->type == GY_SHAPE_HULL)
        reset_convex(w);
}

/* ---- shape cast ------------------------------------------------------------------------------ */

typedef struct cast_query {
    query_out out; /* out.probe is the ray standing in for the swept AABB */
    dGeomID shape; /* the posed scratch shape */
    gy_vec3 start; /* shape position at fraction 0 */
    gy_vec3 translation;
    double length;
    double aabb0[6]; /* shape AABB at fraction 0 */
    double step;     /* fraction advanced per conservative step */
    double tol;      /* fraction bracket at which bisection stops */
    bool is_convex;  /* the shape as a convex (convex), at fraction 0 */
    gy_convex convex;
} cast_query;

/* Smallest distance from the shape's centre to its surface: stepping by this much cannot jump
 * over a wall, since the shape's width in any direction is at least twice it. */
static double shape_inner_radius(const gy_driver_world *w, const gy_shape *s)
{
    const gy_ode_resource *r = s->type == GY_SHAPE_HULL ? hull_resource(w, s->resource) : NULL;
    gy_vec3 center;
    double best = gy_adapter_shape_inner_radius(s, r != NULL ? &r->base.hull : NULL, &center);
    return best > 0.0 ? best : 1e-3;
}

/* Narrows [*t0, *t1] to the fractions at which the moving box aabb0 + t·d overlaps `c`; false
 * when they never do. Infinite bounds (planes) behave. */
static bool sweep_interval(const double aabb0[6], gy_vec3 d, const double c[6], double *t0,
                           double *t1)
{
    const double dv[3] = {d.x, d.y, d.z};
    double lo = *t0, hi = *t1;
    for (int i = 0; i < 3; i++) {
        double bmin = aabb0[2 * i] - QUERY_AABB_PAD, bmax = aabb0[2 * i + 1] + QUERY_AABB_PAD;
        double cmin = c[2 * i], cmax = c[2 * i + 1];
        if (dv[i] == 0.0) {
            if (bmax < cmin || bmin > cmax)
                return false;
            continue;
        }
        double ta = (cmin - bmax) / dv[i], tb = (cmax - bmin) / dv[i];
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

static int cast_contacts_at(cast_query *q, dGeomID other, double t, dContactGeom *cg)
{
    gy_vec3 p = gy_v3_mad(q->start, q->translation, t);
    dGeomSetPosition(q->shape, p.x, p.y, p.z);
    return dCollide(q->shape, other, QUERY_MAX_CONTACTS, cg, sizeof cg[0]);
}

/* A collider as a convex at its current pose; false for planes and meshes. */
static bool collider_convex(const gy_ode_collider *c, gy_convex *out)
{
    const gy_hull *hull =
        c->base.shape.type == GY_SHAPE_HULL && c->resource != NULL ? &c->resource->base.hull : NULL;
    gy_pose pose = gy_pose_mul(gy_ode_body_pose(c->body), c->base.local_pose);
    return gy_adapter_shape_convex(&c->base.shape, hull, pose, out);
}

static void cast_report_convex(cast_query *q, const gy_ode_collider *c, const gy_convex_hit *ch)
{
    gy_hit h;
    hit_init(&h, c);
    h.triangle = -1;
    h.fraction = ch->fraction;
    h.distance = ch->fraction * q->length;
    h.point = ch->point;
    h.normal = ch->normal;
    h.penetration = 0.0;
    out_collect(&q->out, &h);
}

static void cast_report(cast_query *q, const gy_ode_collider *c, dGeomID other,
                        const dContactGeom *cg, int n, double t, bool initial)
{
    const dContactGeom *d = deepest(cg, n);
    gy_hit h;
    hit_init(&h, c);
    h.triangle = contact_triangle(d, other);
    h.fraction = t;
    h.distance = t * q->length;
    h.point = v3_from_ode(d->pos);
    h.normal = v3_from_ode(d->normal);
    h.penetration = initial ? fmax(0.0, d->depth) : 0.0;
    out_collect(&q->out, &h);
}

/* Time of impact against one candidate: test the start pose with dCollide (a start overlap is
 * reported with its depth). Two convex shapes then advance on their GJK distance, which lands on
 * the first contact however shallow (gy_convex_cast). Against a plane or a mesh, advance in steps
 * no longer than the shape's inner radius until dCollide reports contact, then bisect the last
 * step: the reported fraction is the last separated pose (never past the impact); point and
 * normal come from the first touching pose, at most the tolerance further on. Such steps can pass
 * over a mesh's edge that the shape only grazes (a plane is a half-space: never). */
static void cast_candidate(cast_query *q, const gy_ode_collider *c)
{
    dGeomID other = c->geom;
    double box[6];
    dGeomGetAABB(other, box);
    double t0 = 0.0, t1 = 1.0;
    if (q->out.q->collector == GY_COLLECT_CLOSEST && q->out.q->count > 0)
        t1 = q->out.q->hits[0].fraction;
    if (!sweep_interval(q->aabb0, q->translation, box, &t0, &t1))
        return;

    dContactGeom buf_a[QUERY_MAX_CONTACTS], buf_b[QUERY_MAX_CONTACTS];
    dContactGeom *cur = buf_a, *hit = buf_b;
    double lo;
    if (t0 <= 0.0) {
        int n = cast_contacts_at(q, other, 0.0, cur);
        if (n > 0) {
            cast_report(q, c, other, cur, n, 0.0, true);
            return;
        }
        lo = 0.0;
    } else {
        /* Before the padded entry time the boxes are disjoint, so the shapes are apart. */
        lo = t0;
    }
    if (!(q->length > 0.0))
        return;
    gy_convex target;
    if (q->is_convex && collider_convex(c, &target)) {
        gy_convex_hit ch;
        if (gy_convex_cast(&q->convex, q->translation, &target, lo, t1, CAST_TOUCH, &ch))
            cast_report_convex(q, c, &ch);
        return;
    }

    double hi;
    int hit_n;
    for (;;) {
        double t = fmin(lo + q->step, t1);
        if (!(t > lo))
            return;
        int n = cast_contacts_at(q, other, t, cur);
        if (n > 0) {
            hi = t;
            hit_n = n;
            dContactGeom *swap = hit;
            hit = cur;
            cur = swap;
            break;
        }
        lo = t;
        if (t >= t1)
            return;
    }
    while (hi - lo > q->tol) {
        double mid = 0.5 * (lo + hi);
        /* A long cast asks for a bracket finer than the doubles near its end can hold (1e-4 m of
         * 1e12 m is 1e-16, under the spacing of doubles near 1): once lo and hi are adjacent,
         * the midpoint is one of them and the loop would never end. */
        if (!(mid > lo && mid < hi))
            break;
        int n = cast_contacts_at(q, other, mid, cur);
        if (n > 0) {
            hi = mid;
            hit_n = n;
            dContactGeom *swap = hit;
            hit = cur;
            cur = swap;
        } else {
            lo = mid;
        }
    }
    cast_report(q, c, other, hit, hit_n, lo, false);
}

static void cast_near(void *data, dGeomID a, dGeomID b)
{
    cast_query *q = data;
    if (q->out.q->stop)
        return;
    dGeomID other = a == q->out.probe ? b : a;
    if (dGeomIsSpace(other)) {
        dSpaceCollide2(q->out.probe, other, q, cast_near);
        return;
    }
    const gy_ode_collider *c = candidate(&q->out, other);
    if (c != NULL)
        cast_candidate(q, c);
}

static bool cast_visit_static(void *ctx, gy_ode_collider *c)
{
    cast_query *q = ctx;
    if (gy_ode_filter_accepts(q->out.q->filter, c))
        cast_candidate(q, c);
    return !q->out.q->stop;
}

/* The box the shape sweeps over fractions [0, fraction], into `box`; also points the scratch ray
 * from its min corner to its max corner: a ray's AABB is the box its two ends span, so the dynamic
 * space then hands back exactly the geoms overlapping the sweep. */
static void cast_set_sweep(cast_query *q, double fraction, dReal box[6])
{
    double lo[3], hi[3];
    const double d[3] = {q->translation.x * fraction, q->translation.y * fraction,
                         q->translation.z * fraction};
    for (int i = 0; i < 3; i++) {
        lo[i] = fmin(q->aabb0[2 * i], q->aabb0[2 * i] + d[i]) - 2.0 * QUERY_AABB_PAD;
        hi[i] = fmax(q->aabb0[2 * i + 1], q->aabb0[2 * i + 1] + d[i]) + 2.0 * QUERY_AABB_PAD;
        box[2 * i] = lo[i];
        box[2 * i + 1] = hi[i];
    }
    gy_vec3 diag = gy_v3(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    dGeomRaySet(q->out.probe, lo[0], lo[1], lo[2], diag.x, diag.y, diag.z);
    dGeomRaySetLength(q->out.probe, gy_v3_len(diag));
}

void gy_ode_shape_cast(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, gy_adapter_query *fq)
{
    cast_query q;
    q.out.q = fq;
    q.length = length;
    gy_collector collector = fq->collector;

    q.shape = gy_ode_query_geom(w, shape, pose);
    const gy_ode_resource *hull =
        shape->type == GY_SHAPE_HULL ? hull_resource(w, shape->resource) : NULL;
    pose.rotation = gy_quat_normalize(pose.rotation);
    q.is_convex =
        gy_adapter_shape_convex(shape, hull != NULL ? &hull->base.hull : NULL, pose, &q.convex);
    q.start = pose.position;
    q.translation = translation;
    dGeomGetAABB(q.shape, q.aabb0);
    double inner = shape_inner_radius(w, shape);
    double tol_m = fmin(CAST_TOLERANCE, 0.1 * inner);
    q.step = q.length > 0.0 ? inner / q.length : 1.0;
    q.tol = q.length > 0.0 ? tol_m / q.length : 1.0;
    q.out.probe = w->query_ray;

    dReal box[6];
    cast_set_sweep(&q, 1.0, box);
    if (gy_adapter_query_wants_statics(q.out.q))
        gy_ode_static_visit(w, box, cast_visit_static, &q);
    if (!q.out.q->stop && gy_adapter_query_wants_moving(q.out.q)) {
        if (collector == GY_COLLECT_CLOSEST && q.out.q->count > 0)
            cast_set_sweep(&q, q.out.q->hits[0].fraction, box);
        dSpaceCollide2(q.out.probe, (dGeomID)w->dynamic_space, &q, cast_near);
    }
    out_end(&q.out);
    if (shape->type == GY_SHAPE_HULL)
        reset_convex(w);
}
