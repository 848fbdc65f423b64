/* Table growth and burst-list trimming for the physics layer (table_growth.h). */
#include "table_growth.h"

#include <string.h>

uint64_t gy_phys_table_capacity(uint32_t capacity, uint32_t first, uint64_t need)
{
    uint64_t grown = capacity < first ? first : capacity;
    while (grown < need)
        grown += grown / 4u;
    return grown > UINT32_MAX ? UINT64_MAX : grown;
}

gy_result gy_phys_table_reserve(const gy_allocator *a, void **table, uint32_t *capacity,
                                uint32_t need, size_t elem)
{
    if (need <= *capacity)
        return GY_OK;
    uint64_t grown = gy_phys_table_capacity(*capacity, 64u, need);
    uint32_t cap = grown > UINT32_MAX ? need : (uint32_t)grown;
    void *t = gy_realloc(a, *table, (size_t)*capacity * elem, (size_t)cap * elem);
    if (t == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memset((unsigned char *)t + (size_t)*capacity * elem, 0, (size_t)(cap - *capacity) * elem);
    *table = t;
    *capacity = cap;
    return GY_OK;
}

void gy_phys_burst_note(const gy_allocator *a, gy_u32_array *l, gy_phys_burst *b, uint32_t used,
                        uint32_t quiet_notes)
{
    if (l->capacity <= GY_PHYS_BURST_MIN_CAP || used > l->capacity / 4u) {
        b->quiet = 0;
        b->peak = 0;
        return;
    }
    b->peak = used > b->peak ? used : b->peak;
    if (++b->quiet < quiet_notes)
        return;
    uint32_t cap = b->peak * 2u > GY_PHYS_BURST_MIN_CAP ? b->peak * 2u : GY_PHYS_BURST_MIN_CAP;
    b->quiet = 0;
    b->peak = 0;
    if (cap < l->count || cap >= l->capacity)
        return;
    uint32_t *items =
        gy_realloc(a, l->items, (size_t)l->capacity * sizeof *items, (size_t)cap * sizeof *items);
    if (items == NULL)
        return;
    l->items = items;
    l->capacity = cap;
}
