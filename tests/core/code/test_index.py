"""The workspace index: records parsed on every core, kept while files are unchanged, on disk
only when the file checks; the map's ranking and budget (docs/internals/code.md#repository-map)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.code import index as index_module
from zbtools.core.code import tagpool
from zbtools.core.code.index import CodeIndex, read_checked, signature, write_checked
from zbtools.core.code.languages import LANGUAGES
from zbtools.core.code.repomap import Ranking, build_map, def_line, line_tokens, rank, within_budget

PY = LANGUAGES["python"]
OLD = 10**9  # a time (ns) long before any test: what it signs has settled
NOW = 10**19


def sig(n: int = 1) -> tuple[int, int, int, int, int]:
    return (1, n, 10, OLD, OLD)


def sources(count: int) -> list[bytes]:
    return [(f"import os\n\nclass C{i}:\n    def m{i}(self):\n        return f{i - 1}()\n\n"
             f"def f{i}():\n    return C{i}().m{i}()\n").encode() * 40 for i in range(count)]


# -- records and the pool ----------------------------------------------------------------------


def test_a_record_holds_definitions_and_each_referenced_name_once() -> None:
    tags = tagpool.file_tags(PY, b"class A:\n    def m(self):\n        f(); f(); g.h()\n")
    assert tags[0] == "python" and tags[3] is False
    assert [(d[0], d[2], d[5], d[6]) for d in tags[1]] == [("class", "A", 1, 3),
                                                          ("method", "A.m", 2, 3)]
    assert tags[2] == ("f", "h")


def test_the_pool_gives_what_one_process_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [(PY, source) for source in sources(30)]
    monkeypatch.setattr(tagpool, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(tagpool, "CHUNK_BYTES", 4096)
    assert tagpool.parse_many(items, workers=3) == [tagpool.file_tags(*item) for item in items]


def test_chunks_a_helper_does_not_answer_are_parsed_by_the_caller(
        monkeypatch: pytest.MonkeyPatch) -> None:
    items = [(PY, source) for source in sources(20)]
    monkeypatch.setattr(tagpool, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(tagpool, "CHUNK_BYTES", 2048)
    parent = os.getpid()
    real = tagpool.file_tags

    def dies_in_a_helper(language: object, source: bytes) -> object:
        if os.getpid() != parent:
            os._exit(3)  # the helper dies mid-way, answering nothing
        return real(language, source)  # type: ignore[arg-type]

    monkeypatch.setattr(tagpool, "file_tags", dies_in_a_helper)
    assert tagpool.parse_many(items, workers=2) == [real(*item) for item in items]


def test_a_file_the_parser_fails_on_is_none_and_the_others_are_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = tagpool.file_tags

    def fails_on_one(language: object, source: bytes) -> object:
        if source == b"boom":
            raise RuntimeError("boom")
        return real(language, source)  # type: ignore[arg-type]

    monkeypatch.setattr(tagpool, "file_tags", fails_on_one)
    found = tagpool.parse_many([(PY, b"def a(): pass\n"), (PY, b"boom")], workers=1)
    assert found[0] is not None and found[1] is None


# -- validity ----------------------------------------------------------------------------------


def test_a_record_holds_only_for_the_signature_it_was_made_from() -> None:
    idx = CodeIndex("/ws")
    tags = tagpool.file_tags(PY, b"def a(): pass\n")
    idx.put("a.py", sig(), tags, NOW)
    assert idx.get("a.py", sig()) is tags
    for changed in ((2, 1, 10, OLD, OLD), (1, 2, 10, OLD, OLD), (1, 1, 11, OLD, OLD),
                    (1, 1, 10, OLD + 1, OLD), (1, 1, 10, OLD, OLD + 1)):
        assert idx.get("a.py", changed) is None


def test_a_file_not_yet_settled_is_not_kept() -> None:
    idx = CodeIndex("/ws")
    tags = tagpool.file_tags(PY, b"def a(): pass\n")
    fresh = (1, 1, 10, NOW - 1000, NOW - 1000)
    idx.put("a.py", fresh, tags, NOW)
    assert idx.get("a.py", fresh) is None


def test_the_index_survives_a_round_trip_through_its_file(tmp_path: Path) -> None:
    path = str(tmp_path / "state" / "tags.bin")
    idx = CodeIndex("/ws")
    tags = tagpool.file_tags(PY, b"def a(): pass\n")
    idx.put("a.py", sig(), tags, NOW)
    assert idx.save(path)
    again = CodeIndex("/ws")
    again.load(path)
    assert again.get("a.py", sig()) == tags
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty", "magic"])
def test_a_damaged_file_is_ignored_whole(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "tags.bin"
    idx = CodeIndex("/ws")
    idx.put("a.py", sig(), tagpool.file_tags(PY, b"def a(): pass\n"), NOW)
    idx.save(str(path))
    data = path.read_bytes()
    path.write_bytes({"garbage": os.urandom(len(data)), "truncated": data[:-7],
                      "flipped": data[:-30] + bytes([data[-30] ^ 1]) + data[-29:],
                      "empty": b"", "magic": b"X" + data[1:]}[damage])
    again = CodeIndex("/ws")
    again.load(str(path))
    assert again.records == {}
    assert again.dirty  # rewritten, so the next process does not meet it again


def test_a_file_written_for_another_workspace_or_version_is_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "tags.bin")
    idx = CodeIndex("/ws")
    idx.put("a.py", sig(), tagpool.file_tags(PY, b"def a(): pass\n"), NOW)
    idx.save(path)
    other = CodeIndex("/elsewhere")
    other.load(path)
    assert other.records == {}
    monkeypatch.setattr(index_module, "FORMAT", index_module.FORMAT + 1)
    same_root = CodeIndex("/ws")
    same_root.load(path)
    assert same_root.records == {}


def test_a_well_formed_file_of_the_wrong_shape_is_ignored(tmp_path: Path) -> None:
    path = str(tmp_path / "tags.bin")
    stamp = index_module.code_stamp("/ws")
    shapes: tuple[object, ...] = ((stamp, {}, {"a.py": ("not a signature", ())}),
                                  (stamp, {}, {"a.py": (sig(), ("cobol", (), (), False))}),
                                  (stamp, {}, []))
    for shape in shapes:
        write_checked(path, shape)
        idx = CodeIndex("/ws")
        idx.load(path)
        assert idx.records == {}


def test_records_of_a_grammar_that_changed_are_not_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "tags.bin")
    idx = CodeIndex("/ws")
    tags = tagpool.file_tags(PY, b"def a(): pass\n")
    idx.put("a.py", sig(), tags, NOW)
    idx.save(path)
    monkeypatch.setitem(index_module._GRAMMAR_STAMPS, "python", ((1, 2),))
    again = CodeIndex("/ws")
    again.load(path)
    assert "a.py" in again.records and again.get("a.py", sig()) is None


def test_read_checked_gives_none_for_an_absent_file(tmp_path: Path) -> None:
    assert read_checked(str(tmp_path / "absent")) is None


def test_forget_drops_records_a_complete_walk_did_not_meet() -> None:
    idx = CodeIndex("/ws")
    tags = tagpool.file_tags(PY, b"def a(): pass\n")
    for rel in ("a.py", "d/b.py", "d/c.py", "e/d.py"):
        idx.put(rel, sig(), tags, NOW)
    idx.forget({"d/b.py"}, "d")
    assert sorted(idx.records) == ["a.py", "d/b.py", "e/d.py"]


def test_signature_is_identity_size_and_both_times(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    st = os.stat(path)
    assert signature(st) == (st.st_dev, st.st_ino, 1, st.st_mtime_ns, st.st_ctime_ns)


# -- the ranking and the budget ----------------------------------------------------------------


def record(defs: list[tuple[str, str, int, int, int]], refs: tuple[str, ...]) -> tagpool.Tags:
    """defs: (kind, qualname, depth, start, end)."""
    return ("python", tuple((kind, q.rsplit(".", 1)[-1], q, q.rsplit(".", 1)[0] if "." in q
                             else None, depth, start, end, f"def {q.rsplit('.', 1)[-1]}()")
                            for kind, q, depth, start, end in defs), tuple(sorted(refs)), False)


def test_definitions_referenced_by_more_other_files_come_first() -> None:
    files = [("lib.py", record([("function", "popular", 0, 1, 2), ("function", "rare", 0, 3, 4),
                                ("function", "unused", 0, 5, 6)], ("rare",))),
             ("a.py", record([], ("popular", "rare"))),
             ("b.py", record([], ("popular",))),
             ("c.py", record([], ("popular",)))]
    ranking = rank(files)
    assert [(ranking.files[f][1][1][i][1], score) for f, i, score in ranking.order] == \
        [("popular", 3.0), ("rare", 1.0), ("unused", 0.0)]


def test_a_name_defined_in_several_files_shares_its_references() -> None:
    files = [("x.py", record([("function", "run", 0, 1, 1)], ())),
             ("y.py", record([("function", "run", 0, 1, 1), ("function", "own", 0, 2, 2)], ())),
             ("z.py", record([], ("run", "own")))]
    scores = {(files[f][0], files[f][1][1][i][1]): s for f, i, s in rank(files).order}
    assert scores == {("x.py", "run"): 0.5, ("y.py", "run"): 0.5, ("y.py", "own"): 1.0}


def test_a_method_brings_its_class_and_a_file_its_header_line() -> None:
    files = [("k.py", record([("class", "K", 0, 1, 9), ("method", "K.go", 1, 2, 3),
                              ("method", "K.stay", 1, 4, 5)], ())),
             ("u.py", record([], ("go",)))]
    repo = build_map(files, max_lines=3, max_tokens=1000)
    assert [(m.path, [d[2] for d in m.definitions]) for m in repo.files] == \
        [("k.py", ["K", "K.go"])]
    assert repo.lines == 3 and repo.truncated and repo.definitions_total == 3


def test_a_cut_ranking_answers_small_budgets_and_gives_up_on_big_ones() -> None:
    files = [(f"m{i}.py", record([("class", f"C{i}", 0, 1, 9), ("method", f"C{i}.m{i}", 1, 2, 3)],
                                 tuple(f"m{j}" for j in range(i))))
             for i in range(30)]
    whole = rank(files)
    cut = Ranking.from_data(whole.cut(6).to_data())
    assert cut is not None and not cut.complete
    small_whole, small_cut = within_budget(whole, 6, 10_000), within_budget(cut, 6, 10_000)
    assert small_whole is not None and small_cut is not None
    assert [(m.path, m.definitions) for m in small_cut.files] == \
        [(m.path, m.definitions) for m in small_whole.files]
    assert within_budget(cut, 1000, 100_000) is None


NAMES = st.sampled_from(["a", "b", "run", "main", "_x", "Go", "z"])


@st.composite
def repositories(draw: st.DrawFn) -> list[tuple[str, tagpool.Tags]]:
    files = []
    for n in range(draw(st.integers(1, 8))):
        defs = []
        line = 1
        for _ in range(draw(st.integers(0, 6))):
            name = draw(NAMES)
            if draw(st.booleans()):
                members = draw(st.lists(NAMES, max_size=3))
                end = line + len(members) + 1
                defs.append(("class", name, 0, line, end))
                defs.extend(("method", f"{name}.{m}", 1, line + k + 1, line + k + 1)
                            for k, m in enumerate(members))
                line = end + 1
            else:
                defs.append(("function", name, 0, line, line + 1))
                line += 2
        files.append((f"d{n % 3}/f{n}.py", record(defs, tuple(draw(st.sets(NAMES))))))
    return files


@settings(max_examples=150, deadline=None)
@given(repositories(), st.integers(1, 30), st.integers(10, 300))
def test_the_map_never_exceeds_its_budget_and_shows_only_what_exists(
        files: list[tuple[str, tagpool.Tags]], max_lines: int, max_tokens: int) -> None:
    repo = build_map(files, max_lines, max_tokens)
    text = [line for m in repo.files for line in (m.path + ":", *map(def_line, m.definitions))]
    assert repo.lines == len(text) <= max_lines
    assert repo.tokens == sum(map(line_tokens, text)) <= max_tokens
    records = dict(files)
    shown = 0
    for m in repo.files:
        defs = records[m.path][1]
        assert all(d in defs for d in m.definitions)
        qualnames = {d[2] for d in m.definitions}
        assert all(d[3] is None or d[3] in qualnames for d in m.definitions)  # parents shown
        assert [d[5] for d in m.definitions] == sorted(d[5] for d in m.definitions)
        shown += len(m.definitions)
    total = sum(len(tags[1]) for _, tags in files)
    assert repo.definitions_shown == shown and repo.definitions_total == total
    assert repo.truncated == (shown < total)


def test_a_kept_ranking_that_does_not_check_is_refused() -> None:
    files = [("k.py", record([("class", "K", 0, 1, 9), ("method", "K.go", 1, 2, 3)], ())),
             ("u.py", record([], ("go",)))]
    good = rank(files).cut(1).to_data()
    assert Ranking.from_data(good) is not None
    out_of_range = (good[0], [(0, 7, 1.0)], *good[2:])
    bad_file = ([("k.py", ("python", (("short",),), (), False))], good[1], *good[2:])
    for data in (out_of_range, bad_file, (), None, good[:4]):
        assert Ranking.from_data(data) is None
