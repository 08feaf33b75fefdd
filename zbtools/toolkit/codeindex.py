"""The symbols of a directory's files, from the workspace's code index (``outline``'s map; the
other tools that see code may share it).

``directory_tags`` walks a directory with the search tools' walker (``core.search.walk.Walk``:
the same ignore files, hidden and excluded directories, skipped counts, and in a session the
same warm listings), keeps the files in a language with symbols, and takes each one's record
from the index while its stat signature is unchanged; the others are read here and parsed on
every core (``core.code.tagpool.parse_many``). ``session_index`` is the index of this call: a
``batch`` or ``mcp`` session keeps it in its search cache between calls (re-validated file by
file, never stale); a one-shot call reads it from the state directory. What is kept and when it
holds: docs/internals/code.md#repository-map.
"""

from __future__ import annotations

import os
import stat
import time

from zbtools.core.code.index import (
    CACHE_NAME,
    KEPT_CANDIDATES,
    KEPT_RANKINGS,
    RANKINGS_NAME,
    CodeIndex,
    grammar_stamp,
    settled,
    signature,
)
from zbtools.core.code.languages import language_for
from zbtools.core.code.repomap import Ranking, rank
from zbtools.core.code.tagpool import parse_many
from zbtools.core.files.reading import READ_FLAGS, read_fd
from zbtools.core.search.entries import MAX_DEPTH, Skipped
from zbtools.core.search.walk import Walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.code.index import Signature
    from zbtools.core.code.languages import Language
    from zbtools.core.code.tagpool import Tags

MAX_FILE_BYTES = 4 * 1024 * 1024  # a bigger file is generated or data: not mapped
SCAN_CAP = 200_000  # entries walked
HEAD_BYTES = 256  # read of a file without an extension, for its #! line
_KEY = "code-index"


class DirectoryTags:
    """What ``directory_ranking`` found: the ranking of the definitions of the files with
    symbols, and what the walk counted."""

    __slots__ = ("files", "notes", "other_files", "parsed", "path", "ranking", "reused",
                 "scan_limited", "skipped")

    def __init__(self, path: str, skipped: Skipped) -> None:
        self.path = path
        self.files: list[tuple[str, Tags]] = []
        self.ranking: Ranking | None = None
        self.skipped = skipped
        self.other_files = 0  # files in languages without symbols
        self.parsed = 0
        self.reused = 0
        self.scan_limited = False
        self.notes: list[str] = []


def session_index(ctx: Context) -> CodeIndex:
    """This call's index: the session's (kept in its search cache), or a new one."""
    cache = ctx.search_cache
    key = (_KEY, ctx.workspace.root)
    if cache is not None and cache.capacity > 0:
        found: CodeIndex | None = cache.get(key, 0)
        if found is not None:
            return found
        index = CodeIndex(ctx.workspace.root)
        cache.put(key, 0, index, 0)
        return index
    return CodeIndex(ctx.workspace.root)


def _keep(ctx: Context, index: CodeIndex) -> None:
    """Charge the session's cache for what the index holds now (it may drop it, then the next
    call reads the state directory again)."""
    cache = ctx.search_cache
    if cache is not None and cache.capacity > 0:
        key = (_KEY, ctx.workspace.root)
        cost = index.cost()
        if cost >= cache.capacity:
            cache.get(key, None)  # a check it was not stored with: dropped, memory freed
        else:
            cache.put(key, 0, index, cost)


def cache_path(ctx: Context) -> str:
    return os.path.join(ctx.state_path(), CACHE_NAME)


def _read(dir_fd: int, name: str) -> tuple[bytes, Signature] | None:
    """The file's bytes and its signature as of after the read (a change during the read makes
    it unsettled, so its record is not kept)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = read_fd(fd, MAX_FILE_BYTES + 1, st.st_size)
        return data, signature(os.fstat(fd))
    except OSError:
        return None
    finally:
        os.close(fd)


def _language(dir_fd: int, name: str) -> Language | None:
    language = language_for(name)
    if language is None and "." not in name:  # perhaps a script: its #! line says
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
        except OSError:
            return None
        try:
            head = os.read(fd, HEAD_BYTES)
        except OSError:
            return None
        finally:
            os.close(fd)
        language = language_for(name, head)
    return language


def directory_ranking(ctx: Context, path: str, *, include_hidden: bool = False,
                      include_ignored: bool = False, exclude_dirs: list[str] | None = None,
                      whole: bool = False) -> DirectoryTags:
    """The ranked definitions of the files below ``path`` in a language with symbols;
    ``whole``: never a ranking cut for keeping (``select`` ran out of a cut one)."""
    index = session_index(ctx)
    switches = (include_hidden, include_ignored,
                None if exclude_dirs is None else tuple(exclude_dirs))
    with index.lock:
        if not index.rankings_loaded and not index.loaded:
            index.load_rankings(os.path.join(ctx.state_path(), RANKINGS_NAME))
        key: tuple[object, ...] = (path, *switches)
        # a new process with a kept ranking of this walk: check it before reading any record
        hopeful = not whole and not index.loaded and key in index.kept_rankings
        if not hopeful and not index.loaded:
            index.load(cache_path(ctx))
        out, sigs, pending = _walk(ctx, index, path, switches, read=not hopeful)
        now = time.time_ns()
        stamp = fingerprint(sigs, out.path)
        if hopeful:
            kept = index.kept_rankings[key]
            ranking = Ranking.from_data(kept[1]) if kept[0] == stamp else None
            if ranking is not None:
                out.ranking = ranking
                out.reused = len(sigs)
                return out
            index.load(cache_path(ctx))
            out, sigs, pending = _walk(ctx, index, path, switches, read=True)
            stamp = fingerprint(sigs, out.path)
        _parse(index, out, pending, now)
        known = index.rankings.get(key)
        if known is not None and known[0] == stamp:
            out.ranking = known[1]
        else:
            out.ranking = rank(out.files)
            if all(settled(sig, now) for _, sig in sigs):
                index.rankings[key] = (stamp, out.ranking)
                if not whole:
                    _keep_ranking(ctx, index, key, stamp, out.ranking)
        if not out.scan_limited:
            index.forget({rel for rel, _ in sigs}, out.path)
        if index.dirty:
            index.save(cache_path(ctx))
        _keep(ctx, index)
    return out


def fingerprint(sigs: list[tuple[str, Signature]], path: str) -> bytes:
    """What a map's ranking depends on: the walk's files, their signatures, the grammars."""
    import hashlib
    import marshal

    languages = sorted({language.name for language in (language_for(rel) for rel, _ in sigs)
                        if language is not None})
    grammars = [grammar_stamp(name) for name in languages]
    # marshal version 2 writes no back-references, whose use depends on reference counts:
    # equal values give equal bytes
    return hashlib.blake2b(marshal.dumps((path, sigs, grammars), 2), digest_size=20).digest()


def _keep_ranking(ctx: Context, index: CodeIndex, key: tuple[object, ...], stamp: bytes,
                  ranking: Ranking) -> None:
    kept = index.kept_rankings
    kept.pop(key, None)
    while len(kept) >= KEPT_RANKINGS:
        kept.pop(next(iter(kept)))
    kept[key] = (stamp, ranking.cut(KEPT_CANDIDATES).to_data())
    index.save_rankings(os.path.join(ctx.state_path(), RANKINGS_NAME))


def _walk(ctx: Context, index: CodeIndex, path: str,
          switches: tuple[bool, bool, tuple[str, ...] | None], *, read: bool
          ) -> tuple[DirectoryTags, list[tuple[str, Signature]],
                     list[tuple[int, Signature, Language, bytes]]]:
    """Walk ``path``: each file with symbols, its signature, and (``read``) its record from the
    index or, for a file not in it, its bytes to parse."""
    walk = Walk(ctx.workspace, path, max_depth=MAX_DEPTH, max_entries=SCAN_CAP,
                include_hidden=switches[0], include_ignored=switches[1],
                exclude_dirs=switches[2], with_stat=False, cache=ctx.search_cache)
    out = DirectoryTags(walk.rel, walk.skipped)
    sigs: list[tuple[str, Signature]] = []
    pending: list[tuple[int, Signature, Language, bytes]] = []
    tick = ctx.ticker("files mapped")
    try:
        for entry in walk:
            if entry.kind != "file":
                continue
            dir_fd = walk.parent_fd
            language = _language(dir_fd, entry.name)
            if language is None or not language.has_symbols:
                out.other_files += 1
                continue
            if tick is not None:
                tick(len(sigs))
            sig = entry.sig
            if sig is None:
                try:
                    st = os.stat(entry.name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    walk.skipped.unreadable += 1
                    continue
                sig = signature(st)
            if sig[2] > MAX_FILE_BYTES:
                walk.skipped.too_large += 1
                continue
            sigs.append((entry.rel, sig))
            if not read:
                continue
            tags = index.get(entry.rel, sig)
            if tags is not None:
                out.files.append((entry.rel, tags))
                continue
            got = _read(dir_fd, entry.name)
            if got is None or len(got[0]) > MAX_FILE_BYTES:
                walk.skipped.unreadable += got is None
                walk.skipped.too_large += got is not None
                sigs.pop()
                continue
            pending.append((len(out.files), got[1], language, got[0]))
            out.files.append((entry.rel, ("", (), (), False)))
    finally:
        walk.close()
    out.scan_limited = walk.truncated
    out.notes = walk.notes()
    return out, sigs, pending


def _parse(index: CodeIndex, out: DirectoryTags,
           pending: list[tuple[int, Signature, Language, bytes]], now: int) -> None:
    parsed = parse_many([(language, data) for _, _, language, data in pending])
    lost: set[int] = set()
    for (position, sig, _, _), tags in zip(pending, parsed, strict=True):
        if tags is None:
            lost.add(position)
            continue
        rel = out.files[position][0]
        out.files[position] = (rel, tags)
        index.put(rel, sig, tags, now)
    if lost:
        out.skipped.unreadable += len(lost)
        out.files = [item for i, item in enumerate(out.files) if i not in lost]
    out.parsed = len(pending) - len(lost)
    out.reused = len(out.files) - out.parsed
