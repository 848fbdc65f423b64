/* The scene script: timed actions applied by the game thread, and the checks (`expect`,
 * `expect_event`) whose outcome goes to the report and the exit code. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"
#include "gyre/math.h"

static const char *const k_axes[3] = {"x", "y", "z"};

uint64_t gy_cli_tick_for(const gy_cli_runner *R, double at)
{
    /* The small slack keeps `at` values that are whole ticks (0.5 s at 60 Hz) from landing one
     * tick late through rounding. */
    double ticks = ceil(at * (double)R->step_hz - 1e-6);
    return ticks <= 0.0 ? 0u : (uint64_t)ticks;
}

static double time_of(const gy_cli_runner *R, uint64_t tick)
{
    return (double)tick * R->dt;
}

static gy_entity root_entity(const gy_cli_runner *R, int32_t index)
{
    return index >= 0 && (uint32_t)index < R->instance->entity_count
               ? R->instance->entities[index]
               : gy_entity_null();
}

static const char *root_name(const gy_cli_runner *R, int32_t index)
{
    return index >= 0 && (uint32_t)index < R->scene->entity_count ? R->scene->entities[index].name
                                                                   : "?";
}

/* ---- outcomes -------------------------------------------------------------------------------- */

static gy_cli_expect *new_expect(gy_cli_runner *R, const gy_scene_action *a, const char *entity)
{
    if (gy_array_reserve(R->alloc, (void **)&R->expects, &R->expect_capacity,
                         R->expect_count + 1u, sizeof *R->expects) != GY_OK) {
        fprintf(stderr, "gyre: out of memory recording an expect\n");
        R->expect_failed = true;
        return NULL;
    }
    gy_cli_expect *x = &R->expects[R->expect_count++];
    memset(x, 0, sizeof *x);
    x->at = a->at;
    x->entity = entity;
    x->action = a;
    x->first_event_t = NAN;
    if (a->type == GY_SCENE_ACTION_EXPECT_EVENT) {
        x->a = root_name(R, a->expect_event.a);
        x->b = a->expect_event.b >= 0 ? root_name(R, a->expect_event.b) : NULL;
    }
    return x;
}

static void fail_line(gy_cli_runner *R, const gy_scene_action *a, const gy_cli_expect *x)
{
    char at[64];
    gy_cli_format_number(at, sizeof at, a->at, false);
    fprintf(stderr, "gyre: expect failed: script[%u] at %s s (t = ", a->index, at);
    gy_cli_format_number(at, sizeof at, time_of(R, R->tick), false);
    fprintf(stderr, "%s s): %s\n", at, x->detail);
    R->expect_failed = true;
}

/* Appends printf-style text to the detail (truncating quietly: it is for people). */
static void detail_add(gy_cli_expect *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void detail_add(gy_cli_expect *x, const char *fmt, ...)
{
    size_t used = strlen(x->detail);
    if (used + 1 >= sizeof x->detail)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->detail + used, sizeof x->detail - used, fmt, ap);
    va_end(ap);
}

static void num(char *buf, size_t size, double v)
{
    gy_cli_format_number(buf, size, v, false);
}

/* Checks the given components of `actual` against `expected`; records the worst miss. */
static bool check_vector(gy_cli_expect *x, const char *entity, const char *what, gy_vec3 actual,
                         gy_vec3 expected, const bool set[3], double tol)
{
    const double act[3] = {actual.x, actual.y, actual.z};
    const double exp[3] = {expected.x, expected.y, expected.z};
    bool ok = true;
    char a[64], e[64], t[64], d[64];
    num(t, sizeof t, tol);
    for (int i = 0; i < 3; i++) {
        if (!set[i])
            continue;
        double off = fabs(act[i] - exp[i]);
        if (off <= tol && gy_is_finite(act[i]))
            continue;
        num(a, sizeof a, act[i]);
        num(e, sizeof e, exp[i]);
        num(d, sizeof d, off);
        detail_add(x, "%s'%s' %s.%s = %s, expected %s ± %s (off by %s)", x->detail[0] ? "; " : "", entity,
                   what, k_axes[i], a, e, t, d);
        ok = false;
    }
    return ok;
}

static void describe_vector(gy_cli_expect *x, const char *what, gy_vec3 v)
{
    const double c[3] = {v.x, v.y, v.z};
    detail_add(x, " %s (", what);
    for (int i = 0; i < 3; i++) {
        char b[64];
        num(b, sizeof b, c[i]);
        detail_add(x, "%s%s", i ? ", " : "", b);
    }
    detail_add(x, ")");
}

static void run_expect(gy_cli_runner *R, const gy_scene_action *a)
{
    const char *name = root_name(R, a->entity);
    gy_cli_expect *x = new_expect(R, a, name);
    if (x == NULL)
        return;
    gy_entity e = root_entity(R, a->entity);
    if (!gy_entity_is_valid(R->world, e)) {
        snprintf(x->detail, sizeof x->detail, "'%s' no longer exists (destroyed earlier)", name);
        fail_line(R, a, x);
        return;
    }
    bool ok = true;
    double tol = a->expect.tolerance;
    gy_pose pose;
    gy_physics_state st;
    bool has_state = gy_body_get_state(R->world, e, &st) == GY_OK;
    if (gy_entity_get_world_pose(R->world, e, &pose) != GY_OK)
        pose = gy_pose_identity();
    x->measured = true;
    x->has_state = has_state;
    x->position = pose.position;
    x->velocity = has_state ? st.linear_velocity : gy_v3(NAN, NAN, NAN);
    x->angular_velocity = has_state ? st.angular_velocity : gy_v3(NAN, NAN, NAN);
    x->awake = has_state && st.awake;
    x->grounded = has_state && st.grounded;
    x->ground_state = has_state ? st.ground_state : GY_GROUND_AIRBORNE;
    /* Failures first, so the line printed on stderr says what went wrong. */
    if (a->expect.has_position)
        ok &= check_vector(x, name, "position", pose.position, a->expect.position,
                           a->expect.position_set, tol);
    if (a->expect.has_velocity) {
        if (!has_state) {
            detail_add(x, "%s'%s' has no physics body to have a velocity", x->detail[0] ? "; " : "", name);
            ok = false;
        } else {
            ok &= check_vector(x, name, "velocity", st.linear_velocity, a->expect.velocity,
                               a->expect.velocity_set, tol);
        }
    }
    if (a->expect.has_angular_velocity) {
        if (!has_state) {
            detail_add(x, "%s'%s' has no physics body to have an angular velocity",
                       x->detail[0] ? "; " : "", name);
            ok = false;
        } else {
            ok &= check_vector(x, name, "angular_velocity", st.angular_velocity,
                               a->expect.angular_velocity, a->expect.angular_velocity_set, tol);
        }
    }
    if (a->expect.has_awake) {
        bool awake = has_state && st.awake;
        if (awake != a->expect.awake) {
            detail_add(x, "%s'%s' is %s, expected %s", x->detail[0] ? "; " : "", name,
                       awake ? "awake" : "asleep", a->expect.awake ? "awake" : "asleep");
            ok = false;
        }
    }
    if (a->expect.has_grounded) {
        bool grounded = has_state && st.grounded;
        if (grounded != a->expect.grounded) {
            detail_add(x, "%s'%s' is %s, expected %s", x->detail[0] ? "; " : "", name,
                       grounded ? "grounded" : "airborne",
                       a->expect.grounded ? "grounded" : "airborne");
            ok = false;
        }
    }
    if (a->expect.has_ground_state && x->ground_state != a->expect.ground_state) {
        detail_add(x, "%s'%s' is %s, expected %s", x->detail[0] ? "; " : "", name,
                   gy_ground_state_name(x->ground_state),
                   gy_ground_state_name((gy_ground_state)a->expect.ground_state));
        ok = false;
    }
    if (ok) {
        detail_add(x, "'%s'", name);
        if (a->expect.has_position)
            describe_vector(x, "position", pose.position);
        if (a->expect.has_velocity)
            describe_vector(x, "velocity", st.linear_velocity);
        if (a->expect.has_angular_velocity)
            describe_vector(x, "angular_velocity", st.angular_velocity);
        if (a->expect.has_awake)
            detail_add(x, " %s", a->expect.awake ? "awake" : "asleep");
        if (a->expect.has_grounded)
            detail_add(x, " %s", a->expect.grounded ? "grounded" : "airborne");
        if (a->expect.has_ground_state)
            detail_add(x, " ground_state %s", gy_ground_state_name(x->ground_state));
        if (a->expect.has_position || a->expect.has_velocity || a->expect.has_angular_velocity) {
            char t[64];
            num(t, sizeof t, tol);
            detail_add(x, " (tolerance %s)", t);
        }
        x->passed = 1;
        return;
    }
    fail_line(R, a, x);
}

static gy_cli_watch *watch_of(gy_cli_runner *R, const gy_scene_action *a)
{
    for (uint32_t i = 0; i < R->watch_count; i++)
        if (R->watches[i].action == a)
            return &R->watches[i];
    return NULL;
}

static void run_expect_event(gy_cli_runner *R, const gy_scene_action *a)
{
    gy_cli_expect *x = new_expect(R, a, NULL);
    if (x == NULL)
        return;
    const gy_cli_watch *w = watch_of(R, a);
    const char *kind = gy_scene_event_kind_name(a->expect_event.kind);
    char since[64], at[64], seen[64];
    num(since, sizeof since, a->expect_event.since);
    num(at, sizeof at, a->at);
    x->measured = true;
    if (a->expect_event.kind >= GY_SCENE_EVENT_SLEEP) {
        const char *who = root_name(R, a->expect_event.a);
        if (w != NULL && w->seen) {
            x->first_event_t = time_of(R, w->seen_tick);
            num(seen, sizeof seen, x->first_event_t);
            snprintf(x->detail, sizeof x->detail, "%s of '%s' in [%s, %s] s: first at %s s", kind,
                     who, since, at, seen);
            x->passed = 1;
            return;
        }
        snprintf(x->detail, sizeof x->detail, "no %s event of '%s' in [%s, %s] s", kind, who, since,
                 at);
        fail_line(R, a, x);
        return;
    }
    if (w != NULL && w->seen) {
        x->first_event_t = time_of(R, w->seen_tick);
        num(seen, sizeof seen, x->first_event_t);
        snprintf(x->detail, sizeof x->detail, "%s between '%s' and '%s' in [%s, %s] s: first at %s s",
                 kind, root_name(R, a->expect_event.a), root_name(R, a->expect_event.b), since, at,
                 seen);
        x->passed = 1;
        return;
    }
    snprintf(x->detail, sizeof x->detail, "no %s event between '%s' and '%s' in [%s, %s] s", kind,
             root_name(R, a->expect_event.a), root_name(R, a->expect_event.b), since, at);
    fail_line(R, a, x);
}

/* ---- actions --------------------------------------------------------------------------------- */

static void action_warning(const gy_cli_runner *R, const gy_scene_action *a, const char *what)
{
    char at[64];
    num(at, sizeof at, a->at);
    fprintf(stderr, "gyre: warning: script[%u] at %s s: %s '%s': %s\n", a->index, at,
            gy_scene_action_name(a->type), root_name(R, a->entity), what);
}

static void check(const gy_cli_runner *R, const gy_scene_action *a, gy_result r)
{
    if (r == GY_OK)
        return;
    action_warning(R, a,
                   r == GY_ERR_STALE_HANDLE ? "the entity no longer exists"
                   : r == GY_ERR_INACTIVE   ? "not applied: the body is not active"
                                            : gy_result_message(r));
}

static void run_raycast(gy_cli_runner *R, const gy_scene_action *a)
{
    if (gy_array_reserve(R->alloc, (void **)&R->raycasts, &R->raycast_capacity,
                         R->raycast_count + 1u, sizeof *R->raycasts) != GY_OK) {
        fprintf(stderr, "gyre: out of memory recording a raycast\n");
        return;
    }
    gy_cli_raycast *c = &R->raycasts[R->raycast_count++];
    memset(c, 0, sizeof *c);
    c->label = a->raycast.label;
    c->at = a->at;
    gy_world_query_filter filter = gy_default_world_query_filter();
    filter.mask = a->raycast.mask;
    gy_world_hit hit;
    uint32_t count = 0;
    gy_result r = gy_world_raycast(R->world, a->raycast.origin, a->raycast.direction, &filter,
                                   GY_COLLECT_CLOSEST, &hit, 1, &count, NULL);
    if (r != GY_OK) {
        char at[64];
        num(at, sizeof at, a->at);
        fprintf(stderr, "gyre: warning: script[%u] at %s s: raycast '%s' failed: %s\n", a->index,
                at, a->raycast.label, gy_result_message(r));
        return;
    }
    if (count == 0)
        return;
    c->hit = true;
    c->entity = gy_cli_entity_name(R, hit.entity);
    c->distance = hit.distance;
    c->point = hit.point;
    c->normal = hit.normal;
}

static void run_spawn(gy_cli_runner *R, const gy_scene_action *a)
{
    char at[64];
    num(at, sizeof at, a->at);
    const char *path = a->spawn.scene;
    /* Spawned scenes live until the run ends, so a cell spawned twice parses its OBJ files once. */
    gy_scene *scene = gy_cli_load_scene_cached(path, gy_world_obj_cache(R->world));
    if (scene == NULL) {
        fprintf(stderr, "gyre: script[%u] at %s s: spawn: %s is not a valid scene; the run ends\n",
                a->index, at, path);
        R->spawn_failed = true;
        return;
    }
    if (gy_array_reserve(R->alloc, (void **)&R->spawned, &R->spawn_capacity, R->spawn_count + 1u,
                         sizeof *R->spawned) != GY_OK) {
        fprintf(stderr, "gyre: out of memory spawning %s\n", path);
        gy_scene_free(scene);
        R->spawn_failed = true;
        return;
    }
    gy_scene_instance *inst = NULL;
    int32_t bad = -1;
    gy_result r = gy_scene_load_additive(R->world, scene, a->spawn.offset, 0, R->alloc, &inst, &bad);
    if (r != GY_OK) {
        gy_cli_print_refused(stderr, path, scene, bad, r);
        fprintf(stderr, "gyre: script[%u] at %s s: spawn of %s failed; nothing of it was created; "
                        "the run ends\n",
                a->index, at, path);
        gy_scene_free(scene);
        R->spawn_failed = true;
        return;
    }
    R->spawned[R->spawn_count].scene = scene;
    R->spawned[R->spawn_count].instance = inst;
    R->spawn_count++;
    if (scene->action_count > 0 && !R->opt.quiet)
        fprintf(stderr, "gyre: note: script[%u]: the script of spawned scene %s is not run\n",
                a->index, path);
    if (gy_cli_track_instance(R, inst) != GY_OK) {
        fprintf(stderr, "gyre: out of memory tracking the entities of %s\n", path);
        R->spawn_failed = true;
    }
}

static void run_force(gy_cli_runner *R, const gy_scene_action *a)
{
    if (gy_array_reserve(R->alloc, (void **)&R->forces, &R->force_capacity, R->force_count + 1u,
                         sizeof *R->forces) != GY_OK) {
        action_warning(R, a, "out of memory");
        return;
    }
    uint64_t ticks = 1;
    if (a->force.duration > 0.0) {
        double n = ceil(a->force.duration * (double)R->step_hz - 1e-6);
        ticks = n < 1.0 ? 1u : (uint64_t)n;
    }
    gy_cli_force *f = &R->forces[R->force_count++];
    f->entity = root_entity(R, a->entity);
    f->torque = a->type == GY_SCENE_ACTION_APPLY_TORQUE;
    f->value = a->force.value;
    f->end_tick = R->tick + ticks;
}

/* The scene's own joints, in file order (spawned copies are not named by the script). */
static void run_set_motor(gy_cli_runner *R, const gy_scene_action *a)
{
    gy_joint j = R->instance->joints[a->motor.joint];
    gy_joint_motor m;
    gy_result r = gy_joint_get_motor(R->world, j, &m);
    if (r == GY_OK) {
        m.mode = a->motor.mode;
        m.target = a->motor.target;
        if (a->motor.has_max_force)
            m.max_force = a->motor.max_force;
        r = gy_joint_set_motor(R->world, j, &m);
    }
    check(R, a, r);
}

static void run_action(gy_cli_runner *R, const gy_scene_action *a)
{
    gy_world *w = R->world;
    gy_entity e = root_entity(R, a->entity);
    const gy_scene_entity *se = a->entity >= 0 ? &R->scene->entities[a->entity] : NULL;
    switch (a->type) {
    case GY_SCENE_ACTION_SET_VELOCITY:
        if (se != NULL && se->physics != NULL && se->physics->is_character)
            check(R, a, gy_character_set_intent(w, e, a->velocity.value, 0));
        else
            check(R, a, gy_body_set_linear_velocity(w, e, a->velocity.value));
        break;
    case GY_SCENE_ACTION_SET_ANGULAR_VELOCITY:
        check(R, a, gy_body_set_angular_velocity(w, e, a->velocity.value));
        break;
    case GY_SCENE_ACTION_APPLY_IMPULSE:
        if (a->impulse.has_point)
            check(R, a, gy_body_apply_impulse_at(w, e, a->impulse.value, a->impulse.point));
        else
            check(R, a, gy_body_apply_impulse(w, e, a->impulse.value));
        break;
    case GY_SCENE_ACTION_APPLY_FORCE:
    case GY_SCENE_ACTION_APPLY_TORQUE:
        run_force(R, a);
        break;
    case GY_SCENE_ACTION_SET_GRAVITY:
        check(R, a, gy_world_set_gravity(w, a->gravity.value));
        break;
    case GY_SCENE_ACTION_WAKE:
        check(R, a, gy_body_set_awake(w, e, true));
        break;
    case GY_SCENE_ACTION_TELEPORT: {
        gy_pose pose;
        if (gy_entity_get_world_pose(w, e, &pose) != GY_OK) {
            check(R, a, GY_ERR_STALE_HANDLE);
            break;
        }
        pose.position = a->teleport.position;
        if (a->teleport.has_rotation)
            pose.rotation = a->teleport.rotation;
        check(R, a, gy_body_teleport(w, e, pose));
        break;
    }
    case GY_SCENE_ACTION_SET_ACTIVE:
        check(R, a, gy_body_set_active(w, e, a->active.value));
        break;
    case GY_SCENE_ACTION_SET_ENTITY_ACTIVE:
        check(R, a, gy_entity_set_active(w, e, a->active.value));
        break;
    case GY_SCENE_ACTION_DESTROY:
        check(R, a, gy_entity_destroy(w, e));
        break;
    case GY_SCENE_ACTION_SPAWN:
        run_spawn(R, a);
        break;
    case GY_SCENE_ACTION_JUMP:
        check(R, a, gy_character_jump(w, e, a->jump.speed));
        break;
    case GY_SCENE_ACTION_RAYCAST:
        run_raycast(R, a);
        break;
    case GY_SCENE_ACTION_EXPECT:
        run_expect(R, a);
        break;
    case GY_SCENE_ACTION_EXPECT_EVENT:
        run_expect_event(R, a);
        break;
    case GY_SCENE_ACTION_SET_MOTOR:
        run_set_motor(R, a);
        break;
    case GY_SCENE_ACTION_MOVE_KINEMATIC: {
        gy_pose pose;
        if (gy_entity_get_world_pose(w, e, &pose) != GY_OK) {
            check(R, a, GY_ERR_STALE_HANDLE);
            break;
        }
        pose.position = a->move.position;
        if (a->move.has_rotation)
            pose.rotation = a->move.rotation;
        check(R, a, gy_body_move_kinematic(w, e, pose, a->move.duration));
        break;
    }
    default:
        break;
    }
}

void gy_cli_script_run_due(gy_cli_runner *R)
{
    while (R->next_action < R->scene->action_count && !R->spawn_failed) {
        const gy_scene_action *a = &R->scene->actions[R->next_action];
        if (gy_cli_tick_for(R, a->at) > R->tick)
            break;
        R->next_action++;
        run_action(R, a);
    }
}

void gy_cli_script_apply_forces(gy_cli_runner *R)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < R->force_count; i++) {
        gy_cli_force f = R->forces[i];
        if (R->tick >= f.end_tick)
            continue;
        gy_result r = f.torque ? gy_body_apply_torque(R->world, f.entity, f.value)
                               : gy_body_apply_force(R->world, f.entity, f.value);
        if (r != GY_OK && r != GY_ERR_INACTIVE && r != GY_ERR_STALE_HANDLE) {
            /* Refused outright (not just switched off for now): once is enough to say so. */
            fprintf(stderr, "gyre: warning: %s on '%s': %s; the %s is dropped\n",
                    f.torque ? "apply_torque" : "apply_force", gy_cli_entity_name(R, f.entity),
                    gy_result_message(r), f.torque ? "torque" : "force");
            continue;
        }
        R->forces[kept++] = f;
    }
    R->force_count = kept;
}

gy_result gy_cli_script_init(gy_cli_runner *R)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < R->scene->action_count; i++)
        n += R->scene->actions[i].type == GY_SCENE_ACTION_EXPECT_EVENT;
    if (n == 0)
        return GY_OK;
    R->watches = gy_alloc_zeroed(R->alloc, (size_t)n * sizeof *R->watches);
    if (R->watches == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < R->scene->action_count; i++) {
        const gy_scene_action *a = &R->scene->actions[i];
        if (a->type != GY_SCENE_ACTION_EXPECT_EVENT)
            continue;
        gy_cli_watch *w = &R->watches[R->watch_count++];
        w->action = a;
        w->a = root_entity(R, a->expect_event.a);
        w->b = root_entity(R, a->expect_event.b);
    }
    return GY_OK;
}

void gy_cli_script_finish(gy_cli_runner *R)
{
    for (uint32_t i = R->next_action; i < R->scene->action_count; i++) {
        const gy_scene_action *a = &R->scene->actions[i];
        if (a->type != GY_SCENE_ACTION_EXPECT && a->type != GY_SCENE_ACTION_EXPECT_EVENT)
            continue;
        gy_cli_expect *x = new_expect(
            R, a, a->type == GY_SCENE_ACTION_EXPECT ? root_name(R, a->entity) : NULL);
        if (x == NULL)
            return;
        x->passed = -1;
        char at[64], end[64];
        num(at, sizeof at, a->at);
        num(end, sizeof end, time_of(R, R->tick));
        snprintf(x->detail, sizeof x->detail, "not reached: the run ended at %s s", end);
        if (!R->opt.quiet)
            fprintf(stderr, "gyre: note: script[%u] (%s at %s s) not reached: the run ended at %s s\n",
                a->index, gy_scene_action_name(a->type), at, end);
    }
}
