/* The front end's overlap correction over a driver's raw contact points.
 *
 * A solver whose contact rows correct overlap through the velocities (Baumgarte) leaves two
 * things behind: overlap deeper than GY_ADAPTER_SOLVER_DEPTH it was not shown, and, once an
 * overlap has closed, the speed its correction gave. A driver that reports its solved contact
 * points here (one gy_adapter_point each, in this substep's gy_adapter_points) gets both handled
 * once, after its solve, by gy_adapter_overlap_settle:
 *
 * - the push-out, for a driver with `body_push` (one whose vendor has no split impulse of its
 *   own): what is left beyond GY_ADAPTER_SOLVER_DEPTH is closed by GY_ADAPTER_PUSH_ERP of itself
 *   per substep (at most `max_speed`), through pseudo-velocities solved like contact rows and
 *   integrated into the poses alone (split impulse);
 * - the give-back: every body remembers the largest correction speed its points asked for, less
 *   what its centre no longer separates at, while it keeps touching (gy_adapter_settle); when
 *   this substep's motion closes every overlap it has, its points take back that much of the
 *   separation of the centres of mass. Bouncing points keep their rebound;
 * - the report: each point's solved force (and what the give-back took) is added to its pair's
 *   impulses.
 *
 * It touches vendor state only through the driver's raw body primitives (gy_driver_step).
 * Threading: the world's bound thread, inside the contract's step. */
#ifndef GYRE_OVERLAP_H
#define GYRE_OVERLAP_H

#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What every body record keeps for the give-back (a static's is shared by the points that touch
 * it): the largest correction speed (m/s) its points asked of the solver, less what its centre
 * no longer separates at, while it kept touching. */
typedef struct gy_adapter_settle {
    double correction_speed;
} gy_adapter_settle;

/* A moving body's push-out within one substep: its pseudo-velocities (m/s, rad/s), integrated
 * into its pose once. */
typedef struct gy_adapter_push {
    gy_vec3 linear, angular;
} gy_adapter_push;

/* One contact point the driver's solver took this substep. The driver fills the fields down to
 * `bounces`; the rest is the front end's. */
typedef struct gy_adapter_point {
    uint32_t pair;       /* the pair's index in this step's report */
    const double *force; /* where the solver leaves the force on body1 (N, 3 values) */
    gy_vec3 normal;      /* unit, towards body1 (moving body1 along it separates the two) */
    bool body1_is_a;     /* body1 owns the pair's collider a */
    gy_adapter_body *body1, *body2; /* the point's bodies (a static one's record included) */
    gy_vec3 position;               /* contact point, world */
    double depth; /* overlap when the substep began (m), then what the solve left */
    bool bounces; /* restitution aimed the point at a rebound this substep (it keeps it) */
    /* The push-out's total (pseudo-impulse, N·s), the impulse the give-back took (N·s, <= 0),
     * each body's response to a unit impulse along the normal and the inverse of the point's
     * effective mass. */
    double push, relax;
    gy_vec3 lin1, spin1, lin2, spin2;
    double inv_k;
    /* The bodies' arms (point minus centre of mass) and states, read once per substep: nothing
     * moves them until the push-out's poses. A static has no push (NULL) and no arm. */
    gy_vec3 arm1, arm2;
    gy_adapter_push *push1, *push2;
    gy_adapter_settle *settle1, *settle2;
} gy_adapter_point;

/* The fraction of the overlap beyond GY_ADAPTER_SOLVER_DEPTH the push-out closes per substep, as
 * a vendor's split impulse does by default (Bullet's). */
#define GY_ADAPTER_PUSH_ERP 0.8

/* A substep's points and the solver's settings they were solved with; the array grows to its
 * peak and is reused. */
typedef struct gy_adapter_points {
    gy_adapter_point *items;
    uint32_t count, capacity;
    double erp;          /* the contact rows' error reduction per substep */
    double max_speed;    /* the rows' largest correction speed (m/s) */
    uint32_t iterations; /* of the push-out and the give-back */
} gy_adapter_points;

/* The slot for the next point (not counted until the driver increments `count`), NULL when out
 * of memory (noted in *error). */
gy_adapter_point *gy_adapter_points_next(gy_adapter_points *pts, const gy_allocator *al,
                                         gy_result *error);
void gy_adapter_points_free(gy_adapter_points *pts, const gy_allocator *al);

struct gy_driver_step;
struct gy_driver_body;
struct gy_adapter_contacts;

/* After a substep's solve: the push-out (a driver with body_push), the give-back and the points'
 * impulses added to their pairs in `c`'s report (the tangent as the force on collider b's body);
 * empties the points. */
void gy_adapter_overlap_settle(const struct gy_driver_step *ds, struct gy_adapter_contacts *c,
                               double h);

/* Before a substep's solve, for each moving body: a body whose last solve gave it no contact is
 * free and has nothing left to give back; `in_contact` starts over. */
void gy_adapter_overlap_begin(const struct gy_driver_step *ds, struct gy_driver_body *const *moving,
                              uint32_t n);

#ifdef __cplusplus
}
#endif

#endif
