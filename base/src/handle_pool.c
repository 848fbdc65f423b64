#include "gyre/handle_pool.h"

#include <assert.h>

#define NO_SLOT UINT32_MAX
/* next_free of a live slot: never an index, since count stays below UINT32_MAX - 1. */
#define LIVE_SLOT (UINT32_MAX - 1u)

void gy_handle_pool_init(gy_handle_pool *pool, const gy_allocator *allocator)
{
    *pool = (gy_handle_pool){0};
    pool->allocator = gy_allocator_or_default(allocator);
    pool->free_head = NO_SLOT;
    pool->first_generation = 1;
}

void gy_handle_pool_fini(gy_handle_pool *pool)
{
    gy_free(pool->allocator, pool->slots, (size_t)pool->capacity * sizeof *pool->slots);
    pool->slots = NULL;
    pool->capacity = pool->count = pool->live = 0;
    pool->free_head = NO_SLOT;
}

gy_result gy_handle_pool_acquire(gy_handle_pool *pool, void *payload, uint64_t *out)
{
    uint32_t slot;
    if (pool->free_head != NO_SLOT) {
        slot = pool->free_head;
        pool->free_head = pool->slots[slot].next_free;
    } else {
        /* Slot indices are stored +1 in a handle, so the last index is reserved. */
        if (pool->count >= UINT32_MAX - 1u)
            return GY_ERR_CAPACITY;
        gy_result r = gy_array_reserve(pool->allocator, (void **)&pool->slots, &pool->capacity,
                                       pool->count + 1u, sizeof *pool->slots);
        if (r != GY_OK)
            return r;
        slot = pool->count++;
        pool->slots[slot] =
            (gy_handle_slot_){.generation = pool->first_generation ? pool->first_generation : 1u,
                              .next_free = NO_SLOT};
    }
    gy_handle_slot_ *s = &pool->slots[slot];
    assert(s->next_free != LIVE_SLOT && s->generation != 0);
    s->payload = payload;
    s->next_free = LIVE_SLOT;
    pool->live++;
    *out = gy_handle_make(slot, s->generation);
    return GY_OK;
}

static gy_handle_slot_ *live_slot(const gy_handle_pool *pool, uint64_t handle)
{
    if (handle == 0 || (uint32_t)(handle & 0xffffffffu) == 0)
        return NULL;
    uint32_t slot = gy_handle_slot(handle);
    if (slot >= pool->count)
        return NULL;
    gy_handle_slot_ *s = &pool->slots[slot];
    if (s->next_free != LIVE_SLOT || s->generation != gy_handle_generation(handle))
        return NULL;
    return s;
}

gy_result gy_handle_pool_release(gy_handle_pool *pool, uint64_t handle)
{
    gy_handle_slot_ *s = live_slot(pool, handle);
    if (s == NULL)
        return GY_ERR_STALE_HANDLE;
    uint32_t slot = gy_handle_slot(handle);
    s->payload = NULL;
    s->next_free = NO_SLOT;
    pool->live--;
    if (s->generation == UINT32_MAX) {
        /* Reusing the slot would wrap to a generation an old handle may still carry. */
        pool->retired++;
        return GY_OK;
    }
    s->generation++;
    s->next_free = pool->free_head;
    pool->free_head = slot;
    return GY_OK;
}

void *gy_handle_pool_get(const gy_handle_pool *pool, uint64_t handle)
{
    gy_handle_slot_ *s = live_slot(pool, handle);
    return s ? s->payload : NULL;
}

bool gy_handle_pool_is_valid(const gy_handle_pool *pool, uint64_t handle)
{
    return live_slot(pool, handle) != NULL;
}

void *gy_handle_pool_at(const gy_handle_pool *pool, uint32_t index, uint64_t *handle)
{
    if (index >= pool->count || pool->slots[index].next_free != LIVE_SLOT)
        return NULL;
    if (handle != NULL)
        *handle = gy_handle_make(index, pool->slots[index].generation);
    return pool->slots[index].payload;
}
