/* The bounding-volume hierarchy behind the query snapshot: every traversal must agree with a brute
 * force over the same items, before and after refits, and builds must stay valid and bounded on
 * degenerate input. */
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "../../collision/src/bvh.h"
#include "gyre/math.h"

/* A scene of spheres: the tree holds their boxes, the exact test is analytic. */
typedef struct scene {
    uint32_t n;
    gy_vec3 *center;
    double *radius;
    gy_bvh_box *boxes;
    uint32_t *items;
} scene;

static gy_bvh_box sphere_box(gy_vec3 c, double r)
{
    return gy_bvh_box_from(gy_v3_sub(c, gy_v3(r, r, r)), gy_v3_add(c, gy_v3(r, r, r)));
}

static void scene_init(scene *s, uint32_t n, gy_test_rng *r)
{
    s->n = n;
    s->center = test_malloc(n * sizeof *s->center);
    s->radius = test_malloc(n * sizeof *s->radius);
    s->boxes = test_malloc(n * sizeof *s->boxes);
    s->items = test_malloc(n * sizeof *s->items);
    for (uint32_t i = 0; i < n; i++) {
        s->center[i] = gy_test_rnd_vec(r, -100.0, 100.0);
        s->radius[i] = gy_test_rnd_in(r, 0.5, 5.0);
        s->boxes[i] = sphere_box(s->center[i], s->radius[i]);
        s->items[i] = i;
    }
}

static void scene_fini(scene *s)
{
    test_free(s->center);
    test_free(s->radius);
    test_free(s->boxes);
    test_free(s->items);
}

/* Entry t of o + t·d into the sphere, or -1 (also when starting inside). */
static double sphere_t(gy_vec3 c, double r, gy_vec3 o, gy_vec3 d)
{
    gy_vec3 m = gy_v3_sub(o, c);
    double a = gy_v3_dot(d, d), b = gy_v3_dot(m, d), cc = gy_v3_dot(m, m) - r * r;
    if (cc <= 0.0)
        return -1.0;
    double disc = b * b - a * cc;
    if (b > 0.0 || disc < 0.0)
        return -1.0;
    return (-b - sqrt(disc)) / a;
}

typedef struct closest {
    const scene *s;
    gy_vec3 o, d;
    uint32_t best;
    double best_t;
    uint32_t visits;
} closest;

static double closest_visit(void *ctx, uint32_t item, double t_max)
{
    closest *c = ctx;
    c->visits++;
    double t = sphere_t(c->s->center[item], c->s->radius[item], c->o, c->d);
    if (t >= 0.0 && t <= t_max) {
        c->best = item;
        c->best_t = t;
        return t;
    }
    return t_max;
}

static void brute_closest(const scene *s, gy_vec3 o, gy_vec3 d, uint32_t *best, double *best_t)
{
    *best = GY_BVH_NONE;
    *best_t = 1.0;
    for (uint32_t i = 0; i < s->n; i++) {
        double t = sphere_t(s->center[i], s->radius[i], o, d);
        if (t >= 0.0 && t <= *best_t && (*best == GY_BVH_NONE || t < *best_t)) {
            *best = i;
            *best_t = t;
        }
    }
}

/* Casts `rays` random rays through the tree and brute force; both must find the same hit. */
static void check_rays(const gy_bvh *bvh, const scene *s, gy_test_rng *r, int rays)
{
    int hits = 0;
    for (int k = 0; k < rays; k++) {
        gy_vec3 o = gy_test_rnd_vec(r, -120.0, 120.0),
                d = gy_v3_scale(gy_test_rnd_vec(r, -1.0, 1.0), 250.0);
        closest c = {s, o, d, GY_BVH_NONE, 1.0, 0};
        gy_bvh_raycast(bvh, o, d, 1.0, closest_visit, &c);
        uint32_t want;
        double want_t;
        brute_closest(s, o, d, &want, &want_t);
        assert_int_equal(c.best, want);
        if (want != GY_BVH_NONE) {
            assert_near(c.best_t, want_t, 0.0);
            hits++;
        }
    }
    assert_true(hits >
                rays / 4); /* the scene is dense enough that the comparison means something */
}

/* A build run in slices of a few units makes the one-shot build's tree, node for node, and no
 * slice visits more items than it was given. */
static void test_bvh_build_in_slices_matches_one_build_and_keeps_to_each_slice(void **state)
{
    (void)state;
    gy_test_rng r = {0x243f6a8885a308d3ull};
    scene s;
    scene_init(&s, 3000, &r);
    const gy_allocator *a = gy_default_allocator();
    gy_bvh whole, sliced;
    gy_bvh_builder b = {0};
    gy_bvh_init(&whole, true);
    gy_bvh_init(&sliced, true);
    assert_result(gy_bvh_build(&whole, &b, a, s.items, s.n, s.boxes, s.n), GY_OK);
    static const uint64_t slice_units[] = {1, 7, 100, 2999, 3001};
    for (size_t k = 0; k < sizeof slice_units / sizeof slice_units[0]; k++) {
        gy_bvh_build_state st;
        assert_result(gy_bvh_build_begin(&sliced, &b, a, s.items, s.n, s.boxes, s.n, &st), GY_OK);
        uint64_t total = 0;
        uint32_t slices = 0;
        for (bool done = false; !done; slices++) {
            uint64_t used = 0;
            done = gy_bvh_build_run(&sliced, &b, &st, slice_units[k], &used);
            assert_true(used <= slice_units[k]);
            assert_true(used > 0 || done);
            total += used;
            assert_true(slices < 10000000u);
        }
        /* Several passes over the items per level: far more work than one slice. */
        assert_true(total > 3u * s.n);
        if (slice_units[k] < 100)
            assert_true(slices >= total / slice_units[k]);
        assert_int_equal(sliced.node_count, whole.node_count);
        assert_int_equal(sliced.depth, whole.depth);
        assert_memory_equal(sliced.nodes, whole.nodes, whole.node_count * sizeof *whole.nodes);
        assert_true(gy_bvh_is_valid(&sliced, s.boxes, s.n));
    }
    gy_bvh_fini(&whole, a);
    gy_bvh_fini(&sliced, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static void test_bvh_raycast_matches_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {0x9e3779b97f4a7c15ull};
    scene s;
    scene_init(&s, 4000, &r);
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, true);
    const gy_allocator *a = gy_default_allocator();
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, s.n, s.boxes, s.n), GY_OK);
    assert_true(gy_bvh_is_valid(&bvh, s.boxes, s.n));
    assert_true(bvh.depth < GY_BVH_MAX_DEPTH);
    check_rays(&bvh, &s, &r, 3000);
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static void test_bvh_refit_after_moves_matches_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {12345};
    scene s;
    scene_init(&s, 3000, &r);
    gy_bvh bvh, full;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, true);
    gy_bvh_init(&full, true);
    const gy_allocator *a = gy_default_allocator();
    /* A node array reserved to fit is not grown by a build that fits it. */
    assert_result(gy_bvh_reserve_nodes(&bvh, a, 2u * s.n - 1u), GY_OK);
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, s.n, s.boxes, s.n), GY_OK);
    assert_int_equal(bvh.node_capacity, 2u * s.n - 1u);
    for (int round = 0; round < 5; round++) {
        /* A third of the spheres jump anywhere (the worst case for a refit tree). */
        for (uint32_t i = 0; i < s.n; i++) {
            if (gy_test_rnd(&r) < 0.33) {
                s.center[i] = gy_test_rnd_vec(&r, -100.0, 100.0);
                s.boxes[i] = sphere_box(s.center[i], s.radius[i]);
                gy_bvh_refit_item(&bvh, i, s.boxes[i]);
            }
        }
        assert_true(gy_bvh_is_valid(&bvh, s.boxes, s.n));
        check_rays(&bvh, &s, &r, 500);
    }
    /* Refitting item by item and refitting everything at once agree exactly. */
    assert_result(gy_bvh_copy(&full, &bvh, a, s.n), GY_OK);
    gy_bvh_refit_all(&full, s.boxes);
    assert_int_equal(full.node_count, bvh.node_count);
    assert_memory_equal(full.nodes, bvh.nodes, bvh.node_count * sizeof *bvh.nodes);
    /* And so does a refit through an index map from boxes kept in another order (reversed). */
    gy_bvh_box *reversed = test_malloc(s.n * sizeof *reversed);
    uint32_t *index = test_malloc(s.n * sizeof *index);
    for (uint32_t i = 0; i < s.n; i++) {
        index[i] = s.n - 1u - i;
        reversed[index[i]] = s.boxes[i];
    }
    assert_result(gy_bvh_copy(&full, &bvh, a, s.n), GY_OK);
    for (uint32_t i = 0; i < full.node_count; i++)
        memset(&full.nodes[i].box, 0, sizeof full.nodes[i].box);
    gy_bvh_refit_all_indexed(&full, reversed, index);
    assert_memory_equal(full.nodes, bvh.nodes, bvh.node_count * sizeof *bvh.nodes);
    test_free(reversed);
    test_free(index);
    gy_bvh_fini(&bvh, a);
    gy_bvh_fini(&full, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static void test_bvh_refit_item_stops_where_nothing_changes(void **state)
{
    (void)state;
    gy_test_rng r = {777};
    scene s;
    scene_init(&s, 1024, &r);
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, true);
    const gy_allocator *a = gy_default_allocator();
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, s.n, s.boxes, s.n), GY_OK);
    /* Same box again: nothing changes, nothing is walked past the leaf. */
    assert_int_equal(gy_bvh_refit_item(&bvh, 17, s.boxes[17]), 0);
    /* A box shrunk strictly inside its old one changes the leaf and at most its whole path. */
    gy_bvh_box smaller = sphere_box(s.center[17], s.radius[17] * 0.5);
    uint32_t changed = gy_bvh_refit_item(&bvh, 17, smaller);
    assert_true(changed >= 1 && changed <= bvh.depth + 1u);
    s.boxes[17] = smaller;
    assert_true(gy_bvh_is_valid(&bvh, s.boxes, s.n));
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

typedef struct collect {
    uint8_t *seen;
    uint32_t count;
    uint32_t stop_after;
} collect;

static bool collect_visit(void *ctx, uint32_t item)
{
    collect *c = ctx;
    c->seen[item]++;
    c->count++;
    return c->stop_after == 0 || c->count < c->stop_after;
}

static void test_bvh_overlap_matches_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {4242};
    scene s;
    scene_init(&s, 3000, &r);
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, false);
    const gy_allocator *a = gy_default_allocator();
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, s.n, s.boxes, 0), GY_OK);
    uint8_t *seen = test_malloc(s.n);
    uint32_t total = 0;
    for (int k = 0; k < 300; k++) {
        gy_vec3 c = gy_test_rnd_vec(&r, -100.0, 100.0), h = gy_test_rnd_vec(&r, 0.5, 15.0);
        gy_bvh_box q = gy_bvh_box_from(gy_v3_sub(c, h), gy_v3_add(c, h));
        memset(seen, 0, s.n);
        collect col = {seen, 0, 0};
        assert_true(gy_bvh_overlap(&bvh, &q, collect_visit, &col));
        for (uint32_t i = 0; i < s.n; i++)
            assert_int_equal(seen[i], gy_bvh_box_overlaps(&s.boxes[i], &q) ? 1 : 0);
        total += col.count;
    }
    assert_true(total > 300);
    /* A callback that says stop ends the walk at once. */
    gy_bvh_box everything = gy_bvh_box_from(gy_v3(-1e3, -1e3, -1e3), gy_v3(1e3, 1e3, 1e3));
    memset(seen, 0, s.n);
    collect col = {seen, 0, 5};
    assert_false(gy_bvh_overlap(&bvh, &everything, collect_visit, &col));
    assert_int_equal(col.count, 5);
    test_free(seen);
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static void test_bvh_raycast_visits_nearer_first_and_stops_early(void **state)
{
    (void)state;
    /* 1,000 unit spheres in a row along +x; a ray down the row must find the first one after
     * touching only a handful of leaves, in whatever order the items were built. */
    enum { N = 1000 };
    scene s;
    gy_test_rng r = {99};
    scene_init(&s, N, &r);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t slot = (i * 7919u) % N; /* scramble item numbers against positions */
        s.center[slot] = gy_v3(3.0 * i, 0.0, 0.0);
        s.radius[slot] = 1.0;
        s.boxes[slot] = sphere_box(s.center[slot], 1.0);
    }
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, false);
    const gy_allocator *a = gy_default_allocator();
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, N, s.boxes, 0), GY_OK);
    for (int dir = 0; dir < 2; dir++) {
        gy_vec3 o = dir == 0 ? gy_v3(-10.0, 0.0, 0.0) : gy_v3(3.0 * N + 10.0, 0.0, 0.0);
        gy_vec3 d = gy_v3(dir == 0 ? 4000.0 : -4000.0, 0.0, 0.0);
        closest c = {&s, o, d, GY_BVH_NONE, 1.0, 0};
        gy_bvh_raycast(&bvh, o, d, 1.0, closest_visit, &c);
        assert_int_equal(c.best, dir == 0 ? 0u : (uint32_t)(((N - 1) * 7919u) % N));
        assert_true(c.visits <= 4);
    }
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static double stop_visit(void *ctx, uint32_t item, double t_max)
{
    (void)item;
    (void)t_max;
    (*(uint32_t *)ctx)++;
    return -1.0;
}

static void test_bvh_raycast_stops_when_told(void **state)
{
    (void)state;
    gy_test_rng r = {5};
    scene s;
    scene_init(&s, 500, &r);
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, false);
    const gy_allocator *a = gy_default_allocator();
    assert_result(gy_bvh_build(&bvh, &b, a, s.items, s.n, s.boxes, 0), GY_OK);
    uint32_t visits = 0;
    gy_vec3 o = gy_v3(-200.0, s.center[0].y, s.center[0].z); /* passes through sphere 0 */
    gy_bvh_raycast(&bvh, o, gy_v3(400, 0, 0), 1.0, stop_visit, &visits);
    assert_int_equal(visits, 1);
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    scene_fini(&s);
}

static void test_bvh_build_handles_degenerate_input(void **state)
{
    (void)state;
    enum { N = 5000 };
    gy_bvh_box *boxes = test_malloc(N * sizeof *boxes);
    uint32_t *items = test_malloc(N * sizeof *items);
    const gy_allocator *a = gy_default_allocator();
    gy_bvh bvh;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, true);

    /* Nothing, then one item. */
    assert_result(gy_bvh_build(&bvh, &b, a, items, 0, boxes, N), GY_OK);
    assert_true(gy_bvh_is_valid(&bvh, boxes, 0));
    items[0] = 42;
    boxes[42] = gy_bvh_box_from(gy_v3(0, 0, 0), gy_v3(1, 1, 1));
    assert_result(gy_bvh_build(&bvh, &b, a, items, 1, boxes, N), GY_OK);
    assert_true(gy_bvh_is_valid(&bvh, boxes, 1));
    assert_int_equal(bvh.leaf_of[42], 0);

    /* Every box identical: no split plane exists, halving must keep the tree shallow. */
    for (uint32_t i = 0; i < N; i++) {
        items[i] = i;
        boxes[i] = gy_bvh_box_from(gy_v3(1, 2, 3), gy_v3(2, 3, 4));
    }
    assert_result(gy_bvh_build(&bvh, &b, a, items, N, boxes, N), GY_OK);
    assert_true(gy_bvh_is_valid(&bvh, boxes, N));
    assert_true(bvh.depth <= 14);

    /* Sizes growing geometrically along a line: SAH's worst case for lopsided splits. */
    for (uint32_t i = 0; i < N; i++) {
        double x = pow(1.01, (double)i);
        boxes[i] = gy_bvh_box_from(gy_v3(x, 0, 0), gy_v3(x * 1.001, 1, 1));
    }
    assert_result(gy_bvh_build(&bvh, &b, a, items, N, boxes, N), GY_OK);
    assert_true(gy_bvh_is_valid(&bvh, boxes, N));
    assert_true(bvh.depth < GY_BVH_MAX_DEPTH);
    gy_bvh_fini(&bvh, a);
    gy_bvh_builder_fini(&b, a);
    test_free(boxes);
    test_free(items);
}

static void test_bvh_box_from_rounds_outward(void **state)
{
    (void)state;
    gy_vec3 lo = gy_v3(0.1, -0.1, 1e7 + 0.3), hi = gy_v3(0.2, 1.0 / 3.0, 1e7 + 0.7);
    gy_bvh_box b = gy_bvh_box_from(lo, hi);
    const double l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    for (int i = 0; i < 3; i++) {
        assert_true((double)b.min[i] <= l[i]);
        assert_true((double)b.max[i] >= h[i]);
    }
    b = gy_bvh_box_from(gy_v3(-1e300, 0, 0), gy_v3(1e300, 0, 0));
    assert_true(isinf(b.min[0]) && b.min[0] < 0 && isinf(b.max[0]) && b.max[0] > 0);
}

static void test_bvh_box_ray_counts_touching_faces(void **state)
{
    (void)state;
    gy_bvh_box b = gy_bvh_box_from(gy_v3(0, 0, 0), gy_v3(1, 1, 1));
    gy_vec3 along_x = gy_v3(3, 0, 0), inv = gy_bvh_ray_inverse(along_x);
    /* Rays parallel to a face and lying in it touch the box; just outside they miss. */
    assert_near(gy_bvh_box_ray(&b, gy_v3(-1, 0, 0.5), inv, 1.0), 1.0 / 3.0, 1e-12);
    assert_near(gy_bvh_box_ray(&b, gy_v3(-1, 1, 1), inv, 1.0), 1.0 / 3.0, 1e-12);
    assert_true(gy_bvh_box_ray(&b, gy_v3(-1, 1.0001, 0.5), inv, 1.0) < 0.0);
    assert_true(gy_bvh_box_ray(&b, gy_v3(-1, 0.5, -1e-9), inv, 1.0) < 0.0);
    /* A negative zero component behaves like a positive one. */
    gy_vec3 neg = gy_v3(-3, -0.0, 0), ninv = gy_bvh_ray_inverse(neg);
    assert_near(gy_bvh_box_ray(&b, gy_v3(2, 0, 0.5), ninv, 1.0), 1.0 / 3.0, 1e-12);
    /* Starting inside enters at 0; a limit short of the box misses. */
    assert_near(gy_bvh_box_ray(&b, gy_v3(0.5, 0.5, 0.5), inv, 1.0), 0.0, 0.0);
    assert_true(gy_bvh_box_ray(&b, gy_v3(-1, 0.5, 0.5), inv, 0.3) < 0.0);
}

static void test_bvh_rebuild_and_copy_allocate_nothing_at_peak(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_test_rng r = {31337};
    scene s;
    scene_init(&s, 2000, &r);
    gy_bvh bvh, copy;
    gy_bvh_builder b = {0};
    gy_bvh_init(&bvh, true);
    gy_bvh_init(&copy, true);
    assert_result(gy_bvh_build(&bvh, &b, &ta.base, s.items, s.n, s.boxes, s.n), GY_OK);
    assert_result(gy_bvh_copy(&copy, &bvh, &ta.base, s.n), GY_OK);
    uint64_t before = ta.allocs + ta.reallocs;
    for (int k = 0; k < 20; k++) {
        uint32_t count = s.n - (uint32_t)k * 50u; /* smaller trees fit too */
        assert_result(gy_bvh_build(&bvh, &b, &ta.base, s.items, count, s.boxes, s.n), GY_OK);
        assert_result(gy_bvh_copy(&copy, &bvh, &ta.base, s.n), GY_OK);
        assert_true(gy_bvh_is_valid(&copy, s.boxes, count));
    }
    assert_int_equal(ta.allocs + ta.reallocs, before);
    gy_bvh_fini(&bvh, &ta.base);
    gy_bvh_fini(&copy, &ta.base);
    gy_bvh_builder_fini(&b, &ta.base);
    assert_int_equal(ta.live_bytes, 0);
    scene_fini(&s);
}

static bool count_item(void *ctx, uint32_t item)
{
    (void)item;
    (*(uint32_t *)ctx)++;
    return true;
}

/* Boxes a snapshot of huge colliders gives the tree (stored as float: beyond 3.4e38 they are
 * infinite, and their centroids and split costs NaN): the build picks no plane from NaN costs and
 * never indexes an axis of -1 or converts NaN to an integer (UBSan), and the tree still holds
 * every item. */
static void test_bvh_build_is_safe_for_infinite_and_huge_boxes(void **state)
{
    (void)state;
    enum { N = 64 };
    gy_bvh_box boxes[N];
    uint32_t items[N];
    for (uint32_t i = 0; i < N; i++) {
        items[i] = i;
        float c = (float)i;
        switch (i % 4) {
        case 0:
            boxes[i] =
                (gy_bvh_box){{-INFINITY, -INFINITY, -INFINITY}, {INFINITY, INFINITY, INFINITY}};
            break;
        case 1:
            boxes[i] = (gy_bvh_box){{-FLT_MAX, c, c}, {FLT_MAX, c + 1, c + 1}};
            break;
        case 2:
            boxes[i] = (gy_bvh_box){{c, -INFINITY, c}, {c + 1, c + 1, c + 1}};
            break;
        default:
            boxes[i] = (gy_bvh_box){{c, c, c}, {c + 1, c + 1, c + 1}};
            break;
        }
    }
    /* All infinite as well: every centroid is NaN. */
    for (int all = 0; all < 2; all++) {
        uint32_t n = all ? N / 4 : N;
        gy_bvh_box *in = boxes;
        gy_bvh_box inf[N / 4];
        if (all) {
            for (uint32_t i = 0; i < n; i++)
                inf[i] = boxes[0];
            in = inf;
        }
        gy_bvh bvh;
        gy_bvh_builder b = {0};
        gy_bvh_init(&bvh, true);
        const gy_allocator *a = gy_default_allocator();
        assert_result(gy_bvh_build(&bvh, &b, a, items, n, in, n), GY_OK);
        assert_true(bvh.depth < GY_BVH_MAX_DEPTH);
        gy_bvh_box everything = {{-INFINITY, -INFINITY, -INFINITY}, {INFINITY, INFINITY, INFINITY}};
        uint32_t found = 0;
        gy_bvh_overlap(&bvh, &everything, count_item, &found);
        assert_int_equal(found, n);
        gy_bvh_fini(&bvh, a);
        gy_bvh_builder_fini(&b, a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bvh_raycast_matches_brute_force),
        cmocka_unit_test(test_bvh_build_in_slices_matches_one_build_and_keeps_to_each_slice),
        cmocka_unit_test(test_bvh_refit_after_moves_matches_brute_force),
        cmocka_unit_test(test_bvh_refit_item_stops_where_nothing_changes),
        cmocka_unit_test(test_bvh_overlap_matches_brute_force),
        cmocka_unit_test(test_bvh_raycast_visits_nearer_first_and_stops_early),
        cmocka_unit_test(test_bvh_raycast_stops_when_told),
        cmocka_unit_test(test_bvh_build_handles_degenerate_input),
        cmocka_unit_test(test_bvh_box_from_rounds_outward),
        cmocka_unit_test(test_bvh_box_ray_counts_touching_faces),
        cmocka_unit_test(test_bvh_rebuild_and_copy_allocate_nothing_at_peak),
        cmocka_unit_test(test_bvh_build_is_safe_for_infinite_and_huge_boxes),
    };
    return cmocka_run_group_tests_name("bvh", tests, NULL, NULL);
}
