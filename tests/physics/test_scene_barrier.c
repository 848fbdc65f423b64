/* Scene barrier: immediate grants while pacing or detached, grants at the end of a step (never
 * inside one), misuse errors instead of hangs, timeouts, wake-ups, the watchdog for grants and for
 * batch acknowledgements, the World-lock order check, and a hammer test across two real threads. */
#include "test_support.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command_queue.h"
#include "scene_barrier.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 8u
#else
#define SCALE 1u
#endif

#define MS 1000000ull

static int load_int(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store_int(int *p, int v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* ---- a scripted physics thread --------------------------------------------------------------- */

typedef struct phys {
    gy_barrier *b;
    int stop;
    int hold; /* while set, the thread stays inside its current step */
    int in_step;
    int steps;          /* steps finished */
    int pace_ms;        /* > 0: pace this long between steps; 0: step back to back */
    int detach_in_step; /* leave from inside the held step instead of reaching a safe point */
    int attached;
    int finished;
} phys;

static void *phys_main(void *arg)
{
    phys *p = arg;
    if (gy_barrier_attach_physics(p->b) != GY_OK)
        return NULL;
    store_int(&p->attached, 1);
    for (;;) {
        gy_barrier_safe_point(p->b);
        if (load_int(&p->stop))
            break;
        gy_barrier_set_activity(p->b, "step");
        store_int(&p->in_step, 1);
        while (load_int(&p->hold)) {
            if (load_int(&p->detach_in_step)) {
                gy_barrier_detach_physics(p->b);
                store_int(&p->in_step, 0);
                store_int(&p->finished, 1);
                return NULL;
            }
            sched_yield();
        }
        store_int(&p->in_step, 0);
        store_int(&p->steps, load_int(&p->steps) + 1);
        gy_barrier_set_activity(p->b, "pace");
        if (load_int(&p->pace_ms) > 0)
            gy_barrier_pace_until(p->b, gy_clock_now_ns() + (uint64_t)p->pace_ms * MS, NULL);
        else
            sched_yield();
    }
    gy_barrier_detach_physics(p->b);
    store_int(&p->finished, 1);
    return NULL;
}

static bool int_set(void *ctx)
{
    return load_int(ctx) != 0;
}

typedef struct phase_wait {
    gy_barrier *b;
    int physics; /* -1: don't care */
    int game;
} phase_wait;

static bool phases_reached(void *ctx)
{
    phase_wait *w = ctx;
    return (w->physics < 0 || (int)gy_barrier_physics_phase(w->b) == w->physics) &&
           (w->game < 0 || (int)gy_barrier_game_phase(w->b) == w->game);
}

static void wait_phases(gy_barrier *b, int physics, int game)
{
    phase_wait w = {b, physics, game};
    assert_true(gy_test_wait_until(phases_reached, &w, 10.0));
}

static void start_phys(phys *p, pthread_t *th)
{
    assert_int_equal(pthread_create(th, NULL, phys_main, p), 0);
    assert_true(gy_test_wait_until(int_set, &p->attached, 10.0));
}

static void stop_phys(phys *p, pthread_t th)
{
    store_int(&p->hold, 0);
    store_int(&p->stop, 1);
    gy_barrier_wake(p->b);
    assert_int_equal(pthread_join(th, NULL), 0);
}

static gy_barrier *make_barrier(const gy_barrier_def *def)
{
    gy_barrier *b = NULL;
    assert_result(gy_barrier_create(def, &b), GY_OK);
    return b;
}

/* A game thread of its own that requests a mutation (the test thread watches it). */
typedef struct requester {
    gy_barrier *b;
    phys *p;
    uint64_t timeout_ns;
    gy_result result;
    int granted;
    int in_step_at_grant;
    int steps_at_grant;
    int release; /* the test says when to end the mutation */
    int done;
} requester;

static void *requester_main(void *arg)
{
    requester *r = arg;
    r->result = gy_barrier_begin_mutation(r->b, r->timeout_ns);
    if (r->result == GY_OK) {
        if (r->p != NULL) {
            r->in_step_at_grant = load_int(&r->p->in_step);
            r->steps_at_grant = load_int(&r->p->steps);
        }
        store_int(&r->granted, 1);
        while (!load_int(&r->release))
            sched_yield();
        gy_barrier_end_mutation(r->b);
    }
    store_int(&r->done, 1);
    return NULL;
}

/* ---- single-thread behaviour ----------------------------------------------------------------- */

static void test_scene_barrier_grants_at_once_without_a_physics_thread(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_barrier_def def = {.allocator = &ta.base};
    gy_barrier *b = make_barrier(&def);
    assert_int_equal(gy_barrier_physics_phase(b), GY_PHYSICS_DETACHED);
    assert_false(gy_barrier_in_mutation(b));
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    assert_true(gy_barrier_in_mutation(b));
    assert_int_equal(gy_barrier_game_phase(b), GY_GAME_MUTATING);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    assert_false(gy_barrier_in_mutation(b));
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.mutations, 1);
    assert_int_equal(st.grants_immediate, 1);
    assert_int_equal(st.grants_at_safe_point, 0);
    gy_barrier_destroy(b);
    assert_int_equal(ta.live_blocks, 0);
}

typedef struct other_call {
    gy_barrier *b;
    int which;
    gy_result result;
} other_call;

static void *other_main(void *arg)
{
    other_call *c = arg;
    switch (c->which) {
    case 0:
        c->result = gy_barrier_begin_mutation(c->b, 0);
        break;
    case 1:
        c->result = gy_barrier_end_mutation(c->b);
        break;
    case 2:
        c->result = gy_barrier_attach_physics(c->b);
        break;
    default:
        c->result = gy_barrier_safe_point(c->b);
        break;
    }
    return NULL;
}

static gy_result call_from_other_thread(gy_barrier *b, int which)
{
    other_call c = {b, which, GY_OK};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, other_main, &c), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    return c.result;
}

static void test_scene_barrier_misuse_is_an_error_not_a_hang(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    /* Game-side misuse. */
    assert_result(gy_barrier_end_mutation(b), GY_ERR_MISUSE);
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    assert_result(gy_barrier_begin_mutation(b, 0), GY_ERR_MISUSE);       /* nested */
    assert_result(call_from_other_thread(b, 0), GY_ERR_BUSY);            /* a second game thread */
    assert_result(call_from_other_thread(b, 1), GY_ERR_WRONG_THREAD);    /* end by another */
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    assert_result(gy_barrier_end_mutation(b), GY_ERR_MISUSE); /* end twice */
    /* Physics calls from a thread that is not attached. */
    assert_result(gy_barrier_safe_point(b), GY_ERR_WRONG_THREAD);
    assert_result(gy_barrier_pace_until(b, 0, NULL), GY_ERR_WRONG_THREAD);
    assert_result(gy_barrier_detach_physics(b), GY_ERR_WRONG_THREAD);
    /* The physics thread may not open a mutation on itself. */
    assert_result(gy_barrier_attach_physics(b), GY_OK);
    assert_result(gy_barrier_attach_physics(b), GY_ERR_MISUSE);
    assert_result(call_from_other_thread(b, 2), GY_ERR_BUSY);
    assert_result(call_from_other_thread(b, 3), GY_ERR_WRONG_THREAD);
    assert_result(gy_barrier_begin_mutation(b, 0), GY_ERR_WRONG_THREAD);
    assert_result(gy_barrier_end_mutation(b), GY_ERR_WRONG_THREAD);
    assert_result(gy_barrier_safe_point(b), GY_OK);
    assert_result(gy_barrier_detach_physics(b), GY_OK);
    /* Back to detached: a mutation is granted at once again. */
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    assert_result(gy_barrier_begin_mutation(NULL, 0), GY_ERR_INVALID_ARGUMENT);
    gy_barrier_destroy(b);
}

static void test_scene_barrier_pace_never_returns_before_the_deadline(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    assert_result(gy_barrier_attach_physics(b), GY_OK);
    uint64_t worst_late = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t deadline = gy_clock_now_ns() + (uint64_t)(i % 4) * 700000u + 100000u;
        bool woken = true;
        assert_result(gy_barrier_pace_until(b, deadline, &woken), GY_OK);
        uint64_t now = gy_clock_now_ns();
        assert_true(now >= deadline);
        assert_false(woken);
        if (now - deadline > worst_late)
            worst_late = now - deadline;
    }
    /* A deadline already past returns at once. */
    assert_result(gy_barrier_pace_until(b, 0, NULL), GY_OK);
    /* A wake made before pacing is kept for the next pace. */
    gy_barrier_wake(b);
    bool woken = false;
    uint64_t t0 = gy_clock_now_ns();
    assert_result(gy_barrier_pace_until(b, t0 + 60000 * MS, &woken), GY_OK);
    assert_true(woken);
    assert_true(gy_clock_now_ns() - t0 < 10000 * MS);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.paces, 22);
    print_message("pace: worst lateness %.1f µs over 20 paces\n", (double)worst_late / 1e3);
    assert_result(gy_barrier_detach_physics(b), GY_OK);
    gy_barrier_destroy(b);
}

/* ---- two threads ----------------------------------------------------------------------------- */

typedef struct pacer {
    gy_barrier *b;
    uint64_t deadline;
    uint64_t returned_ns;
    int returned;
    int woken;
    int attached;
} pacer;

static void *pacer_main(void *arg)
{
    pacer *p = arg;
    gy_barrier_attach_physics(p->b);
    store_int(&p->attached, 1);
    bool woken = false;
    gy_barrier_pace_until(p->b, p->deadline, &woken);
    p->returned_ns = gy_clock_now_ns();
    p->woken = woken;
    store_int(&p->returned, 1);
    gy_barrier_detach_physics(p->b);
    return NULL;
}

typedef struct after {
    uint64_t t;
} after;

static bool time_passed(void *ctx)
{
    return gy_clock_now_ns() >= ((after *)ctx)->t;
}

static void test_scene_barrier_grant_while_pacing_is_immediate_and_holds_the_tick(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    pacer p = {.b = b, .deadline = gy_clock_now_ns() + 150 * MS};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, pacer_main, &p), 0);
    wait_phases(b, GY_PHYSICS_PACING, -1);

    /* Granted by the game thread itself: no waiting for the physics thread's sleep to end. */
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.grants_immediate, 1);
    assert_int_equal(st.grants_at_safe_point, 0);
    assert_true(p.deadline > gy_clock_now_ns()); /* the physics thread is still asleep */

    /* The deadline passes while the window is open: the physics thread must not leave pace. */
    after a = {p.deadline + 30 * MS};
    assert_true(gy_test_wait_until(time_passed, &a, 10.0));
    assert_int_equal(load_int(&p.returned), 0);
    wait_phases(b, GY_PHYSICS_PARKED, -1);
    uint64_t end_ns = gy_clock_now_ns();
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    assert_true(gy_test_wait_until(int_set, &p.returned, 10.0));
    assert_true(p.returned_ns >= end_ns);
    assert_false(p.woken);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_barrier_destroy(b);
}

static void test_scene_barrier_pacing_resumes_after_a_short_mutation(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    pacer p = {.b = b, .deadline = gy_clock_now_ns() + 100 * MS};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, pacer_main, &p), 0);
    wait_phases(b, GY_PHYSICS_PACING, -1);
    for (int i = 0; i < 50; i++) {
        assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
        assert_result(gy_barrier_end_mutation(b), GY_OK);
    }
    /* The window closed long before the deadline: the physics thread keeps pacing to it. */
    assert_true(gy_test_wait_until(int_set, &p.returned, 10.0));
    assert_true(p.returned_ns >= p.deadline);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.mutations, 50);
    assert_int_equal(st.grants_immediate, 50);
    gy_barrier_destroy(b);
}

static void test_scene_barrier_wake_ends_pacing_early(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    pacer p = {.b = b, .deadline = gy_clock_now_ns() + 600000 * MS};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, pacer_main, &p), 0);
    wait_phases(b, GY_PHYSICS_PACING, -1);
    gy_barrier_wake(b);
    assert_true(gy_test_wait_until(int_set, &p.returned, 10.0));
    assert_true(p.woken);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_barrier_destroy(b);
}

static void test_scene_barrier_midstep_request_is_granted_at_the_end_of_the_step(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    phys p = {.b = b, .hold = 1};
    pthread_t th;
    start_phys(&p, &th);
    assert_true(gy_test_wait_until(int_set, &p.in_step, 10.0));

    requester r = {.b = b, .p = &p};
    pthread_t rt;
    assert_int_equal(pthread_create(&rt, NULL, requester_main, &r), 0);
    wait_phases(b, GY_PHYSICS_RUNNING, GY_GAME_REQUESTING);
    /* However long the step lasts, the request waits for it. */
    for (int i = 0; i < 2000; i++) {
        assert_int_equal(load_int(&r.granted), 0);
        sched_yield();
    }
    store_int(&p.hold, 0);
    assert_true(gy_test_wait_until(int_set, &r.granted, 10.0));
    assert_int_equal(r.in_step_at_grant, 0);
    assert_int_equal(r.steps_at_grant, 1);
    /* The physics thread waits at the safe point for the window to close. */
    wait_phases(b, GY_PHYSICS_PARKED, GY_GAME_MUTATING);
    assert_int_equal(load_int(&p.steps), 1);
    store_int(&r.release, 1);
    assert_int_equal(pthread_join(rt, NULL), 0);
    assert_result(r.result, GY_OK);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.grants_at_safe_point, 1);
    assert_int_equal(st.grants_immediate, 0);
    stop_phys(&p, th);
    gy_barrier_destroy(b);
}

static bool twenty_steps(void *ctx)
{
    return load_int(&((phys *)ctx)->steps) >= 20;
}

static void test_scene_barrier_begin_times_out_and_withdraws_the_request(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    phys p = {.b = b, .hold = 1};
    pthread_t th;
    start_phys(&p, &th);
    assert_true(gy_test_wait_until(int_set, &p.in_step, 10.0));
    assert_result(gy_barrier_begin_mutation(b, 20 * MS), GY_ERR_TIMEOUT);
    assert_int_equal(gy_barrier_game_phase(b), GY_GAME_IDLE);
    assert_false(gy_barrier_in_mutation(b));
    store_int(&p.hold, 0);
    /* No request is left behind: the physics thread steps on without parking. */
    assert_true(gy_test_wait_until(twenty_steps, &p, 10.0));
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.timeouts, 1);
    assert_int_equal(st.grants_at_safe_point, 0);
    assert_int_equal(st.mutations, 0);
    /* And the next request works. */
    assert_result(gy_barrier_begin_mutation(b, 10000 * MS), GY_OK);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    stop_phys(&p, th);
    gy_barrier_destroy(b);
}

static void test_scene_barrier_detach_grants_a_pending_request(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    phys p = {.b = b, .hold = 1};
    pthread_t th;
    start_phys(&p, &th);
    assert_true(gy_test_wait_until(int_set, &p.in_step, 10.0));
    requester r = {.b = b};
    pthread_t rt;
    assert_int_equal(pthread_create(&rt, NULL, requester_main, &r), 0);
    wait_phases(b, -1, GY_GAME_REQUESTING);
    store_int(&p.detach_in_step, 1); /* the thread stops (hard stop) instead of stepping on */
    assert_true(gy_test_wait_until(int_set, &r.granted, 10.0));
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(gy_barrier_physics_phase(b), GY_PHYSICS_DETACHED);
    store_int(&r.release, 1);
    assert_int_equal(pthread_join(rt, NULL), 0);
    assert_result(r.result, GY_OK);
    gy_barrier_destroy(b);
}

/* ---- hammer ---------------------------------------------------------------------------------- */

typedef struct hammer {
    gy_barrier *b;
    int stop;
    int in_step;
    int mutating;
    int violations;
    int attached;
    uint64_t steps;
} hammer;

static void spin_for(uint32_t iterations)
{
    for (volatile uint32_t i = 0; i < iterations; i++) {
    }
}

static void *hammer_physics(void *arg)
{
    hammer *h = arg;
    gy_barrier_attach_physics(h->b);
    store_int(&h->attached, 1);
    uint64_t rnd = 7;
    while (!load_int(&h->stop)) {
        gy_barrier_safe_point(h->b);
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        /* The step: no mutation may be open at its start, middle or end. */
        store_int(&h->in_step, 1);
        if (load_int(&h->mutating))
            __atomic_add_fetch(&h->violations, 1, __ATOMIC_SEQ_CST);
        spin_for((uint32_t)((rnd >> 33) % 20000));
        if (load_int(&h->mutating))
            __atomic_add_fetch(&h->violations, 1, __ATOMIC_SEQ_CST);
        store_int(&h->in_step, 0);
        h->steps++;
        if ((rnd >> 40) % 4 == 0)
            gy_barrier_pace_until(h->b, gy_clock_now_ns() + 10000 + (rnd >> 50) % 50000, NULL);
    }
    gy_barrier_detach_physics(h->b);
    return NULL;
}

static void test_scene_barrier_hammer_never_steps_inside_a_mutation(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    hammer h = {.b = b};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hammer_physics, &h), 0);
    assert_true(gy_test_wait_until(int_set, &h.attached, 10.0));
    uint64_t rnd = 3;
    const uint32_t rounds = 6000 / SCALE;
    for (uint32_t i = 0; i < rounds; i++) {
        /* Every other round requests while a step is running (granted by the physics thread at
         * its next safe point); the rest request whenever (mostly while it paces). */
        if (i & 1)
            assert_true(gy_test_wait_until(int_set, &h.in_step, 10.0));
        assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
        store_int(&h.mutating, 1);
        if (load_int(&h.in_step))
            __atomic_add_fetch(&h.violations, 1, __ATOMIC_SEQ_CST);
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        spin_for((uint32_t)((rnd >> 33) % 500));
        if (load_int(&h.in_step))
            __atomic_add_fetch(&h.violations, 1, __ATOMIC_SEQ_CST);
        store_int(&h.mutating, 0);
        assert_result(gy_barrier_end_mutation(b), GY_OK);
        spin_for((uint32_t)((rnd >> 45) % 3000));
    }
    store_int(&h.stop, 1);
    gy_barrier_wake(b);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    print_message("hammer: %u mutations (%llu while pacing, %llu at a safe point), %llu steps, "
                  "slowest grant %.1f µs\n",
                  rounds, (unsigned long long)st.grants_immediate,
                  (unsigned long long)st.grants_at_safe_point, (unsigned long long)h.steps,
                  (double)st.grant_max_ns / 1e3);
    assert_int_equal(h.violations, 0);
    assert_int_equal(st.mutations, rounds);
    assert_int_equal(st.grants_immediate + st.grants_at_safe_point, rounds);
    assert_true(st.grants_immediate > 0);
    assert_true(st.grants_at_safe_point > 0);
    gy_barrier_destroy(b);
}

/* ---- watchdog -------------------------------------------------------------------------------- */

typedef struct watch_log {
    int count;
    gy_watchdog_report last;
} watch_log;

static void on_watchdog(void *ctx, const gy_watchdog_report *r)
{
    watch_log *w = ctx;
    w->last = *r;
    __atomic_add_fetch(&w->count, 1, __ATOMIC_SEQ_CST);
}

static void test_scene_barrier_watchdog_reports_a_slow_grant(void **state)
{
    (void)state;
    watch_log log = {0};
    gy_barrier_def def = {.watchdog_ns = 20 * MS, .watchdog = on_watchdog, .watchdog_ctx = &log};
    gy_barrier *b = make_barrier(&def);
    phys p = {.b = b, .hold = 1};
    pthread_t th;
    start_phys(&p, &th);
    assert_true(gy_test_wait_until(int_set, &p.in_step, 10.0));
    requester r = {.b = b, .p = &p};
    pthread_t rt;
    assert_int_equal(pthread_create(&rt, NULL, requester_main, &r), 0);
    /* The artificially slow step keeps the grant waiting past the bound. */
    assert_true(gy_test_wait_until(int_set, &log.count, 10.0));
    assert_int_equal(load_int(&r.granted), 0);
    store_int(&p.hold, 0);
    assert_true(gy_test_wait_until(int_set, &r.granted, 10.0));
    store_int(&r.release, 1);
    assert_int_equal(pthread_join(rt, NULL), 0);
    assert_int_equal(log.count, 1); /* once per request */
    assert_int_equal(log.last.event, GY_WATCHDOG_GRANT);
    assert_true(log.last.waited_ns >= 20 * MS);
    assert_int_equal(log.last.bound_ns, 20 * MS);
    assert_int_equal(log.last.game, GY_GAME_REQUESTING);
    assert_int_equal(log.last.physics, GY_PHYSICS_RUNNING);
    assert_string_equal(log.last.physics_activity, "step");
    assert_true(log.last.physics_phase_ns >= 20 * MS);
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.watchdog_reports, 1);
    assert_true(st.grant_max_ns >= 20 * MS);
    stop_phys(&p, th);
    gy_barrier_destroy(b);
}

typedef struct captured_log {
    char text[1024];
    int count;
} captured_log;

static void capture_log(void *ctx, gy_log_level level, const char *message)
{
    captured_log *c = ctx;
    if (level == GY_LOG_WARN) {
        snprintf(c->text, sizeof c->text, "%s", message);
        c->count++;
    }
}

static bool poll_reports(void *ctx)
{
    return gy_barrier_poll_watchdog(ctx);
}

static void test_scene_barrier_watchdog_reports_an_unacknowledged_batch(void **state)
{
    (void)state;
    gy_command_queue *q = NULL;
    assert_result(gy_command_queue_create(NULL, &q), GY_OK);
    captured_log cap = {{0}, 0};
    gy_logger logger = {capture_log, &cap};
    gy_barrier_def def = {.watchdog_ns = 20 * MS, .logger = &logger, .commands = q};
    gy_barrier *b = make_barrier(&def);

    assert_false(gy_barrier_poll_watchdog(b)); /* nothing published */
    gy_command c;
    memset(&c, 0, sizeof c);
    assert_result(gy_command_queue_record(q, GY_COMMAND_MUTATE, &c), GY_OK);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    /* Nobody consumes: reported once the bound passes, through the logger, once per batch. */
    assert_true(gy_test_wait_until(poll_reports, b, 10.0));
    assert_int_equal(cap.count, 1);
    assert_non_null(strstr(cap.text, "batch acknowledgement"));
    assert_non_null(strstr(cap.text, "published 1, acknowledged 0"));
    assert_non_null(strstr(cap.text, "physics thread detached"));
    assert_false(gy_barrier_poll_watchdog(b));
    assert_int_equal(cap.count, 1);
    /* Consumed: nothing more to report. */
    assert_int_equal(gy_command_queue_drain(q, 0, NULL, NULL), 1);
    assert_false(gy_barrier_poll_watchdog(b));
    gy_barrier_stats st;
    gy_barrier_get_stats(b, &st);
    assert_int_equal(st.watchdog_reports, 1);
    gy_barrier_destroy(b);
    gy_command_queue_destroy(q);
}

/* ---- lock order ------------------------------------------------------------------------------ */

static void test_world_lock_barrier_first_then_lock_is_allowed(void **state)
{
    (void)state;
    gy_barrier *b = make_barrier(NULL);
    assert_int_equal(gy_world_lock_depth(), 0);
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    gy_world_lock_note_acquired();
    gy_world_lock_note_acquired();
    assert_int_equal(gy_world_lock_depth(), gy_world_lock_checks_enabled() ? 2 : 0);
    gy_world_lock_note_released();
    gy_world_lock_note_released();
    assert_int_equal(gy_world_lock_depth(), 0);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    gy_barrier_destroy(b);
}

static void test_world_lock_held_while_requesting_the_barrier_aborts(void **state)
{
    (void)state;
    if (!gy_world_lock_checks_enabled())
        skip();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *devnull = freopen("/dev/null", "w", stderr);
        (void)devnull;
        gy_barrier *b = NULL;
        if (gy_barrier_create(NULL, &b) != GY_OK)
            _exit(3);
        gy_world_lock_note_acquired();
        gy_barrier_begin_mutation(b, 0); /* inverted order: must abort */
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_barrier_grants_at_once_without_a_physics_thread),
        cmocka_unit_test(test_scene_barrier_misuse_is_an_error_not_a_hang),
        cmocka_unit_test(test_scene_barrier_pace_never_returns_before_the_deadline),
        cmocka_unit_test(test_scene_barrier_grant_while_pacing_is_immediate_and_holds_the_tick),
        cmocka_unit_test(test_scene_barrier_pacing_resumes_after_a_short_mutation),
        cmocka_unit_test(test_scene_barrier_wake_ends_pacing_early),
        cmocka_unit_test(test_scene_barrier_midstep_request_is_granted_at_the_end_of_the_step),
        cmocka_unit_test(test_scene_barrier_begin_times_out_and_withdraws_the_request),
        cmocka_unit_test(test_scene_barrier_detach_grants_a_pending_request),
        cmocka_unit_test(test_scene_barrier_hammer_never_steps_inside_a_mutation),
        cmocka_unit_test(test_scene_barrier_watchdog_reports_a_slow_grant),
        cmocka_unit_test(test_scene_barrier_watchdog_reports_an_unacknowledged_batch),
        cmocka_unit_test(test_world_lock_barrier_first_then_lock_is_allowed),
        cmocka_unit_test(test_world_lock_held_while_requesting_the_barrier_aborts),
    };
    return cmocka_run_group_tests_name("scene_barrier", tests, NULL, NULL);
}
