/* Applying commands (physics thread): whole batches, lifecycle before mutate. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "physics_roster.h"

/* ---- rotation unpacking (SET_POSE) ----------------------------------------------------------- */

static gy_quat unpack_rotation(const double in[3], uint32_t dropped)
{
    double c[4];
    double sum = 0.0;
    for (uint32_t i = 0, k = 0; i < 4; i++) {
        if (i == dropped)
            continue;
        c[i] = in[k++];
        sum += c[i] * c[i];
    }
    /* The dropped component is the largest (>= 0.5), so this subtraction loses nothing. */
    c[dropped] = sqrt(fmax(0.0, 1.0 - sum));
    gy_quat q = {c[0], c[1], c[2], c[3]};
    return q;
}

/* ---- physics side: dispatch ------------------------------------------------------------------ */

static bool set_contains(const gy_phys_sim *p, uint32_t v)
{
    return gy_hash_map_find(&p->release_set, gy_map_key_of(v)) != NULL;
}

/* Builds the set of generations released in this batch (the map is kept at its peak size). */
static bool build_release_set(gy_phys_sim *p, uint32_t releases, uint32_t n)
{
    gy_hash_map *set = &p->release_set;
    set->allocator = p->cfg->alloc;
    gy_hash_map_clear(set);
    if (gy_hash_map_reserve(set, releases) != GY_OK)
        return false;
    for (uint32_t k = 0; k < n; k++) {
        const gy_command *c = p->scratch[k];
        if (c->type != GY_PHYS_CMD_RELEASE_BODY)
            continue;
        uint32_t v = ((const gy_phys_cmd_body *)(const void *)c->body.bytes)->generation;
        if (gy_hash_map_put(set, gy_map_key_of(v), 0) != GY_OK)
            return false;
    }
    return true;
}

static void apply_lifecycle(gy_phys_sim *p, gy_command *c, bool use_set)
{
    switch (c->type) {
    case GY_PHYS_CMD_CREATE_BODY: {
        const gy_phys_body_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->sh->counters.commands_failed, 1);
            return;
        }
        if (use_set && set_contains(p, pl->generation)) {
            gy_phys_add(&p->sh->counters.creates_cancelled, 1);
            return;
        }
        if (gy_phys_geo_park(p, c))
            break;
        gy_phys_create_body(p, (gy_physics_body_ref){c->key, pl->generation}, &pl->def,
                            pl->colliders, pl->collider_count,
                            pl->is_character ? &pl->character : NULL, pl->start_asleep, false);
        break;
    }
    case GY_PHYS_CMD_RELEASE_BODY: {
        gy_physics_body_ref ref = {
            c->key, ((const gy_phys_cmd_body *)(const void *)c->body.bytes)->generation};
        if (!gy_phys_release_body(p, ref) && !gy_phys_geo_unpark(p, ref)) {
            /* The partner of a cancelled create is expected to find nothing. */
            if (!(use_set && set_contains(p, ref.generation)))
                gy_phys_add(&p->sh->counters.commands_dropped_stale, 1);
            return;
        }
        break;
    }
    case GY_PHYS_CMD_CREATE_JOINT: {
        gy_phys_joint_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->sh->counters.commands_failed, 1);
            return;
        }
        gy_phys_create_joint(p, &pl->desc, (gy_physics_joint_ref){c->key, pl->generation});
        break;
    }
    case GY_PHYS_CMD_RELEASE_JOINT: {
        const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
        if (!gy_phys_release_joint(p, (gy_physics_joint_ref){c->key, b->generation}))
            gy_phys_add(&p->sh->counters.commands_dropped_stale, 1);
        break;
    }
    case GY_PHYS_CMD_CREATE_RESOURCE: {
        const gy_phys_resource_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->sh->counters.commands_failed, 1);
            return;
        }
        gy_phys_geo_enqueue(p, c);
        break;
    }
    case GY_PHYS_CMD_RELEASE_RESOURCE: {
        const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
        gy_physics_resource_ref ref = {c->key, b->generation};
        if (!gy_phys_geo_cancel(p, ref) && !gy_phys_release_resource(p, ref))
            gy_phys_add(&p->sh->counters.commands_dropped_stale, 1);
        break;
    }
    default:
        gy_phys_add(&p->sh->counters.commands_failed, 1);
        return;
    }
    gy_phys_add(&p->sh->counters.commands_applied, 1);
}

static void push_input(gy_phys_sim *p, const gy_command *c, const gy_phys_cmd_body *b,
                       uint32_t kind)
{
    if (p->input_count == p->input_capacity &&
        gy_array_reserve(p->cfg->alloc, (void **)&p->inputs, &p->input_capacity,
                         p->input_count + 1u, sizeof *p->inputs) != GY_OK) {
        gy_phys_add(&p->sh->counters.commands_failed, 1);
        return;
    }
    gy_physics_character_input *in = &p->inputs[p->input_count++];
    in->body = (gy_physics_body_ref){c->key, b->generation};
    in->kind = kind;
    in->flags = kind == GY_CHARACTER_INTENT ? b->aux : 0u;
    in->vector = kind == GY_CHARACTER_INTENT ? gy_v3(b->v[0], b->v[1], b->v[2]) : gy_v3(0, 0, 0);
    in->value = kind == GY_CHARACTER_JUMP ? b->v[0] : 0.0;
}

/* The record functions validate every field; the decoder checks again what it would otherwise
 * trust (finite and in range, SET_POSE's packed rotation), so no byte pattern in a command can
 * index out of bounds or pass a non-finite number on (the fuzzer feeds commands in as raw
 * bytes). */
static bool mutate_fields_ok(const gy_command *c, const gy_phys_cmd_body *b)
{
    for (int i = 0; i < 6; i++)
        if (!gy_is_finite(b->v[i]) || fabs(b->v[i]) > GY_PHYSICS_MAX_MAGNITUDE)
            return false;
    switch (c->type) {
    case GY_PHYS_CMD_SET_MASS:
        return b->v[0] > 0.0;
    case GY_PHYS_CMD_SET_MATERIAL:
        return b->v[0] >= 0.0 && b->v[1] >= 0.0 && ((b->aux >> 16) & 0xffu) <= GY_COMBINE_MAX &&
               (b->aux >> 24) <= GY_COMBINE_MAX;
    case GY_PHYS_CMD_SET_FILTER:
        for (int i = 0; i < 2; i++)
            if (!(b->v[i] >= 0.0 && b->v[i] <= (double)UINT32_MAX && b->v[i] == floor(b->v[i])))
                return false;
        return b->aux <= UINT16_MAX;
    default:
        break;
    }
    if (c->type != GY_PHYS_CMD_SET_POSE && c->type != GY_PHYS_CMD_MOVE_KINEMATIC)
        return true;
    double sum = b->v[3] * b->v[3] + b->v[4] * b->v[4] + b->v[5] * b->v[5];
    if (c->type == GY_PHYS_CMD_MOVE_KINEMATIC)
        return (b->aux >> 2) >= 1u && sum <= 1.0;
    return b->aux < 4u && sum <= 1.0;
}

/* The first adapter collider standing for collider `index` of body `e` (its create-list order),
 * or NULL. A mesh built in pieces stands as one adapter collider per piece, next to each other in
 * the body's list (next_piece walks them). */
static gy_phys_collider *body_collider(gy_phys_sim *p, const gy_phys_body *e, uint32_t index,
                                       uint32_t *slot_out)
{
    uint32_t slot = e->first_collider;
    while (slot != GY_PHYS_NONE && p->collider_index[slot] != index)
        slot = p->colliders[slot].next;
    if (slot == GY_PHYS_NONE)
        return NULL;
    *slot_out = slot;
    return &p->colliders[slot];
}

/* The next adapter collider standing for the same collider as `slot`'s, or NULL. */
static gy_phys_collider *next_piece(gy_phys_sim *p, uint32_t *slot)
{
    uint32_t next = p->colliders[*slot].next;
    if (next == GY_PHYS_NONE || p->collider_index[next] != p->collider_index[*slot])
        return NULL;
    *slot = next;
    return &p->colliders[next];
}

/* World gravity: the adapter wakes every body under it, so every movable body is read back. */
static void apply_gravity(gy_phys_sim *p, const gy_command *c)
{
    const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
    gy_vec3 g = gy_v3(b->v[0], b->v[1], b->v[2]);
    if (gy_validate_vector(g, GY_MAX_MAGNITUDE) != GY_OK ||
        p->cfg->backend->set_gravity(p->world, g) != GY_OK) {
        gy_phys_add(&p->sh->counters.commands_failed, 1);
        return;
    }
    gy_phys_characters_set_gravity(p->cfg->characters, g);
    for (uint32_t s = 0; s < p->body_count; s++)
        if (p->bodies[s].id.bits != 0 && p->bodies[s].motion != GY_MOTION_STATIC)
            gy_phys_touch(p, s);
    gy_phys_add(&p->sh->counters.commands_applied, 1);
}

static gy_result apply_filter(gy_phys_sim *p, uint32_t store_index, const gy_phys_body *e,
                              const gy_phys_cmd_body *b)
{
    uint32_t slot;
    gy_phys_collider *col = body_collider(p, e, b->aux, &slot);
    if (col == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t category = (uint32_t)b->v[0], mask = (uint32_t)b->v[1];
    gy_collider_id first = gy_phys_collider_id(p, slot);
    for (gy_phys_collider *c = col; c != NULL; c = next_piece(p, &slot)) {
        gy_result r = p->cfg->backend->collider_set_filter(p->world, gy_phys_collider_id(p, slot),
                                                           category, mask);
        if (r != GY_OK)
            return r;
        c->mask = mask;
        if (c->in_snapshot)
            gy_query_snapshot_set_category(p->cfg->snapshot, slot, category);
    }
    for (uint32_t i = 0; e->character && i < p->char_count; i++) {
        gy_phys_character *ch = &p->chars[i];
        if (ch->body.index == store_index && ch->collider.bits == first.bits) {
            ch->category = category;
            ch->mask = mask;
        }
    }
    return GY_OK;
}

/* A joint's motor: the adapter checks the decoded fields again (gy_validate_joint_motor). */
static void apply_motor(gy_phys_sim *p, const gy_command *c)
{
    const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
    if (c->key >= p->joint_count || !p->joints[c->key].live ||
        p->joints[c->key].generation != b->generation) {
        gy_phys_add(&p->sh->counters.commands_dropped_stale, 1);
        return;
    }
    gy_phys_joint *j = &p->joints[c->key];
    gy_joint_motor m = {
        (gy_motor_mode)(b->aux < GY_MOTOR_MODE_COUNT ? b->aux : GY_MOTOR_MODE_COUNT), b->v[0],
        b->v[1]};
    gy_result r = p->cfg->backend->joint_set_motor(p->world, j->id, &m);
    if (r == GY_OK) {
        gy_phys_touch(p, j->a_store);
        if (j->b_store != GY_PHYS_NONE)
            gy_phys_touch(p, j->b_store);
    }
    gy_phys_add(r == GY_OK ? &p->sh->counters.commands_applied : &p->sh->counters.commands_failed,
                1);
}

static void apply_mutate(gy_phys_sim *p, const gy_command *c)
{
    const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
    if (c->type == GY_PHYS_CMD_SET_GRAVITY) {
        apply_gravity(p, c);
        return;
    }
    if (c->type == GY_PHYS_CMD_SET_MOTOR) {
        apply_motor(p, c);
        return;
    }
    gy_phys_body *e = gy_phys_body_at(p, (gy_physics_body_ref){c->key, b->generation});
    if (e == NULL) {
        gy_phys_add(&p->sh->counters.commands_dropped_stale, 1);
        return;
    }
    if (!mutate_fields_ok(c, b)) {
        gy_phys_add(&p->sh->counters.commands_failed, 1);
        return;
    }
    const gy_backend *be = p->cfg->backend;
    gy_backend_world *w = p->world;
    gy_vec3 v = gy_v3(b->v[0], b->v[1], b->v[2]);
    gy_result r = GY_OK;
    switch (c->type) {
    case GY_PHYS_CMD_SET_POSE: {
        gy_pose pose = {v, unpack_rotation(b->v + 3, b->aux)};
        r = be->body_set_pose(w, e->id, pose);
        gy_phys_move_cancel(p, c->key);
        if (r == GY_OK) {
            e->teleported = 1;
            e->fault = 0;
            if (gy_u32_array_push(p->cfg->alloc, &p->disturbed, c->key) != GY_OK)
                gy_log(p->cfg->logger, GY_LOG_WARN, "physics: wake scan list could not grow");
        }
        break;
    }
    case GY_PHYS_CMD_SET_LINEAR_VELOCITY:
        gy_phys_move_cancel(p, c->key);
        r = be->body_set_linear_velocity(w, e->id, v);
        break;
    case GY_PHYS_CMD_SET_ANGULAR_VELOCITY:
        gy_phys_move_cancel(p, c->key);
        r = be->body_set_angular_velocity(w, e->id, v);
        break;
    case GY_PHYS_CMD_MOVE_KINEMATIC: {
        gy_pose target = {v, unpack_rotation(b->v + 3, b->aux & 3u)};
        r = gy_phys_move_begin(p, (gy_physics_body_ref){c->key, b->generation}, target,
                               b->aux >> 2);
        break;
    }
    case GY_PHYS_CMD_ADD_FORCE:
        r = be->body_add_force(w, e->id, v);
        break;
    case GY_PHYS_CMD_ADD_TORQUE:
        r = be->body_add_torque(w, e->id, v);
        break;
    case GY_PHYS_CMD_ADD_IMPULSE:
        r = be->body_add_impulse(w, e->id, v);
        break;
    case GY_PHYS_CMD_ADD_IMPULSE_AT:
        r = be->body_add_impulse_at(w, e->id, v, gy_v3(b->v[3], b->v[4], b->v[5]));
        break;
    case GY_PHYS_CMD_CHARACTER_INTENT:
        push_input(p, c, b, GY_CHARACTER_INTENT);
        break;
    case GY_PHYS_CMD_CHARACTER_JUMP:
        push_input(p, c, b, GY_CHARACTER_JUMP);
        break;
    case GY_PHYS_CMD_SET_AWAKE:
        r = be->body_set_awake(w, e->id, b->aux != 0);
        break;
    case GY_PHYS_CMD_SET_MASS:
        r = be->body_set_mass(w, e->id, b->v[0]);
        break;
    case GY_PHYS_CMD_SET_MATERIAL: {
        uint32_t slot;
        gy_phys_collider *col = body_collider(p, e, b->aux & 0xffffu, &slot);
        gy_material m = {b->v[0], b->v[1], (gy_combine_mode)((b->aux >> 16) & 0xffu),
                         (gy_combine_mode)(b->aux >> 24)};
        r = col == NULL ? GY_ERR_INVALID_ARGUMENT : GY_OK;
        for (gy_phys_collider *pc = col; pc != NULL && r == GY_OK; pc = next_piece(p, &slot))
            r = be->collider_set_material(w, gy_phys_collider_id(p, slot), &m);
        break;
    }
    case GY_PHYS_CMD_SET_FILTER:
        r = apply_filter(p, c->key, e, b);
        break;
    default:
        r = GY_ERR_INVALID_ARGUMENT;
        break;
    }
    gy_phys_touch(p, c->key);
    gy_phys_add(r == GY_OK ? &p->sh->counters.commands_applied : &p->sh->counters.commands_failed,
                1);
}

void gy_phys_apply_batch(gy_phys_sim *p, gy_command_batch *batch)
{
    uint32_t lifecycle = batch->count[GY_COMMAND_LIFECYCLE];
    bool scratch_ok = lifecycle <= p->scratch_capacity ||
                      gy_array_reserve(p->cfg->alloc, (void **)&p->scratch, &p->scratch_capacity,
                                       lifecycle, sizeof *p->scratch) == GY_OK;
    gy_command *c;
    gy_command_ring ring;
    gy_command *first_mutate = NULL;
    if (!scratch_ok) {
        /* No room to look ahead: apply in order (a create released later in the batch is created
         * and released, which is correct, only wasteful). */
        while ((c = gy_command_batch_next(batch, &ring)) != NULL) {
            if (ring == GY_COMMAND_MUTATE) {
                first_mutate = c;
                break;
            }
            apply_lifecycle(p, c, false);
        }
    } else {
        uint32_t n = 0, creates = 0, releases = 0;
        while ((c = gy_command_batch_next(batch, &ring)) != NULL) {
            if (ring == GY_COMMAND_MUTATE) {
                first_mutate = c;
                break;
            }
            p->scratch[n++] = c;
            creates += c->type == GY_PHYS_CMD_CREATE_BODY;
            releases += c->type == GY_PHYS_CMD_RELEASE_BODY;
        }
        bool use_set = creates > 0 && releases > 0 && build_release_set(p, releases, n);
        for (uint32_t k = 0; k < n; k++)
            apply_lifecycle(p, p->scratch[k], use_set);
    }
    /* Geometry that fits this tick's budget is ready, and its bodies created, before the
     * batch's changes to them apply. */
    gy_phys_geo_run(p);
    if (first_mutate != NULL) {
        apply_mutate(p, first_mutate);
        while ((c = gy_command_batch_next(batch, NULL)) != NULL)
            apply_mutate(p, c);
    }
}

uint32_t gy_phys_drain(gy_phys_sim *p)
{
    gy_command_batch batch;
    uint32_t n = 0;
    while (gy_command_queue_acquire(p->cfg->commands, &batch)) {
        gy_phys_capture_batch(p, &batch);
        gy_phys_apply_batch(p, &batch);
        gy_command_queue_release(p->cfg->commands, &batch);
        n++;
    }
    if (n > 0)
        p->drained_any = true;
    return n;
}
