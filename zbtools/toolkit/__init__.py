"""What several tools share, so that no tool module imports another.

A tool module (``zbtools/tools/``) declares one tool; what two or more tools have in common lives
here, one level below them: parameter aliases (``params``), and the result types, renderings and
helpers of tool families (``edits``, ``selection``, ``commands``, ``grep``, ``finding``,
``listing``, ``plans``, ``transfer``, ``writing``). Imports ``zbtools.contract`` and
``zbtools.core`` only; never a tool, the registry or a surface (tests/test_layers.py).
"""
