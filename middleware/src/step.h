/* The front end's step: the substep loop and the rules every middleware gets after its solve.
 *
 * A driver supplies its step in parts (gy_driver_step: begin, one substep's collide-and-solve,
 * the end of the step) and the raw state those parts leave behind (a
 * moving body's centre of mass, velocities, whether it is awake, its axis locks, and the
 * geometric tests continuous collision asks of it). The front end runs the loop and applies,
 * once for every driver, before each substep's solve, the forces and torques the host added
 * before the step (gy_adapter_motion.force), handed to every awake dynamic body's solve in each
 * substep and dropped after the step, and after each substep's solve, in this order:
 *
 * - the overlap correction over the driver's solved points (overlap.h), for a driver that
 *   lists them;
 * - the ballistic correction (gy_adapter_ballistic_*): a free-flying awake body is moved by
 *   what semi-implicit Euler misses of its gravity, on its free axes;
 * - the axis-lock projection (gy_adapter_project_locks);
 * - continuous collision (ccd.h): which bodies sweep, how far the others moved, the candidate
 *   colliders (filters and one-way platforms), and placing the two where they first touch.
 *
 * then joint breaks (gy_frontend_break_joints) and the sleep rule (gy_adapter_sleep_*) for a
 * driver whose middleware has none of its own.
 *
 * It wakes the bodies touching a static placed since the last step, frames the contact report's
 * step (gy_adapter_contacts_begin_step / _end_step), runs its start for a driver that collides
 * only active pairs (sleepers a solved pair joined to an active body woken, pairs with no active
 * side carried over) and its end: the pairs the solver took in only some substeps reported as
 * if over the whole step (gy_adapter_contacts_settle_unsolved), resting pairs kept within 1 mm,
 * the sensor pass (sensor pairs kept only if they overlap at the step's end poses), the overlaps
 * carried over and the impulses reported; and it judges one-way platforms on a pair's deepest
 * point for the driver's pre-solve hook (gy_frontend_one_way_pair).
 *
 * Threading: the world's bound thread, inside the contract's step. */
#ifndef GYRE_STEP_H
#define GYRE_STEP_H

#include "contacts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gy_driver;
struct gy_driver_world;
struct gy_driver_body;
struct gy_driver_records;
struct gy_backend_world;

GY_ARRAY_DEFINE(gy_frontend_body_ids, gy_body_id)

/* The front end's step state for one world: scratch grown to its peak and reused. */
typedef struct gy_frontend_step {
    const gy_allocator *allocator;
    struct gy_backend_world *world;      /* the front-end world stepped */
    const struct gy_driver_records *rec; /* its pools and moving bodies */
    gy_vec3 gravity;                     /* the world's, m/s² */
    /* Statics placed since the last step began (gy_adapter_body.placed), to clear their marks at
     * its end; when the list could not grow, every body's mark is cleared instead. */
    gy_frontend_body_ids placed;
    bool placed_overflow;
    bool placed_any;                     /* a placed static has colliders: placed_box holds them */
    double placed_box[6];                /* the union of their boxes in the static grid */
    struct gy_driver_collider **scratch; /* continuous collision's candidates */
    uint32_t scratch_count, scratch_capacity;
    double last_dt;  /* the previous step's length, 0 before the first */
    gy_result error; /* first allocation failure of the current step */
} gy_frontend_step;

void gy_frontend_step_init(gy_frontend_step *s, const gy_allocator *al, gy_vec3 gravity,
                           struct gy_backend_world *world, const struct gy_driver_records *rec);

/* Marks a static just placed (created, moved or refiltered; its colliders indexed where they now
 * are): the next step wakes the sleepers it touches, which no vendor would collide (driver.h).
 * Never fails. */
void gy_frontend_step_placed(gy_frontend_step *s, const struct gy_driver *d,
                             struct gy_driver_body *b);
void gy_frontend_step_fini(gy_frontend_step *s);

/* Steps the driver's world by dt in `substeps` substeps of h (dt checked by the caller; `tally`
 * counts the world's sensors). Returns
 * the step's first error (GY_OK, or out of memory when some report or scratch could not grow). */
gy_result gy_frontend_step_run(gy_frontend_step *s, const struct gy_driver *d,
                               struct gy_driver_world *dw, gy_adapter_contacts *contacts,
                               const gy_adapter_tally *tally, double dt, double h,
                               uint32_t substeps);

/* After a substep's rules (frontend.c): every breakable joint whose force (the driver's
 * joint_force) exceeded its break force is listed in the step's broken joints and released. On a
 * full list the joint holds this step (GY_ERR_OUT_OF_MEMORY; it is checked again after the next
 * solve). */
gy_result gy_frontend_break_joints(struct gy_backend_world *w);

/* The pre-solve hook's one-way rule for a contact between colliders a and b (records of the
 * driver `c` is bound to, gy_adapter_contacts_bind): false when either is a one-way platform
 * whose verdict on the other is "passing". `normal` points from a to b; `point` and
 * `penetration` (m, ≥ 0 when touching) are the pair's deepest point of this narrow phase: a
 * verdict, taken at the pair's first contact, is kept until the two separate
 * (docs/middleware.md), so a driver whose narrow phase hands over one point at a time holds a
 * pair's points until it has them all when gy_frontend_one_way_judged says no verdict stands. An
 * out-of-memory while recording it is noted in *error. */
bool gy_frontend_one_way_pair(gy_adapter_contacts *c, const gy_adapter_collider *a,
                              const gy_adapter_collider *b, gy_vec3 normal, gy_vec3 point,
                              double penetration, gy_result *error);

/* Whether gy_frontend_one_way_pair would answer for colliders a and b without their point: true
 * when neither is a one-way platform or every verdict needed stands (*accepted is then the
 * answer). */
bool gy_frontend_one_way_judged(gy_adapter_contacts *c, const gy_adapter_collider *a,
                                const gy_adapter_collider *b, bool *accepted);

#ifdef __cplusplus
}
#endif

#endif
