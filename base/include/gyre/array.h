/* The typed growable array every module uses: GY_ARRAY_DEFINE(name, T) declares
 *   typedef struct name { T *items; uint32_t count, capacity; } name;
 * with name_reserve, name_push and name_free, all grown through gy_array_reserve (capacity
 * doubles), so an array that has reached its peak size never allocates again. Zero-initialise one
 * to start empty. gy_u32_array, the array of uint32 (indices, handles' slots), is declared here.
 *
 * Threading: none. An array belongs to one thread at a time. */
#ifndef GYRE_ARRAY_H
#define GYRE_ARRAY_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An array defined in a .c file need not use all three functions (clang warns of an unused
 * static inline function there, gcc does not). */
#if defined(__GNUC__) || defined(__clang__)
#define GY_ARRAY_FN __attribute__((unused)) static inline
#else
#define GY_ARRAY_FN static inline
#endif

#define GY_ARRAY_DEFINE(name, T)                                                                   \
    typedef struct name {                                                                          \
        T *items;                                                                                  \
        uint32_t count, capacity;                                                                  \
    } name;                                                                                        \
    /* Grows the array to hold `need` items. GY_OK or GY_ERR_OUT_OF_MEMORY (array unchanged). */   \
    GY_ARRAY_FN gy_result name##_reserve(const gy_allocator *a, name *v, uint32_t need)            \
    {                                                                                              \
        if (need <= v->capacity)                                                                   \
            return GY_OK;                                                                          \
        void *items = v->items;                                                                    \
        gy_result r = gy_array_reserve(a, &items, &v->capacity, need, sizeof(T));                  \
        v->items = (T *)items;                                                                     \
        return r;                                                                                  \
    }                                                                                              \
    /* Appends `value`, growing only when full. GY_OK or GY_ERR_OUT_OF_MEMORY (unchanged). */      \
    GY_ARRAY_FN gy_result name##_push(const gy_allocator *a, name *v, T value)                     \
    {                                                                                              \
        if (v->count == v->capacity) {                                                             \
            gy_result r = name##_reserve(a, v, v->count + 1u);                                     \
            if (r != GY_OK)                                                                        \
                return r;                                                                          \
        }                                                                                          \
        v->items[v->count++] = value;                                                              \
        return GY_OK;                                                                              \
    }                                                                                              \
    /* Frees the items; the array is empty afterwards. */                                          \
    GY_ARRAY_FN void name##_free(const gy_allocator *a, name *v)                                   \
    {                                                                                              \
        if (v->items != NULL)                                                                      \
            gy_free(a, v->items, (size_t)v->capacity * sizeof(T));                                 \
        v->items = NULL;                                                                           \
        v->count = v->capacity = 0;                                                                \
    }

GY_ARRAY_DEFINE(gy_u32_array, uint32_t)

#ifdef __cplusplus
}
#endif

#endif /* GYRE_ARRAY_H */
