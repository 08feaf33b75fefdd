"""The ``anthropic`` dialect: Anthropic's text editor tool ``str_replace_based_edit_tool``.

One tool, routed by ``command`` (older name ``str_replace_editor`` accepted):

* ``view``: a directory -> list_directory two levels deep; a file -> read_file (numbered lines in
  the text rendering), or with ``view_range: [start, end]`` -> read_file_range (1-based,
  inclusive; ``end: -1`` reads to the end of the file).
* ``create`` -> write_file with ``file_text``, refusing an existing file (``already_exists``), as
  Anthropic's reference implementation does; change an existing file with ``str_replace``.
* ``str_replace`` -> apply_edit (``old_str`` must identify one place; ``new_str`` defaults to
  the empty string, which deletes it).
* ``insert`` -> insert_text: the text goes after line ``insert_line`` (0 = top of the file); the
  text is ``insert_text`` (text_editor_20250728) or ``new_str`` (earlier versions), one of them.
* ``undo_edit`` (text_editor_20250124 and earlier) -> undo of the file's last change.

Paths may be absolute inside the workspace (``/repo/file.py`` when the workspace is ``/repo``) or
relative to it. ``max_characters`` of the 20250728 tool is not mapped: results are limited by
zbtools' own result limits (50 KB / 2000 lines, with the rest reachable by ``view_range``).
"""

from __future__ import annotations

import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool, RouterTool, create_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context

NAME = "str_replace_based_edit_tool"
# str_replace's matching tolerances (docs/dialects.md#tiers): exact, but for the indentation and
# trailing-whitespace slips (reported by matched_with).
EDIT_TIERS = ["trailing_whitespace", "indentation"]


class Params(Struct):
    command: Literal["view", "create", "str_replace", "insert", "undo_edit"] = field(
        help="The commands to run. Allowed options are: `view`, `create`, `str_replace`, "
        "`insert`, `undo_edit`.")
    path: str = field(help="Absolute path to file or directory, e.g. `/repo/file.py` or "
                      "`/repo`.")
    file_text: str | None = field(text_body=True,
                                  default=None, help="Required parameter of `create` command, "
                                  "with the content of the file to be created.")
    old_str: str | None = field(text_body=True,
                                default=None, help="Required parameter of `str_replace` "
                                "command containing the string in `path` to replace.")
    new_str: str | None = field(text_body=True,
                                default=None, help="Optional parameter of `str_replace` command "
                                "containing the new string (if not given, no string will be "
                                "added). Required parameter of `insert` command containing the "
                                "string to insert (unless `insert_text` is given).")
    insert_line: int | None = field(default=None, help="Required parameter of `insert` command. "
                                    "The text will be inserted AFTER the line `insert_line` of "
                                    "`path`.")
    insert_text: str | None = field(default=None, help="Parameter of `insert` command "
                                    "containing the text to insert (or use `new_str`).")
    view_range: list[int] | None = field(
        default=None, help="Optional parameter of `view` command when `path` points to a file. "
        "If none is given, the full file is shown. If provided, the file will be shown in the "
        "indicated line number range, e.g. [11, 12] will show 2 lines. Indexing at 1 to start. "
        "Setting `[start_line, -1]` shows all lines from `start_line` to the end of the file.")


def _bad(command: str, message: str, hint: str, argument: str) -> ToolError:
    return ToolError("invalid_arguments", f"{command}: {message}", hint=hint, details={
        "problems": [{"problem": "missing_argument", "argument": argument,
                      "message": message}]})


def _unused(params: Params, command: str, allowed: set[str]) -> None:
    for name in ("file_text", "old_str", "new_str", "insert_line", "insert_text", "view_range"):
        if name not in allowed and getattr(params, name) is not None:
            raise ToolError("invalid_arguments", f"{command}: {name} is not a parameter of "
                            f"{command}", hint=f"{command} takes: path"
                            + "".join(f", {a}" for a in sorted(allowed)),
                            details={"problems": [{"problem": "unknown_argument",
                                                   "argument": name,
                                                   "message": f"{name} not used by {command}"}]})


def _route(params: Params, ctx: Context) -> tuple[str, dict[str, Any]]:
    command, path = params.command, params.path
    if command == "view":
        _unused(params, command, {"view_range"})
        with ctx.workspace.resolve(path) as res:
            is_dir = res.st is not None and stat.S_ISDIR(res.st.st_mode)
        if is_dir:
            if params.view_range is not None:
                raise ToolError("invalid_arguments", "view: view_range is for files; "
                                f"{path} is a directory", hint="omit view_range to list it")
            return "list_directory", {"path": path, "max_depth": 2}
        if params.view_range is None:
            return "read_file", {"path": path}
        rng = params.view_range
        if len(rng) != 2 or rng[0] < 1 or (rng[1] != -1 and rng[1] < rng[0]):
            raise ToolError("invalid_arguments", f"view: view_range must be [start, end] with "
                            f"1 <= start <= end, or [start, -1]; got {rng}",
                            hint="e.g. [11, 20], or [11, -1] to read to the end")
        args: dict[str, Any] = {"path": path, "start_line": rng[0]}
        if rng[1] != -1:
            args["end_line"] = rng[1]
        return "read_file_range", args
    if command == "create":
        _unused(params, command, {"file_text"})
        if params.file_text is None:
            raise _bad(command, "file_text is required", "give the file's content in file_text",
                       "file_text")
        return "write_file", {"path": path, "content": params.file_text}  # the rule: no overwrite
    if command == "str_replace":
        _unused(params, command, {"old_str", "new_str"})
        if params.old_str is None:
            raise _bad(command, "old_str is required", "give the exact text to replace",
                       "old_str")
        return "apply_edit", {"path": path, "old_text": params.old_str,
                              "new_text": params.new_str if params.new_str is not None else "",
                              "tiers": EDIT_TIERS}
    if command == "insert":
        _unused(params, command, {"insert_line", "new_str", "insert_text"})
        if params.insert_line is None:
            raise _bad(command, "insert_line is required", "insert_line 0 inserts at the top",
                       "insert_line")
        if params.new_str is not None and params.insert_text is not None:
            raise ToolError("invalid_arguments", "insert: give insert_text or new_str, not both",
                            hint="they are two names for the text to insert")
        text = params.insert_text if params.insert_text is not None else params.new_str
        if text is None:
            raise _bad(command, "insert_text (or new_str) is required",
                       "give the text to insert", "insert_text")
        if params.insert_line < 0:
            raise ToolError("invalid_arguments", f"insert: insert_line must be >= 0, got "
                            f"{params.insert_line}", hint="0 inserts before the first line")
        return "insert_text", {"path": path, "content": text,
                               "insert_line": params.insert_line}
    _unused(params, command, set())
    return "undo", {"path": path}


def _tools() -> list[DialectTool]:
    return [RouterTool(
        NAME, ("read_file", "read_file_range", "list_directory", "write_file", "apply_edit",
               "insert_text", "undo"),
        params=Params, route=_route, aliases=("str_replace_editor",),
        forms={"offset": "view_range=[{}, -1]", "start_line": "view_range=[{}, -1]"},
        error_names={"old_text": "old_str", "new_text": "new_str",
                     "start_line": "view_range start", "end_line": "view_range end"},
        description=(
            "Custom editing tool for viewing, creating and editing files. `view` shows a file "
            "with line numbers (cat -n) or lists a directory two levels deep; `create` makes a "
            "new file (never overwrites); `str_replace` replaces `old_str`, which must occur "
            "exactly once; `insert` adds text after line `insert_line`; `undo_edit` reverts "
            "the last edit of the file."))]


# create never overwrites, and neither does any canonical name an anthropic call reaches
# (docs/dialects.md#one-promise-whatever-the-name)
# its errors name the command that does the canonical tool's work
DIALECT = Dialect("anthropic", _tools, names={
    "read_file": "the view command", "read_file_range": "the view command",
    "list_directory": "the view command", "write_file": "the create command",
    "create_file": "the create command", "apply_edit": "the str_replace command",
    "insert_text": "the insert command", "undo": "the undo_edit command"}, rules=(create_only(
    "anthropic", "change an existing file with the str_replace command (or insert); create "
    "never overwrites"),))
