/* The Gyre side of bodies, colliders and joints (records.h). */
#include "records.h"

#include <string.h>

#include "adapter_common.h"
#include "gyre/math.h"

void gy_adapter_body_record_init(gy_adapter_body *b, const gy_body_def *def,
                                 gy_adapter_motion *motion)
{
    bool dynamic = def->type == GY_MOTION_DYNAMIC;
    assert((motion == NULL) == (def->type == GY_MOTION_STATIC));
    b->type = def->type;
    b->user_data = def->user_data;
    b->allow_sleeping = def->allow_sleeping;
    b->placed = false;
    b->solid = NULL;
    b->motion = motion;
    if (motion == NULL)
        return;
    motion->gravity_factor = def->gravity_factor;
    motion->linear_damping = def->linear_damping;
    motion->angular_damping = def->angular_damping;
    motion->continuous = def->continuous && dynamic;
    for (int k = 0; k < 3; k++) {
        motion->lock_linear[k] = dynamic && def->lock_linear[k];
        motion->lock_angular[k] = dynamic && def->lock_angular[k];
    }
}

void gy_adapter_collider_record_init(gy_adapter_collider *c, const gy_collider_def *def,
                                     gy_adapter_body *b)
{
    c->owner = b;
    c->rare = NULL; /* the front end's to give (gy_adapter_collider_rare_init) */
    c->body_type = b->type;
    c->shape = def->shape;
    c->local_pose = def->local_pose;
    c->local_pose.rotation = gy_quat_normalize(def->local_pose.rotation);
    c->material = def->material;
    c->is_sensor = def->is_sensor;
    c->contact_response = def->contact_response;
    c->one_way = def->one_way;
    c->category = def->category;
    c->mask = def->mask;
    c->user_data = def->user_data;
    if (b->solid == NULL && !c->is_sensor)
        b->solid = c;
}

gy_result gy_adapter_collider_rare_init(const gy_allocator *a, gy_adapter_collider *c,
                                        const gy_collider_def *def)
{
    gy_adapter_collider_rare r = {gy_v3_normalize(def->one_way_normal), def->one_way_slop,
                                  def->surface_velocity};
    c->rare = NULL;
    gy_vec3 normal = gy_adapter_collider_one_way_normal(c);
    gy_vec3 moving = gy_adapter_collider_surface_velocity(c);
    /* Compared bit for bit: the defaults give back exactly what the definition said. */
    if (memcmp(&r.one_way_normal, &normal, sizeof normal) == 0 &&
        r.one_way_slop == gy_adapter_collider_one_way_slop(c) &&
        memcmp(&r.surface_velocity, &moving, sizeof moving) == 0)
        return GY_OK;
    gy_adapter_collider_rare *rare = gy_alloc(a, sizeof *rare);
    if (rare == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    *rare = r;
    c->rare = rare;
    return GY_OK;
}

void gy_adapter_collider_rare_fini(const gy_allocator *a, gy_adapter_collider *c)
{
    if (c->rare != NULL)
        gy_free(a, (void *)c->rare, sizeof *c->rare);
    c->rare = NULL;
}

void gy_adapter_joint_record_init(gy_adapter_joint *j, const gy_joint_def *def, gy_joint_type type,
                                  gy_adapter_body *a, gy_adapter_body *b)
{
    j->a = a;
    j->b = b;
    j->type = type;
    j->breakable = def->breakable;
    j->break_force = def->break_force;
    j->user_data = def->user_data;
    j->breakable_index = UINT32_MAX;
}

void gy_adapter_joint_attach(const gy_adapter_joint *j)
{
    j->a->joint_count++;
    if (j->b != NULL)
        j->b->joint_count++;
}

void gy_adapter_joint_detach(const gy_adapter_joint *j)
{
    j->a->joint_count--;
    if (j->b != NULL)
        j->b->joint_count--;
}

bool gy_adapter_colliders_filter(const gy_adapter_collider *a, const gy_adapter_collider *b)
{
    return (a->category & b->mask) != 0 && (b->category & a->mask) != 0;
}

void gy_adapter_contact_name(gy_contact *ct, const gy_adapter_collider *a,
                             const gy_adapter_collider *b)
{
    ct->body_a = a->owner->id;
    ct->body_b = b->owner->id;
    ct->collider_a = a->id;
    ct->collider_b = b->id;
    ct->user_a = a->owner->user_data;
    ct->user_b = b->owner->user_data;
    ct->is_sensor = a->is_sensor || b->is_sensor;
}
