/* The roster's bookkeeping that the physics thread's parts share (applying commands, creating
 * and releasing, the read-back, moves, characters): find a body, queue it for read-back, mark its
 * proxy changed, take it off its list, push a reply. Physics thread, inside the sim lock. */
#ifndef GY_PHYSICS_ROSTER_H
#define GY_PHYSICS_ROSTER_H

#include "gyre/math.h"
#include "physics_state.h"

/* The live body `ref` names (its index holding its generation), or NULL: the check every command
 * naming a body passes on this thread. */
gy_phys_body *gy_phys_body_at(gy_phys_sim *p, gy_physics_body_ref ref);

/* Queues a body for read-back at the coming publish (idempotent per publish). */
void gy_phys_touch(gy_phys_sim *p, uint32_t store_index);

/* Pushes a reply stamped with the current generation. */
gy_result gy_phys_reply(gy_phys_sim *p, uint16_t type, uint32_t key, const void *body, size_t size,
                        gy_reply_class cls);

/* Forces the next write of every buffer to be a full rewrite (new world). */
void gy_phys_invalidate_buffers(gy_phys_sim *p);

/* Fewest entries a dirty list grows past before it stops growing (16 KB). */
#define GY_PHYS_DIRTY_MIN_CAP 4096u

/* A dirty list at its capacity of `count` stops growing once it lists half the body indices: the
 * buffers then catch up by a whole copy of their pages, which costs no more than copying that many
 * proxies one by one, and the lists do not keep a word per body for the life of the world after
 * one publish changed every body (a level's statics being created). */
static inline bool gy_phys_dirty_list_full(const gy_phys_sim *p, uint32_t count)
{
    return count >= GY_PHYS_DIRTY_MIN_CAP && count >= p->body_count / 2u;
}

/* Marks a slot's proxy changed at the coming publish (inline: the read-back calls it for every
 * body that moved). */
static inline void gy_phys_mark_changed(gy_phys_sim *p, uint32_t store_index)
{
    gy_phys_body *e = &p->bodies[store_index];
    if (e->change_seq == gy_phys_seq_mark(p->pub_seq))
        return;
    e->change_seq = gy_phys_seq_mark(p->pub_seq);
    p->page_marks[store_index >> GY_PROXY_PAGE_SHIFT] = e->change_seq;
    gy_u32_array *l = &p->dirty[p->pub_seq % GY_PHYS_DIRTY_RING];
    if (l->count == l->capacity && gy_phys_dirty_list_full(p, l->count)) {
        gy_phys_invalidate_buffers(p);
        return;
    }
    if (gy_u32_array_push(p->cfg->alloc, l, store_index) != GY_OK) {
        /* The dirty list could not grow: every buffer must be rewritten in full to stay exact. */
        gy_phys_invalidate_buffers(p);
    }
}

/* A collider's world pose when its body is at `body` (a product of unit quaternions is unit to
 * rounding: no renormalisation). */
static inline gy_pose gy_phys_collider_pose(const gy_phys_sim *p, const gy_phys_collider *c,
                                            gy_pose body)
{
    return c->local == GY_PHYS_NONE ? body : gy_pose_mul(body, p->locals[c->local]);
}

/* Removes a body from the awake / lane lists. */
void gy_phys_unlist(gy_phys_sim *p, uint32_t store_index);

#endif /* GY_PHYSICS_ROSTER_H */
