"""The handshake-era MCP session of ``zbtools mcp`` as plain JSON-RPC lines, without the SDK.

Clients today open a session with ``initialize``; for those, ``zbtools mcp`` answers from this
module: the calls run through the same ``Runner`` as the SDK's server
(``zbtools.surfaces.mcp_calls``), and the answers are the SDK's, field for field
(tests/surfaces/ drive both through the SDK's client). The thread that reads a call runs it
and answers it, and reads on after; a call that runs longer than ``WATCH_DELAY`` has its
reading taken over by a watching thread, so pings, cancellations and further calls are read
while it runs, and a quick call waits for no other thread to wake. It loads nothing but the
standard library and the dispatcher before ``initialize`` is answered, and costs a call no
validation of models: see docs/mcp.md#start-up-and-the-cost-of-a-call. A session that opens
any other way (the 2026-07-28 revision's ``server/discover``) goes to the SDK, with the line
already read.

* ``handshake_era``: whether a first line opens a session this module serves.
* ``WireSession``: one session: ``serve`` reads until the client closes its end.
* ``Wire``: the writing end; a closed client makes it quiet, never an error.
* ``WireRoots``: the client's roots, asked for with ``roots/list`` as ``ClientRoots`` does.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any, BinaryIO

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

    from zbtools.dialects import Dialect, DialectTool
    from zbtools.dispatch import Options

# The SDK's mcp_types.version, restated: importing it runs the SDK's type package (a test
# checks they agree).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
CONNECTION_CLOSED = -32000  # what the SDK answers a call still running when its client leaves

# Handing the reading to another thread at every call cost a quick call about a sixth of its
# time (the other thread woken, the GIL passed back and forth); a watching thread takes the
# reading over only once a call has run this long, looking at most this often.
WATCH_DELAY = 0.005  # seconds
DOZE_AFTER = 0.5  # seconds without a new call before the watch sleeps until the next one

# One encoder for every message (json.dumps with options makes one a call); the messages are
# trees of fresh dicts and lists, never circular.
ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def handshake_era(line: bytes) -> bool:
    """Whether ``line`` is an ``initialize`` request of a handshake-era revision (or of one
    this server does not know, which the handshake answers with its newest)."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != "initialize" \
            or "id" not in message:
        return False
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return isinstance(version, str) and version not in MODERN_VERSIONS


def valid_id(request_id: Any) -> bool:
    """Whether ``request_id`` may name a request: a string, an integer or absent (None)."""
    return request_id is None or (isinstance(request_id, str | int)
                                  and not isinstance(request_id, bool))


class Wire:
    """Writes one JSON-RPC message a line, whole, from any thread. Once the client has closed
    its end nothing more is written, quietly: a departed client is no error of the server."""

    def __init__(self, out: BinaryIO) -> None:
        self.fd = out.fileno()
        self.lock = threading.Lock()
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        text = ENCODE(message)
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:
            # a name or a text with undecodable bytes (kept as lone surrogates) is written as
            # \udcff escapes, as batch writes it: the line stays valid UTF-8 and valid JSON
            data = (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")
        with self.lock:
            if self.closed:
                return
            view = memoryview(data)
            try:
                while view:  # a pipe may take a long line in pieces
                    view = view[os.write(self.fd, view):]
            except OSError:  # EPIPE, EBADF...: the client is gone
                self.closed = True


class WireRoots:
    """The client's roots as ``ClientRoots`` keeps them, for threads: a listing is asked for
    with ``roots/list``, and a call waits (at most ``ROOTS_WAIT``) for the listings in flight."""

    def __init__(self, ask: Callable[[Callable[[Any, Any], None]], None],
                 wait: float) -> None:
        self.ask = ask
        self.wait = wait
        self.paths: list[str] | None = None
        self.asked = 0
        self.answered = 0
        self.cond = threading.Condition()

    def refresh(self) -> None:
        with self.cond:
            self.asked += 1
            ticket = self.asked
        self.ask(lambda result, error: self.answer(ticket, result, error))

    def answer(self, ticket: int, result: Any, error: Any) -> None:
        paths = self.paths
        if error is None and isinstance(result, dict) and isinstance(result.get("roots"), list):
            paths = usable_roots([str(root.get("uri")) for root in result["roots"]
                                  if isinstance(root, dict)])
        else:
            reason = error.get("message") if isinstance(error, dict) else "a malformed answer"
            self.warn(f"MCPError: {reason}")
        with self.cond:
            if ticket > self.answered:  # an older listing never overwrites a newer one
                self.answered = ticket
                self.paths = paths
            self.cond.notify_all()

    def warn(self, reason: str) -> None:
        described = "given by --workspace" if self.paths is None else ", ".join(self.paths)
        print(f"zbtools mcp: roots/list failed ({reason}); keeping the workspace {described}",
              file=sys.stderr, flush=True)

    def current(self) -> list[str] | None:
        if self.answered >= self.asked:  # nothing in flight: no lock (the usual case)
            return self.paths
        with self.cond:
            if not self.cond.wait_for(lambda: self.answered >= self.asked, self.wait):
                self.answered = self.asked  # given up: a late answer changes nothing
                self.warn("TimeoutError: no answer")
            return self.paths


class Flag:
    """A flag one thread sets and another reads. Not a ``threading.Event``: its lock, made
    for every call, fragmented the heap so that the server grew by about 95 bytes a call."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False

    def set(self) -> None:
        self.on = True

    def is_set(self) -> bool:
        return self.on


class Call:
    """One ``tools/call`` in flight: cancelling it sets ``cancel``; ``silent``: no answer."""

    __slots__ = ("arguments", "cancel", "id", "seq", "silent", "token", "tool")

    def __init__(self, request_id: Any, tool: DialectTool, arguments: dict[str, Any],
                 token: str | int | None) -> None:
        self.id = request_id
        self.tool = tool
        self.arguments = arguments
        self.token = token
        self.cancel = Flag()
        self.silent = False  # cancelled by the client: no response
        self.seq = 0  # the place of a call that runs alone among those (1, 2, ...)


class WireSession:
    """One handshake-era session of ``dialect``'s tools on a pair of protocol streams."""

    def __init__(self, dialect: Dialect, opts: Options, env: Mapping[str, str],
                 workspace_root: str) -> None:
        from zbtools import __version__

        self.dialect = dialect
        self.opts = opts
        self.env = env
        self.info = {"name": SERVER_NAME, "version": __version__}
        self.instructions = instructions(dialect, workspace_root)
        self.runner = Runner(dialect, opts, env)
        self.tools_listed: list[dict[str, Any]] = []
        self.client_roots = False
        self.inflight: dict[Any, Call] = {}
        self.inflight_lock = threading.Condition()
        self.pending: dict[Any, Callable[[Any, Any], None]] = {}  # our requests to the client
        self.next_id = 0
        self.wire: Wire | None = None
        self.reader: IO[bytes] | None = None
        self.reading = threading.Lock()  # held by the thread that reads
        self.turns = threading.Lock()  # guards the counts below
        self.readers = 0  # the thread that reads, if one does (0 or 1)
        self.quiet_since = 0.0  # when the last reader left with a call
        self.watching = False  # a thread watches (``watch``)
        self.dozing = False  # the watch sleeps on ``doze`` until a call or the end
        self.doze = threading.Lock()
        self.doze.acquire()
        self.gone = threading.Event()  # set once the client has closed its end
        self.ended = False  # the client closed its end
        self.serial = threading.Condition()  # the calls that run alone, in call order
        self.serial_given = 0
        self.serial_done = 0
        self.roots = WireRoots(self.ask_roots, ROOTS_WAIT)

    # ------------------------------------------------------------------------------ the loop

    def serve(self, reader: IO[bytes], out: BinaryIO, first: bytes) -> None:
        """Answer ``first`` and every later line until the client closes its end; then stop
        the calls still running (they are answered as the SDK answers them) and return."""
        self.wire = Wire(out)
        self.reader = reader
        self.readers = 1  # this thread
        call = self.receive(first)  # initialize (handshake_era): never a call, but if it were
        if call is not None:
            self.take(call)
            self.run(call)
        if call is None or self.read_on():
            self.follow(reading=True)
        self.gone.wait()
        with self.inflight_lock:
            self.inflight_lock.wait_for(lambda: not self.inflight, CANCEL_WAIT)

    def follow(self, reading: bool) -> None:
        """Read (``reading``: counted as reading already) or first watch, run each call read
        here and read on after it (``read_on``); return once the client has closed its end or
        this thread is not needed."""
        if not reading and not self.watch():
            return
        while (call := self.read_call()) is not None:
            self.run(call)
            if not self.read_on():
                return

    def read_call(self) -> Call | None:
        """Read and answer what needs no tool at once, up to a call (None: the client left)."""
        assert self.reader is not None and self.wire is not None
        with self.reading:
            call = None
            while call is None and not self.ended:
                line = self.reader.readline()
                if not line or self.wire.closed:
                    self.end()
                else:
                    call = self.receive(line)
                    line = b""  # a long request is not kept while its call runs
            if call is None:
                with self.turns:
                    self.readers -= 1
            else:
                self.take(call)
            return call

    def read_on(self) -> bool:
        """After a call: read again (True) when no other thread reads; else watch, unless a
        thread watches already (False: this one stops)."""
        with self.turns:
            if self.readers == 0:
                self.readers += 1
                return True
            if self.watching:
                return False
            self.watching = True
        return self.watch()

    def take(self, call: Call) -> None:
        """This thread runs ``call``: it stops reading, and a watch is started if none is."""
        with self.turns:
            self.readers -= 1
            self.quiet_since = time.monotonic()
            if self.dozing:
                self.dozing = False
                self.doze.release()
            if self.watching:
                return
            self.watching = True
        threading.Thread(target=self.follow, args=(False,), name="zbtools-mcp",
                         daemon=True).start()

    def watch(self) -> bool:
        """Wait while another thread reads or a call has run for less than ``WATCH_DELAY``;
        then read in its place (True), or stop once the client is gone (False). Sleeps
        without waking once no call came for ``DOZE_AFTER``."""
        while True:
            with self.turns:
                if self.ended:
                    self.watching = False
                    return False
                waited = time.monotonic() - self.quiet_since
                if self.readers == 0 and waited >= WATCH_DELAY:
                    self.watching = False
                    self.readers += 1
                    return True
                self.dozing = self.readers > 0 and waited >= DOZE_AFTER
                dozing = self.dozing
                pause = WATCH_DELAY if self.readers else WATCH_DELAY - waited
            if dozing:
                self.doze.acquire()
            else:
                time.sleep(pause)

    def end(self) -> None:
        """The client is gone: every call still running or waiting is stopped."""
        self.ended = True
        self.gone.set()
        with self.turns:
            if self.dozing:
                self.dozing = False
                self.doze.release()
        with self.inflight_lock:
            for call in self.inflight.values():
                call.cancel.set()

    def receive(self, line: bytes) -> Call | None:
        """Handle one line; the call it asks for, to run in this thread, if any."""
        try:
            message = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            if line.strip():
                print(f"zbtools mcp: skipping a line that is not JSON: {line[:80]!r}",
                      file=sys.stderr, flush=True)
            return None
        request_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not valid_id(request_id):
            self.error(None, INVALID_REQUEST, "Invalid request")
            return None
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if not isinstance(method, str):
            self.response(message)
        elif method == "tools/call" and "id" in message:
            return self.call_tool(message["id"], params)
        elif "id" in message:
            self.request(message["id"], method, params)
        else:
            self.notification(method, params)
        return None

    def send(self, message: dict[str, Any]) -> None:
        assert self.wire is not None
        self.wire.send(message)

    def result(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    # ----------------------------------------------------------------------------- requests

    def request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "ping":
            self.result(request_id, {})
        elif method == "tools/list":
            self.result(request_id, {"tools": self.list_tools()})
        elif method == "initialize":
            self.initialize(request_id, params)
        else:
            self.error(request_id, METHOD_NOT_FOUND, "Method not found", method)

    def initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        asked = params.get("protocolVersion")
        capabilities = params.get("capabilities")
        self.client_roots = isinstance(capabilities, dict) \
            and isinstance(capabilities.get("roots"), dict)
        self.result(request_id, {
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": self.instructions,
            "protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
            "serverInfo": self.info})

    def list_tools(self) -> list[dict[str, Any]]:
        if not self.tools_listed:
            self.tools_listed.extend(tool_fields(t) for t in self.dialect.tools())
        return self.tools_listed

    def call_tool(self, request_id: Any, params: dict[str, Any]) -> Call | None:
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict | None):
            self.error(request_id, INVALID_PARAMS, "Invalid request parameters")
            return None
        # a client is offered the dialect's own tools, and may call only those
        # (docs/internals/surfaces.md#dialect-layer)
        tool = self.dialect.lookup(name, own_only=True)
        if tool is None:
            self.error(request_id, INVALID_PARAMS, unknown_tool(self.dialect, name))
            return None
        call = Call(request_id, tool, dict(arguments or {}), progress_token(params.get("_meta")))
        if not tool.parallel_safe:
            self.serial_given += 1  # only the reading thread gives places
            call.seq = self.serial_given
        with self.inflight_lock:
            self.inflight[request_id] = call
        return call

    def run(self, call: Call) -> None:
        """Run ``call`` (once its turn came, for a call that runs alone) and answer it, unless
        the client cancelled it."""
        try:
            if call.seq:
                with self.serial:
                    self.serial.wait_for(lambda: self.serial_done == call.seq - 1)
            self.answer(call)
        finally:
            if call.seq:
                with self.serial:
                    self.serial_done = call.seq
                    self.serial.notify_all()
            with self.inflight_lock:
                self.inflight.pop(call.id, None)
                self.inflight_lock.notify_all()

    def answer(self, call: Call) -> None:
        if call.cancel.is_set():
            if not call.silent:
                self.error(call.id, CONNECTION_CLOSED, "Connection closed")
            return
        paths = self.roots.current()
        progress = self.progress(call.token) if call.token is not None else None
        is_error, text, structured, root = self.runner.call(
            call.tool, call.arguments, paths, call.cancel.is_set, progress)
        if call.silent:
            return
        if call.cancel.is_set():  # the client left while the call ran
            self.error(call.id, CONNECTION_CLOSED, "Connection closed")
            return
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if not is_error:
            content.extend(media_blocks(structured, root))
        self.result(call.id, {"content": content, "structuredContent": structured,
                              "isError": is_error})

    def progress(self, token: str | int) -> Callable[[float, float | None, str | None], None]:
        def notify(done: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progressToken": token, "progress": done}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": params})

        return throttled(notify)

    # ------------------------------------------------------------------------ notifications

    def notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            with self.inflight_lock:
                cancelled = params.get("requestId")
                call = self.inflight.get(cancelled) if valid_id(cancelled) else None
            if call is not None:
                call.silent = True  # the protocol sends no response to a cancelled request
                call.cancel.set()
        elif method == "notifications/roots/list_changed" or (
                method == "notifications/initialized" and self.client_roots):
            self.roots.refresh()

    # --------------------------------------------------------- our requests, their answers

    def ask_roots(self, on_answer: Callable[[Any, Any], None]) -> None:
        self.next_id += 1
        request_id = self.next_id
        self.pending[request_id] = on_answer
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "roots/list"})

    def response(self, message: dict[str, Any]) -> None:
        on_answer = self.pending.pop(message.get("id"), None)
        if on_answer is not None:
            on_answer(message.get("result"), message.get("error", None if "result" in message
                                                         else {"message": "no result"}))
