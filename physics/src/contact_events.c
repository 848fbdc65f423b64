#include "contact_events.h"

#include <assert.h>
#include <string.h>

/* A pair is keyed by its two collider handles in ascending order, so an adapter that flips a/b
 * cannot split one pair into two. */
struct gy_contact_pair_ {
    gy_map_key key;
    /* ev.contact: as last reported, in the adapter's a/b orientation. The pair is its own event
     * (tick and type are set when it is emitted) so that handing it over copies nothing. */
    gy_contact_event ev;
    uint64_t seen_tick; /* last update that listed it */
    bool entering;      /* listed for the first time in the current update */
};

static gy_map_key key_of(const gy_contact *c)
{
    uint64_t a = c->collider_a.bits, b = c->collider_b.bits;
    return a < b ? gy_map_key_pair(a, b) : gy_map_key_pair(b, a);
}

/* Makes room for `pairs` pairs (index at most half full) and `events` more events, or changes
 * nothing that callers can observe. */
static gy_result reserve(gy_contact_tracker *t, uint32_t pairs, uint32_t events)
{
    if (pairs > UINT32_MAX / 4u || events > UINT32_MAX - t->event_count)
        return GY_ERR_CAPACITY;
    void *p = t->pairs;
    gy_result r = gy_array_reserve(t->allocator, &p, &t->pair_capacity, pairs, sizeof *t->pairs);
    t->pairs = p;
    if (r != GY_OK)
        return r;
    void *e = t->events;
    r = gy_array_reserve(t->allocator, &e, &t->event_capacity, t->event_count + events,
                         sizeof *t->events);
    t->events = e;
    if (r != GY_OK)
        return r;
    return gy_hash_map_reserve(&t->index, pairs);
}

/* Room for `events` more events: none when they go to on_event. */
static uint32_t events_needed(const gy_contact_tracker *t, uint32_t events)
{
    return t->on_event != NULL ? 0u : events;
}

/* Infallible: reserve() made room. A sleeping STAY and an EXIT report no impulse. */
static void emit(gy_contact_tracker *t, uint64_t tick, gy_contact_event_type type,
                 gy_contact_pair_ *p, bool zero_impulse)
{
    if (t->on_event != NULL && !zero_impulse) {
        p->ev.tick = tick;
        p->ev.type = type;
        t->on_event(t->on_event_ctx, &p->ev);
        return;
    }
    gy_contact_event local;
    gy_contact_event *ev = &local;
    if (t->on_event == NULL) {
        assert(t->event_count < t->event_capacity);
        ev = &t->events[t->event_count++];
    }
    ev->tick = tick;
    ev->type = type;
    ev->contact = p->ev.contact;
    if (zero_impulse) {
        ev->contact.normal_impulse = 0.0;
        ev->contact.tangent_impulse = 0.0;
    }
    if (t->on_event != NULL)
        t->on_event(t->on_event_ctx, ev);
}

/* Forgets pair i; the last pair takes its place. */
static void remove_pair(gy_contact_tracker *t, uint32_t i)
{
    bool removed = gy_hash_map_remove(&t->index, t->pairs[i].key, NULL);
    assert(removed);
    (void)removed;
    uint32_t last = t->pair_count - 1u;
    if (i != last) {
        uint64_t *moved = gy_hash_map_find(&t->index, t->pairs[last].key);
        assert(moved != NULL);
        *moved = i;
        t->pairs[i] = t->pairs[last];
    }
    t->pair_count = last;
    t->stats.pairs = last;
}

static gy_result check_contact(const gy_contact *c)
{
    if (c->body_a.bits == 0 || c->body_b.bits == 0 || c->collider_a.bits == 0 ||
        c->collider_b.bits == 0 || c->collider_a.bits == c->collider_b.bits)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(c->point) || !gy_vec3_is_finite(c->normal) ||
        !gy_is_finite(c->penetration) || !gy_is_finite(c->normal_impulse) ||
        !gy_is_finite(c->tangent_impulse))
        return GY_ERR_NON_FINITE;
    return GY_OK;
}

void gy_contact_tracker_init(gy_contact_tracker *t, const gy_contact_tracker_def *def)
{
    *t = (gy_contact_tracker){0};
    t->allocator = gy_allocator_or_default(def != NULL ? def->allocator : NULL);
    if (def != NULL) {
        t->body_awake = def->body_awake;
        t->body_awake_ctx = def->body_awake_ctx;
        t->on_event = def->on_event;
        t->on_event_ctx = def->on_event_ctx;
    }
    gy_hash_map_init(&t->index, t->allocator);
}

void gy_contact_tracker_fini(gy_contact_tracker *t)
{
    if (t->pairs != NULL)
        gy_free(t->allocator, t->pairs, (size_t)t->pair_capacity * sizeof *t->pairs);
    gy_hash_map_fini(&t->index);
    gy_u32_array_free(t->allocator, &t->found);
    if (t->events != NULL)
        gy_free(t->allocator, t->events, (size_t)t->event_capacity * sizeof *t->events);
    *t = (gy_contact_tracker){0};
}

gy_result gy_contact_tracker_update(gy_contact_tracker *t, uint64_t tick,
                                    const gy_contact *contacts, uint32_t count)
{
    if (t->has_tick && tick <= t->last_tick)
        return GY_ERR_MISUSE;
    if (contacts == NULL && count > 0)
        return GY_ERR_INVALID_ARGUMENT;

    /* Validate everything first, so a bad contact leaves the tracker as it was. */
    for (uint32_t i = 0; i < count; i++) {
        gy_result r = check_contact(&contacts[i]);
        if (r != GY_OK)
            return r;
    }
    if (count > UINT32_MAX - t->pair_count)
        return GY_ERR_CAPACITY;
    gy_result r = gy_u32_array_reserve(t->allocator, &t->found, count);
    if (r != GY_OK)
        return r;

    /* Every contact is looked up before anything changes: that counts the new pairs, so the pairs,
     * the events and the index are sized for what this update adds (nothing, once a pile has
     * formed) and a failed allocation changes nothing. The index is cold after a step (the
     * adapter's solver has been through the cache since) and each contact lands somewhere random
     * in it, so its slots are prefetched AHEAD contacts early. */
    enum { AHEAD = 32 };
    uint32_t missing = 0;
    for (uint32_t j = 0; j < AHEAD && j < count; j++)
        gy_hash_map_prefetch(&t->index, key_of(&contacts[j]));
    for (uint32_t i = 0; i < count; i++) {
        if (i + AHEAD < count)
            gy_hash_map_prefetch(&t->index, key_of(&contacts[i + AHEAD]));
        const uint64_t *v = gy_hash_map_find(&t->index, key_of(&contacts[i]));
        t->found.items[i] = v != NULL ? (uint32_t)*v : UINT32_MAX;
        missing += v == NULL;
    }
    uint32_t most = t->pair_count + missing;
    r = reserve(t, most, events_needed(t, most));
    if (r != GY_OK)
        return r;

    t->has_tick = true;
    t->last_tick = tick;
    /* The pairs are cold too: each is prefetched AHEAD / 2 contacts early. A pair found stays
     * where it is (nothing is removed here); a contact whose pair was not found may meet it added
     * by an earlier contact of this update (the adapter listed the pair twice), which the upsert
     * sees. */
    for (uint32_t i = 0; i < count; i++) {
        const gy_contact *c = &contacts[i];
        if (i + AHEAD / 2 < count && t->found.items[i + AHEAD / 2] != UINT32_MAX) {
            const char *pair = (const char *)&t->pairs[t->found.items[i + AHEAD / 2]];
            __builtin_prefetch(pair, 1);
            __builtin_prefetch(pair + 64, 1);
            __builtin_prefetch(pair + 128, 1);
            __builtin_prefetch(pair + sizeof *t->pairs - 1u, 1);
        }
        uint32_t at = t->found.items[i];
        if (at == UINT32_MAX) {
            gy_map_key k = key_of(c);
            uint64_t *v;
            bool inserted;
            gy_result added = gy_hash_map_upsert(&t->index, k, &v, &inserted);
            assert(added == GY_OK); /* reserve() made room for every missing pair */
            (void)added;
            if (inserted) {
                uint32_t n = t->pair_count++;
                *v = n;
                t->pairs[n] = (gy_contact_pair_){
                    .key = k, .ev.contact = *c, .seen_tick = tick, .entering = true};
                continue;
            }
            at = (uint32_t)*v;
        }
        gy_contact_pair_ *p = &t->pairs[at];
        if (p->seen_tick == tick) {
            t->stats.duplicates++;
            if (c->penetration > p->ev.contact.penetration)
                p->ev.contact = *c;
        } else {
            p->ev.contact = *c;
            p->seen_tick = tick;
        }
    }
    t->stats.pairs = t->pair_count;
    if (t->pair_count > t->stats.peak_pairs)
        t->stats.peak_pairs = t->pair_count;

    /* A removed pair's slot is refilled by the last pair, so i advances only past kept pairs. */
    for (uint32_t i = 0; i < t->pair_count;) {
        gy_contact_pair_ *p = &t->pairs[i];
        if (p->seen_tick == tick) {
            emit(t, tick, p->entering ? GY_CONTACT_EVENT_ENTER : GY_CONTACT_EVENT_STAY, p, false);
            p->entering = false;
            i++;
        } else if (t->body_awake != NULL &&
                   !t->body_awake(t->body_awake_ctx, p->ev.contact.body_a) &&
                   !t->body_awake(t->body_awake_ctx, p->ev.contact.body_b)) {
            emit(t, tick, GY_CONTACT_EVENT_STAY, p, true);
            i++;
        } else {
            emit(t, tick, GY_CONTACT_EVENT_EXIT, p, true);
            remove_pair(t, i);
        }
    }
    return GY_OK;
}

/* Exits every pair for which `match` holds, in table order. */
static gy_result release_where(gy_contact_tracker *t, uint64_t tick,
                               bool (*match)(const gy_contact *c, uint64_t bits), uint64_t bits)
{
    gy_result r = reserve(t, t->pair_count, events_needed(t, t->pair_count));
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < t->pair_count;) {
        if (match(&t->pairs[i].ev.contact, bits)) {
            emit(t, tick, GY_CONTACT_EVENT_EXIT, &t->pairs[i], true);
            remove_pair(t, i);
        } else {
            i++;
        }
    }
    return GY_OK;
}

static bool has_body(const gy_contact *c, uint64_t bits)
{
    return c->body_a.bits == bits || c->body_b.bits == bits;
}

static bool has_collider(const gy_contact *c, uint64_t bits)
{
    return c->collider_a.bits == bits || c->collider_b.bits == bits;
}

gy_result gy_contact_tracker_body_released(gy_contact_tracker *t, uint64_t tick, gy_body_id body)
{
    if (body.bits == 0)
        return GY_ERR_INVALID_ARGUMENT;
    return release_where(t, tick, has_body, body.bits);
}

gy_result gy_contact_tracker_collider_released(gy_contact_tracker *t, uint64_t tick,
                                               gy_collider_id collider)
{
    if (collider.bits == 0)
        return GY_ERR_INVALID_ARGUMENT;
    return release_where(t, tick, has_collider, collider.bits);
}

gy_result gy_contact_tracker_stop(gy_contact_tracker *t, uint64_t tick)
{
    gy_result r = reserve(t, t->pair_count, events_needed(t, t->pair_count));
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < t->pair_count; i++)
        emit(t, tick, GY_CONTACT_EVENT_EXIT, &t->pairs[i], true);
    gy_hash_map_clear(&t->index);
    t->pair_count = 0;
    t->stats.pairs = 0;
    t->has_tick = false;
    return GY_OK;
}

const gy_contact_event *gy_contact_tracker_events(const gy_contact_tracker *t, uint32_t *count)
{
    *count = t->event_count;
    return t->events;
}

void gy_contact_tracker_clear_events(gy_contact_tracker *t)
{
    t->event_count = 0;
}

gy_contact_tracker_stats gy_contact_tracker_get_stats(const gy_contact_tracker *t)
{
    return t->stats;
}
