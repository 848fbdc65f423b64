/* gyre-bench section "host": what the game thread pays per frame for a World with 10,000 awake
 * bodies, against the least it could pay.
 *
 * The World runs in real time (the physics thread paces itself at 60 Hz) and the game thread
 * renders 60 frames a second, as a host does: each frame is gy_world_tick (publish, replies,
 * sync) and then the render pose of every body. The bodies are 10,000 spheres in free fall on a
 * lattice wide enough that none touch, so every one of them moves in every tick.
 *
 * Keys: host.frame_us_10k (median game-thread CPU over the frames that took in a new physics
 * result, µs: the frames that carry the per-result work; host.all_frames_us_10k is every frame),
 * host.frame_us_10k_p99, host.copy_us_10k (the limit: a plain copy of 10,000 64-byte proxies,
 * median CPU per copy, in cache) and host.frame_vs_copy, the ratio of the two medians. Beside it,
 * host.cold_copy_us_10k: the same copy of the proxies of each new publish as the physics thread
 * left them (read from the other core's writes, as the World's capture reads them), in frames of
 * their own, and host.frame_vs_cold_copy; and host.floor_us_10k, in turn with those,
 * one pass over each new publish that does only what interpolating a body needs (floor_pass), with
 * host.floor_vs_copy (the least frame_vs_copy could be) and host.frame_vs_floor; and
 * host.pair_floor_us_10k, the same were each proxy to carry its body's previous pose as well
 * (pair_floor_pass), with host.pair_floor_vs_copy. Two ways to read the render poses are timed: the
 * World's list of bodies whose drawn pose changed this frame (gy_world_render_poses; the headline
 * keys), and one gy_entity_get_render_pose call per entity (host.per_entity.*). CPU time of the
 * game thread: on a shared machine, time spent preempted is not the code's cost. */
#include "bench.h"
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gyre/gyre.h"

#define BODIES 10000u
#define SIDE   100u /* 100 x 100 lattice */
#define PITCH  3.0

typedef struct host_run {
    double *frame_us;
    uint32_t frames;
    double *fresh_us; /* the frames that took in a new physics result */
    uint32_t fresh;
    double checksum; /* keeps the compiler from dropping the reads */
    uint32_t poses;  /* render poses read, all frames */
} host_run;

static void sleep_until(uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

static gy_result build(gy_world **out, gy_entity *ents)
{
    gy_world_def c = gy_default_world_def();
    gy_result r = gy_world_create(&c, out);
    if (r != GY_OK)
        return r;
    gy_world *w = *out;
    gy_scene_collider col;
    memset(&col, 0, sizeof col);
    col.def = gy_default_collider_def();
    col.def.shape.type = GY_SHAPE_SPHERE;
    col.def.shape.radius = 0.5;
    gy_physics_component_def d = gy_default_physics_component_def();
    d.body.allow_sleeping = false;
    d.colliders = &col;
    d.collider_count = 1;
    for (uint32_t i = 0; i < BODIES && r == GY_OK; i++) {
        gy_entity_def ed = gy_default_entity_def();
        ed.position = gy_v3((double)(i % SIDE) * PITCH, 1000.0, (double)(i / SIDE) * PITCH);
        r = gy_entity_create(w, &ed, &ents[i]);
        if (r == GY_OK)
            r = gy_body_add(w, ents[i], &d);
    }
    return r;
}

/* Frames at 60 Hz; `dense`: read render poses through gy_world_render_poses, else one call per
 * entity. The first `warm` frames are not timed. */
static gy_result run(gy_world *w, const gy_entity *ents, bool dense, uint32_t warm, host_run *out)
{
    const uint64_t period = 1000000000u / 60u;
    uint64_t next = gy_bench_now_ns();
    uint64_t last = next;
    for (uint32_t f = 0; f < warm + out->frames; f++) {
        next += period;
        sleep_until(next);
        uint64_t now = gy_bench_now_ns();
        double dt = (double)(now - last) * 1e-9;
        last = now;
        uint64_t tick = gy_world_physics_tick(w);
        uint64_t c0 = gy_bench_thread_cpu_ns();
        gy_result r = gy_world_tick(w, dt);
        if (r != GY_OK)
            return r;
        double sum = 0.0;
        uint32_t n = 0;
        if (dense) {
            const gy_render_pose *rp;
            n = gy_world_render_poses(w, &rp);
            for (uint32_t i = 0; i < n; i++)
                sum += rp[i].pose.position.y;
        } else {
            for (uint32_t i = 0; i < BODIES; i++) {
                gy_pose p;
                if (gy_entity_get_render_pose(w, ents[i], &p) == GY_OK)
                    sum += p.position.y;
            }
            n = BODIES;
        }
        uint64_t c1 = gy_bench_thread_cpu_ns();
        out->checksum += sum;
        if (f >= warm) {
            out->frame_us[f - warm] = (double)(c1 - c0) * 1e-3;
            if (gy_world_physics_tick(w) != tick)
                out->fresh_us[out->fresh++] = (double)(c1 - c0) * 1e-3;
            out->poses += n;
        }
    }
    return GY_OK;
}

/* The floor: the least a frame that interpolates must do for each body of a new publish, in one
 * pass over the proxies as the physics thread left them: check that the proxy still speaks for
 * its body (generation, teleport count), keep its pose as the body's newest sample, blend it with
 * the sample before (position in double, rotation nlerp in float, as the World blends) and write
 * the drawn pose. Nothing else: no list of moved or animating bodies, no ring of three results
 * for late frames, no static, teleport or creation paths, every array in proxy order and
 * fetched ahead. The World's frame does all of this and more, so its cost is a lower bound. */
typedef struct floor_sample {
    float position[3];
    float rotation[4];
    uint32_t tick;
} floor_sample;

typedef struct floor_record {
    gy_entity entity;
    uint32_t generation;
    uint16_t teleports;
} floor_record;

typedef struct floor_state {
    floor_sample *samples[2]; /* the newest result and the one before, by proxy index */
    floor_record *records;
    gy_render_pose *out;
    uint32_t newest; /* which of `samples` holds the newest */
    double checksum;
} floor_state;

/* Normalised as the World normalises a blend: near unit length (always, between two results a
 * step apart) by a short series rather than a square root. */
static void floor_unit(float x, float y, float z, float w, gy_quat *out)
{
    double l2 = (double)x * x + (double)y * y + (double)z * z + (double)w * w;
    double e = l2 - 1.0;
    double inv = fabs(e) < 1e-4 ? 1.0 + e * (-0.5 + 0.375 * e) : l2 > 0.0 ? 1.0 / sqrt(l2) : 0.0;
    *out = (gy_quat){x * inv, y * inv, z * inv, w * inv};
}

/* The drawn pose between `a` and `b` at fraction `t`, as the World blends. */
static inline void floor_draw(gy_render_pose *o, gy_entity e, const float *pa, const float *ra,
                              const float *pb, const float *rb, float t)
{
    o->entity = e;
    o->pose.position.x = pa[0] + ((double)pb[0] - pa[0]) * t;
    o->pose.position.y = pa[1] + ((double)pb[1] - pa[1]) * t;
    o->pose.position.z = pa[2] + ((double)pb[2] - pa[2]) * t;
    float d = ra[0] * rb[0] + ra[1] * rb[1] + ra[2] * rb[2] + ra[3] * rb[3] < 0.0f ? -1.0f : 1.0f;
    floor_unit(ra[0] + (d * rb[0] - ra[0]) * t, ra[1] + (d * rb[1] - ra[1]) * t,
               ra[2] + (d * rb[2] - ra[2]) * t, ra[3] + (d * rb[3] - ra[3]) * t, &o->pose.rotation);
}

static inline bool floor_speaks(const gy_proxy *q, const floor_record *rec)
{
    return (q->flags & GY_PROXY_LIVE) && q->generation == rec->generation &&
           q->teleports == rec->teleports;
}

static void floor_pass(floor_state *st, const gy_proxy *const *pages, uint32_t count)
{
    const uint32_t n = count < BODIES ? count : BODIES;
    floor_sample *older = st->samples[st->newest], *newer = st->samples[st->newest ^ 1u];
    enum { AHEAD = 16 };
    for (uint32_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            __builtin_prefetch(gy_proxy_in(pages, i + AHEAD));
            __builtin_prefetch(&older[i + AHEAD]);
            __builtin_prefetch(&newer[i + AHEAD], 1);
            __builtin_prefetch(&st->out[i + AHEAD], 1);
        }
        const gy_proxy *q = gy_proxy_in(pages, i);
        const floor_record *rec = &st->records[i];
        if (!floor_speaks(q, rec))
            continue;
        floor_sample *a = &older[i], *b = &newer[i];
        memcpy(b->position, q->position, sizeof b->position);
        memcpy(b->rotation, q->rotation, sizeof b->rotation);
        b->tick = q->tick;
        floor_draw(&st->out[i], rec->entity, a->position, a->rotation, b->position, b->rotation,
                   0.5f);
    }
    st->newest ^= 1u;
    __asm__ volatile("" : : "r"(st->out) : "memory");
}

/* The floor were each proxy to carry its body's previous pose beside the new one (and its
 * velocities elsewhere): one proxy line read and one list entry written per body, nothing kept.
 * A proxy has no previous pose, so the pass stands one in from the same line (the position a
 * step back along the velocity, the same rotation): the bytes read and the arithmetic are those
 * such a proxy would cost. */
static void pair_floor_pass(floor_state *st, const gy_proxy *const *pages, uint32_t count)
{
    const uint32_t n = count < BODIES ? count : BODIES;
    const float step = 1.0f / 60.0f;
    enum { AHEAD = 16 };
    for (uint32_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            __builtin_prefetch(gy_proxy_in(pages, i + AHEAD));
            __builtin_prefetch(&st->out[i + AHEAD], 1);
        }
        const gy_proxy *q = gy_proxy_in(pages, i);
        const floor_record *rec = &st->records[i];
        if (!floor_speaks(q, rec))
            continue;
        const float *v = q->linear_velocity;
        float before[3] = {q->position[0] - v[0] * step, q->position[1] - v[1] * step,
                           q->position[2] - v[2] * step};
        floor_draw(&st->out[i], rec->entity, before, q->rotation, q->position, q->rotation, 0.5f);
    }
    __asm__ volatile("" : : "r"(st->out) : "memory");
}

/* What the cold frames time, in turn, on each new publish. */
enum { COLD_COPY, COLD_FLOOR, COLD_PAIR_FLOOR, COLD_KINDS };

/* Frames at 60 Hz in which the game thread first handles the newest publish's proxies, if it is
 * new, then ticks the World (not timed). In turn: copies them as plain data, runs the floor pass
 * and runs the pair floor pass over them, timed into us[kind] (n[kind] of each). */
static gy_result cold_run(gy_world *w, const gy_entity *ents, uint32_t frames,
                          double *const us[COLD_KINDS], uint32_t n[COLD_KINDS])
{
    gy_proxy *dst = calloc(BODIES, sizeof *dst);
    floor_state fl = {{calloc(BODIES, sizeof(floor_sample)), calloc(BODIES, sizeof(floor_sample))},
                      calloc(BODIES, sizeof(floor_record)),
                      calloc(BODIES, sizeof(gy_render_pose)),
                      0,
                      0.0};
    gy_result r = GY_OK;
    if (dst == NULL || fl.samples[0] == NULL || fl.samples[1] == NULL || fl.records == NULL ||
        fl.out == NULL)
        r = GY_ERR_OUT_OF_MEMORY;
    const uint64_t period = 1000000000u / 60u;
    uint64_t next = gy_bench_now_ns(), last = next;
    bool known = false;
    uint32_t taken = 0;
    for (uint32_t k = 0; k < COLD_KINDS; k++)
        n[k] = 0;
    for (uint32_t f = 0; f < frames && r == GY_OK; f++) {
        next += period;
        sleep_until(next);
        const gy_proxy *const *pages;
        uint32_t count;
        uint64_t tick;
        bool fresh = false;
        uint32_t kind = taken % COLD_KINDS;
        uint64_t c0 = gy_bench_thread_cpu_ns();
        if (gy_physics_read_proxies(gy_world_physics(w), &pages, &count, &tick, &fresh) == GY_OK &&
            fresh) {
            if (!known) {
                /* The records the floor passes check against, as the World's capture keeps them
                 * (not timed: taken in once, at a body's first result). */
                for (uint32_t i = 0; i < count && i < BODIES; i++) {
                    const gy_proxy *q = gy_proxy_in(pages, i);
                    fl.records[i] = (floor_record){ents[i], q->generation, q->teleports};
                }
                known = true;
            } else {
                if (kind == COLD_FLOOR) {
                    floor_pass(&fl, pages, count);
                } else if (kind == COLD_PAIR_FLOOR) {
                    pair_floor_pass(&fl, pages, count);
                } else {
                    for (uint32_t i = 0; i < count && i < BODIES; i++)
                        dst[i] = *gy_proxy_in(pages, i);
                    __asm__ volatile("" : : "r"(dst) : "memory");
                }
                us[kind][n[kind]++] = (double)(gy_bench_thread_cpu_ns() - c0) * 1e-3;
                taken++;
            }
        }
        uint64_t now = gy_bench_now_ns();
        r = gy_world_tick(w, (double)(now - last) * 1e-9);
        last = now;
    }
    for (uint32_t i = 0; fl.out != NULL && i < BODIES; i++)
        fl.checksum += fl.out[i].pose.position.y;
    free(dst);
    free(fl.samples[0]);
    free(fl.samples[1]);
    free(fl.records);
    free(fl.out);
    return r == GY_OK && fl.checksum != fl.checksum ? GY_ERR_NON_FINITE : r;
}

/* The limit: 10,000 proxies copied as plain data, median CPU per copy. */
static double copy_us(uint32_t rounds)
{
    gy_proxy *src = calloc(BODIES, sizeof *src);
    gy_proxy *dst = calloc(BODIES, sizeof *dst);
    double *t = calloc(rounds, sizeof *t);
    double median = 0.0;
    if (src != NULL && dst != NULL && t != NULL) {
        for (uint32_t i = 0; i < BODIES; i++)
            src[i].position[1] = (float)i;
        for (uint32_t k = 0; k < rounds; k++) {
            src[k % BODIES].tick = k;
            uint64_t c0 = gy_bench_thread_cpu_ns();
            for (uint32_t i = 0; i < BODIES; i++)
                dst[i] = src[i];
            __asm__ volatile("" : : "r"(dst) : "memory");
            t[k] = (double)(gy_bench_thread_cpu_ns() - c0) * 1e-3;
        }
        median = gy_bench_median(t, rounds);
    }
    free(src);
    free(dst);
    free(t);
    return median;
}

static void report_run(gy_bench *b, const char *prefix, host_run *run, double copy,
                       double cold_copy, double floor)
{
    char key[96], what[160];
    double fresh50 = gy_bench_percentile(run->fresh_us, run->fresh, 50);
    snprintf(key, sizeof key, "%s.frame_us_10k", prefix);
    snprintf(what, sizeof what, "CPU per frame with a new result: tick + render poses (p50 of %u)",
             run->fresh);
    gy_bench_report(b, key, fresh50, "us", what);
    snprintf(key, sizeof key, "%s.frame_us_10k_p99", prefix);
    gy_bench_report(b, key, gy_bench_percentile(run->fresh_us, run->fresh, 99), "us",
                    "the same, p99");
    snprintf(key, sizeof key, "%s.frame_vs_copy", prefix);
    gy_bench_report(b, key, copy > 0 ? fresh50 / copy : 0.0, "x", "p50 / copy (target <= 10)");
    snprintf(key, sizeof key, "%s.frame_vs_cold_copy", prefix);
    gy_bench_report(b, key, cold_copy > 0 ? fresh50 / cold_copy : 0.0, "x",
                    "p50 / copy of the proxies as the physics thread left them");
    snprintf(key, sizeof key, "%s.frame_vs_floor", prefix);
    gy_bench_report(b, key, floor > 0 ? fresh50 / floor : 0.0, "x", "p50 / floor");
    snprintf(key, sizeof key, "%s.all_frames_us_10k", prefix);
    snprintf(what, sizeof what, "CPU per frame, every frame (p50 of %u)", run->frames);
    gy_bench_report(b, key, gy_bench_percentile(run->frame_us, run->frames, 50), "us", what);
}

int gy_bench_section_host(gy_bench *b)
{
    const uint32_t frames = gy_bench_quick(b) ? 120u : 360u;
    gy_entity *ents = calloc(BODIES, sizeof *ents);
    double *buf = calloc(7u * frames, sizeof *buf);
    if (ents == NULL || buf == NULL) {
        free(ents);
        free(buf);
        gy_bench_note(b, "out of memory");
        return 1;
    }
    gy_world *w = NULL;
    gy_result r = build(&w, ents);
    host_run dense = {buf, frames, buf + frames, 0, 0.0, 0};
    host_run entity = {buf + 2u * frames, frames, buf + 3u * frames, 0, 0.0, 0};
    if (r == GY_OK)
        r = run(w, ents, true, 60, &dense);
    if (r == GY_OK)
        r = run(w, ents, false, 10, &entity);
    /* Three kinds in turn over 3 x frames frames: at most `frames` of each. */
    double *const cold_us[COLD_KINDS] = {buf + 4u * frames, buf + 5u * frames, buf + 6u * frames};
    uint32_t cold_n[COLD_KINDS] = {0, 0, 0};
    if (r == GY_OK)
        r = cold_run(w, ents, 3u * frames, cold_us, cold_n);
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(w), &ps);
    gy_world_destroy(w, NULL);
    free(ents);
    if (r != GY_OK) {
        free(buf);
        gy_bench_note(b, "the 10,000-body World failed: %s", gy_result_message(r));
        return 1;
    }
    double copy = copy_us(2000);
    gy_bench_report(b, "host.copy_us_10k", copy, "us", "plain copy of 10,000 64-byte proxies");
    double med[COLD_KINDS];
    for (uint32_t k = 0; k < COLD_KINDS; k++)
        med[k] = cold_n[k] > 0 ? gy_bench_median(cold_us[k], cold_n[k]) : 0.0;
    double cold = med[COLD_COPY], floor = med[COLD_FLOOR], pair = med[COLD_PAIR_FLOOR];
    gy_bench_report(b, "host.cold_copy_us_10k", cold, "us",
                    "the same copy of each new publish as the physics thread left it");
    gy_bench_report(b, "host.floor_us_10k", floor, "us",
                    "one pass: check, keep, blend and draw each new pose (the least a frame does)");
    gy_bench_report(b, "host.floor_vs_copy", copy > 0 ? floor / copy : 0.0, "x",
                    "floor / copy: the least frame_vs_copy can be");
    gy_bench_report(b, "host.pair_floor_us_10k", pair, "us",
                    "the floor were a proxy to carry the previous pose too: read, check, draw");
    gy_bench_report(b, "host.pair_floor_vs_copy", copy > 0 ? pair / copy : 0.0, "x",
                    "pair floor / copy");
    report_run(b, "host", &dense, copy, cold, floor);
    report_run(b, "host.per_entity", &entity, copy, cold, floor);
    gy_bench_note(b,
                  "%u frames at 60 Hz each way; %.1f render poses per frame from the list; "
                  "%u cold copies, %u floor and %u pair floor passes; physics: %llu ticks, "
                  "%llu bodies awake",
                  frames, (double)dense.poses / frames, cold_n[COLD_COPY], cold_n[COLD_FLOOR],
                  cold_n[COLD_PAIR_FLOOR], (unsigned long long)ps.ticks,
                  (unsigned long long)ps.awake);
    free(buf);
    return dense.checksum != dense.checksum || entity.checksum != entity.checksum;
}
