/* The physics thread in real time: time scale 0, the hold epoch (including a hold/resume cycle the
 * thread slept through), the 1 s hitch, stop/start keeping bodies and poses, live queries against a
 * stepping thread (run under ThreadSanitizer in CI) and the diagnostics sampler. Time rules are
 * driven by an injected clock; waits are on the thread's iteration counter, never sleeps. */
#include "test_physics_fixture.h"

#include "physics_state.h"

/* ---- an injected clock ----------------------------------------------------------------------- */

typedef struct fake_clock {
    uint64_t ns;
} fake_clock;

static uint64_t fake_now(void *ctx)
{
    return __atomic_load_n(&((fake_clock *)ctx)->ns, __ATOMIC_ACQUIRE);
}

static void fake_advance(fake_clock *c, uint64_t ns)
{
    __atomic_fetch_add(&c->ns, ns, __ATOMIC_ACQ_REL);
}

#define STEP_NS 16666667ull /* one 60 Hz step, rounded up */

/* A real-time subsystem on `backend` (NULL: the first adapter) with a floor and a ball, started;
 * its clock is `clk` when given. */
static gy_physics *realtime_with_clock_on(fake_clock *clk, const char *backend)
{
    gy_physics_def d = gy_default_physics_def();
    if (backend != NULL)
        d.backend = backend;
    if (clk != NULL) {
        clk->ns = 1000000000ull;
        d.clock = fake_now;
        d.clock_ctx = clk;
    }
    gy_physics *p = fx_physics(&d);
    fx_body floor = fx_floor(0, 1);
    fx_body ball = fx_sphere(1, 2, gy_v3(0, 5, 0), 0.5);
    gy_physics_body_def bodies[2] = {*fx_desc(&floor), *fx_desc(&ball)};
    gy_physics_bootstrap boot = {NULL, 0, bodies, 2, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    return p;
}

static gy_physics *realtime_with_clock(fake_clock *clk)
{
    return realtime_with_clock_on(clk, NULL);
}

/* ---- time rules ------------------------------------------------------------------------------ */

static void test_physics_hold_epoch_counts_transitions_only(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    gy_physics *p = fx_physics(&d);
    assert_int_equal(gy_physics_hold_epoch(p), 0);
    gy_physics_set_hold(p, false);
    assert_int_equal(gy_physics_hold_epoch(p), 0);
    gy_physics_set_hold(p, true);
    gy_physics_set_hold(p, true);
    assert_int_equal(gy_physics_hold_epoch(p), 1);
    gy_physics_set_hold(p, false);
    gy_physics_set_hold(p, false);
    assert_int_equal(gy_physics_hold_epoch(p), 2);
    gy_physics_destroy(p);
}

static void test_physics_time_scale_zero_freezes(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_set_time_scale(p, 0.0), GY_OK);
    fx_body floor = fx_floor(0, 1);
    fx_body ball = fx_sphere(1, 2, gy_v3(0, 5, 0), 0.5);
    gy_physics_body_def bodies[2] = {*fx_desc(&floor), *fx_desc(&ball)};
    gy_physics_bootstrap boot = {NULL, 0, bodies, 2, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    fx_wait_iterations(p, 6);
    assert_int_equal(gy_physics_tick(p), 0);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_near(px[1].position[1], 5.0, 0.0);

    /* Frozen, commands still apply and publish. */
    gy_pose pose = gy_pose_identity();
    pose.position = gy_v3(0, 8, 0);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 2}, pose), GY_OK);
    assert_result(gy_physics_publish(p, NULL), GY_OK);
    fx_wait_iterations(p, 3);
    px = fx_proxies(p, NULL, NULL);
    assert_near(px[1].position[1], 8.0, 0.0);
    assert_int_equal(gy_physics_tick(p), 0);

    assert_result(gy_physics_set_time_scale(p, 1.0), GY_OK);
    fx_wait_stat w = {p, 0, 10};
    assert_true(gy_test_wait_until(fx_ticks_reached, &w, 20.0));
    fx_wait_iterations(p, 1);
    px = fx_proxies(p, NULL, NULL);
    assert_true(px[1].position[1] < 8.0f);

    assert_result(gy_physics_set_time_scale(p, 0.0), GY_OK);
    fx_wait_iterations(p, 2);
    uint64_t t = gy_physics_tick(p);
    float y = fx_proxies(p, NULL, NULL)[1].position[1];
    fx_wait_iterations(p, 6);
    assert_int_equal(gy_physics_tick(p), t);
    assert_near(fx_proxies(p, NULL, NULL)[1].position[1], y, 0.0);
    gy_physics_destroy(p);
}

static void test_physics_hitch_yields_at_most_four_steps(void **state)
{
    (void)state;
    fake_clock clk;
    gy_physics *p = realtime_with_clock(&clk);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), 0); /* the clock stands still */
    fake_advance(&clk, 1000000000ull);       /* a one-second hitch */
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), 4);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.catchup_steps_dropped, 2); /* 0.1 s clamp = 6 steps: 4 run, 2 dropped */
    assert_near(s.catchup_time_dropped_s, 2.0 / 60.0, 1e-6);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), 4);
    fake_advance(&clk, STEP_NS);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), 5);
    gy_physics_destroy(p);
}

static void test_physics_hold_cycle_drops_accumulated_time(void **state)
{
    (void)state;
    fake_clock clk;
    gy_physics *p = realtime_with_clock(&clk);
    gy_barrier *b = gy_physics_barrier(p);
    fx_wait_iterations(p, 3);

    /* Control: a second passing while the thread is parked in a mutation window is a hitch. */
    assert_result(gy_barrier_begin_mutation(b, FX_TIMEOUT_NS), GY_OK);
    fake_advance(&clk, 1000000000ull);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    fx_wait_iterations(p, 3);
    uint64_t t = gy_physics_tick(p);
    assert_int_equal(t, 4);

    /* A whole hold/resume cycle the thread slept through: no catch-up. */
    uint64_t rebases = fx_stats(p).rebases;
    assert_result(gy_barrier_begin_mutation(b, FX_TIMEOUT_NS), GY_OK);
    gy_physics_set_hold(p, true);
    fake_advance(&clk, 1000000000ull);
    gy_physics_set_hold(p, false);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), t);
    assert_int_equal(fx_stats(p).rebases, rebases + 1);

    /* A hold the thread saw: held time does not count, and the resume rebases too. */
    gy_physics_set_hold(p, true);
    fx_wait_iterations(p, 3);
    fake_advance(&clk, 1000000000ull);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), t);
    assert_result(gy_barrier_begin_mutation(b, FX_TIMEOUT_NS), GY_OK);
    gy_physics_set_hold(p, false);
    fake_advance(&clk, 1000000000ull);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), t);
    assert_int_equal(fx_stats(p).rebases, rebases + 3);

    /* Afterwards time flows normally from the rebased clock. */
    fake_advance(&clk, STEP_NS);
    fx_wait_iterations(p, 3);
    assert_int_equal(gy_physics_tick(p), t + 1);
    gy_physics_destroy(p);
}

static void test_physics_fractional_time_scale_in_real_time(void **state)
{
    (void)state;
    for (uint32_t k = 0; k < gy_backend_count(); k++) {
        fake_clock clk;
        gy_physics *p = realtime_with_clock_on(&clk, gy_backend_at(k)->name);
        assert_result(gy_physics_set_time_scale(p, 0.5), GY_OK);
        fx_wait_iterations(p, 2);
        assert_int_equal(gy_physics_tick(p), 0);
        /* Twenty steps of host time, fed one at a time (each read well under the 0.1 s clamp),
         * at half speed: ten ticks (20 × 16.666667 ms × 0.5 is 3 ns past ten steps). */
        for (int i = 0; i < 20; i++) {
            fake_advance(&clk, STEP_NS);
            fx_wait_iterations(p, 1);
        }
        fx_wait_iterations(p, 2);
        assert_int_equal(gy_physics_tick(p), 10);
        /* A quarter: eight more steps of host time give two ticks. */
        assert_result(gy_physics_set_time_scale(p, 0.25), GY_OK);
        fx_wait_iterations(p, 2);
        for (int i = 0; i < 8; i++) {
            fake_advance(&clk, STEP_NS);
            fx_wait_iterations(p, 1);
        }
        fx_wait_iterations(p, 2);
        assert_int_equal(gy_physics_tick(p), 12);
        gy_physics_destroy(p);
    }
}

static uint32_t count_exits(const fx_replies *rs, uint32_t a, uint32_t b)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rs->count; i++) {
        if (rs->r[i].type != GY_PHYSICS_REPLY_COLLISION_EXIT)
            continue;
        const gy_physics_collision *c = gy_reply_as_collision(&rs->r[i]);
        n += (c->generation_a == a && c->generation_b == b) ||
             (c->generation_a == b && c->generation_b == a);
    }
    return n;
}

static void test_physics_release_while_time_is_held_exits_without_a_step(void **state)
{
    (void)state;
    static fx_replies rs;
    for (uint32_t k = 0; k < gy_backend_count(); k++) {
        fake_clock clk = {1000000000ull};
        gy_physics_def d = gy_default_physics_def();
        d.backend = gy_backend_at(k)->name;
        d.clock = fake_now;
        d.clock_ctx = &clk;
        gy_physics *p = fx_physics(&d);
        fx_body floor = fx_floor(0, 1);
        fx_body ball = fx_sphere(1, 2, gy_v3(0, 0.49, 0), 0.5); /* resting, 1 cm deep */
        gy_physics_body_def bodies[2] = {*fx_desc(&floor), *fx_desc(&ball)};
        gy_physics_bootstrap boot = {NULL, 0, bodies, 2, NULL, 0, NULL, NULL, NULL};
        assert_result(gy_physics_start(p, &boot), GY_OK);
        fx_wait_iterations(p, 2);
        memset(&rs, 0, sizeof rs);
        for (int i = 0; i < 10 && fx_count_type(&rs, GY_PHYSICS_REPLY_COLLISION_ENTER) == 0; i++) {
            fake_advance(&clk, STEP_NS);
            fx_wait_iterations(p, 2);
            fx_drain(p, &rs);
        }
        assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_COLLISION_ENTER), 1);

        /* Time held: the host clock runs on, the simulation does not. */
        assert_result(gy_physics_set_time_scale(p, 0.0), GY_OK);
        fx_wait_iterations(p, 2);
        fake_advance(&clk, 10 * STEP_NS);
        fx_wait_iterations(p, 2);
        uint64_t t = gy_physics_tick(p);
        fx_drain(p, &rs);
        rs.count = 0;

        /* The release ends the pair at once: its EXIT comes with the release, not a step. */
        assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 2}), GY_OK);
        assert_result(gy_physics_publish(p, NULL), GY_OK);
        fx_wait_iterations(p, 3);
        fx_drain(p, &rs);
        assert_int_equal(gy_physics_tick(p), t);
        if (count_exits(&rs, 1, 2) != 1)
            fail_msg("%s: %u EXITs for the released ball while time was held, expected 1",
                     gy_backend_at(k)->name, count_exits(&rs, 1, 2));
        gy_physics_destroy(p);
    }
}

/* A clock that, once armed, returns base, base + 10 ms, base + 20 ms, ... for the next `armed`
 * reads — one iteration's start and its budget checks — then base again (so no time leaks into
 * the next iteration; the caller arms exactly the reads that iteration makes). */
typedef struct budget_clock {
    uint64_t base;
    uint32_t armed;
    uint64_t offset;
} budget_clock;

static uint64_t budget_now(void *ctx)
{
    budget_clock *c = ctx;
    uint64_t base = __atomic_load_n(&c->base, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->armed, __ATOMIC_ACQUIRE) == 0)
        return base;
    __atomic_fetch_sub(&c->armed, 1u, __ATOMIC_ACQ_REL);
    return base + __atomic_fetch_add(&c->offset, 10000000u, __ATOMIC_ACQ_REL);
}

/* Ticks the iteration after a 1 s hitch runs when its catch-up is timed 10 ms per step. */
static uint64_t steps_within_budget(double budget_s, uint32_t reads)
{
    budget_clock clk = {1000000000ull, 0, 0};
    gy_physics_def d = gy_default_physics_def();
    d.clock = budget_now;
    d.clock_ctx = &clk;
    d.frame_budget_s = budget_s;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    fx_wait_iterations(p, 3);
    /* Arm inside a mutation window: the thread is parked before its next clock read. */
    gy_barrier *b = gy_physics_barrier(p);
    assert_result(gy_barrier_begin_mutation(b, FX_TIMEOUT_NS), GY_OK);
    __atomic_store_n(&clk.base, clk.base + 1000000000ull, __ATOMIC_RELEASE);
    __atomic_store_n(&clk.armed, reads, __ATOMIC_RELEASE);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    fx_wait_iterations(p, 3);
    uint64_t ticks = gy_physics_tick(p);
    assert_true(fx_stats(p).catchup_steps_dropped >= 1);
    gy_physics_destroy(p);
    return ticks;
}

static void test_physics_frame_budget_stops_catch_up(void **state)
{
    (void)state;
    /* The iteration reads the clock at its start and before each step after the first: those
     * checks see 10, 20 and 30 ms spent. */
    assert_int_equal(steps_within_budget(0.025, 4), 3);
    assert_int_equal(steps_within_budget(0.015, 3), 2);
    assert_int_equal(steps_within_budget(1.0, 4), 4); /* the step cap still holds */
}

/* ---- stop / start ---------------------------------------------------------------------------- */

static void test_physics_stop_start_keeps_bodies_and_poses(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics_def d = gy_default_physics_def();
    d.allocator = &ta.base;
    gy_physics *p = fx_physics(&d);
    enum { N = 8 };
    fx_body src[N];
    gy_physics_body_def bodies[N];
    src[0] = fx_floor(0, 1);
    for (uint32_t s = 1; s < N; s++)
        src[s] = fx_box(s, 1 + s, GY_MOTION_DYNAMIC, gy_v3(-6.0 + 1.5 * s, 1.0 + 0.5 * s, 0),
                        gy_v3(1, 1, 1));
    for (uint32_t s = 0; s < N; s++)
        bodies[s] = *fx_desc(&src[s]);
    gy_physics_bootstrap boot = {NULL, 0, bodies, N, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    fx_wait_stat w = {p, 0, 40};
    assert_true(gy_test_wait_until(fx_ticks_reached, &w, 20.0));
    /* Something recorded but never drained is discarded by the stop, payload included. */
    fx_create(p, fx_sphere(N, 99, gy_v3(0, 3, 0), 0.5));
    assert_result(gy_physics_stop(p), GY_OK);
    uint64_t tick = gy_physics_tick(p);

    /* The last publish survives the stop; the next bootstrap is built from it. */
    static gy_proxy saved[N];
    uint32_t n;
    uint64_t ptick;
    const gy_proxy *px = fx_proxies(p, &n, &ptick);
    assert_int_equal(n, N);
    assert_int_equal(ptick, tick);
    memcpy(saved, px, sizeof saved);
    for (uint32_t s = 1; s < N; s++) {
        gy_body_def *def = &src[s].desc.def;
        def->pose.position = gy_v3(px[s].position[0], px[s].position[1], px[s].position[2]);
        def->pose.rotation =
            (gy_quat){px[s].rotation[0], px[s].rotation[1], px[s].rotation[2], px[s].rotation[3]};
        def->linear_velocity =
            gy_v3(px[s].linear_velocity[0], px[s].linear_velocity[1], px[s].linear_velocity[2]);
        def->angular_velocity =
            gy_v3(px[s].angular_velocity[0], px[s].angular_velocity[1], px[s].angular_velocity[2]);
        bodies[s] = *fx_desc(&src[s]);
        assert_true(saved[s].position[1] < 1.0f + 0.5f * (float)s); /* they fell */
    }
    /* Frozen, so what we read is exactly the bootstrap's publish. */
    assert_result(gy_physics_set_time_scale(p, 0.0), GY_OK);
    gy_physics_body_ref refs[N];
    boot.body_refs = refs; /* the restart issues new refs: each slot holds the body named there */
    assert_result(gy_physics_start(p, &boot), GY_OK);
    px = fx_proxies(p, &n, &ptick);
    assert_int_equal(n, N);
    assert_int_equal(ptick, tick); /* ticks continue across restarts */
    for (uint32_t s = 0; s < N; s++) {
        assert_int_equal(refs[s].index, s);
        assert_int_equal(px[s].generation, refs[s].generation);
        assert_true(refs[s].generation != saved[s].generation);
        assert_int_equal(gy_proxy_motion(&px[s]), gy_proxy_motion(&saved[s]));
        assert_memory_equal(px[s].position, saved[s].position, sizeof px[s].position);
        assert_memory_equal(px[s].linear_velocity, saved[s].linear_velocity,
                            sizeof px[s].linear_velocity);
        assert_memory_equal(px[s].angular_velocity, saved[s].angular_velocity,
                            sizeof px[s].angular_velocity);
        for (int k = 0; k < 4; k++)
            assert_near(px[s].rotation[k], saved[s].rotation[k], 1e-6);
    }
    assert_int_equal(fx_stats(p).bodies, N);
    assert_result(gy_physics_set_time_scale(p, 1.0), GY_OK);
    w.ticks = tick + 5;
    assert_true(gy_test_wait_until(fx_ticks_reached, &w, 20.0));
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- proxy pages shared across publishes ----------------------------------------------------- */

/* FNV-1a over `n` proxies of a publish's pages. */
static uint64_t pages_checksum(const gy_proxy *const *pages, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *b = (const unsigned char *)gy_proxy_in(pages, i);
        for (size_t k = 0; k < sizeof(gy_proxy); k++)
            h = (h ^ b[k]) * 1099511628211ull;
    }
    return h;
}

typedef struct publishes_wait {
    const gy_physics *p;
    uint64_t publishes; /* wait until stats.publishes >= this */
} publishes_wait;

static bool publishes_reached(void *ctx)
{
    publishes_wait *w = ctx;
    return fx_stats(w->p).publishes >= w->publishes;
}

static gy_vec3 stress_static_at(uint32_t s, uint32_t teleports)
{
    return gy_v3(-40.0 + 0.5 * (double)s, 0.5 + (double)teleports, -20.0);
}

/* Statics spanning several pages, which the buffers come to share, and falling spheres after them
 * (pages copied per buffer), while the game thread reads every publish, keeps each one it read
 * and teleports a static every few reads (a write into a shared page, copied first). Every
 * publish read is checked whole: no proxy newer than its tick, each static's pose the one its own
 * teleport count says, and the kept publish's checksum unchanged after the next read, while the
 * physics thread went on publishing. */
static void test_physics_shared_proxy_pages_stay_whole_under_a_running_thread(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    d.step_hz = 240;
    gy_physics *p = fx_physics(&d);
    enum { STATICS = 150, FALLING = 40, N = 1 + STATICS + FALLING };
    static fx_body src[N];
    static gy_physics_body_def bodies[N];
    src[0] = fx_floor(0, 1);
    for (uint32_t s = 1; s <= STATICS; s++)
        src[s] = fx_box(s, 1 + s, GY_MOTION_STATIC, stress_static_at(s, 0), gy_v3(0.4, 0.4, 0.4));
    for (uint32_t s = STATICS + 1; s < N; s++)
        src[s] = fx_sphere(s, 1 + s, gy_v3(-10.0 + 0.5 * (s - STATICS), 30.0, 5.0), 0.2);
    for (uint32_t s = 0; s < N; s++)
        bodies[s] = *fx_desc(&src[s]);
    gy_physics_bootstrap boot = {NULL, 0, bodies, N, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    static uint32_t sent[N]; /* teleports recorded per static */
    uint64_t kept_sum = 0, last_tick = 0;
    uint32_t kept_n = 0, frames = 0, teleports = 0;
    const gy_proxy *const *kept = NULL;
    double t0 = gy_test_now();
    while ((frames < 300 || teleports < 40) && gy_test_now() - t0 < 20.0) {
        gy_proxy_frame f;
        if (gy_physics_read_frame(p, &f) != GY_OK || !f.fresh)
            continue;
        /* The publish kept at the previous read is still what it was. */
        if (kept != NULL)
            assert_int_equal(pages_checksum(kept, kept_n), kept_sum);
        assert_true(f.tick >= last_tick);
        last_tick = f.tick;
        assert_int_equal(f.count, N);
        for (uint32_t s = 0; s < N; s++) {
            const gy_proxy *q = gy_proxy_frame_at(&f, s);
            assert_true(q->tick <= (uint32_t)f.tick);
            if (s < 1 || s > STATICS || !(q->flags & GY_PROXY_LIVE))
                continue;
            assert_true(q->teleports <= sent[s]);
            gy_vec3 at = stress_static_at(s, q->teleports);
            assert_true(q->position[0] == (float)at.x && q->position[1] == (float)at.y &&
                        q->position[2] == (float)at.z);
        }
        kept = gy_physics_keep_frame(p, &kept_n);
        assert_ptr_equal(kept, f.pages);
        kept_sum = pages_checksum(kept, kept_n);
        frames++;
        if (frames % 4 == 0) {
            uint32_t s = 1 + (frames * 7u) % STATICS;
            gy_pose pose = gy_pose_identity();
            pose.position = stress_static_at(s, ++sent[s]);
            assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){s, 1 + s}, pose),
                          GY_OK);
            assert_result(gy_physics_publish(p, NULL), GY_OK);
            teleports++;
        }
    }
    print_message("publishes checked: %u, teleports: %u\n", frames, teleports);
    assert_true(frames >= 300 && teleports >= 40);
    /* Left alone, the statics' pages come to be shared: the buffer the writer holds shares each
     * page holding only statics with at least the one published before it. */
    publishes_wait w = {p, fx_stats(p).publishes + 60}; /* publishes, not ticks: a late
                                                          iteration steps several ticks */
    assert_true(gy_test_wait_until(publishes_reached, &w, 20.0));
    assert_result(gy_physics_stop(p), GY_OK);
    const gy_phys_frame *mine = &p->sh.frames[p->sim.frame];
    for (uint32_t i = 1; (i + 1u) * GY_PROXY_PAGE <= STATICS + 1u; i++) /* statics alone */
        assert_true(gy_phys_page_of(mine->pages[i])->refs >= 2);
    gy_physics_destroy(p);
}

/* ---- live queries against a stepping thread -------------------------------------------------- */

static void test_physics_live_queries_while_the_thread_steps(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics_def d = gy_default_physics_def();
    d.step_hz = 240;
    gy_physics *p = fx_physics(&d);
    enum { N = 21 };
    fx_body src[N];
    gy_physics_body_def bodies[N];
    src[0] = fx_floor(0, 1);
    for (uint32_t s = 1; s < N; s++)
        src[s] =
            fx_box(s, 1 + s, GY_MOTION_DYNAMIC,
                   gy_v3(-2.0 + 0.9 * (s % 5), 0.6 + 1.1 * (s / 5), 0.1 * (s % 2)), gy_v3(1, 1, 1));
    for (uint32_t s = 0; s < N; s++)
        bodies[s] = *fx_desc(&src[s]);
    gy_physics_bootstrap boot = {NULL, 0, bodies, N, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    gy_query_filter f = gy_default_query_filter();
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    double t0 = gy_test_now();
    uint32_t queries = 0;
    uint64_t last_tick = 0;
    while (gy_physics_tick(p) < 120 && gy_test_now() - t0 < 20.0) {
        gy_hit hits[8];
        uint32_t n = 0;
        uint64_t tick = 0;
        double x = -2.5 + 0.25 * (queries % 21);
        assert_result(gy_physics_raycast(p, gy_v3(x, 10, 0), gy_v3(0, -20, 0), &f,
                                         GY_COLLECT_CLOSEST, hits, 1, &n, &tick),
                      GY_OK);
        assert_int_equal(n, 1); /* at least the floor */
        assert_true(hits[0].point.y > -0.01 && hits[0].point.y < 8.0);
        assert_true(tick >= last_tick);
        last_tick = tick;
        gy_shape probe = {0};
        probe.type = GY_SHAPE_SPHERE;
        probe.radius = 0.3;
        gy_pose at = gy_pose_identity();
        at.position = gy_v3(x, 0.2, 0);
        assert_result(gy_physics_overlap(p, &probe, at, &f, GY_COLLECT_ALL, hits, 8, &n, NULL),
                      GY_OK);
        assert_true(n >= 1);
        const gy_snapshot_view *v = gy_physics_acquire_query_view(p);
        gy_snapshot_hit sh;
        assert_result(gy_snapshot_view_raycast(v, gy_v3(x, 10, 0), gy_v3(0, -20, 0), &sf,
                                               GY_COLLECT_CLOSEST, &sh, 1, &n),
                      GY_OK);
        assert_int_equal(n, 1);
        uint32_t count;
        const gy_proxy *px = fx_proxies(p, &count, NULL);
        assert_int_equal(count, N);
        assert_int_equal(px[N - 1].generation, N);
        if (queries % 16 == 0) {
            uint32_t s = 1 + queries % (N - 1);
            assert_result(
                gy_physics_record_add_impulse(p, (gy_physics_body_ref){s, 1 + s}, gy_v3(0, 2, 0)),
                GY_OK);
            assert_result(gy_physics_publish(p, NULL), GY_OK);
        }
        rs.count = 0;
        fx_drain(p, &rs);
        queries++;
    }
    assert_true(gy_physics_tick(p) >= 120);
    assert_true(queries > 0);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
}

/* ---- diagnostics ----------------------------------------------------------------------------- */

#if GY_DIAGNOSTICS
typedef struct diag_wait {
    gy_physics *p;
    gy_physics_diagnostics d;
} diag_wait;

static bool diag_ready(void *ctx)
{
    diag_wait *w = ctx;
    return gy_physics_get_diagnostics(w->p, &w->d) == GY_OK && w->d.sample >= 3 &&
           w->d.step.samples > 0 && w->d.pacing_error.samples > 0;
}
#endif

static void test_physics_diagnostics_are_sampled(void **state)
{
    (void)state;
    gy_physics *p = realtime_with_clock(NULL);
#if GY_DIAGNOSTICS
    diag_wait w = {p, {0}};
    assert_true(gy_test_wait_until(diag_ready, &w, 20.0));
    assert_int_equal(w.d.adapter.bodies[GY_MOTION_DYNAMIC], 1);
    assert_int_equal(w.d.adapter.bodies[GY_MOTION_STATIC], 1);
    assert_true(w.d.tick > 0);
    assert_true(w.d.step.p50 <= w.d.step.p99 && w.d.step.p99 <= w.d.step.max);
    assert_true(w.d.step.mean > 0.0);
    assert_true(w.d.pacing_error.p50 <= w.d.pacing_error.max);
    assert_true(w.d.publish.samples > 0);
#else
    gy_physics_diagnostics d;
    assert_result(gy_physics_get_diagnostics(p, &d), GY_ERR_UNSUPPORTED);
#endif
    gy_physics_destroy(p);
}

#if GY_DIAGNOSTICS
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sampler's percentiles, found by selection, are exact order statistics: against qsort, for
 * sizes 1..1,024 and orders that break naive selection. */
static void test_physics_diagnostics_percentiles_match_sorting(void **state)
{
    (void)state;
    static gy_phys_window w;
    static uint64_t scratch[GY_PHYS_WINDOW], sorted[GY_PHYS_WINDOW];
    const uint32_t sizes[] = {1, 2, 3, 4, 7, 100, 101, 1000, GY_PHYS_WINDOW};
    uint32_t seed = 99u;
    for (int order = 0; order < 5; order++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            uint32_t n = sizes[z];
            memset(&w, 0, sizeof w);
            for (uint32_t i = 0; i < n; i++) {
                seed = seed * 1664525u + 1013904223u;
                uint64_t v = order == 0   ? seed >> 8         /* random */
                             : order == 1 ? i                 /* ascending */
                             : order == 2 ? n - i             /* descending */
                             : order == 3 ? 5000u             /* all equal */
                                          : (seed >> 8) % 3u; /* few distinct */
                gy_phys_window_add(&w, v);
            }
            memcpy(sorted, w.ns, n * sizeof(uint64_t));
            qsort(sorted, n, sizeof(uint64_t), cmp_u64);
            gy_physics_timing t = gy_phys_timing_of(&w, scratch);
            double sum = 0.0;
            for (uint32_t i = 0; i < n; i++)
                sum += (double)sorted[i];
            assert_int_equal(t.samples, n);
            assert_true(t.p50 == (double)sorted[(n - 1u) / 2u] * 1e-9);
            assert_true(t.p99 == (double)sorted[(uint64_t)(n - 1u) * 99u / 100u] * 1e-9);
            assert_true(t.max == (double)sorted[n - 1u] * 1e-9);
            assert_true(fabs(t.mean - sum / n * 1e-9) <= 1e-15);
            /* The window itself is untouched. */
            assert_int_equal(w.count, n);
        }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if GY_DIAGNOSTICS
        cmocka_unit_test(test_physics_diagnostics_percentiles_match_sorting),
#endif
        cmocka_unit_test(test_physics_hold_epoch_counts_transitions_only),
        cmocka_unit_test(test_physics_time_scale_zero_freezes),
        cmocka_unit_test(test_physics_fractional_time_scale_in_real_time),
        cmocka_unit_test(test_physics_release_while_time_is_held_exits_without_a_step),
        cmocka_unit_test(test_physics_hitch_yields_at_most_four_steps),
        cmocka_unit_test(test_physics_hold_cycle_drops_accumulated_time),
        cmocka_unit_test(test_physics_frame_budget_stops_catch_up),
        cmocka_unit_test(test_physics_stop_start_keeps_bodies_and_poses),
        cmocka_unit_test(test_physics_live_queries_while_the_thread_steps),
        cmocka_unit_test(test_physics_shared_proxy_pages_stay_whole_under_a_running_thread),
        cmocka_unit_test(test_physics_diagnostics_are_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
