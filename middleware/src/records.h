/* The Gyre side of a world's bodies, colliders and joints: what their definitions said and what
 * the front end's rules read (contact policy, query filters, contact naming, joint counts), kept
 * in one layout whatever the middleware.
 *
 * A driver's body, collider and joint record starts with the matching record here (its member
 * `base`), as its resource records start with gy_adapter_resource: the front end and the shared
 * rules read the handle pools' payloads through these types, and the driver keeps beside `base`
 * only its vendor objects and the step state its middleware needs. Plain C, no vendor headers. */
#ifndef GYRE_RECORDS_H
#define GYRE_RECORDS_H

#include <assert.h>

#include "adapter_common.h"
#include "gyre/backend/backend.h"
#include "joint_drive.h"
#include "static_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What only a moving (dynamic or kinematic) body has: its definition's motion settings and the
 * step's state of it. It lives in the driver's record of the body (the body record's `motion`),
 * so a static, of which a level holds thousands, carries none of it. */
typedef struct gy_adapter_motion {
    double gravity_factor;
    /* Dynamic bodies: the mass (kg), from the definitions at creation, then as last set (the
     * front end sets it after the driver's body_create, and after body_set_mass, which still
     * reads the old one here); 0 for a kinematic body. */
    double mass;
    double linear_damping, angular_damping; /* Gyre's "fraction per second" values */
    /* Step state (step.h): the centre of mass when the current substep began, and whether one
     * of its points stays overlapped after the substep's solve (the give-back, overlap.h). */
    gy_vec3 substep_start;
    bool keeps_touching;
    bool continuous;                      /* dynamic bodies only */
    bool lock_linear[3], lock_angular[3]; /* dynamic bodies only */
    /* The centre of mass where the body was made or last posed: the coordinates its locked
     * linear axes hold (the front end sets it from the driver's body_com). */
    gy_vec3 lock_position;
    /* Dynamic bodies: the force (N, at the centre of mass) and torque (N·m), world, added since
     * the last step; the step applies them in each of its substeps the body is awake for and
     * then clears them (step.h). */
    gy_vec3 force, torque;
    /* Step state: whether the driver's solve of the current substep gave the body contacts. */
    bool in_contact;
    /* Step state: whether its pairs are collided in the current substep, by the front end's
     * activity rule (gy_driver_body_moving), set before each substep; the front end also
     * activates sleepers (step.h). A driver that collides only active pairs reads it, and has a
     * kinematic body's vendor state follow it. */
    bool active;
    uint32_t moving_index; /* its slot in the front end's moving list (driver.h) */
    /* Dynamic bodies: the radius of the sphere about the centre of mass inside its solid
     * colliders (m), what continuous collision sweeps (set by the front end, 0 until then). */
    double ccd_radius;
    /* Dynamic bodies: the turn (rad/s) under which the sleep rule lets it sleep
     * (gy_adapter_sleep_turn of its extent; set by the front end, 0 until then). */
    double sleep_turn;
    /* Its first collider that is not a sensor (NULL if none): what continuous collision sweeps
     * it as, and whose filter picks the sweep's candidates. */
    const struct gy_adapter_collider *solid;
    /* The Gyre joints on the body, through gy_adapter_joint.next: a joint's first body is never
     * static, so every joint is on a moving body's list (gy_adapter_bodies_jointed). */
    struct gy_adapter_joint *joints;
    /* Woken (gy_driver_wake: posed, set moving, a joint or filter changed) or made since the last
     * step ended: a kinematic body then takes part in the next step's pair search even at rest.
     * The front end sets and clears it, and its activity rule reads it (gy_driver_body_moving). */
    bool pose_written;
} gy_adapter_motion;

/* A body as defined: fixed at creation except `joint_count` and `reported_step`. What only a
 * moving body needs is in its motion part, so a static's head stays small. */
typedef struct gy_adapter_body {
    gy_body_id id;
    uint64_t user_data;
    /* The last step whose contact report or one-way verdicts named it (contacts.h): a release
     * scans them only when this is the current or the previous step. */
    uint64_t reported_step;
    gy_adapter_motion *motion; /* moving bodies: their part in the driver's record; NULL static */
    uint32_t joint_count;      /* Gyre joints attached to the body */
    uint8_t type;              /* gy_motion_type */
    bool allow_sleeping;
    /* A static placed (created, moved or refiltered) since the last step began, until that step
     * ends (step.h): the step wakes what it touches. */
    bool placed;
} gy_adapter_body;

/* A moving body's motion part. */
static inline gy_adapter_motion *gy_adapter_body_motion(const gy_adapter_body *b)
{
    assert(b->motion != NULL);
    return b->motion;
}

/* Whether the body's pairs are collided in the current substep (gy_adapter_motion.active); a
 * static's never are. */
static inline bool gy_adapter_body_active(const gy_adapter_body *b)
{
    return b->motion != NULL && b->motion->active;
}

/* A body's first collider that is not a sensor (records.h's gy_adapter_motion.solid); NULL for
 * a static (nothing sweeps it) or a body of sensors only. */
static inline const struct gy_adapter_collider *gy_adapter_body_solid(const gy_adapter_body *b)
{
    return b->motion != NULL ? b->motion->solid : NULL;
}

/* Marks that the driver's solve gave the body contacts this substep (statics keep no such
 * state: nothing moves them). */
static inline void gy_adapter_body_touched(gy_adapter_body *b)
{
    if (b->motion != NULL)
        b->motion->in_contact = true;
}

/* What few colliders set: a local pose other than the identity, a one-way platform's side and
 * slop, a conveyor's surface velocity, a plane's numbers other than the defaults. It lives beside
 * the collider record (its `rare`), so the common collider (a level's static box) carries none
 * of it. The front end makes it before the driver builds the body (gy_adapter_collider_rare_make),
 * since the driver reads the local pose and the plane while it builds. */
typedef struct gy_adapter_collider_rare {
    gy_pose local_pose;       /* in the Gyre body frame, rotation normalised */
    gy_vec3 one_way_normal;   /* collider-local, unit */
    double one_way_slop;      /* metres */
    gy_vec3 surface_velocity; /* collider-local, m/s */
    gy_vec3 plane_normal;     /* planes: world-space unit normal, as given */
    double plane_offset;      /* planes: dot(normal, p) = offset */
} gy_adapter_collider_rare;

/* A collider as defined. The material and filter change through the contract's setters; the
 * rest is fixed at creation. Its body's id and user value are read through `owner`: a static
 * level holds one record per collider, so nothing here repeats what the body holds, and the
 * shape keeps only what its type reads (the rest of the definition's gy_shape is unused). */
typedef struct gy_adapter_collider {
    gy_collider_id id;
    gy_adapter_body *owner; /* its body's record */
    /* The local pose, one-way, surface-velocity and plane values when a definition set any of
     * them away from the defaults (gy_adapter_collider_rare_make), NULL otherwise. */
    const gy_adapter_collider_rare *rare;
    union {
        /* Sphere: radius; capsule and cylinder: radius, height; box: full extents. */
        double size[3];
        /* Hull and mesh: the resolved resource record (the front end counts its reference). */
        gy_adapter_resource *resource;
    } shape;
    double friction, restitution; /* the material's numbers */
    uint64_t user_data;
    /* The narrow members last, together. */
    uint32_t category, mask;
    uint8_t shape_type;          /* gy_shape_type */
    uint8_t body_type;           /* gy_motion_type */
    uint8_t friction_combine;    /* gy_combine_mode */
    uint8_t restitution_combine; /* gy_combine_mode */
    bool is_sensor;
    bool contact_response;
    bool one_way;
} gy_adapter_collider;

/* A static collider's entry in the front end's static grid (static_grid.h): it lies right before
 * the collider's record. A driver lays out GY_ADAPTER_GRID_ENTRY_SIZE bytes before the record of
 * every collider of a static body, and none before a moving body's, so that the colliders of
 * moving bodies (a pile holds thousands) carry no grid entry. The front end writes the entry
 * (indexing the collider by its gy_driver.collider_box); a driver may read the box it holds. */
#define GY_ADAPTER_GRID_ENTRY_SIZE sizeof(gy_static_grid_item)

static inline gy_static_grid_item *gy_adapter_collider_grid(const gy_adapter_collider *c)
{
    assert(c->body_type == GY_MOTION_STATIC);
    return (gy_static_grid_item *)(void *)((char *)(uintptr_t)c - GY_ADAPTER_GRID_ENTRY_SIZE);
}
static inline gy_adapter_collider *gy_adapter_grid_collider(gy_static_grid_item *item)
{
    return (gy_adapter_collider *)(void *)((char *)item + GY_ADAPTER_GRID_ENTRY_SIZE);
}

/* A collider's pose in the Gyre body frame (rotation normalised): its side record's, else the
 * identity. */
static inline gy_pose gy_adapter_collider_local_pose(const gy_adapter_collider *c)
{
    return c->rare != NULL ? c->rare->local_pose : gy_pose_identity();
}

/* A collider's one-way normal (collider-local, unit), one-way slop (m) and surface velocity
 * (collider-local, m/s): its side record's, else the definition's defaults. */
static inline gy_vec3 gy_adapter_collider_one_way_normal(const gy_adapter_collider *c)
{
    gy_vec3 up = {0.0, 1.0, 0.0};
    return c->rare != NULL ? c->rare->one_way_normal : up;
}
static inline double gy_adapter_collider_one_way_slop(const gy_adapter_collider *c)
{
    return c->rare != NULL ? c->rare->one_way_slop : GY_DEFAULT_ONE_WAY_SLOP;
}
static inline gy_vec3 gy_adapter_collider_surface_velocity(const gy_adapter_collider *c)
{
    gy_vec3 none = {0.0, 0.0, 0.0};
    return c->rare != NULL ? c->rare->surface_velocity : none;
}

/* A collider's material as the contract states it. */
static inline gy_material gy_adapter_collider_material(const gy_adapter_collider *c)
{
    gy_material m;
    m.friction = c->friction;
    m.restitution = c->restitution;
    m.friction_combine = (gy_combine_mode)c->friction_combine;
    m.restitution_combine = (gy_combine_mode)c->restitution_combine;
    return m;
}
void gy_adapter_collider_set_material(gy_adapter_collider *c, const gy_material *m);

/* A collider's shape as a gy_shape: the members its type reads (a hull's or mesh's resource id,
 * a plane's normal and offset), the others zero. */
gy_shape gy_adapter_collider_shape(const gy_adapter_collider *c);

/* A hull collider's hull (its resource's), NULL for other shapes. */
static inline const gy_hull *gy_adapter_collider_hull(const gy_adapter_collider *c)
{
    bool hull = c->shape_type == GY_SHAPE_HULL && c->shape.resource != NULL;
    return hull ? &c->shape.resource->hull : NULL;
}

/* A joint as defined. */
typedef struct gy_adapter_joint {
    gy_joint_id id;
    gy_adapter_body *a, *b; /* its bodies' records (b NULL: the world) */
    gy_joint_type type;     /* as built: a zero-length distance joint is a ball joint */
    bool breakable;
    double break_force; /* N */
    uint64_t user_data;
    uint32_t breakable_index; /* slot in the world's breakable list, UINT32_MAX if none */
    /* What the joint drive (joint_drive.h) reads before every solve. */
    gy_joint_motor motor; /* hinge and slider; joint_set_motor replaces it */
    bool has_limits;      /* hinge and slider: limits {min, max}, a hinge's within ±pi */
    double limits[2];
    gy_vec3 anchor_a; /* hinge and slider: the anchor in a's body frame */
    gy_vec3 anchor_b; /* distance: the anchor in b's body frame (in the world when b is NULL) */
    bool has_cone, has_twist_limits; /* ball */
    double cone_angle, twist_min, twist_max;
    gy_joint_cone_frame cone_frame; /* ball: captured at creation (gy_joint_drive_attach) */
    bool has_spring;                /* distance (as built): its spring */
    double spring_frequency, spring_damping_ratio;
    /* The next joint on the list of body a's and of body b's motion part (b's: NULL when b is
     * static or the world). */
    struct gy_adapter_joint *next[2];
} gy_adapter_joint;

/* Fills a body record from a valid definition (id and joint count left as they are). `motion` is
 * the moving body's motion part in the driver's record (filled here), NULL for a static. */
void gy_adapter_body_record_init(gy_adapter_body *b, const gy_body_def *def,
                                 gy_adapter_motion *motion);

/* Fills a collider record from a valid definition for body `b` (its id left as it is), with
 * its resolved resource `res` (NULL for primitives) and its side record `rare` (the front end's,
 * gy_adapter_collider_rare_make; NULL when the definition sets none). A body's colliders are
 * filled in their order, after the body. */
void gy_adapter_collider_record_init(gy_adapter_collider *c, const gy_collider_def *def,
                                     gy_adapter_body *b, gy_adapter_resource *res,
                                     const gy_adapter_collider_rare *rare);

/* Makes the side record of a collider defined by valid `def` when the definition sets a local
 * pose other than the identity, a one-way normal or slop other than the defaults, a surface
 * velocity, or plane numbers other than the defaults; *out is NULL otherwise. */
gy_result gy_adapter_collider_rare_make(const gy_allocator *a, const gy_collider_def *def,
                                        gy_adapter_collider_rare **out);
/* Frees a side record (NULL: nothing). */
void gy_adapter_collider_rare_free(const gy_allocator *a, const gy_adapter_collider_rare *rare);
/* Frees a collider record's side record, if any. */
void gy_adapter_collider_rare_fini(const gy_allocator *a, gy_adapter_collider *c);

/* Fills a joint record from a valid definition, its type and length resolved by the front end
 * (gy_adapter_joint_length), between bodies `a` and `b` (NULL: the world); id left as it is, no
 * breakable slot yet. */
void gy_adapter_joint_record_init(gy_adapter_joint *j, const gy_joint_def *def, gy_adapter_body *a,
                                  gy_adapter_body *b);

/* Which of joint `j`'s list links belongs to body `b`'s list, and the joint after `j` on it. */
static inline uint32_t gy_adapter_joint_side(const gy_adapter_joint *j, const gy_adapter_body *b)
{
    return j->a == b ? 0u : 1u;
}
static inline gy_adapter_joint *gy_adapter_joint_next(const gy_adapter_joint *j,
                                                      const gy_adapter_body *b)
{
    return j->next[gy_adapter_joint_side(j, b)];
}

/* Counts a built joint on its bodies and lists it on their motion parts, and uncounts and
 * unlists one about to be released. */
void gy_adapter_joint_attach(gy_adapter_joint *j);
void gy_adapter_joint_detach(gy_adapter_joint *j);

/* The walk behind gy_adapter_bodies_jointed, for two bodies that both have joints: the joints of
 * the moving one with fewer. */
bool gy_adapter_joint_between(const gy_adapter_body *a, const gy_adapter_body *b);

/* Whether a Gyre joint connects bodies `a` and `b`: jointed bodies never collide with each other
 * (gy_adapter_contact_gate). Inline: every raw pair asks, and most bodies have no joint. */
static inline bool gy_adapter_bodies_jointed(const gy_adapter_body *a, const gy_adapter_body *b)
{
    return a->joint_count != 0 && b->joint_count != 0 && gy_adapter_joint_between(a, b);
}

/* Whether two colliders' filters let them collide (each one's category in the other's mask). */
bool gy_adapter_colliders_filter(const gy_adapter_collider *a, const gy_adapter_collider *b);

/* True when a collider passes a query filter (NULL: the default filter). Inline: queries ask it
 * of every candidate. */
static inline bool gy_adapter_collider_accepts(const gy_query_filter *f,
                                               const gy_adapter_collider *c)
{
    return gy_adapter_filter_accepts(f, c->category, (gy_motion_type)c->body_type, c->is_sensor,
                                     c->owner->id, c->id);
}

/* Names a contact's pair: bodies, colliders and their bodies' user values, with `a` first, and
 * marks it a sensor contact when either collider is one. */
void gy_adapter_contact_name(gy_contact *ct, const gy_adapter_collider *a,
                             const gy_adapter_collider *b);

#ifdef __cplusplus
}
#endif

#endif
