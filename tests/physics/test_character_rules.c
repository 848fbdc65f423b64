/* Character controller against the level's rules, on every adapter (ODE and Bullet): one-way
 * platforms, response-off colliders and sensors, conveyor surfaces, slopes steeper than the limit
 * whatever the intent, ground_state, and riding rotating and moving platforms with their whole
 * motion. A backend world on this thread: step, then move, as the physics thread does. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/physics/character.h"
#include "gyre/math.h"

#define DT     (1.0 / 60.0)
#define G      9.81
#define RADIUS 0.3
#define HEIGHT 1.8
#define SKIN   0.01
/* Body origin above a flat floor at rest: half the capsule plus the skin gap. */
#define REST (0.5 * HEIGHT + SKIN)
/* Shape casts bracket the time of impact to about 1e-4 m; rests are checked to a few times that. */
#define POS_TOL 1e-3

typedef struct fx {
    gy_test_allocator ta;
    const char *adapter;
    const gy_backend *be;
    gy_backend_world *w;
    gy_body_id ch;
    gy_character_def s;
    gy_character_state st;
    gy_character_result res;
} fx;

static int setup_with(void **state, const char *adapter)
{
    static fx f;
    memset(&f, 0, sizeof f);
    gy_test_allocator_init(&f.ta);
    f.adapter = adapter;
    f.be = gy_backend_find(adapter);
    if (f.be == NULL)
        return -1;
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.allocator = &f.ta.base;
    if (f.be->world_create(&wd, &f.w) != GY_OK || f.be->bind_thread(f.w) != GY_OK)
        return -1;
    f.s = gy_default_character_def();
    *state = &f;
    return 0;
}

static int setup_ode(void **state)
{
    return setup_with(state, "ode");
}

static int setup_bullet(void **state)
{
    return setup_with(state, "bullet");
}

static int teardown(void **state)
{
    fx *f = *state;
    f->be->unbind_thread(f->w);
    f->be->world_destroy(f->w);
    return f->ta.live_blocks == 0 ? 0 : -1;
}

/* ---- scene builders -------------------------------------------------------------------------- */

static gy_body_id body_with(fx *f, gy_motion_type type, gy_pose pose, gy_collider_def c)
{
    gy_body_def d = gy_default_body_def();
    d.type = type;
    d.pose = pose;
    gy_body_id id;
    assert_result(f->be->body_create(f->w, &d, &c, 1, &id, NULL), GY_OK);
    return id;
}

static gy_collider_def box_def(gy_vec3 size)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = size;
    return c;
}

static gy_body_id box(fx *f, gy_motion_type type, gy_vec3 center, gy_vec3 size)
{
    gy_pose p = {center, gy_quat_identity()};
    return body_with(f, type, p, box_def(size));
}

/* A 40 m static floor with its top face at y = 0. */
static gy_body_id floor_box(fx *f)
{
    return box(f, GY_MOTION_STATIC, gy_v3(0, -0.5, 0), gy_v3(40, 1, 40));
}

/* A static slab 10 m long turned `deg` about Z whose top face rises toward +x from `edge`. */
static gy_body_id ramp(fx *f, double deg, gy_vec3 edge)
{
    double th = deg * GY_PI / 180.0, len = 10.0, thick = 1.0;
    gy_quat q = gy_quat_axis_angle(gy_v3(0, 0, 1), th);
    gy_vec3 top_center = gy_v3(edge.x + 0.5 * len * cos(th), edge.y + 0.5 * len * sin(th), 0);
    gy_vec3 center = gy_v3_sub(top_center, gy_quat_rotate(q, gy_v3(0, 0.5 * thick, 0)));
    gy_pose p = {center, q};
    return body_with(f, GY_MOTION_STATIC, p, box_def(gy_v3(len, thick, 8.0)));
}

static void character(fx *f, gy_vec3 pos)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_CAPSULE;
    c.shape.radius = RADIUS;
    c.shape.height = HEIGHT;
    gy_pose p = {pos, gy_quat_identity()};
    f->ch = body_with(f, GY_MOTION_KINEMATIC, p, c);
    memset(&f->st, 0, sizeof f->st);
}

static gy_pose pose_of(fx *f, gy_body_id id)
{
    gy_body_state s;
    assert_result(f->be->body_get_state(f->w, id, &s), GY_OK);
    return s.pose;
}

static gy_vec3 pos_of(fx *f, gy_body_id id)
{
    return pose_of(f, id).position;
}

static void tick_in(fx *f, gy_vec3 intent, double jump)
{
    assert_result(f->be->step(f->w, DT), GY_OK);
    gy_character_input in = {intent, jump};
    assert_result(
        gy_character_move(f->be, f->w, f->ch, &f->s, gy_v3(0, -G, 0), &f->st, &in, DT, &f->res),
        GY_OK);
}

static void tick(fx *f, gy_vec3 intent)
{
    tick_in(f, intent, 0.0);
}

static void settle(fx *f)
{
    for (int i = 0; i < 120 && !(f->res.grounded && f->st.has_position); i++)
        tick(f, gy_v3(0, 0, 0));
    assert_true(f->res.grounded);
}

/* ---- one-way platforms ----------------------------------------------------------------------- */

/* A one-way platform 0.2 m thick with its top at y = 2.4 over the character. */
static gy_body_id one_way_platform(fx *f, gy_vec3 size)
{
    gy_collider_def c = box_def(size);
    c.one_way = true;
    gy_pose p = {gy_v3(0, 2.3, 0), gy_quat_identity()};
    return body_with(f, GY_MOTION_STATIC, p, c);
}

static void test_character_jumps_up_through_a_one_way_platform_and_lands_on_it(void **state)
{
    fx *f = *state;
    floor_box(f);
    gy_body_id pf = one_way_platform(f, gy_v3(4, 0.2, 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    /* 8 m/s peaks v²/2g = 3.26 m up: the feet clear the top (2.4) by 0.87 m. */
    tick_in(f, gy_v3(0, 0, 0), 8.0);
    double peak = 0;
    bool landed = false;
    for (int i = 0; i < 120 && !landed; i++) {
        tick(f, gy_v3(0, 0, 0));
        peak = fmax(peak, pos_of(f, f->ch).y);
        landed = f->res.grounded;
    }
    assert_true(landed);
    assert_near(peak, REST + 8.0 * 8.0 / (2 * G), 0.01);
    assert_int_equal(f->res.ground_body.bits, pf.bits);
    assert_near(pos_of(f, f->ch).y, 2.4 + REST, POS_TOL);
    assert_int_equal(f->st.passing_count, 0);
    /* It stands there: the platform holds it from above. */
    for (int i = 0; i < 30; i++) {
        tick(f, gy_v3(0, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).y, 2.4 + REST, POS_TOL);
}

static void test_character_falls_back_through_a_one_way_platform_it_did_not_clear(void **state)
{
    fx *f = *state;
    floor_box(f);
    one_way_platform(f, gy_v3(4, 0.2, 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    /* 5.5 m/s peaks 1.54 m up: the head enters the platform (its underside at 2.2, the head at
     * 1.81 + 1.54), the feet stay below it, and it comes back down to the floor. */
    tick_in(f, gy_v3(0, 0, 0), 5.5);
    double peak = 0;
    bool landed = false;
    for (int i = 0; i < 120 && !landed; i++) {
        tick(f, gy_v3(0, 0, 0));
        peak = fmax(peak, pos_of(f, f->ch).y);
        landed = f->res.grounded;
    }
    assert_true(landed);
    assert_near(peak, REST + 5.5 * 5.5 / (2 * G), 0.01);
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
    assert_int_equal(f->st.passing_count, 0);
}

static void test_character_walks_under_and_into_a_one_way_wall_from_its_back(void **state)
{
    fx *f = *state;
    floor_box(f);
    /* A one-way wall whose landing side faces -x: walked into from +x it lets the character by;
     * walked into from -x it stops it. */
    gy_collider_def c = box_def(gy_v3(0.2, 3, 4));
    c.one_way = true;
    c.one_way_normal = gy_v3(-1, 0, 0);
    gy_pose p = {gy_v3(0, 1.5, 0), gy_quat_identity()};
    body_with(f, GY_MOTION_STATIC, p, c);
    character(f, gy_v3(2, REST, 0));
    settle(f);
    for (int i = 0; i < 90; i++)
        tick(f, gy_v3(-3, 0, 0));
    assert_true(pos_of(f, f->ch).x < -2.0);
    for (int i = 0; i < 90; i++)
        tick(f, gy_v3(3, 0, 0));
    assert_near(pos_of(f, f->ch).x, -0.1 - RADIUS - SKIN, 2e-3);
}

/* ---- response-off colliders and sensors -------------------------------------------------------
 */

static void walk_through_wall(fx *f, bool sensor)
{
    floor_box(f);
    gy_collider_def c = box_def(gy_v3(0.4, 3, 4));
    c.contact_response = sensor;
    c.is_sensor = sensor;
    gy_pose p = {gy_v3(2, 1.5, 0), gy_quat_identity()};
    body_with(f, GY_MOTION_STATIC, p, c);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(3, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).x, 6.0, 1e-6);
}

static void test_character_walks_through_a_response_off_wall(void **state)
{
    walk_through_wall(*state, false);
}

static void test_character_walks_through_a_sensor_wall(void **state)
{
    walk_through_wall(*state, true);
}

static void test_character_does_not_stand_on_a_response_off_floor(void **state)
{
    fx *f = *state;
    floor_box(f);
    gy_collider_def c = box_def(gy_v3(4, 0.2, 4));
    c.contact_response = false;
    gy_pose p = {gy_v3(0, 1.9, 0), gy_quat_identity()};
    body_with(f, GY_MOTION_STATIC, p, c);
    character(f, gy_v3(0, 2.0 + REST + 0.5, 0));
    settle(f);
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
}

/* ---- conveyors ---------------------------------------------------------------------------------
 */

/* A static conveyor slab (top at y = 0) turned `yaw_deg` about Y, whose collider-local surface
 * velocity is `sv`: the character standing on it is carried at the world-space velocity. */
static void ride_conveyor(fx *f, double yaw_deg, gy_vec3 sv, gy_vec3 intent)
{
    gy_collider_def c = box_def(gy_v3(30, 1, 30));
    c.surface_velocity = sv;
    gy_quat q = gy_quat_axis_angle(gy_v3(0, 1, 0), yaw_deg * GY_PI / 180.0);
    gy_pose p = {gy_v3(0, -0.5, 0), q};
    body_with(f, GY_MOTION_STATIC, p, c);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    gy_vec3 start = pos_of(f, f->ch);
    gy_vec3 world_sv = gy_quat_rotate(q, sv);
    for (int i = 0; i < 60; i++) {
        tick(f, intent);
        assert_true(f->res.grounded);
        assert_near(gy_v3_len(gy_v3_sub(f->res.platform_velocity, world_sv)), 0, 1e-9);
    }
    gy_vec3 moved = gy_v3_sub(pos_of(f, f->ch), start);
    gy_vec3 want = gy_v3_add(world_sv, intent); /* one second */
    assert_near(moved.x, want.x, 1e-6);
    assert_near(moved.y, 0, 1e-6);
    assert_near(moved.z, want.z, 1e-6);
}

static void test_character_is_carried_by_a_conveyor(void **state)
{
    ride_conveyor(*state, 0, gy_v3(1.5, 0, 0), gy_v3(0, 0, 0));
}

static void test_character_walks_on_a_turned_conveyor_at_the_sum_of_both(void **state)
{
    /* Turned 90° about Y, the local +x surface runs along world -z. */
    ride_conveyor(*state, 90, gy_v3(1.5, 0, 0), gy_v3(1, 0, 0));
}

/* ---- steep slopes and ground_state -------------------------------------------------------------
 */

/* Walking into a 55° slope with a 50° limit never climbs it, however fast the intent. */
static void test_character_never_climbs_a_slope_steeper_than_the_limit(void **state)
{
    fx *f = *state;
    floor_box(f);
    ramp(f, 55, gy_v3(2, 0, 0));
    f->s.max_slope_deg = 50;
    const double speeds[] = {2, 10, 40};
    for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; k++) {
        character(f, gy_v3(0, REST, 0));
        settle(f);
        double top = 0;
        for (int i = 0; i < 120; i++) {
            tick(f, gy_v3(speeds[k], 0, 0));
            top = fmax(top, pos_of(f, f->ch).y);
        }
        /* The foot sphere rests against the face at the toe; the body never rises. */
        assert_near(top, REST, POS_TOL);
        assert_true(pos_of(f, f->ch).x < 2.0);
        assert_int_equal(f->res.ground_state, GY_GROUND_WALKABLE);
        assert_result(f->be->body_release(f->w, f->ch), GY_OK);
    }
}

static void test_character_ground_state_is_steep_on_a_steep_face_and_cannot_climb_it(void **state)
{
    fx *f = *state;
    floor_box(f);
    ramp(f, 60, gy_v3(0, 0, 0));
    /* Dropped onto the 60° face, pressing up it at 10 m/s: steep while it slides down, whatever
     * the intent, then walkable on the floor at the toe. */
    double th = 60 * GY_PI / 180, x0 = 1.5;
    character(f, gy_v3(x0, x0 * tan(th) + 0.4 / cos(th) + 0.6 + 0.2, 0));
    int steep = 0;
    double y_prev = pos_of(f, f->ch).y;
    bool rose = false;
    for (int i = 0; i < 180 && f->res.ground_state != GY_GROUND_WALKABLE; i++) {
        tick(f, gy_v3(10, 0, 0));
        double y = pos_of(f, f->ch).y;
        rose = rose || y > y_prev + 1e-9;
        y_prev = y;
        if (f->res.ground_state == GY_GROUND_STEEP) {
            steep++;
            assert_false(f->res.grounded);
        }
    }
    assert_false(rose);
    assert_true(steep >= 5);
    assert_int_equal(f->res.ground_state, GY_GROUND_WALKABLE);
    assert_true(f->res.grounded);
    /* Airborne in the air. */
    tick_in(f, gy_v3(0, 0, 0), 5.0);
    tick(f, gy_v3(0, 0, 0));
    assert_int_equal(f->res.ground_state, GY_GROUND_AIRBORNE);
}

/* ---- platforms: the whole motion ---------------------------------------------------------------
 */

static void test_character_rides_a_rotating_platform_at_its_radius_and_turns_with_it(void **state)
{
    fx *f = *state;
    /* A turntable 24 m across (top at y = 0) turning at 2 rad/s about +Y; the character stands
     * 9 m from the axis. Carried with the platform's whole motion, it stays at 9 m and its
     * heading turns by ω dt per tick. */
    const double omega = 2.0, r0 = 9.0;
    gy_body_id pf = box(f, GY_MOTION_KINEMATIC, gy_v3(0, -0.5, 0), gy_v3(24, 1, 24));
    character(f, gy_v3(r0, REST, 0));
    settle(f);
    assert_result(f->be->body_set_angular_velocity(f->w, pf, gy_v3(0, omega, 0)), GY_OK);
    gy_vec3 p0 = pos_of(f, f->ch);
    double worst_r = 0, worst_y = 0;
    const int n = 300; /* 10 s, 20 rad */
    double phase0 = atan2(-p0.z, p0.x);
    for (int i = 1; i <= n; i++) {
        tick(f, gy_v3(0, 0, 0));
        assert_true(f->res.grounded);
        assert_int_equal(f->res.ground_body.bits, pf.bits);
        gy_pose cp = pose_of(f, f->ch);
        worst_r = fmax(worst_r, fabs(hypot(cp.position.x, cp.position.z) - r0));
        worst_y = fmax(worst_y, fabs(cp.position.y - REST));
        /* The heading equals the platform's turn, and the position sits where that turn takes the
         * starting point. */
        gy_quat pq = pose_of(f, pf).rotation;
        double dot = fabs(pq.x * cp.rotation.x + pq.y * cp.rotation.y + pq.z * cp.rotation.z +
                          pq.w * cp.rotation.w);
        assert_near(dot, 1.0, 1e-9);
        double platform_angle = 2.0 * atan2(pq.y, pq.w);
        double pos_angle = atan2(-cp.position.z, cp.position.x) - phase0;
        assert_near(remainder(pos_angle - platform_angle, 2 * GY_PI), 0, 1e-6);
    }
    assert_true(worst_r < 1e-6);
    assert_true(worst_y < 1e-6);
    /* The platform turned ω dt per tick (the adapters integrate a constant spin to 1e-4 rad over
     * 20 rad). */
    gy_quat pq = pose_of(f, pf).rotation;
    assert_near(remainder(2.0 * atan2(pq.y, pq.w) - omega * n * DT, 2 * GY_PI), 0, 1e-4);
    assert_near(gy_v3_len(f->res.platform_velocity), omega * r0, 1e-3);
}

static void test_character_rides_a_lift_exactly_its_travel(void **state)
{
    fx *f = *state;
    floor_box(f);
    gy_body_id lift = box(f, GY_MOTION_KINEMATIC, gy_v3(0, 0.5, 0), gy_v3(3, 1, 3));
    character(f, gy_v3(0, 1.0 + REST, 0));
    settle(f);
    double y0 = pos_of(f, f->ch).y, l0 = pos_of(f, lift).y;
    /* Up 3 m at 1.5 m/s (2 s), then held. */
    assert_result(f->be->body_set_linear_velocity(f->w, lift, gy_v3(0, 1.5, 0)), GY_OK);
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(0, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_result(f->be->body_set_linear_velocity(f->w, lift, gy_v3(0, 0, 0)), GY_OK);
    tick(f, gy_v3(0, 0, 0));
    double travel = pos_of(f, lift).y - l0;
    assert_near(travel, 3.0, 1e-6);
    assert_near(pos_of(f, f->ch).y - y0, travel, 1e-6);
}

#define BOTH(t)                                                                                    \
    {#t "_ode", t, setup_ode, teardown, NULL},                                                     \
    {                                                                                              \
#t "_bullet", t, setup_bullet, teardown, NULL                                              \
    }

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_character_jumps_up_through_a_one_way_platform_and_lands_on_it),
        BOTH(test_character_falls_back_through_a_one_way_platform_it_did_not_clear),
        BOTH(test_character_walks_under_and_into_a_one_way_wall_from_its_back),
        BOTH(test_character_walks_through_a_response_off_wall),
        BOTH(test_character_walks_through_a_sensor_wall),
        BOTH(test_character_does_not_stand_on_a_response_off_floor),
        BOTH(test_character_is_carried_by_a_conveyor),
        BOTH(test_character_walks_on_a_turned_conveyor_at_the_sum_of_both),
        BOTH(test_character_never_climbs_a_slope_steeper_than_the_limit),
        BOTH(test_character_ground_state_is_steep_on_a_steep_face_and_cannot_climb_it),
        BOTH(test_character_rides_a_rotating_platform_at_its_radius_and_turns_with_it),
        BOTH(test_character_rides_a_lift_exactly_its_travel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
