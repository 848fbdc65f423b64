/* Render time and interpolation in real time, driven by an injected tick clock: the drawn pose
 * follows the host clock (not the moments results were seen) at any frame pattern, one step
 * behind the simulation's clock by default or by the configured delay, never extrapolated, never
 * backwards after dropped catch-up time; the list of drawn poses that changed, and the list of
 * bodies a tick moved. Every case runs on every adapter compiled in.
 *
 * The body slides at 1 m/s with no gravity and no damping, so every result lies on one line and
 * the drawn x is exactly the render time measured from the body's first step. */
#include "test_world_fixture.h"
#include "gyre/backend/backend.h"

#define NS_PER_S 1000000000ull

typedef struct hand_clock {
    uint64_t ns; /* read by the physics thread, set by the test */
} hand_clock;

static uint64_t hand_clock_read(void *ctx)
{
    return __atomic_load_n(&((hand_clock *)ctx)->ns, __ATOMIC_ACQUIRE);
}

static void hand_clock_set(hand_clock *c, uint64_t ns)
{
    __atomic_store_n(&c->ns, ns, __ATOMIC_RELEASE);
}

typedef struct rig {
    gy_world *w;
    gy_entity body;
    hand_clock clock;
    uint64_t t0; /* clock reading at simulated time 0 */
    uint64_t want_tick;
} rig;

static gy_world_def rig_config(rig *r, const char *backend, double render_delay)
{
    gy_world_def c = wfx_config(NULL, false);
    c.physics.backend = backend;
    c.physics.world.gravity = gy_v3(0, 0, 0);
    c.physics.clock = hand_clock_read;
    c.physics.clock_ctx = &r->clock;
    c.render_delay = render_delay;
    return c;
}

/* Ticks the World until it has taken in the result of tick r->want_tick. */
static bool caught_up(void *ctx)
{
    rig *r = ctx;
    assert_result(gy_world_tick(r->w, 0.0), GY_OK);
    return gy_world_physics_tick(r->w) >= r->want_tick;
}

static void wait_tick(rig *r, uint64_t tick)
{
    r->want_tick = tick;
    assert_true(gy_test_wait_until(caught_up, r, 20.0));
    assert_int_equal(gy_world_physics_tick(r->w), tick);
}

static bool built(void *ctx)
{
    rig *r = ctx;
    assert_result(gy_world_tick(r->w, 0.0), GY_OK);
    return wfx_state(r->w, r->body).has_body;
}

/* A world whose clock stands still, with the sliding body built (the physics thread drains its
 * create without stepping: no time has passed). */
static void rig_start(rig *r, const char *backend, double render_delay)
{
    memset(r, 0, sizeof *r);
    r->clock.ns = 5 * NS_PER_S;
    gy_world_def c = rig_config(r, backend, render_delay);
    r->w = wfx_world_with(&c);
    r->body = wfx_entity(r->w, "slider", gy_v3(0, 0, 0));
    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.body.linear_velocity = gy_v3(1, 0, 0);
    d.desc.body.allow_sleeping = false;
    wfx_add(r->w, r->body, d);
    assert_true(gy_test_wait_until(built, r, 20.0));
    /* Built before any step (its first step is tick 1), and the clock the physics thread started
     * on is simulated time 0. */
    assert_int_equal(gy_physics_tick(gy_world_physics(r->w)), 0);
    r->t0 = r->clock.ns;
}

/* One host frame at clock `ns`: the physics thread catches up to every tick due by then (at most
 * four per frame here, so none is dropped), then the World ticks. Returns the render time. */
static double frame_at(rig *r, uint64_t ns)
{
    hand_clock_set(&r->clock, ns);
    double step = 1.0 / 60.0;
    double elapsed = (double)(ns - r->t0) * 1e-9;
    uint64_t due = (uint64_t)floor(elapsed / step + 1e-6);
    wait_tick(r, due);
    return gy_world_render_time(r->w);
}

static const char *backend_name(uint32_t i)
{
    return gy_backend_at(i)->name;
}

/* The drawn x is the render time past the body's first step (x = 1 m/s × t), and the render time
 * is the clock less the delay, whatever the frames look like. The delay is set to one step: the
 * automatic one would grow by the time this test's clock jumps past each tick's due time before
 * the physics thread sees it (on a real clock, its wake-up latency). Times agree to 20 ns: the
 * physics thread counts a step within a millionth of a step as due. */
static void test_render_follows_the_tick_clock_at_any_frame_rate(void **state)
{
    (void)state;
    double step = 1.0 / 60.0;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start(&r, backend_name(b), step);
        double start = (double)gy_physics_tick(gy_world_physics(r.w)) * step;
        /* 144 Hz, 75 Hz, then irregular frames of 4 to 60 ms. */
        static const uint64_t frames_ns[] = {6944444, 13333333, 4000000, 60000000, 17000000};
        static const uint32_t counts[] = {60, 30, 25, 8, 10};
        uint64_t ns = r.clock.ns;
        double last_x = -1.0, last_at = -1.0;
        for (uint32_t k = 0; k < 5; k++) {
            for (uint32_t f = 0; f < counts[k]; f++) {
                ns += frames_ns[k];
                double at = frame_at(&r, ns);
                double clock = (double)(ns - r.t0) * 1e-9;
                assert_near(at, clock - step, 2e-8);
                double x = wfx_render_pose(r.w, r.body).position.x;
                /* Results are floats: a few ulps of a metre or two. */
                double expect = at <= start ? 0.0 : at - start;
                assert_near(x, expect, 2e-6);
                assert_true(x >= last_x);
                assert_true(at > last_at);
                last_x = x;
                last_at = at;
                /* The dense list says the same while the drawn pose moves. */
                const gy_render_pose *rp;
                uint32_t n = gy_world_render_poses(r.w, &rp);
                if (at > start) {
                    assert_int_equal(n, 1);
                    assert_true(gy_entity_equal(rp[0].entity, r.body));
                    assert_near(rp[0].pose.position.x, x, 0.0);
                }
            }
        }
        wfx_destroy(r.w, NULL);
    }
}

static void test_render_delay_setting_is_the_lag_behind_the_clock(void **state)
{
    (void)state;
    double step = 1.0 / 60.0;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start(&r, backend_name(b), 0.4 * step);
        double start = (double)gy_physics_tick(gy_world_physics(r.w)) * step;
        uint64_t ns = r.clock.ns;
        for (uint32_t f = 0; f < 40; f++) {
            ns += 6944444;
            double at = frame_at(&r, ns);
            double clock = (double)(ns - r.t0) * 1e-9;
            /* Never past the newest result: a frame just before a tick's result waits at it. */
            double newest = (double)gy_world_physics_tick(r.w) * step;
            assert_near(at, fmin(clock - 0.4 * step, newest), 2e-8);
            double x = wfx_render_pose(r.w, r.body).position.x;
            assert_near(x, at <= start ? 0.0 : at - start, 2e-6);
        }
        wfx_destroy(r.w, NULL);
    }
}

/* A 200 ms hitch: the physics thread steps four ticks and drops the rest. The clock the World
 * follows jumps back by the dropped time; what is drawn waits for it, never going back. */
static void test_render_never_goes_back_after_dropped_time(void **state)
{
    (void)state;
    double step = 1.0 / 60.0;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start(&r, backend_name(b), 0.0);
        uint64_t ns = r.clock.ns;
        for (uint32_t f = 0; f < 20; f++)
            frame_at(&r, ns += 6944444);
        double before = gy_world_render_time(r.w);
        double x_before = wfx_render_pose(r.w, r.body).position.x;
        uint64_t tick = gy_world_physics_tick(r.w);
        hand_clock_set(&r.clock, ns += 200000000);
        wait_tick(&r, tick + 4); /* max_catchup_steps; the other ~8 steps are dropped */
        double at = gy_world_render_time(r.w);
        assert_true(at >= before);
        assert_true(at <= (double)(tick + 4) * step);
        assert_true(wfx_render_pose(r.w, r.body).position.x >= x_before);
        /* Then smooth again, on the clock as the physics thread rebased it. */
        double last = at;
        for (uint32_t f = 0; f < 20; f++) {
            hand_clock_set(&r.clock, ns += 6944444);
            assert_result(gy_world_tick(r.w, 0.0), GY_OK);
            double now = gy_world_render_time(r.w);
            assert_true(now >= last);
            last = now;
        }
        wfx_destroy(r.w, NULL);
    }
}

/* Slow motion while the automatic delay is still growing: a result seen 15 ms after it fell due
 * raises the delay's target to its cap, and the delay moves towards it by at most 2 % of host time
 * per frame; at a time scale of 0.01 the clock advances by only 1 % of host time, so the clock
 * less the delay falls. The drawn time holds instead of going back. */
static void test_render_never_goes_back_in_slow_motion(void **state)
{
    (void)state;
    const double step = 1.0 / 60.0;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start(&r, backend_name(b), 0.0);
        /* Three seconds of frames exactly on the ticks' due times: no latency to cover, so the
         * delay settles at its floor. */
        uint64_t k = 1;
        for (; k <= 180; k++)
            frame_at(&r, r.t0 + (uint64_t)llround((double)k * step * 1e9));
        /* The next result seen 15 ms after it fell due. */
        uint64_t ns = r.t0 + (uint64_t)llround((double)k * step * 1e9) + 15000000;
        frame_at(&r, ns);
        assert_result(gy_world_set_time_scale(r.w, 0.01), GY_OK);
        double last = gy_world_render_time(r.w);
        for (uint32_t f = 0; f < 20; f++) {
            hand_clock_set(&r.clock, ns += 6944444);
            assert_result(gy_world_tick(r.w, 0.0), GY_OK);
            double now = gy_world_render_time(r.w);
            assert_true(now >= last);
            last = now;
        }
        wfx_destroy(r.w, NULL);
    }
}

/* A teleport is drawn at once; the body then moves on from there without sliding in from the
 * old place. */
static void test_render_teleport_snaps(void **state)
{
    (void)state;
    double step = 1.0 / 60.0;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start(&r, backend_name(b), 0.0);
        uint64_t ns = r.clock.ns;
        for (uint32_t f = 0; f < 10; f++)
            frame_at(&r, ns += 6944444);
        gy_pose to = {gy_v3(100, 5, 0), gy_quat_identity()};
        assert_result(gy_body_teleport(r.w, r.body, to), GY_OK);
        gy_pose p = wfx_render_pose(r.w, r.body);
        assert_near(p.position.x, 100.0, 0.0);
        assert_near(p.position.y, 5.0, 0.0);
        double last = 100.0;
        for (uint32_t f = 0; f < 30; f++) {
            frame_at(&r, ns += 6944444);
            p = wfx_render_pose(r.w, r.body);
            assert_true(p.position.x >= last);
            assert_true(p.position.x - last <= 1.0 * (6944444 * 1e-9) + step + 1e-5);
            assert_near(p.position.y, 5.0, 1e-6);
            last = p.position.x;
        }
        assert_true(last > 100.0);
        wfx_destroy(r.w, NULL);
    }
}

/* A rig without gravity beside a second dynamic sphere, "still", at rest (it sleeps), after 60
 * frames at 144 Hz. */
static gy_entity rig_start_with_still(rig *r, const char *backend)
{
    rig_start(r, backend, 0.0);
    gy_entity still = wfx_entity(r->w, "still", gy_v3(0, 10, 0));
    wfx_add(r->w, still, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    uint64_t ns = r->clock.ns;
    for (uint32_t f = 0; f < 60; f++)
        frame_at(r, ns += 6944444);
    return still;
}

/* gy_world_moved_bodies names the body in the tick whose result moved it, and nothing in a tick
 * with no new result. */
static void test_render_moved_bodies_are_those_a_result_moved(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        rig_start_with_still(&r, backend_name(b)); /* only the rig's body moves */
        uint64_t tick = gy_world_physics_tick(r.w);
        hand_clock_set(&r.clock, r.t0 + (uint64_t)ceil((double)(tick + 1) * 1e9 / 60.0) + 1000);
        wait_tick(&r, tick + 1);
        const gy_entity *moved;
        assert_int_equal(gy_world_moved_bodies(r.w, &moved), 1);
        assert_true(gy_entity_equal(moved[0], r.body));
        assert_result(gy_world_tick(r.w, 0.0), GY_OK); /* no new result */
        assert_int_equal(gy_world_moved_bodies(r.w, &moved), 0);
        assert_null(moved);
        wfx_destroy(r.w, NULL);
    }
}

typedef struct listed_ctx {
    rig *r;
    gy_entity e;
} listed_ctx;

/* Ticks the World until gy_world_moved_bodies names ctx->e. */
static bool listed(void *ctx)
{
    listed_ctx *l = ctx;
    assert_result(gy_world_tick(l->r->w, 0.0), GY_OK);
    const gy_entity *moved;
    uint32_t n = gy_world_moved_bodies(l->r->w, &moved);
    for (uint32_t i = 0; i < n; i++)
        if (gy_entity_equal(moved[i], l->e))
            return true;
    return false;
}

/* A batch applied while no tick is due is published at the same tick: a body it changed (a
 * body at rest given a velocity) takes a result then, drawn where it rests, and a moving body
 * it did not touch takes none (its proxy is the one the previous capture read). */
static void test_render_same_tick_publish_moves_only_what_changed(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        rig r;
        gy_entity still = rig_start_with_still(&r, backend_name(b));
        /* Half a step past the next tick: none falls due while the batch is applied. */
        uint64_t tick = gy_world_physics_tick(r.w) + 1u;
        hand_clock_set(&r.clock, r.t0 + (uint64_t)(((double)tick + 0.5) * 1e9 / 60.0));
        wait_tick(&r, tick);
        gy_pose before = wfx_render_pose(r.w, r.body);
        assert_result(gy_body_set_linear_velocity(r.w, still, gy_v3(0, 0, 1)), GY_OK);
        listed_ctx l = {&r, still};
        assert_true(gy_test_wait_until(listed, &l, 20.0));
        assert_int_equal(gy_world_physics_tick(r.w), tick); /* the clock stood still */
        const gy_entity *moved;
        assert_int_equal(gy_world_moved_bodies(r.w, &moved), 1);
        assert_true(gy_entity_equal(moved[0], still));
        gy_pose p = wfx_render_pose(r.w, still);
        assert_near(p.position.x, 0.0, 0.0);
        assert_near(p.position.y, 10.0, 0.0);
        assert_near(p.position.z, 0.0, 0.0);
        p = wfx_render_pose(r.w, r.body);
        assert_near(p.position.x, before.position.x, 0.0);
        /* The next tick moves both. */
        hand_clock_set(&r.clock, r.t0 + (uint64_t)ceil((double)(tick + 1) * 1e9 / 60.0) + 1000);
        wait_tick(&r, tick + 1);
        assert_int_equal(gy_world_moved_bodies(r.w, &moved), 2);
        assert_true(wfx_state(r.w, still).pose.position.z > 0.0);
        wfx_destroy(r.w, NULL);
    }
}

/* Bodies drawn at the pose the game gave them are listed at most GY_W_HELD_PER_FRAME (2,048) a
 * frame, in the order they were made, the rest in the frames that follow; a moving body is listed
 * in every frame meanwhile. Each static is listed exactly once, at its creation pose. */
static void test_render_lists_a_burst_of_statics_over_frames(void **state)
{
    (void)state;
    enum { STATICS = 5000, PER_FRAME = 2048 };
    for (uint32_t b = 0; b < gy_backend_count(); b++) {
        gy_world_def c = wfx_config(NULL, true);
        c.physics.backend = backend_name(b);
        gy_world *w = wfx_world_with(&c);
        gy_entity ball = wfx_ball(w, "ball", gy_v3(-50, 10, 0));
        wfx_tick(w, 2);
        gy_entity *ents = malloc(STATICS * sizeof *ents);
        uint8_t *seen = calloc(STATICS, 1);
        assert_non_null(ents);
        assert_non_null(seen);
        for (uint32_t i = 0; i < STATICS; i++) {
            ents[i] = wfx_entity(w, NULL, gy_v3(2.0 * i, 0, 0));
            wfx_add(w, ents[i], wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
        }
        uint32_t listed = 0;
        for (uint32_t f = 0; f < 4; f++) {
            wfx_tick(w, 1);
            const gy_render_pose *rp;
            uint32_t n = gy_world_render_poses(w, &rp);
            uint32_t statics = 0;
            bool ball_listed = false;
            for (uint32_t i = 0; i < n; i++) {
                if (gy_entity_equal(rp[i].entity, ball)) {
                    ball_listed = true;
                    continue;
                }
                uint32_t k = (uint32_t)(rp[i].pose.position.x / 2.0);
                assert_true(k < STATICS);
                assert_true(gy_entity_equal(rp[i].entity, ents[k]));
                assert_near(rp[i].pose.position.x, 2.0 * k, 0.0);
                assert_int_equal(seen[k], 0);
                assert_true(k == listed + statics); /* in the order they were made */
                seen[k] = 1;
                statics++;
            }
            assert_true(ball_listed);
            uint32_t want = STATICS - listed < PER_FRAME ? STATICS - listed : PER_FRAME;
            assert_int_equal(statics, want);
            listed += statics;
        }
        assert_int_equal(listed, STATICS);
        free(seen);
        free(ents);
        wfx_destroy(w, NULL);
    }
}

static void test_render_delay_outside_its_range_is_refused(void **state)
{
    (void)state;
    gy_world *w = NULL;
    gy_world_def c = wfx_config(NULL, false);
    c.render_delay = NAN;
    assert_result(gy_world_create(&c, &w), GY_ERR_NON_FINITE);
    c.render_delay = -0.001;
    assert_result(gy_world_create(&c, &w), GY_ERR_INVALID_ARGUMENT);
    c.render_delay = 2.5 / 60.0;
    assert_result(gy_world_create(&c, &w), GY_ERR_INVALID_ARGUMENT);
    assert_null(w);
    assert_int_equal(gy_world_render_poses(NULL, NULL), 0);
    assert_near(gy_world_render_time(NULL), 0.0, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_follows_the_tick_clock_at_any_frame_rate),
        cmocka_unit_test(test_render_delay_setting_is_the_lag_behind_the_clock),
        cmocka_unit_test(test_render_never_goes_back_after_dropped_time),
        cmocka_unit_test(test_render_never_goes_back_in_slow_motion),
        cmocka_unit_test(test_render_teleport_snaps),
        cmocka_unit_test(test_render_lists_a_burst_of_statics_over_frames),
        cmocka_unit_test(test_render_moved_bodies_are_those_a_result_moved),
        cmocka_unit_test(test_render_same_tick_publish_moves_only_what_changed),
        cmocka_unit_test(test_render_delay_outside_its_range_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
