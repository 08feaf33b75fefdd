"""The surfaces: the ways a person, a script or an agent reaches the tools, above the dispatcher.

* ``cli``: the Typer application for ``--help`` and shell completion (typer is imported here
  only);
* ``human``: ``--format human``, coloured output with rich for a terminal (rich only here and in
  ``cli``);
* ``catalog``: ``tools``, ``schema`` and ``prompt``, the tool catalog in the forms harnesses load;
* ``batch``: many calls in one process, JSON Lines in and out;
* ``mcp_server``: the Model Context Protocol server on stdio (mcp only here); ``mcp_wire``
  serves the sessions that open with ``initialize`` without the SDK, and ``mcp_calls`` holds
  what both sessions share (standard library only).

Each depends on ``zbtools.dispatch`` (requests, the call path, failures, output) and the contract,
never on another surface and never on ``zbtools.entry``, the program's main, which picks the
surface for a command line. ``tests/test_layers.py`` enforces this.
"""
