#!/usr/bin/env python3
"""Checks that the documentation can be followed and that the tree speaks only of the product:

    check_docs.py SOURCE_ROOT

Cases (cmocka-style output, as the other script tests print):
  docs_links_resolve       every relative Markdown link in README.md and docs/ names a file or
                           folder in the tree, and its #fragment a heading of that page;
  docs_named_files_exist   every file path a page names in backticks (`physics/src/physics.c`,
                           `cli.md`) exists, so no page points at a file the tree does not have;
  docs_index_lists_pages   the README's index links every page in docs/;
  tree_speaks_of_product   no text file in the tree (docs, code, comments, build files, scripts,
                           scenes) speaks of how the work was organised: issue numbers, sessions,
                           rounds of work, commit hashes, attempts."""
import os
import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from cases import Failure, check, run_cases  # noqa: E402

ROOT = Path(sys.argv[1]).resolve()
DOC_PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))

# Folders that are not part of the source tree: build and fuzz output, version control.
SKIP_DIRS = {".git", "__pycache__", "subprojects"}
SKIP_PREFIXES = ("build", "_build")
TEXT_SUFFIXES = {".c", ".h", ".cpp", ".hpp", ".md", ".py", ".json", ".build", ".txt", ".obj",
                 ".sh", ".yml", ".yaml", ".toml", ".cfg", ".clang-format", ".editorconfig"}
TEXT_NAMES = {"meson.build", "meson_options.txt", "setup", "run", "fuzz", ".gitignore",
              "LICENSE", ".clang-format", ".editorconfig"}

# Words about the process that built the tree, not about the product. Each is precise enough that
# product text never needs it (a benchmark's "rounds" and a queue's "dropped" replies are fine).
HISTORY = [
    (re.compile(r"\bissues?\s*#?\d+", re.I), "an issue number"),
    (re.compile(r"\bsessions?\b", re.I), "a work session"),
    (re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                r"last|previous|earlier|next) round\b", re.I), "a round of work"),
    (re.compile(r"\bcommits?\s+[0-9a-f]{7,40}\b", re.I), "a commit hash"),
    (re.compile(r"\bHEAD\s+[0-9a-f]{7,40}\b"), "a commit hash"),
    (re.compile(r"\b(was|were|we|been|also) tried\b|\btried (and|but|instead|first)\b", re.I),
     "an attempt"),
    (re.compile(r"\b(it|this|that|which|code|test|bench) used to\b|\bused to be\b", re.I),
     "what the code used to do"),
    (re.compile(r"\b(until|since|before|after) this change\b", re.I), "a change's history"),
    (re.compile(r"\bthe old (code|bench|build)\b", re.I), "an older version"),
    (re.compile(r"\bhelpers?' (builds|clones|branches)\b", re.I), "how the work was organised"),
    (re.compile(r"\bshared/spec\b"), "a file outside the tree"),
]
# In documentation any 7-40 digit hex word with a letter and a digit is a commit hash.
HASH = re.compile(r"(?<![0-9A-Za-z_.#/-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^(```|~~~)")
FILE_SUFFIX = re.compile(r"\.(md|c|h|cpp|py|json|obj|sh|build)$")


def source_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = Path(dirpath).relative_to(ROOT)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and
                       not (rel == Path(".") and d.startswith(SKIP_PREFIXES))]
        for name in filenames:
            p = Path(dirpath) / name
            if p.suffix in TEXT_SUFFIXES or name in TEXT_NAMES:
                yield p


ALL_FILES = [str(f.relative_to(ROOT)) for f in source_files()]


def prose_lines(page):
    """(line number, text) of a Markdown page outside fenced code blocks."""
    inside = False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    out = []
    for ch in text:
        if ch in " -":
            out.append("-" if ch == " " else ch)
        elif ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("L"):
            out.append(ch)
    return "".join(out)


def anchors(page):
    seen, result = {}, set()
    for _, line in prose_lines(page):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            result.add(base if k == 0 else f"{base}-{k}")
    return result


def rel(p):
    return p.relative_to(ROOT)


def test_links_resolve():
    bad = []
    for page in DOC_PAGES:
        for n, line in prose_lines(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # http:, https:, mailto:
                path, _, frag = target.partition("#")
                dest = page if path == "" else (page.parent / path).resolve()
                if not dest.exists():
                    bad.append(f"{rel(page)}:{n}: link to {target}: no such file")
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    bad.append(f"{rel(page)}:{n}: link to {target}: no heading '#{frag}' there")
    check(not bad, "\n".join(bad))


def named_file_exists(page, name):
    if any(c in name for c in "{}<>*$ ") or name.startswith(("build", "/", "-", "~", "share/")):
        return True  # a pattern, a placeholder, a build output, an option or an installed file
    if (ROOT / name).exists() or (page.parent / name).exists():
        return True
    # A partial path (`gyre/physics/physics.h`, `ode/ode_step.c`) or a bare name names a file whose path
    # ends with it.
    return any(f.endswith("/" + name) for f in ALL_FILES)


def test_named_files_exist():
    bad = []
    for page in DOC_PAGES:
        for n, line in prose_lines(page):
            for span in CODE_SPAN.findall(line):
                for word in span.split():
                    word = word.rstrip(",;:")
                    if not FILE_SUFFIX.search(word) or not ("/" in word or word.endswith(".md")):
                        continue
                    if not named_file_exists(page, word):
                        bad.append(f"{rel(page)}:{n}: names `{word}`, which is not in the tree")
    check(not bad, "\n".join(bad))


def test_index_lists_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(readme)}
    missing = [str(rel(p)) for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    check(not missing, "README.md does not link " + ", ".join(missing))


def test_tree_speaks_of_product():
    bad = []
    for f in source_files():
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        is_doc = f.suffix == ".md"
        if f.resolve() == Path(__file__).resolve():
            continue  # the patterns themselves
        for n, line in enumerate(text.splitlines(), 1):
            for pattern, what in HISTORY:
                m = pattern.search(line)
                if m:
                    bad.append(f"{rel(f)}:{n}: {what}: '{m.group(0)}'")
            if is_doc:
                m = HASH.search(line)
                if m:
                    bad.append(f"{rel(f)}:{n}: a commit hash: '{m.group(0)}'")
    check(not bad, "\n".join(bad))


sys.exit(run_cases([
    ("docs_links_resolve", test_links_resolve),
    ("docs_named_files_exist", test_named_files_exist),
    ("docs_index_lists_pages", test_index_lists_pages),
    ("tree_speaks_of_product", test_tree_speaks_of_product),
]))
