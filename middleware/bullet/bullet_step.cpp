/* Bullet driver: the step's parts (gy_driver_step; the front end runs the loop, step.h). Per
 * substep: kinematic bodies are moved to where their velocities take them (Bullet derives a
 * kinematic body's contact velocity from its last two poses) and btDiscreteDynamicsWorld steps
 * once. Its narrowphase runs through the driver's near callback (moving pairs) and static pass
 * (moving bodies against the static grid, "statics" below),
 * whose contact result asks the front end's pre-solve rules per collider pair what Bullet only
 * knows per object: category/mask, sensors and response-off colliders (reported, never added to
 * a manifold), one-way platforms (points dropped), combined materials, conveyors' friction rows.
 * After the solve the driver reads the manifolds into per-pair reports; the front end then
 * applies its own rules (ballistic gravity, axis locks, continuous collision, the sleep test on
 * averaged velocities, joint breaks) through the raw state and geometry primitives at the end of
 * this file.
 *
 * Pairs whose bodies both sleep keep their manifolds, so their contacts stay reported; the front
 * end carries sensor overlaps (which have no manifold points) over from the last report. */
#include <math.h>
#include <string.h>

#include "../src/step.h"
#include "bullet_internal.h"

/* A bit of btManifoldPoint::m_contactPointFlags that Bullet leaves alone: restitution aimed the
 * point at a rebound in this substep's solve (gy_adapter_point.bounces). */
static const int GY_BT_CONTACT_BOUNCES = 1 << 16;

/* ---- report ------------------------------------------------------------------------------- */

/* The report entry of a collider pair (in either order), appended when new; UINT32_MAX when out
 * of memory (recorded in step_error). */
static uint32_t pair_get(gy_driver_world *w, gy_bt_collider *a, gy_bt_collider *b)
{
    bool is_new;
    return gy_adapter_contacts_pair(w->contacts, &a->base, &b->base, &is_new, &w->step_error);
}

/* Records the geometry of a pair's contact point (the report keeps each pass's deepest).
 * `n_from_first` points from `first` to the other collider. */
static void pair_geometry(gy_driver_world *w, uint32_t index, const gy_bt_collider *first,
                          const btVector3 &point, const btVector3 &n_from_first, double distance)
{
    gy_adapter_contacts_geometry(w->contacts, index, &first->base, gy_bt_from_vec(point),
                                 gy_bt_from_vec(n_from_first), distance);
}

/* ---- the contact result: per collider pair decisions ---------------------------------------- */

/* The collider a leaf wrapper belongs to: the child of the body's compound it descends from, or
 * the body's only collider. */
static gy_bt_collider *collider_of(const btCollisionObjectWrapper *wrap)
{
    gy_bt_body *b = gy_bt_body_of(wrap->getCollisionObject());
    if (b == nullptr)
        return nullptr;
    uint32_t index = 0;
    if (b->compound != nullptr) {
        const btCollisionObjectWrapper *child = wrap;
        while (child->m_parent != nullptr && child->m_parent->m_parent != nullptr)
            child = child->m_parent;
        if (child->m_parent == nullptr || child->m_index < 0)
            return nullptr;
        index = (uint32_t)child->m_index;
    }
    return index < b->collider_count ? b->colliders[index] : nullptr;
}

/* Gives a point the friction frame (d1, d2). Bullet warm-starts the friction rows with last
 * step's impulses as numbers; `lateral`, last step's friction impulse as a vector, is carried
 * into the new frame. */
static void set_friction_frame(btManifoldPoint &p, const btVector3 &lateral, const btVector3 &d1,
                               const btVector3 &d2)
{
    p.m_lateralFrictionDir1 = d1;
    p.m_lateralFrictionDir2 = d2;
    p.m_appliedImpulseLateral1 = lateral.dot(d1);
    p.m_appliedImpulseLateral2 = lateral.dot(d2);
}

/* A point's friction impulse as a vector (its two friction rows' impulses along their directions).
 */
static btVector3 lateral_impulse(const btManifoldPoint &p)
{
    return p.m_lateralFrictionDir1 * p.m_appliedImpulseLateral1 +
           p.m_lateralFrictionDir2 * p.m_appliedImpulseLateral2;
}

/* Contacts against a mesh take the front end's rule for its internal edges
 * (gy_adapter_contact_mesh_edges; Bullet's own btAdjustInternalEdgeContacts would classify the
 * edges a second way). `normal_on_b` points from b to a, `depth` is Bullet's signed distance. */
static void mesh_edges(const gy_bt_collider *ca, const btCollisionObjectWrapper *wa, int tri_a,
                       const gy_bt_collider *cb, const btCollisionObjectWrapper *wb, int tri_b,
                       btVector3 &point_on_b, btVector3 &normal_on_b, btScalar &depth)
{
    bool mesh_a = ca->base.shape_type == GY_SHAPE_MESH,
         mesh_b = cb->base.shape_type == GY_SHAPE_MESH;
    if (!mesh_a && !mesh_b)
        return;
    gy_adapter_raw_point p;
    p.point_b = gy_bt_from_vec(point_on_b);
    p.point_a = gy_bt_from_vec(point_on_b + normal_on_b * depth);
    p.normal = gy_bt_from_vec(normal_on_b);
    p.distance = depth;
    p.triangle_a = tri_a;
    p.triangle_b = tri_b;
    gy_pose pa = gy_bt_from_transform(wa->getWorldTransform());
    gy_pose pb = gy_bt_from_transform(wb->getWorldTransform());
    if (!gy_adapter_contact_mesh_edges(&ca->base, pa, &cb->base, pb, &p))
        return;
    normal_on_b = gy_bt_vec(p.normal);
    point_on_b = gy_bt_vec(p.point_b);
    depth = p.distance;
}

namespace
{

/* Bullet's btManifoldResult with the adapter's per collider pair rules. Points arrive in the
 * manifold's order: `normal_on_b` points from the manifold's body 1 towards its body 0. */
class contact_result : public btManifoldResult
{
  public:
    contact_result(gy_driver_world *w, const btCollisionObjectWrapper *w0,
                   const btCollisionObjectWrapper *w1)
        : btManifoldResult(w0, w1), m_world(w)
    {
        assert(w->held_points.count == 0); /* judge_held empties it after every collision */
    }

    void addContactPoint(const btVector3 &normal_on_b, const btVector3 &point_on_b,
                         btScalar depth) override;
    void judge_held();

  private:
    void overlap(gy_bt_collider *ca, gy_bt_collider *cb, const btVector3 &point,
                 const btVector3 &normal_on_b, double depth);
    void add(const gy_bt_raw_point &p);
    gy_driver_world *m_world;
};

} // namespace

void contact_result::overlap(gy_bt_collider *ca, gy_bt_collider *cb, const btVector3 &point,
                             const btVector3 &normal_on_b, double depth)
{
    uint32_t k = pair_get(m_world, ca, cb);
    if (k == UINT32_MAX)
        return;
    pair_geometry(m_world, k, ca, point, -normal_on_b, depth);
}

void contact_result::addContactPoint(const btVector3 &normal_in, const btVector3 &point_in,
                                     btScalar depth_in)
{
    gy_bt_raw_point p;
    p.depth = depth_in;
    p.normal_on_b = normal_in;
    p.point_on_b = point_in;
    p.manifold = m_manifoldPtr;
    if (p.manifold == nullptr || p.depth > p.manifold->getContactBreakingThreshold())
        return;
    bool swapped = p.manifold->getBody0() != m_body0Wrap->getCollisionObject();
    const btCollisionObjectWrapper *wa = swapped ? m_body1Wrap : m_body0Wrap;
    const btCollisionObjectWrapper *wb = swapped ? m_body0Wrap : m_body1Wrap;
    p.ca = collider_of(wa);
    p.cb = collider_of(wb);
    if (p.ca == nullptr || p.cb == nullptr)
        return;
    gy_adapter_contact_kind kind =
        gy_adapter_contact_gate(&p.ca->base, &p.cb->base, m_world->sensor_pass);
    if (kind == GY_ADAPTER_CONTACT_SKIP)
        return;
    p.tri_a = swapped ? m_index1 : m_index0;
    p.tri_b = swapped ? m_index0 : m_index1;
    mesh_edges(p.ca, wa, p.tri_a, p.cb, wb, p.tri_b, p.point_on_b, p.normal_on_b, p.depth);
    /* Rows that could only fight axis locks are left out: the pair is reported, not solved. */
    if (kind == GY_ADAPTER_CONTACT_SOLVE &&
        gy_adapter_contact_locked(p.ca->base.owner, p.cb->base.owner,
                                  gy_bt_from_vec(p.normal_on_b)))
        kind = GY_ADAPTER_CONTACT_REPORT;
    if (kind == GY_ADAPTER_CONTACT_REPORT) {
        /* Reported, never solved: only real overlap counts (Bullet also reports near misses). */
        btVector3 point_on_a = p.point_on_b + p.normal_on_b * p.depth;
        if (p.depth <= 0.0)
            overlap(p.ca, p.cb, (point_on_a + p.point_on_b) * 0.5, p.normal_on_b, p.depth);
        return;
    }
    p.oa = wa->getCollisionObject();
    p.ob = wb->getCollisionObject();
    bool accepted;
    if (!gy_frontend_one_way_judged(m_world->contacts, &p.ca->base, &p.cb->base, &accepted)) {
        /* The verdict is taken on the pair's deepest point, once all are in (judge_held). */
        gy_result r = gy_bt_raw_points_push(m_world->allocator, &m_world->held_points, p);
        if (r == GY_OK)
            return;
        /* Out of memory (noted): judged on the points held so far and this one. */
        gy_adapter_note_error(&m_world->step_error, r);
        judge_held();
        accepted = gy_frontend_one_way_pair(
            m_world->contacts, &p.ca->base, &p.cb->base, gy_bt_from_vec(-p.normal_on_b),
            gy_bt_from_vec(p.point_on_b), -p.depth, &m_world->step_error);
    }
    if (!accepted) {
        p.manifold->clearManifold(); /* this collider pair's manifold: drop what it held before */
        return;
    }
    add(p);
}

/* The held points, pair by pair: each pair's verdict on its deepest point decides whether its
 * points go into the manifold. */
void contact_result::judge_held()
{
    gy_bt_raw_point *held = m_world->held_points.items;
    uint32_t n = m_world->held_points.count;
    for (uint32_t i = 0; i < n; i++) {
        const gy_bt_raw_point &first = held[i];
        if (first.manifold == nullptr)
            continue; /* judged with an earlier point of its pair */
        const gy_bt_raw_point *deepest = &first;
        for (uint32_t k = i + 1; k < n; k++)
            if (held[k].ca == first.ca && held[k].cb == first.cb && held[k].depth < deepest->depth)
                deepest = &held[k];
        bool accepted = gy_frontend_one_way_pair(
            m_world->contacts, &first.ca->base, &first.cb->base,
            gy_bt_from_vec(-deepest->normal_on_b), gy_bt_from_vec(deepest->point_on_b),
            -deepest->depth, &m_world->step_error);
        if (!accepted)
            first.manifold->clearManifold(); /* drop what it held before */
        for (uint32_t k = i; k < n; k++) {
            gy_bt_raw_point &p = held[k];
            if (p.manifold == nullptr || p.ca != first.ca || p.cb != first.cb)
                continue;
            if (accepted)
                add(p);
            p.manifold = nullptr;
        }
    }
    m_world->held_points.count = 0;
}

/* A point the pre-solve rules keep, into its manifold with Gyre's material and friction frame. */
void contact_result::add(const gy_bt_raw_point &p)
{
    btPersistentManifold *m = p.manifold;
    btVector3 point_on_a = p.point_on_b + p.normal_on_b * p.depth;
    btVector3 local_a = p.oa->getWorldTransform().invXform(point_on_a);
    btVector3 local_b = p.ob->getWorldTransform().invXform(p.point_on_b);
    btManifoldPoint pt(local_a, local_b, p.normal_on_b, p.depth);
    pt.m_positionWorldOnA = point_on_a;
    pt.m_positionWorldOnB = p.point_on_b;
    int insert = m->getCacheEntry(pt);
    double friction, restitution;
    gy_adapter_contact_material(&p.ca->base, &p.cb->base, &friction, &restitution);
    pt.m_combinedFriction = friction;
    pt.m_combinedRestitution = restitution;
    pt.m_combinedRollingFriction = 0.0;
    pt.m_combinedSpinningFriction = 0.0;
    /* A fixed frame about the normal to start with; the solve turns it along the slip
     * (gy_bt_solver::convertContacts). Marked initialised so Bullet takes the frame as given. */
    btPlaneSpace1(pt.m_normalWorldOnB, pt.m_lateralFrictionDir1, pt.m_lateralFrictionDir2);
    pt.m_contactPointFlags |= BT_CONTACT_FLAG_LATERAL_FRICTION_INITIALIZED;
    /* Part ids carry the collider (child) indices so reports know the pair; index ids carry mesh
     * triangles. */
    pt.m_partId0 = (int)p.ca->index;
    pt.m_partId1 = (int)p.cb->index;
    pt.m_index0 = p.ca->base.shape_type == GY_SHAPE_MESH ? p.tri_a : -1;
    pt.m_index1 = p.cb->base.shape_type == GY_SHAPE_MESH ? p.tri_b : -1;
    /* Conveyors: friction drives v_a - v_b towards s_b - s_a along the surface. */
    gy_vec3 surf, t;
    double tl;
    if (gy_adapter_contact_surface(m_world->contacts, &p.ca->base, &p.cb->base, &surf) &&
        gy_adapter_contact_conveyor(surf, gy_bt_from_vec(p.normal_on_b), &t, &tl)) {
        pt.m_lateralFrictionDir1 = gy_bt_vec(t) / tl;
        pt.m_lateralFrictionDir2 = p.normal_on_b.cross(pt.m_lateralFrictionDir1);
        pt.m_contactMotion1 = tl;
        pt.m_contactMotion2 = 0.0;
        pt.m_contactPointFlags |= BT_CONTACT_FLAG_LATERAL_FRICTION_INITIALIZED;
    }
    if (insert >= 0) {
        btVector3 lateral = lateral_impulse(m->getContactPoint(insert));
        m->replaceContactPoint(pt, insert);
        set_friction_frame(m->getContactPoint(insert), lateral, pt.m_lateralFrictionDir1,
                           pt.m_lateralFrictionDir2);
    } else
        m->addManifoldPoint(pt);
}

static bool has_sensor(const btCollisionObject *o)
{
    const gy_bt_body *b = gy_bt_body_of(o);
    return b != nullptr && b->gate.has_sensor;
}

/* Jointed bodies never collide (gy_adapter_bodies_jointed). Bullet skips pairs whose sides are
 * both inactive, and its algorithms make no manifold for them. */
bool gy_bt_dispatcher::needsCollision(const btCollisionObject *o0, const btCollisionObject *o1)
{
    const gy_bt_body *b0 = gy_bt_body_of(o0), *b1 = gy_bt_body_of(o1);
    if (b0 != nullptr && b1 != nullptr && gy_adapter_bodies_jointed(&b0->base, &b1->base))
        return false;
    return btCollisionDispatcher::needsCollision(o0, o1);
}

/* Collides two objects through their pair's algorithm (made on first use). */
static void collide_pair(gy_driver_world *w, btCollisionAlgorithm **algorithm,
                         btCollisionObject *o0, btCollisionObject *o1, const btDispatcherInfo &info)
{
    btCollisionObjectWrapper w0(nullptr, o0->getCollisionShape(), o0, o0->getWorldTransform(), -1,
                                -1);
    btCollisionObjectWrapper w1(nullptr, o1->getCollisionShape(), o1, o1->getWorldTransform(), -1,
                                -1);
    if (*algorithm == nullptr)
        *algorithm = w->dispatcher.findAlgorithm(&w0, &w1, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    if (*algorithm == nullptr)
        return;
    contact_result result(w, &w0, &w1);
    /* Stale points are dropped before the pair is collided, not after: a box-plane pair whose
     * manifold still held its four old points got only the deepest new one, and the refresh
     * after it left the box on one corner for a step (a sideways kick that slip-aligned friction
     * does not hold back). With the manifold emptied first, the perturbed collision refills it. */
    btManifoldArray &held = w->refresh_manifolds;
    held.resize(0);
    (*algorithm)->getAllContactManifolds(held);
    for (int i = 0; i < held.size(); i++)
        held[i]->refreshContactPoints(held[i]->getBody0()->getWorldTransform(),
                                      held[i]->getBody1()->getWorldTransform());
    (*algorithm)->processCollision(&w0, &w1, info, &result);
    result.judge_held();
}

static void collide_body_statics(gy_driver_world *w, gy_bt_body *b, const btDispatcherInfo &info);

void gy_bt_near_callback(btBroadphasePair &pair, btCollisionDispatcher &dispatcher,
                         const btDispatcherInfo &info)
{
    gy_bt_dispatcher &d = static_cast<gy_bt_dispatcher &>(dispatcher);
    btCollisionObject *o0 = static_cast<btCollisionObject *>(pair.m_pProxy0->m_clientObject);
    btCollisionObject *o1 = static_cast<btCollisionObject *>(pair.m_pProxy1->m_clientObject);
    /* Each body's statics are collided when Bullet first reaches the body in its pair order (and
     * the rest after its pairs), so static pairs keep their place among the others as when
     * statics had proxies: Bullet's rows are solved in the order its manifolds were made, and a
     * 10-box stack's lean at 10 iterations goes with that order (2.6 cm so, 5.8 cm with every
     * static pair last, 6.8 cm first, after 10 s). */
    if (d.world->statics_on) {
        gy_bt_body *b0 = gy_bt_body_of(o0), *b1 = gy_bt_body_of(o1);
        if (b0 != nullptr && b0->motion() != nullptr)
            collide_body_statics(d.world, b0, info);
        if (b1 != nullptr && b1->motion() != nullptr)
            collide_body_statics(d.world, b1, info);
    }
    if (d.world->sensor_pass && !has_sensor(o0) && !has_sensor(o1))
        return;
    if (!d.needsCollision(o0, o1))
        return;
    collide_pair(d.world, &pair.m_algorithm, o0, o1, info);
}

/* ---- statics -------------------------------------------------------------------------------- */

/* Statics are no Bullet objects (bullet_internal.h): after Bullet's broadphase pairs, each moving
 * body that Bullet would collide is collided with the statics under its broadphase box, through
 * a pair record per (moving body, static body) that keeps Bullet's algorithm (and so its
 * manifolds, which islands and the solver take as any pair's, the static side being the fixed
 * body) while the boxes overlap. A sleeping body's pairs stay, uncollided, as Bullet keeps a
 * sleeping pair (the front end wakes a sleeper that a static placed since the last step touches,
 * step.h). */

static gy_map_key static_pair_key(const gy_bt_body *moving, const gy_bt_body *fixed)
{
    return gy_map_key_pair((uint64_t)(uintptr_t)moving, (uint64_t)(uintptr_t)fixed);
}

static void static_pair_remove(gy_driver_world *w, uint32_t i)
{
    gy_bt_static_pair *p = &w->static_pairs.items[i];
    if (p->algorithm != nullptr) { /* its manifolds go with it */
        p->algorithm->~btCollisionAlgorithm();
        w->dispatcher.freeCollisionAlgorithm(p->algorithm);
    }
    p->moving->static_pairs--;
    p->fixed->static_pairs--;
    gy_hash_map_remove(&w->static_pair_map, static_pair_key(p->moving, p->fixed), nullptr);
    uint32_t last = --w->static_pairs.count;
    if (i == last)
        return;
    *p = w->static_pairs.items[last];
    *gy_hash_map_find(&w->static_pair_map, static_pair_key(p->moving, p->fixed)) = i;
}

/* The record of a pair, if any, removed. */
static void static_pair_forget(gy_driver_world *w, const gy_bt_body *moving,
                               const gy_bt_body *fixed)
{
    const uint64_t *i = gy_hash_map_find(&w->static_pair_map, static_pair_key(moving, fixed));
    if (i != nullptr)
        static_pair_remove(w, (uint32_t)*i);
}

namespace
{
struct drop_ctx {
    gy_driver_world *w;
    gy_bt_body *b;
};
} // namespace

static bool drop_static(void *ctx, gy_bt_collider *c)
{
    drop_ctx *d = static_cast<drop_ctx *>(ctx);
    static_pair_forget(d->w, d->b, gy_bt_collider_body(c));
    return d->b->static_pairs > 0;
}

static void drop_moving(void *ctx, gy_bt_body *m)
{
    drop_ctx *d = static_cast<drop_ctx *>(ctx);
    if (m->motion() != nullptr && d->b->static_pairs > 0)
        static_pair_forget(d->w, m, d->b);
}

static void drop_none(void *, gy_bt_body *) {}

static bool drop_no_static(void *, gy_bt_collider *)
{
    return false;
}

void gy_bt_static_pairs_drop(gy_driver_world *w, gy_bt_body *b)
{
    /* Found through the grid (a moving body's statics under its broadphase box) or the
     * broadphase (the moving bodies over a static's grid boxes), so that releasing many bodies
     * does not walk every pair for each; what a box moved since its pairs were found left behind
     * is found by the walk below. */
    drop_ctx d = {w, b};
    btVector3 zero(0, 0, 0);
    if (b->static_pairs > 0 && b->object() != nullptr) {
        const btBroadphaseProxy *proxy = b->object()->getBroadphaseHandle();
        gy_bt_sweep_bodies(w, zero, zero, proxy->m_aabbMin, proxy->m_aabbMax, drop_none,
                           drop_static, &d);
    }
    for (uint32_t i = 0; i < b->collider_count && b->static_pairs > 0 && b->object() == nullptr;
         i++) {
        const gy_aabb &box = gy_adapter_collider_grid(&b->colliders[i]->base)->box;
        gy_bt_sweep_bodies(w, zero, zero, gy_bt_vec(box.min), gy_bt_vec(box.max), drop_moving,
                           drop_no_static, &d);
    }
    /* From the end: a record swapped into slot i was looked at already. */
    for (uint32_t i = w->static_pairs.count; i-- > 0 && b->static_pairs > 0;) {
        const gy_bt_static_pair *p = &w->static_pairs.items[i];
        if (p->moving == b || p->fixed == b)
            static_pair_remove(w, i);
    }
}

/* What the broadphase filter (gy_bt_pair_filter) and the dispatcher's needsCollision decided for
 * a static's pairs, and the sensor pass's choice of sensor pairs. */
static bool static_pair_wanted(const gy_driver_world *w, const gy_bt_body *b, const gy_bt_body *s)
{
    if (!gy_bt_bodies_may_pair(b, s))
        return false;
    if (w->sensor_pass && !b->gate.has_sensor && !s->gate.has_sensor)
        return false;
    return !gy_adapter_bodies_jointed(&b->base, &s->base);
}

namespace
{
struct static_visit_ctx {
    gy_driver_world *w;
    gy_bt_body *b;
    const btDispatcherInfo *info;
};
} // namespace

static bool static_visit(void *ctx, gy_bt_collider *c)
{
    static_visit_ctx *v = static_cast<static_visit_ctx *>(ctx);
    gy_driver_world *w = v->w;
    gy_bt_body *s = gy_bt_collider_body(c);
    if (!static_pair_wanted(w, v->b, s))
        return true;
    gy_map_key key = static_pair_key(v->b, s);
    uint64_t *slot = gy_hash_map_find(&w->static_pair_map, key);
    bool inserted = false;
    gy_result r = GY_OK;
    if (slot == nullptr) /* found at once for the pairs that last */
        r = gy_hash_map_upsert(&w->static_pair_map, key, &slot, &inserted);
    if (r == GY_OK && inserted) {
        gy_bt_static_pair p = {v->b, s, nullptr, 0};
        r = gy_bt_static_pairs_push(w->allocator, &w->static_pairs, p);
        if (r != GY_OK) {
            gy_hash_map_remove(&w->static_pair_map, key, nullptr);
        } else {
            *slot = w->static_pairs.count - 1u;
            v->b->static_pairs++;
            s->static_pairs++;
        }
    }
    if (r != GY_OK) {
        gy_adapter_note_error(&w->step_error, r);
        return false;
    }
    gy_bt_static_pair *p = &w->static_pairs.items[*slot];
    if (p->seen == w->static_pass)
        return true; /* another collider of the same static */
    p->seen = w->static_pass;
    collide_pair(w, &p->algorithm, v->b->object(), gy_bt_static_object(w, s), *v->info);
    return true;
}

/* A moving body's statics, once per pass. */
static void collide_body_statics(gy_driver_world *w, gy_bt_body *b, const btDispatcherInfo &info)
{
    uint64_t pass = w->static_pass;
    if (b->motion()->static_done == pass)
        return;
    b->motion()->static_done = pass;
    /* The front end's activity (the vendor's, but for the sensor pass: a body that fell asleep in
     * the last substep is still looked at with the end poses, as on every driver). */
    if (!gy_adapter_body_active(&b->base))
        return;
    b->motion()->static_pass = pass;
    const btBroadphaseProxy *proxy = b->object()->getBroadphaseHandle();
    static_visit_ctx v = {w, b, &info};
    gy_bt_statics_visit(w, proxy->m_aabbMin, proxy->m_aabbMax, static_visit, &v);
}

static void collide_statics(gy_driver_world *w, const btDispatcherInfo &info)
{
    if (!w->statics_on)
        return;
    uint64_t pass = w->static_pass;
    for (uint32_t i = 0; i < w->moving->count; i++)
        collide_body_statics(w, w->moving->items[i], info);
    if (w->sensor_pass)
        return; /* sensor pairs only: the others were not looked for */
    /* The pairs of the bodies looked for whose boxes no longer overlap. */
    for (uint32_t i = w->static_pairs.count; i-- > 0;) {
        const gy_bt_static_pair *p = &w->static_pairs.items[i];
        if (p->moving->motion()->static_pass == pass && p->seen != pass)
            static_pair_remove(w, i);
    }
}

void gy_bt_dispatcher::dispatchAllCollisionPairs(btOverlappingPairCache *pairs,
                                                 const btDispatcherInfo &info,
                                                 btDispatcher *dispatcher)
{
    world->static_pass++;
    world->statics_on = world->static_pairs.count > 0 || world->tally->bodies[GY_MOTION_STATIC] > 0;
    btCollisionDispatcher::dispatchAllCollisionPairs(pairs, info, dispatcher);
    collide_statics(world, info);
}

/* The separation speed of a contact row's two bodies along its normal (as Bullet's own setup
 * takes it, external forces of the step included). */
static double row_speed(const btSolverConstraint &c, const btSolverBody &sa, const btSolverBody &sb)
{
    return c.m_contactNormal1.dot(sa.m_linearVelocity + sa.m_externalForceImpulse) +
           c.m_relpos1CrossNormal.dot(sa.m_angularVelocity + sa.m_externalTorqueImpulse) +
           c.m_contactNormal2.dot(sb.m_linearVelocity + sb.m_externalForceImpulse) +
           c.m_relpos2CrossNormal.dot(sb.m_angularVelocity + sb.m_externalTorqueImpulse);
}

/* The velocity of a point's body A relative to its body B (each at its own point, a missing body
 * still), as the solve starts from. */
static btVector3 relative_velocity(const btManifoldPoint &p, const btRigidBody *ra,
                                   const btRigidBody *rb)
{
    btVector3 va(0, 0, 0), vb(0, 0, 0);
    if (ra != nullptr)
        va = ra->getVelocityInLocalPoint(p.getPositionWorldOnA() -
                                         ra->getWorldTransform().getOrigin());
    if (rb != nullptr)
        vb = rb->getVelocityInLocalPoint(p.getPositionWorldOnB() -
                                         rb->getWorldTransform().getOrigin());
    return va - vb;
}

/* Sets a point's row to reach the normal speed `target` alone: no correction of the overlap, in
 * the velocity or split off, on top. */
static void aim_row(btSolverConstraint &c, double target, const btSolverBody &sa,
                    const btSolverBody &sb)
{
    c.m_rhs = (target - row_speed(c, sa, sb)) * c.m_jacDiagABInv;
    c.m_rhsPenetration = 0.0;
}

/* What a point's row aims for (the front end's rules, gy_adapter_contact_aim). A bounce's
 * approach is taken as Bullet does, from the bodies' velocities before the solve, and gravity
 * from the vendor's per-body setting. */
static gy_adapter_aim point_aim(const btManifoldPoint &cp, const btSolverBody &sa,
                                const btSolverBody &sb, const btContactSolverInfo &info,
                                double *target)
{
    double approach = 0.0, offset = 0.0, pull = 0.0;
    if (cp.m_combinedRestitution > 0.0) {
        const btRigidBody *ra = sa.m_originalBody, *rb = sb.m_originalBody;
        btVector3 ga(0, 0, 0), gb(0, 0, 0);
        if (ra != nullptr && ra->getInvMass() > 0.0)
            ga = ra->getGravity();
        if (rb != nullptr && rb->getInvMass() > 0.0)
            gb = rb->getGravity();
        const btVector3 &n = cp.m_normalWorldOnB; /* B to A */
        approach = -n.dot(relative_velocity(cp, ra, rb));
        offset = cp.getDistance() + info.m_linearSlop;
        pull = -n.dot(ga - gb);
    }
    return gy_adapter_contact_aim(cp.m_combinedRestitution, approach, offset, pull,
                                  -cp.getDistance(), info.m_erp, info.m_timeStep, target);
}

/* Bullet sets each contact up to reach restitution × approach plus, for a penetration it does
 * not split off, erp·depth/h, and bounces a point found before touching at once. Both change a
 * bounce's energy by the height of where the contact was found: a bouncing point's row aims
 * instead for gy_adapter_bounce_speed from its gap or depth, with no overlap correction. Every
 * other point in the contact layer's range aims for the layer (gy_adapter_contact_layer) at
 * Bullet's ERP. Bullet's own target is its m_linearSlop, and it keeps a resting point in its
 * manifold up to the breaking distance apart, so a box at rest kept its corners at zero depth; a
 * point that slid further than that in a step was dropped and found again by a narrow phase that
 * reports only overlapping corners, and a box riding a conveyor belt lost a corner every few
 * steps and rocked, while a 10-box stack swayed by up to 28 cm and never slept. */
void gy_bt_solver::convertContacts(btPersistentManifold **manifolds, int count,
                                   const btContactSolverInfo &info)
{
    /* Slip-aligned friction (gy_adapter_friction_direction), taken from the velocities the solve
     * starts from, for every point including those the manifold kept from earlier steps. A
     * conveyor's frame (it has surface motion) and a point that does not slip keep theirs. */
    for (int i = 0; i < count; i++) {
        btPersistentManifold *m = manifolds[i];
        const btRigidBody *ra = btRigidBody::upcast(m->getBody0());
        const btRigidBody *rb = btRigidBody::upcast(m->getBody1());
        for (int k = 0; k < m->getNumContacts(); k++) {
            btManifoldPoint &p = m->getContactPoint(k);
            if (p.m_contactMotion1 != 0.0 || p.m_contactMotion2 != 0.0)
                continue;
            gy_vec3 d1;
            if (!gy_adapter_friction_direction(gy_bt_from_vec(relative_velocity(p, ra, rb)),
                                               gy_bt_from_vec(p.m_normalWorldOnB), &d1))
                continue;
            btVector3 t1 = gy_bt_vec(d1);
            set_friction_frame(p, lateral_impulse(p), t1, p.m_normalWorldOnB.cross(t1));
        }
    }
    btSequentialImpulseConstraintSolver::convertContacts(manifolds, count, info);
    for (int i = 0; i < m_tmpSolverContactConstraintPool.size(); i++) {
        btSolverConstraint &c = m_tmpSolverContactConstraintPool[i];
        btManifoldPoint *cp = static_cast<btManifoldPoint *>(c.m_originalContactPoint);
        if (cp == nullptr)
            continue;
        cp->m_contactPointFlags &= ~GY_BT_CONTACT_BOUNCES;
        const btSolverBody &sa = m_tmpSolverBodyPool[c.m_solverBodyIdA];
        const btSolverBody &sb = m_tmpSolverBodyPool[c.m_solverBodyIdB];
        double target;
        gy_adapter_aim aim = point_aim(*cp, sa, sb, info, &target);
        if (aim == GY_ADAPTER_AIM_VENDOR)
            continue; /* deep (split impulse) or far apart: Bullet's row */
        if (aim == GY_ADAPTER_AIM_BOUNCE)
            cp->m_contactPointFlags |= GY_BT_CONTACT_BOUNCES;
        aim_row(c, target, sa, sb);
    }
}

/* ---- after the solve ------------------------------------------------------------------------ */

/* Whether a body takes part in the give-back: dynamic and awake. */
static bool settles(const gy_bt_body *b)
{
    return b->base.type == GY_MOTION_DYNAMIC && b->rb->isActive();
}

/* Lists an overlapping point of a manifold with an awake dynamic side for the front end's
 * overlap correction (overlap.h), which adds its impulses to the report: body1 is the manifold's
 * body 0, the normal Bullet's B-to-A one, the force the solved impulses on body 0 over h. False
 * when out of memory (noted). */
static bool list_point(gy_driver_world *w, uint32_t pair, bool first0, gy_bt_body *b0,
                       gy_bt_body *b1, const btManifoldPoint &p, double h)
{
    gy_adapter_points *pts = &w->contacts->points;
    gy_adapter_point *pt = gy_adapter_points_next(pts, w->allocator, &w->step_error);
    if (pt == nullptr)
        return false;
    btVector3 &f = w->point_forces[(int)pts->count];
    f = (p.m_normalWorldOnB * p.m_appliedImpulse +
         p.m_lateralFrictionDir1 * p.m_appliedImpulseLateral1 +
         p.m_lateralFrictionDir2 * p.m_appliedImpulseLateral2) /
        h;
    pt->pair = pair;
    pt->force = &f.m_floats[0];
    pt->normal = gy_bt_from_vec(p.m_normalWorldOnB);
    pt->body1_is_a = first0;
    pt->body1 = &b0->base;
    pt->body2 = &b1->base;
    pt->position = gy_bt_from_vec((p.m_positionWorldOnA + p.m_positionWorldOnB) * 0.5);
    pt->depth = -p.getDistance();
    pt->bounces = (p.m_contactPointFlags & GY_BT_CONTACT_BOUNCES) != 0;
    pts->count++;
    return true;
}

static bool gather_manifold(gy_driver_world *w, const btPersistentManifold *m, gy_bt_body *b0,
                            gy_bt_body *b1, double h);

/* Reads this substep's manifolds into the report: every point that touches (penetrates, or
 * carried load) counts; impulses add up over the step. An overlapping point with an awake
 * dynamic side goes to the front end's overlap correction instead, which reports it. */
static void gather_manifolds(gy_driver_world *w, double h)
{
    int nm = w->dispatcher.getNumManifolds();
    int most = 0;
    for (int i = 0; i < nm; i++)
        most += w->dispatcher.getManifoldByIndexInternal(i)->getNumContacts();
    if (w->point_forces.size() < most)
        w->point_forces.resize(most);
    gy_adapter_points *pts = &w->contacts->points;
    pts->erp = w->world.getSolverInfo().m_erp;
    pts->max_speed = INFINITY; /* Bullet's rows do not cap their correction */
    pts->iterations = (uint32_t)w->world.getSolverInfo().m_numIterations;
    for (int i = 0; i < nm; i++) {
        btPersistentManifold *m = w->dispatcher.getManifoldByIndexInternal(i);
        /* A static pair's (the scratch object's) are read through their pair records below. */
        if (m->getBody0() == &w->scratch || m->getBody1() == &w->scratch)
            continue;
        if (!gather_manifold(w, m, gy_bt_body_of(m->getBody0()), gy_bt_body_of(m->getBody1()), h))
            return;
    }
    btManifoldArray &held = w->refresh_manifolds;
    for (uint32_t i = 0; i < w->static_pairs.count; i++) {
        const gy_bt_static_pair *p = &w->static_pairs.items[i];
        if (p->algorithm == nullptr)
            continue;
        held.resize(0);
        p->algorithm->getAllContactManifolds(held);
        for (int k = 0; k < held.size(); k++) {
            bool first = held[k]->getBody0() == p->moving->object();
            if (!gather_manifold(w, held[k], first ? p->moving : p->fixed,
                                 first ? p->fixed : p->moving, h))
                return;
        }
    }
}

/* One manifold of bodies b0 and b1 (its body 0 and 1) into the report; false when out of memory
 * (noted). */
static bool gather_manifold(gy_driver_world *w, const btPersistentManifold *m, gy_bt_body *b0,
                            gy_bt_body *b1, double h)
{
    int n = m->getNumContacts();
    if (n == 0 || b0 == nullptr || b1 == nullptr)
        return true;
    bool settle = settles(b0) || settles(b1);
    for (int k = 0; k < n; k++) {
        const btManifoldPoint &p = m->getContactPoint(k);
        if (p.m_partId0 < 0 || (uint32_t)p.m_partId0 >= b0->collider_count || p.m_partId1 < 0 ||
            (uint32_t)p.m_partId1 >= b1->collider_count)
            continue;
        if (!(p.m_appliedImpulse > 0.0) && !(p.getDistance() <= 0.0))
            continue;
        /* A point kept apart that took no impulse (Bullet keeps points up to its breaking
         * distance) is no contact: the bodies fly free past it, ballistic correction and all. */
        gy_adapter_body_touched(&b0->base);
        gy_adapter_body_touched(&b1->base);
        gy_bt_collider *c0 = b0->colliders[p.m_partId0], *c1 = b1->colliders[p.m_partId1];
        uint32_t idx = pair_get(w, c0, c1);
        if (idx == UINT32_MAX)
            return false;
        gy_adapter_pair *pr = gy_adapter_contacts_record(w->contacts, idx);
        pr->responds = true; /* a manifold point is a solver row */
        bool first0 = pr->a == &c0->base;
        pair_geometry(w, idx, c0, (p.m_positionWorldOnA + p.m_positionWorldOnB) * 0.5,
                      -p.m_normalWorldOnB, p.getDistance());
        /* Bullet solves no sleeping island: a sleeping pair's points hold the impulses of its
         * last solve, which stood for that solve's step. The front end reports such a pair
         * (gy_adapter_contacts_settle_unsolved). */
        if (!gy_adapter_body_active(&b0->base) && !gy_adapter_body_active(&b1->base))
            continue;
        gy_adapter_contacts_solved(w->contacts, idx, h);
        if (settle && p.getDistance() <= 0.0) {
            if (!list_point(w, idx, first0, b0, b1, p, h))
                return false;
            continue;
        }
        w->contacts->current.contacts[idx].normal_impulse += p.m_appliedImpulse;
        /* The tangent sums the impulse on collider b's body (overlap.h). */
        pr->tangent =
            gy_v3_mad(pr->tangent, gy_bt_from_vec(lateral_impulse(p)), first0 ? -1.0 : 1.0);
    }
    return true;
}

/* ---- the step ------------------------------------------------------------------------------- */

/* Moves kinematic bodies along their velocities (Bullet reads their contact velocity from the
 * pose change) and has Bullet take them into this substep as the front end's activity rule says. */
static void before_substep(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->moving->count; i++) {
        gy_bt_body *b = w->moving->items[i];
        if (b->base.type == GY_MOTION_DYNAMIC)
            continue;
        /* Bullet's broadphase skips pairs of inactive objects: a kinematic body takes part as
         * the front end's activity rule has it. */
        b->rb->forceActivationState(b->motion()->shared.active ? ACTIVE_TAG : ISLAND_SLEEPING);
        bool moving = !b->motion()->kin_linear.isZero() || !b->motion()->kin_angular.isZero();
        if (!moving)
            continue;
        const btTransform &cur = b->rb->getCenterOfMassTransform();
        btQuaternion q = cur.getRotation();
        double wl = b->motion()->kin_angular.length();
        if (wl > 0.0) {
            q = btQuaternion(b->motion()->kin_angular / wl, wl * h) * q;
            q.normalize();
        }
        /* For a kinematic body this keeps the old pose as Bullet's interpolation pose. */
        b->rb->setCenterOfMassTransform(
            btTransform(q, cur.getOrigin() + b->motion()->kin_linear * h));
    }
}

static void bt_solve(gy_driver_world *w, double h)
{
    before_substep(w, h);
    gy_joint_drive_solve(&gy_bullet_driver, w, w->records->joints, h);
    /* maxSubSteps 0: exactly one internal step of h, no interpolation. */
    w->world.stepSimulation(h, 0, h);
    for (uint32_t i = 0; i < w->moving->count; i++) {
        gy_bt_body *b = w->moving->items[i];
        if (b->base.type == GY_MOTION_KINEMATIC) {
            /* Bullet re-derived these from the poses; keep the exact values. */
            b->rb->setLinearVelocity(b->motion()->kin_linear);
            b->rb->setAngularVelocity(b->motion()->kin_angular);
        }
    }
    gather_manifolds(w, h);
}

/* The sensor pass (step.h): the end poses' geometry replaces the last substep's, and no manifold
 * is touched. */
static void bt_collide_sensors(gy_driver_world *w)
{
    w->sensor_pass = true;
    w->world.performDiscreteCollisionDetection();
    w->sensor_pass = false;
}

static void end_step(gy_driver_world *w)
{
    w->aabbs_stale = true;
}

static void bt_begin(gy_driver_world *w, double, double h)
{
    w->step_error = GY_OK;
    w->substep_dt = h;
}

static gy_result bt_end(gy_driver_world *w, double)
{
    end_step(w);
    return w->step_error;
}

/* ---- raw state and geometry for the front end's rules --------------------------------------- */

static bool bt_body_awake(const gy_bt_body *b)
{
    return b->object()->isActive();
}

static gy_vec3 bt_body_com(const gy_bt_body *b)
{
    return gy_bt_from_vec(gy_bt_body_com(b));
}

static void bt_body_set_com(gy_bt_body *b, gy_vec3 com)
{
    b->rb->getWorldTransform().setOrigin(gy_bt_vec(com));
}

static void bt_body_velocity(const gy_bt_body *b, gy_vec3 *linear, gy_vec3 *angular)
{
    *linear = gy_bt_from_vec(b->rb->getLinearVelocity());
    *angular = gy_bt_from_vec(b->rb->getAngularVelocity());
}

static void bt_body_set_velocity(gy_bt_body *b, gy_vec3 linear, gy_vec3 angular)
{
    b->rb->setLinearVelocity(gy_bt_vec(linear));
    b->rb->setAngularVelocity(gy_bt_vec(angular));
}

/* stepSimulation clears the accumulators after its one internal step. */
static void bt_body_apply_force(gy_bt_body *b, gy_vec3 force, gy_vec3 torque)
{
    b->rb->applyCentralForce(gy_bt_vec(force));
    b->rb->applyTorque(gy_bt_vec(torque));
}

static gy_adapter_sleep *bt_body_sleep(gy_bt_body *b)
{
    return b->motion() != nullptr ? b->motion()->sleep : nullptr;
}

/* Bullet's islands do the rest: an island sleeps when all its bodies want to, and wakes as a
 * whole. The driver tells Bullet through the body's deactivation clock, which Bullet compares
 * with its process-wide gDeactivationTime (left untouched). */
static void bt_body_wants_sleep(gy_bt_body *b, bool wants)
{
    b->rb->setDeactivationTime(wants ? gDeactivationTime + 1.0 : 0.0);
    /* Bullet wakes a sleeping island into WANTS_DEACTIVATION, which counts as wanting to sleep
     * whatever the clock says: a sleeper struck into motion went back to sleep, its velocity
     * zeroed, as soon as it left the striker's island. Only the shared rule may put a body to
     * sleep. */
    if (!wants && b->rb->getActivationState() == WANTS_DEACTIVATION)
        b->rb->setActivationState(ACTIVE_TAG);
}

static gy_adapter_settle *bt_body_settle(gy_bt_body *b)
{
    return &b->settle;
}

/* Bullet's body frame is the principal one: its inertia is diagonal there. */
static gy_mat3 bt_body_inv_inertia(const gy_bt_body *b)
{
    const btVector3 &d = b->rb->getInvInertiaDiagLocal();
    gy_mat3 m;
    memset(&m, 0, sizeof m);
    m.m[0][0] = d.x();
    m.m[1][1] = d.y();
    m.m[2][2] = d.z();
    return m;
}

static gy_quat bt_body_rotation(const gy_bt_body *b)
{
    return gy_bt_from_quat(b->rb->getCenterOfMassTransform().getRotation());
}

struct gather_ctx {
    void (*add)(void *ctx, gy_bt_collider *c);
    void *ctx;
};

static void gather_visit(void *ctx, gy_bt_body *b)
{
    gather_ctx *gc = static_cast<gather_ctx *>(ctx);
    for (uint32_t i = 0; i < b->collider_count; i++)
        gc->add(gc->ctx, b->colliders[i]);
}

static bool gather_static(void *ctx, gy_bt_collider *c)
{
    gather_ctx *gc = static_cast<gather_ctx *>(ctx);
    gc->add(gc->ctx, c);
    return true;
}

static void bt_ccd_gather(gy_driver_world *w, gy_vec3 p0, gy_vec3 p1, double r, double reach,
                          void (*add)(void *ctx, gy_bt_collider *c), void *ctx)
{
    gather_ctx gc = {add, ctx};
    double e = r + reach;
    gy_bt_sweep_bodies(w, gy_bt_vec(p0), gy_bt_vec(p1), btVector3(-e, -e, -e), btVector3(e, e, e),
                       gather_visit, gather_static, &gc);
}

/* The swept sphere is built in the world's query storage. */
static void bt_ccd_begin(gy_driver_world *w, double radius)
{
    gy_shape sphere;
    memset(&sphere, 0, sizeof sphere);
    sphere.type = GY_SHAPE_SPHERE;
    sphere.radius = radius;
    gy_bt_probe_shape(w, &sphere);
}

/* The probe must not keep pointing at a body's shape, which a release would free. */
static void bt_ccd_end(gy_driver_world *w)
{
    w->probe.setCollisionShape(w->query_shape);
}

static bool probe_touches(gy_driver_world *w, const gy_bt_collider *c)
{
    btVector3 point, normal;
    double pen;
    int32_t tri;
    return gy_bt_probe_contact(w, c, &point, &normal, &pen, &tri);
}

/* Whether collider c (convex), its body's frame put at `frame`, touches `other`: c stands in as
 * the probe. */
static bool collider_touches(gy_driver_world *w, const gy_bt_collider *c, const btTransform &frame,
                             const gy_bt_collider *other)
{
    w->probe.setCollisionShape(c->bt_shape);
    w->probe.setWorldTransform(frame * gy_bt_collider_child(c));
    return probe_touches(w, other);
}

static bool bt_ccd_sphere_touches(gy_driver_world *w, gy_bt_collider *c, gy_vec3 center)
{
    w->probe.setCollisionShape(w->query_shape);
    w->probe.setWorldTransform(btTransform(btQuaternion::getIdentity(), gy_bt_vec(center)));
    return probe_touches(w, c);
}

/* Each solid collider of the body in turn stands in as the probe (dynamic bodies' shapes are
 * convex), with the body's centre of mass frame moved to `com`. */
static bool bt_ccd_body_touches(gy_driver_world *w, gy_bt_body *b, gy_bt_collider *other,
                                gy_vec3 com)
{
    btTransform frame(b->rb->getCenterOfMassTransform().getBasis(), gy_bt_vec(com));
    for (uint32_t k = 0; k < b->collider_count; k++)
        if (!b->colliders[k]->base.is_sensor && collider_touches(w, b->colliders[k], frame, other))
            return true;
    return false;
}

/* One collider stands in as the probe, shifted, against the other: the moved one when it is
 * convex, else (a kinematic mesh) the other, shifted back. */
static bool bt_collider_touches_shifted(gy_driver_world *w, gy_bt_collider *moved,
                                        gy_bt_collider *other, gy_vec3 shift)
{
    gy_bt_collider *probe = moved, *fixed = other;
    btVector3 by = gy_bt_vec(shift);
    if (!moved->bt_shape->isConvex()) {
        if (!other->bt_shape->isConvex())
            return false;
        probe = other;
        fixed = moved;
        by = -by;
    }
    btTransform frame = gy_bt_body_frame(gy_bt_collider_body(probe));
    frame.setOrigin(frame.getOrigin() + by);
    return collider_touches(w, probe, frame, fixed);
}

extern "C" const gy_driver_step gy_bt_step = {
    .begin = bt_begin,
    .solve = bt_solve,
    .end = bt_end,
    .collide_sensors = bt_collide_sensors,
    .body_awake = bt_body_awake,
    .body_com = bt_body_com,
    .body_set_com = bt_body_set_com,
    .body_velocity = bt_body_velocity,
    .body_set_velocity = bt_body_set_velocity,
    .body_apply_force = bt_body_apply_force,
    .body_sleep = bt_body_sleep,
    .body_wants_sleep = bt_body_wants_sleep,
    /* Bullet corrects deep overlap by its own split impulse; the front end gives back its
     * Baumgarte speed over the points gather_manifolds lists. */
    .body_settle = bt_body_settle,
    .body_push = nullptr,
    .body_inv_inertia = bt_body_inv_inertia,
    .body_rotation = bt_body_rotation,
    .body_set_rotation = nullptr,
    .collider_touches_shifted = bt_collider_touches_shifted,
    .collides_active_only = false, /* Bullet's broadphase skips pairs of inactive objects */
    .ccd_gather = bt_ccd_gather,
    .ccd_begin = bt_ccd_begin,
    .ccd_sphere_touches = bt_ccd_sphere_touches,
    .ccd_body_touches = bt_ccd_body_touches,
    .ccd_end = bt_ccd_end,
};

void gy_bt_refresh_aabbs(gy_driver_world *w)
{
    if (!w->aabbs_stale)
        return;
    w->world.updateAabbs();
    w->aabbs_stale = false;
}
