"""The result contract: the JSON envelope, error codes and exit codes (docs/contract.md).

Every call prints exactly one JSON document on stdout::

    {"zbtools": 1, "tool": "read_file", "ok": true, "result": {...}, "truncated": false,
     "warnings": []}
    {"zbtools": 1, "tool": "read_file", "ok": false,
     "error": {"code": "not_found", "message": "...", "hint": "...", "details": {...}}}

Error codes are stable snake_case strings. Each code has one exit code, so a shell script can
branch on ``$?`` and a harness on ``error.code``: ``ERROR_CODES`` and ``EXIT_STATUSES`` are the
one declaration of both, which the man page, ``--help`` and the docs' tables are made from. This
module is on the hot path: stdlib only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~3 ms of start-up; mypy treats this name as True
if TYPE_CHECKING:
    from typing import Any, Literal

    # Every code of ERROR_CODES (below) as a type: a misspelt code fails mypy. Written by
    # ``python -m zbtools.devgen`` from ERROR_CODES; never edit it by hand.
    # errorcodes:begin
    ErrorCode = Literal[
        "invalid_json",
        "invalid_arguments",
        "unknown_tool",
        "usage_error",
        "too_large",
        "not_found",
        "already_exists",
        "is_directory",
        "not_a_directory",
        "special_file",
        "binary_file",
        "encoding_error",
        "out_of_range",
        "stale_file",
        "permission_denied",
        "hardlink_refused",
        "symlink_loop",
        "path_changed",
        "cross_device",
        "no_space",
        "io_error",
        "no_match",
        "ambiguous_match",
        "overlapping_edits",
        "no_change",
        "placeholder_in_new",
        "edit_conflict",
        "ambiguous_scope",
        "anchor_required",
        "patch_parse_error",
        "stale_anchor",
        "unsupported_language",
        "symbol_not_found",
        "ambiguous_symbol",
        "syntax_error",
        "regex_error",
        "regex_timeout",
        "no_active_file",
        "unknown_id",
        "dangling_symlink",
        "ambiguous_path",
        "ambiguous_id",
        "state_corrupt",
        "outside_workspace",
        "protected_path",
        "workspace_root_protected",
        "spawn_failed",
        "process_not_found",
        "guardrail_refused",
        "approval_required",
        "approval_denied",
        "sandbox_unavailable",
        "missing_dependency",
        "unsupported_format",
        "encrypted_pdf",
        "no_text_layer",
        "blocked_address",
        "not_configured",
        "fetch_failed",
        "http_error",
        "timeout",
        "render_unavailable",
        "internal_error",
        "interrupted",
    ]
    # errorcodes:end

CONTRACT_VERSION = 1


class ExitCode:
    """Process exit statuses. Stable: scripts branch on them."""

    OK = 0
    TOOL_FAILED = 1  # the tool failed as documented: not found, no match, refused, ...
    USAGE = 2  # invalid arguments, malformed JSON, unknown tool or option
    SAFETY = 3  # refused for safety: outside the workspace, root protected, guardrail
    INTERNAL = 4  # a bug in zbtools: traceback on stderr only with --debug
    INTERRUPTED = 130  # SIGINT


# status -> (brief, meaning): the one list of what each status means. ``--help`` shows the briefs;
# the man page and the docs' tables the meanings (reStructuredText literals; tests/test_docs.py
# holds the README's and docs/contract.md's tables to it).
EXIT_STATUSES: dict[int, tuple[str, str]] = {
    ExitCode.OK: ("ok", "success"),
    ExitCode.TOOL_FAILED: ("tool failed as documented", "the tool failed as documented (not "
                           "found, already exists, stale file, ...)"),
    ExitCode.USAGE: ("invalid arguments/usage",
                     "invalid arguments, malformed JSON, unknown tool or option"),
    ExitCode.SAFETY: ("refused for safety", "refused for safety (outside the workspace, the "
                      "workspace root, the command guardrail, approval, a required sandbox, a "
                      "blocked address)"),
    ExitCode.INTERNAL: ("internal error", "internal error (a bug; ``--debug`` prints the "
                        "traceback on stderr, never on stdout)"),
    ExitCode.INTERRUPTED: ("interrupted", "interrupted"),
}


# code -> (exit status, one-line meaning). The README and man page are generated from this table,
# and so is the type ``ErrorCode`` (above) that every ToolError's code must be.
ERROR_CODES: dict[ErrorCode, tuple[int, str]] = {
    "invalid_json": (ExitCode.USAGE, "the request is not one valid JSON object"),
    "invalid_arguments": (
        ExitCode.USAGE,
        "unknown, missing, duplicated or mistyped arguments (every problem listed in details)",
    ),
    "unknown_tool": (ExitCode.USAGE, "no tool has that name or alias"),
    "usage_error": (ExitCode.USAGE, "a command-line option of zbtools itself is wrong"),
    "too_large": (ExitCode.USAGE, "the request (or a file it needs whole) exceeds a size limit"),
    "not_found": (ExitCode.TOOL_FAILED, "the path (or a parent directory) does not exist"),
    "already_exists": (ExitCode.TOOL_FAILED,
                       "the destination exists and overwriting was not asked"),
    "is_directory": (ExitCode.TOOL_FAILED, "a file was expected but the path is a directory"),
    "not_a_directory": (ExitCode.TOOL_FAILED, "a directory was expected but the path is not one"),
    "special_file": (ExitCode.TOOL_FAILED, "FIFOs, sockets and devices are never read or written"),
    "binary_file": (ExitCode.TOOL_FAILED, "the file is binary (a NUL byte in its first 8 KiB)"),
    "encoding_error": (
        ExitCode.TOOL_FAILED,
        "the text cannot be represented in the file's encoding without losing bytes",
    ),
    "out_of_range": (ExitCode.TOOL_FAILED, "a line number lies beyond the end of the file"),
    "stale_file": (ExitCode.TOOL_FAILED, "the file changed since it was read (expected_sha256)"),
    "permission_denied": (ExitCode.TOOL_FAILED, "the operating system refused access"),
    "hardlink_refused": (
        ExitCode.TOOL_FAILED,
        "an in-place write to a file with several hard links was refused",
    ),
    "symlink_loop": (ExitCode.TOOL_FAILED, "too many levels of symbolic links"),
    "path_changed": (ExitCode.TOOL_FAILED, "the path changed while it was being resolved; retry"),
    "cross_device": (ExitCode.TOOL_FAILED, "source and destination are on different filesystems"),
    "no_space": (ExitCode.TOOL_FAILED, "the disk or quota is full; nothing was changed"),
    "io_error": (ExitCode.TOOL_FAILED, "the operating system reported an I/O error"),
    "no_match": (ExitCode.TOOL_FAILED,
                 "the old text was not found (the error shows the closest candidate)"),
    "ambiguous_match": (ExitCode.TOOL_FAILED,
                        "the old text matches several places (every candidate is listed)"),
    "overlapping_edits": (ExitCode.TOOL_FAILED, "two edits of one call touch the same lines"),
    "no_change": (ExitCode.TOOL_FAILED, "nothing to do: old and new text are identical, or what "
                  "new text adds already stands beside old text"),
    "placeholder_in_new": (ExitCode.TOOL_FAILED,
                           "the new text contains an omission placeholder such as '// ...'"),
    "edit_conflict": (ExitCode.TOOL_FAILED, "an approximate match differs from the file "
                      "exactly where the edit changes it"),
    "ambiguous_scope": (ExitCode.TOOL_FAILED, "a @@ scope line of a patch matches several places"),
    "anchor_required": (ExitCode.TOOL_FAILED,
                        "a patch hunk only adds lines and has no context to place them"),
    "patch_parse_error": (ExitCode.USAGE, "the patch is neither a valid unified diff nor a "
                          "Codex patch"),
    "stale_anchor": (ExitCode.TOOL_FAILED,
                     "a LINE:HASH anchor no longer matches the file (the line changed)"),
    "unsupported_language": (ExitCode.TOOL_FAILED, "no parser or no symbols are known for the "
                             "file's language (the supported ones are listed)"),
    "symbol_not_found": (ExitCode.TOOL_FAILED, "no definition has that name (the closest names "
                         "are listed)"),
    "ambiguous_symbol": (ExitCode.TOOL_FAILED, "several definitions have that name (every "
                         "candidate is listed)"),
    "syntax_error": (ExitCode.TOOL_FAILED, "the edit would introduce parse errors and "
                     "check_syntax is refuse; nothing was changed"),
    "regex_error": (ExitCode.USAGE, "the search pattern is not a valid regular expression"),
    "regex_timeout": (ExitCode.TOOL_FAILED,
                      "the pattern took too long before any file was searched"),
    "no_active_file": (ExitCode.TOOL_FAILED,
                       "an editor tool needs an active file and none is open (open_file first)"),
    "unknown_id": (ExitCode.TOOL_FAILED,
                   "no task or plan step has that id or index (the valid ones are listed)"),
    "dangling_symlink": (ExitCode.TOOL_FAILED, "a write would go through a symlink whose target "
                         "does not exist (and so create the target)"),
    "ambiguous_path": (ExitCode.TOOL_FAILED, "the path names no entry exactly, and several "
                       "entries are the same name in Unicode (composed and decomposed accents)"),
    "ambiguous_id": (ExitCode.TOOL_FAILED, "several items (e.g. notebook cells) share the id "
                     "given; name one by its index"),
    "state_corrupt": (ExitCode.TOOL_FAILED, "a state file (editor, plan, tasks) is unreadable "
                      "or from a newer zbtools; it is left untouched"),
    "outside_workspace": (
        ExitCode.SAFETY,
        "the path resolves outside the workspace (.., absolute path, symlink, NUL byte)",
    ),
    "protected_path": (
        ExitCode.SAFETY,
        "the path belongs to git: inside .git/ or another git directory, a hooks path, an "
        "included config file, or a hard link of one; writes never touch them by default",
    ),
    "workspace_root_protected": (
        ExitCode.SAFETY,
        "the workspace root itself can never be deleted, moved or overwritten",
    ),
    "spawn_failed": (ExitCode.TOOL_FAILED, "the command could not be started (shell missing, "
                     "working directory gone, no resources)"),
    "process_not_found": (ExitCode.TOOL_FAILED,
                          "no background process has that id in this workspace"),
    "guardrail_refused": (ExitCode.SAFETY, "the advisory shell-policy guardrail refused an "
                          "obviously destructive command (rule id in details)"),
    "approval_required": (ExitCode.SAFETY, "commands need approval but there is no terminal "
                          "to ask on"),
    "approval_denied": (ExitCode.SAFETY, "the approval policy or the user refused the command"),
    "sandbox_unavailable": (ExitCode.SAFETY, "a sandbox was required but the kernel cannot "
                            "provide it (the command did not run)"),
    "missing_dependency": (ExitCode.TOOL_FAILED, "a library the tool needs is absent from the "
                           "install (the hint is the exact command that installs it)"),
    "unsupported_format": (ExitCode.TOOL_FAILED, "the file or content is of a kind this tool "
                           "cannot read (a corrupt image, PDF or notebook)"),
    "encrypted_pdf": (ExitCode.TOOL_FAILED, "the PDF is encrypted and cannot be read"),
    "no_text_layer": (ExitCode.TOOL_FAILED, "the PDF pages have no text layer (scanned images); "
                      "OCR is needed"),
    "blocked_address": (ExitCode.SAFETY, "the URL resolves to a loopback, private, link-local, "
                        "multicast, reserved or metadata address (also after a redirect)"),
    "not_configured": (ExitCode.TOOL_FAILED, "the tool needs a setting that is not configured "
                       "(e.g. a SearXNG URL for web_search)"),
    "fetch_failed": (ExitCode.TOOL_FAILED, "the HTTP request failed: DNS, connection, TLS, "
                     "too many redirects, or an unusable response"),
    "http_error": (ExitCode.TOOL_FAILED, "the server answered with an HTTP error status "
                   "(4xx/5xx; status in details)"),
    "timeout": (ExitCode.TOOL_FAILED, "the operation did not finish within its time limit"),
    "render_unavailable": (ExitCode.TOOL_FAILED, "JavaScript rendering was required but no "
                           "headless Chromium is installed"),
    "internal_error": (ExitCode.INTERNAL, "a bug in zbtools; rerun with --debug for a traceback"),
    "interrupted": (ExitCode.INTERRUPTED, "interrupted by a signal"),
}


# Errors quote what they were given (a path, a pattern, a value) but never more than this many
# characters of one string: a 50 MB argument must not come back as a 100 MB error. Room for
# the longest path Linux accepts (PATH_MAX, 4096 bytes) in ``details``.
QUOTE_LIMIT = 4096


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters, else its head and its tail with the
    number of characters left out between them (the tail often says what went wrong)."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit // 8
    return f"{text[:head]}…[{len(text) - head - tail:,} characters cut]…{text[-tail:]}"


def clip_all(value: Any) -> Any:
    """``value`` with every string in it clipped (dicts and lists copied only if needed)."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, dict):
        clipped = {k: clip_all(v) for k, v in value.items()}
        return value if all(clipped[k] is v for k, v in value.items()) else clipped
    if isinstance(value, list | tuple):
        items = [clip_all(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


class ToolError(Exception):
    """A documented failure: becomes the ``error`` object of the envelope.

    ``message`` says what happened, ``hint`` what the caller should do next (written for a model
    that will retry), ``details`` carries machine-readable facts (line counts, candidates, ...).
    Each string of the three is kept to ``QUOTE_LIMIT`` characters (``clip``), whatever it
    quotes, here and again when the error is sent (``to_json``).
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        hint: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"undeclared error code {code!r}")
        message = clip(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = clip(hint)
        self.details = details or {}

    @property
    def exit_code(self) -> int:
        status: int = ERROR_CODES[self.code][0]
        return status

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": clip(self.message),
                               "hint": clip(self.hint)}
        if self.details:
            out["details"] = clip_all(self.details)
        return out


def success_envelope(
    tool: str, result: dict[str, Any], *, truncated: bool, warnings: list[str]
) -> dict[str, Any]:
    return {
        "zbtools": CONTRACT_VERSION,
        "tool": tool,
        "ok": True,
        "result": result,
        "truncated": truncated,
        "warnings": warnings,
    }


def error_envelope(tool: str | None, error: ToolError) -> dict[str, Any]:
    return {"zbtools": CONTRACT_VERSION, "tool": tool, "ok": False, "error": error.to_json()}
