"""Per-call cost through MCP: ``zbtools mcp`` beside the reference filesystem server.

One session per server, through the official SDK's own client over stdio (the legacy
``initialize`` handshake that clients use today): after warm-up calls, ``--calls`` sequential
small reads of the same file (``read_file`` here, ``read_text_file`` there, the same absolute
path), each timed from the client's call to its parsed result. The two servers alternate in
rounds of ``--round`` calls (ours, theirs, ours, ...) so that drift of a busy machine reaches
both alike. Reported: p50, p95 and calls per second of each server, the ratio of the p50s, and
the server's resident memory (``VmRSS`` after the warm-up, half-way and at the end, and the
peak ``VmHWM``) read from ``/proc``: flat memory means the second half adds nothing.

A second table times the same reads through a bare JSON-RPC client (a line out, a line back),
which is the servers' own cost, and what the SDK client's check of each result against the
tool's ``outputSchema`` costs (jsonschema, on every call): a richer schema costs the client
more, whichever server sent the result.

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
import json
import os
import statistics
import subprocess
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
        return percentiles(self.samples)


class RawSession:
    """The same reads on a second process of the server, through a bare JSON-RPC client (one
    line out, one line back): the server's own cost, without the SDK client's work."""

    def __init__(self, server: Server, cwd: Path, env: dict[str, str]) -> None:
        self.server = server
        self.proc = subprocess.Popen(server.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=cwd, env=env)
        self.next_id = 0
        self.samples: list[float] = []
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "zbtools-bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = self.ask("tools/list", {})["tools"]
        self.schema = next(t.get("outputSchema") for t in tools if t["name"] == server.tool)
        self.structured = self.ask("tools/call", {"name": server.tool,
                                                  "arguments": server.arguments}).get(
            "structuredContent")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        answer = json.loads(self.proc.stdout.readline())
        if "result" not in answer:
            raise SystemExit(f"error: {self.server.name}: {method} failed: {answer}")
        result: dict[str, Any] = answer["result"]
        return result

    def calls(self, count: int, keep: bool) -> None:
        params = {"name": self.server.tool, "arguments": self.server.arguments}
        for _ in range(count):
            start = time.perf_counter()
            self.ask("tools/call", params)
            if keep:
                self.samples.append(time.perf_counter() - start)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def check_cost(self, runs: int = 2000) -> float:
        """Seconds the SDK client's check of one result against the tool's ``outputSchema``
        takes (jsonschema, as the client validates every structured result)."""
        if not self.schema or self.structured is None:
            return 0.0
        from jsonschema.validators import validator_for  # type: ignore[import-untyped]

        validator = validator_for(self.schema)(self.schema)
        start = time.perf_counter()
        for _ in range(runs):
            for _error in validator.iter_errors(self.structured):
                pass
        return (time.perf_counter() - start) / runs


def run_raw(servers: list[Server], cwd: Path, env: dict[str, str], calls: int, warmup: int,
            per_round: int) -> list[RawSession]:
    sessions = [RawSession(server, cwd, env) for server in servers]
    try:
        for session in sessions:
            session.calls(warmup, keep=False)
        done = 0
        while done < calls:
            step = min(per_round, calls - done)
            for session in sessions:
                session.calls(step, keep=True)
            done += step
    finally:
        for session in sessions:
            session.close()
    return sessions


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
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
        print(f"\n## the same reads through a bare JSON-RPC client: the servers' own cost "
              f"({args.calls} calls each)\n", flush=True)
        raw = run_raw(servers, workspace, env, args.calls, args.warmup, args.round)
        raw_ref = percentiles(raw[1].samples)["p50_ms"] if len(raw) > 1 else None
        raw_rows = []
        for session in raw:
            summary = percentiles(session.samples)
            check = session.check_cost()
            raw_rows.append([session.server.name, f"{summary['p50_ms']:.3f}",
                             f"{summary['p95_ms']:.3f}", f"{summary['calls_per_s']:.0f}",
                             f"{summary['p50_ms'] / raw_ref:.2f}" if raw_ref else "-",
                             f"{check * 1e6:.1f}"])
            results[f"{session.server.name} (bare client)"] = {
                "samples_s": session.samples, "sdk_check_s": check, **summary}
        print(table(["server", "p50 ms", "p95 ms", "calls/s", "p50 ratio",
                     "SDK client's outputSchema check, us"], raw_rows))
        write_export(args.export, {"benchmark": "mcp_calls", "zbtools": venv.version,
                                   "calls": args.calls, "warmup": args.warmup,
                                   "cases": results})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
