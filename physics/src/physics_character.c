/* Gyre's character controller under the subsystem: the characters of bodies created with a
 * `character` description live in the subsystem's own gy_character_group, registered and
 * unregistered on the physics thread by the commands that create and release their bodies (so the
 * game thread never touches the set while the thread runs), moved after every step, and given
 * all their pairs in the tick of the move.
 *
 * Why the pass: the adapter finds contacts during the step, before the controller moves the
 * capsule, so a character that walks into a trigger would be reported one tick late (and leave it
 * one tick late). And the controller keeps a skin of gap to solids, so the step never sees the
 * capsule touch the ground or a wall at all. So every pair of a character's capsule is decided
 * from overlaps where the move left it: sensors against the capsule itself, solids against the
 * capsule grown by its contact offset (two skins), so a character resting on the ground or against
 * a wall touches it every tick. The adapter's reports for those pairs are dropped and the
 * overlaps' take their place, in the adapter's orientation (a = the lower collider handle) and
 * under its pair rules (both masks, no jointed bodies, one-way platforms touched only from their
 * landing side and never while being passed through). Physics thread, inside the sim lock. */
#include <math.h>
#include <string.h>

#include "gyre/handle_pool.h"
#include "gyre/math.h"
#include "physics_roster.h"

/* Hits gathered per character overlap at first; grown (to the peak) when an overlap fills it. */
#define FIRST_HITS 16u

gy_result gy_phys_character_register(gy_phys_sim *p, gy_physics_body_ref ref,
                                     const gy_character_def *settings,
                                     const gy_collider_def *capsule, gy_collider_id capsule_id)
{
    gy_result r = gy_array_reserve(p->cfg->alloc, (void **)&p->chars, &p->char_capacity,
                                   p->char_count + 1u, sizeof *p->chars);
    if (r != GY_OK)
        return r;
    gy_body_id none = {0};
    r = gy_character_group_add(p->cfg->characters, ref, settings, none);
    if (r != GY_OK)
        return r;
    gy_phys_character *c = &p->chars[p->char_count++];
    memset(c, 0, sizeof *c);
    c->body = ref;
    c->collider = capsule_id;
    c->shape = capsule->shape;
    c->contact_offset = 2.0 * settings->skin_width;
    c->touch_shape = capsule->shape;
    c->touch_shape.radius += c->contact_offset;
    c->touch_shape.height += 2.0 * c->contact_offset;
    c->category = capsule->category;
    c->mask = capsule->mask;
    c->probe = !capsule->is_sensor;
    return GY_OK;
}

void gy_phys_character_unregister(gy_phys_sim *p, uint32_t store_index)
{
    for (uint32_t i = 0; i < p->char_count; i++) {
        if (p->chars[i].body.index != store_index)
            continue;
        gy_character_group_remove(p->cfg->characters, p->chars[i].body);
        p->chars[i] = p->chars[--p->char_count];
        return;
    }
}

void gy_phys_characters_reset(gy_phys_sim *p)
{
    gy_character_group_clear(p->cfg->characters);
    p->char_count = 0;
}

void gy_phys_characters_free(gy_phys_sim *p)
{
    const gy_allocator *a = p->cfg->alloc;
    if (p->chars != NULL)
        gy_free(a, p->chars, (size_t)p->char_capacity * sizeof *p->chars);
    if (p->char_contacts != NULL)
        gy_free(a, p->char_contacts, (size_t)p->char_contact_capacity * sizeof *p->char_contacts);
    if (p->char_hits != NULL)
        gy_free(a, p->char_hits, (size_t)p->char_hit_capacity * sizeof *p->char_hits);
    gy_free(a, p->piece_contacts, (size_t)p->piece_contact_capacity * sizeof *p->piece_contacts);
    p->piece_contacts = NULL;
    p->piece_contact_capacity = 0;
    p->chars = NULL;
    p->char_contacts = NULL;
    p->char_hits = NULL;
    p->char_count = p->char_capacity = p->char_contact_capacity = p->char_hit_capacity = 0;
}

/* ---- the set's lifetime, gravity and settings -------------------------------------------------
 */

gy_result gy_phys_characters_create(const gy_allocator *a, gy_vec3 gravity,
                                    gy_character_group **out)
{
    gy_character_group_def cd = gy_default_character_group_def();
    cd.allocator = a;
    cd.gravity = gravity;
    return gy_character_group_create(&cd, out);
}

void gy_phys_characters_destroy(gy_character_group *set)
{
    gy_character_group_destroy(set);
}

gy_result gy_phys_characters_set_gravity(gy_character_group *set, gy_vec3 gravity)
{
    return gy_character_group_set_gravity(set, gravity);
}

gy_result gy_phys_character_validate(const gy_character_def *settings)
{
    return gy_validate_character_def(settings);
}

/* ---- the hook's view of the subsystem ------------------------------------------------------- */

static gy_body_id hook_body(void *self, gy_physics_body_ref ref)
{
    gy_body_id none = {0};
    gy_phys_body *e = gy_phys_body_at(self, ref);
    return e != NULL ? e->id : none;
}

static void hook_touch(void *self, uint32_t index)
{
    gy_phys_touch(self, index);
}

static gy_result hook_reply(void *self, const gy_reply *r, gy_reply_class cls)
{
    gy_phys_sim *p = self;
    gy_reply copy = *r;
    copy.flags = (uint16_t)__atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED);
    return gy_reply_queue_push(p->cfg->replies, &copy, cls);
}

static const gy_physics_hook_ops hook_ops = {hook_body, hook_touch, hook_reply};

gy_body_id gy_physics_hook_body(const gy_physics_step_context *sc, gy_physics_body_ref ref)
{
    gy_body_id none = {0};
    if (sc == NULL || sc->ops == NULL)
        return none;
    return sc->ops->body(sc->self, ref);
}

void gy_physics_hook_touch(const gy_physics_step_context *sc, uint32_t index)
{
    if (sc != NULL && sc->ops != NULL)
        sc->ops->touch(sc->self, index);
}

gy_result gy_physics_hook_reply(const gy_physics_step_context *sc, const gy_reply *r,
                                gy_reply_class cls)
{
    if (sc == NULL || sc->ops == NULL || r == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return sc->ops->reply(sc->self, r, cls);
}

void gy_phys_move_characters(gy_phys_sim *p, bool with_inputs)
{
    gy_physics_step_context sc = {&hook_ops,
                                  p,
                                  p->cfg->backend,
                                  p->world,
                                  p->tick,
                                  p->cfg->step_dt,
                                  with_inputs ? p->inputs : NULL,
                                  with_inputs ? p->input_count : 0u};
    if (p->char_count > 0)
        gy_character_group_hook(p->cfg->characters, &sc);
    if (p->cfg->move_characters != NULL)
        p->cfg->move_characters(p->cfg->character_ctx, &sc);
}

/* ---- the sensor pass ------------------------------------------------------------------------- */

static const gy_phys_collider *live_collider(const gy_phys_sim *p, gy_collider_id id)
{
    uint32_t slot = gy_handle_slot(id.bits);
    return slot < p->collider_capacity && p->colliders[slot].live ? &p->colliders[slot] : NULL;
}

/* A pair of a registered character's capsule: the pass decides it. */
static bool pass_owns(const gy_phys_sim *p, const gy_contact *c)
{
    const gy_phys_collider *a = live_collider(p, c->collider_a);
    const gy_phys_collider *b = live_collider(p, c->collider_b);
    return a != NULL && b != NULL && (a->character || b->character);
}

static bool jointed(const gy_phys_sim *p, uint32_t s1, uint32_t s2)
{
    for (uint32_t k = 0; k < p->joint_count; k++) {
        const gy_phys_joint *j = &p->joints[k];
        if (j->live &&
            ((j->a_store == s1 && j->b_store == s2) || (j->a_store == s2 && j->b_store == s1)))
            return true;
    }
    return false;
}

static bool push_contact(gy_phys_sim *p, uint32_t *n, const gy_contact *c)
{
    if (*n == p->char_contact_capacity &&
        gy_array_reserve(p->cfg->alloc, (void **)&p->char_contacts, &p->char_contact_capacity,
                         *n + 1u, sizeof *p->char_contacts) != GY_OK)
        return false;
    p->char_contacts[(*n)++] = *c;
    return true;
}

/* Overlaps `shape` (one character's) where its body is now; every hit is kept (the array grows
 * until a query no longer fills it). */
static gy_result overlap_all(gy_phys_sim *p, const gy_shape *shape, gy_pose pose,
                             const gy_query_filter *f, uint32_t *count)
{
    for (;;) {
        if (p->char_hit_capacity == 0 &&
            gy_array_reserve(p->cfg->alloc, (void **)&p->char_hits, &p->char_hit_capacity,
                             FIRST_HITS, sizeof *p->char_hits) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        gy_result r = p->cfg->backend->overlap(p->world, shape, pose, f, GY_COLLECT_ALL,
                                               p->char_hits, p->char_hit_capacity, count);
        if (r != GY_OK || *count < p->char_hit_capacity)
            return r;
        r = gy_array_reserve(p->cfg->alloc, (void **)&p->char_hits, &p->char_hit_capacity,
                             p->char_hit_capacity * 2u, sizeof *p->char_hits);
        if (r != GY_OK)
            return r;
    }
}

/* Whether a solid hit by the grown capsule counts as touched, as the step would count a body's
 * contact: a one-way platform only from its landing side (gy_one_way_accepts, with the
 * character's velocity over the tick), and never one the character is passing through. */
static bool touches(gy_phys_sim *p, const gy_hit *h, gy_vec3 center, const gy_character_state *st,
                    const gy_character_result *last)
{
    gy_collider_policy pol;
    if (p->cfg->backend->collider_get_policy(p->world, h->collider, &pol) != GY_OK)
        return false;
    if (!pol.one_way)
        return true;
    for (uint32_t i = 0; i < st->passing_count && i < GY_CHARACTER_MAX_PASSING; i++)
        if (st->passing[i].bits == h->collider.bits)
            return false;
    gy_vec3 pv;
    if (p->cfg->backend->body_point_velocity(p->world, h->body, h->point, &pv) != GY_OK ||
        !gy_vec3_is_finite(pv))
        pv = gy_v3(0.0, 0.0, 0.0);
    return gy_one_way_accepts(h->normal, pol.one_way_normal, gy_v3_sub(last->velocity, pv), center,
                              h->point, INFINITY, pol.one_way_slop);
}

/* Appends the pairs of one character found by one overlap: sensors (`sensors`) or solids. */
static gy_result append_pairs(gy_phys_sim *p, const gy_phys_character *ch, gy_pose pose,
                              bool sensors, uint32_t *n)
{
    const gy_phys_body *e = &p->bodies[ch->body.index];
    gy_query_filter f = gy_default_query_filter();
    f.mask = ch->mask;
    f.include_sensors = sensors;
    f.ignore_body = e->id;
    uint32_t count = 0;
    gy_result r = overlap_all(p, sensors ? &ch->shape : &ch->touch_shape, pose, &f, &count);
    if (r != GY_OK)
        return r;
    gy_character_state st;
    gy_character_result last;
    memset(&st, 0, sizeof st);
    memset(&last, 0, sizeof last);
    if (!sensors)
        gy_character_group_get(p->cfg->characters, ch->body, &last, NULL, &st);
    uint64_t user = ((uint64_t)ch->body.index << 32) | ch->body.generation;
    for (uint32_t i = 0; i < count; i++) {
        const gy_hit *h = &p->char_hits[i];
        const gy_phys_collider *s = live_collider(p, h->collider);
        if (s == NULL || s->is_sensor != sensors || (ch->category & s->mask) == 0 ||
            h->collider.bits == ch->collider.bits)
            continue;
        if (p->joint_count > 0 && jointed(p, ch->body.index, (uint32_t)(h->user_data >> 32)))
            continue;
        if (!gy_vec3_is_finite(h->point) || !gy_vec3_is_finite(h->normal) ||
            !gy_is_finite(h->penetration))
            continue;
        if (!sensors && !touches(p, h, pose.position, &st, &last))
            continue;
        /* The hit's normal points out of the other collider, toward the capsule. */
        bool char_is_a = ch->collider.bits < h->collider.bits;
        gy_contact c;
        memset(&c, 0, sizeof c);
        c.body_a = char_is_a ? e->id : h->body;
        c.body_b = char_is_a ? h->body : e->id;
        c.collider_a = char_is_a ? ch->collider : h->collider;
        c.collider_b = char_is_a ? h->collider : ch->collider;
        c.user_a = char_is_a ? user : h->user_data;
        c.user_b = char_is_a ? h->user_data : user;
        c.point = h->point;
        c.normal = char_is_a ? gy_v3_neg(h->normal) : h->normal;
        /* A solid is touched up to the contact offset away: only deeper is overlap. */
        c.penetration = sensors ? h->penetration : fmax(0.0, h->penetration - ch->contact_offset);
        c.is_sensor = sensors;
        if (!push_contact(p, n, &c))
            return GY_ERR_OUT_OF_MEMORY;
    }
    return GY_OK;
}

/* Appends the pairs of one character: sensors against its capsule, solids against the capsule
 * grown by the contact offset. */
static gy_result character_pairs(gy_phys_sim *p, const gy_phys_character *ch, uint32_t *n)
{
    const gy_phys_body *e = &p->bodies[ch->body.index];
    const gy_phys_collider *own = live_collider(p, ch->collider);
    if (own == NULL)
        return GY_ERR_STALE_HANDLE;
    gy_body_state st;
    gy_result r = p->cfg->backend->body_get_state(p->world, e->id, &st);
    if (r != GY_OK)
        return r;
    gy_pose pose = gy_phys_collider_pose(p, own, st.pose);
    r = append_pairs(p, ch, pose, true, n);
    if (r == GY_OK)
        r = append_pairs(p, ch, pose, false, n);
    return r;
}

uint32_t gy_phys_character_contacts(gy_phys_sim *p, const gy_contact *contacts, uint32_t count,
                                    const gy_contact **out)
{
    *out = contacts;
    bool any = false;
    for (uint32_t k = 0; k < p->char_count && !any; k++)
        any = p->chars[k].probe;
    if (!any)
        return count;
    uint32_t n = 0;
    gy_result r = GY_OK;
    uint32_t who = GY_PHYS_NONE;
    for (uint32_t i = 0; r == GY_OK && i < count; i++)
        if (!pass_owns(p, &contacts[i]) && !push_contact(p, &n, &contacts[i]))
            r = GY_ERR_OUT_OF_MEMORY;
    for (uint32_t k = 0; r == GY_OK && k < p->char_count; k++) {
        if (p->chars[k].probe) {
            r = character_pairs(p, &p->chars[k], &n);
            who = p->chars[k].body.index;
        }
    }
    if (r != GY_OK) {
        /* The adapter's own list: the same pairs, in the same orientation, one tick behind. */
        gy_log(p->cfg->logger, GY_LOG_WARN,
               "physics: characters' contact pass failed at store index %d (%s); their events "
               "follow the step this tick",
               who == GY_PHYS_NONE ? -1 : (int)who, gy_result_message(r));
        return count;
    }
    *out = p->char_contacts;
    return n;
}

gy_result gy_physics_get_character_stats(const gy_physics *p, gy_character_group_stats *out)
{
    if (p == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (p->game.running)
        return GY_ERR_MISUSE;
    gy_character_group_get_stats(p->cfg.characters, out);
    return GY_OK;
}
