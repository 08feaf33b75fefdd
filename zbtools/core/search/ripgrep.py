"""grep_search's ``rg`` engine: our walk picks the files, ripgrep searches them
(docs/internals/search.md#rg-engine, docs/internals/performance.md#search).

The file set is the python engine's ``walk.Walk``; each file it keeps is opened with
``O_NOFOLLOW`` through its directory's descriptor, checked by the python engine's rules and
handed to ``rg`` as ``/dev/fd/N``, so ripgrep reads the very file vetted and never resolves a
path. Batches of ``BATCH_FILES`` files run in up to ``IN_FLIGHT`` processes while the walk goes
on; their output is put back in walk order and replayed through ``outcome.record``. Only
patterns both engines read alike go to ``rg`` (``compatible``); multiline searches stay in
python. No ``rg`` binary or an incompatible pattern means ``engine: auto`` uses python and
``engine: rg`` fails with ``invalid_arguments``; a batch whose ``rg`` fails is searched by the
python engine; the timeout kills the running batches (``timed_out``).

Map: ``RgEngine``, ``RgSearch``, ``find_rg``, ``compatible``, ``content_rows``, ``rows_to_hits``
(``plain_hits`` without context), ``batch_size``.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.search.engine import (
    BINARY_PROBE,
    FILE_FLAGS,
    Hit,
    Searcher,
    SearchTimeout,
    cut_line,
)
from zbtools.core.search.outcome import Replay, Slot

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    import threading
    from collections.abc import Iterable, Mapping

    from zbtools.core.search.engine import FileStatus
    from zbtools.core.search.entries import Entry
    from zbtools.core.search.outcome import Outcome
    from zbtools.core.search.request import SearchJob

BATCH_FILES = 512
IN_FLIGHT = 2
NO_HIT = Hit(0, [], [], [])


def find_rg(env: Mapping[str, str] | None = None) -> str | None:
    """The ``rg`` binary to use, or None."""
    import sys

    env = os.environ if env is None else env
    explicit = env.get("ZBTOOLS_RG")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        found = os.path.join(folder or ".", "rg")  # shutil.which's rule, without its import
        if os.access(found, os.X_OK) and not os.path.isdir(found):
            return found
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    return beside if os.access(beside, os.X_OK) else None


def compatible(pattern: str, *, fixed_strings: bool, multiline: bool) -> bool:
    """Whether ripgrep reads ``pattern`` exactly as the python engine does: the line-local
    patterns (``engine.line_local``), whose constructs both dialects share. A pattern holding
    a NUL character cannot be passed on rg's command line at all."""
    from zbtools.core.search.engine import line_local

    return "\0" not in pattern and line_local(pattern, fixed_strings=fixed_strings,
                                              multiline=multiline)


class _Batch:
    def __init__(self, slots: list[Slot], proc: subprocess.Popen[bytes],
                 thread: threading.Thread, box: list[bytes]) -> None:
        self.slots = slots
        self.proc = proc
        self.thread = thread
        self.box = box


class RgEngine:
    """The rg engine (a ``request.Engine``): ``binary`` searches the files our walk picks."""

    name = "rg"

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def search(self, job: SearchJob) -> Outcome:
        from zbtools.core.search.warm import walk_files

        job.searcher.compile()  # before any file is read: an invalid pattern fails the call here
        return walk_files(job, self.name, lambda outcome, _repeated: RgSearch(self.binary, job,
                                                                        outcome))


class RgSearch:
    """One directory search on the rg engine (a ``warm.FileSearch``); see the module
    docstring."""

    def __init__(self, rg: str, job: SearchJob, outcome: Outcome) -> None:
        searcher = self.searcher = job.searcher
        request = job.request
        limit = self.limit = request.limit
        per_file = self.per_file = request.per_file
        self.outcome = outcome
        self.replay = Replay(outcome, limit, per_file)
        args = [rg, "--no-config", "--color", "never", "--no-heading", "--with-filename",
                "--null", "--text", "--no-ignore", "--hidden", "--no-messages",
                # read in buffers: a memory map of a 200 MB file would count whole in the RSS
                "--no-mmap",
                # Transcoding from UTF-8 puts U+FFFD where bytes are invalid and drops a BOM,
                # as the python engine's decode does: '.' then matches the same characters.
                "--encoding", "utf-8"]
        if request.ignore_case:
            args.append("--ignore-case")
        if request.fixed_strings:
            args.append("--fixed-strings")
        if request.word:
            args.append("--word-regexp")
        if per_file:
            args.append("--count")
        else:
            args += ["--line-number", "--max-count", str(limit + 1)]
            if searcher.before:
                args += ["--before-context", str(searcher.before)]
            if searcher.after:
                args += ["--after-context", str(searcher.after)]
        self.args = [*args, "--regexp", request.pattern, "--"]
        self.batch_files = batch_size()
        self.pending: list[Slot] = []
        self.batches: list[_Batch] = []

    @property
    def stopped(self) -> bool:
        return self.replay.stopped

    def known(self, rel: str, status: FileStatus, hits: list[Hit]) -> bool:
        """A file whose result is already known (the warm cache): accounted in walk order."""
        slot = self.replay.slot(rel)
        slot.status = status
        slot.hits = hits
        self.replay.advance()
        return self.go_on()

    def search(self, dir_fd: int, entry: Entry) -> bool:
        slot = self.replay.slot(entry.rel)
        status = _vet(dir_fd, entry.name, slot, self.searcher.max_file_bytes)
        if status is not None:
            slot.status = status
            self.replay.advance()
        else:
            self.pending.append(slot)
            if len(self.pending) >= self.batch_files:
                self._launch()
        return self.go_on()

    def go_on(self) -> bool:
        if self.stopped:
            return False
        if self.searcher.time_left() <= 0:
            self.outcome.timed_out = True
            return False
        return True

    def finish(self) -> None:
        if self.pending and not self.stopped:
            self._launch()
        while self.batches and not self.stopped:
            self._collect(self.batches.pop(0))
        self.replay.advance()
        self.replay.settle()

    def close(self) -> None:
        for batch in self.batches:
            batch.proc.kill()
            batch.proc.wait()
            batch.thread.join()
        self.batches.clear()
        for slot in self.pending + self.replay.queue:
            if slot.fd >= 0:
                os.close(slot.fd)
                slot.fd = -1

    def _launch(self) -> None:
        import subprocess
        import threading

        while len(self.batches) >= IN_FLIGHT and not self.stopped:
            self._collect(self.batches.pop(0))
        slots, self.pending = self.pending, []
        if self.stopped:
            return
        fds = [slot.fd for slot in slots]
        try:
            proc = subprocess.Popen([*self.args, *(f"/dev/fd/{fd}" for fd in fds)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, pass_fds=fds)
        except OSError:
            self._search_here(slots)
            self.replay.advance()
            return
        box: list[bytes] = []
        assert proc.stdout is not None
        stdout = proc.stdout
        thread = threading.Thread(target=lambda: box.append(stdout.read()), daemon=True)
        thread.start()
        self.batches.append(_Batch(slots, proc, thread, box))

    def _collect(self, batch: _Batch) -> None:
        left = self.searcher.time_left()
        batch.thread.join(max(left, 0))
        if batch.thread.is_alive():  # out of time
            batch.proc.kill()
            batch.proc.wait()
            batch.thread.join()
            for slot in batch.slots:
                slot.status = "timeout"
        else:
            code = batch.proc.wait()
            data = batch.box[0] if batch.box else b""
            if code == 2 and not data:
                self._search_here(batch.slots)
            else:
                self._parse(batch.slots, data)
        for slot in batch.slots:
            if slot.fd >= 0:
                os.close(slot.fd)
                slot.fd = -1
        self.replay.advance()

    def _search_here(self, slots: list[Slot]) -> None:
        """The python engine on the batch's already open files (its rg failed)."""
        wanted = None if self.per_file else self.limit + 1
        for slot in slots:
            try:
                slot.status, slot.hits = self.searcher.search_open(slot.fd, wanted)
            except SearchTimeout:
                slot.status, slot.hits = "timeout", []

    def _parse(self, slots: list[Slot], data: bytes) -> None:
        by_fd = {f"/dev/fd/{slot.fd}".encode(): slot for slot in slots}
        for slot in slots:
            slot.status = "ok"
        if self.per_file:
            for line in data.split(b"\n"):
                path, sep, count = line.partition(b"\0")
                counted = by_fd.get(path) if sep else None
                if counted is not None and count.isdigit():
                    counted.hits = [NO_HIT] * int(count)
            return
        for path, lines in content_rows(data).items():
            found = by_fd.get(path)
            if found is not None:
                found.hits = rows_to_hits(self.searcher, lines)


# One file's output lines: line number -> (a matching line?, its bytes).
Rows = dict[int, tuple[bool, bytes]]


def content_rows(data: bytes) -> dict[bytes, Rows]:
    """ripgrep's ``--null --line-number`` output by path: ``path\\0N:text`` for matching lines,
    ``path\\0N-text`` for context; ``--`` separators and lines without a NUL are skipped."""
    import re

    rows: dict[bytes, Rows] = {}
    current: Rows | None = None
    current_path = b""
    for path, number, sep, text in re.findall(ROW, data):
        if current is None or path != current_path:
            current = rows.get(path)
            if current is None:
                current = rows[path] = {}
            current_path = path
        current[int(number)] = (sep == b":", text)
    return rows


ROW = rb"(?m)^([^\0\n]*)\0(\d+)([:-])(.*)$"


def plain_hits(searcher: Searcher, rows: Iterable[tuple[int, bytes]],
               verify: bool = False) -> list[Hit]:
    """``rows_to_hits`` of a search without context: ``rows`` are (line number, text) of
    matching lines, in order."""
    hits: list[Hit] = []
    for number, row in rows:
        raw = row[3:] if number == 1 and row.startswith(b"\xef\xbb\xbf") else row
        own = raw.decode("utf-8", "replace")
        if verify or len(own) > 500:
            m = searcher.regex.search(own)
            if m is None and verify:
                continue
            if len(own) > 500:
                own = cut_line(own, m.start() if m is not None else 0)
        hits.append(Hit(number, [own], [], []))
    return hits


def rows_to_hits(searcher: Searcher, lines: Rows, verify: bool = False) -> list[Hit]:
    """One file's rows as the python engine's hits: BOM dropped from line 1, bad bytes as
    U+FFFD, long lines cut around the match, context lines attached to their match. With
    ``verify``, ripgrep searched for a literal every match holds, and the python regex decides
    which of its lines match."""
    text: dict[int, str] = {}

    def line_text(number: int) -> str:
        got = text.get(number)
        if got is None:
            raw = lines[number][1]
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            got = text[number] = raw.decode("utf-8", "replace")
        return got

    hits: list[Hit] = []
    before_n, after_n = searcher.before, searcher.after
    if not before_n and not after_n:  # no context: each row is a match, in order
        return plain_hits(searcher, ((n, row) for n, (_, row) in sorted(lines.items())),
                          verify)
    for number in sorted(lines):
        if not (searcher.regex.search(line_text(number)) is not None if verify
                else lines[number][0]):
            continue
        own = line_text(number)
        column = 0
        if len(own) > 500:
            m = searcher.regex.search(own)
            column = m.start() if m is not None else 0
        before = [cut_line(line_text(n)) for n in range(max(1, number - before_n), number)
                  if n in lines]
        after: list[str] = []
        for n in range(number + 1, number + after_n + 1):
            if n not in lines:
                break
            after.append(cut_line(line_text(n)))
        hits.append(Hit(number, [cut_line(own, column)], before, after))
    return hits


def batch_size() -> int:
    """``BATCH_FILES``, or fewer when the open-files limit could not hold every batch's files
    (the running batches and the one being filled, plus the walk's and a margin)."""
    import resource

    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):  # pragma: no cover
        return 16
    if soft == resource.RLIM_INFINITY:
        return BATCH_FILES
    return max(1, min(BATCH_FILES, (soft - 128) // (IN_FLIGHT + 1)))


def _vet(dir_fd: int, name: str, slot: Slot, max_bytes: int | None) -> FileStatus | None:
    """Open and check one file as the python engine would; None: give it to rg (fd kept)."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return "unreadable"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            status = "other"
        elif max_bytes is not None and st.st_size > max_bytes:
            status = "too_large"
        elif os.pread(fd, BINARY_PROBE, 0).find(b"\0") >= 0:
            status = "binary"
        else:
            slot.fd = fd
            return None
    except OSError:
        status = "unreadable"
    os.close(fd)
    return status
