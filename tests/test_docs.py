"""The README, CONTRIBUTING.md and the pages under docs/: short README, every page reachable,
every relative link and anchor alive, tables that agree with the code, text written for users.

The code explains itself from the repository too: comments, docstrings and tests under
``zbtools/``, ``tests/`` and ``benchmarks/`` cite pages of the repository (``docs/PAGE.md#anchor``,
each checked to exist), never a document it does not hold.

The generated blocks (tools reference, error-code table) are checked by ``devgen --check`` in
``tests/test_generated.py``.
"""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
CONTRIBUTING = REPO / "CONTRIBUTING.md"
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
USER_FACING = [README, CONTRIBUTING, *PAGES]
INTERNALS = sorted((DOCS / "internals").glob("*.md"))
# Pages for maintainers: their links are checked like the user-facing ones.
MAINTAINER_PAGES = [*INTERNALS, REPO / "benchmarks" / "README.md"]
README_MAX_LINES = 250

# The pages the README promises, one per subsystem (a new page joins this list and the README).
EXPECTED_PAGES = {"README.md", "contract.md", "editing.md", "search.md", "editor-state.md",
                  "commands.md", "dialects.md", "batch.md", "mcp.md", "media-and-web.md",
                  "configuration.md", "tools.md", "design.md", "shell.md", "architecture.md",
                  "code.md", "python.md", "serve.md"}

_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _prose(text: str) -> str:
    """The text without fenced code blocks (a ``# comment`` there is no heading)."""
    return _FENCE.sub("", text)


def _links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*~]|<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


_EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


@functools.cache
def anchors(path: Path) -> set[str]:
    """The heading anchors of a Markdown page, and its explicit ``<a id="...">`` anchors."""
    text = _prose(path.read_text(encoding="utf-8"))
    out: set[str] = set(_EXPLICIT_ID.findall(text))
    seen: dict[str, int] = {}
    for _level, title in _HEADING.findall(text):
        base = slug(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def test_slugs_follow_github() -> None:
    assert slug("The JSON contract, in brief") == "the-json-contract-in-brief"
    assert slug("`apply_edit` (alias `apply_patch`)") == "apply_edit-alias-apply_patch"
    assert slug("Editing: never the wrong place") == "editing-never-the-wrong-place"


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to docs/")


def test_the_pages_are_the_promised_ones() -> None:
    assert {p.name for p in PAGES} == EXPECTED_PAGES


@pytest.mark.parametrize("index", [README, DOCS / "README.md"], ids=_name)
def test_every_page_is_linked_from_the_readme_and_the_index(index: Path) -> None:
    targets = {(index.parent / link.split("#", 1)[0]).resolve()
               for link in _links(index) if not re.match(r"[a-z][a-z0-9+.-]*:", link)}
    missing = [_name(p) for p in PAGES if p.resolve() not in targets and p != index]
    assert not missing, f"{_name(index)} does not link {missing}"
    if index == README:
        assert CONTRIBUTING.resolve() in targets
        assert (DOCS / "README.md").resolve() in targets


@pytest.mark.parametrize("path", [*USER_FACING, *MAINTAINER_PAGES], ids=_name)
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    broken = []
    for link in _links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto:
            continue
        target_text, _, anchor = link.partition("#")
        target = (path.parent / target_text).resolve() if target_text else path
        if not target.exists():
            broken.append(f"{link}: no such file")
            continue
        try:
            target.relative_to(REPO)
        except ValueError:
            broken.append(f"{link}: outside the repository")
            continue
        if anchor:
            if target.suffix != ".md":
                broken.append(f"{link}: an anchor into a file that is not Markdown")
            elif anchor not in anchors(target):
                broken.append(f"{link}: no heading #{anchor} in {_name(target)}")
    assert not broken, f"{_name(path)}: " + "; ".join(broken)


# The project's planning documents, which are not in the repository: "DESIGN section 5",
# "SECURITY 4.3", "SECURITY T3", "MATCHING I1", "MATCHING §8.5", "PERFORMANCE.md section 8",
# "PERFORMANCE G1", "seed 002". User-facing text describes instead; code cites docs/ pages.
INTERNAL = re.compile(r"\b[Ss]eeds? 00\d\b|\bDESIGN\b|§\s*\d|"
                      r"\b(?:SECURITY|PERFORMANCE|MATCHING)(?:\.md|\s+(?:\d|sections?\b|§|[ITG]\d))")


def _internal_names(text: str) -> list[str]:
    return [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
            for m in INTERNAL.finditer(text)]


@pytest.mark.parametrize("path", [*USER_FACING, *INTERNALS], ids=_name)
def test_user_facing_text_names_no_internal_documents(path: Path) -> None:
    found = _internal_names(path.read_text(encoding="utf-8"))
    assert not found, f"{_name(path)} names internal documents: {found}"


def test_the_internal_document_pattern_catches_what_it_should() -> None:
    for text in ("(seed 001)", "seeds 003/004", "Seed 003 names", "DESIGN section 3",
                 "SECURITY 4.8", "SECURITY T3", "SECURITY section 4.9", "SECURITY.md",
                 "PERFORMANCE 4", "PERFORMANCE.md section 8, G6", "PERFORMANCE G2/G3",
                 "see MATCHING.md", "MATCHING 8.5", "MATCHING I1, I2", "MATCHING\nI3",
                 "MATCHING §8.5", "§2.2: the two-close() trap"):
        assert INTERNAL.search(text), text
    for text in ("the security boundary", "Designing a tool", "seeded cases", "--seed N",
                 "--seed 7", "seed 15, 60 requests", "test_the_seed_001_editor_examples",
                 "matching I1", "SECURITY_BITS",
                 "docs/internals/matching.md#i1"):
        assert not INTERNAL.search(text), text


# Comments, docstrings and tests: every Python and Markdown file of these trees. This file is
# left out: it spells the forms above in order to catch them.
CODE_TREES = ("zbtools", "tests", "benchmarks")
# A citation of a page of the repository: a path from its root, with an optional anchor.
CITATION = re.compile(
    r"(?<![\w/.-])((?:docs|benchmarks|tests|zbtools)/[\w./-]*?\.md)(?:#([\w-]+))?")


def _code_files(tree: str) -> list[Path]:
    return sorted(p for p in (REPO / tree).rglob("*")
                  if p.suffix in (".py", ".md") and p.is_file() and "__pycache__" not in p.parts
                  and p != Path(__file__).resolve())


def _commentary(path: Path, text: str) -> list[tuple[int, str]]:
    """(first line, text) of the comments and docstrings of a Python file; a page is all text.

    Other string literals are data (a test's ``docs/a.md`` is a file it creates, not a page)."""
    if path.suffix != ".py":
        return [(1, text)]
    if ".md" not in text:
        return []
    import ast
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    out = [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.append((first.lineno, first.value.value))
    return out


def _bad_citations(text: str, line: int = 1) -> list[str]:
    bad = []
    for m in CITATION.finditer(text):
        page, anchor = REPO / m.group(1), m.group(2)
        where = f"line {line + text.count(chr(10), 0, m.start())}: {m.group(0)}"
        if not page.is_file():
            bad.append(f"{where}: no such page")
        elif anchor and anchor not in anchors(page):
            bad.append(f"{where}: no anchor #{anchor} in {m.group(1)}")
    return bad


@pytest.mark.parametrize("tree", CODE_TREES)
def test_code_cites_the_repository_not_outside_documents(tree: str) -> None:
    problems = []
    for path in _code_files(tree):
        text = path.read_text(encoding="utf-8")
        problems += [f"{_name(path)} {p} (an outside document: cite a docs/ page)"
                     for p in _internal_names(text)]
        problems += [f"{_name(path)} {p}" for line, piece in _commentary(path, text)
                     for p in _bad_citations(piece, line)]
    assert not problems, "\n".join(problems)


def test_the_citation_check_catches_what_it_should() -> None:
    assert not _bad_citations("(docs/internals/matching.md#i1, docs/contract.md, "
                              "docs/contract.md#safety-and-fidelity)")
    assert not _bad_citations("[gates](../docs/internals/matching.md#gates)")
    for text in ("docs/internals/matching.md#i4", "docs/nothing.md", "docs/contract.md#nope",
                 "benchmarks/README.md#no-such-heading"):
        assert _bad_citations(text), text


def test_the_internals_are_reachable() -> None:
    index = DOCS / "internals" / "README.md"
    assert (index.parent / "README.md").resolve() in {
        (DOCS / link.split("#", 1)[0]).resolve() for link in _links(DOCS / "README.md")}
    linked = {(index.parent / link.split("#", 1)[0]).resolve() for link in _links(index)}
    missing = [_name(p) for p in INTERNALS if p != index and p.resolve() not in linked]
    assert not missing, f"docs/internals/README.md does not link {missing}"


def _exit_table(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", section, flags=re.M)
    return [(int(status), meaning) for status, meaning in rows]


def test_the_readme_exit_codes_are_the_contract_pages() -> None:
    from zbtools.contract import ERROR_CODES, EXIT_STATUSES, ExitCode

    readme = _exit_table(README)
    assert readme == _exit_table(DOCS / "contract.md")
    statuses = [status for status, _ in readme]
    assert statuses == sorted(v for k, v in vars(ExitCode).items() if k.isupper())
    assert {status for status, _ in ERROR_CODES.values()} <= set(statuses)
    # the tables are copies of the one declaration, word for word
    assert readme == [(status, meaning.replace("``", "`"))
                      for status, (_brief, meaning) in EXIT_STATUSES.items()]


def _toml_tables(path: Path) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for block in re.findall(r"^```toml\n(.*?)^```", path.read_text(encoding="utf-8"),
                            flags=re.M | re.S):
        out.update(tomllib.loads(block))
    return out


def test_the_configuration_tables_match_the_defaults() -> None:
    from zbtools.core.call.config import EXEC_DEFAULTS, FILES_DEFAULTS, LIMIT_KEYS, WEB_DEFAULTS

    limits = _toml_tables(DOCS / "configuration.md")["limits"]
    assert limits == {key: default for key, (default, _min, _meaning) in LIMIT_KEYS.items()}
    assert _toml_tables(DOCS / "commands.md")["exec"] == EXEC_DEFAULTS
    assert _toml_tables(DOCS / "configuration.md")["files"] == FILES_DEFAULTS
    web = _toml_tables(DOCS / "media-and-web.md")["web"]
    assert set(web) == set(WEB_DEFAULTS)
    examples = {"searxng_url", "allow"}  # shown with example values; empty by default
    assert {k: v for k, v in web.items() if k not in examples} == {
        k: v for k, v in WEB_DEFAULTS.items() if k not in examples}


def test_contributing_names_what_ci_runs_and_what_devgen_writes() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    test_command = re.search(r'^TEST_COMMAND="(.*)"$', ci, flags=re.M)
    assert test_command is not None and test_command.group(1) in text
    for line in ci.splitlines():
        if line.startswith(".venv/bin/"):
            assert line in text, f"CONTRIBUTING.md does not show the CI step {line!r}"
    from zbtools import devgen

    for path in devgen.outputs():
        rel = Path(path).relative_to(REPO)
        named = {rel.as_posix(), f"{rel.parent.as_posix()}/", f"{rel.parent.as_posix()}/*.json",
                 f"{rel.parent.parent.as_posix()}/<dialect>/*.json"}
        assert any(f"`{name}`" in text for name in named), (
            f"CONTRIBUTING.md does not say that devgen writes {rel.as_posix()}")
    assert "zbtools/tools/<name>.py" in text and "python -m zbtools.devgen" in text
    assert "benchmarks/README.md" in text


# What the code names, it holds: a path (``zbtools/core/files/decoding.py``, ``tests/core/...``,
# ``core/state/store.py`` read from the package's root) or a dotted module
# (``zbtools.core.editing.matching``) named in a comment or a docstring exists. Paths with a
# placeholder (``<name>``, ``*``, ``{a,b}``) are patterns, not names.
NAMED_PATH = re.compile(r"(?<![\w/.<-])((?:zbtools|tests|benchmarks|docs)/[\w./-]*\w)(?![\w<*{])")
PACKAGE_PATH = re.compile(
    r"(?<![\w/.<-])((?:core|tools|surfaces|dialects|toolkit)/[\w/]*\.py)\b")
DOTTED = re.compile(r"(?<![\w./-])zbtools(?:\.[A-Za-z_]\w*)+")


@functools.cache
def _python_commentary(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str, bool]]]:
    """The comments (line, text) and the docstrings (line, text, is the module's) of a file."""
    import ast
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    comments = [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    docstrings = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=True)
            if doc is not None:
                line = node.body[0].lineno
                docstrings.append((line, doc, isinstance(node, ast.Module)))
    return comments, docstrings


def _dotted_exists(name: str) -> bool:
    """``zbtools.a.b``: the longest module prefix exists, and the rest are its attributes."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            break
    else:
        return False
    if cut == len(parts):
        return True
    try:
        obj: object = importlib.import_module(".".join(parts[:cut]))
    except ImportError:  # an optional dependency missing: the module is there
        return True
    for attr in parts[cut:]:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def _dead_names(text: str, line: int = 1) -> list[str]:
    dead = []
    for m in NAMED_PATH.finditer(text):
        if not (REPO / m.group(1)).exists():
            dead.append(f"line {line + text.count(chr(10), 0, m.start())}: {m.group(1)}")
    for m in PACKAGE_PATH.finditer(text):
        if not (REPO / "zbtools" / m.group(1)).exists():
            dead.append(f"line {line + text.count(chr(10), 0, m.start())}: {m.group(1)}")
    for m in DOTTED.finditer(text):
        if not _dotted_exists(m.group(0)):
            dead.append(f"line {line + text.count(chr(10), 0, m.start())}: {m.group(0)}")
    return dead


@pytest.mark.parametrize("tree", CODE_TREES)
def test_the_paths_and_modules_the_code_names_exist(tree: str) -> None:
    dead = []
    for path in _code_files(tree):
        if path.suffix != ".py":
            continue
        comments, docstrings = _python_commentary(path)
        pieces = [*comments, *((line, doc) for line, doc, _module in docstrings)]
        dead += [f"{_name(path)} {d}" for line, piece in pieces for d in _dead_names(piece, line)]
    assert not dead, "named in comments or docstrings, but not in the repository:\n" + (
        "\n".join(dead))


def test_the_dead_name_check_catches_what_it_should() -> None:
    assert not _dead_names("zbtools/core/files/decoding.py, tests/core/, core/call/args.py, "
                           "zbtools.core.editing.matching.apply_requests, "
                           "completions/zbtools.bash, zbtools/tools/<name>.py, zbtools.1")
    for text in ("zbtools/core/files/textio.py", "``core/state.py``", "tests/test_textio.py",
                 "zbtools.core.files.textio", "zbtools.core.editing.matching.tiers"):
        assert _dead_names(text), text


# A timing figure ("~4 ms", "27 us", "5x faster") in a docstring goes stale unseen: figures live
# in benchmarks/README.md (#figures-behind-the-code), which a docstring cites. Seconds are not
# matched: a duration in seconds is a setting (a timeout, a grace period), not a measurement.
TIME_FIGURE = re.compile(
    r"(?<![\w.])~?\d+(?:[.,]\d+)?(?:\s*-\s*\d+(?:[.,]\d+)?)?\s*"
    r"(?:ms|µs|us|ns|milli(?:second)?s?|microseconds?|nanoseconds?)\b"
    r"|\b\d+(?:\.\d+)?\s*[x×]\s+(?:faster|slower)\b"
    r"|\b\d+(?:\.\d+)?\s*(?:%|s|seconds?)\s+(?:faster|slower)\b")


def _figures(text: str) -> list[str]:
    return [m.group(0) for m in TIME_FIGURE.finditer(text)]


def test_no_docstring_carries_a_timing_figure() -> None:
    found = []
    for path in _code_files("zbtools"):
        if path.suffix != ".py":
            continue
        found += [f"{_name(path)} line {line}: {figure!r}"
                  for line, doc, _module in _python_commentary(path)[1]
                  for figure in _figures(doc)]
    assert not found, "timing figures belong in benchmarks/README.md:\n" + "\n".join(found)


def test_the_figure_pattern_catches_what_it_should() -> None:
    for text in ("costs ~4 ms", "10 ms of a call", "3-10 ms", "~0.12 us per rule", "27 µs",
                 "about 5x faster", "2% faster", "20 milliseconds", "0.3ms"):
        assert _figures(text), text
    for text in ("a timeout of 30 seconds", "kill_grace (2 s)", "``SWEEP_EVERY`` seconds",
                 "st_mtime_ns", "50 MB", "sha256", "a 2-CPU machine", "10 users"):
        assert not _figures(text), text


# A module docstring is a paragraph and a map; what it explained at length lives in docs/.
# Tool modules are not under zbtools/core/: their docstring is the tool's documentation.
MODULE_DOCSTRING_MAX_LINES = 25


def test_core_module_docstrings_are_a_paragraph_and_a_map() -> None:
    long = []
    for path in sorted((REPO / "zbtools" / "core").rglob("*.py")):
        for _line, doc, module in _python_commentary(path)[1]:
            if module and len(doc.splitlines()) > MODULE_DOCSTRING_MAX_LINES:
                long.append(f"{_name(path)}: {len(doc.splitlines())} lines")
    assert not long, (f"module docstrings over {MODULE_DOCSTRING_MAX_LINES} lines (move the "
                      "detail to a docs/ page and cite it):\n" + "\n".join(long))
