"""Fetching from the web for web_fetch and web_search.

``client`` (guarded connections, redirects, size and time caps, HTML to Markdown), ``ssrf``
(which addresses may be connected to).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

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

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["CHROMIUM_NAMES", "Fetched", "decode_text", "fetch", "find_chromium", "html_to_markdown",
           "is_html", "is_text", "render_dom"]

_SUBMODULE = {"CHROMIUM_NAMES": "client", "Fetched": "client", "decode_text": "client",
              "fetch": "client", "find_chromium": "client", "html_to_markdown": "client",
              "is_html": "client", "is_text": "client", "render_dom": "client"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
