/* Shared fixtures for the World suites (test_world_*.c): World set-up over the real physics
 * thread (lockstep unless a test says otherwise), descriptions, ticking, collision recorders and
 * a teardown that checks for leaks. Header-only (static functions), one copy per binary. */
#ifndef GYRE_TEST_WORLD_FIXTURE_H
#define GYRE_TEST_WORLD_FIXTURE_H

#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/gyre.h"

#define WFX_DT      (1.0 / 60.0)
#define WFX_TIMEOUT 20000000000ull /* 20 s per lockstep tick: TSan on a shared 2-core machine */

/* ---- worlds ---------------------------------------------------------------------------------- */

static inline gy_world_def wfx_config(gy_test_allocator *ta, bool lockstep)
{
    gy_world_def c = gy_default_world_def();
    c.physics.lockstep = lockstep;
    c.allocator = ta != NULL ? &ta->base : NULL;
    c.step_timeout_ns = WFX_TIMEOUT;
    return c;
}

static inline gy_world *wfx_world_with(const gy_world_def *c)
{
    gy_world *w = NULL;
    assert_result(gy_world_create(c, &w), GY_OK);
    assert_non_null(w);
    return w;
}

/* A lockstep World with default gravity, physics running. */
static inline gy_world *wfx_world(gy_test_allocator *ta)
{
    gy_world_def c = wfx_config(ta, true);
    return wfx_world_with(&c);
}

/* Tears down, requiring that the adapter confirmed zero live objects (when physics ran) and that
 * every byte came back. */
static inline gy_world_teardown wfx_destroy(gy_world *w, gy_test_allocator *ta)
{
    bool running = gy_world_physics_running(w);
    gy_world_teardown rep;
    assert_result(gy_world_destroy(w, &rep), GY_OK);
    if (running) {
        assert_true(rep.adapter_checked);
        assert_int_equal(rep.adapter_live_objects, 0);
    }
    if (ta != NULL) {
        assert_int_equal(ta->live_blocks, 0);
        assert_int_equal(ta->live_bytes, 0);
    }
    return rep;
}

static inline void wfx_tick(gy_world *w, uint32_t frames)
{
    for (uint32_t i = 0; i < frames; i++)
        assert_result(gy_world_tick(w, WFX_DT), GY_OK);
}

/* ---- entities and descriptions ----------------------------------------------------------------
 */

static inline gy_entity wfx_entity(gy_world *w, const char *name, gy_vec3 position)
{
    gy_entity_def d = gy_default_entity_def();
    d.name = name;
    d.position = position;
    gy_entity e;
    assert_result(gy_entity_create(w, &d, &e), GY_OK);
    return e;
}

/* A one-collider description whose collider lives inside it (copyable by value). */
typedef struct wfx_desc {
    gy_physics_component_def desc;
    gy_scene_collider collider;
} wfx_desc;

static inline gy_physics_component_def *wfx_d(wfx_desc *d)
{
    d->desc.colliders = &d->collider;
    d->desc.collider_count = 1;
    return &d->desc;
}

static inline wfx_desc wfx_shape(gy_body_type type, gy_shape shape)
{
    wfx_desc d;
    memset(&d, 0, sizeof d);
    d.desc = gy_default_physics_component_def();
    d.desc.body_type = type;
    if (type == GY_BODY_DYNAMIC) { /* damping is a Dynamic body's setting */
        d.desc.body.linear_damping = 0.0;
        d.desc.body.angular_damping = 0.0;
    }
    d.collider.def = gy_default_collider_def();
    d.collider.def.shape = shape;
    return d;
}

static inline wfx_desc wfx_box(gy_body_type type, gy_vec3 size)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_BOX;
    s.box_size = size;
    return wfx_shape(type, s);
}

static inline wfx_desc wfx_sphere(gy_body_type type, double radius)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_SPHERE;
    s.radius = radius;
    return wfx_shape(type, s);
}

static inline void wfx_add(gy_world *w, gy_entity e, wfx_desc d)
{
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_OK);
}

/* A 40 m static floor whose top face is y = 0. */
static inline gy_entity wfx_ground(gy_world *w)
{
    gy_entity g = wfx_entity(w, "ground", gy_v3(0, -0.5, 0));
    wfx_add(w, g, wfx_box(GY_BODY_STATIC, gy_v3(40, 1, 40)));
    return g;
}

/* A dynamic sphere of radius 0.5 at `position`. */
static inline gy_entity wfx_ball(gy_world *w, const char *name, gy_vec3 position)
{
    gy_entity e = wfx_entity(w, name, position);
    wfx_add(w, e, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    return e;
}

/* The joint's status (GY_OK asserted). */
static inline gy_joint_status wfx_joint_status(const gy_world *w, gy_joint j)
{
    gy_joint_status st;
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    return st;
}

/* A ball joint between the bodies of `a` and `b` at `anchor` (world), created (GY_OK asserted). */
static inline gy_joint wfx_ball_joint(gy_world *w, gy_entity a, gy_entity b, gy_vec3 anchor)
{
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.anchor = anchor;
    gy_joint j;
    assert_result(gy_joint_create(w, a, b, &jd, &j), GY_OK);
    return j;
}

static inline gy_physics_state wfx_state(gy_world *w, gy_entity e)
{
    gy_physics_state s;
    assert_result(gy_body_get_state(w, e, &s), GY_OK);
    return s;
}

static inline gy_pose wfx_world_pose(gy_world *w, gy_entity e)
{
    gy_pose p;
    assert_result(gy_entity_get_world_pose(w, e, &p), GY_OK);
    return p;
}

static inline gy_pose wfx_render_pose(gy_world *w, gy_entity e)
{
    gy_pose p;
    assert_result(gy_entity_get_render_pose(w, e, &p), GY_OK);
    return p;
}

static inline gy_physics_stats wfx_physics_stats(gy_world *w)
{
    gy_physics_stats s;
    gy_physics_get_stats(gy_world_physics(w), &s);
    return s;
}

/* A call that records one command, made with allocation `k` after now refused (ta->fail_at):
 * what it recorded is read two ticks later. Done, it recorded exactly that command; refused, it
 * reports GY_ERR_OUT_OF_MEMORY and recorded nothing. True when refused. */
typedef gy_result (*wfx_recording_call)(gy_world *w, void *ctx);

static inline bool wfx_refused_records_nothing(gy_world *w, gy_test_allocator *ta, uint64_t k,
                                               wfx_recording_call call, void *ctx)
{
    uint64_t applied = wfx_physics_stats(w).commands_applied;
    ta->fail_at = ta->calls + k;
    gy_result r = call(w, ctx);
    ta->fail_at = 0;
    wfx_tick(w, 2);
    uint64_t recorded = wfx_physics_stats(w).commands_applied - applied;
    if (r == GY_OK) {
        assert_int_equal(recorded, 1);
        return false;
    }
    assert_result(r, GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(recorded, 0);
    return true;
}

/* The same call once memory is there again: it succeeds and records its command, once. */
static inline void wfx_call_records_one(gy_world *w, wfx_recording_call call, void *ctx)
{
    uint64_t applied = wfx_physics_stats(w).commands_applied;
    assert_result(call(w, ctx), GY_OK);
    wfx_tick(w, 2);
    assert_int_equal(wfx_physics_stats(w).commands_applied - applied, 1);
}

/* ---- collision recording ----------------------------------------------------------------------
 */

#define WFX_MAX_EVENTS 4096u

typedef struct wfx_events {
    gy_collision_event ev[WFX_MAX_EVENTS];
    uint32_t count;
    uint32_t overflow;
} wfx_events;

static inline void wfx_on_collision(void *ctx, gy_world *w, const gy_collision_event *e)
{
    (void)w;
    wfx_events *r = ctx;
    if (r->count < WFX_MAX_EVENTS)
        r->ev[r->count++] = *e;
    else
        r->overflow++;
}

static inline uint32_t wfx_count_kind(const wfx_events *r, gy_collision_kind kind)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->count; i++)
        n += r->ev[i].kind == kind;
    return n;
}

/* Every pair (self, other, colliders) seen by the recorder runs ENTER (STAY)* EXIT, with the last
 * EXIT optional when `open_ok`. Returns the number of ENTERs. */
static inline uint32_t wfx_check_pairing(const wfx_events *r, bool open_ok)
{
    uint32_t enters = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        const gy_collision_event *e = &r->ev[i];
        if (e->kind != GY_COLLISION_ENTER)
            continue;
        enters++;
        bool closed = false;
        for (uint32_t j = i + 1; j < r->count && !closed; j++) {
            const gy_collision_event *f = &r->ev[j];
            if (!gy_entity_equal(f->self, e->self) || !gy_entity_equal(f->other, e->other) ||
                f->self_collider != e->self_collider || f->other_collider != e->other_collider)
                continue;
            if (f->kind == GY_COLLISION_ENTER)
                fail_msg("event %u: a second ENTER before the EXIT of the pair entered at %u", j,
                         i);
            closed = f->kind == GY_COLLISION_EXIT;
        }
        if (!closed && !open_ok)
            fail_msg("event %u: ENTER never got its EXIT", i);
    }
    /* No EXIT or STAY without an ENTER before it. */
    for (uint32_t i = 0; i < r->count; i++) {
        const gy_collision_event *e = &r->ev[i];
        if (e->kind == GY_COLLISION_ENTER)
            continue;
        bool opened = false;
        for (uint32_t j = i; j-- > 0 && !opened;) {
            const gy_collision_event *f = &r->ev[j];
            if (gy_entity_equal(f->self, e->self) && gy_entity_equal(f->other, e->other) &&
                f->self_collider == e->self_collider && f->other_collider == e->other_collider) {
                if (f->kind == GY_COLLISION_EXIT)
                    fail_msg("event %u: %s after the pair's EXIT at %u", i,
                             e->kind == GY_COLLISION_STAY ? "STAY" : "EXIT", j);
                opened = f->kind == GY_COLLISION_ENTER;
            }
        }
        if (!opened)
            fail_msg("event %u: kind %d without an ENTER", i, (int)e->kind);
    }
    return enters;
}

/* ---- logs -------------------------------------------------------------------------------------
 */

typedef struct wfx_log {
    char last_warning[512];
    uint32_t warnings;
} wfx_log;

static inline void wfx_log_fn(void *ctx, gy_log_level level, const char *message)
{
    wfx_log *l = ctx;
    if (level >= GY_LOG_WARN) {
        l->warnings++;
        snprintf(l->last_warning, sizeof l->last_warning, "%s", message);
    }
}

#endif
