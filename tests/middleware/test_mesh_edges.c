/* Internal mesh edges (middleware/src/mesh_edges.c): which edges keep their own normal, and which
 * contact normals become the face normal. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../middleware/src/contacts.h"
#include "../../middleware/src/mesh_edges.h"
#include "gyre/math.h"

/* Two triangles sharing the edge (0,0,0)–(0,0,1): the first flat on y = 0 over x < 0 (normal up),
 * the second over x > 0 rising to height `h` at x = 1 (h > 0: a valley, h < 0: a ridge). */
static void build_pair(gy_test_allocator *ta, double h, gy_adapter_mesh_edges *e)
{
    const gy_vec3 v[6] = {gy_v3(-1, 0, 0), gy_v3(0, 0, 1), gy_v3(0, 0, 0),
                          gy_v3(0, 0, 0),  gy_v3(0, 0, 1), gy_v3(1, h, 0)};
    /* Vertices 2/3 and 1/4 repeat positions: welding must join them. */
    const uint32_t idx[6] = {0, 1, 2, 3, 4, 5};
    gy_mesh_def md = {v, 6, idx, 6};
    assert_result(gy_adapter_mesh_edges_build(&ta->base, &md, e), GY_OK);
}

static void test_mesh_edges_flat_join_is_inactive_and_boundary_active(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_mesh_edges e;
    build_pair(&ta, 0.0, &e);
    assert_int_equal(e.triangle_count, 2);
    assert_near(e.normals[0].y, 1.0, 1e-12);
    /* First triangle: edges 0 (v0→v1) and 2 (v2→v0) are the boundary, 1 (v1→v2) is shared. */
    assert_int_equal(e.active[0], (1u << 0) | (1u << 2));
    /* Second: edge 0 (v3→v4) is shared. */
    assert_int_equal(e.active[1], (1u << 1) | (1u << 2));

    /* A sideways normal at the shared edge becomes the face normal... */
    gy_vec3 n = gy_v3(-1, 0, 0);
    assert_true(gy_adapter_mesh_edges_fix_normal(&e, 1, gy_v3(0, 0, 0.5), &n));
    assert_near(n.x, 0.0, 1e-12);
    assert_near(n.y, 1.0, 1e-12);
    /* ...inside the face too, but not at the boundary, nor from behind, nor for no triangle. */
    n = gy_v3(0.6, 0.8, 0);
    assert_true(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-0.2, 0, 0.3), &n));
    assert_near(n.y, 1.0, 1e-12);
    n = gy_v3(-0.6, 0.8, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-1.2, 0, 0.0), &n));
    n = gy_v3(0, -1, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(-0.2, 0, 0.3), &n));
    n = gy_v3(-1, 0, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, -1, gy_v3(0, 0, 0.5), &n));
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 2, gy_v3(0, 0, 0.5), &n));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_mesh_edges_ridge_is_active_valley_and_shallow_ridge_are_not(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_mesh_edges e;
    /* A 30° ridge keeps its edge: a body sliding off it meets the corner. */
    build_pair(&ta, -tan(GY_PI / 6.0), &e);
    assert_true(e.active[0] & (1u << 1));
    assert_true(e.active[1] & (1u << 0));
    gy_vec3 n = gy_v3(0.2588, 0.9659, 0);
    assert_false(gy_adapter_mesh_edges_fix_normal(&e, 0, gy_v3(0, 0, 0.5), &n));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    /* A 30° valley does not: its faces hold the body. */
    build_pair(&ta, tan(GY_PI / 6.0), &e);
    assert_false(e.active[0] & (1u << 1));
    assert_false(e.active[1] & (1u << 0));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    /* Nor does a 2° ridge, under the 5° coplanar threshold. */
    build_pair(&ta, -tan(2.0 * GY_PI / 180.0), &e);
    assert_false(e.active[0] & (1u << 1));
    gy_adapter_mesh_edges_free(&ta.base, &e);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_mesh_edges_out_of_memory_leaves_nothing(void **state)
{
    (void)state;
    for (uint64_t fail = 1; fail <= 7; fail++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        ta.fail_at = fail;
        const gy_vec3 v[3] = {gy_v3(0, 0, 0), gy_v3(0, 0, 1), gy_v3(1, 0, 0)};
        const uint32_t idx[3] = {0, 1, 2};
        gy_mesh_def md = {v, 3, idx, 3};
        gy_adapter_mesh_edges e;
        assert_result(gy_adapter_mesh_edges_build(&ta.base, &md, &e), GY_ERR_OUT_OF_MEMORY);
        assert_int_equal(e.triangle_count, 0);
        assert_int_equal(ta.live_blocks, 0);
    }
}

/* A bumpy 24 × 24 grid (ridges, valleys and flat runs), its vertices duplicated per triangle
 * for every third square so welding matters, plus a degenerate triangle and a fin shared by three
 * faces: the classification in slices gives exactly the one-go classification, and no call spends
 * more than its budget. */
static void test_mesh_edges_classifier_in_slices_matches_the_whole_build(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    enum { N = 24, NV = (N + 1) * (N + 1) + 6 * N * N + 3, NI = 6 * N * N + 6 };
    static gy_vec3 v[NV];
    static uint32_t idx[NI];
    uint32_t nv = 0, ni = 0;
    for (uint32_t z = 0; z <= N; z++)
        for (uint32_t x = 0; x <= N; x++)
            v[nv++] = gy_v3(x, (x % 5u == 2u ? 0.4 : 0.0) - (z % 7u == 3u ? 0.3 : 0.0), z);
    for (uint32_t z = 0; z < N; z++)
        for (uint32_t x = 0; x < N; x++) {
            uint32_t a = z * (N + 1u) + x, b = a + 1u, c = a + N + 1u, d = c + 1u;
            uint32_t tri[6] = {a, c, b, b, c, d};
            for (uint32_t k = 0; k < 6u; k++) {
                if ((x + z) % 3u == 0u) { /* a copy at the same place */
                    v[nv] = v[tri[k]];
                    tri[k] = nv++;
                }
                idx[ni++] = tri[k];
            }
        }
    /* A degenerate triangle on the grid's corner and a third face on edge 0–1 (a fin). */
    v[nv++] = gy_v3(0.5, 1.0, 0.0);
    uint32_t extra[6] = {0, 0, 1, 0, 1, nv - 1u};
    memcpy(&idx[ni], extra, sizeof extra);
    ni += 6u;
    gy_mesh_def md = {v, nv, idx, ni};
    gy_adapter_mesh_edges whole;
    assert_result(gy_adapter_mesh_edges_build(&ta.base, &md, &whole), GY_OK);
    uint32_t nt = ni / 3u;
    uint8_t *sliced = test_malloc(nt);
    gy_mesh_edge_classifier *c;
    assert_result(gy_mesh_edge_classifier_begin(&ta.base, &md, sliced, &c), GY_OK);
    uint64_t total = 0, calls = 0, used;
    for (bool done = false; !done; calls++) {
        assert_true(calls < 1000000u);
        done = gy_mesh_edge_classifier_run(c, 7u, &used);
        assert_true(used <= 7u);
        total += used;
    }
    gy_mesh_edge_classifier_free(c);
    assert_int_equal(total, gy_mesh_edge_classifier_units(&md));
    uint32_t inactive = 0;
    for (uint32_t t = 0; t < nt; t++) {
        assert_int_equal(sliced[t], whole.active[t]);
        inactive += sliced[t] != 7u;
    }
    assert_true(inactive > nt / 2u); /* the flat runs and valleys were found */
    /* The one-go entry point answers the same. */
    memset(sliced, 0xff, nt);
    assert_result(gy_mesh_classify_edges(&ta.base, &md, sliced), GY_OK);
    assert_memory_equal(sliced, whole.active, nt);
    assert_result(gy_mesh_classify_edges(&ta.base, &md, NULL), GY_ERR_INVALID_ARGUMENT);
    md.index_count = 5;
    assert_result(gy_mesh_classify_edges(&ta.base, &md, sliced), GY_ERR_INVALID_ARGUMENT);
    test_free(sliced);
    gy_adapter_mesh_edges_free(&ta.base, &whole);
    assert_int_equal(ta.live_blocks, 0);
}

/* The adapter's edge record (gy_adapter_mesh_edges_build), the one-go classifier and the
 * classifier in slices of 5 units give the same flags, edge for edge; returned for the caller's
 * own checks (test_free it). */
static uint8_t *classify_three_ways(const gy_mesh_def *md)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    uint32_t nt = md->index_count / 3u;
    gy_adapter_mesh_edges rec;
    assert_result(gy_adapter_mesh_edges_build(&ta.base, md, &rec), GY_OK);
    uint8_t *one_go = test_malloc(nt), *sliced = test_malloc(nt);
    assert_result(gy_mesh_classify_edges(&ta.base, md, one_go), GY_OK);
    gy_mesh_edge_classifier *c;
    assert_result(gy_mesh_edge_classifier_begin(&ta.base, md, sliced, &c), GY_OK);
    uint64_t used;
    while (!gy_mesh_edge_classifier_run(c, 5u, &used))
        assert_true(used <= 5u);
    gy_mesh_edge_classifier_free(c);
    for (uint32_t t = 0; t < nt; t++) {
        assert_int_equal(rec.active[t], one_go[t]);
        assert_int_equal(rec.active[t], sliced[t]);
    }
    test_free(sliced);
    gy_adapter_mesh_edges_free(&ta.base, &rec);
    assert_int_equal(ta.live_blocks, 0);
    return one_go;
}

/* Whether edge k of triangle t runs between two vertices that `pick` accepts. */
static bool edge_is(const gy_mesh_def *md, uint32_t t, uint32_t k,
                    bool (*pick)(gy_vec3 a, gy_vec3 b))
{
    return pick(md->vertices[md->indices[3u * t + k]],
                md->vertices[md->indices[3u * t + (k + 1u) % 3u]]);
}

static bool on_ridge(gy_vec3 a, gy_vec3 b)
{
    return a.x == 3.0 && b.x == 3.0;
}

static bool in_valley(gy_vec3 a, gy_vec3 b)
{
    return a.x == 6.0 && b.x == 6.0;
}

static bool box_edge(gy_vec3 a, gy_vec3 b)
{
    return (a.x != b.x) + (a.y != b.y) + (a.z != b.z) == 1;
}

static bool sheet_boundary(gy_vec3 a, gy_vec3 b)
{
    return (a.x == b.x && (a.x == 0.0 || a.x == 8.0)) || (a.z == b.z && (a.z == 0.0 || a.z == 4.0));
}

static void
test_mesh_edges_record_and_classifier_agree_on_terrain_box_and_seamed_sheet(void **state)
{
    (void)state;
    /* A welded 9 × 9 grid terrain, flat but for a ridge along x = 3 and a valley along x = 6. */
    enum { G = 9 };
    gy_vec3 tv[G * G];
    uint32_t ti[6 * (G - 1) * (G - 1)], ni = 0;
    for (uint32_t z = 0; z < G; z++)
        for (uint32_t x = 0; x < G; x++)
            tv[z * G + x] = gy_v3(x, x == 3u ? 1.0 : x == 6u ? -1.0 : 0.0, z);
    for (uint32_t z = 0; z + 1u < G; z++)
        for (uint32_t x = 0; x + 1u < G; x++) {
            uint32_t a = z * G + x, b = a + 1u, c = a + G, d = c + 1u;
            uint32_t quad[6] = {a, c, b, b, c, d};
            memcpy(&ti[ni], quad, sizeof quad);
            ni += 6u;
        }
    gy_mesh_def terrain = {tv, G * G, ti, ni};
    uint8_t *act = classify_three_ways(&terrain);
    uint32_t ridge = 0, valley = 0;
    for (uint32_t t = 0; t < ni / 3u; t++)
        for (uint32_t k = 0; k < 3u; k++) {
            if (edge_is(&terrain, t, k, on_ridge)) {
                assert_true(act[t] & (1u << k));
                ridge++;
            }
            if (edge_is(&terrain, t, k, in_valley)) {
                assert_false(act[t] & (1u << k));
                valley++;
            }
        }
    assert_true(ridge > 0 && valley > 0);
    test_free(act);

    /* A unit box wound outwards: its twelve edges are convex, its face diagonals flat. */
    gy_vec3 bv[8];
    for (uint32_t i = 0; i < 8u; i++)
        bv[i] = gy_v3(i & 1u, (i >> 1) & 1u, (i >> 2) & 1u);
    const uint32_t bi[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                             2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
    gy_mesh_def box = {bv, 8, bi, 36};
    act = classify_three_ways(&box);
    for (uint32_t t = 0; t < 12u; t++)
        for (uint32_t k = 0; k < 3u; k++)
            assert_int_equal((act[t] >> k) & 1u, edge_is(&box, t, k, box_edge));
    test_free(act);

    /* A flat 8 × 4 sheet made of two halves with vertices of their own: the seam at x = 4 repeats
     * its vertices (same places, no T-junction) and is as flat as the rest; only the boundary is
     * active. */
    enum { HW = 5, HD = 5 };
    gy_vec3 sv[2 * HW * HD];
    uint32_t si[2 * 6 * (HW - 1) * (HD - 1)], ns = 0;
    for (uint32_t h = 0; h < 2u; h++)
        for (uint32_t z = 0; z < HD; z++)
            for (uint32_t x = 0; x < HW; x++)
                sv[h * HW * HD + z * HW + x] = gy_v3(4.0 * h + x, 0, z);
    for (uint32_t h = 0; h < 2u; h++)
        for (uint32_t z = 0; z + 1u < HD; z++)
            for (uint32_t x = 0; x + 1u < HW; x++) {
                uint32_t a = h * HW * HD + z * HW + x, b = a + 1u, c = a + HW, d = c + 1u;
                uint32_t quad[6] = {a, c, b, b, c, d};
                memcpy(&si[ns], quad, sizeof quad);
                ns += 6u;
            }
    gy_mesh_def sheet = {sv, 2 * HW * HD, si, ns};
    act = classify_three_ways(&sheet);
    for (uint32_t t = 0; t < ns / 3u; t++)
        for (uint32_t k = 0; k < 3u; k++)
            assert_int_equal((act[t] >> k) & 1u, edge_is(&sheet, t, k, sheet_boundary));
    test_free(act);
}

/* The front end's rule on a raw contact point, both drivers' path: the flat pair turned a
 * quarter about X (its up becomes world -Z) and moved to (5, 0, 0), touched by a box at the
 * shared edge with a sideways normal, 1 cm deep. */
static void test_mesh_edges_contact_rule_takes_the_face_normal_in_the_world(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_resource res = {0};
    build_pair(&ta, 0.0, &res.edges);
    gy_adapter_collider mesh = {0}, box = {0};
    mesh.shape_type = GY_SHAPE_MESH;
    mesh.shape.resource = &res;
    box.shape_type = GY_SHAPE_BOX;
    gy_pose at = {gy_v3(5, 0, 0), gy_quat_axis_angle(gy_v3(1, 0, 0), -0.5 * GY_PI)};
    gy_vec3 up = gy_quat_rotate(at.rotation, gy_v3(0, 1, 0)); /* the face normal in the world */
    gy_vec3 on_edge = gy_pose_apply(at, gy_v3(0, 0, 0.5));
    gy_vec3 side = gy_quat_rotate(at.rotation, gy_v3(-1, 0, 0));

    /* The mesh as b: the normal (b towards a) out of the mesh becomes the face's; b's point
     * follows it, a's stays. */
    gy_adapter_raw_point p = {
        .point_b = on_edge, .normal = side, .distance = -0.01, .triangle_a = -1, .triangle_b = 1};
    p.point_a = gy_v3_mad(p.point_b, p.normal, p.distance);
    gy_vec3 keep_a = p.point_a;
    assert_true(gy_adapter_contact_mesh_edges(&box, gy_pose_identity(), &mesh, at, &p));
    assert_near(p.normal.x, up.x, 1e-12);
    assert_near(p.normal.y, up.y, 1e-12);
    assert_near(p.normal.z, up.z, 1e-12);
    assert_near(p.point_a.x, keep_a.x, 0.0);
    gy_vec3 gap = gy_v3_sub(p.point_a, gy_v3_mad(p.point_b, p.normal, p.distance));
    assert_near(gy_v3_len(gap), 0.0, 1e-15);

    /* The mesh as a: the normal points into it; a's point follows. */
    gy_adapter_raw_point q = {.point_a = on_edge,
                              .normal = gy_v3_neg(side),
                              .distance = -0.01,
                              .triangle_a = 1,
                              .triangle_b = -1};
    q.point_b = gy_v3_mad(q.point_a, q.normal, -q.distance);
    gy_vec3 keep_b = q.point_b;
    assert_true(gy_adapter_contact_mesh_edges(&mesh, at, &box, gy_pose_identity(), &q));
    assert_near(q.normal.z, -up.z, 1e-12);
    assert_near(q.point_b.x, keep_b.x, 0.0);
    gap = gy_v3_sub(q.point_a, gy_v3_mad(q.point_b, q.normal, q.distance));
    assert_near(gy_v3_len(gap), 0.0, 1e-15);

    /* No mesh, or a contact on the boundary edge: left alone. */
    gy_adapter_raw_point r = p;
    r.normal = side;
    assert_false(gy_adapter_contact_mesh_edges(&box, gy_pose_identity(), &box, at, &r));
    r.point_b = gy_pose_apply(at, gy_v3(-1.2, 0, 0));
    r.triangle_b = 0;
    assert_false(gy_adapter_contact_mesh_edges(&box, gy_pose_identity(), &mesh, at, &r));
    assert_near(r.normal.x, side.x, 0.0);
    gy_adapter_mesh_edges_free(&ta.base, &res.edges);
    assert_int_equal(ta.live_blocks, 0);
}

/* A sphere's or capsule's point against a mesh goes under its core along the face normal, at the
 * depth of that point below the face, also when the normal already was the face's (a vendor that
 * places its point on a triangle's edge). The flat pair, untransformed: face normal +Y. */
static void test_mesh_edges_round_collider_point_goes_under_its_core(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_adapter_resource res = {0};
    build_pair(&ta, 0.0, &res.edges);
    gy_adapter_collider mesh = {0}, ball = {0}, capsule = {0};
    mesh.shape_type = GY_SHAPE_MESH;
    mesh.shape.resource = &res;
    ball.shape_type = GY_SHAPE_SPHERE;
    ball.shape.size[0] = 0.25;
    capsule.shape_type = GY_SHAPE_CAPSULE;
    capsule.shape.size[0] = 0.1; /* radius */
    capsule.shape.size[1] = 0.6; /* both caps included: a core segment of half length 0.2 */
    const gy_vec3 up = gy_v3(0, 1, 0);

    /* A ball 2 mm into the face at (-0.01, 0, 0.5), found on the shared edge ahead of it with the
     * normal through its centre. */
    gy_pose centre = {gy_v3(-0.01, 0.248, 0.5), gy_quat_identity()};
    gy_vec3 edge = gy_v3(0, 0, 0.5);
    gy_adapter_raw_point p = {.point_b = edge, .triangle_a = -1, .triangle_b = 1};
    p.normal = gy_v3_normalize(gy_v3_sub(centre.position, edge));
    p.distance = gy_v3_len(gy_v3_sub(centre.position, edge)) - 0.25;
    p.point_a = gy_v3_mad(p.point_b, p.normal, p.distance);
    assert_true(gy_adapter_contact_mesh_edges(&ball, centre, &mesh, gy_pose_identity(), &p));
    assert_near(p.normal.y, 1.0, 1e-12);
    assert_near(p.point_a.x, -0.01, 1e-12);
    assert_near(p.point_a.y, -0.002, 1e-12);
    assert_near(p.point_a.z, 0.5, 1e-12);
    assert_near(p.distance, -0.002, 1e-12);
    assert_near(gy_v3_len(gy_v3_sub(p.point_b, gy_v3(-0.01, 0, 0.5))), 0.0, 1e-12);

    /* The same ball with the face normal already (the vendor's point off its centre, on the edge):
     * the point still goes under the centre. */
    gy_adapter_raw_point q = {.point_a = edge,
                              .point_b = edge,
                              .normal = up,
                              .distance = -0.002,
                              .triangle_a = -1,
                              .triangle_b = 1};
    assert_true(gy_adapter_contact_mesh_edges(&ball, centre, &mesh, gy_pose_identity(), &q));
    assert_near(q.point_a.x, -0.01, 1e-12);
    assert_near(q.distance, -0.002, 1e-12);

    /* A capsule tilted 45 degrees, its lower cap 2 mm into the face: the vendor's point lies on
     * the cap, past the core segment's end along the axis; the rule's is under that end, on the
     * capsule's surface, not under a point of the axis beyond it. */
    gy_quat tilt = gy_quat_axis_angle(gy_v3(0, 0, 1), -0.25 * GY_PI);
    gy_vec3 axis = gy_quat_rotate(tilt, up);
    gy_vec3 low_end = gy_v3(-0.3, 0.098, 0.5);
    gy_pose cap = {gy_v3_mad(low_end, axis, 0.2), tilt};
    gy_adapter_raw_point c = {.normal = up, .distance = -0.002, .triangle_a = -1, .triangle_b = 0};
    c.point_a = gy_v3_mad(low_end, up, -0.1);
    c.point_b = gy_v3_mad(c.point_a, up, 0.002);
    assert_true(gy_adapter_contact_mesh_edges(&capsule, cap, &mesh, gy_pose_identity(), &c));
    assert_near(c.point_a.x, -0.3, 1e-12);
    assert_near(c.point_a.y, -0.002, 1e-12);
    assert_near(c.distance, -0.002, 1e-12);

    gy_adapter_mesh_edges_free(&ta.base, &res.edges);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mesh_edges_flat_join_is_inactive_and_boundary_active),
        cmocka_unit_test(test_mesh_edges_ridge_is_active_valley_and_shallow_ridge_are_not),
        cmocka_unit_test(test_mesh_edges_contact_rule_takes_the_face_normal_in_the_world),
        cmocka_unit_test(test_mesh_edges_round_collider_point_goes_under_its_core),
        cmocka_unit_test(test_mesh_edges_out_of_memory_leaves_nothing),
        cmocka_unit_test(test_mesh_edges_classifier_in_slices_matches_the_whole_build),
        cmocka_unit_test(
            test_mesh_edges_record_and_classifier_agree_on_terrain_box_and_seamed_sheet),
    };
    return cmocka_run_group_tests_name("mesh edges", tests, NULL, NULL);
}
