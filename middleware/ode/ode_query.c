/* Query primitives of the ODE driver: candidate walks and raw tests (driver.h); the filter,
 * collectors and hits are the front end's (queries.c). They never allocate: each walk poses one
 * of the world's scratch geoms and gathers candidates from the static grid (gy_ode_static_visit)
 * and from the dynamic space (dSpaceCollide2); the tests run dCollide. ODE has no sweep test: the
 * front end casts by posing the shape along the translation (shape_contact at a fraction).
 * docs/middleware.md ("Queries") has the details. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "ode_internal.h"

/* Contacts asked of dCollide per candidate (box-box yields up to 8, meshes more; the deepest of
 * the first 16 is plenty for one hit). */
enum { QUERY_MAX_CONTACTS = 16 };

/* dCreateConvex needs a valid solid; the scratch convex holds this tetrahedron whenever it is not
 * borrowing a hull resource's arrays, so it never points at freed memory between queries. */
static const dReal tetra_points[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
#define TETRA_S 0.57735026918962576451 /* 1/sqrt(3) */
static const dReal tetra_planes[4][4] = {
    {0, 0, -1, 0}, {0, -1, 0, 0}, {-1, 0, 0, 0}, {TETRA_S, TETRA_S, TETRA_S, TETRA_S}};
static const unsigned int tetra_polys[] = {3, 0, 2, 1, 3, 0, 1, 3, 3, 0, 3, 2, 3, 1, 2, 3};

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

/* A query's shape (the front end has checked it and its hull: driver.h) as a posed scratch geom. */
static dGeomID query_geom(gy_driver_world *w, const gy_shape *shape, gy_pose pose)
{
    dGeomID g;
    switch (shape->type) {
    default: /* a sphere: queries take no shapes but these four (gy_validate_query_shape) */
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
        pose.rotation = gy_quat_mul(pose.rotation, gy_ode_shape_axis_fix(GY_SHAPE_CAPSULE));
        break;
    case GY_SHAPE_HULL: {
        const gy_ode_resource *r = gy_handle_pool_get(w->resources, shape->resource.bits);
        g = w->query_convex;
        dGeomSetConvex(g, &r->base.hull.planes[0][0], r->base.hull.triangle_count,
                       &r->base.hull.vertices[0].x, r->base.hull.vertex_count, r->convex_polys);
        break;
    }
    }
    dQuaternion q;
    gy_ode_quat_to_ode(gy_quat_normalize(pose.rotation), q);
    dGeomSetQuaternion(g, q);
    /* Setting the position last also marks the AABB dirty, which dGeomSetConvex does not. */
    dGeomSetPosition(g, pose.position.x, pose.position.y, pose.position.z);
    return g;
}

/* ---- walks ----------------------------------------------------------------------------------- */

/* What the raw tests need of the walk in progress. */
struct gy_driver_query {
    gy_adapter_search *s;
    dGeomID probe; /* the geom handed to dSpaceCollide2 */
    /* Rays. */
    gy_vec3 origin, dir; /* dir: unit */
    /* Shape queries. */
    dGeomID shape; /* the posed scratch shape */
    bool cast;
    gy_vec3 start; /* shape position at fraction 0 */
    gy_vec3 translation;
};

/* ODE cannot abort a traversal: zeroed category and collide bits make its AABB loop reject every
 * remaining candidate before the near callback, the closest thing it offers. */
static void probe_stop(dGeomID probe)
{
    dGeomSetCategoryBits(probe, 0);
    dGeomSetCollideBits(probe, 0);
}

static void probe_restore(dGeomID probe)
{
    dGeomSetCategoryBits(probe, ~0ul);
    dGeomSetCollideBits(probe, ~0ul);
}

static bool visit_static(void *ctx, gy_ode_collider *c)
{
    gy_driver_query *q = ctx;
    return gy_adapter_search_visit(q->s, q, c);
}

static void visit_near(void *data, dGeomID a, dGeomID b)
{
    gy_driver_query *q = data;
    if (gy_adapter_search_done(q->s))
        return;
    dGeomID other = a == q->probe ? b : a;
    if (dGeomIsSpace(other)) {
        dSpaceCollide2(q->probe, other, q, visit_near);
        return;
    }
    gy_ode_collider *c = gy_ode_geom_collider(other);
    if (c != NULL && c->base.owner != NULL && !gy_adapter_search_visit(q->s, q, c))
        probe_stop(q->probe);
}

/* Pads an AABB (ODE order: minx, maxx, miny, maxy, minz, maxz) by `pad` on every side. */
static void aabb_pad(dReal box[6], double pad)
{
    for (int i = 0; i < 3; i++) {
        box[2 * i] -= pad;
        box[2 * i + 1] += pad;
    }
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

/* The deepest of n contacts as a raw hit at `t`. dCollide(g1, g2) normals point from g2 into g1:
 * out of the collider, toward the query geom, which every test passes first. */
static void hit_from_contacts(const dContactGeom *cg, int n, dGeomID other, double t,
                              gy_driver_hit *out)
{
    const dContactGeom *best = &cg[0];
    for (int i = 1; i < n; i++)
        if (cg[i].depth > best->depth)
            best = &cg[i];
    out->t = t;
    out->point = gy_ode_vec(best->pos);
    out->normal = gy_ode_vec(best->normal);
    out->depth = fmax(0.0, best->depth);
    out->triangle = contact_triangle(best, other);
}

/* ---- raycast --------------------------------------------------------------------------------- */

/* A point (or, `point` false, a direction) into a geom's frame: x_local = Rᵀ (x − p), R being
 * ODE's 3×4 row-major rotation. out_of_geom turns a direction back: R x. */
static gy_vec3 into_geom(dGeomID g, gy_vec3 v, bool point)
{
    const dReal *R = dGeomGetRotation(g);
    if (point) {
        const dReal *p = dGeomGetPosition(g);
        v = gy_v3_sub(v, gy_v3(p[0], p[1], p[2]));
    }
    return gy_v3(R[0] * v.x + R[4] * v.y + R[8] * v.z, R[1] * v.x + R[5] * v.y + R[9] * v.z,
                 R[2] * v.x + R[6] * v.y + R[10] * v.z);
}

static gy_vec3 out_of_geom(dGeomID g, gy_vec3 v)
{
    const dReal *R = dGeomGetRotation(g);
    return gy_v3(R[0] * v.x + R[1] * v.y + R[2] * v.z, R[4] * v.x + R[5] * v.y + R[6] * v.z,
                 R[8] * v.x + R[9] * v.y + R[10] * v.z);
}

/* ODE capsules lie along Z, collision/'s along Y; swapping the two axes is its own inverse. */
static gy_vec3 swap_yz(gy_vec3 v)
{
    return gy_v3(v.x, v.z, v.y);
}

/* Rays meet hulls and capsules through the front end's closed-form test, in the geom's frame
 * (Y and Z swapped for capsules): ODE 0.16's
 * ray-convex test misses convexes turned about some axes (a cube tilted 0.5 rad about X under a
 * vertical ray through its centre reports nothing) and its ray-capsule test misses a ray that
 * starts inside and runs along the axis. As ODE's own ray tests do, a ray starting inside reports
 * where it leaves, with the normal facing back along the ray. */
static bool ray_solid(const gy_driver_query *q, const gy_ode_collider *c, dGeomID g,
                      gy_driver_hit *out)
{
    gy_vec3 o = into_geom(g, q->origin, true), d = into_geom(g, q->dir, false);
    bool capsule = c->base.shape_type == GY_SHAPE_CAPSULE;
    const gy_shape s = gy_adapter_collider_shape(&c->base);
    double t;
    gy_vec3 n;
    if (!gy_adapter_ray_shape(&s, gy_adapter_collider_hull(&c->base), capsule ? swap_yz(o) : o,
                              capsule ? swap_yz(d) : d, dGeomRayGetLength(q->probe), &t, &n))
        return false;
    n = gy_v3_normalize(out_of_geom(g, capsule ? swap_yz(n) : n));
    gy_adapter_ray_hit(q->origin, q->dir, t, n, -1, out);
    return true;
}

bool gy_ode_ray_test(gy_driver_world *w, gy_driver_query *q, gy_ode_collider *c, gy_driver_hit *out)
{
    bool got;
    dGeomID g = gy_ode_collider_geom(w, c);
    if (gy_adapter_collider_hull(&c->base) != NULL || c->base.shape_type == GY_SHAPE_CAPSULE) {
        got = ray_solid(q, c, g, out);
    } else {
        dContactGeom cg;
        got = dCollide(q->probe, g, 1, &cg, sizeof cg) > 0;
        if (got) {
            hit_from_contacts(&cg, 1, g, cg.depth, out);
            out->depth = 0.0;
        }
    }
    return got;
}

void gy_ode_ray_walk(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                     gy_adapter_search *s)
{
    gy_driver_query q = {.s = s, .probe = w->query_ray, .origin = origin, .dir = dir};
    dGeomID ray = w->query_ray;
    dGeomRaySet(ray, origin.x, origin.y, origin.z, dir.x, dir.y, dir.z);
    dGeomRaySetLength(ray, length);
    dGeomRaySetBackfaceCull(ray, 0);
    /* ANY takes a mesh's first triangle found; the others need each mesh's nearest. */
    dGeomRaySetFirstContact(ray, s->q.collector == GY_COLLECT_ANY);
    dGeomRaySetClosestHit(ray, s->q.collector != GY_COLLECT_ANY);

    /* Statics first: a closest hit among them shortens the ray before the dynamic space, which
     * ODE's sweep-and-prune scans linearly for a single geom. */
    if (gy_adapter_search_statics(s))
        gy_adapter_search_ray_statics(s, &q, w->records, origin, length);
    if (!gy_adapter_search_done(s) && gy_adapter_search_moving(s)) {
        double best;
        if (gy_adapter_search_bound(s, &best))
            dGeomRaySetLength(ray, fmin(length, best + GY_ADAPTER_QUERY_AABB_PAD));
        dSpaceCollide2(ray, (dGeomID)w->dynamic_space, &q, visit_near);
    }
    probe_restore(ray);
}

/* ---- overlap and shape cast ------------------------------------------------------------------ */

/* dCollide against the shape posed at fraction t (an overlap's shape stays where it was posed). */
bool gy_ode_shape_contact(gy_driver_world *w, gy_driver_query *q, gy_ode_collider *c, double t,
                          gy_driver_hit *out)
{
    dGeomID g = gy_ode_collider_geom(w, c);
    if (q->cast) {
        gy_vec3 p = gy_v3_mad(q->start, q->translation, t);
        dGeomSetPosition(q->shape, p.x, p.y, p.z);
    }
    dContactGeom cg[QUERY_MAX_CONTACTS];
    int n = dCollide(q->shape, g, QUERY_MAX_CONTACTS, cg, sizeof cg[0]);
    if (n < 1)
        return false;
    hit_from_contacts(cg, n, g, t, out);
    return true;
}

void gy_ode_collider_box(gy_driver_world *w, gy_ode_collider *c, double box[6])
{
    dGeomGetAABB(gy_ode_collider_geom(w, c), box);
}

/* Points the scratch ray from the box's min corner to its max corner: a ray's AABB is the box its
 * two ends span, so the dynamic space then hands back exactly the geoms overlapping the box. */
static void probe_span(dGeomID ray, const dReal box[6])
{
    gy_vec3 diag = gy_v3(box[1] - box[0], box[3] - box[2], box[5] - box[4]);
    dGeomRaySet(ray, box[0], box[2], box[4], diag.x, diag.y, diag.z);
    dGeomRaySetLength(ray, gy_v3_len(diag));
}

void gy_ode_shape_walk(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, bool cast, gy_adapter_search *s)
{
    (void)length;
    gy_driver_query q = {.s = s, .cast = cast, .translation = translation};
    q.shape = query_geom(w, shape, pose);
    q.start = pose.position;
    dReal box[6];
    if (cast) {
        dGeomGetAABB(q.shape, box);
        gy_adapter_search_cast_box(s, box);
        q.probe = w->query_ray;
        gy_adapter_search_swept_box(s, 1.0, box);
        probe_span(q.probe, box);
    } else {
        q.probe = q.shape;
        dGeomGetAABB(q.probe, box);
        aabb_pad(box, GY_ADAPTER_QUERY_AABB_PAD);
    }
    if (gy_adapter_search_statics(s))
        gy_ode_static_visit(w, box, visit_static, &q);
    if (!gy_adapter_search_done(s) && gy_adapter_search_moving(s)) {
        double best;
        if (cast && gy_adapter_search_bound(s, &best)) {
            gy_adapter_search_swept_box(s, best, box);
            probe_span(q.probe, box);
        }
        dSpaceCollide2(q.probe, (dGeomID)w->dynamic_space, &q, visit_near);
    }
    probe_restore(q.probe);
    if (shape->type == GY_SHAPE_HULL)
        reset_convex(w);
}

gy_pose gy_ode_collider_body_pose(gy_driver_world *w, gy_ode_collider *c)
{
    (void)w;
    return gy_ode_body_pose(gy_ode_owner(c));
}
