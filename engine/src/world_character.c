/* Characters: the World runs Gyre's character controller (gyre/character.h) for components with
 * is_character, unless the host installed its own hook.
 *
 * The controller's character set belongs to the physics thread. The game thread never touches it
 * while that thread runs: it queues registrations (add when a character's body is recorded,
 * remove when it is released) under a small mutex, and the World's hook — on the physics thread,
 * after each step — applies them before handing the step to the controller. Registration may run
 * a tick ahead of the body's create batch; the controller skips characters whose body does not
 * exist yet. While the thread is stopped (before start, after stop) the game thread owns the set
 * and changes it directly. */
#include <string.h>

#include "gyre/character.h"
#include "world_internal.h"

typedef struct char_op {
    bool add;
    uint32_t store_index;
    uint32_t attachment;
    gy_character_settings settings;
} char_op;

struct gy_w_chars {
    gy_character_set *set;
    gy_character_set_def def;
    const gy_allocator *alloc;
    const gy_logger *logger;
    pthread_mutex_t mutex;
    char_op *ops; /* under mutex */
    uint32_t op_count, op_capacity;
};

static void apply_op(gy_w_chars *ch, const char_op *op)
{
    gy_result r = op->add ? gy_character_set_add(ch->set, op->store_index, op->attachment,
                                                 &op->settings, (gy_body_id){0})
                          : gy_character_set_remove(ch->set, op->store_index, op->attachment);
    if (r != GY_OK)
        gy_log(ch->logger, GY_LOG_WARN, "world: character %s at store index %u: %s",
               op->add ? "registration" : "removal", op->store_index, gy_result_message(r));
}

/* The gy_physics_character_fn the World installs (physics thread). */
static void character_hook(void *ctx, const gy_physics_step_context *sc)
{
    gy_w_chars *ch = ctx;
    pthread_mutex_lock(&ch->mutex);
    for (uint32_t i = 0; i < ch->op_count; i++)
        apply_op(ch, &ch->ops[i]);
    ch->op_count = 0;
    pthread_mutex_unlock(&ch->mutex);
    gy_character_set_hook(ch->set, sc);
}

gy_result gy_w_chars_create(const gy_allocator *a, const gy_logger *logger, gy_vec3 gravity,
                            gy_w_chars **out, gy_physics_character_fn *hook)
{
    gy_w_chars *ch = gy_alloc_zeroed(a, sizeof *ch);
    if (ch == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    ch->alloc = a;
    ch->logger = logger;
    ch->def = gy_default_character_set_def();
    ch->def.allocator = a;
    ch->def.gravity = gravity;
    gy_result r = gy_character_set_create(&ch->def, &ch->set);
    if (r == GY_OK && pthread_mutex_init(&ch->mutex, NULL) != 0) {
        gy_character_set_destroy(ch->set);
        r = GY_ERR_OUT_OF_MEMORY;
    }
    if (r != GY_OK) {
        gy_free(a, ch, sizeof *ch);
        return r;
    }
    *out = ch;
    *hook = character_hook;
    return GY_OK;
}

void gy_w_chars_destroy(gy_w_chars *ch)
{
    if (ch == NULL)
        return;
    gy_character_set_destroy(ch->set);
    pthread_mutex_destroy(&ch->mutex);
    if (ch->ops != NULL)
        gy_free(ch->alloc, ch->ops, (size_t)ch->op_capacity * sizeof *ch->ops);
    gy_free(ch->alloc, ch, sizeof *ch);
}

gy_result gy_w_character_settings(const gy_physics_desc *d, gy_character_settings *out)
{
    gy_character_settings s = gy_default_character_settings();
    const gy_shape *shape = &d->colliders[0].def.shape;
    if (d->collider_count != 1 || shape->type != GY_SHAPE_CAPSULE)
        return GY_ERR_INVALID_ARGUMENT; /* a character is exactly its capsule */
    s.radius = shape->radius;
    s.height = shape->height;
    s.max_slope_deg = d->max_slope * 180.0 / GY_PI;
    s.step_offset = d->step_offset;
    gy_result r = gy_character_settings_validate(&s);
    if (r == GY_OK)
        *out = s;
    return r;
}

/* Queues (thread running) or applies (stopped) one registration change. */
static void change(gy_world *w, bool add, const gy_w_body *c)
{
    gy_w_chars *ch = w->chars;
    char_op op;
    memset(&op, 0, sizeof op);
    op.add = add;
    op.store_index = c->store_index;
    op.attachment = c->attachment;
    if (add && gy_w_character_settings(&c->desc, &op.settings) != GY_OK)
        return; /* validated at add; cannot happen */
    if (!gy_w_running(w)) {
        apply_op(ch, &op);
        return;
    }
    pthread_mutex_lock(&ch->mutex);
    gy_result r = GY_OK;
    if (ch->op_count == ch->op_capacity)
        r = gy_array_reserve(ch->alloc, (void **)&ch->ops, &ch->op_capacity, ch->op_count + 1u,
                             sizeof *ch->ops);
    if (r == GY_OK)
        ch->ops[ch->op_count++] = op;
    pthread_mutex_unlock(&ch->mutex);
    if (r != GY_OK)
        gy_log(w->logger, GY_LOG_ERROR, "world: out of memory: character %s lost",
               add ? "registration" : "removal");
}

void gy_w_character_recorded(gy_world *w, const gy_w_body *c)
{
    if (w->chars != NULL && c->desc.is_character)
        change(w, true, c);
}

void gy_w_character_released(gy_world *w, const gy_w_body *c)
{
    if (w->chars != NULL && c->desc.is_character)
        change(w, false, c);
}

gy_result gy_w_chars_reset(gy_world *w)
{
    gy_w_chars *ch = w->chars;
    if (ch == NULL)
        return GY_OK;
    /* The thread is joined: the set is the game's again, and starts empty for the next run. */
    gy_character_set *fresh;
    gy_result r = gy_character_set_create(&ch->def, &fresh);
    if (r != GY_OK)
        return r;
    gy_character_set_destroy(ch->set);
    ch->set = fresh;
    ch->op_count = 0;
    return GY_OK;
}

void gy_w_character_reply(gy_world *w, const gy_reply *r)
{
    const gy_character_reply *cr = gy_character_reply_view(r);
    gy_w_body *c = gy_w_body_by_attachment(w, r->key, cr->attachment);
    if (c == NULL) {
        w->stats.replies_stale++;
        return;
    }
    c->grounded = (cr->flags & GY_CHARACTER_GROUNDED) != 0;
    c->hit_ceiling = (cr->flags & GY_CHARACTER_CEILING) != 0;
    c->ground_normal = gy_v3(cr->ground_normal[0], cr->ground_normal[1], cr->ground_normal[2]);
    c->platform_velocity =
        gy_v3(cr->platform_velocity[0], cr->platform_velocity[1], cr->platform_velocity[2]);
    c->lin = gy_v3(cr->velocity[0], cr->velocity[1], cr->velocity[2]);
    c->ground.bits = 0;
    if (cr->flags & GY_CHARACTER_ON_BODY) {
        const gy_w_body *g = gy_w_body_by_attachment(w, cr->ground_store, cr->ground_attachment);
        if (g != NULL)
            c->ground = gy_w_entity_handle(w, g->entity);
    }
    c->character_tick = cr->tick;
}
