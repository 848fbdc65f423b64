#include "concurrency.h"

#include "scene_barrier.h"

#include <time.h>

uint64_t gy_clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The raw pointer is kept just below the aligned block; gy_alloc's 16-byte alignment leaves room
 * for it because the block starts at least 16 bytes past the raw one. */
void *gy_conc_alloc_aligned(const gy_allocator *a, size_t size)
{
    if (size > SIZE_MAX - 2 * GY_CACHE_LINE)
        return NULL;
    unsigned char *raw = gy_alloc(a, size + GY_CACHE_LINE);
    if (raw == NULL)
        return NULL;
    uintptr_t p = ((uintptr_t)raw + GY_CACHE_LINE) & ~(uintptr_t)(GY_CACHE_LINE - 1);
    unsigned char *aligned = (unsigned char *)p;
    memcpy(aligned - sizeof(void *), &raw, sizeof raw);
    memset(aligned, 0, size);
    return aligned;
}

void gy_conc_free_aligned(const gy_allocator *a, void *p, size_t size)
{
    if (p == NULL)
        return;
    unsigned char *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
    gy_free(a, raw, size + GY_CACHE_LINE);
}

uint32_t gy_conc_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

gy_result gy_spsc_init(gy_spsc *s, const gy_allocator *a, uint32_t capacity, uint32_t elem)
{
    uint32_t size = gy_conc_pow2(capacity + 1u);
    memset(s, 0, sizeof *s);
    s->slots = gy_conc_alloc_aligned(a, (size_t)size * elem);
    if (s->slots == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    ck_ring_init(&s->ring, size);
    s->elem = elem;
    s->mask = size - 1;
    return GY_OK;
}

void gy_spsc_fini(gy_spsc *s, const gy_allocator *a)
{
    if (s->slots != NULL)
        gy_conc_free_aligned(a, s->slots, (size_t)(s->mask + 1) * s->elem);
    s->slots = NULL;
}

void gy_spsc_write(gy_spsc *s, const void *src, uint32_t n)
{
    if (n == 0)
        return;
    uint32_t first = s->write & s->mask;
    uint32_t run = s->mask + 1 - first;
    if (run > n)
        run = n;
    memcpy(s->slots + (size_t)first * s->elem, src, (size_t)run * s->elem);
    if (n > run)
        memcpy(s->slots, (const unsigned char *)src + (size_t)run * s->elem,
               (size_t)(n - run) * s->elem);
    s->write += n;
}

void gy_spsc_copy_out(const gy_spsc *s, uint32_t index, void *dst, uint32_t n)
{
    if (n == 0)
        return;
    uint32_t first = index & s->mask;
    uint32_t run = s->mask + 1 - first;
    if (run > n)
        run = n;
    memcpy(dst, s->slots + (size_t)first * s->elem, (size_t)run * s->elem);
    if (n > run)
        memcpy((unsigned char *)dst + (size_t)run * s->elem, s->slots, (size_t)(n - run) * s->elem);
}
