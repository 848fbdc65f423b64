/* A growable array of uint32 for the physics thread's lists (awake, lanes, touched, dirty ring):
 * grown to its peak, then reused, so the steady state never allocates. */
#ifndef GY_PHYSICS_LIST_H
#define GY_PHYSICS_LIST_H

#include "gyre/core.h"

typedef struct gy_phys_list {
    uint32_t *items;
    uint32_t count, capacity;
} gy_phys_list;

/* Grows a list to hold `need` items. */
gy_result gy_phys_list_reserve(const gy_allocator *a, gy_phys_list *l, uint32_t need);
/* Appends v; grows the list only when full (which the steady state never is). */
static inline gy_result gy_phys_list_push(const gy_allocator *a, gy_phys_list *l, uint32_t v)
{
    if (l->count == l->capacity) {
        gy_result r = gy_phys_list_reserve(a, l, l->count + 1u);
        if (r != GY_OK)
            return r;
    }
    l->items[l->count++] = v;
    return GY_OK;
}
void gy_phys_list_free(const gy_allocator *a, gy_phys_list *l);

#endif /* GY_PHYSICS_LIST_H */
