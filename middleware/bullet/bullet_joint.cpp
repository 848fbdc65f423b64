/* Bullet adapter: joints, their constraint force, motors, springs and limits.
 *
 * Fixed, ball, hinge and slider map onto btFixedConstraint, btPoint2PointConstraint,
 * btHingeConstraint and btSliderConstraint, with frames built at the anchor from the bodies' pose
 * at creation. Bullet has no distance joint, so one is written here as a one-row constraint (the
 * ODE adapter uses ODE's double ball, which is the same constraint); a spring softens that row
 * with the ERP and CFM joint_drive.c gives both adapters. Hinge and slider motors are Bullet's
 * own (the hinge's angular motor, the slider's powered linear motor), set before every solve as
 * the front end's joint drive (joint_drive.c) decides. A hinge's and a slider's limits, and a
 * ball's cone and twist limits, are the drive's rows (angular, or linear along a slider's axis)
 * added to the hinge, slider and point-to-point constraints in every solve (Bullet's own limit
 * rows only act once the stop is passed). A joint whose b is null is
 * anchored to the world's own fixed body; one whose b is a static (a btCollisionObject, which
 * constraints cannot hold) to the static's anchor, a btRigidBody at the static's pose that its
 * first joint makes and its last takes away. Breakable joints carry a btJointFeedback; after every
 * solve the force it reports is compared with the break force (the magnitude of the force vector,
 * as on ODE, rather than Bullet's per-row impulse threshold). */
#include <math.h>
#include <utility>

#include "bullet_internal.h"

/* Bullet's hinge angle and motor velocity (its A is a) and its slider offset and motor velocity
 * (its B is a) already run the way Gyre's do, a relative to b about or along the axis, so they
 * are passed through unchanged. */

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

    /* The front end's softness for the next solve (joint_drive.c). */
    void set_spring(double erp, double cfm)
    {
        m_spring = true;
        m_erp = erp;
        m_cfm = cfm;
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
        if (!m_spring) {
            info->m_constraintError[0] = info->fps * info->erp * (m_distance - len);
            return;
        }
        double ima = m_rbA.getInvMass(), imb = m_rbB.getInvMass();
        double h = 1.0 / info->fps;
        /* Bullet's solver only converges for small row mixing, so the soft row is solved here in
         * closed form instead: with compliance C (cfm / h, per impulse) the row's velocity
         * after the solve is g·target + (1 − g)·free velocity, g = J M⁻¹ Jᵀ / (J M⁻¹ Jᵀ + C),
         * and a rigid row aimed at that velocity lands there. */
        double jmj = ima + imb + ja.dot(m_rbA.getInvInertiaTensorWorld() * ja) +
                     jb.dot(m_rbB.getInvInertiaTensorWorld() * jb);
        double jv = n.dot(free_velocity(m_rbA, h) - free_velocity(m_rbB, h)) +
                    ja.dot(free_spin(m_rbA, h)) - jb.dot(free_spin(m_rbB, h));
        double compliance = m_cfm / h;
        double g = jmj / (jmj + compliance);
        info->m_constraintError[0] = g * info->fps * m_erp * (m_distance - len) + (1.0 - g) * jv;
    }

    void setParam(int, btScalar, int) override {}
    btScalar getParam(int, int) const override
    {
        return 0.0;
    }

  private:
    /* A body's velocities at the end of the solve were no constraint to act: what Bullet's
     * solver starts from (the step's forces included). */
    static btVector3 free_velocity(const btRigidBody &b, double h)
    {
        return b.getLinearVelocity() + b.getTotalForce() * (b.getInvMass() * h);
    }
    static btVector3 free_spin(const btRigidBody &b, double h)
    {
        return b.getAngularVelocity() + b.getInvInertiaTensorWorld() * b.getTotalTorque() * h;
    }

    btVector3 m_pivot_a, m_pivot_b;
    double m_distance;
    btVector3 m_last_axis;
    bool m_spring = false;
    double m_erp = 0.0, m_cfm = 0.0;
};

/* Writes `r` as row `row` of the constraint's rows, between gyre's a and b (Bullet's A and B,
 * or B and A when `a_is_bullet_a` is false). A linear row acts at a's centre of mass: its J v is
 * a's velocity relative to the point of b there, along the axis, and its force puts no torque
 * couple on the pair. */
static void limit_row_write(btTypedConstraint::btConstraintInfo2 *info, int row,
                            const gy_joint_limit_row &r, const btRigidBody &a, const btRigidBody &b,
                            bool a_is_bullet_a)
{
    int k = row * info->rowskip;
    btVector3 axis = gy_bt_vec(r.axis);
    btVector3 a_lin(0, 0, 0), a_ang = axis, b_lin(0, 0, 0), b_ang = -axis;
    if (r.linear) {
        a_lin = axis;
        a_ang.setZero();
        b_lin = -axis;
        b_ang = -(a.getCenterOfMassPosition() - b.getCenterOfMassPosition()).cross(axis);
    }
    btScalar *lin1 = info->m_J1linearAxis, *ang1 = info->m_J1angularAxis;
    btScalar *lin2 = info->m_J2linearAxis, *ang2 = info->m_J2angularAxis;
    if (!a_is_bullet_a) {
        std::swap(lin1, lin2);
        std::swap(ang1, ang2);
    }
    for (int c = 0; c < 3; c++) {
        lin1[k + c] = a_lin[c];
        ang1[k + c] = a_ang[c];
        lin2[k + c] = b_lin[c];
        ang2[k + c] = b_ang[c];
    }
    info->m_constraintError[k] = r.bound;
    info->m_lowerLimit[k] = r.upper ? -SIMD_INFINITY : 0.0;
    info->m_upperLimit[k] = r.upper ? 0.0 : SIMD_INFINITY;
}

/* A hinge, slider or point-to-point constraint with limit rows after its own: the rows the front
 * end's drive gives before every solve. A slider's A is gyre's b (see gy_bt_joint_create). */
template <class Base, bool a_is_bullet_a = true> class limited : public Base
{
  public:
    using Base::Base;

    void set_rows(const gy_joint_limit_row *rows, uint32_t n)
    {
        for (uint32_t i = 0; i < n; i++)
            m_row[i] = rows[i];
        m_rows = static_cast<int>(n);
    }

    void getInfo1(btTypedConstraint::btConstraintInfo1 *info) override
    {
        Base::getInfo1(info);
        m_base_rows = info->m_numConstraintRows;
        info->m_numConstraintRows += m_rows;
    }

    void getInfo2(btTypedConstraint::btConstraintInfo2 *info) override
    {
        Base::getInfo2(info);
        const btRigidBody &a = a_is_bullet_a ? this->m_rbA : this->m_rbB;
        const btRigidBody &b = a_is_bullet_a ? this->m_rbB : this->m_rbA;
        for (int i = 0; i < m_rows; i++)
            limit_row_write(info, m_base_rows + i, m_row[i], a, b, a_is_bullet_a);
    }

  private:
    gy_joint_limit_row m_row[GY_JOINT_LIMIT_ROWS_MAX];
    int m_rows = 0, m_base_rows = 0;
};

using limited_hinge = limited<btHingeConstraint>;
using limited_ball = limited<btPoint2PointConstraint>;
using limited_slider = limited<btSliderConstraint, false>;

} // namespace

static btRigidBody &joint_side(gy_driver_world *w, gy_bt_body *b)
{
    return b != nullptr ? *b->rb : w->fixed;
}

void gy_bt_anchor_place(gy_bt_body *b)
{
    btTransform frame = gy_bt_body_frame(b);
    b->rb->setWorldTransform(frame);
    b->rb->setInterpolationWorldTransform(frame);
    b->rb->updateInertiaTensor();
}

/* A world frame at the anchor whose `from` axis is turned onto `axis`. */
static btTransform axis_frame(const btVector3 &from, const btVector3 &axis, const btVector3 &anchor)
{
    btQuaternion q = shortestArcQuat(from, axis);
    q.normalize();
    return btTransform(q, anchor);
}

void gy_bt_joint_release(gy_driver_world *w, gy_bt_joint *j)
{
    w->world.removeConstraint(j->constraint);
    /* The front end has uncounted the joint already: the static's last one takes its anchor. */
    if (j->b != nullptr && j->b->base.type == GY_MOTION_STATIC && j->b->base.joint_count == 0) {
        gy_bt_delete(w->allocator, j->b->rb);
        j->b->rb = nullptr;
    }
    j->constraint->~btTypedConstraint();
    gy_free(w->allocator, j->constraint, j->constraint_size);
    j->~gy_bt_joint();
    gy_free(w->allocator, j, sizeof *j);
}

static btVector3 hinge_axis(btHingeConstraint *hinge)
{
    return hinge->getRigidBodyA().getCenterOfMassTransform().getBasis() *
           hinge->getAFrame().getBasis().getColumn(2);
}

static btVector3 slider_axis(btSliderConstraint *slider)
{
    return slider->getRigidBodyA().getCenterOfMassTransform().getBasis() *
           slider->getFrameOffsetA().getBasis().getColumn(0);
}

/* The joint's Gyre position: the hinge angle or slider offset of a relative to b. */
static double joint_position(gy_bt_joint *j)
{
    if (j->base.type == GY_JOINT_HINGE)
        return static_cast<btHingeConstraint *>(j->constraint)->getHingeAngle();
    btSliderConstraint *slider = static_cast<btSliderConstraint *>(j->constraint);
    slider->calculateTransforms(slider->getRigidBodyA().getCenterOfMassTransform(),
                                slider->getRigidBodyB().getCenterOfMassTransform());
    const btTransform &fa = slider->getCalculatedTransformA();
    btVector3 d = slider->getCalculatedTransformB().getOrigin() - fa.getOrigin();
    return d.dot(fa.getBasis().getColumn(0));
}

/* Bullet's joint motor rate, whatever the joint (a relative to b, about or along the axis). */
static double joint_rate(gy_bt_joint *j)
{
    btTypedConstraint *c = j->constraint;
    if (j->base.type == GY_JOINT_HINGE) {
        btVector3 spin =
            c->getRigidBodyA().getAngularVelocity() - c->getRigidBodyB().getAngularVelocity();
        return spin.dot(hinge_axis(static_cast<btHingeConstraint *>(c)));
    }
    const btRigidBody &ra = c->getRigidBodyB(), &rb = c->getRigidBodyA();
    btVector3 v = ra.getLinearVelocity() - rb.getVelocityInLocalPoint(ra.getCenterOfMassPosition() -
                                                                      rb.getCenterOfMassPosition());
    return v.dot(slider_axis(static_cast<btSliderConstraint *>(c)));
}

void gy_bt_joint_coordinate(gy_driver_world *, gy_bt_joint *j, double *position, double *rate)
{
    *position = joint_position(j);
    *rate = joint_rate(j);
}

gy_vec3 gy_bt_joint_axis(gy_driver_world *, gy_bt_joint *j)
{
    btTypedConstraint *c = j->constraint;
    return gy_bt_from_vec(j->base.type == GY_JOINT_HINGE
                              ? hinge_axis(static_cast<btHingeConstraint *>(c))
                              : slider_axis(static_cast<btSliderConstraint *>(c)));
}

void gy_bt_joint_motor_set(gy_driver_world *, gy_bt_joint *j, bool on, double v, double force,
                           double h)
{
    if (isinf(force))
        force = SIMD_INFINITY;
    if (j->base.type == GY_JOINT_HINGE) {
        /* Bullet bounds the hinge motor by an impulse per solve. */
        static_cast<btHingeConstraint *>(j->constraint)->enableAngularMotor(on, v, force * h);
    } else {
        btSliderConstraint *slider = static_cast<btSliderConstraint *>(j->constraint);
        slider->setPoweredLinMotor(on);
        slider->setTargetLinMotorVelocity(v);
        slider->setMaxLinMotorForce(force);
    }
}

void gy_bt_joint_set_limit_rows(gy_driver_world *, gy_bt_joint *j, const gy_joint_limit_row *rows,
                                uint32_t n, double)
{
    if (j->base.type == GY_JOINT_HINGE)
        static_cast<limited_hinge *>(j->constraint)->set_rows(rows, n);
    else if (j->base.type == GY_JOINT_SLIDER)
        static_cast<limited_slider *>(j->constraint)->set_rows(rows, n);
    else
        static_cast<limited_ball *>(j->constraint)->set_rows(rows, n);
}

static gy_quat rotation(const btRigidBody &b)
{
    return gy_bt_from_quat(b.getCenterOfMassTransform().getRotation());
}

void gy_bt_joint_rotations(gy_driver_world *, gy_bt_joint *j, gy_quat *qa, gy_quat *qb)
{
    *qa = rotation(j->constraint->getRigidBodyA());
    *qb = rotation(j->constraint->getRigidBodyB());
}

static size_t constraint_size(gy_joint_type t, bool limited_rows)
{
    switch (t) {
    case GY_JOINT_FIXED:
        return sizeof(btFixedConstraint);
    case GY_JOINT_BALL:
        return limited_rows ? sizeof(limited_ball) : sizeof(btPoint2PointConstraint);
    case GY_JOINT_HINGE:
        return limited_rows ? sizeof(limited_hinge) : sizeof(btHingeConstraint);
    case GY_JOINT_SLIDER:
        return limited_rows ? sizeof(limited_slider) : sizeof(btSliderConstraint);
    case GY_JOINT_DISTANCE:
    default:
        return sizeof(distance_constraint);
    }
}

gy_result gy_bt_joint_create(gy_driver_world *w, const gy_joint_def *def, gy_bt_body *a,
                             gy_bt_body *b, gy_bt_joint **out)
{
    btVector3 anchor = gy_bt_vec(def->anchor);
    gy_adapter_joint rec = {};
    gy_adapter_joint_record_init(&rec, def, &a->base, b != nullptr ? &b->base : nullptr);
    bool limited_rows = gy_joint_limit_row_count(&rec) > 0;
    const gy_allocator *al = w->allocator;
    size_t csize = constraint_size(def->type, limited_rows);
    void *jmem = gy_alloc(al, sizeof(gy_bt_joint));
    void *cmem = gy_alloc(al, csize);
    /* A static's first joint makes its anchor (mass 0, as a static btRigidBody). */
    bool needs_anchor = b != nullptr && b->base.type == GY_MOTION_STATIC && b->rb == nullptr;
    btRigidBody *made = needs_anchor ? gy_bt_new<btRigidBody>(al, 0.0, nullptr, nullptr) : nullptr;
    if (jmem == nullptr || cmem == nullptr || (needs_anchor && made == nullptr)) {
        gy_free(al, jmem, sizeof(gy_bt_joint));
        gy_free(al, cmem, csize);
        gy_bt_delete(al, made);
        return GY_ERR_OUT_OF_MEMORY;
    }
    if (made != nullptr) {
        b->rb = made;
        made->setUserPointer(b);
        made->setActivationState(ISLAND_SLEEPING);
        gy_bt_anchor_place(b);
    }

    gy_bt_joint *j = new (jmem) gy_bt_joint();
    j->base = rec;
    j->a = a;
    j->b = b;
    j->constraint_size = csize;

    btRigidBody &ra = joint_side(w, a);
    btRigidBody &rb = joint_side(w, b);
    const btTransform ta_inv = ra.getCenterOfMassTransform().inverse();
    const btTransform tb_inv = rb.getCenterOfMassTransform().inverse();
    btVector3 axis = gy_bt_vec(gy_v3_normalize(def->axis));
    switch (def->type) {
    case GY_JOINT_FIXED: {
        btTransform frame(btQuaternion::getIdentity(), anchor);
        j->constraint = new (cmem) btFixedConstraint(ra, rb, ta_inv * frame, tb_inv * frame);
        break;
    }
    case GY_JOINT_BALL:
        if (limited_rows)
            j->constraint = new (cmem) limited_ball(ra, rb, ta_inv * anchor, tb_inv * anchor);
        else
            j->constraint =
                new (cmem) btPoint2PointConstraint(ra, rb, ta_inv * anchor, tb_inv * anchor);
        break;
    case GY_JOINT_HINGE: {
        /* The hinge turns about its frames' Z axis; its angle is a's turn relative to b. */
        btTransform frame = axis_frame(btVector3(0, 0, 1), axis, anchor);
        btHingeConstraint *hinge;
        if (limited_rows)
            hinge = new (cmem) limited_hinge(ra, rb, ta_inv * frame, tb_inv * frame, false);
        else
            hinge = new (cmem) btHingeConstraint(ra, rb, ta_inv * frame, tb_inv * frame, false);
        j->constraint = hinge;
        break;
    }
    case GY_JOINT_SLIDER: {
        /* Bullet's slider moves along its frames' X axis and measures B's position relative to
         * A; Gyre measures a relative to b, so b (or the world) is Bullet's A. */
        btTransform frame = axis_frame(btVector3(1, 0, 0), axis, anchor);
        if (limited_rows)
            j->constraint = new (cmem) limited_slider(rb, ra, tb_inv * frame, ta_inv * frame, true);
        else
            j->constraint =
                new (cmem) btSliderConstraint(rb, ra, tb_inv * frame, ta_inv * frame, true);
        break; /* free along its axis (Bullet's default linear limits, lower above upper) */
    }
    case GY_JOINT_DISTANCE:
    default:
        /* a's origin (not its centre of mass) keeps the distance from the anchor. */
        {
            distance_constraint *dc =
                new (cmem) distance_constraint(ra, rb, gy_bt_principal_inv(a->motion()).getOrigin(),
                                               tb_inv * anchor, def->distance);
            j->constraint = dc;
            break;
        }
    }
    j->constraint->setJointFeedback(&j->feedback);
    /* Jointed bodies do not collide: the front end's rule (gy_adapter_bodies_jointed), which the
     * dispatcher and the static pass ask, rather than Bullet's constraint references. */
    w->world.addConstraint(j->constraint, false);
    *out = j;
    return GY_OK;
}

double gy_bt_joint_force(gy_driver_world *, gy_bt_joint *j)
{
    const btJointFeedback &fb = j->feedback;
    return fmax(fb.m_appliedForceBodyA.length(), fb.m_appliedForceBodyB.length());
}

void gy_bt_joint_set_spring(gy_driver_world *, gy_bt_joint *j, double erp, double cfm, double)
{
    static_cast<distance_constraint *>(j->constraint)->set_spring(erp, cfm);
}

void gy_bt_joint_get_state(gy_driver_world *, gy_bt_joint *j, gy_joint_state *out)
{
    bool a_is_bullet_a = j->base.type != GY_JOINT_SLIDER;
    const btJointFeedback &fb = j->feedback;
    out->force = gy_bt_from_vec(a_is_bullet_a ? fb.m_appliedForceBodyA : fb.m_appliedForceBodyB);
    out->torque = gy_bt_from_vec(a_is_bullet_a ? fb.m_appliedTorqueBodyA : fb.m_appliedTorqueBodyB);
}
