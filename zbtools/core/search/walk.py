"""The one directory walker every listing and search tool shares
(docs/internals/search.md#walker, docs/internals/security.md#walking).

``Walk(workspace, path, ...)`` resolves ``path`` through ``Workspace.resolve`` and iterates the
entries below it in a deterministic pre-order, each directory opened through its parent's
descriptor with ``O_NOFOLLOW``; while a consumer handles an entry, ``parent_fd`` is its
directory's descriptor, through which tools open the file. Symlinks are reported, never
followed; directories are tracked by ``(st_dev, st_ino)``; ``DEFAULT_EXCLUDED_DIRS``, hidden
entries and ignored directories (``layers``) are skipped unless asked, zbtools' own temp files
always; everything skipped is counted in ``skipped`` (docs/search.md). Depth is bounded by
``max_depth`` and ``MAX_DEPTH``, entries by ``max_entries``; an unreadable directory is counted
and the walk goes on. The start fails with ``not_found``, ``not_a_directory`` or
``outside_workspace``. In a session's ``cache`` listings are kept and walks replayed
(``walk_warm``); in a process that runs one call (``split``), a large walk that stats its
files forks a second scanner that starts from the other end (``walk_split``); given the
consumer's ``render``, ``written()`` takes whole subtrees the scanner wrote with it.

Map: ``Walk`` (the iteration, ``notes()``, ``memo``/``keep_memo``), ``HELD_DIRS``; what it
yields and counts is in ``entries``, the ignore files in ``layers``.
"""

from __future__ import annotations

import os
import stat
from stat import S_ISREG

from zbtools.contract import ToolError
from zbtools.core.errors import not_found
from zbtools.core.files.fsops import entry_kind
from zbtools.core.files.tempnames import is_temp_name
from zbtools.core.files.workspace import DIR_FLAGS
from zbtools.core.search.cache import signature, watched_signature
from zbtools.core.search.dirrules import MatcherCache
from zbtools.core.search.entries import (
    DEFAULT_EXCLUDED_DIRS,
    MAX_DEPTH,
    Entry,
    Frame,
    Skipped,
    walk_notes,
    walk_order,
)
from zbtools.core.search.layers import IGNORE_FILES, RuleFiles
from zbtools.core.search.walk_warm import NONE_COUNTED, WarmWalk, walked

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.entries import Rendered
    from zbtools.core.search.layers import Layer, Print
    from zbtools.core.search.recording import Recording
    from zbtools.core.search.walk_split import Ahead, Render
    from zbtools.core.search.watch import ChangeMonitor

HELD_DIRS = 32


_IGNORE_SET = frozenset(IGNORE_FILES)


class Walk(WarmWalk):
    """Iterate the entries below a directory of the workspace; see the module docstring."""

    def __init__(self, workspace: Workspace, path: str = ".", *, max_depth: int = 1,
                 max_entries: int = 100_000, include_hidden: bool = False,
                 include_ignored: bool = False,
                 exclude_dirs: Sequence[str] | None = None, with_stat: bool = True,
                 cache: SearchCache | None = None, split: bool = False,
                 render: Render | None = None) -> None:
        self.workspace = workspace
        self.cache = cache if cache is not None and cache.capacity > 0 else None
        # a large walk of a one-call process may fork a second scanner (walk_split.py)
        self._split = split and self.cache is None
        self._ahead: Ahead | None = None
        # the consumer's writer of entries: the second scanner gives whole subtrees so written
        # (``Rendered``), for a consumer that only writes them (walk_split.py)
        self.render = render if self._split else None
        self.produced = 0  # entries given, a Rendered item's counted (once the walk ends)
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
                raise not_found(path)
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
        self._switches = (include_hidden, include_ignored, self.exclude)
        now = None
        if self.cache is not None:
            from zbtools.core.search.cache import now_ns

            self._now = now = now_ns()
            self._monitor = self.cache.change_monitor()
        self.rules = RuleFiles(workspace, now)
        self._matchers = MatcherCache()
        if not include_ignored:
            try:
                self._start_layers = self.rules.ancestor_layers(self.rel)
            except BaseException:
                os.close(fd)
                raise
            self.start_ignored = self.rules.start_ignored
        # an ignore file above the start, too new to trust its stat signature: no recording
        # (the ones inside the walk are watched)
        self._start_unsteady = self.rules.unsteady

    @property
    def inherits_rules(self) -> bool:
        """Whether ignore rules from above the start apply to it (``.git/info/exclude``, an
        ancestor's ignore files)."""
        return bool(self._start_layers)

    _moved = False  # a directory moved during the walk: not worth recording

    # -- the walk -------------------------------------------------------------------------

    def _scan(self, frame: Frame) -> None:
        """List ``frame``'s directory: classify, count and sort its children."""
        cache = self.cache
        check = self._cache_check(frame) if cache is not None else None
        if cache is not None and self._scan_cached(cache, frame, check):
            return
        if self._ahead is not None and self._ahead.fill(self, frame):
            return
        try:
            with os.scandir(frame.fd) as it:
                raw = {e.name: e for e in it}
        except OSError:
            self.skipped.unreadable += 1
            return
        own: list[Print] = []
        layers_before = frame.layers
        if not self.include_ignored:
            names = _IGNORE_SET.intersection(raw)
            if names:
                self.adopt_rules(frame, names, own if cache is not None else None)
        counted = self._counts() if cache is not None else None
        prefix = "" if frame.rel == "." else frame.rel + "/"
        depth = frame.depth + 1
        kept: list[tuple[Entry, bool]] = []
        exclude = self.exclude
        include_hidden = self.include_hidden
        # what the ignore rules decide for a file, for a directory (None: no rule can match)
        files_rule, dirs_rule = self._matchers.matchers_for(frame.layers, frame.rel)
        with_stat = self.with_stat
        skipped = self.skipped
        for name in sorted(raw):  # the names alone: a sort of str, faster than by a key
            item = raw[name]
            try:
                is_dir = item.is_dir(follow_symlinks=False)
            except OSError:
                skipped.unreadable += 1
                continue
            if is_dir:
                if name in exclude:
                    skipped.excluded_dirs += 1
                    continue
                rule = dirs_rule
            else:
                rule = files_rule
            if name[0] == ".":
                # a hidden name an ignore file re-includes (``!.github/``) is walked, as in rg
                if not include_hidden and not (rule is not None and rule(name) is False):
                    skipped.hidden += 1
                    continue
                if ".zb" in name and is_temp_name(name):
                    continue  # our own temp files: never listed or searched
            if rule is not None and rule(name) is True:
                skipped.ignored += 1
                continue
            rel = prefix + name
            size: int | None = None
            mtime = 0.0
            sig = None
            try:
                if is_dir:
                    # its size is none and its time is not shown: no stat (a directory's stat
                    # is vouched for only once entered, by its own watch)
                    kind = "directory"
                elif with_stat:
                    st = item.stat(follow_symlinks=False)
                    kind = "file" if S_ISREG(st.st_mode) else entry_kind(st.st_mode)
                    size = st.st_size
                    mtime = st.st_mtime
                    sig = watched_signature(st) if frame.wd is not None else None
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

    def adopt_rules(self, frame: Frame, names: frozenset[str],
                    own: list[Print] | None = None) -> None:
        """The rules of the ignore files ``names`` that ``frame``'s directory holds, for it
        and below (``own``: their prints, for a session's cache)."""
        frame.ignore_names = names
        frame.layers = (*frame.layers, *self.rules.own_layers(frame.fd, frame.rel, names, own))
        if own:
            frame.prints = (*frame.prints, *own)

    def _open_child(self, parent: Frame, entry: Entry) -> Frame | None:
        try:
            fd = os.open(entry.name, DIR_FLAGS, dir_fd=parent.fd)
        except OSError:
            self.skipped.unreadable += 1
            return None
        try:
            frame = Frame(fd, entry.rel, entry.depth, parent.layers, parent.prints,
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

    def written(self) -> Iterator[Entry | Rendered]:
        """The walk's entries, but for the subtrees the second scanner wrote whole with
        ``render`` (a one-shot walk given ``render``): a ``Rendered`` item stands for the
        entries of each, where iterating the walk would give them one by one."""
        if self.render is None:
            yield from self
            return
        fd, self._start_fd = self._start_fd, -1
        if fd < 0:
            raise RuntimeError("a Walk is iterated once")
        yield from self._walk(fd, None, whole=True)

    def _walk(self, fd: int, recording: Recording[Entry] | None,
              whole: bool = False) -> Iterator[Any]:
        """The walk itself; with a ``recording``, what it yields and counts is recorded. It
        yields entries, and ``Rendered`` items only where ``whole`` (``written``)."""
        try:
            stack = [Frame(fd, self.rel, 0, self._start_layers, (), self._monitor)]
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
            max_entries = self.max_entries
            max_depth = self.max_depth
            split_left = 0
            # without a stat per file a scan costs about what taking one from the other
            # process does: no gain (walk_split.py)
            if self._split and recording is None and self.with_stat:
                from zbtools.core.search.walk_split import SPLIT_AFTER

                split_left = SPLIT_AFTER
            while stack:
                top = stack[-1]
                if top.pos >= len(top.children):
                    if steps is None:
                        self._pop(stack)
                        continue
                    before = self.state()
                    self._pop(stack)
                    own = walked(own, before, self.state())
                    continue
                entry, is_dir = top.children[top.pos]
                top.pos += 1
                if produced >= max_entries:
                    self.truncated = True
                    own = (*own[:6], True)
                    finished = True
                    return
                produced += 1
                self._parent_fd = top.fd  # valid until the next step: open entry.name with it
                if steps is not None:
                    steps.append((entry, is_dir, top.index, own))
                yield entry
                if not is_dir or entry.depth >= max_depth:
                    if is_dir and entry.depth >= MAX_DEPTH:
                        self.depth_limited = True
                        own = (*own[:5], True, own[6])
                    continue
                if whole and self._ahead is not None:
                    below = self._ahead.subtree(self, entry.rel, max_entries - produced)
                    if below is not None:  # its contents, written by the second scanner
                        if below.count:
                            produced += below.count
                            yield below
                        continue
                before = self.state() if steps is not None else NONE_COUNTED
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
                if split_left:
                    split_left -= 1
                    if not split_left:
                        self._fork_ahead(stack[0], max_entries - produced)
            finished = True
        finally:
            self.produced = produced
            if self._ahead is not None:
                self._ahead.stop()
                self._ahead = None
            self._parent_fd = -1
            for frame in stack:
                if frame.fd >= 0:
                    os.close(frame.fd)
                    frame.fd = -1
            if recording is not None:
                recording.final = own
                recording.complete = finished

    def _fork_ahead(self, top: Frame, left: int) -> None:
        """Start the second scanner (walk_split.py) below the start frame ``top``, where this
        process may fork and the walk may still give ``left`` entries, enough for it."""
        from zbtools.core.search.walk_split import SPLIT_LEFT, Ahead, may_split

        if left >= SPLIT_LEFT and top.fd >= 0 and may_split():
            self._ahead = Ahead.start(self, top)

    def _pop(self, stack: list[Frame]) -> None:
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

    def close(self) -> None:
        self._close_replay_dir()
        if self._start_fd >= 0:
            os.close(self._start_fd)
            self._start_fd = -1
