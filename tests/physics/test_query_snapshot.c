/* The query snapshot: answers must match a brute force and the analytic shapes, every buffer of
 * the triple buffer must be current after a publish, filters must exclude exactly what they name,
 * a reader thread must only ever see whole publishes, and a snapshot at its peak size must publish
 * without allocating. */
#include "test_query_snapshot_fixture.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "gyre/math.h"
#include "query_snapshot.h"

/* Analytic checks: distances and fractions to 1e-9 (double rounding over a few operations),
 * normals to 1e-9. */
#define TOL 1e-9

static gy_quat rnd_quat(gy_test_rng *r)
{
    gy_quat q = {gy_test_rnd_in(r, -1, 1), gy_test_rnd_in(r, -1, 1), gy_test_rnd_in(r, -1, 1),
                 gy_test_rnd_in(r, -1, 1)};
    return gy_quat_normalize(q);
}

static gy_pose pose_at(gy_vec3 p, gy_quat q)
{
    gy_pose t = {p, q};
    return t;
}

static gy_snapshot_entry sphere_entry(gy_vec3 c, double r, uint32_t attachment, gy_motion_type m)
{
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_SPHERE;
    e.shape.radius = r;
    e.pose.position = c;
    e.body.generation = attachment;
    e.body.index = attachment + 1000u;
    e.motion = m;
    return e;
}

static gy_snapshot_entry box_entry(gy_pose pose, gy_vec3 size, uint32_t attachment,
                                   gy_motion_type m)
{
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_BOX;
    e.shape.box_size = size;
    e.pose = pose;
    e.body.generation = attachment;
    e.body.index = attachment + 1000u;
    e.motion = m;
    return e;
}

/* Closest hit, or false. */
static bool cast(const gy_snapshot_view *v, gy_vec3 o, gy_vec3 d, const gy_snapshot_filter *f,
                 gy_snapshot_hit *hit)
{
    uint32_t n = 99;
    assert_result(gy_snapshot_view_raycast(v, o, d, f, GY_COLLECT_CLOSEST, hit, 1, &n), GY_OK);
    assert_true(n <= 1);
    return n == 1;
}

static uint32_t overlap_count(const gy_snapshot_view *v, const gy_shape *s, gy_pose p,
                              const gy_snapshot_filter *f)
{
    gy_snapshot_hit hits[64];
    uint32_t n = 0;
    assert_result(gy_snapshot_view_overlap(v, s, NULL, p, f, GY_COLLECT_ALL, hits, 64, &n), GY_OK);
    return n;
}

/* ---- an independent reference for spheres and oriented boxes -------------------------------- */

typedef struct ref_body {
    bool is_box;
    gy_pose pose;
    double r;     /* sphere */
    gy_vec3 half; /* box */
} ref_body;

/* Entry fraction of o + t·d into the body, -1 for a miss or a start inside. */
static double ref_ray(const ref_body *b, gy_vec3 o, gy_vec3 d)
{
    if (!b->is_box) {
        gy_vec3 m = gy_v3_sub(o, b->pose.position);
        double a = gy_v3_dot(d, d), bb = gy_v3_dot(m, d), c = gy_v3_dot(m, m) - b->r * b->r;
        if (c < 0.0 || bb > 0.0 || bb * bb - a * c < 0.0)
            return -1.0;
        double t = (-bb - sqrt(bb * bb - a * c)) / a;
        return t <= 1.0 ? t : -1.0;
    }
    gy_quat inv = gy_quat_conj(b->pose.rotation);
    gy_vec3 lo = gy_quat_rotate(inv, gy_v3_sub(o, b->pose.position)), ld = gy_quat_rotate(inv, d);
    double oo[3] = {lo.x, lo.y, lo.z}, dd[3] = {ld.x, ld.y, ld.z},
           h[3] = {b->half.x, b->half.y, b->half.z};
    double t0 = -INFINITY, t1 = INFINITY;
    for (int i = 0; i < 3; i++) {
        double a = (-h[i] - oo[i]) / dd[i], c = (h[i] - oo[i]) / dd[i];
        t0 = fmax(t0, fmin(a, c));
        t1 = fmin(t1, fmax(a, c));
    }
    return (t0 <= t1 && t0 >= 0.0 && t0 <= 1.0) ? t0 : -1.0;
}

typedef struct ref_scene {
    uint32_t n;
    ref_body *b;
} ref_scene;

static void ref_set(gy_query_snapshot *qs, ref_scene *s, uint32_t i)
{
    const ref_body *b = &s->b[i];
    gy_motion_type m = (i % 2) ? GY_MOTION_DYNAMIC : GY_MOTION_STATIC;
    gy_snapshot_entry e = b->is_box ? box_entry(b->pose, gy_v3_scale(b->half, 2.0), i + 1, m)
                                    : sphere_entry(b->pose.position, b->r, i + 1, m);
    assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
}

static void ref_random(ref_body *b, gy_test_rng *r)
{
    b->is_box = gy_test_rnd(r) < 0.5;
    b->pose = pose_at(gy_test_rnd_vec(r, -60.0, 60.0), rnd_quat(r));
    b->r = gy_test_rnd_in(r, 0.3, 3.0);
    b->half = gy_test_rnd_vec(r, 0.2, 2.5);
}

/* n random bodies, each set into qs in its slot (free s.b with test_free). */
static ref_scene ref_scene_random(gy_query_snapshot *qs, uint32_t n, gy_test_rng *r)
{
    ref_scene s = {n, test_malloc(n * sizeof(ref_body))};
    for (uint32_t i = 0; i < n; i++) {
        ref_random(&s.b[i], r);
        ref_set(qs, &s, i);
    }
    return s;
}

static void ref_compare(const gy_snapshot_view *v, const ref_scene *s, gy_test_rng *r, int rays)
{
    int hits = 0;
    for (int k = 0; k < rays; k++) {
        /* from anywhere around the scene towards somewhere inside it, and on past it */
        gy_vec3 o = gy_test_rnd_vec(r, -80.0, 80.0), target = gy_test_rnd_vec(r, -40.0, 40.0);
        gy_vec3 d = gy_v3_scale(gy_v3_sub(target, o), 2.0);
        uint32_t want = UINT32_MAX;
        double want_t = 2.0;
        for (uint32_t i = 0; i < s->n; i++) {
            double t = ref_ray(&s->b[i], o, d);
            if (t >= 0.0 && t < want_t) {
                want_t = t;
                want = i;
            }
        }
        gy_snapshot_hit h;
        bool got = cast(v, o, d, NULL, &h);
        assert_int_equal(got, want != UINT32_MAX);
        if (got) {
            hits++;
            assert_int_equal(h.slot, want);
            assert_int_equal(h.body.generation, want + 1);
            assert_int_equal(h.body.index, want + 1001);
            assert_near(h.fraction, want_t, 1e-9);
            assert_near(h.distance, want_t * gy_v3_len(d), 1e-7);
        }
    }
    assert_true(hits > rays / 4);
}

static void test_query_snapshot_raycast_matches_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {0x1234567887654321ull};
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    ref_scene s = ref_scene_random(qs, 3000, &r);
    ref_compare(qfx_publish_read(qs, 1), &s, &r, 2000);
    gy_query_snapshot_destroy(qs);
    test_free(s.b);
}

static void test_query_snapshot_refit_after_moves_matches_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {0xabcdef};
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    ref_scene s = ref_scene_random(qs, 2000, &r);
    qfx_publish_read(qs, 1);
    gy_query_snapshot_stats before, after;
    gy_query_snapshot_get_stats(qs, &before);
    for (uint64_t tick = 2; tick < 8; tick++) {
        for (uint32_t i = 0; i < s.n; i++) {
            if (gy_test_rnd(&r) < 0.3) {
                s.b[i].pose = pose_at(
                    gy_v3_add(s.b[i].pose.position, gy_test_rnd_vec(&r, -8.0, 8.0)), rnd_quat(&r));
                assert_result(gy_query_snapshot_move(qs, i, s.b[i].pose), GY_OK);
            }
        }
        ref_compare(qfx_publish_read(qs, tick), &s, &r, 400);
    }
    /* Moves alone are refits: neither tree was rebuilt. */
    gy_query_snapshot_get_stats(qs, &after);
    assert_int_equal(after.static_rebuilds, before.static_rebuilds);
    assert_int_equal(after.moving_rebuilds, before.moving_rebuilds);
    assert_true(after.nodes_refit > before.nodes_refit);
    gy_query_snapshot_destroy(qs);
    test_free(s.b);
}

/* Every shape type at a random pose: CLOSEST must be the nearest of ALL (which visits every
 * entry the ray's bounds test lets through, without pruning). */
static void test_query_snapshot_closest_is_nearest_of_all(void **state)
{
    (void)state;
    gy_test_rng r = {2024};
    gy_vec3 cube[8];
    for (int i = 0; i < 8; i++)
        cube[i] = gy_v3(i & 1 ? 0.8 : -0.8, i & 2 ? 0.5 : -0.5, i & 4 ? 1.1 : -1.1);
    gy_hull_def hd = {cube, 8};
    gy_vec3 quad[4] = {{-2, 0, -2}, {2, 0, -2}, {2, 0, 2}, {-2, 0, 2}};
    uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    gy_mesh_def md = {quad, 4, idx, 6};
    gy_snapshot_geometry *hull, *mesh;
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &hull), GY_OK);
    assert_result(gy_snapshot_geometry_create_mesh(NULL, &md, &mesh), GY_OK);
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < 1500; i++) {
        gy_snapshot_entry e = gy_default_snapshot_entry();
        e.pose = pose_at(gy_test_rnd_vec(&r, -40, 40), rnd_quat(&r));
        e.body.generation = i + 1;
        e.motion = (gy_motion_type)(i % 3);
        e.shape.type = (gy_shape_type)(i % 7);
        e.shape.radius = gy_test_rnd_in(&r, 0.2, 1.0);
        e.shape.height = e.shape.radius * 2.0 + gy_test_rnd_in(&r, 0.1, 2.0);
        e.shape.box_size = gy_test_rnd_vec(&r, 0.3, 3.0);
        if (e.shape.type == GY_SHAPE_PLANE) {
            /* a few far-off floors and walls, so they do not hide everything */
            e.shape.normal = gy_test_rnd_vec(&r, -1, 1);
            e.shape.offset = -70.0 * gy_v3_len(e.shape.normal);
            e.motion = GY_MOTION_STATIC;
            if (i > 300)
                e.shape.type = GY_SHAPE_SPHERE;
        }
        if (e.shape.type == GY_SHAPE_HULL)
            e.geometry = hull;
        if (e.shape.type == GY_SHAPE_MESH) {
            e.geometry = mesh;
            e.motion = GY_MOTION_STATIC;
        }
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    const gy_snapshot_view *v = qfx_publish_read(qs, 5);
    gy_snapshot_hit all[2048], best;
    int hits = 0;
    for (int k = 0; k < 1000; k++) {
        gy_vec3 o = gy_test_rnd_vec(&r, -50, 50),
                d = gy_v3_scale(gy_test_rnd_vec(&r, -1, 1), 120.0);
        uint32_t n;
        assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_ALL, all, 2048, &n),
                      GY_OK);
        assert_true(n < 2048);
        bool got = cast(v, o, d, NULL, &best);
        assert_int_equal(got, n > 0);
        if (!got)
            continue;
        hits++;
        uint32_t m = 0;
        for (uint32_t i = 1; i < n; i++)
            if (all[i].fraction < all[m].fraction)
                m = i;
        assert_near(best.fraction, all[m].fraction, 0.0);
        assert_int_equal(best.slot, all[m].slot);
        /* Every hit point lies on the ray and its normal is a unit vector against the ray. */
        for (uint32_t i = 0; i < n; i++) {
            gy_vec3 p = gy_v3_mad(o, d, all[i].fraction);
            assert_near(gy_v3_len(gy_v3_sub(p, all[i].point)), 0.0, 1e-9);
            assert_near(gy_v3_len(all[i].normal), 1.0, 1e-9);
            assert_true(gy_v3_dot(all[i].normal, d) <= 1e-9);
        }
    }
    assert_true(hits > 300);
    gy_query_snapshot_destroy(qs);
    gy_snapshot_geometry_release(hull);
    gy_snapshot_geometry_release(mesh);
}

static void test_query_snapshot_rebuilds_on_add_and_remove(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < 100; i++) {
        gy_snapshot_entry e = sphere_entry(gy_v3(3.0 * i, 0, 0), 1.0, i + 1,
                                           i < 50 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    qfx_publish_read(qs, 1);
    gy_query_snapshot_stats s0, s1;
    gy_query_snapshot_get_stats(qs, &s0);
    assert_int_equal(s0.static_entries, 50);
    assert_int_equal(s0.moving_entries, 50);
    assert_int_equal(s0.static_rebuilds, 1);
    assert_int_equal(s0.moving_rebuilds, 1);

    /* A new dynamic entry far out: only the moving tree is rebuilt, and the new entry answers. */
    gy_snapshot_entry far = sphere_entry(gy_v3(0, 50, 0), 1.0, 500, GY_MOTION_DYNAMIC);
    assert_result(gy_query_snapshot_set(qs, 200, &far), GY_OK);
    const gy_snapshot_view *v = qfx_publish_read(qs, 2);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.static_rebuilds, 1);
    assert_int_equal(s1.moving_rebuilds, 2);
    gy_snapshot_hit h;
    assert_true(cast(v, gy_v3(0, 60, 0), gy_v3(0, -20, 0), NULL, &h));
    assert_int_equal(h.body.generation, 500);
    assert_near(h.point.y, 51.0, TOL);

    /* Removing a static: only the static tree is rebuilt, and the ray passes through its place. */
    assert_result(gy_query_snapshot_remove(qs, 0), GY_OK);
    v = qfx_publish_read(qs, 3);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.static_rebuilds, 2);
    assert_int_equal(s1.moving_rebuilds, 2);
    assert_int_equal(s1.static_entries, 49);
    assert_true(cast(v, gy_v3(-10, 0, 0), gy_v3(20, 0, 0), NULL, &h));
    assert_int_equal(h.body.generation, 2);
    assert_near(h.point.x, 2.0, TOL);
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(v, 0, &info), GY_ERR_STALE_HANDLE);

    /* Changing an entry's motion type moves it between the trees (both rebuilt). */
    gy_snapshot_entry e = sphere_entry(gy_v3(3.0, 0, 0), 1.0, 2, GY_MOTION_KINEMATIC);
    assert_result(gy_query_snapshot_set(qs, 1, &e), GY_OK);
    v = qfx_publish_read(qs, 4);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.static_rebuilds, 3);
    assert_int_equal(s1.moving_rebuilds, 3);
    gy_snapshot_filter f = gy_default_snapshot_filter();
    f.motion_types = GY_MOTION_BIT(GY_MOTION_KINEMATIC);
    assert_true(cast(v, gy_v3(-10, 0, 0), gy_v3(100, 0, 0), &f, &h));
    assert_int_equal(h.slot, 1);
    assert_result(gy_snapshot_view_get(v, 1, &info), GY_OK);
    assert_int_equal(info.entry.motion, GY_MOTION_KINEMATIC);
    assert_near(info.bounds_min.x, 2.0, 1e-6);
    assert_near(info.bounds_max.x, 4.0, 1e-6);
    assert_true(info.bounds_min.x <= 2.0 && info.bounds_max.x >= 4.0);
    gy_query_snapshot_destroy(qs);
}

static void test_query_snapshot_rebuilds_every_64th_publish(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < 40; i++) {
        gy_snapshot_entry e = sphere_entry(gy_v3(3.0 * i, 0, 0), 1.0, i + 1,
                                           i < 20 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    gy_query_snapshot_stats s;
    for (uint64_t p = 1; p <= 200; p++) {
        /* One dynamic body moves every publish; the statics never move. */
        gy_pose pose = pose_at(gy_v3(60.0, sin((double)p), 0), gy_quat_identity());
        if (p > 1)
            assert_result(gy_query_snapshot_move(qs, 25, pose), GY_OK);
        qfx_publish_read(qs, p);
        gy_query_snapshot_get_stats(qs, &s);
        assert_int_equal(s.publishes, p);
        assert_int_equal(s.moving_rebuilds, 1 + p / 64);
        assert_int_equal(s.static_rebuilds, 1);
    }
    /* A static that moves is refit, then rebuilt at the next 64th publish only. */
    gy_pose pose = pose_at(gy_v3(0, 5, 0), gy_quat_identity());
    assert_result(gy_query_snapshot_move(qs, 3, pose), GY_OK);
    for (uint64_t p = 201; p <= 256; p++) {
        qfx_publish_read(qs, p);
        gy_query_snapshot_get_stats(qs, &s);
        assert_int_equal(s.static_rebuilds, p < 256 ? 1 : 2);
    }
    gy_snapshot_hit h;
    const gy_snapshot_view *v = qfx_publish_read(qs, 257);
    assert_true(cast(v, gy_v3(0, 10, 0), gy_v3(0, -10, 0), NULL, &h));
    assert_int_equal(h.slot, 3);
    assert_near(h.point.y, 6.0, TOL);
    gy_query_snapshot_destroy(qs);
}

static void test_query_snapshot_filter_excludes_each_field(void **state)
{
    (void)state;
    /* Five spheres in a row along +x, each with one distinguishing property. */
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry e[5];
    for (uint32_t i = 0; i < 5; i++)
        e[i] = sphere_entry(gy_v3(5.0 * (i + 1), 0, 0), 1.0, 10 + i, GY_MOTION_DYNAMIC);
    e[0].category = 2u;                /* excluded by mask */
    e[1].motion = GY_MOTION_STATIC;    /* excluded by motion types */
    e[2].is_sensor = true;             /* excluded unless sensors are included */
    e[3].motion = GY_MOTION_KINEMATIC; /* excluded by ignore_attachment (13) */
    for (uint32_t i = 0; i < 5; i++)
        assert_result(gy_query_snapshot_set(qs, i, &e[i]), GY_OK);
    const gy_snapshot_view *v = qfx_publish_read(qs, 9);
    gy_vec3 o = gy_v3(0, 0, 0), d = gy_v3(100, 0, 0);
    gy_snapshot_hit h;

    gy_snapshot_filter f = gy_default_snapshot_filter();
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation,
                     10); /* sensors out by default, so not 12 — but 10 is first */

    f.mask = ~2u;
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation, 11);

    f.motion_types = GY_MOTION_BIT(GY_MOTION_DYNAMIC) | GY_MOTION_BIT(GY_MOTION_KINEMATIC);
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation, 13); /* 12 is a sensor */

    f.include_sensors = true;
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation, 12);

    f.include_sensors = false;
    f.ignore_body.generation = 13;
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation, 14);

    f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC);
    assert_true(cast(v, o, d, &f, &h));
    assert_int_equal(h.body.generation, 11);
    f.mask = 2u; /* the only category-2 sphere is dynamic */
    assert_false(cast(v, o, d, &f, &h));

    /* The same filter applies to overlaps. */
    gy_shape big = {.type = GY_SHAPE_SPHERE, .radius = 100.0};
    gy_pose at = pose_at(gy_v3(15, 0, 0), gy_quat_identity());
    gy_snapshot_filter all = gy_default_snapshot_filter();
    all.include_sensors = true;
    assert_int_equal(overlap_count(v, &big, at, &all), 5);
    assert_int_equal(overlap_count(v, &big, at, NULL), 4);
    all.mask = 2u;
    assert_int_equal(overlap_count(v, &big, at, &all), 1);
    all.mask = UINT32_MAX;
    all.ignore_body.generation = 14;
    assert_int_equal(overlap_count(v, &big, at, &all), 4);
    all.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC);
    assert_int_equal(overlap_count(v, &big, at, &all), 1);
    gy_query_snapshot_destroy(qs);
}

static void test_query_snapshot_skips_callers_own_body(void **state)
{
    (void)state;
    /* A character (attachment 7) made of a capsule and a sphere "backpack" behind it, facing a
     * wall. A ray from its eye backwards through the backpack hits the backpack unless the
     * character's own body is skipped, then the wall behind. */
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry body = gy_default_snapshot_entry();
    body.shape.type = GY_SHAPE_CAPSULE;
    body.shape.radius = 0.4;
    body.shape.height = 1.8;
    body.body.generation = 7;
    gy_snapshot_entry pack = sphere_entry(gy_v3(-0.7, 0.3, 0), 0.3, 7, GY_MOTION_DYNAMIC);
    gy_snapshot_entry wall = box_entry(pose_at(gy_v3(-5, 0, 0), gy_quat_identity()), gy_v3(1, 4, 4),
                                       8, GY_MOTION_STATIC);
    assert_result(gy_query_snapshot_set(qs, 0, &body), GY_OK);
    assert_result(gy_query_snapshot_set(qs, 1, &pack), GY_OK);
    assert_result(gy_query_snapshot_set(qs, 2, &wall), GY_OK);
    const gy_snapshot_view *v = qfx_publish_read(qs, 1);
    gy_vec3 eye = gy_v3(-0.38, 0.3, 0); /* inside the capsule, just short of its back */
    gy_snapshot_hit h;
    assert_true(cast(v, eye, gy_v3(-10, 0, 0), NULL, &h));
    assert_int_equal(h.slot, 1);
    gy_snapshot_filter f = gy_default_snapshot_filter();
    f.ignore_body.generation = 7;
    assert_true(cast(v, eye, gy_v3(-10, 0, 0), &f, &h));
    assert_int_equal(h.slot, 2);
    assert_near(h.point.x, -4.5, TOL);
    assert_near(h.distance, 4.12, TOL);
    gy_shape probe = {.type = GY_SHAPE_SPHERE, .radius = 0.5};
    gy_pose at = pose_at(gy_v3(0, 0, 0), gy_quat_identity());
    assert_int_equal(overlap_count(v, &probe, at, NULL), 2);
    assert_int_equal(overlap_count(v, &probe, at, &f), 0);
    gy_query_snapshot_destroy(qs);
}

/* ---- exact shapes -----------------------------------------------------------------------------
 */

typedef struct shapes {
    gy_query_snapshot *qs;
    gy_snapshot_geometry *tetra, *quad;
} shapes;

/* One of each shape, far apart, in slots 0..6 in gy_shape_type order. */
static void shapes_init(shapes *s)
{
    s->qs = qfx_make_snapshot(NULL);
    gy_vec3 tp[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def hd = {tp, 4};
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &s->tetra), GY_OK);
    gy_vec3 qv[4] = {{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
    uint32_t qi[6] = {0, 1, 2, 0, 2, 3};
    gy_mesh_def md = {qv, 4, qi, 6};
    assert_result(gy_snapshot_geometry_create_mesh(NULL, &md, &s->quad), GY_OK);

    gy_snapshot_entry e = sphere_entry(gy_v3(0, 0, 0), 1.0, 1, GY_MOTION_DYNAMIC);
    assert_result(gy_query_snapshot_set(s->qs, 0, &e), GY_OK);
    /* 2 × 4 × 6 box turned 90° about Y at x = 100: world half extents 3, 2, 1. */
    e = box_entry(pose_at(gy_v3(100, 0, 0), gy_quat_axis_angle(gy_v3(0, 1, 0), GY_PI / 2)),
                  gy_v3(2, 4, 6), 2, GY_MOTION_STATIC);
    assert_result(gy_query_snapshot_set(s->qs, 1, &e), GY_OK);
    e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_CAPSULE;
    e.shape.radius = 0.5;
    e.shape.height = 3.0; /* core segment y in [-1, 1] */
    e.pose.position = gy_v3(200, 0, 0);
    e.body.generation = 3;
    assert_result(gy_query_snapshot_set(s->qs, 2, &e), GY_OK);
    e.shape.type = GY_SHAPE_CYLINDER;
    e.shape.radius = 1.0;
    e.shape.height = 2.0;
    e.pose.position = gy_v3(300, 0, 0);
    e.body.generation = 4;
    assert_result(gy_query_snapshot_set(s->qs, 3, &e), GY_OK);
    e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_PLANE;
    e.shape.normal = gy_v3(0, 2, 0); /* normalised by the snapshot: y = -50 */
    e.shape.offset = -100.0;
    e.motion = GY_MOTION_STATIC;
    e.body.generation = 5;
    assert_result(gy_query_snapshot_set(s->qs, 4, &e), GY_OK);
    e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_HULL;
    e.geometry = s->tetra;
    e.pose.position = gy_v3(400, 0, 0);
    e.body.generation = 6;
    assert_result(gy_query_snapshot_set(s->qs, 5, &e), GY_OK);
    e.shape.type = GY_SHAPE_MESH;
    e.geometry = s->quad;
    e.pose.position = gy_v3(500, 2, 0);
    e.motion = GY_MOTION_STATIC;
    e.body.generation = 7;
    assert_result(gy_query_snapshot_set(s->qs, 6, &e), GY_OK);
}

static void shapes_fini(shapes *s)
{
    gy_query_snapshot_destroy(s->qs);
    gy_snapshot_geometry_release(s->tetra);
    gy_snapshot_geometry_release(s->quad);
}

static void expect_hit(const gy_snapshot_view *v, gy_vec3 o, gy_vec3 d, uint32_t slot,
                       double fraction, gy_vec3 normal)
{
    gy_snapshot_hit h;
    assert_true(cast(v, o, d, NULL, &h));
    assert_int_equal(h.slot, slot);
    assert_near(h.fraction, fraction, TOL);
    assert_near(h.distance, fraction * gy_v3_len(d), TOL);
    gy_vec3 p = gy_v3_mad(o, d, fraction);
    assert_near(h.point.x, p.x, TOL);
    assert_near(h.point.y, p.y, TOL);
    assert_near(h.point.z, p.z, TOL);
    assert_near(h.normal.x, normal.x, TOL);
    assert_near(h.normal.y, normal.y, TOL);
    assert_near(h.normal.z, normal.z, TOL);
}

static void expect_miss(const gy_snapshot_view *v, gy_vec3 o, gy_vec3 d)
{
    gy_snapshot_hit h;
    assert_false(cast(v, o, d, NULL, &h));
}

static void test_snapshot_view_raycast_matches_analytic_shapes(void **state)
{
    (void)state;
    shapes s;
    shapes_init(&s);
    const gy_snapshot_view *v = qfx_publish_read(s.qs, 3);
    double c = sqrt(0.75), r3 = 1.0 / sqrt(3.0);

    /* sphere r 1: enters at x = -sqrt(1 - 0.5²) */
    expect_hit(v, gy_v3(-5, 0.5, 0), gy_v3(10, 0, 0), 0, (5 - c) / 10, gy_v3(-c, 0.5, 0));
    expect_miss(v, gy_v3(0.2, 0, 0), gy_v3(10, 0, 0)); /* starts inside */
    expect_miss(v, gy_v3(-5, 1.01, 0), gy_v3(10, 0, 0));

    /* turned box: world x half extent 3, y 2 */
    expect_hit(v, gy_v3(90, 0, 0), gy_v3(20, 0, 0), 1, 7.0 / 20, gy_v3(-1, 0, 0));
    expect_hit(v, gy_v3(102, 10, 0.5), gy_v3(0, -20, 0), 1, 8.0 / 20, gy_v3(0, 1, 0));
    expect_miss(v, gy_v3(100, 10, 1.01), gy_v3(0, -20, 0));

    /* capsule r 0.5, core y in [-1, 1]: side, top cap, cap sphere off-axis */
    expect_hit(v, gy_v3(195, 0.3, 0), gy_v3(10, 0, 0), 2, 4.5 / 10, gy_v3(-1, 0, 0));
    expect_hit(v, gy_v3(200, 5, 0), gy_v3(0, -10, 0), 2, 3.5 / 10, gy_v3(0, 1, 0));
    expect_hit(v, gy_v3(195, 1.3, 0), gy_v3(10, 0, 0), 2, 4.6 / 10, gy_v3(-0.8, 0.6, 0));
    expect_miss(v, gy_v3(195, 1.51, 0), gy_v3(10, 0, 0));

    /* cylinder r 1, y in [-1, 1]: cap, side, diagonal onto the side; no rounded caps */
    expect_hit(v, gy_v3(300.5, 5, 0), gy_v3(0, -10, 0), 3, 0.4, gy_v3(0, 1, 0));
    expect_hit(v, gy_v3(295, 0.5, 0), gy_v3(10, 0, 0), 3, 0.4, gy_v3(-1, 0, 0));
    expect_hit(v, gy_v3(297, 2.5, 0), gy_v3(10, -10, 0), 3, 0.2, gy_v3(-1, 0, 0));
    expect_miss(v, gy_v3(295, 1.2, 0), gy_v3(10, 0, 0));
    expect_miss(v, gy_v3(299.5, 1.1, 0.9), gy_v3(0, -0.2, 0)); /* stops short of the cap */

    /* plane y = -50, solid below */
    expect_hit(v, gy_v3(3, -45, 2), gy_v3(0, -10, 0), 4, 0.5, gy_v3(0, 1, 0));
    expect_miss(v, gy_v3(3, -55, 2), gy_v3(0, -10, 0)); /* starts below */
    expect_miss(v, gy_v3(3, -55, 2), gy_v3(0, 10, 0));
    expect_miss(v, gy_v3(3, -45, 2), gy_v3(0, 10, 0));

    /* tetrahedron hull: through the slanted face x + y + z = 1 */
    expect_hit(v, gy_v3(400.2, 0.2, 5), gy_v3(0, 0, -10), 5, 0.44, gy_v3(r3, r3, r3));
    expect_hit(v, gy_v3(400.2, -3, 0.2), gy_v3(0, 10, 0), 5, 0.3, gy_v3(0, -1, 0));
    expect_miss(v, gy_v3(400.6, 0.6, 5), gy_v3(0, 0, -10));

    /* mesh quad at y = 2, two-sided, with its triangle index */
    gy_snapshot_hit h;
    expect_hit(v, gy_v3(500.5, 5, 0.25), gy_v3(0, -10, 0), 6, 0.3, gy_v3(0, 1, 0));
    assert_true(cast(v, gy_v3(500.5, 5, 0.25), gy_v3(0, -10, 0), NULL, &h));
    assert_int_equal(h.triangle, 0);
    expect_hit(v, gy_v3(499.5, -3, 0.25), gy_v3(0, 10, 0), 6, 0.5, gy_v3(0, -1, 0));
    assert_true(cast(v, gy_v3(499.5, -3, 0.25), gy_v3(0, 10, 0), NULL, &h));
    assert_int_equal(h.triangle, 1);
    expect_miss(v, gy_v3(501.5, 5, 0), gy_v3(0, -10, 0));

    /* non-mesh hits report no triangle, and every hit carries the tick */
    assert_true(cast(v, gy_v3(-5, 0, 0), gy_v3(10, 0, 0), NULL, &h));
    assert_int_equal(h.triangle, -1);
    assert_int_equal(h.tick, 3);
    assert_int_equal(h.body.generation, 1);
    shapes_fini(&s);
}

/* `query` at base ± a small margin along `dir`: overlapping inside, not outside. */
static void expect_touch_at(const gy_snapshot_view *v, const gy_shape *query, gy_quat rot,
                            gy_vec3 contact_center, gy_vec3 outward, uint32_t slot,
                            int32_t triangle)
{
    const double margin = 0.01;
    gy_snapshot_hit hits[8];
    uint32_t n = 0;
    gy_pose in = pose_at(gy_v3_mad(contact_center, outward, -margin), rot);
    gy_pose out = pose_at(gy_v3_mad(contact_center, outward, margin), rot);
    assert_result(gy_snapshot_view_overlap(v, query, NULL, in, NULL, GY_COLLECT_ALL, hits, 8, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hits[0].slot, slot);
    assert_int_equal(hits[0].triangle, triangle);
    assert_int_equal(hits[0].tick, gy_snapshot_view_tick(v));
    assert_result(gy_snapshot_view_overlap(v, query, NULL, out, NULL, GY_COLLECT_ALL, hits, 8, &n),
                  GY_OK);
    assert_int_equal(n, 0);
}

static void test_snapshot_view_overlap_matches_analytic_shapes(void **state)
{
    (void)state;
    shapes s;
    shapes_init(&s);
    const gy_snapshot_view *v = qfx_publish_read(s.qs, 4);
    gy_quat id = gy_quat_identity();
    gy_vec3 x = gy_v3(1, 0, 0), y = gy_v3(0, 1, 0), ny = gy_v3(0, -1, 0);
    gy_vec3 diag = gy_v3_normalize(gy_v3(1, 1, 0)), n3 = gy_v3_normalize(gy_v3(1, 1, 1));
    gy_shape ball = {.type = GY_SHAPE_SPHERE, .radius = 0.5};
    gy_shape cube = {.type = GY_SHAPE_BOX, .box_size = {1, 1, 1}};
    gy_shape rod = {.type = GY_SHAPE_CAPSULE, .radius = 0.25, .height = 2.5};

    /* A ball of radius 0.5 touching each shape. Centres where the surfaces just meet: */
    expect_touch_at(v, &ball, id, gy_v3(1.5, 0, 0), x, 0, -1);   /* sphere */
    expect_touch_at(v, &ball, id, gy_v3(103.5, 0, 0), x, 1, -1); /* box face */
    expect_touch_at(v, &ball, id, gy_v3_mad(gy_v3(103, 2, 0), diag, 0.5), diag, 1, -1); /* edge */
    expect_touch_at(v, &ball, id, gy_v3(201, 0.5, 0), x, 2, -1);   /* capsule side */
    expect_touch_at(v, &ball, id, gy_v3(200, 2, 0), y, 2, -1);     /* capsule cap */
    expect_touch_at(v, &ball, id, gy_v3(301.5, 0, 0), x, 3, -1);   /* cylinder side */
    expect_touch_at(v, &ball, id, gy_v3(300.3, 1.5, 0), y, 3, -1); /* cylinder cap */
    expect_touch_at(v, &ball, id, gy_v3_mad(gy_v3(301, 1, 0), diag, 0.5), diag, 3, -1); /* rim */
    expect_touch_at(v, &ball, id, gy_v3(7, -49.5, 3), y, 4, -1);                        /* plane */
    expect_touch_at(v, &ball, id, gy_v3_mad(gy_v3(400 + 1.0 / 3, 1.0 / 3, 1.0 / 3), n3, 0.5), n3, 5,
                    -1);                                              /* hull face */
    expect_touch_at(v, &ball, id, gy_v3(500.5, 2.5, 0.25), y, 6, 0);  /* mesh, tri 0 */
    expect_touch_at(v, &ball, id, gy_v3(499.5, 1.5, 0.25), ny, 6, 1); /* tri 1, below */

    /* A unit cube, axis-aligned unless said otherwise. */
    gy_quat yaw45 = gy_quat_axis_angle(y, GY_PI / 4),
            roll45 = gy_quat_axis_angle(gy_v3(0, 0, 1), GY_PI / 4);
    expect_touch_at(v, &cube, id, gy_v3(1.5, 0, 0), x, 0, -1);                 /* sphere */
    expect_touch_at(v, &cube, yaw45, gy_v3(103 + sqrt(0.5), 0, 0), x, 1, -1);  /* box, by corner */
    expect_touch_at(v, &cube, id, gy_v3(201, 0.3, 0), x, 2, -1);               /* capsule side */
    expect_touch_at(v, &cube, id, gy_v3(301.5, 0, 0), x, 3, -1);               /* cylinder side */
    expect_touch_at(v, &cube, id, gy_v3(300, 1.5, 0), y, 3, -1);               /* cylinder cap */
    expect_touch_at(v, &cube, roll45, gy_v3(7, -50 + sqrt(0.5), 3), y, 4, -1); /* plane, by edge */
    expect_touch_at(v, &cube, id, gy_v3(399.5, 0.3, 0.3), gy_v3(-1, 0, 0), 5, -1); /* hull */
    expect_touch_at(v, &cube, id, gy_v3(500.5, 2.5, 0.25), y, 6, 0);               /* mesh */

    /* A rod (capsule r 0.25) lying along x, touching the sphere from above, the box's top. */
    gy_quat lying = gy_quat_axis_angle(gy_v3(0, 0, 1), GY_PI / 2);
    expect_touch_at(v, &rod, lying, gy_v3(0, 1.25, 0), y, 0, -1);
    expect_touch_at(v, &rod, lying, gy_v3(100.5, 2.25, 0), y, 1, -1);
    /* ANY stops after one; a zero capacity writes nothing. */
    gy_shape huge = {.type = GY_SHAPE_SPHERE, .radius = 1000};
    gy_snapshot_hit hits[8];
    uint32_t n = 0;
    assert_result(gy_snapshot_view_overlap(v, &huge, NULL, pose_at(gy_v3(250, 0, 0), id), NULL,
                                           GY_COLLECT_ANY, hits, 8, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_result(gy_snapshot_view_overlap(v, &huge, NULL, pose_at(gy_v3(250, 0, 0), id), NULL,
                                           GY_COLLECT_ALL, hits, 0, &n),
                  GY_OK);
    assert_int_equal(n, 0);
    assert_int_equal(overlap_count(v, &huge, pose_at(gy_v3(250, 0, 0), id), NULL), 7);
    shapes_fini(&s);
}

static void test_snapshot_view_raycast_collectors_respect_capacity(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < 20; i++) {
        gy_snapshot_entry e =
            sphere_entry(gy_v3(3.0 * (20 - i), 0, 0), 1.0, i + 1, GY_MOTION_STATIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    const gy_snapshot_view *v = qfx_publish_read(qs, 1);
    gy_snapshot_hit hits[8];
    memset(hits, 0xab, sizeof hits);
    uint32_t n = 0;
    gy_vec3 o = gy_v3(0, 0, 0), d = gy_v3(100, 0, 0);
    assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_ALL, hits, 5, &n), GY_OK);
    assert_int_equal(n, 5);
    for (int i = 5; i < 8; i++)
        assert_int_equal(hits[i].body.generation, 0xabababab); /* untouched past the capacity */
    assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_ALL, hits, 8, &n), GY_OK);
    assert_int_equal(n, 8);
    gy_snapshot_hit many[32];
    assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_ALL, many, 32, &n), GY_OK);
    assert_int_equal(n, 20);
    assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_ANY, hits, 8, &n), GY_OK);
    assert_int_equal(n, 1);
    assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_CLOSEST, hits, 8, &n), GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hits[0].body.generation, 20);
    assert_near(hits[0].distance, 2.0, TOL);
    /* A zero translation hits nothing. */
    assert_result(gy_snapshot_view_raycast(v, o, gy_v3(0, 0, 0), NULL, GY_COLLECT_ALL, hits, 8, &n),
                  GY_OK);
    assert_int_equal(n, 0);
    gy_query_snapshot_destroy(qs);
}

/* ---- buffers and threads ----------------------------------------------------------------------
 */

static void test_query_snapshot_no_stale_data_in_any_buffer(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    assert_null(gy_query_snapshot_acquire(qs));
    gy_snapshot_entry a = sphere_entry(gy_v3(0, 0, 0), 1.0, 1, GY_MOTION_DYNAMIC);
    gy_snapshot_entry other = sphere_entry(gy_v3(0, 100, 0), 1.0, 2, GY_MOTION_STATIC);
    assert_result(gy_query_snapshot_set(qs, 0, &a), GY_OK);
    assert_result(gy_query_snapshot_set(qs, 1, &other), GY_OK);
    qfx_publish_read(qs, 1);
    qfx_publish_read(qs, 2);
    qfx_publish_read(qs, 3); /* all three buffers now hold A */

    const gy_snapshot_view *seen[3] = {NULL, NULL, NULL};
    uint64_t tick = 4;
    gy_vec3 where = gy_v3(0, 0, 0);
    for (int phase = 0; phase < 3; phase++) {
        /* Move; then let the reader keep one buffer for a while (phase 1) so that buffer misses
         * several moves, and show that whichever buffer it gets later is current. */
        where = gy_v3(10.0 * (phase + 1), 0, 0);
        assert_result(gy_query_snapshot_move(qs, 0, pose_at(where, gy_quat_identity())), GY_OK);
        if (phase == 1) {
            for (int k = 0; k < 10; k++) {
                gy_vec3 w = gy_v3(10.0 * (phase + 1), 0.001 * k, 0);
                assert_result(gy_query_snapshot_move(qs, 0, pose_at(w, gy_quat_identity())), GY_OK);
                assert_result(gy_query_snapshot_publish(qs, tick++), GY_OK);
            }
        }
        for (int k = 0; k < 6; k++) {
            const gy_snapshot_view *v = qfx_publish_read(qs, tick++);
            for (int i = 0; i < 3; i++)
                if (seen[i] == v || seen[i] == NULL) {
                    seen[i] = v;
                    break;
                }
            gy_snapshot_entry_info info;
            assert_result(gy_snapshot_view_get(v, 0, &info), GY_OK);
            assert_near(info.entry.pose.position.x, where.x, 0.0);
            gy_snapshot_hit h;
            /* B answers where it is... */
            assert_true(cast(v, gy_v3(where.x, 5, 0), gy_v3(0, -10, 0), NULL, &h));
            assert_int_equal(h.slot, 0);
            assert_near(h.point.y, info.entry.pose.position.y + 1.0, TOL);
            /* ...and nothing answers where it was. */
            assert_false(cast(v, gy_v3(0, 5, 0), gy_v3(0, -10, 0), NULL, &h));
            assert_false(cast(v, gy_v3(where.x - 10, 5, 0), gy_v3(0, -10, 0), NULL, &h));
        }
    }
    assert_non_null(seen[2]); /* all three buffers were checked */
    gy_query_snapshot_destroy(qs);
}

enum { READER_BODIES = 128, WRITER_PUBLISHES = 3000 };

typedef struct reader_ctx {
    gy_query_snapshot *qs;
    uint64_t final_tick; /* atomic: 0 until the writer is done */
    uint64_t checks;
    uint64_t torn;  /* views where some entry did not describe the view's tick */
    uint64_t wrong; /* wrong ray answers */
    uint64_t backwards;
    uint64_t distinct_ticks;
} reader_ctx;

/* Every body i sits at x = 4 i, y = f(tick): a view is whole when all of them agree with its
 * tick. */
static double height_for(uint64_t tick)
{
    return 0.01 * (double)(tick % 1000);
}

static void *reader_main(void *arg)
{
    reader_ctx *c = arg;
    uint64_t last = 0;
    gy_test_rng r = {77};
    for (;;) {
        uint64_t final = __atomic_load_n(&c->final_tick, __ATOMIC_ACQUIRE);
        const gy_snapshot_view *v = gy_query_snapshot_acquire(c->qs);
        if (v == NULL)
            continue;
        uint64_t tick = gy_snapshot_view_tick(v);
        if (tick < last)
            c->backwards++;
        if (tick != last)
            c->distinct_ticks++;
        last = tick;
        double y = height_for(tick);
        for (uint32_t i = 0; i < READER_BODIES; i++) {
            gy_snapshot_entry_info info;
            if (gy_snapshot_view_get(v, i, &info) != GY_OK || info.entry.pose.position.y != y ||
                info.entry.body.generation != i + 1) {
                c->torn++;
                break;
            }
        }
        uint32_t i = (uint32_t)(gy_test_rnd(&r) * READER_BODIES);
        gy_snapshot_hit h;
        uint32_t n = 0;
        gy_snapshot_view_raycast(v, gy_v3(4.0 * i, 20, 0), gy_v3(0, -40, 0), NULL,
                                 GY_COLLECT_CLOSEST, &h, 1, &n);
        if (n != 1 || h.slot != i || h.tick != tick || fabs(h.point.y - (y + 0.5)) > 1e-9)
            c->wrong++;
        c->checks++;
        if (final != 0 && tick == final)
            return NULL;
    }
}

static void test_query_snapshot_reader_thread_sees_whole_publishes(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < READER_BODIES; i++) {
        gy_snapshot_entry e =
            box_entry(pose_at(gy_v3(4.0 * i, height_for(1), 0), gy_quat_identity()), gy_v3(1, 1, 1),
                      i + 1, i % 4 ? GY_MOTION_DYNAMIC : GY_MOTION_STATIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    assert_result(gy_query_snapshot_publish(qs, 1), GY_OK);
    reader_ctx c = {qs, 0, 0, 0, 0, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reader_main, &c), 0);
    for (uint64_t tick = 2; tick <= WRITER_PUBLISHES; tick++) {
        double y = height_for(tick);
        for (uint32_t i = 0; i < READER_BODIES; i++)
            assert_result(
                gy_query_snapshot_move(qs, i, pose_at(gy_v3(4.0 * i, y, 0), gy_quat_identity())),
                GY_OK);
        /* Membership churn far away from the rays: forces rebuilds and tree copies. */
        if (tick % 50 == 0) {
            gy_snapshot_entry e = sphere_entry(gy_v3(0, 0, 500), 1.0, 9999,
                                               tick % 100 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC);
            assert_result(gy_query_snapshot_set(qs, READER_BODIES, &e), GY_OK);
        } else if (tick % 50 == 25 && tick > 50) {
            assert_result(gy_query_snapshot_remove(qs, READER_BODIES), GY_OK);
        }
        assert_result(gy_query_snapshot_publish(qs, tick), GY_OK);
    }
    __atomic_store_n(&c.final_tick, (uint64_t)WRITER_PUBLISHES, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(c.checks > 0);
    assert_true(c.distinct_ticks > 1);
    assert_int_equal(c.torn, 0);
    assert_int_equal(c.wrong, 0);
    assert_int_equal(c.backwards, 0);
    gy_query_snapshot_destroy(qs);
}

/* ---- memory -----------------------------------------------------------------------------------
 */

/* A blob made from a built hull takes the hull rather than copying it: a NULL hull or out and a
 * malformed hull are refused with the hull still the caller's and unchanged; once the hull is
 * found valid it is the blob's, and a failed allocation frees it (nothing leaks either way). */
static void test_query_snapshot_built_hull_is_taken_or_refused_untouched(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_vec3 pts[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    gy_hull h, zero;
    memset(&zero, 0, sizeof zero);
    assert_result(gy_hull_build(&ta.base, pts, 5, &h), GY_OK);
    const gy_hull kept = h;
    gy_snapshot_geometry *g = NULL;
    assert_result(gy_snapshot_geometry_create_hull_built(&ta.base, &h, NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_memory_equal(&h, &kept, sizeof h);
    assert_result(gy_snapshot_geometry_create_hull_built(&ta.base, NULL, &g),
                  GY_ERR_INVALID_ARGUMENT);
    h.volume = NAN;
    assert_result(gy_snapshot_geometry_create_hull_built(&ta.base, &h, &g), GY_ERR_INVALID_MESH);
    h.volume = kept.volume;
    assert_memory_equal(&h, &kept, sizeof h);
    assert_null(g);

    ta.fail_at = ta.calls + 1u;
    assert_result(gy_snapshot_geometry_create_hull_built(&ta.base, &h, &g), GY_ERR_OUT_OF_MEMORY);
    assert_null(g);
    assert_memory_equal(&h, &zero, sizeof h);
    assert_int_equal(ta.live_blocks, 0);

    ta.fail_at = 0;
    assert_result(gy_hull_build(&ta.base, pts, 5, &h), GY_OK);
    assert_result(gy_snapshot_geometry_create_hull_built(&ta.base, &h, &g), GY_OK);
    assert_memory_equal(&h, &zero, sizeof h);
    assert_non_null(g);
    assert_int_equal(gy_snapshot_geometry_refs(g), 1);
    gy_snapshot_geometry_release(g);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_query_snapshot_steady_state_allocates_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_query_snapshot *qs = qfx_make_snapshot(&ta.base);
    gy_vec3 pts[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    gy_hull_def hd = {pts, 5};
    gy_snapshot_geometry *hull;
    assert_result(gy_snapshot_geometry_create_hull(&ta.base, &hd, &hull), GY_OK);
    enum { STATICS = 1000, MOVERS = 200 };
    gy_test_rng r = {5150};
    for (uint32_t i = 0; i < STATICS + MOVERS; i++) {
        gy_snapshot_entry e = sphere_entry(gy_test_rnd_vec(&r, -50, 50), 0.5, i + 1,
                                           i < STATICS ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC);
        if (i % 10 == 0) {
            e.shape.type = GY_SHAPE_HULL;
            e.geometry = hull;
        }
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t); /* every buffer reaches full size */
    uint64_t before = ta.allocs + ta.reallocs;
    for (uint64_t t = 4; t < 1004; t++) {
        for (uint32_t i = STATICS; i < STATICS + MOVERS; i++)
            assert_result(
                gy_query_snapshot_move(qs, i, pose_at(gy_test_rnd_vec(&r, -50, 50), rnd_quat(&r))),
                GY_OK);
        if (t % 37 == 0) { /* a body leaves and another takes its slot: rebuild, same size */
            uint32_t slot = STATICS + (uint32_t)(t % MOVERS);
            gy_snapshot_entry e =
                sphere_entry(gy_test_rnd_vec(&r, -50, 50), 0.7, 5000, GY_MOTION_KINEMATIC);
            assert_result(gy_query_snapshot_remove(qs, slot), GY_OK);
            assert_result(gy_query_snapshot_set(qs, slot, &e), GY_OK);
        }
        assert_result(gy_query_snapshot_publish(qs, t), GY_OK);
        if (t % 3 != 0) {
            const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
            gy_snapshot_hit hits[16];
            uint32_t n;
            assert_result(gy_snapshot_view_raycast(v, gy_test_rnd_vec(&r, -60, 60),
                                                   gy_v3_scale(gy_test_rnd_vec(&r, -1, 1), 100),
                                                   NULL, GY_COLLECT_ALL, hits, 16, &n),
                          GY_OK);
            gy_shape ball = {.type = GY_SHAPE_SPHERE, .radius = 3};
            assert_result(
                gy_snapshot_view_overlap(v, &ball, NULL,
                                         pose_at(gy_test_rnd_vec(&r, -50, 50), gy_quat_identity()),
                                         NULL, GY_COLLECT_ALL, hits, 16, &n),
                GY_OK);
        }
    }
    assert_int_equal(ta.allocs + ta.reallocs, before);
    gy_query_snapshot_stats s;
    gy_query_snapshot_get_stats(qs, &s);
    assert_true(s.moving_rebuilds >= 1000 / 64); /* the periodic rebuilds were in the window */
    gy_query_snapshot_destroy(qs);
    gy_snapshot_geometry_release(hull);
    assert_int_equal(ta.live_bytes, 0);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_query_snapshot_geometry_freed_after_last_reference(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_query_snapshot *qs = qfx_make_snapshot(&ta.base);
    gy_snapshot_entry e = sphere_entry(gy_v3(0, 0, 0), 1.0, 1, GY_MOTION_STATIC);
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_OK);
    assert_result(gy_query_snapshot_set(qs, 1, &e), GY_OK);
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t);
    int64_t baseline = ta.live_blocks;

    gy_vec3 v[3] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}};
    uint32_t ix[3] = {0, 1, 2};
    gy_mesh_def md = {v, 3, ix, 3};
    gy_snapshot_geometry *mesh;
    assert_result(gy_snapshot_geometry_create_mesh(&ta.base, &md, &mesh), GY_OK);
    assert_int_equal(gy_snapshot_geometry_refs(mesh), 1);
    e.shape.type = GY_SHAPE_MESH;
    e.geometry = mesh;
    e.pose.position = gy_v3(0, 10, 0);
    assert_result(gy_query_snapshot_set(qs, 1, &e), GY_OK);
    assert_int_equal(gy_snapshot_geometry_refs(mesh), 2); /* creator + live entry */
    for (uint64_t t = 4; t <= 6; t++)
        qfx_publish_read(qs, t);
    assert_int_equal(gy_snapshot_geometry_refs(mesh), 5); /* + one per buffer */

    gy_snapshot_geometry_release(mesh);
    assert_result(gy_query_snapshot_remove(qs, 1), GY_OK);
    assert_int_equal(gy_snapshot_geometry_refs(mesh), 3); /* only the buffers now */
    const gy_snapshot_view *held = qfx_publish_read(qs, 7);
    gy_snapshot_hit h;
    assert_false(cast(held, gy_v3(0.2, 20, 0.2), gy_v3(0, -15, 0), NULL, &h));
    assert_true(ta.live_blocks > baseline); /* two buffers still show the mesh */
    qfx_publish_read(qs, 8);
    qfx_publish_read(qs, 9);
    assert_int_equal(ta.live_blocks, baseline); /* the last buffer let go: freed */

    /* Destroying a snapshot that still shows a blob drops its references, not the creator's. */
    assert_result(gy_snapshot_geometry_create_mesh(&ta.base, &md, &mesh), GY_OK);
    e.geometry = mesh;
    assert_result(gy_query_snapshot_set(qs, 1, &e), GY_OK);
    qfx_publish_read(qs, 10);
    gy_query_snapshot_destroy(qs);
    assert_int_equal(gy_snapshot_geometry_refs(mesh), 1);
    gy_snapshot_geometry_release(mesh);
    assert_int_equal(ta.live_bytes, 0);
    assert_int_equal(ta.live_blocks, 0);
}

/* A plane's numbers live in a record of its own: set again with the same numbers it allocates
 * nothing, a buffer still showing an older plane keeps answering with it, and the records are
 * freed once neither the writer nor any buffer shows them. */
static void test_query_snapshot_plane_record_shared_and_freed(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_query_snapshot *qs = qfx_make_snapshot(&ta.base);
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_PLANE;
    e.shape.normal = gy_v3(0, 2, 0); /* y = -5 once normalised */
    e.shape.offset = -10.0;
    e.body.generation = 1;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_OK);
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t);
    int64_t blocks = ta.live_blocks;
    uint64_t allocs = ta.allocs + ta.reallocs;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_OK); /* same numbers: same record */
    assert_int_equal(ta.allocs + ta.reallocs, allocs);
    const gy_snapshot_view *old = qfx_publish_read(qs, 4);
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(old, 0, &info), GY_OK);
    assert_true(info.entry.shape.normal.y == 1.0 && info.entry.shape.offset == -5.0);

    e.shape.offset = 10.0; /* y = 5: a record of its own, while buffers still show y = -5 */
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_OK);
    assert_int_equal(ta.live_blocks, blocks + 1);
    gy_snapshot_hit h;
    assert_true(cast(old, gy_v3(0, 0, 0), gy_v3(0, -10, 0), NULL, &h));
    assert_true(h.fraction == 0.5 && h.normal.y == 1.0);
    const gy_snapshot_view *v = qfx_publish_read(qs, 5);
    assert_true(cast(v, gy_v3(0, 10, 0), gy_v3(0, -10, 0), NULL, &h));
    assert_true(h.fraction == 0.5);
    qfx_publish_read(qs, 6);
    qfx_publish_read(qs, 7);
    assert_int_equal(ta.live_blocks, blocks); /* no buffer shows y = -5 any more: freed */
    assert_result(gy_query_snapshot_remove(qs, 0), GY_OK);
    for (uint64_t t = 8; t <= 10; t++)
        qfx_publish_read(qs, t);
    assert_int_equal(ta.live_blocks, blocks - 1);
    gy_query_snapshot_destroy(qs);
    assert_int_equal(ta.live_bytes, 0);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_query_snapshot_recovers_from_allocation_failure(void **state)
{
    (void)state;
    /* Fail each allocation in turn; whatever failed is retried and the result must be right. */
    for (uint64_t fail = 1; fail <= 40; fail++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        ta.fail_at = fail;
        gy_query_snapshot_def def = {&ta.base, 4};
        gy_query_snapshot *qs = NULL;
        if (gy_query_snapshot_create(&def, &qs) != GY_OK) {
            assert_int_equal(ta.live_bytes, 0);
            continue;
        }
        for (uint32_t i = 0; i < 300; i++) {
            gy_snapshot_entry e = sphere_entry(gy_v3(3.0 * i, 0, 0), 1.0, i + 1,
                                               i % 2 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC);
            gy_result r = gy_query_snapshot_set(qs, i, &e);
            if (r != GY_OK) {
                assert_int_equal(r, GY_ERR_OUT_OF_MEMORY);
                assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
            }
        }
        for (uint64_t t = 1; t <= 3; t++) {
            gy_result r = gy_query_snapshot_publish(qs, t);
            if (r != GY_OK) {
                assert_int_equal(r, GY_ERR_OUT_OF_MEMORY);
                assert_result(gy_query_snapshot_publish(qs, t), GY_OK);
            }
            const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
            assert_int_equal(gy_snapshot_view_tick(v), t);
            gy_snapshot_hit h;
            assert_true(cast(v, gy_v3(3.0 * 150, 10, 0), gy_v3(0, -20, 0), NULL, &h));
            assert_int_equal(h.slot, 150);
            gy_snapshot_hit all[400];
            uint32_t n;
            assert_result(gy_snapshot_view_raycast(v, gy_v3(-5, 0, 0), gy_v3(1000, 0, 0), NULL,
                                                   GY_COLLECT_ALL, all, 400, &n),
                          GY_OK);
            assert_int_equal(n, 300);
        }
        gy_query_snapshot_destroy(qs);
        assert_int_equal(ta.live_bytes, 0);
    }
}

static void test_query_snapshot_publish_work_scales_with_movers(void **state)
{
    (void)state;
    /* 20,000 statics that never move and 100 movers: after the first publishes, each publish
     * copies exactly the 100 movers into its buffer, rebuilds nothing and refits only their
     * paths. */
    enum { STATICS = 20000, MOVERS = 100 };
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    for (uint32_t i = 0; i < STATICS; i++) {
        gy_snapshot_entry e =
            box_entry(pose_at(gy_v3(2.0 * (i % 200), 0, 2.0 * (i / 200)), gy_quat_identity()),
                      gy_v3(1, 1, 1), i + 1, GY_MOTION_STATIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    for (uint32_t i = 0; i < MOVERS; i++) {
        gy_snapshot_entry e =
            sphere_entry(gy_v3(4.0 * i, 5, 0), 0.5, STATICS + i + 1, GY_MOTION_DYNAMIC);
        assert_result(gy_query_snapshot_set(qs, STATICS + i, &e), GY_OK);
    }
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t);
    gy_query_snapshot_stats s0, s1;
    gy_query_snapshot_get_stats(qs, &s0);
    enum { ROUNDS = 50 };
    for (uint64_t t = 4; t < 4 + ROUNDS; t++) {
        for (uint32_t i = 0; i < MOVERS; i++)
            assert_result(
                gy_query_snapshot_move(qs, STATICS + i,
                                       pose_at(gy_v3(4.0 * i, 5 + 0.1 * t, 0), gy_quat_identity())),
                GY_OK);
        qfx_publish_read(qs, t);
    }
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.entries_written - s0.entries_written, (uint64_t)ROUNDS * MOVERS);
    assert_int_equal(s1.static_rebuilds, s0.static_rebuilds);
    assert_int_equal(s1.moving_rebuilds, s0.moving_rebuilds);
    assert_int_equal(s1.tree_copies, s0.tree_copies);
    /* Two refits (the writer's tree and the buffer's) of at most a root path each. */
    assert_true(s1.nodes_refit - s0.nodes_refit <= (uint64_t)ROUNDS * MOVERS * 2u * 16u);
    gy_snapshot_hit h;
    const gy_snapshot_view *v = qfx_publish_read(qs, 100);
    assert_true(cast(v, gy_v3(40, 20, 0), gy_v3(0, -40, 0), NULL, &h));
    assert_int_equal(h.slot, STATICS + 10);
    gy_query_snapshot_destroy(qs);
}

/* A moving entry's tree box is its bounds plus a 0.1 m margin, kept while the entry stays inside
 * it: small moves and turns refit nothing, yet every answer is about the entry's exact shape. */
static void test_query_snapshot_moving_box_kept_within_margin(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry e = box_entry(pose_at(gy_v3(0, 0, 0), gy_quat_identity()), gy_v3(1, 1, 1), 1,
                                    GY_MOTION_DYNAMIC);
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_OK);
    gy_snapshot_entry far = sphere_entry(gy_v3(50, 0, 0), 1.0, 2, GY_MOTION_DYNAMIC);
    assert_result(gy_query_snapshot_set(qs, 1, &far), GY_OK);
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t);
    gy_query_snapshot_stats s0, s1;
    gy_query_snapshot_get_stats(qs, &s0);

    /* Five steps of 1 cm and 0.3° about y: the corners travel at most about 0.08 m. */
    gy_pose pose = gy_pose_identity();
    const gy_snapshot_view *v = NULL;
    for (uint64_t t = 4; t < 9; t++) {
        pose = pose_at(gy_v3(0.01 * (double)(t - 3), 0, 0),
                       gy_quat_axis_angle(gy_v3(0, 1, 0), 0.005 * (double)(t - 3)));
        assert_result(gy_query_snapshot_move(qs, 0, pose), GY_OK);
        v = qfx_publish_read(qs, t);
    }
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.nodes_refit, s0.nodes_refit);
    assert_int_equal(s1.entries_written - s0.entries_written, 5);

    /* The view reports the entry's own bounds, not the larger tree box. */
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(v, 0, &info), GY_OK);
    double turn = 0.025, ext = 0.5 * (cos(turn) + sin(turn));
    assert_near(info.bounds_max.x, 0.05 + ext, 1e-6);
    assert_near(info.bounds_min.x, 0.05 - ext, 1e-6);
    assert_near(info.bounds_max.y, 0.5, 1e-6);

    /* Answers are about the moved, turned box: a ray down through its centre hits the top face
     * at y = 0.5; a ray down just beyond its +x edge, inside the old margin, misses. */
    gy_snapshot_hit h;
    assert_true(cast(v, gy_v3(0.05, 5, 0), gy_v3(0, -10, 0), NULL, &h));
    assert_int_equal(h.slot, 0);
    assert_near(h.point.y, 0.5, TOL);
    assert_false(cast(v, gy_v3(0.05 + ext + 0.02, 5, 0), gy_v3(0, -10, 0), NULL, &h));
    gy_shape probe = {0};
    probe.type = GY_SHAPE_SPHERE;
    probe.radius = 0.01;
    assert_int_equal(
        overlap_count(v, &probe, pose_at(gy_v3(0.05 + ext + 0.03, 0, 0), gy_quat_identity()), NULL),
        0);
    assert_int_equal(overlap_count(v, &probe,
                                   pose_at(gy_v3(0.05 + ext - 0.005, 0, 0), gy_quat_identity()),
                                   NULL),
                     1);

    /* Leaving the margin makes a new box: the tree is refit and the ray finds it there. */
    assert_result(gy_query_snapshot_move(qs, 0, pose_at(gy_v3(3, 0, 0), gy_quat_identity())),
                  GY_OK);
    v = qfx_publish_read(qs, 9);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_true(s1.nodes_refit > s0.nodes_refit);
    assert_true(cast(v, gy_v3(3.4, 5, 0), gy_v3(0, -10, 0), NULL, &h));
    assert_int_equal(h.slot, 0);
    assert_near(h.point.y, 0.5, TOL);
    assert_false(cast(v, gy_v3(0.05, 5, 0), gy_v3(0, -10, 0), NULL, &h));
    gy_query_snapshot_destroy(qs);
}

/* Body i must be found by a tiny probe just inside each of its six extreme points (where its
 * bounds touch it): a tree box that no longer held the body would hide it there. */
static void expect_found_at_extremes(const gy_snapshot_view *v, const ref_scene *s, uint32_t i)
{
    const ref_body *b = &s->b[i];
    gy_mat3 m = gy_quat_to_mat3(b->pose.rotation);
    gy_shape probe = {0};
    probe.type = GY_SHAPE_SPHERE;
    probe.radius = 1e-5;
    for (int k = 0; k < 6; k++) {
        int axis = k / 2;
        double sign = k % 2 ? -1.0 : 1.0;
        gy_vec3 dir = gy_v3(axis == 0 ? sign : 0, axis == 1 ? sign : 0, axis == 2 ? sign : 0);
        gy_vec3 offset = gy_v3_scale(dir, b->r);
        if (b->is_box) {
            /* The corner farthest along dir: each local axis j signed by its world component. */
            double h[3] = {b->half.x, b->half.y, b->half.z};
            offset = gy_v3(0, 0, 0);
            for (int j = 0; j < 3; j++) {
                gy_vec3 col = gy_v3(m.m[0][j], m.m[1][j], m.m[2][j]);
                offset =
                    gy_v3_add(offset, gy_v3_scale(col, gy_v3_dot(col, dir) >= 0 ? h[j] : -h[j]));
            }
        }
        gy_vec3 at = gy_v3_add(b->pose.position, gy_v3_scale(offset, 1.0 - 1e-6));
        gy_snapshot_hit hits[64];
        uint32_t n = 0;
        assert_result(gy_snapshot_view_overlap(v, &probe, NULL, pose_at(at, gy_quat_identity()),
                                               NULL, GY_COLLECT_ALL, hits, 64, &n),
                      GY_OK);
        bool found = false;
        for (uint32_t j = 0; j < n; j++)
            found = found || hits[j].slot == i;
        assert_true(found);
    }
}

/* Many small steps and turns (and now and then a big one) on half the entries: every box that
 * was kept must still hold its entry (probes at the extreme points find it), and every ray agrees
 * with the brute force. */
static void test_query_snapshot_small_moves_match_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {0x5eed5eedull};
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    ref_scene s = ref_scene_random(qs, 1500, &r);
    qfx_publish_read(qs, 1);
    gy_query_snapshot_stats before, after;
    gy_query_snapshot_get_stats(qs, &before);
    for (uint64_t tick = 2; tick < 202; tick++) {
        for (uint32_t i = 1; i < s.n; i += 2) {
            bool big = gy_test_rnd(&r) < 0.01;
            double step = big ? 2.0 : 0.03, angle = big ? 1.6 : 0.02;
            gy_vec3 axis = gy_v3_normalize(gy_test_rnd_vec(&r, -1, 1));
            s.b[i].pose.position =
                gy_v3_add(s.b[i].pose.position, gy_test_rnd_vec(&r, -step, step));
            s.b[i].pose.rotation = gy_quat_normalize(gy_quat_mul(
                gy_quat_axis_angle(axis, gy_test_rnd_in(&r, -angle, angle)), s.b[i].pose.rotation));
            assert_result(gy_query_snapshot_move(qs, i, s.b[i].pose), GY_OK);
        }
        const gy_snapshot_view *v = qfx_publish_read(qs, tick);
        if (tick % 25 == 0) {
            ref_compare(v, &s, &r, 300);
            for (uint32_t i = 1; i < s.n; i += 2)
                expect_found_at_extremes(v, &s, i);
        }
    }
    /* Most small steps kept their box: far fewer refits than moves. */
    gy_query_snapshot_get_stats(qs, &after);
    assert_true(after.nodes_refit - before.nodes_refit < 200u * 750u);
    gy_query_snapshot_destroy(qs);
    test_free(s.b);
}

/* The point of a capsule, cylinder or hull (as set below) farthest along dir. */
static gy_vec3 extreme_point(int shape, gy_pose pose, const gy_vec3 *tetra, gy_vec3 dir)
{
    gy_vec3 axis = gy_quat_rotate(pose.rotation, gy_v3(0, 1, 0));
    double along = gy_v3_dot(axis, dir);
    if (shape == 0) { /* capsule r 0.3, core half length 0.7 */
        gy_vec3 end = gy_v3_scale(axis, along >= 0 ? 0.7 : -0.7);
        return gy_v3_add(pose.position, gy_v3_add(end, gy_v3_scale(dir, 0.3)));
    }
    if (shape == 1) { /* cylinder r 0.5, half height 0.75 */
        gy_vec3 rim = gy_v3_sub(dir, gy_v3_scale(axis, along));
        double l = gy_v3_len(rim);
        gy_vec3 p = gy_v3_scale(axis, along >= 0 ? 0.75 : -0.75);
        if (l > 1e-12)
            p = gy_v3_add(p, gy_v3_scale(rim, 0.5 / l));
        return gy_v3_add(pose.position, p);
    }
    gy_vec3 best = gy_pose_apply(pose, tetra[0]);
    for (int i = 1; i < 4; i++) {
        gy_vec3 w = gy_pose_apply(pose, tetra[i]);
        if (gy_v3_dot(w, dir) > gy_v3_dot(best, dir))
            best = w;
    }
    return best;
}

/* Capsules, cylinders and hulls keep their box through small turns by how far their bounding
 * points lie from the origin (the segment ends, the rims, the corners of a hull's local box): a
 * probe just inside each extreme point must find the shape after every step. */
static void test_query_snapshot_small_turns_keep_every_shape_in_its_box(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_vec3 tetra[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def hd = {tetra, 4};
    gy_snapshot_geometry *g = NULL;
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &g), GY_OK);
    gy_pose pose[3];
    for (int k = 0; k < 3; k++) {
        gy_snapshot_entry e = gy_default_snapshot_entry();
        e.motion = GY_MOTION_DYNAMIC;
        e.body.generation = (uint32_t)k + 1u;
        e.pose.position = gy_v3(5.0 * k, 0, 0);
        e.shape.type = k == 0 ? GY_SHAPE_CAPSULE : k == 1 ? GY_SHAPE_CYLINDER : GY_SHAPE_HULL;
        e.shape.radius = k == 0 ? 0.3 : 0.5;
        e.shape.height = k == 0 ? 2.0 : 1.5;
        if (k == 2)
            e.geometry = g;
        pose[k] = e.pose;
        assert_result(gy_query_snapshot_set(qs, (uint32_t)k, &e), GY_OK);
    }
    gy_test_rng r = {0x7u};
    const gy_vec3 spin[3] = {gy_v3_normalize(gy_v3(1, 0.2, 0.1)),
                             gy_v3_normalize(gy_v3(0.3, 0.1, 1)), gy_v3_normalize(gy_v3(1, 1, 1))};
    gy_shape probe = {0};
    probe.type = GY_SHAPE_SPHERE;
    probe.radius = 1e-5;
    gy_query_snapshot_stats s0, s1;
    gy_query_snapshot_get_stats(qs, &s0);
    for (uint64_t tick = 1; tick <= 400; tick++) {
        for (uint32_t k = 0; k < 3; k++) {
            /* A steady spin (turns that do not cancel) and a little jitter. */
            pose[k].position = gy_v3_add(pose[k].position, gy_test_rnd_vec(&r, -0.002, 0.002));
            pose[k].rotation =
                gy_quat_normalize(gy_quat_mul(gy_quat_axis_angle(spin[k], 0.01), pose[k].rotation));
            assert_result(gy_query_snapshot_move(qs, k, pose[k]), GY_OK);
        }
        const gy_snapshot_view *v = qfx_publish_read(qs, tick);
        for (uint32_t k = 0; k < 3; k++) {
            gy_vec3 centre =
                k < 2 ? pose[k].position : gy_pose_apply(pose[k], gy_v3(0.25, 0.25, 0.25));
            for (int d = 0; d < 6; d++) {
                double sign = d % 2 ? -1.0 : 1.0;
                gy_vec3 dir =
                    gy_v3(d / 2 == 0 ? sign : 0, d / 2 == 1 ? sign : 0, d / 2 == 2 ? sign : 0);
                gy_vec3 x = extreme_point((int)k, pose[k], tetra, dir);
                x = gy_v3_add(centre, gy_v3_scale(gy_v3_sub(x, centre), 1.0 - 1e-6));
                gy_snapshot_hit hits[8];
                uint32_t n = 0;
                assert_result(gy_snapshot_view_overlap(v, &probe, NULL,
                                                       pose_at(x, gy_quat_identity()), NULL,
                                                       GY_COLLECT_ALL, hits, 8, &n),
                              GY_OK);
                assert_int_equal(n, 1);
                assert_int_equal(hits[0].slot, k);
            }
        }
    }
    /* And the boxes were kept most of the time (each step moves the far points by ~1 cm). */
    gy_query_snapshot_get_stats(qs, &s1);
    assert_true(s1.nodes_refit - s0.nodes_refit < 400u * 3u * 2u * 3u / 2u);
    gy_snapshot_geometry_release(g);
    gy_query_snapshot_destroy(qs);
}

static void test_query_snapshot_rejects_invalid_input(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry e = gy_default_snapshot_entry();
    assert_result(gy_query_snapshot_set(qs, GY_QUERY_SNAPSHOT_MAX_SLOTS, &e),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_query_snapshot_set(qs, 0, NULL), GY_ERR_INVALID_ARGUMENT);
    e.pose.position.x = NAN;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_NON_FINITE);
    e = gy_default_snapshot_entry();
    e.pose.rotation.w = 2.0;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_ARGUMENT);
    e = gy_default_snapshot_entry();
    e.shape.radius = 0.0;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_SHAPE);
    e.shape.radius = INFINITY;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_NON_FINITE);
    e = gy_default_snapshot_entry();
    e.motion = (gy_motion_type)7;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_ARGUMENT);
    e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_HULL;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_MESH);
    gy_vec3 tp[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def hd = {tp, 4};
    gy_snapshot_geometry *hull;
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &hull), GY_OK);
    e.shape.type = GY_SHAPE_MESH;
    e.geometry = hull;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_MESH);
    e.shape.type = GY_SHAPE_SPHERE;
    assert_result(gy_query_snapshot_set(qs, 0, &e), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(gy_snapshot_geometry_refs(hull), 1); /* nothing took a reference */
    gy_snapshot_geometry_release(hull);

    gy_vec3 flat[4] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}};
    hd.points = flat;
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &hull), GY_ERR_INVALID_MESH);
    hd.point_count = 3;
    assert_result(gy_snapshot_geometry_create_hull(NULL, &hd, &hull), GY_ERR_INVALID_MESH);
    uint32_t bad[3] = {0, 1, 4};
    gy_mesh_def md = {tp, 4, bad, 3};
    assert_result(gy_snapshot_geometry_create_mesh(NULL, &md, &hull), GY_ERR_INVALID_MESH);

    assert_result(gy_query_snapshot_move(qs, 3, gy_pose_identity()), GY_ERR_STALE_HANDLE);
    assert_result(gy_query_snapshot_remove(qs, 3), GY_ERR_STALE_HANDLE);
    e = gy_default_snapshot_entry();
    assert_result(gy_query_snapshot_set(qs, 3, &e), GY_OK);
    gy_pose bad_pose = gy_pose_identity();
    bad_pose.position.y = INFINITY;
    assert_result(gy_query_snapshot_move(qs, 3, bad_pose), GY_ERR_NON_FINITE);
    /* The rotation: a non-finite component is NON_FINITE; finite but not of unit length (also so
     * large that its square overflows) is INVALID_ARGUMENT. None of them moves the entry. */
    const gy_quat bad_rot[5] = {
        {NAN, 0, 0, 1}, {0, 0, -INFINITY, 1}, {0, 0, 0, 2}, {0, 0, 0, 0.5}, {1e200, 0, 0, 1}};
    const gy_result want[5] = {GY_ERR_NON_FINITE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT,
                               GY_ERR_INVALID_ARGUMENT, GY_ERR_INVALID_ARGUMENT};
    for (int i = 0; i < 5; i++) {
        bad_pose = pose_at(gy_v3(7, 8, 9), bad_rot[i]);
        assert_result(gy_query_snapshot_move(qs, 3, bad_pose), want[i]);
    }
    gy_snapshot_entry_info unmoved;
    assert_result(gy_snapshot_view_get(qfx_publish_read(qs, 1), 3, &unmoved), GY_OK);
    assert_true(memcmp(&unmoved.entry.pose, &e.pose, sizeof e.pose) == 0);
    assert_result(gy_query_snapshot_remove(qs, 3), GY_OK);
    assert_result(gy_query_snapshot_remove(qs, 3), GY_ERR_STALE_HANDLE);

    const gy_snapshot_view *v = qfx_publish_read(qs, 2);
    gy_snapshot_hit h;
    uint32_t n;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(NAN, 0, 0), gy_v3(1, 0, 0), NULL,
                                           GY_COLLECT_ANY, &h, 1, &n),
                  GY_ERR_NON_FINITE);
    assert_result(gy_snapshot_view_raycast(v, gy_v3(0, 0, 0), gy_v3(1, 0, 0), NULL, GY_COLLECT_ANY,
                                           &h, 1, NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_snapshot_view_raycast(v, gy_v3(0, 0, 0), gy_v3(1, 0, 0), NULL, (gy_collector)9,
                                           &h, 1, &n),
                  GY_ERR_INVALID_ARGUMENT);
    gy_snapshot_filter f = gy_default_snapshot_filter();
    f.motion_types = 0x10;
    assert_result(
        gy_snapshot_view_raycast(v, gy_v3(0, 0, 0), gy_v3(1, 0, 0), &f, GY_COLLECT_ANY, &h, 1, &n),
        GY_ERR_INVALID_ARGUMENT);
    gy_shape cyl = {.type = GY_SHAPE_CYLINDER, .radius = 1, .height = 1};
    assert_result(gy_snapshot_view_overlap(v, &cyl, NULL, gy_pose_identity(), NULL, GY_COLLECT_ANY,
                                           &h, 1, &n),
                  GY_ERR_UNSUPPORTED);
    gy_shape neg = {.type = GY_SHAPE_SPHERE, .radius = -1};
    assert_result(gy_snapshot_view_overlap(v, &neg, NULL, gy_pose_identity(), NULL, GY_COLLECT_ANY,
                                           &h, 1, &n),
                  GY_ERR_INVALID_SHAPE);
    gy_shape ok = {.type = GY_SHAPE_SPHERE, .radius = 1};
    gy_pose nan_pose = gy_pose_identity();
    nan_pose.rotation.x = NAN;
    assert_result(gy_snapshot_view_overlap(v, &ok, NULL, nan_pose, NULL, GY_COLLECT_ANY, &h, 1, &n),
                  GY_ERR_NON_FINITE);
    gy_query_snapshot_destroy(qs);
}

/* ---- tree nodes for drawing ------------------------------------------------------------------ */

typedef struct node_walk {
    gy_snapshot_node nodes[8192];
    uint32_t count;
} node_walk;

static void collect_node(void *ctx, const gy_snapshot_node *n)
{
    node_walk *w = ctx;
    if (w->count >= 8192u)
        fail_msg("more nodes than the trees can hold");
    w->nodes[w->count++] = *n;
}

static bool box_inside(gy_vec3 lo, gy_vec3 hi, gy_vec3 outer_lo, gy_vec3 outer_hi)
{
    return lo.x >= outer_lo.x && lo.y >= outer_lo.y && lo.z >= outer_lo.z && hi.x <= outer_hi.x &&
           hi.y <= outer_hi.y && hi.z <= outer_hi.z;
}

/* Every live entry is one leaf, each leaf's box holds its entry's bounds, each node lies inside its
 * parent (the node reported last at the depth above, parents come first): for built trees and for
 * a large static tree edited in place (which holds free node pairs the walk must skip). */
static void check_nodes(const gy_snapshot_view *v, uint32_t live)
{
    static node_walk w;
    w.count = 0;
    uint32_t visited = gy_snapshot_view_visit_nodes(v, collect_node, &w);
    assert_int_equal(visited, w.count);
    uint32_t leaves = 0;
    static uint8_t seen[4096];
    memset(seen, 0, sizeof seen);
    uint32_t path[GY_SNAPSHOT_MAX_DEPTH + 1];
    for (uint32_t i = 0; i < w.count; i++) {
        const gy_snapshot_node *n = &w.nodes[i];
        assert_true(n->depth <= GY_SNAPSHOT_MAX_DEPTH);
        if (n->depth == 0) {
            assert_true(i == 0 || n->tree != w.nodes[i - 1].tree);
        } else {
            const gy_snapshot_node *parent = &w.nodes[path[n->depth - 1]];
            assert_int_equal(parent->tree, n->tree);
            assert_false(parent->leaf);
            assert_true(box_inside(n->min, n->max, parent->min, parent->max));
        }
        path[n->depth] = i;
        if (!n->leaf) {
            assert_int_equal(n->slot, UINT32_MAX);
            continue;
        }
        leaves++;
        gy_snapshot_entry_info info;
        assert_result(gy_snapshot_view_get(v, n->slot, &info), GY_OK);
        assert_false(seen[n->slot]);
        seen[n->slot] = 1;
        assert_true(box_inside(info.bounds_min, info.bounds_max, n->min, n->max));
    }
    assert_int_equal(leaves, live);
}

static void test_snapshot_view_visits_every_tree_node_once(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    assert_int_equal(gy_snapshot_view_visit_nodes(NULL, collect_node, NULL), 0);
    assert_int_equal(gy_snapshot_view_slot_limit(NULL), 0);
    gy_snapshot_triangles t;
    assert_result(gy_snapshot_geometry_triangles(NULL, &t), GY_ERR_INVALID_ARGUMENT);
    /* 2,000 statics (edited in place once built) and 100 dynamics. */
    for (uint32_t i = 0; i < 2000; i++) {
        gy_snapshot_entry e = box_entry(
            pose_at(gy_v3((double)(i % 50) * 2.0, 0.0, (double)(i / 50) * 2.0), gy_quat_identity()),
            gy_v3(1, 1, 1), i + 1u, GY_MOTION_STATIC);
        assert_result(gy_query_snapshot_set(qs, i, &e), GY_OK);
    }
    for (uint32_t i = 0; i < 100; i++) {
        gy_snapshot_entry e =
            sphere_entry(gy_v3((double)i, 5.0, 0.0), 0.5, 3000u + i, GY_MOTION_DYNAMIC);
        assert_result(gy_query_snapshot_set(qs, 2000u + i, &e), GY_OK);
    }
    const gy_snapshot_view *v = qfx_publish_read(qs, 1);
    assert_int_equal(gy_snapshot_view_slot_limit(v), 2100);
    check_nodes(v, 2100);
    /* Remove and add statics: the static tree is edited in place. */
    for (uint32_t i = 0; i < 300; i++)
        assert_result(gy_query_snapshot_remove(qs, i * 5u), GY_OK);
    v = qfx_publish_read(qs, 2);
    gy_query_snapshot_stats st;
    gy_query_snapshot_get_stats(qs, &st);
    assert_true(st.static_edits >= 1);
    check_nodes(v, 1800);
    for (uint32_t i = 0; i < 100; i++) {
        gy_snapshot_entry e = box_entry(pose_at(gy_v3((double)i, 0.0, -10.0), gy_quat_identity()),
                                        gy_v3(1, 1, 1), 5000u + i, GY_MOTION_STATIC);
        assert_result(gy_query_snapshot_set(qs, i * 5u, &e), GY_OK);
    }
    v = qfx_publish_read(qs, 3);
    check_nodes(v, 1900);
    gy_query_snapshot_destroy(qs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_snapshot_raycast_matches_brute_force),
        cmocka_unit_test(test_query_snapshot_refit_after_moves_matches_brute_force),
        cmocka_unit_test(test_query_snapshot_closest_is_nearest_of_all),
        cmocka_unit_test(test_query_snapshot_rebuilds_on_add_and_remove),
        cmocka_unit_test(test_query_snapshot_rebuilds_every_64th_publish),
        cmocka_unit_test(test_query_snapshot_filter_excludes_each_field),
        cmocka_unit_test(test_query_snapshot_skips_callers_own_body),
        cmocka_unit_test(test_snapshot_view_raycast_matches_analytic_shapes),
        cmocka_unit_test(test_snapshot_view_overlap_matches_analytic_shapes),
        cmocka_unit_test(test_snapshot_view_raycast_collectors_respect_capacity),
        cmocka_unit_test(test_query_snapshot_no_stale_data_in_any_buffer),
        cmocka_unit_test(test_query_snapshot_reader_thread_sees_whole_publishes),
        cmocka_unit_test(test_query_snapshot_steady_state_allocates_nothing),
        cmocka_unit_test(test_query_snapshot_geometry_freed_after_last_reference),
        cmocka_unit_test(test_query_snapshot_plane_record_shared_and_freed),
        cmocka_unit_test(test_query_snapshot_recovers_from_allocation_failure),
        cmocka_unit_test(test_query_snapshot_publish_work_scales_with_movers),
        cmocka_unit_test(test_query_snapshot_moving_box_kept_within_margin),
        cmocka_unit_test(test_query_snapshot_small_moves_match_brute_force),
        cmocka_unit_test(test_query_snapshot_small_turns_keep_every_shape_in_its_box),
        cmocka_unit_test(test_query_snapshot_rejects_invalid_input),
        cmocka_unit_test(test_query_snapshot_built_hull_is_taken_or_refused_untouched),
        cmocka_unit_test(test_snapshot_view_visits_every_tree_node_once),
    };
    return cmocka_run_group_tests_name("query_snapshot", tests, NULL, NULL);
}
