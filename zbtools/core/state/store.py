"""Locked, versioned JSON state files in the workspace's state directory
(docs/internals/security.md#state, docs/internals/files.md#state-files).

A CLI process lives for one call, so the editor state, the live plan and the task list persist
between calls in ``<state dir>/<name>.json``, outside the workspace. Agents call tools in
parallel, so every access holds a ``flock`` for its whole read-modify-write, and a write
replaces the document atomically. A document that is not valid JSON, of another kind, or of a
version other than ``STATE_VERSION`` is ``state_corrupt`` and never rewritten. The hooks
move_file and delete_file call keep the editor's open files in step; they touch nothing when no
editor state exists, and a failure there is a warning. Failure modes: ``state_corrupt``,
``io_error``.

Map: ``StateFile`` (one document), ``EditLock``, ``acquire_lock``, ``replace_durably``,
``on_path_moved``, ``on_path_deleted``, ``state_error``; ``EDITOR``, ``PLAN``, ``TASKS``,
``STATE_VERSION``.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context

STATE_VERSION = 1
EDITOR = "editor"
PLAN = "plan"
TASKS = "tasks"


def state_error(path: str, why: str) -> ToolError:
    """The ``state_corrupt`` error for the state file ``path``."""
    return ToolError(
        "state_corrupt", f"the state file {path} {why}; it was left untouched",
        hint=f"move it away (mv {path} {path}.bad) to start afresh, or use the zbtools version "
        "that wrote it", details={"state_file": path})


def acquire_lock(path: str, *, shared: bool = False) -> int:
    """Open (creating) the lock file ``path`` and ``flock`` it; closing the fd releases it.

    Every read-modify-write of state holds one (docs/internals/security.md#state: agents call tools
    in parallel)."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


class EditLock:
    """Hold the workspace's edit lock while inside: ``flock`` on a descriptor of the workspace
    root directory itself, so taking it creates nothing anywhere.

    Agents fire calls in parallel, one process each. Every tool that changes files
    (edits, patches, writes, appends, moves, copies, deletes, undo, editor and notebook edits)
    holds this lock around its read-check-write, so two changes of one file never both read
    the old content and silently drop one another (measured before: 1 to 4 of 8 parallel edits
    landed, all reporting success). Each acquisition opens its own descriptor, so threads of one
    process (the MCP server) exclude each other too; a root that cannot be locked only loses
    this protection. (A class, not contextlib: the JSON path's import budget has no room for
    contextlib's imports.)
    """

    def __init__(self, ctx: Context, wanted: bool = True) -> None:
        self.ctx = ctx
        self.wanted = wanted
        self.fd = -1

    def __enter__(self) -> None:
        # Re-entrant per context: a second flock on a new descriptor of the same directory
        # would wait for the first one, held by this very call, forever.
        if not self.wanted or self.ctx.holds_edit_lock:
            return
        import fcntl

        try:
            fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC,
                         dir_fd=self.ctx.workspace.root_fd)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            return
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self.ctx.holds_edit_lock = True

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the flock
            self.fd = -1
            self.ctx.holds_edit_lock = False


def replace_durably(folder: str, name: str, payload: bytes) -> None:
    """Make ``folder/name`` hold ``payload`` (mode 0600), all or nothing even across a crash: a
    temp file in the same folder (``O_EXCL``), ``fsync``, rename over the old file, ``fsync`` of
    the folder. Raises ``OSError`` (the temp file is removed then); the folder's ``fsync`` is
    best effort (some file systems refuse it on directories; the rename is done by then)."""
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(folder, name))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def _io_error(exc: OSError, path: str) -> ToolError:
    return ToolError("io_error", f"state file {path}: {os.strerror(exc.errno or 0)}",
                     hint="check that the state directory is writable (ZBTOOLS_STATE_DIR)",
                     details={"state_file": path})


class StateFile:
    """One locked state document; use as a context manager, then read/modify ``data``.

    ``data`` is the decoded document (a fresh ``{"version": .., "kind": ..}`` when the file does
    not exist yet). Nothing is written unless ``save()`` is called; ``save()`` writes only when
    ``data`` differs from what was loaded.
    """

    def __init__(self, ctx: Context, name: str, *, shared: bool = False) -> None:
        self.name = name
        try:
            self.folder = ctx.state_dir
        except OSError as exc:
            raise ToolError("io_error", "cannot create the state directory: "
                            f"{os.strerror(exc.errno or 0)}", hint="set ZBTOOLS_STATE_DIR to a "
                            "writable directory") from exc
        self.path = os.path.join(self.folder, f"{name}.json")
        self.shared = shared
        self.existed = False
        self.data: dict[str, Any] = {}
        self._loaded = ""
        self._lock_fd = -1

    def __enter__(self) -> StateFile:
        lock_path = os.path.join(self.folder, f"{self.name}.lock")
        try:
            self._lock_fd = acquire_lock(lock_path, shared=self.shared)
        except OSError as exc:
            raise _io_error(exc, lock_path) from exc
        try:
            self.data = self._load()
        except BaseException:
            self.__exit__()  # a corrupt file must not leave the lock held
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = -1

    def _load(self) -> dict[str, Any]:
        from zbtools.core.call.fastjson import dumps_ascii, loads_strict

        try:
            with open(self.path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            fresh: dict[str, Any] = {"version": STATE_VERSION, "kind": self.name}
            self._loaded = dumps_ascii(fresh)
            return fresh
        except OSError as exc:
            raise _io_error(exc, self.path) from exc
        self.existed = True
        try:
            value = loads_strict(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise state_error(self.path, "is not valid JSON") from exc
        if not isinstance(value, dict):
            raise state_error(self.path, "is not a JSON object")
        version = value.get("version")
        if type(version) is not int:
            raise state_error(self.path, "has no version number")
        if version > STATE_VERSION:
            raise state_error(self.path, f"has version {version}, newer than this zbtools "
                              f"understands ({STATE_VERSION}): it was written by a newer zbtools")
        if version != STATE_VERSION:
            raise state_error(self.path, f"has the unknown version {version}")
        if value.get("kind", self.name) != self.name:
            raise state_error(self.path, f"holds {value.get('kind')!r} state, not {self.name!r}")
        self._loaded = dumps_ascii(value)
        return value

    def corrupt(self, why: str) -> ToolError:
        """A ``state_corrupt`` error for a document whose content has the wrong shape."""
        return state_error(self.path, why)

    def save(self) -> bool:
        """Write ``data`` atomically if it changed; returns whether anything was written."""
        from zbtools.core.call.fastjson import dumps_ascii

        if self.shared:
            raise RuntimeError("a state file opened shared is read-only")
        self.data["version"] = STATE_VERSION
        self.data["kind"] = self.name
        text = dumps_ascii(self.data)
        if text == self._loaded and self.existed:
            return False
        try:
            replace_durably(self.folder, f"{self.name}.json", (text + "\n").encode("ascii"))
        except OSError as exc:
            raise _io_error(exc, self.path) from exc
        self._loaded = text
        self.existed = True
        return True


# ---------------------------------------------------------------------------------------------
# Hooks for tools that move or delete files (cheap when there is no editor state)


def _moved(path: str, old: str, new: str) -> str | None:
    if path == old:
        return new
    if path.startswith(old + "/"):
        return new + path[len(old):]
    return None


def _update_editor_paths(ctx: Context, change: Any) -> None:
    """Apply ``change(path) -> new path | None (dropped) | path (kept)`` to the open files."""
    try:
        if not os.path.exists(os.path.join(ctx.state_dir, f"{EDITOR}.json")):
            return
        with StateFile(ctx, EDITOR) as state:
            tabs = state.data.get("tabs")
            if not isinstance(tabs, list) or not all(
                    isinstance(t, dict) and isinstance(t.get("path"), str) for t in tabs):
                return  # malformed: the editor tools report it; a move must not fail over it
            active = state.data.get("active")
            new_active: str | None = None  # a dropped active file leaves no file active
            renamed = []
            for tab in tabs:
                new = change(tab["path"])
                renamed.append((tab, new, new is not None and new != tab["path"]))
            # A file moved over an open one (overwrite) replaces that tab.
            targets = {new for _, new, moved in renamed if moved}
            kept = []
            for tab, new, moved in renamed:
                if new is not None and not moved and new in targets:
                    if tab["path"] == active:
                        new_active = new  # the tab moved over it takes its place, active too
                    continue
                if new is None:
                    continue
                if tab["path"] == active:
                    new_active = new
                tab["path"] = new
                kept.append(tab)
            active = new_active
            state.data["tabs"] = kept
            state.data["active"] = active
            state.save()
    except ToolError as err:
        ctx.warn(f"the editor state was not updated: {err.message}")
    except OSError as err:
        ctx.warn(f"the editor state was not updated: {os.strerror(err.errno or 0)}")


def on_path_moved(ctx: Context, old: str, new: str) -> None:
    """``old`` (a file or directory, relative to the root) is now ``new``: open files follow."""

    def change(path: str) -> str:
        moved = _moved(path, old, new)
        return path if moved is None else moved

    _update_editor_paths(ctx, change)


def on_path_deleted(ctx: Context, rel: str) -> None:
    """``rel`` (a file or directory) was deleted: its open files are closed."""

    def change(path: str) -> str | None:
        return None if _moved(path, rel, rel) is not None else path

    _update_editor_paths(ctx, change)
