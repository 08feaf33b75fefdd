"""Every registered tool, in every result shape it gives, as calls a person could type.

``CASES`` lists, for each tool of the registry and each tool of each dialect, calls that end in
success, in each kind of documented error, truncated, with warnings and empty; ``populate``
builds the workspace they run in (including files whose content and names carry escape
sequences). ``tests/surfaces/test_human_rendering.py`` runs them all on a pseudo-terminal through
``drive``: one interpreter on the terminal runs the calls one after the other through the
program's entry point with the process's real streams, and records each exit status in a file,
so a hundred renderings cost one start-up.

Not a test module: the cases are data, shared by the terminal test and the output invariant.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zbtools.contract import ErrorCode

# A file's bytes that would act on a terminal: clear the screen, home the cursor, retitle the
# window, an 8-bit CSI, a bidi override, a backspace and a lone carriage return.
HOSTILE = "\x1b[2J\x1b[H\x1b]0;owned\x07\x9b31m\u202eevil\x08\rX"
HOSTILE_NAME = "esc\x1b[2Jname.txt"
MARK = "\n@@case {index} {label}@@\n"


@dataclass
class Case:
    """One call: the tool it covers (``dialect/Name`` for a dialect's), its command line (after
    ``zbtools``), the error code it must end with (None: success) and, for a call that starts
    a background process, the name its id is kept under (``{name}`` in later command lines)."""

    tool: str
    label: str
    argv: list[str]
    error: ErrorCode | None = None
    keep_id: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def populate(ws: Path) -> None:
    """The workspace every case expects."""
    (ws / "app.py").write_text("import os\n\n\ndef main():\n    return os.getcwd()  # TODO\n")
    (ws / "notes.md").write_text("a TODO here\nand TODO there\n")
    (ws / "twice.txt").write_text("same\nother\nsame\n")
    (ws / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 2101)))
    (ws / "latin1.txt").write_bytes(b"caf\xe9 TODO\n")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo TODO\r\n")
    (ws / "empty.txt").write_text("")
    (ws / "hostile.txt").write_text(f"before {HOSTILE} TODO after\nsecond line\n")
    (ws / HOSTILE_NAME).write_text("named TODO\n")
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02TODO")
    (ws / "sub").mkdir()
    (ws / "sub" / "deep.txt").write_text("deep TODO\n")
    (ws / "emptydir").mkdir()
    (ws / "many").mkdir()
    for n in range(30):
        (ws / "many" / f"f{n:02}.txt").write_text(f"file {n} TODO\n")
    notebook = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {},
                           "source": ["print('hi')\n"], "outputs": [],
                           "execution_count": None},
                          {"cell_type": "markdown", "id": "c2", "metadata": {},
                           "source": ["# title\n"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (ws / "nb.ipynb").write_text(json.dumps(notebook))
    from tests.tools.test_read_media import make_pdf, scanned_pdf

    (ws / "doc.pdf").write_bytes(make_pdf([["first page", "text \\033[2J here"], ["second"]]))
    (ws / "scan.pdf").write_bytes(scanned_pdf())
    from PIL import Image

    Image.new("RGB", (8, 6), "red").save(ws / "pic.png")
    os.mkfifo(ws / "pipe")


def cases(web: str, searxng: str) -> list[Case]:
    """The calls, in the order they run (later ones rely on earlier ones: an open file, a
    background process, a saved plan). ``web``: a page server on loopback (allowed),
    ``searxng``: a SearXNG stand-in."""
    W = {"ZBTOOLS_WEB_ALLOW": "127.0.0.1"}
    S = {"ZBTOOLS_SEARXNG_URL": searxng}
    edit = ["--old-text", "a TODO here", "--new-text", "a DONE here"]
    patch = "--- a/twice.txt\n+++ b/twice.txt\n@@ -1,3 +1,3 @@\n same\n-other\n+changed\n same\n"
    c = Case
    return [
        # ---- reading
        c("read_file", "text", ["read_file", "app.py"]),
        c("read_file", "paged", ["read_file", "app.py", "--limit", "2"]),
        c("read_file", "over the line cap", ["read_file", "long.txt"]),
        c("read_file", "offset past a page", ["read_file", "long.txt", "--offset", "2050"]),
        c("read_file", "empty", ["read_file", "empty.txt"]),
        c("read_file", "not UTF-8", ["read_file", "latin1.txt"]),
        c("read_file", "CRLF", ["read_file", "crlf.txt"]),
        c("read_file", "hostile content", ["read_file", "hostile.txt"]),
        c("read_file", "hostile name", ["read_file", HOSTILE_NAME]),
        c("read_file", "hashes", ["read_file", "app.py", "--hashes"]),
        c("read_file", "notebook", ["read_file", "nb.ipynb"]),
        c("read_file", "pdf", ["read_file", "doc.pdf"]),
        c("read_file", "image", ["read_file", "pic.png"]),
        c("read_file", "scanned pdf", ["read_file", "scan.pdf"], "no_text_layer"),
        c("read_file", "missing", ["read_file", "missing.txt"], "not_found"),
        c("read_file", "missing hostile name", ["read_file", "no\x1b]0;t\x07pe"], "not_found"),
        c("read_file", "directory", ["read_file", "sub"], "is_directory"),
        c("read_file", "binary", ["read_file", "bin.dat"], "binary_file"),
        c("read_file", "fifo", ["read_file", "pipe"], "special_file"),
        c("read_file", "outside", ["read_file", "../outside/secret.txt"], "outside_workspace"),
        c("read_file", "bad arguments", ["read_file", "app.py", "--limit", "x", "--bogus"],
          "invalid_arguments"),
        c("read_file", "bidi name", ["read_file", "evil\u202etxt.exe"], "invalid_arguments"),
        c("read_file_range", "range", ["read_file_range", "app.py", "--start-line", "2",
                                       "--end-line", "4"]),
        c("read_file_range", "hostile", ["read_file_range", "hostile.txt", "--start-line", "1",
                                         "--end-line", "1"]),
        c("read_file_range", "past the end", ["read_file_range", "app.py", "--start-line", "90",
                                              "--end-line", "95"], "out_of_range"),
        c("get_file_info", "file", ["get_file_info", "app.py"]),
        c("get_file_info", "hostile name", ["get_file_info", HOSTILE_NAME]),
        c("get_file_info", "missing", ["get_file_info", "nope"], "not_found"),
        # ---- listing and searching
        c("list_directory", "tree", ["list_directory"]),
        c("list_directory", "limited", ["list_directory", "many", "--limit", "5"]),
        c("list_directory", "empty", ["list_directory", "emptydir"]),
        c("list_directory", "a file", ["list_directory", "app.py"], "not_a_directory"),
        c("get_workspace_structure", "tree", ["get_workspace_structure"]),
        c("get_workspace_structure", "limited", ["get_workspace_structure", "--limit", "3"]),
        c("get_workspace_structure", "missing", ["get_workspace_structure", "nope"], "not_found"),
        c("find_files", "some", ["find_files", "f0"]),
        c("find_files", "limited", ["find_files", "f", "--limit", "3"]),
        c("find_files", "none", ["find_files", "zzzz"]),
        c("find_files", "hostile name", ["find_files", "esc"]),
        c("find_files", "missing path", ["find_files", "x", "--path", "nope"], "not_found"),
        c("outline", "a file", ["outline", "app.py"]),
        c("outline", "a map", ["outline"]),
        c("outline", "a map cut", ["outline", "--max-lines", "1"]),
        c("outline", "no symbols", ["outline", "notes.md"], "unsupported_language"),
        c("outline", "missing", ["outline", "nope.py"], "not_found"),
        c("find_files_glob", "some", ["find_files_glob", "*.md"]),
        c("find_files_glob", "limited", ["find_files_glob", "**/*.txt", "--limit", "3"]),
        c("find_files_glob", "none", ["find_files_glob", "*.zzz"]),
        c("find_files_glob", "outside", ["find_files_glob", "*", "--path", "../outside"],
          "outside_workspace"),
        c("grep_search", "content", ["grep_search", "TODO", "-C", "1"]),
        c("grep_search", "hostile", ["grep_search", "owned"]),
        c("grep_search", "control in pattern", ["grep_search", "\x1b\\[2J"]),
        c("grep_search", "files", ["grep_search", "TODO", "--output-mode",
                                   "files_with_matches"]),
        c("grep_search", "count", ["grep_search", "TODO", "--output-mode", "count"]),
        c("grep_search", "head limit", ["grep_search", "TODO", "--head-limit", "2"]),
        c("grep_search", "no match", ["grep_search", "zzzz_absent"]),
        c("grep_search", "bad regex", ["grep_search", "(unclosed"], "regex_error"),
        c("grep_search", "missing path", ["grep_search", "x", "--path", "nope"], "not_found"),
        c("codebase_search", "some", ["codebase_search", "main"]),
        c("codebase_search", "none", ["codebase_search", "zzzzqqq"]),
        c("codebase_search", "no query", ["codebase_search"], "invalid_arguments"),
        # ---- editing
        c("apply_edit", "diff", ["apply_edit", "notes.md", *edit]),
        c("apply_edit", "dry run", ["apply_edit", "app.py", "--old-text", "import os",
                                    "--new-text", "import sys", "--dry-run"]),
        c("apply_edit", "hostile diff", ["apply_edit", "hostile.txt", "--old-text",
                                         "second line", "--new-text", "2nd \x1b[31mline"]),
        c("apply_edit", "closest candidate", ["apply_edit", "hostile.txt", "--old-text",
                                              f"bef0re {HOSTILE} TODO after",
                                              "--new-text", "x"], "no_match"),
        c("apply_edit", "ambiguous", ["apply_edit", "twice.txt", "--old-text", "same",
                                      "--new-text", "x"], "ambiguous_match"),
        c("apply_edit", "no change", ["apply_edit", "app.py", "--old-text", "import os",
                                      "--new-text", "import os"], "no_change"),
        c("apply_edit", "patch", ["apply_edit", "--patch", patch]),
        c("apply_edit", "bad patch", ["apply_edit", "--patch", "@@ nonsense"],
          "patch_parse_error"),
        c("apply_edit", "protected", ["apply_edit", ".git/config", "--old-text", "a",
                                      "--new-text", "b"], "protected_path"),
        c("edit_file", "whole", ["edit_file", "notes.md", "--old-content", "and TODO there",
                                 "--new-content", "and DONE there"]),
        c("edit_file", "stale", ["edit_file", "notes.md", "--old-content", "a",
                                 "--new-content", "b", "--expected-sha256", "0" * 64],
          "stale_file"),
        c("insert_text", "insert", ["insert_text", "notes.md", "--content", "top\n",
                                    "--insert-line", "1"]),
        c("insert_text", "past the end", ["insert_text", "notes.md", "--content", "x\n",
                                          "--insert-line", "999"], "out_of_range"),
        c("find_symbol", "found", ["find_symbol", "main", "--include-references"]),
        c("find_symbol", "closest", ["find_symbol", "mian"]),
        c("find_symbol", "unsupported", ["find_symbol", "x", "--path", "notes.md"],
          "unsupported_language"),
        c("edit_symbol", "body", ["edit_symbol", "main", "--action", "replace_body",
                                  "--new-text", "return 1", "--dry-run"]),
        c("edit_symbol", "missing", ["edit_symbol", "mian", "--new-text", "x"],
          "symbol_not_found"),
        c("edit_notebook_cell", "replace", ["edit_notebook_cell", "nb.ipynb", "--cell-index",
                                            "0", "--source", "print('bye')"]),
        c("edit_notebook_cell", "missing cell", ["edit_notebook_cell", "nb.ipynb",
                                                 "--cell-id", "zz", "--source", "x"],
          "unknown_id"),
        c("undo", "last change", ["undo", "--path", "nb.ipynb"]),
        c("undo", "dry run", ["undo", "--dry-run"]),
        c("undo", "nothing", ["undo", "--path", "empty.txt"], "not_found"),
        # ---- files
        c("write_file", "new", ["write_file", "new.txt", "--content", "hello\n"]),
        c("write_file", "hostile content", ["write_file", "new2.txt", "--content", HOSTILE]),
        c("write_file", "exists", ["write_file", "new.txt", "--content", "x",
                                   "--overwrite=false"], "already_exists"),
        c("write_file", "outside", ["write_file", "/etc/zb-nope", "--content", "x"],
          "outside_workspace"),
        c("write_append", "append", ["write_append", "new.txt", "--content", "more\n"]),
        c("write_append", "directory", ["write_append", "sub", "--content", "x"],
          "is_directory"),
        c("copy_file", "copy", ["copy_file", "new.txt", "copy.txt"]),
        c("copy_file", "exists", ["copy_file", "new.txt", "copy.txt"], "already_exists"),
        c("move_file", "move", ["move_file", "copy.txt", "moved.txt"]),
        c("move_file", "missing", ["move_file", "copy.txt", "x.txt"], "not_found"),
        c("create_directory", "new", ["create_directory", "made/inner"]),
        c("create_directory", "over a file", ["create_directory", "app.py"], "already_exists"),
        c("delete_file", "file", ["delete_file", "moved.txt"]),
        c("delete_file", "the root", ["delete_file", "."], "workspace_root_protected"),
        c("delete_file", "missing", ["delete_file", "moved.txt"], "not_found"),
        # ---- the editor
        c("get_selection", "no file open", ["get_selection"], "no_active_file"),
        c("get_editor_state", "nothing open", ["get_editor_state"]),
        c("get_editor_state", "bad flag", ["get_editor_state", "--x", "1"],
          "invalid_arguments"),
        c("select_range", "no file open", ["select_range", "--start-line", "1",
                                           "--end-line", "1"], "no_active_file"),
        c("replace_selection", "no file open", ["replace_selection", "--content", "x"],
          "no_active_file"),
        c("insert_at_cursor", "no file open", ["insert_at_cursor", "--content", "x"],
          "no_active_file"),
        c("open_file", "open", ["open_file", "hostile.txt"]),
        c("open_file", "missing", ["open_file", "nope.txt"], "not_found"),
        c("goto_line", "line 2", ["goto_line", "--line", "2"]),
        c("goto_line", "clamped, a warning", ["goto_line", "--line", "900"]),
        c("goto_line", "not a number", ["goto_line", "--line", "x"], "invalid_arguments"),
        c("select_range", "select", ["select_range", "--start-line", "1", "--start-column",
                                     "1", "--end-line", "1", "--end-column", "30"]),
        c("get_selection", "selection", ["get_selection"]),
        c("replace_selection", "replace", ["replace_selection", "--content", "chosen "]),
        c("insert_at_cursor", "insert", ["insert_at_cursor", "--content", "\x1b[5m!"]),
        c("get_editor_state", "state", ["get_editor_state"]),
        c("close_file", "close", ["close_file", "--all"]),
        c("close_file", "nothing open", ["close_file"], "no_active_file"),
        # ---- commands
        c("run_command", "output", ["run_command", "echo out; echo err >&2"]),
        c("run_command", "hostile output", ["run_command", "printf 'a\\033[2Jb\\033]0;t\\007\\r"
                                            "c\\n'; printf '\\033[31m' >&2"]),
        c("run_command", "failure", ["run_command", "exit 3"]),
        c("run_command", "no output", ["run_command", "true"]),
        c("run_command", "timeout", ["run_command", "sleep 5", "--timeout", "0.3"]),
        c("run_command", "guardrail", ["run_command", "rm -rf /"], "guardrail_refused"),
        c("run_command", "denied", ["--approval", "deny", "run_command", "true"],
          "approval_denied"),
        c("run_command", "missing cwd", ["run_command", "true", "--cwd", "nope"], "not_found"),
        c("bash", "output", ["bash", "echo hi"]),
        c("bash", "guardrail", ["bash", "rm -rf ~"], "guardrail_refused"),
        c("bash", "background", ["bash", "printf 'bg \\033[2J\\n'; sleep 30", "--background"],
          keep_id="job"),
        c("bash_output", "output", ["bash_output", "{job}", "--wait-ms", "300"]),
        c("bash_output", "unknown", ["bash_output", "0123456789ab"], "process_not_found"),
        c("bash_output", "malformed id", ["bash_output", "\x1b[2J"], "process_not_found"),
        c("list_processes", "running", ["list_processes"]),
        d("zkit", "bash_output", "output", {"id": "{job}"}),
        d("claude", "BashOutput", "filtered", {"bash_id": "{job}", "filter": "bg"}),
        d("claude", "BashOutput", "unknown", {"bash_id": "0123456789ab"}, "process_not_found"),
        c("list_processes", "bad flag", ["list_processes", "--running-only", "x"],
          "invalid_arguments"),
        c("stop_process", "one", ["stop_process", "{job}"]),
        d("claude", "KillShell", "ended", {"shell_id": "{job}"}),
        d("claude", "KillShell", "unknown", {"shell_id": "0123456789ab"}, "process_not_found"),
        c("stop_process", "unknown", ["stop_process", "0123456789ab"], "process_not_found"),
        c("stop_process", "all", ["stop_process", "--all"]),
        c("list_processes", "none running", ["list_processes", "--running-only"]),
        # ---- plans and tasks
        c("get_plan", "no plan", ["get_plan"]),
        c("get_plan", "bad flag", ["get_plan", "--all"], "invalid_arguments"),
        c("update_plan", "set", ["update_plan", "--steps", json.dumps(
            [{"title": "read \x1b[2J", "status": "completed"},
             {"title": "edit", "status": "in_progress"}, {"title": "test"}]),
            "--explanation", "why \x1b]0;t\x07"]),
        c("update_plan", "one step", ["update_plan", "--index", "2", "--status", "completed"]),
        c("update_plan", "unknown step", ["update_plan", "--id", "s99", "--status",
                                          "completed"], "unknown_id"),
        c("get_plan", "plan", ["get_plan"]),
        c("save_plan", "save", ["save_plan", "--name", "p1", "--content", "# plan\n"]),
        c("save_plan", "exists", ["save_plan", "--name", "p1", "--content", "x"],
          "already_exists"),
        c("save_plan", "bad name", ["save_plan", "--name", "../x", "--content", "x"],
          "invalid_arguments"),
        c("save_plan_append", "append", ["save_plan_append", "--name", "p1", "--content",
                                         "more \x1b[2J\n"]),
        c("save_plan_append", "missing", ["save_plan_append", "--name", "p9", "--content",
                                          "x"], "not_found"),
        c("task", "create", ["task", "--operation", "create", "--title", "do \x1b[2J it"]),
        c("task", "list", ["task", "--operation", "list"]),
        c("task", "empty list", ["task", "--operation", "list", "--status", "completed"]),
        c("task", "update", ["task", "--operation", "update", "--id", "t1", "--status",
                             "completed"]),
        c("task", "unknown", ["task", "--operation", "get", "--id", "t9"], "unknown_id"),
        # ---- the web
        c("web_fetch", "page", ["web_fetch", f"{web}/page"], env=W),
        c("web_fetch", "plain text", ["web_fetch", f"{web}/hostile"], env=W),
        c("web_fetch", "http error", ["web_fetch", f"{web}/missing"], "http_error", env=W),
        c("web_fetch", "blocked", ["web_fetch", f"{web}/page"], "blocked_address"),
        c("web_fetch", "bad url", ["web_fetch", "ftp://x"], "invalid_arguments"),
        c("web_search", "results", ["web_search", "zbtools"], env=S),
        c("web_search", "none", ["web_search", "nothing"], env=S),
        c("web_search", "not configured", ["web_search", "x"], "not_configured"),
        d("zkit", "web_fetch", "page", {"url": f"{web}/page"}, env=W),
        d("claude", "WebFetch", "page", {"url": f"{web}/page", "prompt": "the title?"}, env=W),
        d("claude", "WebFetch", "blocked", {"url": f"{web}/page", "prompt": "p"},
          "blocked_address"),
        d("claude", "WebSearch", "results", {"query": "zb", "blocked_domains": ["x.org"]},
          env=S),
        d("claude", "WebSearch", "short query", {"query": "z"}, "invalid_arguments", env=S),
        d("zkit", "web_search", "results", {"query": "zb"}, env=S),
        # ---- dialects
        *dialect_cases(),
        # ---- the program itself
        c("*", "unknown tool", ["no_such_tool"], "unknown_tool"),
        c("*", "unknown tool with escapes", ["no\x1b[2Jtool"], "unknown_tool"),
        c("*", "bad --args", ["read_file", "--args", "{not json"], "invalid_json"),
        c("*", "unknown option", ["--color", "purple", "read_file", "app.py"], "usage_error"),
    ]


def d(dialect: str, tool: str, label: str, args: dict[str, object],
      error: ErrorCode | None = None,
      env: dict[str, str] | None = None) -> Case:
    """A call of a dialect's tool, with its arguments as JSON."""
    return Case(f"{dialect}/{tool}", label,
                ["--dialect", dialect, tool, "--args", json.dumps(args)], error, env=env or {})


def dialect_cases() -> list[Case]:
    return [
        d("claude", "Read", "read", {"file_path": "hostile.txt"}),
        d("claude", "Read", "missing", {"file_path": "nope"}, "not_found"),
        d("claude", "Write", "write", {"file_path": "c.txt", "content": "c\n"}),
        d("claude", "Write", "bad", {"file_path": "c.txt"}, "invalid_arguments"),
        d("claude", "Edit", "edit", {"file_path": "c.txt", "old_string": "c",
                                     "new_string": "d"}),
        d("claude", "Edit", "no match", {"file_path": "c.txt", "old_string": "zz\x1b[2J",
                                         "new_string": "d"}, "no_match"),
        d("claude", "Glob", "glob", {"pattern": "*.md"}),
        d("claude", "Glob", "none", {"pattern": "*.zz"}),
        d("claude", "Glob", "outside", {"pattern": "*", "path": "../outside"},
          "outside_workspace"),
        d("claude", "Grep", "content", {"pattern": "TODO", "output_mode": "content"}),
        d("claude", "Grep", "files", {"pattern": "owned"}),
        d("claude", "Grep", "count", {"pattern": "TODO", "output_mode": "count"}),
        d("claude", "Grep", "bad regex", {"pattern": "("}, "regex_error"),
        d("claude", "Bash", "run", {"command": "echo 'claude \x1b[2J'"}),
        d("claude", "Bash", "timeout too long", {"command": "true", "timeout": 700_000},
          "invalid_arguments"),
        d("claude", "LS", "ls", {"path": "sub"}),
        d("claude", "LS", "a file", {"path": "app.py"}, "not_a_directory"),
        d("claude", "MultiEdit", "edits", {"file_path": "c.txt", "edits": [
            {"old_string": "d", "new_string": "e \x1b[2J"},
            {"old_string": "e ", "new_string": "f "}]}),
        d("claude", "MultiEdit", "one fails", {"file_path": "c.txt", "edits": [
            {"old_string": "f", "new_string": "g"}, {"old_string": "QQ", "new_string": "h"}]},
          "no_match"),
        d("claude", "NotebookEdit", "replace", {"notebook_path": "nb.ipynb", "cell_id": "c2",
                                                "new_source": "# new \x1b[2J"}),
        d("claude", "NotebookEdit", "unknown cell", {"notebook_path": "nb.ipynb",
                                                     "cell_id": "zz", "new_source": "x"},
          "unknown_id"),
        d("claude", "TodoWrite", "todos", {"todos": [
            {"content": "one \x1b[2J", "status": "in_progress", "activeForm": "doing one"}]}),
        d("claude", "TodoWrite", "two in progress", {"todos": [
            {"content": "a", "status": "in_progress", "activeForm": "a"},
            {"content": "b", "status": "in_progress", "activeForm": "b"}]},
          "invalid_arguments"),
        d("codex", "apply_patch", "add", {"input": "*** Begin Patch\n*** Add File: cx.txt\n"
                                          "+x \x1b[2J\n*** End Patch\n"}),
        d("codex", "apply_patch", "bad", {"input": "nonsense"}, "patch_parse_error"),
        d("codex", "shell", "run", {"command": ["echo", "hi\x1b[2J"]}),
        d("codex", "shell", "bad", {"command": 3}, "invalid_arguments"),
        d("codex", "update_plan", "plan", {"plan": [{"step": "a\x1b[2J",
                                                     "status": "in_progress"}]}),
        d("codex", "update_plan", "bad", {"plan": "x"}, "invalid_arguments"),
        d("codex", "view_image", "image", {"path": "pic.png"}),
        d("codex", "view_image", "not an image", {"path": "crlf.txt"}, "unsupported_format"),
        d("anthropic", "str_replace_based_edit_tool", "view",
          {"command": "view", "path": "hostile.txt"}),
        d("anthropic", "str_replace_based_edit_tool", "view a directory",
          {"command": "view", "path": "sub"}),
        d("anthropic", "str_replace_based_edit_tool", "create",
          {"command": "create", "path": "an.txt", "file_text": "a\n"}),
        d("anthropic", "str_replace_based_edit_tool", "replace",
          {"command": "str_replace", "path": "an.txt", "old_str": "a", "new_str": "b"}),
        d("anthropic", "str_replace_based_edit_tool", "no match",
          {"command": "str_replace", "path": "an.txt", "old_str": "q", "new_str": "b"},
          "no_match"),
        d("fiz", "bash", "run", {"command": "echo fiz"}),
        d("fiz", "bash", "bad", {}, "invalid_arguments"),
        d("fiz", "edit", "edit", {"path": "an.txt", "old_string": "b", "new_string": "e"}),
        d("fiz", "edit", "no match", {"path": "an.txt", "old_string": "q", "new_string": "e"},
          "no_match"),
        d("fiz", "find", "find", {"pattern": "*.md"}),
        d("fiz", "find", "bad", {}, "invalid_arguments"),
        d("fiz", "grep", "grep", {"pattern": "owned"}),
        d("fiz", "grep", "bad regex", {"pattern": "("}, "regex_error"),
        d("fiz", "ls", "ls", {"path": "sub"}),
        d("fiz", "ls", "missing", {"path": "nope"}, "not_found"),
        d("fiz", "patch", "replace", {"path": "an.txt", "search": "e", "content": "f"}),
        d("fiz", "patch", "missing", {"path": "nope.txt", "search": "e", "content": "f"},
          "not_found"),
        d("fiz", "read", "read", {"path": "hostile.txt"}),
        d("fiz", "read", "missing", {"path": "nope"}, "not_found"),
        d("fiz", "task", "list", {"operation": "list"}),
        d("fiz", "task", "unknown", {"operation": "get", "id": "t77"}, "unknown_id"),
        d("fiz", "write", "write", {"path": "fz.txt", "content": "z"}),
        d("fiz", "write", "bad", {"path": "fz.txt"}, "invalid_arguments"),
        d("zkit", "read", "read", {"path": "hostile.txt"}),
        d("zkit", "read", "missing", {"path": "nope"}, "not_found"),
        d("zkit", "write", "write", {"path": "zk.txt", "content": "k\n"}),
        d("zkit", "write", "bad", {"path": "zk.txt"}, "invalid_arguments"),
        d("zkit", "write_append", "append", {"path": "zk.txt", "content": "k2\n"}),
        d("zkit", "write_append", "directory", {"path": "sub", "content": "k"},
          "is_directory"),
        d("zkit", "edit", "edit", {"path": "zk.txt", "old_string": "k2", "new_string": "k3"}),
        d("zkit", "edit", "no match", {"path": "zk.txt", "old_string": "q",
                                       "new_string": "k3"}, "no_match"),
        d("zkit", "apply_patch", "patch", {"patch": "--- a/zk.txt\n+++ b/zk.txt\n@@ -1,2 +1,2 @@"
                                           "\n k\n-k3\n+k4\n"}),
        d("zkit", "apply_patch", "bad", {"patch": "nonsense"}, "patch_parse_error"),
        d("zkit", "grep", "grep", {"pattern": "owned"}),
        d("zkit", "grep", "bad regex", {"pattern": "("}, "regex_error"),
        d("zkit", "glob", "glob", {"pattern": "*.md"}),
        d("zkit", "glob", "bad", {}, "invalid_arguments"),
        d("zkit", "ls", "ls", {"path": "sub"}),
        d("zkit", "ls", "missing", {"path": "nope"}, "not_found"),
        d("zkit", "bash", "run", {"command": "echo zk"}),
        d("zkit", "bash", "bad", {}, "invalid_arguments"),
        d("zkit", "bash_output", "unknown", {"id": "0123456789ab"}, "process_not_found"),
        d("zkit", "bash_output", "bad", {}, "invalid_arguments"),
        d("zkit", "stop_process", "unknown", {"id": "0123456789ab"}, "process_not_found"),
        d("zkit", "stop_process", "all", {"all": True}),
        d("zkit", "list_processes", "list", {}),
        d("zkit", "list_processes", "bad", {"running_only": "x"}, "invalid_arguments"),
        d("zkit", "save_plan", "save", {"name": "zp", "content": "# zp\n"}),
        d("zkit", "save_plan", "exists", {"name": "zp", "content": "x"}, "already_exists"),
        d("zkit", "save_plan_append", "append", {"name": "zp", "content": "more\n"}),
        d("zkit", "save_plan_append", "missing", {"name": "zq", "content": "x"}, "not_found"),
        d("zkit", "update_plan", "set", {"steps": [{"title": "one", "status": "pending"}]}),
        d("zkit", "update_plan", "unknown", {"id": "s42", "status": "completed"},
          "unknown_id"),
        d("zkit", "web_fetch", "blocked", {"url": "http://127.0.0.1:9/"}, "blocked_address"),
        d("zkit", "web_fetch", "bad", {}, "invalid_arguments"),
        d("zkit", "web_search", "not configured", {"query": "x"}, "not_configured"),
        d("zkit", "web_search", "bad", {}, "invalid_arguments"),
    ]


SGR = re.compile(rb"\x1b\[[0-9;]*m")
UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069]|\r(?!\r*\n)")  # a terminal adds a CR before each LF


def terminal_leaks(raw: bytes, *, styled: bool = True) -> list[str]:
    """What in ``raw`` (the bytes a terminal received) would act on the terminal: control
    characters, escape sequences, bytes that are not UTF-8. ``styled``: the output may hold
    SGR sequences (colours and styles, which only the program emits), removed first."""
    if styled:
        raw = SGR.sub(b"", raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"a byte that is not UTF-8 at {exc.start}: {raw[exc.start - 20:exc.end + 20]!r}"]
    return [repr(text[max(0, m.start() - 20):m.end() + 20]) for m in UNSAFE.finditer(text)]


def drive(plan_path: str) -> None:
    """Run the plan's calls one after the other on this process's own streams (a terminal),
    each after a marker line, and write their exit statuses to the plan's ``out`` file."""
    from zbtools.dispatch import process_streams
    from zbtools.entry import run

    plan = json.loads(Path(plan_path).read_text())
    kept: dict[str, str] = {}
    codes: list[int] = []
    for index, (label, words, env, keep) in enumerate(plan["calls"]):
        argv = list(words)
        for name, value in kept.items():
            argv = [word.replace("{" + name + "}", value) for word in argv]
        sys.stdout.write(MARK.format(index=index, label=label))
        sys.stdout.flush()
        code = run(argv, process_streams(), {**os.environ, **env})
        sys.stdout.flush()
        sys.stderr.flush()
        codes.append(code)
        if keep:  # a background start: the id of the one process running, for later calls
            from tests.conftest import run_inprocess

            listing = run_inprocess(["--format", "json", "list_processes", "--running-only"],
                                    env=env)
            kept[keep] = listing.result["processes"][0]["id"]
    sys.stdout.write(MARK.format(index=len(codes), label="end"))
    sys.stdout.flush()
    Path(plan["out"]).write_text(json.dumps(codes))


if __name__ == "__main__":
    drive(sys.argv[1])
