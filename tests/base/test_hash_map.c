/* The base hash map: lookups, replacement, removal inside probe runs (no tombstones left),
 * growth, O(1) clearing, iteration, allocation at peak size and out-of-memory behaviour, checked
 * against a plain reference array with counts and checksums. */
#include "test_support.h"

#include <string.h>

#include "gyre/hash_map.h"

/* The reference: value + 1 per key index (0 = absent); keys are k -> (k * 7919, k >> 3). */
#define KEYS 4096u

static gy_map_key key_n(uint32_t n)
{
    return gy_map_key_pair((uint64_t)n * 7919u, n >> 3);
}

static uint32_t rnd_below(gy_test_rng *r, uint32_t n)
{
    return (uint32_t)(gy_test_rnd(r) * n);
}

/* Every key agrees with the reference; returns the number of live keys. */
static uint32_t check_against(const gy_hash_map *m, const uint64_t *ref)
{
    uint32_t live = 0;
    for (uint32_t k = 0; k < KEYS; k++) {
        const uint64_t *v = gy_hash_map_find(m, key_n(k));
        if (ref[k] == 0) {
            assert_null(v);
        } else {
            assert_non_null(v);
            assert_true(*v == ref[k] - 1u);
            live++;
        }
    }
    assert_int_equal(m->count, live);
    return live;
}

static void test_hash_map_finds_what_was_put_and_nothing_else(void **state)
{
    (void)state;
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    assert_null(gy_hash_map_find(&m, key_n(1)));
    for (uint32_t k = 0; k < 100; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k * 3u), GY_OK);
    assert_int_equal(m.count, 100);
    for (uint32_t k = 0; k < 100; k++)
        assert_int_equal(*gy_hash_map_find(&m, key_n(k)), k * 3u);
    for (uint32_t k = 100; k < 200; k++)
        assert_null(gy_hash_map_find(&m, key_n(k)));
    gy_hash_map_fini(&m);
}

static void test_hash_map_keys_differing_in_one_word_are_distinct(void **state)
{
    (void)state;
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    assert_result(gy_hash_map_put(&m, gy_map_key_pair(5, 9), 1), GY_OK);
    assert_result(gy_hash_map_put(&m, gy_map_key_pair(9, 5), 2), GY_OK);
    assert_result(gy_hash_map_put(&m, gy_map_key_of(5), 3), GY_OK);
    assert_int_equal(m.count, 3);
    assert_int_equal(*gy_hash_map_find(&m, gy_map_key_pair(5, 9)), 1);
    assert_int_equal(*gy_hash_map_find(&m, gy_map_key_pair(9, 5)), 2);
    assert_int_equal(*gy_hash_map_find(&m, gy_map_key_pair(5, 0)), 3);
    assert_null(gy_hash_map_find(&m, gy_map_key_pair(9, 9)));
    gy_hash_map_fini(&m);
}

static void test_hash_map_put_replaces_and_upsert_says_which(void **state)
{
    (void)state;
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    uint64_t *v;
    bool inserted;
    assert_result(gy_hash_map_upsert(&m, key_n(7), &v, &inserted), GY_OK);
    assert_true(inserted);
    assert_int_equal(*v, 0);
    *v = 41;
    assert_result(gy_hash_map_upsert(&m, key_n(7), &v, &inserted), GY_OK);
    assert_false(inserted);
    assert_int_equal(*v, 41);
    assert_result(gy_hash_map_put(&m, key_n(7), 42), GY_OK);
    assert_int_equal(m.count, 1);
    assert_int_equal(*gy_hash_map_find(&m, key_n(7)), 42);
    gy_hash_map_fini(&m);
}

/* Removal in every position of long probe runs: at 4,096 keys in a table kept half full, runs of
 * several slots are common, and every removal must leave every other key reachable. */
static void test_hash_map_remove_keeps_the_rest_of_each_probe_run(void **state)
{
    (void)state;
    static uint64_t ref[KEYS];
    memset(ref, 0, sizeof ref);
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    for (uint32_t k = 0; k < KEYS; k++) {
        assert_result(gy_hash_map_put(&m, key_n(k), k), GY_OK);
        ref[k] = k + 1u;
    }
    gy_test_rng r = {0x5eedu};
    uint64_t removed_sum = 0;
    for (uint32_t n = 0; n < KEYS / 2; n++) {
        uint32_t k = rnd_below(&r, KEYS);
        uint64_t got = UINT64_MAX;
        bool was = gy_hash_map_remove(&m, key_n(k), &got);
        assert_int_equal(was, ref[k] != 0);
        if (was) {
            assert_int_equal(got, k);
            removed_sum += got;
        }
        ref[k] = 0;
        if (n % 256 == 0)
            check_against(&m, ref);
    }
    uint32_t live = check_against(&m, ref);
    uint64_t live_sum = 0;
    for (uint32_t k = 0; k < KEYS; k++)
        live_sum += ref[k] ? ref[k] - 1u : 0;
    assert_int_equal(live_sum + removed_sum, (uint64_t)KEYS * (KEYS - 1u) / 2u);
    assert_true(live < KEYS);
    assert_false(gy_hash_map_remove(&m, key_n(KEYS + 5u), NULL));
    gy_hash_map_fini(&m);
}

/* Random puts, replacements and removals over a small key space: heavy reuse of the same slots. */
static void test_hash_map_random_operations_agree_with_a_reference(void **state)
{
    (void)state;
    static uint64_t ref[KEYS];
    memset(ref, 0, sizeof ref);
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    gy_test_rng r = {0xabcdefu};
    for (uint32_t op = 0; op < 200000; op++) {
        uint32_t k = rnd_below(&r, 1024);
        if (gy_test_rnd(&r) < 0.55) {
            uint64_t v = op;
            assert_result(gy_hash_map_put(&m, key_n(k), v), GY_OK);
            ref[k] = v + 1u;
        } else {
            assert_int_equal(gy_hash_map_remove(&m, key_n(k), NULL), ref[k] != 0);
            ref[k] = 0;
        }
        if (op % 20000 == 0)
            check_against(&m, ref);
    }
    check_against(&m, ref);
    gy_hash_map_fini(&m);
}

static void test_hash_map_grows_and_keeps_every_entry(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hash_map m;
    gy_hash_map_init(&m, &ta.base);
    uint32_t last_capacity = 0, growths = 0;
    for (uint32_t k = 0; k < 100000; k++) {
        assert_result(gy_hash_map_put(&m, gy_map_key_of(k), (uint64_t)k * k), GY_OK);
        if (m.capacity != last_capacity) {
            growths++;
            last_capacity = m.capacity;
        }
        assert_true((uint64_t)m.count * 2u <= m.capacity);
    }
    assert_int_equal(growths, 15); /* 16, 32, ... 262,144 slots: doubling */
    for (uint32_t k = 0; k < 100000; k++)
        assert_true(*gy_hash_map_find(&m, gy_map_key_of(k)) == (uint64_t)k * k);
    gy_hash_map_fini(&m);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

/* Each live entry once, with its value; a checksum of keys and values over the walk. */
static void test_hash_map_iteration_visits_each_live_entry_once(void **state)
{
    (void)state;
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    uint64_t want_keys = 0, want_values = 0;
    for (uint32_t k = 0; k < 3000; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k + 10u), GY_OK);
    for (uint32_t k = 0; k < 3000; k += 3)
        assert_true(gy_hash_map_remove(&m, key_n(k), NULL));
    static uint8_t seen[3000];
    memset(seen, 0, sizeof seen);
    for (uint32_t k = 0; k < 3000; k++) {
        if (k % 3 != 0) {
            want_keys += key_n(k).a ^ key_n(k).b;
            want_values += k + 10u;
        }
    }
    uint32_t cursor = 0, visited = 0;
    uint64_t got_keys = 0, got_values = 0;
    gy_map_key key;
    uint64_t value;
    while (gy_hash_map_next(&m, &cursor, &key, &value)) {
        uint32_t k = (uint32_t)(value - 10u);
        assert_true(k < 3000 && k % 3 != 0);
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
        assert_true(key.a == key_n(k).a && key.b == key_n(k).b);
        got_keys += key.a ^ key.b;
        got_values += value;
        visited++;
    }
    assert_int_equal(visited, 2000);
    assert_int_equal(visited, m.count);
    assert_true(got_keys == want_keys);
    assert_true(got_values == want_values);
    assert_false(gy_hash_map_next(&m, &cursor, &key, &value)); /* stays at the end */
    gy_hash_map_fini(&m);
}

/* Slot access over the whole table, after removals and a clear, reports live exactly the entries
 * the map holds, each once, with its value; empty and dead slots report nothing. */
static void test_hash_map_slot_walk_finds_exactly_the_live_entries(void **state)
{
    (void)state;
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    for (uint32_t k = 0; k < 500; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k + 10u), GY_OK);
    gy_hash_map_clear(&m); /* the old entries' slots are dead now, not empty */
    for (uint32_t k = 0; k < 1000; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k + 10u), GY_OK);
    for (uint32_t k = 0; k < 1000; k += 4)
        assert_true(gy_hash_map_remove(&m, key_n(k), NULL));
    static uint8_t seen[1000];
    memset(seen, 0, sizeof seen);
    uint32_t live = 0;
    for (uint32_t i = 0; i < m.capacity; i++) {
        gy_map_key key;
        uint64_t value;
        if (!gy_hash_map_slot(&m, i, &key, &value))
            continue;
        uint32_t k = (uint32_t)(value - 10u);
        assert_true(k < 1000 && k % 4 != 0);
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
        assert_true(key.a == key_n(k).a && key.b == key_n(k).b);
        assert_true(gy_hash_map_slot(&m, i, NULL, NULL));
        live++;
    }
    assert_int_equal(live, 750);
    assert_int_equal(live, m.count);
    gy_hash_map_fini(&m);
}

/* A prefetch is only a hint: on a zero-initialised, an emptied or a populated map it changes no
 * entry, count or table. */
static void test_hash_map_prefetch_changes_nothing(void **state)
{
    (void)state;
    gy_hash_map zero = {0};
    gy_hash_map_prefetch(&zero, key_n(1));
    assert_null(zero.slots);
    assert_int_equal(zero.count, 0);
    gy_hash_map m;
    gy_hash_map_init(&m, NULL);
    gy_hash_map_prefetch(&m, key_n(1));
    for (uint32_t k = 0; k < 300; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k + 7u), GY_OK);
    const gy_map_slot_ *slots = m.slots;
    uint32_t capacity = m.capacity;
    for (uint32_t k = 0; k < 600; k++)
        gy_hash_map_prefetch(&m, key_n(k));
    assert_ptr_equal(m.slots, slots);
    assert_int_equal(m.capacity, capacity);
    assert_int_equal(m.count, 300);
    for (uint32_t k = 0; k < 300; k++)
        assert_int_equal(*gy_hash_map_find(&m, key_n(k)), k + 7u);
    gy_hash_map_clear(&m);
    gy_hash_map_prefetch(&m, key_n(3));
    assert_null(gy_hash_map_find(&m, key_n(3)));
    gy_hash_map_fini(&m);
}

static void test_hash_map_clear_empties_and_keeps_the_table(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hash_map m;
    gy_hash_map_init(&m, &ta.base);
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t k = 0; k < 500; k++)
            assert_result(gy_hash_map_put(&m, key_n(k + round), k), GY_OK);
        assert_int_equal(m.count, 500);
        uint64_t allocs = ta.allocs + ta.reallocs;
        gy_hash_map_clear(&m);
        assert_int_equal(m.count, 0);
        for (uint32_t k = 0; k < 520; k++)
            assert_null(gy_hash_map_find(&m, key_n(k)));
        uint32_t cursor = 0;
        assert_false(gy_hash_map_next(&m, &cursor, NULL, NULL));
        assert_true(ta.allocs + ta.reallocs == allocs);
    }
    /* The epoch wrapping round: old tags must not come back to life. */
    assert_result(gy_hash_map_put(&m, key_n(1), 1), GY_OK);
    m.epoch = UINT64_MAX;
    assert_result(gy_hash_map_put(&m, key_n(2), 2), GY_OK);
    gy_hash_map_clear(&m);
    assert_int_equal(m.epoch, 1);
    assert_null(gy_hash_map_find(&m, key_n(1)));
    assert_null(gy_hash_map_find(&m, key_n(2)));
    assert_result(gy_hash_map_put(&m, key_n(3), 3), GY_OK);
    assert_int_equal(*gy_hash_map_find(&m, key_n(3)), 3);
    assert_int_equal(m.count, 1);
    gy_hash_map_fini(&m);
}

/* A map at its peak size never allocates, however long it churns, and never grows: removal
 * leaves no tombstones behind to fill the table. */
static void test_hash_map_churn_at_peak_size_neither_allocates_nor_grows(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hash_map m;
    gy_hash_map_init(&m, &ta.base);
    assert_result(gy_hash_map_reserve(&m, 1000), GY_OK);
    uint32_t capacity = m.capacity;
    uint64_t allocs = ta.allocs + ta.reallocs;
    for (uint32_t k = 0; k < 1000; k++)
        assert_result(gy_hash_map_put(&m, gy_map_key_of(k), k), GY_OK);
    for (uint32_t k = 1000; k < 300000; k++) {
        assert_true(gy_hash_map_remove(&m, gy_map_key_of(k - 1000u), NULL));
        assert_result(gy_hash_map_put(&m, gy_map_key_of(k), k), GY_OK);
    }
    assert_int_equal(m.count, 1000);
    assert_int_equal(m.capacity, capacity);
    assert_true(ta.allocs + ta.reallocs == allocs);
    for (uint32_t k = 0; k < 300000; k++)
        assert_int_equal(gy_hash_map_find(&m, gy_map_key_of(k)) != NULL, k >= 299000);
    gy_hash_map_fini(&m);
}

static void test_hash_map_out_of_memory_leaves_the_map_unchanged(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hash_map m;
    gy_hash_map_init(&m, &ta.base);
    for (uint32_t k = 0; k < 8; k++)
        assert_result(gy_hash_map_put(&m, key_n(k), k), GY_OK);
    assert_int_equal(m.capacity, 16);
    ta.fail_at = ta.calls + 1u;
    assert_result(gy_hash_map_put(&m, key_n(8), 8), GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(m.count, 8);
    assert_int_equal(m.capacity, 16);
    assert_null(gy_hash_map_find(&m, key_n(8)));
    for (uint32_t k = 0; k < 8; k++)
        assert_int_equal(*gy_hash_map_find(&m, key_n(k)), k);
    /* Replacing an existing key needs no memory. */
    assert_result(gy_hash_map_put(&m, key_n(3), 33), GY_OK);
    assert_int_equal(*gy_hash_map_find(&m, key_n(3)), 33);
    assert_result(gy_hash_map_reserve(&m, 1u << 30), GY_ERR_OUT_OF_MEMORY);
    ta.fail_at = 0;
    assert_result(gy_hash_map_put(&m, key_n(8), 8), GY_OK);
    assert_int_equal(m.count, 9);
    gy_hash_map_fini(&m);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_map_finds_what_was_put_and_nothing_else),
        cmocka_unit_test(test_hash_map_keys_differing_in_one_word_are_distinct),
        cmocka_unit_test(test_hash_map_put_replaces_and_upsert_says_which),
        cmocka_unit_test(test_hash_map_remove_keeps_the_rest_of_each_probe_run),
        cmocka_unit_test(test_hash_map_random_operations_agree_with_a_reference),
        cmocka_unit_test(test_hash_map_grows_and_keeps_every_entry),
        cmocka_unit_test(test_hash_map_iteration_visits_each_live_entry_once),
        cmocka_unit_test(test_hash_map_slot_walk_finds_exactly_the_live_entries),
        cmocka_unit_test(test_hash_map_prefetch_changes_nothing),
        cmocka_unit_test(test_hash_map_clear_empties_and_keeps_the_table),
        cmocka_unit_test(test_hash_map_churn_at_peak_size_neither_allocates_nor_grows),
        cmocka_unit_test(test_hash_map_out_of_memory_leaves_the_map_unchanged),
    };
    return cmocka_run_group_tests_name("hash_map", tests, NULL, NULL);
}
