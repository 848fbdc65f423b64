/* Scene colliders: shapes and their parameters, hull and mesh geometry (inline or from OBJ files),
 * pose, material and filtering. */
#include <math.h>
#include <string.h>

#include "gyre/geometry.h"
#include "gyre/math.h"
#include "scene_internal.h"

const char *const gy_scn_body_type_names[GY_BODY_TYPE_COUNT] = {"Dynamic", "Static", "Kinematic",
                                                                "Trigger"};

static const char *const k_shape_names[] = {"Sphere", "Box",  "Capsule", "Cylinder",
                                            "Plane",  "Hull", "Mesh"};

/* Collider keys, shape-specific ones first (their order matches the SK_ bits below). */
const char *const gy_scn_collider_keys[GY_SCN_COLLIDER_KEY_COUNT] = {"radius",
                                                                     "height",
                                                                     "box_size",
                                                                     "normal",
                                                                     "offset",
                                                                     "points",
                                                                     "vertices",
                                                                     "indices",
                                                                     "collision",
                                                                     "shape",
                                                                     "local_position",
                                                                     "local_rotation",
                                                                     "local_rotation_euler",
                                                                     "density",
                                                                     "material",
                                                                     "friction",
                                                                     "restitution",
                                                                     "is_sensor",
                                                                     "contact_response",
                                                                     "surface_velocity",
                                                                     "one_way",
                                                                     "one_way_normal",
                                                                     "one_way_slop",
                                                                     "category",
                                                                     "mask"};
#define SHAPE_KEY_COUNT 9u

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

#define CHARACTER_RADIUS 0.3
#define CHARACTER_HEIGHT 1.8

bool gy_scn_has_key(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

/* ---- geometry arrays ------------------------------------------------------------------------- */

uint32_t gy_scn_array_count(const cJSON *v)
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
        uint32_t n = gy_scn_array_count(v);
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
        uint32_t n = gy_scn_array_count(v);
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
                    gy_scn_error(L, NULL, "index %.15g out of range (%u vertices)", c->valuedouble,
                                 vertex_count);
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

/* Proves the points have volume. Only a Dynamic body's mass comes from the hull's volume, so only
 * it pays for a build; any other body's hull is checked in time linear in its points (a streamed
 * cell's large static hull is then built on the physics thread under the geometry budget, not
 * here on the game thread). */
static bool hull_volume(gy_scn_loader *L, const char *key, const gy_vec3 *pts, uint32_t n,
                        bool need_volume, double *volume)
{
    gy_hull h;
    gy_result r = need_volume ? gy_hull_build(L->a, pts, n, &h) : gy_hull_check(L->a, pts, n);
    if (r == GY_ERR_OUT_OF_MEMORY) {
        L->oom = true;
        return false;
    }
    if (r != GY_OK) {
        gy_scn_error(L, key, "the points are coplanar or collinear: a Hull needs volume");
        return false;
    }
    if (need_volume) {
        *volume = h.volume;
        gy_hull_free(L->a, &h);
    }
    return true;
}

/* ---- colliders ------------------------------------------------------------------------------- */

static void load_hull(gy_scn_loader *L, const cJSON *c, const gy_scn_collider_ctx *ctx,
                      gy_scene_collider *out, double *volume)
{
    bool need_volume = ctx->body_type == GY_BODY_DYNAMIC;
    bool has_points = gy_scn_has_key(c, "points"), has_file = gy_scn_has_key(c, "collision");
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
        if (hull_volume(L, "points", pts, n, need_volume, volume)) {
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
    if (hull_volume(L, "collision", obj->mesh.vertices, obj->mesh.vertex_count, need_volume,
                    volume)) {
        out->vertices = obj->mesh.vertices;
        out->vertex_count = obj->mesh.vertex_count;
        out->collision = obj->resolved;
    }
}

static void load_mesh(gy_scn_loader *L, const cJSON *c, gy_scene_collider *out)
{
    bool has_inline = gy_scn_has_key(c, "vertices") || gy_scn_has_key(c, "indices");
    bool has_file = gy_scn_has_key(c, "collision");
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
        if (!gy_scn_has_key(c, "vertices")) {
            gy_scn_error(L, "vertices", "required for a Mesh given indices");
            ok = false;
        } else {
            ok = load_points(L, c, "vertices", &v, &nv);
            if (ok && nv == 0) {
                gy_scn_error(L, "vertices", "a Mesh needs at least 3 vertices (got 0)");
                ok = false;
            }
        }
        if (!gy_scn_has_key(c, "indices")) {
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
    if (g == GY_SCN_OK && !gy_scn_in_range(L, key, *out, GY_MIN_SHAPE_SIZE, GY_MAX_SHAPE_SIZE))
        return false;
    return g != GY_SCN_BAD;
}

static void load_shape(gy_scn_loader *L, const cJSON *c, const gy_scn_collider_ctx *ctx,
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
        else if (g == GY_SCN_OK && (size.x < GY_MIN_SHAPE_SIZE || size.y < GY_MIN_SHAPE_SIZE ||
                                    size.z < GY_MIN_SHAPE_SIZE || size.x > GY_MAX_SHAPE_SIZE ||
                                    size.y > GY_MAX_SHAPE_SIZE || size.z > GY_MAX_SHAPE_SIZE))
            gy_scn_error(L, "box_size",
                         "every extent must be between %g and %g (got [%.15g, %.15g, %.15g])",
                         GY_MIN_SHAPE_SIZE, GY_MAX_SHAPE_SIZE, size.x, size.y, size.z);
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
        if (ctx->body_type != GY_BODY_STATIC && ctx->body_type != GY_BODY_TRIGGER)
            gy_scn_error(L, "shape", "a Plane needs a Static body (this one is %s)",
                         gy_scn_body_type_names[ctx->body_type]);
        static const char *const pose_keys[] = {"local_position", "local_rotation",
                                                "local_rotation_euler"};
        for (size_t i = 0; i < 3; i++)
            if (gy_scn_has_key(c, pose_keys[i]))
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
        load_hull(L, c, ctx, out, volume);
        return;
    case GY_SHAPE_MESH:
        if (ctx->body_type == GY_BODY_DYNAMIC)
            gy_scn_error(L, "shape", "a Mesh needs a Static or Kinematic body (this one is %s)",
                         gy_scn_body_type_names[ctx->body_type]);
        load_mesh(L, c, out);
        return;
    default:
        return;
    }
    *volume = gy_shape_volume(s, NULL);
}

/* One collider from `c` (an element of `colliders`, or the physics object itself for the inline
 * collider; the caller checked the keys). *volume receives its volume in m³ (0 when unknown). */
void gy_scn_load_collider(gy_scn_loader *L, const cJSON *c, const gy_scn_collider_ctx *ctx,
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
            if ((k_shape_keys[shape] & (1u << i)) == 0 &&
                gy_scn_has_key(c, gy_scn_collider_keys[i]))
                gy_scn_error(L, gy_scn_collider_keys[i], "not used by a %s collider",
                             k_shape_names[shape]);
        load_shape(L, c, ctx, out, volume);
    }

    if (!(shape_ok && shape == GY_SHAPE_PLANE)) {
        if (gy_scn_vec3(L, c, "local_position", &d->local_pose.position) == GY_SCN_OK)
            gy_scn_vec3_within(L, "local_position", d->local_pose.position, GY_MAX_LOCAL_EXTENT);
        gy_scn_rotation(L, c, "local_rotation", "local_rotation_euler", &d->local_pose.rotation);
    }
    if (gy_scn_number_min(L, c, "density", 0.0, false, &d->density) == GY_SCN_OK)
        gy_scn_in_range(L, "density", d->density, GY_MIN_DENSITY, GY_MAX_DENSITY);

    const char *mat;
    if (gy_scn_string(L, c, "material", &mat) == GY_SCN_OK) {
        int32_t mi = gy_scn_names_find(&L->material_names, mat);
        if (mi < 0) {
            char buf[64];
            gy_scn_error(
                L, "material", "no material named %s in materials",
                gy_scn_describe(cJSON_GetObjectItemCaseSensitive(c, "material"), buf, sizeof buf));
        } else {
            d->material = L->scene->materials[mi].material;
            out->material = L->scene->materials[mi].name;
        }
    }
    if (gy_scn_number_min(L, c, "friction", 0.0, true, &d->material.friction) == GY_SCN_OK)
        gy_scn_in_range(L, "friction", d->material.friction, 0.0, GY_MAX_COEFFICIENT);
    if (gy_scn_number_min(L, c, "restitution", 0.0, true, &d->material.restitution) == GY_SCN_OK)
        gy_scn_in_range(L, "restitution", d->material.restitution, 0.0, GY_MAX_COEFFICIENT);

    bool sensor = false;
    if (gy_scn_bool(L, c, "is_sensor", &sensor) == GY_SCN_OK) {
        d->is_sensor = sensor;
        if (!sensor && ctx->body_type == GY_BODY_TRIGGER)
            gy_scn_error(L, "is_sensor", "a Trigger's colliders are always sensors");
    }
    if (ctx->body_type == GY_BODY_TRIGGER)
        d->is_sensor = true;
    gy_scn_bool(L, c, "contact_response", &d->contact_response);
    if (gy_scn_vec3(L, c, "surface_velocity", &d->surface_velocity) == GY_SCN_OK)
        gy_scn_vec3_within(L, "surface_velocity", d->surface_velocity, GY_MAX_MAGNITUDE);
    gy_scn_bool(L, c, "one_way", &d->one_way);
    gy_vec3 n;
    if (gy_scn_vec3(L, c, "one_way_normal", &n) == GY_SCN_OK) {
        double len = gy_v3_len(n);
        if (!(len > 1e-9) || !gy_is_finite(len))
            gy_scn_error(L, "one_way_normal", "must be a non-zero vector");
        else
            d->one_way_normal = gy_v3_scale(n, 1.0 / len);
    }
    double slop;
    gy_scn_got gs = gy_scn_number_min(L, c, "one_way_slop", 0.0, true, &slop);
    if (gs == GY_SCN_OK && !d->one_way)
        gy_scn_error(L, "one_way_slop", "only a one-way collider (one_way: true) has it");
    else if (gs == GY_SCN_OK && slop > GY_MAX_LOCAL_EXTENT)
        gy_scn_error(L, "one_way_slop", "must be at most %g m (got %.15g)", GY_MAX_LOCAL_EXTENT,
                     slop);
    else if (gs == GY_SCN_OK)
        d->one_way_slop = slop;
    gy_scn_uint32(L, c, "category", &d->category);
    gy_scn_uint32(L, c, "mask", &d->mask);
}
