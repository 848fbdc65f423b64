/* Shared fixture for the query snapshot suites (test_query_snapshot*.c): making a snapshot and
 * publishing and reading one tick. Header-only (static functions), one copy per test binary. */
#ifndef GYRE_TEST_QUERY_SNAPSHOT_FIXTURE_H
#define GYRE_TEST_QUERY_SNAPSHOT_FIXTURE_H

#include "test_support.h"

#include "query_snapshot.h"

/* A snapshot allocating through `a` (NULL: the default allocator), with default capacities. */
static inline gy_query_snapshot *qfx_make_snapshot(const gy_allocator *a)
{
    gy_query_snapshot_def def = {a, 0};
    gy_query_snapshot *qs = NULL;
    assert_result(gy_query_snapshot_create(&def, &qs), GY_OK);
    return qs;
}

/* Publishes `tick` and acquires it: the view returned shows that tick. */
static inline const gy_snapshot_view *qfx_publish_read(gy_query_snapshot *qs, uint64_t tick)
{
    assert_result(gy_query_snapshot_publish(qs, tick), GY_OK);
    const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
    assert_non_null(v);
    assert_int_equal(gy_snapshot_view_tick(v), tick);
    return v;
}

#endif
