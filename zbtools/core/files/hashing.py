"""SHA-256 as the tools report and compare it, and the short line hash of hash anchors.

Every content digest (a result's ``sha256``, an ``expected_sha256`` precondition, the undo
journal) is SHA-256. Small data is hashed with the builtin ``_sha256`` module, which costs no
import; from ``FAST_HASH_BYTES`` on, and for the rest of a process that has hashed that much in
all, OpenSSL's faster implementation is loaded instead.

Map: ``sha256_hex`` (bytes), ``sha256_fd`` (a whole open file), ``sha256_for`` (the constructor
to hash a given size with), ``line_hash`` (one line's anchor hash).
"""

from __future__ import annotations

import os

from zbtools.core.files.reading import CHUNK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

if TYPE_CHECKING:
    from hashlib import sha256 as sha256  # noqa: PLC0414 - explicit re-export for mypy
else:
    try:  # hashlib pulls in OpenSSL bindings (~3 ms); the builtin module is enough for SHA-256
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import sha256


LINE_HASH_CHARS = 6


def line_hash(line: str) -> str:
    """The short, stable hash of one line's text (no line ending) used by hash anchors."""
    digest: str = sha256(line.encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:LINE_HASH_CHARS]


FAST_HASH_BYTES = 1 << 20


def sha256_for(size: int) -> Callable[..., Any]:
    """The sha256 constructor to hash ``size`` more bytes with: the builtin module's for small
    data (no import cost), OpenSSL's (faster, but costly to import) from 1 MiB up, and for
    everything once this process has hashed 1 MiB in all (a batch or a server, where the
    import is paid once; benchmarks/README.md#figures-behind-the-code)."""
    _hashed[0] += size
    if _hashed[0] >= FAST_HASH_BYTES:
        try:  # the OpenSSL module itself: ``hashlib`` would also load blake2 (~0.4 ms more)
            from _hashlib import openssl_sha256
        except ImportError:  # a Python built without OpenSSL
            from hashlib import sha256 as openssl_sha256
        return openssl_sha256
    return sha256


_hashed = [0]  # bytes this process asked sha256_for to hash


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` (with ``sha256_for``'s choice of module)."""
    digest: str = sha256_for(len(data))(data).hexdigest()
    return digest


def sha256_fd(fd: int) -> str:
    """SHA-256 of a whole open file, read with ``pread`` from offset 0 in 1 MiB chunks."""
    import hashlib

    hasher = hashlib.sha256()
    offset = 0
    while True:
        chunk = os.pread(fd, CHUNK, offset)
        if not chunk:
            return hasher.hexdigest()
        hasher.update(chunk)
        offset += len(chunk)
