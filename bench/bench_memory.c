/* gyre-bench section "memory": live heap bytes per body at steady state, split by layer.
 *
 * Every number is a difference of the process's live heap (glibc mallinfo2: in-use chunks plus
 * mmapped blocks), so it counts what Gyre allocates through its allocator and what the vendor
 * libraries allocate with malloc or new alike. For each adapter and each kind of body (static
 * boxes, dynamic spheres) four builds of the same N bodies are measured one after the other:
 *
 *   total    — a World in lockstep with N entities with a body, stepped STEADY_TICKS ticks: every
 *              body exists in the adapter and the query snapshot holds it, and the snapshot has
 *              returned what it keeps only while statics change (after 64 quiet publishes);
 *   world    — the same World with the physics thread never started (start_stopped): what the
 *              World keeps per entity (records, components, tables);
 *   adapter  — the adapter alone through the contract (gy_backend) with the same bodies;
 *   snapshot — a query snapshot alone holding the same shapes, published STEADY_TICKS times (the
 *              writer and all three buffers; statics are shared by them, movers are not);
 *   physics  — total − world − adapter − snapshot: the subsystem's own tables, mirrors and
 *              queues (the residue, so it also carries what the layers share).
 *
 * Keys: memory.<adapter>.<static|dynamic>.<layer>_bytes, per body. */
#include "bench.h"
#include "bench_common.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/gyre.h"
#include "query_snapshot.h"

#define PITCH 2.0
/* Publishes before measuring: past the snapshot's 64 publishes of keeping spares for statics
 * that may change again, so what is measured is what a level that stopped changing holds. */
#define STEADY_TICKS 70

typedef struct layers {
    double total, world, adapter, snapshot;
} layers;

static double heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)mi.uordblks + (double)mi.hblkhd;
}

static gy_vec3 lattice(uint32_t i, uint32_t side, bool dynamic)
{
    return gy_v3((double)(i % side) * PITCH, dynamic ? 100.0 : 0.0, (double)(i / side) * PITCH);
}

static gy_shape body_shape(bool dynamic)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    if (dynamic) {
        s.type = GY_SHAPE_SPHERE;
        s.radius = 0.5;
    } else {
        s.type = GY_SHAPE_BOX;
        s.box_size = gy_v3(1, 1, 1);
    }
    return s;
}

/* A World with n bodies; stepped until the adapter and the snapshot hold them unless `stopped`.
 * Returns the heap growth per body, or a negative number when the World could not be built. */
static double measure_world(const char *backend, uint32_t n, bool dynamic, bool stopped)
{
    gy_world_def c = gy_default_world_def();
    c.physics.backend = backend;
    c.physics.lockstep = true;
    c.start_stopped = stopped;
    /* The first step creates every body at once; on a loaded machine that can take longer than
     * the default 10 s, and this section measures bytes, not time. */
    c.step_timeout_ns = 120ull * 1000000000ull;
    gy_entity *ents = malloc(n * sizeof *ents);
    if (ents == NULL)
        return -1;
    double before = heap_bytes();
    gy_world *w = NULL;
    gy_result r = gy_world_create(&c, &w);
    double created = heap_bytes();
    gy_scene_collider col;
    memset(&col, 0, sizeof col);
    col.def = gy_default_collider_def();
    col.def.shape = body_shape(dynamic);
    gy_physics_component_def d =
        gy_default_physics_component_def_for(dynamic ? GY_BODY_DYNAMIC : GY_BODY_STATIC, &col);
    d.body.allow_sleeping = !dynamic ? d.body.allow_sleeping : false;
    uint32_t side = 1;
    while (side * side < n)
        side++;
    for (uint32_t i = 0; i < n && r == GY_OK; i++) {
        gy_entity_def ed = gy_default_entity_def();
        ed.position = lattice(i, side, dynamic);
        r = gy_entity_create(w, &ed, &ents[i]);
        if (r == GY_OK)
            r = gy_body_add(w, ents[i], &d);
    }
    for (int t = 0; t < STEADY_TICKS && r == GY_OK && !stopped; t++)
        r = gy_world_tick(w, 1.0 / 60.0);
    double after = heap_bytes();
    if (w != NULL)
        gy_world_destroy(w, NULL);
    free(ents);
    (void)before;
    if (r != GY_OK) {
        fprintf(stderr, "gyre-bench memory: %s World: %s\n", backend, gy_result_name(r));
        return -1;
    }
    return (after - created) / (double)n;
}

static double measure_adapter(const gy_backend *be, uint32_t n, bool dynamic)
{
    gy_backend_world_def wd = gy_default_backend_world_def();
    gy_backend_world *w = NULL;
    if (be->world_create(&wd, &w) != GY_OK || be->bind_thread(w) != GY_OK)
        return -1;
    double before = heap_bytes();
    uint32_t side = 1;
    while (side * side < n)
        side++;
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        gy_body_def bd = gy_default_body_def();
        bd.type = dynamic ? GY_MOTION_DYNAMIC : GY_MOTION_STATIC;
        bd.pose.position = lattice(i, side, dynamic);
        bd.allow_sleeping = !dynamic;
        gy_collider_def cd = gy_default_collider_def();
        cd.shape = body_shape(dynamic);
        gy_body_id id;
        ok = be->body_create(w, &bd, &cd, 1, &id, NULL) == GY_OK;
    }
    ok = ok && be->step(w, 1.0 / 60.0) == GY_OK; /* pairs, islands, contact caches */
    double after = heap_bytes();
    be->world_destroy(w);
    return ok ? (after - before) / (double)n : -1;
}

static double measure_snapshot(uint32_t n, bool dynamic)
{
    gy_query_snapshot_def def = {0};
    gy_query_snapshot *qs = NULL;
    double before = heap_bytes();
    if (gy_query_snapshot_create(&def, &qs) != GY_OK)
        return -1;
    uint32_t side = 1;
    while (side * side < n)
        side++;
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        gy_snapshot_entry e = gy_default_snapshot_entry();
        e.shape = body_shape(dynamic);
        e.pose = gy_pose_identity();
        e.pose.position = lattice(i, side, dynamic);
        e.motion = dynamic ? GY_MOTION_DYNAMIC : GY_MOTION_STATIC;
        e.body.generation = i + 1;
        e.body.index = i;
        ok = gy_query_snapshot_set(qs, i, &e) == GY_OK;
    }
    for (uint64_t tick = 1; tick <= STEADY_TICKS && ok; tick++) {
        ok = gy_query_snapshot_publish(qs, tick) == GY_OK;
        (void)gy_query_snapshot_acquire(qs); /* the reader moves on, so each buffer is written */
    }
    double after = heap_bytes();
    gy_query_snapshot_destroy(qs);
    return ok ? (after - before) / (double)n : -1;
}

int gy_bench_section_memory(gy_bench *b)
{
    const uint32_t n = gy_bench_quick(b) ? 5000u : 50000u;
    gy_bench_note(b,
                  "%u bodies per build; heap growth per body (mallinfo2), vendor allocations "
                  "included",
                  n);
    for (uint32_t a = 0; a < gy_backend_count(); a++) {
        const gy_backend *be = gy_backend_at(a);
        for (int dyn = 0; dyn < 2; dyn++) {
            const char *kind = dyn ? "dynamic" : "static";
            layers l = {measure_world(be->name, n, dyn, false),
                        measure_world(be->name, n, dyn, true), measure_adapter(be, n, dyn),
                        measure_snapshot(n, dyn)};
            if (l.total < 0 || l.world < 0 || l.adapter < 0 || l.snapshot < 0)
                return 1;
            char key[96], what[96];
            const struct {
                const char *name;
                double v;
            } rows[] = {{"total", l.total},
                        {"world", l.world},
                        {"physics", l.total - l.world - l.adapter - l.snapshot},
                        {"snapshot", l.snapshot},
                        {"adapter", l.adapter}};
            for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                snprintf(key, sizeof key, "memory.%s.%s.%s_bytes", be->name, kind, rows[i].name);
                snprintf(what, sizeof what, "%s, %s body: %s layer", be->name, kind, rows[i].name);
                gy_bench_report(b, key, rows[i].v, "B", what);
            }
        }
    }
    return 0;
}
