/* gyre-bench section "raycast": one closest-hit ray through the query snapshot (lock-free, the
 * physics thread's last publish, Gyre's own BVH and exact shape tests) against the same ray
 * through the live, adapter-backed query (the simulation lock, then ODE: its static grid and
 * dynamic space), on a 10,000-body scene: 9,000 static boxes, spheres and cylinders on a 190 m
 * field and 1,000 dynamic spheres among them (zero gravity, never stepped, so both sides see
 * exactly the same world).
 *
 * The same rays go both ways, in alternating chunks. Keys: raycast.snapshot_ns and
 * raycast.live_ns (median per ray over the chunks) and raycast.snapshot_vs_live, their time ratio
 * (below 1: the snapshot is faster). raycast.agreement is the fraction of rays on which both
 * found the same body (or both nothing) at the same distance within 1 mm: a check that the two
 * measured the same thing. Rays that start inside a body are left out of it (about 2% here): by
 * contract the snapshot does not report the body a ray starts in, while ODE reports its far
 * side.
 *
 * Section "shapecast" does the same with closest-hit shape casts (spheres, boxes and capsules of
 * 0.2-0.6 m, turned every way, 30 m each) on the same scene: shapecast.snapshot_ns,
 * shapecast.live_ns, shapecast.snapshot_vs_live, and shapecast.agreement, the fraction of casts
 * starting clear of every body on which both found the same body at the same time of impact within
 * 1e-4 of the translation (or both nothing). Casts that start overlapping a body are left out of
 * it (both report such a body at fraction 0, the snapshot without a penetration depth). Both
 * casts find a convex pair's time of impact by the same conservative advancement (gyre/convex.h);
 * the note counts the disagreements where the live overlap test touches the snapshot's body just
 * past the snapshot's time of impact (the live cast hit later or not at all). */
#include "bench.h"
#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gyre/math.h"
#include "gyre/physics/commands.h"

#define STATIC_BODIES  9000u
#define DYNAMIC_BODIES 1000u
#define BODIES         (STATIC_BODIES + DYNAMIC_BODIES)
#define CHUNK          500u

typedef struct field {
    gy_physics_body_def bodies[BODIES];
    gy_collider_def colliders[BODIES];
} field;

static void make_field(field *f)
{
    gy_bench_rng r = {4242};
    for (uint32_t i = 0; i < BODIES; i++) {
        gy_physics_body_def *d = &f->bodies[i];
        gy_collider_def *c = &f->colliders[i];
        memset(d, 0, sizeof *d); /* fields not set here keep their zero defaults */
        *c = gy_default_collider_def();
        /* the start issues index i, generation i + 1 */
        d->def = gy_default_body_def();
        d->colliders = c;
        d->collider_count = 1;
        if (i < STATIC_BODIES) {
            /* A 95 x 95 lattice, 2 m apart, each piece jittered and turned. */
            double x = (double)(i % 95u) * 2.0 - 94.0 + gy_bench_rng_range(&r, -0.4, 0.4);
            double z = (double)(i / 95u) * 2.0 - 94.0 + gy_bench_rng_range(&r, -0.4, 0.4);
            double h = gy_bench_rng_range(&r, 0.5, 4.0);
            d->def.type = GY_MOTION_STATIC;
            d->def.pose.position = gy_v3(x, 0.5 * h, z);
            d->def.pose.rotation =
                gy_quat_axis_angle(gy_v3(0, 1, 0), gy_bench_rng_range(&r, 0, 3.14159));
            switch (i % 3u) {
            case 0:
                c->shape.type = GY_SHAPE_BOX;
                c->shape.box_size =
                    gy_v3(gy_bench_rng_range(&r, 0.4, 1.2), h, gy_bench_rng_range(&r, 0.4, 1.2));
                break;
            case 1:
                c->shape.type = GY_SHAPE_SPHERE;
                c->shape.radius = gy_bench_rng_range(&r, 0.3, 0.7);
                d->def.pose.position.y = c->shape.radius;
                break;
            default:
                c->shape.type = GY_SHAPE_CYLINDER;
                c->shape.radius = gy_bench_rng_range(&r, 0.2, 0.5);
                c->shape.height = h;
                break;
            }
        } else {
            d->def.type = GY_MOTION_DYNAMIC;
            d->def.pose.position =
                gy_v3(gy_bench_rng_range(&r, -95, 95), gy_bench_rng_range(&r, 5.0, 8.0),
                      gy_bench_rng_range(&r, -95, 95));
            c->shape.type = GY_SHAPE_SPHERE;
            c->shape.radius = 0.5;
        }
    }
}

typedef struct ray {
    gy_vec3 origin, translation;
} ray;

/* Rays of 60 m from 0.5-10 m above the field, every direction but mostly sideways and down. */
static void make_rays(ray *rays, uint32_t n)
{
    gy_bench_rng r = {99};
    for (uint32_t i = 0; i < n; i++) {
        rays[i].origin = gy_v3(gy_bench_rng_range(&r, -95, 95), gy_bench_rng_range(&r, 0.5, 10.0),
                               gy_bench_rng_range(&r, -95, 95));
        gy_vec3 d = gy_v3(gy_bench_rng_range(&r, -1, 1), gy_bench_rng_range(&r, -1, 0.3),
                          gy_bench_rng_range(&r, -1, 1));
        rays[i].translation = gy_v3_scale(gy_v3_normalize(d), 60.0);
    }
}

int gy_bench_section_raycast(gy_bench *b)
{
    const uint32_t chunks = gy_bench_quick(b) ? 8u : 40u;
    field *f = malloc(sizeof *f);
    ray *rays = malloc((size_t)chunks * CHUNK * sizeof *rays);
    double *snap_ns = malloc(chunks * sizeof *snap_ns), *live_ns = malloc(chunks * sizeof *live_ns);
    if (f == NULL || rays == NULL || snap_ns == NULL || live_ns == NULL) {
        free(f);
        free(rays);
        free(snap_ns);
        free(live_ns);
        return 1;
    }
    make_field(f);
    make_rays(rays, chunks * CHUNK);
    gy_physics_def d = gy_default_physics_def();
    d.backend = "ode";
    d.lockstep = true;
    d.world.gravity = gy_v3(0, 0, 0);
    gy_physics *p = NULL;
    gy_physics_bootstrap boot = {NULL, 0, f->bodies, BODIES, NULL, 0, NULL, NULL, NULL};
    int status = 1;
    if (gy_physics_create(&d, &p) != GY_OK || gy_physics_start(p, &boot) != GY_OK)
        goto done;
    const gy_snapshot_view *view = gy_physics_acquire_query_view(p);
    if (view == NULL)
        goto done;
    gy_query_filter lf = gy_default_query_filter();
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    uint32_t agree = 0, compared = 0, hits = 0, total = chunks * CHUNK;
    /* The smallest sphere the API takes (a smaller one is refused, and would find nothing). */
    const gy_shape point = {.type = GY_SHAPE_SPHERE, .radius = GY_MIN_SHAPE_SIZE};
    double sink = 0;
    for (uint32_t c = 0; c < chunks; c++) {
        const ray *rs = rays + (size_t)c * CHUNK;
        gy_snapshot_hit sh[CHUNK];
        uint32_t sn[CHUNK];
        uint64_t t0 = gy_bench_now_ns();
        for (uint32_t i = 0; i < CHUNK; i++)
            gy_snapshot_view_raycast(view, rs[i].origin, rs[i].translation, &sf, GY_COLLECT_CLOSEST,
                                     &sh[i], 1, &sn[i]);
        uint64_t t1 = gy_bench_now_ns();
        gy_hit lh[CHUNK];
        uint32_t ln[CHUNK];
        for (uint32_t i = 0; i < CHUNK; i++)
            if (gy_physics_raycast(p, rs[i].origin, rs[i].translation, &lf, GY_COLLECT_CLOSEST,
                                   &lh[i], 1, &ln[i], NULL) != GY_OK)
                goto done;
        uint64_t t2 = gy_bench_now_ns();
        snap_ns[c] = (double)(t1 - t0) / CHUNK;
        live_ns[c] = (double)(t2 - t1) / CHUNK;
        for (uint32_t i = 0; i < CHUNK; i++) {
            bool sh_hit = sn[i] > 0, lh_hit = ln[i] > 0;
            hits += lh_hit;
            gy_snapshot_hit inside;
            uint32_t in_count = 0;
            gy_pose at = {rs[i].origin, gy_quat_identity()};
            if (gy_snapshot_view_overlap(view, &point, NULL, at, &sf, GY_COLLECT_ANY, &inside, 1,
                                         &in_count) != GY_OK)
                goto done;
            if (in_count > 0)
                continue;
            compared++;
            if (sh_hit != lh_hit)
                continue;
            if (!sh_hit) {
                agree++;
                continue;
            }
            sink += sh[i].distance;
            if ((uint32_t)(lh[i].user_data >> 32) == sh[i].body.index &&
                fabs(lh[i].distance - sh[i].distance) < 1e-3)
                agree++;
        }
    }
    double s = gy_bench_median(snap_ns, chunks), l = gy_bench_median(live_ns, chunks);
    gy_bench_report(b, "raycast.snapshot_ns", s, "ns", "closest hit through the query snapshot");
    gy_bench_report(b, "raycast.live_ns", l, "ns", "the same ray through the live ODE query");
    gy_bench_report(b, "raycast.snapshot_vs_live", s / l, "x", "time ratio (below 1: faster)");
    gy_bench_report(b, "raycast.agreement", compared ? (double)agree / compared : 0.0, "",
                    "rays from outside every body: both found the same body at the same distance "
                    "(or none)");
    gy_bench_note(b,
                  "%u bodies (%u static, %u dynamic), %u rays of 60 m in %u chunks, %.0f%% hit "
                  "something (mean hit distance %.1f m), %u started inside a body",
                  BODIES, STATIC_BODIES, DYNAMIC_BODIES, total, chunks, 100.0 * hits / total,
                  hits ? sink / hits : 0.0, total - compared);
    status = 0;
done:
    gy_physics_destroy(p);
    free(f);
    free(rays);
    free(snap_ns);
    free(live_ns);
    return status;
}

typedef struct cast {
    gy_shape shape;
    gy_pose pose;
    gy_vec3 translation;
} cast;

#define CAST_CHUNK 100u

/* Spheres, boxes and capsules from 0.5-10 m above the field, 30 m in every direction but mostly
 * sideways and down. */
static void make_casts(cast *casts, uint32_t n)
{
    gy_bench_rng r = {777};
    for (uint32_t i = 0; i < n; i++) {
        cast *c = &casts[i];
        memset(&c->shape, 0, sizeof c->shape);
        switch (i % 3u) {
        case 0:
            c->shape.type = GY_SHAPE_SPHERE;
            c->shape.radius = gy_bench_rng_range(&r, 0.2, 0.6);
            break;
        case 1:
            c->shape.type = GY_SHAPE_BOX;
            c->shape.box_size =
                gy_v3(gy_bench_rng_range(&r, 0.2, 0.6), gy_bench_rng_range(&r, 0.2, 0.6),
                      gy_bench_rng_range(&r, 0.2, 0.6));
            break;
        default:
            c->shape.type = GY_SHAPE_CAPSULE;
            c->shape.radius = gy_bench_rng_range(&r, 0.1, 0.3);
            c->shape.height = 2.0 * c->shape.radius + gy_bench_rng_range(&r, 0.1, 0.6);
            break;
        }
        c->pose.position = gy_v3(gy_bench_rng_range(&r, -95, 95), gy_bench_rng_range(&r, 0.5, 10.0),
                                 gy_bench_rng_range(&r, -95, 95));
        gy_vec3 axis = gy_v3(gy_bench_rng_range(&r, -1, 1), gy_bench_rng_range(&r, -1, 1),
                             gy_bench_rng_range(&r, -1, 1));
        c->pose.rotation = gy_quat_axis_angle(gy_v3_normalize(gy_v3_add(axis, gy_v3(0, 1e-3, 0))),
                                              gy_bench_rng_range(&r, 0, 3.14159));
        gy_vec3 d = gy_v3(gy_bench_rng_range(&r, -1, 1), gy_bench_rng_range(&r, -1, 0.3),
                          gy_bench_rng_range(&r, -1, 1));
        c->translation = gy_v3_scale(gy_v3_normalize(d), 30.0);
    }
}

/* Whether the live overlap test finds the snapshot's body 2e-4 of the way past the snapshot's
 * time of impact: a disagreement where the live cast passed over a contact. */
static bool live_touches(gy_physics *p, const cast *c, const gy_snapshot_hit *h)
{
    gy_pose at = c->pose;
    at.position = gy_v3_mad(at.position, c->translation, h->fraction + 2e-4);
    gy_query_filter lf = gy_default_query_filter();
    gy_hit oh[8];
    uint32_t n = 0;
    if (gy_physics_overlap(p, &c->shape, at, &lf, GY_COLLECT_ALL, oh, 8, &n, NULL) != GY_OK)
        return false;
    for (uint32_t k = 0; k < n; k++)
        if ((uint32_t)(oh[k].user_data >> 32) == h->body.index)
            return true;
    return false;
}

int gy_bench_section_shapecast(gy_bench *b)
{
    const uint32_t chunks = gy_bench_quick(b) ? 6u : 30u;
    field *f = malloc(sizeof *f);
    cast *casts = malloc((size_t)chunks * CAST_CHUNK * sizeof *casts);
    double *snap_ns = malloc(chunks * sizeof *snap_ns), *live_ns = malloc(chunks * sizeof *live_ns);
    if (f == NULL || casts == NULL || snap_ns == NULL || live_ns == NULL) {
        free(f);
        free(casts);
        free(snap_ns);
        free(live_ns);
        return 1;
    }
    make_field(f);
    make_casts(casts, chunks * CAST_CHUNK);
    gy_physics_def d = gy_default_physics_def();
    d.backend = "ode";
    d.lockstep = true;
    d.world.gravity = gy_v3(0, 0, 0);
    gy_physics *p = NULL;
    gy_physics_bootstrap boot = {NULL, 0, f->bodies, BODIES, NULL, 0, NULL, NULL, NULL};
    int status = 1;
    if (gy_physics_create(&d, &p) != GY_OK || gy_physics_start(p, &boot) != GY_OK)
        goto done;
    const gy_snapshot_view *view = gy_physics_acquire_query_view(p);
    if (view == NULL)
        goto done;
    gy_query_filter lf = gy_default_query_filter();
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    uint32_t agree = 0, compared = 0, hits = 0, grazes = 0, total = chunks * CAST_CHUNK;
    double sink = 0, worst = 0;
    for (uint32_t c = 0; c < chunks; c++) {
        const cast *cs = casts + (size_t)c * CAST_CHUNK;
        gy_snapshot_hit sh[CAST_CHUNK];
        uint32_t sn[CAST_CHUNK];
        uint64_t t0 = gy_bench_now_ns();
        for (uint32_t i = 0; i < CAST_CHUNK; i++)
            gy_snapshot_view_shape_cast(view, &cs[i].shape, NULL, cs[i].pose, cs[i].translation,
                                        &sf, GY_COLLECT_CLOSEST, &sh[i], 1, &sn[i]);
        uint64_t t1 = gy_bench_now_ns();
        gy_hit lh[CAST_CHUNK];
        uint32_t ln[CAST_CHUNK];
        for (uint32_t i = 0; i < CAST_CHUNK; i++)
            if (gy_physics_shape_cast(p, &cs[i].shape, cs[i].pose, cs[i].translation, &lf,
                                      GY_COLLECT_CLOSEST, &lh[i], 1, &ln[i], NULL) != GY_OK)
                goto done;
        uint64_t t2 = gy_bench_now_ns();
        snap_ns[c] = (double)(t1 - t0) / CAST_CHUNK;
        live_ns[c] = (double)(t2 - t1) / CAST_CHUNK;
        for (uint32_t i = 0; i < CAST_CHUNK; i++) {
            bool sh_hit = sn[i] > 0, lh_hit = ln[i] > 0;
            hits += lh_hit;
            gy_snapshot_hit inside;
            uint32_t in_count = 0;
            if (gy_snapshot_view_overlap(view, &cs[i].shape, NULL, cs[i].pose, &sf, GY_COLLECT_ANY,
                                         &inside, 1, &in_count) != GY_OK)
                goto done;
            if (in_count > 0)
                continue;
            compared++;
            bool same = sh_hit == lh_hit &&
                        (!sh_hit || (uint32_t)(lh[i].user_data >> 32) == sh[i].body.index);
            if (!same) {
                grazes += sh_hit && live_touches(p, &cs[i], &sh[i]);
                continue;
            }
            if (!sh_hit) {
                agree++;
                continue;
            }
            sink += sh[i].distance;
            double diff = fabs(lh[i].fraction - sh[i].fraction);
            worst = fmax(worst, diff);
            agree += diff <= 1e-4;
            grazes +=
                diff > 1e-4 && lh[i].fraction > sh[i].fraction && live_touches(p, &cs[i], &sh[i]);
        }
    }
    double s = gy_bench_median(snap_ns, chunks), l = gy_bench_median(live_ns, chunks);
    gy_bench_report(b, "shapecast.snapshot_ns", s, "ns",
                    "closest-hit shape cast through the query snapshot");
    gy_bench_report(b, "shapecast.live_ns", l, "ns", "the same cast through the live ODE query");
    gy_bench_report(b, "shapecast.snapshot_vs_live", s / l, "x", "time ratio (below 1: faster)");
    gy_bench_report(b, "shapecast.agreement", compared ? (double)agree / compared : 0.0, "",
                    "casts from clear of every body: both found the same body at the same time of "
                    "impact within 1e-4 (or none)");
    gy_bench_note(b,
                  "%u bodies, %u casts (spheres, boxes, capsules) of 30 m in %u chunks, %.0f%% hit "
                  "something (mean hit distance %.1f m), %u started overlapping a body; largest "
                  "time-of-impact difference on a shared hit %.2g; of %u disagreements, %u are "
                  "contacts the live cast passed over (it hit later or not at all, and the live "
                  "overlap test touches the snapshot's body just past the snapshot's time of "
                  "impact)",
                  BODIES, total, chunks, 100.0 * hits / total, hits ? sink / hits : 0.0,
                  total - compared, worst, compared - agree, grazes);
    status = 0;
done:
    gy_physics_destroy(p);
    free(f);
    free(casts);
    free(snap_ns);
    free(live_ns);
    return status;
}
