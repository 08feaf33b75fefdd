"""The ``zkit`` dialect (docs/internals/sources.md#zkit): zkit/ai/tools/code, the coding toolset of
zkit.

zkit's documentation names the tools and their behaviour but not their parameters, so a tool
takes the canonical tool's parameters where it does the same thing, and a small documented set
where zkit's behaviour differs. What users see, and where it departs from zkit (plans under
``.zbtools/plans/``; ``grep`` and ``glob`` with zbtools' search defaults; no result caching), is
in docs/dialects.md. ``DIALECT`` is the dialect; its tools map as follows:

* ``read`` -> read_file with ``LINE:HASH`` line anchors on by default, for ``edit``'s ``anchor``.
* ``write`` -> write_file, create-only (``already_exists`` names ``edit`` and ``write_append``):
  the dialect's rule, kept by every canonical call too.
* ``edit`` -> apply_edit with ``old_string``/``new_string``, ``replace_all`` and ``anchor``.
* ``apply_patch`` -> apply_edit's ``patch`` (a unified diff, or a Codex envelope).
* ``bash`` -> bash with ``on_timeout: background``: a command still running at the timeout
  becomes a process for ``bash_output``.
* ``ls`` -> list_directory showing every entry; ``write_append``, ``grep``, ``glob``,
  ``bash_output``, ``stop_process``, ``list_processes``, the plan tools, ``web_fetch`` and
  ``web_search``: the canonical tools.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool, create_only
from zbtools.toolkit.params import CONTENT_ALIASES, PATH_ALIASES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal


class ReadParams(Struct):
    path: str = field(help="File path, relative to the workspace root")
    offset: int | None = field(default=None, minimum=1,
                               help="First line to read, 1-based (default 1)")
    limit: int | None = field(default=None, minimum=1,
                              help="Number of lines to read (default 2000)")
    hashes: bool = field(default=True, help="Prefix each line with its LINE:HASH anchor for edit "
                         "(default true)")


class WriteParams(Struct):
    path: str = field(help="File path of the NEW file, relative to the workspace root")
    content: str = field(text_body=True,
                         help="The file's content (\"\" to scaffold it for write_append)")


class EditParams(Struct):
    path: str = field(help="File to edit")
    old_string: str = field(text_body=True,
                            help="Exact text to replace (copy it from read output; must "
                            "identify one place)")
    new_string: str = field(text_body=True, help="Replacement text")
    replace_all: bool = field(default=False, help="Replace every occurrence")
    anchor: str | None = field(default=None, help="LINE:HASH from read: the match must include "
                               "that line, unchanged")


class AppendParams(Struct):
    """write_append's parameters as zkit's seed has them: without check_syntax (a change that
    breaks the parse is written with a warning, docs/internals/code.md#syntax-guard)."""

    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    content: str = field(text_body=True,
                         aliases=CONTENT_ALIASES, help="Text to add at the end of the file")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")
    newline: Literal["auto", "lf", "crlf", "as_is"] = field(
        default="auto", help="Line endings: auto follows the file's style")


class PatchParams(Struct):
    patch: str = field(help="A unified diff (---/+++/@@ hunks); it names the files it changes")
    path: str | None = field(default=None,
                             help="File to patch when the diff does not name it")


# edit's and apply_patch's matching tolerances (docs/dialects.md#tiers): whitespace-sensitive
# but for the indentation and trailing-whitespace slips, reported by matched_with.
EDIT_TIERS = ["trailing_whitespace", "indentation"]


def _tools() -> list[DialectTool]:
    return [
        DialectTool("read", "read_file", params=ReadParams, description=(
            "Read a file with offset/limit paging; each line carries a stable LINE:HASH anchor "
            "for anchored edits.")),
        DialectTool("write", "write_file", params=WriteParams,
                    destructive=False, idempotent=False,
                    description=(
                        "Create a new file. Refuses to overwrite: an existing file is rejected; "
                        "change it with edit, or scaffold with write(path, \"\") and add chunks "
                        "with write_append.")),
        DialectTool("write_append", "write_append", params=AppendParams, closed=True, description=(
            "Append text to a file (creating it): scaffold with write(path, \"\"), then add "
            "large content in chunks.")),
        DialectTool("edit", "apply_edit", params=EditParams,
                    renames={"old_string": "old_text", "new_string": "new_text"},
                    fixed={"tiers": EDIT_TIERS},
                    description=(
                        "String-replace edit with optional line/hash anchor from read output. "
                        "Near misses fail with the closest candidate and what differs.")),
        DialectTool("apply_patch", "apply_edit", params=PatchParams, fixed={"tiers": EDIT_TIERS},
                    description="Apply a unified diff to files in the workspace."),
        DialectTool("grep", "grep_search", description=(
            "Workspace-rooted regex search of file contents with glob filtering.")),
        DialectTool("glob", "find_files_glob", description=(
            "Workspace path enumeration by glob pattern ('**/*.go').")),
        # a single-level listing shows the directory as it is: every entry (the seed hides
        # none); grep and glob keep zbtools' defaults (the seed is silent; docs/dialects.md)
        DialectTool("ls", "list_directory", defaults={"exclude_dirs": [], "include_hidden": True,
                                                      "include_ignored": True},
                    description="Structured single-level directory listing."),
        DialectTool("bash", "bash", defaults={"on_timeout": "background"}, description=(
            "Run a shell command. Short commands return output inline; a command still running "
            "at the timeout keeps running and returns a process id: read it with bash_output, "
            "end it with stop_process.")),
        DialectTool("bash_output", "bash_output", description=(
            "Read accumulated stdout/stderr of a background process, with cursor-based "
            "polling.")),
        DialectTool("stop_process", "stop_process", description=(
            "Terminate a background process (SIGTERM with grace, then SIGKILL).")),
        DialectTool("list_processes", "list_processes", description=(
            "Inventory of tracked processes: running and recently exited.")),
        DialectTool("save_plan", "save_plan", description=(
            "Persist a plan-mode artifact as a markdown file under .zbtools/plans/<name>.md.")),
        DialectTool("save_plan_append", "save_plan_append",
                    description="Append a chunk to a plan file saved with save_plan."),
        DialectTool("update_plan", "update_plan", description=(
            "Update the live structured plan: an ordered list of steps, each pending, "
            "in_progress or completed.")),
        # listed as soon as the canonical tools exist (issue 8); their parameters are zbtools'
        DialectTool("web_fetch", "web_fetch", description=(
            "HTTP GET a URL and return its text (SSRF-guarded, capped output).")),
        DialectTool("web_search", "web_search", description=(
            "Search the web through a local SearXNG instance (default 10 results, at most "
            "25).")),
    ]


# write is create-only, and so is every canonical name a zkit call reaches (write_file,
# create_file, copy_file, move_file: docs/dialects.md#one-promise-whatever-the-name)
DIALECT = Dialect("zkit", _tools, rules=(create_only(
    "zkit", "read the file and change it with edit, or add to it with write_append; write never "
    "overwrites"),))
