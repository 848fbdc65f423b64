/* The front end's queries (middleware/src/queries.c) over a scripted driver: what the front end
 * promises every driver, whatever its vendor: the filter runs before any raw test, the collectors
 * stop the walk and keep what they promise, hits are named and measured one way, a start-pose
 * contact is a fraction-0 hit, and two convex shapes are cast by the front end itself. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../middleware/src/driver.h"
#include "gyre/math.h"

enum { MAX_COLLIDERS = 8 };

/* A scripted collider: its Gyre record and the raw hit its tests report. */
struct gy_driver_collider {
    gy_adapter_collider base;
    gy_adapter_body body; /* its body's record, the collider's owner */
    bool hits;
    gy_driver_hit raw;
    gy_pose body_pose;
};

struct gy_driver_world {
    struct gy_driver_collider colliders[MAX_COLLIDERS];
    uint32_t count;
    uint32_t offered, tested, cast_tested;
    double cast_lo; /* `lo` of the last cast_test */
    bool window;    /* cast_window opens at fraction 0.25 */
};

struct gy_driver_query {
    gy_driver_world *w;
};

static void walk(gy_driver_world *w, gy_adapter_search *s)
{
    gy_driver_query q = {w};
    for (uint32_t i = 0; i < w->count; i++) {
        w->offered++;
        if (!gy_adapter_search_visit(s, &q, &w->colliders[i]))
            return;
    }
}

static void ray_walk(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                     gy_adapter_search *s)
{
    (void)origin, (void)dir, (void)length;
    walk(w, s);
}

static void shape_walk(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                       double length, bool cast, gy_adapter_search *s)
{
    (void)shape, (void)pose, (void)translation, (void)length, (void)cast;
    walk(w, s);
}

static bool raw_test(gy_driver_world *w, gy_driver_collider *c, gy_driver_hit *out)
{
    w->tested++;
    *out = c->raw;
    return c->hits;
}

static bool ray_test(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c,
                     gy_driver_hit *out)
{
    (void)q;
    return raw_test(w, c, out);
}

/* A start-pose contact only for colliders scripted with t = 0. */
static bool shape_contact(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c,
                          gy_driver_hit *out)
{
    (void)q;
    return raw_test(w, c, out) && out->t == 0.0;
}

static bool cast_window(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c, double *t0,
                        double *t1)
{
    (void)q, (void)c;
    if (w->window)
        *t0 = 0.25;
    return *t0 <= *t1;
}

static bool cast_test(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c, double lo,
                      double hi, gy_driver_hit *out)
{
    (void)q, (void)hi;
    w->cast_tested++;
    w->cast_lo = lo;
    *out = c->raw;
    return c->hits && c->raw.t > 0.0;
}

static gy_pose collider_body_pose(gy_driver_world *w, gy_driver_collider *c, const gy_hull **hull)
{
    (void)w, (void)hull;
    return c->body_pose;
}

static const gy_driver scripted = {
    .name = "scripted",
    .ray_walk = ray_walk,
    .shape_walk = shape_walk,
    .ray_test = ray_test,
    .shape_contact = shape_contact,
    .cast_window = cast_window,
    .cast_test = cast_test,
    .collider_body_pose = collider_body_pose,
};

/* Collider i: a unit sphere on a static body, category 1, hit at distance (or fraction) t. */
static struct gy_driver_collider *add(gy_driver_world *w, double t)
{
    struct gy_driver_collider *c = &w->colliders[w->count++];
    memset(c, 0, sizeof *c);
    c->base.id.bits = 100 + w->count;
    c->body.id.bits = 200 + w->count;
    c->body.user_data = 300 + w->count;
    c->body.type = GY_MOTION_STATIC;
    c->base.owner = &c->body;
    c->base.body_type = GY_MOTION_STATIC;
    c->base.shape_type = GY_SHAPE_SPHERE;
    c->base.shape.size[0] = 1.0; /* no side record: the identity local pose */
    c->base.category = 1;
    c->body_pose = gy_pose_identity();
    c->hits = true;
    c->raw.t = t;
    c->raw.normal = gy_v3(0, 1, 0);
    c->raw.triangle = -1;
    return c;
}

static void begin(gy_adapter_query *q, const gy_query_filter *f, gy_collector collector,
                  gy_hit *hits, uint32_t capacity)
{
    uint32_t count;
    assert_result(
        gy_adapter_query_begin(q, true, true, NULL, NULL, f, collector, hits, capacity, &count),
        GY_OK);
}

static void ray(gy_driver_world *w, gy_adapter_query *q)
{
    gy_adapter_search_ray(&scripted, w, q, gy_v3(0, 10, 0), gy_v3(0, -10, 0), 10.0);
}

static void test_queries_filter_runs_before_any_raw_test(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    add(&w, 2.0)->base.category = 2; /* outside the mask */
    add(&w, 3.0)->base.is_sensor = true;
    add(&w, 4.0);
    gy_query_filter f = gy_default_query_filter();
    f.mask = 1;
    gy_hit hits[4];
    gy_adapter_query q;
    begin(&q, &f, GY_COLLECT_ALL, hits, 4);
    ray(&w, &q);
    assert_int_equal(w.offered, 3);
    assert_int_equal(w.tested, 1);
    assert_int_equal(q.count, 1);
    assert_int_equal(hits[0].collider.bits, w.colliders[2].base.id.bits);
}

static void test_queries_closest_keeps_the_nearest_and_names_it(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    add(&w, 5.0);
    add(&w, 2.0)->raw.point = gy_v3(0, 8, 0);
    add(&w, 3.0);
    gy_hit hit;
    gy_adapter_query q;
    begin(&q, NULL, GY_COLLECT_CLOSEST, &hit, 1);
    ray(&w, &q);
    assert_int_equal(q.count, 1);
    assert_near(hit.distance, 2.0, 0.0);
    assert_near(hit.fraction, 0.2, 1e-15);
    assert_near(hit.point.y, 8.0, 0.0);
    assert_near(hit.penetration, 0.0, 0.0);
    assert_int_equal(hit.collider.bits, w.colliders[1].base.id.bits);
    assert_int_equal(hit.body.bits, w.colliders[1].body.id.bits);
    assert_int_equal(hit.user_data, w.colliders[1].body.user_data);
    assert_int_equal(hit.triangle, -1);
}

static void test_queries_any_and_a_full_buffer_stop_the_walk(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    for (int i = 0; i < 4; i++)
        add(&w, 1.0 + i);
    gy_hit hits[2];
    gy_adapter_query q;
    begin(&q, NULL, GY_COLLECT_ANY, hits, 1);
    ray(&w, &q);
    assert_int_equal(q.count, 1);
    assert_int_equal(w.offered, 1);

    w.offered = 0;
    begin(&q, NULL, GY_COLLECT_ALL, hits, 2);
    ray(&w, &q);
    assert_int_equal(q.count, 2);
    assert_int_equal(w.offered, 2);
}

static void test_queries_mesh_triangles_face_the_ray(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    struct gy_driver_collider *c = add(&w, 2.0);
    c->raw.triangle = 7;
    c->raw.normal = gy_v3(0, -1, 0); /* the back of the triangle, along the ray */
    gy_hit hit;
    gy_adapter_query q;
    begin(&q, NULL, GY_COLLECT_CLOSEST, &hit, 1);
    ray(&w, &q);
    assert_int_equal(q.count, 1);
    assert_int_equal(hit.triangle, 7);
    assert_near(hit.normal.y, 1.0, 0.0);
}

/* A closest-hit cast of a unit sphere from the origin; the number of hits. */
static uint32_t cast_closest(gy_driver_world *w, gy_vec3 translation, gy_hit *hit)
{
    gy_shape sphere = {.type = GY_SHAPE_SPHERE, .radius = 1.0};
    gy_pose start = {gy_v3(0, 0, 0), gy_quat_identity()};
    gy_adapter_query q;
    begin(&q, NULL, GY_COLLECT_CLOSEST, hit, 1);
    gy_adapter_search_shape(&scripted, w, &q, &sphere, NULL, start, translation,
                            gy_v3_len(translation), true);
    return q.count;
}

static void test_queries_start_contact_is_a_fraction_zero_hit(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    add(&w, 0.0)->raw.depth = 0.125;
    gy_hit hit;
    assert_int_equal(cast_closest(&w, gy_v3(4, 0, 0), &hit), 1);
    assert_near(hit.fraction, 0.0, 0.0);
    assert_near(hit.distance, 0.0, 0.0);
    assert_near(hit.penetration, 0.125, 0.0);
    assert_int_equal(w.cast_tested, 0);
}

/* Two unit spheres 5 m apart, cast 10 m towards each other: they touch after 3 m. */
static void test_queries_convex_pairs_are_cast_by_the_front_end(void **state)
{
    (void)state;
    gy_driver_world w = {0};
    struct gy_driver_collider *c = add(&w, 1.0);
    c->hits = false; /* no start contact */
    c->body_pose.position = gy_v3(5, 0, 0);
    gy_hit hit;
    assert_int_equal(cast_closest(&w, gy_v3(10, 0, 0), &hit), 1);
    assert_near(hit.fraction * 10.0, 3.0, 1e-5);
    assert_near(hit.normal.x, -1.0, 1e-6);
    assert_near(hit.point.x, 4.0, 1e-5);
    assert_int_equal(w.cast_tested, 0);
}

/* A plane is not convex: the driver's cast_test gets it, from where the window opens. */
static void test_queries_other_shapes_go_to_the_drivers_cast_from_its_window(void **state)
{
    (void)state;
    gy_driver_world w = {.window = true};
    struct gy_driver_collider *c = add(&w, 0.5);
    gy_adapter_collider_rare plane = {.local_pose = gy_pose_identity(),
                                      .one_way_normal = gy_v3(0, 1, 0),
                                      .one_way_slop = GY_DEFAULT_ONE_WAY_SLOP,
                                      .plane_normal = gy_v3(-1, 0, 0)};
    c->base.shape_type = GY_SHAPE_PLANE;
    c->base.rare = &plane;
    c->raw.triangle = -1;
    gy_hit hit;
    assert_int_equal(cast_closest(&w, gy_v3(4, 0, 0), &hit), 1);
    assert_int_equal(w.cast_tested, 1);
    assert_near(w.cast_lo, 0.25, 0.0);
    assert_int_equal(w.tested, 0); /* the window opens after the start: no start test */
    assert_near(hit.fraction, 0.5, 0.0);
    assert_near(hit.distance, 2.0, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_filter_runs_before_any_raw_test),
        cmocka_unit_test(test_queries_closest_keeps_the_nearest_and_names_it),
        cmocka_unit_test(test_queries_any_and_a_full_buffer_stop_the_walk),
        cmocka_unit_test(test_queries_mesh_triangles_face_the_ray),
        cmocka_unit_test(test_queries_start_contact_is_a_fraction_zero_hit),
        cmocka_unit_test(test_queries_convex_pairs_are_cast_by_the_front_end),
        cmocka_unit_test(test_queries_other_shapes_go_to_the_drivers_cast_from_its_window),
    };
    return cmocka_run_group_tests_name("front-end queries", tests, NULL, NULL);
}
