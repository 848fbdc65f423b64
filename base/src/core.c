#include "gyre/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GY_ERROR_MESSAGE_(name, msg) msg,
#define GY_ERROR_NAME_(name, msg)    #name,
static const char *const result_messages[] = {GY_ERROR_TABLE(GY_ERROR_MESSAGE_)};
static const char *const result_names[] = {GY_ERROR_TABLE(GY_ERROR_NAME_)};

const char *gy_result_message(gy_result r)
{
    if ((unsigned)r >= (unsigned)GY_RESULT_COUNT)
        return "unknown error";
    return result_messages[r];
}

const char *gy_result_name(gy_result r)
{
    if ((unsigned)r >= (unsigned)GY_RESULT_COUNT)
        return "GY_ERR_UNKNOWN";
    return result_names[r];
}

static void *default_alloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *default_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    (void)ctx;
    (void)old_size;
    return realloc(ptr, new_size);
}

static void default_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    free(ptr);
}

static const gy_allocator default_allocator = {default_alloc, default_realloc, default_free, NULL};

const gy_allocator *gy_default_allocator(void)
{
    return &default_allocator;
}

const gy_allocator *gy_allocator_or_default(const gy_allocator *a)
{
    if (a == NULL || a->alloc == NULL || a->realloc == NULL || a->free == NULL)
        return &default_allocator;
    return a;
}

void *gy_alloc(const gy_allocator *a, size_t size)
{
    return a->alloc(a->ctx, size == 0 ? 1 : size);
}

void *gy_alloc_zeroed(const gy_allocator *a, size_t size)
{
    void *p = gy_alloc(a, size);
    if (p != NULL)
        memset(p, 0, size == 0 ? 1 : size);
    return p;
}

void *gy_realloc(const gy_allocator *a, void *ptr, size_t old_size, size_t new_size)
{
    if (ptr == NULL)
        return gy_alloc(a, new_size);
    return a->realloc(a->ctx, ptr, old_size, new_size == 0 ? 1 : new_size);
}

void gy_free(const gy_allocator *a, void *ptr, size_t size)
{
    if (ptr != NULL)
        a->free(a->ctx, ptr, size == 0 ? 1 : size);
}

gy_result gy_array_reserve(const gy_allocator *a, void **array, uint32_t *capacity, uint32_t need,
                           size_t elem)
{
    if (need <= *capacity)
        return GY_OK;
    uint64_t cap = gy_capacity_for(*capacity, 8u, need);
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    if (cap < need || cap * (uint64_t)elem > SIZE_MAX / 2)
        return GY_ERR_OUT_OF_MEMORY;
    void *p = gy_realloc(a, *array, (size_t)*capacity * elem, (size_t)cap * elem);
    if (p == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    *array = p;
    *capacity = (uint32_t)cap;
    return GY_OK;
}

void gy_log(const gy_logger *logger, gy_log_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (logger != NULL && logger->log != NULL) {
        logger->log(logger->ctx, level, buf);
        return;
    }
    if (level >= GY_LOG_WARN)
        fprintf(stderr, "gyre: %s: %s\n", level == GY_LOG_WARN ? "warning" : "error", buf);
}
