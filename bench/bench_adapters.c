/* gyre-bench section "adapters": every middleware adapter compiled in, side by side, on the two
 * scenes of gyre-bench-middleware, through the contract only (no vendor header here):
 *
 *   pile    — 1,024 boxes stacked four high on a ground plane, kept awake;
 *   statics — 10,000 static boxes (a tiled floor) and 500 spheres rolling over it.
 *
 * Per adapter and scene: median milliseconds per step and median microseconds per closest-hit
 * raycast (in batches of 100), both in thread CPU time (the machine is shared: time spent
 * preempted is not the adapter's cost), then each adapter's ratio to the first one (ode). The
 * scenes follow gyre-bench-middleware's layout and generator, so the numbers compare with its. */
#include "bench.h"
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"

#define DT         (1.0 / 60.0)
#define ITERATIONS 10
#define FRICTION   0.5
#define GRAVITY    (-9.81)

#define SPHERES      500
#define SPHERE_R     0.5
#define WORLD_EXTENT 256.0

#define RAY_BATCH 100

typedef struct ray {
    gy_vec3 origin, translation;
} ray;

typedef struct scene {
    const char *name;
    bool pile; /* else statics */
    ray *rays;
    int ray_count;
} scene;

typedef struct result {
    double step_ms, raycast_us, hit_fraction;
    uint32_t awake, contact_pairs;
} result;

typedef struct config {
    int warmup, steps, rays;
} config;

/* Creates one body of one collider; false (with a message) on failure. */
static bool add_body(const gy_backend *be, gy_backend_world *w, gy_motion_type type, gy_vec3 pos,
                     gy_quat rot, gy_vec3 vel, gy_shape shape)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = type;
    bd.pose.position = pos;
    bd.pose.rotation = rot;
    bd.linear_velocity = vel;
    bd.allow_sleeping = false; /* the cost of an awake scene */
    gy_collider_def cd = gy_default_collider_def();
    cd.shape = shape;
    cd.material.friction = FRICTION;
    gy_body_id id;
    gy_result r = be->body_create(w, &bd, &cd, 1, &id, NULL);
    if (r != GY_OK)
        fprintf(stderr, "gyre-bench adapters: %s: body_create: %s\n", be->name, gy_result_name(r));
    return r == GY_OK;
}

/* The pile and its rays, as gyre-bench-middleware builds them (same seed, same order). */
static bool build_pile(const gy_backend *be, gy_backend_world *w, scene *s)
{
    gy_shape plane = {0};
    plane.type = GY_SHAPE_PLANE;
    plane.normal = gy_v3(0, 1, 0);
    if (!add_body(be, w, GY_MOTION_STATIC, gy_v3(0, 0, 0), gy_quat_identity(), gy_v3(0, 0, 0),
                  plane))
        return false;
    gy_shape box = {0};
    box.type = GY_SHAPE_BOX;
    box.box_size = gy_v3(1, 1, 1);
    gy_bench_rng r = {12345};
    double half = 0.5 * (PILE_SIDE - 1) * PILE_PITCH;
    for (int layer = 0; layer < PILE_LAYERS; layer++)
        for (int x = 0; x < PILE_SIDE; x++)
            for (int z = 0; z < PILE_SIDE; z++) {
                double px = x * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05);
                double pz = z * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05);
                gy_quat q = gy_quat_axis_angle(gy_v3(0, 1, 0), gy_bench_rng_range(&r, -0.1, 0.1));
                if (!add_body(be, w, GY_MOTION_DYNAMIC, gy_v3(px, 0.55 + layer * 1.1, pz), q,
                              gy_v3(0, 0, 0), box))
                    return false;
            }
    double rh = 0.5 * PILE_SIDE * PILE_PITCH;
    for (int k = 0; k < s->ray_count; k++) {
        s->rays[k].origin =
            gy_v3(gy_bench_rng_range(&r, -rh, rh), 10.0, gy_bench_rng_range(&r, -rh, rh));
        s->rays[k].translation =
            gy_v3(gy_bench_rng_range(&r, -2, 2), -20.0, gy_bench_rng_range(&r, -2, 2));
    }
    return true;
}

static bool build_statics(const gy_backend *be, gy_backend_world *w, scene *s)
{
    gy_shape tile = {0};
    tile.type = GY_SHAPE_BOX;
    tile.box_size = gy_v3(TILE_SIZE, TILE_HEIGHT, TILE_SIZE);
    double half = 0.5 * (TILE_SIDE - 1) * TILE_PITCH;
    for (int x = 0; x < TILE_SIDE; x++)
        for (int z = 0; z < TILE_SIDE; z++)
            if (!add_body(be, w, GY_MOTION_STATIC,
                          gy_v3(x * TILE_PITCH - half, -0.5 * TILE_HEIGHT, z * TILE_PITCH - half),
                          gy_quat_identity(), gy_v3(0, 0, 0), tile))
                return false;
    gy_shape ball = {0};
    ball.type = GY_SHAPE_SPHERE;
    ball.radius = SPHERE_R;
    gy_bench_rng r = {777};
    for (int i = 0; i < SPHERES; i++) {
        double px = gy_bench_rng_range(&r, -half * 0.8, half * 0.8),
               py = gy_bench_rng_range(&r, 0.5, 3.0);
        double pz = gy_bench_rng_range(&r, -half * 0.8, half * 0.8);
        double vx = gy_bench_rng_range(&r, -4, 4), vz = gy_bench_rng_range(&r, -4, 4);
        if (!add_body(be, w, GY_MOTION_DYNAMIC, gy_v3(px, py, pz), gy_quat_identity(),
                      gy_v3(vx, 0, vz), ball))
            return false;
    }
    for (int k = 0; k < s->ray_count; k++) {
        s->rays[k].origin =
            gy_v3(gy_bench_rng_range(&r, -half, half), 5.0, gy_bench_rng_range(&r, -half, half));
        s->rays[k].translation =
            gy_v3(gy_bench_rng_range(&r, -5, 5), -10.0, gy_bench_rng_range(&r, -5, 5));
    }
    return true;
}

/* Builds the scene on one adapter, steps it and casts its rays; false when it could not. */
static bool measure(const gy_backend *be, scene *s, const config *cfg, result *out)
{
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.gravity = gy_v3(0, GRAVITY, 0);
    wd.solver_iterations = ITERATIONS;
    wd.world_half_extent = WORLD_EXTENT;
    gy_backend_world *w = NULL;
    if (be->world_create(&wd, &w) != GY_OK)
        return false;
    bool ok = be->bind_thread(w) == GY_OK;
    if (ok)
        ok = s->pile ? build_pile(be, w, s) : build_statics(be, w, s);
    int batches = s->ray_count / RAY_BATCH;
    int nsamples = cfg->steps > batches ? cfg->steps : batches;
    double *samples = ok ? calloc((size_t)(nsamples > 0 ? nsamples : 1), sizeof *samples) : NULL;
    ok = ok && samples != NULL;
    for (int i = 0; ok && i < cfg->warmup; i++)
        ok = be->step(w, DT) == GY_OK;
    for (int i = 0; ok && i < cfg->steps; i++) {
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        ok = be->step(w, DT) == GY_OK;
        samples[i] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e3;
    }
    if (ok) {
        out->step_ms = gy_bench_median(samples, (size_t)cfg->steps);
        gy_backend_counters c;
        be->get_counters(w, &c);
        out->awake = c.awake_bodies;
        out->contact_pairs = c.contact_pairs;
        gy_query_filter f = gy_default_query_filter();
        int hits = 0;
        for (int bt = 0; ok && bt < batches; bt++) {
            double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
            for (int k = bt * RAY_BATCH; ok && k < (bt + 1) * RAY_BATCH; k++) {
                gy_hit hit;
                uint32_t n = 0;
                ok = be->raycast(w, s->rays[k].origin, s->rays[k].translation, &f,
                                 GY_COLLECT_CLOSEST, &hit, 1, &n) == GY_OK;
                hits += n > 0;
            }
            samples[bt] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e6 / RAY_BATCH;
        }
        out->raycast_us = gy_bench_median(samples, (size_t)batches);
        out->hit_fraction = batches > 0 ? (double)hits / (batches * RAY_BATCH) : 0.0;
    }
    free(samples);
    if (w != NULL) {
        be->unbind_thread(w);
        be->world_destroy(w);
    }
    return ok;
}

int gy_bench_section_adapters(gy_bench *b)
{
    bool quick = gy_bench_quick(b);
    config cfg = {60, quick ? 60 : 300, quick ? 2000 : 20000};
    uint32_t n = gy_backend_count();
    if (n > 8)
        n = 8;
    scene scenes[2] = {{"pile", true, NULL, cfg.rays}, {"statics", false, NULL, cfg.rays}};
    result res[8][2];
    memset(res, 0, sizeof res);
    int status = 0;
    for (int si = 0; si < 2; si++) {
        scenes[si].rays = calloc((size_t)cfg.rays, sizeof *scenes[si].rays);
        if (scenes[si].rays == NULL)
            status = 1;
    }
    gy_bench_note(b,
                  "%d warm-up + %d timed steps at 60 Hz, %d iterations; %d rays; medians of "
                  "thread CPU time",
                  cfg.warmup, cfg.steps, ITERATIONS, cfg.rays);
    for (uint32_t a = 0; status == 0 && a < n; a++) {
        const gy_backend *be = gy_backend_at(a);
        for (int si = 0; si < 2; si++) {
            if (!measure(be, &scenes[si], &cfg, &res[a][si])) {
                fprintf(stderr, "gyre-bench adapters: %s: %s could not be measured\n", be->name,
                        scenes[si].name);
                status = 1;
                break;
            }
            char key[128], what[160];
            snprintf(key, sizeof key, "adapters.%s.%s.step_ms", be->name, scenes[si].name);
            snprintf(what, sizeof what, "%s: %s, median step (%u awake, %u contact pairs)",
                     be->name, scenes[si].name, res[a][si].awake, res[a][si].contact_pairs);
            gy_bench_report(b, key, res[a][si].step_ms, "ms", what);
            snprintf(key, sizeof key, "adapters.%s.%s.raycast_us", be->name, scenes[si].name);
            snprintf(what, sizeof what, "%s: %s, closest-hit ray (%.0f%% hit)", be->name,
                     scenes[si].name, 100.0 * res[a][si].hit_fraction);
            gy_bench_report(b, key, res[a][si].raycast_us, "us", what);
        }
    }
    /* Each adapter against the first (ode), next to its own numbers: above 1 means slower. */
    for (uint32_t a = 1; status == 0 && a < n; a++) {
        const char *name = gy_backend_at(a)->name, *ref = gy_backend_at(0)->name;
        for (int si = 0; si < 2; si++) {
            char key[128], what[160];
            snprintf(key, sizeof key, "adapters.%s.%s.step_ratio", name, scenes[si].name);
            snprintf(what, sizeof what, "%s / %s: %s step", name, ref, scenes[si].name);
            gy_bench_report(b, key, res[a][si].step_ms / res[0][si].step_ms, "x", what);
            snprintf(key, sizeof key, "adapters.%s.%s.raycast_ratio", name, scenes[si].name);
            snprintf(what, sizeof what, "%s / %s: %s raycast", name, ref, scenes[si].name);
            gy_bench_report(b, key, res[a][si].raycast_us / res[0][si].raycast_us, "x", what);
        }
    }
    if (n < 2)
        gy_bench_note(b, "only one adapter compiled in: no ratio");
    for (int si = 0; si < 2; si++)
        free(scenes[si].rays);
    return status;
}
