/* Section "commands": commands per second through Gyre's command queue (record -> publish ->
 * drain, 64-byte commands, batches of 256), next to two baselines in the same run:
 *   - a mutex + condition-variable queue moving one command at a time (the naive design);
 *   - a bare ck_ring loop handing over blocks of 256 commands by pointer (the limit: one copy in,
 *     one read out, two ring operations per 256 commands).
 * All three build the same commands on the producer thread, copy them into the transport, and
 * have the consumer read two fields of each into a checksum that is verified. All three keep at
 * most 4,096 commands (16 batches) in flight, so the producer waits for the consumer the same way
 * in each. Each measurement is repeated, interleaved, and the best run reported (medians are
 * printed too). */
#include "bench.h"

#include <ck_ring.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_queue.h"
#include "scene_barrier.h"

#define BATCH     256u
#define IN_FLIGHT 16u /* batches */

static inline void relax(uint32_t *spins)
{
    if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

/* What the producer writes for command i (a set-velocity-like command: key + three doubles). */
static inline void make_command(gy_command *c, uint64_t i)
{
    c->type = 3;
    c->flags = 0;
    c->key = (uint32_t)i;
    c->body.u64[0] = i;
    c->body.f64[1] = (double)i * 0.5;
    c->body.f64[2] = 1.0;
    c->body.f64[3] = -1.0;
}

static inline uint64_t consume(const gy_command *c)
{
    return (uint64_t)c->key + c->body.u64[0];
}

static uint64_t expected_sum(uint64_t n)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += (uint64_t)(uint32_t)i + i;
    return s;
}

typedef struct run {
    uint64_t n;
    int go;
    uint64_t sum;
    uint64_t end_ns;
    void *transport;
} run;

static void wait_go(run *r)
{
    uint32_t spins = 0;
    while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
        relax(&spins);
}

/* ---- baseline 1: mutex + condition variables, one command at a time ------------------------- */

typedef struct mutex_queue {
    pthread_mutex_t m;
    pthread_cond_t not_empty, not_full;
    gy_command *slots;
    uint32_t cap, head, tail, count;
} mutex_queue;

static void mq_push(mutex_queue *q, const gy_command *c)
{
    pthread_mutex_lock(&q->m);
    while (q->count == q->cap)
        pthread_cond_wait(&q->not_full, &q->m);
    q->slots[q->tail] = *c;
    q->tail = (q->tail + 1) % q->cap;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->m);
}

static void mq_pop(mutex_queue *q, gy_command *out)
{
    pthread_mutex_lock(&q->m);
    while (q->count == 0)
        pthread_cond_wait(&q->not_empty, &q->m);
    *out = q->slots[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->m);
}

static void *mq_consumer(void *arg)
{
    run *r = arg;
    mutex_queue *q = r->transport;
    wait_go(r);
    uint64_t sum = 0;
    gy_command c;
    for (uint64_t i = 0; i < r->n; i++) {
        mq_pop(q, &c);
        sum += consume(&c);
    }
    r->end_ns = gy_clock_now_ns();
    r->sum = sum;
    return NULL;
}

static double run_mutex(uint64_t n)
{
    mutex_queue q = {.cap = BATCH * IN_FLIGHT};
    q.slots = calloc(q.cap, sizeof *q.slots);
    if (q.slots == NULL)
        return 0;
    pthread_mutex_init(&q.m, NULL);
    pthread_cond_init(&q.not_empty, NULL);
    pthread_cond_init(&q.not_full, NULL);
    run r = {.n = n, .transport = &q};
    pthread_t th;
    if (pthread_create(&th, NULL, mq_consumer, &r) != 0)
        return 0;
    uint64_t t0 = gy_clock_now_ns();
    __atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
    gy_command c;
    memset(&c, 0, sizeof c);
    for (uint64_t i = 0; i < n; i++) {
        make_command(&c, i);
        mq_push(&q, &c);
    }
    pthread_join(th, NULL);
    double rate = r.sum == expected_sum(n) ? (double)n / ((double)(r.end_ns - t0) * 1e-9) : 0;
    pthread_cond_destroy(&q.not_full);
    pthread_cond_destroy(&q.not_empty);
    pthread_mutex_destroy(&q.m);
    free(q.slots);
    return rate;
}

/* ---- baseline 2: bare ck_ring, blocks of 256 commands by pointer ----------------------------- */

typedef struct block {
    gy_command cmd[BATCH];
} block;

typedef struct bare {
    struct ck_ring full, free;
    ck_ring_buffer_t full_buf[IN_FLIGHT * 2], free_buf[IN_FLIGHT * 2];
    block *blocks;
} bare;

static void *bare_consumer(void *arg)
{
    run *r = arg;
    bare *t = r->transport;
    wait_go(r);
    uint64_t sum = 0;
    for (uint64_t done = 0; done < r->n; done += BATCH) {
        block *blk;
        uint32_t spins = 0;
        while (!ck_ring_dequeue_spsc(&t->full, t->full_buf, &blk))
            relax(&spins);
        for (uint32_t j = 0; j < BATCH; j++)
            sum += consume(&blk->cmd[j]);
        spins = 0;
        while (!ck_ring_enqueue_spsc(&t->free, t->free_buf, blk))
            relax(&spins);
    }
    r->end_ns = gy_clock_now_ns();
    r->sum = sum;
    return NULL;
}

static double run_bare(uint64_t n)
{
    bare *t = aligned_alloc(64, sizeof *t);
    if (t == NULL)
        return 0;
    memset(t, 0, sizeof *t);
    t->blocks = aligned_alloc(64, sizeof(block) * IN_FLIGHT);
    if (t->blocks == NULL) {
        free(t);
        return 0;
    }
    ck_ring_init(&t->full, IN_FLIGHT * 2);
    ck_ring_init(&t->free, IN_FLIGHT * 2);
    for (uint32_t i = 0; i < IN_FLIGHT; i++)
        ck_ring_enqueue_spsc(&t->free, t->free_buf, &t->blocks[i]);
    run r = {.n = n, .transport = t};
    pthread_t th;
    if (pthread_create(&th, NULL, bare_consumer, &r) != 0)
        return 0;
    uint64_t t0 = gy_clock_now_ns();
    __atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
    gy_command c;
    memset(&c, 0, sizeof c);
    for (uint64_t i = 0; i < n; i += BATCH) {
        block *blk;
        uint32_t spins = 0;
        while (!ck_ring_dequeue_spsc(&t->free, t->free_buf, &blk))
            relax(&spins);
        for (uint32_t j = 0; j < BATCH; j++) {
            make_command(&c, i + j);
            memcpy(&blk->cmd[j], &c, sizeof c);
        }
        spins = 0;
        while (!ck_ring_enqueue_spsc(&t->full, t->full_buf, blk))
            relax(&spins);
    }
    pthread_join(th, NULL);
    double rate = r.sum == expected_sum(n) ? (double)n / ((double)(r.end_ns - t0) * 1e-9) : 0;
    free(t->blocks);
    free(t);
    return rate;
}

/* ---- Gyre: record -> publish -> acquire / next / release ------------------------------------ */

static void *gyre_consumer(void *arg)
{
    run *r = arg;
    gy_command_queue *q = r->transport;
    wait_go(r);
    uint64_t sum = 0, done = 0;
    uint32_t spins = 0;
    while (done < r->n) {
        gy_command_batch b;
        if (!gy_command_queue_acquire(q, &b)) {
            relax(&spins);
            continue;
        }
        spins = 0;
        gy_command *c;
        while ((c = gy_command_batch_next(&b, NULL)) != NULL)
            sum += consume(c);
        done += (uint64_t)b.count[0] + b.count[1];
        gy_command_queue_release(q, &b);
    }
    r->end_ns = gy_clock_now_ns();
    r->sum = sum;
    return NULL;
}

static double run_gyre(uint64_t n, uint64_t *deferred)
{
    /* Room for the same 16 batches in flight as the baselines (a ck_ring holds size - 1, so the
     * ring has 8,192 slots). */
    gy_command_queue_def def = {.mutate_capacity = BATCH * IN_FLIGHT, .batch_capacity = 255};
    gy_command_queue *q = NULL;
    if (gy_command_queue_create(&def, &q) != GY_OK)
        return 0;
    run r = {.n = n, .transport = q};
    pthread_t th;
    if (pthread_create(&th, NULL, gyre_consumer, &r) != 0)
        return 0;
    uint64_t t0 = gy_clock_now_ns();
    __atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
    gy_command c;
    memset(&c, 0, sizeof c);
    uint64_t seq = 0;
    for (uint64_t i = 0; i < n; i += BATCH) {
        /* Like the baselines, wait while 16 batches are in flight (a game thread would be
         * frames ahead instead; the queue itself never blocks). */
        uint32_t spins = 0;
        while (seq >= IN_FLIGHT && gy_command_queue_acknowledged(q) < seq - (IN_FLIGHT - 1))
            relax(&spins);
        for (uint32_t j = 0; j < BATCH; j++) {
            make_command(&c, i + j);
            gy_command_queue_record(q, GY_COMMAND_MUTATE, &c);
        }
        gy_command_queue_publish(q, &seq);
    }
    pthread_join(th, NULL);
    double rate = r.sum == expected_sum(n) ? (double)n / ((double)(r.end_ns - t0) * 1e-9) : 0;
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    *deferred += st.batches_deferred;
    gy_command_queue_destroy(q);
    return rate;
}

int gy_bench_section_commands(gy_bench *b)
{
    bool quick = gy_bench_quick(b);
    const uint64_t n_fast = (quick ? 8000000ull : 32000000ull);
    const uint64_t n_mutex = (quick ? 1000000ull : 4000000ull);
    enum { MAX_REPEATS = 7 };
    const int repeats = quick ? 3 : 7;
    double mutex[MAX_REPEATS], bare_rate[MAX_REPEATS], gyre[MAX_REPEATS];
    uint64_t deferred = 0;
    /* Interleaved, so drifting machine load affects all three alike. */
    for (int i = 0; i < repeats; i++) {
        mutex[i] = run_mutex(n_mutex);
        bare_rate[i] = run_bare(n_fast);
        gyre[i] = run_gyre(n_fast, &deferred);
        if (mutex[i] <= 0 || bare_rate[i] <= 0 || gyre[i] <= 0) {
            fprintf(stderr, "commands: a run failed or its checksum did not match\n");
            return 1;
        }
    }
    /* The best run estimates what each design does undisturbed: on a shared 2-core machine a
     * run that overlaps other work measures the other work. Medians are printed alongside. */
    double m = gy_bench_percentile(mutex, (size_t)repeats, 100);
    double r = gy_bench_percentile(bare_rate, (size_t)repeats, 100);
    double g = gy_bench_percentile(gyre, (size_t)repeats, 100);
    double mm = gy_bench_median(mutex, (size_t)repeats);
    double rm = gy_bench_median(bare_rate, (size_t)repeats);
    double gm = gy_bench_median(gyre, (size_t)repeats);
    gy_bench_report(b, "commands.per_s", g, "cmd/s", "Gyre command queue, batches of 256");
    gy_bench_report(b, "commands.mutex_per_s", m, "cmd/s", "baseline: mutex + condvar queue");
    gy_bench_report(b, "commands.ring_limit_per_s", r, "cmd/s",
                    "baseline: bare ck_ring, 256-command blocks");
    gy_bench_report(b, "commands.vs_mutex", g / m, "x", "Gyre / mutex queue (target >= 10)");
    gy_bench_report(b, "commands.vs_ring_limit", g / r, "x", "Gyre / bare ck_ring (target >= 0.5)");
    gy_bench_note(b,
                  "64-byte commands; best of %d interleaved runs of %llu (mutex: %llu) "
                  "commands; 4,096 commands in flight; batches deferred: %llu",
                  repeats, (unsigned long long)n_fast, (unsigned long long)n_mutex,
                  (unsigned long long)deferred);
    gy_bench_note(b, "medians: Gyre %.1f M/s, mutex %.1f M/s, bare ring %.1f M/s (%.2fx, %.2fx)",
                  gm / 1e6, mm / 1e6, rm / 1e6, gm / mm, gm / rm);
    return 0;
}
