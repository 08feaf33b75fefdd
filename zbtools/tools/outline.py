"""Outline a source file (its definitions), or map a directory (the most referenced definitions
of its files, within a budget).

For a **file** (``path``), every definition in file order: ``kind`` (class, interface, module,
function, method, constant, type, enum, macro, field, property), ``name``, ``qualname``
(dotted: ``Class.method``), ``parent`` and ``depth`` (nesting), ``start_line`` and
``end_line`` (1-based, inclusive; ``start_line`` is the ``def``/``class`` line, after any
decorators) and ``signature`` (the text up to the body). Read a definition with read_file
``offset``/``limit`` from its lines. ``has_errors`` tells that the file does not parse cleanly
(the outline may then miss definitions near the error).

For a **directory** (default ``.``, the workspace root), a repository map: the definitions of
its files ranked by how many other files reference their names, the highest first, cut to
``max_tokens`` (default 2000, estimated as characters / 4) and ``max_lines`` (default 250) of
the text map. A method brings its class along; each file shows a ``path:`` line. ``files`` holds
the files shown (best first), each with its definitions (file order) and their ``score``;
``truncated`` tells that definitions were left out, ``total`` and ``files_total`` how many
there were: raise the budget, or outline a subdirectory or one file. Hidden entries, ignored
files and the default excluded directories are skipped as by the search tools (``skipped``;
``include_hidden``, ``include_ignored``, ``exclude_dirs``). Files are parsed once and kept in
the workspace's state directory (and in memory in ``batch``/``mcp``), re-parsed when they change.

Languages: Python, JavaScript, TypeScript/TSX, Go, Rust, Java, C, C++, C#, Ruby, PHP, Bash (by
extension, or a ``#!`` line). Limits and failure modes: ``unsupported_language`` (a file in
another language; a directory simply leaves such files out: ``other_files`` counts them),
``not_found``, ``outside_workspace``, ``special_file``, ``too_large`` (a file over 64 MiB).
Files over 4 MiB are left out of a map (``skipped.too_large``); a map walks at most 200000
entries (``scan_limited``).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import Skipped, WalkSwitches
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.code.repomap import MapFile as CoreMapFile
    from zbtools.core.code.tagpool import DefTuple
    from zbtools.core.files.workspace import Resolved

DEFAULT_TOKENS = 2000
DEFAULT_LINES = 250
MAX_FILE_BYTES = 64 * 1024 * 1024


class Params(WalkSwitches):
    path: str = field(default=".", aliases=(*PATH_ALIASES, "dir", "directory"),
                      help="A source file to outline, or a directory to map (default: the "
                      "workspace root)")
    max_tokens: int = field(default=DEFAULT_TOKENS, minimum=10, maximum=1_000_000,
                            help="A directory's map: most tokens of its text (estimated as "
                            "characters / 4)")
    max_lines: int = field(default=DEFAULT_LINES, minimum=1, maximum=100_000,
                           help="A directory's map: most lines of its text")


class Definition(Struct):
    kind: str = field(help="class, interface, module, function, method, constant, type, enum, "
                      "macro, field or property")
    name: str = field(help="The definition's own name")
    qualname: str = field(help="Dotted name with its enclosing definitions: Class.method")
    parent: str | None = field(help="The enclosing definition's qualname, or null")
    depth: int = field(help="Nesting: 0 at the top of the file")
    start_line: int = field(help="First line (the def/class line, after decorators), 1-based")
    end_line: int = field(help="Last line, inclusive")
    signature: str = field(help="The text from the start to the body, whitespace collapsed")


class MapDefinition(Definition):
    score: float = field(help="Other files referencing the name, divided by the files "
                         "defining it, times 10 for a long snake_case or camelCase name and "
                         "0.1 for a _private one (0: unreferenced, or shown for a nested one)")


class MapFile(Struct):
    path: str = field(help="Relative to the workspace root")
    language: str = field(help="The file's language")
    definitions: list[MapDefinition] = field(help="The definitions shown, in file order")


class Result(Struct):
    path: str = field(help="The file or directory, relative to the workspace root")
    kind: str = field(help="file (an outline) or directory (a repository map)")
    language: str | None = field(omit_null=True, help="A file's language")
    has_errors: bool | None = field(omit_null=True, help="A file: its parse had errors (the "
                                    "outline may miss definitions near them)")
    definitions: list[Definition] | None = field(omit_null=True,
                                                 help="A file's definitions, in file order")
    files: list[MapFile] | None = field(omit_null=True, help="A directory's map: the files "
                                        "shown, most referenced first")
    count: int = field(help="Definitions shown")
    total: int = field(help="Definitions there are (a directory: in all its files)")
    truncated: bool = field(help="Definitions were left out to keep within the budget")
    files_total: int | None = field(omit_null=True, help="A directory: files with definitions")
    other_files: int | None = field(omit_null=True, help="A directory: files in languages "
                                    "without symbols, not mapped")
    lines: int | None = field(omit_null=True, help="A directory: lines of the text map")
    tokens: int | None = field(omit_null=True, help="A directory: estimated tokens of the "
                               "text map")
    files_parsed: int | None = field(omit_null=True, help="A directory: files parsed for this "
                                     "call (the others came from the index, unchanged)")
    scan_limited: bool | None = field(omit_null=True, help="A directory: the walk stopped "
                                      "after 200000 entries; map a subdirectory")
    skipped: Skipped | None = field(omit_null=True, help="A directory: what was not mapped, "
                                    "by kind")


def _definition(d: DefTuple) -> Definition:
    return Definition(kind=d[0], name=d[1], qualname=d[2], parent=d[3], depth=d[4],
                      start_line=d[5], end_line=d[6], signature=d[7])


def run(params: Params, ctx: Context) -> Result:
    import stat

    with ctx.workspace.resolve(params.path) as res:
        if res.st is not None and stat.S_ISDIR(res.st.st_mode):
            directory = True
        else:
            directory = False
            data, rel = _read(res, params.path)
    if directory:
        return _map(params, ctx)
    return _outline(ctx, rel, data)


def _read(res: Resolved, shown: str) -> tuple[bytes, str]:
    from zbtools.core.files.reading import read_bytes

    return read_bytes(res, max_bytes=MAX_FILE_BYTES, shown=shown), res.rel


def _outline(ctx: Context, rel: str, data: bytes) -> Result:
    from zbtools.core.code.languages import language_for, unsupported_language

    language = language_for(rel, data[:256])
    if language is None or not language.has_symbols:
        raise unsupported_language(rel)
    from zbtools.core.code.tagpool import file_tags
    from zbtools.toolkit.parsecache import session_parse

    # kept against the bytes, not a stat signature: a batch sync group may show a version not
    # on disk yet
    tags = session_parse(ctx, "tags", rel, data, lambda: file_tags(language, data))
    definitions = [_definition(d) for d in tags[1]]
    return Result(path=rel, kind="file", language=language.name, has_errors=tags[3],
                  definitions=definitions, files=None, count=len(definitions),
                  total=len(definitions), truncated=False, files_total=None, other_files=None,
                  lines=None, tokens=None, files_parsed=None, scan_limited=None, skipped=None)


def _map_file(entry: CoreMapFile) -> MapFile:
    return MapFile(path=entry.path, language=entry.language, definitions=[
        MapDefinition(kind=d[0], name=d[1], qualname=d[2], parent=d[3], depth=d[4],
                      start_line=d[5], end_line=d[6], signature=d[7], score=round(score, 3))
        for d, score in zip(entry.definitions, entry.scores, strict=True)])


def _map(params: Params, ctx: Context) -> Result:
    from zbtools.core.code.repomap import within_budget
    from zbtools.toolkit.codeindex import directory_ranking

    whole = False
    while True:
        found = directory_ranking(ctx, params.path, include_hidden=params.include_hidden,
                                  include_ignored=params.include_ignored,
                                  exclude_dirs=params.exclude_dirs, whole=whole)
        assert found.ranking is not None
        repo = within_budget(found.ranking, params.max_lines, params.max_tokens)
        if repo is not None:
            break
        whole = True  # the kept ranking is shorter than this budget
    for note in found.notes:
        ctx.warn(note)
    return Result(path=found.path, kind="directory", language=None, has_errors=None,
                  definitions=None, files=[_map_file(entry) for entry in repo.files],
                  count=repo.definitions_shown, total=repo.definitions_total,
                  truncated=repo.truncated, files_total=repo.files_total,
                  other_files=found.other_files, lines=repo.lines, tokens=repo.tokens,
                  files_parsed=found.parsed, scan_limited=found.scan_limited,
                  skipped=found.skipped)


def render(result: Result) -> str:
    if result.kind == "file":
        out = [f"{result.path}: {result.count} definitions ({result.language})"
               + (", parse errors" if result.has_errors else "")]
        out.extend(f"{'  ' * (d.depth + 1)}{d.start_line}-{d.end_line}: "
                   f"{d.signature or d.kind + ' ' + d.name}" for d in result.definitions or ())
        return "\n".join(out) + "\n"
    out = []
    for entry in result.files or ():
        out.append(entry.path + ":")
        out.extend(f"{'  ' * (d.depth + 1)}{d.start_line}: {d.signature or d.kind + ' ' + d.name}"
                   for d in entry.definitions)
    if result.truncated:
        out.append(f"[{result.count} of {result.total} definitions shown, "
                   f"{len(result.files or ())} of {result.files_total} files; raise max_tokens/"
                   "max_lines or outline a subdirectory]")
    if not result.files_total:
        out.append(f"[no files with definitions in {result.path}]")
    return "\n".join(out) + "\n"


TOOL = ToolSpec(
    name="outline",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)
