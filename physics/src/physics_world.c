/* The physics-side roster: bodies by store index, colliders by adapter slot, joints and resources
 * by the game's keys, and what creating or releasing each does to the adapter, the query snapshot,
 * the contact tracker, the proxies and the reply queue. Physics thread, inside the sim lock. */
#include <string.h>

#include "gyre/handle_pool.h"
#include "gyre/math.h"
#include "physics_roster.h"

/* Room for `count` more local poses, and for the free list to list every entry. */
static gy_result locals_reserve(gy_phys_sim *p, uint32_t count)
{
    uint32_t free = p->local_free.count;
    uint32_t need = p->local_count + (count > free ? count - free : 0u);
    if (need <= p->local_capacity)
        return GY_OK;
    gy_result r = gy_array_reserve(p->cfg->alloc, (void **)&p->locals, &p->local_capacity, need,
                                   sizeof *p->locals);
    if (r == GY_OK)
        r = gy_u32_array_reserve(p->cfg->alloc, &p->local_free, p->local_capacity);
    return r;
}

void gy_phys_reply_failed(gy_phys_sim *p, gy_physics_object_kind kind, uint32_t key,
                          uint32_t generation, gy_result result)
{
    gy_physics_failure_reply f = {generation, __atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED),
                                  (uint32_t)kind, (int32_t)result, p->tick + 1u};
    gy_phys_add(&p->sh->counters.creates_failed, 1);
    gy_phys_reply(p, GY_PHYSICS_REPLY_CREATE_FAILED, key, &f, sizeof f, GY_REPLY_ESSENTIAL);
}

static void snapshot_add(gy_phys_sim *p, uint32_t slot, const gy_collider_def *c,
                         const gy_collider_def *original, const gy_body_def *def,
                         gy_physics_body_ref ref)
{
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape = c->shape;
    if (c->shape.type == GY_SHAPE_HULL || c->shape.type == GY_SHAPE_MESH) {
        uint32_t key = (uint32_t)original->shape.resource.bits;
        e.geometry = key < p->resource_capacity ? p->resources[key].geometry : NULL;
        if (e.geometry == NULL)
            return;
    }
    e.pose = gy_pose_mul(def->pose, c->local_pose);
    e.pose.rotation = gy_quat_normalize(e.pose.rotation);
    e.category = c->category;
    e.motion = def->type;
    e.is_sensor = c->is_sensor;
    e.body = ref;
    gy_result r = gy_query_snapshot_set(p->cfg->snapshot, slot, &e);
    if (r != GY_OK) {
        gy_log(p->cfg->logger, GY_LOG_WARN, "physics: query snapshot entry for body %u: %s",
               ref.index, gy_result_message(r));
        return;
    }
    p->colliders[slot].in_snapshot = true;
}

/* The adapter colliders a collider becomes: one per piece of a mesh built in pieces, else one. */
static uint32_t collider_pieces(const gy_phys_sim *p, const gy_collider_def *c)
{
    if (c->shape.type != GY_SHAPE_MESH)
        return 1u;
    uint32_t key = (uint32_t)c->shape.resource.bits;
    if (key >= p->resource_capacity || !p->resources[key].live || p->resources[key].pieces == NULL)
        return 1u;
    return p->resources[key].piece_count;
}

/* The collider a body was given that adapter collider `m` (of the scratch list) stands for. */
static uint32_t authored_index(const gy_phys_sim *p, uint32_t m)
{
    return (uint32_t)p->collider_scratch[m].user_data;
}

void gy_phys_create_body(gy_phys_sim *p, gy_physics_body_ref ref, const gy_body_def *def,
                         const gy_collider_def *colliders, uint32_t authored_count,
                         const gy_character_def *character, bool asleep, bool bootstrap)
{
    uint32_t store_index = ref.index, generation = ref.generation;
    const gy_backend *be = p->cfg->backend;
    uint64_t count = 0; /* adapter colliders */
    for (uint32_t i = 0; i < authored_count && colliders != NULL; i++)
        count += collider_pieces(p, &colliders[i]);
    if (store_index >= GY_PHYSICS_MAX_STORE_INDEX || generation == 0 || authored_count == 0 ||
        authored_count > UINT16_MAX || count > GY_PHYS_MAX_ADAPTER_COLLIDERS) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation,
                             GY_ERR_INVALID_ARGUMENT);
        return;
    }
    gy_result r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->bodies, &p->body_capacity,
                                        store_index + 1u, sizeof *p->bodies);
    if (r == GY_OK)
        r = gy_phys_cover_frame(p, store_index + 1u);
    /* Its proxy's page is made the writer's own now, while the create can still fail. */
    if (r == GY_OK && gy_phys_proxy_write(p, store_index) == NULL)
        r = GY_ERR_OUT_OF_MEMORY;
    if (r == GY_OK)
        r = gy_array_reserve(p->cfg->alloc, (void **)&p->collider_scratch,
                             &p->collider_scratch_capacity, (uint32_t)count,
                             sizeof *p->collider_scratch);
    if (r == GY_OK)
        r = gy_array_reserve(p->cfg->alloc, (void **)&p->collider_ids, &p->collider_ids_capacity,
                             (uint32_t)count, sizeof *p->collider_ids);
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation, r);
        return;
    }
    gy_phys_body *e = &p->bodies[store_index];
    if (e->id.bits != 0) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation, GY_ERR_MISUSE);
        return;
    }
    for (uint32_t i = 0, m = 0; i < authored_count; i++) {
        for (uint32_t q = 0, n = collider_pieces(p, &colliders[i]); q < n; q++, m++) {
            p->collider_scratch[m] = colliders[i];
            gy_shape *s = &p->collider_scratch[m].shape;
            if (s->type == GY_SHAPE_HULL || s->type == GY_SHAPE_MESH) {
                gy_physics_resource_ref rr = gy_physics_resource_ref_of_bits(s->resource.bits);
                uint32_t key = rr.index;
                /* A bootstrap body names the list's own resources by index alone. */
                if (key >= p->resource_capacity || !p->resources[key].live ||
                    (!bootstrap && p->resources[key].generation != rr.generation)) {
                    gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation,
                                         GY_ERR_STALE_HANDLE);
                    return;
                }
                const gy_phys_resource *res = &p->resources[key];
                s->resource = res->pieces != NULL ? res->pieces[q] : res->id;
            }
            /* Every piece names the collider the body was given: events and queries see one. */
            p->collider_scratch[m].user_data = ((uint64_t)store_index << 32) | i;
        }
    }
    gy_body_def d = *def;
    d.user_data = ((uint64_t)store_index << 32) | generation;
    gy_body_id id;
    r = be->body_create(p->world, &d, p->collider_scratch, (uint32_t)count, &id, p->collider_ids);
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation, r);
        return;
    }
    uint32_t max_slot = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t slot = gy_handle_slot(p->collider_ids[i].bits);
        max_slot = slot > max_slot ? slot : max_slot;
    }
    r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->colliders, &p->collider_capacity,
                              max_slot + 1u, sizeof *p->colliders);
    if (r == GY_OK)
        r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->collider_index,
                                  &p->collider_index_capacity, max_slot + 1u,
                                  sizeof *p->collider_index);
    if (r == GY_OK)
        r = locals_reserve(p, (uint32_t)count);
    if (r == GY_OK && character != NULL)
        r = gy_phys_character_register(p, ref, character, &colliders[0], p->collider_ids[0]);
    if (r != GY_OK) {
        be->body_release(p->world, id);
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_BODY, store_index, generation, r);
        return;
    }
    /* Asleep before its first read: its first proxy shows it so, and no SLEEP is reported. */
    if (asleep && def->type == GY_MOTION_DYNAMIC)
        be->body_set_awake(p->world, id, false);
    uint32_t next = GY_PHYS_NONE;
    for (uint32_t m = (uint32_t)count; m-- > 0;) {
        uint32_t slot = gy_handle_slot(p->collider_ids[m].bits);
        const gy_collider_def *given = &p->collider_scratch[m];
        gy_phys_collider *c = &p->colliders[slot];
        c->generation = gy_handle_generation(p->collider_ids[m].bits);
        c->local = GY_PHYS_NONE;
        gy_pose identity = gy_pose_identity();
        if (memcmp(&given->local_pose, &identity, sizeof identity) != 0) {
            c->local = p->local_free.count > 0 ? p->local_free.items[--p->local_free.count]
                                               : p->local_count++;
            p->locals[c->local] = given->local_pose;
        }
        c->next = next;
        p->collider_index[slot] = (uint16_t)authored_index(p, m);
        c->live = true;
        c->in_snapshot = false;
        c->is_plane = given->shape.type == GY_SHAPE_PLANE;
        c->mask = given->mask;
        c->is_sensor = given->is_sensor;
        c->character = character != NULL && !given->is_sensor;
        next = slot;
    }
    p->pieced_bodies += count > authored_count;
    for (uint32_t slot = next, m = 0, prev = GY_PHYS_NONE; slot != GY_PHYS_NONE;
         prev = slot, slot = p->colliders[slot].next, m++) {
        bool later_piece = m > 0 && authored_index(p, m) == authored_index(p, m - 1u);
        p->colliders[slot].head = later_piece ? p->colliders[prev].head : slot;
    }
    e->id = id;
    e->generation = generation;
    e->first_collider = next;
    e->motion = (unsigned)def->type;
    e->list = GY_PHYS_LIST_NONE;
    e->teleported = 0;
    e->fault = 0;
    e->character = character != NULL;
    /* A new body never inherits the slot's previous value: it is read back at the coming
     * publish, and until then the slot's proxy is empty (not live) but for the pose it was
     * created at, where a fault before that publish freezes it. */
    gy_proxy *px = gy_phys_proxy_write(p, store_index); /* its own since the checks above */
    memset(px, 0, sizeof *px);
    const double cp[7] = {def->pose.position.x, def->pose.position.y, def->pose.position.z,
                          def->pose.rotation.x, def->pose.rotation.y, def->pose.rotation.z,
                          def->pose.rotation.w};
    for (int k = 0; k < 3; k++)
        px->position[k] = (float)cp[k];
    for (int k = 0; k < 4; k++)
        px->rotation[k] = (float)cp[3 + k];
    if (store_index >= p->body_count)
        p->body_count = store_index + 1u;
    p->live_bodies++;
    p->movable_bodies += def->type != GY_MOTION_STATIC;
    gy_phys_set32(&p->sh->counters.bodies, p->live_bodies);
    /* A mesh in pieces has one query blob: its first piece carries it. */
    for (uint32_t slot = next, m = 0; slot != GY_PHYS_NONE; slot = p->colliders[slot].next, m++)
        if (m == 0 || authored_index(p, m) != authored_index(p, m - 1u))
            snapshot_add(p, slot, &p->collider_scratch[m], &colliders[authored_index(p, m)], def,
                         ref);
    const gy_phys_collider *first = &p->colliders[next];
    e->snapshot_follows =
        count == 1 && first->in_snapshot && !first->is_plane && first->local == GY_PHYS_NONE;
    gy_phys_mark_changed(p, store_index);
    gy_phys_touch(p, store_index);
    gy_physics_body_reply reply = {
        generation, __atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED), id, p->tick + 1u};
    gy_phys_reply(p, GY_PHYSICS_REPLY_BODY_ASSIGNED, store_index, &reply, sizeof reply,
                  GY_REPLY_ESSENTIAL);
}

bool gy_phys_release_body(gy_phys_sim *p, gy_physics_body_ref ref)
{
    uint32_t store_index = ref.index;
    gy_phys_body *e = gy_phys_body_at(p, ref);
    if (e == NULL)
        return false;
    /* EXITs first, while the collider table still names the pair's colliders. */
    gy_contact_tracker_body_released(&p->tracker, p->tick + 1u, e->id);
    if (e->character)
        gy_phys_character_unregister(p, store_index);
    gy_phys_move_cancel(p, store_index);
    p->cfg->backend->body_release(p->world, e->id);
    bool pieced = false;
    for (uint32_t slot = e->first_collider; slot != GY_PHYS_NONE;) {
        gy_phys_collider *c = &p->colliders[slot];
        pieced |= c->head != slot;
        if (c->in_snapshot)
            gy_query_snapshot_remove(p->cfg->snapshot, slot);
        if (c->local != GY_PHYS_NONE)
            p->local_free.items[p->local_free.count++] = c->local;
        c->local = GY_PHYS_NONE;
        c->live = false;
        c->in_snapshot = false;
        c->is_sensor = false;
        c->character = false;
        uint32_t next = c->next;
        c->next = GY_PHYS_NONE;
        slot = next;
    }
    /* The adapter released the body's joints with it. */
    for (uint32_t k = 0; k < p->joint_count; k++) {
        gy_phys_joint *j = &p->joints[k];
        if (j->live && (j->a_store == store_index || j->b_store == store_index))
            j->live = false;
    }
    gy_phys_unlist(p, store_index);
    p->movable_bodies -= e->motion != GY_MOTION_STATIC;
    e->id.bits = 0;
    e->generation = 0;
    e->first_collider = GY_PHYS_NONE;
    e->snapshot_follows = 0;
    p->pieced_bodies -= pieced;
    e->teleported = 0;
    e->fault = 0;
    e->character = 0;
    gy_proxy *px = gy_phys_proxy_write(p, store_index);
    if (px != NULL) {
        memset(px, 0, sizeof *px);
        px->tick = (uint32_t)(p->tick + 1u);
        gy_phys_mark_changed(p, store_index);
    } else {
        gy_log(p->cfg->logger, GY_LOG_ERROR,
               "physics: body %u released, but its proxy could not be cleared (out of memory)",
               store_index);
    }
    p->live_bodies--;
    gy_phys_set32(&p->sh->counters.bodies, p->live_bodies);
    return true;
}

void gy_phys_create_joint(gy_phys_sim *p, const gy_physics_joint_def *desc,
                          gy_physics_joint_ref ref)
{
    uint32_t key = ref.index, generation = ref.generation;
    gy_result r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->joints, &p->joint_capacity,
                                        key + 1u, sizeof *p->joints);
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_JOINT, key, generation, r);
        return;
    }
    if (p->joints[key].live) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_JOINT, key, generation, GY_ERR_MISUSE);
        return;
    }
    gy_phys_body *a = gy_phys_body_at(p, desc->a);
    gy_phys_body *b = desc->b.generation != 0 ? gy_phys_body_at(p, desc->b) : NULL;
    if (a == NULL || (desc->b.generation != 0 && b == NULL)) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_JOINT, key, generation, GY_ERR_STALE_HANDLE);
        return;
    }
    gy_joint_def def = desc->def;
    def.a = a->id;
    def.b.bits = b != NULL ? b->id.bits : 0;
    def.user_data = key;
    gy_joint_id id;
    r = p->cfg->backend->joint_create(p->world, &def, &id);
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_JOINT, key, generation, r);
        return;
    }
    gy_phys_joint *j = &p->joints[key];
    j->id = id;
    j->a_store = desc->a.index;
    j->b_store = b != NULL ? desc->b.index : GY_PHYS_NONE;
    j->generation = generation;
    j->live = true;
    if (key >= p->joint_count)
        p->joint_count = key + 1u;
    gy_phys_touch(p, desc->a.index);
    if (b != NULL)
        gy_phys_touch(p, desc->b.index);
}

bool gy_phys_release_joint(gy_phys_sim *p, gy_physics_joint_ref ref)
{
    if (ref.index >= p->joint_count || !p->joints[ref.index].live ||
        p->joints[ref.index].generation != ref.generation)
        return false;
    gy_phys_joint *j = &p->joints[ref.index];
    p->cfg->backend->joint_release(p->world, j->id);
    j->live = false;
    gy_phys_touch(p, j->a_store);
    if (j->b_store != GY_PHYS_NONE)
        gy_phys_touch(p, j->b_store);
    return true;
}

void gy_phys_create_resource(gy_phys_sim *p, gy_physics_resource_ref ref, bool is_mesh,
                             const gy_vec3 *vertices, uint32_t vertex_count,
                             const uint32_t *indices, uint32_t index_count)
{
    uint32_t key = ref.index;
    gy_result r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->resources,
                                        &p->resource_capacity, key + 1u, sizeof *p->resources);
    if (r == GY_OK && (key == 0 || p->resources[key].live))
        r = GY_ERR_MISUSE;
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, key, ref.generation, r);
        return;
    }
    gy_resource_id id;
    gy_snapshot_geometry *g = NULL;
    if (is_mesh) {
        gy_mesh_def m = {vertices, vertex_count, indices, index_count};
        r = p->cfg->backend->mesh_create(p->world, &m, &id);
        if (r == GY_OK && (r = gy_snapshot_geometry_create_mesh(p->cfg->alloc, &m, &g)) != GY_OK)
            p->cfg->backend->resource_release(p->world, id);
    } else {
        gy_hull_def h = {vertices, vertex_count};
        r = p->cfg->backend->hull_create(p->world, &h, &id);
        if (r == GY_OK && (r = gy_snapshot_geometry_create_hull(p->cfg->alloc, &h, &g)) != GY_OK)
            p->cfg->backend->resource_release(p->world, id);
    }
    if (r != GY_OK) {
        gy_phys_reply_failed(p, GY_PHYSICS_OBJECT_RESOURCE, key, ref.generation, r);
        return;
    }
    gy_phys_install_resource(p, ref, id, g, NULL, 0);
}

gy_result gy_phys_install_resource(gy_phys_sim *p, gy_physics_resource_ref ref, gy_resource_id id,
                                   gy_snapshot_geometry *g, gy_resource_id *pieces,
                                   uint32_t piece_count)
{
    uint32_t key = ref.index;
    gy_result r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->resources,
                                        &p->resource_capacity, key + 1u, sizeof *p->resources);
    if (r != GY_OK)
        return r;
    p->resources[key].id = id;
    p->resources[key].geometry = g;
    p->resources[key].pieces = pieces;
    p->resources[key].piece_count = piece_count;
    p->resources[key].generation = ref.generation;
    p->resources[key].live = true;
    return GY_OK;
}

bool gy_phys_release_resource(gy_phys_sim *p, gy_physics_resource_ref ref)
{
    if (ref.index >= p->resource_capacity || !p->resources[ref.index].live ||
        p->resources[ref.index].generation != ref.generation)
        return false;
    gy_phys_resource *res = &p->resources[ref.index];
    if (res->pieces == NULL)
        p->cfg->backend->resource_release(p->world, res->id);
    for (uint32_t i = 0; i < res->piece_count; i++)
        p->cfg->backend->resource_release(p->world, res->pieces[i]);
    gy_free(p->cfg->alloc, res->pieces, (size_t)res->piece_count * sizeof *res->pieces);
    res->pieces = NULL;
    res->piece_count = 0;
    gy_snapshot_geometry_release(res->geometry);
    res->geometry = NULL;
    res->live = false;
    return true;
}

void gy_phys_reset_world_state(gy_phys_sim *p)
{
    gy_phys_geo_clear(p);
    for (uint32_t s = 0; s < p->body_count; s++) {
        gy_phys_body *e = &p->bodies[s];
        for (uint32_t slot = e->first_collider; e->id.bits != 0 && slot != GY_PHYS_NONE;
             slot = p->colliders[slot].next)
            if (p->colliders[slot].in_snapshot)
                gy_query_snapshot_remove(p->cfg->snapshot, slot);
    }
    for (uint32_t k = 0; k < p->resource_capacity; k++) {
        gy_phys_resource *res = &p->resources[k];
        if (res->live)
            gy_snapshot_geometry_release(res->geometry);
        /* The adapter's pieces go with its world; the array is ours. */
        gy_free(p->cfg->alloc, res->pieces, (size_t)res->piece_count * sizeof *res->pieces);
    }
    if (p->bodies != NULL)
        memset(p->bodies, 0, (size_t)p->body_capacity * sizeof *p->bodies);
    if (p->colliders != NULL)
        memset(p->colliders, 0, (size_t)p->collider_capacity * sizeof *p->colliders);
    if (p->collider_index != NULL)
        memset(p->collider_index, 0,
               (size_t)p->collider_index_capacity * sizeof *p->collider_index);
    p->local_count = 0;
    p->local_free.count = 0;
    if (p->joints != NULL)
        memset(p->joints, 0, (size_t)p->joint_capacity * sizeof *p->joints);
    if (p->resources != NULL)
        memset(p->resources, 0, (size_t)p->resource_capacity * sizeof *p->resources);
    p->body_count = 0;
    p->joint_count = 0;
    p->live_bodies = 0;
    p->pieced_bodies = 0;
    p->movable_bodies = 0;
    gy_phys_set32(&p->sh->counters.bodies, 0);
    gy_phys_set32(&p->sh->counters.awake, 0);
    p->awake.count = 0;
    for (uint32_t l = 0; l < GY_PHYS_LANES; l++)
        p->lanes[l].count = 0;
    p->touched.count = 0;
    p->retouch.count = 0;
    p->disturbed.count = 0;
    p->disturbed_scanned = 0;
    for (uint32_t l = 0; l < GY_PHYS_DIRTY_RING; l++)
        p->dirty[l].count = 0;
    p->input_count = 0;
    p->move_count = 0;
    gy_phys_characters_reset(p);
    /* The buffer the writer holds is the new world's current values: none yet. */
    p->sh->frames[p->frame].count = 0;
    gy_phys_invalidate_buffers(p);
}

void gy_phys_free_world_state(gy_phys_sim *p)
{
    const gy_allocator *a = p->cfg->alloc;
    gy_phys_geo_clear(p);
    if (p->geo_jobs != NULL)
        gy_free(a, p->geo_jobs, (size_t)p->geo_job_capacity * sizeof *p->geo_jobs);
    if (p->parked != NULL)
        gy_free(a, p->parked, (size_t)p->parked_capacity * sizeof *p->parked);
    if (p->bodies != NULL)
        gy_free(a, p->bodies, (size_t)p->body_capacity * sizeof *p->bodies);
    if (p->colliders != NULL)
        gy_free(a, p->colliders, (size_t)p->collider_capacity * sizeof *p->colliders);
    if (p->collider_index != NULL)
        gy_free(a, p->collider_index,
                (size_t)p->collider_index_capacity * sizeof *p->collider_index);
    if (p->locals != NULL)
        gy_free(a, p->locals, (size_t)p->local_capacity * sizeof *p->locals);
    gy_u32_array_free(a, &p->local_free);
    if (p->joints != NULL)
        gy_free(a, p->joints, (size_t)p->joint_capacity * sizeof *p->joints);
    if (p->resources != NULL)
        gy_free(a, p->resources, (size_t)p->resource_capacity * sizeof *p->resources);
    if (p->scratch != NULL)
        gy_free(a, p->scratch, (size_t)p->scratch_capacity * sizeof *p->scratch);
    if (p->collider_scratch != NULL)
        gy_free(a, p->collider_scratch,
                (size_t)p->collider_scratch_capacity * sizeof *p->collider_scratch);
    if (p->collider_ids != NULL)
        gy_free(a, p->collider_ids, (size_t)p->collider_ids_capacity * sizeof *p->collider_ids);
    if (p->inputs != NULL)
        gy_free(a, p->inputs, (size_t)p->input_capacity * sizeof *p->inputs);
    gy_phys_moves_free(p);
    gy_u32_array_free(p->cfg->alloc, &p->awake);
    for (uint32_t l = 0; l < GY_PHYS_LANES; l++)
        gy_u32_array_free(p->cfg->alloc, &p->lanes[l]);
    gy_u32_array_free(p->cfg->alloc, &p->touched);
    gy_u32_array_free(p->cfg->alloc, &p->retouch);
    gy_u32_array_free(p->cfg->alloc, &p->disturbed);
    for (uint32_t l = 0; l < GY_PHYS_DIRTY_RING; l++)
        gy_u32_array_free(p->cfg->alloc, &p->dirty[l]);
    gy_hash_map_fini(&p->release_set);
    gy_phys_characters_free(p);
    gy_phys_free_pages(p);
}
