/* The page writer (page.h, docs/viewing.md).
 *
 * A page is the HTML and JavaScript of engine/cli/page/ (compiled in by page_embed.py) around one
 * JSON document of data. The bulky parts of that document are byte streams in base64: every
 * number in them is quantized to an integer (positions to 0.1 mm, velocities to 1 mm/s, rotation
 * components to 1/32767, contact points to 1 mm) and written as the zigzag varint of its change
 * since the entity's previous frame. A frame starts with a bit mask of the values that changed,
 * so a body at rest costs one byte per frame and a moving one about a dozen. Events are coded the
 * same way against the previous event of the same pair, so a resting contact's `stay` costs five
 * bytes. The JSON's '<' are
 * written as \u003c so that no string in it can end the <script> element that holds it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gyre/array.h"
#include "gyre/geometry.h"
#include "gyre/hash_map.h"
#include "gyre/math.h"
#include "page.h"
#include "page_template.h"

#define POS_UNIT     1e-4
#define VEL_UNIT     1e-3
#define ROT_SCALE    32767.0
#define POINT_UNIT   1e-3
#define NORMAL_UNIT  127.0
#define QUANT_LIMIT  1099511627776.0 /* 2^40: decoded exactly by JavaScript's doubles */
#define FRAME_VALUES 11u             /* px py pz vx vy vz qx qy qz qw awake */
#define GAP_FILL     8u              /* frames held over a gap (a real-time run skipping ticks) */
#define MAX_KINDS    16u

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

typedef struct page_collider {
    gy_shape shape;
    gy_pose local;
    bool sensor;
    int32_t geometry; /* hull and mesh: index into geometries, -1 when it could not be built */
} page_collider;

typedef struct page_geometry {
    const void *key; /* the scene's array (shared arrays are written once) */
    bytes vertices;  /* quantized to POINT_UNIT, deltas */
    bytes indices;   /* deltas */
    uint32_t vertex_count, index_count;
} page_geometry;

typedef struct page_entity {
    char *name;
    const char *body; /* static string */
    bool character;
    page_collider *colliders;
    uint32_t collider_count;
    uint32_t *spans; /* pairs: first frame, frame count */
    uint32_t span_count, span_capacity;
    bytes stream;
    int64_t last[FRAME_VALUES];
    int64_t last_frame; /* -1: none yet */
} page_entity;

/* The last contact point and normal of a pair of entities. */
typedef struct page_pair {
    int64_t last[6];
} page_pair;

GY_ARRAY_DEFINE(page_pairs, page_pair)

typedef struct page_joint {
    const char *type; /* static string */
    int32_t a, b;
    gy_vec3 anchor;
    int64_t first, last; /* frames live; first -1: never */
} page_joint;

typedef struct page_expect {
    uint64_t tick;
    double at;
    char *label, *detail;
    int passed;
} page_expect;

typedef struct page_series {
    char *name, *unit;
    char *group; /* NULL: none */
    double duration, gate;
    uint32_t bins; /* ten a second, at least 20, at most GY_CLI_PAGE_SERIES_BINS */
    double sum[GY_CLI_PAGE_SERIES_BINS], max[GY_CLI_PAGE_SERIES_BINS];
    uint32_t n[GY_CLI_PAGE_SERIES_BINS];
} page_series;

typedef struct page_histogram {
    char *name, *unit, *summary;
    double gate;
    double *values;
    uint64_t *counts;
    uint32_t n;
} page_histogram;

typedef struct page_info {
    char *key, *value;
} page_info;

struct gy_cli_page {
    gy_cli_page_kind kind;
    const gy_allocator *alloc;
    bool oom;
    page_info *info;
    uint32_t info_count, info_capacity;
    double step_hz;
    uint64_t stride;
    int64_t last_frame;
    page_entity *entities;
    uint32_t entity_count, entity_capacity;
    page_geometry *geometries;
    uint32_t geometry_count, geometry_capacity;
    bytes events;
    uint64_t event_last_tick;
    page_pairs pairs;
    gy_hash_map pair_index; /* (a + 1, b + 1) -> index in pairs */
    char *kinds[MAX_KINDS];
    uint64_t kind_count[MAX_KINDS], kind_dropped[MAX_KINDS];
    uint32_t kind_total;
    uint64_t events_other_dropped; /* beyond MAX_KINDS kinds */
    page_expect *expects;
    uint32_t expect_count, expect_capacity;
    page_joint *joints;
    uint32_t joint_count, joint_capacity;
    page_series **series;
    uint32_t series_count, series_capacity;
    page_histogram *histograms;
    uint32_t histogram_count, histogram_capacity;
};

/* ---- memory ---------------------------------------------------------------------------------- */

static char *copy_string(gy_cli_page *pg, const char *s)
{
    if (s == NULL)
        s = "";
    size_t n = strlen(s) + 1u;
    char *c = gy_alloc(pg->alloc, n);
    if (c == NULL) {
        pg->oom = true;
        return NULL;
    }
    memcpy(c, s, n);
    return c;
}

static void free_string(const gy_cli_page *pg, char *s)
{
    if (s != NULL)
        gy_free(pg->alloc, s, strlen(s) + 1u);
}

static bool reserve(gy_cli_page *pg, void **array, uint32_t *capacity, uint32_t need, size_t size)
{
    if (pg->oom)
        return false;
    if (gy_array_reserve(pg->alloc, array, capacity, need, size) != GY_OK) {
        pg->oom = true;
        return false;
    }
    return true;
}

static void put_byte(gy_cli_page *pg, bytes *b, uint8_t v)
{
    if (b->len == b->cap) {
        if (pg->oom)
            return;
        size_t cap = b->cap ? b->cap * 2u : 256u;
        uint8_t *p = gy_realloc(pg->alloc, b->p, b->cap, cap);
        if (p == NULL) {
            pg->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    b->p[b->len++] = v;
}

static void put_varint(gy_cli_page *pg, bytes *b, uint64_t v)
{
    while (v >= 0x80u) {
        put_byte(pg, b, (uint8_t)(v | 0x80u));
        v >>= 7;
    }
    put_byte(pg, b, (uint8_t)v);
}

static void put_signed(gy_cli_page *pg, bytes *b, int64_t v)
{
    put_varint(pg, b, v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1u : (uint64_t)v << 1);
}

static void free_bytes(const gy_cli_page *pg, bytes *b)
{
    if (b->p != NULL)
        gy_free(pg->alloc, b->p, b->cap);
    memset(b, 0, sizeof *b);
}

static int64_t quantize(double v, double unit)
{
    double q = round(v / unit);
    if (q > QUANT_LIMIT)
        q = QUANT_LIMIT;
    if (q < -QUANT_LIMIT)
        q = -QUANT_LIMIT;
    return (int64_t)q;
}

/* ---- life ------------------------------------------------------------------------------------ */

gy_cli_page *gy_cli_page_create(gy_cli_page_kind kind)
{
    const gy_allocator *a = gy_default_allocator();
    gy_cli_page *pg = gy_alloc_zeroed(a, sizeof *pg);
    if (pg == NULL)
        return NULL;
    pg->kind = kind;
    pg->alloc = a;
    gy_hash_map_init(&pg->pair_index, a);
    pg->stride = 1;
    pg->step_hz = 60.0;
    pg->last_frame = -1;
    return pg;
}

void gy_cli_page_free(gy_cli_page *pg)
{
    if (pg == NULL)
        return;
    const gy_allocator *a = pg->alloc;
    for (uint32_t i = 0; i < pg->info_count; i++) {
        free_string(pg, pg->info[i].key);
        free_string(pg, pg->info[i].value);
    }
    if (pg->info != NULL)
        gy_free(a, pg->info, (size_t)pg->info_capacity * sizeof *pg->info);
    for (uint32_t i = 0; i < pg->entity_count; i++) {
        page_entity *e = &pg->entities[i];
        free_string(pg, e->name);
        if (e->colliders != NULL)
            gy_free(a, e->colliders, (size_t)e->collider_count * sizeof *e->colliders);
        if (e->spans != NULL)
            gy_free(a, e->spans, (size_t)e->span_capacity * 2u * sizeof *e->spans);
        free_bytes(pg, &e->stream);
    }
    if (pg->entities != NULL)
        gy_free(a, pg->entities, (size_t)pg->entity_capacity * sizeof *pg->entities);
    for (uint32_t i = 0; i < pg->geometry_count; i++) {
        free_bytes(pg, &pg->geometries[i].vertices);
        free_bytes(pg, &pg->geometries[i].indices);
    }
    if (pg->geometries != NULL)
        gy_free(a, pg->geometries, (size_t)pg->geometry_capacity * sizeof *pg->geometries);
    free_bytes(pg, &pg->events);
    page_pairs_free(a, &pg->pairs);
    gy_hash_map_fini(&pg->pair_index);
    for (uint32_t k = 0; k < pg->kind_total; k++)
        free_string(pg, pg->kinds[k]);
    for (uint32_t i = 0; i < pg->expect_count; i++) {
        free_string(pg, pg->expects[i].label);
        free_string(pg, pg->expects[i].detail);
    }
    if (pg->expects != NULL)
        gy_free(a, pg->expects, (size_t)pg->expect_capacity * sizeof *pg->expects);
    if (pg->joints != NULL)
        gy_free(a, pg->joints, (size_t)pg->joint_capacity * sizeof *pg->joints);
    for (uint32_t i = 0; i < pg->series_count; i++) {
        free_string(pg, pg->series[i]->name);
        free_string(pg, pg->series[i]->unit);
        free_string(pg, pg->series[i]->group);
        gy_free(a, pg->series[i], sizeof *pg->series[i]);
    }
    if (pg->series != NULL)
        gy_free(a, pg->series, (size_t)pg->series_capacity * sizeof *pg->series);
    for (uint32_t i = 0; i < pg->histogram_count; i++) {
        page_histogram *h = &pg->histograms[i];
        free_string(pg, h->name);
        free_string(pg, h->unit);
        free_string(pg, h->summary);
        if (h->values != NULL)
            gy_free(a, h->values, (size_t)h->n * sizeof *h->values);
        if (h->counts != NULL)
            gy_free(a, h->counts, (size_t)h->n * sizeof *h->counts);
    }
    if (pg->histograms != NULL)
        gy_free(a, pg->histograms, (size_t)pg->histogram_capacity * sizeof *pg->histograms);
    gy_free(a, pg, sizeof *pg);
}

void gy_cli_page_set_info(gy_cli_page *pg, const char *key, const char *value)
{
    if (!reserve(pg, (void **)&pg->info, &pg->info_capacity, pg->info_count + 1u, sizeof *pg->info))
        return;
    page_info *x = &pg->info[pg->info_count];
    x->key = copy_string(pg, key);
    x->value = copy_string(pg, value);
    pg->info_count++;
}

/* ---- run pages ------------------------------------------------------------------------------- */

void gy_cli_page_set_timeline(gy_cli_page *pg, double step_hz, uint64_t planned_ticks,
                              uint32_t entities)
{
    if (gy_is_finite(step_hz) && step_hz > 0.0)
        pg->step_hz = step_hz;
    uint64_t frames = GY_CLI_PAGE_MAX_ENTITY_FRAMES / (entities > 0 ? entities : 1u);
    if (frames > GY_CLI_PAGE_MAX_FRAMES)
        frames = GY_CLI_PAGE_MAX_FRAMES;
    if (frames < 2u)
        frames = 2u;
    /* planned_ticks + 1 states (tick 0 is the initial one) in at most `frames` frames. */
    pg->stride = planned_ticks / (frames - 1u) + (planned_ticks % (frames - 1u) != 0);
    if (pg->stride == 0)
        pg->stride = 1;
}

/* The triangles of a hull, or a mesh's own, as a geometry (shared arrays once). */
static int32_t add_geometry(gy_cli_page *pg, const gy_scene_collider *c)
{
    for (uint32_t i = 0; i < pg->geometry_count; i++)
        if (pg->geometries[i].key == c->vertices)
            return (int32_t)i;
    const gy_vec3 *v = c->vertices;
    uint32_t vn = c->vertex_count, in = c->index_count;
    const uint32_t *idx = c->indices;
    gy_hull hull;
    memset(&hull, 0, sizeof hull);
    if (c->def.shape.type == GY_SHAPE_HULL) {
        if (v == NULL || gy_hull_build(pg->alloc, v, vn, &hull) != GY_OK)
            return -1;
        v = hull.vertices;
        vn = hull.vertex_count;
        idx = hull.triangles;
        in = hull.triangle_count * 3u;
    }
    int32_t result = -1;
    if (v != NULL && idx != NULL &&
        reserve(pg, (void **)&pg->geometries, &pg->geometry_capacity, pg->geometry_count + 1u,
                sizeof *pg->geometries)) {
        page_geometry *g = &pg->geometries[pg->geometry_count];
        memset(g, 0, sizeof *g);
        g->key = c->vertices;
        g->vertex_count = vn;
        g->index_count = in;
        int64_t prev[3] = {0, 0, 0};
        for (uint32_t i = 0; i < vn; i++) {
            double xyz[3] = {v[i].x, v[i].y, v[i].z};
            for (int k = 0; k < 3; k++) {
                int64_t q = quantize(xyz[k], POINT_UNIT);
                put_signed(pg, &g->vertices, q - prev[k]);
                prev[k] = q;
            }
        }
        int64_t last = 0;
        for (uint32_t i = 0; i < in; i++) {
            put_signed(pg, &g->indices, (int64_t)idx[i] - last);
            last = (int64_t)idx[i];
        }
        result = (int32_t)pg->geometry_count++;
    }
    if (c->def.shape.type == GY_SHAPE_HULL)
        gy_hull_free(pg->alloc, &hull);
    return result;
}

int32_t gy_cli_page_add_entity(gy_cli_page *pg, const char *name, const gy_scene_physics *physics)
{
    if (!reserve(pg, (void **)&pg->entities, &pg->entity_capacity, pg->entity_count + 1u,
                 sizeof *pg->entities))
        return -1;
    page_entity *e = &pg->entities[pg->entity_count];
    memset(e, 0, sizeof *e);
    e->last_frame = -1;
    e->name = copy_string(pg, name);
    e->body = physics != NULL ? gy_body_type_name(physics->body_type) : "Static";
    e->character = physics != NULL && physics->is_character;
    uint32_t n = physics != NULL ? physics->collider_count : 0u;
    if (n > 0) {
        e->colliders = gy_alloc_zeroed(pg->alloc, (size_t)n * sizeof *e->colliders);
        if (e->colliders == NULL) {
            pg->oom = true;
            n = 0;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        const gy_scene_collider *sc = &physics->colliders[i];
        page_collider *pc = &e->colliders[i];
        pc->shape = sc->def.shape;
        pc->local = sc->def.local_pose;
        pc->sensor = sc->def.is_sensor;
        pc->geometry = -1;
        if (sc->def.shape.type == GY_SHAPE_HULL || sc->def.shape.type == GY_SHAPE_MESH)
            pc->geometry = add_geometry(pg, sc);
    }
    e->collider_count = n;
    return (int32_t)pg->entity_count++;
}

int32_t gy_cli_page_entity_count(const gy_cli_page *pg)
{
    return pg != NULL ? (int32_t)pg->entity_count : 0;
}

bool gy_cli_page_begin_frame(gy_cli_page *pg, uint64_t tick)
{
    if (pg == NULL || (int64_t)(tick / pg->stride) <= pg->last_frame)
        return false;
    pg->last_frame = (int64_t)(tick / pg->stride);
    return true;
}

static bool pose_is_finite(const gy_pose *p, gy_vec3 v)
{
    return gy_vec3_is_finite(p->position) && gy_vec3_is_finite(v) && gy_is_finite(p->rotation.x) &&
           gy_is_finite(p->rotation.y) && gy_is_finite(p->rotation.z) &&
           gy_is_finite(p->rotation.w);
}

/* One frame: the mask of changed values, then their changes. */
static void put_frame(gy_cli_page *pg, page_entity *e, const int64_t *q)
{
    uint64_t mask = 0;
    for (uint32_t k = 0; k < FRAME_VALUES; k++)
        if (q[k] != e->last[k])
            mask |= 1u << k;
    put_varint(pg, &e->stream, mask);
    for (uint32_t k = 0; k < FRAME_VALUES; k++) {
        if (mask & (1u << k))
            put_signed(pg, &e->stream, q[k] - e->last[k]);
        e->last[k] = q[k];
    }
}

void gy_cli_page_record(gy_cli_page *pg, uint64_t tick, int32_t entity, const gy_pose *pose,
                        gy_vec3 velocity, bool awake)
{
    if (pg == NULL || pg->oom || entity < 0 || (uint32_t)entity >= pg->entity_count ||
        pose == NULL || !pose_is_finite(pose, velocity))
        return;
    page_entity *e = &pg->entities[entity];
    int64_t frame = (int64_t)(tick / pg->stride);
    if (frame <= e->last_frame)
        return;
    if (frame > pg->last_frame)
        pg->last_frame = frame;
    gy_quat r = pose->rotation;
    int64_t q[FRAME_VALUES];
    q[0] = quantize(pose->position.x, POS_UNIT);
    q[1] = quantize(pose->position.y, POS_UNIT);
    q[2] = quantize(pose->position.z, POS_UNIT);
    q[3] = quantize(velocity.x, VEL_UNIT);
    q[4] = quantize(velocity.y, VEL_UNIT);
    q[5] = quantize(velocity.z, VEL_UNIT);
    q[6] = quantize(r.x, 1.0 / ROT_SCALE);
    q[7] = quantize(r.y, 1.0 / ROT_SCALE);
    q[8] = quantize(r.z, 1.0 / ROT_SCALE);
    q[9] = quantize(r.w, 1.0 / ROT_SCALE);
    q[10] = awake ? 1 : 0;
    bool continues =
        e->span_count > 0 && e->last_frame >= 0 && frame - e->last_frame <= (int64_t)GAP_FILL;
    if (continues) {
        /* q and -q are one rotation: keep the sign that changes least. */
        int64_t dot = q[6] * e->last[6] + q[7] * e->last[7] + q[8] * e->last[8] + q[9] * e->last[9];
        if (dot < 0)
            for (int k = 6; k < 10; k++)
                q[k] = -q[k];
        /* A real-time run can skip frame ticks: hold the last state over the gap. */
        for (int64_t f = e->last_frame + 1; f < frame; f++)
            put_varint(pg, &e->stream, 0);
        e->spans[2u * (e->span_count - 1u) + 1u] += (uint32_t)(frame - e->last_frame);
    } else {
        if (!reserve(pg, (void **)&e->spans, &e->span_capacity, e->span_count + 1u,
                     2u * sizeof *e->spans))
            return;
        e->spans[2u * e->span_count] = (uint32_t)frame;
        e->spans[2u * e->span_count + 1u] = 1u;
        e->span_count++;
        memset(e->last, 0, sizeof e->last);
    }
    put_frame(pg, e, q);
    e->last_frame = frame;
}

int32_t gy_cli_page_add_joint(gy_cli_page *pg, const char *type, int32_t a, int32_t b,
                              gy_vec3 anchor)
{
    if (pg == NULL || !reserve(pg, (void **)&pg->joints, &pg->joint_capacity, pg->joint_count + 1u,
                               sizeof *pg->joints))
        return -1;
    page_joint *j = &pg->joints[pg->joint_count];
    j->type = type;
    j->a = a;
    j->b = b;
    j->anchor = gy_vec3_is_finite(anchor) ? anchor : gy_v3(0, 0, 0);
    j->first = j->last = -1;
    return (int32_t)pg->joint_count++;
}

void gy_cli_page_joint_live(gy_cli_page *pg, int32_t joint, uint64_t tick)
{
    if (pg == NULL || joint < 0 || (uint32_t)joint >= pg->joint_count)
        return;
    page_joint *j = &pg->joints[joint];
    int64_t frame = (int64_t)(tick / pg->stride);
    if (j->first < 0 || frame < j->first)
        j->first = frame;
    if (frame > j->last)
        j->last = frame;
}

static int32_t kind_index(gy_cli_page *pg, const char *kind)
{
    for (uint32_t k = 0; k < pg->kind_total; k++)
        if (strcmp(pg->kinds[k], kind) == 0)
            return (int32_t)k;
    if (pg->kind_total == MAX_KINDS)
        return -1;
    char *c = copy_string(pg, kind);
    if (c == NULL)
        return -1;
    pg->kinds[pg->kind_total] = c;
    return (int32_t)pg->kind_total++;
}

/* The pair's record (zeroed when new), or NULL when out of memory. */
static page_pair *pair_of(gy_cli_page *pg, int32_t a, int32_t b)
{
    uint64_t *index;
    bool inserted;
    gy_map_key key = gy_map_key_pair((uint32_t)(a + 1), (uint32_t)(b + 1));
    if (gy_hash_map_upsert(&pg->pair_index, key, &index, &inserted) != GY_OK) {
        pg->oom = true;
        return NULL;
    }
    if (inserted) {
        if (page_pairs_push(pg->alloc, &pg->pairs, (page_pair){{0}}) != GY_OK) {
            gy_hash_map_remove(&pg->pair_index, key, NULL);
            pg->oom = true;
            return NULL;
        }
        *index = pg->pairs.count - 1u;
    }
    return &pg->pairs.items[*index];
}

void gy_cli_page_event(gy_cli_page *pg, uint64_t tick, const char *kind, int32_t a, int32_t b,
                       const gy_vec3 *point, const gy_vec3 *normal)
{
    if (pg == NULL || pg->oom || kind == NULL)
        return;
    int32_t k = kind_index(pg, kind);
    if (k < 0) {
        pg->events_other_dropped++;
        return;
    }
    if (pg->kind_count[k] >= GY_CLI_PAGE_MAX_EVENTS) {
        pg->kind_dropped[k]++;
        return;
    }
    if (a < -1)
        a = -1;
    if (b < -1)
        b = -1;
    bool contact =
        point != NULL && normal != NULL && gy_vec3_is_finite(*point) && gy_vec3_is_finite(*normal);
    page_pair *pair = contact ? pair_of(pg, a, b) : NULL;
    if (contact && pair == NULL)
        return;
    pg->kind_count[k]++;
    /* tick change, kind and contact flag, a + 1, b + 1; for a contact the mask of the values that
     * changed since the pair's last contact, then their changes. */
    put_signed(pg, &pg->events, (int64_t)tick - (int64_t)pg->event_last_tick);
    pg->event_last_tick = tick;
    put_varint(pg, &pg->events, (uint64_t)k * 2u + (contact ? 1u : 0u));
    put_varint(pg, &pg->events, (uint64_t)(a + 1));
    put_varint(pg, &pg->events, (uint64_t)(b + 1));
    if (contact) {
        int64_t q[6] = {
            quantize(point->x, POINT_UNIT),         quantize(point->y, POINT_UNIT),
            quantize(point->z, POINT_UNIT),         quantize(normal->x, 1.0 / NORMAL_UNIT),
            quantize(normal->y, 1.0 / NORMAL_UNIT), quantize(normal->z, 1.0 / NORMAL_UNIT)};
        uint64_t mask = 0;
        for (int i = 0; i < 6; i++)
            if (q[i] != pair->last[i])
                mask |= 1u << i;
        put_varint(pg, &pg->events, mask);
        for (int i = 0; i < 6; i++) {
            if (mask & (1u << i))
                put_signed(pg, &pg->events, q[i] - pair->last[i]);
            pair->last[i] = q[i];
        }
    }
}

void gy_cli_page_expect(gy_cli_page *pg, uint64_t tick, double at, const char *label, int passed,
                        const char *detail)
{
    if (pg == NULL || !reserve(pg, (void **)&pg->expects, &pg->expect_capacity,
                               pg->expect_count + 1u, sizeof *pg->expects))
        return;
    page_expect *x = &pg->expects[pg->expect_count++];
    x->tick = tick;
    x->at = at;
    x->label = copy_string(pg, label);
    x->detail = copy_string(pg, detail);
    x->passed = passed;
}

/* ---- series and histograms ------------------------------------------------------------------- */

int32_t gy_cli_page_add_series(gy_cli_page *pg, const char *name, const char *unit,
                               double duration_s, double gate)
{
    if (pg == NULL || !reserve(pg, (void **)&pg->series, &pg->series_capacity,
                               pg->series_count + 1u, sizeof *pg->series))
        return -1;
    page_series *s = gy_alloc_zeroed(pg->alloc, sizeof *s);
    if (s == NULL) {
        pg->oom = true;
        return -1;
    }
    s->name = copy_string(pg, name);
    s->unit = copy_string(pg, unit);
    s->duration = gy_is_finite(duration_s) && duration_s > 0.0 ? duration_s : 1.0;
    double bins = ceil(s->duration * 10.0);
    s->bins = bins < 20.0                              ? 20u
              : bins > (double)GY_CLI_PAGE_SERIES_BINS ? GY_CLI_PAGE_SERIES_BINS
                                                       : (uint32_t)bins;
    s->gate = gate;
    pg->series[pg->series_count] = s;
    return (int32_t)pg->series_count++;
}

void gy_cli_page_set_series_group(gy_cli_page *pg, int32_t series, const char *group)
{
    if (pg == NULL || series < 0 || (uint32_t)series >= pg->series_count)
        return;
    page_series *s = pg->series[series];
    free_string(pg, s->group);
    s->group = group != NULL ? copy_string(pg, group) : NULL;
}

void gy_cli_page_sample(gy_cli_page *pg, int32_t series, double t, double value)
{
    if (pg == NULL || series < 0 || (uint32_t)series >= pg->series_count || !gy_is_finite(t) ||
        !gy_is_finite(value))
        return;
    page_series *s = pg->series[series];
    double b = floor(t / s->duration * (double)s->bins);
    uint32_t bin = b < 0.0 ? 0u : b >= (double)s->bins ? s->bins - 1u : (uint32_t)b;
    if (s->n[bin] == 0 || value > s->max[bin])
        s->max[bin] = value;
    s->sum[bin] += value;
    s->n[bin]++;
}

void gy_cli_page_add_histogram(gy_cli_page *pg, const char *name, const char *unit,
                               const double *values, const uint64_t *counts, uint32_t n,
                               const char *summary, double gate)
{
    if (pg == NULL || !reserve(pg, (void **)&pg->histograms, &pg->histogram_capacity,
                               pg->histogram_count + 1u, sizeof *pg->histograms))
        return;
    page_histogram *h = &pg->histograms[pg->histogram_count];
    memset(h, 0, sizeof *h);
    if (n > 0) {
        h->values = gy_alloc(pg->alloc, (size_t)n * sizeof *h->values);
        h->counts = gy_alloc(pg->alloc, (size_t)n * sizeof *h->counts);
        if (h->values == NULL || h->counts == NULL) {
            if (h->values != NULL)
                gy_free(pg->alloc, h->values, (size_t)n * sizeof *h->values);
            if (h->counts != NULL)
                gy_free(pg->alloc, h->counts, (size_t)n * sizeof *h->counts);
            pg->oom = true;
            return;
        }
        memcpy(h->values, values, (size_t)n * sizeof *values);
        memcpy(h->counts, counts, (size_t)n * sizeof *counts);
    }
    h->n = n;
    h->name = copy_string(pg, name);
    h->unit = copy_string(pg, unit);
    h->summary = copy_string(pg, summary);
    h->gate = gate;
    pg->histogram_count++;
}

/* ---- writing --------------------------------------------------------------------------------- */

static void base64(FILE *f, const bytes *b)
{
    static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    fputc('"', f);
    size_t i = 0;
    for (; i + 3u <= b->len; i += 3u) {
        uint32_t v = (uint32_t)b->p[i] << 16 | (uint32_t)b->p[i + 1] << 8 | b->p[i + 2];
        fputc(k[v >> 18], f);
        fputc(k[(v >> 12) & 63u], f);
        fputc(k[(v >> 6) & 63u], f);
        fputc(k[v & 63u], f);
    }
    if (b->len - i == 1u) {
        uint32_t v = (uint32_t)b->p[i] << 16;
        fprintf(f, "%c%c==", k[v >> 18], k[(v >> 12) & 63u]);
    } else if (b->len - i == 2u) {
        uint32_t v = (uint32_t)b->p[i] << 16 | (uint32_t)b->p[i + 1] << 8;
        fprintf(f, "%c%c%c=", k[v >> 18], k[(v >> 12) & 63u], k[(v >> 6) & 63u]);
    }
    fputc('"', f);
}

static void number_array(FILE *f, const double *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        gy_cli_json_number(f, v[i]);
    }
    fputc(']', f);
}

static const char *shape_name(gy_shape_type t)
{
    static const char *const names[GY_SHAPE_TYPE_COUNT] = {"sphere", "box",  "capsule", "cylinder",
                                                           "plane",  "hull", "mesh"};
    return (unsigned)t < GY_SHAPE_TYPE_COUNT ? names[t] : "?";
}

static void write_collider(FILE *f, const page_collider *c)
{
    fprintf(f, "{\"shape\":\"%s\",\"sensor\":%s,\"pose\":", shape_name(c->shape.type),
            c->sensor ? "true" : "false");
    double pose[7] = {c->local.position.x, c->local.position.y, c->local.position.z,
                      c->local.rotation.x, c->local.rotation.y, c->local.rotation.z,
                      c->local.rotation.w};
    number_array(f, pose, 7);
    const gy_shape *s = &c->shape;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        fputs(",\"radius\":", f);
        gy_cli_json_number(f, s->radius);
        break;
    case GY_SHAPE_BOX: {
        double size[3] = {s->box_size.x, s->box_size.y, s->box_size.z};
        fputs(",\"size\":", f);
        number_array(f, size, 3);
        break;
    }
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER:
        fputs(",\"radius\":", f);
        gy_cli_json_number(f, s->radius);
        fputs(",\"height\":", f);
        gy_cli_json_number(f, s->height);
        break;
    case GY_SHAPE_PLANE: {
        double n[3] = {s->normal.x, s->normal.y, s->normal.z};
        fputs(",\"normal\":", f);
        number_array(f, n, 3);
        fputs(",\"offset\":", f);
        gy_cli_json_number(f, s->offset);
        break;
    }
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH:
        fprintf(f, ",\"geometry\":%d", c->geometry);
        break;
    default:
        break;
    }
    fputc('}', f);
}

static void write_run(const gy_cli_page *pg, FILE *f)
{
    fprintf(f, ",\"step_hz\":");
    gy_cli_json_number(f, pg->step_hz);
    fprintf(f, ",\"stride\":%llu,\"frames\":%lld,\"max_events_per_kind\":%u",
            (unsigned long long)pg->stride, (long long)(pg->last_frame + 1),
            GY_CLI_PAGE_MAX_EVENTS);
    fprintf(f,
            ",\"units\":{\"position\":%g,\"velocity\":%g,\"rotation\":%g,\"point\":%g,"
            "\"normal\":%g}",
            POS_UNIT, VEL_UNIT, ROT_SCALE, POINT_UNIT, NORMAL_UNIT);
    fputs(",\"geometries\":[", f);
    for (uint32_t i = 0; i < pg->geometry_count; i++) {
        const page_geometry *g = &pg->geometries[i];
        fprintf(f, "%s{\"vertex_count\":%u,\"index_count\":%u,\"vertices\":", i ? "," : "",
                g->vertex_count, g->index_count);
        base64(f, &g->vertices);
        fputs(",\"indices\":", f);
        base64(f, &g->indices);
        fputc('}', f);
    }
    fputs("],\"entities\":[", f);
    for (uint32_t i = 0; i < pg->entity_count; i++) {
        const page_entity *e = &pg->entities[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        gy_cli_json_string(f, e->name);
        fprintf(f, ",\"body\":\"%s\",\"character\":%s,\"colliders\":[", e->body,
                e->character ? "true" : "false");
        for (uint32_t c = 0; c < e->collider_count; c++) {
            if (c)
                fputc(',', f);
            write_collider(f, &e->colliders[c]);
        }
        fputs("],\"spans\":[", f);
        for (uint32_t s = 0; s < e->span_count; s++)
            fprintf(f, "%s%u,%u", s ? "," : "", e->spans[2u * s], e->spans[2u * s + 1u]);
        fputs("],\"frames\":", f);
        base64(f, &e->stream);
        fputc('}', f);
    }
    fputs("],\"joints\":[", f);
    for (uint32_t i = 0; i < pg->joint_count; i++) {
        const page_joint *j = &pg->joints[i];
        double anchor[3] = {j->anchor.x, j->anchor.y, j->anchor.z};
        fprintf(f, "%s{\"type\":\"%s\",\"a\":%d,\"b\":%d,\"anchor\":", i ? "," : "", j->type, j->a,
                j->b);
        number_array(f, anchor, 3);
        fprintf(f, ",\"first\":%lld,\"last\":%lld}", (long long)j->first, (long long)j->last);
    }
    fputs("],\"event_kinds\":[", f);
    for (uint32_t k = 0; k < pg->kind_total; k++) {
        if (k)
            fputc(',', f);
        fprintf(f, "{\"kind\":");
        gy_cli_json_string(f, pg->kinds[k]);
        fprintf(f, ",\"count\":%llu,\"dropped\":%llu}", (unsigned long long)pg->kind_count[k],
                (unsigned long long)pg->kind_dropped[k]);
    }
    fputs("],\"events\":", f);
    base64(f, &pg->events);
    fputs(",\"expects\":[", f);
    for (uint32_t i = 0; i < pg->expect_count; i++) {
        const page_expect *x = &pg->expects[i];
        fprintf(f, "%s{\"tick\":%llu,\"at\":", i ? "," : "", (unsigned long long)x->tick);
        gy_cli_json_number(f, x->at);
        fputs(",\"label\":", f);
        gy_cli_json_string(f, x->label);
        fprintf(f, ",\"passed\":%s,\"detail\":",
                x->passed > 0    ? "true"
                : x->passed == 0 ? "false"
                                 : "null");
        gy_cli_json_string(f, x->detail);
        fputc('}', f);
    }
    fputc(']', f);
}

static void write_plots(const gy_cli_page *pg, FILE *f)
{
    fputs(",\"series\":[", f);
    for (uint32_t i = 0; i < pg->series_count; i++) {
        const page_series *s = pg->series[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        gy_cli_json_string(f, s->name);
        fputs(",\"group\":", f);
        if (s->group != NULL)
            gy_cli_json_string(f, s->group);
        else
            fputs("null", f);
        fputs(",\"unit\":", f);
        gy_cli_json_string(f, s->unit);
        fputs(",\"duration\":", f);
        gy_cli_json_number(f, s->duration);
        fputs(",\"gate\":", f);
        gy_cli_json_number(f, s->gate);
        double mean[GY_CLI_PAGE_SERIES_BINS], max[GY_CLI_PAGE_SERIES_BINS];
        for (uint32_t b = 0; b < s->bins; b++) {
            mean[b] = s->n[b] ? s->sum[b] / (double)s->n[b] : NAN;
            max[b] = s->n[b] ? s->max[b] : NAN;
        }
        fputs(",\"mean\":", f);
        number_array(f, mean, s->bins);
        fputs(",\"max\":", f);
        number_array(f, max, s->bins);
        fputc('}', f);
    }
    fputs("],\"histograms\":[", f);
    for (uint32_t i = 0; i < pg->histogram_count; i++) {
        const page_histogram *h = &pg->histograms[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        gy_cli_json_string(f, h->name);
        fputs(",\"unit\":", f);
        gy_cli_json_string(f, h->unit);
        fputs(",\"summary\":", f);
        gy_cli_json_string(f, h->summary);
        fputs(",\"gate\":", f);
        gy_cli_json_number(f, h->gate);
        fputs(",\"values\":", f);
        number_array(f, h->values, h->n);
        fputs(",\"counts\":[", f);
        for (uint32_t k = 0; k < h->n; k++)
            fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)h->counts[k]);
        fputs("]}", f);
    }
    fputc(']', f);
}

/* Copies `n` bytes, each '<' as the JSON escape \u003c (JSON text has '<' only inside strings). */
static void put_script_safe(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<')
            fputs("\\u003c", f);
        else
            fputc(s[i], f);
    }
}

/* The template's text up to `marker` from *at (and *at moved past it); false when absent. */
static bool put_until(FILE *f, const char *text, size_t size, size_t *at, const char *marker)
{
    size_t m = strlen(marker);
    const char *p = memmem(text + *at, size - *at, marker, m);
    if (p == NULL)
        return false;
    fwrite(text + *at, 1, (size_t)(p - (text + *at)), f);
    *at = (size_t)(p - text) + m;
    return true;
}

bool gy_cli_page_write(const gy_cli_page *pg, FILE *f)
{
    if (pg == NULL || pg->oom)
        return false;
    char *data = NULL;
    size_t data_size = 0;
    FILE *d = open_memstream(&data, &data_size);
    if (d == NULL)
        return false;
    fprintf(d, "{\"format\":\"gyre.page\",\"version\":1,\"kind\":\"%s\",\"info\":[",
            pg->kind == GY_CLI_PAGE_RUN ? "run" : "soak");
    for (uint32_t i = 0; i < pg->info_count; i++) {
        fputs(i ? ",[" : "[", d);
        gy_cli_json_string(d, pg->info[i].key);
        fputc(',', d);
        gy_cli_json_string(d, pg->info[i].value);
        fputc(']', d);
    }
    fputc(']', d);
    if (pg->kind == GY_CLI_PAGE_RUN)
        write_run(pg, d);
    write_plots(pg, d);
    fputs("}", d);
    bool ok = ferror(d) == 0;
    ok &= fclose(d) == 0;
    const char *html = (const char *)gy_cli_page_html;
    size_t at = 0;
    if (ok && put_until(f, html, sizeof gy_cli_page_html, &at, "@GYRE_DATA@")) {
        put_script_safe(f, data, data_size);
        if (put_until(f, html, sizeof gy_cli_page_html, &at, "@GYRE_SCRIPT@")) {
            fwrite(gy_cli_page_js, 1, sizeof gy_cli_page_js, f);
            fwrite(html + at, 1, sizeof gy_cli_page_html - at, f);
        } else {
            ok = false;
        }
    } else {
        ok = false;
    }
    free(data);
    return ok;
}
