"""Commands of the program that are not tools: ``zbtools tools`` (the list)."""

from __future__ import annotations

import json

from zbtools.contract import ToolError, success_envelope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.entry import Options, Streams


def run_command_word(command: str, rest: list[str], opts: Options, streams: Streams,
                     env: Mapping[str, str], fmt: str) -> int:
    if command != "tools":  # pragma: no cover - entry only dispatches known words
        raise ToolError("unknown_tool", f"unknown command {command!r}")
    if rest:
        raise ToolError("usage_error", f"`zbtools tools` takes no arguments, got {rest[0]!r}")
    from zbtools.registry import all_tools

    listing: list[dict[str, Any]] = [
        {"name": s.name, "aliases": list(s.aliases), "summary": s.summary,
         "read_only": s.read_only, "destructive": s.destructive,
         "idempotent": s.idempotent, "parallel_safe": s.parallel_safe}
               for s in all_tools()]
    if fmt == "json":
        envelope = success_envelope("tools", {"tools": listing}, truncated=False, warnings=[])
        streams.stdout.write(json.dumps(envelope, ensure_ascii=True) + "\n")
    else:
        width = max(len(t["name"]) for t in listing)
        for t in listing:
            names = t["name"] + (f" ({', '.join(t['aliases'])})" if t["aliases"] else "")
            streams.stdout.write(f"{names:<{width + 16}} {t['summary']}\n")
    streams.stdout.flush()
    return 0
