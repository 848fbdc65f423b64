/* Debug draw: the World's physics handed to a host's drawing callbacks as shapes, segments, points
 * and text — colliders coloured by body type and sleep state, their bounds, the query snapshot's
 * tree nodes, contact points with their normals, joints (anchors, axes, limits) and characters
 * (capsule, ground normal, ground state: walkable, steep or airborne).
 *
 * What is drawn is what was already published to the game thread: colliders, bounds and tree
 * nodes come from the newest query snapshot (the view the snapshot queries answer from), contacts
 * from the World's touching pairs and characters and joints from the states the last
 * gy_world_tick took in. Everything is drawn at the newest physics result (the tick queries and
 * events describe), not at the interpolated render time, so a collider may lead the host's own
 * interpolated mesh by up to the render delay.
 *
 * Threading: the World's owner (or the holder of its write lock), like the snapshot queries. The
 * call is lock-free with respect to the physics thread: it never waits for a step, whatever the
 * physics thread is doing. It allocates nothing. Callbacks run inside the call, on the calling
 * thread; they must not call back into the World. */
#ifndef GYRE_WORLD_DEBUG_DRAW_H
#define GYRE_WORLD_DEBUG_DRAW_H

#include "gyre/types.h"
#include "gyre/core.h"
#include "gyre/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linear RGBA, each 0..1. */
typedef struct gy_debug_color {
    float r, g, b, a;
} gy_debug_color;

/* gy_debug_draw.flags: what to draw. */
enum {
    GY_DEBUG_DRAW_COLLIDERS = 1u << 0,  /* every collider in its shape */
    GY_DEBUG_DRAW_BOUNDS = 1u << 1,     /* each collider's axis-aligned bounds (planes have none) */
    GY_DEBUG_DRAW_TREE = 1u << 2,       /* the query snapshot's tree nodes (static, then moving) */
    GY_DEBUG_DRAW_CONTACTS = 1u << 3,   /* each touching pair's deepest point and its normal */
    GY_DEBUG_DRAW_JOINTS = 1u << 4,     /* anchors, the lines to the bodies, axes and limits */
    GY_DEBUG_DRAW_CHARACTERS = 1u << 5, /* capsule, ground normal, coloured by ground state */
    GY_DEBUG_DRAW_LABELS = 1u << 6,     /* text: joint types, character ground states */
    GY_DEBUG_DRAW_ALL = (1u << 7) - 1u
};

/* The colours things are drawn in. */
typedef struct gy_debug_palette {
    gy_debug_color static_body;    /* static colliders */
    gy_debug_color kinematic_body; /* kinematic colliders (characters included) */
    gy_debug_color awake_body;     /* dynamic colliders of awake bodies */
    gy_debug_color sleeping_body;  /* dynamic colliders of sleeping bodies */
    gy_debug_color sensor;         /* sensor colliders, whatever their body */
    gy_debug_color bounds;
    gy_debug_color tree_static; /* static-tree nodes */
    gy_debug_color tree_moving; /* moving-tree nodes */
    gy_debug_color contact;     /* points and normals */
    gy_debug_color joint;       /* live joints */
    gy_debug_color joint_broken;
    gy_debug_color joint_limit;
    gy_debug_color grounded; /* characters on walkable ground */
    gy_debug_color steep;    /* characters resting only on ground steeper than their limit */
    gy_debug_color airborne; /* characters in the air */
    gy_debug_color label;
} gy_debug_palette;

/* The host's drawing callbacks and what to draw. `pose` places a shape's local frame in world
 * space (metres); capsules and cylinders stand along local Y, as in gy_shape. `solid` says
 * whether to fill the shape or draw its wireframe (gy_debug_draw.solid for colliders; bounds, tree
 * nodes and characters are always wire). A callback is required when a flag that draws with it is
 * set: COLLIDERS needs every shape callback, BOUNDS and TREE need box, CONTACTS and JOINTS need
 * segment and point, CHARACTERS needs capsule and segment, LABELS needs text. */
typedef struct gy_debug_draw {
    uint32_t flags;       /* GY_DEBUG_DRAW_*; default COLLIDERS | CONTACTS | JOINTS | CHARACTERS */
    bool solid;           /* colliders filled (true) or wire (false, default) */
    double normal_length; /* contact and ground normals, metres, > 0; default 0.25 */
    double axis_length;   /* joint axes and limit arcs, metres, > 0; default 0.5 */
    double point_size;    /* passed to `point` (host units; say pixels); >= 0; default 4 */
    gy_debug_palette palette;

    void (*sphere)(void *ctx, gy_pose pose, double radius, gy_debug_color color, bool solid);
    /* half_extents: half the full size along each local axis. */
    void (*box)(void *ctx, gy_pose pose, gy_vec3 half_extents, gy_debug_color color, bool solid);
    /* height: total, caps included (as gy_shape.height). */
    void (*capsule)(void *ctx, gy_pose pose, double radius, double height, gy_debug_color color,
                    bool solid);
    void (*cylinder)(void *ctx, gy_pose pose, double radius, double height, gy_debug_color color,
                     bool solid);
    /* The half-space below dot(normal, p) = offset (unbounded: draw a patch around normal ×
     * offset). */
    void (*plane)(void *ctx, gy_vec3 normal, double offset, gy_debug_color color, bool solid);
    /* Hulls and meshes: triangles (3 indices each) in the shape's local frame. A hull's are its
     * convex hull, wound counter-clockwise seen from outside; a mesh's are as it was given. The
     * arrays are valid during the call only. */
    void (*hull)(void *ctx, gy_pose pose, const gy_vec3 *vertices, uint32_t vertex_count,
                 const uint32_t *indices, uint32_t triangle_count, gy_debug_color color,
                 bool solid);
    void (*mesh)(void *ctx, gy_pose pose, const gy_vec3 *vertices, uint32_t vertex_count,
                 const uint32_t *indices, uint32_t triangle_count, gy_debug_color color,
                 bool solid);
    void (*segment)(void *ctx, gy_vec3 a, gy_vec3 b, gy_debug_color color);
    void (*point)(void *ctx, gy_vec3 p, double size, gy_debug_color color);
    /* `text` is valid during the call only. */
    void (*text)(void *ctx, gy_vec3 p, const char *text, gy_debug_color color);
    void *context; /* passed to every callback */
} gy_debug_draw;

/* The defaults listed above, the default palette (static grey, kinematic blue, awake green,
 * sleeping dark green, sensors translucent yellow, ...) and no callbacks. */
gy_debug_draw gy_default_debug_draw(void);

/* Draws the World's physics through `draw`'s callbacks (see the top of this header for what and
 * from which results). Entries of bodies the World no longer has (removed since the snapshot)
 * are left out, as the snapshot queries leave them out. Before the first publish only what the
 * World has taken in is drawn; with physics stopped nothing is (no body exists). Errors, with
 * nothing drawn: GY_ERR_INVALID_ARGUMENT (NULL world or draw, a flag outside
 * GY_DEBUG_DRAW_ALL, a callback a set flag needs left NULL, a length or size out of range —
 * logged by name), GY_ERR_NON_FINITE (a length, size or colour component), GY_ERR_WRONG_THREAD. */
gy_result gy_world_debug_draw(gy_world *world, const gy_debug_draw *draw);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_WORLD_DEBUG_DRAW_H */
