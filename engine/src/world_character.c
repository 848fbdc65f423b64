/* Characters: the World runs Gyre's character controller (gyre/physics/character.h) for components
 * with is_character, unless the host installed its own hook.
 *
 * The controller's character set belongs to the physics subsystem and its thread: a character's
 * settings travel with its body's create command (gy_physics_body_def.character), and the
 * physics thread registers the character when the create succeeds and unregisters it when the body
 * is released or physics stops. The World only builds the settings and takes in the replies. */
#include "gyre/physics/character.h"
#include "world_internal.h"

gy_result gy_w_character_def(const gy_physics_component_def *d, gy_character_def *out)
{
    gy_character_def s = gy_default_character_def();
    const gy_shape *shape = &d->colliders[0].def.shape;
    if (d->collider_count != 1 || shape->type != GY_SHAPE_CAPSULE)
        return GY_ERR_INVALID_ARGUMENT; /* a character is exactly its capsule */
    s.radius = shape->radius;
    s.height = shape->height;
    s.max_slope_deg = d->max_slope * 180.0 / GY_PI;
    s.step_offset = d->step_offset;
    gy_result r = gy_validate_character_def(&s);
    if (r == GY_OK)
        *out = s;
    return r;
}

const gy_character_def *gy_w_character_of(const gy_world *w, const gy_w_body *c,
                                          gy_character_def *out)
{
    /* Validated when the component was added or changed, so the settings always build. */
    if (!w->run_characters || !c->def->desc.is_character ||
        gy_w_character_def(&c->def->desc, out) != GY_OK)
        return NULL;
    return out;
}

void gy_w_character_reply(gy_world *w, const gy_reply *r)
{
    const gy_character_reply *cr = gy_reply_as_character(r);
    gy_w_body *c = gy_w_body_by_ref(w, (gy_physics_body_ref){r->key, cr->generation});
    if (c == NULL) {
        w->stats.replies_stale++;
        return;
    }
    gy_w_velocity *v = gy_w_velocity_of(w, c);
    if (v != NULL) /* a character is Kinematic, so a mover */
        v->lin = gy_v3(cr->velocity[0], cr->velocity[1], cr->velocity[2]);
    gy_w_character_state *cs = gy_w_character_state_of(c);
    if (cs == NULL)
        return; /* no longer a character: the reply is about what it was */
    cs->grounded = (cr->flags & GY_CHARACTER_GROUNDED) != 0;
    cs->hit_ceiling = (cr->flags & GY_CHARACTER_CEILING) != 0;
    cs->ground_state = cs->grounded                            ? GY_GROUND_WALKABLE
                       : (cr->flags & GY_CHARACTER_STEEP) != 0 ? GY_GROUND_STEEP
                                                               : GY_GROUND_AIRBORNE;
    cs->ground_normal = gy_v3(cr->ground_normal[0], cr->ground_normal[1], cr->ground_normal[2]);
    cs->platform_velocity =
        gy_v3(cr->platform_velocity[0], cr->platform_velocity[1], cr->platform_velocity[2]);
    cs->ground.bits = 0;
    if (cr->flags & GY_CHARACTER_ON_BODY) {
        const gy_w_body *g = gy_w_body_by_ref(w, cr->ground);
        if (g != NULL)
            cs->ground = gy_w_entity_handle(w, gy_w_body_slot(w, g));
    }
}
