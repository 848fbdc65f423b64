/* The middleware contract for joint motors, springs and ball limits, checked against one adapter
 * named on the command line (argv[1]; an optional argv[2] is a cmocka test-name filter), through
 * the public headers only, so every adapter runs this file unchanged.
 *
 * Each check compares with the analytic answer at dt = 1/60 s and states its tolerance next to
 * the assert. Every test gets a fresh world whose allocator counts blocks; the teardown fails when
 * world_destroy leaves any behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "gyre/backend/backend.h"
#include "gyre/math.h"

#define DT  (1.0 / 60.0)
#define DEG (GY_PI / 180.0)

#include "contract_fixture.h"

/* A body `bd` with one box collider of full size `size`. */
static gy_body_id create_box(fixture *fx, const gy_body_def *bd, gy_vec3 size)
{
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_BOX;
    cd.shape.box_size = size;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, bd, &cd, 1, &id, NULL), GY_OK);
    return id;
}

/* A dynamic box of `mass` kg and full size `size` at `p`, undamped and never asleep. */
static gy_body_id box_body(fixture *fx, gy_vec3 p, gy_vec3 size, double mass)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_DYNAMIC;
    bd.pose.position = p;
    bd.mass = mass;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    return create_box(fx, &bd, size);
}

static gy_body_id capsule_body(fixture *fx, gy_vec3 p, double radius, double height, double mass)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_DYNAMIC;
    bd.pose.position = p;
    bd.mass = mass;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_CAPSULE;
    cd.shape.radius = radius;
    cd.shape.height = height;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &cd, 1, &id, NULL), GY_OK);
    return id;
}

static gy_joint_id create_joint(fixture *fx, const gy_joint_def *jd)
{
    gy_joint_id id = {0};
    assert_result(fx->be->joint_create(fx->w, jd, &id), GY_OK);
    assert_true(id.bits != 0);
    return id;
}

static gy_joint_def hinge_z(gy_body_id a, gy_vec3 anchor)
{
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_HINGE;
    jd.a = a;
    jd.anchor = anchor;
    jd.axis = gy_v3(0, 0, 1);
    return jd;
}

static gy_joint_def slider_x(gy_body_id a, gy_vec3 anchor)
{
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_SLIDER;
    jd.a = a;
    jd.anchor = anchor;
    jd.axis = gy_v3(1, 0, 0);
    return jd;
}

static gy_joint_motor motor(gy_motor_mode mode, double target, double max_force)
{
    gy_joint_motor m = {mode, target, max_force};
    return m;
}

static void step(fixture *fx)
{
    assert_result(fx->be->step(fx->w, DT), GY_OK);
}

static gy_joint_state joint_state(fixture *fx, gy_joint_id j)
{
    gy_joint_state s;
    assert_result(fx->be->joint_get_state(fx->w, j, &s), GY_OK);
    return s;
}

static gy_body_state body_state(fixture *fx, gy_body_id id)
{
    gy_body_state s;
    assert_result(fx->be->body_get_state(fx->w, id, &s), GY_OK);
    return s;
}

/* A rotation's turn about a unit axis (its twist), in (-pi, pi]. */
static double twist_about(gy_quat q, gy_vec3 axis)
{
    double p = q.x * axis.x + q.y * axis.y + q.z * axis.z;
    double a = 2.0 * atan2(p, q.w);
    return a > GY_PI ? a - 2.0 * GY_PI : (a < -GY_PI ? a + 2.0 * GY_PI : a);
}

static void no_gravity(fixture *fx)
{
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
}

/* ---- motors ------------------------------------------------------------------------------------
 */

static void test_joints_velocity_motor_with_ample_force_reaches_target(void **state)
{
    fixture *fx = *state;
    /* A hinge through a 1 kg cube's centre (gravity exerts no torque) driven at +2 rad/s, and a
     * cube on a slider along X driven at -1.5 m/s, both with 1000 N·m / N to spare. */
    gy_body_id wheel = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = hinge_z(wheel, gy_v3(0, 5, 0));
    jd.motor = motor(GY_MOTOR_VELOCITY, 2.0, 1000.0);
    gy_joint_id hinge = create_joint(fx, &jd);
    gy_body_id cart = box_body(fx, gy_v3(5, 5, 0), gy_v3(1, 1, 1), 1.0);
    jd = slider_x(cart, gy_v3(5, 5, 0));
    jd.motor = motor(GY_MOTOR_VELOCITY, -1.5, 1000.0);
    gy_joint_id slider = create_joint(fx, &jd);
    for (int i = 0; i < 30; i++)
        step(fx);
    /* Within 1 % of the target, measured by the joint and by the bodies (right-hand rule about
     * +Z: the cube spins at +2 rad/s about Z; the cart moves at -1.5 m/s along X). */
    assert_near(joint_state(fx, hinge).velocity, 2.0, 0.02);
    assert_near(body_state(fx, wheel).angular_velocity.z, 2.0, 0.02);
    assert_near(joint_state(fx, slider).velocity, -1.5, 0.015);
    assert_near(body_state(fx, cart).linear_velocity.x, -1.5, 0.015);
    /* The joint angle follows the body: 30 steps at 2 rad/s from rest, within 0.05 rad. */
    double angle = twist_about(body_state(fx, wheel).pose.rotation, gy_v3(0, 0, 1));
    assert_near(joint_state(fx, hinge).position, angle, 1e-3);
    assert_near(joint_state(fx, slider).position, body_state(fx, cart).pose.position.x - 5.0, 1e-3);
    assert_near(angle, 2.0 * 30 * DT, 0.05);
}

static void test_joints_weak_motor_accelerates_at_most_force_over_inertia(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    /* A 1 kg cube of side 1 has I = 1/6 kg·m² about its centre: 0.5 N·m gives 3 rad/s². A 2 kg
     * cube on a slider pushed by 4 N accelerates at 2 m/s². Both targets are far away, so the
     * motors stay short of them and apply their whole force. */
    const double I = 1.0 / 6.0, torque = 0.5, m = 2.0, force = 4.0;
    gy_body_id wheel = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = hinge_z(wheel, gy_v3(0, 5, 0));
    jd.motor = motor(GY_MOTOR_VELOCITY, 50.0, torque);
    gy_joint_id hinge = create_joint(fx, &jd);
    gy_body_id cart = box_body(fx, gy_v3(5, 5, 0), gy_v3(1, 1, 1), m);
    jd = slider_x(cart, gy_v3(5, 5, 0));
    jd.motor = motor(GY_MOTOR_VELOCITY, 50.0, force);
    gy_joint_id slider = create_joint(fx, &jd);
    double prev_w = 0.0, prev_v = 0.0;
    for (int i = 1; i <= 60; i++) {
        step(fx);
        double w = body_state(fx, wheel).angular_velocity.z;
        double v = body_state(fx, cart).linear_velocity.x;
        /* Every step: alpha <= max_force / I (+1 %), and no less than 95 % of it. */
        assert_between((w - prev_w) / DT, 0.95 * torque / I, 1.01 * torque / I);
        assert_between((v - prev_v) / DT, 0.95 * force / m, 1.01 * force / m);
        prev_w = w;
        prev_v = v;
    }
    assert_near(joint_state(fx, hinge).velocity, torque / I * 1.0, 0.05 * torque / I);
    assert_near(joint_state(fx, slider).velocity, force / m * 1.0, 0.05 * force / m);
}

/* Runs a servo to `target` and checks it: the largest excursion past the target stays within 5 %
 * of the move, and after `seconds` it rests within `tol` of it. */
static void run_servo(fixture *fx, gy_joint_id j, double target, double seconds, double tol)
{
    double start = joint_state(fx, j).position;
    double move = target - start, worst = 0.0;
    for (int i = 0; i < (int)(seconds / DT); i++) {
        step(fx);
        double past = (joint_state(fx, j).position - target) * (move > 0.0 ? 1.0 : -1.0);
        worst = fmax(worst, past);
    }
    gy_joint_state s = joint_state(fx, j);
    print_message("servo to %.4f: overshoot %.5f (%.2f %% of the move), final %.5f\n", target,
                  worst, 100.0 * worst / fabs(move), s.position);
    assert_true(worst <= 0.05 * fabs(move));
    assert_near(s.position, target, tol);
    assert_near(s.velocity, 0.0, 0.01);
}

static void test_joints_servo_settles_on_target_within_five_percent(void **state)
{
    fixture *fx = *state;
    /* A 1 m × 2 m × 0.1 m door of 20 kg hinged about +Y at one edge opens by 90°, first with
     * ample torque, then back to 0 with a weak motor (2 N·m against I = 20·(1/12 + 1/4) kg·m²)
     * that must brake early; a 5 kg lift on a vertical slider servos up 0.5 m against gravity
     * with 200 N. */
    gy_body_id door = box_body(fx, gy_v3(0.5, 1.0, 0), gy_v3(1, 2, 0.1), 20.0);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_HINGE;
    jd.a = door;
    jd.anchor = gy_v3(0, 1, 0);
    jd.axis = gy_v3(0, 1, 0);
    jd.motor = motor(GY_MOTOR_POSITION, 90.0 * DEG, 200.0);
    gy_joint_id hinge = create_joint(fx, &jd);
    run_servo(fx, hinge, 90.0 * DEG, 3.0, 0.01);
    gy_joint_motor weak = motor(GY_MOTOR_POSITION, 0.0, 2.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &weak), GY_OK);
    run_servo(fx, hinge, 0.0, 8.0, 0.01);

    gy_body_id lift = box_body(fx, gy_v3(5, 1, 0), gy_v3(1, 0.2, 1), 5.0);
    jd = gy_default_joint_def();
    jd.type = GY_JOINT_SLIDER;
    jd.a = lift;
    jd.anchor = gy_v3(5, 1, 0);
    jd.axis = gy_v3(0, 1, 0);
    jd.motor = motor(GY_MOTOR_POSITION, 0.5, 200.0);
    gy_joint_id slider = create_joint(fx, &jd);
    run_servo(fx, slider, 0.5, 3.0, 0.005);
    assert_near(body_state(fx, lift).pose.position.y, 1.5, 0.005);
}

/* A hinge limited to [-0.5, 0.5] rad and a slider limited to [0, 0.3] m, driven by these motors
 * towards and past their upper limits: each stops at its upper limit and stays there. Returns
 * the slider. */
static gy_joint_id drive_into_upper_limits(fixture *fx, gy_joint_motor hinge_motor,
                                           gy_joint_motor slider_motor)
{
    gy_body_id wheel = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = hinge_z(wheel, gy_v3(0, 5, 0));
    jd.has_limits = true;
    jd.limit_min = -0.5;
    jd.limit_max = 0.5;
    jd.motor = hinge_motor;
    gy_joint_id hinge = create_joint(fx, &jd);
    gy_body_id cart = box_body(fx, gy_v3(5, 5, 0), gy_v3(1, 1, 1), 1.0);
    jd = slider_x(cart, gy_v3(5, 5, 0));
    jd.has_limits = true;
    jd.limit_min = 0.0;
    jd.limit_max = 0.3;
    jd.motor = slider_motor;
    gy_joint_id slider = create_joint(fx, &jd);
    double most_angle = 0.0, most_offset = 0.0;
    for (int i = 0; i < 120; i++) {
        step(fx);
        most_angle =
            fmax(most_angle, twist_about(body_state(fx, wheel).pose.rotation, gy_v3(0, 0, 1)));
        most_offset = fmax(most_offset, body_state(fx, cart).pose.position.x - 5.0);
    }
    /* Past the limit by at most 2° (hinge) or 1 cm (slider) at any step; at rest on it within
     * 0.01 rad / 5 mm. */
    assert_true(most_angle <= 0.5 + 2.0 * DEG);
    assert_true(most_offset <= 0.3 + 0.01);
    assert_near(joint_state(fx, hinge).position, 0.5, 0.01);
    assert_near(joint_state(fx, hinge).velocity, 0.0, 0.02);
    assert_near(joint_state(fx, slider).position, 0.3, 0.005);
    assert_near(joint_state(fx, slider).velocity, 0.0, 0.02);
    return slider;
}

static void test_joints_motor_against_limit_stops_at_limit(void **state)
{
    /* Velocity motors: +3 rad/s on the hinge, +2 m/s on the slider. */
    drive_into_upper_limits(*state, motor(GY_MOTOR_VELOCITY, 3.0, 100.0),
                            motor(GY_MOTOR_VELOCITY, 2.0, 100.0));
}

static void test_joints_servo_past_limit_rests_on_limit(void **state)
{
    fixture *fx = *state;
    /* Servos aimed beyond the limits (1.5 rad, 1 m) with ample force: the limit wins over the
     * motor. The slider servoed back to a target inside its range then leaves its limit and
     * settles there. */
    gy_joint_id slider = drive_into_upper_limits(fx, motor(GY_MOTOR_POSITION, 1.5, 100.0),
                                                 motor(GY_MOTOR_POSITION, 1.0, 100.0));
    gy_joint_motor back = motor(GY_MOTOR_POSITION, 0.1, 100.0);
    assert_result(fx->be->joint_set_motor(fx->w, slider, &back), GY_OK);
    for (int i = 0; i < 120; i++)
        step(fx);
    assert_near(joint_state(fx, slider).position, 0.1, 0.005);
    assert_near(joint_state(fx, slider).velocity, 0.0, 0.02);
}

static void test_joints_fast_swing_into_limits_stops_on_them(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    /* A cube spun at 25 rad/s (0.42 rad per step) on a hinge limited to [-0.5, 0.5] rad, and one
     * on a hinge to another (free) cube, limited to [0, 2.4] rad and starting on its lower limit,
     * spun back into it: neither passes a limit by more than 2°. */
    gy_body_id wheel = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = hinge_z(wheel, gy_v3(0, 5, 0));
    jd.has_limits = true;
    jd.limit_min = -0.5;
    jd.limit_max = 0.5;
    gy_joint_id hinge = create_joint(fx, &jd);
    gy_body_id upper = box_body(fx, gy_v3(5, 5, 0), gy_v3(0.2, 1, 0.2), 2.0);
    gy_body_id lower = box_body(fx, gy_v3(5, 4, 0), gy_v3(0.2, 1, 0.2), 1.0);
    jd = hinge_z(lower, gy_v3(5, 4.5, 0));
    jd.b = upper;
    jd.has_limits = true;
    jd.limit_min = 0.0;
    jd.limit_max = 2.4;
    gy_joint_id elbow = create_joint(fx, &jd);
    assert_result(fx->be->body_set_angular_velocity(fx->w, wheel, gy_v3(0, 0, 25)), GY_OK);
    assert_result(fx->be->body_set_angular_velocity(fx->w, lower, gy_v3(0, 0, -25)), GY_OK);
    double most = 0.0, least = 0.0;
    for (int i = 0; i < 60; i++) {
        step(fx);
        most = fmax(most, joint_state(fx, hinge).position);
        least = fmin(least, joint_state(fx, elbow).position);
    }
    print_message("past the limits: %.3f deg, %.3f deg\n", (most - 0.5) / DEG, -least / DEG);
    assert_true(most <= 0.5 + 2.0 * DEG);
    assert_true(least >= -2.0 * DEG);
}

/* Two cubes on sliders along X limited to [-0.2, 0.42] m, at 10 m/s towards +X (a sixth of a
 * metre a step): one set moving and free, one driven by a 10 m/s velocity motor with 1000 N to
 * spare. Without gravity their path is known exactly: x = 10 t until the step that would carry
 * them past 0.42 m, which ends on the stop; then at rest on it. */
static void test_joints_slider_hitting_its_limit_fast_stops_on_it(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    const double speed = 10.0, stop = 0.42;
    gy_body_id cube[2];
    gy_joint_id slider[2];
    for (int k = 0; k < 2; k++) {
        double y = 5.0 + 3.0 * k;
        cube[k] = box_body(fx, gy_v3(0, y, 0), gy_v3(1, 1, 1), 1.0);
        gy_joint_def jd = slider_x(cube[k], gy_v3(0, y, 0));
        jd.has_limits = true;
        jd.limit_min = -0.2;
        jd.limit_max = stop;
        if (k == 1)
            jd.motor = motor(GY_MOTOR_VELOCITY, speed, 1000.0);
        slider[k] = create_joint(fx, &jd);
    }
    assert_result(fx->be->body_set_linear_velocity(fx->w, cube[0], gy_v3(speed, 0, 0)), GY_OK);
    assert_result(fx->be->body_set_linear_velocity(fx->w, cube[1], gy_v3(speed, 0, 0)), GY_OK);
    /* The first step whose free motion would end past the stop (0.5 m after 3 steps). */
    const int arrive = (int)ceil(stop / (speed * DT)) - 1;
    double settled[2] = {0.0, 0.0};
    for (int i = 0; i < 150; i++) {
        step(fx);
        for (int k = 0; k < 2; k++) {
            gy_body_state s = body_state(fx, cube[k]);
            gy_joint_state js = joint_state(fx, slider[k]);
            if (i < arrive) {
                /* Unhindered before the stop: no slowing down ahead of it (1e-6 m, m/s). */
                assert_near(s.pose.position.x, speed * DT * (i + 1), 1e-6);
                assert_near(s.linear_velocity.x, speed, 1e-6);
                continue;
            }
            /* On the stop from the step it reaches it, within 1 mm; from the step after, at
             * rest (1 mm/s), and for the 2.4 s after that no further than 0.1 mm from where it
             * came to rest: no bounce, no creeping back off. */
            if (i == arrive + 1)
                settled[k] = js.position;
            bool resting = i <= arrive ||
                           (fabs(js.velocity) <= 1e-3 && fabs(js.position - settled[k]) <= 1e-4);
            if (fabs(js.position - stop) > 1e-3 || !resting)
                fail_msg("slider %d, step %d (arrival %d): at %.6f m moving %.6f m/s; expected "
                         "%.2f m at rest",
                         k, i, arrive, js.position, js.velocity, stop);
            assert_near(s.pose.position.x, js.position, 1e-6);
        }
    }
}

/* A 2 kg cube on a vertical slider limited to [-0.5, 0.5] m, dropped from the middle: it falls
 * freely (y = -g t² / 2) until it reaches the lower stop, then rests on it, the joint carrying
 * its weight. */
static void test_joints_slider_resting_on_its_lower_stop_holds_under_gravity(void **state)
{
    fixture *fx = *state;
    const double g = 9.81, mass = 2.0, stop = -0.5;
    gy_body_id cube = box_body(fx, gy_v3(0, 5, 0), gy_v3(0.5, 0.5, 0.5), mass);
    gy_joint_def jd = slider_x(cube, gy_v3(0, 5, 0));
    jd.axis = gy_v3(0, 1, 0);
    jd.has_limits = true;
    jd.limit_min = stop;
    jd.limit_max = 0.5;
    gy_joint_id slider = create_joint(fx, &jd);
    int landed = -1;
    for (int i = 0; i < 240; i++) {
        step(fx);
        gy_joint_state js = joint_state(fx, slider);
        /* The symplectic Euler fall of n steps: -g h² n (n + 1) / 2. */
        double n = i + 1, fall = -g * DT * DT * n * (n + 1) / 2.0;
        if (landed < 0 && fall > stop) {
            /* Still falling freely (1e-6 m): the stop's row holds back nothing short of it. */
            assert_near(js.position, fall, 1e-6);
            continue;
        }
        if (landed < 0)
            landed = i;
        /* From the step it would fall past the stop: on it within 1 mm, and from the next step
         * at rest (1 mm/s); once that step has taken its landing speed out, the joint holds m g
         * (1 %) up: for 4 s, not a creep either way. */
        if (fabs(js.position - stop) > 1e-3 || (i > landed && fabs(js.velocity) > 1e-3))
            fail_msg("step %d (landed %d): at %.5f m moving %.5f m/s; expected %.2f m at rest", i,
                     landed, js.position, js.velocity, stop);
        if (i > landed + 1)
            assert_near(js.force.y, mass * g, 0.01 * mass * g);
    }
    assert_true(landed > 0);
}

static void test_joints_set_motor_changes_target_and_rejects_misuse(void **state)
{
    fixture *fx = *state;
    gy_body_id wheel = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = hinge_z(wheel, gy_v3(0, 5, 0));
    jd.motor = motor(GY_MOTOR_VELOCITY, 1.0, 100.0);
    gy_joint_id hinge = create_joint(fx, &jd);
    for (int i = 0; i < 10; i++)
        step(fx);
    assert_near(joint_state(fx, hinge).velocity, 1.0, 0.01);
    /* The motor's torque shows in the joint's report while it accelerates. */
    gy_joint_motor m = motor(GY_MOTOR_VELOCITY, -1.0, 100.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &m), GY_OK);
    for (int i = 0; i < 10; i++)
        step(fx);
    assert_near(joint_state(fx, hinge).velocity, -1.0, 0.01);
    m = motor(GY_MOTOR_OFF, 0.0, 0.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &m), GY_OK);
    for (int i = 0; i < 10; i++)
        step(fx);
    /* Off: the cube coasts at -1 rad/s (no damping). */
    assert_near(joint_state(fx, hinge).velocity, -1.0, 0.01);

    /* Misuse changes nothing. */
    m = motor(GY_MOTOR_VELOCITY, NAN, 10.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &m), GY_ERR_NON_FINITE);
    m = motor(GY_MOTOR_VELOCITY, 1.0, 0.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &m), GY_ERR_INVALID_ARGUMENT);
    m = motor((gy_motor_mode)7, 1.0, 1.0);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, &m), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->joint_set_motor(fx->w, hinge, NULL), GY_ERR_INVALID_ARGUMENT);
    gy_joint_id stale = {hinge.bits + 1u};
    m = motor(GY_MOTOR_VELOCITY, 1.0, 1.0);
    assert_result(fx->be->joint_set_motor(fx->w, stale, &m), GY_ERR_STALE_HANDLE);
    gy_joint_state s;
    assert_result(fx->be->joint_get_state(fx->w, stale, &s), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->joint_get_state(fx->w, hinge, NULL), GY_ERR_INVALID_ARGUMENT);
    gy_body_id bob = box_body(fx, gy_v3(5, 5, 0), gy_v3(1, 1, 1), 1.0);
    jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = bob;
    jd.anchor = gy_v3(5, 6, 0);
    gy_joint_id ball = create_joint(fx, &jd);
    assert_result(fx->be->joint_set_motor(fx->w, ball, &m), GY_ERR_MISUSE);
    step(fx);
    assert_near(joint_state(fx, hinge).velocity, -1.0, 0.01);
}

/* ---- springs -----------------------------------------------------------------------------------
 */

/* Follows a distance spring of rest length 1 m for four periods: its damped period from the zero
 * crossings and its damping ratio from the peaks (see below), checked within 5 %. */
static void check_spring(fixture *fx, gy_joint_id spring, double f, double zeta, int k)
{
    double crossings[16], peaks[16];
    int nc = 0, np = 0;
    double t = 0.0, prev = joint_state(fx, spring).position - 1.0, prev2 = prev;
    for (int i = 0; i < (int)(4.0 / f / DT) && nc < 16; i++) {
        step(fx);
        t += DT;
        double x = joint_state(fx, spring).position - 1.0;
        if ((prev > 0.0 && x <= 0.0) || (prev < 0.0 && x >= 0.0))
            crossings[nc++] = t - DT + DT * prev / (prev - x);
        /* A local extreme of |x| at the previous sample (parabola vertex height). */
        if (i >= 1 && fabs(prev) >= fabs(prev2) && fabs(prev) > fabs(x) && np < 16) {
            double den = prev2 - 2.0 * prev + x;
            peaks[np++] = fabs(den != 0.0 ? prev - 0.125 * (x - prev2) * (x - prev2) / den : prev);
        }
        prev2 = prev;
        prev = x;
    }
    assert_true(nc >= 4 && np >= 3);
    double period = 2.0 * (crossings[nc - 1] - crossings[0]) / (nc - 1);
    double expected = 1.0 / (f * sqrt(1.0 - zeta * zeta));
    double dec = log(peaks[0] / peaks[np - 1]) / (np - 1); /* peaks are half periods apart */
    double zeta_measured = 2.0 * dec / sqrt(4.0 * GY_PI * GY_PI + 4.0 * dec * dec);
    print_message("spring %d: period %.4f s (expected %.4f), damping ratio %.4f (%.2f)\n", k,
                  period, expected, zeta_measured, zeta);
    /* Period within 5 %, damping ratio within 5 % of itself. */
    assert_near(period, expected, 0.05 * expected);
    assert_near(zeta_measured, zeta, 0.05 * zeta);
}

/* A 1 m distance spring from a to b (NULL id: the world) at `anchor`. */
static gy_joint_id spring_joint(fixture *fx, gy_body_id a, gy_body_id b, gy_vec3 anchor, double f,
                                double zeta)
{
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_DISTANCE;
    jd.a = a;
    jd.b = b;
    jd.anchor = anchor;
    jd.distance = 1.0;
    jd.has_spring = true;
    jd.spring_frequency = f;
    jd.spring_damping_ratio = zeta;
    return create_joint(fx, &jd);
}

static void test_joints_spring_period_and_decay_match_frequency_and_damping(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    /* A 2 kg cube on a 1 m distance spring to the world (f = 1 Hz, zeta = 0.1), let go 0.2 m
     * stretched along the spring, and two 1 kg cubes on a spring between them (reduced mass
     * 0.5 kg; f = 2 Hz, zeta = 0.2). x(t) = A e^(-zeta w t) cos(w_d t): half-periods between
     * zero crossings give the damped period 1 / (f sqrt(1 - zeta²)), successive peaks the log
     * decrement d = 2 pi zeta / sqrt(1 - zeta²). */
    const double f[2] = {1.0, 2.0}, zeta[2] = {0.1, 0.2};
    gy_joint_id springs[2];
    gy_body_id bob = box_body(fx, gy_v3(0, 3.8, 0), gy_v3(0.2, 0.2, 0.2), 2.0);
    gy_body_id world = {0};
    springs[0] = spring_joint(fx, bob, world, gy_v3(0, 5, 0), f[0], zeta[0]);
    gy_body_id left = box_body(fx, gy_v3(10, 5, 0), gy_v3(0.2, 0.2, 0.2), 1.0);
    gy_body_id right = box_body(fx, gy_v3(11.2, 5, 0), gy_v3(0.2, 0.2, 0.2), 1.0);
    springs[1] = spring_joint(fx, left, right, gy_v3(11.2, 5, 0), f[1], zeta[1]);

    for (int k = 0; k < 2; k++)
        check_spring(fx, springs[k], f[k], zeta[k], k);
}

/* A box of `type` and full size `size` at `p`, otherwise as gy_default_body_def makes it. */
static gy_body_id default_box(fixture *fx, gy_motion_type type, gy_vec3 p, gy_vec3 size)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = type;
    bd.pose.position = p;
    return create_box(fx, &bd, size);
}

/* A spring from a kinematic body (its a) to a dynamic one: only the dynamic body's mass sets the
 * softness (the kinematic side does not give way), so a 2 kg cube hung 1.2 m from a still
 * kinematic box swings along the spring at the spring's own frequency (1 Hz, zeta = 0.1). */
static void test_joints_spring_from_a_kinematic_body_keeps_its_frequency(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    gy_body_id holder = default_box(fx, GY_MOTION_KINEMATIC, gy_v3(0, 5, 0), gy_v3(0.2, 0.2, 0.2));
    gy_body_id bob = box_body(fx, gy_v3(0, 3.8, 0), gy_v3(0.2, 0.2, 0.2), 2.0);
    gy_joint_id spring = spring_joint(fx, holder, bob, gy_v3(0, 3.8, 0), 1.0, 0.1);
    check_spring(fx, spring, 1.0, 0.1, 0);
    gy_body_state s = body_state(fx, bob);
    assert_true(gy_vec3_is_finite(s.pose.position));
}

/* A box hanging still from a kinematic body that does not move falls asleep, as one hanging from
 * the world does: a kinematic body standing still keeps nothing awake. It wakes when the holder
 * moves again. */
static void test_joints_box_hanging_from_a_still_kinematic_body_sleeps(void **state)
{
    fixture *fx = *state;
    gy_body_id holder = default_box(fx, GY_MOTION_KINEMATIC, gy_v3(0, 5, 0), gy_v3(0.2, 0.2, 0.2));
    gy_body_id box = default_box(fx, GY_MOTION_DYNAMIC, gy_v3(0, 4, 0), gy_v3(0.5, 0.5, 0.5));
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = box;
    jd.b = holder;
    jd.anchor = gy_v3(0, 4.5, 0);
    create_joint(fx, &jd);
    for (int i = 0; i < 120; i++)
        step(fx);
    gy_body_state s = body_state(fx, box);
    assert_false(s.awake);
    assert_true(gy_v3_len(gy_v3_sub(s.pose.position, gy_v3(0, 4, 0))) < 0.01);

    assert_result(fx->be->body_set_linear_velocity(fx->w, holder, gy_v3(1, 0, 0)), GY_OK);
    step(fx);
    step(fx);
    assert_true(body_state(fx, box).awake);
}

/* ---- ball limits -------------------------------------------------------------------------------
 */

static void test_joints_cone_holds_under_hard_kick(void **state)
{
    fixture *fx = *state;
    /* A 1 kg capsule hangs from a ball joint at its top end, axis pointing down its length, cone
     * 30°; a 10 N·s sideways kick at its bottom would swing it far past 90°. The angle between
     * its long axis and straight down must never exceed 30° by more than 2°. */
    const double cone = 30.0 * DEG;
    gy_body_id limb = capsule_body(fx, gy_v3(0, 4, 0), 0.1, 1.0, 1.0);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = limb;
    jd.anchor = gy_v3(0, 4.5, 0);
    jd.axis = gy_v3(0, -1, 0);
    jd.has_cone = true;
    jd.cone_angle = cone;
    gy_joint_id ball = create_joint(fx, &jd);
    assert_result(fx->be->body_add_impulse_at(fx->w, limb, gy_v3(10, 0, 4), gy_v3(0, 3.5, 0)),
                  GY_OK);
    double worst = 0.0;
    for (int i = 0; i < 180; i++) {
        step(fx);
        gy_vec3 down = gy_quat_rotate(body_state(fx, limb).pose.rotation, gy_v3(0, -1, 0));
        double swing = acos(fmax(-1.0, fmin(1.0, -down.y)));
        worst = fmax(worst, swing);
        assert_near(joint_state(fx, ball).position, swing, 1e-3);
    }
    print_message("cone 30 deg: widest swing %.3f deg\n", worst / DEG);
    assert_true(worst <= cone + 2.0 * DEG);
    assert_true(worst >= cone - 2.0 * DEG); /* the kick did reach the cone */
    /* The top end stays on the anchor (1 cm). */
    gy_vec3 top = gy_pose_apply(body_state(fx, limb).pose, gy_v3(0, 0.5, 0));
    assert_near(gy_v3_len(gy_v3_sub(top, gy_v3(0, 4.5, 0))), 0.0, 0.01);
}

static void test_joints_cone_between_two_bodies_holds_under_hard_kick(void **state)
{
    fixture *fx = *state;
    /* As the world cone, but the limb hangs from a 10 kg block that is itself fixed to the world
     * (the cone is measured between two bodies), and is twisted as well as swung: neither the
     * 30° cone nor the ±20° twist limits are passed by more than 2°. */
    const double cone = 30.0 * DEG;
    gy_body_id block = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 10.0);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_FIXED;
    jd.a = block;
    jd.anchor = gy_v3(0, 5, 0);
    create_joint(fx, &jd);
    gy_body_id limb = capsule_body(fx, gy_v3(0, 4, 0), 0.1, 1.0, 1.0);
    jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = limb;
    jd.b = block;
    jd.anchor = gy_v3(0, 4.5, 0);
    jd.axis = gy_v3(0, -1, 0);
    jd.has_cone = true;
    jd.cone_angle = cone;
    jd.has_twist_limits = true;
    jd.twist_min = -20.0 * DEG;
    jd.twist_max = 20.0 * DEG;
    gy_joint_id ball = create_joint(fx, &jd);
    assert_result(fx->be->body_add_impulse_at(fx->w, limb, gy_v3(10, 0, 4), gy_v3(0, 3.5, 0)),
                  GY_OK);
    assert_result(fx->be->body_add_torque(fx->w, limb, gy_v3(0, 6, 0)), GY_OK);
    double worst = 0.0, twist = 0.0;
    for (int i = 0; i < 180; i++) {
        step(fx);
        gy_joint_state st = joint_state(fx, ball);
        worst = fmax(worst, st.position);
        twist = fmax(twist, fabs(st.twist));
    }
    print_message("two-body cone 30 deg: widest swing %.3f deg, largest twist %.3f deg\n",
                  worst / DEG, twist / DEG);
    assert_true(worst <= cone + 2.0 * DEG);
    assert_true(twist <= 20.0 * DEG + 2.0 * DEG);
}

static void test_joints_twist_limits_hold_under_hard_spin(void **state)
{
    fixture *fx = *state;
    no_gravity(fx);
    /* A capsule on a ball joint with twist limits [-20°, 45°] about its long axis is spun at
     * +/-15 rad/s about that axis: its twist never passes a limit by more than 2°. */
    const double lo = -20.0 * DEG, hi = 45.0 * DEG;
    for (int sign = -1; sign <= 1; sign += 2) {
        gy_body_id limb = capsule_body(fx, gy_v3(sign * 3.0, 4, 0), 0.1, 1.0, 1.0);
        gy_joint_def jd = gy_default_joint_def();
        jd.type = GY_JOINT_BALL;
        jd.a = limb;
        jd.anchor = gy_v3(sign * 3.0, 4.5, 0);
        jd.axis = gy_v3(0, -1, 0);
        jd.has_twist_limits = true;
        jd.twist_min = lo;
        jd.twist_max = hi;
        jd.has_cone = true;
        jd.cone_angle = 20.0 * DEG;
        gy_joint_id ball = create_joint(fx, &jd);
        assert_result(fx->be->body_set_angular_velocity(fx->w, limb, gy_v3(0, -15.0 * sign, 0)),
                      GY_OK);
        double most = 0.0;
        for (int i = 0; i < 90; i++) {
            step(fx);
            /* Twist about the joint axis (-Y): a turn of -15 rad/s about Y is +15 about -Y. */
            double t = twist_about(body_state(fx, limb).pose.rotation, gy_v3(0, -1, 0));
            most = sign > 0 ? fmax(most, t) : fmin(most, t);
            assert_near(joint_state(fx, ball).twist, t, 0.01);
        }
        print_message("twist %+d: extreme %.3f deg\n", sign, most / DEG);
        if (sign > 0) {
            assert_true(most <= hi + 2.0 * DEG);
            assert_true(most >= hi - 2.0 * DEG);
        } else {
            assert_true(most >= lo - 2.0 * DEG);
            assert_true(most <= lo + 2.0 * DEG);
        }
    }
}

/* ---- definitions -------------------------------------------------------------------------------
 */

static void test_joints_invalid_motor_spring_and_limit_defs_rejected(void **state)
{
    fixture *fx = *state;
    gy_body_id a = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_backend_counters before;
    fx->be->get_counters(fx->w, &before);
#define JOINT_CASE(type_, stmt, code)                                                              \
    do {                                                                                           \
        gy_joint_def jd = gy_default_joint_def();                                                  \
        jd.type = type_;                                                                           \
        jd.a = a;                                                                                  \
        jd.anchor = gy_v3(0, 6, 0);                                                                \
        jd.axis = gy_v3(0, 0, 1);                                                                  \
        stmt;                                                                                      \
        gy_joint_id j = {0};                                                                       \
        gy_test_assert_result_(fx->be->joint_create(fx->w, &jd, &j), code, #type_ ": " #stmt,      \
                               __FILE__, __LINE__);                                                \
        assert_true(j.bits == 0);                                                                  \
    } while (0)
    JOINT_CASE(GY_JOINT_BALL, jd.motor = motor(GY_MOTOR_VELOCITY, 1, 1), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_HINGE, jd.motor = motor(GY_MOTOR_VELOCITY, 1, 0), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_HINGE, jd.motor = motor(GY_MOTOR_POSITION, 1, -2), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_SLIDER, jd.motor = motor(GY_MOTOR_POSITION, INFINITY, 1),
               GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_SLIDER, jd.motor = motor(GY_MOTOR_MODE_COUNT, 1, 1),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_HINGE, (jd.has_spring = true, jd.spring_frequency = 1),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_DISTANCE, (jd.has_spring = true, jd.spring_frequency = 0),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_DISTANCE,
               (jd.has_spring = true, jd.spring_frequency = 1, jd.spring_damping_ratio = -0.1),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_DISTANCE, (jd.has_spring = true, jd.spring_frequency = NAN),
               GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_HINGE, (jd.has_cone = true, jd.cone_angle = 0.5), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_cone = true, jd.cone_angle = 0), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_cone = true, jd.cone_angle = 4), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_cone = true, jd.cone_angle = 1, jd.axis = gy_v3(0, 0, 0)),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_twist_limits = true, jd.twist_min = 1, jd.twist_max = 0),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_twist_limits = true, jd.twist_min = -4, jd.twist_max = 0),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.has_twist_limits = true, jd.twist_max = NAN), GY_ERR_NON_FINITE);
#undef JOINT_CASE
    gy_backend_counters after;
    fx->be->get_counters(fx->w, &after);
    assert_int_equal(after.joints, before.joints);
    assert_int_equal(after.live_objects, before.live_objects);
}

/* A Distance joint's length is the front end's rule: `distance` < 0 takes the length at creation;
 * a zero length has no direction and holds a's origin on the anchor as a ball joint does, but only
 * when a's origin is already there: asked of an origin 1 m off, it is refused and nothing is made.
 */
static void test_joints_zero_length_distance_is_a_ball_or_refused(void **state)
{
    fixture *fx = *state;
    /* A 1 m box hanging with its origin on the anchor (its centre there too), kicked sideways and
     * spun: the origin stays on the anchor (1 mm) after 1 s under gravity. */
    gy_body_id hung = box_body(fx, gy_v3(0, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_DISTANCE;
    jd.a = hung;
    jd.anchor = gy_v3(0, 5, 0);
    jd.distance = -1.0; /* the length now: zero */
    create_joint(fx, &jd);
    assert_result(fx->be->body_set_angular_velocity(fx->w, hung, gy_v3(0, 0, 3)), GY_OK);
    assert_result(fx->be->body_set_linear_velocity(fx->w, hung, gy_v3(2, 0, 0)), GY_OK);
    for (int i = 0; i < 60; i++)
        step(fx);
    gy_body_state s = body_state(fx, hung);
    assert_true(gy_v3_len(gy_v3_sub(s.pose.position, jd.anchor)) < 1e-3);
    assert_true(gy_v3_len(s.angular_velocity) > 0.5); /* a ball joint lets it turn */

    gy_body_id off = box_body(fx, gy_v3(10, 5, 0), gy_v3(1, 1, 1), 1.0);
    gy_backend_counters before;
    fx->be->get_counters(fx->w, &before);
    jd.a = off;
    jd.anchor = gy_v3(10, 6, 0);
    jd.distance = 0.0;
    gy_joint_id id = {0};
    assert_result(fx->be->joint_create(fx->w, &jd, &id), GY_ERR_INVALID_ARGUMENT);
    assert_true(id.bits == 0);
    gy_backend_counters after;
    fx->be->get_counters(fx->w, &after);
    assert_int_equal(after.joints, before.joints);
    assert_int_equal(after.live_objects, before.live_objects);
    /* The same joint at its length of 1 m is made. */
    jd.distance = -1.0;
    create_joint(fx, &jd);
}

#define JOINT_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "joint contract");
    if (status != 0)
        return status;
    const struct CMUnitTest tests[] = {
        JOINT_TEST(test_joints_velocity_motor_with_ample_force_reaches_target),
        JOINT_TEST(test_joints_weak_motor_accelerates_at_most_force_over_inertia),
        JOINT_TEST(test_joints_servo_settles_on_target_within_five_percent),
        JOINT_TEST(test_joints_motor_against_limit_stops_at_limit),
        JOINT_TEST(test_joints_servo_past_limit_rests_on_limit),
        JOINT_TEST(test_joints_fast_swing_into_limits_stops_on_them),
        JOINT_TEST(test_joints_slider_hitting_its_limit_fast_stops_on_it),
        JOINT_TEST(test_joints_slider_resting_on_its_lower_stop_holds_under_gravity),
        JOINT_TEST(test_joints_set_motor_changes_target_and_rejects_misuse),
        JOINT_TEST(test_joints_spring_period_and_decay_match_frequency_and_damping),
        JOINT_TEST(test_joints_spring_from_a_kinematic_body_keeps_its_frequency),
        JOINT_TEST(test_joints_box_hanging_from_a_still_kinematic_body_sleeps),
        JOINT_TEST(test_joints_cone_holds_under_hard_kick),
        JOINT_TEST(test_joints_cone_between_two_bodies_holds_under_hard_kick),
        JOINT_TEST(test_joints_twist_limits_hold_under_hard_spin),
        JOINT_TEST(test_joints_invalid_motor_spring_and_limit_defs_rejected),
        JOINT_TEST(test_joints_zero_length_distance_is_a_ball_or_refused),
    };
    return cmocka_run_group_tests_name("joint contract", tests, NULL, NULL);
}
