/* The hash map every module uses: a 128-bit key (two 64-bit words: a pair of handles, a pair of
 * pointers, a cell's coordinates or one id with b = 0) to a 64-bit value (an index, a handle, a
 * pointer).
 *
 * Open addressing with linear probing over a power-of-two table kept at most half full. Removal
 * shifts the later entries of a probe run back into the hole, so there are no tombstones: lookups
 * never skip dead slots and a table never fills up with them, and a map that has reached its peak
 * size never allocates again. Emptying the map is O(1): a slot is live only while its tag equals
 * the map's epoch, and clearing moves the epoch on.
 *
 * Threading: none. A map belongs to one thread at a time. */
#ifndef GYRE_HASH_MAP_H
#define GYRE_HASH_MAP_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A key: two words compared as a pair. A one-word key leaves b at 0. */
typedef struct gy_map_key {
    uint64_t a, b;
} gy_map_key;

typedef struct gy_map_slot_ {
    gy_map_key key;
    uint64_t value;
    uint64_t tag; /* == the map's epoch while live */
} gy_map_slot_;

/* Map state. A zero-initialised map is empty and valid and uses the default allocator;
 * gy_hash_map_init gives it another. */
typedef struct gy_hash_map {
    const gy_allocator *allocator;
    gy_map_slot_ *slots;
    uint32_t capacity; /* power of two, or 0 before the first insert */
    uint32_t count;    /* live entries */
    uint64_t epoch;    /* tag of live slots (0 only before the first table) */
} gy_hash_map;

/* The key of a pair of words, and of one word. */
static inline gy_map_key gy_map_key_pair(uint64_t a, uint64_t b)
{
    gy_map_key k = {a, b};
    return k;
}
static inline gy_map_key gy_map_key_of(uint64_t a)
{
    gy_map_key k = {a, 0};
    return k;
}

/* The key's hash: a multiply-xorshift mix of both words, good in its low bits (which index). */
static inline uint32_t gy_map_key_hash(gy_map_key k)
{
    uint64_t h =
        k.a * 0x9E3779B97F4A7C15ull ^ (k.b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* Prepares an empty map. `allocator` NULL means the default allocator. Allocates nothing. */
void gy_hash_map_init(gy_hash_map *m, const gy_allocator *allocator);

/* Frees the table. The map is empty (and reusable) afterwards. */
void gy_hash_map_fini(gy_hash_map *m);

/* Grows the table so `count` entries fit without another allocation. GY_OK, or
 * GY_ERR_OUT_OF_MEMORY (the map unchanged) when the table cannot be allocated or would exceed
 * 2^30 slots. */
gy_result gy_hash_map_reserve(gy_hash_map *m, uint32_t count);

/* The value stored under `key`, or NULL when there is none. The pointer stays valid until the
 * next insert or remove. */
static inline uint64_t *gy_hash_map_find(const gy_hash_map *m, gy_map_key key)
{
    if (m->count == 0)
        return NULL;
    uint32_t mask = m->capacity - 1u;
    for (uint32_t i = gy_map_key_hash(key) & mask;; i = (i + 1u) & mask) {
        gy_map_slot_ *s = &m->slots[i];
        if (s->tag != m->epoch)
            return NULL;
        if (s->key.a == key.a && s->key.b == key.b)
            return &s->value;
    }
}

/* Asks the cache for the slot where a lookup of `key` starts, for a caller about to look up many
 * keys that are cold (a pair list read after a physics step): issued a few keys ahead, it overlaps
 * their misses. Only a hint; any map, empty included, is fine. */
static inline void gy_hash_map_prefetch(const gy_hash_map *m, gy_map_key key)
{
    if (m->capacity != 0)
        __builtin_prefetch(&m->slots[gy_map_key_hash(key) & (m->capacity - 1u)]);
}

/* Finds `key` or adds it in one probe: *value points at its value (a new entry's is 0) and
 * *inserted says which. GY_ERR_OUT_OF_MEMORY (the map unchanged) when a new key needs a larger
 * table that cannot be allocated. */
gy_result gy_hash_map_upsert(gy_hash_map *m, gy_map_key key, uint64_t **value, bool *inserted);

/* Stores `value` under `key`, replacing an earlier value. GY_OK or GY_ERR_OUT_OF_MEMORY (the map
 * unchanged). */
gy_result gy_hash_map_put(gy_hash_map *m, gy_map_key key, uint64_t value);

/* Removes `key`; its value goes to *value when `value` is not NULL. False when it was absent. */
bool gy_hash_map_remove(gy_hash_map *m, gy_map_key key, uint64_t *value);

/* Empties the map in O(1), keeping its table. */
void gy_hash_map_clear(gy_hash_map *m);

/* Iteration: start with *cursor = 0; each call gives the next live entry and returns true, or
 * false at the end. Order is the table's. Inserting or removing during a walk ends it (start
 * again); changing *value through gy_hash_map_find does not. */
bool gy_hash_map_next(const gy_hash_map *m, uint32_t *cursor, gy_map_key *key, uint64_t *value);

/* Slot-by-slot access, for a walk that stops and resumes at any slot and costs the same for a
 * live slot as for an empty one (a pass sliced by a work budget): whether slot i (below
 * m->capacity) holds a live entry, with its key and value (either pointer may be NULL). */
static inline bool gy_hash_map_slot(const gy_hash_map *m, uint32_t i, gy_map_key *key,
                                    uint64_t *value)
{
    const gy_map_slot_ *s = &m->slots[i];
    if (s->tag != m->epoch)
        return false;
    if (key != NULL)
        *key = s->key;
    if (value != NULL)
        *value = s->value;
    return true;
}

#ifdef __cplusplus
}
#endif

#endif /* GYRE_HASH_MAP_H */
