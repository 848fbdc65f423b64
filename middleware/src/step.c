/* The front end's step (step.h): the substep loop over a driver's parts and the rules applied
 * after each substep's solve. */
#include "step.h"

#include <math.h>
#include <string.h>

#include "ccd.h"
#include "driver.h"

void gy_frontend_step_init(gy_frontend_step *s, const gy_allocator *al, gy_vec3 gravity,
                           struct gy_backend_world *world, const gy_driver_records *rec)
{
    memset(s, 0, sizeof *s);
    s->allocator = al;
    s->world = world;
    s->rec = rec;
    s->gravity = gravity;
}

void gy_frontend_step_fini(gy_frontend_step *s)
{
    gy_free(s->allocator, s->scratch, (size_t)s->scratch_capacity * sizeof *s->scratch);
    s->scratch = NULL;
    s->scratch_capacity = 0;
    gy_frontend_body_ids_free(s->allocator, &s->placed);
}

/* ---- statics placed since the last step ------------------------------------------------------ */

void gy_frontend_step_placed(gy_frontend_step *s, const gy_driver *d, gy_driver_body *b)
{
    gy_adapter_body *rec = gy_driver_body_rec(b);
    if (!rec->placed) {
        rec->placed = true;
        if (gy_frontend_body_ids_push(s->allocator, &s->placed, rec->id) != GY_OK)
            s->placed_overflow = true;
    }
    uint32_t n = d->body_collider_count(b);
    for (uint32_t i = 0; i < n; i++) {
        const gy_aabb *g =
            &gy_adapter_collider_grid(gy_driver_collider_rec(d->body_collider(b, i)))->box;
        const double box[6] = {g->min.x, g->max.x, g->min.y, g->max.y, g->min.z, g->max.z};
        for (int k = 0; k < 6; k += 2) {
            s->placed_box[k] = s->placed_any ? fmin(s->placed_box[k], box[k]) : box[k];
            s->placed_box[k + 1] =
                s->placed_any ? fmax(s->placed_box[k + 1], box[k + 1]) : box[k + 1];
        }
        s->placed_any = true;
    }
}

static void placed_clear(gy_frontend_step *s)
{
    const gy_handle_pool *bodies = s->rec->bodies;
    if (s->placed_overflow) {
        for (uint32_t i = 0; i < bodies->count; i++) {
            uint64_t h;
            gy_driver_body *b = gy_handle_pool_at(bodies, i, &h);
            if (b != NULL)
                gy_driver_body_rec(b)->placed = false;
        }
    }
    for (uint32_t i = 0; i < s->placed.count; i++) {
        gy_driver_body *b = gy_handle_pool_get(bodies, s->placed.items[i].bits);
        if (b != NULL) /* released since */
            gy_driver_body_rec(b)->placed = false;
    }
    s->placed.count = 0;
    s->placed_overflow = false;
    s->placed_any = false;
}

typedef struct placed_ctx {
    const gy_driver_step *ds;
    gy_driver_world *dw;
    gy_driver_collider *c; /* a collider of the body that may be woken */
    bool touched;
} placed_ctx;

static bool placed_visit(void *ctx, gy_driver_collider *other)
{
    placed_ctx *pc = ctx;
    const gy_adapter_collider *s = gy_driver_collider_rec(other);
    if (!s->owner->placed || !gy_adapter_colliders_filter(s, gy_driver_collider_rec(pc->c)))
        return true;
    pc->touched = pc->ds->collider_touches_shifted(pc->dw, pc->c, other, gy_v3(0.0, 0.0, 0.0));
    return !pc->touched;
}

static bool boxes_overlap(const double a[6], const double b[6])
{
    return !(a[0] > b[1] || a[1] < b[0] || a[2] > b[3] || a[3] < b[2] || a[4] > b[5] ||
             a[5] < b[4]);
}

/* ---- activity ------------------------------------------------------------------------------- */

/* Every moving body's activity for the coming substep (gy_driver_body_moving). */
static void mark_active(const gy_driver *d, gy_driver_body *const *moving, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        gy_adapter_body_motion(gy_driver_body_rec(moving[i]))->active =
            gy_driver_body_moving(d, moving[i]);
}

/* Has moving body `b`'s pairs collided from now, waking a dynamic one. */
static void activate(const gy_driver *d, gy_driver_world *dw, gy_driver_body *b)
{
    gy_adapter_body *rec = gy_driver_body_rec(b);
    if (rec->type == GY_MOTION_DYNAMIC)
        gy_driver_body_wake(d, dw, b);
    gy_adapter_body_motion(rec)->active = true;
}

/* Wakes (or, for a kinematic body at rest, collides this step) every inactive moving body that
 * touches a static placed since the last step: a vendor collides no pair without an active side,
 * so geometry streamed in over a sleeper would go unnoticed. The union of the placed statics'
 * boxes keeps this to the bodies near them. */
static void wake_under_placed(const gy_frontend_step *s, const gy_driver *d, gy_driver_world *dw)
{
    const gy_driver_step *ds = d->step;
    if (!s->placed_any)
        return;
    const gy_driver_moving *moving = s->rec->moving;
    for (uint32_t i = 0; i < moving->count; i++) {
        gy_driver_body *b = moving->items[i];
        const gy_adapter_body *rec = gy_driver_body_rec(b);
        uint32_t n = gy_adapter_body_active(rec) ? 0 : d->body_collider_count(b);
        for (uint32_t k = 0; k < n && !gy_adapter_body_active(rec); k++) {
            gy_driver_collider *c = d->body_collider(b, k);
            placed_ctx pc = {ds, dw, c, false};
            double box[6];
            d->collider_box(dw, c, box);
            if (!boxes_overlap(box, s->placed_box))
                continue;
            gy_driver_statics_visit(s->rec, box, placed_visit, &pc);
            if (pc.touched)
                activate(d, dw, b);
        }
    }
}

/* ---- one-way platforms ---------------------------------------------------------------------- */

/* The one-way rule (docs/middleware.md) for `platform`'s contact with `other`, `normal` pointing
 * from the platform to the other body. The verdict, taken at the pair's first contact, stands
 * until the two separate: judged again, a body the solver pushes out of a deep landing would
 * read as rising through the platform and drop through it. */
static bool one_way_side(gy_adapter_contacts *c, const gy_adapter_collider *platform,
                         const gy_adapter_collider *other, gy_vec3 normal, gy_vec3 point,
                         double penetration, gy_result *error)
{
    bool accepted;
    if (gy_adapter_contact_one_way_known(c, platform, other, &accepted))
        return accepted;
    const gy_driver *d = c->driver;
    gy_adapter_one_way_contact oc;
    oc.platform = platform;
    oc.other = other;
    oc.normal = normal;
    oc.one_way = gy_driver_collider_to_world(d, c->dw, gy_driver_collider_of(platform),
                                             gy_adapter_collider_one_way_normal(platform));
    oc.velocity =
        gy_v3_sub(d->body_point_velocity(c->dw, gy_driver_body_of(other->owner), point),
                  d->body_point_velocity(c->dw, gy_driver_body_of(platform->owner), point));
    oc.other_com = d->step->body_com(gy_driver_body_of(other->owner));
    oc.point = point;
    oc.penetration = penetration;
    return gy_adapter_contact_one_way(c, &oc, error);
}

bool gy_frontend_one_way_pair(gy_adapter_contacts *c, const gy_adapter_collider *a,
                              const gy_adapter_collider *b, gy_vec3 normal, gy_vec3 point,
                              double penetration, gy_result *error)
{
    if (a->one_way && !one_way_side(c, a, b, normal, point, penetration, error))
        return false;
    return !b->one_way || one_way_side(c, b, a, gy_v3_neg(normal), point, penetration, error);
}

bool gy_frontend_one_way_judged(gy_adapter_contacts *c, const gy_adapter_collider *a,
                                const gy_adapter_collider *b, bool *accepted)
{
    bool ok_a = true, ok_b = true;
    if (a->one_way && !gy_adapter_contact_one_way_known(c, a, b, &ok_a))
        return false;
    if (b->one_way && !gy_adapter_contact_one_way_known(c, b, a, &ok_b))
        return false;
    *accepted = ok_a && ok_b;
    return true;
}

/* ---- after the solve ------------------------------------------------------------------------ */

/* Semi-implicit Euler moves a body (v + g h) h per substep where the exact path falls g h²/2:
 * an awake body in free flight is moved by the difference (gy_adapter_ballistic_shift), on its
 * free axes. */
static void ballistic_correction(const gy_frontend_step *s, const gy_driver_step *ds,
                                 gy_driver_body *const *moving, uint32_t n, double h)
{
    gy_vec3 g = s->gravity;
    if (gy_v3_len_sq(g) == 0.0)
        return;
    for (uint32_t i = 0; i < n; i++) {
        gy_driver_body *b = moving[i];
        const gy_adapter_body *rec = gy_driver_body_rec(b);
        const gy_adapter_motion *m = gy_adapter_body_motion(rec);
        /* The record's conditions first: asking the driver costs a call per body. */
        if (!gy_adapter_ballistic_applies(rec->type, true, m->in_contact, rec->joint_count,
                                          m->gravity_factor) ||
            !ds->body_awake(b))
            continue;
        gy_vec3 shift = gy_adapter_ballistic_shift(g, m->gravity_factor, h);
        shift = gy_v3_mul(shift, gy_v3(m->lock_linear[0] ? 0.0 : 1.0, m->lock_linear[1] ? 0.0 : 1.0,
                                       m->lock_linear[2] ? 0.0 : 1.0));
        ds->body_set_com(b, gy_v3_add(ds->body_com(b), shift));
    }
}

static bool any_lock(const gy_adapter_motion *b)
{
    for (int k = 0; k < 3; k++)
        if (b->lock_linear[k] || b->lock_angular[k])
            return true;
    return false;
}

/* An iterative solver leaves some motion on locked axes (and a torque turns through the world
 * inertia onto them): the projection removes it. */
static void project_locks(const gy_driver_step *ds, gy_driver_body *const *moving, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        gy_driver_body *b = moving[i];
        const gy_adapter_motion *rec = gy_adapter_body_motion(gy_driver_body_rec(b));
        if (!any_lock(rec) || !ds->body_awake(b))
            continue;
        gy_vec3 p = ds->body_com(b), v, a;
        ds->body_velocity(b, &v, &a);
        gy_adapter_project_locks(rec->lock_linear, rec->lock_angular, rec->lock_position, &p, &v,
                                 &a);
        ds->body_set_com(b, p);
        ds->body_set_velocity(b, v, a);
    }
}

/* Forces and torques the host added act for the whole of the next step (backend.h: they
 * accumulate until the next step), so every substep's solve gets them while the body is awake;
 * the vendor clears its own after each solve. After the step they are gone whether they acted or
 * not: a body asleep through the step (put asleep after the force, or sent to sleep part-way)
 * does not carry a stale push into a later wake. */
static void apply_force(const gy_driver_step *ds, gy_driver_body *b, gy_adapter_motion *m,
                        bool last)
{
    if (gy_v3_len_sq(m->force) == 0.0 && gy_v3_len_sq(m->torque) == 0.0)
        return;
    if (ds->body_awake(b))
        ds->body_apply_force(b, m->force, m->torque);
    if (last) {
        m->force = gy_v3(0.0, 0.0, 0.0);
        m->torque = gy_v3(0.0, 0.0, 0.0);
    }
}

/* A dynamic body wants to sleep once the average of its last GY_ADAPTER_SLEEP_SAMPLES velocities
 * has stayed below the thresholds for GY_ADAPTER_SLEEP_TIME; the vendor's islands decide when it
 * does. One made with allow_sleeping off is told it does not want to at every step: put to sleep
 * by the host and woken, it is an ordinary awake body to the vendor, whose own clock would
 * otherwise put it to sleep again. Only for a driver without a sleep rule of its own (driver.h). */
static void sleep_rule(const gy_driver_step *ds, gy_driver_body *const *moving, uint32_t n,
                       double h)
{
    if (ds->body_sleep == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        gy_driver_body *b = moving[i];
        const gy_adapter_body *rec = gy_driver_body_rec(b);
        if (rec->type != GY_MOTION_DYNAMIC)
            continue;
        gy_adapter_sleep *state = ds->body_sleep(b);
        if (!ds->body_awake(b)) {
            gy_adapter_sleep_reset(state);
            continue;
        }
        if (!rec->allow_sleeping) {
            ds->body_wants_sleep(b, false);
            continue;
        }
        gy_vec3 v, a;
        ds->body_velocity(b, &v, &a);
        ds->body_wants_sleep(b, gy_adapter_sleep_sample(state, v, a, rec->motion->sleep_turn, h));
    }
}

/* ---- continuous collision ------------------------------------------------------------------- */

typedef struct ccd_ctx {
    gy_frontend_step *s;
    const gy_driver *d;
    gy_driver_world *dw;
    gy_driver_body *body;
    gy_vec3 motion; /* the body's over the substep */
} ccd_ctx;

/* A candidate the sweep may stop at: the filters of the body's solid collider, and a one-way
 * platform only when the body moves against its one-way normal. */
static void ccd_add(void *ctx, gy_driver_collider *dc)
{
    ccd_ctx *cc = ctx;
    const gy_adapter_collider *c = gy_driver_collider_rec(dc);
    if (!gy_adapter_contact_ccd_candidate(gy_adapter_body_solid(gy_driver_body_rec(cc->body)), c))
        return;
    if (c->one_way &&
        !gy_adapter_ccd_one_way_accepts(
            cc->motion,
            gy_driver_collider_to_world(cc->d, cc->dw, dc, gy_adapter_collider_one_way_normal(c))))
        return;
    gy_frontend_step *s = cc->s;
    if (gy_array_reserve(s->allocator, (void **)&s->scratch, &s->scratch_capacity,
                         s->scratch_count + 1u, sizeof *s->scratch) != GY_OK) {
        gy_adapter_note_error(&s->error, GY_ERR_OUT_OF_MEMORY);
        return;
    }
    s->scratch[s->scratch_count++] = dc;
}

static bool ccd_sphere_touches(void *ctx, uint32_t i, gy_vec3 center, double radius)
{
    ccd_ctx *cc = ctx;
    (void)radius; /* given to the driver's ccd_begin */
    return cc->d->step->ccd_sphere_touches(cc->dw, cc->s->scratch[i], center);
}

static bool ccd_body_touches(void *ctx, uint32_t i, gy_vec3 com)
{
    ccd_ctx *cc = ctx;
    return cc->d->step->ccd_body_touches(cc->dw, cc->body, cc->s->scratch[i], com);
}

/* How far candidate i's body moved in this substep (statics never do). */
static gy_vec3 ccd_displacement(void *ctx, uint32_t i)
{
    ccd_ctx *cc = ctx;
    gy_adapter_body *o = gy_driver_collider_rec(cc->s->scratch[i])->owner;
    if (o->type == GY_MOTION_STATIC)
        return gy_v3(0.0, 0.0, 0.0);
    return gy_v3_sub(cc->d->step->body_com(gy_driver_body_of(o)),
                     gy_adapter_body_motion(o)->substep_start);
}

/* Sweeps the body from its substep start to its end against what it may have passed, moving
 * bodies included (gy_adapter_ccd_sweep); on a hit the two are put back where they first touch
 * (a dynamic one it hit too), their velocities left for the next substep's contact to resolve.
 * `reach` is the longest distance any body moved in this substep: a moving body that far from the
 * path may have crossed it. */
static void ccd_body(gy_frontend_step *s, const gy_driver *d, gy_driver_world *dw,
                     gy_driver_body *b, double reach)
{
    const gy_driver_step *ds = d->step;
    gy_adapter_body *rec = gy_driver_body_rec(b);
    gy_vec3 p0 = gy_adapter_body_motion(rec)->substep_start, p1 = ds->body_com(b);
    gy_vec3 motion = gy_v3_sub(p1, p0);
    double inner = rec->motion->ccd_radius;
    double r = gy_adapter_contact_ccd_radius(rec, inner, gy_v3_len(motion), reach);
    if (!(r > 0.0))
        return;

    ccd_ctx cc = {s, d, dw, b, motion};
    s->scratch_count = 0;
    ds->ccd_gather(dw, p0, p1, r, reach, ccd_add, &cc);
    if (s->scratch_count == 0)
        return;
    ds->ccd_begin(dw, r);
    gy_adapter_ccd_probe probe = {&cc, ccd_sphere_touches, ccd_body_touches, ccd_displacement};
    gy_adapter_ccd_hit hit;
    bool hit_something = gy_adapter_ccd_sweep(&probe, s->scratch_count, p0, p1, r, inner, &hit);
    ds->ccd_end(dw);
    if (!hit_something)
        return;
    gy_vec3 at = hit.com;
    gy_adapter_body *o = gy_driver_collider_rec(s->scratch[hit.candidate])->owner;
    if (o->type == GY_MOTION_DYNAMIC) {
        ds->body_set_com(gy_driver_body_of(o),
                         gy_v3_add(ds->body_com(gy_driver_body_of(o)), hit.rewind));
        at = gy_v3_add(at, hit.rewind);
    }
    ds->body_set_com(b, at);
}

/* Where a moving body's centre of mass was when the substep began. */
static gy_vec3 moved_from(gy_driver_body *b)
{
    return gy_adapter_body_motion(gy_driver_body_rec(b))->substep_start;
}

static void continuous_collision(gy_frontend_step *s, const gy_driver *d, gy_driver_world *dw,
                                 gy_driver_body *const *moving, uint32_t n)
{
    const gy_driver_step *ds = d->step;
    double reach = -1.0;
    for (uint32_t i = 0; i < n; i++) {
        gy_driver_body *b = moving[i];
        if (!gy_adapter_body_motion(gy_driver_body_rec(b))->continuous || !ds->body_awake(b))
            continue;
        if (reach < 0.0) {
            reach = 0.0;
            for (uint32_t k = 0; k < n; k++)
                reach = fmax(reach,
                             gy_v3_len(gy_v3_sub(ds->body_com(moving[k]), moved_from(moving[k]))));
        }
        ccd_body(s, d, dw, b, reach);
    }
}

/* ---- the report's start of step ------------------------------------------------------------- */

static bool pair_idle(const gy_adapter_pair *p, const void *ctx)
{
    (void)ctx;
    return !gy_adapter_body_active(p->a->owner) && !gy_adapter_body_active(p->b->owner);
}

/* For a driver that collides only pairs with an active side. A moving body touching a sleeper
 * last step wakes it, even if they no longer touch (the support was teleported away, say), as
 * vendor islands do for pairs still touching. A pair the resting hysteresis held apart wakes
 * nothing: its bodies did not touch, and an awake body settling within a millimetre of a sleeper
 * would wake it at every step, each of the two restarting the other's sleep time in turn. Pairs
 * with neither side active are not collided again: their report is carried over, its impulses
 * rescaled to this step's length. */
static void begin_report(gy_frontend_step *s, const gy_driver *d, gy_driver_world *dw,
                         gy_adapter_contacts *c)
{
    const gy_adapter_report *prev = &c->previous;
    for (uint32_t i = 0; i < prev->count; i++) {
        const gy_adapter_pair *p = gy_adapter_contacts_previous_record(c, i);
        gy_adapter_body *a = p->a->owner, *b = p->b->owner;
        bool active_a = gy_adapter_body_active(a);
        if (active_a == gy_adapter_body_active(b) || !p->responds)
            continue;
        gy_adapter_body *sleeper = active_a ? b : a;
        if (sleeper->type == GY_MOTION_DYNAMIC)
            activate(d, dw, gy_driver_body_of(sleeper));
    }
    gy_adapter_contacts_carry_idle(c, pair_idle, NULL, c->carry_scale, &s->error);
}

/* ---- the report's end of step ---------------------------------------------------------------- */

/* For a driver that keeps sleeping pairs itself: its vendor keeps what it solved (manifolds),
 * but an overlap the solver never took (a sensor or response-off pair) is only found by
 * colliding it, and a pair with no active side is not collided again: its last report stands. */
static bool overlap_idle(const gy_adapter_pair *p, const void *ctx)
{
    return !p->responds && !p->held && pair_idle(p, ctx);
}

static bool sensor_pair_dropped(const void *pair, const void *ctx)
{
    (void)ctx;
    const gy_adapter_pair *p = pair;
    return !p->sensor_seen && !p->carried;
}

/* Contacts are found at the start of each substep, before the solve moves the bodies, so the
 * report of a step describes where they were when it began. Sensors only report, so they can
 * describe where the step ended: their pairs are collided again at the end poses, and the report
 * keeps exactly the sensor pairs that overlap there (and those carried over asleep). */
/* A resting pair stays reported while its gap is under this (m): hysteresis, since a new pair
 * must touch. Settling lifts a resting box by far less (the rows push out a little more than
 * gravity pressed in); a body that leaves opens a gap of 1 mm in one step at 6 cm/s. */
#define KEEP_MARGIN 1e-3

/* Hysteresis for resting contacts: a solid pair the solver took last step (or that this rule
 * held) that the narrow phase found apart this step stays reported (with no impulse, `held`)
 * while the gap is under KEEP_MARGIN, tested by moving one side that far along the last normal.
 * Without it a box created resting on the ground reported enter, exit, enter while it settled. */
static void keep_resting_pairs(gy_frontend_step *s, const gy_driver_step *ds, gy_driver_world *dw,
                               gy_adapter_contacts *c)
{
    const gy_adapter_report *prev = &c->previous;
    for (uint32_t i = 0; i < prev->count; i++) {
        const gy_adapter_pair *p = gy_adapter_contacts_previous_record(c, i);
        const gy_adapter_collider *a = p->a, *b = p->b;
        if (!(p->responds || p->held) || a->is_sensor || b->is_sensor || !a->contact_response ||
            !b->contact_response || !gy_adapter_colliders_filter(a, b))
            continue;
        if (gy_adapter_contacts_has(c, a, b))
            continue;
        /* The contact normal points from a to b: a moves along it, or b against it. */
        gy_contact ct = prev->contacts[i];
        gy_vec3 shift = gy_v3_scale(ct.normal, KEEP_MARGIN);
        bool touch = a->owner->type != GY_MOTION_STATIC
                         ? ds->collider_touches_shifted(dw, gy_driver_collider_of(a),
                                                        gy_driver_collider_of(b), shift)
                     : b->owner->type != GY_MOTION_STATIC
                         ? ds->collider_touches_shifted(dw, gy_driver_collider_of(b),
                                                        gy_driver_collider_of(a), gy_v3_neg(shift))
                         : false;
        if (!touch)
            continue;
        bool is_new;
        uint32_t k = gy_adapter_contacts_pair(c, a, b, &is_new, &s->error);
        if (k == UINT32_MAX)
            return;
        ct.penetration = 0.0;
        ct.normal_impulse = 0.0;
        ct.tangent_impulse = 0.0;
        c->current.contacts[k] = ct;
        gy_adapter_contacts_record(c, k)->held = true;
    }
}

static bool body_moving(const gy_adapter_body *b, const void *ctx)
{
    return gy_driver_body_moving(ctx, (const gy_driver_body *)(const void *)b);
}

static void end_report(gy_frontend_step *s, const gy_driver_step *ds, gy_driver_world *dw,
                       gy_adapter_contacts *c, uint32_t sensors, double dt)
{
    gy_adapter_contacts_settle_unsolved(c, dt, body_moving, c->driver);
    keep_resting_pairs(s, ds, dw, c);
    gy_adapter_report *rep = &c->current;
    for (uint32_t i = 0; i < rep->count; i++)
        gy_adapter_contacts_record(c, i)->sensor_seen = !rep->contacts[i].is_sensor;
    if (sensors > 0) {
        gy_adapter_contacts_begin_pass(c);
        ds->collide_sensors(dw);
    }
    if (!ds->collides_active_only)
        gy_adapter_contacts_carry_idle(c, overlap_idle, NULL, 1.0, &s->error);
    if (sensors > 0)
        gy_adapter_contacts_remove_if(c, sensor_pair_dropped, NULL);
    for (uint32_t i = 0; i < rep->count; i++) {
        const gy_adapter_pair *p = gy_adapter_contacts_record(c, i);
        if (p->carried)
            continue; /* reported as it was */
        gy_contact *ct = &rep->contacts[i];
        ct->tangent_impulse = gy_v3_len(p->tangent);
        if (ct->normal_impulse < 0.0)
            ct->normal_impulse = 0.0;
    }
}

/* ---- the loop ------------------------------------------------------------------------------- */

gy_result gy_frontend_step_run(gy_frontend_step *s, const gy_driver *d, gy_driver_world *dw,
                               gy_adapter_contacts *contacts, const gy_adapter_tally *tally,
                               double dt, double h, uint32_t substeps)
{
    const gy_driver_step *ds = d->step;
    s->error = GY_OK;
    gy_adapter_contacts_begin_step(contacts);
    contacts->carry_scale = s->last_dt > 0.0 ? dt / s->last_dt : 1.0;
    ds->begin(dw, dt, h);
    mark_active(d, s->rec->moving->items, s->rec->moving->count);
    wake_under_placed(s, d, dw);
    if (ds->collides_active_only)
        begin_report(s, d, dw, contacts);
    for (uint32_t k = 0; k < substeps; k++) {
        uint32_t n = s->rec->moving->count;
        gy_driver_body *const *moving = s->rec->moving->items;
        if (k > 0)
            mark_active(d, moving, n);
        /* Every moving body's: continuous collision sweeps in each candidate's frame. */
        for (uint32_t i = 0; i < n; i++) {
            gy_adapter_motion *m = gy_adapter_body_motion(gy_driver_body_rec(moving[i]));
            m->substep_start = ds->body_com(moving[i]);
            apply_force(ds, moving[i], m, k + 1 == substeps);
        }
        if (ds->body_settle != NULL)
            gy_adapter_overlap_begin(ds, moving, n);
        gy_adapter_contacts_begin_pass(contacts);
        ds->solve(dw, h);
        if (ds->body_settle != NULL)
            gy_adapter_overlap_settle(ds, contacts, h);
        ballistic_correction(s, ds, moving, n, h);
        project_locks(ds, moving, n);
        continuous_collision(s, d, dw, moving, n);
        gy_result broke = gy_frontend_break_joints(s->world);
        if (broke != GY_OK)
            gy_adapter_note_error(&s->error, broke);
        sleep_rule(ds, moving, n, h);
    }
    end_report(s, ds, dw, contacts, tally->sensors, dt);
    gy_result r = ds->end(dw, dt);
    placed_clear(s);
    for (uint32_t i = 0; i < s->rec->moving->count; i++)
        gy_adapter_body_motion(gy_driver_body_rec(s->rec->moving->items[i]))->pose_written = false;
    gy_adapter_contacts_end_step(contacts);
    s->last_dt = dt;
    return r != GY_OK ? r : s->error;
}
