"""Code as code: languages, parse trees, definitions and references (tree-sitter).

``languages`` (which language a file is in; its grammar, parser and tags query, loaded once and
without the packages' heavier imports), ``symbols`` (a file's definitions, nested and with
dotted names, and its references), ``syntax`` (the parse errors a change introduced; ``pychunks``
checks only what changed of a Python file edited again). The tools that see code (``outline``,
``find_symbol``, ``edit_symbol``), the syntax guard of the editing tools and grep's enclosing
definitions are built on them (docs/internals/code.md).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
# A name is added here when code outside the package first uses it
# (tests/test_public_surface.py): the tools that see code, the syntax guard, grep's scopes.
__all__: list[str] = ["LANGUAGES", "introduced", "language_for"]

_SUBMODULE: dict[str, str] = {"LANGUAGES": "languages", "introduced": "syntax",
                              "language_for": "languages"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
