/* Physics components: validation and the owned copy of the authored description, the body's
 * lifecycle (effective enable, body refs, store indices), the writes games make, the state they
 * read, and the bootstrap a hard start rebuilds the world from. */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gyre/geometry.h"
#include "world_internal.h"

/* ---- descriptions ---------------------------------------------------------------------------- */

gy_physics_component_def gy_default_physics_component_def(void)
{
    gy_physics_component_def d;
    memset(&d, 0, sizeof d);
    d.body_type = GY_BODY_DYNAMIC;
    d.is_active = true;
    d.body = gy_default_body_def();
    d.max_slope = GY_PI / 4.0;
    d.step_offset = 0.3;
    return d;
}

static gy_motion_type motion_of(gy_body_type t)
{
    switch (t) {
    case GY_BODY_STATIC:
    case GY_BODY_TRIGGER:
        return GY_MOTION_STATIC;
    case GY_BODY_KINEMATIC:
        return GY_MOTION_KINEMATIC;
    default:
        return GY_MOTION_DYNAMIC;
    }
}

static bool is_resource_shape(gy_shape_type t)
{
    return t == GY_SHAPE_HULL || t == GY_SHAPE_MESH;
}

/* Logs why a description was refused, naming the field, and returns `r`. */
static gy_result refuse(const gy_world *w, const char *op, uint32_t slot, gy_result r,
                        const char *field, const char *why)
{
    const char *name = gy_w_entity_name(w, slot);
    gy_log(w->logger, GY_LOG_ERROR, "world: %s on entity '%s': %s: %s", op, name, field, why);
    return r;
}

static bool vec_is_zero(gy_vec3 v)
{
    return v.x == 0.0 && v.y == 0.0 && v.z == 0.0;
}

/* Every field of a description either acts or is refused: these are the ones the body type (or
 * the World placing bodies by their entities) would otherwise leave unread. Called after the
 * type is known to be valid. */
static gy_result check_unread_fields(const gy_world *w, const gy_physics_component_def *d,
                                     gy_motion_type m, const char *op, uint32_t slot)
{
    const gy_result bad = GY_ERR_INVALID_ARGUMENT;
    const gy_body_def *b = &d->body;
    const gy_body_def def = gy_default_body_def();
    if (b->type != GY_MOTION_DYNAMIC && b->type != m)
        return refuse(w, op, slot, bad, "body.type",
                      "not read (body_type decides the motion); leave it at its default");
    gy_pose id = gy_pose_identity();
    if (memcmp(&b->pose, &id, sizeof id) != 0)
        return refuse(w, op, slot, bad, "body.pose",
                      "not read (the entity's world pose places the body); leave it at identity");
    if (m == GY_MOTION_STATIC &&
        (!vec_is_zero(b->linear_velocity) || !vec_is_zero(b->angular_velocity)))
        return refuse(w, op, slot, bad,
                      vec_is_zero(b->linear_velocity) ? "body.angular_velocity"
                                                      : "body.linear_velocity",
                      "a Static or Trigger body does not move");
    if (m != GY_MOTION_DYNAMIC) {
        static const char why[] = "only a Dynamic body has it";
        if (b->mass != def.mass)
            return refuse(w, op, slot, bad, "body.mass", why);
        if (b->has_mass_properties)
            return refuse(w, op, slot, bad, "body.mass_properties", why);
        if (b->linear_damping != def.linear_damping)
            return refuse(w, op, slot, bad, "body.linear_damping", why);
        if (b->angular_damping != def.angular_damping)
            return refuse(w, op, slot, bad, "body.angular_damping", why);
        if (b->gravity_factor != def.gravity_factor)
            return refuse(w, op, slot, bad, "body.gravity_factor", why);
        if (b->allow_sleeping != def.allow_sleeping)
            return refuse(w, op, slot, bad, "body.allow_sleeping", why);
        if (d->start_asleep)
            return refuse(w, op, slot, bad, "start_asleep", why);
        if (b->continuous)
            return refuse(w, op, slot, bad, "body.continuous", why);
        for (int k = 0; k < 3; k++) {
            if (b->lock_linear[k])
                return refuse(w, op, slot, bad, "body.lock_linear", why);
            if (b->lock_angular[k])
                return refuse(w, op, slot, bad, "body.lock_angular", why);
        }
    }
    gy_physics_component_def dd = gy_default_physics_component_def();
    if (!d->is_character && d->max_slope != dd.max_slope)
        return refuse(w, op, slot, bad, "max_slope", "only a character (is_character) has it");
    if (!d->is_character && d->step_offset != dd.step_offset)
        return refuse(w, op, slot, bad, "step_offset", "only a character (is_character) has it");
    for (uint32_t i = 0; i < d->collider_count; i++) {
        const gy_scene_collider *c = &d->colliders[i];
        bool data = c->vertices != NULL || c->vertex_count != 0 || c->indices != NULL ||
                    c->index_count != 0;
        if (!data)
            continue;
        char field[64];
        snprintf(field, sizeof field, "colliders[%u].vertices", i);
        if (!is_resource_shape(c->def.shape.type))
            return refuse(w, op, slot, bad, field, "only Hull and Mesh shapes take vertices");
        if (c->def.shape.resource.bits != 0)
            return refuse(w, op, slot, bad, field,
                          "given with a geometry id in def.shape.resource: give one or the other");
        if (c->def.shape.type == GY_SHAPE_HULL && (c->indices != NULL || c->index_count != 0)) {
            snprintf(field, sizeof field, "colliders[%u].indices", i);
            return refuse(w, op, slot, bad, field, "a Hull takes points only");
        }
    }
    return GY_OK;
}

static gy_result validate_desc(const gy_world *w, const gy_physics_component_def *d,
                               gy_motion_type *motion, const char *op, uint32_t slot)
{
    if (d == NULL || (unsigned)d->body_type >= GY_BODY_TYPE_COUNT || d->colliders == NULL ||
        d->collider_count == 0 || d->collider_count > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    gy_motion_type m = motion_of(d->body_type);
    if (!gy_is_finite(d->max_slope) || !gy_is_finite(d->step_offset))
        return GY_ERR_NON_FINITE;
    gy_result unread = check_unread_fields(w, d, m, op, slot);
    if (unread != GY_OK)
        return unread;
    gy_character_def cs;
    if (d->is_character && (m != GY_MOTION_KINEMATIC || gy_w_character_def(d, &cs) != GY_OK))
        return GY_ERR_INVALID_ARGUMENT;
    gy_body_def b = d->body;
    b.type = m;
    b.pose = gy_pose_identity();
    gy_result r = gy_validate_body_def(&b);
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < d->collider_count; i++) {
        const gy_scene_collider *sc = &d->colliders[i];
        gy_collider_def c = sc->def;
        if (is_resource_shape(c.shape.type)) {
            bool mesh = c.shape.type == GY_SHAPE_MESH;
            if (c.shape.resource.bits != 0) {
                const gy_w_geometry *g = gy_w_geometry_get(w, c.shape.resource.bits);
                if (g == NULL)
                    return GY_ERR_STALE_HANDLE;
                if (g->is_mesh != mesh)
                    return GY_ERR_INVALID_MESH;
            } else if (mesh) {
                gy_mesh_def md = {sc->vertices, sc->vertex_count, sc->indices, sc->index_count};
                r = gy_validate_mesh_def(&md);
            } else {
                gy_hull_def hd = {sc->vertices, sc->vertex_count};
                r = gy_validate_hull_def(&hd);
            }
            if (r != GY_OK)
                return r;
            c.shape.resource.bits = 1; /* resolved above; lets the shared check run */
        }
        r = gy_validate_collider_def(&c, m);
        if (r != GY_OK)
            return r;
    }
    *motion = m;
    return GY_OK;
}

/* The entity's world pose as a body would be created at: composed up the hierarchy, a position
 * can leave the range every local one is held to. Checked whether physics runs or not, so a
 * stopped World accepts exactly what a running one does. */
static gy_result check_placement(const gy_world *w, uint32_t slot)
{
    return gy_validate_pose(gy_w_world_pose(w, slot));
}

static void unpin_cols(gy_world *w, const gy_scene_collider *cols, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (is_resource_shape(cols[i].def.shape.type) && cols[i].def.shape.resource.bits != 0)
            gy_w_geometry_unpin(w, cols[i].def.shape.resource.bits);
}

/* ---- descriptions (gy_w_def) ------------------------------------------------------------------
 */

/* The stored description is built field by field over zeroed memory, so its padding is zero and
 * two equal descriptions are equal bytes (what the table compares). A field added to one of these
 * structs must be copied below. */
_Static_assert(sizeof(gy_collider_def) == 264, "canon_collider copies every collider field");
_Static_assert(sizeof(gy_body_def) == 264, "canon_desc copies every body field");
_Static_assert(sizeof(gy_physics_component_def) == 312,
               "canon_desc copies every description field");

static void canon_collider(gy_collider_def *d, const gy_collider_def *s)
{
    d->shape.type = s->shape.type;
    d->shape.radius = s->shape.radius;
    d->shape.height = s->shape.height;
    d->shape.box_size = s->shape.box_size;
    d->shape.normal = s->shape.normal;
    d->shape.offset = s->shape.offset;
    d->shape.resource = s->shape.resource;
    d->local_pose = s->local_pose;
    d->density = s->density;
    d->material = s->material;
    d->is_sensor = s->is_sensor;
    d->contact_response = s->contact_response;
    d->surface_velocity = s->surface_velocity;
    d->one_way = s->one_way;
    d->one_way_normal = s->one_way_normal;
    d->one_way_slop = s->one_way_slop;
    d->category = s->category;
    d->mask = s->mask;
    d->user_data = s->user_data;
}

/* All but the colliders, is_active and body.user_data (the component's). */
static void canon_desc(gy_physics_component_def *d, const gy_physics_component_def *s)
{
    const gy_body_def *sb = &s->body;
    gy_body_def *b = &d->body;
    d->body_type = s->body_type;
    d->is_active = true;
    b->type = sb->type;
    b->pose = sb->pose;
    b->linear_velocity = sb->linear_velocity;
    b->angular_velocity = sb->angular_velocity;
    b->mass = sb->mass;
    b->has_mass_properties = sb->has_mass_properties;
    b->mass_properties = sb->mass_properties;
    b->linear_damping = sb->linear_damping;
    b->angular_damping = sb->angular_damping;
    b->gravity_factor = sb->gravity_factor;
    b->allow_sleeping = sb->allow_sleeping;
    b->continuous = sb->continuous;
    memcpy(b->lock_linear, sb->lock_linear, sizeof b->lock_linear);
    memcpy(b->lock_angular, sb->lock_angular, sizeof b->lock_angular);
    d->start_asleep = s->start_asleep;
    d->is_character = s->is_character;
    d->max_slope = s->max_slope;
    d->step_offset = s->step_offset;
    d->collider_count = s->collider_count;
}

static size_t def_bytes(uint32_t colliders, bool character)
{
    return sizeof(gy_w_def) + (size_t)colliders * sizeof(gy_scene_collider) +
           (character ? sizeof(gy_w_character_state) : 0);
}

static size_t def_size(const gy_w_def *f)
{
    return def_bytes(f->desc.collider_count, f->desc.is_character);
}

/* FNV-1a over what def_same compares. */
static uint64_t def_hash(const gy_w_def *f)
{
    uint64_t h = 14695981039346656037u;
    const unsigned char *p = (const unsigned char *)&f->desc;
    for (size_t i = 0; i < offsetof(gy_physics_component_def, colliders); i++)
        h = (h ^ p[i]) * 1099511628211u;
    p = (const unsigned char *)f->desc.colliders;
    for (size_t i = 0; i < (size_t)f->desc.collider_count * sizeof(gy_scene_collider); i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static bool def_same(const gy_w_def *a, const gy_w_def *b)
{
    const gy_physics_component_def *x = &a->desc, *y = &b->desc;
    return x->collider_count == y->collider_count &&
           memcmp(x, y, offsetof(gy_physics_component_def, colliders)) == 0 &&
           memcmp(x->colliders, y->colliders, (size_t)x->collider_count * sizeof *x->colliders) ==
               0;
}

static void def_unshare(gy_world *w, gy_w_def *f)
{
    if (!f->shared)
        return;
    uint64_t *first = gy_hash_map_find(&w->defs, gy_map_key_of(f->hash));
    assert(first != NULL);
    if ((gy_w_def *)(uintptr_t)*first == f) {
        if (f->next != NULL)
            *first = (uintptr_t)f->next;
        else
            gy_hash_map_remove(&w->defs, gy_map_key_of(f->hash), NULL);
    } else {
        gy_w_def *o = (gy_w_def *)(uintptr_t)*first;
        while (o->next != f)
            o = o->next;
        o->next = f->next;
    }
    f->next = NULL;
    f->shared = false;
}

/* The stored copy of `d`: hull and mesh colliders name World geometry (built here from inline
 * vertices, shared between colliders that give the same arrays) and pin it; a character's state
 * (zeroed: no reply yet) follows the colliders. A description that needs neither is looked up in
 * the table first, and one already stored is shared. */
static gy_result def_create(gy_world *w, const gy_physics_component_def *d, gy_w_def **out)
{
    uint32_t n = d->collider_count;
    size_t bytes = def_bytes(n, d->is_character);
    gy_w_def *f = gy_alloc(w->alloc, bytes);
    if (f == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memset(f, 0, bytes);
    f->refs = 1;
    canon_desc(&f->desc, d);
    gy_scene_collider *cols = (gy_scene_collider *)(void *)(f + 1);
    f->desc.colliders = cols;
    bool trigger = d->body_type == GY_BODY_TRIGGER, shareable = !d->is_character;
    for (uint32_t i = 0; i < n; i++) {
        const gy_scene_collider *src = &d->colliders[i];
        gy_scene_collider *c = &cols[i];
        canon_collider(&c->def, &src->def);
        if (trigger)
            c->def.is_sensor = true;
        if (!is_resource_shape(c->def.shape.type)) {
            c->def.shape.resource.bits = 0;
            continue;
        }
        shareable = false; /* its pins are counted per component */
        uint64_t h = src->def.shape.resource.bits;
        bool inline_data = h == 0;
        if (inline_data) {
            for (uint32_t j = 0; j < i && h == 0; j++) {
                const gy_scene_collider *o = &d->colliders[j];
                if (o->def.shape.type == src->def.shape.type && o->def.shape.resource.bits == 0 &&
                    o->vertices == src->vertices && o->vertex_count == src->vertex_count &&
                    o->indices == src->indices && o->index_count == src->index_count)
                    h = cols[j].def.shape.resource.bits;
            }
        }
        if (h == 0) {
            gy_result r =
                gy_w_geometry_create(w, src->def.shape.type == GY_SHAPE_MESH, src->vertices,
                                     src->vertex_count, src->indices, src->index_count, &h);
            if (r != GY_OK) {
                unpin_cols(w, cols, i);
                gy_free(w->alloc, f, bytes);
                return r;
            }
            gy_w_geometry_pin(w, h);
            /* The component is its only owner. */
            gy_geometry g = {h};
            gy_geometry_release(w, g);
        } else {
            gy_w_geometry_pin(w, h);
        }
        c->def.shape.resource.bits = h;
    }
    if (shareable) {
        f->hash = def_hash(f);
        uint64_t *first;
        bool inserted;
        /* Out of memory: the description stays private, which costs memory and nothing else. */
        if (gy_hash_map_upsert(&w->defs, gy_map_key_of(f->hash), &first, &inserted) == GY_OK) {
            for (gy_w_def *o = inserted ? NULL : (gy_w_def *)(uintptr_t)*first; o != NULL;
                 o = o->next) {
                if (def_same(o, f)) {
                    o->refs++;
                    gy_free(w->alloc, f, bytes);
                    *out = o;
                    return GY_OK;
                }
            }
            f->next = inserted ? NULL : (gy_w_def *)(uintptr_t)*first;
            *first = (uintptr_t)f;
            f->shared = true;
        }
    }
    *out = f;
    return GY_OK;
}

static void def_release(gy_world *w, gy_w_def *f)
{
    if (f == NULL || --f->refs > 0)
        return;
    def_unshare(w, f);
    unpin_cols(w, f->desc.colliders, f->desc.collider_count);
    gy_free(w->alloc, f, def_size(f));
}

/* The component's description made its own before it changes it (a shared one is copied).
 * GY_ERR_OUT_OF_MEMORY changes nothing. */
static gy_result def_own(gy_world *w, gy_w_body *c)
{
    gy_w_def *f = c->def;
    if (f->refs == 1) {
        def_unshare(w, f);
        return GY_OK;
    }
    size_t bytes = def_size(f);
    gy_w_def *copy = gy_alloc(w->alloc, bytes);
    if (copy == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memcpy(copy, f, bytes); /* shared ones name no geometry: nothing to pin */
    copy->desc.colliders = (gy_scene_collider *)(void *)(copy + 1);
    copy->next = NULL;
    copy->refs = 1;
    copy->shared = false;
    f->refs--;
    c->def = copy;
    return GY_OK;
}

/* ---- the host's user data -------------------------------------------------------------------- */

/* Room for one more value, taken before anything changes, so storing it cannot fail later. */
static gy_result user_data_reserve(gy_world *w, uint64_t value)
{
    return value != 0 ? gy_hash_map_reserve(&w->user_data, w->user_data.count + 1u) : GY_OK;
}

/* Stores the component's value (room reserved by user_data_reserve); 0 is stored as no entry, so
 * a store index given back (remove_component stores 0) leaves nothing for its next owner. */
static void user_data_set(gy_world *w, const gy_w_body *c, uint64_t value)
{
    gy_map_key key = gy_map_key_of(c->store);
    if (value == 0) {
        gy_hash_map_remove(&w->user_data, key, NULL);
        return;
    }
    gy_result r = gy_hash_map_put(&w->user_data, key, value);
    assert(r == GY_OK);
    (void)r;
}

static uint64_t user_data_of(const gy_world *w, const gy_w_body *c)
{
    const uint64_t *v = gy_hash_map_find(&w->user_data, gy_map_key_of(c->store));
    return v != NULL ? *v : 0u;
}

static uint32_t body_entity(const void *ctx, const void *component)
{
    return gy_w_body_slot(ctx, component);
}

void gy_w_bodies_init(gy_world *w)
{
    gy_w_store_init_named(&w->bodies, sizeof(gy_w_body), body_entity, w);
}

void gy_w_bodies_fini(gy_world *w)
{
    for (uint32_t d = w->bodies.count; d-- > 0;) {
        gy_w_def *f = ((gy_w_body *)gy_w_store_at(&w->bodies, d))->def;
        if (f != NULL && --f->refs == 0)
            gy_free(w->alloc, f, def_size(f));
    }
    gy_hash_map_fini(&w->defs);
    gy_hash_map_fini(&w->user_data);
    gy_hash_map_fini(&w->ref_store);
}

/* ---- store indices --------------------------------------------------------------------------- */

static gy_result take_store_index(gy_world *w, uint32_t slot, uint32_t *out)
{
    uint32_t idx;
    if (w->store_free != GY_W_NONE) {
        idx = w->store_free;
        uint32_t next = w->store_owner[idx] & ~GY_W_STORE_FREE;
        w->store_free = next == (GY_W_NONE & ~GY_W_STORE_FREE) ? GY_W_NONE : next;
    } else {
        if (w->store_high >= GY_PHYSICS_MAX_STORE_INDEX)
            return GY_ERR_CAPACITY;
        gy_result r = gy_w_grow(w->alloc, (void **)&w->store_owner, &w->store_capacity,
                                w->store_high + 1u, sizeof *w->store_owner);
        if (r == GY_OK)
            r = gy_w_grow(w->alloc, (void **)&w->results, &w->results_capacity, w->store_high + 1u,
                          sizeof *w->results);
        if (r == GY_OK)
            r = gy_w_grow(w->alloc, (void **)&w->results_rare, &w->results_rare_capacity,
                          w->store_high + 1u, sizeof *w->results_rare);
        if (r == GY_OK)
            r = gy_w_render_reserve(w, 0u, w->store_high + 1u); /* moved lists: reserve_moved */
        if (r != GY_OK)
            return r;
        idx = w->store_high++;
    }
    w->store_owner[idx] = slot;
    memset(&w->results[idx], 0, sizeof w->results[idx]);
    memset(&w->results_rare[idx], 0, sizeof w->results_rare[idx]);
    w->results_rare[idx].tracked_at = w->results[idx].moved_at = GY_W_NONE;
    gy_w_render_claim(w, idx, slot);
    *out = idx;
    return GY_OK;
}

/* Maps the index of a ref just issued to store index `s` when they differ (gy_w_body_by_ref);
 * GY_ERR_OUT_OF_MEMORY when the map could not grow (never with room for one more reserved). */
static gy_result ref_store_set(gy_world *w, gy_physics_body_ref ref, uint32_t s)
{
    if (ref.index == s) {
        gy_hash_map_remove(&w->ref_store, gy_map_key_of(ref.index), NULL);
        return GY_OK;
    }
    return gy_hash_map_put(&w->ref_store, gy_map_key_of(ref.index), s);
}

/* Forgets the mapping of a released ref's index (if it is the component's). */
static void ref_store_drop(gy_world *w, const gy_w_body *c)
{
    const uint64_t *s = gy_hash_map_find(&w->ref_store, gy_map_key_of(c->ref.index));
    if (s != NULL && *s == c->store)
        gy_hash_map_remove(&w->ref_store, gy_map_key_of(c->ref.index), NULL);
}

static void give_store_index(gy_world *w, uint32_t idx)
{
    gy_w_render_release(w, idx);
    w->store_owner[idx] = GY_W_STORE_FREE | w->store_free;
    w->store_free = idx;
}

/* ---- the capture and sync lists ----------------------------------------------------------------
 */

/* The lists only moving bodies enter (the sync's moved list and the render side's lists of moved
 * bodies) hold `movers` components whose motion is not Static, and those a change made Static
 * while they were listed (such a change comes with `movers` one less): a static level pays
 * nothing for them. */
static gy_result reserve_moved(gy_world *w, uint32_t movers)
{
    if (movers >= GY_W_NO_MOVER)
        return GY_ERR_CAPACITY;
    uint32_t need = movers + w->moved.count;
    gy_result r = gy_w_grow(w->alloc, (void **)&w->moved.items, &w->moved.capacity, need,
                            sizeof *w->moved.items);
    if (r == GY_OK)
        r = gy_w_grow(w->alloc, (void **)&w->velocities, &w->velocities_capacity, need,
                      sizeof *w->velocities);
    if (r == GY_OK)
        r = gy_w_render_reserve(w, need, w->store_high);
    return r;
}

/* Both lists are index sets over store indices: each component's record knows its index, so
 * leaving is a swap-remove. Capacity is reserved at add: the tracked list for every component,
 * the moved list for the moving ones (reserve_moved). */
static gy_result reserve_lists(gy_world *w, uint32_t bodies, uint32_t movers)
{
    gy_result r = gy_w_grow(w->alloc, (void **)&w->tracked.items, &w->tracked.capacity, bodies,
                            sizeof *w->tracked.items);
    return r == GY_OK ? reserve_moved(w, movers) : r;
}

/* The capture and sync lists are index sets: each body keeps its position in the list (the
 * tracked list's in its rare record, the moved list's in its result record), so leaving one is a
 * swap with the last entry. */
enum set_field { SET_TRACKED, SET_MOVED };

static uint32_t *set_pos(gy_world *w, uint32_t store_index, enum set_field at_field)
{
    return at_field == SET_TRACKED ? &w->results_rare[store_index].tracked_at
                                   : &w->results[store_index].moved_at;
}

/* A body is in a set when the entry at its index names it, so a set is emptied by setting its
 * count to 0 without visiting its bodies (the sync does so every tick). */
static bool set_has(const gy_u32_array *set, uint32_t store_index, uint32_t at)
{
    return at < set->count && set->items[at] == store_index;
}

static void set_add(gy_world *w, gy_u32_array *set, uint32_t store_index, enum set_field at_field)
{
    uint32_t *at = set_pos(w, store_index, at_field);
    if (set_has(set, store_index, *at))
        return;
    assert(set->count < set->capacity);
    *at = set->count;
    set->items[set->count++] = store_index;
}

static void set_remove(gy_world *w, gy_u32_array *set, uint32_t store_index,
                       enum set_field at_field)
{
    uint32_t *at = set_pos(w, store_index, at_field);
    if (!set_has(set, store_index, *at)) {
        *at = GY_W_NONE;
        return;
    }
    uint32_t last = set->items[--set->count];
    if (last != store_index) {
        set->items[*at] = last;
        *set_pos(w, last, at_field) = *at;
    }
    *at = GY_W_NONE;
}

void gy_w_body_track(gy_world *w, gy_w_body *c)
{
    /* What the capture checks proxies against, fixed while tracked: the generation and the
     * motion change only after a release, which untracks. */
    gy_w_result *st = gy_w_result_of(w, c);
    st->generation = c->ref.generation;
    st->proxy = c->ref.index;
    st->is_character = c->def->desc.is_character;
    st->is_static = c->motion == GY_MOTION_STATIC;
    set_add(w, &w->tracked, c->store, SET_TRACKED);
}

void gy_w_body_untrack(gy_world *w, gy_w_body *c)
{
    set_remove(w, &w->tracked, c->store, SET_TRACKED);
}

void gy_w_body_unmark_moved(gy_world *w, gy_w_body *c)
{
    uint32_t at = w->results[c->store].moved_at;
    if (!set_has(&w->moved, c->store, at))
        at = GY_W_NONE;
    set_remove(w, &w->moved, c->store, SET_MOVED);
    if (at != GY_W_NONE && at != w->moved.count)
        w->moved_next[at] = w->moved_next[w->moved.count]; /* as set_remove moved the last */
}

void gy_w_body_settle(gy_world *w, gy_w_body *c)
{
    gy_w_body_own_state(w, c); /* no capture visits it to keep its proxy */
    c->settled = true;
    gy_w_body_untrack(w, c);
}

void gy_w_body_unsettle(gy_world *w, gy_w_body *c)
{
    if (!c->settled)
        return;
    gy_w_set_state_tick(w, c->store, w->frame_tick);
    c->settled = false;
}

/* The component at store index `s` if its body is `ref`. */
static gy_w_body *body_at_store(const gy_world *w, uint32_t s, gy_physics_body_ref ref)
{
    if (s >= w->store_high || w->store_owner[s] >= GY_W_MAX_ENTITIES)
        return NULL; /* free */
    gy_w_body *c = gy_w_body_of(w, w->store_owner[s]);
    return c != NULL && c->recorded && c->ref.generation == ref.generation &&
                   c->ref.index == ref.index
               ? c
               : NULL;
}

gy_w_body *gy_w_body_by_ref(const gy_world *w, gy_physics_body_ref ref)
{
    if (ref.generation == 0)
        return NULL;
    /* Most bodies were issued their store index. */
    gy_w_body *c = body_at_store(w, ref.index, ref);
    if (c != NULL || w->ref_store.count == 0)
        return c;
    const uint64_t *s = gy_hash_map_find(&w->ref_store, gy_map_key_of(ref.index));
    return s != NULL ? body_at_store(w, (uint32_t)*s, ref) : NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static bool effective(const gy_world *w, const gy_w_body *c)
{
    return w->ents[gy_w_body_slot(w, c)].active_h && c->is_active;
}

/* Converts the component's colliders for the physics side (geometry → resource refs; at a start
 * the index alone counts, the refs being issued by the start). */
static gy_result build_colliders(gy_world *w, const gy_w_body *c, gy_collider_def *out)
{
    for (uint32_t i = 0; i < c->def->desc.collider_count; i++) {
        out[i] = c->def->desc.colliders[i].def;
        if (is_resource_shape(out[i].shape.type)) {
            const gy_w_geometry *g = gy_w_geometry_get(w, out[i].shape.resource.bits);
            if (g == NULL)
                return GY_ERR_STALE_HANDLE; /* cannot happen while pinned */
            out[i].shape.resource.bits = gy_physics_resource_ref_bits(g->ref);
        }
    }
    return GY_OK;
}

static gy_body_def body_def_at(const gy_w_body *c, gy_pose pose)
{
    gy_body_def d = c->def->desc.body;
    d.type = c->motion;
    d.pose = pose;
    d.user_data = 0;
    return d;
}

/* The description's velocities, for a body that moves (a static's are zero). */
static void set_velocities(gy_world *w, const gy_w_body *c, const gy_physics_component_def *d)
{
    gy_w_velocity *v = gy_w_velocity_of(w, c);
    if (v != NULL) {
        v->lin = d->body.linear_velocity;
        v->ang = d->body.angular_velocity;
    }
}

static void reset_results(gy_world *w, gy_w_body *c, gy_pose pose)
{
    gy_w_body_own_state(w, c); /* the velocities are kept */
    gy_w_body_unmark_moved(w, c);
    c->settled = false;
    c->assigned = false;
    c->body.bits = 0;
    c->failed = false;
    c->error = GY_OK;
    gy_w_render_hold(w, c);
    /* Kept apart only by a create whose pose is not the stored one: record_create reserved its
     * room. */
    gy_result r = gy_w_body_set_held(w, c, pose);
    assert(r == GY_OK);
    (void)r;
    gy_w_result *st = gy_w_result_of(w, c);
    st->faulted = false;
    st->have_proxy = false;
    st->teleports_sent = st->teleports_seen = 0;
    st->awake = c->motion != GY_MOTION_STATIC;
    gy_w_set_state_tick(w, c->store, 0);
    gy_w_character_state *cs = gy_w_character_state_of(c);
    if (cs != NULL)
        memset(cs, 0, sizeof *cs); /* airborne, no ground, no reply yet */
}

static gy_result record_create(gy_world *w, gy_w_body *c)
{
    if (!gy_w_running(w))
        return GY_OK;
    gy_result r = gy_array_reserve(w->alloc, (void **)&w->col_scratch, &w->col_scratch_capacity,
                                   c->def->desc.collider_count, sizeof *w->col_scratch);
    if (r != GY_OK)
        return r;
    r = build_colliders(w, c, w->col_scratch);
    if (r != GY_OK)
        return r;
    uint32_t slot = gy_w_body_slot(w, c);
    gy_pose pose = gy_w_world_pose(w, slot);
    /* Created under a moved parent the propagation has not reached: its held pose is not the
     * stored one until then, so it needs a side record (gy_w_body_set_held). */
    if (memcmp(&pose, gy_w_world_of(w, slot), sizeof pose) != 0) {
        r = gy_w_held_reserve(w, 2u); /* and the spare (gy_w_body_hold_apart) */
        if (r != GY_OK)
            return r;
    }
    /* Room for its entry among the bodies apart from their store index (ref_store_set) before
     * the create is recorded: nothing after the record may fail. */
    r = gy_hash_map_reserve(&w->ref_store, w->ref_store.count + 1u);
    if (r != GY_OK)
        return r;
    gy_physics_body_def d;
    memset(&d, 0, sizeof d);
    d.def = body_def_at(c, pose);
    d.colliders = w->col_scratch;
    d.collider_count = c->def->desc.collider_count;
    gy_character_def cs;
    d.character = gy_w_character_of(w, c, &cs);
    d.start_asleep = c->def->desc.start_asleep;
    gy_physics_body_ref ref;
    r = gy_physics_record_create_body(w->physics, &d, &ref);
    if (r != GY_OK)
        return r;
    r = ref_store_set(w, ref, c->store); /* room reserved */
    assert(r == GY_OK);
    (void)r;
    w->stats.body_refs_issued++;
    c->ref = ref;
    c->recorded = true;
    reset_results(w, c, pose);
    gy_w_result_of(w, c)->awake = gy_w_result_of(w, c)->awake && !d.start_asleep;
    gy_w_body_track(w, c);
    set_velocities(w, c, &c->def->desc);
    return GY_OK;
}

static void record_release(gy_world *w, gy_w_body *c)
{
    if (!c->recorded)
        return;
    gy_w_body_own_state(w, c);
    gy_physics_body_ref ref = c->ref;
    uint32_t slot = gy_w_body_slot(w, c);
    ref_store_drop(w, c);
    gy_w_pairs_body_released(w, c);
    gy_w_joints_body_released(w, slot);
    gy_result r = gy_physics_record_release_body(w->physics, ref);
    if (r != GY_OK)
        gy_log(w->logger, GY_LOG_ERROR,
               "world: releasing the body of entity '%s' failed (%s); it stays until physics stops",
               gy_w_entity_name(w, slot), gy_result_message(r));
    gy_w_transform_unfollow(w, slot);
    c = gy_w_body_of(w, slot);
    /* A pose it moved to stays marked: the sync still writes the last result back. */
    gy_w_body_untrack(w, c);
    gy_w_body_unsettle(w, c);
    c->recorded = false;
    c->assigned = false;
    c->body.bits = 0;
    c->ref.generation = 0;
    c->failed = false;
    gy_w_result_of(w, c)->have_proxy = false;
    gy_w_result_of(w, c)->faulted = false;
}

gy_result gy_w_body_refresh(gy_world *w, uint32_t slot)
{
    gy_w_body *c = gy_w_body_of(w, slot);
    if (c == NULL)
        return GY_OK;
    bool eff = effective(w, c);
    if (eff && !c->recorded)
        return record_create(w, c);
    if (!eff && c->recorded)
        record_release(w, c);
    return GY_OK;
}

gy_result gy_w_body_teleport_record(gy_world *w, gy_w_body *c, gy_pose pose)
{
    if (!c->recorded)
        return GY_OK;
    gy_result r = gy_physics_record_set_pose(w->physics, c->ref, pose);
    if (r != GY_OK) {
        gy_log(w->logger, GY_LOG_WARN, "world: teleport of entity '%s' not recorded: %s",
               gy_w_entity_name(w, gy_w_body_slot(w, c)), gy_result_message(r));
        return r;
    }
    gy_w_transform_unfollow(w, gy_w_body_slot(w, c));
    /* Proxies are refused until one shows the teleport: the state stays the last one taken. */
    gy_w_body_own_state(w, c);
    gy_w_result_of(w, c)->teleports_sent++;
    gy_w_render_hold(w, c);
    gy_w_held_drop(w, c->store); /* held at `pose`, its entity's stored world pose */
    gy_w_body_unmark_moved(w, c);
    /* Watched again until a proxy confirms the teleport. */
    gy_w_body_unsettle(w, c);
    gy_w_body_track(w, c);
    return GY_OK;
}

static void remove_component(gy_world *w, uint32_t slot)
{
    gy_w_transform_unfollow(w, slot);
    gy_w_body *c = gy_w_body_of(w, slot);
    record_release(w, c);
    c = gy_w_body_of(w, slot);
    gy_w_body_untrack(w, c);
    gy_w_body_unmark_moved(w, c);
    w->movers -= c->motion != GY_MOTION_STATIC;
    gy_w_render_mover(w, c, false);
    gy_w_def *def = c->def;
    user_data_set(w, c, 0);
    give_store_index(w, c->store);
    gy_w_store_remove(&w->bodies, slot);
    def_release(w, def);
}

void gy_w_body_destroy(gy_world *w, uint32_t slot)
{
    if (gy_w_body_of(w, slot) != NULL)
        remove_component(w, slot);
}

/* ---- the component API ----------------------------------------------------------------------- */

static gy_result entity_slot(const gy_world *w, gy_entity e, uint32_t *slot)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *slot = gy_w_entity_slot(w, e);
    return *slot == GY_W_NONE ? GY_ERR_STALE_HANDLE : GY_OK;
}

static gy_result component(const gy_world *w, gy_entity e, gy_w_body **out)
{
    uint32_t slot;
    gy_result r = entity_slot(w, e, &slot);
    if (r != GY_OK)
        return r;
    *out = gy_w_body_of(w, slot);
    return *out != NULL ? GY_OK : GY_ERR_MISUSE;
}

gy_result gy_body_add(gy_world *w, gy_entity e, const gy_physics_component_def *desc)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot;
    gy_result r = entity_slot(w, e, &slot);
    if (r != GY_OK)
        return r;
    if (gy_w_body_of(w, slot) != NULL)
        return GY_ERR_MISUSE;
    gy_motion_type motion;
    r = validate_desc(w, desc, &motion, "gy_body_add", slot);
    if (r == GY_OK)
        r = check_placement(w, slot);
    if (r == GY_OK)
        r = user_data_reserve(w, desc->body.user_data);
    if (r != GY_OK)
        return r;
    gy_w_def *def;
    r = def_create(w, desc, &def);
    if (r != GY_OK)
        return r;
    uint32_t idx;
    bool moves = motion != GY_MOTION_STATIC;
    r = reserve_lists(w, w->bodies.count + 1u, w->movers + moves);
    if (r == GY_OK)
        r = gy_w_held_reserve(w, 1u); /* the propagation's spare (gy_w_body_hold_apart) */
    if (r == GY_OK)
        r = take_store_index(w, slot, &idx);
    if (r != GY_OK) {
        def_release(w, def);
        return r;
    }
    gy_w_body *c;
    r = gy_w_store_add(&w->bodies, w->alloc, slot, (void **)&c);
    if (r != GY_OK) {
        give_store_index(w, idx);
        def_release(w, def);
        return r;
    }
    c->def = def;
    c->is_active = desc->is_active;
    c->motion = motion;
    w->movers += moves;
    c->store = idx;
    c->ref = (gy_physics_body_ref){0, 0};
    user_data_set(w, c, desc->body.user_data);
    gy_w_render_mover(w, c, moves);
    reset_results(w, c, gy_w_world_pose(w, slot));
    set_velocities(w, c, desc);
    r = gy_w_body_refresh(w, slot);
    if (r != GY_OK) {
        remove_component(w, slot);
        return r;
    }
    return GY_OK;
}

gy_result gy_body_remove(gy_world *w, gy_entity e)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    remove_component(w, gy_w_body_slot(w, c));
    return GY_OK;
}

gy_result gy_body_update(gy_world *w, gy_entity e, const gy_physics_component_def *desc)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    uint32_t slot = gy_w_body_slot(w, c);
    gy_motion_type motion;
    r = validate_desc(w, desc, &motion, "gy_body_update", slot);
    if (r == GY_OK)
        r = check_placement(w, slot);
    if (r == GY_OK && c->motion == GY_MOTION_STATIC && motion != GY_MOTION_STATIC)
        r = reserve_moved(w, w->movers + 1u);
    if (r == GY_OK)
        r = user_data_reserve(w, desc->body.user_data);
    if (r != GY_OK)
        return r;
    gy_w_def *def;
    r = def_create(w, desc, &def); /* pins the new geometry before the old is let go */
    if (r != GY_OK)
        return r;
    c = gy_w_body_of(w, slot);
    record_release(w, c);
    c = gy_w_body_of(w, slot);
    gy_w_def *old = c->def;
    c->def = def;
    c->is_active = desc->is_active;
    user_data_set(w, c, desc->body.user_data);
    w->movers += (uint32_t)(motion != GY_MOTION_STATIC) - (uint32_t)(c->motion != GY_MOTION_STATIC);
    c->motion = motion;
    gy_w_render_mover(w, c, motion != GY_MOTION_STATIC);
    set_velocities(w, c, desc);
    def_release(w, old);
    r = gy_w_body_refresh(w, slot);
    if (r != GY_OK) {
        c = gy_w_body_of(w, slot);
        c->failed = true;
        c->error = r;
    }
    return r;
}

gy_result gy_body_get_def(const gy_world *w, gy_entity e, gy_physics_component_def *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    *out = c->def->desc;
    out->is_active = c->is_active;
    out->body.user_data = user_data_of(w, c);
    return GY_OK;
}

bool gy_body_exists(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    gy_w_body *c;
    return component(w, e, &c) == GY_OK;
}

gy_result gy_body_set_active(gy_world *w, gy_entity e, bool active)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    if (c->is_active == active)
        return GY_OK;
    c->is_active = active;
    r = gy_w_body_refresh(w, gy_w_body_slot(w, c));
    if (r != GY_OK) {
        c = gy_w_body_of(w, gy_w_entity_slot(w, e));
        c->is_active = !active;
    }
    return r;
}

gy_result gy_body_get_enable(const gy_world *w, gy_entity e, gy_body_enable *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    out->entity_active = w->ents[gy_w_body_slot(w, c)].active_h;
    out->component_active = c->is_active;
    out->effective = effective(w, c);
    return GY_OK;
}

bool gy_body_is_active(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    gy_w_body *c;
    return component(w, e, &c) == GY_OK && effective(w, c);
}

/* ---- writes ---------------------------------------------------------------------------------- */

/* The checks every write shares after its own argument checks. */
static gy_result live(const gy_w_body *c)
{
    return c->recorded && !c->failed ? GY_OK : GY_ERR_INACTIVE;
}

static gy_result vector_write(gy_world *w, gy_entity e, gy_vec3 v, bool dynamic_only,
                              gy_w_body **out)
{
    gy_result r = component(w, e, out);
    if (r != GY_OK)
        return r;
    r = gy_validate_vector(v, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    gy_motion_type m = (*out)->motion;
    if (dynamic_only ? m != GY_MOTION_DYNAMIC : m == GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;
    return live(*out);
}

gy_result gy_body_set_linear_velocity(gy_world *w, gy_entity e, gy_vec3 v)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = vector_write(w, e, v, false, &c);
    return r != GY_OK ? r : gy_physics_record_set_linear_velocity(w->physics, c->ref, v);
}

gy_result gy_body_set_angular_velocity(gy_world *w, gy_entity e, gy_vec3 v)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = vector_write(w, e, v, false, &c);
    return r != GY_OK ? r : gy_physics_record_set_angular_velocity(w->physics, c->ref, v);
}

gy_result gy_body_apply_force(gy_world *w, gy_entity e, gy_vec3 force)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = vector_write(w, e, force, true, &c);
    return r != GY_OK ? r : gy_physics_record_add_force(w->physics, c->ref, force);
}

gy_result gy_body_apply_torque(gy_world *w, gy_entity e, gy_vec3 torque)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = vector_write(w, e, torque, true, &c);
    return r != GY_OK ? r : gy_physics_record_add_torque(w->physics, c->ref, torque);
}

gy_result gy_body_apply_impulse(gy_world *w, gy_entity e, gy_vec3 impulse)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = vector_write(w, e, impulse, true, &c);
    return r != GY_OK ? r : gy_physics_record_add_impulse(w->physics, c->ref, impulse);
}

gy_result gy_body_apply_impulse_at(gy_world *w, gy_entity e, gy_vec3 impulse, gy_vec3 world_point)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    r = gy_validate_vector(world_point, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    r = vector_write(w, e, impulse, true, &c);
    return r != GY_OK ? r
                      : gy_physics_record_add_impulse_at(w->physics, c->ref, impulse, world_point);
}

gy_result gy_body_teleport(gy_world *w, gy_entity e, gy_pose pose)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    uint32_t slot;
    gy_result r = entity_slot(w, e, &slot);
    if (r != GY_OK)
        return r;
    r = gy_entity_set_world_pose(w, e, pose);
    if (r != GY_OK)
        return r;
    /* Record it now so the state the game reads is the teleport's at once. */
    gy_w_propagate(w);
    return GY_OK;
}

gy_result gy_body_move_kinematic(gy_world *w, gy_entity e, gy_pose target, double duration)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    r = gy_validate_pose(target);
    if (r != GY_OK)
        return r;
    if (!gy_is_finite(duration))
        return GY_ERR_NON_FINITE;
    uint32_t steps = gy_physics_steps_for(w->physics, duration);
    if (steps == 0)
        return GY_ERR_INVALID_ARGUMENT;
    if (c->motion != GY_MOTION_KINEMATIC || c->def->desc.is_character)
        return GY_ERR_INVALID_MOTION;
    r = live(c);
    return r != GY_OK ? r : gy_physics_record_move_kinematic(w->physics, c->ref, target, steps);
}

gy_result gy_character_set_intent(gy_world *w, gy_entity e, gy_vec3 velocity, uint32_t flags)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    if (!c->def->desc.is_character)
        return GY_ERR_MISUSE;
    r = gy_validate_vector(velocity, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    /* Gyre's controller has no flags; only a host's own hook reads them. */
    if (flags != 0 && w->run_characters)
        return GY_ERR_INVALID_ARGUMENT;
    r = live(c);
    return r != GY_OK ? r : gy_physics_record_character_intent(w->physics, c->ref, velocity, flags);
}

gy_result gy_character_jump(gy_world *w, gy_entity e, double speed)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    if (!c->def->desc.is_character)
        return GY_ERR_MISUSE;
    if (!gy_is_finite(speed))
        return GY_ERR_NON_FINITE;
    if (!(speed > 0.0) || speed > GY_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    r = live(c);
    return r != GY_OK ? r : gy_physics_record_character_jump(w->physics, c->ref, speed);
}

/* ---- state ----------------------------------------------------------------------------------- */

/* The kept proxy the body's velocities, flags and state tick are read from, or NULL when its
 * records hold them (gy_w_result.kept_state). */
static const gy_proxy *kept_proxy(const gy_world *w, const gy_w_body *c)
{
    const gy_w_result *st = &w->results[c->store];
    return st->kept_state && st->proxy < w->kept_count ? gy_proxy_in(w->kept, st->proxy) : NULL;
}

bool gy_w_body_awake(const gy_world *w, const gy_w_body *c)
{
    const gy_proxy *q = kept_proxy(w, c);
    return q != NULL ? (q->flags & GY_PROXY_AWAKE) != 0 : gy_w_result_of(w, c)->awake;
}

uint64_t gy_w_body_state_tick(const gy_world *w, const gy_w_body *c)
{
    /* A settled body, and one whose proxy in the newest capture's publish speaks for it, were
     * last reported by that capture. */
    if (c->settled || kept_proxy(w, c) != NULL)
        return w->frame_tick;
    const gy_w_result_rare *rare = &w->results_rare[c->store];
    return (uint64_t)rare->state_tick_hi << 32 | rare->state_tick_lo;
}

gy_result gy_body_get_state(const gy_world *w, gy_entity e, gy_physics_state *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    memset(out, 0, sizeof *out);
    out->pose = c->recorded ? gy_w_body_pose(w, c) : gy_w_world_pose(w, gy_w_body_slot(w, c));
    const gy_w_result *st = gy_w_result_of(w, c);
    const gy_proxy *q = kept_proxy(w, c);
    if (q != NULL && !st->is_character) {
        out->linear_velocity =
            gy_v3(q->linear_velocity[0], q->linear_velocity[1], q->linear_velocity[2]);
        out->angular_velocity =
            gy_v3(q->angular_velocity[0], q->angular_velocity[1], q->angular_velocity[2]);
    } else if (gy_w_velocity_of(w, c) != NULL) {
        out->linear_velocity = gy_w_velocity_of(w, c)->lin;
        out->angular_velocity = gy_w_velocity_of(w, c)->ang;
    }
    out->awake = c->recorded && gy_w_body_awake(w, c);
    out->has_body = c->recorded && c->assigned;
    out->failed = c->failed;
    out->error = c->error;
    out->faulted = q != NULL ? (q->flags & GY_PROXY_FAULT) != 0 : st->faulted;
    out->motion = c->motion;
    out->body = c->recorded ? c->body : (gy_body_id){0};
    out->ref = c->ref;
    out->tick = gy_w_body_state_tick(w, c);
    const gy_w_character_state *cs = gy_w_character_state_of(c);
    gy_w_character_state none;
    memset(&none, 0, sizeof none);
    if (cs == NULL)
        cs = &none;
    out->grounded = c->recorded && cs->grounded;
    out->hit_ceiling = c->recorded && cs->hit_ceiling;
    out->ground_state = c->recorded ? (gy_ground_state)cs->ground_state : GY_GROUND_AIRBORNE;
    out->ground_normal = cs->ground_normal;
    out->platform_velocity = cs->platform_velocity;
    out->ground = gy_entity_is_valid(w, cs->ground) ? cs->ground : gy_entity_null();
    return GY_OK;
}

/* ---- stop and start -------------------------------------------------------------------------- */

void gy_w_bodies_stopped(gy_world *w)
{
    for (uint32_t d = 0; d < w->bodies.count; d++) {
        gy_w_body *c = gy_w_store_at(&w->bodies, d);
        gy_w_body_own_state(w, c); /* the last result's state stays what the game knows */
        gy_w_transform_unfollow(w, gy_w_body_slot(w, c));
        gy_w_body_unsettle(w, c);
        /* Not recorded from now on: its held pose is not read until a create sets it (the
         * entity, drawn from its stored pose, keeps the last result the sync wrote). */
        gy_w_render_hold(w, c);
        gy_w_result *st = gy_w_result_of(w, c);
        w->results_rare[c->store].tracked_at = st->moved_at = GY_W_NONE;
        st->have_proxy = false;
        st->faulted = false;
        c->recorded = false;
        c->assigned = false;
        c->body.bits = 0;
        c->ref.generation = 0;
        c->failed = false;
    }
    gy_hash_map_clear(&w->ref_store);
    w->tracked.count = 0;
    w->moved.count = 0;
    gy_hash_map_clear(&w->held_index);
    w->held_count = 0;
}

/* What the physics layer checks in a bootstrap list, from the shared validators: a body the
 * World accepted can still fail here (its entity's world pose composed out of range, or its
 * geometry gone), and it must fail alone rather than refuse the whole start. */
static gy_result check_start_desc(const gy_physics_body_def *b)
{
    gy_result r = gy_validate_body_def(&b->def);
    for (uint32_t i = 0; r == GY_OK && i < b->collider_count; i++)
        r = gy_validate_collider_def(&b->colliders[i], b->def.type);
    if (r == GY_OK && b->character != NULL)
        r = gy_validate_character_def(b->character);
    return r;
}

gy_result gy_w_start(gy_world *w)
{
    gy_physics_bootstrap boot;
    memset(&boot, 0, sizeof boot);
    gy_physics_resource_def *res = NULL;
    gy_mesh_def *meshes = NULL;
    gy_hull_def *hulls = NULL;
    uint32_t res_count = 0;
    gy_result r = gy_w_geometry_bootstrap(w, &res, &res_count, &meshes, &hulls);
    if (r != GY_OK)
        return r;
    uint32_t n = 0, cols = 0;
    for (uint32_t d = 0; d < w->bodies.count; d++) {
        const gy_w_body *c = gy_w_store_at(&w->bodies, d);
        if (effective(w, c)) {
            n++;
            cols += c->def->desc.collider_count;
        }
    }
    gy_physics_body_def *bodies = n ? gy_alloc(w->alloc, (size_t)n * sizeof *bodies) : NULL;
    gy_collider_def *colliders = cols ? gy_alloc(w->alloc, (size_t)cols * sizeof *colliders) : NULL;
    /* One per body (characters use theirs; the list is read during start only). */
    gy_character_def *chars = n ? gy_alloc(w->alloc, (size_t)n * sizeof *chars) : NULL;
    gy_physics_joint_def *joints = NULL;
    uint32_t joint_count = 0;
    bool oom = (n && (bodies == NULL || chars == NULL)) || (cols && colliders == NULL);
    /* Filled by the start: the refs the bodies are named by from then on. */
    gy_physics_body_ref *refs = n ? gy_alloc(w->alloc, (size_t)n * sizeof *refs) : NULL;
    oom = oom || (n && refs == NULL);
    if (oom)
        r = GY_ERR_OUT_OF_MEMORY;
    uint32_t k = 0, at = 0, apart = 0, apart_index = 0;
    for (uint32_t d = 0; r == GY_OK && d < w->bodies.count; d++) {
        gy_w_body *c = gy_w_store_at(&w->bodies, d);
        if (!effective(w, c))
            continue;
        gy_physics_body_def *b = &bodies[k];
        memset(b, 0, sizeof *b);
        b->def = body_def_at(c, gy_w_world_pose(w, gy_w_body_slot(w, c)));
        /* Keep what the last run reported, so a stop/start keeps motion as well as poses; a
         * velocity outside the accepted range (a character's motion over a tick can be) is not
         * one a body may be created with, so that body starts at rest instead. */
        if (c->motion != GY_MOTION_STATIC) {
            const gy_w_velocity *v = gy_w_velocity_of(w, c);
            assert(v != NULL); /* not Static: a mover */
            bool ok = gy_validate_vector(v->lin, GY_MAX_MAGNITUDE) == GY_OK &&
                      gy_validate_vector(v->ang, GY_MAX_MAGNITUDE) == GY_OK;
            b->def.linear_velocity = ok ? v->lin : gy_v3(0, 0, 0);
            b->def.angular_velocity = ok ? v->ang : gy_v3(0, 0, 0);
        }
        b->colliders = colliders + at;
        b->collider_count = c->def->desc.collider_count;
        b->character = gy_w_character_of(w, c, &chars[k]);
        /* A body created for the first time (never reported) starts asleep if asked to; one that
         * ran before keeps its motion. */
        b->start_asleep = c->def->desc.start_asleep && !gy_w_result_of(w, c)->have_proxy;
        gy_result rb = build_colliders(w, c, colliders + at);
        if (rb == GY_OK)
            rb = check_start_desc(b);
        if (rb != GY_OK) {
            /* This body alone stays out (reported, as a refused create is); the others start. */
            c->failed = true;
            c->error = rb;
            gy_log(w->logger, GY_LOG_WARN,
                   "world: entity '%s': body not recreated at physics start: %s",
                   gy_w_entity_name(w, gy_w_body_slot(w, c)), gy_result_message(rb));
            continue;
        }
        k++;
        at += c->def->desc.collider_count;
        /* Provisional, so the joints' bootstrap can name the bodies: by index alone, which the
         * start issues in list order (the generations are its own). */
        c->ref = (gy_physics_body_ref){k - 1u, UINT32_MAX};
        apart_index += c->store != k - 1u;
        c->recorded = true;
        /* Its held pose kept apart (see record_create): room for it reserved below. */
        apart +=
            memcmp(&b->def.pose, gy_w_world_of(w, gy_w_body_slot(w, c)), sizeof b->def.pose) != 0;
    }
    if (r == GY_OK && apart > 0)
        r = gy_w_held_reserve(w, apart + 1u); /* and the spare */
    if (r == GY_OK && apart_index > 0)        /* the start issues the list's k-th body index k */
        r = gy_hash_map_reserve(&w->ref_store, w->ref_store.count + apart_index);
    if (r == GY_OK)
        r = gy_w_joints_bootstrap(w, &joints, &joint_count);
    /* Filled by the start, as `refs` is for the bodies. */
    gy_physics_joint_ref *joint_refs =
        r == GY_OK && joint_count > 0 ? gy_alloc(w->alloc, (size_t)joint_count * sizeof *joint_refs)
                                      : NULL;
    if (r == GY_OK && joint_count > 0 && joint_refs == NULL)
        r = GY_ERR_OUT_OF_MEMORY;
    gy_physics_resource_ref *res_refs =
        r == GY_OK && res_count > 0 ? gy_alloc(w->alloc, (size_t)res_count * sizeof *res_refs)
                                    : NULL;
    if (r == GY_OK && res_count > 0 && res_refs == NULL)
        r = GY_ERR_OUT_OF_MEMORY;
    if (r == GY_OK) {
        boot.resources = res;
        boot.resource_count = res_count;
        boot.bodies = bodies;
        boot.body_count = k;
        boot.body_refs = refs;
        boot.joints = joints;
        boot.joint_count = joint_count;
        boot.joint_refs = joint_refs;
        boot.resource_refs = res_refs;
        r = gy_physics_start(w->physics, &boot);
    }
    if (r == GY_OK) {
        w->stats.body_refs_issued += k;
        k = 0;
        for (uint32_t d = 0; d < w->bodies.count; d++) {
            gy_w_body *c = gy_w_store_at(&w->bodies, d);
            if (!c->recorded)
                continue;
            c->ref = refs[k];
            r = ref_store_set(w, refs[k], c->store); /* room reserved */
            assert(r == GY_OK);
            reset_results(w, c, bodies[k].def.pose); /* the velocities stay the last run's */
            gy_w_result_of(w, c)->awake = gy_w_result_of(w, c)->awake && !bodies[k].start_asleep;
            gy_w_body_track(w, c);
            k++;
        }
        gy_w_geometry_started(w, res_refs, res_count);
        gy_w_joints_started(w, joint_refs, joint_count, true);
    } else {
        gy_w_joints_started(w, NULL, joint_count, false);
        gy_w_bodies_stopped(w);
    }
    if (joints != NULL)
        gy_free(w->alloc, joints, (size_t)joint_count * sizeof *joints);
    if (joint_refs != NULL)
        gy_free(w->alloc, joint_refs, (size_t)joint_count * sizeof *joint_refs);
    if (res_refs != NULL)
        gy_free(w->alloc, res_refs, (size_t)res_count * sizeof *res_refs);
    if (bodies != NULL)
        gy_free(w->alloc, bodies, (size_t)n * sizeof *bodies);
    if (colliders != NULL)
        gy_free(w->alloc, colliders, (size_t)cols * sizeof *colliders);
    if (chars != NULL)
        gy_free(w->alloc, chars, (size_t)n * sizeof *chars);
    if (refs != NULL)
        gy_free(w->alloc, refs, (size_t)n * sizeof *refs);
    if (res != NULL)
        gy_free(w->alloc, res, (size_t)res_count * sizeof *res);
    if (meshes != NULL)
        gy_free(w->alloc, meshes, (size_t)res_count * sizeof *meshes);
    if (hulls != NULL)
        gy_free(w->alloc, hulls, (size_t)res_count * sizeof *hulls);
    return r;
}

/* ---- live changes ---------------------------------------------------------------------------- */

gy_result gy_body_set_awake(gy_world *w, gy_entity e, bool awake)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    if (c->motion != GY_MOTION_DYNAMIC)
        return GY_ERR_INVALID_MOTION;
    r = live(c);
    return r != GY_OK ? r : gy_physics_record_set_awake(w->physics, c->ref, awake);
}

gy_result gy_body_set_mass(gy_world *w, gy_entity e, double mass)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r != GY_OK)
        return r;
    r = gy_validate_mass(mass);
    if (r != GY_OK)
        return r;
    if (c->motion != GY_MOTION_DYNAMIC)
        return GY_ERR_INVALID_MOTION;
    r = def_own(w, c);
    if (r != GY_OK)
        return r;
    if (c->recorded && !c->failed) {
        r = gy_physics_record_set_mass(w->physics, c->ref, mass);
        if (r != GY_OK)
            return r;
    }
    /* Kept for every later (re)creation, scaled as the live body was: an inertia override
     * scales with the mass; without one the colliders' density share stays. */
    gy_body_def *b = &c->def->desc.body;
    if (b->has_mass_properties) {
        double k = mass / b->mass;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                b->mass_properties.inertia.m[i][j] *= k;
    }
    b->mass = mass;
    return GY_OK;
}

/* The collider `index` of a component, GY_ERR_INVALID_ARGUMENT past its colliders. */
static gy_result collider_of(gy_world *w, gy_entity e, uint32_t index, gy_w_body **out)
{
    gy_result r = component(w, e, out);
    if (r != GY_OK)
        return r;
    return index < (*out)->def->desc.collider_count ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

gy_result gy_body_set_material(gy_world *w, gy_entity e, uint32_t collider, gy_material material)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = collider_of(w, e, collider, &c);
    if (r == GY_OK)
        r = gy_validate_material(&material);
    if (r == GY_OK)
        r = def_own(w, c);
    if (r != GY_OK)
        return r;
    if (c->recorded && !c->failed) {
        r = gy_physics_record_set_material(w->physics, c->ref, collider, &material);
        if (r != GY_OK)
            return r;
    }
    c->def->desc.colliders[collider].def.material = material;
    return GY_OK;
}

gy_result gy_body_set_filter(gy_world *w, gy_entity e, uint32_t collider, uint32_t category,
                             uint32_t mask)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = collider_of(w, e, collider, &c);
    if (r == GY_OK)
        r = def_own(w, c);
    if (r != GY_OK)
        return r;
    if (c->recorded && !c->failed) {
        r = gy_physics_record_set_filter(w->physics, c->ref, collider, category, mask);
        if (r != GY_OK)
            return r;
    }
    c->def->desc.colliders[collider].def.category = category;
    c->def->desc.colliders[collider].def.mask = mask;
    return GY_OK;
}

gy_result gy_body_set_user_data(gy_world *w, gy_entity e, uint64_t user_data)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    gy_w_body *c;
    gy_result r = component(w, e, &c);
    if (r == GY_OK)
        r = user_data_reserve(w, user_data);
    if (r != GY_OK)
        return r;
    user_data_set(w, c, user_data);
    return GY_OK;
}

uint64_t gy_body_get_user_data(const gy_world *w, gy_entity e)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0u;
    gy_w_body *c;
    return component(w, e, &c) == GY_OK ? user_data_of(w, c) : 0u;
}

gy_result gy_world_set_gravity(gy_world *w, gy_vec3 gravity)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    return gy_physics_record_set_gravity(w->physics, gravity);
}

gy_vec3 gy_world_gravity(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return gy_v3(0.0, 0.0, 0.0);
    return gy_physics_gravity(w->physics);
}

/* ---- the short path ---------------------------------------------------------------------------
 */

gy_result gy_body_create(gy_world *w, gy_vec3 position, const gy_physics_component_def *desc,
                         gy_entity *out)
{
    if (out != NULL)
        *out = gy_entity_null();
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_entity_def ed = gy_default_entity_def();
    ed.position = position;
    gy_entity e;
    gy_result r = gy_entity_create(w, &ed, &e);
    if (r != GY_OK)
        return r;
    r = gy_body_add(w, e, desc);
    if (r != GY_OK) {
        gy_entity_destroy(w, e);
        return r;
    }
    *out = e;
    return GY_OK;
}

gy_scene_collider gy_default_scene_collider(gy_shape shape)
{
    gy_scene_collider c;
    memset(&c, 0, sizeof c);
    c.def = gy_default_collider_def();
    c.def.shape = shape;
    return c;
}

gy_physics_component_def gy_default_physics_component_def_for(gy_body_type type,
                                                              const gy_scene_collider *collider)
{
    gy_physics_component_def d = gy_default_physics_component_def();
    d.body_type = type;
    /* The World only reads a description's colliders (it copies them). */
    d.colliders = (gy_scene_collider *)collider;
    d.collider_count = collider != NULL ? 1u : 0u;
    return d;
}

gy_shape gy_sphere(double radius)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_SPHERE;
    s.radius = radius;
    return s;
}

gy_shape gy_box(gy_vec3 size)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_BOX;
    s.box_size = size;
    return s;
}

gy_shape gy_capsule(double radius, double height)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_CAPSULE;
    s.radius = radius;
    s.height = height;
    return s;
}
