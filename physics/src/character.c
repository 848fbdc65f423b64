/* The character controller (gyre/physics/character.h). Everything goes through the adapter table,
 * so the behaviour is the same on every middleware; docs/character.md explains the algorithm. */
#include <math.h>
#include <string.h>

#include "gyre/backend/backend.h"
#include "gyre/physics/character.h"
#include "gyre/math.h"

enum {
    MAX_SLIDES = 4,  /* sweep-and-slide iterations per displacement */
    MAX_RECOVER = 4, /* overlap passes pushing the capsule out of solids per tick */
    MAX_HITS = 32,   /* hits gathered per query; enough for a character's small sweeps */
    MAX_PUSHED = 4   /* dynamic bodies pushed per tick */
};

/* Displacements shorter than this (metres) are not swept. */
#define MIN_MOVE 1e-6
/* A hit counts as blocking only when the motion goes into it by more than this (cosine): grazing
 * and receding contacts, including ones the capsule starts in, do not stop it. */
#define BLOCK_COS 1e-4
/* A hit normal facing down more than this (its Y component) is a ceiling. */
#define CEILING_NORMAL_Y (-0.05)
/* Contacts at or above the capsule's equator (normal Y at or below this) never support it. */
#define SUPPORT_MIN_NORMAL_Y 0.05
/* The body is taken as teleported when it is further than this from where the last move left it
 * (metres); the adapter returns what was set, so only a real SET_POSE moves it. */
#define TELEPORT_TOLERANCE 1e-7

static const gy_vec3 UP = {0.0, 1.0, 0.0};

/* ---- settings -------------------------------------------------------------------------------- */

gy_character_def gy_default_character_def(void)
{
    gy_character_def s;
    s.radius = 0.3;
    s.height = 1.8;
    s.max_slope_deg = 45.0;
    s.step_offset = 0.3;
    s.snap_distance = 0.3;
    s.skin_width = 0.01;
    s.max_push_force = 500.0;
    s.mask = 0xffffffffu;
    return s;
}

gy_result gy_validate_character_def(const gy_character_def *s)
{
    if (s == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const double v[] = {s->radius,        s->height,     s->max_slope_deg, s->step_offset,
                        s->snap_distance, s->skin_width, s->max_push_force};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!gy_is_finite(v[i]))
            return GY_ERR_NON_FINITE;
    if (!(s->radius > 0.0) || !(s->height > 2.0 * s->radius))
        return GY_ERR_INVALID_ARGUMENT;
    if (s->max_slope_deg < 0.0 || s->max_slope_deg > 89.0)
        return GY_ERR_INVALID_ARGUMENT;
    if (s->step_offset < 0.0 || s->step_offset > s->height || s->snap_distance < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    if (!(s->skin_width > 0.0) || !(s->skin_width < 0.5 * s->radius) || s->max_push_force < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

const char *gy_ground_state_name(gy_ground_state state)
{
    switch (state) {
    case GY_GROUND_AIRBORNE:
        return "airborne";
    case GY_GROUND_WALKABLE:
        return "walkable";
    case GY_GROUND_STEEP:
        return "steep";
    }
    return NULL;
}

/* ---- one move -------------------------------------------------------------------------------- */

typedef struct pending_push {
    gy_body_id body;
    gy_vec3 force;
} pending_push;

/* Everything one move shares. Query errors are kept in `err` (first one wins) and make the
 * queries answer "nothing", so the move runs to its end and then reports the error without
 * writing anything. */
typedef struct mover {
    const gy_backend *be;
    gy_backend_world *w;
    const gy_character_def *s;
    gy_query_filter filter;
    gy_shape shape;
    double half; /* body origin to the capsule's bottom */
    double cos_max;
    double skin;
    gy_vec3 walk;      /* intended horizontal velocity: the reference for pushing */
    gy_vec3 vel;       /* the capsule's velocity in the current phase (one-way platforms) */
    gy_vec3 ballistic; /* airborne velocity, cut by what it hits */
    bool landed;
    bool ceiling;
    gy_collider_id passing[GY_CHARACTER_MAX_PASSING];
    uint32_t passing_count;
    pending_push pushes[MAX_PUSHED];
    uint32_t push_count;
    gy_result err;
    gy_hit hits[MAX_HITS];
} mover;

static gy_vec3 horizontal(gy_vec3 v)
{
    return gy_v3(v.x, 0.0, v.z);
}

static gy_pose upright(gy_vec3 pos)
{
    gy_pose p = {pos, gy_quat_identity()};
    return p;
}

static void fail(mover *m, gy_result r)
{
    if (m->err == GY_OK)
        m->err = r;
}

static bool is_passing(const mover *m, gy_collider_id c)
{
    for (uint32_t i = 0; i < m->passing_count; i++)
        if (m->passing[i].bits == c.bits)
            return true;
    return false;
}

/* Whether a collider the capsule meets at `h`, with its centre at `com`, stops it as it would
 * stop a body in the step: sensors and response-off colliders never do; a one-way platform does
 * when gy_one_way_accepts the touch, and one it is passing through (entered from below or while
 * rising) does not until the two separate. */
static bool blocks(mover *m, const gy_hit *h, gy_vec3 com)
{
    gy_collider_policy pol;
    gy_result r = m->be->collider_get_policy(m->w, h->collider, &pol);
    if (r != GY_OK) {
        fail(m, r);
        return false;
    }
    if (pol.is_sensor || !pol.contact_response)
        return false;
    if (!pol.one_way)
        return true;
    if (is_passing(m, h->collider))
        return false;
    gy_vec3 pv;
    if (m->be->body_point_velocity(m->w, h->body, h->point, &pv) != GY_OK || !gy_vec3_is_finite(pv))
        pv = gy_v3(0.0, 0.0, 0.0);
    if (gy_one_way_accepts(h->normal, pol.one_way_normal, gy_v3_sub(m->vel, pv), com, h->point,
                           INFINITY, pol.one_way_slop))
        return true;
    if (m->passing_count < GY_CHARACTER_MAX_PASSING)
        m->passing[m->passing_count++] = h->collider;
    return false;
}

/* Casts the capsule from `pos` along `d`. True when something blocks it: *hit is the nearest
 * blocking hit and *travel how far the capsule may go, stopping skin_width short of the hit's
 * plane. Hits the motion leaves or grazes, and hits on `skip`, do not block. The cast reaches
 * skin_width further than `d`, so a move that would end closer than the skin to a surface (or
 * exactly touching it, which a cast may not report) is cut short as well. */
static bool sweep(mover *m, gy_vec3 pos, gy_vec3 d, gy_body_id skip, gy_hit *hit, double *travel)
{
    double len = gy_v3_len(d);
    *travel = len;
    if (!(len > MIN_MOVE) || m->err != GY_OK)
        return false;
    gy_vec3 dir = gy_v3_scale(d, 1.0 / len);
    uint32_t n = 0;
    gy_result r = m->be->shape_cast(m->w, &m->shape, upright(pos), gy_v3_scale(dir, len + m->skin),
                                    &m->filter, GY_COLLECT_ALL, m->hits, MAX_HITS, &n);
    if (r != GY_OK) {
        fail(m, r);
        *travel = 0.0;
        return false;
    }
    const gy_hit *best = NULL;
    double best_dn = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        const gy_hit *h = &m->hits[i];
        if (skip.bits != 0 && h->body.bits == skip.bits)
            continue;
        double dn = gy_v3_dot(dir, h->normal);
        if (!(dn < -BLOCK_COS) || !gy_is_finite(h->distance))
            continue;
        bool nearer = best == NULL || h->distance < best->distance ||
                      (h->distance == best->distance && dn < best_dn);
        if (nearer && blocks(m, h, gy_v3_mad(pos, dir, h->distance))) {
            best = h;
            best_dn = dn;
        }
    }
    if (best == NULL)
        return false;
    double t = best->distance - m->skin / -best_dn;
    if (t >= len)
        return false;
    *hit = *best;
    *travel = fmax(0.0, t);
    return true;
}

/* Pushes the capsule out of static and kinematic solids it overlaps (a platform that moved into
 * it, a spawn inside a wall), deepest first. Dynamic bodies are left to the solver, which already
 * pushes them out of the kinematic capsule. */
static gy_vec3 recover(mover *m, gy_vec3 pos)
{
    gy_query_filter f = m->filter;
    f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC) | GY_MOTION_BIT(GY_MOTION_KINEMATIC);
    for (int it = 0; it < MAX_RECOVER && m->err == GY_OK; it++) {
        uint32_t n = 0;
        gy_result r = m->be->overlap(m->w, &m->shape, upright(pos), &f, GY_COLLECT_ALL, m->hits,
                                     MAX_HITS, &n);
        if (r != GY_OK) {
            fail(m, r);
            break;
        }
        const gy_hit *deep = NULL;
        for (uint32_t i = 0; i < n; i++) {
            const gy_hit *h = &m->hits[i];
            if (h->penetration > MIN_MOVE && gy_is_finite(h->penetration) &&
                gy_v3_len(h->normal) > 0.5 &&
                (deep == NULL || h->penetration > deep->penetration) && blocks(m, h, pos))
                deep = h;
        }
        if (deep == NULL)
            break;
        pos = gy_v3_mad(pos, gy_v3_normalize(deep->normal), deep->penetration + m->skin);
    }
    return pos;
}

/* The normal of what a downward hit rests on. Where the capsule's rounded bottom meets an edge
 * (a step's nose), the contact normal points from the edge to the capsule's centre and looks
 * steep although the surface beyond the edge is flat: a short ray just past the contact, from
 * slightly above it, finds that surface. */
static gy_vec3 support_normal(mover *m, gy_vec3 pos, const gy_hit *hit)
{
    gy_vec3 n = hit->normal;
    if (n.y >= m->cos_max || n.y <= SUPPORT_MIN_NORMAL_Y)
        return n;
    gy_vec3 out = horizontal(gy_v3_sub(hit->point, pos));
    double l = gy_v3_len(out);
    if (!(l > 1e-9))
        return n;
    /* 4e up over e across clears faces up to 76° steep, so the ray starts outside the solid. */
    double e = fmax(m->skin, 0.01);
    gy_vec3 origin = gy_v3_mad(hit->point, out, e / l);
    origin.y += 4.0 * e;
    uint32_t c = 0;
    gy_result r = m->be->raycast(m->w, origin, gy_v3(0.0, -6.0 * e, 0.0), &m->filter,
                                 GY_COLLECT_ALL, m->hits, MAX_HITS, &c);
    if (r != GY_OK) {
        fail(m, r);
        return n;
    }
    const gy_hit *rh = NULL;
    for (uint32_t i = 0; i < c; i++)
        if ((rh == NULL || m->hits[i].distance < rh->distance) && blocks(m, &m->hits[i], pos))
            rh = &m->hits[i];
    if (rh != NULL && rh->normal.y >= m->cos_max && fabs(rh->point.y - hit->point.y) <= 2.0 * e)
        return gy_v3_normalize(rh->normal);
    return n;
}

typedef struct ground {
    gy_hit hit;
    gy_vec3 normal; /* support normal, walkable */
    double travel;  /* how far down the capsule may move to rest skin_width above it */
    bool steep;     /* the probe found support, but steeper than the slope limit */
} ground;

/* Looks for walkable ground at most skin_width + reach below `pos`. */
static bool probe_ground(mover *m, gy_vec3 pos, double reach, ground *g)
{
    gy_body_id none = {0};
    g->steep = false;
    if (!sweep(m, pos, gy_v3(0.0, -(m->skin + reach), 0.0), none, &g->hit, &g->travel))
        return false;
    if (g->hit.normal.y <= SUPPORT_MIN_NORMAL_Y)
        return false;
    g->normal = support_normal(m, pos, &g->hit);
    g->steep = g->normal.y < m->cos_max;
    return !g->steep;
}

/* Queues a bounded push on a body the character walks into. Only dynamic bodies accept forces
 * (the adapter refuses the others), and a body already moving away at least as fast as the
 * character wants to go is left alone, so a crate is walked along rather than flung. */
static void push(mover *m, const gy_hit *hit)
{
    if (!(m->s->max_push_force > 0.0) || m->push_count >= MAX_PUSHED || hit->body.bits == 0)
        return;
    for (uint32_t i = 0; i < m->push_count; i++)
        if (m->pushes[i].body.bits == hit->body.bits)
            return;
    gy_vec3 p = horizontal(gy_v3_neg(hit->normal));
    double pl = gy_v3_len(p);
    if (!(pl > 1e-6))
        return;
    p = gy_v3_scale(p, 1.0 / pl);
    double want = gy_v3_dot(m->walk, p);
    gy_vec3 v;
    if (!(want > 0.0) || m->be->body_point_velocity(m->w, hit->body, hit->point, &v) != GY_OK ||
        gy_v3_dot(v, p) >= want)
        return;
    m->pushes[m->push_count].body = hit->body;
    m->pushes[m->push_count].force = gy_v3_scale(p, m->s->max_push_force);
    m->push_count++;
}

/* Up, forward, down: climbs an obstacle no taller than step_offset. `h` is the horizontal motion
 * left when the obstacle blocked it. Succeeds only when the capsule lands on walkable ground whose
 * contact lies no higher than step_offset above its feet, after real forward progress; then *pos
 * is the landing and the return value the distance gained forward (0 on failure). */
static double try_step(mover *m, gy_vec3 *pos, gy_vec3 h)
{
    double hlen = gy_v3_len(h);
    if (!(m->s->step_offset > m->skin) || !(hlen > MIN_MOVE))
        return 0.0;
    gy_body_id none = {0};
    gy_hit hit;
    double t;
    gy_vec3 p0 = *pos;
    double feet = p0.y - m->half;

    sweep(m, p0, gy_v3_scale(UP, m->s->step_offset), none, &hit, &t);
    double rise = t;
    if (rise < m->skin)
        return 0.0;
    gy_vec3 raised = gy_v3_mad(p0, UP, rise);

    sweep(m, raised, h, none, &hit, &t);
    double progress = t;
    if (progress < MIN_MOVE)
        return 0.0;
    gy_vec3 ahead = gy_v3_mad(raised, h, progress / hlen);

    if (!sweep(m, ahead, gy_v3_scale(UP, -(rise + m->skin)), none, &hit, &t))
        return 0.0;
    gy_vec3 landing = gy_v3_mad(ahead, UP, -t);
    if (hit.normal.y <= SUPPORT_MIN_NORMAL_Y || hit.point.y - feet > m->s->step_offset + m->skin)
        return 0.0;
    if (support_normal(m, landing, &hit).y < m->cos_max || m->err != GY_OK)
        return 0.0;
    *pos = landing;
    return progress;
}

typedef enum slide_mode {
    SLIDE_WALK, /* grounded: steps climbed, steep surfaces act as vertical walls */
    SLIDE_AIR,  /* airborne: slides on true normals, landing and ceilings cut the velocity */
    SLIDE_CARRY /* platform carry: plain collide and slide */
} slide_mode;

/* Collide and slide: moves along `d`, and on each blocking hit keeps only the part of the rest of
 * the motion that runs along the surface (along the crease when two surfaces meet). */
static gy_vec3 slide(mover *m, gy_vec3 pos, gy_vec3 d, slide_mode mode, gy_body_id skip)
{
    gy_vec3 planes[MAX_SLIDES];
    uint32_t plane_count = 0;
    bool stepped = false;
    for (int it = 0; it < MAX_SLIDES && gy_v3_len(d) > MIN_MOVE; it++) {
        gy_hit hit;
        double travel;
        if (!sweep(m, pos, d, skip, &hit, &travel)) {
            if (m->err == GY_OK)
                pos = gy_v3_add(pos, d);
            break;
        }
        double len = gy_v3_len(d);
        gy_vec3 dir = gy_v3_scale(d, 1.0 / len);
        pos = gy_v3_mad(pos, dir, travel);
        gy_vec3 rest = gy_v3_scale(d, 1.0 - travel / len);
        gy_vec3 n = hit.normal;
        bool walkable = n.y >= m->cos_max;
        if (n.y < CEILING_NORMAL_Y && dir.y > 0.0)
            m->ceiling = true;
        if (!walkable && mode != SLIDE_CARRY)
            push(m, &hit);
        if (mode == SLIDE_WALK && !walkable) {
            gy_vec3 hr = horizontal(rest);
            if (!stepped && n.y > CEILING_NORMAL_Y) {
                double gained = try_step(m, &pos, hr);
                if (gained > 0.0) {
                    stepped = true;
                    d = gy_v3_scale(hr, 1.0 - gained / gy_v3_len(hr));
                    continue;
                }
            }
            /* Grounded, a steep surface is a wall: sliding on its true normal would walk the
             * character up it. */
            gy_vec3 nh = horizontal(n);
            if (gy_v3_len(nh) > 1e-6)
                n = gy_v3_normalize(nh);
        }
        if (mode == SLIDE_AIR) {
            if (walkable && dir.y < 0.0)
                m->landed = true;
            double vn = gy_v3_dot(m->ballistic, n);
            if (vn < 0.0)
                m->ballistic = gy_v3_mad(m->ballistic, n, -vn);
        }
        if (mode == SLIDE_AIR && !walkable && n.y > CEILING_NORMAL_Y) {
            /* A steep face: the horizontal motion (the walk, carried velocity) meets it as a
             * wall, or pressing into the face would turn the walk into a climb. What is left
             * slides on the true normal below, so gravity still slides the character down. */
            gy_vec3 nh = horizontal(n);
            double nl = gy_v3_len(nh);
            if (nl > 1e-6) {
                nh = gy_v3_scale(nh, 1.0 / nl);
                double hn = gy_v3_dot(rest, nh);
                if (hn < 0.0)
                    rest = gy_v3_mad(rest, nh, -hn);
            }
        }
        double rn = gy_v3_dot(rest, n);
        if (rn < 0.0)
            rest = gy_v3_mad(rest, n, -rn);
        for (uint32_t k = 0; k < plane_count; k++) {
            if (gy_v3_dot(rest, planes[k]) >= -1e-9)
                continue;
            gy_vec3 crease = gy_v3_cross(planes[k], n);
            double cl = gy_v3_len(crease);
            if (!(cl > 1e-6)) {
                rest = gy_v3(0.0, 0.0, 0.0);
                break;
            }
            crease = gy_v3_scale(crease, 1.0 / cl);
            rest = gy_v3_scale(crease, gy_v3_dot(rest, crease));
        }
        planes[plane_count++] = n;
        d = rest;
    }
    return pos;
}

/* The walk velocity turned into the ground plane at the same speed, so walking up or down a slope
 * follows the surface instead of leaving it or digging into it. */
static gy_vec3 along_ground(gy_vec3 walk, gy_vec3 n)
{
    double speed = gy_v3_len(walk);
    if (!(speed > 0.0) || !(n.y > 0.0))
        return walk;
    gy_vec3 t = gy_v3_cross(n, gy_v3_cross(walk, UP));
    double tl = gy_v3_len(t);
    return tl > 1e-12 ? gy_v3_scale(t, speed / tl) : walk;
}

static gy_result check_move_args(const gy_backend *be, gy_backend_world *w,
                                 const gy_character_def *s, gy_vec3 gravity,
                                 const gy_character_state *st, const gy_character_input *in,
                                 double dt, const gy_character_result *out)
{
    if (be == NULL || w == NULL || st == NULL || in == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_character_def(s);
    if (r != GY_OK)
        return r;
    if (!gy_vec3_is_finite(gravity) || !gy_vec3_is_finite(in->intent) || !gy_is_finite(in->jump) ||
        !gy_is_finite(dt))
        return GY_ERR_NON_FINITE;
    if (!(dt > 0.0) || in->jump < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

/* The velocity of the support under the feet: its body's point velocity plus its collider's
 * surface (conveyor) velocity along the ground, as the step drives a body resting on it. */
static gy_vec3 support_velocity(mover *m, gy_body_id body, gy_collider_id collider, gy_vec3 feet,
                                gy_vec3 normal)
{
    gy_vec3 v;
    if (m->be->body_point_velocity(m->w, body, feet, &v) != GY_OK || !gy_vec3_is_finite(v))
        v = gy_v3(0.0, 0.0, 0.0);
    gy_collider_policy pol;
    if (collider.bits != 0 && m->be->collider_get_policy(m->w, collider, &pol) == GY_OK &&
        gy_vec3_is_finite(pol.surface_velocity)) {
        gy_vec3 sv = pol.surface_velocity;
        v = gy_v3_add(v, gy_v3_mad(sv, normal, -gy_v3_dot(sv, normal)));
    }
    return v;
}

/* The turn about +Y within rotation `q` (its twist), so an upright capsule turns with a support
 * however the support tilts. */
static gy_quat yaw_of(gy_quat q)
{
    gy_quat t = {0.0, q.y, 0.0, q.w};
    return gy_quat_normalize(t);
}

/* Keeps the one-way platforms still overlapping the capsule at `pos`: those it left are judged
 * afresh at the next touch. */
static void prune_passing(mover *m, gy_vec3 pos)
{
    if (m->passing_count == 0 || m->err != GY_OK)
        return;
    gy_query_filter f = m->filter;
    uint32_t n = 0;
    gy_result r =
        m->be->overlap(m->w, &m->shape, upright(pos), &f, GY_COLLECT_ALL, m->hits, MAX_HITS, &n);
    if (r != GY_OK) {
        fail(m, r);
        return;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < m->passing_count; i++) {
        bool still = false;
        for (uint32_t k = 0; k < n && !still; k++)
            still = m->hits[k].collider.bits == m->passing[i].bits;
        if (still)
            m->passing[kept++] = m->passing[i];
    }
    m->passing_count = kept;
}

gy_result gy_character_move(const gy_backend *be, gy_backend_world *w, gy_body_id body,
                            const gy_character_def *s, gy_vec3 gravity, gy_character_state *state,
                            const gy_character_input *in, double dt, gy_character_result *out)
{
    gy_result r = check_move_args(be, w, s, gravity, state, in, dt, out);
    if (r != GY_OK)
        return r;
    gy_body_state bs;
    r = be->body_get_state(w, body, &bs);
    if (r != GY_OK)
        return r;
    if (!gy_vec3_is_finite(bs.pose.position))
        return GY_ERR_NON_FINITE;

    mover m;
    memset(&m, 0, sizeof m);
    m.be = be;
    m.w = w;
    m.s = s;
    m.filter = gy_default_query_filter();
    m.filter.mask = s->mask;
    m.filter.include_sensors = false;
    m.filter.ignore_body = body;
    m.shape.type = GY_SHAPE_CAPSULE;
    m.shape.radius = s->radius;
    m.shape.height = s->height;
    m.half = 0.5 * s->height;
    /* A hair of slack so that a flat floor's normal, a rounding error under 1, counts as flat. */
    m.cos_max = cos(s->max_slope_deg * (GY_PI / 180.0)) - 1e-9;
    m.skin = s->skin_width;
    m.walk = horizontal(in->intent);
    m.err = GY_OK;

    gy_character_state st = *state;
    gy_vec3 start = bs.pose.position;
    gy_vec3 pos = start;
    gy_quat rot = bs.pose.rotation;
    gy_body_id none = {0};
    gy_collider_id no_collider = {0};
    bool teleported =
        st.has_position && gy_v3_len(gy_v3_sub(start, st.position)) > TELEPORT_TOLERANCE;
    if (teleported) {
        /* The old support, momentum and passages belong to the old place. */
        st.ground_body = none;
        st.velocity = gy_v3(0.0, 0.0, 0.0);
        st.inherited = gy_v3(0.0, 0.0, 0.0);
        st.passing_count = 0;
    }
    m.passing_count =
        st.passing_count < GY_CHARACTER_MAX_PASSING ? st.passing_count : GY_CHARACTER_MAX_PASSING;
    memcpy(m.passing, st.passing, sizeof m.passing);

    /* 1. Ride the support: it already moved in this tick's step. The feet follow the support's
     * whole motion since the last move (turn included, so a rotating platform keeps the
     * character at its radius), plus its conveyor surface, and the capsule turns with it. */
    gy_vec3 support_v = gy_v3(0.0, 0.0, 0.0);
    if (st.grounded && st.ground_body.bits != 0) {
        gy_vec3 feet = gy_v3_mad(pos, UP, -m.half);
        gy_body_state gs;
        if (be->body_get_state(w, st.ground_body, &gs) != GY_OK ||
            !gy_vec3_is_finite(gs.pose.position)) {
            st.ground_body = none; /* the support is gone */
        } else {
            m.vel = support_v =
                support_velocity(&m, st.ground_body, st.ground_collider, feet, st.ground_normal);
            gy_pose delta = gy_pose_mul(gs.pose, gy_pose_inverse(st.ground_pose));
            gy_vec3 d = gy_v3_sub(gy_pose_apply(delta, feet), feet);
            gy_vec3 pv;
            if (be->body_point_velocity(w, st.ground_body, feet, &pv) == GY_OK &&
                gy_vec3_is_finite(pv))
                d = gy_v3_mad(d, gy_v3_sub(support_v, pv), dt); /* the conveyor's part */
            rot = gy_quat_normalize(gy_quat_mul(yaw_of(delta.rotation), rot));
            if (gy_v3_len(d) > MIN_MOVE)
                pos = slide(&m, pos, d, SLIDE_CARRY, st.ground_body);
        }
    }

    /* 2. Out of anything that moved into the capsule. */
    m.vel = gy_v3_add(st.velocity, st.inherited);
    pos = recover(&m, pos);

    /* 3. Walk on the ground, or fly. */
    double jump = fmax(in->jump, in->intent.y > 0.0 ? in->intent.y : 0.0);
    bool jumped = st.grounded && jump > 0.0;
    bool grounded = false;
    ground g;
    memset(&g, 0, sizeof g);
    if (st.grounded && !jumped) {
        st.velocity = gy_v3(0.0, 0.0, 0.0);
        st.inherited = gy_v3(0.0, 0.0, 0.0);
        gy_vec3 walk = along_ground(m.walk, st.ground_normal);
        m.vel = walk;
        pos = slide(&m, pos, gy_v3_scale(walk, dt), SLIDE_WALK, none);
        grounded = probe_ground(&m, pos, s->snap_distance, &g);
        if (!grounded)
            st.inherited = support_v; /* walked off: keep the support's velocity */
    } else {
        if (jumped) {
            st.inherited = support_v;
            st.velocity = gy_v3_scale(UP, jump);
        }
        /* Exact for constant gravity, so a jump peaks at v²/2g whatever dt is. */
        gy_vec3 v0 = st.velocity;
        gy_vec3 d = gy_v3_scale(gy_v3_add(gy_v3_add(m.walk, st.inherited), v0), dt);
        d = gy_v3_mad(d, gravity, 0.5 * dt * dt);
        m.ballistic = gy_v3_mad(v0, gravity, dt);
        m.vel = gy_v3_scale(d, 1.0 / dt);
        pos = slide(&m, pos, d, SLIDE_AIR, none);
        st.velocity = m.ballistic;
        /* No ground check while rising: a jump frame must not snap back down. */
        if (!jumped && (m.landed || gy_v3_dot(st.velocity, UP) <= 0.0))
            grounded = probe_ground(&m, pos, m.skin, &g);
        if (grounded) {
            st.velocity = gy_v3(0.0, 0.0, 0.0);
            st.inherited = gy_v3(0.0, 0.0, 0.0);
        }
    }
    if (grounded)
        pos = gy_v3_mad(pos, UP, -g.travel);
    prune_passing(&m, pos);

    gy_vec3 platform_v = gy_v3(0.0, 0.0, 0.0);
    gy_body_state gs;
    memset(&gs, 0, sizeof gs);
    if (grounded) {
        platform_v =
            support_velocity(&m, g.hit.body, g.hit.collider, gy_v3_mad(pos, UP, -m.half), g.normal);
        r = be->body_get_state(w, g.hit.body, &gs);
        if (r != GY_OK)
            fail(&m, r);
    }

    if (m.err != GY_OK)
        return m.err;
    if (!gy_vec3_is_finite(pos) || !gy_vec3_is_finite(st.velocity) ||
        !gy_vec3_is_finite(st.inherited))
        return GY_ERR_NON_FINITE;
    gy_pose np = {pos, rot};
    r = be->body_set_pose(w, body, np);
    if (r != GY_OK)
        return r;
    /* Zero velocity: the body must not drift during the next step, or the next move would start
     * from a pose no sweep checked. The character's velocity travels in the result instead. */
    gy_vec3 zero = gy_v3(0.0, 0.0, 0.0);
    be->body_set_linear_velocity(w, body, zero);
    be->body_set_angular_velocity(w, body, zero);
    for (uint32_t i = 0; i < m.push_count; i++)
        be->body_add_force(w, m.pushes[i].body, m.pushes[i].force); /* non-dynamic: refused */

    st.position = pos;
    st.has_position = true;
    st.grounded = grounded;
    st.ground_body = grounded ? g.hit.body : none;
    st.ground_collider = grounded ? g.hit.collider : no_collider;
    st.ground_pose = grounded ? gs.pose : gy_pose_identity();
    st.ground_user_data = grounded ? g.hit.user_data : 0u;
    st.ground_normal = grounded ? g.normal : zero;
    st.ground_point = grounded ? g.hit.point : zero;
    st.passing_count = m.passing_count;
    memcpy(st.passing, m.passing, sizeof st.passing);
    *state = st;

    memset(out, 0, sizeof *out);
    out->pose = np;
    out->velocity = gy_v3_scale(gy_v3_sub(pos, start), 1.0 / dt);
    out->ground_normal = st.ground_normal;
    out->platform_velocity = platform_v;
    out->ground_body = st.ground_body;
    out->ground_collider = st.ground_collider;
    out->ground_user_data = st.ground_user_data;
    out->ground_state =
        grounded ? GY_GROUND_WALKABLE : (g.steep ? GY_GROUND_STEEP : GY_GROUND_AIRBORNE);
    out->grounded = grounded;
    out->hit_ceiling = m.ceiling;
    out->jumped = jumped;
    out->teleported = teleported;
    return GY_OK;
}

/* ---- the set --------------------------------------------------------------------------------- */

typedef struct char_entry {
    gy_physics_body_ref ref;
    gy_body_id body;
    gy_character_def settings;
    gy_character_state state;
    gy_vec3 intent;
    double jump; /* armed one-off jump, 0: none */
    gy_character_result last;
    bool moved;
} char_entry;

struct gy_character_group {
    const gy_allocator *alloc;
    gy_vec3 gravity;
    char_entry *entries;
    uint32_t count, capacity;
    uint32_t *slot_of; /* body index → entry index + 1, 0: none */
    uint32_t slot_capacity;
    gy_character_group_stats stats;
};

gy_character_group_def gy_default_character_group_def(void)
{
    gy_character_group_def d;
    d.allocator = NULL;
    d.gravity = gy_v3(0.0, -9.81, 0.0);
    return d;
}

gy_result gy_character_group_create(const gy_character_group_def *def, gy_character_group **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_character_group_def d = def != NULL ? *def : gy_default_character_group_def();
    if (!gy_vec3_is_finite(d.gravity))
        return GY_ERR_NON_FINITE;
    const gy_allocator *a = gy_allocator_or_default(d.allocator);
    gy_character_group *set = gy_alloc_zeroed(a, sizeof *set);
    if (set == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    set->alloc = a;
    set->gravity = d.gravity;
    *out = set;
    return GY_OK;
}

void gy_character_group_destroy(gy_character_group *set)
{
    if (set == NULL)
        return;
    gy_free(set->alloc, set->entries, (size_t)set->capacity * sizeof *set->entries);
    gy_free(set->alloc, set->slot_of, (size_t)set->slot_capacity * sizeof *set->slot_of);
    gy_free(set->alloc, set, sizeof *set);
}

static char_entry *find(const gy_character_group *set, uint32_t store_index)
{
    if (store_index >= set->slot_capacity || set->slot_of[store_index] == 0)
        return NULL;
    return &set->entries[set->slot_of[store_index] - 1u];
}

static char_entry *find_live(const gy_character_group *set, gy_physics_body_ref ref)
{
    char_entry *e = find(set, ref.index);
    return e != NULL && ref.generation != 0 && e->ref.generation == ref.generation ? e : NULL;
}

gy_result gy_character_group_add(gy_character_group *set, gy_physics_body_ref ref,
                                 const gy_character_def *settings, gy_body_id body)
{
    uint32_t store_index = ref.index;
    if (set == NULL || ref.generation == 0 || store_index >= GY_PHYSICS_MAX_STORE_INDEX)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_character_def(settings);
    if (r != GY_OK)
        return r;
    if (find(set, store_index) != NULL)
        return GY_ERR_MISUSE;
    if (store_index >= set->slot_capacity) {
        uint32_t old = set->slot_capacity;
        r = gy_array_reserve(set->alloc, (void **)&set->slot_of, &set->slot_capacity,
                             store_index + 1u, sizeof *set->slot_of);
        if (r != GY_OK)
            return r;
        memset(set->slot_of + old, 0, (size_t)(set->slot_capacity - old) * sizeof *set->slot_of);
    }
    r = gy_array_reserve(set->alloc, (void **)&set->entries, &set->capacity, set->count + 1u,
                         sizeof *set->entries);
    if (r != GY_OK)
        return r;
    char_entry *e = &set->entries[set->count++];
    memset(e, 0, sizeof *e);
    e->ref = ref;
    e->body = body;
    e->settings = *settings;
    set->slot_of[store_index] = set->count;
    set->stats.characters = set->count;
    return GY_OK;
}

gy_result gy_character_group_remove(gy_character_group *set, gy_physics_body_ref ref)
{
    if (set == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    char_entry *e = find_live(set, ref);
    if (e == NULL)
        return GY_ERR_STALE_HANDLE;
    uint32_t i = set->slot_of[ref.index] - 1u;
    set->slot_of[ref.index] = 0;
    if (i + 1u != set->count) {
        set->entries[i] = set->entries[set->count - 1u];
        set->slot_of[set->entries[i].ref.index] = i + 1u;
    }
    set->count--;
    set->stats.characters = set->count;
    return GY_OK;
}

void gy_character_group_clear(gy_character_group *set)
{
    if (set == NULL)
        return;
    for (uint32_t i = 0; i < set->count; i++)
        set->slot_of[set->entries[i].ref.index] = 0;
    set->count = 0;
    set->stats.characters = 0;
}

gy_result gy_character_group_update(gy_character_group *set, gy_physics_body_ref ref,
                                    const gy_character_def *settings)
{
    if (set == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_character_def(settings);
    if (r != GY_OK)
        return r;
    char_entry *e = find_live(set, ref);
    if (e == NULL)
        return GY_ERR_STALE_HANDLE;
    e->settings = *settings;
    return GY_OK;
}

gy_result gy_character_group_get(const gy_character_group *set, gy_physics_body_ref ref,
                                 gy_character_result *last, bool *moved, gy_character_state *state)
{
    if (set == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const char_entry *e = find_live(set, ref);
    if (e == NULL)
        return GY_ERR_STALE_HANDLE;
    if (last != NULL)
        *last = e->last;
    if (moved != NULL)
        *moved = e->moved;
    if (state != NULL)
        *state = e->state;
    return GY_OK;
}

void gy_character_group_apply_input(gy_character_group *set, const gy_physics_character_input *in)
{
    if (set == NULL || in == NULL)
        return;
    char_entry *e = find_live(set, in->body);
    bool ok = e != NULL;
    if (ok && in->kind == GY_CHARACTER_INTENT && gy_vec3_is_finite(in->vector))
        e->intent = in->vector;
    else if (ok && in->kind == GY_CHARACTER_JUMP && gy_is_finite(in->value) && in->value >= 0.0)
        e->jump = in->value;
    else
        ok = false;
    if (ok)
        set->stats.inputs_applied++;
    else
        set->stats.inputs_stale++;
}

static void float3(float out[3], gy_vec3 v)
{
    out[0] = (float)v.x;
    out[1] = (float)v.y;
    out[2] = (float)v.z;
}

static void push_reply(gy_character_group *set, const gy_physics_step_context *sc,
                       const char_entry *e, const gy_character_result *res)
{
    gy_reply reply;
    memset(&reply, 0, sizeof reply);
    reply.type = GY_PHYSICS_REPLY_CHARACTER_STATE;
    reply.key = e->ref.index;
    gy_character_reply body;
    memset(&body, 0, sizeof body);
    body.generation = e->ref.generation;
    body.tick = (uint32_t)sc->tick;
    body.flags = (res->grounded ? GY_CHARACTER_GROUNDED : 0u) |
                 (res->hit_ceiling ? GY_CHARACTER_CEILING : 0u) |
                 (res->jumped ? GY_CHARACTER_JUMPED : 0u) |
                 (res->ground_body.bits != 0 ? GY_CHARACTER_ON_BODY : 0u) |
                 (res->ground_state == GY_GROUND_STEEP ? GY_CHARACTER_STEEP : 0u);
    if (res->ground_body.bits != 0) {
        body.ground.index = (uint32_t)(res->ground_user_data >> 32);
        body.ground.generation = (uint32_t)res->ground_user_data;
    }
    float3(body.ground_normal, res->ground_normal);
    float3(body.platform_velocity, res->platform_velocity);
    float3(body.velocity, res->velocity);
    memcpy(reply.body.bytes, &body, sizeof body);
    if (sc->ops->reply(sc->self, &reply, GY_REPLY_ESSENTIAL) != GY_OK)
        set->stats.replies_failed++;
}

void gy_character_group_hook(void *ctx, const gy_physics_step_context *sc)
{
    gy_character_group *set = ctx;
    if (set == NULL || sc == NULL || sc->backend == NULL || sc->world == NULL)
        return;
    for (uint32_t i = 0; sc->inputs != NULL && i < sc->input_count; i++)
        gy_character_group_apply_input(set, &sc->inputs[i]);
    for (uint32_t i = 0; i < set->count; i++) {
        char_entry *e = &set->entries[i];
        gy_character_input in = {e->intent, e->jump};
        e->jump = 0.0; /* a jump reaches exactly one tick */
        gy_body_id body = sc->ops != NULL ? sc->ops->body(sc->self, e->ref) : e->body;
        if (body.bits == 0)
            continue;
        gy_character_result res;
        if (gy_character_move(sc->backend, sc->world, body, &e->settings, set->gravity, &e->state,
                              &in, sc->dt, &res) != GY_OK) {
            set->stats.move_errors++;
            continue;
        }
        e->body = body;
        e->last = res;
        e->moved = true;
        set->stats.moves++;
        if (sc->ops != NULL) {
            sc->ops->touch(sc->self, e->ref.index);
            push_reply(set, sc, e, &res);
        }
    }
}

void gy_character_group_get_stats(const gy_character_group *set, gy_character_group_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (set != NULL)
        *out = set->stats;
}

gy_result gy_character_group_set_gravity(gy_character_group *set, gy_vec3 gravity)
{
    if (set == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(gravity))
        return GY_ERR_NON_FINITE;
    set->gravity = gravity;
    return GY_OK;
}
