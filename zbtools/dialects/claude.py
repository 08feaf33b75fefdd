"""The ``claude`` dialect (docs/internals/sources.md#claude): Claude Code's built-in tools Bash,
BashOutput, KillShell, Glob, Grep, LS, Read, Edit, MultiEdit, Write, NotebookEdit, WebFetch,
WebSearch and TodoWrite, with the parameter names and result fields of the "Tool Input/Output
Types" of Anthropic's Agent SDK reference and the behaviour Claude Code's tool descriptions give.

What users see, and where it departs from Claude Code (whitespace-tolerant edits besides
Claude Code's own curly-quote fold, ``EDIT_TIERS``, docs/dialects.md#tiers; no
read-before-edit rule: ``expected_sha256`` refuses a stale write instead, relative paths
accepted, ``WebFetch`` returning the page instead of a small model's answer), is in
docs/dialects.md. Results are the canonical results with Claude's documented fields added
(Bash's ``output``/``exitCode``/``killed``/``shellId``, ...); where a name is taken, Claude's
meaning wins (BashOutput's ``status``). ``DIALECT`` is the dialect; its tools map as follows:

* ``Bash`` -> bash: ``timeout`` in milliseconds (at most 600000), ``run_in_background``;
  ``BashOutput`` -> bash_output from where the last check of that shell stopped (the cursor is
  kept in the state file ``SHELL_CURSORS``), ``filter`` keeping the matching lines only;
  ``KillShell`` (also ``KillBash``) -> stop_process.
* ``Glob`` -> find_files_glob, newest first; ``Grep`` -> grep_search with ripgrep's option names
  and ``output_mode`` defaulting to ``files_with_matches``. Both search as ripgrep does
  (.gitignore and hidden files honoured, no directory left out by name). ``LS`` ->
  list_directory, recursive as Claude Code's (``LS_MAX`` entries, shallowest first, hidden
  entries and ``__pycache__`` left out), ``ignore`` globs dropping entries and their subtrees.
* ``Read`` -> read_file: ``file_path``, 1-based ``offset`` (``0`` taken as 1), ``limit``
  (2,000 lines whatever their size: ``READ_BYTES``), ``pages``; rendered as ``cat -n``.
* ``Write`` -> write_file; ``Edit`` -> apply_edit (``old_string``, ``new_string``,
  ``replace_all``); ``MultiEdit`` -> apply_edit's matcher, its ``edits`` applied in sequence
  (each to the result of the one before), written once or not at all.
* ``NotebookEdit`` -> edit_notebook_cell (``cell_id``, ``edit_mode``; an insert without
  ``cell_id`` goes first); ``WebFetch`` -> web_fetch; ``WebSearch`` -> web_search with the
  domain lists applied to the results (both in ``claude_web``); ``TodoWrite`` -> update_plan
  (the whole list).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool, RouterTool
from zbtools.dialects.claude_web import (
    WebFetchParams,
    WebSearchParams,
    call_canonical,
    canonical_spec,
    invalid,
    web_fetch,
    web_fetch_result,
    web_search,
    web_search_result,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any, Literal

    from zbtools.core.call.context import Context
    from zbtools.toolspec import ToolSpec


class ReadParams(Struct):
    file_path: str = field(help="Absolute path to the file")
    offset: int | None = field(default=None, help="Starting line number (optional)")
    limit: int | None = field(default=None, help="Number of lines to read (optional)")
    pages: str | None = field(default=None, help="Page range of a PDF, e.g. \"1-5\" "
                              "(optional)")


# Edit's matching tolerances (docs/dialects.md#tiers): Claude Code's own curly-quote fold, and
# the indentation and trailing-whitespace slips models make, reported by matched_with.
EDIT_TIERS = ["quotes", "trailing_whitespace", "indentation"]

# Claude's Read returns its 2,000 lines whatever their size (each line cut at 2,000 characters):
# its own limit comes before the configured 50 KB result budget.
READ_BYTES = 2000 * 2000


class WriteParams(Struct):
    file_path: str = field(help="Absolute path (must be absolute)")
    content: str = field(text_body=True, help="Full file content")


class EditParams(Struct):
    file_path: str = field(help="Absolute path to the file")
    old_string: str = field(text_body=True, help="Text to find (must be unique in file)")
    new_string: str = field(text_body=True, help="Replacement text")
    replace_all: bool = field(default=False,
                              help="Replace all occurrences (optional, default false)")


class GlobParams(Struct):
    pattern: str = field(help='Glob pattern (e.g., "**/*.ts", "src/**/*.tsx")')
    path: str | None = field(default=None, help="Directory to search in (optional)")


class GrepParams(Struct):
    pattern: str = field(help="Regular expression to search for")
    path: str | None = field(default=None, help="File or directory to search in (optional)")
    glob: str | None = field(default=None, help='File pattern filter (e.g., "*.js")')
    output_mode: Literal["content", "files_with_matches", "count"] = field(
        default="files_with_matches",
        help='"content" (matching lines), "files_with_matches" (paths) or "count" (matches '
        'per file)')
    B: int | None = field(default=None, help="Lines of context before each match (rg -B; "
                          'output_mode "content")')
    A: int | None = field(default=None, help="Lines of context after each match (rg -A; "
                          'output_mode "content")')
    C: int | None = field(default=None, help="Lines of context before and after each match "
                          '(rg -C; output_mode "content")')
    n: bool | None = field(default=None, help="Show line numbers (rg -n); results always "
                           "carry them")
    i: bool | None = field(default=None, help="Case-insensitive search (rg -i)")
    type: str | None = field(default=None, help="File type to search (rg --type): js, py, "
                             "rust, go, java, ...")
    head_limit: int | None = field(default=None, help="Limit output to the first N lines or "
                                   "entries")
    multiline: bool | None = field(default=None, help="Multiline matching: patterns can span "
                                   "lines and . matches newlines (rg -U --multiline-dotall)")


def _read(params: ReadParams, out: dict[str, Any]) -> None:
    if params.offset is not None:
        if params.offset < 0:
            raise ToolError("invalid_arguments", f"offset must be a line number >= 1, got "
                            f"{params.offset}", hint="offset 1 is the first line",
                            details={"problems": [{"problem": "out_of_range",
                                                   "argument": "offset",
                                                   "message": "offset < 0"}]})
        out["offset"] = max(params.offset, 1)


def _grep(params: GrepParams, out: dict[str, Any]) -> None:
    for wire, canonical in (("B", "before_context"), ("A", "after_context"),
                            ("C", "context"), ("i", "case_insensitive")):
        if wire in out:
            out[canonical] = out.pop(wire)
    out.pop("n", None)


# -- the shell, listing, multi-edit, notebook, web and todo tools --------------------------------

BASH_MAX_TIMEOUT = 600_000  # "max 600000" milliseconds, as Anthropic's tool reference says
SHELL_CURSORS = "shell_cursors"  # state file: where BashOutput's last check of each shell ended
KEEP_CURSORS = 200
LS_MAX = 1000  # Claude Code's LS lists at most this many entries
LS_WALK = 10_000  # list_directory's own cap: what LS chooses its entries from


class BashParams(Struct):
    command: str = field(text_body=True, help="The command to execute")
    timeout: int | None = field(default=None, minimum=1, maximum=BASH_MAX_TIMEOUT,
                                help="Optional timeout in milliseconds (max 600000; default "
                                "120000)")
    description: str | None = field(default=None, help="Clear, concise description of what "
                                    "this command does in 5-10 words")
    run_in_background: bool | None = field(default=None, help="Set to true to run this "
                                           "command in the background; read its output with "
                                           "BashOutput")


class BashOutputParams(Struct):
    bash_id: str = field(help="The ID of the background shell to retrieve output from")
    filter: str | None = field(default=None, help="Optional regular expression: only output "
                               "lines matching it are returned; the others are dropped for "
                               "good")


class KillShellParams(Struct):
    shell_id: str = field(help="The ID of the background shell to kill")


class LSParams(Struct):
    path: str = field(help="The absolute path to the directory to list")
    ignore: list[str] | None = field(default=None, help="List of glob patterns to ignore")


class MultiEditItem(Struct):
    old_string: str = field(text_body=True, help="The text to replace")
    new_string: str = field(text_body=True, help="The text to replace it with")
    replace_all: bool = field(default=False,
                              help="Replace all occurrences of old_string (default false)")


class MultiEditParams(Struct):
    file_path: str = field(help="The absolute path to the file to modify")
    edits: list[MultiEditItem] = field(help="Array of edit operations to perform sequentially "
                                       "on the file")


class NotebookEditParams(Struct):
    notebook_path: str = field(help="The absolute path to the Jupyter notebook file to edit")
    cell_id: str | None = field(default=None, help="The ID of the cell to edit. When inserting "
                                "a new cell, the new cell goes after the cell with this ID, or "
                                "at the beginning if not specified")
    new_source: str = field(text_body=True, help="The new source for the cell")
    cell_type: Literal["code", "markdown"] | None = field(
        default=None, help="The type of the cell (code or markdown); defaults to the current "
        "type; required with edit_mode=insert")
    edit_mode: Literal["replace", "insert", "delete"] | None = field(
        default=None, help="The type of edit to make (replace, insert, delete); defaults to "
        "replace")


class TodoItem(Struct):
    content: str = field(help="The task description")
    status: Literal["pending", "in_progress", "completed"] = field(help="The task status")
    activeForm: str = field(help="The present continuous form of the task, shown while it is "
                            "in progress")


class TodoWriteParams(Struct):
    todos: list[TodoItem] = field(help="The updated todo list")


class _Wrapped(RouterTool):
    """A tool that runs its canonical tool from its own ``run(params, ctx)``: the call needs the
    context (state, the workspace) or a result cut by its own parameters. The canonical tool's
    category, result and text rendering are its own."""

    def __init__(self, name: str, target: str, *, run: Callable[[Any, Context], Struct],
                 params: type[Struct], description: str,
                 render: Callable[[Any], str] | None = None, **kwargs: Any) -> None:
        super().__init__(name, (target,), route=None,  # type: ignore[arg-type] # never routes
                         params=params, description=description, **kwargs)
        self._run_own = run
        self._render_own = render

    @property
    def category(self) -> str:
        return canonical_spec(self.target).category

    @property
    def spec(self) -> ToolSpec:
        if self._spec is None:
            from zbtools.toolspec import ToolSpec

            canonical = canonical_spec(self.target)
            self._spec = ToolSpec(name=self.name, params=self.params, result=canonical.result,
                                  run=self._run_own, doc=self.description,
                                  read_only=self.read_only, destructive=self.destructive,
                                  idempotent=self.idempotent, parallel_safe=self.parallel_safe,
                                  render_text=self._render_own or canonical.render_text,
                                  category=canonical.category,
                                  exit_status=canonical.exit_status)
        return self._spec


class _Worded(DialectTool):
    """A dialect tool whose text rendering is the canonical one with Claude's words: the
    background note of ``bash`` names BashOutput and KillShell, not bash_output and
    stop_process."""

    def __init__(self, *args: Any, words: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._words = words

    @property
    def spec(self) -> ToolSpec:
        if self._spec is None:
            import copy

            spec = copy.copy(canonical_spec(self.target))
            render = spec.render_text
            assert render is not None  # every canonical tool renders text

            def reworded(result: Any) -> str:
                import re

                text = render(result)
                for pattern, replacement in self._words:
                    text = re.sub(pattern, replacement, text)
                return text

            spec.render_text = reworded
            self._spec = spec
        return self._spec


def _claude_words(error: ToolError) -> ToolError:
    """The hints the canonical tools give, where they name what Claude's tools lack."""
    if error.code == "not_found" and error.hint and "list_directory" in error.hint:
        error.hint = "check the path with LS or Glob"
    elif error.code == "ambiguous_match":
        error.hint = ("add a neighbouring line that only the place you mean has, or set "
                      "replace_all to change every one")
    elif error.code == "unsupported_format" and error.hint and "raw" in error.hint:
        error.hint = "NotebookEdit edits Jupyter notebooks (.ipynb, nbformat 4); use Edit on " \
                     "other files"
    return error


# Bash, BashOutput, KillShell


def _bash_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    stdout, stderr = result.get("stdout") or "", result.get("stderr") or ""
    joint = "\n" if stdout and stderr and not stdout.endswith("\n") else ""
    out["output"] = stdout + joint + stderr
    out["exitCode"] = result.get("exit_code")
    out["killed"] = bool(result.get("timed_out"))
    if result.get("background") and result.get("id"):
        out["shellId"] = result["id"]
    return out


def _compile_filter(pattern: str | None) -> re.Pattern[str] | None:
    import re

    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError("regex_error", f"filter is not a valid regular expression: {exc}",
                        hint="fix the filter pattern, or omit filter to see every line",
                        details={"argument": "filter", "pattern": pattern}) from None


def _bash_output(params: BashOutputParams, ctx: Context) -> Struct:
    from zbtools.core.state.store import StateFile

    keep = _compile_filter(params.filter)
    with StateFile(ctx, SHELL_CURSORS) as state:
        cursors = state.data.get("cursors")
        if not isinstance(cursors, dict):
            cursors = {}
        cursor = cursors.get(params.bash_id)
        result = call_canonical(ctx, "bash_output", {"id": params.bash_id,
                                            "cursor": cursor if type(cursor) is int else 0})
        cursors.pop(params.bash_id, None)
        cursors[params.bash_id] = result.next_cursor  # the newest last: the oldest go first
        state.data["cursors"] = dict(list(cursors.items())[-KEEP_CURSORS:])
        state.save()
    if keep is not None:
        result.output = "".join(line for line in result.output.splitlines(keepends=True)
                                if keep.search(line))
    return result  # type: ignore[no-any-return]


def _bash_output_result(result: dict[str, Any]) -> dict[str, Any]:
    done = result.get("status") == "exited" and result.get("exit_code") == 0
    status = "running" if result.get("running") else "completed" if done else "failed"
    return {**result, "status": status, "exitCode": result.get("exit_code")}


def _shell_error(error: ToolError) -> ToolError:
    if error.code == "process_not_found":
        error.hint = ("a shell id is the shellId that Bash returns with run_in_background: "
                      "true")
    return _claude_words(error)


def _kill_result(result: dict[str, Any]) -> dict[str, Any]:
    first = (result.get("stopped") or [{}])[0]
    message = (f"Successfully killed shell: {first.get('id')} ({first.get('command')})"
               if first.get("was_running") else
               f"Shell {first.get('id')} had already ended ({first.get('status')}); nothing "
               "to kill")
    return {**result, "shell_id": first.get("id"), "message": message}


# LS


def _ls(params: LSParams, ctx: Context) -> Struct:
    from zbtools.core.search.entries import MAX_DEPTH

    result = call_canonical(ctx, "list_directory", {
        "path": params.path, "max_depth": MAX_DEPTH, "limit": LS_WALK, "include_hidden": False,
        "include_ignored": True, "exclude_dirs": ["__pycache__"]})
    base = "" if result.path in ("", ".") else result.path + "/"
    ignored = _ignore_matcher(params.ignore or [])
    kept: list[Any] = []
    dropped_dirs: list[str] = []
    for entry in result.entries:
        rel = entry.path[len(base):] if entry.path.startswith(base) else entry.name
        if any(rel.startswith(d) for d in dropped_dirs):
            continue
        if ignored(entry.name, rel):
            if entry.type == "directory":
                dropped_dirs.append(rel + "/")
            continue
        kept.append(entry)
    # Claude Code lists breadth first: the shallowest entries are the ones kept when cut
    chosen = sorted(sorted(range(len(kept)), key=lambda i: kept[i].depth)[:LS_MAX])
    entries = [kept[i] for i in chosen]
    return type(result)(path=result.path, entries=entries, count=len(entries),  # type: ignore
                        truncated=result.truncated or len(kept) > LS_MAX,
                        skipped=result.skipped)


def _ignore_matcher(patterns: list[str]) -> Callable[[str, str], bool]:
    """Whether an entry (its name, its path below the listed directory) matches a pattern of
    ``ignore``: a pattern without ``/`` is tried on the name, one with ``/`` on the path."""
    from fnmatch import fnmatchcase

    cleaned = [p.strip().rstrip("/") for p in patterns if p.strip().rstrip("/")]

    def matches(name: str, rel: str) -> bool:
        return any(fnmatchcase(rel, p.removeprefix("./")) or fnmatchcase(rel, p.removeprefix(
            "**/")) if "/" in p else fnmatchcase(name, p) for p in cleaned)

    return matches


def _ls_render(result: Any) -> str:
    """list_directory's tree, with notes that name no parameter LS lacks."""
    from zbtools.toolkit.listing import tree_lines

    out = "\n".join(tree_lines(result.path, result.entries)) + "\n"
    if result.truncated:
        out += f"[showing the first {result.count} entries; list a subdirectory for the rest]\n"
    described = result.skipped.describe()
    if described:
        out += f"[skipped: {described}]\n"
    return out


def _ls_error(error: ToolError) -> ToolError:
    if error.code == "not_a_directory":
        error.hint = "LS lists directories; read a file with Read"
    return _claude_words(error)


# MultiEdit


def _apply_in_sequence(edits: list[MultiEditItem], requests: list[Any], text: str,
                       first: int = 0) -> Any:
    """Apply ``edits[first:]`` to ``text`` one after another, as Claude Code does: each to the
    text the one before left. Raises the first edit's refusal (nothing is written then)."""
    from zbtools.core.editing import matching

    reports: list[dict[str, Any]] = []
    warnings: list[str] = []
    changed = False
    for i in range(first, len(edits)):
        edit, request = edits[i], requests[i]
        try:
            step = (matching.replace_all(text, request, None) if edit.replace_all
                    else matching.apply_requests(text, [request]))
        except matching.MatchError as exc:
            if not exc.message.startswith(request.label):
                exc.message = request.label + exc.message
            exc.details.setdefault("edit", i)
            raise
        text = step.text
        reports += [dict(r, edit=i) for r in step.reports]
        warnings += step.warnings
        changed = changed or step.changed
    return matching.Applied(text, reports, changed, warnings)


def _multi_edit(params: MultiEditParams, ctx: Context) -> Struct:
    from zbtools.core.editing import matching
    from zbtools.core.editing.cycle import edit_file_text

    if not params.edits:
        raise invalid("edits is empty", 'give at least one {"old_string": ..., "new_string": '
                       "...}", "edits", problem="missing_argument")
    requests = [matching.Request(e.old_string, e.new_string, label=f"edits[{i}]: ")
                for i, e in enumerate(params.edits)]
    for request in requests:  # each edit follows Edit's rules (docs/dialects.md#tiers)
        request.tiers = frozenset(["exact", *EDIT_TIERS])
    if params.edits[0].old_string == "":
        try:
            with ctx.workspace.resolve(params.file_path) as res:
                missing = not res.exists
        except ToolError as exc:  # a missing parent directory: write_file makes it
            if exc.code != "not_found":
                raise
            missing = True
        if missing:
            return _multi_edit_create(params, requests, ctx)
    outcome = edit_file_text(ctx, params.file_path,
                             lambda text: _apply_in_sequence(params.edits, requests, text),
                             [r.new for r in requests], expected_sha256=None, dry_run=False)
    for warning in outcome.applied.warnings:
        ctx.warn(warning)
    return _edit_result(outcome.path, outcome.applied.reports, "updated",
                        changed=outcome.changed, diff=outcome.diff, sha256=outcome.sha256)


def _edit_result(path: str, reports: list[dict[str, Any]], action: str, **rest: Any) -> Struct:
    """apply_edit's result for the edits ``reports`` describes, ``action`` done to ``path``."""
    from zbtools.toolkit.edits import EditResult

    first: dict[str, Any] = reports[0] if reports else {"start_line": 0, "end_line": 0,
                                                        "matched_with": "none"}
    tiers = {r["matched_with"] for r in reports}
    return EditResult(path=path, matched_with=first["matched_with"] if len(tiers) == 1 else
                      "mixed", start_line=first["start_line"], end_line=first["end_line"],
                      edits=reports, replacements=len(reports), dry_run=False,
                      files=[{"path": path, "action": action, "edits": len(reports)}], **rest)


def _multi_edit_create(params: MultiEditParams, requests: list[Any], ctx: Context) -> Struct:
    """A new file, as Claude Code's MultiEdit makes one: the first edit's empty old_string
    stands for the missing file, its new_string is the content, the other edits apply to it."""
    from zbtools.core.editing.matching import MatchError

    text = params.edits[0].new_string
    try:
        applied = _apply_in_sequence(params.edits, requests, text, first=1)
    except MatchError as exc:
        raise ToolError(exc.code, exc.message, hint=exc.hint,  # type: ignore[arg-type]
                        details=exc.details) from None
    for warning in applied.warnings:
        ctx.warn(warning)
    written = call_canonical(ctx, "write_file", {"path": params.file_path, "content": applied.text,
                                        "overwrite": False})
    lines = applied.text.count("\n") + (0 if applied.text.endswith("\n") else 1)
    reports = [{"label": "edits[0]", "start_line": 1, "end_line": lines,
                "matched_with": "created", "transforms": [], "disambiguated_by": None,
                "edit": 0}, *applied.reports]
    return _edit_result(written.path, reports, "created", changed=True,
                        diff=_creation_diff(written.path, applied.text), sha256=written.sha256)


def _creation_diff(path: str, text: str) -> str:
    """The unified diff that creates ``path`` with ``text``."""
    lines = text.splitlines(keepends=True)
    out = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n"
    out += "".join("+" + line for line in lines)
    if lines and not lines[-1].endswith(("\n", "\r")):
        out += "\n\\ No newline at end of file\n"
    return out


def _multi_edit_error(error: ToolError) -> ToolError:
    if "old_text is empty" in error.message:
        error.hint = ("an empty old_string stands for a file that does not exist yet (first "
                      "edit only); to change this file, give the exact text to replace")
    return _claude_words(error)


def _multi_edit_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    applied = len({r.get("edit") for r in result.get("edits") or []})
    out["edits_applied"] = applied
    out["file_path"] = result.get("path")
    out["message"] = (f"Applied {applied} edit{'s' if applied != 1 else ''} to "
                      f"{result.get('path')}")
    return out


# NotebookEdit


def _notebook(params: NotebookEditParams, out: dict[str, Any]) -> None:
    mode = params.edit_mode or "replace"
    out["mode"] = mode
    if mode == "insert":
        if params.cell_type is None:
            raise invalid("cell_type is required with edit_mode=insert",
                           'say what the new cell is: "code" or "markdown"', "cell_type",
                           problem="missing_argument")
        if params.cell_id is None:
            out["cell_index"] = 0  # "at the beginning if not specified"
        return
    if params.cell_id is None:
        raise invalid(f"cell_id is required with edit_mode={mode}",
                       "give the id of the cell (Read shows it as id=... in each cell's header)",
                       "cell_id", problem="missing_argument")
    if mode == "delete":
        out.pop("source", None)  # required by the schema, unused by a delete


def _notebook_error(error: ToolError) -> ToolError:
    if error.code == "unknown_id":
        error.hint = "read the notebook with Read: each cell's header shows its cell id"
    elif error.code == "ambiguous_id":
        error.hint = "several cells share this id: give each cell its own id (Edit the .ipynb)"
    return _claude_words(error)


def _notebook_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    kind = {"replace": "replaced", "insert": "inserted", "delete": "deleted"}.get(
        str(result.get("mode")), str(result.get("mode")))
    out["edit_type"] = kind
    out["total_cells"] = result.get("cell_count")
    out["message"] = f"{kind.capitalize()} cell {result.get('cell_id') or result.get('cell_index')}"
    return out


# TodoWrite


def _todos(params: TodoWriteParams, out: dict[str, Any]) -> None:
    out.pop("todos", None)
    out["steps"] = [{"title": t.content, "status": t.status} for t in params.todos]


def _todo_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    steps = result.get("steps") or []
    stats = {"total": len(steps)}
    for status in ("pending", "in_progress", "completed"):
        stats[status] = sum(1 for s in steps if s.get("status") == status)
    out["stats"] = stats
    out["message"] = "Todos have been modified successfully"
    return out


def _todo_error(error: ToolError) -> ToolError:
    busy = error.details.get("in_progress") if error.details else None
    if isinstance(busy, list):
        return ToolError("invalid_arguments", f"at most one todo may be in_progress at a time; "
                         f"this list has {len(busy)}",
                         hint="mark the todo you finished completed (or set it back to pending) "
                         "in the same TodoWrite call", details=error.details)
    if "the title is" in error.message:
        error.hint = "give every todo a short content"
    return _claude_words(error)


def _tools() -> list[DialectTool]:
    shell_errors = {"bash_output": "BashOutput", "stop_process": "KillShell"}
    return [
        _Worded("Bash", "bash", params=BashParams,
                 renames={"timeout": "timeout_ms", "run_in_background": "background"},
                 adapt=_bash_result, adapt_error=_claude_words,
                 error_names=shell_errors,
                 words=[(r"bash_output \(cursor \d+\)", "BashOutput"),
                        (r"\bstop_process\b", "KillShell")],
                 description=(
                     "Executes a bash command with an optional timeout (milliseconds, default "
                     "120000, max 600000); run_in_background returns a shellId for BashOutput "
                     "and KillShell. Returns the combined output and exit code.")),
        _Wrapped("BashOutput", "bash_output", run=_bash_output, params=BashOutputParams,
                 adapt=_bash_output_result, adapt_error=_shell_error, read_only=True,
                 destructive=False, idempotent=False, parallel_safe=False, description=(
                     "Retrieves output from a running or completed background bash shell: "
                     "only the output that is new since the last check, with the shell's "
                     "status; filter keeps the lines matching a regex.")),
        DialectTool("KillShell", "stop_process", params=KillShellParams,
                    renames={"shell_id": "id"}, adapt=_kill_result, adapt_error=_shell_error,
                    aliases=("KillBash",), description=(
                        "Kills a running background bash shell by its ID (the shellId Bash "
                        "returned).")),
        DialectTool("Glob", "find_files_glob", params=GlobParams, fixed={"sort": "mtime"},
                    defaults={"exclude_dirs": []},  # ripgrep's --files, as Grep
                    description=(
                        "Fast file pattern matching. Supports standard glob patterns "
                        '("**/*.ts", "src/**/*.tsx"); results sorted by modification time.')),
        # "powered by ripgrep": rg's own defaults (.gitignore and hidden files honoured, no
        # directory excluded by name), so node_modules/ or target/ are searched unless ignored
        DialectTool("Grep", "grep_search", params=GrepParams, translate=_grep,
                    defaults={"exclude_dirs": []},
                    wire_names={"A": "-A", "B": "-B", "C": "-C", "n": "-n", "i": "-i"},
                    error_names={"before_context": "-B", "after_context": "-A",
                                 "case_insensitive": "-i"},
                    description=(
                        "Content search powered by ripgrep. Full regex syntax, file type "
                        "filtering, context lines (-A, -B, -C) and multiline matching.")),
        _Wrapped("LS", "list_directory", run=_ls, params=LSParams, adapt_error=_ls_error,
                 render=_ls_render,
                 read_only=True, destructive=False, idempotent=True, parallel_safe=True,
                 description=(
                     "Lists files and directories in a given path, recursively (up to 1000 "
                     "entries; hidden ones and __pycache__ left out). ignore takes glob "
                     "patterns to leave out. Prefer Glob and Grep when you know what to "
                     "look for.")),
        DialectTool("Read", "read_file", params=ReadParams, renames={"file_path": "path"},
                    translate=_read, defaults={"max_bytes": READ_BYTES}, description=(
                        "Reads file contents from the filesystem. Returns content with line "
                        "numbers (cat -n format); offset and limit (default 2000 lines) read "
                        "part of a large file.")),
        DialectTool("Edit", "apply_edit", params=EditParams,
                    renames={"file_path": "path", "old_string": "old_text",
                             "new_string": "new_text"}, fixed={"tiers": EDIT_TIERS},
                    description=(
                        "Performs exact string replacements in files. Fails if old_string is "
                        "not unique (provide more context) unless replace_all is set; preserves "
                        "exact indentation.")),
        _Wrapped("MultiEdit", "apply_edit", run=_multi_edit, params=MultiEditParams,
                 adapt=_multi_edit_result, adapt_error=_multi_edit_error,
                 error_names={"old_text": "old_string", "new_text": "new_string",
                              "patches": "edits"},
                 read_only=False, destructive=True, idempotent=False, parallel_safe=False,
                 description=(
                     "Makes multiple edits to one file in one operation: the edits apply in "
                     "sequence, each to the result of the previous one, and all of them or "
                     "none (the file is unchanged when one fails). Each follows Edit's "
                     "rules.")),
        DialectTool("Write", "write_file", params=WriteParams, renames={"file_path": "path"},
                    description=(
                        "Creates new files or completely rewrites existing files. Overwrites "
                        "existing files; Edit is preferred for modifications.")),
        DialectTool("NotebookEdit", "edit_notebook_cell", params=NotebookEditParams,
                    renames={"notebook_path": "path", "new_source": "source",
                             "edit_mode": "mode"},
                    translate=_notebook, adapt=_notebook_result, adapt_error=_notebook_error,
                    closed=True,
                    description=(
                        "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb). "
                        "Name the cell by cell_id; edit_mode=insert adds a new cell (cell_type "
                        "required) after cell_id, or first when cell_id is omitted.")),
        DialectTool("WebFetch", "web_fetch", params=WebFetchParams, translate=web_fetch,
                    adapt=web_fetch_result, adapt_error=_claude_words, closed=True,
                    error_names={"web_fetch": "WebFetch"}, description=(
                        "Fetches a URL and returns its content converted to markdown as "
                        "response (no model runs on it here: read the answer to your prompt "
                        "from the page). Read-only; a long page is cut at the result limit.")),
        _Wrapped("WebSearch", "web_search", run=web_search, params=WebSearchParams,
                 adapt=web_search_result, adapt_error=_claude_words,
                 error_names={"web_search": "WebSearch"},
                 read_only=True, destructive=False, idempotent=True,
                 parallel_safe=True, description=(
                     "Searches the web and returns result titles, URLs and snippets; "
                     "allowed_domains and blocked_domains filter the results by domain.")),
        _Worded("TodoWrite", "update_plan", params=TodoWriteParams, translate=_todos,
                adapt=_todo_result, adapt_error=_todo_error, closed=True,
                error_names={"steps": "todos", "title": "content"},
                words=[(r"no plan yet \(update_plan sets one\)", "no todos")], description=(
                    "Creates and updates the structured task list of this session: send the "
                    "whole list each time, each todo pending, in_progress or completed, with "
                    "only one in_progress at a time.")),
    ]


DIALECT = Dialect("claude", _tools)
