"""What both MCP sessions of ``zbtools mcp`` share: running a call and the shapes of answers.

``mcp_wire`` (the handshake-era session of JSON-RPC lines) and ``mcp_server`` (the SDK's
session) run calls and answer them alike through these; standard library only, so that the
wire session loads no SDK (docs/mcp.md#start-up-and-the-cost-of-a-call).

* ``Runner``: runs one call in-process and never raises; keeps the session's settings and
  workspaces between calls.
* ``tool_fields``, ``unknown_tool``, ``instructions``: the listing, the unknown-tool message
  and the instructions of ``initialize``.
* ``media_blocks``: the image, audio or resource block of a read's bytes.
* ``root_path``, ``usable_roots``: the client's roots as workspace directories.
* ``progress_token``, ``throttled``: a call's progress notifications, at most five a second.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from zbtools.contract import error_envelope
from zbtools.dispatch import debugging

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from zbtools.dialects import Dialect, DialectTool
    from zbtools.dispatch import Options

SERVER_NAME = "zbtools"


class Runner:
    """Runs one tool call of the dialect in-process; never raises (but for unknown tools).

    The session's settings are read with its first call and its workspaces kept open between
    calls, one for each call running at once, as ``zbtools batch`` keeps its one: a call pays
    for its tool, not for opening the workspace (docs/mcp.md#start-up-and-the-cost-of-a-call).
    """

    KEPT = 4  # idle workspaces kept for the current roots

    def __init__(self, dialect: Dialect, opts: Options, env: Mapping[str, str]) -> None:
        import threading

        self.dialect = dialect
        self.opts = opts
        self.env = env
        self.debug = debugging(opts, env)
        self.search_cache: Any = None  # made with the first call's limits
        self.settings: tuple[Any, Mapping[str, str], str | None] | None = None
        self.idle: tuple[tuple[str, ...], list[Any]] = ((), [])  # roots, their workspaces
        self.lock = threading.Lock()

    def context(self, roots: Sequence[str] | None) -> Any:
        """A call's context: a kept workspace of the same roots when there is one."""
        from zbtools.core.call.context import Context
        from zbtools.dispatch import make_context

        key = tuple(roots or ())
        workspace = None
        with self.lock:
            if self.settings is not None and self.idle[0] == key and self.idle[1]:
                workspace = self.idle[1].pop()
        if workspace is None or self.settings is None:
            ctx = make_context(self.opts, self.env, roots)
            if self.settings is None:
                self.settings = (ctx.limits, ctx.env, None)
            return ctx
        limits, env, state_root = self.settings
        return Context(workspace, limits=limits, env=env, state_root=state_root)

    def release(self, ctx: Any, roots: Sequence[str] | None) -> None:
        """Keep the workspace of a finished call for the next one. Its descriptors are closed
        all the same: the next call opens the root again, as a fresh workspace would."""
        ctx.workspace.close()
        key = tuple(roots or ())
        with self.lock:
            if self.settings is not None:
                self.settings = (*self.settings[:2], ctx.known_state_root)
            if self.idle[0] != key:
                self.idle = (key, [])
            if len(self.idle[1]) < self.KEPT:
                self.idle[1].append(ctx.workspace)

    def call(self, tool: DialectTool, arguments: dict[str, Any],
             roots: Sequence[str] | None = None, cancelled: Callable[[], bool] | None = None,
             progress: Callable[[float, float | None, str | None], None] | None = None
             ) -> tuple[bool, str, dict[str, Any], str]:
        """(is_error, text, structured content, workspace root) of one call.

        ``roots``: the client's roots (None: ``--workspace`` or the current directory);
        ``cancelled`` and ``progress`` reach the tool through its context."""
        from zbtools.dispatch import call_tool, failure, success
        from zbtools.textout import render_error, render_text

        ctx = None
        try:
            ctx = self.context(roots)
            ctx.cancel_check = cancelled
            ctx.progress_sink = progress
            if self.search_cache is None:
                from zbtools.core.search.cache import SearchCache

                self.search_cache = SearchCache(ctx.limits.search_cache_bytes,
                                                ctx.limits.search_watch_dirs)
            ctx.search_cache = self.search_cache
            outcome = call_tool(tool.spec, tool, arguments, ctx)
            envelope = success(tool.name, outcome, ctx)
            text = render_text(outcome.spec, tool.name, envelope, outcome.result, ctx)
            return False, text, outcome.payload, ctx.workspace.root
        except Exception as exc:  # the server outlives a bug in one tool
            envelope = error_envelope(tool.name, failure(
                exc, debug=self.debug, stderr=sys.stderr, hint="a bug in zbtools; restart the "
                "server with --debug for a traceback on stderr and report it"))
        finally:
            if ctx is not None:
                self.release(ctx, roots)
        return True, render_error(envelope["error"]), envelope, ""


def media_blocks(structured: dict[str, Any], root: str) -> list[dict[str, Any]]:
    """The blocks (as sent) that carry a read's bytes, as the reference filesystem server
    answers ``read_media_file``: an image read, or ``as_base64`` of a picture, as image
    content; ``as_base64`` of a sound as audio content; of any other file as an embedded
    resource (``file://`` URI, MIME type, the bytes as ``blob``), the spec's block for bytes
    where the reference server sends its own ``blob`` type. None for other results."""
    kind = structured.get("kind")
    data = structured.get("data")
    mime = str(structured.get("mime") or "")
    if kind not in ("image", "binary") or not isinstance(data, str) or not mime:
        return []
    if mime.startswith("image/"):
        return [{"type": "image", "data": data, "mimeType": mime}]
    if kind == "image":
        return []
    if mime.startswith("audio/"):
        return [{"type": "audio", "data": data, "mimeType": mime}]
    from pathlib import Path

    path = str(structured.get("path") or "")
    uri = Path(os.path.join(root, path) if root else os.path.abspath(path)).as_uri()
    return [{"type": "resource", "resource": {"uri": uri, "mimeType": mime, "blob": data}}]


def tool_fields(tool: DialectTool) -> dict[str, Any]:
    """One dialect tool as ``tools/list`` sends it."""
    from zbtools.dialects.definitions import output_schema, tool_annotations

    return {"name": tool.name, "description": tool.description,
            "inputSchema": tool.input_schema(), "outputSchema": output_schema(tool),
            # the same annotations as `zbtools schema --format mcp`
            "annotations": tool_annotations(tool)}


def unknown_tool(dialect: Dialect, name: str) -> str:
    """The message of the protocol error for a tool ``dialect`` does not offer."""
    from zbtools.contract import clip

    return (f"unknown tool {clip(name, 200)!r}; the {dialect.name} dialect has: "
            f"{', '.join(t.name for t in dialect.tools())}")


def instructions(dialect: Dialect, workspace_root: str) -> str:
    return (f"Coding-agent tools ({dialect.name} dialect). Paths are relative to the workspace "
            f"root: the client's first root when it offers roots, else {workspace_root}. "
            "Absolute paths must lie inside the workspace or another of the client's roots.")


ROOTS_WAIT = 10.0  # seconds a tool call waits for the client's answer to roots/list
CANCEL_WAIT = 30.0  # seconds a cancelled call may take to stop its work (kill a process tree)
PROGRESS_EVERY = 0.2  # seconds between two progress notifications of one call


def root_path(uri: str) -> str | None:
    """The local path a ``file://`` root URI names (None for any other URI)."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return path if path.startswith("/") else None


def usable_roots(uris: list[str]) -> list[str] | None:
    """The existing directories among ``uris`` (a warning on stderr for each other one); None
    when none is left."""
    paths: list[str] = []
    for uri in uris:
        path = root_path(uri)
        if path is None or not os.path.isdir(path):
            print(f"zbtools mcp: skipping the root {uri}: "
                  + ("not a file:// URI" if path is None else "not an existing directory"),
                  file=sys.stderr, flush=True)
            continue
        if path not in paths:
            paths.append(path)
    return paths or None


def progress_token(meta: Any) -> str | int | None:
    """The progress token of a request's ``_meta``, if the client sent one."""
    if not isinstance(meta, dict):
        return None
    token = meta.get("progressToken", meta.get("progress_token"))
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def throttled(send: Callable[[float, float | None, str | None], None]
              ) -> Callable[[float, float | None, str | None], None]:
    """A progress sink for a worker thread that passes to ``send`` at most one report per
    ``PROGRESS_EVERY`` seconds, each with a larger value than the last; ``send`` failing (a
    closed connection) never fails the call."""
    import threading
    import time

    state = {"at": 0.0, "done": float("-inf")}
    lock = threading.Lock()

    def report(done: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        with lock:
            if done <= state["done"] or now - state["at"] < PROGRESS_EVERY:
                return
            state["at"], state["done"] = now, done
        try:
            send(done, total, message)
        except Exception:  # a closed connection must not fail the call
            pass

    return report
