"""Listing and searching a workspace.

A tool builds a ``request.SearchRequest`` and hands it, as a ``request.SearchJob``, to
``tree.search`` with a chain of engines (``request.Engine``): ``tree.PythonEngine``,
``ripgrep.RgEngine``, ``native.NativeEngine``. Map: ``request`` (the request, the job, the
engine interface), ``tree`` (the search's one path, the python engine), ``warm`` (the one
walk-and-cache loop), ``engine`` (patterns and one file's matcher), ``globs`` (which files),
``outcome`` (the answer, accounted in walk order), ``parallel`` (a second process for big
trees), ``ripgrep`` and ``native`` with ``native_plan`` and ``native_log`` (ripgrep
engines); the walk: ``walk`` (the one directory walker), ``entries`` (what it yields and
counts), ``layers`` and ``ignore`` (ignore files and their rules), ``walk_warm``, ``cache``,
``recording`` and ``watch`` (a long-lived session's warm cache); ``filetypes`` (rg's types).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""
