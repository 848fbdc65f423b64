/* gyre-bench section "geometry": what a 200 × 200 terrain cell (40,401 vertices, 80,000
 * triangles) created while a World runs costs the physics thread per tick, built in slices under
 * the default budget (gy_physics_def.geometry_budget), against building it whole in one tick (a
 * budget no build reaches: the baseline, what every tick paid before the budget existed).
 *
 * Per adapter, a lockstep World ticks until the cell's body is live; after each tick the physics
 * layer's geometry stats give the time that tick spent on geometry. The query-side ticks (query
 * blob: vertices, triangle boxes, triangle tree; the edge classification) are reported apart from
 * the ticks that make an adapter piece (budget / 8 triangles each).
 *
 * Keys, per adapter B: geometry.B.slice_ms (p50, p99, max over the query-side ticks),
 * geometry.B.adapter_ms (the largest tick that made an adapter piece), geometry.B.ticks (ticks
 * until the body is live), geometry.B.whole_ms (baseline: the whole build in one tick),
 * geometry.B.max_slice_vs_whole (the largest query-side tick over the baseline) and
 * geometry.B.max_tick_vs_whole (the largest tick of any kind over the baseline).
 *
 * Then a rock hull created the same way: 16,384 points on a sphere of radius 2 cut flat at
 * y = 1.5 (14,370 hull vertices), built in slices under the default budget against the whole
 * build in one tick. Keys, per adapter B: geometry.B.hull_slice_ms (p50, p99, max over the ticks
 * that ran the hull's build), geometry.B.hull_adapter_ms (the tick that gave the built hull to the
 * adapter and the query blob; on ODE the adapter refuses a runtime hull of more than 256
 * vertices, so this is the refusal), geometry.B.hull_ticks, geometry.B.hull_whole_ms (baseline)
 * and geometry.B.hull_max_tick_vs_whole. */
#include "bench.h"
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/gyre.h"

#define GRID 200u

static gy_mesh_def terrain(gy_vec3 **v, uint32_t **idx)
{
    uint32_t nv = (GRID + 1u) * (GRID + 1u), ni = GRID * GRID * 6u;
    *v = malloc(nv * sizeof **v);
    *idx = malloc(ni * sizeof **idx);
    gy_mesh_def m = {*v, nv, *idx, ni};
    if (*v == NULL || *idx == NULL)
        return m;
    for (uint32_t z = 0; z <= GRID; z++)
        for (uint32_t x = 0; x <= GRID; x++)
            (*v)[z * (GRID + 1u) + x] =
                gy_v3(0.5 * x - 50.0, 0.1 * (double)((x * 7u + z * 3u) % 5u), 0.5 * z - 50.0);
    uint32_t k = 0;
    for (uint32_t z = 0; z < GRID; z++)
        for (uint32_t x = 0; x < GRID; x++) {
            uint32_t a = z * (GRID + 1u) + x, b = a + 1u, c = a + GRID + 1u, d = c + 1u;
            uint32_t tri[6] = {a, c, b, b, c, d};
            memcpy(&(*idx)[k], tri, sizeof tri);
            k += 6u;
        }
    return m;
}

/* Ticks a World with `budget` until the geometry's job is done: a mesh (mesh non-NULL) until the
 * terrain's body is live, a hull (hull non-NULL) until its job is finished (its body live, or
 * refused). slice_ms gets the ticks that built on the query side (NULL: not kept), *adapter_ms
 * the largest tick that ran an adapter's part (with whatever slices shared it), *max_ms the
 * largest tick. */
static gy_result run(const char *backend, uint32_t budget, const gy_mesh_def *mesh,
                     const gy_hull_def *hull, double *slice_ms, uint32_t slice_cap,
                     uint32_t *slices, double *adapter_ms, double *max_ms, uint32_t *ticks)
{
    gy_world_def c = gy_default_world_def();
    c.physics.lockstep = true;
    c.physics.backend = backend;
    c.physics.geometry_budget = budget;
    gy_world *w = NULL;
    gy_result r = gy_world_create(&c, &w);
    if (r != GY_OK)
        return r;
    gy_world_tick(w, 1.0 / 60.0);
    gy_geometry g;
    gy_entity body = {0};
    r = mesh != NULL ? gy_geometry_create_mesh(w, mesh, &g) : gy_geometry_create_hull(w, hull, &g);
    if (r == GY_OK) {
        gy_shape shape;
        memset(&shape, 0, sizeof shape);
        shape.type = mesh != NULL ? GY_SHAPE_MESH : GY_SHAPE_HULL;
        shape.resource.bits = g.bits;
        gy_scene_collider col = gy_default_scene_collider(shape);
        gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_STATIC, &col);
        r = gy_body_create(w, gy_v3(0, 0, 0), &d, &body);
        gy_geometry_release(w, g);
    }
    *slices = 0;
    *ticks = 0;
    *adapter_ms = *max_ms = 0.0;
    for (bool done = false; r == GY_OK && !done && *ticks < 100000u;) {
        r = gy_world_tick(w, 1.0 / 60.0);
        ++*ticks;
        gy_physics_geometry_stats s;
        gy_physics_get_geometry_stats(gy_world_physics(w), &s);
        double ms = (double)s.tick_ns * 1e-6;
        *max_ms = ms > *max_ms ? ms : *max_ms;
        if (s.tick_adapter_units > 0)
            *adapter_ms = ms > *adapter_ms ? ms : *adapter_ms;
        else if (slice_ms != NULL && *slices < slice_cap && s.tick_units > 0)
            slice_ms[(*slices)++] = ms;
        if (mesh != NULL) {
            gy_physics_state st;
            done = gy_body_get_state(w, body, &st) == GY_OK && st.has_body;
        } else {
            done = s.jobs == 0 && s.bodies_waiting == 0;
        }
    }
    gy_world_destroy(w, NULL);
    return r;
}

#define ROCK_POINTS 16384u

static gy_vec3 *rock(void)
{
    gy_vec3 *p = malloc(ROCK_POINTS * sizeof *p);
    for (uint32_t i = 0; p != NULL && i < ROCK_POINTS; i++) {
        double y = 1.0 - 2.0 * (i + 0.5) / ROCK_POINTS, r = sqrt(1.0 - y * y);
        double a = 2.399963229728653 * i;
        p[i] = gy_v3(2.0 * r * cos(a), fmin(2.0 * y, 1.5), 2.0 * r * sin(a));
    }
    return p;
}

/* The rock hull's keys for adapter `name`. */
static int report_hull(gy_bench *b, const char *name, const gy_vec3 *pts, double *slice,
                       uint32_t cap)
{
    uint32_t slices, ticks, whole_ticks, none;
    double adapter, max, whole_adapter, whole;
    gy_hull_def hd = {pts, ROCK_POINTS};
    gy_result r = run(name, 0, NULL, &hd, slice, cap, &slices, &adapter, &max, &ticks);
    if (r == GY_OK)
        r = run(name, UINT32_MAX, NULL, &hd, NULL, 0, &none, &whole_adapter, &whole, &whole_ticks);
    if (r != GY_OK) {
        gy_bench_note(b, "%s: the rock World failed: %s", name, gy_result_message(r));
        return 1;
    }
    char key[96];
    snprintf(key, sizeof key, "geometry.%s.hull_slice_ms", name);
    if (slices > 0) /* none when the hull is made whole in its adapter's tick */
        gy_bench_report_distribution(
            b, key, slice, slices, "ms",
            "physics-thread time per tick of the hull's build, default budget");
    snprintf(key, sizeof key, "geometry.%s.hull_adapter_ms", name);
    gy_bench_report(b, key, adapter, "ms", "the tick that gave the built hull to the adapter");
    snprintf(key, sizeof key, "geometry.%s.hull_ticks", name);
    gy_bench_report(b, key, ticks, "ticks", "ticks until the hull's job is done");
    snprintf(key, sizeof key, "geometry.%s.hull_whole_ms", name);
    gy_bench_report(b, key, whole, "ms", "baseline: the whole hull in one tick");
    snprintf(key, sizeof key, "geometry.%s.hull_max_tick_vs_whole", name);
    gy_bench_report(b, key, whole > 0 ? max / whole : 0.0, "x", "largest tick / baseline");
    snprintf(key, sizeof key, "geometry.%s.hull_max_tick_ms", name);
    gy_bench_report(b, key, max, "ms", "the largest tick, default budget");
    return 0;
}

int gy_bench_section_geometry(gy_bench *b)
{
    gy_vec3 *v;
    uint32_t *idx;
    gy_mesh_def m = terrain(&v, &idx);
    enum { CAP = 16384 };
    double *slice = malloc(CAP * sizeof *slice);
    int status = 0;
    if (v == NULL || idx == NULL || slice == NULL) {
        gy_bench_note(b, "out of memory");
        status = 1;
    }
    for (uint32_t i = 0; status == 0 && gy_backend_at(i) != NULL; i++) {
        const char *name = gy_backend_at(i)->name;
        uint32_t slices, ticks, whole_ticks, none;
        double adapter, max, whole_adapter, whole;
        gy_result r = run(name, 0, &m, NULL, slice, CAP, &slices, &adapter, &max, &ticks);
        if (r == GY_OK)
            r = run(name, UINT32_MAX, &m, NULL, NULL, 0, &none, &whole_adapter, &whole,
                    &whole_ticks);
        if (r != GY_OK || slices == 0) {
            gy_bench_note(b, "%s: the terrain World failed: %s", name, gy_result_message(r));
            status = 1;
            break;
        }
        char key[96];
        snprintf(key, sizeof key, "geometry.%s.slice_ms", name);
        double max_slice = slice[0];
        for (uint32_t k = 1; k < slices; k++)
            max_slice = slice[k] > max_slice ? slice[k] : max_slice;
        gy_bench_report_distribution(b, key, slice, slices, "ms",
                                     "physics-thread time per sliced tick, default budget");
        snprintf(key, sizeof key, "geometry.%s.adapter_ms", name);
        gy_bench_report(b, key, adapter, "ms", "the largest tick that made an adapter piece");
        snprintf(key, sizeof key, "geometry.%s.ticks", name);
        gy_bench_report(b, key, ticks, "ticks", "ticks until the body is live");
        snprintf(key, sizeof key, "geometry.%s.whole_ms", name);
        gy_bench_report(b, key, whole, "ms", "baseline: the whole build in one tick");
        snprintf(key, sizeof key, "geometry.%s.max_slice_vs_whole", name);
        gy_bench_report(b, key, whole > 0 ? max_slice / whole : 0.0, "x",
                        "largest query-side tick / baseline");
        snprintf(key, sizeof key, "geometry.%s.max_tick_vs_whole", name);
        gy_bench_report(b, key, whole > 0 ? max / whole : 0.0, "x", "largest tick / baseline");
    }
    gy_bench_note(b, "200 x 200 terrain: 40,401 vertices, 80,000 triangles; budget %u units",
                  GY_PHYSICS_DEFAULT_GEOMETRY_BUDGET);
    gy_vec3 *pts = rock();
    if (pts == NULL)
        status = 1;
    for (uint32_t i = 0; status == 0 && gy_backend_at(i) != NULL; i++)
        status = report_hull(b, gy_backend_at(i)->name, pts, slice, CAP);
    gy_bench_note(b, "rock hull: 16,384 points, 14,370 hull vertices");
    free(pts);
    free(slice);
    free(v);
    free(idx);
    return status;
}
