#!/usr/bin/env python3
"""The JSON Schema of scene files (docs/scene.schema.json) against the loader:

    test_schema.py SCHEMA GYRE SCENES_DIR DATA_DIR

It is a valid draft-07 schema; every sample scene, and every scene file of the tests that
`gyre validate` accepts, validates against it; and scenes with mistakes an editor should flag
(unknown keys, wrong types, a shape without its size, keys of another shape, bad names of enums,
a script entry missing what its action needs) fail it and fail `gyre validate` too. Needs the
jsonschema module (Debian: python3-jsonschema)."""
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from cases import check, run_cases

SCHEMA, GYRE, SCENES, DATA = (Path(a) for a in sys.argv[1:5])
TMP = Path(tempfile.mkdtemp(prefix="gyre-schema-"))

try:
    import jsonschema
except ImportError:
    print("test_schema.py needs the jsonschema module: apt-get install python3-jsonschema")
    sys.exit(1)


def validator():
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_errors(doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator().iter_errors(doc)]


def gyre_validate(*files):
    p = subprocess.run([str(GYRE), "validate", "--format", "json", *map(str, files)],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, json.loads(p.stdout)


def schema_is_valid():
    validator()


def sample_scenes_validate():
    files = sorted(SCENES.glob("*.json"))
    check(len(files) >= 10, f"{len(files)} sample scenes")
    for f in files:
        errors = schema_errors(json.loads(f.read_text()))
        check(not errors, f"{f.name}: {errors}")


def scenes_gyre_accepts_validate():
    # Every test scene the loader accepts, the schema accepts too (it must never flag a good
    # scene); those that do not parse as JSON are the loader's business alone.
    files = []
    for f in sorted(DATA.glob("*.json")):
        try:
            json.loads(f.read_text())
            files.append(f)
        except ValueError:
            pass
    _, doc = gyre_validate(*files)
    accepted = [Path(x["file"]) for x in doc["files"] if x["valid"]]
    check(len(accepted) >= 5, f"only {len(accepted)} valid test scenes")
    for f in accepted:
        errors = schema_errors(json.loads(f.read_text()))
        check(not errors, f"{f.name}: gyre validate accepts it, the schema does not: {errors}")


BASE = {
    "format": "gyre.scene", "version": 1, "x_tool": {"anything": True},
    "physics": {"step_hz": 120},
    "materials": {"ice": {"friction": 0.05, "friction_combine": "min"}},
    "entities": [
        {"name": "ground", "components": {"physics": {"body_type": "Static", "shape": "Plane"}}},
        {"name": "ball", "transform": {"position": [0, 2, 0]},
         "components": {"physics": {"shape": "Sphere", "radius": 0.5, "material": "ice"}}},
        {"name": "crate", "transform": {"position": [2, 1, 0]},
         "components": {"physics": {"shape": "Box", "box_size": [1, 1, 1],
                                    "colliders": [{"shape": "Capsule", "radius": 0.2,
                                                   "height": 1}]}}},
        {"name": "hero", "components": {"physics": {"is_character_controller": True}}},
    ],
    "joints": [{"type": "Hinge", "a": "crate", "anchor": [2, 2, 0], "limits": [-30, 30]}],
    "script": [
        {"at": 0.5, "do": "apply_impulse", "entity": "ball", "value": [1, 0, 0]},
        {"at": 1, "do": "expect", "entity": "ball", "position": [None, 0.5, None]},
        {"at": 1, "do": "expect_event", "kind": "enter", "a": "ball", "b": "ground"},
    ],
}


def mutate(path, value):
    """BASE with the value at `path` (keys and indices) set, or removed when value is `...`."""
    doc = copy.deepcopy(BASE)
    node = doc
    for k in path[:-1]:
        node = node[k]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


PHYS = ["entities", 1, "components", "physics"]
BAD = [
    ("unknown top-level key", mutate(["materal"], {})),
    ("missing format", mutate(["format"], ...)),
    ("version 2", mutate(["version"], 2)),
    ("step_hz below 10", mutate(["physics", "step_hz"], 5)),
    ("misspelt collider key", mutate(PHYS + ["fricton"], 0.5)),
    ("negative mass", mutate(PHYS + ["mass"], -2)),
    ("unknown body type", mutate(PHYS + ["body_type"], "Dynamc")),
    ("vector of two", mutate(PHYS + ["linear_velocity"], [1, 2])),
    ("Sphere without radius", mutate(PHYS + ["radius"], ...)),
    ("Sphere with a box size", mutate(PHYS + ["box_size"], [1, 1, 1])),
    ("Box without box_size", mutate(["entities", 2, "components", "physics", "box_size"], ...)),
    ("Plane with a local pose", mutate(["entities", 0, "components", "physics", "local_position"],
                                       [0, 1, 0])),
    ("both rotations", mutate(["entities", 1, "transform"], {"rotation": [0, 0, 0, 1],
                                                             "rotation_euler": [0, 90, 0]})),
    ("character with colliders", mutate(["entities", 3, "components", "physics", "colliders"],
                                        [{"shape": "Sphere", "radius": 1}])),
    ("entity without a name", mutate(["entities", 1, "name"], ...)),
    ("unknown combine mode", mutate(["materials", "ice", "friction_combine"], "mean")),
    ("unknown joint type", mutate(["joints", 0, "type"], "Hingey")),
    ("unknown action", mutate(["script", 0, "do"], "push")),
    ("impulse without value", mutate(["script", 0, "value"], ...)),
    ("key of another action", mutate(["script", 0, "duration"], 1)),
    ("expect checking nothing", mutate(["script", 1, "position"], ...)),
    ("unknown event kind", mutate(["script", 2, "kind"], "touch")),
]


def bad_scenes_fail():
    check(not schema_errors(BASE), f"the base scene must be valid: {schema_errors(BASE)}")
    base = TMP / "base.json"
    base.write_text(json.dumps(BASE))
    code, doc = gyre_validate(base)
    check(code == 0, f"gyre validate must accept the base scene: {doc}")
    for what, scene in BAD:
        errors = schema_errors(scene)
        check(errors, f"{what}: the schema accepts it")
        f = TMP / "bad.json"
        f.write_text(json.dumps(scene))
        code, doc = gyre_validate(f)
        check(code == 2, f"{what}: the schema refuses it ({errors[0]}) but gyre validate "
                         f"accepts it")


def main():
    status = run_cases([
        ("test_schema_is_a_valid_draft7_schema", schema_is_valid),
        ("test_schema_accepts_every_sample_scene", sample_scenes_validate),
        ("test_schema_accepts_every_scene_gyre_validate_accepts", scenes_gyre_accepts_validate),
        ("test_schema_refuses_scenes_with_mistakes_as_gyre_validate_does", bad_scenes_fail),
    ])
    for p in TMP.iterdir():
        p.unlink()
    TMP.rmdir()
    return status


if __name__ == "__main__":
    sys.exit(main())
