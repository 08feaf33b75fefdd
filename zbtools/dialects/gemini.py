"""The ``gemini`` dialect (docs/internals/sources.md#gemini): Gemini CLI's built-in tools.

Names, parameters and defaults are those Gemini CLI declares to the model today; the names its
older releases used are accepted as aliases (``search_file_content``; ``absolute_path``,
``offset``/``limit``, ``expected_replacements``, ``directory``, ``paths``). What users see, and
where it departs from Gemini CLI, is in docs/dialects.md#gemini. ``DIALECT`` is the dialect; its
tools map as follows:

* ``list_directory`` -> list_directory: direct children, hidden ones too, ``.git`` never;
  ``ignore`` globs drop names; directories first, then names alphabetically.
* ``read_file`` -> read_file: 1-based ``start_line``/``end_line`` (inclusive), or the older
  0-based ``offset`` with ``limit``.
* ``write_file`` -> write_file; ``replace`` -> apply_edit (``allow_multiple``,
  ``expected_replacements``), or write_file for a new file (empty ``old_string``).
* ``glob`` -> find_files_glob: files changed in the last day newest first, then the rest by path.
* ``grep_search`` -> grep_search, case-insensitive by default, at most 100 matches;
  ``exclude_pattern`` and ``max_matches_per_file`` filter the lines found.
* ``run_shell_command`` -> bash (stderr merged into the output); ``web_fetch`` -> web_fetch of
  the URL in ``prompt``; ``google_web_search`` -> web_search; ``write_todos`` -> update_plan.
* ``read_many_files`` -> find_files_glob and read_file, concatenated with ``--- path ---``
  separators; ``save_memory`` -> write_file of ``.zbtools/memory/GEMINI.md`` (both in
  ``gemini_composed``).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool, RouterTool
from zbtools.dialects.gemini_composed import (
    INLINE_TYPES,
    MAX_INLINE_BYTES,
    READ_BYTES,
    FileFilteringOptions,
    MemoryResult,
    ReadManyParams,
    ReadManyResult,
    SaveMemoryParams,
    anchored,
    invalid,
    read_many,
    read_many_text,
    respects_git,
    save_memory,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from zbtools.core.call.context import Context

GREP_DEFAULT_MAX = 100
MAX_URLS = 20
DAY_SECONDS = 24 * 60 * 60


# -- parameters -----------------------------------------------------------------------------------


class ListDirectoryParams(Struct):
    dir_path: str = field(aliases=("path",), help="The path to the directory to list")
    ignore: list[str] | None = field(default=None, help="List of glob patterns to ignore")
    file_filtering_options: FileFilteringOptions | None = field(
        default=None, help="Optional: Whether to respect ignore patterns from .gitignore or "
        ".geminiignore")


class ReadFileParams(Struct):
    file_path: str = field(aliases=("absolute_path", "path"),
                           help="The path to the file to read.")
    start_line: int | None = field(default=None,
                                   help="Optional: The 1-based line number to start reading from.")
    end_line: int | None = field(default=None, help="Optional: The 1-based line number to end "
                                 "reading at (inclusive).")
    offset: int | None = field(default=None, help="Older form: the 0-based line number to start "
                               "reading from (use start_line)")
    limit: int | None = field(default=None, help="Older form, with offset: the number of lines "
                              "to read (use end_line)")


class WriteFileParams(Struct):
    file_path: str = field(aliases=("absolute_path", "path"),
                           help="The path to the file to write to.")
    content: str = field(text_body=True, help="The content to write to the file. Do not use "
                         "omission placeholders like '(rest of methods ...)', '...', or "
                         "'unchanged code'; provide complete literal content.")


class GlobParams(Struct):
    pattern: str = field(help="The glob pattern to match against (e.g., '**/*.py', 'docs/*.md').")
    dir_path: str | None = field(default=None, aliases=("path",), help="Optional: The absolute "
                                 "path to the directory to search within. If omitted, searches "
                                 "the root directory.")
    case_sensitive: bool | None = field(default=None, help="Optional: Whether the search should "
                                        "be case-sensitive. Defaults to false.")
    respect_git_ignore: bool | None = field(default=None, help="Optional: Whether to respect "
                                            ".gitignore patterns when finding files. Only "
                                            "available in git repositories. Defaults to true.")
    respect_gemini_ignore: bool | None = field(default=None, help="Optional: Whether to respect "
                                               ".geminiignore patterns when finding files. "
                                               "Defaults to true.")


class GrepParams(Struct):
    pattern: str = field(help="The regular expression (regex) pattern to search for within file "
                         "contents (e.g., 'function\\s+myFunction').")
    dir_path: str | None = field(default=None, aliases=("path",), help="Optional: The directory "
                                 "(or file) to search within. If omitted, searches the current "
                                 "working directory.")
    include_pattern: str | None = field(default=None, aliases=("include",), help="Optional: A "
                                        "glob pattern to filter which files are searched (e.g., "
                                        "'*.js', '*.{ts,tsx}', 'src/**').")
    exclude_pattern: str | None = field(default=None, help="Optional: A regular expression "
                                        "pattern to exclude from the search results. If a line "
                                        "matches both the pattern and the exclude_pattern, it "
                                        "will be omitted.")
    names_only: bool | None = field(default=None, help="Optional: If true, only the file paths "
                                    "of the matches will be returned, without the line content "
                                    "or line numbers.")
    max_matches_per_file: int | None = field(default=None, minimum=1, help="Optional: Maximum "
                                             "number of matches to return per file.")
    total_max_matches: int | None = field(default=None, minimum=1, help="Optional: Maximum "
                                          "number of total matches to return. Defaults to 100 "
                                          "if omitted.")
    case_sensitive: bool | None = field(default=None, help="If true, search is case-sensitive. "
                                        "Defaults to false (ignore case) if omitted.")
    fixed_strings: bool | None = field(default=None, help="If true, treats the `pattern` as a "
                                       "literal string instead of a regular expression.")
    context: int | None = field(default=None, minimum=0, help="Show this many lines of context "
                                "around each match (equivalent to grep -C).")
    after: int | None = field(default=None, minimum=0, help="Show this many lines after each "
                              "match (equivalent to grep -A).")
    before: int | None = field(default=None, minimum=0, help="Show this many lines before each "
                               "match (equivalent to grep -B).")
    no_ignore: bool | None = field(default=None, help="If true, searches all files including "
                                   "those usually ignored (like in .gitignore). Defaults to "
                                   "false.")


class ReplaceParams(Struct):
    file_path: str = field(aliases=("absolute_path", "path"),
                           help="The path to the file to modify.")
    instruction: str | None = field(default=None, help="A clear, semantic instruction for the "
                                    "code change (accepted for the record; the replacement is "
                                    "old_string -> new_string).")
    old_string: str = field(text_body=True, help="The exact literal text to replace, unescaped. "
                            "Empty, for a file that does not exist yet: create it.")
    new_string: str = field(text_body=True, help="The exact literal text to replace "
                            "`old_string` with, unescaped.")
    allow_multiple: bool | None = field(default=None, help="If true, the tool will replace all "
                                        "occurrences of `old_string`. If false (default), it "
                                        "will only succeed if exactly one occurrence is found.")
    expected_replacements: int | None = field(default=None, minimum=1, help="Older form: the "
                                              "number of occurrences to replace; the edit fails "
                                              "unless there are exactly that many (default 1).")


class ShellParams(Struct):
    command: str = field(text_body=True,
                         help="Exact bash command to execute as `bash -c <command>`")
    description: str | None = field(default=None, help="Brief description of the command for "
                                    "the user.")
    dir_path: str | None = field(default=None, aliases=("directory",), help="(OPTIONAL) The path "
                                 "of the directory to run the command in. If not provided, the "
                                 "project root directory is used. Must be a directory within the "
                                 "workspace and must already exist.")
    is_background: bool | None = field(default=None, help="Set to true if this command should "
                                       "be run in the background (e.g. for long-running servers "
                                       "or watchers).")


class WebFetchParams(Struct):
    prompt: str = field(help="A prompt that includes the URL to fetch (starting with http:// "
                        "or https://) and what to look for in it.")


class WebSearchParams(Struct):
    query: str = field(help="The search query to find information on the web.")


class TodoItem(Struct):
    description: str = field(help="The description of the task.")
    status: Literal["pending", "in_progress", "completed", "cancelled"] = field(
        help="The current status of the task.")


class WriteTodosParams(Struct):
    todos: list[TodoItem] = field(help="The complete list of todo items. This will replace the "
                                  "existing list.")


# -- a tool that runs canonical tools and reshapes what they return -------------------------------


class GeminiTool(RouterTool):
    """A Gemini tool built on canonical tools: ``route`` picks the tool and its arguments, and
    ``post`` reshapes the result (ordering, filters the canonical tool lacks); or ``run`` does
    the whole call through the canonical tools (read_many_files, save_memory)."""

    def __init__(self, name: str, targets: tuple[str, ...], *, params: type[Struct],
                 description: str,
                 route: Callable[[Any, Context], tuple[str, dict[str, Any]]] | None = None,
                 post: Callable[[Any, Any], Any] | None = None,
                 run: Callable[[Any, Context], Struct] | None = None,
                 text: Callable[[Any], str] | None = None,
                 result: type[Struct] | None = None,
                 category: str = "files", **kwargs: Any) -> None:
        super().__init__(name, targets, route=route or _no_route, params=params,
                         description=description, **kwargs)
        self._post = post
        self._whole = run
        self._text = text
        self._result = result
        self._category = category

    @property
    def category(self) -> str:
        return self._category

    def output_schema(self) -> dict[str, Any] | None:
        """A composed tool's own result; None: the result of the canonical tool it runs."""
        if self._result is None:
            return None
        from zbtools.schema import struct_schema

        return struct_schema(self._result, closed=False, output=True)

    def _render(self, result: Any) -> str:
        return self._text(result) if self._text is not None else super()._render(result)

    def _run(self, params: Any, ctx: Context) -> Struct:
        if self._whole is not None:
            return self._whole(params, ctx)
        result = super()._run(params, ctx)
        return self._post(params, result) if self._post is not None else result


def _no_route(params: Any, ctx: Context) -> tuple[str, dict[str, Any]]:  # pragma: no cover
    raise AssertionError("a composed tool runs itself")


# -- list_directory -------------------------------------------------------------------------------


def _route_ls(params: ListDirectoryParams, ctx: Context) -> tuple[str, dict[str, Any]]:
    if not params.dir_path.strip():
        raise invalid("The 'dir_path' parameter must be non-empty.",
                       "give the directory to list, e.g. \".\"", "dir_path")
    return "list_directory", {"path": params.dir_path, "max_depth": 1, "limit": 0,
                              "include_hidden": True, "exclude_dirs": [],
                              "include_ignored": not respects_git(params.file_filtering_options)}


def _locale_key(name: str) -> tuple[str, str]:
    # JavaScript's localeCompare: letters before case, lower case first on a tie
    return (name.casefold(), name.swapcase())


def _post_ls(params: ListDirectoryParams, result: Any) -> Any:
    from fnmatch import fnmatchcase

    ignore = params.ignore or []
    kept = [e for e in result.entries if e.name != ".git"
            and not any(fnmatchcase(e.name, glob) for glob in ignore)]
    kept.sort(key=lambda e: (e.type != "directory", _locale_key(e.name)))
    result.entries = kept
    result.count = len(kept)
    return result


# -- read_file ------------------------------------------------------------------------------------


def _read(params: ReadFileParams, out: dict[str, Any]) -> None:
    for key in ("start_line", "end_line"):
        out.pop(key, None)
    if params.file_path.rsplit(".", 1)[-1].lower() in INLINE_TYPES:
        # images, audio and PDFs go to the model whole, as inline data with their MIME type
        out["as_base64"] = True
        out["max_base64_bytes"] = MAX_INLINE_BYTES
    if not params.file_path.strip():
        raise invalid("The 'file_path' parameter must be non-empty.",
                       "give the path of the file to read", "file_path")
    start, end = params.start_line, params.end_line
    if start is not None and start < 1:
        raise invalid("start_line must be at least 1", "start_line 1 is the first line",
                       "start_line")
    if end is not None and end < 1:
        raise invalid("end_line must be at least 1", "end_line 1 is the first line", "end_line")
    if start is not None and end is not None and start > end:
        raise invalid("start_line cannot be greater than end_line",
                       f"e.g. start_line {end} and end_line {start}", "start_line")
    if start is not None or end is not None:
        if params.offset is not None or params.limit is not None:
            raise invalid("give start_line/end_line or offset/limit, not both",
                           "use start_line and end_line (1-based, inclusive)", "start_line")
        first = start or 1
        out["offset"] = first
        if end is not None:
            out["limit"] = end - first + 1
        return
    if params.offset is not None:
        if params.offset < 0:
            raise invalid("Offset must be a non-negative number", "offset 0 is the first line",
                           "offset")
        out["offset"] = params.offset + 1
    if params.limit is not None and params.limit < 1:
        raise invalid("Limit must be a positive number", "omit limit to read up to 2000 lines",
                       "limit")


def _read_error(error: ToolError) -> ToolError:
    if error.code == "binary_file":
        error.hint = ("this is not a text file: run_shell_command (e.g. `file`, `xxd | head`) "
                      "can describe it")
    return error


def _write(params: WriteFileParams, out: dict[str, Any]) -> None:
    if not params.file_path.strip():
        raise invalid('Missing or empty "file_path"', "give the path of the file to write",
                      "file_path")
    if _placeholders(params.content):
        raise invalid("`content` contains an omission placeholder (for example 'rest of methods "
                      "...'). Provide complete file content.", "write out the whole file in "
                      "content: it replaces the file", "content")


# -- glob -----------------------------------------------------------------------------------------


def _glob(params: GlobParams, out: dict[str, Any]) -> None:
    for key in ("dir_path", "respect_git_ignore", "respect_gemini_ignore"):
        out.pop(key, None)
    out["path"] = params.dir_path or "."
    out["include_ignored"] = params.respect_git_ignore is False


def _exists(ctx: Context, path: str) -> bool:
    try:
        with ctx.workspace.resolve(path, create_parents=True) as res:
            return res.exists
    except ToolError:  # outside the workspace, or under a file: the search says so
        return False


def _route_glob(params: GlobParams, ctx: Context) -> tuple[str, dict[str, Any]]:
    if not params.pattern.strip():
        raise invalid("The 'pattern' parameter cannot be empty.", "e.g. '**/*.py'", "pattern")
    pattern = params.pattern
    if any(c in pattern for c in "[]{}()*?") and _exists(ctx, f"{params.dir_path or '.'}/"
                                                          f"{pattern}"):
        # a file whose name is the pattern itself ('file[1].txt') is found, as in Gemini
        import re

        pattern = re.sub(r"([][{}()*?])", r"\\\1", pattern)
    out: dict[str, Any] = {"pattern": anchored(pattern), "sort": "mtime", "limit": 0,
                           "include_hidden": True, "exclude_dirs": [".git", "node_modules"],
                           "case_sensitive": bool(params.case_sensitive)}
    _glob(params, out)
    return "find_files_glob", out


def _post_glob(params: GlobParams, result: Any) -> Any:
    import time
    from datetime import datetime

    now = time.time()

    def mtime(match: Any) -> float:
        try:
            return datetime.fromisoformat(match.modified).timestamp()
        except ValueError:  # pragma: no cover - the canonical tool writes ISO 8601
            return 0.0

    recent = [m for m in result.matches if now - mtime(m) < DAY_SECONDS]
    older = [m for m in result.matches if now - mtime(m) >= DAY_SECONDS]
    recent.sort(key=mtime, reverse=True)
    older.sort(key=lambda m: m.path)
    result.matches = recent + older
    return result


# -- grep_search ----------------------------------------------------------------------------------


def _route_grep(params: GrepParams, ctx: Context) -> tuple[str, dict[str, Any]]:
    total = params.total_max_matches or GREP_DEFAULT_MAX
    filtered = params.exclude_pattern is not None or params.max_matches_per_file is not None
    out: dict[str, Any] = {
        "pattern": params.pattern, "path": params.dir_path or ".",
        "case_insensitive": not params.case_sensitive,
        "fixed_strings": bool(params.fixed_strings),
        # lines are filtered here first, so the cap is applied after them
        "output_mode": "content" if filtered or not params.names_only else "files_with_matches",
        "head_limit": 0 if filtered else total,
        "include_ignored": bool(params.no_ignore), "include_hidden": True,
    }
    # rg --hidden, with log and temp files left out unless no_ignore (Gemini's own excludes)
    globs = [params.include_pattern] if params.include_pattern else []
    if not params.no_ignore:
        globs += ["!*.log", "!*.tmp"]
    if globs:
        out["glob"] = ",".join(globs)
    for own, canonical in (("context", "context"), ("after", "after_context"),
                           ("before", "before_context")):
        value = getattr(params, own)
        if value is not None:
            out[canonical] = value
    if params.exclude_pattern is not None:
        _regex(params.exclude_pattern, params.case_sensitive)  # a bad one fails first
    return "grep_search", out


def _regex(pattern: str, case_sensitive: bool | None) -> Any:
    import re

    try:
        return re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
    except re.error as exc:
        raise ToolError("regex_error", f"exclude_pattern is not a valid regular expression: "
                        f"{exc}", hint="fix exclude_pattern, or leave it out",
                        details={"pattern": pattern}) from None


def _post_grep(params: GrepParams, result: Any) -> Any:
    if params.exclude_pattern is None and params.max_matches_per_file is None:
        return result
    total = params.total_max_matches or GREP_DEFAULT_MAX
    exclude = (_regex(params.exclude_pattern, params.case_sensitive)
               if params.exclude_pattern is not None else None)
    per_file: dict[str, int] = {}
    kept = []
    for match in result.matches:
        if exclude is not None and exclude.search(match.text):
            continue
        seen = per_file.get(match.path, 0)
        if params.max_matches_per_file is not None and seen >= params.max_matches_per_file:
            continue
        per_file[match.path] = seen + 1
        kept.append(match)
    result.total_matches = len(kept)
    result.files_with_matches = len(per_file)
    result.truncated = result.truncated or len(kept) > total
    kept = kept[:total]
    if params.names_only:
        result.output_mode = "files_with_matches"
        result.files = list(dict.fromkeys(m.path for m in kept))
        result.matches = []
    else:
        result.matches = kept
    return result


# -- replace --------------------------------------------------------------------------------------


def _placeholders(text: str) -> set[str]:
    """The lines of ``text`` that stand for omitted code as Gemini CLI sees them ('(rest of
    methods ...)', '// unchanged code ...'); the canonical tool refuses others besides."""
    import re

    found = set()
    for line in text.splitlines():
        bare = re.sub(r"^(//|#|/\*|<!--)\s*|\s*(\*/|-->)$", "", line.strip()).strip()
        if bare.startswith("(") and bare.endswith(")"):
            bare = bare[1:-1].strip()
        if re.fullmatch(r"(?i)(rest of|unchanged|remaining|existing|omitted)\b.*(\.\.\.|\u2026)",
                        bare):
            found.add(bare.casefold())
    return found


# Gemini's replace: the exact text, then each line trimmed, then the words with any whitespace
# between them (docs/dialects.md#tiers); its fuzzy match is a departure
REPLACE_TIERS = ["trailing_whitespace", "indentation", "inner_whitespace"]


def _route_replace(params: ReplaceParams, ctx: Context) -> tuple[str, dict[str, Any]]:
    import stat

    from zbtools.core.errors import already_exists, is_directory, not_found

    path = params.file_path
    if not path.strip():
        raise invalid("The 'file_path' parameter must be non-empty.",
                       "give the path of the file to modify", "file_path")
    extra = _placeholders(params.new_string) - _placeholders(params.old_string)
    if extra:
        raise ToolError("placeholder_in_new", f"new_string has an omission placeholder: "
                        f"{sorted(extra)[0]}", details={"path": path})
    with ctx.workspace.resolve(path) as res:
        exists = res.exists
        is_dir = exists and res.st is not None and stat.S_ISDIR(res.st.st_mode)
    if is_dir:
        raise is_directory(path, "write")
    if not exists:
        if params.old_string == "":
            return "write_file", {"path": path, "content": params.new_string,
                                  "overwrite": False, "newline": "as_is"}
        raise not_found(path, what="File not found. Cannot apply edit",
                        hint="use an empty old_string to create a new file")
    if params.old_string == "":
        raise already_exists(path, what="Failed to edit. Attempted to create a file that "
                             "already exists.", hint="give the text to replace in old_string, "
                             "or use write_file to replace the whole file")
    args: dict[str, Any] = {"path": path, "old_text": params.old_string,
                            "new_text": params.new_string, "tiers": REPLACE_TIERS}
    expected = params.expected_replacements
    if params.allow_multiple:
        args["replace_all"] = True
        if expected is not None:
            args["expected_count"] = expected
    elif expected is not None and expected > 1:
        args["replace_all"] = True
        args["expected_count"] = expected
    return "apply_edit", args


def _replace_error(error: ToolError) -> ToolError:
    """Gemini's own wording for the failures a model is trained to recover from."""
    if error.code == "no_change" and "identical" in error.message:
        error.message = "No changes to apply. The old_string and new_string are identical."
        error.hint = "nothing to do; send the text you want in new_string"
    elif error.code == "no_match":
        error.message = ("Failed to edit, could not find the string to replace "
                         "(0 occurrences found for old_string).")
        error.hint = ("read the file again with read_file and copy the exact current text, "
                      "including whitespace and indentation, into old_string")
    elif error.code == "placeholder_in_new":
        error.message = ("`new_string` contains an omission placeholder (for example 'rest of "
                         "methods ...'). Provide exact literal replacement text.")
        error.hint = "write out in new_string every line the edit keeps"
    elif error.code == "ambiguous_match":
        found = error.details.get("count")
        expected = error.details.get("expected_count", 1)
        if isinstance(found, int):
            error.message = (f"Failed to edit, expected {expected} "
                             f"occurrence{'s' if expected != 1 else ''} but found {found}.")
        error.hint = ("include more surrounding lines in old_string so that it matches only the "
                      "place you mean, or set allow_multiple to true to replace every occurrence")
    return error


# -- every tool's errors -----------------------------------------------------------------------

# canonical phrases and names a canonical error may carry -> Gemini's (hints name only the tools
# and parameters the dialect has: docs/internals/surfaces.md#dialect-layer)
SPEAK: tuple[tuple[str, str], ...] = (
    ("use get_file_info or read_file on files", "use read_file on files"),
    ("get_file_info", "list_directory"), ("find_files_glob", "glob"), ("find_files", "glob"),
    ("apply_edit", "replace"), ("write_append", "replace"), ("create_directory", "write_file"),
    ("bash", "run_shell_command"), ("old_text", "old_string"), ("new_text", "new_string"),
    ("cwd", "dir_path"),
)


def _speak(error: ToolError) -> ToolError:
    import re

    for canonical, own in SPEAK:
        pattern = re.compile(rf"(?<![\w-]){re.escape(canonical)}(?![\w-])")
        error.message = pattern.sub(own, error.message)
        if error.hint:
            error.hint = pattern.sub(own, error.hint)
    return error


def _speaking(adapt: Callable[[ToolError], ToolError] | None) -> Callable[[ToolError], ToolError]:
    return (lambda error: _speak(adapt(error))) if adapt is not None else _speak


# -- run_shell_command, web_fetch, write_todos ----------------------------------------------------


def _shell(params: ShellParams, out: dict[str, Any]) -> None:
    for key in ("dir_path", "is_background"):
        out.pop(key, None)
    if not params.command.strip():
        raise invalid("Command cannot be empty.", 'e.g. {"command": "ls -la"}', "command")
    if params.dir_path is not None:
        out["cwd"] = params.dir_path
    if params.is_background:
        out["background"] = True


def _urls(prompt: str) -> list[str]:
    import re

    found = []
    for raw in re.findall(r"https?://[^\s<>\"'`)\]]+", prompt):
        url = raw.rstrip(".,;:!?")
        # GitHub's blob pages are HTML around the file: Gemini fetches the raw file instead
        blob = re.match(r"https://github\.com/([^/]+)/([^/]+)/blob/(.+)", url)
        if blob:
            url = f"https://raw.githubusercontent.com/{blob[1]}/{blob[2]}/{blob[3]}"
        if url not in found:
            found.append(url)
    return found


def _web_fetch(params: WebFetchParams, out: dict[str, Any]) -> None:
    out.pop("prompt", None)
    urls = _urls(params.prompt)
    if not urls:
        raise invalid("The 'prompt' must contain at least one valid URL (starting with "
                       "http:// or https://).", 'e.g. {"prompt": "Summarize '
                       'https://example.com/article"}', "prompt")
    if len(urls) > MAX_URLS:
        raise invalid(f"The 'prompt' names {len(urls)} URLs; at most {MAX_URLS} are allowed.",
                       "name fewer URLs", "prompt")
    if len(urls) > 1:
        raise invalid(f"The 'prompt' names {len(urls)} URLs; this web_fetch fetches one URL "
                       "per call.", f"call web_fetch once per URL, starting with {urls[0]}",
                       "prompt")
    out["url"] = urls[0]


def _todos(params: WriteTodosParams, out: dict[str, Any]) -> None:
    out.pop("todos", None)
    if sum(1 for t in params.todos if t.status == "in_progress") > 1:
        raise invalid('Invalid parameters: Only one task can be "in_progress" at a time.',
                       "mark the others pending or completed", "todos")
    steps = []
    for todo in params.todos:
        if todo.status == "cancelled":  # the plan has no such status: said in the title
            steps.append({"title": f"{todo.description} (cancelled)", "status": "completed"})
        else:
            steps.append({"title": todo.description, "status": todo.status})
    out["steps"] = steps


# -- the dialect ----------------------------------------------------------------------------------


def _tools() -> list[DialectTool]:
    return [
        GeminiTool("list_directory", ("list_directory",), params=ListDirectoryParams,
                   adapt_error=_speak,
                   route=_route_ls, post=_post_ls, read_only=True, destructive=False,
                   idempotent=True, parallel_safe=True, description=(
                       "Lists the names of files and subdirectories directly within a specified "
                       "directory path. Can optionally ignore entries matching provided glob "
                       "patterns.")),
        DialectTool("read_file", "read_file", params=ReadFileParams,
                    renames={"file_path": "path"}, translate=_read,
                    defaults={"max_bytes": READ_BYTES}, adapt_error=_speaking(_read_error),
                    error_names={"offset": "start_line", "limit": "end_line"}, description=(
                        "Reads and returns the content of a specified file. If the file is "
                        "large, the content will be truncated; read more of it with the "
                        "'start_line' and 'end_line' parameters (1-based, inclusive). Handles "
                        "text, images, audio files and PDF files.")),
        DialectTool("write_file", "write_file", params=WriteFileParams, translate=_write,
                    adapt_error=_speak,
                    renames={"file_path": "path"}, description=(
                        "Writes the complete content to a file, automatically creating missing "
                        "parent directories. Overwrites existing files. Use 'replace' for "
                        "targeted edits to large files.")),
        GeminiTool("glob", ("find_files_glob",), params=GlobParams, route=_route_glob,
                   adapt_error=_speak,
                   post=_post_glob, read_only=True, destructive=False, idempotent=True,
                   parallel_safe=True, category="search", description=(
                       "Efficiently finds files matching specific glob patterns (e.g., "
                       "`src/**/*.ts`, `**/*.md`), returning paths sorted by modification time "
                       "(newest first). Ideal for quickly locating files based on their name or "
                       "path structure, especially in large codebases.")),
        GeminiTool("grep_search", ("grep_search",), params=GrepParams, route=_route_grep,
                   adapt_error=_speak,
                   error_names={"after_context": "after", "before_context": "before"},
                   post=_post_grep, aliases=("search_file_content",), read_only=True,
                   destructive=False, idempotent=True, parallel_safe=True, category="search",
                   description="Searches for a regular expression pattern within file contents. "
                   "Max 100 matches."),
        GeminiTool("replace", ("apply_edit", "write_file"), params=ReplaceParams,
                   route=_route_replace, adapt_error=_speaking(_replace_error), category="edit",
                   error_names={"old_text": "old_string", "new_text": "new_string"},
                   description=(
                       "Replaces text within a file. By default, the tool expects to find and "
                       "replace exactly ONE occurrence of `old_string`. If you want to replace "
                       "multiple occurrences of the exact same string, set `allow_multiple` to "
                       "true. This tool requires providing significant context around the "
                       "change to ensure precise targeting. An empty `old_string` creates a "
                       "new file.")),
        DialectTool("run_shell_command", "bash", params=ShellParams, translate=_shell,
                    adapt_error=_speak,
                    defaults={"merge_stderr": True},
                    error_names={"cwd": "dir_path", "background": "is_background"},
                    description=(
                        "This tool executes a given shell command as `bash -c <command>`. To "
                        "run a command in the background, set the `is_background` parameter to "
                        "true. Do NOT use `&` to background commands. Returns the combined "
                        "stdout/stderr and the exit code.")),
        DialectTool("web_fetch", "web_fetch", params=WebFetchParams, translate=_web_fetch,
                    adapt_error=_speak,
                    description=(
                        "Fetches content from the URL in the prompt (http:// or https://) and "
                        "returns it as text. GitHub 'blob' URLs are fetched as raw files.")),
        DialectTool("google_web_search", "web_search", params=WebSearchParams,
                    adapt_error=_speak, description=(
            "Performs a web search and returns the results. This tool is useful for finding "
            "information on the internet based on a query.")),
        GeminiTool("read_many_files", ("find_files_glob", "read_file"), params=ReadManyParams,
                   adapt_error=_speak, run=read_many, text=read_many_text,
                   result=ReadManyResult, read_only=True, destructive=False,
                   idempotent=True, parallel_safe=True, description=(
                       "Reads content from multiple files specified by glob patterns or paths "
                       "(the 'include' argument). Text files are concatenated, each after a "
                       "'--- {filePath} ---' separator; '--- End of content ---' follows the "
                       "last file. Default excludes (node_modules, .git...) apply unless "
                       "'useDefaultExcludes' is false.")),
        GeminiTool("save_memory", ("write_file",), params=SaveMemoryParams, run=save_memory,
                   result=MemoryResult,
                   text=lambda result: f"{result.message}\n", adapt_error=_speak,
                   destructive=False, category="plans", description=(
                       "Saves a specific piece of information or fact to your long-term "
                       "memory: a '- fact' line under '## Gemini Added Memories' in "
                       ".zbtools/memory/GEMINI.md of the workspace. Use it when the user asks "
                       "you to remember something.")),
        DialectTool("write_todos", "update_plan", params=WriteTodosParams, translate=_todos,
                    adapt_error=_speak,
                    closed=True, description=(
                        "Lists the subtasks of the current request and their status (pending, "
                        "in_progress, completed, cancelled); the list replaces the existing "
                        "one. Only one subtask can be in_progress at a time.")),
    ]


DIALECT = Dialect("gemini", _tools)
