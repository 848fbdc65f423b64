/* gyre-bench section "debugdraw": what gy_world_debug_draw costs the game thread for a World of
 * 10,000 bodies, against reading the same bodies' render poses (what a host does every frame to
 * draw its own meshes).
 *
 * A lockstep World holds 10,000 spheres on a lattice over a static floor, half of them resting on
 * it (10,000 colliders, 5,000 touching pairs, one tree node pair per collider). After the scene
 * has settled the game thread times, in turn, one debug draw of the colliders, one of the
 * colliders with contacts and bounds, and one gy_entity_get_render_pose per entity, each with
 * callbacks that only sum what they are given, as CPU time of the calling thread.
 *
 * Keys: debugdraw.colliders_us_10k, debugdraw.full_us_10k (colliders, bounds, contacts),
 * debugdraw.render_poses_us_10k (the baseline), and debugdraw.colliders_vs_poses, the ratio of
 * the first to the last (medians). */
#include "bench.h"
#include "bench_common.h"

#include <stdlib.h>
#include <string.h>

#include "gyre/gyre.h"

#define BODIES 10000u
#define SIDE   100u
#define PITCH  1.5

static void sum_sphere(void *ctx, gy_pose pose, double radius, gy_debug_color c, bool solid)
{
    (void)c;
    (void)solid;
    *(double *)ctx += pose.position.y + radius;
}
static void sum_box(void *ctx, gy_pose pose, gy_vec3 half, gy_debug_color c, bool solid)
{
    (void)c;
    (void)solid;
    *(double *)ctx += pose.position.y + half.x;
}
static void sum_segment(void *ctx, gy_vec3 a, gy_vec3 b, gy_debug_color c)
{
    (void)c;
    *(double *)ctx += a.y + b.y;
}
static void sum_point(void *ctx, gy_vec3 p, double size, gy_debug_color c)
{
    (void)c;
    *(double *)ctx += p.y + size;
}
/* The scene has no capsules, cylinders, planes, hulls or meshes: these never run. */
static void no_round(void *ctx, gy_pose p, double r, double h, gy_debug_color c, bool s)
{
    (void)p, (void)r, (void)h, (void)c, (void)s;
    *(double *)ctx += 1.0;
}
static void no_plane(void *ctx, gy_vec3 n, double o, gy_debug_color c, bool s)
{
    (void)n, (void)o, (void)c, (void)s;
    *(double *)ctx += 1.0;
}
static void no_tris(void *ctx, gy_pose p, const gy_vec3 *v, uint32_t nv, const uint32_t *i,
                    uint32_t nt, gy_debug_color c, bool s)
{
    (void)p, (void)v, (void)nv, (void)i, (void)nt, (void)c, (void)s;
    *(double *)ctx += 1.0;
}

static gy_result build(gy_world **out, gy_entity *ents)
{
    gy_world_def c = gy_default_world_def();
    c.physics.lockstep = true;
    c.step_timeout_ns = 120000000000ull; /* the first tick creates 10,001 bodies on a busy machine */
    gy_result r = gy_world_create(&c, out);
    if (r != GY_OK)
        return r;
    gy_world *w = *out;
    gy_scene_collider col;
    memset(&col, 0, sizeof col);
    col.def = gy_default_collider_def();
    col.def.shape = gy_box(gy_v3(SIDE * PITCH + 10.0, 1.0, SIDE * PITCH + 10.0));
    gy_physics_component_def floor = gy_default_physics_component_def_for(GY_BODY_STATIC, &col);
    gy_entity ground;
    r = gy_body_create(w, gy_v3(SIDE * PITCH / 2.0, -0.5, SIDE * PITCH / 2.0), &floor, &ground);
    col.def.shape = gy_sphere(0.5);
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &col);
    d.body.allow_sleeping = false;
    for (uint32_t i = 0; i < BODIES && r == GY_OK; i++) {
        /* Even bodies rest on the floor, odd ones start high enough to stay in the air. */
        double y = i % 2u == 0u ? 0.5 : 50.0;
        r = gy_body_create(w, gy_v3((double)(i % SIDE) * PITCH, y, (double)(i / SIDE) * PITCH), &d,
                           &ents[i]);
    }
    for (uint32_t i = 0; i < 30 && r == GY_OK; i++)
        r = gy_world_tick(w, 1.0 / 60.0);
    return r;
}

int gy_bench_section_debugdraw(gy_bench *b)
{
    const uint32_t rounds = gy_bench_quick(b) ? 20u : 100u;
    gy_entity *ents = calloc(BODIES, sizeof *ents);
    double *t = calloc(3u * rounds, sizeof *t);
    if (ents == NULL || t == NULL) {
        free(ents);
        free(t);
        gy_bench_note(b, "out of memory");
        return 1;
    }
    gy_world *w = NULL;
    gy_result r = build(&w, ents);
    double sum = 0.0;
    gy_debug_draw d = gy_default_debug_draw();
    d.sphere = sum_sphere;
    d.box = sum_box;
    d.capsule = no_round;
    d.cylinder = no_round;
    d.plane = no_plane;
    d.hull = no_tris;
    d.mesh = no_tris;
    d.segment = sum_segment;
    d.point = sum_point;
    d.context = &sum;
    gy_world_stats ws;
    memset(&ws, 0, sizeof ws);
    for (uint32_t k = 0; k < rounds && r == GY_OK; k++) {
        d.flags = GY_DEBUG_DRAW_COLLIDERS;
        uint64_t c0 = gy_bench_thread_cpu_ns();
        r = gy_world_debug_draw(w, &d);
        uint64_t c1 = gy_bench_thread_cpu_ns();
        d.flags = GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_BOUNDS | GY_DEBUG_DRAW_CONTACTS;
        if (r == GY_OK)
            r = gy_world_debug_draw(w, &d);
        uint64_t c2 = gy_bench_thread_cpu_ns();
        for (uint32_t i = 0; i < BODIES && r == GY_OK; i++) {
            gy_pose p;
            r = gy_entity_get_render_pose(w, ents[i], &p);
            sum += p.position.y;
        }
        uint64_t c3 = gy_bench_thread_cpu_ns();
        t[k] = (double)(c1 - c0) * 1e-3;
        t[rounds + k] = (double)(c2 - c1) * 1e-3;
        t[2u * rounds + k] = (double)(c3 - c2) * 1e-3;
    }
    if (w != NULL) {
        gy_world_get_stats(w, &ws);
        gy_world_destroy(w, NULL);
    }
    free(ents);
    if (r != GY_OK) {
        free(t);
        gy_bench_note(b, "the 10,000-body World failed: %s", gy_result_message(r));
        return 1;
    }
    double colliders = gy_bench_median(t, rounds);
    double full = gy_bench_median(t + rounds, rounds);
    double poses = gy_bench_median(t + 2u * rounds, rounds);
    gy_bench_report(b, "debugdraw.colliders_us_10k", colliders, "us",
                    "CPU per debug draw of 10,000 colliders (p50)");
    gy_bench_report(b, "debugdraw.full_us_10k", full, "us",
                    "the same with bounds and contacts (p50)");
    gy_bench_report(b, "debugdraw.render_poses_us_10k", poses, "us",
                    "baseline: 10,000 gy_entity_get_render_pose calls (p50)");
    gy_bench_report(b, "debugdraw.colliders_vs_poses", poses > 0 ? colliders / poses : 0.0, "x",
                    "colliders / baseline");
    gy_bench_note(b, "%u rounds each; %u touching pairs drawn as contacts", rounds,
                  ws.touching_pairs);
    free(t);
    return sum != sum;
}
