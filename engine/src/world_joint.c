/* Joints between entities' bodies. A joint is kept in a's frame and created on the physics side
 * whenever both bodies exist there; the adapter drops it with either body, after which it waits
 * (PENDING) for both to be recreated. Replies name a joint by the ref the subsystem issued it
 * (w->joint_refs maps its index back), and a reply about a released joint, whose index may name
 * another already, is told apart by its generation. A joint that broke or failed keeps its ref
 * until the game releases it (or its entity goes), which records the ref's release as for a live
 * one: the subsystem's pool keeps every ref live until then, and the next create's index is
 * bounded by the refs the World holds (w->joint_refs.held). */
#include <string.h>

#include "world_internal.h"
#include "gyre/backend/backend.h"

static gy_w_joint *joint_get(const gy_world *w, uint64_t bits)
{
    return gy_handle_pool_get(&w->joint_pool, bits);
}

static gy_w_joint *joint_by_key(const gy_world *w, uint32_t key)
{
    return joint_get(w, gy_w_ref_table_get(&w->joint_refs, key));
}

/* The joint `ref` names if it is the one there now. */
static gy_w_joint *joint_by_ref(const gy_world *w, gy_physics_joint_ref ref)
{
    gy_w_joint *j = joint_by_key(w, ref.index);
    return j != NULL && j->ref.generation == ref.generation ? j : NULL;
}

/* Forgets the physics ref (a released joint's index may name the next one already). */
static void drop_key(gy_world *w, gy_w_joint *j)
{
    gy_w_ref_table_forget(&w->joint_refs, j->ref.index, j->handle);
    j->ref = (gy_physics_joint_ref){0, 0};
}

/* Gives the joint's ref, if it holds one (its create was recorded in this run), back to the pool
 * and forgets it. The physics thread drops the release of a joint that broke or failed there
 * (nothing of it is left) and counts it. */
static void release_ref(gy_world *w, gy_w_joint *j)
{
    if (j->ref.generation == 0)
        return;
    if (gy_w_running(w)) {
        gy_result r = gy_physics_record_release_joint(w->physics, j->ref);
        if (r == GY_OK)
            gy_w_ref_table_released(&w->joint_refs);
        else
            gy_log(w->logger, GY_LOG_WARN, "world: joint release not recorded: %s",
                   gy_result_message(r));
    }
    drop_key(w, j);
}

static bool body_ready(const gy_world *w, uint32_t slot, const gy_w_body **out)
{
    const gy_w_body *c = gy_w_body_of(w, slot);
    *out = c;
    return c != NULL && c->recorded && !c->failed;
}

/* The joint's definition in world space for bodies at the given poses. */
static gy_joint_def world_def(const gy_w_joint *j, gy_pose pa)
{
    gy_joint_def d = j->def;
    d.anchor = gy_pose_apply(pa, j->def.anchor);
    d.axis = gy_quat_rotate(pa.rotation, j->def.axis);
    d.a.bits = 0;
    d.b.bits = 0;
    d.user_data = 0;
    return d;
}

static void try_create(gy_world *w, gy_w_joint *j)
{
    if (j->status != GY_JOINT_PENDING || !gy_w_running(w))
        return;
    const gy_w_body *ca, *cb = NULL;
    if (!body_ready(w, j->a, &ca) || (j->b != GY_W_NONE && !body_ready(w, j->b, &cb)))
        return;
    gy_physics_joint_def d;
    memset(&d, 0, sizeof d);
    d.a = ca->ref;
    d.b = cb != NULL ? cb->ref : (gy_physics_body_ref){0, 0};
    d.def = world_def(j, gy_w_body_pose(w, ca));
    gy_physics_joint_ref ref;
    /* Room for its ref's entry before the create is recorded: nothing after the record may fail.
     * Refused either way, it waits (pending) and is tried again. */
    gy_result r = gy_w_ref_table_reserve(w->alloc, &w->joint_refs, 1);
    if (r == GY_OK)
        r = gy_physics_record_create_joint(w->physics, &d, &ref);
    if (r != GY_OK) {
        gy_log(w->logger, GY_LOG_WARN, "world: joint create not recorded: %s",
               gy_result_message(r));
        return;
    }
    j->status = GY_JOINT_LIVE;
    j->has_state = false;
    j->ref = ref;
    j->a_generation = d.a.generation;
    j->b_generation = d.b.generation;
    gy_w_ref_table_issued(&w->joint_refs, ref.index, j->handle);
    w->joints_pending--;
}

gy_result gy_joint_create(gy_world *w, gy_entity a, gy_entity b, const gy_joint_def *def,
                          gy_joint *out)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || def == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    out->bits = 0;
    uint32_t sa = gy_w_entity_slot(w, a);
    uint32_t sb = GY_W_NONE;
    if (sa == GY_W_NONE)
        return GY_ERR_STALE_HANDLE;
    if (!gy_entity_is_null(b) && (sb = gy_w_entity_slot(w, b)) == GY_W_NONE)
        return GY_ERR_STALE_HANDLE;
    if (sa == sb || gy_w_body_of(w, sa) == NULL || (sb != GY_W_NONE && gy_w_body_of(w, sb) == NULL))
        return GY_ERR_MISUSE;
    gy_joint_def check = *def;
    check.a.bits = 1;
    check.b.bits = sb != GY_W_NONE ? 2u : 0u;
    gy_result r = gy_validate_joint_def(&check);
    if (r != GY_OK)
        return r;
    if (gy_w_body_of(w, sa)->motion == GY_MOTION_STATIC)
        return GY_ERR_INVALID_MOTION;
    /* The joint counts live in the entities' cold records: those are made first. The room for
     * its ref's entry, which try_create takes before it records the create, is taken here too,
     * so that a refusal of it is this call's, with nothing recorded, rather than a joint that
     * waits. */
    gy_w_joint *j = NULL;
    r = GY_ERR_OUT_OF_MEMORY;
    if (gy_w_cold_get(w, sa) != NULL && (sb == GY_W_NONE || gy_w_cold_get(w, sb) != NULL) &&
        (!gy_w_running(w) || gy_w_ref_table_reserve(w->alloc, &w->joint_refs, 1) == GY_OK) &&
        (j = gy_alloc_zeroed(w->alloc, sizeof *j)) != NULL)
        r = gy_handle_pool_acquire(&w->joint_pool, j, &j->handle);
    if (r != GY_OK) {
        if (j != NULL)
            gy_free(w->alloc, j, sizeof *j);
        gy_w_cold_trim(w, sa, false);
        if (sb != GY_W_NONE)
            gy_w_cold_trim(w, sb, false);
        return r;
    }
    gy_pose inv = gy_pose_inverse(gy_w_world_pose(w, sa));
    j->a = sa;
    j->b = sb;
    j->def = *def;
    j->def.anchor = gy_pose_apply(inv, def->anchor);
    j->def.axis = gy_quat_rotate(inv.rotation, def->axis);
    j->status = GY_JOINT_PENDING;
    w->joints_pending++;
    gy_w_cold_of(w, sa)->joints++;
    if (sb != GY_W_NONE)
        gy_w_cold_of(w, sb)->joints++;
    try_create(w, j);
    out->bits = j->handle;
    return GY_OK;
}

static void release_joint(gy_world *w, gy_w_joint *j)
{
    release_ref(w, j); /* live, broken or failed */
    if (j->status == GY_JOINT_PENDING)
        w->joints_pending--;
    drop_key(w, j);
    gy_w_cold_of(w, j->a)->joints--;
    gy_w_cold_trim(w, j->a, false);
    if (j->b != GY_W_NONE) {
        gy_w_cold_of(w, j->b)->joints--;
        gy_w_cold_trim(w, j->b, false);
    }
    gy_handle_pool_release(&w->joint_pool, j->handle);
    gy_free(w->alloc, j, sizeof *j);
}

gy_result gy_joint_release(gy_world *w, gy_joint id)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_w_joint *j = joint_get(w, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    release_joint(w, j);
    return GY_OK;
}

gy_result gy_joint_get_status(const gy_world *w, gy_joint id, gy_joint_status *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_w_joint *j = joint_get(w, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    *out = j->status;
    return GY_OK;
}

gy_result gy_joint_set_motor(gy_world *w, gy_joint id, const gy_joint_motor *motor)
{
    gy_result entered = gy_w_enter(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_w_joint *j = joint_get(w, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    gy_result r = gy_validate_joint_motor(motor);
    if (r != GY_OK)
        return r;
    if (j->def.type != GY_JOINT_HINGE && j->def.type != GY_JOINT_SLIDER)
        return GY_ERR_MISUSE;
    if (j->status == GY_JOINT_LIVE && gy_w_running(w)) {
        r = gy_physics_record_set_motor(w->physics, j->ref, motor);
        if (r != GY_OK)
            return r;
    }
    j->def.motor = *motor;
    return GY_OK;
}

gy_result gy_joint_get_motor(const gy_world *w, gy_joint id, gy_joint_motor *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_w_joint *j = joint_get(w, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    *out = j->def.motor;
    return GY_OK;
}

gy_result gy_joint_get_state(const gy_world *w, gy_joint id, gy_joint_state *out)
{
    gy_result entered = gy_w_enter_read(w, __func__);
    if (entered != GY_OK)
        return entered;
    if (w == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_w_joint *j = joint_get(w, id.bits);
    if (j == NULL)
        return GY_ERR_STALE_HANDLE;
    if (j->status != GY_JOINT_LIVE || !j->has_state)
        return GY_ERR_INACTIVE;
    *out = j->state;
    return GY_OK;
}

void gy_w_joint_state_reply(gy_world *w, gy_physics_joint_ref ref,
                            const gy_physics_joint_state_reply *r)
{
    gy_w_joint *j = joint_by_ref(w, ref);
    if (j == NULL || j->status != GY_JOINT_LIVE)
        return;
    gy_joint_state s = {r->position,
                        r->velocity,
                        r->twist,
                        {r->force[0], r->force[1], r->force[2]},
                        {r->torque[0], r->torque[1], r->torque[2]}};
    if (!gy_is_finite(s.position) || !gy_is_finite(s.velocity) || !gy_is_finite(s.twist) ||
        !gy_vec3_is_finite(s.force) || !gy_vec3_is_finite(s.torque))
        return;
    j->state = s;
    j->has_state = true;
}

void gy_w_joints_body_released(gy_world *w, uint32_t slot)
{
    if (gy_w_joints_of(w, slot) == 0)
        return;
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j == NULL || (j->a != slot && j->b != slot) || j->status != GY_JOINT_LIVE)
            continue;
        /* Released before the body (the adapter would drop it with the body anyway), so the
         * subsystem's pool retires the ref and its index serves the next joint. */
        release_ref(w, j);
        j->status = GY_JOINT_PENDING;
        w->joints_pending++;
    }
}

void gy_w_joints_entity_destroyed(gy_world *w, uint32_t slot)
{
    for (uint32_t i = 0; i < w->joint_pool.count && gy_w_joints_of(w, slot) > 0; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j != NULL && (j->a == slot || j->b == slot))
            release_joint(w, j);
    }
}

void gy_w_joints_flush(gy_world *w)
{
    if (w->joints_pending == 0 || !gy_w_running(w))
        return;
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j != NULL && j->status == GY_JOINT_PENDING)
            try_create(w, j);
    }
}

void gy_w_joint_failed(gy_world *w, gy_physics_joint_ref ref)
{
    gy_w_joint *j = joint_by_ref(w, ref);
    if (j == NULL || j->status != GY_JOINT_LIVE)
        return;
    j->status = GY_JOINT_FAILED; /* its ref kept until released */
    gy_log(w->logger, GY_LOG_WARN, "world: the adapter refused a joint on entity '%s'",
           gy_w_entity_name(w, j->a));
}

void gy_w_joint_broken(gy_world *w, gy_physics_joint_ref ref)
{
    gy_w_joint *j = joint_by_ref(w, ref);
    if (j == NULL || j->status != GY_JOINT_LIVE)
        return;
    j->status = GY_JOINT_BROKEN; /* its ref kept until released */
}

void gy_w_joints_stopped(gy_world *w)
{
    gy_w_ref_table_clear(&w->joint_refs);
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j == NULL)
            continue;
        j->ref = (gy_physics_joint_ref){0, 0}; /* broken and failed ones' too */
        if (j->status != GY_JOINT_LIVE)
            continue;
        j->status = GY_JOINT_PENDING;
        w->joints_pending++;
    }
}

gy_result gy_w_joints_bootstrap(gy_world *w, gy_physics_joint_def **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        const gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        const gy_w_body *ca, *cb;
        if (j != NULL && j->status == GY_JOINT_PENDING && body_ready(w, j->a, &ca) &&
            (j->b == GY_W_NONE || body_ready(w, j->b, &cb)))
            n++;
    }
    if (n == 0)
        return GY_OK;
    /* The start issues the list's k-th joint index k + 1 (none is held: physics stopped). */
    if (gy_w_ref_table_reserve(w->alloc, &w->joint_refs, n) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    gy_physics_joint_def *d = gy_alloc(w->alloc, (size_t)n * sizeof *d);
    if (d == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t k = 0;
    for (uint32_t i = 0; i < w->joint_pool.count && k < n; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        const gy_w_body *ca, *cb = NULL;
        if (j == NULL || j->status != GY_JOINT_PENDING || !body_ready(w, j->a, &ca) ||
            (j->b != GY_W_NONE && !body_ready(w, j->b, &cb)))
            continue;
        gy_joint_def def = world_def(j, gy_w_world_pose(w, j->a));
        gy_joint_def check = def;
        check.a.bits = 1; /* the adapter ids are filled on the physics thread */
        check.b.bits = cb != NULL ? 2u : 0u;
        gy_result r = gy_validate_joint_def(&check);
        if (r != GY_OK) {
            /* Placed out of range by its bodies' poses: it waits, as a joint whose create could
             * not be recorded does, and the rest of the world starts. */
            gy_log(w->logger, GY_LOG_WARN, "world: joint on entity '%s' not created at start: %s",
                   gy_w_entity_name(w, j->a), gy_result_message(r));
            continue;
        }
        uint32_t key = k + 1u;
        memset(&d[k], 0, sizeof d[k]);
        /* Named by index (the generations are provisional): the start issues the refs. */
        d[k].a = ca->ref;
        d[k].b = cb != NULL ? cb->ref : (gy_physics_body_ref){0, 0};
        d[k].def = def;
        j->ref = (gy_physics_joint_ref){key, 0}; /* the start issues the generation */
        gy_w_ref_table_set(&w->joint_refs, key, j->handle);
        k++;
    }
    *out = d;
    *count = k;
    return GY_OK;
}

void gy_w_joints_started(gy_world *w, const gy_physics_joint_ref *refs, uint32_t count, bool ok)
{
    for (uint32_t i = 0; i < count; i++) {
        gy_w_joint *j = joint_by_key(w, i + 1u); /* the index the start issued it */
        if (j == NULL)
            continue;
        if (ok) {
            j->ref = refs[i];
            gy_w_ref_table_issued(&w->joint_refs, j->ref.index, j->handle);
            j->status = GY_JOINT_LIVE;
            j->has_state = false;
            /* The bodies' refs as the start issued them. */
            const gy_w_body *ca = gy_w_body_of(w, j->a);
            const gy_w_body *cb = j->b != GY_W_NONE ? gy_w_body_of(w, j->b) : NULL;
            j->a_generation = ca != NULL ? ca->ref.generation : 0u;
            j->b_generation = cb != NULL ? cb->ref.generation : 0u;
            w->joints_pending--;
        } else {
            drop_key(w, j);
        }
    }
}

void gy_w_joints_fini(gy_world *w)
{
    for (uint32_t i = 0; i < w->joint_pool.count; i++) {
        gy_w_joint *j = gy_handle_pool_at(&w->joint_pool, i, NULL);
        if (j != NULL)
            gy_free(w->alloc, j, sizeof *j);
    }
    gy_handle_pool_fini(&w->joint_pool);
    gy_w_ref_table_free(w->alloc, &w->joint_refs);
}
