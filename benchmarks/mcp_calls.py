"""Per-call cost through MCP: ``zbtools mcp`` beside the reference filesystem server.

One session per server, through the official SDK's own client over stdio (the legacy
``initialize`` handshake that clients use today): after warm-up calls, ``--calls`` sequential
small reads of the same file (``read_file`` here, ``read_text_file`` there, the same absolute
path), each timed from the client's call to its parsed result. The two servers alternate in
rounds of ``--round`` calls (ours, theirs, ours, ...) so that drift of a busy machine reaches
both alike. Reported: p50, p95 and calls per second of each server, the ratio of the p50s, and
the server's resident memory (``VmRSS`` after the warm-up, half-way and at the end, and the
peak ``VmHWM``) read from ``/proc``: flat memory means the second half adds nothing.

The reference server is found or installed as ``benchmarks/mcp_startup.py`` does (node and npm
on PATH, or ``--reference DIR``). The client's own cost (its validation of every result) is in
both columns alike.

Usage::

    .venv/bin/python benchmarks/mcp_calls.py [--calls 2000] [--warmup 200] [--round 100]
        [--reference DIR] [--no-reference] [--venv DIR | --keep-venv DIR] [--export FILE]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    add_venv_arguments,
    bench_env,
    describe_run,
    prepare_venv,
    table,
    write_export,
)
from mcp_startup import find_reference

GOAL = 1.0  # the p50 of a small read at or below the reference server's


def proc_memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (KiB) of ``pid`` from /proc; empty when it cannot be read."""
    found: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
    return found


class Server:
    """One server session: its client, the tool call that reads, its pid and samples."""

    def __init__(self, name: str, argv: Sequence[str], tool: str, arguments: dict[str, Any],
                 scratch: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.tool = tool
        self.arguments = arguments
        self.pidfile = scratch / f"{name.replace(' ', '_')}.pid"
        self.samples: list[float] = []
        self.memory: dict[str, dict[str, int]] = {}
        self.client: Any = None

    @contextlib.asynccontextmanager
    async def session(self, cwd: Path, env: dict[str, str]) -> AsyncIterator[None]:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        # sh writes its pid and execs the server: the pid whose /proc the memory comes from
        params = StdioServerParameters(
            command="/bin/sh", args=["-c", f'echo $$ > "{self.pidfile}"; exec "$@"', "sh",
                                     *self.argv], env=env, cwd=str(cwd))
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            self.client = client
            yield

    @property
    def pid(self) -> int:
        return int(self.pidfile.read_text().strip())

    async def calls(self, count: int, keep: bool) -> None:
        for _ in range(count):
            start = time.perf_counter()
            result = await self.client.call_tool(self.tool, self.arguments)
            elapsed = time.perf_counter() - start
            if result.is_error:
                raise SystemExit(f"error: {self.name}: the read failed: {result.content!r}")
            if keep:
                self.samples.append(elapsed)

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.samples)
        return {"p50_ms": statistics.median(ordered) * 1000,
                "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
                "calls_per_s": len(ordered) / sum(ordered)}


async def run(servers: list[Server], cwd: Path, env: dict[str, str], calls: int, warmup: int,
              per_round: int) -> None:
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            await stack.enter_async_context(server.session(cwd, env))
        for server in servers:
            await server.calls(warmup, keep=False)
            server.memory["after warm-up"] = proc_memory(server.pid)
        done = 0
        while done < calls:
            step = min(per_round, calls - done)
            for server in servers:
                await server.calls(step, keep=True)
            done += step
            if done >= calls // 2 and "half-way" not in servers[0].memory:
                for server in servers:
                    server.memory["half-way"] = proc_memory(server.pid)
        for server in servers:
            server.memory["at the end"] = proc_memory(server.pid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    parser.add_argument("--calls", type=int, default=2000, help="measured calls per server "
                        "(default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured calls first "
                        "(default 200)")
    parser.add_argument("--round", type=int, default=100, help="calls per server before the "
                        "other server's turn (default 100)")
    parser.add_argument("--export", type=Path, metavar="FILE",
                        help="also write every sample and summary as JSON to FILE")
    parser.add_argument("--reference", type=Path, metavar="DIR",
                        help="a folder whose node_modules holds the reference server")
    parser.add_argument("--no-reference", action="store_true", help="time zbtools mcp only")
    args = parser.parse_args(argv)
    env = bench_env()
    import anyio

    with prepare_venv(args) as venv, tempfile.TemporaryDirectory(prefix="zbbench-mcpc-") as tmp:
        scratch = Path(tmp)
        workspace = (scratch / "workspace").resolve()
        workspace.mkdir()
        target = workspace / "notes.txt"
        target.write_text("".join(f"line {i}: a small file to read\n" for i in range(20)),
                          encoding="utf-8")
        describe_run(venv)
        servers = [Server("zbtools mcp", [str(venv.script), "mcp", "--workspace",
                                          str(workspace)], "read_file", {"path": str(target)},
                          scratch)]
        ref_prefix, ref_note = find_reference(args.reference, args.no_reference, scratch)
        print(f"# reference: {ref_note}")
        if ref_prefix is not None:
            servers.append(Server("reference server", [*ref_prefix, str(workspace)],
                                  "read_text_file", {"path": str(target)}, scratch))
        print(f"# {args.calls} measured calls per server after {args.warmup} warm-up calls, "
              f"in alternating rounds of {args.round}\n", flush=True)
        anyio.run(run, servers, workspace, env, args.calls, args.warmup, args.round)
        rows = []
        results: dict[str, object] = {"reference": ref_note}
        ref_p50 = servers[1].summary()["p50_ms"] if len(servers) > 1 else None
        for server in servers:
            summary = server.summary()
            start = server.memory["after warm-up"]
            middle = server.memory["half-way"]
            end = server.memory["at the end"]
            ratio = summary["p50_ms"] / ref_p50 if ref_p50 else None
            rows.append([server.name, f"{summary['p50_ms']:.3f}", f"{summary['p95_ms']:.3f}",
                         f"{summary['calls_per_s']:.0f}",
                         f"{ratio:.2f}" if ratio is not None else "-",
                         f"{start.get('VmRSS', 0) / 1024:.1f}",
                         f"{middle.get('VmRSS', 0) / 1024:.1f}",
                         f"{end.get('VmRSS', 0) / 1024:.1f}",
                         f"{end.get('VmHWM', 0) / 1024:.1f}"])
            results[server.name] = {"argv": server.argv, "samples_s": server.samples,
                                    "memory_kib": server.memory, **summary}
        print(table(["server", "p50 ms", "p95 ms", "calls/s", "p50 ratio",
                     "RSS MiB after warm-up", "half-way", "at the end", "peak RSS MiB"], rows))
        if ref_p50:
            ratio = servers[0].summary()["p50_ms"] / ref_p50
            print(f"\ngoal: p50 at most {GOAL:.1f}x the reference's: "
                  f"{'met' if ratio <= GOAL else 'not met'} ({ratio:.2f}x)")
        write_export(args.export, {"benchmark": "mcp_calls", "zbtools": venv.version,
                                   "calls": args.calls, "warmup": args.warmup,
                                   "cases": results})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
