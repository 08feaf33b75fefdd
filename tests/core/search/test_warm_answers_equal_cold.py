"""Adversarial checks of the warm session surface (watched walks, recordings, memos): each
warm answer must equal a cold command-line call's, after any change made between calls."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.core.search.test_cache import settle  # noqa: F401 (a fixture, used by name)
from zbtools.core.files.workspace import Workspace
from zbtools.core.search.watch import ChangeMonitor

pytestmark = [pytest.mark.skipif(ChangeMonitor.open(1) is None,
                                 reason="no inotify here: sessions re-check by stat instead"),
              pytest.mark.slow]  # sweeps of changes between warm and cold calls


class Session:
    """A ``batch`` session in process, each answer checked against a cold CLI call."""

    def __init__(self, ws: Path, cli: Any) -> None:
        from zbtools.core.call.config import load_limits
        from zbtools.surfaces.batch import Batch

        self.cli = cli
        self.workspace = Workspace(str(ws))
        self.batch = Batch(self.workspace, load_limits(os.environ, {}), dict(os.environ), None,
                           None)

    def envelope(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        _id, envelope = self.batch.call(json.dumps({"tool": tool, "args": args}).encode())
        assert isinstance(envelope, dict)
        return envelope

    def check(self, tool: str, args: dict[str, Any], done: Any = None) -> Any:
        """The warm answer (or error), asserted equal to a cold call's."""
        warm = self.envelope(tool, args)
        cold = self.cli(tool, stdin=args).json
        for envelope in (warm, cold):
            envelope.get("result", {}).pop("engine", None)  # which engine answered
            if "head_limit" in args or "max_results" in args:  # a cold parallel search may
                envelope.get("result", {}).pop("files_searched", None)  # read more first
            envelope.pop("warnings", None)
        assert warm == cold, (tool, args, done)
        return warm.get("result")

    def close(self) -> None:
        self.batch.search_cache.close()
        self.workspace.close()


@pytest.fixture
def session(ws: Path, cli: Any) -> Any:
    s = Session(ws, cli)
    yield s
    s.close()


def build(ws: Path) -> None:
    for d in ("a", "a/a", "a/b", "src", "src/pkg", "docs", "build", ".hidden", "node_modules",
              ".git/info"):
        (ws / d).mkdir(parents=True, exist_ok=True)
    for i in range(4):
        (ws / "src" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (ws / "src" / "pkg" / f"p{i}.py").write_text(f"x = {i}\n")
        (ws / "a" / "a" / f"q{i}.py").write_text(f"q = {i}\n")
    (ws / "a" / "x.py").write_text("return x\n")
    (ws / "docs" / "a.md").write_text("# a\nreturn\n")
    (ws / "build" / "out.o").write_text("bin\n")
    (ws / "node_modules" / "m.js").write_text("return 1\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / ".git" / "info" / "exclude").write_text("")
    (ws / "note.log").write_text("log return\n")
    (ws / ".hidden" / "h.txt").write_text("return h\n")


def shake(ws: Path, rng: random.Random) -> str:
    """One random change, new kinds besides those of test_search_watch.change."""
    files = sorted(p for p in ws.rglob("*") if p.is_file() and not p.is_symlink()
                   and ".git" not in p.parts)
    dirs = sorted(p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink()
                  and ".git" not in p.parts)
    places = dirs or [ws]
    kind = rng.choice(["link_over", "link_written_gone", "link_renamed_away", "link_kept",
                       "utime_file", "chmod", "dir_for_dir", "exclude", "ignore_above",
                       "write_same_size", "swap_names", "symlink_swap", "dir_to_file",
                       "rename_into", "hidden_dir", "temp_rename_over"])
    target = rng.choice(files) if files else ws / "z.py"
    # a link is made to a file and in a directory that every walk holding that file enters
    # (and so watches): a link from elsewhere (an ignored or hidden directory, or outside a
    # walk of a subdirectory) is outside the watched tree, the documented blind spot
    watched = [d for d in (ws / "a",) if d.is_dir() and not d.is_symlink()]
    # (an ignore file with several links is test_an_ignore_file_hard_linked_from_outside...)
    linkable = [p for p in files if p.parent in watched and p.name != ".gitignore"]
    if kind.startswith("link"):
        target = rng.choice(linkable) if linkable else ws / "none"
        if not linkable:
            return "none"
    other = rng.choice(linkable) if linkable else target
    if kind == "link_over" and target != other and other in linkable:
        other.unlink()
        os.link(target, other)
        if rng.random() < 0.7:
            with open(other, "a") as fh:
                fh.write("return via link\n")
    elif kind in ("link_written_gone", "link_renamed_away", "link_kept"):
        tmp = rng.choice(watched or [ws]) / rng.choice([".lnk", "lnk.log", "lnk.tmp"])
        if tmp.exists() or tmp.is_symlink():
            return "none"
        st = target.stat()
        os.link(target, tmp)
        with open(tmp, "r+") as fh:
            data = fh.read()
            fh.seek(0)
            fh.write(data.replace("return", "RETURN").replace("x", "y"))
        if rng.random() < 0.5:
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        if kind == "link_written_gone":
            tmp.unlink()
        elif kind == "link_renamed_away":
            tmp.rename(ws.parent / f"away{rng.randrange(10**6)}")
    elif kind == "utime_file" and files:
        os.utime(target, ns=(10**9, rng.randrange(10**18)))
    elif kind == "chmod" and files:
        os.chmod(target, rng.choice([0o600, 0o644, 0o755]))
    elif kind == "dir_for_dir" and dirs:
        d = rng.choice(dirs)
        shutil.rmtree(d)
        d.mkdir()
        (d / "fresh.py").write_text("return fresh\n")
    elif kind == "exclude":
        (ws / ".git" / "info" / "exclude").write_text(
            rng.choice(["*.md\n", "src/\n", "", "q1.py\n"]))
    elif kind == "ignore_above":
        (ws / "a" / ".gitignore").write_text(rng.choice(["a/\n", "x.py\n", "", "*.py\n"]))
    elif kind == "write_same_size" and files:
        st = target.stat()
        raw = target.read_bytes()
        target.write_bytes(raw.replace(b"return", b"RETURN").replace(b"=", b"-"))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif kind == "swap_names" and target != other and ".gitignore" not in (target.name,
                                                                             other.name):
        tmp = target.parent / ".swap"
        target.rename(tmp)
        other.rename(target)
        tmp.rename(other)
    elif kind == "symlink_swap":
        link = rng.choice(places) / "ln"
        if link.is_symlink():
            link.unlink()
        elif link.exists():
            return "none"
        link.symlink_to(rng.choice(["../src", "x.py", "src/m0.py", "nowhere"]))
    elif kind == "dir_to_file" and dirs:
        d = rng.choice(dirs)
        shutil.rmtree(d)
        d.write_text("return was a dir\n")
    elif kind == "rename_into" and files:
        target.rename(rng.choice(places) / f"moved{rng.randrange(100)}.py")
    elif kind == "hidden_dir":
        d = rng.choice(places) / ".cache"
        d.mkdir(exist_ok=True)
        (d / "c.py").write_text("return c\n")
    elif kind == "temp_rename_over" and files:
        tmp = target.parent / ".t.swp"
        tmp.write_text("return replaced\n")
        tmp.replace(target)
    return kind


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("find_files_glob", {"pattern": "a/**/*.py"}),
    ("find_files_glob", {"pattern": "a/**/*.py", "path": "a"}),
    ("find_files_glob", {"pattern": "**/*.py", "sort": "mtime", "limit": 3}),
    ("find_files_glob", {"pattern": "**", "type": "any", "sort": "mtime"}),
    ("find_files_glob", {"pattern": "**", "type": "directory"}),
    ("find_files_glob", {"pattern": "**/*.py", "exclude": ["m1*", "a/**"]}),
    ("find_files_glob", {"pattern": "**/*", "include_hidden": True, "include_ignored": True}),
    ("find_files_glob", {"pattern": "**/*.py", "exclude_dirs": []}),
    ("find_files_glob", {"pattern": "*.py", "path": "src", "limit": 2}),
    ("list_directory", {"max_depth": 512}),
    ("list_directory", {"max_depth": 2, "path": "a"}),
    ("list_directory", {"max_depth": 3, "include_hidden": True, "limit": 7}),
    ("list_directory", {"max_depth": 512, "include_ignored": True, "exclude_dirs": []}),
    ("get_workspace_structure", {"depth": 3}),
    ("get_workspace_structure", {"depth": 512, "limit": 5}),
    ("find_files", {"pattern": "p", "type": "any"}),
    ("find_files", {"pattern": "a/", "limit": 2}),
    ("grep_search", {"pattern": "return"}),
    ("grep_search", {"pattern": "return", "path": "a", "include_hidden": True}),
    ("grep_search", {"pattern": "x|q", "output_mode": "files_with_matches", "head_limit": 2}),
    ("grep_search", {"pattern": "RETURN|return", "output_mode": "count", "include_ignored": True}),
    ("grep_search", {"pattern": "return", "head_limit": 3, "context": 1}),
    ("codebase_search", {"query": "return", "max_results": 4}),
]


@pytest.mark.usefixtures("settle")
@pytest.mark.parametrize("seed", range(16))
def test_every_warm_answer_equals_a_cold_call_after_hard_links_renames_and_ignore_changes(
        ws: Path, cli: Any, session: Session, seed: int) -> None:
    rng = random.Random(seed)
    build(ws)
    done: list[str] = []
    for _step in range(30):
        tool, args = rng.choice(CALLS)
        for _ in range(2):
            session.check(tool, args, done)
        try:
            done.append(shake(ws, rng))
        except OSError:  # a change that cannot be made here (over a directory...) is none
            done.append("none")
        tool, args = rng.choice(CALLS)
        session.check(tool, args, done)


def test_a_file_linked_over_another_produced_file_and_written_is_seen(
        ws: Path, session: Session) -> None:
    """``rm y; ln x y; echo >> y``: x changed with no event on its own name."""
    (ws / "x.txt").write_text("hello\n")
    (ws / "y.txt").write_text("other\n")
    session.check("list_directory", {})
    session.check("list_directory", {})
    os.unlink(ws / "y.txt")
    os.link(ws / "x.txt", ws / "y.txt")
    with open(ws / "y.txt", "a") as fh:
        fh.write("more\n")
    session.check("list_directory", {})


@pytest.mark.usefixtures("settle")
@pytest.mark.parametrize("leave", ["unlink", "rename_away", "rename_over"])
def test_a_hard_link_made_in_a_watched_directory_written_and_gone_is_seen(
        ws: Path, session: Session, leave: str) -> None:
    """A link to a produced file under a skipped name (hidden, a temp), written through and
    gone before the next call: the file changed, and no event named it."""
    (ws / "x.txt").write_text("hello\n")
    (ws / "z.txt").write_text("zzz\n")
    for tool, args in (("grep_search", {"pattern": "hello"}), ("list_directory", {}),
                       ("grep_search", {"pattern": "hello"})):
        session.check(tool, args)
    os.link(ws / "x.txt", ws / ".t")
    with open(ws / ".t", "w") as fh:
        fh.write("world\n")
    if leave == "unlink":
        os.unlink(ws / ".t")
    elif leave == "rename_away":
        os.rename(ws / ".t", ws.parent / "away")
    else:
        os.rename(ws / ".t", ws / ".u")
        os.rename(ws / "z.txt", ws / ".u")  # over it: the written inode's name goes
    session.check("grep_search", {"pattern": "hello"})
    session.check("list_directory", {})


def test_a_glob_from_a_subdirectory_is_not_answered_by_the_pick_of_another_path(
        ws: Path, session: Session) -> None:
    """``a/**/*.py`` from ``.`` and from ``a`` (without ``a/a``) walk the same directory,
    but match paths relative to different places."""
    (ws / "a").mkdir()
    (ws / "a" / "x.py").write_text("x\n")
    session.check("find_files_glob", {"pattern": "a/**/*.py"})
    session.check("find_files_glob", {"pattern": "a/**/*.py", "path": "a"})
    session.check("find_files_glob", {"pattern": "a/**/*.py"})


def test_an_ignore_file_hard_linked_from_outside_and_written_there_is_seen(
        ws: Path, session: Session) -> None:
    """The ignore file had two links when the walk read it (so it is no 'link made after the
    walk'): rules written through the other link must change the next listing."""
    (ws / "x.py").write_text("x\n")
    (ws / ".gitignore").write_text("*.log\n")
    os.link(ws / ".gitignore", ws.parent / "shared-gitignore")
    session.check("list_directory", {})
    session.check("list_directory", {})
    with open(ws.parent / "shared-gitignore", "a") as fh:
        fh.write("*.py\n")
    session.check("list_directory", {})
