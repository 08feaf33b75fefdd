"""What find_symbol and edit_symbol share: the files where a name may be defined, parsed.

No index is kept: the search engine grep_search uses (its walk, ignore files and skips) finds
the files that hold the definition's own name as a whole word (and each scope of a dotted
name), and only those are read and parsed (docs/internals/code.md#symbol-tools). ``scan``
does that for a directory, or parses the one file a path names; files in a language without
symbols are counted, not guessed at. ``SymbolInfo`` is a definition as both tools report it;
``nearest`` the names a hint offers when nothing matched; ``not_found`` and ``ambiguous`` the
two refusals.

Map: ``Parsed`` (one file's definitions), ``Scan`` (what a scan found and left out), ``scan``,
``SymbolInfo``, ``info``, ``nearest``, ``not_found``, ``ambiguous``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.code.languages import Language
    from zbtools.core.code.symbols import Definition, FileSymbols
    from zbtools.core.search.request import Engine

# a file over this is not parsed (counted in too_large): a parse runs at about 3 MB/s
NO_CAP = 2**62
SEARCH_TIMEOUT = 30.0
# how many files a hint's second search parses for the closest names
HINT_FILES = 200


class Parsed:
    """One file's bytes, language and symbols."""

    __slots__ = ("language", "path", "source", "symbols")

    def __init__(self, path: str, language: Language, source: bytes,
                 symbols: FileSymbols) -> None:
        self.path = path
        self.language = language
        self.source = source
        self.symbols = symbols

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) of the file, without its line ending."""
        source = self.source
        start = 0
        for _ in range(line - 1):
            start = source.find(b"\n", start) + 1
            if start == 0:
                return ""
        end = source.find(b"\n", start)
        text = source[start:end if end >= 0 else len(source)].rstrip(b"\r")
        return text.decode("utf-8", "replace")


class Scan:
    """The parsed files, and what was left out: files in a language without symbols, files
    too large to parse, files that vanished or could not be read."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.files: list[Parsed] = []
        self.unsupported_language = 0
        self.too_large = 0
        self.unreadable = 0
        self.named_file = False  # the path named one file

    def definitions(self) -> list[tuple[Parsed, Definition]]:
        return [(f, d) for f in self.files for d in f.symbols.definitions]


def parse_file(ctx: Context, rel: str, *, named: bool) -> Parsed | None:
    """The file ``rel`` read and parsed; None when it has no symbols' language (raises
    ``unsupported_language`` instead when ``named``: the caller asked for this file)."""
    from zbtools.core.code.languages import MAX_PARSE_BYTES, language_for, unsupported_language
    from zbtools.core.code.symbols import read_symbols
    from zbtools.core.files.reading import read_bytes_stat

    language = language_for(rel)
    if language is not None and not language.has_symbols:
        if named:
            raise unsupported_language(rel)
        return None
    with ctx.workspace.resolve(rel) as res:
        data, _ = read_bytes_stat(res, max_bytes=MAX_PARSE_BYTES, shown=rel)
        rel = res.rel
    if language is None:
        language = language_for(rel, data[:256])
        if language is None or not language.has_symbols:
            if named:
                raise unsupported_language(rel)
            return None
    from zbtools.toolkit.parsecache import session_parse

    found = language
    return Parsed(rel, language, data,
                  session_parse(ctx, "symbols", rel, data, lambda: read_symbols(found, data)))


def scan(ctx: Context, query: str, path: str | None, *, references: bool = False) -> Scan:
    """The files under ``path`` (default: the workspace) that may define ``query``, parsed;
    with ``references``, every file that holds its own name (where it may be used)."""
    from zbtools.core.code.lookup import last_name, normalise

    name = last_name(query)
    if not name:
        raise ToolError("invalid_arguments", f"no name in symbol {query!r}",
                        hint="give a name (run) or a dotted name (Runner.run)",
                        details={"problems": [{"problem": "invalid_value", "argument": "symbol",
                                               "message": "no name"}]})
    target = path or "."
    with ctx.workspace.resolve(target) as res:
        is_file = res.st is not None and not _is_dir(res.st.st_mode)
        rel = res.rel
    found = Scan(rel)
    if is_file:
        found.named_file = True
        parsed = parse_file(ctx, rel, named=True)
        if parsed is not None:
            found.files.append(parsed)
        return found
    files = _files_holding(ctx, target, _word_pattern(name))
    if not references:
        # A dotted name's scopes are written in the file that defines it (the class around a
        # method, a Go receiver, a Rust impl, C++'s Class::): a common method name (__init__,
        # run) is narrowed by its class's.
        for scope in dict.fromkeys(normalise(query).split(".")[:-1]):
            if not files:
                break
            holding = set(_files_holding(ctx, target, _word_pattern(scope)))
            files = [f for f in files if f in holding]
    for file in files:
        _add(ctx, found, file)
    return found


def _is_dir(mode: int) -> bool:
    import stat

    return stat.S_ISDIR(mode)


def _word_pattern(name: str) -> tuple[str, bool]:
    """The search for ``name`` as a whole word (a name with other characters, as PHP's
    ``$x``, literally: parsing the files it finds decides)."""
    import re

    if re.fullmatch(r"\w+", name):
        return rf"\b{name}\b", False
    return name, True


def _files_holding(ctx: Context, path: str, pattern: tuple[str, bool], *,
                   ignore_case: bool = False, limit: int = NO_CAP) -> list[str]:
    """The files under ``path`` with a line matching ``pattern``, in walk order, found by the
    search engines grep_search uses (native in a one-shot call wherever it answers exactly,
    ripgrep finding the name and the python regex judging each line's word boundaries; the
    python engine and its warm cache in a session)."""
    from zbtools.core.search.request import SearchJob, SearchRequest
    from zbtools.core.search.tree import PYTHON, search

    text, fixed = pattern
    request = SearchRequest(pattern=text, path=path, fixed_strings=fixed, per_file=True,
                            limit=limit, ignore_case=ignore_case, timeout=SEARCH_TIMEOUT)
    job = SearchJob(ctx.workspace, request, cache=ctx.search_cache,
                    tick=ctx.ticker("files searched"))
    engines: list[Engine] = []
    if ctx.search_cache is None:
        from zbtools.core.search.ripgrep import compatible, find_rg

        binary = find_rg(ctx.env)
        if binary is not None and compatible(text, fixed_strings=fixed, multiline=False):
            from zbtools.core.search.native_plan import plan

            how = plan(text, fixed_strings=fixed, multiline=False, per_file=True)
            if how is not None:
                from zbtools.core.search.native import NativeEngine

                engines.append(NativeEngine(binary))
    outcome = search(job, [*engines, PYTHON])
    if outcome.timed_out:
        ctx.warn(f"the search for {text!r} timed out: definitions in files it did not reach "
                 "are missing; pass a path to narrow it")
    return [f.path for f in outcome.files]


def _add(ctx: Context, found: Scan, rel: str) -> None:
    try:
        parsed = parse_file(ctx, rel, named=False)
    except ToolError as err:
        if err.code == "too_large":
            found.too_large += 1
        elif err.code in ("not_found", "permission_denied", "binary_file", "is_directory"):
            found.unreadable += 1
        else:
            raise
        return
    if parsed is None:
        found.unsupported_language += 1
    else:
        found.files.append(parsed)


class SymbolInfo(Struct):
    path: str = field(help="The file, relative to the workspace root")
    kind: str = field(help="class, interface, module, function, method, constant, type, "
                      "enum, macro, field or property")
    name: str = field(help="The definition's own name")
    qualname: str = field(help="Its dotted name: Class.method, Outer.Inner.method")
    parent: str | None = field(help="The dotted name of the definition it is nested in")
    language: str = field(help="The file's language")
    start_line: int = field(help="The line of the definition itself (def, class, fn)")
    end_line: int = field(help="Its last line")
    outer_start_line: int = field(help="The first line of its decorators, attributes and the "
                                  "comments directly above it (start_line when none)")
    signature: str = field(help="Its text up to the body, whitespace collapsed")


def info(parsed: Parsed, definition: Definition) -> SymbolInfo:
    return SymbolInfo(path=parsed.path, kind=definition.kind, name=definition.name,
                      qualname=definition.qualname, parent=definition.parent,
                      language=parsed.language.label, start_line=definition.start_line,
                      end_line=definition.end_line,
                      outer_start_line=definition.outer_start_line,
                      signature=definition.signature)


def nearest(ctx: Context, query: str, found: Scan) -> list[str]:
    """The dotted names nearest ``query``: among the definitions of the files already parsed,
    else of files holding a part of the name in any letter case (``parse_user``: ``parse``,
    ``user``, a word starting ``pars`` or ending ``user``; the scopes of a dotted name), at
    most ``HINT_FILES`` of them."""
    import re

    from zbtools.core.code.lookup import closest, last_name, normalise

    definitions = [d for _, d in found.definitions()]
    names = closest(query, definitions)
    if names or found.named_file:
        return names
    name = last_name(query)
    # a misspelt name keeps most of its parts, or its first or last letters
    parts = {re.escape(p) for p in re.split(r"[^0-9A-Za-z]+|(?<=[a-z])(?=[A-Z])", name)
             if len(p) >= 3}
    if len(name) >= 4:
        parts |= {rf"\b{re.escape(name[:4])}", rf"{re.escape(name[-4:])}\b"}
    # and a dotted name its scopes: the class of a misspelt method holds its right name
    parts |= {rf"\b{re.escape(scope)}\b" for scope in normalise(query).split(".")[:-1]}
    pattern = "|".join(sorted(parts or {re.escape(name)}, key=len, reverse=True))
    hint_scan = Scan(found.path)
    for rel in _files_holding(ctx, found.path, (pattern, False), ignore_case=True,
                              limit=HINT_FILES):
        _add(ctx, hint_scan, rel)
    return closest(query, [d for _, d in hint_scan.definitions()])


def not_found(query: str, where: str, names: list[str], *, kind: str | None = None,
              line: int | None = None) -> ToolError:
    narrowed = "".join((f" of kind {kind}" if kind else "", f" at line {line}" if line else ""))
    place = "the workspace" if where in (".", "") else where
    hint = (f"closest names: {', '.join(names)}" if names else
            "no similar name either; find_symbol with a shorter name, or grep_search, shows "
            "what exists")
    return ToolError("symbol_not_found", f"no definition of {query!r}{narrowed} in {place}",
                     hint=hint, details={"symbol": query, "path": where, "closest": names})


def ambiguous(query: str, candidates: list[SymbolInfo]) -> ToolError:
    listed = [{"path": c.path, "line": c.start_line, "kind": c.kind, "qualname": c.qualname,
               "signature": c.signature} for c in candidates]
    same = len({(c.qualname, c.path) for c in candidates}) < len(candidates)
    shown = "; ".join(f"{c.qualname} ({c.kind}) at {c.path}:{c.start_line}"
                      for c in candidates[:10])
    more = f"; and {len(candidates) - 10} more" if len(candidates) > 10 else ""
    hint = ("pass a longer dotted name (Class.method) or the file as path"
            + ("; definitions with the same dotted name in one file: pass line (the one "
               "listed)" if same else "; or pass line with the file"))
    return ToolError("ambiguous_symbol",
                     f"{query!r} names {len(candidates)} definitions: {shown}{more}",
                     hint=hint, details={"symbol": query, "candidates": listed})
