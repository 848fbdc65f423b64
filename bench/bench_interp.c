/* gyre-bench section "interp": how evenly a body moves on screen, as a host draws it.
 *
 * A sphere falls freely (no damping, nothing to hit) in a real-time World (the physics thread at
 * 60 Hz); the game thread draws it at 240, 144, 75, 60 and 30 Hz in turn, sleeping to each
 * frame's deadline, and then with stuttering frames (4-70 ms at random, and a 200 ms hitch every
 * second). Each frame reads the render pose (gy_entity_get_render_pose) right after
 * gy_world_tick.
 *
 * Per frame, drawn step ÷ true step: how far the drawn sphere moved that frame against how far
 * the sphere truly falls in the host time the frame took (its speed at the frame's drawn time ×
 * the frame's host time). A host drawing at a steady rate wants 1 every frame; the spread (sd)
 * is judder. Keys per rate (interp.hz240 ... interp.hz30, interp.stutter): .sd, .mean, .min,
 * .max of that ratio; .lag_max_ms and .lag_p99_ms, the render lag (the newest result's simulated
 * time minus the drawn time); .lag_limit_ms, one step plus one frame (the stutter pattern's
 * longest frame); .lag_over, the frames whose lag exceeded one step plus one frame (the rate's
 * period, or under stutter that frame's own host time); .backwards, the frames drawn earlier than
 * the one before (in simulated time or in height); .missed, the steady-rate deadlines skipped
 * because the game thread woke more than half a frame late (a display shows no two frames within
 * one refresh, so neither does the bench); .waits, the frames drawn at the newest result because
 * the next one came later than the render delay allows for (a descheduled physics thread: bodies
 * wait rather than extrapolate, and the next frame catches up). Frames in the first second of each
 * rate are not counted (the sphere's speed is still low, and the render delay settles). */
#include "bench.h"
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gyre/gyre.h"

#define STEP_HZ 60.0

typedef struct rate_stats {
    double *ratio, *lag;
    uint32_t n, capacity;
    uint32_t backwards;
    uint32_t lag_over; /* frames with lag above one step plus that frame's host time */
    uint32_t missed;   /* steady-rate deadlines skipped: the game thread woke a frame late */
    uint32_t waits;    /* frames drawn at the newest result: the next one was late */
    double lag_limit;
} rate_stats;

static void sleep_until(uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

typedef struct frame_state {
    bool have;
    double y, at;
    uint64_t host;
} frame_state;

/* One frame at host deadline `deadline`: tick, draw, measure against the previous frame. */
static gy_result frame(gy_world *w, gy_entity ball, uint64_t deadline, double period,
                       frame_state *prev, rate_stats *st, bool count)
{
    sleep_until(deadline);
    uint64_t host = gy_bench_now_ns();
    double dt = prev->have ? (double)(host - prev->host) * 1e-9 : 1.0 / 60.0;
    gy_result r = gy_world_tick(w, dt);
    if (r != GY_OK)
        return r;
    gy_pose p;
    gy_physics_state s;
    r = gy_entity_get_render_pose(w, ball, &p);
    if (r == GY_OK)
        r = gy_body_get_state(w, ball, &s);
    if (r != GY_OK)
        return r;
    double at = gy_world_render_time(w);
    double newest = (double)gy_world_physics_tick(w) / STEP_HZ;
    if (prev->have && count && st->n < st->capacity) {
        double drawn = prev->y - p.position.y;
        /* Speed at the middle of the frame's drawn time: the newest result's, less what gravity
         * added since. */
        double speed = -s.linear_velocity.y - 9.81 * (newest - 0.5 * (at + prev->at));
        double truly = speed * (double)(host - prev->host) * 1e-9;
        st->ratio[st->n] = truly > 0.0 ? drawn / truly : 0.0;
        st->lag[st->n] = (newest - at) * 1e3;
        st->n++;
        if (at < prev->at || p.position.y > prev->y)
            st->backwards++;
        if (at >= newest)
            st->waits++;
        /* A steady rate's frame is its period; a stuttering frame is as long as it took. */
        double frame_s = period > 0.0 ? period : (double)(host - prev->host) * 1e-9;
        if (newest - at > 1.0 / STEP_HZ + frame_s)
            st->lag_over++;
    }
    prev->have = true;
    prev->y = p.position.y;
    prev->at = at;
    prev->host = host;
    return GY_OK;
}

static void report(gy_bench *b, const char *name, rate_stats *st)
{
    char key[64];
    double sum = 0.0, sq = 0.0, lo = INFINITY, hi = -INFINITY;
    for (uint32_t i = 0; i < st->n; i++) {
        sum += st->ratio[i];
        lo = fmin(lo, st->ratio[i]);
        hi = fmax(hi, st->ratio[i]);
    }
    double mean = st->n > 0 ? sum / st->n : 0.0;
    for (uint32_t i = 0; i < st->n; i++)
        sq += (st->ratio[i] - mean) * (st->ratio[i] - mean);
    double sd = st->n > 1 ? sqrt(sq / (st->n - 1)) : 0.0;
    snprintf(key, sizeof key, "interp.%s.sd", name);
    gy_bench_report(b, key, sd, "", "sd of drawn step / true step (target <= 0.05)");
    snprintf(key, sizeof key, "interp.%s.mean", name);
    gy_bench_report(b, key, mean, "", "mean of the same");
    snprintf(key, sizeof key, "interp.%s.min", name);
    gy_bench_report(b, key, st->n > 0 ? lo : 0.0, "", "smallest");
    snprintf(key, sizeof key, "interp.%s.max", name);
    gy_bench_report(b, key, st->n > 0 ? hi : 0.0, "", "largest");
    double lag_max = gy_bench_percentile(st->lag, st->n, 100);
    snprintf(key, sizeof key, "interp.%s.lag_max_ms", name);
    gy_bench_report(b, key, lag_max, "ms", "render lag: newest result - drawn time (max)");
    snprintf(key, sizeof key, "interp.%s.lag_p99_ms", name);
    gy_bench_report(b, key, gy_bench_percentile(st->lag, st->n, 99), "ms", "the same, p99");
    snprintf(key, sizeof key, "interp.%s.lag_limit_ms", name);
    gy_bench_report(b, key, st->lag_limit * 1e3, "ms", "one step + the longest frame");
    snprintf(key, sizeof key, "interp.%s.lag_over", name);
    gy_bench_report(b, key, st->lag_over, "frames", "lag above one step + that frame's time");
    snprintf(key, sizeof key, "interp.%s.backwards", name);
    gy_bench_report(b, key, st->backwards, "frames", "drawn earlier than the frame before");
    snprintf(key, sizeof key, "interp.%s.frames", name);
    gy_bench_report(b, key, st->n, "", "frames measured");
    snprintf(key, sizeof key, "interp.%s.waits", name);
    gy_bench_report(b, key, st->waits, "frames", "drawn at the newest result (the next was late)");
    snprintf(key, sizeof key, "interp.%s.missed", name);
    gy_bench_report(b, key, st->missed, "", "deadlines skipped (the game thread woke late)");
}

int gy_bench_section_interp(gy_bench *b)
{
    static const double rates[] = {240, 144, 75, 60, 30};
    const double seconds = gy_bench_quick(b) ? 2.0 : 4.0;
    const double skip = 1.0;
    uint32_t capacity = (uint32_t)(seconds * 240.0) + 16u;
    rate_stats st = {.ratio = calloc(capacity, sizeof(double)),
                     .lag = calloc(capacity, sizeof(double)),
                     .capacity = capacity};
    gy_world *w = NULL;
    gy_world_def c = gy_default_world_def();
    gy_result r =
        st.ratio != NULL && st.lag != NULL ? gy_world_create(&c, &w) : GY_ERR_OUT_OF_MEMORY;
    gy_entity ball = gy_entity_null();
    if (r == GY_OK) {
        gy_entity_def ed = gy_default_entity_def();
        ed.position = gy_v3(0, 0, 0);
        r = gy_entity_create(w, &ed, &ball);
    }
    gy_scene_collider col;
    memset(&col, 0, sizeof col);
    col.def = gy_default_collider_def();
    col.def.shape.type = GY_SHAPE_SPHERE;
    col.def.shape.radius = 0.5;
    gy_physics_component_def d = gy_default_physics_component_def();
    d.body.linear_damping = 0.0;
    d.body.angular_damping = 0.0;
    d.body.allow_sleeping = false;
    d.colliders = &col;
    d.collider_count = 1;
    if (r == GY_OK)
        r = gy_body_add(w, ball, &d);
    for (size_t k = 0; k < sizeof rates / sizeof rates[0] && r == GY_OK; k++) {
        /* Each rate starts from rest at the origin: the teleport snaps, the speed restarts. */
        r = gy_body_teleport(w, ball, (gy_pose){gy_v3(0, 0, 0), gy_quat_identity()});
        if (r == GY_OK)
            r = gy_body_set_linear_velocity(w, ball, gy_v3(0, 0, 0));
        st.n = 0;
        st.backwards = 0;
        st.lag_over = 0;
        st.missed = 0;
        st.waits = 0;
        st.lag_limit = 1.0 / STEP_HZ + 1.0 / rates[k];
        frame_state prev = {0};
        uint64_t period = (uint64_t)(1e9 / rates[k]);
        uint64_t start = gy_bench_now_ns();
        uint32_t frames = (uint32_t)(seconds * rates[k]);
        for (uint32_t f = 1; f <= frames && r == GY_OK; f++) {
            /* A display shows no two frames within one refresh: a deadline the game thread woke
             * too late for, or one within half a frame of the previous frame, is skipped. */
            uint64_t now = gy_bench_now_ns();
            while (f < frames && (start + f * period + period / 2 < now ||
                                  (prev.have && start + f * period < prev.host + period / 2))) {
                f++;
                st.missed++;
            }
            r = frame(w, ball, start + f * period, 1.0 / rates[k], &prev, &st,
                      f > (uint32_t)(skip * rates[k]));
        }
        char name[16];
        snprintf(name, sizeof name, "hz%.0f", rates[k]);
        if (r == GY_OK)
            report(b, name, &st);
    }
    if (r == GY_OK) {
        r = gy_body_teleport(w, ball, (gy_pose){gy_v3(0, 0, 0), gy_quat_identity()});
        if (r == GY_OK)
            r = gy_body_set_linear_velocity(w, ball, gy_v3(0, 0, 0));
        st.n = 0;
        st.backwards = 0;
        st.lag_over = 0;
        st.missed = 0;
        st.waits = 0;
        st.lag_limit = 1.0 / STEP_HZ + 0.2;
        frame_state prev = {0};
        gy_bench_rng rng = {1616};
        uint64_t at = gy_bench_now_ns(), start = at, hitch = at + 1000000000u;
        while (r == GY_OK && at - start < (uint64_t)(seconds * 1.5e9)) {
            uint64_t len = (uint64_t)(gy_bench_rng_range(&rng, 4.0, 70.0) * 1e6);
            if (at >= hitch) {
                len = 200000000u;
                hitch += 1000000000u;
            }
            at += len;
            r = frame(w, ball, at, 0.0, &prev, &st, at - start > (uint64_t)(skip * 1e9));
        }
        if (r == GY_OK)
            report(b, "stutter", &st);
    }
    if (r == GY_OK) {
        gy_world_stats ws;
        gy_world_get_stats(w, &ws);
        gy_physics_stats ps;
        gy_physics_get_stats(gy_world_physics(w), &ps);
        gy_bench_note(b,
                      "%.0f s per rate (the first %.0f s not counted), physics %llu ticks, "
                      "%llu catch-up steps dropped",
                      seconds, skip, (unsigned long long)ps.ticks,
                      (unsigned long long)ps.catchup_steps_dropped);
    }
    gy_world_destroy(w, NULL);
    free(st.ratio);
    free(st.lag);
    if (r != GY_OK) {
        gy_bench_note(b, "the World failed: %s", gy_result_message(r));
        return 1;
    }
    return 0;
}
