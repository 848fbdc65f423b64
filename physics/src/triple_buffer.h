/* Triple buffer: latest-value exchange from one writer (the physics thread) to one reader (the
 * game thread), used for proxies and query snapshots.
 *
 * Threading contract
 *   - Writer (one thread at a time): gy_triple_buffer_write_buffer, _write_index, _buffer,
 *     _publish.
 *   - Reader (one thread at a time): gy_triple_buffer_read, _read_index.
 *   - Any thread: gy_triple_buffer_latest_tick, gy_triple_buffer_publishes.
 *   - No thread may be using it during _create and _destroy. A role moves to another thread only
 *     across a synchronisation that orders the two (thread create/join).
 *
 * Guarantees
 *   - Both sides are wait-free: publish and read are one atomic exchange each (read does none
 *     when nothing new was published).
 *   - The reader always sees exactly one complete publish, never a mix of two: the buffer it holds
 *     is never written until it reads again.
 *   - Each publish carries the tick it describes; the reader gets it with the data.
 *
 * Ownership of the three buffers rotates: the writer holds one (its back buffer), the reader holds
 * one (its front buffer), the third is the latest publish waiting to be taken. The writer's buffer
 * keeps whatever it held when it was last published or taken back — it is NOT the latest value —
 * so a writer that updates sparsely must know which of the three it is writing
 * (_write_index) and what that buffer last held. The writer may read any of the three buffers
 * (only it ever writes them), e.g. to copy from the one it published last. A payload with
 * growable parts can keep per-buffer arrays the writer resizes only in its own buffer. */
#ifndef GYRE_TRIPLE_BUFFER_H
#define GYRE_TRIPLE_BUFFER_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_triple_buffer gy_triple_buffer;

typedef struct gy_triple_buffer_def {
    size_t size;      /* bytes in each buffer, > 0 */
    void *buffers[3]; /* three distinct caller-owned buffers of `size` bytes (kept, not copied,
                         and not freed), or all NULL: allocated zeroed, 64-byte aligned */
    const gy_allocator *allocator; /* NULL: default */
} gy_triple_buffer_def;

/* Creates a triple buffer. GY_ERR_INVALID_ARGUMENT (size 0, some but not all buffers given, or
 * the same buffer twice); GY_ERR_OUT_OF_MEMORY. */
gy_result gy_triple_buffer_create(const gy_triple_buffer_def *def, gy_triple_buffer **out);

/* Frees the triple buffer (and the buffers it allocated). NULL is ignored. */
void gy_triple_buffer_destroy(gy_triple_buffer *tb);

/* Writer: the buffer it holds now (fill it, then publish). Stays the same until _publish. */
void *gy_triple_buffer_write_buffer(gy_triple_buffer *tb);

/* Writer: which of the three buffers (0, 1, 2) _write_buffer is. */
uint32_t gy_triple_buffer_write_index(const gy_triple_buffer *tb);

/* Writer: buffer `index` (0..2) by index, for reading what it last held; NULL if out of range. */
const void *gy_triple_buffer_buffer(const gy_triple_buffer *tb, uint32_t index);

/* Writer: publishes the writer's buffer as the latest value describing `tick`, and takes another
 * buffer to write. Returns the index just published. */
uint32_t gy_triple_buffer_publish(gy_triple_buffer *tb, uint64_t tick);

/* Reader: the latest published buffer, or NULL before the first publish. The pointer and the data
 * stay valid and unchanged until the reader's next _read. *tick (optional) receives its tick;
 * *fresh (optional) is true when it was published since the previous _read. */
const void *gy_triple_buffer_read(gy_triple_buffer *tb, uint64_t *tick, bool *fresh);

/* Reader: which buffer (0..2) the last _read returned. */
uint32_t gy_triple_buffer_read_index(const gy_triple_buffer *tb);

/* Any thread: the tick of the most recent publish (0 before the first). */
uint64_t gy_triple_buffer_latest_tick(const gy_triple_buffer *tb);

/* Any thread: how many publishes so far. */
uint64_t gy_triple_buffer_publishes(const gy_triple_buffer *tb);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_TRIPLE_BUFFER_H */
