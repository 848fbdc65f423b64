#include "gyre/hash_map.h"

#include <assert.h>
#include <string.h>

#define MIN_CAPACITY 16u
#define MAX_CAPACITY (1u << 30)

void gy_hash_map_init(gy_hash_map *m, const gy_allocator *allocator)
{
    memset(m, 0, sizeof *m);
    m->allocator = gy_allocator_or_default(allocator);
    m->epoch = 1;
}

void gy_hash_map_fini(gy_hash_map *m)
{
    const gy_allocator *a = gy_allocator_or_default(m->allocator);
    if (m->slots != NULL)
        gy_free(a, m->slots, (size_t)m->capacity * sizeof *m->slots);
    gy_hash_map_init(m, a);
}

/* The slot holding `key`, or the empty slot where it would go. Needs a table with an empty
 * slot, which the half-full bound guarantees. */
static uint32_t probe(const gy_hash_map *m, gy_map_key key)
{
    uint32_t mask = m->capacity - 1u;
    uint32_t i = gy_map_key_hash(key) & mask;
    while (m->slots[i].tag == m->epoch &&
           (m->slots[i].key.a != key.a || m->slots[i].key.b != key.b))
        i = (i + 1u) & mask;
    return i;
}

gy_result gy_hash_map_reserve(gy_hash_map *m, uint32_t count)
{
    uint64_t want = (uint64_t)count * 2u;
    if (want <= m->capacity)
        return GY_OK;
    uint64_t cap = gy_capacity_for(m->capacity, MIN_CAPACITY, want);
    if (cap > MAX_CAPACITY)
        return GY_ERR_OUT_OF_MEMORY;
    const gy_allocator *al = gy_allocator_or_default(m->allocator);
    gy_map_slot_ *slots = gy_alloc_zeroed(al, (size_t)cap * sizeof *slots);
    if (slots == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_hash_map old = *m;
    m->slots = slots;
    m->capacity = (uint32_t)cap;
    m->epoch = 1;
    for (uint32_t i = 0; i < old.capacity; i++) {
        const gy_map_slot_ *s = &old.slots[i];
        if (s->tag != old.epoch)
            continue;
        gy_map_slot_ *d = &m->slots[probe(m, s->key)];
        d->key = s->key;
        d->value = s->value;
        d->tag = m->epoch;
    }
    if (old.slots != NULL)
        gy_free(al, old.slots, (size_t)old.capacity * sizeof *old.slots);
    return GY_OK;
}

gy_result gy_hash_map_upsert(gy_hash_map *m, gy_map_key key, uint64_t **value, bool *inserted)
{
    uint32_t at = 0;
    if (m->capacity != 0) {
        at = probe(m, key);
        if (m->slots[at].tag == m->epoch) {
            *value = &m->slots[at].value;
            *inserted = false;
            return GY_OK;
        }
    }
    uint32_t capacity = m->capacity;
    gy_result r = gy_hash_map_reserve(m, m->count + 1u);
    if (r != GY_OK)
        return r;
    /* The empty slot the probe stopped at is still the key's unless the table was rebuilt. */
    if (m->capacity != capacity)
        at = probe(m, key);
    gy_map_slot_ *s = &m->slots[at];
    s->key = key;
    s->value = 0;
    s->tag = m->epoch;
    m->count++;
    *value = &s->value;
    *inserted = true;
    return GY_OK;
}

gy_result gy_hash_map_put(gy_hash_map *m, gy_map_key key, uint64_t value)
{
    uint64_t *v;
    bool inserted;
    gy_result r = gy_hash_map_upsert(m, key, &v, &inserted);
    if (r == GY_OK)
        *v = value;
    return r;
}

bool gy_hash_map_remove(gy_hash_map *m, gy_map_key key, uint64_t *value)
{
    if (m->count == 0)
        return false;
    uint32_t hole = probe(m, key);
    if (m->slots[hole].tag != m->epoch)
        return false;
    if (value != NULL)
        *value = m->slots[hole].value;
    /* Pull each later entry of the run back into the hole when the hole lies on its probe path
     * (between its home slot and where it stands), so no lookup ever meets a gap before its key. */
    uint32_t mask = m->capacity - 1u;
    for (uint32_t j = (hole + 1u) & mask; m->slots[j].tag == m->epoch; j = (j + 1u) & mask) {
        uint32_t home = gy_map_key_hash(m->slots[j].key) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].tag = 0;
    m->count--;
    return true;
}

void gy_hash_map_clear(gy_hash_map *m)
{
    m->count = 0;
    if (++m->epoch == 0) {
        /* 2^64 clears: every old tag could now read as live, so forget them all. */
        if (m->slots != NULL)
            memset(m->slots, 0, (size_t)m->capacity * sizeof *m->slots);
        m->epoch = 1;
    }
}

bool gy_hash_map_next(const gy_hash_map *m, uint32_t *cursor, gy_map_key *key, uint64_t *value)
{
    for (uint32_t i = *cursor; i < m->capacity; i++) {
        if (m->slots[i].tag != m->epoch)
            continue;
        *cursor = i + 1u;
        if (key != NULL)
            *key = m->slots[i].key;
        if (value != NULL)
            *value = m->slots[i].value;
        return true;
    }
    *cursor = m->capacity;
    return false;
}
