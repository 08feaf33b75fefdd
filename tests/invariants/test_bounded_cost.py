"""Invariant 6, bounded cost: doubling one input at most about doubles time and memory.

For each input dimension (a command's length, a word's length, nesting; a file's lines, a
line's length, old_text's size, look-alike blocks, hit or miss; a patch's hunks and their
size; a search pattern's length, a searched line's length and count; a read line's length and
count; a request's JSON nesting and string length; the text truncation) hypothesis draws the
shape of an input (what is repeated, where, around what), and the call is measured at a size
``n`` and at ``4n``: linear work grows about 4x, quadratic 16x, and the bound is
``TIME_RATIO`` (8x). ``n`` is doubled from the dimension's start until the call takes
``FLOOR`` of CPU time (or the dimension's largest size is reached: then ``4n`` must stay cheap
in absolute terms). Runs at n and 4n are interleaved and each size keeps its least (noise only
ever adds); a second and third pair are run only when the ratio is near the bound. Time is
CPU time (``time.process_time``, not the wall clock of a shared machine) and memory the
``tracemalloc`` peak at n/16 and n/4 (``MEMORY_RATIO``; tracing triples a call's time). A
measurement runs in a forked child, with ``os.fsync`` a no-op (the disk's time is not the
code's) and the objects that exist frozen out of the garbage collector, and is killed after
``HARD_SECONDS``: a hang fails the test instead of blocking CI.

Calls go through the real entry point in-process (``run_inprocess``: JSON request, argument
checks, the tool, the result's JSON), except the guardrail (``guardrail.check``: a command
over 128 KiB is refused before it is checked, and the check itself must stay linear beyond)
and the truncation (``truncate.cut_text``). Not measured: search patterns that backtrack by
nature (``.*\\n.*x`` with the python engine's DOTALL is quadratic in the text; the search's
timeout bounds it), and several ``patches`` in one call, each of which searches the whole file
(their cost is their number times the file's size).

CI draws 2 shapes per dimension; the long mode (``ZBTOOLS_INVARIANT_MINUTES``) shares its
minutes among the dimensions and goes to 4x larger sizes (but for inputs carried by the
request, which stay under its 16 MiB limit) with a 50 ms floor.
``ZBTOOLS_COST_VERBOSE=1`` (with ``pytest -s``) prints every measurement.

Map: ``Dimension`` (shapes, a builder of the call at size n, sizes), the builders by area,
``DIMENSIONS``; ``_Sizes`` and ``measure`` (the forked measurement), ``check_growth`` (the
assertions); the test, one per dimension; the mutation checks (the old quadratic tokenizer
planted in the guardrail, and a hang).
"""

from __future__ import annotations

import functools
import gc
import json
import multiprocessing
import os
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import LONG, MINUTES, invariant_settings, planted_bug_is_caught

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

FLOOR = 0.05 if LONG else 0.02  # CPU seconds the smaller size must take to be compared
TIME_RATIO = 8.0  # at 4x the input: linear gives about 4, quadratic 16
MEMORY_RATIO = 6.0
MEMORY_SLACK = 2 << 20  # bytes: constant overhead a small input's peak does not show
REPEATS = 3  # pairs of runs at most; one when the first pair is clear either way
MEASUREMENTS = 3  # whole measurements of a shape before a time over the bound fails it
CLEARLY_LINEAR, CLEARLY_SUPERLINEAR = 6.0, 16.0
VERBOSE = bool(os.environ.get("ZBTOOLS_COST_VERBOSE"))  # print every measurement (with -s)
HARD_SECONDS = 120.0 if LONG else 45.0  # one whole measurement: both sizes, every run
SCALE = 4 if LONG else 1  # how much further than its CI sizes the long mode goes

F = TypeVar("F", bound=Callable[..., Any])
Call = Callable[[], str]  # one measured call; returns "ok" or the error code
Build = Callable[[Any, int, Path], tuple[Callable[[], None], Call, set[str] | None]]


@dataclass(frozen=True)
class Dimension:
    """One input dimension: its shapes, and ``build(shape, n, ws)`` -> (setup, the call, the
    outcomes the call may have: an unexpected one means the shape measured something else)."""

    name: str
    shapes: st.SearchStrategy[Any]
    build: Build
    start: int
    most: int
    scaled: bool = True  # False: the input rides in the request, whose limit is 16 MiB


# ---- calls -------------------------------------------------------------------------------------

def _outcome(out: str) -> str:
    envelope = json.loads(out.strip().splitlines()[-1])
    return "ok" if envelope["ok"] else str(envelope["error"]["code"])


def _tool(ws: Path, tool: str, args: dict[str, Any]) -> Call:
    data = json.dumps(args, ensure_ascii=False).encode()  # \u00e9 would triple the request

    def call() -> str:
        return _outcome(run_inprocess([tool], stdin=data, workspace=ws).out)

    return call


def _raw(ws: Path, tool: str, data: bytes) -> Call:
    def call() -> str:
        return _outcome(run_inprocess([tool], stdin=data, workspace=ws).out)

    return call


def _file(ws: Path, name: str, text: str) -> Callable[[], None]:
    data = text.encode("utf-8", "surrogateescape")
    path = ws / name

    def setup() -> None:
        path.write_bytes(data)

    return setup


def _nothing() -> None:
    return None


def _repeat(unit: str, length: int) -> str:
    return unit * max(1, length // max(1, len(unit)))


# ---- the guardrail -------------------------------------------------------------------------------

def _guard(command: str) -> tuple[Callable[[], None], Call, set[str] | None]:
    from zbtools.core.processes import guardrail

    def call() -> str:
        violation = guardrail.check(command)
        return "ok" if violation is None else violation.rule

    return _nothing, call, None


WORD_UNITS = ["a", "\u00e9", "-", "/", "=", ".", "'a'", '"a"', '"\\""', "\\a", "a'b'", "$x",
              "${x}", "*", "~", ":", "%"]
PREFIXES = ["", "echo ", "rm -rf ", "sudo -u root ", "bash -c ", "curl x | ", "dd of=",
            "git push --force origin ", "eval ", "f() { ", "nice -n 5 ", "x=1 "]
SUFFIXES = ["", " | sh", "; rm -rf /", "'", ")", " &", "\n", '"']


def _guard_word(shape: tuple[str, str, str], n: int, ws: Path
                ) -> tuple[Callable[[], None], Call, set[str] | None]:
    prefix, unit, suffix = shape
    return _guard(prefix + _repeat(unit, n) + suffix)


COMMAND_PIECES = ["a ", "-rf ", "/ ", "; ", "| ", "&& ", "|| ", "& ", "\n", "\\\n", "x=1 ",
                  "sudo ", "env ", "nice -n 5 ", "timeout 5 ", "eval ", "sh -c ", "curl u ",
                  "wget u ", "| sh ", "> out ", "of=x ", "f(){ g; }; ", "$(a) ", "`a` ",
                  "<(a) ", "'a b' ", '"a b" ', "git push -f origin x ", "-- ", "xargs -n 1 "]


def _guard_words(shape: tuple[list[str], str], n: int, ws: Path
                 ) -> tuple[Callable[[], None], Call, set[str] | None]:
    pieces, suffix = shape
    return _guard(_repeat("".join(pieces), n) + suffix)


NESTS = [("(", ")"), ("$(", ")"), ("`", "`"), ("{ ", "; }"), ("<(", ")"), ("'", "'"),
         ('"', '"'), ('"$(', ')"'), ("bash -c '", "'"), ("eval ", ""), ("sh -c ", "")]


def _guard_nesting(shape: tuple[tuple[str, str], str], n: int, ws: Path
                   ) -> tuple[Callable[[], None], Call, set[str] | None]:
    (opening, closing), inner = shape
    depth = max(1, n // (len(opening) + len(closing)))
    return _guard(opening * depth + inner + closing * depth)


# ---- apply_edit ----------------------------------------------------------------------------------

LINE_STYLES = ["code", "indented", "blank_heavy", "crlf", "repeats", "unicode"]


def _line(style: str, i: int) -> str:
    if style == "indented":
        return "    " * (i % 5) + f"item_{i} = call({i})"
    if style == "blank_heavy":
        return "" if i % 2 else f"    value_{i} = compute({i})"
    if style == "repeats":
        return "    pass" if i % 3 else f"    step({i})"
    if style == "unicode":
        return f"    s_{i} = \u201cvalu\u00e9 {i}\u201d  # \u2014 note"
    return f"    value_{i} = compute({i}, 'x')"


def _lines(style: str, count: int, start: int = 0) -> list[str]:
    return [_line(style, i) for i in range(start, start + count)]


def _joined(style: str, lines: list[str]) -> str:
    eol = "\r\n" if style == "crlf" else "\n"
    return eol.join(lines) + eol


def _request(kind: str, block: list[str]) -> tuple[str, str, set[str]]:
    """(old_text, new_text, outcomes) for a block of file lines and a kind of request."""
    old = "\n".join(block) + "\n"
    changed = "\n".join(line + "  # changed" for line in block) + "\n"
    if kind == "exact":
        return old, changed, {"ok", "ambiguous_match"}
    if kind == "trailing":
        return "\n".join(line + "   " for line in block) + "\n", changed, \
            {"ok", "ambiguous_match"}
    if kind == "indentation":
        return "\n".join("  " + line for line in block) + "\n", changed, \
            {"ok", "ambiguous_match", "no_match"}
    if kind == "typo":
        typo = list(block)
        at = len(typo) // 2
        typo[at] = typo[at].replace("e", "3", 1) if "e" in typo[at] else typo[at] + "x"
        return "\n".join(typo) + "\n", changed, \
            {"ok", "ambiguous_match", "no_match", "edit_conflict"}
    return "\n".join(f"    absent_{i} = nothing({i})" for i in range(len(block))) + "\n", \
        changed, {"no_match"}


EDIT_KINDS = ["exact", "trailing", "indentation", "typo", "miss"]


def _edit_file_lines(shape: tuple[str, str, float, int], n: int, ws: Path
                     ) -> tuple[Callable[[], None], Call, set[str] | None]:
    style, kind, where, size = shape
    lines = _lines(style, n)
    # The same kind of line at every size, never a blank one (old text of whitespace only
    # is refused at once): line 6 of 30 is a unique non-blank line in every style.
    at = min(int(where * n) // 30 * 30 + 6, n - 30)
    old, new, outcomes = _request(kind, lines[at:at + size])
    return (_file(ws, "f.py", _joined(style, lines)),
            _tool(ws, "apply_edit", {"path": "f.py", "old_text": old, "new_text": new}),
            outcomes)


LONG_LINE_UNITS = ["a", "ab ", "word ", "\u00e9t\u00e9 ", "\t", "x = 1; "]


def _edit_line_length(shape: tuple[str, str, float], n: int, ws: Path
                      ) -> tuple[Callable[[], None], Call, set[str] | None]:
    unit, kind, where = shape
    body = _repeat(unit, n)
    at = int(where * len(body))
    line = body[:at] + "NEEDLE_HERE" + body[at:]
    text = "first line\n" + line + "\nlast line\n"
    if kind == "substring":
        args, outcomes = {"old_text": "NEEDLE_HERE", "new_text": "X"}, {"ok"}
    elif kind == "whole_line":
        args, outcomes = {"old_text": line, "new_text": "X"}, {"ok"}
    elif kind == "similar_line":
        args = {"old_text": line.replace("NEEDLE_HERE", "NEEDLE_THERE"), "new_text": "X"}
        outcomes = {"no_match", "ok"}
    elif kind == "indentation":  # a fuzzy tier, then the merge of old, new and the file
        args = {"old_text": "  first line\n  " + line + "\n",
                "new_text": "  first line\n  " + line.replace("NEEDLE_HERE", "NEEDLE_THERE")
                + "\n"}
        outcomes = {"ok", "no_match", "edit_conflict"}
    elif kind == "elision":  # new text writes the elided long line out, edited
        args = {"old_text": "first line\n...\nlast line\n",
                "new_text": "first line!\n" + line.replace("NEEDLE_HERE", "NEEDLE_THERE")
                + "\nlast line!\n"}
        outcomes = {"ok", "no_match", "ambiguous_match", "edit_conflict"}
    else:
        args, outcomes = {"old_text": _repeat("zq ", n) + "\nlast line\n", "new_text": "X"}, \
            {"no_match"}
    return _file(ws, "long.txt", text), _tool(ws, "apply_edit", {"path": "long.txt", **args}), \
        outcomes


def _edit_old_size(shape: tuple[str, str], n: int, ws: Path
                   ) -> tuple[Callable[[], None], Call, set[str] | None]:
    style, kind = shape
    lines = _lines(style, n + 40)
    block = lines[20:20 + n]
    old, new, outcomes = _request(kind, block)
    if kind == "exact":  # scattered changes: every tenth line
        new = "\n".join(line + " # x" if i % 10 == 0 else line
                        for i, line in enumerate(block)) + "\n"
    return (_file(ws, "f.py", _joined(style, lines)),
            _tool(ws, "apply_edit", {"path": "f.py", "old_text": old, "new_text": new}),
            outcomes)


BLOCKS = [
    ["def handler_{k}(request):", "    data = request.get('payload')",
     "    result = process(data, mode='fast')", "    return result", ""],
    ["def handler(request):", "    data = request.get('payload')",
     "    result = process(data, mode='fast')", "    return result", ""],
    ["if ready:", "    start({k})", "else:", "    wait()"],
]


def _edit_lookalikes(shape: tuple[int, str, int], n: int, ws: Path
                     ) -> tuple[Callable[[], None], Call, set[str] | None]:
    which, kind, period = shape
    template = BLOCKS[which]
    blocks = [[line.format(k=i % period) for line in template] for i in range(n)]
    text = "\n".join(line for block in blocks for line in block) + "\n"
    target = [line.format(k=period // 2) for line in template]
    old, new, _ = _request(kind, [line for line in target if line])
    return (_file(ws, "f.py", text),
            _tool(ws, "apply_edit", {"path": "f.py", "old_text": old, "new_text": new}),
            None)


# ---- patches -------------------------------------------------------------------------------------

def _patch(fmt: str, lines: list[str], hunks: list[tuple[int, int, str]]) -> str:
    """A patch of ``hunks`` (first line, line count, kind) against ``lines`` of f.py."""
    out = ["--- a/f.py\n", "+++ b/f.py\n"] if fmt == "unified" else \
        ["*** Begin Patch\n", "*** Update File: f.py\n"]
    shift = 0
    for first, count, kind in hunks:
        before = [lines[first - 1]]
        old = lines[first:first + count]
        new = [] if kind == "delete" else [line + " # new" for line in old]
        if kind == "insert":
            old, new = [], [f"    inserted_{first}_{i} = 1" for i in range(count)]
        if fmt == "unified":
            out.append(f"@@ -{first},{len(old) + 1} +{first + shift},{len(new) + 1} @@\n")
        else:
            out.append("@@\n")
        out.append(" " + before[0] + "\n")
        out += ["-" + line + "\n" for line in old]
        out += ["+" + line + "\n" for line in new]
        shift += len(new) - len(old)
    if fmt == "codex":
        out.append("*** End Patch\n")
    return "".join(out)


def _patch_hunks(shape: tuple[str, str, int], n: int, ws: Path
                 ) -> tuple[Callable[[], None], Call, set[str] | None]:
    fmt, kind, gap = shape
    lines = _lines("code", n * (3 + gap) + 5)
    hunks = [(2 + h * (3 + gap), 3, kind) for h in range(n)]
    return (_file(ws, "f.py", "\n".join(lines) + "\n"),
            _tool(ws, "apply_edit", {"patch": _patch(fmt, lines, hunks)}), {"ok"})


def _patch_hunk_size(shape: tuple[str, str], n: int, ws: Path
                     ) -> tuple[Callable[[], None], Call, set[str] | None]:
    fmt, kind = shape
    lines = _lines("code", 2 * n + 20)
    hunks = [(5, n, kind), (n + 15, n, kind)]
    return (_file(ws, "f.py", "\n".join(lines) + "\n"),
            _tool(ws, "apply_edit", {"patch": _patch(fmt, lines, hunks)}), {"ok"})


# ---- grep_search (the python engine), read_file ------------------------------------------------

GREP_PATTERNS = [("needle", False, False), ("need[a-z]e", False, False),
                 ("NEEDLE", False, True), ("ne+dle|haystack", False, False),
                 ("\\bneedle\\b", False, False), ("absent_word", False, False),
                 ("a.c", True, False), ("[0-9]{3}x", False, False)]


def _grep(ws: Path, pattern: str, fixed: bool, ignore_case: bool, **more: Any) -> Call:
    return _tool(ws, "grep_search", {"pattern": pattern, "path": "g.txt", "engine": "python",
                                     "fixed_strings": fixed, "case_insensitive": ignore_case,
                                     **more})


def _grep_line_length(shape: tuple[tuple[str, bool, bool], str, float], n: int, ws: Path
                      ) -> tuple[Callable[[], None], Call, set[str] | None]:
    (pattern, fixed, ignore_case), unit, where = shape
    body = _repeat(unit, n)
    at = int(where * len(body))
    text = "start\n" + body[:at] + " needle " + body[at:] + "\nend\n"
    return _file(ws, "g.txt", text), _grep(ws, pattern, fixed, ignore_case), {"ok"}


def _grep_lines(shape: tuple[tuple[str, bool, bool], str, int], n: int, ws: Path
                ) -> tuple[Callable[[], None], Call, set[str] | None]:
    (pattern, fixed, ignore_case), style, context = shape
    lines = _lines("code" if style == "crlf" else style, n)
    lines[n // 2] += " needle"
    return (_file(ws, "g.txt", _joined(style, lines)),
            _grep(ws, pattern, fixed, ignore_case, context=context), {"ok"})


def _grep_pattern(shape: tuple[str, bool], n: int, ws: Path
                  ) -> tuple[Callable[[], None], Call, set[str] | None]:
    kind, present = shape
    lines = _lines("code", 2000)
    if kind == "alternation":
        pattern, fixed = "|".join(f"word{i}x" for i in range(n // 7)), False
        if present:
            lines[1000] += " word3x"
    elif kind == "literal":
        pattern, fixed = _repeat("ab", n), True
        if present:
            lines[1000] += " " + pattern
    else:  # a long regular expression without alternation
        pattern, fixed = _repeat("[a-z]b", n), False
        if present:
            lines[1000] += " " + "ab" * (len(pattern) // 6)
    return (_file(ws, "g.txt", "\n".join(lines) + "\n"), _grep(ws, pattern, fixed, False),
            {"ok"})


def _read_line_length(shape: tuple[str, str], n: int, ws: Path
                      ) -> tuple[Callable[[], None], Call, set[str] | None]:
    unit, how = shape
    text = "first\n" + _repeat(unit, n) + "\nlast\n"
    args: dict[str, Any] = {"path": "r.txt"}
    if how == "hashes":
        args["hashes"] = True
    elif how == "offset":
        args["offset"] = 2
    return _file(ws, "r.txt", text), _tool(ws, "read_file", args), {"ok"}


def _read_lines(shape: tuple[str, str], n: int, ws: Path
                ) -> tuple[Callable[[], None], Call, set[str] | None]:
    style, how = shape
    text = _joined(style, _lines("code" if style == "crlf" else style, n))
    args: dict[str, Any] = {"path": "r.txt"}
    if how == "all":
        args["limit"] = 10 ** 9
    elif how == "end":
        args["offset"] = max(1, n - 5)
    elif how == "hashes":
        args.update(hashes=True, limit=10 ** 9)
    return _file(ws, "r.txt", text), _tool(ws, "read_file", args), {"ok"}


# ---- request JSON, truncation ------------------------------------------------------------------

def _json_depth(shape: tuple[str, str], n: int, ws: Path
                ) -> tuple[Callable[[], None], Call, set[str] | None]:
    container, where = shape
    opening, closing = ("[", "]") if container == "array" else ('{"a": ', "}")
    nested = opening * n + "1" + closing * n
    data = '{"path": ' + nested + "}" if where == "known" else \
        '{"path": "r.txt", "extra": ' + nested + "}"
    return _file(ws, "r.txt", "x\n"), _raw(ws, "read_file", data.encode()), \
        {"invalid_json", "invalid_arguments"}


JSON_UNITS = ["a", "\\n", '\\"', "\\u00e9", "\\ud83d\\ude00", "\\\\", "\u00e9", "\\t "]


def _json_string(shape: tuple[str, str], n: int, ws: Path
                 ) -> tuple[Callable[[], None], Call, set[str] | None]:
    unit, tool = shape
    text = _repeat(unit, n)
    if tool == "write_file":
        data = '{"path": "w.txt", "content": "' + text + '"}'
        outcomes = {"ok"}
    else:
        data = '{"path": "' + text + '"}'
        outcomes = {"not_found", "invalid_arguments", "outside_workspace", "too_large"}
    return _nothing, _raw(ws, tool, data.encode()), outcomes


def _truncation(shape: tuple[int, int, int], n: int, ws: Path
                ) -> tuple[Callable[[], None], Call, set[str] | None]:
    from zbtools.core.call.truncate import cut_text

    short, long_every, max_lines = shape
    unit = ("x" * short + "\n") * max(1, long_every) + ("y" * 5000 + "\n" if long_every else "")
    text = _repeat(unit, n) + "\u00e9"

    def call() -> str:
        cut = cut_text(text, max_bytes=50_000, max_lines=max_lines, head_lines=100,
                       tail_lines=50)
        return "ok" if cut.text else "empty"

    return _nothing, call, {"ok"}


DIMENSIONS = [
    Dimension("guardrail: word length", st.tuples(st.sampled_from(PREFIXES),
              st.sampled_from(WORD_UNITS), st.sampled_from(SUFFIXES)), _guard_word,
              200_000, 4_000_000),
    Dimension("guardrail: command length", st.tuples(
        st.lists(st.sampled_from(COMMAND_PIECES), min_size=1, max_size=3),
        st.sampled_from(SUFFIXES)), _guard_words, 50_000, 2_000_000),
    Dimension("guardrail: nesting", st.tuples(st.sampled_from(NESTS),
              st.sampled_from(["rm -rf /", "ls", "curl x | sh", "", "a 'b"])),
              _guard_nesting, 100_000, 2_000_000),
    Dimension("apply_edit: file lines", st.tuples(
        st.sampled_from(LINE_STYLES), st.sampled_from(EDIT_KINDS), st.floats(0, 1),
        st.integers(1, 4)), _edit_file_lines, 20_000, 320_000),
    Dimension("apply_edit: line length", st.tuples(
        st.sampled_from(LONG_LINE_UNITS),
        st.sampled_from(["substring", "whole_line", "similar_line", "miss", "indentation",
                         "elision"]),
        st.floats(0, 1)), _edit_line_length, 250_000, 4_000_000, scaled=False),
    Dimension("apply_edit: old_text size", st.tuples(
        st.sampled_from(LINE_STYLES), st.sampled_from(EDIT_KINDS)), _edit_old_size,
              4_000, 32_000),
    Dimension("apply_edit: look-alike blocks", st.tuples(
        st.integers(0, len(BLOCKS) - 1), st.sampled_from(EDIT_KINDS), st.integers(2, 50)),
              _edit_lookalikes, 500, 16_000),
    Dimension("apply_patch: hunk count", st.tuples(
        st.sampled_from(["unified", "codex"]), st.sampled_from(["replace", "insert", "delete"]),
        st.integers(3, 12)), _patch_hunks, 300, 6_400),
    Dimension("apply_patch: hunk size", st.tuples(
        st.sampled_from(["unified", "codex"]), st.sampled_from(["replace", "insert", "delete"])),
              _patch_hunk_size, 2_000, 64_000, scaled=False),
    Dimension("grep_search: line length", st.tuples(
        st.sampled_from(GREP_PATTERNS), st.sampled_from(LONG_LINE_UNITS), st.floats(0, 1)),
              _grep_line_length, 1_000_000, 16_000_000),
    Dimension("grep_search: line count", st.tuples(
        st.sampled_from(GREP_PATTERNS), st.sampled_from(["code", "blank_heavy", "crlf",
                                                         "unicode"]), st.integers(0, 3)),
              _grep_lines, 100_000, 800_000),
    Dimension("grep_search: pattern length", st.tuples(
        st.sampled_from(["alternation", "literal", "class"]), st.booleans()),
              _grep_pattern, 4_000, 128_000),
    Dimension("read_file: line length", st.tuples(
        st.sampled_from([*LONG_LINE_UNITS, "a\r"]), st.sampled_from(["plain", "hashes",
                                                                    "offset"])),
              _read_line_length, 2_000_000, 16_000_000),
    Dimension("read_file: line count", st.tuples(
        st.sampled_from(["code", "blank_heavy", "crlf", "unicode"]),
        st.sampled_from(["default", "all", "end", "hashes"])), _read_lines, 100_000, 1_600_000),
    Dimension("request JSON: nesting depth", st.tuples(
        st.sampled_from(["array", "object"]), st.sampled_from(["known", "unknown"])),
              _json_depth, 100, 200_000),
    Dimension("request JSON: string length", st.tuples(
        st.sampled_from(JSON_UNITS), st.sampled_from(["write_file", "read_file"])),
              _json_string, 500_000, 8_000_000, scaled=False),
    Dimension("truncation: text size", st.tuples(
        st.integers(0, 200), st.integers(0, 50), st.sampled_from([10, 2000, 100_000])),
              _truncation, 1_000_000, 16_000_000),
]


# ---- measuring ---------------------------------------------------------------------------------

class Growth:
    """What one measurement found: CPU seconds at n and 4n, memory peaks at n/16 and n/4 (0
    when the time already failed: tracing a quadratic call is slow and adds nothing)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.n: int = values["n"]
        self.time_n: float = values["time_n"]
        self.time_4n: float = values["time_4n"]
        self.memory_n: int = values["memory_n"]
        self.memory_4n: int = values["memory_4n"]
        self.outcomes: list[str] = values["outcomes"]
        self.expected: set[str] | None = values["expected"]
        self.cpu: float = values.get("cpu", 0.0)

    def time_ok(self) -> bool:
        if self.time_n >= FLOOR:
            return self.time_4n < TIME_RATIO * self.time_n
        return self.time_4n < TIME_RATIO * FLOOR  # even the largest n is cheap: 4n must be too

    def __repr__(self) -> str:
        return (f"n={self.n}: {self.time_n * 1000:.1f} ms -> {self.time_4n * 1000:.1f} ms at 4n, "
                f"memory {self.memory_n >> 10} KiB at n/16 -> {self.memory_4n >> 10} KiB at n/4, "
                f"outcomes {self.outcomes}, {self.cpu:.2f} s of CPU in all")


class _Sizes:
    """The calls of one shape, built once per size (building is not what is measured)."""

    def __init__(self, dim: Dimension, shape: Any, ws: Path) -> None:
        self.dim, self.shape, self.ws = dim, shape, ws
        self.built: dict[int, tuple[Callable[[], None], Call, set[str] | None]] = {}

    def get(self, n: int) -> tuple[Callable[[], None], Call, set[str] | None]:
        if n not in self.built:
            self.built = {size: b for size, b in self.built.items()
                          if n in (size * 4, size // 4)}  # keep n with 4n, drop the rest
            self.built[n] = self.dim.build(self.shape, n, self.ws)
        return self.built[n]

    def time(self, n: int) -> tuple[float, str]:
        setup, call, _ = self.get(n)
        setup()
        gc.collect()
        started = time.process_time()
        outcome = call()
        return time.process_time() - started, outcome

    def peak(self, n: int) -> int:
        setup, call, _ = self.get(n)
        setup()
        gc.collect()
        tracemalloc.start()
        try:
            call()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def _measure_here(dim: Dimension, shape: Any, ws: Path) -> dict[str, Any]:
    # Durability costs the disk's time, not ours, and a loaded CI disk makes it slow.
    os.fsync = lambda fd: None
    _Sizes(dim, shape, ws).time(max(1, dim.start // 64))  # imports and caches: not measured
    gc.freeze()  # what exists now is never collected again: a collection costs the call only
    sizes = _Sizes(dim, shape, ws)
    most = dim.most * (SCALE if dim.scaled else 1)
    n = dim.start
    spent, outcome = sizes.time(n)
    while spent < FLOOR and n * 8 <= most:
        n *= 2
        spent, outcome = sizes.time(n)
    time_n, time_4n = spent, float("inf")
    outcomes = [outcome]
    best = float("inf")
    for pair in range(REPEATS):
        # One run at 4n against four runs at n right after it: both spans are about as long,
        # so whatever else runs on the machine (another test worker on the same core) slows
        # both alike; the pair with the least ratio counts (noise only ever adds).
        spent, outcome = sizes.time(4 * n)
        outcomes.append(outcome)
        four = sum(sizes.time(n)[0] for _ in range(4)) / 4
        if spent / max(four, FLOOR / 100) < best:
            best = spent / max(four, FLOOR / 100)
            time_4n, time_n = spent, four
        ratio = best
        # Another pair only near the bound; a ratio beyond it is confirmed once, since the
        # first run at 4n may pay for what n's earlier runs cached (a compiled pattern).
        if ratio < CLEARLY_LINEAR or (pair and ratio > CLEARLY_SUPERLINEAR):
            break
    values: dict[str, Any] = {
        "n": n, "time_n": time_n, "time_4n": time_4n, "outcomes": sorted(set(outcomes)),
        "expected": sizes.get(n)[2], "memory_n": 0, "memory_4n": 0}
    if Growth(values).time_ok():  # memory needs no floor: n/16 and n/4 (tracing costs 3x)
        values.update(memory_n=sizes.peak(max(1, n // 16)), memory_4n=sizes.peak(max(1, n // 4)))
    return values


def _child(connection: Any, dim: Dimension, shape: Any, ws: Path) -> None:
    try:
        values = _measure_here(dim, shape, ws)
        values["cpu"] = time.process_time()  # the whole measurement's, for VERBOSE
        connection.send(("done", values))
    except BaseException as exc:  # reported to the parent, which fails the test with it
        connection.send(("raised", f"{type(exc).__name__}: {exc}"))


def measure(dim: Dimension, shape: Any, ws: Path, hard_seconds: float = HARD_SECONDS) -> Growth:
    """Measure ``shape`` of ``dim`` in a forked child; a child still running after
    ``hard_seconds`` is killed and the measurement fails."""
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sending, dim, shape, ws), daemon=True)
    child.start()
    sending.close()
    try:
        if not receiving.poll(hard_seconds):
            raise AssertionError(f"{dim.name}: {shape!r} did not finish within "
                                 f"{hard_seconds:.0f} s: a hang, or cost far beyond linear")
        status, value = receiving.recv()
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiving.close()
    if status != "done":
        raise AssertionError(f"{dim.name}: {shape!r}: the measurement raised {value}")
    return Growth(value)


def check_growth(dim: Dimension, shape: Any, ws: Path, hard_seconds: float = HARD_SECONDS,
                 measurements: int = MEASUREMENTS) -> Growth:
    growth = measure(dim, shape, ws, hard_seconds)
    for _ in range(measurements - 1):
        # A time over the bound is measured again from scratch: the other test workers share
        # the caches and the memory bus, which slows the bigger size more. A call that really
        # grows faster than linearly is over the bound every time.
        if growth.time_ok():
            break
        again = measure(dim, shape, ws, hard_seconds)
        if again.time_4n / max(again.time_n, 1e-9) < growth.time_4n / max(growth.time_n, 1e-9):
            growth = again
    if VERBOSE:
        print(f"{dim.name}: {shape!r}: {growth}")
    if growth.expected is not None:
        assert set(growth.outcomes) <= growth.expected, (dim.name, shape, growth)
    assert growth.time_ok(), \
        f"{dim.name}: {shape!r}: 4x the input took more than {TIME_RATIO:g}x the time: {growth}"
    assert growth.memory_4n < MEMORY_RATIO * growth.memory_n + MEMORY_SLACK, \
        f"{dim.name}: {shape!r}: 4x the input took more than {MEMORY_RATIO:g}x the memory: {growth}"
    return growth


# ---- the invariant -------------------------------------------------------------------------------

def shared_budget(examples: int) -> Callable[[F], F]:
    """``budget.invariant`` for a test parametrized by dimension: in the long mode the
    module's minutes are shared by its dimensions (``ZBTOOLS_INVARIANT_MINUTES=17`` gives each
    one minute), so that the module as a whole takes the minutes asked for."""

    def decorate(test: F) -> F:
        searched = invariant_settings(examples)(test)
        if not LONG:
            return searched

        @functools.wraps(searched)
        def repeated(*args: Any, **kwargs: Any) -> None:
            end = time.monotonic() + MINUTES * 60 / len(DIMENSIONS)
            while True:
                searched(*args, **kwargs)
                if time.monotonic() >= end:
                    return

        return repeated  # type: ignore[return-value]

    return decorate


@pytest.mark.parametrize("dim", DIMENSIONS, ids=[d.name for d in DIMENSIONS])
@shared_budget(examples=2)
@given(data=st.data())
def test_doubling_an_input_at_most_about_doubles_time_and_memory(
        dim: Dimension, data: st.DataObject, ws: Path) -> None:
    shape = data.draw(dim.shapes, label="shape")
    check_growth(dim, shape, ws)


FOUND = [  # shapes that broke the bound, kept (each fixed in the product unless noted)
    ("apply_edit: old_text size", ("blank_heavy", "typo")),  # difflib in the miss's diff
    ("apply_edit: old_text size", ("repeats", "typo")),  # a big file's keys, 200 times over
    ("apply_edit: line length", ("ab ", "miss", 0.1)),  # near_miss: Indel on 1 MB lines
    ("apply_edit: line length", ("\u00e9t\u00e9 ", "indentation", 0.0)),  # too_large at 4n
]


@pytest.mark.parametrize("name,shape", FOUND, ids=[f"{n}: {s!r}" for n, s in FOUND])
def test_the_shapes_found_by_generated_inputs_stay_linear(
        name: str, shape: Any, ws: Path) -> None:
    check_growth(next(d for d in DIMENSIONS if d.name == name), shape, ws)


# ---- mutation checks -----------------------------------------------------------------------------

def _quadratic_words(text: str) -> list[str]:
    """The guardrail's split as it once was: shlex, which grows a word a character at a time."""
    import shlex

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def test_a_quadratic_guardrail_tokenizer_is_caught(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug of issue 27 planted again: at 80,000 characters the old split still looks
    linear (the ratio is about 9); at 4x that, it is far beyond the bound."""
    from zbtools.core.processes import guardrail

    monkeypatch.setattr(guardrail, "_words", _quadratic_words)
    dim = Dimension("guardrail: word length (planted)", DIMENSIONS[0].shapes, _guard_word,
                    80_000, 320_000)
    def search() -> None:  # measured once: a real quadratic is over the bound every time
        check_growth(dim, ("echo ", "a", ""), ws, measurements=1)

    failure = planted_bug_is_caught(search)
    assert "took more than 8x the time" in str(failure)


def test_a_hang_fails_instead_of_blocking(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.processes import guardrail

    def forever(text: str) -> list[str]:
        while True:
            time.sleep(1)

    monkeypatch.setattr(guardrail, "_words", forever)
    started = time.monotonic()
    def search() -> None:
        check_growth(DIMENSIONS[0], ("echo ", "a", ""), ws, hard_seconds=1)

    failure = planted_bug_is_caught(search)
    assert "did not finish within 1 s" in str(failure)
    assert time.monotonic() - started < 30
