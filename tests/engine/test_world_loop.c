/* The host loop: render interpolation (continuity, creation pose, teleports), results older than
 * a game-side write, one-off inputs delivered exactly once under a flood of commands (real time),
 * time scale and hold, the update callback, and the orderly teardown. */
#include "test_world_fixture.h"

#include <pthread.h>
#include "gyre/backend/backend.h"

#define G 9.81

/* Height after n lockstep ticks of a ball dropped from rest at y0 (free fall, no damping). */
static double fall(double y0, double n)
{
    return y0 - G * (n * WFX_DT) * (n * WFX_DT) / 2.0;
}

/* ---- interpolation --------------------------------------------------------------------------- */

static void test_loop_interpolation_is_continuous(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 100, 0));
    const double frame = WFX_DT * 0.37; /* a host running at ~162 Hz */
    double prev_y = 100.0;
    double host_time = 0.0;
    for (uint32_t f = 0; f < 400; f++) {
        assert_result(gy_world_tick(w, frame), GY_OK);
        host_time += frame;
        uint64_t n = gy_world_physics_tick(w);
        double alpha = gy_world_interpolation_alpha(w);
        /* The accumulator fraction is what the host clock has beyond the ticks run. */
        assert_near(alpha, (host_time - (double)n * WFX_DT) / WFX_DT, 1e-9);
        double y = wfx_render_pose(w, ball).position.y;
        /* Rendered between the last two ticks' results (proxies are floats). */
        double expect = n == 0
                            ? 100.0
                            : fall(100.0, (double)n - 1.0) +
                                  alpha * (fall(100.0, (double)n) - fall(100.0, (double)n - 1.0));
        assert_near(y, expect, 2e-4);
        /* Never backwards, never more than the fastest speed allows in one frame. */
        assert_true(y <= prev_y + 1e-9);
        assert_true(prev_y - y <= G * (host_time + WFX_DT) * frame + 1e-4);
        prev_y = y;
    }
    wfx_destroy(w, NULL);
}

static void test_loop_new_body_shows_its_creation_pose(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    wfx_tick(w, 5);
    const double frame = WFX_DT * 0.5;
    assert_result(gy_world_tick(w, frame), GY_OK); /* alpha is now 0.5 */
    gy_entity ball = wfx_ball(w, "late", gy_v3(1, 7, 0));
    gy_pose r = wfx_render_pose(w, ball);
    assert_near(r.position.y, 7.0, 0.0);
    assert_near(r.position.x, 1.0, 0.0);
    /* First result in: drawn between the creation pose and it, never jumping past. */
    assert_result(gy_world_tick(w, frame), GY_OK);
    r = wfx_render_pose(w, ball);
    assert_between(r.position.y, fall(7.0, 1.0) - 1e-5, 7.0);
    double last = r.position.y;
    for (uint32_t f = 0; f < 20; f++) {
        assert_result(gy_world_tick(w, frame), GY_OK);
        double y = wfx_render_pose(w, ball).position.y;
        assert_true(y <= last + 1e-9);
        assert_true(last - y < 0.05);
        last = y;
    }
    wfx_destroy(w, NULL);
}

static void test_loop_teleport_is_not_interpolated(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 100, 0));
    const double frame = WFX_DT * 0.6;
    for (uint32_t f = 0; f < 51; f++)
        assert_result(gy_world_tick(w, frame), GY_OK);
    gy_pose to = {gy_v3(30, 200, 0), gy_quat_identity()};
    assert_result(gy_body_teleport(w, ball, to), GY_OK);
    /* Drawn at the teleport at once, whatever alpha is. */
    assert_true(gy_world_interpolation_alpha(w) > 0.0);
    gy_pose r = wfx_render_pose(w, ball);
    assert_near(r.position.x, 30.0, 0.0);
    assert_near(r.position.y, 200.0, 0.0);
    /* Then continuous from there: no frame goes back towards the old pose. */
    double last = 200.0;
    for (uint32_t f = 0; f < 30; f++) {
        assert_result(gy_world_tick(w, frame), GY_OK);
        r = wfx_render_pose(w, ball);
        assert_near(r.position.x, 30.0, 1e-4);
        assert_true(r.position.y <= last + 1e-9);
        assert_true(last - r.position.y < 0.2);
        last = r.position.y;
    }
    wfx_destroy(w, NULL);
}

/* Real time: the physics thread publishes on its own, so frames published before a teleport was
 * drained keep arriving. None of them may move the entity back. */
static void test_loop_results_older_than_a_teleport_never_win(void **state)
{
    (void)state;
    gy_world_def c = wfx_config(NULL, false);
    gy_world *w = wfx_world_with(&c);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 0, 0));
    /* Let it fall for a while (real time). */
    double t0 = gy_test_now();
    while (gy_test_now() - t0 < 0.25)
        assert_result(gy_world_tick(w, 0.001), GY_OK);
    assert_true(wfx_world_pose(w, ball).position.y < -0.05);
    uint64_t stale = 0;
    for (uint32_t round = 0; round < 5; round++) {
        double up = 1000.0 * (round + 1);
        gy_pose to = {gy_v3(0, up, 0), gy_quat_identity()};
        assert_result(gy_body_teleport(w, ball, to), GY_OK);
        double t1 = gy_test_now();
        while (gy_test_now() - t1 < 0.08) {
            assert_result(gy_world_tick(w, 0.0005), GY_OK);
            double y = wfx_world_pose(w, ball).position.y;
            /* Only the teleport and what fell from it since: at most ~0.1 s of fall. */
            if (!(y <= up && y > up - 1.0))
                fail_msg("round %u: y = %.6g after a teleport to %.6g", round, y, up);
        }
        gy_world_stats ws;
        gy_world_get_stats(w, &ws);
        stale = ws.stale_proxies;
    }
    /* The check above is the test; this notes whether the race was actually exercised. */
    print_message("stale proxies ignored: %llu\n", (unsigned long long)stale);
    wfx_destroy(w, NULL);
}

/* ---- one-off inputs under a flood (real time) ------------------------------------------------ */

typedef struct jump_counter {
    uint64_t jumps; /* JUMP inputs the hook saw */
    uint64_t intents;
    uint64_t ticks_with_inputs;
} jump_counter;

static void count_inputs(void *ctx, const gy_physics_step_context *sc)
{
    jump_counter *jc = ctx;
    uint64_t j = 0, i = 0;
    for (uint32_t k = 0; k < sc->input_count; k++) {
        j += sc->inputs[k].kind == GY_CHARACTER_JUMP;
        i += sc->inputs[k].kind == GY_CHARACTER_INTENT;
    }
    __atomic_add_fetch(&jc->jumps, j, __ATOMIC_RELAXED);
    __atomic_add_fetch(&jc->intents, i, __ATOMIC_RELAXED);
    if (sc->input_count)
        __atomic_add_fetch(&jc->ticks_with_inputs, 1, __ATOMIC_RELAXED);
}

typedef struct applied_wait {
    gy_world *w;
    uint64_t commands;
} applied_wait;

static bool all_applied(void *ctx)
{
    applied_wait *a = ctx;
    gy_physics_stats s;
    gy_physics_get_stats(gy_world_physics(a->w), &s);
    return s.commands_applied + s.commands_failed + s.commands_dropped_stale >= a->commands;
}

typedef struct jump_wait {
    jump_counter *jc;
    uint64_t want;
} jump_wait;

static bool jumps_seen(void *ctx)
{
    jump_wait *j = ctx;
    return __atomic_load_n(&j->jc->jumps, __ATOMIC_RELAXED) >= j->want &&
           __atomic_load_n(&j->jc->intents, __ATOMIC_RELAXED) >= j->want;
}

typedef struct aw_ticks {
    gy_physics *p;
    uint64_t want;
} aw_ticks;

static bool ticks_reached(void *ctx)
{
    aw_ticks *a = ctx;
    return gy_physics_tick(a->p) >= a->want;
}

static void test_loop_one_off_inputs_reach_exactly_one_tick_under_a_flood(void **state)
{
    (void)state;
    jump_counter jc;
    memset(&jc, 0, sizeof jc);
    gy_world_def c = wfx_config(NULL, false);
    c.physics.world.gravity = gy_v3(0, 0, 0);
    c.physics.move_characters = count_inputs;
    c.physics.character_ctx = &jc;
    gy_world *w = wfx_world_with(&c);
    enum { CROWD = 150, FRAMES = 400 };
    gy_entity crowd[CROWD];
    for (uint32_t i = 0; i < CROWD; i++)
        crowd[i] = wfx_ball(w, NULL, gy_v3((double)(i % 15) * 3.0, 0, (double)(i / 15) * 3.0));
    gy_entity target = wfx_ball(w, "target", gy_v3(0, 50, 0));
    gy_entity hero = wfx_entity(w, "hero", gy_v3(0, 80, 0));
    gy_shape cap;
    memset(&cap, 0, sizeof cap);
    cap.type = GY_SHAPE_CAPSULE;
    cap.radius = 0.3;
    cap.height = 1.8;
    wfx_desc hd = wfx_shape(GY_BODY_KINEMATIC, cap);
    hd.desc.is_character = true;
    wfx_add(w, hero, hd);
    wfx_tick(w, 1);
    double m = 1000.0 * 4.0 / 3.0 * GY_PI * 0.125;
    const double j = 0.01; /* m/s per impulse */
    uint64_t recorded = 0;
    for (uint32_t f = 0; f < FRAMES; f++) {
        /* The flood: velocity writes on every other body, several per frame. */
        for (uint32_t k = 0; k < 4; k++)
            for (uint32_t i = 0; i < CROWD; i++) {
                assert_result(gy_body_set_linear_velocity(w, crowd[i], gy_v3(0, 0, 0)), GY_OK);
                recorded++;
            }
        assert_result(gy_body_apply_impulse(w, target, gy_v3(m * j, 0, 0)), GY_OK);
        assert_result(gy_character_jump(w, hero, 4.0), GY_OK);
        assert_result(gy_character_set_intent(w, hero, gy_v3(1, 0, 0), 0), GY_OK);
        recorded += 3;
        /* Frames at varying rates: several batches per physics tick, and ticks with none. */
        assert_result(gy_world_tick(w, f % 7 == 0 ? 0.02 : 0.001), GY_OK);
    }
    /* Every command recorded so far (plus the initial creates) must be applied, and the inputs
     * handed to a step (inputs drained by an iteration that ran no step wait for the next). The
     * host keeps ticking meanwhile: batches that found the rings full wait game-side until a
     * later publish carries them over. */
    applied_wait aw = {w, recorded + CROWD + 2};
    jump_wait jw = {&jc, FRAMES};
    double t0 = gy_test_now();
    while (!(all_applied(&aw) && jumps_seen(&jw)) && gy_test_now() - t0 < 20.0)
        assert_result(gy_world_tick(w, 0.001), GY_OK);
    if (!all_applied(&aw)) {
        gy_physics_stats ps = wfx_physics_stats(w);
        fail_msg("applied %llu + failed %llu + stale %llu of %llu",
                 (unsigned long long)ps.commands_applied, (unsigned long long)ps.commands_failed,
                 (unsigned long long)ps.commands_dropped_stale, (unsigned long long)aw.commands);
    }
    assert_true(jumps_seen(&jw));
    /* A few more ticks: a duplicate would show up now. */
    aw_ticks at = {gy_world_physics(w), gy_physics_tick(gy_world_physics(w)) + 3};
    assert_true(gy_test_wait_until(ticks_reached, &at, 20.0));
    /* One more frame, so the last impulse's result is synced. */
    uint64_t tick = gy_physics_tick(gy_world_physics(w));
    while (gy_world_physics_tick(w) <= tick)
        assert_result(gy_world_tick(w, 0.001), GY_OK);
    assert_near(wfx_state(w, target).linear_velocity.x, FRAMES * j, 1e-4);
    assert_int_equal(__atomic_load_n(&jc.jumps, __ATOMIC_RELAXED), FRAMES);
    assert_int_equal(__atomic_load_n(&jc.intents, __ATOMIC_RELAXED), FRAMES);
    wfx_destroy(w, NULL);
}

/* ---- time ------------------------------------------------------------------------------------ */

static void test_loop_time_scale_and_hold_in_lockstep(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    wfx_ball(w, "ball", gy_v3(0, 10, 0));
    wfx_tick(w, 10);
    assert_int_equal(gy_world_physics_tick(w), 10);
    assert_result(gy_world_set_time_scale(w, 0.5), GY_OK);
    wfx_tick(w, 10);
    assert_int_equal(gy_world_physics_tick(w), 15);
    assert_result(gy_world_set_time_scale(w, 0.0), GY_OK);
    wfx_tick(w, 10);
    assert_int_equal(gy_world_physics_tick(w), 15);
    assert_result(gy_world_set_time_scale(w, NAN), GY_ERR_NON_FINITE);
    assert_result(gy_world_set_time_scale(w, -1.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_world_set_time_scale(w, 1.0), GY_OK);
    gy_world_set_hold(w, true);
    wfx_tick(w, 10);
    assert_int_equal(gy_world_physics_tick(w), 15);
    gy_world_set_hold(w, false);
    /* Held time is not caught up. */
    assert_result(gy_world_tick(w, 0.21), GY_OK);   /* 12.6 steps owed */
    assert_int_equal(gy_world_physics_tick(w), 19); /* max_catchup_steps = 4, the rest dropped */
    wfx_tick(w, 1);
    assert_int_equal(gy_world_physics_tick(w), 20);
    wfx_destroy(w, NULL);
}

typedef struct host_clock {
    uint64_t ns;
} host_clock;

static uint64_t host_now(void *ctx)
{
    return __atomic_load_n(&((host_clock *)ctx)->ns, __ATOMIC_ACQUIRE);
}

typedef struct iterations_wait {
    gy_world *w;
    uint64_t until;
} iterations_wait;

static bool iterations_reached(void *ctx)
{
    iterations_wait *iw = ctx;
    return wfx_physics_stats(iw->w).iterations >= iw->until;
}

/* Waits until the physics thread has completed `n` more iterations. */
static void wait_iterations(gy_world *w, uint64_t n)
{
    iterations_wait iw = {w, wfx_physics_stats(w).iterations + n};
    assert_true(gy_test_wait_until(iterations_reached, &iw, 20.0));
}

/* Feeds the physics thread one step of host time per frame, `frames` times, waiting for an
 * iteration to read each. */
static void feed_host_time(gy_world *w, host_clock *clk, uint32_t frames)
{
    const uint64_t step_ns = 16666667ull;
    for (uint32_t i = 0; i < frames; i++) {
        __atomic_fetch_add(&clk->ns, step_ns, __ATOMIC_ACQ_REL);
        assert_result(gy_world_tick(w, WFX_DT), GY_OK);
        wait_iterations(w, 2);
    }
}

static void test_loop_fractional_time_scale_in_real_time(void **state)
{
    (void)state;
    for (uint32_t k = 0; k < gy_backend_count(); k++) {
        host_clock clk = {1000000000ull};
        gy_world_def c = wfx_config(NULL, false);
        c.physics.backend = gy_backend_at(k)->name;
        c.physics.clock = host_now;
        c.physics.clock_ctx = &clk;
        gy_world *w = wfx_world_with(&c);
        wfx_ball(w, "ball", gy_v3(0, 10, 0));
        /* The thread reads the clock's start once its loop runs: only then does time count. */
        wait_iterations(w, 2);
        feed_host_time(w, &clk, 4);
        uint64_t t = gy_physics_tick(gy_world_physics(w));
        assert_int_equal(t, 4);
        /* Twenty steps of host time at half speed: ten ticks. */
        assert_result(gy_world_set_time_scale(w, 0.5), GY_OK);
        feed_host_time(w, &clk, 20);
        assert_int_equal(gy_physics_tick(gy_world_physics(w)), t + 10);
        wfx_destroy(w, NULL);
    }
}

static bool rebased(void *ctx)
{
    gy_world *w = ctx;
    return wfx_physics_stats(w).rebases >= 1;
}

static void test_loop_hold_in_real_time_is_honoured_by_the_thread(void **state)
{
    (void)state;
    gy_world_def c = wfx_config(NULL, false);
    gy_world *w = wfx_world_with(&c);
    wfx_ball(w, "ball", gy_v3(0, 10, 0));
    gy_world_set_hold(w, true);
    uint64_t t = gy_physics_tick(gy_world_physics(w));
    double t0 = gy_test_now();
    while (gy_test_now() - t0 < 0.2)
        assert_result(gy_world_tick(w, 0.005), GY_OK);
    /* At most the tick in flight when the hold was set. */
    assert_true(gy_physics_tick(gy_world_physics(w)) <= t + 4);
    gy_world_set_hold(w, false);
    assert_true(gy_test_wait_until(rebased, w, 20.0));
    wfx_destroy(w, NULL);
}

/* ---- the update callback --------------------------------------------------------------------- */

typedef struct updater {
    gy_entity ball;
    uint32_t calls;
    double dt_sum;
    uint64_t ticks_seen_at_first;
} updater;

static void on_update(void *ctx, gy_world *w, double dt)
{
    updater *u = ctx;
    if (u->calls++ == 0) {
        u->ticks_seen_at_first = gy_world_physics_tick(w);
        /* A write made here reaches the physics tick of this same frame. */
        double m = 1000.0 * 4.0 / 3.0 * GY_PI * 0.125;
        assert_result(gy_body_apply_impulse(w, u->ball, gy_v3(m, 0, 0)), GY_OK);
    }
    u->dt_sum += dt;
}

static void test_loop_update_callback_runs_first(void **state)
{
    (void)state;
    updater u;
    memset(&u, 0, sizeof u);
    gy_world_def c = wfx_config(NULL, true);
    c.physics.world.gravity = gy_v3(0, 0, 0);
    c.update = on_update;
    c.update_ctx = &u;
    gy_world *w = wfx_world_with(&c);
    u.ball = wfx_ball(w, "ball", gy_v3(0, 0, 0));
    assert_result(gy_world_tick(w, WFX_DT), GY_OK);
    assert_int_equal(u.calls, 1);
    assert_int_equal(u.ticks_seen_at_first, 0);
    assert_near(wfx_state(w, u.ball).linear_velocity.x, 1.0, 1e-5);
    wfx_tick(w, 4);
    assert_int_equal(u.calls, 5);
    assert_near(u.dt_sum, 5 * WFX_DT, 1e-12);
    /* 0.25 s at most per frame. */
    assert_result(gy_world_tick(w, 3.0), GY_OK);
    assert_near(u.dt_sum, 5 * WFX_DT + 0.25, 1e-12);
    wfx_destroy(w, NULL);
}

/* ---- teardown -------------------------------------------------------------------------------- */

static void test_loop_teardown_releases_everything(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    wfx_log log;
    memset(&log, 0, sizeof log);
    gy_logger logger = {wfx_log_fn, &log};
    gy_world_def c = wfx_config(&ta, true);
    c.logger = &logger;
    gy_world *w = wfx_world_with(&c);
    gy_entity ground = wfx_ground(w);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 1, 0));
    gy_entity b = wfx_ball(w, "b", gy_v3(0, 3, 0));
    wfx_ball_joint(w, a, b, gy_v3(0, 2, 0));
    gy_vec3 pts[] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def hull = {pts, 4};
    gy_geometry kept, leaked;
    assert_result(gy_geometry_create_hull(w, &hull, &kept), GY_OK);
    assert_result(gy_geometry_create_hull(w, &hull, &leaked), GY_OK);
    gy_shape hs;
    memset(&hs, 0, sizeof hs);
    hs.type = GY_SHAPE_HULL;
    hs.resource.bits = kept.bits;
    gy_entity rock = wfx_entity(w, "rock", gy_v3(5, 2, 0));
    wfx_add(w, rock, wfx_shape(GY_BODY_DYNAMIC, hs));
    gy_geometry_release(w, kept);
    wfx_tick(w, 30);
    (void)ground;
    gy_world_teardown rep = wfx_destroy(w, &ta);
    assert_int_equal(rep.entities_destroyed, 4);
    assert_int_equal(rep.geometries_reclaimed, 1);
    assert_non_null(strstr(log.last_warning, "1 runtime geometry"));
}

static void test_loop_teardown_in_real_time(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world_def c = wfx_config(&ta, false);
    gy_world *w = wfx_world_with(&c);
    wfx_ground(w);
    for (uint32_t i = 0; i < 20; i++)
        wfx_ball(w, NULL, gy_v3((double)i, 1 + (double)i, 0));
    double t0 = gy_test_now();
    while (gy_test_now() - t0 < 0.1)
        assert_result(gy_world_tick(w, 0.004), GY_OK);
    gy_world_set_hold(w, true); /* teardown lifts it to confirm the releases */
    wfx_destroy(w, &ta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_interpolation_is_continuous),
        cmocka_unit_test(test_loop_new_body_shows_its_creation_pose),
        cmocka_unit_test(test_loop_teleport_is_not_interpolated),
        cmocka_unit_test(test_loop_results_older_than_a_teleport_never_win),
        cmocka_unit_test(test_loop_one_off_inputs_reach_exactly_one_tick_under_a_flood),
        cmocka_unit_test(test_loop_time_scale_and_hold_in_lockstep),
        cmocka_unit_test(test_loop_fractional_time_scale_in_real_time),
        cmocka_unit_test(test_loop_hold_in_real_time_is_honoured_by_the_thread),
        cmocka_unit_test(test_loop_update_callback_runs_first),
        cmocka_unit_test(test_loop_teardown_releases_everything),
        cmocka_unit_test(test_loop_teardown_in_real_time),
    };
    return cmocka_run_group_tests_name("world_loop", tests, NULL, NULL);
}
