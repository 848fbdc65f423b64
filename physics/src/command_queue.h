/* Command queue: the game thread's changes travel to the physics thread as sealed batches of
 * fixed-size commands over two single-producer single-consumer rings (lifecycle and mutate).
 *
 * Threading contract
 *   - Producer (the game thread): gy_command_queue_record, _publish, _flush, _discard_open,
 *     _wait_acknowledged, _published, _pending. One producer at a time.
 *   - Consumer (the physics thread): gy_command_queue_acquire, gy_command_batch_next,
 *     gy_command_queue_release, _drain. One consumer at a time.
 *   - Any thread: gy_command_queue_acknowledged, gy_command_queue_stats.
 *   - No thread may be using the queue during _create, _destroy and _discard_sealed; the last is
 *     for a hard stop, called by the producer after the consumer thread was joined.
 *   - A role may move to another thread only across a synchronisation that orders the two
 *     (thread create/join, a mutex). Overlapping consumer calls from two threads are detected at
 *     _acquire and overlapping publishes at _publish (GY_ERR_MISUSE); nothing is detected per
 *     record, which stays a plain copy.
 *
 * Guarantees
 *   - _publish seals everything recorded since the previous publish into one batch across both
 *     rings. The consumer sees whole batches only, in publish order, and within a batch every
 *     lifecycle command before any mutate command, each ring in record order.
 *   - Recording never blocks and never drops. When a ring is full the open batch moves to
 *     game-side staging (grown to its peak, so no allocation in steady state; returned once it
 *     has stayed empty for 64 publishes) and later
 *     publishes/flushes carry staged batches into the rings, oldest first. A batch larger than a
 *     ring travels whole in a detached block handed over by pointer.
 *   - Payloads (optional owned pointers) are released exactly once through the queue's release
 *     callback: after the consumer releases the batch (unless it took the payload), or when the
 *     batch is discarded or the queue destroyed.
 *   - Every batch has a sequence number (1, 2, 3, ...); the consumer acknowledges each batch it
 *     finished, so the game thread (or a watchdog) can see unacknowledged work. */
#ifndef GYRE_COMMAND_QUEUE_H
#define GYRE_COMMAND_QUEUE_H

#include "gyre/clock.h"
#include "gyre/core.h"
#include "gyre/physics/command.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the queue ------------------------------------------------------------------------------- */

typedef struct gy_command_queue gy_command_queue;

/* Releases one command's payload. Called on the consumer thread for consumed batches and on the
 * calling thread for discarded ones (_discard_sealed, _discard_open, _destroy); the command is
 * passed whole so the callback can dispatch on its type. */
typedef void (*gy_command_release_fn)(void *ctx, gy_command *cmd);

typedef struct gy_command_queue_def {
    const gy_allocator *allocator; /* NULL: default. Used by the producer thread only. */
    /* Commands each ring holds at once (rounded up so ring size is a power of two); a larger
     * batch travels detached. 0 = 4,095 lifecycle and 16,383 mutate. Max 2^26. */
    uint32_t lifecycle_capacity;
    uint32_t mutate_capacity;
    /* Sealed batches in flight in the rings (more wait in staging). 0 = 255. Max 2^20. */
    uint32_t batch_capacity;
    /* Required to record commands with payloads (record fails with GY_ERR_INVALID_ARGUMENT). */
    gy_command_release_fn release_payload;
    void *release_ctx;
} gy_command_queue_def;

/* Counters. Producer fields are exact on the producer thread; from any other thread every field
 * is individually current but the set is not one snapshot. */
typedef struct gy_command_queue_stats {
    uint32_t capacity[GY_COMMAND_RING_COUNT]; /* usable commands per ring */
    uint32_t batch_capacity;
    uint64_t batches_published;  /* sealed (non-empty) batches */
    uint64_t commands_published; /* commands in them */
    uint64_t batches_deferred;   /* sealed into staging because a ring was full */
    uint64_t batches_detached;   /* larger than a ring: handed over as a detached block */
    uint64_t record_failures;    /* records refused: staging could not grow (out of memory) */
    uint32_t ring_high_water[GY_COMMAND_RING_COUNT]; /* most commands resident in a ring */
    uint32_t staged_high_water;                      /* most commands waiting in staging */
    uint32_t staged_batches;                         /* sealed batches waiting in staging now */
    uint64_t batches_consumed;                       /* released by the consumer */
    uint64_t commands_consumed;
    uint64_t batches_discarded; /* by _discard_sealed / _discard_open / _destroy */
    uint64_t commands_discarded;
    uint64_t payloads_released; /* release callbacks made */
    uint64_t acknowledged;      /* sequence of the last batch consumed or discarded */
} gy_command_queue_stats;

/* What the producer knows about outstanding work (for watchdogs and lockstep waits). */
typedef struct gy_command_pending {
    uint64_t published;      /* sequence of the last sealed batch (0: none yet) */
    uint64_t acknowledged;   /* last batch consumed or discarded */
    uint32_t staged_batches; /* sealed but still game-side */
    uint32_t open_commands;  /* recorded since the last publish */
    /* Age of the oldest unacknowledged batch in ns (0 when none). Exact while at most 256
     * batches are outstanding, otherwise the age of the oldest one remembered (a lower bound). */
    uint64_t oldest_age_ns;
    uint64_t oldest_seq; /* acknowledged + 1 when something is outstanding, else 0 */
} gy_command_pending;

/* Creates a queue. GY_ERR_INVALID_ARGUMENT for a capacity out of range; GY_ERR_OUT_OF_MEMORY. */
gy_result gy_command_queue_create(const gy_command_queue_def *def, gy_command_queue **out);

/* Releases every payload still held (open, staged, sealed, detached) and frees the queue.
 * NULL is ignored. No other thread may be using it. */
void gy_command_queue_destroy(gy_command_queue *q);

/* Producer: appends a copy of *cmd to the open batch on `ring`. Never blocks. GY_OK, or
 * GY_ERR_INVALID_ARGUMENT (NULL, bad ring, payload flag without a release callback) or
 * GY_ERR_OUT_OF_MEMORY (staging could not grow; counted; nothing recorded and the caller still
 * owns the payload). */
gy_result gy_command_queue_record(gy_command_queue *q, gy_command_ring ring, const gy_command *cmd);

/* Producer: seals the open batch (if it holds any command) and carries staged batches into the
 * rings as far as they fit. *seq (optional) receives the batch's sequence, or the last sequence
 * when nothing was recorded (so waiting for it waits for everything recorded so far). GY_OK;
 * GY_ERR_OUT_OF_MEMORY when a full ring forced staging that could not grow (the batch stays open,
 * nothing is lost; publish again later); GY_ERR_MISUSE for overlapping publishes. */
gy_result gy_command_queue_publish(gy_command_queue *q, uint64_t *seq);

/* Producer: carries staged batches into the rings without sealing; returns how many remain
 * staged. Publish does this too; call it while waiting for the consumer. */
uint32_t gy_command_queue_flush(gy_command_queue *q);

/* Producer: drops the open (unsealed) batch, releasing its payloads; returns its command count. */
uint32_t gy_command_queue_discard_open(gy_command_queue *q);

/* Producer: waits (spinning, then yielding; flushing staging as it goes) until batch `seq` is
 * acknowledged. GY_OK, or GY_ERR_TIMEOUT after timeout_ns (0 = no limit), or
 * GY_ERR_INVALID_ARGUMENT for a sequence never published. */
gy_result gy_command_queue_wait_acknowledged(gy_command_queue *q, uint64_t seq,
                                             uint64_t timeout_ns);

/* Producer: the sequence of the last sealed batch (0 before the first). */
uint64_t gy_command_queue_published(const gy_command_queue *q);

/* Producer: outstanding-work summary; `now_ns` is gy_clock_now_ns() (gyre/clock.h). */
void gy_command_queue_pending(const gy_command_queue *q, uint64_t now_ns, gy_command_pending *out);

/* Any thread: the sequence of the last batch the consumer finished (or that was discarded). */
uint64_t gy_command_queue_acknowledged(const gy_command_queue *q);

/* A batch the consumer holds between _acquire and _release. Fields marked private belong to the
 * iterator. Commands stay valid (and may be modified, e.g. to take a payload) until _release. */
typedef struct gy_command_batch {
    uint64_t seq;                          /* publish sequence */
    uint64_t published_ns;                 /* when it was sealed (gy_clock_now_ns) */
    uint32_t count[GY_COMMAND_RING_COUNT]; /* commands per ring */
    /* private */
    struct {
        gy_command *base;
        uint32_t mask, pos, left;
    } it_[GY_COMMAND_RING_COUNT];
    uint32_t ring_;
    uint32_t payloads_;
    gy_command *detached_;
    uint32_t detached_count_;
    uint32_t held_;
} gy_command_batch;

/* Consumer: takes the oldest sealed batch. true with *batch filled, false when none is ready
 * (or, misuse, when a batch is already held: release it first). */
bool gy_command_queue_acquire(gy_command_queue *q, gy_command_batch *batch);

/* Consumer: the batch's next command — lifecycle ring first, then mutate — or NULL at the end.
 * *ring (optional) receives the command's ring. */
static inline gy_command *gy_command_batch_next(gy_command_batch *b, gy_command_ring *ring)
{
    while (b->ring_ < (uint32_t)GY_COMMAND_RING_COUNT) {
        if (b->it_[b->ring_].left != 0) {
            b->it_[b->ring_].left--;
            gy_command *c = &b->it_[b->ring_].base[b->it_[b->ring_].pos & b->it_[b->ring_].mask];
            b->it_[b->ring_].pos++;
            if (ring != NULL)
                *ring = (gy_command_ring)b->ring_;
            return c;
        }
        b->ring_++;
    }
    return NULL;
}

/* Consumer: finishes the held batch: releases payloads not taken, frees its ring space and
 * acknowledges its sequence. GY_ERR_MISUSE if `batch` is not the held batch. */
gy_result gy_command_queue_release(gy_command_queue *q, gy_command_batch *batch);

/* Called by _drain once per command, in delivery order. */
typedef void (*gy_command_fn)(void *ctx, uint64_t seq, gy_command_ring ring, gy_command *cmd);

/* Consumer: acquire → every command → release, for up to max_batches batches (0 = all ready).
 * Returns the number of batches drained. */
uint32_t gy_command_queue_drain(gy_command_queue *q, uint32_t max_batches, gy_command_fn fn,
                                void *ctx);

/* Hard stop, producer thread, consumer joined: discards every sealed batch (in the rings and in
 * staging), releasing payloads and acknowledging them. The open batch is kept. Returns the
 * number of commands discarded. */
uint64_t gy_command_queue_discard_sealed(gy_command_queue *q);

/* Any thread: counters (see gy_command_queue_stats). */
void gy_command_queue_get_stats(const gy_command_queue *q, gy_command_queue_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_COMMAND_QUEUE_H */
