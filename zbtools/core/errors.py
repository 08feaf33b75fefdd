"""The recurring errors, each built by one function: its message, hint and details written once.

A raise site says what it knows (the path, what the call was doing with it) and one function here
words the error, so that a code reads the same whichever tool raises it, and a model fixing its
next call meets one wording and one set of ``details`` keys (``path`` first). Where the right next
step differs by tool (a directory given to a write, a delete, a copy), the difference is the
``doing`` parameter and its hint is chosen from one table, never copied into the tool.

Map: ``is_directory``, ``not_found``, ``stale_file`` and ``file_vanished`` (a file read, then
changed or deleted before the write), ``already_exists``, ``protected_path`` (git's own files)
and ``workspace_root_protected``. The codes are the contract's (``zbtools.contract.ERROR_CODES``).

Stdlib and the contract only: every layer above may use it.
"""

from __future__ import annotations

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    # What the call wanted to do with the path: it chooses the hint.
    Doing = Literal["read", "write", "replace", "copy", "delete"]

# The builders callers outside this module use (tests/test_public_surface.py holds them to it);
# the hints below are this module's own.
__all__ = ["already_exists", "file_vanished", "is_directory", "not_found", "protected_path",
           "stale_file", "workspace_root_protected"]

# What to do instead when a file was wanted and the path is a directory, by what the call was
# doing.
IS_DIRECTORY_HINTS: dict[str, str] = {
    "read": "use list_directory to see a directory",
    "write": "give a file path, not a directory",
    "replace": "delete it first, or end the destination with / to move into it",
    "copy": "pass recursive: true to copy it with its contents",
    "delete": "pass recursive: true to delete it and everything inside it",
}
ROOT_HINTS: dict[str, str] = {
    "read": IS_DIRECTORY_HINTS["read"],
    "write": "give a file path inside the workspace",
}
REREAD_HINT = "read the file again and redo the change against its current content"
VANISHED_HINT = "read the file again; it was deleted or moved"


def is_directory(path: str, doing: Doing = "write", *, root: bool = False,
                 entries: int | None = None) -> ToolError:
    """``is_directory``: ``path`` is a directory (``root``: the workspace root itself) where a
    file was wanted. ``entries``: how many a directory refused for deletion holds."""
    if root:
        return ToolError("is_directory", f"{path}: is the workspace root directory",
                         hint=ROOT_HINTS.get(doing, ROOT_HINTS["write"]),
                         details={"path": path})
    what = {"read": "is a directory, not a file",
            "replace": "is a directory, which is never replaced"}.get(doing, "is a directory")
    details: dict[str, Any] = {"path": path}
    if entries is not None:
        what += f" with {entries} entr{'y' if entries == 1 else 'ies'}" if entries else \
            " (empty)"
        details["entries"] = entries
    return ToolError("is_directory", f"{path}: {what}", hint=IS_DIRECTORY_HINTS[doing],
                     details=details)


def not_found(path: str, *, hint: str = "check the path with list_directory",
              what: str = "no such file or directory",
              details: dict[str, Any] | None = None) -> ToolError:
    """``not_found``: nothing at ``path`` (``what``: which part is missing). ``hint``: the next
    step, when this call knows a better one than looking. ``details``: ``{"path": path}`` unless
    the call has its own facts to give."""
    return ToolError("not_found", f"{path}: {what}", hint=hint,
                     details={"path": path} if details is None else details)


def stale_file(path: str, what: str = "changed since it was read", *, hint: str = REREAD_HINT,
               expected_sha256: str | None = None, current_sha256: str | None = None,
               **details: Any) -> ToolError:
    """``stale_file``: the file at ``path`` is no longer what the caller read (``what``
    happened to it). The sha256 pair goes in ``details`` when the caller gave one."""
    facts: dict[str, Any] = {"path": path}
    if expected_sha256 is not None:
        facts["expected_sha256"] = expected_sha256
        facts["current_sha256"] = current_sha256
    facts.update(details)
    return ToolError("stale_file", f"{path}: {what}", hint=hint, details=facts)


def file_vanished(path: str, expected_sha256: str | None = None) -> ToolError:
    """``stale_file`` for a file that was read (or whose ``expected_sha256`` was given) and is
    gone now: deleted or moved meanwhile."""
    what = "no longer exists (expected_sha256 given)" if expected_sha256 is not None else \
        "no longer exists (deleted or moved since it was read); nothing was written"
    facts: dict[str, Any] = {"path": path, "current_sha256": None}
    if expected_sha256 is not None:
        facts["expected_sha256"] = expected_sha256
    return ToolError("stale_file", f"{path}: {what}", hint=VANISHED_HINT, details=facts)


def already_exists(path: str, *, hint: str, what: str = "already exists",
                   details: dict[str, Any] | None = None) -> ToolError:
    """``already_exists``: something is at ``path`` (``what`` says how it got there when that
    matters) and overwriting was not asked; ``hint`` says how this call replaces it.
    ``details``: ``{"path": path}`` unless the call has its own facts to give."""
    return ToolError("already_exists", f"{path}: {what}", hint=hint,
                     details={"path": path} if details is None else details)


ALLOW_GIT_WRITES = ("set allow_git_writes = true in the [files] table of the config file (or "
                    "ZBTOOLS_ALLOW_GIT_WRITES=1)")


def protected_path(path: str, what: str, *, instead: str | None = None,
                   **details: Any) -> ToolError:
    """``protected_path``: ``path`` belongs to git (``what`` says how); ``instead``: what to do
    rather than write there, when it is not to use git itself. The hint always names the setting
    that lets zbtools write there."""
    hint = f"{instead}, or {ALLOW_GIT_WRITES}" if instead is not None else (
        f"use git itself to change a repository's internals; to let zbtools write there, "
        f"{ALLOW_GIT_WRITES}")
    return ToolError("protected_path", f"{path}: {what}", hint=hint,
                     details={"path": path, **details})


def workspace_root_protected(path: str, doing: Literal["move", "delete", "write"] = "move"
                             ) -> ToolError:
    """``workspace_root_protected``: ``path`` names the workspace root, which is never deleted,
    moved or overwritten."""
    if doing == "delete":
        what = "which can never be deleted"
        named = f"{path}: is the workspace root" if path else \
            "an empty path names the workspace root"
        return ToolError("workspace_root_protected", f"{named}, {what}",
                         hint="delete paths inside it instead", details={"path": path})
    hint = "write to a file path inside the workspace" if doing == "write" else \
        "name a file or directory inside the workspace"
    return ToolError("workspace_root_protected", f"{path}: is the workspace root", hint=hint,
                     details={"path": path})
