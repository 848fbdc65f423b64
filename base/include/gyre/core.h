/* Gyre core: the few types every layer shares — scalars and vectors, error codes, the allocator
 * and the log/assert hooks. Nothing here knows about threads, worlds or middleware vendors.
 *
 * Threading: every function in this header is pure or reentrant; call from any thread. */
#ifndef GYRE_CORE_H
#define GYRE_CORE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- vectors --------------------------------------------------------------------------------- */

/* A point or direction in metres (or m/s, N, ...), right-handed, Y up. */
typedef struct gy_vec3 {
    double x, y, z;
} gy_vec3;

/* A unit quaternion, [x, y, z, w] as in scene files. The identity is {0, 0, 0, 1}. */
typedef struct gy_quat {
    double x, y, z, w;
} gy_quat;

/* A rigid transform: rotate, then translate. */
typedef struct gy_pose {
    gy_vec3 position;
    gy_quat rotation;
} gy_pose;

/* A symmetric 3x3 matrix stored row-major (m[row][col]), used for inertia tensors in kg·m². */
typedef struct gy_mat3 {
    double m[3][3];
} gy_mat3;

/* ---- errors ---------------------------------------------------------------------------------- */

/* One table yields both the enum and the messages, so tests can assert the exact code. */
#define GY_ERROR_TABLE(X)                                                                          \
    X(GY_OK, "ok")                                                                                 \
    X(GY_ERR_INVALID_ARGUMENT, "invalid argument")                                                 \
    X(GY_ERR_NON_FINITE, "non-finite number")                                                      \
    X(GY_ERR_STALE_HANDLE, "stale or unknown handle")                                              \
    X(GY_ERR_OUT_OF_MEMORY, "out of memory")                                                       \
    X(GY_ERR_CAPACITY, "capacity exhausted")                                                       \
    X(GY_ERR_UNSUPPORTED, "not supported by this backend")                                         \
    X(GY_ERR_INVALID_SHAPE, "invalid shape parameters")                                            \
    X(GY_ERR_INVALID_MESH, "invalid mesh or hull data")                                            \
    X(GY_ERR_INVALID_MOTION, "shape not allowed for this motion type")                             \
    X(GY_ERR_UNKNOWN_BACKEND, "unknown backend name")                                              \
    X(GY_ERR_WRONG_THREAD, "called from a thread that does not own the object")                    \
    X(GY_ERR_BACKEND, "backend failure")                                                           \
    X(GY_ERR_BUSY, "busy: the operation would block")                                              \
    X(GY_ERR_MISUSE, "API misuse")                                                                 \
    X(GY_ERR_TIMEOUT, "timed out")                                                                 \
    X(GY_ERR_IO, "input/output error")                                                             \
    X(GY_ERR_PARSE, "parse error")                                                                 \
    X(GY_ERR_INACTIVE, "no active physics body (switched off, failed, or physics stopped)")

#define GY_ERROR_ENUM_(name, msg) name,
/* Result of every fallible call. GY_OK is 0; everything else is an error. */
typedef enum gy_result { GY_ERROR_TABLE(GY_ERROR_ENUM_) GY_RESULT_COUNT } gy_result;
#undef GY_ERROR_ENUM_

/* A short, static, human-readable message for a result code (never NULL). */
const char *gy_result_message(gy_result r);

/* The enum name of a result code as a string, e.g. "GY_ERR_NON_FINITE" (never NULL). */
const char *gy_result_name(gy_result r);

/* ---- allocation ------------------------------------------------------------------------------ */

/* A host-supplied allocator. `alloc` returns memory aligned to at least 16 bytes or NULL;
 * `free` receives the size that was asked for. All three functions may be called from whichever
 * thread owns the object being allocated for; the allocator must be safe for that. */
typedef struct gy_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} gy_allocator;

/* The malloc/realloc/free allocator. Used wherever a definition leaves the allocator NULL. */
const gy_allocator *gy_default_allocator(void);

/* Returns `a` when it is non-NULL and complete, otherwise the default allocator. */
const gy_allocator *gy_allocator_or_default(const gy_allocator *a);

/* Convenience wrappers; `a` must not be NULL (resolve it with gy_allocator_or_default first). */
void *gy_alloc(const gy_allocator *a, size_t size);
void *gy_alloc_zeroed(const gy_allocator *a, size_t size);
void *gy_realloc(const gy_allocator *a, void *ptr, size_t old_size, size_t new_size);
void gy_free(const gy_allocator *a, void *ptr, size_t size);

/* The capacity a growable block doubles to, from `capacity` (or `first` when that is 0; 1 when
 * both are), to hold `need` items. 64-bit, so a caller compares it with its own limit before
 * narrowing it; UINT64_MAX, which no limit admits, when doubling would overflow. */
static inline uint64_t gy_capacity_for(uint32_t capacity, uint32_t first, uint64_t need)
{
    uint64_t cap = capacity != 0 ? capacity : first;
    while (cap < need) {
        if (cap > UINT64_MAX / 2u)
            return UINT64_MAX;
        cap = cap != 0 ? cap * 2u : 1u;
    }
    return cap;
}

/* Grows *array (element size `elem`) so it holds at least `need` elements, doubling capacity.
 * Returns GY_OK or GY_ERR_OUT_OF_MEMORY (leaving the array untouched). */
gy_result gy_array_reserve(const gy_allocator *a, void **array, uint32_t *capacity, uint32_t need,
                           size_t elem);

/* ---- logging --------------------------------------------------------------------------------- */

typedef enum gy_log_level { GY_LOG_DEBUG, GY_LOG_INFO, GY_LOG_WARN, GY_LOG_ERROR } gy_log_level;

/* A log sink a host (or a test) can supply; `ctx` is passed back. */
typedef struct gy_logger {
    void (*log)(void *ctx, gy_log_level level, const char *message);
    void *ctx;
} gy_logger;

/* Formats and sends one message through `logger`; a NULL logger or NULL `log` writes to stderr
 * for warnings and errors and drops the rest. */
void gy_log(const gy_logger *logger, gy_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- validation helpers (used at every boundary) --------------------------------------------- */

/* True when the number is neither NaN nor infinite. Inline: these run on every command, contact
 * and snapshot move. */
static inline bool gy_is_finite(double v)
{
    return isfinite(v) != 0;
}
/* `&` rather than `&&`: no branches (these run per body and per contact in hot loops). */
static inline bool gy_vec3_is_finite(gy_vec3 v)
{
    return ((int)gy_is_finite(v.x) & (int)gy_is_finite(v.y) & (int)gy_is_finite(v.z)) != 0;
}
static inline bool gy_quat_is_finite(gy_quat q)
{
    return ((int)gy_is_finite(q.x) & (int)gy_is_finite(q.y) & (int)gy_is_finite(q.z) &
            (int)gy_is_finite(q.w)) != 0;
}
/* True when q is finite and its length is within 1e-3 of 1. */
static inline bool gy_quat_is_unit(gy_quat q)
{
    if (!gy_quat_is_finite(q))
        return false;
    double l = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    return fabs(l - 1.0) <= 1e-3;
}

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CORE_H */
