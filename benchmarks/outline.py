"""``outline`` on a copy of the standard library: accuracy against ``ast``, and speed.

The corpus is a copy of the ``.py`` files of the standard library of the interpreter the venv
is made from (``sysconfig``'s ``stdlib`` path, ``site-packages`` and ``__pycache__`` left out;
with its ``test`` package where the interpreter ships one), made in a temporary directory and
left 2.5 s to settle, so that the index keeps what it parses
(docs/internals/code.md#repository-map).

* **Accuracy.** Every function, class and method Python's ``ast`` finds must appear in the
  outline of its file with the same name, kind and start line, and the outline must invent none
  (module constants are outline's only other kind here and are not compared). A method is a
  function whose nearest enclosing ``def``/``class`` is a class. Files ``ast`` cannot parse are
  excluded and counted. Every mismatch is listed. Goal: 100%.
* **One file** (the library's file closest to 2,000 lines): a cold ``outline`` of it within 4x
  ``python -I -c pass`` (paired, fresh processes); warm within 15 ms a call, measured in a
  ``batch`` process as (time of 1 + N calls - time of 1 call) / N.
* **The map of the whole copy**, paired with a script that runs ``ast.parse`` over every file
  in one process: cold and first ever (a fresh state directory each run) within 0.5x; in a new
  process from the persistent cache within 0.05x. Info: the reference run on every core. And in
  ``batch``, after one file changed (a new function appended), within 0.2 s a call.

Usage::

    .venv/bin/python benchmarks/outline.py [--runs 5] [--venv DIR | --keep-venv DIR]
        [--skip-accuracy] [--export FILE]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Command,
    Venv,
    add_timing_arguments,
    add_venv_arguments,
    bench_env,
    check_ok,
    describe_run,
    measure_pairs,
    ms,
    prepare_venv,
    table,
    verdict,
    working_directory,
    write_export,
)

AST_SCRIPT = '''
import ast, os, sys
n = 0
for d, dirs, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(d, name), "rb") as fh:
                source = fh.read()
            try:
                ast.parse(source)
            except (SyntaxError, ValueError):
                pass
            n += 1
print(n)
'''

AST_POOL_SCRIPT = '''
import ast, os, sys
from concurrent.futures import ProcessPoolExecutor

def parse(path):
    with open(path, "rb") as fh:
        source = fh.read()
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        pass

if __name__ == "__main__":
    paths = [os.path.join(d, n) for d, _, names in os.walk(sys.argv[1]) for n in names
             if n.endswith(".py")]
    with ProcessPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        list(pool.map(parse, paths, chunksize=16))
    print(len(paths))
'''

# In the venv under test: a batch session maps the copy, then maps it again after each of
# several edits (one function appended to one file); prints the times of those calls.
BATCH_DRIVER = '''
import json, os, subprocess, sys, time
root, rounds, edit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
child = subprocess.Popen([sys.executable, "-I", "-m", "zbtools", "batch"], cwd=root,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def ask():
    child.stdin.write(json.dumps({"tool": "outline", "args": {}}) + "\\n")
    child.stdin.flush()
    answer = json.loads(child.stdout.readline())
    assert answer["ok"], answer
    return answer["result"]
ask()
ask()
times = []
for i in range(rounds):
    with open(edit, "a") as fh:
        fh.write(f"\\n\\ndef added_{i}_{time.time_ns()}():\\n    return {i}\\n")
    start = time.perf_counter()
    result = ask()
    times.append(time.perf_counter() - start)
    assert result["files_parsed"] == 1, result["files_parsed"]
child.stdin.close()
child.wait()
print(json.dumps(times))
'''


def copy_stdlib(target: Path) -> Path:
    source = Path(sysconfig.get_paths()["stdlib"])

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n in ("site-packages", "__pycache__")
                or (not n.endswith(".py") and not os.path.isdir(os.path.join(folder, n)))]

    shutil.copytree(source, target, ignore=ignore, symlinks=True)
    return source


# -- accuracy --------------------------------------------------------------------------------


def ast_definitions(source: bytes) -> list[tuple[str, str, int]]:
    """(name, kind, line) of every function, class and method."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                found.append((child.name, "class", child.lineno))
                visit(child, "class")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((child.name, "method" if scope == "class" else "function",
                              child.lineno))
                visit(child, "function")
            else:
                visit(child, scope)

    visit(ast.parse(source), "module")
    return sorted(found)


def accuracy(root: Path) -> dict[str, object]:
    from collections import Counter

    from zbtools.core.code.languages import LANGUAGES
    from zbtools.core.code.tagpool import file_tags

    python = LANGUAGES["python"]
    files = sorted(root.rglob("*.py"))
    excluded: list[str] = []
    missing: list[str] = []
    invented: list[str] = []
    expected_total = matched = files_with_errors = 0
    for path in files:
        source = path.read_bytes()
        try:
            want = ast_definitions(source)
        except (SyntaxError, ValueError):
            excluded.append(str(path.relative_to(root)))
            continue
        tags = file_tags(python, source)
        files_with_errors += tags[3]
        got = sorted((d[1], d[0], d[5]) for d in tags[1] if d[0] != "constant")
        want_c, got_c = Counter(want), Counter(got)
        expected_total += len(want)
        matched += sum((want_c & got_c).values())
        rel = path.relative_to(root)
        missing += [f"{rel}:{line}: {kind} {name}" for name, kind, line in
                    sorted((want_c - got_c).elements())]
        invented += [f"{rel}:{line}: {kind} {name}" for name, kind, line in
                     sorted((got_c - want_c).elements())]
    return {"files": len(files), "excluded": excluded, "expected": expected_total,
            "matched": matched, "missing": missing, "invented": invented,
            "files_with_parse_errors": files_with_errors}


# -- speed -----------------------------------------------------------------------------------


def closest_to(root: Path, lines: int) -> Path:
    best = min(root.glob("*.py"), key=lambda p: abs(p.read_bytes().count(b"\n") - lines))
    return best


def batch_per_call(venv: Venv, root: Path, request: dict[str, object], calls: int,
                   runs: int, env: dict[str, str]) -> list[float]:
    """Seconds per warm call: (batch of 1 + calls requests - batch of 1) / calls."""
    line = json.dumps({"tool": "outline", "args": request}) + "\n"
    out: list[float] = []
    with tempfile.TemporaryDirectory(prefix="zbbench-outline-req-") as tmp:
        one, many = Path(tmp) / "one.jsonl", Path(tmp) / "many.jsonl"
        one.write_text(line)
        many.write_text(line * (calls + 1))
        argv = (str(venv.python), "-I", "-m", "zbtools", "batch")
        with working_directory(root):
            for _ in range(runs):
                t1 = check_ok(Command(argv, one), env).seconds
                tn = check_ok(Command(argv, many), env).seconds
                out.append((tn - t1) / calls)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=5)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    env = bench_env()
    export: dict[str, object] = {}
    with prepare_venv(args) as venv, tempfile.TemporaryDirectory(prefix="zbbench-outline-") as t:
        describe_run(venv)
        tmp = Path(t)
        root = tmp / "stdlib"
        source = copy_stdlib(root)
        py_files = list(root.rglob("*.py"))
        size = sum(p.stat().st_size for p in py_files)
        print(f"# corpus: a copy of {source} ({len(py_files)} .py files, {size / 1e6:.1f} MB) "
              f"in {root}")
        time.sleep(2.5)  # the copies settle (the index keeps only settled files)
        state = tmp / "state"
        env = {**env, "ZBTOOLS_STATE_DIR": str(state)}

        if not args.skip_accuracy:
            found = accuracy(root)
            export["accuracy"] = found
            expected, matched = int(found["expected"]), int(found["matched"])  # type: ignore[call-overload]
            missing, invented = found["missing"], found["invented"]
            assert isinstance(missing, list) and isinstance(invented, list)
            excluded = found["excluded"]
            assert isinstance(excluded, list)
            print(f"\n## accuracy against ast: {matched} of {expected} definitions "
                  f"({100 * matched / max(expected, 1):.3f}%), {len(invented)} invented; "
                  f"{found['files']} files, {len(excluded)} excluded (ast cannot parse them), "
                  f"{found['files_with_parse_errors']} with tree-sitter parse errors")
            for what, items in (("missing", missing), ("invented", invented),
                                ("excluded", excluded)):
                for item in items:
                    print(f"  {what}: {item}")

        rows: list[list[str]] = []
        base = Command((str(venv.python), "-I", "-c", "pass"))
        big = closest_to(root, 2000)
        nlines = big.read_bytes().count(b"\n")
        zb = (str(venv.python), "-I", "-m", "zbtools")
        with working_directory(root):
            cold_file = measure_pairs(Command((*zb, "outline", "--path", big.name)), base,
                                      args.runs, args.warmup, args.engine, env)
        rows.append([f"outline {big.name} ({nlines} lines), cold", "python -I -c pass",
                     f"{ms(statistics.median(cold_file.target_s)):.1f}",
                     f"{ms(statistics.median(cold_file.ref_s)):.1f}",
                     f"{cold_file.ratio:.2f}x", "4x", verdict(cold_file.ratio, 4.0)])
        warm = batch_per_call(venv, root, {"path": big.name}, 100, args.runs, env)
        warm_ms = ms(statistics.median(warm))
        rows.append([f"outline {big.name}, warm (batch)", "-", f"{warm_ms:.1f}", "-", "-",
                     "15 ms", verdict(warm_ms, 15.0)])

        ast_ref = tmp / "ast_all.py"
        ast_ref.write_text(AST_SCRIPT)
        ast_pool = tmp / "ast_pool.py"
        ast_pool.write_text(AST_POOL_SCRIPT)
        ref = Command((str(venv.python), "-I", str(ast_ref), str(root)))
        mapping = Command((*zb, "outline"))

        def fresh_state(_: int) -> None:
            shutil.rmtree(state, ignore_errors=True)

        with working_directory(root):
            cold_map = measure_pairs(mapping, ref, args.runs, 0, args.engine, env,
                                     prepare=fresh_state)
            check_ok(mapping, env)  # the cache is written
            warm_map = measure_pairs(mapping, ref, args.runs, 1, args.engine, env)
            pool = measure_pairs(Command((str(venv.python), "-I", str(ast_pool), str(root))),
                                 ref, args.runs, 0, args.engine, env)
        for label, paired, goal in (("map of the copy, cold, first ever", cold_map, 0.5),
                                    ("map of the copy, new process, cache", warm_map, 0.05),
                                    ("(info) ast.parse on every core", pool, None)):
            rows.append([label, "ast.parse, every file, one process",
                         f"{ms(statistics.median(paired.target_s)):.0f}",
                         f"{ms(statistics.median(paired.ref_s)):.0f}",
                         f"{paired.ratio:.3f}x", f"{goal}x" if goal else "-",
                         verdict(paired.ratio, goal)])
        edit = root / "difflib.py"
        driver = tmp / "batch_driver.py"
        driver.write_text(BATCH_DRIVER)
        done = subprocess.run([str(venv.python), "-I", str(driver), str(root),
                               str(max(3, args.runs)), str(edit)], env=env, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-2000:])
            return 2
        changed = json.loads(done.stdout)
        changed_ms = ms(statistics.median(changed))
        rows.append(["map in batch, after one file changed", "-", f"{changed_ms:.0f}", "-", "-",
                     "200 ms", verdict(changed_ms, 200.0)])
        load = os.getloadavg()
        print(f"\n## speed (median of {args.runs} paired runs; load average now "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs)")
        print(table(["case", "reference", "ms", "ref ms", "ratio", "goal", ""],
                    rows, left=2))
        export.update({"cold_file": cold_file.to_json(), "warm_file_s": warm,
                       "cold_map": cold_map.to_json(), "warm_map": warm_map.to_json(),
                       "ast_pool": pool.to_json(), "changed_map_s": changed})
    write_export(args.export, export)
    return 0


if __name__ == "__main__":
    sys.exit(main())
