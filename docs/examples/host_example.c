/* A small host program built against an installed Gyre (see docs/embedding.md):
 *
 *   cc host_example.c $(pkg-config --cflags --libs gyre) -o host_example
 *
 * It creates a World whose physics thread runs in real time, a ground, a few crates and a ball, and
 * a character that walks across the ground; runs its host loop for a couple of seconds at about
 * 60 frames per second, printing collisions as the game thread receives them; then tears the World
 * down and exits 0 only if nothing leaked. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gyre/gyre.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    if (s <= 0.0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static const char *kind_name(gy_collision_kind k)
{
    return k == GY_COLLISION_ENTER ? "enter" : k == GY_COLLISION_STAY ? "stay" : "exit";
}

/* Called on this (the game) thread while gy_world_tick drains the physics thread's replies. */
static void on_collision(void *ctx, gy_world *world, const gy_collision_event *e)
{
    unsigned *enters_and_exits = ctx;
    if (e->kind == GY_COLLISION_STAY)
        return; /* one per touching pair per tick: too chatty to print */
    enters_and_exits[e->kind == GY_COLLISION_EXIT]++;
    /* At teardown the entities are already gone: their handles no longer name anything. */
    const char *self = gy_entity_name(world, e->self);
    const char *other = gy_entity_name(world, e->other);
    printf("tick %4llu  %-8s %-5s %-8s at (%5.2f, %5.2f, %5.2f)%s\n", (unsigned long long)e->tick,
           self != NULL ? self : "(gone)", kind_name(e->kind), other != NULL ? other : "(gone)",
           e->point.x, e->point.y, e->point.z, e->synthesized ? "  [body released]" : "");
}

/* One collider of `shape` on a fresh entity named `name` at `position`. */
static gy_entity spawn(gy_world *world, const char *name, gy_vec3 position, gy_body_type type,
                       gy_shape shape, bool character)
{
    gy_entity_def ed = gy_default_entity_def();
    ed.name = name;
    ed.position = position;
    gy_entity e;
    if (gy_entity_create(world, &ed, &e) != GY_OK)
        return gy_entity_null();
    gy_scene_collider collider;
    memset(&collider, 0, sizeof collider);
    collider.def = gy_default_collider_def();
    collider.def.shape = shape;
    gy_physics_desc desc = gy_default_physics_desc();
    desc.body_type = type;
    desc.is_character = character;
    desc.colliders = &collider; /* copied by gy_body_add */
    desc.collider_count = 1;
    gy_result r = gy_body_add(world, e, &desc);
    if (r != GY_OK)
        fprintf(stderr, "%s: %s\n", name, gy_result_message(r));
    return e;
}

int main(void)
{
    gy_world_config config = gy_default_world_config(); /* real time, 60 Hz, ODE */
    gy_world *world;
    gy_result r = gy_world_create(&config, &world);
    if (r != GY_OK) {
        fprintf(stderr, "gy_world_create: %s\n", gy_result_message(r));
        return 1;
    }

    gy_shape box = {.type = GY_SHAPE_BOX, .box_size = {40, 1, 40}};
    spawn(world, "ground", gy_v3(0, -0.5, 0), GY_BODY_STATIC, box, false);
    unsigned counts[2] = {0, 0};
    gy_shape crate = {.type = GY_SHAPE_BOX, .box_size = {1, 1, 1}};
    const char *crate_names[3] = {"crate-1", "crate-2", "crate-3"};
    for (int i = 0; i < 3; i++) {
        gy_entity c = spawn(world, crate_names[i], gy_v3(3.0 + 1.5 * i, 2.0 + i, 0),
                            GY_BODY_DYNAMIC, crate, false);
        gy_entity_set_collision_callback(world, c, on_collision, counts);
    }
    gy_shape sphere = {.type = GY_SHAPE_SPHERE, .radius = 0.4};
    gy_entity ball = spawn(world, "ball", gy_v3(-3, 4, 0), GY_BODY_DYNAMIC, sphere, false);
    gy_entity_set_collision_callback(world, ball, on_collision, counts);
    gy_shape capsule = {.type = GY_SHAPE_CAPSULE, .radius = 0.3, .height = 1.8};
    gy_entity hero = spawn(world, "hero", gy_v3(-6, 0.95, 0), GY_BODY_KINEMATIC, capsule, true);

    /* The host loop: game logic, then gy_world_tick; render from the interpolated poses. */
    const double frame = 1.0 / 60.0;
    double last = now_s(), start = last;
    int frames = 0;
    /* Two seconds, or longer (up to ten) on a machine too busy to land a crate in that time. */
    while (now_s() - start < 2.0 || (counts[0] == 0 && now_s() - start < 10.0)) {
        double t = now_s();
        double dt = t - last;
        last = t;
        /* Game logic: walk right; kick the ball once; jump once. */
        gy_character_set_intent(world, hero, gy_v3(2.0, 0, 0), 0);
        if (frames == 30)
            gy_body_apply_impulse(world, ball, gy_v3(150, 0, 0));
        if (frames == 60)
            gy_character_jump(world, hero, 4.0);
        if ((r = gy_world_tick(world, dt)) != GY_OK) {
            fprintf(stderr, "gy_world_tick: %s\n", gy_result_message(r));
            break;
        }
        gy_pose drawn;
        gy_entity_get_render_pose(world, hero, &drawn); /* what a renderer would draw */
        if (frames % 30 == 0) {
            gy_physics_state s;
            gy_body_get_state(world, hero, &s);
            printf("frame %3d  hero at (%.2f, %.2f, %.2f) %s\n", frames, drawn.position.x,
                   drawn.position.y, drawn.position.z, s.grounded ? "grounded" : "airborne");
        }
        frames++;
        sleep_s(frame - (now_s() - t));
    }

    gy_world_teardown report;
    r = gy_world_destroy(world, &report);
    printf("%d frames, %u enters, %u exits; teardown: %s, adapter objects left: %u%s\n", frames,
           counts[0], counts[1], gy_result_message(r), report.adapter_live_objects,
           report.adapter_checked ? "" : " (not checked)");
    bool clean = r == GY_OK && report.adapter_checked && report.adapter_live_objects == 0 &&
                 report.geometries_reclaimed == 0 && counts[0] > 0 && counts[0] == counts[1];
    return clean ? 0 : 1;
}
