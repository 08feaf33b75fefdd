"""Listing and searching a workspace.

``ignore`` (gitignore rules in buckets), ``walk`` (the one directory walker), ``engine`` (pattern
compilation and the line-oriented search), ``parallel`` (a second process for big trees),
``ripgrep`` (ripgrep searching the files our walk chose).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""
