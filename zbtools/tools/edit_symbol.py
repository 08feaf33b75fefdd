"""Edit a definition by its name: replace it, replace only its body, or insert text before or
after it, with no old text to quote.

``symbol`` is a name or a dotted name (``Runner.run``, ``Outer.Inner.run``; ``::`` and ``#``
read as dots) that must name exactly one definition, looked for in the whole workspace, in a
directory, or in one file (``path``); ``kind`` and ``line`` (a line of the definition, as
find_symbol reports it) narrow the choice. ``action``:

- ``replace`` (default): ``new_text`` replaces the whole definition, including its decorators,
  attributes and the comments directly above it (send them again to keep them); an empty
  ``new_text`` deletes it.
- ``replace_body``: ``new_text`` replaces what is between the body's braces (with or without
  the braces), or an indented body (Python, Ruby) below the header line; the signature stays.
- ``insert_before`` / ``insert_after``: ``new_text`` goes in as whole lines before the
  definition's decorators and comments, or after its last line, separated from it by the blank
  lines that separate it from its neighbours.

``new_text`` is written in the definition's columns: it may be sent unindented (a method as
if at the top level), or with its first line unindented and the rest as the file has them; its
indentation is shifted to the definition's (the body's for ``replace_body``), tabs or spaces
as the file uses; line endings are the file's. Every other byte of the file is kept.

The edit goes the way of every edit: written atomically, refused with ``stale_file`` if the
file changes meanwhile (``expected_sha256`` refuses unless the file is the one you read),
journaled for ``undo``, hard links and protected paths (``.git``) as for apply_edit;
``dry_run: true`` returns the diff without writing. The result is apply_edit's (path, diff,
lines, sha256) with ``symbol``, the definition as it was (find_symbol's fields), and
``action``.

Languages: Python, JavaScript, TypeScript/TSX, Go, Rust, Java, C, C++, C#, Ruby, PHP, Bash.
Failure modes: ``symbol_not_found`` (with the closest names), ``ambiguous_symbol`` (every
candidate with its file and line: pass a longer dotted name, a path, or line),
``unsupported_language`` (``path`` is a file in another language), ``invalid_arguments``
(replace_body of a definition without a body, nothing to insert), ``stale_file``,
``encoding_error``, ``binary_file``, ``not_found``, ``outside_workspace``,
``permission_denied``.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.core.editing.cycle import edit_file_text
from zbtools.toolkit.edits import EditResult, single_result
from zbtools.toolkit.edits import render as render_edit
from zbtools.toolkit.params import CheckSyntax
from zbtools.toolkit.symbol_lookup import SymbolInfo
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context
    from zbtools.core.editing.matching import Applied
    from zbtools.toolkit.symbol_lookup import Parsed


class Params(CheckSyntax):
    symbol: str = field(aliases=("name", "name_path", "symbol_name"),
                        help="The definition: a name (run) or dotted name (Runner.run)")
    new_text: str = field(text_body=True, aliases=("new_string", "new_str", "content", "body",
                                                   "text"),
                          help="The new definition, body, or text to insert (replace with "
                          "empty text deletes the definition)")
    action: Literal["replace", "replace_body", "insert_before", "insert_after"] = field(
        default="replace", help="replace (the whole definition, decorators and comments "
        "above it included), replace_body, insert_before or insert_after")
    path: str | None = field(default=None, aliases=("file_path", "filepath", "dir"),
                             help="The file that holds it, or a directory to search (default: "
                             "the workspace)")
    kind: Literal["class", "interface", "module", "function", "method", "constant", "type",
                  "enum", "macro", "field", "property"] | None = field(
        default=None, help="Only a definition of this kind")
    line: int | None = field(default=None, minimum=1,
                             help="A line of the definition: chooses among same-named ones")
    dry_run: bool = field(default=False, help="Report the diff without writing")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")


class Result(EditResult):
    symbol: SymbolInfo = field(help="The definition edited, as it was before the edit")
    action: str = field(help="What was done: replace, replace_body, insert_before, "
                        "insert_after")


def locate(ctx: Context, params: Params) -> tuple[Parsed, SymbolInfo]:
    """The one file and definition ``params`` name, or the refusal."""
    from zbtools.core.code.lookup import select
    from zbtools.toolkit.symbol_lookup import ambiguous, info, nearest, not_found, scan

    found = scan(ctx, params.symbol, params.path)
    candidates = [(parsed, d) for parsed in found.files
                  for d in select(parsed.symbols.definitions, params.symbol, params.kind,
                                  params.line)]
    if not candidates:
        raise not_found(params.symbol, found.path, nearest(ctx, params.symbol, found),
                        kind=params.kind, line=params.line)
    if len(candidates) > 1:
        raise ambiguous(params.symbol, [info(p, d) for p, d in candidates])
    parsed, definition = candidates[0]
    return parsed, info(parsed, definition)


def run(params: Params, ctx: Context) -> Result:
    from zbtools.contract import ToolError
    from zbtools.core.code.lookup import select
    from zbtools.core.code.symbols import read_symbols
    from zbtools.core.editing.bysymbol import plan_edit
    from zbtools.core.editing.matching import Applied
    from zbtools.toolkit.symbol_lookup import ambiguous, info, not_found

    parsed, chosen = locate(ctx, params)

    def compute(text: str) -> Applied:
        source = text.encode("utf-8", "surrogateescape")
        # the text read for the write: the same as parsed unless it changed meanwhile (or the
        # file is not UTF-8, or has a BOM: offsets are taken in the text's own encoding)
        symbols = parsed.symbols if source == parsed.source else \
            read_symbols(parsed.language, source)
        matches = select(symbols.definitions, params.symbol, params.kind, params.line)
        if not matches:
            raise not_found(params.symbol, parsed.path, [], kind=params.kind, line=params.line)
        if len(matches) > 1:
            raise ambiguous(params.symbol, [info(parsed, d) for d in matches])
        try:
            edit = plan_edit(source, matches[0], params.action, params.new_text,
                             parsed.language.name)
        except UnicodeEncodeError as exc:
            raise ToolError("encoding_error", f"new_text holds {exc.object[exc.start:exc.end]!r}"
                            ", which is not a character", hint="send valid Unicode text",
                            details={"path": parsed.path}) from None
        after = edit.apply(source)
        report: dict[str, Any] = {
            "label": None, "start_line": edit.first_line, "end_line": edit.last_line,
            "matched_with": "symbol", "transforms": [], "disambiguated_by": None}
        return Applied(after.decode("utf-8", "surrogateescape"), [report], after != source, [])

    outcome = edit_file_text(ctx, parsed.path, compute, [params.new_text],
                             expected_sha256=params.expected_sha256, dry_run=params.dry_run,
                             tool="edit_symbol")
    for warning in outcome.applied.warnings:
        ctx.warn(warning)
    base = single_result(outcome, params.dry_run)
    return Result(**{name: getattr(base, name) for name in EditResult.fields()},
                  symbol=chosen, action=params.action)


def render(result: Result) -> str:
    where = f"{result.action} {result.symbol.kind} {result.symbol.qualname}: "
    return where + render_edit(result)


TOOL = ToolSpec(
    name="edit_symbol",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="symbol",
    render_text=render,
    destructive=True,
    category="edit",
)
