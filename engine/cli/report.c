/* The runner's outputs: the report JSON, event lines and the trace CSV (formats in docs/cli.md).
 *
 * Numbers are written with at most 6 decimals (micrometres, µm/s): the World's poses come from
 * float proxies, so more digits would print float noise, and a fixed rule keeps lockstep reports
 * byte-identical from run to run. */
#include <math.h>
#include <string.h>

#include "cli.h"

#ifndef GYRE_VERSION
#define GYRE_VERSION "unknown"
#endif

void gy_cli_format_number(char *buf, size_t size, double v, bool json)
{
    if (!gy_is_finite(v)) {
        snprintf(buf, size, "%s", json ? "null" : "nan");
        return;
    }
    if (fabs(v) >= 1e15) {
        snprintf(buf, size, "%.17g", v);
        return;
    }
    snprintf(buf, size, "%.6f", v);
    char *dot = strchr(buf, '.');
    if (dot != NULL) {
        char *end = buf + strlen(buf);
        while (end > dot + 1 && end[-1] == '0')
            *--end = '\0';
        if (end == dot + 1)
            *dot = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        snprintf(buf, size, "0");
}

void gy_cli_json_number(FILE *f, double v)
{
    char buf[64];
    gy_cli_format_number(buf, sizeof buf, v, true);
    fputs(buf, f);
}

static void vec3(FILE *f, gy_vec3 v)
{
    fputc('[', f);
    gy_cli_json_number(f, v.x);
    fputs(", ", f);
    gy_cli_json_number(f, v.y);
    fputs(", ", f);
    gy_cli_json_number(f, v.z);
    fputc(']', f);
}

static void quat(FILE *f, gy_quat q)
{
    fputc('[', f);
    gy_cli_json_number(f, q.x);
    fputs(", ", f);
    gy_cli_json_number(f, q.y);
    fputs(", ", f);
    gy_cli_json_number(f, q.z);
    fputs(", ", f);
    gy_cli_json_number(f, q.w);
    fputc(']', f);
}

void gy_cli_json_string(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* ---- trace ----------------------------------------------------------------------------------- */

void gy_cli_write_trace_header(FILE *f)
{
    fputs("tick,t,entity,x,y,z,qx,qy,qz,qw,vx,vy,vz\n", f);
}

static void csv_string(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v)
{
    char buf[64];
    gy_cli_format_number(buf, sizeof buf, v, false);
    fputc(',', f);
    fputs(buf, f);
}

void gy_cli_write_trace_rows(gy_cli_runner *R)
{
    char t[64];
    gy_cli_format_number(t, sizeof t, (double)R->tick * R->dt, false);
    for (uint32_t i = 0; i < R->ent_count; i++) {
        const gy_cli_entity *e = &R->ents[i];
        gy_pose pose;
        gy_physics_state st;
        if (gy_entity_get_world_pose(R->world, e->handle, &pose) != GY_OK ||
            gy_body_get_state(R->world, e->handle, &st) != GY_OK)
            continue; /* destroyed */
        fprintf(R->trace_out, "%llu,%s,", (unsigned long long)R->tick, t);
        csv_string(R->trace_out, e->name);
        csv_number(R->trace_out, pose.position.x);
        csv_number(R->trace_out, pose.position.y);
        csv_number(R->trace_out, pose.position.z);
        csv_number(R->trace_out, pose.rotation.x);
        csv_number(R->trace_out, pose.rotation.y);
        csv_number(R->trace_out, pose.rotation.z);
        csv_number(R->trace_out, pose.rotation.w);
        csv_number(R->trace_out, st.linear_velocity.x);
        csv_number(R->trace_out, st.linear_velocity.y);
        csv_number(R->trace_out, st.linear_velocity.z);
        fputc('\n', R->trace_out);
    }
}

/* ---- events ---------------------------------------------------------------------------------- */

static const char *const k_kind_names[3] = {"enter", "stay", "exit"};

void gy_cli_write_event(gy_cli_runner *R, const gy_collision_event *ev, uint64_t tick)
{
    FILE *f = R->events_out;
    fprintf(f, "{\"tick\": %llu, \"t\": ", (unsigned long long)tick);
    gy_cli_json_number(f, (double)tick * R->dt);
    fprintf(f, ", \"kind\": \"%s\", \"a\": ", k_kind_names[ev->kind]);
    gy_cli_json_string(f, gy_cli_entity_name(R, ev->self));
    fputs(", \"b\": ", f);
    gy_cli_json_string(f, gy_cli_entity_name(R, ev->other));
    fputs(", \"point\": ", f);
    vec3(f, ev->point);
    fputs(", \"normal\": ", f);
    vec3(f, ev->normal);
    fputs(", \"penetration\": ", f);
    gy_cli_json_number(f, ev->penetration);
    fputs(", \"normal_impulse\": ", f);
    gy_cli_json_number(f, ev->normal_impulse);
    fputs("}\n", f);
}

void gy_cli_write_body_event(gy_cli_runner *R, gy_scene_event_kind kind, gy_entity entity,
                             uint64_t tick)
{
    FILE *f = R->events_out;
    fprintf(f, "{\"tick\": %llu, \"t\": ", (unsigned long long)tick);
    gy_cli_json_number(f, (double)tick * R->dt);
    fprintf(f, ", \"kind\": \"%s\", \"a\": ", gy_scene_event_kind_name(kind));
    gy_cli_json_string(f, gy_cli_entity_name(R, entity));
    fputs(", \"b\": null, \"point\": null, \"normal\": null, \"penetration\": null, "
          "\"normal_impulse\": null}\n",
          f);
}

/* ---- the report ------------------------------------------------------------------------------ */

gy_result gy_cli_snapshot_entities(gy_cli_runner *R)
{
    R->finals =
        R->ent_count ? gy_alloc_zeroed(R->alloc, (size_t)R->ent_count * sizeof *R->finals) : NULL;
    if (R->ent_count && R->finals == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    R->final_count = 0;
    for (uint32_t i = 0; i < R->ent_count; i++) {
        const gy_cli_entity *e = &R->ents[i];
        gy_pose pose;
        gy_physics_state st;
        if (gy_entity_get_world_pose(R->world, e->handle, &pose) != GY_OK ||
            gy_body_get_state(R->world, e->handle, &st) != GY_OK)
            continue;
        gy_cli_final *f = &R->finals[R->final_count++];
        f->name = e->name;
        f->pose = pose;
        f->linear_velocity = st.linear_velocity;
        f->angular_velocity = st.angular_velocity;
        f->body = gy_body_type_name(e->physics->body_type);
        f->awake = e->physics->body_type == GY_BODY_DYNAMIC ? (st.awake ? 1 : 0) : -1;
        f->grounded = e->physics->is_character ? (st.grounded ? 1 : 0) : -1;
        f->ground_state = e->physics->is_character ? (int)st.ground_state : -1;
    }
    return GY_OK;
}

static void write_entities(FILE *f, const gy_cli_runner *R)
{
    fputs("  \"entities\": [", f);
    for (uint32_t i = 0; i < R->final_count; i++) {
        const gy_cli_final *e = &R->finals[i];
        fputs(i == 0 ? "\n    { \"name\": " : ",\n    { \"name\": ", f);
        gy_cli_json_string(f, e->name);
        fputs(", \"position\": ", f);
        vec3(f, e->pose.position);
        fputs(", \"rotation\": ", f);
        quat(f, e->pose.rotation);
        fputs(",\n      \"linear_velocity\": ", f);
        vec3(f, e->linear_velocity);
        fputs(", \"angular_velocity\": ", f);
        vec3(f, e->angular_velocity);
        fputs(",\n      \"body\": ", f);
        gy_cli_json_string(f, e->body);
        fprintf(f, ", \"awake\": %s, \"grounded\": %s, \"ground_state\": ",
                e->awake < 0 ? "null"
                : e->awake   ? "true"
                             : "false",
                e->grounded < 0 ? "null"
                : e->grounded   ? "true"
                                : "false");
        if (e->ground_state < 0)
            fputs("null", f);
        else
            gy_cli_json_string(f, gy_ground_state_name((gy_ground_state)e->ground_state));
        fputs(" }", f);
    }
    fputs(R->final_count ? "\n  ],\n" : "],\n", f);
}

static void write_raycasts(FILE *f, const gy_cli_runner *R)
{
    fputs("  \"raycasts\": [", f);
    for (uint32_t i = 0; i < R->raycast_count; i++) {
        const gy_cli_raycast *c = &R->raycasts[i];
        fputs(i == 0 ? "\n    { \"label\": " : ",\n    { \"label\": ", f);
        gy_cli_json_string(f, c->label);
        fputs(", \"at\": ", f);
        gy_cli_json_number(f, c->at);
        fprintf(f, ", \"hit\": %s, \"entity\": ", c->hit ? "true" : "false");
        gy_cli_json_string(f, c->hit ? c->entity : NULL);
        if (c->hit) {
            fputs(",\n      \"distance\": ", f);
            gy_cli_json_number(f, c->distance);
            fputs(", \"point\": ", f);
            vec3(f, c->point);
            fputs(", \"normal\": ", f);
            vec3(f, c->normal);
            fputs(" }", f);
        } else {
            fputs(", \"distance\": null, \"point\": null, \"normal\": null }", f);
        }
    }
    fputs(R->raycast_count ? "\n  ],\n" : "],\n", f);
}

/* A vec3 whose unset components (an expect's nulls: don't care) are written as null. */
static void masked_vec3(FILE *f, gy_vec3 v, const bool set[3])
{
    const double c[3] = {v.x, v.y, v.z};
    fputc('[', f);
    for (int i = 0; i < 3; i++) {
        fputs(i ? ", " : "", f);
        if (set[i])
            gy_cli_json_number(f, c[i]);
        else
            fputs("null", f);
    }
    fputc(']', f);
}

static const char *json_bool(bool b)
{
    return b ? "true" : "false";
}

/* `expected` and `actual` of an `expect`: the same keys, those the script entry checks. */
static void expect_values(FILE *f, const gy_cli_expect *x)
{
    const gy_scene_action *a = x->action;
    static const bool all[3] = {true, true, true};
    fputs(",\n      \"expected\": {", f);
    const char *sep = " ";
    if (a->expect.has_position) {
        fprintf(f, "%s\"position\": ", sep);
        masked_vec3(f, a->expect.position, a->expect.position_set);
        sep = ", ";
    }
    if (a->expect.has_velocity) {
        fprintf(f, "%s\"velocity\": ", sep);
        masked_vec3(f, a->expect.velocity, a->expect.velocity_set);
        sep = ", ";
    }
    if (a->expect.has_angular_velocity) {
        fprintf(f, "%s\"angular_velocity\": ", sep);
        masked_vec3(f, a->expect.angular_velocity, a->expect.angular_velocity_set);
        sep = ", ";
    }
    if (a->expect.has_awake) {
        fprintf(f, "%s\"awake\": %s", sep, json_bool(a->expect.awake));
        sep = ", ";
    }
    if (a->expect.has_grounded) {
        fprintf(f, "%s\"grounded\": %s", sep, json_bool(a->expect.grounded));
        sep = ", ";
    }
    if (a->expect.has_ground_state) {
        fprintf(f, "%s\"ground_state\": ", sep);
        gy_cli_json_string(f, gy_ground_state_name((gy_ground_state)a->expect.ground_state));
    }
    fputs(" }, \"actual\": ", f);
    if (!x->measured) {
        fputs("null", f);
    } else {
        fputc('{', f);
        sep = " ";
        if (a->expect.has_position) {
            fprintf(f, "%s\"position\": ", sep);
            vec3(f, x->position);
            sep = ", ";
        }
        if (a->expect.has_velocity) {
            fprintf(f, "%s\"velocity\": ", sep);
            masked_vec3(f, x->velocity, all); /* null without a body: not finite */
            sep = ", ";
        }
        if (a->expect.has_angular_velocity) {
            fprintf(f, "%s\"angular_velocity\": ", sep);
            masked_vec3(f, x->angular_velocity, all);
            sep = ", ";
        }
        if (a->expect.has_awake) {
            fprintf(f, "%s\"awake\": %s", sep, json_bool(x->awake));
            sep = ", ";
        }
        if (a->expect.has_grounded) {
            fprintf(f, "%s\"grounded\": %s", sep, json_bool(x->grounded));
            sep = ", ";
        }
        if (a->expect.has_ground_state) {
            fprintf(f, "%s\"ground_state\": ", sep);
            gy_cli_json_string(f, gy_ground_state_name(x->ground_state));
        }
        fputs(" }", f);
    }
    fputs(", \"tolerance\": ", f);
    gy_cli_json_number(f, a->expect.tolerance);
}

/* `expected` and `actual` of an `expect_event`: the event sought and the window, and when the
 * first such event happened (null: none did). */
static void expect_event_values(FILE *f, const gy_cli_expect *x)
{
    const gy_scene_action *a = x->action;
    fputs(",\n      \"expected\": { \"kind\": ", f);
    gy_cli_json_string(f, gy_scene_event_kind_name(a->expect_event.kind));
    fputs(", \"a\": ", f);
    gy_cli_json_string(f, x->a);
    fputs(", \"b\": ", f);
    gy_cli_json_string(f, x->b);
    fputs(", \"since\": ", f);
    gy_cli_json_number(f, a->expect_event.since);
    fputs(", \"until\": ", f);
    gy_cli_json_number(f, a->at);
    fputs(" }, \"actual\": ", f);
    if (x->measured) {
        fputs("{ \"first_t\": ", f);
        gy_cli_json_number(f, x->first_event_t);
        fputs(" }", f);
    } else {
        fputs("null", f);
    }
    fputs(", \"tolerance\": null", f);
}

static void write_expects(FILE *f, const gy_cli_runner *R)
{
    fputs("  \"expects\": [", f);
    for (uint32_t i = 0; i < R->expect_count; i++) {
        const gy_cli_expect *x = &R->expects[i];
        fputs(i == 0 ? "\n    { \"at\": " : ",\n    { \"at\": ", f);
        gy_cli_json_number(f, x->at);
        fputs(", \"entity\": ", f);
        gy_cli_json_string(f, x->entity);
        fprintf(f, ", \"passed\": %s, \"detail\": ",
                x->passed < 0 ? "null"
                : x->passed   ? "true"
                              : "false");
        gy_cli_json_string(f, x->detail);
        fprintf(f, ",\n      \"script\": %u, \"do\": ", x->action->index);
        gy_cli_json_string(f, gy_scene_action_name(x->action->type));
        if (x->action->type == GY_SCENE_ACTION_EXPECT)
            expect_values(f, x);
        else
            expect_event_values(f, x);
        fputs(" }", f);
    }
    fputs(R->expect_count ? "\n  ],\n" : "],\n", f);
}

/* Milliseconds with 4 decimals, or null when unknown (not finite). */
static void timing_ms(FILE *f, const char *key, double v, bool last)
{
    fprintf(f, "\"%s\": ", key);
    if (gy_is_finite(v))
        fprintf(f, "%.4f", v);
    else
        fputs("null", f);
    fputs(last ? "" : ", ", f);
}

void gy_cli_write_report(FILE *f, const gy_cli_runner *R, const gy_cli_counters *c,
                         const gy_cli_timing *t)
{
    fprintf(f, "{\n  \"gyre_version\": \"%s\",\n  \"scene\": ", GYRE_VERSION);
    gy_cli_json_string(f, R->opt.scene_path);
    fputs(",\n  \"backend\": ", f);
    gy_cli_json_string(f, R->backend);
    fprintf(f, ",\n  \"mode\": \"%s\",\n", R->opt.realtime ? "realtime" : "lockstep");
    fprintf(f, "  \"ticks\": %llu,\n  \"sim_seconds\": ", (unsigned long long)R->tick);
    gy_cli_json_number(f, (double)R->tick * R->dt);
    fputs(",\n", f);
    if (R->interrupted)
        fputs("  \"interrupted\": true,\n", f); /* present only then: other reports are unchanged */
    write_entities(f, R);
    fprintf(f, "  \"events\": { \"enter\": %llu, \"stay\": %llu, \"exit\": %llu",
            (unsigned long long)R->events[0], (unsigned long long)R->events[1],
            (unsigned long long)R->events[2]);
    /* The body kinds only when they occurred: a run without them reads as it always did. */
    for (int k = GY_SCENE_EVENT_SLEEP; k < GY_SCENE_EVENT_KIND_COUNT; k++)
        if (R->events[k] > 0)
            fprintf(f, ", \"%s\": %llu", gy_scene_event_kind_name((gy_scene_event_kind)k),
                    (unsigned long long)R->events[k]);
    fputs(" },\n", f);
    write_raycasts(f, R);
    write_expects(f, R);
    fprintf(f,
            "  \"counters\": { \"commands\": %llu, \"commands_dropped_stale\": %llu, "
            "\"replies\": %llu, \"replies_dropped\": %llu,\n"
            "                \"bodies_peak\": %u, \"live_objects_at_exit\": ",
            (unsigned long long)c->commands, (unsigned long long)c->commands_dropped_stale,
            (unsigned long long)c->replies, (unsigned long long)c->replies_dropped, c->bodies_peak);
    if (c->live_known)
        fprintf(f, "%u", c->live_objects_at_exit);
    else
        fputs("null", f);
    /* Only when runtime geometry went through the budget: other runs read as they always did. */
    const gy_physics_geometry_stats *g = &c->geometry;
    if (g->built + g->cancelled > 0)
        fprintf(f,
                ",\n                \"geometry\": { \"budget_units\": %u, \"built\": %llu, "
                "\"cancelled\": %llu, \"pending\": %u, \"max_tick_units\": %llu }",
                g->budget, (unsigned long long)g->built, (unsigned long long)g->cancelled, g->jobs,
                (unsigned long long)g->max_tick_units);
    fputs(" },\n", f);
    fputs("  \"timing\": { \"wall_seconds\": ", f);
    fprintf(f, "%.3f", t->wall_seconds);
    fputs(", \"step_ms\": { ", f);
    timing_ms(f, "mean", t->step_mean_ms, false);
    timing_ms(f, "p50", t->step_p50_ms, false);
    timing_ms(f, "p99", t->step_p99_ms, false);
    timing_ms(f, "max", t->step_max_ms, true);
    fputs(" } }\n}\n", f);
}

/* ---- JUnit XML ------------------------------------------------------------------------------- */

/* Text for an XML element or a double-quoted attribute: markup characters escaped; control
 * characters XML 1.0 cannot hold at all become '?'. */
static void xml_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r' ? '?' : *p, f);
        }
    }
}

/* "script[3] expect 'ball' at 1 s", "script[4] expect_event enter 'ball' 'zone' by 2 s". */
static void junit_case_name(char *buf, size_t size, const gy_cli_expect *x)
{
    char at[64];
    gy_cli_format_number(at, sizeof at, x->at, false);
    const gy_scene_action *a = x->action;
    if (a->type == GY_SCENE_ACTION_EXPECT)
        snprintf(buf, size, "script[%u] expect '%s' at %s s", a->index,
                 x->entity != NULL ? x->entity : "?", at);
    else
        snprintf(buf, size, "script[%u] expect_event %s '%s' '%s' by %s s", a->index,
                 gy_scene_event_kind_name(a->expect_event.kind), x->a != NULL ? x->a : "?",
                 x->b != NULL ? x->b : "?", at);
}

void gy_cli_write_junit(FILE *f, const gy_cli_runner *R, const gy_cli_timing *t)
{
    bool run_failed = R->fault || R->spawn_failed;
    uint32_t tests = R->expect_count + (run_failed ? 1u : 0u), failures = run_failed ? 1u : 0u,
             skipped = 0;
    for (uint32_t i = 0; i < R->expect_count; i++) {
        failures += R->expects[i].passed == 0;
        skipped += R->expects[i].passed < 0;
    }
    char suite[4096];
    snprintf(suite, sizeof suite, "%s (%s)", R->opt.scene_path,
             R->backend != NULL ? R->backend : "?");
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gyre run\" tests=\"", f);
    fprintf(f, "%u\" failures=\"%u\" skipped=\"%u\" time=\"%.3f\">\n", tests, failures, skipped,
            t->wall_seconds);
    fputs("  <testsuite name=\"", f);
    xml_text(f, suite);
    fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" skipped=\"%u\" time=\"%.3f\">\n",
            tests, failures, skipped, t->wall_seconds);
    fputs("    <properties>\n      <property name=\"backend\" value=\"", f);
    xml_text(f, R->backend != NULL ? R->backend : "");
    fprintf(f, "\"/>\n      <property name=\"mode\" value=\"%s\"/>\n",
            R->opt.realtime ? "realtime" : "lockstep");
    char num[64];
    gy_cli_format_number(num, sizeof num, (double)R->tick * R->dt, false);
    fprintf(f, "      <property name=\"sim_seconds\" value=\"%s\"/>\n    </properties>\n", num);
    for (uint32_t i = 0; i < R->expect_count; i++) {
        const gy_cli_expect *x = &R->expects[i];
        char name[512];
        junit_case_name(name, sizeof name, x);
        fputs("    <testcase classname=\"", f);
        xml_text(f, R->opt.scene_path);
        fputs("\" name=\"", f);
        xml_text(f, name);
        fputs("\" time=\"0\"", f);
        if (x->passed == 1) {
            fputs("/>\n", f);
            continue;
        }
        fputs(x->passed == 0 ? ">\n      <failure type=\"expect\" message=\""
                             : ">\n      <skipped message=\"",
              f);
        xml_text(f, x->detail);
        fputs(x->passed == 0 ? "\">" : "\"/>\n    </testcase>\n", f);
        if (x->passed == 0) {
            xml_text(f, x->detail);
            fputs("</failure>\n    </testcase>\n", f);
        }
    }
    if (run_failed) {
        gy_cli_format_number(num, sizeof num, (double)R->tick * R->dt, false);
        fputs("    <testcase classname=\"", f);
        xml_text(f, R->opt.scene_path);
        fprintf(f,
                "\" name=\"run\" time=\"0\">\n      <failure type=\"%s\" message=\"the run "
                "ended at t = %s s: %s (stderr says more)\"/>\n    </testcase>\n",
                R->fault ? "runtime fault" : "spawn", num,
                R->fault ? "a runtime fault" : "a spawned scene did not validate");
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
}
