"""web_fetch and web_search against HTTP servers started here on loopback (no internet).

The page server answers on 127.0.0.1, which tests put on the allow-list (ZBTOOLS_WEB_ALLOW);
a second server on 127.0.0.2 plays an internal service that must never be reached: a redirect
from the allowed host to it is refused before any connection, and its hit counter proves it.
"""

from __future__ import annotations

import ipaddress
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import CliRunner
from zbtools.contract import ToolError
from zbtools.core.call.config import load_web_settings
from zbtools.core.web import ssrf

TEXT = ("--format", "text")
ALLOW = {"ZBTOOLS_WEB_ALLOW": "127.0.0.1"}
HUGE_BYTES = 30 * 1024 * 1024


class Server:
    def __init__(self, host: str, routes: dict[str, Any]) -> None:
        self.hits: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.hits.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                route = routes.get(urlsplit(self.path).path)
                if route is None:
                    self.reply(404, "text/plain", b"not here")
                    return
                route(self)

            def reply(self, status: int, ctype: str, body: bytes,
                      extra: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title>"
            f"<style>p {{color: red}}</style></head><body>{body}"
            "<script>console.log('tracking')</script></body></html>").encode()


@pytest.fixture
def internal() -> Iterator[Server]:
    """An 'internal service' on 127.0.0.2 that web_fetch must never reach."""
    server = Server("127.0.0.2", {"/secret": lambda h: h.reply(200, "text/plain", b"SECRET")})
    yield server
    server.close()


@pytest.fixture
def site(internal: Server) -> Iterator[Server]:
    def redirect(to: str, status: int = 302) -> Any:
        return lambda h: h.reply(status, "text/plain", b"", {"Location": to})

    def chain(h: Any) -> None:
        n = int(parse_qs(urlsplit(h.path).query).get("n", ["0"])[0])
        target = f"/chain?n={n - 1}" if n > 0 else "/page"
        h.reply(302, "text/plain", b"", {"Location": target})

    def huge(h: Any) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(HUGE_BYTES))
        h.end_headers()
        line = b"x" * 1023 + b"\n"
        try:
            for _ in range(HUGE_BYTES // 1024):
                h.wfile.write(line)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def slow(h: Any) -> None:
        site_server.release.wait(5)
        h.reply(200, "text/plain", b"finally")

    long_text = "".join(f"<p>paragraph {i} {'word ' * 20}</p>" for i in range(3000))
    routes = {
        "/page": lambda h: h.reply(200, "text/html; charset=utf-8", page(
            "Test page", '<h1>Hello</h1><p>Some <a href="/other">relative link</a> and '
            "caf\u00e9.</p><ul><li>one</li><li>two</li></ul>")),
        "/chain": chain,
        "/redirect-abs": redirect("{base}/page"),
        "/to-internal": redirect(f"{internal.base}/secret"),
        "/to-metadata": redirect("http://169.254.169.254/latest/meta-data/", 301),
        "/to-mapped": redirect(f"http://[::ffff:127.0.0.2]:{internal.port}/secret", 307),
        "/to-decimal": redirect(f"http://2130706434:{internal.port}/secret"),  # 127.0.0.2
        "/to-file": redirect("file:///etc/passwd"),
        "/loop": redirect("/loop"),
        "/huge": huge,
        "/slow": slow,
        "/long": lambda h: h.reply(200, "text/html", page("Long", long_text)),
        "/latin1": lambda h: h.reply(200, "text/html; charset=iso-8859-1",
                                     "<html><body><p>Gr\u00fc\u00dfe aus K\u00f6ln</p>"
                                     "</body></html>".encode("latin-1")),
        "/meta-charset": lambda h: h.reply(200, "text/html", (
            '<html><head><meta charset="windows-1252"></head><body><p>\u201cquoted\u201d'
            "</p></body></html>").encode("cp1252")),
        "/data.json": lambda h: h.reply(200, "application/json", b'{"a": [1, 2]}\n'),
        "/blob": lambda h: h.reply(200, "application/octet-stream", bytes(range(256)) * 4),
        "/gone": lambda h: h.reply(404, "text/html", b"<h1>Not Found</h1>"),
        "/spa": lambda h: h.reply(200, "text/html", b'<html><head><title>App</title></head>'
                                  b'<body><div id="root"></div><script src="/app.js"></script>'
                                  b"</body></html>"),
    }
    site_server = Server("127.0.0.1", routes)
    routes["/redirect-abs"] = redirect(f"{site_server.base}/page")
    yield site_server
    site_server.close()


def fetch(cli: CliRunner, url: str, env: dict[str, str] | None = None, **args: Any) -> Any:
    return cli("web_fetch", stdin={"url": url, **args}, env={**ALLOW, **(env or {})})


# ---- fetching and converting -------------------------------------------------------------------


def test_html_becomes_markdown(site: Server, cli: CliRunner) -> None:
    result = fetch(cli, f"{site.base}/page").result
    assert result["status"] == 200
    assert result["format"] == "markdown"
    assert result["title"] == "Test page"
    assert result["content_type"] == "text/html"
    assert result["charset"] == "utf-8"
    content = result["content"]
    assert content.startswith("# Hello\n")
    assert f"[relative link]({site.base}/other)" in content
    assert "café" in content
    assert "- one\n- two" in content
    assert "color: red" not in content and "tracking" not in content
    assert result["address"] == "127.0.0.1"
    assert result["rendered"] is False and result["render_note"] is None
    assert site.headers[-1]["host"] == f"127.0.0.1:{site.port}"


def test_the_text_rendering(site: Server, cli: CliRunner) -> None:
    out = cli("web_fetch", "--url", f"{site.base}/page", *TEXT, env=ALLOW).out
    assert out.startswith(f"[{site.base}/page: HTTP 200, text/html]\n# Test page\n\n# Hello\n")


def test_redirects_are_followed_and_reported(site: Server, cli: CliRunner) -> None:
    result = fetch(cli, f"{site.base}/chain?n=3").result
    assert result["final_url"] == f"{site.base}/page"
    assert result["redirects"] == [f"{site.base}/chain?n=2", f"{site.base}/chain?n=1",
                                   f"{site.base}/chain?n=0", f"{site.base}/page"]
    assert fetch(cli, f"{site.base}/redirect-abs").result["title"] == "Test page"


def test_a_redirect_loop_stops(site: Server, cli: CliRunner) -> None:
    call = fetch(cli, f"{site.base}/loop", env={"ZBTOOLS_WEB_MAX_REDIRECTS": "3"})
    assert call.error["code"] == "fetch_failed"
    assert "redirects" in call.error["message"]
    assert site.hits.count("/loop") == 4


def test_charsets_from_the_header_and_from_meta(site: Server, cli: CliRunner) -> None:
    latin = fetch(cli, f"{site.base}/latin1").result
    assert latin["charset"] == "iso8859-1"
    assert "Grüße aus Köln" in latin["content"]
    meta = fetch(cli, f"{site.base}/meta-charset").result
    assert meta["charset"] == "cp1252"
    assert "\u201cquoted\u201d" in meta["content"]


def test_text_types_are_returned_as_is_and_binary_is_described(site: Server,
                                                               cli: CliRunner) -> None:
    data = fetch(cli, f"{site.base}/data.json").result
    assert data["format"] == "text" and data["content"] == '{"a": [1, 2]}\n'
    blob = fetch(cli, f"{site.base}/blob").result
    assert blob["format"] == "binary"
    assert "application/octet-stream, 1024 bytes" in blob["content"]
    assert "\x00" not in blob["content"]


def test_http_errors(site: Server, cli: CliRunner) -> None:
    call = fetch(cli, f"{site.base}/gone")
    assert call.code == 1
    assert call.error["code"] == "http_error"
    assert call.error["details"]["status"] == 404


def test_max_chars_cuts_and_offset_continues(site: Server, cli: CliRunner) -> None:
    first = fetch(cli, f"{site.base}/long", max_chars=5000).result
    assert len(first["content"]) == 5000
    assert first["truncated"] is True and first["next_offset"] == 5000
    assert first["total_chars"] > 300_000
    full = Path(first["full_output"]).read_text()
    assert full.startswith(first["content"])
    second = fetch(cli, f"{site.base}/long", max_chars=5000, offset=5000).result
    assert second["content"] == full[5000:10000]
    default = fetch(cli, f"{site.base}/long").result
    assert len(default["content"]) == 200_000


def test_max_chars_has_a_hard_cap(site: Server, cli: CliRunner) -> None:
    call = fetch(cli, f"{site.base}/page", max_chars=200_001)
    assert call.error["code"] == "invalid_arguments"


def test_a_huge_page_is_cut_while_streaming(site: Server, cli: CliRunner) -> None:
    started = time.monotonic()
    call = fetch(cli, f"{site.base}/huge", env={"ZBTOOLS_WEB_MAX_DOWNLOAD_BYTES": "1000000"})
    result = call.result
    assert result["download_truncated"] is True
    assert result["bytes"] == 1_000_000
    assert result["truncated"] is True and len(result["content"]) == 200_000
    assert any("max_download_bytes" in w for w in call.json["warnings"])
    assert time.monotonic() - started < 10


@pytest.mark.slow
def test_a_slow_page_times_out(site: Server, cli: CliRunner) -> None:
    started = time.monotonic()
    call = fetch(cli, f"{site.base}/slow", timeout=0.5)
    assert call.error["code"] == "timeout"
    assert time.monotonic() - started < 3
    call = fetch(cli, f"{site.base}/slow", env={"ZBTOOLS_WEB_TIMEOUT": "0.3"})
    assert call.error["code"] == "timeout"


def test_unreachable_hosts_and_bad_urls(cli: CliRunner) -> None:
    call = fetch(cli, "http://127.0.0.1:1/")  # allowed, but nothing listens on port 1
    assert call.error["code"] == "fetch_failed"
    assert fetch(cli, "ftp://example.org/x").error["code"] == "invalid_arguments"
    assert fetch(cli, "http:///nohost").error["code"] == "invalid_arguments"
    bad_name = fetch(cli, "http://does-not-exist.invalid/")
    assert bad_name.error["code"] == "fetch_failed"


# ---- SSRF ----------------------------------------------------------------------------------------


def test_loopback_is_refused_without_the_allow_list(site: Server, cli: CliRunner) -> None:
    call = cli("web_fetch", stdin={"url": f"{site.base}/page"})
    assert call.code == 3
    assert call.error["code"] == "blocked_address"
    assert call.error["details"]["reason"] == "loopback address"
    assert "ZBTOOLS_WEB_ALLOW" in call.error["hint"]
    assert site.hits == []


@pytest.mark.parametrize("route", ["/to-internal", "/to-metadata", "/to-mapped",
                                   "/to-decimal"])
def test_a_redirect_from_an_allowed_host_to_a_blocked_address_is_refused(
        site: Server, internal: Server, cli: CliRunner, route: str) -> None:
    call = fetch(cli, f"{site.base}{route}")
    assert call.code == 3, call
    assert call.error["code"] == "blocked_address"
    assert site.hits == [route]  # the allowed host was asked ...
    assert internal.hits == []  # ... and the internal one never reached


def test_the_internal_server_is_reachable_only_when_allowed(internal: Server,
                                                            cli: CliRunner) -> None:
    url = f"{internal.base}/secret"
    assert fetch(cli, url).error["code"] == "blocked_address"
    allowed = cli("web_fetch", stdin={"url": url},
                  env={"ZBTOOLS_WEB_ALLOW": "127.0.0.0/30"}).result
    assert allowed["content"] == "SECRET"


def test_redirects_to_other_schemes_are_refused(site: Server, cli: CliRunner) -> None:
    call = fetch(cli, f"{site.base}/to-file")
    assert call.error["code"] == "fetch_failed"
    assert "only http and https" in call.error["message"]


def test_the_allow_list_comes_from_the_config_file(site: Server, cli: CliRunner,
                                                   tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[web]\nallow = ["127.0.0.1/32"]\n')
    assert cli("web_fetch", stdin={"url": f"{site.base}/page"}).result["status"] == 200


@pytest.mark.parametrize("address,blocked", [
    ("127.0.0.1", True), ("10.1.2.3", True), ("172.16.0.1", True), ("192.168.1.1", True),
    ("169.254.169.254", True), ("169.254.1.1", True), ("100.64.0.1", True), ("0.0.0.0", True),
    ("224.0.0.1", True), ("240.0.0.1", True), ("255.255.255.255", True), ("::1", True),
    ("::", True), ("fe80::1", True), ("fc00::1", True), ("fd00:ec2::254", True),
    ("ff02::1", True), ("::ffff:127.0.0.1", True), ("::ffff:169.254.169.254", True),
    ("64:ff9b::a9fe:a9fe", True), ("2002:7f00:1::", True), ("192.0.2.1", True),
    ("8.8.8.8", False), ("93.184.216.34", False), ("2606:4700:4700::1111", False),
    ("::ffff:8.8.8.8", False),
])
def test_address_classification(address: str, blocked: bool) -> None:
    reason = ssrf.blocked_reason(ipaddress.ip_address(address))
    assert (reason is not None) is blocked, reason


def fake_resolver(answers: list[list[str]]) -> Any:
    calls: list[str] = []

    def resolve(host: str, port: int, *_args: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        addresses = answers[min(len(calls) - 1, len(answers) - 1)]
        return [(2, 1, 6, "", (a, port)) for a in addresses]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def test_vet_keeps_public_addresses_and_refuses_names_with_only_internal_ones() -> None:
    policy = ssrf.Policy([])
    mixed = fake_resolver([["10.0.0.1", "93.184.216.34"]])
    assert [str(a) for a in ssrf.vet("mixed.test", 80, policy, mixed)] == ["93.184.216.34"]
    with pytest.raises(ssrf.BlockedAddress) as caught:
        ssrf.vet("rebind.test", 80, policy, fake_resolver([["169.254.169.254"]]))
    assert caught.value.reason == "cloud metadata service"
    assert ssrf.vet("intranet.test", 80, ssrf.Policy(["*.test"]),
                    fake_resolver([["10.0.0.1"]]))


def test_the_connection_goes_to_the_vetted_address_not_a_second_lookup(
        site: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: the first answer is vetted and used; a later, different answer is never
    asked for, because the connection is made to the vetted IP itself."""
    from zbtools.core.web.client import fetch as web_fetch

    resolver = fake_resolver([["127.0.0.1"], ["169.254.169.254"]])
    settings = load_web_settings({"ZBTOOLS_WEB_ALLOW": "127.0.0.1"}, {})
    page = web_fetch(f"http://rebind.test:{site.port}/page", settings, timeout=5,
                     resolver=resolver)
    assert page.status == 200
    assert page.address == "127.0.0.1"
    assert resolver.calls == ["rebind.test"]
    assert site.headers[-1]["host"] == f"rebind.test:{site.port}"  # the name, not the IP
    blocked = fake_resolver([["169.254.169.254"]])
    with pytest.raises(ToolError) as caught:
        web_fetch(f"http://rebind.test:{site.port}/page", settings, timeout=5,
                  resolver=blocked)
    assert caught.value.code == "blocked_address"


# ---- JavaScript rendering ------------------------------------------------------------------------


def fake_chromium(folder: Path, html: str) -> Path:
    folder.mkdir(exist_ok=True)
    script = folder / "chromium"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FAKE_ARGS\"\ncat <<'EOF'\n{html}\n"
                      "EOF\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_script_page_without_chromium_falls_back_and_says_so(site: Server, cli: CliRunner,
                                                               tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path / "empty")}
    result = fetch(cli, f"{site.base}/spa", env=env).result
    assert result["rendered"] is False
    assert "no headless Chromium" in result["render_note"]
    call = fetch(cli, f"{site.base}/spa", env=env, render="always")
    assert call.error["code"] == "render_unavailable"
    never = fetch(cli, f"{site.base}/spa", env=env, render="never").result
    assert never["render_note"] is None


def test_a_script_page_is_rendered_with_chromium_when_present(site: Server, cli: CliRunner,
                                                              tmp_path: Path) -> None:
    script = fake_chromium(tmp_path / "bin", "<html><body><h1>Rendered</h1>"
                           "<p>dynamic content</p></body></html>")
    args_file = tmp_path / "args.txt"
    env = {"PATH": f"{script.parent}:{os.environ.get('PATH', '')}",
           "FAKE_ARGS": str(args_file)}
    result = fetch(cli, f"{site.base}/spa", env=env).result
    assert result["rendered"] is True
    assert "# Rendered" in result["content"]
    assert str(script) in result["render_note"]
    argv = args_file.read_text().splitlines()
    assert "--headless" in argv and "--dump-dom" in argv
    assert argv[-1] == f"{site.base}/spa"
    assert "--host-resolver-rules=MAP 127.0.0.1 127.0.0.1, MAP * ~NOTFOUND" in argv
    static = fetch(cli, f"{site.base}/page", env=env).result  # plenty of text: not rendered
    assert static["rendered"] is False
    forced = fetch(cli, f"{site.base}/page", env=env, render="always").result
    assert forced["rendered"] is True


# ---- web_search ----------------------------------------------------------------------------------


@pytest.fixture
def searxng() -> Iterator[Server]:
    def search(h: Any) -> None:
        query = parse_qs(urlsplit(h.path).query)
        if query.get("format") != ["json"]:
            h.reply(403, "text/html", b"Forbidden")
            return
        results = [{"title": f"Result {i} for {query['q'][0]}", "url": f"https://e.org/{i}",
                    "content": f"snippet {i}  with   spaces", "engine": "duckduckgo",
                    "engines": ["duckduckgo", "brave"], "score": 1.0} for i in range(40)]
        body = {"query": query["q"][0], "number_of_results": 40, "results": results,
                "answers": [], "suggestions": ["zbtools docs"], "infoboxes": [],
                "echo": {k: v[0] for k, v in query.items()}}
        h.reply(200, "application/json", json.dumps(body).encode())

    server = Server("127.0.0.1", {"/search": search,
                                  "/broken/search": lambda h: h.reply(200, "text/html",
                                                                      b"<html>nope</html>")})
    yield server
    server.close()


def test_web_search_returns_results_from_searxng(searxng: Server, cli: CliRunner) -> None:
    env = {"ZBTOOLS_SEARXNG_URL": searxng.base}  # loopback, but the instance is trusted
    result = cli("web_search", stdin={"query": "zbtools", "categories": "general, it",
                                      "language": "en", "page": 2}, env=env).result
    assert result["count"] == 10
    first = result["results"][0]
    assert first == {"title": "Result 0 for zbtools", "url": "https://e.org/0",
                     "snippet": "snippet 0 with spaces", "engine": "duckduckgo",
                     "engines": ["duckduckgo", "brave"]}
    assert result["suggestions"] == ["zbtools docs"]
    sent = parse_qs(urlsplit(searxng.hits[-1]).query)
    assert sent == {"q": ["zbtools"], "format": ["json"], "categories": ["general,it"],
                    "language": ["en"], "pageno": ["2"]}
    out = cli("web_search", "--query", "zbtools", *TEXT, env=env).out
    assert out.startswith("1. Result 0 for zbtools [duckduckgo]\n   https://e.org/0\n")


def test_web_search_caps_results_at_25(searxng: Server, cli: CliRunner) -> None:
    call = cli("web_search", stdin={"query": "x", "max_results": 100},
               env={"ZBTOOLS_SEARXNG_URL": f"{searxng.base}/"})
    assert call.result["count"] == 25
    assert any("25" in w for w in call.json["warnings"])
    few = cli("web_search", stdin={"query": "x", "max_results": 3},
              env={"ZBTOOLS_SEARXNG_URL": searxng.base})
    assert few.result["count"] == 3


def test_web_search_without_an_instance_explains_the_setup(cli: CliRunner) -> None:
    call = cli("web_search", stdin={"query": "x"})
    assert call.code == 1
    assert call.error["code"] == "not_configured"
    assert "ZBTOOLS_SEARXNG_URL" in call.error["hint"]
    assert "formats" in call.error["hint"]


def test_web_search_reports_a_server_that_is_not_searxng(searxng: Server,
                                                         cli: CliRunner) -> None:
    call = cli("web_search", stdin={"query": "x"},
               env={"ZBTOOLS_SEARXNG_URL": f"{searxng.base}/broken"})
    assert call.error["code"] == "fetch_failed"


def test_the_searxng_url_comes_from_the_config_file(searxng: Server, cli: CliRunner,
                                                    tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(f'[web]\nsearxng_url = "{searxng.base}"\n')
    assert cli("web_search", stdin={"query": "x"}).result["count"] == 10


def test_bad_web_settings_are_usage_errors(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[web]\ntimeout = -1\n")
    assert cli("web_search", stdin={"query": "x"}).error["code"] == "usage_error"
    (tmp_path / "config.toml").write_text("[web]\nbogus = 1\n")
    assert cli("web_fetch", stdin={"url": "http://e.org"}).error["code"] == "usage_error"


def test_an_offset_past_the_end_is_out_of_range(site: Server, cli: CliRunner) -> None:
    call = fetch(cli, f"{site.base}/page", offset=10_000)
    assert call.error["code"] == "out_of_range"
    assert call.error["details"]["total_chars"] < 10_000


# ---- hostile servers and URLs (review of issue 8) ------------------------------------------------


@pytest.fixture
def hostile() -> Iterator[Server]:
    import gzip

    bomb = gzip.compress(b"\0" * 50_000_000, 9)

    def raw(h: Any, status: int, headers: dict[str, str], body: bytes) -> None:
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def slow_headers(h: Any) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        try:
            for _ in range(100):  # a header line every 0.2 s: each read is quick, the whole never
                if hostile_server.release.wait(0.2):
                    return
                h.wfile.write(b"X-Drip: 1\r\n")
                h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def slow_body(h: Any) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "100")
        h.end_headers()
        try:
            for _ in range(100):
                if hostile_server.release.wait(0.2):
                    return
                h.wfile.write(b"x")
                h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    routes = {
        "/gzip-bomb": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                             "Content-Encoding": "gzip"}, bomb),
        "/double-gzip": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                               "Content-Encoding": "gzip, gzip"},
                                      gzip.compress(gzip.compress(b"\0" * 1_000_000))),
        "/brotli": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                          "Content-Encoding": "br"}, b"\x0b\x02\x80hi\x03"),
        "/gzip-page": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                             "Content-Encoding": "gzip"},
                                    gzip.compress(b"compressed hello\n")),
        "/corrupt-gzip": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                                "Content-Encoding": "gzip"},
                                       b"\x1f\x8b\x08\x00garbage-not-deflate"),
        "/deflate": lambda h: raw(h, 200, {"Content-Type": "text/plain",
                                           "Content-Encoding": "deflate"},
                                  __import__("zlib").compress(b"zlib wrapped\n")),
        "/slow-headers": slow_headers,
        "/slow-body": slow_body,
        "/to-javascript": lambda h: raw(h, 302, {"Location": "javascript:alert(1)"}, b""),
        "/mislabelled": lambda h: raw(h, 200, {"Content-Type": "text/plain; charset=utf-8"},
                                      "caf\u00e9 na\u00efve d\u00e9j\u00e0 vu, "
                                      "r\u00e9sum\u00e9\n".encode("latin-1") * 20),
    }
    hostile_server = Server("127.0.0.1", routes)
    yield hostile_server
    hostile_server.close()


def test_malformed_urls_are_argument_errors_not_crashes(cli: CliRunner) -> None:
    for url in ("http://0177.0.0.1/", "http://\uff11\uff12\uff17.0.0.1/", "http://[::1/"):
        call = fetch(cli, url)
        assert call.code == 2, (url, call.json)
        assert call.error["code"] == "invalid_arguments", url


def test_a_redirect_to_an_unparsable_location_fails_cleanly(hostile: Server,
                                                            cli: CliRunner) -> None:
    call = fetch(cli, f"{hostile.base}/to-javascript")
    assert call.code == 1, call.json
    assert call.error["code"] == "fetch_failed"


@pytest.mark.slow
def test_a_server_trickling_headers_cannot_outlast_the_timeout(hostile: Server,
                                                               cli: CliRunner) -> None:
    for route in ("/slow-headers", "/slow-body"):
        started = time.monotonic()
        call = fetch(cli, f"{hostile.base}{route}", timeout=1)
        assert call.error["code"] == "timeout", (route, call.json)
        assert time.monotonic() - started < 4, route


def test_a_gzip_bomb_is_decompressed_only_up_to_the_cap(hostile: Server) -> None:
    import tracemalloc

    from zbtools.core.web.client import fetch as web_fetch

    settings = load_web_settings({**ALLOW, "ZBTOOLS_WEB_MAX_DOWNLOAD_BYTES": "1000000"}, {})
    tracemalloc.start()
    try:
        page = web_fetch(f"{hostile.base}/gzip-bomb", settings, timeout=10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert page.download_truncated is True
    assert len(page.body) == 1_000_000
    assert peak < 12_000_000, peak  # not the 50 MB the bomb expands to


def test_content_encodings(hostile: Server, cli: CliRunner) -> None:
    assert fetch(cli, f"{hostile.base}/gzip-page").result["content"] == "compressed hello\n"
    assert fetch(cli, f"{hostile.base}/deflate").result["content"] == "zlib wrapped\n"
    for route in ("/double-gzip", "/brotli", "/corrupt-gzip"):
        call = fetch(cli, f"{hostile.base}{route}")
        assert call.code == 1, (route, call.json)
        assert call.error["code"] == "fetch_failed", route
    assert "gzip" in hostile.headers[-1]["accept-encoding"]
    assert "br" not in hostile.headers[-1]["accept-encoding"]


def test_a_wrong_charset_declaration_falls_back_to_detection(hostile: Server,
                                                             cli: CliRunner) -> None:
    result = fetch(cli, f"{hostile.base}/mislabelled").result
    assert "caf\u00e9" in result["content"] and "r\u00e9sum\u00e9" in result["content"]
    assert "\ufffd" not in result["content"]
    assert result["charset"] != "utf-8"


def test_the_blocked_message_reads_well(cli: CliRunner) -> None:
    call = cli("web_fetch", stdin={"url": "http://0.0.0.0:9/"})
    assert call.code == 3
    assert call.error["message"] == ("refused to connect to 0.0.0.0: it resolves to 0.0.0.0 "
                                     "(unspecified address)")
