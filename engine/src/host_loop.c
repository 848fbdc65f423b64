/* The host loop: one gy_world_tick per host frame (game callbacks → publish → drain replies →
 * sync transforms → render time), time scale and hold, hard stop/start, and the orderly teardown
 * that counts what the adapter still holds.
 *
 * The capture reads each publish's proxies into the samples bodies are drawn from and their
 * pose is read from (world_render.c), with the publish's timing, and keeps the publish: the
 * components' velocities and flags are read there on demand (gy_w_result.kept_state). Lockstep:
 * the World runs the ticks its accumulator owes one at a time and captures after each, and the
 * accumulator is the classic leftover. Real time: the physics thread ticks on its own clock and
 * the capture takes whatever it published last. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "world_internal.h"

/* ---- proxies into components ----------------------------------------------------------------- */

/* Whether proxy `q` of store index `s` (taken in before, no restart) changed since the capture
 * that took in the publish of tick `old_tick`; this publish is of tick `tick`. A proxy's tick is
 * the tick it last changed in, and the previous capture read every tracked body's proxy as of
 * `old_tick` (one it refused comes back as a restart), so a newer publish holds a change exactly
 * when the proxy's tick is past `old_tick`: nothing per body is kept or written to know it. A
 * publish of the same tick (a batch applied without a step) may hold changes of that very tick:
 * those are told by the tick of the body's newest sample, the proxy tick it was taken at. */
static inline bool proxy_changed(const gy_world *w, uint32_t s, const gy_proxy *q, uint64_t tick,
                                 uint64_t old_tick)
{
    if (tick != old_tick)
        return (int32_t)(q->tick - (uint32_t)old_tick) > 0;
    const gy_w_motion *m = &w->motion[s];
    if (m->mover == GY_W_NO_MOVER)
        return false; /* a static takes no samples: nothing to tell */
    return m->count == 0 || w->samples[gy_w_ring_slot(m, m->count - 1u)][m->mover].tick != q->tick;
}

uint64_t gy_w_capture(gy_world *w)
{
    gy_proxy_frame f;
    if (gy_physics_read_frame(w->physics, &f) != GY_OK)
        return 0;
    const gy_proxy *const *px = f.pages;
    uint32_t n = f.count;
    uint64_t tick = f.tick;
    /* Once per publish (`fresh` alone would miss one another reader of the proxies took). */
    if (!f.fresh && tick == w->frame_tick)
        return 0;
    uint64_t advanced = tick > w->frame_tick ? tick - w->frame_tick : 0u;
    /* The publish kept until now stays with this thread until the next read: a body whose proxy
     * is refused here takes its state from it first. */
    const gy_proxy *const *old = w->kept;
    uint32_t old_count = w->kept_count;
    uint64_t old_tick = w->frame_tick;
    w->kept = gy_physics_keep_frame(w->physics, &w->kept_count);
    assert(w->kept == px);
    w->frame_tick = tick;
    w->frame_seq = f.applied_seq;
    w->due_ns = f.due_ns;
    w->published_ns = f.published_ns;
    /* Only the tracked components: a settled static's proxy cannot change until the World itself
     * touches the body (teleport, release, stop), and each of those tracks it again. Everything
     * the visit reads and writes is by store index (the proxy, the result record and samples):
     * the component itself is looked up only on the rare paths (a restart, a static settling). */
    w->stats.bodies_captured += w->tracked.count;
    /* Fetched ahead: a visit is a handful of short stores into several arrays, too many streams
     * for the hardware to follow at this rate. */
    enum { AHEAD = 32 };
    const uint32_t *items = w->tracked.items;
    for (uint32_t i = 0; i < w->tracked.count;) {
        if (i + AHEAD < w->tracked.count) {
            uint32_t a = items[i + AHEAD];
            __builtin_prefetch(&w->results[a], 1);
            __builtin_prefetch(&w->motion[a], 1);
            /* The lists a moved body is appended to: a store into a line not yet fetched waits
             * for it, and these go cold between frames like the rest. Once every 8 visits, the
             * first and last of the 8 entries they can append from a window ahead (a line holds
             * 8 entities and 16 store indices): fetched at every visit, the same line was asked
             * for 8 to 16 times. */
            uint32_t mc = w->moved.count + AHEAD, ac = w->animating.count + AHEAD;
            if ((i & 7u) == 0) {
                if (mc + 7u < w->moved.capacity) {
                    __builtin_prefetch(&w->moved.items[mc], 1);
                    __builtin_prefetch(&w->moved.items[mc + 7u], 1);
                    __builtin_prefetch(&w->moved_next[mc], 1);
                    __builtin_prefetch(&w->moved_next[mc + 7u], 1);
                }
                if (ac + 7u < w->animating.capacity) {
                    __builtin_prefetch(&w->animating.items[ac], 1);
                    __builtin_prefetch(&w->animating.items[ac + 7u], 1);
                }
            }
        }
        if (i + AHEAD / 2 < w->tracked.count) {
            /* Its records, fetched half a window ago, name the proxy the capture will read and the
             * sample it will write. */
            uint32_t proxy = w->results[items[i + AHEAD / 2]].proxy;
            if (proxy < n)
                __builtin_prefetch(gy_proxy_in(px, proxy));
            const gy_w_motion *m = &w->motion[items[i + AHEAD / 2]];
            if (m->mover != GY_W_NO_MOVER)
                __builtin_prefetch(&w->samples[gy_w_ring_slot(
                                       m, m->count < GY_W_SAMPLES ? m->count : 0u)][m->mover],
                                   1);
        }
        uint32_t s = items[i++];
        assert(w->store_owner[s] != GY_W_NONE && w->results_rare[s].tracked_at == i - 1u);
        gy_w_result *st = &w->results[s];
        const gy_proxy *q = st->proxy < n ? gy_proxy_in(px, st->proxy) : NULL;
        if (q == NULL || q->generation != st->generation || !(q->flags & GY_PROXY_LIVE)) {
            /* Not built yet (or already gone): the creation pose stands. */
            gy_w_result_own(w, s, old, old_count, old_tick);
            continue;
        }
        if (q->teleports != st->teleports_sent) {
            /* Published before the game's latest teleport was applied: the teleport wins. */
            w->stats.stale_proxies++;
            gy_w_result_own(w, s, old, old_count, old_tick);
            continue;
        }
        bool restart = !st->have_proxy || q->teleports != st->teleports_seen;
        /* A static body never moves on its own: its pose stays the game's (no float rounding). */
        bool is_static = gy_proxy_motion(q) == GY_MOTION_STATIC;
        bool changed = restart || proxy_changed(w, s, q, tick, old_tick);
        /* A proxy moves only a mover: a motion change comes with a new body. */
        assert(is_static || w->motion[s].mover != GY_W_NO_MOVER);
        if (changed && !is_static && w->motion[s].mover != GY_W_NO_MOVER) {
            /* The proxy's tick is the low 32 bits of the one it last changed in. */
            uint64_t at = tick - (uint32_t)((uint32_t)tick - q->tick);
            if (restart) {
                gy_w_render_push(w, s, q, at, true);
            } else {
                gy_w_render_put(w, s, q->position, q->rotation, at);
                gy_w_render_animate(w, s);
            }
            gy_w_body_mark_moved(w, s);
        }
        /* The rest only when they change: in steady motion the record is only read. */
        if (restart) {
            st->have_proxy = true;
            st->teleports_seen = q->teleports;
        }
        /* Velocities, flags and state tick: this proxy's, read where it is kept. */
        if (!st->kept_state)
            st->kept_state = true;
        if (is_static && st->is_static) {
            /* Swap-removed: the entry now at i - 1 is the one not yet visited. */
            gy_w_body_settle(w, gy_w_body_of(w, w->store_owner[s]));
            i--;
        }
    }
    return advanced;
}

void gy_w_sync(gy_world *w)
{
    /* The list the captures wrote becomes this tick's. */
    gy_entity *listed = w->moved_next;
    uint32_t capacity = w->moved_next_capacity;
    w->moved_next = w->moved_out;
    w->moved_next_capacity = w->moved_out_capacity;
    w->moved_out = listed;
    w->moved_out_capacity = capacity;
    w->moved_out_count = w->moved.count;
    /* Only the bodies whose transform does not follow them: a following one (most) has nothing
     * to write. One that stopped following since the capture took its body's pose then
     * (gy_w_transform_unfollow), and its next capture lists it here. */
    const uint32_t *items = w->writeback.items;
    for (uint32_t i = 0; i < w->writeback.count; i++) {
        uint32_t s = items[i];
        gy_w_result *st = &w->results[s];
        /* Unmarked since (released, teleported): nothing to write. */
        if (st->follows || st->moved_at >= w->moved.count || w->moved.items[st->moved_at] != s)
            continue;
        uint32_t slot = w->store_owner[s];
        gy_w_entity *en = &w->ents[slot];
        /* The game moved it since the capture (a callback): the game's write is newer. */
        if (en->dirty_game)
            continue;
        const gy_w_body *c = gy_w_body_of(w, slot);
        if (c->recorded && en->parent == GY_W_NONE && en->first_child == GY_W_NONE && !en->queued) {
            st->follows = true;
            continue;
        }
        *gy_w_world_of(w, slot) = gy_w_body_pose(w, c);
        if (en->parent == GY_W_NONE && en->first_child == GY_W_NONE && !en->queued)
            continue; /* a root's world pose is its local one: nothing to propagate */
        gy_w_mark_dirty(w, slot, false);
    }
    w->writeback.count = 0;
    /* Emptied without visiting its bodies (see set_has in world_body.c). */
    w->moved.count = 0;
    gy_w_propagate(w);
}

/* ---- the tick -------------------------------------------------------------------------------- */

static gy_result run_physics(gy_world *w, double dt)
{
    gy_result r = GY_OK;
    double scale = w->hold ? 0.0 : w->time_scale;
    if (w->replay != NULL) {
        /* The capture says how far each tick goes and which batches go in before each step. */
        r = gy_w_replay_run(w);
        gy_w_drain(w);
    } else if (w->lockstep) {
        w->acc += dt * scale;
        double owed = floor(w->acc / w->step_dt);
        uint32_t n = owed > (double)w->max_catchup ? w->max_catchup : (uint32_t)owed;
        if ((double)n < owed)
            w->acc -= (owed - (double)n) * w->step_dt; /* beyond the catch-up limit: dropped */
        if (n == 0)
            r = gy_physics_step(w->physics, 0, w->step_timeout_ns); /* publishes only */
        for (uint32_t i = 0; i < n && r == GY_OK; i++) {
            r = gy_physics_step(w->physics, 1, w->step_timeout_ns);
            if (r == GY_OK) {
                gy_w_capture(w);
                w->acc -= w->step_dt;
            }
        }
        gy_w_drain(w);
    } else {
        r = gy_physics_publish(w->physics, NULL);
        gy_w_drain(w);
        /* The physics thread keeps its own clock; the render time follows it (world_render.c). */
        gy_w_capture(w);
    }
    if (w->acc < 0.0)
        w->acc = 0.0;
    if (w->acc > w->step_dt)
        w->acc = w->step_dt;
    return r;
}

gy_result gy_world_tick(gy_world *w, double dt)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (!gy_is_finite(dt))
        return GY_ERR_NON_FINITE;
    if (dt < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->in_tick || w->dispatching)
        return GY_ERR_MISUSE;
    if (dt > GY_W_MAX_DT)
        dt = GY_W_MAX_DT;
    gy_result locked = gy_world_lock_write(w);
    if (locked != GY_OK)
        return locked; /* this thread holds the World lock already */
    w->in_tick = true;
    w->stats.ticks++;
    gy_w_recording_tick_begin(w);
    if (w->update != NULL)
        w->update(w->update_ctx, w, dt);
    gy_w_propagate(w);
    gy_w_joints_flush(w);
    gy_result r = GY_OK;
    if (gy_w_running(w))
        r = run_physics(w, dt);
    /* Real time: a published batch still unacknowledged past the bound is reported through the
     * logger (lockstep ticks wait for their batches themselves). Polled after this tick's
     * publish, so a physics thread that stops taking batches is seen one tick sooner. */
    if (gy_w_running(w) && !w->lockstep)
        gy_barrier_poll_watchdog(gy_physics_barrier(w->physics));
    else
        gy_w_drain(w); /* what the last run left, and EXITs the World owes */
    gy_w_recording_frame(w, dt);
    gy_w_sync(w);
    w->seen_tick = w->frame_tick;
    gy_w_kill_below(w);
    gy_w_render_frame(w, dt);
    w->in_tick = false;
    gy_result unlocked = gy_world_unlock_write(w);
    gy_w_streams_run(w); /* streaming the callbacks asked for, outside the lock */
    return r != GY_OK ? r : unlocked;
}

double gy_world_interpolation_alpha(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0.0;
    return w != NULL ? w->alpha : 0.0;
}

uint64_t gy_world_physics_tick(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0;
    return w != NULL ? w->frame_tick : 0u;
}

gy_result gy_world_set_time_scale(gy_world *w, double scale)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_physics_set_time_scale(w->physics, scale);
    if (r == GY_OK && scale != w->time_scale) {
        gy_w_render_rate_change(w);
        w->time_scale = scale;
    }
    return r;
}

void gy_world_set_hold(gy_world *w, bool hold)
{
    if (gy_w_enter(w, __func__) != GY_OK)
        return;
    if (w == NULL)
        return;
    gy_physics_set_hold(w->physics, hold);
    if (hold != w->hold) {
        w->acc = 0.0; /* held time is never caught up */
        gy_w_render_rate_change(w);
    }
    w->hold = hold;
}

/* ---- stop and start -------------------------------------------------------------------------- */

static void forget_physics(gy_world *w)
{
    /* Pairs the stop's EXITs did not close (dropped under a flood) are closed here. */
    gy_w_pairs_clear(w);
    bool nested = w->dispatching;
    w->dispatching = true;
    gy_w_flush_pending(w);
    w->dispatching = nested;
    gy_w_bodies_stopped(w);
    gy_w_joints_stopped(w);
    gy_w_geometry_stopped(w);
    w->acc = 0.0;
}

gy_result gy_world_stop_physics(gy_world *w)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->dispatching || !gy_w_running(w))
        return GY_ERR_MISUSE;
    gy_result r = gy_physics_stop(w->physics);
    if (r != GY_OK)
        return r;
    gy_w_drain(w); /* the EXITs the physics thread pushed as it stopped */
    forget_physics(w);
    gy_w_streams_run(w);
    return GY_OK;
}

gy_result gy_world_start_physics(gy_world *w)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->dispatching || gy_w_running(w))
        return GY_ERR_MISUSE;
    /* Replies of the last run are of no use to the new one. */
    gy_w_drain(w);
    gy_result r = gy_w_start(w);
    gy_w_streams_run(w);
    return r;
}

/* ---- teardown -------------------------------------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Real time: publishes (carrying staged batches over) until the proxy at the ref's index shows
 * its body live (`live`) or not; *tick receives that publish's tick. */
static gy_result await_proxy(gy_physics *p, gy_physics_body_ref ref, bool live, uint64_t *tick)
{
    for (uint32_t i = 0; i < 5000u; i++) {
        gy_result r = gy_physics_publish(p, NULL);
        if (r != GY_OK)
            return r;
        const gy_proxy *const *px;
        uint32_t n;
        if (gy_physics_read_proxies(p, &px, &n, tick, NULL) == GY_OK) {
            const gy_proxy *q = ref.index < n ? gy_proxy_in(px, ref.index) : NULL;
            bool is = q != NULL && q->generation == ref.generation && (q->flags & GY_PROXY_LIVE);
            if (is == live)
                return GY_OK;
        }
        sleep_ms(1);
    }
    return GY_ERR_TIMEOUT;
}

/* After every release is recorded: makes the physics thread apply them, then reads the adapter's
 * counters, which are then what leaked (gy_physics_get_adapter_counters: no diagnostics sampler
 * needed). Lockstep: one tick drains everything published. Real time: a marker body is created
 * after the releases — batches apply whole and in order, so once the marker shows in the proxies
 * every release before it was applied — then released, and its release awaited the same way. */
static gy_result confirm_releases(gy_world *w, gy_world_teardown *rep)
{
    gy_physics *p = w->physics;
    gy_result r = GY_OK;
    if (w->lockstep) {
        r = gy_physics_step(p, 1, w->step_timeout_ns);
    } else {
        gy_physics_set_hold(p, false);
        gy_physics_set_time_scale(p, 1.0);
        gy_collider_def marker = gy_default_collider_def();
        marker.shape.type = GY_SHAPE_SPHERE;
        marker.shape.radius = 0.01;
        gy_physics_body_def md;
        memset(&md, 0, sizeof md);
        md.def = gy_default_body_def();
        md.def.type = GY_MOTION_STATIC;
        md.colliders = &marker;
        md.collider_count = 1;
        uint64_t after;
        gy_physics_body_ref ref;
        r = gy_physics_record_create_body(p, &md, &ref);
        if (r == GY_OK)
            r = await_proxy(p, ref, true, &after);
        if (r == GY_OK)
            r = gy_physics_record_release_body(p, ref);
        if (r == GY_OK)
            r = await_proxy(p, ref, false, &after);
    }
    gy_backend_counters c;
    if (r == GY_OK)
        r = gy_physics_get_adapter_counters(p, &c, NULL);
    if (r != GY_OK)
        return r;
    rep->adapter_checked = true;
    rep->adapter_live_objects = c.live_objects;
    return GY_OK;
}

gy_result gy_world_destroy(gy_world *w, gy_world_teardown *report)
{
    if (report != NULL)
        memset(report, 0, sizeof *report);
    if (w == NULL)
        return GY_OK;
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w->in_tick || w->dispatching)
        return GY_ERR_MISUSE; /* from a callback: the tick in progress still needs the World */
    uint32_t ready = __atomic_load_n(&w->reader_ready, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&w->writer_held, __ATOMIC_ACQUIRE) != 0 || ready != 0)
        return GY_ERR_MISUSE; /* a thread (maybe this one) holds the World lock */
    w->tearing_down = true;
    gy_world_teardown rep;
    memset(&rep, 0, sizeof rep);
    rep.entities_destroyed = w->ent_live;
    w->dispatching = true; /* callbacks made from here on may not re-enter teardown */
    /* Destroying a live entity allocates nothing, so it cannot fail here. */
    while (w->first_root != GY_W_NONE)
        (void)gy_entity_destroy(w, gy_w_entity_handle(w, w->first_root));
    rep.geometries_reclaimed = gy_w_geometry_reclaim(w);
    if (rep.geometries_reclaimed > 0)
        gy_log(w->logger, GY_LOG_WARN,
               "world: %u runtime geometr%s never released by the creator; reclaimed at teardown",
               rep.geometries_reclaimed, rep.geometries_reclaimed == 1 ? "y was" : "ies were");
    gy_w_flush_pending(w);
    gy_result result = GY_OK;
    if (gy_w_running(w)) {
        result = confirm_releases(w, &rep);
        gy_physics_stop(w->physics);
        gy_w_flush_pending(w);
    }
    if (rep.adapter_checked && rep.adapter_live_objects > 0)
        gy_log(w->logger, GY_LOG_WARN,
               "world: %u adapter objects still alive after the World released everything",
               rep.adapter_live_objects);
    gy_w_free(w);
    if (report != NULL)
        *report = rep;
    return result;
}
