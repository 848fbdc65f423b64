/* Query primitives of the Bullet driver: candidate walks and raw tests (driver.h); the filter,
 * collectors and hits are the front end's (queries.c). None allocates once warmed up.
 *
 * Candidates come from Bullet's dynamic AABB tree broadphase for moving bodies (a ray walk for rays
 * and casts, a box walk for overlaps) and from the static grid for statics; each candidate body's
 * colliders are offered one by one, so the filter applies per collider. Rays against primitives and
 * hulls are solved in closed form in the collider's frame (Bullet's convex ray cast converges only
 * to about 1e-5 of the ray length); rays against meshes use Bullet's BVH ray test. Contacts run
 * Bullet's GJK/EPA directly on the stack (a plane in closed form, a mesh triangle by triangle), not
 * its dispatcher, whose pooled algorithms run out in big scenes and then come from the heap. Casts
 * against planes and meshes start from Bullet's convex cast (btContinuousConvexCollision), which
 * the front end refines. docs/middleware.md has the details. */
#include <math.h>
#include <string.h>

#include <BulletCollision/CollisionShapes/btTriangleShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include "bullet_internal.h"

/* Casting a box: its margin rounds its edges by this much (Bullet's default would be 4 cm). */
#define QUERY_BOX_MARGIN 1e-4

/* ---- probe ---------------------------------------------------------------------------------- */

btConvexShape *gy_bt_probe_shape(gy_driver_world *w, const gy_shape *s)
{
    if (w->query_shape != nullptr) {
        w->query_shape->~btConvexShape();
        w->query_shape = nullptr;
    }
    void *mem = &w->query_storage;
    btConvexShape *shape = nullptr;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        shape = w->query_shape = new (mem) btSphereShape(s->radius);
        break;
    case GY_SHAPE_BOX: {
        btBoxShape *box = new (mem) btBoxShape(gy_bt_vec(s->box_size) * 0.5);
        box->setMargin(fmin(QUERY_BOX_MARGIN, 0.25 * box->getHalfExtentsWithMargin().minAxis()));
        shape = w->query_shape = box;
        break;
    }
    case GY_SHAPE_CAPSULE:
        shape = w->query_shape = new (mem) btCapsuleShape(s->radius, s->height - 2.0 * s->radius);
        break;
    case GY_SHAPE_HULL: {
        void *payload = gy_handle_pool_get(w->resources, s->resource.bits);
        gy_bt_resource *r = payload != nullptr ? gy_bt_resource_of(payload) : nullptr;
        if (r != nullptr && r->base.kind == GY_SHAPE_HULL)
            shape = r->hull_query_shape;
        break;
    }
    default:
        break;
    }
    if (shape != nullptr)
        w->probe.setCollisionShape(shape);
    return shape;
}

/* A collider's shape placed in the world (its child transform under the body). */
static btTransform collider_shape_transform(const gy_bt_collider *c)
{
    return gy_bt_body_frame(gy_bt_collider_body(c)) * gy_bt_collider_child(c);
}

btCollisionObject *gy_bt_collider_object(gy_driver_world *w, const gy_bt_collider *c)
{
    gy_bt_body *b = gy_bt_collider_body(c);
    return b->object() != nullptr ? b->object() : gy_bt_static_object(w, b);
}

namespace
{

/* Keeps the deepest of the closest points Bullet's GJK/EPA reports (on B, normal B → A). */
class closest_result : public btDiscreteCollisionDetectorInterface::Result
{
  public:
    void setShapeIdentifiersA(int, int) override {}
    void setShapeIdentifiersB(int, int) override {}
    void addContactPoint(const btVector3 &normal_on_b, const btVector3 &point_on_b,
                         btScalar depth) override
    {
        if (hit && !(depth < best_depth))
            return;
        hit = true;
        best_depth = depth;
        point = point_on_b;
        normal = normal_on_b;
    }

    bool hit = false;
    double best_depth = 0.0;
    btVector3 point, normal;
};

/* The earliest time of impact a convex cast reports against one collider. */
class sweep_result : public btCollisionWorld::ConvexResultCallback
{
  public:
    explicit sweep_result(const btTransform &target) : m_target(target) {}

    btScalar addSingleResult(btCollisionWorld::LocalConvexResult &r, bool normal_in_world) override
    {
        if (!(r.m_hitFraction < m_closestHitFraction))
            return m_closestHitFraction;
        m_closestHitFraction = r.m_hitFraction;
        hit = true;
        normal = normal_in_world ? r.m_hitNormalLocal : m_target.getBasis() * r.m_hitNormalLocal;
        point = r.m_hitPointLocal;
        triangle = r.m_localShapeInfo != nullptr ? r.m_localShapeInfo->m_triangleIndex : -1;
        return m_closestHitFraction;
    }

    bool hit = false;
    btVector3 normal, point;
    int triangle = -1;

  private:
    const btTransform &m_target;
};

/* The nearest hit a ray reports against one mesh. */
class mesh_ray_result : public btCollisionWorld::RayResultCallback
{
  public:
    btScalar addSingleResult(btCollisionWorld::LocalRayResult &r, bool normal_in_world) override
    {
        if (!(r.m_hitFraction <= m_closestHitFraction))
            return m_closestHitFraction;
        m_closestHitFraction = r.m_hitFraction;
        m_collisionObject = r.m_collisionObject;
        normal = r.m_hitNormalLocal;
        world_normal = normal_in_world;
        triangle = r.m_localShapeInfo != nullptr ? r.m_localShapeInfo->m_triangleIndex : -1;
        return m_closestHitFraction;
    }

    btVector3 normal;
    bool world_normal = true;
    int triangle = -1;
};

/* Broadphase walk along a ray (optionally widened by a box, for casts). */
class ray_walk : public btBroadphaseRayCallback
{
  public:
    ray_walk(gy_bt_body_visitor visit, void *ctx) : m_visit(visit), m_ctx(ctx) {}
    bool process(const btBroadphaseProxy *proxy) override
    {
        gy_bt_body *b =
            gy_bt_body_of(static_cast<const btCollisionObject *>(proxy->m_clientObject));
        if (b != nullptr)
            m_visit(m_ctx, b);
        return true;
    }

  private:
    gy_bt_body_visitor m_visit;
    void *m_ctx;
};

/* Broadphase walk over a box. */
class box_walk : public btDbvt::ICollide
{
  public:
    box_walk(gy_bt_body_visitor visit, void *ctx) : m_visit(visit), m_ctx(ctx) {}
    void Process(const btDbvtNode *leaf) override
    {
        const btBroadphaseProxy *proxy = static_cast<const btBroadphaseProxy *>(leaf->data);
        gy_bt_body *b =
            gy_bt_body_of(static_cast<const btCollisionObject *>(proxy->m_clientObject));
        if (b != nullptr)
            m_visit(m_ctx, b);
    }

  private:
    gy_bt_body_visitor m_visit;
    void *m_ctx;
};

} // namespace

/* Closest points of two convex shapes (B is the target), margins included; on the stack. */
static void convex_closest(const btConvexShape *a, const btTransform &ta, const btConvexShape *b,
                           const btTransform &tb, closest_result *out)
{
    btVoronoiSimplexSolver simplex;
    btGjkEpaPenetrationDepthSolver epa;
    btGjkPairDetector gjk(a, b, &simplex, &epa);
    btGjkPairDetector::ClosestPointInput in;
    in.m_transformA = ta;
    in.m_transformB = tb;
    /* Only overlap matters: GJK may stop as soon as it proves a gap. It measures the gap between
     * the cores, inside the margins (a sphere is all margin), so the margins count towards it. */
    double reach = a->getMargin() + b->getMargin() + GY_BT_PROBE_GAP;
    in.m_maximumDistanceSquared = reach * reach;
    gjk.getClosestPoints(in, *out, nullptr);
}

namespace
{

/* Runs the probe against each mesh triangle under its box, keeping the deepest overlap. */
class triangle_probe : public btTriangleCallback
{
  public:
    triangle_probe(const btConvexShape *probe, const btTransform &probe_in_mesh)
        : m_probe(probe), m_pose(probe_in_mesh)
    {
    }

    void processTriangle(btVector3 *tri, int, int index) override
    {
        btTriangleShape t(tri[0], tri[1], tri[2]);
        t.setMargin(0.0);
        closest_result r;
        convex_closest(m_probe, m_pose, &t, btTransform::getIdentity(), &r);
        if (!r.hit || r.best_depth > 0.0 || (best.hit && !(r.best_depth < best.best_depth)))
            return;
        best = r;
        triangle = index;
    }

    closest_result best;
    int triangle = -1;

  private:
    const btConvexShape *m_probe;
    const btTransform &m_pose;
};

} // namespace

bool gy_bt_probe_contact(gy_driver_world *w, const gy_bt_collider *c, btVector3 *point,
                         btVector3 *normal, double *penetration, int32_t *triangle)
{
    const btConvexShape *probe = static_cast<const btConvexShape *>(w->probe.getCollisionShape());
    const btTransform &tp = w->probe.getWorldTransform();
    closest_result r;
    int32_t tri = -1;
    switch (c->base.shape_type) {
    case GY_SHAPE_PLANE: {
        /* The probe's deepest point below the (world-space) plane. */
        gy_shape plane = gy_adapter_collider_shape(&c->base);
        double l = gy_v3_len(plane.normal);
        btVector3 n = gy_bt_vec(plane.normal) / l;
        btVector3 deepest = tp(probe->localGetSupportingVertex(tp.getBasis().transpose() * -n));
        double depth = n.dot(deepest) - plane.offset / l;
        r.addContactPoint(n, deepest - n * depth, depth);
        break;
    }
    case GY_SHAPE_MESH: {
        btTransform tm = collider_shape_transform(c);
        btTransform probe_in_mesh = tm.inverse() * tp;
        btVector3 lo, hi;
        probe->getAabb(probe_in_mesh, lo, hi);
        triangle_probe walk(probe, probe_in_mesh);
        static_cast<const btConcaveShape *>(c->bt_shape)->processAllTriangles(&walk, lo, hi);
        if (walk.best.hit)
            r.addContactPoint(tm.getBasis() * walk.best.normal, tm(walk.best.point),
                              walk.best.best_depth);
        tri = walk.triangle;
        break;
    }
    default:
        convex_closest(probe, tp, static_cast<const btConvexShape *>(c->bt_shape),
                       collider_shape_transform(c), &r);
        break;
    }
    /* Touching counts (depth 0), as on ODE. */
    if (!r.hit || r.best_depth > 0.0)
        return false;
    *point = r.point;
    *normal = r.normal.fuzzyZero() ? btVector3(0, 1, 0) : r.normal.normalized();
    *penetration = -r.best_depth;
    *triangle = tri;
    return true;
}

bool gy_bt_probe_sweep(gy_driver_world *w, const gy_bt_collider *c, const btTransform &from,
                       const btTransform &to, double limit, double *fraction, btVector3 *point,
                       btVector3 *normal, int32_t *triangle)
{
    btTransform ct = collider_shape_transform(c);
    sweep_result res(ct);
    res.m_closestHitFraction = limit;
    const btConvexShape *cast = static_cast<const btConvexShape *>(w->probe.getCollisionShape());
    btCollisionWorld::objectQuerySingle(cast, from, to, gy_bt_collider_object(w, c), c->bt_shape,
                                        ct, res, 0.0);
    if (!res.hit)
        return false;
    *fraction = res.m_closestHitFraction;
    *point = res.point;
    *normal = res.normal.fuzzyZero() ? btVector3(0, 0, 0) : res.normal.normalized();
    *triangle = c->base.shape_type == GY_SHAPE_MESH ? res.triangle : -1;
    return true;
}

static void moving_walk(gy_driver_world *w, const btVector3 &from, const btVector3 &to,
                        const btVector3 &aabb_min, const btVector3 &aabb_max,
                        gy_bt_body_visitor visit, void *ctx);

void gy_bt_statics_visit(gy_driver_world *w, const btVector3 &lo, const btVector3 &hi,
                         gy_bt_static_visitor visit, void *ctx)
{
    const double box[6] = {lo.x(), hi.x(), lo.y(), hi.y(), lo.z(), hi.z()};
    gy_driver_statics_visit(w->records, box, visit, ctx);
}

void gy_bt_sweep_bodies(gy_driver_world *w, const btVector3 &from, const btVector3 &to,
                        const btVector3 &aabb_min, const btVector3 &aabb_max,
                        gy_bt_body_visitor visit, gy_bt_static_visitor visit_static, void *ctx)
{
    moving_walk(w, from, to, aabb_min, aabb_max, visit, ctx);
    btVector3 lo = from, hi = from;
    lo.setMin(to);
    hi.setMax(to);
    gy_bt_statics_visit(w, lo + aabb_min, hi + aabb_max, visit_static, ctx);
}

/* The moving bodies' part of gy_bt_sweep_bodies: Bullet's broadphase holds only them. */
static void moving_walk(gy_driver_world *w, const btVector3 &from, const btVector3 &to,
                        const btVector3 &aabb_min, const btVector3 &aabb_max,
                        gy_bt_body_visitor visit, void *ctx)
{
    btVector3 dir = to - from;
    double len = dir.length();
    if (!(len > 1e-12)) {
        box_walk walk(visit, ctx);
        btDbvtVolume box = btDbvtVolume::FromMM(from + aabb_min, from + aabb_max);
        for (int s = 0; s < 2; s++)
            w->broadphase.m_sets[s].collideTVNoStackAlloc(w->broadphase.m_sets[s].m_root, box,
                                                          w->query_stack, walk);
        return;
    }
    dir /= len;
    ray_walk walk(visit, ctx);
    for (int k = 0; k < 3; k++) {
        walk.m_rayDirectionInverse[k] = dir[k] == 0.0 ? BT_LARGE_FLOAT : 1.0 / dir[k];
        walk.m_signs[k] = walk.m_rayDirectionInverse[k] < 0.0;
    }
    walk.m_lambda_max = len;
    w->broadphase.rayTest(from, to, walk, aabb_min, aabb_max);
}

/* ---- walks ---------------------------------------------------------------------------------- */

/* What the raw tests need of the walk in progress. */
struct gy_driver_query {
    gy_adapter_search *s;
    btVector3 origin, dir; /* rays; dir: unit */
    double length;
    btTransform from, to; /* shape queries: the probe's start and end */
};

/* Every collider of each body the broadphase hands over, skipping the bodies whose motion type
 * the filter excludes. */
static void visit_body(void *ctx, gy_bt_body *b)
{
    gy_driver_query *q = static_cast<gy_driver_query *>(ctx);
    if (gy_adapter_search_done(q->s) ||
        !gy_adapter_search_wants(q->s, (gy_motion_type)b->base.type))
        return;
    for (uint32_t i = 0; i < b->collider_count; i++)
        if (!gy_adapter_search_visit(q->s, q, b->colliders[i]))
            return;
}

/* Each static collider the grid hands over. */
static bool visit_static(void *ctx, gy_bt_collider *c)
{
    gy_driver_query *q = static_cast<gy_driver_query *>(ctx);
    if (gy_adapter_search_done(q->s) || !gy_adapter_search_wants(q->s, GY_MOTION_STATIC))
        return false;
    return gy_adapter_search_visit(q->s, q, c);
}

/* ---- raycast -------------------------------------------------------------------------------- */

/* Rays against meshes use Bullet's BVH ray test; against every other shape, the front end's
 * closed-form test in the collider's frame (Bullet's convex ray cast converges only to about 1e-5
 * of the ray length). */
bool gy_bt_ray_test(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, gy_driver_hit *out)
{
    double t = 0.0;
    btVector3 n(0, 0, 0);
    int32_t triangle = -1;
    const gy_shape shape = gy_adapter_collider_shape(&c->base);
    const gy_shape *s = &shape;
    gy_vec3 local_n;
    if (s->type == GY_SHAPE_PLANE) {
        if (!gy_adapter_ray_shape(s, nullptr, gy_bt_from_vec(q->origin), gy_bt_from_vec(q->dir),
                                  q->length, &t, &local_n))
            return false;
        n = gy_bt_vec(local_n);
    } else if (s->type == GY_SHAPE_MESH) {
        btTransform ct = collider_shape_transform(c);
        btTransform from(btQuaternion::getIdentity(), q->origin);
        btTransform to(btQuaternion::getIdentity(), q->origin + q->dir * q->length);
        mesh_ray_result res;
        btCollisionWorld::rayTestSingle(from, to, gy_bt_collider_object(w, c), c->bt_shape, ct,
                                        res);
        if (!res.hasHit())
            return false;
        t = res.m_closestHitFraction * q->length;
        n = res.world_normal ? res.normal : ct.getBasis() * res.normal;
        n.normalize();
        triangle = res.triangle;
    } else {
        btTransform ft = gy_bt_collider_transform(c);
        gy_vec3 o = gy_bt_from_vec(ft.invXform(q->origin));
        gy_vec3 d = gy_bt_from_vec(ft.getBasis().transpose() * q->dir);
        if (!gy_adapter_ray_shape(s, gy_adapter_collider_hull(&c->base), o, d, q->length, &t,
                                  &local_n))
            return false;
        n = (ft.getBasis() * gy_bt_vec(local_n)).normalized();
    }
    gy_adapter_ray_hit(gy_bt_from_vec(q->origin), gy_bt_from_vec(q->dir), t, gy_bt_from_vec(n),
                       triangle, out);
    return true;
}

void gy_bt_ray_walk(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                    gy_adapter_search *s)
{
    gy_driver_query q;
    q.s = s;
    q.length = length;
    q.origin = gy_bt_vec(origin);
    q.dir = gy_bt_vec(dir);
    gy_bt_refresh_aabbs(w);
    btVector3 zero(0, 0, 0);
    gy_bt_sweep_bodies(w, q.origin, q.origin + q.dir * q.length, zero, zero, visit_body,
                       visit_static, &q);
}

/* ---- overlap and shape cast ----------------------------------------------------------------- */

/* The probe posed at fraction t of its translation. */
bool gy_bt_shape_contact(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, double t,
                         gy_driver_hit *out)
{
    btVector3 point, normal;
    btTransform at = q->from;
    at.setOrigin(q->from.getOrigin() + (q->to.getOrigin() - q->from.getOrigin()) * t);
    w->probe.setWorldTransform(at);
    if (!gy_bt_probe_contact(w, c, &point, &normal, &out->depth, &out->triangle))
        return false;
    out->t = t;
    out->point = gy_bt_from_vec(point);
    out->normal = gy_bt_from_vec(normal);
    return true;
}

/* Bullet's convex cast (btContinuousConvexCollision) against a plane or a mesh. It ends once the
 * gap is under GY_BT_PROBE_GAP, so its fraction can be a millimetre off the contact (short of it,
 * or past it on curved shapes): the driver's cast_sweep_slack. */
bool gy_bt_cast_sweep(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, double hi,
                      gy_driver_hit *out)
{
    btVector3 point, normal;
    double fraction;
    if (!gy_bt_probe_sweep(w, c, q->from, q->to, hi, &fraction, &point, &normal, &out->triangle))
        return false;
    out->t = fraction;
    out->point = gy_bt_from_vec(point);
    out->normal = gy_bt_from_vec(normal);
    out->depth = 0.0;
    return true;
}

void gy_bt_shape_walk(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                      double length, bool cast, gy_adapter_search *s)
{
    gy_driver_query q;
    q.s = s;
    q.length = length;
    pose.rotation = gy_quat_normalize(pose.rotation);
    q.from = q.to = gy_bt_transform(pose);
    if (cast)
        q.to.setOrigin(q.from.getOrigin() + gy_bt_vec(translation));
    btConvexShape *probe = gy_bt_probe_shape(w, shape);
    btVector3 lo, hi;
    btTransform turn(q.from.getRotation(), btVector3(0, 0, 0));
    probe->getAabb(turn, lo, hi);
    gy_bt_refresh_aabbs(w);
    gy_bt_sweep_bodies(w, q.from.getOrigin(), q.to.getOrigin(), lo, hi, visit_body, visit_static,
                       &q);
}

gy_pose gy_bt_collider_body_pose(gy_driver_world *, gy_bt_collider *c)
{
    return gy_bt_body_pose(gy_bt_collider_body(c));
}
