/* How the physics layer's long-lived tables grow and give memory back (physics*.c and the query
 * snapshot). Two kinds:
 *   - tables with a record per body index, collider slot, proxy page or snapshot slot, which live
 *     as long as the world and keep the size its largest level gave them: they grow by a quarter,
 *     not double, so at most a fifth of one is unused;
 *   - burst lists (per-publish work lists: bodies to read back, proxies changed), whose use is
 *     small at steady state but which a burst of creations fills with every body once: they are
 *     trimmed back once their use has stayed far below their size for a quiet period.
 * Threading: none; a table belongs to its owner's thread. */
#ifndef GY_PHYS_TABLE_GROWTH_H
#define GY_PHYS_TABLE_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "gyre/array.h"
#include "gyre/core.h"

/* The capacity a table of `capacity` grows to for `need` records: by a quarter at a time from at
 * least `first`; UINT64_MAX past what 32 bits index. */
uint64_t gy_phys_table_capacity(uint32_t capacity, uint32_t first, uint64_t need);

/* Grows a zero-filled table (`elem` bytes a record) to hold index `need - 1`, by a quarter at a
 * time (from 64). GY_ERR_OUT_OF_MEMORY changes nothing. */
gy_result gy_phys_table_reserve(const gy_allocator *a, void **table, uint32_t *capacity,
                                uint32_t need, size_t elem);

/* Publishes a burst list must stay quiet (its use at most a quarter of its size) before it is
 * trimmed; the fewest entries a list is trimmed to. */
#define GY_PHYS_BURST_QUIET   64u
#define GY_PHYS_BURST_MIN_CAP 256u

/* A burst list's use since it was last trimmed or busy. */
typedef struct gy_phys_burst {
    uint32_t quiet; /* publishes in a row its use stayed at most a quarter of its capacity */
    uint32_t peak;  /* the most it held in those */
} gy_phys_burst;

/* Notes a list's use (`used`: what it held, before it is cleared); after `quiet_notes` quiet
 * notes in a row, reallocates it to twice the peak of those (at least GY_PHYS_BURST_MIN_CAP), so
 * the use it has at steady state never grows it again. A failed reallocation keeps the list as
 * it was. */
void gy_phys_burst_note(const gy_allocator *a, gy_u32_array *l, gy_phys_burst *b, uint32_t used,
                        uint32_t quiet_notes);

#endif /* GY_PHYS_TABLE_GROWTH_H */
