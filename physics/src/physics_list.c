/* The physics thread's growable uint32 lists (physics_list.h). */
#include "physics_list.h"

gy_result gy_phys_list_reserve(const gy_allocator *a, gy_phys_list *l, uint32_t need)
{
    if (need <= l->capacity)
        return GY_OK;
    return gy_array_reserve(a, (void **)&l->items, &l->capacity, need, sizeof(uint32_t));
}

void gy_phys_list_free(const gy_allocator *a, gy_phys_list *l)
{
    if (l->items != NULL)
        gy_free(a, l->items, (size_t)l->capacity * sizeof(uint32_t));
    l->items = NULL;
    l->count = l->capacity = 0;
}
