/* Triple buffer: validation, buffer rotation (writer and reader never share a buffer), ticks,
 * freshness, caller-owned buffers, a torn-read detector across two real threads, and a kept
 * publish that stays intact while the reader reads on. */
#include "test_support.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "triple_buffer.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 8u
#else
#define SCALE 1u
#endif

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void test_triple_buffer_create_validates(void **state)
{
    (void)state;
    gy_triple_buffer *tb = NULL;
    gy_triple_buffer_def def = {.size = 0};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_triple_buffer_create(NULL, &tb), GY_ERR_INVALID_ARGUMENT);
    char a[8], b[8];
    def = (gy_triple_buffer_def){.size = 8, .buffers = {a, b, NULL}};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    def = (gy_triple_buffer_def){.size = 8, .buffers = {a, b, a}};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    char c[8], d[8];
    def = (gy_triple_buffer_def){.size = 8, .buffers = {a, b, c, d}};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    def = (gy_triple_buffer_def){.size = 8, .buffers = {a, b, c}, .reader_keeps = true};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    def = (gy_triple_buffer_def){.size = 8, .buffers = {a, b, c, a}, .reader_keeps = true};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_INVALID_ARGUMENT);
    assert_null(tb);

    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    ta.fail_at = 2;
    def = (gy_triple_buffer_def){.size = 100, .allocator = &ta.base};
    assert_result(gy_triple_buffer_create(&def, &tb), GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(ta.live_blocks, 0);
    gy_triple_buffer_destroy(NULL);
}

static void test_triple_buffer_reader_sees_nothing_before_the_first_publish(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_triple_buffer_def def = {.size = 100, .allocator = &ta.base};
    gy_triple_buffer *tb = NULL;
    assert_result(gy_triple_buffer_create(&def, &tb), GY_OK);
    uint64_t tick = 7;
    bool fresh = true;
    assert_null(gy_triple_buffer_read(tb, &tick, &fresh));
    assert_int_equal(tick, 0);
    assert_false(fresh);
    assert_int_equal(gy_triple_buffer_latest_tick(tb), 0);
    assert_int_equal(gy_triple_buffer_publishes(tb), 0);
    /* Allocated buffers are zeroed and cache-line aligned. */
    for (uint32_t i = 0; i < 3; i++) {
        const unsigned char *p = gy_triple_buffer_buffer(tb, i);
        assert_int_equal((uintptr_t)p % 64, 0);
        for (int k = 0; k < 100; k++)
            assert_int_equal(p[k], 0);
    }
    assert_null(gy_triple_buffer_buffer(tb, 3));
    gy_triple_buffer_destroy(tb);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_triple_buffer_rotation_never_shares_a_buffer(void **state)
{
    (void)state;
    uint64_t bufs[3][4];
    memset(bufs, 0, sizeof bufs);
    gy_triple_buffer_def def = {.size = sizeof bufs[0], .buffers = {bufs[0], bufs[1], bufs[2]}};
    gy_triple_buffer *tb = NULL;
    assert_result(gy_triple_buffer_create(&def, &tb), GY_OK);
    uint64_t rnd = 1;
    uint64_t last_published = 0;
    uint64_t held_tick = 0; /* what the reader holds */
    uint64_t written_in[3] = {0, 0, 0};
    for (uint64_t tick = 1; tick < 2000; tick++) {
        rnd = mix64(rnd);
        uint32_t w = gy_triple_buffer_write_index(tb);
        uint64_t *buf = gy_triple_buffer_write_buffer(tb);
        assert_ptr_equal(buf, bufs[w]);
        /* The writer's buffer still holds what it last wrote there (not the latest value). */
        assert_int_equal(buf[0], written_in[w]);
        if (held_tick != 0)
            assert_int_not_equal(w, gy_triple_buffer_read_index(tb));
        buf[0] = tick;
        written_in[w] = tick;
        assert_int_equal(gy_triple_buffer_publish(tb, tick * 10), w);
        last_published = tick;
        assert_int_equal(gy_triple_buffer_latest_tick(tb), tick * 10);
        if (rnd & 1) {
            uint64_t t;
            bool fresh;
            const uint64_t *got = gy_triple_buffer_read(tb, &t, &fresh);
            assert_true(fresh);
            assert_int_equal(got[0], last_published);
            assert_int_equal(t, last_published * 10);
            held_tick = t;
            /* Reading again without a publish: same buffer, not fresh. */
            const uint64_t *again = gy_triple_buffer_read(tb, &t, &fresh);
            assert_ptr_equal(again, got);
            assert_false(fresh);
            assert_ptr_equal(got, bufs[gy_triple_buffer_read_index(tb)]);
        }
    }
    assert_int_equal(gy_triple_buffer_publishes(tb), 1999);
    gy_triple_buffer_destroy(tb);
}

/* ---- torn-read detector ---------------------------------------------------------------------- */

enum { WORDS = 1024 }; /* 8 KB payload: wide enough that a concurrent write would be caught */

typedef struct torn {
    gy_triple_buffer *tb;
    uint64_t publishes;
    int done;
} torn;

static void *torn_writer(void *arg)
{
    torn *t = arg;
    for (uint64_t k = 1; k <= t->publishes; k++) {
        uint64_t *w = gy_triple_buffer_write_buffer(t->tb);
        /* Fill front to back; the last word seals the checksum. */
        uint64_t sum = 0;
        for (uint32_t i = 0; i < WORDS - 1; i++) {
            w[i] = mix64(k * 1000003u + i);
            sum ^= w[i];
        }
        w[WORDS - 1] = sum ^ k;
        gy_triple_buffer_publish(t->tb, k);
    }
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_triple_buffer_reader_never_sees_a_torn_publish(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_triple_buffer_def def = {.size = WORDS * sizeof(uint64_t), .allocator = &ta.base};
    torn t = {.publishes = 400000 / SCALE};
    assert_result(gy_triple_buffer_create(&def, &t.tb), GY_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, torn_writer, &t), 0);

    uint64_t reads = 0, fresh_reads = 0, torn_reads = 0, backwards = 0, last_tick = 0;
    for (;;) {
        bool done = __atomic_load_n(&t.done, __ATOMIC_ACQUIRE);
        uint64_t tick;
        bool fresh;
        const uint64_t *r = gy_triple_buffer_read(t.tb, &tick, &fresh);
        if (r != NULL) {
            reads++;
            fresh_reads += fresh;
            if (tick < last_tick)
                backwards++;
            last_tick = tick;
            /* Every word must belong to the publish the tick names. */
            uint64_t sum = 0;
            bool ok = true;
            for (uint32_t i = 0; i < WORDS - 1; i++) {
                ok = ok && r[i] == mix64(tick * 1000003u + i);
                sum ^= r[i];
            }
            if (!ok || r[WORDS - 1] != (sum ^ tick))
                torn_reads++;
        }
        if (done && tick == t.publishes)
            break;
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    print_message("torn-read detector: %llu reads (%llu fresh) over %llu publishes\n",
                  (unsigned long long)reads, (unsigned long long)fresh_reads,
                  (unsigned long long)t.publishes);
    assert_int_equal(torn_reads, 0);
    assert_int_equal(backwards, 0);
    assert_int_equal(last_tick, t.publishes); /* the last publish is always delivered */
    assert_true(fresh_reads > 1);
    gy_triple_buffer_destroy(t.tb);
    assert_int_equal(ta.live_blocks, 0);
}

/* A publish kept by the reader stays intact, whatever it reads after, until it keeps another:
 * checked against the writer thread as the torn-read detector is (and under TSan). */
static bool publish_intact(const uint64_t *r, uint64_t tick)
{
    uint64_t sum = 0;
    bool ok = true;
    for (uint32_t i = 0; i < WORDS - 1; i++) {
        ok = ok && r[i] == mix64(tick * 1000003u + i);
        sum ^= r[i];
    }
    return ok && r[WORDS - 1] == (sum ^ tick);
}

static void test_triple_buffer_kept_publish_stays_intact(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_triple_buffer_def def = {
        .size = WORDS * sizeof(uint64_t), .allocator = &ta.base, .reader_keeps = true};
    torn t = {.publishes = 200000 / SCALE};
    assert_result(gy_triple_buffer_create(&def, &t.tb), GY_OK);
    assert_null(gy_triple_buffer_keep(t.tb)); /* nothing read yet */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, torn_writer, &t), 0);

    const uint64_t *kept = NULL;
    uint64_t kept_tick = 0, keeps = 0, broken = 0, reads = 0, tick = 0;
    for (;;) {
        bool done = __atomic_load_n(&t.done, __ATOMIC_ACQUIRE);
        const uint64_t *r = gy_triple_buffer_read(t.tb, &tick, NULL);
        if (r != NULL) {
            reads++;
            if (!publish_intact(r, tick))
                broken++;
            /* Keep one publish in eight: the others are read past it. */
            if (kept == NULL || reads % 8u == 0) {
                kept = gy_triple_buffer_keep(t.tb);
                assert_ptr_equal(kept, r);
                kept_tick = tick;
                keeps++;
            }
            if (!publish_intact(kept, kept_tick))
                broken++;
        }
        if (done && tick == t.publishes)
            break;
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(broken, 0);
    assert_true(keeps > 1);

    /* Without reader_keeps there is nothing to keep. */
    gy_triple_buffer *plain = NULL;
    def.reader_keeps = false;
    assert_result(gy_triple_buffer_create(&def, &plain), GY_OK);
    gy_triple_buffer_publish(plain, 1);
    assert_non_null(gy_triple_buffer_read(plain, NULL, NULL));
    assert_null(gy_triple_buffer_keep(plain));
    gy_triple_buffer_destroy(plain);
    gy_triple_buffer_destroy(t.tb);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_triple_buffer_create_validates),
        cmocka_unit_test(test_triple_buffer_reader_sees_nothing_before_the_first_publish),
        cmocka_unit_test(test_triple_buffer_rotation_never_shares_a_buffer),
        cmocka_unit_test(test_triple_buffer_reader_never_sees_a_torn_publish),
        cmocka_unit_test(test_triple_buffer_kept_publish_stays_intact),
    };
    return cmocka_run_group_tests_name("triple_buffer", tests, NULL, NULL);
}
