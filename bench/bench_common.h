/* What every benchmark program shares: a small deterministic generator (so every run, and both
 * sides of a comparison, build the same scene), the clocks, and the sizes of the standard scenes
 * (the 1,024-box pile and the 10,000-tile field) so gyre-bench and gyre-bench-middleware measure
 * the same worlds. Header-only: gyre-bench-middleware links nothing of gyre-bench. */
#ifndef GYRE_BENCH_COMMON_H
#define GYRE_BENCH_COMMON_H

#include <stdint.h>
#include <time.h>

#define PILE_SIDE   16 /* 16 × 16 columns × 4 layers = 1,024 boxes */
#define PILE_LAYERS 4
#define PILE_BOXES  (PILE_SIDE * PILE_SIDE * PILE_LAYERS)
#define PILE_PITCH  1.2

#define TILE_SIDE   100 /* 100 × 100 tiles = 10,000 static boxes */
#define TILE_PITCH  4.0
#define TILE_SIZE   3.9
#define TILE_HEIGHT 0.5

/* A 64-bit LCG: plenty for scattering a scene, and identical everywhere. */
typedef struct gy_bench_rng {
    uint64_t s;
} gy_bench_rng;

/* Uniform in [0, 1). */
static inline double gy_bench_rng_unit(gy_bench_rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi). */
static inline double gy_bench_rng_range(gy_bench_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gy_bench_rng_unit(r);
}

/* CPU time of the calling thread, ns: on a shared machine, time spent preempted is not the code's
 * cost. */
static inline uint64_t gy_bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Monotonic wall clock, ns. */
static inline uint64_t gy_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
