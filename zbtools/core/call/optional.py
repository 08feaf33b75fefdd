"""Importing optional libraries (the extras of pyproject.toml) with a clear error when missing.

Pillow and pypdf (extra ``media``), httpx, markdownify and beautifulsoup4 (extra ``web``) are
imported only on the code path that needs them, through ``require``: a plain text ``read_file``
never pays for them, and a missing library is the documented ``missing_dependency`` error that
names the extra to install, never a traceback.
"""

from __future__ import annotations

import importlib

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# import name -> (distribution on PyPI, extra of zbtools that installs it)
PROVIDERS: dict[str, tuple[str, str]] = {
    "PIL": ("pillow", "media"),
    "pypdf": ("pypdf", "media"),
    "httpx": ("httpx", "web"),
    "httpcore": ("httpx", "web"),
    "certifi": ("httpx", "web"),
    "markdownify": ("markdownify", "web"),
    "bs4": ("beautifulsoup4", "web"),
}


def require(module: str, purpose: str) -> ModuleType:
    """``import module``, or ``missing_dependency`` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".", maxsplit=1)[0]
        dist, extra = PROVIDERS.get(top, (top, ""))
        how = f"pip install 'zbtools[{extra}]'" if extra else f"pip install {dist}"
        raise ToolError("missing_dependency", f"{purpose} needs the optional library {dist}, "
                        "which is not installed", hint=f"install it: {how}",
                        details={"library": dist, "extra": extra, "import_error": str(exc)}
                        ) from exc
