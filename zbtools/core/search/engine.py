"""The search engine behind grep_search and codebase_search (SECURITY 4.7, PERFORMANCE 4).

``compile_pattern`` turns the caller's pattern into a ``regex`` pattern object (the third-party
``regex`` module, imported here and only here, because it can stop a match after a timeout):
``ignore_case`` adds IGNORECASE, ``fixed_strings`` escapes the pattern, ``multiline`` adds
DOTALL so a match may span lines. An invalid pattern raises ``regex_error`` with the position.
Plain text searched case-sensitively skips the module altogether (``LiteralPattern``).

``Searcher.search_file`` reads one file's bytes through a directory descriptor (never a path
string), skips it as ``binary`` (a NUL byte in its first 8 KiB) or ``too_large`` (over
``max_file_bytes``, a cap only when the caller gives one, as ripgrep's ``--max-filesize``), and
reports the matching lines: line-oriented like grep by default (a match never spans lines; one
hit per matching line), whole matches in multiline mode. A file over ``WHOLE_FILE_BYTES`` is
never read whole in line mode: it is searched in blocks of whole lines (``search_stream``), so
memory stays bounded whatever its size (a single line over ``MAX_STREAM_LINE`` makes it
``too_large``); multiline mode needs the whole text, so it reads a file over
``WHOLE_FILE_BYTES`` only when ``max_file_bytes`` allows that much explicitly, and otherwise
reports it ``too_large``: every file a search leaves out is counted, never passed over. A fixed
string
searched case-sensitively is first looked for in the raw bytes, so files without it are never
decoded. Lines over ``MAX_LINE_CHARS`` are cut, around the match, with a marker.

Limits and failure modes: every file gets the time left before a global deadline; a pattern that
runs out of time stops the search, which returns what it found with ``timed_out`` set, or fails
with ``regex_timeout`` when not a single file could be searched. Files are decoded as UTF-8 with
replacement characters, so matches in other encodings only work for their ASCII parts.
"""

from __future__ import annotations

import os
import stat
import time

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    from zbtools.core.search.walk import Entry, Skipped, Walk

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


class LiteralPattern:
    """What the search needs of a compiled pattern (``search`` -> ``start``/``end``), for plain
    text: ``str.find`` instead of importing and compiling ``regex`` (10 ms of a call)."""

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


def compile_pattern(pattern: str, *, ignore_case: bool = False, fixed_strings: bool = False,
                    multiline: bool = False) -> Any:
    """A compiled ``regex`` pattern; ``regex_error`` (with the position) if it is invalid.

    Plain text searched case-sensitively (``fixed_strings``, or a pattern without any regex
    syntax character) gets a ``LiteralPattern``, which finds exactly the same matches."""
    if not ignore_case and (fixed_strings or not REGEX_SYNTAX.intersection(pattern)):
        return LiteralPattern(pattern)
    import regex

    flags = regex.MULTILINE | regex.VERSION0
    if ignore_case:
        flags |= regex.IGNORECASE
    if multiline:
        flags |= regex.DOTALL
    source = regex.escape(pattern) if fixed_strings else pattern
    try:
        return regex.compile(source, flags)
    except regex.error as exc:
        pos = getattr(exc, "pos", None)
        details: dict[str, Any] = {"pattern": pattern, "error": str(getattr(exc, "msg", exc))}
        if pos is not None:
            details["position"] = pos
        where = f" at position {pos}" if pos is not None else ""
        raise ToolError("regex_error", f"invalid regular expression{where}: {details['error']}",
                        hint="fix the pattern, or pass fixed_strings: true to search for the "
                        "text literally", details=details) from None


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


def parse_stdlib(pattern: str) -> tuple[Any, Any] | None:
    """(``re._parser``, the pattern's parse tree), or None when the stdlib parser is missing
    or cannot read the pattern (``regex``-only syntax, too deep, invalid)."""
    try:
        import re
        from re import _parser as parser  # type: ignore[attr-defined]  # 3.11-3.13, guarded
    except ImportError:  # pragma: no cover
        return None
    try:
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
    if fixed_strings:
        return True
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


def required_literal(pattern: str) -> bytes | None:
    """A literal every match must contain (PERFORMANCE 4, technique 4), or None.

    The longest run of plain characters in the pattern's top-level sequence, from the stdlib
    parser (``re._parser``). Patterns it cannot parse (``regex``-only syntax), alternations,
    inline flags and runs shorter than 3 characters give None: then every file is searched.
    """
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
                 timeout: float = 10.0, max_file_bytes: int | None = None) -> None:
        self.pattern = pattern
        self.ignore_case = ignore_case
        self.fixed_strings = fixed_strings
        self._regex: Any = None
        # what one file's result depends on besides its bytes (the warm cache's key)
        self.cache_key = (pattern, ignore_case, fixed_strings, multiline, before, after,
                          max_file_bytes)
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
        matches most patterns itself, and the ``regex`` module costs 12 ms to import."""
        if self._regex is None:
            self._regex = compile_pattern(self.pattern, ignore_case=self.ignore_case,
                                          fixed_strings=self.fixed_strings,
                                          multiline=self.multiline)
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

        Only a file holding the pattern's literal is copied and decoded. (Searching just the
        lines that hold the literal was measured too: 2% faster for ``def get_``, 60% slower for
        ``class \\w+\\(.*Error\\)`` whose literal is frequent; the regex module's own scan
        over the whole text wins.)
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
            pos = line_end + 1  # one hit per line; the next search starts on the next line
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


def split_globs(text: str) -> list[str]:
    """``"*.rs, *.{ts,tsx}"`` -> ``["*.rs", "*.ts", "*.tsx"]``: commas outside braces split."""
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}" and depth > 0)
        current += ch
    parts.append(current)
    out: list[str] = []
    for part in (p.strip() for p in parts):
        if part:
            out.extend(expand_braces(part))
    return out


def expand_braces(glob: str) -> list[str]:
    """``a.{x,y}`` -> ``["a.x", "a.y"]`` (nested braces too); unbalanced braces stay literal."""
    open_at = glob.find("{")
    if open_at < 0:
        return [glob]
    depth = 0
    for i in range(open_at, len(glob)):
        if glob[i] == "{":
            depth += 1
        elif glob[i] == "}":
            depth -= 1
            if depth == 0:
                inner = glob[open_at + 1:i]
                options = split_globs(inner) if "," in inner else ["{" + inner + "}"]
                return [head + tail for head in (glob[:open_at] + o for o in options)
                        for tail in expand_braces(glob[i + 1:])]
    return [glob]


class PathFilter:
    """Which files to search: globs (``!`` excludes; no ``/`` means the base name) and types."""

    def __init__(self, globs: list[str], types: list[str]) -> None:
        self.include: list[str] = []
        self.exclude: list[str] = []
        for glob in globs:
            if glob.startswith("!"):
                self.exclude.append(glob[1:])
            else:
                self.include.append(glob)
        self.type_globs: list[str] = []
        if types:
            from zbtools.core.search.filetypes import TYPE_ALIASES, TYPES
        for name in types:
            key = TYPE_ALIASES.get(name.lower(), name.lower())
            if key not in TYPES:
                from zbtools.core.call.args import did_you_mean

                known = [*TYPES, *TYPE_ALIASES]
                raise ToolError("invalid_arguments", f"unknown file type {name!r}"
                                + did_you_mean(name.lower(), known),
                                hint=f"{len(TYPES)} types are known, as in `rg --type-list` "
                                "(py, js, ts, rust, go, java, c, cpp, html, css, md, ...); "
                                "or use glob, e.g. \"*.ext\"",
                                details={"type": name, "known": sorted(known)})
            self.type_globs.extend(TYPES[key])

    @property
    def active(self) -> bool:
        return bool(self.include or self.exclude or self.type_globs)

    @staticmethod
    def _match(globs: list[str], rel: str, name: str) -> bool:
        from fnmatch import fnmatchcase

        for glob in globs:
            if "/" in glob:
                g = glob[1:] if glob.startswith("/") else glob
                if fnmatchcase(rel, g) or (g.startswith("**/") and fnmatchcase(rel, g[3:])):
                    return True
            elif fnmatchcase(name, glob):
                return True
        return False

    def accepts(self, rel: str, name: str) -> bool:
        """``rel``: the path relative to the searched directory; ``name``: its base name."""
        if self.exclude and self._match(self.exclude, rel, name):
            return False
        if self.include and not self._match(self.include, rel, name):
            return False
        return not self.type_globs or self._match(self.type_globs, rel, name)


def files_to_search(walk: Walk, path_filter: PathFilter) -> Iterator[Entry]:
    """The regular files of ``walk`` that ``path_filter`` accepts, in walk order (while one is
    handled, ``walk.parent_fd`` is its directory)."""
    prefix = "" if walk.rel == "." else walk.rel + "/"
    active = path_filter.active
    for entry in walk:
        if entry.kind != "file":
            continue
        if active and not path_filter.accepts(entry.rel[len(prefix):], entry.name):
            continue
        yield entry


class RgRequest:
    """What the rg and native engines need besides the searcher: the binary and the pattern as
    given. ``native``: ripgrep also walks (``native``); ``fallback`` is the request to use when
    the native engine declines (None: the python engine)."""

    def __init__(self, binary: str, pattern: str, *, ignore_case: bool,
                 fixed_strings: bool, native: bool = False,
                 fallback: RgRequest | None = None) -> None:
        self.binary = binary
        self.pattern = pattern
        self.ignore_case = ignore_case
        self.fixed_strings = fixed_strings
        self.native = native
        self.fallback = fallback


class FileHits:
    """The hits of one file (``count`` is its number of hits, possibly more than listed)."""

    __slots__ = ("count", "hits", "path")

    def __init__(self, path: str, hits: list[Hit], count: int) -> None:
        self.path = path
        self.hits = hits
        self.count = count


class Outcome:
    """What ``search_tree`` found, and what it skipped."""

    def __init__(self, path: str, skipped: Skipped) -> None:
        self.path = path
        self.files: list[FileHits] = []
        self.total = 0  # hits found (lines, or matches in multiline mode)
        self.files_searched = 0
        self.truncated = False
        self.timed_out = False
        self.skipped = skipped
        self.loops = 0
        self.depth_limited = False  # directories beyond walk.MAX_DEPTH were not entered
        self.engine = "python"
        self.named = False  # the path named a file (searched whatever the walk's rules)
        # told every file's result before it is accounted (the warm cache keeps them):
        # (rel, status, hits, whether hits is every hit of the file)
        self.observer: Callable[[str, FileStatus, list[Hit], bool], None] | None = None


def _text(data: bytes) -> str:
    """File bytes as searchable text: a UTF-8 BOM is dropped (as ripgrep does; otherwise line 1
    would carry an invisible U+FEFF that an agent copies into old_text), bad bytes -> U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "replace")


def want(outcome: Outcome, limit: int, per_file: bool) -> int | None:
    """How many hits to collect from the next file (None: all, to count them)."""
    if per_file:
        return None
    return max(limit - outcome.total, 0) + 1


def evaluate(searcher: Searcher, dir_fd: int, name: str,
             wanted: int | None) -> tuple[FileStatus, list[Hit]]:
    """Search one file: its status and hits (at most ``wanted``); a timeout is a status."""
    try:
        return searcher.search_file(dir_fd, name, wanted)
    except SearchTimeout:
        return "timeout", []


def record(outcome: Outcome, rel: str, status: FileStatus, hits: list[Hit], limit: int,
           per_file: bool) -> bool:
    """Account one file's result into ``outcome`` in walk order; ``False``: stop here."""
    if outcome.observer is not None:
        # a file searched for fewer hits than it may hold was cut at the number wanted then,
        # which is at least what is still wanted now
        outcome.observer(rel, status, hits, per_file or len(hits) < limit - outcome.total + 1)
    used = len(outcome.files) if per_file else outcome.total
    if used >= limit:
        # One more searchable file with a match: the results are cut (files skipped past the
        # limit are not counted, the search stopped before them).
        outcome.truncated = status == "ok" and bool(hits)
        return not outcome.truncated
    if status == "timeout":
        outcome.timed_out = True
        return False
    if status != "ok":
        if status != "other":
            setattr(outcome.skipped, status, getattr(outcome.skipped, status) + 1)
        return True
    outcome.files_searched += 1
    if not hits:
        return True
    if not per_file and outcome.total + len(hits) > limit:
        hits = hits[:limit - outcome.total]
        outcome.truncated = True
    outcome.total += len(hits)
    outcome.files.append(FileHits(rel, hits, len(hits)))
    return not outcome.truncated


class Slot:
    """One file of a parallel search, in walk order: filled in when its result is known."""

    __slots__ = ("fd", "hits", "mark", "rel", "status")

    def __init__(self, rel: str, mark: tuple[int, int, int, int]) -> None:
        self.rel = rel
        self.status: FileStatus | None = None
        self.hits: list[Hit] = []
        self.fd = -1  # the rg engine keeps the vetted file open here
        # The walk's own skip counts when it produced this file: a search that stops here
        # reports those, as a one-process search (whose walk stops here too) would.
        self.mark = mark


class Replay:
    """Results that arrive out of order, accounted in walk order through ``record``.

    The engines that search ahead of the accounting (a forked helper, rg batches) give every
    file a ``slot`` as the walk meets it and call ``advance`` when results come in; the known
    prefix is recorded, so limits, truncation and counts are those of the one-process search,
    and ``stopped`` tells the walk to end.
    """

    def __init__(self, outcome: Outcome, limit: int, per_file: bool) -> None:
        self.outcome = outcome
        self.limit = limit
        self.per_file = per_file
        self.queue: list[Slot] = []
        self.head = 0
        self.stopped = False
        self.files_unreadable = 0  # "unreadable" files recorded (the rest are the walk's)
        self.stop_mark: tuple[int, int, int, int] | None = None

    def slot(self, rel: str) -> Slot:
        sk = self.outcome.skipped
        slot = Slot(rel, (sk.ignored, sk.hidden, sk.excluded_dirs,
                          sk.unreadable - self.files_unreadable))
        self.queue.append(slot)
        return slot

    def advance(self) -> None:
        outcome = self.outcome
        queue = self.queue
        while not self.stopped and self.head < len(queue):
            slot = queue[self.head]
            if slot.status is None:
                break
            self.head += 1
            counted = outcome.skipped.unreadable
            go_on = record(outcome, slot.rel, slot.status, slot.hits, self.limit, self.per_file)
            self.files_unreadable += outcome.skipped.unreadable - counted
            if not go_on:
                self.stopped = True
                self.stop_mark = slot.mark
        if self.head > 4096:
            del queue[:self.head]
            self.head = 0

    def settle(self) -> None:
        """After the walk ended: the walk's skip counts as they were at the stopping file (the
        walk may have gone on before it learnt that the search had stopped)."""
        if self.stop_mark is not None:
            sk = self.outcome.skipped
            sk.ignored, sk.hidden, sk.excluded_dirs, walk_unreadable = self.stop_mark
            sk.unreadable = walk_unreadable + self.files_unreadable
