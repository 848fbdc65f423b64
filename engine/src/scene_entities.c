/* Scene entities: names, hierarchy, transforms, the physics component and its colliders. */
#include <math.h>
#include <string.h>

#include "gyre/geometry.h"
#include "gyre/math.h"
#include "scene_internal.h"

static const char *const k_body_type_names[] = {"Dynamic", "Static", "Kinematic", "Trigger"};

static const char *const k_shape_names[] = {"Sphere", "Box",  "Capsule", "Cylinder",
                                            "Plane",  "Hull", "Mesh"};

/* Collider keys, shape-specific ones first (their order matches the SK_ bits below). */
static const char *const k_collider_keys[] = {
    "radius",         "height",         "box_size",
    "normal",         "offset",         "points",
    "vertices",       "indices",        "collision",
    "shape",          "local_position", "local_rotation",
    "local_rotation_euler", "density",  "material",
    "friction",       "restitution",    "is_sensor",
    "contact_response", "surface_velocity", "one_way",
    "one_way_normal", "category",       "mask"};
#define COLLIDER_KEY_COUNT (sizeof k_collider_keys / sizeof k_collider_keys[0])
#define SHAPE_KEY_COUNT    9u

enum {
    SK_RADIUS = 1u << 0,
    SK_HEIGHT = 1u << 1,
    SK_BOX_SIZE = 1u << 2,
    SK_NORMAL = 1u << 3,
    SK_OFFSET = 1u << 4,
    SK_POINTS = 1u << 5,
    SK_VERTICES = 1u << 6,
    SK_INDICES = 1u << 7,
    SK_COLLISION = 1u << 8,
};

/* Which shape-specific keys each shape reads. */
static const unsigned k_shape_keys[GY_SHAPE_TYPE_COUNT] = {
    [GY_SHAPE_SPHERE] = SK_RADIUS,
    [GY_SHAPE_BOX] = SK_BOX_SIZE,
    [GY_SHAPE_CAPSULE] = SK_RADIUS | SK_HEIGHT,
    [GY_SHAPE_CYLINDER] = SK_RADIUS | SK_HEIGHT,
    [GY_SHAPE_PLANE] = SK_NORMAL | SK_OFFSET,
    [GY_SHAPE_HULL] = SK_POINTS | SK_COLLISION,
    [GY_SHAPE_MESH] = SK_VERTICES | SK_INDICES | SK_COLLISION,
};

static const char *const k_physics_keys[] = {
    "body_type",       "is_active",       "mass",
    "mass_properties", "linear_velocity", "angular_velocity",
    "linear_damping",  "angular_damping", "gravity_factor",
    "allow_sleeping",  "continuous",      "lock_linear",
    "lock_angular",    "is_character_controller", "max_slope_deg",
    "step_offset",     "colliders"};

#define CHARACTER_RADIUS 0.3
#define CHARACTER_HEIGHT 1.8

typedef struct collider_ctx {
    gy_scene_body_type body_type;
    bool character;
} collider_ctx;

static bool has_key(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

static void oom_if_null(gy_scn_loader *L, const void *p)
{
    if (p == NULL)
        L->oom = true;
}

static gy_motion_type motion_of(gy_scene_body_type t)
{
    switch (t) {
    case GY_SCENE_BODY_DYNAMIC:
        return GY_MOTION_DYNAMIC;
    case GY_SCENE_BODY_KINEMATIC:
        return GY_MOTION_KINEMATIC;
    case GY_SCENE_BODY_STATIC:
    case GY_SCENE_BODY_TRIGGER:
    default:
        return GY_MOTION_STATIC;
    }
}

/* ---- geometry arrays ------------------------------------------------------------------------- */

static uint32_t array_count(const cJSON *v)
{
    uint32_t n = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        n++;
    return n;
}

/* obj[key] as an array of vec3 in the arena; false after an error. */
static bool load_points(gy_scn_loader *L, const cJSON *obj, const char *key, gy_vec3 **out,
                        uint32_t *count)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    size_t mark = gy_scn_push_key(L, key);
    bool ok = true;
    if (!cJSON_IsArray(v)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an array of [x, y, z] points (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
        ok = false;
    } else {
        uint32_t n = array_count(v);
        gy_vec3 *pts = gy_scn_arena_array(&L->arena, n, sizeof *pts);
        if (n > 0 && pts == NULL) {
            L->oom = true;
            ok = false;
        } else {
            uint32_t i = 0;
            for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
                size_t im = gy_scn_push_index(L, i);
                ok = gy_scn_value_vec3(L, c, &pts[i]) && ok;
                gy_scn_pop(L, im);
            }
            *out = pts;
            *count = n;
        }
    }
    gy_scn_pop(L, mark);
    return ok;
}

static bool load_indices(gy_scn_loader *L, const cJSON *obj, uint32_t vertex_count,
                         bool check_range, uint32_t **out, uint32_t *count)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "indices");
    size_t mark = gy_scn_push_key(L, "indices");
    bool ok = true;
    char buf[64];
    if (!cJSON_IsArray(v)) {
        gy_scn_error(L, NULL, "must be an array of vertex indices (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
        ok = false;
    } else {
        uint32_t n = array_count(v);
        if (n == 0 || n % 3u != 0) {
            gy_scn_error(L, NULL, "must hold a non-zero multiple of 3 indices (got %u)", n);
            ok = false;
        }
        uint32_t *idx = gy_scn_arena_array(&L->arena, n, sizeof *idx);
        if (n > 0 && idx == NULL) {
            L->oom = true;
            ok = false;
        } else {
            uint32_t i = 0;
            for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
                size_t im = gy_scn_push_index(L, i);
                if (!cJSON_IsNumber(c) || floor(c->valuedouble) != c->valuedouble ||
                    !gy_is_finite(c->valuedouble) || c->valuedouble < 0.0) {
                    gy_scn_error(L, NULL, "must be a vertex index, an integer >= 0 (got %s)",
                                 gy_scn_describe(c, buf, sizeof buf));
                    ok = false;
                } else if (check_range && c->valuedouble >= (double)vertex_count) {
                    gy_scn_error(L, NULL, "index %.15g out of range (%u vertices)",
                                 c->valuedouble, vertex_count);
                    ok = false;
                } else if (idx != NULL) {
                    idx[i] = (uint32_t)c->valuedouble;
                }
                gy_scn_pop(L, im);
            }
            *out = idx;
            *count = n;
        }
    }
    gy_scn_pop(L, mark);
    return ok;
}

/* Builds the hull once to prove it has volume (and to know that volume for mass). */
static bool hull_volume(gy_scn_loader *L, const char *key, const gy_vec3 *pts, uint32_t n,
                        double *volume)
{
    gy_hull h;
    gy_result r = gy_hull_build(L->a, pts, n, &h);
    if (r == GY_ERR_OUT_OF_MEMORY) {
        L->oom = true;
        return false;
    }
    if (r != GY_OK) {
        gy_scn_error(L, key, "the points are coplanar or collinear: a Hull needs volume");
        return false;
    }
    *volume = h.volume;
    gy_hull_free(L->a, &h);
    return true;
}

/* ---- colliders ------------------------------------------------------------------------------- */

static void load_hull(gy_scn_loader *L, const cJSON *c, gy_scene_collider *out, double *volume)
{
    bool has_points = has_key(c, "points"), has_file = has_key(c, "collision");
    if (has_points && has_file) {
        gy_scn_error(L, "collision", "give points or collision, not both");
        return;
    }
    if (!has_points && !has_file) {
        gy_scn_error(L, "points", "required for a Hull (or give collision: an OBJ file)");
        return;
    }
    if (has_points) {
        gy_vec3 *pts = NULL;
        uint32_t n = 0;
        if (!load_points(L, c, "points", &pts, &n))
            return;
        if (n < 4) {
            gy_scn_error(L, "points", "a Hull needs at least 4 points (got %u)", n);
            return;
        }
        if (hull_volume(L, "points", pts, n, volume)) {
            out->vertices = pts;
            out->vertex_count = n;
        }
        return;
    }
    const char *file;
    if (gy_scn_string(L, c, "collision", &file) != GY_SCN_OK)
        return;
    const gy_scn_obj_cache *obj = gy_scn_load_obj(L, "collision", file);
    if (obj == NULL)
        return;
    if (obj->mesh.vertex_count < 4) {
        gy_scn_error(L, "collision", "%s: a Hull needs at least 4 vertices (got %u)", file,
                     obj->mesh.vertex_count);
        return;
    }
    if (hull_volume(L, "collision", obj->mesh.vertices, obj->mesh.vertex_count, volume)) {
        out->vertices = obj->mesh.vertices;
        out->vertex_count = obj->mesh.vertex_count;
        out->collision = obj->resolved;
    }
}

static void load_mesh(gy_scn_loader *L, const cJSON *c, gy_scene_collider *out)
{
    bool has_inline = has_key(c, "vertices") || has_key(c, "indices");
    bool has_file = has_key(c, "collision");
    if (has_inline && has_file) {
        gy_scn_error(L, "collision", "give vertices and indices or collision, not both");
        return;
    }
    if (!has_inline && !has_file) {
        gy_scn_error(L, "vertices",
                     "required for a Mesh, with indices (or give collision: an OBJ file)");
        return;
    }
    if (has_inline) {
        gy_vec3 *v = NULL;
        uint32_t nv = 0;
        uint32_t *idx = NULL;
        uint32_t ni = 0;
        bool ok = true;
        if (!has_key(c, "vertices")) {
            gy_scn_error(L, "vertices", "required for a Mesh given indices");
            ok = false;
        } else {
            ok = load_points(L, c, "vertices", &v, &nv);
            if (ok && nv == 0) {
                gy_scn_error(L, "vertices", "a Mesh needs at least 3 vertices (got 0)");
                ok = false;
            }
        }
        if (!has_key(c, "indices")) {
            gy_scn_error(L, "indices", "required for a Mesh given vertices");
            ok = false;
        } else {
            ok = load_indices(L, c, nv, ok, &idx, &ni) && ok;
        }
        if (ok) {
            out->vertices = v;
            out->vertex_count = nv;
            out->indices = idx;
            out->index_count = ni;
        }
        return;
    }
    const char *file;
    if (gy_scn_string(L, c, "collision", &file) != GY_SCN_OK)
        return;
    const gy_scn_obj_cache *obj = gy_scn_load_obj(L, "collision", file);
    if (obj == NULL)
        return;
    if (obj->mesh.index_count == 0) {
        gy_scn_error(L, "collision", "%s: no faces: a Mesh needs triangles", file);
        return;
    }
    out->vertices = obj->mesh.vertices;
    out->vertex_count = obj->mesh.vertex_count;
    out->indices = obj->mesh.indices;
    out->index_count = obj->mesh.index_count;
    out->collision = obj->resolved;
}

/* A radius or height: required > 0 unless a default applies (characters). */
static bool load_size(gy_scn_loader *L, const cJSON *c, const char *key, const char *shape,
                      bool has_default, double *out)
{
    gy_scn_got g = gy_scn_number_min(L, c, key, 0.0, false, out);
    if (g == GY_SCN_ABSENT && !has_default) {
        gy_scn_error(L, key, "required for a %s", shape);
        return false;
    }
    return g != GY_SCN_BAD;
}

static void load_shape(gy_scn_loader *L, const cJSON *c, const collider_ctx *ctx,
                       gy_scene_collider *out, double *volume)
{
    gy_shape *s = &out->def.shape;
    const char *sname = k_shape_names[s->type];
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        load_size(L, c, "radius", sname, false, &s->radius);
        break;
    case GY_SHAPE_BOX: {
        gy_vec3 size;
        gy_scn_got g = gy_scn_vec3(L, c, "box_size", &size);
        if (g == GY_SCN_ABSENT)
            gy_scn_error(L, "box_size", "required for a Box: full extents [x, y, z]");
        else if (g == GY_SCN_OK && !(size.x > 0.0 && size.y > 0.0 && size.z > 0.0))
            gy_scn_error(L, "box_size", "every extent must be > 0 (got [%.15g, %.15g, %.15g])",
                         size.x, size.y, size.z);
        else if (g == GY_SCN_OK)
            s->box_size = size;
        break;
    }
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER: {
        if (ctx->character) {
            s->radius = CHARACTER_RADIUS;
            s->height = CHARACTER_HEIGHT;
        }
        bool r_ok = load_size(L, c, "radius", sname, ctx->character, &s->radius);
        bool h_ok = load_size(L, c, "height", sname, ctx->character, &s->height);
        if (r_ok && h_ok && s->type == GY_SHAPE_CAPSULE && !(s->height > 2.0 * s->radius))
            gy_scn_error(L, "height",
                         "must exceed 2 x radius (%.15g) for a Capsule: the height includes "
                         "both caps (got %.15g)",
                         2.0 * s->radius, s->height);
        break;
    }
    case GY_SHAPE_PLANE: {
        if (ctx->body_type != GY_SCENE_BODY_STATIC && ctx->body_type != GY_SCENE_BODY_TRIGGER)
            gy_scn_error(L, "shape", "a Plane needs a Static body (this one is %s)",
                         k_body_type_names[ctx->body_type]);
        static const char *const pose_keys[] = {"local_position", "local_rotation",
                                                "local_rotation_euler"};
        for (size_t i = 0; i < 3; i++)
            if (has_key(c, pose_keys[i]))
                gy_scn_error(L, pose_keys[i],
                             "not used by a Plane: its normal and offset are in world space");
        gy_vec3 n = gy_v3(0.0, 1.0, 0.0);
        double offset = 0.0;
        gy_scn_got gn = gy_scn_vec3(L, c, "normal", &n);
        gy_scn_number(L, c, "offset", &offset);
        double len = gy_v3_len(n);
        if (gn == GY_SCN_OK && !(len > 1e-9))
            gy_scn_error(L, "normal", "must not be the zero vector");
        else if (gn != GY_SCN_BAD && gy_is_finite(len) && len > 1e-9) {
            /* dot(n, p) = offset keeps describing the same plane when both are divided by |n|. */
            s->normal = gy_v3_scale(n, 1.0 / len);
            s->offset = offset / len;
        } else if (gn == GY_SCN_OK) {
            gy_scn_error(L, "normal", "length out of range");
        }
        break;
    }
    case GY_SHAPE_HULL:
        load_hull(L, c, out, volume);
        return;
    case GY_SHAPE_MESH:
        if (ctx->body_type == GY_SCENE_BODY_DYNAMIC)
            gy_scn_error(L, "shape", "a Mesh needs a Static or Kinematic body (this one is %s)",
                         k_body_type_names[ctx->body_type]);
        load_mesh(L, c, out);
        return;
    default:
        return;
    }
    *volume = gy_shape_volume(s, NULL);
}

/* One collider from `c` (an element of `colliders`, or the physics object itself for the inline
 * collider; the caller checked the keys). *volume receives its volume in m³ (0 when unknown). */
static void load_collider(gy_scn_loader *L, const cJSON *c, const collider_ctx *ctx,
                          gy_scene_collider *out, double *volume)
{
    *volume = 0.0;
    out->def = gy_default_collider_def();
    gy_collider_def *d = &out->def;

    int shape = GY_SHAPE_CAPSULE;
    gy_scn_got g = gy_scn_enum(L, c, "shape", k_shape_names, GY_SHAPE_TYPE_COUNT, &shape);
    if (g == GY_SCN_ABSENT && !ctx->character)
        gy_scn_error(L, "shape", "required");
    bool shape_ok = g == GY_SCN_OK || (g == GY_SCN_ABSENT && ctx->character);
    if (g == GY_SCN_OK && ctx->character && shape != GY_SHAPE_CAPSULE) {
        gy_scn_error(L, "shape", "a character controller's collider is a Capsule (got \"%s\")",
                     k_shape_names[shape]);
        shape_ok = false;
    }
    if (shape_ok) {
        d->shape.type = (gy_shape_type)shape;
        d->shape.radius = 0.0;
        for (size_t i = 0; i < SHAPE_KEY_COUNT; i++)
            if ((k_shape_keys[shape] & (1u << i)) == 0 && has_key(c, k_collider_keys[i]))
                gy_scn_error(L, k_collider_keys[i], "not used by a %s collider",
                             k_shape_names[shape]);
        load_shape(L, c, ctx, out, volume);
    }

    if (!(shape_ok && shape == GY_SHAPE_PLANE)) {
        gy_scn_vec3(L, c, "local_position", &d->local_pose.position);
        gy_scn_rotation(L, c, "local_rotation", "local_rotation_euler", &d->local_pose.rotation);
    }
    gy_scn_number_min(L, c, "density", 0.0, false, &d->density);

    const char *mat;
    if (gy_scn_string(L, c, "material", &mat) == GY_SCN_OK) {
        int32_t mi = gy_scn_names_find(&L->material_names, mat);
        if (mi < 0) {
            char buf[64];
            gy_scn_error(L, "material", "no material named %s in materials",
                         gy_scn_describe(cJSON_GetObjectItemCaseSensitive(c, "material"), buf,
                                         sizeof buf));
        } else {
            d->material = L->scene->materials[mi].material;
            out->material = L->scene->materials[mi].name;
        }
    }
    gy_scn_number_min(L, c, "friction", 0.0, true, &d->material.friction);
    gy_scn_number_min(L, c, "restitution", 0.0, true, &d->material.restitution);

    bool sensor = false;
    if (gy_scn_bool(L, c, "is_sensor", &sensor) == GY_SCN_OK) {
        d->is_sensor = sensor;
        if (!sensor && ctx->body_type == GY_SCENE_BODY_TRIGGER)
            gy_scn_error(L, "is_sensor", "a Trigger's colliders are always sensors");
    }
    if (ctx->body_type == GY_SCENE_BODY_TRIGGER)
        d->is_sensor = true;
    gy_scn_bool(L, c, "contact_response", &d->contact_response);
    gy_scn_vec3(L, c, "surface_velocity", &d->surface_velocity);
    gy_scn_bool(L, c, "one_way", &d->one_way);
    gy_vec3 n;
    if (gy_scn_vec3(L, c, "one_way_normal", &n) == GY_SCN_OK) {
        double len = gy_v3_len(n);
        if (!(len > 1e-9) || !gy_is_finite(len))
            gy_scn_error(L, "one_way_normal", "must be a non-zero vector");
        else
            d->one_way_normal = gy_v3_scale(n, 1.0 / len);
    }
    gy_scn_uint32(L, c, "category", &d->category);
    gy_scn_uint32(L, c, "mask", &d->mask);
}

/* ---- the physics component ------------------------------------------------------------------- */

static bool load_bool3(gy_scn_loader *L, const cJSON *obj, const char *key, bool out[3])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return true;
    bool ok = cJSON_IsArray(v) && array_count(v) == 3u;
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
    bool ok = cJSON_IsArray(v) && array_count(v) == 3u;
    if (!ok) {
        char buf[64];
        gy_scn_error(L, NULL, "must be a 3x3 array [[..], [..], [..]] (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
    } else {
        int r = 0;
        for (const cJSON *row = v->child; row != NULL; row = row->next, r++) {
            size_t rm = gy_scn_push_index(L, (size_t)r);
            double d[3];
            if (cJSON_IsArray(row) && array_count(row) == 3u) {
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
                gy_scn_error(L, NULL, "must be positive-definite (no rotation axis may have zero "
                                      "or negative inertia)");
                ok = false;
            }
        }
    }
    gy_scn_pop(L, mark);
    return ok;
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
        for (size_t i = 0; i < COLLIDER_KEY_COUNT; i++)
            if (c->string != NULL && strcmp(c->string, k_collider_keys[i]) == 0)
                return k_collider_keys[i];
    return NULL;
}

static gy_scene_physics *load_physics(gy_scn_loader *L, const cJSON *p)
{
    char buf[64];
    if (!cJSON_IsObject(p)) {
        gy_scn_error(L, NULL, "must be an object (got %s)", gy_scn_describe(p, buf, sizeof buf));
        return NULL;
    }
    gy_scn_check_keys(L, p, k_physics_keys, sizeof k_physics_keys / sizeof k_physics_keys[0],
                      k_collider_keys, COLLIDER_KEY_COUNT);
    gy_scene_physics *ph = gy_scn_arena_alloc(&L->arena, sizeof *ph);
    if (ph == NULL) {
        L->oom = true;
        return NULL;
    }
    gy_scn_bool(L, p, "is_character_controller", &ph->is_character);
    int bt = GY_SCENE_BODY_DYNAMIC;
    gy_scn_got g = gy_scn_enum(L, p, "body_type", k_body_type_names, GY_SCENE_BODY_TYPE_COUNT,
                               &bt);
    if (ph->is_character) {
        if (g == GY_SCN_OK && bt != GY_SCENE_BODY_KINEMATIC)
            gy_scn_error(L, "body_type", "a character controller is Kinematic (got \"%s\")",
                         k_body_type_names[bt]);
        bt = GY_SCENE_BODY_KINEMATIC;
    }
    ph->body_type = (gy_scene_body_type)bt;
    ph->is_active = true;
    gy_scn_bool(L, p, "is_active", &ph->is_active);

    gy_body_def *b = &ph->body;
    *b = gy_default_body_def();
    b->type = motion_of(ph->body_type);
    double mass;
    if (gy_scn_number(L, p, "mass", &mass) == GY_SCN_OK) {
        if (!(mass > 0.0))
            gy_scn_error(L, "mass", "must be > 0%s (got %.15g)",
                         bt == GY_SCENE_BODY_DYNAMIC ? " for a Dynamic body" : "", mass);
        else
            b->mass = mass;
    }
    load_mass_properties(L, p, b);
    gy_scn_vec3(L, p, "linear_velocity", &b->linear_velocity);
    gy_scn_vec3(L, p, "angular_velocity", &b->angular_velocity);
    gy_scn_number_min(L, p, "linear_damping", 0.0, true, &b->linear_damping);
    gy_scn_number_min(L, p, "angular_damping", 0.0, true, &b->angular_damping);
    gy_scn_number(L, p, "gravity_factor", &b->gravity_factor);
    gy_scn_bool(L, p, "allow_sleeping", &b->allow_sleeping);
    gy_scn_bool(L, p, "continuous", &b->continuous);
    load_bool3(L, p, "lock_linear", b->lock_linear);
    load_bool3(L, p, "lock_angular", b->lock_angular);

    ph->max_slope = 45.0 * GY_PI / 180.0;
    ph->step_offset = 0.3;
    double deg;
    if (gy_scn_number(L, p, "max_slope_deg", &deg) == GY_SCN_OK) {
        if (!(deg > 0.0 && deg < 90.0))
            gy_scn_error(L, "max_slope_deg", "must be between 0 and 90 degrees, exclusive (got "
                                             "%.15g)",
                         deg);
        else
            ph->max_slope = deg * GY_PI / 180.0;
    }
    gy_scn_number_min(L, p, "step_offset", 0.0, true, &ph->step_offset);

    /* Colliders: the inline one (keys on the physics object itself), then `colliders`. */
    collider_ctx ctx = {ph->body_type, ph->is_character};
    bool inline_collider = has_key(p, "shape") || ph->is_character;
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
    if (arr != NULL) {
        if (!cJSON_IsArray(arr)) {
            gy_scn_error(L, "colliders", "must be an array of colliders (got %s)",
                         gy_scn_describe(arr, buf, sizeof buf));
            arr = NULL;
        } else if (ph->is_character) {
            gy_scn_error(L, "colliders",
                         "a character controller has exactly one collider, its capsule");
            arr = NULL;
        } else {
            extra = array_count(arr);
        }
    }
    uint32_t n = (inline_collider ? 1u : 0u) + extra;
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
        load_collider(L, p, &ctx, &ph->colliders[i], &vol);
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
                gy_scn_check_keys(L, c, k_collider_keys, COLLIDER_KEY_COUNT, NULL, 0);
                double vol;
                load_collider(L, c, &ctx, &ph->colliders[i], &vol);
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
     * 1 kg when nothing has volume). */
    if (b->has_mass_properties && !(b->mass > 0.0)) {
        double m = 1000.0 * (solid > 0.0 ? solid : sensor);
        b->mass = m > 0.0 && gy_is_finite(m) ? m : 1.0;
    }
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
        gy_scn_vec3(L, t, "position", &e->position);
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
            gy_scn_error(L, "name", "duplicate name %s (first used by entities[%d])",
                         gy_scn_describe(cJSON_GetObjectItemCaseSensitive(j, "name"), buf,
                                         sizeof buf),
                         first);
        e->name = gy_scn_arena_strdup(&L->arena, name);
        oom_if_null(L, e->name);
    }
    gy_scn_bool(L, j, "active", &e->active);

    const char *parent;
    if (gy_scn_string(L, j, "parent", &parent) == GY_SCN_OK) {
        int32_t pi = gy_scn_names_find(&L->entity_names, parent);
        if (pi < 0)
            gy_scn_error(L, "parent", "no entity named %s",
                         gy_scn_describe(cJSON_GetObjectItemCaseSensitive(j, "parent"), buf,
                                         sizeof buf));
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
        n = array_count(entities);
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
    L->info = gy_alloc_zeroed(L->a, (size_t)n * sizeof *L->info);
    if (s->entities == NULL || L->info == NULL) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    L->info_count = n;
    s->entity_count = n;

    /* First pass: names, so parents (and later joints and scripts) may refer forward. */
    uint32_t i = 0;
    for (const cJSON *c = entities->child; c != NULL; c = c->next, i++) {
        L->info[i].json = c;
        const cJSON *nm = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "name") : NULL;
        if (cJSON_IsString(nm) && nm->valuestring != NULL && nm->valuestring[0] != '\0') {
            L->info[i].name = nm->valuestring;
            gy_scn_names_put(&L->entity_names, nm->valuestring, (int32_t)i);
        }
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
    return e->physics != NULL && e->physics->body_type == GY_SCENE_BODY_DYNAMIC;
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
    int32_t *dyn = gy_alloc(L->a, (size_t)n * sizeof *dyn);  /* nearest Dynamic ancestor */
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
