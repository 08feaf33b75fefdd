"""The parse errors a change introduced (core/code/syntax.py), for each of the 17 languages.

Each language has a small valid file, an edit that keeps it valid and one that breaks it;
errors a file already had are not reported again, also when the change moves them to other
lines; the Python chunk check of a file edited again agrees with compiling it whole.
"""

from __future__ import annotations

import pytest

from zbtools.core.code import pychunks
from zbtools.core.code.languages import LANGUAGES
from zbtools.core.code.syntax import excerpt, introduced

# language: (a valid file, (old, new) keeping it valid, (old, new) breaking it)
CASES: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {
    "python": ("def f(x):\n    return x + 1\n\n\nclass A:\n    y = 2\n",
               ("x + 1", "x + 2"), ("x + 1", "(x + 1")),
    "javascript": ("function f(x) {\n  return x + 1;\n}\nconst a = [1, 2];\n",
                   ("x + 1", "x * 2"), ("x + 1;", "x + ;")),
    "typescript": ("function f(x: number): number {\n  return x + 1;\n}\nlet y: string = 'a';\n",
                   ("'a'", "'b'"), ("x + 1;", "x + ;")),
    "tsx": ("const A = () => <div>{1}</div>;\nexport default A;\n",
            ("{1}", "{2}"), ("<div>{1}</div>", "<div>{</div>")),
    "go": ("package main\n\nfunc f(x int) int {\n\treturn x + 1\n}\n",
           ("x + 1", "x + 2"), ("x + 1\n", "x +\n}\n")),
    "rust": ("fn f(x: i32) -> i32 {\n    x + 1\n}\n\nstruct S { a: u8 }\n",
             ("x + 1", "x * 2"), ("x + 1", "let = 1;")),
    "java": ("class A {\n    int f(int x) {\n        return x + 1;\n    }\n}\n",
             ("x + 1", "x + 2"), ("x + 1;", "x + ;")),
    "c": ("int f(int x) {\n    return x + 1;\n}\n", ("x + 1", "x - 1"), ("x + 1;", "x + 1")),
    "cpp": ("namespace n {\nint f(int x) {\n    return x + 1;\n}\n}\n",
            ("x + 1", "x - 1"), ("x + 1;", "x + 1")),
    "c_sharp": ("class A {\n    int F(int x) {\n        return x + 1;\n    }\n}\n",
                ("x + 1", "x - 1"), ("x + 1;", "x + 1")),
    "ruby": ("def f(x)\n  x + 1\nend\n\nclass A\nend\n", ("x + 1", "x + 2"), ("x + 1", "x = (")),
    "php": ("<?php\nfunction f($x) {\n    return $x + 1;\n}\n",
            ("$x + 1", "$x + 2"), ("$x + 1;", "$x + ;")),
    "bash": ("if [ -n \"$x\" ]; then\n  echo hi\nfi\n", ("echo hi", "echo ho"), ("fi\n", "\n")),
    "json": ('{\n  "a": 1,\n  "b": [1, 2]\n}\n', ('"a": 1', '"a": 2'), ('"a": 1,', '"a": 1,,')),
    "yaml": ("a: 1\nb:\n  - x\n  - y\n", ("a: 1", "a: 2"), ("a: 1", "a: [1, 2")),
    "toml": ('[a]\nb = 1\nc = "x"\n', ("b = 1", "b = 2"), ("b = 1", "b = ")),
    "html": ("<div>\n  <p>hi</p>\n</div>\n", ("hi", "ho"), ("<p>hi</p>", '<p a=>hi</p>')),
    "css": ("a {\n  color: red;\n}\n", ("red", "blue"), ("color: red;\n}", "color: red;\n")),
}


def test_every_language_has_a_case() -> None:
    assert sorted(CASES) == sorted(LANGUAGES)
    assert len(CASES) == 18  # 17 languages; TypeScript and TSX are two grammars


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, (text, old)
    return text.replace(old, new)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_valid_edit_introduces_nothing(name: str) -> None:
    text, good, _ = CASES[name]
    language = LANGUAGES[name]
    assert introduced(language, None, text.encode()) == []
    assert introduced(language, text.encode(), edited(text, *good).encode()) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_breaking_edit_is_reported_with_its_lines(name: str) -> None:
    text, _, bad = CASES[name]
    after = edited(text, *bad).encode()
    problems = introduced(LANGUAGES[name], text.encode(), after)
    assert problems, name
    first = problems[0]
    assert 1 <= first.line <= after.count(b"\n") + 1
    assert first.column >= 1 and first.message
    # the lines around it, numbered as read_file numbers them
    assert f"{first.line:6}\t" in first.lines
    # the same error, already in the file, is not introduced by an unrelated edit
    _, good, _ = CASES[name]
    if good[0] in after.decode() and after.decode().count(good[0]) == 1:
        again = edited(after.decode(), *good).encode()
        assert introduced(LANGUAGES[name], after, again) == [], name


@pytest.mark.parametrize("name", sorted(CASES))
def test_old_errors_moved_by_the_change_are_not_new(name: str) -> None:
    """A file already broken: lines added above the error move it; it is not reported."""
    text, _, bad = CASES[name]
    broken = edited(text, *bad)
    lines = broken.split("\n")
    # a blank line (or a comment-free filler every grammar accepts) at the top of the file
    head = {"php": 1, "bash": 0}.get(name, 0)
    moved = "\n".join([*lines[:head + 1], *([""] * 3 if name != "json" else []),
                       *lines[head + 1:]]) if name not in ("json",) else broken + "\n"
    language = LANGUAGES[name]
    assert introduced(language, broken.encode(), moved.encode()) == [], name
    # and a new, separate break after it is reported
    if name == "python":
        worse = moved + "def g(:\n    pass\n"
        assert introduced(language, moved.encode(), worse.encode())


def test_python_uses_the_compiler_not_tree_sitter(monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.code import languages

    def no_parser(language: object) -> None:
        raise AssertionError("tree-sitter was asked to parse Python")

    monkeypatch.setattr(languages, "parser", no_parser)
    before = b"def f():\n    return 1\n"
    problems = introduced(LANGUAGES["python"], before, b"def f():\nreturn 1\n")
    assert problems and "indent" in problems[0].message
    # the compiler's checks beyond the parser: return outside a function
    assert introduced(LANGUAGES["python"], b"x = 1\n", b"return 1\n")[0].message == \
        "'return' outside function"


def test_python_warnings_are_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    assert introduced(LANGUAGES["python"], b"x = 1\n", b"x = '\\d' is 1\n") == []
    assert capfd.readouterr().err == ""


def test_python_both_broken_reports_only_the_new_place() -> None:
    python = LANGUAGES["python"]
    before = b"def f(:\n    pass\n\n\nx = 1\n"
    # fixed at the old place, broken at a new one: the compiler's first error moved
    after = b"def f():\n    pass\n\n\nx = (1\n"
    assert [p.line for p in introduced(python, before, after)] == [5]
    # an edit elsewhere that leaves the old error where it was
    assert introduced(python, before, b"def f(:\n    pass\n\n\nx = 2\n") == []


def test_line_shift_of_an_old_error_in_a_tree_sitter_language() -> None:
    js = LANGUAGES["javascript"]
    before = b"let a = 1;\nlet b = ;\nlet c = 3;\n"
    after = b"// one\n// two\nlet a = 1;\nlet b = ;\nlet c = 3;\n"
    assert introduced(js, before, after) == []
    after2 = after + b"let d = ;\n"
    assert [p.line for p in introduced(js, after, after2)] == [6]


def test_unsupported_bytes_and_large_files() -> None:
    # UTF-16 with its BOM is read as text
    js = LANGUAGES["javascript"]
    good = "let a = 1;\n".encode("utf-16")
    bad = "let a = ;\n".encode("utf-16")
    assert introduced(js, good, good) == []
    assert introduced(js, good, bad) != []


def test_excerpt_numbers_lines_as_read_file_does() -> None:
    data = b"a\nb\nc\nd\n"
    assert excerpt(data, 0) == "     1\ta\n     2\tb\n"
    assert excerpt(data, 2) == "     2\tb\n     3\tc\n     4\td\n"
    assert excerpt(data, 3) == "     3\tc\n     4\td\n"


def test_chunk_check_of_a_file_edited_again() -> None:
    python = LANGUAGES["python"]
    lines = ["import os", "", ""]
    for i in range(40):
        lines += [f"def f{i}(x):", f"    return x + {i}", "", ""]
    lines += ["class A:", "    def m(self):", "        return 1", "", "    def n(self):",
              "        return 2", ""]
    text = "\n".join(lines).encode()
    key = "test-chunks"
    pychunks.forget(key)
    assert introduced(python, None, text, key=key) == []  # remembered
    # a member of the class, then a top-level function: checked in part
    steps = [(b"return 1", b"return 11"), (b"x + 3", b"x + 33"), (b"return 2", b"return (2"),
             ]
    current = text
    verdicts = []
    for old, new in steps:
        after = current.replace(old, new, 1)
        verdicts.append(pychunks.check(key, current, after))
        problems = introduced(python, current, after, key=key)
        assert bool(problems) == (new == b"return (2")
        if not problems:
            current = after
    assert verdicts[:2] == [True, True] and verdicts[2] is None
    # a member that dedents its own tail out of the class is never passed in part
    pychunks.remember(key, current)
    sneaky = current.replace(b"    def m(self):\n        return 11\n",
                             b"    def m(self):\n        return 11\ndef loose():\n    pass\n")
    assert bool(introduced(python, current, sneaky, key=key)) is False  # valid Python
    pychunks.remember(key, current)
    broken = current.replace(b"    def m(self):", b"def m(self):")
    assert introduced(python, current, broken, key=key)  # the next member's indent breaks


@pytest.mark.parametrize("name", ["javascript", "go", "json"])
def test_a_file_parsed_again_from_its_last_tree_agrees_with_a_fresh_parse(name: str) -> None:
    """In a session, a file edited again is parsed from its previous tree (tree-sitter's
    incremental parse): every answer equals that of a parse from scratch."""
    import random

    rng = random.Random(29)
    text = CASES[name][0]
    current = (text * 6).encode()
    language = LANGUAGES[name]
    key = f"test-trees-{name}"
    introduced(language, None, current, key=key)
    for _ in range(150):
        lines = current.split(b"\n")
        at = rng.randrange(len(lines))
        choice = rng.random()
        if choice < 0.4:
            lines.insert(at, lines[rng.randrange(len(lines))])
        elif choice < 0.8:
            del lines[at]
        else:
            lines[at] = lines[at][: rng.randrange(len(lines[at]) + 1)]
        after = b"\n".join(lines)
        warm = introduced(language, current, after, key=key)
        fresh = introduced(language, current, after)
        assert [(p.line, p.column, p.message) for p in warm] == \
            [(p.line, p.column, p.message) for p in fresh]
        current = after


def test_a_unit_that_starts_with_a_blank_line_still_knows_its_members_indent() -> None:
    """A blank line added right at a member's start joins that member: the next check must
    still give the member after a chunk its real indentation (found by the long invariant
    search: a column-0 sentinel let a class-ending chunk pass)."""
    python = LANGUAGES["python"]
    text = (b"class A:\n    def m(self):\n        return 1\n\n    def n(self):\n"
            b"        return 2\n\n    def o(self):\n        return 3\n")
    key = "test-blank-start"
    pychunks.forget(key)
    introduced(python, None, text, key=key)
    once = text.replace(b"\n\n    def n", b"\n\n\n    def n")
    assert introduced(python, text, once, key=key) == []
    broken = once.replace(b"        return 1\n", b"        return 1\nx = 1\n")
    assert introduced(python, once, broken, key=key)


def test_a_file_that_is_not_utf8_is_read_as_text() -> None:
    js = LANGUAGES["javascript"]
    latin = "let s = 'café';\n".encode("latin-1")
    assert introduced(js, None, latin) == []
    assert introduced(js, latin, latin + b"let t = ;\n")


def test_a_big_broken_python_file_is_compared_around_the_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``WINDOW_BYTES``, a Python file that already failed to compile is compared by
    tree-sitter only around the change (from a top-level definition), not whole: what it
    reports is at the file's own line numbers, and an old error far away is not reported."""
    from zbtools.core.code import syntax

    monkeypatch.setattr(syntax, "WINDOW_BYTES", 4096)
    monkeypatch.setattr(syntax, "WINDOW_LINES", 5)
    functions = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y\n\n\n" for i in range(400))
    before = ("x = = 1\n" + functions).encode()  # broken on its first line
    seen: list[int] = []
    real = syntax.tree_errors

    def counted(language: object, data: bytes, tree: object = None) -> list[syntax.Error]:
        seen.append(len(data))
        return real(language, data, tree)  # type: ignore[arg-type]

    monkeypatch.setattr(syntax, "tree_errors", counted)
    broken = before.replace(b"y = x + 300\n", b"y = (x + 300\n")
    problems = introduced(LANGUAGES["python"], before, broken)
    line = broken.split(b"\n").index(b"    y = (x + 300") + 1
    assert problems and abs(problems[0].line - line) <= 2, problems
    assert f"{problems[0].line:6}\t" in problems[0].lines
    assert seen and max(seen) < len(before) // 10, seen  # a window, not the file
    harmless = before.replace(b"y = x + 300\n", b"y = x + 301\n")
    assert introduced(LANGUAGES["python"], before, harmless) == []
