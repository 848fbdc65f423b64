/* The allocator meter: counts the bytes live through an allocator and their peak. Both threads
 * allocate through the World's allocator (the game thread its tables and command payloads, the
 * physics thread its roster, queues and adapter growth), so the counts are relaxed atomics. */
#include <string.h>

#include "gyre/physics/commands.h"

static void meter_add(gy_allocator_meter *m, uint64_t n)
{
    uint64_t live = __atomic_add_fetch(&m->live_bytes, n, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&m->peak_bytes, __ATOMIC_RELAXED);
    while (live > peak && !__atomic_compare_exchange_n(&m->peak_bytes, &peak, live, true,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void meter_sub(gy_allocator_meter *m, uint64_t n)
{
    __atomic_sub_fetch(&m->live_bytes, n, __ATOMIC_RELAXED);
}

static void *meter_alloc(void *ctx, size_t size)
{
    gy_allocator_meter *m = ctx;
    void *ptr = m->inner->alloc(m->inner->ctx, size);
    if (ptr != NULL)
        meter_add(m, size);
    return ptr;
}

static void *meter_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    gy_allocator_meter *m = ctx;
    void *moved = m->inner->realloc(m->inner->ctx, ptr, old_size, new_size);
    if (moved == NULL)
        return NULL; /* the old block stands, still counted */
    if (new_size > old_size)
        meter_add(m, new_size - old_size);
    else
        meter_sub(m, old_size - new_size);
    return moved;
}

static void meter_free(void *ctx, void *ptr, size_t size)
{
    gy_allocator_meter *m = ctx;
    if (ptr == NULL)
        return;
    m->inner->free(m->inner->ctx, ptr, size);
    meter_sub(m, size);
}

void gy_allocator_meter_init(gy_allocator_meter *m, const gy_allocator *inner)
{
    if (m == NULL)
        return;
    memset(m, 0, sizeof *m);
    m->inner = gy_allocator_or_default(inner);
    m->allocator.alloc = meter_alloc;
    m->allocator.realloc = meter_realloc;
    m->allocator.free = meter_free;
    m->allocator.ctx = m;
}

void gy_allocator_meter_read(const gy_allocator_meter *m, uint64_t *live, uint64_t *peak)
{
    uint64_t l = 0, p = 0;
    if (m != NULL) {
        l = __atomic_load_n(&m->live_bytes, __ATOMIC_RELAXED);
        p = __atomic_load_n(&m->peak_bytes, __ATOMIC_RELAXED);
    }
    if (live != NULL)
        *live = l;
    if (peak != NULL)
        *peak = p < l ? l : p;
}

const gy_allocator *gy_allocator_meter_inner(const gy_allocator *a)
{
    return a != NULL && a->alloc == meter_alloc ? ((const gy_allocator_meter *)a->ctx)->inner
                                                : NULL;
}
