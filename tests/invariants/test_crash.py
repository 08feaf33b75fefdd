"""Invariant 5, crash: ``kill -9`` at any point of a multi-file operation loses nothing.

A generated operation (a patch of several files that adds, deletes, moves and updates; a
``zbtools batch`` session of writes, edits, moves, copies, deletes, appends and patches; a copy,
move or recursive delete of a directory tree; a big ``write_file``; an in-place edit of a hard-
linked file; a long append; an ``undo``) runs in a real ``python`` process that is killed with
``SIGKILL`` either at its k-th change to the disk (``_crash_child``: every rename, link,
unlink, write, truncation, ``fsync``... counts, and a write may be cut in half) or after a
random delay from its first change. Then the next call, whatever its tool, runs in that
workspace, and:

* the workspace is one of the operation's states: the files and directories it did not touch
  are as they were; a lone operation is wholly undone or wholly done; in a batch, every call
  that is not an edit of a file is undone or done, in order, and each file edited by the batch
  is whole at one of its successive versions (the batch holds edits back and writes them later);
  permission bits, hard links, and (when nothing was done) inodes are kept. Empty directories
  created for a new file may stay (the contract allows it);
* no debris remains anywhere: no temp file, staging or half-deleted directory, backup, nor an
  unfinished journal in the state directory; and no listing or search ever showed any;
* ``undo`` then either restores one of the file's versions or refuses cleanly, and the undo
  journal stays readable.

The oracle is the same operation run uninterrupted in a twin workspace (in this process, call
by call, with a snapshot after each call). Sometimes the next call is killed too (a crash
during the recovery), and the call after it is checked. See ``_crash_ops`` for the generators.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

from tests.conftest import REPO, Call, run_inprocess
from tests.invariants import _crash_child as child
from tests.invariants._crash_ops import (
    Op,
    Tree,
    big_content,
    big_write,
    build,
    next_calls,
    operations,
)
from tests.invariants.budget import LONG, invariant, planted_bug_is_caught
from zbtools.core.files import tempnames, writerlog
from zbtools.core.files.tempnames import parse_temp_name

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

Entry = tuple[str, int, bytes]  # type, permission bits, content (or link text)
State = dict[str, Entry]


# ---------------------------------------------------------------------------------------------
# Looking at a workspace


def scan(root: Path) -> tuple[State, list[str], dict[str, tuple[int, int]]]:
    """Every entry below ``root`` but our debris; the debris; each file's (inode, links)."""
    state: State = {}
    debris: list[str] = []
    inodes: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if parse_temp_name(name) is not None:
                debris.append(rel)
                continue
            st = os.lstat(path)
            mode = st.st_mode & 0o7777
            if os.path.islink(path):
                state[rel] = ("link", mode, os.readlink(path).encode())
            elif os.path.isdir(path):
                state[rel] = ("dir", mode, b"")
            else:
                state[rel] = ("file", mode, Path(path).read_bytes())
                inodes[rel] = (st.st_ino, st.st_nlink)
        dirs[:] = [d for d in dirs if parse_temp_name(d) is None]
    return state, debris, inodes


def link_groups(inodes: dict[str, tuple[int, int]]) -> set[frozenset[str]]:
    """The sets of paths that are names of one file (hard links)."""
    by_inode: dict[int, set[str]] = {}
    for rel, (ino, _) in inodes.items():
        by_inode.setdefault(ino, set()).add(rel)
    return {frozenset(g) for g in by_inode.values() if len(g) > 1}


def state_debris(state_root: Path) -> list[str]:
    """What a finished call must not leave in the state directory: unfinished journals, journal
    and blob writes cut short, logs of dead writers."""
    found = []
    for folder, _, files in os.walk(state_root):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), state_root)
            parts = rel.split(os.sep)
            if "txn" in parts or "writers" in parts or ".tmp-" in name:
                found.append(rel)
    return found


def describe(entry: Entry | None) -> str:
    if entry is None:
        return "absent"
    kind, mode, data = entry
    return f"{kind} {mode:o} {len(data)}B {data[:40]!r}"


# ---------------------------------------------------------------------------------------------
# The oracle: which states the disk may be in


def explain(final: State, versions: list[State], per_file: set[str]) -> str | None:
    """None when ``final`` is one of the states ``versions`` allow (see the module docstring),
    else what is wrong. ``per_file``: paths that may be at any of their versions on their own."""
    paths = set(final).union(*versions)
    problems: list[str] = []
    for path in sorted(per_file):
        allowed = [v.get(path) for v in versions]
        if final.get(path) not in allowed:
            problems.append(f"{path}: {describe(final.get(path))}, not one of its versions "
                            f"({'; '.join(sorted({describe(a) for a in allowed}))})")
    later_dirs = {p for v in versions[1:] for p, e in v.items() if e[0] == "dir"}
    best: list[str] | None = None
    for j, version in enumerate(versions):
        wrong = []
        for path in sorted(paths - per_file):
            have, want = final.get(path), version.get(path)
            if have == want:
                continue
            if want is None and have is not None and have[0] == "dir" and path in later_dirs \
                    and not any(p.startswith(path + "/") and final[p][0] != "dir"
                                for p in final):
                continue  # an empty directory made for a new file, left by the kill
            wrong.append(f"{path}: {describe(have)}, state {j} has {describe(want)}")
        if not wrong:
            return "\n".join(problems) or None
        if best is None or len(wrong) < len(best):
            best = wrong
    assert best is not None
    return "\n".join([*problems, "no state of the operation matches; the closest differs in:",
                      *best[:12]])


# ---------------------------------------------------------------------------------------------
# Running calls


def env_for(ws: Path, state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZBTOOLS_", "CRASHKIT_"))}
    env.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", ZBTOOLS_WORKSPACE=str(ws),
               ZBTOOLS_STATE_DIR=str(state), ZBTOOLS_CONFIG=os.environ["ZBTOOLS_CONFIG"])
    return env


def inprocess(ws: Path, state: Path, tool: str, stdin: str) -> Call:
    tempnames._swept.clear()  # as a new process: no directory swept yet
    try:
        return run_inprocess([tool], stdin=stdin, workspace=ws,
                             env={"ZBTOOLS_STATE_DIR": str(state)})
    finally:
        writerlog.drop()  # as a process does when it exits
        writerlog._folder[0] = None


class Killed:
    """How a child run ended: killed (at which step, or after which delay) or finished."""

    def __init__(self, killed: bool, steps: int | None, code: int, out: str, err: str) -> None:
        self.killed = killed
        self.steps = steps
        self.code = code
        self.out = out
        self.err = err


def run_child(ws: Path, state: Path, tool: str, stdin: str, *, kill_at: int = 0,
              partial: bool = False, delay: float | None = None,
              planted: str | None = None) -> Killed:
    """Run ``zbtools TOOL`` in a new process; kill it at step ``kill_at``, or ``delay`` seconds
    after its first step. ``planted``: code the child runs first (a planted bug)."""
    read, write = os.pipe()
    env = env_for(ws, state)
    env.update(CRASHKIT_KILL_AT=str(kill_at), CRASHKIT_PARTIAL="1" if partial else "",
               CRASHKIT_FD=str(write))
    code = "from tests.invariants._crash_child import main\n"
    if planted:
        code += planted + "\n"
    child_proc = subprocess.Popen(
        [sys.executable, "-c", code + "main()", tool], cwd=ws, env=env, pass_fds=(write,),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(write)
    try:
        if delay is None:
            out, err = child_proc.communicate(stdin.encode(), timeout=120)
        else:
            assert child_proc.stdin is not None
            feed = stdin.encode()
            # fed by a thread: a big request fills the pipe before the first step
            import threading

            def feed_all() -> None:
                assert child_proc.stdin is not None
                try:
                    child_proc.stdin.write(feed)
                    child_proc.stdin.close()
                except OSError:
                    pass

            feeder = threading.Thread(target=feed_all)
            feeder.start()
            ready, _, _ = select.select([read], [], [], 60)
            if ready and os.read(read, 6) == b"start\n":
                time.sleep(delay)
            child_proc.send_signal(signal.SIGKILL)
            feeder.join()
            child_proc.stdin = None  # closed by the feeder
            out, err = child_proc.communicate(timeout=120)
        report = b""
        while chunk := os.read(read, 4096):
            report += chunk
    finally:
        os.close(read)
        if child_proc.poll() is None:
            child_proc.kill()
            child_proc.wait()
    killed = child_proc.returncode == -signal.SIGKILL
    steps = None
    for line in report.decode().splitlines():
        if line.startswith("count "):
            steps = int(line.split()[1])
    return Killed(killed, steps, child_proc.returncode, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"))


def run_reference(ws: Path, state: Path, op: Op) -> tuple[list[State], list[str], float]:
    """The operation uninterrupted, call by call: the state after each, its steps, its time
    from the first step on."""
    versions = [scan(ws)[0]]
    first: list[float] = []
    switch = child.Switch(on_first=lambda: first.append(time.monotonic()))
    switch.trace = []
    restore = child.install(switch)
    try:
        for tool, args in op.calls:
            done = inprocess(ws, state, tool, json.dumps(args))
            assert done.code != 4, done
            versions.append(scan(ws)[0])
    finally:
        restore()
    took = time.monotonic() - first[0] if first else 0.0
    return versions, switch.trace, took


def child_request(op: Op) -> tuple[str, str]:
    if op.batch:
        lines = [json.dumps({"id": i, "tool": t, "args": a}) for i, (t, a) in enumerate(op.calls)]
        return "batch", "\n".join(lines) + "\n"
    (tool, args), = op.calls
    return tool, json.dumps(args)


# ---------------------------------------------------------------------------------------------
# The invariant


def check_crash(base: Path, case: Crash, planted: str | None = None) -> None:
    base.mkdir()
    try:
        _check_crash(base, case, planted)
    finally:
        for folder, dirs, _ in os.walk(base):  # copied trees may lack write bits
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o700)
        shutil.rmtree(base, ignore_errors=True)


def _check_crash(base: Path, case: Crash, planted: str | None) -> None:
    tree, op = case.tree, case.op
    ref, ref_state = base / "ref", base / "ref-state"
    ws, state = base / "ws", base / "state"
    earlier: list[State] = []  # the states before the operation's setup calls
    for root, st_dir in ((ref, ref_state), (ws, state)):
        root.mkdir()
        build(root, tree)
        for tool, args in op.setup:
            if root == ref:
                earlier.append(scan(root)[0])
            done = inprocess(root, st_dir, tool, json.dumps(args))
            assert done.code == 0, done
    start_state, _, start_inodes = scan(ws)
    versions, trace, took = run_reference(ref, ref_state, op)
    steps = len(trace)
    assert versions[0] == start_state
    tool, stdin = child_request(op)
    if case.mode == "timing":
        ran = run_child(ws, state, tool, stdin, delay=case.where * took * 1.5, planted=planted)
    else:
        ran = run_child(ws, state, tool, stdin, kill_at=case.kill_at(trace),
                        partial=case.partial, planted=planted)
    assert ran.code in (0, 1, -signal.SIGKILL), (ran.code, ran.out[-2000:], ran.err[-2000:])
    next_call = case.next_call
    next_tool, next_args = op.calls[0] if next_call[0] == "retry" else next_call
    if case.crash_recovery is not None and ran.killed:
        again = run_child(ws, state, next_tool, json.dumps(next_args),
                          kill_at=1 + int(case.crash_recovery * 40))
        assert again.code in (0, 1, -signal.SIGKILL), (again.code, again.out, again.err)
    after = inprocess(ws, state, next_tool, json.dumps(next_args))
    assert after.code in (0, 1), after
    shown = json.dumps(after.json)
    assert ".zbtmp-" not in shown and ".zbdel-" not in shown and ".zbbak-" not in shown, shown
    final, debris, inodes = scan(ws)
    if next_call[0] == "write_file":  # its own file is no version of the operation
        final.pop(next_args["path"], None)
        inodes.pop(next_args["path"], None)
    outcome = f"{op.kind} {'killed' if ran.killed else 'finished'}"
    _kinds[outcome] = _kinds.get(outcome, 0) + 1
    context = f"{'killed' if ran.killed else 'finished'} after {ran.steps or '?'} of ~{steps} " \
              f"steps; next call {next_tool}: {after.out[-1500:]}"
    wrong = explain(final, versions, op.per_file)
    assert wrong is None, f"{wrong}\n{context}"
    assert not debris, f"debris left after the next call: {debris}\n{context}"
    assert not state_debris(state), f"state left: {state_debris(state)}\n{context}"
    if not op.batch:
        matches = [j for j, v in enumerate(versions) if _same(final, v)]
        if matches and all(versions[j] == versions[0] for j in matches):
            # nothing was done: every file is its own inode still, links and all
            moved = {p for p in final if p in inodes and p in start_inodes
                     and inodes[p][0] != start_inodes[p][0]}
            assert not moved, f"files put back as new inodes: {sorted(moved)}\n{context}"
        if matches:
            ref_inodes = _reference_links(ref, op, versions, matches)
            if ref_inodes is not None:
                assert link_groups(inodes) == ref_inodes, \
                    f"hard links differ: {link_groups(inodes)} != {ref_inodes}\n{context}"
    check_undo(ws, state, op, versions + earlier, context)


def _same(final: State, version: State) -> bool:
    return explain(final, [version], set()) is None


def _reference_links(ref: Path, op: Op, versions: list[State],
                     matches: list[int]) -> set[frozenset[str]] | None:
    """The hard links of the state the final state matched, when it is the reference's last."""
    if matches[-1] != len(versions) - 1:
        return None
    return link_groups(scan(ref)[2])


def check_undo(ws: Path, state: Path, op: Op, versions: list[State], context: str) -> None:
    """``undo`` restores one of the file's versions or refuses; the journal stays readable."""
    for path in op.undo_paths[:1]:
        before, _, inodes = scan(ws)
        names = {p for p, (ino, _) in inodes.items() if path in inodes
                 and ino == inodes[path][0]}  # an undo in place changes every name
        done = inprocess(ws, state, "undo", json.dumps({"path": path}))
        assert done.code in (0, 1), f"{done}\n{context}"
        if done.code == 0:
            now = scan(ws)[0]
            allowed = [v.get(path) for v in versions]
            assert now.get(path) in allowed, \
                f"undo of {path} gave {describe(now.get(path))}\n{context}"
            for other in set(now) | set(before):
                if other != path and other not in names and \
                        not other.startswith(path + "/") and not path.startswith(other + "/"):
                    assert now.get(other) == before.get(other), f"undo changed {other}\n{context}"
        else:
            assert done.error["code"] in ("not_found", "stale_file", "already_exists"), \
                f"{done}\n{context}"
    look = inprocess(ws, state, "undo", json.dumps({"dry_run": True}))
    assert look.code in (0, 1), look
    if look.code == 1:
        assert look.error["code"] in ("not_found", "stale_file"), f"{look}\n{context}"


# ---------------------------------------------------------------------------------------------
# The search


KILL_POINT = st.floats(min_value=0, max_value=1, allow_nan=False, exclude_max=True)
PUBLISHING = ("rename", "replace", "link", "renameat2", "unlink", "remove", "rmdir", "mkdir",
              "symlink", "ftruncate")
WRITING = ("write", "pwrite", "copy_file_range", "sendfile")


class Crash:
    """One case: the workspace, the operation, where its process is killed, the next call.

    ``mode``: ``step`` kills at a step chosen uniformly (``where`` of the way through the
    uninterrupted run's steps); ``publish`` just before or after (``after``) one of the steps
    that change what a name holds (renames, links, unlinks, directory changes, truncations),
    where multi-step operations are part done; ``write`` at one of its writes (half done when
    ``partial``) or truncations of a file in place (an in-place edit, an append: the file is
    part written there), else of any file; ``timing`` after ``where`` of
    the run's time (from its first step, so kills land inside system calls too).
    ``crash_recovery``: the next call is killed too (at that point of its first 40 steps), and
    the call after it is checked."""

    def __init__(self, tree: Tree, op: Op, mode: str, where: float, after: bool, partial: bool,
                 next_call: tuple[str, dict[str, Any]], crash_recovery: float | None) -> None:
        self.tree = tree
        self.op = op
        self.mode = mode
        self.where = where
        self.after = after
        self.partial = partial
        self.next_call = next_call
        self.crash_recovery = crash_recovery

    def kill_at(self, trace: list[str]) -> int:
        if self.mode == "publish":
            marks = [n for n, step in enumerate(trace, 1) if step.split()[0] in PUBLISHING]
        elif self.mode == "write":  # writes into a file of the workspace itself, else any
            writes = [(n, step.split()) for n, step in enumerate(trace, 1)
                      if step.split()[0] in (*WRITING, "ftruncate")]
            marks = [n for n, parts in writes if len(parts) > 1 and "/ref/" in parts[-1]
                     and parse_temp_name(os.path.basename(parts[-1])) is None] or \
                [n for n, parts in writes if parts[0] != "ftruncate"]
        else:
            marks = []
        if marks:
            return marks[int(self.where * len(marks))] + self.after
        return 1 + int(self.where * (len(trace) + 1))

    def __repr__(self) -> str:
        extra = " then killed again" if self.crash_recovery is not None else ""
        return (f"Crash({self.tree!r}, {self.op!r}, {self.mode} {self.where:.3f}"
                f"{' after' if self.after else ''}{' partial' if self.partial else ''}, "
                f"next {self.next_call[0]}({self.next_call[1]}){extra})")


@st.composite
def crashes(draw: st.DrawFn) -> Crash:
    tree, op = draw(operations())
    mode = draw(st.sampled_from(["publish", "publish", "write", "step", "timing"]))
    where = draw(KILL_POINT)
    after = draw(st.booleans())
    partial = draw(st.booleans())
    call = draw(next_calls(op))
    crash_recovery = draw(KILL_POINT) if draw(st.integers(0, 4)) == 0 else None
    return Crash(tree, op, mode, where, after, partial, call, crash_recovery)


_runs = [0]
_kinds: dict[str, int] = {}  # operations checked, by kind (killed or finished)


@pytest.fixture(scope="module", autouse=True)
def _long_mode_report() -> Iterator[None]:
    """In the long mode, say how much was searched (run with ``-s`` to see it)."""
    yield
    if LONG:
        sys.stderr.write(f"\ncrash invariant: {sum(_kinds.values())} operations: "
                         + ", ".join(f"{k} {n}" for k, n in sorted(_kinds.items())) + "\n")


def _base(tmp_path: Path) -> Path:
    _runs[0] += 1
    return tmp_path / f"ex{_runs[0]}"


@invariant(examples=50)
@given(case=crashes())
def test_a_killed_operation_leaves_one_of_its_states_and_no_debris(tmp_path: Path,
                                                                    case: Crash) -> None:
    check_crash(_base(tmp_path), case)


# A write that replaces the file in place (open, truncate, write) instead of through a temp file
# and a rename: a kill in the middle leaves a part of the new content.
NON_ATOMIC = """
import os
from zbtools.core.files import replacing as _r
def _in_place(res, data, *args, **kw):
    fd = os.open(res.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644,
                    dir_fd=res.dir_fd)
    view = memoryview(data)
    while view:  # in pieces, as a write loop does: a kill lands between two of them
        view = view[os.write(fd, view[:16384]):]
    os.close(fd)
    out = _r.WriteOutcome()
    return out
_r.replace_whole = _in_place
import zbtools.tools.write_file as _w
_w.create_file = _w.replace_whole = _in_place
"""


@pytest.mark.skipif(LONG, reason="the long mode searches; this checks the check itself")
def test_the_crash_invariant_catches_a_write_that_is_not_atomic(tmp_path: Path) -> None:
    @invariant(examples=12, phases=[Phase.generate], derandomize=True)
    @given(case=big_write(), where=KILL_POINT)
    def search(case: tuple[Tree, Op], where: float) -> None:
        tree, op = case
        check_crash(_base(tmp_path), Crash(tree, op, "step", where, False, True,
                                           ("list_directory", {"path": "."}), None),
                    planted=NON_ATOMIC)

    failure = planted_bug_is_caught(search)
    assert "not one of" in str(failure) or "no state" in str(failure), failure


# ---------------------------------------------------------------------------------------------
# Regressions: what the search found, kept as examples


def traced(tree: Tree, base: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The steps of ``calls`` made uninterrupted in a twin workspace (``"name path"`` each)."""
    ws, state = base / "twin", base / "twin-state"
    ws.mkdir()
    build(ws, tree)
    switch = child.Switch()
    for n, (tool, args) in enumerate(calls):
        if n == len(calls) - 1:
            switch.trace = []
            restore = child.install(switch)
        try:
            done = inprocess(ws, state, tool, json.dumps(args))
        finally:
            if switch.trace is not None:
                restore()
        assert done.code == 0, done
    assert switch.trace is not None
    return switch.trace


def small_tree() -> Tree:
    from tests.invariants._crash_ops import LINKED, TEXT_FILES, content

    tree = Tree({p: (0o644, content(p, 3)) for p in (*TEXT_FILES, LINKED[0])})
    for n in range(30):
        tree.files[f"tree/many/f{n}.txt"] = (0o644, content(f"f{n}", 2))
    return tree


def test_a_killed_recursive_delete_is_finished_by_the_next_call_whatever_the_tool(
        tmp_path: Path) -> None:
    """Found by the search: the half-deleted tree stayed (hidden, but on disk and in ``git
    status``) until the next recursive delete or directory copy in that very directory."""
    tree = small_tree()
    steps = traced(tree, tmp_path, [("delete_file", {"path": "tree", "recursive": True})])
    unlinks = [n for n, step in enumerate(steps, 1) if step.startswith("unlink f")]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    ran = run_child(ws, state, "delete_file", json.dumps({"path": "tree", "recursive": True}),
                    kill_at=unlinks[len(unlinks) // 2])
    assert ran.killed
    left = scan(ws)[1]
    assert len(left) == 1 and ".zbdel-" in left[0] and not (ws / "tree").exists()
    after = inprocess(ws, state, "read_file", json.dumps({"path": "a.txt"}))
    assert after.code == 0, after
    assert scan(ws)[1] == [] and not (ws / "tree").exists()
    assert not state_debris(state)


def test_a_killed_writes_temp_file_is_removed_by_a_read_only_next_call(tmp_path: Path) -> None:
    tree = small_tree()
    call = ("write_file", {"path": "src/new.txt", "content": big_content(300_000)})
    steps = traced(tree, tmp_path, [call])
    (rename,) = [n for n, step in enumerate(steps, 1) if step.startswith("link .new.txt.zbtmp")]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    ran = run_child(ws, state, call[0], json.dumps(call[1]), kill_at=rename)
    assert ran.killed
    assert [p for p in scan(ws)[1] if p.startswith("src/.new.txt.zbtmp-")]
    assert (state / os.listdir(state)[0] / "writers").is_dir()
    after = inprocess(ws, state, "list_directory", json.dumps({"path": "tree"}))
    assert after.code == 0, after
    assert scan(ws)[1] == [] and not (ws / "src" / "new.txt").exists()
    assert not state_debris(state)


def test_a_saved_version_cut_short_is_removed_from_the_undo_journal(tmp_path: Path) -> None:
    """Found by the search: a kill while the undo journal saved the file's old version left its
    temp file in the state directory until the journal was next rewritten (every ~1,000
    changes), one per kill, each as big as the file."""
    tree = small_tree()
    call = ("write_file", {"path": "a.txt", "content": "new\n"})
    steps = traced(tree, tmp_path, [call])
    (replace,) = [n for n, s in enumerate(steps, 1) if s.startswith("replace") and "blobs" in s]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    ran = run_child(ws, state, call[0], json.dumps(call[1]), kill_at=replace)
    assert ran.killed and (ws / "a.txt").read_text() == "new\n"
    assert [p for p in state_debris(state) if ".tmp-" in p]
    after = inprocess(ws, state, "read_file", json.dumps({"path": "b.txt"}))
    assert after.code == 0, after
    assert not state_debris(state)
    undone = inprocess(ws, state, "undo", json.dumps({"path": "a.txt"}))
    assert undone.code == 1 and undone.error["code"] == "not_found", undone  # no record


def test_a_killed_undo_leaves_no_journal_rewrite_behind(tmp_path: Path) -> None:
    tree = small_tree()
    edit = ("apply_edit", {"path": "b.txt", "old_text": "b.txt line 2", "new_text": "two"})
    undo = ("undo", {"path": "b.txt"})
    steps = traced(tree, tmp_path, [edit, undo])
    (replace,) = [n for n, s in enumerate(steps, 1) if s.startswith("replace")
                  and "journal.jsonl.tmp-" in s]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    assert inprocess(ws, state, edit[0], json.dumps(edit[1])).code == 0
    ran = run_child(ws, state, undo[0], json.dumps(undo[1]), kill_at=replace)
    assert ran.killed and (ws / "b.txt").read_bytes() == tree.files["b.txt"][1]
    after = inprocess(ws, state, "get_file_info", json.dumps({"path": "b.txt"}))
    assert after.code == 0, after
    assert not state_debris(state) and scan(ws)[1] == []
    again = inprocess(ws, state, "undo", json.dumps({"path": "b.txt"}))
    assert again.code == 1 and again.error["code"] == "stale_file", again  # said clearly


def test_a_live_writers_temp_file_survives_the_next_call(tmp_path: Path) -> None:
    """The next call removes only what dead writers left: a writer still at work (here
    paused before its rename) keeps its temp file, and its log."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, small_tree())
    env = env_for(ws, state)
    env["ZBTOOLS_TEST_PAUSE_BEFORE_RENAME"] = "1"
    writer = subprocess.Popen([sys.executable, "-m", "zbtools", "write_file"], cwd=ws, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        assert writer.stdin is not None and writer.stderr is not None
        writer.stdin.write(json.dumps({"path": "a.txt", "content": "new\n"}).encode())
        writer.stdin.close()
        assert writer.stderr.readline().startswith(b"zbtools-test-paused")
        (temp,) = scan(ws)[1]
        after = inprocess(ws, state, "read_file", json.dumps({"path": "a.txt"}))
        assert after.code == 0, after
        assert scan(ws)[1] == [temp]
    finally:
        writer.kill()
        writer.stdin = None  # closed above
        writer.communicate()
    after = inprocess(ws, state, "read_file", json.dumps({"path": "a.txt"}))
    assert after.code == 0 and scan(ws)[1] == [] and not state_debris(state)


def test_a_patch_killed_while_removing_its_backups_is_never_undone_into_a_deletion(
        tmp_path: Path) -> None:
    """Found by the search: killed after its commit, once it had removed a.txt's backup but
    before its journal went, a patch was completed by the next call with a record that said
    a.txt had been created (its old version was gone): ``undo a.txt`` then deleted it."""
    tree = small_tree()
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-a.txt line 2\n+two\n"
             "*** Update File: b.txt\n@@\n-b.txt line 2\n+two\n*** End Patch\n")
    call = ("apply_edit", {"patch": patch})
    steps = traced(tree, tmp_path, [call])
    (second,) = [n for n, step in enumerate(steps, 1) if step.startswith("unlink .b.txt.zbbak")]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    ran = run_child(ws, state, call[0], json.dumps(call[1]), kill_at=second)
    assert ran.killed
    after = inprocess(ws, state, "read_file", json.dumps({"path": "c.md"}))
    assert after.code == 0, after
    assert "a.txt cannot be undone" in " ".join(after.json["warnings"]), after
    assert scan(ws)[1] == [] and not state_debris(state)
    undone = inprocess(ws, state, "undo", json.dumps({"path": "a.txt"}))
    assert undone.code == 1 and undone.error["code"] == "not_found", undone
    assert (ws / "a.txt").read_text() == "a.txt line 1\ntwo\na.txt line 3\n"
    undone = inprocess(ws, state, "undo", json.dumps({"path": "b.txt"}))
    assert undone.code == 0, undone
    assert (ws / "b.txt").read_bytes() == tree.files["b.txt"][1]


def test_undo_after_a_completed_patch_recreates_a_deleted_file_with_its_mode(
        tmp_path: Path) -> None:
    """Found by the search: a patch killed after its commit and completed by the next call
    recorded its deleted (or moved away) files without their permission bits, so that ``undo``
    recreated a 0600 file as 0644."""
    tree = small_tree()
    tree.files["a.txt"] = (0o600, tree.files["a.txt"][1])
    patch = ("*** Begin Patch\n*** Delete File: a.txt\n"
             "*** Update File: b.txt\n@@\n-b.txt line 2\n+two\n*** End Patch\n")
    call = ("apply_edit", {"patch": patch})
    steps = traced(tree, tmp_path, [call])
    (first,) = [n for n, step in enumerate(steps, 1) if step.startswith("unlink .a.txt.zbbak")]
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    build(ws, tree)
    ran = run_child(ws, state, call[0], json.dumps(call[1]), kill_at=first)
    assert ran.killed and not (ws / "a.txt").exists()
    after = inprocess(ws, state, "read_file", json.dumps({"path": "c.md"}))
    assert after.code == 0 and "had changed every file" in after.out, after
    undone = inprocess(ws, state, "undo", json.dumps({"path": "a.txt"}))
    assert undone.code == 0 and undone.result["action"] == "recreated", undone
    assert (ws / "a.txt").read_bytes() == tree.files["a.txt"][1]
    assert (ws / "a.txt").stat().st_mode & 0o777 == 0o600


def test_a_recovery_killed_while_saving_undo_versions_leaves_nothing_behind(
        tmp_path: Path) -> None:
    """Found by the search: the call that completes a killed patch (any tool, here a read)
    saves the old versions for undo; killed while doing so, it left a temp file in the undo
    journal that no later call removed, as it had not logged that it wrote there."""
    tree = small_tree()
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-a.txt line 2\n+two\n"
             "*** Update File: b.txt\n@@\n-b.txt line 2\n+two\n*** End Patch\n")
    call = ("apply_edit", {"patch": patch})
    steps = traced(tree, tmp_path, [call])
    (first,) = [n for n, step in enumerate(steps, 1) if step.startswith("unlink .a.txt.zbbak")]
    read = ("read_file", {"path": "c.md"})

    def crashed(name: str) -> tuple[Path, Path]:
        ws, state = tmp_path / name, tmp_path / f"{name}-state"
        ws.mkdir()
        build(ws, tree)
        assert run_child(ws, state, call[0], json.dumps(call[1]), kill_at=first).killed
        return ws, state

    twin, twin_state = crashed("twin2")
    switch = child.Switch()
    switch.trace = []
    restore = child.install(switch)
    try:
        assert inprocess(twin, twin_state, read[0], json.dumps(read[1])).code == 0
    finally:
        restore()
    save = next(n for n, s in enumerate(switch.trace, 1)  # the first old version saved
                if s.startswith("replace") and "blobs" in s)
    ws, state = crashed("ws")
    assert run_child(ws, state, read[0], json.dumps(read[1]), kill_at=save).killed
    assert [p for p in state_debris(state) if ".tmp-" in p]
    after = inprocess(ws, state, read[0], json.dumps(read[1]))
    assert after.code == 0, after
    assert not state_debris(state) and scan(ws)[1] == []


def test_an_undo_of_a_moved_file_killed_at_any_publish_point_leaves_one_of_its_states(
        tmp_path: Path) -> None:
    """Found by the search: ``undo`` of the new name of a file a patch moved (and changed)
    deletes it, then removes the directories the patch made for it. Killed between the two, it
    left the file gone and its directory standing, with the change still in the undo journal:
    neither state of the undo (the search's report named the file as missing). The undo now
    goes through the intent journal, so the next call rolls it back or completes it."""
    tree = small_tree()
    patch = ("*** Begin Patch\n*** Update File: a.txt\n*** Move to: new/deep/mv-a.txt\n@@\n"
             "-a.txt line 2\n+a.txt line 2 patched\n*** End Patch\n")
    setup = ("apply_edit", {"patch": patch})
    undo: tuple[str, dict[str, Any]] = ("undo", {})
    steps = traced(tree, tmp_path, [setup, undo])
    marks = [n for n, step in enumerate(steps, 1) if step.split()[0] in PUBLISHING]
    points = sorted({k for n in marks for k in (n, n + 1) if k <= len(steps)})
    twin = tmp_path / "twin"
    after = scan(twin)[0]
    inprocess(twin, tmp_path / "twin-state", "undo", json.dumps({}))  # the source's turn
    original = (twin / "a.txt").read_bytes()
    assert original == tree.files["a.txt"][1]
    wrong: list[str] = []
    for k in points:
        ws, state = tmp_path / f"ws{k}", tmp_path / f"state{k}"
        ws.mkdir()
        build(ws, tree)
        assert inprocess(ws, state, setup[0], json.dumps(setup[1])).code == 0
        before = scan(ws)[0]
        ran = run_child(ws, state, undo[0], json.dumps(undo[1]), kill_at=k)
        assert ran.code in (0, -signal.SIGKILL), (ran.code, ran.out, ran.err)
        done = inprocess(ws, state, "read_file", json.dumps({"path": "b.txt"}))
        assert done.code == 0, done
        final, left, _ = scan(ws)
        problem = explain(final, [before, after], set())
        if problem or left or state_debris(state):
            wrong.append(f"killed at {k} ({steps[k - 1]}): {problem} {left} "
                         f"{state_debris(state)}")
            continue
        # nothing is lost: undo (of the new name if it is back, then of the source's record)
        # brings the original back
        outs = []
        for _ in range(2):
            if (ws / "a.txt").exists():
                break
            outs.append(inprocess(ws, state, "undo", json.dumps({})).out)
        if not (ws / "a.txt").exists() or (ws / "a.txt").read_bytes() != original or \
                (ws / "new").exists():
            wrong.append(f"killed at {k} ({steps[k - 1]}): undo then left "
                         f"{sorted(scan(ws)[0])} ({outs})")
    assert not wrong, f"{len(wrong)} of {len(points)} kill points:\n" + "\n".join(wrong)
