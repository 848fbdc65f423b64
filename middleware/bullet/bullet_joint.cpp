/* Bullet adapter: joints and joint breaking.
 *
 * Fixed, ball, hinge and slider map onto btFixedConstraint, btPoint2PointConstraint,
 * btHingeConstraint and btSliderConstraint, with frames built at the anchor from the bodies' pose
 * at creation. Bullet has no distance joint, so one is written here as a one-row constraint (the
 * ODE adapter uses ODE's double ball, which is the same constraint). A joint whose b is null is
 * anchored to the world's own fixed body. Breakable joints carry a btJointFeedback; after every
 * solve the force it reports is compared with the break force (the magnitude of the force vector,
 * as on ODE, rather than Bullet's per-row impulse threshold). */
#include <math.h>

#include "bullet_internal.h"

/* Limits stop hard: no bounce off a slider's end. */
#define SLIDER_LIMIT_RESTITUTION 0.0

namespace
{

/* Keeps the distance between a point on A and a point on B (body frames) at `distance`. */
class distance_constraint : public btTypedConstraint
{
  public:
    distance_constraint(btRigidBody &a, btRigidBody &b, const btVector3 &pivot_a,
                        const btVector3 &pivot_b, double distance)
        : btTypedConstraint(MAX_CONSTRAINT_TYPE, a, b), m_pivot_a(pivot_a), m_pivot_b(pivot_b),
          m_distance(distance), m_last_axis(0, 1, 0)
    {
    }

    void getInfo1(btConstraintInfo1 *info) override
    {
        info->m_numConstraintRows = 1;
        info->nub = 5;
    }

    /* One row along the line between the two points: J v is the rate the distance grows at. */
    void getInfo2(btConstraintInfo2 *info) override
    {
        const btTransform &ta = m_rbA.getCenterOfMassTransform();
        const btTransform &tb = m_rbB.getCenterOfMassTransform();
        btVector3 ra = ta.getBasis() * m_pivot_a, rb = tb.getBasis() * m_pivot_b;
        btVector3 d = (ta.getOrigin() + ra) - (tb.getOrigin() + rb);
        double len = d.length();
        if (len > 1e-9)
            m_last_axis = d / len;
        const btVector3 &n = m_last_axis;
        btVector3 ja = ra.cross(n), jb = rb.cross(n);
        for (int k = 0; k < 3; k++) {
            info->m_J1linearAxis[k] = n[k];
            info->m_J1angularAxis[k] = ja[k];
            info->m_J2linearAxis[k] = -n[k];
            info->m_J2angularAxis[k] = -jb[k];
        }
        info->m_constraintError[0] = info->fps * info->erp * (m_distance - len);
    }

    void setParam(int, btScalar, int) override {}
    btScalar getParam(int, int) const override
    {
        return 0.0;
    }

  private:
    btVector3 m_pivot_a, m_pivot_b;
    double m_distance;
    btVector3 m_last_axis;
};

} // namespace

static btRigidBody &joint_side(gy_backend_world *w, gy_bt_body *b)
{
    return b != nullptr ? *b->rb : w->fixed;
}

/* A world frame at the anchor whose `from` axis is turned onto `axis`. */
static btTransform axis_frame(const btVector3 &from, const btVector3 &axis, const btVector3 &anchor)
{
    btQuaternion q = shortestArcQuat(from, axis);
    q.normalize();
    return btTransform(q, anchor);
}

static void joint_destroy(gy_backend_world *w, gy_bt_joint *j)
{
    w->world.removeConstraint(j->constraint);
    j->constraint->~btTypedConstraint();
    gy_free(w->allocator, j->constraint, j->constraint_size);
    j->a->joint_count--;
    gy_bt_body_wake(j->a);
    if (j->b != nullptr) {
        j->b->joint_count--;
        gy_bt_body_wake(j->b);
    }
    if (j->breakable_index != UINT32_MAX) {
        gy_bt_joint *last = w->breakable_list[--w->breakable_count];
        w->breakable_list[j->breakable_index] = last;
        last->breakable_index = j->breakable_index;
    }
    gy_handle_pool_release(&w->joints, j->id.bits);
    j->~gy_bt_joint();
    gy_free(w->allocator, j, sizeof *j);
}

static size_t constraint_size(gy_joint_type t)
{
    switch (t) {
    case GY_JOINT_FIXED:
        return sizeof(btFixedConstraint);
    case GY_JOINT_BALL:
        return sizeof(btPoint2PointConstraint);
    case GY_JOINT_HINGE:
        return sizeof(btHingeConstraint);
    case GY_JOINT_SLIDER:
        return sizeof(btSliderConstraint);
    case GY_JOINT_DISTANCE:
    default:
        return sizeof(distance_constraint);
    }
}

gy_result gy_bt_joint_create(gy_backend_world *w, const gy_joint_def *def, gy_joint_id *out)
{
    void *pa, *pb;
    gy_result r = gy_adapter_joint_begin(w != nullptr, w != nullptr && gy_bt_thread_ok(w),
                                         w != nullptr ? &w->bodies : nullptr, def, out, &pa, &pb);
    if (r != GY_OK)
        return r;
    gy_bt_body *a = static_cast<gy_bt_body *>(pa), *b = static_cast<gy_bt_body *>(pb);
    if (a->type == GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;

    btVector3 anchor = gy_bt_vec(def->anchor);
    gy_joint_type type;
    double distance;
    r = gy_adapter_joint_length(def, gy_bt_body_pose(a).position, &type, &distance);
    if (r != GY_OK)
        return r;

    const gy_allocator *al = w->allocator;
    size_t csize = constraint_size(type);
    void *jmem = gy_alloc(al, sizeof(gy_bt_joint));
    void *cmem = gy_alloc(al, csize);
    if (jmem == nullptr || cmem == nullptr) {
        gy_free(al, jmem, sizeof(gy_bt_joint));
        gy_free(al, cmem, csize);
        return GY_ERR_OUT_OF_MEMORY;
    }
    uint64_t h;
    r = gy_handle_pool_acquire(&w->joints, jmem, &h);
    if (r == GY_OK && def->breakable) {
        r = gy_array_reserve(al, (void **)&w->breakable_list, &w->breakable_capacity,
                             w->breakable_count + 1u, sizeof *w->breakable_list);
        if (r != GY_OK)
            gy_handle_pool_release(&w->joints, h);
    }
    if (r != GY_OK) {
        gy_free(al, jmem, sizeof(gy_bt_joint));
        gy_free(al, cmem, csize);
        return r;
    }

    gy_bt_joint *j = new (jmem) gy_bt_joint();
    j->id.bits = h;
    j->type = def->type;
    j->a = a;
    j->b = b;
    j->breakable = def->breakable;
    j->break_force = def->break_force;
    j->user_data = def->user_data;
    j->breakable_index = UINT32_MAX;
    j->constraint_size = csize;

    btRigidBody &ra = joint_side(w, a);
    btRigidBody &rb = joint_side(w, b);
    const btTransform ta_inv = ra.getCenterOfMassTransform().inverse();
    const btTransform tb_inv = rb.getCenterOfMassTransform().inverse();
    btVector3 axis = gy_bt_vec(gy_v3_normalize(def->axis));
    switch (type) {
    case GY_JOINT_FIXED: {
        btTransform frame(btQuaternion::getIdentity(), anchor);
        j->constraint = new (cmem) btFixedConstraint(ra, rb, ta_inv * frame, tb_inv * frame);
        break;
    }
    case GY_JOINT_BALL:
        j->constraint =
            new (cmem) btPoint2PointConstraint(ra, rb, ta_inv * anchor, tb_inv * anchor);
        break;
    case GY_JOINT_HINGE: {
        /* The hinge turns about its frames' Z axis; its angle is a's turn relative to b. */
        btTransform frame = axis_frame(btVector3(0, 0, 1), axis, anchor);
        btHingeConstraint *hinge =
            new (cmem) btHingeConstraint(ra, rb, ta_inv * frame, tb_inv * frame, false);
        if (def->has_limits)
            hinge->setLimit(fmax(-SIMD_PI, def->limit_min), fmin(SIMD_PI, def->limit_max));
        j->constraint = hinge;
        break;
    }
    case GY_JOINT_SLIDER: {
        /* Bullet's slider moves along its frames' X axis and measures B's position relative to
         * A; Gyre measures a relative to b, so b (or the world) is Bullet's A. */
        btTransform frame = axis_frame(btVector3(1, 0, 0), axis, anchor);
        btSliderConstraint *slider =
            new (cmem) btSliderConstraint(rb, ra, tb_inv * frame, ta_inv * frame, true);
        if (def->has_limits) {
            slider->setLowerLinLimit(def->limit_min);
            slider->setUpperLinLimit(def->limit_max);
        }
        slider->setRestitutionLimLin(SLIDER_LIMIT_RESTITUTION);
        j->constraint = slider;
        break;
    }
    case GY_JOINT_DISTANCE:
    default:
        /* a's origin (not its centre of mass) keeps the distance from the anchor. */
        j->constraint = new (cmem)
            distance_constraint(ra, rb, a->principal_inv.getOrigin(), tb_inv * anchor, distance);
        break;
    }
    if (def->breakable) {
        j->constraint->setJointFeedback(&j->feedback);
        j->breakable_index = w->breakable_count;
        w->breakable_list[w->breakable_count++] = j;
    }
    /* Jointed bodies do not collide with each other (as on ODE). */
    w->world.addConstraint(j->constraint, true);
    a->joint_count++;
    gy_bt_body_wake(a);
    if (b != nullptr) {
        b->joint_count++;
        gy_bt_body_wake(b);
    }
    *out = j->id;
    return GY_OK;
}

gy_result gy_bt_joint_release(gy_backend_world *w, gy_joint_id id)
{
    if (w == nullptr)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_bt_thread_ok(w))
        return GY_ERR_WRONG_THREAD;
    gy_bt_joint *j = static_cast<gy_bt_joint *>(gy_handle_pool_get(&w->joints, id.bits));
    if (j == nullptr)
        return GY_ERR_STALE_HANDLE;
    joint_destroy(w, j);
    return GY_OK;
}

void gy_bt_joint_release_for_body(gy_backend_world *w, gy_bt_body *b)
{
    for (uint32_t i = 0; i < w->joints.count && b->joint_count > 0; i++) {
        uint64_t h;
        gy_bt_joint *j = static_cast<gy_bt_joint *>(gy_handle_pool_at(&w->joints, i, &h));
        if (j != nullptr && (j->a == b || j->b == b))
            joint_destroy(w, j);
    }
}

void gy_bt_joint_release_all(gy_backend_world *w)
{
    for (uint32_t i = 0; i < w->joints.count; i++) {
        uint64_t h;
        gy_bt_joint *j = static_cast<gy_bt_joint *>(gy_handle_pool_at(&w->joints, i, &h));
        if (j != nullptr)
            joint_destroy(w, j);
    }
}

gy_result gy_bt_joint_check_breaks(gy_backend_world *w)
{
    for (uint32_t i = w->breakable_count; i-- > 0;) {
        gy_bt_joint *j = w->breakable_list[i];
        const btJointFeedback &fb = j->feedback;
        double f = fmax(fb.m_appliedForceBodyA.length(), fb.m_appliedForceBodyB.length());
        if (!(f > j->break_force))
            continue;
        gy_result r = gy_adapter_broken_push(w->allocator, &w->broken, j->id, j->user_data);
        if (r != GY_OK)
            return r; /* the joint holds this step; it is checked again after the next solve */
        joint_destroy(w, j);
    }
    return GY_OK;
}
