"""Importing the libraries that only some tools need, with a clear error when one is missing.

Pillow and pypdf (``read_file`` of images and PDFs), httpx, markdownify and beautifulsoup4
(``web_fetch``, ``web_search``) and the MCP SDK (``zbtools mcp``) are default dependencies of
zbtools: one install gives every tool. They are imported only on the code path that needs them,
through ``require``, so a plain text ``read_file`` never pays for them.

A library can still be absent: an install made with ``--no-deps``, a distribution package that
left it out, a platform with no wheel for it where building one failed. That is the documented
``missing_dependency`` error, never a traceback; its hint is the exact command that installs the
library into the environment zbtools runs in, with the version range zbtools declares
(``REQUIREMENTS``, which a test checks against ``pyproject.toml``).
"""

from __future__ import annotations

import importlib
import sys

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# distribution on PyPI -> the requirement zbtools declares for it (pyproject.toml, dependencies)
REQUIREMENTS: dict[str, str] = {
    "pillow": "pillow>=10",
    "pypdf": "pypdf>=4",
    "httpx": "httpx>=0.27,<1",
    "markdownify": "markdownify>=0.13",
    "beautifulsoup4": "beautifulsoup4>=4.12",
    "mcp": "mcp>=2.3,<3",
}

# top-level import name -> the distribution that provides it
PROVIDERS: dict[str, str] = {
    "PIL": "pillow",
    "pypdf": "pypdf",
    "httpx": "httpx",
    "httpcore": "httpx",
    "certifi": "httpx",
    "markdownify": "markdownify",
    "bs4": "beautifulsoup4",
    "mcp": "mcp",
    "anyio": "mcp",
}


def install_hint(dist: str) -> str:
    """The exact command that installs ``dist`` where this zbtools runs (and the pipx one)."""
    requirement = REQUIREMENTS.get(dist, dist)
    python = sys.executable or "python3"
    if " " in python:
        python = f'"{python}"'
    return (f"install it into zbtools' environment: {python} -m pip install '{requirement}' "
            f"(installed with pipx: pipx inject zbtools '{requirement}')")


def missing(module: str, purpose: str, exc: ImportError) -> ToolError:
    """The ``missing_dependency`` error for a failed ``import module``."""
    top = module.split(".", maxsplit=1)[0]
    dist = PROVIDERS.get(top, top)
    return ToolError("missing_dependency", f"{purpose} needs the library {dist}, which is not "
                     "installed", hint=install_hint(dist),
                     details={"library": dist, "requirement": REQUIREMENTS.get(dist, dist),
                              "python": sys.executable, "import_error": str(exc)})


def require(module: str, purpose: str) -> ModuleType:
    """``import module``, or ``missing_dependency`` with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing(module, purpose, exc) from exc
