"""Parameter aliases several tools accept: each spelling list written once.

An alias is another name a model may use for a parameter (``file_path`` for ``path``), as the
tool sets it imitates spell it. Tools that take the same parameter take the same aliases. Also
the parameter and the result field every writer of file contents shares (``CheckSyntax``,
``SyntaxReport``).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

# a file's path
PATH_ALIASES = ("file_path", "filepath", "filename")
# the whole text of a file or a plan
CONTENT_ALIASES = ("contents", "text", "data")
# an edit's old and new text
OLD_ALIASES = ("old_string", "old_str")
NEW_ALIASES = ("new_string", "new_str")
# a move's or a copy's two paths
SOURCE_ALIASES = ("src", "from_path", "old_path")
DESTINATION_ALIASES = ("dest", "dst", "target", "to_path", "new_path")
# a plan's name
PLAN_NAME_ALIASES = ("plan_name", "plan")
# a background process's id
PROCESS_ID_ALIASES = ("process_id", "bash_id", "shell_id", "job_id")
# a shell command, where it runs, and whether it runs in the background
COMMAND_ALIASES = ("cmd", "script")
CWD_ALIASES = ("workdir", "working_directory", "dir", "directory")
BACKGROUND_ALIASES = ("run_in_background",)
# a directory to search, list or create (the spellings each tool has always accepted, in order)
DIR_ALIASES = ("dir", "directory")
SEARCH_DIR_ALIASES = ("dir", "directory", "dir_path")
LIST_DIR_ALIASES = ("dir_path", "directory", "dir")
DEPTH_ALIASES = ("depth",)


# ---- the syntax guard of the writers (docs/internals/code.md#syntax-guard) ---------------------


class CheckSyntax(Struct):
    """The parameter of every canonical tool that writes file contents."""

    check_syntax: Literal["warn", "refuse", "off"] | None = field(
        default=None, help="A change that introduces parse errors (supported languages): warn "
        "writes it and says so, refuse writes nothing (syntax_error), off does not parse; "
        "default: the [files] check_syntax setting (warn)")


class SyntaxReport(Struct):
    """The result field that says what the guard found."""

    syntax: list[dict[str, Any]] | None = field(
        default=None, omit_null=True, help="Present when the change introduced parse errors "
        "(check_syntax warn): per file, its path, language and the problems introduced (line, "
        "column, message, the lines around it)")
