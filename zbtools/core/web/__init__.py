"""Fetching from the web for web_fetch and web_search.

``client`` (guarded connections, redirects, size and time caps, HTML to Markdown), ``ssrf``
(which addresses may be connected to).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.web.client import (
        CHROMIUM_NAMES,
        Fetched,
        decode_text,
        fetch,
        find_chromium,
        html_to_markdown,
        is_html,
        is_text,
        render_dom,
    )

# Callers outside the package import these names from the submodule named here (the import line
# says which file to read, and loads only that file); tests/test_public_surface.py holds them to
# it. ``__getattr__`` resolves the same names lazily for a reader at a prompt: this ``__init__``
# imports nothing when it runs (docs/internals/performance.md#start-up-budget).
__all__ = ["CHROMIUM_NAMES", "Fetched", "decode_text", "fetch", "find_chromium", "html_to_markdown",
           "is_html", "is_text", "render_dom"]

_SUBMODULE = {"CHROMIUM_NAMES": "client", "Fetched": "client", "decode_text": "client",
              "fetch": "client", "find_chromium": "client", "html_to_markdown": "client",
              "is_html": "client", "is_text": "client", "render_dom": "client"}


def __getattr__(name: str) -> object:
    submodule = _SUBMODULE.get(name)
    if submodule is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(__import__(f"{__name__}.{submodule}", fromlist=[name]), name)
    globals()[name] = value
    return value
