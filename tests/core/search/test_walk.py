"""The shared walker (zbtools/core/search/walk.py): ignore rules, hidden and excluded entries,
symlinks, depth, descriptors and unreadable directories, all counted, never fatal."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.tools._mutate import make_deep_tree, open_files_limit
from zbtools.contract import ToolError
from zbtools.core.files.fsops import remove_tree
from zbtools.core.files.workspace import Workspace
from zbtools.core.search.entries import MAX_DEPTH
from zbtools.core.search.walk import Walk


@pytest.fixture
def workspace(ws: Path) -> Iterator[Workspace]:
    space = Workspace(str(ws))
    yield space
    space.close()


def tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def paths(walk: Walk) -> list[str]:
    return [entry.rel for entry in walk]


def counts(walk: Walk) -> dict[str, Any]:
    return walk.skipped.to_json()


def test_entries_come_in_pre_order_sorted_by_name_with_posix_relative_paths(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {"b/z.txt": "", "b/a.txt": "", "a.txt": "", "c/d/e.txt": ""})
    walk = Walk(workspace, ".", max_depth=10)
    assert paths(walk) == ["a.txt", "b", "b/a.txt", "b/z.txt", "c", "c/d", "c/d/e.txt"]
    assert walk.skipped.total() == 0 and not walk.truncated


def test_max_depth_one_lists_only_the_direct_children(ws: Path, workspace: Workspace) -> None:
    tree(ws, {"src/main.py": "", "README": ""})
    assert paths(Walk(workspace, ".")) == ["README", "src"]
    assert paths(Walk(workspace, "src")) == ["src/main.py"]


def test_nested_gitignore_applies_to_its_own_subtree_and_negation_reincludes(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {".gitignore": "build/\n", "a.log": "", "build/out.o": "",
              "sub/.gitignore": "*.log\n!keep.log\n", "sub/x.log": "", "sub/keep.log": "",
              "sub/deeper/y.log": "", "sub/deeper/keep.log": "", "other/z.log": ""})
    walk = Walk(workspace, ".", max_depth=10)
    assert paths(walk) == ["a.log", "other", "other/z.log", "sub", "sub/deeper",
                           "sub/deeper/keep.log", "sub/keep.log"]
    assert counts(walk)["ignored"] == 3  # build/, sub/x.log, sub/deeper/y.log
    assert counts(walk)["hidden"] == 2  # the two .gitignore files


def test_ignored_directories_are_pruned_never_entered(ws: Path, workspace: Workspace,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    tree(ws, {".gitignore": "dist\n", "dist/a/b.js": "", "src/c.js": ""})
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    walk = Walk(workspace, ".", max_depth=10)
    assert paths(walk) == ["src", "src/c.js"]
    assert "dist" not in opened
    assert counts(walk)["ignored"] == 1


def test_a_deeper_ignore_file_wins_and_dot_ignore_beats_gitignore(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {".gitignore": "*.txt\n", "a/.gitignore": "!*.txt\n", "a/x.txt": "", "y.txt": "",
              "b/.gitignore": "!q.md\n", "b/.ignore": "q.md\n", "b/q.md": ""})
    assert paths(Walk(workspace, ".", max_depth=5)) == ["a", "a/x.txt", "b"]


def test_git_info_exclude_is_honoured(ws: Path, workspace: Workspace) -> None:
    tree(ws, {".git/info/exclude": "secret.env\n", "secret.env": "", "app.py": ""})
    walk = Walk(workspace, ".")
    assert paths(walk) == ["app.py"]
    assert counts(walk)["ignored"] == 1 and counts(walk)["excluded_dirs"] == 1


def test_rules_of_ancestors_apply_when_starting_in_a_subdirectory(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {".gitignore": "*.tmp\n", "src/a.tmp": "", "src/a.py": ""})
    walk = Walk(workspace, "src")
    assert paths(walk) == ["src/a.py"]
    assert counts(walk)["ignored"] == 1


def test_an_ignored_directory_named_explicitly_is_listed(ws: Path,
                                                         workspace: Workspace) -> None:
    tree(ws, {".gitignore": "build/\n", "build/out.o": ""})
    assert paths(Walk(workspace, "build")) == ["build/out.o"]


def test_include_ignored_lists_ignored_entries(ws: Path, workspace: Workspace) -> None:
    tree(ws, {".gitignore": "*.log\nbuild/\n", "a.log": "", "build/o": "", "b.py": ""})
    walk = Walk(workspace, ".", max_depth=3, include_ignored=True)
    assert paths(walk) == ["a.log", "b.py", "build", "build/o"]
    assert counts(walk)["ignored"] == 0


def test_hidden_entries_are_skipped_and_counted_unless_included(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {".env": "", ".config/x.toml": "", "main.py": ""})
    walk = Walk(workspace, ".", max_depth=3)
    assert paths(walk) == ["main.py"]
    assert counts(walk)["hidden"] == 2
    walk = Walk(workspace, ".", max_depth=3, include_hidden=True)
    assert paths(walk) == [".config", ".config/x.toml", ".env", "main.py"]
    assert counts(walk)["hidden"] == 0


def test_default_excluded_directories_are_counted_and_never_entered(
        ws: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (".git", "node_modules", "target", "__pycache__", ".hg", ".svn", "vendor"):
        tree(ws, {f"{name}/inner/file": ""})
    tree(ws, {"src/node_modules/pkg/index.js": "", "src/app.js": ""})
    scanned: list[int] = []
    real_scandir = os.scandir

    def spy(fd: Any) -> Any:
        scanned.append(fd)
        return real_scandir(fd)

    monkeypatch.setattr(os, "scandir", spy)
    walk = Walk(workspace, ".", max_depth=10, include_hidden=True, include_ignored=True)
    assert paths(walk) == ["src", "src/app.js"]
    assert counts(walk)["excluded_dirs"] == 8
    assert len(scanned) == 2  # the root and src, nothing else


def test_exclude_dirs_replaces_the_default_list(ws: Path, workspace: Workspace) -> None:
    tree(ws, {"node_modules/p.js": "", "gen/x": ""})
    assert paths(Walk(workspace, ".", max_depth=3, exclude_dirs=["gen"])) == [
        "node_modules", "node_modules/p.js"]
    assert paths(Walk(workspace, ".", max_depth=3, exclude_dirs=[])) == [
        "gen", "gen/x", "node_modules", "node_modules/p.js"]


def test_a_file_named_like_an_excluded_directory_is_listed(ws: Path,
                                                           workspace: Workspace) -> None:
    tree(ws, {"target": "a file"})
    assert paths(Walk(workspace, ".")) == ["target"]


def test_symlinks_to_directories_inside_and_outside_are_reported_not_followed(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {"real/a.txt": ""})
    (ws / "inside").symlink_to("real")
    (ws / "escape").symlink_to(ws.parent / "outside")
    entries = {e.rel: e for e in Walk(workspace, ".", max_depth=10)}
    assert sorted(entries) == ["escape", "inside", "real", "real/a.txt"]
    assert entries["inside"].kind == entries["escape"].kind == "symlink"
    assert entries["inside"].target == "real"
    assert entries["escape"].target == str(ws.parent / "outside")


def test_symlink_loops_end_the_walk_normally(ws: Path, workspace: Workspace) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "self").symlink_to(".")
    (ws / "d" / "up").symlink_to("..")
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    walk = Walk(workspace, ".", max_depth=MAX_DEPTH)
    assert paths(walk) == ["a", "b", "d", "d/self", "d/up"]
    assert walk.loops == 0 and walk.skipped.total() == 0


def test_a_directory_seen_twice_is_entered_once(ws: Path, workspace: Workspace,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # a bind mount loop cannot be made without privileges: make every directory look the same
    tree(ws, {"a/b/c.txt": ""})
    real_fstat = os.fstat
    root_ino = os.stat(ws).st_ino

    def same(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return os.stat_result((st.st_mode, root_ino, *tuple(st)[2:]))
        return st

    monkeypatch.setattr(os, "fstat", same)
    walk = Walk(workspace, ".", max_depth=10)
    assert paths(walk) == ["a"]
    assert walk.loops == 1


def test_a_2000_level_tree_is_bounded_by_the_depth_cap_within_few_descriptors(
        ws: Path, workspace: Workspace) -> None:
    make_deep_tree(ws, "deep", 2000)
    try:
        with open_files_limit(128):
            walk = Walk(workspace, ".", max_depth=10_000)
            found = paths(walk)
        assert len(found) == MAX_DEPTH
        assert found[-1] == "deep" + "/d" * (MAX_DEPTH - 1)
        assert walk.depth_limited
    finally:
        fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
        try:
            remove_tree(fd, "deep", "deep")
        finally:
            os.close(fd)


def test_descriptors_are_released_after_a_deep_walk(ws: Path, workspace: Workspace) -> None:
    make_deep_tree(ws, "deep", 100)
    (ws / "deep" / "z.txt").write_text("")  # listed after climbing back 100 levels
    (ws / "zz.txt").write_text("")
    assert workspace.root_fd >= 0  # held for the workspace's lifetime
    before = len(os.listdir("/proc/self/fd"))
    found = paths(Walk(workspace, ".", max_depth=200))
    assert found[-2:] == ["deep/z.txt", "zz.txt"] and len(found) == 104
    assert len(os.listdir("/proc/self/fd")) == before


def test_an_unreadable_directory_is_counted_and_the_walk_goes_on(
        ws: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(ws, {"locked/secret": "", "open/file": ""})
    locked = os.stat(ws / "locked").st_ino
    real_scandir = os.scandir

    def refuse(fd: Any) -> Any:
        if os.fstat(fd).st_ino == locked:
            raise PermissionError(13, "Permission denied")
        return real_scandir(fd)

    monkeypatch.setattr(os, "scandir", refuse)
    walk = Walk(workspace, ".", max_depth=5)
    assert paths(walk) == ["locked", "open", "open/file"]
    assert counts(walk)["unreadable"] == 1


def test_max_entries_truncates_and_says_so(ws: Path, workspace: Workspace) -> None:
    tree(ws, {f"f{i}": "" for i in range(5)})
    walk = Walk(workspace, ".", max_entries=3)
    assert paths(walk) == ["f0", "f1", "f2"]
    assert walk.truncated
    exact = Walk(workspace, ".", max_entries=5)
    assert len(paths(exact)) == 5 and not exact.truncated


def test_the_start_must_be_an_existing_directory_inside_the_workspace(
        ws: Path, workspace: Workspace) -> None:
    tree(ws, {"file.txt": ""})
    (ws / "out").symlink_to(ws.parent / "outside")
    for path, code in (("missing", "not_found"), ("file.txt", "not_a_directory"),
                       ("..", "outside_workspace"), ("out", "outside_workspace")):
        with pytest.raises(ToolError) as caught:
            Walk(workspace, path)
        assert caught.value.code == code, path


@pytest.mark.parametrize("with_ignore_file", [False, True])
def test_the_ignore_matcher_is_imported_only_when_an_ignore_file_exists(
        with_ignore_file: bool) -> None:
    probe = ("import sys, tempfile, os\n"
             "from zbtools.core.files.workspace import Workspace\n"
             "from zbtools.core.search.walk import Walk\n"
             "d = tempfile.mkdtemp(); open(os.path.join(d, 'a'), 'w').close()\n"
             f"if {with_ignore_file}: open(os.path.join(d, '.gitignore'), 'w').write('*.o')\n"
             "list(Walk(Workspace(d), '.'))\n"
             "print('zbtools.core.search.ignore' in sys.modules, 'pathspec' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == [str(with_ignore_file), "False"]


def test_anchored_patterns_are_relative_to_their_ignore_file(ws: Path,
                                                            workspace: Workspace) -> None:
    tree(ws, {"sub/.gitignore": "/top.txt\ndocs/*.md\n", "sub/top.txt": "",
              "sub/x/top.txt": "", "sub/docs/a.md": "", "sub/x/docs/b.md": "", "top.txt": ""})
    assert paths(Walk(workspace, ".", max_depth=5)) == [
        "sub", "sub/docs", "sub/x", "sub/x/docs", "sub/x/docs/b.md", "sub/x/top.txt", "top.txt"]


def test_a_directory_that_cannot_be_opened_is_counted_as_unreadable(
        ws: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(ws, {"a/x": "", "b/y": ""})
    real_open = os.open

    def refuse(path: Any, *args: Any, **kwargs: Any) -> int:
        if path == "a":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    walk = Walk(workspace, ".", max_depth=3)
    assert paths(walk) == ["a", "b", "b/y"]
    assert counts(walk)["unreadable"] == 1
