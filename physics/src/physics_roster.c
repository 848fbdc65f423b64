/* The roster's shared bookkeeping (physics_roster.h). */
#include <string.h>

#include "physics_roster.h"

gy_phys_body *gy_phys_body_at(gy_phys_sim *p, gy_physics_body_ref ref)
{
    if (ref.index >= p->body_count)
        return NULL;
    gy_phys_body *e = &p->bodies[ref.index];
    /* An empty slot holds generation 0, which no ref but the null one carries. */
    return e->id.bits != 0 && e->generation == ref.generation ? e : NULL;
}

void gy_phys_touch(gy_phys_sim *p, uint32_t store_index)
{
    if (store_index >= p->body_count)
        return;
    gy_phys_body *e = &p->bodies[store_index];
    if (e->id.bits == 0 || e->touch_mark == gy_phys_seq_mark(p->pub_seq))
        return;
    if (gy_u32_array_push(p->cfg->alloc, &p->touched, store_index) == GY_OK)
        e->touch_mark = gy_phys_seq_mark(p->pub_seq);
}

gy_result gy_phys_reply(gy_phys_sim *p, uint16_t type, uint32_t key, const void *body, size_t size,
                        gy_reply_class cls)
{
    gy_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.flags = (uint16_t)__atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED);
    r.key = key;
    memcpy(r.body.bytes, body, size);
    return gy_reply_queue_push(p->cfg->replies, &r, cls);
}

void gy_phys_unlist(gy_phys_sim *p, uint32_t store_index)
{
    gy_phys_body *e = &p->bodies[store_index];
    if (e->list == GY_PHYS_LIST_NONE)
        return;
    gy_u32_array *l =
        e->list == GY_PHYS_LIST_AWAKE ? &p->awake : &p->lanes[store_index % GY_PHYS_LANES];
    uint32_t pos = e->list_pos;
    uint32_t last = l->items[--l->count];
    l->items[pos] = last;
    p->bodies[last].list_pos = pos;
    e->list = GY_PHYS_LIST_NONE;
    if (l == &p->awake)
        gy_phys_set32(&p->sh->counters.awake, p->awake.count);
}

void gy_phys_invalidate_buffers(gy_phys_sim *p)
{
    memset(p->written_seq, 0, sizeof p->written_seq);
}
