/* Editing a bounding-volume hierarchy in place (collision/src/bvh.c: insert, remove, AVL rotations,
 * logged mirrors) and the query snapshot's use of it for large static trees: every traversal must
 * agree with a brute force over the live items after any sequence of edits, the tree must stay
 * balanced, mirrors must become exact copies of the writer's tree, and a streaming snapshot must
 * never rebuild its static tree nor allocate once it has reached its peak size. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../collision/src/bvh.h"
#include "gyre/math.h"
#include "query_snapshot.h"

/* Spheres, some of them in the tree. */
typedef struct pool {
    uint32_t n;
    gy_vec3 center[4096];
    double radius[4096];
    gy_bvh_box boxes[4096];
    bool live[4096];
    uint32_t live_count;
} pool;

static void pool_place(pool *p, uint32_t i, gy_test_rng *r)
{
    p->center[i] = gy_test_rnd_vec(r, -100.0, 100.0);
    p->radius[i] = gy_test_rnd_in(r, 0.5, 4.0);
    gy_vec3 e = gy_v3(p->radius[i], p->radius[i], p->radius[i]);
    p->boxes[i] = gy_bvh_box_from(gy_v3_sub(p->center[i], e), gy_v3_add(p->center[i], e));
}

/* Entry t of o + t·d into the sphere, or -1 (also when starting inside). */
static double sphere_t(gy_vec3 c, double rad, gy_vec3 o, gy_vec3 d)
{
    gy_vec3 m = gy_v3_sub(o, c);
    double a = gy_v3_dot(d, d), b = gy_v3_dot(m, d), cc = gy_v3_dot(m, m) - rad * rad;
    if (cc <= 0.0)
        return -1.0;
    double disc = b * b - a * cc;
    if (b > 0.0 || disc < 0.0)
        return -1.0;
    return (-b - sqrt(disc)) / a;
}

typedef struct closest {
    const pool *p;
    gy_vec3 o, d;
    uint32_t best;
    double best_t;
} closest;

static double closest_visit(void *ctx, uint32_t item, double t_max)
{
    closest *c = ctx;
    assert_true(c->p->live[item]); /* a removed item is never reached */
    double t = sphere_t(c->p->center[item], c->p->radius[item], c->o, c->d);
    if (t >= 0.0 && t <= t_max) {
        c->best = item;
        c->best_t = t;
        return t;
    }
    return t_max;
}

static void check_rays(const gy_bvh *bvh, const pool *p, gy_test_rng *r, int rays)
{
    for (int k = 0; k < rays; k++) {
        gy_vec3 o = gy_test_rnd_vec(r, -120.0, 120.0),
                d = gy_v3_scale(gy_test_rnd_vec(r, -1.0, 1.0), 250.0);
        closest c = {p, o, d, GY_BVH_NONE, 1.0};
        gy_bvh_raycast(bvh, o, d, 1.0, closest_visit, &c);
        uint32_t want = GY_BVH_NONE;
        double want_t = 1.0;
        for (uint32_t i = 0; i < p->n; i++) {
            if (!p->live[i])
                continue;
            double t = sphere_t(p->center[i], p->radius[i], o, d);
            if (t >= 0.0 && t <= want_t && (want == GY_BVH_NONE || t < want_t)) {
                want = i;
                want_t = t;
            }
        }
        assert_int_equal(c.best, want);
    }
}

static void insert(gy_bvh *t, pool *p, uint32_t i)
{
    assert_false(p->live[i]);
    assert_result(gy_bvh_insert(t, gy_default_allocator(), i, p->boxes[i], p->n), GY_OK);
    p->live[i] = true;
    p->live_count++;
}

static void erase(gy_bvh *t, pool *p, uint32_t i)
{
    assert_true(p->live[i]);
    gy_bvh_remove(t, i);
    p->live[i] = false;
    p->live_count--;
}

static void test_bvh_edit_insert_remove_match_brute_force(void **state)
{
    (void)state;
    gy_test_rng r = {0x5eed};
    pool *p = test_calloc(1, sizeof *p);
    p->n = 3000;
    for (uint32_t i = 0; i < p->n; i++)
        pool_place(p, i, &r);
    gy_bvh t;
    gy_bvh_editor e;
    gy_bvh_builder b = {0};
    gy_bvh_init(&t, true);
    gy_bvh_editor_init(&e);
    t.editor = &e;
    /* Built from the first thousand, then edited. */
    uint32_t items[1000];
    for (uint32_t i = 0; i < 1000; i++) {
        items[i] = i;
        p->live[i] = true;
    }
    p->live_count = 1000;
    assert_result(gy_bvh_build(&t, &b, gy_default_allocator(), items, 1000, p->boxes, p->n), GY_OK);
    assert_true(t.ordered);
    assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
    for (uint32_t i = 1000; i < 3000; i++)
        insert(&t, p, i);
    assert_false(t.ordered);
    assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
    check_rays(&t, p, &r, 300);
    /* Churn: remove a random live item, insert a random dead one, 5,000 times. */
    for (int k = 0; k < 5000; k++) {
        uint32_t i = (uint32_t)(gy_test_rnd(&r) * p->n);
        if (p->live[i])
            erase(&t, p, i);
        else
            insert(&t, p, i);
        if (k % 1000 == 999)
            assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
    }
    check_rays(&t, p, &r, 300);
    /* Down to nothing, then up again from an empty tree. */
    for (uint32_t i = 0; i < p->n; i++)
        if (p->live[i])
            erase(&t, p, i);
    assert_int_equal(t.node_count, 0);
    assert_true(gy_bvh_is_valid(&t, p->boxes, 0));
    for (uint32_t i = 0; i < 50; i++)
        insert(&t, p, i * 7u);
    assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
    check_rays(&t, p, &r, 100);
    assert_true(e.rotations > 0);
    gy_bvh_fini(&t, gy_default_allocator());
    gy_bvh_editor_fini(&e, gy_default_allocator());
    gy_bvh_builder_fini(&b, gy_default_allocator());
    test_free(p);
}

/* Items along a line, inserted in order: a tree without rebalancing would grow one level per
 * item; AVL keeps it within 1.44 log2(n + 2). */
static void test_bvh_edit_stays_balanced_under_sorted_inserts(void **state)
{
    (void)state;
    pool *p = test_calloc(1, sizeof *p);
    p->n = 4096;
    for (uint32_t i = 0; i < p->n; i++) {
        p->center[i] = gy_v3((double)i, 0, 0);
        p->radius[i] = 0.4;
        p->boxes[i] =
            gy_bvh_box_from(gy_v3((double)i - 0.4, -0.4, -0.4), gy_v3((double)i + 0.4, 0.4, 0.4));
    }
    gy_bvh t;
    gy_bvh_editor e;
    gy_bvh_init(&t, true);
    gy_bvh_editor_init(&e);
    t.editor = &e;
    for (uint32_t i = 0; i < p->n; i++)
        insert(&t, p, i);
    assert_true(gy_bvh_is_valid(&t, p->boxes, p->n));
    assert_true((double)t.depth <= 1.44 * log2((double)p->n + 2.0));
    /* Removing every other one keeps it valid and no deeper. */
    uint32_t depth = t.depth;
    for (uint32_t i = 0; i < p->n; i += 2)
        erase(&t, p, i);
    assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
    assert_true(t.depth <= depth);
    gy_test_rng r = {77};
    check_rays(&t, p, &r, 200);
    gy_bvh_fini(&t, gy_default_allocator());
    gy_bvh_editor_fini(&e, gy_default_allocator());
    test_free(p);
}

/* Every mirror catches up to an exact copy, whenever it is brought up to date; a mirror that took
 * a whole copy forgets the log; refits are logged too, and a full refit works on an edited tree. */
static void test_bvh_edit_mirrors_become_exact_copies(void **state)
{
    (void)state;
    gy_test_rng r = {0xfeed};
    pool *p = test_calloc(1, sizeof *p);
    p->n = 2048;
    for (uint32_t i = 0; i < p->n; i++)
        pool_place(p, i, &r);
    gy_bvh t, m[GY_BVH_MIRRORS];
    gy_bvh_editor e;
    gy_bvh_init(&t, true);
    gy_bvh_editor_init(&e);
    t.editor = &e;
    for (unsigned k = 0; k < GY_BVH_MIRRORS; k++)
        gy_bvh_init(&m[k], true);
    for (uint32_t i = 0; i < 1500; i++)
        insert(&t, p, i);
    for (int round = 0; round < 60; round++) {
        for (int k = 0; k < 40; k++) {
            uint32_t i = (uint32_t)(gy_test_rnd(&r) * p->n);
            if (p->live[i] && p->live_count > 1)
                erase(&t, p, i);
            else if (!p->live[i])
                insert(&t, p, i);
        }
        if (round % 7 == 3) { /* some live items move: refit, logged */
            for (uint32_t i = 0; i < p->n; i++)
                if (p->live[i] && gy_test_rnd(&r) < 0.02) {
                    pool_place(p, i, &r);
                    gy_bvh_refit_item(&t, i, p->boxes[i]);
                }
        }
        if (round == 30) { /* most of them move: one refit over the edited tree */
            for (uint32_t i = 0; i < p->n; i++)
                pool_place(p, i, &r);
            gy_bvh_refit_all(&t, p->boxes);
        }
        assert_true(gy_bvh_is_valid(&t, p->boxes, p->live_count));
        /* Mirror k catches up every (k + 1)-th round; mirror 2 takes a whole copy at round 10. */
        for (unsigned k = 0; k < GY_BVH_MIRRORS; k++) {
            if (round % (int)(k + 1) != 0)
                continue;
            if (k == 2 && round == 10) {
                assert_result(gy_bvh_copy(&m[k], &t, gy_default_allocator(), p->n), GY_OK);
                gy_bvh_editor_forget(&e, k);
            } else {
                assert_result(gy_bvh_mirror(&m[k], &t, k, gy_default_allocator(), p->n), GY_OK);
            }
            assert_int_equal(e.counts[k], 0);
            assert_int_equal(m[k].node_count, t.node_count);
            assert_int_equal(m[k].depth, t.depth);
            assert_memory_equal(m[k].nodes, t.nodes, (size_t)t.node_count * sizeof *t.nodes);
            for (uint32_t i = 0; i < p->n; i++)
                if (p->live[i])
                    assert_int_equal(m[k].leaf_of[i], t.leaf_of[i]);
        }
    }
    /* Mirror 1 last caught up at round 58: once more, and it answers for the tree as it is. */
    assert_result(gy_bvh_mirror(&m[1], &t, 1, gy_default_allocator(), p->n), GY_OK);
    check_rays(&m[1], p, &r, 200);
    gy_bvh_fini(&t, gy_default_allocator());
    for (unsigned k = 0; k < GY_BVH_MIRRORS; k++)
        gy_bvh_fini(&m[k], gy_default_allocator());
    gy_bvh_editor_fini(&e, gy_default_allocator());
    test_free(p);
}

/* ---- the query snapshot's static tree -------------------------------------------------------- */

#define STREAM_STATICS 2000u
#define STREAM_SLOTS   2400u

static gy_snapshot_entry static_sphere(gy_vec3 c, double radius, uint32_t attachment)
{
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_SPHERE;
    e.shape.radius = radius;
    e.pose.position = c;
    e.body.generation = attachment;
    e.body.index = attachment;
    e.motion = GY_MOTION_STATIC;
    return e;
}

/* What each slot held at some publish: for checking a view against the world it describes. */
typedef struct world_state {
    bool live[STREAM_SLOTS];
    gy_vec3 center[STREAM_SLOTS];
    double radius[STREAM_SLOTS];
    uint32_t attachment[STREAM_SLOTS];
} world_state;

static void check_view(const gy_snapshot_view *v, const world_state *w, gy_test_rng *r, int rays)
{
    for (int k = 0; k < rays; k++) {
        gy_vec3 o = gy_test_rnd_vec(r, -110.0, 110.0),
                d = gy_v3_scale(gy_test_rnd_vec(r, -1.0, 1.0), 200.0);
        gy_snapshot_hit hit;
        uint32_t n = 0;
        assert_result(gy_snapshot_view_raycast(v, o, d, NULL, GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
        uint32_t want = UINT32_MAX;
        double want_t = 1.0;
        for (uint32_t s = 0; s < STREAM_SLOTS; s++) {
            if (!w->live[s])
                continue;
            double t = sphere_t(w->center[s], w->radius[s], o, d);
            if (t >= 0.0 && t <= want_t && (want == UINT32_MAX || t < want_t)) {
                want = s;
                want_t = t;
            }
        }
        assert_int_equal(n, want != UINT32_MAX ? 1u : 0u);
        if (n == 1) {
            assert_int_equal(hit.slot, want);
            assert_int_equal(hit.body.generation, w->attachment[want]);
            assert_near(hit.fraction, want_t, 1e-9);
        }
    }
    /* Bounds come from each view's own copy of the tree (its leaf map). */
    for (uint32_t s = 0; s < STREAM_SLOTS; s += 37) {
        gy_snapshot_entry_info info;
        gy_result res = gy_snapshot_view_get(v, s, &info);
        if (!w->live[s]) {
            assert_result(res, GY_ERR_STALE_HANDLE);
            continue;
        }
        assert_result(res, GY_OK);
        assert_true(info.bounds_min.x <= w->center[s].x - w->radius[s] + 1e-6);
        assert_true(info.bounds_max.x >= w->center[s].x + w->radius[s] - 1e-6);
        assert_near(info.bounds_max.x - info.bounds_min.x, 2.0 * w->radius[s], 1e-4);
    }
}

/* One tick of streaming: a "cell" of 60 statics leaves and another arrives elsewhere, so the
 * count stays the same; every ninth tick a static is teleported. */
static void stream_cell(gy_query_snapshot *qs, world_state *now, gy_test_rng *rng,
                        uint32_t *next_attachment, uint64_t tick)
{
    /* On odd ticks the freed slots are reused at once (as the physics thread reuses collider
     * slots), on even ticks other free slots are taken. */
    uint32_t freed[60], nf = 0;
    while (nf < 60) {
        uint32_t s = (uint32_t)(gy_test_rnd(rng) * STREAM_SLOTS);
        if (!now->live[s])
            continue;
        assert_result(gy_query_snapshot_remove(qs, s), GY_OK);
        now->live[s] = false;
        freed[nf++] = s;
    }
    gy_vec3 cell = gy_test_rnd_vec(rng, -90, 90);
    for (uint32_t k = 0; k < 60; k++) {
        uint32_t s = freed[k];
        if (tick % 2 == 0) {
            do
                s = (uint32_t)(gy_test_rnd(rng) * STREAM_SLOTS);
            while (now->live[s]);
        }
        now->live[s] = true;
        now->center[s] = gy_v3_add(cell, gy_test_rnd_vec(rng, -8, 8));
        now->radius[s] = gy_test_rnd_in(rng, 0.3, 2.0);
        now->attachment[s] = (*next_attachment)++;
        gy_snapshot_entry e = static_sphere(now->center[s], now->radius[s], now->attachment[s]);
        assert_result(gy_query_snapshot_set(qs, s, &e), GY_OK);
    }
    if (tick % 9 == 0) { /* a static is teleported now and then: refit in place */
        for (uint32_t s = 0; s < STREAM_SLOTS; s++)
            if (now->live[s]) {
                now->center[s] = gy_test_rnd_vec(rng, -100, 100);
                gy_pose pose = {now->center[s], gy_quat_identity()};
                assert_result(gy_query_snapshot_move(qs, s, pose), GY_OK);
                break;
            }
    }
}

/* A snapshot allocating from `ta` with STREAM_STATICS random static spheres set (not yet
 * published); `now` is the world it holds. */
static gy_query_snapshot *streamed_snapshot(gy_test_allocator *ta, world_state *now, gy_test_rng *r,
                                            uint32_t *next_attachment)
{
    gy_query_snapshot_def def = {&ta->base, 0};
    gy_query_snapshot *qs = NULL;
    assert_result(gy_query_snapshot_create(&def, &qs), GY_OK);
    for (uint32_t s = 0; s < STREAM_STATICS; s++) {
        now->live[s] = true;
        now->center[s] = gy_test_rnd_vec(r, -100, 100);
        now->radius[s] = gy_test_rnd_in(r, 0.3, 2.0);
        now->attachment[s] = (*next_attachment)++;
        gy_snapshot_entry e = static_sphere(now->center[s], now->radius[s], now->attachment[s]);
        assert_result(gy_query_snapshot_set(qs, s, &e), GY_OK);
    }
    return qs;
}

/* Statics streamed in and out (slots reused, as the physics thread reuses collider slots), the
 * reader holding views for a while: the static tree is edited in place at every publish, every
 * view answers for the world of its own publish, and nothing allocates after warming up. */
static void test_query_snapshot_streams_statics_in_place(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    world_state *now = test_calloc(1, sizeof *now), *held = test_calloc(1, sizeof *held);
    gy_test_rng r = {0xc0ffee};
    uint32_t next_attachment = 1;
    gy_query_snapshot *qs = streamed_snapshot(&ta, now, &r, &next_attachment);
    assert_result(gy_query_snapshot_publish(qs, 1), GY_OK);
    gy_query_snapshot_stats st;
    gy_query_snapshot_get_stats(qs, &st);
    assert_int_equal(st.static_rebuilds, 1);
    const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
    check_view(v, now, &r, 50);
    uint64_t allocs_before = 0;
    for (uint64_t tick = 2; tick <= 120; tick++) {
        stream_cell(qs, now, &r, &next_attachment, tick);
        assert_result(gy_query_snapshot_publish(qs, tick), GY_OK);
        /* The reader takes every publish for a while, then holds one view across ten. */
        bool hold = tick >= 40 && tick < 50;
        if (!hold) {
            v = gy_query_snapshot_acquire(qs);
            assert_int_equal(gy_snapshot_view_tick(v), tick);
            check_view(v, now, &r, 20);
            *held = *now;
        } else {
            check_view(v, held, &r, 5); /* still the world of tick 39 */
        }
        if (tick == 80)
            allocs_before = ta.allocs + ta.reallocs;
    }
    assert_int_equal(ta.allocs + ta.reallocs, allocs_before);
    gy_query_snapshot_get_stats(qs, &st);
    /* Edited at every publish; rebuilt only at the start and at the 64th publish, because a
     * static had been teleported (the periodic rebuild of a tree whose entries moved). */
    assert_int_equal(st.static_rebuilds, 2);
    assert_int_equal(st.static_edits, 119);
    assert_int_equal(st.static_entries, STREAM_STATICS);
    gy_query_snapshot_destroy(qs);
    assert_int_equal(ta.live_bytes, 0);
    test_free(now);
    test_free(held);
}

/* Statics that stay put for a while let go of the spare tree copies and of the master's edit
 * logs; streaming again later makes whole copies, logs again from there, and every view still
 * answers for the world of its own publish. */
static void test_query_snapshot_streams_again_after_statics_stayed_put(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    world_state *now = test_calloc(1, sizeof *now), *held = test_calloc(1, sizeof *held);
    gy_test_rng r = {0xfeed};
    uint32_t next_attachment = 1;
    gy_query_snapshot *qs = streamed_snapshot(&ta, now, &r, &next_attachment);
    const gy_snapshot_view *v = NULL;
    int64_t streaming_bytes = 0;
    gy_query_snapshot_stats st;
    for (uint64_t tick = 1; tick <= 400; tick++) {
        /* Streams for 20 ticks, stays put for 140, streams for 40 (the reader holding one
         * view across ten of them), then stays put again. A teleported static makes the
         * periodic rebuild at the next 64th publish switch copies once more, so the spares go
         * 64 publishes after that. */
        bool streams = (tick > 1 && tick <= 20) || (tick > 160 && tick <= 200);
        if (streams)
            stream_cell(qs, now, &r, &next_attachment, tick);
        assert_result(gy_query_snapshot_publish(qs, tick), GY_OK);
        bool hold = tick >= 170 && tick < 180;
        if (!hold) {
            v = gy_query_snapshot_acquire(qs);
            assert_int_equal(gy_snapshot_view_tick(v), tick);
            check_view(v, now, &r, 10);
            *held = *now;
        } else {
            check_view(v, held, &r, 5); /* still the world of tick 169 */
        }
        if (tick == 20 || tick == 200)
            streaming_bytes = ta.live_bytes;
        if (tick == 160 || tick == 400) {
            /* The spares (tree copies, pages, the master's logs) went back to the allocator. */
            assert_true(ta.live_bytes + 2 * STREAM_STATICS * 13 < streaming_bytes);
        }
        if (tick == 180) {
            gy_query_snapshot_get_stats(qs, &st);
            assert_true(st.static_tree_switches > 0);
        }
    }
    gy_query_snapshot_get_stats(qs, &st);
    assert_true(st.static_edits > 50);
    gy_query_snapshot_destroy(qs);
    assert_int_equal(ta.live_bytes, 0);
    test_free(now);
    test_free(held);
}

/* Below the size where editing pays, or when most of the tree changes at once, it is rebuilt. */
static void test_query_snapshot_small_or_wholesale_changes_rebuild(void **state)
{
    (void)state;
    gy_query_snapshot *qs = NULL;
    assert_result(gy_query_snapshot_create(NULL, &qs), GY_OK);
    gy_test_rng r = {4};
    for (uint32_t s = 0; s < 1500; s++) {
        gy_snapshot_entry e = static_sphere(gy_test_rnd_vec(&r, -50, 50), 0.5, s + 1);
        assert_result(gy_query_snapshot_set(qs, s, &e), GY_OK);
    }
    assert_result(gy_query_snapshot_publish(qs, 1), GY_OK);
    gy_query_snapshot_stats st;
    /* 10 changes in 1,500: edited. */
    for (uint32_t s = 0; s < 10; s++)
        assert_result(gy_query_snapshot_remove(qs, s), GY_OK);
    assert_result(gy_query_snapshot_publish(qs, 2), GY_OK);
    gy_query_snapshot_get_stats(qs, &st);
    assert_int_equal(st.static_rebuilds, 1);
    assert_int_equal(st.static_edits, 1);
    /* 600 changes in 1,490: more than a quarter, rebuilt. */
    for (uint32_t s = 10; s < 610; s++)
        assert_result(gy_query_snapshot_remove(qs, s), GY_OK);
    assert_result(gy_query_snapshot_publish(qs, 3), GY_OK);
    gy_query_snapshot_get_stats(qs, &st);
    assert_int_equal(st.static_rebuilds, 2);
    /* 890 left, under the 1,024 where editing starts: rebuilt. */
    assert_result(gy_query_snapshot_remove(qs, 700), GY_OK);
    assert_result(gy_query_snapshot_publish(qs, 4), GY_OK);
    gy_query_snapshot_get_stats(qs, &st);
    assert_int_equal(st.static_rebuilds, 3);
    assert_int_equal(st.static_edits, 1);
    const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(v, 700, &info), GY_ERR_STALE_HANDLE);
    assert_result(gy_snapshot_view_get(v, 701, &info), GY_OK);
    gy_query_snapshot_destroy(qs);
}

/* Switching the logs: a NULL editor or allocator is refused, and turning them on when an
 * allocation fails (each of the dirty bits and the mirrors' lists in turn) answers
 * GY_ERR_OUT_OF_MEMORY and leaves the editor without logs and the heap as it was. */
static void test_bvh_edit_logging_switch_refuses_misuse_and_failed_allocation(void **state)
{
    (void)state;
    gy_test_rng r = {0x10c5};
    pool *p = test_calloc(1, sizeof *p);
    p->n = 200;
    for (uint32_t i = 0; i < p->n; i++)
        pool_place(p, i, &r);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_bvh t;
    gy_bvh_editor e;
    gy_bvh_init(&t, true);
    gy_bvh_editor_init(&e);
    t.editor = &e;
    for (uint32_t i = 0; i < p->n; i++)
        assert_result(gy_bvh_insert(&t, &ta.base, i, p->boxes[i], p->n), GY_OK);
    assert_true(e.logging && e.capacity > 0);

    assert_result(gy_bvh_editor_set_logging(NULL, &ta.base, false), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_bvh_editor_set_logging(&e, NULL, false), GY_ERR_INVALID_ARGUMENT);
    assert_true(e.logging);
    assert_non_null(e.dirty);

    assert_result(gy_bvh_editor_set_logging(&e, &ta.base, false), GY_OK);
    assert_false(e.logging);
    assert_null(e.dirty);
    assert_result(gy_bvh_editor_set_logging(&e, NULL, true), GY_ERR_INVALID_ARGUMENT);
    assert_false(e.logging);

    int64_t blocks = ta.live_blocks, bytes = ta.live_bytes;
    for (uint64_t k = 1; k <= 1u + GY_BVH_MIRRORS; k++) {
        ta.fail_at = ta.calls + k;
        assert_result(gy_bvh_editor_set_logging(&e, &ta.base, true), GY_ERR_OUT_OF_MEMORY);
        assert_false(e.logging);
        assert_null(e.dirty);
        for (unsigned m = 0; m < GY_BVH_MIRRORS; m++) {
            assert_null(e.lists[m]);
            assert_int_equal(e.counts[m], 0);
        }
        assert_int_equal(ta.live_blocks, blocks);
        assert_int_equal(ta.live_bytes, bytes);
    }
    ta.fail_at = 0;
    assert_result(gy_bvh_editor_set_logging(&e, &ta.base, true), GY_OK);
    assert_true(e.logging);
    assert_non_null(e.dirty);

    gy_bvh_editor_fini(&e, &ta.base);
    gy_bvh_fini(&t, &ta.base);
    assert_int_equal(ta.live_blocks, 0);
    test_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bvh_edit_insert_remove_match_brute_force),
        cmocka_unit_test(test_bvh_edit_stays_balanced_under_sorted_inserts),
        cmocka_unit_test(test_bvh_edit_mirrors_become_exact_copies),
        cmocka_unit_test(test_bvh_edit_logging_switch_refuses_misuse_and_failed_allocation),
        cmocka_unit_test(test_query_snapshot_streams_statics_in_place),
        cmocka_unit_test(test_query_snapshot_streams_again_after_statics_stayed_put),
        cmocka_unit_test(test_query_snapshot_small_or_wholesale_changes_rebuild),
    };
    return cmocka_run_group_tests_name("bvh_edit", tests, NULL, NULL);
}
