/* Render interpolation: the render time, the results each body is drawn from, and the per-frame
 * list of drawn poses that changed.
 *
 * Every proxy publish stands for a simulated time (its tick × step) that fell due at a known
 * moment of the tick clock. The simulation's clock now is therefore the newest result's time plus
 * the host time since it was due, times the time scale: a function of the host clock alone, not
 * of when the game thread happened to see the result. Bodies are drawn at that clock less the
 * render delay (one step plus the recent due → publish latency by default), clamped to the newest
 * result (no extrapolation) and to the previous frame's time (never backwards), between the two
 * results of each body that bracket it. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

/* The automatic delay moves by at most this fraction of the host time that passes: the drawn
 * motion runs at most 2 % slow or fast while it adapts. */
#define DELAY_RATE 0.02
/* The latency it covers forgets a late publish at this rate (simulated s per host s). */
#define LATENCY_DECAY 0.002
/* ...and covers at most this fraction of a step: a quarter of a step is a 240 Hz frame at the
 * default 60 Hz, so the render lag stays within one step plus one frame at 240 Hz and below. */
#define LATENCY_CAP 0.25
/* ...and at least this fraction: a publish a little later than the recent ones (the physics
 * thread woken a millisecond late) is then no stall. */
#define LATENCY_FLOOR 0.125

/* ---- storage --------------------------------------------------------------------------------- */

gy_result gy_w_render_reserve(gy_world *w, uint32_t moved, uint32_t stores)
{
    /* By an eighth (gy_w_grow): the arrays by store index hold an entry per body, a level's
     * statics included. The mover arrays are sized by the moved list's bound, which counts every
     * mover. */
    uint32_t had = w->motion_capacity;
    gy_result r =
        gy_w_grow(w->alloc, (void **)&w->motion, &w->motion_capacity, stores, sizeof *w->motion);
    if (r != GY_OK)
        return r;
    for (uint32_t i = had; i < w->motion_capacity; i++) {
        memset(&w->motion[i], 0, sizeof w->motion[i]);
        w->motion[i].animating_at = GY_W_NONE;
        w->motion[i].mover = GY_W_NO_MOVER;
    }
    for (uint32_t k = 0; k < GY_W_SAMPLES && r == GY_OK; k++)
        r = gy_w_grow(w->alloc, (void **)&w->samples[k], &w->samples_capacity[k], moved,
                      sizeof *w->samples[k]);
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->mover_store, &w->mover_store_capacity, moved,
                      sizeof *w->mover_store);
    /* A static is listed once at its held pose (creation, teleport, stop), so the animating list
     * holds an entry per store index. The drawn list holds every mover and GY_W_HELD_PER_FRAME
     * bodies at their held pose: a level's statics do not each pay a 64-byte entry for the one
     * frame they are listed in. */
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->animating.items, &w->animating.capacity, stores,
                      sizeof *w->animating.items);
    /* Exactly that: the samples already grow by an eighth, and so it grows with them. */
    uint32_t drawn = w->samples_capacity[0] + GY_W_HELD_PER_FRAME;
    if (r == GY_OK && drawn > w->render_capacity) {
        void *p = gy_realloc(w->alloc, w->render, (size_t)w->render_capacity * sizeof *w->render,
                             (size_t)drawn * sizeof *w->render);
        if (p == NULL)
            return GY_ERR_OUT_OF_MEMORY;
        w->render = p;
        w->render_capacity = drawn;
    }
    /* Only moved bodies enter these. */
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->writeback.items, &w->writeback.capacity, moved,
                      sizeof *w->writeback.items);
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->moved_out, &w->moved_out_capacity, moved,
                      sizeof *w->moved_out);
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->moved_next, &w->moved_next_capacity, moved,
                      sizeof *w->moved_next);
    return r;
}

static void settle(gy_world *w, uint32_t store_index)
{
    gy_w_motion *m = &w->motion[store_index];
    uint32_t at = m->animating_at;
    if (at == GY_W_NONE)
        return;
    uint32_t last = w->animating.items[--w->animating.count];
    w->animating.items[at] = last;
    w->motion[last].animating_at = at;
    m->animating_at = GY_W_NONE;
}

void gy_w_render_claim(gy_world *w, uint32_t store_index, uint32_t slot)
{
    gy_w_motion *m = &w->motion[store_index];
    m->entity = gy_w_entity_handle(w, slot);
    m->count = 0;
}

void gy_w_render_mover(gy_world *w, gy_w_body *c, bool moves)
{
    uint32_t s = c->store;
    gy_w_motion *m = &w->motion[s];
    if (moves == (m->mover != GY_W_NO_MOVER))
        return;
    if (moves) {
        assert(w->mover_count < w->samples_capacity[0] &&
               w->mover_count < w->mover_store_capacity && w->mover_count < GY_W_NO_MOVER);
        m->mover = w->mover_count;
        m->count = 0;
        w->mover_store[w->mover_count++] = s;
        return;
    }
    /* Not recorded (its body was released first), so its held pose is not read until a create
     * sets it. */
    assert(!c->recorded);
    gy_w_held_drop(w, s);
    uint32_t at = m->mover, last = --w->mover_count;
    if (at != last) {
        uint32_t moved = w->mover_store[last];
        for (uint32_t k = 0; k < GY_W_SAMPLES; k++)
            w->samples[k][at] = w->samples[k][last];
        w->velocities[at] = w->velocities[last];
        w->mover_store[at] = moved;
        w->motion[moved].mover = at;
    }
    m->mover = GY_W_NO_MOVER;
    if (m->count > 0) {
        m->count = 0;
        gy_w_render_animate(w, s); /* drawn at its held pose once */
    }
}

void gy_w_render_release(gy_world *w, uint32_t store_index)
{
    assert(w->motion[store_index].mover == GY_W_NO_MOVER);
    settle(w, store_index);
    gy_w_held_drop(w, store_index);
    w->motion[store_index].count = 0;
    w->motion[store_index].entity = gy_entity_null();
    /* The list may name it: it is rebuilt at the next tick, but must not outlive the body. */
    w->render_count = 0;
    w->moved_out_count = 0;
}

void gy_w_render_hold(gy_world *w, const gy_w_body *c)
{
    w->motion[c->store].count = 0;
    gy_w_render_animate(w, c->store); /* listed once, at the held pose */
}

void gy_w_render_push(gy_world *w, uint32_t store_index, const gy_proxy *q, uint64_t tick,
                      bool from_hold)
{
    if (from_hold) {
        /* The held pose (creation or teleport) is where the body was as its first step began. */
        gy_pose h = gy_w_body_pose(w, gy_w_body_of(w, w->store_owner[store_index]));
        float p[3] = {(float)h.position.x, (float)h.position.y, (float)h.position.z};
        float r[4] = {(float)h.rotation.x, (float)h.rotation.y, (float)h.rotation.z,
                      (float)h.rotation.w};
        w->motion[store_index].count = 0;
        gy_w_render_put(w, store_index, p, r, tick - 1u);
        gy_w_held_drop(w, store_index); /* read from its samples from now on */
    }
    gy_w_render_put(w, store_index, q->position, q->rotation, tick);
    gy_w_render_animate(w, store_index);
}

/* ---- poses ----------------------------------------------------------------------------------- */

/* Poses are written through pointers into their destination (a render list entry): returned
 * by value, the 56-byte pose went through the stack, and reading it back before its stores had
 * retired stalled the render pass on every body. */

/* `r` normalised (gy_quat_normalize's result to double rounding). A frame normalises a
 * quaternion per drawn body, and a square root and a division each kept the divider busy: a
 * published rotation is unit to float precision, and a blend of two close ones nearly so, so for
 * a squared length 1 + e with |e| < 1e-4 the series 1 - e/2 + 3e²/8 of 1/sqrt(1 + e) stands in
 * (its error, about 5|e|³/16, is below 3.2e-13). */
static void unit(double x, double y, double z, double w, gy_quat *out)
{
    double l2 = x * x + y * y + z * z + w * w;
    double e = l2 - 1.0;
    double inv;
    if (fabs(e) < 1e-4) {
        inv = 1.0 + e * (-0.5 + 0.375 * e);
    } else {
        double l = sqrt(l2);
        if (l <= 0.0) {
            *out = gy_quat_identity();
            return;
        }
        inv = 1.0 / l;
    }
    out->x = x * inv;
    out->y = y * inv;
    out->z = z * inv;
    out->w = w * inv;
}

static void sample(const gy_w_sample *a, gy_pose *out)
{
    const float *p = a->position, *r = a->rotation;
    out->position = gy_v3(p[0], p[1], p[2]);
    unit(r[0], r[1], r[2], r[3], &out->rotation);
}

/* Pose between samples `a` and `b` at fraction `t`. The position in double: far from the origin a
 * float's step is coarse (a millimetre at 10 km), and rounding the blend to it would make a slow
 * body's drawn motion stair-step between results that are themselves exact floats. The rotation
 * in float: a unit quaternion's components are at most 1, so float keeps it to about 1e-7, and
 * its blend is most of the arithmetic. nlerp: the published rotations are unit to float
 * precision, so only the blend is normalised. */
static inline void blend(const gy_w_sample *a, const gy_w_sample *b, double t, gy_pose *out)
{
    const float *pa = a->position, *pb = b->position;
    const float *ra = a->rotation, *rb = b->rotation;
    out->position.x = pa[0] + ((double)pb[0] - pa[0]) * t;
    out->position.y = pa[1] + ((double)pb[1] - pa[1]) * t;
    out->position.z = pa[2] + ((double)pb[2] - pa[2]) * t;
    float f = (float)t;
    float d = ra[0] * rb[0] + ra[1] * rb[1] + ra[2] * rb[2] + ra[3] * rb[3] < 0.0f ? -1.0f : 1.0f;
    float x = ra[0] + (d * rb[0] - ra[0]) * f, y = ra[1] + (d * rb[1] - ra[1]) * f;
    float z = ra[2] + (d * rb[2] - ra[2]) * f, w = ra[3] + (d * rb[3] - ra[3]) * f;
    unit(x, y, z, w, &out->rotation);
}

/* The reciprocal of the last span between two samples: the bodies of a frame mostly share their
 * sample times, so a pass divides once per distinct span rather than once per body. */
typedef struct span_inverse {
    double span, inv;
} span_inverse;

static inline double inverse(span_inverse *c, double span)
{
    if (span != c->span) {
        c->span = span;
        c->inv = 1.0 / span;
    }
    return c->inv;
}

/* The simulated time sample `a` stands for: its tick, widened against the newest capture's. Signed:
 * the held sample of a body built before the first step stands for tick -1. */
static inline double sample_time(const gy_world *w, const gy_w_sample *a)
{
    int64_t newest = (int64_t)w->frame_tick;
    return (double)(newest - (int32_t)((uint32_t)newest - a->tick)) * w->step_dt;
}

_Static_assert(GY_W_SAMPLES == 3, "motion_pose brackets within three results");

/* Body `s` (with results) at render time `at`; true when that is its newest result (it is drawn
 * there until another comes). */
static inline bool motion_pose(const gy_world *w, uint32_t s, double at, span_inverse *c,
                               gy_pose *out)
{
    const gy_w_motion *m = &w->motion[s];
    uint32_t n = m->count;
    assert(n > 0);
    uint32_t v = m->mover;
    const gy_w_sample *sb = &w->samples[gy_w_ring_slot(m, n - 1)][v];
    double tb = sample_time(w, sb);
    if (at >= tb || n == 1) {
        sample(sb, out);
        return at >= tb;
    }
    const gy_w_sample *sa = &w->samples[gy_w_ring_slot(m, n - 2)][v];
    double ta = sample_time(w, sa);
    if (at < ta) {
        if (n == 2) {
            sample(sa, out);
            return false;
        }
        sb = sa;
        tb = ta;
        sa = &w->samples[m->head][v];
        ta = sample_time(w, sa);
        if (at <= ta) {
            sample(sa, out);
            return false;
        }
    }
    blend(sa, sb, (at - ta) * inverse(c, tb - ta), out);
    return false;
}

/* ---- held poses ------------------------------------------------------------------------------ */

static bool same_pose(gy_pose a, gy_pose b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The side record of store index `s`, or NULL. */
static gy_w_held *held_record(const gy_world *w, uint32_t s)
{
    const uint64_t *at = gy_hash_map_find(&w->held_index, gy_map_key_of(s));
    return at != NULL ? &w->held[*at] : NULL;
}

bool gy_w_body_held_keep(const gy_world *w, const gy_w_body *c, gy_pose pose)
{
    return c->recorded && !same_pose(pose, *gy_w_world_of(w, gy_w_body_slot(w, c)));
}

#ifndef NDEBUG
/* The side table's invariant for one body (debug builds): a record only for a held body; none
 * for one whose stored pose is stale (it follows its body, which needs samples). */
static inline bool held_consistent(const gy_world *w, const gy_w_body *c)
{
    const gy_w_motion *m = &w->motion[c->store];
    const gy_w_held *h = held_record(w, c->store);
    if (h != NULL)
        return h->store_index == c->store && m->count == 0;
    return m->count > 0 || !w->results[c->store].follows;
}
#endif

gy_pose gy_w_body_held(const gy_world *w, const gy_w_body *c)
{
    assert(held_consistent(w, c));
    const gy_w_held *h = w->held_count > 0 ? held_record(w, c->store) : NULL;
    return h != NULL ? h->pose : *gy_w_world_of(w, gy_w_body_slot(w, c));
}

gy_result gy_w_held_reserve(gy_world *w, uint32_t more)
{
    if (more > UINT32_MAX - w->held_count)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r = gy_array_reserve(w->alloc, (void **)&w->held, &w->held_capacity,
                                   w->held_count + more, sizeof *w->held);
    if (r == GY_OK)
        r = gy_hash_map_reserve(&w->held_index, w->held_count + more);
    return r;
}

void gy_w_held_drop(gy_world *w, uint32_t s)
{
    uint64_t at;
    if (w->held_count == 0 || !gy_hash_map_remove(&w->held_index, gy_map_key_of(s), &at))
        return;
    uint32_t last = --w->held_count;
    if ((uint32_t)at != last) {
        w->held[at] = w->held[last];
        uint64_t *moved = gy_hash_map_find(&w->held_index, gy_map_key_of(w->held[at].store_index));
        assert(moved != NULL);
        *moved = at;
    }
}

/* Keeps `pose` as store index `s`'s held pose in its side record (room reserved). */
static void held_put(gy_world *w, uint32_t s, gy_pose pose)
{
    gy_w_held *h = held_record(w, s);
    if (h == NULL) {
        assert(w->held_count < w->held_capacity);
        gy_result r = gy_hash_map_put(&w->held_index, gy_map_key_of(s), w->held_count);
        assert(r == GY_OK);
        (void)r;
        h = &w->held[w->held_count++];
        h->store_index = s;
    }
    h->pose = pose;
}

gy_result gy_w_body_set_held(gy_world *w, const gy_w_body *c, gy_pose pose)
{
    uint32_t s = c->store;
    assert(w->motion[s].count == 0);
    if (!gy_w_body_held_keep(w, c, pose)) {
        gy_w_held_drop(w, s);
        return GY_OK;
    }
    if (held_record(w, s) == NULL) {
        gy_result r = gy_w_held_reserve(w, 1u); /* reserved by the caller: allocates nothing */
        if (r != GY_OK)
            return r;
    }
    held_put(w, s, pose);
    assert(held_consistent(w, c));
    return GY_OK;
}

gy_result gy_w_body_hold_apart(gy_world *w, const gy_w_body *c, uint32_t spare)
{
    uint32_t s = c->store;
    if (!c->recorded || w->motion[s].count > 0 || held_record(w, s) != NULL)
        return GY_OK;
    gy_result r = gy_w_held_reserve(w, 1u + spare);
    if (r != GY_OK)
        return r;
    held_put(w, s, gy_w_body_held(w, c));
    return GY_OK;
}

/* ---- poses of bodies ------------------------------------------------------------------------- */

gy_pose gy_w_body_pose(const gy_world *w, const gy_w_body *c)
{
    const gy_w_motion *m = &w->motion[c->store];
    if (m->count == 0)
        return gy_w_body_held(w, c);
    gy_pose p;
    sample(&w->samples[gy_w_ring_slot(m, m->count - 1)][m->mover], &p);
    return p;
}

gy_pose gy_w_render_body(const gy_world *w, const gy_w_body *c)
{
    const gy_w_motion *m = &w->motion[c->store];
    if (m->count == 0)
        return gy_w_body_held(w, c);
    span_inverse inv = {-1.0, 0.0};
    gy_pose p;
    motion_pose(w, c->store, w->render_time, &inv, &p);
    return p;
}

/* ---- the render time ------------------------------------------------------------------------- */

static double rate(const gy_world *w)
{
    return w->hold ? 0.0 : w->time_scale;
}

/* Real time: the simulation's clock at tick-clock time `now`. */
static double clock_time(const gy_world *w, uint64_t now)
{
    double newest = (double)w->frame_tick * w->step_dt;
    if (w->pivot_ns > w->due_ns) {
        /* The rate changed since the newest result fell due: the clock ran at the old rate up
         * to the change, at the new one since. */
        double since = now > w->pivot_ns ? (double)(now - w->pivot_ns) * 1e-9 : 0.0;
        return w->pivot_time + since * rate(w);
    }
    double since = now > w->due_ns ? (double)(now - w->due_ns) * 1e-9 : 0.0;
    return newest + since * rate(w);
}

void gy_w_render_rate_change(gy_world *w)
{
    if (w->lockstep)
        return;
    uint64_t now = w->clock(w->clock_ctx);
    w->pivot_time = clock_time(w, now);
    w->pivot_ns = now > w->due_ns ? now : w->due_ns + 1u;
}

/* The automatic delay: one step plus the latency results lately arrived with, moved towards
 * gently (a jump in the delay would be a jump in the drawn motion). */
static void adapt_delay(gy_world *w, double elapsed, bool fresh)
{
    if (w->render_delay > 0.0) {
        w->delay = w->render_delay;
        return;
    }
    if (w->lockstep) {
        w->delay = w->step_dt; /* results come when the World asks: no latency to cover */
        return;
    }
    w->latency = fmax(0.0, w->latency - LATENCY_DECAY * elapsed);
    if (fresh) {
        double late = (double)(w->published_ns - w->due_ns) * 1e-9 * rate(w);
        w->latency = fmax(w->latency, late);
    }
    double cover = fmax(LATENCY_FLOOR * w->step_dt, fmin(w->latency, LATENCY_CAP * w->step_dt));
    double target = w->step_dt + cover;
    if (!w->render_started) {
        w->delay = target; /* nothing drawn yet: nothing to jump */
        return;
    }
    double most = DELAY_RATE * elapsed;
    w->delay += fmax(-most, fmin(most, target - w->delay));
}

static void advance(gy_world *w, double dt, bool fresh)
{
    double newest = (double)w->frame_tick * w->step_dt;
    double now, elapsed;
    if (w->lockstep) {
        now = newest + w->acc;
        elapsed = dt * rate(w);
    } else {
        uint64_t ns = w->clock(w->clock_ctx);
        elapsed = w->clock_ns != 0 && ns > w->clock_ns ? (double)(ns - w->clock_ns) * 1e-9 : 0.0;
        w->clock_ns = ns;
        now = clock_time(w, ns);
    }
    adapt_delay(w, elapsed, fresh);
    double at = fmin(now - w->delay, newest);
    if (!w->render_started || at > w->render_time)
        w->render_time = at;
    w->render_started = true;
    double alpha = (w->render_time - (newest - w->step_dt)) / w->step_dt;
    w->alpha = alpha < 0.0 ? 0.0 : alpha > 1.0 ? 1.0 : alpha;
}

/* Most bodies of a frame hold results of the newest tick and the one before, and the render
 * time falls between the two: the fraction is then the same for all of them, worked out once as
 * motion_pose would for each. `lo`: the previous tick's low 32 bits (the newest is lo + 1); `t`
 * negative when the render time is not strictly before the newest tick or not after the one
 * before. */
typedef struct common_span {
    uint32_t lo;
    double t;
    bool newest; /* the render time is at or past the newest tick */
} common_span;

static common_span common(const gy_world *w)
{
    common_span c = {(uint32_t)w->frame_tick - 1u, -1.0, false};
    double tb = (double)(int64_t)w->frame_tick * w->step_dt;
    double ta = (double)((int64_t)w->frame_tick - 1) * w->step_dt;
    double at = w->render_time;
    if (w->frame_tick > 0 && at < tb && at >= ta)
        c.t = (at - ta) * (1.0 / (tb - ta));
    c.newest = at >= tb;
    return c;
}

void gy_w_render_frame(gy_world *w, double dt)
{
    advance(w, dt, w->seen_tick != w->render_tick);
    w->render_tick = w->seen_tick;
    uint32_t n = 0, kept = 0, held = 0;
    span_inverse inv = {-1.0, 0.0};
    const common_span span = common(w);
    /* Fetched ahead: the records and the list entries are cold by the next frame. The list is
     * compacted in order as it is walked (rather than swap-removed), so each visit touches only
     * its own body's record and poses and the walk stays a forward stream. */
    enum { AHEAD = 32 };
    uint32_t *items = w->animating.items;
    for (uint32_t i = 0; i < w->animating.count; i++) {
        if (i + AHEAD < w->animating.count) {
            __builtin_prefetch(&w->motion[items[i + AHEAD]], 1);
            __builtin_prefetch(&w->render[n + AHEAD], 1);
        }
        if (!span.newest && i + AHEAD / 2 < w->animating.count) {
            /* Its record, fetched half a window ago, names the two newest samples: the blend
             * then finds both at hand, rather than learning the second's place from the
             * first's tick. (At the newest tick a listed body is drawn at the sample this
             * frame's capture just wrote: nothing to fetch, and the record's read would cost.) */
            uint32_t a = items[i + AHEAD / 2];
            const gy_w_motion *ma = &w->motion[a];
            if (ma->count > 1) {
                __builtin_prefetch(&w->samples[gy_w_ring_slot(ma, ma->count - 1u)][ma->mover]);
                __builtin_prefetch(&w->samples[gy_w_ring_slot(ma, ma->count - 2u)][ma->mover]);
            }
        }
        uint32_t s = items[i];
        gy_w_motion *m = &w->motion[s];
        if (m->count == 0 && held == GY_W_HELD_PER_FRAME) {
            /* Listed in a later frame (the list has no room for it): it stays in the list. */
            if (m->animating_at != kept)
                m->animating_at = kept;
            if (kept != i)
                items[kept] = s;
            kept++;
            continue;
        }
        assert(n < w->render_capacity);
        gy_render_pose *out = &w->render[n++];
        out->entity = m->entity;
        bool settled = true;
        const gy_w_sample *sb, *sa;
        if (m->count > 1 && span.t >= 0.0 &&
            (sb = &w->samples[gy_w_ring_slot(m, m->count - 1u)][m->mover])->tick == span.lo + 1u &&
            (sa = &w->samples[gy_w_ring_slot(m, m->count - 2u)][m->mover])->tick == span.lo) {
            blend(sa, sb, span.t, &out->pose);
            settled = false;
        } else if (m->count > 0 && span.newest &&
                   (sb = &w->samples[gy_w_ring_slot(m, m->count - 1u)][m->mover])->tick ==
                       span.lo + 1u) {
            /* At its newest result, of the newest tick: motion_pose's answer without its
             * sample times (the physics thread fell behind the clock, so every body is). */
            sample(sb, &out->pose);
        } else if (m->count > 0) {
            settled = motion_pose(w, s, w->render_time, &inv, &out->pose);
        } else {
            uint32_t slot = (uint32_t)(m->entity.bits & 0xffffffffu) - 1u;
            out->pose = gy_w_render_pose(w, slot);
            held++;
        }
        /* Drawn at its newest result (or held): listed this once, then not until it moves. The
         * entries of a list that keeps its bodies are rewritten only where they move, so a
         * steady frame dirties no record. */
        if (settled) {
            m->animating_at = GY_W_NONE;
        } else {
            if (m->animating_at != kept)
                m->animating_at = kept;
            if (kept != i)
                items[kept] = s;
            kept++;
        }
    }
    w->animating.count = kept;
    w->render_count = n;
}

void gy_w_render_free(gy_world *w)
{
    const gy_allocator *a = w->alloc;
    if (w->motion != NULL)
        gy_free(a, w->motion, (size_t)w->motion_capacity * sizeof *w->motion);
    for (uint32_t k = 0; k < GY_W_SAMPLES; k++)
        if (w->samples[k] != NULL)
            gy_free(a, w->samples[k], (size_t)w->samples_capacity[k] * sizeof *w->samples[k]);
    if (w->mover_store != NULL)
        gy_free(a, w->mover_store, (size_t)w->mover_store_capacity * sizeof *w->mover_store);
    gy_u32_array_free(a, &w->animating);
    gy_u32_array_free(a, &w->writeback);
    if (w->render != NULL)
        gy_free(a, w->render, (size_t)w->render_capacity * sizeof *w->render);
    if (w->moved_out != NULL)
        gy_free(a, w->moved_out, (size_t)w->moved_out_capacity * sizeof *w->moved_out);
    if (w->moved_next != NULL)
        gy_free(a, w->moved_next, (size_t)w->moved_next_capacity * sizeof *w->moved_next);
    if (w->held != NULL)
        gy_free(a, w->held, (size_t)w->held_capacity * sizeof *w->held);
    gy_hash_map_fini(&w->held_index);
}

/* ---- public ---------------------------------------------------------------------------------- */

double gy_world_render_time(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0.0;
    return w->render_time;
}

uint32_t gy_world_render_poses(const gy_world *w, const gy_render_pose **out)
{
    if (out != NULL)
        *out = NULL;
    if (gy_w_enter_read(w, __func__) != GY_OK || out == NULL)
        return 0;
    *out = w->render_count > 0 ? w->render : NULL;
    return *out != NULL ? w->render_count : 0u;
}

uint32_t gy_world_moved_bodies(const gy_world *w, const gy_entity **out)
{
    if (out != NULL)
        *out = NULL;
    if (gy_w_enter_read(w, __func__) != GY_OK || out == NULL)
        return 0;
    *out = w->moved_out_count > 0 ? w->moved_out : NULL;
    return *out != NULL ? w->moved_out_count : 0u;
}
