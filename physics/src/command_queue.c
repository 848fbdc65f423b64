#include "concurrency.h"

#include "command_queue.h"

#include <assert.h>
#include <sched.h>

#define DEFAULT_LIFECYCLE  4095u
#define DEFAULT_MUTATE     16383u
#define DEFAULT_BATCHES    255u
#define MAX_RING_CAPACITY  (1u << 26)
#define MAX_BATCH_CAPACITY (1u << 20)
/* Return ring for detached blocks: at most DETACHED_SLOTS - 1 in flight, so the consumer's
 * enqueue can never find it full. */
#define DETACHED_SLOTS 16u
#define PUBLISH_TIMES  256u

/* One sealed batch as the consumer sees it. Travels through ck_ring's typed SPSC ring. */
struct gy_cq_desc {
    uint64_t seq;
    uint64_t published_ns;
    gy_command *detached; /* NULL: the commands are in the rings */
    uint32_t count[GY_COMMAND_RING_COUNT];
    uint32_t payloads;
    uint32_t reserved;
};
CK_RING_PROTOTYPE(gy_cq_desc, gy_cq_desc)

struct gy_command_queue {
    gy_spsc rings[GY_COMMAND_RING_COUNT];
    struct ck_ring desc_ring;
    struct ck_ring return_ring;

    /* read-only after create */
    _Alignas(GY_CACHE_LINE) struct gy_cq_desc *desc_slots;
    ck_ring_buffer_t *return_slots;
    const gy_allocator *alloc;
    gy_command_release_fn release;
    void *release_ctx;
    uint32_t desc_size;

    /* producer-private */
    _Alignas(GY_CACHE_LINE) uint64_t published;
    uint32_t open_count[GY_COMMAND_RING_COUNT];
    uint32_t open_payloads;
    bool open_staged; /* the open batch lives in staging, not in the rings */
    int publishing;   /* overlap detector */
    /* staging: sealed batches that did not fit, then possibly the open batch, FIFO */
    gy_command *st[GY_COMMAND_RING_COUNT];
    uint32_t st_len[GY_COMMAND_RING_COUNT], st_cap[GY_COMMAND_RING_COUNT];
    uint32_t st_head[GY_COMMAND_RING_COUNT];
    struct gy_cq_desc *st_desc;
    uint32_t st_desc_len, st_desc_cap, st_desc_head;
    uint32_t detached_out;
    uint32_t st_quiet;                  /* publishes since staging last held a command */
    uint64_t publish_ns[PUBLISH_TIMES]; /* by seq % PUBLISH_TIMES */

    /* counters written by the producer thread */
    uint64_t batches_published, commands_published, batches_deferred, batches_detached;
    uint64_t record_failures, batches_discarded, commands_discarded, p_payloads;
    uint32_t ring_high_water[GY_COMMAND_RING_COUNT], staged_high_water, staged_batches;

    /* consumer-private */
    _Alignas(GY_CACHE_LINE) int holding; /* a batch is held; also the overlap detector */
    struct gy_cq_desc held;
    uint32_t held_start[GY_COMMAND_RING_COUNT];
    uint64_t batches_consumed, commands_consumed, c_payloads;

    _Alignas(GY_CACHE_LINE) uint64_t acknowledged;
};

/* ---- producer helpers ------------------------------------------------------------------------ */

static uint32_t staged_commands(const gy_command_queue *q)
{
    return (q->st_len[0] - q->st_head[0]) + (q->st_len[1] - q->st_head[1]);
}

static void note_staging(gy_command_queue *q)
{
    gy_stat_max32(&q->staged_high_water, staged_commands(q));
    __atomic_store_n(&q->staged_batches, q->st_desc_len - q->st_desc_head, __ATOMIC_RELAXED);
}

/* Moves the open batch's unpublished ring entries to the tail of staging. All-or-nothing. */
static gy_result stage_open(gy_command_queue *q)
{
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        gy_spsc *s = &q->rings[r];
        uint32_t n = s->write - s->committed;
        if (gy_array_reserve(q->alloc, (void **)&q->st[r], &q->st_cap[r], q->st_len[r] + n,
                             sizeof(gy_command)) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
    }
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        gy_spsc *s = &q->rings[r];
        uint32_t n = s->write - s->committed;
        if (n == 0)
            continue;
        gy_spsc_copy_out(s, s->committed, q->st[r] + q->st_len[r], n);
        q->st_len[r] += n;
        s->write = s->committed;
    }
    q->open_staged = true;
    note_staging(q);
    return GY_OK;
}

static bool desc_room(const gy_command_queue *q)
{
    return ck_ring_size(&q->desc_ring) < ck_ring_capacity(&q->desc_ring) - 1u;
}

static void note_rings(gy_command_queue *q)
{
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++)
        gy_stat_max32(&q->ring_high_water[r], gy_spsc_occupancy(&q->rings[r]));
}

/* Frees detached blocks the consumer has finished with. */
static void reclaim_detached(gy_command_queue *q)
{
    void *block;
    while (q->detached_out > 0 && ck_ring_dequeue_spsc(&q->return_ring, q->return_slots, &block)) {
        /* The block's size is not stored: it is the first word before the commands. */
        uint64_t n;
        unsigned char *raw = (unsigned char *)block - GY_COMMAND_SIZE;
        memcpy(&n, raw, sizeof n);
        gy_free(q->alloc, raw, (size_t)(n + 1) * GY_COMMAND_SIZE);
        q->detached_out--;
    }
}

/* A block holding n commands, preceded by one command-sized header that records n. */
static gy_command *alloc_detached(gy_command_queue *q, uint32_t n)
{
    unsigned char *raw = gy_alloc(q->alloc, ((size_t)n + 1) * GY_COMMAND_SIZE);
    if (raw == NULL)
        return NULL;
    uint64_t n64 = n;
    memcpy(raw, &n64, sizeof n64);
    return (gy_command *)(raw + GY_COMMAND_SIZE);
}

/* Compacts staging once every sealed batch has left it (the open batch may remain). */
static void compact_staging(gy_command_queue *q)
{
    if (q->st_desc_head != q->st_desc_len)
        return;
    q->st_desc_head = q->st_desc_len = 0;
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        uint32_t rest = q->st_len[r] - q->st_head[r];
        if (rest > 0 && q->st_head[r] > 0)
            memmove(q->st[r], q->st[r] + q->st_head[r], (size_t)rest * sizeof(gy_command));
        q->st_len[r] = rest;
        q->st_head[r] = 0;
    }
    if (q->open_count[0] + q->open_count[1] == 0)
        q->open_staged = false;
}

/* Carries sealed staged batches into the rings (or detached) in order, as far as they fit. */
static void flush_staged(gy_command_queue *q)
{
    reclaim_detached(q);
    while (q->st_desc_head < q->st_desc_len) {
        struct gy_cq_desc *d = &q->st_desc[q->st_desc_head];
        if (!desc_room(q))
            break;
        bool oversize = d->count[0] > gy_spsc_capacity(&q->rings[0]) ||
                        d->count[1] > gy_spsc_capacity(&q->rings[1]);
        if (oversize) {
            if (q->detached_out >= DETACHED_SLOTS - 1u)
                break;
            gy_command *block = alloc_detached(q, d->count[0] + d->count[1]);
            if (block == NULL)
                break; /* stays staged; retried at the next publish or flush */
            for (int r = 0; r < GY_COMMAND_RING_COUNT; r++)
                if (d->count[r] > 0)
                    memcpy(block + (r == 0 ? 0 : d->count[0]), q->st[r] + q->st_head[r],
                           (size_t)d->count[r] * sizeof(gy_command));
            d->detached = block;
            q->detached_out++;
            gy_stat_add(&q->batches_detached, 1);
        } else {
            if (gy_spsc_writable(&q->rings[0], d->count[0]) < d->count[0] ||
                gy_spsc_writable(&q->rings[1], d->count[1]) < d->count[1])
                break;
            for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
                if (d->count[r] > 0)
                    gy_spsc_write(&q->rings[r], q->st[r] + q->st_head[r], d->count[r]);
                gy_spsc_commit(&q->rings[r]);
            }
        }
        bool sent = ck_ring_enqueue_spsc_gy_cq_desc(&q->desc_ring, q->desc_slots, d);
        assert(sent);
        (void)sent;
        q->st_head[0] += d->count[0];
        q->st_head[1] += d->count[1];
        q->st_desc_head++;
    }
    note_rings(q);
    compact_staging(q);
    note_staging(q);
}

/* Publishes staging must stay empty before its storage is returned. A burst (a level's worth of
 * creates in one batch) leaves staging at its peak, which a steady frame loop never needs again;
 * a load that keeps staging busy keeps its storage, so steady state does not allocate. */
#define STAGING_KEEP_PUBLISHES 64u

static void trim_staging(gy_command_queue *q)
{
    if (q->st_len[0] != 0 || q->st_len[1] != 0 || q->st_desc_len != 0) {
        q->st_quiet = 0;
        return;
    }
    if (q->st_cap[0] + q->st_cap[1] + q->st_desc_cap == 0 || ++q->st_quiet < STAGING_KEEP_PUBLISHES)
        return;
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        gy_free(q->alloc, q->st[r], (size_t)q->st_cap[r] * sizeof(gy_command));
        q->st[r] = NULL;
        q->st_cap[r] = 0;
    }
    gy_free(q->alloc, q->st_desc, (size_t)q->st_desc_cap * sizeof(struct gy_cq_desc));
    q->st_desc = NULL;
    q->st_desc_cap = 0;
    q->st_quiet = 0;
}

/* ---- consumer helpers ------------------------------------------------------------------------ */

static gy_command *held_command(gy_command_queue *q, int r, uint32_t i)
{
    const struct gy_cq_desc *d = &q->held;
    if (d->detached != NULL)
        return d->detached + (r == 0 ? 0 : d->count[0]) + i;
    return gy_spsc_slot(&q->rings[r], q->held_start[r] + i);
}

/* Ends the held batch: payloads, ring space (or the detached block), acknowledgement. Runs in the
 * consumer role (on the producer thread for a hard-stop discard, once the consumer is joined). */
static void finish_held(gy_command_queue *q, bool discard)
{
    const struct gy_cq_desc *d = &q->held;
    if (d->payloads > 0) {
        uint64_t released = 0;
        for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
            for (uint32_t i = 0; i < d->count[r]; i++) {
                gy_command *c = held_command(q, r, i);
                if (c->flags & GY_COMMAND_PAYLOAD) {
                    q->release(q->release_ctx, c);
                    c->flags = (uint16_t)(c->flags & ~GY_COMMAND_PAYLOAD);
                    released++;
                }
            }
        }
        gy_stat_add(&q->c_payloads, released);
    }
    if (d->detached != NULL) {
        bool sent = ck_ring_enqueue_spsc(&q->return_ring, q->return_slots, d->detached);
        assert(sent);
        (void)sent;
    } else {
        for (int r = 0; r < GY_COMMAND_RING_COUNT; r++)
            gy_spsc_consume(&q->rings[r], d->count[r]);
    }
    uint64_t n = (uint64_t)d->count[0] + d->count[1];
    if (discard) {
        gy_stat_add(&q->batches_discarded, 1);
        gy_stat_add(&q->commands_discarded, n);
    } else {
        gy_stat_add(&q->batches_consumed, 1);
        gy_stat_add(&q->commands_consumed, n);
    }
    __atomic_store_n(&q->acknowledged, d->seq, __ATOMIC_RELEASE);
    __atomic_store_n(&q->holding, 0, __ATOMIC_RELEASE);
}

/* ---- public ---------------------------------------------------------------------------------- */

gy_result gy_command_queue_create(const gy_command_queue_def *def, gy_command_queue **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_command_queue_def d = def != NULL ? *def : (gy_command_queue_def){0};
    uint32_t cap_l = d.lifecycle_capacity ? d.lifecycle_capacity : DEFAULT_LIFECYCLE;
    uint32_t cap_m = d.mutate_capacity ? d.mutate_capacity : DEFAULT_MUTATE;
    uint32_t cap_b = d.batch_capacity ? d.batch_capacity : DEFAULT_BATCHES;
    if (cap_l > MAX_RING_CAPACITY || cap_m > MAX_RING_CAPACITY || cap_b > MAX_BATCH_CAPACITY)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(d.allocator);

    gy_command_queue *q = gy_conc_alloc_aligned(a, sizeof *q);
    if (q == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    q->alloc = a;
    q->release = d.release_payload;
    q->release_ctx = d.release_ctx;
    q->desc_size = gy_conc_pow2(cap_b + 1u);
    q->desc_slots = gy_conc_alloc_aligned(a, (size_t)q->desc_size * sizeof(struct gy_cq_desc));
    q->return_slots = gy_conc_alloc_aligned(a, DETACHED_SLOTS * sizeof(ck_ring_buffer_t));
    if (q->desc_slots == NULL || q->return_slots == NULL ||
        gy_spsc_init(&q->rings[0], a, cap_l, GY_COMMAND_SIZE) != GY_OK ||
        gy_spsc_init(&q->rings[1], a, cap_m, GY_COMMAND_SIZE) != GY_OK) {
        gy_command_queue_destroy(q);
        return GY_ERR_OUT_OF_MEMORY;
    }
    ck_ring_init(&q->desc_ring, q->desc_size);
    ck_ring_init(&q->return_ring, DETACHED_SLOTS);
    *out = q;
    return GY_OK;
}

void gy_command_queue_destroy(gy_command_queue *q)
{
    if (q == NULL)
        return;
    const gy_allocator *a = q->alloc;
    if (q->desc_slots != NULL && q->return_slots != NULL && q->rings[0].slots != NULL &&
        q->rings[1].slots != NULL) {
        gy_command_queue_discard_sealed(q);
        gy_command_queue_discard_open(q);
        reclaim_detached(q);
    }
    assert(q->detached_out == 0);
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        gy_spsc_fini(&q->rings[r], a);
        gy_free(a, q->st[r], (size_t)q->st_cap[r] * sizeof(gy_command));
    }
    gy_free(a, q->st_desc, (size_t)q->st_desc_cap * sizeof(struct gy_cq_desc));
    gy_conc_free_aligned(a, q->desc_slots, (size_t)q->desc_size * sizeof(struct gy_cq_desc));
    gy_conc_free_aligned(a, q->return_slots, DETACHED_SLOTS * sizeof(ck_ring_buffer_t));
    gy_conc_free_aligned(a, q, sizeof *q);
}

gy_result gy_command_queue_record(gy_command_queue *q, gy_command_ring ring, const gy_command *cmd)
{
    if (q == NULL || cmd == NULL || (unsigned)ring >= (unsigned)GY_COMMAND_RING_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    uint32_t has_payload = (cmd->flags & GY_COMMAND_PAYLOAD) ? 1u : 0u;
    if (has_payload && q->release == NULL)
        return GY_ERR_INVALID_ARGUMENT;

    if (!q->open_staged && q->st_desc_head == q->st_desc_len) {
        gy_spsc *s = &q->rings[ring];
        if (gy_spsc_writable(s, 1) > 0) {
            memcpy(gy_spsc_slot(s, s->write), cmd, sizeof *cmd);
            s->write++;
            q->open_count[ring]++;
            q->open_payloads += has_payload;
            return GY_OK;
        }
        if (stage_open(q) != GY_OK) {
            gy_stat_add(&q->record_failures, 1);
            return GY_ERR_OUT_OF_MEMORY;
        }
    }
    q->open_staged = true;
    if (gy_array_reserve(q->alloc, (void **)&q->st[ring], &q->st_cap[ring], q->st_len[ring] + 1,
                         sizeof(gy_command)) != GY_OK) {
        gy_stat_add(&q->record_failures, 1);
        return GY_ERR_OUT_OF_MEMORY;
    }
    q->st[ring][q->st_len[ring]++] = *cmd;
    q->open_count[ring]++;
    q->open_payloads += has_payload;
    gy_stat_max32(&q->staged_high_water, staged_commands(q));
    return GY_OK;
}

gy_result gy_command_queue_publish(gy_command_queue *q, uint64_t *seq)
{
    if (q == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (__atomic_exchange_n(&q->publishing, 1, __ATOMIC_ACQUIRE) != 0)
        return GY_ERR_MISUSE;
    gy_result result = GY_OK;
    uint32_t n = q->open_count[0] + q->open_count[1];
    if (n > 0) {
        struct gy_cq_desc d = {
            .seq = q->published + 1,
            .published_ns = gy_clock_now_ns(),
            .count = {q->open_count[0], q->open_count[1]},
            .payloads = q->open_payloads,
        };
        bool sent = false;
        if (!q->open_staged) {
            if (desc_room(q)) {
                gy_spsc_commit(&q->rings[0]);
                gy_spsc_commit(&q->rings[1]);
                sent = ck_ring_enqueue_spsc_gy_cq_desc(&q->desc_ring, q->desc_slots, &d);
                assert(sent);
                note_rings(q);
            } else if ((result = stage_open(q)) != GY_OK) {
                goto out;
            }
        }
        if (!sent) {
            if (gy_array_reserve(q->alloc, (void **)&q->st_desc, &q->st_desc_cap,
                                 q->st_desc_len + 1, sizeof(struct gy_cq_desc)) != GY_OK) {
                result = GY_ERR_OUT_OF_MEMORY; /* the batch stays open (in staging) */
                goto out;
            }
            q->st_desc[q->st_desc_len++] = d;
            gy_stat_add(&q->batches_deferred, 1);
        }
        q->published = d.seq;
        q->publish_ns[d.seq % PUBLISH_TIMES] = d.published_ns;
        q->open_count[0] = q->open_count[1] = 0;
        q->open_payloads = 0;
        q->open_staged = false;
        gy_stat_add(&q->batches_published, 1);
        gy_stat_add(&q->commands_published, n);
    }
    if (q->st_desc_head < q->st_desc_len || q->detached_out > 0)
        flush_staged(q);
    trim_staging(q);
out:
    if (seq != NULL)
        *seq = q->published;
    __atomic_store_n(&q->publishing, 0, __ATOMIC_RELEASE);
    return result;
}

uint32_t gy_command_queue_flush(gy_command_queue *q)
{
    if (q == NULL)
        return 0;
    if (q->st_desc_head < q->st_desc_len || q->detached_out > 0)
        flush_staged(q);
    return q->st_desc_len - q->st_desc_head;
}

uint32_t gy_command_queue_discard_open(gy_command_queue *q)
{
    if (q == NULL)
        return 0;
    uint32_t n = q->open_count[0] + q->open_count[1];
    uint64_t released = 0;
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        uint32_t k = q->open_count[r];
        for (uint32_t i = 0; i < k; i++) {
            gy_command *c = q->open_staged ? &q->st[r][q->st_len[r] - k + i]
                                           : gy_spsc_slot(&q->rings[r], q->rings[r].committed + i);
            if (c->flags & GY_COMMAND_PAYLOAD) {
                q->release(q->release_ctx, c);
                released++;
            }
        }
        if (q->open_staged)
            q->st_len[r] -= k;
        else
            q->rings[r].write = q->rings[r].committed;
        q->open_count[r] = 0;
    }
    q->open_payloads = 0;
    q->open_staged = false;
    gy_stat_add(&q->p_payloads, released);
    gy_stat_add(&q->commands_discarded, n);
    compact_staging(q);
    return n;
}

gy_result gy_command_queue_wait_acknowledged(gy_command_queue *q, uint64_t seq, uint64_t timeout_ns)
{
    if (q == NULL || seq > q->published)
        return GY_ERR_INVALID_ARGUMENT;
    uint64_t start = gy_clock_now_ns();
    for (uint32_t i = 0;; i++) {
        if (gy_command_queue_acknowledged(q) >= seq)
            return GY_OK;
        if (q->st_desc_head < q->st_desc_len)
            flush_staged(q);
        if (i < 2048) {
            gy_cpu_relax();
        } else {
            sched_yield();
        }
        if ((i & 63) == 63 && timeout_ns != 0 && gy_clock_now_ns() - start >= timeout_ns)
            return gy_command_queue_acknowledged(q) >= seq ? GY_OK : GY_ERR_TIMEOUT;
    }
}

uint64_t gy_command_queue_published(const gy_command_queue *q)
{
    return q != NULL ? q->published : 0;
}

uint64_t gy_command_queue_acknowledged(const gy_command_queue *q)
{
    return q != NULL ? __atomic_load_n(&q->acknowledged, __ATOMIC_ACQUIRE) : 0;
}

void gy_command_queue_pending(const gy_command_queue *q, uint64_t now_ns, gy_command_pending *out)
{
    if (out == NULL)
        return;
    *out = (gy_command_pending){0};
    if (q == NULL)
        return;
    out->published = q->published;
    out->acknowledged = gy_command_queue_acknowledged(q);
    out->staged_batches = q->st_desc_len - q->st_desc_head;
    out->open_commands = q->open_count[0] + q->open_count[1];
    if (out->acknowledged < out->published) {
        out->oldest_seq = out->acknowledged + 1;
        uint64_t remembered = out->published - out->oldest_seq < PUBLISH_TIMES
                                  ? out->oldest_seq
                                  : out->published - (PUBLISH_TIMES - 1);
        uint64_t t = q->publish_ns[remembered % PUBLISH_TIMES];
        out->oldest_age_ns = now_ns > t ? now_ns - t : 0;
    }
}

bool gy_command_queue_acquire(gy_command_queue *q, gy_command_batch *batch)
{
    if (q == NULL || batch == NULL)
        return false;
    if (__atomic_exchange_n(&q->holding, 1, __ATOMIC_ACQUIRE) != 0)
        return false; /* a batch is held (or another consumer is inside acquire) */
    struct gy_cq_desc d;
    if (!ck_ring_dequeue_spsc_gy_cq_desc(&q->desc_ring, q->desc_slots, &d)) {
        __atomic_store_n(&q->holding, 0, __ATOMIC_RELEASE);
        return false;
    }
    q->held = d;
    batch->seq = d.seq;
    batch->published_ns = d.published_ns;
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        batch->count[r] = d.count[r];
        batch->it_[r].left = d.count[r];
        if (d.detached != NULL) {
            batch->it_[r].base = d.detached + (r == 0 ? 0 : d.count[0]);
            batch->it_[r].mask = UINT32_MAX;
            batch->it_[r].pos = 0;
            q->held_start[r] = 0;
        } else {
            batch->it_[r].base = (gy_command *)(void *)q->rings[r].slots;
            batch->it_[r].mask = q->rings[r].mask;
            batch->it_[r].pos = gy_spsc_read_index(&q->rings[r]);
            q->held_start[r] = batch->it_[r].pos;
        }
    }
    batch->ring_ = 0;
    batch->payloads_ = d.payloads;
    batch->detached_ = d.detached;
    batch->detached_count_ = d.detached != NULL ? d.count[0] + d.count[1] : 0;
    batch->held_ = 1;
    return true;
}

gy_result gy_command_queue_release(gy_command_queue *q, gy_command_batch *batch)
{
    if (q == NULL || batch == NULL || batch->held_ != 1 ||
        __atomic_load_n(&q->holding, __ATOMIC_RELAXED) == 0 || batch->seq != q->held.seq)
        return GY_ERR_MISUSE;
    finish_held(q, false);
    batch->held_ = 0;
    return GY_OK;
}

uint32_t gy_command_queue_drain(gy_command_queue *q, uint32_t max_batches, gy_command_fn fn,
                                void *ctx)
{
    uint32_t n = 0;
    gy_command_batch b;
    while ((max_batches == 0 || n < max_batches) && gy_command_queue_acquire(q, &b)) {
        gy_command_ring ring;
        gy_command *c;
        while ((c = gy_command_batch_next(&b, &ring)) != NULL)
            if (fn != NULL)
                fn(ctx, b.seq, ring, c);
        gy_command_queue_release(q, &b);
        n++;
    }
    return n;
}

uint64_t gy_command_queue_discard_sealed(gy_command_queue *q)
{
    if (q == NULL)
        return 0;
    uint64_t n = 0;
    /* A batch the joined consumer still held. */
    if (__atomic_load_n(&q->holding, __ATOMIC_ACQUIRE) != 0) {
        n += (uint64_t)q->held.count[0] + q->held.count[1];
        finish_held(q, true);
    }
    gy_command_batch b;
    while (gy_command_queue_acquire(q, &b)) {
        n += (uint64_t)b.count[0] + b.count[1];
        finish_held(q, true);
    }
    uint64_t released = 0;
    while (q->st_desc_head < q->st_desc_len) {
        const struct gy_cq_desc *d = &q->st_desc[q->st_desc_head];
        for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
            for (uint32_t i = 0; i < d->count[r]; i++) {
                gy_command *c = &q->st[r][q->st_head[r] + i];
                if (d->payloads > 0 && (c->flags & GY_COMMAND_PAYLOAD)) {
                    q->release(q->release_ctx, c);
                    released++;
                }
            }
            q->st_head[r] += d->count[r];
        }
        n += (uint64_t)d->count[0] + d->count[1];
        gy_stat_add(&q->batches_discarded, 1);
        gy_stat_add(&q->commands_discarded, (uint64_t)d->count[0] + d->count[1]);
        __atomic_store_n(&q->acknowledged, d->seq, __ATOMIC_RELEASE);
        q->st_desc_head++;
    }
    gy_stat_add(&q->p_payloads, released);
    compact_staging(q);
    note_staging(q);
    reclaim_detached(q);
    return n;
}

void gy_command_queue_get_stats(const gy_command_queue *q, gy_command_queue_stats *out)
{
    if (out == NULL)
        return;
    *out = (gy_command_queue_stats){0};
    if (q == NULL)
        return;
    for (int r = 0; r < GY_COMMAND_RING_COUNT; r++) {
        out->capacity[r] = gy_spsc_capacity(&q->rings[r]);
        out->ring_high_water[r] = gy_stat_get32(&q->ring_high_water[r]);
    }
    out->batch_capacity = q->desc_size - 1u;
    out->batches_published = gy_stat_get(&q->batches_published);
    out->commands_published = gy_stat_get(&q->commands_published);
    out->batches_deferred = gy_stat_get(&q->batches_deferred);
    out->batches_detached = gy_stat_get(&q->batches_detached);
    out->record_failures = gy_stat_get(&q->record_failures);
    out->staged_high_water = gy_stat_get32(&q->staged_high_water);
    out->staged_batches = gy_stat_get32(&q->staged_batches);
    out->batches_consumed = gy_stat_get(&q->batches_consumed);
    out->commands_consumed = gy_stat_get(&q->commands_consumed);
    out->batches_discarded = gy_stat_get(&q->batches_discarded);
    out->commands_discarded = gy_stat_get(&q->commands_discarded);
    out->payloads_released = gy_stat_get(&q->p_payloads) + gy_stat_get(&q->c_payloads);
    out->acknowledged = gy_command_queue_acknowledged(q);
}
