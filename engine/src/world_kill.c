/* The kill plane: at the end of a tick, every entity whose Dynamic body or character has its
 * centre of mass below kill_y is destroyed as gy_entity_destroy would (the EXITs of its pairs are
 * delivered), then its body callback gets GY_BODY_EVENT_KILLED. A body created below the plane
 * goes at the end of the tick it was created in.
 *
 * The centre of mass is the body's pose applied to its centre in the body frame: the
 * description's mass_properties when given, else the colliders' centres weighted by density ×
 * volume (sensors only when every collider is one), as the adapters place it. A hull collider
 * counts at the mean of its points with the volume of their bounding box, an estimate that is
 * exact for boxes and close for the convex shapes a compound mixes; a single-collider body's
 * centre is its collider's centre whatever the shape's volume. */
#include <math.h>

#include "gyre/math.h"
#include "world_internal.h"

/* The collider's centre in its own frame and its volume (m³; 0 for shapes without one). */
static double collider_volume(const gy_world *w, const gy_scene_collider *col, gy_vec3 *centre)
{
    const gy_shape *s = &col->def.shape;
    *centre = gy_v3(0, 0, 0);
    double r = s->radius;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        return 4.0 / 3.0 * GY_PI * r * r * r;
    case GY_SHAPE_BOX:
        return s->box_size.x * s->box_size.y * s->box_size.z;
    case GY_SHAPE_CAPSULE:
        return GY_PI * r * r * (s->height - 2.0 * r) + 4.0 / 3.0 * GY_PI * r * r * r;
    case GY_SHAPE_CYLINDER:
        return GY_PI * r * r * s->height;
    case GY_SHAPE_HULL: {
        const gy_w_geometry *g = gy_w_geometry_get(w, s->resource.bits);
        if (g == NULL || g->vertex_count == 0)
            return 0.0;
        gy_vec3 lo = g->vertices[0], hi = g->vertices[0], sum = gy_v3(0, 0, 0);
        for (uint32_t i = 0; i < g->vertex_count; i++) {
            lo = gy_v3_min(lo, g->vertices[i]);
            hi = gy_v3_max(hi, g->vertices[i]);
            sum = gy_v3_add(sum, g->vertices[i]);
        }
        *centre = gy_v3_scale(sum, 1.0 / (double)g->vertex_count);
        gy_vec3 e = gy_v3_sub(hi, lo);
        return e.x * e.y * e.z;
    }
    default:
        return 0.0;
    }
}

/* The centre of mass in the body frame. */
static gy_vec3 body_centre(const gy_world *w, const gy_w_body *c)
{
    const gy_physics_component_def *d = &c->def->desc;
    if (d->body.has_mass_properties)
        return d->body.mass_properties.center_of_mass;
    bool all_sensors = true;
    for (uint32_t i = 0; i < d->collider_count; i++)
        all_sensors &= d->colliders[i].def.is_sensor;
    gy_vec3 sum = gy_v3(0, 0, 0), first = gy_v3(0, 0, 0);
    double weight = 0.0;
    bool have_first = false;
    for (uint32_t i = 0; i < d->collider_count; i++) {
        const gy_scene_collider *col = &d->colliders[i];
        if (col->def.is_sensor && !all_sensors)
            continue;
        gy_vec3 local;
        double m = collider_volume(w, col, &local) * col->def.density;
        gy_vec3 at = gy_pose_apply(col->def.local_pose, local);
        if (!have_first) {
            first = at;
            have_first = true;
        }
        sum = gy_v3_add(sum, gy_v3_scale(at, m));
        weight += m;
    }
    return weight > 0.0 ? gy_v3_scale(sum, 1.0 / weight) : first;
}

void gy_w_kill_below(gy_world *w)
{
    if (!w->kill_plane)
        return;
    w->doomed.count = 0;
    for (uint32_t d = 0; d < w->bodies.count; d++) {
        const gy_w_body *c = gy_w_store_at(&w->bodies, d);
        if (!c->recorded || c->failed ||
            (c->motion != GY_MOTION_DYNAMIC && !c->def->desc.is_character))
            continue;
        gy_pose pose = gy_w_body_pose(w, c);
        if (gy_pose_apply(pose, body_centre(w, c)).y >= w->kill_y)
            continue;
        if (gy_u32_array_push(w->alloc, &w->doomed, gy_w_body_slot(w, c)) != GY_OK) {
            /* Out of memory: the rest go at a later tick. */
            gy_log(w->logger, GY_LOG_WARN, "world: kill plane: list could not grow");
            break;
        }
    }
    for (uint32_t i = 0; i < w->doomed.count; i++) {
        uint32_t slot = w->doomed.items[i];
        /* A killed parent takes its children with it: one already gone is skipped. */
        if (!w->ents[slot].live || gy_w_body_of(w, slot) == NULL)
            continue;
        gy_entity e = gy_w_entity_handle(w, slot);
        const gy_w_entity_cold *cold = gy_w_cold_of(w, slot);
        gy_body_event_fn fn = cold != NULL ? cold->on_body_event : NULL;
        void *ctx = cold != NULL ? cold->body_event_ctx : NULL;
        const gy_w_body *c = gy_w_body_of(w, slot);
        uint64_t state_tick = gy_w_body_state_tick(w, c);
        gy_body_event ev = {GY_BODY_EVENT_KILLED, e, state_tick != 0 ? state_tick : w->frame_tick};
        bool nested = w->dispatching;
        w->dispatching = true;
        gy_entity_destroy(w, e);
        gy_w_flush_pending(w);
        if (fn != NULL)
            fn(ctx, w, &ev);
        w->dispatching = nested;
    }
    w->doomed.count = 0;
}

gy_result gy_world_set_kill_plane(gy_world *w, bool enabled, double y)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (enabled && !gy_is_finite(y))
        return GY_ERR_NON_FINITE;
    if (enabled && fabs(y) > GY_MAX_MAGNITUDE)
        return GY_ERR_INVALID_ARGUMENT;
    w->kill_plane = enabled;
    w->kill_y = enabled ? y : 0.0;
    return GY_OK;
}
