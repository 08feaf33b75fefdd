"""Find definitions by name: where a class, function or method is defined, with its lines and
signature, and optionally where its name is used.

``symbol`` is a name (``run``) or a dotted name (``Runner.run``; ``Outer.Runner.run``;
``::`` and ``#`` read as dots): it matches every definition whose dotted name is it or ends
with ``.`` and it, so ``run`` finds ``run`` and ``Runner.run``, and an ambiguous name lists
every candidate. Searches the whole workspace, or under ``path`` (a directory, or one file);
``kind`` keeps one kind (class, interface, module, function, method, constant, type, enum,
macro, field, property). Each definition has ``path``, ``kind``, ``qualname``, ``parent``,
``start_line`` (the line of ``def``/``class``/``fn``), ``end_line``, ``outer_start_line`` (its
decorators, attributes and the comments directly above it) and ``signature``.
``include_references: true`` adds the places that use the name (calls, type uses, as each
language's tags query marks them), each with ``path``, ``line``, ``kind`` and the line's
``text``: by name, so a reference may be to another definition of the same name.

Languages: Python, JavaScript, TypeScript/TSX, Go, Rust, Java, C, C++ (``.h`` too), C#, Ruby,
PHP and Bash, by file extension or ``#!`` line. Files are found the way grep_search finds them
(hidden, ignored and excluded directories skipped) and only those holding the name as a whole
word are parsed; files in other languages are counted in ``skipped.unsupported_language``,
never guessed at. Nothing found: an empty list, ``closest`` (the nearest dotted names) and a
``hint``.

Limits and failure modes: at most ``max_results`` definitions and ``max_references`` references
(``truncated`` tells); files over 8 MiB are not parsed (``skipped.too_large``).
``unsupported_language`` (``path`` is one file in another language), ``not_found``,
``outside_workspace``, ``invalid_arguments`` (an empty name).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolkit.symbol_lookup import SymbolInfo
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context

class Params(Struct):
    symbol: str = field(aliases=("name", "name_path", "symbol_name", "query"),
                        help="A name (run) or dotted name (Runner.run) to find")
    path: str | None = field(default=None, aliases=("file_path", "dir", "directory"),
                             help="Search only this directory or file (default: the workspace)")
    kind: Literal["class", "interface", "module", "function", "method", "constant", "type",
                  "enum", "macro", "field", "property"] | None = field(
        default=None, help="Only definitions of this kind")
    include_references: bool = field(default=False, aliases=("references",),
                                     help="Also list the places that use the name")
    max_results: int = field(default=100, minimum=1, maximum=5000, aliases=("limit",),
                             help="Most definitions to return")
    max_references: int = field(default=200, minimum=1, maximum=10_000,
                                help="Most references to return")


class ReferenceInfo(Struct):
    path: str = field(help="The file, relative to the workspace root")
    line: int = field(help="The line (1-based)")
    kind: str = field(help="What the tags query calls it: call, type, implementation, ...")
    text: str = field(help="The line's text (over 500 characters: cut)")


class Skips(Struct):
    unsupported_language: int = field(help="Files holding the name in a language without "
                                      "symbols")
    too_large: int = field(help="Files over 8 MiB, not parsed")
    unreadable: int = field(help="Files removed or unreadable meanwhile")


class Result(Struct):
    symbol: str = field(help="The name searched for")
    path: str = field(help="Where it was searched, relative to the workspace root")
    definitions: list[SymbolInfo] = field(help="The definitions found, in path and line order")
    total: int = field(help="Definitions found (more than listed when truncated)")
    truncated: bool = field(help="More definitions or references exist than listed")
    references: list[ReferenceInfo] = field(help="With include_references: the uses of the "
                                            "name, in path and line order")
    total_references: int = field(help="References found")
    files_parsed: int = field(help="Files read and parsed (those holding the name)")
    skipped: Skips = field(help="Files holding the name that were not parsed, by reason")
    parse_errors: list[str] = field(help="Parsed files with syntax errors (their definitions "
                                    "may be incomplete)")
    closest: list[str] = field(help="When nothing matched: the nearest dotted names")
    hint: str | None = field(help="When nothing matched: what to try")


LINE_CHARS = 500


def run(params: Params, ctx: Context) -> Result:
    from zbtools.core.code.lookup import last_name, select
    from zbtools.toolkit.symbol_lookup import info, nearest, scan

    found = scan(ctx, params.symbol, params.path, references=params.include_references)
    matches = [info(parsed, d) for parsed in found.files
               for d in select(parsed.symbols.definitions, params.symbol, params.kind)]
    references: list[ReferenceInfo] = []
    total_references = 0
    if params.include_references:
        name = last_name(params.symbol)
        for parsed in found.files:
            seen: set[int] = set()
            for ref in parsed.symbols.references:
                if ref.name != name or ref.line in seen:
                    continue
                seen.add(ref.line)
                total_references += 1
                if len(references) < params.max_references:
                    text = parsed.line_text(ref.line)
                    if len(text) > LINE_CHARS:
                        text = text[:LINE_CHARS] + "…"
                    references.append(ReferenceInfo(path=parsed.path, line=ref.line,
                                                     kind=ref.kind, text=text))
    closest: list[str] = []
    hint = None
    broken = [f.path for f in found.files if f.symbols.has_errors]
    if not matches:
        closest = nearest(ctx, params.symbol, found)
        hint = (f"no definition of {params.symbol!r}"
                + (f" of kind {params.kind}" if params.kind else "")
                + (f"; closest names: {', '.join(closest)}" if closest else
                   "; try a shorter name, or grep_search for the text"))
        if broken:
            # a parse error can hide the very definition asked for: say where to look
            shown = ", ".join(broken[:3]) + (f" and {len(broken) - 3} more" if len(broken) > 3
                                             else "")
            hint += (f"; {shown} hold the name but do not parse cleanly, so a definition there "
                     "may be missing: read the lines around the name")
    skipped = Skips(unsupported_language=found.unsupported_language,
                    too_large=found.too_large, unreadable=found.unreadable)
    if found.too_large:
        ctx.warn(f"{found.too_large} file(s) holding the name are over 8 MiB and were not "
                 "parsed: their definitions are missing")
    return Result(
        symbol=params.symbol, path=found.path, definitions=matches[:params.max_results],
        total=len(matches),
        truncated=len(matches) > params.max_results or total_references > len(references),
        references=references, total_references=total_references,
        files_parsed=len(found.files), skipped=skipped,
        parse_errors=broken,
        closest=closest, hint=hint)


def render(result: Result) -> str:
    lines = [f"{d.path}:{d.start_line}-{d.end_line}: {d.kind} {d.qualname}: {d.signature}"
             for d in result.definitions]
    if result.references:
        lines.append(f"references ({result.total_references}):")
        lines += [f"{r.path}:{r.line}:{r.text}" for r in result.references]
    notes = []
    if result.hint:
        notes.append(result.hint)
    if result.truncated:
        notes.append(f"showing {len(result.definitions)} of {result.total} definitions and "
                     f"{len(result.references)} of {result.total_references} references; "
                     "raise max_results or max_references, or narrow with path or kind")
    if result.skipped.unsupported_language:
        notes.append(f"{result.skipped.unsupported_language} file(s) in languages without "
                     "symbols not parsed")
    return "".join(line + "\n" for line in lines) + "".join(f"[{n}]\n" for n in notes)


def found_any(result: Result) -> int:
    """``--exit-status``: 0 when a definition was found, 1 when none was."""
    return 0 if result.total else 1


TOOL = ToolSpec(
    name="find_symbol",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    operand=("symbol", "path"),
    exit_status=found_any,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)
