/* Runtime geometry under a per-tick budget, for one adapter named on the command line (argv[1]):
 * a 200 × 200 terrain created while running is built over many ticks, no tick spends more units
 * on it than the budget or one adapter piece alone, no adapter mesh call gets more triangles than
 * a piece, the body waits and appears when its geometry is ready, a sphere dropped on it rests at
 * its radius, a frictionless box slides across the seams between pieces at its speed with every
 * event naming the one collider the terrain was given, a ray finds it, the diagnostics show the
 * queue, and removing a body whose geometry is pending (before or while its pieces are made)
 * cancels the job and leaves nothing behind. The same for a 16,384-point hull: built in slices
 * over many ticks within the budget, the body created when it is ready, a ball resting on it,
 * and cancelling it mid-build. */
#include "test_world_fixture.h"

static const char *backend_name = "ode";

#define GRID    200u
#define SPACING 0.5
#define BUDGET  32768u
/* The adapter part's rule (docs/physics-thread.md): a piece is budget / 256 triangles, at least
 * 64, charged 256 units a triangle. */
#define PIECE       (BUDGET / 256u > 64u ? BUDGET / 256u : 64u)
#define PIECE_UNITS (PIECE * 256u)
#define PIECES      ((GRID * GRID * 2u + PIECE - 1u) / PIECE)

typedef struct terrain {
    gy_vec3 *v;
    uint32_t *idx;
    uint32_t vertex_count, index_count;
} terrain;

/* A flat GRID × GRID cell at y = 0, centred on the origin, two triangles a square, facing up. */
static terrain make_terrain(void)
{
    terrain t;
    t.vertex_count = (GRID + 1u) * (GRID + 1u);
    t.index_count = GRID * GRID * 6u;
    t.v = test_malloc(t.vertex_count * sizeof *t.v);
    t.idx = test_malloc(t.index_count * sizeof *t.idx);
    double half = 0.5 * SPACING * GRID;
    for (uint32_t z = 0; z <= GRID; z++)
        for (uint32_t x = 0; x <= GRID; x++)
            t.v[z * (GRID + 1u) + x] = gy_v3(x * SPACING - half, 0.0, z * SPACING - half);
    uint32_t k = 0;
    for (uint32_t z = 0; z < GRID; z++)
        for (uint32_t x = 0; x < GRID; x++) {
            uint32_t a = z * (GRID + 1u) + x, b = a + 1u, c = a + GRID + 1u, d = c + 1u;
            uint32_t tri[6] = {a, c, b, b, c, d};
            memcpy(&t.idx[k], tri, sizeof tri);
            k += 6u;
        }
    return t;
}

static void free_terrain(terrain *t)
{
    test_free(t->v);
    test_free(t->idx);
}

static gy_world *budget_world(gy_test_allocator *ta)
{
    gy_world_def c = wfx_config(ta, true);
    c.physics.backend = backend_name;
    c.physics.geometry_budget = BUDGET;
    return wfx_world_with(&c);
}

static gy_physics_geometry_stats geo(gy_world *w)
{
    gy_physics_geometry_stats s;
    assert_result(gy_physics_get_geometry_stats(gy_world_physics(w), &s), GY_OK);
    return s;
}

/* After the one body waiting for its geometry was removed: the job went with it, nothing was
 * built, the queue is empty, and the adapter holds no resource for it. */
static void assert_body_and_job_cancelled(gy_world *w)
{
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 0);
    assert_int_equal(s.bodies_waiting, 0);
    assert_int_equal(s.cancelled, 1);
    assert_int_equal(s.bodies_cancelled, 1);
    assert_int_equal(s.built, 0);
    assert_int_equal(s.tick_units, 0);
    gy_backend_counters c;
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.resources, 0);
}

/* A static body whose one collider is the runtime geometry `g` (a mesh or a hull). */
static wfx_desc geometry_desc(gy_shape_type type, gy_geometry g)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = type;
    s.resource.bits = g.bits;
    return wfx_shape(GY_BODY_STATIC, s);
}

/* Creates the terrain while the World runs as the static body of `cell` (frictionless if asked)
 * and drops the geometry handle's pin, so the body holds the World's last; returns that handle. */
static gy_geometry start_terrain(gy_world *w, gy_entity cell, bool frictionless)
{
    terrain t = make_terrain();
    gy_mesh_def m = {t.v, t.vertex_count, t.idx, t.index_count};
    gy_geometry g;
    assert_result(gy_geometry_create_mesh(w, &m, &g), GY_OK);
    free_terrain(&t); /* the World keeps its own copy */
    wfx_desc d = geometry_desc(GY_SHAPE_MESH, g);
    if (frictionless)
        d.collider.def.material.friction = 0.0;
    assert_result(gy_body_add(w, cell, wfx_d(&d)), GY_OK);
    gy_geometry_release(w, g);
    return g;
}

static void test_geometry_budget_terrain_is_built_over_ticks_within_the_budget(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    bool sampled = gy_physics_get_diagnostics(gy_world_physics(w), &(gy_physics_diagnostics){0}) !=
                   GY_ERR_UNSUPPORTED;
    wfx_tick(w, 2);
    gy_entity cell = wfx_entity(w, "cell", gy_v3(0, 0, 0));
    start_terrain(w, cell, false);

    uint32_t ticks = 0, adapter_ticks = 0;
    bool checked_sample = false;
    for (;;) {
        wfx_tick(w, 1);
        ticks++;
        assert_true(ticks < 100000u);
        gy_physics_geometry_stats s = geo(w);
        assert_int_equal(s.budget, BUDGET);
        /* Sliced work never goes over the budget; an adapter piece runs within what was left,
         * or alone in its tick. */
        assert_true(s.tick_units <= BUDGET || s.tick_units == s.tick_adapter_units);
        assert_true(s.tick_units <= (BUDGET > PIECE_UNITS ? BUDGET : PIECE_UNITS));
        assert_true(s.max_piece_triangles <= PIECE);
        if (s.tick_adapter_units > 0) {
            adapter_ticks++;
            assert_true(s.tick_adapter_units <= PIECE_UNITS);
        }
        if (wfx_state(w, cell).has_body)
            break;
        /* Pending: the handle is live, the body waits, the queue says so. */
        assert_true(gy_entity_is_valid(w, cell));
        assert_int_equal(s.jobs, 1);
        assert_int_equal(s.bodies_waiting, 1);
        assert_true(s.bytes_pending >= (GRID + 1u) * (GRID + 1u) * sizeof(gy_vec3) +
                                           GRID * GRID * 6u * sizeof(uint32_t));
        assert_true(s.units_pending > 0);
        if (s.tick_adapter_units == 0)
            assert_true(s.tick_units > 0);
        gy_physics_diagnostics dg;
        if (sampled && !checked_sample && s.units_pending > 4u * BUDGET &&
            gy_physics_get_diagnostics(gy_world_physics(w), &dg) == GY_OK &&
            dg.geometry_jobs == 1) {
            assert_int_equal(dg.geometry_budget, BUDGET);
            assert_int_equal(dg.geometry_bodies_waiting, 1);
            assert_true(dg.geometry_bytes_pending >= (GRID + 1u) * (GRID + 1u) * sizeof(gy_vec3));
            assert_true(dg.geometry_tick_max_units > 0 && dg.geometry_tick_max_units <= BUDGET);
            assert_true(dg.geometry_tick_max_s > 0.0);
            checked_sample = true;
        }
    }
    /* About 4 million units of query-side work at 32,768 a tick, then one piece of 128
     * triangles a tick at most (each costs the whole budget). */
    assert_true(ticks >= 20u);
    assert_int_equal(adapter_ticks, PIECES);
    assert_true(!sampled || checked_sample);
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 0);
    assert_int_equal(s.bodies_waiting, 0);
    assert_int_equal(s.bytes_pending, 0);
    assert_int_equal(s.built, 1);
    assert_int_equal(s.cancelled, 0);
    assert_int_equal(s.max_piece_triangles, PIECE);
    print_message("%s: 200 x 200 terrain built over %u ticks at %u units a tick; most in one tick "
                  "%.2f ms\n",
                  backend_name, ticks, BUDGET, (double)s.max_tick_ns * 1e-6);

    /* The terrain is really there: a ray finds it, and a sphere dropped on it rests at its
     * radius (within the adapters' contact slop). Only the height is checked: on a large flat
     * mesh both adapters let the resting sphere creep sideways (ODE ~0.15 m, Bullet ~0.9 m in
     * 2 s), whether the mesh was built in slices or in one piece. */
    gy_world_hit hit;
    uint32_t n;
    assert_result(gy_world_raycast(w, gy_v3(13.3, 5, -21.7), gy_v3(0, -10, 0), NULL,
                                   GY_COLLECT_CLOSEST, &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, cell));
    assert_near(hit.point.y, 0.0, 1e-9);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(13.3, 2.0, -21.7));
    wfx_tick(w, 120);
    assert_near(wfx_state(w, ball).pose.position.y, 0.5, 0.02);
    wfx_destroy(w, &ta);
}

static void test_geometry_budget_removing_a_pending_body_cancels_its_geometry(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    wfx_tick(w, 1);
    gy_entity cell = wfx_entity(w, "cell", gy_v3(0, 0, 0));
    gy_geometry g = start_terrain(w, cell, false);
    wfx_tick(w, 3);
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 1);
    assert_int_equal(s.bodies_waiting, 1);
    assert_false(wfx_state(w, cell).has_body);
    /* The body goes, then its geometry (the World's last pin): both leave the queue. */
    assert_result(gy_body_remove(w, cell), GY_OK);
    assert_false(gy_geometry_is_valid(w, g));
    wfx_tick(w, 2);
    assert_body_and_job_cancelled(w);
    s = geo(w);
    assert_int_equal(s.bytes_pending, 0);
    assert_int_equal(s.units_pending, 0);
    gy_backend_counters c;
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.live_objects, 0);
    /* The World goes on as before: a small mesh now is built in its first tick. */
    gy_vec3 quad[4] = {{-2, 0, -2}, {2, 0, -2}, {2, 0, 2}, {-2, 0, 2}};
    uint32_t qi[6] = {0, 2, 1, 0, 3, 2};
    gy_mesh_def qm = {quad, 4, qi, 6};
    assert_result(gy_geometry_create_mesh(w, &qm, &g), GY_OK);
    wfx_desc d = geometry_desc(GY_SHAPE_MESH, g);
    assert_result(gy_body_add(w, cell, wfx_d(&d)), GY_OK);
    gy_geometry_release(w, g);
    wfx_tick(w, 1);
    assert_true(wfx_state(w, cell).has_body);
    wfx_destroy(w, &ta); /* every byte back, no adapter object left */
}

/* Creates the terrain as a frictionless static body of `cell` and ticks until it is there. */
static void add_terrain(gy_world *w, gy_entity cell)
{
    start_terrain(w, cell, true);
    for (uint32_t i = 0; !wfx_state(w, cell).has_body; i++) {
        assert_true(i < 100000u);
        wfx_tick(w, 1);
    }
}

static void test_geometry_budget_box_slides_across_piece_seams_at_its_speed(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    gy_entity cell = wfx_entity(w, "cell", gy_v3(0, 0, 0));
    static wfx_events ev;
    memset(&ev, 0, sizeof ev);
    assert_result(gy_entity_set_collision_callback(w, cell, wfx_on_collision, &ev), GY_OK);
    add_terrain(w, cell);
    assert_true(PIECES > 1u);
    /* Pieces are runs of 128 triangles, 64 squares of a 200-square row: seams across every row
     * and along z between rows' runs. Sliding 8 m in z crosses dozens. */
    const double speed = 4.0;
    gy_entity box = wfx_entity(w, "box", gy_v3(3.3, 0.5, -7.9));
    wfx_desc bd = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    bd.collider.def.material.friction = 0.0;
    wfx_add(w, box, bd);
    assert_result(gy_body_set_linear_velocity(w, box, gy_v3(0, 0, speed)), GY_OK);
    wfx_tick(w, 120);
    gy_physics_state s = wfx_state(w, box);
    assert_true(s.pose.position.z > 0.0);
    assert_near(s.linear_velocity.z, speed, 1e-3);
    assert_near(s.linear_velocity.x, 0.0, 1e-3);
    assert_near(s.pose.position.y, 0.5, 0.02);
    /* One collider on each side, whichever piece the box is on. */
    assert_true(ev.count > 0);
    assert_int_equal(ev.overflow, 0);
    for (uint32_t i = 0; i < ev.count; i++) {
        assert_true(gy_entity_equal(ev.ev[i].self, cell));
        assert_true(gy_entity_equal(ev.ev[i].other, box));
        assert_int_equal(ev.ev[i].self_collider, 0);
        assert_int_equal(ev.ev[i].other_collider, 0);
    }
    assert_int_equal(wfx_check_pairing(&ev, true), 1);
    wfx_destroy(w, &ta);
}

static void
test_geometry_budget_removing_a_body_while_its_pieces_are_made_leaks_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    wfx_tick(w, 1);
    gy_entity cell = wfx_entity(w, "cell", gy_v3(0, 0, 0));
    start_terrain(w, cell, false);
    /* Until a few pieces are made: adapter meshes exist that no resource holds yet. */
    uint32_t pieces = 0;
    for (uint32_t i = 0; pieces < 3u; i++) {
        assert_true(i < 100000u);
        wfx_tick(w, 1);
        pieces += geo(w).tick_adapter_units > 0;
    }
    gy_backend_counters c;
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.resources, 3);
    assert_false(wfx_state(w, cell).has_body);
    assert_result(gy_body_remove(w, cell), GY_OK);
    wfx_tick(w, 2);
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 0);
    assert_int_equal(s.cancelled, 1);
    assert_int_equal(s.built, 0);
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.resources, 0);
    assert_int_equal(c.live_objects, 0);
    wfx_destroy(w, &ta);
}

static void test_geometry_budget_releasing_a_built_terrain_frees_every_piece(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    gy_entity cell = wfx_entity(w, "cell", gy_v3(0, 0, 0));
    add_terrain(w, cell);
    gy_backend_counters c;
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.resources, PIECES);
    assert_int_equal(c.colliders, PIECES);
    assert_result(gy_body_remove(w, cell), GY_OK);
    wfx_tick(w, 2);
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    assert_int_equal(c.resources, 0);
    assert_int_equal(c.live_objects, 0);
    wfx_destroy(w, &ta);
}

static void
test_geometry_budget_destroying_the_world_with_geometry_pending_leaks_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    wfx_tick(w, 1);
    start_terrain(w, wfx_entity(w, "cell", gy_v3(0, 0, 0)), false);
    wfx_tick(w, 2);
    assert_int_equal(geo(w).jobs, 1);
    wfx_destroy(w, &ta);
}

static void
test_geometry_budget_destroying_the_world_while_pieces_are_made_leaks_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = budget_world(&ta);
    wfx_tick(w, 1);
    start_terrain(w, wfx_entity(w, "cell", gy_v3(0, 0, 0)), false);
    for (uint32_t i = 0; geo(w).max_piece_triangles == 0; i++) {
        assert_true(i < 100000u);
        wfx_tick(w, 1);
    }
    assert_int_equal(geo(w).jobs, 1);
    wfx_destroy(w, &ta); /* every byte back, no adapter object left */
}

/* ---- hulls ---------------------------------------------------------------------------------- */

/* A rock: points on a sphere of radius 2 with its top cut flat at y = 1.5 (a flat top a ball rests
 * on at exactly 2.0), and points strictly inside it, 16,384 in all. With every point on the
 * surface the hull has 14,370 vertices and costs about 1.2 n² = 3e8 units (collision/geometry.h:
 * the points cut off by the flat top are no vertices), built over 77 ticks at HULL_BUDGET. */
#define HULL_POINTS 16384u
#define HULL_TOP    1.5
#define HULL_BUDGET 4194304u
/* A hull slice stops once it has spent the budget, so it goes over by at most one item: an added
 * point's cone (3 units a face it sees, 2 h² + h for its horizon of h edges), 233 units at most
 * for this rock (collision/geometry.h). */
#define HULL_ITEM_MAX 1024u

static gy_vec3 *rock_points(uint32_t surface)
{
    gy_vec3 *p = test_malloc(HULL_POINTS * sizeof *p);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 0; i < HULL_POINTS; i++) {
        if (i < surface) { /* a Fibonacci lattice: even, no two alike */
            double y = 1.0 - 2.0 * (i + 0.5) / surface, r = sqrt(1.0 - y * y);
            double a = 2.399963229728653 * i;
            p[i] = gy_v3(2.0 * r * cos(a), fmin(2.0 * y, HULL_TOP), 2.0 * r * sin(a));
            continue;
        }
        gy_vec3 q; /* inside a ball of radius 1.4, well within the hull */
        do {
            double c[3];
            for (int k = 0; k < 3; k++) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                c[k] = 2.8 * ((double)(seed >> 11) / 9007199254740992.0) - 1.4;
            }
            q = gy_v3(c[0], c[1], c[2]);
        } while (gy_v3_len(q) > 1.4);
        p[i] = q;
    }
    return p;
}

static gy_world *hull_world(gy_test_allocator *ta, uint32_t budget)
{
    gy_world_def c = wfx_config(ta, true);
    c.physics.backend = backend_name;
    c.physics.geometry_budget = budget;
    return wfx_world_with(&c);
}

/* Creates the rock while the World runs, as a static body of `e` unless `e` is null; the geometry
 * handle's pin is dropped unless `keep` is given. */
static void add_rock(gy_world *w, gy_entity e, uint32_t surface, gy_geometry *keep)
{
    gy_vec3 *pts = rock_points(surface);
    gy_hull_def hd = {pts, HULL_POINTS};
    gy_geometry g;
    assert_result(gy_geometry_create_hull(w, &hd, &g), GY_OK);
    test_free(pts); /* the World keeps its own copy */
    if (gy_entity_is_valid(w, e)) {
        wfx_desc d = geometry_desc(GY_SHAPE_HULL, g);
        assert_result(gy_body_add(w, e, wfx_d(&d)), GY_OK);
    }
    if (keep != NULL)
        *keep = g;
    else
        gy_geometry_release(w, g);
}

/* A World running `warm` ticks with a hull budget, then a rock of `surface` surface points being
 * built as the static body of the entity put in `rock`. */
static gy_world *world_building_rock(gy_test_allocator *ta, uint32_t budget, uint32_t warm,
                                     uint32_t surface, gy_entity *rock)
{
    gy_test_allocator_init(ta);
    gy_world *w = hull_world(ta, budget);
    wfx_tick(w, warm);
    *rock = wfx_entity(w, "rock", gy_v3(0, 0, 0));
    add_rock(w, *rock, surface, NULL);
    return w;
}

/* Ticks until the rock's job is done; returns the ticks. Every tick stays within the budget but
 * for one item, and while the job runs, the body waits and each tick spends the whole budget. */
static uint32_t build_rock(gy_world *w, gy_entity rock, uint32_t budget)
{
    uint32_t ticks = 0;
    for (;;) {
        wfx_tick(w, 1);
        ticks++;
        assert_true(ticks < 10000u);
        gy_physics_geometry_stats s = geo(w);
        /* The build's slices fill the budget, past it by at most one item; the adapter's slice
         * (the built hull copied into the adapter and the query blob) fits what is left, or runs
         * first in the next tick. */
        assert_true(s.tick_units <= budget + HULL_ITEM_MAX);
        if (s.jobs == 0)
            break;
        assert_false(wfx_state(w, rock).has_body);
        assert_int_equal(s.bodies_waiting, 1);
        assert_true(s.tick_units >= budget); /* a tick short of the budget finishes the job */
        assert_true(s.units_pending > 0);
    }
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.bodies_waiting, 0);
    assert_int_equal(s.built, 1);
    print_message("%s: %u-point hull built over %u ticks at %u units a tick; most in one tick "
                  "%.2f ms\n",
                  backend_name, HULL_POINTS, ticks, budget, (double)s.max_tick_ns * 1e-6);
    return ticks;
}

/* The rock is really there: a ray straight down meets its flat top, and a ball dropped on it
 * rests there at 2.0 (within the adapters' contact slop, as for the terrain above). */
static void check_rock_holds_a_ball(gy_world *w, gy_entity rock)
{
    assert_true(wfx_state(w, rock).has_body);
    gy_world_hit hit;
    uint32_t n;
    assert_result(gy_world_raycast(w, gy_v3(0.2, 5, -0.3), gy_v3(0, -10, 0), NULL,
                                   GY_COLLECT_CLOSEST, &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, rock));
    assert_near(hit.point.y, HULL_TOP, 1e-9);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0.2, HULL_TOP + 1.5, -0.3));
    wfx_tick(w, 90);
    gy_physics_state st = wfx_state(w, ball);
    assert_near(st.pose.position.y, HULL_TOP + 0.5, 0.02);
    assert_near(st.pose.position.x, 0.2, 1e-3);
    assert_near(st.pose.position.z, -0.3, 1e-3);
}

static void test_geometry_budget_large_hull_is_built_over_ticks_within_the_budget(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_entity rock;
    gy_world *w = world_building_rock(&ta, HULL_BUDGET, 2, HULL_POINTS, &rock);
    /* About 3e8 units at 4,194,304 a tick. */
    assert_true(build_rock(w, rock, HULL_BUDGET) >= 60u);
    if (strcmp(backend_name, "ode") == 0) {
        /* The hull is built, but ODE refuses a runtime hull of more than 256 vertices: the
         * body is not created, and nothing is left behind. */
        wfx_tick(w, 1);
        assert_false(wfx_state(w, rock).has_body);
        gy_backend_counters c;
        assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
        assert_int_equal(c.resources, 0);
    } else {
        check_rock_holds_a_ball(w, rock);
    }
    wfx_destroy(w, &ta);
}

static void test_geometry_budget_hull_of_a_large_cloud_is_built_over_ticks(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_entity rock;
    /* 200 points on the surface, under ODE's limit: about 50 units a point, 25 ticks. */
    gy_world *w = world_building_rock(&ta, BUDGET, 2, 200, &rock);
    assert_true(build_rock(w, rock, BUDGET) >= 10u);
    check_rock_holds_a_ball(w, rock);
    wfx_destroy(w, &ta);
}

static void test_geometry_budget_removing_a_body_while_its_hull_is_built_leaks_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_entity rock;
    gy_world *w = world_building_rock(&ta, HULL_BUDGET, 1, HULL_POINTS, &rock);
    wfx_tick(w, 10); /* mid-build: the hull's work arrays are live */
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 1);
    assert_int_equal(s.bodies_waiting, 1);
    assert_int_equal(s.built, 0);
    assert_false(wfx_state(w, rock).has_body);
    assert_result(gy_body_remove(w, rock), GY_OK);
    wfx_tick(w, 2);
    assert_body_and_job_cancelled(w);
    wfx_destroy(w, &ta); /* every byte back, no adapter object left */
}

static void test_geometry_budget_releasing_a_hull_while_it_is_built_cancels_it(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = hull_world(&ta, HULL_BUDGET);
    wfx_tick(w, 1);
    gy_geometry g;
    add_rock(w, (gy_entity){0}, HULL_POINTS, &g);
    wfx_tick(w, 10);
    assert_int_equal(geo(w).jobs, 1);
    gy_geometry_release(w, g);
    wfx_tick(w, 2);
    gy_physics_geometry_stats s = geo(w);
    assert_int_equal(s.jobs, 0);
    assert_int_equal(s.cancelled, 1);
    assert_int_equal(s.built, 0);
    /* The queue is free again: a small hull now is built in its first tick. */
    gy_vec3 tet[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def hd = {tet, 4};
    gy_entity e = wfx_entity(w, "tet", gy_v3(0, 0, 0));
    assert_result(gy_geometry_create_hull(w, &hd, &g), GY_OK);
    wfx_desc d = geometry_desc(GY_SHAPE_HULL, g);
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_OK);
    gy_geometry_release(w, g);
    wfx_tick(w, 1);
    assert_true(wfx_state(w, e).has_body);
    wfx_destroy(w, &ta);
}

static void
test_geometry_budget_destroying_the_world_while_a_hull_is_built_leaks_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_entity rock;
    gy_world *w = world_building_rock(&ta, HULL_BUDGET, 1, HULL_POINTS, &rock);
    wfx_tick(w, 5);
    assert_int_equal(geo(w).jobs, 1);
    wfx_destroy(w, &ta);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BACKEND [TEST_NAME_FILTER]\n", argv[0]);
        return 2;
    }
    backend_name = argv[1];
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_budget_terrain_is_built_over_ticks_within_the_budget),
        cmocka_unit_test(test_geometry_budget_removing_a_pending_body_cancels_its_geometry),
        cmocka_unit_test(
            test_geometry_budget_destroying_the_world_with_geometry_pending_leaks_nothing),
        cmocka_unit_test(test_geometry_budget_box_slides_across_piece_seams_at_its_speed),
        cmocka_unit_test(
            test_geometry_budget_removing_a_body_while_its_pieces_are_made_leaks_nothing),
        cmocka_unit_test(test_geometry_budget_releasing_a_built_terrain_frees_every_piece),
        cmocka_unit_test(
            test_geometry_budget_destroying_the_world_while_pieces_are_made_leaks_nothing),
        cmocka_unit_test(test_geometry_budget_large_hull_is_built_over_ticks_within_the_budget),
        cmocka_unit_test(test_geometry_budget_hull_of_a_large_cloud_is_built_over_ticks),
        cmocka_unit_test(
            test_geometry_budget_removing_a_body_while_its_hull_is_built_leaks_nothing),
        cmocka_unit_test(test_geometry_budget_releasing_a_hull_while_it_is_built_cancels_it),
        cmocka_unit_test(
            test_geometry_budget_destroying_the_world_while_a_hull_is_built_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
