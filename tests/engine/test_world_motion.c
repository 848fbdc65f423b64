/* Bodies moved and changed at run time through the World, for one adapter named on the command
 * line (argv[1]): kinematic moves, gravity and torque, sleep and wake, the kill plane. Each
 * physical claim is checked against its analytic answer with the tolerance stated beside it. */
#include "test_world_fixture.h"

static const char *backend_name;

typedef struct motion_world {
    gy_test_allocator ta;
    gy_world *world;
} motion_world;

/* A lockstep World on the adapter under test, gravity `g`. */
static gy_world *open_world(motion_world *mw, gy_vec3 g)
{
    gy_test_allocator_init(&mw->ta);
    gy_world_def c = wfx_config(&mw->ta, true);
    c.physics.backend = backend_name;
    c.physics.world.gravity = g;
    mw->world = wfx_world_with(&c);
    return mw->world;
}

static void close_world(motion_world *mw)
{
    wfx_destroy(mw->world, &mw->ta);
}

static gy_entity body_at(gy_world *w, const char *name, gy_vec3 position, wfx_desc d)
{
    gy_entity e = wfx_entity(w, name, position);
    wfx_add(w, e, d);
    return e;
}

/* Proxies carry floats: a pose component of a few metres is exact to about 5e-7 m. */
#define FLOAT_POSE 2e-6

static void assert_vec_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

/* The angle between two rotations, radians. */
static double rotation_gap(gy_quat a, gy_quat b)
{
    double d = fabs(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
    return 2.0 * acos(fmin(1.0, d));
}

/* ---- kinematic moves ------------------------------------------------------------------------- */

/* A move of 1 s at 60 Hz takes 60 steps at constant velocity: half-way after 30, exactly on the
 * target after 60, then at rest there. */
static void test_move_kinematic_arrives_exactly_at_constant_velocity(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    gy_entity k =
        body_at(w, "platform", gy_v3(0, 1, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(2, 0.2, 2)));
    wfx_tick(w, 2);
    gy_pose target = {gy_v3(3, 2, -1), gy_quat_axis_angle(gy_v3(0, 1, 0), GY_PI / 2)};
    assert_result(gy_body_move_kinematic(w, k, target, 1.0), GY_OK);
    wfx_tick(w, 30);
    gy_physics_state st = wfx_state(w, k);
    assert_vec_near(st.pose.position, gy_v3(1.5, 1.5, -0.5), FLOAT_POSE);
    assert_vec_near(st.linear_velocity, gy_v3(3, 1, -1), 1e-4);
    assert_vec_near(st.angular_velocity, gy_v3(0, GY_PI / 2, 0), 1e-4);
    assert_near(rotation_gap(st.pose.rotation, gy_quat_axis_angle(gy_v3(0, 1, 0), GY_PI / 4)), 0.0,
                1e-5);
    wfx_tick(w, 30);
    st = wfx_state(w, k);
    assert_vec_near(st.pose.position, target.position, FLOAT_POSE);
    assert_near(rotation_gap(st.pose.rotation, target.rotation), 0.0, 1e-5);
    assert_vec_near(st.linear_velocity, gy_v3(0, 0, 0), 1e-9);
    assert_vec_near(st.angular_velocity, gy_v3(0, 0, 0), 1e-9);
    wfx_tick(w, 30);
    st = wfx_state(w, k);
    assert_vec_near(st.pose.position, target.position, FLOAT_POSE);
    close_world(&mw);
}

/* Duration 0 is the next step: the body is on the target one tick later. */
static void test_move_kinematic_zero_duration_takes_one_step(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    gy_entity k =
        body_at(w, "platform", gy_v3(0, 1, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1)));
    wfx_tick(w, 2);
    gy_pose target = {gy_v3(0.5, 1, 0), gy_quat_identity()};
    assert_result(gy_body_move_kinematic(w, k, target, 0.0), GY_OK);
    wfx_tick(w, 1);
    assert_vec_near(wfx_state(w, k).pose.position, target.position, FLOAT_POSE);
    wfx_tick(w, 5);
    assert_vec_near(wfx_state(w, k).pose.position, target.position, FLOAT_POSE);
    close_world(&mw);
}

/* A crate resting on a lift rises with it by the lift's travel: 2 m up at 1 m/s. The solver
 * carries it through the contact, which it resolves once per step, so while the lift moves the
 * crate's rise is within one step of the lift's travel (1 m/s / 60 Hz = 17 mm) of the lift's
 * (ODE keeps it on the lift; Bullet's contact lifts it one step ahead); at rest again it sits on
 * the lift as before, to within 2 mm (the contacts' rest penetration). A teleported lift leaves
 * the crate behind to fall. */
static void test_move_kinematic_lift_carries_the_crate_its_travel(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    gy_entity lift =
        body_at(w, "lift", gy_v3(0, 0.5, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(2, 0.2, 2)));
    wfx_desc cd = wfx_box(GY_BODY_DYNAMIC, gy_v3(0.5, 0.5, 0.5));
    cd.desc.body.mass = 10;
    gy_entity crate = body_at(w, "crate", gy_v3(0, 0.86, 0), cd);
    wfx_tick(w, 60);
    double lift0 = wfx_state(w, lift).pose.position.y;
    double crate0 = wfx_state(w, crate).pose.position.y;
    assert_near(crate0 - lift0, 0.35, 0.01);
    gy_pose up = {gy_v3(0, 2.5, 0), gy_quat_identity()};
    assert_result(gy_body_move_kinematic(w, lift, up, 2.0), GY_OK);
    for (int t = 0; t < 120; t++) {
        wfx_tick(w, 1);
        double rise_lift = wfx_state(w, lift).pose.position.y - lift0;
        double rise_crate = wfx_state(w, crate).pose.position.y - crate0;
        assert_near(rise_lift, (t + 1) / 60.0, FLOAT_POSE);
        assert_near(rise_crate, rise_lift, 1.0 / 60.0 + FLOAT_POSE);
    }
    wfx_tick(w, 90);
    assert_near(wfx_state(w, lift).pose.position.y, 2.5, FLOAT_POSE);
    assert_near(wfx_state(w, crate).pose.position.y - crate0, 2.0, 0.002);
    assert_near(wfx_state(w, crate).pose.position.x, 0.0, 0.002);

    gy_pose back = {gy_v3(0, 4.5, 0), gy_quat_identity()};
    assert_result(gy_body_teleport(w, lift, back), GY_OK);
    wfx_tick(w, 120);
    /* Left behind: it falls to the ground (top y = 0) and rests there, half its size up. */
    assert_near(wfx_state(w, crate).pose.position.y, 0.25, 0.01);
    close_world(&mw);
}

/* A wall moved by velocity pushes a crate on the ground ahead of it. */
static void test_move_kinematic_pushes_what_it_meets(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    gy_entity wall =
        body_at(w, "wall", gy_v3(-2, 0.5, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(0.2, 1, 2)));
    gy_entity crate =
        body_at(w, "crate", gy_v3(0, 0.25, 0), wfx_box(GY_BODY_DYNAMIC, gy_v3(0.5, 0.5, 0.5)));
    wfx_tick(w, 30);
    gy_pose to = {gy_v3(1, 0.5, 0), gy_quat_identity()};
    assert_result(gy_body_move_kinematic(w, wall, to, 1.0), GY_OK);
    wfx_tick(w, 60);
    /* The wall's front face is at x = 1.1: the crate's centre is at least half a crate beyond
     * (less the contact's penetration, under 1 cm). */
    assert_true(wfx_state(w, crate).pose.position.x >= 1.1 + 0.25 - 0.01);
    close_world(&mw);
}

/* A teleport during a move ends it: the body stays where it was put, at rest. */
static void test_move_kinematic_ends_at_a_teleport(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    gy_entity k =
        body_at(w, "platform", gy_v3(0, 1, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1)));
    wfx_tick(w, 2);
    assert_result(gy_body_move_kinematic(w, k, (gy_pose){gy_v3(10, 1, 0), gy_quat_identity()}, 1.0),
                  GY_OK);
    wfx_tick(w, 10);
    assert_result(gy_body_teleport(w, k, (gy_pose){gy_v3(0, 5, 0), gy_quat_identity()}), GY_OK);
    wfx_tick(w, 60);
    gy_physics_state st = wfx_state(w, k);
    assert_vec_near(st.pose.position, gy_v3(0, 5, 0), FLOAT_POSE);
    assert_vec_near(st.linear_velocity, gy_v3(0, 0, 0), 1e-9);
    close_world(&mw);
}

static void test_move_kinematic_refuses_other_bodies_and_bad_input(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    gy_entity k =
        body_at(w, "platform", gy_v3(0, 1, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1)));
    gy_entity d = wfx_ball(w, "ball", gy_v3(3, 1, 0));
    gy_entity s = body_at(w, "wall", gy_v3(6, 1, 0), wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    gy_scene_collider cap = gy_default_scene_collider(gy_capsule(0.3, 1.8));
    gy_physics_component_def cd = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &cap);
    cd.is_character = true;
    gy_entity ch;
    assert_result(gy_body_create(w, gy_v3(-4, 1, 0), &cd, &ch), GY_OK);
    wfx_tick(w, 2);
    gy_pose to = {gy_v3(1, 1, 0), gy_quat_identity()};
    uint64_t before = wfx_physics_stats(w).commands_applied;
    assert_result(gy_body_move_kinematic(w, d, to, 1.0), GY_ERR_INVALID_MOTION);
    assert_result(gy_body_move_kinematic(w, s, to, 1.0), GY_ERR_INVALID_MOTION);
    assert_result(gy_body_move_kinematic(w, ch, to, 1.0), GY_ERR_INVALID_MOTION);
    assert_result(gy_body_move_kinematic(w, k, to, -0.5), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_body_move_kinematic(w, k, to, NAN), GY_ERR_NON_FINITE);
    assert_result(gy_body_move_kinematic(w, k, to, 1e12), GY_ERR_INVALID_ARGUMENT);
    gy_pose bad = {gy_v3(NAN, 0, 0), gy_quat_identity()};
    assert_result(gy_body_move_kinematic(w, k, bad, 1.0), GY_ERR_NON_FINITE);
    assert_result(gy_body_move_kinematic(w, gy_entity_null(), to, 1.0), GY_ERR_STALE_HANDLE);
    gy_entity bare = wfx_entity(w, "bare", gy_v3(0, 0, 0));
    assert_result(gy_body_move_kinematic(w, bare, to, 1.0), GY_ERR_MISUSE);
    wfx_tick(w, 2);
    /* Nothing was recorded: no command reached the physics thread, the platform did not move. */
    assert_int_equal(wfx_physics_stats(w).commands_applied, before);
    assert_vec_near(wfx_state(w, k).pose.position, gy_v3(0, 1, 0), FLOAT_POSE);
    close_world(&mw);
}

/* ---- gravity and torque ---------------------------------------------------------------------- */

/* Ticks until the body sleeps (at most `limit`); fails if it never does. */
static void tick_until_asleep(gy_world *w, gy_entity e, uint32_t limit)
{
    for (uint32_t t = 0; t < limit; t++) {
        if (!wfx_state(w, e).awake)
            return;
        wfx_tick(w, 1);
    }
    fail_msg("the body did not fall asleep in %u ticks", limit);
}

/* A crate asleep on the ground wakes when gravity turns to point up and sideways, lifts off and
 * falls along it: after N steps of dt, v = g N dt and the displacement is ½ g t² to within the
 * integrator's lead of at most ½ g dt t (semi-implicit Euler, x = g dt² N (N + 1) / 2, leads by
 * exactly that; Bullet lands on ½ g t²). A ball asleep in mid-air (put to sleep) wakes too. */
static void test_set_gravity_wakes_sleepers_and_gives_half_g_t_squared(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    gy_entity crate =
        body_at(w, "crate", gy_v3(0, 0.5, 0), wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    gy_entity ball = wfx_ball(w, "ball", gy_v3(5, 3, 0));
    wfx_tick(w, 2);
    assert_result(gy_body_set_awake(w, ball, false), GY_OK);
    tick_until_asleep(w, crate, 600);
    assert_false(wfx_state(w, ball).awake);
    gy_vec3 p0 = wfx_state(w, crate).pose.position;
    gy_vec3 g = gy_v3(3, 4, -2);
    assert_result(gy_world_set_gravity(w, g), GY_OK);
    const uint32_t n = 60;
    const double t = n * WFX_DT;
    wfx_tick(w, n);
    gy_physics_state st = wfx_state(w, crate);
    assert_true(st.awake);
    assert_vec_near(st.linear_velocity, gy_v3_scale(g, t), 1e-4);
    const double lead = 0.5 * WFX_DT * t; /* per m/s² of gravity */
    gy_vec3 moved = gy_v3_sub(st.pose.position, p0);
    assert_near(moved.x, 0.5 * g.x * t * t, fabs(g.x) * lead + FLOAT_POSE);
    assert_near(moved.y, 0.5 * g.y * t * t, fabs(g.y) * lead + FLOAT_POSE);
    assert_near(moved.z, 0.5 * g.z * t * t, fabs(g.z) * lead + FLOAT_POSE);
    st = wfx_state(w, ball);
    assert_true(st.awake);
    assert_vec_near(st.linear_velocity, gy_v3_scale(g, t), 1e-4);
    assert_true(gy_world_gravity(w).x == 3.0);
    assert_result(gy_world_set_gravity(w, gy_v3(NAN, 0, 0)), GY_ERR_NON_FINITE);
    assert_result(gy_world_set_gravity(w, gy_v3(1e300, 0, 0)), GY_ERR_INVALID_ARGUMENT);
    assert_true(gy_world_gravity(w).x == 3.0);
    close_world(&mw);
}

/* A box of 6 kg and 1 x 2 x 3 m has principal moments I = m (b² + c²) / 12: 6.5 kg·m² about x,
 * 5 about y. A torque of 13 N·m about x (10 about y) for 30 steps gives α = τ / I = 2 rad/s², so
 * ω = 2 × 0.5 s = 1 rad/s about that axis alone (a turn about a principal axis has no gyroscopic
 * torque). A torque wakes a sleeping body. */
static void test_apply_torque_gives_tau_over_inertia(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, 0, 0));
    wfx_desc d = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 2, 3));
    d.desc.body.mass = 6;
    gy_entity bx = body_at(w, "spun_x", gy_v3(0, 0, 0), d);
    gy_entity by = body_at(w, "spun_y", gy_v3(10, 0, 0), d);
    wfx_tick(w, 2);
    assert_result(gy_body_set_awake(w, by, false), GY_OK);
    wfx_tick(w, 1);
    assert_false(wfx_state(w, by).awake);
    for (int i = 0; i < 30; i++) {
        assert_result(gy_body_apply_torque(w, bx, gy_v3(13, 0, 0)), GY_OK);
        assert_result(gy_body_apply_torque(w, by, gy_v3(0, 10, 0)), GY_OK);
        wfx_tick(w, 1);
    }
    assert_vec_near(wfx_state(w, bx).angular_velocity, gy_v3(1, 0, 0), 1e-4);
    assert_vec_near(wfx_state(w, by).angular_velocity, gy_v3(0, 1, 0), 1e-4);
    assert_true(wfx_state(w, by).awake);
    /* Nothing after the torque stops: the spin stays. */
    wfx_tick(w, 30);
    assert_vec_near(wfx_state(w, bx).angular_velocity, gy_v3(1, 0, 0), 1e-4);
    close_world(&mw);
}

/* ---- sleep and wake -------------------------------------------------------------------------- */

#define MAX_BODY_EVENTS 64

typedef struct body_events {
    gy_body_event ev[MAX_BODY_EVENTS];
    uint32_t count;
} body_events;

static void record_body_event(void *ctx, gy_world *w, const gy_body_event *ev)
{
    (void)w;
    body_events *r = ctx;
    if (r->count < MAX_BODY_EVENTS)
        r->ev[r->count++] = *ev;
}

/* A crate dropped on the ground reports one SLEEP when it comes to rest, a WAKE when pushed, and
 * a SLEEP again when put to sleep by the game; never an event at its creation. The events carry
 * the tick the proxies show the change at. */
static void test_sleep_and_wake_are_reported_as_they_happen(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    gy_entity crate = wfx_entity(w, "crate", gy_v3(0, 1, 0));
    body_events rec = {0};
    assert_result(gy_entity_set_body_callback(w, crate, record_body_event, &rec), GY_OK);
    wfx_add(w, crate, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    wfx_tick(w, 2);
    assert_int_equal(rec.count, 0);
    tick_until_asleep(w, crate, 600);
    assert_int_equal(rec.count, 1);
    assert_int_equal(rec.ev[0].kind, GY_BODY_EVENT_SLEEP);
    assert_true(gy_entity_equal(rec.ev[0].entity, crate));
    assert_int_equal(rec.ev[0].tick, wfx_state(w, crate).tick);
    wfx_tick(w, 30);
    assert_int_equal(rec.count, 1); /* asleep is not reported again */
    assert_result(gy_body_apply_impulse(w, crate, gy_v3(0, 20, 0)), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(rec.count, 2);
    assert_int_equal(rec.ev[1].kind, GY_BODY_EVENT_WAKE);
    assert_true(wfx_state(w, crate).awake);
    wfx_tick(w, 5);
    assert_result(gy_body_set_awake(w, crate, false), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(rec.count, 3);
    assert_int_equal(rec.ev[2].kind, GY_BODY_EVENT_SLEEP);
    assert_false(wfx_state(w, crate).awake);
    assert_result(gy_body_set_awake(w, crate, true), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(rec.count, 4);
    assert_int_equal(rec.ev[3].kind, GY_BODY_EVENT_WAKE);
    /* Cleared: nothing more is delivered. */
    assert_result(gy_entity_set_body_callback(w, crate, NULL, NULL), GY_OK);
    assert_result(gy_body_set_awake(w, crate, false), GY_OK);
    wfx_tick(w, 2);
    assert_int_equal(rec.count, 4);
    assert_result(gy_entity_set_body_callback(w, gy_entity_null(), record_body_event, &rec),
                  GY_ERR_STALE_HANDLE);
    close_world(&mw);
}

/* A body created asleep hangs where it was put, with no event, until something touches it: a
 * ball dropped onto it wakes it (WAKE) and both fall. Another is woken by the game. */
static void test_start_asleep_hangs_until_touched_or_woken(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    wfx_desc d = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    d.desc.start_asleep = true;
    gy_entity hung = wfx_entity(w, "hung", gy_v3(0, 3, 0));
    gy_entity woken = wfx_entity(w, "woken", gy_v3(5, 3, 0));
    body_events rec = {0};
    assert_result(gy_entity_set_body_callback(w, hung, record_body_event, &rec), GY_OK);
    assert_result(gy_entity_set_body_callback(w, woken, record_body_event, &rec), GY_OK);
    wfx_add(w, hung, d);
    wfx_add(w, woken, d);
    assert_false(wfx_state(w, hung).awake);
    wfx_tick(w, 60);
    assert_int_equal(rec.count, 0);
    assert_near(wfx_state(w, hung).pose.position.y, 3.0, FLOAT_POSE);
    assert_false(wfx_state(w, hung).awake);
    /* A ball from 1 m above its top: it lands after sqrt(2 / g) = 0.45 s. */
    wfx_ball(w, "ball", gy_v3(0, 4.5 + 0.5, 0));
    assert_result(gy_body_set_awake(w, woken, true), GY_OK);
    wfx_tick(w, 60);
    assert_int_equal(rec.count, 2);
    for (uint32_t i = 0; i < rec.count; i++)
        assert_int_equal(rec.ev[i].kind, GY_BODY_EVENT_WAKE);
    assert_true(wfx_state(w, hung).pose.position.y < 2.9);
    assert_true(wfx_state(w, woken).pose.position.y < 2.9);
    /* Only a Dynamic body starts asleep. */
    wfx_desc k = wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1));
    k.desc.start_asleep = true;
    gy_entity ke = wfx_entity(w, "k", gy_v3(9, 3, 0));
    assert_result(gy_body_add(w, ke, wfx_d(&k)), GY_ERR_INVALID_ARGUMENT);
    close_world(&mw);
}

/* ---- the kill plane -------------------------------------------------------------------------- */

/* Collision and body events in one ordered log. */
typedef struct event_log {
    char kinds[64]; /* 'E'nter, 'S'tay, 'X' exit, 'K'illed */
    uint32_t count;
    gy_entity killed;
    uint64_t killed_tick;
} event_log;

static void log_collision(void *ctx, gy_world *w, const gy_collision_event *e)
{
    (void)w;
    event_log *l = ctx;
    if (e->kind != GY_COLLISION_STAY && l->count + 1 < sizeof l->kinds)
        l->kinds[l->count++] = e->kind == GY_COLLISION_ENTER ? 'E' : 'X';
}

static void log_body(void *ctx, gy_world *w, const gy_body_event *e)
{
    (void)w;
    event_log *l = ctx;
    if (e->kind == GY_BODY_EVENT_KILLED && l->count + 1 < sizeof l->kinds) {
        l->kinds[l->count++] = 'K';
        l->killed = e->entity;
        l->killed_tick = e->tick;
    }
}

/* A ball resting on the ground (centre 0.5) is below a kill plane raised to 1 m: at the end of
 * the next tick it is destroyed with its child, its pair's EXIT delivered before KILLED, and the
 * adapter holds nothing of it (the teardown's leak check). A body created below the plane goes at
 * the end of its first tick. Static and Kinematic bodies stay. */
static void test_kill_plane_removes_bodies_below_it_after_their_exits(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    wfx_ground(w);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 0.5, 0));
    gy_entity_def cd = gy_default_entity_def();
    cd.name = "badge";
    cd.parent = ball;
    gy_entity badge;
    assert_result(gy_entity_create(w, &cd, &badge), GY_OK);
    event_log log = {0};
    assert_result(gy_entity_set_collision_callback(w, ball, log_collision, &log), GY_OK);
    assert_result(gy_entity_set_body_callback(w, ball, log_body, &log), GY_OK);
    gy_entity wall = body_at(w, "wall", gy_v3(5, 0.5, 0), wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    gy_entity lift =
        body_at(w, "lift", gy_v3(-5, 0.5, 0), wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1)));
    wfx_tick(w, 30);
    assert_true(gy_entity_is_valid(w, ball));
    assert_string_equal(log.kinds, "E");

    assert_result(gy_world_set_kill_plane(w, true, NAN), GY_ERR_NON_FINITE);
    assert_result(gy_world_set_kill_plane(w, true, 1e300), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_world_set_kill_plane(w, true, 1.0), GY_OK);
    wfx_tick(w, 1);
    assert_false(gy_entity_is_valid(w, ball));
    assert_false(gy_entity_is_valid(w, badge));
    assert_string_equal(log.kinds, "EXK");
    assert_true(gy_entity_equal(log.killed, ball));
    assert_true(log.killed_tick > 0);
    assert_true(gy_entity_is_valid(w, wall) && gy_entity_is_valid(w, lift));

    gy_entity deep = wfx_ball(w, "deep", gy_v3(3, -20, 0));
    event_log deep_log = {0};
    assert_result(gy_entity_set_body_callback(w, deep, log_body, &deep_log), GY_OK);
    wfx_tick(w, 1);
    assert_false(gy_entity_is_valid(w, deep));
    assert_string_equal(deep_log.kinds, "K");
    wfx_tick(w, 5);
    assert_int_equal(wfx_physics_stats(w).bodies, 3); /* ground, wall, lift */
    close_world(&mw);
}

/* The plane tests the centre of mass, not the origin: two equal spheres 4 m apart on a body whose
 * origin is at the lower one have their centre 2 m up. A character is tested at its capsule. */
static void test_kill_plane_tests_the_centre_of_mass(void **state)
{
    (void)state;
    motion_world mw;
    gy_world *w = open_world(&mw, gy_v3(0, -9.81, 0));
    assert_result(gy_world_set_kill_plane(w, true, 0.0), GY_OK);
    gy_scene_collider cols[2] = {gy_default_scene_collider(gy_sphere(0.5)),
                                 gy_default_scene_collider(gy_sphere(0.5))};
    cols[1].def.local_pose.position = gy_v3(0, 4, 0);
    gy_physics_component_def d = gy_default_physics_component_def();
    d.colliders = cols;
    d.collider_count = 2;
    d.start_asleep = true; /* it must not fall during the test */
    gy_entity above, below;
    assert_result(gy_body_create(w, gy_v3(0, -1.5, 0), &d, &above), GY_OK); /* centre y 0.5 */
    assert_result(gy_body_create(w, gy_v3(5, -2.5, 0), &d, &below), GY_OK); /* centre y -0.5 */
    gy_scene_collider cap = gy_default_scene_collider(gy_capsule(0.3, 1.8));
    gy_physics_component_def chd = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &cap);
    chd.is_character = true;
    gy_entity hero;
    assert_result(gy_body_create(w, gy_v3(-5, -3, 0), &chd, &hero), GY_OK);
    wfx_tick(w, 1);
    assert_true(gy_entity_is_valid(w, above));
    assert_false(gy_entity_is_valid(w, below));
    assert_false(gy_entity_is_valid(w, hero));
    assert_result(gy_world_set_kill_plane(w, false, NAN), GY_OK); /* y unread when off */
    close_world(&mw);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BACKEND [TEST_NAME_FILTER]\n", argv[0]);
        return 2;
    }
    backend_name = argv[1];
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_move_kinematic_arrives_exactly_at_constant_velocity),
        cmocka_unit_test(test_move_kinematic_zero_duration_takes_one_step),
        cmocka_unit_test(test_move_kinematic_lift_carries_the_crate_its_travel),
        cmocka_unit_test(test_move_kinematic_pushes_what_it_meets),
        cmocka_unit_test(test_move_kinematic_ends_at_a_teleport),
        cmocka_unit_test(test_move_kinematic_refuses_other_bodies_and_bad_input),
        cmocka_unit_test(test_set_gravity_wakes_sleepers_and_gives_half_g_t_squared),
        cmocka_unit_test(test_apply_torque_gives_tau_over_inertia),
        cmocka_unit_test(test_sleep_and_wake_are_reported_as_they_happen),
        cmocka_unit_test(test_start_asleep_hangs_until_touched_or_woken),
        cmocka_unit_test(test_kill_plane_removes_bodies_below_it_after_their_exits),
        cmocka_unit_test(test_kill_plane_tests_the_centre_of_mass),
    };
    return cmocka_run_group_tests_name("world motion", tests, NULL, NULL);
}
