/* Gyre vector math: small inline helpers over gy_vec3, gy_quat, gy_pose and gy_mat3.
 * Pure functions; call from any thread. Quaternions are assumed unit length where noted. */
#ifndef GYRE_MATH_H
#define GYRE_MATH_H

#include <math.h>

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GY_PI 3.14159265358979323846

static inline gy_vec3 gy_v3(double x, double y, double z)
{
    gy_vec3 r = {x, y, z};
    return r;
}
static inline gy_vec3 gy_v3_add(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline gy_vec3 gy_v3_sub(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline gy_vec3 gy_v3_scale(gy_vec3 a, double s)
{
    return gy_v3(a.x * s, a.y * s, a.z * s);
}
/* a + b * s */
static inline gy_vec3 gy_v3_mad(gy_vec3 a, gy_vec3 b, double s)
{
    return gy_v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
static inline gy_vec3 gy_v3_neg(gy_vec3 a)
{
    return gy_v3(-a.x, -a.y, -a.z);
}
static inline double gy_v3_dot(gy_vec3 a, gy_vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline gy_vec3 gy_v3_cross(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double gy_v3_len_sq(gy_vec3 a)
{
    return gy_v3_dot(a, a);
}
static inline double gy_v3_len(gy_vec3 a)
{
    return sqrt(gy_v3_dot(a, a));
}
/* Unit vector along a; the zero vector stays zero. */
static inline gy_vec3 gy_v3_normalize(gy_vec3 a)
{
    double l = gy_v3_len(a);
    return l > 0.0 ? gy_v3_scale(a, 1.0 / l) : a;
}
static inline gy_vec3 gy_v3_mul(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(a.x * b.x, a.y * b.y, a.z * b.z);
}
static inline gy_vec3 gy_v3_min(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z));
}
static inline gy_vec3 gy_v3_max(gy_vec3 a, gy_vec3 b)
{
    return gy_v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z));
}

static inline gy_quat gy_quat_identity(void)
{
    gy_quat q = {0.0, 0.0, 0.0, 1.0};
    return q;
}
static inline gy_quat gy_quat_mul(gy_quat a, gy_quat b)
{
    gy_quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                 a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
    return r;
}
static inline gy_quat gy_quat_conj(gy_quat q)
{
    gy_quat r = {-q.x, -q.y, -q.z, q.w};
    return r;
}
static inline gy_quat gy_quat_normalize(gy_quat q)
{
    double l = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (l <= 0.0)
        return gy_quat_identity();
    gy_quat r = {q.x / l, q.y / l, q.z / l, q.w / l};
    return r;
}
/* Rotation of `angle` radians about unit `axis`. */
static inline gy_quat gy_quat_axis_angle(gy_vec3 axis, double angle)
{
    double s = sin(angle * 0.5);
    gy_quat r = {axis.x * s, axis.y * s, axis.z * s, cos(angle * 0.5)};
    return r;
}
/* The turn taking rotation `from` to `to` the shorter way round: returns its angle (radians,
 * 0..pi) and sets *axis to the turn's axis scaled by sin(angle / 2), and *sin_half to that length.
 * A turn whose sin(angle / 2) is at most 1e-12 counts as none: angle 0. */
static inline double gy_quat_turn(gy_quat from, gy_quat to, gy_vec3 *axis, double *sin_half)
{
    gy_quat dq = gy_quat_normalize(gy_quat_mul(to, gy_quat_conj(from)));
    if (dq.w < 0.0) {
        dq.x = -dq.x;
        dq.y = -dq.y;
        dq.z = -dq.z;
        dq.w = -dq.w;
    }
    *axis = gy_v3(dq.x, dq.y, dq.z);
    *sin_half = gy_v3_len(*axis);
    return *sin_half > 1e-12 ? 2.0 * atan2(*sin_half, dq.w) : 0.0;
}
/* Scene-file Euler angles in degrees, applied yaw (Y), then pitch (X), then roll (Z):
 * q = qy * qx * qz. */
static inline gy_quat gy_quat_from_euler_deg(gy_vec3 deg)
{
    const double k = GY_PI / 180.0;
    gy_quat qx = gy_quat_axis_angle(gy_v3(1, 0, 0), deg.x * k);
    gy_quat qy = gy_quat_axis_angle(gy_v3(0, 1, 0), deg.y * k);
    gy_quat qz = gy_quat_axis_angle(gy_v3(0, 0, 1), deg.z * k);
    return gy_quat_mul(gy_quat_mul(qy, qx), qz);
}
/* Rotates v by unit quaternion q. */
static inline gy_vec3 gy_quat_rotate(gy_quat q, gy_vec3 v)
{
    gy_vec3 u = gy_v3(q.x, q.y, q.z);
    gy_vec3 t = gy_v3_scale(gy_v3_cross(u, v), 2.0);
    return gy_v3_add(gy_v3_add(v, gy_v3_scale(t, q.w)), gy_v3_cross(u, t));
}
/* Row-major rotation matrix of unit quaternion q. */
static inline gy_mat3 gy_quat_to_mat3(gy_quat q)
{
    double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    gy_mat3 m = {{{1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)},
                  {2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)},
                  {2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)}}};
    return m;
}

static inline gy_pose gy_pose_identity(void)
{
    gy_pose p = {{0, 0, 0}, {0, 0, 0, 1}};
    return p;
}
/* World point of a local point p under pose t. */
static inline gy_vec3 gy_pose_apply(gy_pose t, gy_vec3 p)
{
    return gy_v3_add(gy_quat_rotate(t.rotation, p), t.position);
}
/* a ∘ b: first b, then a (parent * child). */
static inline gy_pose gy_pose_mul(gy_pose a, gy_pose b)
{
    gy_pose r;
    r.rotation = gy_quat_mul(a.rotation, b.rotation);
    r.position = gy_pose_apply(a, b.position);
    return r;
}
static inline gy_pose gy_pose_inverse(gy_pose t)
{
    gy_pose r;
    r.rotation = gy_quat_conj(t.rotation);
    r.position = gy_quat_rotate(r.rotation, gy_v3_neg(t.position));
    return r;
}

static inline gy_mat3 gy_mat3_zero(void)
{
    gy_mat3 m = {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    return m;
}
static inline gy_mat3 gy_mat3_diag(double a, double b, double c)
{
    gy_mat3 m = {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
    return m;
}
static inline gy_mat3 gy_mat3_add(gy_mat3 a, gy_mat3 b)
{
    gy_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] = a.m[i][j] + b.m[i][j];
    return r;
}
static inline gy_mat3 gy_mat3_mul(gy_mat3 a, gy_mat3 b)
{
    gy_mat3 r = gy_mat3_zero();
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                r.m[i][j] += a.m[i][k] * b.m[k][j];
    return r;
}
static inline gy_mat3 gy_mat3_transpose(gy_mat3 a)
{
    gy_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] = a.m[j][i];
    return r;
}
static inline gy_vec3 gy_mat3_apply(gy_mat3 a, gy_vec3 v)
{
    return gy_v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                 a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                 a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}

#ifdef __cplusplus
}
#endif

#endif /* GYRE_MATH_H */
