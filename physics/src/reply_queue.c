#include "concurrency.h"

#include "reply_queue.h"

#define DEFAULT_CAPACITY 16383u
#define MAX_CAPACITY     (1u << 24)
/* Commits the overflow must stay empty before its storage is returned. A burst (a level's worth
 * of creates answered at once) leaves the overflow at its peak, which a steady load never needs
 * again; a load that keeps using it keeps its storage, so steady state does not allocate. */
#define OVERFLOW_KEEP_COMMITS 64u

struct gy_reply_queue {
    gy_spsc ring;

    /* producer-private */
    _Alignas(GY_CACHE_LINE) const gy_allocator *alloc;
    gy_reply *overflow; /* essential replies waiting for ring space, FIFO from ov_head */
    uint32_t ov_len, ov_cap, ov_head;
    uint32_t ov_quiet; /* commits since the overflow last held a reply */
    uint64_t pushed, dropped, deferred, lost;
    uint32_t high_water, overflow_high_water, overflow_now;

    /* consumer-private */
    _Alignas(GY_CACHE_LINE) uint64_t delivered;
};

gy_result gy_reply_queue_create(const gy_reply_queue_def *def, gy_reply_queue **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_reply_queue_def d = def != NULL ? *def : (gy_reply_queue_def){0};
    uint32_t cap = d.capacity ? d.capacity : DEFAULT_CAPACITY;
    if (cap > MAX_CAPACITY)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(d.allocator);
    gy_reply_queue *q = gy_conc_alloc_aligned(a, sizeof *q);
    if (q == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    q->alloc = a;
    if (gy_spsc_init(&q->ring, a, cap, GY_REPLY_SIZE) != GY_OK) {
        gy_conc_free_aligned(a, q, sizeof *q);
        return GY_ERR_OUT_OF_MEMORY;
    }
    *out = q;
    return GY_OK;
}

void gy_reply_queue_destroy(gy_reply_queue *q)
{
    if (q == NULL)
        return;
    const gy_allocator *a = q->alloc;
    gy_spsc_fini(&q->ring, a);
    gy_free(a, q->overflow, (size_t)q->ov_cap * sizeof(gy_reply));
    gy_conc_free_aligned(a, q, sizeof *q);
}

static void note_overflow(gy_reply_queue *q)
{
    uint32_t now = q->ov_len - q->ov_head;
    __atomic_store_n(&q->overflow_now, now, __ATOMIC_RELAXED);
    gy_stat_max32(&q->overflow_high_water, now);
}

/* Moves as much of the overflow as fits into the ring (unpublished until commit). */
static void flush_overflow(gy_reply_queue *q)
{
    uint32_t waiting = q->ov_len - q->ov_head;
    uint32_t room = gy_spsc_writable(&q->ring, waiting);
    uint32_t n = room < waiting ? room : waiting;
    if (n == 0)
        return;
    gy_spsc_write(&q->ring, q->overflow + q->ov_head, n);
    q->ov_head += n;
    if (q->ov_head == q->ov_len)
        q->ov_head = q->ov_len = 0;
    note_overflow(q);
}

gy_result gy_reply_queue_push(gy_reply_queue *q, const gy_reply *r, gy_reply_class cls)
{
    if (q == NULL || r == NULL || (cls != GY_REPLY_ESSENTIAL && cls != GY_REPLY_DROPPABLE))
        return GY_ERR_INVALID_ARGUMENT;
    if (q->ov_head != q->ov_len)
        flush_overflow(q);
    /* Nothing may overtake a reply still waiting in the overflow. */
    if (q->ov_head == q->ov_len && gy_spsc_writable(&q->ring, 1) > 0) {
        memcpy(gy_spsc_slot(&q->ring, q->ring.write), r, sizeof *r);
        q->ring.write++;
        gy_stat_add(&q->pushed, 1);
        return GY_OK;
    }
    if (cls == GY_REPLY_DROPPABLE) {
        gy_stat_add(&q->dropped, 1);
        return GY_ERR_CAPACITY;
    }
    if (q->ov_head > 0 && q->ov_len == q->ov_cap) {
        memmove(q->overflow, q->overflow + q->ov_head,
                (size_t)(q->ov_len - q->ov_head) * sizeof(gy_reply));
        q->ov_len -= q->ov_head;
        q->ov_head = 0;
    }
    if (gy_array_reserve(q->alloc, (void **)&q->overflow, &q->ov_cap, q->ov_len + 1,
                         sizeof(gy_reply)) != GY_OK) {
        gy_stat_add(&q->lost, 1);
        return GY_ERR_OUT_OF_MEMORY;
    }
    q->overflow[q->ov_len++] = *r;
    gy_stat_add(&q->pushed, 1);
    gy_stat_add(&q->deferred, 1);
    note_overflow(q);
    return GY_OK;
}

void gy_reply_queue_commit(gy_reply_queue *q)
{
    if (q == NULL)
        return;
    if (q->ov_head != q->ov_len)
        flush_overflow(q);
    if (q->ov_head != q->ov_len || q->ov_cap == 0) {
        q->ov_quiet = 0;
    } else if (++q->ov_quiet >= OVERFLOW_KEEP_COMMITS) {
        gy_free(q->alloc, q->overflow, (size_t)q->ov_cap * sizeof(gy_reply));
        q->overflow = NULL;
        q->ov_cap = 0;
        q->ov_quiet = 0;
    }
    gy_spsc_commit(&q->ring);
    gy_stat_max32(&q->high_water, gy_spsc_occupancy(&q->ring));
}

uint32_t gy_reply_queue_pop(gy_reply_queue *q, gy_reply *out, uint32_t max)
{
    if (q == NULL || out == NULL || max == 0)
        return 0;
    uint32_t n = gy_spsc_readable(&q->ring);
    if (n > max)
        n = max;
    if (n == 0)
        return 0;
    gy_spsc_copy_out(&q->ring, gy_spsc_read_index(&q->ring), out, n);
    gy_spsc_consume(&q->ring, n);
    gy_stat_add(&q->delivered, n);
    return n;
}

uint32_t gy_reply_queue_drain(gy_reply_queue *q, gy_reply_fn fn, void *ctx)
{
    if (q == NULL || fn == NULL)
        return 0;
    uint32_t n = gy_spsc_readable(&q->ring);
    uint32_t first = gy_spsc_read_index(&q->ring);
    for (uint32_t i = 0; i < n; i++)
        fn(ctx, gy_spsc_slot(&q->ring, first + i));
    if (n > 0) {
        gy_spsc_consume(&q->ring, n);
        gy_stat_add(&q->delivered, n);
    }
    return n;
}

void gy_reply_queue_get_stats(const gy_reply_queue *q, gy_reply_queue_stats *out)
{
    if (out == NULL)
        return;
    *out = (gy_reply_queue_stats){0};
    if (q == NULL)
        return;
    out->capacity = gy_spsc_capacity(&q->ring);
    out->pushed = gy_stat_get(&q->pushed);
    out->delivered = gy_stat_get(&q->delivered);
    out->dropped = gy_stat_get(&q->dropped);
    out->deferred = gy_stat_get(&q->deferred);
    out->lost = gy_stat_get(&q->lost);
    out->high_water = gy_stat_get32(&q->high_water);
    out->overflow_high_water = gy_stat_get32(&q->overflow_high_water);
    out->overflow_now = gy_stat_get32(&q->overflow_now);
}
