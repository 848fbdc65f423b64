/* The front end's queries (middleware/src/queries.c) over a scripted driver: what the front end
 * promises every driver, whatever its vendor: the filter runs before any raw test, the collectors
 * stop the walk and keep what they promise, hits are named and measured one way, a start-pose
 * contact is a fraction-0 hit, two convex shapes are cast by the front end itself, and the front
 * end searches the fraction of any other cast (stepping and bisecting the driver's touch test, or
 * refining the vendor's sweep). */
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
    bool hits;            /* raw.t == 0: at the start; casts: from fraction raw.t on */
    gy_driver_hit raw;
    gy_pose body_pose;
    double box[6]; /* collider_box */
};

struct gy_driver_world {
    struct gy_driver_collider colliders[MAX_COLLIDERS];
    uint32_t count;
    uint32_t offered, tested;
    uint32_t touch_tests; /* shape_contact past the start */
    double first_touch;   /* the fraction of the first of those */
    uint32_t swept;       /* cast_sweep calls */
    double sweep_error;   /* cast_sweep's fraction is this far past the contact */
    gy_vec3 sweep_normal; /* and its normal */
    bool boxed;           /* the walk gives the shape's start box */
    double shape_box[6];
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
    if (w->boxed)
        gy_adapter_search_cast_box(s, w->shape_box);
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

/* A start-pose contact for colliders scripted with t = 0; a cast's touch from raw.t on. */
static bool shape_contact(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c, double t,
                          gy_driver_hit *out)
{
    (void)q;
    if (t == 0.0)
        return raw_test(w, c, out) && out->t == 0.0;
    if (w->touch_tests++ == 0)
        w->first_touch = t;
    *out = c->raw;
    out->t = t;
    return c->hits && c->raw.t > 0.0 && t >= c->raw.t;
}

static void collider_box(gy_driver_world *w, gy_driver_collider *c, double box[6])
{
    (void)w;
    memcpy(box, c->box, sizeof c->box);
}

static bool cast_sweep(gy_driver_world *w, gy_driver_query *q, gy_driver_collider *c, double hi,
                       gy_driver_hit *out)
{
    (void)q, (void)hi;
    w->swept++;
    *out = c->raw;
    out->t += w->sweep_error;
    out->normal = w->sweep_normal;
    return c->hits && c->raw.t > 0.0;
}

static gy_pose collider_body_pose(gy_driver_world *w, gy_driver_collider *c)
{
    (void)w;
    return c->body_pose;
}

static const gy_driver scripted = {
    .name = "scripted",
    .ray_walk = ray_walk,
    .shape_walk = shape_walk,
    .ray_test = ray_test,
    .shape_contact = shape_contact,
    .collider_box = collider_box,
    .cast_sweep = NULL,
    .collider_body_pose = collider_body_pose,
};

/* The same with a vendor sweep ending up to 2 mm from the contact. */
static const gy_driver swept = {
    .name = "swept",
    .cast_sweep_slack = 2e-3,
    .ray_walk = ray_walk,
    .shape_walk = shape_walk,
    .ray_test = ray_test,
    .shape_contact = shape_contact,
    .cast_sweep = cast_sweep,
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

/* Makes c the plane x = 0 facing -X (its side record in *rare). */
static void make_plane(struct gy_driver_collider *c, gy_adapter_collider_rare *rare)
{
    gy_adapter_collider_rare r = {.local_pose = gy_pose_identity(),
                                  .one_way_normal = gy_v3(0, 1, 0),
                                  .one_way_slop = GY_DEFAULT_ONE_WAY_SLOP,
                                  .plane_normal = gy_v3(-1, 0, 0)};
    *rare = r;
    c->base.shape_type = GY_SHAPE_PLANE;
    c->base.rare = rare;
}

/* A closest-hit cast of a unit sphere from the origin through driver d; the number of hits. */
static uint32_t cast_closest_by(const gy_driver *d, gy_driver_world *w, gy_vec3 translation,
                                gy_hit *hit)
{
    gy_shape sphere = {.type = GY_SHAPE_SPHERE, .radius = 1.0};
    gy_pose start = {gy_v3(0, 0, 0), gy_quat_identity()};
    gy_adapter_query q;
    begin(&q, NULL, GY_COLLECT_CLOSEST, hit, 1);
    gy_adapter_search_shape(d, w, &q, &sphere, NULL, start, translation, gy_v3_len(translation),
                            true);
    return q.count;
}

static uint32_t cast_closest(gy_driver_world *w, gy_vec3 translation, gy_hit *hit)
{
    return cast_closest_by(&scripted, w, translation, hit);
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
    assert_int_equal(w.touch_tests, 0);
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
    assert_int_equal(w.touch_tests, 0);
}

/* A plane (x >= 2) is not convex: without a vendor sweep the front end steps the unit sphere by
 * its inner radius from where the boxes meet (1 + 4 t = 2), and bisects the step that touches
 * (the scripted plane touches from fraction 0.5 on) down to 1e-4 m, ending on the apart side. */
static void test_queries_other_shapes_are_stepped_from_the_box_window(void **state)
{
    (void)state;
    gy_driver_world w = {.boxed = true, .shape_box = {-1, 1, -1, 1, -1, 1}};
    struct gy_driver_collider *c = add(&w, 0.5);
    gy_adapter_collider_rare plane;
    make_plane(c, &plane);
    const double box[6] = {2, INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY};
    memcpy(c->box, box, sizeof box);
    c->raw.point = gy_v3(2, 0, 0);
    c->raw.normal = gy_v3(-1, 0, 0);
    gy_hit hit;
    assert_int_equal(cast_closest(&w, gy_v3(4, 0, 0), &hit), 1);
    assert_int_equal(w.tested, 0);         /* the window opens after the start: no start test */
    assert_near(w.first_touch, 0.5, 1e-6); /* from the window's 0.25, one inner radius on */
    assert_true(hit.fraction < 0.5);
    assert_near(hit.distance, 2.0, 1e-4);
    assert_near(hit.normal.x, -1.0, 0.0);
    assert_near(hit.point.x, 2.0, 0.0);

    /* Boxes that never meet: no test at all. */
    w.touch_tests = 0;
    c->box[0] = 6;
    assert_int_equal(cast_closest(&w, gy_v3(4, 0, 0), &hit), 0);
    assert_int_equal(w.touch_tests + w.tested, 0);
}

/* A vendor's sweep 1 mm past the contact at 2 m (fraction 0.5 of 4 m) is refined by the front
 * end to within 1e-5 m on the apart side, with the point and normal of the first touching pose
 * (as a stepped cast reports them), not the sweep's from a pose up to 2 mm away. */
static void test_queries_vendor_sweeps_are_refined_to_the_contact(void **state)
{
    (void)state;
    gy_driver_world w = {.sweep_error = 1e-3 / 4.0, .sweep_normal = gy_v3(-0.6, 0.8, 0)};
    struct gy_driver_collider *c = add(&w, 0.5);
    gy_adapter_collider_rare plane;
    make_plane(c, &plane);
    c->raw.point = gy_v3(2, 0, 0);
    c->raw.normal = gy_v3(-1, 0, 0);
    c->raw.triangle = 3;
    gy_hit hit;
    assert_int_equal(cast_closest_by(&swept, &w, gy_v3(4, 0, 0), &hit), 1);
    assert_int_equal(w.swept, 1);
    assert_true(hit.distance < 2.0);
    assert_near(hit.distance, 2.0, 1e-5);
    assert_int_equal(hit.triangle, 3);
    assert_near(hit.normal.x, -1.0, 0.0);

    /* No bracket about the sweep's answer (already touching 2 mm before it): kept as given. */
    w.sweep_error = -3e-3 / 4.0;
    assert_int_equal(cast_closest_by(&swept, &w, gy_v3(4, 0, 0), &hit), 1);
    assert_near(hit.distance, 2.0 - 3e-3, 1e-12);
    assert_near(hit.normal.y, 0.8, 0.0);
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
        cmocka_unit_test(test_queries_other_shapes_are_stepped_from_the_box_window),
        cmocka_unit_test(test_queries_vendor_sweeps_are_refined_to_the_contact),
    };
    return cmocka_run_group_tests_name("front-end queries", tests, NULL, NULL);
}
