/* Reply queue: 64-byte replies, per-tick visibility at commit, the full-ring rules (droppable
 * replies dropped and counted, essential ones deferred and delivered first, in order), counters,
 * no steady-state allocation, and a flood across two real threads. */
#include "test_support.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "reply_queue.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 8u
#else
#define SCALE 1u
#endif

enum { ESSENTIAL = 1, EVENT = 2 };

static gy_reply make_reply(uint16_t type, uint32_t key)
{
    gy_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.key = key;
    r.body.u64[0] = (uint64_t)key * 2654435761u;
    return r;
}

/* Pushes n essential replies keyed 0..n-1 and commits them. */
static void push_essentials(gy_reply_queue *q, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        gy_reply r = make_reply(ESSENTIAL, i);
        assert_result(gy_reply_queue_push(q, &r, GY_REPLY_ESSENTIAL), GY_OK);
    }
    gy_reply_queue_commit(q);
}

/* Pops n replies (out holds 64), checking they arrive keyed 0..n-1, committing after each pop. */
static void drain_in_order(gy_reply_queue *q, gy_reply *out, uint32_t n)
{
    uint32_t got = 0;
    while (got < n) {
        uint32_t k = gy_reply_queue_pop(q, out, 64);
        for (uint32_t i = 0; i < k; i++)
            assert_int_equal(out[i].key, got + i);
        got += k;
        gy_reply_queue_commit(q);
    }
}

static gy_reply_queue *make_queue(gy_test_allocator *ta, uint32_t capacity)
{
    gy_reply_queue_def def = {.allocator = &ta->base, .capacity = capacity};
    gy_reply_queue *q = NULL;
    assert_result(gy_reply_queue_create(&def, &q), GY_OK);
    return q;
}

static void test_reply_is_64_bytes_of_plain_data(void **state)
{
    (void)state;
    assert_int_equal(sizeof(gy_reply), 64);
    assert_int_equal(GY_REPLY_SIZE, 64);
    assert_int_equal(sizeof(((gy_reply *)0)->body), GY_REPLY_BODY_SIZE);
}

static void test_reply_queue_validates(void **state)
{
    (void)state;
    gy_reply_queue *q = NULL;
    assert_result(gy_reply_queue_create(NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    gy_reply_queue_def def = {.capacity = (1u << 24) + 1};
    assert_result(gy_reply_queue_create(&def, &q), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_reply_queue_create(NULL, &q), GY_OK);
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.capacity, 16383);
    gy_reply r = make_reply(ESSENTIAL, 1);
    assert_result(gy_reply_queue_push(q, NULL, GY_REPLY_ESSENTIAL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_reply_queue_push(q, &r, (gy_reply_class)7), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(gy_reply_queue_pop(q, NULL, 4), 0);
    gy_reply_queue_destroy(q);
    gy_reply_queue_destroy(NULL);
}

static void test_reply_queue_replies_become_visible_at_commit(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 63);
    for (uint32_t i = 0; i < 10; i++) {
        gy_reply r = make_reply(EVENT, i);
        assert_result(gy_reply_queue_push(q, &r, GY_REPLY_DROPPABLE), GY_OK);
    }
    gy_reply out[16];
    assert_int_equal(gy_reply_queue_pop(q, out, 16), 0); /* half a tick is never visible */
    gy_reply_queue_commit(q);
    assert_int_equal(gy_reply_queue_pop(q, out, 4), 4);
    assert_int_equal(gy_reply_queue_pop(q, out + 4, 16), 6);
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(out[i].key, i);
        assert_int_equal(out[i].body.u64[0], (uint64_t)i * 2654435761u);
    }
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.pushed, 10);
    assert_int_equal(st.delivered, 10);
    assert_int_equal(st.high_water, 10);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

typedef struct collected {
    gy_reply r[512];
    uint32_t n;
} collected;

static void collect(void *ctx, const gy_reply *r)
{
    collected *c = ctx;
    c->r[c->n++] = *r;
}

static void test_reply_queue_flood_drops_only_counted_events(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 15);
    /* One tick: 10 events, then 40 replies alternating essential and event, into 15 slots. */
    uint32_t key = 0;
    uint32_t events = 0, essentials = 0, dropped = 0;
    for (uint32_t i = 0; i < 50; i++) {
        bool essential = i >= 10 && (i & 1);
        gy_reply r = make_reply(essential ? ESSENTIAL : EVENT, key++);
        gy_result res =
            gy_reply_queue_push(q, &r, essential ? GY_REPLY_ESSENTIAL : GY_REPLY_DROPPABLE);
        if (essential) {
            assert_result(res, GY_OK);
            essentials++;
        } else {
            events++;
            if (res == GY_ERR_CAPACITY)
                dropped++;
            else
                assert_result(res, GY_OK);
        }
    }
    gy_reply_queue_commit(q);
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    /* Slots fill with the 10 events and replies 10..14; from reply 15 on every essential (18 of
     * them) waits in the overflow and every event behind it (17) is dropped, so none overtakes. */
    assert_int_equal(st.high_water, 15);
    assert_int_equal(dropped, 17);
    assert_int_equal(st.dropped, 17);
    assert_int_equal(st.overflow_now, 18);
    assert_int_equal(st.deferred, 18);
    assert_int_equal(st.overflow_high_water, 18);

    /* The game thread drains once per tick; each later commit moves deferred essentials in
     * first. Keep ticking with one new event per tick until everything is through. */
    collected c = {.n = 0};
    for (int tick = 0; tick < 10; tick++) {
        gy_reply_queue_drain(q, collect, &c);
        gy_reply r = make_reply(EVENT, 1000 + (uint32_t)tick);
        gy_reply_queue_push(q, &r, GY_REPLY_DROPPABLE);
        gy_reply_queue_commit(q);
    }
    gy_reply_queue_drain(q, collect, &c);
    gy_reply_queue_get_stats(q, &st);
    /* Every essential arrived, in push order, and before any event pushed after it. */
    uint32_t seen_essential = 0;
    uint32_t last_key = 0;
    bool first = true;
    for (uint32_t i = 0; i < c.n; i++) {
        if (!first)
            assert_true(c.r[i].key > last_key);
        first = false;
        last_key = c.r[i].key;
        if (c.r[i].type == ESSENTIAL)
            seen_essential++;
    }
    assert_int_equal(seen_essential, essentials);
    assert_int_equal(st.overflow_now, 0);
    assert_int_equal(st.lost, 0);
    /* Accounting: everything pushed was either delivered or dropped. */
    assert_int_equal(st.pushed + st.dropped, 50 + 10);
    assert_int_equal(st.delivered, c.n);
    assert_int_equal(st.pushed, c.n);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_reply_queue_overflow_stops_allocating_at_its_peak(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 31);
    gy_reply out[64];
    uint64_t allocs_after_first = 0;
    for (int round = 0; round < 5; round++) {
        push_essentials(q, 100);
        drain_in_order(q, out, 100);
        if (round == 0)
            allocs_after_first = ta.allocs + ta.reallocs;
    }
    assert_int_equal(ta.allocs + ta.reallocs, allocs_after_first);
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.overflow_high_water, 100 - 31);
    assert_int_equal(st.deferred, 5 * (100 - 31));
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_reply_queue_counts_an_essential_reply_lost_to_allocation(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 3);
    gy_reply r = make_reply(ESSENTIAL, 0);
    for (int i = 0; i < 3; i++)
        assert_result(gy_reply_queue_push(q, &r, GY_REPLY_ESSENTIAL), GY_OK);
    ta.fail_at = ta.calls + 1;
    assert_result(gy_reply_queue_push(q, &r, GY_REPLY_ESSENTIAL), GY_ERR_OUT_OF_MEMORY);
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.lost, 1);
    assert_int_equal(st.pushed, 3);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- two threads ----------------------------------------------------------------------------- */

typedef struct flood {
    gy_reply_queue *q;
    int done; /* physics side finished its ticks */
    uint32_t ticks;
    uint64_t essentials_pushed, events_pushed, events_dropped;
} flood;

static void *flood_physics(void *arg)
{
    flood *f = arg;
    uint64_t rnd = 99;
    uint32_t key = 0;
    for (uint32_t tick = 0; tick < f->ticks; tick++) {
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        /* Bursts far above capacity every few ticks. */
        uint32_t n = (tick % 7 == 0) ? 3000 : (uint32_t)((rnd >> 33) % 300);
        for (uint32_t i = 0; i < n; i++) {
            bool essential = (key % 5) == 0;
            gy_reply r = make_reply(essential ? ESSENTIAL : EVENT, key++);
            r.body.u64[1] = tick;
            gy_result res =
                gy_reply_queue_push(f->q, &r, essential ? GY_REPLY_ESSENTIAL : GY_REPLY_DROPPABLE);
            if (essential)
                f->essentials_pushed++;
            else if (res == GY_ERR_CAPACITY)
                f->events_dropped++;
            else
                f->events_pushed++;
        }
        gy_reply_queue_commit(f->q);
        sched_yield();
    }
    __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

typedef struct game_side {
    uint64_t essentials, events;
    uint32_t last_key;
    bool any;
    bool order_ok;
} game_side;

static void game_collect(void *ctx, const gy_reply *r)
{
    game_side *g = ctx;
    if (g->any && r->key <= g->last_key)
        g->order_ok = false;
    g->any = true;
    g->last_key = r->key;
    if (r->type == ESSENTIAL)
        g->essentials++;
    else
        g->events++;
}

static void test_reply_queue_flood_across_threads_keeps_every_essential(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 1023);
    flood f = {.q = q, .ticks = 3000 / SCALE};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, flood_physics, &f), 0);
    game_side g = {.order_ok = true};
    /* The game thread drains once per "tick" of its own while physics floods. */
    while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE)) {
        gy_reply_queue_drain(q, game_collect, &g);
        sched_yield();
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    /* Physics has stopped; commits it would have made on later ticks are made here (the producer
     * role moves over through the join) until the deferred essentials are all through. */
    for (int guard = 0; guard < 100000; guard++) {
        gy_reply_queue_commit(q);
        gy_reply_queue_drain(q, game_collect, &g);
        gy_reply_queue_stats now;
        gy_reply_queue_get_stats(q, &now);
        if (now.overflow_now == 0 && now.delivered == now.pushed)
            break;
    }
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_true(g.order_ok);
    assert_int_equal(g.essentials, f.essentials_pushed);
    assert_int_equal(g.events, f.events_pushed);
    assert_int_equal(st.dropped, f.events_dropped);
    assert_true(st.dropped > 0);
    assert_int_equal(st.lost, 0);
    assert_true(st.high_water <= 1023);
    print_message("flood: %llu essential, %llu events delivered, %llu dropped, high-water %u, "
                  "overflow high-water %u\n",
                  (unsigned long long)g.essentials, (unsigned long long)g.events,
                  (unsigned long long)st.dropped, st.high_water, st.overflow_high_water);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* A tiny ring, every push committed at once and a consumer slower than the producer: the
 * consumer frees slots while the producer is between moving its overflow into the ring and
 * writing the new reply, which must still go behind the overflow, never ahead of it. */
typedef struct trickle {
    gy_reply_queue *q;
    uint32_t count;
    uint32_t refused; /* pushes that did not return GY_OK (asserted on the test's thread) */
    int done;
} trickle;

static void *trickle_physics(void *arg)
{
    trickle *t = arg;
    for (uint32_t key = 0; key < t->count; key++) {
        gy_reply r = make_reply(ESSENTIAL, key);
        if (gy_reply_queue_push(t->q, &r, GY_REPLY_ESSENTIAL) != GY_OK)
            t->refused++;
        gy_reply_queue_commit(t->q);
    }
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A consumer slower than the producer, so the ring stays full and an overflow builds up. */
static void slow_collect(void *ctx, const gy_reply *r)
{
    for (volatile int i = 0; i < 200; i++)
        ;
    game_collect(ctx, r);
}

static void test_reply_queue_keeps_order_while_the_consumer_frees_slots(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 3);
    trickle t = {.q = q, .count = 400000 / SCALE};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, trickle_physics, &t), 0);
    game_side g = {.order_ok = true};
    while (!__atomic_load_n(&t.done, __ATOMIC_ACQUIRE))
        gy_reply_queue_drain(q, slow_collect, &g);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int guard = 0; guard < 1000000 && g.essentials < t.count; guard++) {
        gy_reply_queue_commit(q);
        gy_reply_queue_drain(q, game_collect, &g);
    }
    assert_int_equal(t.refused, 0);
    assert_true(g.order_ok);
    assert_int_equal(g.essentials, t.count);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* A burst through the overflow (a level's creates answered at once) leaves it at its peak; once
 * it has stayed empty for 64 commits its memory is returned, and the next burst grows it again
 * with nothing lost or reordered. */
static void test_reply_queue_returns_the_overflow_after_quiet_commits(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue *q = make_queue(&ta, 31);
    int64_t idle = ta.live_bytes;
    gy_reply out[64];
    for (int round = 0; round < 2; round++) {
        push_essentials(q, 1000);
        assert_true(ta.live_bytes > idle);
        drain_in_order(q, out, 1000);
        /* Kept while recently used... */
        for (int c = 0; c < 32; c++)
            gy_reply_queue_commit(q);
        assert_true(ta.live_bytes > idle);
        /* ...returned after 64 quiet commits. */
        for (int c = 0; c < 64; c++)
            gy_reply_queue_commit(q);
        assert_int_equal(ta.live_bytes, idle);
    }
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.delivered, 2000);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_is_64_bytes_of_plain_data),
        cmocka_unit_test(test_reply_queue_validates),
        cmocka_unit_test(test_reply_queue_replies_become_visible_at_commit),
        cmocka_unit_test(test_reply_queue_flood_drops_only_counted_events),
        cmocka_unit_test(test_reply_queue_overflow_stops_allocating_at_its_peak),
        cmocka_unit_test(test_reply_queue_counts_an_essential_reply_lost_to_allocation),
        cmocka_unit_test(test_reply_queue_flood_across_threads_keeps_every_essential),
        cmocka_unit_test(test_reply_queue_keeps_order_while_the_consumer_frees_slots),
        cmocka_unit_test(test_reply_queue_returns_the_overflow_after_quiet_commits),
    };
    return cmocka_run_group_tests_name("reply_queue", tests, NULL, NULL);
}
