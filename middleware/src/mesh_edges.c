/* Internal edges of triangle meshes (see mesh_edges.h). */
#include "mesh_edges.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "gyre/hash_map.h"

/* Faces whose normals are this close to opposite are back to back: their edge stays active. */
#define BACK_TO_BACK_COS (-0.999)
/* A contact normal further than 120° from the face normal comes from a body behind the face. An
 * internal edge's ghost normal lies in the face's plane (cos about 0, either sign by rounding). */
#define BEHIND_COS (-0.5)

static gy_vec3 corner(const gy_adapter_mesh_edges *e, uint32_t tri, uint32_t k)
{
    return e->vertices[e->indices[3u * tri + k % 3u]];
}

/* Unit (v1 − v0) × (v2 − v0); zero when degenerate. */
static gy_vec3 face_normal(const gy_adapter_mesh_edges *e, uint32_t t)
{
    gy_vec3 v0 = corner(e, t, 0), v1 = corner(e, t, 1), v2 = corner(e, t, 2);
    gy_vec3 n = gy_v3_cross(gy_v3_sub(v1, v0), gy_v3_sub(v2, v0));
    double len = gy_v3_len(n);
    return len > 0.0 && isfinite(len) ? gy_v3_scale(n, 1.0 / len) : gy_v3(0, 0, 0);
}

/* Whether the edge shared by a's edge ka and b's edge kb must keep its own normal: not when the
 * faces meet flat or in a valley. Faces wound against each other (the shared edge runs the same
 * way in both) have no inside to tell convex from concave: active. */
static bool shared_edge_active(const gy_adapter_mesh_edges *e, const uint32_t *weld, uint32_t a,
                               uint32_t ka, uint32_t b, uint32_t kb)
{
    gy_vec3 na = e->normals[a], nb = e->normals[b];
    if (gy_v3_len_sq(na) == 0.0 || gy_v3_len_sq(nb) == 0.0)
        return true;
    if (weld[e->indices[3u * a + ka]] == weld[e->indices[3u * b + kb]])
        return true;
    double c = gy_v3_dot(na, nb);
    if (c < BACK_TO_BACK_COS)
        return true;
    gy_vec3 along = gy_v3_sub(corner(e, a, ka + 1u), corner(e, a, ka));
    if (gy_v3_dot(gy_v3_cross(na, nb), along) < 0.0)
        return false; /* a valley */
    return c < GY_ADAPTER_EDGE_COPLANAR_COS;
}

/* The closest point to p on the segment a–b. */
static gy_vec3 closest_on_segment(gy_vec3 a, gy_vec3 b, gy_vec3 p)
{
    gy_vec3 ab = gy_v3_sub(b, a);
    double l2 = gy_v3_len_sq(ab);
    double t = l2 > 0.0 ? gy_v3_dot(gy_v3_sub(p, a), ab) / l2 : 0.0;
    return gy_v3_mad(a, ab, fmin(1.0, fmax(0.0, t)));
}

bool gy_adapter_mesh_edges_fix_normal(const gy_adapter_mesh_edges *e, int64_t tri, gy_vec3 point,
                                      gy_vec3 *normal)
{
    if (tri < 0 || tri >= (int64_t)e->triangle_count)
        return false;
    uint32_t t = (uint32_t)tri;
    gy_vec3 nf = e->normals[t];
    double c = gy_v3_dot(*normal, nf);
    if (gy_v3_len_sq(nf) == 0.0 || c < BEHIND_COS ||
        (normal->x == nf.x && normal->y == nf.y && normal->z == nf.z))
        return false;
    gy_vec3 v[3] = {corner(e, t, 0), corner(e, t, 1), corner(e, t, 2)};
    /* The contact's place on the triangle: the point dropped onto the face's plane; the edges
     * within a hair of the closest point to it on the triangle (none: the face's inside). */
    gy_vec3 q = gy_v3_mad(point, nf, -gy_v3_dot(gy_v3_sub(point, v[0]), nf));
    double dist[3], size = 0.0;
    bool inside = true;
    for (uint32_t k = 0; k < 3u; k++) {
        gy_vec3 a = v[k], b = v[(k + 1u) % 3u];
        gy_vec3 ab = gy_v3_sub(b, a);
        size = fmax(size, gy_v3_len(ab));
        if (gy_v3_dot(gy_v3_cross(ab, gy_v3_sub(q, a)), nf) < 0.0)
            inside = false;
        dist[k] = gy_v3_len(gy_v3_sub(q, closest_on_segment(a, b, q)));
    }
    double nearest = fmin(dist[0], fmin(dist[1], dist[2]));
    double hair = 1e-6 * size;
    uint32_t on = 0;
    for (uint32_t k = 0; k < 3u; k++)
        if ((!inside || dist[k] <= hair) && dist[k] <= nearest + hair)
            on |= 1u << k;
    if ((on & e->active[t]) != 0)
        return false;
    *normal = nf;
    return true;
}

/* ---- classification in slices ---------------------------------------------------------------- */

/* The edge map's value: the half-edges (3 * triangle + corner) of the first two faces naming an
 * edge, the first in the low word. A second of NO_HALF_EDGE: one face so far; a first of
 * NO_HALF_EDGE: three or more (the edge stays active). No half-edge reaches it: a valid mesh has
 * at most UINT32_MAX indices, a multiple of 3. */
#define NO_HALF_EDGE UINT32_MAX

typedef enum classify_phase { WELD, EDGES, RESOLVE, DONE } classify_phase;

struct gy_mesh_edge_classifier {
    const gy_allocator *al;
    gy_mesh_def def;
    uint8_t *active;
    gy_adapter_mesh_edges view; /* the definition's arrays (not owned) and the normals */
    bool owns_normals;          /* false: the caller's (an adapter's edge record) */
    uint32_t *weld;             /* vertex -> first vertex at its position */
    /* (position hash, n) -> the n-th welded vertex with that hash, n counting collisions. */
    gy_hash_map vertices;
    gy_hash_map edges; /* welded ends (lo << 32 | hi) -> half-edges, above */
    classify_phase phase;
    size_t cursor;
};

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c *= 2u;
    return c;
}

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t double_bits(double v)
{
    v += 0.0; /* -0 and 0 weld, as same_position has them equal */
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static uint64_t vertex_hash(gy_vec3 p)
{
    return mix64(double_bits(p.x) ^ mix64(double_bits(p.y) ^ mix64(double_bits(p.z))));
}

static bool same_position(gy_vec3 a, gy_vec3 b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

void gy_mesh_edge_classifier_free(gy_mesh_edge_classifier *c)
{
    if (c == NULL)
        return;
    const gy_allocator *al = c->al;
    uint32_t nv = c->def.vertex_count, nt = c->def.index_count / 3u;
    if (c->owns_normals)
        gy_free(al, c->view.normals, (size_t)nt * sizeof *c->view.normals);
    gy_free(al, c->weld, (size_t)nv * sizeof *c->weld);
    gy_hash_map_fini(&c->vertices);
    gy_hash_map_fini(&c->edges);
    gy_free(al, c, sizeof *c);
}

/* Starts classifying a valid `def` into `active`, its face normals into `normals` (NULL: an array
 * of the classifier's own). */
static gy_result classifier_start(const gy_allocator *al, const gy_mesh_def *def, uint8_t *active,
                                  gy_vec3 *normals, gy_mesh_edge_classifier **out)
{
    *out = NULL;
    gy_mesh_edge_classifier *c = gy_alloc_zeroed(al, sizeof *c);
    if (c == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t nv = def->vertex_count, nt = def->index_count / 3u;
    c->al = al;
    c->def = *def;
    c->active = active;
    c->view.vertices = (gy_vec3 *)(uintptr_t)def->vertices;
    c->view.indices = (uint32_t *)(uintptr_t)def->indices;
    c->view.vertex_count = nv;
    c->view.triangle_count = nt;
    c->view.active = active;
    gy_hash_map_init(&c->vertices, al);
    gy_hash_map_init(&c->edges, al);
    c->owns_normals = normals == NULL;
    c->view.normals = normals != NULL ? normals : gy_alloc(al, (size_t)nt * sizeof *normals);
    c->weld = gy_alloc(al, (size_t)nv * sizeof *c->weld);
    /* Reserved for every vertex and every edge: the slices never allocate, and the edge table's
     * size, which the resolve pass walks, is known up front (gy_mesh_edge_classifier_units). */
    if (c->view.normals == NULL || c->weld == NULL ||
        gy_hash_map_reserve(&c->vertices, nv) != GY_OK ||
        gy_hash_map_reserve(&c->edges, 3u * nt) != GY_OK) {
        gy_mesh_edge_classifier_free(c);
        return GY_ERR_OUT_OF_MEMORY;
    }
    assert(c->edges.capacity == pow2_at_least(6u * (size_t)nt));
    *out = c;
    return GY_OK;
}

gy_result gy_mesh_edge_classifier_begin(const gy_allocator *al, const gy_mesh_def *def,
                                        uint8_t *active, gy_mesh_edge_classifier **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (al == NULL || active == NULL || gy_validate_mesh_def(def) != GY_OK)
        return GY_ERR_INVALID_ARGUMENT;
    return classifier_start(al, def, active, NULL, out);
}

static void weld_vertex(gy_mesh_edge_classifier *c, uint32_t v)
{
    gy_vec3 p = c->def.vertices[v];
    uint64_t h = vertex_hash(p);
    for (uint64_t n = 0;; n++) {
        uint64_t *held;
        bool inserted;
        gy_result r = gy_hash_map_upsert(&c->vertices, gy_map_key_pair(h, n), &held, &inserted);
        assert(r == GY_OK); /* reserved */
        (void)r;
        if (inserted)
            *held = v;
        if (inserted || same_position(c->def.vertices[*held], p)) {
            c->weld[v] = (uint32_t)*held;
            return;
        }
    }
}

static void add_edge(gy_mesh_edge_classifier *c, uint32_t a, uint32_t b, uint32_t t, uint32_t k)
{
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    uint64_t half = 3u * (uint64_t)t + k, *faces;
    bool inserted;
    gy_result r = gy_hash_map_upsert(&c->edges, gy_map_key_of(lo << 32 | hi), &faces, &inserted);
    assert(r == GY_OK); /* reserved */
    (void)r;
    if (inserted)
        *faces = (uint64_t)NO_HALF_EDGE << 32 | half;
    else if ((*faces >> 32) == NO_HALF_EDGE)
        *faces = half << 32 | (*faces & 0xffffffffu); /* the second face */
    else
        *faces |= NO_HALF_EDGE; /* a third */
}

bool gy_mesh_edge_classifier_run(gy_mesh_edge_classifier *c, uint64_t budget, uint64_t *used)
{
    uint64_t spent = 0;
    uint32_t nv = c->def.vertex_count, nt = c->def.index_count / 3u;
    while (c->phase != DONE && spent < budget) {
        switch (c->phase) {
        case WELD:
            if (c->cursor == nv) {
                c->phase = EDGES;
                c->cursor = 0;
                break;
            }
            weld_vertex(c, (uint32_t)c->cursor++);
            spent += 1u;
            break;
        case EDGES: {
            if (c->cursor == nt) {
                c->phase = RESOLVE;
                c->cursor = 0;
                break;
            }
            if (spent + 3u > budget) {
                *used = spent; /* never over the budget: the triangle waits */
                return false;
            }
            uint32_t t = (uint32_t)c->cursor++;
            c->view.normals[t] = face_normal(&c->view, t);
            c->active[t] = 7u; /* until a neighbour says otherwise */
            for (uint32_t k = 0; k < 3u; k++) {
                uint32_t a = c->weld[c->def.indices[3u * t + k]];
                uint32_t b = c->weld[c->def.indices[3u * t + (k + 1u) % 3u]];
                if (a != b)
                    add_edge(c, a, b, t, k);
            }
            spent += 3u;
            break;
        }
        case RESOLVE: {
            if (c->cursor == c->edges.capacity) {
                c->phase = DONE;
                break;
            }
            uint64_t faces;
            bool live = gy_hash_map_slot(&c->edges, (uint32_t)c->cursor++, NULL, &faces);
            spent += 1u;
            uint32_t h0 = (uint32_t)faces, h1 = (uint32_t)(faces >> 32);
            uint32_t t0 = h0 / 3u, k0 = h0 % 3u, t1 = h1 / 3u, k1 = h1 % 3u;
            /* Exactly two faces share it; a boundary edge or one shared by more stays active. */
            if (!live || h0 == NO_HALF_EDGE || h1 == NO_HALF_EDGE || t0 == t1 ||
                shared_edge_active(&c->view, c->weld, t0, k0, t1, k1))
                break;
            c->active[t0] &= (uint8_t) ~(1u << k0);
            c->active[t1] &= (uint8_t) ~(1u << k1);
            break;
        }
        case DONE:
            break;
        }
    }
    *used = spent;
    return c->phase == DONE;
}

uint64_t gy_mesh_edge_classifier_units(const gy_mesh_def *def)
{
    return (uint64_t)def->vertex_count + 3u * (uint64_t)(def->index_count / 3u) +
           pow2_at_least(6u * (size_t)(def->index_count / 3u));
}

/* The whole classification of a valid `def` in one go (normals as classifier_start). */
static gy_result classify_whole(const gy_allocator *al, const gy_mesh_def *def, uint8_t *active,
                                gy_vec3 *normals)
{
    gy_mesh_edge_classifier *c;
    gy_result r = classifier_start(al, def, active, normals, &c);
    if (r != GY_OK)
        return r;
    uint64_t used;
    gy_mesh_edge_classifier_run(c, UINT64_MAX, &used);
    gy_mesh_edge_classifier_free(c);
    return GY_OK;
}

gy_result gy_mesh_classify_edges(const gy_allocator *al, const gy_mesh_def *def, uint8_t *active)
{
    if (al == NULL || active == NULL || gy_validate_mesh_def(def) != GY_OK)
        return GY_ERR_INVALID_ARGUMENT;
    return classify_whole(al, def, active, NULL);
}

/* ---- the adapter's edge record ------------------------------------------------------------- */

void gy_adapter_mesh_edges_free(const gy_allocator *al, gy_adapter_mesh_edges *e)
{
    gy_free(al, e->vertices, (size_t)e->vertex_count * sizeof *e->vertices);
    gy_free(al, e->indices, (size_t)e->triangle_count * 3u * sizeof *e->indices);
    gy_free(al, e->normals, (size_t)e->triangle_count * sizeof *e->normals);
    gy_free(al, e->active, (size_t)e->triangle_count * sizeof *e->active);
    memset(e, 0, sizeof *e);
}

gy_result gy_adapter_mesh_edges_build(const gy_allocator *al, const gy_mesh_def *def,
                                      gy_adapter_mesh_edges *out)
{
    return gy_adapter_mesh_edges_build_piece(al, def, NULL, out);
}

gy_result gy_adapter_mesh_edges_build_piece(const gy_allocator *al, const gy_mesh_def *def,
                                            const uint8_t *active_edges, gy_adapter_mesh_edges *out)
{
    memset(out, 0, sizeof *out);
    uint32_t nv = def->vertex_count, nt = def->index_count / 3u;
    out->vertices = gy_alloc(al, (size_t)nv * sizeof *out->vertices);
    out->indices = gy_alloc(al, (size_t)nt * 3u * sizeof *out->indices);
    out->normals = gy_alloc(al, (size_t)nt * sizeof *out->normals);
    out->active = gy_alloc(al, (size_t)nt * sizeof *out->active);
    out->vertex_count = nv;
    out->triangle_count = nt;
    gy_result r = GY_ERR_OUT_OF_MEMORY;
    if (out->vertices != NULL && out->indices != NULL && out->normals != NULL &&
        out->active != NULL) {
        memcpy(out->vertices, def->vertices, (size_t)nv * sizeof *out->vertices);
        memcpy(out->indices, def->indices, (size_t)nt * 3u * sizeof *out->indices);
        r = GY_OK;
    }
    if (r == GY_OK && active_edges != NULL) {
        /* Classified over a larger mesh this one is a piece of: its seams are no boundary. */
        for (uint32_t t = 0; t < nt; t++)
            out->normals[t] = face_normal(out, t);
        memcpy(out->active, active_edges, (size_t)nt * sizeof *out->active);
    } else if (r == GY_OK) {
        r = classify_whole(al, def, out->active, out->normals);
    }
    if (r != GY_OK)
        gy_adapter_mesh_edges_free(al, out);
    return r;
}
