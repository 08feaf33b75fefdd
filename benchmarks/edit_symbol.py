"""Edits by symbol on a copy of the standard library: 200 methods replaced by their dotted name.

The interpreter's standard library (``sysconfig``'s ``stdlib``, without ``site-packages`` and
``__pycache__``) is copied to a temporary directory, the workspace. From the files Python's
``ast`` parses, ``--count`` methods (a function directly in a class, its body on lines of its
own) are drawn with a seeded generator, and each is replaced through ``edit_symbol`` (in this
process, ``zbtools.entry.run``, as the tests' runner does) by its dotted name ``Class.method``:
the new text is the method as the file has it (comment lines directly above, decorators,
the definition, comment lines below it at its body's indentation) with one statement added at
the end of its body, sent without its indentation when every line of it carries that
indentation (as a model sends a method), else as it stands.

A call that is refused as ``ambiguous_symbol`` (the dotted name exists in several files) is
sent again with the file as ``path``, then with the method's ``line`` (same-named definitions
in one file); the first refusal of each call is counted by code. Afterwards every file is
checked: it still parses (``ast``), every byte outside the replaced ranges is the original's
(the copy's files are compared with the standard library's), and each replaced range holds
exactly what was sent, at the method's indentation. The reference is the same change made
by ``apply_edit`` in a second copy (the method's old text quoted, the file named), timed call
for call in alternating order (its trial run is undone before the counted one; the copies
must end byte-identical; where apply_edit refuses, the method's text stands in several places
of the file, and the file is copied over). Prints the counts, the refusals by code, the time
per edit (median, p95; each call is a one-shot call: no search cache) and the median of the
per-pair ratios.

``--find-runs N`` also times ``find_symbol`` of ``N`` of those dotted names in a fresh process
each (``python -m zbtools``, cold: the whole copy searched, the files holding the name parsed),
paired with ``rg -l -w`` of the method's name over the same copy (the narrowing's search
alone) and with ``python -I -c pass``.

    .venv/bin/python benchmarks/edit_symbol.py [--count 200] [--seed 29] [--find-runs 0]
        [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import random
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from zbtools.dispatch import Streams  # noqa: E402
from zbtools.entry import run  # noqa: E402

MARK = "_edited_by_symbol"


class Pick:
    """One method to replace: its file, dotted name, lines, and the range the tool replaces
    (the comment lines directly above it, its decorators, the definition), in characters."""

    def __init__(self, rel: str, qualname: str, line: int, start: int, end: int, indent: str,
                 body_indent: str) -> None:
        self.rel = rel
        self.qualname = qualname
        self.line = line
        self.start = start
        self.end = end
        self.indent = indent
        self.body_indent = body_indent
        self.sent = ""
        self.expected = ""


def copy_stdlib(dest: Path) -> Path:
    source = Path(sysconfig.get_paths()["stdlib"])
    root = dest / "stdlib"
    shutil.copytree(source, root, symlinks=True,
                    ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
    return root


def methods(rel: str, text: str) -> list[Pick]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{scope}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope:
                first = child.body[0]
                header = lines[first.lineno - 1]
                if header[:first.col_offset].strip() or child.end_lineno is None:
                    continue  # a body on the header's line
                top = min([child.lineno] + [d.lineno for d in child.decorator_list]) - 1
                def_line = lines[top]
                indent = def_line[:len(def_line) - len(def_line.lstrip())]
                while top > 0 and lines[top - 1].strip().startswith("#"):
                    top -= 1  # comment lines directly above
                end_line = lines[child.end_lineno - 1]
                end_col = len(end_line.encode()[:child.end_col_offset].decode())
                rest = end_line[end_col:].strip()
                if rest and not rest.startswith("#"):
                    continue  # code after the method on its last line
                end = offsets[child.end_lineno - 1] + len(end_line.rstrip("\n")) if rest \
                    else offsets[child.end_lineno - 1] + end_col
                body_indent = header[:len(header) - len(header.lstrip())]
                # comment lines below it at the body's indentation belong to its body
                at = child.end_lineno
                while at < len(lines) and (not lines[at].strip()
                                           or lines[at].lstrip().startswith("#")):
                    if lines[at].strip():
                        if len(lines[at]) - len(lines[at].lstrip()) < len(body_indent):
                            break
                        end = offsets[at] + len(lines[at].rstrip("\n"))
                    at += 1
                out.append(Pick(rel, scope + child.name, child.lineno, offsets[top], end,
                                indent, body_indent))

    visit(tree, "")
    return out


def prepare(pick: Pick, text: str, n: int) -> None:
    segment = text[pick.start:pick.end]
    added = f"{segment}\n{pick.body_indent}{MARK} = {n}"
    lines = added.split("\n")
    if all(line.startswith(pick.indent) for line in lines if line.strip()):
        pick.sent = "\n".join(line[len(pick.indent):] if line.strip() else "" for line in lines)
        pick.expected = "\n".join(line if line.strip() else "" for line in lines)
    else:
        pick.sent = pick.expected = added


def call(ws: Path, args: dict[str, Any], tool: str = "edit_symbol") -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    streams = Streams(io.BytesIO(json.dumps(args).encode()), out, err, stdin_isatty=False,
                      stdout_isatty=False)
    env = dict(os.environ, ZBTOOLS_WORKSPACE=str(ws))
    run([tool], streams, env)
    envelope: dict[str, Any] = json.loads(out.getvalue())
    return envelope


def timed(ws: Path, args: dict[str, Any], tool: str = "edit_symbol"
          ) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    envelope = call(ws, args, tool)
    return envelope, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--find-runs", type=int, default=0,
                        help="time find_symbol cold for this many of the names")
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="zb-edit-symbol-"))
    state = base / "state"
    os.environ["ZBTOOLS_STATE_DIR"] = str(state)
    try:
        root = copy_stdlib(base)
        # the reference: the same change made by apply_edit (old text quoted, file named) in a
        # second copy, call for call
        reference = base / "reference"
        shutil.copytree(root, reference, symlinks=True)
        original: dict[str, bytes] = {}
        candidates: list[Pick] = []
        for path in sorted(root.rglob("*.py")):
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            original[rel] = data
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if "\r" in text:
                continue
            candidates += methods(rel, text)
        rng = random.Random(opts.seed)
        picks = rng.sample(candidates, min(opts.count, len(candidates)))
        # one method per file region: two picks overlapping (a method and its nested class's)
        # would replace the same bytes twice
        chosen: list[Pick] = []
        for pick in picks:
            if not any(p.rel == pick.rel and p.start < pick.end and pick.start < p.end
                       for p in chosen):
                chosen.append(pick)
        refusals: dict[str, int] = {}
        stages: dict[str, int] = {"name": 0, "name+path": 0, "name+path+line": 0, "failed": 0}
        times: list[float] = []
        ref_times: list[float] = []
        ratios: list[float] = []
        ref_refusals: dict[str, int] = {}
        done: list[Pick] = []
        for n, pick in enumerate(chosen):
            text = (root / pick.rel).read_text(encoding="utf-8")
            # earlier edits of the file added a line each: find the method again
            line = pick.line + sum(1 for p in done if p.rel == pick.rel and p.line < pick.line)
            now = {(p.qualname, p.line): p for p in methods(pick.rel, text)}.get(
                (pick.qualname, line))
            if now is None:
                stages["failed"] += 1
                continue
            prepare(now, text, n)
            pick.sent, pick.expected = now.sent, now.expected
            attempts: list[dict[str, Any]] = [
                {"symbol": pick.qualname}, {"symbol": pick.qualname, "path": pick.rel},
                {"symbol": pick.qualname, "path": pick.rel, "line": line}]
            quoted = {"path": pick.rel, "old_text": text[now.start:now.end],
                      "new_text": pick.expected}
            for stage, args in zip(("name", "name+path", "name+path+line"), attempts,
                                   strict=True):
                if n % 2:  # pairs in both orders: the drift of a noisy machine cancels
                    envelope, took = timed(root, {**args, "new_text": pick.sent})
                    ref, ref_took = timed(reference, quoted, "apply_edit")
                else:
                    ref, ref_took = timed(reference, quoted, "apply_edit")
                    envelope, took = timed(root, {**args, "new_text": pick.sent})
                times.append(took)
                if ref["ok"]:
                    undone = call(reference, {"path": pick.rel}, "undo")
                    assert undone["ok"], undone
                if envelope["ok"]:
                    stages[stage] += 1
                    done.append(pick)
                    if ref["ok"]:
                        ref_times.append(ref_took)
                        ratios.append(took / ref_took)
                        call(reference, quoted, "apply_edit")
                    else:
                        # (the method's text stands in several classes of the file: quoted,
                        # it names no one place; by name it does) the copies stay comparable
                        ref_refusals[ref["error"]["code"]] = \
                            ref_refusals.get(ref["error"]["code"], 0) + 1
                        shutil.copyfile(root / pick.rel, reference / pick.rel)
                    break
                code = envelope["error"]["code"]
                refusals[f"{stage}: {code}"] = refusals.get(f"{stage}: {code}", 0) + 1
                if code != "ambiguous_symbol":
                    stages["failed"] += 1
                    break
        find = time_find(root, done[:opts.find_runs]) if opts.find_runs else {}
        problems = check(root, original, done)
        problems += [f"{rel}: differs from apply_edit's copy" for rel in original
                     if (root / rel).read_bytes() != (reference / rel).read_bytes()
                     and any(p.rel == rel for p in done)]
        figures = {
            "methods_available": len(candidates), "edits_asked": len(chosen),
            "edits_done": len(done), "by_stage": stages, "refusals": refusals,
            "files_edited": len({p.rel for p in done}), "problems": problems,
            "seconds_per_call_median": statistics.median(times) if times else None,
            "seconds_per_call_p95": sorted(times)[int(len(times) * 0.95)] if times else None,
            "calls": len(times),
            "reference_apply_edit_seconds_median": statistics.median(ref_times)
            if ref_times else None,
            "ratio_median_edit_symbol_to_apply_edit": statistics.median(ratios)
            if ratios else None,
            "reference_refusals": ref_refusals, **find,
            "load": os.getloadavg()}
        print(json.dumps(figures, indent=2))
        if opts.json:
            opts.json.write_text(json.dumps(figures, indent=2))
        return 1 if problems else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def time_find(root: Path, picks: list[Pick]) -> dict[str, Any]:
    """``find_symbol`` cold, paired with ``rg -l -w`` and ``python -I -c pass``."""
    import subprocess

    from zbtools.core.search.ripgrep import find_rg

    rg = find_rg(os.environ) or "rg"
    env = dict(os.environ, ZBTOOLS_WORKSPACE=str(root), PYTHONPATH=str(REPO))
    finds, greps, bare, ratios = [], [], [], []
    for n, pick in enumerate(picks):
        name = pick.qualname.rsplit(".", 1)[-1]
        commands = [[sys.executable, "-m", "zbtools", "find_symbol", pick.qualname],
                    [rg, "-l", "-w", "-F", name, "."], [sys.executable, "-I", "-c", "pass"]]
        spent = [0.0, 0.0, 0.0]
        outputs: list[subprocess.CompletedProcess[bytes] | None] = [None, None, None]
        for i in (0, 1, 2) if n % 2 else (2, 1, 0):  # both orders: the drift cancels
            started = time.perf_counter()
            outputs[i] = subprocess.run(commands[i], cwd=root, env=env, capture_output=True,
                                        check=False)
            spent[i] = time.perf_counter() - started
        found = outputs[0]
        assert found is not None and found.returncode == 0, found
        assert pick.qualname in found.stdout.decode(), found
        finds.append(spent[0])
        greps.append(spent[1])
        bare.append(spent[2])
        ratios.append(finds[-1] / greps[-1])
    return {"find_symbol_cold_median": statistics.median(finds),
            "rg_files_median": statistics.median(greps),
            "python_pass_median": statistics.median(bare),
            "ratio_median_find_symbol_to_rg": statistics.median(ratios),
            "find_runs": len(finds)}


def check(root: Path, original: dict[str, bytes], done: list[Pick]) -> list[str]:
    """Every file parses; outside the replaced ranges every byte is the original's; each
    range holds what was sent, at the method's indentation."""
    problems = []
    by_file: dict[str, list[Pick]] = {}
    for pick in done:
        by_file.setdefault(pick.rel, []).append(pick)
    for rel, data in original.items():
        now = (root / rel).read_bytes()
        edits = by_file.get(rel, [])
        if not edits:
            if now != data:
                problems.append(f"{rel}: changed, but no edit was made in it")
            continue
        try:
            ast.parse(now)
        except SyntaxError as exc:
            problems.append(f"{rel}: does not parse: {exc}")
        # the expected file: the original with each range replaced by the expected text
        text = data.decode("utf-8")
        fresh = {(p.qualname, p.line): p for p in methods(rel, text)}
        expected, at = [], 0
        for pick in sorted(edits, key=lambda p: p.line):
            first = fresh.get((pick.qualname, pick.line))
            if first is None:
                problems.append(f"{rel}: {pick.qualname} not found in the original")
                break
            expected += [text[at:first.start], pick.expected]
            at = first.end
        expected.append(text[at:])
        if now.decode("utf-8") != "".join(expected):
            problems.append(f"{rel}: bytes differ from the original with the edits applied")
    return problems


if __name__ == "__main__":
    sys.exit(main())
