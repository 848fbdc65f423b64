/* ODE adapter: joints, their constraint force, motors, springs, limits and axis locks.
 *
 * Fixed, ball, hinge and slider map onto ODE's joints of the same name. Distance uses ODE's
 * double-ball joint: one anchor at a's origin, the other at the given anchor on b (or in the
 * world); a spring softens it through the ERP and CFM the front end's joint drive (joint_drive.c)
 * gives before every solve. Hinge and slider motors are ODE's own (dParamVel/dParamFMax on the
 * joint's row), set before every solve as the front end's joint drive (joint_drive.c) decides.
 * Limits are the drive's rows, kept in every solve: a hinge's limits and a ball's cone and twist
 * limits are rows of an angular motor in user mode, a slider's are contact joints along its axis
 * (ODE's only one-sided linear row with a velocity of our choosing). Every joint carries a
 * dJointFeedback: the front end reads its force after every solve (breaks) and joint_get_state
 * reports it. Axis locks are motors with zero target velocity and unbounded force on the locked
 * world axes; the front end's step also projects away drift (step.c). */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "ode_internal.h"

void gy_ode_joint_release(gy_driver_world *w, gy_ode_joint *j)
{
    dJointDestroy(j->joint);
    if (j->limit_motor != NULL)
        dJointDestroy(j->limit_motor);
    gy_free(w->allocator, j, sizeof *j);
}

/* An unbounded motor's force or torque bound: ODE's joint motors ignore an infinite one. */
#define UNBOUNDED_FMAX 1e9

/* Error reduction of fixed joints (ODE's world value, 0.2, lets a heavy weld sag). */
#define FIXED_ERP 0.8

static gy_quat side_rotation(const gy_ode_body *b)
{
    return b != NULL ? gy_ode_body_pose(b).rotation : gy_quat_identity();
}

static bool is_hinge(const gy_ode_joint *j)
{
    return j->base.type == GY_JOINT_HINGE;
}

void gy_ode_joint_coordinate(gy_driver_world *w, gy_ode_joint *j, double *position, double *rate)
{
    (void)w;
    *position = is_hinge(j) ? dJointGetHingeAngle(j->joint) : dJointGetSliderPosition(j->joint);
    *rate = is_hinge(j) ? dJointGetHingeAngleRate(j->joint) : dJointGetSliderPositionRate(j->joint);
}

gy_vec3 gy_ode_joint_axis(gy_driver_world *w, gy_ode_joint *j)
{
    (void)w;
    dVector3 ax;
    if (is_hinge(j))
        dJointGetHingeAxis(j->joint, ax);
    else
        dJointGetSliderAxis(j->joint, ax);
    return gy_v3(ax[0], ax[1], ax[2]);
}

void gy_ode_joint_motor_set(gy_driver_world *w, gy_ode_joint *j, bool on, double velocity,
                            double max_force, double h)
{
    (void)w;
    (void)h;
    void (*set)(dJointID, int, dReal) = is_hinge(j) ? dJointSetHingeParam : dJointSetSliderParam;
    if (!on) {
        set(j->joint, dParamFMax, 0.0);
        return;
    }
    set(j->joint, dParamVel, velocity);
    set(j->joint, dParamFMax, isinf(max_force) ? UNBOUNDED_FMAX : max_force);
}

void gy_ode_joint_set_spring(gy_driver_world *w, gy_ode_joint *j, double erp, double cfm, double h)
{
    (void)w, (void)h;
    dJointSetDBallParam(j->joint, dParamERP, erp);
    dJointSetDBallParam(j->joint, dParamCFM, cfm);
}

/* One limit row of the limit motor: the joint's rate along `dir` (world, unit) kept at or above
 * `bound`, a one-sided row (force >= 0) present in every solve. ODE's limit row asks for
 * J v = -erp/h * err and exists only while err <= 0 (err: the angle the motor is handed minus its
 * low stop); the row wanted is that row with the stop at 0, err = -|bound| h and erp = +-1. */
static void limit_row(dJointID m, int k, gy_vec3 dir, double bound, double h)
{
    int group = dParamGroup * k;
    dJointSetAMotorAxis(m, k, 0, dir.x, dir.y, dir.z);
    dJointSetAMotorAngle(m, k, -fabs(bound) * h);
    dJointSetAMotorParam(m, dParamStopERP + group, bound >= 0.0 ? 1.0 : -1.0);
}

/* One linear limit row: a contact joint's normal row, J v = n · (v_a - v_b at a's centre) kept
 * at or above `bound` (its motionN; depth 0 adds no push-out, mu 0 no friction rows). Acting at
 * a's centre, its force puts no torque couple on the pair (ODE's own slider row takes the same
 * care). It is rigid, as Bullet's rows are: softened by the world's CFM, a slider hitting its
 * stop at 10 m/s landed 5 um past it, and the row taking that back left it creeping away at
 * 0.3 mm/s. ODE caps a positive bound at the world's largest correcting velocity (5 m/s): a
 * slider more than 10 cm past its stop (at 60 Hz) is pulled back no faster. */
static void linear_limit_row(gy_driver_world *w, gy_ode_joint *j, int k, gy_vec3 dir, double bound)
{
    dContact c;
    memset(&c, 0, sizeof c);
    c.surface.mode = dContactMotionN | dContactSoftCFM;
    c.surface.motionN = bound;
    c.surface.soft_cfm = 0.0;
    const dReal *at = dBodyGetPosition(gy_ode_dbody(j->a));
    for (int i = 0; i < 3; i++)
        c.geom.pos[i] = at[i];
    c.geom.normal[0] = dir.x, c.geom.normal[1] = dir.y, c.geom.normal[2] = dir.z;
    dJointID row = dJointCreateContact(w->world, w->contact_group, &c);
    dJointAttach(row, gy_ode_dbody(j->a), j->b != NULL ? gy_ode_dbody(j->b) : NULL);
    dJointSetFeedback(row, &j->limit_feedback[k]);
}

/* A row kept at or below its bound is the lower-bound row of the reversed axis. A contact joint
 * cannot be changed once made: a slider's rows are made anew for every solve, with the solve's
 * contacts (emptied after it, ode_step.c). */
void gy_ode_joint_set_limit_rows(gy_driver_world *w, gy_ode_joint *j,
                                 const gy_joint_limit_row *rows, uint32_t n, double h)
{
    for (uint32_t k = 0; k < n; k++) {
        const gy_joint_limit_row *r = &rows[k];
        gy_vec3 dir = r->upper ? gy_v3_neg(r->axis) : r->axis;
        double bound = r->upper ? -r->bound : r->bound;
        if (r->linear)
            linear_limit_row(w, j, (int)k, dir, bound);
        else
            limit_row(j->limit_motor, (int)k, dir, bound, h);
    }
}

void gy_ode_joint_rotations(gy_driver_world *w, gy_ode_joint *j, gy_quat *qa, gy_quat *qb)
{
    (void)w;
    *qa = side_rotation(j->a);
    *qb = side_rotation(j->b);
}

/* An angular motor in user mode holding `rows` limit rows (set before every solve). */
static dJointID limit_motor_create(gy_driver_world *w, gy_ode_joint *j, int rows)
{
    dJointID m = dJointCreateAMotor(w->world, NULL);
    dJointAttach(m, gy_ode_dbody(j->a), j->b != NULL ? gy_ode_dbody(j->b) : NULL);
    dJointSetAMotorMode(m, dAMotorUser);
    dJointSetFeedback(m, &j->limit_feedback[0]);
    dJointSetAMotorNumAxes(m, rows);
    for (int k = 0; k < rows; k++) {
        dJointSetAMotorParam(m, dParamLoStop + dParamGroup * k, 0.0);
        dJointSetAMotorParam(m, dParamHiStop + dParamGroup * k, dInfinity);
    }
    return m;
}

static void drive_setup(gy_driver_world *w, gy_ode_joint *j)
{
    uint32_t rows = gy_joint_limit_row_count(&j->base);
    if (rows > 0 && j->base.type != GY_JOINT_SLIDER) /* a slider's are made for every solve */
        j->limit_motor = limit_motor_create(w, j, (int)rows);
}

/* The front end's joint drive (joint_drive.c): motors, limit rows and springs. */
gy_result gy_ode_joint_create(gy_driver_world *w, const gy_joint_def *def, gy_ode_body *a,
                              gy_ode_body *b, gy_ode_joint **out)
{
    gy_ode_joint *j = gy_alloc_zeroed(w->allocator, sizeof *j);
    if (j == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_adapter_joint_record_init(&j->base, def, &a->base, b != NULL ? &b->base : NULL);
    j->a = a;
    j->b = b;
    j->distance = def->distance;

    dBodyID ba = gy_ode_dbody(a);
    dBodyID bb = b != NULL ? gy_ode_dbody(b) : NULL; /* a static b is the world */
    gy_vec3 axis = gy_v3_normalize(def->axis);
    gy_vec3 p = def->anchor;
    switch (def->type) {
    case GY_JOINT_FIXED:
        j->joint = dJointCreateFixed(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetFixed(j->joint);
        /* Gravity pulls a welded body g·h² out of place each step; the weld settles where its
         * correction, ERP of the error per step, gives that back: at the world's 0.2 (and 10
         * iterations) an 8 t cantilevered box sagged 6.5 mm, at 0.8 it holds within 1.8 mm. */
        dJointSetFixedParam(j->joint, dParamERP, FIXED_ERP);
        break;
    case GY_JOINT_BALL:
        j->joint = dJointCreateBall(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetBallAnchor(j->joint, p.x, p.y, p.z);
        break;
    case GY_JOINT_HINGE:
        j->joint = dJointCreateHinge(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetHingeAnchor(j->joint, p.x, p.y, p.z);
        dJointSetHingeAxis(j->joint, axis.x, axis.y, axis.z);
        break; /* its limits are rows of its limit motor */
    case GY_JOINT_SLIDER:
        j->joint = dJointCreateSlider(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetSliderAxis(j->joint, axis.x, axis.y, axis.z);
        break; /* its limits are rows made for every solve */
    case GY_JOINT_DISTANCE:
    default: {
        gy_vec3 a_origin = gy_ode_body_pose(a).position;
        j->joint = dJointCreateDBall(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetDBallAnchor1(j->joint, a_origin.x, a_origin.y, a_origin.z);
        dJointSetDBallAnchor2(j->joint, p.x, p.y, p.z);
        dJointSetDBallDistance(j->joint, def->distance);
        break;
    }
    }
    dJointSetData(j->joint, j);
    dJointSetFeedback(j->joint, &j->feedback);
    drive_setup(w, j);
    *out = j;
    return GY_OK;
}

double gy_ode_joint_force(gy_driver_world *w, gy_ode_joint *j)
{
    (void)w;
    /* f2 stays zero for a joint to the world (the record starts zeroed). A slider's limit rows
     * are part of its force, as its own stop row was and as Bullet's rows in the constraint are
     * (an angular limit motor's rows carry no force). */
    gy_vec3 fa = gy_ode_vec(j->feedback.f1), fb = gy_ode_vec(j->feedback.f2);
    for (int k = 0; k < 2; k++) {
        fa = gy_v3_add(fa, gy_ode_vec(j->limit_feedback[k].f1));
        fb = gy_v3_add(fb, gy_ode_vec(j->limit_feedback[k].f2));
    }
    return fmax(gy_v3_len(fa), gy_v3_len(fb));
}

/* A motor holding a dynamic body's locked world axes (an LMotor, or an AMotor in user mode) at
 * zero velocity with unbounded force; NULL when none is locked. */
static dJointID lock_motor(gy_driver_world *w, gy_ode_body *b, const bool locked[3], bool angular)
{
    static const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const int vel[3] = {dParamVel, dParamVel2, dParamVel3};
    static const int fmax[3] = {dParamFMax, dParamFMax2, dParamFMax3};
    int count = locked[0] + locked[1] + locked[2];
    if (count == 0)
        return NULL;
    dJointID m = angular ? dJointCreateAMotor(w->world, NULL) : dJointCreateLMotor(w->world, NULL);
    dJointAttach(m, b->body, NULL);
    if (angular)
        dJointSetAMotorMode(m, dAMotorUser);
    (angular ? dJointSetAMotorNumAxes : dJointSetLMotorNumAxes)(m, count);
    void (*axis)(dJointID, int, int, dReal, dReal, dReal) =
        angular ? dJointSetAMotorAxis : dJointSetLMotorAxis;
    void (*param)(dJointID, int, dReal) = angular ? dJointSetAMotorParam : dJointSetLMotorParam;
    for (int k = 0, n = 0; k < 3; k++) {
        if (!locked[k])
            continue;
        axis(m, n, 0, axes[k][0], axes[k][1], axes[k][2]);
        param(m, vel[n], 0.0);
        param(m, fmax[n], dInfinity);
        n++;
    }
    return m;
}

void gy_ode_locks_build(gy_driver_world *w, gy_ode_body *b)
{
    b->lock_lmotor = lock_motor(w, b, b->motion.lock_linear, false);
    b->lock_amotor = lock_motor(w, b, b->motion.lock_angular, true);
}

void gy_ode_joint_get_state(gy_driver_world *w, gy_ode_joint *j, gy_joint_state *out)
{
    (void)w;
    out->force = gy_ode_vec(j->feedback.f1);
    out->torque = gy_ode_vec(j->feedback.t1);
    /* The limit rows act between the same bodies: part of what the joint applies. */
    for (int k = 0; k < 2; k++) {
        out->force = gy_v3_add(out->force, gy_ode_vec(j->limit_feedback[k].f1));
        out->torque = gy_v3_add(out->torque, gy_ode_vec(j->limit_feedback[k].t1));
    }
}
