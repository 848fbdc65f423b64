/* Character controller: steps, slopes, ground snap, jumps, ceilings, platforms (with reversal),
 * teleports, pushing, wall sliding and sensors, against the ODE adapter directly (a backend world
 * on this thread: step, then move, as the physics thread does); then the set's input rules, and
 * one run through the physics thread with the hook installed. */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/physics/character.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "physics_state.h"

#define DT     (1.0 / 60.0)
#define G      9.81
#define RADIUS 0.3
#define HEIGHT 1.8
#define SKIN   0.01
/* Body origin above a flat floor at rest: half the capsule plus the skin gap. */
#define REST (0.5 * HEIGHT + SKIN)
/* The ODE adapter's shape casts bracket the time of impact to 1e-4 m; rests and offsets are
 * checked to a few times that. */
#define POS_TOL 1e-3

typedef struct fx {
    gy_test_allocator ta;
    const gy_backend *be;
    gy_backend_world *w;
    gy_body_id ch;
    gy_character_def s;
    gy_character_state st;
    gy_character_result res;
} fx;

static int setup(void **state)
{
    static fx f;
    memset(&f, 0, sizeof f);
    gy_test_allocator_init(&f.ta);
    f.be = gy_backend_find("ode");
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

static int teardown(void **state)
{
    fx *f = *state;
    f->be->unbind_thread(f->w);
    f->be->world_destroy(f->w);
    return f->ta.live_blocks == 0 ? 0 : -1;
}

/* ---- scene builders -------------------------------------------------------------------------- */

static gy_body_id body(fx *f, gy_motion_type type, gy_pose pose, gy_collider_def c, double mass)
{
    gy_body_def d = gy_default_body_def();
    d.type = type;
    d.pose = pose;
    d.mass = mass;
    d.user_data = 0xabc00000000ull | (uint64_t)type;
    gy_body_id id;
    assert_result(f->be->body_create(f->w, &d, &c, 1, &id, NULL), GY_OK);
    return id;
}

static gy_body_id box_rot(fx *f, gy_motion_type type, gy_vec3 center, gy_vec3 size, gy_quat rot)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = size;
    gy_pose p = {center, rot};
    return body(f, type, p, c, 0.0);
}

static gy_body_id box(fx *f, gy_motion_type type, gy_vec3 center, gy_vec3 size)
{
    return box_rot(f, type, center, size, gy_quat_identity());
}

/* A 40 m static floor with its top face at y = 0. */
static gy_body_id floor_box(fx *f)
{
    return box(f, GY_MOTION_STATIC, gy_v3(0, -0.5, 0), gy_v3(40, 1, 40));
}

/* A static slab 10 m long turned `deg` about Z whose top face runs through `edge` (its left end,
 * rising toward +x for positive angles). Returns the slab. */
static gy_body_id ramp(fx *f, double deg, gy_vec3 edge)
{
    double th = deg * GY_PI / 180.0, len = 10.0, thick = 1.0;
    gy_quat q = gy_quat_axis_angle(gy_v3(0, 0, 1), th);
    gy_vec3 top_center = gy_v3(edge.x + 0.5 * len * cos(th), edge.y + 0.5 * len * sin(th), 0);
    gy_vec3 center = gy_v3_sub(top_center, gy_quat_rotate(q, gy_v3(0, 0.5 * thick, 0)));
    return box_rot(f, GY_MOTION_STATIC, center, gy_v3(len, thick, 8.0), q);
}

/* The character: a kinematic capsule with its origin at `pos`. */
static void character(fx *f, gy_vec3 pos)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_CAPSULE;
    c.shape.radius = RADIUS;
    c.shape.height = HEIGHT;
    gy_pose p = {pos, gy_quat_identity()};
    f->ch = body(f, GY_MOTION_KINEMATIC, p, c, 0.0);
    memset(&f->st, 0, sizeof f->st);
}

static gy_vec3 pos_of(fx *f, gy_body_id id)
{
    gy_body_state s;
    assert_result(f->be->body_get_state(f->w, id, &s), GY_OK);
    return s.pose.position;
}

/* One tick as the physics thread runs it: step, then move the character. */
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

/* Ticks with no intent until the character is grounded (at most 2 s). */
static void settle(fx *f)
{
    for (int i = 0; i < 120 && !(f->res.grounded && f->st.has_position); i++)
        tick(f, gy_v3(0, 0, 0));
    assert_true(f->res.grounded);
}

/* ---- settings and arguments ------------------------------------------------------------------ */

static void test_character_settings_defaults_and_validation(void **state)
{
    (void)state;
    gy_character_def s = gy_default_character_def();
    assert_near(s.radius, 0.3, 0);
    assert_near(s.height, 1.8, 0);
    assert_near(s.max_slope_deg, 45, 0);
    assert_near(s.step_offset, 0.3, 0);
    assert_near(s.snap_distance, 0.3, 0);
    assert_near(s.skin_width, 0.01, 0);
    assert_result(gy_validate_character_def(&s), GY_OK);
    assert_result(gy_validate_character_def(NULL), GY_ERR_INVALID_ARGUMENT);

    gy_character_def b = s;
    b.height = 0.6;
    assert_result(gy_validate_character_def(&b), GY_ERR_INVALID_ARGUMENT);
    b = s;
    b.max_slope_deg = 90;
    assert_result(gy_validate_character_def(&b), GY_ERR_INVALID_ARGUMENT);
    b = s;
    b.step_offset = -0.1;
    assert_result(gy_validate_character_def(&b), GY_ERR_INVALID_ARGUMENT);
    b = s;
    b.skin_width = 0;
    assert_result(gy_validate_character_def(&b), GY_ERR_INVALID_ARGUMENT);
    b = s;
    b.skin_width = 0.2; /* not below radius / 2 */
    assert_result(gy_validate_character_def(&b), GY_ERR_INVALID_ARGUMENT);
    b = s;
    b.snap_distance = NAN;
    assert_result(gy_validate_character_def(&b), GY_ERR_NON_FINITE);
    b = s;
    b.radius = INFINITY;
    assert_result(gy_validate_character_def(&b), GY_ERR_NON_FINITE);
}

static void test_character_move_rejects_bad_arguments(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, 2, 0));
    gy_vec3 g = gy_v3(0, -G, 0);
    gy_character_input in = {gy_v3(1, 0, 0), 0};
    gy_character_result r;
    assert_result(gy_character_move(NULL, f->w, f->ch, &f->s, g, &f->st, &in, DT, &r),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_character_move(f->be, f->w, f->ch, &f->s, g, &f->st, &in, 0.0, &r),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_character_move(f->be, f->w, f->ch, &f->s, g, &f->st, &in, NAN, &r),
                  GY_ERR_NON_FINITE);
    assert_result(
        gy_character_move(f->be, f->w, f->ch, &f->s, gy_v3(0, NAN, 0), &f->st, &in, DT, &r),
        GY_ERR_NON_FINITE);
    gy_character_input bad = {gy_v3(INFINITY, 0, 0), 0};
    assert_result(gy_character_move(f->be, f->w, f->ch, &f->s, g, &f->st, &bad, DT, &r),
                  GY_ERR_NON_FINITE);
    bad.intent = gy_v3(0, 0, 0);
    bad.jump = -1;
    assert_result(gy_character_move(f->be, f->w, f->ch, &f->s, g, &f->st, &bad, DT, &r),
                  GY_ERR_INVALID_ARGUMENT);
    gy_character_def s = f->s;
    s.radius = -1;
    assert_result(gy_character_move(f->be, f->w, f->ch, &s, g, &f->st, &in, DT, &r),
                  GY_ERR_INVALID_ARGUMENT);
    /* Nothing moved, nothing remembered. */
    gy_vec3 p = pos_of(f, f->ch);
    assert_near(p.y, 2.0, 0);
    assert_false(f->st.has_position);

    gy_body_id gone = f->ch;
    assert_result(f->be->body_release(f->w, gone), GY_OK);
    assert_result(gy_character_move(f->be, f->w, gone, &f->s, g, &f->st, &in, DT, &r),
                  GY_ERR_STALE_HANDLE);
}

/* ---- ground ---------------------------------------------------------------------------------- */

static void test_character_falls_and_rests_on_the_floor(void **state)
{
    fx *f = *state;
    gy_body_id fl = floor_box(f);
    character(f, gy_v3(0, REST + 0.5, 0));
    tick(f, gy_v3(0, 0, 0));
    assert_false(f->res.grounded);
    settle(f);
    /* Free fall from 0.5 m takes sqrt(2·0.5/g) = 0.32 s; then it rests skin_width above. */
    gy_vec3 p = pos_of(f, f->ch);
    assert_near(p.y, REST, POS_TOL);
    assert_near(p.x, 0, 1e-9);
    assert_int_equal(f->res.ground_body.bits, fl.bits);
    assert_int_equal(f->res.ground_user_data, 0xabc00000000ull | GY_MOTION_STATIC);
    assert_near(f->res.ground_normal.y, 1, 1e-9);
    assert_near(gy_v3_len(f->res.platform_velocity), 0, 0);
    for (int i = 0; i < 60; i++) {
        tick(f, gy_v3(0, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
    /* The body keeps zero velocity; the character's velocity is in the result. */
    gy_body_state bs;
    assert_result(f->be->body_get_state(f->w, f->ch, &bs), GY_OK);
    assert_near(gy_v3_len(bs.linear_velocity), 0, 0);
}

static void test_character_climbs_a_step_lower_than_step_offset(void **state)
{
    fx *f = *state;
    floor_box(f);
    /* A 0.2 m step whose face is at x = 1. */
    box(f, GY_MOTION_STATIC, gy_v3(3, 0.1, 0), gy_v3(4, 0.2, 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 90; i++) {
        tick(f, gy_v3(2, 0, 0));
        assert_true(f->res.grounded);
    }
    gy_vec3 p = pos_of(f, f->ch);
    /* 1.5 s at 2 m/s from x = 0; the climb costs a little ground. */
    assert_between(p.x, 2.5, 3.0 + 1e-6);
    assert_near(p.y, 0.2 + REST, POS_TOL);
}

static void test_character_is_blocked_by_a_step_taller_than_step_offset(void **state)
{
    fx *f = *state;
    floor_box(f);
    box(f, GY_MOTION_STATIC, gy_v3(3, 0.3, 0), gy_v3(4, 0.6, 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 90; i++)
        tick(f, gy_v3(2, 0, 0));
    gy_vec3 p = pos_of(f, f->ch);
    /* Stopped skin_width short of the face at x = 1, still on the floor. */
    assert_near(p.x, 1.0 - RADIUS - SKIN, 2e-3);
    assert_near(p.y, REST, POS_TOL);
    assert_true(f->res.grounded);
}

static void test_character_climbs_and_descends_stairs(void **state)
{
    fx *f = *state;
    floor_box(f);
    /* Eight 0.18 m risers with 0.3 m treads from x = 1; the landing is 1.44 m up. */
    for (int k = 0; k < 8; k++)
        box(f, GY_MOTION_STATIC, gy_v3(3 + 0.3 * k, 0.09 * (k + 1), 0),
            gy_v3(4, 0.18 * (k + 1), 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    double prev = pos_of(f, f->ch).y;
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(2, 0, 0));
        assert_true(f->res.grounded);
        double y = pos_of(f, f->ch).y;
        assert_true(y >= prev - 1e-9); /* never sinks back on the way up */
        prev = y;
    }
    assert_near(pos_of(f, f->ch).y, 1.44 + REST, POS_TOL);
    assert_true(pos_of(f, f->ch).x > 3.5);
    /* Down again at 4 m/s: the ground snap keeps it on every tread. */
    for (int i = 0; i < 75; i++) {
        tick(f, gy_v3(-4, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
}

static void test_character_walks_up_a_30_degree_slope(void **state)
{
    fx *f = *state;
    floor_box(f);
    ramp(f, 30, gy_v3(2, 0, 0));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(2, 0, 0));
        assert_true(f->res.grounded);
    }
    gy_vec3 p = pos_of(f, f->ch);
    double th = 30 * GY_PI / 180;
    /* About 1 s on the flat, then 1 s up the slope at 2 m/s along it (1.73 m/s across). */
    assert_true(p.x > 3.4);
    /* Resting on the plane: the bottom sphere's centre is radius + skin off it along the normal. */
    double expect = (p.x - 2) * tan(th) + (RADIUS + SKIN) / cos(th) + 0.5 * HEIGHT - RADIUS;
    assert_near(p.y, expect, 2e-3);
    assert_near(f->res.ground_normal.y, cos(th), 1e-6);
}

static void test_character_cannot_climb_a_60_degree_slope(void **state)
{
    fx *f = *state;
    floor_box(f);
    ramp(f, 60, gy_v3(2, 0, 0));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(2, 0, 0));
        assert_true(f->res.grounded);
    }
    gy_vec3 p = pos_of(f, f->ch);
    /* The capsule's foot sphere touches the slope near its toe and goes no further up. */
    assert_true(p.x < 2.0);
    assert_near(p.y, REST, POS_TOL);
    /* With max_slope_deg 65 the same slope is walkable. */
    f->s.max_slope_deg = 65;
    for (int i = 0; i < 60; i++)
        tick(f, gy_v3(2, 0, 0));
    assert_true(pos_of(f, f->ch).y > REST + 0.5);
}

static void test_character_slides_down_a_steep_slope(void **state)
{
    fx *f = *state;
    floor_box(f);
    ramp(f, 60, gy_v3(0, 0, 0));
    /* Dropped onto the 60° face 3 m up the slope: it cannot stand there and slides back down. */
    double th = 60 * GY_PI / 180;
    double x0 = 1.5;
    character(f, gy_v3(x0, x0 * tan(th) + 0.4 / cos(th) + 0.6 + 0.2, 0));
    bool touched_slope = false;
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(0, 0, 0));
        if (pos_of(f, f->ch).x < x0 - 0.05)
            touched_slope = true;
        if (f->res.grounded)
            break;
    }
    assert_true(touched_slope);
    assert_true(f->res.grounded);
    gy_vec3 p = pos_of(f, f->ch);
    assert_true(p.x < 0.0); /* back at the toe, on the floor */
    assert_near(p.y, REST, 2e-3);
}

static void test_character_stays_grounded_walking_down_a_20_degree_slope(void **state)
{
    fx *f = *state;
    /* A flat deck for x < 0 (top at y = 0), then a 20° slope down toward +x. */
    box(f, GY_MOTION_STATIC, gy_v3(-5, -0.5, 0), gy_v3(10, 1, 8));
    ramp(f, -20, gy_v3(0, 0, 0));
    character(f, gy_v3(-1, REST, 0));
    settle(f);
    for (int i = 0; i < 90; i++) {
        tick(f, gy_v3(3, 0, 0));
        assert_true(f->res.grounded);
    }
    gy_vec3 p = pos_of(f, f->ch);
    double th = 20 * GY_PI / 180;
    assert_true(p.x > 2.5);
    double expect = -p.x * tan(th) + (RADIUS + SKIN) / cos(th) + 0.5 * HEIGHT - RADIUS;
    assert_near(p.y, expect, 2e-3);
}

static void test_character_snaps_down_a_low_step_but_falls_off_a_high_ledge(void **state)
{
    fx *f = *state;
    /* Deck at y = 0.2 for x < 0, floor at y = 0 beyond: walking off keeps it grounded. */
    box(f, GY_MOTION_STATIC, gy_v3(-5, 0.1, 0), gy_v3(10, 0.2, 8));
    floor_box(f);
    character(f, gy_v3(-1, REST + 0.2, 0));
    settle(f);
    for (int i = 0; i < 60; i++) {
        tick(f, gy_v3(2, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);

    /* A 2 m ledge is beyond the snap distance: it leaves the ground and falls. */
    f->be->world_destroy(f->w);
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.allocator = &f->ta.base;
    assert_result(f->be->world_create(&wd, &f->w), GY_OK);
    assert_result(f->be->bind_thread(f->w), GY_OK);
    box(f, GY_MOTION_STATIC, gy_v3(-5, 1.0, 0), gy_v3(10, 2, 8));
    floor_box(f);
    character(f, gy_v3(-1, REST + 2, 0));
    settle(f);
    bool airborne = false;
    /* 0.5 s to the edge, 0.64 s of fall. */
    for (int i = 0; i < 90; i++) {
        tick(f, gy_v3(2, 0, 0));
        airborne |= !f->res.grounded;
    }
    assert_true(airborne);
    assert_true(f->res.grounded);
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
}

/* ---- jumps and ceilings ---------------------------------------------------------------------- */

static void test_character_jump_peaks_at_v_squared_over_2g_and_lands(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    const double v = 5.0;
    tick_in(f, gy_v3(0, 0, 0), v);
    assert_true(f->res.jumped);
    assert_false(f->res.grounded);
    double peak = pos_of(f, f->ch).y;
    int ticks = 1;
    while (!f->res.grounded && ticks < 120) {
        tick(f, gy_v3(0, 0, 0));
        assert_false(f->res.jumped);
        peak = fmax(peak, pos_of(f, f->ch).y);
        ticks++;
    }
    assert_true(f->res.grounded);
    /* Height v²/2g = 1.274 m (within 10%; the integration is exact, so it is far closer);
     * flight time 2v/g = 1.02 s = 61 ticks. */
    double h = peak - REST;
    assert_near(h, v * v / (2 * G), 0.1 * v * v / (2 * G));
    assert_near(h, v * v / (2 * G), 0.01);
    assert_between(ticks, 59, 63);
    assert_near(pos_of(f, f->ch).y, REST, POS_TOL);
}

static void test_character_held_vertical_intent_jumps_again_on_landing(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    int jumps = 0;
    for (int i = 0; i < 140; i++) {
        tick(f, gy_v3(0, 3, 0));
        jumps += f->res.jumped;
    }
    /* Each hop lasts 2·3/g = 0.61 s (37 ticks) plus the landing tick: 140 ticks hold 3 or 4. */
    assert_between(jumps, 3, 4);
}

static void test_character_ceiling_stops_a_jump_and_is_reported(void **state)
{
    fx *f = *state;
    floor_box(f);
    /* Ceiling underside at y = 2.4: 0.59 m above the head at rest. */
    box(f, GY_MOTION_STATIC, gy_v3(0, 2.9, 0), gy_v3(6, 1, 6));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    tick_in(f, gy_v3(0, 0, 0), 5.0);
    bool ceiling = f->res.hit_ceiling;
    double peak = pos_of(f, f->ch).y;
    int ticks = 1;
    while (!f->res.grounded && ticks < 120) {
        tick(f, gy_v3(0, 0, 0));
        ceiling |= f->res.hit_ceiling;
        peak = fmax(peak, pos_of(f, f->ch).y);
        ticks++;
    }
    assert_true(ceiling);
    assert_near(peak, 2.4 - 0.5 * HEIGHT - SKIN, 2e-3);
    assert_true(f->res.grounded);
    /* Upward speed is removed at the ceiling, so it comes down well before a free jump would. */
    assert_true(ticks < 50);
}

/* ---- platforms ------------------------------------------------------------------------------- */

/* Stands the character on a kinematic platform (top at y = 1.1) and runs `n` ticks with the
 * platform's velocity given by vel(i); checks it stays grounded on the platform with a constant
 * offset. Returns the largest deviation of the offset seen. */
static double ride(fx *f, int n, gy_vec3 (*vel)(int), gy_vec3 intent)
{
    floor_box(f);
    gy_body_id pf = box(f, GY_MOTION_KINEMATIC, gy_v3(0, 1.0, 0), gy_v3(3, 0.2, 3));
    character(f, gy_v3(0, 1.1 + REST, 0));
    settle(f);
    gy_vec3 off0 = gy_v3_sub(pos_of(f, f->ch), pos_of(f, pf));
    double worst = 0;
    for (int i = 0; i < n; i++) {
        assert_result(f->be->body_set_linear_velocity(f->w, pf, vel(i)), GY_OK);
        tick(f, intent);
        assert_true(f->res.grounded);
        assert_int_equal(f->res.ground_body.bits, pf.bits);
        assert_int_equal(f->res.ground_user_data, 0xabc00000000ull | GY_MOTION_KINEMATIC);
        gy_vec3 off = gy_v3_sub(pos_of(f, f->ch), pos_of(f, pf));
        gy_vec3 drift = gy_v3_sub(off, gy_v3_mad(off0, intent, (i + 1) * DT));
        worst = fmax(worst, gy_v3_len(drift));
        assert_near(gy_v3_len(gy_v3_sub(f->res.platform_velocity, vel(i))), 0, 1e-9);
    }
    return worst;
}

static gy_vec3 sideways_with_reversal(int i)
{
    return gy_v3(i < 60 ? 2.0 : -2.0, 0, 0.5);
}

static gy_vec3 up_down_with_reversals(int i)
{
    return gy_v3(0, (i / 40) % 2 == 0 ? 1.5 : -1.5, 0);
}

static void test_character_rides_a_sideways_platform_through_a_reversal(void **state)
{
    fx *f = *state;
    double worst = ride(f, 120, sideways_with_reversal, gy_v3(0, 0, 0));
    assert_true(worst < POS_TOL);
}

static void test_character_rides_an_elevator_up_and_down_through_reversals(void **state)
{
    fx *f = *state;
    double worst = ride(f, 160, up_down_with_reversals, gy_v3(0, 0, 0));
    /* No shake at the reversals and no drop on the way down. */
    assert_true(worst < POS_TOL);
    assert_near(f->res.velocity.y, -1.5, 1e-6);
}

static void test_character_walks_on_a_moving_platform(void **state)
{
    fx *f = *state;
    /* Walking adds to the carry: the offset grows by the walk alone. */
    double worst = ride(f, 40, up_down_with_reversals, gy_v3(0, 0, 0.5));
    assert_true(worst < POS_TOL);
}

/* ---- teleport, pushing, walls, sensors ------------------------------------------------------- */

static void test_character_teleport_then_move_keeps_the_teleport_plus_the_walk(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    tick(f, gy_v3(2, 0, 0));
    /* Teleport, then move in the same tick (no step between). */
    gy_pose to = {gy_v3(5, REST, 3), gy_quat_identity()};
    assert_result(f->be->body_set_pose(f->w, f->ch, to), GY_OK);
    gy_character_input in = {gy_v3(2, 0, 0), 0};
    assert_result(
        gy_character_move(f->be, f->w, f->ch, &f->s, gy_v3(0, -G, 0), &f->st, &in, DT, &f->res),
        GY_OK);
    assert_true(f->res.teleported);
    assert_true(f->res.grounded);
    gy_vec3 p = pos_of(f, f->ch);
    assert_near(p.x, 5 + 2 * DT, 1e-6);
    assert_near(p.y, REST, POS_TOL);
    assert_near(p.z, 3, 1e-9);
    /* As the physics thread orders it: teleport, step, move. The body does not drift in the step
     * (the controller leaves it with zero velocity). */
    to.position = gy_v3(-4, REST, -2);
    assert_result(f->be->body_set_pose(f->w, f->ch, to), GY_OK);
    tick(f, gy_v3(0, 0, 2));
    assert_true(f->res.teleported);
    p = pos_of(f, f->ch);
    assert_near(p.x, -4, 1e-9);
    assert_near(p.z, -2 + 2 * DT, 1e-6);
    tick(f, gy_v3(0, 0, 2));
    assert_false(f->res.teleported);
}

static void test_character_pushes_a_dynamic_crate(void **state)
{
    fx *f = *state;
    floor_box(f);
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = gy_v3(0.6, 0.6, 0.6);
    gy_pose cp = {gy_v3(2, 0.3, 0), gy_quat_identity()};
    gy_body_id crate = body(f, GY_MOTION_DYNAMIC, cp, c, 20.0);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 120; i++) {
        tick(f, gy_v3(1.5, 0, 0));
        assert_true(f->res.grounded);
    }
    gy_vec3 cpos = pos_of(f, crate), p = pos_of(f, f->ch);
    /* Walking at 1.5 m/s for 2 s with 500 N against 98 N of friction: the crate moves on ahead
     * of the character, which stays behind it and on the floor (never climbs it). */
    assert_true(cpos.x > 3.5);
    assert_true(p.x < cpos.x - 0.3 - RADIUS + 0.05);
    assert_true(p.x > 1.5);
    assert_near(p.y, REST, POS_TOL);
    assert_near(cpos.y, 0.3, 0.02);
    assert_near(cpos.z, 0.0, 0.05);
}

static void test_character_slides_along_a_wall_keeping_the_tangential_motion(void **state)
{
    fx *f = *state;
    floor_box(f);
    box(f, GY_MOTION_STATIC, gy_v3(1.5, 1.5, 0), gy_v3(1, 3, 20)); /* face at x = 1 */
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 60; i++)
        tick(f, gy_v3(2, 0, 2));
    gy_vec3 p = pos_of(f, f->ch);
    assert_near(p.x, 1.0 - RADIUS - SKIN, 2e-3);
    assert_near(p.z, 2.0, 1e-3); /* the whole tangential component, all along */
    assert_near(p.y, REST, POS_TOL);
    assert_near(f->res.velocity.z, 2.0, 1e-6);
    assert_near(f->res.velocity.x, 0.0, 1e-6);
}

static void test_character_walks_through_sensors(void **state)
{
    fx *f = *state;
    floor_box(f);
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = gy_v3(1, 3, 4);
    c.is_sensor = true;
    gy_pose sp = {gy_v3(1.5, 1.5, 0), gy_quat_identity()};
    body(f, GY_MOTION_STATIC, sp, c, 0.0);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 60; i++) {
        tick(f, gy_v3(3, 0, 0));
        assert_true(f->res.grounded);
    }
    assert_near(pos_of(f, f->ch).x, 3.0, 1e-6);
}

static void test_character_is_pushed_out_of_a_platform_that_moves_into_it(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, REST, 0));
    settle(f);
    /* A kinematic wall sweeps toward the standing character at 1 m/s. */
    gy_body_id wall = box(f, GY_MOTION_KINEMATIC, gy_v3(-1.0, 1.5, 0), gy_v3(0.4, 3, 4));
    assert_result(f->be->body_set_linear_velocity(f->w, wall, gy_v3(1, 0, 0)), GY_OK);
    for (int i = 0; i < 60; i++)
        tick(f, gy_v3(0, 0, 0));
    double face = pos_of(f, wall).x + 0.2;
    gy_vec3 p = pos_of(f, f->ch);
    /* Kept clear of the wall's face (by up to one tick of its travel), still on the floor. */
    assert_between(p.x - RADIUS - face, 0.0, 1.0 * DT + 2 * SKIN);
    assert_near(p.y, REST, POS_TOL);
}

static void test_character_moves_do_not_allocate(void **state)
{
    fx *f = *state;
    floor_box(f);
    box(f, GY_MOTION_STATIC, gy_v3(3, 0.1, 0), gy_v3(4, 0.2, 4));
    character(f, gy_v3(0, REST, 0));
    settle(f);
    for (int i = 0; i < 60; i++) {
        assert_result(f->be->step(f->w, DT), GY_OK);
        uint64_t before = f->ta.calls;
        gy_character_input in = {gy_v3(2, 0, 0.3), i == 30 ? 3.0 : 0.0};
        assert_result(
            gy_character_move(f->be, f->w, f->ch, &f->s, gy_v3(0, -G, 0), &f->st, &in, DT, &f->res),
            GY_OK);
        assert_int_equal(f->ta.calls, before);
    }
}

/* ---- the set --------------------------------------------------------------------------------- */

static void hook_tick(fx *f, gy_character_group *set, uint64_t t,
                      const gy_physics_character_input *inputs, uint32_t n)
{
    assert_result(f->be->step(f->w, DT), GY_OK);
    gy_physics_step_context sc = {NULL, NULL, f->be, f->w, t, DT, inputs, n};
    gy_character_group_hook(set, &sc);
}

static void test_character_set_registers_and_rejects_misuse(void **state)
{
    fx *f = *state;
    gy_character_group_def d = gy_default_character_group_def();
    d.allocator = &f->ta.base;
    gy_character_group *set = NULL;
    assert_result(gy_character_group_create(&d, NULL), GY_ERR_INVALID_ARGUMENT);
    d.gravity.y = NAN;
    assert_result(gy_character_group_create(&d, &set), GY_ERR_NON_FINITE);
    d.gravity.y = -G;
    assert_result(gy_character_group_create(&d, &set), GY_OK);

    gy_body_id none = {0};
    gy_character_def s = gy_default_character_def();
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){5, 0}, &s, none),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(
        gy_character_group_add(set, (gy_physics_body_ref){GY_PHYSICS_MAX_STORE_INDEX, 1}, &s, none),
        GY_ERR_INVALID_ARGUMENT);
    s.max_slope_deg = NAN;
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){5, 1}, &s, none),
                  GY_ERR_NON_FINITE);
    s = gy_default_character_def();
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){5, 1}, &s, none), GY_OK);
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){5, 2}, &s, none),
                  GY_ERR_MISUSE);
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){700, 3}, &s, none), GY_OK);
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){2, 4}, &s, none), GY_OK);

    gy_character_group_stats st;
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.characters, 3);
    assert_result(gy_character_group_remove(set, (gy_physics_body_ref){5, 2}), GY_ERR_STALE_HANDLE);
    assert_result(gy_character_group_remove(set, (gy_physics_body_ref){5, 1}), GY_OK);
    assert_result(gy_character_group_remove(set, (gy_physics_body_ref){5, 1}), GY_ERR_STALE_HANDLE);
    bool moved = true;
    assert_result(gy_character_group_get(set, (gy_physics_body_ref){5, 1}, NULL, NULL, NULL),
                  GY_ERR_STALE_HANDLE);
    /* The others survived the swap-remove. */
    assert_result(gy_character_group_get(set, (gy_physics_body_ref){700, 3}, NULL, &moved, NULL),
                  GY_OK);
    assert_false(moved);
    assert_result(gy_character_group_get(set, (gy_physics_body_ref){2, 4}, NULL, NULL, NULL),
                  GY_OK);
    s.step_offset = 0.1;
    assert_result(gy_character_group_update(set, (gy_physics_body_ref){2, 4}, &s), GY_OK);
    assert_result(gy_character_group_update(set, (gy_physics_body_ref){2, 5}, &s),
                  GY_ERR_STALE_HANDLE);
    /* Index 5 is free again. */
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){5, 9}, &s, none), GY_OK);
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.characters, 3);

    /* Inputs for unknown characters or another attachment are counted, not applied. */
    gy_physics_character_input in = {{700, 99}, GY_CHARACTER_INTENT, 0, {1, 0, 0}, 0};
    gy_character_group_apply_input(set, &in);
    in.body.index = 12345;
    gy_character_group_apply_input(set, &in);
    in.body.index = 700;
    in.body.generation = 3;
    in.vector.x = NAN;
    gy_character_group_apply_input(set, &in);
    in.vector.x = 1;
    gy_character_group_apply_input(set, &in);
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.inputs_stale, 3);
    assert_int_equal(st.inputs_applied, 1);

    gy_character_group_destroy(set);
    gy_character_group_destroy(NULL);
}

static void test_character_set_hook_applies_a_jump_in_exactly_one_tick(void **state)
{
    fx *f = *state;
    floor_box(f);
    character(f, gy_v3(0, REST, 0));
    gy_character_group_def d = gy_default_character_group_def();
    d.allocator = &f->ta.base;
    gy_character_group *set = NULL;
    assert_result(gy_character_group_create(&d, &set), GY_OK);
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){7, 70}, &f->s, f->ch), GY_OK);

    uint64_t t = 0;
    gy_character_result last;
    bool moved = false;
    hook_tick(f, set, ++t, NULL, 0);
    assert_result(gy_character_group_get(set, (gy_physics_body_ref){7, 70}, &last, &moved, NULL),
                  GY_OK);
    assert_true(moved);
    assert_true(last.grounded);

    /* Walk intent and a jump in the same batch: the jump is used once, the intent persists. */
    gy_physics_character_input in[2] = {
        {{7, 70}, GY_CHARACTER_INTENT, 0, {1.2, 0, 0}, 0},
        {{7, 70}, GY_CHARACTER_JUMP, 0, {0, 0, 0}, 4.0},
    };
    hook_tick(f, set, ++t, in, 2);
    assert_result(gy_character_group_get(set, (gy_physics_body_ref){7, 70}, &last, NULL, NULL),
                  GY_OK);
    assert_true(last.jumped);
    int jumps = 1, ticks = 1;
    while (ticks < 200) {
        hook_tick(f, set, ++t, NULL, 0); /* no more inputs */
        assert_result(gy_character_group_get(set, (gy_physics_body_ref){7, 70}, &last, NULL, NULL),
                      GY_OK);
        jumps += last.jumped;
        ticks++;
    }
    assert_int_equal(jumps, 1);
    assert_true(last.grounded);
    /* The intent kept walking it for all 200 ticks. */
    assert_near(pos_of(f, f->ch).x, 1.2 * 200 * DT, 1e-6);

    gy_character_group_stats st;
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.moves, t);
    assert_int_equal(st.move_errors, 0);
    assert_int_equal(st.inputs_applied, 2);

    /* A released body: the hook skips the character and counts the failure. */
    assert_result(f->be->body_release(f->w, f->ch), GY_OK);
    hook_tick(f, set, ++t, NULL, 0);
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.move_errors, 1);
    gy_character_group_destroy(set);
}

/* ---- through the physics thread -------------------------------------------------------------- */

typedef struct replies {
    gy_reply r[512];
    uint32_t count;
} replies;

static void on_reply(void *ctx, const gy_reply *r)
{
    replies *rs = ctx;
    if (r->type == GY_PHYSICS_REPLY_CHARACTER_STATE && rs->count < 512)
        rs->r[rs->count++] = *r;
}

static void test_character_runs_as_the_physics_hook(void **state)
{
    fx *f = *state;
    gy_character_group_def cd = gy_default_character_group_def();
    gy_character_group *set = NULL;
    assert_result(gy_character_group_create(&cd, &set), GY_OK);
    gy_body_id none = {0};
    /* Registered before start: the thread that runs the hook is created after this. */
    assert_result(gy_character_group_add(set, (gy_physics_body_ref){1, 11}, &f->s, none), GY_OK);

    gy_physics_def pd = gy_default_physics_def();
    pd.lockstep = true;
    pd.allocator = &f->ta.base;
    pd.move_characters = gy_character_group_hook;
    pd.character_ctx = set;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&pd, &p), GY_OK);

    gy_collider_def floor_c = gy_default_collider_def();
    floor_c.shape.type = GY_SHAPE_BOX;
    floor_c.shape.box_size = gy_v3(40, 1, 40);
    gy_collider_def char_c = gy_default_collider_def();
    char_c.shape.type = GY_SHAPE_CAPSULE;
    char_c.shape.radius = RADIUS;
    char_c.shape.height = HEIGHT;
    gy_physics_body_def bodies[2];
    memset(bodies, 0, sizeof bodies);
    bodies[0].def = gy_default_body_def();
    bodies[0].def.type = GY_MOTION_STATIC;
    bodies[0].def.pose.position = gy_v3(0, -0.5, 0);
    bodies[0].colliders = &floor_c;
    bodies[0].collider_count = 1;
    bodies[1].def = gy_default_body_def();
    bodies[1].def.type = GY_MOTION_KINEMATIC;
    bodies[1].def.pose.position = gy_v3(0, REST + 0.3, 0);
    bodies[1].colliders = &char_c;
    bodies[1].collider_count = 1;
    gy_physics_bootstrap boot = {NULL, 0, bodies, 2, NULL, 0, NULL, NULL, NULL};
    p->game.ids.next = 10; /* the start issues generations 10 and 11, in list order */
    assert_result(gy_physics_start(p, &boot), GY_OK);

    static replies rs;
    memset(&rs, 0, sizeof rs);
    assert_result(gy_physics_step(p, 40, 20000000000ull), GY_OK);
    gy_physics_drain_replies(p, on_reply, &rs);
    assert_true(rs.count >= 39);
    const gy_character_reply *cr = gy_reply_as_character(&rs.r[rs.count - 1]);
    assert_int_equal(rs.r[rs.count - 1].key, 1);
    assert_int_equal(cr->generation, 11);
    assert_true(cr->flags & GY_CHARACTER_GROUNDED);
    assert_true(cr->flags & GY_CHARACTER_ON_BODY);
    assert_int_equal(cr->ground.index, 0);
    assert_int_equal(cr->ground.generation, 10);
    assert_near(cr->ground_normal[1], 1.0, 1e-6);

    const gy_proxy *const *px = NULL;
    uint32_t n = 0;
    uint64_t tick = 0;
    assert_result(gy_physics_read_proxies(p, &px, &n, &tick, NULL), GY_OK);
    assert_true(n >= 2);
    assert_near(gy_proxy_in(px, 1)->position[1], REST, 2e-3);

    /* Teleport and walk in the same batch: the move starts at the teleported spot. */
    gy_pose to = {gy_v3(4, REST, -2), gy_quat_identity()};
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 11}, to), GY_OK);
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){1, 11}, gy_v3(3, 0, 0), 0),
        GY_OK);
    assert_result(gy_physics_step(p, 1, 20000000000ull), GY_OK);
    assert_result(gy_physics_read_proxies(p, &px, &n, &tick, NULL), GY_OK);
    assert_near(gy_proxy_in(px, 1)->position[0], 4 + 3 * DT, 1e-4);
    assert_near(gy_proxy_in(px, 1)->position[1], REST, 2e-3);
    assert_near(gy_proxy_in(px, 1)->position[2], -2, 1e-5);

    /* A jump recorded once is applied once. */
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){1, 11}, gy_v3(0, 0, 0), 0),
        GY_OK);
    assert_result(gy_physics_record_character_jump(p, (gy_physics_body_ref){1, 11}, 4.0), GY_OK);
    rs.count = 0;
    gy_physics_drain_replies(p, on_reply, &rs);
    rs.count = 0;
    assert_result(gy_physics_step(p, 90, 20000000000ull), GY_OK);
    gy_physics_drain_replies(p, on_reply, &rs);
    uint32_t jumped = 0, airborne = 0;
    for (uint32_t i = 0; i < rs.count; i++) {
        const gy_character_reply *c = gy_reply_as_character(&rs.r[i]);
        jumped += (c->flags & GY_CHARACTER_JUMPED) != 0;
        airborne += (c->flags & GY_CHARACTER_GROUNDED) == 0;
    }
    assert_int_equal(rs.count, 90);
    assert_int_equal(jumped, 1);
    /* 2·4/g = 0.82 s in the air: 48 or 49 ticks. */
    assert_between(airborne, 47, 50);
    assert_true(gy_reply_as_character(&rs.r[rs.count - 1])->flags & GY_CHARACTER_GROUNDED);

    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
    gy_character_group_stats st;
    gy_character_group_get_stats(set, &st);
    assert_int_equal(st.move_errors, 0);
    assert_int_equal(st.replies_failed, 0);
    gy_character_group_destroy(set);
}

typedef struct events {
    uint32_t enter, exit;
    uint32_t enter_tick, exit_tick;
} events;

static void on_event(void *ctx, const gy_reply *r)
{
    events *ev = ctx;
    if (r->type != GY_PHYSICS_REPLY_COLLISION_ENTER && r->type != GY_PHYSICS_REPLY_COLLISION_EXIT)
        return;
    const gy_physics_collision *c = gy_reply_as_collision(r);
    bool pair = (c->generation_a == 11 && c->generation_b == 12) ||
                (c->generation_a == 12 && c->generation_b == 11);
    if (!pair)
        return;
    if (r->type == GY_PHYSICS_REPLY_COLLISION_ENTER) {
        if (ev->enter++ == 0)
            ev->enter_tick = c->tick;
    } else if (ev->exit++ == 0) {
        ev->exit_tick = c->tick;
    }
}

/* The subsystem's own controller (the character travels with its create command) reports the
 * trigger in the tick the move enters it and the tick the move leaves it. */
static void test_character_walking_through_a_trigger_produces_enter_and_exit(void **state)
{
    fx *f = *state;
    gy_physics_def pd = gy_default_physics_def();
    pd.lockstep = true;
    pd.allocator = &f->ta.base;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&pd, &p), GY_OK);

    gy_collider_def cols[3];
    for (int i = 0; i < 3; i++)
        cols[i] = gy_default_collider_def();
    cols[0].shape.type = GY_SHAPE_BOX;
    cols[0].shape.box_size = gy_v3(40, 1, 40);
    cols[1].shape.type = GY_SHAPE_CAPSULE;
    cols[1].shape.radius = RADIUS;
    cols[1].shape.height = HEIGHT;
    cols[2].shape.type = GY_SHAPE_BOX;
    /* x from 1.52 to 2.52: off the 5 cm grid the walk moves on, so no tick ends exactly touching
     * a face (where whether the overlap counts is up to rounding). */
    cols[2].shape.box_size = gy_v3(1, 3, 4);
    cols[2].is_sensor = true;
    gy_vec3 at[3] = {{0, -0.5, 0}, {0, REST, 0}, {2.02, 1.5, 0}};
    gy_motion_type type[3] = {GY_MOTION_STATIC, GY_MOTION_KINEMATIC, GY_MOTION_STATIC};
    gy_physics_body_def bodies[3];
    memset(bodies, 0, sizeof bodies);
    for (uint32_t i = 0; i < 3; i++) {
        bodies[i].def = gy_default_body_def();
        bodies[i].def.type = type[i];
        bodies[i].def.pose.position = at[i];
        bodies[i].colliders = &cols[i];
        bodies[i].collider_count = 1;
    }
    bodies[1].character = &f->s;
    gy_physics_bootstrap boot = {NULL, 0, bodies, 3, NULL, 0, NULL, NULL, NULL};
    p->game.ids.next = 10; /* the start issues generations 10, 11 and 12, in list order */
    assert_result(gy_physics_start(p, &boot), GY_OK);
    assert_result(gy_physics_step(p, 2, 20000000000ull), GY_OK);
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){1, 11}, gy_v3(3, 0, 0), 0),
        GY_OK);
    events ev;
    memset(&ev, 0, sizeof ev);
    uint32_t inside_tick = 0, outside_tick = 0;
    for (int i = 0; i < 80; i++) {
        assert_result(gy_physics_step(p, 1, 20000000000ull), GY_OK);
        const gy_proxy *const *px = NULL;
        uint32_t n = 0;
        uint64_t tick = 0;
        assert_result(gy_physics_read_proxies(p, &px, &n, &tick, NULL), GY_OK);
        double x = gy_proxy_in(px, 1)->position[0];
        if (inside_tick == 0 && x + RADIUS > 1.52)
            inside_tick = (uint32_t)tick;
        if (outside_tick == 0 && x - RADIUS > 2.52)
            outside_tick = (uint32_t)tick;
        gy_physics_drain_replies(p, on_event, &ev);
    }
    assert_int_equal(ev.enter, 1);
    assert_int_equal(ev.exit, 1);
    assert_true(inside_tick > 0 && outside_tick > inside_tick);
    /* The pair is decided by an overlap where the move left the capsule, not by the step's
     * contacts (found before the move): ENTER and EXIT land in the very tick. */
    assert_int_equal(ev.enter_tick, inside_tick);
    assert_int_equal(ev.exit_tick, outside_tick);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_character_settings_defaults_and_validation),
        cmocka_unit_test_setup_teardown(test_character_move_rejects_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_falls_and_rests_on_the_floor, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_character_climbs_a_step_lower_than_step_offset, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_character_is_blocked_by_a_step_taller_than_step_offset,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_climbs_and_descends_stairs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_walks_up_a_30_degree_slope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_cannot_climb_a_60_degree_slope, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_character_slides_down_a_steep_slope, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_stays_grounded_walking_down_a_20_degree_slope, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_snaps_down_a_low_step_but_falls_off_a_high_ledge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_jump_peaks_at_v_squared_over_2g_and_lands,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_held_vertical_intent_jumps_again_on_landing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_ceiling_stops_a_jump_and_is_reported, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_character_rides_a_sideways_platform_through_a_reversal,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_rides_an_elevator_up_and_down_through_reversals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_walks_on_a_moving_platform, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_teleport_then_move_keeps_the_teleport_plus_the_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_pushes_a_dynamic_crate, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_slides_along_a_wall_keeping_the_tangential_motion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_walks_through_sensors, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_is_pushed_out_of_a_platform_that_moves_into_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_moves_do_not_allocate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_set_registers_and_rejects_misuse, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_character_set_hook_applies_a_jump_in_exactly_one_tick,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_runs_as_the_physics_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_character_walking_through_a_trigger_produces_enter_and_exit, setup, teardown),
    };
    return cmocka_run_group_tests_name("character", tests, NULL, NULL);
}
