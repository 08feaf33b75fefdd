"""A 100-line range of a 100 MiB text file: ``zbtools read_file_range`` against ``sed``.

Goal (docs/internals/performance.md#g6): at most 2x the wall time of ``sed -n 'A,Bp;Bq' FILE``
run side by side, and a peak RSS under 30 MB (10^6 bytes) for the zbtools process.

The file is generated deterministically (fixed-width numbered lines, 35 bytes each: about 3.0 M
lines for 100 MiB) into a temporary directory, or into ``--dir`` where it is reused when it is
already there and intact. Before anything is timed, the JSON result's ``content`` must equal
sed's output byte for byte; a case that disagrees is reported as MISMATCH and not timed.

Cases: lines 1,500,000-1,500,099 (the middle), a range near the end (2,900,000-2,900,099 for the
default size) and the last 100 lines (reading to the end of the file, where zbtools may count
every line). zbtools runs as ``VENV/bin/python -I -m zbtools read_file_range --path ...`` with
stdin on /dev/null (``--script`` for the console script), in a venv built as in startup.py.

Usage::

    .venv/bin/python benchmarks/bigfile.py [--runs 20] [--warmup 3] [--dir DIR] [--size-mib 100]
        [--engine auto|hyperfine|loop] [--venv DIR | --keep-venv DIR] [--rss-runs 5] [--script]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
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
    measure_pairs,
    ms,
    peak_rss,
    prepare_venv,
    table,
    verdict,
    working_directory,
    write_export,
)

GOAL_RATIO = 2.0  # docs/internals/performance.md#g6
GOAL_RSS_MB = 30.0
LINE_BYTES = 35
BLOCK_LINES = 100_000


def line(number: int) -> str:
    """Line ``number`` (1-based) of the generated file: always LINE_BYTES bytes."""
    return f"{number:09d} lorem ipsum dolor sit am\n"


def line_count(size_mib: float) -> int:
    return max(1, round(size_mib * 2**20 / LINE_BYTES))


def ensure_bigfile(path: Path, lines: int) -> str:
    """Write the file unless an intact copy is there; returns what was done."""
    expected = lines * LINE_BYTES
    if path.is_file() and path.stat().st_size == expected:
        with path.open("rb") as fh:
            head = fh.read(LINE_BYTES)
            fh.seek(expected // 2 // LINE_BYTES * LINE_BYTES)
            mid = fh.read(LINE_BYTES)
            fh.seek(expected - LINE_BYTES)
            tail = fh.read(LINE_BYTES)
        if (head == line(1).encode() and mid == line(lines // 2 + 1).encode()
                and tail == line(lines).encode()):
            return "reused"
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as fh:
        for first in range(1, lines + 1, BLOCK_LINES):
            last = min(lines, first + BLOCK_LINES - 1)
            fh.write("".join(map(line, range(first, last + 1))).encode("ascii"))
    partial.replace(path)
    return "generated"


def warm_cache(path: Path) -> None:
    with path.open("rb") as fh:
        while fh.read(8 << 20):
            pass


def ranges(lines: int) -> list[tuple[str, int, int]]:
    middle = 1_500_000 if lines >= 1_500_099 + 100 else max(1, lines // 2)
    near_end = (lines - 200) // 100_000 * 100_000 if lines > 200_000 else max(1, lines - 500)
    last = max(1, lines - 99)
    return [("middle", middle, middle + 99), ("near the end", near_end, near_end + 99),
            ("last 100 lines", last, lines)]


def compare_outputs(zb: bytes, sed: bytes, start: int, end: int) -> str | None:
    """None when zbtools' JSON ``content`` equals sed's output exactly, else what differs."""
    try:
        envelope = json.loads(zb)
    except ValueError as exc:
        return f"zbtools printed no JSON ({exc}): {zb[:200]!r}"
    if not envelope.get("ok"):
        return f"zbtools failed: {json.dumps(envelope.get('error'))[:300]}"
    result = envelope["result"]
    content = result["content"]
    expected = sed.decode("utf-8")
    if content != expected:
        return (f"content differs: zbtools {len(content)} chars starting {content[:60]!r}, "
                f"sed {len(expected)} chars starting {expected[:60]!r}")
    if (result.get("start_line"), result.get("end_line")) != (start, end):
        return f"range reported as {result.get('start_line')}-{result.get('end_line')}"
    if result.get("truncated"):
        return "zbtools reports the range as truncated"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=20)
    parser.add_argument("--dir", type=Path, metavar="DIR",
                        help="where the big file lives (reused if intact; default: a temporary "
                        "directory, deleted at exit)")
    parser.add_argument("--size-mib", type=float, default=100.0,
                        help="size of the file in MiB (default 100)")
    parser.add_argument("--rss-runs", type=int, default=5,
                        help="separate runs that measure peak RSS (max reported; default 5)")
    parser.add_argument("--script", action="store_true",
                        help="run the console script VENV/bin/zbtools, not python -I -m zbtools")
    args = parser.parse_args(argv)
    env = bench_env()
    sed = shutil.which("sed")
    if sed is None:
        print("error: sed is not on PATH", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        if args.dir is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-big-")))
        else:
            work = args.dir.resolve()
            work.mkdir(parents=True, exist_ok=True)
        lines = line_count(args.size_mib)
        big = work / f"big_{lines}_lines.txt"
        done = ensure_bigfile(big, lines)
        warm_cache(big)
        describe_run(venv)
        print(f"# file: {big} ({done}), {big.stat().st_size:,} bytes, {lines:,} lines of "
              f"{LINE_BYTES} bytes; page cache warmed")
        zbtools = ((str(venv.script),) if args.script
                   else (str(venv.python), "-I", "-m", "zbtools"))
        stack.enter_context(working_directory(work))
        print(f"# {args.runs} measured pairs per case after {args.warmup} warm-up pairs, "
              "interleaved; ratio = median of per-pair ratios; RSS of "
              f"{args.rss_runs} separate runs (max)\n", flush=True)
        rows: list[list[str]] = []
        results: dict[str, object] = {}
        commands: list[str] = []
        rss_how = "-"
        floor_rss = peak_rss(Command((str(venv.python), "-I", "-c", "pass")), env, 3)
        for name, start, end in ranges(lines):
            label = f"{name}: lines {start:,}-{end:,}"
            zb = Command((*zbtools, "read_file_range", "--path", big.name,
                          "--start-line", str(start), "--end-line", str(end)))
            ref = Command((sed, "-n", f"{start},{end}p;{end}q", big.name))
            commands += [f"  {label}: {zb.display()}", f"  {' ' * len(label)}  {ref.display()}"]
            problem = compare_outputs(check_ok(zb, env).stdout, check_ok(ref, env).stdout,
                                      start, end)
            if problem is not None:
                rows.append([label, "-", "-", "-", f"{GOAL_RATIO:.1f}", "MISMATCH", "-", "-",
                             "-", "-"])
                results[label] = {"mismatch": problem}
                print(f"# MISMATCH, not timed: {label}: {problem}")
                continue
            paired = measure_pairs(zb, ref, args.runs, args.warmup, args.engine, env)
            rss = peak_rss(zb, env, args.rss_runs)
            sed_rss = peak_rss(ref, env, 2)
            rss_how = rss.method
            lo, hi = paired.ratio_iqr()
            ok = (verdict(paired.ratio, GOAL_RATIO) == "ok" and rss.mb() < GOAL_RSS_MB)
            rows.append([label, f"{ms(statistics.median(paired.target_s)):.1f}",
                         f"{ms(statistics.median(paired.ref_s)):.1f}", f"{paired.ratio:.2f}",
                         f"{GOAL_RATIO:.1f}", "ok" if ok else "MISS", rss.text(),
                         sed_rss.text(), f"{lo:.2f}-{hi:.2f}",
                         paired.engine])
            results[label] = {"command": zb.display(), "reference": ref.display(),
                              "rss_kib": rss.kib, "rss_method": rss.method,
                              "sed_rss_kib": sed_rss.kib,
                              **paired.to_json()}
        print(table(["case", "zbtools ms", "sed ms", "ratio", "goal", "verdict",
                     "zbtools RSS MB", "sed RSS MB", "ratio p25-p75", "via"], rows))
        print(f"\nverdict: ok when ratio <= {GOAL_RATIO} and zbtools peak RSS < {GOAL_RSS_MB:.0f} "
              f"MB (10^6 B; peak over {args.rss_runs} runs, {rss_how}); "
              f"floor: python -I -c pass peaks at {floor_rss.text()} MB")
        print("\ncommands (run in the file's directory):")
        print("\n".join(commands))
        write_export(args.export, {"benchmark": "bigfile", "zbtools": venv.version,
                                   "file": str(big), "lines": lines, "runs": args.runs,
                                   "warmup": args.warmup, "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
