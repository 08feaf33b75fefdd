"""Invariant 1, containment: no byte outside the workspace, or in a protected file, changes.

Each example builds a fresh workspace holding a repository (a ``.git`` directory with
``core.hooksPath = .githooks`` and an included config file; a ``.git`` file pointing to
``realgit``, whose config sets ``core.hooksPath = myhooks``), an ``outside`` sibling with files,
symlinks pointing in, out and into git's places, and hard links from workspace names to outside
files and to protected files. It then interleaves generated tool calls (writes, appends, edits,
patches, moves, copies, deletes, directories, undo) on generated paths (``..``, absolute, through
links) with what another process might do between calls (new symlinks and hard links, renames)
and during them (the same, at the moment a write publishes its change).

The oracle is a byte snapshot of ``outside`` and of every protected place, taken before and after
each call: they must be identical. Every refusal must carry a documented error code with its
documented exit status, and never ``internal_error``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

from tests.conftest import Call, run_inprocess, snapshot
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.contract import ERROR_CODES

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

# The planted-bug checks: no shrinking (the failure itself is the answer), no example database
# (a stored failure would replay in the real search).
QUICK: dict[str, Any] = {"phases": (Phase.generate,), "database": None}

# Places of the layout that writes must never change (below the workspace), and the outside.
PROTECTED = [".git", "realgit", ".githooks", "sub/myhooks", "sub/.git", "extra.gitconfig"]

NAMES = ["src", "a.txt", "b.py", ".git", "config", "hooks", "pre-commit", "realgit", "sub",
         "myhooks", ".githooks", "link_out.txt", "link_cfg", "link_hook", "sym_out",
         "sym_out_file", "sym_git", "sym_real", "sym_in", "..", ".", "new", "HEAD", "outside",
         "secret.txt", "dir", ".GIT", "extra.gitconfig", "objects"]
# Paths that reach git's places or the outside in one step: most bugs hide behind them.
PLACES = ["link_cfg", "link_hook", "link_out.txt", "sym_git/config", "sym_real", "sym_in/a.txt",
          "sub/myhooks/pre-commit", "realgit/config", "realgit/hooks/pre-commit",
          ".githooks/pre-commit", ".git/config", ".git/hooks/pre-commit", "sub/.git",
          "extra.gitconfig", "../outside/secret.txt", "sym_out/secret.txt", "sym_out_file",
          "sym_out/dir/x.txt", "sym_out/new.txt", "src/../../outside/secret.txt", "sub/new",
          "src/a.txt", "src/new.txt", "sub/myhooks", "realgit", "sym_out", "sym_git", "src",
          "sub", ".githooks", "sub/myhooks/", "realgit/hooks/", "@outside/secret.txt",
          "@outside/new.txt", "@ws/link_cfg", "@ws/realgit/config", "@ws/src/a.txt"]
TEXTS = ["top secret", "[core]", "hello", "#!/bin/sh", "bare = false", "x", "hooksPath"]
# Targets a racer's symlink may point at, and files its hard links may name.
LINK_TARGETS = ["../outside/secret.txt", "../outside", ".git/config", "realgit",
                "sub/myhooks/pre-commit", "@outside/secret.txt", "@outside/dir", ".git",
                "../../outside/secret.txt", "src/a.txt"]
LINK_SOURCES = ["@outside/secret.txt", ".git/config", "realgit/config", "sub/myhooks/pre-commit",
                ".githooks/pre-commit", "extra.gitconfig", "src/a.txt"]
RACE_AT = ["src/a.txt", "src/b.py", "src/new.txt", "src", "docs", "sub/src.txt", "x", "docs/y"]


def build(base: Path) -> tuple[Path, Path]:
    ws, outside = base / "ws", base / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("top secret\n")
    (outside / "dir" / "x.txt").write_text("x\n")
    for sub in ("hooks", "objects", "refs"):
        (ws / ".git" / sub).mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "config").write_text("[core]\n\tbare = false\n\thooksPath = .githooks\n"
                                        "[include]\n\tpath = ../extra.gitconfig\n")
    (ws / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    (ws / "extra.gitconfig").write_text("[user]\n\tname = x\n")
    (ws / ".githooks").mkdir()
    (ws / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (ws / "sub" / "myhooks").mkdir(parents=True)
    (ws / "sub" / ".git").write_text("gitdir: ../realgit\n")
    (ws / "sub" / "myhooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    for sub in ("hooks", "objects", "refs"):
        (ws / "realgit" / sub).mkdir(parents=True)
    (ws / "realgit" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "realgit" / "config").write_text("[core]\n\thooksPath = myhooks\n")
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_text("hello\nx\n")
    (ws / "src" / "b.py").write_text("print('hello')\n")
    (ws / "docs").mkdir()
    os.link(outside / "secret.txt", ws / "link_out.txt")
    os.link(ws / ".git" / "config", ws / "link_cfg")
    os.link(ws / "sub" / "myhooks" / "pre-commit", ws / "link_hook")
    os.symlink("../outside", ws / "sym_out")
    os.symlink(str(outside / "secret.txt"), ws / "sym_out_file")
    os.symlink(".git", ws / "sym_git")
    os.symlink("realgit/config", ws / "sym_real")
    os.symlink("src", ws / "sym_in")
    return ws, outside


def guarded(ws: Path, outside: Path) -> dict[str, Any]:
    """The bytes that must never change: the outside, and every protected place."""
    out: dict[str, Any] = {"outside": snapshot(outside)}
    for rel in PROTECTED:
        path = ws / rel
        out[rel] = snapshot(path) if path.is_dir() and not path.is_symlink() else (
            path.read_bytes() if path.exists() else None)
    return out


def spell(path: str, ws: Path, outside: Path) -> str:
    """A generated path, its ``@ws``/``@outside`` prefix made absolute."""
    if path.startswith("@ws"):
        return str(ws) + path[3:]
    if path.startswith("@outside"):
        return str(outside) + path[8:]
    return path


composed = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join)
paths = st.one_of(st.sampled_from(PLACES), composed)
texts = st.sampled_from(TEXTS)


def patch_text(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["add", "update", "delete", "move"]))
    path = draw(paths)
    if kind == "add":
        body = f"*** Add File: {path}\n+{draw(texts)}\n"
    elif kind == "delete":
        body = f"*** Delete File: {path}\n"
    else:
        body = f"*** Update File: {path}\n"
        if kind == "move":
            body += f"*** Move to: {draw(paths)}\n"
        body += f"@@\n-{draw(texts)}\n+{draw(texts)}\n"
    return f"*** Begin Patch\n{body}*** End Patch\n"


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(["write_file", "write_append", "apply_edit", "edit_file",
                                 "insert_text", "patch", "move_file", "copy_file",
                                 "delete_file", "create_directory", "undo"]))
    if tool in ("write_file", "write_append"):
        return tool, {"path": draw(paths), "content": draw(texts) + "\n"}
    if tool == "apply_edit":
        return tool, {"path": draw(paths), "old_text": draw(texts), "new_text": draw(texts)}
    if tool == "edit_file":
        return tool, {"path": draw(paths), "old_content": draw(texts),
                      "new_content": draw(texts)}
    if tool == "insert_text":
        return tool, {"path": draw(paths), "content": draw(texts) + "\n",
                      "position": draw(st.sampled_from(["start", "end"]))}
    if tool == "patch":
        return "apply_edit", {"patch": patch_text(draw)}
    if tool in ("move_file", "copy_file"):
        return tool, {"source": draw(paths), "destination": draw(paths),
                      "overwrite": draw(st.booleans())}
    if tool == "delete_file":
        return tool, {"path": draw(paths), "recursive": draw(st.booleans())}
    if tool == "create_directory":
        return tool, {"path": draw(paths)}
    return tool, draw(st.one_of(st.just({}), st.fixed_dictionaries({"path": paths})))


# What another process does: a symlink or hard link at an unprotected name, or a rename there.
racer_moves = st.one_of(
    st.tuples(st.just("symlink"), st.sampled_from(RACE_AT), st.sampled_from(LINK_TARGETS)),
    st.tuples(st.just("hardlink"), st.sampled_from(RACE_AT), st.sampled_from(LINK_SOURCES)),
    st.tuples(st.just("rename"), st.sampled_from(RACE_AT), st.sampled_from(RACE_AT)))
steps = st.one_of(
    st.tuples(st.just("call"), tool_calls(), st.none()),
    st.tuples(st.just("call"), tool_calls(), racer_moves),  # the racer acts during the call
    st.tuples(st.just("between"), st.none(), racer_moves))


def racer(ws: Path, outside: Path, move: tuple[str, str, str]) -> None:
    """Do ``move`` as another process would (it never touches a protected place itself)."""
    kind, at, other = move
    where = ws / at
    names = [where, ws / other] if kind == "rename" else [where]
    if not all(ours(ws, name) for name in names):
        return  # through a symlink to the outside or into git's places: not the racer's to do
    try:
        if kind == "rename":
            os.rename(where, ws / other)
            return
        if where.is_dir() and not where.is_symlink():
            shutil.rmtree(where)
        elif where.exists() or where.is_symlink():
            where.unlink()
        where.parent.mkdir(parents=True, exist_ok=True)
        if kind == "symlink":
            os.symlink(spell(other, ws, outside), where)
        else:
            source = spell(other, ws, outside)
            os.link(source if source.startswith("/") else ws / source, where)
    except OSError:
        pass  # the move did not apply (a name in the way, a missing source): nothing changed


def ours(ws: Path, name: Path) -> bool:
    """Whether the racer may change the entry ``name``: its directory, resolved, lies in the
    workspace and outside every protected place."""
    parent = os.path.realpath(name.parent)
    root = os.path.realpath(ws)
    if parent != root and not parent.startswith(root + "/"):
        return False
    return not any(parent == os.path.realpath(ws / rel) or
                   parent.startswith(os.path.realpath(ws / rel) + "/") for rel in PROTECTED)


def patch_racer(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> None:
    """Run ``act`` once, at the first point where a call is about to publish a change."""
    from zbtools.core.editing import txn
    from zbtools.core.files import replacing
    from zbtools.tools import move_file

    done = [False]

    def pause() -> None:
        if not done[0]:
            done[0] = True
            act()

    for module in (replacing, txn, move_file):
        monkeypatch.setattr(module, "pause_point", pause)


def racing(ws: Path, outside: Path, move: tuple[str, str, str]) -> Callable[[], None]:
    return lambda: racer(ws, outside, move)


def check_refusal(call: Call, tool: str, args: dict[str, Any]) -> None:
    envelope = call.json
    if envelope["ok"]:
        assert call.code == 0, call
        return
    code = envelope["error"]["code"]
    assert code in ERROR_CODES, (tool, args, envelope)
    assert code != "internal_error", (tool, args, envelope)
    assert call.code == ERROR_CODES[code][0], (tool, args, call)


def run_steps(tmp: Path, monkeypatch: pytest.MonkeyPatch,
              plan: list[tuple[str, Any, Any]]) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp))
    try:
        ws, outside = build(base)
        for kind, call_spec, move in plan:
            if kind == "between":
                racer(ws, outside, move)
                continue
            tool, args = call_spec
            args = {k: spell(v, ws, outside) if isinstance(v, str) else v
                    for k, v in args.items()}
            with monkeypatch.context() as patched:
                if move is not None:
                    patch_racer(patched, racing(ws, outside, move))
                before = guarded(ws, outside)
                call = run_inprocess([tool], stdin=json.dumps(args), workspace=ws)
                after = guarded(ws, outside)
            assert after == before, (tool, args, move, call)
            check_refusal(call, tool, args)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def search(tmp: Path, monkeypatch: pytest.MonkeyPatch, examples: int,
           **overrides: Any) -> None:
    @invariant(examples=examples, **overrides)
    @given(plan=st.lists(steps, min_size=2, max_size=12))
    def containment(plan: list[tuple[str, Any, Any]]) -> None:
        run_steps(tmp, monkeypatch, plan)

    containment()


def test_no_byte_outside_the_workspace_or_in_a_protected_file_ever_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    search(tmp_path, monkeypatch, examples=80)


@pytest.mark.parametrize("plan", [
    [("call", ("write_file", {"path": "link_cfg", "content": "[core]\n\tfsmonitor = x\n"}),
      None)],
    [("call", ("apply_edit", {"path": "link_hook", "old_text": "exit 0", "new_text": "evil"}),
      None)],
    [("call", ("write_file", {"path": "src/a.txt", "content": "x\n"}),
      ("hardlink", "src/a.txt", ".git/config"))],
    [("between", None, ("hardlink", "docs/y", "realgit/config")),
     ("call", ("move_file", {"source": "src/a.txt", "destination": "docs/y",
                             "overwrite": True}), None)],
    [("call", ("copy_file", {"source": "src", "destination": "sub/myhooks/x"}), None)],
    [("call", ("delete_file", {"path": "sub", "recursive": True}), None)],
    # found by the long mode: a folder holding a repository (a gitdir: file, its hooks path)
    # was moved away, taking them along
    [("call", ("move_file", {"source": "sub", "destination": "a.txt", "overwrite": False}),
      None)],
    # found by the long mode, in the test itself: the racer renamed a file through a symlink
    # to the outside (it now keeps to the workspace, as the invariant's racer must)
    [("between", None, ("symlink", "docs", "../outside")),
     ("call", ("write_file", {"path": "sym_in/a.txt", "content": "top secret\n"}),
      ("rename", "src/a.txt", "docs/y"))],
])
def test_the_cases_that_broke_it_stay_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             plan: list[tuple[str, Any, Any]]) -> None:
    run_steps(tmp_path, monkeypatch, plan)


def test_a_hard_link_of_git_config_is_refused_through_a_real_process(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    ws, outside = build(tmp_path)
    before = guarded(ws, outside)
    for args in ({"path": "link_cfg", "content": "[core]\n\tfsmonitor = evil\n"},
                 {"path": "sym_real", "content": "x"}, {"path": "link_out.txt", "content": "x"}):
        done = subprocess.run([sys.executable, "-m", "zbtools", "write_file", "--args",
                               json.dumps(args)], cwd=ws, capture_output=True, check=False,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
        call = Call(done.returncode, done.stdout.decode(), done.stderr.decode())
        check_refusal(call, "write_file", args)
    assert guarded(ws, outside) == before


def test_the_search_catches_a_planted_bug(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.files.workspace import Workspace

    # the bug: the hard-link check forgets that a second name of git's config is git's config
    monkeypatch.setattr(Workspace, "protected_link", lambda self, st: None)
    failure = planted_bug_is_caught(lambda: search(tmp_path, monkeypatch,
                                                                examples=60, **QUICK))
    assert isinstance(failure, AssertionError), failure
