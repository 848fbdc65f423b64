/* A small host built against an installed Gyre (docs/embedding.md shows it whole):
 *
 *   cc -std=c11 host_example.c $(pkg-config --cflags --libs gyre) -o host_example
 *
 * A World whose physics thread runs in real time; a ground, three crates and a ball made with
 * the four-line body; a host loop at about 60 frames per second that reads render poses and
 * prints collisions as the game thread receives them; halfway through, gravity flips for a
 * moment and the ball gets heavier. Exits 0 only when crates landed and nothing leaked. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime and nanosleep under -std=c11 */
#include <stdio.h>
#include <time.h>

#include <gyre/gyre.h>

/* The game's own objects; each body's user data is its index here. */
typedef struct game_object {
    const char *name;
    gy_entity entity;
    unsigned landings;
} game_object;

static game_object objects[5];

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

/* Runs on this (the game) thread inside gy_world_tick, never on the physics thread. */
static void on_collision(void *ctx, gy_world *world, const gy_collision_event *e)
{
    (void)ctx;
    if (e->kind != GY_COLLISION_ENTER)
        return; /* STAY comes every tick while touching; EXIT when they part */
    game_object *self = &objects[gy_body_get_user_data(world, e->self)];
    uint64_t other = gy_body_get_user_data(world, e->other);
    self->landings++;
    printf("tick %4llu  %-7s hits %-7s at (%5.2f, %5.2f, %5.2f), impulse %6.1f N s\n",
           (unsigned long long)e->tick, self->name, objects[other].name, e->point.x, e->point.y,
           e->point.z, e->normal_impulse);
}

/* One body with one shape: the four-line path, plus the game's bookkeeping. */
static gy_entity spawn(gy_world *world, uint64_t index, const char *name, gy_body_type type,
                       gy_shape shape, gy_vec3 position)
{
    gy_scene_collider collider = gy_default_scene_collider(shape);
    gy_physics_component_def desc = gy_default_physics_component_def_for(type, &collider);
    desc.body.user_data = index;
    gy_entity e;
    gy_result r = gy_body_create(world, position, &desc, &e);
    if (r != GY_OK) {
        fprintf(stderr, "%s: %s\n", name, gy_result_message(r));
        return gy_entity_null();
    }
    objects[index] = (game_object){name, e, 0};
    if (type != GY_BODY_STATIC) /* the ground would only repeat each event from its side */
        gy_entity_set_collision_callback(world, e, on_collision, NULL);
    return e;
}

int main(void)
{
    gy_world_def config = gy_default_world_def(); /* real time, 60 Hz, the first adapter */
    gy_world *world;
    gy_result r = gy_world_create(&config, &world);
    if (r != GY_OK) {
        fprintf(stderr, "gy_world_create: %s\n", gy_result_message(r));
        return 1;
    }
    spawn(world, 0, "ground", GY_BODY_STATIC, gy_box(gy_v3(40, 1, 40)), gy_v3(0, -0.5, 0));
    spawn(world, 1, "crate-1", GY_BODY_DYNAMIC, gy_box(gy_v3(1, 1, 1)), gy_v3(-2, 3, 0));
    spawn(world, 2, "crate-2", GY_BODY_DYNAMIC, gy_box(gy_v3(1, 1, 1)), gy_v3(0, 4, 0));
    spawn(world, 3, "crate-3", GY_BODY_DYNAMIC, gy_box(gy_v3(1, 1, 1)), gy_v3(2, 5, 0));
    gy_entity ball = spawn(world, 4, "ball", GY_BODY_DYNAMIC, gy_sphere(0.4), gy_v3(-6, 1, 0));

    /* The host loop: game logic, gy_world_tick, then draw from the render poses. */
    const double frame = 1.0 / 60.0;
    double start = now_s(), last = start;
    int frames = 0;
    /* Three seconds, or longer (up to ten) on a machine too busy to land every crate by then. */
    bool landed = false;
    while (now_s() - start < 3.0 || (!landed && now_s() - start < 10.0)) {
        double t = now_s();
        double dt = t - last;
        last = t;
        if (frames == 30)
            gy_body_apply_impulse(world, ball, gy_v3(200, 0, 0)); /* 200 N s on a 268 kg ball */
        if (frames == 90) {
            gy_world_set_gravity(world, gy_v3(0, 9.81, 0)); /* everything wakes and lifts */
            gy_body_set_mass(world, ball, 1000.0);
        }
        if (frames == 100)
            gy_world_set_gravity(world, gy_v3(0, -9.81, 0));
        if ((r = gy_world_tick(world, dt)) != GY_OK) {
            fprintf(stderr, "gy_world_tick: %s\n", gy_result_message(r));
            break;
        }
        /* A renderer would draw every object at its render pose. */
        for (int i = 1; i < 5; i++) {
            gy_pose pose;
            gy_entity_get_render_pose(world, objects[i].entity, &pose);
            if (frames % 60 == 0)
                printf("frame %3d  %-7s at (%5.2f, %5.2f, %5.2f)\n", frames, objects[i].name,
                       pose.position.x, pose.position.y, pose.position.z);
        }
        landed = objects[1].landings > 0 && objects[2].landings > 0 && objects[3].landings > 0;
        frames++;
        sleep_s(frame - (now_s() - t));
    }

    gy_world_teardown report;
    r = gy_world_destroy(world, &report);
    printf("%d frames; teardown: %s, adapter objects left: %u%s\n", frames, gy_result_message(r),
           report.adapter_live_objects, report.adapter_checked ? "" : " (not checked)");
    bool clean = r == GY_OK && report.adapter_checked && report.adapter_live_objects == 0;
    return clean && landed ? 0 : 1;
}
