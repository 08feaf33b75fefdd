"""A file's definitions per language: kinds, dotted names, lines and signatures
(docs/internals/code.md#symbols), and which files have a language at all
(docs/internals/code.md#languages)."""

from __future__ import annotations

import pytest

from zbtools.core.code.languages import LANGUAGES, grammar, language_for, tags_query
from zbtools.core.code.symbols import read_symbols

SAMPLES: dict[str, tuple[bytes, list[tuple[str, str, int, int]]]] = {
    "a.py": (b'X = 1\n@dec\nclass A(B):\n    """doc"""\n    def m(self, a,\n          b) -> int:\n'
             b'        def inner(): pass\n        return 1\n    async def n(self): ...\n'
             b'def f(): pass\n',
             [("constant", "X", 1, 1), ("class", "A", 3, 9), ("method", "A.m", 5, 8),
              ("function", "A.m.inner", 7, 7), ("method", "A.n", 9, 9), ("function", "f", 10, 10)]),
    "a.go": (b'package main\n// New makes\nfunc New() *T { return nil }\ntype T struct { a int }\n'
             b'func (t *T) Run(x int) error {\n  return nil\n}\n',
             [("function", "New", 3, 3), ("type", "T", 4, 4), ("method", "T.Run", 5, 7)]),
    "a.rs": (b'struct S;\nimpl<T> Foo for S<T> {\n    fn go(&self) {}\n}\n#[test]\nfn t() {}\n'
             b'trait Tr { fn x(&self); }\n',
             [("class", "S", 1, 1), ("method", "S.go", 3, 3), ("function", "t", 6, 6),
              ("interface", "Tr", 7, 7)]),
    "a.cpp": (b'int proto(int);\nclass C { public: void m(); int n() { return 1; } };\n'
              b'void C::m() { }\nstatic int f(int a) { return a; }\n',
              [("class", "C", 2, 2), ("method", "C.n", 2, 2), ("method", "C.m", 3, 3),
               ("function", "f", 4, 4)]),
    "a.ts": (b'export class K { method(a: number): string { return ""; } }\n'
             b'interface I { x(): void }\nfunction g() {}\nconst h = () => 1;\n',
             [("class", "K", 1, 1), ("method", "K.method", 1, 1), ("interface", "I", 2, 2),
              ("method", "I.x", 2, 2), ("function", "g", 3, 3), ("function", "h", 4, 4)]),
    "a.rb": (b'module M\n  class K\n    def m; end\n    def self.s; end\n  end\nend\n',
             [("module", "M", 1, 6), ("class", "M.K", 2, 5), ("method", "M.K.m", 3, 3),
              ("method", "M.K.s", 4, 4)]),
    "A.java": (b'class A {\n  void m() {}\n  interface I { void q(); }\n}\n',
               [("class", "A", 1, 4), ("method", "A.m", 2, 2), ("interface", "A.I", 3, 3),
                ("method", "A.I.q", 3, 3)]),
    "a.cs": (b'namespace N {\n class A {\n  void M() {}\n  int P { get; set; }\n }\n}\n',
             [("module", "N", 1, 6), ("class", "N.A", 2, 5), ("method", "N.A.M", 3, 3),
              ("property", "N.A.P", 4, 4)]),
    "a.php": (b'<?php\nclass A {\n  function m() {}\n}\nfunction f() {}\n',
              [("class", "A", 2, 4), ("method", "A.m", 3, 3), ("function", "f", 5, 5)]),
    "a.sh": (b'f() { echo; }\nfunction g {\n  f\n}\n',
             [("function", "f", 1, 1), ("function", "g", 2, 4)]),
    "a.c": (b'int proto(int);\nstruct S { int a; };\nint main(void) {\n  return 0;\n}\n',
            [("class", "S", 2, 2), ("function", "main", 3, 5)]),
    "a.js": (b'class K {\n  constructor() {}\n  run() {}\n}\nfunction g() {}\n',
             [("class", "K", 1, 4), ("method", "K.run", 3, 3), ("function", "g", 5, 5)]),
}


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_definitions_have_kind_dotted_name_and_lines(path: str) -> None:
    source, expected = SAMPLES[path]
    language = language_for(path)
    assert language is not None and language.has_symbols
    found = read_symbols(language, source)
    assert not found.has_errors
    assert [(d.kind, d.qualname, d.start_line, d.end_line) for d in found.definitions] == expected


def test_decorators_and_adjacent_comments_belong_to_the_definition() -> None:
    source = b"import x\n\n# one\n# two\n@dec\ndef f():\n    pass\n\n# apart\n\ndef g(): pass\n"
    f, g = read_symbols(LANGUAGES["python"], source).definitions
    assert (f.start_line, f.outer_start_line) == (6, 3)
    assert source[f.outer_start_byte:].startswith(b"# one")
    assert (g.start_line, g.outer_start_line) == (11, 11)


def test_the_signature_runs_to_the_body_on_one_line() -> None:
    source = b"def f(a,\n      b: int = 2,\n) -> str:\n    return ''\n"
    (f,) = read_symbols(LANGUAGES["python"], source).definitions
    assert f.signature == "def f(a, b: int = 2, ) -> str:"


@pytest.mark.parametrize("path,head,expected", [
    ("src/app.py", b"", "python"), ("x.PYI", b"", "python"), ("a.h", b"", "cpp"),
    ("web/x.tsx", b"", "tsx"), ("Rakefile", b"", "ruby"), ("conf.yml", b"", "yaml"),
    ("bin/tool", b"#!/usr/bin/env -S python3.12 -u\n", "python"),
    ("bin/run", b"#!/bin/sh\nset -e\n", "bash"), ("bin/srv", b"#!/usr/bin/node\n", "javascript"),
    ("notes.txt", b"", None), ("bin/x", b"#!/usr/bin/perl\n", None),
    ("script.txt", b"#!/bin/bash\n", None),  # an extension says what the file is
])
def test_a_language_comes_from_the_name_then_the_shebang(
        path: str, head: bytes, expected: str | None) -> None:
    found = language_for(path, head)
    assert (found.name if found is not None else None) == expected


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_every_grammar_loads_and_every_tags_query_compiles(name: str) -> None:
    language = LANGUAGES[name]
    assert grammar(language) is not None
    if language.has_symbols:
        assert tags_query(language).pattern_count > 0


# What the grammars' own tags queries leave out, found by comparing with universal-ctags on
# real files (benchmarks/code_accuracy.py; docs/internals/code.md#accuracy).
ADDED: dict[str, tuple[bytes, list[tuple[str, str, int]]]] = {
    "E.java": (b'enum E {\n  A;\n  E() {}\n  int f() { return 1; }\n}\nrecord R(int a) {}\n'
               b'@interface Ann {}\nclass K {\n  K(int a) {}\n}\n',
               [("enum", "E", 1), ("method", "E.E", 3), ("method", "E.f", 4), ("class", "R", 6),
                ("interface", "Ann", 7), ("class", "K", 8), ("method", "K.K", 9)]),
    "i.go": (b'package p\ntype I interface {\n\tM(a int) error\n\tN()\n}\n',
             [("type", "I", 2), ("method", "I.M", 3), ("method", "I.N", 4)]),
    "t.ts": (b'type T<K> = K | null;\nexport type U = { a: number };\nenum E { A, B }\n',
             [("type", "T", 1), ("type", "U", 2), ("enum", "E", 3)]),
    "s.cpp": (b'namespace n {\nclass Fwd;\nstruct S { ~S() {} };\nS::~S2() {}\n'
              b'template<class K> int T<K>::m() { return 0; }\n'
              b'template<class K> int T<K>::In::g() { return 0; }\n'
              b'template<class K> struct T<K>::Node { int h() { return 1; } };\n}\n',
              [("module", "n", 1), ("class", "n.S", 3), ("method", "n.S.~S", 3),
               ("method", "n.S.~S2", 4), ("method", "n.T.m", 5), ("method", "n.T.In.g", 6),
               ("class", "n.T.Node", 7), ("method", "n.T.Node.h", 7)]),
    "k.rs": (b'enum E { A }\ntype R<T> = Result<T, E>;\n',
             [("enum", "E", 1), ("type", "R", 2)]),
    "e.c": (b'enum color { RED };\nenum color c;\nstruct s;\nstruct s *p;\n',
            [("enum", "color", 1)]),
}


@pytest.mark.parametrize("path", sorted(ADDED))
def test_what_the_grammars_queries_leave_out(path: str) -> None:
    source, expected = ADDED[path]
    language = language_for(path)
    assert language is not None
    found = read_symbols(language, source)
    assert [(d.kind, d.qualname, d.start_line) for d in found.definitions] == expected


@pytest.mark.parametrize("path", sorted({**SAMPLES, **ADDED}))
def test_definitions_alone_are_the_same_definitions(path: str) -> None:
    """``references=False`` (grep's scopes) runs the query without its reference patterns."""
    source = {**SAMPLES, **ADDED}[path][0]
    language = language_for(path)
    assert language is not None
    full = read_symbols(language, source)
    alone = read_symbols(language, source, references=False)
    assert [d.to_json() for d in alone.definitions] == [d.to_json() for d in full.definitions]
    assert alone.references == []

def test_comments_above_a_first_method_and_export_belong_to_the_definition() -> None:
    source = b"class A:\n    # about m\n    @dec\n    def m(self):\n        pass\n"
    (a, m) = read_symbols(LANGUAGES["python"], source).definitions
    assert (m.outer_start_line, a.outer_start_line) == (2, 1)
    ts = b"// doc\nexport function g() {}\n"
    (g,) = read_symbols(LANGUAGES["typescript"], ts).definitions
    assert (g.start_line, g.outer_start_line, g.outer_start_byte) == (2, 1, 0)


def test_a_comment_ending_a_line_of_code_stays_with_that_line() -> None:
    source = b"class A:  # note\n    def m(self):\n        pass\nprint(1)  # x\ndef f(): pass\n"
    (_, m, f) = read_symbols(LANGUAGES["python"], source).definitions
    assert (m.outer_start_line, f.outer_start_line) == (2, 5)
    c = b"int x; /* c */\nint f(void) { return 0; }\n"
    (g,) = read_symbols(LANGUAGES["c"], c).definitions
    assert g.outer_start_line == 2


def test_the_hashbang_line_is_not_a_comment_above_the_first_definition() -> None:
    source = b"#!/bin/bash\n# greets\nf() {\n  echo\n}\n"
    (f,) = read_symbols(LANGUAGES["bash"], source).definitions
    assert (f.start_line, f.outer_start_line) == (3, 2)


def test_a_function_held_by_a_declaration_starts_with_the_declaration() -> None:
    source = b"// doc\nexport const h = () => 1;\nconst a = 1, b = () => 2;\n"
    h, b = read_symbols(LANGUAGES["typescript"], source).definitions
    assert (h.name, h.outer_start_byte, h.outer_start_line) == ("h", 0, 1)
    assert (b.name, source[b.outer_start_byte:b.end_byte]) == ("b", b"b = () => 2")
