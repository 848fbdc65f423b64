/* gyre.scene loading: one check per validation rule with the exact path in its message, every
 * error reported at once, the description a valid scene produces (defaults, materials, angles),
 * hostile input (malformed, empty, overflowing, deeply nested, huge) and no leak on any failure. */
#include "test_support.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gyre/backend/backend.h"
#include "gyre/math.h"
#include "gyre/scene.h"
#include "gyre/scene_instance.h"
#include "test_scene.h"

static const char *g_data_dir = ".";

/* ---- helpers --------------------------------------------------------------------------------- */

/* A scene with the format header prepended to `body` (members of the top-level object). */
static char *scene_json(const char *body)
{
    const char *head = "{'format':'gyre.scene','version':1";
    size_t n = strlen(head) + strlen(body) + 4u;
    char *tmp = malloc(n);
    assert_non_null(tmp);
    snprintf(tmp, n, "%s%s%s}", head, body[0] != '\0' ? "," : "", body);
    char *out = gy_test_json(tmp);
    free(tmp);
    return out;
}

static bool errors_contain(const gy_scene_errors *e, const char *want)
{
    char line[2048];
    for (uint32_t i = 0; e != NULL && i < e->count; i++) {
        gy_scene_error_format(&e->items[i], line, sizeof line);
        if (strstr(line, want) != NULL)
            return true;
    }
    return false;
}

static void print_errors(const gy_scene_errors *e)
{
    if (e != NULL)
        gy_scene_errors_print(e, stdout, "    got: ");
}

/* Loads raw JSON text expecting failure with an error line containing `want`; checks that
 * nothing leaks. Returns the number of errors reported. */
static uint32_t expect_text_error(const char *json, size_t len, const char *want)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = (gy_scene *)(uintptr_t)1;
    gy_scene_errors *e = NULL;
    gy_result r = gy_scene_load_string(json, len, g_data_dir, &ta.base, &s, &e);
    bool found = errors_contain(e, want);
    if (r == GY_OK || !found) {
        print_error("expected an error containing: %s\n", want);
        print_errors(e);
    }
    assert_true(r != GY_OK);
    assert_null(s);
    assert_non_null(e);
    assert_true(found);
    uint32_t n = e->total;
    gy_scene_errors_free(e);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
    return n;
}

/* `body` (single-quoted members after the header) must fail with `want`. */
static uint32_t expect_error(const char *body, const char *want)
{
    char *json = scene_json(body);
    uint32_t n = expect_text_error(json, strlen(json), want);
    free(json);
    return n;
}

typedef struct loaded {
    gy_test_allocator ta;
    gy_scene *scene;
} loaded;

/* Loads a valid scene (body after the header) into `l`; fails the test on any error. */
static const gy_scene *load_ok(loaded *l, const char *body)
{
    gy_test_allocator_init(&l->ta);
    char *json = scene_json(body);
    gy_scene_errors *e = NULL;
    gy_result r = gy_scene_load_string(json, strlen(json), g_data_dir, &l->ta.base, &l->scene, &e);
    free(json);
    if (r != GY_OK)
        print_errors(e);
    assert_result(r, GY_OK);
    assert_null(e);
    assert_non_null(l->scene);
    return l->scene;
}

static void unload(loaded *l)
{
    gy_scene_free(l->scene);
    assert_int_equal(l->ta.live_blocks, 0);
    assert_int_equal(l->ta.live_bytes, 0);
}

static void assert_vec_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

/* Rotates v by q with the rotation-matrix formula, independently of the library's math.h. */
static gy_vec3 rotate(gy_quat q, gy_vec3 v)
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    return gy_v3(m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
                 m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
                 m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z);
}

/* ---- one check per rule ---------------------------------------------------------------------- */

typedef struct rule_case {
    const char *body; /* top-level members after format and version, single-quoted */
    const char *want; /* substring of one `path: message` line */
} rule_case;

/* Entity prefixes shared by many cases. */
#define PHYS(p)     "'entities':[{'name':'e','components':{'physics':{" p "}}}]"
#define DYN_SPHERE  "'shape':'Sphere','radius':0.5"
#define STATIC_BODY "'body_type':'Static'"
/* A world with a Dynamic "ball", a Static "wall", a Kinematic "lift", a "lamp" without physics
 * and a character "hero", for joint and script cases. */
#define CAST                                                                                       \
    "'entities':[{'name':'ball','components':{'physics':{" DYN_SPHERE "}}},"                       \
    "{'name':'wall','components':{'physics':{'body_type':'Static','shape':'Box','box_size':[1,1,"  \
    "1]}}},"                                                                                       \
    "{'name':'lift','components':{'physics':{'body_type':'Kinematic','shape':'Box','box_size':[1," \
    "1,1]}}},"                                                                                     \
    "{'name':'lamp'},"                                                                             \
    "{'name':'hero','components':{'physics':{'is_character_controller':true}}}]"

static void test_scene_rules_format_and_version(void **state)
{
    (void)state;
    char *j = gy_test_json("{'version':1}");
    expect_text_error(j, strlen(j), "format: required");
    free(j);
    j = gy_test_json("{'format':'gyre.scn','version':1}");
    expect_text_error(j, strlen(j), "format: must be \"gyre.scene\" (got \"gyre.scn\")");
    free(j);
    j = gy_test_json("{'format':7,'version':1}");
    expect_text_error(j, strlen(j), "format: must be a string (got 7)");
    free(j);
    j = gy_test_json("{'format':'gyre.scene'}");
    expect_text_error(j, strlen(j), "version: required");
    free(j);
    j = gy_test_json("{'format':'gyre.scene','version':2}");
    expect_text_error(j, strlen(j), "version: unsupported version 2 (this build reads version 1)");
    free(j);
    j = gy_test_json("[1,2]");
    expect_text_error(j, strlen(j), "(string): the top level must be a JSON object (got an array)");
    free(j);
    j = gy_test_json("{'format':'gyre.scene','version':1,'version':1}");
    expect_text_error(j, strlen(j), "version: duplicate key");
    free(j);
}

static const rule_case k_rule_cases[] = {
    /* keys */
    {"'entites':[]", "entites: unknown key (did you mean \"entities\"?)"},
    {"'colour':'red'", "colour: unknown key (tools may add their own keys starting with x_)"},
    {"'name':3", "name: must be a string (got 3)"},
    /* physics (world settings) */
    {"'physics':[]", "physics: must be an object (got an array)"},
    {"'physics':{'step_hz':5}", "physics.step_hz: must be between 10 and 1000 (got 5)"},
    {"'physics':{'step_hz':1001}", "physics.step_hz: must be between 10 and 1000 (got 1001)"},
    {"'physics':{'substeps':17}", "physics.substeps: must be between 1 and 16 (got 17)"},
    {"'physics':{'substeps':1.5}", "physics.substeps: must be an integer (got 1.5)"},
    {"'physics':{'solver_iterations':0}",
     "physics.solver_iterations: must be between 1 and 255 (got 0)"},
    {"'physics':{'solver_iterations':256}",
     "physics.solver_iterations: must be between 1 and 255 (got 256)"},
    {"'physics':{'gravity':[0,-9.81]}",
     "physics.gravity: must be an array of 3 numbers (got 2 elements)"},
    {"'physics':{'gravity':[0,'a',0]}", "physics.gravity[1]: must be a number (got \"a\")"},
    {"'physics':{'gravity':[0,1e999,0]}",
     "physics.gravity[1]: number out of range (overflows to infinity)"},
    {"'physics':{'gravity':[0,-1e999,0]}",
     "physics.gravity[1]: number out of range (overflows to infinity)"},
    {"'physics':{'backend':''}", "physics.backend: must not be empty"},
    {"'physics':{'backend':1}", "physics.backend: must be a string (got 1)"},
    {"'physics':{'gravty':[0,0,0]}", "physics.gravty: unknown key (did you mean \"gravity\"?)"},
    /* materials */
    {"'materials':[]", "materials: must be an object mapping names to materials (got an array)"},
    {"'materials':{'ice':{'friction':-1}}", "materials.ice.friction: must be >= 0 (got -1)"},
    {"'materials':{'ice':{'restitution':-0.5}}",
     "materials.ice.restitution: must be >= 0 (got -0.5)"},
    {"'materials':{'ice':{'friction_combine':'avg'}}",
     "materials.ice.friction_combine: must be one of \"average\", \"min\", \"multiply\", \"max\" "
     "(got \"avg\")"},
    {"'materials':{'ice':{'restitution_combine':'sum'}}",
     "materials.ice.restitution_combine: must be one of"},
    {"'materials':{'ice':{'bounce':1}}", "materials.ice.bounce: unknown key"},
    {"'materials':{'ice':3}", "materials.ice: must be an object (got 3)"},
    {"'materials':{'ice rink':{'friction':-1}}",
     "materials[\"ice rink\"].friction: must be >= 0 (got -1)"},
    {"'materials':{'':{}}", "materials[\"\"]: a material name must not be empty"},
    {"'materials':{'ice':{},'ice':{}}", "materials.ice: duplicate material name"},
    /* entities */
    {"'entities':{}", "entities: must be an array of entities (got an object)"},
    {"'entities':[3]", "entities[0]: must be an entity object (got 3)"},
    {"'entities':[{}]", "entities[0].name: required"},
    {"'entities':[{'name':''}]", "entities[0].name: must not be empty"},
    {"'entities':[{'name':5}]", "entities[0].name: must be a string (got 5)"},
    {"'entities':[{'name':'a'},{'name':'a'}]",
     "entities[1].name: duplicate name \"a\" (first used by entities[0])"},
    {"'entities':[{'name':'a','active':1}]", "entities[0].active: must be true or false (got 1)"},
    {"'entities':[{'name':'a','parent':'ghost'}]", "entities[0].parent: no entity named \"ghost\""},
    {"'entities':[{'name':'a','parent':'a'}]",
     "entities[0].parent: an entity cannot be its own parent"},
    {"'entities':[{'name':'a','parent':'c'},{'name':'b','parent':'a'},{'name':'c','parent':'b'}]",
     "entities[0].parent: parent cycle: \"a\" -> \"c\" -> \"b\" -> \"a\""},
    {"'entities':[{'name':'car','components':{'physics':{" DYN_SPHERE "}}},"
     "{'name':'mid','parent':'car'},"
     "{'name':'wheel','parent':'mid','components':{'physics':{" DYN_SPHERE "}}}]",
     "entities[2].components.physics: a physics body cannot sit under a Dynamic body: its "
     "ancestor \"car\" is Dynamic"},
    {"'entities':[{'name':'car','components':{'physics':{" DYN_SPHERE "}}},"
     "{'name':'sensor','parent':'car','components':{'physics':{'body_type':'Trigger','shape':'"
     "Sphere','radius':1}}}]",
     "entities[1].components.physics: a physics body cannot sit under a Dynamic body"},
    {"'entities':[{'name':'a','transform':{'rotation':[0,0,0,1],'rotation_euler':[0,0,0]}}]",
     "entities[0].transform.rotation_euler: give either rotation or rotation_euler, not both"},
    {"'entities':[{'name':'a','transform':{'rotation':[0,0,0,0]}}]",
     "entities[0].transform.rotation: quaternion must have a non-zero length"},
    {"'entities':[{'name':'a','transform':{'rotation':[0,0,1]}}]",
     "entities[0].transform.rotation: must be a quaternion [x, y, z, w] (got 3 elements)"},
    {"'entities':[{'name':'a','transform':{'position':[0,1e999,0]}}]",
     "entities[0].transform.position[1]: number out of range (overflows to infinity)"},
    {"'entities':[{'name':'a','transform':{'rotation_euler':[0,'x',0]}}]",
     "entities[0].transform.rotation_euler[1]: must be a number (got \"x\")"},
    {"'entities':[{'name':'a','transform':{'scale':[1,0,1]}}]",
     "entities[0].transform.scale: components must be non-zero (got [1, 0, 1])"},
    {"'entities':[{'name':'a','transform':{'pos':[0,0,0]}}]",
     "entities[0].transform.pos: unknown key"},
    {"'entities':[{'name':'a','transform':[]}]",
     "entities[0].transform: must be an object (got an array)"},
    {"'entities':[{'name':'a','components':{'render':{}}}]",
     "entities[0].components.render: unknown key"},
    {"'entities':[{'name':'a','components':{'physics':3}}]",
     "entities[0].components.physics: must be an object (got 3)"},
    /* the physics component */
    {PHYS("'body_type':'Dynamc'," DYN_SPHERE),
     "entities[0].components.physics.body_type: must be one of \"Dynamic\", \"Static\", "
     "\"Kinematic\", \"Trigger\" (got \"Dynamc\")"},
    {PHYS("'mass':-2," DYN_SPHERE),
     "entities[0].components.physics.mass: must be > 0 for a Dynamic body (got -2)"},
    {PHYS("'mass':0,'body_type':'Kinematic'," DYN_SPHERE),
     "entities[0].components.physics.mass: must be > 0 (got 0)"},
    {PHYS("'mass':1e999," DYN_SPHERE),
     "entities[0].components.physics.mass: number out of range (overflows to infinity)"},
    {PHYS("'mass':'heavy'," DYN_SPHERE),
     "entities[0].components.physics.mass: must be a number (got \"heavy\")"},
    {PHYS("'is_active':'yes'," DYN_SPHERE),
     "entities[0].components.physics.is_active: must be true or false (got \"yes\")"},
    {PHYS("'mass_properties':{'inertia':[[1,1,0],[2,1,0],[0,0,1]]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia: must be symmetric (inertia[0][1] is "
     "1 but inertia[1][0] is 2)"},
    {PHYS("'mass_properties':{'inertia':[[1,0,0],[0,-1,0],[0,0,1]]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia: must be positive-definite"},
    {PHYS("'mass_properties':{'inertia':[[1,2,0],[2,1,0],[0,0,1]]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia: must be positive-definite"},
    {PHYS("'mass_properties':{'center_of_mass':[0,0,0]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia: required"},
    {PHYS("'mass_properties':{'inertia':[[1,0,0],[0,1,0]]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia: must be a 3x3 array"},
    {PHYS("'mass_properties':{'inertia':[[1,0,0],[0,1,0],[0,0,'a']]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.inertia[2][2]: must be a number (got \"a\")"},
    {PHYS("'mass_properties':{'inertia':[[1,0,0],[0,1,0],[0,0,1]],'com':[0,0,0]}," DYN_SPHERE),
     "entities[0].components.physics.mass_properties.com: unknown key"},
    {PHYS("'linear_damping':-0.1," DYN_SPHERE),
     "entities[0].components.physics.linear_damping: must be >= 0 (got -0.1)"},
    {PHYS("'angular_damping':-1," DYN_SPHERE),
     "entities[0].components.physics.angular_damping: must be >= 0 (got -1)"},
    {PHYS("'gravity_factor':'x'," DYN_SPHERE),
     "entities[0].components.physics.gravity_factor: must be a number"},
    {PHYS("'linear_velocity':[1,2]," DYN_SPHERE),
     "entities[0].components.physics.linear_velocity: must be an array of 3 numbers"},
    {PHYS("'angular_velocity':[0,1e999,0]," DYN_SPHERE),
     "entities[0].components.physics.angular_velocity[1]: number out of range"},
    {PHYS("'allow_sleeping':0," DYN_SPHERE),
     "entities[0].components.physics.allow_sleeping: must be true or false (got 0)"},
    {PHYS("'continuous':null," DYN_SPHERE),
     "entities[0].components.physics.continuous: must be true or false (got null)"},
    {PHYS("'lock_linear':[true,false]," DYN_SPHERE),
     "entities[0].components.physics.lock_linear: must be an array of 3 booleans"},
    {PHYS("'lock_angular':[true,false,1]," DYN_SPHERE),
     "entities[0].components.physics.lock_angular: must be an array of 3 booleans"},
    {PHYS("'is_character_controller':'no'"),
     "entities[0].components.physics.is_character_controller: must be true or false"},
    {PHYS("'max_slope_deg':90," DYN_SPHERE), "entities[0].components.physics.max_slope_deg: must "
                                             "be between 0 and 90 degrees, exclusive (got 90)"},
    {PHYS("'step_offset':-1," DYN_SPHERE),
     "entities[0].components.physics.step_offset: must be >= 0 (got -1)"},
    {PHYS("'massive':1," DYN_SPHERE), "entities[0].components.physics.massive: unknown key"},
    /* characters */
    {PHYS("'is_character_controller':true,'body_type':'Dynamic'"),
     "entities[0].components.physics.body_type: a character controller is Kinematic (got "
     "\"Dynamic\")"},
    {PHYS("'is_character_controller':true,'shape':'Box','box_size':[1,1,1]"),
     "entities[0].components.physics.shape: a character controller's collider is a Capsule (got "
     "\"Box\")"},
    {PHYS("'is_character_controller':true,'colliders':[{" DYN_SPHERE "}]"),
     "entities[0].components.physics.colliders: a character controller has exactly one collider"},
    {PHYS("'is_character_controller':true,'radius':1"),
     "entities[0].components.physics.height: must exceed 2 x radius (2) for a Capsule"},
    /* colliders: shape and its parameters */
    {PHYS("'radius':1"), "entities[0].components.physics.shape: required: \"radius\" describes the "
                         "body's first collider"},
    {PHYS("'shape':'Ball','radius':1"),
     "entities[0].components.physics.shape: must be one of \"Sphere\", \"Box\", \"Capsule\", "
     "\"Cylinder\", \"Plane\", \"Hull\", \"Mesh\" (got \"Ball\")"},
    {PHYS("'shape':'Sphere'"), "entities[0].components.physics.radius: required for a Sphere"},
    {PHYS("'shape':'Sphere','radius':0"),
     "entities[0].components.physics.radius: must be > 0 (got 0)"},
    {PHYS("'shape':'Sphere','radius':-1"),
     "entities[0].components.physics.radius: must be > 0 (got -1)"},
    {PHYS("'shape':'Capsule','radius':0.5,'height':1"),
     "entities[0].components.physics.height: must exceed 2 x radius (1) for a Capsule: the height "
     "includes both caps (got 1)"},
    {PHYS("'shape':'Capsule','radius':0.5"),
     "entities[0].components.physics.height: required for a Capsule"},
    {PHYS("'shape':'Cylinder','radius':0.5,'height':0"),
     "entities[0].components.physics.height: must be > 0 (got 0)"},
    {PHYS("'shape':'Cylinder','height':1"),
     "entities[0].components.physics.radius: required for a Cylinder"},
    {PHYS("'shape':'Box'"), "entities[0].components.physics.box_size: required for a Box"},
    {PHYS("'shape':'Box','box_size':[1,0,1]"),
     "entities[0].components.physics.box_size: every extent must be > 0 (got [1, 0, 1])"},
    /* The accepted ranges (gyre/backend/backend.h): what the World would refuse is refused here. */
    {PHYS("'shape':'Cylinder','radius':0.5,'height':1e-17"),
     "entities[0].components.physics.height: must be between 1e-05 and 1e+06 (got 1e-17)"},
    {PHYS("'shape':'Box','box_size':[1,1,1e9]"),
     "entities[0].components.physics.box_size: every extent must be between 1e-05 and 1e+06 "
     "(got [1, 1, 1000000000])"},
    {PHYS(DYN_SPHERE ",'mass':1e300"),
     "entities[0].components.physics.mass: must be between 1e-06 and 1e+12 (got 1e+300)"},
    {PHYS(DYN_SPHERE ",'gravity_factor':-1e300"),
     "entities[0].components.physics.gravity_factor: must be between -1e+20 and 1e+20 (got "
     "-1e+300)"},
    {PHYS(DYN_SPHERE ",'angular_damping':1e300"),
     "entities[0].components.physics.angular_damping: must be between 0 and 1000 (got 1e+300)"},
    {PHYS(DYN_SPHERE ",'linear_velocity':[0,2e12,0]"),
     "entities[0].components.physics.linear_velocity: each component must be within ±1e+12 (got "
     "[0, 2000000000000, 0])"},
    {PHYS(DYN_SPHERE ",'mass':1,'mass_properties':{'center_of_mass':[0,0,0],'inertia':[[1e300,0,"
                     "0],[0,1e300,0],[0,0,1e300]]}"),
     "entities[0].components.physics: a number is outside the accepted ranges (invalid argument; "
     "the ranges are listed in docs/reliability.md)"},
    {PHYS("'shape':'Box','box_size':[1,1,1],'radius':1"),
     "entities[0].components.physics.radius: not used by a Box collider"},
    {PHYS("'shape':'Sphere','radius':1,'points':[]"),
     "entities[0].components.physics.points: not used by a Sphere collider"},
    {PHYS("'shape':'Plane'"),
     "entities[0].components.physics.shape: a Plane needs a Static body (this one is Dynamic)"},
    {PHYS("'body_type':'Kinematic','shape':'Plane'"),
     "entities[0].components.physics.shape: a Plane needs a Static body (this one is Kinematic)"},
    {PHYS(STATIC_BODY ",'shape':'Plane','normal':[0,0,0]"),
     "entities[0].components.physics.normal: must not be the zero vector"},
    {PHYS(STATIC_BODY ",'shape':'Plane','offset':'x'"),
     "entities[0].components.physics.offset: must be a number"},
    {PHYS(STATIC_BODY ",'shape':'Plane','local_position':[0,1,0]"),
     "entities[0].components.physics.local_position: not used by a Plane: its normal and offset "
     "are in world space"},
    {PHYS("'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,1,2]"),
     "entities[0].components.physics.shape: a Mesh needs a Static or Kinematic body (this one is "
     "Dynamic)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,1,2,0]"),
     "entities[0].components.physics.indices: must hold a non-zero multiple of 3 indices (got 4)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[]"),
     "entities[0].components.physics.indices: must hold a non-zero multiple of 3 indices (got 0)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,1,3]"),
     "entities[0].components.physics.indices[2]: index 3 out of range (3 vertices)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,-1,2]"),
     "entities[0].components.physics.indices[1]: must be a vertex index, an integer >= 0 (got -1)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,1.5,2]"),
     "entities[0].components.physics.indices[1]: must be a vertex index, an integer >= 0 (got "
     "1.5)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0],[0,0,1]],'indices':[0,1,2]"),
     "entities[0].components.physics.vertices[1]: must be an array of 3 numbers (got 2 elements)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','indices':[0,1,2]"),
     "entities[0].components.physics.vertices: required for a Mesh given indices"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]]"),
     "entities[0].components.physics.indices: required for a Mesh given vertices"},
    {PHYS(STATIC_BODY ",'shape':'Mesh'"), "entities[0].components.physics.vertices: required for a "
                                          "Mesh, with indices (or give collision: an OBJ file)"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1]],'indices':[0,1,2],'"
                      "collision':'level.obj'"),
     "entities[0].components.physics.collision: give vertices and indices or collision, not both"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','collision':'points.obj'"),
     "entities[0].components.physics.collision: points.obj: no faces: a Mesh needs triangles"},
    {PHYS("'shape':'Hull','points':[[0,0,0],[1,0,0],[0,1,0]]"),
     "entities[0].components.physics.points: a Hull needs at least 4 points (got 3)"},
    {PHYS("'shape':'Hull','points':[[0,0,0],[1,0,0],[0,1,0],[1,1,0]]"),
     "entities[0].components.physics.points: the points are coplanar or collinear: a Hull needs "
     "volume"},
    /* A Static body's hull is checked without being built; the check refuses the same points. */
    {PHYS(STATIC_BODY ",'shape':'Hull','points':[[0,0,0],[1,0,0],[0,1,0],[1,1,0]]"),
     "entities[0].components.physics.points: the points are coplanar or collinear: a Hull needs "
     "volume"},
    {PHYS(STATIC_BODY ",'shape':'Hull','points':[[0,0,0],[1,1,1],[2,2,2],[3,3,3],[4,4,4]]"),
     "entities[0].components.physics.points: the points are coplanar or collinear: a Hull needs "
     "volume"},
    {PHYS("'shape':'Hull','points':[[0,0,0],[1,0,0],[0,1,0],[0,0,'z']]"),
     "entities[0].components.physics.points[3][2]: must be a number (got \"z\")"},
    {PHYS("'shape':'Hull'"),
     "entities[0].components.physics.points: required for a Hull (or give collision: an OBJ file)"},
    {PHYS("'shape':'Hull','points':[[0,0,0],[1,0,0],[0,1,0],[0,0,1]],'collision':'cube.obj'"),
     "entities[0].components.physics.collision: give points or collision, not both"},
    {PHYS("'shape':'Hull','collision':'missing.obj'"),
     "entities[0].components.physics.collision: cannot read \"missing.obj\" (resolved as \""},
    {PHYS("'shape':'Hull','collision':'missing.obj'"),
     "/missing.obj\"): No such file or directory"},
    {PHYS(STATIC_BODY ",'shape':'Mesh','collision':'bad_face.obj'"),
     "entities[0].components.physics.collision: bad_face.obj:12: face index 9 out of range (8 "
     "vertices)"},
    {PHYS("'shape':'Hull','collision':7"),
     "entities[0].components.physics.collision: must be a string (got 7)"},
    /* collider properties */
    {PHYS(DYN_SPHERE ",'density':0"),
     "entities[0].components.physics.density: must be > 0 (got 0)"},
    {PHYS(DYN_SPHERE ",'material':'rubber'"),
     "entities[0].components.physics.material: no material named \"rubber\" in materials"},
    {PHYS(DYN_SPHERE ",'friction':-1"),
     "entities[0].components.physics.friction: must be >= 0 (got -1)"},
    {PHYS(DYN_SPHERE ",'restitution':-1"),
     "entities[0].components.physics.restitution: must be >= 0 (got -1)"},
    {PHYS("'body_type':'Trigger'," DYN_SPHERE ",'is_sensor':false"),
     "entities[0].components.physics.is_sensor: a Trigger's colliders are always sensors"},
    {PHYS(DYN_SPHERE ",'contact_response':'no'"),
     "entities[0].components.physics.contact_response: must be true or false"},
    {PHYS(DYN_SPHERE ",'surface_velocity':[1,1e999,0]"),
     "entities[0].components.physics.surface_velocity[1]: number out of range"},
    {PHYS(DYN_SPHERE ",'one_way':1"),
     "entities[0].components.physics.one_way: must be true or false"},
    {PHYS(DYN_SPHERE ",'one_way_normal':[0,0,0]"),
     "entities[0].components.physics.one_way_normal: must be a non-zero vector"},
    {PHYS(DYN_SPHERE ",'category':-1"),
     "entities[0].components.physics.category: must be between 0 and 4294967295 (got -1)"},
    {PHYS(DYN_SPHERE ",'mask':4294967296"),
     "entities[0].components.physics.mask: must be between 0 and 4294967295 (got 4294967296)"},
    {PHYS(DYN_SPHERE ",'mask':1.5"),
     "entities[0].components.physics.mask: must be an integer (got 1.5)"},
    {PHYS(DYN_SPHERE ",'local_rotation':[0,0,0,1],'local_rotation_euler':[0,0,0]"),
     "entities[0].components.physics.local_rotation_euler: give either local_rotation or "
     "local_rotation_euler, not both"},
    {PHYS(DYN_SPHERE ",'local_rotation':[0,0,0,0]"),
     "entities[0].components.physics.local_rotation: quaternion must have a non-zero length"},
    {PHYS(DYN_SPHERE ",'local_position':'up'"),
     "entities[0].components.physics.local_position: must be an array of 3 numbers (got \"up\")"},
    {PHYS(DYN_SPHERE ",'colliders':{}"),
     "entities[0].components.physics.colliders: must be an array of colliders (got an object)"},
    {PHYS(DYN_SPHERE ",'colliders':[5]"),
     "entities[0].components.physics.colliders[0]: must be a collider object (got 5)"},
    {PHYS(DYN_SPHERE ",'colliders':[{'shape':'Sphere','radius':1},{'radius':1}]"),
     "entities[0].components.physics.colliders[1].shape: required"},
    {PHYS(DYN_SPHERE ",'colliders':[{'shape':'Sphere','radius':1,'mass':2}]"),
     "entities[0].components.physics.colliders[0].mass: unknown key"},
    {PHYS("'body_type':'Static'"), "entities[0].components.physics.shape: a physics body needs "
                                   "at least one collider (an inline `shape` or an entry in "
                                   "`colliders`)"},
    {PHYS("'colliders':[]"), "entities[0].components.physics.colliders: a physics body needs at "
                             "least one collider (an inline `shape` or an entry in `colliders`)"},
    {PHYS("'colliders':[{'shape':'Plane'}]"), "entities[0].components.physics.colliders[0].shape: "
                                              "a Plane needs a Static body (this one is Dynamic)"},
    /* settings the body type would leave unread */
    {PHYS(STATIC_BODY ",'shape':'Box','box_size':[1,1,1],'linear_damping':0.2"),
     "entities[0].components.physics.linear_damping: only a Dynamic body has it (this one is "
     "Static)"},
    {PHYS("'body_type':'Kinematic','shape':'Box','box_size':[1,1,1],'mass':3"),
     "entities[0].components.physics.mass: only a Dynamic body has it (this one is Kinematic)"},
    {PHYS("'body_type':'Trigger','shape':'Box','box_size':[1,1,1],'linear_velocity':[1,0,0]"),
     "entities[0].components.physics.linear_velocity: a Trigger body does not move"},
    {PHYS(DYN_SPHERE ",'step_offset':0.5"),
     "entities[0].components.physics.step_offset: only a character controller has it"},
    /* joints */
    {CAST ",'joints':{}", "joints: must be an array of joints (got an object)"},
    {CAST ",'joints':[1]", "joints[0]: must be a joint object (got 1)"},
    {CAST ",'joints':[{'a':'ball','anchor':[0,0,0]}]", "joints[0].type: required"},
    {CAST ",'joints':[{'type':'Weld','a':'ball','anchor':[0,0,0]}]",
     "joints[0].type: must be one of \"Fixed\", \"Ball\", \"Hinge\", \"Slider\", \"Distance\" (got "
     "\"Weld\")"},
    {CAST ",'joints':[{'type':'Ball','anchor':[0,0,0]}]", "joints[0].a: required: an entity name"},
    {CAST ",'joints':[{'type':'Ball','a':'ghost','anchor':[0,0,0]}]",
     "joints[0].a: no entity named \"ghost\""},
    {CAST ",'joints':[{'type':'Ball','a':'lamp','anchor':[0,0,0]}]",
     "joints[0].a: \"lamp\" has no physics component: a joint connects bodies"},
    {CAST ",'joints':[{'type':'Ball','a':'wall','anchor':[0,0,0]}]",
     "joints[0].a: \"wall\" is Static: body a of a joint must be Dynamic or Kinematic"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','b':'ghost','anchor':[0,0,0]}]",
     "joints[0].b: no entity named \"ghost\""},
    {CAST ",'joints':[{'type':'Ball','a':'ball','b':'lamp','anchor':[0,0,0]}]",
     "joints[0].b: \"lamp\" has no physics component"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','b':'ball','anchor':[0,0,0]}]",
     "joints[0].b: a and b must be different entities"},
    {CAST ",'joints':[{'type':'Ball','a':'ball'}]",
     "joints[0].anchor: required: the world-space anchor point at creation"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0]}]",
     "joints[0].axis: a Ball joint's axis is the one its cone_angle and twist_limits are "
     "measured about"},
    {CAST ",'joints':[{'type':'Fixed','a':'ball','anchor':[0,0,0],'axis':[0,1,0]}]",
     "joints[0].axis: only Hinge, Slider and Ball joints have an axis"},
    /* motors, springs, cone and twist limits */
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'motor':{'velocity':1,"
          "'max_force':1}}]",
     "joints[0].motor: only Hinge and Slider joints have a motor"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'motor':5}]",
     "joints[0].motor: must be {\"velocity\": v, \"max_force\": f} or"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{'velocity':1}}]",
     "joints[0].motor.max_force: required"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{'velocity':1,"
          "'max_force':0}}]",
     "joints[0].motor.max_force: must be > 0 (got 0)"},
    {CAST ",'joints':[{'type':'Slider','a':'ball','anchor':[0,0,0],'motor':{'velocity':1,"
          "'position':1,'max_force':2}}]",
     "joints[0].motor: give one of velocity and position, not both"},
    {CAST ",'joints':[{'type':'Slider','a':'ball','anchor':[0,0,0],'motor':{'max_force':2}}]",
     "joints[0].motor: required: velocity (a speed to hold) or position (a target)"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{'position':270,"
          "'max_force':2}}]",
     "joints[0].motor.position: a Hinge position is in degrees within [-180, 180] (got 270)"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{'speed':1,"
          "'max_force':2}}]",
     "joints[0].motor.speed: unknown key"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'spring':{'frequency':1,"
          "'damping_ratio':0}}]",
     "joints[0].spring: only Distance joints have a spring"},
    {CAST ",'joints':[{'type':'Distance','a':'ball','anchor':[0,0,0],'spring':{'frequency':0,"
          "'damping_ratio':0.1}}]",
     "joints[0].spring.frequency: must be > 0 (got 0)"},
    {CAST ",'joints':[{'type':'Distance','a':'ball','anchor':[0,0,0],'spring':{'frequency':1}}]",
     "joints[0].spring.damping_ratio: required"},
    {CAST ",'joints':[{'type':'Distance','a':'ball','anchor':[0,0,0],'spring':{'frequency':1,"
          "'damping_ratio':-0.5}}]",
     "joints[0].spring.damping_ratio: must be >= 0 (got -0.5)"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'cone_angle':30}]",
     "joints[0].cone_angle: only Ball joints have a cone_angle and twist_limits"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'cone_angle':30}]",
     "joints[0].axis: required with cone_angle or twist_limits"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0],"
          "'cone_angle':200}]",
     "joints[0].cone_angle: must be in degrees within (0, 180] (got 200)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0],"
          "'cone_angle':0}]",
     "joints[0].cone_angle: must be > 0 (got 0)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0],"
          "'twist_limits':[20,-20]}]",
     "joints[0].twist_limits: min must not exceed max (got [20, -20])"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0],"
          "'twist_limits':[-190,0]}]",
     "joints[0].twist_limits[0]: must be in degrees within [-180, 180] (got -190)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axis':[0,1,0],"
          "'twist_limits':5}]",
     "joints[0].twist_limits: must be [min, max] in degrees (got 5)"},
    /* move_kinematic */
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'ball','position':[0,1,0]}]",
     "script[0].entity: move_kinematic needs a Kinematic body (\"ball\" is Dynamic)"},
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'hero','position':[0,1,0]}]",
     "script[0].entity: move_kinematic needs a Kinematic body (\"hero\" is a character: its "
     "controller moves it)"},
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'lift'}]",
     "script[0].position: required: [x, y, z]"},
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'lift','position':[0,1,0],"
          "'duration':-1}]",
     "script[0].duration: must be >= 0 (got -1)"},
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'lift','position':[0,1,0],"
          "'duration':1e9}]",
     "script[0].duration: too long: at most 1073741.823 s"},
    {CAST ",'script':[{'at':1,'do':'move_kinematic','entity':'lift','position':[0,1,0],"
          "'value':[1,0,0]}]",
     "script[0].value: unknown key"},
    /* one_way_slop */
    {"'entities':[{'name':'p','components':{'physics':{'body_type':'Static','shape':'Box',"
     "'box_size':[1,1,1],'one_way_slop':0.1}}}]",
     "entities[0].components.physics.one_way_slop: only a one-way collider (one_way: true) has "
     "it"},
    {"'entities':[{'name':'p','components':{'physics':{'body_type':'Static','shape':'Box',"
     "'box_size':[1,1,1],'one_way':true,'one_way_slop':-0.1}}}]",
     "entities[0].components.physics.one_way_slop: must be >= 0 (got -0.1)"},
    /* kill_y */
    {"'physics':{'kill_y':'low'}", "physics.kill_y: must be a number (got \"low\")"},
    {"'physics':{'kill_y':1e300}", "physics.kill_y: must be within ±1e+12 (got 1e+300)"},
    /* set_gravity, apply_torque, expect angular_velocity */
    {CAST ",'script':[{'at':1,'do':'set_gravity'}]", "script[0].value: required: [x, y, z]"},
    {CAST ",'script':[{'at':1,'do':'set_gravity','value':[0,-9.81,0],'entity':'ball'}]",
     "script[0].entity: unknown key"},
    {CAST ",'script':[{'at':1,'do':'set_gravity','value':[0,1e300,0]}]",
     "script[0].value: each component must be within ±1e+12 (got [0, 1e+300, 0])"},
    {CAST ",'script':[{'at':1,'do':'apply_torque','entity':'lift','value':[1,0,0]}]",
     "script[0].entity: apply_torque needs a Dynamic body (\"lift\" is Kinematic)"},
    {CAST ",'script':[{'at':1,'do':'apply_torque','entity':'ball','value':[1,0,0],'duration':0}]",
     "script[0].duration: must be > 0 (got 0)"},
    {CAST ",'script':[{'at':1,'do':'expect','entity':'ball','angular_velocity':[1,0]}]",
     "script[0].angular_velocity: must be [x, y, z], each a number or null"},
    {CAST ",'script':[{'at':1,'do':'expect','entity':'lamp','angular_velocity':[1,0,0]}]",
     "script[0].angular_velocity: expect angular_velocity needs a physics body"},
    /* set_motor */
    {CAST ",'joints':[{'name':'j','type':'Hinge','a':'ball','anchor':[0,0,0]}],"
          "'script':[{'at':1,'do':'set_motor','joint':'j','velocity':1}]",
     "script[0].joint: joint \"j\" has no motor: give it one in joints[0].motor"},
    {CAST ",'script':[{'at':1,'do':'set_motor','joint':'nope','velocity':1}]",
     "script[0].joint: no joint named \"nope\""},
    {CAST ",'script':[{'at':1,'do':'set_motor','velocity':1}]",
     "script[0].joint: required: the name of a joint with a motor"},
    {CAST ",'joints':[{'name':'j','type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{"
          "'velocity':1,'max_force':5}}],"
          "'script':[{'at':1,'do':'set_motor','joint':'j'}]",
     "script[0]: required: velocity (a speed to hold) or position (a target)"},
    {CAST ",'joints':[{'name':'j','type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{"
          "'velocity':1,'max_force':5}}],"
          "'script':[{'at':1,'do':'set_motor','joint':'j','position':10,'max_force':-1}]",
     "script[0].max_force: must be > 0 (got -1)"},
    {CAST ",'joints':[{'name':'j','type':'Hinge','a':'ball','anchor':[0,0,0],'motor':{"
          "'velocity':1,'max_force':5}}],"
          "'script':[{'at':1,'do':'set_motor','joint':'j','velocity':1,'entity':'ball'}]",
     "script[0].entity: unknown key"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'axis':[0,0,0]}]",
     "joints[0].axis: must be a non-zero vector"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'limits':[10,-10]}]",
     "joints[0].limits: min must not exceed max (got [10, -10])"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'limits':[0,200]}]",
     "joints[0].limits[1]: a Hinge limit is in degrees within [-180, 180] (got 200)"},
    {CAST ",'joints':[{'type':'Slider','a':'ball','anchor':[0,0,0],'limits':[0]}]",
     "joints[0].limits: must be [min, max] (got an array)"},
    {CAST ",'joints':[{'type':'Fixed','a':'ball','anchor':[0,0,0],'limits':[0,1]}]",
     "joints[0].limits: only Hinge (degrees) and Slider (metres) joints have limits"},
    {CAST ",'joints':[{'type':'Hinge','a':'ball','anchor':[0,0,0],'distance':1}]",
     "joints[0].distance: only Distance joints have a distance"},
    {CAST ",'joints':[{'type':'Distance','a':'ball','anchor':[0,0,0],'distance':-1}]",
     "joints[0].distance: must be >= 0 (got -1)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'break_force':0}]",
     "joints[0].break_force: must be > 0 (got 0)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'name':1}]",
     "joints[0].name: must be a string (got 1)"},
    {CAST ",'joints':[{'type':'Ball','a':'ball','anchor':[0,0,0],'axle':1}]",
     "joints[0].axle: unknown key (did you mean \"axis\"?)"},
    /* script */
    {CAST ",'script':{}", "script: must be an array of actions (got an object)"},
    {CAST ",'script':[1]", "script[0]: must be an action object"},
    {CAST ",'script':[{'do':'destroy','entity':'ball'}]",
     "script[0].at: required: the time in seconds"},
    {CAST ",'script':[{'at':-1,'do':'destroy','entity':'ball'}]",
     "script[0].at: must be >= 0 (got -1)"},
    {CAST ",'script':[{'at':1e999,'do':'destroy','entity':'ball'}]",
     "script[0].at: number out of range (overflows to infinity)"},
    {CAST ",'script':[{'at':0,'entity':'ball'}]", "script[0].do: required"},
    {CAST ",'script':[{'at':0,'do':'explode','entity':'ball'}]",
     "script[0].do: must be one of \"set_velocity\", \"set_angular_velocity\""},
    {CAST ",'script':[{'at':0,'do':'destroy'}]", "script[0].entity: required: an entity name"},
    {CAST ",'script':[{'at':0,'do':'destroy','entity':'ghost'}]",
     "script[0].entity: no entity named \"ghost\""},
    {CAST ",'script':[{'at':0,'do':'destroy','entity':'ball','value':1}]",
     "script[0].value: unknown key"},
    {CAST ",'script':[{'at':0,'do':'set_velocity','entity':'ball','valeu':[0,0,0]}]",
     "script[0].valeu: unknown key (did you mean \"value\"?)"},
    {CAST ",'script':[{'at':0,'do':'set_velocity','entity':'ball'}]",
     "script[0].value: required: [x, y, z]"},
    {CAST ",'script':[{'at':0,'do':'set_velocity','entity':'wall','value':[1,0,0]}]",
     "script[0].entity: set_velocity needs a Dynamic or Kinematic body (\"wall\" is Static)"},
    {CAST ",'script':[{'at':0,'do':'set_angular_velocity','entity':'lamp','value':[1,0,0]}]",
     "script[0].entity: set_angular_velocity needs a physics body (\"lamp\" has no physics "
     "component)"},
    {CAST ",'script':[{'at':0,'do':'apply_impulse','entity':'lift','value':[1,0,0]}]",
     "script[0].entity: apply_impulse needs a Dynamic body (\"lift\" is Kinematic)"},
    {CAST ",'script':[{'at':0,'do':'apply_impulse','entity':'ball','value':[1,0,0],'point':[0,0]}]",
     "script[0].point: must be an array of 3 numbers (got 2 elements)"},
    {CAST ",'script':[{'at':0,'do':'apply_force','entity':'wall','value':[1,0,0]}]",
     "script[0].entity: apply_force needs a Dynamic body (\"wall\" is Static)"},
    {CAST ",'script':[{'at':0,'do':'apply_force','entity':'ball','value':[1,0,0],'duration':0}]",
     "script[0].duration: must be > 0 (got 0)"},
    {CAST ",'script':[{'at':0,'do':'teleport','entity':'ball'}]",
     "script[0].position: required: [x, y, z]"},
    {CAST
     ",'script':[{'at':0,'do':'teleport','entity':'ball','position':[0,0,0],'rotation':[0,0,0,0]}]",
     "script[0].rotation: quaternion must have a non-zero length"},
    {CAST ",'script':[{'at':0,'do':'set_active','entity':'lamp','value':false}]",
     "script[0].entity: set_active needs a physics body (\"lamp\" has no physics component)"},
    {CAST ",'script':[{'at':0,'do':'set_active','entity':'ball'}]",
     "script[0].value: required: true or false"},
    {CAST ",'script':[{'at':0,'do':'set_entity_active','entity':'lamp','value':1}]",
     "script[0].value: must be true or false (got 1)"},
    {CAST ",'script':[{'at':0,'do':'spawn'}]", "script[0].scene: required: a scene file path"},
    {CAST ",'script':[{'at':0,'do':'spawn','scene':'nope.json'}]",
     "script[0].scene: cannot read \"nope.json\" (resolved as \""},
    {CAST ",'script':[{'at':0,'do':'spawn','scene':'nope.json'}]",
     "/nope.json\"): No such file or directory"},
    {CAST ",'script':[{'at':0,'do':'spawn','scene':'spawn_cell.json','offset':[0,0]}]",
     "script[0].offset: must be an array of 3 numbers"},
    {CAST ",'script':[{'at':0,'do':'spawn','scene':'spawn_cell.json','entity':'ball'}]",
     "script[0].entity: unknown key"},
    {CAST ",'script':[{'at':0,'do':'jump','entity':'ball','value':3}]",
     "script[0].entity: jump needs a character controller (\"ball\" is not one)"},
    {CAST ",'script':[{'at':0,'do':'jump','entity':'hero','value':0}]",
     "script[0].value: must be > 0 (got 0)"},
    {CAST ",'script':[{'at':0,'do':'jump','entity':'hero'}]",
     "script[0].value: required: the take-off speed in m/s"},
    {CAST ",'script':[{'at':0,'do':'raycast','origin':[0,0,0],'direction':[0,-1,0]}]",
     "script[0].label: required"},
    {CAST ",'script':[{'at':0,'do':'raycast','label':'r','origin':[0,0,0],'direction':[0,0,0]}]",
     "script[0].direction: must be a non-zero vector (its length is the ray's range)"},
    {CAST ",'script':[{'at':0,'do':'raycast','label':'r','direction':[0,-1,0]}]",
     "script[0].origin: required"},
    {CAST ",'script':[{'at':0,'do':'raycast','label':'r','origin':[0,0,0],'direction':[0,-1,0],'"
          "mask':-1}]",
     "script[0].mask: must be between 0 and 4294967295 (got -1)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball'}]",
     "script[0]: expect checks nothing: give position, velocity, angular_velocity, grounded, "
     "ground_state or awake"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','ground_state':'walkable'}]",
     "script[0].ground_state: expect ground_state needs a character controller (\"ball\" is not "
     "one)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'hero','ground_state':'flying'}]",
     "script[0].ground_state: must be one of \"airborne\", \"walkable\", \"steep\" (got "
     "\"flying\")"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','position':['a',0,null]}]",
     "script[0].position[0]: must be a number or null (got \"a\")"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','position':[0,0]}]",
     "script[0].position: must be [x, y, z], each a number or null (got an array)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','velocity':[0,1e999,null]}]",
     "script[0].velocity[1]: number out of range (overflows to infinity)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'lamp','velocity':[0,0,0]}]",
     "script[0].velocity: expect velocity needs a physics body (\"lamp\" has no physics "
     "component)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'wall','awake':true}]",
     "script[0].awake: expect awake needs a Dynamic body (\"wall\" is Static)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','grounded':true}]",
     "script[0].grounded: expect grounded needs a character controller (\"ball\" is not one)"},
    {CAST ",'script':[{'at':0,'do':'expect','entity':'ball','awake':true,'tolerance':0}]",
     "script[0].tolerance: must be > 0 (got 0)"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'touch','a':'ball','b':'wall'}]",
     "script[0].kind: must be one of \"enter\", \"stay\", \"exit\", \"sleep\", \"wake\", "
     "\"killed\" (got \"touch\")"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'sleep','a':'ball','b':'wall'}]",
     "script[0].b: a sleep event is of one body: give only a"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'wake','a':'lift'}]",
     "script[0].a: expect_event needs a Dynamic body (\"lift\" is Kinematic)"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'killed','a':'wall'}]",
     "script[0].a: expect_event needs a Dynamic body or a character (what the kill plane "
     "removes) (\"wall\" is Static)"},
    {CAST ",'script':[{'at':1,'do':'wake','entity':'lift'}]",
     "script[0].entity: wake needs a Dynamic body (\"lift\" is Kinematic)"},
    {"'entities':[{'name':'k','components':{'physics':{'body_type':'Kinematic','shape':'Sphere',"
     "'radius':1,'start_asleep':true}}}]",
     "entities[0].components.physics.start_asleep: only a Dynamic body has it (this one is "
     "Kinematic)"},
    {CAST ",'script':[{'at':1,'do':'expect_event','a':'ball','b':'wall'}]",
     "script[0].kind: required"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'ball'}]",
     "script[0].b: required: an entity name"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'ball','b':'ball'}]",
     "script[0].b: a and b must be different entities"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'lamp','b':'ball'}]",
     "script[0].a: expect_event needs a physics body (\"lamp\" has no physics component)"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'ball','b':'wall','since':2}]",
     "script[0].since: must not be later than at (2 > 1)"},
    {CAST
     ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'ball','b':'wall','since':-1}]",
     "script[0].since: must be >= 0 (got -1)"},
    {CAST ",'script':[{'at':1,'do':'expect_event','kind':'enter','a':'ball','b':'wall','entity':'"
          "ball'}]",
     "script[0].entity: unknown key"},
};

static void test_scene_rules_each_report_their_path(void **state)
{
    (void)state;
    size_t n = sizeof k_rule_cases / sizeof k_rule_cases[0];
    for (size_t i = 0; i < n; i++)
        expect_error(k_rule_cases[i].body, k_rule_cases[i].want);
}

/* The example docs/scene-format.md gives ("When a scene is wrong"), at the index it names. */
static void test_scene_rules_spec_example_message(void **state)
{
    (void)state;
    uint32_t n = expect_error("'entities':[{'name':'a'},{'name':'b'},{'name':'c'},"
                              "{'name':'d','components':{'physics':{'mass':-2,'shape':'Box',"
                              "'box_size':[1,1,1]}}}]",
                              "entities[3].components.physics.mass: must be > 0 for a Dynamic "
                              "body (got -2)");
    assert_int_equal(n, 1);
}

static void test_scene_load_reports_every_error(void **state)
{
    (void)state;
    char *json = scene_json("'physics':{'substeps':0},"
                            "'entities':[{'name':'a','components':{'physics':{'shape':'Sphere',"
                            "'radius':-1}}},{'name':'a'}]");
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_string(json, strlen(json), NULL, &ta.base, &s, &e), GY_ERR_PARSE);
    free(json);
    assert_null(s);
    assert_non_null(e);
    if (e->count != 3)
        print_errors(e);
    assert_int_equal(e->count, 3);
    assert_int_equal(e->total, 3);
    assert_true(errors_contain(e, "physics.substeps: must be between 1 and 16 (got 0)"));
    assert_true(errors_contain(e, "entities[0].components.physics.radius: must be > 0 (got -1)"));
    assert_true(errors_contain(e, "entities[1].name: duplicate name \"a\""));
    assert_string_equal(e->items[0].path, "physics.substeps");
    assert_string_equal(e->items[0].message, "must be between 1 and 16 (got 0)");

    /* Printing gives one `path: message` line per error. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gy_scene_errors_print(e, f, "scene.json: ");
    fclose(f);
    assert_non_null(
        strstr(buf, "scene.json: physics.substeps: must be between 1 and 16 (got 0)\n"));
    free(buf);
    gy_scene_errors_free(e);
    assert_int_equal(ta.live_blocks, 0);
}

/* A scene with more errors than are kept lists the first GY_SCENE_MAX_ERRORS and counts all. */
static void test_scene_load_caps_the_error_list(void **state)
{
    (void)state;
    const uint32_t n = GY_SCENE_MAX_ERRORS + 500u;
    size_t cap = (size_t)n * 32u + 128u;
    char *json = malloc(cap);
    assert_non_null(json);
    size_t len =
        (size_t)snprintf(json, cap, "{\"format\":\"gyre.scene\",\"version\":1,\"entities\":[");
    for (uint32_t i = 0; i < n; i++)
        len += (size_t)snprintf(json + len, cap - len, "%s{\"name\":%u}", i ? "," : "", i);
    len += (size_t)snprintf(json + len, cap - len, "]}");
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_string(json, len, NULL, &ta.base, &s, &e), GY_ERR_PARSE);
    free(json);
    assert_int_equal(e->count, GY_SCENE_MAX_ERRORS);
    assert_int_equal(e->total, n);
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    gy_scene_errors_print(e, f, NULL);
    fclose(f);
    assert_non_null(strstr(buf, "... and 500 more errors not listed\n"));
    free(buf);
    gy_scene_errors_free(e);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- valid scenes and their description ------------------------------------------------------ */

static void test_scene_load_applies_defaults(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(&l, "'entities':[{'name':'ball','components':{'physics':{"
                                    "'shape':'Sphere','radius':0.5}}},{'name':'empty'}]");
    assert_null(s->name);
    assert_vec_near(s->world.gravity, gy_v3(0, -9.81, 0), 0.0);
    assert_near(s->world.step_hz, 60.0, 0.0);
    assert_int_equal(s->world.substeps, 1);
    assert_int_equal(s->world.solver_iterations, 10);
    assert_null(s->world.backend);
    assert_int_equal(s->material_count, 0);
    assert_int_equal(s->entity_count, 2);
    assert_int_equal(s->joint_count, 0);
    assert_int_equal(s->action_count, 0);

    const gy_scene_entity *e = &s->entities[0];
    assert_string_equal(e->name, "ball");
    assert_true(e->active);
    assert_int_equal(e->parent, -1);
    assert_vec_near(e->position, gy_v3(0, 0, 0), 0.0);
    assert_near(e->rotation.w, 1.0, 0.0);
    assert_vec_near(e->scale, gy_v3(1, 1, 1), 0.0);
    const gy_scene_physics *p = e->physics;
    assert_non_null(p);
    assert_int_equal(p->body_type, GY_BODY_DYNAMIC);
    assert_true(p->is_active);
    assert_false(p->is_character);
    assert_near(p->max_slope, GY_PI / 4.0, 1e-15);
    assert_near(p->step_offset, 0.3, 0.0);
    assert_int_equal(p->body.type, GY_MOTION_DYNAMIC);
    assert_near(p->body.mass, 0.0, 0.0);
    assert_false(p->body.has_mass_properties);
    assert_near(p->body.linear_damping, 0.05, 0.0);
    assert_near(p->body.angular_damping, 0.05, 0.0);
    assert_near(p->body.gravity_factor, 1.0, 0.0);
    assert_true(p->body.allow_sleeping);
    assert_false(p->body.continuous);
    for (int i = 0; i < 3; i++) {
        assert_false(p->body.lock_linear[i]);
        assert_false(p->body.lock_angular[i]);
    }
    assert_result(gy_validate_body_def(&p->body), GY_OK);
    assert_int_equal(p->collider_count, 1);
    const gy_scene_collider *c = &p->colliders[0];
    assert_int_equal(c->def.shape.type, GY_SHAPE_SPHERE);
    assert_near(c->def.shape.radius, 0.5, 0.0);
    assert_near(c->def.density, 1.0, 0.0);
    assert_near(c->def.material.friction, 0.5, 0.0);
    assert_near(c->def.material.restitution, 0.0, 0.0);
    assert_int_equal(c->def.material.friction_combine, GY_COMBINE_AVERAGE);
    assert_int_equal(c->def.material.restitution_combine, GY_COMBINE_MAX);
    assert_false(c->def.is_sensor);
    assert_true(c->def.contact_response);
    assert_false(c->def.one_way);
    assert_vec_near(c->def.one_way_normal, gy_v3(0, 1, 0), 0.0);
    assert_int_equal(c->def.category, 1u);
    assert_int_equal(c->def.mask, UINT32_MAX);
    assert_null(c->material);
    assert_null(c->vertices);
    assert_result(gy_validate_collider_def(&c->def, p->body.type), GY_OK);
    assert_null(s->entities[1].physics);
    assert_int_equal(gy_scene_find_entity(s, "empty"), 1);
    assert_int_equal(gy_scene_find_entity(s, "nobody"), -1);
    unload(&l);
}

static void test_scene_load_resolves_materials_and_overrides(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l,
        "'materials':{'ice':{'friction':0.02,'friction_combine':'min'},"
        "'rubber':{'restitution':0.8,'restitution_combine':'multiply','friction_combine':'max'}},"
        "'entities':[{'name':'a','components':{'physics':{'shape':'Sphere','radius':1,"
        "'material':'ice','colliders':[{'shape':'Box','box_size':[1,1,1],'material':'rubber',"
        "'friction':0.7},{'shape':'Sphere','radius':1,'restitution':0.25}]}}}]");
    assert_int_equal(s->material_count, 2);
    assert_string_equal(s->materials[0].name, "ice");
    assert_near(s->materials[0].material.restitution, 0.0, 0.0); /* default filled in */
    const gy_scene_physics *p = s->entities[0].physics;
    assert_int_equal(p->collider_count, 3);
    const gy_material *m0 = &p->colliders[0].def.material;
    assert_string_equal(p->colliders[0].material, "ice");
    assert_near(m0->friction, 0.02, 0.0);
    assert_near(m0->restitution, 0.0, 0.0);
    assert_int_equal(m0->friction_combine, GY_COMBINE_MIN);
    assert_int_equal(m0->restitution_combine, GY_COMBINE_MAX);
    const gy_material *m1 = &p->colliders[1].def.material;
    assert_string_equal(p->colliders[1].material, "rubber");
    assert_near(m1->friction, 0.7, 0.0); /* per-collider override wins over the material */
    assert_near(m1->restitution, 0.8, 0.0);
    assert_int_equal(m1->friction_combine, GY_COMBINE_MAX);
    assert_int_equal(m1->restitution_combine, GY_COMBINE_MULTIPLY);
    const gy_material *m2 = &p->colliders[2].def.material;
    assert_null(p->colliders[2].material);
    assert_near(m2->friction, 0.5, 0.0);
    assert_near(m2->restitution, 0.25, 0.0);
    unload(&l);
}

static void test_scene_load_euler_is_yaw_then_pitch_then_roll(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s =
        load_ok(&l, "'entities':[{'name':'yaw','transform':{'rotation_euler':[0,90,0]}},"
                    "{'name':'pitch','transform':{'rotation_euler':[90,0,0]}},"
                    "{'name':'yaw_pitch','transform':{'rotation_euler':[90,90,0]}},"
                    "{'name':'yaw_roll','transform':{'rotation_euler':[0,90,90]}},"
                    "{'name':'quat','transform':{'rotation':[0,0,0,2]}},"
                    "{'name':'any','transform':{'rotation_euler':[30,45,60]}}]");
    const double tol = 1e-12;
    /* Yaw 90° about +Y takes +Z to +X; pitch 90° about +X takes +Y to +Z. */
    assert_vec_near(rotate(s->entities[0].rotation, gy_v3(0, 0, 1)), gy_v3(1, 0, 0), tol);
    assert_vec_near(rotate(s->entities[1].rotation, gy_v3(0, 1, 0)), gy_v3(0, 0, 1), tol);
    /* q = qy·qx·qz: pitch acts on the vector first, then yaw (+Y → +Z → +X). The other order would
     * leave +Y at +Z. */
    assert_vec_near(rotate(s->entities[2].rotation, gy_v3(0, 1, 0)), gy_v3(1, 0, 0), tol);
    /* Roll first, then yaw: +X → +Y → +Y (the other order gives -Z). */
    assert_vec_near(rotate(s->entities[3].rotation, gy_v3(1, 0, 0)), gy_v3(0, 1, 0), tol);
    /* Quaternions are normalised. */
    assert_near(s->entities[4].rotation.w, 1.0, 0.0);
    /* A general angle matches the product of the three axis rotations. */
    const double k = GY_PI / 180.0;
    gy_quat qx = {sin(15 * k), 0, 0, cos(15 * k)};
    gy_quat qy = {0, sin(22.5 * k), 0, cos(22.5 * k)};
    gy_quat qz = {0, 0, sin(30 * k), cos(30 * k)};
    gy_vec3 v = gy_v3(0.3, -0.5, 0.8);
    gy_vec3 want = rotate(qy, rotate(qx, rotate(qz, v)));
    assert_vec_near(rotate(s->entities[5].rotation, v), want, tol);
    const gy_quat q = s->entities[5].rotation;
    assert_near(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, 1.0, 1e-14);
    unload(&l);
}

static void test_scene_load_converts_degrees_to_radians(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l,
        "'entities':[{'name':'hero','components':{'physics':{'is_character_controller':true,"
        "'max_slope_deg':30}}},"
        "{'name':'door','components':{'physics':{'shape':'Box','box_size':[1,2,0.1],"
        "'local_rotation_euler':[0,0,90]}}},"
        "{'name':'rail','components':{'physics':{'shape':'Sphere','radius':0.1}}}],"
        "'joints':[{'type':'Hinge','a':'door','anchor':[0,0,0],'axis':[0,2,0],'limits':[-45,90]},"
        "{'type':'Slider','a':'rail','anchor':[0,0,0],'axis':[3,0,0],'limits':[-2,2]}]");
    assert_near(s->entities[0].physics->max_slope, GY_PI / 6.0, 1e-15);
    gy_quat lr = s->entities[1].physics->colliders[0].def.local_pose.rotation;
    assert_vec_near(rotate(lr, gy_v3(1, 0, 0)), gy_v3(0, 1, 0), 1e-12);
    const gy_joint_def *h = &s->joints[0].def;
    assert_true(h->has_limits);
    assert_near(h->limit_min, -GY_PI / 4.0, 1e-15);
    assert_near(h->limit_max, GY_PI / 2.0, 1e-15);
    assert_vec_near(h->axis, gy_v3(0, 1, 0), 0.0);
    const gy_joint_def *sl = &s->joints[1].def;
    assert_near(sl->limit_min, -2.0, 0.0); /* metres stay metres */
    assert_near(sl->limit_max, 2.0, 0.0);
    assert_vec_near(sl->axis, gy_v3(1, 0, 0), 0.0);
    unload(&l);
}

static void test_scene_load_characters_triggers_and_planes(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l, "'entities':[{'name':'hero','components':{'physics':{'is_character_controller':true}}},"
            "{'name':'tall','components':{'physics':{'is_character_controller':true,"
            "'shape':'Capsule','radius':0.4,'height':2,'body_type':'Kinematic'}}},"
            "{'name':'zone','components':{'physics':{'body_type':'Trigger','shape':'Box',"
            "'box_size':[2,2,2],'colliders':[{'shape':'Sphere','radius':1,'is_sensor':true}]}}},"
            "{'name':'floor','components':{'physics':{'body_type':'Static','shape':'Plane',"
            "'normal':[0,2,0],'offset':1}}}]");
    const gy_scene_physics *hero = s->entities[0].physics;
    assert_true(hero->is_character);
    assert_int_equal(hero->body_type, GY_BODY_KINEMATIC);
    assert_int_equal(hero->body.type, GY_MOTION_KINEMATIC);
    assert_int_equal(hero->collider_count, 1);
    assert_int_equal(hero->colliders[0].def.shape.type, GY_SHAPE_CAPSULE);
    assert_near(hero->colliders[0].def.shape.radius, 0.3, 0.0);
    assert_near(hero->colliders[0].def.shape.height, 1.8, 0.0);
    assert_near(hero->step_offset, 0.3, 0.0);
    const gy_scene_physics *tall = s->entities[1].physics;
    assert_near(tall->colliders[0].def.shape.radius, 0.4, 0.0);
    assert_near(tall->colliders[0].def.shape.height, 2.0, 0.0);
    const gy_scene_physics *zone = s->entities[2].physics;
    assert_int_equal(zone->body_type, GY_BODY_TRIGGER);
    assert_int_equal(zone->body.type, GY_MOTION_STATIC);
    assert_int_equal(zone->collider_count, 2);
    assert_true(zone->colliders[0].def.is_sensor);
    assert_true(zone->colliders[1].def.is_sensor);
    const gy_shape *plane = &s->entities[3].physics->colliders[0].def.shape;
    assert_int_equal(plane->type, GY_SHAPE_PLANE);
    assert_vec_near(plane->normal, gy_v3(0, 1, 0), 0.0);
    assert_near(plane->offset, 0.5, 0.0); /* the same plane, y = 0.5 */
    for (uint32_t i = 0; i < s->entity_count; i++) {
        const gy_scene_physics *p = s->entities[i].physics;
        assert_result(gy_validate_body_def(&p->body), GY_OK);
        for (uint32_t k = 0; k < p->collider_count; k++)
            assert_result(gy_validate_collider_def(&p->colliders[k].def, p->body.type), GY_OK);
    }
    unload(&l);
}

static void test_scene_load_derives_mass_for_mass_properties(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l,
        "'entities':[{'name':'a','components':{'physics':{'shape':'Box','box_size':[1,2,3],"
        "'density':2,'mass_properties':{'center_of_mass':[0,0.5,0],"
        "'inertia':[[2,0.5,0],[0.5,3,0],[0,0,4]]}}}},"
        "{'name':'b','components':{'physics':{'shape':'Box','box_size':[1,1,1],'mass':7,"
        "'mass_properties':{'inertia':[[1,0,0],[0,1,0],[0,0,1]]}}}},"
        "{'name':'c','components':{'physics':{'shape':'Box','box_size':[1,1,2],'is_sensor':true,"
        "'mass_properties':{'inertia':[[1,0,0],[0,1,0],[0,0,1]]}}}}]");
    const gy_body_def *a = &s->entities[0].physics->body;
    assert_true(a->has_mass_properties);
    assert_near(a->mass, 1000.0 * 2.0 * 6.0, 1e-9); /* 1000 kg/m³ × density 2 × 6 m³ */
    assert_vec_near(a->mass_properties.center_of_mass, gy_v3(0, 0.5, 0), 0.0);
    assert_near(a->mass_properties.inertia.m[0][1], 0.5, 0.0);
    assert_near(a->mass_properties.inertia.m[2][2], 4.0, 0.0);
    assert_result(gy_validate_body_def(a), GY_OK);
    assert_near(s->entities[1].physics->body.mass, 7.0, 0.0);
    /* Only a sensor: its volume counts, as the adapters weigh a body with nothing solid. */
    assert_near(s->entities[2].physics->body.mass, 2000.0, 1e-9);
    unload(&l);
}

static void test_scene_load_ignores_x_keys_everywhere(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l, "'x_tool':{'deep':[[[[1]]]]},'physics':{'x_a':1},'materials':{'m':{'x_b':2}},"
            "'entities':[{'name':'a','x_c':3,'transform':{'x_d':4},'components':{'x_render':{},"
            "'physics':{'shape':'Sphere','radius':1,'x_e':5,'mass_properties':{'x_f':6,"
            "'inertia':[[1,0,0],[0,1,0],[0,0,1]]},'colliders':[{'shape':'Sphere','radius':1,'x_g':"
            "7}]}}}],"
            "'joints':[{'type':'Ball','a':'a','anchor':[0,0,0],'x_h':8}],"
            "'script':[{'at':0,'do':'destroy','entity':'a','x_i':9}]");
    assert_int_equal(s->entity_count, 1);
    unload(&l);
}

static void test_scene_load_resolves_hierarchy_joints_and_script(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l,
        "'entities':[{'name':'child','parent':'root','active':false},"
        "{'name':'root','components':{'physics':{'body_type':'Kinematic','shape':'Sphere','radius':"
        "1}}},"
        "{'name':'rider','parent':'root','components':{'physics':{'shape':'Sphere','radius':1}}},"
        "{'name':'hero','components':{'physics':{'is_character_controller':true}}}],"
        "'joints':[{'name':'j','type':'Distance','a':'rider','anchor':[1,2,3],'break_force':50},"
        "{'type':'Ball','a':'rider','b':'root','anchor':[0,0,0]}],"
        "'script':[{'at':2,'do':'destroy','entity':'child'},"
        "{'at':1,'do':'set_velocity','entity':'hero','value':[1,0,0]},"
        "{'at':1,'do':'jump','entity':'hero','value':5},"
        "{'at':0,'do':'expect','entity':'rider','position':[null,1.5,null],'awake':true},"
        "{'at':1,'do':'expect_event','kind':'exit','a':'rider','b':'root'},"
        "{'at':0.5,'do':'spawn','scene':'spawn_cell.json','offset':[1,2,3]},"
        "{'at':0.5,'do':'raycast','label':'down','origin':[0,5,0],'direction':[0,-10,0]}]");
    assert_int_equal(s->entities[0].parent, 1); /* forward reference */
    assert_false(s->entities[0].active);
    assert_int_equal(s->entities[2].parent, 1);
    const gy_scene_joint *j0 = &s->joints[0];
    assert_string_equal(j0->name, "j");
    assert_int_equal(j0->a, 2);
    assert_int_equal(j0->b, -1);
    assert_int_equal(j0->def.type, GY_JOINT_DISTANCE);
    assert_near(j0->def.distance, -1.0, 0.0); /* at creation */
    assert_true(j0->def.breakable);
    assert_near(j0->def.break_force, 50.0, 0.0);
    assert_vec_near(j0->def.anchor, gy_v3(1, 2, 3), 0.0);
    assert_null(s->joints[1].name);
    assert_int_equal(s->joints[1].b, 1);
    assert_false(s->joints[1].def.breakable);

    /* Sorted by time, file order kept for equal times. */
    assert_int_equal(s->action_count, 7);
    const uint32_t order[] = {3, 5, 6, 1, 2, 4, 0};
    for (int i = 0; i < 7; i++)
        assert_int_equal(s->actions[i].index, order[i]);
    const gy_scene_action *ex = &s->actions[0];
    assert_int_equal(ex->type, GY_SCENE_ACTION_EXPECT);
    assert_int_equal(ex->entity, 2);
    assert_true(ex->expect.has_position);
    assert_false(ex->expect.position_set[0]);
    assert_true(ex->expect.position_set[1]);
    assert_false(ex->expect.position_set[2]);
    assert_near(ex->expect.position.y, 1.5, 0.0);
    assert_false(ex->expect.has_velocity);
    assert_true(ex->expect.has_awake);
    assert_true(ex->expect.awake);
    assert_false(ex->expect.has_grounded);
    assert_false(ex->expect.has_ground_state);
    assert_near(ex->expect.tolerance, 0.01, 0.0);
    const gy_scene_action *sp = &s->actions[1];
    assert_int_equal(sp->type, GY_SCENE_ACTION_SPAWN);
    assert_int_equal(sp->entity, -1);
    char want[600];
    snprintf(want, sizeof want, "%s/spawn_cell.json", g_data_dir);
    assert_string_equal(sp->spawn.scene, want);
    assert_vec_near(sp->spawn.offset, gy_v3(1, 2, 3), 0.0);
    const gy_scene_action *rc = &s->actions[2];
    assert_string_equal(rc->raycast.label, "down");
    assert_vec_near(rc->raycast.direction, gy_v3(0, -10, 0), 0.0);
    assert_int_equal(rc->raycast.mask, UINT32_MAX);
    assert_int_equal(s->actions[4].type, GY_SCENE_ACTION_JUMP);
    assert_near(s->actions[4].jump.speed, 5.0, 0.0);
    const gy_scene_action *ev = &s->actions[5];
    assert_int_equal(ev->expect_event.kind, GY_SCENE_EVENT_EXIT);
    assert_int_equal(ev->expect_event.a, 2);
    assert_int_equal(ev->expect_event.b, 1);
    assert_near(ev->expect_event.since, 0.0, 0.0);
    assert_string_equal(gy_scene_action_name(s->actions[6].type), "destroy");
    unload(&l);
}

static void test_scene_load_reads_world_actions(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s =
        load_ok(&l, CAST ",'script':["
                         "{'at':1,'do':'move_kinematic','entity':'lift','position':[1,2,3],"
                         "'rotation':[0,0.7071067811865476,0,0.7071067811865476],'duration':2},"
                         "{'at':2,'do':'move_kinematic','entity':'lift','position':[0,0,0]},"
                         "{'at':3,'do':'set_gravity','value':[1,-2,3]},"
                         "{'at':4,'do':'apply_torque','entity':'ball','value':[0,5,0],"
                         "'duration':0.5},"
                         "{'at':5,'do':'expect','entity':'ball','angular_velocity':[null,1,2],"
                         "'tolerance':0.1},"
                         "{'at':6,'do':'wake','entity':'ball'},"
                         "{'at':7,'do':'expect_event','kind':'killed','a':'hero','since':6},"
                         "{'at':8,'do':'expect_event','kind':'sleep','a':'ball'}]");
    assert_int_equal(s->action_count, 8);
    const gy_scene_action *a = &s->actions[0];
    assert_int_equal(a->type, GY_SCENE_ACTION_MOVE_KINEMATIC);
    assert_string_equal(gy_scene_action_name(a->type), "move_kinematic");
    assert_int_equal(a->entity, 2);
    assert_vec_near(a->move.position, gy_v3(1, 2, 3), 0.0);
    assert_true(a->move.has_rotation);
    assert_near(a->move.rotation.y, sqrt(0.5), 1e-12);
    assert_near(a->move.duration, 2.0, 0.0);
    a = &s->actions[1];
    assert_false(a->move.has_rotation);
    assert_near(a->move.duration, 0.0, 0.0); /* one tick */
    a = &s->actions[2];
    assert_int_equal(a->type, GY_SCENE_ACTION_SET_GRAVITY);
    assert_string_equal(gy_scene_action_name(a->type), "set_gravity");
    assert_int_equal(a->entity, -1);
    assert_vec_near(a->gravity.value, gy_v3(1, -2, 3), 0.0);
    a = &s->actions[3];
    assert_int_equal(a->type, GY_SCENE_ACTION_APPLY_TORQUE);
    assert_string_equal(gy_scene_action_name(a->type), "apply_torque");
    assert_int_equal(a->entity, 0);
    assert_vec_near(a->force.value, gy_v3(0, 5, 0), 0.0);
    assert_near(a->force.duration, 0.5, 0.0);
    a = &s->actions[4];
    assert_true(a->expect.has_angular_velocity);
    assert_false(a->expect.angular_velocity_set[0]);
    assert_true(a->expect.angular_velocity_set[1] && a->expect.angular_velocity_set[2]);
    assert_vec_near(a->expect.angular_velocity, gy_v3(0, 1, 2), 0.0);
    a = &s->actions[5];
    assert_int_equal(a->type, GY_SCENE_ACTION_WAKE);
    assert_string_equal(gy_scene_action_name(a->type), "wake");
    assert_int_equal(a->entity, 0);
    a = &s->actions[6];
    assert_int_equal(a->expect_event.kind, GY_SCENE_EVENT_KILLED);
    assert_string_equal(gy_scene_event_kind_name(a->expect_event.kind), "killed");
    assert_int_equal(a->expect_event.a, 4);
    assert_int_equal(a->expect_event.b, -1);
    assert_near(a->expect_event.since, 6.0, 0.0);
    a = &s->actions[7];
    assert_int_equal(a->expect_event.kind, GY_SCENE_EVENT_SLEEP);
    unload(&l);
    s = load_ok(&l, "'entities':[{'name':'c','components':{'physics':{'shape':'Sphere',"
                    "'radius':1,'start_asleep':true}}}]");
    assert_true(s->entities[0].physics->start_asleep);
    assert_false(s->world.has_kill_y);
    unload(&l);
    s = load_ok(&l, "'entities':[{'name':'p','components':{'physics':{'body_type':'Static',"
                    "'shape':'Box','box_size':[1,1,1],'one_way':true,'one_way_slop':0.12}}},"
                    "{'name':'q','components':{'physics':{'body_type':'Static','shape':'Box',"
                    "'box_size':[1,1,1],'one_way':true}}}]");
    assert_near(s->entities[0].physics->colliders[0].def.one_way_slop, 0.12, 0.0);
    assert_near(s->entities[1].physics->colliders[0].def.one_way_slop, GY_DEFAULT_ONE_WAY_SLOP,
                0.0);
    unload(&l);
    s = load_ok(&l, "'physics':{'kill_y':-12.5}");
    assert_true(s->world.has_kill_y);
    assert_near(s->world.kill_y, -12.5, 0.0);
    gy_world_def c = gy_default_world_def();
    assert_result(gy_scene_get_world_def(s, NULL, &c), GY_OK);
    assert_true(c.kill_plane);
    assert_near(c.kill_y, -12.5, 0.0);
    unload(&l);
}

static void test_scene_load_reads_motors_springs_cones_and_set_motor(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l, CAST ",'joints':["
                 "{'name':'door','type':'Hinge','a':'ball','anchor':[0,0,0],'axis':[0,2,0],"
                 "'motor':{'position':90,'max_force':200}},"
                 "{'name':'lift','type':'Slider','a':'lift','anchor':[0,0,0],'motor':{"
                 "'velocity':-0.5,'max_force':1000}},"
                 "{'type':'Distance','a':'ball','anchor':[0,3,0],'spring':{'frequency':2,"
                 "'damping_ratio':0.3}},"
                 "{'type':'Ball','a':'ball','b':'lift','anchor':[0,0,0],'axis':[0,-1,0],"
                 "'cone_angle':45,'twist_limits':[-30,60]}],"
                 "'script':[{'at':1,'do':'set_motor','joint':'door','position':-45},"
                 "{'at':2,'do':'set_motor','joint':'lift','velocity':0.25,'max_force':500}]");
    const gy_joint_def *d = &s->joints[0].def;
    assert_int_equal(d->motor.mode, GY_MOTOR_POSITION);
    assert_near(d->motor.target, GY_PI / 2.0, 1e-12); /* degrees to radians */
    assert_near(d->motor.max_force, 200.0, 0.0);
    assert_vec_near(d->axis, gy_v3(0, 1, 0), 0.0);
    d = &s->joints[1].def;
    assert_int_equal(d->motor.mode, GY_MOTOR_VELOCITY);
    assert_near(d->motor.target, -0.5, 0.0); /* m/s, unconverted */
    d = &s->joints[2].def;
    assert_true(d->has_spring);
    assert_near(d->spring_frequency, 2.0, 0.0);
    assert_near(d->spring_damping_ratio, 0.3, 0.0);
    assert_int_equal(d->motor.mode, GY_MOTOR_OFF);
    d = &s->joints[3].def;
    assert_true(d->has_cone);
    assert_near(d->cone_angle, GY_PI / 4.0, 1e-12);
    assert_true(d->has_twist_limits);
    assert_near(d->twist_min, -GY_PI / 6.0, 1e-12);
    assert_near(d->twist_max, GY_PI / 3.0, 1e-12);
    assert_vec_near(d->axis, gy_v3(0, -1, 0), 0.0);
    assert_result(gy_validate_joint_def(&(gy_joint_def){.type = d->type,
                                                        .a = {1},
                                                        .axis = d->axis,
                                                        .has_cone = true,
                                                        .cone_angle = d->cone_angle,
                                                        .has_twist_limits = true,
                                                        .twist_min = d->twist_min,
                                                        .twist_max = d->twist_max}),
                  GY_OK);

    assert_int_equal(s->action_count, 2);
    const gy_scene_action *a = &s->actions[0];
    assert_int_equal(a->type, GY_SCENE_ACTION_SET_MOTOR);
    assert_string_equal(gy_scene_action_name(a->type), "set_motor");
    assert_int_equal(a->entity, -1);
    assert_int_equal(a->motor.joint, 0);
    assert_int_equal(a->motor.mode, GY_MOTOR_POSITION);
    assert_near(a->motor.target, -GY_PI / 4.0, 1e-12); /* a Hinge's position in degrees */
    assert_false(a->motor.has_max_force);
    a = &s->actions[1];
    assert_int_equal(a->motor.joint, 1);
    assert_int_equal(a->motor.mode, GY_MOTOR_VELOCITY);
    assert_near(a->motor.target, 0.25, 0.0);
    assert_true(a->motor.has_max_force);
    assert_near(a->motor.max_force, 500.0, 0.0);
    unload(&l);
}

static void test_scene_load_geometry_inline_and_from_obj(void **state)
{
    (void)state;
    loaded l;
    const gy_scene *s = load_ok(
        &l,
        "'entities':[{'name':'tri','components':{'physics':{'body_type':'Kinematic',"
        "'shape':'Mesh','vertices':[[0,0,0],[1,0,0],[0,0,1],[1,0,1]],'indices':[0,1,2,2,1,3]}}},"
        "{'name':'tet','components':{'physics':{'shape':'Hull',"
        "'points':[[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}}},"
        "{'name':'level','components':{'physics':{'body_type':'Static','shape':'Mesh',"
        "'collision':'level.obj'}}},"
        "{'name':'rock1','components':{'physics':{'shape':'Hull','collision':'cube.obj'}}},"
        "{'name':'rock2','components':{'physics':{'shape':'Hull','collision':'./cube.obj'}}},"
        "{'name':'rock3','components':{'physics':{'shape':'Hull','collision':'cube.obj'}}}]");
    const gy_scene_collider *tri = &s->entities[0].physics->colliders[0];
    assert_int_equal(tri->vertex_count, 4);
    assert_int_equal(tri->index_count, 6);
    assert_int_equal(tri->indices[5], 3);
    assert_null(tri->collision);
    assert_int_equal(tri->def.shape.resource.bits, 0);
    const gy_scene_collider *tet = &s->entities[1].physics->colliders[0];
    assert_int_equal(tet->vertex_count, 4);
    assert_null(tet->indices);
    const gy_scene_collider *lvl = &s->entities[2].physics->colliders[0];
    assert_int_equal(lvl->vertex_count, 9);
    assert_int_equal(lvl->index_count, 24);
    char want[600];
    snprintf(want, sizeof want, "%s/level.obj", g_data_dir);
    assert_string_equal(lvl->collision, want);
    const gy_scene_collider *r1 = &s->entities[3].physics->colliders[0];
    const gy_scene_collider *r3 = &s->entities[5].physics->colliders[0];
    assert_int_equal(r1->vertex_count, 8);
    assert_null(r1->indices);
    /* One OBJ file, read once, shared by every collider naming it the same way. */
    assert_ptr_equal(r1->vertices, r3->vertices);
    unload(&l);
}

static void test_scene_load_file_fixture(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/valid_scene.json", g_data_dir);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    gy_result r = gy_scene_load_file(path, &ta.base, &s, &e);
    if (r != GY_OK)
        print_errors(e);
    assert_result(r, GY_OK);
    assert_string_equal(s->name, "loader fixture");
    assert_string_equal(s->source, path);
    assert_string_equal(s->base_dir, g_data_dir);
    assert_string_equal(s->world.backend, "ode");
    assert_near(s->world.step_hz, 120.0, 0.0);
    assert_int_equal(s->world.substeps, 2);
    assert_int_equal(s->world.solver_iterations, 20);
    assert_vec_near(s->world.gravity, gy_v3(0, -9.8, 0), 0.0);
    assert_int_equal(s->entity_count, 12);
    assert_int_equal(s->joint_count, 5);
    assert_int_equal(s->action_count, 15);
    const gy_scene_entity *rock = &s->entities[gy_scene_find_entity(s, "rock")];
    const gy_scene_collider *rc = &rock->physics->colliders[0];
    assert_near(rc->def.material.friction, 0.4, 0.0);
    assert_near(rc->def.material.restitution, 0.8, 0.0);
    assert_near(rock->physics->body.mass, 5.0, 0.0);
    const gy_scene_entity *crate = &s->entities[gy_scene_find_entity(s, "crate")];
    assert_true(crate->physics->body.lock_linear[1]);
    assert_true(crate->physics->body.lock_angular[0]);
    assert_false(crate->physics->body.lock_angular[1]);
    assert_near(crate->physics->body.mass, 6000.0, 1e-9);
    const gy_scene_entity *db = &s->entities[gy_scene_find_entity(s, "dumbbell")];
    assert_int_equal(db->physics->collider_count, 4);
    assert_int_equal(db->physics->colliders[2].def.category, 2u);
    assert_true(db->physics->colliders[3].def.is_sensor);
    assert_vec_near(
        s->entities[gy_scene_find_entity(s, "platform")].physics->colliders[0].def.one_way_normal,
        gy_v3(0, 1, 0), 0.0);
    for (uint32_t i = 0; i < s->entity_count; i++) {
        const gy_scene_physics *p = s->entities[i].physics;
        if (p == NULL)
            continue;
        assert_result(gy_validate_body_def(&p->body), GY_OK);
        for (uint32_t k = 0; k < p->collider_count; k++) {
            gy_collider_def d = p->colliders[k].def;
            if (d.shape.type == GY_SHAPE_HULL || d.shape.type == GY_SHAPE_MESH)
                d.shape.resource.bits = 1; /* the engine's job; everything else must pass */
            assert_result(gy_validate_collider_def(&d, p->body.type), GY_OK);
        }
    }
    for (uint32_t i = 1; i < s->action_count; i++)
        assert_true(s->actions[i - 1].at <= s->actions[i].at);
    gy_scene_free(s);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- hostile and broken input ---------------------------------------------------------------- */

static void test_scene_load_malformed_json_names_line_and_column(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *want;
    } cases[] = {
        {"{\"format\": \"gyre.scene\",\n  \"version\": 1,,\n}",
         "(string):2:16: malformed JSON: expected a key in double quotes after ',', got ','"},
        {"{\"format\": \"gyre.scene\", \"version\": 1",
         "(string):1:38: malformed JSON: expected ',' or '}' after an object member, got the end "
         "of the text"},
        {"{\"format\": \"gyre.scene\", \"version\": 1} trailing",
         "(string):1:40: malformed JSON: unexpected \"trailing\" after the end of the JSON value"},
        {"{\"a\": NaN}", "(string):1:7: malformed JSON: expected a value, got \"NaN\""},
        {"{\"name\": \"caf\xc3\xa9\", ]",
         "(string):1:18: malformed JSON: expected a key in double quotes after ',', got ']'"},
        {"{\"a\": [1, 2,]}", "(string):1:13: malformed JSON: expected a value, got ']'"},
        {"{\"a\": [1 2]}",
         "(string):1:10: malformed JSON: expected ',' or ']' after an array element, got '2'"},
        {"{\"a\" 1}", "(string):1:6: malformed JSON: expected ':' after the key, got '1'"},
        {"{\"a\": 01}", "(string):1:7: malformed JSON: malformed number (no leading zeros)"},
        {"{\"a\": 1.}", "(string):1:7: malformed JSON: malformed number (digits must follow '.')"},
        {"{\"a\": 1e}",
         "(string):1:7: malformed JSON: malformed number (digits must follow the exponent)"},
        {"{\"a\": -}", "(string):1:7: malformed JSON: malformed number"},
        {"{\"a\": tru}", "(string):1:7: malformed JSON: expected a value, got \"tru\""},
        {"{\n\n  \"a\": \"open}", "(string):3:8: malformed JSON: unterminated string"},
        {"{\"a\": \"x\\qy\"}", "(string):1:9: malformed JSON: invalid escape '\\q' in a string"},
        {"{\"a\": \"\\u12\"}", "(string):1:8: malformed JSON: \\u needs 4 hex digits"},
        {"{\"a\": \"\\u0000\"}",
         "(string):1:8: malformed JSON: \\u0000 is not allowed in a string"},
        {"{\"a\": \"\\udc00\"}", "(string):1:8: malformed JSON: unpaired UTF-16 surrogate \\uDC00"},
        {"{\"a\": \"\\ud83d!\"}",
         "(string):1:8: malformed JSON: unpaired UTF-16 surrogate \\uD83D"},
        {"{\"a\": \"tab\there\"}",
         "(string):1:11: malformed JSON: control character 0x09 in a string"},
        {"{'a': 1}", "(string):1:2: malformed JSON: expected a key in double quotes, got '''"},
        {"{\"a\": 1234567890123456789012345678901234567890123456789012345678901234}",
         "(string):1:7: number longer than 63 characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_text_error(cases[i].json, strlen(cases[i].json), cases[i].want);

    /* What the check accepts, cJSON reads the same way: escapes and surrogate pairs. */
    loaded l;
    const gy_scene *s = load_ok(&l, "'entities':[{'name':'\\u00e9\\ud83d\\ude00\\n\\\"\\/x'}]");
    assert_string_equal(s->entities[0].name, "\xc3\xa9\xf0\x9f\x98\x80\n\"/x");
    unload(&l);
}

static void test_scene_load_rejects_empty_input(void **state)
{
    (void)state;
    expect_text_error("", 0, "(string): empty file: expected a JSON object");
    expect_text_error(" \n\t ", 4, "(string): no JSON value (only whitespace)");
    char path[600];
    snprintf(path, sizeof path, "%s/empty.json", g_data_dir);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_file(path, &ta.base, &s, &e), GY_ERR_PARSE);
    char want[700];
    snprintf(want, sizeof want, "%s: empty file", path);
    assert_true(errors_contain(e, want));
    gy_scene_errors_free(e);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_scene_load_rejects_overflowing_numbers(void **state)
{
    (void)state;
    expect_error("'physics':{'step_hz':1e999}",
                 "physics.step_hz: number out of range (overflows to infinity)");
    expect_error("'physics':{'gravity':[0,-1e400,0]}",
                 "physics.gravity[1]: number out of range (overflows to infinity)");
    expect_error("'entities':[{'name':'a','transform':{'rotation':[1e999,0,0,1]}}]",
                 "entities[0].transform.rotation[0]: number out of range (overflows to infinity)");
    const char *j = "{\"format\":\"gyre.scene\",\"version\":1e999}";
    expect_text_error(j, strlen(j), "version: number out of range (overflows to infinity)");
}

static void test_scene_load_rejects_bad_bytes(void **state)
{
    (void)state;
    const char bad_utf8[] = "{\"format\":\"gyre.scene\",\n\"name\":\"\xff\"}";
    expect_text_error(bad_utf8, sizeof bad_utf8 - 1u, "(string):2:9: invalid UTF-8");
    const char nul[] = "{\"format\":\"gyre.scene\"\0,\"version\":1}";
    expect_text_error(nul, sizeof nul - 1u, "(string):1:23: NUL byte: not a text file");
    /* A byte order mark is fine. */
    loaded l;
    gy_test_allocator_init(&l.ta);
    const char bom[] = "\xEF\xBB\xBF{\"format\":\"gyre.scene\",\"version\":1}";
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_string(bom, sizeof bom - 1u, NULL, &l.ta.base, &l.scene, &e),
                  GY_OK);
    unload(&l);
}

static void test_scene_load_missing_file(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/no_such_scene.json", g_data_dir);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_file(path, &ta.base, &s, &e), GY_ERR_IO);
    assert_null(s);
    assert_int_equal(e->count, 1);
    assert_string_equal(e->items[0].path, path);
    assert_string_equal(e->items[0].message, "cannot read: No such file or directory");
    gy_scene_errors_free(e);
    /* Without an error list the result alone reports it. */
    assert_result(gy_scene_load_file(path, &ta.base, &s, NULL), GY_ERR_IO);
    assert_int_equal(ta.live_blocks, 0);
    assert_result(gy_scene_load_file(NULL, &ta.base, &s, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_scene_load_string("{}", 2, NULL, &ta.base, NULL, NULL),
                  GY_ERR_INVALID_ARGUMENT);
}

/* 20 MB of nesting: rejected by the pre-scan at the first level past the limit, before cJSON
 * recurses, in a time and memory bounded by one pass over the text. */
static void test_scene_load_rejects_deep_nesting(void **state)
{
    (void)state;
    const size_t half = 10u * 1024u * 1024u;
    char *doc = malloc(2u * half);
    assert_non_null(doc);
    memset(doc, '[', half);
    memset(doc + half, ']', half);
    char want[64];
    snprintf(want, sizeof want, "(string):1:%u: nested deeper than %u levels",
             GY_SCENE_MAX_DEPTH + 1u, GY_SCENE_MAX_DEPTH);
    double t0 = gy_test_now();
    assert_int_equal(expect_text_error(doc, 2u * half, want), 1);
    /* Objects nest the same way: {"a":{"a":...}}. */
    size_t unit = 5, levels = (2u * half) / (unit + 1u);
    size_t len = 0;
    for (size_t i = 0; i < levels; i++) {
        memcpy(doc + len, "{\"a\":", unit);
        len += unit;
    }
    memset(doc + len, '}', levels);
    len += levels;
    snprintf(want, sizeof want, "(string):1:%u: nested deeper than %u levels",
             GY_SCENE_MAX_DEPTH * 5u + 1u, GY_SCENE_MAX_DEPTH);
    expect_text_error(doc, len, want);
    double dt = gy_test_now() - t0;
    free(doc);
    print_message("deep nesting: 2 x 20 MB rejected in %.3f s\n", dt);

    /* Tools' x_ data may nest, up to the limit. */
    char *ok = malloc(4096);
    assert_non_null(ok);
    size_t n = (size_t)snprintf(ok, 4096, "{\"format\":\"gyre.scene\",\"version\":1,\"x_deep\":");
    for (unsigned i = 0; i < GY_SCENE_MAX_DEPTH - 1u; i++)
        ok[n++] = '[';
    for (unsigned i = 0; i < GY_SCENE_MAX_DEPTH - 1u; i++)
        ok[n++] = ']';
    ok[n++] = '}';
    loaded l;
    gy_test_allocator_init(&l.ta);
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_string(ok, n, NULL, &l.ta.base, &l.scene, &e), GY_OK);
    unload(&l);
    free(ok);
}

static void test_scene_load_rejects_too_many_values(void **state)
{
    (void)state;
    size_t n = (size_t)GY_SCENE_MAX_VALUES + 10u;
    size_t cap = 2u * n + 64u;
    char *doc = malloc(cap);
    assert_non_null(doc);
    size_t len = (size_t)snprintf(doc, cap, "{\"x_big\":[");
    for (size_t i = 0; i < n; i++) {
        doc[len++] = '0';
        doc[len++] = ',';
    }
    doc[len - 1u] = ']';
    doc[len++] = '}';
    char want[128];
    snprintf(want, sizeof want, "more than %u JSON values (put large meshes in OBJ files)",
             GY_SCENE_MAX_VALUES);
    expect_text_error(doc, len, want);
    free(doc);
}

/* A sparse file over the size limit is refused from its size alone. */
static void test_scene_load_rejects_oversized_file(void **state)
{
    (void)state;
    char path[] = "/tmp/gyre_scene_big_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)GY_SCENE_MAX_FILE_BYTES + 1), 0);
    close(fd);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    gy_result r = gy_scene_load_file(path, &ta.base, &s, &e);
    unlink(path);
    assert_result(r, GY_ERR_CAPACITY);
    assert_int_equal(e->count, 1);
    assert_string_equal(e->items[0].message, "cannot read: larger than the 64 MB limit");
    gy_scene_errors_free(e);
    assert_int_equal(ta.live_blocks, 0);
}

/* Every allocation of a medium scene (OBJ files, hulls, materials, joints, script) may fail; each
 * failure reports out-of-memory with nothing allocated, until the sweep reaches a full load. The
 * same holds while loading a scene that fails validation. */
static void sweep(const char *path, gy_result final)
{
    gy_test_allocator ta;
    uint64_t k;
    for (k = 1; k < 100000; k++) {
        gy_test_allocator_init(&ta);
        ta.fail_at = k;
        gy_scene *s = (gy_scene *)(uintptr_t)1;
        gy_scene_errors *e = (gy_scene_errors *)(uintptr_t)1;
        gy_result r = gy_scene_load_file(path, &ta.base, &s, &e);
        if (r == final && ta.calls < k) {
            /* No allocation failed: the sweep is complete. */
            if (r == GY_OK)
                gy_scene_free(s);
            else
                gy_scene_errors_free(e);
            assert_int_equal(ta.live_blocks, 0);
            break;
        }
        if (r != GY_ERR_OUT_OF_MEMORY || ta.live_blocks != 0 || ta.live_bytes != 0)
            print_error("failing allocation %llu: %s, %lld blocks / %lld bytes left\n",
                        (unsigned long long)k, gy_result_name(r), (long long)ta.live_blocks,
                        (long long)ta.live_bytes);
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(s);
        assert_null(e);
        assert_int_equal(ta.live_blocks, 0);
        assert_int_equal(ta.live_bytes, 0);
    }
    print_message("%s: %llu allocation failures, each clean\n", path, (unsigned long long)(k - 1));
    assert_true(k > 10);
}

static void test_scene_load_survives_every_allocation_failure(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/valid_scene.json", g_data_dir);
    sweep(path, GY_OK);
}

static void test_scene_load_invalid_scene_survives_every_allocation_failure(void **state)
{
    (void)state;
    const char *text =
        "{\"format\":\"gyre.scene\",\"version\":1,\"materials\":{\"m\":{\"friction\":-1}},"
        "\"entities\":[{\"name\":\"a\",\"parent\":\"b\"},{\"name\":\"b\",\"parent\":\"a\"},"
        "{\"name\":\"c\",\"components\":{\"physics\":{\"shape\":\"Hull\",\"collision\":"
        "\"bad_face.obj\"}}},{\"name\":\"d\",\"components\":{\"physics\":{\"shape\":"
        "\"Hull\",\"collision\":\"cube.obj\",\"material\":\"q\"}}}],"
        "\"script\":[{\"at\":0,\"do\":\"spawn\",\"scene\":\"nope.json\"}]}";
    char path[] = "/tmp/gyre_scene_invalid_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    /* Relative OBJ paths resolve against /tmp here, so point them at the data folder. */
    char *abs_text = malloc(strlen(text) + 4096);
    assert_non_null(abs_text);
    char bad[700], cube[700];
    snprintf(bad, sizeof bad, "%s/bad_face.obj", g_data_dir);
    snprintf(cube, sizeof cube, "%s/cube.obj", g_data_dir);
    const char *p1 = strstr(text, "bad_face.obj");
    const char *p2 = strstr(text, "cube.obj");
    int n = snprintf(abs_text, strlen(text) + 4096, "%.*s%s%.*s%s%s", (int)(p1 - text), text, bad,
                     (int)(p2 - (p1 + 12)), p1 + 12, cube, p2 + 8);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, abs_text, (size_t)n), n);
    close(fd);
    free(abs_text);
    sweep(path, GY_ERR_PARSE);

    gy_scene *s = NULL;
    gy_scene_errors *e = NULL;
    assert_result(gy_scene_load_file(path, NULL, &s, &e), GY_ERR_PARSE);
    unlink(path);
    assert_int_equal(e->total, 5);
    assert_true(errors_contain(e, "materials.m.friction: must be >= 0 (got -1)"));
    assert_true(errors_contain(e, "entities[0].parent: parent cycle"));
    assert_true(errors_contain(e, "entities[2].components.physics.collision:"));
    assert_true(errors_contain(e, "bad_face.obj:12: face index 9 out of range (8 vertices)"));
    assert_true(
        errors_contain(e, "entities[3].components.physics.material: no material named \"q\""));
    assert_true(errors_contain(e, "script[0].scene: cannot read \"nope.json\""));
    gy_scene_errors_free(e);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_rules_format_and_version),
        cmocka_unit_test(test_scene_rules_each_report_their_path),
        cmocka_unit_test(test_scene_rules_spec_example_message),
        cmocka_unit_test(test_scene_load_reports_every_error),
        cmocka_unit_test(test_scene_load_caps_the_error_list),
        cmocka_unit_test(test_scene_load_applies_defaults),
        cmocka_unit_test(test_scene_load_resolves_materials_and_overrides),
        cmocka_unit_test(test_scene_load_euler_is_yaw_then_pitch_then_roll),
        cmocka_unit_test(test_scene_load_converts_degrees_to_radians),
        cmocka_unit_test(test_scene_load_characters_triggers_and_planes),
        cmocka_unit_test(test_scene_load_derives_mass_for_mass_properties),
        cmocka_unit_test(test_scene_load_ignores_x_keys_everywhere),
        cmocka_unit_test(test_scene_load_resolves_hierarchy_joints_and_script),
        cmocka_unit_test(test_scene_load_reads_motors_springs_cones_and_set_motor),
        cmocka_unit_test(test_scene_load_reads_world_actions),
        cmocka_unit_test(test_scene_load_geometry_inline_and_from_obj),
        cmocka_unit_test(test_scene_load_file_fixture),
        cmocka_unit_test(test_scene_load_malformed_json_names_line_and_column),
        cmocka_unit_test(test_scene_load_rejects_empty_input),
        cmocka_unit_test(test_scene_load_rejects_overflowing_numbers),
        cmocka_unit_test(test_scene_load_rejects_bad_bytes),
        cmocka_unit_test(test_scene_load_missing_file),
        cmocka_unit_test(test_scene_load_rejects_deep_nesting),
        cmocka_unit_test(test_scene_load_rejects_too_many_values),
        cmocka_unit_test(test_scene_load_rejects_oversized_file),
        cmocka_unit_test(test_scene_load_survives_every_allocation_failure),
        cmocka_unit_test(test_scene_load_invalid_scene_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests_name("scene_load", tests, NULL, NULL);
}
