"""Path resolution and containment: ``zbtools.core.files.workspace``
(docs/contract.md#safety-and-fidelity; threats docs/internals/security.md#t1 to #t5).

The layout every test starts from (``ws`` fixture of conftest)::

    tmp_path/ws/                 the workspace root
    tmp_path/outside/secret.txt  "top secret\\n", must never be reachable

Locations are checked twice: the ``rel`` string the result reports, and the identity
(``st_dev``, ``st_ino``) of the directory descriptor the result holds, so a correct-looking string
over a wrong descriptor cannot pass.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import Call, CliRunner, snapshot
from zbtools.contract import ExitCode, ToolError
from zbtools.core.files.workspace import HELD_DIRS, MAX_SYMLINK_HOPS, Resolved, Workspace

SECRET = "top secret"


# --------------------------------------------------------------------------- helpers / fixtures


@pytest.fixture
def outside(ws: Path) -> Path:
    return ws.parent / "outside"


@pytest.fixture
def wsp(ws: Path) -> Iterator[Workspace]:
    workspace = Workspace(str(ws))
    yield workspace
    workspace.close()


@pytest.fixture
def tree(ws: Path) -> Path:
    """``a/b/f.txt``, ``a/g.txt``, ``top.txt`` and an empty ``sub/`` inside the root."""
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "f.txt").write_text("deep\n")
    (ws / "a" / "g.txt").write_text("g\n")
    (ws / "top.txt").write_text("top\n")
    (ws / "sub").mkdir()
    return ws


class _closing:
    """``with _closing(Workspace(...)) as w`` closes the root descriptor afterwards."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def __enter__(self) -> Workspace:
        return self.workspace

    def __exit__(self, *exc: object) -> None:
        self.workspace.close()


def same_file(left: os.stat_result, right: os.stat_result) -> bool:
    return (left.st_dev, left.st_ino) == (right.st_dev, right.st_ino)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rel_of(workspace: Workspace, path: str, **options: bool) -> str:
    with workspace.resolve(path, **options) as res:
        return res.rel


def refusal(workspace: Workspace, path: str, **options: bool) -> ToolError:
    with pytest.raises(ToolError) as info:
        workspace.resolve(path, **options).close()
    return info.value


def assert_outside(workspace: Workspace, path: str, **options: bool) -> ToolError:
    err = refusal(workspace, path, **options)
    assert err.code == "outside_workspace", (path, err.code, err.message)
    assert err.exit_code == ExitCode.SAFETY
    return err


def assert_location(res: Resolved, root: Path, rel: str) -> None:
    """``res`` names ``rel`` and really holds the descriptor of its parent directory."""
    assert res.rel == rel
    assert not res.missing
    parent = root if res.parent_rel == "." else root / res.parent_rel
    assert same_file(os.fstat(res.dir_fd), os.stat(parent, follow_symlinks=False))
    if res.name is None:
        assert rel == "."
        return
    assert "/" not in res.name and res.name not in ("", ".", "..")
    if res.st is not None:
        held = os.stat(res.name, dir_fd=res.dir_fd, follow_symlinks=False)
        assert same_file(held, res.st)
        assert same_file(res.st, os.stat(root / rel, follow_symlinks=False))


# --------------------------------------------------------------------------- Workspace()


def test_a_missing_workspace_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        Workspace(str(tmp_path / "nope"))
    assert info.value.code == "usage_error"
    assert info.value.exit_code == ExitCode.USAGE


def test_a_file_as_workspace_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ToolError) as info:
        Workspace(str(tmp_path / "file"))
    assert info.value.code == "usage_error"


def test_the_root_is_the_real_path_and_a_plain_spelling_has_one_alias(ws: Path) -> None:
    workspace = Workspace(str(ws) + "/./")
    assert workspace.root == os.path.realpath(ws)
    assert workspace.aliases == [workspace.root]


# --------------------------------------------------------------------------- split()


def test_split_drops_dot_and_empty_components_and_keeps_dotdot(wsp: Workspace) -> None:
    assert wsp.split("a/./b//c/../d/") == ["a", "b", "c", "..", "d"]
    assert wsp.split(".") == []
    assert wsp.split("./") == []
    assert wsp.split("...") == ["..."]


def test_split_strips_the_root_from_an_absolute_path_inside(ws: Path, wsp: Workspace) -> None:
    assert wsp.split(f"{ws}/a/b") == ["a", "b"]
    assert wsp.split(f"{ws}//a///b/") == ["a", "b"]
    assert wsp.split(f"{ws}/./a") == ["a"]
    assert wsp.split(f"{ws}/a/../b") == ["a", "..", "b"]


def test_split_compares_the_root_part_of_an_absolute_path_by_components(
        ws: Path, wsp: Workspace) -> None:
    assert wsp.split(f"{ws.parent}/./{ws.name}/a") == ["a"]
    assert wsp.split(f"{ws.parent}//{ws.name}//a") == ["a"]
    assert wsp.split(f"{ws}/../{ws.name}/a") == ["..", ws.name, "a"]  # refused by resolve
    with pytest.raises(ToolError):
        wsp.split(f"{ws.parent}/x/../{ws.name}/a")  # ".." is never folded lexically


def test_split_of_the_root_spelled_absolutely_is_empty(ws: Path, wsp: Workspace) -> None:
    for spelling in (str(ws), f"{ws}/", f"{ws}//", f"/{ws}", f"{ws}/."):
        assert wsp.split(spelling) == [], spelling


def test_split_never_returns_separators_or_dots(wsp: Workspace) -> None:
    for path in ("a//b", "/" + wsp.root.lstrip("/") + "/x/./y", "./a/./", "a/b/"):
        for comp in wsp.split(path):
            assert comp not in ("", ".") and "/" not in comp


def test_an_empty_path_is_invalid_arguments(wsp: Workspace) -> None:
    with pytest.raises(ToolError) as info:
        wsp.split("")
    assert info.value.code == "invalid_arguments"
    assert info.value.exit_code == ExitCode.USAGE


def test_a_non_string_path_is_invalid_arguments(wsp: Workspace) -> None:
    for value in (None, 5, b"a", ["a"]):
        with pytest.raises(ToolError) as info:
            wsp.split(cast(str, value))
        assert info.value.code == "invalid_arguments"


@pytest.mark.parametrize("path", ["a\x00b", "\x00", "top.txt\x00.png", "a/\x00/../b"])
def test_a_nul_byte_is_outside_workspace(tree: Path, wsp: Workspace, path: str) -> None:
    assert_outside(wsp, path)


@pytest.mark.parametrize("path", ["a\ud800b", "\udcff", "a/\udfff/b"])
def test_a_lone_surrogate_is_invalid_arguments(wsp: Workspace, path: str) -> None:
    err = refusal(wsp, path)
    assert err.code == "invalid_arguments"
    assert err.exit_code == ExitCode.USAGE
    assert "rename it" in err.hint  # a listed name a tool cannot take: what to do instead
    err.details["path"].encode("utf-8")  # shown escaped: the JSON stays valid UTF-8


@pytest.mark.parametrize("path", ["~", "~/", "~/x", "~/.ssh/id_rsa"])
def test_a_tilde_home_path_is_outside_workspace_and_never_expanded(
        ws: Path, wsp: Workspace, path: str) -> None:
    (ws / "~").mkdir()
    (ws / "~" / "x").write_text("not home")
    err = assert_outside(wsp, path)
    assert "~" in err.message


def test_a_tilde_inside_a_name_is_a_literal_character(ws: Path, wsp: Workspace) -> None:
    (ws / "backup~").write_text("b")
    (ws / "d").mkdir()
    assert rel_of(wsp, "backup~") == "backup~"
    assert rel_of(wsp, "d/~") == "d/~"


def test_an_entry_named_tilde_at_the_root_is_reached_as_dot_slash_tilde(
        ws: Path, wsp: Workspace) -> None:
    (ws / "~").mkdir()
    (ws / "~" / "x").write_text("x")
    assert rel_of(wsp, "./~/x") == "~/x"
    assert rel_of(wsp, f"{ws}/~/x") == "~/x"
    assert_outside(wsp, "~/x")


@pytest.mark.parametrize("path", [
    "file:///etc/passwd", "file://localhost/etc/passwd", "https://example.com/x",
    "a/file://b",
])
def test_a_uri_is_invalid_arguments(wsp: Workspace, path: str) -> None:
    err = refusal(wsp, path)
    assert err.code == "invalid_arguments"
    assert "URI" in err.message


# --------------------------------------------------------------------------- plain resolution


def test_a_relative_path_to_an_existing_file_resolves_inside(tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/b/f.txt") as res:
        assert_location(res, tree, "a/b/f.txt")
        assert res.exists and not res.is_root
        assert res.name == "f.txt"
        assert res.parts == ["a", "b"]
        assert res.parent_rel == "a/b"
        assert res.requested == "a/b/f.txt"
        assert res.st is not None and stat.S_ISREG(res.st.st_mode)


def test_an_absolute_path_inside_resolves_to_the_same_place(tree: Path, wsp: Workspace) -> None:
    for spelling in (f"{tree}/a/b/f.txt", f"{tree}//a/./b/f.txt", f"/{tree}/a/b/f.txt"):
        with wsp.resolve(spelling) as res:
            assert_location(res, tree, "a/b/f.txt")


def test_a_missing_final_component_resolves_to_its_parent(tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/b/new.txt") as res:
        assert_location(res, tree, "a/b/new.txt")
        assert res.st is None and not res.exists
        assert res.name == "new.txt"


@pytest.mark.parametrize("path", [".", "./", ".//.", "a/..", "a/b/../..", "sub/../a/..", "/"])
def test_the_root_in_all_its_spellings_is_the_root(tree: Path, wsp: Workspace, path: str) -> None:
    spelled = str(tree) + path if path == "/" else path
    with wsp.resolve(spelled) as res:
        assert res.is_root
        assert res.name is None
        assert res.rel == "." and res.parent_rel == "."
        assert res.st is not None and same_file(res.st, os.stat(tree))
        assert same_file(os.fstat(res.dir_fd), os.stat(tree))


def test_results_report_rel_relative_to_the_root_with_posix_separators(
        tree: Path, wsp: Workspace) -> None:
    assert rel_of(wsp, f"{tree}/a/b/f.txt") == "a/b/f.txt"
    assert rel_of(wsp, "./a//b/./f.txt") == "a/b/f.txt"
    assert rel_of(wsp, "a/b/") == "a/b"
    assert rel_of(wsp, "a\\b") == "a\\b"  # a backslash is part of a POSIX name, not a separator
    for path in ("a/b/f.txt", "./a", f"{tree}/top.txt", "a/b/.."):
        rel = rel_of(wsp, path)
        assert not rel.startswith(("/", "./")) and not rel.endswith("/") and "//" not in rel


def test_a_trailing_slash_on_a_directory_names_the_directory(tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/b/") as res:
        assert_location(res, tree, "a/b")
        assert res.st is not None and stat.S_ISDIR(res.st.st_mode)


def test_dotdot_inside_the_root_is_fine(tree: Path, wsp: Workspace) -> None:
    (tree / "b").write_text("b at the top\n")
    with wsp.resolve("a/../b") as res:
        assert_location(res, tree, "b")
    assert rel_of(wsp, "a/b/../g.txt") == "a/g.txt"
    assert rel_of(wsp, "a/b/../../top.txt") == "top.txt"
    assert rel_of(wsp, f"{tree}/a/../top.txt") == "top.txt"


def test_a_path_ending_in_dotdot_names_the_directory_it_reaches(
        tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/b/..") as res:
        assert_location(res, tree, "a")
        assert res.name == "a" and res.st is not None and stat.S_ISDIR(res.st.st_mode)


@pytest.mark.parametrize("path", [
    "..", "../", "../outside/secret.txt", "a/../..", "a/../../outside/secret.txt",
    "a/b/../../..", "./..", "a/b/../b/../../..", "../ws", "../ws/top.txt", "../ws/a/../top.txt",
    "a/b/../../../ws/top.txt", "sub/../../ws",
])
def test_dotdot_leaving_the_root_is_refused_even_to_come_back(
        tree: Path, wsp: Workspace, path: str) -> None:
    err = assert_outside(wsp, path)
    assert err.details["path"] == path


def test_dotdot_leaving_the_root_is_refused_with_create_parents(
        tree: Path, wsp: Workspace) -> None:
    for path in ("../outside/new.txt", "a/../../outside/x/y", "../new/dir/f"):
        assert_outside(wsp, path, create_parents=True)
    assert not (tree.parent / "new").exists()


# --------------------------------------------------------------------------- absolute outside


@pytest.mark.parametrize("path", ["/", "/etc/passwd", "/tmp", "//etc", "/proc/self/root/etc"])
def test_an_absolute_path_outside_is_refused(wsp: Workspace, path: str) -> None:
    err = assert_outside(wsp, path)
    assert err.details["path"] == path
    assert err.details["workspace"] == wsp.root


def test_the_outside_secret_by_absolute_path_is_refused(outside: Path, wsp: Workspace) -> None:
    assert_outside(wsp, str(outside / "secret.txt"))
    assert_outside(wsp, str(outside))
    assert_outside(wsp, str(outside.parent))


def test_the_sibling_prefix_trick_is_refused(ws: Path, wsp: Workspace) -> None:
    evil = ws.parent / (ws.name + "-evil")
    evil.mkdir()
    (evil / "f").write_text("evil")
    (ws.parent / (ws.name + "evil")).mkdir()
    for path in (f"{ws}-evil/f", f"{ws}-evil", f"{ws}evil", f"{ws}evil/f", f"{ws}./f",
                 f"{ws}-evil/../ws/x"):
        assert_outside(wsp, path)


def test_an_absolute_path_that_leaves_and_comes_back_is_refused(
        tree: Path, wsp: Workspace) -> None:
    for path in (f"{tree}/../ws/top.txt", f"{tree}/../outside/secret.txt", f"{tree}/..",
                 f"{tree}/a/../../ws", f"{tree.parent}/x/../ws/top.txt"):
        assert_outside(wsp, path)


# --------------------------------------------------------------------------- missing parents


def test_a_missing_middle_directory_is_not_found(tree: Path, wsp: Workspace) -> None:
    err = refusal(wsp, "a/missing/deeper/f.txt")
    assert err.code == "not_found"
    assert err.exit_code == ExitCode.TOOL_FAILED
    assert err.details == {"path": "a/missing/deeper/f.txt", "missing": "a/missing"}


def test_a_missing_middle_directory_with_create_parents_is_reported_missing(
        tree: Path, wsp: Workspace) -> None:
    before = snapshot(tree)
    with wsp.resolve("a/n1/n2/f.txt", create_parents=True) as res:
        assert res.missing == ["n1", "n2"]
        assert res.name == "f.txt"
        assert res.parts == ["a"]
        assert res.rel == "a/n1/n2/f.txt"
        assert res.parent_rel == "a/n1/n2"
        assert res.st is None and not res.exists
        assert same_file(os.fstat(res.dir_fd), os.stat(tree / "a"))
    assert snapshot(tree) == before  # resolving alone creates nothing


def test_create_parents_does_not_accept_dotdot_after_a_missing_directory(
        tree: Path, wsp: Workspace) -> None:
    for path in ("new/../top.txt", "new/..", "a/new/../../..", "new/../../outside/x"):
        err = refusal(wsp, path, create_parents=True)
        assert err.code in ("not_found", "outside_workspace"), (path, err.code)
    assert not (tree / "new").exists()
    assert not (tree.parent / "outside" / "x").exists()


def test_dotdot_after_a_missing_directory_is_not_found(tree: Path, wsp: Workspace) -> None:
    assert refusal(wsp, "missing/../top.txt").code == "not_found"


def test_ensure_parents_creates_the_missing_directories(tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/n1/n2/f.txt", create_parents=True) as res:
        res.ensure_parents()
        assert res.missing == []
        assert res.created == ["a/n1", "a/n1/n2"]
        assert res.parts == ["a", "n1", "n2"]
        assert res.rel == "a/n1/n2/f.txt"
        assert not res.exists
        assert (tree / "a" / "n1" / "n2").is_dir()
        assert same_file(os.fstat(res.dir_fd), os.stat(tree / "a" / "n1" / "n2"))
        assert not (tree / "a" / "n1" / "n2" / "f.txt").exists()


def test_ensure_parents_without_missing_directories_changes_nothing(
        tree: Path, wsp: Workspace) -> None:
    before = snapshot(tree)
    with wsp.resolve("a/b/new.txt", create_parents=True) as res:
        res.ensure_parents()
        assert res.created == []
        res.rollback_parents()
        assert_location(res, tree, "a/b/new.txt")
    assert snapshot(tree) == before


def test_rollback_parents_removes_exactly_the_directories_it_created(
        tree: Path, wsp: Workspace) -> None:
    before = snapshot(tree)
    with wsp.resolve("a/n1/n2/n3/f.txt", create_parents=True) as res:
        res.ensure_parents()
        assert (tree / "a" / "n1" / "n2" / "n3").is_dir()
        res.rollback_parents()
        assert res.created == []
    assert snapshot(tree) == before
    assert (tree / "a").is_dir()


def test_rollback_parents_keeps_a_directory_someone_else_created(
        tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("n1/n2/f.txt", create_parents=True) as res:
        (tree / "n1").mkdir()  # a concurrent creator wins the race for n1
        res.ensure_parents()
        assert res.created == ["n1/n2"]
        res.rollback_parents()
    assert (tree / "n1").is_dir()
    assert not (tree / "n1" / "n2").exists()


def test_rollback_parents_keeps_a_created_directory_that_is_no_longer_empty(
        tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("n1/n2/f.txt", create_parents=True) as res:
        res.ensure_parents()
        (tree / "n1" / "other.txt").write_text("someone else's\n")
        res.rollback_parents()
    assert not (tree / "n1" / "n2").exists()
    assert (tree / "n1" / "other.txt").read_text() == "someone else's\n"


def test_ensure_parents_refuses_a_missing_directory_swapped_for_a_symlink_outside(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    before_outside = snapshot(outside)
    with wsp.resolve("n1/n2/f.txt", create_parents=True) as res:
        os.symlink(outside, tree / "n1")  # the race: n1 appears as a link to the outside
        with pytest.raises(ToolError) as info:
            res.ensure_parents()
        assert info.value.code == "path_changed"
        assert res.created == []
        res.rollback_parents()
    assert snapshot(outside) == before_outside
    assert (tree / "n1").is_symlink()


def test_ensure_parents_refuses_a_missing_directory_that_became_a_file(
        tree: Path, wsp: Workspace) -> None:
    with wsp.resolve("n1/f.txt", create_parents=True) as res:
        (tree / "n1").write_text("a file now")
        with pytest.raises(ToolError) as info:
            res.ensure_parents()
        assert info.value.code == "path_changed"
    assert (tree / "n1").read_text() == "a file now"


def test_ensure_parents_failing_half_way_can_be_rolled_back(tree: Path, wsp: Workspace) -> None:
    before = snapshot(tree)
    with wsp.resolve("n1/n2/n3/f.txt", create_parents=True) as res:
        # n1 is created by us; then n2 turns out to be occupied by a file
        real_mkdir = os.mkdir

        def racing_mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
            if path == "n2":
                (tree / "n1" / "n2").write_text("x")
            real_mkdir(path, mode, dir_fd=dir_fd)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "mkdir", racing_mkdir)
            with pytest.raises(ToolError):
                res.ensure_parents()
        assert res.created == ["n1"]
        (tree / "n1" / "n2").unlink()
        res.rollback_parents()
    assert snapshot(tree) == before


# --------------------------------------------------------------------------- not a directory


def test_a_regular_file_used_as_a_directory_is_not_a_directory(
        tree: Path, wsp: Workspace) -> None:
    for path in ("top.txt/x", "a/g.txt/x/y", "a/b/f.txt/../f.txt"):
        err = refusal(wsp, path)
        assert err.code == "not_a_directory", (path, err.code)
        assert err.exit_code == ExitCode.TOOL_FAILED
    err = refusal(wsp, "top.txt/x/y", create_parents=True)
    assert err.code == "not_a_directory"


def test_a_symlink_to_a_file_used_as_a_directory_is_not_a_directory(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("top.txt", tree / "flink")
    assert refusal(wsp, "flink/x").code == "not_a_directory"


def test_a_too_long_component_is_invalid_arguments(tree: Path, wsp: Workspace) -> None:
    err = refusal(wsp, "a/" + "x" * 300 + "/f")
    assert err.code == "invalid_arguments"


# --------------------------------------------------------------------------- final symlinks


def test_a_symlink_pointing_outside_is_refused(tree: Path, outside: Path,
                                               wsp: Workspace) -> None:
    os.symlink("../outside/secret.txt", tree / "rel_out")
    os.symlink(str(outside / "secret.txt"), tree / "abs_out")
    os.symlink("../../../outside/secret.txt", tree / "a" / "b" / "deep_out")
    for path in ("rel_out", "abs_out", "a/b/deep_out", f"{tree}/rel_out"):
        err = assert_outside(wsp, path)
        assert SECRET not in err.message and SECRET not in str(err.details)


def test_a_symlink_pointing_inside_is_followed(tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b/f.txt", tree / "link")
    with wsp.resolve("link") as res:
        assert_location(res, tree, "a/b/f.txt")
        assert res.st is not None and stat.S_ISREG(res.st.st_mode)


def test_a_relative_symlink_is_resolved_from_its_own_directory(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("../g.txt", tree / "a" / "b" / "up")
    os.symlink("../top.txt", tree / "a" / "top_link")
    assert rel_of(wsp, "a/b/up") == "a/g.txt"
    assert rel_of(wsp, "a/top_link") == "top.txt"


def test_follow_last_false_returns_the_link_itself(tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b/f.txt", tree / "link")
    with wsp.resolve("link", follow_last=False) as res:
        assert_location(res, tree, "link")
        assert res.name == "link"
        assert res.st is not None and stat.S_ISLNK(res.st.st_mode)


def test_follow_last_false_on_a_link_outside_returns_the_link_not_its_target(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    os.symlink(str(outside / "secret.txt"), tree / "abs_out")
    os.symlink("../../outside", tree / "a" / "rel_out")
    with wsp.resolve("abs_out", follow_last=False) as res:
        assert_location(res, tree, "abs_out")
        assert res.st is not None and stat.S_ISLNK(res.st.st_mode)
    with wsp.resolve("a/rel_out", follow_last=False) as res:
        assert_location(res, tree, "a/rel_out")
    # ... but a link in the middle of the path is still followed and checked
    assert_outside(wsp, "a/rel_out/secret.txt", follow_last=False)


def test_a_chain_of_symlinks_ending_outside_is_refused(tree: Path, wsp: Workspace) -> None:
    os.symlink("../outside/secret.txt", tree / "l3")
    os.symlink("../l3", tree / "a" / "l2")
    os.symlink("a/l2", tree / "l1")
    err = assert_outside(wsp, "l1")
    assert err.exit_code == ExitCode.SAFETY


def test_a_chain_of_symlinks_staying_inside_is_followed(tree: Path, wsp: Workspace) -> None:
    os.symlink("b/f.txt", tree / "a" / "l3")
    os.symlink(f"{tree}/a/l3", tree / "sub" / "l2")
    os.symlink("sub/l2", tree / "l1")
    with wsp.resolve("l1") as res:
        assert_location(res, tree, "a/b/f.txt")


def test_an_absolute_symlink_target_inside_the_root_is_followed(
        tree: Path, wsp: Workspace) -> None:
    os.symlink(str(tree / "a" / "b" / "f.txt"), tree / "sub" / "abs_in")
    os.symlink(str(tree) + "//a/./b/", tree / "sub" / "abs_dir")
    with wsp.resolve("sub/abs_in") as res:
        assert_location(res, tree, "a/b/f.txt")
    with wsp.resolve("sub/abs_dir/f.txt") as res:
        assert_location(res, tree, "a/b/f.txt")


def test_an_absolute_symlink_to_the_root_resolves_to_the_root(
        tree: Path, wsp: Workspace) -> None:
    os.symlink(str(tree), tree / "a" / "root_link")
    with wsp.resolve("a/root_link") as res:
        assert res.is_root and res.rel == "."
    assert rel_of(wsp, "a/root_link/top.txt") == "top.txt"
    assert_outside(wsp, "a/root_link/..")


def test_an_absolute_symlink_target_outside_is_refused(tree: Path, outside: Path,
                                                       wsp: Workspace) -> None:
    targets = [str(outside / "secret.txt"), "/", "/etc/passwd", "/proc/self/root",
               f"{tree}-evil/f", f"{tree}/../outside/secret.txt", f"{tree}/a/../../ws/top.txt"]
    for index, target in enumerate(targets):
        os.symlink(target, tree / f"out{index}")
        assert_outside(wsp, f"out{index}")
        assert_outside(wsp, f"a/../out{index}")


# --------------------------------------------------------------------------- symlinked parents


def test_a_symlinked_parent_directory_pointing_outside_is_refused(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    os.symlink("../outside", tree / "rel_dir")
    os.symlink(str(outside), tree / "abs_dir")
    for path in ("rel_dir/secret.txt", "abs_dir/secret.txt", "rel_dir/new.txt",
                 "abs_dir/new/deeper.txt"):
        assert_outside(wsp, path)
        assert_outside(wsp, path, create_parents=True)
        assert_outside(wsp, path, follow_last=False)
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_symlinked_parent_directory_pointing_inside_is_followed(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b", tree / "dlink")
    with wsp.resolve("dlink/f.txt") as res:
        assert_location(res, tree, "a/b/f.txt")
    with wsp.resolve("dlink/new.txt") as res:
        assert_location(res, tree, "a/b/new.txt")
    with wsp.resolve("dlink/n1/f.txt", create_parents=True) as res:
        assert res.rel == "a/b/n1/f.txt" and res.missing == ["n1"]
        res.ensure_parents()
    assert (tree / "a" / "b" / "n1").is_dir()


def test_dotdot_after_a_symlink_pops_back_to_the_link_target_like_the_kernel(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b", tree / "dlink")
    # The kernel resolves dlink/.. to a, not to the root.
    assert os.path.realpath(tree / "dlink" / "..") == str(tree / "a")
    assert rel_of(wsp, "dlink/..") == "a"
    assert rel_of(wsp, "dlink/../g.txt") == "a/g.txt"
    assert rel_of(wsp, "dlink/../../top.txt") == "top.txt"
    assert_outside(wsp, "dlink/../../..")


def test_a_symlink_to_dotdot_stays_inside_only_below_the_root(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("..", tree / "a" / "up")
    os.symlink("..", tree / "up")
    assert rel_of(wsp, "a/up/top.txt") == "top.txt"
    assert rel_of(wsp, "a/up") == "."
    assert_outside(wsp, "up")
    assert_outside(wsp, "up/outside/secret.txt")
    assert_outside(wsp, "a/up/up/x")


def test_an_absolute_symlink_in_the_middle_restarts_from_the_root(
        tree: Path, wsp: Workspace) -> None:
    os.symlink(str(tree / "sub"), tree / "a" / "b" / "to_sub")
    with wsp.resolve("a/b/to_sub/new.txt") as res:
        assert_location(res, tree, "sub/new.txt")
    assert rel_of(wsp, "a/b/to_sub/..") == "."
    assert_outside(wsp, "a/b/to_sub/../..")


# --------------------------------------------------------------------------- dangling symlinks


def test_a_dangling_symlink_inside_resolves_to_the_target_parent_and_missing_name(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b/new.txt", tree / "dangling")
    os.symlink(str(tree / "sub" / "abs_new.txt"), tree / "a" / "abs_dangling")
    with wsp.resolve("dangling") as res:
        assert_location(res, tree, "a/b/new.txt")
        assert res.name == "new.txt" and res.st is None and not res.exists
    with wsp.resolve("a/abs_dangling") as res:
        assert_location(res, tree, "sub/abs_new.txt")
        assert res.st is None


def test_a_dangling_symlink_with_follow_last_false_is_the_link_itself(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("a/b/new.txt", tree / "dangling")
    with wsp.resolve("dangling", follow_last=False) as res:
        assert_location(res, tree, "dangling")
        assert res.st is not None and stat.S_ISLNK(res.st.st_mode)


def test_a_dangling_symlink_whose_target_is_outside_is_refused(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    os.symlink("../outside/created.txt", tree / "rel_dangling")
    os.symlink(str(outside / "created.txt"), tree / "abs_dangling")
    os.symlink("../../outside/new_dir/x", tree / "a" / "deep_dangling")
    for path in ("rel_dangling", "abs_dangling", "a/deep_dangling"):
        assert_outside(wsp, path)
        assert_outside(wsp, path, create_parents=True)
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_dangling_symlink_is_not_found_to_read_and_refused_to_create_through(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("newdir/f.txt", tree / "a" / "d")
    assert refusal(wsp, "a/d").code == "not_found"
    with pytest.raises(ToolError) as refused:
        wsp.resolve("a/d", create_parents=True)
    assert refused.value.code == "dangling_symlink"
    assert not (tree / "a" / "newdir").exists()


# --------------------------------------------------------------------------- loops and limits


def test_a_symlink_loop_is_symlink_loop(tree: Path, wsp: Workspace) -> None:
    os.symlink("loop_b", tree / "loop_a")
    os.symlink("loop_a", tree / "loop_b")
    os.symlink("self", tree / "self")
    os.symlink("deeper/x", tree / "a" / "deeper")  # grows on every hop
    os.symlink(f"{tree}/abs_self", tree / "abs_self")
    for path in ("loop_a", "loop_b/x", "self", "a/deeper", "abs_self", "a/../self/y"):
        err = refusal(wsp, path)
        assert err.code == "symlink_loop", (path, err.code)
        assert err.exit_code == ExitCode.TOOL_FAILED
    assert refusal(wsp, "self/x", create_parents=True).code == "symlink_loop"


def test_a_symlink_loop_is_not_followed_when_follow_last_is_false(
        tree: Path, wsp: Workspace) -> None:
    os.symlink("self", tree / "self")
    with wsp.resolve("self", follow_last=False) as res:
        assert res.rel == "self"


def test_forty_symlink_hops_are_followed_and_forty_one_are_a_loop(
        tree: Path, wsp: Workspace) -> None:
    assert MAX_SYMLINK_HOPS == 40
    os.symlink("top.txt", tree / "c1")
    for index in range(2, 42):
        os.symlink(f"c{index - 1}", tree / f"c{index}")
    assert rel_of(wsp, "c40") == "top.txt"
    assert refusal(wsp, "c41").code == "symlink_loop"


# --------------------------------------------------------------------------- root aliases


def test_a_root_given_through_a_symlinked_alias_accepts_both_spellings(
        tree: Path, outside: Path) -> None:
    alias = tree.parent / "alias"
    os.symlink(tree, alias)
    workspace = Workspace(str(alias))
    try:
        assert workspace.root == str(tree.resolve())
        assert set(workspace.aliases) == {str(tree.resolve()), str(alias)}
        for spelling in (f"{alias}/a/b/f.txt", f"{tree}/a/b/f.txt", "a/b/f.txt"):
            with workspace.resolve(spelling) as res:
                assert_location(res, tree, "a/b/f.txt")
        with workspace.resolve(str(alias)) as res:
            assert res.is_root
        for path in (f"{alias}-evil/f", f"{alias}x", f"{alias}/../outside/secret.txt",
                     f"{alias}/..", str(outside / "secret.txt"), ".."):
            assert_outside(workspace, path)
    finally:
        workspace.close()


def test_an_absolute_symlink_through_the_given_root_alias_is_followed(
        tree: Path) -> None:
    alias = tree.parent / "alias"
    os.symlink(tree, alias)
    os.symlink(f"{alias}/a/b/f.txt", tree / "via_alias")
    with _closing(Workspace(str(alias))) as workspace, workspace.resolve("via_alias") as res:
        assert_location(res, tree, "a/b/f.txt")
    # A workspace opened by its real path knows no alias: such a link is refused, not guessed.
    with _closing(Workspace(str(tree))) as workspace:
        assert_outside(workspace, "via_alias")


def test_a_root_spelled_through_a_symlink_and_dotdot_is_not_taken_literally(
        tree: Path, outside: Path) -> None:
    # tmp/lnk -> ws/a, so "tmp/lnk/.." is really ws; lexically it is tmp (the parent of ws).
    # An absolute path under tmp must not be reinterpreted as a path under ws (T5).
    lnk = tree.parent / "lnk"
    os.symlink(tree / "a", lnk)
    (tree / "outside").mkdir()
    (tree / "outside" / "secret.txt").write_text("decoy inside the workspace\n")
    with _closing(Workspace(f"{lnk}/..")) as workspace:
        assert workspace.root == str(tree)
        assert_outside(workspace, str(outside / "secret.txt"))
        assert_outside(workspace, f"{tree.parent}/outside")
        assert rel_of(workspace, f"{tree}/a/g.txt") == "a/g.txt"


def test_a_workspace_at_the_filesystem_root_admits_every_absolute_path() -> None:
    with _closing(Workspace("/")) as workspace:
        assert workspace.aliases == ["/"]
        assert workspace.split("/") == []
        assert workspace.split("/tmp") == ["tmp"]
        assert workspace.split("//tmp//x/") == ["tmp", "x"]
        assert rel_of(workspace, "/tmp") == "tmp"
        with workspace.resolve("/") as res:
            assert res.is_root
        assert_outside(workspace, "..")
        assert_outside(workspace, "/..")


# --------------------------------------------------------------------------- races (T4)


def test_a_directory_swapped_for_a_symlink_during_resolution_is_path_changed(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    real_stat = os.stat
    swapped: list[bool] = []

    def racing_stat(path: Any, *, dir_fd: int | None = None,
                    follow_symlinks: bool = True) -> os.stat_result:
        result = real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        if path == "a" and not swapped:  # checked as a directory, then swapped before the open
            os.rename(tree / "a", tree / "a_old")
            os.symlink(str(outside), tree / "a")
            swapped.append(True)
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "stat", racing_stat)
        with pytest.raises(ToolError) as info:
            wsp.resolve("a/secret.txt").close()
    assert swapped
    assert info.value.code == "path_changed"


def test_operations_on_the_held_parent_ignore_a_later_swap_of_the_path(
        tree: Path, outside: Path, wsp: Workspace) -> None:
    with wsp.resolve("a/b/new.txt") as res:
        os.rename(tree / "a", tree / "a_old")
        os.symlink(str(outside), tree / "a")  # a/b/new.txt now spells a path outside
        fd = os.open(res.name or "", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     0o644, dir_fd=res.dir_fd)
        os.close(fd)
    assert (tree / "a_old" / "b" / "new.txt").exists()
    assert sorted(os.listdir(outside)) == ["secret.txt"]


# --------------------------------------------------------------------------- descriptors


def test_five_hundred_resolutions_leak_no_file_descriptors(tree: Path, outside: Path) -> None:
    os.symlink("a/b", tree / "dlink")
    os.symlink("../outside/secret.txt", tree / "out")
    os.symlink("loop", tree / "loop")
    os.symlink("a/b/missing", tree / "dangling")
    before = open_fds()
    workspace = Workspace(str(tree))
    paths = ["a/b/f.txt", "dlink/f.txt", "dlink/..", "out", "loop", "dangling", "..",
             "a/x/y/z", "top.txt/x", ".", f"{tree}/a/b/../g.txt", "/etc", "a\x00", "a/b/c/d"]
    for index in range(500):
        path = paths[index % len(paths)]
        create = index % 3 == 0
        try:
            with workspace.resolve(path, create_parents=create,
                                   follow_last=index % 2 == 0) as res:
                if res.missing and index % 5 == 0:
                    res.ensure_parents()
                    res.rollback_parents()
        except ToolError:
            pass
    workspace.close()
    assert open_fds() == before
    assert not (tree / "a" / "x").exists() and not (tree / "a" / "b" / "c").exists()


def test_a_resolution_left_open_is_released_by_close(tree: Path, wsp: Workspace) -> None:
    wsp.resolve(".").close()  # open the root descriptor once
    before = open_fds()
    res = wsp.resolve("a/n1/n2/f", create_parents=True)
    res.ensure_parents()
    assert open_fds() > before
    res.close()
    res.close()  # idempotent
    assert open_fds() == before


# --------------------------------------------------------------------------- through the CLI


def assert_refused_outside(call: Call, *, code: int = ExitCode.SAFETY,
                           error: str = "outside_workspace") -> None:
    assert call.code == code, call
    assert call.error["code"] == error
    assert SECRET not in call.out and SECRET not in call.err


@pytest.mark.parametrize("path", [
    "../outside/secret.txt", "a/../../outside/secret.txt", "../ws/../outside/secret.txt",
])
def test_cli_read_file_with_dotdot_outside_exits_3(ws: Path, cli: CliRunner, path: str) -> None:
    (ws / "a").mkdir()
    assert_refused_outside(cli("read_file", "--path", path))


def test_cli_read_file_by_absolute_path_outside_exits_3(
        ws: Path, outside: Path, cli: CliRunner) -> None:
    assert_refused_outside(cli("read_file", "--path", str(outside / "secret.txt")))
    evil = ws.parent / "ws-evil"
    evil.mkdir()
    (evil / "f").write_text(SECRET)
    assert_refused_outside(cli("read_file", "--path", str(evil / "f")))


def test_cli_read_file_through_symlinks_outside_exits_3(
        ws: Path, outside: Path, cli: CliRunner) -> None:
    os.symlink("../outside/secret.txt", ws / "file_link")
    os.symlink(str(outside), ws / "dir_link")
    for path in ("file_link", "dir_link/secret.txt"):
        assert_refused_outside(cli("read_file", "--path", path))
        assert_refused_outside(cli("get_file_info", "--path", path))


def test_cli_write_file_never_creates_anything_outside(
        ws: Path, outside: Path, cli: CliRunner) -> None:
    os.symlink("../outside/planted.txt", ws / "dangling")
    os.symlink(str(outside), ws / "dir_link")
    before = snapshot(outside.parent)
    for path in ("../outside/new.txt", "dangling", "dir_link/new.txt", "dir_link/n/f.txt",
                 str(outside / "new.txt"), f"{ws}-evil/f.txt"):
        assert_refused_outside(cli("write_file", "--path", path, "--content", "x"))
    for path in ("../outside/d", "dir_link/d"):
        assert_refused_outside(cli("create_directory", "--path", path))
    assert snapshot(outside.parent) == before


def test_cli_write_through_a_dangling_link_inside_is_refused(
        ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    os.symlink("d/target.txt", ws / "dangling")
    call = cli("write_file", "--path", "dangling", "--content", "hi\n")
    assert call.error["code"] == "dangling_symlink"
    assert not (ws / "d" / "target.txt").exists()
    assert (ws / "dangling").is_symlink()


def test_cli_delete_of_a_link_outside_removes_only_the_link(
        ws: Path, outside: Path, cli: CliRunner) -> None:
    os.symlink(str(outside / "secret.txt"), ws / "link")
    assert cli("delete_file", "--path", "link").code == 0
    assert not os.path.lexists(ws / "link")
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


def test_cli_reports_paths_relative_to_the_root(ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", "--path", f"{ws}/x/y/z.txt", "--content", "z\n")
    assert call.result["path"] == "x/y/z.txt"
    assert call.result["parents_created"] == ["x", "x/y"]
    assert cli("read_file", "--path", f"{ws}//x/./y/z.txt").result["path"] == "x/y/z.txt"


@pytest.mark.parametrize(("path", "code", "error"), [
    ("a\x00b", ExitCode.SAFETY, "outside_workspace"),
    ("~/.bashrc", ExitCode.SAFETY, "outside_workspace"),
    ("/etc/passwd", ExitCode.SAFETY, "outside_workspace"),
    ("file:///etc/passwd", ExitCode.USAGE, "invalid_arguments"),
    ("", ExitCode.USAGE, "invalid_arguments"),
    ("a\ud800", ExitCode.USAGE, "invalid_arguments"),
])
def test_cli_bad_path_spellings_get_their_documented_codes(
        cli: CliRunner, path: str, code: int, error: str) -> None:
    call = cli("read_file", stdin={"path": path})
    assert call.code == code, call
    assert call.error["code"] == error


def test_cli_symlink_loop_and_not_a_directory_exit_1(ws: Path, cli: CliRunner) -> None:
    os.symlink("loop", ws / "loop")
    (ws / "f.txt").write_text("f\n")
    call = cli("read_file", "--path", "loop")
    assert (call.code, call.error["code"]) == (1, "symlink_loop")
    call = cli("read_file", "--path", "f.txt/x")
    assert (call.code, call.error["code"]) == (1, "not_a_directory")
    call = cli("read_file", "--path", "nope/x")
    assert (call.code, call.error["code"]) == (1, "not_found")


def test_subprocess_refuses_dotdot_outside_with_exit_3(ws: Path, proc: CliRunner) -> None:
    call = proc("read_file", "--path", "../outside/secret.txt")
    assert_refused_outside(call)
    assert call.json["tool"] == "read_file"


def test_subprocess_refuses_symlinks_and_nul_bytes_with_exit_3(
        ws: Path, outside: Path, proc: CliRunner) -> None:
    os.symlink(str(outside), ws / "dir_link")
    assert_refused_outside(proc("read_file", stdin={"path": "dir_link/secret.txt"}))
    assert_refused_outside(proc("read_file", stdin={"path": "a\x00b"}))


def test_subprocess_accepts_an_absolute_path_inside_and_reports_it_relative(
        ws: Path, proc: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    call = proc("read_file", "--path", str(ws / "d" / "f.txt"))
    assert call.code == 0, call
    assert call.result["path"] == "d/f.txt"
    assert call.result["content"] == "inside\n"


def test_a_path_deeper_than_the_descriptor_limit_resolves(tree: Path, wsp: Workspace) -> None:
    import resource

    depth = 300
    deep = tree.joinpath(*(["d"] * depth))
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("bottom\n")
    os.symlink("/".join([".."] * depth) + "/top.txt", deep / "up_link")
    os.symlink(f"{tree}/a/b", deep / "abs_link")
    down = "/".join(["d"] * depth)
    up = "/".join([".."] * depth)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, open_fds() + 100), hard))
    try:
        with wsp.resolve(f"{down}/f.txt") as res:
            assert_location(res, tree, f"{down}/f.txt")
        with wsp.resolve(f"{down}/{up}/top.txt") as res:
            assert_location(res, tree, "top.txt")
        with wsp.resolve(f"{down}/../f.txt") as res:
            assert_location(res, tree, "/".join(["d"] * (depth - 1)) + "/f.txt")
        with wsp.resolve(f"{down}/{up}/{down}/{up}/a") as res:
            assert_location(res, tree, "a")
        assert rel_of(wsp, f"{down}/up_link") == "top.txt"
        assert rel_of(wsp, f"{down}/abs_link/f.txt") == "a/b/f.txt"
        assert rel_of(wsp, f"{down}/abs_link/../../top.txt") == "top.txt"
        assert_outside(wsp, f"{down}/{up}/../outside/secret.txt")
        assert_outside(wsp, f"{down}/{up}/{down}/{up}/..")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_deep_directory_moved_while_climbing_back_is_path_changed(
        tree: Path, wsp: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    depth = HELD_DIRS + 5
    tree.joinpath(*(["d"] * depth)).mkdir(parents=True)
    real_open = os.open
    moved: list[str] = []

    def racing_open(path: Any, flags: int, mode: int = 0o777, *,
                    dir_fd: int | None = None) -> int:
        if path == ".." and dir_fd is not None and not moved:
            # a concurrent process moves the current directory elsewhere in the tree
            current = os.readlink(f"/proc/self/fd/{dir_fd}")
            os.rename(current, tree / "moved")
            moved.append(current)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    wsp.resolve(".").close()  # the root descriptor stays open for the workspace's life
    monkeypatch.setattr(os, "open", racing_open)
    before = open_fds()
    err = refusal(wsp, "/".join(["d"] * depth) + "/" + "/".join([".."] * depth) + "/top.txt")
    assert err.code == "path_changed"
    assert moved
    assert open_fds() == before


def test_cli_move_and_copy_never_reach_outside(ws: Path, outside: Path, cli: CliRunner) -> None:
    (ws / "mine.txt").write_text("mine\n")
    os.symlink(str(outside), ws / "dir_link")
    os.symlink("../outside/planted.txt", ws / "dangling")
    before = snapshot(ws.parent)
    for tool in ("move_file", "copy_file"):
        for source, destination in [
            ("mine.txt", "../outside/stolen.txt"), ("mine.txt", "dir_link/stolen.txt"),
            ("mine.txt", "dir_link/"), ("mine.txt", str(outside / "x.txt")),
            ("../outside/secret.txt", "copy.txt"), ("dir_link/secret.txt", "copy.txt"),
            (str(outside / "secret.txt"), "copy.txt"), ("mine.txt", "dir_link/n/x.txt"),
        ]:
            call = cli(tool, "--source", source, "--destination", destination)
            assert_refused_outside(call)
        call = cli("copy_file", "--source", "mine.txt", "--destination", "dangling",
                   "--overwrite", "true")
        assert_refused_outside(call)
    assert snapshot(ws.parent) == before


# -- names that would display as other names, and Windows paths ------------------------------

@pytest.mark.parametrize("path", ["C:\\Users\\me\\x.md", "c:/notes.md", "\\\\server\\share\\x"])
def test_a_windows_path_is_refused_instead_of_naming_a_file_literally(ws: Path,
                                                                      cli: CliRunner,
                                                                      path: str) -> None:
    call = cli("write_file", stdin={"path": path, "content": "x"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert "Windows path" in call.error["message"]
    assert list(ws.iterdir()) == []


@pytest.mark.parametrize("path", ["evil\u202etxt.exe", ".g\u200cit/config", "a\u2066b/c.txt",
                                  "zero\u200bwidth.py", "bom\ufeff.md"])
def test_a_name_that_displays_as_another_is_refused(ws: Path, cli: CliRunner, path: str) -> None:
    call = cli("write_file", stdin={"path": path, "content": "x"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert call.error["details"]["characters"]
    assert list(ws.iterdir()) == []
    assert cli("read_file", stdin={"path": path}).error["code"] == "invalid_arguments"


@pytest.mark.parametrize("name", ["\u0645\u200c\u0627.txt",  # Persian: the joiner is spelling
                                  "\U0001F468\u200d\U0001F469.png",  # an emoji sequence
                                  "a:b.txt", "back\\slash.txt"])
def test_names_that_need_those_characters_or_look_odd_but_honest_are_accepted(
        ws: Path, cli: CliRunner, name: str) -> None:
    assert cli("write_file", stdin={"path": name, "content": "x"}).code == 0
    assert (ws / name).read_text() == "x"


# -- Unicode: a composed spelling finds a decomposed name, and the other way round -----------

NFC_NAME = "caf\u00e9"
NFD_NAME = "cafe\u0301"


def test_a_composed_path_finds_the_decomposed_directory_and_file(ws: Path,
                                                                 cli: CliRunner) -> None:
    (ws / NFD_NAME).mkdir()
    (ws / NFD_NAME / f"{NFD_NAME}.txt").write_text("hi\n")
    result = cli("read_file", stdin={"path": f"{NFC_NAME}/{NFC_NAME}.txt"}).result
    assert result["content"] == "hi\n"
    assert result["path"] == f"{NFD_NAME}/{NFD_NAME}.txt"  # the name as it is on disk


def test_writing_the_other_spelling_updates_the_file_instead_of_adding_a_lookalike(
        ws: Path, cli: CliRunner) -> None:
    (ws / f"{NFD_NAME}.md").write_text("old\n")
    assert cli("write_file", stdin={"path": f"{NFC_NAME}.md", "content": "new\n"}).code == 0
    assert os.listdir(ws) == [f"{NFD_NAME}.md"]
    assert (ws / f"{NFD_NAME}.md").read_text() == "new\n"


def test_an_exact_spelling_wins_and_two_other_equivalent_names_are_ambiguous(
        ws: Path, cli: CliRunner) -> None:
    mixed_a = "caf\u00e9 re\u0301sume\u0301"
    mixed_b = "cafe\u0301 r\u00e9sum\u00e9"
    composed = "caf\u00e9 r\u00e9sum\u00e9"
    (ws / mixed_a).write_text("a\n")
    (ws / mixed_b).write_text("b\n")
    assert cli("read_file", stdin={"path": mixed_b}).result["content"] == "b\n"
    call = cli("read_file", stdin={"path": composed})
    assert call.code == 1
    assert call.error["code"] == "ambiguous_path"
    assert sorted(call.error["details"]["candidates"]) == sorted([mixed_a, mixed_b])
    assert cli("write_file", stdin={"path": composed, "content": "c"}).error["code"] == \
        "ambiguous_path"
    assert len(os.listdir(ws)) == 2


# -- writing through a symlink whose target does not exist -----------------------------------

def test_writing_through_a_dangling_symlink_is_refused_and_creates_nothing(
        ws: Path, cli: CliRunner) -> None:
    (ws / "link.txt").symlink_to("nothere.txt")
    (ws / "dlink").symlink_to("missing/dir")
    for path in ("link.txt", "dlink/a.txt"):
        call = cli("write_file", stdin={"path": path, "content": "x"})
        assert call.code == 1, call
        assert call.error["code"] == "dangling_symlink"
    assert sorted(p.name for p in ws.iterdir()) == ["dlink", "link.txt"]
    assert not (ws / "nothere.txt").exists() and not (ws / "missing").exists()


def test_a_symlink_to_an_existing_directory_still_takes_new_files(ws: Path,
                                                                  cli: CliRunner) -> None:
    (ws / "real").mkdir()
    (ws / "via").symlink_to("real")
    assert cli("write_file", stdin={"path": "via/new.txt", "content": "x"}).code == 0
    assert (ws / "real" / "new.txt").read_text() == "x"
    assert cli("read_file", stdin={"path": "via/absent.txt"}).error["code"] == "not_found"
