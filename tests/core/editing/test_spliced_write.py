"""The engine's result written as a splice of the file's bytes (issue 16): the bytes around
the changed lines are copied, only the changed lines are encoded, and the diff comes from an
excerpt. Held to the whole-text way (join, encode, diff the whole texts) on every outcome:
bytes on disk, report, diff, sha256, warnings, undo."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zbtools.core.call.context import Context
from zbtools.core.editing import cycle, matching
from zbtools.core.files.workspace import Workspace

LINES = ["def f(x):", "    return x", "", "    pass", "é = 'café'", "x = 1", "  # note",
         "\u2018quoted\u2019 = 2", "y = [1, 2]"]


def _run(root: Path, name: str, requests: list[tuple[str, str]], dry_run: bool,
         spliced: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    if spliced:
        monkeypatch.undo()
    else:
        monkeypatch.setattr(cycle, "_spliced_edit", lambda *args, **kwargs: None)
    workspace = Workspace(str(root))
    ctx = Context(workspace)
    try:
        out = cycle.edit_file_text(
            ctx, name, lambda t: matching.apply_requests(
                t, [matching.Request(old, new) for old, new in requests]),
            [new for _, new in requests], expected_sha256=None, dry_run=dry_run)
    except Exception as exc:
        return ("error", getattr(exc, "code", type(exc).__name__), str(exc))
    finally:
        workspace.close()
        monkeypatch.undo()
    return ("ok", out.applied.reports, out.diff, out.sha256, out.changed,
            out.applied.warnings, ctx.warnings)


def _both(tmp_path: Path, data: bytes, requests: list[tuple[str, str]],
          monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """Dry run, then a real write, each way on a fresh copy: the same answers and bytes."""
    answers = []
    for spliced in (True, False):
        root = tmp_path / ("spliced" if spliced else "whole")
        root.mkdir(exist_ok=True)
        (root / "f.py").write_bytes(data)
        dry = _run(root, "f.py", requests, True, spliced, monkeypatch)
        wet = _run(root, "f.py", requests, False, spliced, monkeypatch)
        answers.append((dry, wet, (root / "f.py").read_bytes()))
    assert answers[0] == answers[1]
    dry, wet, after = answers[0]
    if wet[0] == "ok" and wet[4]:
        assert wet[3] == dry[3] == hashlib.sha256(after).hexdigest()
    return wet


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=30),
       st.sampled_from(["\n", "\r\n"]), st.booleans(), st.booleans(), st.data())
def test_a_spliced_write_is_the_whole_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], eol: str,
        final_eol: bool, bom: bool, data: st.DataObject) -> None:
    text = eol.join(lines) + (eol if final_eol else "")
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    view = text.replace("\r\n", "\n")
    requests = []
    for _ in range(data.draw(st.integers(1, 2))):
        a = data.draw(st.integers(0, len(view)))
        b = data.draw(st.integers(a, min(len(view), a + 60)))
        old = view[a:b]
        if data.draw(st.booleans()):  # whole lines
            a = view.rfind("\n", 0, a) + 1
            stop = view.find("\n", b)
            old = view[a:len(view) if stop == -1 else stop + 1]
        if not old.strip():
            continue
        kind = data.draw(st.sampled_from(["replace", "insert", "delete", "indent", "typo"]))
        new = {"replace": old.replace("x", "z"), "insert": old + "    added = 1\n",
               "delete": "", "indent": "\n".join("  " + s for s in old.split("\n")),
               "typo": old}[kind]
        if kind == "typo":  # a near miss in old text, a change in new text
            old = old.replace("return", "retrun", 1)
            new = new.replace("x", "w")
        if kind == "indent":  # old text re-indented: the indentation tier finds it
            old, new = "\n".join("    " + s for s in old.split("\n")), new + "# e\n"
        requests.append((old, new))
    if requests:
        _both(tmp_path, raw, requests, monkeypatch)


def test_a_change_of_one_line_in_a_big_file_is_spliced(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"value_{i} = {i}  # ünïcode" if i % 97 == 0 else f"value_{i} = {i}"
             for i in range(60_000)]
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    used: list[bool] = []
    real = cycle._spliced_edit

    def spy(*args: Any, **kwargs: Any) -> Any:
        answer = real(*args, **kwargs)
        used.append(answer is not None)
        return answer

    monkeypatch.setattr(cycle, "_spliced_edit", spy)
    root = tmp_path / "one"
    root.mkdir()
    (root / "f.py").write_bytes(raw)
    ws = Workspace(str(root))
    try:
        # re-indented: the indentation tier answers, not the bytes fast path
        out = cycle.edit_file_text(
            Context(ws), "f.py", lambda t: matching.apply_requests(
                t, [matching.Request("  value_30071 = 30071\n  value_30072 = 30072\n",
                                     "  value_30071 = -1\n  value_30072 = 30072\n")]),
            [""], expected_sha256=None, dry_run=False)
    finally:
        ws.close()
    assert used == [True]
    after = (root / "f.py").read_bytes()
    assert after == raw.replace(b"value_30071 = 30071\n", b"value_30071 = -1\n")
    assert out.sha256 == hashlib.sha256(after).hexdigest()
    assert out.applied.reports[0]["matched_with"] == "indentation"
    assert out.diff.splitlines()[2] == "@@ -30069,7 +30069,7 @@"
    monkeypatch.undo()
    assert _both(tmp_path, raw, [("  value_5 = 5\n", "  value_5 = 6\n")], monkeypatch)[0] == "ok"
