/* Diagnostics: timing windows and the 5 Hz sampler, published as one copy through a small triple
 * buffer. Compiled out (the sampler and its windows) with the meson option diagnostics=false. */
#include <string.h>

#include "physics_internal.h"

#if GY_DIAGNOSTICS

#define SAMPLE_PERIOD_NS 200000000u /* 5 Hz */

void gy_phys_window_add(gy_phys_window *w, uint64_t ns)
{
    w->ns[w->next] = ns;
    w->next = (w->next + 1u) % GY_PHYS_WINDOW;
    if (w->count < GY_PHYS_WINDOW)
        w->count++;
}

/* In-place heapsort: no allocation (qsort may call malloc), 1,024 values at 5 Hz. */
static void sift_down(uint64_t *a, uint32_t start, uint32_t n)
{
    uint32_t root = start;
    for (;;) {
        uint32_t child = 2u * root + 1u;
        if (child >= n)
            return;
        if (child + 1u < n && a[child + 1u] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void heap_sort(uint64_t *a, uint32_t n)
{
    for (uint32_t i = n / 2u; i-- > 0;)
        sift_down(a, i, n);
    for (uint32_t end = n; end-- > 1;) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

static gy_physics_timing timing_of(gy_physics *p, const gy_phys_window *w)
{
    gy_physics_timing t = {0, 0, 0, 0, w->count};
    if (w->count == 0)
        return t;
    memcpy(p->diag_sort, w->ns, (size_t)w->count * sizeof(uint64_t));
    heap_sort(p->diag_sort, w->count);
    double sum = 0.0;
    for (uint32_t i = 0; i < w->count; i++)
        sum += (double)p->diag_sort[i];
    t.mean = sum / (double)w->count * 1e-9;
    t.p50 = (double)p->diag_sort[(w->count - 1u) / 2u] * 1e-9;
    t.p99 = (double)p->diag_sort[(uint32_t)((uint64_t)(w->count - 1u) * 99u / 100u)] * 1e-9;
    t.max = (double)p->diag_sort[w->count - 1u] * 1e-9;
    return t;
}

void gy_phys_diag_maybe_sample(gy_physics *p, uint64_t real_now)
{
    bool due = p->lockstep ? p->tick - p->diag_last_tick >= p->step_hz / 5u
                           : real_now - p->diag_last_ns >= SAMPLE_PERIOD_NS;
    if (!due && p->diag_sample != 0)
        return;
    p->diag_last_ns = real_now;
    p->diag_last_tick = p->tick;
    gy_physics_diagnostics *d = gy_triple_buffer_write_buffer(p->diag_tb);
    memset(d, 0, sizeof *d);
    d->sample = ++p->diag_sample;
    d->tick = p->tick;
    pthread_rwlock_wrlock(&p->sim_lock);
    p->backend->get_counters(p->world, &d->adapter);
    pthread_rwlock_unlock(&p->sim_lock);
    gy_command_queue_stats cs;
    gy_command_queue_get_stats(p->commands, &cs);
    d->command_ring_high_water[0] = cs.ring_high_water[GY_COMMAND_LIFECYCLE];
    d->command_ring_high_water[1] = cs.ring_high_water[GY_COMMAND_MUTATE];
    d->command_staged_high_water = cs.staged_high_water;
    gy_reply_queue_stats rs;
    gy_reply_queue_get_stats(p->replies, &rs);
    d->reply_high_water = rs.high_water;
    d->replies_dropped = rs.dropped;
    d->commands_dropped_stale = gy_phys_get(&p->counters.commands_dropped_stale);
    d->catchup_steps_dropped = gy_phys_get(&p->counters.catchup_steps_dropped);
    d->catchup_time_dropped_s = (double)gy_phys_get(&p->counters.catchup_ns_dropped) * 1e-9;
    d->step = timing_of(p, &p->win_step);
    d->publish = timing_of(p, &p->win_publish);
    d->pacing_error = timing_of(p, &p->win_pacing);
    gy_triple_buffer_publish(p->diag_tb, p->tick);
}

gy_result gy_phys_diag_create(gy_physics *p)
{
    gy_triple_buffer_def d;
    memset(&d, 0, sizeof d);
    d.size = sizeof(gy_physics_diagnostics);
    d.allocator = p->alloc;
    return gy_triple_buffer_create(&d, &p->diag_tb);
}

void gy_phys_diag_destroy(gy_physics *p)
{
    gy_triple_buffer_destroy(p->diag_tb);
    p->diag_tb = NULL;
}

gy_result gy_physics_get_diagnostics(gy_physics *p, gy_physics_diagnostics *out)
{
    if (p == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_physics_diagnostics *d = gy_triple_buffer_read(p->diag_tb, NULL, NULL);
    if (d == NULL)
        return GY_ERR_BUSY;
    *out = *d;
    return GY_OK;
}

#else

gy_result gy_phys_diag_create(gy_physics *p)
{
    (void)p;
    return GY_OK;
}

void gy_phys_diag_destroy(gy_physics *p)
{
    (void)p;
}

gy_result gy_physics_get_diagnostics(gy_physics *p, gy_physics_diagnostics *out)
{
    (void)p;
    (void)out;
    return GY_ERR_UNSUPPORTED;
}

#endif
