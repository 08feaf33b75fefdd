"""Handing a one-shot call to a running ``zbtools serve`` (docs/serve.md).

A process started for one call (``zbtools TOOL ...``) looks, before it imports anything else, for
the server of its own installation: ``socket_path`` names it (in a directory of the user's own,
mode 0700; the file named after the interpreter, the package and its version). Where one
listens, the process sends its arguments, its environment, its umask and its streams' encodings,
with its standard streams and working directory as descriptors (``SCM_RIGHTS``), and the server
answers at once whether it takes the call (a tool it serves, output not to a terminal, not busy
with another call). If it does, the process says go and waits: the server runs the call on
those descriptors, in that directory, with that environment, from its warm session, and sends
the exit status. If it does not, or nothing answers within ``ANSWER_SECONDS``, or anything fails
before go, the call runs here as it always has; after go, a server that ends before the status
is an internal error (exit 4). Only ``_socket`` is imported, and only where a socket exists.

Map: ``hand_off`` (the client), ``socket_path``, ``identity``, ``connect`` (checked: the
directory, the peer's user), ``encode``/``decode`` (one request), ``peer_uid``, the protocol's
bytes (``CALL``, ``STOP``, ``STATUS``, ``ACCEPT``, ``DECLINE``, ``GO``, ``DONE``),
``OFF_VALUES``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The request's first bytes, then the reply bytes (one each), then the status after DONE.
CALL = b"zbtools-call 1\n"
STOP = b"zbtools-stop 1\n"
STATUS = b"zbtools-status 1\n"
ACCEPT, DECLINE, GO, DONE = b"A", b"D", b"G", b"X"
ANSWER_SECONDS = 1.0  # how long a client waits for take-or-decline before running the call
OFF_VALUES = ("0", "off", "no", "false")  # ZBTOOLS_SERVER values that turn the hand-off off
LINUX_SO_PEERCRED = 17  # (pid, uid, gid) of the other end: Linux's SOL_SOCKET option number


def identity() -> str:
    """This installation and interpreter: a server answers only processes with the same one
    (its socket's name is derived from it, and it is compared on every call). The package's
    ``__init__.py`` timestamp changes with every install, also of the same version."""
    from zbtools import __version__

    package = os.path.dirname(os.path.abspath(__file__))
    try:
        stamp = os.stat(os.path.join(package, "__init__.py")).st_mtime_ns
    except OSError:
        stamp = 0
    return "\0".join((sys.executable, sys.version, package, __version__, str(stamp),
                      sys.getfilesystemencoding(), sys.getfilesystemencodeerrors(),
                      str(sys.flags.utf8_mode)))


def _digest(text: str) -> str:
    # FNV-1a, 64 bits: a stable short name without importing hashlib or zlib (a cold call's)
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def socket_dir(env: os._Environ[str] | dict[str, str]) -> str:
    """The user's own directory for servers' sockets: ``$XDG_RUNTIME_DIR/zbtools``, else
    ``/tmp/zbtools-UID``."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return os.path.join(runtime, "zbtools")
    return f"/tmp/zbtools-{os.getuid()}"


def socket_path(env: os._Environ[str] | dict[str, str], ident: str | None = None) -> str:
    """Where this installation's server listens (``ZBTOOLS_SERVER`` may name another path)."""
    chosen = env.get("ZBTOOLS_SERVER", "")
    if chosen.startswith("/"):
        return chosen
    return os.path.join(socket_dir(env), f"serve-{_digest(ident or identity())}.sock")


def safe_dir(path: str) -> bool:
    """Whether ``path`` is a directory of this user that nobody else may write or list (a
    socket elsewhere could be anybody's: the environment sent holds the user's secrets)."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def peer_uid(sock: object) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (Linux)."""
    try:
        raw = sock.getsockopt(1, LINUX_SO_PEERCRED, 12)  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        return None
    return int.from_bytes(raw[4:8], sys.byteorder)


def connect(path: str, timeout: float) -> Any:
    """A ``_socket.socket`` connected to the server at ``path``; None where there is no socket,
    it lies in a directory others may use, or another user's process answers."""
    if not os.path.exists(path) or not safe_dir(os.path.dirname(path)):
        return None
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    if peer_uid(sock) != os.getuid():
        sock.close()
        return None
    return sock


def encode(fields: list[bytes]) -> bytes:
    """Length-prefixed fields after a total length: no JSON on the client's side."""
    body = b"".join(len(f).to_bytes(4, "big") + f for f in fields)
    return len(body).to_bytes(8, "big") + body


def decode(body: bytes) -> list[bytes]:
    fields = []
    at = 0
    while at < len(body):
        size = int.from_bytes(body[at:at + 4], "big")
        fields.append(body[at + 4:at + 4 + size])
        at += 4 + size
    if at != len(body):
        raise ValueError("a field runs past the request")
    return fields


def _stream_codec(stream: object) -> tuple[bytes, bytes]:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    errors = getattr(stream, "errors", None) or "strict"
    return encoding.encode("ascii", "replace"), errors.encode("ascii", "replace")


def request(argv: list[str], ident: str) -> bytes:
    """One call's request: identity, umask, the streams' codecs, argv, then the environment."""
    mask = os.umask(0o022)
    os.umask(mask)
    out_enc, out_err = _stream_codec(sys.stdout)
    err_enc, err_err = _stream_codec(sys.stderr)
    fields = [ident.encode("utf-8", "surrogateescape"), str(mask).encode(), out_enc, out_err,
              err_enc, err_err, str(len(argv)).encode()]
    fields += [os.fsencode(arg) for arg in argv]
    fields += [key + b"=" + value for key, value in os.environb.items()]
    return CALL + encode(fields)


def hand_off(argv: list[str]) -> int | None:
    """The exit status of the call ``argv`` as the server ran it; None: run it here."""
    env = os.environ
    if env.get("ZBTOOLS_SERVER", "").lower() in OFF_VALUES or "_ZBTOOLS_COMPLETE" in env:
        return None
    try:
        if os.isatty(1):  # a terminal's output is drawn here
            return None
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return None
    ident = identity()
    sock = connect(socket_path(env, ident), ANSWER_SECONDS)
    if sock is None:
        return None
    import _socket

    cwd = -1
    try:
        try:
            cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            data = request(argv, ident)
            rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, cwd))
            sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            if sent < len(data):
                sock.sendall(data[sent:])
            if sock.recv(1) != ACCEPT:
                return None
            sock.sendall(GO)
        except OSError:  # (a timeout too) nothing was run: the call runs here
            return None
        sock.settimeout(None)  # the call takes as long as it takes
        reply = b""
        try:
            while len(reply) < 5:
                chunk = sock.recv(5 - len(reply))
                if not chunk:
                    break
                reply += chunk
        except OSError:
            pass
        if len(reply) == 5 and reply[:1] == DONE:
            return int.from_bytes(reply[1:], "big", signed=True)
        sys.stderr.write("error[internal_error]: the zbtools server ended during the call; its "
                         "output may be incomplete\nhint: run the call again (ZBTOOLS_SERVER=off "
                         "runs it without the server)\n")
        return 4
    finally:
        sock.close()
        if cwd >= 0:
            os.close(cwd)
