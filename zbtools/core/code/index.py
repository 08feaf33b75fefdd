"""The workspace's symbol index: each file's ``Tags`` record, kept while the file is unchanged.

A record is valid while the file's stat signature is the one it was made from: device, inode,
size, ``mtime_ns`` and ``ctime_ns``, the key of the warm search cache, so a file whose stat
changed is parsed again. Records live in memory for a process (a ``batch`` or ``mcp`` session
keeps the index in its search cache) and on disk in the workspace's state directory, in one file
written whole through a temp file and a rename (crash-safe: a reader sees the old file or the
new one, and a file torn by a power loss fails its check). The file is trusted only when
everything checks: its magic, its format, its length and CRC, and its stamp (zbtools' version,
the index code, the workspace root), and each record's language only while the grammar,
``tree_sitter`` and tags query files it was made with are unchanged; anything else is ignored
and rebuilt, never read as records. Only records of files settled for ``SETTLE_NS`` (git's
"racily clean" rule) are stored, so a file changed twice within one timestamp tick is never
mistaken for the version parsed (docs/internals/code.md#repository-map).

The maps' rankings are kept too (``rankings`` in memory, ``code-maps.bin`` on disk, the first
``KEPT_CANDIDATES`` of each), with a fingerprint of the files they rank (paths, signatures,
grammar stamps): the same walk finding the same files maps them without a record read.

Map: ``CodeIndex`` (``get``, ``put``, ``forget``, ``load``, ``save``, ``load_rankings``,
``save_rankings``), ``write_checked``/``read_checked`` (a file that checks itself),
``Signature``, ``signature``, ``settled``, ``grammar_stamp``, ``code_stamp``, ``SETTLE_NS``,
``CACHE_NAME``, ``RANKINGS_NAME``.
"""

from __future__ import annotations

import marshal
import os
import struct
import threading
import time
import zlib

from zbtools.core.code.languages import LANGUAGES, grammar_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.code.repomap import Ranking
    from zbtools.core.code.tagpool import Tags

Signature = tuple[int, int, int, int, int]

FORMAT = 1
MAGIC = b"ZBTAGS\0\n"
HEADER = struct.Struct("<IQI")  # format, payload length, CRC-32 of the payload
CACHE_NAME = "code-tags.bin"
RANKINGS_NAME = "code-maps.bin"
KEPT_CANDIDATES = 4000  # of a ranking, kept on disk
KEPT_RANKINGS = 8
SETTLE_NS = 2_000_000_000
# the modules whose code decides what a record holds: a change to one (a development checkout
# keeps its version) voids every record
_CODE_FILES = ("symbols.py", "languages.py", "tagpool.py", "index.py")


def signature(st: os.stat_result) -> Signature:
    """What a record depends on: identity, size and both timestamps."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(sig: Signature, now_ns: int) -> bool:
    return max(sig[3], sig[4]) < now_ns - SETTLE_NS


def _file_stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


_GRAMMAR_STAMPS: dict[str, tuple[tuple[int, int], ...]] = {}


def grammar_stamp(name: str) -> tuple[tuple[int, int], ...]:
    """The stat stamps of the files a language's records depend on (once per process)."""
    stamp = _GRAMMAR_STAMPS.get(name)
    if stamp is None:
        stamp = _GRAMMAR_STAMPS[name] = tuple(
            _file_stamp(path) for path in grammar_files(LANGUAGES[name]))
    return stamp


def code_stamp(root: str) -> tuple[object, ...]:
    from zbtools import __version__

    here = os.path.dirname(__file__)
    return (__version__, FORMAT, root,
            tuple(_file_stamp(os.path.join(here, name)) for name in _CODE_FILES))


class CodeIndex:
    """Records by workspace-relative path, each with the signature it was made from."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.records: dict[str, tuple[Signature, Tags]] = {}
        self.loaded = False  # the disk file was read (or found absent, or ignored)
        self.dirty = False  # records changed since the disk file was read or written
        self.lock = threading.Lock()  # mcp runs calls in parallel threads
        self._trusted: dict[str, bool] = {}  # language -> its grammar stamp matches the file's
        self._grammars: dict[str, tuple[tuple[int, int], ...]] = {}  # as read from the file
        # each map's ranking, by what was mapped: (fingerprint of the files, the ranking)
        self.rankings: dict[object, tuple[bytes, Ranking]] = {}
        # the same, cut and packed, as kept on disk (``save_rankings``)
        self.kept_rankings: dict[object, tuple[bytes, object]] = {}
        self.rankings_loaded = False

    def get(self, rel: str, sig: Signature) -> Tags | None:
        """The record of ``rel`` when it was made from a file with signature ``sig``."""
        found = self.records.get(rel)
        if found is None or found[0] != sig:
            return None
        tags = found[1]
        trusted = self._trusted.get(tags[0])
        if trusted is None:
            stored = self._grammars.get(tags[0])
            trusted = self._trusted[tags[0]] = stored is None or \
                stored == grammar_stamp(tags[0])
        return tags if trusted else None

    def put(self, rel: str, sig: Signature, tags: Tags, now_ns: int) -> None:
        """Keep a new record; one of a file not yet settled is used once, not kept."""
        if not settled(sig, now_ns):
            # the file's record on disk, if any, no longer matches its signature: no rewrite
            self.records.pop(rel, None)
            return
        self.records[rel] = (sig, tags)
        self._grammars.setdefault(tags[0], grammar_stamp(tags[0]))
        self._trusted[tags[0]] = self._grammars[tags[0]] == grammar_stamp(tags[0])
        self.dirty = True

    def forget(self, keep: set[str], under: str) -> None:
        """Drop the records of files below ``under`` (``.``: all) that a complete walk of it
        did not meet: they were deleted, or are ignored now."""
        prefix = "" if under == "." else under + "/"
        gone = [rel for rel in self.records if rel.startswith(prefix) and rel not in keep]
        for rel in gone:
            del self.records[rel]
        if gone:
            self.dirty = True

    # -- on disk ----------------------------------------------------------------------------

    def load(self, path: str) -> None:
        """Read the records kept in ``path``; a file that does not check is ignored whole."""
        self.loaded = True
        raw = read_checked(path)
        loaded = _decode(raw, code_stamp(self.root)) if raw is not None else None
        if loaded is None:
            if os.path.exists(path):
                self.dirty = True  # rewrite it: the next process should not meet it again
            return
        grammars, records = loaded
        self._grammars = grammars
        self._trusted = {}
        # records made here since (none, usually) win over the file's
        records.update(self.records)
        self.records = records

    def save(self, path: str) -> bool:
        """Write every record to ``path`` (temp file and rename); False when it could not."""
        if not self.dirty:
            return True
        languages = {tags[0] for _, tags in self.records.values()}
        grammars = {name: self._grammars.get(name) or grammar_stamp(name) for name in languages}
        if not write_checked(path, (code_stamp(self.root), grammars, self.records)):
            return False
        self.dirty = False
        return True

    def load_rankings(self, path: str) -> None:
        """Read the rankings kept in ``path`` (see ``save_rankings``)."""
        self.rankings_loaded = True
        loaded = read_checked(path)
        if not (type(loaded) is tuple and len(loaded) == 2 and loaded[0] == code_stamp(self.root)
                and type(loaded[1]) is dict):
            return
        for key, item in loaded[1].items():
            if type(item) is tuple and len(item) == 2 and type(item[0]) is bytes:
                self.kept_rankings.setdefault(key, item)

    def save_rankings(self, path: str) -> None:
        """Keep each map's ranking, cut to its first ``KEPT_CANDIDATES``, with the fingerprint
        of the files it was made from: a new process whose walk finds the same files with the
        same signatures maps them without reading any record."""
        if not write_checked(path, (code_stamp(self.root), self.kept_rankings)):
            self.kept_rankings.clear()

    def cost(self) -> int:
        """About how many bytes the records take in memory."""
        return sum(120 + 160 * len(tags[1]) + 60 * len(tags[2])
                   for _, tags in self.records.values()) + sum(
            100 * len(ranking.order) for _, ranking in self.rankings.values())


def write_checked(path: str, value: Any) -> bool:
    """Write ``value`` (marshal) to ``path`` with a header that lets a reader check it, through
    a temp file and a rename; False when it could not be written. No ``fsync``: a file a crash
    tore fails its length or CRC check and is rebuilt, so durability is not worth its cost."""
    body = marshal.dumps(value)
    head = MAGIC + HEADER.pack(FORMAT, len(body), zlib.crc32(body))
    folder, name = os.path.split(path)
    temp = os.path.join(folder, f".{name}.{os.getpid()}.{time.time_ns()}.tmp")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head)
                fh.write(body)
        except BaseException:
            os.unlink(temp)
            raise
        os.replace(temp, path)
    except (OSError, ValueError):
        return False
    return True


def read_checked(path: str) -> object:
    """What ``write_checked`` wrote to ``path``; None when the file is absent, or its magic,
    format, length or CRC does not check."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    start = len(MAGIC) + HEADER.size
    if len(data) < start or not data.startswith(MAGIC):
        return None
    form, length, crc = HEADER.unpack_from(data, len(MAGIC))
    body = memoryview(data)[start:]
    if form != FORMAT or length != len(body) or zlib.crc32(body) != crc:
        return None
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None


def _decode(loaded: object, stamp: tuple[object, ...]
            ) -> tuple[dict[str, tuple[tuple[int, int], ...]],
                       dict[str, tuple[Signature, Tags]]] | None:
    """The grammar stamps and records of a cache file, or None when they do not check."""
    if not (type(loaded) is tuple and len(loaded) == 3 and loaded[0] == stamp
            and type(loaded[1]) is dict and type(loaded[2]) is dict):
        return None
    grammars, records = loaded[1], loaded[2]
    for rel, item in records.items():
        if not (type(rel) is str and type(item) is tuple and len(item) == 2
                and _is_sig(item[0]) and _is_tags(item[1])):
            return None
    return grammars, records


def _is_sig(sig: object) -> bool:
    return type(sig) is tuple and len(sig) == 5 and all(type(n) is int for n in sig)


def _is_tags(tags: object) -> bool:
    return (type(tags) is tuple and len(tags) == 4 and tags[0] in LANGUAGES
            and type(tags[1]) is tuple and type(tags[2]) is tuple)
