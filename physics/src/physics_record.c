/* Recording commands (game thread): the record functions validate, then copy into the open
 * batch; the game side's pool of body refs; the game-side reply filter. */
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "physics_state.h"

void gy_phys_release_payload(void *ctx, gy_command *cmd)
{
    gy_physics *p = ctx;
    void *payload = gy_command_payload(cmd);
    if (payload != NULL)
        gy_free(p->cfg.alloc, payload, *(const size_t *)payload);
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

/* ---- game side ------------------------------------------------------------------------------- */

/* A pool of refs (bodies', joints', resources'): the generation live at each index (0: free), the
 * next generation to issue, and the lowest index that may be free. Indices are issued lowest free
 * first, so the tables and proxy arrays indexed by them stay as dense as the live set. */
static uint32_t ids_live(const gy_phys_ids *ids, uint32_t index)
{
    return index < ids->capacity ? ids->live[index] : 0u;
}

/* Whether (index, generation) is the live ref at its index (a null ref never is). */
static bool ids_is_live(const gy_phys_ids *ids, uint32_t index, uint32_t generation)
{
    return generation != 0 && ids_live(ids, index) == generation;
}

static bool body_is_live(const gy_phys_game *p, gy_physics_body_ref ref)
{
    return ids_is_live(&p->ids, ref.index, ref.generation);
}

static bool joint_is_live(const gy_phys_game *p, gy_physics_joint_ref ref)
{
    return ids_is_live(&p->joint_ids, ref.index, ref.generation);
}

static bool resource_is_live(const gy_phys_game *p, gy_physics_resource_ref ref)
{
    return ids_is_live(&p->resource_ids, ref.index, ref.generation);
}

static gy_result ids_reserve(const gy_phys_game *p, gy_phys_ids *ids, uint32_t need)
{
    return gy_phys_table_reserve(p->cfg->alloc, (void **)&ids->live, &ids->capacity, need,
                                 sizeof *ids->live);
}

/* Finds the index the next ref takes (the lowest free one) and makes room for it:
 * GY_ERR_CAPACITY once every generation was issued (never reuse one) or every index is live. */
static gy_result ids_prepare(const gy_phys_game *p, gy_phys_ids *ids, uint32_t *index)
{
    if (ids->next == 0)
        return GY_ERR_CAPACITY;
    uint32_t i = ids->free_from;
    while (i < ids->capacity && ids->live[i] != 0)
        i++;
    ids->free_from = i; /* everything below is live */
    if (i >= GY_PHYSICS_MAX_STORE_INDEX)
        return GY_ERR_CAPACITY;
    *index = i;
    return ids_reserve(p, ids, i + 1u);
}

/* Makes the pool's next generation live at `index` (prepared) and returns it. */
static uint32_t ids_issue(gy_phys_ids *ids, uint32_t index)
{
    uint32_t generation = ids->next;
    ids->live[index] = generation;
    ids->next = generation == UINT32_MAX ? 0u : generation + 1u;
    if (index == ids->free_from)
        ids->free_from = index + 1u;
    return generation;
}

/* Frees `index` for the next ref. */
static void ids_retire(gy_phys_ids *ids, uint32_t index)
{
    ids->live[index] = 0;
    if (index < ids->free_from)
        ids->free_from = index;
}

static void ids_clear(gy_phys_ids *ids)
{
    if (ids->capacity > 0)
        memset(ids->live, 0, (size_t)ids->capacity * sizeof(uint32_t));
    ids->free_from = ids->first;
}

static void ids_free(const gy_phys_game *p, gy_phys_ids *ids)
{
    if (ids->live != NULL)
        gy_free(p->cfg->alloc, ids->live, (size_t)ids->capacity * sizeof(uint32_t));
    ids->live = NULL;
    ids->capacity = 0;
    ids->free_from = ids->first;
}

void gy_phys_ids_clear(gy_phys_game *p)
{
    ids_clear(&p->ids);
    ids_clear(&p->joint_ids);
    ids_clear(&p->resource_ids);
}

void gy_phys_ids_free(gy_phys_game *p)
{
    ids_free(p, &p->ids);
    ids_free(p, &p->joint_ids);
    ids_free(p, &p->resource_ids);
}

/* Issues `n` refs from an empty pool, in list order: indices first, first + 1, ..., generations
 * from the counter on. */
static gy_result ids_issue_list(const gy_phys_game *p, gy_phys_ids *ids, uint32_t n)
{
    if (n == 0)
        return GY_OK;
    if (ids->next == 0 || (uint64_t)ids->next + n - 1u > UINT32_MAX ||
        (uint64_t)ids->first + n > GY_PHYSICS_MAX_STORE_INDEX)
        return GY_ERR_CAPACITY;
    gy_result r = ids_reserve(p, ids, ids->first + n);
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < n; i++)
        ids_issue(ids, ids->first + i);
    return GY_OK;
}

gy_result gy_phys_ids_reset(gy_phys_game *p, const gy_physics_bootstrap *b)
{
    uint32_t bodies = b != NULL ? b->body_count : 0u, joints = b != NULL ? b->joint_count : 0u,
             resources = b != NULL ? b->resource_count : 0u;
    gy_phys_ids_clear(p);
    gy_result r = ids_issue_list(p, &p->ids, bodies);
    if (r == GY_OK)
        r = ids_issue_list(p, &p->joint_ids, joints);
    if (r == GY_OK)
        r = ids_issue_list(p, &p->resource_ids, resources);
    if (r != GY_OK) {
        gy_phys_ids_clear(p);
        return r;
    }
    for (uint32_t i = 0; i < bodies && b->body_refs != NULL; i++)
        b->body_refs[i] = gy_phys_bootstrap_body_ref(p, i);
    for (uint32_t i = 0; i < joints && b->joint_refs != NULL; i++)
        b->joint_refs[i] = gy_phys_bootstrap_joint_ref(p, i);
    for (uint32_t i = 0; i < resources && b->resource_refs != NULL; i++)
        b->resource_refs[i] = gy_phys_bootstrap_resource_ref(p, i);
    return GY_OK;
}

gy_physics_body_ref gy_phys_bootstrap_body_ref(const gy_phys_game *p, uint32_t i)
{
    return (gy_physics_body_ref){p->ids.first + i, p->ids.live[p->ids.first + i]};
}

gy_physics_joint_ref gy_phys_bootstrap_joint_ref(const gy_phys_game *p, uint32_t i)
{
    return (gy_physics_joint_ref){p->joint_ids.first + i,
                                  p->joint_ids.live[p->joint_ids.first + i]};
}

gy_physics_resource_ref gy_phys_bootstrap_resource_ref(const gy_phys_game *p, uint32_t i)
{
    return (gy_physics_resource_ref){p->resource_ids.first + i,
                                     p->resource_ids.live[p->resource_ids.first + i]};
}

gy_result gy_phys_validate_body_def(const gy_physics_body_def *d)
{
    if (d == NULL || d->colliders == NULL || d->collider_count == 0 ||
        d->collider_count > UINT16_MAX)
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
            gy_physics_resource_ref_of_bits(c->shape.resource.bits).index >=
                GY_PHYSICS_MAX_STORE_INDEX)
            return GY_ERR_INVALID_ARGUMENT;
    }
    if (d->character != NULL) {
        /* The controller moves one kinematic capsule by its pose. */
        r = gy_phys_character_validate(d->character);
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
    bool has_b = d != NULL && d->b.generation != 0; /* null (generation 0): the world */
    if (d == NULL || d->a.index >= GY_PHYSICS_MAX_STORE_INDEX ||
        (has_b && d->b.index >= GY_PHYSICS_MAX_STORE_INDEX) || (has_b && d->b.index == d->a.index))
        return GY_ERR_INVALID_ARGUMENT;
    /* The adapter ids are filled on the physics thread; stand-ins let the shared check run. */
    gy_joint_def def = d->def;
    def.a.bits = 1;
    def.b.bits = has_b ? 2 : 0;
    return gy_validate_joint_def(&def);
}

gy_result gy_phys_validate_resource_def(const gy_physics_resource_def *d)
{
    if (d == NULL || (d->mesh == NULL) == (d->hull == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    return d->mesh != NULL ? gy_validate_mesh_def(d->mesh) : gy_validate_hull_def(d->hull);
}

static gy_result game_ready(const gy_physics *p)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return p->game.running ? GY_OK : GY_ERR_MISUSE;
}

static gy_result record_payload(gy_phys_game *p, uint16_t type, uint32_t key, void *payload,
                                uint32_t generation)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.key = key;
    memcpy(c.body.payload.rest, &generation, sizeof generation);
    gy_command_set_payload(&c, payload);
    gy_result r = gy_command_queue_record(p->cfg->commands, GY_COMMAND_LIFECYCLE, &c);
    if (r != GY_OK)
        gy_free(p->cfg->alloc, payload, *(const size_t *)payload);
    return r;
}

static gy_result record_plain(gy_phys_game *p, gy_command_ring ring, uint16_t type, uint32_t key,
                              const gy_phys_cmd_body *body)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.key = key;
    memcpy(c.body.bytes, body, sizeof *body);
    return gy_command_queue_record(p->cfg->commands, ring, &c);
}

/* Records the release of the live object (index, generation) in `ids` and retires its
 * generation on the game side at once, so every later command naming it is refused here. */
static gy_result record_release(gy_physics *p, gy_phys_ids *ids, uint16_t type, uint32_t index,
                                uint32_t generation)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (!ids_is_live(ids, index, generation))
        return GY_ERR_STALE_HANDLE;
    gy_phys_cmd_body b = {.generation = generation};
    r = record_plain(&p->game, GY_COMMAND_LIFECYCLE, type, index, &b);
    if (r == GY_OK)
        ids_retire(ids, index);
    return r;
}

gy_result gy_physics_record_create_body(gy_physics *p, const gy_physics_body_def *desc,
                                        gy_physics_body_ref *out)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_body_def(desc);
    if (r != GY_OK || out == NULL)
        return r != GY_OK ? r : GY_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < desc->collider_count; i++) {
        const gy_shape *s = &desc->colliders[i].shape;
        if ((s->type == GY_SHAPE_HULL || s->type == GY_SHAPE_MESH) &&
            !resource_is_live(&p->game, gy_physics_resource_ref_of_bits(s->resource.bits)))
            return GY_ERR_STALE_HANDLE;
    }
    uint32_t index;
    r = ids_prepare(&p->game, &p->game.ids, &index);
    if (r != GY_OK)
        return r;
    uint32_t generation = p->game.ids.next;
    size_t size =
        sizeof(gy_phys_body_payload) + (size_t)desc->collider_count * sizeof(gy_collider_def);
    gy_phys_body_payload *pl = gy_alloc(p->cfg.alloc, size);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    pl->size = size;
    pl->generation = generation;
    pl->collider_count = desc->collider_count;
    pl->is_character = desc->character != NULL;
    pl->start_asleep = desc->start_asleep;
    if (pl->is_character)
        pl->character = *desc->character;
    else
        memset(&pl->character, 0, sizeof pl->character);
    pl->def = desc->def;
    memcpy(pl->colliders, desc->colliders, (size_t)desc->collider_count * sizeof(gy_collider_def));
    r = record_payload(&p->game, GY_PHYS_CMD_CREATE_BODY, index, pl, generation);
    if (r != GY_OK)
        return r;
    *out = (gy_physics_body_ref){index, ids_issue(&p->game.ids, index)};
    return GY_OK;
}

gy_result gy_physics_record_release_body(gy_physics *p, gy_physics_body_ref body)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return record_release(p, &p->game.ids, GY_PHYS_CMD_RELEASE_BODY, body.index, body.generation);
}

gy_result gy_physics_record_create_joint(gy_physics *p, const gy_physics_joint_def *desc,
                                         gy_physics_joint_ref *out)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_joint_def(desc);
    if (r != GY_OK)
        return r;
    if (!body_is_live(&p->game, desc->a) ||
        (desc->b.generation != 0 && !body_is_live(&p->game, desc->b)))
        return GY_ERR_STALE_HANDLE;
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t index;
    r = ids_prepare(&p->game, &p->game.joint_ids, &index);
    if (r != GY_OK)
        return r;
    gy_phys_joint_payload *pl = gy_alloc(p->cfg.alloc, sizeof *pl);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memset(pl, 0, sizeof *pl); /* the capture writes the payload's bytes */
    pl->size = sizeof *pl;
    pl->desc = *desc;
    pl->generation = p->game.joint_ids.next;
    r = record_payload(&p->game, GY_PHYS_CMD_CREATE_JOINT, index, pl, pl->generation);
    if (r != GY_OK)
        return r;
    *out = (gy_physics_joint_ref){index, ids_issue(&p->game.joint_ids, index)};
    return GY_OK;
}

gy_result gy_physics_record_release_joint(gy_physics *p, gy_physics_joint_ref joint)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return record_release(p, &p->game.joint_ids, GY_PHYS_CMD_RELEASE_JOINT, joint.index,
                          joint.generation);
}

gy_result gy_physics_record_set_motor(gy_physics *p, gy_physics_joint_ref joint,
                                      const gy_joint_motor *motor)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_validate_joint_motor(motor);
    if (r != GY_OK)
        return r;
    if (fabs(motor->target) > GY_PHYSICS_MAX_MAGNITUDE ||
        fabs(motor->max_force) > GY_PHYSICS_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    if (!joint_is_live(&p->game, joint))
        return GY_ERR_STALE_HANDLE;
    gy_phys_cmd_body b = {.generation = joint.generation,
                          .aux = (uint32_t)motor->mode,
                          .v = {motor->target, motor->max_force}};
    return record_plain(&p->game, GY_COMMAND_MUTATE, GY_PHYS_CMD_SET_MOTOR, joint.index, &b);
}

gy_result gy_physics_record_create_resource(gy_physics *p, const gy_physics_resource_def *desc,
                                            gy_physics_resource_ref *out)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    r = gy_phys_validate_resource_def(desc);
    if (r != GY_OK || out == NULL)
        return r != GY_OK ? r : GY_ERR_INVALID_ARGUMENT;
    uint32_t index;
    r = ids_prepare(&p->game, &p->game.resource_ids, &index);
    if (r != GY_OK)
        return r;
    uint32_t vc = desc->mesh != NULL ? desc->mesh->vertex_count : desc->hull->point_count;
    uint32_t ic = desc->mesh != NULL ? desc->mesh->index_count : 0u;
    size_t size = sizeof(gy_phys_resource_payload) + (size_t)vc * sizeof(gy_vec3) +
                  (size_t)ic * sizeof(uint32_t);
    gy_phys_resource_payload *pl = gy_alloc(p->cfg.alloc, size);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    pl->size = size;
    pl->is_mesh = desc->mesh != NULL;
    pl->vertex_count = vc;
    pl->index_count = ic;
    pl->generation = p->game.resource_ids.next;
    memcpy(pl->vertices, desc->mesh != NULL ? desc->mesh->vertices : desc->hull->points,
           (size_t)vc * sizeof(gy_vec3));
    if (ic > 0)
        memcpy(pl->vertices + vc, desc->mesh->indices, (size_t)ic * sizeof(uint32_t));
    r = record_payload(&p->game, GY_PHYS_CMD_CREATE_RESOURCE, index, pl, pl->generation);
    if (r != GY_OK)
        return r;
    *out = (gy_physics_resource_ref){index, ids_issue(&p->game.resource_ids, index)};
    return GY_OK;
}

gy_result gy_physics_record_release_resource(gy_physics *p, gy_physics_resource_ref resource)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return record_release(p, &p->game.resource_ids, GY_PHYS_CMD_RELEASE_RESOURCE, resource.index,
                          resource.generation);
}

/* Checks the target and records a mutate command carrying `n` doubles. */
static gy_result record_mutate(gy_physics *p, uint16_t type, gy_physics_body_ref body, uint32_t aux,
                               const double *v, uint32_t n)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    gy_phys_cmd_body b = {.generation = body.generation, .aux = aux};
    for (uint32_t i = 0; i < n; i++) {
        if (!gy_is_finite(v[i]))
            return GY_ERR_NON_FINITE;
        if (fabs(v[i]) > GY_PHYSICS_MAX_MAGNITUDE)
            return GY_ERR_INVALID_ARGUMENT;
        b.v[i] = v[i];
    }
    if (!body_is_live(&p->game, body))
        return GY_ERR_STALE_HANDLE;
    return record_plain(&p->game, GY_COMMAND_MUTATE, type, body.index, &b);
}

static gy_result record_vec(gy_physics *p, uint16_t type, gy_physics_body_ref body, gy_vec3 v)
{
    double d[3] = {v.x, v.y, v.z};
    return record_mutate(p, type, body, 0, d, 3);
}

gy_result gy_physics_record_set_pose(gy_physics *p, gy_physics_body_ref body, gy_pose pose)
{
    gy_result r = gy_validate_pose(pose);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    double d[6] = {pose.position.x, pose.position.y, pose.position.z};
    uint32_t dropped;
    pack_rotation(gy_quat_normalize(pose.rotation), d + 3, &dropped);
    return record_mutate(p, GY_PHYS_CMD_SET_POSE, body, dropped, d, 6);
}

gy_result gy_physics_record_move_kinematic(gy_physics *p, gy_physics_body_ref body, gy_pose target,
                                           uint32_t steps)
{
    gy_result r = gy_validate_pose(target);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    if (steps == 0 || steps > GY_PHYS_MAX_MOVE_STEPS)
        return GY_ERR_INVALID_ARGUMENT;
    double d[6] = {target.position.x, target.position.y, target.position.z};
    uint32_t dropped;
    pack_rotation(gy_quat_normalize(target.rotation), d + 3, &dropped);
    return record_mutate(p, GY_PHYS_CMD_MOVE_KINEMATIC, body, dropped | steps << 2, d, 6);
}

uint32_t gy_physics_steps_for(const gy_physics *p, double seconds)
{
    if (p == NULL || !gy_is_finite(seconds) || seconds < 0.0)
        return 0;
    /* The slack keeps whole-tick durations (0.5 s at 60 Hz) from rounding up a step. */
    double n = ceil(seconds * (double)p->cfg.step_hz - 1e-6);
    if (n > (double)GY_PHYS_MAX_MOVE_STEPS)
        return 0;
    return n < 1.0 ? 1u : (uint32_t)n;
}

gy_result gy_physics_record_set_linear_velocity(gy_physics *p, gy_physics_body_ref body, gy_vec3 v)
{
    return record_vec(p, GY_PHYS_CMD_SET_LINEAR_VELOCITY, body, v);
}

gy_result gy_physics_record_set_angular_velocity(gy_physics *p, gy_physics_body_ref body, gy_vec3 w)
{
    return record_vec(p, GY_PHYS_CMD_SET_ANGULAR_VELOCITY, body, w);
}

gy_result gy_physics_record_add_force(gy_physics *p, gy_physics_body_ref body, gy_vec3 force)
{
    return record_vec(p, GY_PHYS_CMD_ADD_FORCE, body, force);
}

gy_result gy_physics_record_add_torque(gy_physics *p, gy_physics_body_ref body, gy_vec3 torque)
{
    return record_vec(p, GY_PHYS_CMD_ADD_TORQUE, body, torque);
}

gy_result gy_physics_record_add_impulse(gy_physics *p, gy_physics_body_ref body, gy_vec3 impulse)
{
    return record_vec(p, GY_PHYS_CMD_ADD_IMPULSE, body, impulse);
}

gy_result gy_physics_record_add_impulse_at(gy_physics *p, gy_physics_body_ref body, gy_vec3 impulse,
                                           gy_vec3 world_point)
{
    double d[6] = {impulse.x, impulse.y, impulse.z, world_point.x, world_point.y, world_point.z};
    return record_mutate(p, GY_PHYS_CMD_ADD_IMPULSE_AT, body, 0, d, 6);
}

gy_result gy_physics_record_character_intent(gy_physics *p, gy_physics_body_ref body,
                                             gy_vec3 velocity, uint32_t flags)
{
    double d[3] = {velocity.x, velocity.y, velocity.z};
    return record_mutate(p, GY_PHYS_CMD_CHARACTER_INTENT, body, flags, d, 3);
}

gy_result gy_physics_record_character_jump(gy_physics *p, gy_physics_body_ref body, double speed)
{
    return record_mutate(p, GY_PHYS_CMD_CHARACTER_JUMP, body, 0, &speed, 1);
}

gy_result gy_physics_record_set_awake(gy_physics *p, gy_physics_body_ref body, bool awake)
{
    return record_mutate(p, GY_PHYS_CMD_SET_AWAKE, body, awake ? 1u : 0u, NULL, 0);
}

gy_result gy_physics_record_set_mass(gy_physics *p, gy_physics_body_ref body, double mass)
{
    /* Non-finite values are refused by record_mutate with the other vectors' error. */
    if (gy_is_finite(mass) && gy_validate_mass(mass) != GY_OK)
        return GY_ERR_INVALID_ARGUMENT;
    return record_mutate(p, GY_PHYS_CMD_SET_MASS, body, 0, &mass, 1);
}

gy_result gy_physics_record_set_material(gy_physics *p, gy_physics_body_ref body, uint32_t collider,
                                         const gy_material *material)
{
    gy_result r = gy_validate_material(material);
    if (r != GY_OK)
        return p == NULL ? GY_ERR_INVALID_ARGUMENT : r;
    if (collider > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t aux = collider | (uint32_t)material->friction_combine << 16 |
                   (uint32_t)material->restitution_combine << 24;
    double d[2] = {material->friction, material->restitution};
    return record_mutate(p, GY_PHYS_CMD_SET_MATERIAL, body, aux, d, 2);
}

gy_result gy_physics_record_set_filter(gy_physics *p, gy_physics_body_ref body, uint32_t collider,
                                       uint32_t category, uint32_t mask)
{
    if (collider > UINT16_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    /* Exact in a double: every 32-bit integer is. */
    double d[2] = {(double)category, (double)mask};
    return record_mutate(p, GY_PHYS_CMD_SET_FILTER, body, collider, d, 2);
}

gy_vec3 gy_physics_gravity(const gy_physics *p)
{
    return p != NULL ? p->game.world_def.gravity : gy_v3(0.0, 0.0, 0.0);
}

gy_result gy_physics_record_set_gravity(gy_physics *p, gy_vec3 gravity)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result valid = gy_validate_vector(gravity, GY_MAX_MAGNITUDE);
    if (valid != GY_OK)
        return valid;
    if (!p->game.running) {
        /* No thread owns the character set while stopped; the next start reads world_def. */
        p->game.world_def.gravity = gravity;
        return gy_phys_characters_set_gravity(p->cfg.characters, gravity);
    }
    gy_phys_cmd_body b = {.generation = 0, .aux = 0, .v = {gravity.x, gravity.y, gravity.z}};
    gy_result r = record_plain(&p->game, GY_COMMAND_MUTATE, GY_PHYS_CMD_SET_GRAVITY, 0, &b);
    if (r == GY_OK)
        p->game.world_def.gravity = gravity;
    return r;
}

gy_result gy_physics_publish(gy_physics *p, uint64_t *seq)
{
    gy_result r = game_ready(p);
    if (r != GY_OK)
        return r;
    if (p->game.replaying) {
        /* Replay: the recorded batches stand in for the game's. */
        gy_command_queue_discard_open(p->cfg.commands);
        if (seq != NULL)
            *seq = gy_command_queue_published(p->cfg.commands);
        return GY_OK;
    }
    return gy_command_queue_publish(p->cfg.commands, seq);
}

/* ---- game side: replies ---------------------------------------------------------------------- */

typedef struct reply_filter {
    const gy_phys_game *game;
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
             body_is_live(f->game,
                          (gy_physics_body_ref){r->key, gy_reply_as_body(r)->body_generation});
        break;
    case GY_PHYSICS_REPLY_CREATE_FAILED: {
        const gy_physics_failure_reply *fr = gy_reply_as_failure(r);
        ok = r->flags == f->generation &&
             (fr->kind != GY_PHYSICS_OBJECT_BODY ||
              body_is_live(f->game, (gy_physics_body_ref){r->key, fr->body_generation})) &&
             (fr->kind != GY_PHYSICS_OBJECT_JOINT ||
              joint_is_live(f->game, (gy_physics_joint_ref){r->key, fr->body_generation})) &&
             (fr->kind != GY_PHYSICS_OBJECT_RESOURCE ||
              resource_is_live(f->game, (gy_physics_resource_ref){r->key, fr->body_generation}));
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
    reply_filter f = {
        &p->game, fn, ctx, (uint16_t)__atomic_load_n(&p->sh.generation, __ATOMIC_RELAXED), 0, 0};
    gy_reply chunk[32];
    uint32_t total = 0;
    while (total < max) {
        uint32_t want = max - total < 32u ? max - total : 32u;
        uint32_t n = gy_reply_queue_pop(p->cfg.replies, chunk, want);
        for (uint32_t i = 0; i < n; i++)
            filter_reply(&f, &chunk[i]);
        total += n;
        if (n < want)
            break;
    }
    if (f.rejected != 0)
        gy_phys_add(&p->sh.replies_rejected, f.rejected);
    if (taken != NULL)
        *taken = total;
    return f.passed;
}

uint32_t gy_physics_drain_replies(gy_physics *p, gy_reply_fn fn, void *ctx)
{
    if (p == NULL || fn == NULL)
        return 0;
    reply_filter f = {
        &p->game, fn, ctx, (uint16_t)__atomic_load_n(&p->sh.generation, __ATOMIC_RELAXED), 0, 0};
    gy_reply_queue_drain(p->cfg.replies, filter_reply, &f);
    if (f.rejected != 0)
        gy_phys_add(&p->sh.replies_rejected, f.rejected);
    return f.passed;
}
