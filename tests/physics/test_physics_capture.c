/* Capture of the thread boundary on the physics subsystem (gy_physics_capture_*, replay
 * commands): every batch recorded once and in order while the thread runs in real time, the
 * overflow policy, misuse, and payload checks on replayed commands. */
#include "test_physics_fixture.h"

#include <time.h>

#include "physics_state.h"

/* ---- a memory writer and a stream walker ----------------------------------------------------- */

typedef struct sink {
    unsigned char *bytes;
    size_t size, capacity;
} sink;

static gy_result sink_write(void *ctx, const void *bytes, size_t size)
{
    sink *s = ctx;
    if (s->capacity - s->size < size) {
        size_t cap = s->capacity ? s->capacity : 4096;
        while (cap - s->size < size)
            cap *= 2;
        s->bytes = realloc(s->bytes, cap);
        assert_non_null(s->bytes);
        s->capacity = cap;
    }
    memcpy(s->bytes + s->size, bytes, size);
    s->size += size;
    return GY_OK;
}

/* What a stream holds: batches and commands, with a checksum over the impulses' y components. */
typedef struct walked {
    uint64_t batches, commands, states;
    uint64_t last_seq, last_batch_tick, last_state_tick;
    double impulse_sum;
    bool in_order;
} walked;

static walked walk(const sink *s)
{
    walked w;
    memset(&w, 0, sizeof w);
    w.in_order = true;
    size_t at = 0;
    while (at < s->size) {
        gy_capture_record rec;
        assert_true(s->size - at >= sizeof rec);
        memcpy(&rec, s->bytes + at, sizeof rec);
        at += sizeof rec;
        assert_true(rec.size <= s->size - at); /* whole records only */
        const unsigned char *body = s->bytes + at;
        if (rec.kind == GY_CAPTURE_BATCH) {
            gy_capture_batch b;
            memcpy(&b, body, sizeof b);
            w.in_order &= b.seq == w.last_seq + 1u && b.tick >= w.last_batch_tick;
            w.last_seq = b.seq;
            w.last_batch_tick = b.tick;
            w.batches++;
            size_t c = sizeof b;
            for (uint32_t i = 0; i < b.count; i++) {
                gy_capture_command ch;
                gy_command cmd;
                memcpy(&ch, body + c, sizeof ch);
                memcpy(&cmd, body + c + sizeof ch, sizeof cmd);
                if (cmd.type == GY_PHYS_CMD_ADD_IMPULSE) {
                    gy_phys_cmd_body cb;
                    memcpy(&cb, cmd.body.bytes, sizeof cb);
                    w.impulse_sum += cb.v[1];
                }
                c += sizeof ch + sizeof cmd + gy_capture_padded(ch.payload_size);
                w.commands++;
            }
            assert_int_equal(c, rec.size);
        } else if (rec.kind == GY_CAPTURE_STATE) {
            gy_capture_state st;
            memcpy(&st, body, sizeof st);
            w.in_order &= st.tick > w.last_state_tick;
            w.last_state_tick = st.tick;
            w.states++;
        } else {
            fail_msg("unexpected record kind %u", rec.kind);
        }
        at += rec.size;
    }
    return w;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* Real time, the game publishing as fast as it can while the physics thread drains at its own
 * pace: every batch is in the capture exactly once, in publish order, with every command. */
static void test_capture_records_every_batch_once_in_real_time(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics_def d = gy_default_physics_def();
    d.allocator = &ta.base;
    gy_physics *p = fx_physics(&d);
    gy_physics_capture_def cd = {64u << 10};
    assert_result(gy_physics_capture_begin(p, &cd), GY_OK);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    fx_create(p, fx_sphere(0, 1, gy_v3(0, 10, 0), 0.5));
    assert_result(gy_physics_publish(p, NULL), GY_OK);

    enum { BATCHES = 3000 };
    sink s = {0};
    double sent = 0.0;
    uint64_t commands = 1;
    for (uint32_t i = 0; i < BATCHES; i++) {
        uint32_t n = 1u + i % 3u;
        for (uint32_t k = 0; k < n; k++) {
            double v = 1e-6 * (double)(i + k);
            assert_result(
                gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1}, gy_v3(0, v, 0)),
                GY_OK);
            sent += v;
            commands++;
        }
        assert_result(gy_physics_publish(p, NULL), GY_OK);
        if (i % 16u == 0)
            assert_result(gy_physics_capture_drain(p, sink_write, &s), GY_OK);
        /* The physics thread records every batch it drains in one go, so the game keeps at most
         * 64 batches unacknowledged: a burst then fits the 64 KiB buffer whatever the relative
         * speed of the two threads, and the buffer still wraps many times over the run. */
        uint64_t deadline = now_ns() + FX_TIMEOUT_NS;
        while (gy_command_queue_acknowledged(p->cfg.commands) + 64u < (uint64_t)i + 2u &&
               now_ns() < deadline) {
            assert_result(gy_physics_capture_drain(p, sink_write, &s), GY_OK);
            sched_yield();
        }
    }
    /* Every batch applied: the physics thread acknowledged the last one (publishing nothing
     * carries the batches that waited in game-side staging into the rings). */
    uint64_t last = BATCHES + 1u, deadline = now_ns() + FX_TIMEOUT_NS;
    while (gy_command_queue_acknowledged(p->cfg.commands) < last && now_ns() < deadline) {
        assert_result(gy_physics_publish(p, NULL), GY_OK);
        assert_result(gy_physics_capture_drain(p, sink_write, &s), GY_OK);
        sched_yield();
    }
    assert_true(gy_command_queue_acknowledged(p->cfg.commands) >= last);
    uint64_t end_tick = 0, overflow_tick = 1;
    assert_result(gy_physics_capture_end(p, sink_write, &s, &end_tick, &overflow_tick), GY_OK);
    assert_int_equal(overflow_tick, 0);
    assert_false(gy_physics_capturing(p));
    walked w = walk(&s);
    assert_int_equal(w.batches, BATCHES + 1u);
    assert_int_equal(w.commands, commands);
    assert_true(w.in_order);
    assert_near(w.impulse_sum, sent, 1e-12); /* summed in the same order: equal */
    assert_true(w.last_batch_tick <= end_tick + 1u);
    assert_true(w.last_state_tick <= end_tick);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
    free(s.bytes);
    assert_int_equal(ta.live_blocks, 0);
}

/* A buffer the game does not drain fills: recording stops at a whole record, and the end
 * reports GY_ERR_CAPACITY with the tick whose record did not fit. */
static void test_capture_overflow_is_reported_with_its_tick(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    for (uint32_t i = 0; i < 100; i++)
        fx_create(p, fx_sphere(i, i + 1u, gy_v3((double)i, 10, 0), 0.25));
    fx_step(p, 1);
    gy_physics_capture_def cd = {4096};
    assert_result(gy_physics_capture_begin(p, &cd), GY_OK);
    /* 100 bodies: 1,624 bytes per state; the third does not fit in 4 KiB. */
    fx_step(p, 10);
    sink s = {0};
    uint64_t end_tick = 0, overflow_tick = 0;
    assert_result(gy_physics_capture_end(p, sink_write, &s, &end_tick, &overflow_tick),
                  GY_ERR_CAPACITY);
    assert_int_equal(overflow_tick, 4);
    assert_int_equal(end_tick, 11);
    walked w = walk(&s);
    assert_int_equal(w.states, 2);
    assert_int_equal(w.last_state_tick, 3);
    gy_physics_destroy(p);
    free(s.bytes);
}

static void test_capture_misuse_returns_errors(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    sink s = {0};
    gy_physics_capture_def tiny = {100}, huge = {(1u << 30) + 1u};
    assert_result(gy_physics_capture_begin(NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_capture_begin(p, &tiny), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_capture_begin(p, &huge), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_capture_drain(p, sink_write, &s), GY_ERR_MISUSE);
    assert_result(gy_physics_capture_end(p, sink_write, &s, NULL, NULL), GY_ERR_MISUSE);
    assert_result(gy_physics_capture_begin(p, NULL), GY_OK);
    assert_result(gy_physics_capture_begin(p, NULL), GY_ERR_MISUSE);
    assert_result(gy_physics_capture_drain(p, NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_capture_end(p, sink_write, &s, NULL, NULL), GY_OK);
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = GY_PHYS_CMD_ADD_IMPULSE;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_MUTATE, &c, NULL, 0), GY_ERR_MISUSE);
    assert_result(gy_physics_replay_seal(p), GY_ERR_MISUSE);
    assert_result(gy_physics_replay_drain(p, FX_TIMEOUT_NS), GY_ERR_MISUSE);
    assert_result(gy_physics_replay_steps(p, 2, FX_TIMEOUT_NS), GY_ERR_MISUSE);
    assert_result(gy_physics_set_replay(p, true), GY_OK);
    assert_result(gy_physics_replay_steps(p, 0, FX_TIMEOUT_NS), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_replay_steps(p, GY_PHYSICS_MAX_CATCHUP + 1u, FX_TIMEOUT_NS),
                  GY_ERR_INVALID_ARGUMENT);
    gy_physics_destroy(p);

    gy_physics_def d = gy_default_physics_def(); /* real time */
    gy_physics *rt = fx_physics(&d);
    assert_result(gy_physics_set_replay(rt, true), GY_ERR_MISUSE);
    gy_physics_destroy(rt);
    free(s.bytes);
}

/* Replayed commands are checked before they are recorded: a payload that does not match its
 * command, a payload on a command that takes none, an unknown type, a non-finite body. */
static void test_replay_command_refuses_bad_payloads(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics *p = fx_lockstep(&ta.base);
    assert_result(gy_physics_set_replay(p, true), GY_OK);
    /* A body payload as the record functions build it: the header, then one collider. */
    _Alignas(16) unsigned char bytes[sizeof(gy_phys_body_payload) + sizeof(gy_collider_def)];
    memset(bytes, 0, sizeof bytes);
    gy_phys_body_payload *head = (gy_phys_body_payload *)(void *)bytes;
    head->size = sizeof bytes;
    head->generation = 7;
    head->collider_count = 1;
    head->def = gy_default_body_def();
    head->colliders[0] = gy_default_collider_def();
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = GY_PHYS_CMD_CREATE_BODY;
    c.key = 0;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_LIFECYCLE, &c, bytes, sizeof bytes - 8),
                  GY_ERR_INVALID_ARGUMENT);
    head->collider_count = 2;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_LIFECYCLE, &c, bytes, sizeof bytes),
                  GY_ERR_INVALID_ARGUMENT);
    head->collider_count = 1;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_MUTATE, &c, bytes, sizeof bytes),
                  GY_ERR_INVALID_ARGUMENT);
    head->def.pose.position.x = NAN;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_LIFECYCLE, &c, bytes, sizeof bytes),
                  GY_ERR_NON_FINITE);
    head->def.pose.position.x = 0.0;
    /* Any byte where a bool lives is taken as a bool. */
    memset(&head->is_character, 0x5a, 1);
    memset(&head->colliders[0].is_sensor, 0x5a, 1);
    assert_result(gy_physics_replay_command(p, GY_COMMAND_LIFECYCLE, &c, bytes, sizeof bytes),
                  GY_ERR_INVALID_ARGUMENT);
    gy_command plain = c;
    plain.type = GY_PHYS_CMD_ADD_IMPULSE;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_MUTATE, &plain, bytes, sizeof bytes),
                  GY_ERR_INVALID_ARGUMENT);
    plain.type = 999;
    assert_result(gy_physics_replay_command(p, GY_COMMAND_MUTATE, &plain, NULL, 0),
                  GY_ERR_INVALID_ARGUMENT);
    memset(&head->is_character, 0, 1);
    memset(&head->colliders[0].is_sensor, 0, 1);
    assert_result(gy_physics_replay_command(p, GY_COMMAND_LIFECYCLE, &c, bytes, sizeof bytes),
                  GY_OK);
    assert_result(gy_physics_replay_seal(p), GY_OK);
    fx_step(p, 1);
    uint32_t n = 0;
    const gy_proxy *px = fx_proxies(p, &n, NULL);
    assert_true(n >= 1);
    assert_int_equal(px[0].generation, 7);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
}

/* In replay mode what the game records is checked but never reaches the physics thread. */
static void test_replay_discards_the_games_own_batches(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_sphere(0, 1, gy_v3(0, 10, 0), 0.5));
    fx_step(p, 1);
    uint64_t applied = fx_stats(p).commands_applied;
    assert_result(gy_physics_set_replay(p, true), GY_OK);
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1}, gy_v3(0, 1, 0)),
                  GY_OK);
    fx_step(p, 2);
    assert_int_equal(fx_stats(p).commands_applied, applied);
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = GY_PHYS_CMD_ADD_IMPULSE;
    gy_phys_cmd_body b = {1, 0, {0, 1, 0, 0, 0, 0}};
    memcpy(c.body.bytes, &b, sizeof b);
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1}, gy_v3(0, 5, 0)),
                  GY_OK);
    assert_result(gy_physics_replay_command(p, GY_COMMAND_MUTATE, &c, NULL, 0), GY_OK);
    assert_result(gy_physics_replay_seal(p), GY_OK);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_applied, applied + 1u);
    gy_physics_destroy(p);
}

/* A replayed catch-up iteration: its ticks are stepped before one publish, as the real-time
 * run's were, so what that publish reads (a body that fell asleep) falls on the run's tick. */
static void test_replay_steps_publish_once_after_the_last(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_sphere(0, 1, gy_v3(0, 10, 0), 0.5));
    fx_step(p, 1);
    assert_result(gy_physics_set_replay(p, true), GY_OK);
    gy_physics_stats before = fx_stats(p);
    assert_result(gy_physics_replay_steps(p, 5, FX_TIMEOUT_NS), GY_OK);
    gy_physics_stats after = fx_stats(p);
    assert_int_equal(after.ticks, before.ticks + 5u);
    assert_int_equal(after.iterations, before.iterations + 1u);
    assert_int_equal(after.publishes, before.publishes + 1u);
    /* And single steps after it, one publish each, as before. */
    fx_step(p, 2);
    assert_int_equal(fx_stats(p).publishes, after.publishes + 2u);
    assert_int_equal(fx_stats(p).ticks, after.ticks + 2u);
    gy_physics_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_records_every_batch_once_in_real_time),
        cmocka_unit_test(test_capture_overflow_is_reported_with_its_tick),
        cmocka_unit_test(test_capture_misuse_returns_errors),
        cmocka_unit_test(test_replay_command_refuses_bad_payloads),
        cmocka_unit_test(test_replay_discards_the_games_own_batches),
        cmocka_unit_test(test_replay_steps_publish_once_after_the_last),
    };
    return cmocka_run_group_tests_name("physics_capture", tests, NULL, NULL);
}
