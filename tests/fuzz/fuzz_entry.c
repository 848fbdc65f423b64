#include "fuzz_entry.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/capture.h"
#include "gyre/math.h"
#include "gyre/obj.h"
#include "gyre/physics/commands.h"
#include "gyre/scene.h"
#include "physics_state.h"
#include "test_support.h"

/* ---- OBJ ------------------------------------------------------------------------------------- */

static const char *check_obj_mesh(const gy_obj_mesh *m)
{
    if ((m->vertex_count == 0) != (m->vertices == NULL) ||
        (m->index_count == 0) != (m->indices == NULL))
        return "obj: array and count disagree";
    if (m->index_count % 3u != 0)
        return "obj: index count not a multiple of 3";
    for (uint32_t i = 0; i < m->vertex_count; i++)
        if (!gy_vec3_is_finite(m->vertices[i]))
            return "obj: non-finite vertex accepted";
    for (uint32_t i = 0; i < m->index_count; i++)
        if (m->indices[i] >= m->vertex_count)
            return "obj: index out of range accepted";
    return NULL;
}

const char *gy_fuzz_obj(const uint8_t *data, size_t size)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_obj_mesh mesh;
    memset(&mesh, 0xA5, sizeof mesh); /* "untouched on failure" must be visible */
    gy_obj_mesh before = mesh;
    char err[256] = "";
    /* A NULL text is only valid with length 0; keep the pointer non-NULL for empty inputs. */
    const char *text = size > 0 ? (const char *)data : "";
    gy_result r = gy_obj_parse(text, size, "fuzz.obj", &ta.base, &mesh, err, sizeof err);
    const char *bad = NULL;
    if (r == GY_OK) {
        bad = check_obj_mesh(&mesh);
        gy_obj_mesh_free(&ta.base, &mesh);
    } else {
        if (memcmp(&mesh, &before, sizeof mesh) != 0)
            bad = "obj: output touched on failure";
        else if (r != GY_ERR_OUT_OF_MEMORY && err[0] == '\0')
            bad = "obj: failure without a message";
        else if (r != GY_ERR_PARSE && r != GY_ERR_NON_FINITE && r != GY_ERR_CAPACITY &&
                 r != GY_ERR_OUT_OF_MEMORY)
            bad = "obj: undocumented result code";
    }
    if (bad == NULL && ta.live_blocks != 0)
        bad = "obj: leaked allocations";
    return bad;
}

/* ---- scenes ---------------------------------------------------------------------------------- */

/* True when some string (key or value) could steer the loader to a device or kernel file. */
static bool names_special_file(const cJSON *item)
{
    static const char *const risky[] = {"dev/", "proc/", "sys/", "fd/"};
    for (; item != NULL; item = item->next) {
        const char *strs[2] = {item->string, cJSON_IsString(item) ? item->valuestring : NULL};
        for (int s = 0; s < 2; s++)
            for (size_t k = 0; strs[s] != NULL && k < sizeof risky / sizeof risky[0]; k++)
                if (strstr(strs[s], risky[k]) != NULL)
                    return true;
        /* cJSON caps nesting (CJSON_NESTING_LIMIT), so this recursion is bounded. */
        if (names_special_file(item->child))
            return true;
    }
    return false;
}

static const char *check_collider(const gy_scene_collider *c, gy_motion_type motion)
{
    gy_collider_def d = c->def;
    bool geometry = d.shape.type == GY_SHAPE_HULL || d.shape.type == GY_SHAPE_MESH;
    if (geometry) {
        if (d.shape.resource.bits != 0)
            return "scene: hull/mesh collider already holds a resource";
        d.shape.resource.bits = 1; /* stand-in: the engine creates the resource */
        if (d.shape.type == GY_SHAPE_HULL) {
            gy_hull_def h = {c->vertices, c->vertex_count};
            if (gy_validate_hull_def(&h) != GY_OK)
                return "scene: hull points the middleware would refuse";
        } else {
            gy_mesh_def m = {c->vertices, c->vertex_count, c->indices, c->index_count};
            if (gy_validate_mesh_def(&m) != GY_OK)
                return "scene: mesh data the middleware would refuse";
        }
    }
    if (gy_validate_collider_def(&d, motion) != GY_OK)
        return "scene: collider the middleware would refuse";
    return NULL;
}

static const char *check_scene(const gy_scene *s)
{
    if ((s->entity_count && s->entities == NULL) || (s->joint_count && s->joints == NULL) ||
        (s->action_count && s->actions == NULL) || (s->material_count && s->materials == NULL))
        return "scene: array and count disagree";
    if (!gy_vec3_is_finite(s->world.gravity) || !gy_is_finite(s->world.step_hz))
        return "scene: non-finite world settings";
    for (uint32_t i = 0; i < s->entity_count; i++) {
        const gy_scene_entity *e = &s->entities[i];
        if (e->name == NULL || e->parent < -1 || e->parent >= (int32_t)s->entity_count)
            return "scene: entity name or parent out of range";
        if (!gy_vec3_is_finite(e->position) || !gy_quat_is_unit(e->rotation) ||
            !gy_vec3_is_finite(e->scale))
            return "scene: entity transform not finite or rotation not unit";
        const gy_scene_physics *ph = e->physics;
        if (ph == NULL)
            continue;
        if ((unsigned)ph->body_type >= GY_BODY_TYPE_COUNT || ph->collider_count == 0 ||
            ph->colliders == NULL)
            return "scene: physics component without colliders";
        if (gy_validate_body_def(&ph->body) != GY_OK)
            return "scene: body the middleware would refuse";
        for (uint32_t c = 0; c < ph->collider_count; c++) {
            const char *bad = check_collider(&ph->colliders[c], ph->body.type);
            if (bad != NULL)
                return bad;
        }
    }
    for (uint32_t j = 0; j < s->joint_count; j++) {
        const gy_scene_joint *jt = &s->joints[j];
        if (jt->a < 0 || jt->a >= (int32_t)s->entity_count || jt->b < -1 ||
            jt->b >= (int32_t)s->entity_count || jt->a == jt->b)
            return "scene: joint names an entity out of range";
        if (s->entities[jt->a].physics == NULL ||
            (jt->b >= 0 && s->entities[jt->b].physics == NULL))
            return "scene: joint on an entity without physics";
        gy_joint_def d = jt->def;
        d.a.bits = 1;
        d.b.bits = jt->b >= 0 ? 2u : 0u;
        if (gy_validate_joint_def(&d) != GY_OK)
            return "scene: joint the middleware would refuse";
    }
    for (uint32_t a = 0; a < s->action_count; a++) {
        const gy_scene_action *ac = &s->actions[a];
        if ((unsigned)ac->type >= GY_SCENE_ACTION_TYPE_COUNT || !gy_is_finite(ac->at) ||
            ac->at < 0.0 || ac->entity < -1 || ac->entity >= (int32_t)s->entity_count)
            return "scene: script action out of range";
        if (a > 0 && s->actions[a - 1].at > ac->at)
            return "scene: script not sorted by time";
    }
    return NULL;
}

const char *gy_fuzz_scene(const uint8_t *data, size_t size, const char *data_dir)
{
    cJSON *probe = cJSON_ParseWithLength((const char *)data, size);
    bool skip = probe != NULL && names_special_file(probe);
    cJSON_Delete(probe);
    if (skip)
        return NULL;

    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *scene = (gy_scene *)(uintptr_t)1; /* must become NULL on failure */
    gy_scene_errors *errors = NULL;
    const char *text = size > 0 ? (const char *)data : "";
    gy_result r = gy_scene_load_string(text, size, data_dir, &ta.base, &scene, &errors);
    const char *bad = NULL;
    if (r == GY_OK) {
        if (scene == NULL || errors != NULL)
            bad = "scene: success without a scene, or with errors";
        else
            bad = check_scene(scene);
    } else {
        if (scene != NULL)
            bad = "scene: failure left a scene";
        else if (r == GY_ERR_OUT_OF_MEMORY || r == GY_ERR_INVALID_ARGUMENT)
            bad = errors != NULL ? "scene: out-of-memory failure returned errors" : NULL;
        else if (errors == NULL || errors->count == 0 || errors->total < errors->count)
            bad = "scene: failure without an error message";
        else
            for (uint32_t i = 0; i < errors->count && bad == NULL; i++)
                if (errors->items[i].path == NULL || errors->items[i].message == NULL ||
                    errors->items[i].message[0] == '\0')
                    bad = "scene: error without a path or message";
    }
    if (r == GY_OK)
        gy_scene_free(scene);
    gy_scene_errors_free(errors);
    if (bad == NULL && ta.live_blocks != 0)
        bad = "scene: leaked allocations";
    return bad;
}

/* ---- commands -------------------------------------------------------------------------------- */

enum { FZ_BODIES = 5, FZ_RESOURCES = 2, FZ_JOINTS = 2 };

static void quiet_log(void *ctx, gy_log_level level, const char *message)
{
    (void)ctx;
    (void)level;
    (void)message;
}

static void count_reply(void *ctx, const gy_reply *r)
{
    (void)r;
    (*(uint32_t *)ctx)++;
}

/* The bootstrap scene: a hull and a mesh resource, one body of each motion type (plus a hull
 * body and a mesh floor), a hinge to the world and a ball joint between two bodies. */
typedef struct fz_scene {
    gy_vec3 hull[8];
    gy_vec3 mesh_v[4];
    uint32_t mesh_i[6];
    gy_mesh_def mesh;
    gy_hull_def hull_def;
    gy_physics_resource_def res[FZ_RESOURCES];
    gy_collider_def col[FZ_BODIES];
    gy_physics_body_def body[FZ_BODIES];
    gy_physics_joint_def joint[FZ_JOINTS];
    gy_physics_bootstrap boot;
} fz_scene;

static void fz_scene_init(fz_scene *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 8; i++)
        s->hull[i] = gy_v3(i & 1 ? 0.4 : -0.4, i & 2 ? 0.4 : -0.4, i & 4 ? 0.4 : -0.4);
    s->mesh_v[0] = gy_v3(-20, 0, -20);
    s->mesh_v[1] = gy_v3(20, 0, -20);
    s->mesh_v[2] = gy_v3(20, 0, 20);
    s->mesh_v[3] = gy_v3(-20, 0, 20);
    const uint32_t idx[6] = {0, 2, 1, 0, 3, 2};
    memcpy(s->mesh_i, idx, sizeof idx);
    s->mesh = (gy_mesh_def){s->mesh_v, 4, s->mesh_i, 6};
    s->hull_def = (gy_hull_def){s->hull, 8};
    /* The start issues resource i index i + 1, body i index i, joint i index i + 1. */
    s->res[0] = (gy_physics_resource_def){NULL, &s->hull_def};
    s->res[1] = (gy_physics_resource_def){&s->mesh, NULL};

    const gy_motion_type motion[FZ_BODIES] = {GY_MOTION_STATIC, GY_MOTION_DYNAMIC,
                                              GY_MOTION_DYNAMIC, GY_MOTION_KINEMATIC,
                                              GY_MOTION_DYNAMIC};
    for (uint32_t i = 0; i < FZ_BODIES; i++) {
        gy_collider_def *c = &s->col[i];
        *c = gy_default_collider_def();
        c->shape.type = GY_SHAPE_BOX;
        c->shape.box_size = gy_v3(0.5, 0.5, 0.5);
        gy_physics_body_def *b = &s->body[i];
        /* the start issues index i, generation i + 1 (list order, a fresh pool) */
        b->def = gy_default_body_def();
        b->def.type = motion[i];
        b->def.pose.position = gy_v3((double)i, 1.0 + (double)i, 0);
        b->colliders = c;
        b->collider_count = 1;
    }
    s->col[0].shape.type = GY_SHAPE_MESH; /* the floor */
    s->col[0].shape.resource.bits = 2;
    s->body[0].def.pose.position = gy_v3(0, 0, 0);
    s->col[2].shape.type = GY_SHAPE_HULL;
    s->col[2].shape.resource.bits = 1;
    s->col[3].shape.type = GY_SHAPE_SPHERE;
    s->col[3].shape.radius = 0.3;

    gy_physics_joint_def *h = &s->joint[0];
    h->a = (gy_physics_body_ref){4, 5};
    h->def = gy_default_joint_def();
    h->def.type = GY_JOINT_HINGE;
    h->def.anchor = gy_v3(4, 6, 0);
    h->def.axis = gy_v3(0, 0, 1);
    gy_physics_joint_def *ball = &s->joint[1];
    ball->a = (gy_physics_body_ref){1, 2};
    ball->b = (gy_physics_body_ref){2, 3};
    ball->def = gy_default_joint_def();
    ball->def.type = GY_JOINT_BALL;
    ball->def.anchor = gy_v3(1.5, 2.5, 0);

    s->boot = (gy_physics_bootstrap){s->res,    FZ_RESOURCES, s->body, FZ_BODIES, s->joint,
                                     FZ_JOINTS, NULL,         NULL,    NULL};
}

const char *gy_fuzz_commands(const uint8_t *data, size_t size)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_logger quiet = {quiet_log, NULL};
    fz_scene scene;
    fz_scene_init(&scene);

    gy_physics_def def = gy_default_physics_def();
    def.lockstep = true;
    def.allocator = &ta.base;
    def.logger = &quiet;
    def.world.logger = &quiet;
    /* Small rings: a long input overflows them, so staging and detached batches are decoded too. */
    def.lifecycle_capacity = 7;
    def.mutate_capacity = 7;
    def.reply_capacity = 15;
    def.world.world_half_extent = 64.0; /* small static structures: a fast start per input */
    gy_physics *p = NULL;
    if (gy_physics_create(&def, &p) != GY_OK)
        return "commands: subsystem create failed";
    if (gy_physics_start(p, &scene.boot) != GY_OK) {
        gy_physics_destroy(p);
        return "commands: start failed";
    }

    const char *bad = NULL;
    for (size_t off = 0; off < size && bad == NULL; off += sizeof(gy_command)) {
        gy_command c;
        memset(&c, 0, sizeof c);
        size_t n = size - off < sizeof c ? size - off : sizeof c;
        memcpy(&c, data + off, n);
        c.flags = (uint16_t)(c.flags & ~GY_COMMAND_PAYLOAD);
        gy_command_ring ring = (c.flags & 1u) ? GY_COMMAND_MUTATE : GY_COMMAND_LIFECYCLE;
        if (gy_command_queue_record(p->cfg.commands, ring, &c) != GY_OK)
            bad = "commands: a plain record was refused";
        else if ((c.flags & 2u) && gy_physics_publish(p, NULL) != GY_OK)
            bad = "commands: publish failed";
    }
    if (bad == NULL && gy_physics_step(p, 2, 20000000000ull) != GY_OK)
        bad = "commands: lockstep ticks did not complete";
    uint32_t replies = 0;
    gy_physics_drain_replies(p, count_reply, &replies);
    if (bad == NULL && gy_physics_stop(p) != GY_OK)
        bad = "commands: stop failed";
    gy_physics_destroy(p);
    if (bad == NULL && ta.live_blocks != 0)
        bad = "commands: leaked allocations";
    return bad;
}

/* ---- capture --------------------------------------------------------------------------------- */

static uint64_t fuzz_fnv1a(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= data[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Feeds an accepted capture's batches to a lockstep subsystem in replay mode. */
static const char *replay_batches(const gy_capture *c, gy_test_allocator *ta)
{
    if (c->batch_count == 0)
        return NULL;
    gy_logger quiet = {quiet_log, NULL};
    gy_physics_def def = gy_default_physics_def();
    def.lockstep = true;
    def.allocator = &ta->base;
    def.logger = &quiet;
    def.world.logger = &quiet;
    def.world.world_half_extent = 64.0;
    gy_physics *p = NULL;
    if (gy_physics_create(&def, &p) != GY_OK)
        return "capture: subsystem create failed";
    const char *bad = NULL;
    if (gy_physics_start(p, NULL) != GY_OK || gy_physics_set_replay(p, true) != GY_OK)
        bad = "capture: start or replay mode failed";
    for (uint32_t i = 0; i < c->batch_count && i < 64u && bad == NULL; i++) {
        size_t cursor = 0;
        uint32_t ring;
        const gy_command *cmd;
        const void *payload;
        size_t payload_size;
        while (gy_capture_batch_next(&c->batches[i], &cursor, &ring, &cmd, &payload, &payload_size))
            (void)gy_physics_replay_command(p, (gy_command_ring)ring, cmd, payload, payload_size);
        if (gy_physics_replay_seal(p) != GY_OK || gy_physics_step(p, 1, 20000000000ull) != GY_OK)
            bad = "capture: a replayed tick did not complete";
    }
    uint32_t replies = 0;
    gy_physics_drain_replies(p, count_reply, &replies);
    if (gy_physics_running(p) && gy_physics_stop(p) != GY_OK && bad == NULL)
        bad = "capture: stop failed";
    gy_physics_destroy(p);
    return bad;
}

static const char *read_capture(const uint8_t *data, size_t size)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_capture *c = (gy_capture *)(uintptr_t)1; /* must become NULL on failure */
    char why[256];
    why[0] = '\0';
    gy_result r = gy_capture_read(data, size, &ta.base, &c, why, sizeof why);
    const char *bad = NULL;
    if (r != GY_OK) {
        if (c != NULL)
            bad = "capture: failure left a capture";
        else if (r != GY_ERR_OUT_OF_MEMORY && why[0] == '\0')
            bad = "capture: failure without a message";
    } else if (c == NULL) {
        bad = "capture: success without a capture";
    } else {
        uint32_t commands = 0;
        for (uint32_t i = 0; i < c->batch_count; i++) {
            size_t cursor = 0;
            uint32_t walked = 0;
            while (gy_capture_batch_next(&c->batches[i], &cursor, NULL, NULL, NULL, NULL))
                walked++;
            commands += walked;
            if (walked != c->batches[i].count || cursor != c->batches[i].size)
                bad = "capture: a batch walked to another count than it holds";
        }
        (void)commands;
        if (bad == NULL)
            bad = replay_batches(c, &ta);
        gy_capture_free(c);
    }
    if (bad == NULL && ta.live_blocks != 0)
        bad = "capture: leaked allocations";
    return bad;
}

const char *gy_fuzz_capture(const uint8_t *data, size_t size)
{
    const char *bad = read_capture(data, size);
    if (bad != NULL || size < 64u || size > (64u << 20))
        return bad;
    uint8_t *sealed = malloc(size + 16u);
    if (sealed == NULL)
        return NULL;
    memcpy(sealed, data, size);
    memcpy(sealed + size, "GYREEND", 8);
    uint64_t sum = fuzz_fnv1a(sealed, size);
    memcpy(sealed + size + 8, &sum, sizeof sum);
    bad = read_capture(sealed, size + 16u);
    free(sealed);
    return bad;
}
