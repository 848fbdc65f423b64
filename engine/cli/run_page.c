/* The page of a run (--html, docs/viewing.md): what `gyre run` feeds the page writer (page.h)
 * as it goes: every tracked entity's state at each frame the page keeps, the collision events,
 * the number of bodies awake, the diagnostics samples (5 Hz), and at the end the expects. */
#include <string.h>

#include "cli.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "page.h"

#ifndef GYRE_VERSION
#define GYRE_VERSION "unknown"
#endif

/* The diagnostics the page plots, by group (a plot each): one series per quantity, in the order
 * diag_values lists them. */
static const struct {
    const char *group, *name, *unit;
} diag_series[] = {
    {"bodies", "awake", "bodies"},
    {"bodies", "sleeping", "bodies"},
    {"bodies", "static", "bodies"},
    {"bodies", "characters", "bodies"},
    {"contacts and events", "pairs", "pairs"},
    {"contacts and events", "points", "points"},
    {"contacts and events", "events per tick", "events"},
    {"body table", "live", "slots"},
    {"body table", "used", "slots"},
    {"body table", "capacity", "slots"},
    {"allocator", "live", "bytes"},
    {"allocator", "peak", "bytes"},
    {"runtime geometry", "jobs", "jobs"},
    {"runtime geometry", "bodies waiting", "bodies"},
    {"runtime geometry", "most units in a tick", "units"},
};
#define DIAG_SERIES (sizeof diag_series / sizeof diag_series[0])

static void diag_values(const gy_physics_diagnostics *d, double v[DIAG_SERIES])
{
    const double values[DIAG_SERIES] = {d->bodies_awake,
                                        d->bodies_sleeping,
                                        d->bodies_static,
                                        d->characters,
                                        d->contact_pairs,
                                        d->contact_points,
                                        d->events_per_tick,
                                        d->body_slots_live,
                                        d->body_slots_used,
                                        d->body_slots_capacity,
                                        (double)d->allocator_live_bytes,
                                        (double)d->allocator_peak_bytes,
                                        d->geometry_jobs,
                                        d->geometry_bodies_waiting,
                                        (double)d->geometry_tick_max_units};
    memcpy(v, values, sizeof values);
}

/* The diagnostics series, unless the sampler is compiled out (then the page has none). */
static void add_diagnostics(gy_cli_runner *R)
{
    R->page_diag = -1;
    R->page_diag_sample = 0;
    gy_physics_diagnostics d;
    if (gy_physics_get_diagnostics(gy_world_physics(R->world), &d) == GY_ERR_UNSUPPORTED)
        return;
    double duration = (double)R->total_ticks * R->dt;
    for (uint32_t i = 0; i < DIAG_SERIES; i++) {
        int32_t s = gy_cli_page_add_series(R->page, diag_series[i].name, diag_series[i].unit,
                                           duration, NAN);
        if (s < 0)
            return; /* out of memory: the page is marked and refuses to be written */
        gy_cli_page_set_series_group(R->page, s, diag_series[i].group);
        if (i == 0)
            R->page_diag = s;
    }
}

/* Records the latest diagnostics sample once, at the tick it was taken. */
static void record_diagnostics(gy_cli_runner *R)
{
    gy_physics_diagnostics d;
    if (R->page_diag < 0 || gy_physics_get_diagnostics(gy_world_physics(R->world), &d) != GY_OK ||
        d.sample == R->page_diag_sample)
        return;
    R->page_diag_sample = d.sample;
    double v[DIAG_SERIES];
    diag_values(&d, v);
    for (uint32_t i = 0; i < DIAG_SERIES; i++)
        gy_cli_page_sample(R->page, R->page_diag + (int32_t)i, (double)d.tick * R->dt, v[i]);
}

gy_result gy_cli_page_begin(gy_cli_runner *R)
{
    R->page = gy_cli_page_create(GY_CLI_PAGE_RUN);
    if (R->page == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_cli_page_set_info(R->page, "scene", R->opt.scene_path);
    gy_cli_page_set_info(R->page, "backend", R->backend);
    gy_cli_page_set_info(R->page, "mode", R->opt.realtime ? "realtime" : "lockstep");
    gy_cli_page_set_info(R->page, "gyre", GYRE_VERSION);
    gy_cli_page_set_timeline(R->page, (double)R->step_hz, R->total_ticks, R->ent_count);
    R->page_awake = gy_cli_page_add_series(R->page, "bodies awake", "bodies",
                                           (double)R->total_ticks * R->dt, NAN);
    add_diagnostics(R);
    return GY_OK;
}

static const char *joint_type_name(gy_joint_type t)
{
    static const char *const names[] = {"fixed", "ball", "hinge", "slider", "distance"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "joint";
}

/* The joints of an instance, with their anchors where the instance put them. */
static void add_joints(gy_cli_runner *R, const gy_scene_instance *inst)
{
    const gy_scene *s = inst->scene;
    for (uint32_t k = 0; k < s->joint_count && k < inst->joint_count; k++) {
        const gy_scene_joint *j = &s->joints[k];
        int32_t a = gy_cli_entity_index(R, inst->entities[j->a]);
        int32_t b = j->b >= 0 ? gy_cli_entity_index(R, inst->entities[j->b]) : -1;
        if (gy_array_reserve(R->alloc, (void **)&R->page_joints, &R->page_joint_capacity,
                             R->page_joint_count + 1u, sizeof *R->page_joints) != GY_OK ||
            gy_cli_page_add_joint(R->page, joint_type_name(j->def.type), a, b,
                                  gy_v3_add(j->def.anchor, inst->offset)) < 0)
            return; /* out of memory: the page is marked (or its joints are fewer) */
        R->page_joints[R->page_joint_count++] = inst->joints[k];
    }
}

void gy_cli_page_record_tick(gy_cli_runner *R)
{
    gy_cli_page *pg = R->page;
    /* Entities and joints spawned since the last frame join the page in the runner's order. */
    for (int32_t i = gy_cli_page_entity_count(pg); (uint32_t)i < R->ent_count; i++)
        if (gy_cli_page_add_entity(pg, R->ents[i].name, R->ents[i].physics) != i)
            return; /* out of memory: the page is marked and refuses to be written */
    for (; R->page_instances <= R->spawn_count; R->page_instances++)
        add_joints(R, R->page_instances == 0 ? R->instance
                                             : R->spawned[R->page_instances - 1u].instance);
    if (!gy_cli_page_begin_frame(pg, R->tick))
        return;
    for (uint32_t k = 0; k < R->page_joint_count; k++) {
        gy_joint_status status;
        if (gy_joint_get_status(R->world, R->page_joints[k], &status) == GY_OK &&
            status == GY_JOINT_LIVE)
            gy_cli_page_joint_live(pg, (int32_t)k, R->tick);
    }
    for (uint32_t i = 0; i < R->ent_count; i++) {
        gy_pose pose;
        gy_physics_state st;
        if (gy_entity_get_world_pose(R->world, R->ents[i].handle, &pose) != GY_OK ||
            gy_body_get_state(R->world, R->ents[i].handle, &st) != GY_OK)
            continue; /* destroyed: absent from here on */
        gy_cli_page_record(pg, R->tick, (int32_t)i, &pose, st.linear_velocity, st.awake);
    }
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(R->world), &ps);
    gy_cli_page_sample(pg, R->page_awake, (double)R->tick * R->dt, (double)ps.awake);
    record_diagnostics(R);
}

void gy_cli_page_record_event(gy_cli_runner *R, const gy_collision_event *ev, uint64_t tick)
{
    gy_cli_page_event(R->page, tick, gy_scene_event_kind_name((gy_scene_event_kind)ev->kind),
                      gy_cli_entity_index(R, ev->self), gy_cli_entity_index(R, ev->other),
                      &ev->point, &ev->normal);
}

void gy_cli_page_record_body_event(gy_cli_runner *R, gy_scene_event_kind kind, gy_entity e,
                                   uint64_t tick)
{
    gy_cli_page_event(R->page, tick, gy_scene_event_kind_name(kind), gy_cli_entity_index(R, e), -1,
                      NULL, NULL);
}

bool gy_cli_page_finish(gy_cli_runner *R, FILE *f)
{
    for (uint32_t i = 0; i < R->expect_count; i++) {
        const gy_cli_expect *x = &R->expects[i];
        char label[256];
        if (x->entity != NULL)
            snprintf(label, sizeof label, "%s", x->entity);
        else if (x->action != NULL && x->action->type == GY_SCENE_ACTION_EXPECT_EVENT)
            snprintf(label, sizeof label, "%s %s · %s",
                     gy_scene_event_kind_name(x->action->expect_event.kind),
                     x->a != NULL ? x->a : "?", x->b != NULL ? x->b : "?");
        else
            snprintf(label, sizeof label, "event");
        gy_cli_page_expect(R->page, gy_cli_tick_for(R, x->at), x->at, label, x->passed, x->detail);
    }
    if (!gy_cli_page_write(R->page, f)) {
        fprintf(stderr, "gyre run: --html %s: out of memory assembling the page\n",
                R->opt.html_path);
        return false;
    }
    return true;
}

void gy_cli_page_release(gy_cli_runner *R)
{
    gy_cli_page_free(R->page);
    R->page = NULL;
    if (R->page_joints != NULL)
        gy_free(R->alloc, R->page_joints, (size_t)R->page_joint_capacity * sizeof *R->page_joints);
    R->page_joints = NULL;
}
