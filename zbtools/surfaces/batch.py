"""``zbtools batch``: many calls in one process, JSON Lines in and out.

Each stdin line is one request (``{"id", "tool", "args"}``, or ``name``/``arguments`` as OpenAI
sends them); each gets one result line, in order: the usual envelope with ``"id"`` first, plus
``"text"`` under ``--format text``. A malformed line yields an error line and the batch goes on;
end of input ends it with status 0. One workspace and configuration serve every call, each with
a fresh context, through ``zbtools.dispatch.call_tool``. While more lines wait on stdin, the
results of edit calls are held back so that consecutive edits share their fsyncs and a file is
written once (docs/internals/surfaces.md#batch-groups); docs/batch.md says what users may rely
on and what a crash can lose.

* ``batch_command``: the ``zbtools batch`` command; ``Batch`` runs the requests of one stdin
  (``Batch.run``: one call by tool name and arguments, as ``zbtools.api`` makes them).
* ``parse_line``: one line as a request object, or the error that names its line.
* ``STAGING_TOOLS``, ``GROUP_MAX_CALLS``, ``GROUP_MAX_SECONDS``: what a group holds, and how long.
* ``Held``: a held result, reported with its file's error when the group could not write it.
* ``open_sync_group``, ``close_sync_group``: the group of the current run of edits.
"""

from __future__ import annotations

import time

from zbtools.contract import ToolError, error_envelope
from zbtools.core.call.context import Context
from zbtools.core.files.staging import sync_group
from zbtools.dispatch import (
    call_tool,
    debugging,
    failure,
    make_context,
    parse_request,
    selected_dialect,
    success,
    too_large,
    uses_dialect,
    write,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.core.call.config import Limits
    from zbtools.core.files.staging import SyncGroup
    from zbtools.core.files.workspace import Workspace
    from zbtools.dialects import Dialect, DialectTool
    from zbtools.dispatch import Options, Streams


REQUEST_KEYS = {"id", "tool", "name", "args", "arguments", "input"}
# Edits that go through cycle.edit_file_text: in a group their writes may be staged
# (staging.SyncGroup), so a run of edits of one file is written once.
STAGING_TOOLS = frozenset({"apply_edit", "edit_file", "insert_text"})


class Batch:
    """One workspace, one configuration, many calls."""

    def __init__(self, workspace: Workspace, limits: Limits, env: Mapping[str, str],
                 dialect: Dialect | None, state_root: str | None, debug: bool = False,
                 text: bool = False) -> None:
        self.workspace = workspace
        self.text = text  # add the --format text rendering to each envelope as "text"
        self.limits = limits
        self.env = env
        self.dialect = dialect
        self.state_root = state_root
        self.debug = debug
        self.tools: dict[str, DialectTool | None] = {}
        # No dialect chosen: the canonical tools run as a lone command-line call runs them,
        # without the dialect layer; the zblade dialect only finds them by name or alias
        # (docs/internals/surfaces.md#python-api)
        self.canonical = dialect is None
        from zbtools.core.search.cache import SearchCache

        # what this session's walks and searches learnt, re-checked on every use
        self.search_cache = SearchCache(limits.search_cache_bytes, limits.search_watch_dirs)

    def lookup(self, name: str) -> DialectTool | None:
        if name not in self.tools:
            if self.dialect is None:
                from zbtools.dialects import get_dialect

                self.dialect = get_dialect("zblade")
            self.tools[name] = self.dialect.lookup(name)
        return self.tools[name]

    def call(self, line: bytes, lineno: int | None = None) -> tuple[Any, dict[str, Any]]:
        """One request line (``lineno``, 1-based, named in a parse error) -> (its id, the
        result envelope)."""
        request_id: Any = None
        try:
            request = parse_line(line, lineno)
            if not _finite(request.get("id")):
                raise ToolError("invalid_json", "the request id holds a number too large for "
                                "a double (it would come back as Infinity, which is not JSON)",
                                hint="use a string or a smaller number as the id; results "
                                "come back in request order")
            request_id = request.get("id")
            tool_name, args = self._unpack(request)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # one bad line never ends the batch
            import sys

            return request_id, self.failed(None, failure(exc, debug=self.debug,
                                                         stderr=sys.stderr))
        return request_id, self.run(tool_name, args)

    def run(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        """One call of the tool ``tool_name`` (a name of the dialect) -> its envelope; never
        raises but ``KeyboardInterrupt`` (the Python API's calls come in here too)."""
        try:
            tool = self.lookup(tool_name)
            if tool is None:
                raise self.unknown(tool_name)
            tool_name = tool.name
            group = sync_group()
            if group is not None:
                if tool.spec.name in STAGING_TOOLS:
                    group.staging = True
                elif tool.spec.category == "edit":
                    group.flush()  # undo reads the journal and the files as written
                else:
                    group.commit()  # other tools never see (or spread) undurable changes
            ctx = Context(self.workspace, limits=self.limits, env=self.env,
                          state_root=self.state_root)
            ctx.search_cache = self.search_cache
            try:
                outcome = call_tool(tool.spec, None if self.canonical else tool, args, ctx)
            finally:
                if group is not None:
                    group.staging = False
            self.state_root = ctx.known_state_root
            envelope = success(tool_name, outcome, ctx)
            if self.text:
                from zbtools.textout import render_text

                envelope["text"] = render_text(outcome.spec, tool_name, envelope,
                                               outcome.result, ctx)
            return envelope
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # one bad call never ends the batch
            import sys

            return self.failed(tool_name, failure(exc, debug=self.debug, stderr=sys.stderr))

    def unknown(self, tool_name: str) -> ToolError:
        import difflib

        listed = [t.name for t in self.dialect.tools()] if self.dialect else []
        close = difflib.get_close_matches(tool_name, listed, n=3, cutoff=0.6)
        return ToolError("unknown_tool", f"no tool named {tool_name!r}",
                         hint=(f"did you mean {', '.join(close)}? " if close else "")
                         + "`zbtools schema` (with the same --dialect) lists the tools",
                         details={"tools": listed})

    def close(self) -> None:
        """Let go of the session's search cache (its change monitor) and workspace handle."""
        self.search_cache.close()
        self.workspace.close()

    def failed(self, tool_name: str | None, error: ToolError) -> dict[str, Any]:
        envelope = error_envelope(tool_name, error)
        if self.text:
            from zbtools.textout import render_error

            envelope["text"] = render_error(envelope["error"])
        return envelope

    @staticmethod
    def _unpack(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        unknown = sorted(set(request) - REQUEST_KEYS)
        problems: list[dict[str, Any]] = [{"problem": "unknown_argument", "argument": k,
                     "message": f"unknown request key {k}", "accepted": sorted(REQUEST_KEYS)}
                    for k in unknown]
        names = [k for k in ("tool", "name") if k in request]
        tool = request.get(names[0]) if names else None
        if len(names) > 1:
            problems.append({"problem": "conflicting_aliases", "argument": "tool",
                             "message": "tool and name are two names for the same key"})
        elif type(tool) is not str or not tool:
            problems.append({"problem": "missing_argument", "argument": "tool",
                             "message": "tool must be a tool name (a non-empty string)"})
        keys = [k for k in ("args", "arguments", "input") if k in request]
        args: Any = request[keys[0]] if keys else {}
        if len(keys) > 1:
            problems.append({"problem": "conflicting_aliases", "argument": "args",
                             "message": f"{' and '.join(keys)} are names for the same key"})
        if isinstance(args, str):  # OpenAI sends function arguments as a JSON string
            args = parse_request(args.encode("utf-8", "surrogateescape"), keys[0])
        elif args is None:
            args = {}
        elif type(args) is not dict:
            problems.append({"problem": "wrong_type", "argument": "args",
                             "message": "args must be a JSON object"})
        if problems:
            raise ToolError("invalid_arguments", "malformed request: " + "; ".join(
                p["message"] for p in problems), hint='each line is {"id": ..., "tool": '
                '"read_file", "args": {...}}', details={"problems": problems})
        assert isinstance(tool, str)
        return tool, args


def _finite(value: Any) -> bool:
    """Whether ``value`` (a decoded JSON value) holds no infinite or NaN number."""
    if type(value) is float:
        return value - value == 0.0
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def _result_line(request_id: Any, envelope: dict[str, Any]) -> str:
    from zbtools.core.call.fastjson import dumps_ascii

    return dumps_ascii({"id": request_id, **envelope}) + "\n"


def _drain_line(stdin: Any) -> None:
    while True:
        chunk = stdin.readline(1 << 16)
        if not chunk or chunk.endswith(b"\n"):
            return


LINE_HINT = ('each line is one JSON object: {"id": 1, "tool": "read_file", "args": {"path": '
             '"README.md"}}; the other lines still run')


def parse_line(line: bytes, lineno: int | None) -> dict[str, Any]:
    """A request line as an object; a malformed one says which line and how a line looks."""
    where = "the request line" if lineno is None else f"request line {lineno}"
    try:
        return parse_request(line, where)
    except ToolError as exc:
        details = dict(exc.details or {})
        if lineno is not None:
            details["line"] = lineno
        raise ToolError(exc.code, exc.message, hint=LINE_HINT, details=details) from None


def batch_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                  fmt: str) -> int:
    if rest:
        raise ToolError("usage_error", f"`zbtools batch` takes no arguments, got {rest[0]!r}",
                        hint='send JSON Lines on stdin: {"id": 1, "tool": "read_file", '
                        '"args": {"path": "README.md"}}')
    base = make_context(opts, env)
    dialect = selected_dialect(opts, env) if uses_dialect(opts, env) else None
    batch = Batch(base.workspace, base.limits, base.env, dialect, None,
                  debug=debugging(opts, env), text=fmt == "text")
    limit = base.limits.max_request_bytes
    stdin = streams.stdin
    lineno = 0
    held = Held(batch)  # results of the open sync group, not written yet
    since = 0.0
    group = open_sync_group()
    try:
        while stdin is not None:
            line = stdin.readline(limit + 1)
            if not line:
                break
            lineno += 1
            if len(line) > limit and not line.endswith(b"\n"):
                _drain_line(stdin)
                oversized = too_large("the request line", limit)
                oversized.details["line"] = lineno
                held.add(lineno, None, None, batch.failed(None, oversized))
            elif line.strip():
                group.call = lineno
                request_id, envelope = batch.call(line, lineno)
                held.add(lineno, request_id, envelope.get("tool"), envelope)
            else:
                continue
            if len(held.lines) == 1:
                since = time.monotonic()
            if len(held.lines) >= GROUP_MAX_CALLS or not _more_input(stdin) or \
                    time.monotonic() - since > GROUP_MAX_SECONDS:
                group.commit()  # durable first, then reported
                write(streams, held.take(group))
    finally:
        group.commit()
        if held.lines:
            write(streams, held.take(group))
        close_sync_group()
        batch.close()
    return 0


GROUP_MAX_CALLS = 128
GROUP_MAX_SECONDS = 0.05


class Held:
    """The result lines of the open sync group, in order, by call token (the request's line
    number): a call whose staged file could not be written when the group flushed is
    reported with that error instead of its result (``SyncGroup.failed``).

    The undo record of a staged change is written at the flush, after its call returned: a
    warning it gives (the record could not be written) lands in the call's warnings list,
    which its envelope shares, so such an envelope is serialized again (with ``--format
    text``, the warning added to its rendering too)."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        # (token, id, tool, line, envelope, how many warnings it had when serialized)
        self.lines: list[tuple[int, Any, str | None, str, dict[str, Any], int]] = []

    def add(self, token: int, request_id: Any, tool: str | None,
            envelope: dict[str, Any]) -> None:
        self.lines.append((token, request_id, tool, _result_line(request_id, envelope),
                           envelope, len(envelope.get("warnings") or ())))

    def take(self, group: SyncGroup) -> str:
        """Every held line (failed calls rewritten), the group's failures forgotten."""
        out = []
        for token, request_id, tool, line, envelope, seen in self.lines:
            error = group.failed.get(token)
            if error is not None:
                out.append(_result_line(request_id, self.batch.failed(tool, error)))
            elif len(envelope.get("warnings") or ()) > seen:
                if "text" in envelope:
                    envelope["text"] += "".join(f"warning: {w}\n"
                                                for w in envelope["warnings"][seen:])
                out.append(_result_line(request_id, envelope))
            else:
                out.append(line)
        self.lines.clear()
        group.failed.clear()
        return "".join(out)


def open_sync_group() -> SyncGroup:
    from zbtools.core.files.staging import open_sync_group as open_group

    return open_group()


def close_sync_group() -> None:
    from zbtools.core.files.staging import close_sync_group as close_group

    close_group()


def _more_input(stdin: Any) -> bool:
    """Whether more input is already waiting (then results may wait for the group's commit).

    An in-memory stream holds all of it already; a pipe or file is asked with ``select``
    (never blocking). Lines already read ahead into the stream's buffer count as none: the
    group then just ends sooner."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return True
    import select

    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False

