"""Generate the deterministic synthetic tree of the search benchmarks
(benchmarks/README.md#searchpy-grep-glob-and-list-against-ripgrep).

At ``--scale 1.0``: 200,000 files in about 2,050 directories. 20 packages ``pkgNN/`` hold
50 modules ``modNN/`` each; a module holds 50 ``.py``, 30 ``.md`` and 20 ``.json`` files
(tracked) and 50 ``.log`` files, ignored by the top-level ``.gitignore`` (``*.log``). Each
package also has ``node_modules/`` (ignored as a directory) with 50 libraries of 50 files.
Every fifth package has a nested ``.gitignore`` with ``*.tmp`` and a negation ``!keep.log``:
its modules' ``keep.log`` is visible again (and searched) while their ``scratch.tmp`` is
ignored. The top directory gets ``git init`` (no commit): ripgrep honours ``.gitignore`` only
inside a git repository.

``--scale`` multiplies the modules per package and the libraries per ``node_modules`` (0.1:
5 and 5, about 20,000 files). The contents are small Python-like, Markdown and JSON texts from
a seeded ``random.Random``: the same bytes on every run. About 18% of the ``.py`` files have a
``def get_`` line and 5% a ``class XxxError(...)`` line, so that at scale 1.0 the grep
patterns of ``search.py`` give fewer than 10,000 matching lines (zbtools' ``head_limit`` cap)
and the whole result can be compared with ripgrep's.

Usage::

    .venv/bin/python benchmarks/gen_tree.py DIR [--scale 0.1] [--seed 1] [--force]

DIR must not exist or be empty (``--force`` deletes an existing DIR first). A file
``.zbbench-tree`` records the parameters; ``search.py`` reuses a tree whose record matches.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGES = 20
MODULES = 50
LIBS = 50
LIB_FILES = 50
PY, MD, JSON, LOG = 50, 30, 20, 50
STAMP = ".zbbench-tree"
WORDS = ("alpha", "beta", "gamma", "delta", "value", "item", "record", "config", "user",
         "token", "cache", "index", "buffer", "parser", "stream", "handler", "result")


def counts(scale: float) -> tuple[int, int]:
    """Modules per package and libraries per node_modules at ``scale``."""
    return max(1, round(MODULES * scale)), max(1, round(LIBS * scale))


def _py(rng: random.Random, n: int) -> str:
    w = rng.choice(WORDS)
    lines = [f'"""Module {n}: {w} helpers."""', "", "import os", ""]
    if rng.random() < 0.05:
        lines += [f"class {w.title()}{n}Error({rng.choice(['ValueError', 'RuntimeError'])}):",
                  "    pass", ""]
    for k in range(rng.randint(2, 4)):
        name = f"{rng.choice(WORDS)}_{k}"
        prefix = "get_" if (k == 0 and rng.random() < 0.18) else "make_"
        lines += [f"def {prefix}{name}(x):", f"    return os.path.join(str(x), '{w}')", ""]
    return "\n".join(lines)


def _md(rng: random.Random, n: int) -> str:
    return f"# Note {n}\n\n" + " ".join(rng.choice(WORDS) for _ in range(30)) + "\n"


def _json(rng: random.Random, n: int) -> str:
    return json.dumps({"id": n, "name": rng.choice(WORDS), "tags": rng.sample(WORDS, 3)}) + "\n"


def _log(rng: random.Random, n: int) -> str:
    return "".join(f"2026-01-01 INFO def get_{rng.choice(WORDS)} event {n}.{i}\n"
                   for i in range(3))


def generate(root: Path, scale: float, seed: int = 1) -> dict[str, int]:
    """Write the tree into ``root`` (created) and ``git init`` it; returns file counts."""
    rng = random.Random(seed)
    modules, libs = counts(scale)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("*.log\nnode_modules/\n", encoding="utf-8")
    made = {"files": 1, "dirs": 0, "gitignores": 1}
    n = 0
    for p in range(PACKAGES):
        pkg = root / f"pkg{p:02d}"
        pkg.mkdir()
        made["dirs"] += 1
        nested = p % 5 == 0
        if nested:
            (pkg / ".gitignore").write_text("*.tmp\n!keep.log\n", encoding="utf-8")
            made["files"] += 1
            made["gitignores"] += 1
        for m in range(modules):
            mod = pkg / f"mod{m:02d}"
            mod.mkdir()
            made["dirs"] += 1
            for ext, count, make in ((".py", PY, _py), (".md", MD, _md),
                                     (".json", JSON, _json), (".log", LOG, _log)):
                for i in range(count):
                    n += 1
                    (mod / f"f{i:03d}{ext}").write_text(make(rng, n), encoding="utf-8")
                    made["files"] += 1
            if nested:
                (mod / "keep.log").write_text("def get_kept_log_line()\n", encoding="utf-8")
                (mod / "scratch.tmp").write_text("def get_scratch()\n", encoding="utf-8")
                made["files"] += 2
        nm = pkg / "node_modules"
        for lib in range(libs):
            d = nm / f"lib{lib:02d}"
            d.mkdir(parents=True)
            made["dirs"] += 1
            for i in range(LIB_FILES):
                n += 1
                (d / f"index{i:02d}.js").write_text(
                    f"function get_{rng.choice(WORDS)}() {{ return {n}; }}\n", encoding="utf-8")
                made["files"] += 1
        made["dirs"] += 1  # node_modules itself
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / STAMP).write_text(json.dumps({"scale": scale, "seed": seed, **made}) + "\n",
                              encoding="utf-8")
    return made


def ensure_tree(root: Path, scale: float, seed: int = 1) -> str:
    """Reuse ``root`` when its stamp matches, else (re)generate it; returns what was done."""
    stamp = root / STAMP
    if stamp.is_file():
        data = json.loads(stamp.read_text(encoding="utf-8"))
        if data.get("scale") == scale and data.get("seed") == seed:
            return f"reused ({data['files']:,} files, {data['dirs']:,} directories)"
    if root.exists():
        shutil.rmtree(root)
    made = generate(root, scale, seed)
    return f"generated ({made['files']:,} files, {made['dirs']:,} directories)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--scale", type=float, default=0.1,
                        help="1.0 = 200,000 files (default 0.1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="delete DIR first if it exists")
    args = parser.parse_args(argv)
    if args.dir.exists() and any(args.dir.iterdir()):
        if not args.force:
            print(f"error: {args.dir} exists and is not empty (--force deletes it)",
                  file=sys.stderr)
            return 2
        shutil.rmtree(args.dir)
    made = generate(args.dir, args.scale, args.seed)
    print(f"{args.dir}: {made['files']:,} files, {made['dirs']:,} directories, "
          f"{made['gitignores']} .gitignore files, git init done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
