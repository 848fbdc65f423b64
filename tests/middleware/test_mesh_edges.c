/* Internal mesh edges (middleware/src/mesh_edges.c): which edges keep their own normal, and which
 * contact normals become the face normal. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../middleware/src/mesh_edges.h"
#include "gyre/math.h"

/* Two triangles sharing the edge (0,0,0)–(0,0,1): the first flat on y = 0 over x < 0 (normal up),
 * the second over x > 0 rising to height `h` at x = 1 (h > 0: a valley, h < 0: a ridge). */
static void build_pair(gy_test_allocator *ta, double h, gy_adapter_mesh_edges *e)
{
    const gy_vec3 v[6] = {gy_v3(-1, 0, 0), gy_v3(0, 0, 1), gy_v3(0, 0, 0),
                          gy_v3(0, 0, 0),  gy_v3(0, 0, 1), gy_v3(1, h, 0)};
    /* Vertices 2/3 and 1/4 repeat positions: welding must join them. */
    const uint32_t idx[6] = {0, 1, 2, 3, 4, 5};
    gy_mesh_def md = {v, 6, idx, 6};
    assert_result(gy_adapter_mesh_edges_build(&ta->base, &md, e), GY_OK);
}

static void test_mesh_edges_flat_join_is_inactive_and_boundary_active(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_mesh_edges e;
    build_pair(&ta, 0.0, &e);
    assert_int_equal(e.triangle_count, 2);
    assert_near(e.normals[0].y, 1.0, 1e-12);
    /* First triangle: edges 0 (v0→v1) and 2 (v2→v0) are the boundary, 1 (v1→v2) is shared. */
    assert_int_equal(e.active[0], (1u << 0) | (1u << 2));
    /* Second: edge 0 (v3→v4) is shared. */
    assert_int_equal(e.active[1], (1u << 1) | (1u << 2));

    /* A sideways normal at the shared edge becomes the face normal... */
    gy_vec3 n = gy_v3(-1, 0, 0);
    assert_true(gy_adapter_mesh_edges_fix_normal(&e, 1, gy_v3(0, 0, 0.5), &n));
    assert_near(n.x, 0.0, 1e-12);
    assert_near(n.y, 1.0, 1e-12);
    /* ...inside the face too, but not at the boundary, nor from behind, nor for no triangle. */
    n = gy_v3(0.6, 0.8, 0);
    assert_true(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-0.2, 0, 0.3), &n));
    assert_near(n.y, 1.0, 1e-12);
    n = gy_v3(-0.6, 0.8, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-1.2, 0, 0.0), &n));
    n = gy_v3(0, -1, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-0.2, 0, 0.3), &n));
    n = gy_v3(-1, 0, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, -1, gy_v3(0, 0, 0.5), &n));
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 2, gy_v3(0, 0, 0.5), &n));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_mesh_edges_ridge_is_active_valley_and_shallow_ridge_are_not(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_mesh_edges e;
    /* A 30° ridge keeps its edge: a body sliding off it meets the corner. */
    build_pair(&ta, -tan(GY_PI / 6.0), &e);
    assert_true(e.active[0] & (1u << 1));
    assert_true(e.active[1] & (1u << 0));
    gy_vec3 n = gy_v3(0.2588, 0.9659, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(0, 0, 0.5), &n));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    /* A 30° valley does not: its faces hold the body. */
    build_pair(&ta, tan(GY_PI / 6.0), &e);
    assert_false(e.active[0] & (1u << 1));
    assert_false(e.active[1] & (1u << 0));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    /* Nor does a 2° ridge, under the 5° coplanar threshold. */
    build_pair(&ta, -tan(2.0 * GY_PI / 180.0), &e);
    assert_false(e.active[0] & (1u << 1));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_mesh_edges_out_of_memory_leaves_nothing(void **state)
{
    (void)state;
    for (uint64_t fail = 1; fail <= 7; fail++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        ta.fail_at = fail;
        const gy_vec3 v[3] = {gy_v3(0, 0, 0), gy_v3(0, 0, 1), gy_v3(1, 0, 0)};
        const uint32_t idx[3] = {0, 1, 2};
        gy_mesh_def md = {v, 3, idx, 3};
        gy_adapter_mesh_edges e;
        assert_result(gy_adapter_mesh_edges_build(&ta.base, &md, &e), GY_ERR_OUT_OF_MEMORY);
        assert_int_equal(e.triangle_count, 0);
        assert_int_equal(ta.live_blocks, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mesh_edges_flat_join_is_inactive_and_boundary_active),
        cmocka_unit_test(test_mesh_edges_ridge_is_active_valley_and_shallow_ridge_are_not),
        cmocka_unit_test(test_mesh_edges_out_of_memory_leaves_nothing),
    };
    return cmocka_run_group_tests_name("mesh edges", tests, NULL, NULL);
}
