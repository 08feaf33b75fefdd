"""grep_search's ``native`` engine: one ripgrep process walks the tree and searches it.

The python walk (one ``scandir`` per directory, ignore matching per entry) is most of a search's
cost in a fresh process; here ripgrep's own walker picks the files, run with flags that make its
rules the walk's: ``.gitignore`` files apply outside a git repository too, never the global
excludes file or ignore files above the start, hidden entries and ``DEFAULT_EXCLUDED_DIRS``
(as ``!name/`` overrides) skipped unless asked, files over a size cap left out (only when one
is given: every file is searched otherwise), no
encoding guessed (``-E none``: a UTF-16 file is binary, as the python engine sees it). With
``--debug`` ripgrep logs every entry it leaves out and why (hidden, an ignore rule, an override,
its size, binary data at an offset); those lines, placed in walk order (siblings sorted by name,
depth first), give the ``skipped`` counts, also where a limit stopped the search. Files are
replayed through ``engine.record`` in walk order, so limits, truncation and totals are the
python engine's. Where the stopping point or a path filter needs the files searched without a
match, a second ``rg --files`` run with the same walk flags lists them.

Only what both read the same way runs here (``plan``): line-local patterns (``line_local``).
Those that cannot match a character the python engine decodes from an invalid byte (no ``.``,
negated classes, ``\\W \\S \\D``, U+FFFD or U+FEFF in the pattern) go to ripgrep as they are,
and so do those whose only such part is a ``.`` repeated without bound, sent as ripgrep's
byte-wise ``(?-u:.)`` (``byte_dots`` says why a line then matches alike, and when not);
a ``^`` pattern would miss line 1 of a file starting with a byte-order mark (the python engine
drops it), so such patterns also search for U+FEFF, and every file with that character is
searched again by the python engine (content mode only). The others go to ripgrep as a literal
of at least 3 characters that every match holds (``required_literal``), and the python regex
decides which of those lines match: exact, since a match lies in one line and every line with
a match holds the literal. A file ripgrep calls binary for a NUL byte at or after
``BINARY_PROBE`` is searched again by the python engine (which looks at the first 8 KiB only).

The engine declines (``search_tree_native`` returns None and the caller walks in python) before
running when the start is ignored itself, in another root, or in a repository nested below the
workspace root (ripgrep applies no rule from above a repository's root), and when the workspace
root lies inside a repository (the python walk then reads the ignore files above the root up to
the repository's, which ripgrep reads with other precedence and further up); and after running when
the two walkers could have disagreed: an ignore file whose log lines are not told apart here
(``.ignore``, ``.rgignore``: both walks read them alike, with ripgrep's precedence) or that the
python walk does not read the same way (another repository's ``info/exclude``, one above the
workspace root), a repository nested below the start, a hidden entry whitelisted by a negation, a
directory as deep as the python walk's ``MAX_DEPTH`` (an override glob of that many components
makes ripgrep log it), a log past ``LOG_LIMIT`` (thousands of entries left out one by one:
logging each costs ripgrep about 20 us here, more than the python walk's counting), any message
or log line not understood (an unreadable directory, a vanished file), or a reported file that
is not a regular file reached without symlinks.

Containment: ripgrep never follows a symlink while walking, and every file it reports is checked
afterwards by opening its directories one by one from the workspace root with ``O_NOFOLLOW``
(files searched again are read through those descriptors). Unlike the python and rg engines,
ripgrep opens files by path: a directory swapped for a symlink to the outside and back while
it reads could show an outside file's lines under an inside name. Where untrusted processes
write the workspace concurrently, set ``engine: python`` (or ``rg``).
"""

from __future__ import annotations

import gc
import os
import re
import stat
import sys

from zbtools.core.search.engine import (
    BINARY_PROBE,
    FileStatus,
    Hit,
    Outcome,
    SearchTimeout,
    record,
)
from zbtools.core.search.ripgrep import Rows, rows_to_hits
from zbtools.core.search.walk import MAX_DEPTH, walk_order

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Sequence
    from typing import Any

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.engine import PathFilter, RgRequest, Searcher

ENGINE = "native"
BOM_PROBE = "\\x{FEFF}"
# Debug lines from these modules say nothing about the file set.
QUIET_MODULES = ("rg::flags", "globset", "grep_regex", "rg::search", "grep_searcher")
DEBUG_LINE = re.compile(rb"^rg: DEBUG\|([^|]*)\|[^ ]*: (.*)$")
SIZE_REASON = re.compile(rb"^(\d+) bytes$")
BINARY_REASON = re.compile(rb"^found binary data at offset (\d+)$")
STATS_SEARCHED = re.compile(rb"^(\d+) files searched$", re.MULTILINE)
FS_ENCODING, FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
LOG_LIMIT = 256 * 1024  # bytes of ripgrep's --debug log, about 900 entries left out
LOG_PIPE_BYTES = 1 << 20  # asked for the log pipe (the system's cap may be lower)
BODY_ROW = re.compile(rb"(?m)^(\d+)([:-])(.*)$")  # a matching line (:) or a context line (-)


class Declined(Exception):
    """The two walkers could disagree here: the python walk answers instead."""


class Plan:
    """How ripgrep searches for a pattern: the pattern itself (``anchored``: it holds a ``^``,
    so U+FEFF is searched for too; ``pattern``: rewritten for ripgrep by ``byte_dots``), or a
    ``literal`` every match holds, whose lines the python regex then decides (patterns whose
    ``.``, negated classes, ``\\W \\S \\D`` would meet an invalid byte otherwise than the
    python engine's U+FFFD)."""

    def __init__(self, *, anchored: bool = False, literal: str | None = None,
                 pattern: str | None = None) -> None:
        self.anchored = anchored
        self.literal = literal
        self.pattern = pattern


def plan(pattern: str, *, fixed_strings: bool, multiline: bool, per_file: bool) -> Plan | None:
    """How the native engine searches for ``pattern``, or None where it cannot answer exactly
    what the python engine would (see the module docstring)."""
    from zbtools.core.search.engine import line_local, required_literal

    if not line_local(pattern, fixed_strings=fixed_strings, multiline=multiline):
        return None
    if "\ufffd" in pattern or "\ufeff" in pattern:
        return None
    if fixed_strings:
        return Plan()
    read = reading(pattern)
    if read is not None and not (read.anchored and per_file):
        if read.dot_runs == 0:
            return Plan(anchored=read.anchored)
        rewritten = None if read.boundary or read.plus_runs > 1 else \
            byte_dots(pattern, read.dot_runs)
        if rewritten is not None:
            return Plan(anchored=read.anchored, pattern=rewritten)
    literal = required_literal(pattern)
    return Plan(literal=literal.decode("utf-8")) if literal is not None else None


def usable(pattern: str, *, fixed_strings: bool, multiline: bool, per_file: bool) -> bool:
    """Whether the native engine can search for ``pattern`` (``plan``)."""
    return plan(pattern, fixed_strings=fixed_strings, multiline=multiline,
                per_file=per_file) is not None


class Reading:
    """What ``reading`` found in a pattern: whether it holds a ``^`` (``anchored``), how many
    ``.`` repeat without bound (``.*``, ``.+``, greedy or lazy: ``dot_runs``; ``plus_runs``
    of them at least once), and whether it holds a word boundary (``\\b \\B``)."""

    def __init__(self) -> None:
        self.anchored = False
        self.dot_runs = 0
        self.plus_runs = 0
        self.boundary = False


def reading(pattern: str) -> Reading | None:
    """How ``pattern`` (one ``line_local`` accepted) meets bytes, or None when a part of it
    other than a ``.`` that repeats without bound could match a character decoded from an
    invalid byte (another ``.``, a negated class, ``\\W \\S \\D``), or such a ``.`` stands
    inside a repeated group (``(.+){2}`` would ask for two of them)."""
    from zbtools.core.search.engine import parse_stdlib

    got = parse_stdlib(pattern)
    if got is None:
        return None
    parser, parsed = got
    unsafe = {parser.CATEGORY_NOT_DIGIT, parser.CATEGORY_NOT_WORD, parser.CATEGORY_NOT_SPACE}
    found = Reading()

    def alike(items: Sequence[tuple[Any, Any]], repeated: bool = False) -> bool:
        for op, arg in items:
            if op in (parser.MAX_REPEAT, parser.MIN_REPEAT):
                low, high, body = arg
                if list(body) == [(parser.ANY, None)] and low in (0, 1) and \
                        high == parser.MAXREPEAT and not repeated:
                    found.dot_runs += 1
                    found.plus_runs += low
                elif not alike(body, True):
                    return False
            elif op is parser.ANY or op is parser.NOT_LITERAL or op is parser.NEGATE or \
                    (op is parser.CATEGORY and arg in unsafe):
                return False
            elif op is parser.AT:
                found.boundary |= arg in (parser.AT_BOUNDARY, parser.AT_NON_BOUNDARY)
                found.anchored |= arg is parser.AT_BEGINNING
            elif (op is parser.IN and not alike(arg, repeated)) or \
                    (op is parser.BRANCH and not all(alike(b, repeated) for b in arg[1])) or \
                    (op is parser.SUBPATTERN and not alike(arg[3], repeated)):
                return False
        return True

    return found if alike(parsed.data) else None


BYTE_DOT = "(?-u:.)"  # ripgrep: any byte but a newline


def byte_dots(pattern: str, runs: int) -> str | None:
    """``pattern`` for ripgrep with each of its ``runs`` unbounded ``.`` repeats (``.*``,
    ``.+``, greedy or lazy) written ``(?-u:.)``; None when the dots found in its text are not
    exactly those (a ``.`` standing otherwise, or one the text scan misreads).

    Why this reads alike on both sides: the python engine decodes each invalid byte sequence
    to one U+FFFD, which its ``.`` matches, and ripgrep's Unicode ``.`` matches no invalid
    byte. Every other part of such a pattern (``reading``) matches valid characters only, and
    a valid character never starts inside a sequence the decoder replaced (one replaced
    sequence is the start of a valid one: it ends at the first byte that cannot continue
    it). So the other parts meet the same characters at the same places; in between, a
    stretch of adjacent dot runs covers a run of characters without a newline on one side
    exactly when it covers the run of bytes they were decoded from on the other, a non-empty
    one too when one of them is a ``.+`` (all of it can go to that one): a line matches on
    one side exactly when it matches on the other. Counting is where the two differ: a single
    ``.``, ``.?`` or ``.{n}``, two ``.+`` (``.+.+`` is two bytes against two characters) or
    one in a repeated group, and a word boundary asked between two bytes of one character;
    the caller leaves those patterns to the literal plan (``reading`` tells them)."""
    out: list[str] = []
    found = i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif ch == "[":  # a class: a "]" right after "[" or "[^" is a member
            end = i + 1
            end += pattern.startswith("^", end)
            end += pattern.startswith("]", end)
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            out.append(pattern[i:end + 1])
            i = end + 1
        elif ch == ".":
            if pattern[i + 1:i + 2] not in ("*", "+"):
                return None
            out.append(BYTE_DOT)
            found += 1
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out) if found == runs else None


def parent_key(rel: str) -> str:
    """Where the walk counts what it skipped in ``rel``'s directory: when it lists it, after
    the directory itself and before anything in it."""
    return walk_order(rel.rpartition("/")[0]) + "\0" if "/" in rel else "\0"


class Run:
    """What one ``rg`` run said: its output, and its log sorted into events."""

    def __init__(self, out: bytes, err: bytes, code: int) -> None:
        self.out = out
        self.err = err
        self.code = code


class Spawned:
    """A running ``rg``: its output goes to an anonymous memory file, its log to a pipe that
    ``drain`` empties (``log`` keeps what was read). The log is hundreds of small writes (one
    per entry left out): each costs ripgrep ~10 us into a memory file, ~1 us into a pipe
    (measured: 7 ms of a 50 ms search). The pipe is made as large as allowed (1 MiB here) and
    drained every few milliseconds by ``wait``'s watcher, so ripgrep never waits on it."""

    def __init__(self, proc: subprocess.Popen[bytes], out: int, err: int) -> None:
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


class Events:
    """The skipped entries and per-file facts of the log, by root-relative path."""

    def __init__(self) -> None:
        self.skips: list[tuple[str, str]] = []  # (walk key, kind) for hidden/ignored/excluded
        self.too_large: list[str] = []
        self.binary: dict[str, int] = {}  # path -> offset of the first NUL byte
        self.opened: list[str] = []  # ignore files read


class NativeSearch:
    """One ``search_tree`` call on the native engine; see the module docstring."""

    def __init__(self, workspace: Workspace, rg: RgRequest, searcher: Searcher, start: str,
                 path_filter: PathFilter, *, limit: int, per_file: bool, include_hidden: bool,
                 include_ignored: bool, exclude: frozenset[str], how: Plan) -> None:
        self.workspace = workspace
        self.rg = rg
        self.searcher = searcher
        self.start = start
        self.prefix = "" if start == "." else start + "/"
        self.start_depth = 0 if start == "." else start.count("/") + 1
        self.path_filter = path_filter
        self.limit = limit
        self.per_file = per_file
        self.include_hidden = include_hidden
        self.include_ignored = include_ignored
        self.exclude = exclude
        self.anchored = how.anchored
        self.literal = how.literal
        self.rg_pattern = how.pattern if how.pattern is not None else rg.pattern
        # content rows are needed to decide each line, in count modes too
        self.count_rows = per_file and how.literal is None
        self.dirs: dict[str, int] = {}
        self.bodies: dict[str, bytes] = {}  # a content run's output, by file

    # -- running ripgrep -------------------------------------------------------------------

    def walk_flags(self) -> list[str]:
        flags = ["--no-config", "--no-require-git", "--no-ignore-global",
                 # a directory where the python walk stops (MAX_DEPTH): ripgrep logs it
                 "--glob", "!" + "*/" * (self.start_depth + MAX_DEPTH)]
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
        args = [self.rg.binary, "--debug", *self.walk_flags(), "--no-mmap", "--encoding", "none",
                "--color", "never", "--no-heading", "--with-filename", "--null", "--stats"]
        if self.rg.ignore_case:
            args.append("--ignore-case")
        if self.rg.fixed_strings or self.literal is not None:
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
        return [self.rg.binary, *self.walk_flags(), "--files", "--null", "--", self.start]

    def spawn(self, args: list[str]) -> Spawned:
        """Start ``rg`` with its output going to an anonymous memory file (nothing to drain
        while it runs) and its log to a pipe (``Spawned``)."""
        import subprocess

        out = os.memfd_create("zbtools-rg-out", os.MFD_CLOEXEC)
        err, log = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            os.set_blocking(log, True)  # ripgrep's end
            try:
                import fcntl

                fcntl.fcntl(log, fcntl.F_SETPIPE_SZ, LOG_PIPE_BYTES)
            except (OSError, AttributeError):
                pass  # the default size (64 KiB) is drained in time too
            proc = subprocess.Popen(args, cwd=self.workspace.root, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=log)
        except BaseException:
            os.close(out)
            os.close(err)
            raise
        finally:
            os.close(log)
        return Spawned(proc, out, err)

    def wait(self, spawned: Spawned, on_big: Callable[[], None] | None = None) -> Run | None:
        """The run's output, or None when the deadline passed (the process is then killed).

        A watching thread looks at the output as it grows. ``on_big`` is called (once) as soon
        as the output holds more lines than the limit (each row is a line), so that the
        listing a cut search needs runs alongside. A log past ``LOG_LIMIT`` bytes (a tree with
        thousands of ignored files, each logged: about 20 us of ripgrep's time apiece here)
        stops the run, and ``Declined`` lets the python walk answer: it counts skipped entries
        for free."""
        import threading

        proc = spawned.proc
        timer = threading.Timer(max(self.searcher.time_left(), 0.001), proc.kill)
        timer.start()
        done = threading.Event()
        noisy: list[bool] = []

        failed: list[BaseException] = []

        def watch() -> None:
            try:
                look()
            except BaseException as exc:  # told to the waiting thread, which declines
                failed.append(exc)
                proc.kill()

        def look() -> None:
            told = on_big is None
            seen = lines = 0  # output bytes looked at, and the lines among them
            while not done.wait(0.002):
                spawned.drain()
                if spawned.log_bytes > LOG_LIMIT:
                    noisy.append(True)
                    proc.kill()
                    return
                if told:
                    continue
                # every row is a line of its own: no more lines than the limit, no cut
                size = os.fstat(spawned.out).st_size
                if size > seen:
                    lines += os.pread(spawned.out, size - seen, seen).count(b"\n")
                    seen = size
                if lines > self.limit + 1:
                    told = True
                    assert on_big is not None
                    on_big()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            code = proc.wait()
        finally:
            timer.cancel()
            done.set()
            watcher.join()
        if failed:  # (an error of the watcher: the log was no longer drained)
            raise Declined(f"the output's watcher failed: {failed[0]!r}")
        if noisy:
            raise Declined("ripgrep's log grew past LOG_LIMIT")
        if code < 0:
            return None  # killed at the deadline
        return Run(spawned.read(spawned.out), spawned.read_log(), code)

    # -- reading the log -------------------------------------------------------------------

    def rel_of(self, raw: bytes) -> str:
        """A path as ripgrep printed it, relative to the workspace root."""
        text = raw.decode(FS_ENCODING, FS_ERRORS)  # os.fsdecode, without its checks per call
        if text.startswith("./"):
            text = text[2:]
        return text

    def events(self, err: bytes) -> Events:
        found = Events()
        for line in err.split(b"\n"):
            if not line:
                continue
            m = DEBUG_LINE.match(line)
            if m is None:
                raise Declined("an rg message")  # an error: unreadable, vanished...
            module, message = m.group(1), m.group(2)
            if module.startswith(b"ignore::walk") or module.startswith(b"grep_printer") \
                    or module.startswith(b"rg::haystack"):
                self.entry_event(found, message)
            elif module.startswith(b"ignore::gitignore"):
                if message.startswith(b"opened gitignore file: "):
                    found.opened.append(self.rel_of(message[len(b"opened gitignore file: "):]))
            elif not module.decode("ascii", "replace").startswith(QUIET_MODULES):
                raise Declined("an rg log line not understood")
        self.check_opened(found.opened)
        return found

    def entry_event(self, found: Events, message: bytes) -> None:
        verb, _, rest = message.partition(b" ")
        if verb == b"whitelisting":
            path, sep, _reason = rest.partition(b": Whitelist(")
            if not sep:
                raise Declined("a whitelist line not understood")
            rel = self.rel_of(path)
            if not self.include_hidden and any(part.startswith(".")
                                               for part in rel[len(self.prefix):].split("/")):
                raise Declined("a hidden entry whitelisted by a negation")
            return
        if verb != b"ignoring":
            raise Declined("a walk line not understood")
        path, sep, reason = rest.partition(b": Ignore(IgnoreMatch(")
        if sep:
            rel = self.rel_of(path)
            self.skip_event(found, rel, reason)
            return
        if b": failed to pass haystack filter" in rest:
            return  # a symlink or a special file: the python walk passes them silently too
        path, sep, reason = rest.rpartition(b": ")
        if not sep:
            raise Declined("a walk line not understood")
        rel = self.rel_of(path)
        size = SIZE_REASON.match(reason)
        if size is not None:
            found.too_large.append(rel)
            return
        binary = BINARY_REASON.match(reason)
        if binary is not None:
            found.binary[rel] = int(binary.group(1))
            return
        raise Declined("a walk line not understood")

    def skip_event(self, found: Events, rel: str, reason: bytes) -> None:
        name = rel.rpartition("/")[2]
        parts = rel[len(self.prefix):].split("/")
        if ".git" in parts[:-1] or (name == ".git" and rel != ".git"):
            raise Declined("a repository nested below the start")
        if reason.startswith(b"Hidden)"):
            kind = "hidden"
        elif reason.startswith(b"Override("):
            if b'original: "!*/*/' in reason:
                raise Declined("a tree as deep as the python walk's limit: it says so")
            if b'original: "!.*.zb*"' in reason:
                from zbtools.core.files.tempnames import is_temp_name

                if is_temp_name(name):
                    return  # our own temp files: never listed or searched, not counted
                raise Declined("a hidden name like our temp files")
            if name not in self.exclude:
                raise Declined("an override not understood")
            kind = "excluded_dirs"
        elif reason.startswith(b"Gitignore("):
            # the python walk tests for a hidden name before the ignore rules
            kind = "hidden" if name.startswith(".") and not self.include_hidden else "ignored"
        else:
            raise Declined("an ignore reason not understood")
        found.skips.append((parent_key(rel), kind))

    def check_opened(self, opened: list[str]) -> None:
        """The ignore files ripgrep read must be those the python walk reads: ``.gitignore``
        files at or below the start, the start's ancestors' up to the workspace root (ripgrep
        names those by absolute path), and the root's ``.git/info/exclude``."""
        root = self.workspace.root.rstrip("/") + "/"
        for logged in opened:
            path = logged
            if path.startswith("/"):
                if not path.startswith(root):
                    raise Declined("an ignore file above the workspace root")
                path = path[len(root):]
                inside = path.rpartition("/")[0]
                if inside and path != ".git/info/exclude" \
                        and not self.prefix.startswith(inside + "/"):
                    raise Declined("an ignore file outside the start's ancestors")
            name = path.rpartition("/")[2]
            if name == ".gitignore" or path == ".git/info/exclude":
                continue
            raise Declined(f"rg read {name}, which the python walk reads otherwise")

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

    def listed(self, proc: Spawned) -> list[str]:
        """The files an ``rg --files`` run listed (root-relative). It runs without ``--debug``
        (the search's log already told what was left out): any message declines."""
        run = self.wait(proc)
        if run is None or run.code not in (0, 1) or run.err:
            raise Declined("the listing failed, ran out of time or said something")
        return [self.rel_of(raw) for raw in run.out.split(b"\0") if raw]

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
                    rel = self.rel_of(path)
                    self.check_file(rel)
                    found[rel] = ("ok", [NO_HIT_ROW] * int(count))
            return found
        # --heading --null: "path\0" and the file's lines, a blank line between files
        for block in run.out.split(b"\n\n"):
            path, sep, body = block.partition(b"\0")
            if sep:
                self.bodies[self.rel_of(path)] = body
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
        rows: Rows = {int(number): (sep == b":", text)
                      for number, sep, text in re.findall(BODY_ROW, body)}
        hits = rows_to_hits(self.searcher, rows, self.literal is not None)
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
        """Account every file in walk order; False when a limit stopped the search before the
        files searched without a match were known (``listed`` is None)."""
        accept = self.path_filter.accepts if self.path_filter.active else None
        prefix_len = len(self.prefix)
        names = list({*statuses, *self.bodies}) if listed is None \
            else [*listed, *events.too_large]
        files = sorted((walk_order(rel), rel) for rel in names
                       if accept is None or accept(rel[prefix_len:], rel.rpartition("/")[2]))
        skips = sorted(events.skips)
        sk = outcome.skipped
        i = 0
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
                return listed is not None  # stopped: exact counts need the whole file list
        for _, kind in skips[i:]:
            setattr(sk, kind, getattr(sk, kind) + 1)
        return True


NO_HIT_ROW = Hit(0, [], [], [])


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


def search_tree_native(workspace: Workspace, rg: RgRequest, searcher: Searcher, path: str,
                       path_filter: PathFilter, *, limit: int, per_file: bool,
                       include_hidden: bool, include_ignored: bool,
                       exclude_dirs: Sequence[str] | None,
                       tick: Callable[[int], None] | None = None) -> Outcome | None:
    """``tree.search_tree`` for a directory with ripgrep walking and matching, or None when the
    python walk must answer (see the module docstring)."""
    from zbtools.core.search.walk import DEFAULT_EXCLUDED_DIRS, Skipped, Walk, repository_above

    how = plan(rg.pattern, fixed_strings=rg.fixed_strings, multiline=False, per_file=per_file)
    if how is None:
        return None
    exclude = frozenset(DEFAULT_EXCLUDED_DIRS if exclude_dirs is None else exclude_dirs)
    if include_hidden and not include_ignored and ".git" not in exclude:
        return None  # a nested repository would be walked silently: see skip_event
    walk = Walk(workspace, path, include_hidden=include_hidden,
                include_ignored=include_ignored, exclude_dirs=exclude_dirs, with_stat=False)
    try:
        start = walk.rel
        if workspace.root_of(start)[1] or walk.start_ignored \
                or repository_above(workspace.root) is not None:
            return None  # another root, a start ignored by name, rules from above the root
        if start != "." and nested_repository(workspace.root, start):
            return None  # ripgrep applies no rule from above a repository's root
    finally:
        walk.close()
    native = NativeSearch(workspace, rg, searcher, start, path_filter, limit=limit,
                          per_file=per_file, include_hidden=include_hidden,
                          include_ignored=include_ignored, exclude=exclude, how=how)
    if tick is not None:
        tick(0)
    spawned: list[Spawned] = []
    paused_gc = False
    try:
        listings: list[Spawned] = []

        def start_listing() -> None:
            listings.append(native.spawn(native.list_args()))
            spawned.append(listings[0])

        if path_filter.active:
            start_listing()
        search = native.spawn(native.search_args())
        spawned.append(search)
        run = native.wait(search, None if listings else start_listing)
        listing = listings[0] if listings else None
        if run is None:
            outcome = Outcome(start, Skipped())
            outcome.engine = ENGINE
            outcome.timed_out = True
            return outcome
        if run.code not in (0, 1):
            return None
        events = native.events(run.err)
        if gc.isenabled():  # thousands of long-lived hits: collections would only cost
            gc.disable()
            paused_gc = True
        statuses = native.statuses(events, native.results(run))
        listed = native.listed(listing) if listing is not None else None
        outcome = Outcome(start, Skipped())
        outcome.engine = ENGINE
        if not native.replay(outcome, events, statuses, listed):
            if not listings:
                start_listing()
            listed = native.listed(listings[0])
            outcome = Outcome(start, Skipped())
            outcome.engine = ENGINE
            native.replay(outcome, events, statuses, listed)
        elif listed is None and not outcome.timed_out:
            # every file searched without a match is in ripgrep's count, not in its output
            searched = STATS_SEARCHED.search(run.out)
            if searched is None:
                return None
            ok_again = sum(1 for rel in events.binary if statuses[rel][0] == "ok")
            outcome.files_searched = int(searched.group(1)) - len(events.binary) + ok_again
        if tick is not None:
            tick(outcome.files_searched)
        return outcome
    except (Declined, OSError):
        return None
    finally:
        if paused_gc:
            gc.enable()
        native.close()
        for one in spawned:
            one.close()
