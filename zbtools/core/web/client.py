"""HTTP fetching for web_fetch and web_search: guarded connections, redirects, caps, conversion.

Every connection goes through ``GuardedBackend``, which resolves the host itself, vets every
address (``zbtools.core.web.ssrf``) and connects to a vetted address, never to the name, so DNS
rebinding cannot redirect it; TLS still verifies the original host name; proxies from the
environment are not used; redirects are followed one hop at a time through the same guard
(docs/media-and-web.md). Bodies are streamed under a byte cap (``download_truncated``) and a
deadline checked between chunks. Text is decoded by the Content-Type charset, a BOM, an HTML
``<meta charset>``, strict UTF-8, then charset-normalizer's guess; HTML becomes Markdown.
JavaScript rendering uses a local headless Chromium pinned to the vetted address; it cannot
stop a script from requesting an IP literal, so it runs only for pages that look
script-generated or on request.

Map: ``fetch`` and ``Fetched``, ``blocked_error``; ``decode_text``, ``is_html``, ``is_text``;
``html_to_markdown``, ``Converted``, ``tidy``; ``find_chromium``, ``render_dom``.
"""

from __future__ import annotations

import os
import time

from zbtools.contract import ToolError
from zbtools.core.call.optional import require
from zbtools.core.web.ssrf import BlockedAddress, Policy, vet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from zbtools.core.call.config import WebSettings

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("application/json", "application/xml", "application/javascript",
              "application/x-javascript", "application/ecmascript", "application/yaml",
              "application/x-yaml", "application/toml", "application/x-sh",
              "application/sql", "application/graphql", "application/ld+json",
              "application/x-ndjson", "application/rss+xml", "application/atom+xml")


class Fetched:
    """One response body and how it was obtained."""

    def __init__(self) -> None:
        self.url = ""
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.download_truncated = False
        self.redirects: list[str] = []
        self.address = ""  # the vetted address the final response came from

    @property
    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip("\"'")
        return None


def _transport(policy: Policy, resolver: Callable[..., list[tuple[Any, ...]]] | None,
               addresses: dict[str, str], deadline: float) -> Any:
    """An httpx transport whose every TCP connection goes to an address ``vet`` approved, and
    whose every socket operation (connect, TLS handshake, each read and write, headers as well
    as body) is given at most the time left before ``deadline``: a server that trickles bytes
    cannot stretch the call beyond its timeout."""
    import socket

    httpx = require("httpx", "web_fetch")
    httpcore = require("httpcore", "web_fetch")
    certifi = require("certifi", "web_fetch")

    def left(timeout: float | None, expired: type[Exception]) -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise expired("the overall deadline passed")
        return remaining if timeout is None else min(timeout, remaining)

    class DeadlineStream(httpcore.NetworkStream):  # type: ignore[misc, name-defined]
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = self.stream.read(max_bytes, left(timeout, httpcore.ReadTimeout))
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self.stream.write(buffer, left(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self.stream.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            return DeadlineStream(self.stream.start_tls(
                ssl_context, server_hostname, left(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self.stream.get_extra_info(info)

    class GuardedBackend(httpcore.SyncBackend):  # type: ignore[misc, name-defined]
        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: Any = None) -> Any:
            try:
                vetted = vet(host, port, policy, resolver)
            except socket.gaierror as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from exc
            except UnicodeError as exc:
                raise httpcore.ConnectError(f"invalid host name {host!r}") from exc
            failure: Exception | None = None
            for ip in vetted:
                try:
                    stream = super().connect_tcp(str(ip), port,
                                                 left(timeout, httpcore.ConnectTimeout),
                                                 local_address, socket_options)
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    failure = exc
                    continue
                addresses[host] = str(ip)
                return DeadlineStream(stream)
            assert failure is not None
            raise failure

    import ssl

    transport = httpx.HTTPTransport(trust_env=False, retries=0)
    # httpx does not expose the network backend; the pool is rebuilt with the guarded one
    # (tests/tools/test_web.py proves every connection goes through it).
    assert hasattr(transport, "_pool")
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl.create_default_context(cafile=certifi.where()),
        network_backend=GuardedBackend(), retries=0)
    return transport


def blocked_error(exc: BlockedAddress, url: str) -> ToolError:
    return ToolError("blocked_address", f"refused to connect to {exc.host}: it resolves to "
                     f"{exc.address} ({exc.reason})", hint="web_fetch only reaches public "
                     "addresses; to allow this one on purpose add the host or network to "
                     "[web] allow in the config file or to ZBTOOLS_WEB_ALLOW",
                     details={"url": url, "host": exc.host, "address": exc.address,
                              "reason": exc.reason})


def fetch(url: str, settings: WebSettings, *, timeout: float, accept: str = "*/*",
          extra_allow: tuple[str, ...] = (), max_bytes: int | None = None,
          resolver: Callable[..., list[tuple[Any, ...]]] | None = None) -> Fetched:
    """GET ``url`` following redirects hop by hop, every connection through the SSRF guard."""
    httpx = require("httpx", "web_fetch")
    policy = Policy([*settings.allow, *extra_allow])
    cap = max_bytes if max_bytes is not None else settings.max_download_bytes
    deadline = time.monotonic() + timeout
    addresses: dict[str, str] = {}
    out = Fetched()
    built = False
    current = _check_url(url)
    # only codings decoded here, with a bound on the output (``_read_capped``)
    headers = {"User-Agent": settings.user_agent, "Accept": accept,
               "Accept-Encoding": "gzip, deflate"}
    try:
        with httpx.Client(transport=_transport(policy, resolver, addresses, deadline),
                          follow_redirects=False, trust_env=False, headers=headers,
                          timeout=httpx.Timeout(timeout)) as client:
            for _hop in range(settings.max_redirects + 1):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise httpx.TimeoutException("deadline")
                request = client.build_request("GET", current,
                                               timeout=httpx.Timeout(left))
                built = True  # from here on, an invalid URL comes from the server
                response = client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        try:
                            joined = str(response.url.join(location))
                        except httpx.InvalidURL as exc:
                            raise ToolError("fetch_failed", f"{current}: redirects to an "
                                            f"invalid URL {location!r}: {exc}",
                                            hint="the site's redirect is broken; try another "
                                            "URL", details={"url": current,
                                                            "location": location}) from exc
                        target = _check_url(joined, hop=current)
                        out.redirects.append(target)
                        current = target
                        continue
                    out.url = str(response.url)
                    out.status = response.status_code
                    out.headers = {k.lower(): v for k, v in response.headers.items()}
                    out.address = addresses.get(response.url.host, "")
                    out.body, out.download_truncated = _read_capped(response, cap, deadline,
                                                                    httpx)
                    return out
                finally:
                    response.close()
    except BlockedAddress as exc:
        raise blocked_error(exc, current) from exc
    except httpx.InvalidURL as exc:  # from httpx's own parser, stricter than urlsplit
        if built:
            raise ToolError("fetch_failed", f"{current}: an invalid redirect: {exc}",
                            hint="the site's redirect is broken; try another URL",
                            details={"url": current}) from exc
        raise ToolError("invalid_arguments", f"not a valid URL: {url!r} ({exc})",
                        hint="give an http:// or https:// URL with a valid host name or "
                        "IP address", details={"url": url}) from exc
    except httpx.TimeoutException as exc:
        raise ToolError("timeout", f"{current}: no complete answer within {timeout:g} s",
                        hint="try again later, or pass a larger timeout",
                        details={"url": current, "timeout": timeout}) from exc
    except httpx.HTTPError as exc:
        raise ToolError("fetch_failed", f"{current}: {exc or type(exc).__name__}",
                        hint="check the URL; the host may be down or unreachable",
                        details={"url": current}) from exc
    raise ToolError("fetch_failed", f"{url}: more than {settings.max_redirects} redirects",
                    hint="the site redirects in a loop, or too often; try the last URL",
                    details={"url": url, "redirects": out.redirects})


def _check_url(url: str, hop: str | None = None) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise ToolError("invalid_arguments", f"not a valid URL: {url!r}") from exc
    where = f" (redirected from {hop})" if hop else ""
    if parts.scheme.lower() not in ("http", "https"):
        raise ToolError("fetch_failed" if hop else "invalid_arguments",
                        f"{url}{where}: only http and https URLs are fetched",
                        hint="give an http:// or https:// URL", details={"url": url})
    if not parts.hostname:
        raise ToolError("invalid_arguments", f"{url}{where}: the URL has no host",
                        details={"url": url})
    return url.strip()


def _read_capped(response: Any, cap: int, deadline: float, httpx: Any) -> tuple[bytes, bool]:
    """At most ``cap`` bytes of the decoded body. The raw stream is decoded here, never by
    httpx, so a compression bomb is inflated only up to the cap (``max_length``), and a
    coding that cannot be bounded (stacked or unknown codings) is refused."""
    inflate = _decoder(response.headers.get("content-encoding", ""), response)
    parts: list[bytes] = []
    total = 0
    for chunk in response.iter_raw():
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("deadline")
        data = inflate(chunk, cap - total + 1) if inflate else chunk
        parts.append(data)
        total += len(data)
        if total > cap:
            return b"".join(parts)[:cap], True
    return b"".join(parts), False


def _decoder(content_encoding: str, response: Any) -> Callable[[bytes, int], bytes] | None:
    """A bounded decoder for the response's Content-Encoding (gzip or deflate), or None."""
    import zlib

    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    url = str(response.url)
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise ToolError("fetch_failed", f"{url}: the body uses the content encoding "
                        f"{content_encoding!r}, which web_fetch does not decode",
                        hint="only gzip and deflate are accepted (and asked for); the server "
                        "ignored Accept-Encoding", details={"url": url,
                                                            "content_encoding": content_encoding})
    state: dict[str, Any] = {"z": None, "pending": b""}

    def inflate(chunk: bytes, room: int) -> bytes:
        data = state["pending"] + chunk
        if state["z"] is None:
            if codings[0] != "deflate":
                state["z"] = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif len(data) < 2:
                state["pending"] = data
                return b""
            else:  # "deflate" is zlib-wrapped by the standard, raw by some servers
                wrapped = (data[0] & 0x0F) == 8 and ((data[0] << 8) | data[1]) % 31 == 0
                state["z"] = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            state["pending"] = b""
        try:
            out: bytes = state["z"].decompress(data, max(room, 1))
        except zlib.error as exc:
            raise ToolError("fetch_failed", f"{url}: the {codings[0]}-compressed body is "
                            f"corrupt ({exc})", hint="the server sent a broken response; try "
                            "again later", details={"url": url}) from exc
        return out

    return inflate


# ---- decoding and conversion -------------------------------------------------------------------


def is_html(media_type: str, body: bytes) -> bool:
    if media_type in HTML_TYPES:
        return True
    if media_type:
        return False
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def is_text(media_type: str, body: bytes) -> bool:
    if media_type.startswith("text/") or media_type in TEXT_TYPES:
        return True
    if media_type.endswith(("+json", "+xml")):
        return True
    if not media_type:
        return b"\x00" not in body[:8192]
    return False


def decode_text(body: bytes, charset: str | None, html: bool) -> tuple[str, str]:
    """The text and the charset used (header, BOM, meta, UTF-8, detected)."""
    import codecs

    for bom, name in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"),
                      (b"\xfe\xff", "utf-16")):
        if body.startswith(bom):
            return body.decode(name, "replace"), name.replace("-sig", "")
    candidates: list[str | None] = [charset] if charset else []
    if html:
        candidates.append(_meta_charset(body[:4096]))
    declared: str | None = None
    for candidate in [*candidates, "utf-8"]:
        if not candidate:
            continue
        try:
            codec = codecs.lookup(candidate).name
        except LookupError:
            continue
        if codec in ("utf-16", "utf-32"):
            continue  # no BOM: a wrong label; the guesses below do better
        declared = declared or codec
        if _decodes(body, codec):  # a wrong label (latin-1 sent as utf-8) is not trusted
            return body.decode(codec, "replace"), codec
    from charset_normalizer import from_bytes

    best = from_bytes(body[:200_000]).best()
    if best is not None:
        return body.decode(best.encoding, "replace"), best.encoding
    codec = declared or "utf-8"
    return body.decode(codec, "replace"), codec


def _decodes(body: bytes, codec: str) -> bool:
    """``body`` decodes strictly with ``codec``, an incomplete last character allowed (a body
    cut at max_download_bytes may end inside one)."""
    import codecs

    try:
        codecs.getincrementaldecoder(codec)("strict").decode(body, final=False)
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def _meta_charset(head: bytes) -> str | None:
    import re

    match = re.search(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", head,
                      re.IGNORECASE)
    return match.group(1).decode("ascii") if match else None


class Converted:
    def __init__(self, title: str | None, markdown: str, script_weight: int) -> None:
        self.title = title
        self.markdown = markdown
        self.script_weight = script_weight  # inline script characters, 1000 per external one

    @property
    def looks_script_rendered(self) -> bool:
        """Little visible text and more script than text: probably built by JavaScript."""
        visible = len(self.markdown.strip())
        return visible < 500 and self.script_weight > 2 * visible


def html_to_markdown(html: str, base_url: str) -> Converted:
    from urllib.parse import urljoin

    bs4 = require("bs4", "converting HTML")
    markdownify = require("markdownify", "converting HTML")
    soup = bs4.BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    scripts = sum(1000 if tag.get("src") else len(tag.get_text())
                  for tag in soup.find_all("script"))
    for tag in soup(["script", "style", "noscript", "template", "iframe", "object", "embed",
                     "canvas", "svg", "head", "link", "meta"]):
        tag.decompose()
    for attribute, tags in (("href", ("a",)), ("src", ("img",))):
        for tag in soup.find_all(tags):
            value = tag.get(attribute)
            if isinstance(value, str) and value and not value.startswith(("data:", "#")):
                try:
                    tag[attribute] = urljoin(base_url, value)
                except ValueError:
                    pass
    converter = markdownify.MarkdownConverter(heading_style="ATX", bullets="-",
                                              escape_underscores=False, escape_asterisks=False)
    markdown = converter.convert_soup(soup)
    return Converted(title or None, tidy(markdown), scripts)


def tidy(text: str) -> str:
    """Trailing spaces off, runs of blank lines down to one."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip() + "\n" if out else ""


# ---- headless Chromium -------------------------------------------------------------------------


def find_chromium(settings: WebSettings, env: Mapping[str, str]) -> str | None:
    import shutil

    path = env.get("PATH", os.defpath)
    if settings.chromium:
        return shutil.which(settings.chromium, path=path)
    for name in CHROMIUM_NAMES:
        found = shutil.which(name, path=path)
        if found:
            return found
    return None


def render_dom(executable: str, url: str, host: str, address: str, timeout: float,
               cap: int, env: Mapping[str, str]) -> str:
    """The DOM of ``url`` after scripts ran, from ``chromium --headless --dump-dom``."""
    import subprocess
    import tempfile

    pin = f"MAP {host} {address}, MAP * ~NOTFOUND" if address else "MAP * ~NOTFOUND"
    with tempfile.TemporaryDirectory(prefix="zbtools-chromium-") as profile:
        argv = [executable, "--headless", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--mute-audio", f"--user-data-dir={profile}",
                f"--host-resolver-rules={pin}", "--virtual-time-budget=5000"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.append("--no-sandbox")  # Chromium refuses to start as root otherwise
        argv += ["--dump-dom", url]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False,
                                  env=dict(env), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise ToolError("timeout", f"headless Chromium did not render {url} within "
                            f"{timeout:g} s", hint="use render: never for the static HTML",
                            details={"url": url}) from exc
        except OSError as exc:
            raise ToolError("render_unavailable", f"cannot run {executable}: {exc.strerror}",
                            hint="use render: never for the static HTML") from exc
    if done.returncode != 0 or not done.stdout.strip():
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise ToolError("fetch_failed", f"headless Chromium failed to render {url} "
                        f"(exit {done.returncode})", hint="use render: never for the static "
                        "HTML", details={"url": url, "stderr": tail})
    return done.stdout[:cap].decode("utf-8", "replace")
