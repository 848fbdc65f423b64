/* Command queue: 64-byte commands, sealed batches in publish order (lifecycle before mutate),
 * ring-full deferral without drops or steady-state allocation, detached oversize batches, payload
 * release on every path, hard-stop discard, acknowledgements, and a multi-million-command stress
 * run across two real threads. */
#include "test_support.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "command_queue.h"
#include "scene_barrier.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 16u /* sanitizer builds run the same tests on fewer commands */
#else
#define SCALE 1u
#endif

/* ---- helpers --------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Body layout used by these tests: u64[0] payload or filler, [1] batch seq, [2] per-ring running
 * number, [3] batch totals (lifecycle << 32 | mutate), [4] index within the batch's ring,
 * [5] random, [6] checksum of type, key and [1..5]. */
static uint64_t command_sum(const gy_command *c)
{
    uint64_t h = mix64(((uint64_t)c->type << 32) ^ c->key);
    for (int i = 1; i <= 5; i++)
        h = mix64(h ^ c->body.u64[i]);
    return h;
}

static gy_command make_command(gy_command_ring ring, uint64_t seq, uint64_t running,
                               uint32_t n_life, uint32_t n_mut, uint32_t index, uint64_t rnd)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = (uint16_t)(ring + 1);
    c.key = index;
    c.body.u64[0] = rnd;
    c.body.u64[1] = seq;
    c.body.u64[2] = running;
    c.body.u64[3] = ((uint64_t)n_life << 32) | n_mut;
    c.body.u64[4] = index;
    c.body.u64[5] = mix64(rnd);
    c.body.u64[6] = command_sum(&c);
    return c;
}

typedef struct payload_box {
    uint64_t seq;
    uint64_t running;
    gy_test_allocator *ta;
} payload_box;

typedef struct release_log {
    uint64_t released; /* atomically updated: the callback may run on either thread */
    gy_test_allocator *ta;
} release_log;

static void release_payload(void *ctx, gy_command *cmd)
{
    release_log *log = ctx;
    payload_box *box = gy_command_payload(cmd);
    __atomic_add_fetch(&log->released, 1, __ATOMIC_RELAXED);
    gy_free(&log->ta->base, box, sizeof *box);
}

static gy_command_queue *make_queue(gy_test_allocator *ta, release_log *log, uint32_t cap_l,
                                    uint32_t cap_m, uint32_t cap_b)
{
    gy_command_queue_def def = {
        .allocator = &ta->base,
        .lifecycle_capacity = cap_l,
        .mutate_capacity = cap_m,
        .batch_capacity = cap_b,
        .release_payload = log != NULL ? release_payload : NULL,
        .release_ctx = log,
    };
    gy_command_queue *q = NULL;
    assert_result(gy_command_queue_create(&def, &q), GY_OK);
    assert_non_null(q);
    return q;
}

static void record_plain(gy_command_queue *q, gy_command_ring ring, uint32_t key)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = (uint16_t)ring;
    c.key = key;
    assert_result(gy_command_queue_record(q, ring, &c), GY_OK);
}

static void record_with_payload(gy_command_queue *q, gy_test_allocator *ta, gy_command_ring ring,
                                uint32_t key)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.key = key;
    payload_box *box = gy_alloc(&ta->base, sizeof *box);
    assert_non_null(box);
    box->seq = key;
    box->ta = ta;
    gy_command_set_payload(&c, box);
    assert_result(gy_command_queue_record(q, ring, &c), GY_OK);
}

/* Drains every ready batch, appending (ring << 31 | key) to out; returns commands seen. */
static uint32_t drain_keys(gy_command_queue *q, uint32_t *out, uint32_t max, uint64_t *last_seq)
{
    uint32_t n = 0;
    gy_command_batch b;
    while (gy_command_queue_acquire(q, &b)) {
        if (last_seq != NULL) {
            assert_int_equal(b.seq, *last_seq + 1);
            *last_seq = b.seq;
        }
        gy_command_ring ring;
        gy_command *c;
        while ((c = gy_command_batch_next(&b, &ring)) != NULL) {
            assert_true(n < max);
            out[n++] = ((uint32_t)ring << 31) | c->key;
        }
        assert_result(gy_command_queue_release(q, &b), GY_OK);
    }
    return n;
}

/* ---- layout ---------------------------------------------------------------------------------- */

static void test_command_is_64_bytes_of_plain_data(void **state)
{
    (void)state;
    assert_int_equal(sizeof(gy_command), 64);
    assert_int_equal(GY_COMMAND_SIZE, 64);
    assert_int_equal(offsetof(gy_command, body), 8);
    assert_int_equal(sizeof(((gy_command *)0)->body), GY_COMMAND_BODY_SIZE);
    assert_int_equal(offsetof(gy_command, body.payload.rest), 16);
    gy_command c;
    memset(&c, 0, sizeof c);
    int x;
    assert_null(gy_command_payload(&c));
    gy_command_set_payload(&c, &x);
    assert_ptr_equal(gy_command_payload(&c), &x);
    assert_ptr_equal(gy_command_take_payload(&c), &x);
    assert_null(gy_command_payload(&c));
    assert_int_equal(c.flags & GY_COMMAND_PAYLOAD, 0);
}

/* ---- creation and validation ----------------------------------------------------------------- */

static void test_command_queue_create_validates(void **state)
{
    (void)state;
    gy_command_queue *q = NULL;
    assert_result(gy_command_queue_create(NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    gy_command_queue_def def = {.lifecycle_capacity = (1u << 26) + 1};
    assert_result(gy_command_queue_create(&def, &q), GY_ERR_INVALID_ARGUMENT);
    assert_null(q);
    def = (gy_command_queue_def){.batch_capacity = (1u << 20) + 1};
    assert_result(gy_command_queue_create(&def, &q), GY_ERR_INVALID_ARGUMENT);

    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    ta.fail_at = 2;
    def = (gy_command_queue_def){.allocator = &ta.base};
    assert_result(gy_command_queue_create(&def, &q), GY_ERR_OUT_OF_MEMORY);
    assert_null(q);
    assert_int_equal(ta.live_blocks, 0);

    /* Defaults: 4,095 lifecycle, 16,383 mutate, 255 batches. */
    assert_result(gy_command_queue_create(NULL, &q), GY_OK);
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.capacity[GY_COMMAND_LIFECYCLE], 4095);
    assert_int_equal(st.capacity[GY_COMMAND_MUTATE], 16383);
    assert_int_equal(st.batch_capacity, 255);
    gy_command_queue_destroy(q);
    gy_command_queue_destroy(NULL);
}

static void test_command_queue_record_validates(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 0, 0, 0);
    gy_command c;
    memset(&c, 0, sizeof c);
    assert_result(gy_command_queue_record(q, GY_COMMAND_MUTATE, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_command_queue_record(q, (gy_command_ring)2, &c), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_command_queue_record(NULL, GY_COMMAND_MUTATE, &c), GY_ERR_INVALID_ARGUMENT);
    /* A payload needs a release path. */
    int owned;
    gy_command_set_payload(&c, &owned);
    assert_result(gy_command_queue_record(q, GY_COMMAND_MUTATE, &c), GY_ERR_INVALID_ARGUMENT);
    uint64_t seq = 99;
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 0); /* nothing was recorded */
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- ordering -------------------------------------------------------------------------------- */

static void test_command_queue_delivers_lifecycle_before_mutate_in_publish_order(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 0, 0, 0);

    /* Batch 1 interleaves the rings; batch 2 is mutate only; batch 3 lifecycle only. */
    record_plain(q, GY_COMMAND_MUTATE, 1);
    record_plain(q, GY_COMMAND_LIFECYCLE, 2);
    record_plain(q, GY_COMMAND_MUTATE, 3);
    record_plain(q, GY_COMMAND_LIFECYCLE, 4);
    uint64_t seq = 0;
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 1);
    record_plain(q, GY_COMMAND_MUTATE, 5);
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 2);
    /* An empty publish seals nothing and names the last batch. */
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 2);
    record_plain(q, GY_COMMAND_LIFECYCLE, 6);
    /* Recorded but not published: invisible. */
    uint32_t keys[16];
    uint64_t last = 0;
    uint32_t n = drain_keys(q, keys, 16, &last);
    assert_int_equal(n, 5);
    assert_int_equal(last, 2);
    const uint32_t L = 0, M = 1u << 31;
    const uint32_t expect[] = {L | 2, L | 4, M | 1, M | 3, M | 5};
    assert_memory_equal(keys, expect, sizeof expect);
    assert_int_equal(gy_command_queue_acknowledged(q), 2);

    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 3);
    n = drain_keys(q, keys, 16, &last);
    assert_int_equal(n, 1);
    assert_int_equal(keys[0], L | 6);

    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.batches_published, 3);
    assert_int_equal(st.commands_published, 6);
    assert_int_equal(st.batches_consumed, 3);
    assert_int_equal(st.commands_consumed, 6);
    assert_int_equal(st.acknowledged, 3);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_command_queue_consumer_misuse_is_an_error(void **state)
{
    (void)state;
    gy_command_queue *q = make_queue(&(gy_test_allocator){0}, NULL, 0, 0, 0);
    gy_command_batch a, b;
    memset(&b, 0, sizeof b);
    assert_false(gy_command_queue_acquire(q, &a)); /* nothing published */
    assert_result(gy_command_queue_release(q, &b), GY_ERR_MISUSE);
    record_plain(q, GY_COMMAND_MUTATE, 1);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    record_plain(q, GY_COMMAND_MUTATE, 2);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    assert_true(gy_command_queue_acquire(q, &a));
    /* Holding a batch: a second acquire is refused until it is released. */
    assert_false(gy_command_queue_acquire(q, &b));
    assert_result(gy_command_queue_release(q, &b), GY_ERR_MISUSE);
    assert_result(gy_command_queue_release(q, &a), GY_OK);
    assert_result(gy_command_queue_release(q, &a), GY_ERR_MISUSE);
    assert_true(gy_command_queue_acquire(q, &b));
    assert_int_equal(b.seq, 2);
    assert_result(gy_command_queue_release(q, &b), GY_OK);
    gy_command_queue_destroy(q);
}

/* ---- payloads -------------------------------------------------------------------------------- */

static void test_command_queue_releases_payloads_not_taken(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    release_log log = {.ta = &ta};
    gy_command_queue *q = make_queue(&ta, &log, 0, 0, 0);
    int64_t base = ta.live_blocks;

    record_with_payload(q, &ta, GY_COMMAND_LIFECYCLE, 1);
    record_with_payload(q, &ta, GY_COMMAND_LIFECYCLE, 2);
    record_plain(q, GY_COMMAND_MUTATE, 3);
    record_with_payload(q, &ta, GY_COMMAND_MUTATE, 4);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);

    gy_command_batch b;
    assert_true(gy_command_queue_acquire(q, &b));
    gy_command *c;
    payload_box *taken = NULL;
    while ((c = gy_command_batch_next(&b, NULL)) != NULL) {
        if (c->key == 2) {
            taken = gy_command_take_payload(c); /* the consumer keeps this one */
            assert_int_equal(taken->seq, 2);
        }
        if (c->key == 3)
            assert_null(gy_command_payload(c));
    }
    assert_int_equal(log.released, 0); /* nothing released while the batch is held */
    assert_result(gy_command_queue_release(q, &b), GY_OK);
    assert_int_equal(log.released, 2);
    assert_int_equal(ta.live_blocks, base + 1);
    gy_free(&ta.base, taken, sizeof *taken);
    assert_int_equal(ta.live_blocks, base);

    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.payloads_released, 2);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_command_queue_hard_stop_discards_sealed_and_releases_payloads(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    release_log log = {.ta = &ta};
    /* Small rings: some sealed batches sit in the rings, later ones wait in staging. */
    gy_command_queue *q = make_queue(&ta, &log, 7, 7, 3);
    uint32_t made = 0;
    for (uint32_t batch = 0; batch < 10; batch++) {
        for (uint32_t i = 0; i < 5; i++) {
            record_with_payload(q, &ta, (gy_command_ring)(i & 1), batch * 100 + i);
            made++;
        }
        assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    }
    /* A batch the consumer was holding when its thread stopped. */
    gy_command_batch held;
    assert_true(gy_command_queue_acquire(q, &held));
    /* And an open batch that must survive the discard. */
    record_with_payload(q, &ta, GY_COMMAND_MUTATE, 7777);

    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_true(st.staged_batches > 0);
    assert_true(st.batches_deferred > 0);

    uint64_t discarded = gy_command_queue_discard_sealed(q);
    assert_int_equal(discarded, 50);
    assert_int_equal(log.released, 50);
    assert_int_equal(gy_command_queue_acknowledged(q), 10);
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.batches_discarded, 10);
    assert_int_equal(st.commands_discarded, 50);
    assert_int_equal(st.staged_batches, 0);

    /* The open batch is still there and publishes as batch 11. */
    uint64_t seq = 0;
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 11);
    uint32_t keys[4];
    uint64_t last = 10;
    assert_int_equal(drain_keys(q, keys, 4, &last), 1);
    assert_int_equal(keys[0], (1u << 31) | 7777);
    assert_int_equal(log.released, 51);
    (void)made;

    /* An open batch dropped explicitly releases its payloads too. */
    record_with_payload(q, &ta, GY_COMMAND_LIFECYCLE, 1);
    record_plain(q, GY_COMMAND_MUTATE, 2);
    assert_int_equal(gy_command_queue_discard_open(q), 2);
    assert_int_equal(log.released, 52);
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_int_equal(seq, 11);

    /* Whatever is still queued at destroy is released as well. */
    record_with_payload(q, &ta, GY_COMMAND_LIFECYCLE, 3);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    record_with_payload(q, &ta, GY_COMMAND_LIFECYCLE, 4);
    gy_command_queue_destroy(q);
    assert_int_equal(log.released, 54);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

/* ---- full rings ------------------------------------------------------------------------------ */

static void test_command_queue_full_rings_defer_without_dropping(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 15, 31, 7);
    enum { BATCHES = 40, PER = 9 };
    uint32_t key = 0;
    for (int round = 0; round < 3; round++) {
        uint64_t allocs_before = ta.allocs + ta.reallocs;
        for (int b = 0; b < BATCHES; b++) {
            for (int i = 0; i < PER; i++)
                record_plain(q, (gy_command_ring)(i % 3 == 0 ? 0 : 1), key++);
            assert_result(gy_command_queue_publish(q, NULL), GY_OK);
        }
        if (round == 2) /* same load as before: staging already at its peak */
            assert_int_equal(ta.allocs + ta.reallocs, allocs_before);
        gy_command_queue_stats st;
        gy_command_queue_get_stats(q, &st);
        assert_true(st.batches_deferred > 0);
        assert_true(st.staged_batches > 0);
        assert_true(st.staged_high_water > 0);
        assert_true(st.ring_high_water[GY_COMMAND_LIFECYCLE] <= 15);
        assert_true(st.ring_high_water[GY_COMMAND_MUTATE] <= 31);

        /* The consumer catches up; flushing carries the rest; nothing is lost or reordered. */
        static uint32_t keys[BATCHES * PER];
        uint32_t n = 0;
        uint64_t last = (uint64_t)round * BATCHES;
        for (int guard = 0; guard < 1000 && n < BATCHES * PER; guard++) {
            n += drain_keys(q, keys + n, BATCHES * PER - n, &last);
            gy_command_queue_flush(q);
        }
        assert_int_equal(n, BATCHES * PER);
        assert_int_equal(gy_command_queue_flush(q), 0);
        for (uint32_t b = 0; b < BATCHES; b++) {
            uint32_t first = ((uint32_t)round * BATCHES + b) * PER;
            const uint32_t *k = keys + b * PER;
            /* lifecycle (i % 3 == 0) first, then mutate, each in record order */
            assert_int_equal(k[0], first + 0);
            assert_int_equal(k[1], first + 3);
            assert_int_equal(k[2], first + 6);
            assert_int_equal(k[3], (1u << 31) | (first + 1));
            assert_int_equal(k[8], (1u << 31) | (first + 8));
        }
    }
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_command_queue_oversize_batch_travels_detached(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    release_log log = {.ta = &ta};
    gy_command_queue *q = make_queue(&ta, &log, 15, 15, 7);
    record_plain(q, GY_COMMAND_MUTATE, 1000000);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    /* 100 lifecycle + 40 mutate: bigger than either ring. */
    for (uint32_t i = 0; i < 100; i++)
        record_plain(q, GY_COMMAND_LIFECYCLE, i);
    for (uint32_t i = 0; i < 40; i++)
        record_plain(q, GY_COMMAND_MUTATE, 100 + i);
    record_with_payload(q, &ta, GY_COMMAND_MUTATE, 140);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    record_plain(q, GY_COMMAND_LIFECYCLE, 2000000);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);

    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.batches_detached, 1);

    static uint32_t keys[256];
    uint64_t last = 0;
    uint32_t n = drain_keys(q, keys, 256, &last);
    assert_int_equal(n, 143);
    assert_int_equal(last, 3);
    assert_int_equal(keys[0], (1u << 31) | 1000000);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(keys[1 + i], i);
    for (uint32_t i = 0; i < 41; i++)
        assert_int_equal(keys[101 + i], (1u << 31) | (100 + i));
    assert_int_equal(keys[142], 2000000);
    assert_int_equal(log.released, 1);
    /* The detached block comes back to the producer and is freed at its next publish. */
    int64_t before = ta.live_blocks;
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    assert_int_equal(ta.live_blocks, before - 1);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_command_queue_out_of_memory_while_staging_loses_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 3, 3, 3);
    for (uint32_t i = 0; i < 3; i++)
        record_plain(q, GY_COMMAND_MUTATE, i);
    /* The fourth record must move the open batch to staging: make that allocation fail. */
    ta.fail_at = ta.calls + 1;
    gy_command c;
    memset(&c, 0, sizeof c);
    c.key = 3;
    assert_result(gy_command_queue_record(q, GY_COMMAND_MUTATE, &c), GY_ERR_OUT_OF_MEMORY);
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.record_failures, 1);
    ta.fail_at = 0;
    assert_result(gy_command_queue_record(q, GY_COMMAND_MUTATE, &c), GY_OK);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    uint32_t keys[8];
    /* Four commands in a ring of three: the batch travels detached, whole and in order. */
    assert_int_equal(drain_keys(q, keys, 8, NULL), 4);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(keys[i], (1u << 31) | i);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- acknowledgements ------------------------------------------------------------------------ */

static void test_command_queue_pending_reports_the_oldest_unacknowledged_batch(void **state)
{
    (void)state;
    gy_command_queue *q = make_queue(&(gy_test_allocator){0}, NULL, 0, 0, 0);
    gy_command_pending p;
    gy_command_queue_pending(q, gy_clock_now_ns(), &p);
    assert_int_equal(p.oldest_seq, 0);
    assert_int_equal(p.oldest_age_ns, 0);
    uint64_t t0 = gy_clock_now_ns();
    record_plain(q, GY_COMMAND_MUTATE, 1);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    record_plain(q, GY_COMMAND_MUTATE, 2);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    record_plain(q, GY_COMMAND_MUTATE, 3);
    uint64_t later = gy_clock_now_ns() + 5000000000ull;
    gy_command_queue_pending(q, later, &p);
    assert_int_equal(p.published, 2);
    assert_int_equal(p.acknowledged, 0);
    assert_int_equal(p.oldest_seq, 1);
    assert_int_equal(p.open_commands, 1);
    assert_true(p.oldest_age_ns >= later - gy_clock_now_ns());
    assert_true(p.oldest_age_ns <= later - t0);
    assert_int_equal(gy_command_queue_drain(q, 1, NULL, NULL), 1);
    gy_command_queue_pending(q, later, &p);
    assert_int_equal(p.oldest_seq, 2);
    assert_int_equal(gy_command_queue_drain(q, 0, NULL, NULL), 1);
    gy_command_queue_pending(q, later, &p);
    assert_int_equal(p.oldest_seq, 0);
    assert_int_equal(p.oldest_age_ns, 0);
    gy_command_queue_destroy(q);
}

static void test_command_queue_wait_times_out_without_a_consumer(void **state)
{
    (void)state;
    gy_command_queue *q = make_queue(&(gy_test_allocator){0}, NULL, 0, 0, 0);
    assert_result(gy_command_queue_wait_acknowledged(q, 1, 1000000), GY_ERR_INVALID_ARGUMENT);
    record_plain(q, GY_COMMAND_MUTATE, 1);
    uint64_t seq;
    assert_result(gy_command_queue_publish(q, &seq), GY_OK);
    assert_result(gy_command_queue_wait_acknowledged(q, seq, 10000000), GY_ERR_TIMEOUT);
    assert_int_equal(gy_command_queue_drain(q, 0, NULL, NULL), 1);
    assert_result(gy_command_queue_wait_acknowledged(q, seq, 10000000), GY_OK);
    assert_result(gy_command_queue_wait_acknowledged(q, 0, 0), GY_OK);
    gy_command_queue_destroy(q);
}

/* ---- two threads ----------------------------------------------------------------------------- */

typedef struct stress {
    gy_command_queue *q;
    gy_test_allocator *ta;
    int stop;         /* producer → consumer: no more batches after what is published */
    uint64_t batches; /* consumer progress */
    uint64_t commands;
    uint64_t payloads_seen;
    uint64_t payloads_taken;
    uint64_t deferred_seen;
    char error[256]; /* first violation found by the consumer */
} stress;

static void stress_fail(stress *s, const char *what, uint64_t seq, uint64_t a, uint64_t b)
{
    if (s->error[0] == 0)
        snprintf(s->error, sizeof s->error, "batch %llu: %s (%llu vs %llu)",
                 (unsigned long long)seq, what, (unsigned long long)a, (unsigned long long)b);
}

static void *stress_consumer(void *arg)
{
    stress *s = arg;
    uint64_t expect_seq = 1;
    uint64_t running[2] = {0, 0};
    for (;;) {
        gy_command_batch b;
        if (!gy_command_queue_acquire(s->q, &b)) {
            /* The producer sets stop only after every batch was acknowledged. */
            if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
                break;
            sched_yield();
            continue;
        }
        if (b.seq != expect_seq)
            stress_fail(s, "sequence", b.seq, expect_seq, 0);
        expect_seq = b.seq + 1;
        uint32_t seen[2] = {0, 0};
        gy_command_ring ring;
        gy_command *c;
        bool in_mutate = false;
        while ((c = gy_command_batch_next(&b, &ring)) != NULL) {
            if (ring == GY_COMMAND_MUTATE)
                in_mutate = true;
            else if (in_mutate)
                stress_fail(s, "lifecycle after mutate", b.seq, 0, 0);
            if (c->type != ring + 1)
                stress_fail(s, "ring", b.seq, c->type, ring + 1);
            if (c->body.u64[6] != command_sum(c))
                stress_fail(s, "checksum", b.seq, c->body.u64[6], command_sum(c));
            if (c->body.u64[1] != b.seq)
                stress_fail(s, "command of another batch", b.seq, c->body.u64[1], b.seq);
            /* Whole batch: every command names the batch's totals, which must match what
             * arrived. */
            if ((c->body.u64[3] >> 32) != b.count[0] ||
                (c->body.u64[3] & 0xffffffffu) != b.count[1])
                stress_fail(s, "partial batch", b.seq, c->body.u64[3], b.count[0]);
            if (c->body.u64[4] != seen[ring])
                stress_fail(s, "order within ring", b.seq, c->body.u64[4], seen[ring]);
            if (c->body.u64[2] != running[ring])
                stress_fail(s, "completeness", b.seq, c->body.u64[2], running[ring]);
            seen[ring]++;
            running[ring]++;
            payload_box *box = gy_command_payload(c);
            if (box != NULL) {
                s->payloads_seen++;
                if (box->seq != b.seq || box->running != c->body.u64[2])
                    stress_fail(s, "payload", b.seq, box->seq, box->running);
                if ((box->running & 1) == 0) { /* take half, leave half to the queue */
                    gy_command_take_payload(c);
                    gy_free(&s->ta->base, box, sizeof *box);
                    s->payloads_taken++;
                }
            }
            s->commands++;
        }
        if (seen[0] != b.count[0] || seen[1] != b.count[1])
            stress_fail(s, "count", b.seq, seen[0] + seen[1], b.count[0] + b.count[1]);
        if (gy_command_queue_release(s->q, &b) != GY_OK)
            stress_fail(s, "release", b.seq, 0, 0);
        __atomic_store_n(&s->batches, s->batches + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_command_queue_stress_millions_of_commands_two_threads(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    release_log log = {.ta = &ta};
    /* Rings small enough that the producer outruns the consumer and defers regularly. */
    gy_command_queue *q = make_queue(&ta, &log, 1023, 4095, 63);
    stress s = {.q = q, .ta = &ta};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stress_consumer, &s), 0);

    const uint64_t target = 8000000ull / SCALE;
    uint64_t made = 0, seq = 0, payloads = 0, rnd = 12345;
    uint64_t running[2] = {0, 0};
    while (made < target) {
        rnd = mix64(rnd);
        uint32_t n_life = (uint32_t)(rnd % 9);
        uint32_t n_mut = (uint32_t)((rnd >> 8) % 240);
        if ((seq + 1) % 500 == 3)
            n_life = 1500; /* now and then a batch larger than the lifecycle ring */
        if (n_life + n_mut == 0)
            n_mut = 1;
        seq++;
        uint32_t idx[2] = {0, 0};
        for (uint32_t i = 0; i < n_life + n_mut; i++) {
            /* Interleave the rings while recording; delivery must still be lifecycle first. */
            rnd = mix64(rnd);
            gy_command_ring ring;
            if (idx[0] == n_life)
                ring = GY_COMMAND_MUTATE;
            else if (idx[1] == n_mut)
                ring = GY_COMMAND_LIFECYCLE;
            else
                ring = (rnd & 1) ? GY_COMMAND_MUTATE : GY_COMMAND_LIFECYCLE;
            gy_command c = make_command(ring, seq, running[ring], n_life, n_mut, idx[ring], rnd);
            if ((rnd >> 40) % 97 == 0) {
                payload_box *box = gy_alloc(&ta.base, sizeof *box);
                assert_non_null(box);
                box->seq = seq;
                box->running = running[ring];
                box->ta = &ta;
                gy_command_set_payload(&c, box);
                payloads++;
            }
            assert_result(gy_command_queue_record(q, ring, &c), GY_OK);
            idx[ring]++;
            running[ring]++;
        }
        uint64_t got;
        assert_result(gy_command_queue_publish(q, &got), GY_OK);
        assert_int_equal(got, seq);
        made += n_life + n_mut;
    }
    assert_result(gy_command_queue_wait_acknowledged(q, seq, 60000000000ull), GY_OK);
    __atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);

    if (s.error[0] != 0)
        fail_msg("%s", s.error);
    assert_int_equal(s.batches, seq);
    assert_int_equal(s.commands, made);
    assert_int_equal(s.payloads_seen, payloads);
    assert_int_equal(s.payloads_taken + log.released, payloads);
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.batches_published, seq);
    assert_int_equal(st.batches_consumed, seq);
    assert_int_equal(st.commands_consumed, made);
    assert_true(st.batches_detached > 0);
    assert_int_equal(st.record_failures, 0);
    print_message("stress: %llu commands in %llu batches; deferred %llu, detached %llu, "
                  "staged high-water %u, ring high-water %u/%u\n",
                  (unsigned long long)made, (unsigned long long)seq,
                  (unsigned long long)st.batches_deferred, (unsigned long long)st.batches_detached,
                  st.staged_high_water, st.ring_high_water[0], st.ring_high_water[1]);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

typedef struct steady {
    gy_command_queue *q;
    int stop;
} steady;

static void *steady_consumer(void *arg)
{
    steady *s = arg;
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
        if (gy_command_queue_drain(s->q, 0, NULL, NULL) == 0)
            sched_yield();
    return NULL;
}

/* A batch larger than the rings (a level's creates) goes through staging and travels detached;
 * staging keeps its peak while in use and returns it once it has stayed empty for 64 publishes,
 * and the next such batch still arrives whole and in order. */
static void test_command_queue_returns_staging_after_quiet_publishes(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 15, 31, 7);
    int64_t idle = ta.live_bytes;
    enum { BURST = 500 };
    static uint32_t keys[BURST];
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < BURST; i++)
            record_plain(q, GY_COMMAND_LIFECYCLE, i);
        assert_result(gy_command_queue_publish(q, NULL), GY_OK);
        assert_true(ta.live_bytes > idle);
        uint32_t n = drain_keys(q, keys, BURST, NULL);
        assert_int_equal(n, BURST);
        for (uint32_t i = 0; i < BURST; i++)
            assert_int_equal(keys[i], i);
        /* Kept while recently used... */
        for (int p = 0; p < 32; p++)
            assert_result(gy_command_queue_publish(q, NULL), GY_OK);
        assert_true(ta.live_bytes > idle);
        /* ...returned after 64 quiet publishes (the detached block at the first of them). */
        for (int p = 0; p < 64; p++)
            assert_result(gy_command_queue_publish(q, NULL), GY_OK);
        assert_int_equal(ta.live_bytes, idle);
    }
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_command_queue_steady_state_does_not_allocate(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 255, 1023, 31);
    steady s = {.q = q};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, steady_consumer, &s), 0);
    uint64_t allocs_after_warmup = 0;
    for (uint32_t tick = 0; tick < 4000 / SCALE + 200; tick++) {
        if (tick == 200)
            allocs_after_warmup = ta.allocs + ta.reallocs;
        for (uint32_t i = 0; i < 300; i++)
            record_plain(q, (gy_command_ring)(i % 10 == 0 ? 0 : 1), i);
        uint64_t seq;
        assert_result(gy_command_queue_publish(q, &seq), GY_OK);
        /* At most two batches in flight, like a game thread one tick ahead of physics: the rings
         * always have room, so this is the steady state of a healthy frame loop. */
        if (seq > 2)
            assert_result(gy_command_queue_wait_acknowledged(q, seq - 2, 60000000000ull), GY_OK);
    }
    uint64_t seq = gy_command_queue_published(q);
    assert_result(gy_command_queue_wait_acknowledged(q, seq, 60000000000ull), GY_OK);
    __atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(ta.allocs + ta.reallocs, allocs_after_warmup);
    assert_int_equal(st.batches_deferred, 0);
    assert_int_equal(st.commands_consumed, st.commands_published);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

typedef struct lockstep {
    gy_command_queue *q;
    int stop;
} lockstep;

static void *lockstep_consumer(void *arg)
{
    lockstep *l = arg;
    while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
        if (gy_command_queue_drain(l->q, 1, NULL, NULL) == 0)
            sched_yield();
    return NULL;
}

/* A lockstep runner publishes and waits for "batch N consumed"; with tiny rings the batch is
 * staged, and the wait itself must carry it over (or it would wait forever). */
static void test_command_queue_wait_carries_staged_batches(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_command_queue *q = make_queue(&ta, NULL, 7, 7, 1);
    lockstep l = {.q = q};
    /* Two batches before the consumer exists: the second cannot fit and is staged. */
    for (uint32_t i = 0; i < 6; i++)
        record_plain(q, GY_COMMAND_MUTATE, i);
    assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    for (uint32_t i = 0; i < 6; i++)
        record_plain(q, GY_COMMAND_MUTATE, i);
    uint64_t first;
    assert_result(gy_command_queue_publish(q, &first), GY_OK);
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.staged_batches, 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, lockstep_consumer, &l), 0);
    assert_result(gy_command_queue_wait_acknowledged(q, first, 30000000000ull), GY_OK);
    for (uint32_t tick = 0; tick < 2000 / SCALE; tick++) {
        for (uint32_t i = 0; i < 6; i++)
            record_plain(q, GY_COMMAND_MUTATE, i);
        uint64_t seq;
        assert_result(gy_command_queue_publish(q, &seq), GY_OK);
        for (uint32_t i = 0; i < 6; i++)
            record_plain(q, GY_COMMAND_MUTATE, i);
        assert_result(gy_command_queue_publish(q, &seq), GY_OK);
        assert_result(gy_command_queue_wait_acknowledged(q, seq, 30000000000ull), GY_OK);
    }
    __atomic_store_n(&l.stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    gy_command_queue_get_stats(q, &st);
    assert_true(st.batches_deferred > 0);
    assert_int_equal(st.commands_consumed, st.commands_published);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_is_64_bytes_of_plain_data),
        cmocka_unit_test(test_command_queue_create_validates),
        cmocka_unit_test(test_command_queue_record_validates),
        cmocka_unit_test(test_command_queue_delivers_lifecycle_before_mutate_in_publish_order),
        cmocka_unit_test(test_command_queue_consumer_misuse_is_an_error),
        cmocka_unit_test(test_command_queue_releases_payloads_not_taken),
        cmocka_unit_test(test_command_queue_hard_stop_discards_sealed_and_releases_payloads),
        cmocka_unit_test(test_command_queue_full_rings_defer_without_dropping),
        cmocka_unit_test(test_command_queue_returns_staging_after_quiet_publishes),
        cmocka_unit_test(test_command_queue_oversize_batch_travels_detached),
        cmocka_unit_test(test_command_queue_out_of_memory_while_staging_loses_nothing),
        cmocka_unit_test(test_command_queue_pending_reports_the_oldest_unacknowledged_batch),
        cmocka_unit_test(test_command_queue_wait_times_out_without_a_consumer),
        cmocka_unit_test(test_command_queue_stress_millions_of_commands_two_threads),
        cmocka_unit_test(test_command_queue_steady_state_does_not_allocate),
        cmocka_unit_test(test_command_queue_wait_carries_staged_batches),
    };
    return cmocka_run_group_tests_name("command_queue", tests, NULL, NULL);
}
