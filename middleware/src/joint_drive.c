/* Joint behaviour shared by the adapters: motors and limits before every solve, the servo,
 * spring softness, cone and twist angles. */
#include "joint_drive.h"

#include <math.h>
#include <string.h>

#include "driver.h"
#include "gyre/math.h"

/* A servo closes its error with this time constant, in solves: short enough to arrive in a few
 * dozen steps, long enough that one solve never crosses the target. */
#define SERVO_SOLVES 4.0
/* Of the motor's deceleration, the servo plans its stop with this fraction, keeping the rest as
 * a margin for gravity, the other body and the discrete step. */
#define SERVO_BRAKE_SHARE 0.5
/* Of a limit's excess (once past its stop), the share a solve takes back: firm, as a limit
 * should be (a limb sliding round a cone leaves it at second order in its speed; at ODE's usual
 * 0.2 a hard-kicked 30° cone between two bodies lingered 2.3° outside). */
#define LIMIT_ERP 0.8

static double side_inertia(gy_joint_type type, const gy_joint_side *s, gy_vec3 anchor, gy_vec3 axis)
{
    if (s == NULL || !(s->mass > 0.0))
        return INFINITY;
    if (type == GY_JOINT_SLIDER)
        return s->mass;
    gy_vec3 r = gy_v3_sub(s->com, anchor);
    gy_vec3 perp = gy_v3_mad(r, axis, -gy_v3_dot(r, axis));
    return s->axis_inertia + s->mass * gy_v3_len_sq(perp);
}

double gy_joint_drive_accel(gy_joint_type type, double max_force, const gy_joint_side *a,
                            const gy_joint_side *b, gy_vec3 anchor, gy_vec3 axis)
{
    axis = gy_v3_normalize(axis);
    double inv =
        1.0 / side_inertia(type, a, anchor, axis) + 1.0 / side_inertia(type, b, anchor, axis);
    return max_force * inv;
}

double gy_joint_motor_velocity(const gy_joint_motor *m, double position, double accel, double h,
                               const double *limits)
{
    if (m->mode == GY_MOTOR_OFF || !(h > 0.0))
        return 0.0;
    double v = m->target;
    if (m->mode == GY_MOTOR_POSITION) {
        double e = m->target - position;
        v = fabs(e) / (SERVO_SOLVES * h);
        if (accel > 0.0 && isfinite(accel))
            v = fmin(v, sqrt(2.0 * SERVO_BRAKE_SHARE * accel * fabs(e)));
        v = e < 0.0 ? -v : v;
    }
    if (limits != NULL) {
        if (v > 0.0)
            v = fmin(v, fmax(0.0, (limits[1] - position) / h));
        else if (v < 0.0)
            v = fmax(v, fmin(0.0, (limits[0] - position) / h));
    }
    return v;
}

double gy_joint_limit_bound(double position, double stop, bool upper, double h)
{
    double gap = upper ? stop - position : position - stop;
    double rate = gap >= 0.0 ? gap / h : LIMIT_ERP * gap / h;
    return upper ? rate : -rate;
}

void gy_joint_spring_softness(double frequency, double damping_ratio, double mass, double h,
                              double *erp, double *cfm)
{
    /* The implicit step x' = x + h v', m v' = m v + h(-k x' - c v') has characteristic
     * (1 + h b + h² a) z² - (2 + h b) z + 1 = 0 (a = k/m, b = c/m). Matching its roots to
     * exp(s h), s = -ζω ± iω√(1-ζ²), fixes a and b; ODE's erp and cfm then follow from k, c. */
    double w = 2.0 * GY_PI * frequency;
    double z = damping_ratio;
    double decay = exp(-z * w * h);
    double turn = z < 1.0 ? cos(w * sqrt(1.0 - z * z) * h) : cosh(w * sqrt(z * z - 1.0) * h);
    double d = 1.0 / (decay * decay); /* 1 + h b + h² a */
    double hb = 2.0 * decay * turn * d - 2.0;
    double h2a = d - 1.0 - hb;
    double k = mass * h2a / (h * h);
    double c = mass * hb / h;
    double denom = h * k + c; /* = m (d - 1) / h > 0 */
    *erp = h * k / denom;
    *cfm = 1.0 / denom;
}

static gy_vec3 any_perpendicular(gy_vec3 n)
{
    gy_vec3 t = fabs(n.x) < 0.6 ? gy_v3(1.0, 0.0, 0.0) : gy_v3(0.0, 1.0, 0.0);
    return gy_v3_normalize(gy_v3_cross(n, t));
}

gy_joint_cone_frame gy_joint_cone_frame_make(gy_vec3 axis, gy_quat qa, gy_quat qb)
{
    gy_vec3 u = gy_v3_normalize(axis);
    gy_vec3 ref = any_perpendicular(u);
    gy_joint_cone_frame f;
    f.axis_a = gy_quat_rotate(gy_quat_conj(qa), u);
    f.ref_a = gy_quat_rotate(gy_quat_conj(qa), ref);
    f.axis_b = gy_quat_rotate(gy_quat_conj(qb), u);
    f.ref_b = gy_quat_rotate(gy_quat_conj(qb), ref);
    return f;
}

gy_joint_cone_pose gy_joint_cone_measure(const gy_joint_cone_frame *f, gy_quat qa, gy_quat qb)
{
    gy_vec3 ua = gy_v3_normalize(gy_quat_rotate(qa, f->axis_a));
    gy_vec3 ub = gy_v3_normalize(gy_quat_rotate(qb, f->axis_b));
    gy_vec3 pa = gy_quat_rotate(qa, f->ref_a);
    gy_vec3 pb = gy_quat_rotate(qb, f->ref_b);
    gy_joint_cone_pose p;
    gy_vec3 s = gy_v3_cross(ub, ua);
    double sl = gy_v3_len(s);
    p.swing = atan2(sl, gy_v3_dot(ua, ub));
    p.swing_axis = sl > 1e-12 ? gy_v3_scale(s, 1.0 / sl) : any_perpendicular(ub);
    /* Take the swing out of a's reference (rotate it by -swing about swing_axis), then measure
     * its turn from b's reference about b's axis. */
    gy_vec3 spa = gy_quat_rotate(gy_quat_axis_angle(p.swing_axis, -p.swing), pa);
    p.twist = atan2(gy_v3_dot(ub, gy_v3_cross(pb, spa)), gy_v3_dot(pb, spa));
    gy_vec3 mid = gy_v3_add(ua, ub);
    p.twist_axis = gy_v3_len(mid) > 1e-6 ? gy_v3_normalize(mid) : ua;
    return p;
}

uint32_t gy_joint_limit_row_count(const gy_adapter_joint *j)
{
    if (j->type == GY_JOINT_HINGE || j->type == GY_JOINT_SLIDER)
        return j->has_limits ? 2u : 0u;
    if (j->type == GY_JOINT_BALL)
        return (j->has_cone ? 1u : 0u) + (j->has_twist_limits ? 2u : 0u);
    return 0u;
}

static gy_pose body_pose(const gy_driver *d, gy_driver_world *w, gy_adapter_body *b)
{
    gy_body_state st;
    memset(&st, 0, sizeof st);
    d->body_get_state(w, gy_driver_body_of(b), &st);
    return st.pose;
}

void gy_joint_drive_attach(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj,
                           const gy_joint_def *def)
{
    gy_adapter_joint *j = gy_driver_joint_rec(dj);
    if (j->type == GY_JOINT_HINGE || j->type == GY_JOINT_SLIDER)
        j->anchor_a = gy_pose_apply(gy_pose_inverse(body_pose(d, w, j->a)), def->anchor);
    if (j->type == GY_JOINT_DISTANCE)
        j->anchor_b = j->b != NULL
                          ? gy_pose_apply(gy_pose_inverse(body_pose(d, w, j->b)), def->anchor)
                          : def->anchor;
    if (j->type == GY_JOINT_BALL) {
        gy_quat qa, qb;
        d->joint_rotations(w, dj, &qa, &qb);
        gy_vec3 axis = gy_v3_len(def->axis) > 1e-9 ? def->axis : gy_v3(0.0, 1.0, 0.0);
        j->cone_frame = gy_joint_cone_frame_make(axis, qa, qb);
    }
}

/* A side of a motor's inertia: a static side, or none, is immovable. */
static gy_joint_side side_of(const gy_driver *d, gy_adapter_body *b, gy_vec3 axis)
{
    gy_joint_side s = {0.0, 0.0, {0.0, 0.0, 0.0}};
    if (b == NULL || b->type != GY_MOTION_DYNAMIC)
        return s;
    gy_driver_body *db = gy_driver_body_of(b);
    const gy_driver_step *ds = d->step;
    gy_vec3 local = gy_quat_rotate(gy_quat_conj(ds->body_rotation(db)), axis);
    double inv = gy_v3_dot(local, gy_mat3_apply(ds->body_inv_inertia(db), local));
    s.mass = gy_adapter_body_motion(b)->mass;
    s.axis_inertia = inv > 0.0 ? 1.0 / inv : 0.0;
    s.com = ds->body_com(db);
    return s;
}

/* The acceleration the servo plans its stop with. */
static double servo_accel(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj)
{
    gy_adapter_joint *j = gy_driver_joint_rec(dj);
    gy_vec3 axis = d->joint_axis(w, dj);
    gy_joint_side sa = side_of(d, j->a, axis), sb = side_of(d, j->b, axis);
    gy_vec3 anchor = gy_pose_apply(body_pose(d, w, j->a), j->anchor_a);
    return gy_joint_drive_accel(j->type, j->motor.max_force, &sa, &sb, anchor, axis);
}

static void motor_drive(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj,
                        double position, double h)
{
    gy_adapter_joint *j = gy_driver_joint_rec(dj);
    double accel = j->motor.mode == GY_MOTOR_POSITION ? servo_accel(d, w, dj) : 0.0;
    double v =
        gy_joint_motor_velocity(&j->motor, position, accel, h, j->has_limits ? j->limits : NULL);
    d->joint_motor_set(w, dj, true, v, j->motor.max_force, h);
}

/* The rows of a limited hinge, slider or ball joint for the next solve; their count. */
static uint32_t limit_rows(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj,
                           double position, double h, gy_joint_limit_row *rows)
{
    gy_adapter_joint *j = gy_driver_joint_rec(dj);
    if (j->type == GY_JOINT_HINGE || j->type == GY_JOINT_SLIDER) {
        gy_vec3 axis = d->joint_axis(w, dj);
        bool linear = j->type == GY_JOINT_SLIDER;
        rows[0] = (gy_joint_limit_row){axis, gy_joint_limit_bound(position, j->limits[0], false, h),
                                       false, linear};
        rows[1] = (gy_joint_limit_row){axis, gy_joint_limit_bound(position, j->limits[1], true, h),
                                       true, linear};
        return 2;
    }
    gy_quat qa, qb;
    d->joint_rotations(w, dj, &qa, &qb);
    gy_joint_cone_pose p = gy_joint_cone_measure(&j->cone_frame, qa, qb);
    uint32_t n = 0;
    if (j->has_cone)
        rows[n++] = (gy_joint_limit_row){
            p.swing_axis, gy_joint_limit_bound(p.swing, j->cone_angle, true, h), true, false};
    if (j->has_twist_limits) {
        rows[n++] = (gy_joint_limit_row){
            p.twist_axis, gy_joint_limit_bound(p.twist, j->twist_min, false, h), false, false};
        rows[n++] = (gy_joint_limit_row){
            p.twist_axis, gy_joint_limit_bound(p.twist, j->twist_max, true, h), true, false};
    }
    return n;
}

/* The mass a joint side brings to its row: a dynamic body's, none for one the solver cannot move
 * (static, kinematic, the world). */
static double spring_side_mass(const gy_driver *d, gy_adapter_body *b)
{
    if (b == NULL || b->type != GY_MOTION_DYNAMIC)
        return 0.0;
    (void)d;
    return gy_adapter_body_motion(b)->mass;
}

/* A distance joint's spring: the softness of its row for the reduced mass of the bodies it can
 * move, so its frequency and damping hold whatever either weighs; with neither dynamic there is
 * nothing to soften (and no mass to give the formula). */
static void spring_drive(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj, double h)
{
    const gy_adapter_joint *j = gy_driver_joint_rec(dj);
    double ma = spring_side_mass(d, j->a), mb = spring_side_mass(d, j->b);
    double m = ma > 0.0 && mb > 0.0 ? ma * mb / (ma + mb) : ma + mb;
    if (!(m > 0.0))
        return;
    double erp, cfm;
    gy_joint_spring_softness(j->spring_frequency, j->spring_damping_ratio, m, h, &erp, &cfm);
    d->joint_set_spring(w, dj, erp, cfm, h);
}

void gy_joint_drive_solve(const gy_driver *d, gy_driver_world *w, const gy_handle_pool *joints,
                          double h)
{
    for (uint32_t i = 0; i < joints->count; i++) {
        uint64_t bits;
        gy_driver_joint *dj = gy_handle_pool_at(joints, i, &bits);
        if (dj == NULL)
            continue;
        gy_adapter_joint *j = gy_driver_joint_rec(dj);
        if (j->has_spring)
            spring_drive(d, w, dj, h);
        bool axial = j->type == GY_JOINT_HINGE || j->type == GY_JOINT_SLIDER;
        bool motor = axial && j->motor.mode != GY_MOTOR_OFF;
        uint32_t count = gy_joint_limit_row_count(j);
        if (!motor && count == 0)
            continue;
        double position = 0.0, rate = 0.0;
        if (axial)
            d->joint_coordinate(w, dj, &position, &rate);
        if (motor)
            motor_drive(d, w, dj, position, h);
        if (count > 0) {
            gy_joint_limit_row rows[GY_JOINT_LIMIT_ROWS_MAX];
            uint32_t n = limit_rows(d, w, dj, position, h, rows);
            d->joint_set_limit_rows(w, dj, rows, n, h);
        }
    }
}

void gy_joint_drive_set_motor(const gy_driver *d, gy_driver_world *w, gy_driver_joint *j,
                              const gy_joint_motor *m)
{
    gy_driver_joint_rec(j)->motor = *m;
    if (m->mode == GY_MOTOR_OFF)
        d->joint_motor_set(w, j, false, 0.0, m->max_force, 0.0);
}

/* A point's velocity on body `b`, or zero on the world (NULL). */
static gy_vec3 point_velocity(const gy_driver *d, gy_driver_world *w, gy_adapter_body *b,
                              gy_vec3 point)
{
    return b != NULL ? d->body_point_velocity(w, gy_driver_body_of(b), point)
                     : gy_v3(0.0, 0.0, 0.0);
}

void gy_joint_drive_state(const gy_driver *d, gy_driver_world *w, gy_driver_joint *dj,
                          gy_joint_state *out)
{
    gy_adapter_joint *j = gy_driver_joint_rec(dj);
    if (j->type == GY_JOINT_HINGE || j->type == GY_JOINT_SLIDER) {
        d->joint_coordinate(w, dj, &out->position, &out->velocity);
        return;
    }
    if (j->type == GY_JOINT_DISTANCE) {
        /* From a's origin to the anchor b carries: the length the joint keeps, and its rate. */
        gy_vec3 pa = body_pose(d, w, j->a).position;
        gy_vec3 pb = j->b != NULL ? gy_pose_apply(body_pose(d, w, j->b), j->anchor_b) : j->anchor_b;
        gy_vec3 between = gy_v3_sub(pa, pb);
        out->position = gy_v3_len(between);
        gy_vec3 v = gy_v3_sub(point_velocity(d, w, j->a, pa), point_velocity(d, w, j->b, pb));
        out->velocity = out->position > 1e-12 ? gy_v3_dot(v, between) / out->position : 0.0;
        return;
    }
    if (j->type != GY_JOINT_BALL)
        return;
    gy_quat qa, qb;
    d->joint_rotations(w, dj, &qa, &qb);
    gy_joint_cone_pose p = gy_joint_cone_measure(&j->cone_frame, qa, qb);
    gy_body_state sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    d->body_get_state(w, gy_driver_body_of(j->a), &sa);
    if (j->b != NULL)
        d->body_get_state(w, gy_driver_body_of(j->b), &sb);
    out->position = p.swing;
    out->velocity = gy_v3_dot(gy_v3_sub(sa.angular_velocity, sb.angular_velocity), p.swing_axis);
    out->twist = p.twist;
}
