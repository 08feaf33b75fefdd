"""Generated workspaces and multi-file operations for the crash invariant (``test_crash``).

``Tree``: a small project of fixed shape (top-level files, ``src/`` with a package, ``tree/``
with nested directories, a relative symlink and an empty directory, a file with a second hard
link inside the workspace) whose file sizes and permission bits are drawn. Every line of every
file is unique (``<path> line <n>``), so a generated edit or patch hunk finds exactly one place.

``Op``: what runs in the process that is killed: one call, or a ``batch`` session of several;
``setup`` calls run before (uninterrupted) in both the workspace and its twin; ``per_file``
names the files a batch edits with held-back edits (each may be at any of its versions);
``undo_paths`` the files whose ``undo`` is tried afterwards; ``retry`` whether the same call
may be sent again as the next call (it does no harm twice).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

Call = tuple[str, dict[str, Any]]

MODES = (0o644, 0o600, 0o640, 0o755)
TEXT_FILES = ("a.txt", "b.txt", "c.md", "src/m1.py", "src/pkg/m2.py", "tree/x.txt",
              "tree/sub/y.txt", "tree/sub/deep/z.txt")
LINKED = ("hl.txt", "src/hl-link.txt")  # two names of one file


class Tree:
    """The files (path -> (mode, bytes)), symlinks (path -> target), hard links (extra name ->
    existing path) and empty directories of a workspace."""

    def __init__(self, files: dict[str, tuple[int, bytes]]) -> None:
        self.files = files
        self.symlinks = {"tree/link": "x.txt", "tree/sub/up": "../x.txt"}
        self.hardlinks = {LINKED[1]: LINKED[0]}
        self.empty = ["tree/empty"]

    def lines(self, path: str) -> list[str]:
        return self.files[path][1].decode().splitlines(keepends=True)

    def __repr__(self) -> str:
        return "Tree(" + ", ".join(f"{p}:{m:o}:{len(d)}B" for p, (m, d) in self.files.items()) \
            + ")"


def content(path: str, count: int) -> bytes:
    return "".join(f"{path} line {n}\n" for n in range(1, count + 1)).encode()


def build(root: Path, tree: Tree) -> None:
    for path, (mode, data) in tree.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, mode)
    for path, text in tree.symlinks.items():
        os.symlink(text, root / path)
    for path, existing in tree.hardlinks.items():
        os.link(root / existing, root / path)
    for path in tree.empty:
        (root / path).mkdir(parents=True)


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    files: dict[str, tuple[int, bytes]] = {}
    for path in (*TEXT_FILES, LINKED[0]):
        count = draw(st.integers(1, 30))
        files[path] = (draw(st.sampled_from(MODES)), content(path, count))
    return Tree(files)


class Op:
    def __init__(self, kind: str, calls: list[Call], *, batch: bool = False,
                 setup: list[Call] | None = None, per_file: set[str] | None = None,
                 undo_paths: list[str] | None = None, retry: bool = True) -> None:
        self.kind = kind
        self.calls = calls
        self.batch = batch
        self.setup = setup or []
        self.per_file = per_file or set()
        self.undo_paths = undo_paths or []
        self.retry = retry and not batch

    def __repr__(self) -> str:
        def short(call: Call) -> str:
            args = {k: (v if not isinstance(v, str) or len(v) < 80 else f"<{len(v)} chars>")
                    for k, v in call[1].items()}
            return f"{call[0]}({args})"

        setup = f" setup={[short(c) for c in self.setup]}" if self.setup else ""
        return f"Op({self.kind}{' batch' if self.batch else ''}: " \
            f"{[short(c) for c in self.calls]}{setup})"


# ---------------------------------------------------------------------------------------------
# Patches


def _hunk(tree: Tree, path: str, draw: st.DrawFn) -> list[str]:
    lines = tree.lines(path)
    i = draw(st.integers(0, len(lines) - 1))
    body = [" " + lines[i - 1].rstrip("\n")] if i > 0 else []
    body += ["-" + lines[i].rstrip("\n"), "+" + lines[i].rstrip("\n") + " patched"]
    if draw(st.booleans()):
        body.append("+an added line of " + path)
    return ["@@", *body]


@st.composite
def patch_text(draw: st.DrawFn, tree: Tree, *, min_changes: int = 2,
               files: tuple[str, ...] = (*TEXT_FILES, LINKED[0])) -> tuple[str, set[str]]:
    """A Codex patch that updates, deletes, moves and adds files; and the paths it names."""
    chosen = draw(st.lists(st.sampled_from(files), min_size=1, max_size=5, unique=True))
    out = ["*** Begin Patch"]
    named: set[str] = set()
    for path in chosen:
        action = draw(st.sampled_from(["update", "update", "delete", "move"]))
        named.add(path)
        if action == "delete":
            out.append(f"*** Delete File: {path}")
        elif action == "update":
            out += [f"*** Update File: {path}", *_hunk(tree, path, draw)]
        else:
            dest = draw(st.sampled_from(["moved/", "src/", "new/deep/", ""])) + \
                "mv-" + path.replace("/", "-")
            named.add(dest)
            out += [f"*** Update File: {path}", f"*** Move to: {dest}", *_hunk(tree, path, draw)]
    adds = draw(st.integers(0 if len(chosen) >= min_changes else 1, 2))
    for n in range(adds):
        dest = draw(st.sampled_from(["", "src/", "added/dir/", "tree/sub/"])) + f"add{n}.txt"
        named.add(dest)
        out += [f"*** Add File: {dest}", *(f"+new file {dest} line {k}"
                                           for k in range(draw(st.integers(1, 4))))]
    out.append("*** End Patch")
    return "\n".join(out) + "\n", named


@st.composite
def patch_op(draw: st.DrawFn) -> tuple[Tree, Op]:
    tree = draw(trees())
    text, named = draw(patch_text(tree))
    return tree, Op("patch", [("apply_edit", {"patch": text})], undo_paths=sorted(named))


# ---------------------------------------------------------------------------------------------
# Single calls over trees and big files


def big_content(size: int) -> str:
    line = "0123456789abcdef" * 4
    count = size // (len(line) + 9) + 1
    return "".join(f"{n:08d} {line}\n" for n in range(count))


@st.composite
def big_write(draw: st.DrawFn) -> tuple[Tree, Op]:
    tree = draw(trees())
    path = draw(st.sampled_from(["a.txt", "tree/sub/y.txt", "new/dir/big.txt", LINKED[0]]))
    size = draw(st.sampled_from([100_000, 1_200_000, 3_000_000]))
    return tree, Op("write", [("write_file", {"path": path, "content": big_content(size)})],
                    undo_paths=[path])


@st.composite
def tree_op(draw: st.DrawFn) -> tuple[Tree, Op]:
    tree = draw(trees())
    kind = draw(st.sampled_from(["copy", "move", "delete"]))
    source = draw(st.sampled_from(["tree", "src", "tree/sub"]))
    if kind == "delete":
        return tree, Op("delete", [("delete_file", {"path": source, "recursive": True})])
    places = [p for p in ("", "new/deep/", "src/pkg/", "tree/empty/")
              if not p.startswith(source + "/")]
    dest = draw(st.sampled_from(places)) + "the-" + source.replace("/", "-")
    tool = "copy_file" if kind == "copy" else "move_file"
    return tree, Op(kind, [(tool, {"source": source, "destination": dest})])


@st.composite
def linked_edit(draw: st.DrawFn) -> tuple[Tree, Op]:
    """An edit of a file with two names: written in place, journaled."""
    tree = draw(trees())
    lines = tree.lines(LINKED[0])
    i = draw(st.integers(0, len(lines) - 1))
    grow = draw(st.sampled_from([-1, 0, 50, 20_000]))  # -1: the file shrinks
    path = draw(st.sampled_from(LINKED))
    new = "-" if grow < 0 else lines[i].rstrip("\n") + " edited" + "+" * grow
    return tree, Op("inplace", [("apply_edit", {"path": path, "old_text": lines[i].rstrip("\n"),
                                                "new_text": new})], undo_paths=[path])


@st.composite
def long_append(draw: st.DrawFn) -> tuple[Tree, Op]:
    tree = draw(trees())
    path = draw(st.sampled_from(["a.txt", "log.txt"]))
    size = draw(st.sampled_from([5_000, 100_000, 2_000_000]))
    return tree, Op("append", [("write_append", {"path": path, "content": big_content(size)})],
                    undo_paths=[path], retry=False)


@st.composite
def undo_op(draw: st.DrawFn) -> tuple[Tree, Op]:
    """Undo of a change made before (a patch of several files, or one edit)."""
    tree = draw(trees())
    text, named = draw(patch_text(tree))
    setup: list[Call] = [("apply_edit", {"patch": text})]
    path = draw(st.sampled_from(sorted(named)))
    args: dict[str, Any] = {"path": path} if draw(st.booleans()) else {}
    return tree, Op("undo", [("undo", args)], setup=setup, undo_paths=[path], retry=False)


# ---------------------------------------------------------------------------------------------
# Batch sessions


EDITS = ("apply_edit", "edit_file", "insert_text")


@st.composite
def batch_call(draw: st.DrawFn, tree: Tree, made: list[str]) -> Call:
    existing = [*TEXT_FILES, *LINKED, *made]
    path = draw(st.sampled_from(existing))
    kind = draw(st.sampled_from(["write", "apply_edit", "apply_edit", "edit_file",
                                 "insert_text", "append", "move", "copy", "delete", "patch",
                                 "undo"]))
    if kind == "write":
        target = draw(st.sampled_from([path, f"w/{len(made)}.txt"]))
        made.append(target)
        return "write_file", {"path": target, "content": f"written {len(made)}\n" * 3}
    if kind in ("apply_edit", "edit_file") and path in tree.files:
        line = draw(st.sampled_from(tree.lines(path))).rstrip("\n")
        new = line + f" e{len(made)}"
        if kind == "apply_edit":
            return "apply_edit", {"path": path, "old_text": line, "new_text": new}
        return "edit_file", {"path": path, "old_content": line, "new_content": new}
    if kind in ("apply_edit", "edit_file", "insert_text"):
        return "insert_text", {"path": path, "content": f"inserted {len(made)}\n",
                               "position": draw(st.sampled_from(["start", "end"]))}
    if kind == "append":
        return "write_append", {"path": path, "content": f"appended {len(made)}\n"}
    if kind in ("move", "copy"):
        dest = draw(st.sampled_from(["", "mc/", "src/"])) + f"{kind}{len(made)}.txt"
        made.append(dest)
        return ("move_file" if kind == "move" else "copy_file"), {"source": path,
                                                                  "destination": dest}
    if kind == "delete":
        return "delete_file", {"path": path}
    if kind == "undo":
        return "undo", {}
    text, _ = draw(patch_text(tree, min_changes=2, files=TEXT_FILES))
    return "apply_edit", {"patch": text}


@st.composite
def batch_op(draw: st.DrawFn) -> tuple[Tree, Op]:
    tree = draw(trees())
    made: list[str] = []
    calls = [draw(batch_call(tree, made)) for _ in range(draw(st.integers(2, 7)))]
    per_file = {str(args["path"]) for tool, args in calls if tool in EDITS and "path" in args}
    touched = sorted({str(args.get("path") or args.get("destination"))
                      for _, args in calls if args.get("path") or args.get("destination")})
    return tree, Op("batch", calls, batch=True, per_file=per_file, undo_paths=touched[:1])


def operations() -> st.SearchStrategy[tuple[Tree, Op]]:
    # patches and batches, the operations of many steps, come up twice as often
    return st.one_of(patch_op(), batch_op(), patch_op(), batch_op(), tree_op(), big_write(),
                     linked_edit(), long_append(), undo_op())


@st.composite
def next_calls(draw: st.DrawFn, op: Op) -> Call:
    """The call after the crash: any tool, on any path."""
    touched = op.undo_paths or ["a.txt"]
    choices: list[Call] = [
        ("list_directory", {"path": ".", "max_depth": 6, "include_hidden": True}),
        ("read_file", {"path": draw(st.sampled_from(touched))}),
        ("grep_search", {"pattern": "line 1", "include_hidden": True}),
        ("find_files", {"pattern": "*", "include_hidden": True}),
        ("get_file_info", {"path": "a.txt"}),
        ("write_file", {"path": "zz-next.txt", "content": "the next call\n"}),
    ]
    if op.retry:
        choices.append(("retry", {}))  # the operation's own call, sent again
    return draw(st.sampled_from(choices))
