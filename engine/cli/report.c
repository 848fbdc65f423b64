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

/* ---- the report ------------------------------------------------------------------------------ */

gy_result gy_cli_snapshot_entities(gy_cli_runner *R)
{
    R->finals = R->ent_count ? gy_alloc_zeroed(R->alloc, (size_t)R->ent_count * sizeof *R->finals)
                             : NULL;
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
        fprintf(f, ", \"awake\": %s, \"grounded\": %s }",
                e->awake < 0 ? "null" : e->awake ? "true" : "false",
                e->grounded < 0 ? "null" : e->grounded ? "true" : "false");
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
                x->passed < 0 ? "null" : x->passed ? "true" : "false");
        gy_cli_json_string(f, x->detail);
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
    write_entities(f, R);
    fprintf(f, "  \"events\": { \"enter\": %llu, \"stay\": %llu, \"exit\": %llu },\n",
            (unsigned long long)R->events[0], (unsigned long long)R->events[1],
            (unsigned long long)R->events[2]);
    write_raycasts(f, R);
    write_expects(f, R);
    fprintf(f,
            "  \"counters\": { \"commands\": %llu, \"commands_dropped_stale\": %llu, "
            "\"replies\": %llu, \"replies_dropped\": %llu,\n"
            "                \"bodies_peak\": %u, \"live_objects_at_exit\": ",
            (unsigned long long)c->commands, (unsigned long long)c->commands_dropped_stale,
            (unsigned long long)c->replies, (unsigned long long)c->replies_dropped,
            c->bodies_peak);
    if (c->live_known)
        fprintf(f, "%u },\n", c->live_objects_at_exit);
    else
        fputs("null },\n", f);
    fputs("  \"timing\": { \"wall_seconds\": ", f);
    fprintf(f, "%.3f", t->wall_seconds);
    fputs(", \"step_ms\": { ", f);
    timing_ms(f, "mean", t->step_mean_ms, false);
    timing_ms(f, "p50", t->step_p50_ms, false);
    timing_ms(f, "p99", t->step_p99_ms, false);
    timing_ms(f, "max", t->step_max_ms, true);
    fputs(" } }\n}\n", f);
}
