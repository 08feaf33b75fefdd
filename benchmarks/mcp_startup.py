"""Time to the ``initialize`` response: ``zbtools mcp`` beside the reference filesystem server.

Each sample starts the server, writes one ``initialize`` request on its stdin and stops the
clock when the response line arrives on stdout (what a client waits for before it can list or
call a tool); then it closes stdin and reaps the server. The reference is the Model Context
Protocol reference filesystem server (node, the npm package
``@modelcontextprotocol/server-filesystem``), served on the same workspace directory: either an
existing install (``--reference DIR``, a folder whose ``node_modules`` holds the package) or one
that ``npm install`` makes in a temporary folder when node and npm are on PATH. Without node or
npm, or when the install fails, only the zbtools figures are printed, with the reason.

The servers run as pairs, alternating order (A B, then B A), after warm-up pairs; the ratio is
the median of the per-pair ratios. Information rows time the floor: the interpreter alone
(``python -I -c pass``) and the SDK's pieces: the protocol types, the stdio runner, the
``Server`` as ``zbtools mcp`` imports it and as the SDK imports itself, each to a first line
of output (no interpreter teardown), with its ratio to the reference. After the table,
``-X importtime`` ranks what the server imports before it answers.

Usage::

    .venv/bin/python benchmarks/mcp_startup.py [--runs 20] [--warmup 3] [--reference DIR]
        [--no-reference] [--venv DIR | --keep-venv DIR] [--export FILE] [--no-importtime]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Paired,
    Venv,
    add_venv_arguments,
    bench_env,
    describe_run,
    ms,
    prepare_venv,
    table,
    verdict,
    write_export,
)

GOAL = 1.5  # issue 14: time to the initialize response at most 1.5x the reference server's
PACKAGE = "@modelcontextprotocol/server-filesystem"
TIMEOUT_S = 60.0
INITIALIZE = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "zbtools-bench", "version": "0"}}}) + "\n").encode()


def first_line(argv: Sequence[str], cwd: Path, env: dict[str, str], stdin: bytes
               ) -> tuple[float, bytes]:
    """(seconds from spawning ``argv`` to the first line on its stdout, that line); ``stdin``
    is written first, and the input is closed once the line came."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if stdin:
            proc.stdin.write(stdin)
            proc.stdin.flush()
        line = b""
        deadline = start + TIMEOUT_S
        fd = proc.stdout.fileno()
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], max(deadline - time.perf_counter(), 0))
            if not ready:
                raise SystemExit(f"error: no answer within {TIMEOUT_S:.0f} s: {' '.join(argv)}")
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            line += chunk
        elapsed = time.perf_counter() - start
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return elapsed, line.split(b"\n", 1)[0]


def time_to_initialize(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from spawning ``argv`` to its answer to ``initialize`` (checked)."""
    elapsed, line = first_line(argv, cwd, env, INITIALIZE)
    message = json.loads(line or b"{}")
    if message.get("id") != 1 or "result" not in message:
        raise SystemExit(f"error: unexpected answer to initialize from {' '.join(argv)}: "
                         f"{line[:300]!r}")
    return elapsed


def pairs(target: Sequence[str], ref: Sequence[str], cwd: Path, env: dict[str, str],
          runs: int, warmup: int) -> Paired:
    paired = Paired("loop")
    for i in range(warmup + runs):
        first_target = i % 2 == 0
        if first_target:
            t = time_to_initialize(target, cwd, env)
            r = time_to_initialize(ref, cwd, env)
        else:
            r = time_to_initialize(ref, cwd, env)
            t = time_to_initialize(target, cwd, env)
        if i >= warmup:
            paired.target_s.append(t)
            paired.ref_s.append(r)
    return paired


def find_reference(explicit: Path | None, disabled: bool, scratch: Path
                   ) -> tuple[list[str] | None, str]:
    """The reference server's argv prefix (the workspace is appended) and how it was found."""
    if disabled:
        return None, "skipped (--no-reference)"
    node = shutil.which("node")
    if node is None:
        return None, "node is not on PATH"
    folder = explicit
    if folder is None:
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm is not on PATH"
        folder = scratch / "reference"
        folder.mkdir()
        print(f"# installing {PACKAGE} with npm into {folder}", flush=True)
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent",
                               "--prefix", str(folder), PACKAGE], capture_output=True,
                              text=True, check=False, timeout=600)
        if done.returncode != 0:
            return None, f"npm install {PACKAGE} failed: {done.stderr.strip()[-300:]}"
    package = folder / "node_modules" / "@modelcontextprotocol" / "server-filesystem"
    entry = package / "dist" / "index.js"
    if not entry.is_file():
        return None, f"{entry} does not exist"
    version = json.loads((package / "package.json").read_text()).get("version", "?")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                  check=False).stdout.strip()
    return [node, str(entry)], f"{PACKAGE} {version} on node {node_version} ({folder})"


IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def report_imports(venv: Venv, workspace: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Median self time per top-level package imported before the initialize response."""
    per_package: dict[str, list[float]] = {}
    total: list[float] = []
    for _ in range(runs):
        proc = subprocess.run([str(venv.python), "-I", "-X", "importtime", "-m", "zbtools", "mcp",
                               "--workspace", str(workspace)], input=INITIALIZE,
                              capture_output=True, env=env, check=False, timeout=TIMEOUT_S)
        sums: dict[str, float] = {}
        for line in proc.stderr.decode(errors="replace").splitlines():
            found = IMPORT_LINE.match(line)
            if found:
                top = found.group(4).split(".")[0]
                sums[top] = sums.get(top, 0.0) + int(found.group(1)) / 1000
        for top, value in sums.items():
            per_package.setdefault(top, []).append(value)
        total.append(sum(sums.values()))
    medians = {k: statistics.median(v) for k, v in per_package.items()}
    ranked = sorted(medians.items(), key=lambda kv: -kv[1])[:15]
    print(f"\n## -X importtime of `zbtools mcp` up to its initialize response, median of {runs} "
          f"runs (inflated by the measurement; use it to rank)\n")
    print(f"all imports: {statistics.median(total):.0f} ms (self times summed)\n")
    print(table(["top-level package", "self ms (summed)"],
                [[name, f"{value:.1f}"] for name, value in ranked]))
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    group = parser.add_argument_group("timing")
    group.add_argument("--runs", type=int, default=20, help="measured pairs (default 20)")
    group.add_argument("--warmup", type=int, default=3, help="warm-up pairs (default 3)")
    group.add_argument("--export", type=Path, metavar="FILE",
                       help="also write every sample and summary as JSON to FILE")
    ref_group = parser.add_argument_group("reference server")
    ref_group.add_argument("--reference", type=Path, metavar="DIR",
                           help=f"a folder whose node_modules holds {PACKAGE} (default: npm "
                           "install it into a temporary folder)")
    ref_group.add_argument("--no-reference", action="store_true",
                           help="time zbtools mcp only")
    parser.add_argument("--no-importtime", action="store_true",
                        help="skip the -X importtime breakdown")
    args = parser.parse_args(argv)
    env = bench_env()
    with prepare_venv(args) as venv, \
            tempfile.TemporaryDirectory(prefix="zbbench-mcp-") as tmp:
        scratch = Path(tmp)
        workspace = scratch / "workspace"
        workspace.mkdir()
        (workspace / "README.md").write_text("a workspace\n", encoding="utf-8")
        describe_run(venv)
        zbtools = [str(venv.python), "-I", "-m", "zbtools", "mcp", "--workspace", str(workspace)]
        script = [str(venv.script), "mcp", "--workspace", str(workspace)]
        ref_prefix, ref_note = find_reference(args.reference, args.no_reference, scratch)
        print(f"# reference: {ref_note}")
        results: dict[str, object] = {"reference": ref_note}
        rows: list[list[str]] = []
        cases = [("zbtools mcp (console script)", script),
                 ("zbtools mcp (python -I -m zbtools)", zbtools)]
        if ref_prefix is not None:
            ref = [*ref_prefix, str(workspace)]
            time_to_initialize(ref, workspace, env)
            print(f"# {args.runs} measured pairs after {args.warmup} warm-up pairs, interleaved "
                  "(A B, B A, ...); ratio = median of per-pair ratios\n", flush=True)
            for name, cmd in cases:
                paired = pairs(cmd, ref, workspace, env, args.runs, args.warmup)
                lo, hi = paired.ratio_iqr()
                rows.append([name, f"{ms(statistics.median(paired.target_s)):.0f}",
                             f"{ms(statistics.median(paired.ref_s)):.0f}", f"{paired.ratio:.2f}",
                             f"{GOAL:.1f}", verdict(paired.ratio, GOAL), f"{lo:.2f}-{hi:.2f}"])
                results[name] = {"command": cmd, "reference_command": ref, **paired.to_json()}
        else:
            print(f"# the reference server cannot run here ({ref_note}): zbtools only\n")
            for name, cmd in cases:
                samples = [time_to_initialize(cmd, workspace, env)
                           for _ in range(args.warmup + args.runs)][args.warmup:]
                rows.append([name, f"{ms(statistics.median(samples)):.0f}", "-", "-",
                             f"{GOAL:.1f}", "n/a", "-"])
                results[name] = {"command": cmd, "target_s": samples}
        # The floor, timed the same way (spawn to a first line, before any teardown): what an
        # interpreter costs, and what importing the SDK's pieces costs.
        deferred = ("from zbtools.surfaces.mcp_server import DEFERRED_PACKAGES, "
                    "defer_package_init\nfor p in DEFERRED_PACKAGES: defer_package_init(p)\n")
        floor = {
            "python -I -c pass": "",
            "the protocol types (mcp_types.methods, anyio)": "import mcp_types.methods, anyio\n",
            "+ the SDK's stdio runner and dispatcher": deferred
            + "import mcp.server.runner, mcp.server.stdio\n",
            "+ the SDK's Server, as zbtools mcp imports it": deferred
            + "import mcp.server.lowlevel, mcp.server.stdio\n",
            "import mcp.server.lowlevel (as the SDK imports itself)":
                "import mcp.server.lowlevel, mcp.server.stdio\n",
        }
        ref_ms = statistics.median(float(str(r[2])) for r in rows) if rows and rows[0][2] != "-" \
            else None
        for name, code in floor.items():
            cmd = [str(venv.python), "-I", "-c", code + "print(flush=True)"]
            samples = [first_line(cmd, workspace, env, b"")[0]
                       for _ in range(max(5, args.runs // 2))]
            median = ms(statistics.median(samples))
            rows.append([f"info: {name}", f"{median:.0f}", "-",
                         f"{median / ref_ms:.2f}" if ref_ms else "-", "-", "info", "-"])
            results[name] = {"command": cmd, "target_s": samples}
        print(table(["case", "median ms", "ref ms", "ratio", "goal", "verdict", "ratio p25-p75"],
                    rows))
        imports: dict[str, float] = {}
        if not args.no_importtime:
            imports = report_imports(venv, workspace, env, 5)
        write_export(args.export, {"benchmark": "mcp_startup", "zbtools": venv.version,
                                   "runs": args.runs, "warmup": args.warmup, "cases": results,
                                   "imports_self_ms": imports})
    return 0


if __name__ == "__main__":
    sys.exit(main())
