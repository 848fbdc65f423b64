/* ODE adapter: joints, joint breaking and axis locks.
 *
 * Fixed, ball, hinge and slider map onto ODE's joints of the same name (limits through
 * dParamLoStop/HiStop). Distance uses ODE's double-ball joint: one anchor at a's origin, the other
 * at the given anchor on b (or in the world). Breakable joints carry a dJointFeedback that the
 * step reads after every solve. Axis locks are motors with zero target velocity and unbounded
 * force on the locked world axes; the step also projects away drift (ode_step.c). */
#include <math.h>

#include "gyre/math.h"
#include "ode_internal.h"

static void joint_destroy(gy_backend_world *w, gy_ode_joint *j)
{
    dJointDestroy(j->joint);
    j->a->joint_count--;
    gy_ode_body_wake(j->a);
    if (j->b != NULL) {
        j->b->joint_count--;
        gy_ode_body_wake(j->b);
    }
    if (j->breakable_index != UINT32_MAX) {
        gy_ode_joint *last = w->breakable_list[--w->breakable_count];
        w->breakable_list[j->breakable_index] = last;
        last->breakable_index = j->breakable_index;
    }
    gy_handle_pool_release(&w->joints, j->id.bits);
    gy_free(w->allocator, j, sizeof *j);
}

static double clamp_angle(double a)
{
    return fmax(-GY_PI, fmin(GY_PI, a));
}

gy_result gy_ode_joint_create(gy_backend_world *w, const gy_joint_def *def, gy_joint_id *out)
{
    void *pa, *pb;
    gy_result r = gy_adapter_joint_begin(w != NULL, w != NULL && gy_ode_thread_ok(w),
                                         w != NULL ? &w->bodies : NULL, def, out, &pa, &pb);
    if (r != GY_OK)
        return r;
    gy_ode_body *a = pa, *b = pb;
    if (a->type == GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;

    /* ODE's double ball has no direction at zero length (a zero length is a ball joint). */
    gy_vec3 a_origin = gy_ode_body_pose(a).position;
    gy_joint_type type;
    double distance;
    r = gy_adapter_joint_length(def, a_origin, &type, &distance);
    if (r != GY_OK)
        return r;

    gy_ode_joint *j = gy_alloc_zeroed(w->allocator, sizeof *j);
    if (j == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    uint64_t h;
    r = gy_handle_pool_acquire(&w->joints, j, &h);
    if (r != GY_OK) {
        gy_free(w->allocator, j, sizeof *j);
        return r;
    }
    if (def->breakable) {
        r = gy_array_reserve(w->allocator, (void **)&w->breakable_list, &w->breakable_capacity,
                             w->breakable_count + 1u, sizeof *w->breakable_list);
        if (r != GY_OK) {
            gy_handle_pool_release(&w->joints, h);
            gy_free(w->allocator, j, sizeof *j);
            return r;
        }
    }
    j->id.bits = h;
    j->type = def->type;
    j->a = a;
    j->b = b;
    j->breakable = def->breakable;
    j->break_force = def->break_force;
    j->distance = distance;
    j->user_data = def->user_data;
    j->breakable_index = UINT32_MAX;

    dBodyID ba = a->body;
    dBodyID bb = b != NULL ? b->body : NULL; /* a static b is the world */
    gy_vec3 axis = gy_v3_normalize(def->axis);
    gy_vec3 p = def->anchor;
    switch (type) {
    case GY_JOINT_FIXED:
        j->joint = dJointCreateFixed(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetFixed(j->joint);
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
        if (def->has_limits) {
            dJointSetHingeParam(j->joint, dParamLoStop, clamp_angle(def->limit_min));
            dJointSetHingeParam(j->joint, dParamHiStop, clamp_angle(def->limit_max));
        }
        break;
    case GY_JOINT_SLIDER:
        j->joint = dJointCreateSlider(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetSliderAxis(j->joint, axis.x, axis.y, axis.z);
        if (def->has_limits) {
            dJointSetSliderParam(j->joint, dParamLoStop, def->limit_min);
            dJointSetSliderParam(j->joint, dParamHiStop, def->limit_max);
        }
        break;
    case GY_JOINT_DISTANCE:
    default:
        j->joint = dJointCreateDBall(w->world, NULL);
        dJointAttach(j->joint, ba, bb);
        dJointSetDBallAnchor1(j->joint, a_origin.x, a_origin.y, a_origin.z);
        dJointSetDBallAnchor2(j->joint, p.x, p.y, p.z);
        dJointSetDBallDistance(j->joint, distance);
        break;
    }
    dJointSetData(j->joint, j);
    if (def->breakable) {
        dJointSetFeedback(j->joint, &j->feedback);
        j->breakable_index = w->breakable_count;
        w->breakable_list[w->breakable_count++] = j;
    }
    a->joint_count++;
    gy_ode_body_wake(a);
    if (b != NULL) {
        b->joint_count++;
        gy_ode_body_wake(b);
    }
    *out = j->id;
    return GY_OK;
}

gy_result gy_ode_joint_release(gy_backend_world *w, gy_joint_id id)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_ode_thread_ok(w))
        return GY_ERR_WRONG_THREAD;
    gy_ode_joint *j = gy_handle_pool_get(&w->joints, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    joint_destroy(w, j);
    return GY_OK;
}

void gy_ode_joint_release_for_body(gy_backend_world *w, gy_ode_body *b)
{
    for (uint32_t i = 0; i < w->joints.count && b->joint_count > 0; i++) {
        uint64_t h;
        gy_ode_joint *j = gy_handle_pool_at(&w->joints, i, &h);
        if (j != NULL && (j->a == b || j->b == b))
            joint_destroy(w, j);
    }
}

void gy_ode_joint_release_all(gy_backend_world *w)
{
    for (uint32_t i = 0; i < w->joints.count; i++) {
        uint64_t h;
        gy_ode_joint *j = gy_handle_pool_at(&w->joints, i, &h);
        if (j != NULL)
            joint_destroy(w, j);
    }
}

static double vlen(const dReal *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

gy_result gy_ode_joint_check_breaks(gy_backend_world *w)
{
    for (uint32_t i = w->breakable_count; i-- > 0;) {
        gy_ode_joint *j = w->breakable_list[i];
        /* f2 stays zero for a joint to the world (the record starts zeroed). */
        double f = fmax(vlen(j->feedback.f1), vlen(j->feedback.f2));
        if (!(f > j->break_force))
            continue;
        gy_result r = gy_adapter_broken_push(w->allocator, &w->broken, j->id, j->user_data);
        if (r != GY_OK)
            return r; /* the joint holds this step; it is checked again after the next solve */
        joint_destroy(w, j);
    }
    return GY_OK;
}

static const int motor_vel[3] = {dParamVel, dParamVel2, dParamVel3};
static const int motor_fmax[3] = {dParamFMax, dParamFMax2, dParamFMax3};

void gy_ode_locks_build(gy_backend_world *w, gy_ode_body *b)
{
    static const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (b->lock_lmotor != NULL) {
        dJointDestroy(b->lock_lmotor);
        b->lock_lmotor = NULL;
    }
    if (b->lock_amotor != NULL) {
        dJointDestroy(b->lock_amotor);
        b->lock_amotor = NULL;
    }
    if (b->body == NULL || b->type != GY_MOTION_DYNAMIC)
        return;
    int nl = 0, na = 0;
    for (int k = 0; k < 3; k++) {
        nl += b->lock_linear[k];
        na += b->lock_angular[k];
    }
    if (nl > 0) {
        dJointID m = dJointCreateLMotor(w->world, NULL);
        dJointAttach(m, b->body, NULL);
        dJointSetLMotorNumAxes(m, nl);
        for (int k = 0, n = 0; k < 3; k++) {
            if (!b->lock_linear[k])
                continue;
            dJointSetLMotorAxis(m, n, 0, axes[k][0], axes[k][1], axes[k][2]);
            dJointSetLMotorParam(m, motor_vel[n], 0.0);
            dJointSetLMotorParam(m, motor_fmax[n], dInfinity);
            n++;
        }
        b->lock_lmotor = m;
    }
    if (na > 0) {
        dJointID m = dJointCreateAMotor(w->world, NULL);
        dJointAttach(m, b->body, NULL);
        dJointSetAMotorMode(m, dAMotorUser);
        dJointSetAMotorNumAxes(m, na);
        for (int k = 0, n = 0; k < 3; k++) {
            if (!b->lock_angular[k])
                continue;
            dJointSetAMotorAxis(m, n, 0, axes[k][0], axes[k][1], axes[k][2]);
            dJointSetAMotorParam(m, motor_vel[n], 0.0);
            dJointSetAMotorParam(m, motor_fmax[n], dInfinity);
            n++;
        }
        b->lock_amotor = m;
    }
}
