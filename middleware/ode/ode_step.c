/* ODE adapter: the step. Per substep: broadphase (moving colliders among themselves through ODE's
 * sweep-and-prune space, moving against static through the static grid; statics never against
 * statics), the near callback (filtering, sensors, one-way platforms, conveyors, contact joints),
 * ODE's QuickStep, then what ODE lacks: impulse reports from joint feedback, exact ballistic
 * gravity, axis-lock projection, continuous collision and joint breaking.
 *
 * Pairs whose two bodies are both asleep (or static, or unmoving kinematic) are not collided
 * again: their last report is carried over, so a sleeping pile costs no narrowphase and its
 * touching pairs keep being reported. */
#include <math.h>
#include <string.h>

#include "../src/ccd.h"
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
/* push_apart closes this fraction of the overlap beyond GY_ADAPTER_SOLVER_DEPTH per substep (as
 * Bullet's split impulse does by default). */
#define PUSH_ERP 0.8
/* A resting pair stays reported while its gap is under this (m): hysteresis, since a new pair
 * must touch. Settling lifts a resting box by far less (ERP pushes out a little more than
 * gravity pressed in); a body that leaves opens a gap of 1 mm in one step at 6 cm/s. */
#define CONTACT_KEEP_MARGIN 1e-3
#define FEEDBACK_BLOCK      256u

static gy_vec3 v3(const dReal *v)
{
    return gy_v3(v[0], v[1], v[2]);
}

/* ---- storage (grown to peak, reused) -------------------------------------------------------- */

/* The index of pair (a, b) in this step's report, appended when new; UINT32_MAX when out of
 * memory (recorded in step_error). */
static uint32_t pair_get(gy_driver_world *w, gy_ode_collider *a, gy_ode_collider *b)
{
    bool is_new;
    return gy_adapter_contacts_pair(w->contacts, &a->base, &b->base, &is_new, &w->step_error);
}

static dJointFeedback *next_feedback(gy_driver_world *w, uint32_t point)
{
    uint32_t block = point / FEEDBACK_BLOCK;
    if (block >= w->feedback_block_count) {
        gy_result r =
            gy_array_reserve(w->allocator, (void **)&w->feedback_blocks,
                             &w->feedback_block_capacity, block + 1u, sizeof *w->feedback_blocks);
        if (r != GY_OK)
            return NULL;
        dJointFeedback *fb = gy_alloc(w->allocator, FEEDBACK_BLOCK * sizeof *fb);
        if (fb == NULL)
            return NULL;
        w->feedback_blocks[w->feedback_block_count++] = fb;
    }
    return &w->feedback_blocks[block][point % FEEDBACK_BLOCK];
}

/* ---- activity ------------------------------------------------------------------------------- */

/* Whether a body's pairs must be collided this substep. */
static bool body_moving(const gy_ode_body *b)
{
    switch (b->base.type) {
    case GY_MOTION_DYNAMIC:
        return dBodyIsEnabled(b->body) != 0;
    case GY_MOTION_KINEMATIC: {
        if (b->pose_written)
            return true;
        const dReal *v = dBodyGetLinearVel(b->body);
        const dReal *a = dBodyGetAngularVel(b->body);
        return v[0] != 0.0 || v[1] != 0.0 || v[2] != 0.0 || a[0] != 0.0 || a[1] != 0.0 ||
               a[2] != 0.0;
    }
    default:
        return false;
    }
}

static bool bodies_jointed(gy_driver_world *w, const gy_ode_body *a, const gy_ode_body *b)
{
    if (a->base.joint_count == 0 || b->base.joint_count == 0)
        return false;
    if (a->body != NULL && b->body != NULL)
        return dAreConnectedExcluding(a->body, b->body, dJointTypeContact) != 0;
    for (uint32_t i = 0; i < w->records->joints->count; i++) {
        uint64_t h;
        const gy_ode_joint *j = gy_handle_pool_at(w->records->joints, i, &h);
        if (j != NULL && ((j->a == a && j->b == b) || (j->a == b && j->b == a)))
            return true;
    }
    return false;
}

/* ---- one-way platforms ---------------------------------------------------------------------- */

/* The one-way rule (docs/middleware.md): a pair's contacts count while the other body arrived on
 * the platform's one-way side: its first contact must have a normal (platform to body) within
 * 60° of the one-way normal, the body's centre of mass on that side, and the body not rising
 * through the platform. Otherwise the pair is "passing" and its contacts are dropped until the two
 * separate, so a body jumping up through the platform is not caught half-way. */
static bool one_way_side_accepts(gy_driver_world *w, gy_ode_collider *platform,
                                 gy_ode_collider *other, gy_vec3 normal_po, gy_vec3 point,
                                 double penetration)
{
    bool accepted;
    if (gy_adapter_contact_one_way_known(w->contacts, &platform->base, &other->base, &accepted))
        return accepted;
    gy_adapter_one_way_contact oc;
    oc.platform = &platform->base;
    oc.other = &other->base;
    oc.normal = normal_po;
    oc.one_way = gy_quat_rotate(gy_ode_collider_rotation(platform), platform->base.one_way_normal);
    oc.velocity = gy_v3_sub(gy_ode_body_velocity_at(other->body, point),
                            gy_ode_body_velocity_at(platform->body, point));
    oc.other_com = gy_ode_body_com(other->body);
    oc.point = point;
    oc.penetration = penetration;
    /* Accepted pairs are judged again at each contact; refused ones stay refused. */
    return gy_adapter_contact_one_way(w->contacts, &oc, false, &w->step_error);
}

/* The share of the world's gravity a body falls with (0 for static and kinematic bodies). */
static double body_gravity_factor(const gy_ode_body *b)
{
    return b->base.type == GY_MOTION_DYNAMIC ? b->base.gravity_factor : 0.0;
}

/* Whether a body cannot move along `n` at all: static or kinematic, or dynamic with every world
 * axis `n` has a component on locked. */
static bool normal_locked(const gy_ode_body *b, gy_vec3 n)
{
    if (b->base.type != GY_MOTION_DYNAMIC)
        return true;
    const double c[3] = {n.x, n.y, n.z};
    for (int k = 0; k < 3; k++)
        if (fabs(c[k]) > 1e-9 && !b->base.lock_linear[k])
            return false;
    return true;
}

/* ---- the near callback ---------------------------------------------------------------------- */

/* Contacts against a mesh triangle's inside or its internal edges take the face normal
 * (gy_adapter_mesh_edges_fix_normal), so a body slides across the edges between flat triangles as
 * over one plane. ODE names the triangle in the contact's side for the trimesh geom. */
static void fix_mesh_normals(const gy_ode_collider *c1, const gy_ode_collider *c2, dContact *cs,
                             int n)
{
    for (int m = 0; m < 2; m++) {
        const gy_ode_collider *mesh = m == 0 ? c1 : c2;
        if (mesh->base.shape.type != GY_SHAPE_MESH || mesh->resource == NULL)
            continue;
        dQuaternion oq;
        dGeomGetQuaternion(mesh->geom, oq);
        gy_quat inv = gy_quat_conj(gy_ode_quat_from_ode(oq));
        gy_vec3 origin = v3(dGeomGetPosition(mesh->geom));
        /* ODE's normal points towards o1: out of the mesh when it is o1's partner. */
        double out = m == 0 ? -1.0 : 1.0;
        for (int i = 0; i < n; i++) {
            dContactGeom *g = &cs[i].geom;
            gy_vec3 nrm = gy_quat_rotate(inv, gy_v3_scale(v3(g->normal), out));
            gy_vec3 at = gy_quat_rotate(inv, gy_v3_sub(v3(g->pos), origin));
            if (!gy_adapter_mesh_edges_fix_normal(&mesh->resource->base.edges,
                                                  m == 0 ? g->side1 : g->side2, at, &nrm))
                continue;
            gy_vec3 world = gy_v3_scale(gy_quat_rotate(gy_quat_conj(inv), nrm), out);
            g->normal[0] = world.x;
            g->normal[1] = world.y;
            g->normal[2] = world.z;
        }
    }
}

static void process_pair(gy_driver_world *w, gy_ode_collider *c1, gy_ode_collider *c2)
{
    gy_ode_body *b1 = c1->body, *b2 = c2->body;
    if (b1 == b2)
        return;
    gy_adapter_contact_kind kind = gy_adapter_contact_gate(&c1->base, &c2->base, w->sensor_pass);
    if (kind == GY_ADAPTER_CONTACT_SKIP)
        return;
    if (!b1->active && !b2->active)
        return; /* carried over from the last report */
    bool dyn1 = b1->base.type == GY_MOTION_DYNAMIC, dyn2 = b2->base.type == GY_MOTION_DYNAMIC;
    if (bodies_jointed(w, b1, b2))
        return;

    dContact cs[CONTACTS_PER_MESH_PAIR];
    bool mesh = c1->base.shape.type == GY_SHAPE_MESH || c2->base.shape.type == GY_SHAPE_MESH;
    int n = dCollide(c1->geom, c2->geom, mesh ? CONTACTS_PER_MESH_PAIR : CONTACTS_PER_PAIR,
                     &cs[0].geom, sizeof(dContact));
    if (n <= 0)
        return;
    fix_mesh_normals(c1, c2, cs, n);
    int deepest = 0;
    for (int i = 1; i < n; i++)
        if (cs[i].geom.depth > cs[deepest].geom.depth)
            deepest = i;
    /* ODE's normal points towards o1 (moving o1 along it separates the two). */
    gy_vec3 n_ode = v3(cs[deepest].geom.normal);
    gy_vec3 point = v3(cs[deepest].geom.pos);
    /* A pair neither of whose bodies can move along the normal (axis locks) is reported but
     * not solved: its rows could only fight the locks, loading the contact's friction (a
     * translation-locked box spinning on a floor it overlapped stopped in one step). */
    bool respond =
        kind == GY_ADAPTER_CONTACT_SOLVE && !(normal_locked(b1, n_ode) && normal_locked(b2, n_ode));
    double depth = cs[deepest].geom.depth;
    if (respond && c1->base.one_way &&
        !one_way_side_accepts(w, c1, c2, gy_v3_neg(n_ode), point, depth))
        return;
    if (respond && c2->base.one_way && !one_way_side_accepts(w, c2, c1, n_ode, point, depth))
        return;

    bool swapped = c2->base.id.bits < c1->base.id.bits;
    gy_ode_collider *ca = swapped ? c2 : c1, *cb = swapped ? c1 : c2;
    uint32_t pi = pair_get(w, ca, cb);
    if (pi == UINT32_MAX)
        return;
    gy_contact *ct = &w->contacts->current.contacts[pi];
    gy_ode_pair *pr = &gy_ode_pairs(&w->contacts->current)[pi];
    if (pr->cached) {
        /* Woken during this step: the fresh solve replaces the carried-over report. */
        pr->cached = false;
        ct->normal_impulse = 0.0;
        pr->tangent = gy_v3(0.0, 0.0, 0.0);
        pr->covered = 0.0;
    }
    pr->covered += w->substep_dt;
    gy_adapter_contact_name(ct, &ca->base, &cb->base);
    ct->point = point;
    ct->normal = swapped ? n_ode : gy_v3_neg(n_ode);
    ct->penetration = fmax(0.0, cs[deepest].geom.depth);
    pr->sensor_seen = true;
    if (!respond)
        return;
    pr->responds = true;

    /* Joint body order: the first body must exist (statics have none). */
    gy_ode_collider *k1 = c1, *k2 = c2;
    bool flip = b1->body == NULL;
    if (flip) {
        k1 = c2;
        k2 = c1;
    }
    dBodyID j1 = k1->body->body, j2 = k2->body->body;
    double mu, bounce;
    gy_adapter_contact_material(&c1->base, &c2->base, &mu, &bounce);
    /* Conveyors: the contact should reach v1 - v2 = s2 - s1 along the surface, where s is each
     * collider's surface velocity in the world. */
    gy_vec3 surf = gy_v3(0.0, 0.0, 0.0);
    bool moving_surface = false;
    if (gy_v3_len_sq(k1->base.surface_velocity) > 0.0 ||
        gy_v3_len_sq(k2->base.surface_velocity) > 0.0) {
        gy_vec3 s1 = gy_quat_rotate(gy_ode_collider_rotation(k1), k1->base.surface_velocity);
        gy_vec3 s2 = gy_quat_rotate(gy_ode_collider_rotation(k2), k2->base.surface_velocity);
        surf = gy_v3_sub(s2, s1);
        moving_surface = true;
    }
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
        gy_vec3 rel =
            gy_v3_sub(gy_ode_body_velocity_at(k1->body, at), gy_ode_body_velocity_at(k2->body, at));
        double approach = gy_v3_dot(rel, nrm);
        double leave = 0.0;
        if (bounce > 0.0 && approach < -GY_ADAPTER_BOUNCE_MIN_VELOCITY) {
            /* ODE aims for bounce × approach: the coefficient is set so that this is the speed
             * that keeps the bounce's energy from where the contact was found (at depth), and
             * that overlap is not pushed out (ERP or push_apart would add its height). */
            double pull = -gy_v3_dot(w->def.gravity, nrm) *
                          (body_gravity_factor(k1->body) - body_gravity_factor(k2->body));
            leave = gy_adapter_bounce_speed(-approach, -c->geom.depth, pull, bounce, w->substep_dt);
            c->surface.mode |= dContactBounce;
            c->surface.bounce = leave / -approach;
            c->surface.bounce_vel = GY_ADAPTER_BOUNCE_MIN_VELOCITY;
            c->surface.soft_erp = 0.0;
        }
        /* ODE aims a contact shallower than its surface layer at no motion, so a resting box
         * keeps whatever tilt the unconverged solve leaves it within the layer: a crate on a
         * conveyor belt wandered to 1e-3 rad of tilt, a corner near lifting, and turned up to
         * 4e-4 rad in 4 s. Pulling each such point down to the layer (at ERP's rate) levels it
         * to 2e-5 rad: the row allows that approach, it never pulls. */
        if (leave == 0.0 && c->geom.depth < GY_ADAPTER_CONTACT_LAYER) {
            c->surface.mode |= dContactMotionN;
            c->surface.motionN =
                CONTACT_ERP * (c->geom.depth - GY_ADAPTER_CONTACT_LAYER) / w->substep_dt;
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
        if (moving_surface) {
            gy_vec3 t = gy_v3_mad(surf, nrm, -gy_v3_dot(surf, nrm));
            double tl = gy_v3_len(t);
            if (tl > 1e-9) {
                c->surface.mode |= dContactFDir1 | dContactMotion1;
                c->fdir1[0] = t.x / tl;
                c->fdir1[1] = t.y / tl;
                c->fdir1[2] = t.z / tl;
                c->surface.motion1 = tl;
            }
        }
        uint32_t pt = w->point_count;
        dJointFeedback *fb = NULL;
        gy_result r = gy_array_reserve(w->allocator, (void **)&w->points, &w->point_capacity,
                                       pt + 1u, sizeof *w->points);
        if (r == GY_OK) {
            fb = next_feedback(w, pt);
            if (fb == NULL)
                r = GY_ERR_OUT_OF_MEMORY;
        }
        if (r != GY_OK) {
            gy_adapter_note_error(&w->step_error, r);
            return;
        }
        double depth = c->geom.depth;
        c->geom.depth = fmin(depth, GY_ADAPTER_SOLVER_DEPTH); /* the rest: push_apart */
        dJointID jc = dJointCreateContact(w->world, w->contact_group, c);
        dJointAttach(jc, j1, j2);
        dJointSetFeedback(jc, fb);
        gy_ode_point *p = &w->points[w->point_count++];
        p->pair = pi;
        p->feedback = fb;
        p->normal[0] = c->geom.normal[0];
        p->normal[1] = c->geom.normal[1];
        p->normal[2] = c->geom.normal[2];
        p->body1_is_a = k1 == ca;
        p->body1 = k1->body;
        p->body2 = k2->body;
        p->position = at;
        p->depth = depth;
        p->bounce = leave;
    }
    b1->in_contact = true;
    b2->in_contact = true;
    /* ODE wakes a sleeper through the island of an enabled dynamic body; a kinematic pusher does
     * not form islands, so wake the sleeper here. */
    if (dyn1 && !b1->active)
        dBodyEnable(b1->body);
    if (dyn2 && !b2->active)
        dBodyEnable(b2->body);
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
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (!b->active)
            continue;
        for (uint32_t k = 0; k < b->collider_count; k++) {
            static_ctx sc = {w, b->colliders[k]};
            dReal aabb[6];
            dGeomGetAABB(sc.c->geom, aabb);
            gy_ode_static_visit(w, aabb, static_visit, &sc);
        }
    }
}

/* ---- after the solve ------------------------------------------------------------------------ */

/* A body's response at arm `r` to a unit push along `n`: the linear and angular pseudo-velocity
 * it takes (*lin, *spin; locked axes take none), and its share of the inverse effective mass. */
static double push_response(const gy_ode_body *b, gy_vec3 r, gy_vec3 n, gy_vec3 *lin, gy_vec3 *spin)
{
    *lin = gy_v3(0.0, 0.0, 0.0);
    *spin = gy_v3(0.0, 0.0, 0.0);
    if (b == NULL || b->base.type != GY_MOTION_DYNAMIC || !dBodyIsEnabled(b->body) ||
        !(b->mass > 0.0))
        return 0.0;
    double l[3] = {n.x, n.y, n.z};
    gy_vec3 c = gy_v3_cross(r, n);
    double cm[3] = {c.x, c.y, c.z};
    for (int k = 0; k < 3; k++) {
        if (b->base.lock_linear[k])
            l[k] = 0.0;
        if (b->base.lock_angular[k])
            cm[k] = 0.0;
    }
    *lin = gy_v3_scale(gy_v3(l[0], l[1], l[2]), 1.0 / b->mass);
    gy_mat3 rot = gy_quat_to_mat3(gy_ode_quat_from_ode(dBodyGetQuaternion(b->body)));
    gy_vec3 body_c = gy_mat3_apply(gy_mat3_transpose(rot), gy_v3(cm[0], cm[1], cm[2]));
    gy_vec3 s = gy_mat3_apply(rot, gy_mat3_apply(b->inv_inertia, body_c));
    double sm[3] = {s.x, s.y, s.z};
    for (int k = 0; k < 3; k++)
        if (b->base.lock_angular[k])
            sm[k] = 0.0;
    *spin = gy_v3(sm[0], sm[1], sm[2]);
    return gy_v3_dot(n, *lin) + gy_v3_dot(c, *spin);
}

static gy_vec3 point_arm(const gy_ode_body *b, gy_vec3 at)
{
    return gy_v3_sub(at, v3(dBodyGetPosition(b->body)));
}

/* The separation speed of a point's bodies along `n` (towards body1): real velocities, or the
 * position pass's pseudo-velocities. */
static double point_speed(const gy_ode_point *p, gy_vec3 n, bool push)
{
    gy_vec3 v = gy_v3(0.0, 0.0, 0.0);
    for (int k = 0; k < 2; k++) {
        const gy_ode_body *b = k == 0 ? p->body1 : p->body2;
        if (b == NULL || b->body == NULL)
            continue;
        gy_vec3 r = point_arm(b, p->position);
        gy_vec3 bv = push ? gy_v3_add(b->push_linear, gy_v3_cross(b->push_angular, r))
                          : gy_v3_add(v3(dBodyGetLinearVel(b->body)),
                                      gy_v3_cross(v3(dBodyGetAngularVel(b->body)), r));
        v = gy_v3_mad(v, bv, k == 0 ? 1.0 : -1.0);
    }
    return gy_v3_dot(v, n);
}

/* How fast the centres of mass of a point's bodies separate along `n`. */
static double centre_speed(const gy_ode_point *p, gy_vec3 n)
{
    gy_vec3 v = gy_v3(0.0, 0.0, 0.0);
    if (p->body1 != NULL && p->body1->body != NULL)
        v = v3(dBodyGetLinearVel(p->body1->body));
    if (p->body2 != NULL && p->body2->body != NULL)
        v = gy_v3_sub(v, v3(dBodyGetLinearVel(p->body2->body)));
    return gy_v3_dot(v, n);
}

static void push_body(gy_ode_body *b, gy_vec3 lin, gy_vec3 spin, double impulse)
{
    if (b == NULL)
        return;
    b->push_linear = gy_v3_mad(b->push_linear, lin, impulse);
    b->push_angular = gy_v3_mad(b->push_angular, spin, impulse);
}

/* Each point's response to a unit impulse along its normal, and the overlap left once the
 * solved velocities have moved its bodies. */
static void prepare_points(gy_driver_world *w, double h)
{
    double layer = dWorldGetContactSurfaceLayer(w->world);
    double cap = dWorldGetContactMaxCorrectingVel(w->world);
    for (uint32_t i = 0; i < w->point_count; i++) {
        gy_ode_point *p = &w->points[i];
        gy_vec3 n = v3(p->normal);
        double k = 0.0;
        p->lin1 = p->spin1 = p->lin2 = p->spin2 = gy_v3(0.0, 0.0, 0.0);
        if (p->body1 != NULL && p->body1->body != NULL)
            k += push_response(p->body1, point_arm(p->body1, p->position), n, &p->lin1, &p->spin1);
        if (p->body2 != NULL && p->body2->body != NULL)
            k += push_response(p->body2, point_arm(p->body2, p->position), gy_v3_neg(n), &p->lin2,
                               &p->spin2);
        p->inv_k = k > 0.0 ? 1.0 / k : 0.0;
        p->push = 0.0;
        p->relax = 0.0;
        /* The correction speed ODE's contact joint asked for: ERP × (depth − surface layer) / h,
         * if its row pushed at all. */
        double asked =
            fmin(CONTACT_ERP * fmax(0.0, fmin(p->depth, GY_ADAPTER_SOLVER_DEPTH) - layer) / h, cap);
        if (!(gy_v3_dot(v3(p->feedback->f1), n) > 0.0))
            asked = 0.0;
        p->depth -= point_speed(p, n, false) * h;
        /* What is carried is what the body still separates at: speed since spent is gone, and a
         * correction that did not move the body apart is none to give back. A body resting in
         * the layer sits a little deeper or shallower from step to step, its rows asking for a
         * little; lifted off by something else (gravity turned upwards), its points each gave
         * that back, and it left 2.8e-4 m/s slow. */
        double carried = fmax(0.0, centre_speed(p, n));
        for (int s = 0; s < 2; s++) {
            gy_ode_body *b = s == 0 ? p->body1 : p->body2;
            if (b != NULL) {
                b->push_linear = gy_v3(0.0, 0.0, 0.0);
                b->push_angular = gy_v3(0.0, 0.0, 0.0);
                b->correction_speed = fmin(fmax(asked, b->correction_speed), carried);
            }
        }
    }
}

/* A deep overlap is undone in positions only (split impulse): ODE's contact rows see at most
 * GY_ADAPTER_SOLVER_DEPTH of it, and what the solve leaves beyond that is closed by PUSH_ERP of
 * itself per substep, at most ODE's correction speed, through pseudo-velocities solved like the
 * contact rows (sequential impulses, each point's total a push) and integrated into the poses
 * alone. Through the velocities it stayed as speed: a body created a metre deep was thrown out at
 * the correction cap, a ball that landed 7 cm deep left at 1.7 m/s. */
static void push_apart(gy_driver_world *w, double h)
{
    double cap = dWorldGetContactMaxCorrectingVel(w->world);
    bool any = false;
    for (uint32_t it = 0; it < w->def.solver_iterations; it++) {
        for (uint32_t i = 0; i < w->point_count; i++) {
            gy_ode_point *p = &w->points[i];
            if (p->inv_k == 0.0 || p->bounce > 0.0 ||
                (it == 0 && !(p->depth > GY_ADAPTER_SOLVER_DEPTH)))
                continue;
            double target = fmin(PUSH_ERP * fmax(0.0, p->depth - GY_ADAPTER_SOLVER_DEPTH) / h, cap);
            double d = (target - point_speed(p, v3(p->normal), true)) * p->inv_k;
            d = fmax(d, -p->push);
            p->push += d;
            push_body(p->body1, p->lin1, p->spin1, d);
            push_body(p->body2, p->lin2, p->spin2, d);
            any = true;
        }
    }
    if (!any)
        return;
    for (uint32_t i = 0; i < w->point_count; i++) {
        gy_ode_point *p = &w->points[i];
        for (int k = 0; k < 2; k++) {
            gy_ode_body *b = k == 0 ? p->body1 : p->body2;
            if (b == NULL || b->body == NULL ||
                (gy_v3_len_sq(b->push_linear) == 0.0 && gy_v3_len_sq(b->push_angular) == 0.0))
                continue;
            const dReal *x = dBodyGetPosition(b->body);
            dBodySetPosition(b->body, x[0] + b->push_linear.x * h, x[1] + b->push_linear.y * h,
                             x[2] + b->push_linear.z * h);
            gy_quat q = gy_ode_quat_from_ode(dBodyGetQuaternion(b->body));
            gy_vec3 a = gy_v3_scale(b->push_angular, 0.5 * h);
            gy_quat dq = gy_quat_mul((gy_quat){a.x, a.y, a.z, 0.0}, q);
            q = gy_quat_normalize((gy_quat){q.x + dq.x, q.y + dq.y, q.z + dq.z, q.w + dq.w});
            dQuaternion oq;
            gy_ode_quat_to_ode(q, oq);
            dBodySetQuaternion(b->body, oq);
            b->push_linear = gy_v3(0.0, 0.0, 0.0); /* integrated once */
            b->push_angular = gy_v3(0.0, 0.0, 0.0);
        }
    }
}

/* The shallow overlap ODE does correct goes through the velocities (ERP), and that speed stayed
 * once the overlap was gone: a body pushed out of the last centimetre floated off at up to
 * 0.24 m/s. Each body remembers the largest correction speed its contacts asked for, less what
 * its centre no longer separates at, while it keeps touching (gy_ode_body.correction_speed).
 * When this substep's motion closes every overlap a body has, its points give back that much of
 * the separation of the centres of mass. A body still overlapping somewhere keeps its push (that
 * is what holds resting bodies and stacks up at 10 iterations), and bouncing points keep their
 * rebound. */
static void settle_contacts(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->point_count; i++)
        for (int s = 0; s < 2; s++) {
            gy_ode_body *b = s == 0 ? w->points[i].body1 : w->points[i].body2;
            if (b != NULL)
                b->keeps_touching = false;
        }
    for (uint32_t i = 0; i < w->point_count; i++)
        for (int s = 0; s < 2; s++) {
            gy_ode_body *b = s == 0 ? w->points[i].body1 : w->points[i].body2;
            if (b != NULL && w->points[i].depth > 0.0)
                b->keeps_touching = true;
        }
    for (uint32_t it = 0; it < w->def.solver_iterations; it++) {
        for (uint32_t i = 0; i < w->point_count; i++) {
            gy_ode_point *p = &w->points[i];
            /* Only a body leaving all its contacts gives its correction back. */
            if (p->inv_k == 0.0 || p->bounce > 0.0 || p->depth > 0.0 ||
                (p->body1 != NULL && p->body1->base.type == GY_MOTION_DYNAMIC &&
                 p->body1->keeps_touching) ||
                (p->body2 != NULL && p->body2->base.type == GY_MOTION_DYNAMIC &&
                 p->body2->keeps_touching))
                continue;
            double cap = 0.0;
            if (p->body1 != NULL)
                cap = fmax(cap, p->body1->correction_speed);
            if (p->body2 != NULL)
                cap = fmax(cap, p->body2->correction_speed);
            gy_vec3 n = v3(p->normal);
            /* Through the centres of mass only: the point ODE reports on a mesh can sit off the
             * line of centres, and a turn taken there slowed a rolling ball. The total taken
             * back stays within [−cap, 0] in speed. */
            double k = gy_v3_dot(n, gy_v3_sub(p->lin1, p->lin2));
            if (!(k > 0.0))
                continue;
            double d = -centre_speed(p, n) / k;
            d = fmin(fmax(d, -cap / k - p->relax), -p->relax);
            p->relax += d;
            for (int s = 0; s < 2; s++) {
                gy_ode_body *b = s == 0 ? p->body1 : p->body2;
                if (b == NULL || b->body == NULL)
                    continue;
                gy_vec3 lin = s == 0 ? p->lin1 : p->lin2;
                const dReal *v = dBodyGetLinearVel(b->body);
                dBodySetLinearVel(b->body, v[0] + lin.x * d, v[1] + lin.y * d, v[2] + lin.z * d);
            }
        }
    }
}

static void gather_impulses(gy_driver_world *w, double h)
{
    for (uint32_t i = 0; i < w->point_count; i++) {
        const gy_ode_point *p = &w->points[i];
        gy_vec3 f = v3(p->feedback->f1); /* force on the joint's first body */
        gy_vec3 n = v3(p->normal);
        double fn = gy_v3_dot(f, n);
        gy_vec3 ft = gy_v3_mad(f, n, -fn);
        w->contacts->current.contacts[p->pair].normal_impulse += fn * h + p->relax;
        /* Accumulate the tangent force on collider b's body, whichever body was first. */
        gy_ode_pair *pr = &gy_ode_pairs(&w->contacts->current)[p->pair];
        pr->tangent = gy_v3_mad(pr->tangent, ft, p->body1_is_a ? -h : h);
    }
    w->point_count = 0;
}

/* QuickStep integrates x += (v + g h) h: the shared ballistic correction applies. */
static void ballistic_correction(gy_driver_world *w, double h)
{
    gy_vec3 g = w->def.gravity;
    if (gy_v3_len_sq(g) == 0.0)
        return;
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (!gy_adapter_ballistic_applies(b->base.type, b->body != NULL && dBodyIsEnabled(b->body),
                                          b->in_contact, b->base.joint_count,
                                          b->base.gravity_factor))
            continue;
        gy_vec3 p = gy_v3_add(v3(dBodyGetPosition(b->body)),
                              gy_adapter_ballistic_shift(g, b->base.gravity_factor, h));
        dBodySetPosition(b->body, p.x, p.y, p.z);
    }
}

/* Motors hold locked axes to zero velocity; the shared projection removes what the iterative
 * solver leaves. */
static void project_locks(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (b->lock_lmotor == NULL && b->lock_amotor == NULL)
            continue;
        if (!dBodyIsEnabled(b->body))
            continue;
        gy_vec3 p = v3(dBodyGetPosition(b->body)), v = v3(dBodyGetLinearVel(b->body)),
                a = v3(dBodyGetAngularVel(b->body));
        gy_adapter_project_locks(b->base.lock_linear, b->base.lock_angular, b->lock_position, &p,
                                 &v, &a);
        dBodySetPosition(b->body, p.x, p.y, p.z);
        dBodySetLinearVel(b->body, v.x, v.y, v.z);
        dBodySetAngularVel(b->body, a.x, a.y, a.z);
    }
}

/* ---- continuous collision ------------------------------------------------------------------- */

typedef struct ccd_ctx {
    gy_driver_world *w;
    gy_ode_body *body;
    gy_vec3 motion;
    gy_vec3 start;
} ccd_ctx;

static bool ccd_accepts(const ccd_ctx *cc, const gy_ode_collider *c)
{
    if (!gy_adapter_contact_ccd_candidate(cc->body->base.solid, &c->base))
        return false;
    return !c->base.one_way ||
           gy_adapter_ccd_one_way_accepts(
               cc->motion, gy_quat_rotate(gy_ode_collider_rotation(c), c->base.one_way_normal));
}

static void ccd_add(ccd_ctx *cc, gy_ode_collider *c)
{
    gy_driver_world *w = cc->w;
    if (!ccd_accepts(cc, c))
        return;
    if (gy_array_reserve(w->allocator, (void **)&w->scratch_colliders, &w->scratch_capacity,
                         w->scratch_count + 1u, sizeof *w->scratch_colliders) != GY_OK) {
        gy_adapter_note_error(&w->step_error, GY_ERR_OUT_OF_MEMORY);
        return;
    }
    w->scratch_colliders[w->scratch_count++] = c;
}

static bool ccd_static_visit(void *ctx, gy_ode_collider *c)
{
    ccd_add(ctx, c);
    return true;
}

static void ccd_dynamic_near(void *ctx, dGeomID o1, dGeomID o2)
{
    gy_ode_collider *c = gy_ode_geom_collider(o1);
    if (c == NULL)
        c = gy_ode_geom_collider(o2);
    if (c != NULL)
        ccd_add(ctx, c);
}

static bool ccd_sphere_touches(void *ctx, uint32_t i, gy_vec3 center, double radius)
{
    ccd_ctx *cc = ctx;
    (void)radius; /* set on the scratch sphere before the sweep */
    dGeomSetPosition(cc->w->ccd_sphere, center.x, center.y, center.z);
    dContactGeom cg;
    return dCollide(cc->w->ccd_sphere, cc->w->scratch_colliders[i]->geom, 1, &cg, sizeof cg) > 0;
}

/* The body is moved there and put back exactly (same position values), so nothing else sees it. */
static bool ccd_body_touches(void *ctx, uint32_t i, gy_vec3 com)
{
    ccd_ctx *cc = ctx;
    dBodyID body = cc->body->body;
    const dReal *p = dBodyGetPosition(body);
    dReal keep[3] = {p[0], p[1], p[2]};
    dBodySetPosition(body, com.x, com.y, com.z);
    bool touch = false;
    for (uint32_t k = 0; k < cc->body->collider_count && !touch; k++) {
        const gy_ode_collider *c = cc->body->colliders[k];
        dContactGeom cg;
        touch = !c->base.is_sensor &&
                dCollide(c->geom, cc->w->scratch_colliders[i]->geom, 1, &cg, sizeof cg) > 0;
    }
    dBodySetPosition(body, keep[0], keep[1], keep[2]);
    return touch;
}

static gy_vec3 ccd_displacement(void *ctx, uint32_t i)
{
    const gy_ode_body *o = ((ccd_ctx *)ctx)->w->scratch_colliders[i]->body;
    if (o->body == NULL)
        return gy_v3(0.0, 0.0, 0.0);
    return gy_v3_sub(gy_ode_body_com(o), o->ccd_start);
}

/* Sweeps the body from its substep start to its end against what it may have passed, moving
 * bodies included (gy_adapter_ccd_sweep); on a hit the two are put back where they first touch
 * (a dynamic one it hit too), their velocities left for the next substep's contact to resolve.
 * `reach` is the longest distance any body moved in this substep: a moving body that far from the
 * path may have crossed it. */
static void ccd_body(gy_driver_world *w, gy_ode_body *b, double reach)
{
    gy_vec3 p0 = b->ccd_start, p1 = gy_ode_body_com(b);
    gy_vec3 d = gy_v3_sub(p1, p0);
    double r = gy_adapter_contact_ccd_radius(&b->base, b->ccd_radius, gy_v3_len(d), reach);
    if (!(r > 0.0))
        return;

    ccd_ctx cc = {w, b, d, p0};
    w->scratch_count = 0;
    gy_vec3 lo = gy_v3_sub(gy_v3_min(p0, p1), gy_v3(r, r, r));
    gy_vec3 hi = gy_v3_add(gy_v3_max(p0, p1), gy_v3(r, r, r));
    dReal aabb[6] = {lo.x, hi.x, lo.y, hi.y, lo.z, hi.z};
    gy_ode_static_visit(w, aabb, ccd_static_visit, &cc);
    lo = gy_v3_sub(lo, gy_v3(reach, reach, reach));
    hi = gy_v3_add(hi, gy_v3(reach, reach, reach));
    gy_vec3 mid = gy_v3_scale(gy_v3_add(lo, hi), 0.5);
    dGeomBoxSetLengths(w->ccd_box, hi.x - lo.x, hi.y - lo.y, hi.z - lo.z);
    dGeomSetPosition(w->ccd_box, mid.x, mid.y, mid.z);
    dSpaceCollide2(w->ccd_box, (dGeomID)w->dynamic_space, &cc, ccd_dynamic_near);
    if (w->scratch_count == 0)
        return;

    dGeomSphereSetRadius(w->ccd_sphere, r);
    gy_adapter_ccd_probe probe = {&cc, ccd_sphere_touches, ccd_body_touches, ccd_displacement};
    gy_adapter_ccd_hit hit;
    if (!gy_adapter_ccd_sweep(&probe, w->scratch_count, p0, p1, r, b->ccd_radius, &hit))
        return;
    gy_vec3 at = hit.com;
    gy_ode_body *o = w->scratch_colliders[hit.candidate]->body;
    if (o->base.type == GY_MOTION_DYNAMIC) {
        gy_vec3 back = gy_v3_add(gy_ode_body_com(o), hit.rewind);
        dBodySetPosition(o->body, back.x, back.y, back.z);
        at = gy_v3_add(at, hit.rewind);
    }
    dBodySetPosition(b->body, at.x, at.y, at.z);
}

static void continuous_collision(gy_driver_world *w)
{
    double reach = -1.0;
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (!b->base.continuous || !dBodyIsEnabled(b->body))
            continue;
        if (reach < 0.0) {
            reach = 0.0;
            for (uint32_t k = 0; k < w->moving_count; k++) {
                const gy_ode_body *o = w->moving[k];
                reach = fmax(reach, gy_v3_len(gy_v3_sub(gy_ode_body_com(o), o->ccd_start)));
            }
        }
        ccd_body(w, b, reach);
    }
}

/* ---- the step ------------------------------------------------------------------------------- */

typedef struct fresh_ctx {
    gy_driver_world *w;
    gy_ode_collider *c; /* a collider of the body that may be woken */
    bool touched;
} fresh_ctx;

static bool fresh_visit(void *ctx, gy_ode_collider *s)
{
    fresh_ctx *fc = ctx;
    /* placed_step is the step_index at placement; begin_step runs after the increment. */
    if (s->body->placed_step + 1u != fc->w->step_index)
        return true;
    if (!gy_adapter_colliders_filter(&s->base, &fc->c->base))
        return true;
    dContactGeom cg;
    fc->touched = dCollide(fc->c->geom, s->geom, 1, &cg, sizeof cg) > 0;
    return !fc->touched;
}

/* Statics created or moved since the last step: neither side of their pairs with a sleeper is
 * awake, so nothing would ever collide them. Wake (or, for a kinematic body at rest, collide this
 * step) every inactive body that touches one; the union box keeps this to the bodies near them. */
static void wake_under_fresh_statics(gy_driver_world *w)
{
    const double *f = w->fresh_aabb;
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (b->active)
            continue;
        for (uint32_t k = 0; k < b->collider_count && !b->active; k++) {
            fresh_ctx fc = {w, b->colliders[k], false};
            dReal box[6];
            dGeomGetAABB(fc.c->geom, box);
            if (box[0] > f[1] || box[1] < f[0] || box[2] > f[3] || box[3] < f[2] || box[4] > f[5] ||
                box[5] < f[4])
                continue;
            gy_ode_static_visit(w, box, fresh_visit, &fc);
            if (!fc.touched)
                continue;
            if (b->base.type == GY_MOTION_DYNAMIC)
                dBodyEnable(b->body);
            b->active = true;
        }
    }
}

static void begin_step(gy_driver_world *w, double dt)
{
    double rescale = w->last_dt > 0.0 ? dt / w->last_dt : 1.0;
    gy_adapter_contacts_begin_step(w->contacts);

    for (uint32_t i = 0; i < w->moving_count; i++)
        w->moving[i]->active = body_moving(w->moving[i]);
    if (w->fresh_statics) {
        wake_under_fresh_statics(w);
        w->fresh_statics = false;
    }
    /* A moving body touching a sleeper last step wakes it, even if they no longer touch (the
     * support was teleported away, say). ODE's islands do the same for pairs still touching. */
    for (uint32_t i = 0; i < w->contacts->previous.count; i++) {
        gy_ode_pair *p = &gy_ode_pairs(&w->contacts->previous)[i];
        gy_ode_body *a = p->a->body, *b = p->b->body;
        if (a->active == b->active || !p->responds)
            continue;
        gy_ode_body *sleeper = a->active ? b : a;
        if (sleeper->base.type == GY_MOTION_DYNAMIC) {
            dBodyEnable(sleeper->body);
            sleeper->active = true;
        }
    }
    /* Pairs with neither side moving are not collided again: carry their report over. */
    for (uint32_t i = 0; i < w->contacts->previous.count; i++) {
        gy_ode_pair *p = &gy_ode_pairs(&w->contacts->previous)[i];
        gy_ode_body *a = p->a->body, *b = p->b->body;
        if (a->active || b->active)
            continue;
        uint32_t k = gy_adapter_contacts_carry(w->contacts, i, &w->step_error);
        if (k == UINT32_MAX)
            break;
        gy_ode_pairs(&w->contacts->current)[k].cached = true;
        /* A resting pair's impulse is its force times the step. */
        w->contacts->current.contacts[k].normal_impulse *= rescale;
        w->contacts->current.contacts[k].tangent_impulse *= rescale;
    }
}

/* Whether two colliders touch once `moved`'s body is shifted by `shift`; the body is put back
 * exactly (same position values), so nothing else sees the move. */
static bool touch_shifted(gy_ode_collider *moved, gy_ode_collider *other, gy_vec3 shift)
{
    dBodyID body = moved->body->body;
    const dReal *p = dBodyGetPosition(body);
    dReal keep[3] = {p[0], p[1], p[2]};
    dBodySetPosition(body, keep[0] + shift.x, keep[1] + shift.y, keep[2] + shift.z);
    dContactGeom cg;
    bool touch = dCollide(moved->geom, other->geom, 1, &cg, sizeof cg) > 0;
    dBodySetPosition(body, keep[0], keep[1], keep[2]);
    return touch;
}

/* Hysteresis for resting contacts: a solid pair reported last step that ODE found apart this
 * step stays reported (with no impulse) while the gap is under CONTACT_KEEP_MARGIN, tested by
 * moving one side that far along the last normal. Without it a box created resting on the
 * ground reported enter, exit, enter while it settled. */
static void keep_resting_pairs(gy_driver_world *w)
{
    for (uint32_t i = 0; i < w->contacts->previous.count; i++) {
        gy_ode_pair p = gy_ode_pairs(&w->contacts->previous)[i];
        gy_contact c = w->contacts->previous.contacts[i];
        if (!p.responds || p.a->base.is_sensor || p.b->base.is_sensor ||
            !p.a->base.contact_response || !p.b->base.contact_response ||
            (p.a->base.category & p.b->base.mask) == 0 ||
            (p.b->base.category & p.a->base.mask) == 0)
            continue;
        if (gy_adapter_contacts_has(w->contacts, &p.a->base, &p.b->base))
            continue;
        /* The contact normal points from a to b: a moves along it, or b against it. */
        gy_vec3 shift = gy_v3_scale(c.normal, CONTACT_KEEP_MARGIN);
        bool touch = p.a->body->body != NULL   ? touch_shifted(p.a, p.b, shift)
                     : p.b->body->body != NULL ? touch_shifted(p.b, p.a, gy_v3_neg(shift))
                                               : false;
        if (!touch)
            continue;
        uint32_t k = pair_get(w, p.a, p.b);
        if (k == UINT32_MAX)
            return;
        c.penetration = 0.0;
        c.normal_impulse = 0.0;
        c.tangent_impulse = 0.0;
        w->contacts->current.contacts[k] = c;
        p.cached = false;
        p.tangent = gy_v3(0.0, 0.0, 0.0);
        p.covered = 0.0;
        gy_ode_pairs(&w->contacts->current)[k] = p;
    }
}

static bool sensor_pair_unseen(const void *pair, const void *ctx)
{
    (void)ctx;
    return !((const gy_ode_pair *)pair)->sensor_seen;
}

/* Contacts are found at the start of each substep, before the solve moves the bodies, so the
 * report of a step describes where they were when it began. Sensors only report, so they can
 * describe where the step ended: their pairs are collided again at the end poses, and the
 * report keeps exactly the sensor pairs that overlap there (and those carried over asleep). */
static void sensor_pass(gy_driver_world *w)
{
    if (w->tally->sensors == 0)
        return;
    for (uint32_t i = 0; i < w->contacts->current.count; i++) {
        gy_ode_pair *p = &gy_ode_pairs(&w->contacts->current)[i];
        p->sensor_seen = p->cached || !w->contacts->current.contacts[i].is_sensor;
    }
    w->sensor_pass = true;
    dSpaceCollide(w->dynamic_space, w, near_callback);
    collide_static(w);
    w->sensor_pass = false;
    gy_adapter_contacts_remove_if(w->contacts, sensor_pair_unseen, NULL);
}

static void end_step(gy_driver_world *w, double dt)
{
    for (uint32_t i = 0; i < w->contacts->current.count; i++) {
        gy_contact *c = &w->contacts->current.contacts[i];
        gy_ode_pair *p = &gy_ode_pairs(&w->contacts->current)[i];
        if (p->cached)
            continue;
        c->tangent_impulse = gy_v3_len(p->tangent);
        if (c->normal_impulse < 0.0)
            c->normal_impulse = 0.0;
        /* A pair that fell asleep part-way through the substeps is carried over from now on:
         * report it as if it had rested for the whole step. */
        if (p->covered > 0.0 && p->covered < dt * (1.0 - 1e-9) && !body_moving(p->a->body) &&
            !body_moving(p->b->body)) {
            double k = dt / p->covered;
            c->normal_impulse *= k;
            c->tangent_impulse *= k;
        }
    }
    for (uint32_t i = 0; i < w->moving_count; i++)
        w->moving[i]->pose_written = false;
    gy_adapter_contacts_end_step(w->contacts);
}

gy_result gy_ode_step(gy_driver_world *w, double dt, double h, uint32_t substeps)
{
    w->step_error = GY_OK;
    w->step_index++;
    w->substep_dt = h;
    if (h != w->damping_dt) {
        for (uint32_t i = 0; i < w->moving_count; i++)
            gy_ode_body_apply_damping(w->moving[i], h);
        w->damping_dt = h;
    }
    begin_step(w, dt);
    /* Forces and torques added since the last step act for all of it, but dWorldQuickStep clears
     * a body's accumulators after each substep: keep them and add them again for each substep. */
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_ode_body *b = w->moving[i];
        if (b->base.type != GY_MOTION_DYNAMIC)
            continue;
        b->step_force = v3(dBodyGetForce(b->body));
        b->step_torque = v3(dBodyGetTorque(b->body));
    }
    gy_vec3 g = w->def.gravity;
    for (uint32_t s = 0; s < substeps; s++) {
        for (uint32_t i = 0; i < w->moving_count; i++) {
            gy_ode_body *b = w->moving[i];
            if (s > 0)
                b->active = body_moving(b);
            if (!b->in_contact)
                b->correction_speed = 0.0; /* free: nothing left to give back */
            b->in_contact = false;
            /* Every moving body's: continuous collision sweeps in each candidate's frame. */
            b->ccd_start = gy_ode_body_com(b);
            if (b->base.type != GY_MOTION_DYNAMIC || !b->active)
                continue;
            if (s > 0) {
                dBodyAddForce(b->body, b->step_force.x, b->step_force.y, b->step_force.z);
                dBodyAddTorque(b->body, b->step_torque.x, b->step_torque.y, b->step_torque.z);
            }
            /* ODE has gravity on or off per body; other factors are applied as a force. */
            if (b->base.gravity_factor != 1.0 && b->base.gravity_factor != 0.0) {
                double k = b->mass * b->base.gravity_factor;
                dBodyAddForce(b->body, g.x * k, g.y * k, g.z * k);
            }
        }
        w->point_count = 0;
        dSpaceCollide(w->dynamic_space, w, near_callback);
        collide_static(w);
        /* QuickStep shuffles constraint rows with ODE's process-wide generator; give each world
         * its own sequence so a world's run does not depend on what else stepped before it. */
        dRandSetSeed(w->rng_seed);
        gy_ode_joints_before_solve(w, h);
        dWorldQuickStep(w->world, h);
        w->rng_seed = dRandGetSeed();
        prepare_points(w, h);
        push_apart(w, h);
        settle_contacts(w);
        gather_impulses(w, h);
        dJointGroupEmpty(w->contact_group);
        ballistic_correction(w, h);
        project_locks(w);
        continuous_collision(w);
        gy_result r = gy_ode_joint_check_breaks(w);
        if (r != GY_OK)
            gy_adapter_note_error(&w->step_error, r);
    }
    keep_resting_pairs(w);
    sensor_pass(w);
    end_step(w, dt);
    w->last_dt = dt;
    return w->step_error;
}

void gy_ode_step_fini(gy_driver_world *w)
{
    const gy_allocator *a = w->allocator;
    gy_free(a, w->points, (size_t)w->point_capacity * sizeof *w->points);
    for (uint32_t i = 0; i < w->feedback_block_count; i++)
        gy_free(a, w->feedback_blocks[i], FEEDBACK_BLOCK * sizeof(dJointFeedback));
    gy_free(a, w->feedback_blocks, (size_t)w->feedback_block_capacity * sizeof *w->feedback_blocks);
    gy_free(a, w->scratch_colliders, (size_t)w->scratch_capacity * sizeof *w->scratch_colliders);
    gy_adapter_broken_free(a, &w->broken);
}
