/* Capture files of a World's thread boundary: writing (header, META, files, the stream the World
 * and the physics thread record, END, trailer), reading with every size checked, and replay in a
 * lockstep World (gyre/capture.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/capture.h"
#include "gyre/physics/character.h"
#include "world_internal.h"

#define MAX_NAME_BYTES 4096u
static const char k_magic[8] = {'G', 'Y', 'R', 'E', 'C', 'A', 'P', 0};
static const char k_trailer_magic[8] = {'G', 'Y', 'R', 'E', 'E', 'N', 'D', 0};

/* The file header: 64 bytes. */
typedef struct file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
    uint32_t layout[8]; /* layout_fingerprint() */
    uint32_t reserved[4];
} file_header;

typedef struct file_trailer {
    char magic[8];
    uint64_t checksum; /* FNV-1a 64 of every byte before the trailer */
} file_trailer;

_Static_assert(sizeof(file_header) == 64, "capture header is 64 bytes");
_Static_assert(sizeof(file_trailer) == 16, "capture trailer is 16 bytes");

/* What must match for a capture's raw structs to mean the same thing here. */
static void layout_fingerprint(uint32_t out[8])
{
    out[0] = 0x01020304u; /* byte order */
    out[1] = (uint32_t)sizeof(size_t);
    out[2] = (uint32_t)sizeof(gy_command);
    out[3] = (uint32_t)sizeof(gy_body_def);
    out[4] = (uint32_t)sizeof(gy_collider_def);
    out[5] = (uint32_t)sizeof(gy_joint_def);
    out[6] = (uint32_t)sizeof(gy_character_def);
    out[7] = (uint32_t)sizeof(gy_physics_joint_def);
}

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

/* ---- writing --------------------------------------------------------------------------------- */

struct gy_w_recording {
    gy_capture_write_fn write;
    void *ctx;
    uint64_t checksum;
    uint64_t frames;
    gy_result failed; /* the first write error */
};

struct gy_w_replay {
    const gy_capture *cap;
    uint32_t next_frame, next_batch;
    uint32_t next_state; /* the first recorded state past the replay's tick */
    uint64_t fed_seq;    /* the recorded sequence of the last batch fed */
    int64_t offset;      /* replay tick − capture tick */
    char message[256];
};

static gy_result rec_write(void *ctx, const void *bytes, size_t size)
{
    gy_w_recording *r = ctx;
    if (r->failed != GY_OK)
        return r->failed;
    r->checksum = fnv1a(r->checksum, bytes, size);
    gy_result res = r->write(r->ctx, bytes, size);
    if (res != GY_OK)
        r->failed = res;
    return res;
}

static void rec_record(gy_w_recording *r, uint32_t kind, const void *body, size_t size)
{
    gy_capture_record rec = {kind, (uint32_t)gy_capture_padded(size)};
    static const unsigned char zeros[8];
    rec_write(r, &rec, sizeof rec);
    rec_write(r, body, size);
    rec_write(r, zeros, gy_capture_padded(size) - size);
}

gy_world_capture_def gy_default_world_capture_def(void)
{
    gy_world_capture_def d;
    memset(&d, 0, sizeof d);
    return d;
}

bool gy_world_capturing(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return false;
    return w != NULL && w->recording != NULL;
}

gy_result gy_world_capture_begin(gy_world *w, const gy_world_capture_def *def)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || def == NULL || def->write == NULL || (def->file_count && def->files == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    if (w->recording != NULL || w->in_tick || (!w->lockstep && gy_w_running(w)))
        return GY_ERR_MISUSE;
    for (uint32_t i = 0; i < def->file_count; i++) {
        const gy_capture_attachment *f = &def->files[i];
        if (f->name == NULL || f->name[0] == '\0' || strlen(f->name) > MAX_NAME_BYTES ||
            (f->size > 0 && f->data == NULL) || f->role < GY_CAPTURE_FILE_SCENE ||
            f->role > GY_CAPTURE_FILE_NOTE || f->size > UINT32_MAX - 8192u)
            return GY_ERR_INVALID_ARGUMENT;
    }
    gy_w_recording *r = gy_alloc_zeroed(w->alloc, sizeof *r);
    if (r == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    r->write = def->write;
    r->ctx = def->write_ctx;
    r->checksum = FNV_OFFSET;
    gy_physics_capture_def pd = {def->buffer_bytes};
    gy_result res = gy_physics_capture_begin(w->physics, &pd);
    if (res != GY_OK) {
        gy_free(w->alloc, r, sizeof *r);
        return res;
    }
    file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, k_magic, sizeof h.magic);
    h.version = GY_CAPTURE_FORMAT_VERSION;
    h.header_size = sizeof h;
    layout_fingerprint(h.layout);
    rec_write(r, &h, sizeof h);
    gy_capture_meta m;
    memset(&m, 0, sizeof m);
    m.base_tick = gy_physics_tick(w->physics);
    m.step_hz = (uint32_t)(1.0 / w->step_dt + 0.5);
    m.realtime = w->lockstep ? 0u : 1u;
    m.max_catchup = w->max_catchup;
    const gy_backend *be = gy_physics_backend(w->physics);
    snprintf(m.backend, sizeof m.backend, "%s", be != NULL ? be->name : "");
    rec_record(r, GY_CAPTURE_META, &m, sizeof m);
    for (uint32_t i = 0; i < def->file_count; i++) {
        const gy_capture_attachment *f = &def->files[i];
        gy_capture_file fh = {f->role, (uint32_t)strlen(f->name), f->size};
        size_t size = sizeof fh + gy_capture_padded(fh.name_size) + gy_capture_padded(f->size);
        static const unsigned char zeros[8];
        gy_capture_record rec = {GY_CAPTURE_FILE, (uint32_t)size};
        rec_write(r, &rec, sizeof rec);
        rec_write(r, &fh, sizeof fh);
        rec_write(r, f->name, fh.name_size);
        rec_write(r, zeros, gy_capture_padded(fh.name_size) - fh.name_size);
        if (f->size > 0)
            rec_write(r, f->data, f->size);
        rec_write(r, zeros, gy_capture_padded(f->size) - f->size);
    }
    if (r->failed != GY_OK) {
        res = r->failed;
        gy_physics_capture_end(w->physics, rec_write, r, NULL, NULL);
        gy_free(w->alloc, r, sizeof *r);
        return res;
    }
    w->recording = r;
    return GY_OK;
}

void gy_w_recording_frame(gy_world *w, double dt)
{
    w->reply_budget = UINT32_MAX; /* drains outside a tick take everything */
    gy_w_recording *r = w->recording;
    if (r == NULL)
        return;
    gy_capture_frame f = {
        dt, w->frame_tick, w->frame_seq, w->time_scale, w->hold ? 1u : 0u, w->replies_taken};
    rec_record(r, GY_CAPTURE_FRAME, &f, sizeof f);
    r->frames++;
    gy_physics_capture_drain(w->physics, rec_write, r);
}

gy_result gy_world_capture_end(gy_world *w, uint64_t *overflow_tick)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (overflow_tick != NULL)
        *overflow_tick = 0;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->recording == NULL || w->in_tick)
        return GY_ERR_MISUSE;
    gy_w_recording *r = w->recording;
    uint64_t end_tick = 0, over = 0;
    gy_result res = gy_physics_capture_end(w->physics, rec_write, r, &end_tick, &over);
    if (res == GY_OK) {
        gy_capture_end e = {end_tick, r->frames};
        rec_record(r, GY_CAPTURE_END, &e, sizeof e);
        file_trailer t;
        memcpy(t.magic, k_trailer_magic, sizeof t.magic);
        t.checksum = r->checksum;
        rec_write(r, &t, sizeof t);
        res = r->failed;
    }
    if (overflow_tick != NULL)
        *overflow_tick = over;
    w->recording = NULL;
    gy_free(w->alloc, r, sizeof *r);
    return res;
}

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct capture_owned {
    gy_capture pub;
    const gy_allocator *alloc;
    unsigned char *bytes;
    size_t size;
    gy_capture_file_view *files;
    gy_capture_frame *frames;
    gy_capture_batch_view *batches;
    gy_capture_state_view *states;
    uint32_t file_cap, frame_cap, batch_cap, state_cap;
} capture_owned;

void gy_capture_free(gy_capture *capture)
{
    if (capture == NULL)
        return;
    capture_owned *c = (capture_owned *)capture;
    const gy_allocator *a = c->alloc;
    if (c->bytes != NULL)
        gy_free(a, c->bytes, c->size);
    if (c->files != NULL)
        gy_free(a, c->files, (size_t)c->file_cap * sizeof *c->files);
    if (c->frames != NULL)
        gy_free(a, c->frames, (size_t)c->frame_cap * sizeof *c->frames);
    if (c->batches != NULL)
        gy_free(a, c->batches, (size_t)c->batch_cap * sizeof *c->batches);
    if (c->states != NULL)
        gy_free(a, c->states, (size_t)c->state_cap * sizeof *c->states);
    gy_free(a, c, sizeof *c);
}

static gy_result fail(char *error, size_t error_size, gy_result r, const char *fmt,
                      unsigned long long a, unsigned long long b)
{
    if (error != NULL && error_size > 0)
        snprintf(error, error_size, fmt, a, b);
    return r;
}

/* Checks the commands of a batch record: every header, ring and payload size within `size`. */
static bool batch_ok(const unsigned char *p, size_t size, uint32_t count)
{
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        gy_capture_command ch;
        if (size - at < sizeof ch + sizeof(gy_command))
            return false;
        memcpy(&ch, p + at, sizeof ch);
        at += sizeof ch + sizeof(gy_command);
        if (ch.ring >= (uint32_t)GY_COMMAND_RING_COUNT ||
            gy_capture_padded(ch.payload_size) > size - at)
            return false;
        at += gy_capture_padded(ch.payload_size);
    }
    return at == size;
}

gy_result gy_capture_read(const void *bytes, size_t size, const gy_allocator *allocator,
                          gy_capture **out, char *error, size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (out == NULL || (bytes == NULL && size > 0))
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    file_header h;
    if (size < sizeof h || memcmp(bytes, k_magic, sizeof k_magic) != 0)
        return fail(error, error_size, GY_ERR_PARSE,
                    size < sizeof h ? "not a Gyre capture (%llu bytes, shorter than the header)"
                                    : "not a Gyre capture (no GYRECAP magic at byte %llu)",
                    size < sizeof h ? (unsigned long long)size : 0ull, 0);
    memcpy(&h, bytes, sizeof h);
    if (h.version != GY_CAPTURE_FORMAT_VERSION)
        return fail(error, error_size, GY_ERR_UNSUPPORTED,
                    "capture format version %llu; this build reads version %llu", h.version,
                    GY_CAPTURE_FORMAT_VERSION);
    uint32_t layout[8];
    layout_fingerprint(layout);
    if (h.header_size != sizeof h || memcmp(h.layout, layout, sizeof layout) != 0)
        return fail(error, error_size, GY_ERR_UNSUPPORTED,
                    "capture written by a build with another data layout (header size %llu, "
                    "layout word %llu differs)",
                    h.header_size, 0);
    file_trailer t;
    if (size < sizeof h + sizeof t)
        return fail(error, error_size, GY_ERR_PARSE,
                    "truncated capture (%llu bytes): the end marker is missing", size, 0);
    memcpy(&t, (const unsigned char *)bytes + size - sizeof t, sizeof t);
    if (memcmp(t.magic, k_trailer_magic, sizeof t.magic) != 0)
        return fail(error, error_size, GY_ERR_PARSE,
                    "truncated or damaged capture (%llu bytes): no end marker in the last 16 bytes",
                    size, 0);
    uint64_t sum = fnv1a(FNV_OFFSET, bytes, size - sizeof t);
    if (sum != t.checksum)
        return fail(error, error_size, GY_ERR_PARSE,
                    "damaged capture: checksum %016llx, the trailer says %016llx", sum, t.checksum);

    const gy_allocator *a = gy_allocator_or_default(allocator);
    capture_owned *c = gy_alloc_zeroed(a, sizeof *c);
    if (c == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    c->alloc = a;
    c->size = size - sizeof t;
    c->bytes = gy_alloc(a, c->size > 0 ? c->size : 1u); /* aligned for the records' structs */
    if (c->bytes == NULL) {
        gy_capture_free(&c->pub);
        return GY_ERR_OUT_OF_MEMORY;
    }
    memcpy(c->bytes, bytes, c->size);
    gy_result r = GY_OK;
    size_t at = sizeof h;
    bool have_meta = false, have_end = false;
    while (at < c->size && r == GY_OK) {
        gy_capture_record rec;
        size_t rec_at = at;
        if (have_end) {
            r = fail(error, error_size, GY_ERR_PARSE, "record after END at byte %llu",
                     (unsigned long long)at, 0);
            break;
        }
        if (c->size - at < sizeof rec) {
            r = fail(error, error_size, GY_ERR_PARSE, "cut record header at byte %llu",
                     (unsigned long long)at, 0);
            break;
        }
        memcpy(&rec, c->bytes + at, sizeof rec);
        at += sizeof rec;
        if (rec.size % 8u != 0 || rec.size > c->size - at) {
            r = fail(error, error_size, GY_ERR_PARSE,
                     "record at byte %llu claims %llu bytes beyond the file or not padded",
                     (unsigned long long)rec_at, rec.size);
            break;
        }
        const unsigned char *body = c->bytes + at;
        at += rec.size;
        if (!have_meta && rec.kind != GY_CAPTURE_META) {
            r = fail(error, error_size, GY_ERR_PARSE,
                     "the first record (byte %llu) is kind %llu, not META", rec_at, rec.kind);
            break;
        }
        switch (rec.kind) {
        case GY_CAPTURE_META:
            if (have_meta || rec.size != sizeof(gy_capture_meta)) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad META record at byte %llu", rec_at,
                         0);
                break;
            }
            memcpy(&c->pub.meta, body, sizeof c->pub.meta);
            if (memchr(c->pub.meta.backend, 0, sizeof c->pub.meta.backend) == NULL ||
                c->pub.meta.step_hz < 10 || c->pub.meta.step_hz > 1000)
                r = fail(error, error_size, GY_ERR_PARSE,
                         "META at byte %llu: backend name or step rate out of range", rec_at, 0);
            have_meta = true;
            break;
        case GY_CAPTURE_FILE: {
            gy_capture_file fh;
            if (rec.size < sizeof fh) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad FILE record at byte %llu", rec_at,
                         0);
                break;
            }
            memcpy(&fh, body, sizeof fh);
            uint64_t need = sizeof fh + gy_capture_padded(fh.name_size);
            if (fh.name_size == 0 || fh.name_size > MAX_NAME_BYTES || fh.data_size > rec.size ||
                need + gy_capture_padded((size_t)fh.data_size) != rec.size ||
                fh.role < GY_CAPTURE_FILE_SCENE || fh.role > GY_CAPTURE_FILE_NOTE) {
                r = fail(error, error_size, GY_ERR_PARSE,
                         "FILE record at byte %llu: sizes or role do not add up", rec_at, 0);
                break;
            }
            r = gy_array_reserve(a, (void **)&c->files, &c->file_cap, c->pub.file_count + 1u,
                                 sizeof *c->files);
            if (r != GY_OK)
                break;
            gy_capture_file_view *v = &c->files[c->pub.file_count++];
            v->role = fh.role;
            v->name = (const char *)body + sizeof fh;
            v->name_size = fh.name_size;
            v->data = body + need;
            v->size = (size_t)fh.data_size;
            break;
        }
        case GY_CAPTURE_FRAME: {
            gy_capture_frame f;
            if (rec.size != sizeof f) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad FRAME record at byte %llu", rec_at,
                         0);
                break;
            }
            memcpy(&f, body, sizeof f);
            if (!gy_is_finite(f.dt) || f.dt < 0.0 || f.tick < c->pub.meta.base_tick ||
                (c->pub.frame_count > 0 && f.tick < c->frames[c->pub.frame_count - 1u].tick)) {
                r = fail(error, error_size, GY_ERR_PARSE,
                         "FRAME at byte %llu: tick %llu goes back or dt is not a finite time",
                         rec_at, f.tick);
                break;
            }
            r = gy_array_reserve(a, (void **)&c->frames, &c->frame_cap, c->pub.frame_count + 1u,
                                 sizeof *c->frames);
            if (r == GY_OK)
                c->frames[c->pub.frame_count++] = f;
            break;
        }
        case GY_CAPTURE_BATCH: {
            gy_capture_batch b;
            if (rec.size < sizeof b) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad BATCH record at byte %llu", rec_at,
                         0);
                break;
            }
            memcpy(&b, body, sizeof b);
            if (b.tick <= c->pub.meta.base_tick ||
                (c->pub.batch_count > 0 && b.tick < c->batches[c->pub.batch_count - 1u].tick) ||
                !batch_ok(body + sizeof b, rec.size - sizeof b, b.count)) {
                r = fail(error, error_size, GY_ERR_PARSE,
                         "BATCH at byte %llu (tick %llu): tick out of order or commands do not "
                         "add up",
                         rec_at, b.tick);
                break;
            }
            r = gy_array_reserve(a, (void **)&c->batches, &c->batch_cap, c->pub.batch_count + 1u,
                                 sizeof *c->batches);
            if (r == GY_OK)
                c->batches[c->pub.batch_count++] = (gy_capture_batch_view){
                    b.tick, b.seq, b.count, body + sizeof b, rec.size - sizeof b};
            break;
        }
        case GY_CAPTURE_STATE: {
            gy_capture_state s;
            if (rec.size < sizeof s) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad STATE record at byte %llu", rec_at,
                         0);
                break;
            }
            memcpy(&s, body, sizeof s);
            if ((uint64_t)s.count * sizeof(gy_capture_body) != rec.size - sizeof s ||
                s.tick <= c->pub.meta.base_tick ||
                (c->pub.state_count > 0 && s.tick <= c->states[c->pub.state_count - 1u].tick)) {
                r = fail(error, error_size, GY_ERR_PARSE,
                         "STATE at byte %llu (tick %llu): size or tick order wrong", rec_at,
                         s.tick);
                break;
            }
            r = gy_array_reserve(a, (void **)&c->states, &c->state_cap, c->pub.state_count + 1u,
                                 sizeof *c->states);
            if (r == GY_OK)
                c->states[c->pub.state_count++] = (gy_capture_state_view){
                    s.tick, s.hash, s.count,
                    (const gy_capture_body *)(const void *)(body + sizeof s)};
            break;
        }
        case GY_CAPTURE_END:
            if (rec.size != sizeof(gy_capture_end)) {
                r = fail(error, error_size, GY_ERR_PARSE, "bad END record at byte %llu", rec_at, 0);
                break;
            }
            memcpy(&c->pub.end, body, sizeof c->pub.end);
            if (c->pub.end.frames != c->pub.frame_count || c->pub.end.tick < c->pub.meta.base_tick)
                r = fail(error, error_size, GY_ERR_PARSE,
                         "END at byte %llu: %llu frames announced, another number found", rec_at,
                         c->pub.end.frames);
            have_end = true;
            break;
        default:
            r = fail(error, error_size, GY_ERR_PARSE, "unknown record kind %llu at byte %llu",
                     rec.kind, rec_at);
            break;
        }
    }
    if (r == GY_OK && !have_end)
        r = fail(error, error_size, GY_ERR_PARSE, "no END record (%llu bytes of records)",
                 (unsigned long long)c->size, 0);
    /* Every step is followed by a publish that writes a state (at most 16 steps apart, the
     * catch-up limit), save those the end cut off: an end far beyond the states would have a
     * replay step for nothing, or for ever. */
    if (r == GY_OK &&
        c->pub.end.tick - c->pub.meta.base_tick > ((uint64_t)c->pub.state_count + 1u) * 16u)
        r = fail(error, error_size, GY_ERR_PARSE,
                 "END claims %llu ticks; %llu state records allow at most 16 ticks each",
                 c->pub.end.tick - c->pub.meta.base_tick, c->pub.state_count);
    if (r == GY_OK && c->pub.frame_count > 0 &&
        c->frames[c->pub.frame_count - 1u].tick > c->pub.end.tick)
        r = fail(error, error_size, GY_ERR_PARSE, "a frame at tick %llu is past the end tick %llu",
                 c->frames[c->pub.frame_count - 1u].tick, c->pub.end.tick);
    if (r == GY_OK && c->pub.state_count > 0 &&
        c->states[c->pub.state_count - 1u].tick > c->pub.end.tick)
        r = fail(error, error_size, GY_ERR_PARSE, "a state at tick %llu is past the end tick %llu",
                 c->states[c->pub.state_count - 1u].tick, c->pub.end.tick);
    if (r != GY_OK) {
        if (r == GY_ERR_OUT_OF_MEMORY && error != NULL && error_size > 0 && error[0] == '\0')
            snprintf(error, error_size, "out of memory reading the capture");
        gy_capture_free(&c->pub);
        return r;
    }
    c->pub.files = c->files;
    c->pub.frames = c->frames;
    c->pub.batches = c->batches;
    c->pub.states = c->states;
    *out = &c->pub;
    return GY_OK;
}

bool gy_capture_batch_next(const gy_capture_batch_view *batch, size_t *cursor, uint32_t *ring,
                           const gy_command **cmd, const void **payload, size_t *payload_size)
{
    /* The cursor is a byte offset into the commands (each is variable-sized); the reader checked
     * that they tile the record exactly. */
    if (batch == NULL || cursor == NULL || *cursor >= batch->size)
        return false;
    const unsigned char *p = batch->commands + *cursor;
    gy_capture_command ch;
    memcpy(&ch, p, sizeof ch);
    if (ring != NULL)
        *ring = ch.ring;
    if (cmd != NULL)
        *cmd = (const gy_command *)(const void *)(p + sizeof ch);
    if (payload != NULL)
        *payload = ch.payload_size ? p + sizeof ch + sizeof(gy_command) : NULL;
    if (payload_size != NULL)
        *payload_size = ch.payload_size;
    *cursor += sizeof ch + sizeof(gy_command) + gy_capture_padded(ch.payload_size);
    return true;
}

size_t gy_capture_scan_states(const void *bytes, size_t size,
                              void (*fn)(void *ctx, const gy_capture_state_view *state), void *ctx)
{
    const unsigned char *b = bytes;
    size_t at = 0;
    while (size - at >= sizeof(gy_capture_record)) {
        gy_capture_record rec;
        memcpy(&rec, b + at, sizeof rec);
        if (rec.size > size - at - sizeof rec)
            break;
        if (rec.kind == GY_CAPTURE_STATE && rec.size >= sizeof(gy_capture_state)) {
            gy_capture_state s;
            memcpy(&s, b + at + sizeof rec, sizeof s);
            if ((uint64_t)s.count * sizeof(gy_capture_body) == rec.size - sizeof s) {
                gy_capture_state_view v = {
                    s.tick, s.hash, s.count,
                    (const gy_capture_body *)(const void *)(b + at + sizeof rec + sizeof s)};
                fn(ctx, &v);
            }
        }
        at += sizeof rec + rec.size;
    }
    return at;
}

/* ---- replay ---------------------------------------------------------------------------------- */

gy_result gy_world_replay_begin(gy_world *w, const gy_capture *capture)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || capture == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!w->lockstep || !gy_w_running(w) || w->replay != NULL || w->recording != NULL || w->in_tick)
        return GY_ERR_MISUSE;
    const gy_backend *be = gy_physics_backend(w->physics);
    if (be == NULL || strcmp(be->name, capture->meta.backend) != 0 ||
        (uint32_t)(1.0 / w->step_dt + 0.5) != capture->meta.step_hz)
        return GY_ERR_UNSUPPORTED;
    gy_w_replay *rp = gy_alloc_zeroed(w->alloc, sizeof *rp);
    if (rp == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r = gy_physics_set_replay(w->physics, true);
    if (r != GY_OK) {
        gy_free(w->alloc, rp, sizeof *rp);
        return r;
    }
    rp->cap = capture;
    rp->offset = (int64_t)gy_physics_tick(w->physics) - (int64_t)capture->meta.base_tick;
    w->replay = rp;
    return GY_OK;
}

uint32_t gy_world_replay_frames_left(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return 0;
    if (w == NULL || w->replay == NULL)
        return 0;
    return w->replay->cap->frame_count - w->replay->next_frame;
}

const char *gy_world_replay_message(const gy_world *w)
{
    if (gy_w_enter_read(w, __func__) != GY_OK)
        return "";
    return w != NULL && w->replay != NULL ? w->replay->message : "";
}

/* Seals every recorded batch due before replay tick `tick` (and any the replay passed), and
 * those up to recorded sequence `seq`. */
static gy_result feed(gy_world *w, uint64_t tick, uint64_t seq)
{
    gy_w_replay *rp = w->replay;
    const gy_capture *c = rp->cap;
    while (rp->next_batch < c->batch_count &&
           ((int64_t)c->batches[rp->next_batch].tick + rp->offset <= (int64_t)tick ||
            c->batches[rp->next_batch].seq <= seq)) {
        const gy_capture_batch_view *b = &c->batches[rp->next_batch];
        size_t cursor = 0, index = 0;
        uint32_t ring;
        const gy_command *cmd;
        const void *payload;
        size_t payload_size;
        while (gy_capture_batch_next(b, &cursor, &ring, &cmd, &payload, &payload_size)) {
            index++;
            gy_result r = gy_physics_replay_command(w->physics, (gy_command_ring)ring, cmd, payload,
                                                    payload_size);
            if (r != GY_OK) {
                snprintf(rp->message, sizeof rp->message,
                         "the batch applied before tick %llu: command %zu (type %u) refused: %s",
                         (unsigned long long)(b->tick - c->meta.base_tick), index,
                         (unsigned)cmd->type, gy_result_message(r));
                return r;
            }
        }
        gy_result r = gy_physics_replay_seal(w->physics);
        if (r != GY_OK)
            return r;
        rp->fed_seq = b->seq;
        rp->next_batch++;
    }
    return GY_OK;
}

/* How many ticks the run's iteration from replay tick `tick` stepped before its publish: up to
 * the next recorded state (every iteration that steps records one), never past `goal` nor past
 * a batch applied before a later tick (an iteration applies its batches before its first step).
 * A real-time run steps several ticks in an iteration that catches up; its publish reads the
 * bodies once, after the last, so a body that fell asleep in between is reported at that tick. */
static uint32_t iteration_steps(gy_w_replay *rp, int64_t tick, int64_t goal)
{
    const gy_capture *c = rp->cap;
    while (rp->next_state < c->state_count &&
           (int64_t)c->states[rp->next_state].tick + rp->offset <= tick)
        rp->next_state++;
    int64_t end = goal;
    if (rp->next_state < c->state_count &&
        (int64_t)c->states[rp->next_state].tick + rp->offset < end)
        end = (int64_t)c->states[rp->next_state].tick + rp->offset;
    if (rp->next_batch < c->batch_count &&
        (int64_t)c->batches[rp->next_batch].tick + rp->offset - 1 < end)
        end = (int64_t)c->batches[rp->next_batch].tick + rp->offset - 1;
    if (end - tick > (int64_t)GY_PHYSICS_MAX_CATCHUP)
        end = tick + (int64_t)GY_PHYSICS_MAX_CATCHUP;
    return end > tick ? (uint32_t)(end - tick) : 1u;
}

/* Runs physics ticks, batches fed, until the capture's tick `target`, in the run's iterations. */
static gy_result run_to(gy_world *w, uint64_t target, bool read)
{
    gy_w_replay *rp = w->replay;
    int64_t goal = (int64_t)target + rp->offset;
    gy_result r = GY_OK;
    bool stepped = false;
    while (r == GY_OK && (int64_t)gy_physics_tick(w->physics) < goal) {
        int64_t tick = (int64_t)gy_physics_tick(w->physics);
        r = feed(w, (uint64_t)tick + 1u, 0);
        if (r == GY_OK)
            r = gy_physics_replay_steps(w->physics, iteration_steps(rp, tick, goal),
                                        w->step_timeout_ns);
        if (r == GY_OK && read)
            gy_w_capture(w);
        stepped = true;
    }
    if (!stepped && r == GY_OK)
        r = gy_physics_step(w->physics, 0, w->step_timeout_ns); /* discards the game's batch */
    return r;
}

gy_result gy_w_replay_run(gy_world *w)
{
    gy_w_replay *rp = w->replay;
    if (rp->next_frame >= rp->cap->frame_count)
        return gy_physics_step(w->physics, 0, w->step_timeout_ns);
    const gy_capture_frame *f = &rp->cap->frames[rp->next_frame++];
    gy_result r = run_to(w, f->tick, true);
    if (r == GY_OK && f->batch_seq > rp->fed_seq && rp->next_batch < rp->cap->batch_count &&
        rp->cap->batches[rp->next_batch].seq <= f->batch_seq) {
        /* The run read a publish of an iteration that applied batches without stepping. */
        r = feed(w, 0, f->batch_seq);
        if (r == GY_OK)
            r = gy_physics_replay_drain(w->physics, w->step_timeout_ns);
        if (r == GY_OK)
            gy_w_capture(w);
    }
    return r;
}

void gy_w_recording_tick_begin(gy_world *w)
{
    w->replies_taken = 0;
    w->reply_budget = UINT32_MAX;
    gy_w_replay *rp = w->replay;
    if (rp != NULL && rp->next_frame < rp->cap->frame_count)
        w->reply_budget = rp->cap->frames[rp->next_frame].replies;
}

gy_result gy_world_replay_finish(gy_world *w)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->replay == NULL || w->in_tick || !gy_w_running(w))
        return GY_ERR_MISUSE;
    /* The run's game thread read nothing of these last ticks (they came after its last frame),
     * so neither does the replay: its replies wait for teardown as the run's did. */
    return run_to(w, w->replay->cap->end.tick, false);
}

gy_result gy_world_replay_end(gy_world *w)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (w->replay == NULL || w->in_tick)
        return GY_ERR_MISUSE;
    gy_physics_set_replay(w->physics, false);
    gy_free(w->alloc, w->replay, sizeof *w->replay);
    w->replay = NULL;
    w->reply_budget = UINT32_MAX;
    return GY_OK;
}

void gy_w_recording_free(gy_world *w)
{
    if (w->recording != NULL)
        gy_free(w->alloc, w->recording, sizeof *w->recording);
    if (w->replay != NULL)
        gy_free(w->alloc, w->replay, sizeof *w->replay);
    w->recording = NULL;
    w->replay = NULL;
}
