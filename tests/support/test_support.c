#include "test_support.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void gy_test_assert_near_(double actual, double expected, double tol, const char *expr,
                          const char *file, int line)
{
    if (!(fabs(actual - expected) <= tol)) {
        print_error("%s = %.9g, expected %.9g ± %.3g (off by %.3g)\n", expr, actual, expected, tol,
                    fabs(actual - expected));
        _fail(file, line);
    }
}

void gy_test_assert_between_(double actual, double lo, double hi, const char *expr,
                             const char *file, int line)
{
    if (!(actual >= lo && actual <= hi)) {
        print_error("%s = %.9g, expected within [%.9g, %.9g]\n", expr, actual, lo, hi);
        _fail(file, line);
    }
}

void gy_test_assert_result_(gy_result actual, gy_result expected, const char *expr,
                            const char *file, int line)
{
    if (actual != expected) {
        print_error("%s returned %s, expected %s\n", expr, gy_result_name(actual),
                    gy_result_name(expected));
        _fail(file, line);
    }
}

static bool should_fail(gy_test_allocator *ta)
{
    uint64_t n = __atomic_add_fetch(&ta->calls, 1, __ATOMIC_RELAXED);
    return ta->fail_at != 0 && n == ta->fail_at;
}

static void *ta_alloc(void *ctx, size_t size)
{
    gy_test_allocator *ta = ctx;
    if (should_fail(ta))
        return NULL;
    void *p = malloc(size);
    if (p != NULL) {
        __atomic_add_fetch(&ta->allocs, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ta->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ta->live_blocks, 1, __ATOMIC_RELAXED);
    }
    return p;
}

static void *ta_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    gy_test_allocator *ta = ctx;
    if (new_size > old_size && should_fail(ta))
        return NULL;
    void *p = realloc(ptr, new_size);
    if (p != NULL) {
        __atomic_add_fetch(&ta->reallocs, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ta->live_bytes, (int64_t)new_size - (int64_t)old_size,
                           __ATOMIC_RELAXED);
    }
    return p;
}

static void ta_free(void *ctx, void *ptr, size_t size)
{
    gy_test_allocator *ta = ctx;
    free(ptr);
    __atomic_add_fetch(&ta->frees, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&ta->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&ta->live_blocks, 1, __ATOMIC_RELAXED);
}

void gy_test_allocator_init(gy_test_allocator *ta)
{
    *ta = (gy_test_allocator){0};
    ta->base.alloc = ta_alloc;
    ta->base.realloc = ta_realloc;
    ta->base.free = ta_free;
    ta->base.ctx = ta;
}

double gy_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool gy_test_wait_until(bool (*done)(void *ctx), void *ctx, double timeout_s)
{
    double end = gy_test_now() + timeout_s;
    for (;;) {
        if (done(ctx))
            return true;
        if (gy_test_now() > end)
            return done(ctx);
        sched_yield();
    }
}
