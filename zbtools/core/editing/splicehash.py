"""The sha256 of a file before and after a splice, without joining the new version.

An edit done as a splice of the bytes (``cycle``) reports the new version's sha256 and journals
the old one's for ``undo``: ``hash_parts`` hashes the pieces of the new version in order, and
``hash_both`` hashes the bytes before the edit once for both digests (the hash state after them
is copied), saving up to a whole pass over the file. From ``FAST_HASH_BYTES``
(``zbtools.core.files.hashing``) ``digests_beside`` runs ``hash_both`` on a helper thread while
the write and its ``fsync`` wait on the disk. Nothing here refuses.

The map::

    hash_parts                   the sha256 of pieces, in order
    hash_both, _hash_size        the sha256 before and after; the bytes that costs
    digests_beside               ``hash_both`` on a helper thread

Imports ``zbtools.core.files.hashing`` and ``streaming`` on use only; ``cycle`` builds on it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.files.streaming import Background


def hash_parts(pieces: list[memoryview]) -> str:
    from zbtools.core.files.hashing import sha256_for

    hasher = sha256_for(sum(len(piece) for piece in pieces))()
    for piece in pieces:
        hasher.update(piece)
    digest: str = hasher.hexdigest()
    return digest


def hash_both(data: bytes, first: int, end: int, replacement: bytes,
               new: Callable[..., Any] | None = None) -> tuple[str, str]:
    """The sha256 of ``data`` and of ``data`` with ``replacement`` spliced over
    ``data[first:end]``: the bytes before the edit are hashed once for both (the hash state
    after them is copied), which saves up to a whole pass over the file. ``new``: the sha256
    constructor (``_hash_size``'s choice when not given)."""
    if new is None:
        from zbtools.core.files.hashing import sha256_for

        new = sha256_for(_hash_size(data, first, end, replacement))
    view = memoryview(data)
    before = new(view[:first])
    after = before.copy()
    before.update(view[first:])
    after.update(replacement)
    after.update(view[end:])
    return before.hexdigest(), after.hexdigest()


def _hash_size(data: bytes, first: int, end: int, replacement: bytes) -> int:
    """How many bytes ``hash_both`` hashes."""
    return len(data) + len(replacement) - (end - first) + len(data) - first


def digests_beside(data: bytes, first: int, end: int, replacement: bytes) -> Background:
    """``hash_both`` in the ``Background``, for a file of ``FAST_HASH_BYTES`` or more; its
    ``result()`` is (sha256 before, sha256 after). Started right before the write, once the
    checks are done.

    OpenSSL's sha256 releases the GIL while it hashes, and the write and its ``fsync`` wait
    on the kernel and the disk, so the thread costs nothing on the caller's path. It also
    imports OpenSSL (holding the GIL) while the caller is in its write and ``fsync``, which
    need no GIL; imported during the checks, which hold it, the two threads would pass the
    GIL back and forth (benchmarks/README.md#figures-behind-the-code). The thread only reads
    immutable bytes."""
    from zbtools.core.files.hashing import sha256_for
    from zbtools.core.files.streaming import Background

    size = _hash_size(data, first, end, replacement)
    return Background(lambda: hash_both(data, first, end, replacement, sha256_for(size)))
