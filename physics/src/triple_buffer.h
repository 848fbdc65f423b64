/* Triple buffer: latest-value exchange from one writer (the physics thread) to one reader (the
 * game thread), used for proxies and query snapshots.
 *
 * Threading contract
 *   - Writer (one thread at a time): gy_triple_buffer_write_buffer, _write_index, _buffer,
 *     _publish.
 *   - Reader (one thread at a time): gy_triple_buffer_read, _read_index, _keep.
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
 * growable parts can keep per-buffer arrays the writer resizes only in its own buffer.
 *
 * Keeping (def.reader_keeps): a fourth buffer lets the reader keep one publish it read
 * (_keep) unchanged while it reads on: the reader then holds two buffers, its front and the kept
 * one (or a spare), and the writer never gets the kept one back until the reader keeps another
 * and reads past it. So a reader can look up what an older publish said after taking a newer
 * one, and other reads on the same side (one thread at a time) cannot take it away. */
#ifndef GYRE_TRIPLE_BUFFER_H
#define GYRE_TRIPLE_BUFFER_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_triple_buffer gy_triple_buffer;

typedef struct gy_triple_buffer_def {
    size_t size;      /* bytes in each buffer, > 0 */
    void *buffers[4]; /* three (four with reader_keeps) distinct caller-owned buffers of `size`
                         bytes (kept, not copied, and not freed), or all NULL: allocated zeroed,
                         64-byte aligned */
    const gy_allocator *allocator; /* NULL: default */
    bool reader_keeps;             /* a fourth buffer: the reader may _keep a publish */
} gy_triple_buffer_def;

/* Creates a triple buffer. GY_ERR_INVALID_ARGUMENT (size 0, some but not all buffers given, a
 * fourth given without reader_keeps, or the same buffer twice); GY_ERR_OUT_OF_MEMORY. */
gy_result gy_triple_buffer_create(const gy_triple_buffer_def *def, gy_triple_buffer **out);

/* Frees the triple buffer (and the buffers it allocated). NULL is ignored. */
void gy_triple_buffer_destroy(gy_triple_buffer *tb);

/* Writer: the buffer it holds now (fill it, then publish). Stays the same until _publish. */
void *gy_triple_buffer_write_buffer(gy_triple_buffer *tb);

/* Writer: which of the buffers (0..2, 0..3 with reader_keeps) _write_buffer is. */
uint32_t gy_triple_buffer_write_index(const gy_triple_buffer *tb);

/* Writer: buffer `index` by index, for reading what it last held; NULL if out of range. */
const void *gy_triple_buffer_buffer(const gy_triple_buffer *tb, uint32_t index);

/* Writer: publishes the writer's buffer as the latest value describing `tick`, and takes another
 * buffer to write. Returns the index just published. */
uint32_t gy_triple_buffer_publish(gy_triple_buffer *tb, uint64_t tick);

/* Reader: the latest published buffer, or NULL before the first publish. The pointer and the data
 * stay valid and unchanged until the reader's next _read. *tick (optional) receives its tick;
 * *fresh (optional) is true when it was published since the previous _read. */
const void *gy_triple_buffer_read(gy_triple_buffer *tb, uint64_t *tick, bool *fresh);

/* Reader: which buffer (0..2, 0..3 with reader_keeps) the last _read returned. */
uint32_t gy_triple_buffer_read_index(const gy_triple_buffer *tb);

/* Reader (reader_keeps only): keeps the buffer the last _read returned, unchanged until the
 * reader keeps another and then reads a newer publish; the one kept before is let go. Returns
 * it (NULL before the first publish, or without reader_keeps). */
const void *gy_triple_buffer_keep(gy_triple_buffer *tb);

/* Any thread: the tick of the most recent publish (0 before the first). */
uint64_t gy_triple_buffer_latest_tick(const gy_triple_buffer *tb);

/* Any thread: how many publishes so far. */
uint64_t gy_triple_buffer_publishes(const gy_triple_buffer *tb);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_TRIPLE_BUFFER_H */
