/* Scene barrier: lets the game thread open a mutation window (additive load/unload, recreating
 * bodies) during which the physics thread does not step, without joining the thread.
 *
 * Threading contract
 *   - Physics thread (the one that called _attach_physics, until _detach_physics):
 *     gy_barrier_safe_point, _pace_until, _set_activity, _detach_physics.
 *   - Game thread (any thread except the attached physics thread; one mutation at a time):
 *     gy_barrier_begin_mutation, _end_mutation, _poll_watchdog.
 *   - Any thread: gy_barrier_wake, gy_barrier_get_stats, gy_clock_now_ns and the
 *     World-lock notes (which act on the calling thread).
 *   - No thread may be using it during _create and _destroy.
 *
 * Behaviour
 *   - While no physics thread is attached the safe point is held, so a mutation is granted at once.
 *   - _safe_point (between steps): grants a pending request and returns only after that mutation
 *     ends. A request made mid-step is therefore granted at the end of that step, never inside it.
 *   - _pace_until(deadline) holds the safe point for the whole wait: the game thread grants itself
 *     a mutation with one compare-and-swap on the barrier's state word (no syscall, no wake-up of
 *     the physics thread). The physics thread sleeps (absolute deadline) until a spin margin
 *     before the deadline and then spins; it never returns while a mutation is open, and keeps
 *     pacing after one ends.
 *   - Misuse returns an error and never hangs: nested begin (GY_ERR_MISUSE), end without begin
 *     (GY_ERR_MISUSE), begin or end from the physics thread or end from a thread other than the
 *     one that began (GY_ERR_WRONG_THREAD), a second game thread beginning while a mutation is
 *     requested or open (GY_ERR_BUSY), physics calls from another thread (GY_ERR_WRONG_THREAD).
 *   - Lock order (barrier first, then World lock): with the `lock_checks` build option the engine
 *     reports World-lock acquire/release through gy_world_lock_note_*; requesting the barrier
 *     while the calling thread holds a World lock aborts the process with a message. The depth is
 *     kept in a thread-local counter (the one piece of thread-local state in Gyre: the question is
 *     "does this thread hold a lock", which no context object can answer).
 *   - Watchdog: a grant, or a command-batch acknowledgement (when a command queue is watched),
 *     slower than `watchdog_ns` is reported once per request/batch through the watchdog callback
 *     (or the logger), with both threads' states. */
#ifndef GYRE_SCENE_BARRIER_H
#define GYRE_SCENE_BARRIER_H

#include "command_queue.h"
#include "gyre/core.h"
#include "gyre/physics/barrier.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_barrier_def {
    const gy_allocator *allocator; /* NULL: default */
    /* _pace_until sleeps until this long before the deadline, then spins. 0 = 1 ms. */
    uint64_t spin_margin_ns;
    /* _begin_mutation spins this long for a mid-step grant before sleeping. 0 = 200 µs. */
    uint64_t grant_spin_ns;
    /* Watchdog bound for grants and batch acknowledgements. 0 = 250 ms; UINT64_MAX = off. */
    uint64_t watchdog_ns;
    gy_watchdog_fn watchdog; /* NULL: log a warning through `logger` */
    void *watchdog_ctx;
    const gy_logger *logger; /* NULL: stderr */
    /* Optional: whose batch acknowledgements _poll_watchdog watches. Not owned. */
    const gy_command_queue *commands;
} gy_barrier_def;

/* Creates a barrier (no physics thread attached). GY_ERR_OUT_OF_MEMORY. */
gy_result gy_barrier_create(const gy_barrier_def *def, gy_barrier **out);

/* Frees it. NULL is ignored. */
void gy_barrier_destroy(gy_barrier *b);

/* ---- physics thread ------------------------------------------------------------------------- */

/* Physics thread, first call: registers the calling thread and releases the safe point (the thread
 * is now "running"). Waits for a mutation that is open to end first. GY_ERR_BUSY if another thread
 * is attached. */
gy_result gy_barrier_attach_physics(gy_barrier *b);

/* Physics thread, last call before it exits: holds the safe point for good (granting a pending
 * request) and forgets the thread. GY_ERR_WRONG_THREAD from another thread. */
gy_result gy_barrier_detach_physics(gy_barrier *b);

/* Physics thread, between steps: when a mutation was requested, grants it and returns after it
 * ends; otherwise returns at once (no syscall, no lock). GY_OK or GY_ERR_WRONG_THREAD. */
gy_result gy_barrier_safe_point(gy_barrier *b);

/* Physics thread: waits until gy_clock_now_ns() >= deadline_ns holding the safe point (see the
 * header comment) and returns with no mutation open. Returns early if gy_barrier_wake was
 * called since the last pace (then *woken, optional, is true). GY_OK or GY_ERR_WRONG_THREAD. */
gy_result gy_barrier_pace_until(gy_barrier *b, uint64_t deadline_ns, bool *woken);

/* Physics thread: a static label naming what it is doing ("drain", "step", ...) for watchdog
 * reports. The string must outlive the barrier. */
void gy_barrier_set_activity(gy_barrier *b, const char *label);

/* Any thread: makes the physics thread's current (or next) _pace_until return early, e.g. to stop
 * it or to hand it a lockstep tick. This one does wake a sleeping thread. */
void gy_barrier_wake(gy_barrier *b);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_SCENE_BARRIER_H */
