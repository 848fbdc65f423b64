#include "concurrency.h"

#include "scene_barrier.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef GY_LOCK_CHECKS
#define GY_LOCK_CHECKS 1
#endif

/* The state word. Every transition is a compare-and-swap (or an and/or that cannot conflict), and
 * both threads sleep on this word with futexes, so a change made while the other side sleeps
 * needs an explicit wake only when the matching *_WAIT / PACE_SLEEP bit says someone sleeps. */
#define S_SAFE       1u  /* the physics thread holds the safe point (pacing or detached) */
#define S_REQUEST    2u  /* the game thread waits for the physics thread to grant */
#define S_OPEN       4u  /* a mutation window is open: the physics thread must not step */
#define S_PHYS_WAIT  8u  /* the physics thread sleeps until S_OPEN clears */
#define S_GAME_WAIT  16u /* the game thread sleeps until S_OPEN is set */
#define S_WAKE       32u /* gy_barrier_wake: the next/current pace returns early */
#define S_PACE_SLEEP 64u /* the physics thread sleeps inside pace_until */

#define DEFAULT_SPIN_MARGIN_NS 1000000u
#define DEFAULT_GRANT_SPIN_NS  200000u
#define DEFAULT_WATCHDOG_NS    250000000u
/* How long the parked physics thread spins before sleeping: mutation windows are usually longer
 * than a futex round trip, so only briefly. */
#define PARK_SPIN_NS 20000u
/* Waits spin with a pause hint this long, then yield the CPU between checks (on an oversubscribed
 * machine the thread we wait for may need our core), then sleep on the futex. */
#define PURE_SPIN_NS 10000u

struct gy_barrier {
    _Alignas(GY_CACHE_LINE) uint32_t state;

    /* written by the physics thread */
    _Alignas(GY_CACHE_LINE) uintptr_t physics_thread;
    uint32_t phys_phase;
    uint64_t phys_phase_ns;
    const char *activity;
    uint64_t safe_points, paces, grants_at_safe_point;

    /* written by the game thread */
    _Alignas(GY_CACHE_LINE) uintptr_t game_thread; /* owner of the request/window, 0 = none */
    uint32_t game_phase;
    uint64_t request_ns, open_ns;
    uint64_t mutations, grants_immediate, grant_max_ns, mutation_max_ns, watchdog_reports;
    uint64_t timeouts;
    uint64_t last_reported_batch;

    /* read-only after create */
    _Alignas(GY_CACHE_LINE) const gy_allocator *alloc;
    uint64_t spin_margin_ns, grant_spin_ns, watchdog_ns;
    gy_watchdog_fn watchdog;
    void *watchdog_ctx;
    const gy_logger *logger;
    const gy_command_queue *commands;
};

#if GY_LOCK_CHECKS
/* Per-thread World-lock depth: the one thread-local in Gyre (see scene_barrier.h). */
static _Thread_local uint32_t world_lock_depth;
#endif

static uintptr_t self_id(void)
{
    return (uintptr_t)pthread_self();
}

static uint32_t load_state(const gy_barrier *b)
{
    return __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
}

static bool cas_state(gy_barrier *b, uint32_t *expected, uint32_t desired)
{
    return __atomic_compare_exchange_n(&b->state, expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* Sleeps while the state word equals `expected`, until woken or the absolute CLOCK_MONOTONIC
 * deadline (0 = none). FUTEX_WAIT_BITSET takes an absolute monotonic deadline, like
 * clock_nanosleep(TIMER_ABSTIME), and unlike it can be woken by gy_barrier_wake. */
static void futex_wait_until(uint32_t *word, uint32_t expected, uint64_t deadline_ns)
{
    struct timespec ts;
    struct timespec *tp = NULL;
    if (deadline_ns != 0) {
        ts.tv_sec = (time_t)(deadline_ns / 1000000000u);
        ts.tv_nsec = (long)(deadline_ns % 1000000000u);
        tp = &ts;
    }
    syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, tp, NULL,
            FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake_all(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX, NULL, NULL, 0);
}

static void set_phys_phase(gy_barrier *b, gy_physics_phase phase, uint64_t now)
{
    __atomic_store_n(&b->phys_phase, (uint32_t)phase, __ATOMIC_RELAXED);
    __atomic_store_n(&b->phys_phase_ns, now, __ATOMIC_RELAXED);
}

static bool is_physics(const gy_barrier *b)
{
    return __atomic_load_n(&b->physics_thread, __ATOMIC_RELAXED) == self_id();
}

static const char *game_phase_name(gy_game_phase p)
{
    switch (p) {
    case GY_GAME_IDLE:
        return "idle";
    case GY_GAME_REQUESTING:
        return "requesting";
    case GY_GAME_MUTATING:
        return "mutating";
    }
    return "?";
}

static const char *physics_phase_name(gy_physics_phase p)
{
    switch (p) {
    case GY_PHYSICS_DETACHED:
        return "detached";
    case GY_PHYSICS_RUNNING:
        return "running";
    case GY_PHYSICS_PACING:
        return "pacing";
    case GY_PHYSICS_PARKED:
        return "parked";
    }
    return "?";
}

/* Game thread. */
static void report(gy_barrier *b, gy_watchdog_event event, uint64_t waited_ns, uint64_t batch_seq)
{
    uint64_t now = gy_clock_now_ns();
    gy_watchdog_report r = {
        .event = event,
        .waited_ns = waited_ns,
        .bound_ns = b->watchdog_ns,
        .game = gy_barrier_game_phase(b),
        .physics = gy_barrier_physics_phase(b),
        .safe_points = __atomic_load_n(&b->safe_points, __ATOMIC_RELAXED),
        .batch_seq = batch_seq,
    };
    const char *label = __atomic_load_n(&b->activity, __ATOMIC_RELAXED);
    r.physics_activity = label != NULL ? label : "";
    uint64_t since = __atomic_load_n(&b->phys_phase_ns, __ATOMIC_RELAXED);
    r.physics_phase_ns = now > since ? now - since : 0;
    if (b->commands != NULL) {
        gy_command_pending p;
        gy_command_queue_pending(b->commands, now, &p);
        r.batches_published = p.published;
        r.batches_acknowledged = p.acknowledged;
        r.batches_staged = p.staged_batches;
    }
    gy_stat_add(&b->watchdog_reports, 1);
    if (b->watchdog != NULL) {
        b->watchdog(b->watchdog_ctx, &r);
        return;
    }
    gy_log(b->logger, GY_LOG_WARN,
           "watchdog: %s waited %.3f ms (bound %.3f ms); game thread %s; physics thread %s "
           "(activity '%s', %.3f ms in that phase, %llu safe points); command batches published "
           "%llu, acknowledged %llu, staged %u",
           event == GY_WATCHDOG_GRANT ? "mutation grant" : "batch acknowledgement",
           (double)r.waited_ns / 1e6, (double)r.bound_ns / 1e6, game_phase_name(r.game),
           physics_phase_name(r.physics), r.physics_activity, (double)r.physics_phase_ns / 1e6,
           (unsigned long long)r.safe_points, (unsigned long long)r.batches_published,
           (unsigned long long)r.batches_acknowledged, r.batches_staged);
}

/* Physics thread: grants a pending request (waking the game thread if it sleeps) and sets
 * `extra` bits, in one transition. */
static void grant_pending(gy_barrier *b, uint32_t extra)
{
    uint32_t s = load_state(b);
    uint32_t desired;
    do {
        desired = s | extra;
        if (s & S_REQUEST)
            desired = (desired & ~(S_REQUEST | S_GAME_WAIT)) | S_OPEN;
    } while (!cas_state(b, &s, desired));
    if (s & S_REQUEST)
        gy_stat_add(&b->grants_at_safe_point, 1);
    if (s & S_GAME_WAIT)
        futex_wake_all(&b->state);
}

/* Physics thread: waits until the open mutation window closes. */
static void park_while_open(gy_barrier *b)
{
    uint32_t before = __atomic_load_n(&b->phys_phase, __ATOMIC_RELAXED);
    uint64_t start = gy_clock_now_ns();
    set_phys_phase(b, GY_PHYSICS_PARKED, start);
    uint64_t now = start;
    for (uint32_t i = 0;; i++) {
        uint32_t s = load_state(b);
        if (!(s & S_OPEN))
            break;
        if ((i & 15) == 0)
            now = gy_clock_now_ns();
        if (now - start < PARK_SPIN_NS) {
            if (now - start < PURE_SPIN_NS)
                gy_cpu_relax();
            else
                sched_yield();
            continue;
        }
        if (!(s & S_PHYS_WAIT)) {
            if (!cas_state(b, &s, s | S_PHYS_WAIT))
                continue;
            s |= S_PHYS_WAIT;
        }
        futex_wait_until(&b->state, s, 0);
    }
    set_phys_phase(b, (gy_physics_phase)before, gy_clock_now_ns());
}

gy_result gy_barrier_create(const gy_barrier_def *def, gy_barrier **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_barrier_def d = def != NULL ? *def : (gy_barrier_def){0};
    const gy_allocator *a = gy_allocator_or_default(d.allocator);
    gy_barrier *b = gy_conc_alloc_aligned(a, sizeof *b);
    if (b == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    b->alloc = a;
    b->spin_margin_ns = d.spin_margin_ns ? d.spin_margin_ns : DEFAULT_SPIN_MARGIN_NS;
    b->grant_spin_ns = d.grant_spin_ns ? d.grant_spin_ns : DEFAULT_GRANT_SPIN_NS;
    b->watchdog_ns = d.watchdog_ns ? d.watchdog_ns : DEFAULT_WATCHDOG_NS;
    b->watchdog = d.watchdog;
    b->watchdog_ctx = d.watchdog_ctx;
    b->logger = d.logger;
    b->commands = d.commands;
    b->state = S_SAFE;
    b->phys_phase = GY_PHYSICS_DETACHED;
    b->phys_phase_ns = gy_clock_now_ns();
    *out = b;
    return GY_OK;
}

void gy_barrier_destroy(gy_barrier *b)
{
    if (b != NULL)
        gy_conc_free_aligned(b->alloc, b, sizeof *b);
}

/* ---- physics thread ------------------------------------------------------------------------- */

gy_result gy_barrier_attach_physics(gy_barrier *b)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uintptr_t me = self_id();
    uintptr_t expected = 0;
    if (!__atomic_compare_exchange_n(&b->physics_thread, &expected, me, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return expected == me ? GY_ERR_MISUSE : GY_ERR_BUSY;
    if (__atomic_load_n(&b->game_thread, __ATOMIC_ACQUIRE) == me) {
        /* The game thread cannot become the physics thread while it owns a mutation. */
        __atomic_store_n(&b->physics_thread, 0, __ATOMIC_RELEASE);
        return GY_ERR_WRONG_THREAD;
    }
    for (;;) {
        uint32_t s = load_state(b);
        if (s & S_OPEN) {
            park_while_open(b);
            continue;
        }
        if (cas_state(b, &s, s & ~S_SAFE))
            break;
    }
    set_phys_phase(b, GY_PHYSICS_RUNNING, gy_clock_now_ns());
    return GY_OK;
}

gy_result gy_barrier_detach_physics(gy_barrier *b)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!is_physics(b))
        return GY_ERR_WRONG_THREAD;
    grant_pending(b, S_SAFE);
    set_phys_phase(b, GY_PHYSICS_DETACHED, gy_clock_now_ns());
    __atomic_store_n(&b->physics_thread, 0, __ATOMIC_RELEASE);
    return GY_OK;
}

gy_result gy_barrier_safe_point(gy_barrier *b)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!is_physics(b))
        return GY_ERR_WRONG_THREAD;
    gy_stat_add(&b->safe_points, 1);
    if (load_state(b) & S_REQUEST) {
        grant_pending(b, 0);
        park_while_open(b);
    }
    __atomic_store_n(&b->phys_phase_ns, gy_clock_now_ns(), __ATOMIC_RELAXED);
    return GY_OK;
}

gy_result gy_barrier_pace_until(gy_barrier *b, uint64_t deadline_ns, bool *woken)
{
    if (woken != NULL)
        *woken = false;
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!is_physics(b))
        return GY_ERR_WRONG_THREAD;
    gy_stat_add(&b->paces, 1);
    gy_stat_add(&b->safe_points, 1);
    /* From here until we leave, the game thread grants itself. */
    grant_pending(b, S_SAFE);
    set_phys_phase(b, GY_PHYSICS_PACING, gy_clock_now_ns());
    bool was_woken = false;
    for (;;) {
        uint32_t s = load_state(b);
        if (s & S_OPEN) {
            park_while_open(b);
            continue;
        }
        if (s & S_WAKE) {
            if (cas_state(b, &s, s & ~S_WAKE)) {
                was_woken = true;
                break;
            }
            continue;
        }
        uint64_t now = gy_clock_now_ns();
        if (now >= deadline_ns)
            break;
        if (deadline_ns - now > b->spin_margin_ns) {
            if (!(s & S_PACE_SLEEP)) {
                if (!cas_state(b, &s, s | S_PACE_SLEEP))
                    continue;
                s |= S_PACE_SLEEP;
            }
            futex_wait_until(&b->state, s, deadline_ns - b->spin_margin_ns);
            __atomic_fetch_and(&b->state, ~S_PACE_SLEEP, __ATOMIC_ACQ_REL);
            continue;
        }
        gy_cpu_relax();
    }
    /* Leave only with no window open, in one transition, so a grant cannot slip in between. */
    for (;;) {
        uint32_t s = load_state(b);
        if (s & S_OPEN) {
            park_while_open(b);
            continue;
        }
        if (cas_state(b, &s, s & ~(S_SAFE | S_PACE_SLEEP)))
            break;
    }
    set_phys_phase(b, GY_PHYSICS_RUNNING, gy_clock_now_ns());
    if (woken != NULL)
        *woken = was_woken;
    return GY_OK;
}

void gy_barrier_set_activity(gy_barrier *b, const char *label)
{
    if (b != NULL)
        __atomic_store_n(&b->activity, label, __ATOMIC_RELAXED);
}

void gy_barrier_wake(gy_barrier *b)
{
    if (b == NULL)
        return;
    uint32_t old = __atomic_fetch_or(&b->state, S_WAKE, __ATOMIC_ACQ_REL);
    if (old & S_PACE_SLEEP)
        futex_wake_all(&b->state);
}

/* ---- game thread ----------------------------------------------------------------------------- */

/* Waits for the physics thread to grant a posted request. GY_OK or GY_ERR_TIMEOUT (withdrawn). */
static gy_result wait_grant(gy_barrier *b, uint64_t t0, uint64_t timeout_ns)
{
    uint64_t spin_end = t0 + b->grant_spin_ns;
    uint64_t deadline = timeout_ns != 0 ? t0 + timeout_ns : 0;
    uint64_t watch_at = b->watchdog_ns != UINT64_MAX ? t0 + b->watchdog_ns : 0;
    bool reported = false;
    for (;;) {
        uint32_t s = load_state(b);
        if (s & S_OPEN)
            return GY_OK;
        uint64_t now = gy_clock_now_ns();
        if (!reported && watch_at != 0 && now >= watch_at) {
            report(b, GY_WATCHDOG_GRANT, now - t0, 0);
            reported = true;
        }
        if (deadline != 0 && now >= deadline) {
            for (;;) {
                if (s & S_OPEN)
                    return GY_OK; /* granted while we gave up: take it */
                if (cas_state(b, &s, s & ~(S_REQUEST | S_GAME_WAIT)))
                    return GY_ERR_TIMEOUT;
            }
        }
        if (now < spin_end) {
            if (now - t0 < PURE_SPIN_NS)
                gy_cpu_relax();
            else
                sched_yield();
            continue;
        }
        if (!(s & S_GAME_WAIT)) {
            if (!cas_state(b, &s, s | S_GAME_WAIT))
                continue;
            s |= S_GAME_WAIT;
        }
        uint64_t wake_at = deadline;
        if (!reported && watch_at != 0 && (wake_at == 0 || watch_at < wake_at))
            wake_at = watch_at;
        futex_wait_until(&b->state, s, wake_at);
    }
}

gy_result gy_barrier_begin_mutation(gy_barrier *b, uint64_t timeout_ns)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
#if GY_LOCK_CHECKS
    if (world_lock_depth > 0) {
        gy_log(b->logger, GY_LOG_ERROR,
               "lock order violated: scene barrier requested while this thread holds %u World "
               "lock(s); take the barrier first, then the World lock",
               world_lock_depth);
        abort();
    }
#endif
    uintptr_t me = self_id();
    if (__atomic_load_n(&b->physics_thread, __ATOMIC_RELAXED) == me)
        return GY_ERR_WRONG_THREAD;
    uintptr_t owner = 0;
    if (!__atomic_compare_exchange_n(&b->game_thread, &owner, me, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return owner == me ? GY_ERR_MISUSE : GY_ERR_BUSY;

    uint64_t t0 = gy_clock_now_ns();
    __atomic_store_n(&b->request_ns, t0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->game_phase, (uint32_t)GY_GAME_REQUESTING, __ATOMIC_RELAXED);
    bool immediate = false;
    uint32_t s = load_state(b);
    for (;;) {
        if (s & S_SAFE) {
            if (cas_state(b, &s, s | S_OPEN)) {
                immediate = true;
                break;
            }
        } else if (cas_state(b, &s, s | S_REQUEST)) {
            break;
        }
    }
    if (!immediate) {
        gy_result r = wait_grant(b, t0, timeout_ns);
        if (r != GY_OK) {
            gy_stat_add(&b->timeouts, 1);
            __atomic_store_n(&b->game_phase, (uint32_t)GY_GAME_IDLE, __ATOMIC_RELAXED);
            __atomic_store_n(&b->game_thread, 0, __ATOMIC_RELEASE);
            return r;
        }
    }
    uint64_t now = gy_clock_now_ns();
    gy_stat_add(&b->mutations, 1);
    if (immediate)
        gy_stat_add(&b->grants_immediate, 1);
    gy_stat_max64(&b->grant_max_ns, now - t0);
    __atomic_store_n(&b->open_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&b->game_phase, (uint32_t)GY_GAME_MUTATING, __ATOMIC_RELAXED);
    return GY_OK;
}

gy_result gy_barrier_end_mutation(gy_barrier *b)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uintptr_t me = self_id();
    if (__atomic_load_n(&b->physics_thread, __ATOMIC_RELAXED) == me)
        return GY_ERR_WRONG_THREAD;
    uintptr_t owner = __atomic_load_n(&b->game_thread, __ATOMIC_ACQUIRE);
    if (owner == 0)
        return GY_ERR_MISUSE;
    if (owner != me)
        return GY_ERR_WRONG_THREAD;
    if (__atomic_load_n(&b->game_phase, __ATOMIC_RELAXED) != GY_GAME_MUTATING)
        return GY_ERR_MISUSE; /* e.g. from a watchdog callback while still requesting */
    uint64_t now = gy_clock_now_ns();
    gy_stat_max64(&b->mutation_max_ns, now - __atomic_load_n(&b->open_ns, __ATOMIC_RELAXED));
    __atomic_store_n(&b->game_phase, (uint32_t)GY_GAME_IDLE, __ATOMIC_RELAXED);
    uint32_t old = __atomic_fetch_and(&b->state, ~(S_OPEN | S_PHYS_WAIT), __ATOMIC_ACQ_REL);
    if (old & S_PHYS_WAIT)
        futex_wake_all(&b->state);
    __atomic_store_n(&b->game_thread, 0, __ATOMIC_RELEASE);
    return GY_OK;
}

bool gy_barrier_in_mutation(const gy_barrier *b)
{
    return b != NULL && __atomic_load_n(&b->game_thread, __ATOMIC_ACQUIRE) == self_id() &&
           __atomic_load_n(&b->game_phase, __ATOMIC_RELAXED) == GY_GAME_MUTATING;
}

bool gy_barrier_poll_watchdog(gy_barrier *b)
{
    if (b == NULL || b->commands == NULL || b->watchdog_ns == UINT64_MAX)
        return false;
    gy_command_pending p;
    gy_command_queue_pending(b->commands, gy_clock_now_ns(), &p);
    if (p.oldest_seq == 0 || p.oldest_age_ns <= b->watchdog_ns ||
        p.oldest_seq == b->last_reported_batch)
        return false;
    b->last_reported_batch = p.oldest_seq;
    report(b, GY_WATCHDOG_BATCH_ACK, p.oldest_age_ns, p.oldest_seq);
    return true;
}

/* ---- any thread ------------------------------------------------------------------------------ */

void gy_barrier_get_stats(const gy_barrier *b, gy_barrier_stats *out)
{
    if (out == NULL)
        return;
    *out = (gy_barrier_stats){0};
    if (b == NULL)
        return;
    out->mutations = gy_stat_get(&b->mutations);
    out->grants_immediate = gy_stat_get(&b->grants_immediate);
    out->grants_at_safe_point = gy_stat_get(&b->grants_at_safe_point);
    out->grant_max_ns = gy_stat_get(&b->grant_max_ns);
    out->mutation_max_ns = gy_stat_get(&b->mutation_max_ns);
    out->safe_points = gy_stat_get(&b->safe_points);
    out->paces = gy_stat_get(&b->paces);
    out->watchdog_reports = gy_stat_get(&b->watchdog_reports);
    out->timeouts = gy_stat_get(&b->timeouts);
}

gy_physics_phase gy_barrier_physics_phase(const gy_barrier *b)
{
    return b != NULL ? (gy_physics_phase)__atomic_load_n(&b->phys_phase, __ATOMIC_RELAXED)
                     : GY_PHYSICS_DETACHED;
}

gy_game_phase gy_barrier_game_phase(const gy_barrier *b)
{
    return b != NULL ? (gy_game_phase)__atomic_load_n(&b->game_phase, __ATOMIC_RELAXED)
                     : GY_GAME_IDLE;
}

/* ---- World-lock order checks ----------------------------------------------------------------- */

bool gy_world_lock_checks_enabled(void)
{
    return GY_LOCK_CHECKS != 0;
}

void gy_world_lock_note_acquired(void)
{
#if GY_LOCK_CHECKS
    world_lock_depth++;
#endif
}

void gy_world_lock_note_released(void)
{
#if GY_LOCK_CHECKS
    if (world_lock_depth == 0) {
        gy_log(NULL, GY_LOG_ERROR, "World lock released by a thread that holds none");
        abort();
    }
    world_lock_depth--;
#endif
}

uint32_t gy_world_lock_depth(void)
{
#if GY_LOCK_CHECKS
    return world_lock_depth;
#else
    return 0;
#endif
}
