/* Scene entities: names, hierarchy, transforms and the physics component (colliders are in
 * scene_colliders.c). */
#include <math.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"
#include "scene_internal.h"

static const char *const k_physics_keys[] = {"body_type",
                                             "is_active",
                                             "mass",
                                             "mass_properties",
                                             "linear_velocity",
                                             "angular_velocity",
                                             "linear_damping",
                                             "angular_damping",
                                             "gravity_factor",
                                             "allow_sleeping",
                                             "start_asleep",
                                             "continuous",
                                             "lock_linear",
                                             "lock_angular",
                                             "is_character_controller",
                                             "max_slope_deg",
                                             "step_offset",
                                             "colliders"};

#define CHARACTER_SLOPE_DEG   45.0 /* max_slope_deg default */
#define CHARACTER_STEP_OFFSET 0.3  /* metres */

static gy_motion_type motion_of(gy_body_type t)
{
    switch (t) {
    case GY_BODY_DYNAMIC:
        return GY_MOTION_DYNAMIC;
    case GY_BODY_KINEMATIC:
        return GY_MOTION_KINEMATIC;
    case GY_BODY_STATIC:
    case GY_BODY_TRIGGER:
    default:
        return GY_MOTION_STATIC;
    }
}

static void oom_if_null(gy_scn_loader *L, const void *p)
{
    if (p == NULL)
        L->oom = true;
}

/* ---- the physics component ------------------------------------------------------------------- */

static bool load_bool3(gy_scn_loader *L, const cJSON *obj, const char *key, bool out[3])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return true;
    bool ok = cJSON_IsArray(v) && gy_scn_array_count(v) == 3u;
    if (ok)
        for (const cJSON *c = v->child; c != NULL; c = c->next)
            ok = ok && cJSON_IsBool(c);
    if (!ok) {
        char buf[64];
        gy_scn_error(L, key, "must be an array of 3 booleans [x, y, z] (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
        return false;
    }
    int i = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        out[i++] = cJSON_IsTrue(c);
    return true;
}

static bool load_inertia(gy_scn_loader *L, const cJSON *mp, gy_mat3 *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(mp, "inertia");
    if (v == NULL) {
        gy_scn_error(L, "inertia", "required: a 3x3 tensor in kg m^2 about the centre of mass");
        return false;
    }
    size_t mark = gy_scn_push_key(L, "inertia");
    bool ok = cJSON_IsArray(v) && gy_scn_array_count(v) == 3u;
    if (!ok) {
        char buf[64];
        gy_scn_error(L, NULL, "must be a 3x3 array [[..], [..], [..]] (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
    } else {
        int r = 0;
        for (const cJSON *row = v->child; row != NULL; row = row->next, r++) {
            size_t rm = gy_scn_push_index(L, (size_t)r);
            double d[3];
            if (cJSON_IsArray(row) && gy_scn_array_count(row) == 3u) {
                int k = 0;
                for (const cJSON *c = row->child; c != NULL; c = c->next, k++) {
                    size_t cm = gy_scn_push_index(L, (size_t)k);
                    char buf[64];
                    if (!cJSON_IsNumber(c)) {
                        gy_scn_error(L, NULL, "must be a number (got %s)",
                                     gy_scn_describe(c, buf, sizeof buf));
                        ok = false;
                    } else if (!gy_is_finite(c->valuedouble)) {
                        gy_scn_error(L, NULL, "number out of range (overflows to infinity)");
                        ok = false;
                    } else {
                        d[k] = c->valuedouble;
                    }
                    gy_scn_pop(L, cm);
                }
                if (ok)
                    for (int k2 = 0; k2 < 3; k2++)
                        out->m[r][k2] = d[k2];
            } else {
                char buf[64];
                gy_scn_error(L, NULL, "must be a row of 3 numbers (got %s)",
                             gy_scn_describe(row, buf, sizeof buf));
                ok = false;
            }
            gy_scn_pop(L, rm);
        }
    }
    if (ok) {
        /* The middleware's own test (backend_common.c), so what loads here is what it accepts. */
        const gy_mat3 *m = out;
        for (int i = 0; i < 3 && ok; i++)
            for (int j = i + 1; j < 3 && ok; j++)
                if (fabs(m->m[i][j] - m->m[j][i]) > 1e-9 * (fabs(m->m[i][j]) + 1.0)) {
                    gy_scn_error(L, NULL,
                                 "must be symmetric (inertia[%d][%d] is %.15g but inertia[%d][%d] "
                                 "is %.15g)",
                                 i, j, m->m[i][j], j, i, m->m[j][i]);
                    ok = false;
                }
        if (ok) {
            double a = m->m[0][0];
            double b = m->m[0][0] * m->m[1][1] - m->m[0][1] * m->m[1][0];
            double c = m->m[0][0] * (m->m[1][1] * m->m[2][2] - m->m[1][2] * m->m[2][1]) -
                       m->m[0][1] * (m->m[1][0] * m->m[2][2] - m->m[1][2] * m->m[2][0]) +
                       m->m[0][2] * (m->m[1][0] * m->m[2][1] - m->m[1][1] * m->m[2][0]);
            if (!(a > 1e-12 && b > 1e-12 && c > 1e-12)) {
                gy_scn_error(L, NULL,
                             "must be positive-definite (no rotation axis may have zero "
                             "or negative inertia)");
                ok = false;
            }
        }
    }
    gy_scn_pop(L, mark);
    return ok;
}

/* Keys the body type (or not being a character) leaves unread are errors, as the World refuses
 * the same fields: a value that would change nothing is never silently accepted. Keys given at
 * their default value change nothing either way and pass. */
static void check_unread_keys(gy_scn_loader *L, const cJSON *p, const gy_scene_physics *ph)
{
    const gy_body_def *b = &ph->body;
    const gy_body_def d = gy_default_body_def();
    const char *type = gy_scn_body_type_names[ph->body_type];
    if (ph->body_type != GY_BODY_DYNAMIC) {
        const struct {
            const char *key;
            bool changed;
        } dyn[] = {
            {"mass", b->mass != d.mass},
            {"mass_properties", b->has_mass_properties},
            {"linear_damping", b->linear_damping != d.linear_damping},
            {"angular_damping", b->angular_damping != d.angular_damping},
            {"gravity_factor", b->gravity_factor != d.gravity_factor},
            {"allow_sleeping", b->allow_sleeping != d.allow_sleeping},
            {"start_asleep", ph->start_asleep},
            {"continuous", b->continuous},
            {"lock_linear", b->lock_linear[0] || b->lock_linear[1] || b->lock_linear[2]},
            {"lock_angular", b->lock_angular[0] || b->lock_angular[1] || b->lock_angular[2]},
        };
        for (size_t i = 0; i < sizeof dyn / sizeof dyn[0]; i++)
            if (dyn[i].changed && gy_scn_has_key(p, dyn[i].key))
                gy_scn_error(L, dyn[i].key, "only a Dynamic body has it (this one is %s)", type);
    }
    bool moves = ph->body_type == GY_BODY_DYNAMIC || ph->body_type == GY_BODY_KINEMATIC;
    const gy_vec3 z = {0, 0, 0};
    if (!moves && memcmp(&b->linear_velocity, &z, sizeof z) != 0)
        gy_scn_error(L, "linear_velocity", "a %s body does not move", type);
    if (!moves && memcmp(&b->angular_velocity, &z, sizeof z) != 0)
        gy_scn_error(L, "angular_velocity", "a %s body does not move", type);
    if (!ph->is_character && gy_scn_has_key(p, "max_slope_deg") &&
        ph->max_slope != CHARACTER_SLOPE_DEG * GY_PI / 180.0)
        gy_scn_error(L, "max_slope_deg", "only a character controller has it");
    if (!ph->is_character && gy_scn_has_key(p, "step_offset") &&
        ph->step_offset != CHARACTER_STEP_OFFSET)
        gy_scn_error(L, "step_offset", "only a character controller has it");
}

static void load_mass_properties(gy_scn_loader *L, const cJSON *phys, gy_body_def *body)
{
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(phys, "mass_properties");
    if (mp == NULL)
        return;
    size_t mark = gy_scn_push_key(L, "mass_properties");
    if (!cJSON_IsObject(mp)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an object {center_of_mass, inertia} (got %s)",
                     gy_scn_describe(mp, buf, sizeof buf));
    } else {
        static const char *const keys[] = {"center_of_mass", "inertia"};
        gy_scn_check_keys(L, mp, keys, 2, NULL, 0);
        gy_vec3 com = gy_v3(0.0, 0.0, 0.0);
        bool ok = gy_scn_vec3(L, mp, "center_of_mass", &com) != GY_SCN_BAD;
        ok = load_inertia(L, mp, &body->mass_properties.inertia) && ok;
        if (ok) {
            body->mass_properties.center_of_mass = com;
            body->has_mass_properties = true;
        }
    }
    gy_scn_pop(L, mark);
}

/* The first collider key present in the physics object, or NULL. */
static const char *first_collider_key(const cJSON *p)
{
    for (const cJSON *c = p->child; c != NULL; c = c->next)
        for (size_t i = 0; i < GY_SCN_COLLIDER_KEY_COUNT; i++)
            if (c->string != NULL && strcmp(c->string, gy_scn_collider_keys[i]) == 0)
                return gy_scn_collider_keys[i];
    return NULL;
}

/* What the fields' own checks did not catch (an inertia tensor, a derived mass, a hull point
 * beyond the ranges of gyre/backend/backend.h): the World would refuse the body at instantiation,
 * so a scene that loads must not hold it. The shared validators decide, as they do for the World.
 */
static void check_ranges(gy_scn_loader *L, const gy_scene_physics *ph)
{
    gy_body_def b = ph->body;
    b.pose = gy_pose_identity();
    gy_result r = gy_validate_body_def(&b);
    for (uint32_t i = 0; r == GY_OK && i < ph->collider_count; i++) {
        const gy_scene_collider *sc = &ph->colliders[i];
        gy_collider_def c = sc->def;
        if (c.shape.type == GY_SHAPE_HULL && sc->vertex_count > 0) {
            gy_hull_def h = {sc->vertices, sc->vertex_count};
            r = gy_validate_hull_def(&h);
        } else if (c.shape.type == GY_SHAPE_MESH && sc->vertex_count > 0) {
            gy_mesh_def m = {sc->vertices, sc->vertex_count, sc->indices, sc->index_count};
            r = gy_validate_mesh_def(&m);
        }
        if (c.shape.type == GY_SHAPE_HULL || c.shape.type == GY_SHAPE_MESH)
            c.shape.resource.bits = 1; /* resolved at instantiation */
        if (r == GY_OK)
            r = gy_validate_collider_def(&c, b.type);
    }
    if (r != GY_OK)
        gy_scn_error(L, NULL,
                     "a number is outside the accepted ranges (%s; the ranges are listed in "
                     "docs/reliability.md)",
                     gy_result_message(r));
}

static gy_scene_physics *load_physics(gy_scn_loader *L, const cJSON *p)
{
    char buf[64];
    if (!cJSON_IsObject(p)) {
        gy_scn_error(L, NULL, "must be an object (got %s)", gy_scn_describe(p, buf, sizeof buf));
        return NULL;
    }
    gy_scn_check_keys(L, p, k_physics_keys, sizeof k_physics_keys / sizeof k_physics_keys[0],
                      gy_scn_collider_keys, GY_SCN_COLLIDER_KEY_COUNT);
    gy_scene_physics *ph = gy_scn_arena_alloc(&L->arena, sizeof *ph);
    if (ph == NULL) {
        L->oom = true;
        return NULL;
    }
    gy_scn_bool(L, p, "is_character_controller", &ph->is_character);
    int bt = GY_BODY_DYNAMIC;
    gy_scn_got g = gy_scn_enum(L, p, "body_type", gy_scn_body_type_names, GY_BODY_TYPE_COUNT, &bt);
    if (ph->is_character) {
        if (g == GY_SCN_OK && bt != GY_BODY_KINEMATIC)
            gy_scn_error(L, "body_type", "a character controller is Kinematic (got \"%s\")",
                         gy_scn_body_type_names[bt]);
        bt = GY_BODY_KINEMATIC;
    }
    ph->body_type = (gy_body_type)bt;
    ph->is_active = true;
    gy_scn_bool(L, p, "is_active", &ph->is_active);

    gy_body_def *b = &ph->body;
    *b = gy_default_body_def();
    b->type = motion_of(ph->body_type);
    uint32_t errors_before = gy_scn_error_count(L);
    double mass;
    if (gy_scn_number(L, p, "mass", &mass) == GY_SCN_OK) {
        if (!(mass > 0.0))
            gy_scn_error(L, "mass", "must be > 0%s (got %.15g)",
                         bt == GY_BODY_DYNAMIC ? " for a Dynamic body" : "", mass);
        else if (gy_scn_in_range(L, "mass", mass, GY_MIN_MASS, GY_MAX_MASS))
            b->mass = mass;
    }
    load_mass_properties(L, p, b);
    if (gy_scn_vec3(L, p, "linear_velocity", &b->linear_velocity) == GY_SCN_OK)
        gy_scn_vec3_within(L, "linear_velocity", b->linear_velocity, GY_MAX_MAGNITUDE);
    if (gy_scn_vec3(L, p, "angular_velocity", &b->angular_velocity) == GY_SCN_OK)
        gy_scn_vec3_within(L, "angular_velocity", b->angular_velocity, GY_MAX_MAGNITUDE);
    if (gy_scn_number_min(L, p, "linear_damping", 0.0, true, &b->linear_damping) == GY_SCN_OK)
        gy_scn_in_range(L, "linear_damping", b->linear_damping, 0.0, GY_MAX_COEFFICIENT);
    if (gy_scn_number_min(L, p, "angular_damping", 0.0, true, &b->angular_damping) == GY_SCN_OK)
        gy_scn_in_range(L, "angular_damping", b->angular_damping, 0.0, GY_MAX_COEFFICIENT);
    if (gy_scn_number(L, p, "gravity_factor", &b->gravity_factor) == GY_SCN_OK)
        gy_scn_in_range(L, "gravity_factor", b->gravity_factor, -GY_MAX_GRAVITY_FACTOR,
                        GY_MAX_GRAVITY_FACTOR);
    gy_scn_bool(L, p, "allow_sleeping", &b->allow_sleeping);
    gy_scn_bool(L, p, "start_asleep", &ph->start_asleep);
    gy_scn_bool(L, p, "continuous", &b->continuous);
    load_bool3(L, p, "lock_linear", b->lock_linear);
    load_bool3(L, p, "lock_angular", b->lock_angular);

    ph->max_slope = CHARACTER_SLOPE_DEG * GY_PI / 180.0;
    ph->step_offset = CHARACTER_STEP_OFFSET;
    double deg;
    if (gy_scn_number(L, p, "max_slope_deg", &deg) == GY_SCN_OK) {
        if (!(deg > 0.0 && deg < 90.0))
            gy_scn_error(L, "max_slope_deg",
                         "must be between 0 and 90 degrees, exclusive (got "
                         "%.15g)",
                         deg);
        else
            ph->max_slope = deg * GY_PI / 180.0;
    }
    gy_scn_number_min(L, p, "step_offset", 0.0, true, &ph->step_offset);
    check_unread_keys(L, p, ph);

    /* Colliders: the inline one (keys on the physics object itself), then `colliders`. */
    gy_scn_collider_ctx ctx = {ph->body_type, ph->is_character};
    bool inline_collider = gy_scn_has_key(p, "shape") || ph->is_character;
    if (!inline_collider) {
        const char *k = first_collider_key(p);
        if (k != NULL)
            gy_scn_error(L, "shape",
                         "required: \"%s\" describes the body's first collider, which needs a "
                         "shape",
                         k);
    }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p, "colliders");
    uint32_t extra = 0;
    bool colliders_bad = false;
    if (arr != NULL) {
        if (!cJSON_IsArray(arr)) {
            gy_scn_error(L, "colliders", "must be an array of colliders (got %s)",
                         gy_scn_describe(arr, buf, sizeof buf));
            arr = NULL;
            colliders_bad = true;
        } else if (ph->is_character) {
            gy_scn_error(L, "colliders",
                         "a character controller has exactly one collider, its capsule");
            arr = NULL;
            colliders_bad = true;
        } else {
            extra = gy_scn_array_count(arr);
        }
    }
    uint32_t n = (inline_collider ? 1u : 0u) + extra;
    /* The physics layer refuses a body without colliders; say so here, where it was written. */
    if (n == 0 && !colliders_bad && first_collider_key(p) == NULL)
        gy_scn_error(L, arr != NULL ? "colliders" : "shape",
                     "a physics body needs at least one collider (an inline `shape` or an entry "
                     "in `colliders`)");
    ph->colliders = gy_scn_arena_array(&L->arena, n, sizeof *ph->colliders);
    if (n > 0 && ph->colliders == NULL) {
        L->oom = true;
        return NULL;
    }
    ph->collider_count = n;
    double solid = 0.0, sensor = 0.0;
    uint32_t i = 0;
    if (inline_collider) {
        double vol;
        gy_scn_load_collider(L, p, &ctx, &ph->colliders[i], &vol);
        *(ph->colliders[i].def.is_sensor ? &sensor : &solid) += vol * ph->colliders[i].def.density;
        i++;
    }
    if (arr != NULL) {
        size_t am = gy_scn_push_key(L, "colliders");
        uint32_t k = 0;
        for (const cJSON *c = arr->child; c != NULL; c = c->next, k++, i++) {
            size_t cm = gy_scn_push_index(L, k);
            ph->colliders[i].def = gy_default_collider_def();
            if (!cJSON_IsObject(c)) {
                gy_scn_error(L, NULL, "must be a collider object (got %s)",
                             gy_scn_describe(c, buf, sizeof buf));
            } else {
                gy_scn_check_keys(L, c, gy_scn_collider_keys, GY_SCN_COLLIDER_KEY_COUNT, NULL, 0);
                double vol;
                gy_scn_load_collider(L, c, &ctx, &ph->colliders[i], &vol);
                *(ph->colliders[i].def.is_sensor ? &sensor : &solid) +=
                    vol * ph->colliders[i].def.density;
            }
            gy_scn_pop(L, cm);
            if (L->oom)
                return NULL;
        }
        gy_scn_pop(L, am);
    }
    /* The middleware takes an inertia override only with a total mass; derive it the way the
     * adapters would (1000 kg/m³ × relative density; sensors only when nothing else has volume;
     * 1 kg when nothing has volume, as for a Dynamic body whose only collider is a Mesh, which
     * the collider rules refuse but only after this runs). */
    if (b->has_mass_properties && !(b->mass > 0.0)) {
        double m = 1000.0 * (solid > 0.0 ? solid : sensor);
        b->mass = m > 0.0 && gy_is_finite(m) ? m : 1.0;
    }
    if (gy_scn_error_count(L) == errors_before)
        check_ranges(L, ph);
    return ph;
}

/* ---- entities -------------------------------------------------------------------------------- */

static void load_transform(gy_scn_loader *L, const cJSON *t, gy_scene_entity *e)
{
    size_t mark = gy_scn_push_key(L, "transform");
    if (!cJSON_IsObject(t)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an object (got %s)", gy_scn_describe(t, buf, sizeof buf));
    } else {
        static const char *const keys[] = {"position", "rotation", "rotation_euler", "scale"};
        gy_scn_check_keys(L, t, keys, 4, NULL, 0);
        if (gy_scn_vec3(L, t, "position", &e->position) == GY_SCN_OK)
            gy_scn_vec3_within(L, "position", e->position, GY_MAX_MAGNITUDE);
        gy_scn_rotation(L, t, "rotation", "rotation_euler", &e->rotation);
        gy_vec3 s;
        if (gy_scn_vec3(L, t, "scale", &s) == GY_SCN_OK) {
            if (s.x == 0.0 || s.y == 0.0 || s.z == 0.0)
                gy_scn_error(L, "scale", "components must be non-zero (got [%.15g, %.15g, %.15g])",
                             s.x, s.y, s.z);
            else
                e->scale = s;
        }
    }
    gy_scn_pop(L, mark);
}

static void load_entity(gy_scn_loader *L, const cJSON *j, uint32_t index, gy_scene_entity *e)
{
    char buf[64];
    e->active = true;
    e->parent = -1;
    e->rotation = gy_quat_identity();
    e->scale = gy_v3(1.0, 1.0, 1.0);
    e->name = "";
    if (!cJSON_IsObject(j)) {
        gy_scn_error(L, NULL, "must be an entity object (got %s)",
                     gy_scn_describe(j, buf, sizeof buf));
        return;
    }
    static const char *const keys[] = {"name", "active", "parent", "transform", "components"};
    gy_scn_check_keys(L, j, keys, 5, NULL, 0);

    const char *name;
    gy_scn_got g = gy_scn_string(L, j, "name", &name);
    if (g == GY_SCN_ABSENT) {
        gy_scn_error(L, "name", "required");
    } else if (g == GY_SCN_OK) {
        int32_t first = gy_scn_names_find(&L->entity_names, name);
        if (name[0] == '\0')
            gy_scn_error(L, "name", "must not be empty");
        else if (first >= 0 && (uint32_t)first != index)
            gy_scn_error(
                L, "name", "duplicate name %s (first used by entities[%d])",
                gy_scn_describe(cJSON_GetObjectItemCaseSensitive(j, "name"), buf, sizeof buf),
                first);
        e->name = gy_scn_arena_strdup(&L->arena, name);
        oom_if_null(L, e->name);
    }
    gy_scn_bool(L, j, "active", &e->active);

    const char *parent;
    if (gy_scn_string(L, j, "parent", &parent) == GY_SCN_OK) {
        int32_t pi = gy_scn_names_find(&L->entity_names, parent);
        if (pi < 0)
            gy_scn_error(
                L, "parent", "no entity named %s",
                gy_scn_describe(cJSON_GetObjectItemCaseSensitive(j, "parent"), buf, sizeof buf));
        else if ((uint32_t)pi == index)
            gy_scn_error(L, "parent", "an entity cannot be its own parent");
        else
            e->parent = pi;
    }

    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "transform");
    if (t != NULL)
        load_transform(L, t, e);

    const cJSON *comps = cJSON_GetObjectItemCaseSensitive(j, "components");
    if (comps != NULL) {
        size_t cm = gy_scn_push_key(L, "components");
        if (!cJSON_IsObject(comps)) {
            gy_scn_error(L, NULL, "must be an object (got %s)",
                         gy_scn_describe(comps, buf, sizeof buf));
        } else {
            static const char *const ckeys[] = {"physics"};
            gy_scn_check_keys(L, comps, ckeys, 1, NULL, 0);
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(comps, "physics");
            if (p != NULL) {
                size_t pm = gy_scn_push_key(L, "physics");
                e->physics = load_physics(L, p);
                gy_scn_pop(L, pm);
            }
        }
        gy_scn_pop(L, cm);
    }
}

void gy_scn_load_entities(gy_scn_loader *L, const cJSON *entities)
{
    gy_scene *s = L->scene;
    uint32_t n = 0;
    size_t mark = gy_scn_push_key(L, "entities");
    if (entities != NULL && !cJSON_IsArray(entities)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an array of entities (got %s)",
                     gy_scn_describe(entities, buf, sizeof buf));
        entities = NULL;
    }
    if (entities != NULL)
        n = gy_scn_array_count(entities);
    if (n > (uint32_t)INT32_MAX) {
        gy_scn_error(L, NULL, "too many entities");
        n = 0;
        entities = NULL;
    }
    /* Joints and the script look names up even when there are no entities. */
    if (!gy_scn_names_init(&L->entity_names, L->a, n)) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    if (n == 0) {
        gy_scn_pop(L, mark);
        return;
    }
    s->entities = gy_scn_arena_array(&L->arena, n, sizeof *s->entities);
    if (s->entities == NULL) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    s->entity_count = n;

    /* First pass: names, so parents (and later joints and scripts) may refer forward. */
    uint32_t i = 0;
    for (const cJSON *c = entities->child; c != NULL; c = c->next, i++) {
        const cJSON *nm = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "name") : NULL;
        if (cJSON_IsString(nm) && nm->valuestring != NULL && nm->valuestring[0] != '\0')
            gy_scn_names_put(&L->entity_names, nm->valuestring, (int32_t)i);
    }
    i = 0;
    for (const cJSON *c = entities->child; c != NULL && !L->oom; c = c->next, i++) {
        size_t em = gy_scn_push_index(L, i);
        load_entity(L, c, i, &s->entities[i]);
        gy_scn_pop(L, em);
    }
    gy_scn_pop(L, mark);
}

/* ---- hierarchy ------------------------------------------------------------------------------- */

static bool is_dynamic(const gy_scene_entity *e)
{
    return e->physics != NULL && e->physics->body_type == GY_BODY_DYNAMIC;
}

/* Reports one error per parent cycle, at its first entity in file order, naming the loop. */
static void report_cycle(gy_scn_loader *L, int32_t start)
{
    const gy_scene *s = L->scene;
    int32_t lowest = start;
    for (int32_t j = s->entities[start].parent; j != start; j = s->entities[j].parent)
        if (j < lowest)
            lowest = j;
    char chain[400];
    size_t len = 0;
    int32_t j = lowest;
    do {
        int w = snprintf(chain + len, sizeof chain - len, "\"%.40s\" -> ", s->entities[j].name);
        if (w < 0 || (size_t)w >= sizeof chain - len) {
            len = sizeof chain - 1u;
            break;
        }
        len += (size_t)w;
        j = s->entities[j].parent;
    } while (j != lowest);
    if (len + 50u < sizeof chain)
        snprintf(chain + len, sizeof chain - len, "\"%.40s\"", s->entities[lowest].name);
    size_t em = gy_scn_push_key(L, "entities");
    gy_scn_push_index(L, (size_t)lowest);
    gy_scn_error(L, "parent", "parent cycle: %s", chain);
    gy_scn_pop(L, em);
}

void gy_scn_check_hierarchy(gy_scn_loader *L)
{
    gy_scene *s = L->scene;
    uint32_t n = s->entity_count;
    if (n == 0)
        return;
    /* state: 0 unvisited, 1 on the current walk, 2 done, 3 on a cycle. */
    uint8_t *state = gy_alloc_zeroed(L->a, n);
    int32_t *dyn = gy_alloc(L->a, (size_t)n * sizeof *dyn); /* nearest Dynamic ancestor */
    int32_t *stack = gy_alloc(L->a, (size_t)n * sizeof *stack);
    if (state == NULL || dyn == NULL || stack == NULL) {
        L->oom = true;
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t j = (int32_t)i;
        while (j >= 0 && state[j] == 0) {
            state[j] = 1;
            j = s->entities[j].parent;
        }
        if (j >= 0 && state[j] == 1) {
            report_cycle(L, j);
            int32_t k = j;
            do {
                state[k] = 3;
                k = s->entities[k].parent;
            } while (k != j);
        }
        for (j = (int32_t)i; j >= 0 && state[j] == 1; j = s->entities[j].parent)
            state[j] = 2;
    }

    /* Nearest Dynamic ancestor, memoised up each chain so deep hierarchies stay linear. */
    const int32_t unknown = -2;
    for (uint32_t i = 0; i < n; i++)
        dyn[i] = state[i] == 3 ? -1 : unknown;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t top = 0;
        int32_t j = (int32_t)i;
        while (dyn[j] == unknown) {
            stack[top++] = j;
            int32_t p = s->entities[j].parent;
            if (p < 0 || is_dynamic(&s->entities[p]) || dyn[p] != unknown)
                break;
            j = p;
        }
        while (top > 0) {
            int32_t k = stack[--top];
            int32_t p = s->entities[k].parent;
            if (p < 0)
                dyn[k] = -1;
            else if (is_dynamic(&s->entities[p]))
                dyn[k] = p;
            else
                dyn[k] = dyn[p];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (s->entities[i].physics == NULL || dyn[i] < 0)
            continue;
        size_t em = gy_scn_push_key(L, "entities");
        gy_scn_push_index(L, i);
        gy_scn_push_key(L, "components");
        gy_scn_error(L, "physics",
                     "a physics body cannot sit under a Dynamic body: its ancestor \"%.60s\" is "
                     "Dynamic and the simulation owns that pose",
                     s->entities[dyn[i]].name);
        gy_scn_pop(L, em);
    }
done:
    if (state != NULL)
        gy_free(L->a, state, n);
    if (dyn != NULL)
        gy_free(L->a, dyn, (size_t)n * sizeof *dyn);
    if (stack != NULL)
        gy_free(L->a, stack, (size_t)n * sizeof *stack);
}
