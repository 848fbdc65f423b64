/* Shared test support: tolerance asserts (cmocka 1.1.5 has none), a counting allocator that can
 * fail on demand, and a bounded wait for threaded tests (never a bare sleep). */
#ifndef GYRE_TEST_SUPPORT_H
#define GYRE_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gyre/core.h"
#include "gyre/math.h"

/* Fails the test unless |actual - expected| <= tol, printing all three. */
#define assert_near(actual, expected, tol)                                                         \
    gy_test_assert_near_((double)(actual), (double)(expected), (double)(tol), #actual, __FILE__,   \
                         __LINE__)
void gy_test_assert_near_(double actual, double expected, double tol, const char *expr,
                          const char *file, int line);

/* Fails the test unless lo <= actual <= hi, printing the value and the range. */
#define assert_between(actual, lo, hi)                                                             \
    gy_test_assert_between_((double)(actual), (double)(lo), (double)(hi), #actual, __FILE__,       \
                            __LINE__)
void gy_test_assert_between_(double actual, double lo, double hi, const char *expr,
                             const char *file, int line);

/* Fails the test when `r` is not `expected`, naming both codes. */
#define assert_result(r, expected)                                                                 \
    gy_test_assert_result_((r), (expected), #r, __FILE__, __LINE__)
void gy_test_assert_result_(gy_result actual, gy_result expected, const char *expr,
                            const char *file, int line);

/* An allocator that counts calls and bytes and can fail the Nth allocation (1-based; 0 = never).
 * Thread-safe counters, so it may serve two threads. */
typedef struct gy_test_allocator {
    gy_allocator base; /* pass &ta.base wherever a gy_allocator is taken */
    uint64_t allocs, frees, reallocs;
    int64_t live_bytes;
    int64_t live_blocks;
    uint64_t fail_at; /* the allocation (alloc or growing realloc) number that returns NULL */
    uint64_t calls;   /* allocations attempted so far */
} gy_test_allocator;

void gy_test_allocator_init(gy_test_allocator *ta);

/* Polls `done(ctx)` until it returns true or `timeout_s` passes; returns the last answer. Yields
 * the CPU between polls. */
bool gy_test_wait_until(bool (*done)(void *ctx), void *ctx, double timeout_s);

/* Monotonic seconds. */
double gy_test_now(void);

/* ---- a deterministic generator for randomised tests (xorshift64; seed must not be 0) -------- */

typedef struct gy_test_rng {
    uint64_t s;
} gy_test_rng;

/* Uniform in [0, 1). */
static inline double gy_test_rnd(gy_test_rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi). */
static inline double gy_test_rnd_in(gy_test_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gy_test_rnd(r);
}

/* Each component uniform in [lo, hi). */
static inline gy_vec3 gy_test_rnd_vec(gy_test_rng *r, double lo, double hi)
{
    return gy_v3(gy_test_rnd_in(r, lo, hi), gy_test_rnd_in(r, lo, hi), gy_test_rnd_in(r, lo, hi));
}

#endif
