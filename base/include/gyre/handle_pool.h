/* Generational handle pool: the one handle scheme Gyre uses across module boundaries.
 *
 * A handle is 64 bits: the low 32 bits are a slot index + 1 (so the all-zero handle is null), the
 * high 32 bits the slot's generation (never 0 for a live slot). Releasing a slot bumps its
 * generation, so an old handle to it is rejected rather than aliased to the slot's next owner. A
 * slot whose generation would wrap is retired for good instead of being reused.
 *
 * Each slot carries one pointer-sized payload. Free slots are recycled LIFO, so a pool that has
 * reached its peak size never allocates again.
 *
 * Threading: none. A pool belongs to one thread at a time (its owner's). */
#ifndef GYRE_HANDLE_POOL_H
#define GYRE_HANDLE_POOL_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds a handle from a zero-based slot index and a generation. */
static inline uint64_t gy_handle_make(uint32_t slot, uint32_t generation)
{
    return ((uint64_t)generation << 32) | (uint64_t)(slot + 1u);
}
/* Zero-based slot index of a non-null handle. */
static inline uint32_t gy_handle_slot(uint64_t h)
{
    return (uint32_t)(h & 0xffffffffu) - 1u;
}
static inline uint32_t gy_handle_generation(uint64_t h)
{
    return (uint32_t)(h >> 32);
}

typedef struct gy_handle_slot_ {
    void *payload;
    uint32_t generation; /* current generation; a live handle must match it */
    /* Free: index of the next free slot, or UINT32_MAX. Live: UINT32_MAX - 1 (no slot has that
     * index), which keeps a slot at 16 bytes: a pool holds one per body and per collider. */
    uint32_t next_free;
} gy_handle_slot_;

/* Pool state; zero-initialise, then call gy_handle_pool_init. */
typedef struct gy_handle_pool {
    const gy_allocator *allocator;
    gy_handle_slot_ *slots;
    uint32_t capacity;
    uint32_t count;     /* slots ever used (high-water) */
    uint32_t live;      /* live handles */
    uint32_t free_head; /* UINT32_MAX when empty */
    uint32_t retired;   /* slots retired because their generation was exhausted */
    uint32_t first_generation; /* generation given to a slot's first owner (tests may raise it) */
} gy_handle_pool;

/* Prepares an empty pool. `allocator` NULL means the default allocator. */
void gy_handle_pool_init(gy_handle_pool *pool, const gy_allocator *allocator);

/* Frees the pool's storage (not the payloads). */
void gy_handle_pool_fini(gy_handle_pool *pool);

/* Takes a slot for `payload`. Returns the new handle in *out, or GY_ERR_OUT_OF_MEMORY. */
gy_result gy_handle_pool_acquire(gy_handle_pool *pool, void *payload, uint64_t *out);

/* Frees the slot of a live handle. Returns GY_ERR_STALE_HANDLE for null, stale or unknown ones. */
gy_result gy_handle_pool_release(gy_handle_pool *pool, uint64_t handle);

/* The payload of a live handle, or NULL when the handle is null, stale or unknown. Never asserts. */
void *gy_handle_pool_get(const gy_handle_pool *pool, uint64_t handle);

/* True when the handle names a live slot. */
bool gy_handle_pool_is_valid(const gy_handle_pool *pool, uint64_t handle);

/* Iteration over live slots: returns the payload of slot `index` (zero-based, < pool->count) or
 * NULL when that slot is free; *handle receives its live handle. */
void *gy_handle_pool_at(const gy_handle_pool *pool, uint32_t index, uint64_t *handle);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_HANDLE_POOL_H */
