/* Test-only fault injection for the middleware contract: a gy_backend table that wraps a real
 * adapter (found by name in the registry) and makes the Nth create call of a category fail with a
 * chosen gy_result, delegating every other call unchanged.
 *
 * Categories: bodies (body_create), resources (mesh_create and hull_create together) and joints
 * (joint_create). Calls are counted per category and overall (1-based, successful or not); a call
 * fails when its per-category number equals that category's fail_at, or its overall number equals
 * fail_any_at. An injected failure creates nothing in the wrapped adapter.
 *
 * Finding the wrapper from world_create: the contract passes no context pointer, so a world of
 * this table must be created with the wrapper's own allocator (`allocator` below, which forwards
 * to the target allocator given at init). gy_physics passes its allocator to world_create, so set
 * gy_physics_def.allocator = &fb.allocator and gy_physics_def.backend_table = &fb.table (an
 * allocator meter over it, as the World and the subsystem put there, is seen through). A world
 * created with any other allocator is refused with GY_ERR_INVALID_ARGUMENT.
 *
 * Leak accounting: just before a world is destroyed, the wrapped adapter's counters are read, so
 * a test can check that everything it released really was released (live_at_destroy == 0). The
 * adapters answer any thread once none is bound, which is the case when gy_physics destroys a
 * stopped world. `leak_per_body_release` injects a leak to show such a check failing: after each
 * body release the wrapper creates one hull resource in the wrapped adapter and never releases it.
 *
 * Threading: counters are atomics; the wrapped calls run on whichever thread the caller uses (the
 * wrapped adapter's own threading rules apply). Set the fail_* fields before creating a world. */
#ifndef GYRE_TEST_FAULT_BACKEND_H
#define GYRE_TEST_FAULT_BACKEND_H

#include "gyre/backend/backend.h"

typedef enum gy_fault_kind {
    GY_FAULT_BODY = 0,     /* body_create */
    GY_FAULT_RESOURCE = 1, /* mesh_create, hull_create */
    GY_FAULT_JOINT = 2,    /* joint_create */
    GY_FAULT_KIND_COUNT
} gy_fault_kind;

typedef struct gy_fault_backend {
    gy_backend table;        /* pass &fb.table wherever an adapter table is taken */
    gy_allocator allocator;  /* create worlds with this one (forwards to `target`) */
    const gy_backend *inner; /* the wrapped adapter */
    const gy_allocator *target;
    char name[32]; /* "fault:" + the wrapped adapter's name */

    /* ---- configuration ---- */
    gy_result fail_result; /* returned by an injected failure; default GY_ERR_BACKEND */
    uint64_t fail_at[GY_FAULT_KIND_COUNT]; /* per-category call number to fail; 0 = never */
    uint64_t fail_any_at;                  /* overall call number to fail; 0 = never */
    bool leak_per_body_release;            /* leave one adapter object behind per body release */

    /* ---- counters (read with gy_fault_backend_get or after the threads are joined) ---- */
    uint64_t calls[GY_FAULT_KIND_COUNT]; /* create calls seen per category */
    uint64_t calls_any;                  /* over all categories */
    uint64_t injected;                   /* failures injected */
    uint64_t leaked;                     /* objects leaked by leak_per_body_release */
    uint64_t worlds_created;
    uint64_t worlds_destroyed;
    uint32_t live_at_destroy;     /* wrapped adapter's live_objects before the last world_destroy */
    uint32_t max_live_at_destroy; /* the largest such value seen */
} gy_fault_backend;

/* Wraps the adapter registered as `inner_name`; worlds allocate through `target` (NULL: the
 * default allocator). Counters start at 0, nothing is set to fail. GY_ERR_UNKNOWN_BACKEND. */
gy_result gy_fault_backend_init(gy_fault_backend *fb, const char *inner_name,
                                const gy_allocator *target);

/* Clears the counters (not the configuration). No world may be alive. */
void gy_fault_backend_reset(gy_fault_backend *fb);

/* An atomic read of one counter field (any thread). */
uint64_t gy_fault_backend_get(const uint64_t *counter);

#endif
