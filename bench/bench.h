/* gyre-bench: one entry point, one section per subject, one JSON object.
 *
 * Adding a section is a two-line change: one X(...) line below and its source file in
 * bench/meson.build. A section measures its subject and its baseline in the same run, reports
 * numbers with gy_bench_report (table row + nested JSON key) and returns 0, or non-zero when it
 * could not measure. Benchmarks never pass or fail on their numbers. */
#ifndef GYRE_BENCH_H
#define GYRE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gy_bench gy_bench;

/* name (used by --only and as the JSON key prefix), one-line summary */
#define GY_BENCH_SECTIONS(X)                                                                       \
    X(commands, "command path: record -> publish -> drain vs a mutex queue and a bare ck_ring")    \
    X(barrier, "scene barrier: request -> grant while pacing and mid-step, vs a futex wake")       \
    X(physics, "physics thread: lockstep tick vs bare adapter, sparse publish, pacing accuracy")   \
    X(adapters,                                                                                    \
      "every middleware adapter side by side: 1,024-box pile, 10k statics + 500 spheres")          \
    X(streaming, "gyre soak: physics step p99 with 100,000 statics vs 10,000, same streaming")     \
    X(swap, "gyre soak: one cell swapped under the barrier vs by hard stop/start")                 \
    X(raycast, "snapshot raycast vs live (ODE) raycast on a 10,000-body scene")                    \
    X(interp, "render interpolation: a falling sphere drawn at 240-30 Hz and stuttering frames")   \
    X(host, "game-thread CPU per frame with 10,000 awake bodies vs a plain copy of their proxies") \
    X(shapecast, "snapshot shape cast vs live (ODE) shape cast on the same 10,000-body scene")     \
    X(memory, "live heap bytes per static and per dynamic body, split by layer")                   \
    X(debugdraw, "debug draw of 10,000 colliders vs reading their 10,000 render poses")            \
    X(geometry, "a 200 x 200 terrain built while running: per-tick slices vs one whole build")

#define GY_BENCH_DECLARE_(name, summary) int gy_bench_section_##name(gy_bench *b);
GY_BENCH_SECTIONS(GY_BENCH_DECLARE_)
#undef GY_BENCH_DECLARE_

/* --quick: each section finishes in a few seconds (the whole program in under 30 s). */
bool gy_bench_quick(const gy_bench *b);

/* Records one number: a table row and the JSON key `key` ("a.b.c" nests as {"a":{"b":{"c":…}}}).
 * `unit` and `what` are for the table only. */
void gy_bench_report(gy_bench *b, const char *key, double value, const char *unit,
                     const char *what);

/* A free-form line printed under the section's rows (configuration, caveats). */
void gy_bench_note(gy_bench *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Sorts `v` in place and returns the nearest-rank percentile p (0..100); 0 when n == 0. */
double gy_bench_percentile(double *v, size_t n, double p);

/* Reports key.p50, key.p99 and key.max of `v` (sorted in place), in `unit`. */
void gy_bench_report_distribution(gy_bench *b, const char *key, double *v, size_t n,
                                  const char *unit, const char *what);

/* Median of n values (sorted in place). */
double gy_bench_median(double *v, size_t n);

#endif /* GYRE_BENCH_H */
