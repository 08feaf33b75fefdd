"""Code as code: languages, parse trees, definitions and references (tree-sitter).

``languages`` (which language a file is in; its grammar, parser and tags query, loaded once and
without the packages' heavier imports), ``symbols`` (a file's definitions, nested and with
dotted names, and its references); the workspace index: ``tagpool`` (a file's symbols as a
compact record; many files parsed on every core), ``index`` (records kept while files are
unchanged, in memory and in the state directory), ``repomap`` (ranking by references, the map
within a budget). The tools that see code (``outline``, ``find_symbol``,
``edit_symbol``), the syntax guard of the editing tools and grep's enclosing definitions are
built on them (docs/internals/code.md).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
# A name is added here when code outside the package first uses it
# (tests/test_public_surface.py): the tools that see code, the syntax guard, grep's scopes.
__all__ = ["CACHE_NAME", "KEPT_CANDIDATES", "KEPT_RANKINGS", "RANKINGS_NAME", "CodeIndex",
           "DefTuple", "Language", "MapFile", "Ranking", "Signature", "Tags", "file_tags",
           "grammar_stamp", "language_for", "parse_many", "rank", "select", "settled", "signature",
           "unsupported_language"]

_SUBMODULE = {"CACHE_NAME": "index", "KEPT_CANDIDATES": "index", "KEPT_RANKINGS": "index",
              "RANKINGS_NAME": "index", "CodeIndex": "index", "DefTuple": "tagpool", "Language":
              "languages", "MapFile": "repomap", "Ranking": "repomap", "Signature": "index",
              "Tags": "tagpool", "file_tags": "tagpool", "grammar_stamp": "index", "language_for":
              "languages", "parse_many": "tagpool", "rank": "repomap", "select": "repomap",
              "settled": "index", "signature": "index", "unsupported_language": "languages"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
