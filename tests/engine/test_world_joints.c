/* Joint motors, limits and state through the World (the command path to the physics thread and
 * the per-tick state replies back), on the sample scenes, for one adapter named on the command
 * line (argv[1]); argv[2] is the folder of the sample scenes. */
#include "test_world_fixture.h"

#define DEG (GY_PI / 180.0)

static const char *backend_name;
static const char *scenes_dir;

typedef struct scene_world {
    gy_test_allocator ta;
    gy_scene *scene;
    gy_world *world;
    gy_scene_instance *inst;
} scene_world;

/* The sample scene `file` in a lockstep World on the adapter under test. */
static void open_scene(scene_world *sw, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", scenes_dir, file);
    gy_test_allocator_init(&sw->ta);
    assert_result(gy_scene_load_file(path, NULL, &sw->scene, NULL), GY_OK);
    gy_world_config c = wfx_config(&sw->ta, true);
    assert_result(gy_scene_world_config(sw->scene, backend_name, &c), GY_OK);
    sw->world = wfx_world_with(&c);
    assert_result(gy_scene_instantiate(sw->world, sw->scene, gy_v3(0, 0, 0), NULL, &sw->inst, NULL),
                  GY_OK);
}

static void close_scene(scene_world *sw)
{
    gy_scene_instance_free(sw->inst);
    wfx_destroy(sw->world, &sw->ta);
    gy_scene_free(sw->scene);
}

static int32_t joint_index(const gy_scene *s, const char *name)
{
    for (uint32_t i = 0; i < s->joint_count; i++)
        if (s->joints[i].name != NULL && strcmp(s->joints[i].name, name) == 0)
            return (int32_t)i;
    fail_msg("no joint named %s", name);
    return -1;
}

static void test_world_joints_door_servo_opens_and_closes_through_set_motor(void **state)
{
    (void)state;
    scene_world sw;
    open_scene(&sw, "door_and_turret.json");
    gy_joint door = sw.inst->joints[joint_index(sw.scene, "door_hinge")];
    gy_joint turret = sw.inst->joints[joint_index(sw.scene, "turret_drive")];
    gy_joint_state st;
    wfx_tick(sw.world, 180);
    /* The servo opens the door to 90 degrees (0.01 rad) and holds it still. */
    assert_result(gy_joint_get_state(sw.world, door, &st), GY_OK);
    assert_near(st.position, 90.0 * DEG, 0.01);
    assert_near(st.velocity, 0.0, 0.01);
    /* The turret turns at its motor's 1 rad/s. */
    assert_result(gy_joint_get_state(sw.world, turret, &st), GY_OK);
    assert_near(st.velocity, 1.0, 0.01);

    gy_joint_motor m;
    assert_result(gy_joint_get_motor(sw.world, door, &m), GY_OK);
    assert_int_equal(m.mode, GY_MOTOR_POSITION);
    assert_near(m.max_force, 200.0, 0.0);
    m.target = 0.0;
    assert_result(gy_joint_set_motor(sw.world, door, &m), GY_OK);
    gy_joint_motor reverse = {GY_MOTOR_VELOCITY, -2.0, 2000.0};
    assert_result(gy_joint_set_motor(sw.world, turret, &reverse), GY_OK);
    /* Bad motors change nothing. */
    gy_joint_motor bad = {GY_MOTOR_VELOCITY, NAN, 10.0};
    assert_result(gy_joint_set_motor(sw.world, door, &bad), GY_ERR_NON_FINITE);
    bad.target = 1.0;
    bad.max_force = 0.0;
    assert_result(gy_joint_set_motor(sw.world, door, &bad), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_joint_set_motor(sw.world, door, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_joint_get_state(sw.world, door, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_joint_get_motor(sw.world, door, &m), GY_OK);
    assert_near(m.target, 0.0, 0.0);
    wfx_tick(sw.world, 180);
    assert_result(gy_joint_get_state(sw.world, door, &st), GY_OK);
    assert_near(st.position, 0.0, 0.01);
    assert_result(gy_joint_get_state(sw.world, turret, &st), GY_OK);
    assert_near(st.velocity, -2.0, 0.01);
    close_scene(&sw);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s BACKEND SCENES_DIR [TEST_NAME_FILTER]\n", argv[0]);
        return 2;
    }
    backend_name = argv[1];
    scenes_dir = argv[2];
    if (argc > 3)
        cmocka_set_test_filter(argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_joints_door_servo_opens_and_closes_through_set_motor),
    };
    return cmocka_run_group_tests_name("world joints", tests, NULL, NULL);
}
