"""Property tests: no spelling of a path ever resolves outside the workspace
(docs/internals/security.md#t1, docs/internals/security.md#t2, docs/internals/security.md#t5).

A fixed tree with links that stay inside, links that leave, dangling links and a loop is built
once per module; hypothesis then throws paths made of those names, ``..``, ``.``, empty
components and absolute prefixes (the root, its alias, its parent, a sibling sharing its prefix)
at ``Workspace.resolve``. Every outcome is either a documented ``ToolError`` or a location that
is inside the root three ways: the descriptor held, the reported ``rel``, and what the kernel
itself makes of the requested path (``os.path.realpath``) whenever the link is followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zbtools.contract import ToolError
from zbtools.core.files.workspace import Workspace

# Repeated names are drawn more often: directories and links make the interesting paths.
COMPONENTS = [
    "a", "a", "b", "b", "f", "..", "..", ".", "", "link_in", "link_in", "link_out", "link_up",
    "link_abs_in", "link_abs_in", "link_abs_out", "dangling_in", "dangling_out", "loop",
    "missing", "outside", "ws", "secret.txt", "~",
]
PREFIXES = ["", "", "", "/", "{root}/", "{alias}/", "{base}/", "{root}-evil/", "{base}/outside/",
            "{root}/../", "{alias}/../ws/"]
# Refusals a resolution may end in; anything else (path_changed, io_error, ...) is a bug here.
DOCUMENTED = {"outside_workspace", "not_found", "not_a_directory", "symlink_loop",
              "invalid_arguments", "dangling_symlink", "ambiguous_path"}

PROPERTY_SETTINGS = settings(max_examples=500, deadline=None, database=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


class Layout:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "ws"
        self.alias = base / "alias"
        self.outside = base / "outside"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("props")))
    lay = Layout(base)
    root, outside = lay.root, lay.outside
    for directory in (root / "a" / "b", root / "b", outside / "a" / "b", base / "ws-evil" / "a"):
        directory.mkdir(parents=True)
    for file in (root / "f", root / "a" / "f", root / "a" / "b" / "f", outside / "secret.txt",
                 outside / "a" / "f", base / "ws-evil" / "f"):
        file.write_text("x")
    os.symlink(root, lay.alias)
    links = {
        "link_in": "a",
        "a/link_in": "b/f",
        "a/b/link_in": "../..",
        "b/link_in": "../a/b",
        "link_up": "..",
        "a/link_up": "..",
        "a/b/link_up": "../..",
        "link_out": "../outside",
        "a/link_out": "../../outside/secret.txt",
        "b/link_out": f"{outside}/a",
        "link_abs_in": f"{root}/a/b",
        "a/link_abs_in": f"{root}/b",
        "b/link_abs_in": f"{lay.alias}/a/b",
        "a/b/link_abs_in": f"{root}",
        "link_abs_out": f"{outside}",
        "a/link_abs_out": f"{base}/ws-evil/a",
        "b/link_abs_out": "/",
        "dangling_in": "a/missing",
        "a/dangling_in": "../b/missing",
        "dangling_out": "../outside/missing",
        "a/dangling_out": f"{outside}/missing",
        "loop": "loop",
        "a/loop": "../loop",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return lay


@pytest.fixture(scope="module")
def workspaces(layout: Layout) -> Iterator[list[Workspace]]:
    opened = [Workspace(str(layout.root)), Workspace(str(layout.alias))]
    for workspace in opened:
        workspace.resolve(".").close()  # open the root descriptors before counting
    yield opened
    for workspace in opened:
        workspace.close()


def is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def check_never_escapes(workspace: Workspace, layout: Layout, path: str, *, follow_last: bool,
                        create_parents: bool) -> None:
    root = str(layout.root)
    fds = open_fds()
    try:
        res = workspace.resolve(path, follow_last=follow_last, create_parents=create_parents)
    except ToolError as err:
        assert err.code in DOCUMENTED, (path, err.code, err.message)
        assert open_fds() == fds, path
        return
    with res:
        # 1. the directory descriptor actually held is inside the root
        held = os.readlink(f"/proc/self/fd/{res.dir_fd}")
        assert is_inside(held, root), (path, held)
        # 2. the reported location is canonical and, resolved by the kernel, inside the root
        comps = res.rel.split("/")
        assert res.rel == "." or all(c not in ("", ".", "..") for c in comps), (path, res.rel)
        parent_real = os.path.realpath(os.path.join(root, res.parent_rel))
        assert is_inside(parent_real, root), (path, res.rel)
        assert parent_real == held or res.missing, (path, parent_real, held)
        if follow_last:
            real = os.path.realpath(os.path.join(root, res.rel))
            assert is_inside(real, root), (path, res.rel, real)
            # 3. it is the very place the kernel reaches for the requested spelling
            kernel = os.path.realpath(os.path.join(root, path))
            assert kernel == real, (path, kernel, real)
        # 4. resolving the reported location again lands on the same entry ("./" because a
        #    name "~" at the root is only reachable as "./~": a bare "~" is refused)
        with workspace.resolve("./" + res.rel, follow_last=follow_last,
                               create_parents=create_parents) as again:
            assert again.rel == res.rel, (path, res.rel, again.rel)
            assert os.path.samestat(os.fstat(again.dir_fd), os.fstat(res.dir_fd))
    assert open_fds() == fds, path


def spell(layout: Layout, prefix: str, comps: list[str]) -> str:
    head = prefix.format(root=layout.root, alias=layout.alias, base=layout.base)
    return head + "/".join(comps)


@PROPERTY_SETTINGS
@given(prefix=st.sampled_from(PREFIXES),
       comps=st.lists(st.sampled_from(COMPONENTS), max_size=7),
       follow_last=st.booleans(), create_parents=st.booleans(), via_alias=st.booleans())
@example(prefix="", comps=["b", "link_abs_in", "f"], follow_last=True, create_parents=True,
         via_alias=True)
@example(prefix="", comps=["a", "link_abs_in", ".."], follow_last=True, create_parents=False,
         via_alias=False)
@example(prefix="{root}-evil/", comps=["a"], follow_last=True, create_parents=False,
         via_alias=False)
@example(prefix="", comps=["a", "link_in", "..", "..", ".."], follow_last=True,
         create_parents=False, via_alias=False)
@example(prefix="", comps=["link_in", "link_up", "link_out"], follow_last=False,
         create_parents=True, via_alias=True)
@example(prefix="", comps=["a", "dangling_out"], follow_last=True, create_parents=True,
         via_alias=False)
def test_a_path_made_of_tricky_components_never_resolves_outside(
        layout: Layout, workspaces: list[Workspace], prefix: str, comps: list[str],
        follow_last: bool, create_parents: bool, via_alias: bool) -> None:
    # workspaces[0] was opened by its real path (the alias spelling is then outside, by design),
    # workspaces[1] through the symlinked alias (both spellings are the root).
    workspace = workspaces[1 if via_alias else 0]
    check_never_escapes(workspace, layout, spell(layout, prefix, comps),
                        follow_last=follow_last, create_parents=create_parents)


@PROPERTY_SETTINGS
@given(prefix=st.sampled_from(PREFIXES),
       comps=st.lists(st.one_of(st.sampled_from(COMPONENTS), st.text(max_size=5)), max_size=6),
       follow_last=st.booleans(), create_parents=st.booleans())
def test_a_path_with_arbitrary_characters_never_resolves_outside(
        layout: Layout, workspaces: list[Workspace], prefix: str, comps: list[str],
        follow_last: bool, create_parents: bool) -> None:
    # NUL, lone surrogates, "~", "://", "\\" and "/" inside a component all show up here.
    check_never_escapes(workspaces[0], layout, spell(layout, prefix, comps),
                        follow_last=follow_last, create_parents=create_parents)


@PROPERTY_SETTINGS
@given(comps=st.lists(st.sampled_from(COMPONENTS), max_size=8))
def test_a_path_whose_kernel_resolution_leaves_the_root_is_refused(
        layout: Layout, workspaces: list[Workspace], comps: list[str]) -> None:
    path = "/".join(comps)
    root = str(layout.root)
    kernel = os.path.realpath(os.path.join(root, path))
    if is_inside(kernel, root):
        return
    with pytest.raises(ToolError) as info:
        workspaces[0].resolve(path or ".").close()
    assert info.value.code in DOCUMENTED


@PROPERTY_SETTINGS
@given(text=st.text(max_size=12))
def test_split_yields_clean_components_or_a_documented_refusal(
        workspaces: list[Workspace], text: str) -> None:
    workspace = workspaces[1]
    try:
        comps = workspace.split(text)
    except ToolError as err:
        assert err.code in ("outside_workspace", "invalid_arguments"), (text, err.code)
        return
    assert "\x00" not in text and text != "" and not text.startswith("/")
    assert all(c not in ("", ".") and "/" not in c for c in comps), (text, comps)
    assert "/".join(comps) == "/".join(c for c in text.split("/") if c not in ("", "."))


@PROPERTY_SETTINGS
@given(prefix=st.sampled_from(["{root}", "{alias}"]),
       comps=st.lists(st.sampled_from(["a", "b", "f", "x", ".", ""]), max_size=5))
def test_an_absolute_path_inside_resolves_like_its_relative_twin(
        layout: Layout, workspaces: list[Workspace], prefix: str, comps: list[str]) -> None:
    relative = "./" + "/".join(comps)
    absolute = spell(layout, prefix + "/", comps)
    for workspace in workspaces if prefix == "{root}" else workspaces[1:]:
        outcomes: list[str] = []
        for path in (relative, absolute):
            try:
                with workspace.resolve(path) as res:
                    outcomes.append(res.rel)
            except ToolError as err:
                outcomes.append(err.code)
        assert outcomes[0] == outcomes[1], (relative, absolute, outcomes)
