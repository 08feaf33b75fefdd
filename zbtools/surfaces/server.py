"""``zbtools serve``: a warm process that runs other processes' calls (docs/serve.md).

One server per user and installation listens on ``handoff.socket_path``. A one-shot
``zbtools TOOL`` process hands its call over (``zbtools.handoff``) with its standard streams
and working directory as descriptors; the server's acceptor thread checks the caller (same
user, same installation) and the call (``servable``: a tool that only reads, in the search and
files categories, output not to a terminal), declines it when it is busy with another call or
the call is not for it (the caller then runs it itself), and else hands it to the main thread.
There the call runs as the caller's own process would run it: its descriptors on 0, 1 and 2,
its directory, umask and environment, its streams' encodings, through the same ``entry.run``,
with the session's warm search cache of its workspace (``Sessions``, one per workspace root,
the four used last). The exit status goes back after the descriptors are closed, so a reader
of the caller's output sees its end with the caller's.

The server stops after ``--idle`` seconds without a call, on ``zbtools serve --stop``, on
SIGTERM or SIGINT (after the call it runs), or when a module it loaded changes on disk (the
next calls run in their own processes until it is started again).

Map: ``serve_command`` (options, ``--status``, ``--stop``), ``Server`` (the socket, the
acceptor, the calls), ``Call`` (one received request), ``Sessions``, ``servable``.
"""

from __future__ import annotations

import os
import sys
import time

from zbtools.contract import ToolError
from zbtools.handoff import (
    ACCEPT,
    CALL,
    DECLINE,
    DONE,
    GO,
    STATUS,
    STOP,
    connect,
    decode,
    identity,
    peer_uid,
    safe_dir,
    socket_path,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Mapping

    from zbtools.core.call.context import Context
    from zbtools.core.search.cache import SearchCache
    from zbtools.dispatch import Options, Streams

    RunCall = Callable[..., int]

SERVED_CATEGORIES = ("search", "files")
LOOK_SECONDS = 0.5  # how often the main thread looks at ``stopping`` and the idle time
KEPT_SESSIONS = 4  # workspaces whose warm caches are kept (the least recently used goes)
MAX_REQUEST_BYTES = 16 << 20  # arguments and environment of one call
USAGE_HINT = "usage: zbtools serve [--idle SECONDS] | zbtools serve --status | --stop"


class Call:
    """One received request: its fields and the caller's descriptors (0, 1, 2, directory)."""

    def __init__(self, conn: socket.socket, fields: list[bytes], fds: list[int]) -> None:
        self.conn = conn
        self.fds = fds
        self.ident = fields[0].decode("utf-8", "surrogateescape")
        self.umask = int(fields[1])
        self.out_codec = (fields[2].decode("ascii"), fields[3].decode("ascii"))
        self.err_codec = (fields[4].decode("ascii"), fields[5].decode("ascii"))
        count = int(fields[6])
        self.argv = [os.fsdecode(f) for f in fields[7:7 + count]]
        env: dict[str, str] = {}
        for item in fields[7 + count:]:
            key, sep, value = item.partition(b"=")
            if sep:
                env[os.fsdecode(key)] = os.fsdecode(value)
        self.env = env

    def close_fds(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def servable(argv: list[str], env: Mapping[str, str]) -> bool:
    """Whether a server runs this command line: a tool that only reads files (search and
    files categories), not its help, in a format other than ``human``."""
    from zbtools.dispatch import Options, split_command_line, tool_structs
    from zbtools.options import COMMANDS

    opts = Options()
    try:
        command, _rest = split_command_line(argv, opts, env)
        if command is None or command in COMMANDS or command == "help" or opts.help \
                or opts.version:
            return False
        if (opts.format or env.get("ZBTOOLS_FORMAT")) == "human":
            return False
        spec = tool_structs(command, opts, env)[0]
    except Exception:  # a wrong command line: its own process reports it
        return False
    return spec is not None and spec.read_only and spec.category in SERVED_CATEGORIES


class Sessions:
    """The warm search caches, one per workspace root (and cache settings)."""

    def __init__(self) -> None:
        self.caches: dict[tuple[int, ...], SearchCache] = {}

    def attach(self, ctx: Context) -> None:
        from zbtools.core.search.cache import SearchCache

        root = os.fstat(ctx.workspace.root_fd)
        limits = ctx.limits
        key = (root.st_dev, root.st_ino, limits.search_cache_bytes, limits.search_watch_dirs)
        cache = self.caches.pop(key, None)
        if cache is None:
            cache = SearchCache(limits.search_cache_bytes, limits.search_watch_dirs)
            while len(self.caches) >= KEPT_SESSIONS:
                self.caches.pop(next(iter(self.caches))).close()
        self.caches[key] = cache  # most recently used last
        ctx.search_cache = cache

    def close(self) -> None:
        for cache in self.caches.values():
            cache.close()
        self.caches.clear()


class Server:
    def __init__(self, path: str, idle: float, run_call: RunCall) -> None:
        import queue
        import threading

        self.path = path
        self.idle = idle
        self.run_call = run_call
        self.ident = identity()
        self.uid = os.getuid()
        self.sessions = Sessions()
        self.calls: queue.Queue[Call] = queue.Queue()
        self.lock = threading.Lock()
        self.busy = False
        self.stopping = False
        self.served = 0
        self.declined = 0
        self.started = time.time()
        self.stamps = self.module_stamps()
        self.listener: socket.socket | None = None
        self.inode = 0  # the socket's, to remove only our own at exit
        self.lock_fd = -1  # held (flock) while the server runs: one server per socket
        self.saved = [os.dup(fd) for fd in (0, 1, 2)]  # the server's own streams

    # -- the acceptor thread ----------------------------------------------------------------

    def accept_loop(self) -> None:
        assert self.listener is not None
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # the listener was closed: the server ends
            try:
                self.answer(conn)
            except Exception:  # one bad connection never ends the server
                conn.close()

    def answer(self, conn: socket.socket) -> None:
        conn.settimeout(2.0)
        if peer_uid(conn) != self.uid:
            conn.close()
            return
        data, fds = self.receive(conn)
        if data.startswith(STOP):
            conn.sendall(b"S")
            conn.close()
            self.stop()
            return
        if data.startswith(STATUS):
            from zbtools.core.call.fastjson import dumps_ascii

            conn.sendall(dumps_ascii(self.status()).encode("ascii"))
            conn.close()
            return
        try:
            call = Call(conn, decode(data[len(CALL) + 8:]), fds) if data.startswith(CALL) and \
                len(fds) == 4 else None
        except (ValueError, IndexError):  # not a request of this protocol
            call = None
        take = call is not None and call.ident == self.ident and not os.isatty(call.fds[1]) \
            and servable(call.argv, call.env) and not self.changed()
        if take:
            with self.lock:
                take = not self.busy and not self.stopping
                self.busy = take
        if call is None or not take:
            for fd in fds:
                os.close(fd)
            with self.lock:
                self.declined += 1
            conn.sendall(DECLINE)
            conn.close()
            return
        assert call is not None
        try:
            conn.sendall(ACCEPT)
            go = conn.recv(1) == GO
        except OSError:
            go = False
        if not go:  # the caller gave up waiting: it runs the call itself
            call.close_fds()
            conn.close()
            with self.lock:
                self.busy = False
            return
        conn.settimeout(None)
        self.calls.put(call)

    @staticmethod
    def receive(conn: socket.socket) -> tuple[bytes, list[int]]:
        """The request's bytes and the descriptors that came with them."""
        import array
        from socket import SCM_RIGHTS, SOL_SOCKET

        level, kind = SOL_SOCKET, SCM_RIGHTS
        fds = array.array("i")
        data, ancillary, _flags, _addr = conn.recvmsg(1 << 16, 4096)
        for cmsg_level, cmsg_type, cmsg_data in ancillary:
            if cmsg_level == level and cmsg_type == kind:
                usable = len(cmsg_data) - len(cmsg_data) % fds.itemsize
                fds.frombytes(cmsg_data[:usable])
        got = list(fds)
        try:
            if data.startswith(CALL):
                head = len(CALL) + 8
                while len(data) < head:
                    more = conn.recv(head - len(data))
                    if not more:
                        raise OSError("the request ended early")
                    data += more
                total = head + int.from_bytes(data[len(CALL):head], "big")
                if total > MAX_REQUEST_BYTES:
                    raise OSError("the request is too large")
                chunks = [data]
                size = len(data)
                while size < total:
                    more = conn.recv(min(1 << 20, total - size))
                    if not more:
                        raise OSError("the request ended early")
                    chunks.append(more)
                    size += len(more)
                data = b"".join(chunks)
        except BaseException:
            for fd in got:
                os.close(fd)
            raise
        return data, got

    # -- the main thread ----------------------------------------------------------------------

    def run(self) -> None:
        import queue
        import threading

        acceptor = threading.Thread(target=self.accept_loop, name="zbtools-serve-accept",
                                    daemon=True)
        acceptor.start()
        last = time.monotonic()
        try:
            while True:
                with self.lock:  # a call taken before the stop still runs
                    if self.stopping and not self.busy:
                        break
                try:  # a short wait: a signal's handler only sets ``stopping``
                    call = self.calls.get(timeout=min(LOOK_SECONDS, self.idle))
                except queue.Empty:
                    with self.lock:
                        if self.busy:
                            last = time.monotonic()
                        elif time.monotonic() - last >= self.idle:
                            self.stopping = True  # idle: nothing is taken from here on
                    continue
                try:
                    code = self.run_one(call)
                finally:
                    call.close_fds()
                    with self.lock:
                        self.busy = False
                        self.served += 1
                try:
                    call.conn.sendall(DONE + code.to_bytes(4, "big", signed=True))
                except OSError:
                    pass  # the caller is gone
                call.conn.close()
                last = time.monotonic()
        finally:
            self.close()

    def run_one(self, call: Call) -> int:
        """One call, run as the caller's process would run it."""
        import io

        from zbtools.dispatch import Streams

        for own in (sys.stdout, sys.stderr):
            try:
                own.flush()
            except (OSError, ValueError):
                pass
        old_mask = os.umask(call.umask)
        old_env = dict(os.environ)
        old_streams = (sys.stdin, sys.stdout, sys.stderr)
        try:
            for target, fd in enumerate(call.fds[:3]):
                os.dup2(fd, target)
            os.fchdir(call.fds[3])
            call.close_fds()
            os.environ.clear()
            os.environ.update(call.env)
            # the caller's streams as its own process has them (closed in ``finally``)
            stdin = open(0, "rb", closefd=False)  # noqa: SIM115
            out = open(1, "wb", closefd=False)  # noqa: SIM115
            err = open(2, "wb", closefd=False)  # noqa: SIM115
            stdout = io.TextIOWrapper(out, *call.out_codec)
            stderr = io.TextIOWrapper(err, *call.err_codec, line_buffering=True)
            sys.stdin = io.TextIOWrapper(stdin, "utf-8")
            sys.stdout, sys.stderr = stdout, stderr
            streams = Streams(stdin, stdout, stderr, os.isatty(0), os.isatty(1), os.isatty(2))
            try:
                code = self.run_call(call.argv, streams, call.env, session=self.sessions.attach)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            return code
        finally:
            for stream in (sys.stdout, sys.stderr, sys.stdin):
                if stream not in old_streams:
                    try:
                        stream.close()  # flushed first; what a closed pipe refused is dropped
                    except (OSError, ValueError):
                        pass
            sys.stdin, sys.stdout, sys.stderr = old_streams
            for target, fd in enumerate(self.saved):
                os.dup2(fd, target)
            os.chdir("/")
            os.umask(old_mask)
            os.environ.clear()
            os.environ.update(old_env)

    # -- state -----------------------------------------------------------------------------

    @staticmethod
    def module_stamps() -> dict[str, int]:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        stamps = {}
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if path and path.startswith(package):
                try:
                    stamps[path] = os.stat(path).st_mtime_ns
                except OSError:
                    stamps[path] = 0
        return stamps

    def changed(self) -> bool:
        """Whether a module the server runs changed on disk since it started (it then stops:
        a call must not run code other than its caller's)."""
        for path, stamp in self.stamps.items():
            try:
                now = os.stat(path).st_mtime_ns
            except OSError:
                now = 0
            if now != stamp:
                self.stop()
                return True
        return False

    def status(self) -> dict[str, object]:
        return {"socket": self.path, "pid": os.getpid(), "served": self.served,
                "declined": self.declined, "busy": self.busy,
                "workspaces": len(self.sessions.caches),
                "uptime_seconds": round(time.time() - self.started, 3),
                "idle_seconds": self.idle}

    def stop(self) -> None:
        self.stopping = True

    def close(self) -> None:
        self.stopping = True
        if self.listener is not None:
            try:
                if os.stat(self.path).st_ino == self.inode:
                    os.unlink(self.path)
            except OSError:
                pass
            try:
                self.listener.shutdown(2)  # SHUT_RDWR: wakes the acceptor's accept
            except OSError:
                pass
            self.listener.close()
        self.sessions.close()
        for fd in [*self.saved, self.lock_fd]:
            if fd >= 0:
                os.close(fd)
        self.saved = []
        self.lock_fd = -1

    # -- the socket ------------------------------------------------------------------------

    def listen(self) -> None:
        """Bind the socket (a stale one left by a server that died is replaced); raises
        ``already_exists`` when a server answers there."""
        import socket as socket_module

        directory = os.path.dirname(self.path)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ToolError("permission_denied", f"cannot make {directory}: {exc.strerror}",
                            hint="set XDG_RUNTIME_DIR to a directory of yours, or "
                            "ZBTOOLS_SERVER to a socket path in one",
                            details={"path": directory}) from exc
        if not safe_dir(directory):
            raise ToolError("permission_denied", f"{directory} is not a directory of yours "
                            "that only you may use (mode 0700)",
                            hint="remove it or chmod 700 it, or set ZBTOOLS_SERVER to a "
                            "socket path in a directory of yours", details={"path": directory})
        if len(os.fsencode(self.path)) >= 104:
            raise ToolError("usage_error", f"the socket path is too long: {self.path}",
                            hint="set ZBTOOLS_SERVER to a shorter socket path")
        import fcntl

        self.lock_fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                               0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.lock_fd)
            from zbtools.core.errors import already_exists

            raise already_exists(self.path, what="a server already listens there",
                                 hint="`zbtools serve --status` describes it; `zbtools serve "
                                 "--stop` stops it") from None
        try:
            os.unlink(self.path)  # a server that died left it: ours holds the lock now
        except FileNotFoundError:
            pass
        listener = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM)
        old_mask = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old_mask)
        listener.listen(64)
        self.inode = os.stat(self.path).st_ino
        self.listener = listener


def ask(path: str, message: bytes) -> bytes | None:
    """Send ``message`` to the server at ``path``; its whole answer, or None: no server."""
    sock = connect(path, 5.0)
    if sock is None:
        return None
    try:
        sock.sendall(message)
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        sock.close()


def serve_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                  fmt: str, run_call: RunCall) -> int:
    """``zbtools serve [--idle SECONDS]``, ``--status``, ``--stop``."""
    from zbtools.core.call.fastjson import dumps_ascii
    from zbtools.dispatch import write
    from zbtools.options import SERVE_IDLE_SECONDS

    idle = float(SERVE_IDLE_SECONDS)
    action = "serve"
    words = list(rest)
    while words:
        word = words.pop(0)
        if word in ("--status", "--stop"):
            action = word[2:]
        elif word == "--idle" and words:
            try:
                idle = float(words.pop(0))
            except ValueError:
                idle = -1.0
            if not 0 < idle < 1e9:
                raise ToolError("usage_error", "--idle takes a number of seconds above 0",
                                hint=USAGE_HINT)
        else:
            raise ToolError("usage_error", f"`zbtools serve` does not take {word!r}",
                            hint=USAGE_HINT)
    path = socket_path(dict(env))
    if action == "status":
        answer = ask(path, STATUS)
        server = None if answer is None else _loads(answer)
        write(streams, dumps_ascii({"zbtools": 1, "server": server}) + "\n")
        return 0 if server is not None else 1
    if action == "stop":
        stopped = ask(path, STOP) == b"S"
        deadline = time.monotonic() + 5.0
        while stopped and os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.02)  # gone once its call, if any, has ended
        write(streams, dumps_ascii({"zbtools": 1, "stopped": stopped, "socket": path}) + "\n")
        return 0 if stopped else 1
    server = Server(path, idle, run_call)
    server.listen()
    _stop_on_signals(server)
    if fmt == "human":  # a person at a terminal
        write(streams, f"zbtools serve: listening on {path} (pid {os.getpid()}); it stops after "
                       f"{idle:g} s without a call, on Ctrl-C or with `zbtools serve --stop`\n")
    else:
        write(streams, dumps_ascii({"zbtools": 1, "serving": {
            "socket": path, "pid": os.getpid(), "idle_seconds": idle}}) + "\n")
    server.run()
    return 0


def _loads(data: bytes) -> object:
    import json

    try:
        return json.loads(data)
    except ValueError:
        return None


def _stop_on_signals(server: Server) -> None:
    import signal

    def stop(_signum: int, _frame: object) -> None:
        server.stop()  # after the call it runs, if any

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
