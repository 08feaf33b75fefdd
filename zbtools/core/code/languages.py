"""Which language a file is in, and its tree-sitter grammar, parser and tags query, loaded once.

A language is known by its file name (extension, or a name such as ``Makefile``) and, for a file
without a known extension, by its ``#!`` line. ``SYMBOL_LANGUAGES`` have definitions and
references (a tags query: the grammar package's own ``queries/tags.scm``, or ours in
``queries/`` where the package ships none); the data formats (``GUARD_ONLY``) are parsed only to
check their syntax. Grammars are loaded from their wheels' compiled modules directly, without
the packages' ``__init__`` (which imports ``importlib.resources``) and without
``tree_sitter/__init__`` (which imports ``typing``): a cold call pays only for the grammar it
needs (docs/internals/code.md#loading).

Map: ``Language`` and ``LANGUAGES``; ``language_for`` (a path and the file's first bytes);
``binding`` (the ``tree_sitter`` extension module), ``grammar``, ``parser``, ``tags_query``
(``definitions_query``: the same without its reference patterns), ``grammar_files`` (what a
cache of a language's symbols depends on);
``unsupported_language`` (the error).
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

QUERIES = os.path.join(os.path.dirname(__file__), "queries")
# A bigger file is not parsed, by the syntax guard, find_symbol or grep's scopes: a parse would
# cost seconds, and such a file is generated or data.
MAX_PARSE_BYTES = 8 * 1024 * 1024


class Language:
    """One language: its name, the grammar package and the function that returns its grammar,
    and where its tags query comes from (none: the syntax guard only)."""

    __slots__ = ("entry", "label", "name", "package", "tags")

    def __init__(self, name: str, package: str, entry: str = "language", *,
                 tags: tuple[str, ...] = (), label: str = "") -> None:
        self.name = name
        self.package = package
        self.entry = entry
        # each source: "PACKAGE" (its queries/tags.scm) or "zbtools:FILE" (ours, in queries/)
        self.tags = tags
        self.label = label or name

    @property
    def has_symbols(self) -> bool:
        return bool(self.tags)

    def __repr__(self) -> str:
        return f"Language({self.name!r})"


def _lang(name: str, package: str, entry: str = "language", tags: tuple[str, ...] | None = None,
          label: str = "") -> Language:
    return Language(name, package, entry, tags=(package,) if tags is None else tags, label=label)


LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (
    _lang("python", "tree_sitter_python", label="Python"),
    _lang("javascript", "tree_sitter_javascript", label="JavaScript"),
    # TypeScript's tags query holds only what TypeScript adds to JavaScript's
    # ours (zbtools:LANG-tags.scm) adds what a grammar's own leaves out: types and enums,
    # constructors, namespaces... (docs/internals/code.md#accuracy)
    _lang("typescript", "tree_sitter_typescript", "language_typescript",
          ("tree_sitter_javascript", "tree_sitter_typescript", "zbtools:typescript-tags.scm"),
          "TypeScript"),
    _lang("tsx", "tree_sitter_typescript", "language_tsx",
          ("tree_sitter_javascript", "tree_sitter_typescript", "zbtools:typescript-tags.scm"),
          "TSX"),
    _lang("go", "tree_sitter_go", tags=("tree_sitter_go", "zbtools:go-tags.scm"), label="Go"),
    _lang("rust", "tree_sitter_rust", label="Rust"),
    _lang("java", "tree_sitter_java", tags=("tree_sitter_java", "zbtools:java-tags.scm"),
          label="Java"),
    _lang("c", "tree_sitter_c", label="C"),
    _lang("cpp", "tree_sitter_cpp", tags=("tree_sitter_cpp", "zbtools:cpp-tags.scm"),
          label="C++"),
    # the C# wheel installs its queries outside its package: ours is used
    _lang("c_sharp", "tree_sitter_c_sharp", tags=("zbtools:c_sharp-tags.scm",), label="C#"),
    _lang("ruby", "tree_sitter_ruby", label="Ruby"),
    _lang("php", "tree_sitter_php", "language_php", label="PHP"),
    _lang("bash", "tree_sitter_bash", tags=("zbtools:bash-tags.scm",), label="Bash"),
    _lang("json", "tree_sitter_json", tags=(), label="JSON"),
    _lang("yaml", "tree_sitter_yaml", tags=(), label="YAML"),
    _lang("toml", "tree_sitter_toml", tags=(), label="TOML"),
    _lang("html", "tree_sitter_html", tags=(), label="HTML"),
    _lang("css", "tree_sitter_css", tags=(), label="CSS"),
)}

SYMBOL_LANGUAGES = tuple(name for name, lang in LANGUAGES.items() if lang.has_symbols)
GUARD_ONLY = tuple(name for name, lang in LANGUAGES.items() if not lang.has_symbols)

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c",
    # a header may be C or C++: C++'s grammar reads both (C's would call C++ code an error)
    ".h": "cpp", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".ru": "ruby",
    ".php": "php", ".phtml": "php",
    ".sh": "bash", ".bash": "bash", ".bats": "bash",
    ".json": "json", ".jsonc": "json", ".code-workspace": "json",
    ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".css": "css",
}
FILENAMES: dict[str, str] = {
    "Rakefile": "ruby", "Gemfile": "ruby", "Guardfile": "ruby", "Vagrantfile": "ruby",
    ".bashrc": "bash", ".bash_profile": "bash", ".profile": "bash", "PKGBUILD": "bash",
    "Pipfile": "toml", "Cargo.lock": "toml", "poetry.lock": "toml", "uv.lock": "toml",
}
# the interpreter a #! line names (after env and its options) -> language
INTERPRETERS: dict[str, str] = {
    "python": "python", "python3": "python", "python2": "python", "pypy": "python",
    "pypy3": "python", "node": "javascript", "nodejs": "javascript", "deno": "typescript",
    "ruby": "ruby", "php": "php", "bash": "bash", "sh": "bash", "dash": "bash", "ksh": "bash",
}


def language_for(path: str, head: bytes = b"") -> Language | None:
    """The language of the file at ``path`` (its name, else the ``#!`` line in ``head``, the
    file's first bytes), or None."""
    base = os.path.basename(path)
    name = FILENAMES.get(base)
    if name is None:
        ext = os.path.splitext(base)[1].lower()
        name = EXTENSIONS.get(ext)
        if name is None and not ext and head.startswith(b"#!"):
            name = _interpreter(head)
    return LANGUAGES[name] if name is not None else None


def _interpreter(head: bytes) -> str | None:
    words = head[2:head.find(b"\n") if b"\n" in head else len(head)].decode(
        "latin-1").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words:
        return None
    program = os.path.basename(words[0])
    # python3.12, pypy3.10: the version does not change the language
    program = program.rstrip("0123456789.") if program not in INTERPRETERS else program
    return INTERPRETERS.get(program)


def unsupported_language(path: str, *, needs_symbols: bool = True) -> ToolError:
    """The error for a file whose language has no symbols (or no grammar at all)."""
    known = SYMBOL_LANGUAGES if needs_symbols else tuple(LANGUAGES)
    labels = ", ".join(LANGUAGES[name].label for name in known)
    return ToolError("unsupported_language",
                     f"{path}: no {'symbols are' if needs_symbols else 'parser is'} known for "
                     "this file's language",
                     hint=f"supported: {labels} (by file extension, or a #! line); use "
                     "read_file or grep_search for other files",
                     details={"path": path})


# ---- loading -------------------------------------------------------------------------------

_loaded: dict[str, Any] = {}


def _package_dir(package: str) -> str | None:
    for entry in sys.path:
        candidate = os.path.join(entry or os.curdir, package)
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    return None


def _load_extension(package: str) -> ModuleType:
    """``PACKAGE._binding``, the compiled module, loaded without running ``PACKAGE/__init__``;
    the ordinary import where the wheel is laid out otherwise."""
    name = f"{package}._binding"
    module = sys.modules.get(name)
    if module is not None:
        return module
    folder = _package_dir(package)
    found = [f for f in os.listdir(folder) if f.startswith("_binding.") and f.endswith(".so")] \
        if folder is not None else []
    if len(found) != 1 or folder is None:
        import importlib

        return importlib.import_module(name)
    from importlib.machinery import ExtensionFileLoader, ModuleSpec

    path = os.path.join(folder, found[0])
    loader = ExtensionFileLoader(name, path)
    module = loader.create_module(ModuleSpec(name, loader, origin=path))
    loader.exec_module(module)
    # an import of the package later finds this module rather than loading the library twice
    sys.modules[name] = module
    return module


def binding() -> Any:
    """The ``tree_sitter`` extension module: ``Language``, ``Parser``, ``Query``,
    ``QueryCursor``, ``Node``."""
    return _load_extension("tree_sitter")


def grammar(language: Language) -> Any:
    """The language's ``tree_sitter.Language``."""
    key = "grammar:" + language.name
    found = _loaded.get(key)
    if found is None:
        entry = getattr(_load_extension(language.package), language.entry)
        found = _loaded[key] = binding().Language(entry())
    return found


def parser(language: Language) -> Any:
    """A ``tree_sitter.Parser`` for the language (one per language and process)."""
    key = "parser:" + language.name
    found = _loaded.get(key)
    if found is None:
        found = _loaded[key] = binding().Parser(grammar(language))
    return found


def tags_source(language: Language) -> str:
    """The language's tags query, its sources joined."""
    parts = []
    for source in language.tags:
        if source.startswith("zbtools:"):
            path = os.path.join(QUERIES, source.removeprefix("zbtools:"))
        else:
            folder = _package_dir(source)
            if folder is None:
                raise unsupported_language(language.name)
            path = os.path.join(folder, "queries", "tags.scm")
        with open(path, encoding="utf-8") as fh:
            parts.append(fh.read())
    return "\n".join(parts)


def grammar_files(language: Language) -> list[str]:
    """The files a language's parse and tags depend on (the grammar package's ``__init__``,
    ``tree_sitter``'s, the tags query sources): their stat stamps a cache of its symbols."""
    files = []
    for package in ("tree_sitter", language.package):
        folder = _package_dir(package)
        files.append(os.path.join(folder, "__init__.py") if folder is not None else package)
    for source in language.tags:
        if source.startswith("zbtools:"):
            files.append(os.path.join(QUERIES, source.removeprefix("zbtools:")))
        else:
            folder = _package_dir(source)
            files.append(os.path.join(folder, "queries", "tags.scm") if folder is not None
                         else source)
    return files


def tags_query(language: Language) -> Any:
    """The language's compiled tags query (``tree_sitter.Query``)."""
    key = "tags:" + language.name
    found = _loaded.get(key)
    if found is None:
        found = _loaded[key] = binding().Query(grammar(language), tags_source(language))
    return found


def definitions_query(language: Language) -> Any:
    """The tags query with its reference patterns disabled: for a caller that needs only the
    definitions (grep's scopes), which then skips matching every call in the file."""
    key = "definitions:" + language.name
    found = _loaded.get(key)
    if found is None:
        source = tags_source(language)
        found = binding().Query(grammar(language), source)
        data = source.encode("utf-8")
        for index in range(found.pattern_count):
            pattern = data[found.start_byte_for_pattern(index):found.end_byte_for_pattern(index)]
            if b"@definition." not in pattern:
                found.disable_pattern(index)
        _loaded[key] = found
    return found
