"""Invariant: the syntax guard of a Python file agrees with Python's own ``compile()``.

Random line-level edits (a line deleted, duplicated, moved, a line of the file or a short
statement inserted at some indentation, a character inserted) of real Python sources (files of
the standard library this interpreter ships, and a file of the shapes a function's body takes:
async generators, scope statements, one-line bodies, tabs), applied one after another to the
same file as an agent in a ``batch`` session would: "introduced" is reported exactly when the
old text compiles and the new one does not, and never when the new one compiles; the chunk
check of a file edited again (``core/code/pychunks.py``) is on throughout. Through the real
tool, ``check_syntax: refuse`` refuses exactly those changes and a refusal never changes the
file.
"""

from __future__ import annotations

import os
import sysconfig
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.code import pychunks
from zbtools.core.code.languages import LANGUAGES
from zbtools.core.code.syntax import introduced

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

QUICK: dict[str, Any] = {"phases": (Phase.generate,), "database": None}
PYTHON = LANGUAGES["python"]
SNIPPETS = [b"x = 1", b"pass", b"return x", b"yield", b"break", b"else:", b"def g():",
            b"class C:", b"import os", b"@decorator", b"global y", b"nonlocal y", b"try:",
            b"except Exception:", b"await x", b"from __future__ import annotations", b"(",
            b")", b"'''", b"x = [", b"]", b"if x:", b"    pass", b"# a comment", b"",
            b"return 1", b"yield 1", b"f(a=1, a=2)", b"a, *b, *c = x", b"async def h():",
            b"except:", b"continue"]


def compiles(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():  # (the sources' invalid escapes: not our concern)
            warnings.simplefilter("ignore")
            compile(data, "<oracle>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _sources() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(stdlib.glob("*.py")):
        data = path.read_bytes()
        if 150 <= data.count(b"\n") <= 800 and compiles(data) and b"coding" not in data[:200]:
            found.append(path)
    return found[:40]


SOURCES = _sources()
# the shapes of function bodies the chunk check must get right, edited on their own too
FUNCTIONS = Path(__file__).resolve().parents[1] / "data" / "guard_sources" / "functions.py.txt"
INDENTS = [b"", b"    ", b"        ", b"\t"]

# (kind, where, other, snippet index, indent index)
edits = st.tuples(st.sampled_from(["delete", "duplicate", "move", "insert", "snippet", "char",
                                   "between"]),
                  st.floats(0, 1), st.floats(0, 1), st.integers(0, len(SNIPPETS) - 1),
                  st.integers(0, len(INDENTS)))


def apply(data: bytes, edit: tuple[str, float, float, int, int]) -> bytes:
    kind, where, other, snippet, indent = edit
    lines = data.split(b"\n")
    i = min(int(where * len(lines)), len(lines) - 1)
    j = min(int(other * len(lines)), len(lines) - 1)
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "move":
        lines.insert(j, lines.pop(i))
    elif kind == "insert":
        lines.insert(i, lines[j])
    elif kind == "snippet":
        # at the indentation of the sample's choice, or of the line it goes before
        line = lines[i]
        own = line[:len(line) - len(line.lstrip())]
        lines.insert(i, (INDENTS[indent] if indent < len(INDENTS) else own) + SNIPPETS[snippet])
    elif kind == "between":
        # a statement at column 0 into the blank lines after a definition (where a chunk
        # ends): inside a class, it ends the class before the next member
        while i < len(lines) - 1 and lines[i].strip():
            i += 1
        lines.insert(i, (b"x = 1", b"import os", b"pass", b"")[snippet % 4])
    else:
        line = lines[i]
        k = min(int(other * (len(line) + 1)), len(line))
        lines[i] = line[:k] + b"():[ \t"[snippet % 7:snippet % 7 + 1] + line[k:]
    return b"\n".join(lines)


def check_sequence(source: Path, plan: list[tuple[str, float, float, int, int]]) -> None:
    key = f"invariant\0{source}"
    current = source.read_bytes()
    pychunks.forget(key)
    assert introduced(PYTHON, None, current, key=key) == []  # remembered: the chunk check is on
    for edit in plan:
        new = apply(current, edit)
        problems = introduced(PYTHON, current, new, key=key)
        before_ok, after_ok = compiles(current), compiles(new)
        if after_ok:
            assert problems == [], (edit, problems)
        elif before_ok:
            assert problems, edit
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    compile(new, "<oracle>", "exec", dont_inherit=True)
            except SyntaxError as exc:
                assert problems[0].line == exc.lineno
        if after_ok or not before_ok:
            current = new  # go on from the new version, as the next edit of a session would


def search(examples: int, sources: list[Path] | None = None, **overrides: Any) -> None:
    @invariant(examples=examples, **overrides)
    @given(source=st.sampled_from(sources or [*SOURCES, FUNCTIONS]),
           plan=st.lists(edits, min_size=1, max_size=10))
    def guard_agrees_with_compile(source: Path, plan: list[tuple[str, float, float, int, int]]
                                  ) -> None:
        check_sequence(source, plan)

    guard_agrees_with_compile()


def test_the_python_guard_agrees_with_compile() -> None:
    assert len(SOURCES) >= 20
    search(examples=100)


SCOPED = [b"return 1", b"yield 1", b"await x", b"nonlocal y", b"global y", b"break",
          b"continue", b"f(a=1, a=2)", b"x = 1", b"else:"]


def every_scoped_snippet_on_every_line() -> None:
    """Each statement whose validity depends on the function around it, inserted before each
    line of the function-shapes file at that line's indentation, and each block opener at
    column 0 (the statements after it change scope): a single edit, checked from the
    remembered file (so through the chunk check) against ``compile``."""
    lines = FUNCTIONS.read_bytes().split(b"\n")
    placed = [(snippet, len(INDENTS)) for snippet in SCOPED] + \
        [(snippet, 0) for snippet in (b"class C:", b"def g():", b"if x:", b"x = 1")]
    for i in range(len(lines)):
        for snippet, indent in placed:
            plan = [("snippet", (i + 0.5) / len(lines), 0.0, SNIPPETS.index(snippet), indent)]
            check_sequence(FUNCTIONS, plan)


def test_the_guard_agrees_with_compile_in_function_bodies() -> None:
    every_scoped_snippet_on_every_line()
    search(examples=50, sources=[FUNCTIONS])


def test_refuse_through_the_tool_never_changes_the_file(tmp_path: Path) -> None:
    @invariant(examples=25)
    @given(source=st.sampled_from(SOURCES), edit=edits)
    def refuse(source: Path, edit: tuple[str, float, float, int, int]) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
            ws = Path(folder)
            old = source.read_bytes()
            (ws / "m.py").write_bytes(old)
            new = apply(old, edit)
            import json

            call = run_inprocess(["write_file"], workspace=ws, stdin=json.dumps(
                {"path": "m.py", "content": new.decode("utf-8", "surrogateescape"),
                 "check_syntax": "refuse"}))
            envelope = call.json
            should_refuse = compiles(old) and not compiles(new)
            assert (not envelope["ok"]) == should_refuse, (edit, envelope)
            if not envelope["ok"]:
                assert envelope["error"]["code"] == "syntax_error"
                assert (ws / "m.py").read_bytes() == old
                assert os.listdir(ws) == ["m.py"]
            else:
                assert (ws / "m.py").read_bytes() == new

    refuse()


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the ``pass`` that stands for the next class member, a chunk that ends outside
    the class compiles alone while the whole file does not: the search must notice."""
    real = pychunks.member_source
    monkeypatch.setattr(pychunks, "member_source",
                        lambda chunk, before, after: real(chunk, before, None))
    failure = planted_bug_is_caught(lambda: search(examples=400, **QUICK))
    assert isinstance(failure, AssertionError), failure


def test_a_planted_bug_in_a_function_body_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a ``pass`` standing for the statement after a function-body chunk, a chunk that
    opens a class at column 0 compiles alone while the statements after it, now in the class,
    may not (a ``return``): the search must notice."""
    monkeypatch.setattr(pychunks, "IN_FUNCTION", b"pass\n")
    failure = planted_bug_is_caught(every_scoped_snippet_on_every_line)
    assert isinstance(failure, AssertionError), failure
