/* The Gyre side of bodies, colliders and joints (records.h). */
#include "records.h"

#include <assert.h>
#include <string.h>

#include "adapter_common.h"
#include "gyre/math.h"

void gy_adapter_body_record_init(gy_adapter_body *b, const gy_body_def *def,
                                 gy_adapter_motion *motion)
{
    bool dynamic = def->type == GY_MOTION_DYNAMIC;
    assert((motion == NULL) == (def->type == GY_MOTION_STATIC));
    b->type = (uint8_t)def->type;
    b->user_data = def->user_data;
    b->allow_sleeping = def->allow_sleeping;
    b->placed = false;
    b->motion = motion;
    if (motion == NULL)
        return;
    motion->solid = NULL;
    motion->joints = NULL;
    motion->pose_written = true; /* a new body takes part in the first step's pair search */
    motion->ccd_radius = 0.0;
    motion->force = gy_v3(0.0, 0.0, 0.0);
    motion->torque = gy_v3(0.0, 0.0, 0.0);
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
                                     gy_adapter_body *b, gy_adapter_resource *res,
                                     const gy_adapter_collider_rare *rare)
{
    const gy_shape *s = &def->shape;
    c->owner = b;
    c->rare = rare;
    c->body_type = (uint8_t)b->type;
    c->shape_type = (uint8_t)s->type;
    memset(&c->shape, 0, sizeof c->shape);
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        c->shape.size[0] = s->radius;
        break;
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER:
        c->shape.size[0] = s->radius;
        c->shape.size[1] = s->height;
        break;
    case GY_SHAPE_BOX:
        c->shape.size[0] = s->box_size.x;
        c->shape.size[1] = s->box_size.y;
        c->shape.size[2] = s->box_size.z;
        break;
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH:
        c->shape.resource = res;
        break;
    default: /* a plane's numbers are in the side record */
        break;
    }
    gy_adapter_collider_set_material(c, &def->material);
    c->is_sensor = def->is_sensor;
    c->contact_response = def->contact_response;
    c->one_way = def->one_way;
    c->category = def->category;
    c->mask = def->mask;
    c->user_data = def->user_data;
    if (b->motion != NULL && b->motion->solid == NULL && !c->is_sensor)
        b->motion->solid = c;
}

void gy_adapter_collider_set_material(gy_adapter_collider *c, const gy_material *m)
{
    c->friction = m->friction;
    c->restitution = m->restitution;
    c->friction_combine = (uint8_t)m->friction_combine;
    c->restitution_combine = (uint8_t)m->restitution_combine;
}

gy_shape gy_adapter_collider_shape(const gy_adapter_collider *c)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = (gy_shape_type)c->shape_type;
    switch (s.type) {
    case GY_SHAPE_SPHERE:
        s.radius = c->shape.size[0];
        break;
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER:
        s.radius = c->shape.size[0];
        s.height = c->shape.size[1];
        break;
    case GY_SHAPE_BOX:
        s.box_size = gy_v3(c->shape.size[0], c->shape.size[1], c->shape.size[2]);
        break;
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH:
        if (c->shape.resource != NULL)
            s.resource = c->shape.resource->id;
        break;
    default:
        s.normal = c->rare != NULL ? c->rare->plane_normal : gy_v3(0.0, 1.0, 0.0);
        s.offset = c->rare != NULL ? c->rare->plane_offset : 0.0;
        break;
    }
    return s;
}

gy_result gy_adapter_collider_rare_make(const gy_allocator *a, const gy_collider_def *def,
                                        gy_adapter_collider_rare **out)
{
    *out = NULL;
    gy_adapter_collider_rare r;
    memset(&r, 0, sizeof r);
    r.local_pose = def->local_pose;
    r.local_pose.rotation = gy_quat_normalize(def->local_pose.rotation);
    r.one_way_normal = gy_v3_normalize(def->one_way_normal);
    r.one_way_slop = def->one_way_slop;
    r.surface_velocity = def->surface_velocity;
    bool plane = def->shape.type == GY_SHAPE_PLANE;
    r.plane_normal = plane ? def->shape.normal : gy_v3(0.0, 1.0, 0.0);
    r.plane_offset = plane ? def->shape.offset : 0.0;
    /* The values a record without one reads (records.h), compared bit for bit: the defaults
     * give back exactly what the definition said. */
    gy_adapter_collider_rare d;
    memset(&d, 0, sizeof d);
    d.local_pose = gy_pose_identity();
    d.one_way_normal = gy_v3(0.0, 1.0, 0.0);
    d.one_way_slop = GY_DEFAULT_ONE_WAY_SLOP;
    d.plane_normal = gy_v3(0.0, 1.0, 0.0);
    if (memcmp(&r, &d, sizeof r) == 0)
        return GY_OK;
    gy_adapter_collider_rare *rare = gy_alloc(a, sizeof *rare);
    if (rare == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    *rare = r;
    *out = rare;
    return GY_OK;
}

void gy_adapter_collider_rare_free(const gy_allocator *a, const gy_adapter_collider_rare *rare)
{
    if (rare != NULL)
        gy_free(a, (void *)rare, sizeof *rare);
}

void gy_adapter_collider_rare_fini(const gy_allocator *a, gy_adapter_collider *c)
{
    gy_adapter_collider_rare_free(a, c->rare);
    c->rare = NULL;
}

void gy_adapter_joint_record_init(gy_adapter_joint *j, const gy_joint_def *def, gy_adapter_body *a,
                                  gy_adapter_body *b)
{
    gy_joint_type type = def->type;
    j->a = a;
    j->b = b;
    j->type = type;
    j->breakable = def->breakable;
    j->break_force = def->break_force;
    j->user_data = def->user_data;
    j->breakable_index = UINT32_MAX;
    j->motor = def->motor;
    j->has_limits = def->has_limits;
    bool hinge = type == GY_JOINT_HINGE;
    j->limits[0] = hinge ? fmax(-GY_PI, fmin(GY_PI, def->limit_min)) : def->limit_min;
    j->limits[1] = hinge ? fmax(-GY_PI, fmin(GY_PI, def->limit_max)) : def->limit_max;
    if (type == GY_JOINT_DISTANCE && def->has_spring) {
        j->has_spring = true;
        j->spring_frequency = def->spring_frequency;
        j->spring_damping_ratio = def->spring_damping_ratio;
    }
    if (type == GY_JOINT_BALL) {
        j->has_cone = def->has_cone;
        j->cone_angle = def->cone_angle;
        j->has_twist_limits = def->has_twist_limits;
        j->twist_min = def->twist_min;
        j->twist_max = def->twist_max;
    }
}

void gy_adapter_joint_attach(gy_adapter_joint *j)
{
    gy_adapter_body *sides[2] = {j->a, j->b};
    for (uint32_t k = 0; k < 2; k++) {
        j->next[k] = NULL;
        if (sides[k] == NULL)
            continue;
        sides[k]->joint_count++;
        if (sides[k]->motion != NULL) {
            j->next[k] = sides[k]->motion->joints;
            sides[k]->motion->joints = j;
        }
    }
}

void gy_adapter_joint_detach(gy_adapter_joint *j)
{
    gy_adapter_body *sides[2] = {j->a, j->b};
    for (uint32_t k = 0; k < 2; k++) {
        if (sides[k] == NULL)
            continue;
        sides[k]->joint_count--;
        if (sides[k]->motion == NULL)
            continue;
        gy_adapter_joint **at = &sides[k]->motion->joints;
        while (*at != j) {
            assert(*at != NULL);
            at = &(*at)->next[gy_adapter_joint_side(*at, sides[k])];
        }
        *at = j->next[k];
        j->next[k] = NULL;
    }
}

bool gy_adapter_joint_between(const gy_adapter_body *a, const gy_adapter_body *b)
{
    if (a == b)
        return false;
    if (a->motion == NULL || (b->motion != NULL && b->joint_count < a->joint_count)) {
        const gy_adapter_body *t = a;
        a = b;
        b = t;
    }
    if (a->motion == NULL)
        return false; /* two statics: no joint has a static first body */
    for (const gy_adapter_joint *j = a->motion->joints; j != NULL; j = gy_adapter_joint_next(j, a))
        if (j->a == b || j->b == b)
            return true;
    return false;
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
