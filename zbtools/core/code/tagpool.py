"""Many files' symbols as compact records, parsed on every core.

A ``Tags`` record is what the workspace index keeps of one file: its language, its definitions
as plain tuples (``DEF_FIELDS``), the names it references (each once, sorted) and whether its
parse had errors; plain tuples and strings, so ``marshal`` stores and loads them fast
(docs/internals/code.md#repository-map). ``file_tags`` makes one; ``parse_many`` makes many:
inline when there is little to parse, else split into chunks that this process and forked
helpers take from a shared pipe of chunk numbers (whoever is free takes the next, so a busy
core does not hold the others up). Each helper writes its answers to an anonymous file and
exits; chunks a helper did not answer (it died, or its answer does not load) are parsed here,
so a failure costs time, never results.

Map: ``Tags``, ``DEF_FIELDS``, ``file_tags``, ``tags_definitions``, ``parse_many``,
``worker_count``.
"""

from __future__ import annotations

import marshal
import os

from zbtools.core.code.languages import LANGUAGES, parser, tags_query
from zbtools.core.code.symbols import read_symbols

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from zbtools.core.code.languages import Language
    from zbtools.core.code.symbols import Definition

# (kind, name, qualname, parent, depth, start_line, end_line, signature)
DefTuple = tuple[str, str, str, str | None, int, int, int, str]
# (language name, definitions, referenced names (sorted, each once), parse had errors)
Tags = tuple[str, tuple[DefTuple, ...], tuple[str, ...], bool]

DEF_FIELDS = ("kind", "name", "qualname", "parent", "depth", "start_line", "end_line",
              "signature")
# below this much source, forking costs more than it saves
PARALLEL_BYTES = 512 * 1024
CHUNK_BYTES = 192 * 1024
MAX_CHUNKS = 1000  # their numbers (4 bytes each) fit in one page, the smallest pipe buffer
TOKEN_BYTES = 4  # a chunk number in the pipe


def _as_tuple(d: Definition) -> DefTuple:
    return (d.kind, d.name, d.qualname, d.parent, d.depth, d.start_line, d.end_line,
            d.signature)


def file_tags(language: Language, source: bytes) -> Tags:
    """One file's record."""
    symbols = read_symbols(language, source)
    return (language.name, tuple(_as_tuple(d) for d in symbols.definitions),
            tuple(sorted({r.name for r in symbols.references})), symbols.has_errors)


def tags_definitions(tags: Tags) -> list[dict[str, object]]:
    """The record's definitions as JSON objects (``DEF_FIELDS``)."""
    return [dict(zip(DEF_FIELDS, d, strict=True)) for d in tags[1]]


def worker_count() -> int:
    """The processes that parse: the CPUs this process may run on (``ZBTOOLS_CODE_WORKERS``
    overrides; 1 without ``os.fork``)."""
    raw = os.environ.get("ZBTOOLS_CODE_WORKERS", "")
    if raw.isdigit() and int(raw) > 0:
        wanted = int(raw)
    else:
        try:
            wanted = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            wanted = os.cpu_count() or 1
    return max(1, min(wanted, 16)) if hasattr(os, "fork") else 1


def _parse(item: tuple[Language, bytes]) -> Tags | None:
    try:
        return file_tags(*item)
    except Exception:
        return None


def _chunks(items: list[tuple[Language, bytes]]) -> list[tuple[int, int]]:
    total = sum(len(source) for _, source in items)
    size = max(CHUNK_BYTES, total // MAX_CHUNKS + 1)
    chunks = []
    start = used = 0
    for i, (_, source) in enumerate(items):
        used += len(source)
        if used >= size:
            chunks.append((start, i + 1))
            start, used = i + 1, 0
    if start < len(items):
        chunks.append((start, len(items)))
    return chunks


def parse_many(items: list[tuple[Language, bytes]], workers: int | None = None
               ) -> list[Tags | None]:
    """Each item's record (None where its parse failed), in order."""
    workers = worker_count() if workers is None else workers
    if workers <= 1 or sum(len(s) for _, s in items) < PARALLEL_BYTES:
        return [_parse(item) for item in items]
    for name in {language.name for language, _ in items}:
        # loaded before the fork, so every helper has them without loading them again
        parser(LANGUAGES[name])
        tags_query(LANGUAGES[name])
    chunks = _chunks(items)
    results: list[Tags | None] = [None] * len(items)
    done = [False] * len(chunks)
    token_r, token_w = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(token_w, b"".join(i.to_bytes(TOKEN_BYTES, "little")
                                    for i in range(len(chunks))))
    finally:
        os.close(token_w)
    helpers: list[tuple[int, int]] = []
    try:
        for _ in range(workers - 1):
            helper = _fork(items, chunks, token_r)
            if helper is None:
                break
            helpers.append(helper)
        for index in _take(token_r):
            _run_chunk(items, chunks[index], results)
            done[index] = True
    finally:
        os.close(token_r)
        for pid, out in helpers:
            _collect(pid, out, chunks, results, done)
    for index, ok in enumerate(done):
        if not ok:  # a helper took it and did not answer
            _run_chunk(items, chunks[index], results)
    return results


def _take(token_r: int) -> Iterator[int]:
    """Chunk numbers, one at a time, until the pipe is empty (a generator)."""
    while True:
        raw = os.read(token_r, TOKEN_BYTES)  # one number: reads of <= PIPE_BUF are atomic
        if len(raw) != TOKEN_BYTES:
            return
        yield int.from_bytes(raw, "little")


def _run_chunk(items: list[tuple[Language, bytes]], chunk: tuple[int, int],
               results: list[Tags | None]) -> None:
    for i in range(*chunk):
        results[i] = _parse(items[i])


def _fork(items: list[tuple[Language, bytes]], chunks: list[tuple[int, int]],
          token_r: int) -> tuple[int, int] | None:
    import signal  # here, not in the helper: another thread may hold the import lock at the
    # fork (mcp runs calls in threads)

    try:
        out = os.memfd_create("zbtools-tags", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(out)
        return None
    if pid == 0:  # the helper: parse what it takes, write the answers, exit
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            answers = []
            for index in _take(token_r):
                start, end = chunks[index]
                answers.append((index, [_parse(items[i]) for i in range(start, end)]))
            data = marshal.dumps(answers)
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
            code = 0
        finally:
            os._exit(code)
    return pid, out


def _collect(pid: int, out: int, chunks: list[tuple[int, int]], results: list[Tags | None],
             done: list[bool]) -> None:
    """Wait for a helper and take its answers; a helper that failed answers nothing."""
    try:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            return
        size = os.fstat(out).st_size
        data = os.pread(out, size, 0) if size else b""
        answers = marshal.loads(data) if data else []
        for index, tags in answers:
            start, end = chunks[index]
            if len(tags) != end - start or done[index]:
                continue
            results[start:end] = tags
            done[index] = True
    except (OSError, ValueError, EOFError, TypeError, IndexError):
        return
    finally:
        os.close(out)
