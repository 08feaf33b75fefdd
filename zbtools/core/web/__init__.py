"""Fetching from the web for web_fetch and web_search.

``client`` (guarded connections, redirects, size and time caps, HTML to Markdown), ``ssrf``
(which addresses may be connected to).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""
