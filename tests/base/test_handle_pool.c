/* The generational handle pool: null handles, stale rejection, slot reuse, retirement. */
#include "test_support.h"

#include "gyre/handle_pool.h"

static int payload[4];

static void test_handle_pool_null_handle_is_rejected(void **state)
{
    (void)state;
    gy_handle_pool p;
    gy_handle_pool_init(&p, NULL);
    assert_null(gy_handle_pool_get(&p, 0));
    assert_false(gy_handle_pool_is_valid(&p, 0));
    assert_result(gy_handle_pool_release(&p, 0), GY_ERR_STALE_HANDLE);
    gy_handle_pool_fini(&p);
}

static void test_handle_pool_handles_are_never_zero_and_resolve(void **state)
{
    (void)state;
    gy_handle_pool p;
    gy_handle_pool_init(&p, NULL);
    uint64_t h[4];
    for (int i = 0; i < 4; i++) {
        assert_result(gy_handle_pool_acquire(&p, &payload[i], &h[i]), GY_OK);
        assert_true(h[i] != 0);
        assert_true(gy_handle_generation(h[i]) != 0);
    }
    for (int i = 0; i < 4; i++)
        assert_ptr_equal(gy_handle_pool_get(&p, h[i]), &payload[i]);
    assert_int_equal(p.live, 4);
    gy_handle_pool_fini(&p);
}

static void test_handle_pool_stale_handle_is_rejected_after_reuse(void **state)
{
    (void)state;
    gy_handle_pool p;
    gy_handle_pool_init(&p, NULL);
    uint64_t a, b;
    assert_result(gy_handle_pool_acquire(&p, &payload[0], &a), GY_OK);
    assert_result(gy_handle_pool_release(&p, a), GY_OK);
    assert_result(gy_handle_pool_acquire(&p, &payload[1], &b), GY_OK);
    /* Same slot, new generation: the old handle must not alias the new owner. */
    assert_int_equal(gy_handle_slot(a), gy_handle_slot(b));
    assert_true(a != b);
    assert_null(gy_handle_pool_get(&p, a));
    assert_result(gy_handle_pool_release(&p, a), GY_ERR_STALE_HANDLE);
    assert_ptr_equal(gy_handle_pool_get(&p, b), &payload[1]);
    gy_handle_pool_fini(&p);
}

static void test_handle_pool_unknown_slot_is_rejected(void **state)
{
    (void)state;
    gy_handle_pool p;
    gy_handle_pool_init(&p, NULL);
    assert_null(gy_handle_pool_get(&p, gy_handle_make(1000, 1)));
    assert_result(gy_handle_pool_release(&p, gy_handle_make(1000, 1)), GY_ERR_STALE_HANDLE);
    gy_handle_pool_fini(&p);
}

static void test_handle_pool_exhausted_generation_retires_slot(void **state)
{
    (void)state;
    gy_handle_pool p;
    gy_handle_pool_init(&p, NULL);
    p.first_generation = UINT32_MAX - 1u;
    uint64_t a, b, c;
    assert_result(gy_handle_pool_acquire(&p, &payload[0], &a), GY_OK);
    assert_result(gy_handle_pool_release(&p, a), GY_OK);
    assert_result(gy_handle_pool_acquire(&p, &payload[1], &b), GY_OK);
    assert_int_equal(gy_handle_generation(b), UINT32_MAX);
    assert_result(gy_handle_pool_release(&p, b), GY_OK);
    assert_int_equal(p.retired, 1);
    assert_result(gy_handle_pool_acquire(&p, &payload[2], &c), GY_OK);
    assert_true(gy_handle_slot(c) != gy_handle_slot(a));
    assert_null(gy_handle_pool_get(&p, a));
    assert_null(gy_handle_pool_get(&p, b));
    gy_handle_pool_fini(&p);
}

static void test_handle_pool_reaches_peak_then_stops_allocating(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_handle_pool p;
    gy_handle_pool_init(&p, &ta.base);
    uint64_t h[100];
    for (int i = 0; i < 100; i++)
        assert_result(gy_handle_pool_acquire(&p, &payload[0], &h[i]), GY_OK);
    for (int i = 0; i < 100; i++)
        assert_result(gy_handle_pool_release(&p, h[i]), GY_OK);
    uint64_t before = ta.calls;
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 100; i++)
            assert_result(gy_handle_pool_acquire(&p, &payload[0], &h[i]), GY_OK);
        for (int i = 0; i < 100; i++)
            assert_result(gy_handle_pool_release(&p, h[i]), GY_OK);
    }
    assert_int_equal(ta.calls, before);
    gy_handle_pool_fini(&p);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_handle_pool_out_of_memory_is_reported(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    ta.fail_at = 1;
    gy_handle_pool p;
    gy_handle_pool_init(&p, &ta.base);
    uint64_t h = 0;
    assert_result(gy_handle_pool_acquire(&p, &payload[0], &h), GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(h, 0);
    assert_int_equal(p.live, 0);
    gy_handle_pool_fini(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handle_pool_null_handle_is_rejected),
        cmocka_unit_test(test_handle_pool_handles_are_never_zero_and_resolve),
        cmocka_unit_test(test_handle_pool_stale_handle_is_rejected_after_reuse),
        cmocka_unit_test(test_handle_pool_unknown_slot_is_rejected),
        cmocka_unit_test(test_handle_pool_exhausted_generation_retires_slot),
        cmocka_unit_test(test_handle_pool_reaches_peak_then_stops_allocating),
        cmocka_unit_test(test_handle_pool_out_of_memory_is_reported),
    };
    return cmocka_run_group_tests_name("handle_pool", tests, NULL, NULL);
}
