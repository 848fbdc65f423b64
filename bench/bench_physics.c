/* gyre-bench section "physics": the physics subsystem's overheads, each against its baseline in
 * the same run.
 *
 *   tick    — one lockstep tick of the whole subsystem on an awake 1,024-box pile (as the game
 *             thread sees it: hand-off, drain, step, collision events, proxies, query snapshot,
 *             replies) against a bare loop on the same adapter and the same pile: step, then read
 *             every body's state back. The two worlds are built and stepped identically, in
 *             alternating chunks, so both see the same pile at the same tick.
 *   publish — the publish phase (read-back → proxies → snapshot → replies) with 100,000 static
 *             boxes beside 500 awake spheres, against the 500 spheres alone.
 *   pacing  — real-time mode at 60 Hz: tick start minus its deadline. */
#include "bench.h"
#include "bench_common.h"

#include <pthread.h>
#include <sched.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"

#define STATICS    100000
#define SPHERES    500
#define TIMEOUT_NS 60000000000ull

/* A scene as a bootstrap list: bodies[i] uses colliders[i]. */
typedef struct scene {
    gy_physics_body_def *bodies;
    gy_collider_def *colliders;
    uint32_t count;
} scene;

static bool scene_alloc(scene *s, uint32_t n)
{
    s->bodies = calloc(n, sizeof *s->bodies);
    s->colliders = calloc(n, sizeof *s->colliders);
    s->count = 0;
    return s->bodies != NULL && s->colliders != NULL;
}

static void scene_free(scene *s)
{
    free(s->bodies);
    free(s->colliders);
}

static gy_physics_body_def *scene_add(scene *s, gy_motion_type type, gy_pose pose, gy_shape shape)
{
    uint32_t i = s->count++;
    gy_physics_body_def *d = &s->bodies[i];
    d->def = gy_default_body_def();
    d->def.type = type;
    d->def.pose = pose;
    s->colliders[i] = gy_default_collider_def();
    s->colliders[i].shape = shape;
    d->colliders = &s->colliders[i];
    d->collider_count = 1;
    return d;
}

static void make_pile(scene *s)
{
    gy_shape plane = {0};
    plane.type = GY_SHAPE_PLANE;
    plane.normal = gy_v3(0, 1, 0);
    scene_add(s, GY_MOTION_STATIC, gy_pose_identity(), plane);
    gy_shape box = {0};
    box.type = GY_SHAPE_BOX;
    box.box_size = gy_v3(1, 1, 1);
    gy_bench_rng r = {12345};
    double half = 0.5 * (PILE_SIDE - 1) * PILE_PITCH;
    for (int layer = 0; layer < PILE_LAYERS; layer++)
        for (int x = 0; x < PILE_SIDE; x++)
            for (int z = 0; z < PILE_SIDE; z++) {
                gy_pose pose;
                pose.position = gy_v3(x * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05),
                                      0.55 + layer * 1.1,
                                      z * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05));
                pose.rotation =
                    gy_quat_axis_angle(gy_v3(0, 1, 0), gy_bench_rng_range(&r, -0.1, 0.1));
                /* Awake throughout, so both loops do the same work every tick. */
                scene_add(s, GY_MOTION_DYNAMIC, pose, box)->def.allow_sleeping = false;
            }
}

/* 500 spheres drifting in zero gravity above where the statics (if any) lie. */
static void make_spheres(scene *s, bool with_statics)
{
    if (with_statics) {
        gy_shape tile = {0};
        tile.type = GY_SHAPE_BOX;
        tile.box_size = gy_v3(3.9, 0.5, 3.9);
        for (int x = 0; x < 316; x++)
            for (int z = 0; z < 317 && s->count < STATICS; z++) {
                gy_pose pose = gy_pose_identity();
                pose.position = gy_v3(x * 4.0 - 632.0, -0.25, z * 4.0 - 634.0);
                scene_add(s, GY_MOTION_STATIC, pose, tile);
            }
    }
    gy_shape ball = {0};
    ball.type = GY_SHAPE_SPHERE;
    ball.radius = 0.5;
    gy_bench_rng r = {777};
    for (int i = 0; i < SPHERES; i++) {
        gy_pose pose = gy_pose_identity();
        pose.position = gy_v3(gy_bench_rng_range(&r, -100, 100), gy_bench_rng_range(&r, 20, 40),
                              gy_bench_rng_range(&r, -100, 100));
        gy_physics_body_def *d = scene_add(s, GY_MOTION_DYNAMIC, pose, ball);
        d->def.allow_sleeping = false;
        d->def.linear_damping = 0.0;
        d->def.angular_damping = 0.0;
        d->def.linear_velocity =
            gy_v3(gy_bench_rng_range(&r, -1, 1), 0, gy_bench_rng_range(&r, -1, 1));
        d->def.angular_velocity = gy_v3(0, gy_bench_rng_range(&r, -1, 1), 0);
    }
}

static void drop_reply(void *ctx, const gy_reply *r)
{
    (void)r;
    (*(uint64_t *)ctx)++;
}

static gy_physics *start_lockstep(const gy_backend_world_def *world, const scene *s)
{
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.world = *world;
    gy_physics *p = NULL;
    if (gy_physics_create(&d, &p) != GY_OK)
        return NULL;
    gy_physics_bootstrap boot = {NULL, 0, s->bodies, s->count, NULL, 0, NULL, NULL, NULL};
    if (gy_physics_start(p, &boot) != GY_OK) {
        gy_physics_destroy(p);
        return NULL;
    }
    return p;
}

/* ---- tick: subsystem vs bare adapter --------------------------------------------------------- */

/* The bare loop: step, then read every body back, on a thread of its own that also builds the
 * world, as the subsystem's physics thread does, so both worlds get their memory the same way (a
 * thread's malloc arena) and both are measured as one thread's CPU time. It runs `chunk` ticks
 * when asked and sleeps otherwise. */
typedef struct bare {
    const gy_backend *be;
    const gy_backend_world_def *def;
    const scene *s;
    gy_backend_world *w;
    gy_body_id *ids;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    uint32_t asked, done; /* ticks asked for and done (under mutex) */
    bool quit, ready, ok;
    uint64_t chunk_cpu_ns, chunk_wall_ns; /* CPU and wall time of the last chunk */
    uint64_t step_ns, read_ns;            /* wall time in steps and in reads, all chunks */
} bare;

static bool bare_build(bare *b)
{
    b->ids = calloc(b->s->count, sizeof *b->ids);
    if (b->ids == NULL || b->be->world_create(b->def, &b->w) != GY_OK)
        return false;
    if (b->be->bind_thread(b->w) != GY_OK)
        return false;
    for (uint32_t i = 0; i < b->s->count; i++)
        if (b->be->body_create(b->w, &b->s->bodies[i].def, b->s->bodies[i].colliders, 1, &b->ids[i],
                               NULL) != GY_OK)
            return false;
    return true;
}

static void *bare_main(void *arg)
{
    bare *b = arg;
    bool ok = bare_build(b);
    pthread_mutex_lock(&b->mutex);
    b->ok = ok;
    b->ready = true;
    pthread_cond_broadcast(&b->cond);
    while (ok) {
        while (b->asked == b->done && !b->quit)
            pthread_cond_wait(&b->cond, &b->mutex);
        if (b->quit)
            break;
        uint32_t n = b->asked - b->done;
        pthread_mutex_unlock(&b->mutex);
        uint64_t c0 = gy_bench_thread_cpu_ns(), t0 = gy_clock_now_ns();
        gy_body_state st;
        uint64_t step_ns = 0, read_ns = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t s0 = gy_clock_now_ns();
            b->be->step(b->w, 1.0 / 60.0);
            uint64_t s1 = gy_clock_now_ns();
            for (uint32_t k = 0; k < b->s->count; k++)
                b->be->body_get_state(b->w, b->ids[k], &st);
            step_ns += s1 - s0;
            read_ns += gy_clock_now_ns() - s1;
        }
        uint64_t cpu = gy_bench_thread_cpu_ns() - c0, wall = gy_clock_now_ns() - t0;
        pthread_mutex_lock(&b->mutex);
        b->chunk_cpu_ns = cpu;
        b->chunk_wall_ns = wall;
        b->step_ns += step_ns;
        b->read_ns += read_ns;
        b->done = b->asked;
        pthread_cond_broadcast(&b->cond);
    }
    pthread_mutex_unlock(&b->mutex);
    if (b->w != NULL) {
        b->be->unbind_thread(b->w);
        b->be->world_destroy(b->w);
    }
    free(b->ids);
    return NULL;
}

/* Ends the bare thread (it destroys its world on the way out) and joins it. */
static void bare_stop(bare *b)
{
    pthread_mutex_lock(&b->mutex);
    b->quit = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->mutex);
    pthread_join(b->thread, NULL);
    pthread_mutex_destroy(&b->mutex);
    pthread_cond_destroy(&b->cond);
}

static bool bare_start(bare *b, const gy_backend *be, const gy_backend_world_def *def,
                       const scene *s)
{
    *b = (bare){.be = be, .def = def, .s = s};
    pthread_mutex_init(&b->mutex, NULL);
    pthread_cond_init(&b->cond, NULL);
    if (pthread_create(&b->thread, NULL, bare_main, b) != 0) {
        pthread_mutex_destroy(&b->mutex);
        pthread_cond_destroy(&b->cond);
        return false;
    }
    pthread_mutex_lock(&b->mutex);
    while (!b->ready)
        pthread_cond_wait(&b->cond, &b->mutex);
    bool ok = b->ok;
    pthread_mutex_unlock(&b->mutex);
    if (!ok)
        bare_stop(b); /* the thread has cleaned up and is leaving: join it */
    return ok;
}

/* Runs n bare ticks; their CPU and wall time in ns go to *cpu and *wall. */
static void bare_run(bare *b, uint32_t n, uint64_t *cpu, uint64_t *wall)
{
    pthread_mutex_lock(&b->mutex);
    b->asked += n;
    pthread_cond_broadcast(&b->cond);
    while (b->done != b->asked)
        pthread_cond_wait(&b->cond, &b->mutex);
    *cpu = b->chunk_cpu_ns;
    *wall = b->chunk_wall_ns;
    pthread_mutex_unlock(&b->mutex);
}

/* What one world pair's run adds to the section's notes. */
typedef struct tick_extra {
    uint64_t replies, ticks;           /* collision replies drained, subsystem ticks stepped */
    double step_ms, publish_ms;        /* physics-thread wall means per tick, summed over pairs */
    double adapter_ms;                 /* of step_ms: the adapter's step */
    double bare_step_ms, bare_read_ms; /* the bare loop's, the same way */
    uint64_t game_cpu_ns;              /* game thread CPU inside gy_physics_step, measured rounds */
    uint64_t single_cpu_ns;            /* the same over the warm-up's one-tick requests */
    uint64_t single_requests;          /* those requests */
    uint64_t replies_dropped;          /* by the subsystem's reply ring over all pairs */
} tick_extra;

/* Where the tick section's threads run: the two stepping threads (physics, bare) share one CPU,
 * the game thread has another where there is one. */
typedef struct tick_cpus {
    int step, game; /* -1: not pinned */
} tick_cpus;

static bool pin_self(int cpu)
{
    if (cpu < 0)
        return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

/* Builds one subsystem world and one bare world from `s`, warms both up, then steps them in
 * `rounds` alternating chunks of `chunk` ticks, each side asked for a whole chunk at once: per
 * round the CPU and wall time per tick (sub_cpu, ref_cpu, sub_wall, ref_wall). Both worlds are
 * destroyed again. */
static bool tick_pair(const scene *s, const gy_backend_world_def *wd, tick_cpus cpus,
                      uint32_t warmup, uint32_t rounds, uint32_t chunk, double *sub_wall,
                      double *ref_wall, double *sub_cpu, double *ref_cpu, tick_extra *x)
{
    /* Both stepping threads are created here, on the stepping CPU (threads inherit the mask);
     * then the game thread moves to its own. */
    pin_self(cpus.step);
    gy_physics *p = start_lockstep(wd, s);
    bare raw;
    bool bare_up = p != NULL && bare_start(&raw, gy_physics_backend(p), wd, s);
    bool ok = false;
    if (!bare_up)
        goto out;
    pin_self(cpus.game);
    uint64_t cpu, wall;
    /* Warm-up one tick per request: what such a request costs the game thread is a note. */
    for (uint32_t i = 0; i < warmup; i++) {
        bare_run(&raw, 1, &cpu, &wall);
        uint64_t c1 = gy_bench_thread_cpu_ns();
        gy_physics_step(p, 1, TIMEOUT_NS);
        x->single_cpu_ns += gy_bench_thread_cpu_ns() - c1;
        x->single_requests++;
        gy_physics_drain_replies(p, drop_reply, &x->replies);
    }
    gy_physics_stats st0, st1;
    gy_physics_get_stats(p, &st0);
    uint64_t bare_step0 = raw.step_ns, bare_read0 = raw.read_ns; /* its thread is idle now */
    for (uint32_t r = 0; r < rounds; r++) {
        bare_run(&raw, chunk, &cpu, &wall);
        ref_cpu[r] = (double)cpu * 1e-6 / chunk;
        ref_wall[r] = (double)wall * 1e-6 / chunk;
        gy_physics_stats a, z;
        gy_physics_get_stats(p, &a);
        uint64_t c1 = gy_bench_thread_cpu_ns(), t0 = gy_clock_now_ns();
        gy_physics_step(p, chunk, TIMEOUT_NS);
        sub_wall[r] = (double)(gy_clock_now_ns() - t0) * 1e-6 / chunk;
        uint64_t game_cpu = gy_bench_thread_cpu_ns() - c1;
        /* The game drains after each request (its own cost, outside the tick); the ring holds
         * a chunk's events (checked below: none may be dropped, or the subsystem did less). */
        gy_physics_drain_replies(p, drop_reply, &x->replies);
        gy_physics_get_stats(p, &z);
        sub_cpu[r] = (double)(z.cpu_ns - a.cpu_ns + game_cpu) * 1e-6 / chunk;
        x->game_cpu_ns += game_cpu;
    }
    gy_physics_get_stats(p, &st1);
    x->replies_dropped += st1.replies_dropped;
    double ticks = (double)(st1.ticks - st0.ticks);
    x->ticks += warmup + (uint64_t)ticks;
    x->step_ms += (double)(st1.step_ns - st0.step_ns) * 1e-6 / ticks;
    x->adapter_ms += (double)(st1.adapter_step_ns - st0.adapter_step_ns) * 1e-6 / ticks;
    x->bare_step_ms += (double)(raw.step_ns - bare_step0) * 1e-6 / (rounds * chunk);
    x->bare_read_ms += (double)(raw.read_ns - bare_read0) * 1e-6 / (rounds * chunk);
    x->publish_ms += (double)(st1.publish_ns - st0.publish_ns) * 1e-6 / ticks;
    ok = true;
out:
    if (bare_up)
        bare_stop(&raw);
    gy_physics_destroy(p);
    return ok;
}

static int bench_tick(gy_bench *b, bool quick)
{
    scene s;
    if (!scene_alloc(&s, PILE_BOXES + 1))
        return 1;
    make_pile(&s);
    gy_backend_world_def wd = gy_default_backend_world_def();
    /* The physics thread and the bare loop's thread on one CPU: both sides then run on the same
     * core with the same caches, where unpinned they could land on cores that this shared
     * machine makes run at different speeds. The game thread on another CPU where there is one,
     * as in a game: on the stepping CPU it would be woken in the middle of every subsystem tick
     * (it is preempted by the physics thread it wakes before it can go to sleep) and cost that
     * tick two extra context switches that the bare side, asked ten ticks at a time, does not
     * pay. */
    cpu_set_t saved;
    tick_cpus cpus = {-1, -1};
    bool pinned = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
    if (pinned) {
        cpus.step = sched_getcpu();
        for (int c = 0; c < CPU_SETSIZE && cpus.game < 0; c++)
            if (c != cpus.step && CPU_ISSET(c, &saved))
                cpus.game = c;
        pinned = cpus.step >= 0 && pin_self(cpus.step);
    }
    if (!pinned)
        cpus.step = cpus.game = -1;
    /* Several world pairs, each built afresh: where a world's memory happens to lie moves its
     * step time by up to ±1.5 % (two identical bare worlds measured against each other), which
     * one pair would keep for the whole run; the rounds of all pairs are pooled. */
    const uint32_t chunk = 10, pairs = quick ? 1 : 3, rounds = quick ? 5 : 15,
                   warmup = quick ? 15 : 40, all = pairs * rounds, n = all * chunk;
    int status = 1;
    tick_extra x = {0};
    double *sub = calloc(all, sizeof *sub), *ref = calloc(all, sizeof *ref);
    double *sub_cpu = calloc(all, sizeof *sub_cpu), *ref_cpu = calloc(all, sizeof *ref_cpu);
    double *pair = calloc(all, sizeof *pair);
    if (sub == NULL || ref == NULL || sub_cpu == NULL || ref_cpu == NULL || pair == NULL) {
        gy_bench_note(b, "tick: out of memory; not measured");
        goto out;
    }
    for (uint32_t k = 0; k < pairs; k++)
        if (!tick_pair(&s, &wd, cpus, warmup, rounds, chunk, sub + k * rounds, ref + k * rounds,
                       sub_cpu + k * rounds, ref_cpu + k * rounds, &x)) {
            gy_bench_note(b,
                          "tick: world pair %u of %u (subsystem or bare loop) could not be "
                          "built; not measured",
                          k + 1u, pairs);
            goto out;
        }
    /* The ratio of each round's two adjacent chunks, then their median: a change in the machine's
     * load between rounds cancels within a pair, where a ratio of the two medians keeps it. */
    for (uint32_t r = 0; r < all; r++)
        pair[r] = sub_cpu[r] / ref_cpu[r];
    double paired = gy_bench_median(pair, all);
    double tick_ms = gy_bench_median(sub_cpu, all), bare_ms = gy_bench_median(ref_cpu, all);
    double tick_wall = gy_bench_median(sub, all), bare_wall = gy_bench_median(ref, all);
    gy_bench_report(b, "tick.vs_bare_adapter", paired, "ratio",
                    "subsystem tick / bare adapter loop, CPU, 1,024-box pile, median of the "
                    "rounds' paired ratios (target <= 1.05)");
    gy_bench_report(b, "tick.vs_bare_adapter_p25", gy_bench_percentile(pair, all, 25), "ratio",
                    "the rounds' paired ratios, 25th percentile (how much one round says)");
    gy_bench_report(b, "tick.vs_bare_adapter_p75", gy_bench_percentile(pair, all, 75), "ratio",
                    "the rounds' paired ratios, 75th percentile");
    gy_bench_report(b, "tick.vs_bare_adapter_medians", tick_ms / bare_ms, "ratio",
                    "the same as a ratio of the two sides' medians");
    gy_bench_report(b, "tick.ms", tick_ms, "ms", "subsystem tick, CPU of both threads (median)");
    gy_bench_report(b, "bare.ms", bare_ms, "ms",
                    "bare loop: step + read every body, CPU of its thread (median)");
    gy_bench_report(b, "tick.wall_vs_bare", tick_wall / bare_wall, "ratio",
                    "the same, wall time as the game thread waits for it");
    gy_bench_report(b, "tick.wall_ms", tick_wall, "ms", "subsystem tick, wall (median)");
    gy_bench_report(b, "bare.wall_ms", bare_wall, "ms", "bare loop, wall (median)");
    gy_bench_report(b, "tick.request_us", (double)x.single_cpu_ns * 1e-3 / x.single_requests, "us",
                    "game thread CPU for a one-tick lockstep request (wake, wait), mean");
    gy_bench_note(b,
                  "tick: %u world pairs, each %u rounds of %u ticks per side (one request each) "
                  "after %u warm-up ticks; CPU = physics thread (drain -> publish) + game "
                  "thread inside gy_physics_step; bare loop on its own thread; %s",
                  pairs, rounds, chunk, warmup,
                  !pinned          ? "threads not pinned"
                  : cpus.game >= 0 ? "stepping threads on one CPU, the game thread on another"
                                   : "every thread on one CPU (no second CPU allowed)");
    gy_bench_note(b,
                  "tick: %.0f collision events per tick (%llu dropped), drained by the game "
                  "outside the tick; physics thread: step %.3f ms (adapter %.3f ms) + publish "
                  "%.3f ms per tick; bare loop: step %.3f ms + read %.3f ms (wall means); game "
                  "thread inside gy_physics_step %.1f us CPU per tick (mean)",
                  (double)x.replies / (double)x.ticks, (unsigned long long)x.replies_dropped,
                  x.step_ms / pairs, x.adapter_ms / pairs, x.publish_ms / pairs,
                  x.bare_step_ms / pairs, x.bare_read_ms / pairs, (double)x.game_cpu_ns * 1e-3 / n);
    /* A dropped event is work the subsystem skipped: the comparison would not be fair. */
    status = x.replies_dropped == 0 ? 0 : 1;
    if (status != 0)
        gy_bench_note(b,
                      "tick: the reply ring dropped %llu collision events, so the subsystem did "
                      "less than a tick's work; the section fails",
                      (unsigned long long)x.replies_dropped);
out:
    if (pinned)
        pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    free(sub);
    free(ref);
    free(sub_cpu);
    free(ref_cpu);
    free(pair);
    scene_free(&s);
    return status;
}

/* ---- publish: 100,000 statics + 500 awake vs 500 alone --------------------------------------- */

/* Publish time over `ticks` lockstep ticks after a warm-up: *median (from the diagnostics window,
 * robust to preemption on a shared machine) and *mean, in ns. false when not measured. */
static bool publish_cost(bool with_statics, uint32_t ticks, double *median, double *mean,
                         double *setup_s)
{
    scene s;
    if (!scene_alloc(&s, STATICS + SPHERES))
        return false;
    make_spheres(&s, with_statics);
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.gravity = gy_v3(0, 0, 0);
    wd.world_half_extent = 700.0;
    uint64_t t0 = gy_clock_now_ns();
    gy_physics *p = start_lockstep(&wd, &s);
    bool ok = false;
    uint64_t replies = 0;
    gy_physics_diagnostics diag;
    if (p == NULL)
        goto out;
    gy_physics_step(p, 10, TIMEOUT_NS); /* every buffer written once, trees built */
    *setup_s = (double)(gy_clock_now_ns() - t0) * 1e-9;
    gy_physics_drain_replies(p, drop_reply, &replies);
    gy_physics_stats a, z;
    gy_physics_get_stats(p, &a);
    for (uint32_t i = 0; i < ticks; i++) {
        gy_physics_step(p, 1, TIMEOUT_NS);
        gy_physics_drain_replies(p, drop_reply, &replies);
    }
    gy_physics_get_stats(p, &z);
    *mean = (double)(z.publish_ns - a.publish_ns) / (double)(z.publishes - a.publishes);
    /* The sampler runs every step_hz / 5 ticks in lockstep: one more round gives a fresh sample. */
    gy_physics_step(p, 12, TIMEOUT_NS);
    if (gy_physics_get_diagnostics(p, &diag) == GY_OK && diag.publish.samples > 0) {
        *median = diag.publish.p50 * 1e9;
        ok = true;
    }
out:
    gy_physics_destroy(p);
    scene_free(&s);
    return ok;
}

static int bench_publish(gy_bench *b, bool quick)
{
    uint32_t ticks = quick ? 120 : 900;
    double setup_small = 0, setup_big = 0;
    double m1 = 0, m2 = 0, mb = 0, a1 = 0, a2 = 0, ab = 0;
    /* Small, big, small: spreads machine noise over both. */
    if (!publish_cost(false, ticks, &m1, &a1, &setup_small) ||
        !publish_cost(true, ticks, &mb, &ab, &setup_big) ||
        !publish_cost(false, ticks, &m2, &a2, &setup_small)) {
        gy_bench_note(b, "publish: a world could not be built, or diagnostics are compiled "
                         "out; not measured");
        return 1;
    }
    double small = 0.5 * (m1 + m2);
    gy_bench_report(
        b, "publish.sparse_vs_small", mb / small, "ratio",
        "publish with 100,000 statics + 500 awake / 500 alone, medians (target <= 1.5)");
    gy_bench_report(b, "publish.sparse_us", mb * 1e-3, "us",
                    "publish, 100,000 statics + 500 (median)");
    gy_bench_report(b, "publish.small_us", small * 1e-3, "us", "publish, 500 awake alone (median)");
    gy_bench_report(b, "publish.sparse_vs_small_mean", ab / (0.5 * (a1 + a2)), "ratio",
                    "the same with means (preemption on a busy machine inflates these)");
    gy_bench_note(b,
                  "publish: %u lockstep ticks per world (median over the sampler's last 1,024 "
                  "publishes); the 100,000-static world was built in %.1f s",
                  ticks, setup_big);
    return 0;
}

/* ---- pacing ---------------------------------------------------------------------------------- */

static int bench_pacing(gy_bench *b, bool quick)
{
    scene s;
    if (!scene_alloc(&s, SPHERES))
        return 1;
    make_spheres(&s, false);
    s.count = 17; /* a light world: pacing, not stepping, is measured */
    gy_physics_def d = gy_default_physics_def();
    gy_physics *p = NULL;
    int status = 1;
    if (gy_physics_create(&d, &p) != GY_OK)
        goto out;
    gy_physics_bootstrap boot = {NULL, 0, s.bodies, s.count, NULL, 0, NULL, NULL, NULL};
    if (gy_physics_start(p, &boot) != GY_OK)
        goto out;
    double seconds = quick ? 1.5 : 10.0;
    uint64_t until = gy_clock_now_ns() + (uint64_t)(seconds * 1e9);
    uint64_t replies = 0;
    gy_physics_diagnostics diag;
    memset(&diag, 0, sizeof diag);
    /* The game thread idles like a host would between its own frames (drains replies at 60 Hz). */
    while (gy_clock_now_ns() < until) {
        uint64_t next = gy_clock_now_ns() + 16666667u;
        gy_physics_drain_replies(p, drop_reply, &replies);
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    /* Wait for a sample taken after the run. */
    uint64_t after = gy_clock_now_ns() + 2000000000ull;
    uint64_t first = 0;
    while (gy_clock_now_ns() < after) {
        if (gy_physics_get_diagnostics(p, &diag) == GY_OK) {
            if (first == 0)
                first = diag.sample;
            else if (diag.sample > first)
                break;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    if (diag.pacing_error.samples == 0) {
        gy_bench_note(b, "pacing: diagnostics compiled out or no samples; not measured");
        goto out;
    }
    gy_bench_report(b, "pacing.error_us.p50", diag.pacing_error.p50 * 1e6, "us",
                    "tick start - deadline, p50");
    gy_bench_report(b, "pacing.error_us.p99", diag.pacing_error.p99 * 1e6, "us",
                    "tick start - deadline, p99 (target <= 100)");
    gy_bench_report(b, "pacing.error_us.max", diag.pacing_error.max * 1e6, "us",
                    "tick start - deadline, max");
    gy_bench_note(b,
                  "pacing: 60 Hz real time for %.0f s, %u ticks in the window; sleep to 1 ms "
                  "before the deadline, then spin",
                  seconds, diag.pacing_error.samples);
    status = 0;
out:
    gy_physics_destroy(p);
    scene_free(&s);
    return status;
}

int gy_bench_section_physics(gy_bench *b)
{
    bool quick = gy_bench_quick(b);
    int status = 0;
    status |= bench_tick(b, quick);
    status |= bench_publish(b, quick);
    status |= bench_pacing(b, quick);
    return status;
}
