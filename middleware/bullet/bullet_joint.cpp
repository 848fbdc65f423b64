/* Bullet adapter: joints, their constraint force, motors, springs and ball limits.
 *
 * Fixed, ball, hinge and slider map onto btFixedConstraint, btPoint2PointConstraint,
 * btHingeConstraint and btSliderConstraint, with frames built at the anchor from the bodies' pose
 * at creation. Bullet has no distance joint, so one is written here as a one-row constraint (the
 * ODE adapter uses ODE's double ball, which is the same constraint); a spring softens that row
 * with the ERP and CFM joint_drive.c gives both adapters. Hinge and slider motors are Bullet's
 * own (the hinge's angular motor, the slider's powered linear motor); a position servo gets its
 * velocity from joint_drive.c before every solve. A hinge's limits, and a ball's cone and twist
 * limits (measured by joint_drive.c), are angular rows added to the hinge and point-to-point
 * constraints in every solve, bounded by joint_drive.c's limit bound: a limit holds whatever
 * else the solve adds, where Bullet's own hinge limit row only acts once the stop is passed.
 * A slider's limits are Bullet's. A joint whose b is null is
 * anchored to the world's own fixed body; one whose b is a static (a btCollisionObject, which
 * constraints cannot hold) to the static's anchor, a btRigidBody at the static's pose that its
 * first joint makes and its last takes away. Breakable joints carry a btJointFeedback; after every
 * solve the force it reports is compared with the break force (the magnitude of the force vector,
 * as on ODE, rather than Bullet's per-row impulse threshold). */
#include <math.h>

#include "bullet_internal.h"

/* Limits stop hard: no bounce off a slider's end. */
#define SLIDER_LIMIT_RESTITUTION 0.0

/* Bullet's hinge angle and motor velocity (its A is a) and its slider offset and motor velocity
 * (its B is a) already run the way Gyre's do: a relative to b, about or along the axis. */
#define HINGE_SIGN  1.0
#define SLIDER_SIGN 1.0

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

    void set_spring(double frequency, double damping_ratio)
    {
        m_spring = true;
        m_frequency = frequency;
        m_damping_ratio = damping_ratio;
    }

    /* The current length between the two points and its rate of change. */
    void measure(double *length, double *rate) const
    {
        const btTransform &ta = m_rbA.getCenterOfMassTransform();
        const btTransform &tb = m_rbB.getCenterOfMassTransform();
        btVector3 ra = ta.getBasis() * m_pivot_a, rb = tb.getBasis() * m_pivot_b;
        btVector3 d = (ta.getOrigin() + ra) - (tb.getOrigin() + rb);
        *length = d.length();
        btVector3 v = m_rbA.getVelocityInLocalPoint(ra) - m_rbB.getVelocityInLocalPoint(rb);
        *rate = *length > 1e-12 ? v.dot(d) / *length : 0.0;
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
        double mass = ima + imb > 0.0 ? 1.0 / (ima + imb) : 0.0;
        double h = 1.0 / info->fps, erp, cfm;
        gy_joint_spring_softness(m_frequency, m_damping_ratio, mass, h, &erp, &cfm);
        /* Bullet's solver only converges for small row mixing, so the soft row is solved here in
         * closed form instead: with compliance C (cfm / h, per impulse) the row's velocity
         * after the solve is g·target + (1 − g)·free velocity, g = J M⁻¹ Jᵀ / (J M⁻¹ Jᵀ + C),
         * and a rigid row aimed at that velocity lands there. */
        double jmj = ima + imb + ja.dot(m_rbA.getInvInertiaTensorWorld() * ja) +
                     jb.dot(m_rbB.getInvInertiaTensorWorld() * jb);
        double jv = n.dot(free_velocity(m_rbA, h) - free_velocity(m_rbB, h)) +
                    ja.dot(free_spin(m_rbA, h)) - jb.dot(free_spin(m_rbB, h));
        double compliance = cfm / h;
        double g = jmj / (jmj + compliance);
        info->m_constraintError[0] = g * info->fps * erp * (m_distance - len) + (1.0 - g) * jv;
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
    double m_frequency = 0.0, m_damping_ratio = 0.0;
};

/* One limit row: the rate of A relative to B about `axis` kept at or above (lower) or at or
 * below (upper) `bound`, one-sided. */
struct limit_row {
    btVector3 axis;
    double bound;
    bool upper;
};

/* Writes `r` as row `row` of the constraint's rows. */
static void limit_row_write(btTypedConstraint::btConstraintInfo2 *info, int row, const limit_row &r)
{
    int k = row * info->rowskip;
    for (int c = 0; c < 3; c++) {
        info->m_J1angularAxis[k + c] = r.axis[c];
        info->m_J2angularAxis[k + c] = -r.axis[c];
    }
    info->m_constraintError[k] = r.bound;
    info->m_lowerLimit[k] = r.upper ? -SIMD_INFINITY : 0.0;
    info->m_upperLimit[k] = r.upper ? 0.0 : SIMD_INFINITY;
}

/* A hinge with limits: Bullet's hinge rows, then both limit rows in every solve. */
class hinge_limit_constraint : public btHingeConstraint
{
  public:
    hinge_limit_constraint(btRigidBody &a, btRigidBody &b, const btTransform &frame_a,
                           const btTransform &frame_b, double lo, double hi)
        : btHingeConstraint(a, b, frame_a, frame_b, false), m_lo(lo), m_hi(hi)
    {
    }

    void getInfo1(btConstraintInfo1 *info) override
    {
        btHingeConstraint::getInfo1(info);
        m_base_rows = info->m_numConstraintRows;
        info->m_numConstraintRows += 2;
    }

    void getInfo2(btConstraintInfo2 *info) override
    {
        btHingeConstraint::getInfo2(info);
        btVector3 axis =
            m_rbA.getCenterOfMassTransform().getBasis() * getAFrame().getBasis().getColumn(2);
        double angle = HINGE_SIGN * getHingeAngle(), h = 1.0 / info->fps;
        limit_row_write(info, m_base_rows,
                        limit_row{axis, gy_joint_limit_bound(angle, m_lo, false, h), false});
        limit_row_write(info, m_base_rows + 1,
                        limit_row{axis, gy_joint_limit_bound(angle, m_hi, true, h), true});
    }

  private:
    double m_lo, m_hi;
    int m_base_rows = 0;
};

/* A ball joint with cone and twist limits: the point-to-point rows, then one angular row per
 * side of each limit, in every solve. */
class ball_limit_constraint : public btPoint2PointConstraint
{
  public:
    ball_limit_constraint(btRigidBody &a, btRigidBody &b, const btVector3 &pivot_a,
                          const btVector3 &pivot_b, const gy_joint_def *def)
        : btPoint2PointConstraint(a, b, pivot_a, pivot_b), m_has_cone(def->has_cone),
          m_cone(def->cone_angle), m_has_twist(def->has_twist_limits), m_twist_min(def->twist_min),
          m_twist_max(def->twist_max)
    {
        gy_vec3 axis = gy_v3_len(def->axis) > 1e-9 ? def->axis : gy_v3(0.0, 1.0, 0.0);
        m_frame = gy_joint_cone_frame_make(axis, rotation(a), rotation(b));
    }

    gy_joint_cone_pose measure() const
    {
        return gy_joint_cone_measure(&m_frame, rotation(m_rbA), rotation(m_rbB));
    }

    btVector3 relative_spin() const
    {
        return m_rbA.getAngularVelocity() - m_rbB.getAngularVelocity();
    }

    void set_solve_length(double h)
    {
        m_h = h;
    }

    void getInfo1(btConstraintInfo1 *info) override
    {
        btPoint2PointConstraint::getInfo1(info);
        m_rows = 0;
        if (!m_has_cone && !m_has_twist)
            return;
        gy_joint_cone_pose p = measure();
        if (m_has_cone) {
            double bound = gy_joint_limit_bound(p.swing, m_cone, true, m_h);
            m_row[m_rows++] = limit_row{gy_bt_vec(p.swing_axis), bound, true};
        }
        if (m_has_twist) {
            btVector3 axis = gy_bt_vec(p.twist_axis);
            double lo = gy_joint_limit_bound(p.twist, m_twist_min, false, m_h);
            double hi = gy_joint_limit_bound(p.twist, m_twist_max, true, m_h);
            m_row[m_rows++] = limit_row{axis, lo, false};
            m_row[m_rows++] = limit_row{axis, hi, true};
        }
        info->m_numConstraintRows += m_rows;
    }

    void getInfo2(btConstraintInfo2 *info) override
    {
        btPoint2PointConstraint::getInfo2(info);
        for (int i = 0; i < m_rows; i++)
            limit_row_write(info, 3 + i, m_row[i]);
    }

  private:
    static gy_quat rotation(const btRigidBody &b)
    {
        return gy_bt_from_quat(b.getCenterOfMassTransform().getRotation());
    }

    gy_joint_cone_frame m_frame;
    bool m_has_cone;
    double m_cone;
    bool m_has_twist;
    double m_twist_min, m_twist_max;
    double m_h = 1.0 / 60.0;
    limit_row m_row[3];
    int m_rows = 0;
};

} // namespace

static btRigidBody &joint_side(gy_driver_world *w, gy_bt_body *b)
{
    return b != nullptr ? *b->rb : w->fixed;
}

void gy_bt_anchor_place(gy_bt_body *b)
{
    b->rb->setWorldTransform(b->object->getWorldTransform());
    b->rb->setInterpolationWorldTransform(b->object->getWorldTransform());
    b->rb->updateInertiaTensor();
}

/* Bullet keeps jointed bodies apart through their btRigidBodies (addConstraint), which a static's
 * anchor stands in for: its object must refuse the pair itself, one entry per joint. */
static void static_link(gy_bt_joint *j, bool linked)
{
    if (j->b != nullptr && j->b->base.type == GY_MOTION_STATIC)
        j->b->object->setIgnoreCollisionCheck(j->a->object, linked);
}

/* A world frame at the anchor whose `from` axis is turned onto `axis`. */
static btTransform axis_frame(const btVector3 &from, const btVector3 &axis, const btVector3 &anchor)
{
    btQuaternion q = shortestArcQuat(from, axis);
    q.normalize();
    return btTransform(q, anchor);
}

static void joint_destroy(gy_driver_world *w, gy_bt_joint *j)
{
    w->world.removeConstraint(j->constraint);
    static_link(j, false);
    if (j->b != nullptr && j->b->base.type == GY_MOTION_STATIC &&
        j->b->rb->getNumConstraintRefs() == 0) {
        gy_bt_delete(w->allocator, j->b->rb);
        j->b->rb = nullptr;
    }
    j->constraint->~btTypedConstraint();
    gy_free(w->allocator, j->constraint, j->constraint_size);
    j->~gy_bt_joint();
    gy_free(w->allocator, j, sizeof *j);
}

/* A body's share of a motor's inertia; the world side is immovable. */
static gy_joint_side side_of(const btRigidBody &rb, const btVector3 &axis)
{
    gy_joint_side s = {0.0, 0.0, {0.0, 0.0, 0.0}};
    if (!(rb.getInvMass() > 0.0))
        return s;
    double inv = axis.dot(rb.getInvInertiaTensorWorld() * axis);
    s.mass = 1.0 / rb.getInvMass();
    s.axis_inertia = inv > 0.0 ? 1.0 / inv : 0.0;
    s.com = gy_bt_from_vec(rb.getCenterOfMassPosition());
    return s;
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
        return HINGE_SIGN * static_cast<btHingeConstraint *>(j->constraint)->getHingeAngle();
    btSliderConstraint *slider = static_cast<btSliderConstraint *>(j->constraint);
    slider->calculateTransforms(slider->getRigidBodyA().getCenterOfMassTransform(),
                                slider->getRigidBodyB().getCenterOfMassTransform());
    const btTransform &fa = slider->getCalculatedTransformA();
    btVector3 d = slider->getCalculatedTransformB().getOrigin() - fa.getOrigin();
    return SLIDER_SIGN * d.dot(fa.getBasis().getColumn(0));
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

/* Sets Bullet's motor on the joint: velocity v (Gyre's sign), at most `force` over h. */
static void motor_set(gy_bt_joint *j, bool on, double v, double force, double h)
{
    if (j->base.type == GY_JOINT_HINGE) {
        /* Bullet bounds the hinge motor by an impulse per solve. */
        static_cast<btHingeConstraint *>(j->constraint)
            ->enableAngularMotor(on, HINGE_SIGN * v, force * h);
    } else {
        btSliderConstraint *slider = static_cast<btSliderConstraint *>(j->constraint);
        slider->setPoweredLinMotor(on);
        slider->setTargetLinMotorVelocity(SLIDER_SIGN * v);
        slider->setMaxLinMotorForce(force);
    }
}

/* Bullet's slider limit rows act once a limit is passed: when the slider would pass one within
 * this solve, the motor becomes an unbounded one landing on it (the limit wins over the user's
 * motor); otherwise the user's motor drives. A hinge's limits are rows of its own. */
static void motor_apply(gy_bt_joint *j, double h)
{
    bool on = j->motor.mode != GY_MOTOR_OFF;
    double land;
    if (j->base.type == GY_JOINT_SLIDER && j->has_limits &&
        gy_joint_limit_landing(joint_position(j), joint_rate(j), j->limits, h, &land)) {
        motor_set(j, true, land, SIMD_INFINITY, h);
        return;
    }
    double accel = 0.0, position = on ? joint_position(j) : 0.0;
    if (j->motor.mode == GY_MOTOR_POSITION) {
        btTypedConstraint *c = j->constraint;
        btVector3 axis = j->base.type == GY_JOINT_HINGE
                             ? hinge_axis(static_cast<btHingeConstraint *>(c))
                             : slider_axis(static_cast<btSliderConstraint *>(c));
        gy_joint_side sa = side_of(c->getRigidBodyA(), axis);
        gy_joint_side sb = side_of(c->getRigidBodyB(), axis);
        gy_vec3 anchor = gy_pose_apply(gy_bt_body_pose(j->a), j->anchor_a);
        accel = gy_joint_drive_accel(j->base.type, j->motor.max_force, &sa, &sb, anchor,
                                     gy_bt_from_vec(axis));
    }
    double v =
        gy_joint_motor_velocity(&j->motor, position, accel, h, j->has_limits ? j->limits : nullptr);
    if (j->base.type == GY_JOINT_HINGE) {
        /* Bullet bounds the hinge motor by an impulse per solve. */
        static_cast<btHingeConstraint *>(j->constraint)
            ->enableAngularMotor(on, HINGE_SIGN * v, j->motor.max_force * h);
    } else {
        btSliderConstraint *slider = static_cast<btSliderConstraint *>(j->constraint);
        slider->setPoweredLinMotor(on);
        slider->setTargetLinMotorVelocity(SLIDER_SIGN * v);
        slider->setMaxLinMotorForce(j->motor.max_force);
    }
}

static size_t constraint_size(gy_joint_type t)
{
    switch (t) {
    case GY_JOINT_FIXED:
        return sizeof(btFixedConstraint);
    case GY_JOINT_BALL:
        return sizeof(ball_limit_constraint);
    case GY_JOINT_HINGE:
        return sizeof(hinge_limit_constraint);
    case GY_JOINT_SLIDER:
        return sizeof(btSliderConstraint);
    case GY_JOINT_DISTANCE:
    default:
        return sizeof(distance_constraint);
    }
}

gy_result gy_bt_joint_create(gy_driver_world *w, const gy_joint_def *def, gy_bt_body *a,
                             gy_bt_body *b, gy_bt_joint **out)
{
    btVector3 anchor = gy_bt_vec(def->anchor);
    gy_joint_type type;
    double distance;
    gy_result r = gy_adapter_joint_length(def, gy_bt_body_pose(a).position, &type, &distance);
    if (r != GY_OK)
        return r;

    const gy_allocator *al = w->allocator;
    size_t csize = constraint_size(type);
    void *jmem = gy_alloc(al, sizeof(gy_bt_joint));
    void *cmem = gy_alloc(al, csize);
    /* A static's first joint makes its anchor (mass 0, as a static btRigidBody). */
    bool needs_anchor = b != nullptr && b->base.type == GY_MOTION_STATIC && b->rb == nullptr;
    btRigidBody *made = needs_anchor ? gy_bt_new<btRigidBody>(al, 0.0, nullptr, nullptr) : nullptr;
    if (jmem == nullptr || cmem == nullptr || (needs_anchor && made == nullptr))
        r = GY_ERR_OUT_OF_MEMORY;
    if (r != GY_OK) {
        gy_free(al, jmem, sizeof(gy_bt_joint));
        gy_free(al, cmem, csize);
        gy_bt_delete(al, made);
        return r;
    }
    if (made != nullptr) {
        b->rb = made;
        made->setUserPointer(b);
        made->setActivationState(ISLAND_SLEEPING);
        gy_bt_anchor_place(b);
    }

    gy_bt_joint *j = new (jmem) gy_bt_joint();
    /* A zero-length Distance joint is built, driven and measured as a Ball. */
    gy_adapter_joint_record_init(&j->base, def, type, &a->base, b != nullptr ? &b->base : nullptr);
    j->a = a;
    j->b = b;
    j->constraint_size = csize;
    j->has_limits = def->has_limits;
    j->limits[0] = type == GY_JOINT_HINGE ? fmax(-SIMD_PI, def->limit_min) : def->limit_min;
    j->limits[1] = type == GY_JOINT_HINGE ? fmin(SIMD_PI, def->limit_max) : def->limit_max;

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
            new (cmem) ball_limit_constraint(ra, rb, ta_inv * anchor, tb_inv * anchor, def);
        break;
    case GY_JOINT_HINGE: {
        /* The hinge turns about its frames' Z axis; its angle is a's turn relative to b. */
        btTransform frame = axis_frame(btVector3(0, 0, 1), axis, anchor);
        btHingeConstraint *hinge;
        if (def->has_limits)
            hinge = new (cmem) hinge_limit_constraint(ra, rb, ta_inv * frame, tb_inv * frame,
                                                      j->limits[0], j->limits[1]);
        else
            hinge = new (cmem) btHingeConstraint(ra, rb, ta_inv * frame, tb_inv * frame, false);
        j->constraint = hinge;
        j->motor = def->motor; /* applied before every solve */
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
        j->motor = def->motor; /* applied before every solve */
        break;
    }
    case GY_JOINT_DISTANCE:
    default:
        /* a's origin (not its centre of mass) keeps the distance from the anchor. */
        {
            distance_constraint *dc = new (cmem) distance_constraint(
                ra, rb, a->motion->principal_inv.getOrigin(), tb_inv * anchor, distance);
            if (type == GY_JOINT_DISTANCE && def->has_spring)
                dc->set_spring(def->spring_frequency, def->spring_damping_ratio);
            j->constraint = dc;
            break;
        }
    }
    j->anchor_a = gy_pose_apply(gy_pose_inverse(gy_bt_body_pose(a)), def->anchor);
    j->constraint->setJointFeedback(&j->feedback);
    /* Jointed bodies do not collide with each other (as on ODE). */
    w->world.addConstraint(j->constraint, true);
    static_link(j, true);
    *out = j;
    return GY_OK;
}

void gy_bt_joint_release(gy_driver_world *w, gy_bt_joint *j)
{
    joint_destroy(w, j);
}

double gy_bt_joint_force(gy_driver_world *, gy_bt_joint *j)
{
    const btJointFeedback &fb = j->feedback;
    return fmax(fb.m_appliedForceBodyA.length(), fb.m_appliedForceBodyB.length());
}

void gy_bt_joints_before_solve(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->records->joints->count; i++) {
        uint64_t bits;
        gy_bt_joint *j =
            static_cast<gy_bt_joint *>(gy_handle_pool_at(w->records->joints, i, &bits));
        if (j == nullptr)
            continue;
        if ((j->base.type == GY_JOINT_HINGE || j->base.type == GY_JOINT_SLIDER) &&
            (j->motor.mode != GY_MOTOR_OFF || j->has_limits))
            motor_apply(j, h);
        if (j->base.type == GY_JOINT_BALL)
            static_cast<ball_limit_constraint *>(j->constraint)->set_solve_length(h);
    }
}

void gy_bt_joint_set_motor(gy_driver_world *, gy_bt_joint *j, const gy_joint_motor *m)
{
    j->motor = *m;
    /* The velocity follows at the next solve; a motor switched off is off now. */
    if (m->mode == GY_MOTOR_OFF)
        motor_apply(j, 1.0);
}

void gy_bt_joint_get_state(gy_driver_world *, gy_bt_joint *j, gy_joint_state *out)
{
    btTypedConstraint *c = j->constraint;
    switch (j->base.type) {
    case GY_JOINT_HINGE:
    case GY_JOINT_SLIDER:
        out->position = joint_position(j);
        out->velocity = joint_rate(j);
        break;
    case GY_JOINT_DISTANCE:
        static_cast<distance_constraint *>(c)->measure(&out->position, &out->velocity);
        break;
    case GY_JOINT_BALL: {
        ball_limit_constraint *ball = static_cast<ball_limit_constraint *>(c);
        gy_joint_cone_pose p = ball->measure();
        out->position = p.swing;
        out->velocity = ball->relative_spin().dot(gy_bt_vec(p.swing_axis));
        out->twist = p.twist;
        break;
    }
    default:
        break;
    }
    bool a_is_bullet_a = j->base.type != GY_JOINT_SLIDER;
    const btJointFeedback &fb = j->feedback;
    out->force = gy_bt_from_vec(a_is_bullet_a ? fb.m_appliedForceBodyA : fb.m_appliedForceBodyB);
    out->torque = gy_bt_from_vec(a_is_bullet_a ? fb.m_appliedTorqueBodyA : fb.m_appliedTorqueBodyB);
}
