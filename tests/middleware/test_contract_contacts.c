/* The middleware contract for bodies carried by or sliding on other bodies' surfaces (conveyor
 * belts, boxes on boxes), checked against one adapter named on the command
 * line (argv[1]; an optional argv[2] is a cmocka test-name filter), through the public headers
 * only, so every adapter runs this file unchanged.
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

#define DT      (1.0 / 60.0)
#define GRAVITY 9.81

#include "contract_fixture.h"

static gy_collider_def box_def(gy_vec3 size, double friction)
{
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_BOX;
    cd.shape.box_size = size;
    cd.material.friction = friction;
    return cd;
}

/* A static body of one collider at `p`, turned `yaw` radians about +Y. */
static gy_body_id make_static(fixture *fx, gy_vec3 p, double yaw, const gy_collider_def *cd)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    bd.pose.position = p;
    bd.pose.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), yaw);
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, cd, 1, &id, NULL), GY_OK);
    return id;
}

/* A dynamic body of one collider at `p`, turned `yaw` radians about +Y: undamped and never
 * asleep, so what it does is the contacts' doing alone. */
static gy_body_id make_rider(fixture *fx, gy_vec3 p, double yaw, const gy_collider_def *cd)
{
    gy_body_def bd = gy_default_body_def();
    bd.pose.position = p;
    bd.pose.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), yaw);
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, cd, 1, &id, NULL), GY_OK);
    return id;
}

static gy_body_state state_of(fixture *fx, gy_body_id b)
{
    gy_body_state s;
    assert_result(fx->be->body_get_state(fx->w, b, &s), GY_OK);
    return s;
}

static void step_n(fixture *fx, int n)
{
    for (int i = 0; i < n; i++)
        assert_result(fx->be->step(fx->w, DT), GY_OK);
}

/* The angle (rad) between a body's local +Y and the world's. */
static double tilt_of(gy_quat q)
{
    gy_vec3 up = gy_quat_rotate(q, gy_v3(0, 1, 0));
    return acos(fmax(-1.0, fmin(1.0, up.y)));
}

/* What a rider did over a run of steps. */
typedef struct ride {
    double max_turn_rate; /* largest angle turned over a 1 s window, per second (rad/s) */
    double max_slip;      /* largest |v − v_expected|, m/s */
    double max_tilt;      /* largest tilt of local +Y, rad */
    double max_vertical;  /* largest |v_y|, m/s */
} ride;

/* The angle (rad) of the rotation from `a` to `b`. */
static double turned(gy_quat a, gy_quat b)
{
    gy_quat d = gy_quat_mul(b, gy_quat_conj(a));
    return 2.0 * acos(fmin(1.0, fabs(d.w)));
}

/* Steps `seconds` whole seconds, watching body `b` against the velocity `v_expected`. */
static ride watch(fixture *fx, gy_body_id b, gy_vec3 v_expected, int seconds)
{
    const int per_second = 60;
    ride r = {0};
    gy_quat window_start = state_of(fx, b).pose.rotation;
    for (int i = 1; i <= seconds * per_second; i++) {
        step_n(fx, 1);
        gy_body_state s = state_of(fx, b);
        r.max_slip = fmax(r.max_slip, gy_v3_len(gy_v3_sub(s.linear_velocity, v_expected)));
        r.max_tilt = fmax(r.max_tilt, tilt_of(s.pose.rotation));
        r.max_vertical = fmax(r.max_vertical, fabs(s.linear_velocity.y));
        if (i % per_second == 0) {
            r.max_turn_rate = fmax(r.max_turn_rate, turned(window_start, s.pose.rotation));
            window_start = s.pose.rotation;
        }
    }
    return r;
}

/* ---- conveyors ------------------------------------------------------------------------------ */

/* A 0.5 m crate set down at rest on a 60 m × 4 m belt (a static box whose surface moves at
 * `speed` m/s along its local +X), the belt turned `belt_yaw` and the crate `crate_yaw` about +Y,
 * both μ 0.5. After 1 s (friction's 4.9 m/s² brings the crate to the belt's speed within
 * 0.41 s) the crate is watched for 4 s. */
static ride ride_belt(fixture *fx, double speed, double belt_yaw, double crate_yaw)
{
    gy_collider_def bc = box_def(gy_v3(60, 1, 4), 0.5);
    bc.surface_velocity = gy_v3(speed, 0, 0);
    gy_body_id belt = make_static(fx, gy_v3(0, -0.5, 0), belt_yaw, &bc);
    gy_collider_def cc = box_def(gy_v3(0.5, 0.5, 0.5), 0.5);
    gy_body_id crate = make_rider(fx, gy_v3(0, 0.25, 0), crate_yaw, &cc);
    step_n(fx, 60);
    gy_vec3 v_belt =
        gy_quat_rotate(gy_quat_axis_angle(gy_v3(0, 1, 0), belt_yaw), gy_v3(speed, 0, 0));
    ride r = watch(fx, crate, v_belt, 4);
    print_message("belt %.0f m/s at %.0f deg, crate at %.0f deg: turns %.3g rad/s, slips %.3g m/s, "
                  "tilts %.3g rad\n",
                  speed, belt_yaw * 180.0 / GY_PI, crate_yaw * 180.0 / GY_PI, r.max_turn_rate,
                  r.max_slip, r.max_tilt);
    assert_result(fx->be->body_release(fx->w, crate), GY_OK);
    assert_result(fx->be->body_release(fx->w, belt), GY_OK);
    return r;
}

static void test_contract_conveyor_rider_moves_with_the_belt_without_spinning(void **state)
{
    fixture *fx = *state;
    /* Belts along X, along Z, at 30° with the crate square to it and turned 17° on it, and a
     * stopped belt: the same crate rides each. */
    const double cases[][3] = {{2.0, 0.0, 0.0},
                               {2.0, 0.5 * GY_PI, 0.0},
                               {2.0, GY_PI / 6.0, 0.0},
                               {2.0, GY_PI / 6.0, 0.3},
                               {0.0, GY_PI / 6.0, 0.3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ride r = ride_belt(fx, cases[i][0], cases[i][1], cases[i][2]);
        /* Analytic: once it has the belt's speed the crate rides it like the ground, at rest
         * relative to it, flat and unturning. Friction can change the crate's velocity by up to
         * μ g h = 8.2 cm/s in a 60 Hz step; a hundredth of that bounds what the solver may leave
         * between crate and belt. Level: its corners within 0.05 mm of one another across its
         * 0.5 m (a tenth of the contact layer; a crate rocking from corner to corner tilts by
         * millimetres). It turns, in any second, by less than 2e-4 rad. */
        assert_between(r.max_slip, 0.0, 0.01 * 0.5 * GRAVITY * DT);
        assert_between(r.max_tilt, 0.0, 1e-4);
        assert_between(r.max_turn_rate, 0.0, 2e-4);
    }
}

/* ---- boxes sliding on boxes ----------------------------------------------------------------- */

/* A 1 m box, created resting on a static 40 m box, both μ 0.5, given 5 m/s along `deg` degrees
 * from +X; returns its travel along that heading after 1.5 s, its travel across it in *side and
 * what it did on the way in *r. */
static double slide_on_box(fixture *fx, double deg, double *side, ride *r)
{
    const double v0 = 5.0, a = deg * GY_PI / 180.0;
    gy_collider_def gc = box_def(gy_v3(40, 1, 40), 0.5);
    gy_body_id ground = make_static(fx, gy_v3(0, -0.5, 0), 0.0, &gc);
    gy_collider_def cc = box_def(gy_v3(1, 1, 1), 0.5);
    gy_body_id box = make_rider(fx, gy_v3(0, 0.5, 0), 0.0, &cc);
    step_n(fx, 10);
    gy_vec3 start = state_of(fx, box).pose.position;
    gy_vec3 dir = gy_v3(cos(a), 0.0, sin(a));
    assert_result(fx->be->body_set_linear_velocity(fx->w, box, gy_v3_scale(dir, v0)), GY_OK);
    /* 1.5 s: the slide stops after v0/(μ g) = 1.02 s. */
    *r = watch(fx, box, gy_v3(0, 0, 0), 1);
    ride rest = watch(fx, box, gy_v3(0, 0, 0), 1);
    r->max_tilt = fmax(r->max_tilt, rest.max_tilt);
    r->max_vertical = fmax(r->max_vertical, rest.max_vertical);
    gy_body_state s = state_of(fx, box);
    gy_vec3 d = gy_v3_sub(s.pose.position, start);
    double along = gy_v3_dot(d, dir);
    *side = gy_v3_len(gy_v3_sub(gy_v3(d.x, 0.0, d.z), gy_v3_scale(dir, along)));
    assert_near(gy_v3_len(s.linear_velocity), 0.0, 1e-3);
    assert_result(fx->be->body_release(fx->w, box), GY_OK);
    assert_result(fx->be->body_release(fx->w, ground), GY_OK);
    return along;
}

static void test_contract_box_slides_on_a_box_flat_for_the_coulomb_distance(void **state)
{
    fixture *fx = *state;
    const double v0 = 5.0, mu = 0.5, want = v0 * v0 / (2.0 * mu * GRAVITY);
    const double angles[] = {0.0, 30.0, 60.0};
    for (int i = 0; i < 3; i++) {
        double side;
        ride r;
        double d = slide_on_box(fx, angles[i], &side, &r);
        print_message("box on a box at %.0f deg: %.4f m along (analytic %.4f), %.4f m across, "
                      "tilts %.3g deg, rises or sinks at %.3g m/s\n",
                      angles[i], d, want, side, r.max_tilt * 180.0 / GY_PI, r.max_vertical);
        /* Coulomb friction stops the slide after v0²/(2 μ g) = 2.548 m on its heading; stepped
         * at 60 Hz it falls short by up to v0 h / 2: held to one step of travel, v0 h = 8.3 cm,
         * and to 1 cm across its heading (as on a plane). */
        assert_near(d, want, v0 * DT);
        assert_near(side, 0.0, 0.01);
        /* A box sliding on a flat face stays flat and neither rises nor sinks. Its corners may
         * differ by twice the 0.5 mm contact layer across its 1 m (1e-3 rad, 0.057°), and it may
         * settle into that layer at the adapters' contact ERP (at most 0.4 × 0.5 mm per 60 Hz
         * step, 1.2 cm/s). A box rocking from corner to corner tilts and bobs by more. */
        assert_between(r.max_tilt, 0.0, 1e-3);
        assert_between(r.max_vertical, 0.0, 0.4 * 5e-4 / DT);
    }
}

/* A crate resting on a floor of 20 × 20 static tiles falls as soon as every tile is released in
 * one go, and released statics leave nothing behind (the teardown counts the blocks): the tiles'
 * pairs with the crate go with them. */
static void test_contract_floor_of_statics_released_under_a_resting_crate_lets_it_fall(void **state)
{
    fixture *fx = *state;
    gy_collider_def tile = box_def(gy_v3(1, 0.2, 1), 0.5);
    gy_body_id tiles[400];
    for (int i = 0; i < 400; i++)
        tiles[i] = make_static(fx, gy_v3(i % 20 - 9.5, -0.1, i / 20 - 9.5), 0.0, &tile);
    gy_collider_def crate_cd = box_def(gy_v3(1, 1, 1), 0.5);
    gy_body_id crate = make_rider(fx, gy_v3(0.5, 0.5, 0.5), 0.0, &crate_cd);
    step_n(fx, 60);
    /* At rest on the tiles (within the contact layer and a little settling). */
    assert_near(state_of(fx, crate).pose.position.y, 0.5, 0.01);
    for (int i = 0; i < 400; i++)
        assert_result(fx->be->body_release(fx->w, tiles[i]), GY_OK);
    step_n(fx, 30);
    /* Half a second of free fall: g t² / 2 = 1.23 m (within a step's travel). */
    double fallen = 0.5 - state_of(fx, crate).pose.position.y;
    assert_near(fallen, 0.5 * GRAVITY * 0.25, GRAVITY * 0.5 * DT);
    assert_result(fx->be->body_release(fx->w, crate), GY_OK);
}

/* A crate jointed to a static box it overlaps is not pushed out of it: jointed bodies do not
 * collide, a static included. */
static void test_contract_crate_jointed_to_an_overlapping_static_is_not_pushed_out(void **state)
{
    fixture *fx = *state;
    gy_collider_def wall_cd = box_def(gy_v3(1, 1, 1), 0.5);
    gy_body_id wall = make_static(fx, gy_v3(0, 0, 0), 0.0, &wall_cd);
    gy_collider_def crate_cd = box_def(gy_v3(1, 1, 1), 0.5);
    gy_body_id crate = make_rider(fx, gy_v3(0.5, 0, 0), 0.0, &crate_cd);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = crate;
    jd.b = wall;
    jd.anchor = gy_v3(0.5, 0, 0);
    gy_joint_id j = {0};
    assert_result(fx->be->joint_create(fx->w, &jd, &j), GY_OK);
    step_n(fx, 30);
    /* Held at its anchor by the joint alone: a contact would push it 0.5 m sideways. */
    gy_vec3 p = state_of(fx, crate).pose.position;
    assert_near(p.x, 0.5, 0.01);
    assert_near(p.z, 0.0, 0.01);
    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    assert_result(fx->be->body_release(fx->w, crate), GY_OK);
    assert_result(fx->be->body_release(fx->w, wall), GY_OK);
}

/* The first step of crates set down on static tiles, with each of its allocations refused in
 * turn: a refused step reports GY_ERR_OUT_OF_MEMORY, and once memory is there again the world
 * carries on: the crates come to rest on their tiles, and releasing everything leaves nothing
 * behind (the teardown counts the blocks). */
static void test_contract_step_refused_for_memory_as_crates_meet_statics_recovers(void **state)
{
    fixture *fx = *state;
    gy_collider_def tile = box_def(gy_v3(1, 0.2, 1), 0.5);
    gy_collider_def crate_cd = box_def(gy_v3(0.5, 0.5, 0.5), 0.5);
    gy_body_id tiles[16], crates[16];
    for (int i = 0; i < 16; i++) {
        gy_vec3 at = gy_v3(2.0 * (i % 4), -0.1, 2.0 * (i / 4));
        tiles[i] = make_static(fx, at, 0.0, &tile);
        crates[i] = make_rider(fx, gy_v3(at.x, 0.249, at.z), 0.0, &crate_cd);
    }
    uint32_t refused = 0;
    bool stepped = false;
    for (uint64_t k = 1; k <= 256 && !stepped; k++) {
        fx->ta.fail_at = fx->ta.calls + k;
        gy_result r = fx->be->step(fx->w, DT);
        fx->ta.fail_at = 0;
        if (r == GY_OK) {
            stepped = true;
        } else {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused++;
        }
    }
    assert_true(stepped);
    assert_true(refused > 0);
    step_n(fx, 60);
    for (int i = 0; i < 16; i++) {
        gy_body_state s = state_of(fx, crates[i]);
        assert_near(s.pose.position.x, 2.0 * (i % 4), 0.01);
        assert_near(s.pose.position.y, 0.25, 0.01);
        assert_near(gy_v3_len(s.linear_velocity), 0.0, 0.01);
    }
    for (int i = 0; i < 16; i++) {
        assert_result(fx->be->body_release(fx->w, crates[i]), GY_OK);
        assert_result(fx->be->body_release(fx->w, tiles[i]), GY_OK);
    }
}

#define CONTACTS_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "surface contact contract");
    if (status != 0)
        return status;
    const struct CMUnitTest tests[] = {
        CONTACTS_TEST(test_contract_conveyor_rider_moves_with_the_belt_without_spinning),
        CONTACTS_TEST(test_contract_box_slides_on_a_box_flat_for_the_coulomb_distance),
        CONTACTS_TEST(test_contract_floor_of_statics_released_under_a_resting_crate_lets_it_fall),
        CONTACTS_TEST(test_contract_crate_jointed_to_an_overlapping_static_is_not_pushed_out),
        CONTACTS_TEST(test_contract_step_refused_for_memory_as_crates_meet_statics_recovers),
    };
    return cmocka_run_group_tests_name("surface contact contract", tests, NULL, NULL);
}
