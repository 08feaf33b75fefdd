"""The ``claude`` dialect (docs/internals/sources.md#claude): Claude Code's file tools Read, Write,
Edit, Glob and Grep.

What users see, and where it departs from Claude Code (whitespace-tolerant edits besides
Claude Code's own curly-quote fold, ``EDIT_TIERS``, docs/dialects.md#tiers; no
read-before-edit rule: ``expected_sha256`` refuses a stale write instead, relative paths
accepted), is in docs/dialects.md. ``DIALECT`` is the dialect; its tools map as follows:

* ``Read`` -> read_file: ``file_path``, 1-based ``offset`` (``0`` taken as 1), ``limit``
  (2,000 lines whatever their size: ``READ_BYTES``), ``pages``; rendered as ``cat -n``.
* ``Write`` -> write_file; ``Edit`` -> apply_edit (``old_string``, ``new_string``,
  ``replace_all``).
* ``Glob`` -> find_files_glob, newest first; ``Grep`` -> grep_search with ripgrep's option names
  and ``output_mode`` defaulting to ``files_with_matches``. Both search as ripgrep does
  (.gitignore and hidden files honoured, no directory left out by name).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal


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


def _tools() -> list[DialectTool]:
    return [
        DialectTool("Read", "read_file", params=ReadParams, renames={"file_path": "path"},
                    translate=_read, defaults={"max_bytes": READ_BYTES}, description=(
                        "Reads file contents from the filesystem. Returns content with line "
                        "numbers (cat -n format); offset and limit (default 2000 lines) read "
                        "part of a large file.")),
        DialectTool("Write", "write_file", params=WriteParams, renames={"file_path": "path"},
                    description=(
                        "Creates new files or completely rewrites existing files. Overwrites "
                        "existing files; Edit is preferred for modifications.")),
        DialectTool("Edit", "apply_edit", params=EditParams,
                    renames={"file_path": "path", "old_string": "old_text",
                             "new_string": "new_text"}, fixed={"tiers": EDIT_TIERS},
                    description=(
                        "Performs exact string replacements in files. Fails if old_string is "
                        "not unique (provide more context) unless replace_all is set; preserves "
                        "exact indentation.")),
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
                    description=(
                        "Content search powered by ripgrep. Full regex syntax, file type "
                        "filtering, context lines (-A, -B, -C) and multiline matching.")),
    ]


DIALECT = Dialect("claude", _tools)
