/* ODE driver: the step's parts (gy_driver_step; the front end runs the loop, step.h). Per
 * substep: broadphase (moving colliders among themselves through ODE's sweep-and-prune space,
 * moving against static through the static grid; statics never against statics), the near
 * callback (the front end's pre-solve rules, conveyors' among them, set on contact joints, each
 * listed as a raw point with its joint feedback), then ODE's QuickStep. The front end then applies
 * its own rules (the overlap correction over the points, ballistic gravity, axis locks, continuous
 * collision, joint breaking) through the raw state and geometry primitives at the end of this
 * file.
 *
 * Pairs whose two bodies are both asleep (or static, or unmoving kinematic) are not collided
 * again (collides_active_only, gy_adapter_motion.active): the front end carries their last report
 * over, so a sleeping pile costs no narrowphase and its touching pairs keep being reported. */
#include <math.h>
#include <string.h>

#include "../src/step.h"
#include "gyre/math.h"
#include "ode_internal.h"

#define CONTACTS_PER_PAIR 4
/* A body over several triangles gets points from each: with only four, ODE stops at the first
 * triangles it visits, which may all lie on one side of the body, and a box sliding across a
 * tessellated floor rocks at every edge. */
#define CONTACTS_PER_MESH_PAIR 16
/* Contact softness. QuickStep has no warm starting, so at 10 iterations it cannot carry a stack's
 * weight down the column within one step: every step the upper boxes sink a little and ERP pushes
 * them back. ERP 0.4 halves the resulting sag of a 10-box stack compared with ODE's usual 0.2
 * (to about 3 cm, after which the stack sleeps) without making contacts jitter; 0.5 starts to
 * pop. CFM is nearly hard: it acts
 * as compliance per unit of force, so a larger value sinks heavy bodies (a 1 m³ box of water under
 * nine others sinks 8 cm at CFM 1e-5) and eats into restitution. */
#define CONTACT_ERP 0.4
#define CONTACT_CFM 1e-9

static gy_vec3 v3(const dReal *v)
{
    return gy_v3(v[0], v[1], v[2]);
}

/* ---- storage (grown to peak, reused) -------------------------------------------------------- */

static dJointFeedback *next_feedback(gy_driver_world *w, uint32_t point)
{
    uint32_t block = point / GY_ODE_FEEDBACK_BLOCK;
    if (block >= w->feedback_block_count) {
        gy_result r =
            gy_array_reserve(w->allocator, (void **)&w->feedback_blocks,
                             &w->feedback_block_capacity, block + 1u, sizeof *w->feedback_blocks);
        if (r != GY_OK)
            return NULL;
        dJointFeedback *fb = gy_alloc(w->allocator, GY_ODE_FEEDBACK_BLOCK * sizeof *fb);
        if (fb == NULL)
            return NULL;
        /* Only f1[0] is marked before a solve (mark_solved): the rest of a slot never
         * solved must still hold something written. */
        memset(fb, 0, GY_ODE_FEEDBACK_BLOCK * sizeof *fb);
        w->feedback_blocks[w->feedback_block_count++] = fb;
    }
    dJointFeedback *fb = &w->feedback_blocks[block][point % GY_ODE_FEEDBACK_BLOCK];
    /* Marked unsolved: the solve overwrites it only if it takes the joint (mark_solved). */
    fb->f1[0] = NAN;
    return fb;
}

/* The feedback slot of this substep's point `point` (next_feedback gave it). */
static dJointFeedback *feedback_slot(const gy_driver_world *w, uint32_t point)
{
    return &w->feedback_blocks[point / GY_ODE_FEEDBACK_BLOCK][point % GY_ODE_FEEDBACK_BLOCK];
}

/* ---- the near callback ---------------------------------------------------------------------- */

/* Contacts against a mesh take the front end's rule for its internal edges
 * (gy_adapter_contact_mesh_edges). ODE reports one point for both geoms and names a trimesh's
 * triangle in the contact's side; its normal points towards c1 (from b to a). */
/* A collider's world pose in Gyre's convention, from its geom `g`. */
static gy_pose collider_pose(const gy_ode_collider *c, dGeomID g)
{
    dQuaternion oq;
    dGeomGetQuaternion(g, oq);
    gy_quat fix = gy_quat_conj(gy_ode_shape_axis_fix(c->base.shape_type));
    gy_pose p = {v3(dGeomGetPosition(g)), gy_quat_mul(gy_ode_quat_from_ode(oq), fix)};
    return p;
}

/* ODE's one point per contact goes where the rule puts the other collider's point (the mesh's
 * follows it), at the rule's depth. */
static void mesh_edges(const gy_ode_collider *c1, dGeomID g1, const gy_ode_collider *c2, dGeomID g2,
                       dContact *cs, int n)
{
    bool mesh2 = c2->base.shape_type == GY_SHAPE_MESH;
    gy_pose p1 = collider_pose(c1, g1), p2 = collider_pose(c2, g2);
    for (int i = 0; i < n; i++) {
        dContactGeom *g = &cs[i].geom;
        gy_adapter_raw_point p = {.point_a = v3(g->pos),
                                  .point_b = v3(g->pos),
                                  .normal = v3(g->normal),
                                  .distance = -g->depth,
                                  .triangle_a = g->side1,
                                  .triangle_b = g->side2};
        if (!gy_adapter_contact_mesh_edges(&c1->base, p1, &c2->base, p2, &p))
            continue;
        gy_vec3 at = mesh2 ? p.point_a : p.point_b;
        g->normal[0] = p.normal.x;
        g->normal[1] = p.normal.y;
        g->normal[2] = p.normal.z;
        g->pos[0] = at.x;
        g->pos[1] = at.y;
        g->pos[2] = at.z;
        g->depth = -p.distance;
    }
}

static void process_pair(gy_driver_world *w, gy_ode_collider *c1, gy_ode_collider *c2)
{
    gy_ode_body *b1 = gy_ode_owner(c1), *b2 = gy_ode_owner(c2);
    gy_adapter_contact_kind kind = gy_adapter_contact_gate(&c1->base, &c2->base, w->sensor_pass);
    if (kind == GY_ADAPTER_CONTACT_SKIP)
        return;
    if (!gy_adapter_body_active(&b1->base) && !gy_adapter_body_active(&b2->base))
        return; /* carried over from the last report */

    dContact cs[CONTACTS_PER_MESH_PAIR];
    bool mesh = c1->base.shape_type == GY_SHAPE_MESH || c2->base.shape_type == GY_SHAPE_MESH;
    dGeomID g1 = gy_ode_collider_geom(w, c1), g2 = gy_ode_collider_geom(w, c2);
    int n = dCollide(g1, g2, mesh ? CONTACTS_PER_MESH_PAIR : CONTACTS_PER_PAIR, &cs[0].geom,
                     sizeof(dContact));
    if (n <= 0)
        return;
    if (mesh)
        mesh_edges(c1, g1, c2, g2, cs, n);
    int deepest = 0;
    for (int i = 1; i < n; i++)
        if (cs[i].geom.depth > cs[deepest].geom.depth)
            deepest = i;
    /* ODE's normal points towards o1 (moving o1 along it separates the two). */
    gy_vec3 n_ode = v3(cs[deepest].geom.normal);
    gy_vec3 point = v3(cs[deepest].geom.pos);
    /* Rows that could only fight axis locks are left out: the pair is reported, not solved. */
    bool respond =
        kind == GY_ADAPTER_CONTACT_SOLVE && !gy_adapter_contact_locked(&b1->base, &b2->base, n_ode);
    if (respond && !gy_frontend_one_way_pair(w->contacts, &c1->base, &c2->base, gy_v3_neg(n_ode),
                                             point, cs[deepest].geom.depth, &w->step_error))
        return;

    bool is_new;
    uint32_t pi =
        gy_adapter_contacts_pair(w->contacts, &c1->base, &c2->base, &is_new, &w->step_error);
    if (pi == UINT32_MAX)
        return;
    gy_adapter_pair *pr = gy_adapter_contacts_record(w->contacts, pi);
    gy_adapter_contacts_refresh(w->contacts, pi);
    gy_adapter_contacts_geometry(w->contacts, pi, &c1->base, point, gy_v3_neg(n_ode),
                                 -cs[deepest].geom.depth);
    if (!respond)
        return;
    pr->responds = true;

    /* Joint body order: the first body must exist (statics have none). */
    gy_ode_collider *k1 = c1, *k2 = c2;
    bool flip = gy_ode_dbody(b1) == NULL;
    if (flip) {
        k1 = c2;
        k2 = c1;
    }
    dBodyID j1 = gy_ode_dbody(gy_ode_owner(k1)), j2 = gy_ode_dbody(gy_ode_owner(k2));
    double mu, bounce;
    gy_adapter_contact_material(&c1->base, &c2->base, &mu, &bounce);
    gy_vec3 surf;
    bool moving_surface = gy_adapter_contact_surface(w->contacts, &k1->base, &k2->base, &surf);
    for (int i = 0; i < n; i++) {
        dContact *c = &cs[i];
        if (flip) {
            for (int k = 0; k < 3; k++)
                c->geom.normal[k] = -c->geom.normal[k];
            dGeomID g = c->geom.g1;
            c->geom.g1 = c->geom.g2;
            c->geom.g2 = g;
        }
        gy_vec3 nrm = v3(c->geom.normal);
        memset(&c->surface, 0, sizeof c->surface);
        c->surface.mode = dContactApprox1 | dContactSoftERP | dContactSoftCFM;
        c->surface.mu = mu;
        c->surface.soft_erp = CONTACT_ERP;
        c->surface.soft_cfm = CONTACT_CFM;
        gy_vec3 at = v3(c->geom.pos);
        gy_vec3 rel = gy_v3_sub(gy_ode_body_velocity_at(gy_ode_owner(k1), at),
                                gy_ode_body_velocity_at(gy_ode_owner(k2), at));
        double approach = gy_v3_dot(rel, nrm);
        double pull = bounce > 0.0
                          ? gy_adapter_contact_pull(w->def.gravity, nrm, &gy_ode_owner(k1)->base,
                                                    &gy_ode_owner(k2)->base)
                          : 0.0;
        double target, leave = 0.0;
        gy_adapter_aim aim =
            gy_adapter_contact_aim(bounce, -approach, -c->geom.depth, pull, c->geom.depth,
                                   CONTACT_ERP, w->substep_dt, &target);
        if (aim == GY_ADAPTER_AIM_BOUNCE) {
            /* ODE aims for bounce × approach: the coefficient is set so that this is the speed
             * that keeps the bounce's energy from where the contact was found (at depth), and
             * that overlap is not pushed out (ERP or the push-out would add its height). */
            leave = target;
            c->surface.mode |= dContactBounce;
            c->surface.bounce = leave / -approach;
            c->surface.bounce_vel = GY_ADAPTER_BOUNCE_MIN_VELOCITY;
            c->surface.soft_erp = 0.0;
        } else if (aim == GY_ADAPTER_AIM_LAYER && c->geom.depth < GY_ADAPTER_CONTACT_LAYER) {
            /* ODE's own row aims a point deeper than its surface layer at the contact layer
             * already (its layer is GY_ADAPTER_CONTACT_LAYER, its ERP the row's), but a
             * shallower one at no motion, so a resting box kept whatever tilt the unconverged
             * solve left it within the layer (a crate on a conveyor belt wandered to 1e-3 rad, a
             * corner near lifting): the shallow points take the layer's approach as motionN,
             * which the row allows and never pulls. */
            c->surface.mode |= dContactMotionN;
            c->surface.motionN = target;
        }
        /* Slip-aligned friction (gy_adapter_friction_direction): with the first row along the
         * slip, the second carries none while sliding and QuickStep's per-row clamp to μ N is the
         * Coulomb cone. */
        gy_vec3 slip_dir;
        if (gy_adapter_friction_direction(rel, nrm, &slip_dir)) {
            c->surface.mode |= dContactFDir1;
            c->fdir1[0] = slip_dir.x;
            c->fdir1[1] = slip_dir.y;
            c->fdir1[2] = slip_dir.z;
        }
        /* Conveyors: friction drives v1 - v2 towards s2 - s1 along the surface. */
        gy_vec3 t;
        double tl;
        if (moving_surface && gy_adapter_contact_conveyor(surf, nrm, &t, &tl)) {
            c->surface.mode |= dContactFDir1 | dContactMotion1;
            c->fdir1[0] = t.x / tl;
            c->fdir1[1] = t.y / tl;
            c->fdir1[2] = t.z / tl;
            c->surface.motion1 = tl;
        }
        gy_adapter_points *pts = &w->contacts->points;
        gy_adapter_point *p = gy_adapter_points_next(pts, w->allocator, &w->step_error);
        dJointFeedback *fb = p != NULL ? next_feedback(w, pts->count) : NULL;
        if (fb == NULL) {
            /* Out of memory (the step reports it): the points listed stand, and the pair still
             * touches, so its bodies are still marked touched below. */
            if (p != NULL)
                gy_adapter_note_error(&w->step_error, GY_ERR_OUT_OF_MEMORY);
            break;
        }
        double depth = c->geom.depth;
        c->geom.depth = fmin(depth, GY_ADAPTER_SOLVER_DEPTH); /* the rest: the push-out */
        dJointID jc = dJointCreateContact(w->world, w->contact_group, c);
        dJointAttach(jc, j1, j2);
        dJointSetFeedback(jc, fb);
        p->pair = pi;
        p->force = fb->f1;
        p->normal = v3(c->geom.normal);
        p->body1_is_a = pr->a == &k1->base;
        p->body1 = &gy_ode_owner(k1)->base;
        p->body2 = &gy_ode_owner(k2)->base;
        p->position = at;
        p->depth = depth;
        p->bounces = leave > 0.0;
        pts->count++;
    }
    gy_adapter_body_touched(&b1->base);
    gy_adapter_body_touched(&b2->base);
}

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    if (dGeomIsSpace(o1) || dGeomIsSpace(o2)) {
        dSpaceCollide2(o1, o2, data, near_callback);
        return;
    }
    gy_ode_collider *c1 = gy_ode_geom_collider(o1), *c2 = gy_ode_geom_collider(o2);
    if (c1 != NULL && c2 != NULL)
        process_pair(data, c1, c2);
}

typedef struct static_ctx {
    gy_driver_world *w;
    gy_ode_collider *c;
} static_ctx;

static bool static_visit(void *ctx, gy_ode_collider *s)
{
    static_ctx *sc = ctx;
    process_pair(sc->w, sc->c, s);
    return true;
}

static void collide_static(gy_driver_world *w)
{
    if (w->tally->bodies[GY_MOTION_STATIC] == 0)
        return;
    for (uint32_t i = 0; i < w->moving->count; i++) {
        gy_ode_body *b = w->moving->items[i];
        if (!b->motion.active)
            continue;
        for (uint32_t k = 0; k < b->collider_count; k++) {
            static_ctx sc = {w, &gy_ode_body_records(b)[k]};
            dReal aabb[6];
            dGeomGetAABB(sc.c->geom, aabb);
            gy_ode_static_visit(w, aabb, static_visit, &sc);
        }
    }
}

/* ---- the step ------------------------------------------------------------------------------- */

/* The sensor pass (step.h): the near callback at the end poses, sensor pairs only. */
static void ode_collide_sensors(gy_driver_world *w)
{
    w->sensor_pass = true;
    dSpaceCollide(w->dynamic_space, w, near_callback);
    collide_static(w);
    w->sensor_pass = false;
}

/* dWorldQuickStep applies auto-disable before it solves: the contact joints of a body it sends
 * to sleep there are not solved, and their feedback slots (reused from earlier points) would
 * report some other contact's force (a ball in ball_pit resting with 9.0 N·s read 19.4 N·s). Such a
 * point adds no force, and its pair is not counted solved in this substep: the front end reports
 * a pair solved in no substep of a step as asleep, and one whose bodies fell asleep part-way as
 * if it had rested the whole step (gy_adapter_contacts_settle_unsolved). */
static void mark_solved(gy_driver_world *w, double h)
{
    const gy_adapter_points *pts = &w->contacts->points;
    for (uint32_t i = 0; i < pts->count; i++) {
        dJointFeedback *fb = feedback_slot(w, i);
        if (isnan(fb->f1[0]))
            memset(fb, 0, sizeof *fb);
        else
            gy_adapter_contacts_solved(w->contacts, pts->items[i].pair, h);
    }
}

static void ode_begin(gy_driver_world *w, double dt, double h)
{
    (void)dt;
    w->step_error = GY_OK;
    w->substep_dt = h;
    if (h != w->damping_dt) {
        for (uint32_t i = 0; i < w->moving->count; i++)
            gy_ode_body_apply_damping(w->moving->items[i], h);
        w->damping_dt = h;
    }
}

static void ode_solve(gy_driver_world *w, double h)
{
    gy_vec3 g = w->def.gravity;
    for (uint32_t i = 0; i < w->moving->count; i++) {
        gy_ode_body *b = w->moving->items[i];
        /* ODE keeps a body awake while it touches an enabled body that cannot sleep, and a
         * kinematic body never auto-disables: a crate resting on a lift that had stopped never
         * slept (Bullet's did). A kinematic body is enabled exactly while it moves. */
        if (b->base.type == GY_MOTION_KINEMATIC &&
            b->motion.active != (dBodyIsEnabled(b->body) != 0)) {
            if (b->motion.active)
                dBodyEnable(b->body);
            else
                dBodyDisable(b->body);
        }
        if (b->base.type != GY_MOTION_DYNAMIC || !b->motion.active)
            continue;
        /* ODE has gravity on or off per body; other factors are applied as a force. */
        if (b->motion.gravity_factor != 1.0 && b->motion.gravity_factor != 0.0) {
            double k = b->motion.mass * b->motion.gravity_factor;
            dBodyAddForce(b->body, g.x * k, g.y * k, g.z * k);
        }
    }
    gy_adapter_points *pts = &w->contacts->points;
    pts->erp = CONTACT_ERP;
    pts->max_speed = dWorldGetContactMaxCorrectingVel(w->world);
    pts->iterations = w->def.solver_iterations;
    dSpaceCollide(w->dynamic_space, w, near_callback);
    collide_static(w);
    /* QuickStep shuffles constraint rows with ODE's process-wide generator; give each world
     * its own sequence so a world's run does not depend on what else stepped before it. */
    dRandSetSeed(w->rng_seed);
    gy_joint_drive_solve(&gy_ode_driver, w, w->records->joints, h);
    dWorldQuickStep(w->world, h);
    w->rng_seed = dRandGetSeed();
    mark_solved(w, h);
    /* The points keep their own feedback (next_feedback): the front end reads it after this. */
    dJointGroupEmpty(w->contact_group);
}

static gy_result ode_end(gy_driver_world *w, double dt)
{
    (void)dt;
    return w->step_error;
}

/* ---- raw state and geometry for the front end's rules --------------------------------------- */

static bool ode_body_awake(const gy_ode_body *b)
{
    return dBodyIsEnabled(b->body) != 0;
}

static void ode_body_set_com(gy_ode_body *b, gy_vec3 com)
{
    dBodySetPosition(b->body, com.x, com.y, com.z);
}

static void ode_body_velocity(const gy_ode_body *b, gy_vec3 *linear, gy_vec3 *angular)
{
    *linear = v3(dBodyGetLinearVel(b->body));
    *angular = v3(dBodyGetAngularVel(b->body));
}

static void ode_body_set_velocity(gy_ode_body *b, gy_vec3 linear, gy_vec3 angular)
{
    dBodySetLinearVel(b->body, linear.x, linear.y, linear.z);
    dBodySetAngularVel(b->body, angular.x, angular.y, angular.z);
}

/* dWorldQuickStep clears the accumulators after the substep. */
static void ode_body_apply_force(gy_ode_body *b, gy_vec3 force, gy_vec3 torque)
{
    dBodyAddForce(b->body, force.x, force.y, force.z);
    dBodyAddTorque(b->body, torque.x, torque.y, torque.z);
}

static gy_adapter_settle *ode_body_settle(gy_ode_body *b)
{
    return &b->settle;
}

static gy_adapter_push *ode_body_push(gy_ode_body *b)
{
    return &b->push;
}

static gy_mat3 ode_body_inv_inertia(const gy_ode_body *b)
{
    return b->inv_inertia;
}

static gy_quat ode_body_rotation(const gy_ode_body *b)
{
    return gy_ode_quat_from_ode(dBodyGetQuaternion(b->body));
}

static void ode_body_set_rotation(gy_ode_body *b, gy_quat q)
{
    dQuaternion oq;
    gy_ode_quat_to_ode(q, oq);
    dBodySetQuaternion(b->body, oq);
}

static bool ode_collider_touches_shifted(gy_driver_world *w, gy_ode_collider *moved,
                                         gy_ode_collider *other, gy_vec3 shift)
{
    dBodyID body = gy_ode_owner(moved)->body;
    const dReal *p = dBodyGetPosition(body);
    dReal keep[3] = {p[0], p[1], p[2]};
    dBodySetPosition(body, keep[0] + shift.x, keep[1] + shift.y, keep[2] + shift.z);
    dContactGeom cg;
    bool touch = dCollide(moved->geom, gy_ode_collider_geom(w, other), 1, &cg, sizeof cg) > 0;
    dBodySetPosition(body, keep[0], keep[1], keep[2]);
    return touch;
}

typedef struct gather_ctx {
    void (*add)(void *ctx, gy_ode_collider *c);
    void *ctx;
} gather_ctx;

static bool gather_static(void *ctx, gy_ode_collider *c)
{
    gather_ctx *gc = ctx;
    gc->add(gc->ctx, c);
    return true;
}

static void gather_moving(void *ctx, dGeomID o1, dGeomID o2)
{
    gather_ctx *gc = ctx;
    gy_ode_collider *c = gy_ode_geom_collider(o1);
    if (c == NULL)
        c = gy_ode_geom_collider(o2);
    if (c != NULL)
        gc->add(gc->ctx, c);
}

/* Statics from the grid in the path's box, then moving colliders in that box grown by `reach`
 * (the world's scratch box against the dynamic space). */
static void ode_ccd_gather(gy_driver_world *w, gy_vec3 p0, gy_vec3 p1, double r, double reach,
                           void (*add)(void *ctx, gy_ode_collider *c), void *ctx)
{
    gather_ctx gc = {add, ctx};
    gy_vec3 lo = gy_v3_sub(gy_v3_min(p0, p1), gy_v3(r, r, r));
    gy_vec3 hi = gy_v3_add(gy_v3_max(p0, p1), gy_v3(r, r, r));
    dReal aabb[6] = {lo.x, hi.x, lo.y, hi.y, lo.z, hi.z};
    gy_ode_static_visit(w, aabb, gather_static, &gc);
    lo = gy_v3_sub(lo, gy_v3(reach, reach, reach));
    hi = gy_v3_add(hi, gy_v3(reach, reach, reach));
    gy_vec3 mid = gy_v3_scale(gy_v3_add(lo, hi), 0.5);
    dGeomBoxSetLengths(w->ccd_box, hi.x - lo.x, hi.y - lo.y, hi.z - lo.z);
    dGeomSetPosition(w->ccd_box, mid.x, mid.y, mid.z);
    dSpaceCollide2(w->ccd_box, (dGeomID)w->dynamic_space, &gc, gather_moving);
}

static void ode_ccd_begin(gy_driver_world *w, double radius)
{
    dGeomSphereSetRadius(w->ccd_sphere, radius);
}

static void ode_ccd_end(gy_driver_world *w)
{
    (void)w;
}

static bool ode_ccd_sphere_touches(gy_driver_world *w, gy_ode_collider *c, gy_vec3 center)
{
    dGeomSetPosition(w->ccd_sphere, center.x, center.y, center.z);
    dContactGeom cg;
    return dCollide(w->ccd_sphere, gy_ode_collider_geom(w, c), 1, &cg, sizeof cg) > 0;
}

/* The body is moved there and put back exactly (same position values), so nothing else sees it. */
static bool ode_ccd_body_touches(gy_driver_world *w, gy_ode_body *b, gy_ode_collider *other,
                                 gy_vec3 com)
{
    const dReal *p = dBodyGetPosition(b->body);
    dReal keep[3] = {p[0], p[1], p[2]};
    dBodySetPosition(b->body, com.x, com.y, com.z);
    dGeomID og = gy_ode_collider_geom(w, other);
    bool touch = false;
    for (uint32_t k = 0; k < b->collider_count && !touch; k++) {
        const gy_ode_collider *c = &gy_ode_body_records(b)[k];
        dContactGeom cg;
        touch = !c->base.is_sensor && dCollide(c->geom, og, 1, &cg, sizeof cg) > 0;
    }
    dBodySetPosition(b->body, keep[0], keep[1], keep[2]);
    return touch;
}

const gy_driver_step gy_ode_step = {
    .begin = ode_begin,
    .solve = ode_solve,
    .end = ode_end,
    .collide_sensors = ode_collide_sensors,
    .body_awake = ode_body_awake,
    .body_com = gy_ode_body_com,
    .body_set_com = ode_body_set_com,
    .body_velocity = ode_body_velocity,
    .body_set_velocity = ode_body_set_velocity,
    .body_apply_force = ode_body_apply_force,
    .body_sleep = NULL, /* ODE's auto-disable is set to the same rule (ode_body.c) */
    .body_wants_sleep = NULL,
    .body_settle = ode_body_settle,
    .body_push = ode_body_push,
    .body_inv_inertia = ode_body_inv_inertia,
    .body_rotation = ode_body_rotation,
    .body_set_rotation = ode_body_set_rotation,
    .collider_touches_shifted = ode_collider_touches_shifted,
    .collides_active_only = true,
    .ccd_gather = ode_ccd_gather,
    .ccd_begin = ode_ccd_begin,
    .ccd_sphere_touches = ode_ccd_sphere_touches,
    .ccd_body_touches = ode_ccd_body_touches,
    .ccd_end = ode_ccd_end,
};

void gy_ode_step_fini(gy_driver_world *w)
{
    const gy_allocator *a = w->allocator;
    for (uint32_t i = 0; i < w->feedback_block_count; i++)
        gy_free(a, w->feedback_blocks[i], GY_ODE_FEEDBACK_BLOCK * sizeof(dJointFeedback));
    gy_free(a, w->feedback_blocks, (size_t)w->feedback_block_capacity * sizeof *w->feedback_blocks);
}
