/* Collision-event lifecycle: ENTER/STAY/EXIT per collider pair, sleeping pairs, releases, stop,
 * a model-based randomized check and the steady-state allocation budget. */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact_events.h"

/* ---- fixtures -------------------------------------------------------------------------------- */

/* Body awake flags by body bits (tests use small body handles). */
#define MAX_BODIES 64
typedef struct awake_table {
    bool asleep[MAX_BODIES];
    uint32_t calls;
} awake_table;

static bool table_awake(void *ctx, gy_body_id body)
{
    awake_table *w = ctx;
    w->calls++;
    return body.bits >= MAX_BODIES || !w->asleep[body.bits];
}

static gy_contact touch(uint64_t body_a, uint64_t body_b, uint64_t col_a, uint64_t col_b,
                        double penetration)
{
    gy_contact c = {0};
    c.body_a.bits = body_a;
    c.body_b.bits = body_b;
    c.collider_a.bits = col_a;
    c.collider_b.bits = col_b;
    c.user_a = 1000 + body_a;
    c.user_b = 1000 + body_b;
    c.point = (gy_vec3){penetration, 2.0 * penetration, -1.0};
    c.normal = (gy_vec3){0.0, 1.0, 0.0};
    c.penetration = penetration;
    c.normal_impulse = 10.0 * penetration + 1.0;
    c.tangent_impulse = 0.5;
    return c;
}

/* Pair k of a crowd: its own two bodies and colliders, so keys never collide. */
static gy_contact crowd_pair(uint32_t k, double penetration)
{
    uint64_t a = 2u * (uint64_t)k + 1u, b = a + 1u;
    return touch(a, b, a, b, penetration);
}

static const gy_contact_event *events_of(const gy_contact_tracker *t, uint32_t *n)
{
    return gy_contact_tracker_events(t, n);
}

static void assert_same_geometry(const gy_contact *got, const gy_contact *want)
{
    assert_int_equal(got->body_a.bits, want->body_a.bits);
    assert_int_equal(got->body_b.bits, want->body_b.bits);
    assert_int_equal(got->collider_a.bits, want->collider_a.bits);
    assert_int_equal(got->collider_b.bits, want->collider_b.bits);
    assert_int_equal(got->user_a, want->user_a);
    assert_int_equal(got->user_b, want->user_b);
    assert_int_equal(got->is_sensor, want->is_sensor);
    assert_true(got->point.x == want->point.x && got->point.y == want->point.y &&
                got->point.z == want->point.z);
    assert_true(got->normal.x == want->normal.x && got->normal.y == want->normal.y &&
                got->normal.z == want->normal.z);
    assert_true(got->penetration == want->penetration);
}

static void assert_event(const gy_contact_event *ev, uint64_t tick, gy_contact_event_type type,
                         const gy_contact *want, bool zero_impulse)
{
    assert_int_equal(ev->tick, tick);
    assert_int_equal(ev->type, type);
    assert_same_geometry(&ev->contact, want);
    if (zero_impulse) {
        assert_true(ev->contact.normal_impulse == 0.0);
        assert_true(ev->contact.tangent_impulse == 0.0);
    } else {
        assert_true(ev->contact.normal_impulse == want->normal_impulse);
        assert_true(ev->contact.tangent_impulse == want->tangent_impulse);
    }
}

/* Runs one update and returns its events, clearing the previous tick's first. */
static const gy_contact_event *step(gy_contact_tracker *t, uint64_t tick, const gy_contact *c,
                                    uint32_t n, uint32_t *out_n)
{
    gy_contact_tracker_clear_events(t);
    assert_result(gy_contact_tracker_update(t, tick, c, n), GY_OK);
    return events_of(t, out_n);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void test_contact_events_enter_then_stay_then_exit(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact first = touch(1, 2, 3, 4, 0.01);
    first.is_sensor = true;
    gy_contact second = touch(1, 2, 3, 4, 0.02);
    second.is_sensor = true;
    uint32_t n;

    const gy_contact_event *ev = step(&t, 1, &first, 1, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 1, GY_CONTACT_EVENT_ENTER, &first, false);

    ev = step(&t, 2, &second, 1, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 2, GY_CONTACT_EVENT_STAY, &second, false);

    ev = step(&t, 3, NULL, 0, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 3, GY_CONTACT_EVENT_EXIT, &second, true);

    step(&t, 4, NULL, 0, &n);
    assert_int_equal(n, 0);
    assert_int_equal(gy_contact_tracker_get_stats(&t).pairs, 0);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_duplicate_pair_yields_one_event(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact shallow = touch(1, 2, 3, 4, 0.01);
    gy_contact deep = touch(1, 2, 3, 4, 0.05);
    /* The same pair with a/b flipped must still be the same pair. */
    gy_contact flipped = touch(2, 1, 4, 3, 0.03);
    gy_contact list[] = {shallow, deep, flipped, touch(5, 6, 7, 8, 0.01)};
    uint32_t n;

    const gy_contact_event *ev = step(&t, 1, list, 4, &n);
    assert_int_equal(n, 2);
    assert_event(&ev[0], 1, GY_CONTACT_EVENT_ENTER, &deep, false);
    assert_int_equal(ev[1].type, GY_CONTACT_EVENT_ENTER);
    assert_int_equal(ev[1].contact.collider_a.bits, 7);

    ev = step(&t, 2, list, 4, &n);
    assert_int_equal(n, 2);
    assert_event(&ev[0], 2, GY_CONTACT_EVENT_STAY, &deep, false);
    assert_int_equal(ev[1].type, GY_CONTACT_EVENT_STAY);

    gy_contact_tracker_stats s = gy_contact_tracker_get_stats(&t);
    assert_int_equal(s.duplicates, 4);
    assert_int_equal(s.pairs, 2);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_separate_and_touch_again_reenters(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact c = touch(1, 2, 3, 4, 0.01);
    uint32_t n;
    const gy_contact_event *ev = step(&t, 1, &c, 1, &n);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_ENTER);
    ev = step(&t, 2, NULL, 0, &n);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_EXIT);
    ev = step(&t, 3, &c, 1, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 3, GY_CONTACT_EVENT_ENTER, &c, false);
    ev = step(&t, 4, &c, 1, &n);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_STAY);
    gy_contact_tracker_fini(&t);
}

/* ---- releases and stop ----------------------------------------------------------------------- */

static void test_contact_events_body_release_exits_with_last_geometry(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact c12 = touch(1, 2, 11, 12, 0.01);
    gy_contact c13 = touch(1, 3, 11, 13, 0.02);
    gy_contact c23 = touch(2, 3, 12, 13, 0.03);
    gy_contact all[] = {c12, c13, c23};
    uint32_t n;
    step(&t, 1, all, 3, &n);
    assert_int_equal(n, 3);

    /* Released during tick 2's command drain: its EXITs join tick 2's events. */
    gy_contact_tracker_clear_events(&t);
    assert_result(gy_contact_tracker_body_released(&t, 2, (gy_body_id){1}), GY_OK);
    assert_result(gy_contact_tracker_update(&t, 2, &c23, 1), GY_OK);
    const gy_contact_event *ev = events_of(&t, &n);
    assert_int_equal(n, 3);
    assert_event(&ev[0], 2, GY_CONTACT_EVENT_EXIT, &c12, true);
    assert_event(&ev[1], 2, GY_CONTACT_EVENT_EXIT, &c13, true);
    assert_event(&ev[2], 2, GY_CONTACT_EVENT_STAY, &c23, false);
    assert_int_equal(gy_contact_tracker_get_stats(&t).pairs, 1);

    /* Nothing left for body 1; unknown bodies are fine; null is misuse. */
    gy_contact_tracker_clear_events(&t);
    assert_result(gy_contact_tracker_body_released(&t, 2, (gy_body_id){1}), GY_OK);
    assert_result(gy_contact_tracker_body_released(&t, 2, (gy_body_id){99}), GY_OK);
    assert_result(gy_contact_tracker_body_released(&t, 2, (gy_body_id){0}),
                  GY_ERR_INVALID_ARGUMENT);
    events_of(&t, &n);
    assert_int_equal(n, 0);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_collider_release_exits_its_pairs(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact a = touch(1, 2, 11, 21, 0.01);
    gy_contact b = touch(1, 2, 12, 21, 0.02);
    gy_contact both[] = {a, b};
    uint32_t n;
    step(&t, 1, both, 2, &n);
    gy_contact_tracker_clear_events(&t);
    assert_result(gy_contact_tracker_collider_released(&t, 2, (gy_collider_id){12}), GY_OK);
    const gy_contact_event *ev = events_of(&t, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 2, GY_CONTACT_EVENT_EXIT, &b, true);
    assert_result(gy_contact_tracker_collider_released(&t, 2, (gy_collider_id){0}),
                  GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(gy_contact_tracker_get_stats(&t).pairs, 1);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_stop_exits_everything(void **state)
{
    (void)state;
    awake_table w = {0};
    gy_contact_tracker_def def = {.body_awake = table_awake, .body_awake_ctx = &w};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);
    gy_contact touching = touch(1, 2, 11, 12, 0.01);
    gy_contact sleeping = touch(3, 4, 13, 14, 0.02);
    gy_contact both[] = {touching, sleeping};
    uint32_t n;
    step(&t, 10, both, 2, &n);
    w.asleep[3] = w.asleep[4] = true;
    step(&t, 11, &touching, 1, &n);
    assert_int_equal(n, 2);

    gy_contact_tracker_clear_events(&t);
    assert_result(gy_contact_tracker_stop(&t, 12), GY_OK);
    const gy_contact_event *ev = events_of(&t, &n);
    assert_int_equal(n, 2);
    assert_event(&ev[0], 12, GY_CONTACT_EVENT_EXIT, &touching, true);
    assert_event(&ev[1], 12, GY_CONTACT_EVENT_EXIT, &sleeping, true);
    assert_int_equal(gy_contact_tracker_get_stats(&t).pairs, 0);

    /* A restarted world may count ticks afresh; the same pair enters again. */
    ev = step(&t, 1, &touching, 1, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 1, GY_CONTACT_EVENT_ENTER, &touching, false);
    gy_contact_tracker_fini(&t);
}

/* ---- sleeping -------------------------------------------------------------------------------- */

static void test_contact_events_sleeping_pair_stays_until_a_body_wakes(void **state)
{
    (void)state;
    awake_table w = {0};
    gy_contact_tracker_def def = {.body_awake = table_awake, .body_awake_ctx = &w};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);
    /* Body 1 rests on static body 2 (statics never count as awake). */
    w.asleep[2] = true;
    gy_contact resting = touch(1, 2, 11, 12, 0.004);
    uint32_t n;
    const gy_contact_event *ev = step(&t, 1, &resting, 1, &n);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_ENTER);
    assert_int_equal(w.calls, 0); /* listed pairs never ask */

    /* Body 1 falls asleep; the adapter stops listing the pair. */
    w.asleep[1] = true;
    for (uint64_t tick = 2; tick < 50; tick++) {
        ev = step(&t, tick, NULL, 0, &n);
        assert_int_equal(n, 1);
        assert_event(&ev[0], tick, GY_CONTACT_EVENT_STAY, &resting, true);
    }

    /* Woken while still touching: listed again, a STAY with impulses. */
    w.asleep[1] = false;
    gy_contact woken = touch(1, 2, 11, 12, 0.005);
    ev = step(&t, 50, &woken, 1, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 50, GY_CONTACT_EVENT_STAY, &woken, false);

    /* Asleep again, then woken and lifted off: the missing pair exits with its last geometry. */
    w.asleep[1] = true;
    ev = step(&t, 51, NULL, 0, &n);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_STAY);
    w.asleep[1] = false;
    ev = step(&t, 52, NULL, 0, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 52, GY_CONTACT_EVENT_EXIT, &woken, true);
    step(&t, 53, NULL, 0, &n);
    assert_int_equal(n, 0);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_sleeping_pair_exits_on_release(void **state)
{
    (void)state;
    awake_table w = {0};
    gy_contact_tracker_def def = {.body_awake = table_awake, .body_awake_ctx = &w};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);
    gy_contact c = touch(1, 2, 11, 12, 0.01);
    uint32_t n;
    step(&t, 1, &c, 1, &n);
    w.asleep[1] = w.asleep[2] = true;
    step(&t, 2, NULL, 0, &n);
    assert_int_equal(n, 1);

    gy_contact_tracker_clear_events(&t);
    assert_result(gy_contact_tracker_body_released(&t, 3, (gy_body_id){2}), GY_OK);
    assert_result(gy_contact_tracker_update(&t, 3, NULL, 0), GY_OK);
    const gy_contact_event *ev = events_of(&t, &n);
    assert_int_equal(n, 1);
    assert_event(&ev[0], 3, GY_CONTACT_EVENT_EXIT, &c, true);
    gy_contact_tracker_fini(&t);
}

/* ---- bad input ------------------------------------------------------------------------------- */

static void test_contact_events_bad_input_is_rejected_and_changes_nothing(void **state)
{
    (void)state;
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, NULL);
    gy_contact good = touch(1, 2, 3, 4, 0.01);
    uint32_t n;
    step(&t, 5, &good, 1, &n);
    gy_contact_tracker_clear_events(&t);

    gy_contact bad[6];
    for (int i = 0; i < 6; i++)
        bad[i] = touch(5, 6, 7, 8, 0.01);
    bad[0].normal.y = NAN;
    bad[1].penetration = INFINITY;
    bad[2].normal_impulse = NAN;
    bad[3].body_b.bits = 0;
    bad[4].collider_a.bits = 0;
    bad[5].collider_b.bits = bad[5].collider_a.bits;
    gy_result want[6] = {GY_ERR_NON_FINITE,       GY_ERR_NON_FINITE,       GY_ERR_NON_FINITE,
                         GY_ERR_INVALID_ARGUMENT, GY_ERR_INVALID_ARGUMENT, GY_ERR_INVALID_ARGUMENT};
    for (int i = 0; i < 6; i++) {
        /* The bad contact comes last, so a partial update would already have touched `good`. */
        gy_contact list[2] = {good, bad[i]};
        assert_result(gy_contact_tracker_update(&t, 6, list, 2), want[i]);
    }
    assert_result(gy_contact_tracker_update(&t, 6, NULL, 3), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_contact_tracker_update(&t, 5, &good, 1), GY_ERR_MISUSE);
    assert_result(gy_contact_tracker_update(&t, 4, &good, 1), GY_ERR_MISUSE);
    events_of(&t, &n);
    assert_int_equal(n, 0);

    /* Tick 6 is still the next tick and the pair still a STAY. */
    const gy_contact_event *ev = step(&t, 6, &good, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].type, GY_CONTACT_EVENT_STAY);
    gy_contact_tracker_fini(&t);
}

static void test_contact_events_out_of_memory_changes_nothing(void **state)
{
    (void)state;
    gy_contact crowd[200];
    for (uint32_t k = 0; k < 200; k++)
        crowd[k] = crowd_pair(k, 0.01);

    /* From the same start, fail the 1st, 2nd, ... allocation of a growing update until one
     * succeeds; every failure must leave pairs and events as they were. */
    uint32_t failures = 0;
    for (uint64_t k = 1;; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_contact_tracker_def def = {.allocator = &ta.base};
        gy_contact_tracker t;
        gy_contact_tracker_init(&t, &def);
        uint32_t n;
        step(&t, 1, crowd, 10, &n);
        assert_int_equal(n, 10);

        ta.fail_at = ta.calls + k;
        gy_result r = gy_contact_tracker_update(&t, 2, crowd, 200);
        const gy_contact_event *ev = events_of(&t, &n);
        if (r == GY_OK) {
            assert_int_equal(n, 210);
            assert_int_equal(ev[10].type, GY_CONTACT_EVENT_STAY);
            assert_int_equal(ev[209].type, GY_CONTACT_EVENT_ENTER);
        } else {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            failures++;
            assert_int_equal(gy_contact_tracker_get_stats(&t).pairs, 10);
            assert_int_equal(n, 10); /* tick 1's, untouched */
            assert_int_equal(ev[9].tick, 1);
            /* Still consistent: the retry at the same tick works. */
            ta.fail_at = 0;
            ev = step(&t, 2, crowd, 200, &n);
            assert_int_equal(n, 200);
            assert_int_equal(ev[9].type, GY_CONTACT_EVENT_STAY);
        }
        gy_contact_tracker_fini(&t);
        assert_int_equal(ta.live_blocks, 0);
        assert_int_equal(ta.live_bytes, 0);
        if (r == GY_OK)
            break;
    }
    assert_int_equal(failures, 4); /* lookup scratch, pair array, event array, index */
}

/* ---- growth and allocation ------------------------------------------------------------------- */

static void test_contact_events_growth_past_capacity_keeps_every_pair(void **state)
{
    (void)state;
    enum { TOTAL = 5000, PER_TICK = 250 };
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_contact_tracker_def def = {.allocator = &ta.base};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);
    gy_contact *crowd = malloc(TOTAL * sizeof *crowd);
    assert_non_null(crowd);
    for (uint32_t k = 0; k < TOTAL; k++)
        crowd[k] = crowd_pair(k, 0.001 * (k + 1));

    uint32_t n;
    uint64_t tick = 1;
    for (uint32_t listed = PER_TICK; listed <= TOTAL; listed += PER_TICK, tick++) {
        const gy_contact_event *ev = step(&t, tick, crowd, listed, &n);
        assert_int_equal(n, listed);
        for (uint32_t i = 0; i < n; i++) {
            /* Nothing exited, so table order is listing order. */
            gy_contact_event_type want =
                i < listed - PER_TICK ? GY_CONTACT_EVENT_STAY : GY_CONTACT_EVENT_ENTER;
            assert_event(&ev[i], tick, want, &crowd[i], false);
        }
    }
    assert_true(ta.reallocs + ta.allocs > 8); /* it really grew, several times */
    assert_int_equal(gy_contact_tracker_get_stats(&t).peak_pairs, TOTAL);

    /* Every pair exits exactly once. */
    const gy_contact_event *ev = step(&t, tick, NULL, 0, &n);
    assert_int_equal(n, TOTAL);
    bool *seen = calloc(TOTAL, sizeof *seen);
    assert_non_null(seen);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(ev[i].type, GY_CONTACT_EVENT_EXIT);
        uint64_t k = (ev[i].contact.collider_a.bits - 1u) / 2u;
        assert_true(k < TOTAL && !seen[k]);
        seen[k] = true;
        assert_same_geometry(&ev[i].contact, &crowd[k]);
    }
    free(seen);
    free(crowd);
    gy_contact_tracker_fini(&t);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_contact_events_steady_state_allocates_nothing(void **state)
{
    (void)state;
    enum { PAIRS = 600, SLEEPERS = 100, TICKS = 1000 };
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    awake_table w = {0};
    gy_contact_tracker_def def = {
        .allocator = &ta.base, .body_awake = table_awake, .body_awake_ctx = &w};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);

    /* Steady count with churn: each tick a tenth of the awake pairs is missing (they exit, the
     * previous tenth re-enters), and SLEEPERS pairs rest on asleep bodies 1 and 2. */
    gy_contact *all = malloc(PAIRS * sizeof *all);
    gy_contact *listed = malloc(PAIRS * sizeof *listed);
    assert_non_null(all);
    assert_non_null(listed);
    for (uint32_t k = 0; k < PAIRS; k++) {
        all[k] = crowd_pair(k, 0.01);
        all[k].body_a.bits = 100 + k; /* beyond the awake table: always awake */
        all[k].body_b.bits = 100000 + k;
        if (k < SLEEPERS) {
            all[k].body_a.bits = 1;
            all[k].body_b.bits = 2;
        }
    }
    uint32_t n;
    step(&t, 1, all, PAIRS, &n);
    w.asleep[1] = w.asleep[2] = true;

    uint64_t enters = 0, exits = 0, stays = 0;
    uint64_t calls = 0, allocs = 0, reallocs = 0, frees = 0;
    for (uint64_t tick = 2; tick < 2 + 50 + TICKS; tick++) {
        if (tick == 52) { /* warm-up over: the window starts */
            calls = ta.calls, allocs = ta.allocs, reallocs = ta.reallocs, frees = ta.frees;
            enters = exits = stays = 0;
        }
        uint32_t count = 0;
        for (uint32_t k = SLEEPERS; k < PAIRS; k++)
            if ((k + tick) % 10u != 0)
                listed[count++] = all[k];
        const gy_contact_event *ev = step(&t, tick, listed, count, &n);
        assert_int_equal(n, PAIRS); /* 50 exits stand in for the 50 missing pairs */
        for (uint32_t i = 0; i < n; i++) {
            enters += ev[i].type == GY_CONTACT_EVENT_ENTER;
            exits += ev[i].type == GY_CONTACT_EVENT_EXIT;
            stays += ev[i].type == GY_CONTACT_EVENT_STAY;
        }
    }
    assert_int_equal(ta.calls, calls);
    assert_int_equal(ta.allocs, allocs);
    assert_int_equal(ta.reallocs, reallocs);
    assert_int_equal(ta.frees, frees);
    /* The window really churned and kept the sleepers. */
    assert_int_equal(enters, (uint64_t)TICKS * (PAIRS - SLEEPERS) / 10u);
    assert_int_equal(exits, (uint64_t)TICKS * (PAIRS - SLEEPERS) / 10u);
    assert_int_equal(stays, (uint64_t)TICKS * (SLEEPERS + (PAIRS - SLEEPERS) * 8u / 10u));
    free(all);
    free(listed);
    gy_contact_tracker_fini(&t);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- model-based randomized check ------------------------------------------------------------ */

/* A deliberately naive reference: linear search, no hashing, exited pairs compacted in order. */
#define REF_MAX 512
typedef struct ref_pair {
    uint64_t lo, hi;
    gy_contact last;
    uint64_t seen;
    bool entering;
} ref_pair;

typedef struct ref_model {
    ref_pair pairs[REF_MAX];
    uint32_t count;
    gy_contact_event out[2 * REF_MAX];
    uint32_t out_count;
} ref_model;

static void ref_key(const gy_contact *c, uint64_t *lo, uint64_t *hi)
{
    *lo = c->collider_a.bits < c->collider_b.bits ? c->collider_a.bits : c->collider_b.bits;
    *hi = c->collider_a.bits < c->collider_b.bits ? c->collider_b.bits : c->collider_a.bits;
}

static void ref_emit(ref_model *m, uint64_t tick, gy_contact_event_type type, gy_contact c,
                     bool zero)
{
    assert_true(m->out_count < 2 * REF_MAX);
    if (zero)
        c.normal_impulse = c.tangent_impulse = 0.0;
    m->out[m->out_count++] = (gy_contact_event){.tick = tick, .type = type, .contact = c};
}

static void ref_update(ref_model *m, uint64_t tick, const gy_contact *c, uint32_t n, awake_table *w)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo, hi;
        ref_key(&c[i], &lo, &hi);
        uint32_t j = 0;
        while (j < m->count && !(m->pairs[j].lo == lo && m->pairs[j].hi == hi))
            j++;
        if (j == m->count) {
            assert_true(m->count < REF_MAX);
            m->pairs[m->count++] =
                (ref_pair){.lo = lo, .hi = hi, .last = c[i], .seen = tick, .entering = true};
        } else if (m->pairs[j].seen != tick) {
            m->pairs[j].last = c[i];
            m->pairs[j].seen = tick;
        } else if (c[i].penetration > m->pairs[j].last.penetration) {
            m->pairs[j].last = c[i];
        }
    }
    uint32_t kept = 0;
    for (uint32_t j = 0; j < m->count; j++) {
        ref_pair p = m->pairs[j];
        bool sleeping = !table_awake(w, p.last.body_a) && !table_awake(w, p.last.body_b);
        if (p.seen == tick) {
            ref_emit(m, tick, p.entering ? GY_CONTACT_EVENT_ENTER : GY_CONTACT_EVENT_STAY, p.last,
                     false);
            p.entering = false;
        } else if (sleeping) {
            ref_emit(m, tick, GY_CONTACT_EVENT_STAY, p.last, true);
        } else {
            ref_emit(m, tick, GY_CONTACT_EVENT_EXIT, p.last, true);
            continue;
        }
        m->pairs[kept++] = p;
    }
    m->count = kept;
}

static void ref_release_body(ref_model *m, uint64_t tick, uint64_t body)
{
    uint32_t kept = 0;
    for (uint32_t j = 0; j < m->count; j++) {
        ref_pair p = m->pairs[j];
        if (p.last.body_a.bits == body || p.last.body_b.bits == body)
            ref_emit(m, tick, GY_CONTACT_EVENT_EXIT, p.last, true);
        else
            m->pairs[kept++] = p;
    }
    m->count = kept;
}

static void ref_stop(ref_model *m, uint64_t tick)
{
    for (uint32_t j = 0; j < m->count; j++)
        ref_emit(m, tick, GY_CONTACT_EVENT_EXIT, m->pairs[j].last, true);
    m->count = 0;
}

static int event_order(const void *x, const void *y)
{
    const gy_contact_event *a = x, *b = y;
    uint64_t alo, ahi, blo, bhi;
    ref_key(&a->contact, &alo, &ahi);
    ref_key(&b->contact, &blo, &bhi);
    if (alo != blo)
        return alo < blo ? -1 : 1;
    if (ahi != bhi)
        return ahi < bhi ? -1 : 1;
    return (int)a->type - (int)b->type;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Open pairs seen in the tracker's output, for the pairing invariant. */
typedef struct open_set {
    uint64_t lo[REF_MAX], hi[REF_MAX];
    uint32_t count;
} open_set;

static int open_find(const open_set *o, uint64_t lo, uint64_t hi)
{
    for (uint32_t i = 0; i < o->count; i++)
        if (o->lo[i] == lo && o->hi[i] == hi)
            return (int)i;
    return -1;
}

/* Sorts this batch of tracker events, compares it with the reference's and checks that every
 * pair appears at most once per batch and follows ENTER (STAY)* EXIT. */
static void check_batch(gy_contact_tracker *t, ref_model *m, open_set *open, uint64_t *enters,
                        uint64_t *exits)
{
    uint32_t n;
    const gy_contact_event *got = events_of(t, &n);
    assert_int_equal(n, m->out_count);
    gy_contact_event *sorted = malloc((n + 1) * sizeof *sorted);
    assert_non_null(sorted);
    if (n > 0)
        memcpy(sorted, got, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, event_order);
    qsort(m->out, n, sizeof *m->out, event_order);
    for (uint32_t i = 0; i < n; i++) {
        assert_event(&sorted[i], m->out[i].tick, m->out[i].type, &m->out[i].contact, false);
        uint64_t lo, hi;
        ref_key(&sorted[i].contact, &lo, &hi);
        if (i > 0) {
            uint64_t plo, phi;
            ref_key(&sorted[i - 1].contact, &plo, &phi);
            assert_false(plo == lo && phi == hi);
        }
        int at = open_find(open, lo, hi);
        if (sorted[i].type == GY_CONTACT_EVENT_ENTER) {
            assert_int_equal(at, -1);
            open->lo[open->count] = lo;
            open->hi[open->count++] = hi;
            (*enters)++;
        } else {
            assert_true(at >= 0);
            if (sorted[i].type == GY_CONTACT_EVENT_EXIT) {
                open->lo[at] = open->lo[open->count - 1];
                open->hi[at] = open->hi[--open->count];
                (*exits)++;
            }
        }
    }
    free(sorted);
    m->out_count = 0;
    gy_contact_tracker_clear_events(t);
}

/* Body slot b (1-based) with its current generation: a released body's successor is a different
 * body with different colliders. Bits stay below MAX_BODIES so the awake table answers for them. */
static uint64_t body_bits(const uint32_t *gen, uint32_t b)
{
    return b + (uint64_t)gen[b - 1] * 16u;
}

static void test_contact_events_random_sequence_matches_reference(void **state)
{
    (void)state;
    /* Bodies 1..2 are static (never awake), 3..NB dynamic with random sleep; each body has two
     * colliders. Touching is a per-collider-pair Markov chain; the adapter omits pairs whose
     * bodies are both not awake and sometimes lists a pair twice. */
    enum { NB = 12, NC = 2 * NB, TICKS = 4000 };
    uint64_t rng = 0x2545f4914f6cdd1dull;
    awake_table w = {0};
    gy_contact_tracker_def def = {.body_awake = table_awake, .body_awake_ctx = &w};
    gy_contact_tracker t;
    gy_contact_tracker_init(&t, &def);
    static ref_model m;
    static open_set open;
    m.count = m.out_count = 0;
    open.count = 0;

    uint32_t gen[NB] = {0};
    bool touching[NC][NC] = {{false}};
    gy_contact listed[NC * NC];
    uint64_t enters = 0, exits = 0, sleep_stays = 0, releases = 0;
    w.asleep[1] = w.asleep[2] = true;

    for (uint64_t tick = 1; tick <= TICKS; tick++) {
        for (uint32_t b = 3; b <= NB; b++)
            if (rng_unit(&rng) < 0.05)
                w.asleep[body_bits(gen, b)] = !w.asleep[body_bits(gen, b)];
        if (rng_unit(&rng) < 0.02) {
            uint32_t b = 3 + (uint32_t)(rng_next(&rng) % (NB - 2));
            uint64_t body = body_bits(gen, b);
            assert_result(gy_contact_tracker_body_released(&t, tick, (gy_body_id){body}), GY_OK);
            ref_release_body(&m, tick, body);
            check_batch(&t, &m, &open, &enters, &exits); /* the release's own EXITs */
            w.asleep[body] = false;
            gen[b - 1] = (gen[b - 1] + 1u) % 3u;
            w.asleep[body_bits(gen, b)] = false;
            for (uint32_t k = 0; k < 2; k++)
                for (uint32_t o = 0; o < NC; o++)
                    touching[2 * (b - 1) + k][o] = touching[o][2 * (b - 1) + k] = false;
            releases++;
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < NC; i++) {
            for (uint32_t j = i + 1; j < NC; j++) {
                uint32_t bi = i / 2 + 1, bj = j / 2 + 1;
                if (bi == bj || (bi <= 2 && bj <= 2))
                    continue;
                if (rng_unit(&rng) < (touching[i][j] ? 0.1 : 0.03))
                    touching[i][j] = !touching[i][j];
                uint64_t body_i = body_bits(gen, bi), body_j = body_bits(gen, bj);
                if (!touching[i][j] || (w.asleep[body_i] && w.asleep[body_j]))
                    continue;
                uint64_t col_i = 1 + i + (uint64_t)gen[bi - 1] * 1000u;
                uint64_t col_j = 1 + j + (uint64_t)gen[bj - 1] * 1000u;
                double depth = 0.001 * (double)(rng_next(&rng) % 50);
                gy_contact c = touch(body_i, body_j, col_i, col_j, depth);
                c.is_sensor = (i + j) % 7 == 0;
                listed[n++] = c;
                if (rng_unit(&rng) < 0.05) {
                    c.penetration = 0.001 * (double)(rng_next(&rng) % 50);
                    listed[n++] = c;
                }
            }
        }
        /* Every third tick the adapter lists its pairs in another order (the tracker tries the
         * table's next pair first and must fall back to its hash table). */
        for (uint32_t i = n; tick % 3 == 0 && i > 1; i--) {
            uint32_t j = (uint32_t)(rng_next(&rng) % i);
            gy_contact tmp = listed[i - 1];
            listed[i - 1] = listed[j];
            listed[j] = tmp;
        }
        assert_result(gy_contact_tracker_update(&t, tick, listed, n), GY_OK);
        ref_update(&m, tick, listed, n, &w);
        uint32_t count;
        const gy_contact_event *ev = events_of(&t, &count);
        for (uint32_t i = 0; i < count; i++)
            sleep_stays += ev[i].type == GY_CONTACT_EVENT_STAY && ev[i].tick == tick &&
                           ev[i].contact.normal_impulse == 0.0;
        check_batch(&t, &m, &open, &enters, &exits);
    }
    assert_result(gy_contact_tracker_stop(&t, TICKS + 1), GY_OK);
    ref_stop(&m, TICKS + 1);
    check_batch(&t, &m, &open, &enters, &exits);

    assert_int_equal(open.count, 0);
    assert_int_equal(enters, exits);
    /* The sequence exercised what it claims to. */
    assert_true(enters > 1000);
    assert_true(sleep_stays > 1000);
    assert_true(releases > 20);
    assert_true(gy_contact_tracker_get_stats(&t).duplicates > 100);
    gy_contact_tracker_fini(&t);
}

/* ---- on_event ------------------------------------------------------------------------------ */

#define SINK_MAX 4096
typedef struct event_sink {
    gy_contact_event events[SINK_MAX];
    uint32_t count;
} event_sink;

static void sink_event(void *ctx, const gy_contact_event *ev)
{
    event_sink *k = ctx;
    assert_true(k->count < SINK_MAX);
    k->events[k->count++] = *ev;
}

/* Hands over the array tracker's events since the last call and compares them, in order, with
 * what the callback received meanwhile. Returns how many there were. */
static uint32_t assert_sink_matches(gy_contact_tracker *with_array, gy_contact_tracker *with_sink,
                                    event_sink *k)
{
    uint32_t n, none;
    const gy_contact_event *ev = events_of(with_array, &n);
    events_of(with_sink, &none);
    assert_int_equal(none, 0);
    assert_int_equal(k->count, n);
    for (uint32_t i = 0; i < n; i++) {
        const gy_contact_event *got = &k->events[i];
        assert_int_equal(got->tick, ev[i].tick);
        assert_int_equal(got->type, ev[i].type);
        assert_same_geometry(&got->contact, &ev[i].contact);
        assert_true(got->contact.normal_impulse == ev[i].contact.normal_impulse);
        assert_true(got->contact.tangent_impulse == ev[i].contact.tangent_impulse);
    }
    gy_contact_tracker_clear_events(with_array);
    k->count = 0;
    return n;
}

/* A tracker with on_event hands over exactly the events, in exactly the order, that one without
 * appends to its array, through updates (duplicates, sleepers), releases and stop; its own array
 * stays empty. */
static void test_contact_events_on_event_matches_the_event_array(void **state)
{
    (void)state;
    awake_table w;
    memset(&w, 0, sizeof w);
    static event_sink sink;
    sink.count = 0;
    gy_contact_tracker with_array, with_sink;
    gy_contact_tracker_def da = {NULL, table_awake, &w, NULL, NULL};
    gy_contact_tracker_def ds = {NULL, table_awake, &w, sink_event, &sink};
    gy_contact_tracker_init(&with_array, &da);
    gy_contact_tracker_init(&with_sink, &ds);
    uint64_t rng = 0x9e3779b97f4a7c15u;
    gy_contact batch[96];
    uint32_t total = 0, exits = 0;
    for (uint64_t tick = 1; tick <= 300; tick++) {
        for (uint32_t b = 1; b < 32; b++)
            w.asleep[b] = rng_unit(&rng) < 0.2;
        uint32_t n = 0;
        for (uint32_t k = 0; k < 15; k++) {
            if (rng_unit(&rng) < 0.6)
                batch[n++] = crowd_pair(k, 0.01 + rng_unit(&rng));
            if (n > 0 && rng_unit(&rng) < 0.1) /* the same pair again, deeper or not */
                batch[n] = batch[n - 1], batch[n].penetration = rng_unit(&rng), n++;
        }
        assert_result(gy_contact_tracker_update(&with_array, tick, batch, n), GY_OK);
        assert_result(gy_contact_tracker_update(&with_sink, tick, batch, n), GY_OK);
        total += assert_sink_matches(&with_array, &with_sink, &sink);
        if (tick % 37 == 0) {
            gy_body_id body = {1u + rng_next(&rng) % 30u};
            assert_result(gy_contact_tracker_body_released(&with_array, tick + 1u, body), GY_OK);
            assert_result(gy_contact_tracker_body_released(&with_sink, tick + 1u, body), GY_OK);
            exits += assert_sink_matches(&with_array, &with_sink, &sink);
        }
    }
    assert_result(gy_contact_tracker_stop(&with_array, 301), GY_OK);
    assert_result(gy_contact_tracker_stop(&with_sink, 301), GY_OK);
    exits += assert_sink_matches(&with_array, &with_sink, &sink);
    assert_true(total > 1000);
    assert_true(exits > 0);
    assert_true(gy_contact_tracker_get_stats(&with_sink).duplicates > 50);
    gy_contact_tracker_fini(&with_array);
    gy_contact_tracker_fini(&with_sink);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contact_events_enter_then_stay_then_exit),
        cmocka_unit_test(test_contact_events_duplicate_pair_yields_one_event),
        cmocka_unit_test(test_contact_events_separate_and_touch_again_reenters),
        cmocka_unit_test(test_contact_events_body_release_exits_with_last_geometry),
        cmocka_unit_test(test_contact_events_collider_release_exits_its_pairs),
        cmocka_unit_test(test_contact_events_stop_exits_everything),
        cmocka_unit_test(test_contact_events_sleeping_pair_stays_until_a_body_wakes),
        cmocka_unit_test(test_contact_events_sleeping_pair_exits_on_release),
        cmocka_unit_test(test_contact_events_bad_input_is_rejected_and_changes_nothing),
        cmocka_unit_test(test_contact_events_out_of_memory_changes_nothing),
        cmocka_unit_test(test_contact_events_growth_past_capacity_keeps_every_pair),
        cmocka_unit_test(test_contact_events_steady_state_allocates_nothing),
        cmocka_unit_test(test_contact_events_random_sequence_matches_reference),
        cmocka_unit_test(test_contact_events_on_event_matches_the_event_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
