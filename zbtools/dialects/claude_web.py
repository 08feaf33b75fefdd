"""Claude Code's ``WebFetch`` and ``WebSearch`` (docs/dialects.md), and what the ``claude``
module, where every tool's declaration is, shares with them.

* ``invalid`` (an ``invalid_arguments`` error with its one problem), ``canonical_spec`` and
  ``call_canonical`` (one canonical tool's call inside a dialect tool's): what both use.
* ``WebFetchParams``, ``web_fetch``, ``web_fetch_result``: the page itself is the response (no
  small model runs on it here).
* ``WebSearchParams``, ``web_search``, ``web_search_result``: web_search with Claude's
  ``allowed_domains``/``blocked_domains`` applied to the results.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.toolspec import apply_call_limits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.toolspec import ToolSpec


def invalid(message: str, hint: str, argument: str,
            problem: str = "invalid_combination") -> ToolError:
    return ToolError("invalid_arguments", message, hint=hint, details={"problems": [
        {"problem": problem, "argument": argument, "message": message}]})


def canonical_spec(name: str) -> ToolSpec:
    from zbtools.registry import find

    spec = find(name)
    if spec is None:  # pragma: no cover - tools() lists a tool only when its target exists
        raise ToolError("unknown_tool", f"{name} is not available in this zbtools")
    return spec


def call_canonical(ctx: Context, name: str, args: dict[str, Any]) -> Any:
    """Run the canonical tool ``name`` inside a dialect tool's call."""
    from zbtools.core.call.args import validate

    spec = canonical_spec(name)
    params = validate(spec.params, args)
    apply_call_limits(params, ctx)
    return spec.run(params, ctx)


class WebFetchParams(Struct):
    url: str = field(help="The URL to fetch content from")
    prompt: str = field(help="The prompt to run on the fetched content")


class WebSearchParams(Struct):
    query: str = field(help="The search query to use")
    allowed_domains: list[str] | None = field(default=None, help="Only include search results "
                                              "from these domains")
    blocked_domains: list[str] | None = field(default=None, help="Never include search results "
                                              "from these domains")


def web_fetch(params: WebFetchParams, out: dict[str, Any]) -> None:
    out.pop("prompt", None)  # no model runs here: the page itself is the response


def web_fetch_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    out["response"] = result.get("content", "")
    out["status_code"] = result.get("status")
    return out


def _domain(value: str) -> str:
    host = value.strip().lower()
    for prefix in ("https://", "http://"):
        host = host.removeprefix(prefix)
    return host.split("/", 1)[0].removeprefix("*.").removeprefix(".").removeprefix("www.")


def _on(url: str, domains: list[str]) -> bool:
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    except ValueError:
        return False
    return any(host == d or host.endswith("." + d) for d in domains if d)


def web_search(params: WebSearchParams, ctx: Context) -> Struct:
    if len(params.query.strip()) < 2:
        raise invalid("query must be at least 2 characters", "give the words to search for",
                       "query", problem="out_of_range")
    allowed = [_domain(d) for d in params.allowed_domains or []]
    blocked = [_domain(d) for d in params.blocked_domains or []]
    filtering = bool(allowed or blocked)
    result = call_canonical(ctx, "web_search", {"query": params.query,
                                       **({"max_results": 25} if filtering else {})})
    if filtering:
        kept = [r for r in result.results if (not allowed or _on(r.get("url", ""), allowed))
                and not _on(r.get("url", ""), blocked)][:10]
        result.results = kept
        result.count = len(kept)
    return result  # type: ignore[no-any-return]


def web_search_result(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    out["total_results"] = result.get("count", 0)
    return out
