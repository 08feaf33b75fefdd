"""Start-up of a cold zbtools call against ``python -I -c pass`` on the same interpreter.

Goals: a cold ``read_file`` JSON call costs at most 2.5x ``python -I -c pass``
(docs/internals/performance.md#start-up-budget; docs/internals/performance.md#g1, aims lower: 2.0x,
stretch 1.6x), and the installed ``zbtools`` command at most 1.4x (issue 14). ``--help`` may load
Typer and rich: at most 15x (docs/internals/performance.md#g1b).
``batch`` (issue 7): 1000 small ``read_file`` calls through one ``zbtools batch`` process at
least 1000 calls per second, start-up included; the per-call overhead after start-up is reported
too (the same batch minus an empty one).

The zbtools under test is a wheel built from the repo and installed, not editable, into a fresh
venv (see _common.py), timed as ``VENV/bin/python -I -m zbtools`` and as the console script
``VENV/bin/zbtools`` that the venv's pip wrote. That wrapper depends on the installer: pip before
25.2 (the one ``python -m venv`` bundles with Python 3.11 to 3.13) writes one that imports ``re``
first (about 4.5 ms here); pip 25.2 and later, pipx and uv write one that does not. The header
says which kind the venv has, and the other kind is timed too, from a copy of pip 25.2's template
written next to the fixture (same interpreter, same installed zbtools). Info rows give the floors:
``python -c 'import re, sys'`` (what the old wrapper costs before zbtools runs) and the entry
point called directly by ``python -I -c`` (what no wrapper can beat).
Every case is paired with ``VENV/bin/python -I -c pass``; the ratio is the median of the per-pair
ratios. After the table, ``-X importtime`` shows where the JSON call's import time goes.

Usage::

    .venv/bin/python benchmarks/startup.py [--runs 30] [--warmup 3] [--engine auto|hyperfine|loop]
        [--venv DIR | --keep-venv DIR] [--export FILE] [--no-importtime]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Command,
    Paired,
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

GOAL_HOT = 2.5  # docs/internals/performance.md#start-up-budget
GOAL_INSTALLED = 1.4  # the installed zbtools command (issue 14)
GOAL_HELP = 15.0  # docs/internals/performance.md#g1b
GOAL_BATCH = 1000.0  # calls per second through `zbtools batch` (issue 7)
BATCH_CALLS = 1000
TOP = "(run time)"  # imported by __main__'s code or a function body, not by another import
HEAVY = ("typer", "click", "rich", "pydantic", "pydantic_core", "mcp", "pathspec", "wcmatch",
         "regex", "platformdirs", "charset_normalizer", "markdown_it", "pygments")
NOTABLE = ("typing", "dataclasses", "inspect", "hashlib", "_hashlib", "enum", "re", "json",
           "pathlib", "subprocess", "selectors", "select", "tempfile", "shutil", "fnmatch", "ast",
           "tokenize", "textwrap", "string", "functools", "collections", "contextlib", "datetime",
           "locale", "unicodedata", "threading", "weakref", "struct", "base64", "random",
           "uuid", "signal", "errno", "stat", "copy", "dis", "importlib.metadata",
           "importlib.util", "codecs", "difflib", "argparse", "gettext", "platform", "ctypes")


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    cmd: Command
    goal: float | None
    expect: str = "json"  # what stdout must hold: "json" (a read_file result), "text", "none"


def make_fixture(directory: Path) -> Path:
    lines = [f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(1, 41)]
    (directory / "small.txt").write_text("".join(lines), encoding="utf-8")
    request = directory / "request.json"
    request.write_text(json.dumps({"path": "small.txt"}) + "\n", encoding="utf-8")
    return request


# What pip 25.2 and later write for `zbtools = "zbtools.__main__:main"` (pipx adds -E to the
# shebang; uv's differs only in how it strips a Windows suffix). pip before 25.2 writes the same
# with `import re` and `sys.argv[0] = re.sub(r'(-script\.pyw|\.exe)?$', '', sys.argv[0])`.
CURRENT_WRAPPER = """#!{python}
import sys
from zbtools.__main__ import main
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit(main())
"""


def wrapper_kind(script: Path) -> str:
    """``"imports re"`` (pip before 25.2) or ``"no re"`` (pip 25.2+, pipx, uv)."""
    head = script.read_bytes()[:2000]
    return "imports re" if b"\nimport re\n" in head else "no re"


def write_current_wrapper(venv: Venv, directory: Path) -> Path:
    """pip 25.2's console script for this venv's interpreter, next to the fixture."""
    path = directory / "zbtools-current-wrapper"
    path.write_text(CURRENT_WRAPPER.format(python=venv.python), encoding="utf-8")
    path.chmod(0o755)
    return path


def cases(venv: Venv, request: Path, current: Path | None) -> list[Case]:
    py, script = str(venv.python), str(venv.script)
    module = (py, "-I", "-m", "zbtools")
    flags = ("read_file", "--path", "small.txt")
    mine = f"console script ({wrapper_kind(venv.script)}, this venv's pip)"
    rows = [
        Case("read_file JSON stdin, python -I -m zbtools",
             Command((*module, "read_file"), stdin=request), GOAL_HOT),
        Case(f"read_file JSON stdin, {mine}",
             Command((script, "read_file"), stdin=request), GOAL_INSTALLED),
        Case("read_file --path (flags), python -I -m zbtools",
             Command((*module, *flags)), GOAL_HOT),
        Case(f"read_file --path (flags), {mine}", Command((script, *flags)), GOAL_INSTALLED),
    ]
    if current is not None:
        rows += [
            Case("read_file JSON stdin, console script as pip >= 25.2, pipx, uv write it",
                 Command((str(current), "read_file"), stdin=request), GOAL_INSTALLED),
            Case("read_file --path (flags), console script as pip >= 25.2 writes it",
                 Command((str(current), *flags)), GOAL_INSTALLED),
        ]
    return [
        *rows,
        Case("--help, console script", Command((script, "--help")), GOAL_HELP,
             expect="text"),
        Case("info: flags call, stdin an idle pipe",
             Command((script, *flags), idle_stdin=True), None),
        Case("info: floor of a wrapper that imports re: python -c 'import re, sys'",
             Command((py, "-c", "import re, sys")), None, expect="none"),
        Case("info: floor of any wrapper: the entry point by python -I -c",
             Command((py, "-I", "-c", "from zbtools.__main__ import main; main()", *flags)), None),
    ]


def make_batch(directory: Path, calls: int) -> tuple[Path, Path]:
    """A JSON Lines file of ``calls`` small read_file requests, and an empty one."""
    full = directory / "batch.jsonl"
    full.write_text("".join(json.dumps({"id": i, "tool": "read_file",
                                        "args": {"path": "small.txt"}}) + "\n"
                            for i in range(calls)), encoding="utf-8")
    empty = directory / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    return full, empty


def measure_batch(venv: Venv, full: Path, empty: Path, runs: int, env: dict[str, str]
                  ) -> dict[str, float]:
    """Median wall time of the full and the empty batch; calls/s and per-call overhead."""
    import time

    argv = [str(venv.python), "-I", "-m", "zbtools", "batch"]

    def once(path: Path) -> float:
        with path.open("rb") as fh:
            start = time.perf_counter()
            done = subprocess.run(argv, stdin=fh, capture_output=True, env=env, check=False)
            elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"error: batch failed: {done.stderr[-500:]!r}")
        return elapsed

    with full.open("rb") as fh:
        sample = subprocess.run(argv, stdin=fh, capture_output=True, env=env, check=True)
    lines = sample.stdout.decode().splitlines()
    if len(lines) != BATCH_CALLS or not all(json.loads(x)["ok"] for x in lines):
        raise SystemExit("error: the batch did not return one ok line per request")
    full_s = statistics.median(once(full) for _ in range(runs))
    empty_s = statistics.median(once(empty) for _ in range(runs))
    return {"calls": BATCH_CALLS, "total_ms": ms(full_s), "startup_ms": ms(empty_s),
            "calls_per_s": BATCH_CALLS / full_s,
            "per_call_us": (full_s - empty_s) / BATCH_CALLS * 1e6}


def verify(case: Case, env: dict[str, str]) -> None:
    sample = check_ok(case.cmd, env)
    if case.expect == "json":
        envelope = json.loads(sample.stdout)
        if not envelope.get("ok") or not envelope["result"]["content"].startswith("line 1:"):
            raise SystemExit(f"error: unexpected result of {case.cmd.display()}: "
                             f"{sample.stdout[:300]!r}")
    elif case.expect == "text" and not sample.stdout.strip():
        raise SystemExit(f"error: no output from {case.cmd.display()}")


# --------------------------------------------------------------------------------------------
# -X importtime


@dataclasses.dataclass
class Imports:
    self_us: dict[str, list[int]]
    cum_us: dict[str, list[int]]
    parent: dict[str, str]


def importtime(argv: list[str], stdin: Path | None, runs: int, env: dict[str, str]) -> Imports:
    """Per-module import times of ``argv`` (which has ``-X importtime``, or runs a script)."""
    found = Imports({}, {}, {})
    env = {**env, "PYTHONPROFILEIMPORTTIME": "1"}  # for the console script (no -X there)
    for _ in range(runs):
        with (stdin or Path("/dev/null")).open("rb") as fh:
            proc = subprocess.run(argv, stdin=fh, capture_output=True, env=env, check=False)
        rows: list[tuple[int, str, int, int]] = []
        for line in proc.stderr.decode(errors="replace").splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            parts = line[len("import time:"):].split("|")
            self_us, cum_us, raw = parts[0].strip(), parts[1].strip(), parts[2]
            depth = (len(raw) - len(raw.lstrip(" "))) // 2
            rows.append((depth, raw.strip(), int(self_us), int(cum_us)))
        # children are printed before their parent: a module's parent is the next row above it
        for i, (depth, name, self_t, cum_t) in enumerate(rows):
            found.self_us.setdefault(name, []).append(self_t)
            found.cum_us.setdefault(name, []).append(cum_t)
            for later in rows[i + 1:]:
                if later[0] < depth:
                    found.parent.setdefault(name, later[1])
                    break
    return found


def _med(values: list[int]) -> float:
    return statistics.median(values) / 1000.0


def report_imports(venv: Venv, request: Path, runs: int, env: dict[str, str]) -> dict[str, object]:
    py = str(venv.python)
    base = importtime([py, "-I", "-X", "importtime", "-c", "pass"], None, runs, env)
    json_call = importtime([py, "-I", "-X", "importtime", "-m", "zbtools", "read_file"],
                           request, runs, env)
    flags_call = importtime([py, "-I", "-X", "importtime", "-m", "zbtools", "read_file",
                             "--path", "small.txt"], None, runs, env)
    script_call = importtime([str(venv.script), "read_file"], request, runs, env)
    help_call = importtime([py, "-I", "-X", "importtime", "-m", "zbtools", "--help"], None,
                           runs, env)
    print(f"\n## -X importtime, median of {runs} runs "
          f"(importtime inflates times; use it to rank, not to add up)\n")

    def extra(imp: Imports) -> list[str]:
        return [m for m in imp.self_us if m not in base.self_us]

    rows = []
    for label, imp in (("python -I -c pass", base), ("read_file JSON stdin", json_call),
                       ("read_file --path (flags)", flags_call),
                       ("console script read_file JSON stdin (no -I)", script_call),
                       ("--help", help_call)):
        mods = extra(imp) if imp is not base else list(imp.self_us)
        heavy = sorted({m.split(".")[0] for m in mods} & set(HEAVY))
        rows.append([label, str(len(imp.self_us)), str(len(mods) if imp is not base else 0),
                     f"{sum(_med(imp.self_us[m]) for m in mods):.1f}",
                     ", ".join(heavy) or "none"])
    print(table(["call (python -I -X importtime ...)", "modules", "beyond -c pass",
                 "their self ms*", "heavy third-party"], rows))
    print("* summed self times of the modules beyond `-c pass` (for -c pass: of all its modules)")

    mods = extra(json_call)
    own = sorted((m for m in mods if m.split(".")[0] == "zbtools"),
                 key=lambda m: -_med(json_call.cum_us[m]))
    print("\nread_file JSON call: zbtools' own modules by cumulative import time (top 10)\n")
    print(table(["module", "self ms", "cumulative ms", "imported by"],
                [[m, f"{_med(json_call.self_us[m]):.2f}", f"{_med(json_call.cum_us[m]):.2f}",
                  json_call.parent.get(m, TOP)] for m in own[:10]]))
    others = sorted((m for m in mods if m.split(".")[0] != "zbtools"),
                    key=lambda m: -_med(json_call.self_us[m]))
    print("\nread_file JSON call: other modules beyond `-c pass`, by self time (top 15)\n")
    print(table(["module", "self ms", "cumulative ms", "imported by"],
                [[m, f"{_med(json_call.self_us[m]):.2f}", f"{_med(json_call.cum_us[m]):.2f}",
                  json_call.parent.get(m, TOP)] for m in others[:15]]))
    notable = [m for m in NOTABLE if m in json_call.self_us and m not in base.self_us]
    print("\nread_file JSON call: notable stdlib modules present: "
          + (", ".join(f"{m} ({_med(json_call.cum_us[m]):.2f} ms cum., via "
                       f"{json_call.parent.get(m, TOP)})" for m in notable) or "none"))
    return {"json_call_modules": {m: {"self_ms": _med(json_call.self_us[m]),
                                      "cum_ms": _med(json_call.cum_us[m]),
                                      "parent": json_call.parent.get(m)} for m in mods}}


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=30)
    parser.add_argument("--no-importtime", action="store_true",
                        help="skip the -X importtime breakdown")
    parser.add_argument("--importtime-runs", type=int, default=7,
                        help="runs of each -X importtime call (median; default 7)")
    args = parser.parse_args(argv)
    env = bench_env()
    with prepare_venv(args) as venv, tempfile.TemporaryDirectory(prefix="zbbench-") as tmp:
        work = Path(tmp)
        request = make_fixture(work)
        describe_run(venv)
        ref = Command((str(venv.python), "-I", "-c", "pass"))
        rows: list[list[str]] = []
        results: dict[str, object] = {}
        with working_directory(work):
            check_ok(ref, env)
            kind = wrapper_kind(venv.script)
            print(f"# console script {venv.script}: written by {venv.pip}, {kind}")
            current = write_current_wrapper(venv, work) if kind == "imports re" else None
            all_cases = cases(venv, request, current)
            for case in all_cases:
                verify(case, env)
            print(f"# reference: {ref.display()}")
            print(f"# {args.runs} measured pairs per case after {args.warmup} warm-up pairs, "
                  "interleaved (A B, B A, ...); ratio = median of per-pair ratios\n", flush=True)
            for case in all_cases:
                paired: Paired = measure_pairs(case.cmd, ref, args.runs, args.warmup,
                                               args.engine, env)
                lo, hi = paired.ratio_iqr()
                rows.append([case.name, f"{ms(statistics.median(paired.target_s)):.1f}",
                             f"{ms(statistics.median(paired.ref_s)):.1f}", f"{paired.ratio:.2f}",
                             "-" if case.goal is None else f"{case.goal:.1f}",
                             verdict(paired.ratio, case.goal), f"{lo:.2f}-{hi:.2f}",
                             paired.engine])
                results[case.name] = {"command": case.cmd.display(), "goal": case.goal,
                                      **paired.to_json()}
            print(table(["case", "median ms", "ref ms", "ratio", "goal", "verdict",
                         "ratio p25-p75", "via"], rows))
            full, empty = make_batch(work, BATCH_CALLS)
            batch = measure_batch(venv, full, empty, max(3, args.runs // 3), env)
            results["batch"] = {"goal_calls_per_s": GOAL_BATCH, **batch}
            print(f"\n## batch: {BATCH_CALLS} small read_file calls through one process\n")
            print(table(["calls", "total ms", "start-up ms (empty batch)", "calls/s", "goal",
                         "verdict", "per call after start-up"],
                        [[str(BATCH_CALLS), f"{batch['total_ms']:.1f}",
                          f"{batch['startup_ms']:.1f}", f"{batch['calls_per_s']:.0f}",
                          f">= {GOAL_BATCH:.0f}",
                          "ok" if batch["calls_per_s"] >= GOAL_BATCH else "MISSED",
                          f"{batch['per_call_us']:.0f} us"]]))
            print("\ncommands:")
            for case in all_cases:
                print(f"  {case.name}: {case.cmd.display()}")
            print(f"  reference: {ref.display()}")
            imports: dict[str, object] = {}
            if not args.no_importtime:
                imports = report_imports(venv, request, args.importtime_runs, env)
        write_export(args.export, {"benchmark": "startup", "zbtools": venv.version,
                                   "runs": args.runs, "warmup": args.warmup, "cases": results,
                                   **imports})
    return 0


if __name__ == "__main__":
    sys.exit(main())
