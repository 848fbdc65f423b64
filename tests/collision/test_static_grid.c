/* The static grid: every visit must report exactly the indexed items whose box overlaps the query,
 * each once, in the documented order, through inserts, moves, removals, trims, huge coordinates
 * and failed allocations. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../collision/src/static_grid.h"

#define N_ITEMS 300u

static gy_aabb box_of(double x0, double y0, double z0, double x1, double y1, double z1)
{
    return (gy_aabb){{x0, y0, z0}, {x1, y1, z1}};
}

static bool overlaps(const gy_aabb *a, const gy_aabb *b)
{
    return a->min.x <= b->max.x && a->max.x >= b->min.x && a->min.y <= b->max.y &&
           a->max.y >= b->min.y && a->min.z <= b->max.z && a->max.z >= b->min.z;
}

/* What a visit reported, in order. */
typedef struct seen {
    gy_static_grid_item *items[N_ITEMS * 2];
    uint32_t count;
    uint32_t stop_after; /* 0: never stop */
} seen;

static bool record(void *ctx, gy_static_grid_item *item)
{
    seen *s = ctx;
    assert_true(s->count < N_ITEMS * 2);
    s->items[s->count++] = item;
    return s->stop_after == 0 || s->count < s->stop_after;
}

static void visit(gy_static_grid *g, gy_aabb q, seen *s)
{
    memset(s, 0, sizeof *s);
    gy_static_grid_visit(g, &q, record, s);
}

/* The visit reports exactly the indexed items overlapping q, each once. */
static void check_exact(gy_static_grid *g, gy_static_grid_item *items, const bool *in, uint32_t n,
                        gy_aabb q)
{
    seen *s = test_calloc(1, sizeof *s);
    visit(g, q, s);
    uint32_t expected = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t times = 0;
        for (uint32_t k = 0; k < s->count; k++)
            times += s->items[k] == &items[i];
        bool want = in[i] && overlaps(&items[i].box, &q);
        assert_int_equal(times, want ? 1 : 0);
        expected += want;
    }
    assert_int_equal(s->count, expected);
    test_free(s);
}

static gy_aabb random_box(gy_test_rng *r)
{
    double k = gy_test_rnd(r);
    gy_vec3 c = gy_test_rnd_vec(r, -60.0, 60.0);
    double h = k < 0.05  ? 200.0
               : k < 0.3 ? gy_test_rnd_in(r, 2.0, 12.0)
                         : gy_test_rnd_in(r, 0.1, 2);
    if (k < 0.02)
        return box_of(-INFINITY, -INFINITY, -INFINITY, INFINITY, 0.0, INFINITY); /* a plane */
    return box_of(c.x - h, c.y - h, c.z - h, c.x + h, c.y + h, c.z + h);
}

static void
test_static_grid_visit_matches_brute_force_through_inserts_moves_and_removes(void **state)
{
    (void)state;
    gy_test_rng r = {0x5eed1234u};
    gy_static_grid g;
    gy_static_grid_init(&g, 4.0, gy_default_allocator());
    gy_static_grid_item *items = test_calloc(N_ITEMS, sizeof *items);
    bool in[N_ITEMS] = {0};
    for (uint32_t i = 0; i < N_ITEMS; i++) {
        gy_aabb b = random_box(&r);
        assert_result(gy_static_grid_insert(&g, &items[i], &b), GY_OK);
        in[i] = true;
    }
    for (uint32_t round = 0; round < 40; round++) {
        for (uint32_t k = 0; k < 20; k++) {
            uint32_t i = (uint32_t)(gy_test_rnd(&r) * N_ITEMS) % N_ITEMS;
            if (in[i]) {
                gy_static_grid_remove(&g, &items[i]);
                in[i] = false;
            }
            if (gy_test_rnd(&r) < 0.7) { /* moved, or back after a removal */
                gy_aabb b = random_box(&r);
                assert_result(gy_static_grid_insert(&g, &items[i], &b), GY_OK);
                assert_memory_equal(&items[i].box, &b, sizeof b);
                in[i] = true;
            }
        }
        gy_static_grid_trim(&g);
        for (uint32_t k = 0; k < 10; k++) {
            gy_aabb q = random_box(&r);
            check_exact(&g, items, in, N_ITEMS, q);
        }
        check_exact(&g, items, in, N_ITEMS,
                    box_of(-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY));
    }
    gy_static_grid_fini(&g);
    test_free(items);
}

/* Big items first in their order, then the cells: in first-use order when the region is wider
 * than the populated grid, else along X then Z; a visitor returning false stops the walk. */
static void test_static_grid_visit_order_is_big_list_then_cells(void **state)
{
    (void)state;
    gy_static_grid g;
    gy_static_grid_init(&g, 1.0, gy_default_allocator());
    gy_static_grid_item a, b, c, big;
    gy_aabb ba = box_of(1.2, 0, 0.2, 1.8, 1, 0.8); /* cell (1, 0), used first */
    gy_aabb bb = box_of(0.2, 0, 0.2, 0.8, 1, 0.8); /* cell (0, 0) */
    gy_aabb bc = box_of(1.1, 0, 0.1, 1.9, 1, 0.9); /* cell (1, 0) after a */
    gy_aabb bbig = box_of(-50, 0, -50, 50, 1, 50); /* spans more than 32 cells */
    assert_result(gy_static_grid_insert(&g, &a, &ba), GY_OK);
    assert_result(gy_static_grid_insert(&g, &b, &bb), GY_OK);
    assert_result(gy_static_grid_insert(&g, &c, &bc), GY_OK);
    assert_result(gy_static_grid_insert(&g, &big, &bbig), GY_OK);
    assert_int_equal(g.big_count, 1);
    assert_int_equal(g.cells.count, 2);

    seen s;
    visit(&g, box_of(-10, -10, -10, 10, 10, 10), &s); /* 400 cells > 2 populated: walk cells */
    assert_int_equal(s.count, 4);
    assert_ptr_equal(s.items[0], &big);
    assert_ptr_equal(s.items[1], &a);
    assert_ptr_equal(s.items[2], &c);
    assert_ptr_equal(s.items[3], &b);

    visit(&g, box_of(0.1, 0, 0.1, 1.9, 1, 0.9), &s); /* 2 cells: along X, so (0, 0) first */
    assert_int_equal(s.count, 4);
    assert_ptr_equal(s.items[0], &big);
    assert_ptr_equal(s.items[1], &b);
    assert_ptr_equal(s.items[2], &a);
    assert_ptr_equal(s.items[3], &c);

    /* A swap-removal moves the cell's last item into the gap. */
    gy_static_grid_remove(&g, &a);
    assert_result(gy_static_grid_insert(&g, &a, &ba), GY_OK);
    visit(&g, box_of(1.0, 0, 0.0, 1.99, 1, 0.99), &s);
    assert_int_equal(s.count, 3);
    assert_ptr_equal(s.items[1], &c);
    assert_ptr_equal(s.items[2], &a);

    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    gy_aabb all = box_of(-10, -10, -10, 10, 10, 10);
    gy_static_grid_visit(&g, &all, record, &s);
    assert_int_equal(s.count, 2);
    gy_static_grid_fini(&g);
}

/* An item spanning several cells is reported once, also across the visit stamp's wrap. */
static void test_static_grid_reports_a_multi_cell_item_once_across_stamp_wrap(void **state)
{
    (void)state;
    gy_static_grid g;
    gy_static_grid_init(&g, 1.0, gy_default_allocator());
    gy_static_grid_item it;
    gy_aabb b = box_of(0.5, 0, 0.5, 5.5, 1, 5.5); /* 36 cells */
    assert_result(gy_static_grid_insert(&g, &it, &b), GY_OK);
    seen s;
    for (uint32_t k = 0; k < 4; k++) {
        if (k == 1)
            g.visit_stamp = UINT32_MAX; /* the next visit's stamp would be the item's: 1 */
        visit(&g, box_of(0, 0, 0, 6, 1, 6), &s);
        assert_int_equal(s.count, 1);
        assert_ptr_equal(s.items[0], &it);
    }
    gy_static_grid_fini(&g);
}

static void test_static_grid_trim_drops_emptied_cells_and_keeps_order(void **state)
{
    (void)state;
    gy_static_grid g;
    gy_static_grid_init(&g, 1.0, gy_default_allocator());
    gy_static_grid_item items[100];
    for (uint32_t i = 0; i < 100; i++) {
        gy_aabb b = box_of(i * 2.0 + 0.25, 0, 0.25, i * 2.0 + 0.75, 1, 0.75);
        assert_result(gy_static_grid_insert(&g, &items[i], &b), GY_OK);
    }
    /* Few emptied cells: kept for the next item placed there. */
    for (uint32_t i = 0; i < 10; i++)
        gy_static_grid_remove(&g, &items[i]);
    gy_static_grid_trim(&g);
    assert_int_equal(g.cells.count, 100);
    assert_int_equal(g.cells_empty, 10);
    for (uint32_t i = 10; i < 80; i++)
        gy_static_grid_remove(&g, &items[i]);
    gy_static_grid_trim(&g);
    assert_int_equal(g.cells.count, 20);
    assert_int_equal(g.cells_empty, 0);
    seen s;
    visit(&g, box_of(-1000, -1, -1000, 1000, 2, 1000), &s);
    assert_int_equal(s.count, 20);
    for (uint32_t i = 0; i < 20; i++)
        assert_ptr_equal(s.items[i], &items[80 + i]);
    visit(&g, box_of(170.1, 0, 0, 170.9, 1, 1), &s); /* found through the re-pointed index */
    assert_int_equal(s.count, 1);
    assert_ptr_equal(s.items[0], &items[85]);
    gy_static_grid_fini(&g);
}

static void test_static_grid_clamps_huge_coordinates(void **state)
{
    (void)state;
    gy_static_grid g;
    gy_static_grid_init(&g, 1.0, gy_default_allocator());
    /* Far out on both sides, and near the origin: each in one (clamped) cell. */
    const gy_aabb boxes[3] = {box_of(1e300, 0, 1e300, 1e300, 1, 1e300),
                              box_of(-1e300, 0, -1e300, -1e300, 1, -1e300),
                              box_of(0.1, 0, 0.1, 0.9, 1, 0.9)};
    gy_static_grid_item items[3];
    gy_static_grid_item *far = &items[0], *neg = &items[1];
    for (uint32_t i = 0; i < 3; i++) {
        assert_result(gy_static_grid_insert(&g, &items[i], &boxes[i]), GY_OK);
        assert_int_equal(g.cells.count, i + 1);
    }
    assert_int_equal(g.big_count, 0);
    seen s;
    visit(&g, box_of(1e300, 0, 1e300, 1e300, 1, 1e300), &s);
    assert_int_equal(s.count, 1);
    assert_ptr_equal(s.items[0], far);
    visit(&g, box_of(1e12, 0, 1e12, 2e12, 1, 2e12), &s); /* same clamped cell, no overlap */
    assert_int_equal(s.count, 0);
    visit(&g, box_of(-INFINITY, 0, -INFINITY, INFINITY, 1, INFINITY), &s);
    assert_int_equal(s.count, 3);
    visit(&g, box_of(-1e300, 0, -1e300, 1e300, 1, 1e300), &s);
    assert_int_equal(s.count, 3);
    gy_static_grid_remove(&g, far);
    gy_static_grid_remove(&g, neg);
    visit(&g, box_of(-INFINITY, 0, -INFINITY, INFINITY, 1, INFINITY), &s);
    assert_int_equal(s.count, 1);
    gy_static_grid_fini(&g);
}

/* Every allocation an insert makes, failed in turn: the insert reports it and the grid answers as
 * before (the item untouched); the same insert then succeeds. Re-inserting an item where it was
 * never allocates. */
static void test_static_grid_failed_insert_leaves_grid_unchanged(void **state)
{
    (void)state;
    const gy_aabb boxes[3] = {
        box_of(0.5, 0, 0.5, 9.5, 1, 9.5),   /* 100 new cells */
        box_of(-100, 0, -100, 100, 1, 100), /* the big list */
        box_of(5.5, 0, 5.5, 12.5, 1, 6.5),  /* some cells in use, some new */
    };
    for (uint32_t which = 0; which < 3; which++) {
        for (uint64_t fail = 1;; fail++) {
            gy_test_allocator ta;
            gy_test_allocator_init(&ta);
            gy_static_grid g;
            gy_static_grid_init(&g, 1.0, &ta.base);
            gy_static_grid_item old[3], it;
            for (uint32_t i = 0; i < which; i++)
                assert_result(gy_static_grid_insert(&g, &old[i], &boxes[i]), GY_OK);
            memset(&it, 0xab, sizeof it);
            gy_static_grid_item before = it;
            ta.fail_at = ta.calls + fail;
            gy_result r = gy_static_grid_insert(&g, &it, &boxes[which]);
            ta.fail_at = 0;
            gy_aabb all = box_of(-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY);
            seen s;
            visit(&g, all, &s);
            if (r == GY_OK) {
                assert_int_equal(s.count, which + 1);
                gy_static_grid_fini(&g);
                assert_int_equal(ta.live_blocks, 0);
                break;
            }
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            assert_memory_equal(&it, &before, sizeof it);
            assert_int_equal(s.count, which);
            for (uint32_t k = 0; k < s.count; k++)
                assert_ptr_not_equal(s.items[k], &it);
            assert_result(gy_static_grid_insert(&g, &it, &boxes[which]), GY_OK);
            visit(&g, all, &s);
            assert_int_equal(s.count, which + 1);

            uint64_t allocs = ta.allocs + ta.reallocs;
            gy_static_grid_remove(&g, &it);
            assert_result(gy_static_grid_insert(&g, &it, &boxes[which]), GY_OK);
            assert_int_equal(ta.allocs + ta.reallocs, allocs);
            gy_static_grid_fini(&g);
            assert_int_equal(ta.live_blocks, 0);
        }
    }
}

/* Cell (x, z) of the grid, which must be in use. */
static gy_static_grid_cell *cell_at(gy_static_grid *g, int32_t x, int32_t z)
{
    for (uint32_t i = 0; i < g->cells.count; i++)
        if (g->cells.items[i].x == x && g->cells.items[i].z == z)
            return &g->cells.items[i];
    fail_msg("cell (%d, %d) not in use", x, z);
    return NULL;
}

static bool lists(gy_static_grid *g, gy_aabb q, const gy_static_grid_item *item)
{
    seen s;
    visit(g, q, &s);
    for (uint32_t k = 0; k < s.count; k++)
        if (s.items[k] == item)
            return true;
    return false;
}

/* A static's colliders are re-indexed one after another, and put back when one fails (the
 * adapters' front end, static_move in middleware/src/frontend.c). Here collider a leaves a full
 * cell, b moves into the room a left, and c's new place cannot be allocated. Put back in the
 * reverse of the order they moved, nothing is allocated; in the same order, a would need the room b
 * took, and the cell would have to grow. */
static void test_static_grid_undoing_moves_in_reverse_never_allocates(void **state)
{
    (void)state;
    const gy_aabb cell_a = box_of(0.25, 0, 0.25, 0.75, 1, 0.75);
    const gy_aabb cell_b = box_of(5.25, 0, 5.25, 5.75, 1, 5.75);
    const gy_aabb cell_c = box_of(10.25, 0, 10.25, 10.75, 1, 10.75);
    const gy_aabb cell_d = box_of(20.25, 0, 20.25, 20.75, 1, 20.75);
    const gy_aabb cell_e = box_of(40.25, 0, 40.25, 40.75, 1, 40.75);
    for (int reverse = 1; reverse >= 0; reverse--) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_static_grid g;
        gy_static_grid_init(&g, 1.0, &ta.base);
        gy_static_grid_item a, b, c, others[64];
        assert_result(gy_static_grid_insert(&g, &a, &cell_a), GY_OK);
        assert_result(gy_static_grid_insert(&g, &b, &cell_b), GY_OK);
        assert_result(gy_static_grid_insert(&g, &c, &cell_c), GY_OK);
        uint32_t n = 0;
        while (cell_at(&g, 0, 0)->count < cell_at(&g, 0, 0)->capacity) {
            assert_true(n < 64);
            assert_result(gy_static_grid_insert(&g, &others[n++], &cell_a), GY_OK);
        }

        gy_static_grid_remove(&g, &a);
        assert_result(gy_static_grid_insert(&g, &a, &cell_d), GY_OK);
        gy_static_grid_remove(&g, &b);
        assert_result(gy_static_grid_insert(&g, &b, &cell_a), GY_OK);
        gy_static_grid_remove(&g, &c);
        ta.fail_at = ta.calls + 1;
        assert_result(gy_static_grid_insert(&g, &c, &cell_e), GY_ERR_OUT_OF_MEMORY);

        /* Every allocation from here on fails. */
        uint64_t allocated = ta.allocs + ta.reallocs;
        ta.fail_at = ta.calls + 1;
        if (reverse) {
            assert_result(gy_static_grid_insert(&g, &c, &cell_c), GY_OK);
            gy_static_grid_remove(&g, &b);
            assert_result(gy_static_grid_insert(&g, &b, &cell_b), GY_OK);
            gy_static_grid_remove(&g, &a);
            assert_result(gy_static_grid_insert(&g, &a, &cell_a), GY_OK);
            assert_int_equal(ta.allocs + ta.reallocs, allocated);
            assert_true(lists(&g, cell_a, &a) && lists(&g, cell_b, &b) && lists(&g, cell_c, &c));
            assert_false(lists(&g, cell_a, &b) || lists(&g, cell_d, &a));
        } else {
            assert_result(gy_static_grid_insert(&g, &c, &cell_c), GY_OK);
            gy_static_grid_remove(&g, &a);
            assert_result(gy_static_grid_insert(&g, &a, &cell_a), GY_ERR_OUT_OF_MEMORY);
        }
        ta.fail_at = 0;
        gy_static_grid_fini(&g);
        assert_int_equal(ta.live_blocks, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_static_grid_visit_matches_brute_force_through_inserts_moves_and_removes),
        cmocka_unit_test(test_static_grid_visit_order_is_big_list_then_cells),
        cmocka_unit_test(test_static_grid_reports_a_multi_cell_item_once_across_stamp_wrap),
        cmocka_unit_test(test_static_grid_trim_drops_emptied_cells_and_keeps_order),
        cmocka_unit_test(test_static_grid_clamps_huge_coordinates),
        cmocka_unit_test(test_static_grid_failed_insert_leaves_grid_unchanged),
        cmocka_unit_test(test_static_grid_undoing_moves_in_reverse_never_allocates),
    };
    return cmocka_run_group_tests_name("static_grid", tests, NULL, NULL);
}
