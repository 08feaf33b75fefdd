"""A workspace of several roots (an MCP client's roots): containment in every root, relative
paths in the first, results that show another root's paths as absolute paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from zbtools.contract import ToolError
from zbtools.core.call.context import Context
from zbtools.core.files.workspace import Workspace
from zbtools.dispatch import Options, call_tool, make_context
from zbtools.registry import find


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(first root, second root, a directory outside both)."""
    one, two, outside = tmp_path / "one", tmp_path / "two", tmp_path / "outside"
    for d in (one, two, outside):
        d.mkdir()
    (one / "a.txt").write_text("one\n")
    (two / "a.txt").write_text("two\n")
    (two / "sub").mkdir()
    (two / "sub" / "b.txt").write_text("needle in two\n")
    (outside / "secret.txt").write_text("secret\n")
    return one, two, outside


def code_of(call: object) -> str:
    assert isinstance(call, ToolError)
    return call.code


def resolve_error(ws: Workspace, path: str) -> str:
    try:
        ws.resolve(path).close()
    except ToolError as exc:
        return exc.code
    return "ok"


def test_relative_paths_start_at_the_first_root(roots: tuple[Path, Path, Path]) -> None:
    one, two, _ = roots
    ws = Workspace(str(one), [str(two)])
    try:
        assert ws.root == str(one) and ws.roots == [str(one), str(two)]
        with ws.resolve("a.txt") as res:
            assert res.rel == "a.txt"
            assert os.read(os.open(res.name or ".", os.O_RDONLY, dir_fd=res.dir_fd), 9) == b"one\n"
        with ws.resolve(str(two / "sub" / "b.txt")) as res:
            assert res.rel == f"{two}/sub/b.txt" and res.parent_rel == f"{two}/sub"
        with ws.resolve(str(two)) as res:
            assert res.is_root and res.rel == str(two)
        # a shown path resolves again
        with ws.resolve(f"{two}/sub/b.txt") as res:
            assert res.exists
    finally:
        ws.close()


def test_every_root_is_as_strict_as_the_first(roots: tuple[Path, Path, Path]) -> None:
    one, two, outside = roots
    (two / "escape").symlink_to(outside)
    (two / "abs_escape").symlink_to(outside / "secret.txt")
    (Path(str(two) + "-evil")).mkdir()
    ws = Workspace(str(one), [str(two)])
    try:
        assert resolve_error(ws, str(outside / "secret.txt")) == "outside_workspace"
        assert resolve_error(ws, f"{two}/../outside/secret.txt") == "outside_workspace"
        assert resolve_error(ws, f"{two}/sub/../../one/a.txt") == "outside_workspace"
        assert resolve_error(ws, f"{two}/escape/secret.txt") == "outside_workspace"
        assert resolve_error(ws, f"{two}/abs_escape") == "outside_workspace"
        assert resolve_error(ws, f"{two}-evil") == "outside_workspace"
        assert resolve_error(ws, "../two/a.txt") == "outside_workspace"
        try:
            ws.resolve(str(outside)).close()
        except ToolError as exc:
            assert exc.details["roots"] == [str(one), str(two)]
    finally:
        ws.close()


def test_an_absolute_symlink_may_lead_into_another_root(roots: tuple[Path, Path, Path]) -> None:
    one, two, _ = roots
    (one / "to_two").symlink_to(two / "sub")
    ws = Workspace(str(one), [str(two)])
    try:
        with ws.resolve("to_two/b.txt") as res:
            assert res.rel == f"{two}/sub/b.txt"
        # and '..' after it stops at the root it led into
        assert resolve_error(ws, "to_two/../../one/a.txt") == "outside_workspace"
    finally:
        ws.close()
    alone = Workspace(str(one))
    try:
        assert resolve_error(alone, "to_two/b.txt") == "outside_workspace"
    finally:
        alone.close()


def test_nested_roots_show_paths_in_the_first_relative(tmp_path: Path) -> None:
    outer, inner = tmp_path, tmp_path / "in"
    inner.mkdir()
    (inner / "f").write_text("x")
    ws = Workspace(str(inner), [str(outer)])
    try:
        with ws.resolve(str(inner / "f")) as res:
            assert res.rel == "f"
        with ws.resolve(str(outer / "in")) as res:
            assert res.rel == "."  # the first root claims it
    finally:
        ws.close()


def run(ctx: Context, tool: str, args: dict[str, object]) -> dict[str, Any]:
    spec = find(tool)
    assert spec is not None
    return call_tool(spec, None, args, ctx).payload


def test_tools_work_in_every_root(roots: tuple[Path, Path, Path]) -> None:
    one, two, outside = roots
    (two / ".gitignore").write_text("ignored.txt\n")
    (two / "sub" / "ignored.txt").write_text("needle ignored\n")
    opts = Options()
    opts.workspace = str(outside)  # roots win over --workspace
    ctx = make_context(opts, {}, [str(one), str(two)])
    try:
        assert ctx.workspace.roots == [str(one), str(two)]
        assert run(ctx, "read_file", {"path": "a.txt"})["content"] == "one\n"
        assert run(ctx, "read_file", {"path": str(two / "a.txt")})["content"] == "two\n"
        grep = run(ctx, "grep_search", {"pattern": "needle", "path": str(two),
                                        "output_mode": "files_with_matches"})
        assert grep["files"] == [f"{two}/sub/b.txt"]  # .gitignore of the second root applies
        listing = run(ctx, "list_directory", {"path": str(two / "sub")})
        assert [e["path"] for e in listing["entries"]] == [f"{two}/sub/b.txt"]
        found = run(ctx, "find_files_glob", {"pattern": "sub/*.txt", "path": str(two)})
        assert [m["path"] for m in found["matches"]] == [f"{two}/sub/b.txt"]
        wrote = run(ctx, "write_file", {"path": str(two / "new.txt"), "content": "hi\n"})
        assert wrote["path"] == f"{two}/new.txt" and (two / "new.txt").read_text() == "hi\n"
        ran = run(ctx, "run_command", {"command": "cat a.txt", "cwd": str(two)})
        assert ran["stdout"] == "two\n"
        with pytest.raises(ToolError) as refused:
            run(ctx, "read_file", {"path": str(outside / "secret.txt")})
        assert refused.value.code == "outside_workspace"
    finally:
        ctx.workspace.close()


def test_a_big_search_of_another_root_matches_one_process(roots: tuple[Path, Path, Path],
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The forked helper of a big search opens another root's directories too."""
    one, two, _ = roots
    for d in range(6):
        folder = two / f"d{d}"
        folder.mkdir()
        for f in range(60):
            (folder / f"f{f}.txt").write_text(f"x\nneedle {d} {f}\n" if f % 7 == 0 else "x\n")
    results = []
    for workers in ("1", "2"):
        monkeypatch.setenv("ZBTOOLS_SEARCH_WORKERS", workers)
        ctx = make_context(Options(), {"ZBTOOLS_SEARCH_WORKERS": workers}, [str(one), str(two)])
        try:
            results.append(run(ctx, "grep_search", {"pattern": "needle", "path": str(two),
                                                    "head_limit": 1000}))
        finally:
            ctx.workspace.close()
    assert results[0]["matches"] == results[1]["matches"]
    paths = {m["path"] for m in results[0]["matches"]}
    assert len(paths) == 6 * 9 + 1 and all(p.startswith(f"{two}/") for p in paths)
