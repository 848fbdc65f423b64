/* Commands: the game thread's record functions (validate, then copy into the open batch) and the
 * physics thread's dispatcher (whole batches, lifecycle before mutate), plus the game-side reply
 * filter. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "physics_internal.h"

/* ---- shared helpers -------------------------------------------------------------------------- */

gy_result gy_phys_list_reserve(gy_physics *p, gy_phys_list *l, uint32_t need)
{
    if (need <= l->capacity)
        return GY_OK;
    return gy_array_reserve(p->alloc, (void **)&l->items, &l->capacity, need, sizeof(uint32_t));
}

void gy_phys_list_free(gy_physics *p, gy_phys_list *l)
{
    if (l->items != NULL)
        gy_free(p->alloc, l->items, (size_t)l->capacity * sizeof(uint32_t));
    l->items = NULL;
    l->count = l->capacity = 0;
}

void gy_phys_release_payload(void *ctx, gy_command *cmd)
{
    gy_physics *p = ctx;
    void *payload = gy_command_payload(cmd);
    if (payload != NULL)
        gy_free(p->alloc, payload, *(const size_t *)payload);
}

/* ---- rotation packing (SET_POSE) ------------------------------------------------------------- */

static void pack_rotation(gy_quat q, double out[3], uint32_t *dropped)
{
    double c[4] = {q.x, q.y, q.z, q.w};
    uint32_t big = 0;
    for (uint32_t i = 1; i < 4; i++)
        if (fabs(c[i]) > fabs(c[big]))
            big = i;
    /* q and -q are the same rotation: make the dropped component positive. */
    double sign = c[big] < 0.0 ? -1.0 : 1.0;
    for (uint32_t i = 0, k = 0; i < 4; i++)
        if (i != big)
            out[k++] = c[i] * sign;
    *dropped = big;
}

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

/* ---- game side ------------------------------------------------------------------------------- */

static uint32_t mirror_get(const gy_physics *p, uint32_t store_index)
{
    return store_index < p->mirror_capacity ? p->mirror[store_index] : 0u;
}

static gy_result mirror_reserve(gy_physics *p, uint32_t need)
{
    if (need <= p->mirror_capacity)
        return GY_OK;
    uint32_t cap = p->mirror_capacity ? p->mirror_capacity : 64u;
    while (cap < need)
        cap = cap > UINT32_MAX / 2u ? need : cap * 2u;
    uint32_t *m = gy_realloc(p->alloc, p->mirror, (size_t)p->mirror_capacity * sizeof(uint32_t),
                             (size_t)cap * sizeof(uint32_t));
    if (m == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memset(m + p->mirror_capacity, 0, (size_t)(cap - p->mirror_capacity) * sizeof(uint32_t));
    p->mirror = m;
    p->mirror_capacity = cap;
    return GY_OK;
}

gy_result gy_phys_mirror_reset(gy_physics *p, const gy_physics_bootstrap *b)
{
    uint32_t need = 0;
    for (uint32_t i = 0; b != NULL && i < b->body_count; i++)
        if (b->bodies[i].store_index + 1u > need)
            need = b->bodies[i].store_index + 1u;
    gy_result r = mirror_reserve(p, need);
    if (r != GY_OK)
        return r;
    if (p->mirror_capacity > 0)
        memset(p->mirror, 0, (size_t)p->mirror_capacity * sizeof(uint32_t));
    for (uint32_t i = 0; b != NULL && i < b->body_count; i++)
        p->mirror[b->bodies[i].store_index] = b->bodies[i].attachment;
    return GY_OK;
}

gy_result gy_phys_validate_body_def(const gy_physics_body_def *d)
{
    if (d == NULL || d->store_index >= GY_PHYSICS_MAX_STORE_INDEX || d->attachment == 0 ||
        d->colliders == NULL || d->collider_count == 0 || d->collider_count > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    /* Positions and velocities are held to GY_PHYSICS_MAX_MAGNITUDE there. */
    gy_result r = gy_validate_body_def(&d->def);
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < d->collider_count; i++) {
        const gy_collider_def *c = &d->colliders[i];
        r = gy_validate_collider_def(c, d->def.type);
        if (r != GY_OK)
            return r;
        if ((c->shape.type == GY_SHAPE_HULL || c->shape.type == GY_SHAPE_MESH) &&
            c->shape.resource.bits >= GY_PHYSICS_MAX_STORE_INDEX)
            return GY_ERR_INVALID_ARGUMENT;
    }
    if (d->character != NULL) {
        /* The controller moves one kinematic capsule by its pose. */
        r = gy_validate_character_def(d->character);
        if (r != GY_OK)
            return r;
        if (d->def.type != GY_MOTION_KINEMATIC || d->collider_count != 1 ||
            d->colliders[0].shape.type != GY_SHAPE_CAPSULE)
            return GY_ERR_INVALID_ARGUMENT;
    }
    return GY_OK;
}

gy_result gy_phys_validate_joint_def(const gy_physics_joint_def *d)
{
    if (d == NULL || d->joint_key >= GY_PHYSICS_MAX_STORE_INDEX || d->a_attachment == 0 ||
        d->a_store >= GY_PHYSICS_MAX_STORE_INDEX ||
        (d->b_attachment != 0 && d->b_store >= GY_PHYSICS_MAX_STORE_INDEX) ||
        (d->b_attachment != 0 && d->b_store == d->a_store))
        return GY_ERR_INVALID_ARGUMENT;
    /* The adapter ids are filled on the physics thread; stand-ins let the shared check run. */
    gy_joint_def def = d->def;
    def.a.bits = 1;
    def.b.bits = d->b_attachment != 0 ? 2 : 0;
    return gy_validate_joint_def(&def);
}

gy_result gy_phys_validate_resource_def(const gy_physics_resource_def *d)
{
    if (d == NULL || d->resource_key == 0 || d->resource_key >= GY_PHYSICS_MAX_STORE_INDEX ||
        (d->mesh == NULL) == (d->hull == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    return d->mesh != NULL ? gy_validate_mesh_def(d->mesh) : gy_validate_hull_def(d->hull);
}

static gy_result game_ready(const gy_physics *p)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return p->running ? GY_OK : GY_ERR_MISUSE;
}

static gy_result record_payload(gy_physics *p, uint16_t type, uint32_t key, void *payload,
                                uint32_t attachment)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.key = key;
    memcpy(c.body.payload.rest, &attachment, sizeof attachment);
    gy_command_set_payload(&c, payload);
    gy_result r = gy_command_queue_record(p->commands, GY_COMMAND_LIFECYCLE, &c);
    if (r != GY_OK)
        gy_free(p->alloc, payload, *(const size_t *)payload);
    return r;
}

static gy_result record_plain(gy_physics *p, gy_command_ring ring, uint16_t type, uint32_t key,
                              const gy_phys_cmd_body *body)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.key = key;
    memcpy(c.body.bytes, body, sizeof *body);
    return gy_command_queue_record(p->commands, ring, &c);
}

gy_result gy_physics_record_create_body(gy_physics *p, const gy_physics_body_def *desc)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_body_def(desc);
    if (r != GY_OK)
        return r;
    if (mirror_get(p, desc->store_index) != 0)
        return GY_ERR_MISUSE;
    r = mirror_reserve(p, desc->store_index + 1u);
    if (r != GY_OK)
        return r;
    size_t size =
        sizeof(gy_phys_body_payload) + (size_t)desc->collider_count * sizeof(gy_collider_def);
    gy_phys_body_payload *pl = gy_alloc(p->alloc, size);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    pl->size = size;
    pl->attachment = desc->attachment;
    pl->collider_count = desc->collider_count;
    pl->is_character = desc->character != NULL;
    pl->start_asleep = desc->start_asleep;
    if (pl->is_character)
        pl->character = *desc->character;
    else
        memset(&pl->character, 0, sizeof pl->character);
    pl->def = desc->def;
    memcpy(pl->colliders, desc->colliders, (size_t)desc->collider_count * sizeof(gy_collider_def));
    r = record_payload(p, GY_PHYS_CMD_CREATE_BODY, desc->store_index, pl, desc->attachment);
    if (r == GY_OK)
        p->mirror[desc->store_index] = desc->attachment;
    return r;
}

gy_result gy_physics_record_release_body(gy_physics *p, uint32_t store_index, uint32_t attachment)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (store_index >= GY_PHYSICS_MAX_STORE_INDEX || attachment == 0)
        return GY_ERR_INVALID_ARGUMENT;
    if (mirror_get(p, store_index) != attachment)
        return GY_ERR_STALE_HANDLE;
    gy_phys_cmd_body b = {.attachment = attachment};
    r = record_plain(p, GY_COMMAND_LIFECYCLE, GY_PHYS_CMD_RELEASE_BODY, store_index, &b);
    if (r == GY_OK)
        p->mirror[store_index] = 0;
    return r;
}

gy_result gy_physics_record_create_joint(gy_physics *p, const gy_physics_joint_def *desc)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_joint_def(desc);
    if (r != GY_OK)
        return r;
    if (mirror_get(p, desc->a_store) != desc->a_attachment ||
        (desc->b_attachment != 0 && mirror_get(p, desc->b_store) != desc->b_attachment))
        return GY_ERR_STALE_HANDLE;
    gy_phys_joint_payload *pl = gy_alloc(p->alloc, sizeof *pl);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    pl->size = sizeof *pl;
    pl->desc = *desc;
    return record_payload(p, GY_PHYS_CMD_CREATE_JOINT, desc->joint_key, pl, 0);
}

gy_result gy_physics_record_release_joint(gy_physics *p, uint32_t joint_key)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (joint_key >= GY_PHYSICS_MAX_STORE_INDEX)
        return GY_ERR_INVALID_ARGUMENT;
    gy_phys_cmd_body b = {0};
    return record_plain(p, GY_COMMAND_LIFECYCLE, GY_PHYS_CMD_RELEASE_JOINT, joint_key, &b);
}

gy_result gy_physics_record_set_motor(gy_physics *p, uint32_t joint_key,
                                      const gy_joint_motor *motor)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_validate_joint_motor(motor);
    if (r != GY_OK)
        return r;
    if (joint_key >= GY_PHYSICS_MAX_STORE_INDEX || fabs(motor->target) > GY_PHYSICS_MAX_MAGNITUDE ||
        fabs(motor->max_force) > GY_PHYSICS_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    gy_phys_cmd_body b = {
        .attachment = 0, .aux = (uint32_t)motor->mode, .v = {motor->target, motor->max_force}};
    return record_plain(p, GY_COMMAND_MUTATE, GY_PHYS_CMD_SET_MOTOR, joint_key, &b);
}

gy_result gy_physics_record_create_resource(gy_physics *p, const gy_physics_resource_def *desc)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_resource_def(desc);
    if (r != GY_OK)
        return r;
    uint32_t vc = desc->mesh != NULL ? desc->mesh->vertex_count : desc->hull->point_count;
    uint32_t ic = desc->mesh != NULL ? desc->mesh->index_count : 0u;
    size_t size = sizeof(gy_phys_resource_payload) + (size_t)vc * sizeof(gy_vec3) +
                  (size_t)ic * sizeof(uint32_t);
    gy_phys_resource_payload *pl = gy_alloc(p->alloc, size);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    pl->size = size;
    pl->is_mesh = desc->mesh != NULL;
    pl->vertex_count = vc;
    pl->index_count = ic;
    pl->reserved = 0;
    memcpy(pl->vertices, desc->mesh != NULL ? desc->mesh->vertices : desc->hull->points,
           (size_t)vc * sizeof(gy_vec3));
    if (ic > 0)
        memcpy(pl->vertices + vc, desc->mesh->indices, (size_t)ic * sizeof(uint32_t));
    return record_payload(p, GY_PHYS_CMD_CREATE_RESOURCE, desc->resource_key, pl, 0);
}

gy_result gy_physics_record_release_resource(gy_physics *p, uint32_t resource_key)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (resource_key == 0 || resource_key >= GY_PHYSICS_MAX_STORE_INDEX)
        return GY_ERR_INVALID_ARGUMENT;
    gy_phys_cmd_body b = {0};
    return record_plain(p, GY_COMMAND_LIFECYCLE, GY_PHYS_CMD_RELEASE_RESOURCE, resource_key, &b);
}

/* Checks the target and records a mutate command carrying `n` doubles. */
static gy_result record_mutate(gy_physics *p, uint16_t type, uint32_t store_index,
                               uint32_t attachment, uint32_t aux, const double *v, uint32_t n)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (store_index >= GY_PHYSICS_MAX_STORE_INDEX || attachment == 0)
        return GY_ERR_INVALID_ARGUMENT;
    gy_phys_cmd_body b = {.attachment = attachment, .aux = aux};
    for (uint32_t i = 0; i < n; i++) {
        if (!gy_is_finite(v[i]))
            return GY_ERR_NON_FINITE;
        if (fabs(v[i]) > GY_PHYSICS_MAX_MAGNITUDE)
            return GY_ERR_INVALID_ARGUMENT;
        b.v[i] = v[i];
    }
    if (mirror_get(p, store_index) != attachment)
        return GY_ERR_STALE_HANDLE;
    return record_plain(p, GY_COMMAND_MUTATE, type, store_index, &b);
}

static gy_result record_vec(gy_physics *p, uint16_t type, uint32_t s, uint32_t a, gy_vec3 v)
{
    double d[3] = {v.x, v.y, v.z};
    return record_mutate(p, type, s, a, 0, d, 3);
}

gy_result gy_physics_record_set_pose(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                     gy_pose pose)
{
    gy_result r = gy_validate_pose(pose);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    double d[6] = {pose.position.x, pose.position.y, pose.position.z};
    uint32_t dropped;
    pack_rotation(gy_quat_normalize(pose.rotation), d + 3, &dropped);
    return record_mutate(p, GY_PHYS_CMD_SET_POSE, store_index, attachment, dropped, d, 6);
}

gy_result gy_physics_record_move_kinematic(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                           gy_pose target, uint32_t steps)
{
    gy_result r = gy_validate_pose(target);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    if (steps == 0 || steps > GY_PHYS_MAX_MOVE_STEPS)
        return GY_ERR_INVALID_ARGUMENT;
    double d[6] = {target.position.x, target.position.y, target.position.z};
    uint32_t dropped;
    pack_rotation(gy_quat_normalize(target.rotation), d + 3, &dropped);
    return record_mutate(p, GY_PHYS_CMD_MOVE_KINEMATIC, store_index, attachment,
                         dropped | steps << 2, d, 6);
}

uint32_t gy_physics_steps_for(const gy_physics *p, double seconds)
{
    if (p == NULL || !gy_is_finite(seconds) || seconds < 0.0)
        return 0;
    /* The slack keeps whole-tick durations (0.5 s at 60 Hz) from rounding up a step. */
    double n = ceil(seconds * (double)p->step_hz - 1e-6);
    if (n > (double)GY_PHYS_MAX_MOVE_STEPS)
        return 0;
    return n < 1.0 ? 1u : (uint32_t)n;
}

gy_result gy_physics_record_set_linear_velocity(gy_physics *p, uint32_t store_index,
                                                uint32_t attachment, gy_vec3 v)
{
    return record_vec(p, GY_PHYS_CMD_SET_LINEAR_VELOCITY, store_index, attachment, v);
}

gy_result gy_physics_record_set_angular_velocity(gy_physics *p, uint32_t store_index,
                                                 uint32_t attachment, gy_vec3 w)
{
    return record_vec(p, GY_PHYS_CMD_SET_ANGULAR_VELOCITY, store_index, attachment, w);
}

gy_result gy_physics_record_add_force(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                      gy_vec3 force)
{
    return record_vec(p, GY_PHYS_CMD_ADD_FORCE, store_index, attachment, force);
}

gy_result gy_physics_record_add_torque(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                       gy_vec3 torque)
{
    return record_vec(p, GY_PHYS_CMD_ADD_TORQUE, store_index, attachment, torque);
}

gy_result gy_physics_record_add_impulse(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                        gy_vec3 impulse)
{
    return record_vec(p, GY_PHYS_CMD_ADD_IMPULSE, store_index, attachment, impulse);
}

gy_result gy_physics_record_add_impulse_at(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                           gy_vec3 impulse, gy_vec3 world_point)
{
    double d[6] = {impulse.x, impulse.y, impulse.z, world_point.x, world_point.y, world_point.z};
    return record_mutate(p, GY_PHYS_CMD_ADD_IMPULSE_AT, store_index, attachment, 0, d, 6);
}

gy_result gy_physics_record_character_intent(gy_physics *p, uint32_t store_index,
                                             uint32_t attachment, gy_vec3 velocity, uint32_t flags)
{
    double d[3] = {velocity.x, velocity.y, velocity.z};
    return record_mutate(p, GY_PHYS_CMD_CHARACTER_INTENT, store_index, attachment, flags, d, 3);
}

gy_result gy_physics_record_character_jump(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                           double speed)
{
    return record_mutate(p, GY_PHYS_CMD_CHARACTER_JUMP, store_index, attachment, 0, &speed, 1);
}

gy_result gy_physics_record_set_awake(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                      bool awake)
{
    return record_mutate(p, GY_PHYS_CMD_SET_AWAKE, store_index, attachment, awake ? 1u : 0u, NULL,
                         0);
}

gy_result gy_physics_record_set_mass(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                     double mass)
{
    if (gy_is_finite(mass) && !(mass > 0.0))
        return GY_ERR_INVALID_ARGUMENT;
    return record_mutate(p, GY_PHYS_CMD_SET_MASS, store_index, attachment, 0, &mass, 1);
}

gy_result gy_physics_record_set_material(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                         uint32_t collider, const gy_material *material)
{
    gy_result r = gy_validate_material(material);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    if (collider > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t aux = collider | (uint32_t)material->friction_combine << 16 |
                   (uint32_t)material->restitution_combine << 24;
    double d[2] = {material->friction, material->restitution};
    return record_mutate(p, GY_PHYS_CMD_SET_MATERIAL, store_index, attachment, aux, d, 2);
}

gy_result gy_physics_record_set_filter(gy_physics *p, uint32_t store_index, uint32_t attachment,
                                       uint32_t collider, uint32_t category, uint32_t mask)
{
    if (collider > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    /* Exact in a double: every 32-bit integer is. */
    double d[2] = {(double)category, (double)mask};
    return record_mutate(p, GY_PHYS_CMD_SET_FILTER, store_index, attachment, collider, d, 2);
}

gy_vec3 gy_physics_gravity(const gy_physics *p)
{
    return p != NULL ? p->world_def.gravity : gy_v3(0.0, 0.0, 0.0);
}

gy_result gy_physics_record_set_gravity(gy_physics *p, gy_vec3 gravity)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result valid = gy_validate_vector(gravity, GY_MAX_MAGNITUDE);
    if (valid != GY_OK)
        return valid;
    if (!p->running) {
        /* No thread owns the character set while stopped; the next start reads world_def. */
        p->world_def.gravity = gravity;
        return gy_character_group_set_gravity(p->characters, gravity);
    }
    gy_phys_cmd_body b = {.attachment = 0, .aux = 0, .v = {gravity.x, gravity.y, gravity.z}};
    gy_result r = record_plain(p, GY_COMMAND_MUTATE, GY_PHYS_CMD_SET_GRAVITY, 0, &b);
    if (r == GY_OK)
        p->world_def.gravity = gravity;
    return r;
}

gy_result gy_physics_publish(gy_physics *p, uint64_t *seq)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (p->replaying) {
        /* Replay: the recorded batches stand in for the game's. */
        gy_command_queue_discard_open(p->commands);
        if (seq != NULL)
            *seq = gy_command_queue_published(p->commands);
        return GY_OK;
    }
    return gy_command_queue_publish(p->commands, seq);
}

/* ---- game side: replies ---------------------------------------------------------------------- */

typedef struct reply_filter {
    gy_physics *p;
    gy_reply_fn fn;
    void *ctx;
    uint16_t generation;
    uint32_t passed;
    uint64_t rejected;
} reply_filter;

static void filter_reply(void *ctx, const gy_reply *r)
{
    reply_filter *f = ctx;
    bool ok = true;
    switch (r->type) {
    case GY_PHYSICS_REPLY_COLLISION_ENTER:
    case GY_PHYSICS_REPLY_COLLISION_STAY:
    case GY_PHYSICS_REPLY_COLLISION_EXIT:
        break;
    case GY_PHYSICS_REPLY_BODY_ASSIGNED:
    case GY_PHYSICS_REPLY_BODY_FAULT:
        ok = r->flags == f->generation &&
             mirror_get(f->p, r->key) == gy_reply_as_body(r)->attachment;
        break;
    case GY_PHYSICS_REPLY_CREATE_FAILED: {
        const gy_physics_failure_reply *fr = gy_reply_as_failure(r);
        ok = r->flags == f->generation &&
             (fr->kind != GY_PHYSICS_OBJECT_BODY || mirror_get(f->p, r->key) == fr->attachment);
        break;
    }
    default:
        ok = r->flags == f->generation;
        break;
    }
    if (!ok) {
        f->rejected++;
        return;
    }
    f->passed++;
    f->fn(f->ctx, r);
}

uint32_t gy_physics_drain_replies_at_most(gy_physics *p, uint32_t max, gy_reply_fn fn, void *ctx,
                                          uint32_t *taken)
{
    if (taken != NULL)
        *taken = 0;
    if (p == NULL || fn == NULL)
        return 0;
    reply_filter f = {p, fn, ctx, (uint16_t)__atomic_load_n(&p->generation, __ATOMIC_RELAXED),
                      0, 0};
    gy_reply chunk[32];
    uint32_t total = 0;
    while (total < max) {
        uint32_t want = max - total < 32u ? max - total : 32u;
        uint32_t n = gy_reply_queue_pop(p->replies, chunk, want);
        for (uint32_t i = 0; i < n; i++)
            filter_reply(&f, &chunk[i]);
        total += n;
        if (n < want)
            break;
    }
    if (f.rejected != 0)
        gy_phys_add(&p->replies_rejected, f.rejected);
    if (taken != NULL)
        *taken = total;
    return f.passed;
}

uint32_t gy_physics_drain_replies(gy_physics *p, gy_reply_fn fn, void *ctx)
{
    if (p == NULL || fn == NULL)
        return 0;
    reply_filter f = {p, fn, ctx, (uint16_t)__atomic_load_n(&p->generation, __ATOMIC_RELAXED),
                      0, 0};
    gy_reply_queue_drain(p->replies, filter_reply, &f);
    if (f.rejected != 0)
        gy_phys_add(&p->replies_rejected, f.rejected);
    return f.passed;
}

/* ---- physics side: dispatch ------------------------------------------------------------------ */

static bool set_contains(const gy_physics *p, uint32_t v)
{
    const uint32_t *items = p->release_set.items;
    uint32_t mask = p->release_mask;
    for (uint32_t i = (v * 2654435761u) & mask;; i = (i + 1u) & mask) {
        if (items[i] == v)
            return true;
        if (items[i] == 0)
            return false;
    }
}

/* Builds the set of attachments released in this batch: open addressing over the smallest power
 * of two at least twice the releases (the array itself is kept at its peak size). */
static bool build_release_set(gy_physics *p, uint32_t releases, uint32_t n)
{
    gy_phys_list *set = &p->release_set;
    uint32_t cap = 16u;
    while (cap < releases * 2u)
        cap *= 2u;
    if (gy_phys_list_reserve(p, set, cap) != GY_OK)
        return false;
    memset(set->items, 0, (size_t)cap * sizeof(uint32_t));
    p->release_mask = cap - 1u;
    for (uint32_t k = 0; k < n; k++) {
        const gy_command *c = p->scratch[k];
        if (c->type != GY_PHYS_CMD_RELEASE_BODY)
            continue;
        uint32_t v = ((const gy_phys_cmd_body *)(const void *)c->body.bytes)->attachment;
        uint32_t i = (v * 2654435761u) & p->release_mask;
        while (set->items[i] != 0 && set->items[i] != v)
            i = (i + 1u) & p->release_mask;
        set->items[i] = v;
    }
    return true;
}

static void apply_lifecycle(gy_physics *p, gy_command *c, bool use_set)
{
    switch (c->type) {
    case GY_PHYS_CMD_CREATE_BODY: {
        const gy_phys_body_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->counters.commands_failed, 1);
            return;
        }
        if (use_set && set_contains(p, pl->attachment)) {
            gy_phys_add(&p->counters.creates_cancelled, 1);
            return;
        }
        gy_phys_create_body(p, c->key, pl->attachment, &pl->def, pl->colliders, pl->collider_count,
                            pl->is_character ? &pl->character : NULL, pl->start_asleep);
        break;
    }
    case GY_PHYS_CMD_RELEASE_BODY: {
        uint32_t att = ((const gy_phys_cmd_body *)(const void *)c->body.bytes)->attachment;
        if (!gy_phys_release_body(p, c->key, att)) {
            /* The partner of a cancelled create is expected to find nothing. */
            if (!(use_set && set_contains(p, att)))
                gy_phys_add(&p->counters.commands_dropped_stale, 1);
            return;
        }
        break;
    }
    case GY_PHYS_CMD_CREATE_JOINT: {
        gy_phys_joint_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->counters.commands_failed, 1);
            return;
        }
        pl->desc.joint_key = c->key;
        gy_phys_create_joint(p, &pl->desc);
        break;
    }
    case GY_PHYS_CMD_RELEASE_JOINT:
        gy_phys_release_joint(p, c->key);
        break;
    case GY_PHYS_CMD_CREATE_RESOURCE: {
        const gy_phys_resource_payload *pl = gy_command_payload(c);
        if (pl == NULL) {
            gy_phys_add(&p->counters.commands_failed, 1);
            return;
        }
        gy_phys_create_resource(p, c->key, pl->is_mesh != 0, pl->vertices, pl->vertex_count,
                                (const uint32_t *)(const void *)(pl->vertices + pl->vertex_count),
                                pl->index_count);
        break;
    }
    case GY_PHYS_CMD_RELEASE_RESOURCE:
        gy_phys_release_resource(p, c->key);
        break;
    default:
        gy_phys_add(&p->counters.commands_failed, 1);
        return;
    }
    gy_phys_add(&p->counters.commands_applied, 1);
}

static void push_input(gy_physics *p, const gy_command *c, const gy_phys_cmd_body *b, uint32_t kind)
{
    if (p->input_count == p->input_capacity &&
        gy_array_reserve(p->alloc, (void **)&p->inputs, &p->input_capacity, p->input_count + 1u,
                         sizeof *p->inputs) != GY_OK) {
        gy_phys_add(&p->counters.commands_failed, 1);
        return;
    }
    gy_physics_character_input *in = &p->inputs[p->input_count++];
    in->store_index = c->key;
    in->attachment = b->attachment;
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

/* The adapter handle of collider `index` of body `e` (its create-list order), or NULL. */
static gy_phys_collider *body_collider(gy_physics *p, const gy_phys_body *e, uint32_t index,
                                       uint32_t *slot_out)
{
    if (index >= e->collider_count)
        return NULL;
    uint32_t slot = e->first_collider;
    for (uint32_t i = 0; i < index && slot != GY_PHYS_NONE; i++)
        slot = p->colliders[slot].next;
    if (slot == GY_PHYS_NONE)
        return NULL;
    *slot_out = slot;
    return &p->colliders[slot];
}

/* World gravity: the adapter wakes every body under it, so every movable body is read back. */
static void apply_gravity(gy_physics *p, const gy_command *c)
{
    const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
    gy_vec3 g = gy_v3(b->v[0], b->v[1], b->v[2]);
    if (gy_validate_vector(g, GY_MAX_MAGNITUDE) != GY_OK ||
        p->backend->set_gravity(p->world, g) != GY_OK) {
        gy_phys_add(&p->counters.commands_failed, 1);
        return;
    }
    gy_character_group_set_gravity(p->characters, g);
    for (uint32_t s = 0; s < p->body_count; s++)
        if (p->bodies[s].id.bits != 0 && p->bodies[s].motion != GY_MOTION_STATIC)
            gy_phys_touch(p, s);
    gy_phys_add(&p->counters.commands_applied, 1);
}

static gy_result apply_filter(gy_physics *p, uint32_t store_index, const gy_phys_body *e,
                              const gy_phys_cmd_body *b)
{
    uint32_t slot;
    gy_phys_collider *col = body_collider(p, e, b->aux, &slot);
    if (col == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t category = (uint32_t)b->v[0], mask = (uint32_t)b->v[1];
    gy_result r = p->backend->collider_set_filter(p->world, col->id, category, mask);
    if (r != GY_OK)
        return r;
    col->mask = mask;
    if (col->in_snapshot)
        gy_query_snapshot_set_category(p->snapshot, slot, category);
    for (uint32_t i = 0; e->character && i < p->char_count; i++) {
        gy_phys_character *ch = &p->chars[i];
        if (ch->store_index == store_index && ch->collider.bits == col->id.bits) {
            ch->category = category;
            ch->mask = mask;
        }
    }
    return GY_OK;
}

/* A joint's motor: the adapter checks the decoded fields again (gy_validate_joint_motor). */
static void apply_motor(gy_physics *p, const gy_command *c)
{
    const gy_phys_cmd_body *b = (const gy_phys_cmd_body *)(const void *)c->body.bytes;
    if (c->key >= p->joint_count || !p->joints[c->key].live) {
        gy_phys_add(&p->counters.commands_dropped_stale, 1);
        return;
    }
    gy_phys_joint *j = &p->joints[c->key];
    gy_joint_motor m = {
        (gy_motor_mode)(b->aux < GY_MOTOR_MODE_COUNT ? b->aux : GY_MOTOR_MODE_COUNT), b->v[0],
        b->v[1]};
    gy_result r = p->backend->joint_set_motor(p->world, j->id, &m);
    if (r == GY_OK) {
        gy_phys_touch(p, j->a_store);
        if (j->b_store != GY_PHYS_NONE)
            gy_phys_touch(p, j->b_store);
    }
    gy_phys_add(r == GY_OK ? &p->counters.commands_applied : &p->counters.commands_failed, 1);
}

static void apply_mutate(gy_physics *p, const gy_command *c)
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
    gy_phys_body *e = gy_phys_body_at(p, c->key, b->attachment);
    if (e == NULL) {
        gy_phys_add(&p->counters.commands_dropped_stale, 1);
        return;
    }
    if (!mutate_fields_ok(c, b)) {
        gy_phys_add(&p->counters.commands_failed, 1);
        return;
    }
    const gy_backend *be = p->backend;
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
            if (gy_phys_list_push(p, &p->disturbed, c->key) != GY_OK)
                gy_log(p->logger, GY_LOG_WARN, "physics: wake scan list could not grow");
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
        r = gy_phys_move_begin(p, c->key, b->attachment, target, b->aux >> 2);
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
        r = col == NULL ? GY_ERR_INVALID_ARGUMENT : be->collider_set_material(w, col->id, &m);
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
    gy_phys_add(r == GY_OK ? &p->counters.commands_applied : &p->counters.commands_failed, 1);
}

void gy_phys_apply_batch(gy_physics *p, gy_command_batch *batch)
{
    uint32_t lifecycle = batch->count[GY_COMMAND_LIFECYCLE];
    bool scratch_ok = lifecycle <= p->scratch_capacity ||
                      gy_array_reserve(p->alloc, (void **)&p->scratch, &p->scratch_capacity,
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
    if (first_mutate != NULL) {
        apply_mutate(p, first_mutate);
        while ((c = gy_command_batch_next(batch, NULL)) != NULL)
            apply_mutate(p, c);
    }
}

uint32_t gy_phys_drain(gy_physics *p)
{
    gy_command_batch batch;
    uint32_t n = 0;
    while (gy_command_queue_acquire(p->commands, &batch)) {
        gy_phys_capture_batch(p, &batch);
        gy_phys_apply_batch(p, &batch);
        gy_command_queue_release(p->commands, &batch);
        n++;
    }
    if (n > 0)
        p->drained_any = true;
    return n;
}
