/* Section "barrier": scene-barrier grant latency, request -> granted, measured on the game thread
 * around gy_barrier_begin_mutation:
 *   - pacing: the physics thread runs 60 Hz ticks (a 2 ms busy step, then pace_until the next
 *     deadline); requests are made at random moments while it paces. The grant is the game
 *     thread's own compare-and-swap.
 *   - mid-step: the physics thread runs 1 ms steps back to back (with a short pace between);
 *     requests land at a random point inside a step and are granted at its end. Reported both as
 *     request -> grant (dominated by the rest of the step) and as step end -> grant (the handoff).
 *   - baseline: waking a thread asleep on a futex (what a grant while pacing must not need). */
#include "bench.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "scene_barrier.h"

#define US 1000ull
#define MS 1000000ull

enum { PHASE_STEP = 1, PHASE_PACE = 2 };

typedef struct phys {
    gy_barrier *b;
    uint64_t period_ns; /* 0: back to back */
    uint64_t step_ns;
    uint64_t pause_ns; /* back-to-back mode: pace this long between steps */
    int stop;
    int attached;
    int phase;
    uint64_t step_start_ns;
    uint64_t step_end_ns;
} phys;

static void busy_until(uint64_t t)
{
    while (gy_clock_now_ns() < t) {
    }
}

static void *phys_main(void *arg)
{
    phys *p = arg;
    gy_barrier_attach_physics(p->b);
    __atomic_store_n(&p->attached, 1, __ATOMIC_RELEASE);
    uint64_t next = gy_clock_now_ns() + p->period_ns;
    while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
        gy_barrier_safe_point(p->b);
        uint64_t start = gy_clock_now_ns();
        __atomic_store_n(&p->step_start_ns, start, __ATOMIC_RELEASE);
        __atomic_store_n(&p->phase, PHASE_STEP, __ATOMIC_RELEASE);
        busy_until(start + p->step_ns);
        /* published before the safe point, so a grant made there can be compared with it */
        __atomic_store_n(&p->step_end_ns, gy_clock_now_ns(), __ATOMIC_RELEASE);
        __atomic_store_n(&p->phase, PHASE_PACE, __ATOMIC_RELEASE);
        if (p->period_ns != 0) {
            uint64_t now = gy_clock_now_ns();
            if (next <= now)
                next = now + p->period_ns;
            gy_barrier_pace_until(p->b, next, NULL);
            next += p->period_ns;
        } else {
            gy_barrier_pace_until(p->b, gy_clock_now_ns() + p->pause_ns, NULL);
        }
    }
    gy_barrier_detach_physics(p->b);
    return NULL;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

static uint64_t rnd_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static bool start(phys *p, pthread_t *th)
{
    if (gy_barrier_create(NULL, &p->b) != GY_OK)
        return false;
    if (pthread_create(th, NULL, phys_main, p) != 0)
        return false;
    while (!__atomic_load_n(&p->attached, __ATOMIC_ACQUIRE))
        sched_yield();
    return true;
}

static void finish(phys *p, pthread_t th)
{
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    gy_barrier_wake(p->b);
    pthread_join(th, NULL);
    gy_barrier_destroy(p->b);
}

/* Grants while the physics thread paces (60 Hz, 2 ms steps). */
static size_t measure_pacing(double *out, size_t max, uint64_t duration_ns, size_t *skipped)
{
    phys p = {.period_ns = 16666667, .step_ns = 2 * MS};
    pthread_t th;
    if (!start(&p, &th))
        return 0;
    uint64_t rnd = 42, end = gy_clock_now_ns() + duration_ns;
    size_t n = 0;
    while (n < max && gy_clock_now_ns() < end) {
        sleep_ns(300 * US + (rnd_next(&rnd) % 1500) * US);
        if (gy_barrier_physics_phase(p.b) != GY_PHYSICS_PACING) {
            (*skipped)++;
            continue;
        }
        uint64_t t0 = gy_clock_now_ns();
        if (gy_barrier_begin_mutation(p.b, 0) != GY_OK)
            break;
        uint64_t t1 = gy_clock_now_ns();
        gy_barrier_end_mutation(p.b);
        out[n++] = (double)(t1 - t0) / 1e3;
    }
    finish(&p, th);
    return n;
}

/* Grants requested mid-step (1 ms steps). */
static size_t measure_midstep(double *lat, double *handoff, size_t max, uint64_t duration_ns)
{
    phys p = {.period_ns = 0, .step_ns = 1 * MS, .pause_ns = 200 * US};
    pthread_t th;
    if (!start(&p, &th))
        return 0;
    uint64_t rnd = 7, end = gy_clock_now_ns() + duration_ns;
    size_t n = 0;
    while (n < max && gy_clock_now_ns() < end) {
        /* wait for a step to begin, then request at a random point in its first 80% */
        uint64_t prev = __atomic_load_n(&p.step_start_ns, __ATOMIC_ACQUIRE);
        uint64_t s;
        while ((s = __atomic_load_n(&p.step_start_ns, __ATOMIC_ACQUIRE)) == prev)
            sched_yield();
        uint64_t at = s + (rnd_next(&rnd) % 800) * US;
        busy_until(at);
        if (__atomic_load_n(&p.phase, __ATOMIC_ACQUIRE) != PHASE_STEP ||
            __atomic_load_n(&p.step_start_ns, __ATOMIC_ACQUIRE) != s)
            continue;
        uint64_t t0 = gy_clock_now_ns();
        if (gy_barrier_begin_mutation(p.b, 0) != GY_OK)
            break;
        uint64_t t1 = gy_clock_now_ns();
        uint64_t step_end = __atomic_load_n(&p.step_end_ns, __ATOMIC_ACQUIRE);
        gy_barrier_end_mutation(p.b);
        lat[n] = (double)(t1 - t0) / 1e3;
        handoff[n] = t1 > step_end ? (double)(t1 - step_end) / 1e3 : 0;
        n++;
    }
    finish(&p, th);
    return n;
}

/* Baseline: wake a thread asleep on a futex; latency from the waker's timestamp to the wakee's. */
typedef struct futex_pair {
    uint32_t word;
    uint64_t t0;
    int stop;
    int acked;
    double *out;
    size_t n;
} futex_pair;

static void *futex_sleeper(void *arg)
{
    futex_pair *f = arg;
    for (;;) {
        while (__atomic_load_n(&f->word, __ATOMIC_ACQUIRE) == 0)
            syscall(SYS_futex, &f->word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
        uint64_t t1 = gy_clock_now_ns();
        if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
            break;
        f->out[f->n++] = (double)(t1 - __atomic_load_n(&f->t0, __ATOMIC_ACQUIRE)) / 1e3;
        __atomic_store_n(&f->word, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&f->acked, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static size_t measure_futex(double *out, size_t max)
{
    futex_pair f = {.out = out};
    pthread_t th;
    if (pthread_create(&th, NULL, futex_sleeper, &f) != 0)
        return 0;
    uint64_t rnd = 3;
    for (size_t i = 0; i < max; i++) {
        sleep_ns(300 * US + (rnd_next(&rnd) % 700) * US); /* let it fall asleep */
        __atomic_store_n(&f.acked, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&f.t0, gy_clock_now_ns(), __ATOMIC_RELEASE);
        __atomic_store_n(&f.word, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &f.word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
        while (!__atomic_load_n(&f.acked, __ATOMIC_ACQUIRE))
            sched_yield();
    }
    __atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&f.word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &f.word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
    return f.n;
}

int gy_bench_section_barrier(gy_bench *b)
{
    bool quick = gy_bench_quick(b);
    const size_t max = 20000;
    double *a = calloc(max, sizeof *a), *c = calloc(max, sizeof *c), *d = calloc(max, sizeof *d);
    if (a == NULL || c == NULL || d == NULL) {
        free(a);
        free(c);
        free(d);
        return 1;
    }
    int status = 0;
    size_t skipped = 0;
    size_t n = measure_pacing(a, max, (quick ? 4000 : 15000) * MS, &skipped);
    if (n == 0)
        status = 1;
    gy_bench_report_distribution(b, "barrier.pacing_us", a, n, "us",
                                 "grant while pacing (target p99 < 20)");
    gy_bench_note(b,
                  "pacing: 60 Hz, 2 ms steps, %zu requests while pacing (%zu landed mid-step, "
                  "not counted)",
                  n, skipped);

    n = measure_midstep(a, c, max, (quick ? 3000 : 10000) * MS);
    if (n == 0)
        status = 1;
    gy_bench_report_distribution(b, "barrier.midstep_us", a, n, "us",
                                 "grant mid-step (request -> end of the 1 ms step)");
    gy_bench_report_distribution(b, "barrier.midstep_handoff_us", c, n, "us",
                                 "mid-step: step end -> grant");

    n = measure_futex(d, quick ? 1000 : 4000);
    if (n == 0)
        status = 1;
    gy_bench_report_distribution(b, "barrier.futex_wake_us", d, n, "us",
                                 "baseline: futex wake of a sleeping thread");
    free(a);
    free(c);
    free(d);
    return status;
}
