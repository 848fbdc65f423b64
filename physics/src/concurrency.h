/* Private helpers shared by the concurrency core: Concurrency Kit made visible to
 * ThreadSanitizer, a cache-line-aligned allocation, and a single-producer single-consumer ring
 * whose producer commits many slots at once.
 *
 * The only files that include this (and so ck_ring/ck_pr) are the concurrency-core sources. */
#ifndef GY_PHYSICS_CONCURRENCY_H
#define GY_PHYSICS_CONCURRENCY_H

#include "gyre/core.h"

#include <string.h>

#ifdef CK_RING_H
#error "concurrency.h must be included before ck_ring.h"
#endif

/* With CK_USE_CC_BUILTINS, ck_pr's loads and stores are volatile accesses with compiler barriers
 * and its fences are __sync_synchronize: correct on x86, but ThreadSanitizer sees neither, so a
 * ck_ring handoff looks like a data race (checked: three reports on a bare SPSC ck_ring loop).
 * ck_ring only uses ck_pr_load_uint/ck_pr_store_uint on its indices (plus fences, which become
 * redundant), so we route those two through acquire/release atomics that TSan models. On x86 they
 * compile to the same plain moves. */
#include <ck_pr.h>
#undef ck_pr_load_uint
#undef ck_pr_store_uint
#define ck_pr_load_uint(src)       __atomic_load_n((src), __ATOMIC_ACQUIRE)
#define ck_pr_store_uint(dst, val) __atomic_store_n((dst), (val), __ATOMIC_RELEASE)
#include <ck_ring.h>

#define GY_CACHE_LINE 64

/* A pause hint for spin loops. */
static inline void gy_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Single-writer counters read from other threads: a relaxed load + store (no locked add). */
static inline void gy_stat_add(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline void gy_stat_max32(uint32_t *counter, uint32_t v)
{
    if (v > __atomic_load_n(counter, __ATOMIC_RELAXED))
        __atomic_store_n(counter, v, __ATOMIC_RELAXED);
}

static inline void gy_stat_max64(uint64_t *counter, uint64_t v)
{
    if (v > __atomic_load_n(counter, __ATOMIC_RELAXED))
        __atomic_store_n(counter, v, __ATOMIC_RELAXED);
}

static inline uint64_t gy_stat_get(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static inline uint32_t gy_stat_get32(const uint32_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* Zeroed memory aligned to a cache line (gy_allocator only promises 16 bytes). Free with the same
 * size. NULL on failure. */
void *gy_conc_alloc_aligned(const gy_allocator *a, size_t size);
void gy_conc_free_aligned(const gy_allocator *a, void *p, size_t size);

/* Smallest power of two >= v (v >= 1, v <= 2^31). */
uint32_t gy_conc_pow2(uint32_t v);

/* A ck_ring of fixed-size slots in which the producer writes any number of slots and makes them
 * visible with one release store (ck_ring's own enqueue publishes every item separately: about
 * 30 M items/s against 140 M/s batched on the reference machine). The ring holds size - 1 slots,
 * as ck_ring does. Indices are free-running 32-bit counters. */
typedef struct gy_spsc {
    struct ck_ring ring; /* c_head (consumer line) | p_tail, p_head (producer line) | size, mask */
    /* producer-private */
    _Alignas(GY_CACHE_LINE) uint32_t write; /* next slot to write; [committed, write) unpublished */
    uint32_t committed;                     /* = ring.p_tail, kept here to stay off its line */
    uint32_t head_cache;                    /* last ring.c_head the producer loaded */
    /* read-only after init */
    _Alignas(GY_CACHE_LINE) unsigned char *slots;
    uint32_t elem;
    uint32_t mask;
} gy_spsc;

/* Ring of at least `capacity` usable slots of `elem` bytes (elem a multiple of 8). */
gy_result gy_spsc_init(gy_spsc *s, const gy_allocator *a, uint32_t capacity, uint32_t elem);
void gy_spsc_fini(gy_spsc *s, const gy_allocator *a);

static inline uint32_t gy_spsc_capacity(const gy_spsc *s)
{
    return s->mask;
}

static inline void *gy_spsc_slot(const gy_spsc *s, uint32_t index)
{
    return s->slots + (size_t)(index & s->mask) * s->elem;
}

/* Producer: free slots past `write`, reloading the consumer's head only when the cached view
 * shows fewer than `want`. */
static inline uint32_t gy_spsc_writable(gy_spsc *s, uint32_t want)
{
    uint32_t free_slots = s->mask - (s->write - s->head_cache);
    if (free_slots >= want)
        return free_slots;
    s->head_cache = ck_pr_load_uint(&s->ring.c_head);
    return s->mask - (s->write - s->head_cache);
}

/* Producer: copies n slots from src to [write, write + n) (caller checked room) and advances
 * `write`; nothing becomes visible until gy_spsc_commit. */
void gy_spsc_write(gy_spsc *s, const void *src, uint32_t n);

/* Copies the n slots starting at `index` out to dst; the caller must own those slots (the
 * producer its unpublished ones, the consumer its readable ones). */
void gy_spsc_copy_out(const gy_spsc *s, uint32_t index, void *dst, uint32_t n);

/* Producer: publishes [committed, write) with one release store. */
static inline void gy_spsc_commit(gy_spsc *s)
{
    if (s->committed != s->write) {
        s->committed = s->write;
        ck_pr_store_uint(&s->ring.p_tail, s->write);
    }
}

/* Producer: slots resident right now (committed + unpublished), reloading the consumer's head. */
static inline uint32_t gy_spsc_occupancy(gy_spsc *s)
{
    s->head_cache = ck_pr_load_uint(&s->ring.c_head);
    return s->write - s->head_cache;
}

/* Consumer: the first unconsumed index (only the consumer writes it). */
static inline uint32_t gy_spsc_read_index(const gy_spsc *s)
{
    return __atomic_load_n(&s->ring.c_head, __ATOMIC_RELAXED);
}

/* Consumer: committed slots not yet consumed (acquire: their contents are visible). */
static inline uint32_t gy_spsc_readable(const gy_spsc *s)
{
    return ck_pr_load_uint(&s->ring.p_tail) - gy_spsc_read_index(s);
}

/* Consumer: frees n slots for the producer with one release store. */
static inline void gy_spsc_consume(gy_spsc *s, uint32_t n)
{
    ck_pr_store_uint(&s->ring.c_head, gy_spsc_read_index(s) + n);
}

#endif /* GY_PHYSICS_CONCURRENCY_H */
