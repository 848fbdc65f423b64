/* Convex hulls and mass properties, checked against closed-form answers: solids of revolution and
 * boxes from the textbook formulas, hulls of known polyhedra, and invariants every hull must keep
 * (contains its points, faces outward, closed and consistently wound). */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "gyre/geometry.h"
#include "gyre/math.h"

/* ---- helpers --------------------------------------------------------------------------------- */

/* xorshift64*: a fixed seed makes every "random" cloud the same on every run. */
static double rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

static double rnd_range(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * rnd(s);
}

static gy_vec3 rnd_unit(uint64_t *s)
{
    for (;;) {
        gy_vec3 v = gy_v3(rnd_range(s, -1, 1), rnd_range(s, -1, 1), rnd_range(s, -1, 1));
        double l = gy_v3_len(v);
        if (l > 0.1 && l <= 1.0)
            return gy_v3_scale(v, 1.0 / l);
    }
}

/* `n` points on the unit sphere from seed 7: a cloud whose hull grows every work array several
 * times. */
static void sphere_cloud(gy_vec3 *pts, int n)
{
    uint64_t seed = 7;
    for (int i = 0; i < n; i++)
        pts[i] = rnd_unit(&seed);
}

static void assert_vec_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

static void assert_mat_near(gy_mat3 a, gy_mat3 b, double tol)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_near(a.m[i][j], b.m[i][j], tol);
}

static gy_shape make_shape(gy_shape_type type)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = type;
    return s;
}

static void box_corners(gy_vec3 size, gy_vec3 center, gy_vec3 out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = gy_v3(center.x + ((i & 1) ? 0.5 : -0.5) * size.x,
                       center.y + ((i & 2) ? 0.5 : -0.5) * size.y,
                       center.z + ((i & 4) ? 0.5 : -0.5) * size.z);
}

static double plane_dist(const gy_hull *h, uint32_t t, gy_vec3 p)
{
    return h->planes[t][0] * p.x + h->planes[t][1] * p.y + h->planes[t][2] * p.z - h->planes[t][3];
}

/* Everything a correct hull of `pts` must satisfy, with `tol` metres of slack for rounding. */
static void check_hull(const gy_hull *h, const gy_vec3 *pts, uint32_t n, double tol)
{
    uint32_t nv = h->vertex_count, nt = h->triangle_count;
    assert_true(nv >= 4);
    /* A closed triangulated sphere: F = 2V - 4. */
    assert_int_equal(nt, 2 * nv - 4);
    assert_true(h->volume > 0.0);

    /* Vertices are distinct input points. */
    for (uint32_t i = 0; i < nv; i++) {
        bool found = false;
        for (uint32_t k = 0; k < n && !found; k++)
            found = memcmp(&h->vertices[i], &pts[k], sizeof pts[k]) == 0;
        assert_true(found);
        for (uint32_t j = i + 1; j < nv; j++)
            assert_true(gy_v3_len(gy_v3_sub(h->vertices[i], h->vertices[j])) > 0.0);
    }

    double surface_volume = 0.0;
    for (uint32_t t = 0; t < nt; t++) {
        const uint32_t *tri = &h->triangles[3 * t];
        for (int k = 0; k < 3; k++)
            assert_true(tri[k] < nv);
        gy_vec3 a = h->vertices[tri[0]], b = h->vertices[tri[1]], c = h->vertices[tri[2]];
        gy_vec3 n3 = gy_v3(h->planes[t][0], h->planes[t][1], h->planes[t][2]);
        assert_near(gy_v3_len(n3), 1.0, 1e-12);
        assert_near(plane_dist(h, t, a), 0.0, tol);
        assert_near(plane_dist(h, t, b), 0.0, tol);
        assert_near(plane_dist(h, t, c), 0.0, tol);
        /* Counter-clockwise seen from outside: the winding's normal is the outward plane's. */
        gy_vec3 wn = gy_v3_cross(gy_v3_sub(b, a), gy_v3_sub(c, a));
        assert_true(gy_v3_dot(wn, n3) > 0.0);
        /* Outward: the centre of volume lies behind every face. */
        assert_true(plane_dist(h, t, h->centroid) < 0.0);
        /* Divergence theorem, V = Σ area·d / 3, an independent check of the planes' offsets. */
        surface_volume += 0.5 * gy_v3_len(wn) * h->planes[t][3] / 3.0;

        /* Each directed edge once, its reverse once: closed and consistently wound. */
        for (int e = 0; e < 3; e++) {
            uint32_t ea = tri[e], eb = tri[(e + 1) % 3];
            int same = 0, reverse = 0;
            for (uint32_t u = 0; u < nt; u++)
                for (int f = 0; f < 3; f++) {
                    uint32_t fa = h->triangles[3 * u + f], fb = h->triangles[3 * u + (f + 1) % 3];
                    same += fa == ea && fb == eb;
                    reverse += fa == eb && fb == ea;
                }
            assert_int_equal(same, 1);
            assert_int_equal(reverse, 1);
        }
    }
    assert_near(surface_volume, h->volume, 1e-9 * h->volume + tol * tol);

    /* Every input point is inside or on the hull. */
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t t = 0; t < nt; t++)
            assert_true(plane_dist(h, t, pts[k]) <= tol);

    /* No extreme point is missing: the support in any direction is the same for the cloud and the
     * hull's vertices. */
    uint64_t seed = 0x5eed;
    for (int d = 0; d < 64; d++) {
        gy_vec3 dir = rnd_unit(&seed);
        double best_pts = -INFINITY, best_hull = -INFINITY;
        for (uint32_t k = 0; k < n; k++)
            best_pts = fmax(best_pts, gy_v3_dot(dir, pts[k]));
        for (uint32_t i = 0; i < nv; i++)
            best_hull = fmax(best_hull, gy_v3_dot(dir, h->vertices[i]));
        assert_near(best_hull, best_pts, tol);
    }
}

/* Points on the surface of a capsule (cylinder when `caps` is false) along Y: `seg` around,
 * `rings` latitude steps per cap. */
static uint32_t round_solid_points(double r, double height, bool caps, int seg, int rings,
                                   gy_vec3 *out)
{
    uint32_t n = 0;
    double half = caps ? 0.5 * height - r : 0.5 * height;
    for (int side = -1; side <= 1; side += 2) {
        int steps = caps ? rings : 0;
        for (int k = 0; k <= steps; k++) {
            double lat = caps ? 0.5 * GY_PI * k / rings : 0.0; /* 0 at the rim, π/2 at the pole */
            double rr = r * cos(lat), y = side * (half + r * sin(lat));
            if (k == steps && caps) {
                out[n++] = gy_v3(0, y, 0);
                continue;
            }
            for (int s = 0; s < seg; s++) {
                double a = 2.0 * GY_PI * s / seg;
                out[n++] = gy_v3(rr * cos(a), y, rr * sin(a));
            }
        }
    }
    return n;
}

/* ---- analytic shapes ------------------------------------------------------------------------- */

static void test_shape_mass_sphere_is_two_fifths_m_r2(void **state)
{
    (void)state;
    gy_shape s = make_shape(GY_SHAPE_SPHERE);
    s.radius = 0.5;
    double volume = 4.0 / 3.0 * GY_PI * 0.125;
    assert_near(gy_shape_volume(&s, NULL), volume, 1e-12);
    gy_mass m = gy_shape_mass(&s, NULL, 1000.0);
    assert_near(m.mass, 1000.0 * volume, 1e-9);
    assert_vec_near(m.center, gy_v3(0, 0, 0), 0.0);
    double i = 0.4 * m.mass * 0.25;
    assert_mat_near(m.inertia, gy_mat3_diag(i, i, i), 1e-9);
}

static void test_shape_mass_box_is_m_over_12(void **state)
{
    (void)state;
    gy_shape s = make_shape(GY_SHAPE_BOX);
    s.box_size = gy_v3(1, 2, 3); /* full extents */
    assert_near(gy_shape_volume(&s, NULL), 6.0, 1e-12);
    gy_mass m = gy_shape_mass(&s, NULL, 2.0);
    assert_near(m.mass, 12.0, 1e-12);
    assert_mat_near(m.inertia, gy_mat3_diag(1.0 * (4 + 9), 1.0 * (1 + 9), 1.0 * (1 + 4)), 1e-12);
}

static void test_shape_mass_cylinder_stands_along_y(void **state)
{
    (void)state;
    gy_shape s = make_shape(GY_SHAPE_CYLINDER);
    s.radius = 0.3;
    s.height = 1.2;
    double volume = GY_PI * 0.09 * 1.2;
    assert_near(gy_shape_volume(&s, NULL), volume, 1e-12);
    gy_mass m = gy_shape_mass(&s, NULL, 500.0);
    double mass = 500.0 * volume;
    assert_near(m.mass, mass, 1e-9);
    double side = mass * (3 * 0.09 + 1.44) / 12.0, axial = 0.5 * mass * 0.09;
    assert_mat_near(m.inertia, gy_mat3_diag(side, axial, side), 1e-9);
}

static void test_shape_mass_capsule_matches_textbook_formula(void **state)
{
    (void)state;
    /* r = 0.5, total height 3 (caps included): a 2 m shaft with two hemispherical caps. */
    gy_shape s = make_shape(GY_SHAPE_CAPSULE);
    s.radius = 0.5;
    s.height = 3.0;
    double r = 0.5, l = 2.0, rho = 10.0;
    double m_cyl = rho * GY_PI * r * r * l, m_hemi = rho * 2.0 / 3.0 * GY_PI * r * r * r;
    assert_near(gy_shape_volume(&s, NULL), (m_cyl + 2 * m_hemi) / rho, 1e-12);
    /* Each hemisphere about its centre of mass (3r/8 from its flat face), then shifted to the
     * capsule's centre. */
    double hemi_own = 0.4 * m_hemi * r * r - m_hemi * (3 * r / 8) * (3 * r / 8);
    double offset = l / 2 + 3 * r / 8;
    double side = m_cyl * (3 * r * r + l * l) / 12.0 + 2 * (hemi_own + m_hemi * offset * offset);
    double axial = m_cyl * r * r / 2 + 2 * 0.4 * m_hemi * r * r;
    gy_mass m = gy_shape_mass(&s, NULL, rho);
    assert_near(m.mass, m_cyl + 2 * m_hemi, 1e-9);
    assert_mat_near(m.inertia, gy_mat3_diag(side, axial, side), 1e-9);
}

static void test_shape_mass_capsule_and_cylinder_match_fine_hulls(void **state)
{
    (void)state;
    /* An inscribed polyhedron with 96 segments and 24 rings per cap falls short of the smooth
     * solid by under 0.2 %; 0.5 % tolerance. */
    static gy_vec3 pts[2 * (96 * 25 + 1)];
    for (int caps = 0; caps <= 1; caps++) {
        gy_shape s = make_shape(caps ? GY_SHAPE_CAPSULE : GY_SHAPE_CYLINDER);
        s.radius = 0.4;
        s.height = 2.0;
        uint32_t n = round_solid_points(s.radius, s.height, caps, 96, 24, pts);
        gy_hull hull;
        assert_result(gy_hull_build(NULL, pts, n, &hull), GY_OK);
        gy_shape hs = make_shape(GY_SHAPE_HULL);
        gy_mass exact = gy_shape_mass(&s, NULL, 1.0), approx = gy_shape_mass(&hs, &hull, 1.0);
        assert_near(approx.mass / exact.mass, 1.0, 5e-3);
        assert_vec_near(approx.center, gy_v3(0, 0, 0), 1e-9);
        for (int i = 0; i < 3; i++) {
            assert_near(approx.inertia.m[i][i] / exact.inertia.m[i][i], 1.0, 5e-3);
            for (int j = 0; j < 3; j++)
                if (i != j)
                    assert_near(approx.inertia.m[i][j], 0.0, 1e-9);
        }
        gy_hull_free(NULL, &hull);
    }
}

static void test_shape_mass_plane_mesh_and_invalid_are_massless(void **state)
{
    (void)state;
    gy_shape plane = make_shape(GY_SHAPE_PLANE);
    plane.normal = gy_v3(0, 1, 0);
    gy_shape mesh = make_shape(GY_SHAPE_MESH);
    gy_shape hull_without_data = make_shape(GY_SHAPE_HULL);
    gy_shape bad_sphere = make_shape(GY_SHAPE_SPHERE);
    bad_sphere.radius = NAN;
    gy_shape flat_box = make_shape(GY_SHAPE_BOX);
    flat_box.box_size = gy_v3(1, 0, 1);
    const gy_shape *shapes[] = {&plane, &mesh, &hull_without_data, &bad_sphere, &flat_box};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        assert_near(gy_shape_volume(shapes[i], NULL), 0.0, 0.0);
        gy_mass m = gy_shape_mass(shapes[i], NULL, 1000.0);
        assert_near(m.mass, 0.0, 0.0);
        assert_mat_near(m.inertia, gy_mat3_zero(), 0.0);
    }
    /* A valid shape with an unusable density is massless too, rather than NaN. */
    gy_shape sphere = make_shape(GY_SHAPE_SPHERE);
    sphere.radius = 1.0;
    assert_near(gy_shape_mass(&sphere, NULL, NAN).mass, 0.0, 0.0);
    assert_near(gy_shape_mass(&sphere, NULL, -1.0).mass, 0.0, 0.0);
}

/* ---- hulls ----------------------------------------------------------------------------------- */

static void test_hull_cube_with_interior_points_matches_box(void **state)
{
    (void)state;
    gy_vec3 size = gy_v3(2, 1, 3), center = gy_v3(1, -2, 3);
    gy_vec3 pts[8 + 6 + 40];
    box_corners(size, center, pts);
    /* Face centres lie on the hull but are not vertices of it; the rest are strictly inside. */
    for (int k = 0; k < 3; k++)
        for (int sgn = 0; sgn < 2; sgn++) {
            gy_vec3 p = center;
            (&p.x)[k] += (sgn ? 0.5 : -0.5) * (&size.x)[k];
            pts[8 + 2 * k + sgn] = p;
        }
    uint64_t seed = 42;
    for (int i = 0; i < 40; i++)
        pts[14 + i] = gy_v3(center.x + rnd_range(&seed, -0.99, 0.99),
                            center.y + rnd_range(&seed, -0.49, 0.49),
                            center.z + rnd_range(&seed, -1.49, 1.49));
    /* Corners last, so the hull cannot just take the first points it sees. */
    gy_vec3 shuffled[54];
    memcpy(shuffled, pts + 8, 46 * sizeof *pts);
    memcpy(shuffled + 46, pts, 8 * sizeof *pts);

    gy_hull h;
    assert_result(gy_hull_build(NULL, shuffled, 54, &h), GY_OK);
    check_hull(&h, shuffled, 54, 1e-12);
    assert_int_equal(h.vertex_count, 8);
    assert_int_equal(h.triangle_count, 12);
    assert_near(h.volume, 6.0, 1e-12);
    assert_vec_near(h.centroid, center, 1e-12);

    gy_shape hs = make_shape(GY_SHAPE_HULL), bs = make_shape(GY_SHAPE_BOX);
    bs.box_size = size;
    assert_near(gy_shape_volume(&hs, &h), 6.0, 1e-12);
    gy_mass hm = gy_shape_mass(&hs, &h, 3.0), bm = gy_shape_mass(&bs, NULL, 3.0);
    assert_near(hm.mass, bm.mass, 1e-12);
    assert_vec_near(hm.center, center, 1e-12);
    assert_mat_near(hm.inertia, bm.inertia, 1e-11);
    gy_hull_free(NULL, &h);
    assert_null(h.vertices);
}

static void test_hull_tetrahedron_matches_closed_form(void **state)
{
    (void)state;
    /* The corner tetrahedron: V = 1/6, centroid (1/4)³, and about the centroid (unit density)
     * Ixx = 1/80 and products of inertia +1/480 (∫xy dV = 1/120 less V·(1/4)²). */
    gy_vec3 pts[4] = {{0, 0, 1}, {1, 0, 0}, {0, 0, 0}, {0, 1, 0}};
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, 4, &h), GY_OK);
    check_hull(&h, pts, 4, 1e-14);
    assert_int_equal(h.vertex_count, 4);
    assert_int_equal(h.triangle_count, 4);
    assert_near(h.volume, 1.0 / 6.0, 1e-15);
    assert_vec_near(h.centroid, gy_v3(0.25, 0.25, 0.25), 1e-15);
    gy_shape hs = make_shape(GY_SHAPE_HULL);
    gy_mass m = gy_shape_mass(&hs, &h, 1.0);
    assert_near(m.mass, 1.0 / 6.0, 1e-15);
    double d = 1.0 / 80.0, o = 1.0 / 480.0;
    gy_mat3 want = {{{d, o, o}, {o, d, o}, {o, o, d}}};
    assert_mat_near(m.inertia, want, 1e-15);
    gy_hull_free(NULL, &h);
}

static void test_hull_random_clouds_contain_points_and_face_outward(void **state)
{
    (void)state;
    static gy_vec3 pts[400];
    const uint32_t sizes[] = {4, 5, 12, 60, 400};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int shape = 0; shape < 3; shape++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            uint32_t n = sizes[si];
            for (uint32_t i = 0; i < n; i++) {
                if (shape == 0) /* uniform in a box */
                    pts[i] = gy_v3(rnd_range(&seed, -1, 1), rnd_range(&seed, -2, 2),
                                   rnd_range(&seed, -0.5, 0.5));
                else if (shape == 1) /* on a sphere: every point is a vertex */
                    pts[i] = gy_v3_scale(rnd_unit(&seed), 3.0);
                else /* a flattened, off-centre ellipsoid shell with interior fill */
                    pts[i] = gy_v3_add(
                        gy_v3(100, -50, 20),
                        gy_v3_mul(gy_v3_scale(rnd_unit(&seed), rnd(&seed) < 0.5 ? 1.0 : rnd(&seed)),
                                  gy_v3(2.0, 0.1, 1.0)));
            }
            gy_hull h;
            assert_result(gy_hull_build(NULL, pts, n, &h), GY_OK);
            check_hull(&h, pts, n, 1e-9);
            if (shape == 1)
                assert_int_equal(h.vertex_count, n);
            gy_hull_free(NULL, &h);
        }
}

static void test_hull_lattice_with_coplanar_and_collinear_points_is_the_cube(void **state)
{
    (void)state;
    /* A 5×5×5 grid: most boundary points lie exactly on faces and edges, and none of them may
     * become a vertex or tilt a face. */
    gy_vec3 pts[125];
    uint32_t n = 0;
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 5; y++)
            for (int z = 0; z < 5; z++)
                pts[n++] = gy_v3(x, y, z);
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, n, &h), GY_OK);
    check_hull(&h, pts, n, 1e-12);
    assert_int_equal(h.vertex_count, 8);
    assert_int_equal(h.triangle_count, 12);
    assert_near(h.volume, 64.0, 1e-12);
    assert_vec_near(h.centroid, gy_v3(2, 2, 2), 1e-12);
    gy_hull_free(NULL, &h);
}

static void shuffle(gy_vec3 *pts, uint32_t n, uint64_t *seed)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)(rnd(seed) * i);
        gy_vec3 t = pts[i - 1];
        pts[i - 1] = pts[j];
        pts[j] = t;
    }
}

static void test_hull_points_on_faces_never_become_vertices(void **state)
{
    (void)state;
    /* Shuffled and turned off the axes, so ties between a face's corners and the points inside it
     * arise while the hull grows, not only at the start. */
    static gy_vec3 pts[24 * 6];
    gy_pose pose = {{3, -1, 7}, gy_quat_from_euler_deg(gy_v3(31, 17, -58))};
    uint64_t seed = 2024;
    for (int trial = 0; trial < 20; trial++) {
        uint32_t n = 0;
        for (int x = 0; x < 4; x++)
            for (int y = 0; y < 4; y++)
                for (int z = 0; z < 4; z++)
                    pts[n++] = gy_pose_apply(pose, gy_v3(0.5 * x, 0.5 * y, 0.5 * z));
        shuffle(pts, n, &seed);
        gy_hull h;
        assert_result(gy_hull_build(NULL, pts, n, &h), GY_OK);
        check_hull(&h, pts, n, 1e-9);
        assert_int_equal(h.vertex_count, 8);
        assert_near(h.volume, 3.375, 1e-12);
        gy_hull_free(NULL, &h);

        /* A 24-sided prism with four extra rings on its sides: only the end rings are corners. */
        n = 0;
        for (int ring = 0; ring < 6; ring++)
            for (int s = 0; s < 24; s++) {
                double a = 2.0 * GY_PI * s / 24;
                pts[n++] = gy_pose_apply(pose, gy_v3(cos(a), 0.4 * ring, sin(a)));
            }
        shuffle(pts, n, &seed);
        assert_result(gy_hull_build(NULL, pts, n, &h), GY_OK);
        check_hull(&h, pts, n, 1e-9);
        assert_int_equal(h.vertex_count, 48);
        assert_near(h.volume, 0.5 * 24 * sin(2.0 * GY_PI / 24) * 2.0, 1e-12);
        gy_hull_free(NULL, &h);
    }
}

static void test_hull_duplicates_are_merged(void **state)
{
    (void)state;
    gy_vec3 corners[8], pts[24];
    box_corners(gy_v3(1, 1, 1), gy_v3(0, 0, 0), corners);
    for (int i = 0; i < 24; i++)
        pts[i] = corners[(i * 5) % 8];
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, 24, &h), GY_OK);
    check_hull(&h, pts, 24, 1e-12);
    assert_int_equal(h.vertex_count, 8);
    assert_near(h.volume, 1.0, 1e-12);
    gy_hull_free(NULL, &h);
}

static void test_hull_far_from_origin_keeps_small_features(void **state)
{
    (void)state;
    /* A 1 cm cube a kilometre out: the tolerance must follow the cloud's size, not its offset. */
    gy_vec3 pts[9];
    box_corners(gy_v3(0.01, 0.01, 0.01), gy_v3(1000, 0, -1000), pts);
    pts[8] = gy_v3(1000, 0, -1000);
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, 9, &h), GY_OK);
    check_hull(&h, pts, 9, 1e-9);
    assert_int_equal(h.vertex_count, 8);
    assert_near(h.volume, 1e-6, 1e-15);
    assert_vec_near(h.centroid, gy_v3(1000, 0, -1000), 1e-9);
    gy_hull_free(NULL, &h);
}

static void test_hull_rejects_degenerate_input_with_exact_code(void **state)
{
    (void)state;
    gy_hull h, untouched;
    memset(&untouched, 0xA5, sizeof untouched);
    gy_vec3 tet[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

    gy_vec3 same[6], line[6], flat[12], thin[5];
    for (int i = 0; i < 6; i++) {
        same[i] = gy_v3(1, 2, 3);
        line[i] = gy_v3(1 + i, 2 + 2 * i, 3 - i);
    }
    for (int i = 0; i < 12; i++) /* a tilted plane through (0,0,5) */
        flat[i] = gy_v3(i % 4, i / 4, 5 + 0.5 * (i % 4) - 0.25 * (i / 4));
    thin[0] = gy_v3(0, 0, 0); /* a square with one point 1e-12 m off its plane */
    thin[1] = gy_v3(1, 0, 0);
    thin[2] = gy_v3(1, 1, 0);
    thin[3] = gy_v3(0, 1, 0);
    thin[4] = gy_v3(0.5, 0.5, 1e-12);

    struct {
        const gy_vec3 *pts;
        uint32_t n;
        gy_result want;
    } cases[] = {
        {tet, 0, GY_ERR_INVALID_MESH},   {tet, 3, GY_ERR_INVALID_MESH},
        {same, 6, GY_ERR_INVALID_MESH},  {line, 6, GY_ERR_INVALID_MESH},
        {flat, 12, GY_ERR_INVALID_MESH}, {thin, 5, GY_ERR_INVALID_MESH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        h = untouched;
        assert_result(gy_hull_build(NULL, cases[i].pts, cases[i].n, &h), cases[i].want);
        assert_memory_equal(&h, &untouched, sizeof h);
    }

    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        gy_vec3 p[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
        (&p[3].x)[k] = bad[k];
        h = untouched;
        assert_result(gy_hull_build(NULL, p, 5, &h), GY_ERR_NON_FINITE);
        assert_memory_equal(&h, &untouched, sizeof h);
    }
    /* Finite points whose spread overflows a double cannot be measured either. */
    gy_vec3 huge[4] = {{-1e308, -1e308, 0}, {1e308, -1e308, 0}, {0, 1e308, 0}, {0, 0, 1e308}};
    assert_result(gy_hull_build(NULL, huge, 4, &h), GY_ERR_NON_FINITE);

    assert_result(gy_hull_build(NULL, tet, 4, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_hull_build(NULL, NULL, 4, &h), GY_ERR_INVALID_ARGUMENT);
}

static void test_hull_allocation_failure_at_every_point_leaks_nothing(void **state)
{
    (void)state;
    /* 300 points on a sphere grow every work array several times. */
    static gy_vec3 pts[300];
    sphere_cloud(pts, 300);

    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hull h;
    assert_result(gy_hull_build(&ta.base, pts, 300, &h), GY_OK);
    uint64_t needed = ta.calls;
    assert_true(needed >= 8);
    gy_hull_free(&ta.base, &h);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);

    gy_hull untouched;
    memset(&untouched, 0x5A, sizeof untouched);
    for (uint64_t fail = 1; fail <= needed; fail++) {
        gy_test_allocator_init(&ta);
        ta.fail_at = fail;
        h = untouched;
        assert_result(gy_hull_build(&ta.base, pts, 300, &h), GY_ERR_OUT_OF_MEMORY);
        assert_memory_equal(&h, &untouched, sizeof h);
        assert_int_equal(ta.live_blocks, 0);
        assert_int_equal(ta.live_bytes, 0);
    }
    /* One past the last allocation never triggers: the build succeeds again. */
    gy_test_allocator_init(&ta);
    ta.fail_at = needed + 1;
    assert_result(gy_hull_build(&ta.base, pts, 300, &h), GY_OK);
    gy_hull_free(&ta.base, &h);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- the build in slices --------------------------------------------------------------------- */

static void assert_hull_equal(const gy_hull *a, const gy_hull *b)
{
    assert_int_equal(a->vertex_count, b->vertex_count);
    assert_int_equal(a->triangle_count, b->triangle_count);
    assert_memory_equal(a->vertices, b->vertices, (size_t)a->vertex_count * sizeof *a->vertices);
    assert_memory_equal(a->triangles, b->triangles,
                        (size_t)a->triangle_count * 3 * sizeof *a->triangles);
    assert_memory_equal(a->planes, b->planes, (size_t)a->triangle_count * sizeof *a->planes);
    assert_memory_equal(&a->centroid, &b->centroid, sizeof a->centroid);
    assert_memory_equal(&a->volume, &b->volume, sizeof a->volume);
}

/* Runs a build to the end in slices of `budget` units: the number of slices, and in *over the
 * most any slice went past its budget. */
static uint32_t run_in_slices(gy_hull_builder *b, uint64_t budget, uint64_t *over)
{
    uint32_t slices = 0;
    *over = 0;
    for (bool done = false; !done;) {
        uint64_t used = 0;
        done = gy_hull_build_run(b, budget, &used);
        assert_true(used > 0 || done);
        if (used > budget && used - budget > *over)
            *over = used - budget;
        slices++;
    }
    return slices;
}

/* Clouds covering the build's paths: all points on the hull, mostly inner points, a lattice full
 * of coplanar and collinear ties, duplicates, and a small hull far from the origin. */
static uint32_t slice_cloud(int which, gy_vec3 *p)
{
    uint64_t seed = 11u + (uint64_t)which;
    uint32_t n = 0;
    switch (which) {
    case 0: /* a sphere: every point a vertex */
        for (n = 0; n < 2000; n++) {
            double z = 1.0 - 2.0 * (n + 0.5) / 2000.0, r = sqrt(1.0 - z * z), a = 2.39996323 * n;
            p[n] = gy_v3(r * cos(a), z, r * sin(a));
        }
        break;
    case 1: /* a box of random points */
        for (n = 0; n < 2000; n++)
            p[n] =
                gy_v3(rnd_range(&seed, -1, 1), rnd_range(&seed, 0, 3), rnd_range(&seed, -.5, .5));
        break;
    case 2: /* a 6 x 6 x 6 lattice */
        for (n = 0; n < 216; n++)
            p[n] = gy_v3(n % 6, (n / 6) % 6, n / 36);
        break;
    case 3: /* 50 random points, each three times */
        for (n = 0; n < 150; n++)
            p[n] = n < 50 ? rnd_unit(&seed) : p[n % 50];
        break;
    default: /* a 1 cm ball 1 km from the origin */
        for (n = 0; n < 400; n++)
            p[n] = gy_v3_add(gy_v3(1000, -700, 300), gy_v3_scale(rnd_unit(&seed), 0.01));
        break;
    }
    return n;
}

static void test_hull_built_in_slices_is_the_one_shot_hull(void **state)
{
    (void)state;
    static gy_vec3 pts[2000];
    const uint64_t budgets[] = {1, 97, 4096, 65536};
    for (int c = 0; c < 5; c++) {
        uint32_t n = slice_cloud(c, pts);
        gy_hull whole;
        assert_result(gy_hull_build(NULL, pts, n, &whole), GY_OK);
        for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
            gy_test_allocator ta;
            gy_test_allocator_init(&ta);
            gy_hull_builder *b;
            assert_result(gy_hull_build_begin(&ta.base, pts, n, &b), GY_OK);
            uint64_t over;
            uint32_t slices = run_in_slices(b, budgets[k], &over);
            gy_hull h;
            assert_result(gy_hull_build_finish(b, &h), GY_OK);
            assert_hull_equal(&h, &whole);
            /* A slice stops once it has spent its budget: past it by at most one item, here an
             * added point's cone (3 units a face it sees, 2 h² + h for its horizon), a few
             * hundred units at most for these clouds. */
            assert_true(over < 1024u);
            if (budgets[k] == 1)
                assert_true(slices > n); /* every point visited in its own slice at least once */
            gy_hull_free(&ta.base, &h);
            assert_int_equal(ta.live_blocks, 0);
            assert_int_equal(ta.live_bytes, 0);
        }
        gy_hull_free(NULL, &whole);
    }
}

static void test_hull_check_passes_every_buildable_cloud(void **state)
{
    (void)state;
    static gy_vec3 pts[2000];
    for (int c = 0; c < 5; c++) {
        uint32_t n = slice_cloud(c, pts);
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        assert_result(gy_hull_check(&ta.base, pts, n), GY_OK);
        assert_int_equal(ta.live_blocks, 0);
    }
    assert_result(gy_hull_check(NULL, NULL, 4), GY_ERR_INVALID_ARGUMENT);
}

static void test_hull_slices_give_the_one_shot_errors(void **state)
{
    (void)state;
    gy_vec3 same[6], line[6], flat[12], nan_pt[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int i = 0; i < 6; i++) {
        same[i] = gy_v3(1, 2, 3);
        line[i] = gy_v3(1 + i, 2 + 2 * i, 3 - i);
    }
    for (int i = 0; i < 12; i++)
        flat[i] = gy_v3(i % 4, i / 4, 5 + 0.5 * (i % 4) - 0.25 * (i / 4));
    nan_pt[4] = gy_v3(1, NAN, 1);
    gy_vec3 huge[4] = {{-1e308, -1e308, 0}, {1e308, -1e308, 0}, {0, 1e308, 0}, {0, 0, 1e308}};
    struct {
        const gy_vec3 *pts;
        uint32_t n;
        gy_result want;
    } cases[] = {
        {same, 3, GY_ERR_INVALID_MESH}, {same, 6, GY_ERR_INVALID_MESH},
        {line, 6, GY_ERR_INVALID_MESH}, {flat, 12, GY_ERR_INVALID_MESH},
        {nan_pt, 5, GY_ERR_NON_FINITE}, {huge, 4, GY_ERR_NON_FINITE},
    };
    gy_hull untouched, h;
    memset(&untouched, 0xA5, sizeof untouched);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gy_hull one;
        assert_result(gy_hull_build(NULL, cases[i].pts, cases[i].n, &one), cases[i].want);
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        assert_result(gy_hull_check(&ta.base, cases[i].pts, cases[i].n), cases[i].want);
        assert_int_equal(ta.live_blocks, 0);
        gy_hull_builder *b;
        assert_result(gy_hull_build_begin(&ta.base, cases[i].pts, cases[i].n, &b), GY_OK);
        uint64_t over;
        run_in_slices(b, 2, &over);
        h = untouched;
        assert_result(gy_hull_build_finish(b, &h), cases[i].want);
        assert_memory_equal(&h, &untouched, sizeof h);
        assert_int_equal(ta.live_blocks, 0);
    }
    gy_hull_builder *b = (gy_hull_builder *)&h;
    assert_result(gy_hull_build_begin(NULL, NULL, 4, &b), GY_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_result(gy_hull_build_begin(NULL, same, 4, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_hull_build_finish(NULL, &h), GY_ERR_INVALID_ARGUMENT);
    assert_true(gy_hull_build_run(NULL, 10, NULL));
    gy_hull_build_cancel(NULL);
}

/* The slice entry points' own misuse: no points, a zero-unit slice, a finish with nowhere to put
 * the hull. Each is answered with its error, leaves the caller's hull as it was and leaks nothing
 * (a finish frees its builder whatever it answers). */
static void test_hull_slices_refuse_empty_clouds_and_a_missing_out(void **state)
{
    (void)state;
    gy_vec3 tet[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull untouched, h;
    memset(&untouched, 0xA5, sizeof untouched);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);

    assert_result(gy_hull_check(&ta.base, tet, 0), GY_ERR_INVALID_MESH);
    assert_result(gy_hull_check(&ta.base, tet, 3), GY_ERR_INVALID_MESH);
    assert_int_equal(ta.live_blocks, 0);

    gy_hull_builder *b;
    assert_result(gy_hull_build_begin(&ta.base, tet, 0, &b), GY_OK);
    h = untouched;
    assert_result(gy_hull_build_finish(b, &h), GY_ERR_INVALID_MESH);
    assert_memory_equal(&h, &untouched, sizeof h);
    assert_int_equal(ta.live_blocks, 0);

    /* A zero-unit slice does nothing and says the build is not done. */
    assert_result(gy_hull_build_begin(&ta.base, tet, 4, &b), GY_OK);
    uint64_t used = 0;
    assert_false(gy_hull_build_run(b, 0, &used));
    assert_int_equal(used, 0);
    assert_result(gy_hull_build_finish(b, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(ta.live_blocks, 0);

    /* The same after the build is done: the hull it made is freed with the builder. */
    assert_result(gy_hull_build_begin(&ta.base, tet, 4, &b), GY_OK);
    uint64_t over;
    run_in_slices(b, 1, &over);
    assert_result(gy_hull_build_finish(b, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

static void test_hull_build_cancelled_at_any_slice_leaks_nothing(void **state)
{
    (void)state;
    static gy_vec3 pts[300];
    sphere_cloud(pts, 300);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hull_builder *b;
    assert_result(gy_hull_build_begin(&ta.base, pts, 300, &b), GY_OK);
    uint64_t over;
    uint32_t slices = run_in_slices(b, 500, &over);
    gy_hull_build_cancel(b); /* done but not finished: the hull is freed with the rest */
    assert_int_equal(ta.live_blocks, 0);
    assert_true(slices > 20);
    for (uint32_t stop = 0; stop < slices; stop++) {
        gy_test_allocator_init(&ta);
        assert_result(gy_hull_build_begin(&ta.base, pts, 300, &b), GY_OK);
        for (uint32_t k = 0; k < stop; k++)
            gy_hull_build_run(b, 500, NULL);
        assert_true(ta.live_blocks > 0);
        gy_hull_build_cancel(b);
        assert_int_equal(ta.live_blocks, 0);
        assert_int_equal(ta.live_bytes, 0);
    }
}

static void test_hull_copy_is_equal_and_owned(void **state)
{
    (void)state;
    static gy_vec3 pts[2000];
    uint32_t n = slice_cloud(1, pts);
    gy_hull h, c, untouched;
    assert_result(gy_hull_build(NULL, pts, n, &h), GY_OK);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    assert_result(gy_hull_copy(&ta.base, &h, &c), GY_OK);
    assert_hull_equal(&c, &h);
    assert_true(c.vertices != h.vertices);
    gy_hull_free(&ta.base, &c);
    assert_int_equal(ta.live_blocks, 0);
    memset(&untouched, 0x5A, sizeof untouched);
    for (uint64_t fail = 1; fail <= 3; fail++) {
        gy_test_allocator_init(&ta);
        ta.fail_at = fail;
        c = untouched;
        assert_result(gy_hull_copy(&ta.base, &h, &c), GY_ERR_OUT_OF_MEMORY);
        assert_memory_equal(&c, &untouched, sizeof c);
        assert_int_equal(ta.live_blocks, 0);
    }
    assert_result(gy_hull_copy(NULL, NULL, &c), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_hull_copy(NULL, &h, NULL), GY_ERR_INVALID_ARGUMENT);
    gy_hull_free(NULL, &h);
}

/* ---- combining and moving mass --------------------------------------------------------------- */

static void test_mass_add_two_spheres_uses_parallel_axis(void **state)
{
    (void)state;
    gy_shape s = make_shape(GY_SHAPE_SPHERE);
    s.radius = 1.0;
    gy_mass one = gy_shape_mass(&s, NULL, 3.0 / (4.0 * GY_PI)); /* 1 kg */
    assert_near(one.mass, 1.0, 1e-12);
    gy_pose left = gy_pose_identity(), right = gy_pose_identity();
    left.position = gy_v3(-1, 5, 0);
    right.position = gy_v3(1, 5, 0);
    gy_mass both = gy_mass_add(gy_mass_transform(one, left), gy_mass_transform(one, right));
    assert_near(both.mass, 2.0, 1e-12);
    assert_vec_near(both.center, gy_v3(0, 5, 0), 1e-12);
    /* Along the line joining them: 2 · 2/5; across it: 2 · (2/5 + 1 · 1²). */
    assert_mat_near(both.inertia, gy_mat3_diag(0.8, 2.8, 2.8), 1e-12);
}

static void test_mass_add_unequal_masses_weights_the_centre(void **state)
{
    (void)state;
    /* Point-like masses: 1 kg at x = 0 and 3 kg at x = 4 balance at x = 3; about that point the
     * y and z moments are 1·3² + 3·1² = 12. */
    gy_mass a = {1.0, {0, 0, 0}, {{{0}}}}, b = {3.0, {4, 0, 0}, {{{0}}}};
    gy_mass c = gy_mass_add(a, b);
    assert_near(c.mass, 4.0, 0.0);
    assert_vec_near(c.center, gy_v3(3, 0, 0), 1e-12);
    assert_mat_near(c.inertia, gy_mat3_diag(0, 12, 12), 1e-12);
    /* Off-axis offsets give products of inertia: 1 kg at (1,1,0) about the origin has Ixy = -1. */
    gy_mass p = {1.0, {1, 1, 0}, {{{0}}}}, q = {1.0, {-1, -1, 0}, {{{0}}}};
    gy_mass pq = gy_mass_add(p, q);
    gy_mat3 want = {{{2, -2, 0}, {-2, 2, 0}, {0, 0, 4}}};
    assert_mat_near(pq.inertia, want, 1e-12);
    /* Adding nothing changes nothing. */
    gy_mass zero;
    memset(&zero, 0, sizeof zero);
    gy_mass same = gy_mass_add(zero, b);
    assert_near(same.mass, 3.0, 0.0);
    assert_vec_near(same.center, b.center, 0.0);
    assert_mat_near(same.inertia, b.inertia, 0.0);
}

static void test_mass_transform_rotates_box_tensor(void **state)
{
    (void)state;
    gy_shape s = make_shape(GY_SHAPE_BOX);
    s.box_size = gy_v3(1, 2, 3);
    gy_mass m = gy_shape_mass(&s, NULL, 1.0);
    double ixx = m.inertia.m[0][0], iyy = m.inertia.m[1][1], izz = m.inertia.m[2][2];
    m.center = gy_v3(0.5, 0, 0);

    /* 90° about Z swaps the X and Y moments and turns the centre onto +Y. */
    gy_pose p = {{1, 2, 3}, gy_quat_axis_angle(gy_v3(0, 0, 1), 0.5 * GY_PI)};
    gy_mass r = gy_mass_transform(m, p);
    assert_near(r.mass, m.mass, 0.0);
    assert_vec_near(r.center, gy_v3(1, 2.5, 3), 1e-12);
    assert_mat_near(r.inertia, gy_mat3_diag(iyy, ixx, izz), 1e-12);

    /* 30° about Z: I' = R diag(a, b) Rᵀ, so I'xx = a c² + b s², I'xy = (a − b) c s. */
    double a = 30.0 * GY_PI / 180.0, c = cos(a), sn = sin(a);
    p.rotation = gy_quat_axis_angle(gy_v3(0, 0, 1), a);
    r = gy_mass_transform(m, p);
    gy_mat3 want = {{{ixx * c * c + iyy * sn * sn, (ixx - iyy) * c * sn, 0},
                     {(ixx - iyy) * c * sn, ixx * sn * sn + iyy * c * c, 0},
                     {0, 0, izz}}};
    assert_mat_near(r.inertia, want, 1e-12);
}

static void test_mass_transform_agrees_with_hull_of_moved_box(void **state)
{
    (void)state;
    /* Two routes to the same tensor: rotate the analytic box's mass, or build the hull of the
     * rotated corners and integrate it. */
    gy_vec3 size = gy_v3(0.5, 1.5, 2.5), corners[8];
    box_corners(size, gy_v3(0, 0, 0), corners);
    gy_pose pose = {{-3, 1, 2}, gy_quat_from_euler_deg(gy_v3(25, -40, 70))};
    for (int i = 0; i < 8; i++)
        corners[i] = gy_pose_apply(pose, corners[i]);
    gy_hull h;
    assert_result(gy_hull_build(NULL, corners, 8, &h), GY_OK);
    gy_shape hs = make_shape(GY_SHAPE_HULL), bs = make_shape(GY_SHAPE_BOX);
    bs.box_size = size;
    gy_mass from_hull = gy_shape_mass(&hs, &h, 7.0);
    gy_mass moved = gy_mass_transform(gy_shape_mass(&bs, NULL, 7.0), pose);
    assert_near(from_hull.mass, moved.mass, 1e-11);
    assert_vec_near(from_hull.center, moved.center, 1e-12);
    assert_mat_near(from_hull.inertia, moved.inertia, 1e-11);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_near(moved.inertia.m[i][j], moved.inertia.m[j][i], 0.0);
    gy_hull_free(NULL, &h);
}

static void test_mass_scale_to_keeps_centre_and_shape_of_tensor(void **state)
{
    (void)state;
    gy_mass m = {2.0, {1, 2, 3}, {{{4, 0.5, 0}, {0.5, 6, 0}, {0, 0, 8}}}};
    gy_mass s = gy_mass_scale_to(m, 5.0);
    assert_near(s.mass, 5.0, 0.0);
    assert_vec_near(s.center, m.center, 0.0);
    gy_mat3 want = {{{10, 1.25, 0}, {1.25, 15, 0}, {0, 0, 20}}};
    assert_mat_near(s.inertia, want, 1e-12);

    gy_mass zero;
    memset(&zero, 0, sizeof zero);
    zero.center = gy_v3(1, 1, 1);
    gy_mass z = gy_mass_scale_to(zero, 5.0);
    assert_memory_equal(&z, &zero, sizeof z);
}

/* The line clip against a cube of half-extent 1: entry and exit parameters and faces against the
 * analytic answer, a parallel line outside a face, and a miss. */
static void test_hull_clip_line_matches_the_cube_analytically(void **state)
{
    (void)state;
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, 8, &h), GY_OK);
    double t_in, t_out;
    uint32_t f_in, f_out;
    /* Along +x from x = -5: enters at x = -1 (t = 4) through a face whose normal is -x. */
    assert_true(
        gy_hull_clip_line(&h, gy_v3(-5, 0.25, -0.5), gy_v3(1, 0, 0), &t_in, &f_in, &t_out, &f_out));
    assert_near(t_in, 4.0, 1e-12);
    assert_near(t_out, 6.0, 1e-12);
    assert_true(f_in < h.triangle_count && f_out < h.triangle_count);
    assert_near(h.planes[f_in][0], -1.0, 1e-12);
    assert_near(h.planes[f_out][0], 1.0, 1e-12);
    /* A diagonal direction, not unit: t scales with 1/|d| along the axis. */
    assert_true(
        gy_hull_clip_line(&h, gy_v3(0, 0, 0), gy_v3(0, 0, 2), &t_in, &f_in, &t_out, &f_out));
    assert_near(t_in, -0.5, 1e-12);
    assert_near(t_out, 0.5, 1e-12);
    /* Parallel to the +y face and above it; and a line passing beside the cube. */
    assert_false(
        gy_hull_clip_line(&h, gy_v3(-5, 1.5, 0), gy_v3(1, 0, 0), &t_in, &f_in, &t_out, &f_out));
    assert_false(
        gy_hull_clip_line(&h, gy_v3(-5, 0, 3), gy_v3(1, 0, -0.1), &t_in, &f_in, &t_out, &f_out));
    gy_hull_free(NULL, &h);
}

/* Line spans through each primitive against their analytic chords: entry and exit parameters and
 * outward normals, a non-unit direction (t in lengths of d), lines parallel to a side, and
 * misses. */
static void test_line_spans_match_the_primitives_analytically(void **state)
{
    (void)state;
    gy_line_span s;
    /* Sphere r = 2, line along +x at height 1: chord x = ±√3. */
    assert_true(gy_line_sphere(gy_v3(-5, 1, 0), gy_v3(1, 0, 0), 2.0, &s));
    assert_near(s.t_in, 5.0 - sqrt(3.0), 1e-12);
    assert_near(s.t_out, 5.0 + sqrt(3.0), 1e-12);
    assert_vec_near(s.n_in, gy_v3(-sqrt(3.0) / 2.0, 0.5, 0), 1e-12);
    assert_vec_near(s.n_out, gy_v3(sqrt(3.0) / 2.0, 0.5, 0), 1e-12);
    assert_false(gy_line_sphere(gy_v3(-5, 2.5, 0), gy_v3(1, 0, 0), 2.0, &s));
    /* Same line, d twice as long: t halves. */
    assert_true(gy_line_sphere(gy_v3(-5, 1, 0), gy_v3(2, 0, 0), 2.0, &s));
    assert_near(s.t_in, (5.0 - sqrt(3.0)) / 2.0, 1e-12);

    /* Box of half extents (1, 2, 3), line along -z through (0.5, 1, ·) from z = 10. */
    assert_true(gy_line_box(gy_v3(0.5, 1, 10), gy_v3(0, 0, -1), gy_v3(1, 2, 3), &s));
    assert_near(s.t_in, 7.0, 1e-12);
    assert_near(s.t_out, 13.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(0, 0, 1), 0.0);
    assert_vec_near(s.n_out, gy_v3(0, 0, -1), 0.0);
    /* Parallel to x beside the box, and a diagonal that enters through x and leaves through y. */
    assert_false(gy_line_box(gy_v3(-5, 2.5, 0), gy_v3(1, 0, 0), gy_v3(1, 2, 3), &s));
    assert_true(gy_line_box(gy_v3(-2, 0, 0), gy_v3(1, 1, 0), gy_v3(1, 2, 3), &s));
    assert_near(s.t_in, 1.0, 1e-12);
    assert_near(s.t_out, 2.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(-1, 0, 0), 0.0);
    assert_vec_near(s.n_out, gy_v3(0, 1, 0), 0.0);

    /* Cylinder r = 1 between y = ±2: through the side along x, and through the caps along y. */
    assert_true(gy_line_cylinder(gy_v3(-4, 1, 0), gy_v3(1, 0, 0), 1.0, 2.0, &s));
    assert_near(s.t_in, 3.0, 1e-12);
    assert_near(s.t_out, 5.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(-1, 0, 0), 1e-12);
    assert_true(gy_line_cylinder(gy_v3(0.5, 5, 0), gy_v3(0, -1, 0), 1.0, 2.0, &s));
    assert_near(s.t_in, 3.0, 1e-12);
    assert_near(s.t_out, 7.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(0, 1, 0), 0.0);
    assert_vec_near(s.n_out, gy_v3(0, -1, 0), 0.0);
    assert_false(gy_line_cylinder(gy_v3(1.5, 5, 0), gy_v3(0, -1, 0), 1.0, 2.0, &s));
    assert_false(gy_line_cylinder(gy_v3(-4, 2.5, 0), gy_v3(1, 0, 0), 1.0, 2.0, &s));

    /* Capsule r = 1, core y = ±2: along the axis it spans y = ±3 (the caps' poles); beside the
     * core through the side; a line through a cap only at x = 0.6 above the core. */
    assert_true(gy_line_capsule(gy_v3(0, 10, 0), gy_v3(0, -1, 0), 1.0, 2.0, &s));
    assert_near(s.t_in, 7.0, 1e-12);
    assert_near(s.t_out, 13.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(0, 1, 0), 1e-12);
    assert_vec_near(s.n_out, gy_v3(0, -1, 0), 1e-12);
    assert_true(gy_line_capsule(gy_v3(-4, 1, 0), gy_v3(1, 0, 0), 1.0, 2.0, &s));
    assert_near(s.t_in, 3.0, 1e-12);
    assert_vec_near(s.n_in, gy_v3(-1, 0, 0), 1e-12);
    assert_true(gy_line_capsule(gy_v3(-4, 2.6, 0), gy_v3(1, 0, 0), 1.0, 2.0, &s));
    assert_near(s.t_in, 4.0 - 0.8, 1e-12);
    assert_vec_near(s.n_in, gy_v3(-0.8, 0.6, 0), 1e-12);
    assert_false(gy_line_capsule(gy_v3(-4, 3.1, 0), gy_v3(1, 0, 0), 1.0, 2.0, &s));

    /* A cube hull spans as the box of the same size. */
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    gy_hull h;
    assert_result(gy_hull_build(NULL, pts, 8, &h), GY_OK);
    gy_line_span b;
    assert_true(gy_line_hull(gy_v3(-2, -0.5, 0), gy_v3(1, 1, 0), &h, &s));
    assert_true(gy_line_box(gy_v3(-2, -0.5, 0), gy_v3(1, 1, 0), gy_v3(1, 1, 1), &b));
    assert_near(s.t_in, 1.0, 1e-12);
    assert_near(s.t_out, 1.5, 1e-12);
    assert_near(s.t_in, b.t_in, 1e-12);
    assert_near(s.t_out, b.t_out, 1e-12);
    assert_vec_near(s.n_in, b.n_in, 1e-12);
    assert_vec_near(s.n_out, b.n_out, 1e-12);
    assert_false(gy_line_hull(gy_v3(-2, 1.5, 0), gy_v3(1, 0, 0), &h, &s));
    gy_hull_free(NULL, &h);
}

/* A ray's hit on a span: the entry; from inside, nothing, or the exit with the normal turned
 * back; nothing behind the origin or past t_max. */
static void test_line_span_hit_takes_the_entry_or_from_inside_the_exit(void **state)
{
    (void)state;
    gy_line_span s = {-1.0, 3.0, gy_v3(-1, 0, 0), gy_v3(1, 0, 0)};
    double t = -7.0;
    gy_vec3 n;
    assert_false(gy_line_span_hit(&s, 10.0, false, &t, &n));
    assert_true(gy_line_span_hit(&s, 10.0, true, &t, &n));
    assert_near(t, 3.0, 0.0);
    assert_vec_near(n, gy_v3(-1, 0, 0), 0.0);
    assert_false(gy_line_span_hit(&s, 2.0, true, &t, &n));
    s.t_in = 2.0;
    assert_true(gy_line_span_hit(&s, 2.0, false, &t, &n));
    assert_near(t, 2.0, 0.0);
    assert_vec_near(n, gy_v3(-1, 0, 0), 0.0);
    assert_false(gy_line_span_hit(&s, 1.5, false, &t, &n));
    s.t_in = -5.0;
    s.t_out = -1.0;
    assert_false(gy_line_span_hit(&s, 10.0, true, &t, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_mass_sphere_is_two_fifths_m_r2),
        cmocka_unit_test(test_shape_mass_box_is_m_over_12),
        cmocka_unit_test(test_shape_mass_cylinder_stands_along_y),
        cmocka_unit_test(test_shape_mass_capsule_matches_textbook_formula),
        cmocka_unit_test(test_shape_mass_capsule_and_cylinder_match_fine_hulls),
        cmocka_unit_test(test_shape_mass_plane_mesh_and_invalid_are_massless),
        cmocka_unit_test(test_hull_cube_with_interior_points_matches_box),
        cmocka_unit_test(test_hull_tetrahedron_matches_closed_form),
        cmocka_unit_test(test_hull_random_clouds_contain_points_and_face_outward),
        cmocka_unit_test(test_hull_lattice_with_coplanar_and_collinear_points_is_the_cube),
        cmocka_unit_test(test_hull_points_on_faces_never_become_vertices),
        cmocka_unit_test(test_hull_duplicates_are_merged),
        cmocka_unit_test(test_hull_far_from_origin_keeps_small_features),
        cmocka_unit_test(test_hull_rejects_degenerate_input_with_exact_code),
        cmocka_unit_test(test_hull_allocation_failure_at_every_point_leaks_nothing),
        cmocka_unit_test(test_hull_built_in_slices_is_the_one_shot_hull),
        cmocka_unit_test(test_hull_slices_give_the_one_shot_errors),
        cmocka_unit_test(test_hull_check_passes_every_buildable_cloud),
        cmocka_unit_test(test_hull_slices_refuse_empty_clouds_and_a_missing_out),
        cmocka_unit_test(test_hull_build_cancelled_at_any_slice_leaks_nothing),
        cmocka_unit_test(test_hull_copy_is_equal_and_owned),
        cmocka_unit_test(test_mass_add_two_spheres_uses_parallel_axis),
        cmocka_unit_test(test_mass_add_unequal_masses_weights_the_centre),
        cmocka_unit_test(test_mass_transform_rotates_box_tensor),
        cmocka_unit_test(test_mass_transform_agrees_with_hull_of_moved_box),
        cmocka_unit_test(test_mass_scale_to_keeps_centre_and_shape_of_tensor),
        cmocka_unit_test(test_hull_clip_line_matches_the_cube_analytically),
        cmocka_unit_test(test_line_spans_match_the_primitives_analytically),
        cmocka_unit_test(test_line_span_hit_takes_the_entry_or_from_inside_the_exit),
    };
    return cmocka_run_group_tests_name("geometry", tests, NULL, NULL);
}
