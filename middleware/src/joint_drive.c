/* Joint behaviour shared by the adapters: servo, spring softness, cone and twist angles. */
#include "joint_drive.h"

#include <math.h>

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

bool gy_joint_limit_landing(double position, double rate, const double *limits, double h,
                            double *land)
{
    double next = position + rate * h;
    if (position <= limits[1] && next > limits[1]) {
        *land = (limits[1] - position) / h;
        return true;
    }
    if (position >= limits[0] && next < limits[0]) {
        *land = (limits[0] - position) / h;
        return true;
    }
    *land = 0.0;
    return false;
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
