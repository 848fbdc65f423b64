/* The hull entries of the adapter contract, for one adapter named on the command line (argv[1]):
 * hull_create_built takes a hull already built (gy_hull_build) in place of its points, refuses a
 * malformed one with GY_ERR_INVALID_MESH and changes nothing, and the resource it makes is a hull
 * bodies can use; ODE refuses a runtime hull of more than 256 vertices (its convex collider's
 * set-up is quadratic in the hull's edges), Bullet takes any. */
#include "contract_fixture.h"

#include <math.h>
#include <string.h>

#include "gyre/geometry.h"
#include "gyre/math.h"

/* `n` points on a unit sphere (a Fibonacci lattice): all of them hull vertices. */
static gy_hull sphere_hull(uint32_t n)
{
    gy_vec3 *p = test_malloc(n * sizeof *p);
    for (uint32_t i = 0; i < n; i++) {
        double y = 1.0 - 2.0 * (i + 0.5) / n, r = sqrt(1.0 - y * y), a = 2.399963229728653 * i;
        p[i] = gy_v3(r * cos(a), y, r * sin(a));
    }
    gy_hull h;
    assert_result(gy_hull_build(NULL, p, n, &h), GY_OK);
    assert_int_equal(h.vertex_count, n);
    test_free(p);
    return h;
}

static gy_result dynamic_body_on(fixture *fx, gy_resource_id hull)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_DYNAMIC;
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_HULL;
    cd.shape.resource = hull;
    gy_body_id id;
    gy_result r = fx->be->body_create(fx->w, &bd, &cd, 1, &id, NULL);
    if (r == GY_OK)
        assert_result(fx->be->body_release(fx->w, id), GY_OK);
    return r;
}

static void test_hull_create_built_makes_a_hull_bodies_use(void **state)
{
    fixture *fx = *state;
    gy_hull h = sphere_hull(200);
    gy_resource_id id = {0};
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_OK);
    assert_true(id.bits != 0);
    gy_hull_free(NULL, &h); /* the adapter keeps its own copy */
    assert_result(dynamic_body_on(fx, id), GY_OK);
    fx->be->resource_release(fx->w, id);
}

static void test_hull_create_built_refuses_a_malformed_hull(void **state)
{
    fixture *fx = *state;
    gy_hull h = sphere_hull(64);
    gy_resource_id id = {.bits = 77};
    assert_result(fx->be->hull_create_built(fx->w, NULL, &id), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->hull_create_built(fx->w, &h, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->hull_create_built(NULL, &h, &id), GY_ERR_INVALID_ARGUMENT);

    uint32_t tri = h.triangles[5];
    h.triangles[5] = h.vertex_count; /* an index past the vertices */
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    assert_int_equal(id.bits, 0);
    h.triangles[5] = tri;

    double x = h.vertices[3].x;
    h.vertices[3].x = NAN;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.vertices[3].x = x;

    double d = h.planes[7][3];
    h.planes[7][3] = INFINITY;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.planes[7][3] = d;

    uint32_t t = h.triangle_count;
    h.triangle_count = 3;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.triangle_count = t;

    double v = h.volume;
    h.volume = 0.0;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.volume = v;

    gy_backend_counters c;
    fx->be->get_counters(fx->w, &c);
    assert_int_equal(c.resources, 0); /* nothing made by any refusal */
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_OK);
    fx->be->resource_release(fx->w, id);
    gy_hull_free(NULL, &h);
}

/* The rest of a built hull's faults: a missing array, too few vertices or triangles, a centroid
 * or volume that is not a finite number. Each is refused with GY_ERR_INVALID_MESH, makes no
 * resource and leaves the id as it was. */
static void test_hull_create_built_refuses_missing_arrays_and_bad_totals(void **state)
{
    fixture *fx = *state;
    gy_hull h = sphere_hull(64);
    const gy_hull good = h;
    gy_resource_id id = {.bits = 77};

    h.vertices = NULL;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.triangles = NULL;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.planes = NULL;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.vertex_count = 3;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.vertex_count = 0;
    h.triangle_count = 0;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.centroid.y = NAN;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;
    h.volume = NAN;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.volume = INFINITY;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h.volume = -1.0;
    assert_result(fx->be->hull_create_built(fx->w, &h, &id), GY_ERR_INVALID_MESH);
    h = good;

    assert_int_equal(id.bits, 0);
    gy_backend_counters c;
    fx->be->get_counters(fx->w, &c);
    assert_int_equal(c.resources, 0);
    gy_hull_free(NULL, &h);
}

static void test_hull_create_built_takes_at_most_the_adapters_vertices(void **state)
{
    fixture *fx = *state;
    gy_hull small = sphere_hull(256), large = sphere_hull(257);
    gy_resource_id id = {0};
    assert_result(fx->be->hull_create_built(fx->w, &small, &id), GY_OK);
    fx->be->resource_release(fx->w, id);
    gy_result want = strcmp(fx->be->name, "ode") == 0 ? GY_ERR_UNSUPPORTED : GY_OK;
    assert_result(fx->be->hull_create_built(fx->w, &large, &id), want);
    if (want == GY_OK)
        fx->be->resource_release(fx->w, id);
    else
        assert_int_equal(id.bits, 0);
    gy_hull_free(NULL, &small);
    gy_hull_free(NULL, &large);
}

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "hull contract");
    if (status != 0)
        return status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hull_create_built_makes_a_hull_bodies_use, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hull_create_built_refuses_a_malformed_hull, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_hull_create_built_refuses_missing_arrays_and_bad_totals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hull_create_built_takes_at_most_the_adapters_vertices,
                                        setup, teardown),
    };
    return cmocka_run_group_tests_name("hull contract", tests, NULL, NULL);
}
