/* Bullet adapter: the step. Per substep: kinematic bodies are moved to where their velocities
 * take them (Bullet derives a kinematic body's contact velocity from its last two poses), pending
 * forces are applied, and btDiscreteDynamicsWorld steps once. Its narrowphase runs through the
 * adapter's near callback, whose contact result decides per collider pair what Bullet only knows
 * per object: category/mask, sensors and response-off colliders (reported, never added to a
 * manifold), one-way platforms (points dropped), combined materials and conveyor motion. After
 * the solve the adapter reads the manifolds into per-pair reports, and adds what Bullet lacks or
 * does differently: exact ballistic gravity, axis-lock projection, continuous collision that
 * honours the same filters, joint breaking by force, and a sleep test on averaged velocities.
 *
 * Pairs whose bodies both sleep keep their manifolds, so their contacts stay reported; sensor
 * overlaps (which have no manifold points) are carried over from the last report instead. */
#include <math.h>
#include <string.h>

#include "../src/ccd.h"
#include "bullet_internal.h"

/* ---- report ------------------------------------------------------------------------------- */

static void note_error(gy_driver_world *w, gy_result r)
{
    gy_adapter_note_error(&w->step_error, r);
}

/* The report entry of a collider pair (a.id < b.id), appended when new; UINT32_MAX when out of
 * memory (recorded in step_error). */
static uint32_t pair_get(gy_driver_world *w, gy_bt_collider *a, gy_bt_collider *b)
{
    bool is_new;
    uint32_t index =
        gy_adapter_contacts_pair(w->contacts, &a->base, &b->base, &is_new, &w->step_error);
    if (is_new)
        gy_bt_pairs(&w->contacts->current)[index].substep = UINT32_MAX;
    return index;
}

/* Records the geometry of a pair's contact point for this substep, keeping the deepest.
 * `n_from_first` points from `first` to the other collider. */
static void pair_geometry(gy_driver_world *w, uint32_t index, const gy_bt_collider *first,
                          const btVector3 &point, const btVector3 &n_from_first, double distance)
{
    gy_bt_pair *p = &gy_bt_pairs(&w->contacts->current)[index];
    uint32_t sub = (uint32_t)w->substep_index;
    if (p->substep == sub && !(distance < p->best_distance))
        return;
    p->substep = sub;
    p->best_distance = distance;
    gy_contact *c = &w->contacts->current.contacts[index];
    c->point = gy_bt_from_vec(point);
    c->normal = gy_bt_from_vec(p->a == first ? n_from_first : -n_from_first);
    c->penetration = fmax(0.0, -distance);
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

/* The one-way rule (docs/middleware.md): a pair's contacts count while the other body arrived on
 * the platform's one-way side: its first contact must have a normal (platform to body) within
 * 60° of the one-way normal, the body's centre of mass on that side, and the body not rising
 * through the platform. Otherwise the pair is "passing" and its contacts are dropped until the two
 * separate. The verdict is taken with the first point Bullet reports and kept until the two
 * separate: re-judging a pair that already stands on the platform would mistake the solver
 * pushing it out of a deep landing for rising through, and drop it. */
static bool one_way_accepts(gy_driver_world *w, gy_bt_collider *platform, gy_bt_collider *other,
                            const btVector3 &normal_po, const btVector3 &point, double penetration)
{
    bool accepted;
    if (gy_adapter_contact_one_way_known(w->contacts, &platform->base, &other->base, &accepted))
        return accepted;
    btVector3 n =
        gy_bt_collider_transform(platform).getBasis() * gy_bt_vec(platform->base.one_way_normal);
    btVector3 rel =
        gy_bt_body_velocity_at(other->body, point) - gy_bt_body_velocity_at(platform->body, point);
    gy_adapter_one_way_contact oc;
    oc.platform = &platform->base;
    oc.other = &other->base;
    oc.normal = gy_bt_from_vec(normal_po);
    oc.one_way = gy_bt_from_vec(n);
    oc.velocity = gy_bt_from_vec(rel);
    oc.other_com = gy_bt_from_vec(gy_bt_body_com(other->body));
    oc.point = gy_bt_from_vec(point);
    oc.penetration = penetration;
    return gy_adapter_contact_one_way(w->contacts, &oc, true, &w->step_error);
}

/* A static created or teleported since the last step. */
static bool placed_now(const gy_driver_world *w, const gy_bt_body *b)
{
    return b->base.type == GY_MOTION_STATIC && b->placed_step == w->step_index;
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

/* Contacts against a mesh triangle's inside or its internal edges take the face normal
 * (gy_adapter_mesh_edges_fix_normal), so a body slides across the edges between flat triangles as
 * over one plane; Bullet's own btAdjustInternalEdgeContacts would classify the edges a second way.
 * `normal_on_b` points from b to a; the point on the other collider and the depth are kept. */
static void fix_mesh_normal(const gy_bt_collider *ca, const btCollisionObjectWrapper *wa, int tri_a,
                            const gy_bt_collider *cb, const btCollisionObjectWrapper *wb, int tri_b,
                            btVector3 &point_on_b, btVector3 &normal_on_b, double depth)
{
    bool mesh_b = cb->base.shape.type == GY_SHAPE_MESH && cb->resource != nullptr;
    if (!mesh_b && (ca->base.shape.type != GY_SHAPE_MESH || ca->resource == nullptr))
        return;
    const gy_bt_collider *mesh = mesh_b ? cb : ca;
    const btTransform &t = (mesh_b ? wb : wa)->getWorldTransform();
    btVector3 point_on_a = point_on_b + normal_on_b * depth;
    btVector3 out = mesh_b ? normal_on_b : -normal_on_b;
    gy_vec3 n = gy_bt_from_vec(t.getBasis().transpose() * out);
    if (!gy_adapter_mesh_edges_fix_normal(
            &mesh->resource->base.edges, mesh_b ? tri_b : tri_a,
            gy_bt_from_vec(t.invXform(mesh_b ? point_on_b : point_on_a)), &n))
        return;
    out = t.getBasis() * gy_bt_vec(n);
    normal_on_b = mesh_b ? out : -out;
    if (mesh_b)
        point_on_b = point_on_a - normal_on_b * depth;
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
    }

    void addContactPoint(const btVector3 &normal_on_b, const btVector3 &point_on_b,
                         btScalar depth) override;

  private:
    void overlap(gy_bt_collider *ca, gy_bt_collider *cb, const btVector3 &point,
                 const btVector3 &normal_on_b, double depth);
    gy_driver_world *m_world;
};

} // namespace

void contact_result::overlap(gy_bt_collider *ca, gy_bt_collider *cb, const btVector3 &point,
                             const btVector3 &normal_on_b, double depth)
{
    bool a_first = ca->base.id.bits < cb->base.id.bits;
    uint32_t k = pair_get(m_world, a_first ? ca : cb, a_first ? cb : ca);
    if (k == UINT32_MAX)
        return;
    gy_bt_pairs(&m_world->contacts->current)[k].overlap = true;
    gy_bt_pairs(&m_world->contacts->current)[k].sensor_seen = true;
    pair_geometry(m_world, k, ca, point, -normal_on_b, depth);
}

void contact_result::addContactPoint(const btVector3 &normal_in, const btVector3 &point_in,
                                     btScalar depth)
{
    btVector3 normal_on_b = normal_in, point_on_b = point_in;
    btPersistentManifold *m = m_manifoldPtr;
    if (m == nullptr || depth > m->getContactBreakingThreshold())
        return;
    bool swapped = m->getBody0() != m_body0Wrap->getCollisionObject();
    const btCollisionObjectWrapper *wa = swapped ? m_body1Wrap : m_body0Wrap;
    const btCollisionObjectWrapper *wb = swapped ? m_body0Wrap : m_body1Wrap;
    gy_bt_collider *ca = collider_of(wa), *cb = collider_of(wb);
    if (ca == nullptr || cb == nullptr)
        return;
    gy_adapter_contact_kind kind =
        gy_adapter_contact_gate(&ca->base, &cb->base, m_world->sensor_pass);
    if (kind == GY_ADAPTER_CONTACT_SKIP)
        return;
    fix_mesh_normal(ca, wa, swapped ? m_index1 : m_index0, cb, wb, swapped ? m_index0 : m_index1,
                    point_on_b, normal_on_b, depth);
    btVector3 point_on_a = point_on_b + normal_on_b * depth;
    if (kind == GY_ADAPTER_CONTACT_REPORT) {
        /* Reported, never solved: only real overlap counts (Bullet also reports near misses). */
        if (depth <= 0.0)
            overlap(ca, cb, (point_on_a + point_on_b) * 0.5, normal_on_b, depth);
        return;
    }
    if ((ca->base.one_way && !one_way_accepts(m_world, ca, cb, -normal_on_b, point_on_b, -depth)) ||
        (cb->base.one_way && !one_way_accepts(m_world, cb, ca, normal_on_b, point_on_b, -depth))) {
        m->clearManifold(); /* this collider pair's manifold: drop what it held before */
        return;
    }
    /* A static placed over a sleeper this step: only real touch wakes it (Bullet also reports
     * points up to its breaking distance apart). */
    if (depth <= 0.0) {
        if (placed_now(m_world, ca->body) && !cb->body->rb->isActive())
            gy_bt_body_wake(cb->body);
        else if (placed_now(m_world, cb->body) && !ca->body->rb->isActive())
            gy_bt_body_wake(ca->body);
    }

    btVector3 local_a = wa->getCollisionObject()->getWorldTransform().invXform(point_on_a);
    btVector3 local_b = wb->getCollisionObject()->getWorldTransform().invXform(point_on_b);
    btManifoldPoint pt(local_a, local_b, normal_on_b, depth);
    pt.m_positionWorldOnA = point_on_a;
    pt.m_positionWorldOnB = point_on_b;
    int insert = m->getCacheEntry(pt);
    double friction, restitution;
    gy_adapter_contact_material(&ca->base, &cb->base, &friction, &restitution);
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
    int tri_a = swapped ? m_index1 : m_index0, tri_b = swapped ? m_index0 : m_index1;
    pt.m_partId0 = (int)ca->index;
    pt.m_partId1 = (int)cb->index;
    pt.m_index0 = ca->base.shape.type == GY_SHAPE_MESH ? tri_a : -1;
    pt.m_index1 = cb->base.shape.type == GY_SHAPE_MESH ? tri_b : -1;
    /* Conveyors: friction drives v_a - v_b towards s_b - s_a along the surface, where s is each
     * collider's surface velocity in the world. */
    if (gy_v3_len_sq(ca->base.surface_velocity) > 0.0 ||
        gy_v3_len_sq(cb->base.surface_velocity) > 0.0) {
        btVector3 sa =
            gy_bt_collider_transform(ca).getBasis() * gy_bt_vec(ca->base.surface_velocity);
        btVector3 sb =
            gy_bt_collider_transform(cb).getBasis() * gy_bt_vec(cb->base.surface_velocity);
        btVector3 t = sb - sa;
        t -= normal_on_b * t.dot(normal_on_b);
        double tl = t.length();
        if (tl > 1e-9) {
            pt.m_lateralFrictionDir1 = t / tl;
            pt.m_lateralFrictionDir2 = normal_on_b.cross(pt.m_lateralFrictionDir1);
            pt.m_contactMotion1 = tl;
            pt.m_contactMotion2 = 0.0;
            pt.m_contactPointFlags |= BT_CONTACT_FLAG_LATERAL_FRICTION_INITIALIZED;
        }
    }
    if (insert >= 0) {
        const btManifoldPoint &old = m->getContactPoint(insert);
        btVector3 lateral = old.m_lateralFrictionDir1 * old.m_appliedImpulseLateral1 +
                            old.m_lateralFrictionDir2 * old.m_appliedImpulseLateral2;
        m->replaceContactPoint(pt, insert);
        set_friction_frame(m->getContactPoint(insert), lateral, pt.m_lateralFrictionDir1,
                           pt.m_lateralFrictionDir2);
    } else
        m->addManifoldPoint(pt);
}

/* Bullet skips pairs whose sides are both inactive (statics always are), and its algorithms make
 * no manifold for them. A static placed since the last step is collided with sleeping and resting
 * bodies for one step, so that geometry streamed in over them is noticed. */
bool gy_bt_dispatcher::needsCollision(const btCollisionObject *o0, const btCollisionObject *o1)
{
    if (btCollisionDispatcher::needsCollision(o0, o1))
        return true;
    const gy_bt_body *b0 = gy_bt_body_of(o0), *b1 = gy_bt_body_of(o1);
    return b0 != nullptr && b1 != nullptr && (placed_now(world, b0) || placed_now(world, b1)) &&
           o0->checkCollideWith(o1) && o1->checkCollideWith(o0);
}

static bool has_sensor(const btCollisionObject *o)
{
    const gy_bt_body *b = gy_bt_body_of(o);
    for (uint32_t i = 0; b != nullptr && i < b->collider_count; i++)
        if (b->colliders[i]->base.is_sensor)
            return true;
    return false;
}

void gy_bt_near_callback(btBroadphasePair &pair, btCollisionDispatcher &dispatcher,
                         const btDispatcherInfo &info)
{
    gy_bt_dispatcher &d = static_cast<gy_bt_dispatcher &>(dispatcher);
    btCollisionObject *o0 = static_cast<btCollisionObject *>(pair.m_pProxy0->m_clientObject);
    btCollisionObject *o1 = static_cast<btCollisionObject *>(pair.m_pProxy1->m_clientObject);
    if (d.world->sensor_pass && !has_sensor(o0) && !has_sensor(o1))
        return;
    if (!d.needsCollision(o0, o1))
        return;
    btCollisionObjectWrapper w0(nullptr, o0->getCollisionShape(), o0, o0->getWorldTransform(), -1,
                                -1);
    btCollisionObjectWrapper w1(nullptr, o1->getCollisionShape(), o1, o1->getWorldTransform(), -1,
                                -1);
    if (pair.m_algorithm == nullptr)
        pair.m_algorithm = d.findAlgorithm(&w0, &w1, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    if (pair.m_algorithm == nullptr)
        return;
    contact_result result(d.world, &w0, &w1);
    /* Stale points are dropped before the pair is collided, not after: a box-plane pair whose
     * manifold still held its four old points got only the deepest new one, and the refresh
     * after it left the box on one corner for a step (a sideways kick that slip-aligned friction
     * does not hold back). With the manifold emptied first, the perturbed collision refills it. */
    btManifoldArray &held = d.world->refresh_manifolds;
    held.resize(0);
    pair.m_algorithm->getAllContactManifolds(held);
    for (int i = 0; i < held.size(); i++)
        held[i]->refreshContactPoints(held[i]->getBody0()->getWorldTransform(),
                                      held[i]->getBody1()->getWorldTransform());
    pair.m_algorithm->processCollision(&w0, &w1, info, &result);
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

/* Bullet keeps a resting point in its manifold up to the breaking distance apart, so a box at
 * rest keeps its four corners at zero depth. A point that slides further than that in a step is
 * dropped and found again, and the box-box narrow phase finds only overlapping corners: a box
 * riding a conveyor belt at 2 m/s, or sliding over a static box, lost a corner every few steps
 * and rocked (0.27 rad/s, rising and falling at 0.07 m/s). Such a point's row aims instead for
 * GY_ADAPTER_CONTACT_LAYER of depth at Bullet's ERP, from above or below, as the ODE adapter's
 * rows do. Deep overlap (split impulse) keeps Bullet's row. Only sliding points: moving every
 * resting point's target (Bullet's m_linearSlop) let a 10-box stack lean 5 to 7 cm before it slept.
 */
static void settle_into_layer(btSolverConstraint &c, const btManifoldPoint &cp,
                              const btContactSolverInfo &info, const btSolverBody &sa,
                              const btSolverBody &sb)
{
    double depth = -cp.getDistance();
    if (depth < -GY_ADAPTER_CONTACT_LAYER || depth > GY_ADAPTER_SOLVER_DEPTH)
        return;
    const btRigidBody *ra = sa.m_originalBody, *rb = sb.m_originalBody;
    btVector3 va(0, 0, 0), vb(0, 0, 0);
    if (ra != nullptr)
        va = ra->getVelocityInLocalPoint(cp.getPositionWorldOnA() -
                                         ra->getWorldTransform().getOrigin());
    if (rb != nullptr)
        vb = rb->getVelocityInLocalPoint(cp.getPositionWorldOnB() -
                                         rb->getWorldTransform().getOrigin());
    btVector3 rel = va - vb;
    rel -= cp.m_normalWorldOnB * rel.dot(cp.m_normalWorldOnB);
    if (!(rel.length() * info.m_timeStep > gContactBreakingThreshold))
        return;
    double target = (depth - GY_ADAPTER_CONTACT_LAYER) * info.m_erp / info.m_timeStep;
    c.m_rhs = (target - row_speed(c, sa, sb)) * c.m_jacDiagABInv;
    c.m_rhsPenetration = 0.0;
}

/* Bullet sets each contact up to reach restitution × approach plus, for a penetration it does
 * not split off, erp·depth/h, and bounces a point found before touching at once. Both change a
 * bounce's energy by the height of where the contact was found: a bouncing point's row aims
 * instead for gy_adapter_bounce_speed from its gap or depth, with no overlap correction. The
 * approach is taken as Bullet does, from the bodies' velocities before the solve, and bounces
 * only above the restitution threshold. */
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
            btVector3 va(0, 0, 0), vb(0, 0, 0);
            if (ra != nullptr)
                va = ra->getVelocityInLocalPoint(p.getPositionWorldOnA() -
                                                 ra->getWorldTransform().getOrigin());
            if (rb != nullptr)
                vb = rb->getVelocityInLocalPoint(p.getPositionWorldOnB() -
                                                 rb->getWorldTransform().getOrigin());
            gy_vec3 d1;
            if (!gy_adapter_friction_direction(gy_bt_from_vec(va - vb),
                                               gy_bt_from_vec(p.m_normalWorldOnB), &d1))
                continue;
            btVector3 lateral = p.m_lateralFrictionDir1 * p.m_appliedImpulseLateral1 +
                                p.m_lateralFrictionDir2 * p.m_appliedImpulseLateral2;
            btVector3 t1 = gy_bt_vec(d1);
            set_friction_frame(p, lateral, t1, p.m_normalWorldOnB.cross(t1));
        }
    }
    btSequentialImpulseConstraintSolver::convertContacts(manifolds, count, info);
    for (int i = 0; i < m_tmpSolverContactConstraintPool.size(); i++) {
        btSolverConstraint &c = m_tmpSolverContactConstraintPool[i];
        const btManifoldPoint *cp = static_cast<const btManifoldPoint *>(c.m_originalContactPoint);
        if (cp == nullptr)
            continue;
        if (!(cp->m_combinedRestitution > 0.0)) {
            settle_into_layer(c, *cp, info, m_tmpSolverBodyPool[c.m_solverBodyIdA],
                              m_tmpSolverBodyPool[c.m_solverBodyIdB]);
            continue;
        }
        const btSolverBody &sa = m_tmpSolverBodyPool[c.m_solverBodyIdA];
        const btSolverBody &sb = m_tmpSolverBodyPool[c.m_solverBodyIdB];
        const btRigidBody *ra = sa.m_originalBody, *rb = sb.m_originalBody;
        btVector3 va(0, 0, 0), vb(0, 0, 0), ga(0, 0, 0), gb(0, 0, 0);
        if (ra != nullptr) {
            va = ra->getVelocityInLocalPoint(cp->getPositionWorldOnA() -
                                             ra->getWorldTransform().getOrigin());
            if (ra->getInvMass() > 0.0)
                ga = ra->getGravity();
        }
        if (rb != nullptr) {
            vb = rb->getVelocityInLocalPoint(cp->getPositionWorldOnB() -
                                             rb->getWorldTransform().getOrigin());
            if (rb->getInvMass() > 0.0)
                gb = rb->getGravity();
        }
        const btVector3 &n = cp->m_normalWorldOnB; /* B to A */
        double approach = -n.dot(va - vb);
        if (approach < info.m_restitutionVelocityThreshold)
            continue;
        double h = info.m_timeStep, offset = cp->getDistance() + info.m_linearSlop;
        double pull = -n.dot(ga - gb);
        /* A point still apart at the step's end (Bullet keeps them up to the breaking distance)
         * keeps Bullet's row: switching such rows off let a pile of bouncy balls push into each
         * other and never settle. */
        if (offset > approach * h + 0.5 * pull * h * h)
            continue;
        double leave =
            gy_adapter_bounce_speed(approach, offset, pull, cp->m_combinedRestitution, h);
        /* The row's target becomes that separation speed alone: no correction of the overlap
         * (in the velocity or split off), which would add its height to the rebound. */
        c.m_rhs = (leave - row_speed(c, sa, sb)) * c.m_jacDiagABInv;
        c.m_rhsPenetration = 0.0;
    }
}

/* ---- after the solve ------------------------------------------------------------------------ */

/* Reads this substep's manifolds into the report: every point that touches (penetrates, or
 * carried load) counts; impulses add up over the step. */
static void gather_manifolds(gy_driver_world *w)
{
    int nm = w->dispatcher.getNumManifolds();
    for (int i = 0; i < nm; i++) {
        btPersistentManifold *m = w->dispatcher.getManifoldByIndexInternal(i);
        int n = m->getNumContacts();
        if (n == 0)
            continue;
        gy_bt_body *b0 = gy_bt_body_of(m->getBody0()), *b1 = gy_bt_body_of(m->getBody1());
        if (b0 == nullptr || b1 == nullptr)
            continue;
        b0->in_contact = true;
        b1->in_contact = true;
        for (int k = 0; k < n; k++) {
            const btManifoldPoint &p = m->getContactPoint(k);
            if (p.m_partId0 < 0 || (uint32_t)p.m_partId0 >= b0->collider_count || p.m_partId1 < 0 ||
                (uint32_t)p.m_partId1 >= b1->collider_count)
                continue;
            if (!(p.m_appliedImpulse > 0.0) && !(p.getDistance() <= 0.0))
                continue;
            gy_bt_collider *c0 = b0->colliders[p.m_partId0], *c1 = b1->colliders[p.m_partId1];
            bool first0 = c0->base.id.bits < c1->base.id.bits;
            uint32_t idx = pair_get(w, first0 ? c0 : c1, first0 ? c1 : c0);
            if (idx == UINT32_MAX)
                return;
            w->contacts->current.contacts[idx].normal_impulse += p.m_appliedImpulse;
            btVector3 t = p.m_lateralFrictionDir1 * p.m_appliedImpulseLateral1 +
                          p.m_lateralFrictionDir2 * p.m_appliedImpulseLateral2;
            gy_bt_pair *pr = &gy_bt_pairs(&w->contacts->current)[idx];
            pr->tangent = gy_v3_mad(pr->tangent, gy_bt_from_vec(t), first0 ? 1.0 : -1.0);
            pair_geometry(w, idx, c0, (p.m_positionWorldOnA + p.m_positionWorldOnB) * 0.5,
                          -p.m_normalWorldOnB, p.getDistance());
        }
    }
}

/* Semi-implicit Euler moves a body (v + g h) h per step: the shared ballistic correction
 * applies, on the body's free axes. */
static void ballistic_correction(gy_driver_world *w, double h)
{
    btVector3 g = gy_bt_vec(w->def.gravity);
    if (g.length2() == 0.0)
        return;
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (!gy_adapter_ballistic_applies(
                b->base.type, b->base.type == GY_MOTION_DYNAMIC && b->rb->isActive(), b->in_contact,
                b->base.joint_count, b->base.gravity_factor))
            continue;
        btTransform &t = b->rb->getWorldTransform();
        btVector3 shift =
            gy_bt_vec(gy_adapter_ballistic_shift(w->def.gravity, b->base.gravity_factor, h));
        t.setOrigin(t.getOrigin() + shift * b->rb->getLinearFactor());
    }
}

/* Bullet's factors keep forces and contacts off locked axes, but a torque still turns through the
 * world inertia tensor onto a locked axis; this removes whatever reached one. */
static void project_locks(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (!b->any_lock || !b->rb->isActive())
            continue;
        btTransform &t = b->rb->getWorldTransform();
        gy_vec3 p = gy_bt_from_vec(t.getOrigin()), v = gy_bt_from_vec(b->rb->getLinearVelocity()),
                av = gy_bt_from_vec(b->rb->getAngularVelocity());
        gy_adapter_project_locks(b->base.lock_linear, b->base.lock_angular,
                                 gy_bt_from_vec(b->lock_position), &p, &v, &av);
        t.setOrigin(gy_bt_vec(p));
        b->rb->setLinearVelocity(gy_bt_vec(v));
        b->rb->setAngularVelocity(gy_bt_vec(av));
    }
}

/* ---- continuous collision ------------------------------------------------------------------- */

struct ccd_ctx {
    gy_driver_world *w;
    gy_bt_body *body;
    btVector3 motion;
    btCollisionShape *sphere; /* the swept sphere, built in the world's query storage */
};

static bool ccd_accepts(const ccd_ctx *cc, const gy_bt_collider *c)
{
    if (!gy_adapter_contact_ccd_candidate(cc->body->base.solid, &c->base))
        return false;
    return !c->base.one_way ||
           gy_adapter_ccd_one_way_accepts(gy_bt_from_vec(cc->motion),
                                          gy_bt_from_vec(gy_bt_collider_transform(c).getBasis() *
                                                         gy_bt_vec(c->base.one_way_normal)));
}

static void ccd_visit(void *ctx, gy_bt_body *b)
{
    ccd_ctx *cc = static_cast<ccd_ctx *>(ctx);
    gy_driver_world *w = cc->w;
    for (uint32_t i = 0; i < b->collider_count; i++) {
        gy_bt_collider *c = b->colliders[i];
        if (!ccd_accepts(cc, c))
            continue;
        gy_result r = gy_array_reserve(w->allocator, (void **)&w->scratch, &w->scratch_capacity,
                                       w->scratch_count + 1u, sizeof *w->scratch);
        if (r != GY_OK) {
            note_error(w, r);
            return;
        }
        w->scratch[w->scratch_count++] = c;
    }
}

static bool ccd_probe_touches(gy_driver_world *w, uint32_t i)
{
    btVector3 point, normal;
    double pen;
    int32_t tri;
    return gy_bt_probe_contact(w, w->scratch[i], &point, &normal, &pen, &tri);
}

static bool ccd_sphere_touches(void *ctx, uint32_t i, gy_vec3 center, double radius)
{
    ccd_ctx *cc = static_cast<ccd_ctx *>(ctx);
    (void)radius; /* the sphere shape was built with it */
    cc->w->probe.setCollisionShape(cc->sphere);
    cc->w->probe.setWorldTransform(btTransform(btQuaternion::getIdentity(), gy_bt_vec(center)));
    return ccd_probe_touches(cc->w, i);
}

/* Each solid collider of the body in turn stands in as the probe (dynamic bodies' shapes are
 * convex), with the body's centre of mass frame moved to `com`. */
static bool ccd_body_touches(void *ctx, uint32_t i, gy_vec3 com)
{
    ccd_ctx *cc = static_cast<ccd_ctx *>(ctx);
    gy_driver_world *w = cc->w;
    btTransform frame(cc->body->rb->getCenterOfMassTransform().getBasis(), gy_bt_vec(com));
    for (uint32_t k = 0; k < cc->body->collider_count; k++) {
        const gy_bt_collider *c = cc->body->colliders[k];
        if (c->base.is_sensor)
            continue;
        w->probe.setCollisionShape(c->bt_shape);
        w->probe.setWorldTransform(frame * c->child);
        if (ccd_probe_touches(w, i))
            return true;
    }
    return false;
}

static gy_vec3 ccd_displacement(void *ctx, uint32_t i)
{
    const gy_bt_body *o = static_cast<ccd_ctx *>(ctx)->w->scratch[i]->body;
    if (o->base.type == GY_MOTION_STATIC)
        return gy_v3(0.0, 0.0, 0.0);
    return gy_bt_from_vec(gy_bt_body_com(o) - o->ccd_start);
}

/* Sweeps the body from its substep start to its end against what it may have passed, moving
 * bodies included (gy_adapter_ccd_sweep); on a hit the two are put back where they first touch
 * (a dynamic one it hit too), their velocities left for the next substep's contact to resolve.
 * `reach` is the longest distance any body moved in this substep: a moving body that far from the
 * path may have crossed it. */
static void ccd_body(gy_driver_world *w, gy_bt_body *b, double reach)
{
    btVector3 p0 = b->ccd_start, p1 = gy_bt_body_com(b);
    btVector3 d = p1 - p0;
    double r = gy_adapter_contact_ccd_radius(&b->base, b->ccd_radius, d.length(), reach);
    if (!(r > 0.0))
        return;

    gy_shape sphere;
    memset(&sphere, 0, sizeof sphere);
    sphere.type = GY_SHAPE_SPHERE;
    sphere.radius = r;
    ccd_ctx cc = {w, b, d, gy_bt_probe_shape(w, &sphere)};
    w->scratch_count = 0;
    double e = r + reach;
    gy_bt_sweep_bodies(w, p0, p1, btVector3(-e, -e, -e), btVector3(e, e, e), ccd_visit, &cc);
    if (w->scratch_count == 0)
        return;
    gy_adapter_ccd_probe probe = {&cc, ccd_sphere_touches, ccd_body_touches, ccd_displacement};
    gy_adapter_ccd_hit hit;
    bool hit_something = gy_adapter_ccd_sweep(&probe, w->scratch_count, gy_bt_from_vec(p0),
                                              gy_bt_from_vec(p1), r, b->ccd_radius, &hit);
    /* The probe must not keep pointing at a body's shape, which a release would free. */
    w->probe.setCollisionShape(cc.sphere);
    if (!hit_something)
        return;
    btVector3 at = gy_bt_vec(hit.com);
    gy_bt_body *o = w->scratch[hit.candidate]->body;
    if (o->base.type == GY_MOTION_DYNAMIC) {
        btTransform &ot = o->rb->getWorldTransform();
        ot.setOrigin(ot.getOrigin() + gy_bt_vec(hit.rewind));
        at += gy_bt_vec(hit.rewind);
    }
    b->rb->getWorldTransform().setOrigin(at);
}

static void continuous_collision(gy_driver_world *w)
{
    double reach = -1.0;
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (!b->base.continuous || !b->rb->isActive())
            continue;
        if (reach < 0.0) {
            reach = 0.0;
            for (uint32_t k = 0; k < w->moving_count; k++) {
                const gy_bt_body *o = w->moving[k];
                reach = fmax(reach, (double)(gy_bt_body_com(o) - o->ccd_start).length());
            }
        }
        ccd_body(w, b, reach);
    }
}

/* Sleep: a dynamic body wants to sleep once the average of its last GY_ADAPTER_SLEEP_SAMPLES
 * velocities has stayed below the thresholds for GY_ADAPTER_SLEEP_TIME (the shared rule). Bullet's
 * islands do the rest: an island sleeps when all its bodies want to, and wakes as a whole. The
 * adapter tells Bullet through the body's deactivation clock, which Bullet compares with its
 * process-wide gDeactivationTime (left untouched). */
static void update_sleep(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (b->base.type != GY_MOTION_DYNAMIC || !b->base.allow_sleeping)
            continue;
        if (!b->rb->isActive()) {
            gy_adapter_sleep_reset(b->sleep);
            continue;
        }
        bool wants = gy_adapter_sleep_sample(b->sleep, gy_bt_from_vec(b->rb->getLinearVelocity()),
                                             gy_bt_from_vec(b->rb->getAngularVelocity()), h);
        b->rb->setDeactivationTime(wants ? gDeactivationTime + 1.0 : 0.0);
        /* Bullet wakes a sleeping island into WANTS_DEACTIVATION, which counts as wanting to
         * sleep whatever the clock says: a sleeper struck into motion went back to sleep, its
         * velocity zeroed, as soon as it left the striker's island. Only the shared rule may
         * put a body to sleep. */
        if (!wants && b->rb->getActivationState() == WANTS_DEACTIVATION)
            b->rb->setActivationState(ACTIVE_TAG);
    }
}

/* ---- the step ------------------------------------------------------------------------------- */

/* Moves kinematic bodies along their velocities (Bullet reads their contact velocity from the
 * pose change) and decides which bodies take part in this substep. */
static void before_substep(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (!b->in_contact)
            b->correction_speed = 0.0; /* free: nothing left to give back */
        b->in_contact = false;
        /* Every moving body's: continuous collision sweeps in each candidate's frame. */
        b->ccd_start = gy_bt_body_com(b);
        if (b->base.type == GY_MOTION_DYNAMIC) {
            b->active = b->rb->isActive();
            if (!b->active)
                continue;
            if (!b->force.isZero())
                b->rb->applyCentralForce(b->force);
            if (!b->torque.isZero())
                b->rb->applyTorque(b->torque);
            continue;
        }
        bool moving = !b->kin_linear.isZero() || !b->kin_angular.isZero();
        b->active = moving || b->pose_written;
        b->rb->forceActivationState(b->active ? ACTIVE_TAG : ISLAND_SLEEPING);
        if (!moving)
            continue;
        const btTransform &cur = b->rb->getCenterOfMassTransform();
        btQuaternion q = cur.getRotation();
        double wl = b->kin_angular.length();
        if (wl > 0.0) {
            q = btQuaternion(b->kin_angular / wl, wl * h) * q;
            q.normalize();
        }
        /* For a kinematic body this keeps the old pose as Bullet's interpolation pose. */
        b->rb->setCenterOfMassTransform(btTransform(q, cur.getOrigin() + b->kin_linear * h));
    }
}

/* Overlap up to GY_ADAPTER_SOLVER_DEPTH is corrected through the velocities (Baumgarte; deeper
 * is split off), and that speed stays once the overlap is gone: a body pushed out of the last
 * centimetre floated off at 0.11 m/s. Each body remembers the largest correction speed its
 * contacts asked for, less what its centre no longer separates at, while it keeps touching; a
 * point whose overlap this substep's motion closes gives back, of its bodies' separation along
 * the normal (through the centres of mass), at most that much. A point still overlapping keeps
 * its push (what holds resting bodies up), and bouncing points keep their rebound. */
static void settle_contacts(gy_driver_world *w, double h)
{
    const btContactSolverInfo &info = w->world.getSolverInfo();
    int nm = w->dispatcher.getNumManifolds();
    for (uint32_t i = 0; i < w->moving_count; i++)
        w->moving[i]->keeps_touching = false;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nm; i++) {
            btPersistentManifold *m = w->dispatcher.getManifoldByIndexInternal(i);
            gy_bt_body *ba = gy_bt_body_of(m->getBody0()), *bb = gy_bt_body_of(m->getBody1());
            if (ba == nullptr || bb == nullptr)
                continue;
            bool move_a = ba->base.type == GY_MOTION_DYNAMIC && ba->rb->isActive();
            bool move_b = bb->base.type == GY_MOTION_DYNAMIC && bb->rb->isActive();
            if (!move_a && !move_b)
                continue;
            for (int k = 0; k < m->getNumContacts(); k++) {
                const btManifoldPoint &p = m->getContactPoint(k);
                if (p.getDistance() > 0.0)
                    continue;
                const btVector3 &n = p.m_normalWorldOnB; /* B to A */
                btVector3 lin_a = move_a ? n * ba->rb->getLinearFactor() * ba->rb->getInvMass()
                                         : btVector3(0, 0, 0);
                btVector3 lin_b = move_b ? -n * bb->rb->getLinearFactor() * bb->rb->getInvMass()
                                         : btVector3(0, 0, 0);
                btVector3 ra = ba->rb->getCenterOfMassPosition(),
                          rb = bb->rb->getCenterOfMassPosition();
                double sep = n.dot(ba->rb->getVelocityInLocalPoint(p.getPositionWorldOnA() - ra) -
                                   bb->rb->getVelocityInLocalPoint(p.getPositionWorldOnB() - rb));
                double centre = n.dot(ba->rb->getLinearVelocity() - bb->rb->getLinearVelocity());
                double depth = fmin(0.0, p.getDistance() + info.m_linearSlop);
                bool closes = -depth - sep * h <= 0.0;
                if (pass == 0) {
                    double asked = info.m_erp * fmin(-depth, GY_ADAPTER_SOLVER_DEPTH) / h;
                    double carried = fmax(0.0, centre);
                    if (move_a)
                        ba->correction_speed = fmax(asked, fmin(ba->correction_speed, carried));
                    if (move_b)
                        bb->correction_speed = fmax(asked, fmin(bb->correction_speed, carried));
                    ba->keeps_touching = ba->keeps_touching || !closes;
                    bb->keeps_touching = bb->keeps_touching || !closes;
                    continue;
                }
                /* Only a body leaving all its contacts gives its correction back. */
                if (p.m_combinedRestitution > 0.0 || !closes || !(centre > 0.0) ||
                    (move_a && ba->keeps_touching) || (move_b && bb->keeps_touching))
                    continue;
                double cap =
                    fmax(move_a ? ba->correction_speed : 0.0, move_b ? bb->correction_speed : 0.0);
                double k_inv = n.dot(lin_a - lin_b);
                double give = fmin(centre, cap);
                if (!(k_inv > 0.0) || !(give > 0.0))
                    continue;
                double d = -give / k_inv;
                if (move_a) {
                    ba->rb->setLinearVelocity(ba->rb->getLinearVelocity() + lin_a * d);
                    ba->correction_speed = fmax(0.0, ba->correction_speed - give);
                }
                if (move_b) {
                    bb->rb->setLinearVelocity(bb->rb->getLinearVelocity() + lin_b * d);
                    bb->correction_speed = fmax(0.0, bb->correction_speed - give);
                }
            }
        }
}

static void after_substep(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (b->base.type == GY_MOTION_KINEMATIC) {
            /* Bullet re-derived these from the poses; keep the exact values. */
            b->rb->setLinearVelocity(b->kin_linear);
            b->rb->setAngularVelocity(b->kin_angular);
        }
    }
    settle_contacts(w, h);
    gather_manifolds(w);
    ballistic_correction(w, h);
    project_locks(w);
    continuous_collision(w);
    gy_result r = gy_bt_joint_check_breaks(w);
    if (r != GY_OK)
        note_error(w, r);
    update_sleep(w, h);
}

static bool body_active_now(const gy_bt_body *b)
{
    return b->base.type != GY_MOTION_STATIC && b->active;
}

/* Sensor and response-off overlaps have no manifold points: when neither side moved this step,
 * Bullet did not look at the pair again, so the last report of it stands. */
static void carry_overlaps(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->contacts->previous.count; i++) {
        const gy_bt_pair *p = &gy_bt_pairs(&w->contacts->previous)[i];
        if (!p->overlap || body_active_now(p->a->body) || body_active_now(p->b->body))
            continue;
        if (gy_adapter_contacts_has(w->contacts, &p->a->base, &p->b->base))
            continue;
        if (gy_adapter_contacts_carry(w->contacts, i, &w->step_error) == UINT32_MAX)
            return;
    }
}

/* Contacts are found at the start of each substep, before the solve moves the bodies, so the
 * report of a step describes where they were when it began. Sensors only report, so they can
 * describe where the step ended: their pairs are collided again at the end poses (no manifold
 * is touched), and end_step keeps exactly the sensor pairs that overlap there (and those carried
 * over asleep). */
static void sensor_pass(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->contacts->current.count; i++)
        gy_bt_pairs(&w->contacts->current)[i].sensor_seen =
            !w->contacts->current.contacts[i].is_sensor;
    if (w->tally->sensors == 0)
        return;
    w->substep_index++; /* the end poses' geometry replaces the last substep's */
    w->sensor_pass = true;
    w->world.performDiscreteCollisionDetection();
    w->sensor_pass = false;
}

static bool sensor_pair_unseen(const void *pair, const void *ctx)
{
    (void)ctx;
    return !static_cast<const gy_bt_pair *>(pair)->sensor_seen;
}

static void end_step(gy_driver_world *w)
{
    uint32_t fresh = w->contacts->current.count;
    carry_overlaps(w);
    for (uint32_t i = fresh; i < w->contacts->current.count; i++)
        gy_bt_pairs(&w->contacts->current)[i].sensor_seen = true;
    if (w->tally->sensors > 0) {
        gy_adapter_contacts_remove_if(w->contacts, sensor_pair_unseen, nullptr);
    }
    for (uint32_t i = 0; i < w->contacts->current.count; i++) {
        gy_contact *c = &w->contacts->current.contacts[i];
        if (gy_bt_pairs(&w->contacts->current)[i].overlap) {
            c->normal_impulse = 0.0;
            c->tangent_impulse = 0.0;
            continue;
        }
        c->tangent_impulse = gy_v3_len(gy_bt_pairs(&w->contacts->current)[i].tangent);
        if (c->normal_impulse < 0.0)
            c->normal_impulse = 0.0;
    }
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        b->force.setZero();
        b->torque.setZero();
        b->pose_written = false;
    }
    gy_adapter_contacts_end_step(w->contacts);
    w->aabbs_stale = true;
}

gy_result gy_bt_step(gy_driver_world *w, double, double h, uint32_t substeps)
{
    w->step_error = GY_OK;
    w->step_index++;
    w->substep_dt = h;
    gy_adapter_contacts_begin_step(w->contacts);
    for (uint32_t s = 0; s < substeps; s++) {
        w->substep_index++;
        before_substep(w, h);
        gy_bt_joints_before_solve(w, h);
        /* maxSubSteps 0: exactly one internal step of h, no interpolation. */
        w->world.stepSimulation(h, 0, h);
        after_substep(w, h);
    }
    sensor_pass(w);
    end_step(w);
    return w->step_error;
}

void gy_bt_refresh_aabbs(gy_driver_world *w)
{
    if (!w->aabbs_stale)
        return;
    w->world.updateAabbs();
    w->aabbs_stale = false;
}

void gy_bt_step_fini(gy_driver_world *w)
{
    const gy_allocator *a = w->allocator;
    gy_adapter_broken_free(a, &w->broken);
}
