/* Debug draw through the World, for one adapter named on the command line (argv[1]): a recording
 * drawer checks what is drawn for a known scene (every collider type, a sleeping body, a sensor,
 * a character, a limited hinge, resting contacts), the refusals of bad definitions, and that a
 * call made while the physics thread is held inside a step returns without waiting for it. */
#include "test_world_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static const char *backend_name;

/* ---- the recording drawer -------------------------------------------------------------------- */

#define REC_MAX 512u

typedef enum rec_kind {
    REC_SPHERE,
    REC_BOX,
    REC_CAPSULE,
    REC_CYLINDER,
    REC_PLANE,
    REC_HULL,
    REC_MESH,
    REC_SEGMENT,
    REC_POINT,
    REC_TEXT,
    REC_KINDS
} rec_kind;

typedef struct rec_item {
    rec_kind kind;
    gy_pose pose;      /* shapes */
    gy_vec3 size;      /* box: half extents; sphere/capsule/cylinder: radius, height */
    gy_vec3 a, b;      /* segment ends; point: a; plane: a = normal, size.x = offset */
    uint32_t vertices; /* hull, mesh */
    uint32_t triangles;
    gy_debug_color color;
    bool solid;
    char text[32];
} rec_item;

typedef struct recorder {
    rec_item items[REC_MAX];
    uint32_t count;
    uint32_t by_kind[REC_KINDS];
} recorder;

static rec_item *rec_push(void *ctx, rec_kind kind, gy_debug_color color)
{
    recorder *r = ctx;
    r->by_kind[kind]++;
    if (r->count >= REC_MAX)
        fail_msg("the recorder is full");
    rec_item *it = &r->items[r->count++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->color = color;
    return it;
}

static void rec_sphere(void *ctx, gy_pose pose, double radius, gy_debug_color c, bool solid)
{
    rec_item *it = rec_push(ctx, REC_SPHERE, c);
    it->pose = pose;
    it->size = gy_v3(radius, 0, 0);
    it->solid = solid;
}
static void rec_box(void *ctx, gy_pose pose, gy_vec3 half, gy_debug_color c, bool solid)
{
    rec_item *it = rec_push(ctx, REC_BOX, c);
    it->pose = pose;
    it->size = half;
    it->solid = solid;
}
static void rec_capsule(void *ctx, gy_pose pose, double radius, double height, gy_debug_color c,
                        bool solid)
{
    rec_item *it = rec_push(ctx, REC_CAPSULE, c);
    it->pose = pose;
    it->size = gy_v3(radius, height, 0);
    it->solid = solid;
}
static void rec_cylinder(void *ctx, gy_pose pose, double radius, double height, gy_debug_color c,
                         bool solid)
{
    rec_item *it = rec_push(ctx, REC_CYLINDER, c);
    it->pose = pose;
    it->size = gy_v3(radius, height, 0);
    it->solid = solid;
}
static void rec_plane(void *ctx, gy_vec3 normal, double offset, gy_debug_color c, bool solid)
{
    rec_item *it = rec_push(ctx, REC_PLANE, c);
    it->a = normal;
    it->size = gy_v3(offset, 0, 0);
    it->solid = solid;
}
static void rec_tris(void *ctx, rec_kind kind, gy_pose pose, const gy_vec3 *v, uint32_t nv,
                     const uint32_t *idx, uint32_t nt, gy_debug_color c, bool solid)
{
    rec_item *it = rec_push(ctx, kind, c);
    it->pose = pose;
    it->vertices = nv;
    it->triangles = nt;
    it->solid = solid;
    for (uint32_t i = 0; i < 3u * nt; i++)
        assert_true(idx[i] < nv);
    for (uint32_t i = 0; i < nv; i++)
        assert_true(gy_vec3_is_finite(v[i]));
}
static void rec_hull(void *ctx, gy_pose pose, const gy_vec3 *v, uint32_t nv, const uint32_t *idx,
                     uint32_t nt, gy_debug_color c, bool solid)
{
    rec_tris(ctx, REC_HULL, pose, v, nv, idx, nt, c, solid);
}
static void rec_mesh(void *ctx, gy_pose pose, const gy_vec3 *v, uint32_t nv, const uint32_t *idx,
                     uint32_t nt, gy_debug_color c, bool solid)
{
    rec_tris(ctx, REC_MESH, pose, v, nv, idx, nt, c, solid);
}
static void rec_segment(void *ctx, gy_vec3 a, gy_vec3 b, gy_debug_color c)
{
    rec_item *it = rec_push(ctx, REC_SEGMENT, c);
    it->a = a;
    it->b = b;
}
static void rec_point(void *ctx, gy_vec3 p, double size, gy_debug_color c)
{
    rec_item *it = rec_push(ctx, REC_POINT, c);
    it->a = p;
    it->size = gy_v3(size, 0, 0);
}
static void rec_text(void *ctx, gy_vec3 p, const char *text, gy_debug_color c)
{
    rec_item *it = rec_push(ctx, REC_TEXT, c);
    it->a = p;
    snprintf(it->text, sizeof it->text, "%s", text);
}

static gy_debug_draw recording(recorder *r, uint32_t flags)
{
    memset(r, 0, sizeof *r);
    gy_debug_draw d = gy_default_debug_draw();
    d.flags = flags;
    d.sphere = rec_sphere;
    d.box = rec_box;
    d.capsule = rec_capsule;
    d.cylinder = rec_cylinder;
    d.plane = rec_plane;
    d.hull = rec_hull;
    d.mesh = rec_mesh;
    d.segment = rec_segment;
    d.point = rec_point;
    d.text = rec_text;
    d.context = r;
    return d;
}

static bool same_color(gy_debug_color a, gy_debug_color b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}

static void assert_v3_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

/* The one recorded item of `kind` whose position is within `tol` of `at` (fails otherwise). */
static const rec_item *find_at(const recorder *r, rec_kind kind, gy_vec3 at, double tol)
{
    const rec_item *found = NULL;
    for (uint32_t i = 0; i < r->count; i++) {
        const rec_item *it = &r->items[i];
        if (it->kind != kind || gy_v3_len(gy_v3_sub(it->pose.position, at)) > tol)
            continue;
        if (found != NULL)
            fail_msg("two items of kind %d near (%g, %g, %g)", (int)kind, at.x, at.y, at.z);
        found = it;
    }
    if (found == NULL)
        fail_msg("no item of kind %d near (%g, %g, %g)", (int)kind, at.x, at.y, at.z);
    return found;
}

/* ---- the known scene ------------------------------------------------------------------------- */

/* Positions (metres). The ground's top face is y = 0. */
#define BALL_AT     gy_v3(0, 0.5, 0)
#define SLEEPER_AT  gy_v3(4, 0.5, 0)
#define SENSOR_AT   gy_v3(0, 5, 0)
#define CYLINDER_AT gy_v3(-4, 1, 0)
#define HULL_AT     gy_v3(8, 1, 0)
#define MESH_AT     gy_v3(0, 0.5, 8)
#define HERO_AT     gy_v3(-8, 0.9, 0)
#define BOB_AT      gy_v3(12, 3, 0)
#define PIVOT_AT    gy_v3(12, 4, 0)
#define PLANE_Y     (-5.0)
#define LIMIT       0.5 /* the hinge's range, ± radians */

typedef struct scene {
    gy_test_allocator ta;
    gy_world *w;
    gy_entity ground, ball, sleeper, sensor, cylinder, hull, mesh, hero, bob, plane;
    gy_geometry hull_geo, mesh_geo;
    gy_joint hinge;
} scene;

static gy_shape shape_of(gy_shape_type type)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = type;
    return s;
}

static void build(scene *s, gy_world_def *cfg)
{
    memset(s, 0, sizeof *s);
    gy_test_allocator_init(&s->ta);
    gy_world_def c = cfg != NULL ? *cfg : wfx_config(&s->ta, true);
    c.allocator = &s->ta.base;
    c.physics.backend = backend_name;
    s->w = wfx_world_with(&c);
    gy_world *w = s->w;
    s->ground = wfx_ground(w);

    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.body.allow_sleeping = false;
    s->ball = wfx_entity(w, "ball", BALL_AT);
    wfx_add(w, s->ball, d);

    s->sleeper = wfx_entity(w, "sleeper", SLEEPER_AT);
    wfx_add(w, s->sleeper, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));

    s->sensor = wfx_entity(w, "sensor", SENSOR_AT);
    wfx_add(w, s->sensor, wfx_sphere(GY_BODY_TRIGGER, 1.0));

    gy_shape cyl = shape_of(GY_SHAPE_CYLINDER);
    cyl.radius = 0.5;
    cyl.height = 2.0;
    s->cylinder = wfx_entity(w, "cylinder", CYLINDER_AT);
    wfx_add(w, s->cylinder, wfx_shape(GY_BODY_STATIC, cyl));

    static const gy_vec3 cube[] = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {-0.5, 0.5, -0.5},
                                   {0.5, 0.5, -0.5},   {-0.5, -0.5, 0.5}, {0.5, -0.5, 0.5},
                                   {-0.5, 0.5, 0.5},   {0.5, 0.5, 0.5}};
    gy_hull_def hd = {cube, 8};
    assert_result(gy_geometry_create_hull(w, &hd, &s->hull_geo), GY_OK);
    gy_shape hull = shape_of(GY_SHAPE_HULL);
    hull.resource.bits = s->hull_geo.bits;
    s->hull = wfx_entity(w, "hull", HULL_AT);
    wfx_add(w, s->hull, wfx_shape(GY_BODY_STATIC, hull));

    static const gy_vec3 quad[] = {{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
    static const uint32_t quad_idx[] = {0, 2, 1, 0, 3, 2};
    gy_mesh_def md = {quad, 4, quad_idx, 6};
    assert_result(gy_geometry_create_mesh(w, &md, &s->mesh_geo), GY_OK);
    gy_shape mesh = shape_of(GY_SHAPE_MESH);
    mesh.resource.bits = s->mesh_geo.bits;
    s->mesh = wfx_entity(w, "mesh", MESH_AT);
    wfx_add(w, s->mesh, wfx_shape(GY_BODY_STATIC, mesh));

    gy_shape plane = shape_of(GY_SHAPE_PLANE);
    plane.normal = gy_v3(0, 1, 0);
    plane.offset = PLANE_Y;
    s->plane = wfx_entity(w, "plane", gy_v3(0, 0, 0));
    wfx_add(w, s->plane, wfx_shape(GY_BODY_STATIC, plane));

    gy_shape cap = shape_of(GY_SHAPE_CAPSULE);
    cap.radius = 0.3;
    cap.height = 1.8;
    wfx_desc hero = wfx_shape(GY_BODY_KINEMATIC, cap);
    hero.desc.is_character = true;
    s->hero = wfx_entity(w, "hero", HERO_AT);
    wfx_add(w, s->hero, hero);

    wfx_desc bob = wfx_box(GY_BODY_DYNAMIC, gy_v3(0.4, 0.4, 0.4));
    bob.desc.body.allow_sleeping = false;
    s->bob = wfx_entity(w, "bob", BOB_AT);
    wfx_add(w, s->bob, bob);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_HINGE;
    jd.anchor = PIVOT_AT;
    jd.axis = gy_v3(0, 0, 1);
    jd.has_limits = true;
    jd.limit_min = -LIMIT;
    jd.limit_max = LIMIT;
    assert_result(gy_joint_create(w, s->bob, gy_entity_null(), &jd, &s->hinge), GY_OK);
}

static void settle(scene *s)
{
    wfx_tick(s->w, 2);
    assert_result(gy_body_set_awake(s->w, s->sleeper, false), GY_OK);
    wfx_tick(s->w, 30);
    assert_false(wfx_state(s->w, s->sleeper).awake);
    assert_true(wfx_state(s->w, s->ball).awake);
    assert_true(wfx_state(s->w, s->hero).grounded);
}

static void tear_down(scene *s)
{
    gy_geometry_release(s->w, s->hull_geo);
    gy_geometry_release(s->w, s->mesh_geo);
    wfx_destroy(s->w, &s->ta);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_debug_draw_colliders_in_their_shapes_and_colours(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_COLLIDERS);
    d.solid = true;
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    const gy_debug_palette *pal = &d.palette;
    /* Ten colliders, one of each shape callback at least. */
    assert_int_equal(r.by_kind[REC_SPHERE], 2);  /* ball, sensor */
    assert_int_equal(r.by_kind[REC_BOX], 3);     /* ground, sleeper, bob */
    assert_int_equal(r.by_kind[REC_CAPSULE], 1); /* hero */
    assert_int_equal(r.by_kind[REC_CYLINDER], 1);
    assert_int_equal(r.by_kind[REC_PLANE], 1);
    assert_int_equal(r.by_kind[REC_HULL], 1);
    assert_int_equal(r.by_kind[REC_MESH], 1);
    assert_int_equal(r.count, 10);
    for (uint32_t i = 0; i < r.count; i++)
        assert_true(r.items[i].solid);

    const rec_item *ball = find_at(&r, REC_SPHERE, BALL_AT, 0.02);
    assert_near(ball->size.x, 0.5, 1e-12);
    assert_true(same_color(ball->color, pal->awake_body));
    const rec_item *sensor = find_at(&r, REC_SPHERE, SENSOR_AT, 1e-9);
    assert_near(sensor->size.x, 1.0, 1e-12);
    assert_true(same_color(sensor->color, pal->sensor));

    const rec_item *ground = find_at(&r, REC_BOX, gy_v3(0, -0.5, 0), 1e-9);
    assert_v3_near(ground->size, gy_v3(20, 0.5, 20), 1e-12);
    assert_true(same_color(ground->color, pal->static_body));
    const rec_item *sleeper = find_at(&r, REC_BOX, SLEEPER_AT, 0.02);
    assert_v3_near(sleeper->size, gy_v3(0.5, 0.5, 0.5), 1e-12);
    assert_true(same_color(sleeper->color, pal->sleeping_body));
    /* The bob hangs straight below the pivot, at rest within the hinge's limits. */
    const rec_item *bob = find_at(&r, REC_BOX, BOB_AT, 0.05);
    assert_v3_near(bob->size, gy_v3(0.2, 0.2, 0.2), 1e-12);
    assert_true(same_color(bob->color, pal->awake_body));

    const rec_item *hero = find_at(&r, REC_CAPSULE, HERO_AT, 0.05);
    assert_near(hero->size.x, 0.3, 1e-12);
    assert_near(hero->size.y, 1.8, 1e-12);
    assert_true(same_color(hero->color, pal->kinematic_body));

    const rec_item *cyl = find_at(&r, REC_CYLINDER, CYLINDER_AT, 1e-9);
    assert_near(cyl->size.x, 0.5, 1e-12);
    assert_near(cyl->size.y, 2.0, 1e-12);
    assert_true(same_color(cyl->color, pal->static_body));

    const rec_item *hull = find_at(&r, REC_HULL, HULL_AT, 1e-9);
    assert_int_equal(hull->vertices, 8);
    assert_int_equal(hull->triangles, 12); /* a cube's six faces, two triangles each */
    const rec_item *mesh = find_at(&r, REC_MESH, MESH_AT, 1e-9);
    assert_int_equal(mesh->vertices, 4);
    assert_int_equal(mesh->triangles, 2);

    for (uint32_t i = 0; i < r.count; i++) {
        if (r.items[i].kind != REC_PLANE)
            continue;
        assert_v3_near(r.items[i].a, gy_v3(0, 1, 0), 1e-12);
        assert_near(r.items[i].size.x, PLANE_Y, 1e-12);
    }
    /* Wire by default. */
    d = recording(&r, GY_DEBUG_DRAW_COLLIDERS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_int_equal(r.count, 10);
    for (uint32_t i = 0; i < r.count; i++)
        assert_false(r.items[i].solid);
    /* Drawing everything allocates nothing. */
    uint64_t allocs = s.ta.allocs, reallocs = s.ta.reallocs;
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_true(r.count > 10);
    assert_int_equal(s.ta.allocs, allocs);
    assert_int_equal(s.ta.reallocs, reallocs);
    tear_down(&s);
}

static void test_debug_draw_bounds_and_tree_nodes_enclose_the_colliders(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_BOUNDS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    /* Every collider but the plane has bounds. */
    assert_int_equal(r.by_kind[REC_BOX], 9);
    assert_int_equal(r.count, 9);
    const rec_item *ball = find_at(&r, REC_BOX, BALL_AT, 0.02);
    assert_v3_near(ball->size, gy_v3(0.5, 0.5, 0.5), 1e-3);
    const rec_item *hero = find_at(&r, REC_BOX, HERO_AT, 0.05);
    assert_v3_near(hero->size, gy_v3(0.3, 0.9, 0.3), 1e-3);
    const rec_item *ground = find_at(&r, REC_BOX, gy_v3(0, -0.5, 0), 1e-3);
    assert_v3_near(ground->size, gy_v3(20, 0.5, 20), 1e-3);
    for (uint32_t i = 0; i < r.count; i++)
        assert_true(same_color(r.items[i].color, d.palette.bounds));

    /* Trees: 5 static leaves (ground, sensor, cylinder, hull, mesh) and 4 moving ones (ball,
     * sleeper, hero, bob), one item per leaf: 2n - 1 nodes per tree. */
    d = recording(&r, GY_DEBUG_DRAW_TREE);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    uint32_t fixed = 0, moving = 0;
    gy_vec3 fixed_lo = gy_v3(INFINITY, INFINITY, INFINITY), fixed_hi = gy_v3_neg(fixed_lo);
    for (uint32_t i = 0; i < r.count; i++) {
        const rec_item *it = &r.items[i];
        assert_int_equal(it->kind, REC_BOX);
        if (same_color(it->color, d.palette.tree_static)) {
            fixed++;
            fixed_lo = gy_v3_min(fixed_lo, gy_v3_sub(it->pose.position, it->size));
            fixed_hi = gy_v3_max(fixed_hi, gy_v3_add(it->pose.position, it->size));
        } else {
            assert_true(same_color(it->color, d.palette.tree_moving));
            moving++;
        }
    }
    assert_int_equal(fixed, 9);
    assert_int_equal(moving, 7);
    /* The static root spans the ground and everything static above it (the sensor at y 5 ± 1). */
    assert_near(fixed_lo.x, -20.0, 1e-3);
    assert_near(fixed_hi.x, 20.0, 1e-3);
    assert_near(fixed_lo.y, -1.0, 1e-3);
    assert_near(fixed_hi.y, 6.0, 1e-3);
    tear_down(&s);
}

static void test_debug_draw_contacts_points_and_normals(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    gy_world_stats ws;
    gy_world_get_stats(s.w, &ws);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_CONTACTS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    /* One point and one normal per touching pair the World holds: the ball and the sleeper on the
     * ground at least. */
    assert_true(ws.touching_pairs >= 2);
    assert_int_equal(r.by_kind[REC_POINT], ws.touching_pairs);
    assert_int_equal(r.by_kind[REC_SEGMENT], ws.touching_pairs);
    assert_int_equal(r.count, 2 * ws.touching_pairs);
    bool ball_contact = false;
    for (uint32_t i = 0; i + 1 < r.count; i += 2) {
        const rec_item *p = &r.items[i], *n = &r.items[i + 1];
        assert_int_equal(p->kind, REC_POINT);
        assert_int_equal(n->kind, REC_SEGMENT);
        assert_v3_near(n->a, p->a, 0.0);
        assert_near(gy_v3_len(gy_v3_sub(n->b, n->a)), d.normal_length, 1e-6);
        assert_true(same_color(p->color, d.palette.contact));
        /* The ball's pair: its deepest point under the ball, the normal vertical. */
        if (fabs(p->a.x) < 0.05 && fabs(p->a.z) < 0.05 && fabs(p->a.y) < 0.05) {
            ball_contact = true;
            assert_near(fabs(n->b.y - n->a.y), d.normal_length, 1e-3);
        }
    }
    assert_true(ball_contact);
    tear_down(&s);
}

static void test_debug_draw_joint_anchor_axis_and_limits(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_JOINTS | GY_DEBUG_DRAW_LABELS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    /* The anchor, a's line to it, the axis, the limit arc (16 segments) and its zero spoke. */
    assert_int_equal(r.by_kind[REC_POINT], 1);
    assert_int_equal(r.by_kind[REC_SEGMENT], 2 + 16 + 1);
    assert_int_equal(r.by_kind[REC_TEXT], 1);
    for (uint32_t i = 0; i < r.count; i++) {
        const rec_item *it = &r.items[i];
        if (it->kind == REC_POINT) {
            assert_v3_near(it->a, PIVOT_AT, 0.02);
            assert_true(same_color(it->color, d.palette.joint));
        } else if (it->kind == REC_TEXT) {
            assert_string_equal(it->text, "hinge");
            assert_v3_near(it->a, PIVOT_AT, 0.02);
        }
    }
    uint32_t axis = 0, arc = 0;
    for (uint32_t i = 0; i < r.count; i++) {
        const rec_item *it = &r.items[i];
        if (it->kind != REC_SEGMENT)
            continue;
        gy_vec3 v = gy_v3_sub(it->b, it->a);
        if (same_color(it->color, d.palette.joint) && fabs(v.z) > 0.49) {
            axis++; /* along z from the pivot, axis_length long */
            assert_v3_near(it->a, PIVOT_AT, 0.02);
            assert_near(gy_v3_len(v), d.axis_length, 1e-9);
        }
        if (same_color(it->color, d.palette.joint_limit)) {
            /* Arc and spoke lie in the hinge's plane, within half an axis length of the pivot. */
            arc++;
            assert_near(it->a.z, PIVOT_AT.z, 0.02);
            assert_near(it->b.z, PIVOT_AT.z, 0.02);
            assert_true(gy_v3_len(gy_v3_sub(it->b, PIVOT_AT)) <= 0.5 * d.axis_length + 0.02);
        }
    }
    assert_int_equal(axis, 1);
    assert_int_equal(arc, 17);
    tear_down(&s);
}

static void test_debug_draw_character_capsule_and_ground(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_CHARACTERS | GY_DEBUG_DRAW_LABELS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_int_equal(r.by_kind[REC_CAPSULE], 1);
    assert_int_equal(r.by_kind[REC_SEGMENT], 1);
    assert_int_equal(r.by_kind[REC_TEXT], 1);
    gy_pose hero = wfx_world_pose(s.w, s.hero);
    const rec_item *cap = find_at(&r, REC_CAPSULE, hero.position, 1e-6);
    assert_near(cap->size.x, 0.3, 1e-12);
    assert_near(cap->size.y, 1.8, 1e-12);
    assert_false(cap->solid);
    assert_true(same_color(cap->color, d.palette.grounded));
    for (uint32_t i = 0; i < r.count; i++) {
        const rec_item *it = &r.items[i];
        if (it->kind == REC_SEGMENT) {
            /* The ground normal, up from the capsule's lowest point on the floor. */
            assert_v3_near(it->a, gy_v3(hero.position.x, hero.position.y - 0.9, hero.position.z),
                           1e-6);
            assert_near(it->a.y, 0.0, 0.05);
            assert_v3_near(gy_v3_sub(it->b, it->a), gy_v3(0, d.normal_length, 0), 1e-3);
        } else if (it->kind == REC_TEXT) {
            assert_string_equal(it->text, "walkable");
        }
    }
    /* A jump: airborne, no ground normal. */
    assert_result(gy_character_jump(s.w, s.hero, 5.0), GY_OK);
    wfx_tick(s.w, 5);
    assert_false(wfx_state(s.w, s.hero).grounded);
    d = recording(&r, GY_DEBUG_DRAW_CHARACTERS | GY_DEBUG_DRAW_LABELS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_int_equal(r.by_kind[REC_CAPSULE], 1);
    assert_int_equal(r.by_kind[REC_SEGMENT], 0);
    assert_true(same_color(r.items[0].color, d.palette.airborne));
    assert_string_equal(r.items[1].text, "airborne");
    tear_down(&s);
}

static void test_debug_draw_refuses_bad_definitions_and_draws_nothing(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    wfx_tick(s.w, 2);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_ALL);
    assert_result(gy_world_debug_draw(NULL, &d), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_world_debug_draw(s.w, NULL), GY_ERR_INVALID_ARGUMENT);
    d.flags = GY_DEBUG_DRAW_ALL + 1u;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_INVALID_ARGUMENT);
    /* Each callback a set flag needs. */
    static const struct {
        uint32_t flags;
        size_t offset;
    } needs[] = {
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, sphere)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, box)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, capsule)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, cylinder)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, plane)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, hull)},
        {GY_DEBUG_DRAW_COLLIDERS, offsetof(gy_debug_draw, mesh)},
        {GY_DEBUG_DRAW_BOUNDS, offsetof(gy_debug_draw, box)},
        {GY_DEBUG_DRAW_TREE, offsetof(gy_debug_draw, box)},
        {GY_DEBUG_DRAW_CONTACTS, offsetof(gy_debug_draw, point)},
        {GY_DEBUG_DRAW_CONTACTS, offsetof(gy_debug_draw, segment)},
        {GY_DEBUG_DRAW_JOINTS, offsetof(gy_debug_draw, point)},
        {GY_DEBUG_DRAW_JOINTS, offsetof(gy_debug_draw, segment)},
        {GY_DEBUG_DRAW_CHARACTERS, offsetof(gy_debug_draw, capsule)},
        {GY_DEBUG_DRAW_CHARACTERS, offsetof(gy_debug_draw, segment)},
        {GY_DEBUG_DRAW_LABELS, offsetof(gy_debug_draw, text)},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        d = recording(&r, GY_DEBUG_DRAW_ALL);
        memset((char *)&d + needs[i].offset, 0, sizeof d.sphere);
        assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_INVALID_ARGUMENT);
        assert_int_equal(r.count, 0);
        /* Without the flag that needs it, the callback may be missing. */
        d.flags = GY_DEBUG_DRAW_ALL & ~needs[i].flags;
        if (needs[i].offset == offsetof(gy_debug_draw, box))
            d.flags &=
                ~(uint32_t)(GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_BOUNDS | GY_DEBUG_DRAW_TREE);
        else if (needs[i].offset == offsetof(gy_debug_draw, capsule))
            d.flags &= ~(uint32_t)(GY_DEBUG_DRAW_COLLIDERS | GY_DEBUG_DRAW_CHARACTERS);
        else if (needs[i].offset == offsetof(gy_debug_draw, segment))
            d.flags &= ~(uint32_t)(GY_DEBUG_DRAW_CONTACTS | GY_DEBUG_DRAW_JOINTS |
                                   GY_DEBUG_DRAW_CHARACTERS);
        else if (needs[i].offset == offsetof(gy_debug_draw, point))
            d.flags &= ~(uint32_t)(GY_DEBUG_DRAW_CONTACTS | GY_DEBUG_DRAW_JOINTS);
        assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    }
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    d.normal_length = NAN;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_NON_FINITE);
    d.normal_length = 0.0;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_INVALID_ARGUMENT);
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    d.axis_length = -1.0;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_INVALID_ARGUMENT);
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    d.point_size = INFINITY;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_NON_FINITE);
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    d.palette.label.a = NAN;
    assert_result(gy_world_debug_draw(s.w, &d), GY_ERR_NON_FINITE);
    assert_int_equal(r.count, 0);
    /* No flags: nothing to draw, nothing needed. */
    gy_debug_draw none = gy_default_debug_draw();
    none.flags = 0;
    assert_result(gy_world_debug_draw(s.w, &none), GY_OK);
    tear_down(&s);
}

static void test_debug_draw_with_physics_stopped_draws_nothing(void **state)
{
    (void)state;
    scene s;
    build(&s, NULL);
    settle(&s);
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_ALL);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_true(r.count > 0);
    assert_result(gy_world_stop_physics(s.w), GY_OK);
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_int_equal(r.count, 0);
    /* Restarted: drawn again once the new bodies are published. */
    assert_result(gy_world_start_physics(s.w), GY_OK);
    wfx_tick(s.w, 3);
    d = recording(&r, GY_DEBUG_DRAW_COLLIDERS);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    assert_int_equal(r.count, 10);
    tear_down(&s);
}

/* ---- no waiting for a step ------------------------------------------------------------------- */

/* A host character hook that, once armed, holds the physics thread inside a step (the simulation
 * lock held) until released, or until its own timeout passes. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool armed, holding, released, timed_out;
} gate;

static void gate_hook(void *ctx, const gy_physics_step_context *sc)
{
    (void)sc;
    gate *g = ctx;
    pthread_mutex_lock(&g->mu);
    if (g->armed && !g->released) {
        g->holding = true;
        pthread_cond_broadcast(&g->cv);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 20;
        while (!g->released && !g->timed_out)
            if (pthread_cond_timedwait(&g->cv, &g->mu, &until) == ETIMEDOUT)
                g->timed_out = true;
        g->holding = false;
    }
    pthread_mutex_unlock(&g->mu);
}

static void test_debug_draw_during_a_held_step_does_not_wait(void **state)
{
    (void)state;
    gate g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    scene s;
    gy_world_def c = wfx_config(NULL, false);
    c.physics.move_characters = gate_hook;
    c.physics.character_ctx = &g;
    build(&s, &c);
    /* Real time: tick until the snapshot holds every body (drawn colliders come from it). */
    recorder r;
    gy_debug_draw d = recording(&r, GY_DEBUG_DRAW_ALL);
    double deadline = gy_test_now() + 20.0;
    do {
        assert_result(gy_world_tick(s.w, WFX_DT), GY_OK);
        d = recording(&r, GY_DEBUG_DRAW_COLLIDERS);
        assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    } while (r.count < 10 && gy_test_now() < deadline);
    assert_int_equal(r.count, 10);

    /* Hold the physics thread inside its next step. */
    pthread_mutex_lock(&g.mu);
    g.armed = true;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (!g.holding && !g.timed_out)
        if (pthread_cond_timedwait(&g.cv, &g.mu, &until) == ETIMEDOUT)
            break;
    bool held = g.holding;
    pthread_mutex_unlock(&g.mu);
    assert_true(held);

    /* Drawn in full while the step is held: the call returns with the gate still shut. */
    d = recording(&r, GY_DEBUG_DRAW_ALL);
    assert_result(gy_world_debug_draw(s.w, &d), GY_OK);
    pthread_mutex_lock(&g.mu);
    bool still_held = g.holding && !g.timed_out;
    g.released = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    assert_true(still_held);
    assert_true(r.by_kind[REC_SPHERE] + r.by_kind[REC_BOX] + r.by_kind[REC_CAPSULE] >= 6);
    assert_int_equal(r.by_kind[REC_HULL], 1);
    assert_int_equal(r.by_kind[REC_MESH], 1);
    tear_down(&s);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
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
        cmocka_unit_test(test_debug_draw_colliders_in_their_shapes_and_colours),
        cmocka_unit_test(test_debug_draw_bounds_and_tree_nodes_enclose_the_colliders),
        cmocka_unit_test(test_debug_draw_contacts_points_and_normals),
        cmocka_unit_test(test_debug_draw_joint_anchor_axis_and_limits),
        cmocka_unit_test(test_debug_draw_character_capsule_and_ground),
        cmocka_unit_test(test_debug_draw_refuses_bad_definitions_and_draws_nothing),
        cmocka_unit_test(test_debug_draw_with_physics_stopped_draws_nothing),
        cmocka_unit_test(test_debug_draw_during_a_held_step_does_not_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
