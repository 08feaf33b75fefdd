"""Applying a multi-file patch: every file checked first, then all written, or none.

``apply_patch_text`` parses a unified diff or Codex patch (``patching.parse_patch``), prepares
each file's change before writing anything (a file added, deleted, updated through the engine's
``apply_requests`` on its hunks, renamed or copied), then commits them: a single atomic step
directly, several (or a rename or copy) through the intent journal (``txn``,
docs/internals/files.md#intent-journal). Each change is journaled for ``undo``, editor tabs
follow a moved or deleted file, and every directory descriptor is closed whatever fails.
Failure modes: ``patch_parse_error``, the engine's refusals, ``already_exists``,
``invalid_arguments`` (hunks without a file and no default path, or a default path the patch
does not name), ``patch_parse_error`` also for a ``new mode`` that would change whether a file
is executable (contents only are edited), ``syntax_error`` (the syntax guard, ``syntaxguard``,
over every file before any is written), and ``cycle``'s.

Map: ``FileChange``, ``PatchOutcome``, ``apply_patch_text``. Imports ``cycle``; ``matching``,
``patching``, ``txn``, ``undo`` and ``zbtools.core.state.store`` on use.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.editing.cycle import MAX_EDIT_BYTES, check_new_text, display, to_tool_error
from zbtools.core.errors import already_exists
from zbtools.core.files.decoding import decode
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import read_bytes
from zbtools.core.files.replacing import create_file
from zbtools.core.files.staging import sync_group

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.editing.patching import FilePatch
    from zbtools.core.files.workspace import Resolved


class FileChange:
    """One file of a patch: what it was, what it becomes, and how to undo it."""

    def __init__(self, shown: str, action: str) -> None:
        self.shown = shown
        self.action = action  # updated | created | deleted | renamed | copied
        self.res: Resolved | None = None
        self.dest: Resolved | None = None
        self.rel = shown
        self.dest_rel: str | None = None
        self.before: bytes | None = None
        self.after: bytes | None = None
        self.mode: int | None = None
        self.reports: list[dict[str, Any]] = []
        self.diff = ""
        self.done = False

    def close(self) -> None:
        for res in (self.res, self.dest):
            if res is not None:
                res.close()

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.rel, "action": self.action,
                               "edits": len(self.reports)}
        if self.dest_rel is not None:
            out["destination"] = self.dest_rel
        return out


class PatchOutcome:
    def __init__(self, changes: list[FileChange], dry_run: bool) -> None:
        self.changes = changes
        self.dry_run = dry_run


def _label(change_path: str, count: int) -> str:
    return f"{change_path}: " if count > 1 else ""


def _prepare(ctx: Context, patch: Any, shown: str, label: str, changes: list[FileChange],
             tiers: Sequence[str] | None = None) -> None:
    """Add ``patch``'s change to ``changes`` before resolving anything, so that the caller
    closes its directory descriptors whatever fails on the way (a refused file of a patch
    must not leak them in a batch or MCP session)."""
    import stat as stat_module

    from zbtools.core.editing.matching import MatchError, apply_requests, unified_diff
    from zbtools.core.editing.patching import hunk_requests

    if patch.kind == "add":
        change = FileChange(shown, "created")
        changes.append(change)
        change.res = ctx.workspace.resolve(shown, create_parents=True, write=True)
        if change.res.exists:
            raise already_exists(shown, what="the patch adds this file, but it exists",
                                 hint="use an Update section (or a diff with context) to "
                                 "change an existing file")
        text = "\n".join(patch.add_lines) + ("" if patch.add_no_newline or not patch.add_lines
                                             else "\n")
        change.after = text.encode("utf-8")
        change.rel = change.res.rel
        change.diff = unified_diff(change.rel, "", text)
        return
    change = FileChange(shown, "deleted" if patch.kind == "delete" else "updated")
    changes.append(change)
    change.res = ctx.workspace.resolve(shown, write=True)
    data = read_bytes(change.res, max_bytes=MAX_EDIT_BYTES, shown=shown)
    assert change.res.st is not None
    change.mode = stat_module.S_IMODE(change.res.st.st_mode)
    change.before = data
    change.rel = change.res.rel
    decoded = decode(data, shown=shown)
    if patch.kind == "delete":
        if patch.hunks:
            expected = [line for h in patch.hunks for line in h.old]
            actual = decoded.text.replace("\r\n", "\n").split("\n")
            if actual and actual[-1] == "":
                actual.pop()
            if [a.rstrip() for a in actual] != [e.rstrip() for e in expected]:
                raise ToolError("no_match", f"{label}the patch deletes {shown}, but the file's "
                                "content differs from the lines the patch removes",
                                hint="read the file again; delete it with delete_file if that is "
                                "still intended")
        change.diff = unified_diff(change.rel, decoded.display_text(), "")
        return
    try:
        requests = hunk_requests(patch, label)
        if tiers is not None:  # a dialect's limit (docs/dialects.md#tiers)
            for request in requests:
                request.tiers = frozenset(["exact", *tiers])
        check_new_text([r.new for r in requests], decoded.invalid_utf8, shown)
        # a lone CR ends a line in a patch (docs/internals/matching.md#file-model)
        applied = apply_requests(decoded.text, requests, cr_ends_lines=True) if requests \
            else None
    except MatchError as err:
        raise to_tool_error(err) from None
    new_text = applied.text if applied is not None else decoded.text
    change.after = decoded.encode(new_text)
    change.reports = applied.reports if applied is not None else []
    for warning in applied.warnings if applied is not None else []:
        ctx.warn(warning)
    if patch.new_mode is not None and _git_mode(change.mode, patch.new_mode) != change.mode:
        raise ToolError("patch_parse_error", f"{label}the patch makes {shown} "
                        f"{'executable' if patch.new_mode & 0o100 else 'not executable'} "
                        "(new mode), which apply_edit does not do: nothing was changed",
                        hint="drop the old mode/new mode lines and change the mode with a "
                        "command (chmod)", details={"path": shown})
    if patch.new_path is not None:
        change.action = "copied" if patch.copy else "renamed"
        change.dest = ctx.workspace.resolve(patch.new_path, follow_last=False,
                                            create_parents=True, write=True)
        if change.dest.exists:
            verb = "copies" if patch.copy else "moves"
            raise already_exists(patch.new_path, what=f"the patch {verb} {shown} there, but it "
                                 "exists", hint="move or delete it first, or send the patch "
                                 "with another destination")
        change.dest_rel = change.dest.rel
    change.diff = unified_diff(change.rel, decoded.display_text(),
                               display(new_text, decoded))


def _git_mode(mode: int, asked: int) -> int:
    """The permission bits git's ``new mode`` would give a file of ``mode``: git keeps only
    whether it is executable, so execute is added where it may be read (or taken away)."""
    if asked & 0o100:
        return mode | (mode & 0o444) >> 2
    return mode & ~0o111


def _commit(ctx: Context, change: FileChange) -> None:
    """Commit a patch's only change when it is one atomic step (no rename)."""
    assert change.res is not None
    if change.action == "created":
        assert change.after is not None
        try:
            change.res.ensure_parents()
            create_file(change.res, change.after, shown=change.shown)
        except BaseException:
            change.res.rollback_parents()
            raise
    elif change.action == "deleted":
        assert change.res.name is not None
        try:
            os.unlink(change.res.name, dir_fd=change.res.dir_fd)
        except OSError as exc:
            from zbtools.core.files.workspace import os_error

            raise os_error(exc, change.shown) from exc
    elif change.action == "updated":
        assert change.after is not None and change.before is not None
        if change.after != change.before:
            from zbtools.core.editing.txn import replace_file

            replace_file(ctx, change.res, change.after,
                         expected_sha256=sha256_hex(change.before), shown=change.shown,
                         tool="apply_edit")
    else:  # a rename is two steps: it always goes through _commit_all
        raise AssertionError(f"{change.action} of {change.shown} outside a transaction")
    change.done = True


def _commit_all(ctx: Context, changes: list[FileChange]) -> None:
    """Commit several changes all or nothing, even under ``kill -9`` (``editing.txn``)."""
    from zbtools.core.editing.txn import Step, run_transaction

    steps: list[Step] = []
    for change in changes:
        assert change.res is not None
        if change.action == "created":
            steps.append(Step(change.res, "write", change.after))
        elif change.action == "deleted":
            steps.append(Step(change.res, "delete", before=change.before))
        elif change.action == "updated":
            if change.after != change.before:
                steps.append(Step(change.res, "write", change.after, before=change.before))
        else:  # renamed: the new name, then the old one goes; copied: the new name only
            assert change.dest is not None
            steps.append(Step(change.dest, "write", change.after, mode=change.mode))
            if change.action == "renamed":
                steps.append(Step(change.res, "delete", before=change.before))
    if steps:
        run_transaction(ctx, steps, "apply_edit")
    for change in changes:
        change.done = True


def _check_path_is_named(ctx: Context, path: str, patches: Sequence[FilePatch]) -> None:
    """``path`` given with a patch that names its files must be one of them: a patch of
    ``b.txt`` sent with ``path: a.txt`` is refused rather than applied to either file."""
    import posixpath

    wanted = os.path.relpath(path, ctx.workspace.root) if os.path.isabs(path) else path
    wanted = posixpath.normpath(wanted)
    named = sorted({posixpath.normpath(name) for p in patches
                    for name in (p.path, p.new_path) if name})
    if wanted not in named:
        raise ToolError("invalid_arguments", f"path {path!r} is not a file the patch changes "
                        f"(it changes {', '.join(named)})", hint="drop path (the patch names "
                        "its files), or send a patch of that file",
                        details={"path": path, "files": named})


def apply_patch_text(ctx: Context, text: str, default_path: str | None, *,
                     dry_run: bool, tiers: Sequence[str] | None = None) -> PatchOutcome:
    """Parse a unified diff or Codex patch, validate every file, then write them all."""
    from zbtools.core.editing.matching import MatchError
    from zbtools.core.editing.patching import parse_patch

    try:
        patches = parse_patch(text)
    except MatchError as err:
        raise to_tool_error(err) from None
    for patch in patches:
        if patch.path == "":
            if default_path is None:
                raise ToolError("invalid_arguments", "the patch has hunks but no file headers",
                                hint="give path, or add --- a/FILE / +++ b/FILE headers")
            patch.path = default_path
    if default_path is not None:
        _check_path_is_named(ctx, default_path, patches)
    names = [p.path for p in patches]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ToolError("patch_parse_error", f"the patch names {duplicates[0]} more than once",
                        hint="merge its hunks into one section")
    group = sync_group()
    if group is not None:
        group.flush()  # a patch reads and writes its files its own way: staged versions first
    changes: list[FileChange] = []
    try:
        for patch in patches:
            _prepare(ctx, patch, patch.path, _label(patch.path, len(patches)), changes, tiers)
        from zbtools.core.editing.syntaxguard import check_changes

        # every file's new bytes are known and none is written: a refusal leaves them all
        check_changes(ctx, [(c.dest_rel or c.rel, c.before, c.after) for c in changes
                            if c.after is not None and c.action != "deleted"])
        if dry_run:
            return PatchOutcome(changes, True)
        if len(changes) > 1 or any(c.action in ("renamed", "copied") for c in changes):
            _commit_all(ctx, changes)  # several files: through the intent journal
        else:
            _commit(ctx, changes[0])
        from zbtools.core.editing.undo import other_names, record
        from zbtools.core.state.store import on_path_deleted, on_path_moved

        for change in changes:
            # a delete, a rename or a replace by a new file takes the name from its other hard
            # links: undo gives it back its inode
            links = other_names(ctx, change.res) if change.res is not None else None
            if change.action == "copied":
                record(ctx, change.dest_rel or change.rel, None, change.after, "apply_edit",
                       parents=list(change.dest.created) if change.dest is not None else None)
            elif change.action == "renamed":
                record(ctx, change.rel, change.before, None, "apply_edit", change.mode,
                       links=links)
                record(ctx, change.dest_rel or change.rel, None, change.after, "apply_edit",
                       parents=list(change.dest.created) if change.dest is not None else None)
                on_path_moved(ctx, change.rel, change.dest_rel or change.rel)  # tabs follow
            else:
                record(ctx, change.rel, change.before,
                       None if change.action == "deleted" else change.after, "apply_edit",
                       change.mode, links=links if change.action != "created" else None,
                       parents=list(change.res.created)
                       if change.action == "created" and change.res is not None else None)
                if change.action == "deleted":
                    on_path_deleted(ctx, change.rel)  # an open editor tab of it closes
        return PatchOutcome(changes, False)
    finally:
        for change in changes:
            change.close()
