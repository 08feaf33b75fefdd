"""The Python API (``zbtools.Toolbox``) against a ``zbtools batch`` process and a cold ``rg``.

Goals (issue: no start-up at all for Python harnesses):

* ``read_file``: 1,000 small ``read_file`` calls through ``Toolbox.call`` in-process reach at
  least 2x the calls per second of the same 1,000 requests through one ``zbtools batch``
  process (whole process, start-up included, as ``startup.py`` counts a batch). The batch's rate
  after its start-up (the full batch minus an empty one) is shown beside it, for information.
* ``grep``: a repeated ``grep_search`` through the API (the second and later calls of one
  ``Toolbox``, with one file changed between calls through the same Toolbox, as ``warm.py``
  does for ``batch``) at most 0.5x a whole cold ``rg -n PAT .`` process on the same corpus (the
  ``real`` corpus of ``search.py``: a copy of the stdlib and site-packages).

How: the API runs in a driver process of the venv under test (``VENV/bin/python -I``), which
times its own calls with ``time.perf_counter`` and answers this script over a pipe; the batch
and rg run as whole processes timed from here. Runs are paired and interleaved (batch then API,
then API then batch, ...) and the ratio is the median of the per-pair ratios; for grep each API
call is paired with an rg run made right before it. The import of ``zbtools`` and the making of
the Toolbox are reported apart: a harness pays them once.

Correctness first: every read must succeed with the file's first line, and the first grep's
``path:line`` pairs must equal rg's (a mismatch is reported instead of a time).

Usage::

    .venv/bin/python benchmarks/api.py [--runs 9] [--calls 8] [--dir DIR] [--export FILE]
        [--venv DIR | --keep-venv DIR]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    add_venv_arguments,
    bench_env,
    describe_run,
    prepare_venv,
    rg_and_git,
    table,
    verdict,
    write_export,
)
from search import ensure_real
from startup import BATCH_CALLS, make_batch, make_fixture
from warm import CHANGED, rg_time, same_results

GOAL_READ = 2.0  # API calls/s over batch calls/s: at least
GOAL_GREP = 0.5  # a warm API grep over a cold rg process: at most

# The driver: one Toolbox per workspace, commands on stdin, one JSON answer line each.
DRIVER = r"""
import json, sys, time
t0 = time.perf_counter()
from zbtools import Toolbox
t1 = time.perf_counter()
boxes = {}
for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd["op"]
    if op == "open":
        t = time.perf_counter()
        boxes[cmd["root"]] = Toolbox(cmd["root"])
        out = {"import_s": t1 - t0, "open_s": time.perf_counter() - t}
    elif op == "reads":
        tb = boxes[cmd["root"]]
        call = tb.call
        args = {"path": cmd["path"]}
        n = cmd["n"]
        start = time.perf_counter()
        for _ in range(n):
            envelope = call("read_file", args)
        elapsed = time.perf_counter() - start
        out = {"s": elapsed, "ok": envelope["ok"], "first": envelope["result"]["content"][:7]}
    elif op == "call":
        tb = boxes[cmd["root"]]
        start = time.perf_counter()
        envelope = tb.call(cmd["tool"], cmd["args"])
        out = {"s": time.perf_counter() - start, "envelope": envelope if cmd["full"] else
               {"ok": envelope["ok"], "error": envelope.get("error")}}
    else:
        for tb in boxes.values():
            tb.close()
        break
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""

GREPS: list[tuple[str, dict[str, Any], list[str], bool]] = [
    # (case, grep_search arguments, rg's, one file changed between calls)
    ("grep 'def get_' (unchanged tree)", {"pattern": "def get_"}, ["-n", "def get_"], False),
    ("grep 'def get_'", {"pattern": "def get_"}, ["-n", "def get_"], True),
    ("grep -i 'def get_'", {"pattern": "def get_", "case_insensitive": True},
     ["-n", "-i", "def get_"], True),
    ("grep no literal", {"pattern": r"^\s+\w+\(\w+\)$"}, ["-n", r"^\s+\w+\(\w+\)$"], True),
]


class Driver:
    def __init__(self, python: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([str(python), "-I", "-c", DRIVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cmd).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("error: the API driver died (see its stderr above)")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"op": "quit"}\n')
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def batch_seconds(python: Path, requests: Path, cwd: Path, env: dict[str, str]) -> float:
    argv = [str(python), "-I", "-m", "zbtools", "batch"]
    with requests.open("rb") as fh:
        start = time.perf_counter()
        done = subprocess.run(argv, stdin=fh, capture_output=True, cwd=cwd, env=env,
                              check=False)
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"error: batch failed: {done.stderr[-500:]!r}")
    return elapsed


def reads(driver: Driver, python: Path, work: Path, runs: int, env: dict[str, str]
          ) -> tuple[list[list[str]], dict[str, Any]]:
    full, empty = make_batch(work, BATCH_CALLS)
    sample = subprocess.run([str(python), "-I", "-m", "zbtools", "batch"], stdin=full.open("rb"),
                            capture_output=True, cwd=work, env=env, check=True)
    lines = sample.stdout.decode().splitlines()
    if len(lines) != BATCH_CALLS or not all(json.loads(x)["ok"] for x in lines):
        raise SystemExit("error: the batch did not return one ok line per request")
    opened = driver.ask(op="open", root=str(work))
    api_s: list[float] = []
    batch_s: list[float] = []
    empty_s: list[float] = []
    for i in range(runs + 1):  # the first pair warms the page cache and the driver: not counted
        if i % 2:
            answer = driver.ask(op="reads", root=str(work), path="small.txt", n=BATCH_CALLS)
            whole = batch_seconds(python, full, work, env)
        else:
            whole = batch_seconds(python, full, work, env)
            answer = driver.ask(op="reads", root=str(work), path="small.txt", n=BATCH_CALLS)
        if not answer["ok"] or answer["first"] != "line 1:":
            raise SystemExit(f"error: unexpected read through the API: {answer}")
        if i:
            api_s.append(answer["s"])
            batch_s.append(whole)
            empty_s.append(batch_seconds(python, empty, work, env))
    ratios = [b / a for a, b in zip(api_s, batch_s, strict=True)]
    steady = [(b - e) / a for a, b, e in zip(api_s, batch_s, empty_s, strict=True)]
    api = BATCH_CALLS / statistics.median(api_s)
    batch = BATCH_CALLS / statistics.median(batch_s)
    after = BATCH_CALLS / (statistics.median(batch_s) - statistics.median(empty_s))
    ratio = statistics.median(ratios)
    rows = [
        [f"{BATCH_CALLS} read_file calls", f"{api:,.0f}", f"{batch:,.0f}", f"{ratio:.2f}",
         f">= {GOAL_READ:.1f}", "ok" if ratio >= GOAL_READ else "MISS"],
        ["  (batch after its start-up)", f"{api:,.0f}", f"{after:,.0f}",
         f"{statistics.median(steady):.2f}", "-", "info"],
    ]
    summary = {"api_calls_per_s": api, "batch_calls_per_s": batch,
               "batch_calls_per_s_after_startup": after, "ratio": ratio,
               "ratio_after_startup": statistics.median(steady), "api_s": api_s,
               "batch_s": batch_s, "empty_batch_s": empty_s,
               "import_ms": opened["import_s"] * 1000, "open_ms": opened["open_s"] * 1000}
    return rows, summary


def greps(driver: Driver, rg: str, root: Path, calls: int
          ) -> tuple[list[list[str]], list[str], dict[str, Any]]:
    driver.ask(op="open", root=str(root))
    rows: list[list[str]] = []
    notes: list[str] = []
    raw: dict[str, Any] = {}
    for name, grep_args, rg_args, change in GREPS:
        args = {**grep_args, "head_limit": 10_000, "exclude_dirs": []}
        times: list[float] = []
        refs: list[float] = []
        ratios: list[float] = []
        problem = None
        first = 0.0
        for i in range(calls):
            ref, rg_out = rg_time(rg, rg_args, root)
            answer = driver.ask(op="call", root=str(root), tool="grep_search", args=args,
                                full=i == 0)
            if i == 0:
                problem = same_results(answer["envelope"], rg_out, "grep_search")
                first = answer["s"]
            else:
                if not answer["envelope"]["ok"]:
                    problem = f"zbtools failed: {answer['envelope']['error']}"
                times.append(answer["s"])
                refs.append(ref)
                ratios.append(answer["s"] / ref)
            if change:
                driver.ask(op="call", root=str(root), tool="write_append",
                           args={"path": CHANGED, "content": "y = 2\n"}, full=False)
        if problem:
            rows.append([name, problem, "", "", "", "", ""])
            continue
        ratio = statistics.median(ratios)
        rows.append([name, f"{first * 1000:.1f}", f"{statistics.median(times) * 1000:.2f}",
                     f"{statistics.median(refs) * 1000:.1f}", f"{ratio:.2f}",
                     f"<= {GOAL_GREP:.1f}", verdict(ratio, GOAL_GREP)])
        notes.append(f"{name}: ratios {', '.join(f'{r:.2f}' for r in ratios)}")
        raw[name] = {"first_s": first, "warm_s": times, "rg_s": refs, "ratios": ratios,
                     "median_ratio": ratio, "goal": GOAL_GREP}
    return rows, notes, raw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_venv_arguments(parser)
    parser.add_argument("--runs", type=int, default=9,
                        help="measured pairs of the 1,000 reads (default 9)")
    parser.add_argument("--calls", type=int, default=8, help="greps per case (default 8)")
    parser.add_argument("--dir", type=Path, help="keep the grep corpus here (default: temporary)")
    parser.add_argument("--export", type=Path, metavar="FILE",
                        help="also write every sample and summary as JSON to FILE")
    args = parser.parse_args(argv)
    rg = rg_and_git()
    env = bench_env()
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-api-")))
        env["ZBTOOLS_STATE_DIR"] = str(work / "state")
        small = work / "small"
        small.mkdir()
        make_fixture(small)
        corpus = args.dir.resolve() if args.dir else work / "corpus"
        root = corpus / "real"
        how = ensure_real(root)
        (root / CHANGED).write_text("x = 1\n")
        describe_run(venv)
        print(f"# read_file: {args.runs} measured pairs (API in-process, batch process), "
              "interleaved; ratio = median of per-pair ratios")
        print(f"# grep corpus: {root} ({how}); {args.calls} calls per case, each paired with "
              f"a cold rg run just before it; exclude_dirs [] (rg has none)", flush=True)
        time.sleep(2.5)  # what was just written settles (the search cache's rule)
        driver = Driver(venv.python, env)
        try:
            read_rows, summary = reads(driver, venv.python, small, args.runs, env)
            print(f"\n## read_file: {BATCH_CALLS} small reads (import zbtools "
                  f"{summary['import_ms']:.1f} ms and Toolbox() {summary['open_ms']:.1f} ms "
                  "once, not counted)\n")
            print(table(["case", "API calls/s", "batch calls/s", "API / batch", "goal",
                         "verdict"], read_rows))
            grep_rows, notes, grep_raw = greps(driver, rg, root, args.calls)
        finally:
            driver.close()
        print("\n## grep_search: repeated calls through the API vs a cold rg process\n")
        print(table(["case", "first call ms", "warm call ms (median)", "rg ms (median)",
                     "API / rg", "goal", "verdict"], grep_rows))
        for note in notes:
            print(f"# {note}")
        write_export(args.export, {"benchmark": "api", "zbtools": venv.version,
                                   "read_file": {"goal_ratio": GOAL_READ, **summary},
                                   "grep_search": grep_raw})
    return 0


if __name__ == "__main__":
    sys.exit(main())
