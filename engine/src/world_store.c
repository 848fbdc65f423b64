/* The component store (dense data, sparse entity map, swap-remove). */
#include <string.h>

#include "world_internal.h"

gy_result gy_w_reserve_zeroed(const gy_allocator *a, void **array, uint32_t *capacity,
                              uint32_t need, size_t elem)
{
    uint32_t old = *capacity;
    gy_result r = gy_array_reserve(a, array, capacity, need, elem);
    if (r == GY_OK && *capacity > old)
        memset((unsigned char *)*array + (size_t)old * elem, 0, (size_t)(*capacity - old) * elem);
    return r;
}

gy_result gy_w_grow(const gy_allocator *a, void **array, uint32_t *capacity, uint32_t need,
                    size_t elem)
{
    if (need <= *capacity)
        return GY_OK;
    uint64_t cap = *capacity < 8u ? 8u : *capacity;
    while (cap < need)
        cap += cap / 8u < 16u ? 16u : cap / 8u;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    if (cap * (uint64_t)elem > SIZE_MAX / 2)
        return GY_ERR_OUT_OF_MEMORY;
    void *p = gy_realloc(a, *array, (size_t)*capacity * elem, (size_t)cap * elem);
    if (p == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    *array = p;
    *capacity = (uint32_t)cap;
    return GY_OK;
}

/* ---- tables by ref index --------------------------------------------------------------------- */

gy_result gy_w_ref_table_reserve(const gy_allocator *a, gy_w_ref_table *t, uint32_t more)
{
    uint64_t need = (uint64_t)t->held + more + 1u; /* indices from 1 */
    if (need > UINT32_MAX)
        return GY_ERR_OUT_OF_MEMORY;
    return gy_w_reserve_zeroed(a, (void **)&t->handles, &t->capacity, (uint32_t)need,
                               sizeof *t->handles);
}

void gy_w_ref_table_clear(gy_w_ref_table *t)
{
    if (t->handles != NULL)
        memset(t->handles, 0, (size_t)t->capacity * sizeof *t->handles);
    t->held = 0;
}

void gy_w_ref_table_free(const gy_allocator *a, gy_w_ref_table *t)
{
    if (t->handles != NULL)
        gy_free(a, t->handles, (size_t)t->capacity * sizeof *t->handles);
    *t = (gy_w_ref_table){0};
}

/* ---- store ----------------------------------------------------------------------------------- */

void gy_w_store_init(gy_w_store *s, size_t elem)
{
    memset(s, 0, sizeof *s);
    s->elem = elem;
}

void gy_w_store_init_named(gy_w_store *s, size_t elem, gy_w_store_entity_fn entity_of,
                           const void *ctx)
{
    gy_w_store_init(s, elem);
    s->entity_of = entity_of;
    s->entity_ctx = ctx;
}

void gy_w_store_fini(gy_w_store *s, const gy_allocator *a)
{
    if (s->sparse != NULL)
        gy_free(a, s->sparse, (size_t)s->sparse_capacity * sizeof *s->sparse);
    if (s->dense_entity != NULL)
        gy_free(a, s->dense_entity, (size_t)s->entity_capacity * sizeof *s->dense_entity);
    if (s->data != NULL)
        gy_free(a, s->data, (size_t)s->capacity * s->elem);
    gy_w_store_init_named(s, s->elem, s->entity_of, s->entity_ctx);
}

gy_result gy_w_store_add(gy_w_store *s, const gy_allocator *a, uint32_t entity, void **out)
{
    if (entity >= s->sparse_capacity) {
        uint32_t old = s->sparse_capacity;
        gy_result r =
            gy_w_grow(a, (void **)&s->sparse, &s->sparse_capacity, entity + 1u, sizeof *s->sparse);
        if (r != GY_OK)
            return r;
        memset(s->sparse + old, 0, (size_t)(s->sparse_capacity - old) * sizeof *s->sparse);
    }
    if (s->entity_of == NULL && s->count == s->entity_capacity) {
        gy_result r = gy_w_grow(a, (void **)&s->dense_entity, &s->entity_capacity, s->count + 1u,
                                sizeof *s->dense_entity);
        if (r != GY_OK)
            return r;
    }
    if (s->count == s->capacity) {
        gy_result r = gy_w_grow(a, (void **)&s->data, &s->capacity, s->count + 1u, s->elem);
        if (r != GY_OK)
            return r;
    }
    uint32_t d = s->count++;
    if (s->entity_of == NULL)
        s->dense_entity[d] = entity;
    s->sparse[entity] = d + 1u;
    void *p = gy_w_store_at(s, d);
    memset(p, 0, s->elem);
    *out = p;
    return GY_OK;
}

void gy_w_store_remove(gy_w_store *s, uint32_t entity)
{
    if (entity >= s->sparse_capacity || s->sparse[entity] == 0)
        return;
    uint32_t d = s->sparse[entity] - 1u;
    uint32_t last = s->count - 1u;
    if (d != last) {
        memcpy(gy_w_store_at(s, d), gy_w_store_at(s, last), s->elem);
        uint32_t moved;
        if (s->entity_of != NULL) {
            moved = s->entity_of(s->entity_ctx, gy_w_store_at(s, d));
        } else {
            moved = s->dense_entity[last];
            s->dense_entity[d] = moved;
        }
        s->sparse[moved] = d + 1u;
    }
    s->sparse[entity] = 0;
    s->count = last;
}
