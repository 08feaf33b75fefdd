"""The real-code edit benchmark: requests from release diffs, run through ``zbtools batch``.

``benchmarks/data/realcode.json.gz`` (built by ``benchmarks/realcode_build.py``; sources and
licences in ``benchmarks/data/README.md``) holds old files of public packages and requests
that each make one release-to-release change, with one mistake a model makes per class. Each
request's file is written to a scratch workspace, the request is sent to one ``zbtools batch``
process (a call at a time, so each call is timed), and the file's bytes afterwards are
compared with the expected result. Every result is one of:

- ``correct``: applied with exactly the expected bytes (or, for ``absent``/``twice``, refused);
- ``refused``: a refusal where an application was possible (safe, but a miss);
- ``WRONG``: ``garbled`` (applied, bytes differ inside the edited region), ``wrong_place``
  (bytes differ elsewhere), ``false_already_applied`` (``ok`` with nothing changed where a
  change was due) or ``false_apply`` (applied where only a refusal is right).

Prints the per-class table, the WRONG cases and the median/p95 time per call; exits 1 when
any result is WRONG (``tests/core/editing/test_edit_realcode.py`` runs it as a CI gate).

    .venv/bin/python benchmarks/edit_realcode.py [--show-refused CLASS] [--json OUT]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "realcode.json.gz"
REPO = Path(__file__).resolve().parent.parent
WRONG = ("garbled", "wrong_place", "false_already_applied", "false_apply")


def load(path: Path = DATA) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def expected_text(data: dict[str, Any], case: dict[str, Any]) -> str | None:
    """The file's bytes after a correct application, or None when only a refusal is right."""
    text: str = data["files"][case["file"]]
    exp = case["expect"]
    if exp is None:
        return None
    if exp.get("replace_all"):
        out = text.replace(case["old"], case["new"])
    else:
        lines = text.split("\n")[:-1]
        out = "\n".join(lines[:exp["i1"]] + exp["repl"] + lines[exp["i2"]:]) + "\n"
    return out.replace("\n", "\r\n") if case.get("crlf") else out


def classify(before: str, after: str, expected: str | None, envelope: dict[str, Any],
             case: dict[str, Any]) -> str:
    if not envelope.get("ok"):
        return "correct" if expected is None else "refused"
    if expected is None:
        return "false_apply"
    if after == expected:
        return "correct"
    if after == before:
        return "false_already_applied"
    exp = case["expect"]
    if exp.get("replace_all"):
        return "garbled"
    eol = "\r\n" if case.get("crlf") else "\n"
    lines = before.split(eol)
    head = eol.join(lines[:exp["i1"]])
    tail = eol.join(lines[exp["i2"]:])
    inside = after.startswith(head) and after.endswith(tail)
    return "garbled" if inside else "wrong_place"


def run(data: dict[str, Any], cases: list[dict[str, Any]] | None = None,
        command: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the cases through one ``zbtools batch`` process; one outcome dict per case."""
    cases = data["cases"] if cases is None else cases
    command = command or [sys.executable, "-m", "zbtools", "batch"]
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="zb-realcode-") as tmp:
        ws = Path(tmp)
        befores = []
        for n, case in enumerate(cases):
            text = data["files"][case["file"]]
            if case.get("crlf"):
                text = text.replace("\n", "\r\n")
            (ws / f"c{n}{Path(case['file']).suffix}").write_bytes(text.encode("utf-8"))
            befores.append(text)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.Popen([*command, "--workspace", str(ws)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=ws, env=env, text=True,
                                encoding="utf-8")
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for n, case in enumerate(cases):
                name = f"c{n}{Path(case['file']).suffix}"
                args: dict[str, Any] = {"path": name, "old_text": case["old"],
                                        "new_text": case["new"]}
                if case.get("replace_all"):
                    args["replace_all"] = True
                started = time.perf_counter()
                proc.stdin.write(json.dumps({"id": n, "tool": "apply_edit", "args": args})
                                 + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                elapsed = time.perf_counter() - started
                envelope = json.loads(line)
                after = (ws / name).read_bytes().decode("utf-8")
                expected = expected_text(data, case)
                outcome = classify(befores[n], after, expected, envelope, case)
                results.append({"n": n, "cls": case["cls"], "file": case["file"],
                                "outcome": outcome, "seconds": elapsed,
                                "code": None if envelope.get("ok") else
                                envelope.get("error", {}).get("code"),
                                "matched_with": (envelope.get("result") or {}).get(
                                    "matched_with")})
        finally:
            proc.stdin.close()
            proc.wait(timeout=60)
    return results


def table(results: list[dict[str, Any]]) -> str:
    classes: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        classes.setdefault(r["cls"], []).append(r)
    rows = [f"{'class':<16}{'cases':>6}{'correct':>9}{'refused':>9}{'WRONG':>7}  correct%"]
    for cls, group in [*classes.items(), ("all", results)]:
        correct = sum(r["outcome"] == "correct" for r in group)
        refused = sum(r["outcome"] == "refused" for r in group)
        wrong = sum(r["outcome"] in WRONG for r in group)
        rows.append(f"{cls:<16}{len(group):>6}{correct:>9}{refused:>9}{wrong:>7}  "
                    f"{100 * correct / max(len(group), 1):.0f}%")
    return "\n".join(rows)


STRICT = ("exact", "trailing_ws", "crlf", "replace_all", "indentation", "stub_ellipsis")


def timing(results: list[dict[str, Any]]) -> str:
    rows = []
    for label, group in (("all", results),
                         ("exact tiers' classes", [r for r in results if r["cls"] in STRICT]),
                         ("the other classes", [r for r in results if r["cls"] not in STRICT])):
        times = sorted(r["seconds"] * 1000 for r in group)
        if not times:
            continue
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        rows.append(f"time per edit through batch, {label}: median "
                    f"{statistics.median(times):.2f} ms, p95 {p95:.2f} ms, max {times[-1]:.2f} "
                    f"ms ({len(times)} calls)")
    return "\n".join(rows) or "no calls"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--show-refused", default=None, metavar="CLASS")
    parser.add_argument("--json", default=None, metavar="OUT")
    args = parser.parse_args(argv)
    data = load(Path(args.data))
    results = run(data)
    print(table(results))
    print(timing(results))
    for r in results:
        if r["outcome"] in WRONG or (args.show_refused and r["cls"] == args.show_refused and
                                     r["outcome"] == "refused"):
            print(f"{r['outcome']}: case {r['n']} {r['cls']} {r['file']} code={r['code']} "
                  f"matched_with={r['matched_with']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if any(r["outcome"] in WRONG for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
