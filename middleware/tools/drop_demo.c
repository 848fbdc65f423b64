/* A first look at Gyre's middleware: drop a box onto the ground through an adapter (default "ode")
 * and print its height once per simulated second. Usage: gyre-drop-demo [BACKEND] [SECONDS] */
#include <stdio.h>
#include <stdlib.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "ode";
    int seconds = argc > 2 ? atoi(argv[2]) : 5;
    if (seconds <= 0 || seconds > 3600) {
        fprintf(stderr, "gyre-drop-demo: SECONDS must be 1..3600 (got %s)\n", argv[2]);
        return 2;
    }
    const gy_backend *be = gy_backend_find(name);
    if (be == NULL) {
        fprintf(stderr, "gyre-drop-demo: unknown backend '%s'\n", name);
        return 2;
    }
    gy_backend_world_def wd = gy_default_backend_world_def();
    gy_backend_world *w = NULL;
    gy_result r = be->world_create(&wd, &w);
    if (r == GY_OK)
        r = be->bind_thread(w);
    if (r != GY_OK) {
        fprintf(stderr, "gyre-drop-demo: %s\n", gy_result_message(r));
        return 1;
    }

    gy_body_def ground = gy_default_body_def();
    ground.type = GY_MOTION_STATIC;
    gy_collider_def plane = gy_default_collider_def();
    plane.shape.type = GY_SHAPE_PLANE;
    plane.shape.normal = gy_v3(0, 1, 0);
    gy_body_def box = gy_default_body_def();
    box.pose.position = gy_v3(0, 10, 0);
    gy_collider_def cube = gy_default_collider_def();
    cube.shape.type = GY_SHAPE_BOX;
    cube.shape.box_size = gy_v3(1, 1, 1);
    gy_body_id ground_id, box_id;
    r = be->body_create(w, &ground, &plane, 1, &ground_id, NULL);
    if (r == GY_OK)
        r = be->body_create(w, &box, &cube, 1, &box_id, NULL);
    if (r != GY_OK) {
        fprintf(stderr, "gyre-drop-demo: body create failed: %s\n", gy_result_message(r));
        be->world_destroy(w);
        return 1;
    }

    printf("backend %s: a 1 m box dropped from 10 m onto a plane\n", be->name);
    const int hz = 60;
    for (int tick = 1; tick <= seconds * hz; tick++) {
        be->step(w, 1.0 / hz);
        if (tick % hz == 0) {
            gy_body_state s;
            be->body_get_state(w, box_id, &s);
            printf("t = %2d s  height %.3f m  %s\n", tick / hz, s.pose.position.y,
                   s.awake ? "awake" : "asleep");
        }
    }
    be->body_release(w, box_id);
    be->body_release(w, ground_id);
    gy_backend_counters c;
    be->get_counters(w, &c);
    printf("live objects after release: %u\n", c.live_objects);
    be->unbind_thread(w);
    be->world_destroy(w);
    return c.live_objects == 0 ? 0 : 1;
}
