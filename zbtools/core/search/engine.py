"""The matcher every engine shares: patterns, and one file's search
(docs/internals/search.md#engines, docs/internals/performance.md#search).

``compile_pattern`` turns the caller's pattern into a ``regex`` pattern object (the third-party
module, imported here and only here, because it can stop a match at a deadline); plain text
searched case-sensitively skips it (``LiteralPattern``). An invalid pattern is ``regex_error``.
``Searcher.search_file`` reads one file's bytes through a directory descriptor, skips it as
``binary`` or ``too_large`` (only under a cap the caller gives), and reports the matching lines,
one hit per line by default, whole matches in multiline mode. A file over ``WHOLE_FILE_BYTES``
is searched in blocks of whole lines in line mode; multiline mode reads it only when
``max_file_bytes`` allows, else counts it ``too_large``. Lines over ``MAX_LINE_CHARS`` are cut
around the match. A pattern that runs out of time stops the search (``timed_out``), or fails
with ``regex_timeout`` when no file could be searched. Files are decoded as UTF-8 with
replacement characters.

Map: ``compile_pattern``, ``python_source`` (ripgrep's syntax, ``rust_syntax``),
``LiteralPattern``, ``parse_stdlib``, ``line_local``,
``required_literal`` (patterns); ``Searcher`` (``search_file``, ``search_stream``,
``search_bytes``, ``search_text``), ``Hit``, ``cut_line``, ``read_open``.
"""

from __future__ import annotations

import os
import stat
import time

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


# read whole up to this; above it, line mode streams and multiline mode needs max_file_bytes
WHOLE_FILE_BYTES = 10 * 1024 * 1024
MAX_LINE_CHARS = 500
BINARY_PROBE = 8192
READ_CHUNK = 1024 * 1024
READ_BUFFER = 1024 * 1024
STREAM_BLOCK = 4 * 1024 * 1024  # search_stream reads this much at a time
MAX_STREAM_LINE = 64 * 1024 * 1024  # a longer line makes a streamed file too_large
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK

# What became of one file: "ok" (searched; hits may be empty), a ``Skipped`` counter name
# (binary, too_large, unreadable), "other" (not a regular file) or "timeout".
FileStatus = str


REGEX_SYNTAX = frozenset(".^$*+?{}[]\\|()")
# what a pattern of text alone never holds (``plain_text``): that syntax, and line breaks
SYNTAX_CHARACTERS = REGEX_SYNTAX | frozenset("\n\r")


class LiteralPattern:
    """What the search needs of a compiled pattern (``search`` -> ``start``/``end``), for plain
    text: ``str.find`` instead of importing and compiling ``regex``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def search(self, string: str, pos: int = 0, endpos: int | None = None,
               timeout: float | None = None) -> LiteralMatch | None:
        at = string.find(self.text, pos, len(string) if endpos is None else endpos)
        return None if at < 0 else LiteralMatch(at, at + len(self.text))


class LiteralMatch:
    __slots__ = ("_end", "_start")

    def __init__(self, start: int, end: int) -> None:
        self._start = start
        self._end = end

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


# ``word``: no word character just before or just after a match, as ripgrep 14 reads ``-w``
# (``\b{start-half}`` and ``\b{end-half}`` around the pattern): ``-foo`` is found in
# ``a -foo b``, ``foo`` is not in ``foo_bar``.
WORD_BEFORE, WORD_AFTER = "(?<!\\w)(?:", ")(?!\\w)"


def compile_pattern(pattern: str, *, ignore_case: bool = False, fixed_strings: bool = False,
                    multiline: bool = False, word: bool = False) -> Any:
    """A compiled ``regex`` pattern; ``regex_error`` (with the position) if it is invalid.
    ``word``: whole-word matches only (``WORD_BEFORE``).

    Plain text searched case-sensitively (``fixed_strings``, or a pattern without any regex
    syntax character) gets a ``LiteralPattern``, which finds exactly the same matches. A line
    break in the pattern (``\\n``) without ``multiline`` is a ``regex_error``, as in ripgrep: a
    search line by line would silently never match it."""
    if not multiline and _holds_line_break(pattern, fixed_strings):
        raise ToolError("regex_error", "the pattern holds a line break (\\n), which a search "
                        "line by line never matches", hint="pass multiline: true to match "
                        "across lines (as rg -U)", details={"pattern": pattern})
    if not ignore_case and not word and (fixed_strings
                                         or not REGEX_SYNTAX.intersection(pattern)):
        return LiteralPattern(pattern)
    try:
        return _compile_regex(pattern, ignore_case=ignore_case, fixed_strings=fixed_strings,
                              multiline=multiline, word=word)
    except RecursionError:  # groups nested hundreds deep
        raise ToolError("regex_error", "invalid regular expression: nested too deeply",
                        hint="use fewer nested groups", details={"pattern": pattern}) from None


def _holds_line_break(pattern: str, fixed_strings: bool) -> bool:
    """Whether ``pattern`` holds a line break: a newline (but in a regular expression with the
    ``x`` flag, where it is blank space), or (a regular expression) ``\\n``."""
    if fixed_strings:
        return "\n" in pattern
    if "\n" in pattern and not _verbose(pattern):
        return True
    i = pattern.find("\\")
    while 0 <= i < len(pattern) - 1:
        if pattern[i + 1] == "n":
            return True
        i = pattern.find("\\", i + 2)
    return False


def _verbose(pattern: str) -> bool:
    """Whether ``pattern`` turns on the ``x`` flag (``(?x)``, ``(?ix:...)``)."""
    at = pattern.find("(?")
    while at >= 0:
        end = at + 2
        while end < len(pattern) and (pattern[end].isalpha() or pattern[end] == "-"):
            end += 1
        if "x" in pattern[at + 2:end].split("-", maxsplit=1)[0]:
            return True
        at = pattern.find("(?", end)
    return False


def _compile_regex(pattern: str, *, ignore_case: bool, fixed_strings: bool, multiline: bool,
                   word: bool) -> Any:
    import regex

    flags = regex.MULTILINE | regex.VERSION0
    if ignore_case:
        flags |= regex.IGNORECASE
    if multiline:
        flags |= regex.DOTALL
    if fixed_strings and ignore_case:  # rg's case folding for the few the module folds more
        from zbtools.core.search.rust_syntax import folded_apart

        inner = "".join(folded_apart(c) or regex.escape(c) for c in pattern)
    elif fixed_strings:
        inner = regex.escape(pattern)
    else:
        inner = python_source(pattern, ignore_case=ignore_case, multiline=multiline)
    source = WORD_BEFORE + inner + WORD_AFTER if word else inner
    try:
        return regex.compile(source, flags)
    except regex.error as exc:
        pos = getattr(exc, "pos", None)
        if pos is not None and word:
            pos -= len(WORD_BEFORE)
        if inner != pattern or pos is None or not 0 <= pos <= len(pattern):
            pos = None  # a position in the translation would point at the wrong character
        details: dict[str, Any] = {"pattern": pattern, "error": str(getattr(exc, "msg", exc))}
        if pos is not None:
            details["position"] = pos
        where = f" at position {pos}" if pos is not None else ""
        raise ToolError("regex_error", f"invalid regular expression{where}: {details['error']}",
                        hint="fix the pattern, or pass fixed_strings: true to search for the "
                        "text literally", details=details) from None


def python_source(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> str:
    """The ``regex`` source for ``pattern``: ripgrep's syntax translated
    (``rust_syntax.translate``), or the pattern itself when it is not Rust syntax (lookaround,
    backreferences...: read as Python syntax). ``regex_error`` for Rust syntax that a search
    over text cannot match as ripgrep does."""
    from zbtools.core.search.rust_syntax import Unsupported, translate

    try:
        source = translate(pattern, multiline=multiline, ignore_case=ignore_case)
    except Unsupported as exc:
        raise ToolError("regex_error", f"unsupported regular expression: {exc}",
                        hint="remove (?-u) from the pattern: files are searched as UTF-8 text, "
                        "character by character",
                        details={"pattern": pattern, "error": str(exc)}) from None
    return pattern if source is None else source


def cut_line(line: str, column: int = 0, limit: int = MAX_LINE_CHARS) -> str:
    """``line`` if short enough; else ``limit`` characters around ``column``, with markers."""
    if len(line) <= limit:
        return line
    start = 0 if column < limit // 2 else min(column - limit // 5, len(line) - limit)
    end = start + limit
    head = f"[...{start} chars cut] " if start else ""
    tail = f" [...{len(line) - end} chars cut]" if end < len(line) else ""
    return head + line[start:end] + tail


class Hit:
    """One matching line (or, in multiline mode, one match and the lines it spans)."""

    __slots__ = ("after", "before", "line", "lines")

    def __init__(self, line: int, lines: list[str], before: list[str],
                 after: list[str]) -> None:
        self.line = line
        self.lines = lines
        self.before = before
        self.after = after


class SearchTimeout(Exception):
    """The pattern ran out of time on a file."""


def read_open(fd: int, max_bytes: int = WHOLE_FILE_BYTES) -> bytes | str:
    """The bytes of the regular text file open on ``fd`` (read from its current offset), or why
    not: ``binary``, ``too_large`` (over ``max_bytes``), ``unreadable`` or ``other`` (not a
    regular file)."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "other"
        if st.st_size > max_bytes:
            return "too_large"
        # One read of size + 1 bytes: a file that did not grow needs no second read for EOF.
        first = os.read(fd, st.st_size + 1)
        if len(first) <= st.st_size:
            if first.find(b"\0", 0, BINARY_PROBE) >= 0:
                return "binary"
            return first
        chunks: list[bytes] = [first]
        total = len(first)
        while True:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:  # grew while we read it
                return "too_large"
            chunks.append(chunk)
        data = b"".join(chunks)
        if data.find(b"\0", 0, BINARY_PROBE) >= 0:
            return "binary"
        return data
    except OSError:
        return "unreadable"


def plain_text(pattern: str) -> bool:
    """Whether ``pattern`` is text alone, matching itself in ripgrep and in the python engine:
    what the parse of its syntax would find is known without it (a cold call's ``re`` import
    then waits until the search runs)."""
    return SYNTAX_CHARACTERS.isdisjoint(pattern)


def parse_stdlib(pattern: str) -> tuple[Any, Any] | None:
    """(``re._parser``, the pattern's parse tree), or None when the stdlib parser is missing
    or cannot read the pattern (``regex``-only syntax, too deep, invalid)."""
    try:
        import re
        from re import _parser as parser  # type: ignore[attr-defined]  # 3.11-3.13, guarded
    except ImportError:  # pragma: no cover
        return None
    import warnings

    try:
        with warnings.catch_warnings():
            # "[[" and "&&" warn (FutureWarning) that their meaning may change: ripgrep's
            # meaning is the one kept (python_source), never shown as a warning
            warnings.simplefilter("ignore")
            return parser, parser.parse(pattern, 0)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None


def line_local(pattern: str, *, fixed_strings: bool, multiline: bool) -> bool:
    """Whether every match of ``pattern`` lies in one line and depends on that line only.

    True for literals, classes, ``\\d \\w \\s \\b``, ``^ $``, groups, alternation and
    repetition; False for lookaround, backreferences, conditionals, possessive and atomic
    groups, inline flags, ``\\A \\Z``, ``regex``-only syntax (``\\p{..}``) and multiline mode.
    These are also exactly the patterns ripgrep reads the same way (the rg engine's test)."""
    if multiline:
        return False
    if fixed_strings or plain_text(pattern):
        return True
    if not _reads_as_written(pattern):
        return False  # ripgrep syntax the python engine reads translated, or not Rust's
    got = parse_stdlib(pattern)
    if got is None:
        return False
    parser, parsed = got
    import re

    if parsed.state.flags & ~(re.UNICODE):
        return False  # inline flags: (?x), (?s), (?i)... read differently
    allowed = {parser.LITERAL, parser.NOT_LITERAL, parser.ANY, parser.IN, parser.BRANCH,
               parser.SUBPATTERN, parser.MAX_REPEAT, parser.MIN_REPEAT, parser.AT,
               parser.CATEGORY, parser.RANGE, parser.NEGATE}
    # \A and \Z mean something else to ripgrep; ^ $ \b \B are per line in both.
    anchors = {parser.AT_BEGINNING, parser.AT_END, parser.AT_BOUNDARY,
               parser.AT_NON_BOUNDARY}
    categories = {parser.CATEGORY_DIGIT, parser.CATEGORY_NOT_DIGIT, parser.CATEGORY_WORD,
                  parser.CATEGORY_NOT_WORD, parser.CATEGORY_SPACE, parser.CATEGORY_NOT_SPACE}

    def ok(items: Sequence[tuple[Any, Any]]) -> bool:
        for op, arg in items:
            if op not in allowed:
                return False
            if op is parser.AT and arg not in anchors:
                return False
            if op is parser.CATEGORY and arg not in categories:
                return False
            if op is parser.IN and not ok(arg):
                return False
            if op is parser.BRANCH and not all(ok(b) for b in arg[1]):
                return False
            if op is parser.SUBPATTERN and (arg[1] or arg[2] or not ok(arg[3])):
                return False  # (group, added flags, removed flags, body)
            if op in (parser.MAX_REPEAT, parser.MIN_REPEAT) and not ok(arg[2]):
                return False
        return True

    return ok(parsed.data)


def _reads_as_written(pattern: str) -> bool:
    """Whether ``pattern`` is Rust syntax that the python engine compiles unchanged."""
    from zbtools.core.search.rust_syntax import Unsupported, translate

    try:
        return translate(pattern) == pattern
    except Unsupported:
        return False


def required_literal(pattern: str) -> bytes | None:
    """A literal every match must contain (docs/internals/performance.md#required-literal), or None.

    The longest run of plain characters in the pattern's top-level sequence, from the stdlib
    parser (``re._parser``). Patterns it cannot parse (``regex``-only syntax), alternations,
    inline flags and runs shorter than 3 characters give None: then every file is searched.
    """
    if plain_text(pattern):
        return pattern.encode("utf-8") if len(pattern) >= 3 else None
    try:
        pattern = python_source(pattern)  # the literal of what the python engine matches
    except ToolError:
        return None
    got = parse_stdlib(pattern)
    if got is None:
        return None
    parser, parsed = got
    import re

    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    literal_op = parser.LITERAL
    best: list[int] = []
    run: list[int] = []
    for op, arg in parsed.data:
        if op is literal_op:
            run.append(arg)
            continue
        if len(run) > len(best):
            best = run
        run = []
    if len(run) > len(best):
        best = run
    if len(best) < 3:
        return None
    return "".join(chr(c) for c in best).encode("utf-8")


class Searcher:
    """Search files one by one against a shared deadline; see the module docstring."""

    def __init__(self, pattern: str, *, ignore_case: bool = False, fixed_strings: bool = False,
                 multiline: bool = False, before: int = 0, after: int = 0,
                 timeout: float = 10.0, max_file_bytes: int | None = None,
                 word: bool = False) -> None:
        self.pattern = pattern
        self.ignore_case = ignore_case
        self.fixed_strings = fixed_strings
        self.word = word  # whole words only (rg -w): the literal below still prefilters
        self._regex: Any = None
        # what one file's result depends on besides its bytes (the warm cache's key)
        self.cache_key = (pattern, ignore_case, fixed_strings, multiline, before, after,
                          max_file_bytes, word)
        # the size cap the caller asked for (None: none, every file is searched, as rg does)
        self.max_file_bytes = max_file_bytes
        self.multiline = multiline
        self.before = before
        self.after = after
        self.deadline = time.monotonic() + timeout
        self.buffer: bytearray | None = None  # reused for every file read (see search_file)
        self.literal: bytes | None = None
        if not ignore_case and pattern:
            self.literal = pattern.encode("utf-8") if fixed_strings else \
                required_literal(pattern)

    @property
    def regex(self) -> Any:
        """The compiled pattern, compiled when first needed: the native engine's ripgrep
        matches most patterns itself, and the ``regex`` module is costly to import."""
        if self._regex is None:
            self._regex = compile_pattern(self.pattern, ignore_case=self.ignore_case,
                                          fixed_strings=self.fixed_strings,
                                          multiline=self.multiline, word=self.word)
        return self._regex

    @regex.setter
    def regex(self, compiled: Any) -> None:
        self._regex = compiled

    def compile(self) -> None:
        """Compile the pattern now (``regex_error`` for an invalid one)."""
        _ = self.regex

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def search_file(self, dir_fd: int, name: str,
                    limit: int | None = None) -> tuple[FileStatus, list[Hit]]:
        """One file's status (``ok``, or why it was not searched) and hits (at most ``limit``).

        Raises ``SearchTimeout`` when the deadline passes while the pattern runs.

        A file is read into one reused buffer (``READ_BUFFER``): most files fit, and those
        without the pattern's literal are then never copied, decoded or even allocated, which
        halves the read loop. A file that fills the buffer is read whole the usual way.
        """
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            return "unreadable", []
        try:
            buffer = self.buffer
            if buffer is None:
                buffer = self.buffer = bytearray(READ_BUFFER)
            try:
                size = os.readv(fd, [buffer])
            except OSError:
                return "unreadable", []
            if size < len(buffer):
                cap = self.max_file_bytes
                if cap is not None and size > cap:  # a cap under the buffer's size
                    return "too_large", []
                if buffer.find(b"\0", 0, min(size, BINARY_PROBE)) >= 0:
                    return "binary", []
                return "ok", self.search_bytes(buffer, size, limit)
            os.lseek(fd, 0, os.SEEK_SET)
            return self._search_big(fd, limit, self.max_file_bytes)
        finally:
            os.close(fd)

    def search_open(self, fd: int, limit: int | None = None) -> tuple[FileStatus, list[Hit]]:
        """``search_file`` on an open descriptor, read from its current offset."""
        return self._search_big(fd, limit, self.max_file_bytes)

    def _search_big(self, fd: int, limit: int | None,
                    cap: int | None) -> tuple[FileStatus, list[Hit]]:
        """A file that may be big: read whole up to ``WHOLE_FILE_BYTES``, streamed above it (line
        mode), read whole up to ``cap`` in multiline mode; ``too_large`` over ``cap`` (and, in
        multiline mode without a cap this large, over ``WHOLE_FILE_BYTES``)."""
        try:
            st = os.fstat(fd)
        except OSError:
            return "unreadable", []
        if not stat.S_ISREG(st.st_mode):
            return "other", []
        if cap is not None and st.st_size > cap:
            return "too_large", []
        if st.st_size <= WHOLE_FILE_BYTES or self.multiline:
            # multiline matches need the whole text: only as big as a cap asked for allows
            return self._search_data(read_open(fd, max(cap or 0, WHOLE_FILE_BYTES)), limit)
        return self.search_stream(fd, limit, cap)

    def _search_data(self, data: bytes | str, limit: int | None) -> tuple[FileStatus, list[Hit]]:
        if isinstance(data, str):
            return data, []
        return "ok", self.search_bytes(data, len(data), limit)

    def search_stream(self, fd: int, limit: int | None = None,
                      cap: int | None = None) -> tuple[FileStatus, list[Hit]]:
        """Line mode on a file too big to read whole, from ``fd``'s offset, in blocks of whole
        lines (``STREAM_BLOCK`` bytes and the rest of a line): the same hits as reading it whole,
        context lines across block boundaries included, in memory bounded by the block (a line
        over ``MAX_STREAM_LINE`` makes the file ``too_large``, as does growing past ``cap``)."""
        hits: list[Hit] = []
        tail: list[str] = []  # the last `before` lines of the blocks searched so far
        open_hits: list[Hit] = []  # hits still short of `after` context lines
        lines_done = 0  # lines in the blocks searched so far
        carry = b""
        read = 0
        first = True
        try:  # the whole probe, whatever the block size: the same rule as a whole read
            if os.pread(fd, BINARY_PROBE, os.lseek(fd, 0, os.SEEK_CUR)).find(b"\0") >= 0:
                return "binary", []
        except OSError:
            return "unreadable", []
        while True:
            try:
                block = os.read(fd, STREAM_BLOCK)
            except OSError:
                return "unreadable", []
            read += len(block)
            if cap is not None and read > cap:
                return "too_large", []
            if first:
                if block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
                first = False
            data = carry + block if carry else block
            del block
            if len(data) == len(carry):  # end of file
                if not data:
                    break
                cut = len(data)  # the last line, without a newline
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    if len(data) > MAX_STREAM_LINE:
                        return "too_large", []
                    carry = data
                    continue
            carry = data[cut:]
            # one copy of the block as text; the bytes are only looked at in place
            found = self.literal is None or data.find(self.literal, 0, cut) >= 0
            text = str(memoryview(data)[:cut], "utf-8", "replace")
            del data
            if open_hits:
                open_hits = _extend_after(open_hits, text, self.after)
            full = limit is not None and len(hits) >= limit
            if not full and found:
                window = "\n".join(tail) + "\n" + text if tail else text
                wanted = None if limit is None else limit - len(hits) + len(tail)
                for hit in self.search_text(window, wanted):
                    if hit.line <= len(tail):
                        continue  # a line of the previous block: reported then
                    if limit is not None and len(hits) >= limit:
                        break
                    hit.line += lines_done - len(tail)
                    hits.append(hit)
                    if len(hit.after) < self.after:
                        open_hits.append(hit)
            if limit is not None and len(hits) >= limit and not open_hits:
                break
            lines_done += text.count("\n")
            if self.before:
                body = text[:-1] if text.endswith("\n") else text
                tail = (tail + body.rsplit("\n", self.before)[-self.before:])[-self.before:]
        return "ok", hits

    def search_bytes(self, data: bytes | bytearray, size: int,
                     limit: int | None = None) -> list[Hit]:
        """The hits in ``data[:size]`` (a file's bytes, BOM included).

        Only a file holding the pattern's literal is copied and decoded. The regex then scans
        the whole text: searching just the lines that hold the literal loses where the literal
        is frequent (benchmarks/README.md#figures-behind-the-code).
        """
        literal = self.literal
        if literal is not None and data.find(literal, 0, size) < 0:
            return []
        return self.search_text(_text(bytes(data[:size])), limit)

    def search_text(self, text: str, limit: int | None = None) -> list[Hit]:
        hits: list[Hit] = []
        pos = 0
        line_no = 1
        counted_to = 0  # line_no is the number of the line holding offset counted_to
        size = len(text)
        while pos <= size and (limit is None or len(hits) < limit):
            left = self.time_left()
            if left <= 0:
                raise SearchTimeout
            try:
                m = self.regex.search(text, pos, timeout=left)
            except TimeoutError:
                raise SearchTimeout from None
            if m is None:
                break
            start = m.start()
            if start == size and (size == 0 or text[-1] == "\n"):
                break  # past the last line: there is no line here to report
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            if line_end < 0:
                line_end = size
            if not self.multiline and m.end() > line_end:
                # The match crossed a line end: grep semantics look inside this line only.
                try:
                    m = self.regex.search(text, line_start, line_end, timeout=max(left, 0.001))
                except TimeoutError:
                    raise SearchTimeout from None
                if m is None:
                    pos = line_end + 1
                    continue
                start = m.start()
            line_no += text.count("\n", counted_to, line_start)
            counted_to = line_start
            first_end = line_end  # the end of the line the match starts on
            if self.multiline:
                last_end = text.find("\n", max(m.end() - 1, start))
                if last_end < 0:
                    last_end = size
                block = text[line_start:last_end].split("\n")
                lines = [cut_line(block[0], start - line_start)]
                lines += [cut_line(extra) for extra in block[1:]]
                line_end = last_end
            else:
                lines = [cut_line(text[line_start:line_end], start - line_start)]
            hits.append(Hit(line_no, lines, self._before(text, line_start),
                            self._after(text, line_end)))
            # one hit per line it starts on: the next search starts on the next line, or, after
            # a match over several lines, where it ended (a match may start on that line, as in
            # rg -U)
            pos = m.end() if m.end() > first_end + 1 else first_end + 1
        return hits

    def _before(self, text: str, line_start: int) -> list[str]:
        out: list[str] = []
        end = line_start - 1  # the newline ending the previous line
        while len(out) < self.before and end >= 0:
            begin = text.rfind("\n", 0, end) + 1
            out.append(cut_line(text[begin:end]))
            end = begin - 1
        out.reverse()
        return out

    def _after(self, text: str, line_end: int) -> list[str]:
        out: list[str] = []
        begin = line_end + 1
        size = len(text)
        while len(out) < self.after and begin < size:
            end = text.find("\n", begin)
            if end < 0:
                end = size
            out.append(cut_line(text[begin:end]))
            begin = end + 1
        return out


def _extend_after(open_hits: list[Hit], text: str, after: int) -> list[Hit]:
    """Give the hits of earlier blocks their ``after`` context lines from ``text`` (the next
    block, whole lines); the hits still short of them."""
    body = text[:-1] if text.endswith("\n") else text
    first = body.split("\n", after)[:after]
    still: list[Hit] = []
    for hit in open_hits:
        hit.after.extend(cut_line(line) for line in first[:after - len(hit.after)])
        if len(hit.after) < after:
            still.append(hit)
    return still


def _text(data: bytes) -> str:
    """File bytes as searchable text: a UTF-8 BOM is dropped (as ripgrep does; otherwise line 1
    would carry an invisible U+FEFF that an agent copies into old_text), bad bytes -> U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "replace")

