"""Search the web through a SearXNG instance and return results with title, url, snippet and
engine (default 10, at most 25). Failure modes: not_configured, timeout, http_error,
fetch_failed, missing_dependency.

The instance is set with ``ZBTOOLS_SEARXNG_URL`` or ``[web] searxng_url`` in the config file,
e.g. ``http://localhost:8888``; its JSON API (``/search?format=json``) must be enabled in its
``settings.yml`` (``search: formats: [html, json]``). The instance's own host is trusted (it may
be on loopback or a private network); everything else about the connection is as for web_fetch
(timeouts, size cap, redirects re-checked). ``categories`` (comma-separated: general, news, it,
science, images, ...) and ``language`` (``en``, ``de-CH``, ...) are passed to SearXNG;
``page`` asks for later result pages. ``max_results`` above 25 is lowered to 25 with a warning.
Also returned: the instance's suggestions and direct answers, when it has any.

Failure modes: ``not_configured`` (no instance set; the hint gives the setup steps),
``http_error`` (403: the instance does not allow the JSON format; 429: its rate limiter),
``fetch_failed`` (unreachable, or the answer is not SearXNG JSON), ``timeout``,
``missing_dependency`` (httpx absent from the install), ``usage_error`` (a bad ``[web]``
setting).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context

DEFAULT_RESULTS = 10
MAX_RESULTS = 25
MAX_SNIPPET = 600
SETUP = ("run a SearXNG instance (for example: docker run -d -p 8888:8080 searxng/searxng), "
         "enable JSON output in its settings.yml (search: formats: [html, json]), then set "
         "ZBTOOLS_SEARXNG_URL=http://localhost:8888 or, in the config file, [web] "
         "searxng_url = \"http://localhost:8888\"")


class Params(Struct):
    query: str = field(aliases=("q", "search_term"), help="The search query")
    max_results: int = field(default=DEFAULT_RESULTS, minimum=1,
                             aliases=("limit", "num_results", "count"),
                             help="Most results to return (default 10, at most 25)")
    categories: str | None = field(default=None,
                                   help="SearXNG categories, comma-separated (e.g. general,it)")
    language: str | None = field(default=None, help="Result language, e.g. en or de-CH")
    page: int = field(default=1, minimum=1, help="Result page (1 = the first)")
    timeout: float | None = field(default=None, minimum=0.1,
                                  help="Seconds for the request (default [web] timeout, 30)")


class Result(Struct):
    query: str = field(help="The query as sent")
    results: list[dict[str, Any]] = field(
        help="Each result: title, url, snippet, engine, engines")
    count: int = field(help="Results returned")
    suggestions: list[str] = field(help="Query suggestions from the instance")
    answers: list[str] = field(help="Direct answers from the instance")
    instance: str = field(help="The SearXNG instance queried")


def search_url(base: str, params: Params) -> str:
    from urllib.parse import urlencode, urlsplit

    base = base.strip()
    if not urlsplit(base).scheme:
        base = f"http://{base}"
    base = base.rstrip("/")
    if not base.endswith("/search"):
        base += "/search"
    query: dict[str, str] = {"q": params.query, "format": "json"}
    if params.categories:
        query["categories"] = ",".join(c.strip() for c in params.categories.split(",")
                                       if c.strip())
    if params.language:
        query["language"] = params.language
    if params.page > 1:
        query["pageno"] = str(params.page)
    return f"{base}?{urlencode(query)}"


def run(params: Params, ctx: Context) -> Result:
    from urllib.parse import urlsplit

    from zbtools.core.call.config import load_web_settings
    from zbtools.core.call.fastjson import loads_strict
    from zbtools.core.web.client import fetch

    if not params.query.strip():
        raise ToolError("invalid_arguments", "the query is empty", hint="give search terms")
    settings = load_web_settings(ctx.env)
    if not settings.searxng_url:
        raise ToolError("not_configured", "web_search needs a SearXNG instance and none is "
                        "configured", hint=SETUP,
                        details={"env": "ZBTOOLS_SEARXNG_URL", "config": "[web] searxng_url"})
    url = search_url(settings.searxng_url, params)
    host = urlsplit(url).hostname or ""
    wanted = params.max_results
    if wanted > MAX_RESULTS:
        ctx.warn(f"max_results {wanted} was lowered to the hard cap of {MAX_RESULTS}")
        wanted = MAX_RESULTS
    timeout = min(params.timeout or settings.timeout, settings.max_timeout)
    page = fetch(url, settings, timeout=timeout, accept="application/json",
                 extra_allow=(host,), max_bytes=min(settings.max_download_bytes, 8 << 20))
    if page.status >= 400:
        hint = ("the instance refuses JSON: add json to search.formats in its settings.yml"
                if page.status == 403 else "check the instance's URL and that it is running; "
                "429: it is rate-limiting (its limiter setting)")
        raise ToolError("http_error", f"SearXNG at {settings.searxng_url} answered HTTP "
                        f"{page.status}", hint=hint,
                        details={"url": page.url, "status": page.status})
    try:
        data = loads_strict(page.body.decode("utf-8", "replace"))
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ToolError("fetch_failed", f"{page.url}: the answer is not SearXNG JSON",
                        hint="check that searxng_url points at a SearXNG instance with the "
                        "JSON format enabled", details={"url": page.url,
                                                        "content_type": page.media_type})
    results = [_result(r) for r in data["results"] if isinstance(r, dict) and r.get("url")]
    results = results[:wanted]
    return Result(query=params.query, results=results, count=len(results),
                  suggestions=[str(s) for s in data.get("suggestions") or []][:10],
                  answers=[_answer(a) for a in data.get("answers") or []][:5],
                  instance=settings.searxng_url)


def _text(value: Any, cap: int) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= cap else text[:cap - 1] + "…"


def _result(item: dict[str, Any]) -> dict[str, Any]:
    engines = item.get("engines")
    engines = [str(e) for e in engines] if isinstance(engines, list) else []
    engine = item.get("engine") or (engines[0] if engines else None)
    return {"title": _text(item.get("title"), 300), "url": str(item.get("url")),
            "snippet": _text(item.get("content"), MAX_SNIPPET),
            "engine": str(engine) if engine else None, "engines": engines}


def _answer(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("answer") or value.get("content") or ""
    return _text(value, MAX_SNIPPET)


def render(result: Result) -> str:
    if not result.results:
        out = f"no results for {result.query!r}\n"
    else:
        out = ""
        for number, item in enumerate(result.results, 1):
            engine = f" [{item['engine']}]" if item.get("engine") else ""
            out += f"{number}. {item['title']}{engine}\n   {item['url']}\n"
            if item.get("snippet"):
                out += f"   {item['snippet']}\n"
    if result.answers:
        out += "".join(f"answer: {a}\n" for a in result.answers)
    if result.suggestions:
        out += f"suggestions: {', '.join(result.suggestions)}\n"
    return out


TOOL = ToolSpec(
    name="web_search",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="query",
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="web",
)
