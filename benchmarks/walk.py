"""Glob, list and grep per call against ripgrep, on a copy of the standard library.

Each case is one cold process per call, as an agent harness runs zbtools, timed side by side
with ripgrep in the same run (interleaved pairs, ratio = median of the per-pair ratios):

* ``find_files_glob '**/*.py'`` (text output, then JSON) vs ``rg --files -g '*.py' .``;
* ``list_directory --max-depth 100`` (JSON, then text) vs ``rg --files .``;
* ``grep_search`` (text output, the default engine) vs ``rg -n PAT .``, a literal and a regex;
* the three rows with a goal again, each call handed to a running ``zbtools serve``
  (``served:``), whose output is first checked against the call's own;
* floor rows, vs ``rg --files .``: ``python -I -c pass`` (the interpreter's start-up), a bare
  ``os.scandir`` walk in a fresh interpreter (the issue's floor for glob), and the same walk
  with an ``lstat`` of every file (the floor for a listing that gives sizes).

The corpus is ``search.py``'s ``real`` one (a ``git init``'ed copy of the stdlib and of the
site-packages of the venv running this script, with a few ``.gitignore`` files, one with
negations: about 7,000 files visible). Results are checked before timing: the glob's and the
listing's file sets must equal rg's (``rg --files`` filtered on ``.py`` for the glob: ``-g``
re-includes ignored files) and grep's ``path:line:text`` lines must equal ``rg -n``'s, else
the case is reported as MISMATCH and not timed; the ``skipped`` counts are printed.

Goals (the issue): glob and list at most 3x rg per call, grep at most 2x.

Usage::

    .venv/bin/python benchmarks/walk.py [--dir DIR] [--runs 15] [--warmup 2]
        [--venv DIR | --keep-venv DIR] [--rss-runs 1] [--profile]

Exit status 0 whatever the verdicts (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Command,
    add_timing_arguments,
    add_venv_arguments,
    bench_env,
    check_ok,
    describe_run,
    prepare_venv,
    print_profile,
    rg_and_git,
    spawn,
    table,
    working_directory,
    write_export,
)
from search import (
    LIMIT,
    Runner,
    _strip,
    compare_grep,
    compare_sets,
    ensure_real,
    parse_grep,
    rg_files,
    zb_json,
)

GOAL_FILES = 3.0
GOAL_GREP = 2.0
GREPS = (("literal", "def get_"), ("regex", r"class \w+\(.*Error\)"))
# the floor: a walk in a fresh interpreter, sorted as zbtools sorts, with or without a stat
FLOOR = """
import os, sys
stat = sys.argv[1] == "stat"
def walk(fd):
    with os.scandir(fd) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        if e.is_dir(follow_symlinks=False):
            sub = os.open(e.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            walk(sub)
            os.close(sub)
        elif stat:
            e.stat(follow_symlinks=False)
walk(os.open(".", os.O_RDONLY | os.O_DIRECTORY))
"""


def glob_cases(run: Runner, root: Path, all_files: list[bytes]) -> None:
    common = ("find_files_glob", "--pattern", "**/*.py", "--path", ".", "--limit", str(LIMIT),
              "--exclude-dirs", "[]")
    rg_py = Command((run.rg, "--files", "-g", "*.py", "."))
    with working_directory(root):
        expected = {f for f in all_files if f.endswith(b".py")}
        res = zb_json(run.zb(*common), run.env)
        matches = res["matches"]
        assert isinstance(matches, list)
        got = {os.fsencode(m["path"]) for m in matches}
        text = {_strip(p) for p in check_ok(run.zb(*common, "--format", "text"),
                                            run.env).stdout.splitlines() if not p.startswith(b"[")}
        print(f"# glob: rg --files | grep '[.]py$' {len(expected):,} files, zbtools JSON "
              f"{len(got):,}, text {len(text):,}; skipped {res.get('skipped')}", flush=True)
        for fmt, found in (("text", text), ("json", got)):
            label = f"glob '**/*.py' --format {fmt}"
            problems = compare_sets(found, expected, False)
            if problems:
                run.mismatch(label, GOAL_FILES, problems)
                continue
            argv = (*common, "--format", "text") if fmt == "text" else common
            run.timed(label, run.zb(*argv), rg_py, GOAL_FILES if fmt == "text" else None)


def list_cases(run: Runner, root: Path, all_files: list[bytes]) -> None:
    common = ("list_directory", "--path", ".", "--max-depth", "100", "--limit", str(LIMIT),
              "--exclude-dirs", "[]")
    rg_all = Command((run.rg, "--files", "."))
    with working_directory(root):
        res = zb_json(run.zb(*common), run.env)
        entries = res["entries"]
        assert isinstance(entries, list)
        got = {os.fsencode(e["path"]) for e in entries if e["type"] != "directory"}
        print(f"# list: rg --files {len(all_files):,} files, zbtools {len(got):,} files in "
              f"{len(entries):,} entries; skipped {res.get('skipped')}", flush=True)
        problems = compare_sets(got, set(all_files), bool(res.get("truncated")))
        if problems:
            run.mismatch("list_directory --format json", GOAL_FILES, problems)
            return
        run.timed("list_directory --format json", run.zb(*common), rg_all, GOAL_FILES)
        run.timed("list_directory --format text", run.zb(*common, "--format", "text"), rg_all,
                  None)


def grep_cases(run: Runner, root: Path) -> None:
    for kind, pattern in GREPS:
        label = f"grep {kind} '{pattern}' --format text"
        common = ("grep_search", "--pattern", pattern, "--path", ".", "--head-limit",
                  str(LIMIT), "--timeout", "120", "--exclude-dirs", "[]")
        zb = run.zb(*common, "--format", "text")
        rg = Command((run.rg, "-n", pattern, "."))
        with working_directory(root):
            info = zb_json(run.zb(*common, "--output-mode", "count"), run.env)
            zb_out = parse_grep(check_ok(zb, run.env).stdout)
            rg_sample = spawn(rg, run.env)
            if rg_sample.exit_code not in (0, 1):
                raise SystemExit(f"error: rg failed: {rg_sample.stderr[:500]!r}")
            rg_out = parse_grep(rg_sample.stdout)
            capped = len(zb_out.lines) >= LIMIT
            print(f"# {label}: rg {len(rg_out.lines):,} lines, zbtools {len(zb_out.lines):,}; "
                  f"engine {info.get('engine')}, files_searched {info.get('files_searched')}, "
                  f"skipped {info.get('skipped')}", flush=True)
            problems = compare_grep(zb_out, rg_out, capped)
            if problems:
                run.mismatch(label, GOAL_GREP, problems)
            else:
                run.timed(label, zb, rg, GOAL_GREP, "capped" if capped else "")


def served_cases(run: Runner, root: Path) -> None:
    """The goal rows again, each call handed to a running ``zbtools serve`` (its warm session);
    each served output is first compared with the same call's own, and the server's status
    printed, to show that every timed call was served."""
    glob = ("find_files_glob", "--pattern", "**/*.py", "--path", ".", "--limit", str(LIMIT),
            "--exclude-dirs", "[]", "--format", "text")
    listing = ("list_directory", "--path", ".", "--max-depth", "100", "--limit", str(LIMIT),
               "--exclude-dirs", "[]")
    kind, pattern = GREPS[0]
    grep = ("grep_search", "--pattern", pattern, "--path", ".", "--head-limit", str(LIMIT),
            "--timeout", "120", "--exclude-dirs", "[]", "--format", "text")
    cases = [("glob '**/*.py' --format text", glob, ("--files", "-g", "*.py", "."), GOAL_FILES),
             ("list_directory --format json", listing, ("--files", "."), GOAL_FILES),
             (f"grep {kind} '{pattern}' --format text", grep, ("-n", pattern, "."), GOAL_GREP)]
    alone_env = run.env
    with tempfile.TemporaryDirectory(prefix="zbbench-serve-") as home, \
            working_directory(root):
        os.chmod(home, 0o700)
        env = dict(alone_env, ZBTOOLS_SERVER=os.path.join(home, "serve.sock"))
        server = subprocess.Popen((str(run.venv.python), "-I", "-m", "zbtools", "serve",
                                   "--idle", "900"), env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE)
        try:
            assert server.stdout is not None
            print(f"# served: {server.stdout.readline().decode().strip()}", flush=True)
            run.env = env
            for label, argv, rg_args, goal in cases:
                # (byte for byte: none of these outputs names the search's engine)
                served = check_ok(run.zb(*argv), env).stdout
                if served != check_ok(run.zb(*argv), alone_env).stdout:
                    run.mismatch(f"served: {label}", goal, ["the served output differs"])
                    continue
                run.timed(f"served: {label}", run.zb(*argv), Command((run.rg, *rg_args)),
                          goal)
            status = check_ok(run.zb("serve", "--status"), env).stdout.decode().strip()
            print(f"# served: {status}", flush=True)
        finally:
            run.env = alone_env
            server.terminate()
            server.wait(30)


def floor_cases(run: Runner, root: Path) -> None:
    rg_all = Command((run.rg, "--files", "."))
    python = str(run.venv.python)
    with working_directory(root):
        run.timed("floor: python -I -c pass", Command((python, "-I", "-c", "pass")), rg_all,
                  None, rss=False)
        for how in ("walk", "stat"):
            label = ("floor: python scandir walk" if how == "walk"
                     else "floor: python scandir walk + lstat of each file")
            run.timed(label, Command((python, "-I", "-c", FLOOR, how)), rg_all, None, rss=False)


def profile(run: Runner, root: Path) -> None:
    """cProfile of one glob call (text output): zbtools' functions by own time."""
    with tempfile.NamedTemporaryFile(suffix=".prof") as prof, working_directory(root):
        argv = [str(run.venv.python), "-I", "-m", "cProfile", "-o", prof.name, "-m", "zbtools",
                "find_files_glob", "--pattern", "**/*.py", "--path", ".", "--format", "text",
                "--limit", str(LIMIT), "--exclude-dirs", "[]"]
        print(f"\n# cProfile: {' '.join(argv[6:])}")
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=run.env)
        print_profile(run.venv.python, prof.name, "tottime")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=15)
    parser.set_defaults(warmup=2)
    parser.add_argument("--dir", type=Path, metavar="DIR",
                        help="keep the corpus in DIR/real and reuse it (default: a temporary "
                        "directory, deleted at exit)")
    parser.add_argument("--rss-runs", type=int, default=1,
                        help="separate runs that measure peak RSS (max reported; default 1)")
    parser.add_argument("--script", action="store_true",
                        help="run the console script VENV/bin/zbtools, not python -I -m zbtools")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of one glob call")
    args = parser.parse_args(argv)
    env = bench_env()
    rg = rg_and_git()
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        if args.dir is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-walk-")))
        else:
            work = args.dir.resolve()
            work.mkdir(parents=True, exist_ok=True)
        root = work / "real"
        done = ensure_real(root)
        env["ZBTOOLS_STATE_DIR"] = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="zbbench-state-"))
        env["ZBTOOLS_MAX_LINES"] = str(10**8)  # print everything, as rg does
        env["ZBTOOLS_MAX_BYTES"] = str(10**10)
        env["ZBTOOLS_SERVER"] = "off"  # each call in its own process, but in served_cases
        describe_run(venv)
        version = subprocess.run([rg, "--version"], capture_output=True, text=True,
                                 check=False).stdout.splitlines()[0]
        print(f"# {version} ({rg}); {args.runs} measured pairs per case after {args.warmup} "
              "warm-up pairs, interleaved; ratio = median of per-pair ratios")
        files = rg_files(rg, root, env)
        print(f"# corpus: {root} ({done}); rg --files | wc -l = {len(files):,}", flush=True)
        run = Runner(args, venv, env, rg)
        glob_cases(run, root, files)
        list_cases(run, root, files)
        grep_cases(run, root)
        served_cases(run, root)
        floor_cases(run, root)
        print()
        print(table(["case", "zbtools ms", "ref ms", "ratio", "goal", "verdict",
                     "zbtools RSS MB", "ref RSS MB", "ratio p25-p75", "via"], run.rows))
        print("\nref = rg (rg --files -g '*.py' . for the glob, rg --files . for the listing "
              "and the floor rows, rg -n PAT . for grep). Goals: glob and list <= 3x, grep "
              "<= 2x; rows without a goal are for information.")
        if run.mismatches:
            print("\nmismatches (not timed):")
            print("\n".join(f"  {m}" for m in run.mismatches))
        print("\ncommands (run in the corpus directory):")
        print("\n".join(run.commands))
        if args.profile:
            profile(run, root)
        write_export(args.export, {"benchmark": "walk", "zbtools": venv.version,
                                   "files": len(files), "runs": args.runs,
                                   "warmup": args.warmup, "cases": run.results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
