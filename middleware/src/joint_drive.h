/* Joint behaviour both adapters share and compute the same way: what a hinge's or slider's motor
 * does before every solve (the position servo's velocity law, the limit clip), the limit rows of
 * hinges, sliders and ball joints, the spring's constraint softness, and the swing and twist
 * angles of a ball joint's cone and twist limits. The front end runs it over a driver's raw
 * joint entries (driver.h). Private to middleware/, plain C, free of vendor headers. */
#ifndef GYRE_JOINT_DRIVE_H
#define GYRE_JOINT_DRIVE_H

#include "gyre/backend/backend.h"
#include "gyre/handle_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gy_driver;
struct gy_driver_world;
struct gy_driver_joint;
struct gy_adapter_joint;

/* One side of a joint, for the drive's effective inertia: a static side or the world has mass 0
 * (infinite inertia). */
typedef struct gy_joint_side {
    double mass;         /* kg; 0 = immovable */
    double axis_inertia; /* kg·m² about the axis through the centre of mass */
    gy_vec3 com;         /* world centre of mass */
} gy_joint_side;

/* The acceleration (rad/s² or m/s²) a motor's max_force gives the joint's relative motion: the
 * hinge's inertia about its axis through the anchor (parallel-axis term included), or the
 * slider's reduced mass, of the two sides together. */
double gy_joint_drive_accel(gy_joint_type type, double max_force, const gy_joint_side *a,
                            const gy_joint_side *b, gy_vec3 anchor, gy_vec3 axis);

/* The velocity target a motor gets for the next solve of h seconds: the velocity target itself,
 * or, servoing to a position, a velocity closing the error (target - position) exponentially
 * over a few solves, capped so the motor (at `accel`, with a margin) can still stop on the
 * target. With limits (`limits` = {min, max}, or NULL), it never asks to move past one within
 * the solve: a motor driving into a limit arrives on it instead of overshooting. */
double gy_joint_motor_velocity(const gy_joint_motor *m, double position, double accel, double h,
                               const double *limits);

/* A limit as one row the solver keeps in every solve, not only once the stop is passed: the
 * bound it puts on the joint coordinate's rate over the next solve of h seconds. Short of the
 * stop the coordinate may approach it by at most the remaining gap (a speculative row: it lands
 * on the stop, whatever else the solve adds); past the stop it is pulled back by a share of the
 * excess per solve. For a lower stop (upper false) the rate must stay at or above the bound, for
 * an upper stop at or below it. */
double gy_joint_limit_bound(double position, double stop, bool upper, double h);

/* The softness that makes a rigid one-row constraint a spring-damper of `frequency` (Hz) and
 * `damping_ratio` on `mass` (kg), in ODE's convention (J v' = erp/h · error − cfm · λ, λ a
 * force). Chosen so the solver's implicit step of h has the continuous oscillator's discrete
 * eigenvalues exactly: period and decay match the analytic ones at any step size. */
void gy_joint_spring_softness(double frequency, double damping_ratio, double mass, double h,
                              double *erp, double *cfm);

/* A ball joint's limit frame: the axis and a reference perpendicular to it, in a's body frame
 * and in b's (or the world's, for no b), captured at creation. */
typedef struct gy_joint_cone_frame {
    gy_vec3 axis_a, ref_a;
    gy_vec3 axis_b, ref_b;
} gy_joint_cone_frame;

/* Captures the frame for a world axis with bodies at rotations qa and qb (identity: world). */
gy_joint_cone_frame gy_joint_cone_frame_make(gy_vec3 axis, gy_quat qa, gy_quat qb);

/* Where a ball joint stands: swing is the angle (rad, 0..pi) between the axis as a carries it
 * and as b carries it, growing with a's rotation about swing_axis (world, unit) relative to b;
 * twist is a's rotation about the axis relative to b once the swing is taken out (rad, ±pi).
 * twist_axis (world, unit) is the bisector of the two carried axes: a's relative spin about it
 * is what turns the twist (about a's own axis alone, a swing would leak into the twist row). */
typedef struct gy_joint_cone_pose {
    double swing;
    gy_vec3 swing_axis;
    double twist;
    gy_vec3 twist_axis;
} gy_joint_cone_pose;

gy_joint_cone_pose gy_joint_cone_measure(const gy_joint_cone_frame *f, gy_quat qa, gy_quat qb);

/* One limit row: the joint's rate about `axis` (world, unit; a's spin relative to b's) or, for
 * a `linear` row, along it (a's velocity relative to b's, m/s, as the slider's offset changes)
 * kept at or above `bound` (a lower stop) or, `upper`, at or below it, one-sided, for one
 * solve. */
typedef struct gy_joint_limit_row {
    gy_vec3 axis;
    double bound;
    bool upper;
    bool linear;
} gy_joint_limit_row;

/* The most limit rows a joint has: a ball joint's cone and both sides of its twist. */
#define GY_JOINT_LIMIT_ROWS_MAX 3

/* How many limit rows a joint gets before every solve: both stops of a hinge or slider with
 * limits, one row for a ball's cone and two for its twist limits, none otherwise. A driver sizes
 * its rows for them when it builds the joint. */
uint32_t gy_joint_limit_row_count(const struct gy_adapter_joint *j);

/* Completes a joint's drive record once the driver has built it: a's anchor in its body frame
 * and a ball joint's cone frame, from the bodies' poses at creation. */
void gy_joint_drive_attach(const struct gy_driver *d, struct gy_driver_world *w,
                           struct gy_driver_joint *j, const gy_joint_def *def);

/* Before every solve of h seconds, once the driver's solve has collided (so the joints are read
 * as the vendor's solve will see them): every hinge's and slider's motor gets its velocity and
 * bound, and every limited hinge, slider and ball joint its limit rows, through the driver's
 * entries. */
void gy_joint_drive_solve(const struct gy_driver *d, struct gy_driver_world *w,
                          const gy_handle_pool *joints, double h);

/* A motor set at run time: a motor switched off is off now (its row gets no further solve
 * before the next, where one left off would still drive). */
void gy_joint_drive_set_motor(const struct gy_driver *d, struct gy_driver_world *w,
                              struct gy_driver_joint *j, const gy_joint_motor *m);

/* The joint state's coordinate the drive measures: a hinge's angle or a slider's offset and
 * their rate, a ball joint's swing, its rate about the swing axis, and its twist. */
void gy_joint_drive_state(const struct gy_driver *d, struct gy_driver_world *w,
                          struct gy_driver_joint *j, gy_joint_state *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_JOINT_DRIVE_H */
