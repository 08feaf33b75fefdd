"""The ``fiz`` dialect (docs/internals/sources.md#fiz): bash, edit, find, grep, ls, patch, read,
task, write.

Schemas reproduce fiz's documented JSON Schemas (names, types, descriptions, enums, required
lists, ``additionalProperties: false`` where fiz has it); each tool's parallel-safe flag is
zbtools' own, which agrees with fiz's. What users see, and where it departs from fiz (``patch``
and whitespace-tolerant edits), is in docs/dialects.md. ``DIALECT`` is the dialect; its tools
map as follows:

* ``read`` -> read_file, ``offset`` and the result's ``next_offset`` 0-based.
* ``edit`` -> apply_edit ``patches`` from ``edits[{oldText, newText}]``, or one edit from the
  legacy ``old_string``/``new_string`` (both forms, or neither, is ``invalid_arguments``).
* ``patch`` -> by ``operation``: apply_edit (replace, replace_all), write_append (append),
  insert_text at the start (prepend).
* ``find`` -> find_files_glob, case-sensitive, a pattern without ``/`` matching in ``dir`` only
  (``*`` never crosses a directory; ``**`` does); ``grep`` -> grep_search (``dir`` -> ``path``);
  both skipping only the
  directories fiz names (``FIZ_EXCLUDED``, replaced by ``exclude_dirs``); ``ls`` ->
  list_directory showing every entry.
* ``bash`` -> bash (``timeout_ms``), ``task`` -> task, ``write`` -> write_file.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.errors import not_found
from zbtools.dialects import Dialect, DialectTool, RouterTool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context

PATH_HELP = "File path (relative to working directory or absolute)"
# What fiz's find and grep skip, as its schema says: these five directories, nothing else (no
# hidden or .gitignore'd file); ``exclude_dirs`` replaces the list, ``[]`` searches everything.
FIZ_EXCLUDED = [".git", ".hg", ".svn", "node_modules", "vendor"]
SEED_LISTING: dict[str, Any] = {"exclude_dirs": FIZ_EXCLUDED, "include_hidden": True,
                                "include_ignored": True}
# ls lists a directory's contents: all of them
SHOW_ALL: dict[str, Any] = {"exclude_dirs": [], "include_hidden": True,
                            "include_ignored": True}
EXCLUDE_HELP = ("Override default excluded directories. By default, skips .git, .hg, .svn, "
                "node_modules, and vendor/. Set to empty array [] to search all directories.")


# Matching tolerances (docs/dialects.md#tiers): edit's "exact text" keeps the indentation and
# trailing-whitespace slips (reported by matched_with); patch's search "must match exactly
# (including whitespace)": nothing but the exact tier. Neither retries edits in sequence: each
# is matched against the original file.
EDIT_TIERS = ["trailing_whitespace", "indentation"]
PATCH_TIERS: list[str] = []


class BashParams(Struct):
    command: str = field(help="Shell command to execute")
    timeout_ms: int | None = field(default=None, help="Timeout in milliseconds (default 120000)")


class EditItem(Struct):
    oldText: str = field(text_body=True,
                         help="Exact text to find (must be unique in the file and must not "
                         "overlap with other edits)")
    newText: str = field(text_body=True, help="Replacement text")


class EditParams(Struct):
    path: str = field(help=PATH_HELP)
    edits: list[EditItem] | None = field(
        default=None, help="One or more targeted replacements. Each edit is matched against the "
        "original file, not incrementally. Do not include overlapping or nested edits. If two "
        "changes touch the same block or nearby lines, merge them into one edit instead.")
    old_string: str | None = field(text_body=True, default=None,
                                   help="Legacy: exact string to find (use edits[] instead)")
    new_string: str | None = field(text_body=True, default=None,
                                   help="Legacy: replacement string (use edits[] instead)")


class FindParams(Struct):
    pattern: str = field(help="Path pattern to match (e.g. '**/*.go', 'cmd/**/main.go'). Use ** "
                         "to match across directories.")
    dir: str | None = field(default=None, help="Directory to search in (relative to working "
                            "directory or absolute; defaults to working directory)")
    exclude_dirs: list[str] | None = field(default=None, help=EXCLUDE_HELP)


class GrepParams(Struct):
    pattern: str = field(help="Regular expression to search for")
    dir: str | None = field(default=None, help="Directory to search in (relative or absolute; "
                            "defaults to working directory)")
    glob: str | None = field(default=None, help="Restrict to files whose base names match this "
                             "glob (e.g. '*.go', '*.ts')")
    case_insensitive: bool | None = field(default=None,
                                          help="Case-insensitive matching (default false)")
    exclude_dirs: list[str] | None = field(default=None, help=EXCLUDE_HELP)


class LsParams(Struct):
    path: str | None = field(default=None, help="Directory to list (relative to working "
                             "directory or absolute; defaults to working directory)")


class PatchParams(Struct):
    path: str = field(help=PATH_HELP)
    search: str | None = field(text_body=True,
                               default=None, help="Exact text to find in the file. Must match "
                               "exactly (including whitespace). Will match first occurrence.")
    content: str = field(text_body=True, help="Replacement text, or text to prepend/append")
    operation: Literal["replace", "replace_all", "prepend", "append"] | None = field(
        default=None, help="One of: 'replace' (default, search must be unique), 'replace_all' "
        "(replace every occurrence), 'prepend' (insert at file start), 'append' (insert at "
        "file end)")


class ReadParams(Struct):
    path: str = field(help=PATH_HELP)
    offset: int | None = field(default=None, help="0-based line offset to start reading from")
    limit: int | None = field(default=None, help="Maximum number of lines to return")


class TaskParams(Struct):
    operation: Literal["create", "update", "get", "list"] = field(
        help="The operation to perform")
    id: str | None = field(default=None,
                           help="Task ID (required for update/get, ignored for create/list)")
    title: str | None = field(default=None, help="Task title (required for create)")
    description: str | None = field(default=None, help="Optional task description")
    status: Literal["pending", "in_progress", "completed"] | None = field(
        default=None, help="New status (required for update)")


class WriteParams(Struct):
    path: str = field(help=PATH_HELP)
    content: str = field(text_body=True, help="Content to write to the file")


def _invalid(message: str, hint: str, argument: str) -> ToolError:
    return ToolError("invalid_arguments", message, hint=hint, details={"problems": [
        {"problem": "invalid_combination", "argument": argument, "message": message}]})


def _edit(params: EditParams, out: dict[str, Any]) -> None:
    legacy = params.old_string is not None or params.new_string is not None
    for key in ("edits", "old_string", "new_string"):
        out.pop(key, None)
    if params.edits is not None and legacy:
        raise _invalid("give either edits[] or old_string/new_string, not both",
                       "put every replacement in edits[]", "edits")
    if params.edits is not None:
        if not params.edits:
            raise _invalid("edits is empty", 'give at least one {"oldText": ..., "newText": ...}',
                           "edits")
        out["patches"] = [{"old_text": e.oldText, "new_text": e.newText} for e in params.edits]
        return
    if params.old_string is None or params.new_string is None:
        raise _invalid("edit needs edits[] (or the legacy old_string and new_string)",
                       'e.g. {"path": "a.go", "edits": [{"oldText": "x := 1", "newText": '
                       '"x := 2"}]}', "edits")
    out["old_text"] = params.old_string
    out["new_text"] = params.new_string


def _find(params: FindParams, out: dict[str, Any]) -> None:
    """fiz's patterns are matched against the whole relative path: ``*`` never crosses a
    directory, so a pattern without ``/`` names entries of ``dir`` itself (``**`` is how fiz
    searches deeper), where the canonical tool would take ``*.txt`` as ``**/*.txt``."""
    if "/" not in params.pattern.rstrip("/") and not params.pattern.startswith("**"):
        out["pattern"] = "./" + params.pattern


def _read(params: ReadParams, out: dict[str, Any]) -> None:
    if params.offset is not None:
        if params.offset < 0:
            raise _invalid(f"offset must be >= 0 (0-based), got {params.offset}",
                           "offset 0 is the first line", "offset")
        out["offset"] = params.offset + 1
    if params.limit is not None and params.limit < 1:
        raise _invalid(f"limit must be >= 1, got {params.limit}", "omit limit to read a page "
                       "of up to 2000 lines", "limit")


def _read_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    if out.get("next_offset") is not None:
        out["next_offset"] -= 1  # 0-based, like the offset fiz takes
    return out


def _read_error(error: ToolError) -> ToolError:
    if error.code == "out_of_range" and "total_lines" in error.details:
        total = error.details["total_lines"]
        return ToolError("out_of_range", f"{error.message.split(':')[0]}: offset is past the "
                         f"end of the file, which has {total} lines",
                         hint=f"use an offset between 0 and {max(total - 1, 0)} (0-based)",
                         details=error.details)
    return error


def _route_patch(params: PatchParams, ctx: Context) -> tuple[str, dict[str, Any]]:
    operation = params.operation or "replace"
    if operation in ("prepend", "append"):
        if params.search is not None:
            raise _invalid(f"search is not used with operation {operation}",
                           "omit search, or use operation replace", "search")
        if operation == "append":
            with ctx.workspace.resolve(params.path) as res:
                if not res.exists:
                    raise not_found(params.path, what="no such file", hint="append adds to an "
                                    "existing file; create it with write")
            # the text as given, as the seed says: no newline supplied before or after it
            return "write_append", {"path": params.path, "content": params.content}
        return "insert_text", {"path": params.path, "content": params.content,
                               "position": "start"}
    if params.search is None:
        raise _invalid(f"operation {operation} needs search (the exact text to replace)",
                       'e.g. {"path": "a.go", "search": "x := 1", "content": "x := 2"}',
                       "search")
    args: dict[str, Any] = {"path": params.path, "old_text": params.search,
                            "new_text": params.content, "tiers": PATCH_TIERS}
    if operation == "replace_all":
        args["replace_all"] = True
    elif params.search and _exact_count(ctx, params.path, params.search) > 1:
        args["occurrence"] = 1  # the seed: "Will match first occurrence"
    return "apply_edit", args


def _exact_count(ctx: Context, path: str, search: str) -> int:
    """How often ``search`` stands in the file byte for byte, overlapping places counted, up
    to 2 (0 when it cannot be read: the edit itself then reports why)."""
    from zbtools.core.files.reading import read_bytes

    try:
        with ctx.workspace.resolve(path) as res:
            if not res.exists:
                return 0
            data = read_bytes(res, shown=path)
    except ToolError:
        return 0
    needle = search.encode("utf-8")
    first = data.find(needle)
    return 0 if first < 0 else 1 if data.find(needle, first + 1) < 0 else 2


def _patch_error(error: ToolError) -> ToolError:
    """An ambiguous search names what fiz's schema offers, not apply_edit's parameters."""
    if error.code == "ambiguous_match":
        error.hint = ("make search unique: include a neighbouring line that only the place you "
                      "mean has, or use operation replace_all")
    return error


def _tools() -> list[DialectTool]:
    return [
        DialectTool("bash", "bash", params=BashParams, description=(
            "Execute a shell command for targeted repo operations such as builds, tests, or "
            "git. Do not use this for file discovery or file reading; use the find, grep, ls, "
            "and read tools instead. Returns stdout, stderr, and exit code.")),
        DialectTool("edit", "apply_edit", params=EditParams, translate=_edit, closed=True,
                    fixed={"tiers": EDIT_TIERS},
                    error_names={"patches": "edits", "old_text": "oldText",
                                 "new_text": "newText"},
                    description="Make targeted edits to a file using exact string replacement."),
        DialectTool("find", "find_files_glob", params=FindParams, renames={"dir": "path"},
                    defaults=SEED_LISTING, translate=_find, fixed={"case_sensitive": True},
                    description="Find files by path pattern. Use this instead of shell find or "
                    "ls when locating files by name."),
        DialectTool("grep", "grep_search", params=GrepParams, renames={"dir": "path"},
                    defaults=SEED_LISTING,
                    description="Search file contents for a regex pattern. Use instead of "
                    "grep/rg shell commands."),
        DialectTool("ls", "list_directory", params=LsParams, defaults=SHOW_ALL,
                    description="List directory contents. Use instead of ls."),
        RouterTool("patch", ("apply_edit", "insert_text", "write_append"), params=PatchParams,
                   route=_route_patch, closed=True, adapt_error=_patch_error,
                   error_names={"old_text": "search", "new_text": "content"}, description=(
                       "Make targeted edits to a file. Supports: replace (default), "
                       "replace_all, prepend, and append operations.")),
        DialectTool("read", "read_file", params=ReadParams, translate=_read, adapt=_read_result,
                    adapt_error=_read_error, shifts={"offset": -1},
                    description="Read file contents. Use instead of cat/head/tail."),
        DialectTool("task", "task", params=TaskParams, description=(
            "Track subtasks in a multi-step plan: create, update, get, list.")),
        DialectTool("write", "write_file", params=WriteParams, description=(
            "Create or overwrite a file with the given content. Creates parent directories as "
            "needed.")),
    ]


DIALECT = Dialect("fiz", _tools)
