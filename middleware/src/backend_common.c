/* Defaults and validation shared by every adapter: one place decides what a valid definition is,
 * so the adapters (and the layers above, before they enqueue) agree. */
#include <math.h>

#include "gyre/backend/backend.h"
#include "gyre/geometry.h"
#include "gyre/math.h"

gy_backend_world_def gy_default_backend_world_def(void)
{
    gy_backend_world_def d = {0};
    d.gravity = gy_v3(0.0, -9.81, 0.0);
    d.substeps = 1;
    d.solver_iterations = 10;
    return d;
}

gy_body_def gy_default_body_def(void)
{
    gy_body_def d = {0};
    d.type = GY_MOTION_DYNAMIC;
    d.pose = gy_pose_identity();
    d.linear_damping = 0.05;
    d.angular_damping = 0.05;
    d.gravity_factor = 1.0;
    d.allow_sleeping = true;
    return d;
}

gy_material gy_default_material(void)
{
    gy_material m = {0.5, 0.0, GY_COMBINE_AVERAGE, GY_COMBINE_MAX};
    return m;
}

gy_collider_def gy_default_collider_def(void)
{
    gy_collider_def d = {0};
    d.shape.type = GY_SHAPE_SPHERE;
    d.shape.radius = 0.5;
    d.shape.normal = gy_v3(0.0, 1.0, 0.0);
    d.local_pose = gy_pose_identity();
    d.density = 1.0;
    d.material = gy_default_material();
    d.contact_response = true;
    d.one_way_normal = gy_v3(0.0, 1.0, 0.0);
    d.one_way_slop = GY_DEFAULT_ONE_WAY_SLOP;
    d.category = 1u;
    d.mask = UINT32_MAX;
    return d;
}

gy_joint_def gy_default_joint_def(void)
{
    gy_joint_def d = {0};
    d.type = GY_JOINT_BALL;
    d.axis = gy_v3(0.0, 1.0, 0.0);
    d.distance = -1.0;
    return d;
}

gy_query_filter gy_default_query_filter(void)
{
    gy_query_filter f = {0};
    f.mask = UINT32_MAX;
    f.motion_types = GY_MOTION_ALL;
    return f;
}

double gy_combine(double a, gy_combine_mode ma, double b, gy_combine_mode mb)
{
    gy_combine_mode m = ma > mb ? ma : mb;
    switch (m) {
    case GY_COMBINE_MIN:
        return fmin(a, b);
    case GY_COMBINE_MULTIPLY:
        return a * b;
    case GY_COMBINE_MAX:
        return fmax(a, b);
    case GY_COMBINE_AVERAGE:
    default:
        return 0.5 * (a + b);
    }
}

static bool pose_ok(gy_pose p)
{
    return gy_vec3_is_finite(p.position) && gy_quat_is_unit(p.rotation);
}

static bool within(double v, double limit)
{
    return fabs(v) <= limit;
}

static bool vec_within(gy_vec3 v, double limit)
{
    return within(v.x, limit) && within(v.y, limit) && within(v.z, limit);
}

/* One-way platforms: the contact normal within 60° of the one-way normal, and no faster rise
 * through the platform than this (m/s). */
#define ONE_WAY_MIN_COS  0.5
#define ONE_WAY_MAX_RISE 0.25

bool gy_one_way_accepts(gy_vec3 normal_po, gy_vec3 n, gy_vec3 rel, gy_vec3 com, gy_vec3 point,
                        double penetration, double slop)
{
    return gy_v3_dot(normal_po, n) >= ONE_WAY_MIN_COS &&
           (gy_v3_dot(rel, n) <= ONE_WAY_MAX_RISE || penetration <= slop) &&
           gy_v3_dot(gy_v3_sub(com, point), n) > 0.0;
}

gy_result gy_validate_vector(gy_vec3 v, double limit)
{
    if (!gy_vec3_is_finite(v))
        return GY_ERR_NON_FINITE;
    return vec_within(v, limit) ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

gy_result gy_validate_pose(gy_pose pose)
{
    if (!gy_vec3_is_finite(pose.position) || !gy_quat_is_finite(pose.rotation))
        return GY_ERR_NON_FINITE;
    return gy_quat_is_unit(pose.rotation) && vec_within(pose.position, GY_MAX_MAGNITUDE)
               ? GY_OK
               : GY_ERR_INVALID_ARGUMENT;
}

gy_result gy_validate_mass(double mass)
{
    if (!gy_is_finite(mass))
        return GY_ERR_NON_FINITE;
    /* The range a body is created with: a tiny (or denormal) mass makes the vendor's inverse
     * mass infinite and its integrator fault. */
    return mass >= GY_MIN_MASS && mass <= GY_MAX_MASS ? GY_OK : GY_ERR_INVALID_ARGUMENT;
}

gy_result gy_validate_query_shape(const gy_shape *shape, gy_pose pose)
{
    if (shape == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_shape(shape);
    if (r == GY_OK)
        r = gy_validate_pose(pose);
    if (r != GY_OK)
        return r;
    switch (shape->type) {
    case GY_SHAPE_SPHERE:
    case GY_SHAPE_BOX:
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_HULL:
        return GY_OK;
    default:
        return GY_ERR_UNSUPPORTED;
    }
}

static bool mat3_is_finite(const gy_mat3 *m)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!gy_is_finite(m->m[i][j]))
                return false;
    return true;
}

static bool mat3_within(const gy_mat3 *m, double limit)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!within(m->m[i][j], limit))
                return false;
    return true;
}

/* Symmetric positive-definite by Sylvester's criterion (leading minors > 0). */
static bool mat3_is_spd(const gy_mat3 *m)
{
    const double eps = 1e-12;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (fabs(m->m[i][j] - m->m[j][i]) > 1e-9 * (fabs(m->m[i][j]) + 1.0))
                return false;
    double a = m->m[0][0];
    double b = m->m[0][0] * m->m[1][1] - m->m[0][1] * m->m[1][0];
    double c = m->m[0][0] * (m->m[1][1] * m->m[2][2] - m->m[1][2] * m->m[2][1]) -
               m->m[0][1] * (m->m[1][0] * m->m[2][2] - m->m[1][2] * m->m[2][0]) +
               m->m[0][2] * (m->m[1][0] * m->m[2][1] - m->m[1][1] * m->m[2][0]);
    return a > eps && b > eps && c > eps;
}

gy_result gy_validate_body_def(const gy_body_def *d)
{
    if (d == NULL || (unsigned)d->type >= GY_MOTION_TYPE_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(d->pose.position) || !gy_quat_is_finite(d->pose.rotation) ||
        !gy_vec3_is_finite(d->linear_velocity) || !gy_vec3_is_finite(d->angular_velocity) ||
        !gy_is_finite(d->mass) || !gy_is_finite(d->linear_damping) ||
        !gy_is_finite(d->angular_damping) || !gy_is_finite(d->gravity_factor))
        return GY_ERR_NON_FINITE;
    if (!pose_ok(d->pose))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->mass < 0.0 || d->linear_damping < 0.0 || d->angular_damping < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    if (!vec_within(d->pose.position, GY_MAX_MAGNITUDE) ||
        !vec_within(d->linear_velocity, GY_MAX_MAGNITUDE) ||
        !vec_within(d->angular_velocity, GY_MAX_MAGNITUDE) ||
        (d->mass != 0.0 && (d->mass < GY_MIN_MASS || d->mass > GY_MAX_MASS)) ||
        d->linear_damping > GY_MAX_COEFFICIENT || d->angular_damping > GY_MAX_COEFFICIENT ||
        !within(d->gravity_factor, GY_MAX_GRAVITY_FACTOR))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->has_mass_properties) {
        if (!gy_vec3_is_finite(d->mass_properties.center_of_mass) ||
            !mat3_is_finite(&d->mass_properties.inertia))
            return GY_ERR_NON_FINITE;
        if (!(d->mass > 0.0) || !mat3_is_spd(&d->mass_properties.inertia) ||
            !vec_within(d->mass_properties.center_of_mass, GY_MAX_LOCAL_EXTENT) ||
            !mat3_within(&d->mass_properties.inertia, GY_MAX_INERTIA))
            return GY_ERR_INVALID_ARGUMENT;
    }
    return GY_OK;
}

static bool size_ok(double v)
{
    return v >= GY_MIN_SHAPE_SIZE && v <= GY_MAX_SHAPE_SIZE;
}

gy_result gy_validate_shape(const gy_shape *s)
{
    if (s == NULL || (unsigned)s->type >= GY_SHAPE_TYPE_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        if (!gy_is_finite(s->radius))
            return GY_ERR_NON_FINITE;
        return size_ok(s->radius) ? GY_OK : GY_ERR_INVALID_SHAPE;
    case GY_SHAPE_BOX:
        if (!gy_vec3_is_finite(s->box_size))
            return GY_ERR_NON_FINITE;
        return (size_ok(s->box_size.x) && size_ok(s->box_size.y) && size_ok(s->box_size.z))
                   ? GY_OK
                   : GY_ERR_INVALID_SHAPE;
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER:
        if (!gy_is_finite(s->radius) || !gy_is_finite(s->height))
            return GY_ERR_NON_FINITE;
        if (!size_ok(s->radius) || !size_ok(s->height))
            return GY_ERR_INVALID_SHAPE;
        if (s->type == GY_SHAPE_CAPSULE && !(s->height > 2.0 * s->radius))
            return GY_ERR_INVALID_SHAPE;
        return GY_OK;
    case GY_SHAPE_PLANE: {
        if (!gy_vec3_is_finite(s->normal) || !gy_is_finite(s->offset))
            return GY_ERR_NON_FINITE;
        if (!vec_within(s->normal, GY_MAX_MAGNITUDE) || !within(s->offset, GY_MAX_MAGNITUDE))
            return GY_ERR_INVALID_SHAPE;
        double l = gy_v3_len(s->normal);
        return l > 1e-9 ? GY_OK : GY_ERR_INVALID_SHAPE;
    }
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH:
        return s->resource.bits != 0 ? GY_OK : GY_ERR_STALE_HANDLE;
    default:
        return GY_ERR_INVALID_ARGUMENT;
    }
}

static bool coefficient_ok(double v)
{
    return v >= 0.0 && v <= GY_MAX_COEFFICIENT;
}

gy_result gy_validate_collider_def(const gy_collider_def *d, gy_motion_type motion)
{
    if (d == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_shape(&d->shape);
    if (r != GY_OK)
        return r;
    if (!gy_vec3_is_finite(d->local_pose.position) || !gy_quat_is_finite(d->local_pose.rotation) ||
        !gy_is_finite(d->density) || !gy_is_finite(d->material.friction) ||
        !gy_is_finite(d->material.restitution) || !gy_vec3_is_finite(d->surface_velocity) ||
        !gy_vec3_is_finite(d->one_way_normal) || !gy_is_finite(d->one_way_slop))
        return GY_ERR_NON_FINITE;
    if (!pose_ok(d->local_pose) || !vec_within(d->local_pose.position, GY_MAX_LOCAL_EXTENT) ||
        !(d->density >= GY_MIN_DENSITY && d->density <= GY_MAX_DENSITY) ||
        !coefficient_ok(d->material.friction) || !coefficient_ok(d->material.restitution) ||
        !vec_within(d->surface_velocity, GY_MAX_MAGNITUDE) ||
        !vec_within(d->one_way_normal, GY_MAX_MAGNITUDE) ||
        !(d->one_way_slop >= 0.0 && d->one_way_slop <= GY_MAX_LOCAL_EXTENT) ||
        (unsigned)d->material.friction_combine > GY_COMBINE_MAX ||
        (unsigned)d->material.restitution_combine > GY_COMBINE_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    if (d->one_way && !(gy_v3_len(d->one_way_normal) > 1e-9))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->shape.type == GY_SHAPE_PLANE && motion != GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;
    if (d->shape.type == GY_SHAPE_MESH && motion == GY_MOTION_DYNAMIC)
        return GY_ERR_INVALID_MOTION;
    return GY_OK;
}

gy_result gy_validate_joint_def(const gy_joint_def *d)
{
    if (d == NULL || (unsigned)d->type >= GY_JOINT_TYPE_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(d->anchor) || !gy_vec3_is_finite(d->axis) ||
        !gy_is_finite(d->limit_min) || !gy_is_finite(d->limit_max) || !gy_is_finite(d->distance) ||
        !gy_is_finite(d->break_force))
        return GY_ERR_NON_FINITE;
    if (d->a.bits == 0 || d->a.bits == d->b.bits)
        return GY_ERR_INVALID_ARGUMENT;
    if (!vec_within(d->anchor, GY_MAX_MAGNITUDE) || !vec_within(d->axis, GY_MAX_MAGNITUDE) ||
        !within(d->limit_min, GY_MAX_MAGNITUDE) || !within(d->limit_max, GY_MAX_MAGNITUDE) ||
        !within(d->distance, GY_MAX_MAGNITUDE))
        return GY_ERR_INVALID_ARGUMENT;
    if ((d->type == GY_JOINT_HINGE || d->type == GY_JOINT_SLIDER) && !(gy_v3_len(d->axis) > 1e-9))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->has_limits && d->limit_min > d->limit_max)
        return GY_ERR_INVALID_ARGUMENT;
    if (d->breakable && !(d->break_force > 0.0))
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_is_finite(d->spring_frequency) || !gy_is_finite(d->spring_damping_ratio) ||
        !gy_is_finite(d->cone_angle) || !gy_is_finite(d->twist_min) || !gy_is_finite(d->twist_max))
        return GY_ERR_NON_FINITE;
    gy_result r = gy_validate_joint_motor(&d->motor);
    if (r != GY_OK)
        return r;
    if (d->motor.mode != GY_MOTOR_OFF && d->type != GY_JOINT_HINGE && d->type != GY_JOINT_SLIDER)
        return GY_ERR_INVALID_ARGUMENT;
    if (d->has_spring && (d->type != GY_JOINT_DISTANCE || !(d->spring_frequency > 0.0) ||
                          !(d->spring_damping_ratio >= 0.0)))
        return GY_ERR_INVALID_ARGUMENT;
    bool ball_limits = d->has_cone || d->has_twist_limits;
    if (ball_limits && (d->type != GY_JOINT_BALL || !(gy_v3_len(d->axis) > 1e-9)))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->has_cone && !(d->cone_angle > 0.0 && d->cone_angle <= GY_PI))
        return GY_ERR_INVALID_ARGUMENT;
    if (d->has_twist_limits &&
        !(d->twist_min >= -GY_PI && d->twist_max <= GY_PI && d->twist_min <= d->twist_max))
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

gy_result gy_validate_joint_motor(const gy_joint_motor *m)
{
    if (m == NULL || (unsigned)m->mode >= GY_MOTOR_MODE_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_is_finite(m->target) || !gy_is_finite(m->max_force))
        return GY_ERR_NON_FINITE;
    if (m->mode != GY_MOTOR_OFF && !(m->max_force > 0.0))
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

/* Hull and mesh points: finite (GY_ERR_NON_FINITE) and within GY_MAX_LOCAL_EXTENT
 * (GY_ERR_INVALID_MESH, as for any other bad mesh data). */
static gy_result points_ok(const gy_vec3 *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!gy_vec3_is_finite(v[i]))
            return GY_ERR_NON_FINITE;
        if (!vec_within(v[i], GY_MAX_LOCAL_EXTENT))
            return GY_ERR_INVALID_MESH;
    }
    return GY_OK;
}

gy_result gy_validate_mesh_def(const gy_mesh_def *d)
{
    if (d == NULL || d->vertices == NULL || d->indices == NULL || d->vertex_count == 0 ||
        d->index_count == 0 || d->index_count % 3u != 0)
        return GY_ERR_INVALID_MESH;
    gy_result r = points_ok(d->vertices, d->vertex_count);
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < d->index_count; i++)
        if (d->indices[i] >= d->vertex_count)
            return GY_ERR_INVALID_MESH;
    return GY_OK;
}

gy_result gy_validate_hull_def(const gy_hull_def *d)
{
    if (d == NULL || d->points == NULL || d->point_count < 4)
        return GY_ERR_INVALID_MESH;
    return points_ok(d->points, d->point_count);
}

gy_result gy_validate_hull(const gy_hull *h)
{
    if (h == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (h->vertices == NULL || h->triangles == NULL || h->planes == NULL || h->vertex_count < 4 ||
        h->triangle_count < 4 || !(h->volume > 0.0 && gy_is_finite(h->volume)) ||
        !gy_vec3_is_finite(h->centroid))
        return GY_ERR_INVALID_MESH;
    for (uint32_t i = 0; i < h->vertex_count; i++)
        if (!gy_vec3_is_finite(h->vertices[i]))
            return GY_ERR_INVALID_MESH;
    for (uint32_t t = 0; t < h->triangle_count; t++) {
        for (uint32_t k = 0; k < 3; k++)
            if (h->triangles[3u * t + k] >= h->vertex_count)
                return GY_ERR_INVALID_MESH;
        for (uint32_t k = 0; k < 4; k++)
            if (!gy_is_finite(h->planes[t][k]))
                return GY_ERR_INVALID_MESH;
    }
    return GY_OK;
}

gy_result gy_validate_query_filter(const gy_query_filter *f)
{
    if (f == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if ((f->motion_types & ~GY_MOTION_ALL) != 0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

gy_result gy_validate_material(const gy_material *m)
{
    if (m == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_is_finite(m->friction) || !gy_is_finite(m->restitution))
        return GY_ERR_NON_FINITE;
    if (m->friction < 0.0 || m->restitution < 0.0 ||
        (unsigned)m->friction_combine > GY_COMBINE_MAX ||
        (unsigned)m->restitution_combine > GY_COMBINE_MAX)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}
