/* Shared fixtures for the physics-thread suites (test_physics_*.c): scene builders, a reply
 * recorder and small waits. Header-only (static functions), one copy per test binary. */
#ifndef GYRE_TEST_PHYSICS_FIXTURE_H
#define GYRE_TEST_PHYSICS_FIXTURE_H

#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "physics_state.h"

#define FX_TIMEOUT_NS 20000000000ull /* 20 s: generous for TSan on a shared 2-core machine */

/* ---- descriptions ---------------------------------------------------------------------------- */

/* A body description whose collider array lives inside it (so it can be copied by value), with
 * the generation the test expects its ref to get (0: whatever the pool issues). */
typedef struct fx_body {
    gy_physics_body_def desc;
    gy_collider_def collider;
    uint32_t index; /* the index the test expects its ref to get (fx_issue_at) */
    uint32_t generation;
} fx_body;

static inline gy_physics_body_ref fx_ref(uint32_t index, uint32_t generation)
{
    gy_physics_body_ref r = {index, generation};
    return r;
}

/* Where the pool's counter stands: the generation the next create issues. A test names its
 * bodies by the generations it chose by moving the counter there first (it must keep them
 * unique, as the pool does). */
static inline void fx_issue_next(gy_physics *p, uint32_t generation)
{
    p->game.ids.next = generation;
}

/* Makes the pool issue `index` next when it is free (the pool issues the lowest free index; a
 * test names its bodies by the indices it chose by starting the pool's search there: the indices
 * it skips stay free). */
static inline void fx_issue_at(gy_physics *p, uint32_t index)
{
    p->game.ids.free_from = index;
}

static inline gy_physics_body_def *fx_desc(fx_body *b)
{
    b->desc.colliders = &b->collider;
    b->desc.collider_count = 1;
    return &b->desc;
}

/* One body of one collider of `shape`, default settings otherwise. */
static inline fx_body fx_shaped(uint32_t index, uint32_t generation, gy_motion_type type,
                                gy_vec3 position, gy_shape shape)
{
    fx_body b;
    memset(&b, 0, sizeof b);
    b.index = index;
    b.generation = generation;
    b.desc.def = gy_default_body_def();
    b.desc.def.type = type;
    b.desc.def.pose.position = position;
    b.collider = gy_default_collider_def();
    b.collider.shape = shape;
    return b;
}

static inline fx_body fx_box(uint32_t store_index, uint32_t generation, gy_motion_type type,
                             gy_vec3 position, gy_vec3 size)
{
    gy_shape s = gy_default_collider_def().shape;
    s.type = GY_SHAPE_BOX;
    s.box_size = size;
    return fx_shaped(store_index, generation, type, position, s);
}

static inline fx_body fx_sphere(uint32_t store_index, uint32_t generation, gy_vec3 position,
                                double radius)
{
    gy_shape s = gy_default_collider_def().shape;
    s.type = GY_SHAPE_SPHERE;
    s.radius = radius;
    return fx_shaped(store_index, generation, GY_MOTION_DYNAMIC, position, s);
}

/* A 40 m static floor whose top face is y = 0. */
static inline fx_body fx_floor(uint32_t store_index, uint32_t generation)
{
    return fx_box(store_index, generation, GY_MOTION_STATIC, gy_v3(0, -0.5, 0), gy_v3(40, 1, 40));
}

/* Records the create with the pool's counter at b->generation (when not 0); the ref in *out
 * (optional). */
static inline gy_result fx_record(gy_physics *p, fx_body *b, gy_physics_body_ref *out)
{
    gy_physics_body_ref ref = {0, 0};
    if (b->generation != 0 && p != NULL)
        fx_issue_next(p, b->generation);
    if (p != NULL)
        fx_issue_at(p, b->index);
    gy_result r = gy_physics_record_create_body(p, fx_desc(b), &ref);
    if (out != NULL)
        *out = ref;
    return r;
}

static inline gy_physics_body_ref fx_create(gy_physics *p, fx_body b)
{
    gy_physics_body_ref ref;
    assert_result(fx_record(p, &b, &ref), GY_OK);
    if (b.generation != 0)
        assert_int_equal(ref.generation, b.generation);
    assert_int_equal(ref.index, b.index);
    return ref;
}

/* ---- subsystem ------------------------------------------------------------------------------- */

static inline gy_physics *fx_physics(const gy_physics_def *def)
{
    gy_physics *p = NULL;
    assert_result(gy_physics_create(def, &p), GY_OK);
    assert_non_null(p);
    return p;
}

/* A started lockstep subsystem with default gravity and an empty world. */
static inline gy_physics *fx_lockstep(const gy_allocator *alloc)
{
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.allocator = alloc;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    return p;
}

static inline void fx_step(gy_physics *p, uint32_t ticks)
{
    assert_result(gy_physics_step(p, ticks, FX_TIMEOUT_NS), GY_OK);
}

/* `n` proxies of a publish's pages, flat, into `out`. */
static inline void fx_flatten(const gy_proxy *const *pages, uint32_t n, gy_proxy *out)
{
    for (uint32_t i = 0; i < n; i += GY_PROXY_PAGE)
        memcpy(out + i, pages[i >> GY_PROXY_PAGE_SHIFT],
               (n - i < GY_PROXY_PAGE ? n - i : GY_PROXY_PAGE) * sizeof *out);
}

/* The latest publish's proxies read into a flat copy by body index, valid for the next three
 * calls too (the copies take turns). */
static inline const gy_proxy *fx_proxies(gy_physics *p, uint32_t *count, uint64_t *tick)
{
    enum { COPIES = 4 };
    static gy_proxy *copy[COPIES];
    static uint32_t capacity[COPIES];
    static uint32_t turn;
    const gy_proxy *const *pages = NULL;
    uint32_t n = 0;
    assert_result(gy_physics_read_proxies(p, &pages, &n, tick, NULL), GY_OK);
    if (count != NULL)
        *count = n;
    uint32_t k = turn++ % COPIES;
    if (capacity[k] < n + 1u) {
        free(copy[k]);
        capacity[k] = n + 1u;
        copy[k] = calloc(capacity[k], sizeof(gy_proxy));
        assert_non_null(copy[k]);
    }
    fx_flatten(pages, n, copy[k]);
    return copy[k];
}

static inline gy_physics_stats fx_stats(const gy_physics *p)
{
    gy_physics_stats s;
    gy_physics_get_stats(p, &s);
    return s;
}

/* ---- replies --------------------------------------------------------------------------------- */

#define FX_MAX_REPLIES 8192u

typedef struct fx_replies {
    gy_reply r[FX_MAX_REPLIES];
    uint32_t count;
    uint32_t overflow;
} fx_replies;

static inline void fx_on_reply(void *ctx, const gy_reply *r)
{
    fx_replies *rs = ctx;
    if (rs->count < FX_MAX_REPLIES)
        rs->r[rs->count++] = *r;
    else
        rs->overflow++;
}

static inline uint32_t fx_drain(gy_physics *p, fx_replies *rs)
{
    return gy_physics_drain_replies(p, fx_on_reply, rs);
}

static inline uint32_t fx_count_type(const fx_replies *rs, uint16_t type)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rs->count; i++)
        n += rs->r[i].type == type;
    return n;
}

/* ---- waits ----------------------------------------------------------------------------------- */

typedef struct fx_wait_stat {
    const gy_physics *p;
    uint64_t iterations; /* wait until stats.iterations >= this */
    uint64_t ticks;      /* or ticks >= this (UINT64_MAX: ignore) */
} fx_wait_stat;

static inline bool fx_iterations_reached(void *ctx)
{
    fx_wait_stat *w = ctx;
    gy_physics_stats s;
    gy_physics_get_stats(w->p, &s);
    return s.iterations >= w->iterations;
}

static inline bool fx_ticks_reached(void *ctx)
{
    fx_wait_stat *w = ctx;
    return gy_physics_tick(w->p) >= w->ticks;
}

/* Waits until `n` more iterations of a real-time thread have completed. */
static inline void fx_wait_iterations(const gy_physics *p, uint64_t n)
{
    fx_wait_stat w = {p, fx_stats(p).iterations + n, UINT64_MAX};
    assert_true(gy_test_wait_until(fx_iterations_reached, &w, 20.0));
}

#endif
