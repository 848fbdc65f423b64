/* The front end's contact rules and its per-step contact report, fed raw pairs by a driver.
 *
 * A driver's narrow phase hands every raw collider pair it finds to these functions instead of
 * deciding anything itself: gy_adapter_contact_gate says whether the pair is skipped, only
 * reported (sensors, contact response off) or solved; gy_adapter_contact_one_way gives the
 * one-way verdict; gy_adapter_contact_material the combined friction and restitution; the rules
 * after them what a solved point's rows aim for (axis locks, a conveyor's friction row, gravity's
 * pull on a bounce, the contact layer), leaving the driver only the vendor's calls. Pairs that
 * touch go into the report with gy_adapter_contacts_pair, which keeps the pairs found this step
 * (what the contract's contacts() returns), the last step's (for carrying sleeping pairs over),
 * the map between them and the one-way verdicts. The front end owns one per world, hands it to
 * the driver at world creation, and forgets a released body in it itself.
 *
 * Threading: the world's bound thread only, like the rest of the world. */
#ifndef GYRE_CONTACTS_H
#define GYRE_CONTACTS_H

#include "adapter_common.h"
#include "overlap.h"
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gy_driver;
struct gy_driver_world;

/* What the front end keeps of every reported pair: a driver's pair record starts with it. */
typedef struct gy_adapter_pair {
    const gy_adapter_collider *a, *b; /* the contact's collider_a / collider_b (driver records) */
    gy_vec3
        tangent;  /* tangent impulse over the step, summed as a vector (sign: the driver's), N·s */
    bool carried; /* copied from the last step's report: not collided again, nor re-summed */
    bool sensor_seen; /* the sensor pass found it at the step's end poses (or it is no sensor pair)
                       */
    bool responds;    /* the driver's solver took it (not only reported) */
    bool held;        /* apart, kept reported by the resting hysteresis (step.c): touches nothing */
    /* Seconds of this step's substeps whose solve took the pair (gy_adapter_contacts_solved),
     * and the pass that last counted. */
    double solved_time;
    uint32_t solved_pass;
    /* The pass (gy_adapter_contacts.pass) its reported point was found in, and that point's
     * signed distance: a pass reports its deepest point of the pair. */
    uint32_t pass;
    double pass_distance;
} gy_adapter_pair;

typedef struct gy_adapter_contacts {
    const gy_allocator *allocator;
    /* The driver whose narrow phase feeds it, and its world (gy_adapter_contacts_bind): the
     * pre-solve rules read raw state through them. */
    const struct gy_driver *driver;
    struct gy_driver_world *dw;
    size_t pair_size;             /* bytes of the driver's record for each pair */
    gy_adapter_report current;    /* this step's touching pairs */
    gy_adapter_report previous;   /* the last step's */
    gy_adapter_pair_map map;      /* current's index of a pair of collider records */
    gy_adapter_one_ways one_ways; /* one-way verdicts, kept until the pair separates */
    uint64_t step;                /* steps begun */
    /* This step's length over the last's (1 before the first), set by the front end as the step
     * begins: what a resting pair's impulse (its force times the step) scales by when carried. */
    double carry_scale;
    /* Narrow-phase passes begun (gy_adapter_contacts_begin_pass): each substep's, and the sensor
     * pass at the step's end poses. Never 0, which a new pair's record holds. */
    uint32_t pass;
    gy_adapter_points points;     /* this substep's solved points (overlap.h), for drivers that
                                   * report them */
} gy_adapter_contacts;

/* Empty; `pair_size` is the driver's per-pair record (zeroed for a new pair). */
void gy_adapter_contacts_init(gy_adapter_contacts *c, const gy_allocator *al, size_t pair_size);
void gy_adapter_contacts_fini(gy_adapter_contacts *c);

/* Names the driver world whose narrow phase feeds the report (once it is created). */
void gy_adapter_contacts_bind(gy_adapter_contacts *c, const struct gy_driver *d,
                              struct gy_driver_world *dw);

/* At a step's start: this step's pairs become the last step's, and none are found yet. */
void gy_adapter_contacts_begin_step(gy_adapter_contacts *c);

/* Before a narrow-phase pass (a substep's collide-and-solve, the sensor pass): the geometry it
 * reports of a pair replaces the last pass's. */
void gy_adapter_contacts_begin_pass(gy_adapter_contacts *c);

/* At a step's end: forgets the one-way verdicts of pairs not seen during the step. */
void gy_adapter_contacts_end_step(gy_adapter_contacts *c);

/* The index of the pair of colliders `a` and `b` (in either order; the records being the driver's
 * collider records' first members) in this step's report, whose collider a is the one with the
 * smaller id. A new pair is appended, named (gy_adapter_contact_name) with its other fields and
 * its driver record zeroed, and *is_new set. UINT32_MAX when out of memory (noted in *error). */
uint32_t gy_adapter_contacts_pair(gy_adapter_contacts *c, const gy_adapter_collider *a,
                                  const gy_adapter_collider *b, bool *is_new, gy_result *error);

/* Pair `i` of this step's report, carried over from the last one (its bodies asleep) and now
 * found again: the fresh solve replaces the carried report, so it is named again and its impulses
 * start from zero. False, and nothing done, for a pair not carried. */
bool gy_adapter_contacts_refresh(gy_adapter_contacts *c, uint32_t i);

/* Pair `i`'s reported geometry from a point found between collider `first` (either of the
 * pair's) and the other: the point, the unit `normal` from `first` towards the other (the
 * report's runs from collider a to b) and the penetration, the overlap the signed gap `distance`
 * shows (0 when apart). Of the points a pass gives a pair, the deepest is kept. The pair is
 * marked seen (sensor_seen): in the sensor pass, this is what keeps a sensor pair reported. */
void gy_adapter_contacts_geometry(gy_adapter_contacts *c, uint32_t i,
                                  const gy_adapter_collider *first, gy_vec3 point, gy_vec3 normal,
                                  double distance);

/* Whether pair (a, b) is in this step's report yet. */
bool gy_adapter_contacts_has(const gy_adapter_contacts *c, const gy_adapter_collider *a,
                             const gy_adapter_collider *b);

/* Carries entry `i` of the last step's report over into this step's unchanged (contact and
 * driver record), for a pair the driver did not collide again (both sides asleep). Returns its
 * index, UINT32_MAX when out of memory (noted in *error). */
uint32_t gy_adapter_contacts_carry(gy_adapter_contacts *c, uint32_t i, gy_result *error);

/* Carries over every pair of the last step's report that `idle` picks (its bodies are not
 * collided again this step) and that this step's report lacks yet: marked carried, its impulses
 * scaled by `rescale` (a resting pair's impulse is its force times the step, so the ratio of this
 * step to the last). Stops when out of memory (noted in *error). */
void gy_adapter_contacts_carry_idle(gy_adapter_contacts *c,
                                    bool (*idle)(const gy_adapter_pair *p, const void *ctx),
                                    const void *ctx, double rescale, gy_result *error);

/* The driver's solve of this pass took pair `i` (its impulses, added to the report, are fresh):
 * its solved_time grows by the substep's `h`, once per pass. */
void gy_adapter_contacts_solved(gy_adapter_contacts *c, uint32_t i, double h);

/* The end of a step of dt for the pairs the driver's solver took part of the time (read before
 * the tangents become impulses). A pair its solver took in no substep (the vendor put its bodies
 * to sleep before solving) reports its entry in the last step's report scaled by `carry_scale`,
 * as gy_adapter_contacts_carry_idle reports a pair already asleep, and is marked carried (its
 * geometry stays this step's; a pair the last step did not report keeps its impulses); one taken
 * in some substeps whose bodies have both stopped moving (`moving`, per body) fell asleep part-way
 * through and reports as if it had rested the whole step (impulses scaled by dt over its
 * solved_time). Pairs the solver never takes (overlaps) are left alone. */
void gy_adapter_contacts_settle_unsolved(gy_adapter_contacts *c, double dt,
                                         bool (*moving)(const gy_adapter_body *b, const void *ctx),
                                         const void *ctx);

/* This step's pair records (the driver's; each starts with gy_adapter_pair). */
static inline gy_adapter_pair *gy_adapter_contacts_record(const gy_adapter_contacts *c, uint32_t i)
{
    return (gy_adapter_pair *)(void *)((unsigned char *)c->current.pairs +
                                       (size_t)i * c->pair_size);
}

/* The last step's pair records. */
static inline const gy_adapter_pair *
gy_adapter_contacts_previous_record(const gy_adapter_contacts *c, uint32_t i)
{
    return (const gy_adapter_pair *)(const void *)((const unsigned char *)c->previous.pairs +
                                                   (size_t)i * c->pair_size);
}

/* Removes, in order, this step's pairs whose driver record `drop` picks. */
void gy_adapter_contacts_remove_if(gy_adapter_contacts *c,
                                   bool (*drop)(const void *pair, const void *ctx),
                                   const void *ctx);

/* Calls visit(ctx, other) for the other body of every pair of this step's report naming `body`
 * (a body moved, refiltered or removed wakes what rests on it). */
void gy_adapter_contacts_touching(const gy_adapter_contacts *c, const gy_adapter_body *body,
                                  void (*visit)(void *ctx, gy_body_id other), void *ctx);

/* A released body: wakes (through `wake`) the other bodies of this step's pairs naming it, then
 * drops every pair and one-way verdict naming it. */
void gy_adapter_contacts_forget_body(gy_adapter_contacts *c, const gy_adapter_body *body,
                                     void (*wake)(void *ctx, gy_body_id other), void *ctx);

/* ---- the pre-solve rules -------------------------------------------------------------------- */

/* What a raw pair gets. */
typedef enum gy_adapter_contact_kind {
    GY_ADAPTER_CONTACT_SKIP,   /* filtered out, or nothing that could respond */
    GY_ADAPTER_CONTACT_REPORT, /* reported, never solved: a sensor or contact response off */
    GY_ADAPTER_CONTACT_SOLVE,  /* reported and solved (subject to the one-way rule) */
} gy_adapter_contact_kind;

/* The rule for a raw pair of colliders: skipped when both are on one body, when the filters refuse
 * it, when a joint connects their bodies, or when neither body is dynamic and neither collider a
 * sensor; during a sensor pass (the step's end poses) only sensor pairs count. */
gy_adapter_contact_kind gy_adapter_contact_gate(const gy_adapter_collider *a,
                                                const gy_adapter_collider *b, bool sensor_pass);

/* The combined friction and restitution of a pair (gy_combine of each one's mode). */
void gy_adapter_contact_material(const gy_adapter_collider *a, const gy_adapter_collider *b,
                                 double *friction, double *restitution);

/* A body's colliders summed up for a broadphase that pairs whole bodies: the union of their
 * categories and of their masks, and whether one is a sensor. */
typedef struct gy_adapter_body_gate {
    uint32_t category, mask;
    bool has_sensor;
} gy_adapter_body_gate;

/* Adds a collider to its body's gate (start from a zeroed gate). */
void gy_adapter_body_gate_add(gy_adapter_body_gate *g, const gy_adapter_collider *c);

/* Whether two bodies (their types and gates) may have a pair that gy_adapter_contact_gate does not
 * skip: a broadphase prefilter that refuses nothing the gate would take. */
bool gy_adapter_bodies_may_pair(uint8_t type_a, gy_adapter_body_gate a, uint8_t type_b,
                                gy_adapter_body_gate b);

/* Whether gate `now` admits pairs `before` refused (a category or mask bit added): a broadphase
 * that filtered by `before` must look at the body's pairs again. */
bool gy_adapter_body_gate_widened(gy_adapter_body_gate before, gy_adapter_body_gate now);

/* Whether a pair's solve could only fight its bodies' axis locks: neither body `a` nor `b` can
 * move along the unit normal `n` (each is static or kinematic, or dynamic with every world axis
 * `n` has a component on locked). Such a pair is reported but not solved, since its rows would
 * load the contact's friction: a translation-locked box spinning on a floor it overlapped stopped
 * in one step. */
bool gy_adapter_contact_locked(const gy_adapter_body *a, const gy_adapter_body *b, gy_vec3 n);

/* The acceleration (m/s²) with which gravity `g` closes a contact of unit normal `n` (towards
 * body a) between bodies `a` and `b`, each falling with its share of it (0 for a static or
 * kinematic body): the pull gy_adapter_bounce_speed takes. */
double gy_adapter_contact_pull(gy_vec3 g, gy_vec3 n, const gy_adapter_body *a,
                               const gy_adapter_body *b);

/* Whether a contact point bounces in this substep, and the separation speed it leaves at
 * (*leave, m/s, from gy_adapter_bounce_speed; 0 when it does not bounce). It bounces when its
 * restitution `e` is above zero, its bodies approach (`approach` m/s, positive closing) faster than
 * GY_ADAPTER_BOUNCE_MIN_VELOCITY, and a point `offset` apart (m, negative when overlapped) is
 * closed within the substep of `h` seconds by that approach and the pull `accel` (m/s²,
 * gy_adapter_contact_pull). A point still apart at the substep's end is solved as a resting one:
 * bouncing such points (a vendor may keep them up to its breaking distance) let a pile of bouncy
 * balls push into each other and never settle. */
bool gy_adapter_contact_bounce(double e, double approach, double offset, double accel, double h,
                               double *leave);

/* The contact layer, for a solved point that does not bounce: from GY_ADAPTER_CONTACT_LAYER apart
 * to GY_ADAPTER_SOLVER_DEPTH deep (m, `depth` negative when apart), its normal row aims to bring
 * it to GY_ADAPTER_CONTACT_LAYER of depth at the rows' error reduction `erp` over a substep of `h`
 * seconds, from above or below: `*speed` the separating speed (m/s), an approach (negative) while
 * it is shallower than the layer. A resting point then sits at the layer on every driver, and one
 * the vendor left at zero depth (a corner found again) is pulled back into it rather than left to
 * rock. False for any other point, which keeps the vendor's row. */
bool gy_adapter_contact_layer(double depth, double erp, double h, double *speed);

/* What a solved point's normal row aims for, by the rules in their order: a point that bounces
 * (gy_adapter_contact_bounce with `e`, `approach`, `offset`, `accel`, `h`) leaves at its bounce
 * speed, with no overlap correction; one that does not, `depth` deep (m, negative when apart)
 * within the contact layer's range, aims for the layer (gy_adapter_contact_layer at `erp`); any
 * other keeps the vendor's row. The speed aimed for (m/s, separating) in *target, 0 for the
 * vendor's row. */
typedef enum gy_adapter_aim {
    GY_ADAPTER_AIM_VENDOR,
    GY_ADAPTER_AIM_BOUNCE,
    GY_ADAPTER_AIM_LAYER,
} gy_adapter_aim;
gy_adapter_aim gy_adapter_contact_aim(double e, double approach, double offset, double accel,
                                      double depth, double erp, double h, double *target);

/* Conveyors: the surface motion s_b - s_a of colliders a and b, each one's surface velocity turned
 * into the world through the driver the report is bound to (gy_driver_collider_to_world), in
 * *surface; false (and *surface untouched) when neither collider has a surface velocity. */
bool gy_adapter_contact_surface(const gy_adapter_contacts *c, const gy_adapter_collider *a,
                                const gy_adapter_collider *b, gy_vec3 *surface);

/* A conveyor's first friction row at a point of unit normal `n`: friction drives v_a - v_b
 * towards the part of `surface` (gy_adapter_contact_surface) along the contact's surface. That
 * part in *tangent and its length in *speed, true; false when it is too small to give a
 * direction (the row along *tangent / *speed, normalised as the vendor divides, with *speed as
 * its motion). */
bool gy_adapter_contact_conveyor(gy_vec3 surface, gy_vec3 n, gy_vec3 *tangent, double *speed);

/* Continuous collision's candidates: whether a body swept with its first solid collider `solid`
 * may hit collider `c` of another body (gy_adapter_ccd_filter_accepts). A one-way `c` must then
 * also pass gy_adapter_ccd_one_way_accepts with its world normal. */
bool gy_adapter_contact_ccd_candidate(const gy_adapter_collider *solid,
                                      const gy_adapter_collider *c);

/* The radius body `b` is swept with in this substep's continuous collision (`ccd_radius` shrunk
 * by GY_ADAPTER_CCD_SHRINK), or 0 when it needs no sweep: it has no solid collider or no radius,
 * or neither it (`moved` metres) nor any other body (`reach`) moved farther than that radius. */
double gy_adapter_contact_ccd_radius(const gy_adapter_body *b, double ccd_radius, double moved,
                                     double reach);

/* A raw contact point of a collider pair (a, b) as a driver's narrow phase found it. */
typedef struct gy_adapter_raw_point {
    gy_vec3 point_a, point_b; /* on each collider (the same point when the vendor reports one) */
    gy_vec3 normal;           /* unit, from b towards a */
    double distance; /* signed gap along the normal (point_a = point_b + normal * distance) */
    int32_t triangle_a, triangle_b; /* the mesh triangle each point is on, -1 for other shapes */
} gy_adapter_raw_point;

/* Internal mesh edges (mesh_edges.h), the rule for every contact against a mesh: when b (or else
 * a) is a mesh and the point on it lies on its triangle's inside or on inactive edges only, the
 * normal becomes the face's. A sphere's or capsule's point then goes to its deepest along the
 * normal, the distance being that point's height above the mesh point's plane (its spin would
 * otherwise read as approach at a point off its core); another shape keeps its point (a corner)
 * and the distance. The mesh's point follows the other's. True when it changed anything.
 * `pose_a` and `pose_b` are the colliders' world poses. */
bool gy_adapter_contact_mesh_edges(const gy_adapter_collider *a, gy_pose pose_a,
                                   const gy_adapter_collider *b, gy_pose pose_b,
                                   gy_adapter_raw_point *p);

/* What the one-way rule reads of a contact against a one-way `platform`. */
typedef struct gy_adapter_one_way_contact {
    const gy_adapter_collider *platform, *other;
    gy_vec3 normal;     /* contact normal, platform towards other */
    gy_vec3 one_way;    /* the platform's one-way normal in the world */
    gy_vec3 velocity;   /* other's velocity relative to the platform at the point, m/s */
    gy_vec3 other_com;  /* other body's centre of mass */
    gy_vec3 point;      /* contact point */
    double penetration; /* m */
} gy_adapter_one_way_contact;

/* Whether the pair's verdict is already known (*accepted set); marks it seen this step. */
bool gy_adapter_contact_one_way_known(gy_adapter_contacts *c, const gy_adapter_collider *platform,
                                      const gy_adapter_collider *other, bool *accepted);

/* Judges a contact by the one-way rule (gy_one_way_accepts) and records the verdict until the
 * two separate: a refusal so that a body jumping up through a platform is not caught half-way,
 * an acceptance so that a body the solver pushes out of a deep landing is not taken for one
 * rising through and dropped. */
bool gy_adapter_contact_one_way(gy_adapter_contacts *c, const gy_adapter_one_way_contact *oc,
                                gy_result *error);

#ifdef __cplusplus
}
#endif

#endif
