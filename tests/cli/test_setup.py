#!/usr/bin/env python3
"""`bash .ci/setup main` on a throw-away tree that holds a copy of the script and a tiny meson
project standing in for Gyre (engine/gyre): a compile error must reach the terminal with the
compiler's message and exit non-zero; a good build must stay quiet and run the program.

    test_setup.py SETUP_SCRIPT"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cases import check, run_cases

SETUP = Path(sys.argv[1])

MESON = "project('fake', 'c')\nsubdir('engine')\n"
ENGINE = "executable('gyre', 'gyre.c')\n"
GOOD = '#include <stdio.h>\nint main(void) { puts("fake gyre ran"); return 0; }\n'
BAD = "int main(void) { return misspelt_name_in_fake_gyre; }\n"


def setup_in_tree(source):
    root = Path(tempfile.mkdtemp(prefix="gyre-setup-"))
    try:
        (root / ".ci").mkdir()
        shutil.copy(SETUP, root / ".ci" / "setup")
        (root / "engine").mkdir()
        (root / "meson.build").write_text(MESON)
        (root / "engine" / "meson.build").write_text(ENGINE)
        (root / "engine" / "gyre.c").write_text(source)
        # A dpkg-query on PATH that reports every package installed: the test is about the
        # build's output, not apt.
        (root / "bin").mkdir()
        dpkg_query = root / "bin" / "dpkg-query"
        dpkg_query.write_text("#!/bin/sh\nprintf 'install ok installed'\n")
        dpkg_query.chmod(0o755)
        env = dict(os.environ, PATH=f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        p = subprocess.run(["bash", str(root / ".ci" / "setup"), "main"], capture_output=True,
                           text=True, timeout=240, env=env)
        return p.returncode, p.stdout, p.stderr
    finally:
        shutil.rmtree(root)


def compile_error_is_shown():
    code, out, err = setup_in_tree(BAD)
    check(code != 0, f"exit {code}")
    check("misspelt_name_in_fake_gyre" in err and "error" in err,
          f"the compiler's error is not shown:\nstdout:\n{out}\nstderr:\n{err}")
    check("setup.log" in err, f"no pointer to the full log:\n{err}")


def success_is_quiet():
    code, out, err = setup_in_tree(GOOD)
    check(code == 0, f"exit {code}: {err}")
    check(out == "fake gyre ran\n", f"only the program's output on stdout: {out!r}")
    check(err == "", f"nothing on stderr: {err!r}")


if __name__ == "__main__":
    sys.exit(run_cases([("test_setup_build_failure_prints_the_compiler_error",
                         compile_error_is_shown),
                        ("test_setup_build_success_is_quiet", success_is_quiet)]))
