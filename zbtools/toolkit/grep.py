"""What grep_search and codebase_search share: the search result, its text and warnings.

``GrepResult`` (matches, per-file counts or file names) is what both return; ``to_result``
builds it from an engine ``Outcome``; ``warn_skips`` and ``warn_walk_notes`` turn what the search
left out into warnings; ``label_scopes`` adds grep_search's ``show_scope`` labels (``Scope``:
each match's enclosing definition); ``render`` (ripgrep's layout, ``content_lines``), ``found``
(``--exit-status``) and ``matched_paths`` (``--paths``) are its shell forms.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import Skipped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.code.scopes import Scopes
    from zbtools.core.search.outcome import Outcome


class Scope(Struct):
    kind: str = field(help="function, method, class, interface, module, enum, type, macro "
                      "or property")
    qualname: str = field(help="Its dotted name: Class.method")
    start_line: int = field(help="Its first line (the def, class, fn line; not decorators)")
    end_line: int = field(help="Its last line")


class Match(Struct):
    path: str = field(help="File, relative to the workspace root, POSIX separators")
    line: int = field(help="Line number (1-based) of the matching line")
    text: str = field(help="The matching line (the lines of the match in multiline mode, "
                      "joined by newlines); over 500 characters cut with a marker")
    before: list[str] = field(help="Context lines before it, in order")
    after: list[str] = field(help="Context lines after it (after the match's last line)")
    scope: Scope | None = field(
        default=None, omit_null=True,
        help="show_scope: the innermost definition around the line; absent at the top level "
        "and in files_without_scope")


class FileCount(Struct):
    path: str = field(help="File, relative to the workspace root")
    count: int = field(help="Matching lines in it (matches in multiline mode)")


class GrepResult(Struct):
    path: str = field(help="What was searched, relative to the workspace root")
    output_mode: str = field(help="content, files_with_matches or count")
    matches: list[Match] = field(help="content mode: the matching lines, in path order")
    files: list[str] = field(help="files_with_matches mode: the files with a match")
    counts: list[FileCount] = field(help="count mode: matching lines per file")
    total_matches: int = field(help="Matching lines found (matches in multiline mode); "
                               "with truncated, those found before stopping")
    files_with_matches: int = field(help="Files with at least one match found")
    files_searched: int = field(help="Text files actually searched")
    total_is_lower_bound: bool = field(
        help="More may exist than total_matches and files_with_matches count: the search "
        "stopped early (truncated, timed_out) or left out files it would have searched "
        "(skipped.too_large, skipped.unreadable, directories deeper than 512 levels; a "
        "warning says how to include them)")
    truncated: bool = field(help="More results exist than head_limit allowed")
    timed_out: bool = field(help="The timeout stopped the search: results are partial")
    skipped: Skipped = field(help="What was not searched, by kind")
    engine: str = field(help="The engine that matched: python, rg or native")
    files_without_scope: list[str] | None = field(
        default=None, omit_null=True,
        help="show_scope: files with matches whose language has no definitions (or that "
        "could not be parsed); their matches carry no scope")


def warn_walk_notes(outcome: Outcome, ctx: Context) -> None:
    """Directory loops and directories beyond the depth cap that were not searched."""
    from zbtools.core.search.entries import walk_notes

    for note in walk_notes(outcome.loops, outcome.depth_limited):
        ctx.warn(note)


def warn_skips(outcome: Outcome, ctx: Context, max_filesize: str | None, *,
               multiline: bool) -> None:
    """A warning for each kind of file the search would have searched but left out, naming
    what includes it: the total is then a lower bound (``lower_bound``)."""
    skipped = outcome.skipped
    lower = "; total_matches is a lower bound"
    if skipped.too_large:
        first = outcome.first_too_large
        what = (outcome.path if outcome.named else first if skipped.too_large == 1 and first
                else plural(skipped.too_large, "file")
                + (f" (the first: {first})" if first else ""))
        them = "it" if outcome.named or skipped.too_large == 1 else "them"
        if max_filesize is not None:
            why = (f"larger than max_filesize ({max_filesize})" if not multiline else
                   f"larger than max_filesize ({max_filesize}), the most multiline mode reads "
                   "whole")
            fix = f"raise max_filesize to search {them}"
            if not multiline:
                fix += ", or leave it out"
        elif multiline:
            why = "over 10 MiB, which multiline mode reads whole only up to a max_filesize given"
            fix = f"pass max_filesize (e.g. '200M') to read {them} whole, or search without " \
                "multiline"
        else:
            from zbtools.core.search.engine import MAX_STREAM_LINE

            why = f"holding a line over {MAX_STREAM_LINE >> 20} MiB, which line mode does not read"
            fix = "multiline mode with a max_filesize above the file's size reads it whole"
        ctx.warn(f"{what} not searched: {why}{lower}; {fix}")
    if skipped.unreadable:
        ctx.warn(f"{plural(skipped.unreadable, 'file or directory', 'files or directories')} "
                 "could not be read (permission denied, or removed while the search ran)"
                 f"{lower}; make them readable, or search again")


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def lower_bound(outcome: Outcome) -> bool:
    """Whether more may exist than the outcome counts: it stopped early, or left out a file
    or directory it would have searched (hidden, ignored, excluded and binary files are out
    by the search's rules, as in rg, and do not count)."""
    skipped = outcome.skipped
    return (outcome.truncated or outcome.timed_out or outcome.depth_limited
            or bool(skipped.too_large or skipped.unreadable))


_new = object.__new__


def _match(path: str, line: int, text: str, before: list[str], after: list[str]) -> Match:
    # every field, in order (``scope`` at its default): what Struct.__init__ stores, at a
    # fraction of its cost for a field left out (a search makes thousands)
    match = _new(Match)
    match.__dict__ = {"path": path, "line": line, "text": text, "before": before,
                      "after": after, "scope": None}
    return match


def to_result(outcome: Outcome, mode: str) -> GrepResult:
    matches: list[Match] = []
    if mode == "content":
        matches = [_match(f.path, h.line, "\n".join(h.lines), h.before, h.after)
                   for f in outcome.files for h in f.hits]
    return GrepResult(
        path=outcome.path, output_mode=mode, matches=matches,
        files=[f.path for f in outcome.files] if mode == "files_with_matches" else [],
        counts=[FileCount(path=f.path, count=f.count) for f in outcome.files]
        if mode == "count" else [],
        total_matches=outcome.total, files_with_matches=len(outcome.files),
        total_is_lower_bound=lower_bound(outcome),
        files_searched=outcome.files_searched, truncated=outcome.truncated,
        timed_out=outcome.timed_out, skipped=outcome.skipped, engine=outcome.engine)


# a larger file is not parsed for show_scope (tree-sitter parses a few MB/s)


def label_scopes(result: GrepResult, ctx: Context) -> None:
    """``show_scope``: each match's innermost enclosing definition (``Match.scope``), and the
    files whose matches cannot have one (``files_without_scope``). Each file with matches is
    read once per call and parsed (a session keeps a parse against the bytes it was made
    from, ``parsecache``), so a label never comes from an older version of the file
    (docs/internals/code.md#grep-scopes)."""
    by_path: dict[str, list[Match]] = {}
    for m in result.matches:
        by_path.setdefault(m.path, []).append(m)
    without: list[str] = []
    for path, matches in by_path.items():
        scopes = _file_scopes(path, ctx)
        if scopes is None:
            without.append(path)
            continue
        for m in matches:
            found = scopes.at(m.line)
            if found is not None:
                m.scope = Scope(kind=found.kind, qualname=found.qualname,
                                start_line=found.start_line, end_line=found.end_line)
    result.files_without_scope = without


def _file_scopes(path: str, ctx: Context) -> Scopes | None:
    """The scopes of the file at ``path``; None when its language has no definitions, or it
    cannot be read or is too big to parse (``MAX_PARSE_BYTES``)."""
    import os

    from zbtools.contract import ToolError
    from zbtools.core.code.languages import MAX_PARSE_BYTES, language_for
    from zbtools.core.files.reading import read_bytes

    language = language_for(path)
    if language is None and os.path.splitext(path.rsplit("/", 1)[-1])[1]:
        return None  # an extension no grammar knows; without one, the #! line may tell
    if language is not None and not language.has_symbols:
        return None
    try:
        with ctx.workspace.resolve(path) as res:
            data = read_bytes(res, max_bytes=MAX_PARSE_BYTES, shown=path)
    except ToolError:
        return None  # removed or grown since the search: no label rather than a guess
    if language is None:
        language = language_for(path, data[:256])
        if language is None or not language.has_symbols:
            return None
    from zbtools.core.code.scopes import scopes_of
    from zbtools.toolkit.parsecache import session_parse

    found = language
    return session_parse(ctx, "scopes", path, data, lambda: scopes_of(found, data))


def content_lines(matches: list[Match], unscoped: Collection[str] | None = None) -> list[str]:
    """ripgrep's layout: ``path:N:text`` for matches, ``path-N-text`` for context, ``--``
    between non-adjacent groups; context shared by neighbouring matches is printed once.
    With ``unscoped`` (show_scope: the files without scopes), before the lines of each match
    whose enclosing definition differs from the previous match's in its file, a header
    ``@@ path: KIND QUALNAME (lines S-E)`` (or ``@@ path: top level``), like the function a
    ``git diff`` hunk header names; a file in ``unscoped`` gets none."""
    plain = None if unscoped is not None else _plain_lines(matches)
    if plain is not None:
        return plain
    rows: dict[str, dict[int, tuple[str, str]]] = {}
    # the header before a line: where a match whose scope differs from the previous one starts
    headers: dict[str, dict[int, str]] = {}
    last_scope: dict[str, str] = {}
    for m in matches:
        lines = rows.setdefault(m.path, {})
        first = m.line - len(m.before)
        if unscoped is not None and m.path not in unscoped:
            label = scope_label(m.scope)
            if last_scope.get(m.path) != label:
                last_scope[m.path] = label
                at = next((n for n in range(first, m.line) if n not in lines), m.line)
                headers.setdefault(m.path, {})[at] = f"@@ {m.path}: {label}"
        for i, text in enumerate(m.before):
            lines.setdefault(first + i, ("-", text))
        own = m.text.split("\n")
        for i, text in enumerate(own):
            lines[m.line + i] = (":", text)
        last = m.line + len(own) - 1
        for i, text in enumerate(m.after):
            lines.setdefault(last + 1 + i, ("-", text))
    out: list[str] = []
    has_context = any(m.before or m.after for m in matches)
    for path, lines in rows.items():
        previous: int | None = None
        heads = headers.get(path, {})
        for number in sorted(lines):
            if has_context and out and (previous is None or number > previous + 1):
                out.append("--")
            head = heads.get(number)
            if head is not None:
                out.append(head)
            sep, text = lines[number]
            out.append(f"{path}{sep}{number}{sep}{text}")
            previous = number
    return out


def scope_label(scope: Scope | dict[str, Any] | None) -> str:
    """``method A.f (lines 2-4)``, or ``top level``: a header's words for a scope (a ``Scope``
    or its JSON, as the terminal rendering has it)."""
    if scope is None:
        return "top level"
    if isinstance(scope, dict):
        kind, qualname = scope.get("kind"), scope.get("qualname")
        start, end = scope.get("start_line"), scope.get("end_line")
    else:
        kind, qualname, start, end = scope.kind, scope.qualname, scope.start_line, scope.end_line
    return f"{kind} {qualname} (lines {start}-{end})"


def _plain_lines(matches: list[Match]) -> list[str] | None:
    """``content_lines`` of one-line matches without context, each file's together and in
    line order (what every search without context and multiline gives): one line each, in
    order, with no grouping to do, so far cheaper than the general case. None otherwise."""
    out: list[str] = []
    done: set[str] = set()  # files whose matches ended (each file's matches come together)
    last_path, last_line = "", 0
    for m in matches:
        if m.path != last_path:
            if m.path in done:
                return None
            done.add(last_path)
            last_line = 0
        if m.before or m.after or "\n" in m.text or m.line <= last_line:
            return None
        out.append(f"{m.path}:{m.line}:{m.text}")
        last_path, last_line = m.path, m.line
    return out


def skipped_note(skipped: Skipped) -> str:
    described = skipped.describe()
    if not described:
        return ""
    return f"not searched: {described}{skipped.remedy('search')}"


def found(result: GrepResult) -> int:
    """``--exit-status``: 0 when something matched, 1 when nothing did (rg's convention)."""
    return 0 if result.files_with_matches else 1


def matched_paths(result: GrepResult) -> list[str]:
    """``--paths``: each file with a match, once, in order."""
    if result.output_mode == "files_with_matches":
        return list(result.files)
    if result.output_mode == "count":
        return [c.path for c in result.counts]
    return list(dict.fromkeys(m.path for m in result.matches))


def render(result: GrepResult, limit_name: str = "head_limit") -> str:
    """The text form; ``limit_name``: the parameter the truncation notice tells to raise."""
    if result.output_mode == "files_with_matches":
        lines = list(result.files)
    elif result.output_mode == "count":
        lines = [f"{c.path}:{c.count}" for c in result.counts]
    else:
        without = result.files_without_scope
        lines = content_lines(result.matches, None if without is None else set(without))
    notes: list[str] = []
    if not result.files_with_matches:
        note = skipped_note(result.skipped)
        notes.append(f"0 matches in {result.files_searched} files searched"
                     + (f"; {note}" if note else ""))
    if result.truncated:
        shown = (f"{result.total_matches} lines" if result.output_mode == "content"
                 else f"{result.files_with_matches} files")
        notes.append(f"showing the first {shown}; raise {limit_name} or narrow the search")
    if result.timed_out:
        notes.append("the search timed out: results are partial; simplify the pattern or "
                     "raise timeout")
    out = "".join(line + "\n" for line in lines)
    return out + "".join(f"[{note}]\n" for note in notes)
