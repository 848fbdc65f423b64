/* Capture and replay of the thread boundary (gyre/physics/capture_stream.h).
 *
 * The buffer is a single-producer single-consumer byte ring: the physics thread appends whole
 * records and publishes them by moving `head` (release); the game thread copies out up to `head`
 * and moves `tail`. A record that does not fit is not written: the physics thread sets
 * `overflowed` and writes nothing more, so the stream never has a hole in the middle, and the end
 * of the capture reports the overflow. The switch on and off happens with the physics thread
 * parked at a safe point (the scene barrier), so it never sees a half-made capture. */
#include <stddef.h>
#include <string.h>

#include "gyre/math.h"
#include "physics_state.h"

#define CAPTURE_DEFAULT_BYTES (16u << 20)
#define CAPTURE_MIN_BYTES     (4u << 10)
#define CAPTURE_MAX_BYTES     (1u << 30)
#define SWITCH_TIMEOUT_NS     10000000000ull

/* ---- hashing --------------------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t size)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < size; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define FNV_OFFSET 0xcbf29ce484222325ull

/* ---- physics thread: writing ----------------------------------------------------------------- */

static bool capture_on(const gy_phys_sim *p)
{
    return __atomic_load_n(&p->sh->cap.active, __ATOMIC_ACQUIRE) != 0 &&
           __atomic_load_n(&p->sh->cap.overflowed, __ATOMIC_RELAXED) == 0;
}

/* Reserves `size` bytes at the writer's position; false (and the capture marked overflowed at
 * `tick`) when they do not fit. */
static bool reserve(gy_phys_sim *p, size_t size, uint64_t tick)
{
    uint64_t tail = __atomic_load_n(&p->sh->cap.tail, __ATOMIC_ACQUIRE);
    if (p->sh->cap.head - tail + size > p->sh->cap.capacity) {
        p->sh->cap.overflow_tick = tick;
        __atomic_store_n(&p->sh->cap.overflowed, 1u, __ATOMIC_RELEASE);
        gy_log(p->cfg->logger, GY_LOG_ERROR,
               "physics: capture buffer full at tick %llu (%llu bytes): the capture stops here",
               (unsigned long long)tick, (unsigned long long)p->sh->cap.capacity);
        return false;
    }
    return true;
}

/* Copies into the ring at head + *at (not yet published). */
static void put(gy_phys_sim *p, uint64_t *at, const void *data, size_t size)
{
    const unsigned char *b = data;
    while (size > 0) {
        uint64_t pos = (p->sh->cap.head + *at) & (p->sh->cap.capacity - 1u);
        size_t n = (size_t)(p->sh->cap.capacity - pos);
        if (n > size)
            n = size;
        memcpy(p->sh->cap.buf + pos, b, n);
        b += n;
        size -= n;
        *at += n;
    }
}

static void put_zeros(gy_phys_sim *p, uint64_t *at, size_t size)
{
    static const unsigned char zeros[8];
    put(p, at, zeros, size);
}

static void publish(gy_phys_sim *p, uint64_t size)
{
    __atomic_store_n(&p->sh->cap.head, p->sh->cap.head + size, __ATOMIC_RELEASE);
}

static size_t payload_size(const gy_command *c)
{
    const void *pl = gy_command_payload(c);
    return pl != NULL ? *(const size_t *)pl : 0u;
}

void gy_phys_capture_batch(gy_phys_sim *p, const gy_command_batch *batch)
{
    if (!capture_on(p))
        return;
    uint64_t tick = p->tick + 1u;
    /* The iterator is plain data: a copy walks the batch without consuming it. */
    gy_command_batch walk = *batch;
    gy_command *c;
    size_t size = sizeof(gy_capture_record) + sizeof(gy_capture_batch);
    uint32_t count = 0;
    while ((c = gy_command_batch_next(&walk, NULL)) != NULL) {
        size +=
            sizeof(gy_capture_command) + sizeof(gy_command) + gy_capture_padded(payload_size(c));
        count++;
    }
    if (size - sizeof(gy_capture_record) > UINT32_MAX) {
        reserve(p, (size_t)p->sh->cap.capacity + 1u, tick); /* cannot be one record: overflow */
        return;
    }
    if (!reserve(p, size, tick))
        return;
    uint64_t at = 0;
    gy_capture_record rec = {GY_CAPTURE_BATCH, (uint32_t)(size - sizeof rec)};
    gy_capture_batch hdr = {tick, batch->seq, count, 0};
    put(p, &at, &rec, sizeof rec);
    put(p, &at, &hdr, sizeof hdr);
    walk = *batch;
    gy_command_ring ring;
    while ((c = gy_command_batch_next(&walk, &ring)) != NULL) {
        size_t ps = payload_size(c);
        gy_capture_command ch = {(uint32_t)ring, (uint32_t)ps};
        gy_command copy = *c;
        if (ps > 0)
            copy.body.payload.ptr = NULL; /* an address means nothing in a file */
        put(p, &at, &ch, sizeof ch);
        put(p, &at, &copy, sizeof copy);
        if (ps > 0) {
            put(p, &at, gy_command_payload(c), ps);
            put_zeros(p, &at, gy_capture_padded(ps) - ps);
        }
    }
    publish(p, at);
}

void gy_phys_capture_state(gy_phys_sim *p)
{
    if (!capture_on(p))
        return;
    uint32_t live = 0;
    for (uint32_t i = 0; i < p->body_count; i++)
        live += p->bodies[i].id.bits != 0;
    size_t size = sizeof(gy_capture_record) + sizeof(gy_capture_state) +
                  (size_t)live * sizeof(gy_capture_body);
    if (!reserve(p, size, p->tick))
        return;
    uint64_t at = sizeof(gy_capture_record) + sizeof(gy_capture_state);
    uint64_t all = FNV_OFFSET;
    for (uint32_t i = 0; i < p->body_count; i++) {
        const gy_phys_body *e = &p->bodies[i];
        if (e->id.bits == 0)
            continue;
        gy_body_state st;
        memset(&st, 0, sizeof st);
        double v[13] = {0};
        if (p->cfg->backend->body_get_state(p->world, e->id, &st) == GY_OK) {
            v[0] = st.pose.position.x, v[1] = st.pose.position.y, v[2] = st.pose.position.z;
            v[3] = st.pose.rotation.x, v[4] = st.pose.rotation.y, v[5] = st.pose.rotation.z;
            v[6] = st.pose.rotation.w;
            v[7] = st.linear_velocity.x, v[8] = st.linear_velocity.y;
            v[9] = st.linear_velocity.z;
            v[10] = st.angular_velocity.x, v[11] = st.angular_velocity.y;
            v[12] = st.angular_velocity.z;
        }
        gy_capture_body b = {{i, e->generation}, fnv1a(FNV_OFFSET, v, sizeof v)};
        all = fnv1a(all, &b, sizeof b);
        put(p, &at, &b, sizeof b);
    }
    uint64_t zero = 0;
    gy_capture_record rec = {GY_CAPTURE_STATE, (uint32_t)(size - sizeof rec)};
    gy_capture_state hdr = {p->tick, all, live, 0};
    put(p, &zero, &rec, sizeof rec);
    put(p, &zero, &hdr, sizeof hdr);
    publish(p, at);
}

/* ---- game thread ----------------------------------------------------------------------------- */

/* Runs the switch with the physics thread parked (or not running). */
static gy_result with_thread_parked(gy_physics *p, void (*fn)(gy_physics *p, void *ctx), void *ctx)
{
    if (!p->game.running) {
        fn(p, ctx);
        return GY_OK;
    }
    gy_result r = gy_barrier_begin_mutation(p->cfg.barrier, SWITCH_TIMEOUT_NS);
    if (r != GY_OK)
        return r;
    fn(p, ctx);
    return gy_barrier_end_mutation(p->cfg.barrier);
}

static void switch_on(gy_physics *p, void *ctx)
{
    (void)ctx;
    __atomic_store_n(&p->sh.cap.active, 1u, __ATOMIC_RELEASE);
}

static void switch_off(gy_physics *p, void *ctx)
{
    *(uint64_t *)ctx = __atomic_load_n(&p->sh.counters.ticks, __ATOMIC_RELAXED);
    __atomic_store_n(&p->sh.cap.active, 0u, __ATOMIC_RELEASE);
}

bool gy_physics_capturing(const gy_physics *p)
{
    return p != NULL && p->sh.cap.buf != NULL;
}

gy_result gy_physics_capture_begin(gy_physics *p, const gy_physics_capture_def *def)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (p->sh.cap.buf != NULL || (p->game.running && gy_barrier_in_mutation(p->cfg.barrier)))
        return GY_ERR_MISUSE;
    uint32_t want =
        def != NULL && def->buffer_bytes != 0 ? def->buffer_bytes : CAPTURE_DEFAULT_BYTES;
    if (want < CAPTURE_MIN_BYTES || want > CAPTURE_MAX_BYTES)
        return GY_ERR_INVALID_ARGUMENT;
    uint64_t cap = CAPTURE_MIN_BYTES;
    while (cap < want)
        cap *= 2u;
    unsigned char *buf = gy_alloc(p->cfg.alloc, (size_t)cap);
    if (buf == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    p->sh.cap.buf = buf;
    p->sh.cap.capacity = cap;
    p->sh.cap.head = 0;
    p->sh.cap.tail = 0;
    p->sh.cap.overflowed = 0;
    p->sh.cap.overflow_tick = 0;
    p->sh.cap.failed = GY_OK;
    gy_result r = with_thread_parked(p, switch_on, NULL);
    if (r != GY_OK) {
        p->sh.cap.buf = NULL;
        gy_free(p->cfg.alloc, buf, (size_t)cap);
    }
    return r;
}

gy_result gy_physics_capture_drain(gy_physics *p, gy_capture_write_fn fn, void *ctx)
{
    if (p == NULL || fn == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (p->sh.cap.buf == NULL)
        return GY_ERR_MISUSE;
    uint64_t head = __atomic_load_n(&p->sh.cap.head, __ATOMIC_ACQUIRE);
    uint64_t tail = p->sh.cap.tail;
    while (tail < head) {
        uint64_t pos = tail & (p->sh.cap.capacity - 1u);
        uint64_t n = p->sh.cap.capacity - pos;
        if (n > head - tail)
            n = head - tail;
        if (p->sh.cap.failed == GY_OK) {
            gy_result r = fn(ctx, p->sh.cap.buf + pos, (size_t)n);
            if (r != GY_OK)
                p->sh.cap.failed = r;
        }
        tail += n;
        __atomic_store_n(&p->sh.cap.tail, tail, __ATOMIC_RELEASE);
    }
    return p->sh.cap.failed;
}

gy_result gy_physics_capture_end(gy_physics *p, gy_capture_write_fn fn, void *ctx,
                                 uint64_t *end_tick, uint64_t *overflow_tick)
{
    if (p == NULL || fn == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (p->sh.cap.buf == NULL || (p->game.running && gy_barrier_in_mutation(p->cfg.barrier)))
        return GY_ERR_MISUSE;
    uint64_t tick = 0;
    gy_result r = with_thread_parked(p, switch_off, &tick);
    if (r != GY_OK)
        return r;
    gy_result w = gy_physics_capture_drain(p, fn, ctx);
    bool overflowed = __atomic_load_n(&p->sh.cap.overflowed, __ATOMIC_ACQUIRE) != 0;
    if (end_tick != NULL)
        *end_tick = tick;
    if (overflow_tick != NULL)
        *overflow_tick = overflowed ? p->sh.cap.overflow_tick : 0u;
    gy_free(p->cfg.alloc, p->sh.cap.buf, (size_t)p->sh.cap.capacity);
    p->sh.cap.buf = NULL;
    p->sh.cap.capacity = 0;
    if (overflowed)
        return GY_ERR_CAPACITY;
    return w;
}

void gy_phys_capture_free(gy_physics *p)
{
    if (p->sh.cap.buf != NULL)
        gy_free(p->cfg.alloc, p->sh.cap.buf, (size_t)p->sh.cap.capacity);
    p->sh.cap.buf = NULL;
}

/* ---- replay ---------------------------------------------------------------------------------- */

gy_result gy_physics_set_replay(gy_physics *p, bool on)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->cfg.lockstep)
        return GY_ERR_MISUSE;
    if (on)
        gy_command_queue_discard_open(p->cfg.commands);
    p->game.replaying = on;
    p->game.replay_open = false;
    return GY_OK;
}

static bool has_payload_type(uint16_t type)
{
    return type == GY_PHYS_CMD_CREATE_BODY || type == GY_PHYS_CMD_CREATE_JOINT ||
           type == GY_PHYS_CMD_CREATE_RESOURCE;
}

/* Recorded bytes may hold any value where a bool lives, and loading such a bool is undefined:
 * every bool of the payload's structs is made 0 or 1 before anything reads it. */
static void normalise_bools(void *base, const size_t *offsets, size_t count)
{
    unsigned char *b = base;
    for (size_t i = 0; i < count; i++)
        b[offsets[i]] = b[offsets[i]] != 0;
}

static void normalise_body_def(gy_body_def *d)
{
    static const size_t off[] = {
        offsetof(gy_body_def, has_mass_properties), offsetof(gy_body_def, allow_sleeping),
        offsetof(gy_body_def, continuous),          offsetof(gy_body_def, lock_linear),
        offsetof(gy_body_def, lock_linear) + 1,     offsetof(gy_body_def, lock_linear) + 2,
        offsetof(gy_body_def, lock_angular),        offsetof(gy_body_def, lock_angular) + 1,
        offsetof(gy_body_def, lock_angular) + 2};
    normalise_bools(d, off, sizeof off / sizeof off[0]);
}

static void normalise_collider_def(gy_collider_def *c)
{
    static const size_t off[] = {offsetof(gy_collider_def, is_sensor),
                                 offsetof(gy_collider_def, contact_response),
                                 offsetof(gy_collider_def, one_way)};
    normalise_bools(c, off, sizeof off / sizeof off[0]);
}

static void normalise_joint_def(gy_joint_def *j)
{
    static const size_t off[] = {
        offsetof(gy_joint_def, has_limits), offsetof(gy_joint_def, breakable),
        offsetof(gy_joint_def, has_spring), offsetof(gy_joint_def, has_cone),
        offsetof(gy_joint_def, has_twist_limits)};
    normalise_bools(j, off, sizeof off / sizeof off[0]);
}

/* Checks a recorded payload (an aligned copy) as the record_* functions check their
 * descriptions, after making its bools well-formed. */
static gy_result check_payload(const gy_command *cmd, void *payload, size_t size)
{
    /* The key is the index the pool issued: below the bound, never 0 for a joint or resource. */
    if (cmd->key >= GY_PHYSICS_MAX_STORE_INDEX ||
        (cmd->key == 0 && cmd->type != GY_PHYS_CMD_CREATE_BODY))
        return GY_ERR_INVALID_ARGUMENT;
    switch (cmd->type) {
    case GY_PHYS_CMD_CREATE_BODY: {
        if (size < sizeof(gy_phys_body_payload))
            return GY_ERR_INVALID_ARGUMENT;
        gy_phys_body_payload head;
        memcpy(&head, payload, sizeof head);
        if (head.collider_count == 0 || head.collider_count > UINT16_MAX ||
            size != sizeof(gy_phys_body_payload) +
                        (size_t)head.collider_count * sizeof(gy_collider_def))
            return GY_ERR_INVALID_ARGUMENT;
        gy_phys_body_payload *pl = payload;
        static const size_t off[] = {offsetof(gy_phys_body_payload, is_character)};
        normalise_bools(pl, off, 1);
        normalise_body_def(&pl->def);
        for (uint32_t i = 0; i < head.collider_count; i++)
            normalise_collider_def(&pl->colliders[i]);
        if (pl->generation == 0)
            return GY_ERR_INVALID_ARGUMENT;
        gy_physics_body_def d;
        memset(&d, 0, sizeof d);
        d.def = pl->def;
        d.colliders = pl->colliders;
        d.collider_count = pl->collider_count;
        d.character = pl->is_character ? &pl->character : NULL;
        return gy_phys_validate_body_def(&d);
    }
    case GY_PHYS_CMD_CREATE_JOINT: {
        if (size != sizeof(gy_phys_joint_payload))
            return GY_ERR_INVALID_ARGUMENT;
        gy_phys_joint_payload *pl = payload;
        normalise_joint_def(&pl->desc.def);
        return gy_phys_validate_joint_def(&pl->desc);
    }
    case GY_PHYS_CMD_CREATE_RESOURCE: {
        if (size < sizeof(gy_phys_resource_payload))
            return GY_ERR_INVALID_ARGUMENT;
        const gy_phys_resource_payload *pl = payload;
        uint64_t need = sizeof(gy_phys_resource_payload) +
                        (uint64_t)pl->vertex_count * sizeof(gy_vec3) +
                        (uint64_t)pl->index_count * sizeof(uint32_t);
        if (need != size || pl->is_mesh > 1u || (!pl->is_mesh && pl->index_count != 0))
            return GY_ERR_INVALID_ARGUMENT;
        gy_physics_resource_def d;
        memset(&d, 0, sizeof d);
        gy_mesh_def mesh;
        gy_hull_def hull;
        memset(&mesh, 0, sizeof mesh);
        memset(&hull, 0, sizeof hull);
        if (pl->is_mesh) {
            mesh.vertices = pl->vertices;
            mesh.vertex_count = pl->vertex_count;
            mesh.indices = (const uint32_t *)(const void *)(pl->vertices + pl->vertex_count);
            mesh.index_count = pl->index_count;
            d.mesh = &mesh;
        } else {
            hull.points = pl->vertices;
            hull.point_count = pl->vertex_count;
            d.hull = &hull;
        }
        return gy_phys_validate_resource_def(&d);
    }
    default:
        return GY_ERR_INVALID_ARGUMENT;
    }
}

gy_result gy_physics_replay_command(gy_physics *p, gy_command_ring ring, const gy_command *cmd,
                                    const void *payload, size_t payload_size)
{
    if (p == NULL || cmd == NULL || (payload_size > 0 && payload == NULL) ||
        (unsigned)ring >= (unsigned)GY_COMMAND_RING_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->game.running || !p->game.replaying)
        return GY_ERR_MISUSE;
    if (cmd->type < GY_PHYS_CMD_CREATE_BODY || cmd->type > GY_PHYS_CMD_SET_MOTOR)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->game.replay_open) {
        /* What the game recorded since the last seal never goes out in a replay. */
        gy_command_queue_discard_open(p->cfg.commands);
        p->game.replay_open = true;
    }
    gy_command c = *cmd;
    c.flags = (uint16_t)(c.flags & ~GY_COMMAND_PAYLOAD);
    if (!has_payload_type(c.type)) {
        if (payload_size != 0)
            return GY_ERR_INVALID_ARGUMENT;
        return gy_command_queue_record(p->cfg.commands, ring, &c);
    }
    if (ring != GY_COMMAND_LIFECYCLE || payload_size == 0 || payload_size > SIZE_MAX / 2u)
        return GY_ERR_INVALID_ARGUMENT;
    /* A copy aligned for the payload's structs: the caller's bytes may sit anywhere. */
    void *pl = gy_alloc(p->cfg.alloc, payload_size);
    if (pl == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    memcpy(pl, payload, payload_size);
    *(size_t *)pl = payload_size;
    gy_result r = check_payload(&c, pl, payload_size);
    if (r == GY_OK) {
        gy_command_set_payload(&c, pl);
        r = gy_command_queue_record(p->cfg.commands, ring, &c);
    }
    if (r != GY_OK)
        gy_free(p->cfg.alloc, pl, payload_size);
    return r;
}

gy_result gy_physics_replay_seal(gy_physics *p)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->game.running || !p->game.replaying)
        return GY_ERR_MISUSE;
    if (!p->game.replay_open)
        gy_command_queue_discard_open(p->cfg.commands); /* an empty recorded batch stays empty */
    p->game.replay_open = false;
    return gy_command_queue_publish(p->cfg.commands, NULL);
}
