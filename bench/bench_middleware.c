/* gyre-bench-middleware: what the ODE adapter costs next to bare ODE, in the same run.
 *
 *   gyre-bench-middleware [--json FILE] [--quick] [--streaming]
 *
 * Two scenes, each built with bare ODE calls (the baseline) and through the adapter
 * (gy_backend_find("ode")), in the same run:
 *   pile    — 1,024 awake boxes stacked four high on a ground plane;
 *   statics — 10,000 static boxes (a tiled floor) and 500 spheres rolling over it.
 * Bare ODE runs each scene three ways: everything in one hash space, everything in one
 * sweep-and-prune space, and statics in their own quadtree with the moving bodies in a hash space.
 * Reported (thread CPU time): median milliseconds per step and median microseconds per closest-hit
 * raycast (in batches of 100), and adapter / bare (the quadtree layout: bare ODE with statics in
 * their own space).
 *
 * Then streaming through the adapter: about 10,000 statics resident in cells that are released
 * and created 64 times per simulated second around a moving focus, with 500 spheres rolling among
 * them (per-create, per-release and step cost with and without the churn), and a bulk test that
 * creates statics one by one, steps once and releases them oldest first. --streaming runs only
 * this part.
 *
 * This is the only file outside middleware/ode that includes ODE's headers: it is the baseline. */
#include <cjson/cJSON.h>
#include <math.h>
#include <ode/ode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "gyre/backend/backend.h"
#include "gyre/math.h"

/* ---- shared set-up --------------------------------------------------------------------------- */

/* World parameters both sides use, so the baseline does the same work the adapter does. */
#define BENCH_DT           (1.0 / 60.0)
#define BENCH_ITERATIONS   10
#define BENCH_MAX_CONTACTS 4
#define BENCH_FRICTION     0.5
#define BENCH_GRAVITY      (-9.81)
#define BENCH_ERP          0.2
#define BENCH_CFM          1e-5

#define SPHERES      500
#define SPHERE_R     0.5
#define WORLD_EXTENT 256.0 /* half-size of the region everything lives in */
/* ODE's quadtree splits X and Y (it assumes Z up). As the adapter does, make its Y range so tall
 * that no Y split cuts through the ground-level statics; it then partitions along X only. */
#define QUADTREE_DEPTH 7

typedef struct bench_config {
    int warmup_steps, steps, rays;
} bench_config;

/* The machine is shared, so a preempted step or batch would drag a mean; medians do not. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Rays are timed in batches of this many; the median batch gives the per-ray cost. */
#define RAY_BATCH 100

typedef struct body_spec {
    gy_vec3 pos;
    gy_quat rot;
    gy_vec3 vel;
} body_spec;

typedef struct ray_spec {
    gy_vec3 origin, translation;
} ray_spec;

/* A scene as plain data, fed to both sides. */
typedef struct scene {
    const char *name;
    bool ground_plane;
    body_spec *statics; /* boxes of static_size */
    int static_count;
    gy_vec3 static_size;
    body_spec *dynamics;
    int dynamic_count;
    bool dynamic_spheres; /* else boxes of dynamic_size */
    gy_vec3 dynamic_size;
    ray_spec *rays;
    int ray_count;
} scene;

static void scene_free(scene *s)
{
    free(s->statics);
    free(s->dynamics);
    free(s->rays);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL) {
        fprintf(stderr, "gyre-bench-middleware: out of memory\n");
        exit(1);
    }
    return p;
}

static scene make_pile(int rays)
{
    scene s = {0};
    s.name = "pile";
    s.ground_plane = true;
    s.dynamic_count = PILE_BOXES;
    s.dynamic_size = gy_v3(1.0, 1.0, 1.0);
    s.dynamics = xcalloc((size_t)s.dynamic_count, sizeof *s.dynamics);
    gy_bench_rng r = {12345};
    int i = 0;
    for (int layer = 0; layer < PILE_LAYERS; layer++)
        for (int x = 0; x < PILE_SIDE; x++)
            for (int z = 0; z < PILE_SIDE; z++, i++) {
                /* Jittered, turned a little and stacked with small gaps, so the boxes settle
                 * into an untidy heap without starting inside each other. */
                double half = 0.5 * (PILE_SIDE - 1) * PILE_PITCH;
                s.dynamics[i].pos = gy_v3(
                    x * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05), 0.55 + layer * 1.1,
                    z * PILE_PITCH - half + gy_bench_rng_range(&r, -0.05, 0.05));
                s.dynamics[i].rot =
                    gy_quat_axis_angle(gy_v3(0, 1, 0), gy_bench_rng_range(&r, -0.1, 0.1));
            }
    s.ray_count = rays;
    s.rays = xcalloc((size_t)rays, sizeof *s.rays);
    for (int k = 0; k < rays; k++) {
        double half = 0.5 * PILE_SIDE * PILE_PITCH;
        s.rays[k].origin =
            gy_v3(gy_bench_rng_range(&r, -half, half), 10.0, gy_bench_rng_range(&r, -half, half));
        s.rays[k].translation =
            gy_v3(gy_bench_rng_range(&r, -2, 2), -20.0, gy_bench_rng_range(&r, -2, 2));
    }
    return s;
}

static scene make_statics(int rays)
{
    scene s = {0};
    s.name = "statics";
    s.static_count = TILE_SIDE * TILE_SIDE;
    s.static_size = gy_v3(TILE_SIZE, TILE_HEIGHT, TILE_SIZE);
    s.statics = xcalloc((size_t)s.static_count, sizeof *s.statics);
    double half = 0.5 * (TILE_SIDE - 1) * TILE_PITCH;
    for (int x = 0, i = 0; x < TILE_SIDE; x++)
        for (int z = 0; z < TILE_SIDE; z++, i++) {
            s.statics[i].pos =
                gy_v3(x * TILE_PITCH - half, -0.5 * TILE_HEIGHT, z * TILE_PITCH - half);
            s.statics[i].rot = gy_quat_identity();
        }
    s.dynamic_count = SPHERES;
    s.dynamic_spheres = true;
    s.dynamics = xcalloc((size_t)s.dynamic_count, sizeof *s.dynamics);
    gy_bench_rng r = {777};
    for (int i = 0; i < SPHERES; i++) {
        s.dynamics[i].pos =
            gy_v3(gy_bench_rng_range(&r, -half * 0.8, half * 0.8), gy_bench_rng_range(&r, 0.5, 3.0),
                  gy_bench_rng_range(&r, -half * 0.8, half * 0.8));
        s.dynamics[i].rot = gy_quat_identity();
        s.dynamics[i].vel =
            gy_v3(gy_bench_rng_range(&r, -4, 4), 0.0, gy_bench_rng_range(&r, -4, 4));
    }
    s.ray_count = rays;
    s.rays = xcalloc((size_t)rays, sizeof *s.rays);
    for (int k = 0; k < rays; k++) {
        s.rays[k].origin =
            gy_v3(gy_bench_rng_range(&r, -half, half), 5.0, gy_bench_rng_range(&r, -half, half));
        s.rays[k].translation =
            gy_v3(gy_bench_rng_range(&r, -5, 5), -10.0, gy_bench_rng_range(&r, -5, 5));
    }
    return s;
}

typedef struct result {
    double step_ms;
    double raycast_us;
    double ray_hits;          /* fraction of rays that hit: both sides must agree */
    double raycast_static_us; /* adapter only: the same rays with a statics-only filter */
    double contacts; /* contact points (bare) or touching pairs (adapter) in the last step */
} result;

/* ---- bare ODE -------------------------------------------------------------------------------- */

typedef enum bare_layout { BARE_HASH, BARE_SAP, BARE_QUADTREE } bare_layout;

static const char *const layout_names[] = {"hash", "sap", "quadtree"};

typedef struct bare_world {
    dWorldID world;
    dSpaceID space;        /* everything (hash/SAP), or the dynamic hash space (quadtree) */
    dSpaceID static_space; /* quadtree layout only */
    dJointGroupID contacts;
    dGeomID ray;
    int contact_count;
    /* closest-hit raycast state */
    double best;
} bare_world;

static void bare_near(void *data, dGeomID a, dGeomID b)
{
    bare_world *bw = data;
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    if (ba == NULL && bb == NULL)
        return;
    dContact c[BENCH_MAX_CONTACTS];
    int n = dCollide(a, b, BENCH_MAX_CONTACTS, &c[0].geom, sizeof c[0]);
    for (int i = 0; i < n; i++) {
        c[i].surface.mode = dContactApprox1;
        c[i].surface.mu = BENCH_FRICTION;
        dJointID j = dJointCreateContact(bw->world, bw->contacts, &c[i]);
        dJointAttach(j, ba, bb);
    }
    bw->contact_count += n;
}

static void bare_ray_near(void *data, dGeomID a, dGeomID b)
{
    bare_world *bw = data;
    dGeomID other = a == bw->ray ? b : a;
    dContactGeom cg;
    if (dCollide(bw->ray, other, 1, &cg, sizeof cg) == 1 && cg.depth < bw->best)
        bw->best = cg.depth;
}

static void bare_build(bare_world *bw, const scene *s, bare_layout layout)
{
    memset(bw, 0, sizeof *bw);
    bw->world = dWorldCreate();
    dWorldSetGravity(bw->world, 0, BENCH_GRAVITY, 0);
    dWorldSetQuickStepNumIterations(bw->world, BENCH_ITERATIONS);
    dWorldSetERP(bw->world, BENCH_ERP);
    dWorldSetCFM(bw->world, BENCH_CFM);
    dWorldSetAutoDisableFlag(bw->world, 0);
    bw->contacts = dJointGroupCreate(0);
    if (layout == BARE_SAP)
        bw->space = dSweepAndPruneSpaceCreate(NULL, dSAP_AXES_XZY);
    else
        bw->space = dHashSpaceCreate(NULL);
    dSpaceID statics = bw->space;
    if (layout == BARE_QUADTREE) {
        dVector3 centre = {0, WORLD_EXTENT, 0};
        dVector3 extents = {WORLD_EXTENT, WORLD_EXTENT * (1 << QUADTREE_DEPTH), WORLD_EXTENT};
        bw->static_space = dQuadTreeSpaceCreate(NULL, centre, extents, QUADTREE_DEPTH);
        statics = bw->static_space;
    }
    if (s->ground_plane)
        dCreatePlane(statics, 0, 1, 0, 0);
    for (int i = 0; i < s->static_count; i++) {
        const body_spec *b = &s->statics[i];
        dGeomID g = dCreateBox(NULL, s->static_size.x, s->static_size.y, s->static_size.z);
        dGeomSetPosition(g, b->pos.x, b->pos.y, b->pos.z);
        /* With its AABB known on insertion, a quadtree files the geom in its final block at once
         * (otherwise the first collide moves 10,000 geoms out of the root list one by one). */
        dReal aabb[6];
        dGeomGetAABB(g, aabb);
        dSpaceAdd(statics, g);
    }
    for (int i = 0; i < s->dynamic_count; i++) {
        const body_spec *b = &s->dynamics[i];
        dBodyID body = dBodyCreate(bw->world);
        dMass m;
        dGeomID g;
        if (s->dynamic_spheres) {
            g = dCreateSphere(bw->space, SPHERE_R);
            dMassSetSphere(&m, 1000.0, SPHERE_R);
        } else {
            g = dCreateBox(bw->space, s->dynamic_size.x, s->dynamic_size.y, s->dynamic_size.z);
            dMassSetBox(&m, 1000.0, s->dynamic_size.x, s->dynamic_size.y, s->dynamic_size.z);
        }
        dBodySetMass(body, &m);
        dGeomSetBody(g, body);
        dBodySetPosition(body, b->pos.x, b->pos.y, b->pos.z);
        dQuaternion q = {b->rot.w, b->rot.x, b->rot.y, b->rot.z};
        dBodySetQuaternion(body, q);
        dBodySetLinearVel(body, b->vel.x, b->vel.y, b->vel.z);
        dBodySetLinearDamping(body, 0.05 * BENCH_DT);
        dBodySetAngularDamping(body, 0.05 * BENCH_DT);
    }
    bw->ray = dCreateRay(NULL, 1.0);
    dGeomRaySetClosestHit(bw->ray, 1);
}

static void bare_step(bare_world *bw)
{
    bw->contact_count = 0;
    dSpaceCollide(bw->space, bw, bare_near);
    if (bw->static_space != NULL)
        dSpaceCollide2((dGeomID)bw->space, (dGeomID)bw->static_space, bw, bare_near);
    dWorldQuickStep(bw->world, BENCH_DT);
    dJointGroupEmpty(bw->contacts);
}

static bool bare_raycast(bare_world *bw, const ray_spec *r)
{
    double len = gy_v3_len(r->translation);
    gy_vec3 d = gy_v3_scale(r->translation, 1.0 / len);
    dGeomRaySet(bw->ray, r->origin.x, r->origin.y, r->origin.z, d.x, d.y, d.z);
    dGeomRaySetLength(bw->ray, len);
    bw->best = INFINITY;
    if (bw->static_space != NULL)
        dSpaceCollide2(bw->ray, (dGeomID)bw->static_space, bw, bare_ray_near);
    dSpaceCollide2(bw->ray, (dGeomID)bw->space, bw, bare_ray_near);
    return bw->best < INFINITY;
}

static void bare_destroy(bare_world *bw)
{
    dGeomDestroy(bw->ray);
    dJointGroupDestroy(bw->contacts);
    dSpaceSetCleanup(bw->space, 1);
    dSpaceDestroy(bw->space);
    if (bw->static_space != NULL) {
        dSpaceSetCleanup(bw->static_space, 1);
        dSpaceDestroy(bw->static_space);
    }
    dWorldDestroy(bw->world);
}

static result run_bare(const scene *s, bare_layout layout, const bench_config *cfg)
{
    /* The adapter's unbind_thread may have released this thread's ODE data; take it again. */
    dAllocateODEDataForThread(dAllocateMaskAll);
    bare_world bw;
    bare_build(&bw, s, layout);
    for (int i = 0; i < cfg->warmup_steps; i++)
        bare_step(&bw);
    result res = {0};
    double *samples = xcalloc((size_t)(cfg->steps + s->ray_count / RAY_BATCH), sizeof *samples);
    for (int i = 0; i < cfg->steps; i++) {
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        bare_step(&bw);
        samples[i] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e3;
    }
    res.step_ms = median(samples, cfg->steps);
    res.contacts = bw.contact_count;
    int hits = 0, batches = s->ray_count / RAY_BATCH;
    for (int b = 0; b < batches; b++) {
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        for (int k = b * RAY_BATCH; k < (b + 1) * RAY_BATCH; k++)
            hits += bare_raycast(&bw, &s->rays[k]);
        samples[b] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e6 / RAY_BATCH;
    }
    res.raycast_us = median(samples, batches);
    res.ray_hits = (double)hits / s->ray_count;
    free(samples);
    bare_destroy(&bw);
    return res;
}

/* ---- through the adapter --------------------------------------------------------------------- */

static void check(gy_result r, const char *what)
{
    if (r != GY_OK) {
        fprintf(stderr, "gyre-bench-middleware: %s failed: %s\n", what, gy_result_name(r));
        exit(1);
    }
}

static result run_adapter(const gy_backend *be, const scene *s, const bench_config *cfg)
{
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.gravity = gy_v3(0, BENCH_GRAVITY, 0);
    wd.solver_iterations = BENCH_ITERATIONS;
    wd.world_half_extent = WORLD_EXTENT;
    gy_backend_world *w;
    check(be->world_create(&wd, &w), "world_create");
    check(be->bind_thread(w), "bind_thread");

    gy_body_def bd = gy_default_body_def();
    gy_collider_def cd = gy_default_collider_def();
    cd.material.friction = BENCH_FRICTION;
    gy_body_id id;
    if (s->ground_plane) {
        bd.type = GY_MOTION_STATIC;
        cd.shape.type = GY_SHAPE_PLANE;
        cd.shape.normal = gy_v3(0, 1, 0);
        cd.shape.offset = 0.0;
        check(be->body_create(w, &bd, &cd, 1, &id, NULL), "ground");
    }
    cd.shape = (gy_shape){0};
    cd.shape.type = GY_SHAPE_BOX;
    cd.shape.box_size = s->static_size;
    for (int i = 0; i < s->static_count; i++) {
        bd = gy_default_body_def();
        bd.type = GY_MOTION_STATIC;
        bd.pose.position = s->statics[i].pos;
        bd.pose.rotation = s->statics[i].rot;
        check(be->body_create(w, &bd, &cd, 1, &id, NULL), "static body");
    }
    cd.shape = (gy_shape){0};
    if (s->dynamic_spheres) {
        cd.shape.type = GY_SHAPE_SPHERE;
        cd.shape.radius = SPHERE_R;
    } else {
        cd.shape.type = GY_SHAPE_BOX;
        cd.shape.box_size = s->dynamic_size;
    }
    for (int i = 0; i < s->dynamic_count; i++) {
        bd = gy_default_body_def();
        bd.type = GY_MOTION_DYNAMIC;
        bd.allow_sleeping = false;
        bd.pose.position = s->dynamics[i].pos;
        bd.pose.rotation = s->dynamics[i].rot;
        bd.linear_velocity = s->dynamics[i].vel;
        check(be->body_create(w, &bd, &cd, 1, &id, NULL), "dynamic body");
    }

    for (int i = 0; i < cfg->warmup_steps; i++)
        check(be->step(w, BENCH_DT), "step");
    result res = {0};
    double *samples = xcalloc((size_t)(cfg->steps + s->ray_count / RAY_BATCH), sizeof *samples);
    for (int i = 0; i < cfg->steps; i++) {
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        check(be->step(w, BENCH_DT), "step");
        samples[i] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e3;
    }
    res.step_ms = median(samples, cfg->steps);
    gy_backend_counters counters;
    be->get_counters(w, &counters);
    res.contacts = counters.contact_pairs;
    if (counters.awake_bodies != (uint32_t)s->dynamic_count)
        fprintf(stderr, "note: %s: %u of %d dynamic bodies awake\n", s->name, counters.awake_bodies,
                s->dynamic_count);

    gy_query_filter f = gy_default_query_filter();
    gy_hit hit;
    uint32_t n;
    int hits = 0, batches = s->ray_count / RAY_BATCH;
    for (int pass = 0; pass < 2; pass++) {
        /* Pass 1, statics only: the static grid without ODE's scan of the dynamic space. */
        if (pass == 1)
            f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC);
        for (int b = 0; b < batches; b++) {
            double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
            for (int k = b * RAY_BATCH; k < (b + 1) * RAY_BATCH; k++) {
                check(be->raycast(w, s->rays[k].origin, s->rays[k].translation, &f,
                                  GY_COLLECT_CLOSEST, &hit, 1, &n),
                      "raycast");
                hits += pass == 0 && n > 0;
            }
            samples[b] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e6 / RAY_BATCH;
        }
        if (pass == 0)
            res.raycast_us = median(samples, batches);
        else
            res.raycast_static_us = median(samples, batches);
    }
    res.ray_hits = (double)hits / s->ray_count;
    free(samples);

    be->unbind_thread(w);
    be->world_destroy(w);
    return res;
}

/* ---- streaming statics through the adapter -------------------------------------------------- */

/* Cells of static geometry are loaded and unloaded around a focus that runs along X over a ring
 * of cells, as a streaming level would: STREAM_WINDOW_X × STREAM_CELLS_Z cells resident, each
 * holding STREAM_PER_CELL boxes (about 10,000 statics), one cell swapped (the oldest released,
 * the next created) STREAM_CELLS_PER_S times per simulated second. Spheres roll over the whole
 * ring on a ground plane, so some of them are always among the cells being swapped. */
#define STREAM_CELL         16.0
#define STREAM_CELLS_Z      8
#define STREAM_WINDOW_X     8   /* resident columns */
#define STREAM_RING_X       16  /* columns before the focus wraps */
#define STREAM_PER_CELL     156 /* 8 × 8 × 156 = 9,984 resident */
#define STREAM_CELLS_PER_S  64.0
#define STREAM_SPHERES      500
#define STREAM_EXTENT       512.0
#define STREAM_SETTLE_STEPS 120 /* 2 s: the spheres, dropped from up to 4 m, have landed */

typedef struct stream_result {
    int resident;              /* statics resident while streaming */
    double create_us;          /* body_create of one static while streaming */
    double release_us;         /* body_release of one static while streaming */
    double step_quiet_ms;      /* median step, nothing loaded or unloaded */
    double step_churn_ms;      /* median step while cells stream (step only) */
    double frame_churn_ms;     /* median step plus that step's creates and releases */
    int bulk;                  /* statics in the bulk test */
    double bulk_create_us;     /* per static, creating `bulk` of them one by one */
    double bulk_first_step_ms; /* the first step after the bulk create */
    double bulk_release_us;    /* per static, releasing them oldest first */
} stream_result;

typedef struct stream_cell {
    gy_body_id *bodies; /* STREAM_PER_CELL */
    int64_t index;      /* sequence number of the cell in the ring walk, -1 when empty */
} stream_cell;

/* Creates cell `k` of the walk (column k / STREAM_CELLS_Z modulo the ring, row k % CELLS_Z); the
 * same k modulo the ring always yields the same boxes. Returns seconds spent in body_create. */
static double stream_load(const gy_backend *be, gy_backend_world *w, stream_cell *cell, int64_t k)
{
    int64_t ring_cells = (int64_t)STREAM_RING_X * STREAM_CELLS_Z;
    int64_t slot = k % ring_cells;
    double x0 = (double)(slot / STREAM_CELLS_Z) * STREAM_CELL - 0.5 * STREAM_RING_X * STREAM_CELL;
    double z0 = (double)(slot % STREAM_CELLS_Z) * STREAM_CELL - 0.5 * STREAM_CELLS_Z * STREAM_CELL;
    gy_bench_rng r = {(uint64_t)slot * 2654435761u + 99u};
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    gy_collider_def cd = gy_default_collider_def();
    cd.material.friction = BENCH_FRICTION;
    cd.shape.type = GY_SHAPE_BOX;
    double spent = 0.0;
    for (int i = 0; i < STREAM_PER_CELL; i++) {
        cd.shape.box_size =
            gy_v3(gy_bench_rng_range(&r, 0.5, 2.0), gy_bench_rng_range(&r, 0.3, 1.5),
                  gy_bench_rng_range(&r, 0.5, 2.0));
        bd.pose.position =
            gy_v3(x0 + gy_bench_rng_range(&r, 0.0, STREAM_CELL), 0.5 * cd.shape.box_size.y,
                  z0 + gy_bench_rng_range(&r, 0.0, STREAM_CELL));
        bd.pose.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), gy_bench_rng_range(&r, 0.0, 3.14159));
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        check(be->body_create(w, &bd, &cd, 1, &cell->bodies[i], NULL), "streamed static");
        spent += (1e-9 * (double)gy_bench_thread_cpu_ns()) - t0;
    }
    cell->index = k;
    return spent;
}

/* Releases a cell's statics in creation order; returns seconds spent in body_release. */
static double stream_unload(const gy_backend *be, gy_backend_world *w, stream_cell *cell)
{
    double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
    for (int i = 0; i < STREAM_PER_CELL; i++)
        check(be->body_release(w, cell->bodies[i]), "release streamed static");
    cell->index = -1;
    return (1e-9 * (double)gy_bench_thread_cpu_ns()) - t0;
}

static gy_backend_world *stream_world(const gy_backend *be)
{
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.gravity = gy_v3(0, BENCH_GRAVITY, 0);
    wd.solver_iterations = BENCH_ITERATIONS;
    wd.world_half_extent = STREAM_EXTENT;
    gy_backend_world *w;
    check(be->world_create(&wd, &w), "world_create");
    check(be->bind_thread(w), "bind_thread");
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    gy_collider_def cd = gy_default_collider_def();
    cd.material.friction = BENCH_FRICTION;
    cd.shape.type = GY_SHAPE_PLANE;
    cd.shape.normal = gy_v3(0, 1, 0);
    gy_body_id id;
    check(be->body_create(w, &bd, &cd, 1, &id, NULL), "ground");
    return w;
}

static void stream_spheres(const gy_backend *be, gy_backend_world *w, int count, double half_x,
                           double half_z)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_DYNAMIC;
    bd.allow_sleeping = false; /* the same work in every step, churn or not */
    gy_collider_def cd = gy_default_collider_def();
    cd.material.friction = BENCH_FRICTION;
    cd.shape.type = GY_SHAPE_SPHERE;
    cd.shape.radius = SPHERE_R;
    gy_bench_rng r = {4242};
    gy_body_id id;
    for (int i = 0; i < count; i++) {
        bd.pose.position =
            gy_v3(gy_bench_rng_range(&r, -half_x, half_x), gy_bench_rng_range(&r, 2.0, 4.0),
                  gy_bench_rng_range(&r, -half_z, half_z));
        bd.linear_velocity =
            gy_v3(gy_bench_rng_range(&r, -4, 4), 0.0, gy_bench_rng_range(&r, -4, 4));
        check(be->body_create(w, &bd, &cd, 1, &id, NULL), "sphere");
    }
}

/* Creates `n` statics one by one on a square lattice, steps once, releases them oldest first. */
static void stream_bulk(const gy_backend *be, int n, stream_result *res)
{
    gy_backend_world *w = stream_world(be);
    stream_spheres(be, w, 100, 0.4 * STREAM_EXTENT, 0.4 * STREAM_EXTENT);
    gy_body_id *ids = xcalloc((size_t)n, sizeof *ids);
    int side = (int)ceil(sqrt((double)n));
    double pitch = 1.6 * STREAM_EXTENT / side;
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_BOX;
    cd.shape.box_size = gy_v3(0.5 * pitch, 0.5, 0.5 * pitch);
    double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
    for (int i = 0; i < n; i++) {
        bd.pose.position = gy_v3((i % side) * pitch - 0.8 * STREAM_EXTENT, 0.25,
                                 (i / side) * pitch - 0.8 * STREAM_EXTENT);
        check(be->body_create(w, &bd, &cd, 1, &ids[i], NULL), "bulk static");
    }
    res->bulk_create_us = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e6 / n;
    t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
    check(be->step(w, BENCH_DT), "step");
    res->bulk_first_step_ms = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e3;
    t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
    for (int i = 0; i < n; i++)
        check(be->body_release(w, ids[i]), "bulk release");
    res->bulk_release_us = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e6 / n;
    res->bulk = n;
    free(ids);
    be->unbind_thread(w);
    be->world_destroy(w);
}

static stream_result run_streaming(const gy_backend *be, const bench_config *cfg, int bulk)
{
    stream_result res = {0};
    gy_backend_world *w = stream_world(be);
    stream_spheres(be, w, STREAM_SPHERES, 0.5 * STREAM_RING_X * STREAM_CELL - 1.0,
                   0.5 * STREAM_CELLS_Z * STREAM_CELL - 1.0);
    enum { RESIDENT_CELLS = STREAM_WINDOW_X * STREAM_CELLS_Z };
    stream_cell cells[RESIDENT_CELLS];
    gy_body_id *storage = xcalloc((size_t)RESIDENT_CELLS * STREAM_PER_CELL, sizeof *storage);
    for (int c = 0; c < RESIDENT_CELLS; c++) {
        cells[c].bodies = storage + (size_t)c * STREAM_PER_CELL;
        stream_load(be, w, &cells[c], c);
    }
    res.resident = RESIDENT_CELLS * STREAM_PER_CELL;
    int64_t next = RESIDENT_CELLS; /* the next cell of the walk; its slot is next % RESIDENT */

    for (int i = 0; i < STREAM_SETTLE_STEPS; i++)
        check(be->step(w, BENCH_DT), "step");
    double *quiet = xcalloc((size_t)cfg->steps, sizeof *quiet);
    double *churn = xcalloc((size_t)cfg->steps, sizeof *churn);
    double *frame = xcalloc((size_t)cfg->steps, sizeof *frame);
    for (int i = 0; i < cfg->steps; i++) {
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        check(be->step(w, BENCH_DT), "step");
        quiet[i] = ((1e-9 * (double)gy_bench_thread_cpu_ns()) - t0) * 1e3;
    }
    double due = 0.0, create_s = 0.0, release_s = 0.0;
    int64_t swapped = 0;
    for (int i = 0; i < cfg->warmup_steps + cfg->steps; i++) {
        double io = 0.0;
        for (due += STREAM_CELLS_PER_S * BENCH_DT; due >= 1.0; due -= 1.0) {
            stream_cell *cell = &cells[next % RESIDENT_CELLS];
            double rel = stream_unload(be, w, cell);
            double cre = stream_load(be, w, cell, next);
            next++;
            io += rel + cre;
            if (i >= cfg->warmup_steps) {
                release_s += rel;
                create_s += cre;
                swapped++;
            }
        }
        double t0 = (1e-9 * (double)gy_bench_thread_cpu_ns());
        check(be->step(w, BENCH_DT), "step");
        double step_s = (1e-9 * (double)gy_bench_thread_cpu_ns()) - t0;
        if (i >= cfg->warmup_steps) {
            int k = i - cfg->warmup_steps;
            churn[k] = step_s * 1e3;
            frame[k] = (step_s + io) * 1e3;
        }
    }
    res.step_quiet_ms = median(quiet, cfg->steps);
    res.step_churn_ms = median(churn, cfg->steps);
    res.frame_churn_ms = median(frame, cfg->steps);
    res.create_us = swapped > 0 ? create_s * 1e6 / ((double)swapped * STREAM_PER_CELL) : 0.0;
    res.release_us = swapped > 0 ? release_s * 1e6 / ((double)swapped * STREAM_PER_CELL) : 0.0;
    free(quiet);
    free(churn);
    free(frame);
    free(storage);
    be->unbind_thread(w);
    be->world_destroy(w);

    stream_bulk(be, bulk, &res);
    return res;
}

/* ---- report ---------------------------------------------------------------------------------- */

static void print_row(const char *scene_name, const char *who, const result *r, const result *base)
{
    printf("%-8s %-18s %9.3f %11.2f %9.3f", scene_name, who, r->step_ms, r->raycast_us,
           r->ray_hits);
    if (base != NULL)
        printf("   step x%.2f  ray x%.2f", r->step_ms / base->step_ms,
               r->raycast_us / base->raycast_us);
    printf("\n");
}

static cJSON *json_pair(cJSON *parent, const char *name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(parent, name, o);
    return o;
}

static void usage(void)
{
    fprintf(stderr, "usage: gyre-bench-middleware [--json FILE] [--quick] [--streaming]\n");
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    bool quick = false, streaming_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--streaming") == 0) {
            streaming_only = true;
        } else {
            usage();
            return 2;
        }
    }
    bench_config cfg = quick ? (bench_config){10, 30, 2000} : (bench_config){60, 300, 20000};

    const gy_backend *be = gy_backend_find("ode");
    if (be == NULL) {
        fprintf(stderr, "gyre-bench-middleware: no \"ode\" adapter compiled in\n");
        return 1;
    }
    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);

    const int scene_count = streaming_only ? 0 : 2;
    scene scenes[2] = {{0}, {0}};
    result bare[2][3], adapter[2];
    if (scene_count > 0) {
        scenes[0] = make_pile(cfg.rays);
        scenes[1] = make_statics(cfg.rays);
    }

    printf("gyre-bench-middleware (%s): dt 1/60 s, %d solver iterations, <= %d contacts/pair\n",
           quick ? "quick" : "full", BENCH_ITERATIONS, BENCH_MAX_CONTACTS);
    printf("%d warm-up steps, %d timed steps, %d closest-hit raycasts per configuration\n",
           cfg.warmup_steps, cfg.steps, cfg.rays);
    if (scene_count > 0)
        printf("\n%-8s %-18s %9s %11s %9s\n", "scene", "configuration", "ms/step", "us/raycast",
               "ray hits");
    for (int sc = 0; sc < scene_count; sc++) {
        for (int l = 0; l < 3; l++) {
            char label[32];
            snprintf(label, sizeof label, "bare ODE %s", layout_names[l]);
            bare[sc][l] = run_bare(&scenes[sc], (bare_layout)l, &cfg);
            print_row(scenes[sc].name, label, &bare[sc][l], NULL);
        }
        adapter[sc] = run_adapter(be, &scenes[sc], &cfg);
        print_row(scenes[sc].name, "adapter", &adapter[sc], &bare[sc][BARE_QUADTREE]);
        printf("%-8s %-18s %9s %11.2f\n", scenes[sc].name, "adapter, statics", "",
               adapter[sc].raycast_static_us);
    }
    if (scene_count > 0)
        printf("\nratios: adapter / bare ODE with statics in their own quadtree space (moving "
               "bodies in\na hash space). \"adapter, statics\": the same rays with a statics-only "
               "filter.\n");

    stream_result st = run_streaming(be, &cfg, quick ? 20000 : 100000);
    printf("\nstreaming (adapter): %d statics resident in %d cells of %d, %.0f cells/s swapped, "
           "%d spheres\n",
           st.resident, STREAM_WINDOW_X * STREAM_CELLS_Z, STREAM_PER_CELL, STREAM_CELLS_PER_S,
           STREAM_SPHERES);
    printf("  body_create (static)   %8.2f us\n", st.create_us);
    printf("  body_release (static)  %8.2f us\n", st.release_us);
    printf("  step, no churn         %8.3f ms\n", st.step_quiet_ms);
    printf("  step, churn            %8.3f ms\n", st.step_churn_ms);
    printf("  step + creates/releases%8.3f ms\n", st.frame_churn_ms);
    printf("bulk: %d statics created one by one, one step, released oldest first\n", st.bulk);
    printf("  body_create (static)   %8.2f us\n", st.bulk_create_us);
    printf("  first step             %8.3f ms\n", st.bulk_first_step_ms);
    printf("  body_release (static)  %8.2f us\n", st.bulk_release_us);

    if (json_path != NULL) {
        cJSON *root = cJSON_CreateObject();
        cJSON *ode = json_pair(json_pair(root, "middleware"), "ode");
        for (int sc = 0; sc < scene_count; sc++) {
            cJSON *o = json_pair(ode, scenes[sc].name);
            cJSON *step = json_pair(o, "step_ms");
            cJSON *ray = json_pair(o, "raycast_us");
            for (int l = 0; l < 3; l++) {
                char key[32];
                snprintf(key, sizeof key, "bare_%s", layout_names[l]);
                cJSON_AddNumberToObject(step, key, bare[sc][l].step_ms);
                cJSON_AddNumberToObject(ray, key, bare[sc][l].raycast_us);
            }
            const result *base = &bare[sc][BARE_QUADTREE];
            cJSON_AddNumberToObject(step, "adapter", adapter[sc].step_ms);
            cJSON_AddNumberToObject(step, "ratio", adapter[sc].step_ms / base->step_ms);
            cJSON_AddNumberToObject(ray, "adapter", adapter[sc].raycast_us);
            cJSON_AddNumberToObject(ray, "ratio", adapter[sc].raycast_us / base->raycast_us);
            cJSON_AddNumberToObject(ray, "adapter_statics_only", adapter[sc].raycast_static_us);
        }
        cJSON *so = json_pair(ode, "streaming");
        cJSON_AddNumberToObject(so, "resident", st.resident);
        cJSON_AddNumberToObject(so, "cells_per_s", STREAM_CELLS_PER_S);
        cJSON_AddNumberToObject(so, "create_us", st.create_us);
        cJSON_AddNumberToObject(so, "release_us", st.release_us);
        cJSON_AddNumberToObject(so, "step_quiet_ms", st.step_quiet_ms);
        cJSON_AddNumberToObject(so, "step_churn_ms", st.step_churn_ms);
        cJSON_AddNumberToObject(so, "frame_churn_ms", st.frame_churn_ms);
        cJSON *bo = json_pair(ode, "bulk_statics");
        cJSON_AddNumberToObject(bo, "count", st.bulk);
        cJSON_AddNumberToObject(bo, "create_us", st.bulk_create_us);
        cJSON_AddNumberToObject(bo, "first_step_ms", st.bulk_first_step_ms);
        cJSON_AddNumberToObject(bo, "release_us", st.bulk_release_us);
        char *text = cJSON_Print(root);
        FILE *fp = fopen(json_path, "w");
        if (text == NULL || fp == NULL || fputs(text, fp) < 0 || fputc('\n', fp) == EOF) {
            fprintf(stderr, "gyre-bench-middleware: cannot write %s\n", json_path);
            if (fp != NULL)
                fclose(fp);
            cJSON_free(text);
            cJSON_Delete(root);
            return 1;
        }
        fclose(fp);
        cJSON_free(text);
        cJSON_Delete(root);
    }

    scene_free(&scenes[0]);
    scene_free(&scenes[1]);
    dCloseODE();
    return 0;
}
