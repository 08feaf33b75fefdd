"""grep_search's ``native`` engine: one ripgrep process walks the tree and searches it.

Here ripgrep's own walker picks the files, run with flags that make its rules the python walk's,
and its ``--debug`` log of every entry it leaves out, placed in walk order, gives the
``skipped`` counts; files are replayed through ``outcome.record``, so limits, truncation and
totals are the python engine's (docs/internals/search.md#native-engine). The engine declines
(``NativeEngine.search`` returns None and the next engine answers) wherever the two walkers
could disagree. Every file it reports is checked from the workspace root with ``O_NOFOLLOW``,
but ripgrep opens files by path: where untrusted processes write the workspace concurrently,
use ``engine: python`` (or ``rg``). Which patterns run here is ``native_plan``'s; reading the log
is ``native_log``'s.

Map: ``NativeEngine`` and ``search_native`` (the search; ``walks_alike``: whether it may),
``NativeSearch`` (its arguments, processes, containment checks and replay), ``Spawned``/``Run``
(one ``rg`` process), ``start_here``/``Child`` (started without ``subprocess``), ``LOG_LIMIT``,
``nested_repository``, ``glob_escape``.
"""

from __future__ import annotations

# signal's numbers without its enums (a cold call's import)
import _signal  # type: ignore[import-not-found]
import os
import stat
import time

from zbtools.core.call.collector import Paused
from zbtools.core.search.engine import BINARY_PROBE, FileStatus, Hit, SearchTimeout
from zbtools.core.search.entries import walk_order
from zbtools.core.search.native_log import Declined, Events, LogReader
from zbtools.core.search.outcome import Outcome, record
from zbtools.core.search.ripgrep import Rows, plain_hits, rows_to_hits

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    import subprocess

    from zbtools.core.search.native_plan import Plan
    from zbtools.core.search.request import SearchJob

ENGINE = "native"
BOM_PROBE = "\\x{FEFF}"
STATS_SEARCHED = rb"(?m)^(\d+) files searched$"  # (compiled once ripgrep runs: ``re``)
LOG_LIMIT = 256 * 1024  # bytes of ripgrep's --debug log, about 900 entries left out
LOG_PIPE_BYTES = 1 << 20  # asked for the log pipe (the system's cap may be lower)
BODY_ROW = rb"(?m)^(\d+)([:-])(.*)$"  # a matching line (:) or a context line (-)


class Run:
    """What one ``rg`` run said: its output, and its log sorted into events."""

    def __init__(self, out: bytes, err: bytes, code: int) -> None:
        self.out = out
        self.err = err
        self.code = code


class Spawned:
    """A running ``rg``: its output goes to an anonymous memory file, its log to a pipe that
    ``drain`` empties (``log`` keeps what was read). The log is hundreds of small writes (one
    per entry left out), each far cheaper for ripgrep into a pipe than into a memory file
    (benchmarks/README.md#figures-behind-the-code). The pipe is made as large as allowed and
    drained continually by ``wait``, so ripgrep never waits on it."""

    def __init__(self, proc: subprocess.Popen[bytes] | Child, out: int, err: int) -> None:
        self.proc = proc
        self.out = out
        self.err = err  # the log pipe's read end (non-blocking)
        self.log: list[bytes] = []
        self.log_bytes = 0

    def drain(self) -> None:
        """Read what the log pipe holds now (all of it once ripgrep has exited)."""
        while True:
            try:
                chunk = os.read(self.err, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                return
            self.log.append(chunk)
            self.log_bytes += len(chunk)

    def read_log(self) -> bytes:
        self.drain()
        return b"".join(self.log)

    @staticmethod
    def read(fd: int) -> bytes:
        size = os.fstat(fd).st_size
        chunks = []
        offset = 0
        while offset < size:
            chunk = os.pread(fd, size - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.out, self.err):
            if fd >= 0:
                os.close(fd)
        self.out = self.err = -1


LOOK_EVERY = 0.002  # seconds between two looks at a running search (its log, its output)


class ExitSignal:
    """A child's pidfd (Linux 5.3 and later): ``wait`` returns at the child's end, or after
    the time given."""

    def __init__(self, fd: int) -> None:
        import select

        self.fd = fd
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def wait(self, seconds: float) -> None:
        self.poller.poll(max(1, int(seconds * 1000)))

    def close(self) -> None:
        os.close(self.fd)


def exit_signal(pid: int) -> ExitSignal | None:
    """The ``ExitSignal`` of the child ``pid``; None where there are no pidfds (the waiting
    then sleeps between looks)."""
    try:
        return ExitSignal(os.pidfd_open(pid, 0))
    except (AttributeError, OSError):
        return None


class Child:
    """A process started by ``start_here``: what the engine uses of ``subprocess.Popen``
    (``poll``, ``kill``, ``wait``; ``returncode`` negative for a signal), without its import
    or its cost."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def _reaped(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): as Popen says
                self.returncode = 0
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._reaped(os.WNOHANG)

    def wait(self) -> int:
        code = self._reaped(0)
        assert code is not None
        return code

    def kill(self) -> None:
        if self.returncode is None:  # never a pid that was reaped (and may be reused)
            try:
                os.kill(self.pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass


def start_here(args: list[str], root_fd: int, out: int, err: int) -> Child | None:
    """``args`` started with ``os.posix_spawn`` in this process's directory, its standard
    input ``/dev/null``, output ``out`` and errors ``err``, with what ``subprocess.Popen``
    would give it (no inherited descriptor but these three, SIGPIPE and SIGXFSZ at their
    defaults); None where that is not the workspace root (3.11's ``posix_spawn`` cannot change
    directory) or the descriptors could not be listed: ``Popen`` then starts it. A ``Popen``
    costs several milliseconds of a cold call more (docs/internals/search.md#native-spawn).
    """
    if out <= 2 or err <= 2 or not hasattr(os, "posix_spawn"):
        return None  # (dup2 onto itself would leave close-on-exec set)
    try:
        here = os.stat(".")
        root = os.fstat(root_fd)
        if (here.st_dev, here.st_ino) != (root.st_dev, root.st_ino):
            return None
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    inherited = []
    for name in names:
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                inherited.append(fd)
        except OSError:
            pass  # the listing's own descriptor, closed since
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if null <= 2:
            return None
        actions: list[tuple[int, ...]] = [
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, err, 2), *((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited)]
        spawn = os.posix_spawn if "/" in args[0] else os.posix_spawnp
        # SIGPIPE (ignored by python) and SIGXFSZ back to their defaults, as Popen's
        # restore_signals does (_signal: the numbers, without signal's enums)
        pid = spawn(args[0], args, os.environ, file_actions=actions,
                    setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ))
    finally:
        os.close(null)
    return Child(pid)


class NativeSearch:
    """One directory search on the native engine, below ``start`` (root-relative); see the
    module docstring."""

    def __init__(self, job: SearchJob, binary: str, start: str, how: Plan) -> None:
        from zbtools.core.search.entries import DEFAULT_EXCLUDED_DIRS

        request = job.request
        self.workspace = job.workspace
        self.binary = binary
        self.request = request
        self.searcher = job.searcher
        self.start = start
        self.prefix = "" if start == "." else start + "/"
        self.path_filter = job.path_filter
        self.limit = request.limit
        self.per_file = request.per_file
        self.include_hidden = request.include_hidden
        self.include_ignored = request.include_ignored
        self.exclude = frozenset(DEFAULT_EXCLUDED_DIRS if request.exclude_dirs is None
                                 else request.exclude_dirs)
        self.log = LogReader(job.workspace.root, start, include_hidden=self.include_hidden,
                             exclude=self.exclude)
        self.anchored = how.anchored
        self.literal = how.literal
        self.stopped = ""  # the walk order of the file a limit stopped the replay at
        self.body_row: re.Pattern[bytes] | None = None  # BODY_ROW compiled (``prepare``)
        self.rg_pattern = how.pattern if how.pattern is not None else request.pattern
        # content rows are needed to decide each line, in count modes too
        self.count_rows = self.per_file and how.literal is None
        self.dirs: dict[str, int] = {}
        self.bodies: dict[str, bytes] = {}  # a content run's output, by file

    # -- running ripgrep -------------------------------------------------------------------

    def walk_flags(self) -> list[str]:
        # no depth limit: a path below the python walk's is declined where it shows
        # (LogReader.walked)
        flags = ["--no-config", "--no-require-git", "--no-ignore-global"]
        if self.searcher.max_file_bytes is not None:  # a cap only when one was asked for
            flags += ["--max-filesize", str(self.searcher.max_file_bytes)]
        if self.start == ".":
            flags.append("--no-ignore-parent")  # above the workspace: never read
        if self.include_hidden:
            flags += ["--hidden", "--glob", "!.*.zb*"]  # our temp names: see is_temp_name
        if self.include_ignored:
            flags.append("--no-ignore")
        for name in sorted(self.exclude):
            flags += ["--glob", "!" + glob_escape(name) + "/"]
        return flags

    def search_args(self) -> list[str]:
        args = [self.binary, "--debug", *self.walk_flags(), "--no-mmap", "--encoding", "none",
                "--color", "never", "--no-heading", "--with-filename", "--null", "--stats"]
        if self.request.ignore_case:
            args.append("--ignore-case")
        if self.request.fixed_strings or self.literal is not None:
            args.append("--fixed-strings")
        if self.count_rows:
            args.append("--count")
        else:
            args += ["--line-number", "--heading"]
            if self.literal is None:
                args += ["--max-count", str(self.limit + 1)]
            if self.searcher.before:
                args += ["--before-context", str(self.searcher.before)]
            if self.searcher.after:
                args += ["--after-context", str(self.searcher.after)]
        args += ["--regexp", self.literal if self.literal is not None else
                 self.rg_pattern]
        if self.anchored:
            args += ["--regexp", BOM_PROBE]
        return [*args, "--", self.start]

    def list_args(self) -> list[str]:
        return [self.binary, *self.walk_flags(), "--files", "--null", "--", self.start]

    def spawn(self, args: list[str]) -> Spawned:
        """Start ``rg`` with its output going to an anonymous memory file (nothing to drain
        while it runs) and its log to a pipe (``Spawned``)."""
        out = os.memfd_create("zbtools-rg-out", os.MFD_CLOEXEC)
        err, log = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            os.set_blocking(log, True)  # ripgrep's end
            try:
                import fcntl

                fcntl.fcntl(log, fcntl.F_SETPIPE_SZ, LOG_PIPE_BYTES)
            except (OSError, AttributeError):
                pass  # the default size (64 KiB) is drained in time too
            proc: subprocess.Popen[bytes] | Child | None = start_here(
                args, self.workspace.root_fd, out, log)
            if proc is None:
                import subprocess

                proc = subprocess.Popen(args, cwd=self.workspace.root,
                                        stdin=subprocess.DEVNULL, stdout=out, stderr=log)
        except BaseException:
            os.close(out)
            os.close(err)
            raise
        finally:
            os.close(log)
        return Spawned(proc, out, err)

    def wait(self, spawned: Spawned) -> Run | None:
        """The run's output, or None when the deadline passed (the process is then killed).

        This thread looks at the run every ``LOOK_EVERY`` while it waits for its end (woken at
        once by the end where a pidfd tells it). No other thread: one started while ripgrep
        runs waits for a core ripgrep holds, and a cold call pays for ``threading``. Each look
        drains the log. A log past ``LOG_LIMIT`` bytes (a tree with thousands of ignored
        files, each logged at a cost to ripgrep) stops the run, and ``Declined`` lets the
        python walk answer: it counts skipped entries for free."""
        proc = spawned.proc
        ended = exit_signal(proc.pid)
        try:
            while (code := proc.poll()) is None:
                left = self.searcher.time_left()
                if left <= 0:
                    proc.kill()
                    code = proc.wait()
                    break
                if ended is not None:
                    ended.wait(min(LOOK_EVERY, left))
                else:
                    time.sleep(min(LOOK_EVERY, left))
                spawned.drain()
                if spawned.log_bytes > LOG_LIMIT:
                    proc.kill()
                    raise Declined("ripgrep's log grew past LOG_LIMIT")
        finally:
            if ended is not None:
                ended.close()
        if code < 0:
            return None  # killed at the deadline
        return Run(spawned.read(spawned.out), spawned.read_log(), code)

    # -- containment and files searched again ----------------------------------------------

    def dir_fd(self, rel_dir: str) -> int:
        """A descriptor on ``rel_dir`` (root-relative, "" for the root), opened one component at
        a time with ``O_NOFOLLOW`` (raises Declined when one is not a directory)."""
        fd = self.dirs.get(rel_dir)
        if fd is not None:
            return fd
        from zbtools.core.files.workspace import DIR_FLAGS

        if rel_dir == "":
            fd = os.dup(self.workspace.root_fd)
        else:
            parent, _, name = rel_dir.rpartition("/")
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=self.dir_fd(parent))
            except OSError as exc:
                raise Declined("a reported file's directory changed") from exc
        self.dirs[rel_dir] = fd
        return fd

    def check_file(self, rel: str) -> tuple[int, str]:
        """(its directory's descriptor, its name) for a reported file that is still a regular
        file reached without symlinks."""
        parent, _, name = rel.rpartition("/")
        fd = self.dir_fd(parent)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            raise Declined("a reported file vanished") from exc
        if not stat.S_ISREG(st.st_mode):
            raise Declined("a reported file is not a regular file")
        return fd, name

    def search_here(self, rel: str) -> tuple[FileStatus, list[Hit]]:
        """The python engine on one file, read through checked descriptors."""
        fd, name = self.check_file(rel)
        wanted = None if self.per_file else self.limit + 1
        try:
            return self.searcher.search_file(fd, name, wanted)
        except SearchTimeout:
            return "timeout", []

    def prepare(self) -> None:
        """Compile what reading ripgrep's answer takes (``LogReader.prepare``): done while it
        runs, not before it starts."""
        import re

        self.log.prepare()
        self.body_row = re.compile(BODY_ROW)

    def walked_before(self, stop: str, too_large: list[str]) -> list[str]:
        """The files below the start in walk order, up to the one at walk order ``stop`` (where
        a limit stopped the replay), as the python walk gives them: what a listing by ripgrep
        would give (``walks_alike``), without a second ripgrep walking the whole tree while
        the search runs (on two cores it cost the search about a quarter of its time). The
        files ripgrep left out for their size are the log's (``too_large``). ``Declined``
        when the walk does not reach that file or is cut by its depth limit."""
        from zbtools.core.search.entries import MAX_DEPTH
        from zbtools.core.search.walk import Walk

        request = self.request
        walk = Walk(self.workspace, self.start, max_depth=MAX_DEPTH, max_entries=1 << 62,
                    include_hidden=request.include_hidden,
                    include_ignored=request.include_ignored,
                    exclude_dirs=request.exclude_dirs, with_stat=False)
        files: list[str] = []
        reached = False
        left_out = frozenset(too_large)
        try:
            for entry in walk:
                order = walk_order(entry.rel)
                if order > stop:
                    break
                if entry.kind == "file" and entry.rel not in left_out:
                    files.append(entry.rel)
                    reached = order == stop
            if walk.depth_limited or walk.loops:
                raise Declined("the python walk is cut where ripgrep's is not")
        finally:
            walk.close()
        if not reached:
            raise Declined("the walks disagree on the file a limit stopped at")
        return files

    def listed(self, proc: Spawned) -> list[str]:
        """The files an ``rg --files`` run listed (root-relative). It runs without ``--debug``
        (the search's log already told what was left out): any message declines."""
        run = self.wait(proc)
        if run is None or run.code not in (0, 1) or run.err:
            raise Declined("the listing failed, ran out of time or said something")
        return [self.log.walked(raw) for raw in run.out.split(b"\0") if raw]

    def close(self) -> None:
        for fd in self.dirs.values():
            os.close(fd)
        self.dirs.clear()

    # -- the search ------------------------------------------------------------------------

    def results(self, run: Run) -> dict[str, tuple[FileStatus, list[Hit]]]:
        """The counts of a count run by root-relative path; for a content run, each reported
        file's block of output is kept (``bodies``) and read only when the replay reaches it
        (``status_of``): a search cut at a limit never decodes the files past it."""
        found: dict[str, tuple[FileStatus, list[Hit]]] = {}
        if self.count_rows:
            for line in run.out.split(b"\n"):
                path, sep, count = line.partition(b"\0")
                if sep and count.isdigit():
                    rel = self.log.walked(path)
                    self.check_file(rel)
                    found[rel] = ("ok", [NO_HIT_ROW] * int(count))
            return found
        # --heading --null: "path\0" and the file's lines, a blank line between files
        for block in run.out.split(b"\n\n"):
            path, sep, body = block.partition(b"\0")
            if sep:
                rel = self.log.walked(path)
                self.bodies[rel] = body
        return found

    def status_of(self, rel: str, statuses: dict[str, tuple[FileStatus, list[Hit]]]
                  ) -> tuple[FileStatus, list[Hit]]:
        """A file's status and hits: known, read from its block of output, or searched
        without a match."""
        got = statuses.get(rel)
        if got is not None:
            return got
        body = self.bodies.get(rel)
        if body is None:
            return "ok", []
        self.check_file(rel)
        if self.anchored and b"\xef\xbb\xbf" in body:
            got = statuses[rel] = self.search_here(rel)  # U+FEFF: maybe a dropped BOM
            return got
        if self.body_row is None:
            self.prepare()
        assert self.body_row is not None
        rows_of = self.body_row.findall
        verify = self.literal is not None
        if not self.searcher.before and not self.searcher.after:  # rows in order, all matches
            hits = plain_hits(self.searcher, ((int(number), text) for number, _, text
                                              in rows_of(body)), verify)
        else:
            rows: Rows = {int(number): (sep == b":", text)
                          for number, sep, text in rows_of(body)}
            hits = rows_to_hits(self.searcher, rows, verify)
        if self.per_file:
            hits = [NO_HIT_ROW] * len(hits)
        elif len(hits) > self.limit + 1:
            hits = hits[:self.limit + 1]  # what --max-count keeps otherwise
        statuses[rel] = ("ok", hits)  # a second replay (after the listing) reads it again
        return "ok", hits

    def statuses(self, events: Events, found: dict[str, tuple[FileStatus, list[Hit]]]
                 ) -> dict[str, tuple[FileStatus, list[Hit]]]:
        """Every file whose status or hits are known: reported, too large or binary (a NUL
        byte past the python engine's probe: searched again here)."""
        statuses = dict(found)
        for rel in events.too_large:
            statuses[rel] = ("too_large", [])
        for rel, offset in events.binary.items():
            statuses[rel] = ("binary", []) if offset < BINARY_PROBE else self.search_here(rel)
        return statuses

    def replay(self, outcome: Outcome, events: Events,
               statuses: dict[str, tuple[FileStatus, list[Hit]]],
               listed: list[str] | None) -> bool:
        """Account every file in walk order; False when the limit was reached before the
        files searched without a match were known (``listed`` is None): the python engine
        counts those up to the file that reached it, or that a limit cut (``stopped``)."""
        accept = self.path_filter.accepts if self.path_filter.active else None
        prefix_len = len(self.prefix)
        names = list({*statuses, *self.bodies}) if listed is None \
            else [*listed, *events.too_large]
        files = sorted((walk_order(rel), rel) for rel in names
                       if accept is None or accept(rel[prefix_len:], rel.rpartition("/")[2]))
        skips = sorted(events.skips)
        sk = outcome.skipped
        i = 0
        reached = ""  # the walk order of the file that reached the limit
        for key, rel in files:
            while i < len(skips) and skips[i][0] < key:
                kind = skips[i][1]
                setattr(sk, kind, getattr(sk, kind) + 1)
                i += 1
            status, hits = self.status_of(rel, statuses)
            if status == "timeout":
                outcome.timed_out = True
                return True
            if not record(outcome, rel, status, hits, self.limit, self.per_file):
                self.stopped = key
                return listed is not None  # stopped: exact counts need the whole file list
            if not reached and hits and \
                    (len(outcome.files) if self.per_file else outcome.total) >= self.limit:
                reached = key
        if reached and listed is None:
            self.stopped = reached  # the files after it are searched, not counted
            return False
        for _, kind in skips[i:]:
            setattr(sk, kind, getattr(sk, kind) + 1)
        return True


NO_HIT_ROW = Hit(0, [], [], [])


def walks_alike(job: SearchJob, start: str) -> bool:
    """Whether ripgrep's walk below ``start`` can be the python walk's: not when the start
    lies in another root, is ignored by name, or has rules from above the workspace root or
    above a repository's root (ripgrep applies none of those)."""
    from zbtools.core.search.layers import repository_above
    from zbtools.core.search.walk import Walk

    request = job.request
    workspace = job.workspace
    walk = Walk(workspace, start, include_hidden=request.include_hidden,
                include_ignored=request.include_ignored, exclude_dirs=request.exclude_dirs,
                with_stat=False)
    try:
        if workspace.root_of(start)[1] or walk.start_ignored \
                or repository_above(workspace.root) is not None:
            return False
        return start == "." or not nested_repository(workspace.root, start)
    finally:
        walk.close()


def nested_repository(root: str, start: str) -> bool:
    """Whether ``start`` or a directory between it and the workspace root holds ``.git``."""
    parts = start.split("/")
    for i in range(1, len(parts) + 1):
        try:
            os.lstat(os.path.join(root, *parts[:i], ".git"))
        except OSError:
            continue
        return True
    return False


def glob_escape(name: str) -> str:
    """``name`` as a literal ripgrep glob."""
    return "".join("\\" + c if c in "\\*?[]{}!" else c for c in name)


class NativeEngine:
    """The native engine (a ``request.Engine``): ``binary`` walks and matches. It declines in a
    long-lived session (the warm python walk is faster than any process) and wherever the two
    walks could differ (see the module docstring)."""

    name = ENGINE

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def search(self, job: SearchJob) -> Outcome | None:
        if job.cache is not None:
            return None
        return search_native(job, self.binary)


def search_native(job: SearchJob, binary: str) -> Outcome | None:
    """A directory search with ripgrep walking and matching, or None when the python walk must
    answer (see the module docstring)."""
    from zbtools.core.search.entries import DEFAULT_EXCLUDED_DIRS, Skipped
    from zbtools.core.search.native_plan import plan

    request = job.request
    workspace = job.workspace
    how = plan(request.pattern, fixed_strings=request.fixed_strings,
               multiline=request.multiline, per_file=request.per_file, word=request.word)
    if how is None:
        return None
    exclude_dirs = request.exclude_dirs
    if request.include_hidden and not request.include_ignored and ".git" not in (
            DEFAULT_EXCLUDED_DIRS if exclude_dirs is None else exclude_dirs):
        return None  # a nested repository would be walked silently: see skip_event
    with workspace.resolve(request.path) as res:
        start = res.rel
    native = NativeSearch(job, binary, start, how)
    if job.tick is not None:
        job.tick(0)
    spawned: list[Spawned] = []
    with Paused():  # thousands of long-lived hits: collections would only cost
        try:
            listings: list[Spawned] = []
            if job.path_filter.active:  # (rg --files applies the globs as the search does)
                listings.append(native.spawn(native.list_args()))
                spawned.append(listings[0])
            search = native.spawn(native.search_args())
            spawned.append(search)
            native.prepare()  # while ripgrep starts, as is this:
            if not walks_alike(job, start):
                return None
            run = native.wait(search)
            listing = listings[0] if listings else None
            if run is None:
                outcome = Outcome(start, Skipped(), job.request.max_count)
                outcome.engine = ENGINE
                outcome.timed_out = True
                return outcome
            if run.code not in (0, 1):
                return None
            events = native.log.events(run.err)
            statuses = native.statuses(events, native.results(run))
            listed = native.listed(listing) if listing is not None else None
            outcome = Outcome(start, Skipped(), job.request.max_count)
            outcome.engine = ENGINE
            if not native.replay(outcome, events, statuses, listed):
                # cut at the limit: the files searched before the cut without a match
                listed = native.walked_before(native.stopped, events.too_large)
                outcome = Outcome(start, Skipped(), job.request.max_count)
                outcome.engine = ENGINE
                native.replay(outcome, events, statuses, listed)
            elif listed is None and not outcome.timed_out:
                # every file searched without a match is in ripgrep's count, not in its output
                # --stats ends the output: looked for in its tail first (a megabyte of rows)
                import re

                stats = re.compile(STATS_SEARCHED)  # (imported by the log's reader)
                searched = stats.search(run.out, max(0, len(run.out) - 4096)) \
                    or stats.search(run.out)
                if searched is None:
                    return None
                ok_again = sum(1 for rel in events.binary if statuses[rel][0] == "ok")
                outcome.files_searched = int(searched.group(1)) - len(events.binary) + ok_again
            if job.tick is not None:
                job.tick(outcome.files_searched)
            return outcome
        except (Declined, OSError):
            return None
        finally:
            native.close()
            for one in spawned:
                one.close()
