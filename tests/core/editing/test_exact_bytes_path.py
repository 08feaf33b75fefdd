"""The exact edit on bytes (issue 16): for every file size, a plain exact edit is spliced on the
file's bytes, and its answer is the engine's answer, byte for byte, report for report.

Each case runs twice in dry-run mode: through ``edit_file_text`` with ``simple`` (the bytes path
first) and without it (the engine only); the outcome (report, diff, sha256, warnings, or the
error) must be the same, and the cases say which of them the bytes path must take itself.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zbtools.core.call.context import Context
from zbtools.core.editing import cycle, matching
from zbtools.core.files.workspace import Workspace


def _outcome(ws: Path, name: str, old: str, new: str, simple: bool) -> tuple[Any, ...]:
    workspace = Workspace(str(ws))
    ctx = Context(workspace)
    try:
        out = cycle.edit_file_text(
            ctx, name, lambda t: matching.apply_requests(t, [matching.Request(old, new)]),
            [new], expected_sha256=None, dry_run=True, simple=(old, new) if simple else None)
    except Exception as exc:  # the error itself is compared
        return ("error", getattr(exc, "code", type(exc).__name__), str(exc))
    finally:
        workspace.close()
    return ("ok", out.applied.reports, out.diff, out.sha256, out.changed,
            out.applied.warnings)


def _compare(ws: Path, name: str, old: str, new: str, monkeypatch: pytest.MonkeyPatch
             ) -> bool:
    """Both ways agree; returns whether the bytes path answered by itself."""
    used: list[bool] = []
    real = cycle._bytes_fast_path

    def spy(*args: Any, **kwargs: Any) -> Any:
        answer = real(*args, **kwargs)
        used.append(answer is not None)
        return answer

    monkeypatch.setattr(cycle, "_bytes_fast_path", spy)
    fast = _outcome(ws, name, old, new, True)
    assert fast == _outcome(ws, name, old, new, False), (old, new)
    return used == [True]


BLOCK = "def close(self):\n    self.conn.close()\n    return None\n"


@pytest.mark.parametrize(("text", "old", "new", "bytes_path"), [
    # the plain case, partial lines, a whole block, a deletion, an edit of the last line
    ("x = 1\ny = 2\n", "y = 2", "y = 3", True),
    ("x = 1\ny = 2\n", "x = 1\n", "", True),
    ("a\nb", "b", "c\nd", True),
    (BLOCK, "    self.conn.close()\n    return None\n", "    pass\n", True),
    # the block stands again, indented otherwise: the engine warns of the look-alike
    (BLOCK + "class B:\n    " + BLOCK.replace("\n    ", "\n        "), BLOCK, BLOCK + "#\n",
     False),
    # its longest line stands elsewhere, the rest does not: still the bytes path
    (BLOCK + "other()\n    self.conn.close()\n", BLOCK, BLOCK + "#\n", True),
    # an insertion already made, before or after old text
    ("a = 1\nb = 2\nc = 3\n", "a = 1\n", "a = 1\nb = 2\n", False),
    ("a = 1\nb = 2\nc = 3\n", "c = 3\n", "b = 2\nc = 3\n", False),
    # one line sent less indented than the file has it
    ("if x:\n    call_something()\n", "call_something()\n", "call_other()\n", False),
    # CRLF files, line-number prefixes, placeholders, absent and ambiguous old text
    ("a\r\nb\r\n", "b", "c", False),
    ("x = 1\ny = 2\n", "     2\ty = 2", "y = 3", False),
    ("x = 1\ny = 2\n", "y = 2\n", "y = 2\n# ... rest of code\n", False),
    ("x = 1\ny = 2\n", "z = 3", "z = 4", False),
    ("x = 1\nx = 1\n", "x = 1", "x = 2", False),
    # not UTF-8 (the engine's guessed encoding decides), a BOM, non-ASCII text
    (b"caf\xe9 = 1\nx = 2\n", "x = 2", "x = 3", False),
    ("\ufeffx = 1\ny = 2\n", "x = 1", "x = 0", True),
    ("s = 'héllo'\nt = 1\n", "t = 1", "t = 'wörld'", True),
])
def test_the_bytes_path_answers_as_the_engine_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | bytes, old: str, new: str,
        bytes_path: bool) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    (tmp_path / "f.py").write_bytes(data)
    assert _compare(tmp_path, "f.py", old, new, monkeypatch) is bytes_path


def test_random_exact_edits_of_real_code_agree_with_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    source = Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py"
    text = source.read_text(encoding="utf-8")
    (tmp_path / "t.py").write_text(text, encoding="utf-8", newline="")
    rng = random.Random(16)
    took = 0
    for _ in range(150):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.choice([3, 12, 60, 300]))
        if rng.random() < 0.5:  # whole lines
            a = text.rfind("\n", 0, a) + 1
            stop = text.find("\n", b)
            b = len(text) if stop == -1 else stop + 1
        old = text[a:b]
        new = rng.choice([old + "    added = 1\n", "# added\n" + old, old.replace("e", "E", 1),
                          "", old[: len(old) // 2]])
        took += _compare(tmp_path, "t.py", old, new, monkeypatch)
    assert took >= 50  # most unique exact edits take the bytes path


@pytest.mark.parametrize("probe_hits", [64, 1])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["x = 1", "    x = 1", "  if x:", "if x:", "", "y = 22222222",
                                 "    y = 22222222", "xx"]), min_size=2, max_size=25),
       st.data())
def test_repeated_and_look_alike_lines_agree_with_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe_hits: int, lines: list[str],
        data: st.DataObject) -> None:
    """Old text located and its look-alikes found in one scan for its longest line (or, past
    ``PROBE_HITS`` occurrences of that line, with ``bytes.find``): overlapping and repeated
    occurrences, blocks standing again at another indentation, partial lines."""
    monkeypatch.setattr(cycle, "PROBE_HITS", probe_hits)
    text = "\n".join(lines) + "\n"
    (tmp_path / "t.py").write_text(text, encoding="utf-8", newline="")
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    if data.draw(st.booleans()):  # whole lines
        a = text.rfind("\n", 0, a) + 1
        stop = text.find("\n", b - 1)
        b = len(text) if stop == -1 else stop + 1
    old = text[a:b]
    new = data.draw(st.sampled_from([old + "z = 3\n", "", old.replace("x", "w"),
                                     old[: len(old) // 2]]))
    if old.strip() and old != new:
        _compare(tmp_path, "t.py", old, new, monkeypatch)


def test_a_change_that_slides_past_its_context_between_repeated_lines_gets_the_whole_diff(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The removed lines can be read as lines 4-5 or 5-6: the whole file's diff shows the
    # latter, with a context line the bytes path's excerpt did not hold (found by hypothesis).
    lines = ["x = 1", "x = 1", "x = 1", "y = 22222222", "x = 1", "y = 22222222", "    x = 1",
             "x = 1", "x = 1"]
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    monkeypatch.setattr(cycle, "PROBE_HITS", 1)
    _compare(tmp_path, "t.py", " = 1\ny = 22222222\nx", "", monkeypatch)
