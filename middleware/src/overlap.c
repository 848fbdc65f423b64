/* The front end's overlap correction (overlap.h). */
#include "overlap.h"

#include <math.h>

#include "contacts.h"
#include "driver.h"
#include "gyre/math.h"

gy_adapter_point *gy_adapter_points_next(gy_adapter_points *pts, const gy_allocator *al,
                                         gy_result *error)
{
    gy_result r = gy_array_reserve(al, (void **)&pts->items, &pts->capacity, pts->count + 1u,
                                   sizeof *pts->items);
    if (r != GY_OK) {
        gy_adapter_note_error(error, r);
        return NULL;
    }
    return &pts->items[pts->count];
}

void gy_adapter_points_free(gy_adapter_points *pts, const gy_allocator *al)
{
    gy_free(al, pts->items, (size_t)pts->capacity * sizeof *pts->items);
    pts->items = NULL;
    pts->count = pts->capacity = 0;
}

void gy_adapter_overlap_begin(const gy_driver_step *ds, gy_driver_body *const *moving, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        gy_adapter_motion *m = gy_adapter_body_motion(gy_driver_body_rec(moving[i]));
        if (!m->in_contact)
            ds->body_settle(moving[i])->correction_speed = 0.0;
        m->in_contact = false;
    }
}

/* Whether a body has vendor motion state (statics have none, and take no push). */
static bool moves(const gy_adapter_body *b)
{
    return b->type != GY_MOTION_STATIC;
}

/* A body's response at arm `r` to a unit push along `n`: the linear and angular pseudo-velocity
 * it takes (*lin, *spin; locked axes take none), and its share of the inverse effective mass. */
static double push_response(const gy_driver_step *ds, gy_adapter_body *b, gy_vec3 r, gy_vec3 n,
                            gy_vec3 *lin, gy_vec3 *spin)
{
    *lin = gy_v3(0.0, 0.0, 0.0);
    *spin = gy_v3(0.0, 0.0, 0.0);
    const gy_driver_body *db = gy_driver_body_of(b);
    if (b->type != GY_MOTION_DYNAMIC || !ds->body_awake(db))
        return 0.0;
    double mass = gy_adapter_body_motion(b)->mass;
    if (!(mass > 0.0))
        return 0.0;
    const gy_adapter_motion *m = gy_adapter_body_motion(b);
    double l[3] = {n.x, n.y, n.z};
    gy_vec3 c = gy_v3_cross(r, n);
    double cm[3] = {c.x, c.y, c.z};
    for (int k = 0; k < 3; k++) {
        if (m->lock_linear[k])
            l[k] = 0.0;
        if (m->lock_angular[k])
            cm[k] = 0.0;
    }
    *lin = gy_v3_scale(gy_v3(l[0], l[1], l[2]), 1.0 / mass);
    gy_mat3 rot = gy_quat_to_mat3(ds->body_rotation(db));
    gy_vec3 body_c = gy_mat3_apply(gy_mat3_transpose(rot), gy_v3(cm[0], cm[1], cm[2]));
    gy_vec3 s = gy_mat3_apply(rot, gy_mat3_apply(ds->body_inv_inertia(db), body_c));
    double sm[3] = {s.x, s.y, s.z};
    for (int k = 0; k < 3; k++)
        if (m->lock_angular[k])
            sm[k] = 0.0;
    *spin = gy_v3(sm[0], sm[1], sm[2]);
    return gy_v3_dot(n, *lin) + gy_v3_dot(c, *spin);
}

/* The separation speed of a point's bodies along `n` (towards body1): real velocities, or the
 * push-out's pseudo-velocities. */
static double point_speed(const gy_driver_step *ds, const gy_adapter_point *p, gy_vec3 n, bool push)
{
    gy_vec3 v = gy_v3(0.0, 0.0, 0.0);
    for (int k = 0; k < 2; k++) {
        gy_adapter_body *b = k == 0 ? p->body1 : p->body2;
        if (!moves(b))
            continue;
        gy_vec3 r = k == 0 ? p->arm1 : p->arm2;
        gy_vec3 bv;
        if (push) {
            const gy_adapter_push *pu = k == 0 ? p->push1 : p->push2;
            bv = gy_v3_add(pu->linear, gy_v3_cross(pu->angular, r));
        } else {
            gy_vec3 lv, av;
            ds->body_velocity(gy_driver_body_of(b), &lv, &av);
            bv = gy_v3_add(lv, gy_v3_cross(av, r));
        }
        v = gy_v3_mad(v, bv, k == 0 ? 1.0 : -1.0);
    }
    return gy_v3_dot(v, n);
}

static gy_vec3 linear_velocity(const gy_driver_step *ds, gy_adapter_body *b)
{
    gy_vec3 lv, av;
    ds->body_velocity(gy_driver_body_of(b), &lv, &av);
    return lv;
}

/* How fast the centres of mass of a point's bodies separate along `n`. */
static double centre_speed(const gy_driver_step *ds, const gy_adapter_point *p, gy_vec3 n)
{
    gy_vec3 v = gy_v3(0.0, 0.0, 0.0);
    if (moves(p->body1))
        v = linear_velocity(ds, p->body1);
    if (moves(p->body2))
        v = gy_v3_sub(v, linear_velocity(ds, p->body2));
    return gy_v3_dot(v, n);
}

static void push_body(gy_adapter_push *pu, gy_vec3 lin, gy_vec3 spin, double impulse)
{
    if (pu == NULL)
        return; /* a static takes no push, and its record holds none */
    pu->linear = gy_v3_mad(pu->linear, lin, impulse);
    pu->angular = gy_v3_mad(pu->angular, spin, impulse);
}

/* Each point's response to a unit impulse along its normal, and the overlap left once the
 * solved velocities have moved its bodies. */
static void prepare_points(const gy_driver_step *ds, gy_adapter_points *pts, double h)
{
    for (uint32_t i = 0; i < pts->count; i++) {
        gy_adapter_point *p = &pts->items[i];
        gy_vec3 n = p->normal;
        double k = 0.0;
        p->lin1 = p->spin1 = p->lin2 = p->spin2 = gy_v3(0.0, 0.0, 0.0);
        p->push1 = p->push2 = NULL;
        p->settle1 = ds->body_settle(gy_driver_body_of(p->body1));
        p->settle2 = ds->body_settle(gy_driver_body_of(p->body2));
        if (moves(p->body1)) {
            gy_driver_body *db = gy_driver_body_of(p->body1);
            p->push1 = ds->body_push != NULL ? ds->body_push(db) : NULL;
            p->arm1 = gy_v3_sub(p->position, ds->body_com(db));
            k += push_response(ds, p->body1, p->arm1, n, &p->lin1, &p->spin1);
        }
        if (moves(p->body2)) {
            gy_driver_body *db = gy_driver_body_of(p->body2);
            p->push2 = ds->body_push != NULL ? ds->body_push(db) : NULL;
            p->arm2 = gy_v3_sub(p->position, ds->body_com(db));
            k += push_response(ds, p->body2, p->arm2, gy_v3_neg(n), &p->lin2, &p->spin2);
        }
        p->inv_k = k > 0.0 ? 1.0 / k : 0.0;
        p->push = 0.0;
        p->relax = 0.0;
        /* The correction speed the contact row asked for: ERP × (depth − layer) / h (every
         * driver's rows aim for the contact layer, gy_adapter_contact_layer), if it
         * pushed at all. A bouncing row aims at the rebound alone and corrects nothing: what it
         * gives is the bounce's, never to be taken back when the body leaves. */
        double asked = fmin(
            pts->erp *
                fmax(0.0, fmin(p->depth, GY_ADAPTER_SOLVER_DEPTH) - GY_ADAPTER_CONTACT_LAYER) / h,
            pts->max_speed);
        if (p->bounces || !(gy_v3_dot(gy_v3(p->force[0], p->force[1], p->force[2]), n) > 0.0))
            asked = 0.0;
        p->depth -= point_speed(ds, p, n, false) * h;
        /* What is carried is what the body still separates at: speed since spent is gone, and a
         * correction that did not move the body apart is none to give back. A body resting in
         * the layer sits a little deeper or shallower from step to step, its rows asking for a
         * little; lifted off by something else (gravity turned upwards), its points each gave
         * that back, and it left 2.8e-4 m/s slow. */
        double carried = fmax(0.0, centre_speed(ds, p, n));
        for (int s = 0; s < 2; s++) {
            gy_adapter_push *pu = s == 0 ? p->push1 : p->push2;
            if (pu != NULL) {
                pu->linear = gy_v3(0.0, 0.0, 0.0);
                pu->angular = gy_v3(0.0, 0.0, 0.0);
            }
            gy_adapter_settle *st = s == 0 ? p->settle1 : p->settle2;
            st->correction_speed = fmin(fmax(asked, st->correction_speed), carried);
        }
    }
}

/* A deep overlap is undone in positions only (split impulse): the contact rows see at most
 * GY_ADAPTER_SOLVER_DEPTH of it, and what the solve leaves beyond that is closed by
 * GY_ADAPTER_PUSH_ERP of itself per substep, at most the rows' correction speed, through
 * pseudo-velocities solved like the contact rows (sequential impulses, each point's total a push)
 * and integrated into the poses alone. Through the velocities it stayed as speed: a body created a
 * metre deep was thrown out at the correction cap, a ball that landed 7 cm deep left at 1.7 m/s. A
 * driver whose vendor splits the impulse itself has no body_push. */
static void push_apart(const gy_driver_step *ds, gy_adapter_points *pts, double h)
{
    if (ds->body_push == NULL)
        return;
    double cap = pts->max_speed;
    bool any = false;
    for (uint32_t it = 0; it < pts->iterations; it++) {
        for (uint32_t i = 0; i < pts->count; i++) {
            gy_adapter_point *p = &pts->items[i];
            if (p->inv_k == 0.0 || p->bounces || (it == 0 && !(p->depth > GY_ADAPTER_SOLVER_DEPTH)))
                continue;
            double target =
                fmin(GY_ADAPTER_PUSH_ERP * fmax(0.0, p->depth - GY_ADAPTER_SOLVER_DEPTH) / h, cap);
            double d = (target - point_speed(ds, p, p->normal, true)) * p->inv_k;
            d = fmax(d, -p->push);
            p->push += d;
            push_body(p->push1, p->lin1, p->spin1, d);
            push_body(p->push2, p->lin2, p->spin2, d);
            any = true;
        }
    }
    if (!any)
        return;
    for (uint32_t i = 0; i < pts->count; i++) {
        gy_adapter_point *p = &pts->items[i];
        for (int k = 0; k < 2; k++) {
            gy_adapter_push *pu = k == 0 ? p->push1 : p->push2;
            if (pu == NULL || (gy_v3_len_sq(pu->linear) == 0.0 && gy_v3_len_sq(pu->angular) == 0.0))
                continue;
            gy_driver_body *db = gy_driver_body_of(k == 0 ? p->body1 : p->body2);
            ds->body_set_com(db, gy_v3_mad(ds->body_com(db), pu->linear, h));
            gy_quat q = ds->body_rotation(db);
            gy_vec3 a = gy_v3_scale(pu->angular, 0.5 * h);
            gy_quat dq = gy_quat_mul((gy_quat){a.x, a.y, a.z, 0.0}, q);
            ds->body_set_rotation(
                db, gy_quat_normalize((gy_quat){q.x + dq.x, q.y + dq.y, q.z + dq.z, q.w + dq.w}));
            pu->linear = gy_v3(0.0, 0.0, 0.0); /* integrated once */
            pu->angular = gy_v3(0.0, 0.0, 0.0);
        }
    }
}

/* Whether a dynamic body has a point still overlapped after this substep's motion. */
static bool keeps_touching(const gy_adapter_body *b)
{
    return b->type == GY_MOTION_DYNAMIC && b->motion->keeps_touching;
}

/* The shallow overlap the rows do correct goes through the velocities (ERP), and that speed
 * stayed once the overlap was gone: a body pushed out of the last centimetre floated off at up
 * to 0.24 m/s. When this substep's motion closes every overlap a body has, its points give back
 * its correction speed (gy_adapter_settle) of the separation of the centres of mass. A body
 * still overlapping somewhere keeps its push (that is what holds resting bodies and stacks up at
 * 10 iterations), and bouncing points keep their rebound. */
static void give_back(const gy_driver_step *ds, gy_adapter_points *pts)
{
    for (uint32_t i = 0; i < pts->count; i++)
        for (int s = 0; s < 2; s++) {
            gy_adapter_body *b = s == 0 ? pts->items[i].body1 : pts->items[i].body2;
            if (moves(b))
                b->motion->keeps_touching = false;
        }
    for (uint32_t i = 0; i < pts->count; i++)
        for (int s = 0; s < 2; s++) {
            gy_adapter_body *b = s == 0 ? pts->items[i].body1 : pts->items[i].body2;
            if (moves(b) && pts->items[i].depth > 0.0)
                b->motion->keeps_touching = true;
        }
    /* Which points give back does not change between iterations: a resting pile has none, and
     * is not walked again. */
    bool any = true;
    for (uint32_t it = 0; it < pts->iterations && any; it++) {
        any = false;
        for (uint32_t i = 0; i < pts->count; i++) {
            gy_adapter_point *p = &pts->items[i];
            const gy_adapter_settle *s1 = p->settle1, *s2 = p->settle2;
            /* Only a body leaving all its contacts gives its correction back. */
            if (p->inv_k == 0.0 || p->bounces || p->depth > 0.0 || keeps_touching(p->body1) ||
                keeps_touching(p->body2))
                continue;
            double cap = 0.0;
            cap = fmax(cap, s1->correction_speed);
            cap = fmax(cap, s2->correction_speed);
            gy_vec3 n = p->normal;
            /* Through the centres of mass only: the point a narrow phase reports on a mesh can
             * sit off the line of centres, and a turn taken there slowed a rolling ball. The
             * total taken back stays within [−cap, 0] in speed. */
            double k = gy_v3_dot(n, gy_v3_sub(p->lin1, p->lin2));
            if (!(k > 0.0))
                continue;
            any = true;
            double d = -centre_speed(ds, p, n) / k;
            d = fmin(fmax(d, -cap / k - p->relax), -p->relax);
            p->relax += d;
            for (int s = 0; s < 2; s++) {
                gy_adapter_body *b = s == 0 ? p->body1 : p->body2;
                if (!moves(b))
                    continue;
                gy_driver_body *db = gy_driver_body_of(b);
                gy_vec3 lv, av;
                ds->body_velocity(db, &lv, &av);
                ds->body_set_velocity(db, gy_v3_mad(lv, s == 0 ? p->lin1 : p->lin2, d), av);
            }
        }
    }
}

void gy_adapter_overlap_settle(const gy_driver_step *ds, gy_adapter_contacts *c, double h)
{
    gy_adapter_points *pts = &c->points;
    prepare_points(ds, pts, h);
    push_apart(ds, pts, h);
    give_back(ds, pts);
    for (uint32_t i = 0; i < pts->count; i++) {
        const gy_adapter_point *p = &pts->items[i];
        gy_vec3 f = gy_v3(p->force[0], p->force[1], p->force[2]);
        gy_vec3 n = p->normal;
        double fn = gy_v3_dot(f, n);
        gy_vec3 ft = gy_v3_mad(f, n, -fn);
        c->current.contacts[p->pair].normal_impulse += fn * h + p->relax;
        /* The tangent sums the force on collider b's body, whichever body was first. */
        gy_adapter_pair *pr = gy_adapter_contacts_record(c, p->pair);
        pr->tangent = gy_v3_mad(pr->tangent, ft, p->body1_is_a ? -h : h);
    }
    pts->count = 0;
}
