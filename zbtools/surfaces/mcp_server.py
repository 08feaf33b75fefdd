"""``zbtools mcp``: the tools of one dialect as a Model Context Protocol server on stdio.

``tools/list`` offers every tool of the selected dialect with its schemas and annotations;
``tools/call`` maps the dialect's arguments onto the canonical tool and runs it in-process
through ``zbtools.dispatch.call_tool``, as the command line does, answering with the text
rendering, the result as structured content and, for a read's bytes, an image, audio or
embedded resource block (``media_content``). A
documented failure is an MCP tool error carrying the error envelope; only an unknown tool name
is a protocol error. What clients see is in docs/mcp.md; the private protocol streams are
docs/internals/surfaces.md#mcp-streams, the threads, roots, progress and cancellation
docs/internals/surfaces.md#mcp-calls. The SDK (a default dependency) is imported here only.

A session that opens with ``initialize`` (every client today) is served by ``mcp_wire``
without the SDK; any other opening (the 2026-07-28 revision's ``server/discover``) by the SDK's
``Server`` built here (docs/mcp.md#start-up-and-the-cost-of-a-call). What both share is in
``mcp_calls``.

* ``serve``: the ``zbtools mcp`` command, which picks the session; ``build_server`` wires the
  handlers onto the SDK's low-level ``Server``; ``anyio_run`` runs it, ``Replay`` hands it the
  line already read, ``departed`` tells a client that left from a bug.
* ``tool_definition``, ``media_content``: the listing and the blocks as the SDK's models.
* ``ClientRoots``: the client's roots, asked for through the SDK's session.
* ``progress_reporter``: throttled ``notifications/progress`` through the SDK's session.
* ``claim_protocol_streams``: the protocol moved off descriptors 0 and 1.
* ``defer_package_init``, ``DeferredPackage``: the SDK's unused package ``__init__``s deferred.
"""

from __future__ import annotations

import io
import os
import sys
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from zbtools.contract import ToolError
from zbtools.surfaces.mcp_calls import (
    CANCEL_WAIT,
    ROOTS_WAIT,
    SERVER_NAME,
    Runner,
    instructions,
    media_blocks,
    progress_token,
    throttled,
    tool_fields,
    unknown_tool,
    usable_roots,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from mcp import types as mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from zbtools.dialects import Dialect, DialectTool
    from zbtools.dispatch import Options, Streams

def media_content(structured: dict[str, Any], root: str) -> list[mcp_types.ContentBlock]:
    """``media_blocks`` as the SDK's content models."""
    from mcp import types

    kinds: dict[str, Any] = {"image": types.ImageContent, "audio": types.AudioContent,
                             "resource": types.EmbeddedResource}
    return [kinds[block["type"]].model_validate(block) for block in media_blocks(structured,
                                                                                 root)]


def tool_definition(tool: DialectTool) -> mcp_types.Tool:
    from mcp import types

    return types.Tool.model_validate(tool_fields(tool))


class ClientRoots:
    """The client's roots, listed after initialization and again on each
    ``notifications/roots/list_changed``.

    ``paths`` is None while the client offers none (the workspace is then ``--workspace`` or
    the current directory), else the existing directories among its ``file://`` roots, in
    its order. A tool call waits (at most ``ROOTS_WAIT``) for a listing in flight.
    """

    def __init__(self) -> None:
        self.paths: list[str] | None = None
        self.asked = 0  # listings requested
        self.answered = 0  # the newest listing applied (or given up)

    async def refresh(self, session: Any) -> None:
        import anyio
        from mcp import types

        self.asked += 1
        ticket = self.asked
        paths: list[str] | None = self.paths
        try:
            with anyio.fail_after(ROOTS_WAIT):
                listing = await session.send_request(types.ListRootsRequest(),
                                                     types.ListRootsResult)
            paths = self.usable([str(root.uri) for root in listing.roots])
        except Exception as exc:  # a client that cannot answer keeps the roots it had
            print(f"zbtools mcp: roots/list failed ({type(exc).__name__}: {exc}); keeping "
                  f"the workspace {self.describe()}", file=sys.stderr, flush=True)
        finally:
            if ticket > self.answered:  # an older listing never overwrites a newer one
                self.answered = ticket
                self.paths = paths

    @staticmethod
    def usable(uris: list[str]) -> list[str] | None:
        return usable_roots(uris)

    def describe(self) -> str:
        return "given by --workspace" if self.paths is None else ", ".join(self.paths)

    async def current(self) -> list[str] | None:
        """The roots a call starts with: once the listings in flight are answered (at most
        ``ROOTS_WAIT`` seconds)."""
        import anyio

        with anyio.move_on_after(ROOTS_WAIT):
            while self.answered < self.asked:
                await anyio.sleep(0.01)
        return self.paths


def progress_reporter(session: Any) -> Callable[[float, float | None, str | None], None]:
    """A progress sink for a worker thread: notifications through the event loop."""
    import anyio.from_thread

    def send(done: float, total: float | None, message: str | None) -> None:
        anyio.from_thread.run(session.report_progress, done, total, message)

    return throttled(send)


def build_server(dialect: Dialect, opts: Options, env: Mapping[str, str],
                 workspace_root: str) -> Server[Any]:
    """The low-level ``Server`` for ``dialect`` (also what in-memory tests connect to)."""
    import threading

    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from zbtools import __version__

    runner = Runner(dialect, opts, env)
    tools = dialect.tools()
    definitions: list[types.Tool] = []
    exclusive = anyio.Lock()
    roots = ClientRoots()

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if not definitions:
            definitions.extend(tool_definition(t) for t in tools)
        return types.ListToolsResult(tools=definitions)

    async def run(ctx: ServerRequestContext[Any], tool: DialectTool,
                  arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any], str]:
        paths = await roots.current()
        cancel = threading.Event()
        finished = threading.Event()
        progress = progress_reporter(ctx.session) \
            if progress_token(ctx.meta) is not None else None

        def work() -> tuple[bool, str, dict[str, Any], str]:
            try:
                return runner.call(tool, arguments, paths, cancel.is_set, progress)
            finally:
                finished.set()

        try:
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled: the tool sees it (a command's tree is killed), and the
            # call ends once its work has stopped, so nothing it started is left running.
            cancel.set()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT):
                while not finished.is_set():
                    await anyio.sleep(0.02)
            raise

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        # a client is offered the dialect's own tools, and may call only those: a canonical
        # name outside them is unknown here (docs/internals/surfaces.md#dialect-layer)
        tool = dialect.lookup(params.name, own_only=True)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, unknown_tool(dialect, params.name))
        arguments = dict(params.arguments or {})
        if tool.parallel_safe:
            outcome = await run(ctx, tool, arguments)
        else:
            async with exclusive:
                outcome = await run(ctx, tool, arguments)
        is_error, text, structured, root = outcome
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        if not is_error:
            # the bytes themselves, beside the text and the JSON result (structured content)
            content.extend(media_content(structured, root))
        return types.CallToolResult(content=content, structured_content=structured,
                                    is_error=is_error)

    async def initialized(ctx: ServerRequestContext[Any],
                          params: types.NotificationParams) -> None:
        capabilities = ctx.session.client_capabilities
        if capabilities is not None and capabilities.roots is not None:
            await roots.refresh(ctx.session)

    async def roots_changed(ctx: ServerRequestContext[Any],
                            params: types.NotificationParams) -> None:
        await roots.refresh(ctx.session)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=instructions(dialect, workspace_root),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Registered directly: the constructor's on_roots_list_changed warns on every start.
    server.add_notification_handler("notifications/initialized", types.NotificationParams,
                                     initialized)
    server.add_notification_handler("notifications/roots/list_changed",
                                    types.NotificationParams, roots_changed)
    return server


def claim_protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """Move the protocol off descriptors 0 and 1; return private (stdin, stdout) for it.

    The private descriptors are close-on-exec; descriptor 0 becomes ``/dev/null`` and 1 a copy
    of stderr, and ``sys.stdin``/``sys.stdout`` follow, so stray output cannot corrupt frames.
    """
    import fcntl

    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return os.fdopen(wire_in, "rb", buffering=0), os.fdopen(wire_out, "wb")


# The SDK's package ``__init__`` modules import what a stdio server never uses: ``mcp`` its
# client (and, through it, every transport and httpx), ``mcp.server`` the high-level
# MCPServer. About a fifth of the start-up; see defer_package_init.
DEFERRED_PACKAGES = ("mcp", "mcp.server")


class DeferredPackage(ModuleType):
    """A package whose ``__init__`` has not run yet: its submodules import as usual, and the
    first use of any other name it would define runs the ``__init__`` (then the module is an
    ordinary module again), so nothing that needs the package's own names ever misses one."""

    def __getattr__(self, name: str) -> Any:
        import importlib
        import importlib.util

        submodule = f"{self.__name__}.{name}"
        if importlib.util.find_spec(submodule) is not None:
            return importlib.import_module(submodule)
        self.__class__ = ModuleType  # type: ignore[assignment]
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def defer_package_init(name: str) -> None:
    """Register the package ``name`` without running its ``__init__`` (when not imported yet).

    The SDK itself is untouched: its modules are imported from where pip put them, and the
    package's own names are there on first use (``DeferredPackage``)."""
    if name in sys.modules:
        return
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__class__ = DeferredPackage
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def serve(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str]) -> int:
    """``zbtools mcp``: serve until the client closes stdin. Returns the exit status (0 also
    when the client leaves mid-call: docs/mcp.md#start-up-and-the-cost-of-a-call)."""
    if rest:
        raise ToolError("usage_error", f"`zbtools mcp` takes no arguments, got {rest[0]!r}",
                        hint="usage: zbtools mcp [--workspace DIR] [--dialect NAME]")
    import importlib.util

    for module in ("anyio", "mcp"):  # probe the SDK before touching any stream, unimported
        if importlib.util.find_spec(module) is None:
            from zbtools.core.call.optional import missing

            raise missing(module, "`zbtools mcp`", ImportError(f"No module named {module!r}"))
    from zbtools.dispatch import make_context, selected_dialect

    dialect = selected_dialect(opts, env)
    ctx = make_context(opts, env)  # fail now, as a JSON error, if the workspace is unusable
    root = ctx.workspace.root
    ctx.workspace.close()
    if streams.stdout is not sys.stdout or streams.stdin is not getattr(sys.stdin, "buffer",
                                                                         None):
        raise ToolError("usage_error", "`zbtools mcp` serves on the process's own stdin and "
                        "stdout", hint="start it as a subprocess: zbtools mcp")
    import io

    wire_in, wire_out = claim_protocol_streams()
    reader = io.BufferedReader(wire_in, 1 << 16)  # type: ignore[type-var]
    first = reader.readline()
    if not first:
        return 0
    from zbtools.surfaces.mcp_wire import WireSession, handshake_era

    if handshake_era(first):
        WireSession(dialect, opts, env, root).serve(reader, wire_out, first)
        return 0
    # any other opening (the 2026-07-28 revision's server/discover...) is the SDK's to answer
    for package in DEFERRED_PACKAGES:
        defer_package_init(package)
    anyio_run(build_server(dialect, opts, env, root), io.BufferedReader(Replay(first, reader)),
              wire_out)
    return 0


class Replay(io.RawIOBase):
    """A stream that gives ``head`` (bytes already read) and then what ``rest`` gives."""

    def __init__(self, head: bytes, rest: io.BufferedReader[Any]) -> None:
        super().__init__()
        self.head = head
        self.rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.head:
            size = min(len(view), len(self.head))
            view[:size] = self.head[:size]
            self.head = self.head[size:]
            return size
        data = self.rest.read1(len(view))
        view[:len(data)] = data
        return len(data)


def departed(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception of a group) says the client closed its end."""
    if isinstance(exc, BaseExceptionGroup):
        return all(departed(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError | ConnectionResetError) or (
        type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError"))


def anyio_run(server: Server[Any], wire_in: IO[bytes], wire_out: BinaryIO) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        stdin = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8",
                                                  write_through=True))
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    except BaseException as exc:  # a client that left mid-call ends the session, quietly
        if not departed(exc):
            raise
    finally:
        try:  # what a departed client left in the buffer must not fail the exit
            wire_out.flush()
        except (OSError, ValueError):  # ValueError: closed with the text layer over it
            pass
