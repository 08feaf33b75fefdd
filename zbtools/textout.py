"""The ``--format text`` rendering: what an agent harness puts into the conversation.

Successful results use the tool's own renderer (numbered lines for reads, one line for writes);
tools without one get ``key: value`` lines. Errors become ``error[code]: message`` plus the hint
and each listed problem. Warnings follow as ``warning: ...`` lines. The whole rendering then goes
through the result limits of docs/configuration.md#limits: beyond 50 KB or 2000 lines it is cut to
its head and tail, and the full text is kept in a spill file named in the notice.

The reading tools fill a page up to those limits themselves (2000 numbered lines by default) and
add a footer and warnings; so that a full page is not cut by this safety net, a rendering at most
``NOTICE_LINES`` lines and ``NOTICE_BYTES`` bytes over the limits is let through whole.

Shared by the dispatcher and the surfaces (batch, MCP, human), so it sits below them: imports
only ``zbtools.core``.
"""

from __future__ import annotations

from zbtools.core.call.truncate import count_lines, cut_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.toolspec import ToolSpec

NOTICE_LINES = 8  # footer and warning lines a full page may carry beyond max_lines
NOTICE_BYTES = 4096

# a value written after a parameter in a hint or a notice: a number, a JSON word, a list or
# object, a quoted string
_VALUE = r"""-?\d+(?:\.\d+)?|true|false|null|\[[^\]]*\]|\{[^}]*\}|"[^"]*"|'[^']*'"""


def as_flags(text: str, names: Iterable[str]) -> str:
    """``text`` (a hint, a warning, a notice) with the parameters ``names`` written as the
    command line takes them, for a person at a shell: ``offset=3`` or ``offset: 3`` ->
    ``--offset 3``, ``include_hidden: true`` -> ``--include-hidden``, ``false`` ->
    ``--no-...``, ``exclude_dirs: []`` -> ``--exclude-dirs '[]'``; a name with an underscore
    alone, or a one-word name after "raise", -> ``--head-limit``. The text a model reads
    (``--format text``, JSON) keeps the JSON words it calls with (docs/shell.md#notices)."""
    import re

    listed = sorted(set(names), key=len, reverse=True)
    if not listed:
        return text
    from zbtools.core.call.wording import NAME_AFTER as after
    from zbtools.core.call.wording import NAME_BEFORE as before

    alternatives = "|".join(map(re.escape, listed))

    def valued(match: re.Match[str]) -> str:
        flag = "--" + match.group(1).replace("_", "-")
        value = match.group(2)
        if value == "true":
            return flag
        if value == "false":
            return "--no-" + flag[2:]
        if value[:1] in "[{":
            return f"{flag} '{value}'"
        return f"{flag} {value}"

    text = re.sub(before + f"({alternatives})(?:=|: )({_VALUE})", valued, text)
    underscored = "|".join(map(re.escape, (n for n in listed if "_" in n)))
    if underscored:
        text = re.sub(before + f"({underscored})" + after,
                      lambda m: "--" + m.group(1).replace("_", "-"), text)
    return re.sub(f"(?<=raise )({alternatives})" + after, lambda m: "--" + m.group(1), text)


def shell_envelope(envelope: dict[str, Any], spec: ToolSpec | None, tool: str | None
                   ) -> dict[str, Any]:
    """``envelope`` as a person at a shell reads it: the error's hint and the warnings name the
    canonical tool's parameters as flags (``as_flags``). A dialect's tool keeps its words."""
    if spec is None or tool not in spec.names:
        return envelope
    names = list(spec.params.fields())
    shown = dict(envelope)
    if shown.get("warnings"):
        shown["warnings"] = [as_flags(str(w), names) for w in shown["warnings"]]
    error = shown.get("error")
    if isinstance(error, dict) and isinstance(error.get("hint"), str):
        shown["error"] = dict(error, hint=as_flags(error["hint"], names))
    return shown


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json  # not at the top: a text rendering rarely needs it (a cold call's start-up)

    return json.dumps(value, ensure_ascii=False)


def default_render(result: dict[str, Any]) -> str:
    return "".join(f"{key}: {_plain(value)}\n" for key, value in result.items())


def render_error(error: dict[str, Any]) -> str:
    """``error[code]: message``, the hint, and the details a model needs to correct itself.

    The text is all a model sees (MCP clients pass it on; structuredContent often is not), so
    the details a hint relies on are rendered too: every listed problem, the candidates of an
    ambiguous edit with the line that tells each apart, and the diff against the closest
    candidate of an edit that found nothing.
    """
    out = f"error[{error['code']}]: {error['message']}\n"
    if error.get("hint"):
        out += f"hint: {error['hint']}\n"
    details = error.get("details") or {}
    problems = details.get("problems") or []
    if len(problems) > 1:
        out += "".join(f"  - {p['message']}\n" for p in problems)
    for cand in details.get("candidates") or []:
        if not isinstance(cand, dict) or "start_line" not in cand:
            continue
        first, last = cand["start_line"], cand.get("end_line", cand["start_line"])
        line = f"  - line {first}" if first == last else f"  - lines {first}-{last}"
        if "distinguishing_line" in cand:
            line += f" (line {cand['distinguishing_line']}: {cand['distinguishing_text']})"
        out += line + "\n"
    if isinstance(details.get("diff"), str) and details["diff"]:
        out += "closest match (- your old_text, + the file):\n" + details["diff"] + "\n"
    return out


def render_text(spec: ToolSpec | None, tool: str | None, envelope: dict[str, Any],
                result_obj: Any, ctx: Context | None) -> str:
    if not envelope["ok"]:
        return render_error(envelope["error"])
    if spec is not None and spec.render_text is not None and result_obj is not None:
        body = spec.render_text(result_obj)
    else:
        body = default_render(envelope["result"])
    body += "".join(f"warning: {w}\n" for w in envelope.get("warnings", []))
    if ctx is None:
        return body
    limits = ctx.limits
    if (count_lines(body) <= limits.max_lines + NOTICE_LINES
            and len(body.encode("utf-8", "surrogatepass")) <= limits.max_bytes + NOTICE_BYTES):
        return body
    spill = ctx.spill(tool or "result", body)
    cut = cut_text(body, max_bytes=limits.max_bytes, max_lines=limits.max_lines,
                   head_lines=limits.head_lines, tail_lines=limits.tail_lines,
                   how_to_continue="use --format json or narrower arguments", spill_path=spill)
    return cut.text
