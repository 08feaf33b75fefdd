"""Search file contents with a regular expression, like ripgrep: matching lines with their numbers.

Searches every text file below ``path`` (default ``.``; a single file works too) for
``pattern`` (a regular expression in ripgrep's syntax, e.g. ``\\x{54}``, ``[[:alpha:]]``,
``[a-z&&[^aeiou]]``, ``\\z``, read as rg reads it; beyond it, Python's lookaround and
backreferences; ``fixed_strings`` searches the text literally, ``case_insensitive`` ignores
case). Matching is per line, like grep: one result per
matching line; ``multiline`` lets a match span lines (``.`` then matches newlines too).
``output_mode`` picks the answer: ``content`` (default: each matching line with ``path``,
``line``, ``text`` and, with ``before_context``/``after_context``/``context``, the lines around
it), ``files_with_matches`` (the paths only) or ``count`` (matching lines per file).
``word_regexp`` keeps only whole-word matches (no word character just before or after, as
``rg -w``); ``max_count`` keeps at most that many matching lines per file (``rg -m``). Filter the
files with ``glob`` (``*.py``, ``src/**/*.ts``, a comma-separated list, ``*.{ts,tsx}``, ``!``
excludes, also what lies under a directory it matches; read as ``rg -g`` reads them: ``*`` stays
within one directory, ``**/`` spans any number, a glob without ``/`` matches the base name) and
``type`` (``py``, ``js``, ``ts``, ``rust``, ``go``, ``java``, ``c``, ``cpp``, ``md``, ``json``,
``yaml``, ``toml``, ``sh``).
Results come in path order (sorted, directories depth-first), the same on every run. Text output
is ripgrep's ``path:line:text`` (context lines ``path-line-text``, ``--`` between groups).

Like list_directory, hidden files, files matched by ``.gitignore``/``.ignore``/``.rgignore`` and the
default excluded directories (``.git``, ``node_modules``, ``target``...) are not searched but
counted in ``skipped``, as are binary files (a NUL byte in the first 8 KiB; a file whose first NUL
byte comes later is searched as text); ``include_hidden``, ``include_ignored`` and ``exclude_dirs``
bring them back. Every text file is searched whatever its size, as rg does: files over 10 MiB are
searched in blocks of whole lines, never read whole, so memory stays bounded. ``max_filesize`` (like
rg's ``--max-filesize``: ``50M``, ``2G``, ``512K`` or bytes) sets a size cap only when given; files
over it are counted in ``skipped.too_large``. ``multiline`` mode needs a file's whole text, so it
reads files over 10 MiB only up to a ``max_filesize`` given, and counts the others as ``too_large``.
Whatever a search leaves out that it would have searched (``too_large``, ``unreadable``: permission
denied, or removed while the search ran) makes ``total_is_lower_bound`` true, with a warning naming
what would include it.

``engine`` picks who walks and matches: ``python`` (our walk, the ``regex`` module, with a
per-file timeout), ``rg`` (a ripgrep binary searches the files our walk chose, handed over as open
descriptors), ``native`` (one ripgrep process walks and matches, its walk made ours by flags and
checked by its log; where the two walks could differ another engine answers) or ``auto``
(default: native in a one-shot call when ripgrep can match the pattern itself; otherwise rg when
the pattern has no literal text at all, e.g. ``\\w+\\(\\w+\\)$``, else python). Every
engine gives the same files, matches, order and counts; the result says which ran.

``show_scope`` labels each match (content mode) with the innermost definition whose lines hold
it, as grep-ast does for aider: ``scope`` with its ``kind`` (function, method, class...),
``qualname`` (``Class.method``), ``start_line`` and ``end_line``; no ``scope`` at the top level.
Files in a language without definitions (see outline: Python, JavaScript, TypeScript, Go, Rust,
Java, C, C++, C#, Ruby, PHP, Bash) get no label and are listed in ``files_without_scope``. The
text form puts a header ``@@ path: method A.f (lines 2-4)`` before the matches of each
definition.

Limits and failure modes: at most ``head_limit`` results (default 200: lines in content mode, files
otherwise; ``truncated`` tells; ``0`` means no cap); ``total_matches`` counts what was found before
the search stopped, so ``total_is_lower_bound`` says when more may exist (a search that stopped
early or left files out, as above); lines over 500 characters
are cut around the match with a marker. The whole search has ``timeout`` seconds (default 10): a
pattern that backtracks catastrophically stops it with what was found so far and
``timed_out: true``, or fails with ``regex_timeout`` if no file could be searched. Errors:
``regex_error`` (invalid pattern, with its position), ``not_found``, ``outside_workspace``,
``invalid_arguments`` (unknown type, a ``max_filesize`` that is not a size; ``engine: rg``
without a binary or with a pattern outside the shared syntax).
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.core.search.entries import WalkSwitches
from zbtools.toolkit.grep import (
    GrepResult,
    found,
    label_scopes,
    matched_paths,
    render,
    to_result,
    warn_skips,
    warn_walk_notes,
)
from zbtools.toolkit.params import DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context
    from zbtools.core.search.request import Engine

DEFAULT_LIMIT = 200
MAX_LIMIT = 10_000
NO_CAP = 2**62  # head_limit 0
MAX_CONTEXT = 50


class Params(WalkSwitches):
    pattern: str = field(aliases=("query", "regex"),
                         help="Regular expression to search for (see fixed_strings)")
    path: str = field(default=".", aliases=DIR_ALIASES,
                      help="File or directory to search, relative to the workspace root")
    glob: str | None = field(default=None, aliases=("include", "g"),
                             help="Only files matching these globs, comma-separated: '*.py', "
                             "'src/**/*.ts', '*.{ts,tsx}', '!*_test.go' excludes; a glob "
                             "without '/' matches the base name")
    type: str | None = field(default=None, aliases=("t",),
                             help="Only files of this type, as `rg --type-list` "
                             "names them: py, js, ts, rust, go, java, c, cpp, html, css, md, "
                             "json, yaml, sh, ...")
    case_insensitive: bool = field(default=False, aliases=("ignore_case", "i"),
                                   help="Ignore case when matching")
    fixed_strings: bool = field(default=False, aliases=("F",),
                                help="Treat the pattern as literal text, not a regex")
    word_regexp: bool = field(
        default=False, aliases=("w",),
        help="Only matches that are whole words: no word character just before or just after "
        "the match, as rg -w")
    multiline: bool = field(default=False,
                            help="Let a match span lines ('.' also matches newlines)")
    output_mode: Literal["content", "files_with_matches", "count"] = field(
        default="content", help="content: matching lines; files_with_matches: paths only; "
        "count: matching lines per file",
        switches={"l": "files_with_matches", "files_with_matches": "files_with_matches",
                  "c": "count", "count": "count"})
    before_context: int | None = field(
        default=None, minimum=0, maximum=MAX_CONTEXT, aliases=("B",),
        help="Lines of context before each match (content mode; wins over context)")
    after_context: int | None = field(
        default=None, minimum=0, maximum=MAX_CONTEXT, aliases=("A",),
        help="Lines of context after each match (content mode; wins over context)")
    context: int | None = field(default=None, minimum=0, maximum=MAX_CONTEXT, aliases=("C",),
                                help="Lines of context before and after each match (sets "
                                "both when they are not given)")
    head_limit: int = field(default=DEFAULT_LIMIT, minimum=0, maximum=MAX_LIMIT,
                            aliases=("max_results",),
                            help="Most results: matching lines in content mode, files "
                            "otherwise (at most 10000; 0: no cap)")
    max_count: int | None = field(
        default=None, minimum=0, aliases=("m",),
        help="Most matching lines per file, as rg -m: a file's later matches are left out "
        "(count mode counts at most this many; the last one keeps its context lines)")
    max_filesize: str | None = field(
        default=None, help="Skip files larger than this, as rg --max-filesize: bytes or a "
        "number with K, M or G (e.g. '50M'); default: no cap, every file is searched (in "
        "multiline mode, which reads files whole: those up to 10M, or up to this size)")
    timeout: float = field(default=10.0, minimum=0.001, maximum=300,
                           help="Seconds the whole search may take before it stops")
    show_scope: bool = field(
        default=False, aliases=("with_scope",),
        help="Label each match (content mode) with the innermost definition around it: kind, "
        "dotted name, lines; files in languages without definitions get no label")
    engine: Literal["auto", "python", "rg", "native"] = field(
        default="auto", help="Who walks and matches: python (our walk, the regex module), rg "
        "(our walk, a ripgrep binary matches), native (ripgrep walks and matches; where its "
        "walk could differ from ours, another engine answers), auto (native when it can, else "
        "python or rg); every engine gives the same files, results and counts")


def choose_engine(params: Params, ctx: Context, prefilter: bytes | None) -> list[Engine]:
    """The engines to try, in order, for engine native/rg/auto (the python engine ends the
    chain: it answers when the others decline).

    ``auto`` takes the native engine (ripgrep walks and matches in one process) in a one-shot
    call whenever the pattern reads the same to both (``native.usable``): its walk is what a
    fresh process pays most for (measured on a 6,600-file, 266 MB corpus: ``def get_`` 3.4x
    ``rg -n`` with the python walk). In a long-lived session (``batch``, ``mcp``) the warm walk
    of the python engine is faster, and where the native engine declines, ``auto`` falls back
    as before: the rg engine only when the pattern holds no literal at all (``prefilter``, in
    any letter case), whose regex would otherwise run over every line; with a literal the
    python engine is as fast (measured in one process: ``-i 'def get_'`` 0.21 s against 0.23
    s for rg)."""
    from zbtools.contract import ToolError
    from zbtools.core.search.tree import PYTHON

    if params.engine == "python":
        return [PYTHON]
    per_file = params.output_mode != "content"
    want_native = params.engine == "native" or (
        params.engine == "auto" and ctx.search_cache is None and not params.multiline)
    if not want_native and prefilter is not None and params.engine == "auto":
        return [PYTHON]  # the common warm case: decided without a PATH search or a pattern parse
    from zbtools.core.search.ripgrep import compatible, find_rg

    binary = find_rg(ctx.env)
    fits = compatible(params.pattern, fixed_strings=params.fixed_strings,
                      multiline=params.multiline)
    native = False
    if want_native and binary is not None and fits:
        from zbtools.core.search.native_plan import plan

        how = plan(params.pattern, fixed_strings=params.fixed_strings,
                   multiline=params.multiline, per_file=per_file, word=params.word_regexp)
        # auto leaves out the literal-then-verify plan: measured slower than the python
        # engine on the real corpus (202 ms against 153 ms for class \w+\(.*Error\))
        native = how is not None and (params.engine == "native" or how.literal is None)
    if params.engine in ("rg", "native") and (binary is None or not fits
                                              or (params.engine == "native" and not native)):
        why = ("no rg binary found (ZBTOOLS_RG, PATH, the interpreter's scripts directory; "
               "zbtools brings the ripgrep wheel where one exists for the platform, "
               "elsewhere install ripgrep with the system's package manager)"
               if binary is None else f"the pattern uses syntax the {params.engine} engine does "
               "not read the same way (lookaround, backreferences, inline flags, \\p{..}, "
               "\\A, multiline..." + ("; for native also a '.' other than one .* or .+ "
                                       "(or several .*), negated classes, \\W \\S \\D, "
                                       "word boundaries (\\b, word_regexp) "
                                       "without a literal of 3 characters that every match "
                                       "holds)" if params.engine == "native" else ")"))
        raise ToolError("invalid_arguments", f"engine {params.engine}: {why}",
                        hint="use engine: auto or python", details={"engine": params.engine})
    if binary is None or not fits:
        return [PYTHON]
    chain: list[Engine] = []
    if native:
        from zbtools.core.search.native import NativeEngine

        chain.append(NativeEngine(binary))
    if params.engine == "rg" or (params.engine == "auto" and prefilter is None):
        from zbtools.core.search.ripgrep import RgEngine

        chain.append(RgEngine(binary))
    return [*chain, PYTHON]


def run(params: Params, ctx: Context) -> GrepResult:
    from zbtools.core.call.collector import Paused
    from zbtools.core.search.globs import split_globs
    from zbtools.core.search.request import SearchJob, SearchRequest
    from zbtools.core.search.tree import search

    # An explicit before/after (even 0) wins over context, as -B/-A over -C in grep.
    before = params.before_context if params.before_context is not None else params.context or 0
    after = params.after_context if params.after_context is not None else params.context or 0
    per_file = params.output_mode != "content"
    max_bytes = None if params.max_filesize is None else parse_size(params.max_filesize)
    request = SearchRequest(
        pattern=params.pattern, path=params.path, globs=split_globs(params.glob or ""),
        types=[params.type] if params.type else [], ignore_case=params.case_insensitive,
        fixed_strings=params.fixed_strings, multiline=params.multiline,
        word=params.word_regexp, max_count=params.max_count,
        before=0 if per_file else before, after=0 if per_file else after,
        limit=params.head_limit or NO_CAP, per_file=per_file, max_file_bytes=max_bytes,
        timeout=params.timeout, include_hidden=params.include_hidden,
        include_ignored=params.include_ignored, exclude_dirs=params.exclude_dirs)
    job = SearchJob(ctx.workspace, request, cache=ctx.search_cache,
                    tick=ctx.ticker("files searched"))
    searcher = job.searcher
    literal = searcher.literal
    if literal is None and params.case_insensitive and params.pattern:
        from zbtools.core.search.engine import required_literal

        literal = params.pattern.encode("utf-8") if params.fixed_strings else \
            required_literal(params.pattern)
    if params.engine in ("rg", "native"):
        searcher.compile()  # an invalid pattern is a regex_error, whichever engine was asked
    engines = choose_engine(params, ctx, literal)
    if engines[0].name != "native":
        searcher.compile()  # an invalid pattern fails first (native: when it is needed)
    with Paused():  # the hits, then a match for each: thousands of objects kept
        outcome = search(job, engines)
        result = to_result(outcome, params.output_mode)
    warn_walk_notes(outcome, ctx)
    warn_skips(outcome, ctx, params.max_filesize, multiline=params.multiline)
    if params.show_scope and params.output_mode == "content":
        label_scopes(result, ctx)
    return result


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"50M"`` -> 52428800: bytes, or a number with K, M, G or T (powers of 1024, as rg's
    ``--max-filesize``; ``KB``, ``MiB`` and lower case are read the same)."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if m is None:
        from zbtools.contract import ToolError

        raise ToolError("invalid_arguments", f"max_filesize: {text!r} is not a size",
                        hint="bytes, or a number with K, M or G: '512K', '50M', '2G'",
                        details={"problems": [{"problem": "invalid_value",
                                               "argument": "max_filesize",
                                               "message": f"not a size: {text!r}"}]})
    return int(m.group(1)) * SIZE_UNITS[m.group(2).upper()]


TOOL = ToolSpec(
    name="grep_search",
    aliases=("rg", "grep"),
    doc=__doc__,
    params=Params,
    result=GrepResult,
    run=run,
    render_text=render,
    operand=("pattern", "path"),
    exit_status=found,
    paths=matched_paths,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)
