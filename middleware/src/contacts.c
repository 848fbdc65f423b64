/* The front end's contact rules and report (contacts.h). */
#include "contacts.h"

#include <math.h>
#include <string.h>

#include "driver.h"
#include "gyre/math.h"
#include "mesh_edges.h"

/* A driver's pair record starts with its two collider records (contacts.h). */
static void *pair_record(const gy_adapter_report *r, size_t pair_size, uint32_t i)
{
    return (unsigned char *)r->pairs + (size_t)i * pair_size;
}

void gy_adapter_contacts_init(gy_adapter_contacts *c, const gy_allocator *al, size_t pair_size)
{
    memset(c, 0, sizeof *c);
    c->allocator = al;
    c->pair_size = pair_size;
    c->pass = 1u;
}

void gy_adapter_contacts_bind(gy_adapter_contacts *c, const struct gy_driver *d,
                              struct gy_driver_world *dw)
{
    c->driver = d;
    c->dw = dw;
}

void gy_adapter_contacts_fini(gy_adapter_contacts *c)
{
    gy_adapter_report_free(c->allocator, &c->current, c->pair_size);
    gy_adapter_report_free(c->allocator, &c->previous, c->pair_size);
    gy_adapter_pair_map_free(c->allocator, &c->map);
    gy_adapter_one_way_free(c->allocator, &c->one_ways);
    gy_adapter_points_free(&c->points, c->allocator);
}

/* Both bodies are named in this step's records. */
static void mark(const gy_adapter_contacts *c, const gy_adapter_collider *a,
                 const gy_adapter_collider *b)
{
    a->owner->reported_step = c->step;
    b->owner->reported_step = c->step;
}

void gy_adapter_contacts_begin_step(gy_adapter_contacts *c)
{
    c->step++;
    gy_adapter_report_swap(&c->current, &c->previous);
    gy_adapter_pair_map_reset(&c->map);
}

void gy_adapter_contacts_begin_pass(gy_adapter_contacts *c)
{
    c->pass = c->pass == UINT32_MAX ? 1u : c->pass + 1u;
}

void gy_adapter_contacts_end_step(gy_adapter_contacts *c)
{
    gy_adapter_one_way_expire(&c->one_ways, c->step);
}

uint32_t gy_adapter_contacts_pair(gy_adapter_contacts *c, const gy_adapter_collider *a,
                                  const gy_adapter_collider *b, bool *is_new, gy_result *error)
{
    if (b->id.bits < a->id.bits) {
        const gy_adapter_collider *t = a;
        a = b;
        b = t;
    }
    uint32_t n = c->current.count;
    uint32_t index =
        gy_adapter_report_pair(c->allocator, &c->current, c->pair_size, &c->map, a, b, error);
    *is_new = index == n;
    if (index != UINT32_MAX)
        mark(c, a, b);
    if (*is_new) {
        gy_adapter_contact_name(&c->current.contacts[index], a, b);
        void *rec = pair_record(&c->current, c->pair_size, index);
        memcpy(rec, &a, sizeof a);
        memcpy((unsigned char *)rec + sizeof a, &b, sizeof b);
    }
    return index;
}

bool gy_adapter_contacts_refresh(gy_adapter_contacts *c, uint32_t i)
{
    gy_adapter_pair *p = gy_adapter_contacts_record(c, i);
    if (!p->carried)
        return false;
    gy_contact *ct = &c->current.contacts[i];
    p->carried = false;
    ct->normal_impulse = 0.0;
    p->tangent = gy_v3(0.0, 0.0, 0.0);
    p->solved_time = 0.0;
    gy_adapter_contact_name(ct, p->a, p->b);
    return true;
}

void gy_adapter_contacts_geometry(gy_adapter_contacts *c, uint32_t i,
                                  const gy_adapter_collider *first, gy_vec3 point, gy_vec3 normal,
                                  double distance)
{
    gy_adapter_pair *p = gy_adapter_contacts_record(c, i);
    p->sensor_seen = true;
    if (p->pass == c->pass && !(distance < p->pass_distance))
        return;
    p->pass = c->pass;
    p->pass_distance = distance;
    gy_contact *ct = &c->current.contacts[i];
    ct->point = point;
    ct->normal = p->a == first ? normal : gy_v3_neg(normal);
    ct->penetration = fmax(0.0, -distance);
}

bool gy_adapter_contacts_has(const gy_adapter_contacts *c, const gy_adapter_collider *a,
                             const gy_adapter_collider *b)
{
    return gy_adapter_pair_map_find(&c->map, a, b) != UINT32_MAX;
}

uint32_t gy_adapter_contacts_carry(gy_adapter_contacts *c, uint32_t i, gy_result *error)
{
    const void *rec = pair_record(&c->previous, c->pair_size, i);
    const gy_adapter_collider *a, *b;
    memcpy(&a, rec, sizeof a);
    memcpy(&b, (const unsigned char *)rec + sizeof a, sizeof b);
    /* Not gy_adapter_contacts_pair: the entry is overwritten whole below, so naming it first would
     * be work thrown away. */
    uint32_t k =
        gy_adapter_report_pair(c->allocator, &c->current, c->pair_size, &c->map, a, b, error);
    if (k == UINT32_MAX)
        return k;
    mark(c, a, b);
    c->current.contacts[k] = c->previous.contacts[i];
    memcpy(pair_record(&c->current, c->pair_size, k), rec, c->pair_size);
    return k;
}

void gy_adapter_contacts_carry_idle(gy_adapter_contacts *c,
                                    bool (*idle)(const gy_adapter_pair *p, const void *ctx),
                                    const void *ctx, double rescale, gy_result *error)
{
    /* Carried into an empty report (at the step's start), no pair can be there already. */
    bool fresh = c->current.count == 0;
    for (uint32_t i = 0; i < c->previous.count; i++) {
        const gy_adapter_pair *p = pair_record(&c->previous, c->pair_size, i);
        if (!idle(p, ctx) || (!fresh && gy_adapter_contacts_has(c, p->a, p->b)))
            continue;
        uint32_t k = gy_adapter_contacts_carry(c, i, error);
        if (k == UINT32_MAX)
            return;
        gy_adapter_contacts_record(c, k)->carried = true;
        c->current.contacts[k].normal_impulse *= rescale;
        c->current.contacts[k].tangent_impulse *= rescale;
    }
}

void gy_adapter_contacts_solved(gy_adapter_contacts *c, uint32_t i, double h)
{
    gy_adapter_pair *p = gy_adapter_contacts_record(c, i);
    if (p->solved_pass == c->pass)
        return;
    p->solved_pass = c->pass;
    p->solved_time += h;
}

void gy_adapter_contacts_settle_unsolved(gy_adapter_contacts *c, double dt,
                                         bool (*moving)(const gy_adapter_body *b, const void *ctx),
                                         const void *ctx)
{
    /* The common step has none taken in no substep: the last report is looked at only then. */
    bool any_unsolved = false;
    for (uint32_t k = 0; k < c->current.count; k++) {
        gy_adapter_pair *p = gy_adapter_contacts_record(c, k);
        if (p->carried || !p->responds || p->solved_time >= dt * (1.0 - 1e-9))
            continue;
        if (!(p->solved_time > 0.0)) {
            any_unsolved = true;
            continue;
        }
        /* Taken in some substeps only: a pair that came into touch part-way reports what it
         * took; one whose bodies fell asleep part-way, as if it had rested the whole step. */
        if (moving(p->a->owner, ctx) || moving(p->b->owner, ctx))
            continue;
        double scale = dt / p->solved_time;
        c->current.contacts[k].normal_impulse *= scale;
        p->tangent = gy_v3_scale(p->tangent, scale);
    }
    for (uint32_t i = 0; any_unsolved && i < c->previous.count; i++) {
        const gy_adapter_pair *was = pair_record(&c->previous, c->pair_size, i);
        uint32_t k = gy_adapter_pair_map_find(&c->map, was->a, was->b);
        if (k == UINT32_MAX)
            continue;
        gy_adapter_pair *p = gy_adapter_contacts_record(c, k);
        if (p->carried || !p->responds || p->solved_time > 0.0)
            continue;
        p->carried = true;
        c->current.contacts[k].normal_impulse =
            c->previous.contacts[i].normal_impulse * c->carry_scale;
        c->current.contacts[k].tangent_impulse =
            c->previous.contacts[i].tangent_impulse * c->carry_scale;
    }
}

void gy_adapter_contacts_remove_if(gy_adapter_contacts *c,
                                   bool (*drop)(const void *pair, const void *ctx), const void *ctx)
{
    gy_adapter_report_remove_if(&c->current, c->pair_size, drop, ctx);
    /* Indices moved: the map is rebuilt at the next step start. */
    gy_adapter_pair_map_reset(&c->map);
}

void gy_adapter_contacts_touching(const gy_adapter_contacts *c, const gy_adapter_body *body,
                                  void (*visit)(void *ctx, gy_body_id other), void *ctx)
{
    if (body->reported_step + 1u >= c->step)
        gy_adapter_report_touching(&c->current, body->id, visit, ctx);
}

void gy_adapter_contacts_forget_body(gy_adapter_contacts *c, const gy_adapter_body *body,
                                     void (*wake)(void *ctx, gy_body_id other), void *ctx)
{
    if (body->reported_step + 1u < c->step)
        return; /* named in neither this step's records nor the last step's */
    gy_adapter_report_touching(&c->current, body->id, wake, ctx);
    gy_adapter_report_forget_body(&c->current, &c->previous, c->pair_size, &c->map, body->id);
    gy_adapter_one_way_forget_body(&c->one_ways, body);
}

/* ---- the pre-solve rules -------------------------------------------------------------------- */

gy_adapter_contact_kind gy_adapter_contact_gate(const gy_adapter_collider *a,
                                                const gy_adapter_collider *b, bool sensor_pass)
{
    if (a->owner == b->owner || !gy_adapter_colliders_filter(a, b) ||
        gy_adapter_bodies_jointed(a->owner, b->owner))
        return GY_ADAPTER_CONTACT_SKIP;
    bool sensor = a->is_sensor || b->is_sensor;
    bool dynamic = a->body_type == GY_MOTION_DYNAMIC || b->body_type == GY_MOTION_DYNAMIC;
    if (!sensor && (sensor_pass || !dynamic))
        return GY_ADAPTER_CONTACT_SKIP;
    if (sensor || !a->contact_response || !b->contact_response)
        return GY_ADAPTER_CONTACT_REPORT;
    return GY_ADAPTER_CONTACT_SOLVE;
}

void gy_adapter_contact_material(const gy_adapter_collider *a, const gy_adapter_collider *b,
                                 double *friction, double *restitution)
{
    *friction = gy_combine(a->friction, (gy_combine_mode)a->friction_combine, b->friction,
                           (gy_combine_mode)b->friction_combine);
    *restitution = gy_combine(a->restitution, (gy_combine_mode)a->restitution_combine,
                              b->restitution, (gy_combine_mode)b->restitution_combine);
}

void gy_adapter_body_gate_add(gy_adapter_body_gate *g, const gy_adapter_collider *c)
{
    g->category |= c->category;
    g->mask |= c->mask;
    g->has_sensor = g->has_sensor || c->is_sensor;
}

bool gy_adapter_bodies_may_pair(uint8_t type_a, gy_adapter_body_gate a, uint8_t type_b,
                                gy_adapter_body_gate b)
{
    if ((a.category & b.mask) == 0 || (b.category & a.mask) == 0)
        return false;
    return type_a == GY_MOTION_DYNAMIC || type_b == GY_MOTION_DYNAMIC || a.has_sensor ||
           b.has_sensor;
}

bool gy_adapter_body_gate_widened(gy_adapter_body_gate before, gy_adapter_body_gate now)
{
    return (now.category & ~before.category) != 0 || (now.mask & ~before.mask) != 0;
}

/* Static and kinematic bodies move along nothing the solve asks of them. */
static bool normal_locked(const gy_adapter_body *b, gy_vec3 n)
{
    if (b->type != GY_MOTION_DYNAMIC)
        return true;
    const gy_adapter_motion *m = gy_adapter_body_motion(b);
    const double k[3] = {n.x, n.y, n.z};
    for (int i = 0; i < 3; i++)
        if (fabs(k[i]) > 1e-9 && !m->lock_linear[i])
            return false;
    return true;
}

bool gy_adapter_contact_locked(const gy_adapter_body *a, const gy_adapter_body *b, gy_vec3 n)
{
    return normal_locked(a, n) && normal_locked(b, n);
}

static double gravity_factor(const gy_adapter_body *b)
{
    return b->type == GY_MOTION_DYNAMIC ? gy_adapter_body_motion(b)->gravity_factor : 0.0;
}

double gy_adapter_contact_pull(gy_vec3 g, gy_vec3 n, const gy_adapter_body *a,
                               const gy_adapter_body *b)
{
    return -gy_v3_dot(g, n) * (gravity_factor(a) - gravity_factor(b));
}

bool gy_adapter_contact_bounce(double e, double approach, double offset, double accel, double h,
                               double *leave)
{
    *leave = 0.0;
    if (!(e > 0.0) || !(approach > GY_ADAPTER_BOUNCE_MIN_VELOCITY))
        return false;
    if (offset > approach * h + 0.5 * accel * h * h)
        return false;
    *leave = gy_adapter_bounce_speed(approach, offset, accel, e, h);
    return true;
}

bool gy_adapter_contact_layer(double depth, double erp, double h, double *speed)
{
    *speed = 0.0;
    if (!(depth >= -GY_ADAPTER_CONTACT_LAYER && depth <= GY_ADAPTER_SOLVER_DEPTH))
        return false;
    *speed = (depth - GY_ADAPTER_CONTACT_LAYER) * erp / h;
    return true;
}

gy_adapter_aim gy_adapter_contact_aim(double e, double approach, double offset, double accel,
                                      double depth, double erp, double h, double *target)
{
    if (gy_adapter_contact_bounce(e, approach, offset, accel, h, target))
        return GY_ADAPTER_AIM_BOUNCE;
    if (gy_adapter_contact_layer(depth, erp, h, target))
        return GY_ADAPTER_AIM_LAYER;
    return GY_ADAPTER_AIM_VENDOR;
}

bool gy_adapter_contact_surface(const gy_adapter_contacts *c, const gy_adapter_collider *a,
                                const gy_adapter_collider *b, gy_vec3 *surface)
{
    gy_vec3 la = gy_adapter_collider_surface_velocity(a);
    gy_vec3 lb = gy_adapter_collider_surface_velocity(b);
    if (!(gy_v3_len_sq(la) > 0.0) && !(gy_v3_len_sq(lb) > 0.0))
        return false;
    gy_vec3 sa = gy_driver_collider_to_world(c->driver, c->dw, gy_driver_collider_of(a), la);
    gy_vec3 sb = gy_driver_collider_to_world(c->driver, c->dw, gy_driver_collider_of(b), lb);
    *surface = gy_v3_sub(sb, sa);
    return true;
}

bool gy_adapter_contact_conveyor(gy_vec3 surface, gy_vec3 n, gy_vec3 *tangent, double *speed)
{
    gy_vec3 t = gy_v3_mad(surface, n, -gy_v3_dot(surface, n));
    double tl = gy_v3_len(t);
    /* Below this the direction would be mostly rounding. */
    if (!(tl > 1e-9))
        return false;
    *tangent = t;
    *speed = tl;
    return true;
}

bool gy_adapter_contact_ccd_candidate(const gy_adapter_collider *solid,
                                      const gy_adapter_collider *c)
{
    return gy_adapter_ccd_filter_accepts(solid->category, solid->mask, c->owner != solid->owner,
                                         c->is_sensor, c->contact_response, c->category, c->mask);
}

double gy_adapter_contact_ccd_radius(const gy_adapter_body *b, double ccd_radius, double moved,
                                     double reach)
{
    double r = ccd_radius * GY_ADAPTER_CCD_SHRINK;
    if (gy_adapter_body_solid(b) == NULL || !(r > 0.0))
        return 0.0;
    if (!(moved > r) && !(reach > r))
        return 0.0; /* nothing moved far enough to have been skipped */
    return r;
}

bool gy_adapter_contact_one_way_known(gy_adapter_contacts *c, const gy_adapter_collider *platform,
                                      const gy_adapter_collider *other, bool *accepted)
{
    const gy_adapter_one_way *known =
        gy_adapter_one_way_find(&c->one_ways, platform, other, c->step);
    if (known == NULL)
        return false;
    mark(c, platform, other);
    *accepted = known->accepted;
    return true;
}

bool gy_adapter_contact_one_way(gy_adapter_contacts *c, const gy_adapter_one_way_contact *oc,
                                gy_result *error)
{
    bool ok = gy_one_way_accepts(oc->normal, oc->one_way, oc->velocity, oc->other_com, oc->point,
                                 oc->penetration, gy_adapter_collider_one_way_slop(oc->platform));
    gy_adapter_one_way rec = {oc->platform,     oc->other, oc->platform->owner,
                              oc->other->owner, c->step,   ok};
    mark(c, oc->platform, oc->other);
    gy_adapter_note_error(error, gy_adapter_one_way_add(c->allocator, &c->one_ways, &rec));
    return ok;
}

static const gy_adapter_mesh_edges *mesh_edges(const gy_adapter_collider *c)
{
    if (c->shape_type != GY_SHAPE_MESH || c->shape.resource == NULL)
        return NULL;
    return &c->shape.resource->edges;
}

/* For a round collider `c` (sphere or capsule, at world pose `pose`) against a mesh point
 * `mesh_point` with unit normal `n` out of the mesh: its point becomes its deepest one along the
 * normal, nearest the point it had, and *distance that point's height above the plane through
 * the mesh point; true for a round collider. A round body's contact acts along the line through
 * its core: a point off that line (a vendor's point placed on the triangle's edge, or one found
 * on an edge and given the face normal) reads the body's own spin as approach, and a ball rolling
 * across the edges between flat triangles was kicked up at each one. */
static bool round_point(const gy_adapter_collider *c, gy_pose pose, gy_vec3 n, gy_vec3 mesh_point,
                        gy_vec3 *point, double *distance)
{
    if (c->shape_type != GY_SHAPE_SPHERE && c->shape_type != GY_SHAPE_CAPSULE)
        return false;
    gy_shape shape = gy_adapter_collider_shape(c);
    gy_convex round;
    gy_adapter_shape_convex(&shape, NULL, pose, &round);
    gy_vec3 core = pose.position;
    if (round.core == GY_CONVEX_SEGMENT) {
        /* The point of its core segment nearest the point it had. */
        gy_vec3 axis = gy_quat_rotate(pose.rotation, gy_v3(0.0, 1.0, 0.0));
        double t = gy_v3_dot(gy_v3_sub(*point, core), axis);
        core = gy_v3_mad(core, axis, fmax(-round.half_length, fmin(round.half_length, t)));
    }
    *point = gy_v3_mad(core, n, -round.radius);
    *distance = gy_v3_dot(gy_v3_sub(*point, mesh_point), n);
    return true;
}

/* A narrow phase that sees one triangle at a time pushes a body back from the edges between flat
 * triangles (ghost collisions); the face normal lets it slide across them as over one plane.
 * The point's place on the triangle and the normal are read in the mesh's frame. */
bool gy_adapter_contact_mesh_edges(const gy_adapter_collider *a, gy_pose pose_a,
                                   const gy_adapter_collider *b, gy_pose pose_b,
                                   gy_adapter_raw_point *p)
{
    const gy_adapter_mesh_edges *e = mesh_edges(b);
    bool mesh_b = e != NULL;
    if (!mesh_b && (e = mesh_edges(a)) == NULL)
        return false;
    gy_pose pose = mesh_b ? pose_b : pose_a;
    /* The normal out of the mesh: b towards a when b is the mesh. */
    double out = mesh_b ? 1.0 : -1.0;
    gy_quat inv = gy_quat_conj(pose.rotation);
    gy_vec3 n = gy_quat_rotate(inv, gy_v3_scale(p->normal, out));
    gy_vec3 at = gy_quat_rotate(inv, gy_v3_sub(mesh_b ? p->point_b : p->point_a, pose.position));
    bool fixed =
        gy_adapter_mesh_edges_fix_normal(e, mesh_b ? p->triangle_b : p->triangle_a, at, &n);
    if (fixed)
        p->normal = gy_v3_scale(gy_quat_rotate(pose.rotation, n), out);
    bool round = round_point(mesh_b ? a : b, mesh_b ? pose_a : pose_b, gy_v3_scale(p->normal, out),
                             mesh_b ? p->point_b : p->point_a, mesh_b ? &p->point_a : &p->point_b,
                             &p->distance);
    if (!fixed && !round)
        return false;
    if (mesh_b)
        p->point_b = gy_v3_mad(p->point_a, p->normal, -p->distance);
    else
        p->point_a = gy_v3_mad(p->point_b, p->normal, p->distance);
    return true;
}
