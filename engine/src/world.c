/* The World: creation, entities (generational slots), the hierarchy, transforms and their
 * propagation, the World lock and counters. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "world_internal.h"
#include "gyre/backend/backend.h"

/* ---- small helpers --------------------------------------------------------------------------- */

static gy_pose compose(gy_pose parent, gy_pose local)
{
    gy_pose r = gy_pose_mul(parent, local);
    r.rotation = gy_quat_normalize(r.rotation);
    return r;
}

static bool pose_equal(gy_pose a, gy_pose b)
{
    return a.position.x == b.position.x && a.position.y == b.position.y &&
           a.position.z == b.position.z && a.rotation.x == b.rotation.x &&
           a.rotation.y == b.rotation.y && a.rotation.z == b.rotation.z &&
           a.rotation.w == b.rotation.w;
}

bool gy_w_running(const gy_world *w)
{
    return gy_physics_running(w->physics);
}

/* ---- creation -------------------------------------------------------------------------------- */

gy_world_def gy_default_world_def(void)
{
    gy_world_def c;
    memset(&c, 0, sizeof c);
    c.physics = gy_default_physics_def();
    return c;
}

static void free_world(gy_world *w)
{
    const gy_allocator *a = w->alloc;
    gy_w_joints_fini(w);
    gy_w_geometry_fini(w);
    gy_obj_cache_release(w->obj_cache); /* scenes still holding meshes keep it alive */
    gy_w_events_fini(w);
    gy_w_streams_fini(w);
    gy_w_bodies_fini(w);
    for (uint32_t i = 0; i < w->cold_count; i++)
        if (w->cold[i].name != NULL)
            gy_free(a, w->cold[i].name, w->cold[i].name_size);
    if (w->cold != NULL)
        gy_free(a, w->cold, (size_t)w->cold_capacity * sizeof *w->cold);
    if (w->ents != NULL)
        gy_free(a, w->ents, (size_t)w->ent_capacity * sizeof *w->ents);
    if (w->local != NULL)
        gy_free(a, w->local, (size_t)w->local_capacity * sizeof *w->local);
    gy_w_store_fini(&w->child_world, a);
    gy_w_store_fini(&w->scales, a);
    gy_w_store_fini(&w->bodies, a);
    gy_u32_array_free(a, &w->dirty);
    gy_u32_array_free(a, &w->tracked);
    gy_u32_array_free(a, &w->moved);
    gy_u32_array_free(a, &w->doomed);
    gy_w_render_free(w);
    if (w->store_owner != NULL)
        gy_free(a, w->store_owner, (size_t)w->store_capacity * sizeof *w->store_owner);
    if (w->results != NULL)
        gy_free(a, w->results, (size_t)w->results_capacity * sizeof *w->results);
    if (w->results_rare != NULL)
        gy_free(a, w->results_rare, (size_t)w->results_rare_capacity * sizeof *w->results_rare);
    if (w->velocities != NULL)
        gy_free(a, w->velocities, (size_t)w->velocities_capacity * sizeof *w->velocities);
    if (w->col_scratch != NULL)
        gy_free(a, w->col_scratch, (size_t)w->col_scratch_capacity * sizeof *w->col_scratch);
    if (w->hit_scratch != NULL)
        gy_free(a, w->hit_scratch, (size_t)w->hit_capacity * sizeof *w->hit_scratch);
    if (w->snap_scratch != NULL)
        gy_free(a, w->snap_scratch, (size_t)w->snap_capacity * sizeof *w->snap_scratch);
    gy_w_recording_free(w);
    gy_physics_destroy(w->physics);
    pthread_rwlock_destroy(&w->lock);
    gy_free(w->raw_alloc, w, sizeof *w);
}

void gy_w_free(gy_world *w)
{
    free_world(w);
}

static uint64_t world_clock(void *ctx)
{
    (void)ctx;
    return gy_clock_now_ns();
}

gy_result gy_world_create(const gy_world_def *config, gy_world **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_world_def c = config != NULL ? *config : gy_default_world_def();
    /* The subsystem's allocator and logger are the World's: a different one there would be
     * silently replaced. */
    if (c.physics.allocator != NULL && c.physics.allocator != c.allocator) {
        gy_log(c.logger, GY_LOG_ERROR,
               "world: gy_world_create: physics.allocator is replaced by the World's; set "
               "config.allocator instead");
        return GY_ERR_INVALID_ARGUMENT;
    }
    if (c.physics.logger != NULL && c.physics.logger != c.logger) {
        gy_log(c.logger, GY_LOG_ERROR,
               "world: gy_world_create: physics.logger is replaced by the World's; set "
               "config.logger instead");
        return GY_ERR_INVALID_ARGUMENT;
    }
    uint32_t hz = c.physics.step_hz != 0 ? c.physics.step_hz : 60u;
    if (!gy_is_finite(c.render_delay))
        return GY_ERR_NON_FINITE;
    if (c.render_delay < 0.0 || c.render_delay > 2.0 / (double)hz)
        return GY_ERR_INVALID_ARGUMENT;
    if (c.kill_plane && !gy_is_finite(c.kill_y))
        return GY_ERR_NON_FINITE;
    if (c.kill_plane && fabs(c.kill_y) > GY_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *raw = gy_allocator_or_default(c.allocator);
    gy_world *w = gy_alloc_zeroed(raw, sizeof *w);
    if (w == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (pthread_rwlock_init(&w->lock, NULL) != 0) {
        gy_free(raw, w, sizeof *w);
        return GY_ERR_OUT_OF_MEMORY;
    }
    /* Everything but the World object itself is metered, the subsystem's allocations included
     * (its diagnostics report the meter). */
    w->raw_alloc = raw;
    gy_allocator_meter_init(&w->meter, raw);
    const gy_allocator *a = &w->meter.allocator;
    w->alloc = a;
    gy_hash_map_init(&w->defs, a);
    gy_hash_map_init(&w->user_data, a);
    gy_hash_map_init(&w->ref_store, a);
    gy_hash_map_init(&w->held_index, a);
    w->logger = c.logger;
    w->owner = pthread_self();
    w->owner_state = GY_W_OWNED;
    w->lockstep = c.physics.lockstep;
    w->step_dt = 1.0 / (double)hz;
    w->clock = c.physics.clock != NULL ? c.physics.clock : world_clock;
    w->clock_ctx = c.physics.clock_ctx;
    w->render_delay = c.render_delay;
    w->delay = c.render_delay > 0.0 ? c.render_delay : w->step_dt;
    w->max_catchup = c.physics.max_catchup_steps != 0 ? c.physics.max_catchup_steps : 4u;
    w->step_timeout_ns = c.step_timeout_ns != 0 ? c.step_timeout_ns : 10000000000ull;
    w->update = c.update;
    w->update_ctx = c.update_ctx;
    w->kill_plane = c.kill_plane;
    w->kill_y = c.kill_y;
    w->time_scale = 1.0;
    w->reply_budget = UINT32_MAX;
    w->first_root = GY_W_NONE;
    w->free_head = GY_W_NONE;
    w->cold_free = GY_W_NONE;
    w->store_free = GY_W_NONE;
    gy_w_store_init(&w->child_world, sizeof(gy_pose));
    gy_w_store_init(&w->scales, sizeof(gy_vec3));
    gy_w_bodies_init(w);
    gy_handle_pool_init(&w->geo_pool, a);
    gy_handle_pool_init(&w->joint_pool, a);
    gy_physics_def pd = c.physics;
    pd.allocator = a;
    pd.meter = &w->meter;
    pd.logger = c.logger;
    /* With no host hook, bodies with is_character carry their settings to the physics thread,
     * whose own controller moves them. */
    w->run_characters = pd.move_characters == NULL;
    /* The raw allocator: the cache may outlive the World (and its meter) in a scene's hands. */
    gy_result r = gy_obj_cache_create(raw, &w->obj_cache);
    if (r == GY_OK)
        r = gy_physics_create(&pd, &w->physics);
    if (r == GY_OK && !c.start_stopped)
        r = gy_physics_start(w->physics, NULL);
    if (r != GY_OK) {
        free_world(w);
        return r;
    }
    *out = w;
    return GY_OK;
}

gy_physics *gy_world_physics(gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return NULL;
    return w != NULL ? w->physics : NULL;
}

gy_obj_cache *gy_world_obj_cache(gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return NULL;
    return w != NULL ? w->obj_cache : NULL;
}

bool gy_world_physics_running(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    return w != NULL && gy_w_running(w);
}

/* ---- entity slots ---------------------------------------------------------------------------- */

uint32_t gy_w_entity_slot(const gy_world *w, gy_entity e)
{
    if (w == NULL || e.bits == 0)
        return GY_W_NONE;
    uint32_t slot = gy_handle_slot(e.bits);
    if (slot >= w->ent_high)
        return GY_W_NONE;
    const gy_w_entity *en = &w->ents[slot];
    if (!en->live || en->generation != gy_handle_generation(e.bits))
        return GY_W_NONE;
    return slot;
}

gy_entity gy_w_entity_handle(const gy_world *w, uint32_t slot)
{
    gy_entity e = {0};
    if (slot != GY_W_NONE && slot < w->ent_high && w->ents[slot].live)
        e.bits = gy_handle_make(slot, w->ents[slot].generation);
    return e;
}

bool gy_entity_is_valid(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    return gy_w_entity_slot(w, e) != GY_W_NONE;
}

uint32_t gy_world_entity_count(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0;
    return w != NULL ? w->ent_live : 0u;
}

uint32_t gy_world_get_entities(const gy_world *w, gy_entity *out, uint32_t capacity)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0u;
    uint32_t n = 0;
    for (uint32_t s = 0; s < w->ent_high && n < capacity && out != NULL; s++)
        if (w->ents[s].live)
            out[n++] = gy_w_entity_handle(w, s);
    return w->ent_live;
}

/* ---- hierarchy links ------------------------------------------------------------------------- */

static uint32_t *list_of(gy_world *w, uint32_t parent)
{
    return parent != GY_W_NONE ? &w->ents[parent].first_child : &w->first_root;
}

/* Appends to the parent's children (or the roots). */
static void link_child(gy_world *w, uint32_t slot, uint32_t parent)
{
    gy_w_transform_unfollow(w, slot);
    if (parent != GY_W_NONE)
        gy_w_transform_unfollow(w, parent);
    gy_w_entity *en = &w->ents[slot];
    uint32_t *first = list_of(w, parent);
    en->parent = parent;
    en->next_sibling = GY_W_NONE;
    if (*first == GY_W_NONE) {
        *first = slot;
        en->prev_sibling = slot;
        return;
    }
    uint32_t last = w->ents[*first].prev_sibling;
    w->ents[last].next_sibling = slot;
    en->prev_sibling = last;
    w->ents[*first].prev_sibling = slot;
}

static void unlink_child(gy_world *w, uint32_t slot)
{
    gy_w_entity *en = &w->ents[slot];
    uint32_t *first = list_of(w, en->parent);
    uint32_t next = en->next_sibling, prev = en->prev_sibling;
    if (*first == slot)
        *first = next;
    else
        w->ents[prev].next_sibling = next;
    if (next != GY_W_NONE)
        w->ents[next].prev_sibling = prev;
    else if (*first != GY_W_NONE)
        w->ents[*first].prev_sibling = prev; /* it was the last */
    en->parent = en->next_sibling = en->prev_sibling = GY_W_NONE;
}

void gy_w_walk_subtree(gy_world *w, uint32_t slot, void (*fn)(gy_world *, uint32_t, void *),
                       void *ctx)
{
    fn(w, slot, ctx);
    for (uint32_t c = w->ents[slot].first_child; c != GY_W_NONE; c = w->ents[c].next_sibling)
        gy_w_walk_subtree(w, c, fn, ctx);
}

/* ---- entities -------------------------------------------------------------------------------- */

gy_entity_def gy_default_entity_def(void)
{
    gy_entity_def d;
    memset(&d, 0, sizeof d);
    d.active = true;
    d.rotation = gy_quat_identity();
    d.scale = gy_v3(1, 1, 1);
    return d;
}

static gy_result check_rotation(gy_quat q)
{
    if (!gy_quat_is_finite(q))
        return GY_ERR_NON_FINITE;
    return gy_quat_is_unit(q) ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

static gy_result check_scale(gy_vec3 s)
{
    if (!gy_vec3_is_finite(s))
        return GY_ERR_NON_FINITE;
    return s.x > 0.0 && s.y > 0.0 && s.z > 0.0 ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

static gy_result take_slot(gy_world *w, uint32_t *out)
{
    if (w->free_head != GY_W_NONE) {
        *out = w->free_head;
        w->free_head = w->ents[*out].next_sibling;
        return GY_OK;
    }
    if (w->ent_high >= GY_W_MAX_ENTITIES)
        return GY_ERR_CAPACITY;
    if (w->ent_high == w->ent_capacity) {
        uint32_t old = w->ent_capacity;
        gy_result r = gy_w_grow(w->alloc, (void **)&w->ents, &w->ent_capacity, w->ent_high + 1u,
                                sizeof *w->ents);
        if (r != GY_OK)
            return r;
        memset(w->ents + old, 0, (size_t)(w->ent_capacity - old) * sizeof *w->ents);
    }
    gy_result r = gy_w_grow(w->alloc, (void **)&w->local, &w->local_capacity, w->ent_high + 1u,
                            sizeof *w->local);
    if (r != GY_OK)
        return r;
    *out = w->ent_high++;
    w->ents[*out].generation = 0;
    return GY_OK;
}

/* A slot taken but never made live goes back as it came. */
static void untake_slot(gy_world *w, uint32_t slot)
{
    w->ents[slot].next_sibling = w->free_head;
    w->free_head = slot;
}

static void give_slot_back(gy_world *w, uint32_t slot)
{
    gy_w_entity *en = &w->ents[slot];
    en->live = false;
    /* A slot whose generation would wrap is retired, so no old handle can ever alias it. */
    if (en->generation == UINT32_MAX)
        return;
    untake_slot(w, slot);
}

/* ---- cold records ---------------------------------------------------------------------------- */

const char *gy_w_entity_name(const gy_world *w, uint32_t slot)
{
    const gy_w_entity_cold *c = gy_w_cold_of(w, slot);
    return c != NULL && c->name != NULL ? c->name : "";
}

/* A zeroed cold record's index in *out. */
static gy_result cold_take(gy_world *w, uint32_t *out)
{
    uint32_t i = w->cold_free;
    if (i != GY_W_NONE) {
        w->cold_free = w->cold[i].next_free;
    } else {
        gy_result r = gy_array_reserve(w->alloc, (void **)&w->cold, &w->cold_capacity,
                                       w->cold_count + 1u, sizeof *w->cold);
        if (r != GY_OK)
            return r;
        i = w->cold_count++;
    }
    memset(&w->cold[i], 0, sizeof w->cold[i]);
    w->cold[i].next_free = GY_W_NONE;
    *out = i;
    return GY_OK;
}

gy_w_entity_cold *gy_w_cold_get(gy_world *w, uint32_t slot)
{
    if (w->ents[slot].cold == GY_W_NONE && cold_take(w, &w->ents[slot].cold) != GY_OK)
        return NULL;
    return &w->cold[w->ents[slot].cold];
}

void gy_w_cold_trim(gy_world *w, uint32_t slot, bool all)
{
    gy_w_entity_cold *c = gy_w_cold_of(w, slot);
    if (c == NULL)
        return;
    if (all && c->name != NULL) {
        gy_free(w->alloc, c->name, c->name_size);
        c->name = NULL;
    }
    if (!all &&
        (c->name != NULL || c->on_collision != NULL || c->on_body_event != NULL || c->joints > 0))
        return;
    c->next_free = w->cold_free;
    w->cold_free = w->ents[slot].cold;
    w->ents[slot].cold = GY_W_NONE;
}

/* ---- scales ---------------------------------------------------------------------------------- */

static bool is_unit_scale(gy_vec3 s)
{
    return s.x == 1.0 && s.y == 1.0 && s.z == 1.0;
}

static gy_vec3 scale_of(const gy_world *w, uint32_t slot)
{
    const gy_vec3 *s = gy_w_store_get(&w->scales, slot);
    return s != NULL ? *s : gy_v3(1, 1, 1);
}

/* Sets the entity's local scale (only a scale other than (1, 1, 1) is stored). Out of memory
 * changes nothing. */
static gy_result set_scale(gy_world *w, uint32_t slot, gy_vec3 scale)
{
    gy_vec3 *s = gy_w_store_get(&w->scales, slot);
    if (is_unit_scale(scale)) {
        gy_w_store_remove(&w->scales, slot);
        return GY_OK;
    }
    if (s == NULL) {
        gy_result r = gy_w_store_add(&w->scales, w->alloc, slot, (void **)&s);
        if (r != GY_OK)
            return r;
    }
    *s = scale;
    return GY_OK;
}

/* ---- entities (continued) -------------------------------------------------------------------- */

gy_result gy_entity_create(gy_world *w, const gy_entity_def *def, gy_entity *out)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = gy_entity_null();
    gy_entity_def d = def != NULL ? *def : gy_default_entity_def();
    uint32_t parent = GY_W_NONE;
    if (!gy_entity_is_null(d.parent)) {
        parent = gy_w_entity_slot(w, d.parent);
        if (parent == GY_W_NONE)
            return GY_ERR_STALE_HANDLE;
    }
    gy_result r = gy_validate_vector(d.position, GY_MAX_MAGNITUDE);
    if (r == GY_OK)
        r = check_rotation(d.rotation);
    if (r == GY_OK)
        r = check_scale(d.scale);
    if (r != GY_OK)
        return r;
    uint32_t slot;
    r = take_slot(w, &slot);
    if (r != GY_OK)
        return r;
    /* Everything that can fail first, so a failure gives back only what it took. */
    gy_w_entity *en = &w->ents[slot];
    en->cold = GY_W_NONE;
    if (d.name != NULL && d.name[0] != '\0') {
        gy_w_entity_cold *c = gy_w_cold_get(w, slot);
        size_t size = strlen(d.name) + 1u;
        char *name = c != NULL ? gy_alloc(w->alloc, size) : NULL;
        if (name != NULL) {
            memcpy(name, d.name, size);
            c->name = name;
            c->name_size = size;
        }
        r = name != NULL ? GY_OK : GY_ERR_OUT_OF_MEMORY;
    }
    gy_pose *cw = NULL;
    if (r == GY_OK && parent != GY_W_NONE)
        r = gy_w_store_add(&w->child_world, w->alloc, slot, (void **)&cw);
    if (r == GY_OK)
        r = set_scale(w, slot, d.scale);
    if (r != GY_OK) {
        gy_w_store_remove(&w->child_world, slot);
        gy_w_cold_trim(w, slot, true);
        untake_slot(w, slot);
        return r;
    }
    uint32_t generation = en->generation + 1u;
    uint32_t cold = en->cold;
    memset(en, 0, sizeof *en);
    en->generation = generation;
    en->cold = cold;
    en->first_child = GY_W_NONE;
    en->live = true;
    en->active = d.active;
    en->active_h = d.active && (parent == GY_W_NONE || w->ents[parent].active_h);
    link_child(w, slot, parent);
    gy_pose *local = &w->local[slot];
    local->position = d.position;
    local->rotation = gy_quat_normalize(d.rotation);
    if (parent != GY_W_NONE)
        *gy_w_world_of(w, slot) = compose(gy_w_world_pose(w, parent), *local);
    if (parent != GY_W_NONE && (w->ents[parent].dirty_game || w->ents[parent].dirty_phys))
        gy_w_mark_dirty(w, slot, false);
    w->ent_live++;
    *out = gy_w_entity_handle(w, slot);
    return GY_OK;
}

gy_result gy_entity_destroy(gy_world *w, gy_entity e)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    /* Children first, so every parent link is still valid while its subtree goes: always the
     * deepest last descendant, which is reverse pre-order. Walking the links instead of listing
     * the subtree first means destroying never allocates, so it cannot fail part-way when memory
     * is short (a failed scene load rolls back through here). */
    for (uint32_t s = slot;;) {
        while (w->ents[s].first_child != GY_W_NONE)
            s = w->ents[w->ents[s].first_child].prev_sibling; /* the last child */
        uint32_t parent = w->ents[s].parent;
        bool last = s == slot;
        if (gy_w_joints_of(w, s) > 0)
            gy_w_joints_entity_destroyed(w, s);
        if (gy_w_body_of(w, s) != NULL)
            gy_w_body_destroy(w, s);
        unlink_child(w, s);
        gy_w_store_remove(&w->child_world, s);
        gy_w_store_remove(&w->scales, s);
        gy_w_cold_trim(w, s, true);
        gy_w_entity *en = &w->ents[s];
        en->dirty_game = en->dirty_phys = false;
        give_slot_back(w, s);
        w->ent_live--;
        if (last)
            break;
        s = parent;
    }
    return GY_OK;
}

gy_entity gy_world_find_entity(const gy_world *w, const char *name)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return gy_entity_null();
    if (w == NULL || name == NULL)
        return gy_entity_null();
    for (uint32_t s = 0; s < w->ent_high; s++) {
        const gy_w_entity_cold *c = w->ents[s].live ? gy_w_cold_of(w, s) : NULL;
        if (c != NULL && c->name != NULL && strcmp(c->name, name) == 0)
            return gy_w_entity_handle(w, s);
    }
    return gy_entity_null();
}

const char *gy_entity_name(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return NULL;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return NULL;
    return gy_w_entity_name(w, slot);
}

/* ---- active flags ---------------------------------------------------------------------------- */

/* Recomputes active-in-hierarchy below a change and re-syncs bodies whose state flipped. */
static void refresh_active(gy_world *w, uint32_t slot, void *ctx)
{
    (void)ctx;
    gy_w_entity *en = &w->ents[slot];
    bool parent_h = en->parent == GY_W_NONE || w->ents[en->parent].active_h;
    bool h = en->active && parent_h;
    if (h == en->active_h)
        return;
    en->active_h = h;
    if (gy_w_body_of(w, slot) != NULL) {
        gy_result r = gy_w_body_refresh(w, slot);
        if (r != GY_OK)
            gy_log(w->logger, GY_LOG_WARN, "world: entity '%s': body %s failed: %s",
                   gy_w_entity_name(w, slot), h ? "create" : "release", gy_result_message(r));
    }
}

/* Walks the subtree, visiting children even when the node itself did not flip (a child's own
 * state depends on the whole path). */
static void refresh_active_tree(gy_world *w, uint32_t slot)
{
    gy_w_walk_subtree(w, slot, refresh_active, NULL);
}

gy_result gy_entity_set_active(gy_world *w, gy_entity e, bool active)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    if (w->ents[slot].active == active)
        return GY_OK;
    w->ents[slot].active = active;
    refresh_active_tree(w, slot);
    return GY_OK;
}

bool gy_entity_is_active(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    uint32_t slot = gy_w_entity_slot(w, e);
    return slot != GY_W_NONE && w->ents[slot].active;
}

bool gy_entity_is_active_in_hierarchy(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    uint32_t slot = gy_w_entity_slot(w, e);
    return slot != GY_W_NONE && w->ents[slot].active_h;
}

/* ---- hierarchy ------------------------------------------------------------------------------- */

gy_result gy_entity_set_parent(gy_world *w, gy_entity e, gy_entity parent)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    uint32_t p = GY_W_NONE;
    if (!gy_entity_is_null(parent)) {
        p = gy_w_entity_slot(w, parent);
        if (p == GY_W_NONE)
            return GY_ERR_STALE_HANDLE;
        for (uint32_t a = p; a != GY_W_NONE; a = w->ents[a].parent)
            if (a == slot)
                return GY_ERR_INVALID_ARGUMENT;
    }
    uint32_t was = w->ents[slot].parent;
    if (was == p)
        return GY_OK;
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (p == GY_W_NONE && c != NULL) {
        /* Its stored world pose becomes its local one: a held body's held pose is kept apart
         * first, so running out of memory changes nothing. */
        gy_result r = gy_w_body_hold_apart(w, c, 1u);
        if (r != GY_OK)
            return r;
    }
    if (was == GY_W_NONE) {
        /* A child keeps its own world pose: made first, so running out of memory changes
         * nothing. */
        gy_w_transform_unfollow(w, slot);
        gy_pose *cw;
        gy_result r = gy_w_store_add(&w->child_world, w->alloc, slot, (void **)&cw);
        if (r != GY_OK)
            return r;
        *cw = w->local[slot];
    }
    unlink_child(w, slot);
    if (p == GY_W_NONE)
        gy_w_store_remove(&w->child_world, slot);
    link_child(w, slot, p);
    gy_w_mark_dirty(w, slot, true);
    refresh_active_tree(w, slot);
    return GY_OK;
}

gy_entity gy_entity_parent(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return gy_entity_null();
    uint32_t slot = gy_w_entity_slot(w, e);
    return slot != GY_W_NONE ? gy_w_entity_handle(w, w->ents[slot].parent) : gy_entity_null();
}

gy_entity gy_entity_first_child(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return gy_entity_null();
    uint32_t slot = gy_w_entity_slot(w, e);
    return slot != GY_W_NONE ? gy_w_entity_handle(w, w->ents[slot].first_child) : gy_entity_null();
}

gy_entity gy_entity_next_sibling(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return gy_entity_null();
    uint32_t slot = gy_w_entity_slot(w, e);
    return slot != GY_W_NONE ? gy_w_entity_handle(w, w->ents[slot].next_sibling) : gy_entity_null();
}

/* ---- transforms ------------------------------------------------------------------------------ */

void gy_w_transform_unfollow(gy_world *w, uint32_t slot)
{
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (c == NULL || !gy_w_result_of(w, c)->follows)
        return;
    gy_w_result_of(w, c)->follows = false;
    w->local[slot] = gy_w_body_pose(w, c); /* a root: its world pose too */
}

/* The stored local pose, or the body's result it follows. */
static gy_pose local_pose(const gy_world *w, uint32_t slot)
{
    if (gy_w_follows_body(w, slot))
        return gy_w_body_pose(w, gy_w_body_of(w, slot));
    return w->local[slot];
}

void gy_w_mark_dirty(gy_world *w, uint32_t slot, bool game)
{
    gy_w_transform_unfollow(w, slot);
    gy_w_entity *en = &w->ents[slot];
    if (game)
        en->dirty_game = true;
    else
        en->dirty_phys = true;
    if (en->queued)
        return;
    if (gy_u32_array_push(w->alloc, &w->dirty, slot) == GY_OK)
        en->queued = true;
    else
        w->dirty_overflow = true;
}

/* World pose with "anything dirty on the path" and "game-dirty on the path" flags. */
static gy_pose world_pose_rec(const gy_world *w, uint32_t slot, bool *dirty, bool *game)
{
    const gy_w_entity *en = &w->ents[slot];
    bool pd = false, pg = false;
    gy_pose pw = gy_pose_identity();
    if (en->parent != GY_W_NONE)
        pw = world_pose_rec(w, en->parent, &pd, &pg);
    *dirty = pd || en->dirty_game || en->dirty_phys;
    *game = pg || en->dirty_game;
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (c != NULL && gy_w_result_of(w, c)->follows)
        return gy_w_body_pose(w, c); /* a root, never dirty */
    if (!*dirty)
        return *gy_w_world_of(w, slot);
    if (c != NULL && c->recorded && !*game)
        return *gy_w_world_of(w, slot);
    return en->parent != GY_W_NONE ? compose(pw, w->local[slot]) : w->local[slot];
}

gy_pose gy_w_world_pose(const gy_world *w, uint32_t slot)
{
    bool d, g;
    return world_pose_rec(w, slot, &d, &g);
}

static gy_vec3 world_scale_now(const gy_world *w, uint32_t slot)
{
    uint32_t parent = w->ents[slot].parent;
    return parent != GY_W_NONE ? gy_v3_mul(world_scale_now(w, parent), scale_of(w, slot))
                               : scale_of(w, slot);
}

/* One node of a propagation: `game` when the game moved it or an ancestor. */
static void update_node(gy_world *w, uint32_t slot, bool game)
{
    gy_w_transform_unfollow(w, slot);
    gy_w_entity *en = &w->ents[slot];
    gy_pose *local = &w->local[slot];
    gy_pose *world = gy_w_world_of(w, slot); /* a root's is `local` */
    const gy_pose *pw = en->parent != GY_W_NONE ? gy_w_world_of(w, en->parent) : NULL;
    gy_w_body *c = gy_w_body_of(w, slot);
    if (c != NULL && c->recorded && !game) {
        /* Physics drives it: its world pose stands, its local pose follows. */
        if (pw != NULL) {
            *local = gy_pose_mul(gy_pose_inverse(*pw), *world);
            local->rotation = gy_quat_normalize(local->rotation);
        }
    } else {
        gy_pose next = pw != NULL ? compose(*pw, *local) : *world;
        if (c == NULL || !c->recorded) {
            *world = next;
            return;
        }
        gy_pose was = gy_w_body_pose(w, c);
        if (pose_equal(next, was)) {
            *world = next;
            /* No teleport: a held body's held pose stays `was` (its record goes when the stored
             * pose is that, bit for bit). */
            if (w->motion[c->store].count == 0)
                (void)gy_w_body_set_held(w, c, was);
            return;
        }
        /* A held body's held pose is its stored world pose unless a side record keeps it: kept
         * there before the write, as the teleport may be refused. With no memory for the record,
         * the stored pose is written only once the teleport is recorded: refused too, the body
         * stays where it is held (its entity with it) until the game moves it again. */
        if (gy_w_body_hold_apart(w, c, 0u) != GY_OK) {
            if (gy_w_body_teleport_record(w, c, next) == GY_OK)
                *world = next;
            return;
        }
        *world = next;
        gy_w_body_teleport_record(w, c, next);
    }
}

static void visit(gy_world *w, uint32_t slot, bool game)
{
    gy_w_entity *en = &w->ents[slot];
    game = game || en->dirty_game;
    update_node(w, slot, game);
    en->dirty_game = en->dirty_phys = false;
    for (uint32_t c = en->first_child; c != GY_W_NONE; c = w->ents[c].next_sibling)
        visit(w, c, game);
}

void gy_w_propagate(gy_world *w)
{
    if (w->dirty.count == 0 && !w->dirty_overflow)
        return;
    if (w->dirty_overflow) {
        for (uint32_t r = w->first_root; r != GY_W_NONE; r = w->ents[r].next_sibling)
            visit(w, r, false);
    } else {
        for (uint32_t i = 0; i < w->dirty.count; i++) {
            uint32_t slot = w->dirty.items[i];
            gy_w_entity *en = &w->ents[slot];
            /* A visit clears the flags, so one reached from an earlier entry is skipped. */
            if (!en->live || !(en->dirty_game || en->dirty_phys))
                continue;
            /* Start from the highest dirty ancestor so parents are current before children. */
            uint32_t top = slot;
            for (uint32_t a = en->parent; a != GY_W_NONE; a = w->ents[a].parent)
                if (w->ents[a].dirty_game || w->ents[a].dirty_phys)
                    top = a;
            visit(w, top, false);
        }
    }
    for (uint32_t i = 0; i < w->dirty.count; i++)
        w->ents[w->dirty.items[i]].queued = false;
    w->dirty.count = 0;
    w->dirty_overflow = false;
}

void gy_world_update_transforms(gy_world *w)
{
    if (gy_w_enter(w, __func__) != GY_OK)
        return;
    if (w != NULL)
        gy_w_propagate(w);
}

static gy_result set_local(gy_world *w, gy_entity e, const gy_vec3 *position,
                           const gy_quat *rotation, const gy_vec3 *scale)
{
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    gy_result r = position != NULL ? gy_validate_vector(*position, GY_MAX_MAGNITUDE) : GY_OK;
    if (r == GY_OK && rotation != NULL)
        r = check_rotation(*rotation);
    if (r == GY_OK && scale != NULL)
        r = check_scale(*scale);
    /* A held root body's held pose is read from its stored pose until the propagation
     * teleports it: kept apart first, as it alone (with the scale) can fail. */
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (r == GY_OK && c != NULL && w->ents[slot].parent == GY_W_NONE &&
        (position != NULL || rotation != NULL))
        r = gy_w_body_hold_apart(w, c, 1u);
    if (r == GY_OK && scale != NULL)
        r = set_scale(w, slot, *scale); /* first: it alone can fail (out of memory) */
    if (r != GY_OK)
        return r;
    gy_w_transform_unfollow(w, slot);
    gy_pose *local = &w->local[slot];
    if (position != NULL)
        local->position = *position;
    if (rotation != NULL)
        local->rotation = gy_quat_normalize(*rotation);
    gy_w_mark_dirty(w, slot, true);
    return GY_OK;
}

gy_result gy_entity_set_local_position(gy_world *w, gy_entity e, gy_vec3 position)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return set_local(w, e, &position, NULL, NULL);
}

gy_result gy_entity_set_local_rotation(gy_world *w, gy_entity e, gy_quat rotation)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return set_local(w, e, NULL, &rotation, NULL);
}

gy_result gy_entity_set_local_scale(gy_world *w, gy_entity e, gy_vec3 scale)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return set_local(w, e, NULL, NULL, &scale);
}

gy_result gy_entity_set_local_pose(gy_world *w, gy_entity e, gy_pose pose)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return set_local(w, e, &pose.position, &pose.rotation, NULL);
}

gy_result gy_entity_set_world_pose(gy_world *w, gy_entity e, gy_pose pose)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    gy_result r = gy_validate_vector(pose.position, GY_MAX_MAGNITUDE);
    if (r == GY_OK)
        r = check_rotation(pose.rotation);
    if (r != GY_OK)
        return r;
    pose.rotation = gy_quat_normalize(pose.rotation);
    uint32_t parent = w->ents[slot].parent;
    gy_pose local = pose;
    if (parent != GY_W_NONE) {
        local = gy_pose_mul(gy_pose_inverse(gy_w_world_pose(w, parent)), pose);
        local.rotation = gy_quat_normalize(local.rotation);
    }
    return set_local(w, e, &local.position, &local.rotation, NULL);
}

gy_result gy_entity_get_local_pose(const gy_world *w, gy_entity e, gy_pose *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    *out = local_pose(w, slot);
    return GY_OK;
}

gy_result gy_entity_get_local_scale(const gy_world *w, gy_entity e, gy_vec3 *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    *out = scale_of(w, slot);
    return GY_OK;
}

gy_result gy_entity_get_world_pose(const gy_world *w, gy_entity e, gy_pose *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    *out = gy_w_world_pose(w, slot);
    return GY_OK;
}

gy_result gy_entity_get_world_scale(const gy_world *w, gy_entity e, gy_vec3 *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    *out = world_scale_now(w, slot);
    return GY_OK;
}

/* ---- render poses ---------------------------------------------------------------------------- */

gy_pose gy_w_render_pose(const gy_world *w, uint32_t slot)
{
    const gy_w_body *c = gy_w_body_of(w, slot);
    if (c != NULL && c->recorded)
        return gy_w_render_body(w, c);
    uint32_t parent = w->ents[slot].parent;
    gy_pose local = local_pose(w, slot);
    return parent != GY_W_NONE ? compose(gy_w_render_pose(w, parent), local) : local;
}

gy_result gy_entity_get_render_pose(const gy_world *w, gy_entity e, gy_pose *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot = gy_w_entity_slot(w, e);
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    *out = gy_w_render_pose(w, slot);
    return GY_OK;
}

/* ---- callbacks ------------------------------------------------------------------------------- */

/* Sets the entity's body event callback (`body`) or its collision callback to the one in `want`.
 * The cold record is made for a callback set, and given back once it holds nothing. */
static gy_result set_callback(gy_world *w, gy_entity e, const gy_w_entity_cold *want, bool body)
{
    uint32_t slot = gy_w_entity_slot(w, e);
    if (slot == GY_W_NONE)
        return w == NULL ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE;
    bool setting = body ? want->on_body_event != NULL : want->on_collision != NULL;
    gy_w_entity_cold *c = setting ? gy_w_cold_get(w, slot) : gy_w_cold_of(w, slot);
    if (c == NULL)
        return setting ? GY_ERR_OUT_OF_MEMORY : GY_OK;
    if (body) {
        c->on_body_event = want->on_body_event;
        c->body_event_ctx = want->body_event_ctx;
    } else {
        c->on_collision = want->on_collision;
        c->collision_ctx = want->collision_ctx;
    }
    gy_w_cold_trim(w, slot, false);
    return GY_OK;
}

gy_result gy_entity_set_collision_callback(gy_world *w, gy_entity e, gy_collision_fn fn, void *ctx)
{
    gy_result r = gy_w_enter(w, __func__);
    gy_w_entity_cold want = {.on_collision = fn, .collision_ctx = fn != NULL ? ctx : NULL};
    return r == GY_OK ? set_callback(w, e, &want, false) : r;
}

gy_result gy_entity_set_body_callback(gy_world *w, gy_entity e, gy_body_event_fn fn, void *ctx)
{
    gy_result r = gy_w_enter(w, __func__);
    gy_w_entity_cold want = {.on_body_event = fn, .body_event_ctx = fn != NULL ? ctx : NULL};
    return r == GY_OK ? set_callback(w, e, &want, true) : r;
}

/* ---- thread ownership ------------------------------------------------------------------------ */

/* pthread_t is an opaque type: the generic __atomic builtins copy it whole. */
static pthread_t load_thread(const pthread_t *t)
{
    pthread_t v;
    __atomic_load(t, &v, __ATOMIC_RELAXED);
    return v;
}

static void store_thread(pthread_t *t, pthread_t v)
{
    __atomic_store(t, &v, __ATOMIC_RELAXED);
}

static bool is_owner(const gy_world *w, pthread_t me)
{
    return __atomic_load_n(&w->owner_state, __ATOMIC_ACQUIRE) == GY_W_OWNED &&
           pthread_equal(load_thread(&w->owner), me);
}

/* Another thread may see the flag set by a writer that is not itself: it then compares the
 * holder's id with its own and finds it different, which is the right answer. Only the holder
 * can find its own id there. */
static bool is_writer(const gy_world *w, pthread_t me)
{
    return __atomic_load_n(&w->writer_held, __ATOMIC_ACQUIRE) != 0 &&
           pthread_equal(load_thread(&w->writer), me);
}

/* readers[] index of the calling thread's read hold, or GY_W_MAX_READERS. */
static uint32_t reader_slot(const gy_world *w, pthread_t me)
{
    uint32_t ready = __atomic_load_n(&w->reader_ready, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; ready != 0; i++, ready >>= 1)
        if ((ready & 1u) && pthread_equal(load_thread(&w->readers[i]), me))
            return i;
    return GY_W_MAX_READERS;
}

static gy_result refuse(const gy_world *w, const char *fn)
{
    gy_world *mw = (gy_world *)w; /* the refusal counters are atomics any thread may bump */
    __atomic_fetch_add(&mw->wrong_thread_calls, 1, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&mw->wrong_thread_logged, 1u, __ATOMIC_RELAXED) == 0)
        gy_log(w->logger, GY_LOG_ERROR,
               "world: %s called from a thread that does not own the World (and holds no World "
               "lock): refused with GY_ERR_WRONG_THREAD; further refusals are only counted",
               fn);
    return GY_ERR_WRONG_THREAD;
}

gy_result gy_w_enter(const gy_world *w, const char *fn)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_t me = pthread_self();
    if (is_owner(w, me) || is_writer(w, me))
        return GY_OK;
    return refuse(w, fn);
}

gy_result gy_w_enter_read(const gy_world *w, const char *fn)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_t me = pthread_self();
    if (is_owner(w, me) || is_writer(w, me) || reader_slot(w, me) != GY_W_MAX_READERS)
        return GY_OK;
    return refuse(w, fn);
}

static bool holds_lock(const gy_world *w, pthread_t me)
{
    return is_writer(w, me) || reader_slot(w, me) != GY_W_MAX_READERS;
}

gy_result gy_world_release_ownership(gy_world *w)
{
    gy_result r = gy_w_enter(w, __func__);
    if (r != GY_OK)
        return r;
    pthread_t me = pthread_self();
    if (!is_owner(w, me))
        return GY_ERR_WRONG_THREAD; /* a tool holding the write lock cannot give it away */
    if (gy_w_in_dispatch(w) || holds_lock(w, me))
        return GY_ERR_MISUSE;
    __atomic_store_n(&w->owner_state, (uint32_t)GY_W_UNOWNED, __ATOMIC_RELEASE);
    return GY_OK;
}

gy_result gy_world_take_ownership(gy_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t expected = GY_W_UNOWNED;
    if (!__atomic_compare_exchange_n(&w->owner_state, &expected, (uint32_t)GY_W_CLAIMING, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return GY_ERR_BUSY;
    store_thread(&w->owner, pthread_self());
    __atomic_store_n(&w->owner_state, (uint32_t)GY_W_OWNED, __ATOMIC_RELEASE);
    return GY_OK;
}

/* ---- the World lock -------------------------------------------------------------------------- */

static gy_result lock_error(int e)
{
    return e == EAGAIN ? GY_ERR_BUSY : GY_ERR_MISUSE; /* EDEADLK, EINVAL */
}

gy_result gy_world_lock_read(gy_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_t me = pthread_self();
    if (holds_lock(w, me))
        return GY_ERR_MISUSE; /* would deadlock (glibc does not detect a reader re-taking it) */
    uint32_t slots = __atomic_load_n(&w->reader_slots, __ATOMIC_RELAXED), slot;
    do {
        if (slots == UINT32_MAX)
            return GY_ERR_BUSY;
        slot = (uint32_t)__builtin_ctz(~slots);
    } while (!__atomic_compare_exchange_n(&w->reader_slots, &slots, slots | (1u << slot), true,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    int e = pthread_rwlock_rdlock(&w->lock);
    if (e != 0) {
        __atomic_fetch_and(&w->reader_slots, ~(1u << slot), __ATOMIC_RELEASE);
        return lock_error(e);
    }
    store_thread(&w->readers[slot], me);
    __atomic_fetch_or(&w->reader_ready, 1u << slot, __ATOMIC_RELEASE);
    gy_world_lock_note_acquired();
    return GY_OK;
}

gy_result gy_world_unlock_read(gy_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t slot = reader_slot(w, pthread_self());
    if (slot == GY_W_MAX_READERS)
        return GY_ERR_MISUSE;
    gy_world_lock_note_released();
    __atomic_fetch_and(&w->reader_ready, ~(1u << slot), __ATOMIC_RELEASE);
    __atomic_fetch_and(&w->reader_slots, ~(1u << slot), __ATOMIC_RELEASE);
    int e = pthread_rwlock_unlock(&w->lock);
    return e == 0 ? GY_OK : lock_error(e);
}

gy_result gy_world_lock_write(gy_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_t me = pthread_self();
    if (holds_lock(w, me))
        return GY_ERR_MISUSE;
    int e = pthread_rwlock_wrlock(&w->lock);
    if (e != 0)
        return lock_error(e);
    store_thread(&w->writer, me);
    __atomic_store_n(&w->writer_held, 1u, __ATOMIC_RELEASE);
    gy_world_lock_note_acquired();
    return GY_OK;
}

gy_result gy_world_unlock_write(gy_world *w)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    /* Inside gy_world_tick the hold is the tick's (only the writer itself reads in_tick). */
    if (!is_writer(w, pthread_self()) || w->in_tick)
        return GY_ERR_MISUSE;
    gy_world_lock_note_released();
    __atomic_store_n(&w->writer_held, 0u, __ATOMIC_RELEASE);
    int e = pthread_rwlock_unlock(&w->lock);
    return e == 0 ? GY_OK : lock_error(e);
}

/* ---- counters -------------------------------------------------------------------------------- */

void gy_world_get_stats(const gy_world *w, gy_world_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (w == NULL || gy_w_enter_read(w, __func__) != GY_OK)
        return;
    *out = w->stats;
    out->wrong_thread_calls = __atomic_load_n(&w->wrong_thread_calls, __ATOMIC_RELAXED);
    out->entities = w->ent_live;
    out->bodies = w->bodies.count;
    out->bodies_tracked = w->tracked.count;
    for (uint32_t d = 0; d < w->bodies.count; d++) {
        const gy_w_body *c = gy_w_store_at(&w->bodies, d);
        out->bodies_effective += w->ents[gy_w_body_slot(w, c)].active_h && c->is_active;
        out->bodies_failed += c->failed;
    }
    out->joints = w->joint_pool.live;
    out->touching_pairs = w->pair_count;
    gy_obj_cache_stats oc = gy_obj_cache_get_stats(w->obj_cache);
    out->obj_parses = oc.parses;
    out->obj_hits = oc.hits;
    out->obj_entries = oc.entries;
}
