/* Convex shapes as GJK sees them, and the two questions asked of pairs of them: how far apart
 * they are (GJK distance with closest points) and when one moving in a straight line first
 * touches the other (time of impact by conservative advancement). Shared by every query that needs
 * an exact convex test without an adapter: the query snapshot's overlaps and shape casts, and any
 * later user. Never allocates; works on the caller's thread.
 *
 * A convex is a core (point, segment, box, cylinder or point cloud) swept by a radius: a sphere is
 * a rounded point, a capsule a rounded segment, a box, cylinder or hull has radius 0. */
#ifndef GYRE_CONVEX_H
#define GYRE_CONVEX_H

#include <stdbool.h>
#include <stdint.h>

#include "gyre/core.h"
#include "gyre/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the radius rounds. */
typedef enum gy_convex_core {
    GY_CONVEX_POINT,
    GY_CONVEX_SEGMENT,  /* along local Y, half length `half_length` */
    GY_CONVEX_BOX,      /* half extents `half` */
    GY_CONVEX_CYLINDER, /* along local Y: radius half.x, half height half.y */
    GY_CONVEX_CLOUD,    /* the convex hull of `points` (local frame) */
} gy_convex_core;

/* One posed convex. `points` is borrowed: it must outlive every call that uses the convex. */
typedef struct gy_convex {
    gy_convex_core core;
    gy_pose pose; /* rotation of unit length */
    gy_vec3 half;
    double half_length;
    double radius;
    const gy_vec3 *points;
    uint32_t point_count; /* ≥ 1 for a cloud */
} gy_convex;

/* Where a cast first touches. */
typedef struct gy_convex_hit {
    double fraction; /* of the translation, at or just before first contact */
    gy_vec3 point;   /* on the target's surface, world space */
    gy_vec3 normal;  /* unit, out of the target towards the moving convex */
} gy_convex_hit;

/* A cast stops advancing once the gap is at most this many metres (the reported fraction is then
 * at most this far, along the normal, before contact). */
#define GY_CONVEX_CAST_GAP 1e-6

/* The convex's point farthest along world direction `d` (its radius not included). */
gy_vec3 gy_convex_support(const gy_convex *c, gy_vec3 d);

/* Distance between the cores of a and b (radii not included; 0 when the cores intersect) by GJK
 * (van den Bergen). When separated and the out pointers are given, *on_a and *on_b receive the
 * closest points of the cores. */
double gy_convex_closest(const gy_convex *a, const gy_convex *b, gy_vec3 *on_a, gy_vec3 *on_b);

/* Whether a and b, radii included, are within `tolerance` metres of touching. */
bool gy_convex_overlap(const gy_convex *a, const gy_convex *b, double tolerance);

/* Time of impact of `a` translated by fraction × `translation`, fraction in [from, max_fraction]
 * (`from` > 0 only when the caller knows they do not touch before it, e.g. from bounding spheres),
 * against the fixed `b`, by conservative advancement: each step moves `a` by the current gap (less
 * half of GY_CONVEX_CAST_GAP) over the speed at which the cores approach along GJK's separating
 * direction, which never passes the first contact because the gap between convex shapes is a
 * convex function of a straight-line translation. True with *out
 * filled when they touch in range (fraction 0 when they already do, within `touch` metres); false
 * when they never do, or when the advancement cannot settle within a bounded number of steps on a
 * gap above GY_CONVEX_CAST_GAP (a graze). */
bool gy_convex_cast(const gy_convex *a, gy_vec3 translation, const gy_convex *b, double from,
                    double max_fraction, double touch, gy_convex_hit *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CONVEX_H */
