"""The syntax guard's cost: an edit with ``check_syntax: warn`` against the same edit with ``off``.

Goals (issue 29, docs/internals/code.md#syntax-guard): the guard adds at most 10 ms to a cold
exact edit of a 1,000-line Python file (Python's own compiler, no tree-sitter), at most 60 ms
to one of a 1,000-line file of another language (here JavaScript: the tree-sitter extension
and the grammar are loaded, then the file parsed), and at most 20% to an edit in a warm
``batch`` session.

How: two copies of the file in a temporary workspace (the current directory of every run), one
per command, reset before every pair
(untimed), so every timed run makes the same change: an exact edit of one unique line inside a
function (a class method for Python) at about 60% of the file. **Cold**: ``VENV/bin/python -I -m
zbtools apply_edit`` with the request on stdin, ``warn`` (the default) paired with ``off``, in
fresh processes, interleaved (the ratio and the added milliseconds are medians of the per-pair
figures). **Warm**: one ``zbtools batch`` process per run making ``--edits`` edits of that line
(there and back, so that each changes the file), ``warn`` against ``off``; the added share is
the median per-pair ratio minus one, the added time per edit the median per-pair difference
divided by the edits. Before timing, a breaking edit is sent once with ``warn`` and its result
must carry the ``syntax`` report (the guard is really on), each batch is run once untimed and
every edit in it must succeed, and every timed run must exit 0 (an edit that found nothing to
change would not).

The Python file is the standard-library module of this interpreter closest to 1,000 lines
(``--py-file`` another); the JavaScript file is generated (a fixed seed: functions, classes,
arrow functions, template strings; ``--js-file`` a real one).

Usage::

    .venv/bin/python benchmarks/syntax_guard.py [--runs 20] [--edits 200] [--py-file F]
        [--js-file F] [--venv DIR | --keep-venv DIR] [--export FILE]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Command,
    Paired,
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


def stdlib_file(lines: int = 1000) -> Path:
    """The standard-library module closest to ``lines`` lines (ties: by name)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found = sorted(stdlib.glob("*.py"),
                   key=lambda p: (abs(p.read_bytes().count(b"\n") - lines), p.name))
    return found[0]


def generated_js(lines: int = 1000, seed: int = 29) -> str:
    """A JavaScript module of about ``lines`` lines, of the shapes real code has."""
    rng = random.Random(seed)
    out = ["'use strict';", "", "const path = require('path');", ""]
    n = 0
    while len(out) < lines:
        n += 1
        shape = rng.randrange(3)
        if shape == 0:
            out += [f"function compute{n}(items, options = {{}}) {{",
                    "  const result = [];",
                    "  for (const item of items) {",
                    f"    if (item.value > {rng.randrange(100)}) {{",
                    f"      result.push(`${{item.name}}-{n}`);",
                    "    } else {",
                    "      result.push(path.join(options.base || '.', String(item.value)));",
                    "    }",
                    "  }",
                    "  return result;",
                    "}", ""]
        elif shape == 1:
            out += [f"class Widget{n} {{",
                    "  constructor(name, size) {",
                    "    this.name = name;",
                    f"    this.size = size * {rng.randrange(2, 9)};",
                    "  }",
                    "",
                    "  describe() {",
                    f"    return {{ name: this.name, size: this.size, kind: 'widget{n}' }};",
                    "  }",
                    "}", ""]
        else:
            out += [f"const helper{n} = (a, b) => {{",
                    f"  const total = a + b * {rng.randrange(1, 50)};",
                    "  return total > 10 ? total : -total;",
                    "};", ""]
    out += ["module.exports = { helper1: typeof helper1 === 'undefined' ? null : helper1 };", ""]
    return "\n".join(out)


def edit_line(text: str, language: str) -> str:
    """A unique, indented line inside a function (a method, for Python) at about 60%."""
    lines: list[str] = text.split("\n")
    start = int(len(lines) * 0.6)
    for i in [*range(start, len(lines)), *range(start)]:
        line = lines[i]
        if not line.startswith("        " if language == "python" else "    ") or \
                text.count(line + "\n") != 1 or len(line.strip()) < 8:
            continue
        stripped = line.strip()
        if language == "python" and (stripped.startswith(("#", '"', "'")) or
                                     stripped.endswith((":", ",", "(", "\\"))):
            continue
        if language == "javascript" and not stripped.endswith(";"):
            continue
        return str(line)
    raise SystemExit(f"error: no line to edit in the {language} file")


class Case:
    """One file and its edit: the line, and the line after the edit."""

    def __init__(self, name: str, path: str, text: str, language: str) -> None:
        self.name = name
        self.path = path
        self.text = text
        self.line = edit_line(text, language)
        suffix = "  # edited" if language == "python" else " // edited"
        self.edited = self.line + suffix
        # a break the guard reports: an unclosed bracket at the end of the line
        self.broken = self.line + " (" if language == "python" else self.line + " {"


def write_request(path: Path, args: dict[str, Any]) -> None:
    path.write_text(json.dumps(args), encoding="utf-8")


def sanity(python: Path, work: Path, case: Case, env: dict[str, str]) -> str:
    """A breaking edit with warn: the result must report it (the guard is on)."""
    (work / "warn" / case.path).write_text(case.text, encoding="utf-8")
    request = work / "sanity.json"
    write_request(request, {"path": f"warn/{case.path}", "old_text": case.line,
                            "new_text": case.broken})
    sample = check_ok(Command((str(python), "-I", "-m", "zbtools", "apply_edit"), request), env)
    result = json.loads(sample.stdout)["result"]
    if "syntax" not in result:
        raise SystemExit(f"error: the guard did not report a broken {case.name} edit: {result}")
    problem = result["syntax"][0]["introduced"][0]
    return str(f"line {problem['line']}: {problem['message']}")


def cold(python: Path, work: Path, case: Case, args: argparse.Namespace,
         env: dict[str, str]) -> Paired:
    requests = {}
    for mode in ("warn", "off"):
        requests[mode] = work / f"cold-{mode}.json"
        write_request(requests[mode], {"path": f"{mode}/{case.path}", "old_text": case.line,
                                       "new_text": case.edited, "check_syntax": mode})

    def reset(_: int) -> None:
        for mode in ("warn", "off"):
            (work / mode / case.path).write_text(case.text, encoding="utf-8")

    argv = (str(python), "-I", "-m", "zbtools", "apply_edit")
    target, ref = Command(argv, requests["warn"]), Command(argv, requests["off"])
    return measure_pairs(target, ref, args.runs, args.warmup, "loop", env, prepare=reset)


def warm(python: Path, work: Path, case: Case, args: argparse.Namespace,
         env: dict[str, str]) -> Paired:
    batches = {}
    for mode in ("warn", "off"):
        batches[mode] = work / f"warm-{mode}.jsonl"
        lines = []
        for i in range(args.edits):
            old, new = (case.line, case.edited) if i % 2 == 0 else (case.edited, case.line)
            lines.append(json.dumps({"id": i, "tool": "apply_edit", "args": {
                "path": f"{mode}/{case.path}", "old_text": old, "new_text": new,
                "check_syntax": mode}}))
        batches[mode].write_text("\n".join(lines) + "\n", encoding="utf-8")

    def reset(_: int) -> None:
        for mode in ("warn", "off"):
            (work / mode / case.path).write_text(case.text, encoding="utf-8")

    argv = (str(python), "-I", "-m", "zbtools", "batch")
    target, ref = Command(argv, batches["warn"]), Command(argv, batches["off"])
    for command in (target, ref):  # once untimed: every edit of the session succeeds
        reset(0)
        results = [json.loads(line) for line in check_ok(command, env).stdout.splitlines()]
        if len(results) != args.edits or not all(r["ok"] for r in results):
            raise SystemExit(f"error: a warm {case.name} edit failed: "
                             f"{next((r for r in results if not r['ok']), None)}")
    return measure_pairs(target, ref, args.runs, args.warmup, "loop", env, prepare=reset)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=20)
    parser.add_argument("--edits", type=int, default=200, help="edits per warm batch run")
    parser.add_argument("--py-file", type=Path, help="a Python file of about 1,000 lines")
    parser.add_argument("--js-file", type=Path, help="a JavaScript file of about 1,000 lines")
    args = parser.parse_args()
    py_path = args.py_file or stdlib_file()
    py_text = py_path.read_text(encoding="utf-8")
    js_text = args.js_file.read_text(encoding="utf-8") if args.js_file else generated_js()
    cases = [Case("python", "module.py", py_text, "python"),
             Case("javascript", "module.js", js_text, "javascript")]
    payload: dict[str, Any] = {}
    rows = []
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        describe_run(venv)
        print(f"# python file: {py_path} ({py_text.count(chr(10))} lines); javascript file: "
              f"{args.js_file or 'generated'} ({js_text.count(chr(10))} lines)")
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-syntax-")))
        env = {**bench_env(), "ZBTOOLS_STATE_DIR": str(work / "state")}
        stack.enter_context(working_directory(work))  # the workspace of every run
        for mode in ("warn", "off"):
            (work / mode).mkdir()
        for case in cases:
            print(f"# {case.name}: edits {case.line.strip()[:60]!r}; a broken edit reports "
                  f"{sanity(venv.python, work, case, env)}", flush=True)
            for kind, goal_ms, goal_ratio in (
                    ("cold", 10.0 if case.name == "python" else 60.0, None),
                    ("warm", None, 1.20)):
                pairs = (cold if kind == "cold" else warm)(venv.python, work, case, args, env)
                per = 1 if kind == "cold" else args.edits
                added = statistics.median(
                    (t - r) / per for t, r in zip(pairs.target_s, pairs.ref_s, strict=True))
                off = statistics.median(pairs.ref_s) / per
                on = statistics.median(pairs.target_s) / per
                low, high = pairs.ratio_iqr()
                value, goal = (ms(added), goal_ms) if kind == "cold" else (pairs.ratio,
                                                                          goal_ratio)
                goal_text = f"<= {goal_ms:.0f} ms" if goal_ms is not None else \
                    f"<= {goal_ratio:.2f}x"
                rows.append([f"{case.name} {kind}" + ("" if kind == "cold" else
                                                      f" (per edit, {args.edits} edits)"),
                             f"{ms(off):.2f}", f"{ms(on):.2f}", f"{ms(added):+.2f}",
                             f"{pairs.ratio:.3f} ({low:.3f}-{high:.3f})", goal_text,
                             verdict(value, goal)])
                payload[f"{case.name}-{kind}"] = pairs.to_json()
                print(f"#   {case.name} {kind}: done", flush=True)
    print()
    print(table(["case", "off ms", "warn ms", "added ms", "ratio (IQR)", "goal", "verdict"],
                rows))
    write_export(args.export, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
