/* The adapter front end: the gy_backend contract implemented once over any driver (driver.h).
 *
 * Every entry checks, in the contract's order, the world, the calling thread, the handles (in
 * the front end's pools, whose payloads are the driver's records) and the numbers, and only then
 * calls the driver, so a driver is vendor translation alone. The registry's tables (one per driver)
 * all point at these functions; the world they create remembers its driver. docs/middleware.md
 * describes the split. */
#include <assert.h>
#include <string.h>

#include "adapters.h"
#include "driver.h"
#include "gyre/math.h"
#include "step.h"

GY_ARRAY_DEFINE(gy_frontend_resources, gy_adapter_resource *)

struct gy_backend_world {
    const gy_driver *driver;
    gy_driver_world *dw;
    gy_driver_records rec;            /* lent to the driver: the pools, tally and report below */
    gy_handle_pool bodies;            /* payload: the driver's body record */
    gy_handle_pool colliders;         /* payload: the driver's collider record */
    gy_handle_pool joints;            /* payload: the driver's joint record */
    gy_frontend_step step;            /* the substep loop's rules and scratch */
    gy_handle_pool resources;         /* payload: the driver's resource record */
    gy_adapter_tally tally;           /* bodies by motion type, sensors, live resource records */
    gy_adapter_contacts contacts;     /* the driver's narrow phase feeds it */
    gy_driver_moving moving;          /* the dynamic and kinematic bodies (driver.h) */
    gy_adapter_breakables breakables; /* the breakable joints (driver records) */
    gy_static_grid statics;           /* the static colliders by world box (driver.h) */
    /* A released body's resources whose last reference went with it, freed once the driver has
     * freed the vendor objects that use them; room for the most a body holds is kept. */
    gy_frontend_resources dying;
    gy_adapter_broken broken; /* the joints the last step broke */
    gy_adapter_threads threads;
    const gy_allocator *allocator;
    const gy_logger *logger;
    uint32_t substeps; /* per step, from the world definition (at least 1) */
};

/* Counts a body and its sensor colliders into the counters (`in`) or out of them. */
static void count_body(gy_backend_world *w, gy_driver_body *db, bool in)
{
    gy_adapter_tally *t = &w->tally;
    const gy_adapter_body *b = gy_driver_body_rec(db);
    uint32_t sensors = 0, n = w->driver->body_collider_count(db);
    for (uint32_t i = 0; i < n; i++)
        sensors += gy_driver_collider_rec(w->driver->body_collider(db, i))->is_sensor ? 1u : 0u;
    if (in) {
        t->bodies[b->type]++;
        t->sensors += sensors;
    } else {
        t->bodies[b->type]--;
        t->sensors -= sensors;
    }
}

/* The pools' and lists' storage, freed once the driver has released every record. */
static void pools_fini(gy_backend_world *w)
{
    gy_driver_moving_free(w->allocator, &w->moving);
    gy_adapter_breakables_free(w->allocator, &w->breakables);
    gy_adapter_broken_free(w->allocator, &w->broken);
    gy_frontend_resources_free(w->allocator, &w->dying);
    gy_static_grid_fini(&w->statics);
    gy_handle_pool_fini(&w->joints);
    gy_handle_pool_fini(&w->colliders);
    gy_handle_pool_fini(&w->bodies);
    gy_handle_pool_fini(&w->resources);
}

/* ---- the static grid ------------------------------------------------------------------------- */

_Static_assert(GY_ADAPTER_GRID_ENTRY_SIZE % _Alignof(gy_adapter_collider) == 0,
               "a collider record after its grid entry stays aligned");

static gy_static_grid_item *grid_entry(gy_driver_collider *c)
{
    return gy_adapter_collider_grid(gy_driver_collider_rec(c));
}

/* A box in driver.h's order (min x, max x, min y, max y, min z, max z) as the grid's. */
static gy_aabb grid_box(const double b[6])
{
    return (gy_aabb){{b[0], b[2], b[4]}, {b[1], b[3], b[5]}};
}

/* Indexes a static collider by its box as the driver has it now. On failure nothing is indexed. */
static gy_result static_index(gy_backend_world *w, gy_driver_collider *c)
{
    double b[6];
    w->driver->collider_box(w->dw, c, b);
    const gy_aabb box = grid_box(b);
    return gy_static_grid_insert(&w->statics, grid_entry(c), &box);
}

/* Indexes a new static's colliders, in their order; on failure none is left indexed. */
static gy_result statics_index(gy_backend_world *w, gy_driver_body *b)
{
    uint32_t n = w->driver->body_collider_count(b);
    for (uint32_t i = 0; i < n; i++) {
        gy_result r = static_index(w, w->driver->body_collider(b, i));
        if (r == GY_OK)
            continue;
        for (uint32_t j = 0; j < i; j++)
            gy_static_grid_remove(&w->statics, grid_entry(w->driver->body_collider(b, j)));
        return r;
    }
    return GY_OK;
}

/* Unindexes a static's colliders before it goes. */
static void statics_unindex(gy_backend_world *w, gy_driver_body *b)
{
    uint32_t n = w->driver->body_collider_count(b);
    for (uint32_t i = 0; i < n; i++)
        gy_static_grid_remove(&w->statics, grid_entry(w->driver->body_collider(b, i)));
    gy_static_grid_trim(&w->statics);
}

/* Puts static `b` at `pose` and re-indexes its colliders one by one. When one cannot be indexed
 * (out of memory), the driver puts the static back and the colliders go back in the reverse of
 * the order they moved: each then finds the grid as its move left it, its room in the old cells
 * still free (a later collider's new place may have taken room an earlier one freed), so putting
 * it back never allocates and cannot fail. */
static gy_result static_move(gy_backend_world *w, gy_driver_body *b, gy_pose pose)
{
    gy_body_state old;
    memset(&old, 0, sizeof old);
    w->driver->body_get_state(w->dw, b, &old);
    w->driver->body_set_pose(w->dw, b, pose);
    uint32_t n = w->driver->body_collider_count(b);
    for (uint32_t i = 0; i < n; i++) {
        gy_static_grid_remove(&w->statics, grid_entry(w->driver->body_collider(b, i)));
        gy_result r = static_index(w, w->driver->body_collider(b, i));
        if (r == GY_OK)
            continue;
        w->driver->body_set_pose(w->dw, b, old.pose);
        for (uint32_t j = i + 1; j-- > 0;) {
            if (j < i)
                gy_static_grid_remove(&w->statics, grid_entry(w->driver->body_collider(b, j)));
            gy_result back = static_index(w, w->driver->body_collider(b, j));
            assert(back == GY_OK);
            (void)back;
        }
        return r;
    }
    gy_static_grid_trim(&w->statics);
    return GY_OK;
}

typedef struct statics_visit_ctx {
    bool (*visit)(void *ctx, gy_driver_collider *c);
    void *ctx;
} statics_visit_ctx;

static bool statics_visit_entry(void *ctx, gy_static_grid_item *item)
{
    const statics_visit_ctx *v = ctx;
    return v->visit(v->ctx, gy_driver_collider_of(gy_adapter_grid_collider(item)));
}

void gy_driver_statics_visit(const gy_driver_records *rec, const double box[6],
                             bool (*visit)(void *ctx, gy_driver_collider *c), void *ctx)
{
    const gy_aabb b = grid_box(box);
    statics_visit_ctx v = {visit, ctx};
    gy_static_grid_visit(rec->statics, &b, statics_visit_entry, &v);
}

/* ---- world ---------------------------------------------------------------------------------- */

gy_driver_world *gy_frontend_driver_world(gy_backend_world *w)
{
    return w != NULL ? w->dw : NULL;
}

const gy_static_grid *gy_frontend_static_grid(gy_backend_world *w)
{
    return w != NULL ? &w->statics : NULL;
}

static gy_result world_create(const gy_driver *d, const gy_backend_world_def *def_in,
                              gy_backend_world **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_backend_world_def def;
    gy_result r = gy_adapter_world_def(def_in, &def);
    if (r != GY_OK)
        return r;
    gy_backend_world *w = gy_alloc_zeroed(def.allocator, sizeof *w);
    if (w == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    w->driver = d;
    w->allocator = def.allocator;
    w->logger = def.logger;
    w->substeps = def.substeps;
    if (gy_adapter_threads_init(&w->threads) != GY_OK) {
        gy_free(def.allocator, w, sizeof *w);
        return GY_ERR_BACKEND;
    }
    gy_adapter_contacts_init(&w->contacts, def.allocator, d->pair_size);
    gy_handle_pool_init(&w->bodies, def.allocator);
    gy_handle_pool_init(&w->colliders, def.allocator);
    gy_handle_pool_init(&w->joints, def.allocator);
    gy_handle_pool_init(&w->resources, def.allocator);
    gy_static_grid_init(&w->statics, GY_DRIVER_STATIC_CELL_SIZE, def.allocator);
    gy_frontend_step_init(&w->step, def.allocator, def.gravity, w, &w->rec);
    w->rec = (gy_driver_records){.bodies = &w->bodies,
                                 .colliders = &w->colliders,
                                 .joints = &w->joints,
                                 .resources = &w->resources,
                                 .moving = &w->moving,
                                 .tally = &w->tally,
                                 .contacts = &w->contacts,
                                 .statics = &w->statics};
    r = d->world_create(&def, &w->rec, &w->dw);
    if (r != GY_OK) {
        gy_frontend_step_fini(&w->step);
        pools_fini(w);
        gy_adapter_contacts_fini(&w->contacts);
        gy_adapter_threads_fini(&w->threads);
        gy_free(def.allocator, w, sizeof *w);
        return r;
    }
    gy_adapter_contacts_bind(&w->contacts, d, w->dw);
    *out = w;
    return GY_OK;
}

/* A joint's bodies (the world side is NULL; a static one has nothing to wake). */
static void wake_joint_bodies(gy_backend_world *w, const gy_adapter_joint *j)
{
    gy_driver_wake(w->driver, w->dw, gy_driver_body_of(j->a));
    if (j->b != NULL)
        gy_driver_wake(w->driver, w->dw, gy_driver_body_of(j->b));
}

/* Unlinks a joint from its bodies, has the driver release its record, then wakes the bodies
 * (from a copy: the record is gone): a joint gone changes what holds them. */
static void free_joint(gy_backend_world *w, gy_driver_joint *j)
{
    gy_adapter_joint_detach(gy_driver_joint_rec(j));
    gy_adapter_joint links = *gy_driver_joint_rec(j);
    w->driver->joint_release(w->dw, j);
    wake_joint_bodies(w, &links);
}

/* Takes a joint's id and breakable slot back, then frees it. */
static void release_joint(gy_backend_world *w, gy_driver_joint *j)
{
    gy_adapter_joint *rec = gy_driver_joint_rec(j);
    gy_result r = gy_handle_pool_release(&w->joints, rec->id.bits);
    assert(r == GY_OK);
    (void)r;
    if (rec->breakable_index != UINT32_MAX) {
        gy_adapter_joint *moved =
            gy_adapter_breakables_remove(&w->breakables, rec->breakable_index);
        moved->breakable_index = rec->breakable_index;
    }
    free_joint(w, j);
}

gy_result gy_frontend_break_joints(gy_backend_world *w)
{
    /* Backwards: a broken joint's slot is refilled from the end, which was already checked. */
    for (uint32_t i = w->breakables.count; i-- > 0;) {
        gy_driver_joint *j = w->breakables.items[i];
        const gy_adapter_joint *rec = gy_driver_joint_rec(j);
        if (!(w->driver->joint_force(w->dw, j) > rec->break_force))
            continue;
        /* On a full list the joint holds this step; it is checked again after the next solve. */
        gy_result r = gy_adapter_broken_push(w->allocator, &w->broken, rec->id, rec->user_data);
        if (r != GY_OK)
            return r;
        release_joint(w, j);
    }
    return GY_OK;
}

/* A hull or mesh collider's resource record, NULL for primitives. */
static gy_adapter_resource *collider_resource(const gy_adapter_collider *c)
{
    bool res = c->shape_type == GY_SHAPE_HULL || c->shape_type == GY_SHAPE_MESH;
    return res ? c->shape.resource : NULL;
}

/* Frees the side records of a body's colliders and drops their resource references, then has
 * the driver release the body; a resource whose last reference that was goes after it. */
static void free_body(gy_backend_world *w, gy_driver_body *b)
{
    uint32_t n = w->driver->body_collider_count(b);
    w->dying.count = 0;
    for (uint32_t i = 0; i < n; i++) {
        gy_adapter_collider *c = gy_driver_collider_rec(w->driver->body_collider(b, i));
        gy_adapter_resource *res = collider_resource(c);
        if (res != NULL && gy_adapter_resource_unref(&w->tally, res))
            w->dying.items[w->dying.count++] = res;
        gy_adapter_collider_rare_fini(w->allocator, c);
    }
    w->driver->body_release(w->dw, b);
    for (uint32_t i = 0; i < w->dying.count; i++)
        w->driver->resource_free(w->dw, w->dying.items[i]);
}

/* Takes the ids of a body and its colliders back (colliders first, in their order: the order
 * they were given in), unindexes a static's colliders, then frees the records. */
static void release_body(gy_backend_world *w, gy_driver_body *b)
{
    uint32_t n = w->driver->body_collider_count(b);
    for (uint32_t i = 0; i < n; i++)
        gy_handle_pool_release(&w->colliders,
                               gy_driver_collider_rec(w->driver->body_collider(b, i))->id.bits);
    gy_adapter_body *rec = gy_driver_body_rec(b);
    gy_handle_pool_release(&w->bodies, rec->id.bits);
    if (rec->motion != NULL) {
        gy_driver_body *last = w->moving.items[--w->moving.count];
        w->moving.items[rec->motion->moving_index] = last;
        gy_driver_body_rec(last)->motion->moving_index = rec->motion->moving_index;
    } else {
        statics_unindex(w, b);
    }
    free_body(w, b);
}

static void world_destroy(gy_backend_world *w)
{
    if (w == NULL || !gy_adapter_threads_may_destroy(&w->threads, w->logger, w->driver->name))
        return;
    /* Joints first (they hold their bodies), then bodies (their colliders hold resources). */
    for (uint32_t i = 0; i < w->joints.count; i++) {
        uint64_t h;
        gy_driver_joint *j = gy_handle_pool_at(&w->joints, i, &h);
        if (j != NULL)
            release_joint(w, j);
    }
    for (uint32_t i = w->bodies.count; i-- > 0;) {
        uint64_t h;
        gy_driver_body *b = gy_handle_pool_at(&w->bodies, i, &h);
        if (b == NULL)
            continue;
        count_body(w, b, false);
        release_body(w, b);
    }
    for (uint32_t i = 0; i < w->resources.count; i++) {
        gy_adapter_resource *dead = gy_adapter_resource_release_at(&w->resources, &w->tally, i);
        if (dead != NULL)
            w->driver->resource_free(w->dw, dead);
    }
    w->driver->world_destroy(w->dw);
    pools_fini(w);
    gy_frontend_step_fini(&w->step);
    gy_adapter_contacts_fini(&w->contacts);
    gy_adapter_threads_fini(&w->threads);
    gy_free(w->allocator, w, sizeof *w);
}

static gy_result bind_thread(gy_backend_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return gy_adapter_threads_bind(&w->threads, w->driver->thread_setup);
}

static void unbind_thread(gy_backend_world *w)
{
    if (w != NULL)
        gy_adapter_threads_unbind(&w->threads, w->driver->thread_cleanup);
}

/* The check every entry but creation, binding and the counters starts with. */
static gy_result enter(const gy_backend_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return gy_adapter_threads_ok(&w->threads) ? GY_OK : GY_ERR_WRONG_THREAD;
}

static gy_result set_gravity(gy_backend_world *w, gy_vec3 g)
{
    gy_result r = enter(w);
    if (r != GY_OK)
        return r;
    if (!gy_vec3_is_finite(g))
        return GY_ERR_NON_FINITE;
    w->step.gravity = g; /* the ballistic correction's */
    w->driver->set_gravity(w->dw, g);
    /* Sleepers would otherwise hang in the air under the new gravity. */
    for (uint32_t i = 0; i < w->moving.count; i++)
        gy_driver_wake(w->driver, w->dw, w->moving.items[i]);
    return GY_OK;
}

static void get_counters(gy_backend_world *w, gy_backend_counters *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    /* Once the world has stopped, any thread may read it: leak checks run after the stop. */
    if (w == NULL || !gy_adapter_threads_may_read(&w->threads))
        return;
    gy_adapter_counters(out, &w->tally, &w->bodies, &w->colliders, &w->joints);
    for (uint32_t i = 0; i < w->moving.count; i++) {
        gy_driver_body *b = w->moving.items[i];
        if (gy_driver_body_rec(b)->type == GY_MOTION_KINEMATIC || w->driver->step->body_awake(b))
            out->awake_bodies++;
    }
    out->contact_pairs = w->contacts.current.count;
}

/* ---- resources ------------------------------------------------------------------------------ */

/* Makes a resource record from a valid mesh definition (`mesh`, with `active_edges` as
 * gy_adapter_mesh_edges_build_piece takes them) or hull: the head here, the vendor part by the
 * driver; then gives it its id. On failure nothing is left. */
static gy_result resource_create(gy_backend_world *w, const gy_mesh_def *mesh,
                                 const uint8_t *active_edges, const gy_hull *hull,
                                 gy_resource_id *out)
{
    const gy_allocator *al = w->allocator;
    gy_adapter_resource *rec = gy_alloc_zeroed(al, w->driver->resource_size);
    if (rec == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r = mesh != NULL ? gy_adapter_resource_mesh_init(al, mesh, active_edges, rec)
                               : gy_adapter_resource_hull_init(al, hull, rec);
    if (r != GY_OK) {
        gy_free(al, rec, w->driver->resource_size); /* the head holds nothing on failure */
        return r;
    }
    r = mesh != NULL ? w->driver->mesh_create(w->dw, rec) : w->driver->hull_create(w->dw, rec);
    if (r == GY_OK)
        r = gy_adapter_resource_publish(&w->resources, &w->tally, rec, out);
    if (r != GY_OK)
        w->driver->resource_free(w->dw, rec);
    return r;
}

static gy_result mesh_create(gy_backend_world *w, const gy_mesh_def *def, gy_resource_id *out)
{
    gy_result r =
        gy_adapter_mesh_begin(w != NULL, w != NULL && gy_adapter_threads_ok(&w->threads), def, out);
    return r == GY_OK ? resource_create(w, def, NULL, NULL, out) : r;
}

static gy_result mesh_create_piece(gy_backend_world *w, const gy_mesh_def *def,
                                   const uint8_t *active_edges, gy_resource_id *out)
{
    gy_result r =
        gy_adapter_mesh_begin(w != NULL, w != NULL && gy_adapter_threads_ok(&w->threads), def, out);
    if (r == GY_OK && active_edges == NULL)
        r = GY_ERR_INVALID_ARGUMENT;
    for (uint32_t t = 0; r == GY_OK && t < def->index_count / 3u; t++)
        if (active_edges[t] > 7u)
            r = GY_ERR_INVALID_ARGUMENT;
    return r == GY_OK ? resource_create(w, def, active_edges, NULL, out) : r;
}

static gy_result hull_create(gy_backend_world *w, const gy_hull_def *def, gy_resource_id *out)
{
    gy_result r =
        gy_adapter_hull_begin(w != NULL, w != NULL && gy_adapter_threads_ok(&w->threads), def, out);
    gy_hull hull;
    if (r == GY_OK &&
        (r = gy_hull_build(w->allocator, def->points, def->point_count, &hull)) == GY_OK) {
        r = resource_create(w, NULL, NULL, &hull, out);
        gy_hull_free(w->allocator, &hull);
    }
    return r;
}

static gy_result hull_create_built(gy_backend_world *w, const gy_hull *hull, gy_resource_id *out)
{
    gy_result r = gy_adapter_hull_built_begin(
        w != NULL, w != NULL && gy_adapter_threads_ok(&w->threads), hull, out);
    uint32_t max = r == GY_OK ? w->driver->built_hull_max_vertices : 0u;
    if (max > 0u && hull->vertex_count > max) {
        gy_log(w->logger, GY_LOG_ERROR,
               "%s: a runtime hull of %u vertices is refused: this adapter takes at most %u",
               w->driver->name, hull->vertex_count, max);
        return GY_ERR_UNSUPPORTED;
    }
    return r == GY_OK ? resource_create(w, NULL, NULL, hull, out) : r;
}

static void resource_release(gy_backend_world *w, gy_resource_id id)
{
    if (enter(w) != GY_OK)
        return;
    gy_adapter_resource *dead = gy_adapter_resource_release(&w->resources, &w->tally, id);
    if (dead != NULL)
        w->driver->resource_free(w->dw, dead);
}

/* ---- bodies --------------------------------------------------------------------------------- */

/* Indexes the colliders of a static made by the driver, then gives them and the body their ids:
 * the colliders first, in their order, then the body. On failure nothing is indexed or
 * registered and the driver has released it. */
static gy_result register_body(gy_backend_world *w, gy_driver_body *b,
                               gy_driver_collider *const *cols, uint32_t n)
{
    bool fixed = gy_driver_body_rec(b)->type == GY_MOTION_STATIC;
    gy_result r = fixed ? statics_index(w, b) : GY_OK;
    bool indexed = fixed && r == GY_OK;
    uint32_t done = 0;
    for (; r == GY_OK && done < n; done++) {
        uint64_t h = 0;
        r = gy_handle_pool_acquire(&w->colliders, cols[done], &h);
        gy_driver_collider_rec(cols[done])->id.bits = h;
    }
    uint64_t h = 0;
    if (r == GY_OK)
        r = gy_handle_pool_acquire(&w->bodies, b, &h);
    if (r == GY_OK) {
        gy_driver_body_rec(b)->id.bits = h;
        return GY_OK;
    }
    for (uint32_t i = 0; i < done; i++)
        if (gy_driver_collider_rec(cols[i])->id.bits != 0)
            gy_handle_pool_release(&w->colliders, gy_driver_collider_rec(cols[i])->id.bits);
    if (indexed)
        statics_unindex(w, b);
    free_body(w, b);
    return r;
}

/* A sphere about the centre of mass `com` lying inside the body's solid colliders, for continuous
 * collision. When no collider contains the centre of mass (a dumbbell), the smallest collider's
 * inner radius is used: the sweep then guards the centre of mass only. */
static double ccd_radius(gy_driver_collider *const *cols, gy_adapter_resource *const *res,
                         uint32_t n, gy_vec3 com)
{
    gy_adapter_ccd_radius acc;
    gy_adapter_ccd_begin(&acc);
    for (uint32_t i = 0; i < n; i++) {
        const gy_adapter_collider *c = gy_driver_collider_rec(cols[i]);
        if (c->is_sensor)
            continue;
        gy_shape shape = gy_adapter_collider_shape(c);
        gy_adapter_ccd_add(&acc, &shape, res[i] != NULL ? &res[i]->hull : NULL,
                           gy_adapter_collider_local_pose(c), com);
    }
    return gy_adapter_ccd_end(&acc);
}

static gy_result body_create(gy_backend_world *w, const gy_body_def *def,
                             const gy_collider_def *cols, uint32_t n, gy_body_id *out,
                             gy_collider_id *collider_ids)
{
    gy_adapter_resource **res;
    bool have = w != NULL;
    gy_result r = gy_adapter_body_begin(have, have && gy_adapter_threads_ok(&w->threads),
                                        have ? w->allocator : NULL, have ? &w->resources : NULL,
                                        def, cols, n, out, &res);
    if (r != GY_OK)
        return r;
    gy_mass mass;
    memset(&mass, 0, sizeof mass);
    if (def->type == GY_MOTION_DYNAMIC)
        r = gy_adapter_body_mass(def, cols, n, res, &mass);
    gy_driver_body *b = NULL;
    /* The driver's collider records, until they have ids, then the side records of the few
     * colliders that set a local pose, one-way, surface-velocity or plane values: made before
     * the driver builds the body, which reads them. */
    gy_driver_collider **made = NULL;
    gy_adapter_collider_rare **rare = NULL;
    if (r == GY_OK && n > 0) {
        made = gy_alloc_zeroed(w->allocator, (size_t)n * (sizeof *made + sizeof *rare));
        if (made == NULL)
            r = GY_ERR_OUT_OF_MEMORY;
        else
            rare = (gy_adapter_collider_rare **)(void *)(made + n);
    }
    if (r == GY_OK && def->type != GY_MOTION_STATIC)
        r = gy_driver_moving_reserve(w->allocator, &w->moving, w->moving.count + 1u);
    uint32_t resourced = 0;
    for (uint32_t i = 0; r == GY_OK && i < n; i++)
        resourced += res[i] != NULL ? 1u : 0u;
    if (r == GY_OK)
        r = gy_frontend_resources_reserve(w->allocator, &w->dying, resourced);
    for (uint32_t i = 0; r == GY_OK && i < n; i++)
        r = gy_adapter_collider_rare_make(w->allocator, &cols[i], &rare[i]);
    double sleep_turn = 0.0;
    if (def->type == GY_MOTION_DYNAMIC)
        sleep_turn = gy_adapter_sleep_turn(gy_adapter_body_extent(cols, n, res, mass.center));
    if (r == GY_OK)
        r = w->driver->body_create(w->dw, def, cols, n, res,
                                   (const gy_adapter_collider_rare *const *)rare, &mass, sleep_turn,
                                   &b, made);
    /* Each collider holds a reference to its resource (free_body drops them). */
    for (uint32_t i = 0; r == GY_OK && i < n; i++)
        if (res[i] != NULL)
            res[i]->refs++;
    if (r == GY_OK && def->type == GY_MOTION_DYNAMIC) {
        gy_driver_body_rec(b)->motion->mass = mass.mass;
        gy_driver_body_rec(b)->motion->sleep_turn = sleep_turn;
        gy_driver_body_rec(b)->motion->ccd_radius = ccd_radius(made, res, n, mass.center);
    }
    gy_adapter_body_end(w->allocator, res, n);
    /* Until the driver has made the body, the side records are still ours. */
    for (uint32_t i = 0; r != GY_OK && i < n && rare != NULL; i++)
        gy_adapter_collider_rare_free(w->allocator, rare[i]);
    if (r == GY_OK)
        r = register_body(w, b, made, n);
    if (r == GY_OK) {
        gy_adapter_body *rec = gy_driver_body_rec(b);
        for (uint32_t i = 0; i < n && collider_ids != NULL; i++)
            collider_ids[i] = gy_driver_collider_rec(made[i])->id;
        count_body(w, b, true);
        if (rec->motion != NULL) {
            rec->motion->lock_position = w->driver->step->body_com(b);
            rec->motion->moving_index = w->moving.count;
            w->moving.items[w->moving.count++] = b;
        } else {
            gy_frontend_step_placed(&w->step, w->driver, b);
        }
        *out = rec->id;
    }
    gy_free(w->allocator, made, (size_t)n * (sizeof *made + sizeof *rare));
    return r;
}

/* Checks the world, the thread and the handle. */
static gy_result lookup(gy_backend_world *w, gy_body_id id, gy_driver_body **out)
{
    gy_result r = enter(w);
    if (r != GY_OK)
        return r;
    *out = gy_handle_pool_get(&w->bodies, id.bits);
    return *out != NULL ? GY_OK : GY_ERR_STALE_HANDLE;
}

static gy_result check_vec(gy_vec3 v)
{
    return gy_vec3_is_finite(v) ? GY_OK : GY_ERR_NON_FINITE;
}

/* The body, a finite `v`, then `wanted`: the motion types the call takes (GY_MOTION_BIT). */
static gy_result lookup_vec(gy_backend_world *w, gy_body_id id, gy_vec3 v, uint32_t wanted,
                            gy_driver_body **b)
{
    gy_result r = lookup(w, id, b);
    if (r == GY_OK)
        r = check_vec(v);
    if (r == GY_OK && (GY_MOTION_BIT(gy_driver_body_rec(*b)->type) & wanted) == 0)
        r = GY_ERR_INVALID_MOTION;
    return r;
}

#define MOVING  (GY_MOTION_BIT(GY_MOTION_KINEMATIC) | GY_MOTION_BIT(GY_MOTION_DYNAMIC))
#define DYNAMIC GY_MOTION_BIT(GY_MOTION_DYNAMIC)

static void wake_body(void *ctx, gy_body_id id)
{
    gy_backend_world *w = ctx;
    gy_driver_wake(w->driver, w->dw, gy_handle_pool_get(&w->bodies, id.bits));
}

/* A static moved or refiltered: what the report says touches it wakes (it may no longer rest
 * there), and the next step wakes what it now touches. */
static void static_placed(gy_backend_world *w, gy_driver_body *b)
{
    gy_adapter_contacts_touching(&w->contacts, gy_driver_body_rec(b), wake_body, w);
    gy_frontend_step_placed(&w->step, w->driver, b);
}

static gy_result body_release(gy_backend_world *w, gy_body_id id)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r != GY_OK)
        return r;
    gy_adapter_body *rec = gy_driver_body_rec(b);
    /* A moving body's joints are on its list; a static's only on their moving bodies' lists. */
    while (rec->motion != NULL && rec->motion->joints != NULL)
        release_joint(w, gy_driver_joint_of(rec->motion->joints));
    for (uint32_t i = 0; i < w->joints.count && rec->joint_count > 0; i++) {
        uint64_t h;
        gy_driver_joint *j = gy_handle_pool_at(&w->joints, i, &h);
        if (j != NULL && gy_driver_joint_rec(j)->b == rec)
            release_joint(w, j);
    }
    /* What rested on it falls: wake it before the pairs naming it go. */
    gy_adapter_contacts_forget_body(&w->contacts, rec, wake_body, w);
    count_body(w, b, false);
    release_body(w, b);
    return GY_OK;
}

static gy_result body_get_state(gy_backend_world *w, gy_body_id id, gy_body_state *out)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r != GY_OK)
        return r;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    w->driver->body_get_state(w->dw, b, out);
    /* A kinematic body never sleeps, whatever its vendor makes of one at rest. */
    if (gy_driver_body_rec(b)->type == GY_MOTION_KINEMATIC)
        out->awake = true;
    return GY_OK;
}

static gy_result body_set_pose(gy_backend_world *w, gy_body_id id, gy_pose pose)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r == GY_OK)
        r = gy_validate_pose(pose);
    if (r != GY_OK)
        return r;
    pose.rotation = gy_quat_normalize(pose.rotation);
    const gy_adapter_body *rec = gy_driver_body_rec(b);
    if (rec->type == GY_MOTION_STATIC) {
        r = static_move(w, b, pose);
        if (r == GY_OK)
            static_placed(w, b);
        return r;
    }
    w->driver->body_set_pose(w->dw, b, pose);
    /* A kinematic body joins no island: a sleeper it leaves (a crate on a lift put elsewhere)
     * would hang in the air unless woken here. */
    rec->motion->lock_position = w->driver->step->body_com(b);
    if (rec->type == GY_MOTION_KINEMATIC)
        gy_adapter_contacts_touching(&w->contacts, rec, wake_body, w);
    gy_driver_wake(w->driver, w->dw, b);
    return GY_OK;
}

static gy_result body_set_linear_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 v)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, v, MOVING, &b);
    if (r == GY_OK) {
        w->driver->body_set_linear_velocity(w->dw, b, v);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

static gy_result body_set_angular_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 v)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, v, MOVING, &b);
    if (r == GY_OK) {
        w->driver->body_set_angular_velocity(w->dw, b, v);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

static gy_result body_add_force(gy_backend_world *w, gy_body_id id, gy_vec3 f)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, f, DYNAMIC, &b);
    if (r == GY_OK) {
        gy_adapter_motion *m = gy_adapter_body_motion(gy_driver_body_rec(b));
        m->force = gy_v3_add(m->force, f);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

static gy_result body_add_torque(gy_backend_world *w, gy_body_id id, gy_vec3 t)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, t, DYNAMIC, &b);
    if (r == GY_OK) {
        gy_adapter_motion *m = gy_adapter_body_motion(gy_driver_body_rec(b));
        m->torque = gy_v3_add(m->torque, t);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

/* Through the body's raw state: Δv = J/m and Δω = I⁻¹ (r × J) on every axis. A lock's reaction
 * acts through the centre of mass, so the whole moment turns the body; the step's lock
 * projection (step.c) then takes the locked axes' part away. */
static void add_impulse(gy_backend_world *w, gy_driver_body *b, gy_vec3 j, const gy_vec3 *point)
{
    const gy_driver_step *s = w->driver->step;
    gy_vec3 v, omega;
    s->body_velocity(b, &v, &omega);
    v = gy_v3_mad(v, j, 1.0 / gy_adapter_body_motion(gy_driver_body_rec(b))->mass);
    if (point != NULL) {
        /* R I⁻¹ Rᵀ (r × J), I⁻¹ in body axes. */
        gy_quat q = s->body_rotation(b);
        gy_vec3 l = gy_v3_cross(gy_v3_sub(*point, s->body_com(b)), j);
        gy_vec3 local = gy_quat_rotate(gy_quat_conj(q), l);
        omega = gy_v3_add(omega, gy_quat_rotate(q, gy_mat3_apply(s->body_inv_inertia(b), local)));
    }
    s->body_set_velocity(b, v, omega);
}

static gy_result body_add_impulse(gy_backend_world *w, gy_body_id id, gy_vec3 j)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, j, DYNAMIC, &b);
    if (r == GY_OK) {
        add_impulse(w, b, j, NULL);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

static gy_result body_add_impulse_at(gy_backend_world *w, gy_body_id id, gy_vec3 j, gy_vec3 p)
{
    gy_driver_body *b;
    gy_result r = lookup_vec(w, id, j, DYNAMIC, &b);
    if (r == GY_OK)
        r = check_vec(p);
    if (r == GY_OK) {
        add_impulse(w, b, j, &p);
        gy_driver_wake(w->driver, w->dw, b);
    }
    return r;
}

static gy_result body_move_kinematic(gy_backend_world *w, gy_body_id id, gy_pose target, double dt)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r == GY_OK)
        r = gy_validate_pose(target);
    if (r == GY_OK)
        r = gy_adapter_check_dt(dt);
    if (r != GY_OK)
        return r;
    if (gy_driver_body_rec(b)->type != GY_MOTION_KINEMATIC)
        return GY_ERR_INVALID_MOTION;
    target.rotation = gy_quat_normalize(target.rotation);
    /* The velocities that reach the target in dt; the body counts as moving in the next step. */
    gy_body_state now;
    memset(&now, 0, sizeof now);
    w->driver->body_get_state(w->dw, b, &now);
    gy_vec3 v, omega;
    gy_adapter_kinematic_velocity(now.pose.position, now.pose.rotation, target.position,
                                  target.rotation, dt, &v, &omega);
    w->driver->body_set_linear_velocity(w->dw, b, v);
    w->driver->body_set_angular_velocity(w->dw, b, omega);
    gy_driver_wake(w->driver, w->dw, b);
    return GY_OK;
}

static gy_result body_point_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 p, gy_vec3 *out)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r == GY_OK)
        r = check_vec(p);
    if (r == GY_OK && out == NULL)
        r = GY_ERR_INVALID_ARGUMENT;
    if (r == GY_OK)
        *out = w->driver->body_point_velocity(w->dw, b, p);
    return r;
}

static gy_result body_set_awake(gy_backend_world *w, gy_body_id id, bool awake)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r != GY_OK)
        return r;
    if (gy_driver_body_rec(b)->type != GY_MOTION_DYNAMIC)
        return GY_ERR_INVALID_MOTION;
    if (awake) {
        gy_driver_wake(w->driver, w->dw, b);
        return GY_OK;
    }
    /* At rest means still, with no pending force either (backend.h). */
    gy_adapter_motion *m = gy_adapter_body_motion(gy_driver_body_rec(b));
    m->force = gy_v3(0.0, 0.0, 0.0);
    m->torque = gy_v3(0.0, 0.0, 0.0);
    w->driver->step->body_set_velocity(b, gy_v3(0.0, 0.0, 0.0), gy_v3(0.0, 0.0, 0.0));
    gy_driver_sleep_restart(w->driver, b);
    w->driver->body_put_asleep(w->dw, b);
    return GY_OK;
}

static gy_result body_set_mass(gy_backend_world *w, gy_body_id id, double mass)
{
    gy_driver_body *b;
    gy_result r = lookup(w, id, &b);
    if (r != GY_OK)
        return r;
    r = gy_validate_mass(mass);
    if (r != GY_OK)
        return r;
    if (gy_driver_body_rec(b)->type != GY_MOTION_DYNAMIC)
        return GY_ERR_INVALID_MOTION;
    w->driver->body_set_mass(w->dw, b, mass);
    gy_adapter_body_motion(gy_driver_body_rec(b))->mass = mass;
    gy_driver_wake(w->driver, w->dw, b);
    return GY_OK;
}

/* ---- colliders ------------------------------------------------------------------------------ */

static gy_result lookup_collider(gy_backend_world *w, gy_collider_id id, gy_driver_collider **out)
{
    gy_result r = enter(w);
    if (r != GY_OK)
        return r;
    *out = gy_handle_pool_get(&w->colliders, id.bits);
    return *out != NULL ? GY_OK : GY_ERR_STALE_HANDLE;
}

static gy_result collider_set_material(gy_backend_world *w, gy_collider_id id, const gy_material *m)
{
    gy_driver_collider *c;
    gy_result r = lookup_collider(w, id, &c);
    if (r == GY_OK)
        r = gy_validate_material(m);
    /* The narrow phase combines the two records' materials at every contact. */
    if (r == GY_OK)
        gy_adapter_collider_set_material(gy_driver_collider_rec(c), m);
    return r;
}

static gy_result collider_set_filter(gy_backend_world *w, gy_collider_id id, uint32_t category,
                                     uint32_t mask)
{
    gy_driver_collider *c;
    gy_result r = lookup_collider(w, id, &c);
    if (r != GY_OK)
        return r;
    gy_driver_collider_rec(c)->category = category;
    gy_driver_collider_rec(c)->mask = mask;
    w->driver->collider_filter_changed(w->dw, c);
    /* A pair carried over between sleepers is not collided again: wake whoever it involves. */
    gy_adapter_body *owner = gy_driver_collider_rec(c)->owner;
    if (owner->type == GY_MOTION_STATIC)
        static_placed(w, gy_driver_body_of(owner));
    else
        gy_driver_wake(w->driver, w->dw, gy_driver_body_of(owner));
    return GY_OK;
}

static gy_result collider_get_policy(gy_backend_world *w, gy_collider_id id,
                                     gy_collider_policy *out)
{
    gy_driver_collider *c;
    gy_result r = out != NULL ? lookup_collider(w, id, &c) : GY_ERR_INVALID_ARGUMENT;
    if (r != GY_OK)
        return r;
    const gy_adapter_collider *rec = gy_driver_collider_rec(c);
    out->is_sensor = rec->is_sensor;
    out->contact_response = rec->contact_response;
    out->one_way = rec->one_way;
    out->one_way_normal =
        gy_driver_collider_to_world(w->driver, w->dw, c, gy_adapter_collider_one_way_normal(rec));
    out->surface_velocity =
        gy_driver_collider_to_world(w->driver, w->dw, c, gy_adapter_collider_surface_velocity(rec));
    out->one_way_slop = gy_adapter_collider_one_way_slop(rec);
    return GY_OK;
}

/* ---- joints --------------------------------------------------------------------------------- */

static gy_result joint_create(gy_backend_world *w, const gy_joint_def *def, gy_joint_id *out)
{
    void *a, *b;
    bool have = w != NULL;
    gy_result r = gy_adapter_joint_begin(have, have && gy_adapter_threads_ok(&w->threads),
                                         have ? &w->bodies : NULL, def, out, &a, &b);
    if (r != GY_OK)
        return r;
    if (gy_driver_body_rec(a)->type == GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;
    /* A Distance joint's length resolved (the driver builds a zero-length one as a Ball). */
    gy_joint_def resolved = *def;
    gy_body_state at;
    w->driver->body_get_state(w->dw, a, &at);
    r = gy_adapter_joint_length(def, at.pose.position, &resolved.type, &resolved.distance);
    if (r == GY_OK && def->breakable)
        r = gy_adapter_breakables_reserve(w->allocator, &w->breakables, w->breakables.count + 1u);
    gy_driver_joint *j = NULL;
    if (r == GY_OK)
        r = w->driver->joint_create(w->dw, &resolved, a, b, &j);
    if (r == GY_OK) {
        gy_joint_drive_attach(w->driver, w->dw, j, def);
        gy_adapter_joint_attach(gy_driver_joint_rec(j));
        wake_joint_bodies(w, gy_driver_joint_rec(j)); /* a joint made changes what holds them */
    }
    uint64_t h = 0;
    if (r == GY_OK)
        r = gy_handle_pool_acquire(&w->joints, j, &h);
    if (r == GY_OK) {
        gy_adapter_joint *rec = gy_driver_joint_rec(j);
        rec->id.bits = h;
        if (rec->breakable)
            rec->breakable_index = gy_adapter_breakables_add(&w->breakables, j);
        *out = rec->id;
    } else if (j != NULL) {
        free_joint(w, j);
    }
    return r;
}

static gy_result lookup_joint(gy_backend_world *w, gy_joint_id id, gy_driver_joint **out)
{
    gy_result r = enter(w);
    if (r != GY_OK)
        return r;
    *out = gy_handle_pool_get(&w->joints, id.bits);
    return *out != NULL ? GY_OK : GY_ERR_STALE_HANDLE;
}

static gy_result joint_release(gy_backend_world *w, gy_joint_id id)
{
    gy_driver_joint *j;
    gy_result r = lookup_joint(w, id, &j);
    if (r == GY_OK)
        release_joint(w, j);
    return r;
}

static gy_result joint_set_motor(gy_backend_world *w, gy_joint_id id, const gy_joint_motor *m)
{
    gy_driver_joint *j;
    gy_result r = lookup_joint(w, id, &j);
    if (r == GY_OK)
        r = gy_validate_joint_motor(m);
    if (r != GY_OK)
        return r;
    gy_joint_type type = gy_driver_joint_rec(j)->type;
    if (type != GY_JOINT_HINGE && type != GY_JOINT_SLIDER)
        return GY_ERR_MISUSE;
    gy_joint_drive_set_motor(w->driver, w->dw, j, m);
    wake_joint_bodies(w, gy_driver_joint_rec(j));
    return GY_OK;
}

static gy_result joint_get_state(gy_backend_world *w, gy_joint_id id, gy_joint_state *out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    gy_driver_joint *j;
    gy_result r = lookup_joint(w, id, &j);
    if (r == GY_OK) {
        w->driver->joint_get_state(w->dw, j, out);
        gy_joint_drive_state(w->driver, w->dw, j, out);
    }
    return r;
}

/* ---- step ----------------------------------------------------------------------------------- */

static gy_result step(gy_backend_world *w, double dt)
{
    gy_result r = enter(w);
    if (r == GY_OK)
        r = gy_adapter_check_dt(dt);
    if (r != GY_OK)
        return r;
    gy_adapter_broken_clear(&w->broken); /* broken_joints() lists this step's alone */
    return gy_frontend_step_run(&w->step, w->driver, w->dw, &w->contacts, &w->tally, dt,
                                dt / (double)w->substeps, w->substeps);
}

static uint32_t contacts(gy_backend_world *w, const gy_contact **out)
{
    if (out != NULL)
        *out = NULL;
    if (out == NULL || enter(w) != GY_OK)
        return 0;
    const gy_adapter_report *rep = &w->contacts.current;
    *out = rep->count > 0 ? rep->contacts : NULL;
    return rep->count;
}

static uint32_t broken_joints(gy_backend_world *w, const gy_joint_id **out, const uint64_t **user)
{
    if (out != NULL)
        *out = NULL;
    if (user != NULL)
        *user = NULL;
    if (enter(w) != GY_OK)
        return 0;
    return gy_adapter_broken_read(&w->broken, out, user);
}

/* ---- queries -------------------------------------------------------------------------------- */

static gy_result query_begin(gy_backend_world *w, gy_adapter_query *q,
                             const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                             uint32_t capacity, uint32_t *count)
{
    bool have = w != NULL;
    return gy_adapter_query_begin(q, have, have && gy_adapter_threads_ok(&w->threads),
                                  have ? &w->bodies : NULL, have ? &w->colliders : NULL, filter,
                                  collector, hits, capacity, count);
}

static gy_result raycast(gy_backend_world *w, gy_vec3 origin, gy_vec3 translation,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count)
{
    gy_adapter_query q;
    double length;
    gy_result r = query_begin(w, &q, filter, collector, hits, capacity, count);
    if (r == GY_OK)
        r = gy_adapter_check_translation(&origin, translation, &length);
    /* A zero-length ray has nothing to hit. */
    if (r != GY_OK || !(length > 0.0) || q.stop)
        return r;
    gy_adapter_search_ray(w->driver, w->dw, &q, origin, translation, length);
    *count = q.count;
    return GY_OK;
}

/* A shape query: checked, its hull resolved, then the search (`cast` false: an overlap). */
static gy_result shape_query(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                             const gy_vec3 *translation, const gy_query_filter *filter,
                             gy_collector collector, gy_hit *hits, uint32_t capacity,
                             uint32_t *count)
{
    gy_adapter_query q;
    gy_vec3 t = gy_v3(0.0, 0.0, 0.0);
    double length = 0.0;
    gy_result r = query_begin(w, &q, filter, collector, hits, capacity, count);
    if (r == GY_OK)
        r = gy_adapter_check_query_shape(&w->resources, shape, pose);
    if (r == GY_OK && translation != NULL) {
        t = *translation;
        r = gy_adapter_check_translation(NULL, t, &length);
    }
    if (r != GY_OK || q.stop)
        return r;
    const gy_adapter_resource *res = shape->type == GY_SHAPE_HULL
                                         ? gy_handle_pool_get(&w->resources, shape->resource.bits)
                                         : NULL;
    gy_adapter_search_shape(w->driver, w->dw, &q, shape, res != NULL ? &res->hull : NULL, pose, t,
                            length, translation != NULL);
    *count = q.count;
    return GY_OK;
}

static gy_result shape_cast(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                            gy_vec3 translation, const gy_query_filter *filter,
                            gy_collector collector, gy_hit *hits, uint32_t capacity,
                            uint32_t *count)
{
    return shape_query(w, shape, pose, &translation, filter, collector, hits, capacity, count);
}

static gy_result overlap(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                         const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                         uint32_t capacity, uint32_t *count)
{
    return shape_query(w, shape, pose, NULL, filter, collector, hits, capacity, count);
}

/* ---- the tables ----------------------------------------------------------------------------- */

/* One table per driver: the same entries, a world_create that names the driver. */
#define GY_FRONTEND_TABLE(table, driver, name_, flags_, middleware_)                               \
    static gy_result table##_world_create(const gy_backend_world_def *def, gy_backend_world **out) \
    {                                                                                              \
        return world_create(&(driver), def, out);                                                  \
    }                                                                                              \
    const gy_backend table = {                                                                     \
        .name = name_,                                                                             \
        .flags = flags_,                                                                           \
        .middleware = middleware_,                                                                 \
        .world_create = table##_world_create,                                                      \
        .world_destroy = world_destroy,                                                            \
        .bind_thread = bind_thread,                                                                \
        .unbind_thread = unbind_thread,                                                            \
        .set_gravity = set_gravity,                                                                \
        .mesh_create = mesh_create,                                                                \
        .mesh_create_piece = mesh_create_piece,                                                    \
        .hull_create = hull_create,                                                                \
        .hull_create_built = hull_create_built,                                                    \
        .resource_release = resource_release,                                                      \
        .body_create = body_create,                                                                \
        .body_release = body_release,                                                              \
        .body_get_state = body_get_state,                                                          \
        .body_set_pose = body_set_pose,                                                            \
        .body_set_linear_velocity = body_set_linear_velocity,                                      \
        .body_set_angular_velocity = body_set_angular_velocity,                                    \
        .body_add_force = body_add_force,                                                          \
        .body_add_torque = body_add_torque,                                                        \
        .body_add_impulse = body_add_impulse,                                                      \
        .body_add_impulse_at = body_add_impulse_at,                                                \
        .body_move_kinematic = body_move_kinematic,                                                \
        .body_point_velocity = body_point_velocity,                                                \
        .body_set_awake = body_set_awake,                                                          \
        .body_set_mass = body_set_mass,                                                            \
        .collider_set_material = collider_set_material,                                            \
        .collider_set_filter = collider_set_filter,                                                \
        .collider_get_policy = collider_get_policy,                                                \
        .joint_create = joint_create,                                                              \
        .joint_release = joint_release,                                                            \
        .joint_set_motor = joint_set_motor,                                                        \
        .joint_get_state = joint_get_state,                                                        \
        .step = step,                                                                              \
        .contacts = contacts,                                                                      \
        .broken_joints = broken_joints,                                                            \
        .raycast = raycast,                                                                        \
        .shape_cast = shape_cast,                                                                  \
        .overlap = overlap,                                                                        \
        .get_counters = get_counters,                                                              \
    }

/* ODE's collision code is not thread-safe. */
GY_FRONTEND_TABLE(gy_ode_backend_table, gy_ode_driver, "ode", GY_BACKEND_QUERIES_EXCLUSIVE,
                  "ODE " GY_ODE_VERSION);
#if defined(GYRE_HAVE_BULLET)
/* Bullet's queries share the broadphase's ray stack and the driver's probe and shape storage. */
GY_FRONTEND_TABLE(gy_bullet_backend_table, gy_bullet_driver, "bullet", GY_BACKEND_QUERIES_EXCLUSIVE,
                  "Bullet " GY_BULLET_VERSION " (double precision)");
#endif
