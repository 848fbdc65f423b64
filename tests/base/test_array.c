/* The base typed array: push and growth keep every item, reserve then push allocates once, an
 * out-of-memory growth leaves the array as it was, free empties it; checked with counts and
 * checksums, for uint32 and for a struct element. */
#include "test_support.h"

#include "gyre/array.h"

typedef struct sample {
    double x;
    uint32_t tag;
} sample;
GY_ARRAY_DEFINE(sample_array, sample)

static void test_array_push_keeps_every_item_in_order(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_u32_array v = {0};
    uint64_t sum = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        assert_result(gy_u32_array_push(&ta.base, &v, i * 2654435761u), GY_OK);
        sum += i * 2654435761u;
    }
    assert_int_equal(v.count, 100000);
    assert_true(v.capacity >= v.count && v.capacity < 2u * v.count + 8u);
    uint64_t got = 0;
    for (uint32_t i = 0; i < v.count; i++) {
        assert_int_equal(v.items[i], i * 2654435761u);
        got += v.items[i];
    }
    assert_true(got == sum);
    gy_u32_array_free(&ta.base, &v);
    assert_null(v.items);
    assert_int_equal(v.count, 0);
    assert_int_equal(v.capacity, 0);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

static void test_array_reserved_array_does_not_allocate_again(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    sample_array v = {0};
    assert_result(sample_array_reserve(&ta.base, &v, 1000), GY_OK);
    uint64_t allocs = ta.allocs + ta.reallocs;
    double sum = 0;
    for (uint32_t round = 0; round < 50; round++) {
        v.count = 0;
        for (uint32_t i = 0; i < 1000; i++) {
            sample s = {(double)i * 0.5, i};
            assert_result(sample_array_push(&ta.base, &v, s), GY_OK);
        }
    }
    for (uint32_t i = 0; i < v.count; i++) {
        assert_int_equal(v.items[i].tag, i);
        sum += v.items[i].x;
    }
    assert_true(sum == 0.5 * 999.0 * 1000.0 / 2.0); /* exact: halves of integers */
    assert_true(ta.allocs + ta.reallocs == allocs);
    assert_result(sample_array_reserve(&ta.base, &v, 10), GY_OK); /* never shrinks */
    assert_true(v.capacity >= 1000);
    sample_array_free(&ta.base, &v);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_array_out_of_memory_leaves_the_array_unchanged(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_u32_array v = {0};
    while (v.count < v.capacity || v.count == 0)
        assert_result(gy_u32_array_push(&ta.base, &v, v.count + 1u), GY_OK);
    uint32_t count = v.count, capacity = v.capacity;
    const uint32_t *items = v.items;
    ta.fail_at = ta.calls + 1u;
    assert_result(gy_u32_array_push(&ta.base, &v, 99), GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(v.count, count);
    assert_int_equal(v.capacity, capacity);
    assert_ptr_equal(v.items, items);
    for (uint32_t i = 0; i < v.count; i++)
        assert_int_equal(v.items[i], i + 1u);
    ta.fail_at = 0;
    assert_result(gy_u32_array_push(&ta.base, &v, 99), GY_OK);
    assert_int_equal(v.items[count], 99);
    gy_u32_array_free(&ta.base, &v);
    assert_int_equal(ta.live_blocks, 0);
}

/* Growth doubles from the current capacity (or the first one) to the least that fits, and the
 * 64-bit answer shows a caller when it passes a 32-bit limit. */
static void test_array_capacity_doubles_to_the_least_that_fits(void **state)
{
    (void)state;
    assert_true(gy_capacity_for(0, 8u, 0) == 8u);
    assert_true(gy_capacity_for(0, 8u, 8) == 8u);
    assert_true(gy_capacity_for(0, 8u, 9) == 16u);
    assert_true(gy_capacity_for(0, 64u, 1000) == 1024u);
    assert_true(gy_capacity_for(24u, 8u, 25) == 48u);
    assert_true(gy_capacity_for(24u, 8u, 20) == 24u);
    assert_true(gy_capacity_for(1u << 31, 8u, (1ull << 31) + 1u) == 1ull << 32);
    assert_true(gy_capacity_for(3u, 8u, UINT32_MAX) == 3ull << 31);
}

/* A need no 64-bit capacity reaches by doubling answers UINT64_MAX (above every caller's limit)
 * rather than wrapping to zero and doubling forever; a zero start counts up from 1. */
static void test_array_capacity_saturates_rather_than_wrapping_or_looping(void **state)
{
    (void)state;
    assert_true(gy_capacity_for(3u, 8u, UINT64_MAX) == UINT64_MAX);
    assert_true(gy_capacity_for(3u, 8u, (3ull << 62) + 1u) == UINT64_MAX);
    assert_true(gy_capacity_for(3u, 8u, 3ull << 62) == 3ull << 62);
    assert_true(gy_capacity_for(0, 64u, (1ull << 63) + 1u) == UINT64_MAX);
    assert_true(gy_capacity_for(0, 64u, 1ull << 63) == 1ull << 63);
    assert_true(gy_capacity_for(0, 0, 0) == 0u);
    assert_true(gy_capacity_for(0, 0, 5) == 8u);
    assert_true(gy_capacity_for(0, 0, UINT64_MAX) == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_array_push_keeps_every_item_in_order),
        cmocka_unit_test(test_array_reserved_array_does_not_allocate_again),
        cmocka_unit_test(test_array_out_of_memory_leaves_the_array_unchanged),
        cmocka_unit_test(test_array_capacity_doubles_to_the_least_that_fits),
        cmocka_unit_test(test_array_capacity_saturates_rather_than_wrapping_or_looping),
    };
    return cmocka_run_group_tests_name("array", tests, NULL, NULL);
}
