"""What find_files and find_files_glob share: limits, the match type and its text form.

``Match`` is one file found (``to_match`` from a walk entry, its time by ``iso_utc``;
``path_match`` without size and time, for a text rendering);
``render_matches`` prints a list of them, ``found`` and ``match_paths`` are the shell forms
(``--exit-status``, ``--paths``). ``iso_utc`` is get_file_info's time format too.
"""

from __future__ import annotations

import time

from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.search.entries import Entry as WalkEntry
    from zbtools.core.search.entries import Skipped
    from zbtools.core.search.walk import Walk


_SECONDS: dict[int, str] = {}


def iso_utc(timestamp: float) -> str:
    """``2024-05-01T12:00:00.123456Z``; microseconds rounded (never a second off at .9999996)."""
    seconds, micros = divmod(round(timestamp * 1_000_000), 1_000_000)
    stem = _SECONDS.get(seconds)
    if stem is None:  # a listing's files mostly share a few seconds: format each one once
        if len(_SECONDS) > 4096:
            _SECONDS.clear()
        stem = _SECONDS[seconds] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{stem}.{micros:06d}Z"


DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
SCAN_CAP = 200_000
MAX_PATTERN = 1000
NO_CAP = 2**62  # limit 0


_new = object.__new__


class Match(Struct):
    path: str = field(help="Relative to the workspace root, POSIX separators")
    type: str = field(help="file, directory, symlink, fifo, socket, device")
    size: int | None = field(help="Size in bytes (null for directories)")
    modified: str = field(help="Last modification, ISO 8601 UTC (of a symlink itself)")


def to_match(entry: WalkEntry) -> Match:
    # every field, in order: what Struct.__init__ stores, at a third of its cost
    match = _new(Match)
    match.__dict__ = {"path": entry.rel, "type": entry.kind, "size": entry.size,
                      "modified": iso_utc(entry.mtime)}
    return match


def path_match(entry: WalkEntry) -> Match:
    """A match without its size and time, for a call that shows only the text rendering
    (``Context.text_only``): it shows neither, and they cost a stat per match."""
    match = _new(Match)
    match.__dict__ = {"path": entry.rel, "type": entry.kind, "size": None, "modified": ""}
    return match


def wanted_type(kind: str, want: str) -> bool:
    if want == "any":
        return True
    return (kind == "directory") == (want == "directory")


def loop_warning(walk: Walk, ctx: Context) -> None:
    """Directory loops not entered again, and directories beyond the depth cap, as warnings."""
    for note in walk.notes():
        ctx.warn(note)


def skipped_note(skipped: Skipped, count: int) -> str:
    """``[0 matches; skipped: 3 ignored; to search them: include_ignored: true]`` and friends."""
    lead = "0 matches; " if not count else ""
    described = skipped.describe()
    if not described:
        return f"[{lead.removesuffix('; ')}]\n" if lead else ""
    return f"[{lead}skipped: {described}{skipped.remedy('search')}]\n"


def render_matches(matches: list[Match], count: int, truncated: bool, scan_limited: bool,
                   skipped: Skipped) -> str:
    out = "".join(m.path + ("/" if m.type == "directory" else "") + "\n" for m in matches)
    if truncated:
        out += f"[showing the first {count} matches; raise limit or narrow the search]\n"
    if scan_limited:
        out += "[search stopped after 200000 entries: more matches may exist; search a " \
               "subdirectory]\n"
    return out + skipped_note(skipped, count)


def found(result: Any) -> int:
    """``--exit-status``: 0 when something matched, 1 when nothing did (rg's convention)."""
    return 0 if result.count else 1


def match_paths(result: Any) -> list[str]:
    """``--paths``: the matches' paths (a directory without a trailing slash)."""
    return [m.path for m in result.matches]
