/* Debug draw (gyre/world_debug_draw.h): the newest published physics results handed to a host's
 * callbacks. Reads the query snapshot through the subsystem's wait-free reader and the World's own
 * game-side state, so it never meets the physics thread. */
#include "gyre/world_debug_draw.h"

#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "world_internal.h"

/* Segments per limit arc and per cone. */
#define ARC_SEGMENTS  16u
#define CONE_SEGMENTS 8u

static gy_debug_color rgba(float r, float g, float b, float a)
{
    gy_debug_color c = {r, g, b, a};
    return c;
}

gy_debug_draw gy_default_debug_draw(void)
{
    gy_debug_draw d;
    memset(&d, 0, sizeof d);
    d.flags = GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_CONTACTS | GY_DEBUG_DRAW_JOINTS |
              GY_DEBUG_DRAW_CHARACTERS;
    d.normal_length = 0.25;
    d.axis_length = 0.5;
    d.point_size = 4.0;
    gy_debug_palette *p = &d.palette;
    p->static_body = rgba(0.55f, 0.55f, 0.55f, 1.0f);
    p->kinematic_body = rgba(0.35f, 0.55f, 0.95f, 1.0f);
    p->awake_body = rgba(0.40f, 0.90f, 0.45f, 1.0f);
    p->sleeping_body = rgba(0.20f, 0.45f, 0.25f, 1.0f);
    p->sensor = rgba(0.95f, 0.85f, 0.25f, 0.35f);
    p->bounds = rgba(0.90f, 0.45f, 0.90f, 1.0f);
    p->tree_static = rgba(0.45f, 0.45f, 0.70f, 0.6f);
    p->tree_moving = rgba(0.95f, 0.60f, 0.25f, 0.6f);
    p->contact = rgba(0.95f, 0.25f, 0.25f, 1.0f);
    p->joint = rgba(0.25f, 0.85f, 0.90f, 1.0f);
    p->joint_broken = rgba(0.60f, 0.15f, 0.15f, 1.0f);
    p->joint_limit = rgba(0.95f, 0.75f, 0.35f, 1.0f);
    p->grounded = rgba(0.30f, 0.80f, 0.95f, 1.0f);
    p->steep = rgba(0.95f, 0.85f, 0.20f, 1.0f);
    p->airborne = rgba(0.95f, 0.55f, 0.20f, 1.0f);
    p->label = rgba(1.0f, 1.0f, 1.0f, 1.0f);
    return d;
}

/* ---- validation ------------------------------------------------------------------------------ */

static bool color_finite(gy_debug_color c)
{
    return isfinite(c.r) && isfinite(c.g) && isfinite(c.b) && isfinite(c.a);
}

static gy_result refuse(const gy_world *w, gy_result r, const char *what)
{
    gy_log(w->logger, GY_LOG_ERROR, "world: gy_world_debug_draw: %s", what);
    return r;
}

/* A callback the flag `flag` (named `flag_name`) draws with, left NULL. */
static gy_result need(const gy_world *w, const gy_debug_draw *d, uint32_t flag,
                      const char *flag_name, bool present, const char *callback)
{
    if ((d->flags & flag) == 0 || present)
        return GY_OK;
    gy_log(w->logger, GY_LOG_ERROR, "world: gy_world_debug_draw: %s needs the `%s` callback",
           flag_name, callback);
    return GY_ERR_INVALID_ARGUMENT;
}

static gy_result check_draw(const gy_world *w, const gy_debug_draw *d)
{
    if ((d->flags & ~(uint32_t)GY_DEBUG_DRAW_ALL) != 0)
        return refuse(w, GY_ERR_INVALID_ARGUMENT, "flags hold bits outside GY_DEBUG_DRAW_ALL");
    if (!gy_is_finite(d->normal_length) || !gy_is_finite(d->axis_length) ||
        !gy_is_finite(d->point_size))
        return refuse(w, GY_ERR_NON_FINITE,
                      "normal_length, axis_length or point_size is not "
                      "finite");
    if (d->normal_length <= 0.0 || d->axis_length <= 0.0 || d->point_size < 0.0)
        return refuse(w, GY_ERR_INVALID_ARGUMENT,
                      "normal_length and axis_length must be > 0, point_size >= 0");
    const gy_debug_palette *p = &d->palette;
    const gy_debug_color colors[] = {
        p->static_body, p->kinematic_body, p->awake_body,   p->sleeping_body,
        p->sensor,      p->bounds,         p->tree_static,  p->tree_moving,
        p->contact,     p->joint,          p->joint_broken, p->joint_limit,
        p->grounded,    p->steep,          p->airborne,     p->label};
    _Static_assert(sizeof colors == sizeof *p, "every palette colour is checked");
    for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++)
        if (!color_finite(colors[i]))
            return refuse(w, GY_ERR_NON_FINITE, "a palette colour is not finite");
    const struct {
        uint32_t flag;
        const char *flag_name;
        bool present;
        const char *callback;
    } needs[] = {
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->sphere != NULL, "sphere"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->box != NULL, "box"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->capsule != NULL, "capsule"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->cylinder != NULL, "cylinder"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->plane != NULL, "plane"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->hull != NULL, "hull"},
        {GY_DEBUG_DRAW_COLLIDERS, "GY_DEBUG_DRAW_COLLIDERS", d->mesh != NULL, "mesh"},
        {GY_DEBUG_DRAW_BOUNDS, "GY_DEBUG_DRAW_BOUNDS", d->box != NULL, "box"},
        {GY_DEBUG_DRAW_TREE, "GY_DEBUG_DRAW_TREE", d->box != NULL, "box"},
        {GY_DEBUG_DRAW_CONTACTS, "GY_DEBUG_DRAW_CONTACTS", d->point != NULL, "point"},
        {GY_DEBUG_DRAW_CONTACTS, "GY_DEBUG_DRAW_CONTACTS", d->segment != NULL, "segment"},
        {GY_DEBUG_DRAW_JOINTS, "GY_DEBUG_DRAW_JOINTS", d->point != NULL, "point"},
        {GY_DEBUG_DRAW_JOINTS, "GY_DEBUG_DRAW_JOINTS", d->segment != NULL, "segment"},
        {GY_DEBUG_DRAW_CHARACTERS, "GY_DEBUG_DRAW_CHARACTERS", d->capsule != NULL, "capsule"},
        {GY_DEBUG_DRAW_CHARACTERS, "GY_DEBUG_DRAW_CHARACTERS", d->segment != NULL, "segment"},
        {GY_DEBUG_DRAW_LABELS, "GY_DEBUG_DRAW_LABELS", d->text != NULL, "text"},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        gy_result r =
            need(w, d, needs[i].flag, needs[i].flag_name, needs[i].present, needs[i].callback);
        if (r != GY_OK)
            return r;
    }
    return GY_OK;
}

/* ---- the snapshot: colliders, bounds, tree nodes ----------------------------------------------
 */

static gy_debug_color collider_color(const gy_debug_draw *d, const gy_snapshot_entry *e, bool awake)
{
    if (e->is_sensor)
        return d->palette.sensor;
    switch (e->motion) {
    case GY_MOTION_STATIC:
        return d->palette.static_body;
    case GY_MOTION_KINEMATIC:
        return d->palette.kinematic_body;
    default:
        return awake ? d->palette.awake_body : d->palette.sleeping_body;
    }
}

static void draw_collider(const gy_debug_draw *d, const gy_snapshot_entry *e, gy_debug_color col)
{
    void *ctx = d->context;
    const gy_shape *s = &e->shape;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        d->sphere(ctx, e->pose, s->radius, col, d->solid);
        break;
    case GY_SHAPE_BOX:
        d->box(ctx, e->pose, gy_v3_scale(s->box_size, 0.5), col, d->solid);
        break;
    case GY_SHAPE_CAPSULE:
        d->capsule(ctx, e->pose, s->radius, s->height, col, d->solid);
        break;
    case GY_SHAPE_CYLINDER:
        d->cylinder(ctx, e->pose, s->radius, s->height, col, d->solid);
        break;
    case GY_SHAPE_PLANE:
        d->plane(ctx, s->normal, s->offset, col, d->solid);
        break;
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH: {
        gy_snapshot_triangles t;
        if (gy_snapshot_geometry_triangles(e->geometry, &t) != GY_OK)
            break;
        if (s->type == GY_SHAPE_HULL)
            d->hull(ctx, e->pose, t.vertices, t.vertex_count, t.indices, t.triangle_count, col,
                    d->solid);
        else
            d->mesh(ctx, e->pose, t.vertices, t.vertex_count, t.indices, t.triangle_count, col,
                    d->solid);
        break;
    }
    default:
        break;
    }
}

/* A world-space box as a pose and half extents. */
static void draw_aabb(const gy_debug_draw *d, gy_vec3 lo, gy_vec3 hi, gy_debug_color col)
{
    gy_pose p = gy_pose_identity();
    p.position = gy_v3_scale(gy_v3_add(lo, hi), 0.5);
    d->box(d->context, p, gy_v3_scale(gy_v3_sub(hi, lo), 0.5), col, false);
}

static void draw_entries(const gy_world *w, const gy_debug_draw *d, const gy_snapshot_view *v)
{
    uint32_t limit = gy_snapshot_view_slot_limit(v);
    for (uint32_t slot = 0; slot < limit; slot++) {
        gy_snapshot_entry_info info;
        if (gy_snapshot_view_get(v, slot, &info) != GY_OK)
            continue;
        const gy_w_body *c = gy_w_body_by_ref(w, info.entry.body);
        if (c == NULL)
            continue;
        if ((d->flags & GY_DEBUG_DRAW_COLLIDERS) != 0)
            draw_collider(d, &info.entry, collider_color(d, &info.entry, gy_w_body_awake(w, c)));
        if ((d->flags & GY_DEBUG_DRAW_BOUNDS) != 0 && info.entry.shape.type != GY_SHAPE_PLANE)
            draw_aabb(d, info.bounds_min, info.bounds_max, d->palette.bounds);
    }
}

static void draw_node(void *ctx, const gy_snapshot_node *n)
{
    const gy_debug_draw *d = ctx;
    draw_aabb(d, n->min, n->max,
              n->tree == GY_SNAPSHOT_TREE_STATIC ? d->palette.tree_static : d->palette.tree_moving);
}

/* ---- contacts -------------------------------------------------------------------------------- */

static void draw_contacts(const gy_world *w, const gy_debug_draw *d)
{
    for (uint32_t i = 0; i < w->pair_count; i++) {
        const gy_w_pair *pr = &w->pairs[i];
        d->point(d->context, pr->point, d->point_size, d->palette.contact);
        d->segment(d->context, pr->point, gy_v3_mad(pr->point, pr->normal, d->normal_length),
                   d->palette.contact);
    }
}

/* ---- joints ---------------------------------------------------------------------------------- */

/* A unit vector perpendicular to unit `n`. */
static gy_vec3 perpendicular(gy_vec3 n)
{
    gy_vec3 t = fabs(n.x) < 0.57735 ? gy_v3(1, 0, 0) : gy_v3(0, 1, 0);
    return gy_v3_normalize(gy_v3_cross(n, t));
}

/* The arc of radius r about `axis` through `center` from angle a0 to a1 (0 along `ref`). */
static void draw_arc(const gy_debug_draw *d, gy_vec3 center, gy_vec3 axis, gy_vec3 ref, double r,
                     double a0, double a1, gy_debug_color col)
{
    gy_vec3 prev = gy_v3(0, 0, 0);
    for (uint32_t i = 0; i <= ARC_SEGMENTS; i++) {
        double a = a0 + (a1 - a0) * (double)i / (double)ARC_SEGMENTS;
        gy_vec3 p = gy_v3_mad(center, gy_quat_rotate(gy_quat_axis_angle(axis, a), ref), r);
        if (i > 0)
            d->segment(d->context, prev, p, col);
        prev = p;
    }
}

static const char *joint_name(gy_joint_type t)
{
    switch (t) {
    case GY_JOINT_FIXED:
        return "fixed";
    case GY_JOINT_BALL:
        return "ball";
    case GY_JOINT_HINGE:
        return "hinge";
    case GY_JOINT_SLIDER:
        return "slider";
    case GY_JOINT_DISTANCE:
        return "distance";
    default:
        return "joint";
    }
}

/* The limits, drawn in a's frame where a is now: a hinge's or slider's range is measured from
 * where a stood relative to b at creation, so with a at `position` along it, the range's ends
 * sit at (min - position) and (max - position) from a's own reference. */
static void draw_limits(const gy_debug_draw *d, const gy_w_joint *j, gy_vec3 anchor, gy_vec3 axis)
{
    const gy_joint_def *def = &j->def;
    double pos = j->has_state ? j->state.position : 0.0;
    double len = d->axis_length;
    gy_debug_color col = d->palette.joint_limit;
    gy_vec3 ref = perpendicular(axis);
    if (def->type == GY_JOINT_HINGE && def->has_limits) {
        draw_arc(d, anchor, axis, ref, 0.5 * len, def->limit_min - pos, def->limit_max - pos, col);
        d->segment(d->context, anchor, gy_v3_mad(anchor, ref, 0.5 * len), col);
    } else if (def->type == GY_JOINT_SLIDER && def->has_limits) {
        gy_vec3 lo = gy_v3_mad(anchor, axis, def->limit_min - pos);
        gy_vec3 hi = gy_v3_mad(anchor, axis, def->limit_max - pos);
        d->segment(d->context, lo, hi, col);
        d->point(d->context, lo, d->point_size, col);
        d->point(d->context, hi, d->point_size, col);
    } else if (def->type == GY_JOINT_BALL && def->has_cone) {
        /* The cone the axis as b carries it may take about the axis as a carries it. */
        for (uint32_t i = 0; i < CONE_SEGMENTS; i++) {
            double around = 2.0 * GY_PI * (double)i / (double)CONE_SEGMENTS;
            gy_vec3 tilt = gy_quat_rotate(gy_quat_axis_angle(axis, around), ref);
            gy_vec3 dir = gy_quat_rotate(gy_quat_axis_angle(tilt, def->cone_angle), axis);
            d->segment(d->context, anchor, gy_v3_mad(anchor, dir, len), col);
        }
    }
}

static void draw_joints(const gy_world *w, const gy_debug_draw *d)
{
    bool labels = (d->flags & GY_DEBUG_DRAW_LABELS) != 0;
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        const gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j == NULL || (j->status != GY_JOINT_LIVE && j->status != GY_JOINT_BROKEN))
            continue;
        const gy_w_body *a = gy_w_body_of(w, j->a);
        const gy_w_body *b = j->b != GY_W_NONE ? gy_w_body_of(w, j->b) : NULL;
        if (a == NULL)
            continue;
        gy_debug_color col =
            j->status == GY_JOINT_LIVE ? d->palette.joint : d->palette.joint_broken;
        gy_pose pa = gy_w_body_pose(w, a);
        gy_vec3 anchor = gy_pose_apply(pa, j->def.anchor);
        d->segment(d->context, pa.position, anchor, col);
        if (b != NULL)
            d->segment(d->context, gy_w_body_pose(w, b).position, anchor, col);
        d->point(d->context, anchor, d->point_size, col);
        if (j->def.type == GY_JOINT_HINGE || j->def.type == GY_JOINT_SLIDER ||
            j->def.type == GY_JOINT_BALL) {
            gy_vec3 axis = gy_v3_normalize(gy_quat_rotate(pa.rotation, j->def.axis));
            d->segment(d->context, anchor, gy_v3_mad(anchor, axis, d->axis_length), col);
            if (j->status == GY_JOINT_LIVE)
                draw_limits(d, j, anchor, axis);
        }
        if (labels)
            d->text(d->context, anchor, joint_name(j->def.type), d->palette.label);
    }
}

/* ---- characters ------------------------------------------------------------------------------ */

static void draw_characters(const gy_world *w, const gy_debug_draw *d)
{
    bool labels = (d->flags & GY_DEBUG_DRAW_LABELS) != 0;
    for (uint32_t i = 0; i < w->bodies.count; i++) {
        const gy_w_body *c = gy_w_store_at(&w->bodies, i);
        if (!c->def->desc.is_character || !c->assigned || c->def->desc.collider_count == 0 ||
            c->def->desc.colliders[0].def.shape.type != GY_SHAPE_CAPSULE)
            continue;
        const gy_collider_def *cap = &c->def->desc.colliders[0].def;
        const gy_w_character_state *cs = gy_w_character_state_of(c);
        gy_pose pose = gy_pose_mul(gy_w_body_pose(w, c), cap->local_pose);
        gy_debug_color col = cs->ground_state == GY_GROUND_WALKABLE ? d->palette.grounded
                             : cs->ground_state == GY_GROUND_STEEP  ? d->palette.steep
                                                                    : d->palette.airborne;
        d->capsule(d->context, pose, cap->shape.radius, cap->shape.height, col, false);
        /* The ground normal from the capsule's lowest point. */
        gy_vec3 up = gy_quat_rotate(pose.rotation, gy_v3(0, 1, 0));
        gy_vec3 foot = gy_v3_mad(pose.position, up, -0.5 * cap->shape.height);
        if (cs->ground_state != GY_GROUND_AIRBORNE)
            d->segment(d->context, foot, gy_v3_mad(foot, cs->ground_normal, d->normal_length), col);
        if (labels)
            d->text(d->context, gy_v3_mad(pose.position, up, 0.5 * cap->shape.height),
                    cs->hit_ceiling ? "airborne, ceiling" : gy_ground_state_name(cs->ground_state),
                    d->palette.label);
    }
}

/* ---- the call -------------------------------------------------------------------------------- */

gy_result gy_world_debug_draw(gy_world *w, const gy_debug_draw *draw)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (draw == NULL)
        return refuse(w, GY_ERR_INVALID_ARGUMENT, "draw is NULL");
    gy_result r = check_draw(w, draw);
    if (r != GY_OK)
        return r;
    const uint32_t snapshot_flags =
        GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_BOUNDS | GY_DEBUG_DRAW_TREE;
    if ((draw->flags & snapshot_flags) != 0 && gy_w_running(w)) {
        /* The subsystem's wait-free reader: the newest complete publish, never a step's. */
        const gy_snapshot_view *v = gy_physics_acquire_query_view(w->physics);
        if (v != NULL) {
            if ((draw->flags & (GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_BOUNDS)) != 0)
                draw_entries(w, draw, v);
            if ((draw->flags & GY_DEBUG_DRAW_TREE) != 0)
                gy_snapshot_view_visit_nodes(v, draw_node, (void *)draw);
        }
    }
    if ((draw->flags & GY_DEBUG_DRAW_CONTACTS) != 0)
        draw_contacts(w, draw);
    if ((draw->flags & GY_DEBUG_DRAW_JOINTS) != 0)
        draw_joints(w, draw);
    if ((draw->flags & GY_DEBUG_DRAW_CHARACTERS) != 0)
        draw_characters(w, draw);
    return GY_OK;
}
