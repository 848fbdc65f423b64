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
    gy_world_def c = wfx_config(&sw->ta, true);
    assert_result(gy_scene_get_world_def(sw->scene, backend_name, &c), GY_OK);
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

/* How far a joint stands past its limits (rad, 0 within them): a hinge's angle past its stops,
 * a ball's swing past its cone and its twist past its twist limits, whichever is larger. */
static double limit_excess(const gy_joint_def *d, const gy_joint_state *st)
{
    double e = 0.0;
    if (d->type == GY_JOINT_HINGE && d->has_limits)
        e = fmax(d->limit_min - st->position, st->position - d->limit_max);
    if (d->type == GY_JOINT_BALL && d->has_cone)
        e = fmax(e, st->position - d->cone_angle);
    if (d->type == GY_JOINT_BALL && d->has_twist_limits)
        e = fmax(e, fmax(d->twist_min - st->twist, st->twist - d->twist_max));
    return fmax(e, 0.0);
}

/* The ragdoll shoved down the stairs: every joint is read after every tick of its 8 s, and no
 * limit is ever passed by more than 2 degrees. The scene's impulses are applied at their time. */
static void test_world_joints_ragdoll_never_passes_a_limit_by_more_than_two_degrees(void **state)
{
    (void)state;
    scene_world sw;
    open_scene(&sw, "ragdoll.json");
    const gy_scene *s = sw.scene;
    double worst = 0.0;
    uint32_t worst_joint = 0, worst_tick = 0, next_action = 0;
    for (uint32_t tick = 0; tick < 480; tick++) {
        double t = tick * WFX_DT;
        for (; next_action < s->action_count && s->actions[next_action].at <= t + 1e-9;
             next_action++) {
            const gy_scene_action *a = &s->actions[next_action];
            if (a->type == GY_SCENE_ACTION_APPLY_IMPULSE)
                assert_result(
                    gy_body_apply_impulse(sw.world, sw.inst->entities[a->entity], a->impulse.value),
                    GY_OK);
        }
        wfx_tick(sw.world, 1);
        for (uint32_t i = 0; i < s->joint_count; i++) {
            gy_joint_state st;
            gy_result r = gy_joint_get_state(sw.world, sw.inst->joints[i], &st);
            if (r == GY_ERR_INACTIVE)
                continue; /* no report yet */
            assert_result(r, GY_OK);
            double e = limit_excess(&s->joints[i].def, &st);
            if (e > worst) {
                worst = e;
                worst_joint = i;
                worst_tick = tick + 1u;
            }
        }
    }
    printf("    ragdoll on %s: worst limit excess %.2f deg (%s, tick %u)\n", backend_name,
           worst / DEG, s->joints[worst_joint].name, worst_tick);
    assert_between(worst, 0.0, 2.0 * DEG);
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
        cmocka_unit_test(test_world_joints_ragdoll_never_passes_a_limit_by_more_than_two_degrees),
    };
    return cmocka_run_group_tests_name("world joints", tests, NULL, NULL);
}
