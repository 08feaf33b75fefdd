"""Text that looks like pasted line numbers but is the file's own (times, a dict's numeric keys,
TSV rows, numbered lists) keeps its digits: old text found word for word in the file is
replaced exactly, through the real entry point, whatever tool or form of edit carries it.
Line-number prefixes are stripped only from old text the file does not hold as sent
(docs/editing.md)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.editing.matching import requests
from zbtools.core.editing.matching.requests import strip_line_numbers

SEPARATORS = ["\t", ":", ": ", " |", "| ", "\u2192", " \u2192", ":9f3a1c\t"]
WORDS = st.sampled_from(["lunch", "one", '"two",', "Not Found", "x = 1", "", "TODO", "a\tb"])


@st.composite
def numbered_files(draw: st.DrawFn) -> tuple[str, str, str]:
    """(file text, old text: a run of its numbered-looking lines, new text)."""
    first = draw(st.integers(0, 120))
    sep = draw(st.sampled_from(SEPARATORS))
    indent = draw(st.sampled_from(["", "    ", "\t"]))
    rows = [f"{indent}{first + i}{sep}{draw(WORDS)}"
            for i in range(draw(st.integers(1, 5)))]
    before = draw(st.lists(st.sampled_from(["meeting", "CODES = {", "# notes", "def f():"]),
                           max_size=3))
    after = draw(st.lists(st.sampled_from(["}", "end", "", "return 0"]), max_size=3))
    text = "\n".join([*before, *rows, *after]) + "\n"
    start = draw(st.integers(0, len(rows) - 1))
    stop = draw(st.integers(start + 1, len(rows)))
    old = "\n".join(rows[start:stop]) + draw(st.sampled_from(["", "\n"]))
    new = draw(st.sampled_from([
        old.replace(str(first + start), str(first + start + 1), 1),  # the number changes
        "".join(row + "\n" for row in rows[start:stop]).upper(),
        "",
        f"{indent}{first + start}{sep}changed",
    ]))
    return text, old, new


def edit(text: str, old: str, new: str, tool: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="zb-numbered-") as tmp:
        path = Path(tmp) / "f.txt"
        path.write_text(text, encoding="utf-8")
        args: dict[str, object]
        if tool == "edit_file":
            args = {"path": "f.txt", "old_content": old, "new_content": new}
        elif tool == "patches":
            tool, args = "apply_edit", {"path": "f.txt",
                                        "patches": [{"old_text": old, "new_text": new}]}
        else:
            args = {"path": "f.txt", "old_text": old, "new_text": new}
        call = run_inprocess([tool], stdin=json.dumps(args), workspace=Path(tmp))
        return bool(call.json["ok"]), path.read_text(encoding="utf-8")


CHECKED: list[bool] = []  # per example: whether old text looked numbered (non-vacuity)


def check(case: tuple[str, str, str], tool: str) -> None:
    text, old, new = case
    if text.count(old) != 1 or old == new or not old.strip():
        return  # ambiguous or empty: not this property's
    CHECKED.append(strip_line_numbers(old)[1] is not None)
    ok, after = edit(text, old, new, tool)
    assert ok, (text, old, new)
    assert after == text.replace(old, new, 1), (tool, old, new, after)


def search() -> None:
    @invariant(examples=120)
    @example(case=("meeting\n12:30 lunch\n", "12:30 lunch", "13:00 lunch"), tool="apply_edit")
    @given(case=numbered_files(), tool=st.sampled_from(["apply_edit", "edit_file", "patches"]))
    def numbered_text_is_replaced_exactly(case: tuple[str, str, str], tool: str) -> None:
        check(case, tool)

    numbered_text_is_replaced_exactly()


def test_numbered_looking_text_the_file_holds_is_replaced_exactly() -> None:
    CHECKED.clear()
    search()
    assert sum(CHECKED) >= 40, f"only {sum(CHECKED)} of {len(CHECKED)} looked numbered"


def test_prefixes_the_file_does_not_hold_are_still_stripped(tmp_path: Path) -> None:
    """A block pasted from a read, prefixes and all, still lands on the file's lines."""
    ok, after = edit("def f():\n    return 1\n", "     2\t    return 1\n",
                     "     2\t    return 2\n", "apply_edit")
    assert ok and after == "def f():\n    return 2\n"


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stripping whenever old text looks numbered (the rule before) breaks the property."""
    from zbtools.core.editing.matching import apply as apply_module

    original = requests.normalize_request
    monkeypatch.setattr(apply_module, "normalize_request",
                        lambda request, present=None: original(request, None))
    planted_bug_is_caught(search)
