/* Scene joints and the timed script: cross-references to entities, per-action fields, and the
 * stable sort by time. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"
#include "scene_internal.h"

/* Same order as gy_joint_type. */
static const char *const k_joint_types[] = {"Fixed", "Ball", "Hinge", "Slider", "Distance"};

/* Same order as gy_scene_action_type. */
static const char *const k_action_names[] = {"set_velocity",
                                             "set_angular_velocity",
                                             "apply_impulse",
                                             "apply_force",
                                             "teleport",
                                             "set_active",
                                             "set_entity_active",
                                             "destroy",
                                             "spawn",
                                             "jump",
                                             "raycast",
                                             "expect",
                                             "expect_event",
                                             "set_motor",
                                             "move_kinematic",
                                             "set_gravity",
                                             "apply_torque",
                                             "wake"};

/* Same order as gy_scene_event_kind. */
static const char *const k_event_kinds[] = {"enter", "stay", "exit", "sleep", "wake", "killed"};
/* In gy_ground_state's order. */
static const char *const k_ground_states[] = {"airborne", "walkable", "steep"};

static const char *const k_body_names[] = {"Dynamic", "Static", "Kinematic", "Trigger"};

int32_t gy_scn_entity_ref(gy_scn_loader *L, const cJSON *obj, const char *key, bool optional,
                          bool *present)
{
    const char *name;
    gy_scn_got g = gy_scn_string(L, obj, key, &name);
    if (present != NULL)
        *present = g != GY_SCN_ABSENT;
    if (g == GY_SCN_ABSENT && !optional)
        gy_scn_error(L, key, "required: an entity name");
    if (g != GY_SCN_OK)
        return -1;
    int32_t i = gy_scn_names_find(&L->entity_names, name);
    if (i < 0) {
        char buf[64];
        gy_scn_error(L, key, "no entity named %s",
                     gy_scn_describe(cJSON_GetObjectItemCaseSensitive(obj, key), buf, sizeof buf));
    }
    return i;
}

static const gy_scene_entity *entity(const gy_scn_loader *L, int32_t i)
{
    return &L->scene->entities[i];
}

/* ---- joints ---------------------------------------------------------------------------------- */

static bool joint_body(gy_scn_loader *L, const char *key, int32_t e, bool need_moving)
{
    const gy_scene_entity *en = entity(L, e);
    if (en->physics == NULL) {
        gy_scn_error(L, key, "\"%.60s\" has no physics component: a joint connects bodies",
                     en->name);
        return false;
    }
    gy_body_type t = en->physics->body_type;
    if (need_moving && (t == GY_BODY_STATIC || t == GY_BODY_TRIGGER)) {
        gy_scn_error(L, key,
                     "\"%.60s\" is %s: body a of a joint must be Dynamic or Kinematic (put the "
                     "static side in b, or leave b out for the world)",
                     en->name, k_body_names[t]);
        return false;
    }
    return true;
}

static void load_limits(gy_scn_loader *L, const cJSON *j, gy_joint_def *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "limits");
    size_t mark = gy_scn_push_key(L, "limits");
    bool ok = cJSON_IsArray(v);
    size_t n = 0;
    if (ok)
        for (const cJSON *c = v->child; c != NULL; c = c->next)
            n++;
    char buf[64];
    if (!ok || n != 2) {
        gy_scn_error(L, NULL, "must be [min, max] (got %s)", gy_scn_describe(v, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    double lim[2];
    int i = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
        size_t im = gy_scn_push_index(L, (size_t)i);
        if (!cJSON_IsNumber(c)) {
            gy_scn_error(L, NULL, "must be a number (got %s)", gy_scn_describe(c, buf, sizeof buf));
            ok = false;
        } else if (!gy_is_finite(c->valuedouble)) {
            gy_scn_error(L, NULL, "number out of range (overflows to infinity)");
            ok = false;
        } else if (d->type == GY_JOINT_HINGE && fabs(c->valuedouble) > 180.0) {
            gy_scn_error(L, NULL, "a Hinge limit is in degrees within [-180, 180] (got %.15g)",
                         c->valuedouble);
            ok = false;
        } else {
            lim[i] = c->valuedouble;
        }
        gy_scn_pop(L, im);
    }
    if (ok && lim[0] > lim[1]) {
        gy_scn_error(L, NULL, "min must not exceed max (got [%.15g, %.15g])", lim[0], lim[1]);
        ok = false;
    }
    if (ok) {
        double k = d->type == GY_JOINT_HINGE ? GY_PI / 180.0 : 1.0;
        d->has_limits = true;
        d->limit_min = lim[0] * k;
        d->limit_max = lim[1] * k;
    }
    gy_scn_pop(L, mark);
}

/* [min, max] in degrees within [-180, 180], min <= max, into radians; false after an error. */
static bool degree_range(gy_scn_loader *L, const cJSON *j, const char *key, double *lo, double *hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    size_t mark = gy_scn_push_key(L, key);
    char buf[64];
    size_t n = 0;
    if (cJSON_IsArray(v))
        for (const cJSON *c = v->child; c != NULL; c = c->next)
            n++;
    bool ok = cJSON_IsArray(v) && n == 2;
    if (!ok)
        gy_scn_error(L, NULL, "must be [min, max] in degrees (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
    double lim[2] = {0.0, 0.0};
    int i = 0;
    for (const cJSON *c = ok ? v->child : NULL; c != NULL; c = c->next, i++) {
        size_t im = gy_scn_push_index(L, (size_t)i);
        if (!cJSON_IsNumber(c)) {
            gy_scn_error(L, NULL, "must be a number (got %s)", gy_scn_describe(c, buf, sizeof buf));
            ok = false;
        } else if (!gy_is_finite(c->valuedouble) || fabs(c->valuedouble) > 180.0) {
            gy_scn_error(L, NULL, "must be in degrees within [-180, 180] (got %s)",
                         gy_scn_describe(c, buf, sizeof buf));
            ok = false;
        } else {
            lim[i] = c->valuedouble;
        }
        gy_scn_pop(L, im);
    }
    if (ok && lim[0] > lim[1]) {
        gy_scn_error(L, NULL, "min must not exceed max (got [%.15g, %.15g])", lim[0], lim[1]);
        ok = false;
    }
    gy_scn_pop(L, mark);
    *lo = lim[0] * GY_PI / 180.0;
    *hi = lim[1] * GY_PI / 180.0;
    return ok;
}

/* `motor`: {velocity | position, max_force}; hinge angles in degrees, velocities in rad/s. */
static void load_motor(gy_scn_loader *L, const cJSON *j, gy_joint_def *d)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "motor");
    size_t mark = gy_scn_push_key(L, "motor");
    char buf[64];
    if (!cJSON_IsObject(m)) {
        gy_scn_error(L, NULL,
                     "must be {\"velocity\": v, \"max_force\": f} or {\"position\": p, "
                     "\"max_force\": f} (got %s)",
                     gy_scn_describe(m, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    static const char *const keys[] = {"velocity", "position", "max_force"};
    gy_scn_check_keys(L, m, keys, 3, NULL, 0);
    double v = 0.0, p = 0.0, f = 0.0;
    gy_scn_got gv = gy_scn_number(L, m, "velocity", &v);
    gy_scn_got gp = gy_scn_number(L, m, "position", &p);
    gy_scn_got gf = gy_scn_number_min(L, m, "max_force", 0.0, false, &f);
    if (gf == GY_SCN_ABSENT)
        gy_scn_error(L, "max_force", "required: the most torque (N·m) or force (N) it applies");
    if (gv != GY_SCN_ABSENT && gp != GY_SCN_ABSENT)
        gy_scn_error(L, NULL, "give one of velocity and position, not both");
    else if (gv == GY_SCN_ABSENT && gp == GY_SCN_ABSENT)
        gy_scn_error(L, NULL, "required: velocity (a speed to hold) or position (a target)");
    bool hinge = d->type == GY_JOINT_HINGE;
    if (gp == GY_SCN_OK && hinge && fabs(p) > 180.0) {
        gy_scn_error(L, "position", "a Hinge position is in degrees within [-180, 180] (got %.15g)",
                     p);
        gp = GY_SCN_BAD;
    }
    if (gf == GY_SCN_OK && (gv == GY_SCN_OK) != (gp == GY_SCN_OK)) {
        d->motor.mode = gv == GY_SCN_OK ? GY_MOTOR_VELOCITY : GY_MOTOR_POSITION;
        d->motor.target = gv == GY_SCN_OK ? v : (hinge ? p * GY_PI / 180.0 : p);
        d->motor.max_force = f;
    }
    gy_scn_pop(L, mark);
}

/* `spring`: {frequency (Hz) > 0, damping_ratio >= 0}. */
static void load_spring(gy_scn_loader *L, const cJSON *j, gy_joint_def *d)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "spring");
    size_t mark = gy_scn_push_key(L, "spring");
    char buf[64];
    if (!cJSON_IsObject(m)) {
        gy_scn_error(L, NULL, "must be {\"frequency\": hz, \"damping_ratio\": z} (got %s)",
                     gy_scn_describe(m, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    static const char *const keys[] = {"frequency", "damping_ratio"};
    gy_scn_check_keys(L, m, keys, 2, NULL, 0);
    double f = 0.0, z = 0.0;
    gy_scn_got gf = gy_scn_number_min(L, m, "frequency", 0.0, false, &f);
    gy_scn_got gz = gy_scn_number_min(L, m, "damping_ratio", 0.0, true, &z);
    if (gf == GY_SCN_ABSENT)
        gy_scn_error(L, "frequency", "required: the natural frequency in Hz");
    if (gz == GY_SCN_ABSENT)
        gy_scn_error(L, "damping_ratio", "required: 0 (undamped) .. 1 (critical) or more");
    if (gf == GY_SCN_OK && gz == GY_SCN_OK) {
        d->has_spring = true;
        d->spring_frequency = f;
        d->spring_damping_ratio = z;
    }
    gy_scn_pop(L, mark);
}

static void load_joint(gy_scn_loader *L, const cJSON *j, gy_scene_joint *out)
{
    char buf[64];
    out->def = gy_default_joint_def();
    out->a = -1;
    out->b = -1;
    if (!cJSON_IsObject(j)) {
        gy_scn_error(L, NULL, "must be a joint object (got %s)",
                     gy_scn_describe(j, buf, sizeof buf));
        return;
    }
    static const char *const keys[] = {
        "name",     "type",        "a",     "b",      "anchor",     "axis",        "limits",
        "distance", "break_force", "motor", "spring", "cone_angle", "twist_limits"};
    gy_scn_check_keys(L, j, keys, sizeof keys / sizeof keys[0], NULL, 0);
    gy_joint_def *d = &out->def;
    uint32_t errors_before = gy_scn_error_count(L);

    const char *name;
    if (gy_scn_string(L, j, "name", &name) == GY_SCN_OK) {
        out->name = gy_scn_arena_strdup(&L->arena, name);
        if (out->name == NULL)
            L->oom = true;
    }
    int type = -1;
    if (gy_scn_enum(L, j, "type", k_joint_types, GY_JOINT_TYPE_COUNT, &type) == GY_SCN_ABSENT)
        gy_scn_error(L, "type", "required");
    if (type >= 0)
        d->type = (gy_joint_type)type;

    int32_t a = gy_scn_entity_ref(L, j, "a", false, NULL);
    if (a >= 0 && joint_body(L, "a", a, true))
        out->a = a;
    int32_t b = gy_scn_entity_ref(L, j, "b", true, NULL);
    if (b >= 0 && b == a)
        gy_scn_error(L, "b", "a and b must be different entities");
    else if (b >= 0 && joint_body(L, "b", b, false))
        out->b = b;

    gy_scn_got ga = gy_scn_vec3(L, j, "anchor", &d->anchor);
    if (ga == GY_SCN_ABSENT)
        gy_scn_error(L, "anchor", "required: the world-space anchor point at creation");
    else if (ga == GY_SCN_OK)
        gy_scn_vec3_within(L, "anchor", d->anchor, GY_MAX_MAGNITUDE);

    bool axial = type == GY_JOINT_HINGE || type == GY_JOINT_SLIDER;
    bool ball_limits = cJSON_GetObjectItemCaseSensitive(j, "cone_angle") != NULL ||
                       cJSON_GetObjectItemCaseSensitive(j, "twist_limits") != NULL;
    if (cJSON_GetObjectItemCaseSensitive(j, "axis") != NULL) {
        gy_vec3 axis;
        if (type == GY_JOINT_BALL && !ball_limits)
            gy_scn_error(L, "axis",
                         "a Ball joint's axis is the one its cone_angle and twist_limits are "
                         "measured about: give one of them, or leave axis out");
        else if (type >= 0 && !axial && type != GY_JOINT_BALL)
            gy_scn_error(L, "axis", "only Hinge, Slider and Ball joints have an axis");
        else if (gy_scn_vec3(L, j, "axis", &axis) == GY_SCN_OK) {
            double len = gy_v3_len(axis);
            if (!(len > 1e-9) || !gy_is_finite(len))
                gy_scn_error(L, "axis", "must be a non-zero vector");
            else
                d->axis = gy_v3_scale(axis, 1.0 / len);
        }
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "limits") != NULL) {
        if (type >= 0 && !axial)
            gy_scn_error(L, "limits",
                         "only Hinge (degrees) and Slider (metres) joints have limits");
        else if (type >= 0)
            load_limits(L, j, d);
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "distance") != NULL) {
        if (type >= 0 && type != GY_JOINT_DISTANCE)
            gy_scn_error(L, "distance", "only Distance joints have a distance");
        else
            gy_scn_number_min(L, j, "distance", 0.0, true, &d->distance);
    }
    double force;
    if (gy_scn_number_min(L, j, "break_force", 0.0, false, &force) == GY_SCN_OK) {
        d->breakable = true;
        d->break_force = force;
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "motor") != NULL) {
        if (type >= 0 && !axial)
            gy_scn_error(L, "motor", "only Hinge and Slider joints have a motor");
        else if (type >= 0)
            load_motor(L, j, d);
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "spring") != NULL) {
        if (type >= 0 && type != GY_JOINT_DISTANCE)
            gy_scn_error(L, "spring", "only Distance joints have a spring");
        else if (type >= 0)
            load_spring(L, j, d);
    }
    if (ball_limits && type >= 0 && type != GY_JOINT_BALL) {
        gy_scn_error(L,
                     cJSON_GetObjectItemCaseSensitive(j, "cone_angle") != NULL ? "cone_angle"
                                                                               : "twist_limits",
                     "only Ball joints have a cone_angle and twist_limits (a Hinge has limits)");
    } else if (ball_limits && type == GY_JOINT_BALL) {
        if (cJSON_GetObjectItemCaseSensitive(j, "axis") == NULL)
            gy_scn_error(L, "axis",
                         "required with cone_angle or twist_limits: the axis they are measured "
                         "about");
        double cone;
        gy_scn_got g = gy_scn_number_min(L, j, "cone_angle", 0.0, false, &cone);
        if (g == GY_SCN_OK && cone > 180.0)
            gy_scn_error(L, "cone_angle", "must be in degrees within (0, 180] (got %.15g)", cone);
        else if (g == GY_SCN_OK) {
            d->has_cone = true;
            d->cone_angle = cone * GY_PI / 180.0;
        }
        if (cJSON_GetObjectItemCaseSensitive(j, "twist_limits") != NULL &&
            degree_range(L, j, "twist_limits", &d->twist_min, &d->twist_max))
            d->has_twist_limits = true;
    }
    /* Limits and distance beyond the ranges of gyre/backend/backend.h: the shared check decides, as
     * it does for the World (stand-ins for the bodies, which exist only at instantiation). */
    gy_joint_def check = *d;
    check.a.bits = 1;
    check.b.bits = 2;
    gy_result r = gy_scn_error_count(L) == errors_before ? gy_validate_joint_def(&check) : GY_OK;
    if (r != GY_OK)
        gy_scn_error(L, NULL,
                     "a number is outside the accepted ranges (%s; the ranges are listed in "
                     "docs/reliability.md)",
                     gy_result_message(r));
}

void gy_scn_load_joints(gy_scn_loader *L, const cJSON *joints)
{
    if (joints == NULL)
        return;
    gy_scene *s = L->scene;
    size_t mark = gy_scn_push_key(L, "joints");
    if (!cJSON_IsArray(joints)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an array of joints (got %s)",
                     gy_scn_describe(joints, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    uint32_t n = 0;
    for (const cJSON *c = joints->child; c != NULL; c = c->next)
        n++;
    s->joints = gy_scn_arena_array(&L->arena, n, sizeof *s->joints);
    if (n > 0 && s->joints == NULL) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    s->joint_count = n;
    uint32_t i = 0;
    for (const cJSON *c = joints->child; c != NULL && !L->oom; c = c->next, i++) {
        size_t jm = gy_scn_push_index(L, i);
        load_joint(L, c, &s->joints[i]);
        gy_scn_pop(L, jm);
    }
    gy_scn_pop(L, mark);
}

/* ---- script ---------------------------------------------------------------------------------- */

enum {
    NEED_ANY = 0,       /* any entity */
    NEED_PHYSICS = 1,   /* a physics component */
    NEED_MOVABLE = 2,   /* Dynamic or Kinematic (characters included) */
    NEED_DYNAMIC = 3,   /* Dynamic */
    NEED_CHARACTER = 4, /* a character controller */
    NEED_KINEMATIC = 5, /* Kinematic, not a character */
    NEED_KILLABLE = 6,  /* Dynamic or a character: what the kill plane removes */
};

/* Checks that entity e suits `what`; the message names the action and the entity. */
static bool require(gy_scn_loader *L, const char *key, int32_t e, int need, const char *what)
{
    const gy_scene_entity *en = entity(L, e);
    const gy_scene_physics *p = en->physics;
    if (need == NEED_ANY)
        return true;
    if (p == NULL) {
        gy_scn_error(L, key, "%s needs a physics body (\"%.60s\" has no physics component)", what,
                     en->name);
        return false;
    }
    bool ok = true;
    const char *want = "";
    switch (need) {
    case NEED_MOVABLE:
        ok = p->body_type == GY_BODY_DYNAMIC || p->body_type == GY_BODY_KINEMATIC;
        want = "a Dynamic or Kinematic body";
        break;
    case NEED_DYNAMIC:
        ok = p->body_type == GY_BODY_DYNAMIC;
        want = "a Dynamic body";
        break;
    case NEED_KILLABLE:
        ok = p->body_type == GY_BODY_DYNAMIC || p->is_character;
        want = "a Dynamic body or a character (what the kill plane removes)";
        break;
    case NEED_KINEMATIC:
        if (p->is_character) {
            gy_scn_error(L, key,
                         "%s needs a Kinematic body (\"%.60s\" is a character: its controller "
                         "moves it)",
                         what, en->name);
            return false;
        }
        ok = p->body_type == GY_BODY_KINEMATIC;
        want = "a Kinematic body";
        break;
    case NEED_CHARACTER:
        ok = p->is_character;
        if (!ok) {
            gy_scn_error(L, key, "%s needs a character controller (\"%.60s\" is not one)", what,
                         en->name);
            return false;
        }
        break;
    default:
        break;
    }
    if (!ok)
        gy_scn_error(L, key, "%s needs %s (\"%.60s\" is %s)", what, want, en->name,
                     k_body_names[p->body_type]);
    return ok;
}

static bool required_vec3(gy_scn_loader *L, const cJSON *o, const char *key, gy_vec3 *out)
{
    gy_scn_got g = gy_scn_vec3(L, o, key, out);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, key, "required: [x, y, z]");
    return g == GY_SCN_OK;
}

/* [x, y, z] where any component may be null (don't care). */
static bool vec3_nullable(gy_scn_loader *L, const cJSON *o, const char *key, gy_vec3 *out,
                          bool set[3])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    size_t mark = gy_scn_push_key(L, key);
    char buf[64];
    size_t n = 0;
    if (cJSON_IsArray(v))
        for (const cJSON *c = v->child; c != NULL; c = c->next)
            n++;
    if (!cJSON_IsArray(v) || n != 3) {
        gy_scn_error(L, NULL, "must be [x, y, z], each a number or null (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return false;
    }
    bool ok = true;
    double d[3] = {0.0, 0.0, 0.0};
    int i = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
        size_t im = gy_scn_push_index(L, (size_t)i);
        set[i] = !cJSON_IsNull(c);
        if (cJSON_IsNull(c)) {
            /* don't care */
        } else if (!cJSON_IsNumber(c)) {
            gy_scn_error(L, NULL, "must be a number or null (got %s)",
                         gy_scn_describe(c, buf, sizeof buf));
            ok = false;
        } else if (!gy_is_finite(c->valuedouble)) {
            gy_scn_error(L, NULL, "number out of range (overflows to infinity)");
            ok = false;
        } else {
            d[i] = c->valuedouble;
        }
        gy_scn_pop(L, im);
    }
    *out = gy_v3(d[0], d[1], d[2]);
    gy_scn_pop(L, mark);
    return ok;
}

/* The spawned scene is not loaded here (it may spawn itself); a typo in its path still fails
 * validation instead of the run. */
static void check_readable(gy_scn_loader *L, const char *key, const char *resolved,
                           const char *shown)
{
    struct stat st;
    const char *why = NULL;
    if (stat(resolved, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "is a directory";
    else if (access(resolved, R_OK) != 0)
        why = strerror(errno);
    if (why != NULL && strcmp(shown, resolved) != 0)
        gy_scn_error(L, key, "cannot read \"%.200s\" (resolved as \"%.400s\"): %s", shown, resolved,
                     why);
    else if (why != NULL)
        gy_scn_error(L, key, "cannot read \"%.200s\": %s", shown, why);
}

/* set_motor: the joint by name (it must have a motor), velocity or position, optional
 * max_force. */
static void load_set_motor(gy_scn_loader *L, const cJSON *o, gy_scene_action *a)
{
    char buf[64];
    a->motor.joint = -1;
    const char *name;
    gy_scn_got g = gy_scn_string(L, o, "joint", &name);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, "joint", "required: the name of a joint with a motor");
    const gy_scene *s = L->scene;
    int32_t found = -1, matches = 0;
    for (uint32_t i = 0; g == GY_SCN_OK && i < s->joint_count; i++)
        if (s->joints[i].name != NULL && strcmp(s->joints[i].name, name) == 0) {
            found = found < 0 ? (int32_t)i : found;
            matches++;
        }
    const gy_joint_def *d = found >= 0 ? &s->joints[found].def : NULL;
    if (g == GY_SCN_OK && found < 0)
        gy_scn_error(
            L, "joint", "no joint named %s",
            gy_scn_describe(cJSON_GetObjectItemCaseSensitive(o, "joint"), buf, sizeof buf));
    else if (matches > 1)
        gy_scn_error(L, "joint", "%d joints are named \"%.60s\": name them apart", (int)matches,
                     name);
    else if (d != NULL && d->motor.mode == GY_MOTOR_OFF)
        gy_scn_error(L, "joint", "joint \"%.60s\" has no motor: give it one in joints[%d].motor",
                     name, (int)found);
    else if (d != NULL)
        a->motor.joint = found;
    double v = 0.0, p = 0.0, f = 0.0;
    gy_scn_got gv = gy_scn_number(L, o, "velocity", &v);
    gy_scn_got gp = gy_scn_number(L, o, "position", &p);
    if (gv != GY_SCN_ABSENT && gp != GY_SCN_ABSENT)
        gy_scn_error(L, NULL, "give one of velocity and position, not both");
    else if (gv == GY_SCN_ABSENT && gp == GY_SCN_ABSENT)
        gy_scn_error(L, NULL, "required: velocity (a speed to hold) or position (a target)");
    bool hinge = d != NULL && d->type == GY_JOINT_HINGE;
    if (gp == GY_SCN_OK && hinge && fabs(p) > 180.0)
        gy_scn_error(L, "position", "a Hinge position is in degrees within [-180, 180] (got %.15g)",
                     p);
    a->motor.mode = gp != GY_SCN_ABSENT ? GY_MOTOR_POSITION : GY_MOTOR_VELOCITY;
    a->motor.target = gp != GY_SCN_ABSENT ? (hinge ? p * GY_PI / 180.0 : p) : v;
    a->motor.has_max_force = gy_scn_number_min(L, o, "max_force", 0.0, false, &f) == GY_SCN_OK;
    a->motor.max_force = f;
}

static void load_action_fields(gy_scn_loader *L, const cJSON *o, gy_scene_action *a)
{
    char buf[64];
    const char *what = k_action_names[a->type];
    switch (a->type) {
    case GY_SCENE_ACTION_SET_VELOCITY:
    case GY_SCENE_ACTION_SET_ANGULAR_VELOCITY:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_MOVABLE, what);
        required_vec3(L, o, "value", &a->velocity.value);
        break;
    case GY_SCENE_ACTION_APPLY_IMPULSE:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_DYNAMIC, what);
        required_vec3(L, o, "value", &a->impulse.value);
        a->impulse.has_point = gy_scn_vec3(L, o, "point", &a->impulse.point) == GY_SCN_OK;
        break;
    case GY_SCENE_ACTION_APPLY_FORCE:
    case GY_SCENE_ACTION_APPLY_TORQUE:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_DYNAMIC, what);
        required_vec3(L, o, "value", &a->force.value);
        gy_scn_number_min(L, o, "duration", 0.0, false, &a->force.duration);
        break;
    case GY_SCENE_ACTION_TELEPORT:
        if (required_vec3(L, o, "position", &a->teleport.position))
            gy_scn_vec3_within(L, "position", a->teleport.position, GY_MAX_MAGNITUDE);
        a->teleport.rotation = gy_quat_identity();
        a->teleport.has_rotation =
            gy_scn_quat(L, o, "rotation", &a->teleport.rotation) == GY_SCN_OK;
        break;
    case GY_SCENE_ACTION_SET_GRAVITY:
        if (required_vec3(L, o, "value", &a->gravity.value))
            gy_scn_vec3_within(L, "value", a->gravity.value, GY_MAX_MAGNITUDE);
        break;
    case GY_SCENE_ACTION_MOVE_KINEMATIC:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_KINEMATIC, what);
        if (required_vec3(L, o, "position", &a->move.position))
            gy_scn_vec3_within(L, "position", a->move.position, GY_MAX_MAGNITUDE);
        a->move.rotation = gy_quat_identity();
        a->move.has_rotation = gy_scn_quat(L, o, "rotation", &a->move.rotation) == GY_SCN_OK;
        if (gy_scn_number_min(L, o, "duration", 0.0, true, &a->move.duration) == GY_SCN_OK &&
            a->move.duration * 1000.0 > (double)((1u << 30) - 1u))
            gy_scn_error(L, "duration", "too long: at most %.15g s (2^30 - 1 steps at 1000 Hz)",
                         (double)((1u << 30) - 1u) / 1000.0);
        break;
    case GY_SCENE_ACTION_SET_ACTIVE:
    case GY_SCENE_ACTION_SET_ENTITY_ACTIVE:
        if (a->entity >= 0 && a->type == GY_SCENE_ACTION_SET_ACTIVE)
            require(L, "entity", a->entity, NEED_PHYSICS, what);
        if (gy_scn_bool(L, o, "value", &a->active.value) == GY_SCN_ABSENT)
            gy_scn_error(L, "value", "required: true or false");
        break;
    case GY_SCENE_ACTION_DESTROY:
        break;
    case GY_SCENE_ACTION_WAKE:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_DYNAMIC, what);
        break;
    case GY_SCENE_ACTION_SPAWN: {
        const char *scene;
        gy_scn_got g = gy_scn_string(L, o, "scene", &scene);
        if (g == GY_SCN_ABSENT)
            gy_scn_error(L, "scene", "required: a scene file path");
        else if (g == GY_SCN_OK && scene[0] == '\0')
            gy_scn_error(L, "scene", "must not be empty");
        else if (g == GY_SCN_OK) {
            a->spawn.scene = gy_scn_resolve(L, scene);
            if (a->spawn.scene == NULL)
                L->oom = true;
            else
                check_readable(L, "scene", a->spawn.scene, scene);
        }
        gy_scn_vec3(L, o, "offset", &a->spawn.offset);
        break;
    }
    case GY_SCENE_ACTION_JUMP:
        if (a->entity >= 0)
            require(L, "entity", a->entity, NEED_CHARACTER, what);
        if (gy_scn_number_min(L, o, "value", 0.0, false, &a->jump.speed) == GY_SCN_ABSENT)
            gy_scn_error(L, "value", "required: the take-off speed in m/s");
        break;
    case GY_SCENE_ACTION_RAYCAST: {
        const char *label;
        gy_scn_got g = gy_scn_string(L, o, "label", &label);
        if (g == GY_SCN_ABSENT)
            gy_scn_error(L, "label", "required: the name of this ray in the report");
        else if (g == GY_SCN_OK) {
            a->raycast.label = gy_scn_arena_strdup(&L->arena, label);
            if (a->raycast.label == NULL)
                L->oom = true;
        }
        required_vec3(L, o, "origin", &a->raycast.origin);
        gy_vec3 dir;
        if (required_vec3(L, o, "direction", &dir)) {
            double len = gy_v3_len(dir);
            if (!(len > 0.0) || !gy_is_finite(len))
                gy_scn_error(L, "direction",
                             "must be a non-zero vector (its length is the ray's range)");
            else
                a->raycast.direction = dir;
        }
        a->raycast.mask = UINT32_MAX;
        gy_scn_uint32(L, o, "mask", &a->raycast.mask);
        break;
    }
    case GY_SCENE_ACTION_EXPECT: {
        bool any = false;
        if (cJSON_GetObjectItemCaseSensitive(o, "position") != NULL) {
            any = true;
            a->expect.has_position =
                vec3_nullable(L, o, "position", &a->expect.position, a->expect.position_set);
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "velocity") != NULL) {
            any = true;
            if (a->entity >= 0)
                require(L, "velocity", a->entity, NEED_PHYSICS, "expect velocity");
            a->expect.has_velocity =
                vec3_nullable(L, o, "velocity", &a->expect.velocity, a->expect.velocity_set);
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "angular_velocity") != NULL) {
            any = true;
            if (a->entity >= 0)
                require(L, "angular_velocity", a->entity, NEED_PHYSICS, "expect angular_velocity");
            a->expect.has_angular_velocity =
                vec3_nullable(L, o, "angular_velocity", &a->expect.angular_velocity,
                              a->expect.angular_velocity_set);
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "grounded") != NULL) {
            any = true;
            if (a->entity >= 0)
                require(L, "grounded", a->entity, NEED_CHARACTER, "expect grounded");
            a->expect.has_grounded =
                gy_scn_bool(L, o, "grounded", &a->expect.grounded) == GY_SCN_OK;
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "ground_state") != NULL) {
            any = true;
            if (a->entity >= 0)
                require(L, "ground_state", a->entity, NEED_CHARACTER, "expect ground_state");
            int gs;
            if (gy_scn_enum(L, o, "ground_state", k_ground_states, 3, &gs) == GY_SCN_OK) {
                a->expect.has_ground_state = true;
                a->expect.ground_state = (uint8_t)gs;
            }
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "awake") != NULL) {
            any = true;
            if (a->entity >= 0)
                require(L, "awake", a->entity, NEED_DYNAMIC, "expect awake");
            a->expect.has_awake = gy_scn_bool(L, o, "awake", &a->expect.awake) == GY_SCN_OK;
        }
        if (!any)
            gy_scn_error(L, NULL,
                         "expect checks nothing: give position, velocity, angular_velocity, "
                         "grounded, ground_state or awake");
        a->expect.tolerance = 0.01;
        gy_scn_number_min(L, o, "tolerance", 0.0, false, &a->expect.tolerance);
        break;
    }
    case GY_SCENE_ACTION_EXPECT_EVENT: {
        int kind = -1;
        gy_scn_got g = gy_scn_enum(L, o, "kind", k_event_kinds, GY_SCENE_EVENT_KIND_COUNT, &kind);
        if (g == GY_SCN_ABSENT)
            gy_scn_error(L, "kind",
                         "required: \"enter\", \"stay\", \"exit\", \"sleep\", \"wake\" or "
                         "\"killed\"");
        else if (g == GY_SCN_OK)
            a->expect_event.kind = (gy_scene_event_kind)kind;
        /* sleep, wake and killed are of one body: no b. */
        bool body_kind = kind >= (int)GY_SCENE_EVENT_SLEEP;
        int32_t ea = gy_scn_entity_ref(L, o, "a", false, NULL);
        int32_t eb = -1;
        if (body_kind && cJSON_GetObjectItemCaseSensitive(o, "b") != NULL)
            gy_scn_error(L, "b", "a %s event is of one body: give only a", k_event_kinds[kind]);
        else if (!body_kind)
            eb = gy_scn_entity_ref(L, o, "b", kind < 0, NULL);
        if (ea >= 0 && (kind == GY_SCENE_EVENT_SLEEP || kind == GY_SCENE_EVENT_WAKE))
            require(L, "a", ea, NEED_DYNAMIC, "expect_event");
        else if (ea >= 0 && kind == GY_SCENE_EVENT_KILLED)
            require(L, "a", ea, NEED_KILLABLE, "expect_event");
        else if (ea >= 0)
            require(L, "a", ea, NEED_PHYSICS, "expect_event");
        if (eb >= 0 && eb == ea)
            gy_scn_error(L, "b", "a and b must be different entities");
        else if (eb >= 0)
            require(L, "b", eb, NEED_PHYSICS, "expect_event");
        a->expect_event.a = ea;
        a->expect_event.b = eb;
        double since;
        if (gy_scn_number_min(L, o, "since", 0.0, true, &since) == GY_SCN_OK) {
            if (since > a->at)
                gy_scn_error(L, "since", "must not be later than at (%.15g > %.15g)", since, a->at);
            else
                a->expect_event.since = since;
        }
        break;
    }
    case GY_SCENE_ACTION_SET_MOTOR:
        load_set_motor(L, o, a);
        break;
    default:
        (void)buf;
        break;
    }
}

/* Keys per action, besides at and do. */
static const char *const k_keys_velocity[] = {"entity", "value"};
static const char *const k_keys_impulse[] = {"entity", "value", "point"};
static const char *const k_keys_force[] = {"entity", "value", "duration"};
static const char *const k_keys_teleport[] = {"entity", "position", "rotation"};
static const char *const k_keys_destroy[] = {"entity"};
static const char *const k_keys_spawn[] = {"scene", "offset"};
static const char *const k_keys_raycast[] = {"label", "origin", "direction", "mask"};
static const char *const k_keys_expect[] = {
    "entity", "position", "velocity", "angular_velocity", "grounded", "awake", "ground_state",
    "tolerance"};
static const char *const k_keys_gravity[] = {"value"};
static const char *const k_keys_event[] = {"kind", "a", "b", "since"};
static const char *const k_keys_motor[] = {"joint", "velocity", "position", "max_force"};
static const char *const k_keys_move[] = {"entity", "position", "rotation", "duration"};

typedef struct action_keys {
    const char *const *keys;
    size_t count;
} action_keys;

#define KEYS(a)                                                                                    \
    {                                                                                              \
        a, sizeof a / sizeof a[0]                                                                  \
    }
static const action_keys k_action_keys[GY_SCENE_ACTION_TYPE_COUNT] = {
    [GY_SCENE_ACTION_SET_VELOCITY] = KEYS(k_keys_velocity),
    [GY_SCENE_ACTION_SET_ANGULAR_VELOCITY] = KEYS(k_keys_velocity),
    [GY_SCENE_ACTION_APPLY_IMPULSE] = KEYS(k_keys_impulse),
    [GY_SCENE_ACTION_APPLY_FORCE] = KEYS(k_keys_force),
    [GY_SCENE_ACTION_TELEPORT] = KEYS(k_keys_teleport),
    [GY_SCENE_ACTION_SET_ACTIVE] = KEYS(k_keys_velocity),
    [GY_SCENE_ACTION_SET_ENTITY_ACTIVE] = KEYS(k_keys_velocity),
    [GY_SCENE_ACTION_DESTROY] = KEYS(k_keys_destroy),
    [GY_SCENE_ACTION_SPAWN] = KEYS(k_keys_spawn),
    [GY_SCENE_ACTION_JUMP] = KEYS(k_keys_velocity),
    [GY_SCENE_ACTION_RAYCAST] = KEYS(k_keys_raycast),
    [GY_SCENE_ACTION_EXPECT] = KEYS(k_keys_expect),
    [GY_SCENE_ACTION_EXPECT_EVENT] = KEYS(k_keys_event),
    [GY_SCENE_ACTION_SET_MOTOR] = KEYS(k_keys_motor),
    [GY_SCENE_ACTION_MOVE_KINEMATIC] = KEYS(k_keys_move),
    [GY_SCENE_ACTION_SET_GRAVITY] = KEYS(k_keys_gravity),
    [GY_SCENE_ACTION_APPLY_TORQUE] = KEYS(k_keys_force),
    [GY_SCENE_ACTION_WAKE] = KEYS(k_keys_destroy),
};
#undef KEYS

static bool takes_entity(gy_scene_action_type t)
{
    return t != GY_SCENE_ACTION_SPAWN && t != GY_SCENE_ACTION_RAYCAST &&
           t != GY_SCENE_ACTION_EXPECT_EVENT && t != GY_SCENE_ACTION_SET_MOTOR &&
           t != GY_SCENE_ACTION_SET_GRAVITY;
}

static void load_action(gy_scn_loader *L, const cJSON *o, uint32_t index, gy_scene_action *a)
{
    char buf[64];
    a->index = index;
    a->entity = -1;
    a->type = GY_SCENE_ACTION_TYPE_COUNT;
    if (!cJSON_IsObject(o)) {
        gy_scn_error(L, NULL, "must be an action object {\"at\", \"do\", ...} (got %s)",
                     gy_scn_describe(o, buf, sizeof buf));
        return;
    }
    static const char *const common[] = {"at", "do"};
    int type = -1;
    gy_scn_got g = gy_scn_enum(L, o, "do", k_action_names, GY_SCENE_ACTION_TYPE_COUNT, &type);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, "do", "required: what to do (\"set_velocity\", \"expect\", ...)");
    if (type >= 0)
        gy_scn_check_keys(L, o, common, 2, k_action_keys[type].keys, k_action_keys[type].count);

    double at;
    g = gy_scn_number_min(L, o, "at", 0.0, true, &at);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, "at", "required: the time in seconds");
    else if (g == GY_SCN_OK)
        a->at = at;
    if (type < 0)
        return; /* without a known action the other keys cannot be judged */
    a->type = (gy_scene_action_type)type;
    if (takes_entity(a->type))
        a->entity = gy_scn_entity_ref(L, o, "entity", false, NULL);
    load_action_fields(L, o, a);
}

static int compare_actions(const void *pa, const void *pb)
{
    const gy_scene_action *a = pa, *b = pb;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    /* qsort is not stable: file order breaks ties. */
    return a->index < b->index ? -1 : (a->index > b->index ? 1 : 0);
}

void gy_scn_load_script(gy_scn_loader *L, const cJSON *script)
{
    if (script == NULL)
        return;
    gy_scene *s = L->scene;
    size_t mark = gy_scn_push_key(L, "script");
    if (!cJSON_IsArray(script)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an array of actions (got %s)",
                     gy_scn_describe(script, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    uint32_t n = 0;
    for (const cJSON *c = script->child; c != NULL; c = c->next)
        n++;
    s->actions = gy_scn_arena_array(&L->arena, n, sizeof *s->actions);
    if (n > 0 && s->actions == NULL) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    s->action_count = n;
    uint32_t i = 0;
    for (const cJSON *c = script->child; c != NULL && !L->oom; c = c->next, i++) {
        size_t am = gy_scn_push_index(L, i);
        load_action(L, c, i, &s->actions[i]);
        gy_scn_pop(L, am);
    }
    gy_scn_pop(L, mark);
    if (n > 1)
        qsort(s->actions, n, sizeof *s->actions, compare_actions);
}
