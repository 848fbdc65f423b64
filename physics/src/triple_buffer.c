#include "concurrency.h"

#include "triple_buffer.h"

/* The shared word holds the index of the middle buffer (the latest publish not yet taken) and a
 * DIRTY bit set by each publish and cleared when the reader takes it. The writer's and the
 * reader's own indices are private to them. With a fourth buffer the reader also holds `spare`:
 * when it takes a publish it hands back whichever of its two is not kept. */
#define MIDDLE_MASK 3u
#define DIRTY       4u
#define NO_BUFFER   UINT32_MAX

struct gy_triple_buffer {
    _Alignas(GY_CACHE_LINE) uint32_t state;
    uint64_t latest_tick;
    uint64_t publishes;

    /* writer-private */
    _Alignas(GY_CACHE_LINE) uint32_t back;
    /* tick[i]: written by the writer into its back buffer's entry before publishing it, read by
     * the reader only for the buffer it holds — ordered by the exchange on `state`. */
    uint64_t tick[4];

    /* reader-private */
    _Alignas(GY_CACHE_LINE) uint32_t front;
    uint32_t spare; /* reader_keeps: the reader's other buffer */
    uint32_t kept;  /* reader_keeps: front or spare, or NO_BUFFER */
    bool has_data;

    /* read-only after create */
    _Alignas(GY_CACHE_LINE) void *buf[4];
    uint32_t count; /* 3, or 4 with reader_keeps */
    size_t size;
    size_t stride;
    void *block; /* NULL when the caller supplied the buffers */
    const gy_allocator *alloc;
};

gy_result gy_triple_buffer_create(const gy_triple_buffer_def *def, gy_triple_buffer **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (def == NULL || def->size == 0 || def->size > SIZE_MAX / 4)
        return GY_ERR_INVALID_ARGUMENT;
    int count = def->reader_keeps ? 4 : 3;
    int given = 0;
    for (int i = 0; i < 4; i++)
        given += def->buffers[i] != NULL;
    if ((given != 0 && given != count) || (given > 0 && def->buffers[count - 1] == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < given; i++)
        for (int j = i + 1; j < given; j++)
            if (def->buffers[i] == def->buffers[j])
                return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(def->allocator);
    gy_triple_buffer *tb = gy_conc_alloc_aligned(a, sizeof *tb);
    if (tb == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    tb->alloc = a;
    tb->size = def->size;
    tb->count = (uint32_t)count;
    if (given > 0) {
        for (int i = 0; i < count; i++)
            tb->buf[i] = def->buffers[i];
    } else {
        /* One block, each buffer on its own cache lines so the two sides never share a line. */
        tb->stride = (def->size + GY_CACHE_LINE - 1) & ~(size_t)(GY_CACHE_LINE - 1);
        tb->block = gy_conc_alloc_aligned(a, tb->stride * (size_t)count);
        if (tb->block == NULL) {
            gy_conc_free_aligned(a, tb, sizeof *tb);
            return GY_ERR_OUT_OF_MEMORY;
        }
        for (int i = 0; i < count; i++)
            tb->buf[i] = (unsigned char *)tb->block + tb->stride * (size_t)i;
    }
    tb->back = 0;
    tb->state = 1; /* middle = 1, not dirty */
    tb->front = 2;
    tb->spare = count == 4 ? 3u : NO_BUFFER;
    tb->kept = NO_BUFFER;
    *out = tb;
    return GY_OK;
}

void gy_triple_buffer_destroy(gy_triple_buffer *tb)
{
    if (tb == NULL)
        return;
    if (tb->block != NULL)
        gy_conc_free_aligned(tb->alloc, tb->block, tb->stride * tb->count);
    gy_conc_free_aligned(tb->alloc, tb, sizeof *tb);
}

void *gy_triple_buffer_write_buffer(gy_triple_buffer *tb)
{
    return tb->buf[tb->back];
}

uint32_t gy_triple_buffer_write_index(const gy_triple_buffer *tb)
{
    return tb->back;
}

const void *gy_triple_buffer_buffer(const gy_triple_buffer *tb, uint32_t index)
{
    return index < tb->count ? tb->buf[index] : NULL;
}

uint32_t gy_triple_buffer_publish(gy_triple_buffer *tb, uint64_t tick)
{
    uint32_t published = tb->back;
    tb->tick[published] = tick;
    /* release: the buffer's contents and tick; acquire: the reader's reads of the buffer it
     * hands back are done before we write it. */
    uint32_t old = __atomic_exchange_n(&tb->state, published | DIRTY, __ATOMIC_ACQ_REL);
    tb->back = old & MIDDLE_MASK;
    __atomic_store_n(&tb->latest_tick, tick, __ATOMIC_RELEASE);
    __atomic_store_n(&tb->publishes, __atomic_load_n(&tb->publishes, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELEASE);
    return published;
}

const void *gy_triple_buffer_read(gy_triple_buffer *tb, uint64_t *tick, bool *fresh)
{
    bool got = false;
    if (__atomic_load_n(&tb->state, __ATOMIC_RELAXED) & DIRTY) {
        /* The kept buffer stays with the reader: the spare goes instead, and the front becomes
         * the spare. */
        uint32_t give = tb->front;
        if (tb->kept != NO_BUFFER && tb->kept == tb->front) {
            give = tb->spare;
            tb->spare = tb->front;
        }
        uint32_t old = __atomic_exchange_n(&tb->state, give, __ATOMIC_ACQ_REL);
        tb->front = old & MIDDLE_MASK;
        tb->has_data = true;
        got = true;
    }
    if (fresh != NULL)
        *fresh = got;
    if (!tb->has_data) {
        if (tick != NULL)
            *tick = 0;
        return NULL;
    }
    if (tick != NULL)
        *tick = tb->tick[tb->front];
    return tb->buf[tb->front];
}

uint32_t gy_triple_buffer_read_index(const gy_triple_buffer *tb)
{
    return tb->front;
}

const void *gy_triple_buffer_keep(gy_triple_buffer *tb)
{
    if (tb->count < 4 || !tb->has_data)
        return NULL;
    tb->kept = tb->front;
    return tb->buf[tb->front];
}

uint64_t gy_triple_buffer_latest_tick(const gy_triple_buffer *tb)
{
    return __atomic_load_n(&tb->latest_tick, __ATOMIC_ACQUIRE);
}

uint64_t gy_triple_buffer_publishes(const gy_triple_buffer *tb)
{
    return __atomic_load_n(&tb->publishes, __ATOMIC_ACQUIRE);
}
