"""Code as code: languages, parse trees, definitions and references (tree-sitter).

``languages`` (which language a file is in; its grammar, parser and tags query, loaded once and
without the packages' heavier imports), ``symbols`` (a file's definitions, nested and with
dotted names, and its references), ``lookup`` (the definitions a name or dotted name names,
and the closest names when none does), ``scopes`` (the innermost definition around each line,
for grep's labels). The tools that see code (``outline``, ``find_symbol``,
``edit_symbol``), the syntax guard of the editing tools and grep's enclosing definitions are
built on them (docs/internals/code.md).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.code.languages import Language, language_for, unsupported_language
    from zbtools.core.code.lookup import closest, last_name, normalise, select
    from zbtools.core.code.scopes import Scopes, scopes_of
    from zbtools.core.code.symbols import Definition, FileSymbols, read_symbols

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
# A name is added here when code outside the package first uses it
# (tests/test_public_surface.py): the tools that see code, the syntax guard, grep's scopes.
__all__ = ["Definition", "FileSymbols", "Language", "Scopes", "closest", "language_for",
           "last_name", "normalise", "read_symbols", "scopes_of", "select",
           "unsupported_language"]

_SUBMODULE: dict[str, str] = {
    "Definition": "symbols", "FileSymbols": "symbols", "Language": "languages",
    "Scopes": "scopes", "closest": "lookup", "language_for": "languages",
    "last_name": "lookup", "normalise": "lookup", "read_symbols": "symbols",
    "scopes_of": "scopes", "select": "lookup", "unsupported_language": "languages",
}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
