/* Diagnostics: timing windows and the 5 Hz sampler, published as one copy through a small triple
 * buffer. Compiled out (the sampler and its windows) with the meson option diagnostics=false. */
#include <assert.h>
#include <string.h>

#include "physics_state.h"

#if GY_DIAGNOSTICS

#define SAMPLE_PERIOD_NS 200000000u /* 5 Hz */

void gy_phys_window_add(gy_phys_window *w, uint64_t ns)
{
    w->ns[w->next] = ns;
    w->next = (w->next + 1u) % GY_PHYS_WINDOW;
    if (w->count < GY_PHYS_WINDOW)
        w->count++;
}

/* The k-th smallest of a[0..n) (0-based), moving it to a[k] with nothing larger before it and
 * nothing smaller after: Hoare's selection, linear on average, in place and without allocation.
 * The sampler needs only two order statistics of 1,024 values, three times per sample: a full
 * sort would do n log n work for them. */
static uint64_t select_kth(uint64_t *a, uint32_t n, uint32_t k)
{
    assert(k < n);
    int64_t lo = 0, hi = (int64_t)n - 1;
    while (lo < hi) {
        /* Median of three as the pivot: sorted and reversed windows stay linear. */
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        /* Now a[lo..j] <= pivot <= a[i..hi], and everything between equals the pivot. */
        if ((int64_t)k <= j)
            hi = j;
        else if ((int64_t)k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

gy_physics_timing gy_phys_timing_of(const gy_phys_window *w, uint64_t *scratch)
{
    gy_physics_timing t = {0, 0, 0, 0, w->count};
    if (w->count == 0)
        return t;
    uint32_t n = w->count;
    memcpy(scratch, w->ns, (size_t)n * sizeof(uint64_t));
    double sum = 0.0;
    uint64_t max = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += (double)scratch[i];
        max = scratch[i] > max ? scratch[i] : max;
    }
    uint32_t k50 = (n - 1u) / 2u, k99 = (uint32_t)((uint64_t)(n - 1u) * 99u / 100u);
    /* The p99 selection leaves everything below it in front, where the p50 is then found. */
    uint64_t p99 = select_kth(scratch, n, k99);
    uint64_t p50 = k50 == k99 ? p99 : select_kth(scratch, k99, k50);
    t.mean = sum / (double)n * 1e-9;
    t.p50 = (double)p50 * 1e-9;
    t.p99 = (double)p99 * 1e-9;
    t.max = (double)max * 1e-9;
    return t;
}

void gy_phys_diag_maybe_sample(gy_phys_sim *p, uint64_t real_now)
{
    bool due = p->cfg->lockstep ? p->tick - p->diag_last_tick >= p->cfg->step_hz / 5u
                                : real_now - p->diag_last_ns >= SAMPLE_PERIOD_NS;
    if (!due && p->diag_sample != 0)
        return;
    uint64_t ticks = p->tick - p->diag_last_tick, events = p->events - p->diag_last_events;
    p->diag_last_ns = real_now;
    p->diag_last_tick = p->tick;
    p->diag_last_events = p->events;
    gy_physics_diagnostics *d = gy_triple_buffer_write_buffer(p->cfg->diag_tb);
    memset(d, 0, sizeof *d);
    d->sample = ++p->diag_sample;
    d->tick = p->tick;
    pthread_rwlock_wrlock(&p->sh->sim_lock);
    p->cfg->backend->get_counters(p->world, &d->adapter);
    pthread_rwlock_unlock(&p->sh->sim_lock);
    gy_command_queue_stats cs;
    gy_command_queue_get_stats(p->cfg->commands, &cs);
    d->command_ring_high_water[0] = cs.ring_high_water[GY_COMMAND_LIFECYCLE];
    d->command_ring_high_water[1] = cs.ring_high_water[GY_COMMAND_MUTATE];
    d->command_staged_high_water = cs.staged_high_water;
    gy_reply_queue_stats rs;
    gy_reply_queue_get_stats(p->cfg->replies, &rs);
    d->reply_high_water = rs.high_water;
    d->replies_dropped = rs.dropped;
    d->commands_dropped_stale = gy_phys_get(&p->sh->counters.commands_dropped_stale);
    d->catchup_steps_dropped = gy_phys_get(&p->sh->counters.catchup_steps_dropped);
    d->catchup_time_dropped_s = (double)gy_phys_get(&p->sh->counters.catchup_ns_dropped) * 1e-9;
    d->step = gy_phys_timing_of(&p->win_step, p->diag_sort);
    d->publish = gy_phys_timing_of(&p->win_publish, p->diag_sort);
    d->pacing_error = gy_phys_timing_of(&p->win_pacing, p->diag_sort);
    d->bodies_awake = p->awake.count;
    d->bodies_sleeping = p->movable_bodies - p->awake.count;
    d->bodies_static = p->live_bodies - p->movable_bodies;
    d->characters = p->char_count;
    gy_contact_tracker_stats ts = gy_contact_tracker_get_stats(&p->tracker);
    d->contact_pairs = ts.pairs;
    d->contact_points = p->step_contacts;
    d->events_last_tick = p->tick_events;
    d->events_per_tick = ticks > 0 ? (double)events / (double)ticks : 0.0;
    d->body_slots_live = p->live_bodies;
    d->body_slots_used = p->body_count;
    d->body_slots_capacity = p->body_capacity;
    gy_allocator_meter_read(p->cfg->meter, &d->allocator_live_bytes, &d->allocator_peak_bytes);
    d->geometry_budget = (uint32_t)p->cfg->geo_budget;
    d->geometry_jobs = p->geo_job_count;
    d->geometry_bodies_waiting = p->parked_count;
    d->geometry_bytes_pending = gy_phys_get(&p->sh->counters.geo_bytes_pending);
    uint64_t geo_ns;
    gy_phys_geo_take_max(p, &d->geometry_tick_max_units, &geo_ns);
    d->geometry_tick_max_s = (double)geo_ns * 1e-9;
    gy_triple_buffer_publish(p->cfg->diag_tb, p->tick);
}

gy_result gy_phys_diag_create(gy_physics *p)
{
    gy_triple_buffer_def d;
    memset(&d, 0, sizeof d);
    d.size = sizeof(gy_physics_diagnostics);
    d.allocator = p->cfg.alloc;
    return gy_triple_buffer_create(&d, &p->cfg.diag_tb);
}

void gy_phys_diag_destroy(gy_physics *p)
{
    gy_triple_buffer_destroy(p->cfg.diag_tb);
    p->cfg.diag_tb = NULL;
}

gy_result gy_physics_get_diagnostics(gy_physics *p, gy_physics_diagnostics *out)
{
    if (p == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_physics_diagnostics *d = gy_triple_buffer_read(p->cfg.diag_tb, NULL, NULL);
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
