/* Scene descriptions made into World entities: creation in dependency order, shared geometry,
 * rollback on failure, and the additive (barrier) and replace (stop/start) loads. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "gyre/scene_instance.h"
#include "world_internal.h"

#define DEFAULT_BARRIER_TIMEOUT_NS 5000000000ull

/* One gy_geometry per distinct OBJ data block: the loader shares arrays between colliders that
 * name the same file, so pointer identity finds them. */
typedef struct shared_geometry {
    gy_shape_type type;
    const gy_vec3 *vertices;
    const uint32_t *indices;
    gy_geometry geometry;
} shared_geometry;

typedef struct build {
    gy_world *world;
    const gy_scene *scene;
    const gy_allocator *alloc;
    gy_vec3 offset;
    gy_scene_instance *inst;
    bool *created;
    uint32_t *chain; /* scratch: an entity's uncreated ancestors */
    shared_geometry *geos;
    uint32_t geo_count, geo_capacity;
    gy_scene_collider *cols;
    uint32_t col_capacity;
    int32_t failed_entity;
} build;

gy_result gy_scene_get_world_def(const gy_scene *scene, const char *backend_override,
                                 gy_world_def *config)
{
    if (scene == NULL || config == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_physics_def *p = &config->physics;
    if (backend_override != NULL)
        p->backend = backend_override;
    else
        p->backend = scene->world.backend != NULL ? scene->world.backend : "ode";
    p->world.gravity = scene->world.gravity;
    p->world.substeps = scene->world.substeps;
    p->world.solver_iterations = scene->world.solver_iterations;
    p->step_hz = (uint32_t)lround(scene->world.step_hz);
    p->geometry_budget = scene->world.geometry_budget;
    config->kill_plane = scene->world.has_kill_y;
    config->kill_y = scene->world.has_kill_y ? scene->world.kill_y : 0.0;
    return GY_OK;
}

static void *alloc_array(const gy_allocator *a, uint32_t count, size_t elem)
{
    return count == 0 ? NULL : gy_alloc_zeroed(a, (size_t)count * elem);
}

static void free_array(const gy_allocator *a, void *p, uint32_t count, size_t elem)
{
    if (p != NULL)
        gy_free(a, p, (size_t)count * elem);
}

static void streams_forget(gy_world *w, const gy_scene_instance *inst);

void gy_scene_instance_free(gy_scene_instance *inst)
{
    if (inst == NULL)
        return;
    if (inst->world_ != NULL)
        streams_forget(inst->world_, inst); /* its deferred load or unload is cancelled */
    const gy_allocator *a = inst->allocator_;
    free_array(a, inst->entities, inst->entity_count, sizeof *inst->entities);
    free_array(a, inst->joints, inst->joint_count, sizeof *inst->joints);
    gy_free(a, inst, sizeof *inst);
}

static gy_result new_instance(const gy_allocator *a, const gy_scene *scene, gy_vec3 offset,
                              gy_scene_instance **out)
{
    gy_scene_instance *inst = gy_alloc_zeroed(a, sizeof *inst);
    if (inst == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    inst->allocator_ = a;
    inst->failed_entity = -1;
    inst->scene = scene;
    inst->offset = offset;
    inst->entity_count = scene->entity_count;
    inst->joint_count = scene->joint_count;
    inst->entities = alloc_array(a, scene->entity_count, sizeof *inst->entities);
    inst->joints = alloc_array(a, scene->joint_count, sizeof *inst->joints);
    if ((scene->entity_count && inst->entities == NULL) ||
        (scene->joint_count && inst->joints == NULL)) {
        gy_scene_instance_free(inst);
        return GY_ERR_OUT_OF_MEMORY;
    }
    *out = inst;
    return GY_OK;
}

/* ---- entities -------------------------------------------------------------------------------- */

static gy_result create_one(build *b, uint32_t i)
{
    const gy_scene_entity *se = &b->scene->entities[i];
    gy_entity_def d = gy_default_entity_def();
    d.name = se->name;
    d.active = se->active;
    d.position = se->position;
    d.rotation = se->rotation;
    d.scale = se->scale;
    if (se->parent >= 0)
        d.parent = b->inst->entities[se->parent];
    else
        d.position = gy_v3_add(d.position, b->offset);
    gy_result r = gy_entity_create(b->world, &d, &b->inst->entities[i]);
    if (r != GY_OK) {
        b->failed_entity = (int32_t)i;
        return r;
    }
    b->created[i] = true;
    return GY_OK;
}

/* Parents may come after their children in the file: each entity's uncreated ancestors are
 * created first, top down (the loader rejected cycles). */
static gy_result create_entities(build *b)
{
    const gy_scene *s = b->scene;
    for (uint32_t i = 0; i < s->entity_count; i++) {
        uint32_t n = 0;
        for (int32_t e = (int32_t)i; e >= 0 && !b->created[e]; e = s->entities[e].parent)
            b->chain[n++] = (uint32_t)e;
        while (n > 0) {
            gy_result r = create_one(b, b->chain[--n]);
            if (r != GY_OK)
                return r;
        }
    }
    return GY_OK;
}

/* ---- bodies ---------------------------------------------------------------------------------- */

static gy_result shared_geometry_for(build *b, const gy_scene_collider *sc, gy_geometry *out)
{
    for (uint32_t i = 0; i < b->geo_count; i++) {
        const shared_geometry *g = &b->geos[i];
        if (g->type == sc->def.shape.type && g->vertices == sc->vertices &&
            g->indices == sc->indices) {
            *out = g->geometry;
            return GY_OK;
        }
    }
    gy_result r = gy_array_reserve(b->alloc, (void **)&b->geos, &b->geo_capacity, b->geo_count + 1u,
                                   sizeof *b->geos);
    if (r != GY_OK)
        return r;
    gy_geometry g;
    if (sc->def.shape.type == GY_SHAPE_MESH) {
        gy_mesh_def md = {sc->vertices, sc->vertex_count, sc->indices, sc->index_count};
        r = gy_geometry_create_mesh(b->world, &md, &g);
    } else {
        gy_hull_def hd = {sc->vertices, sc->vertex_count};
        r = gy_geometry_create_hull(b->world, &hd, &g);
    }
    if (r != GY_OK)
        return r;
    shared_geometry *slot = &b->geos[b->geo_count++];
    slot->type = sc->def.shape.type;
    slot->vertices = sc->vertices;
    slot->indices = sc->indices;
    slot->geometry = g;
    *out = g;
    return GY_OK;
}

static gy_result add_body(build *b, uint32_t i)
{
    const gy_scene_physics *sp = b->scene->entities[i].physics;
    gy_result r = gy_array_reserve(b->alloc, (void **)&b->cols, &b->col_capacity,
                                   sp->collider_count, sizeof *b->cols);
    if (r != GY_OK)
        return r;
    for (uint32_t c = 0; c < sp->collider_count; c++) {
        gy_scene_collider *col = &b->cols[c];
        *col = sp->colliders[c];
        gy_shape *shape = &col->def.shape;
        if (shape->type == GY_SHAPE_PLANE) {
            shape->offset += gy_v3_dot(shape->normal, b->offset);
        } else if ((shape->type == GY_SHAPE_HULL || shape->type == GY_SHAPE_MESH) &&
                   shape->resource.bits == 0 && col->vertices != NULL) {
            gy_geometry g;
            r = shared_geometry_for(b, col, &g);
            if (r != GY_OK)
                return r;
            shape->resource.bits = g.bits;
            /* The geometry now stands for the arrays: the World refuses both at once. */
            col->vertices = NULL;
            col->vertex_count = 0;
            col->indices = NULL;
            col->index_count = 0;
        }
    }
    gy_physics_component_def desc = *sp;
    desc.colliders = b->cols;
    return gy_body_add(b->world, b->inst->entities[i], &desc);
}

static gy_result add_bodies(build *b)
{
    for (uint32_t i = 0; i < b->scene->entity_count; i++) {
        if (b->scene->entities[i].physics == NULL)
            continue;
        gy_result r = add_body(b, i);
        if (r != GY_OK) {
            b->failed_entity = (int32_t)i;
            return r;
        }
    }
    return GY_OK;
}

static gy_result add_joints(build *b)
{
    for (uint32_t j = 0; j < b->scene->joint_count; j++) {
        const gy_scene_joint *sj = &b->scene->joints[j];
        gy_joint_def def = sj->def;
        def.anchor = gy_v3_add(def.anchor, b->offset);
        gy_entity a = b->inst->entities[sj->a];
        gy_entity other = sj->b >= 0 ? b->inst->entities[sj->b] : gy_entity_null();
        gy_result r = gy_joint_create(b->world, a, other, &def, &b->inst->joints[j]);
        if (r != GY_OK)
            return r;
    }
    return GY_OK;
}

/* Destroys what was created, children before parents so no handle goes stale under us (a
 * destroyed parent takes its subtree along; the validity check skips those). */
static void roll_back(build *b)
{
    if (b->created == NULL)
        return; /* failed before anything was created */
    for (uint32_t i = b->scene->entity_count; i-- > 0;) {
        if (!b->created[i])
            continue;
        gy_entity e = b->inst->entities[i];
        if (gy_entity_is_valid(b->world, e) && gy_entity_destroy(b->world, e) != GY_OK)
            gy_log(NULL, GY_LOG_ERROR, "scene: rolling back '%s': entity not destroyed",
                   b->scene->entities[i].name);
    }
}

gy_result gy_scene_instantiate(gy_world *world, const gy_scene *scene, gy_vec3 offset,
                               const gy_allocator *allocator, gy_scene_instance **out,
                               int32_t *failed_entity)
{
    if (failed_entity != NULL)
        *failed_entity = -1;
    if (out != NULL)
        *out = NULL;
    gy_result entered = gy_w_enter(world, __func__);
    if (entered != GY_OK)
        return entered;
    if (scene == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(offset))
        return GY_ERR_NON_FINITE;
    build b;
    memset(&b, 0, sizeof b);
    b.world = world;
    b.scene = scene;
    b.alloc = gy_allocator_or_default(allocator);
    b.offset = offset;
    b.failed_entity = -1;
    gy_result r = new_instance(b.alloc, scene, offset, &b.inst);
    if (r != GY_OK)
        return r;
    uint32_t n = scene->entity_count;
    b.created = alloc_array(b.alloc, n, sizeof *b.created);
    b.chain = alloc_array(b.alloc, n, sizeof *b.chain);
    if (n != 0 && (b.created == NULL || b.chain == NULL))
        r = GY_ERR_OUT_OF_MEMORY;
    if (r == GY_OK)
        r = create_entities(&b);
    if (r == GY_OK)
        r = add_bodies(&b);
    if (r == GY_OK)
        r = add_joints(&b);
    if (r != GY_OK)
        roll_back(&b);
    /* Components pin the geometry they use; the load's own references go either way. */
    for (uint32_t i = 0; i < b.geo_count; i++)
        gy_geometry_release(world, b.geos[i].geometry);
    free_array(b.alloc, b.geos, b.geo_capacity, sizeof *b.geos);
    free_array(b.alloc, b.cols, b.col_capacity, sizeof *b.cols);
    free_array(b.alloc, b.created, n, sizeof *b.created);
    free_array(b.alloc, b.chain, n, sizeof *b.chain);
    if (r != GY_OK) {
        if (failed_entity != NULL)
            *failed_entity = b.failed_entity;
        gy_scene_instance_free(b.inst);
        return r;
    }
    *out = b.inst;
    return GY_OK;
}

/* ---- streaming from callbacks -----------------------------------------------------------------
 */

static gy_result defer(gy_world *w, const gy_w_stream *q)
{
    if (w->tearing_down)
        return GY_ERR_MISUSE; /* the World is going away */
    gy_result r = gy_array_reserve(w->alloc, (void **)&w->streams, &w->stream_capacity,
                                   w->stream_count + 1u, sizeof *w->streams);
    if (r != GY_OK)
        return r;
    w->streams[w->stream_count++] = *q;
    w->stats.streams_deferred++;
    return GY_OK;
}

/* A load or replace asked for inside a dispatch: a pending record now, the work later. */
static gy_result defer_load(gy_world *w, gy_w_stream_kind kind, const gy_scene *scene,
                            gy_vec3 offset, uint64_t timeout_ns, gy_scene_instance *previous,
                            const gy_allocator *allocator, gy_scene_instance **out)
{
    gy_scene_instance *inst;
    gy_result r = new_instance(gy_allocator_or_default(allocator), scene, offset, &inst);
    if (r != GY_OK)
        return r;
    gy_w_stream q = {kind, scene, offset, timeout_ns, inst, previous};
    r = defer(w, &q);
    if (r != GY_OK) {
        gy_scene_instance_free(inst);
        return r;
    }
    inst->pending = true;
    inst->world_ = w;
    if (previous != NULL)
        previous->world_ = w; /* freeing it first drops it from the request */
    *out = inst;
    return GY_OK;
}

static gy_result defer_unload(gy_world *w, gy_scene_instance *inst, uint64_t timeout_ns)
{
    gy_w_stream q = {GY_W_STREAM_UNLOAD, NULL, gy_v3(0, 0, 0), timeout_ns, inst, NULL};
    gy_result r = defer(w, &q);
    if (r == GY_OK)
        inst->world_ = w;
    return r;
}

static void streams_forget(gy_world *w, const gy_scene_instance *inst)
{
    for (uint32_t i = 0; i < w->stream_count; i++) {
        gy_w_stream *q = &w->streams[i];
        if (q->instance == inst) {
            q->kind = GY_W_STREAM_NONE;
            q->instance = NULL;
        }
        if (q->previous == inst)
            q->previous = NULL;
    }
}

/* Moves what a deferred load made into the record the caller holds (same scene, same sizes). */
static void settle(gy_world *w, gy_scene_instance *inst, gy_scene_instance *made, gy_result r,
                   int32_t failed_entity)
{
    inst->pending = false;
    inst->world_ = NULL;
    inst->result = r;
    inst->failed_entity = failed_entity;
    if (made != NULL) {
        if (inst->entity_count != 0)
            memcpy(inst->entities, made->entities,
                   (size_t)inst->entity_count * sizeof *inst->entities);
        if (inst->joint_count != 0)
            memcpy(inst->joints, made->joints, (size_t)inst->joint_count * sizeof *inst->joints);
        gy_scene_instance_free(made);
    }
    if (r != GY_OK)
        gy_log(w->logger, GY_LOG_ERROR,
               "scene: a load requested from a callback failed when performed: %s (scene entity "
               "%d)",
               gy_result_message(r), (int)failed_entity);
}

void gy_w_streams_run(gy_world *w)
{
    if (w->streaming || w->stream_count == 0 || gy_w_in_dispatch(w))
        return;
    w->streaming = true;
    /* The work may run callbacks (a replace stops physics) that queue more: the loop sees them. */
    for (uint32_t i = 0; i < w->stream_count; i++) {
        gy_w_stream q = w->streams[i];
        gy_scene_instance *made = NULL;
        int32_t bad = -1;
        gy_result r = GY_OK;
        switch (q.kind) {
        case GY_W_STREAM_LOAD:
            r = gy_scene_load_additive(w, q.scene, q.offset, q.timeout_ns, q.instance->allocator_,
                                       &made, &bad);
            break;
        case GY_W_STREAM_REPLACE:
            if (q.previous != NULL)
                q.previous->world_ = NULL; /* consumed by the replace */
            r = gy_scene_load_replace(w, q.previous, q.scene, q.instance->allocator_, &made, &bad);
            break;
        case GY_W_STREAM_UNLOAD:
            q.instance->world_ = NULL;
            r = gy_scene_unload(w, q.instance, q.timeout_ns);
            if (r != GY_OK) {
                gy_log(w->logger, GY_LOG_ERROR,
                       "scene: an unload requested from a callback failed when performed: %s; "
                       "its entities stay in the World",
                       gy_result_message(r));
                gy_scene_instance_free(q.instance);
            }
            continue;
        case GY_W_STREAM_NONE:
            continue;
        }
        /* A callback of the work itself may have freed the pending record. */
        if (w->streams[i].instance == NULL)
            gy_scene_instance_free(made);
        else
            settle(w, q.instance, made, r, bad);
    }
    w->stream_count = 0;
    w->streaming = false;
}

void gy_w_streams_fini(gy_world *w)
{
    for (uint32_t i = 0; i < w->stream_count; i++) {
        gy_w_stream *q = &w->streams[i];
        if (q->previous != NULL)
            q->previous->world_ = NULL;
        if (q->instance == NULL)
            continue;
        q->instance->world_ = NULL;
        if (q->kind != GY_W_STREAM_UNLOAD) {
            q->instance->pending = false;
            q->instance->result = GY_ERR_MISUSE;
        }
    }
    if (w->streams != NULL)
        gy_free(w->alloc, w->streams, (size_t)w->stream_capacity * sizeof *w->streams);
    w->streams = NULL;
    w->stream_count = w->stream_capacity = 0;
}

/* ---- loads ----------------------------------------------------------------------------------- */

/* Barrier first, then the World lock (the documented lock order). */
static gy_result open_window(gy_world *world, uint64_t timeout_ns, bool *barrier)
{
    *barrier = false;
    if (gy_world_physics_running(world)) {
        gy_barrier *sb = gy_physics_barrier(gy_world_physics(world));
        gy_result r = gy_barrier_begin_mutation(sb, timeout_ns != 0 ? timeout_ns
                                                                    : DEFAULT_BARRIER_TIMEOUT_NS);
        if (r != GY_OK)
            return r;
        *barrier = true;
    }
    gy_result r = gy_world_lock_write(world);
    if (r != GY_OK && *barrier) {
        gy_barrier_end_mutation(gy_physics_barrier(gy_world_physics(world)));
        *barrier = false;
    }
    return r;
}

static gy_result close_window(gy_world *world, bool barrier)
{
    gy_result r = gy_world_unlock_write(world);
    if (barrier) {
        gy_result e = gy_barrier_end_mutation(gy_physics_barrier(gy_world_physics(world)));
        if (r == GY_OK)
            r = e;
    }
    return r;
}

gy_result gy_scene_load_additive(gy_world *world, const gy_scene *scene, gy_vec3 offset,
                                 uint64_t timeout_ns, const gy_allocator *allocator,
                                 gy_scene_instance **out, int32_t *failed_entity)
{
    if (failed_entity != NULL)
        *failed_entity = -1;
    if (out != NULL)
        *out = NULL;
    gy_result entered = gy_w_enter(world, __func__);
    if (entered != GY_OK)
        return entered;
    if (scene == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(offset))
        return GY_ERR_NON_FINITE;
    if (gy_w_in_dispatch(world))
        return defer_load(world, GY_W_STREAM_LOAD, scene, offset, timeout_ns, NULL, allocator, out);
    bool barrier;
    gy_result r = open_window(world, timeout_ns, &barrier);
    if (r != GY_OK)
        return r;
    r = gy_scene_instantiate(world, scene, offset, allocator, out, failed_entity);
    gy_result c = close_window(world, barrier);
    return r != GY_OK ? r : c;
}

static void destroy_entities(gy_world *world, const gy_scene_instance *inst)
{
    /* Children before parents: a parent's destroy takes its subtree, leaving stale handles that
     * the validity check skips. */
    for (uint32_t i = inst->entity_count; i-- > 0;) {
        gy_entity e = inst->entities[i];
        if (gy_entity_is_valid(world, e) && gy_entity_destroy(world, e) != GY_OK)
            gy_log(NULL, GY_LOG_ERROR, "scene: unloading: an entity could not be destroyed");
    }
}

gy_result gy_scene_unload(gy_world *world, gy_scene_instance *instance, uint64_t timeout_ns)
{
    gy_result entered = gy_w_enter(world, __func__);
    if (entered != GY_OK)
        return entered;
    if (instance == NULL)
        return GY_OK;
    if (gy_w_in_dispatch(world))
        return defer_unload(world, instance, timeout_ns);
    bool barrier;
    gy_result r = open_window(world, timeout_ns, &barrier);
    if (r != GY_OK)
        return r;
    destroy_entities(world, instance);
    r = close_window(world, barrier);
    gy_scene_instance_free(instance);
    return r;
}

gy_result gy_scene_load_replace(gy_world *world, gy_scene_instance *previous, const gy_scene *scene,
                                const gy_allocator *allocator, gy_scene_instance **out,
                                int32_t *failed_entity)
{
    if (failed_entity != NULL)
        *failed_entity = -1;
    if (out != NULL)
        *out = NULL;
    gy_result entered = gy_w_enter(world, __func__);
    if (entered != GY_OK)
        return entered;
    if (scene == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (gy_w_in_dispatch(world))
        return defer_load(world, GY_W_STREAM_REPLACE, scene, gy_v3(0, 0, 0), 0, previous, allocator,
                          out);
    bool was_running = gy_world_physics_running(world);
    if (was_running) {
        gy_result r = gy_world_stop_physics(world);
        if (r != GY_OK)
            return r;
    }
    gy_result r = gy_scene_instantiate(world, scene, gy_v3(0, 0, 0), allocator, out, failed_entity);
    if (r == GY_OK && previous != NULL) {
        destroy_entities(world, previous);
        gy_scene_instance_free(previous);
    }
    if (was_running) {
        gy_result s = gy_world_start_physics(world);
        if (r == GY_OK)
            r = s;
    }
    return r;
}
