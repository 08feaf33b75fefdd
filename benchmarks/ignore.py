"""Gitignore matching cost per path: zbtools' bucketed matcher vs pathspec
(docs/design.md#packages-you-might-expect-pathspec).

Paths: every file and directory of a generated 200,000-file tree (``gen_tree.py`` layout, built
in memory only: no disk needed). Rules: ``small`` is the synthetic tree's own two patterns; ``big``
is 183 lines shaped like the ignore files of large projects (plain names, ``*.ext``, anchored
paths, ``**`` and bracket patterns, negations). Both matchers decide every path; the script
checks that the decisions agree (paths below a directory a rule matches are left out: the walk
prunes those, pathspec would match them through the directory) and prints microseconds per path,
best of ``--runs``. Goal: at most 2 us per path whatever the number of patterns.

    .venv/bin/python benchmarks/ignore.py [--runs 5] [--paths 200000]

Exit status 0 always (a report), 2 when it cannot run (pathspec missing).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SMALL = ["*.log", "node_modules/"]
BIG_NAMES = [".DS_Store", "Thumbs.db", "desktop.ini", ".idea", ".vscode", "__pycache__",
             ".mypy_cache", ".pytest_cache", ".tox", ".nox", ".coverage", "htmlcov", "build",
             "dist", "wheels", "sdist", "eggs", ".eggs", "parts", "var", "develop-eggs",
             "downloads", "lib64", "MANIFEST", "pip-log.txt", "pip-delete-this-directory.txt",
             ".cache", "nosetests.xml", "coverage.xml", ".hypothesis", "instance",
             ".webassets-cache", ".scrapy", "target", "profile_default", "ipython_config.py",
             ".pdm.toml", "celerybeat-schedule", ".env", ".venv", "env", "venv", "ENV",
             "env.bak", "venv.bak", ".spyderproject", ".spyproject", ".ropeproject", "site",
             ".pyre", ".pytype", "cython_debug", "node_modules", "bower_components",
             ".grunt", ".lock-wscript", "jspm_packages", "web_modules", ".npm", ".eslintcache",
             ".stylelintcache", ".rpt2_cache", ".rts2_cache_cjs", ".node_repl_history",
             ".yarn-integrity", ".parcel-cache", ".next", "out", ".nuxt", ".vuepress",
             ".serverless", ".fusebox", ".dynamodb", ".tern-port", ".vscode-test", ".pnp.js",
             "CMakeCache.txt", "CMakeFiles", "CMakeScripts", "Testing", "Makefile.cmake",
             "cmake_install.cmake", "install_manifest.txt", "compile_commands.json",
             "CTestTestfile.cmake", "_deps", "Cargo.lock", "tags", "TAGS", ".gdb_history"]
BIG_SUFFIXES = ["*.py[cod]", "*$py.class", "*.so", "*.egg", "*.manifest", "*.spec", "*.mo",
                "*.pot", "*.log", "*.sage.py", "*.cover", "*.py,cover", "*.o", "*.a", "*.obj",
                "*.lo", "*.la", "*.dll", "*.dylib", "*.exe", "*.out", "*.app", "*.i*86",
                "*.x86_64", "*.hex", "*.dSYM/", "*.su", "*.idb", "*.pdb", "*.mod", "*.cmd",
                "*.tmp", "*.bak", "*.swp", "*.swo", "*~", "*.orig", "*.rej", "*.tsbuildinfo",
                "*.tgz", "*.lcov", "*.pid", "*.seed", "*.pid.lock", "*.gcno", "*.gcda",
                "*.gcov", "*.d", "*.ko", "*.elf", "*.ilk", "*.map", "*.exp", "*.gch", "*.pch",
                "*.lib", "*.dwo", "*.class", "*.jar", "*.war", "*.nar", "*.ear", "*.zip",
                "*.tar.gz", "*.rar", "*.iml", "*.ipr", "*.iws"]
BIG_PATHS = ["/doc/_build/", "/site", "docs/_build/", "/target/", "/build/", "/.pybuilder/",
             "target/debug/", "**/*.rs.bk", "/numpy/core/include/numpy/__multiarray_api.h",
             "/numpy/core/src/multiarray/_multiarray_tests.c", "numpy/random/*.c",
             "numpy/core/src/*/*.h", "logs/**", "**/generated/**", "tools/**/out/",
             "benchmarks/results/*", "!benchmarks/results/README.md", "pkg*/tmp[0-9]/",
             "/.venv*", "/coverage/", "src/**/*.gen.*", "!keep.log", "!important.tmp"]


def big_rules() -> list[str]:
    rules = BIG_NAMES + BIG_SUFFIXES + BIG_PATHS
    rules += [f"/vendor{i}/" for i in range(183 - len(rules))]
    return rules[:183]


def paths(count: int) -> list[tuple[str, bool]]:
    """(path, is_dir) in the shape of ``gen_tree.py``'s tree: packages, nested dirs, files."""
    out: list[tuple[str, bool]] = []
    exts = [".py", ".txt", ".md", ".json", ".log", ".tmp", ".c", ".h", ".rs", ".o"]
    i = 0
    while len(out) < count:
        pkg = f"pkg{i // 2000:02d}"
        sub = f"{pkg}/mod{(i // 50) % 40:02d}"
        if i % 50 == 0:
            out.append((sub, True))
        out.append((f"{sub}/file{i:06d}{exts[i % len(exts)]}", False))
        i += 1
    return out[:count]


def time_it(fn: Callable[[list[tuple[str, bool]]], object], items: list[tuple[str, bool]],
            runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(items)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--paths", type=int, default=200_000)
    args = parser.parse_args()
    try:
        import pathspec
    except ImportError:
        print("pathspec is not installed (pip install pathspec)", file=sys.stderr)
        return 2
    from zbtools.core.search.ignore import IgnoreRules

    items = paths(args.paths)
    print(f"# {len(items):,} paths; best of {args.runs} runs; microseconds per path")
    print(f"{'rules':<12}{'patterns':>9}{'zbtools us':>12}{'pathspec us':>13}{'speed-up':>10}"
          f"{'ignored':>9}  agree  goal")
    for label, rules in (("small", SMALL), ("big", big_rules())):
        ours = IgnoreRules.parse("\n".join(rules))
        spec = pathspec.GitIgnoreSpec.from_lines(rules)

        def run_ours(batch: list[tuple[str, bool]], ours: IgnoreRules = ours) -> list[object]:
            return [ours.decide(p, p[p.rfind("/") + 1:], d) for p, d in batch]

        def run_spec(batch: list[tuple[str, bool]], spec: object = spec) -> list[object]:
            return [spec.check_file(p + "/" if d else p).include  # type: ignore[attr-defined]
                    for p, d in batch]

        t_ours = time_it(run_ours, items, args.runs)
        t_spec = time_it(run_spec, items, max(1, args.runs // 2))
        mine, theirs = run_ours(items), run_spec(items)
        pruned = {p for (p, d), v in zip(items, mine, strict=True) if d and v}
        disagree = [(p, a, b) for (p, d), a, b in zip(items, mine, theirs, strict=True)
                    if a is not b and p.rsplit("/", 1)[0] not in pruned]
        ignored = sum(1 for v in mine if v)
        verdict = "ok" if t_ours <= 2.0 else "MISS"
        print(f"{label:<12}{len(rules):>9}{t_ours:>12.2f}{t_spec:>13.2f}{t_spec / t_ours:>9.1f}x"
              f"{ignored:>9}  {'yes' if not disagree else 'NO'}    {verdict} (<= 2 us)")
        for p, a, b in disagree[:5]:
            print(f"#   disagree: {p}: zbtools {a}, pathspec {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
