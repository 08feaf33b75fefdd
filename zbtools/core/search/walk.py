"""The one directory walker every listing and search tool shares (SECURITY 4.7, PERFORMANCE 4-6).

``Walk(workspace, path, ...)`` resolves ``path`` through ``Workspace.resolve`` and iterates the
entries below it in a deterministic pre-order (siblings sorted by name), each with its path
relative to the workspace root in POSIX form. It never uses a path string to reach a directory:
every directory is opened with ``openat(parent_fd, name, O_DIRECTORY | O_NOFOLLOW)`` and listed
with ``os.scandir(fd)``, so a directory swapped for a symlink mid-walk fails instead of escaping.
While the consumer handles an entry, ``parent_fd`` is its directory's descriptor: tools that read
files open ``entry.name`` with ``dir_fd=walk.parent_fd`` (and ``O_NOFOLLOW``), never a path.

Rules:

* Symlinks are reported (type ``symlink``, with their text) and never followed, so the walk
  cannot leave the workspace; directories are also tracked by ``(st_dev, st_ino)`` so a bind
  mount loop is entered once (``loops`` counts the refusals).
* Default excluded directories (``DEFAULT_EXCLUDED_DIRS``: ``.git``, ``node_modules``,
  ``target``, ``__pycache__``, ...) are never entered; ``exclude_dirs`` replaces the list
  (``[]`` excludes nothing).
* Hidden entries (a name starting with ``.``) are skipped unless ``include_hidden`` or an ignore
  file re-includes them by a negation (``!.github/``, as in rg); zbtools' own temp, staging and
  backup files (``tempnames.is_temp_name``) are skipped even then.
* Ignore files, with git's syntax through ``core/ignore.py`` (imported only when an ignore file
  exists): ``.git/info/exclude`` at the workspace root, then in every directory its
  ``.gitignore``, ``.ignore`` and ``.rgignore``, each applying to its own subtree, negations
  (``!keep.log``) included. Which rule decides is ripgrep's precedence (``layered_decision``):
  a ``.rgignore`` rule over an ``.ignore`` rule over a ``.gitignore`` rule over
  ``.git/info/exclude``, wherever each file lives, and among files of one kind the deepest
  (with only ``.gitignore`` files, git's own precedence). Ignored directories are
  pruned, never entered. ``include_ignored`` turns this off. A directory named explicitly as the
  start is listed even if an ancestor's rules ignore it (then only the rules inside it apply).
  A workspace root inside a repository (a directory holding ``.git`` above it) also gets the
  ignore files of the directories between the repository's root and itself, its
  ``.git/info/exclude`` included, as rg and fd read them (``OuterRules``); they are read, never
  walked, so containment stays the workspace's.
* Everything skipped is counted in ``skipped`` (``ignored``, ``hidden``, ``excluded_dirs``,
  ``unreadable``; ``binary`` and ``too_large`` are for the tools that read files), so a tool can
  say what it left out instead of answering an unexplained "nothing".

In a long-lived session (a ``cache`` whose change monitor works, ``watch.py``) every directory is
watched before it is listed, and the walk is recorded (``recording.py``); the same walk asked
again is replayed from the recording, without listing or ``stat``, while the monitor reports
nothing that alters it. An entry's ``sig`` then vouches that its ``size`` and ``mtime`` are
current. Tools may keep what they derived from a walk with it (``memo``/``keep_memo``).

Limits and failure modes: depth is bounded by ``max_depth`` and never beyond ``MAX_DEPTH``
(``depth_limited`` tells, and ``notes()`` words it for the tools' warnings); at most
``max_entries`` entries are produced (``truncated`` tells); the walk is iterative and holds at
most ``HELD_DIRS`` directory descriptors besides the resolution's own, climbing back through a
``..`` checked by ``(st_dev, st_ino)``. A directory that
cannot be opened or listed (permission, vanished, changed under us) is counted as ``unreadable``
and the walk goes on. Ignore files over 1 MiB are not read, nor those above the enclosing
repository's root or git's global ``core.excludesFile``. Matching is bucketed (about a
microsecond per path whatever the number of rules, see ``core/ignore.py``). The start path
fails with ``not_found``, ``not_a_directory`` or ``outside_workspace``.
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.fsops import entry_kind
from zbtools.core.files.tempnames import is_temp_name
from zbtools.core.files.workspace import DIR_FLAGS, display_path
from zbtools.core.search.cache import signature, watched_signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterator, Sequence
    from typing import Any, TypeVar

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.ignore import IgnoreRules
    from zbtools.core.search.recording import Counters, Recording
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
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # in increasing precedence
# Precedence between kinds of ignore file, as ripgrep's: a rule of a higher rank decides over any
# rule of a lower one, wherever either lives; within a rank the innermost file decides.
RANKS = {".git/info/exclude": 0, ".gitignore": 1, ".ignore": 2, ".rgignore": 3}
TOP_RANK = 3
MAX_DEPTH = 512
HELD_DIRS = 32
IGNORE_FILE_LIMIT = 1024 * 1024
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


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


# An ignore layer: (directory prefix relative to the root, "" or "a/b/", compiled rules).
Layer = tuple[str, "IgnoreRules | OuterRules"]
# What an ignore file read was: (where, its stat signature); a listing's cache check holds these
# for every ignore file that decided it.
Print = tuple[str, tuple[int, int, int, int, int] | None]


class _Frame:
    __slots__ = ("children", "depth", "fd", "ident", "index", "layers", "pos", "prints", "rel",
                 "st", "wd")

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
        self.pos = 0


def _read_small(dir_fd: int, name: str) -> tuple[str | None, os.stat_result | None]:
    """A regular file's text (``None`` if absent, not regular, unreadable or over 1 MiB), and
    its ``fstat`` when it could be opened."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > IGNORE_FILE_LIMIT:
            return None, st
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "replace"), st
    except OSError:
        return None, None
    finally:
        os.close(fd)


def _compile(text: str, rank: int) -> IgnoreRules:
    from zbtools.core.search.ignore import IgnoreRules

    return IgnoreRules.parse(text, rank)


def _name_of(item: os.DirEntry[str]) -> str:
    return item.name


class OuterRules:
    """One ignore file above a root, up to the enclosing repository's root: paths below the
    root are matched as that directory sees them (``above`` is the root's path from there,
    ``prefix`` the file's directory's)."""

    __slots__ = ("above", "prefix", "rank", "rules")

    def __init__(self, prefix: str, rules: IgnoreRules, above: str) -> None:
        self.prefix = prefix
        self.rules = rules
        self.above = above
        self.rank = rules.rank

    def decide(self, sub: str, name: str, is_dir: bool) -> bool | None:
        path = self.above + sub
        if self.prefix and not path.startswith(self.prefix):
            return None
        return self.rules.decide(path[len(self.prefix):], name, is_dir)


def repository_above(root: str) -> int | None:
    """How many components of ``root`` (a real path) the nearest ancestor holding ``.git``
    has, or None when ``root`` itself holds one (or no ancestor does)."""
    comps = [c for c in root.split("/") if c]
    for keep in range(len(comps), -1, -1):
        try:
            os.lstat("/" + "/".join([*comps[:keep], ".git"]))
        except OSError:
            continue
        return keep if keep < len(comps) else None
    return None


def derived(made: dict[str, tuple[object, T]], entry: Entry, make: Callable[[Entry], T]) -> T:
    """``make(entry)``, or what it made for the same path before while the entry's signature
    is still the same object (a new stat always makes a new one; None vouches for nothing).
    ``made`` lives in a walk's memo (``keep_memo``), so a replayed walk's results are reused."""
    kept = made.get(entry.rel)
    if kept is None or kept[0] is not entry.sig or entry.sig is None:
        kept = made[entry.rel] = (entry.sig, make(entry))
    return kept[1]


def layered_decision(layers: Sequence[Layer], path: str, name: str,
                     is_dir: bool) -> bool | None:
    """What the layers decide for ``path`` (base name ``name``): True ignored, False
    re-included, None no rule. The highest ``RANKS`` kind with a rule for it decides, and
    within a kind the innermost file (ripgrep's precedence: a root ``.ignore``'s ``*.log``
    beats a deeper ``.gitignore``'s ``!keep.log``)."""
    found: bool | None = None
    found_rank = -1
    for prefix, rules in reversed(layers):  # innermost first
        rank = rules.rank
        if rank <= found_rank or (prefix and not path.startswith(prefix)):
            continue
        decided = rules.decide(path[len(prefix):], name, is_dir)
        if decided is not None:
            if rank == TOP_RANK:
                return decided
            found, found_rank = decided, rank
    return found


def ignored_by(layers: Sequence[Layer], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` (relative to the root) is ignored: the innermost deciding rule wins."""
    return layered_decision(layers, rel, rel[rel.rfind("/") + 1:], is_dir) is True


def walk_notes(loops: int, depth_limited: bool) -> list[str]:
    """The warnings for directory loops not entered again and for the depth cap."""
    notes = []
    if loops:
        notes.append(f"{loops} directory loop(s) (bind mounts) were not entered again")
    if depth_limited:
        notes.append(f"directories deeper than {MAX_DEPTH} levels were not entered: their "
                     "contents are not in the result; list or search from a deeper path")
    return notes

NONE_COUNTED: Counters = (0, 0, 0, 0, 0, False, False)
# At most this share of the session cache for one recording: a 200k-entry walk's (~40 MB) in a
# 64 MiB cache evicted the searches' results, then itself, and repeats got slower than cold ones
RECORDING_SHARE = 0.25


def walk_order(rel: str) -> str:
    """A path's place in walk order (siblings by name, a directory's contents right after
    it): ``"\0"`` sorts before every character of a name."""
    return rel.replace("/", "\0")


def walked(own: Counters, before: Counters, after: Counters) -> Counters:
    """``own`` (what a walk counted so far) plus what one of its steps counted, from the
    counters ``before`` and ``after`` it."""
    return (own[0] + after[0] - before[0], own[1] + after[1] - before[1],
            own[2] + after[2] - before[2], own[3] + after[3] - before[3],
            own[4] + after[4] - before[4], after[5], after[6])


class Walk:
    """Iterate the entries below a directory of the workspace; see the module docstring."""

    def __init__(self, workspace: Workspace, path: str = ".", *, max_depth: int = 1,
                 max_entries: int = 100_000, include_hidden: bool = False,
                 include_ignored: bool = False,
                 exclude_dirs: Sequence[str] | None = None, with_stat: bool = True,
                 cache: SearchCache | None = None) -> None:
        self.workspace = workspace
        self.cache = cache if cache is not None and cache.capacity > 0 else None
        self.with_stat = with_stat  # False: entries carry no size/mtime (``stat`` gets them)
        self.max_depth = min(max_depth, MAX_DEPTH)
        self.depth_capped = max_depth > MAX_DEPTH
        self.max_entries = max_entries
        self.include_hidden = include_hidden
        self.include_ignored = include_ignored
        self.exclude = frozenset(DEFAULT_EXCLUDED_DIRS if exclude_dirs is None else exclude_dirs)
        self.skipped = Skipped()
        self.truncated = False
        self.depth_limited = False  # a directory at MAX_DEPTH was not entered (see notes())
        self.loops = 0
        self.start_ignored = False  # the start (or a directory above it) is ignored
        self._parent_fd = -1  # the directory holding the entry just produced (see __iter__)
        self._monitor: ChangeMonitor | None = None
        self.replayed = False  # answered from a recording of an earlier walk (watch.py)
        self._replaying: Recording[Entry] | None = None  # the recording being replayed
        self._replay_frame = -1  # the replayed entry's directory (its Recording.frames index)
        self._replay_dir = (-1, -1)  # (frame index, fd) of the directory opened for it
        self._visited: set[tuple[int, int]] = set()
        with workspace.resolve(path) as res:
            if res.st is None:
                raise ToolError("not_found", f"{path}: no such file or directory",
                                hint="check the path with list_directory",
                                details={"path": path})
            if not stat.S_ISDIR(res.st.st_mode):
                raise ToolError("not_a_directory", f"{path}: is a {entry_kind(res.st.st_mode)}, "
                                "not a directory", hint="use get_file_info or read_file on "
                                "files", details={"path": path})
            self.rel = res.rel
            try:
                fd = os.open(res.name, DIR_FLAGS, dir_fd=res.dir_fd) if res.name is not None \
                    else os.dup(res.dir_fd)
            except OSError as exc:
                from zbtools.core.files.workspace import os_error

                raise os_error(exc, path) from exc
        self._start_fd = fd
        self._start_layers: tuple[Layer, ...] = ()
        self._start_prints: list[Print] = []
        self._switches = (include_hidden, include_ignored, self.exclude)
        if self.cache is not None:
            from zbtools.core.search.cache import now_ns

            self._now = now_ns()
            self._monitor = self.cache.change_monitor()
        if not include_ignored:
            try:
                self._start_layers = self._ancestor_layers()
            except BaseException:
                os.close(fd)
                raise
        # an ignore file above the start, too new to trust its stat signature: no recording
        # (the ones inside the walk are watched)
        self._start_unsteady = self._unsteady

    @property
    def inherits_rules(self) -> bool:
        """Whether ignore rules from above the start apply to it (``.git/info/exclude``, an
        ancestor's ignore files)."""
        return bool(self._start_layers)

    # -- ignore files ---------------------------------------------------------------------

    def _ancestor_layers(self) -> tuple[Layer, ...]:
        """The ignore rules that apply at the start: info/exclude and every ancestor's files."""
        # the root the walk is in; base: "" in the primary root, the root's path in another
        root_fd, base, parts = self.workspace.root_of(self.rel)
        layers: list[Layer] = []
        outer = self._outer_rules(base or self.workspace.root)
        if outer is not None:
            layers.extend((base.rstrip("/") + "/" if base else "", one) for one in outer)
        exclude, st = self._read_path(root_fd, [".git", "info", "exclude"])
        self._start_prints.append(self._print(".git/info/exclude", st))
        if exclude:
            layers.append((base.rstrip("/") + "/" if base else "",
                           _compile(exclude, RANKS[".git/info/exclude"])))
        fd = os.dup(root_fd)
        try:
            for i in range(len(parts)):
                layers.extend(self._own_layers(fd, display_path(base, parts[:i]),
                                               prints=self._start_prints))
                nxt = os.open(parts[i], DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
        except OSError:
            pass  # changed under us: the walk itself will meet the same problem
        finally:
            os.close(fd)
        if parts and any(ignored_by(layers, display_path(base, parts[:i]), True)
                         for i in range(1, len(parts) + 1)):
            self.start_ignored = True
            return ()  # named explicitly: list it, with only the rules found inside it
        return tuple(layers)

    def _outer_rules(self, root: str) -> list[OuterRules] | None:
        """The ignore files of the directories above ``root`` up to the enclosing repository's
        root (its ``.git/info/exclude``, then each directory's ``.gitignore``, ``.ignore`` and
        ``.rgignore``), outermost first, as rg and fd read them; None when there are none, when
        ``root`` is not inside a repository or is one, or when they ignore ``root`` itself (a
        workspace opened in an ignored directory is listed, as a start named explicitly is)."""
        top = repository_above(root)
        if top is None:
            return None
        comps = [c for c in root.split("/") if c]
        raw: list[tuple[str, IgnoreRules]] = []
        for depth in range(top, len(comps)):
            where = "/" + "/".join(comps[:depth])
            try:
                fd = os.open(where, DIR_FLAGS)
            except OSError:
                return None
            try:
                prefix = "/".join(comps[top:depth])
                if depth == top:
                    text, st = self._read_path(fd, [".git", "info", "exclude"])
                    self._start_prints.append(self._print(where + "/.git/info/exclude", st))
                    if text:
                        raw.append(("", _compile(text, RANKS[".git/info/exclude"])))
                for name in IGNORE_FILES:
                    text, st = _read_small(fd, name)
                    self._start_prints.append(self._print(f"{where}/{name}", st))
                    if text:
                        raw.append((prefix + "/" if prefix else "", _compile(text, RANKS[name])))
            finally:
                os.close(fd)
        if not raw or any(ignored_by(raw, "/".join(comps[top:k]), True)
                          for k in range(top + 1, len(comps) + 1)):
            return None
        above = "/".join(comps[top:]) + "/"
        return [OuterRules(prefix, rules, above) for prefix, rules in raw]

    @staticmethod
    def _read_path(root_fd: int, parts: list[str]) -> tuple[str | None, os.stat_result | None]:
        fd = os.dup(root_fd)
        try:
            for comp in parts[:-1]:
                nxt = os.open(comp, DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return _read_small(fd, parts[-1])
        except OSError:
            return None, None
        finally:
            os.close(fd)

    def _print(self, where: str, st: os.stat_result | None) -> Print:
        """An ignore file's part of a cache check; notes a file too new to cache by."""
        if self.cache is None:
            return (where, None)
        from zbtools.core.search.cache import settled, signature

        if st is not None and not settled(st, self._now):
            self._unsteady = True
        return (where, signature(st) if st is not None else None)

    _unsteady = False  # an ignore file read by this walk is too new to cache a listing by
    _moved = False  # a directory moved during the walk: not worth recording
    # an ignore file with other links: written through one elsewhere, it raises no event in
    # the directories watched, so a walk it decided is never recorded
    _rules_linked = False

    def _own_layers(self, fd: int, rel: str, names: frozenset[str] | None = None,
                    prints: list[Print] | None = None) -> list[Layer]:
        prefix = "" if rel in ("", ".") else rel + "/"
        out: list[Layer] = []
        for name in IGNORE_FILES:
            if names is not None and name not in names:
                continue
            text, st = _read_small(fd, name)
            if st is not None and st.st_nlink > 1:
                self._rules_linked = True
            if prints is not None and (names is not None or st is not None):
                prints.append(self._print(prefix + name, st))
            rules = _compile(text, RANKS[name]) if text else None
            if rules:
                out.append((prefix, rules))
        return out

    # -- the walk -------------------------------------------------------------------------

    def _scan(self, frame: _Frame) -> None:
        """List ``frame``'s directory: classify, count and sort its children."""
        cache = self.cache
        check = self._cache_check(frame) if cache is not None else None
        if cache is not None and self._scan_cached(cache, frame, check):
            return
        try:
            with os.scandir(frame.fd) as it:
                raw = list(it)
        except OSError:
            self.skipped.unreadable += 1
            return
        own: list[Print] = []
        layers_before = frame.layers
        if not self.include_ignored:
            names = frozenset(e.name for e in raw if e.name in IGNORE_FILES)
            if names:
                frame.layers = (*frame.layers, *self._own_layers(
                    frame.fd, frame.rel, names, own if cache is not None else None))
                frame.prints = (*frame.prints, *own)
        counted = self._counts() if cache is not None else None
        prefix = "" if frame.rel == "." else frame.rel + "/"
        depth = frame.depth + 1
        kept: list[tuple[Entry, bool]] = []
        exclude = self.exclude
        include_hidden = self.include_hidden
        layers = frame.layers
        with_stat = self.with_stat
        skipped = self.skipped
        raw.sort(key=_name_of)
        for item in raw:
            name = item.name
            try:
                is_dir = item.is_dir(follow_symlinks=False)
            except OSError:
                skipped.unreadable += 1
                continue
            if is_dir and name in exclude:
                skipped.excluded_dirs += 1
                continue
            if name[0] == ".":
                # a hidden name an ignore file re-includes (``!.github/``) is walked, as in rg
                if not include_hidden and not (layers and layered_decision(
                        layers, prefix + name, name, is_dir) is False):
                    skipped.hidden += 1
                    continue
                if ".zb" in name and is_temp_name(name):
                    continue  # our own temp files: never listed or searched
            rel = prefix + name
            if layers and ignored_by(layers, rel, is_dir):
                skipped.ignored += 1
                continue
            size: int | None = None
            mtime = 0.0
            sig = None
            try:
                if with_stat:
                    st = item.stat(follow_symlinks=False)
                    kind = entry_kind(st.st_mode)
                    size = None if kind == "directory" else st.st_size
                    mtime = st.st_mtime
                    # a directory's is vouched for only once entered (its own watch)
                    sig = watched_signature(st) if frame.wd is not None and not is_dir else None
                elif is_dir:
                    kind = "directory"
                elif item.is_file(follow_symlinks=False):
                    kind = "file"
                elif item.is_symlink():
                    kind = "symlink"
                else:
                    kind = entry_kind(item.stat(follow_symlinks=False).st_mode)
            except OSError:
                skipped.unreadable += 1
                continue
            target = None
            if kind == "symlink":
                try:
                    target = os.readlink(name, dir_fd=frame.fd)
                except OSError:
                    target = None
            entry = Entry(rel, name, kind, size, depth, target, mtime)
            if with_stat:
                entry.sig = sig
            kept.append((entry, is_dir))
        frame.children = kept
        if cache is not None and counted is not None:
            self._store(cache, frame, check, layers_before, own, counted)

    # -- the warm cache (batch and mcp sessions) ------------------------------------------

    def _counts(self) -> tuple[int, int, int, int]:
        sk = self.skipped
        return (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored)

    def _cache_key(self, frame: _Frame) -> tuple[Any, ...]:
        return ("dir", frame.rel, frame.ident, self._switches)

    def _cache_check(self, frame: _Frame) -> tuple[Any, ...]:
        """What a listing of ``frame`` depends on besides its own ignore files: the directory's
        timestamps and every ignore file above it (read at the start, or inherited)."""
        st = frame.st
        return (st.st_mtime_ns, st.st_ctime_ns, tuple(self._start_prints), frame.prints)

    def _store(self, cache: SearchCache, frame: _Frame, check: Any,
               layers_before: tuple[Layer, ...], own: list[Print],
               counted: tuple[int, int, int, int]) -> None:
        from zbtools.core.search.cache import settled

        if self._unsteady or not settled(frame.st, self._now):
            return  # just changed: listed again next time, until it has settled
        after = self._counts()
        deltas = tuple(b - a for a, b in zip(counted, after, strict=True))
        children = tuple((e.name, e.kind, e.target, is_dir) for e, is_dir in frame.children)
        value = (children, deltas, tuple(own), frame.layers[len(layers_before):])
        cost = sum(len(c[0]) * 2 + 120 for c in children) + 400 * len(own)
        cache.put(self._cache_key(frame), check, value, cost)

    def _scan_cached(self, cache: SearchCache, frame: _Frame, check: Any) -> bool:
        """Fill ``frame`` from the cache when its listing is there and still valid."""
        value = cache.get(self._cache_key(frame), check)
        if value is None:
            return False
        children, deltas, own, own_layers = value
        from zbtools.core.search.cache import signature

        for where, sig in own:  # the directory's own ignore files, unchanged?
            try:
                st = os.stat(where.rpartition("/")[2], dir_fd=frame.fd, follow_symlinks=False)
            except OSError:
                return False
            if signature(st) != sig:
                return False
            if st.st_nlink > 1:
                self._rules_linked = True
        frame.layers = (*frame.layers, *own_layers)
        frame.prints = (*frame.prints, *own)
        sk = self.skipped
        sk.unreadable += deltas[0]
        sk.excluded_dirs += deltas[1]
        sk.hidden += deltas[2]
        sk.ignored += deltas[3]
        prefix = "" if frame.rel == "." else frame.rel + "/"
        depth = frame.depth + 1
        kept: list[tuple[Entry, bool]] = []
        with_stat = self.with_stat
        watched = frame.wd is not None
        for name, kind, target, is_dir in children:
            size: int | None = None
            mtime = 0.0
            sig = None
            if with_stat:
                try:
                    st = os.stat(name, dir_fd=frame.fd, follow_symlinks=False)
                except OSError:
                    sk.unreadable += 1
                    continue
                size = None if kind == "directory" else st.st_size
                mtime = st.st_mtime
                sig = watched_signature(st) if watched and not is_dir else None
            entry = Entry(prefix + name, name, kind, size, depth, target, mtime)
            entry.sig = sig
            kept.append((entry, is_dir))
        frame.children = kept
        return True

    def _open_child(self, parent: _Frame, entry: Entry) -> _Frame | None:
        try:
            fd = os.open(entry.name, DIR_FLAGS, dir_fd=parent.fd)
        except OSError:
            self.skipped.unreadable += 1
            return None
        try:
            frame = _Frame(fd, entry.rel, entry.depth, parent.layers, parent.prints,
                           self._monitor)
        except OSError:
            os.close(fd)
            self.skipped.unreadable += 1
            return None
        if frame.ident in self._visited:
            os.close(fd)
            self.loops += 1
            return None
        self._visited.add(frame.ident)
        return frame

    @property
    def watched(self) -> bool:
        """Whether a change monitor watches this walk's directories (stat signatures taken
        during it stay valid until an event says otherwise)."""
        return self._monitor is not None

    @property
    def parent_fd(self) -> int:
        """The directory holding the entry just produced (valid until the next step)."""
        if self._replaying is None:
            return self._parent_fd
        return self._replay_dir_fd()

    def __iter__(self) -> Iterator[Entry]:
        recording = self._prepare()
        fd, self._start_fd = self._start_fd, -1
        if fd < 0:
            raise RuntimeError("a Walk is iterated once")
        if self._monitor is None:
            yield from self._walk(fd, None)
            return
        if recording is None:
            yield from self._recorded(fd) if self._recordable else self._walk(fd, None)
            return
        self._replaying = recording
        self.replayed = True
        self._start_fd = fd  # the replay opens directories below it
        replayed = False
        try:
            yield from self._replay(recording)
            replayed = True
        finally:
            self._replaying = None
            self._close_replay_dir()
            fd, self._start_fd = self._start_fd, -1
            if recording.complete or not replayed:
                os.close(fd)
        if not recording.complete:  # a prefix: the rest is walked (and recorded) for real
            last = recording.steps[-1] if recording.steps else None
            self._count(last[3] if last is not None else NONE_COUNTED, NONE_COUNTED)
            # what comes after the last entry produced, in walk order (by place, not by count:
            # the tree may have changed since the replay was decided)
            after = walk_order(last[0].rel) if last is not None else None
            for entry in self._recorded(fd):
                if after is None or walk_order(entry.rel) > after:
                    after = None
                    yield entry

    def _prepare(self) -> Recording[Entry] | None:
        """The recording this walk will replay (still exact), or None; decided once, before
        anything is produced."""
        if self._prepared or self._monitor is None or self._start_fd < 0:
            return self._kept
        self._prepared = True
        assert self.cache is not None
        st = os.fstat(self._start_fd)
        # one recording serves walks with or without stat data (a replay stats what it lacks)
        # and any entry cap it did not reach
        self._key = ("walk", self.rel, st.st_dev, st.st_ino, self._switches, self.max_depth)
        self._seq = self._monitor.poll()
        recording: Recording[Entry] | None = self.cache.get(self._key,
                                                            tuple(self._start_prints))
        self._recordable = not self.cache.get(("too big", self._key), True)
        if recording is not None and not (
                recording.serves(self.max_entries) and recording.still_exact(
                    self._monitor, self.rel, self._start_fd, self._seq, IGNORE_FILES)):
            recording = None
        self._kept = recording
        return recording

    _prepared = False
    _recordable = True  # not known too big to record (a walk that was is not recorded again)
    _key: tuple[Any, ...] = ()
    _seq = 0
    _kept: Recording[Entry] | None = None  # the recording this walk replayed, or made and kept

    def _recorded(self, fd: int) -> Iterator[Entry]:
        """The walk, recorded; the recording is kept when the walk ends or its consumer stops
        (a prefix), not when it fails."""
        from zbtools.core.search.recording import Recording

        recording: Recording[Entry] = Recording(self._seq, self.max_entries)
        try:
            yield from self._walk(fd, recording)
        except GeneratorExit:
            self._keep(recording)
            raise
        self._keep(recording)

    def _keep(self, recording: Recording[Entry]) -> None:
        self._kept = None
        if recording.exact and not self._moved and not self._rules_linked and \
                self.cache is not None and not self._start_unsteady:
            cost = sum(len(step[0].rel) * 2 + 200 for step in recording.steps) + \
                100 * len(recording.frames)
            if cost > self.cache.capacity * RECORDING_SHARE:
                # it would push out the listings and results that make repeats cheap; and
                # recording it again next time would only cost
                self.cache.put(("too big", self._key), True, True, 64)
                return
            self.cache.put(self._key, tuple(self._start_prints), recording, cost)
            self._kept = recording

    # -- what a consumer derives from a walk, kept with its recording (warm sessions) ----

    def memo(self, key: Hashable) -> Any:
        """The value ``keep_memo(key, ...)`` kept on an earlier call whose walk this one
        replays (same entries, same counts; their size and mtime may have been brought up to
        date), else None. Call before iterating; use ``refresh`` on the entries it holds and
        ``restore`` on the walk state it holds."""
        recording = self._prepare()
        if recording is None or self.cache is None:
            return None
        return self.cache.get(("memo", self._key, key), recording)

    def keep_memo(self, key: Hashable, value: Any, cost: int) -> None:
        """Keep ``value`` (about ``cost`` bytes), derived from this walk's entries only, for
        later calls that replay the same recording."""
        if self._kept is not None and self.cache is not None:
            self.cache.put(("memo", self._key, key), self._kept, value, cost)

    def refresh(self, entry: Entry) -> None:
        """Bring an entry of a memo up to date (size and mtime) when they are not known
        current, opening its directory from the start without following symlinks."""
        if entry.sig is not None or self._kept is None:
            return
        recording = self._kept
        known = recording.locate(entry.rel)
        if known is None:
            return
        self._replaying, self._replay_frame = recording, known[1]
        try:
            self.stat(entry)
        finally:
            self._replaying = None

    def state(self) -> Counters:
        """The counts and flags as they are now (``skipped``, ``loops``, ``depth_limited``,
        ``truncated``)."""
        sk = self.skipped
        return (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored, self.loops,
                self.depth_limited, self.truncated)

    def restore(self, state: Counters) -> None:
        """Counts and flags as ``state`` (from ``state()`` on a walk this one replays)."""
        sk = self.skipped
        (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored, self.loops,
         self.depth_limited, self.truncated) = state

    def _count(self, before: Counters, after: Counters) -> None:
        """Move what the walk itself counted from ``before`` to ``after``. The skip counts are
        shared with the consumer (grep counts the files it could not read into ``skipped``
        too), so only the walk's difference is applied; loops and the flags are the walk's."""
        sk = self.skipped
        sk.unreadable += after[0] - before[0]
        sk.excluded_dirs += after[1] - before[1]
        sk.hidden += after[2] - before[2]
        sk.ignored += after[3] - before[3]
        self.loops, self.depth_limited, self.truncated = after[4], after[5], after[6]

    def _walk(self, fd: int, recording: Recording[Entry] | None) -> Iterator[Entry]:
        """The walk itself; with a ``recording``, what it yields and counts is recorded."""
        try:
            stack = [_Frame(fd, self.rel, 0, self._start_layers, (), self._monitor)]
        except OSError:
            os.close(fd)
            self.skipped.unreadable += 1
            if recording is not None:
                recording.exact = False
            return
        self._visited.add(stack[0].ident)
        produced = 0
        steps = recording.steps if recording is not None else None
        # what the walk itself counted (recorded): measured around its own steps only, as the
        # consumer counts into the same ``skipped`` while it holds an entry
        own = NONE_COUNTED
        finished = False
        try:
            before = self.state()
            self._scan(stack[0])
            if recording is not None:
                own = walked(own, before, self.state())
                stack[0].index = recording.add_frame(stack[0].rel, stack[0].ident, stack[0].wd)
            while stack:
                top = stack[-1]
                if top.pos >= len(top.children):
                    before = self.state()
                    self._pop(stack)
                    if steps is not None:
                        own = walked(own, before, self.state())
                    continue
                entry, is_dir = top.children[top.pos]
                top.pos += 1
                if produced >= self.max_entries:
                    self.truncated = True
                    own = (*own[:6], True)
                    finished = True
                    return
                produced += 1
                self._parent_fd = top.fd  # valid until the next step: open entry.name with it
                if steps is not None:
                    steps.append((entry, is_dir, top.index, own))
                yield entry
                if not is_dir or entry.depth >= self.max_depth:
                    if is_dir and entry.depth >= MAX_DEPTH:
                        self.depth_limited = True
                        own = (*own[:5], True, own[6])
                    continue
                before = self.state()
                child = self._open_child(top, entry)
                if child is None:
                    if steps is not None:
                        own = walked(own, before, self.state())
                    continue
                if child.wd is not None:  # its timestamps as of its watch (watch.py)
                    entry.mtime = child.st.st_mtime
                    entry.sig = signature(child.st)
                stack.append(child)
                if len(stack) > HELD_DIRS + 1:  # the start and the newest HELD_DIRS stay open
                    old = stack[-HELD_DIRS - 2]
                    if old.fd >= 0 and len(stack) - HELD_DIRS - 2 > 0:
                        os.close(old.fd)
                        old.fd = -1
                self._scan(child)
                if recording is not None:
                    own = walked(own, before, self.state())
                    child.index = recording.add_frame(child.rel, child.ident, child.wd)
            finished = True
        finally:
            self._parent_fd = -1
            for frame in stack:
                if frame.fd >= 0:
                    os.close(frame.fd)
                    frame.fd = -1
            if recording is not None:
                recording.final = own
                recording.complete = finished

    def _replay(self, recording: Recording[Entry]) -> Iterator[Entry]:
        """Produce a still-exact recording's entries, counting as the walk did at each."""
        last = NONE_COUNTED
        with_stat = self.with_stat
        for entry, _is_dir, frame, counters in recording.steps:
            if counters is not last:
                self._count(last, counters)
                last = counters
            self._replay_frame = frame
            if with_stat and entry.sig is None:
                self.stat(entry)  # not known current (hard links): as the walk would see it
            yield entry
        if recording.complete:
            self._count(last, recording.final)

    def _replay_dir_fd(self) -> int:
        """The directory of the replayed entry, opened component by component from the start
        (``O_NOFOLLOW``) and checked to be the directory recorded; -1 if it is not."""
        index = self._replay_frame
        if self._replay_dir[0] == index:
            return self._replay_dir[1]
        self._close_replay_dir()
        assert self._replaying is not None
        from zbtools.core.search.recording import open_below

        rel, ident, _wd = self._replaying.frames[index]
        fd = open_below(self._start_fd, self.rel, rel, ident)
        self._replay_dir = (index, fd)
        return fd

    def _close_replay_dir(self) -> None:
        fd = self._replay_dir[1]
        if fd >= 0 and fd != self._start_fd:
            os.close(fd)
        self._replay_dir = (-1, -1)

    def _pop(self, stack: list[_Frame]) -> None:
        """Leave the top directory; reopen its parent through a checked ``..`` if it was closed."""
        done = stack.pop()
        if stack and stack[-1].fd < 0:
            parent = stack[-1]
            try:
                if done.fd < 0:
                    raise OSError("parent lost")
                fd = os.open("..", DIR_FLAGS, dir_fd=done.fd)
            except OSError:
                fd = -1
            else:
                try:
                    st = os.fstat(fd)
                    same = (st.st_dev, st.st_ino) == parent.ident
                except OSError:
                    same = False
                if not same:
                    os.close(fd)
                    fd = -1
            if fd < 0:  # moved under us: what remains of it is not listed
                self._moved = True
                self.skipped.unreadable += 1
                parent.children = parent.children[:parent.pos]
            parent.fd = fd
        if done.fd >= 0:
            os.close(done.fd)
            done.fd = -1

    def notes(self) -> list[str]:
        """Warnings a tool passes on after the walk: what it did not enter, and why."""
        return walk_notes(self.loops, self.depth_limited)

    def stat(self, entry: Entry) -> None:
        """Fill ``entry.size``/``mtime`` of the entry just produced (for ``with_stat=False``)."""
        if entry.sig is not None:
            return  # stat'ed while watched, and nothing changed it since
        try:
            st = os.stat(entry.name, dir_fd=self.parent_fd, follow_symlinks=False)
        except OSError:
            return
        entry.mtime = st.st_mtime
        if entry.kind != "directory":
            entry.size = st.st_size
            if self._monitor is not None:  # a directory's is vouched for only once entered
                entry.sig = watched_signature(st)

    def close(self) -> None:
        self._close_replay_dir()
        if self._start_fd >= 0:
            os.close(self._start_fd)
            self._start_fd = -1
