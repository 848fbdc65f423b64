/* Kinematic moves (MOVE_KINEMATIC): a kinematic body travels to a target pose over a whole number
 * of steps by velocity, so the solver sees it move and it pushes and carries what it meets, where
 * a teleport would jump through them. Each step aims at its share of the path from the pose the
 * move began at, the last one at the target itself: the velocity the adapter derives makes the body
 * land on the target exactly (to rounding), and the error of one step never carries into the
 * next. Then the body stops there. Physics thread, inside the sim lock. */
#include <math.h>

#include "gyre/math.h"
#include "physics_roster.h"

static gy_phys_move *find_move(gy_phys_sim *p, uint32_t store_index)
{
    for (uint32_t i = 0; i < p->move_count; i++)
        if (p->moves[i].body.index == store_index)
            return &p->moves[i];
    return NULL;
}

static void remove_move(gy_phys_sim *p, uint32_t i)
{
    p->moves[i] = p->moves[--p->move_count];
}

gy_result gy_phys_move_begin(gy_phys_sim *p, gy_physics_body_ref ref, gy_pose target,
                             uint32_t steps)
{
    uint32_t store_index = ref.index;
    gy_phys_body *e = gy_phys_body_at(p, ref);
    if (e == NULL)
        return GY_ERR_STALE_HANDLE;
    if (e->motion != GY_MOTION_KINEMATIC || e->character)
        return GY_ERR_INVALID_MOTION;
    if (steps == 0 || steps > GY_PHYS_MAX_MOVE_STEPS || gy_validate_pose(target) != GY_OK)
        return GY_ERR_INVALID_ARGUMENT;
    gy_body_state st;
    gy_result r = p->cfg->backend->body_get_state(p->world, e->id, &st);
    if (r != GY_OK)
        return r;
    gy_phys_move *m = find_move(p, store_index);
    if (m == NULL) {
        if (p->move_count == p->move_capacity &&
            gy_array_reserve(p->cfg->alloc, (void **)&p->moves, &p->move_capacity,
                             p->move_count + 1u, sizeof *p->moves) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        m = &p->moves[p->move_count++];
    }
    m->start = st.pose;
    m->target = target;
    m->target.rotation = gy_quat_normalize(target.rotation);
    m->body = ref;
    m->steps = steps;
    m->done = 0;
    return GY_OK;
}

/* The body at rest: the velocities were the move's. */
static void stop(gy_phys_sim *p, const gy_phys_move *m)
{
    gy_phys_body *e = gy_phys_body_at(p, m->body);
    if (e == NULL)
        return;
    p->cfg->backend->body_set_linear_velocity(p->world, e->id, gy_v3(0.0, 0.0, 0.0));
    p->cfg->backend->body_set_angular_velocity(p->world, e->id, gy_v3(0.0, 0.0, 0.0));
    gy_phys_touch(p, m->body.index);
}

void gy_phys_move_cancel(gy_phys_sim *p, uint32_t store_index)
{
    for (uint32_t i = 0; i < p->move_count; i++)
        if (p->moves[i].body.index == store_index) {
            stop(p, &p->moves[i]);
            remove_move(p, i);
            return;
        }
}

/* The pose a fraction t (0..1] of the way from m->start to m->target: a straight line, and a turn
 * about one fixed axis by the shorter way round. */
static gy_pose waypoint(const gy_phys_move *m, double t)
{
    if (t >= 1.0)
        return m->target;
    gy_pose out;
    out.position = gy_v3_add(m->start.position,
                             gy_v3_scale(gy_v3_sub(m->target.position, m->start.position), t));
    gy_vec3 axis;
    double s, angle = gy_quat_turn(m->start.rotation, m->target.rotation, &axis, &s);
    if (angle > 0.0) {
        out.rotation = gy_quat_normalize(gy_quat_mul(
            gy_quat_axis_angle(gy_v3_scale(axis, 1.0 / s), angle * t), m->start.rotation));
    } else {
        out.rotation = m->target.rotation;
    }
    return out;
}

void gy_phys_moves_before_step(gy_phys_sim *p)
{
    for (uint32_t i = 0; i < p->move_count;) {
        gy_phys_move *m = &p->moves[i];
        gy_phys_body *e = gy_phys_body_at(p, m->body);
        if (e == NULL) {
            remove_move(p, i);
            continue;
        }
        gy_pose aim = waypoint(m, (double)(m->done + 1u) / (double)m->steps);
        if (p->cfg->backend->body_move_kinematic(p->world, e->id, aim, p->cfg->step_dt) != GY_OK) {
            gy_log(p->cfg->logger, GY_LOG_WARN, "physics: a kinematic move was refused and ends");
            remove_move(p, i);
            continue;
        }
        m->done++;
        gy_phys_touch(p, m->body.index);
        i++;
    }
}

void gy_phys_moves_after_step(gy_phys_sim *p)
{
    for (uint32_t i = 0; i < p->move_count;) {
        gy_phys_move *m = &p->moves[i];
        if (m->done < m->steps) {
            i++;
            continue;
        }
        stop(p, m);
        remove_move(p, i);
    }
}

void gy_phys_moves_free(gy_phys_sim *p)
{
    if (p->moves != NULL)
        gy_free(p->cfg->alloc, p->moves, (size_t)p->move_capacity * sizeof *p->moves);
    p->moves = NULL;
    p->move_count = p->move_capacity = 0;
}
