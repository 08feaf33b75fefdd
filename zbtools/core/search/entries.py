"""The values a walk deals in: its entries, its counts, its switches and its frames.

``Entry`` is one entry a walk produces (path relative to the root, kind, size, mtime, and the
stat signature a watched walk vouches for), ``Rendered`` entries it gives as its consumer wrote
them; ``Skipped`` counts what a walk or a search left out,
by kind; ``WalkSwitches`` are the walk options every listing and search tool accepts;
``Frame`` is one directory being listed. ``walk_order`` gives a path's place in walk order,
``walk_notes`` the warnings for loops and the depth cap, ``derived`` reuses what a tool made of
an entry while the entry is unchanged.
"""

from __future__ import annotations

import os

from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from zbtools.core.search.layers import Layer, Print
    from zbtools.core.search.watch import ChangeMonitor

    T = TypeVar("T")


DEFAULT_EXCLUDED_DIRS: tuple[str, ...] = (
    ".git", ".hg", ".svn", ".bzr", "node_modules", "target", "__pycache__", "vendor",
    ".zbtools", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
)


class WalkSwitches(Struct):
    """The walk options every listing and search tool accepts (declared once, inherited)."""

    include_hidden: bool = field(default=False, help="Also include names starting with '.'")
    include_ignored: bool = field(default=False, help="Also include entries matched by "
                                  ".gitignore/.ignore/.rgignore")
    exclude_dirs: list[str] | None = field(
        default=None, help="Directory names never entered, replacing the default list "
        "(.git, node_modules, target, __pycache__, vendor...); [] excludes none")


MAX_DEPTH = 512


class Skipped(Struct):
    ignored: int = field(default=0, help="Entries matched by .gitignore/.ignore/.git/info/exclude")
    hidden: int = field(default=0, help="Hidden entries (names starting with '.')")
    binary: int = field(default=0, help="Binary files not searched")
    too_large: int = field(default=0, help="Files not searched for their size: over a "
                           "max_filesize given, or over 10 MiB in multiline mode")
    excluded_dirs: int = field(default=0,
                               help="Directories not entered by default (.git, node_modules...)")
    unreadable: int = field(default=0, help="Directories or files that could not be read")

    def total(self) -> int:
        return (self.ignored + self.hidden + self.binary + self.too_large + self.excluded_dirs
                + self.unreadable)

    def describe(self) -> str:
        """``2 hidden, 1 ignored`` (non-zero kinds only), or an empty string."""
        parts = []
        for key, n in self.to_json().items():
            if n:
                label = ("excluded director" + ("y" if n == 1 else "ies")
                         if key == "excluded_dirs" else key.replace("_", " "))
                parts.append(f"{n} {label}")
        return ", ".join(parts)

    def missed(self) -> Skipped:
        """Only what a user might have wanted: files too large and what could not be read.

        Hidden, ignored, excluded and binary entries are out by the walk's own rules, about
        which a terminal or a pipe says nothing, as rg and fd say nothing
        (docs/shell.md#what-is-said-on-stderr)."""
        return Skipped(too_large=self.too_large, unreadable=self.unreadable)

    def remedy(self, verb: str) -> str:
        """``; to search them: include_hidden: true, ...`` for the switches that would help."""
        hints = [hint for hint, n in (("include_hidden: true", self.hidden),
                                      ("include_ignored: true", self.ignored),
                                      ("exclude_dirs: []", self.excluded_dirs)) if n]
        return f"; to {verb} them: {', '.join(hints)}" if hints else ""


class Entry:
    """One entry met by the walk (symlinks are never followed)."""

    __slots__ = ("depth", "kind", "mtime", "name", "rel", "sig", "size", "target")

    def __init__(self, rel: str, name: str, kind: str, size: int | None, depth: int,
                 target: str | None, mtime: float = 0.0) -> None:
        self.rel = rel
        self.name = name
        self.kind = kind
        self.size = size
        self.depth = depth
        self.target = target
        self.mtime = mtime  # st_mtime of the entry itself (lstat)
        # cache.signature of an lstat taken while the directory was watched (watch.py) and
        # nothing changed it since; whoever sets it sets size and mtime from the same lstat,
        # so they are current without another stat
        self.sig: tuple[int, int, int, int, int] | None = None

    def __repr__(self) -> str:
        return f"Entry({self.rel!r}, {self.kind})"


class Rendered:
    """Entries a walk gives already written by its consumer's ``render`` (``Walk(render=...)``):
    the texts of ``count`` entries, in walk order, each text one or more entries as ``render``
    wrote them. A one-shot listing's second scanner writes whole subtrees so (walk_split.py)."""

    __slots__ = ("count", "texts")

    def __init__(self, texts: list[str], count: int) -> None:
        self.texts = texts
        self.count = count

    def __repr__(self) -> str:
        return f"Rendered({self.count} entries)"


class Frame:
    """One directory of the walk's stack: its descriptor, rules, children and place."""

    __slots__ = ("children", "depth", "fd", "ident", "ignore_names", "index", "layers", "pos",
                 "prints", "rel", "st", "wd")

    def __init__(self, fd: int, rel: str, depth: int, layers: tuple[Layer, ...],
                 prints: tuple[Print, ...] = (), monitor: ChangeMonitor | None = None) -> None:
        self.fd = fd
        self.rel = rel
        self.depth = depth
        self.layers = layers
        self.prints = prints  # the ignore files in effect below the start (warm cache)
        self.index = -1  # its place in the walk's recording (Recording.frames)
        # watched before anything is read of it, so no change falls between (watch.py)
        self.wd = monitor.watch(fd) if monitor is not None else None
        st = self.st = os.fstat(fd)
        if self.wd is not None and monitor is not None and not monitor.is_local(st.st_dev):
            self.wd = None
        self.ident = (st.st_dev, st.st_ino)
        self.children: list[tuple[Entry, bool]] = []  # (entry, descend into it)
        self.ignore_names: frozenset[str] = frozenset()  # the ignore files it holds (its scan)
        self.pos = 0


def derived(made: dict[str, tuple[object, T]], entry: Entry, make: Callable[[Entry], T]) -> T:
    """``make(entry)``, or what it made for the same path before while the entry's signature
    is still the same object (a new stat always makes a new one; None vouches for nothing).
    ``made`` lives in a walk's memo (``keep_memo``), so a replayed walk's results are reused."""
    kept = made.get(entry.rel)
    if kept is None or kept[0] is not entry.sig or entry.sig is None:
        kept = made[entry.rel] = (entry.sig, make(entry))
    return kept[1]


def walk_notes(loops: int, depth_limited: bool) -> list[str]:
    """The warnings for directory loops not entered again and for the depth cap."""
    notes = []
    if loops:
        notes.append(f"{loops} directory loop(s) (bind mounts) were not entered again")
    if depth_limited:
        notes.append(f"directories deeper than {MAX_DEPTH} levels were not entered: their "
                     "contents are not in the result; list or search from a deeper path")
    return notes


def walk_order(rel: str) -> str:
    """A path's place in walk order (siblings by name, a directory's contents right after
    it): ``"\0"`` sorts before every character of a name."""
    return rel.replace("/", "\0")

