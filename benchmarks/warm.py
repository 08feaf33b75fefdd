"""Warm searches in one ``zbtools batch`` session against one cold ``rg`` process.

Goal (issue: search at native speed): inside one long-lived session, the second and later
identical searches of an unchanged tree, after one file was changed between the calls, cost at
most 1x a whole cold ``rg`` call (start-up included) on the same corpus; the cache's memory is
reported and bounded by ``search_cache_bytes``.

How: one ``VENV/bin/python -I -m zbtools batch`` process per case; each request is written and
its one result line read back, timed per call. Between two timed calls a ``write_append`` of one
line to a file of the corpus (through the same session, so it is a real change the next call
must see; its own time is not counted) keeps the searches honest. The reference is ``rg`` with
the same pattern, run cold as its own process, interleaved with the session's calls. The ratio
is the median over the warm calls (the second onwards) of call time / the rg time measured next
to it. The session's resident memory (VmRSS) is read from ``/proc`` before the first call and
after the last, and its growth is reported as what the warm cache costs.

Correctness first: the first call's result set is compared with rg's (sorted ``path:line`` pairs
for grep, path sets for glob and list) and a mismatch is reported instead of a time.

Usage::

    .venv/bin/python benchmarks/warm.py [--dir DIR] [--calls 8] [--venv DIR | --keep-venv DIR]

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
)
from search import ensure_real

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("grep 'def get_'", {"tool": "grep_search", "args": {
        "pattern": "def get_", "head_limit": 10_000}}, ["-n", "def get_"]),
    ("grep -i 'def get_'", {"tool": "grep_search", "args": {
        "pattern": "def get_", "case_insensitive": True, "head_limit": 10_000}},
     ["-n", "-i", "def get_"]),
    ("grep no literal", {"tool": "grep_search", "args": {
        "pattern": r"^\s+\w+\(\w+\)$", "head_limit": 10_000}}, ["-n", r"^\s+\w+\(\w+\)$"]),
    # rg's -g overrides ignore files, so the reference is `rg --files` (the .py paths of it)
    ("glob '**/*.py'", {"tool": "find_files_glob", "args": {
        "pattern": "**/*.py", "limit": 10_000}}, ["--files"]),
    ("list (recursive)", {"tool": "list_directory", "args": {
        "max_depth": 100, "limit": 10_000}}, ["--files"]),
]
CHANGED = "stdlib/warm_bench_changed.py"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Session:
    def __init__(self, python: Path, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([str(python), "-I", "-m", "zbtools", "batch"], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0

    def call(self, request: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        line = json.dumps({"id": self.next_id, **request}).encode() + b"\n"
        start = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        elapsed = time.perf_counter() - start
        envelope: dict[str, Any] = json.loads(answer)
        return elapsed, envelope

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def rg_time(rg: str, args: list[str], root: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    out = subprocess.run([rg, *args, "."], cwd=root, capture_output=True, check=False).stdout
    return time.perf_counter() - start, out


def same_results(envelope: dict[str, Any], rg_out: bytes, tool: str) -> str | None:
    result = envelope.get("result")
    if not envelope.get("ok") or result is None:
        return f"zbtools failed: {envelope.get('error')}"
    if tool == "grep_search":
        lines = sorted((m["path"], m["line"]) for m in result["matches"])
        hits = []
        for raw in rg_out.decode("utf-8", "replace").splitlines():
            path, _, rest = raw.partition(":")
            hits.append((path.removeprefix("./"), int(rest.partition(":")[0])))
        same = lines == sorted(hits)
        counts = (len(lines), len(hits))
    else:
        key = "matches" if tool == "find_files_glob" else "entries"
        paths = sorted(m["path"] for m in result[key] if m.get("type", "file") != "directory")
        listed = sorted(p.removeprefix("./") for p in rg_out.decode().splitlines()
                        if tool != "find_files_glob" or p.lower().endswith(".py"))
        same = paths == listed
        counts = (len(paths), len(listed))
    return None if same else f"MISMATCH: {counts[0]} vs rg {counts[1]} results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_venv_arguments(parser)
    parser.add_argument("--dir", type=Path, help="keep the corpus here (default: temporary)")
    parser.add_argument("--calls", type=int, default=8, help="calls per session (default 8)")
    parser.add_argument("--no-watch", action="store_true",
                        help="sessions without the change monitor (search_watch_dirs 0): every "
                        "warm call re-checks the tree by stat")
    args = parser.parse_args(argv)
    rg = rg_and_git()
    env = bench_env()
    if args.no_watch:
        env["ZBTOOLS_SEARCH_WATCH_DIRS"] = "0"
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        work = args.dir.resolve() if args.dir else Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-warm-")))
        root = work / "real"
        how = ensure_real(root)
        (root / CHANGED).write_text("x = 1\n")
        env["ZBTOOLS_STATE_DIR"] = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="zbbench-state-"))
        describe_run(venv)
        print(f"# corpus: {root} ({how}); {args.calls} calls per session; exclude_dirs [] as "
              "rg has no default excluded directories; change monitor "
              f"{'off' if args.no_watch else 'on (where the platform has one)'}")
        time.sleep(2.5)  # what ensure_real or the last run wrote settles (the cache's rule)
        rows = []
        for name, case, rg_args in CASES:
            request = {**case, "args": {**case["args"], "exclude_dirs": []}}
            session = Session(venv.python, root, env)
            before = rss_kib(session.proc.pid)
            times: list[float] = []
            ratios: list[float] = []
            problem = None
            for i in range(args.calls):
                ref, rg_out = rg_time(rg, rg_args, root)
                took, envelope = session.call(request)
                if i == 0:
                    problem = same_results(envelope, rg_out, request["tool"])
                    first = took
                else:
                    times.append(took)
                    ratios.append(took / ref)
                session.call({"tool": "write_append", "args": {"path": CHANGED,
                                                               "content": "y = 2\n"}})
            grown = rss_kib(session.proc.pid) - before
            session.close()
            if problem:
                rows.append([name, problem, "", "", "", ""])
                continue
            warm = statistics.median(times)
            ratio = statistics.median(ratios)
            rows.append([name, f"{first * 1000:.1f}", f"{warm * 1000:.1f}", f"{ratio:.2f}",
                         "ok" if ratio <= 1.0 else "MISSED", f"{grown / 1024:.1f}"])
        print(table(["case", "first call ms", "warm call ms (median)", "warm / cold rg",
                     "goal 1x", "session RSS growth MiB"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
