"""The workspace root and path containment (docs/contract.md#safety-and-fidelity,
docs/internals/security.md#t1).

Every path a tool touches is resolved here, one component at a time, relative to directory
descriptors already held (``dir_fd`` and ``O_NOFOLLOW`` on every hop), and the final operation uses
the parent's descriptor too, so the path checked is the path used and a concurrent swap is
``path_changed``, never an escape (docs/internals/security.md#t4). Absolute paths are admitted only
under the root or an extra root, compared by components; ``..`` may never climb above the root;
symlinks are followed only while they stay beneath it, at most ``MAX_SYMLINK_HOPS``; NUL, ``~`` and
deceptive names are refused (docs/internals/security.md#t2, docs/internals/security.md#t5). Only the
final component may be missing unless parents are created, one ``mkdir(dir_fd=...)`` at a time.
Failure modes: ``outside_workspace``, ``invalid_arguments``, ``path_changed``, ``symlink_loop``,
``not_found``, ``protected_path``.

Map: ``Workspace`` (the roots; ``resolve``), ``Resolved`` (a resolved path, its held parent,
``ensure_parents`` and ``rollback_parents``), ``check_writable``, ``check_deceptive``,
``equivalent_name``, ``display_path``, ``os_error``.
"""

from __future__ import annotations

import errno
import os
import stat

from zbtools.contract import ToolError
from zbtools.core.errors import already_exists, is_directory, not_found, protected_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from zbtools.core.files.gitguard import GitGuard

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Characters that make a name display as another: bidirectional overrides, embeddings and
# isolates (``evil\u202etxt.exe`` shows as ``evilexe.txt``), and zero-width characters
# (``.g\u200cit`` shows as ``.git``).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
DECEPTIVE = BIDI_CONTROLS | ZERO_WIDTH
MAX_SYMLINK_HOPS = 40
HELD_DIRS = 32  # directory fds one resolution keeps open besides the root (see _DirStack)


def os_error(exc: OSError, shown: str) -> ToolError:
    """Map an ``OSError`` met while working on ``shown`` (the path as requested) to the contract."""
    code = exc.errno
    if code in (errno.ENOENT,):
        return not_found(shown, hint="check the path with list_directory or get_file_info")
    if code in (errno.EACCES, errno.EPERM):
        return ToolError("permission_denied", f"{shown}: permission denied",
                         hint="the operating system refused access; check the file's mode",
                         details={"path": shown})
    if code == errno.EEXIST:
        return already_exists(shown, hint="pass overwrite: true to replace it")
    if code == errno.EISDIR:
        return is_directory(shown, "write")
    if code == errno.ENOTDIR:
        return ToolError("not_a_directory", f"{shown}: a component of the path is not a directory",
                         details={"path": shown})
    if code == errno.ELOOP:
        return ToolError("path_changed", f"{shown}: changed into a symbolic link while in use",
                         hint="resolve the path again (call the tool again)")
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return ToolError("no_space", f"{shown}: {os.strerror(code)}; nothing was changed",
                         hint="free disk space or quota, then retry")
    if code == errno.EXDEV:
        return ToolError("cross_device", f"{shown}: source and destination are on different "
                         "filesystems", hint="copy_file then delete_file instead")
    if code == errno.ENAMETOOLONG:
        return ToolError("invalid_arguments", f"{shown}: file name too long")
    if code == errno.ENOTEMPTY:
        return already_exists(shown, what="directory not empty",
                              hint="empty it first, or choose another name")
    if code == errno.EROFS:
        return ToolError("permission_denied", f"{shown}: read-only filesystem",
                         details={"path": shown})
    return ToolError("io_error", f"{shown}: {os.strerror(code or 0)}",
                     hint="an operating-system error; retrying may help")


class Resolved:
    """The outcome of resolving one path: a held parent directory fd and the final name.

    ``name`` is ``None`` when the path is the workspace root itself (``dir_fd`` is then the root).
    ``st`` is the ``lstat`` of the final entry, or ``None`` when it does not exist yet.
    ``missing`` lists directory components that do not exist yet (only with
    ``create_parents=True``); ``ensure_parents`` creates them.
    """

    def __init__(self, requested: str, parts: list[str], dir_fd: int, name: str | None,
                 st: os.stat_result | None, missing: list[str], base: str = "") -> None:
        self.requested = requested
        self.base = base  # "" in the primary root, else the real path of the root it lies in
        self.parts = parts
        self.dir_fd = dir_fd
        self.name = name
        self.st = st
        self.missing = missing
        self.created: list[str] = []  # relative paths of directories created by ensure_parents
        self._created_fds: list[tuple[int, str]] = []

    @property
    def is_root(self) -> bool:
        return self.name is None

    @property
    def exists(self) -> bool:
        return self.st is not None and not self.missing

    @property
    def rel(self) -> str:
        """The resolved location as results show it, POSIX separators: relative to the primary
        root (``.`` for the root), or absolute in another root (see ``Workspace``)."""
        comps = [*self.parts, *self.missing]
        if self.name is not None:
            comps.append(self.name)
        return display_path(self.base, comps)

    @property
    def parent_rel(self) -> str:
        return display_path(self.base, [*self.parts, *self.missing])

    def ensure_parents(self) -> None:
        """Create the missing parent directories, one ``mkdir(dir_fd=...)`` at a time."""
        while self.missing:
            comp = self.missing[0]
            try:
                os.mkdir(comp, 0o777, dir_fd=self.dir_fd)
                created = True
            except FileExistsError:
                created = False  # a concurrent creator; open it below without following links
            except OSError as exc:
                raise os_error(exc, self.requested) from exc
            try:
                fd = os.open(comp, DIR_FLAGS, dir_fd=self.dir_fd)
            except OSError as exc:
                raise ToolError("path_changed", f"{self.requested}: {comp} changed while "
                                "being created", hint="call the tool again") from exc
            if created:
                self._created_fds.append((os.dup(self.dir_fd), comp))
                self.created.append("/".join([*self.parts, comp]))
            os.close(self.dir_fd)
            self.dir_fd = fd
            self.parts.append(comp)
            self.missing.pop(0)

    def rollback_parents(self) -> None:
        """Remove the directories ``ensure_parents`` created (deepest first), if still empty."""
        while self._created_fds:
            parent_fd, comp = self._created_fds.pop()
            try:
                os.rmdir(comp, dir_fd=parent_fd)
            except OSError:
                pass
            finally:
                os.close(parent_fd)
        self.created.clear()

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1
        for fd, _ in self._created_fds:
            os.close(fd)
        self._created_fds.clear()

    def __enter__(self) -> Resolved:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


GIT_DIR = ".git"


def check_writable(res: Resolved) -> None:
    """Refuse (``protected_path``) a resolved location that is ``.git`` or lies inside one, at
    any depth (submodules too), compared case-insensitively (case-insensitive volumes): git
    runs its hooks and obeys its config (``core.fsmonitor``, ``core.hooksPath``) later, with the
    user's privileges. The location is the resolved one, so a symlink or ``..`` does not get
    around it."""
    comps = [*res.parts, *res.missing, *([res.name] if res.name is not None else [])]
    if any(c.casefold() == GIT_DIR for c in comps):
        raise protected_path(res.requested, "lies inside .git/ (git's hooks, config and "
                             "objects), which zbtools never changes by default",
                             resolved=res.rel)


def protected_error(res: Resolved, why: str) -> ToolError:
    """``protected_path`` for a location that belongs to git under another name than ``.git``
    (``why`` says which)."""
    return protected_path(res.requested, f"{why}; git runs its hooks and obeys its config "
                          "later, with your privileges, so zbtools never changes them by default",
                          resolved=res.rel)


def check_deceptive(path: str) -> None:
    """Refuse a path with a bidirectional control anywhere, or a zero-width character in a
    component whose other characters are all ASCII: there it can only disguise the name (in
    scripts that need them, such as Persian's zero-width non-joiner or an emoji sequence's
    joiner, the component holds other non-ASCII characters and is accepted)."""
    for component in path.split("/"):
        bidi = BIDI_CONTROLS.intersection(component)
        zero = ZERO_WIDTH.intersection(component)
        if zero and not all(c.isascii() or c in ZERO_WIDTH for c in component):
            zero = frozenset()
        found = sorted(bidi | zero)
        if found:
            codes = ", ".join(f"U+{ord(c):04X}" for c in found)
            raise ToolError("invalid_arguments",
                            f"{path!r}: the name {component!r} holds {codes}, which makes it "
                            "display as a different name", hint="use the name without "
                            "invisible or direction-changing characters",
                            details={"path": path, "characters": [f"U+{ord(c):04X}"
                                                                  for c in found]})


def equivalent_name(dir_fd: int, name: str, path: str, parents: list[str]) -> str:
    """The one entry of the directory that is ``name`` in Unicode's canonical equivalence (an
    accent composed in one spelling and decomposed in the other: macOS writes the second, most
    editors and models the first). Raises FileNotFoundError when none is, ``ambiguous_path``
    when several are (which one the caller meant cannot be told)."""
    import unicodedata

    key = unicodedata.normalize("NFC", name)
    try:
        found = [entry for entry in os.listdir(dir_fd)
                 if not entry.isascii() and unicodedata.normalize("NFC", entry) == key]
    except OSError:
        found = []
    if not found:
        raise FileNotFoundError(name)
    if len(found) > 1:
        where = "/".join(parents) or "."
        raise ToolError("ambiguous_path", f"{path}: {name!r} names no entry exactly, and "
                        f"{len(found)} entries of {where} are that name in another Unicode "
                        f"form: {', '.join(repr(f) for f in sorted(found))}",
                        hint="spell the name exactly as one of them (the same bytes), or "
                        "rename one", details={"path": path, "candidates": sorted(found)})
    return found[0]


def display_path(base: str, comps: list[str]) -> str:
    """Components below a root as results show them: relative in the primary root (``base``
    empty), absolute (the root's real path, then the components) in another one."""
    if base:
        return base.rstrip("/") + "/" + "/".join(comps) if comps else base
    return "/".join(comps) or "."


class _DirStack:
    """The directories walked so far: the root at the bottom, the current directory on top.

    Only the root and the top ``HELD_DIRS`` levels keep their descriptors open, so a path of any
    depth cannot exhaust the descriptor limit. A level whose descriptor was closed is reopened
    from its child with ``openat("..")`` when a ``..`` climbs back to it, and accepted only if it
    is the directory seen on the way down (same ``st_dev``, ``st_ino``); else ``path_changed``.
    """

    def __init__(self, root_fd: int) -> None:
        self.fds = [os.dup(root_fd)]  # -1 marks a closed level
        self.ids: dict[int, tuple[int, int]] = {}  # level -> identity, for closed levels

    def __len__(self) -> int:
        return len(self.fds)

    @property
    def top(self) -> int:
        return self.fds[-1]

    def push(self, fd: int) -> None:
        self.fds.append(fd)
        level = len(self.fds) - 1 - HELD_DIRS
        if level >= 1 and self.fds[level] >= 0:
            st = os.fstat(self.fds[level])
            self.ids[level] = (st.st_dev, st.st_ino)
            os.close(self.fds[level])
            self.fds[level] = -1

    def pop(self, shown: str) -> os.stat_result:
        """Drop the top level (its parent becomes the top); return the dropped level's fstat."""
        level = len(self.fds) - 2
        if self.fds[level] < 0:
            try:
                fd = os.open("..", DIR_FLAGS, dir_fd=self.fds[-1])
            except OSError as exc:
                raise ToolError("path_changed", f"{shown}: changed during resolution",
                                hint="call the tool again") from exc
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.ids[level]:
                os.close(fd)
                raise ToolError("path_changed", f"{shown}: a directory moved during resolution",
                                hint="call the tool again")
            del self.ids[level]
            self.fds[level] = fd
        fd = self.fds.pop()
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def reset(self) -> None:
        """Back to the root (an absolute symlink target restarts there)."""
        for fd in self.fds[1:]:
            if fd >= 0:
                os.close(fd)
        del self.fds[1:]
        self.ids.clear()

    def take_top(self) -> int:
        """Close every level but the top, whose descriptor passes to the caller."""
        keep = self.fds.pop()
        self.close()
        return keep

    def close(self) -> None:
        for fd in self.fds:
            if fd >= 0:
                os.close(fd)
        self.fds.clear()
        self.ids.clear()


class _Root:
    """One root directory: its real path, the spellings that name it, its descriptor."""

    def __init__(self, root: str) -> None:
        try:
            real = os.path.realpath(root, strict=True)
        except OSError as exc:
            raise ToolError("usage_error", f"workspace {root!r} does not exist or is unreadable",
                            hint="pass --workspace DIR (or set ZBTOOLS_WORKSPACE)") from exc
        if not os.path.isdir(real):
            raise ToolError("usage_error", f"workspace {root!r} is not a directory",
                            hint="pass --workspace DIR (or set ZBTOOLS_WORKSPACE)")
        self.path = real
        # The spelling given is an alias only if the kernel agrees it names the root: abspath
        # folds ".." lexically, so "link/.." would otherwise stand for the link's grandparent.
        given = os.path.abspath(root)
        self.aliases = [real] if given == real or os.path.realpath(given) != real \
            else [real, given]
        self.alias_parts = [[c for c in alias.split("/") if c] for alias in self.aliases]
        self.fd = -1

    def open(self) -> int:
        if self.fd < 0:
            try:
                self.fd = os.open(self.path, DIR_FLAGS)
            except OSError as exc:
                raise ToolError("usage_error", f"cannot open workspace {self.path!r}: "
                                f"{os.strerror(exc.errno or 0)}") from exc
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Workspace:
    """The root directory every path is confined to, and any further roots.

    ``extra_roots`` (the MCP client's other roots) admit absolute paths inside them, with the
    same containment as the primary root: a path resolves beneath exactly one root, and ``..``
    or a symlink may not leave it (an absolute symlink target may name a place in any root).
    Relative paths always start at the primary root, which also keys the state directory and
    the edit lock. Results show a location in the primary root relative to it, and one in
    another root as an absolute path (its real path), which resolves again.
    """

    protect_git = True  # writes refuse .git internals (the [files] allow_git_writes setting)
    # what writers do with a change that breaks the parse: warn, refuse, off (the [files]
    # check_syntax setting; a call's own parameter overrides it through its Context)
    check_syntax = "warn"

    def __init__(self, root: str, extra_roots: Sequence[str] = ()) -> None:
        self._roots = [_Root(root)]
        for extra in extra_roots:
            other = _Root(extra)
            if all(other.path != r.path for r in self._roots):
                self._roots.append(other)
        primary = self._roots[0]
        self.root = primary.path
        self.aliases = primary.aliases
        self.new_call()

    def new_call(self) -> None:
        """Forget what the last call learnt of the disk: git's places (``GitGuard``) and the
        names of hard-linked files. ``ToolSpec.call`` calls it first; within a call both are
        looked up once."""
        self._guard: GitGuard | None = None
        self._names: dict[tuple[int, int, int], tuple[list[str], bool]] = {}
        self._link_refusals: dict[tuple[int, int], str | None] = {}

    @property
    def roots(self) -> list[str]:
        """The real paths of every root, the primary one first."""
        return [r.path for r in self._roots]

    @property
    def root_fd(self) -> int:
        return self._roots[0].open()

    def close(self) -> None:
        for r in self._roots:
            r.close()

    def _strip_alias(self, absolute: str) -> tuple[int, str] | None:
        """(index of the root, ``absolute`` relative to it), or ``None`` when it does not start
        with a spelling of any root (the primary root is tried first).

        Compared by components (empty and ``.`` components dropped, ``..`` kept literally, so
        ``/ws/../ws`` strips to ``../ws`` and is then refused), never by string prefix.
        """
        comps = [c for c in absolute.split("/") if c not in ("", ".")]
        for index, r in enumerate(self._roots):
            for prefix in r.alias_parts:
                if comps[:len(prefix)] == prefix:
                    return index, "/".join(comps[len(prefix):])
        return None

    def root_of(self, rel: str) -> tuple[int, str, list[str]]:
        """(the descriptor of the root, its display base, the components below it) of a
        location as results show it (``Resolved.rel``, a walk entry's ``rel``)."""
        if rel.startswith("/"):
            found = self._strip_alias(rel)
            if found is not None and found[0] > 0:
                r = self._roots[found[0]]
                return r.open(), r.path, [c for c in found[1].split("/") if c]
        return self.root_fd, "", [c for c in rel.split("/") if c not in ("", ".")]

    def split(self, path: str) -> list[str]:
        """Validate the requested spelling and return its components (``..`` kept)."""
        return self._locate(path)[1]

    def _locate(self, path: str) -> tuple[int, list[str]]:
        """Validate the requested spelling: (index of its root, its components, ``..`` kept)."""
        if type(path) is not str:
            raise ToolError("invalid_arguments", "path must be a string",
                            hint='give the path as a JSON string, e.g. "src/a.py"')
        if path == "":
            raise ToolError("invalid_arguments", "path is empty",
                            hint='use "." for the workspace root or a relative path')
        if "\x00" in path:
            raise ToolError("outside_workspace", "path contains a NUL byte",
                            hint="paths never contain NUL; send the path exactly as it is named",
                            details={"path": path})
        try:
            path.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError("invalid_arguments", "path is not valid Unicode (lone surrogate)",
                            hint="a name whose bytes are not UTF-8 is listed with \\udcXX for "
                            "each such byte but cannot be named by a tool: rename it with a "
                            "command (e.g. mv with a wildcard for that byte)",
                            details={"path": path.encode("utf-8", "backslashreplace").decode()}
                            ) from exc
        if path == "~" or path.startswith("~/"):
            raise ToolError("outside_workspace", f"{path}: '~' is not expanded and home "
                            "directories are outside the workspace",
                            hint=f"use a path relative to the workspace root {self.root}",
                            details={"path": path})
        if "://" in path:
            raise ToolError("invalid_arguments", f"{path}: URIs are not paths",
                            hint="give a workspace-relative or absolute file path")
        if (len(path) > 2 and path[1] == ":" and path[2] in "\\/" and path[0].isascii()
                and path[0].isalpha()) or path.startswith("\\\\"):
            raise ToolError("invalid_arguments", f"{path}: a Windows path; this workspace is "
                            "on a POSIX system, where it would name a file called exactly that",
                            hint="use a path relative to the workspace root, with / between "
                            "directories", details={"path": path})
        if not DECEPTIVE.isdisjoint(path):
            check_deceptive(path)
        index = 0
        if path.startswith("/"):
            stripped = self._strip_alias(path)
            if stripped is None:
                details: dict[str, object] = {"path": path, "workspace": self.root}
                if len(self._roots) > 1:
                    details["roots"] = self.roots
                raise ToolError("outside_workspace",
                                f"{path} is outside the workspace {self._describe()}",
                                hint="use a path relative to the workspace root, or an "
                                "absolute path under "
                                + ("one of the roots" if len(self._roots) > 1 else "it"),
                                details=details)
            index, path = stripped
        return index, [c for c in path.split("/") if c not in ("", ".")]

    def _describe(self) -> str:
        if len(self._roots) == 1:
            return self.root
        return f"roots {', '.join(self.roots)}"

    def resolve(self, path: str, *, follow_last: bool = True, create_parents: bool = False,
                write: bool = False) -> Resolved:
        """Resolve ``path`` beneath the root; the caller must ``close()`` the result.

        ``follow_last=False`` stops at a final symlink (delete, move act on the link itself).
        ``create_parents=True`` tolerates missing directories (see ``Resolved.ensure_parents``).
        ``write=True`` (the path is about to be written, edited, deleted or moved) refuses a
        resolved location inside a ``.git`` directory, or ``.git`` itself, with
        ``protected_path`` unless ``protect_git`` is off (see ``check_writable``).
        """
        res = self._resolve(path, follow_last=follow_last, create_parents=create_parents)
        if write and self.protect_git:
            try:
                check_writable(res)
                self._check_git(res)
            except BaseException:
                res.close()
                raise
        return res

    def location(self, res: Resolved) -> str:
        """The absolute path ``res`` resolved to (its real path, missing components as given)."""
        comps = [*res.parts, *res.missing, *([res.name] if res.name is not None else [])]
        base = res.base or self.root
        return base.rstrip("/") + "/" + "/".join(comps) if comps else base

    def git_guard(self) -> GitGuard:
        if self._guard is None:
            from zbtools.core.files.gitguard import GitGuard

            self._guard = GitGuard(self.roots, self.shown)
        return self._guard

    def shown(self, path: str) -> str:
        """An absolute path as messages show it: relative when it lies in the primary root."""
        if path == self.root:
            return "."
        if path.startswith(self.root.rstrip("/") + "/"):
            return path[len(self.root.rstrip("/")) + 1:]
        return path

    def _check_git(self, res: Resolved) -> None:
        """Refuse a location git uses under another name than ``.git`` (``GitGuard``), and a
        file that is another hard link of a file git uses: protection follows the inode, so a
        second name of ``.git/config`` is no way into it. Only a file with several links costs
        a walk (``protected_link``)."""
        st = res.st if not res.missing else None
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        why = self.git_guard().refusal(self.location(res), is_dir=is_dir)
        if why is None and st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            other = self.protected_link(st)
            if other is not None:
                why = f"is another name (a hard link) of {self.shown(other)}, which git uses"
        if why is not None:
            raise protected_error(res, why)

    def check_git_below(self, res: Resolved) -> None:
        """Refuse (``protected_path``) a location that holds, below it, a place git uses under
        another name than ``.git`` (a hooks directory, a ``gitdir:`` target), known from the
        repositories seen from it: what a directory moved or copied there would bring, or
        what a recursive delete of it would take away."""
        if not self.protect_git or res.is_root:
            return
        area = self.git_guard().below(self.location(res))
        if area is not None:
            raise protected_error(res, f"holds {self.shown(area)}, which git uses")

    def check_git_inside(self, res: Resolved, doing: str, instead: str) -> None:
        """Refuse (``protected_path``) to delete or move (``doing``) the directory ``res`` when
        it holds, at any depth, a ``.git``, a directory shaped like a git directory, or a place
        git uses that ``check_git_below`` knows: a repository's folder goes with git's
        internals (a full walk of it, which a recursive delete makes anyway). ``instead``
        starts the hint."""
        if not self.protect_git or res.is_root or res.name is None:
            return
        self.check_git_below(res)
        from zbtools.core.files.gitguard import git_inside

        try:
            fd = os.open(res.name, DIR_FLAGS, dir_fd=res.dir_fd)
        except OSError:
            return  # not a directory, or gone: the operation itself reports it
        try:
            found = git_inside(fd)
        finally:
            os.close(fd)
        if found is None:
            return
        where = f"{res.rel}/{found}" if found else res.rel
        what = "a .git repository" if found.rsplit("/", 1)[-1].casefold() == ".git" \
            else "a git directory"
        raise protected_path(res.requested, f"holds {what} ({where}: its history, hooks and "
                             f"config), which zbtools never {doing} by default",
                             instead=instead, holds=where)

    def link_names(self, st: os.stat_result) -> tuple[list[str], bool]:
        """The names of the file ``st`` below the primary root, and whether all were looked
        for (``treewalk.link_names``); cached for the call."""
        key = (st.st_dev, st.st_ino, st.st_nlink)
        found = self._names.get(key)
        if found is None:
            from zbtools.core.files.treewalk import link_names

            found = self._names[key] = link_names(self.root_fd, st)
        return found

    def links_all_inside(self, st: os.stat_result) -> bool:
        """Whether every name of the file ``st`` lies below the primary root."""
        return len(self.link_names(st)[0]) >= st.st_nlink

    def protected_link(self, st: os.stat_result) -> str | None:
        """A name of the hard-linked file ``st`` that git uses (absolute), or None: its names
        in every root, then, while some are still unaccounted for, in the git directories
        outside the roots that the repositories seen so far use. Names beyond the walks'
        bounds are not known: a write then breaks the link rather than write through it
        (``txn.replace_file``)."""
        key = (st.st_dev, st.st_ino)
        if key in self._link_refusals:
            return self._link_refusals[key]
        from zbtools.core.files.treewalk import link_names

        guard = self.git_guard()
        found: str | None = None
        count = 0
        for place in self.roots:
            if place == self.root:
                names, _complete = self.link_names(st)
            else:
                names, _complete = self._names_in(place, st, link_names)
            count += len(names)
            for name in names:
                where = f"{place.rstrip('/')}/{name}"
                if guard.refusal(where) is not None:
                    found = where
                    break
            if found is not None:
                break
        if found is None and count < st.st_nlink:
            for outside in guard.git_dirs_outside():
                names, _complete = self._names_in(outside, st, link_names)
                if names:
                    found = f"{outside.rstrip('/')}/{names[0]}"
                    break
        self._link_refusals[key] = found
        return found

    @staticmethod
    def _names_in(folder: str, st: os.stat_result,
                  search: Callable[[int, os.stat_result], tuple[list[str], bool]]
                  ) -> tuple[list[str], bool]:
        try:
            fd = os.open(folder, DIR_FLAGS)
        except OSError:
            return [], False
        try:
            return search(fd, st)
        finally:
            os.close(fd)

    def _resolve(self, path: str, *, follow_last: bool, create_parents: bool) -> Resolved:
        index, todo = self._locate(path)
        dirs = _DirStack(self._roots[index].open())
        names: list[str] = []
        hops = 0
        linked = 0  # how many components at the head of todo came from a symlink's target
        link = ""  # the last symlink followed
        try:
            while todo:
                comp = todo.pop(0)
                from_link = linked > 0
                linked = max(linked - 1, 0)
                if comp == "..":
                    if len(dirs) == 1:
                        top = self._roots[index].path
                        raise ToolError("outside_workspace",
                                        f"{path}: '..' leaves the workspace {top}",
                                        hint="paths may not climb above the workspace root",
                                        details={"path": path, "workspace": top})
                    dirs.pop(path)
                    names.pop()
                    continue
                last = not todo
                try:
                    try:
                        st = os.stat(comp, dir_fd=dirs.top, follow_symlinks=False)
                    except FileNotFoundError:
                        if comp.isascii():
                            raise
                        comp = equivalent_name(dirs.top, comp, path, names)
                        st = os.stat(comp, dir_fd=dirs.top, follow_symlinks=False)
                except FileNotFoundError:
                    if create_parents and from_link:
                        raise ToolError(
                            "dangling_symlink", f"{path}: the symlink {link} points to "
                            f"{'/'.join([*names, comp])}, which does not exist",
                            hint="writing through it would create its target: write to the "
                            "target's path itself, or remove the symlink first",
                            details={"path": path, "symlink": link}) from None
                    if last:
                        return self._done(path, self._base(index), dirs, names, comp, None, [])
                    if create_parents and ".." not in todo:
                        return self._done(path, self._base(index), dirs, names, todo[-1], None,
                                          [comp, *todo[:-1]])
                    missing = "/".join([*names, comp])
                    raise not_found(path, what=f"directory {missing} does not exist",
                                    hint="create it with create_directory, or check the path",
                                    details={"path": path, "missing": missing}) from None
                except OSError as exc:
                    raise os_error(exc, path) from exc
                if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                    link = "/".join([*names, comp])
                    hops += 1
                    if hops > MAX_SYMLINK_HOPS:
                        raise ToolError("symlink_loop", f"{path}: too many levels of symbolic "
                                        "links", hint="the path contains a symlink loop",
                                        details={"path": path})
                    try:
                        target = os.readlink(comp, dir_fd=dirs.top)
                    except OSError as exc:
                        raise os_error(exc, path) from exc
                    if target.startswith("/"):
                        inside = self._strip_alias(target)
                        if inside is None:
                            raise ToolError(
                                "outside_workspace",
                                f"{path}: symlink {'/'.join([*names, comp])} points outside the "
                                "workspace", hint="symlinks are followed only while they stay "
                                "inside the workspace",
                                details={"path": path, "symlink": "/".join([*names, comp])})
                        if inside[0] == index:
                            dirs.reset()
                        else:  # into another root: its own root is the new floor
                            index = inside[0]
                            dirs.close()
                            dirs = _DirStack(self._roots[index].open())
                        names.clear()
                        target = inside[1]
                    expanded = [c for c in target.split("/") if c not in ("", ".")]
                    todo[:0] = expanded
                    linked += len(expanded)
                    continue
                if last:
                    return self._done(path, self._base(index), dirs, names, comp, st, [])
                if not stat.S_ISDIR(st.st_mode):
                    raise ToolError("not_a_directory",
                                    f"{path}: {'/'.join([*names, comp])} is not a directory",
                                    hint="a file cannot contain other paths",
                                    details={"path": path})
                try:
                    dirs.push(os.open(comp, DIR_FLAGS, dir_fd=dirs.top))
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise ToolError("path_changed", f"{path}: changed during resolution",
                                        hint="call the tool again") from exc
                    raise os_error(exc, path) from exc
                names.append(comp)
            # The root itself, or a directory reached through "..".
            if len(dirs) == 1:
                return self._done(path, self._base(index), dirs, names, None,
                                  os.fstat(dirs.top), [])
            st = dirs.pop(path)
            last_name = names.pop()
            return self._done(path, self._base(index), dirs, names, last_name, st, [])
        except BaseException:
            dirs.close()
            raise

    def _base(self, index: int) -> str:
        return "" if index == 0 else self._roots[index].path

    @staticmethod
    def _done(path: str, base: str, dirs: _DirStack, names: list[str], name: str | None,
              st: os.stat_result | None, missing: list[str]) -> Resolved:
        # take_top empties the stack, so the caller's except-clause closes nothing we return
        return Resolved(path, list(names), dirs.take_top(), name, st, missing, base)

    def display(self, rel: str) -> str:
        """The path as shown in results: relative to the root, POSIX separators."""
        return rel
