"""Code as code: languages, parse trees, definitions and references (tree-sitter).

``languages`` (which language a file is in; its grammar, parser and tags query, loaded once and
without the packages' heavier imports), ``symbols`` (a file's definitions, nested and with
dotted names, and its references), ``lookup`` (the definitions a name or dotted name names,
and the closest names when none does), ``scopes`` (the innermost definition around each line,
for grep's labels), ``syntax`` (the parse errors a change introduced; ``pychunks`` checks only
what changed of a Python file edited again); the workspace index: ``tagpool`` (a file's
symbols as a compact record; many files parsed on every core), ``index`` (records kept while
files are unchanged, in memory and in the state directory), ``repomap`` (ranking by
references, the map within a budget). The tools that see code (``outline``, ``find_symbol``,
``edit_symbol``), the syntax guard of the editing tools and grep's enclosing definitions are
built on them (docs/internals/code.md).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.code.index import (
        CACHE_NAME,
        KEPT_CANDIDATES,
        KEPT_RANKINGS,
        RANKINGS_NAME,
        CodeIndex,
        Signature,
        grammar_stamp,
        settled,
        signature,
    )
    from zbtools.core.code.languages import (
        LANGUAGES,
        MAX_PARSE_BYTES,
        Language,
        language_for,
        unsupported_language,
    )
    from zbtools.core.code.lookup import closest, last_name, normalise, select
    from zbtools.core.code.repomap import MapFile, Ranking, rank, within_budget
    from zbtools.core.code.scopes import Scopes, scopes_of
    from zbtools.core.code.symbols import Definition, FileSymbols, read_symbols
    from zbtools.core.code.syntax import introduced
    from zbtools.core.code.tagpool import DefTuple, Tags, file_tags, parse_many

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
# A name is added here when code outside the package first uses it
# (tests/test_public_surface.py): the tools that see code, the syntax guard, grep's scopes.
__all__ = ["CACHE_NAME", "KEPT_CANDIDATES", "KEPT_RANKINGS", "LANGUAGES", "MAX_PARSE_BYTES",
           "RANKINGS_NAME",
           "CodeIndex", "DefTuple", "Definition", "FileSymbols", "Language", "MapFile",
           "Ranking", "Scopes", "Signature", "Tags", "closest", "file_tags", "grammar_stamp",
           "introduced", "language_for", "last_name", "normalise", "parse_many", "rank",
           "read_symbols", "scopes_of", "select", "settled", "signature", "unsupported_language",
           "within_budget"]

_SUBMODULE: dict[str, str] = {
    "CACHE_NAME": "index", "KEPT_CANDIDATES": "index", "KEPT_RANKINGS": "index",
    "LANGUAGES": "languages", "MAX_PARSE_BYTES": "languages", "RANKINGS_NAME": "index",
    "CodeIndex": "index",
    "DefTuple": "tagpool", "Definition": "symbols", "FileSymbols": "symbols",
    "Language": "languages", "MapFile": "repomap", "Ranking": "repomap", "Scopes": "scopes",
    "Signature": "index", "Tags": "tagpool", "closest": "lookup", "file_tags": "tagpool",
    "grammar_stamp": "index", "introduced": "syntax", "language_for": "languages",
    "last_name": "lookup", "normalise": "lookup", "parse_many": "tagpool", "rank": "repomap",
    "read_symbols": "symbols", "scopes_of": "scopes", "select": "lookup", "settled": "index",
    "signature": "index", "unsupported_language": "languages", "within_budget": "repomap",
}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
