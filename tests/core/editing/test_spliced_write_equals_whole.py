"""Adversarial review of issue 16's session-7 changes: the spliced write, the lazily split file
model and the bytes fast path's probe scan, each held to the way it replaced.

* The spliced write (``cycle._spliced_edit``) against the whole-text write (the same call with
  ``_spliced_edit`` returning None): through the real tools (``apply_edit`` with patches,
  ``insert_text``, ``edit_file``, ``replace_all``) and ``undo``, on BOM files, CRLF / LF / lone
  CR mixes, no final newline, multi-byte characters before and around the edit, U+2028, U+0085
  and form feeds (where ``str.splitlines`` would break a line), repeated lines around the edit.
  Bytes on disk, the result (report, diff, sha256), warnings, and the bytes after ``undo``.
* ``FileModel`` with ``LazyLines`` and the lazy index (``LAZY_MIN_LINES`` and
  ``LAZY_CHUNK_CHARS`` made tiny, so small texts take the lazy ways) against the eager model
  (``LAZY_MIN_LINES`` huge), for every tier, the misses and their diagnoses.
* The bytes fast path (``cycle._bytes_fast_path``) with its probe scan against the engine:
  probes inside other lines, overlapping occurrences, ``PROBE_HITS`` 0, 1, 2 and 64, BOM files.
* Near misses (``nearmiss._near_starts``): two equally near windows must be ambiguous.

The review found six bugs, all fixed since: a hard link made while the matcher ran went
unreported by the spliced write; three BOM cases of the bytes fast path (a block on line 1, a
look-alike on line 1, line 1 sent less indented); two equally near windows of which the near
miss saw one (``nearmiss._near_starts`` cut its fallback short), on the lazy model only since
this session and on the eager one before it. Their tests follow.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from zbtools.core.call.context import Context
from zbtools.core.editing import cycle, matching
from zbtools.core.editing.matching import (
    MatchError,
    Request,
    apply_requests,
    filemodel,
    lazylines,
    linekeys,
)
from zbtools.core.files import hashing
from zbtools.core.files.workspace import Workspace

pytestmark = pytest.mark.slow  # generated files, every tool, both write paths

BOM = b"\xef\xbb\xbf"


def _recording(real: Callable[..., Any]) -> tuple[Callable[..., Any], list[bool]]:
    """``real`` wrapped to note, call by call, whether it answered (not None)."""
    used: list[bool] = []

    def spy(*a: Any, **k: Any) -> Any:
        answer = real(*a, **k)
        used.append(answer is not None)
        return answer

    return spy, used


# ---------------------------------------------------------------------------------------------
# 1. The spliced write against the whole-text write, through the tools and undo


def _call(root: Path, state: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """One in-process call of ``tool``; its envelope (``undo``'s time stamp dropped)."""
    done = run_inprocess([tool], stdin=json.dumps(args), workspace=root,
                         env={"ZBTOOLS_STATE_DIR": str(state)})
    envelope: dict[str, Any] = done.json
    if envelope.get("ok") and tool == "undo":
        envelope["result"].pop("undone_at", None)
    envelope["exit"] = done.code
    return envelope


def _tool_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, tool: str,
               args: dict[str, Any], name: str = "f.txt") -> tuple[dict[str, Any], bool]:
    """``tool`` on ``data`` (dry run, then for real, then ``undo``), once with the spliced
    write and once the whole-text way, each in its own workspace and state: the same
    envelopes and the same bytes at every step. Returns the real call's envelope and whether
    the spliced write answered it."""
    answers = []
    spy, used = _recording(cycle._spliced_edit)

    for mode in ("spliced", "whole"):
        base = tmp_path / f"{mode}-{len(list(tmp_path.iterdir()))}"
        root, state = base / "ws", base / "state"
        root.mkdir(parents=True)
        (root / name).write_bytes(data)
        with monkeypatch.context() as patch:
            patch.setattr(cycle, "_spliced_edit",
                          spy if mode == "spliced" else lambda *a, **k: None)
            dry = _call(root, state, tool, {"path": name, **args, "dry_run": True})
            assert (root / name).read_bytes() == data  # a dry run writes nothing
            wet = _call(root, state, tool, {"path": name, **args})
            after = (root / name).read_bytes()
            undo = _call(root, state, "undo", {"path": name})
            restored = (root / name).read_bytes()
        answers.append((dry, wet, after, undo, restored))
    assert answers[0] == answers[1]
    dry, wet, after, undo, restored = answers[0]
    if wet["ok"] and wet["result"]["changed"]:
        assert wet["result"]["sha256"] == dry["result"]["sha256"] == \
            hashlib.sha256(after).hexdigest()
        assert undo["ok"], undo
        assert restored == data  # undo brings back the exact original bytes
    return wet, any(used)


def _keep_lines(text: str) -> list[str]:
    """``text``'s lines with their LF (only LF breaks a line, as the engine sees it)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _patches(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"patches": [{"old_text": old, "new_text": new} for old, new in pairs]}


# Lines that stress the byte offsets (1- to 4-byte characters), the line split (U+2028, NEL,
# form feed and a lone CR are content, not line breaks) and the diff's alignment (repeats).
POOL = ["x = 1", "x = 1", "def f(x):", "    return x", "", "é = 'café'",
        "日本語 = '文字化け'", "emoji = '🎉🐍𝄞'", "a\u2028b = 2", "c\x85d = 3", "\x0cpage = 4",
        "lone\rcr = 5", "  # note", "\u2018quoted\u2019 = 6", "y = [1, 2]", "}", "}"]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=24),
       st.lists(st.sampled_from(["\n", "\r\n"]), min_size=24, max_size=24),
       st.booleans(), st.booleans(), st.data())
def test_a_spliced_write_is_the_whole_write_for_any_tool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], eols: list[str],
        final_eol: bool, bom: bool, data: st.DataObject) -> None:
    """Random files (mixed endings, multi-byte characters, U+2028 / NEL / form feed / lone
    CR, repeated lines), random edits through apply_edit (1-3 patches), insert_text and
    edit_file: the spliced write gives what the whole-text write gives, undo included."""
    text = "".join(line + eol for line, eol in zip(lines, eols, strict=False))
    if not final_eol:
        text = text[:-len(eols[len(lines) - 1])]
    raw = (BOM if bom else b"") + text.encode("utf-8")
    view = text.replace("\r\n", "\n")
    tool = data.draw(st.sampled_from(["apply_edit", "apply_edit", "insert_text", "edit_file"]))
    if tool == "insert_text":
        count = len(matching.FileModel(view).lines)
        content = data.draw(st.sampled_from(["ins = 1", "ins = 'ü🎉'\n", "a\nb\n", "\n"]))
        where: dict[str, Any] = data.draw(st.sampled_from(
            [{"insert_line": 0}, {"insert_line": count}, {"position": "end"},
             {"position": "start"}, {"insert_line": count // 2}]))
        _tool_both(tmp_path, monkeypatch, raw, tool, {"content": content, **where})
        return
    pairs = []
    kept = _keep_lines(view)
    if not kept:
        return
    count = data.draw(st.integers(1, min(3, len(kept)) if tool == "apply_edit" else 1))
    bounds = sorted(data.draw(st.sets(st.integers(0, len(kept) - 1), min_size=count,
                                      max_size=count)))
    for k, i in enumerate(bounds):  # each patch within its own stretch of lines
        limit = bounds[k + 1] - 1 if k + 1 < len(bounds) else len(kept) - 1
        j = data.draw(st.integers(i, min(limit, i + 3)))
        old = "".join(kept[i:j + 1])
        if data.draw(st.booleans()):  # a partial first and last line
            old = old[data.draw(st.integers(0, 3)):len(old) - data.draw(st.integers(0, 3))]
        if not old.strip():
            continue
        kind = data.draw(st.sampled_from(["replace", "insert", "delete", "no_eol", "wide",
                                          "prepend"]))
        new = {"replace": old.replace("x", "zz").replace("=", "=="),
               "insert": old + "added = 'ß'\n", "delete": "", "no_eol": old.rstrip("\n"),
               "wide": old + "🎉文", "prepend": "# 前\n" + old}[kind]
        if new != old:
            pairs.append((old, new))
    if not pairs:
        return
    if tool == "edit_file":
        old, new = pairs[0]
        _tool_both(tmp_path, monkeypatch, raw, tool, {"old_content": old, "new_content": new})
    else:
        _tool_both(tmp_path, monkeypatch, raw, tool, _patches(*pairs))


HEAVY = "".join(f"漢字🎉𝄞 {i} ünï\n" for i in range(3000))  # 3- and 4-byte characters, many lines
SEPARATORS = "p = 1\na\u2028b\u2029c = 2\nd\x85e = 3\n\x0cf = 4\ng\x1ch\x1di\x1ej = 5\nk\x0bl = 6\n"


@pytest.mark.parametrize(("data", "tool", "args", "spliced"), [
    # a BOM file: its first line and its last, in one request (no final newline)
    (BOM + b"first = 1\nmid = 2\nlast = 3", "apply_edit",
     _patches(("first = 1\n", "first = 'é'\n"), ("last = 3", "last = '🎉'")), True),
    # CRLF, LF and lone CR lines mixed; the edit spans all three
    (b"a = 1\r\nb\rc = 2\nd = 3\r\ne = 4\n", "apply_edit",
     _patches(("a = 1\nb\rc = 2\nd = 3\n", "a = 9\nb\rc = 8\nd = 7\n"),
              ("e = 4", "e = 5")), True),
    # the whole content deleted (CRLF: the bytes fast path leaves it to the engine; the
    # excerpt cannot prove its diff when one side is all common head: the whole way)
    (b"a = 1\r\nb = 2\r\n", "edit_file", {"old_content": "a = 1\nb = 2\n",
                                              "new_content": ""}, True),  # the whole text
    (BOM + b"only line", "apply_edit", _patches(("only line", ""), ), None),
    # new text without a final newline, in the middle and at the end
    (b"a = 1\r\nb = 2\r\nc = 3\r\n", "edit_file",
     {"old_content": "b = 2\n", "new_content": "B = 2"}, True),
    (b"a = 1\nb = 2\nc = 3\n", "apply_edit",
     _patches(("a = 1\n", "A"), ("c = 3\n", "C")), True),
    # several patches far apart and close together
    (("".join(f"line {i}\n" for i in range(200))).encode(), "apply_edit",
     _patches(("line 3\n", "L3\n"), ("line 5\n", ""), ("line 150\n", "L150\nL150b\n")),
     True),
    # insertions at the very start and the very end
    (BOM + b"x = 1\ny = 2", "insert_text", {"content": "top = 0", "insert_line": 0}, True),
    (BOM + b"x = 1\ny = 2", "insert_text", {"content": "end = 3\n", "position": "end"},
     True),
    (b"x = 1\r\ny = 2\r\n", "insert_text", {"content": "end = 3", "position": "end"}, None),
    (b"", "insert_text", {"content": "first = 1", "position": "start"}, None),
    (BOM, "insert_text", {"content": "first = 1", "position": "end"}, None),
    # multi-byte characters heavily before the edit (the byte offset of the line is far from
    # its character offset) and right around it
    ((HEAVY + "target = 1\n" + HEAVY.replace("ünï", "ÜNÏ")).encode(), "apply_edit",
     _patches(("漢字🎉𝄞 2999 ünï\ntarget = 1\n", "漢字🎉𝄞 2999 ünï\ntarget = '€'\n"),
              ("漢字🎉𝄞 2998 ünï\n", "x\n")), True),
    ((HEAVY + "target = 1").encode(), "edit_file",
     {"old_content": "  target = 1", "new_content": "  target = 2"}, True),
    # separators that str.splitlines breaks at (U+2028/9, NEL, FF, FS/GS/RS, VT) around the edit
    (SEPARATORS.encode(), "apply_edit",
     _patches(("a\u2028b\u2029c = 2\n", "a\u2028b\u2029c = 20\n"), ("k\x0bl = 6", "kl = 6")),
     True),
    (SEPARATORS.encode().replace(b"\n", b"\r\n"), "edit_file",
     {"old_content": "d\x85e = 3\n\x0cf = 4", "new_content": "d\x85e = 30\n\x0cf = 40"}, True),
    # identical lines all around the edit (the diff's alignment)
    (b"head = 0\n" + b"x\n" * 12 + b"y\n" + b"x\n" * 12 + b"tail = 0\n", "apply_edit",
     _patches(("head = 0\n", "head = 1\n"), ("y\n", "x\ny\nx\n")), True),
    (b"head = 0\n" + b"x\n" * 12 + b"y\n" + b"x\n" * 12 + b"tail = 0\n", "apply_edit",
     _patches(("x\ny\n", "y\n"), ("tail = 0\n", "tail = 1\n")), True),
    (b"head = 0\n" + b"x\n" * 12 + b"y\n" + b"x\n" * 12 + b"tail = 0\n", "apply_edit",
     _patches(("head = 0\nx\n", "head = 0\n"), ("y\nx\n", "y\n")), True),
    (("}\n" * 6 + "z = 1\n" + "}\n" * 6).encode().replace(b"\n", b"\r\n"), "edit_file",
     {"old_content": "}\nz = 1\n}\n", "new_content": "}\n}\n"}, True),
])
def test_targeted_spliced_writes_are_the_whole_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, tool: str,
        args: dict[str, Any], spliced: bool | None) -> None:
    wet, used = _tool_both(tmp_path, monkeypatch, data, tool, args)
    assert wet["ok"], wet
    if spliced is not None:
        assert used is spliced


def test_replace_all_through_the_trailing_whitespace_tier_is_spliced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = BOM + "v = 'é'   \r\nw = 1\nv = 'é'\t\nend".encode()
    wet, used = _tool_both(tmp_path, monkeypatch, data, "apply_edit",
                           {"old_text": "v = 'é'\n", "new_text": "v = '🎉'\n",
                            "replace_all": True})
    assert wet["ok"] and wet["result"]["matched_with"] == "trailing_whitespace", wet
    assert used


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_big_files_are_spliced_as_they_are_written_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, eol: str) -> None:
    """Past ``LAZY_MIN_LINES`` (a lazily split model: the splice's offsets come from
    ``LazyLines``) and past ``FAST_HASH_BYTES`` (the sha256 on a helper thread), with 2- to
    4-byte characters on every line before the edit: fuzzy edits near the start, the
    middle and the end, each undone."""
    lines = [f"名前_{i} = 'ünï🎉' if x else None" for i in range(30_000)]
    data = (BOM + eol.join(lines).encode() + eol.encode())
    assert len(data) > hashing.FAST_HASH_BYTES
    for at in (0, 15_000, 29_998):
        old = f"  名前_{at} = 'ünï🎉' if x else None\n  名前_{at + 1} = 'ünï🎉' if x else None\n"
        new = f"  名前_{at} = 'changed'\n"
        wet, used = _tool_both(tmp_path, monkeypatch, data, "apply_edit",
                               {"old_text": old, "new_text": new})
        assert wet["ok"] and wet["result"]["matched_with"] == "indentation", wet
        assert used


def test_spliced_writes_staged_in_a_batch_are_the_whole_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In one batch group (writes staged, journaled once written), spliced edits of the same
    file one after the other, a read between them, an undo and an edit after it: the same
    results and the same bytes as the whole-text writes."""
    import zbtools.surfaces.batch as batch_module

    monkeypatch.setattr(batch_module, "GROUP_MAX_SECONDS", 600.0)
    data = BOM + "a = 'é'\r\nb = 2\nc = '🎉'\r\nd = 4\r\n".encode()

    steps = [{"id": 1, "tool": "apply_edit", "args": {"path": "f.txt", "patches": [
                 {"old_text": "  a = 'é'\n", "new_text": "  a = 'ü'\n"},
                 {"old_text": "d = 4", "new_text": "d = 5"}]}},
             {"id": 2, "tool": "read_file", "args": {"path": "f.txt"}},
             {"id": 3, "tool": "apply_edit", "args": {"path": "f.txt", "patches": [
                 {"old_text": "b = 2\n", "new_text": "b = '文'\n"},
                 {"old_text": "c = '🎉'", "new_text": "c = 3"}]}},
             {"id": 4, "tool": "undo", "args": {"path": "f.txt"}},
             {"id": 5, "tool": "insert_text", "args": {"path": "f.txt", "content": "z = 0",
                                                       "position": "end"}},
             {"id": 6, "tool": "edit_file", "args": {"path": "f.txt",
                                                     "old_content": "  b = 2\n",
                                                     "new_content": "  b = 22\n"}}]
    spy, used = _recording(cycle._spliced_edit)

    answers = []
    for mode in ("spliced", "whole"):
        root, state = tmp_path / mode / "ws", tmp_path / mode / "state"
        root.mkdir(parents=True)
        (root / "f.txt").write_bytes(data)
        with monkeypatch.context() as patch:
            patch.setattr(cycle, "_spliced_edit", spy if mode == "spliced" else
                          lambda *a, **k: None)
            done = run_inprocess(["batch"], stdin="".join(json.dumps(r) + "\n" for r in steps),
                                 workspace=root, env={"ZBTOOLS_STATE_DIR": str(state)})
        out = [json.loads(line) for line in done.out.splitlines()]
        for line in out:
            if line.get("ok") and isinstance(line.get("result"), dict):
                line["result"].pop("undone_at", None)
        undo = _call(root, state, "undo", {"path": "f.txt"})
        answers.append((done.code, out, (root / "f.txt").read_bytes(), undo,
                        (root / "f.txt").read_bytes()))
    assert answers[0] == answers[1]
    assert all(line["ok"] for line in answers[0][1]), answers[0][1]
    assert used.count(True) >= 3, used


def _linked_meanwhile(tmp_path: Path, spliced: bool, monkeypatch: pytest.MonkeyPatch
                      ) -> tuple[Any, ...]:
    """An edit of a file that gets a second hard link after it was read (while the matcher
    runs): what the call says, and what each name holds afterwards."""
    root = tmp_path / ("spliced" if spliced else "whole")
    root.mkdir()
    data = b"a = 1\r\nb = 2\r\n"  # CRLF: not the bytes fast path
    (root / "f.txt").write_bytes(data)

    def compute(text: str) -> matching.Applied:
        (root / "other").hardlink_to(root / "f.txt")
        return apply_requests(text, [Request("b = 2\n", "b = 3\n")])

    with monkeypatch.context() as patch:
        if not spliced:
            patch.setattr(cycle, "_spliced_edit", lambda *a, **k: None)
        workspace = Workspace(str(root))
        ctx = Context(workspace)
        try:
            out = cycle.edit_file_text(ctx, "f.txt", compute, ["b = 3\n"],
                                       expected_sha256=None, dry_run=False)
        finally:
            workspace.close()
    return (out.diff, out.sha256, ctx.warnings, (root / "f.txt").read_bytes(),
            (root / "other").read_bytes())


def test_a_link_made_while_the_matcher_runs_is_reported_as_the_whole_write_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _linked_meanwhile(tmp_path, False, monkeypatch)
    assert any("hardlink_broken" in w for w in whole[2])  # the reference warns
    assert _linked_meanwhile(tmp_path, True, monkeypatch) == whole


# ---------------------------------------------------------------------------------------------
# 2. The lazily split file model and lazy index against the eager model


def _answer(text: str, pairs: list[tuple[str, str]]) -> tuple[Any, ...]:
    try:
        applied = apply_requests(text, [Request(old, new, label=f"patches[{i}]: "
                                                if len(pairs) > 1 else "")
                                        for i, (old, new) in enumerate(pairs)])
    except MatchError as err:
        return ("error", err.code, err.message, err.hint, err.details)
    return ("ok", applied.text, applied.changed, applied.reports, applied.warnings)


def _lazy_vs_eager(text: str, pairs: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch,
                   knobs: dict[str, int] | None = None) -> tuple[Any, ...]:
    """``apply_requests`` with every lazy way taken (tiny ``LAZY_MIN_LINES`` and chunks, and
    ``knobs``) and with none (``LAZY_MIN_LINES`` past any file): the same answer."""
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 5)
        patch.setattr(lazylines, "LAZY_CHUNK_CHARS", 16)
        for name, value in (knobs or {}).items():
            patch.setattr(filemodel, name, value)
        lazy = _answer(text, pairs)
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 1 << 40)
        eager = _answer(text, pairs)
    assert lazy == eager, (pairs, lazy, eager)
    return eager


CODE = ["def compute_total(items, discount):", "    total = 0", "    for item in items:",
        "        total += item.price * item.quantity", "    return total - discount", "",
        "}", ")", "return", "x = 1", "message = 'it\u2019s \u201cquoted\u201d here'",
        "    if value  ==  None:", "\tname = \u201cvalue\u201d  ", "print('hello world again')",
        "caf\u00e9 = 'cr\u00e8me br\u00fbl\u00e9e'", "  # a comment line here, long enough",
        "        raise ValueError('negative quantity')", "class Basket:",
        "    def __init__(self):", "        self.items = []", "pass"]


def _mutate(block: list[str], how: str) -> list[str]:
    """``block`` as a model might misremember it, for each tier."""
    if how == "trailing":
        return [x + "  " for x in block]
    if how == "reindent":
        return ["    " + x if x else x for x in block]
    if how == "inner":
        return [x.replace(" ", "  ", 1) for x in block]
    if how == "typography":
        return [x.replace("'", "\u2019").replace("\u201c", '"').replace("\u201d", '"')
                for x in block]
    if how == "typo":
        k = max(range(len(block)), key=lambda i: len(block[i]))
        line = block[k]
        if len(line) < 2:
            return [*block[:k], line + "q", *block[k + 1:]]
        cut = len(line) // 2
        return [*block[:k], line[:cut] + line[cut + 1:cut + 2] + line[cut] + line[cut + 2:],
                *block[k + 1:]]
    if how == "missing" and len(block) >= 4:
        return block[:2] + block[3:]
    if how == "extra" and len(block) >= 3:
        return [*block[:2], "    extra_line_nobody_wrote = 42", *block[2:]]
    if how == "similar":
        return [x.replace("total", "totl").replace("item", "itme") for x in block]
    if how == "elision" and len(block) >= 5:
        return [*block[:2], "...", *block[-2:]]
    if how == "absent":
        return ["def nowhere_to_be_found(a, b):", "    return a.frobnicate(b) + 42"]
    return block


HOWS = ["exact", "trailing", "reindent", "inner", "typography", "typo", "missing", "extra",
        "similar", "elision", "absent"]


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CODE), min_size=5, max_size=60), st.sampled_from(["\n", "\r\n"]),
       st.booleans(), st.sampled_from(HOWS), st.data())
def test_the_lazy_model_answers_as_the_eager_one_for_every_tier(
        monkeypatch: pytest.MonkeyPatch, lines: list[str], eol: str, final_eol: bool,
        how: str, data: st.DataObject) -> None:
    text = eol.join(lines) + (eol if final_eol else "")
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i + 1, min(len(lines), i + 7)))
    block = _mutate(lines[i:j], how)
    old = "\n".join(block) + ("\n" if data.draw(st.booleans()) else "")
    new = "\n".join([block[0] + "  # edited", *block[1:]]) + "\n"
    knobs = data.draw(st.sampled_from([
        {}, {"LAZY_WORD_HITS": 1}, {"LAZY_MAX_HITS": 2}, {"LAZY_MAX_SCANS": 1},
        {"LAZY_WORD_HITS": 0, "LAZY_MAX_HITS": 3}]))
    _lazy_vs_eager(text, [(old, new)], monkeypatch, knobs)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CODE), min_size=8, max_size=50), st.sampled_from(HOWS),
       st.sampled_from(HOWS), st.data())
def test_the_lazy_model_answers_as_the_eager_one_for_patches_and_edits_already_made(
        monkeypatch: pytest.MonkeyPatch, lines: list[str], first: str, second: str,
        data: st.DataObject) -> None:
    """Two patches (each of any tier; overlapping, failing, or applied in sequence), then
    the same request again on the result (already applied, or a miss explained)."""
    text = "\n".join(lines) + "\n"
    pairs = []
    for how, (lo, hi) in ((first, (0, len(lines) // 2)), (second, (len(lines) // 2,
                                                                  len(lines)))):
        i = data.draw(st.integers(lo, hi - 1))
        j = data.draw(st.integers(i + 1, min(hi + 2, i + 6)))
        block = _mutate(lines[i:j], how)
        pairs.append(("\n".join(block) + "\n",
                      "\n".join([block[0] + "  # edited", *block[1:]]) + "\n"))
    answer = _lazy_vs_eager(text, pairs, monkeypatch)
    if answer[0] == "ok":
        _lazy_vs_eager(answer[1], pairs, monkeypatch)


def _big_text(lines: int, seed: int) -> str:
    """A file of ``lines`` lines (over the non-ASCII index's 16k-character step many
    times), code-like, mostly unique, with curly quotes and accents here and there."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(lines):
        line = CODE[rng.randrange(len(CODE))]
        if line.strip() and rng.random() < 0.7:
            line = f"{line}  # {i}"
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", [1, 2])
def test_the_lazy_model_of_a_big_text_answers_as_the_eager_one(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """~3,000 lines (~120k characters): chunks of the lazy split and of the non-ASCII index
    (16k-character steps) cut everywhere; every tier near the start, the middle and the end,
    also with the common words found through the stripped lines (``LAZY_WORD_HITS``)."""
    import random

    text = _big_text(3000, seed)
    lines = text.split("\n")[:-1]
    rng = random.Random(seed)
    for how in HOWS:
        for at in (0, 1500, len(lines) - 7, rng.randrange(len(lines) - 7)):
            block = _mutate(lines[at:at + rng.choice([1, 3, 5, 7])], how)
            old = "\n".join(block) + "\n"
            new = "\n".join([block[0] + "  # edited", *block[1:]]) + "\n"
            for knobs in ({}, {"LAZY_WORD_HITS": 3}, {"LAZY_MAX_HITS": 40}):
                _lazy_vs_eager(text, [(old, new)], monkeypatch, knobs)


EXOTIC = ["\u00a0return\u00a0", "return\u200b", "return", "re\u0301sume\u0301 = 1  # combining",
          "r\u00e9sum\u00e9 = 1  # composed", "a\rb = 2  # a lone CR", "\rreturn", "}\u2028",
          "value\u00a0=\u00a0compute(it\u2019s)", "value = compute(it's)", "\ttab = 'x'",
          "    tab = 'x'", "x\x0c= 3", "x = 3", ")", "  )  ", "pass", "\u3000pass"]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(EXOTIC + CODE[:6]), min_size=5, max_size=40),
       st.lists(st.sampled_from(["\n", "\r\n"]), min_size=40, max_size=40),
       st.sampled_from(HOWS), st.data())
def test_the_lazy_model_answers_as_the_eager_one_on_odd_whitespace(
        monkeypatch: pytest.MonkeyPatch, lines: list[str], eols: list[str], how: str,
        data: st.DataObject) -> None:
    """Lines a word search could get wrong: one-word keys with odd spaces around them (NBSP,
    ideographic space, zero-width space), lone CRs, form feeds, combining accents (NFC at
    the typography tier), mixed endings; requests of any tier and of one word."""
    text = "".join(line + eol for line, eol in zip(lines, eols, strict=False))
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i + 1, min(len(lines), i + 5)))
    block = _mutate(lines[i:j], how)
    if data.draw(st.booleans()):  # a key of one word
        block = [data.draw(st.sampled_from(["return", "pass", ")", "}", "résumé = 1"]))]
    old = "\n".join(block) + "\n"
    new = "\n".join([block[0] + "  # edited", *block[1:]]) + "\n"
    knobs = data.draw(st.sampled_from([{}, {"LAZY_WORD_HITS": 1}, {"LAZY_MAX_HITS": 2}]))
    _lazy_vs_eager(text, [(old, new)], monkeypatch, knobs)


def _model_answers(text: str, keys: list[str]) -> tuple[Any, ...]:
    """What a ``FileModel`` of ``text`` says, asked the way the tiers ask it."""
    model = filemodel.FileModel(text)
    count = model.line_count
    per_line = ([model.lines[i] for i in range(count)], list(model.lines[1:count - 1]),
                [model.text_start(i) for i in range(count + 1)],
                [model.line_start(i) for i in range(count + 1)],
                [model.line_of(k) for k in range(len(model.lf_view) + 1)], list(model.eols))
    found: list[Any] = []
    for tier in linekeys.TIERS:
        index = model.index(tier)
        for key in keys:
            hits = index.get(key, ())
            found.append((tier, key, list(hits[:2]), list(hits), key in index,
                          filemodel.count_at_most(index, key, 1),
                          model.first_lines_with_key(tier, key, 2)))
        norm = model.normalized(tier)
        found.append([norm[i] for i in range(count)])
    return per_line, found, model.all_lines(), model.indent_unit_near(count // 2)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(EXOTIC + CODE[:8] + [""]), min_size=1, max_size=30),
       st.sampled_from(["\n", "\r\n", "mixed"]), st.booleans(), st.data())
def test_the_lazy_model_api_is_the_eager_one(
        monkeypatch: pytest.MonkeyPatch, lines: list[str], eol: str, final_eol: bool,
        data: st.DataObject) -> None:
    """Line texts, offsets both ways, endings, per-tier keys and index lookups (first few,
    all, membership, bounded counts) of the lazy model, asked in the tiers' ways."""
    if eol == "mixed":
        text = "".join(line + data.draw(st.sampled_from(["\n", "\r\n"])) for line in lines)
    else:
        text = "".join(line + eol for line in lines)
    if not final_eol:
        text = text.rstrip("\r\n")
    keys = [*sorted({linekeys.LINE_KEYS[tier](line) for line in lines
                     for tier in linekeys.TIERS}), "absent key", "return", ")"]
    knobs = data.draw(st.sampled_from([{}, {"LAZY_WORD_HITS": 1}, {"LAZY_MAX_HITS": 1}]))
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 1)
        patch.setattr(lazylines, "LAZY_CHUNK_CHARS", data.draw(st.integers(1, 20)))
        for name, value in knobs.items():
            patch.setattr(filemodel, name, value)
        lazy = _model_answers(text, keys)
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 1 << 40)
        eager = _model_answers(text, keys)
    assert lazy == eager


# ---------------------------------------------------------------------------------------------
# 3. The bytes fast path (one scan for old text's longest line) against the engine


def _outcome(root: Path, old: str, new: str, simple: bool) -> tuple[Any, ...]:
    workspace = Workspace(str(root))
    ctx = Context(workspace)
    try:
        out = cycle.edit_file_text(
            ctx, "f.py", lambda t: apply_requests(t, [Request(old, new)]), [new],
            expected_sha256=None, dry_run=True, simple=(old, new) if simple else None)
    except Exception as exc:  # the error itself is compared
        return ("error", getattr(exc, "code", type(exc).__name__), str(exc))
    finally:
        workspace.close()
    return ("ok", out.applied.reports, out.diff, out.sha256, out.changed, out.applied.warnings)


def _fast_vs_engine(root: Path, data: bytes, old: str, new: str,
                    monkeypatch: pytest.MonkeyPatch) -> bool:
    """The bytes fast path's answer is the engine's; whether the fast path answered."""
    (root / "f.py").write_bytes(data)
    spy, used = _recording(cycle._bytes_fast_path)

    with monkeypatch.context() as patch:
        patch.setattr(cycle, "_bytes_fast_path", spy)
        fast = _outcome(root, old, new, True)
    assert fast == _outcome(root, old, new, False), (data, old, new)
    return used == [True]


PROBE_LINES = ["x = compute(a)", "    x = compute(a)", "\tx = compute(a)", "yx = compute(a)b",
               "  x = compute(a)  # x = compute(a)", "ab", "abab", "    ab", "", "  ",
               "if x:", "    if x:", "y = 22222222", "x = compute(a)\t",
               "\u00e9 = 'x = compute(a)'", "}", "x = compute(a) + x = compute(a)"]


@pytest.mark.parametrize("probe_hits", [0, 1, 2, 64])
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PROBE_LINES), min_size=2, max_size=25), st.booleans(),
       st.booleans(), st.data())
def test_the_probe_scan_agrees_with_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe_hits: int, lines: list[str],
        bom: bool, final_eol: bool, data: st.DataObject) -> None:
    """Old text's longest line standing inside longer lines, twice on a line, overlapping
    itself (``abab``), at other indentations (look-alikes), with trailing whitespace, after a
    multi-byte character; ``PROBE_HITS`` 0 (no bound), 1, 2 and 64; BOM files (old text
    and its look-alikes on line 1 too)."""
    monkeypatch.setattr(cycle, "PROBE_HITS", probe_hits)
    text = "\n".join(lines) + ("\n" if final_eol else "")
    a = data.draw(st.integers(0, len(text) - 1)) if text else 0
    b = data.draw(st.integers(a + 1, len(text))) if a < len(text) else a
    if data.draw(st.booleans()):  # whole lines
        a = text.rfind("\n", 0, a) + 1
        stop = text.find("\n", b - 1)
        b = len(text) if stop == -1 else stop + 1
    old = text[a:b]
    new = data.draw(st.sampled_from([old + "z = 3\n", "", old.replace("x", "w"),
                                     old[: len(old) // 2], "\n" + old, old + "ü"]))
    if old.strip() and old != new:
        _fast_vs_engine(tmp_path, (BOM if bom else b"") + text.encode(), old, new, monkeypatch)


BLOCK = "def close(self):\n    self.conn.close()\n    return None\n"


@pytest.mark.parametrize(("text", "old", "new", "fast"), [
    # the probe (old's longest line) stands inside longer lines many times over
    ("yx = compute(a)b\n" * 80 + "x = compute(a)\ny = 1\n" + "x = compute(a)b\n" * 80,
     "x = compute(a)\ny = 1\n", "x = compute(b)\ny = 1\n", True),
    # overlapping occurrences of old text itself: ambiguous, the engine explains
    ("abab\nabab\nabab\n", "abab\nabab\n", "x\n", False),
    ("ab\nab\nab\nzz\n", "ab\nab\n", "AB\n", False),
    # old text twice on one line
    ("x = compute(a) + x = compute(a)\n", "x = compute(a)", "x = 1", False),
    # a look-alike only up to indentation, two lines away, and one only on its longest line
    (BLOCK + "\n\n    " + BLOCK.replace("\n    ", "\n        "), BLOCK, BLOCK + "#\n", False),
    (BLOCK + "\n\n    self.conn.close()\n    return 0\n", BLOCK, BLOCK + "#\n", True),
    # a look-alike whose longest line has a different tail of whitespace
    (BLOCK + "class B:\n    def close(self):\n        self.conn.close()\t\n        return None\n",
     BLOCK, BLOCK + "#\n", False),
    # a BOM file whose match is not on line 1 and has no look-alike
    ("\ufeff# header\n" + BLOCK, BLOCK, BLOCK + "#\n", True),
])
@pytest.mark.parametrize("probe_hits", [0, 1, 64])
def test_targeted_probe_scans_agree_with_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, old: str, new: str,
        fast: bool, probe_hits: int) -> None:
    monkeypatch.setattr(cycle, "PROBE_HITS", probe_hits)
    assert _fast_vs_engine(tmp_path, text.encode(), old, new, monkeypatch) is fast


def test_a_bom_file_block_on_line_1_with_a_look_alike_is_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\ufeff" + BLOCK + "class B:\n    " + BLOCK.replace("\n    ", "\n        ")
    _fast_vs_engine(tmp_path, text.encode(), BLOCK, BLOCK + "#\n", monkeypatch)


def test_a_bom_file_look_alike_on_line_1_is_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\ufeff    x = compute_value(a)\n    y = 2\nclass B:\nx = compute_value(a)\ny = 2\n"
    _fast_vs_engine(tmp_path, text.encode(), "x = compute_value(a)\ny = 2\n", "x = 0\n",
                    monkeypatch)


def test_a_bom_file_first_line_sent_less_indented_is_reported_as_reindented(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fast_vs_engine(tmp_path, "\ufeff    call_something()\nx = 1\n".encode(),
                    "call_something()\n", "call_other()\n", monkeypatch)


# ---------------------------------------------------------------------------------------------
# 4. Near misses: the window starts looked at (``nearmiss._near_starts``)

CLOSERS = ["}", ")", "]", "end", "fi", "done", "esac"]


def _two_near_windows(filler: int, common: list[str]) -> tuple[str, str, str]:
    """A file holding the same block twice, at its start and at its end, with ``common``
    lines (each on hundreds of lines) and ``filler`` lines that all contain an ``x``; old
    text is the block with a typo in its last line: two equally near windows."""
    block = [*common, "x = 1", "y = compute_value(x, 2)"]
    lines = [*block, "head = 0"]
    for i in range(filler):
        lines.append(f"ax{i} = {i}")
        if i % 12 == 0 and i < filler - 100:
            lines.append(common[(i // 12) % len(common)])
    lines += [*block, "tail = 0"]
    old = "\n".join([*common, "x = 1", "y = compute_valeu(x, 2)"]) + "\n"
    return "\n".join(lines) + "\n", old, old.replace("x = 1", "x = 2")


def test_a_big_file_with_two_near_windows_is_ambiguous_in_the_lazy_model_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text, old, new = _two_near_windows(24_000, CLOSERS)
    assert text.count("\n") > filemodel.LAZY_MAX_HITS
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 1 << 40)
        eager = _answer(text, [(old, new)])
    assert eager[:2] == ("error", "ambiguous_match")  # the reference
    assert _answer(text, [(old, new)]) == eager


def test_two_equally_near_windows_are_ambiguous_even_when_their_lines_are_common() -> None:
    common = [*CLOSERS, "x = 1"]  # every line of the block on 200+ lines of the file
    block = [*common, "y = compute_value(x, 2)"]
    lines = [*block, "head = 0"]
    for i in range(len(common) * 210):
        lines += [f"filler_{i} = {i}", common[i % len(common)]]
    lines += [*block, "tail = 0"]
    text = "\n".join(lines) + "\n"
    old = "\n".join([*common, "y = compute_valeu(x, 2)"]) + "\n"
    assert len(lines) < filemodel.LAZY_MIN_LINES  # the eager model
    answer = _answer(text, [(old, old.replace("compute_valeu", "compute_other"))])
    assert answer[:2] == ("error", "ambiguous_match"), answer[:4]
