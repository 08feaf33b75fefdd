"""One install gives every tool: the wheel, installed without extras, runs the tools that need
third-party libraries (web_fetch, web_search, read_file of an image and of a PDF, ``zbtools
mcp``); the former extras are empty aliases; a missing library's hint matches what pyproject
declares.

The slow test builds the wheel offline (as tests/test_generated.py does), installs it into a
fresh virtual environment with its dependencies resolved by pip from the package index (the
same resolution a user's ``pip install`` makes; pip's cache serves what the development install
already downloaded), and runs the installed ``zbtools`` command against servers on 127.0.0.1.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from zbtools.core.call import optional

EXTRAS = ("mcp", "media", "web", "rg")


def project() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]  # type: ignore[no-any-return]


def test_every_library_a_tool_imports_lazily_is_a_default_dependency() -> None:
    dependencies = project()["dependencies"]
    for dist, requirement in optional.REQUIREMENTS.items():
        assert requirement in dependencies, f"{requirement} is not a default dependency"
        assert requirement.startswith(dist)
    assert set(optional.PROVIDERS.values()) <= set(optional.REQUIREMENTS)
    rg = [d for d in dependencies if d.startswith("ripgrep")]
    assert rg and all(d.startswith("ripgrep==14.1.0; sys_platform == ") for d in rg)


def test_the_former_extras_are_empty_aliases() -> None:
    extras = project()["optional-dependencies"]
    for name in EXTRAS:
        assert extras[name] == [], name
    dependencies = {d.split(";")[0] for d in project()["dependencies"]}
    for requirement in extras["dev"]:
        assert requirement.split(";")[0] not in dependencies, f"{requirement}: already a default"


def test_the_hint_is_the_exact_command_for_this_interpreter() -> None:
    hint = optional.install_hint("pypdf")
    assert f"{sys.executable} -m pip install 'pypdf>=4'" in hint
    assert "pipx inject zbtools 'pypdf>=4'" in hint
    error = optional.missing("bs4.element", "converting HTML", ImportError("no bs4"))
    assert error.code == "missing_dependency"
    assert error.details["requirement"] == "beautifulsoup4>=4.12"
    assert "beautifulsoup4" in error.message


# ---- the wheel, installed without extras -------------------------------------------------------


def run(argv: list[str], timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                          **kwargs)
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv holding the wheel and only what its default dependencies pull in."""
    pytest.importorskip("hatchling", reason="the dev extra brings hatchling")
    tmp = tmp_path_factory.mktemp("install")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(tmp / "dist"), str(REPO)])
    (wheel,) = (tmp / "dist").glob("zbtools-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
    for extra in EXTRAS:  # an old install line (zbtools[web]) finds the extra and adds nothing
        assert f"Provides-Extra: {extra}\n" in metadata
        assert f"extra == '{extra}'" not in metadata
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    run([*pip, "install", "-q", "--no-compile", str(wheel)], timeout=900)  # no .pyc: 5 s less
    run([*pip, "check"])
    listed = {d["name"].lower() for d in json.loads(run([*pip, "list", "--format", "json"]).stdout)}
    assert {"pillow", "pypdf", "httpx", "markdownify", "beautifulsoup4", "mcp"} <= listed
    assert not {"pytest", "pathspec", "hypothesis", "hatchling"} & listed, "a dev package leaked"
    # the old extras resolve against what is installed: nothing to add, nothing to fetch
    dry = run([*pip, "install", "--dry-run", "--no-index", "--find-links", str(wheel.parent),
               f"zbtools[{','.join(EXTRAS)}]"])
    assert "Would install" not in dry.stdout, dry.stdout
    assert "does not provide the extra" not in dry.stderr, dry.stderr
    yield venv


def zbtools(venv: Path, ws: Path, *argv: str, stdin: dict[str, Any] | None = None,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the installed command; return the JSON envelope of a successful call."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("ZBTOOLS_", "PYTHON"))}
    base.update({"ZBTOOLS_STATE_DIR": str(ws.parent / "state"),
                 "ZBTOOLS_CONFIG": os.devnull, **(env or {})})
    done = subprocess.run([str(venv / "bin" / "zbtools"), *argv, "--workspace", str(ws)],
                          input=json.dumps(stdin or {}).encode(), capture_output=True,
                          env=base, cwd=ws, timeout=60, check=False)
    envelope: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 0 and envelope["ok"], (envelope, done.stderr.decode()[-2000:])
    return envelope


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.mark.slow
def test_the_plain_wheel_fetches_a_page(installed: Path, workspace: Path) -> None:
    from tests.tools.test_web import Server, page

    site = Server("127.0.0.1", {"/page": lambda h: h.reply(
        200, "text/html; charset=utf-8",
        page("Hello", "<h1>Installed</h1><p>every <a href='/x'>tool</a></p>"))})
    try:
        result = zbtools(installed, workspace, "web_fetch", stdin={"url": f"{site.base}/page"},
                         env={"ZBTOOLS_WEB_ALLOW": "127.0.0.1"})["result"]
    finally:
        site.close()
    assert result["format"] == "markdown" and result["title"] == "Hello"
    assert "# Installed" in result["content"]
    assert f"[tool]({site.base}/x)" in result["content"]


@pytest.mark.slow
def test_the_plain_wheel_searches_searxng(installed: Path, workspace: Path) -> None:
    from urllib.parse import parse_qs, urlsplit

    from tests.tools.test_web import Server

    def search(h: Any) -> None:
        query = parse_qs(urlsplit(h.path).query)
        body = {"query": query["q"][0], "results": [
            {"title": "zbtools", "url": "https://example.org/zb", "content": "one install",
             "engine": "stub", "engines": ["stub"]}], "answers": [], "suggestions": []}
        h.reply(200, "application/json", json.dumps(body).encode())

    searxng = Server("127.0.0.1", {"/search": search})
    try:
        result = zbtools(installed, workspace, "web_search", stdin={"query": "every tool"},
                         env={"ZBTOOLS_SEARXNG_URL": searxng.base})["result"]
    finally:
        searxng.close()
    assert result["results"] == [{"title": "zbtools", "url": "https://example.org/zb",
                                  "snippet": "one install", "engine": "stub",
                                  "engines": ["stub"]}]


@pytest.mark.slow
def test_the_plain_wheel_reads_an_image_and_a_pdf(installed: Path, workspace: Path) -> None:
    from PIL import Image

    from tests.tools.test_read_media import make_pdf

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(buffer, format="PNG")
    (workspace / "a.png").write_bytes(buffer.getvalue())
    (workspace / "doc.pdf").write_bytes(make_pdf([["Hello page one"], ["Second page"]]))
    image = zbtools(installed, workspace, "read_file", "--path", "a.png")["result"]
    assert (image["kind"], image["mime"], image["width"], image["height"]) == (
        "image", "image/png", 40, 30)
    pdf = zbtools(installed, workspace, "read_file", "--path", "doc.pdf")["result"]
    assert pdf["kind"] == "pdf" and pdf["page_count"] == 2
    assert "Hello page one" in pdf["content"] and "Second page" in pdf["content"]


@pytest.mark.slow
def test_the_plain_wheel_serves_mcp(installed: Path, workspace: Path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from zbtools.dialects import get_dialect

    expected = {t.name for t in get_dialect(None, {}).tools()}
    (workspace / "a.txt").write_text("alpha\n")
    params = StdioServerParameters(
        command=str(installed / "bin" / "zbtools"),
        args=["mcp", "--workspace", str(workspace)],
        env={"ZBTOOLS_STATE_DIR": str(workspace.parent / "state")}, cwd=str(workspace))

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
                assert client.server_info is not None
                assert client.server_info.name == "zbtools"
                listing = await client.list_tools()
                assert {t.name for t in listing.tools} == expected
                result = await client.call_tool("read_file", {"path": "a.txt"})
                assert result.is_error is False

    anyio.run(main)
