/* Queries in the adapter front end: raycast, shape cast and overlap written once over a driver's
 * candidate walks and raw tests (driver.h).
 *
 * The split follows Box2D's world queries and Jolt's collectors: the front end owns the filter,
 * the collector (any / closest / all, the caller's buffer), what a hit names and how its numbers
 * read, and the convex time of impact; a driver walks its broadphase and offers each candidate
 * collider to gy_adapter_search_visit, which filters it, asks the driver's raw test for a hit and
 * collects it. A closest-hit query bounds the rest of the walk (gy_adapter_search_bound), as
 * Box2D's callback clips its ray.
 *
 * Threading: one query runs on the thread bound to the world (GY_BACKEND_QUERIES_EXCLUSIVE). */
#ifndef GYRE_QUERIES_H
#define GYRE_QUERIES_H

#include "adapter_common.h"
#include "gyre/convex.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gy_driver;
struct gy_driver_world;
struct gy_driver_collider;
struct gy_driver_query;
struct gy_driver_hit;
struct gy_driver_records;

/* One query in progress: the front end's collector and what the hits are measured against. */
typedef struct gy_adapter_search {
    gy_adapter_query q;     /* filter and collector (adapter_common.h) */
    gy_query_filter filter; /* q's, or the default one: resolved once, not per candidate */
    const struct gy_driver *driver;
    struct gy_driver_world *dw;
    bool ray;    /* a raycast; otherwise a shape query */
    bool cast;   /* a shape cast; otherwise an overlap */
    gy_vec3 dir; /* rays: unit direction */
    /* Rays: hits count only at distances in [ray_lo, ray_hi) (the piece of the ray a walk of
     * the statics visits, gy_adapter_search_ray_statics; -inf to inf otherwise), so a collider
     * reached from several pieces is reported once, from the piece that holds its hit. */
    double ray_lo, ray_hi;
    gy_vec3 translation;
    double length; /* |translation| (m) */
    bool convex;   /* casts: the query shape as a convex (below) */
    gy_convex shape;
    /* Casts searched by touch tests (gy_driver.shape_contact at a fraction): the fraction the
     * shape advances per step (its inner radius: it cannot step over a wall) and the bracket
     * at which bisection stops. */
    double step, tol;
    /* Casts: the shape's box at its start (min x, max x, min y, max y, min z, max z), when the
     * driver's walk gave it (gy_adapter_search_cast_box). */
    bool boxed;
    double box0[6];
} gy_adapter_search;

/* Metres added around boxes so that a candidate whose box merely touches the swept box is still
 * tested, and a pose just before the padded entry time is surely separated. */
#define GY_ADAPTER_QUERY_AABB_PAD 1e-6

/* A raycast: `q` prepared (gy_adapter_query_begin, not yet satisfied), `length` > 0. The hits
 * are in q; q->count is how many. */
void gy_adapter_search_ray(const struct gy_driver *d, struct gy_driver_world *dw,
                           gy_adapter_query *q, gy_vec3 origin, gy_vec3 translation, double length);

/* A shape cast (`cast`; translation of `length`) or an overlap (translation zero) of a checked
 * query shape at a valid pose; `hull` is its hull for hull shapes (NULL otherwise). */
void gy_adapter_search_shape(const struct gy_driver *d, struct gy_driver_world *dw,
                             gy_adapter_query *q, const gy_shape *shape, const gy_hull *hull,
                             gy_pose pose, gy_vec3 translation, double length, bool cast);

/* A driver's closed-form ray test against a sphere, box, capsule, cylinder or hull (`hull` its
 * data, NULL: no hit), through collision's line spans, or a plane: the ray from `o` along the unit
 * `d`, both in the shape's own frame (capsules and cylinders along Y; a plane's is the world's),
 * and its first hit within `length` (gy_line_span_hit; a ray starting inside a solid reports where
 * it leaves, the normal facing back along the ray; a plane is hit from either side, the normal
 * facing the ray's origin). *n is unit, in the shape's frame. False for meshes. */
bool gy_adapter_ray_shape(const gy_shape *s, const gy_hull *hull, gy_vec3 o, gy_vec3 d,
                          double length, double *t, gy_vec3 *n);

/* A ray's raw hit (driver.h) at distance `t` along the unit `dir` from `origin`: the point on the
 * ray there, the world normal `n`, the mesh triangle (-1 for other shapes), no depth. */
void gy_adapter_ray_hit(gy_vec3 origin, gy_vec3 dir, double t, gy_vec3 n, int32_t triangle,
                        struct gy_driver_hit *out);

/* ---- what a driver's walk calls ----------------------------------------------------------------
 */

/* Offers a candidate collider with the driver's query state: filters it, runs the driver's raw
 * test and collects the hit. False once the collector is satisfied (the walk stops). */
bool gy_adapter_search_visit(gy_adapter_search *s, struct gy_driver_query *dq,
                             struct gy_driver_collider *c);

/* A ray's walk of the statics in the front end's grid (`statics`, gy_driver_records'): the ray
 * from `origin` along the search's direction for `length` m, cut into pieces at least a grid cell
 * long and at most 64 of them, so that a long oblique ray touches the cells near its line rather
 * than every cell of its box, and a closest-hit query stops at the first piece that holds a hit.
 * Each static is offered to gy_adapter_search_visit with the driver's query state `dq`. */
void gy_adapter_search_ray_statics(gy_adapter_search *s, struct gy_driver_query *dq,
                                   const struct gy_driver_records *statics, gy_vec3 origin,
                                   double length);

/* A cast's walk whose boxes are tight (a box about the shape as posed, and gy_driver.collider_box)
 * gives the shape's box at its start: the front end then tests a candidate only over the fractions
 * at which the two boxes meet. */
void gy_adapter_search_cast_box(gy_adapter_search *s, const double box[6]);

/* The box the cast shape sweeps over fractions [0, fraction], padded (after
 * gy_adapter_search_cast_box): what a walk gathers candidates in. */
void gy_adapter_search_swept_box(const gy_adapter_search *s, double fraction, double box[6]);

/* True once the collector is satisfied: nothing further can change the result. */
static inline bool gy_adapter_search_done(const gy_adapter_search *s)
{
    return s->q.stop;
}

/* Whether the filter lets through any collider of a body of this motion type (a walk that finds
 * bodies may skip the others whole), any static one, or any dynamic or kinematic one. */
bool gy_adapter_search_wants(const gy_adapter_search *s, gy_motion_type type);
static inline bool gy_adapter_search_statics(const gy_adapter_search *s)
{
    return gy_adapter_query_wants_statics(&s->q);
}
static inline bool gy_adapter_search_moving(const gy_adapter_search *s)
{
    return gy_adapter_query_wants_moving(&s->q);
}

/* A closest-hit query's best so far: rays, its distance (m); casts, its fraction. False when
 * nothing bounds the query (another collector, or no hit yet): walk everything. */
static inline bool gy_adapter_search_bound(const gy_adapter_search *s, double *bound)
{
    if (s->q.collector != GY_COLLECT_CLOSEST || s->q.count == 0)
        return false;
    *bound = s->ray ? s->q.hits[0].distance : s->q.hits[0].fraction;
    return true;
}

#ifdef __cplusplus
}
#endif

#endif
