#!/usr/bin/env python3
"""Takes a screenshot of a page `gyre run --html` or `gyre soak --html` wrote, in headless
Chromium (the pictures in docs/viewing.md come from it):

    page_screenshot.py PAGE.html OUT.png [--frame N] [--pick ENTITY] [--size WxH]

--frame shows that frame of a run page and --pick plots that entity; the page's own check must
pass first (exit 1 otherwise, with what it said)."""
import argparse
import sys
import tempfile
import shutil
from pathlib import Path

import test_pages


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--frame", type=int)
    ap.add_argument("--pick")
    ap.add_argument("--size", default="1280x800")
    a = ap.parse_args()
    if test_pages.CHROMIUM is None:
        sys.exit("page_screenshot.py: chromium is not installed")
    test_pages.WIDTH, test_pages.HEIGHT = map(int, a.size.split("x"))
    test_pages.TMP = Path(tempfile.mkdtemp(prefix="gyre-shot-"))
    browser = test_pages.BROWSER = test_pages.Browser()
    script = []
    if a.pick:
        script.append(f"gyre.pick({a.pick!r})")
    if a.frame is not None:
        script.append(f"gyre.seek({a.frame})")
    try:
        status, _, problems, png = test_pages.open_page(a.page, " ; ".join(script) or None)
    finally:
        browser.close()
        shutil.rmtree(test_pages.TMP, ignore_errors=True)
    if status != "ok" or problems:
        sys.exit(f"page_screenshot.py: {a.page}: {status}; " + "; ".join(problems))
    Path(a.out).write_bytes(png)


if __name__ == "__main__":
    main()
