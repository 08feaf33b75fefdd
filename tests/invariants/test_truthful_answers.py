"""Invariant 2, truthful answers: what an edit says happened is what happened on the disk.

For generated files (a small vocabulary of code lines, so that blocks repeat, nearly repeat and
stand at several depths; LF or CRLF, with or without a BOM and a final newline) and generated
requests (an exact piece of the file, the same piece with the slips models make, or text the
file lacks; new text of any shape), every ``apply_edit`` answer is held to three oracles that
never look at the engine:

* ``ok`` with ``changed: true``: the result's own diff, applied by the small patcher below to
  the bytes before, gives exactly the bytes after, and ``sha256`` is the file's;
* ``changed: false``: the bytes did not move, and the requested state holds: new text stands
  in the file and old text does not (``already_applied``);
* ``matched_with: exact`` with no transforms: the file equals the plain string replacement of
  old text's one occurrence (line breaks written as the file's);
* a refusal: a documented error code, the bytes as they were.

``write_file`` is held to the same standard: ``changed`` is whether the bytes moved, and
``sha256`` is the file's.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, invariant_settings, planted_bug_is_caught
from zbtools.contract import ERROR_CODES

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

BOM = "\ufeff"
# Lines that repeat, nearly repeat (one character apart) and stand at several depths.
VOCABULARY = [
    "def f(x):", "    return x", "    if (c) {", "        doSomething();", "    }", "}",
    "", "import os", "import sys", "import re", "x = 1", "x = 2", "    x = 1", "\tcall(x)",
    "        y = compute(x, y)", "        y = compute(x, z)", "print(sys.argv)", "# note",
    "class A:", "    def g(self):", "        pass", "  two = 2",
]
MEANINGFUL = 8  # non-space characters a line needs to tell one place from another
EDIT_REFUSALS = {"no_match", "ambiguous_match", "no_change", "edit_conflict",
                 "placeholder_in_new", "overlapping_edits"}


@st.composite
def files(draw: st.DrawFn) -> tuple[str, str, bool]:
    """(text without BOM in the LF view, the line ending, whether a BOM leads)."""
    lines = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=24))
    final = draw(st.booleans())
    text = "\n".join(lines) + ("\n" if final else "")
    return text, draw(st.sampled_from(["\n", "\n", "\r\n"])), draw(st.booleans())


def _slip(draw: st.DrawFn, old: str) -> str:
    """Old text with one of the slips models make."""
    lines = old.split("\n")
    how = draw(st.sampled_from(["dedent", "indent", "typo", "drop", "extra", "tabs", "strip"]))
    if how == "dedent":
        return "\n".join(line[min(4, len(line) - len(line.lstrip(" "))):] for line in lines)
    if how == "indent":
        return "\n".join("    " + line if line else line for line in lines)
    if how == "tabs":
        return old.replace("    ", "\t")
    if how == "strip":
        return old.strip()
    k = draw(st.integers(0, len(lines) - 1))
    if how == "drop" and len(lines) > 1:
        return "\n".join(lines[:k] + lines[k + 1:])
    if how == "extra":
        return "\n".join([*lines[:k], draw(st.sampled_from(VOCABULARY)), *lines[k:]])
    line = lines[k]
    if len(line.strip()) > 2:
        at = draw(st.integers(len(line) - len(line.lstrip()), len(line) - 1))
        return "\n".join([*lines[:k], line[:at] + "q" + line[at + 1:], *lines[k + 1:]])
    return old


@st.composite
def requests(draw: st.DrawFn, text: str) -> tuple[str, str]:
    """(old text, new text) for a file whose LF view is ``text``."""
    kind = draw(st.sampled_from(["lines", "lines", "chars", "slip", "slip", "absent"]))
    lines = text.split("\n")
    if kind == "absent":
        old = "\n".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4)))
    elif kind == "chars":
        a = draw(st.integers(0, max(len(text) - 1, 0)))
        b = draw(st.integers(a, min(len(text), a + 60)))
        old = text[a:b]
    else:
        a = draw(st.integers(0, len(lines) - 1))
        b = draw(st.integers(a + 1, min(len(lines), a + 6)))
        old = "\n".join(lines[a:b])
        if draw(st.booleans()) and b < len(lines):
            old += "\n"
        if kind == "slip":
            old = _slip(draw, old)
    shape = draw(st.sampled_from(["vocab", "rename", "insert", "delete", "empty"]))
    if shape == "vocab":
        new = "\n".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4)))
    elif shape == "rename":
        new = old.replace("x", "renamed").replace("doSomething", "doOther")
    elif shape == "insert":
        added = draw(st.sampled_from(VOCABULARY))
        new = old + "\n" + added if draw(st.booleans()) else added + "\n" + old
    elif shape == "delete":
        kept = old.split("\n")
        new = "\n".join(kept[: max(len(kept) - 1, 0)])
    else:
        new = ""
    return old, new


def _pieces(text: str) -> list[str]:
    """Lines with their LF (a CR before it stays part of the line, as in the diff)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def apply_diff(before: str, diff: str) -> str:
    """Apply a unified diff to ``before``; any line it does not find is an AssertionError."""
    pieces = _pieces(before)
    out: list[str] = []
    cursor = 0
    entries: list[tuple[str, str]] = []
    hunks: list[tuple[int, list[tuple[str, str]]]] = []
    for line in diff.split("\n")[2:]:
        if line.startswith("@@"):
            found = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", line)
            assert found, line
            start, count = int(found[1]), found[2]
            entries = []
            hunks.append((start - 1 if count != "0" else start, entries))
        elif line.startswith("\\"):
            tag, body = entries[-1]
            entries[-1] = (tag, body.removesuffix("\n"))
        elif line:
            entries.append((line[0], line[1:] + "\n"))
    for start, hunk in hunks:
        assert start >= cursor, "hunks out of order"
        out += pieces[cursor:start]
        cursor = start
        for tag, body in hunk:
            if tag in " -":
                assert cursor < len(pieces) and pieces[cursor] == body, (
                    f"diff line {body!r} is not the file's {pieces[cursor:cursor + 1]!r}")
                cursor += 1
            if tag in " +":
                out.append(body)
    return "".join(out + pieces[cursor:])


def _removed_lines_beside(text: str, old: str, new: str) -> list[str]:
    """Lines the edit removes that still stand beside new text in ``text``: while one does,
    the edit is not made, whatever a matcher thinks. A deletion (new text inside old text)
    removes old text's lines before and after new text's: none of the first may stand above
    new text, nor of the second below it, as it is (indentation too) within old text's reach.
    Any other edit removes the lines old text has and new text lacks: none may stand right
    above or below new text (a line of at least ``MEANINGFUL`` characters: "}" tells
    nothing)."""
    core = new.strip("\n")
    lines = text.split("\n")
    first = text[:text.index(core)].count("\n")
    last = first + core.count("\n")
    reach = old.count("\n") + 1
    above = set(lines[max(first - reach, 0):first])
    below = set(lines[last + 1:last + 1 + reach])
    at = old.find(core)
    if new.strip() and at >= 0:
        before = {line for line in old[:at].split("\n") if line.strip()}
        after = {line for line in old[at + len(core):].split("\n") if line.strip()}
        return sorted(before & above | after & below)
    removed = {line.strip() for line in old.split("\n")} - \
        {line.strip() for line in new.split("\n")} - {""}
    nearest = [next((line for line in reversed(lines[:first]) if line.strip()), ""),
               next((line for line in lines[last + 1:] if line.strip()), "")]
    return [line for line in nearest
            if line.strip() in removed and len("".join(line.split())) >= MEANINGFUL]


def _decode(raw: bytes) -> tuple[str, bool]:
    text = raw.decode("utf-8")
    return text.removeprefix(BOM), text.startswith(BOM)


def check_edit(ws: Path, case: tuple[str, str, bool], old: str, new: str) -> dict[str, Any]:
    text, eol, bom = case
    target = ws / "f.txt"
    before = ((BOM if bom else "") + text.replace("\n", eol)).encode("utf-8")
    target.write_bytes(before)
    call = run_inprocess(["apply_edit"], workspace=ws,
                         stdin=json.dumps({"path": "f.txt", "old_text": old, "new_text": new}))
    envelope = call.json
    after = target.read_bytes()
    if not envelope["ok"]:
        code = envelope["error"]["code"]
        assert code in EDIT_REFUSALS, envelope
        assert ERROR_CODES[code][0] == call.code
        assert after == before, "a refused edit changed the file"
        return envelope
    assert call.code == 0
    result = envelope["result"]
    assert result["sha256"] == hashlib.sha256(after).hexdigest()
    before_text, had_bom = _decode(before)
    after_text, has_bom = _decode(after)
    assert had_bom == has_bom, "the BOM did not survive"
    if not result["changed"]:
        assert after == before, "changed: false, but the bytes moved"
        assert result["diff"] == ""
        if result["matched_with"] == "already_applied":
            lf_before = before_text.replace("\r\n", "\n")
            assert new.strip("\n") in lf_before, "already applied, but new text is not there"
            assert old not in lf_before, "already applied, but old text still stands verbatim"
            assert not _removed_lines_beside(lf_before, old, new), (
                "already applied, but a line the edit removes still stands beside new text")
        # else a tier matched and its rendering is the file's own text: nothing to change
        return envelope
    assert after != before, "changed: true, but the bytes did not move"
    assert apply_diff(before_text, result["diff"]) == after_text, "the diff lies"
    if result["matched_with"] == "exact":
        # (no request drawn here carries line-number prefixes: nothing to strip from old text)
        assert result["edits"][0]["transforms"] == [], "an exact match that was transformed"
        crlf = "\r\n" in before_text  # a file without a line break writes LF
        lf_before = before_text.replace("\r\n", "\n") if crlf else before_text
        assert lf_before.count(old) == 1, "exact, but old text is not there once"
        plain = lf_before.replace(old, new, 1)
        if crlf:
            plain = plain.replace("\n", "\r\n")
        assert after_text == plain, "an exact match that is not the plain replacement"
    return envelope


@st.composite
def edit_cases(draw: st.DrawFn) -> tuple[tuple[str, str, bool], str, str]:
    case = draw(files())
    old, new = draw(requests(case[0]))
    return case, old, new


ROW_REINDENTED = (("    if (c) {\n        doSomething();\n    }\n", "\n", False), "doSomething();",
                  "doSomethingElse();\n        doAnotherThing();")
ROW_ALREADY = (("import os\nimport sys\n\nprint(sys.argv)\n", "\n", False),
               "import os\nimport re\nimport sys", "import sys")


FOUND_OLD_LINE_BESIDE = (("def f(x):\n    return x\n    return x", "\n", False),
                         "def f(x):\ndef f(x):", "    return x\n    return x")
FOUND_DELETED_TWO_ABOVE = (("def f(x):\n        doSomething();", "\n", False),
                           "        doSomething();\ndef f(x):", "        doSomething();")


@invariant(examples=300)
@given(edit_cases())
@example(ROW_REINDENTED)
@example(ROW_ALREADY)
@example(FOUND_OLD_LINE_BESIDE)  # found by the long mode: "done" with old's line right above
@example(FOUND_DELETED_TWO_ABOVE)  # found by the long mode: a positional deletion is done
def test_every_edit_answer_is_what_happened_on_disk(
        ws: Path, drawn: tuple[tuple[str, str, bool], str, str]) -> None:
    case, old, new = drawn
    check_edit(ws, case, old, new)


@invariant(examples=60)
@given(content=st.text(st.sampled_from("ab\n\r\t é"), max_size=40),
       existing=st.one_of(st.none(), st.text(st.sampled_from("ab\n\r é"), max_size=40)))
def test_write_file_changed_says_whether_the_bytes_moved(
        ws: Path, content: str, existing: str | None) -> None:
    target = ws / "w.txt"
    if existing is None:
        target.unlink(missing_ok=True)
    else:
        target.write_bytes(existing.encode("utf-8"))
    before = target.read_bytes() if target.exists() else None
    call = run_inprocess(["write_file"], workspace=ws,
                         stdin=json.dumps({"path": "w.txt", "content": content}))
    result = call.result
    after = target.read_bytes()
    assert result["sha256"] == hashlib.sha256(after).hexdigest()
    assert result["changed"] == (after != before)


def test_the_exact_tier_catches_a_planted_reindent(
        ws: Path, monkeypatch: Any) -> None:
    """Mutation check: exact matches re-indented again and still called exact (the bug this
    invariant was written for)."""
    from zbtools.core.editing.matching import apply, merge

    real = merge.render_edit

    def reindenting(model: Any, located: Any) -> Any:
        tier = located.tier
        monkeypatch.setattr(merge, "_whole_line_drift", lambda *_: tier == "exact")
        edit = real(model, located)
        located.tier = tier
        return edit

    monkeypatch.setattr(apply, "render_edit", reindenting)

    @invariant_settings(examples=300, database=None)
    @given(edit_cases())
    @example(ROW_REINDENTED)
    def search(drawn: tuple[tuple[str, str, bool], str, str]) -> None:
        check_edit(ws, *drawn)

    assert isinstance(planted_bug_is_caught(search), AssertionError)


def test_already_applied_catches_a_planted_guess(ws: Path, monkeypatch: Any) -> None:
    """Mutation check: "already applied" whenever new text stands once and old text is not
    there verbatim, ahead of the near miss (the guess this invariant was written for)."""
    from zbtools.core.editing.matching import candidates, ladder, nearmiss

    def guess(model: Any, request: Any) -> Any:
        found = candidates.find_exact(model, request.new.strip("\n"), limit=2)
        return found[0] if len(found) == 1 and request.old not in model.lf_view else None

    real_near = nearmiss.find_near
    monkeypatch.setattr(ladder, "already_applied", guess)
    monkeypatch.setattr(ladder, "find_near", lambda model, request: None if guess(
        model, request) else real_near(model, request))

    @invariant_settings(examples=300, database=None)
    @given(edit_cases())
    @example(ROW_ALREADY)
    def search(drawn: tuple[tuple[str, str, bool], str, str]) -> None:
        check_edit(ws, *drawn)

    failure = planted_bug_is_caught(search)
    assert "already applied" in str(failure)
