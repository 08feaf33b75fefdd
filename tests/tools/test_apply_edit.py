"""apply_edit / edit_file: the edit engine through the CLI, including peer-regression cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot


def edit(cli: CliRunner, **args: object) -> object:
    return cli("apply_edit", stdin=json.dumps(args))


def put(ws: Path, name: str, data: bytes | str) -> Path:
    path = ws / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_an_exact_unique_edit_replaces_only_that_text(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "x = 1\ny = 2\n")
    call = cli("apply_edit", stdin={"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"})
    result = call.result
    assert f.read_text() == "x = 1\ny = 3\n"
    assert (result["matched_with"], result["start_line"], result["end_line"]) == ("exact", 2, 2)
    assert "-y = 2" in result["diff"] and "+y = 3" in result["diff"]
    assert result["changed"] is True
    assert len(result["sha256"]) == 64


def test_duplicate_blocks_are_refused_with_every_candidate(ws: Path, cli: CliRunner) -> None:
    src = ("class A:\n    def close(self):\n        self.conn.close()\n\n"
           "class B:\n    def close(self):\n        self.conn.close()\n")
    f = put(ws, "a.py", src)
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.py",
                                    "old_text": "    def close(self):\n        self.conn.close()",
                                    "new_text": "    def close(self):\n        pass"})
    assert call.code == 1
    error = call.error
    assert error["code"] == "ambiguous_match"
    cands = error["details"]["candidates"]
    assert [(c["start_line"], c["end_line"]) for c in cands] == [(2, 3), (6, 7)]
    assert cands[0]["distinguishing_text"] == "class A:"
    assert cands[1]["distinguishing_text"] == "class B:"
    assert snapshot(ws) == before
    # A hint chooses among the candidates of the same tier.
    ok = cli("apply_edit", stdin={"path": "a.py", "old_text": "        self.conn.close()",
                                  "new_text": "        pass", "start_line": 7})
    assert ok.result["start_line"] == 7
    assert f.read_text().endswith("class B:\n    def close(self):\n        pass\n")


def test_a_crlf_file_edited_with_an_lf_request_keeps_crlf(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"one\r\ntwo\r\nthree\r\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "two\nthree\n",
                             "new_text": "TWO\nthree\nfour\n"}).result
    assert f.read_bytes() == b"one\r\nTWO\r\nthree\r\nfour\r\n"


def test_mixed_line_endings_keep_each_untouched_line_s_ending(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"a\r\nb\nc\r\nd\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "b\nc", "new_text": "B\nc"}).result
    assert f.read_bytes() == b"a\r\nB\nc\r\nd\n"


def test_a_tab_indented_file_edited_with_spaces_is_reindented_with_tabs(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.go", "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n")
    result = cli("apply_edit", stdin={
        "path": "a.go", "old_text": "    if x {\n        return 1\n    }",
        "new_text": "    if x {\n        log()\n        return 2\n    }"}).result
    assert result["matched_with"] == "indentation"
    assert f.read_text() == "func f() {\n\tif x {\n\t\tlog()\n\t\treturn 2\n\t}\n}\n"


def test_latin1_bytes_elsewhere_in_the_file_survive_an_edit(ws: Path, cli: CliRunner) -> None:
    data = "caf\u00e9 au lait\nprice = 1\nna\u00efve\n".encode("latin-1")
    f = put(ws, "a.txt", data)
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "price = 1",
                             "new_text": "price = 2"}).result
    assert f.read_bytes() == data.replace(b"price = 1", b"price = 2")


def test_undecodable_bytes_survive_and_non_ascii_new_text_is_refused(
        ws: Path, cli: CliRunner) -> None:
    data = b"ok \xff\xfe bytes\nvalue = 1\n" + "caf\u00e9\n".encode()
    f = put(ws, "a.txt", data)
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "value = 1",
                             "new_text": "value = 2"}).result
    assert f.read_bytes() == data.replace(b"value = 1", b"value = 2")
    before = f.read_bytes()
    call = cli("apply_edit", stdin={"path": "a.txt", "old_text": "value = 2",
                                    "new_text": "valeur = \u00e9"})
    assert call.error["code"] == "encoding_error"
    assert f.read_bytes() == before


@pytest.mark.parametrize("replacement", ["$&", "$1", "\\1", "\\g<0>", "\\\\n"])
def test_replacement_text_is_literal(ws: Path, cli: CliRunner, replacement: str) -> None:
    f = put(ws, "a.txt", "x = OLD\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "OLD",
                             "new_text": replacement}).result
    assert f.read_text() == f"x = {replacement}\n"


def test_a_bom_and_a_missing_final_newline_are_preserved(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"\xef\xbb\xbffirst\nlast")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "first\n",
                             "new_text": "FIRST\n"}).result
    assert f.read_bytes() == b"\xef\xbb\xbfFIRST\nlast"
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "last", "new_text": "LAST"}).result
    assert f.read_bytes() == b"\xef\xbb\xbfFIRST\nLAST"


def test_an_insertion_without_context_of_its_own_needs_an_anchor(ws: Path,
                                                                  cli: CliRunner) -> None:
    f = put(ws, "a.py", "import os\n\ndef main():\n    pass\n")
    cli("apply_edit", stdin={"path": "a.py", "old_text": "import os\n",
                             "new_text": "import os\nimport sys\n"}).result
    assert f.read_text() == "import os\nimport sys\n\ndef main():\n    pass\n"


def test_an_insertion_whose_addition_already_follows_old_text_is_refused_unchanged(
        ws: Path, proc: CliRunner) -> None:
    # Old text still stands, so "already applied" cannot be proved: a resend and a wish for a
    # second copy look the same. Nothing is written, and the refusal says why.
    f = put(ws, "a.py", "import os\nimport sys\n")
    before = f.read_bytes()
    call = proc("apply_edit", stdin={"path": "a.py", "old_text": "import os\n",
                                     "new_text": "import os\nimport sys\n"})
    assert (call.code, call.error["code"]) == (1, "no_change")
    assert "looks made already" in call.error["message"]
    assert "another copy" in call.error["hint"]
    assert f.read_bytes() == before


def test_a_deletion_whose_old_text_has_a_line_the_file_lacks_is_applied_not_called_done(
        ws: Path, proc: CliRunner) -> None:
    # Issue 27: "already applied" was answered while "import os" was still there.
    f = put(ws, "a.py", "import os\nimport sys\n\nprint(sys.argv)\n")
    call = proc("apply_edit", stdin={"path": "a.py", "old_text": "import os\nimport re\nimport sys",
                                     "new_text": "import sys"})
    assert call.code == 0, call
    assert (call.result["changed"], call.result["matched_with"]) == (True, "near_miss")
    assert f.read_text() == "import sys\n\nprint(sys.argv)\n"


def test_an_exact_match_with_new_text_on_several_lines_is_written_verbatim(
        ws: Path, proc: CliRunner) -> None:
    # Issue 27: the second line was re-indented to 16 spaces and reported as exact.
    f = put(ws, "a.c", "    if (c) {\n        doSomething();\n    }\n")
    for dialect, request in (
            ("zblade", {"path": "a.c", "old_text": "doSomething();",
                        "new_text": "doSomethingElse();\n        doAnotherThing();"}),
            ("claude", {"file_path": "a.c", "old_string": "doSomethingElse();\n        "
                        "doAnotherThing();", "new_string": "doSomething();"})):
        tool = "apply_edit" if dialect == "zblade" else "Edit"
        call = proc("--dialect", dialect, tool, stdin=request)
        assert call.code == 0, call
        assert call.result["matched_with"] == "exact"
        assert call.result["edits"][0]["transforms"] == []
        if dialect == "zblade":
            assert f.read_text() == ("    if (c) {\n        doSomethingElse();\n"
                                     "        doAnotherThing();\n    }\n")
    assert f.read_text() == "    if (c) {\n        doSomething();\n    }\n"


def test_a_whole_line_sent_unindented_with_unindented_added_lines_is_reported_as_reindented(
        ws: Path, proc: CliRunner) -> None:
    f = put(ws, "a.py", "def f():\n    return g(x)\n")
    call = proc("apply_edit", stdin={"path": "a.py", "old_text": "return g(x)",
                                     "new_text": "y = x\nreturn g(y)"})
    assert call.code == 0, call
    assert call.result["matched_with"] == "indentation"
    assert call.result["edits"][0]["transforms"] == ["reindented"]
    assert f.read_text() == "def f():\n    y = x\n    return g(y)\n"


def test_an_already_applied_replacement_is_a_successful_no_op(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "timeout = settings.TIMEOUT\n")
    call = cli("apply_edit", stdin={"path": "a.py", "old_text": "timeout = 30",
                                    "new_text": "timeout = settings.TIMEOUT"})
    assert call.result["changed"] is False
    assert call.result["matched_with"] == "already_applied"
    assert call.json["warnings"]
    assert f.read_text() == "timeout = settings.TIMEOUT\n"


def test_old_equal_to_new_is_no_change(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    call = cli("apply_edit", stdin={"path": "a.txt", "old_text": "x", "new_text": "x"})
    assert call.error["code"] == "no_change"


def test_a_multi_edit_with_one_miss_writes_nothing(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "alpha\nbeta\ngamma\n")
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.txt", "patches": [
        {"old_text": "alpha", "new_text": "ALPHA"},
        {"old_text": "delta", "new_text": "DELTA"},
        {"old_text": "gamma", "new_text": "GAMMA"}]})
    error = call.error
    assert error["code"] == "no_match"
    statuses = [p["status"] for p in error["details"]["patches"]]
    assert statuses == ["ok", "failed", "ok"]
    assert "patches[1]" in error["hint"]
    assert snapshot(ws) == before


def test_patches_are_located_against_the_original_and_applied_together(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "alpha\nbeta\ngamma\n")
    result = cli("apply_edit", stdin={"path": "a.txt", "patches": [
        {"old_text": "gamma", "new_text": "GAMMA"},
        {"old_text": "alpha", "new_text": "ALPHA\nalpha2"}]}).result
    assert f.read_text() == "ALPHA\nalpha2\nbeta\nGAMMA\n"
    assert [e["start_line"] for e in result["edits"]] == [3, 1]


def test_overlapping_patches_are_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "alpha\nbeta\ngamma\n")
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.txt", "patches": [
        {"old_text": "alpha\nbeta", "new_text": "x"},
        {"old_text": "beta\ngamma", "new_text": "y"}]})
    assert call.error["code"] == "overlapping_edits"
    assert snapshot(ws) == before


def test_placeholders_in_new_text_are_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "def f():\n    a()\n    b()\n")
    call = cli("apply_edit", stdin={"path": "a.py", "old_text": "def f():\n    a()\n    b()",
                                    "new_text": "def f():\n    # ... rest of code\n    c()"})
    assert call.error["code"] == "placeholder_in_new"


def test_line_number_prefixes_pasted_from_a_read_are_stripped(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "a = 1\nb = 2\nc = 3\n")
    result = cli("apply_edit", stdin={"path": "a.py", "old_text": "     2\tb = 2\n     3\tc = 3",
                                      "new_text": "b = 20\nc = 3"}).result
    assert "line_numbers_stripped" in result["edits"][0]["transforms"]
    assert f.read_text() == "a = 1\nb = 20\nc = 3\n"


def test_trailing_whitespace_differences_keep_the_file_s_bytes_on_unchanged_lines(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "keep  \nchange\n")
    result = cli("apply_edit", stdin={"path": "a.txt", "old_text": "keep\nchange",
                                      "new_text": "keep\nchanged"}).result
    assert result["matched_with"] == "trailing_whitespace"
    assert f.read_text() == "keep  \nchanged\n"


def test_typographic_quotes_in_the_request_match_straight_quotes(ws: Path,
                                                                 cli: CliRunner) -> None:
    f = put(ws, "a.md", 'He said "hello world" -- twice.\n')
    result = cli("apply_edit", stdin={"path": "a.md",
                                      "old_text": "He said \u201chello world\u201d -- twice.",
                                      "new_text": "He said \"goodbye\" -- twice."}).result
    assert result["matched_with"] == "typography"
    assert f.read_text() == 'He said "goodbye" -- twice.\n'


def test_escaped_newlines_in_old_and_new_are_unescaped_once(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "def f():\n    return 1\n")
    result = cli("apply_edit", stdin={"path": "a.py", "old_text": "def f():\\n    return 1",
                                      "new_text": "def f():\\n    return 2"}).result
    assert "unescaped" in result["edits"][0]["transforms"]
    assert f.read_text() == "def f():\n    return 2\n"


def test_a_file_that_really_contains_backslash_n_is_matched_literally(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", 'print("a\\nb")\n')
    cli("apply_edit", stdin={"path": "a.py", "old_text": 'print("a\\nb")',
                             "new_text": 'print("a\\nc")'}).result
    assert f.read_text() == 'print("a\\nc")\n'


def test_a_miss_reports_the_closest_candidate_and_the_first_difference(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "def fetch(url):\n    retries = 0\n    if retries >= self.max:\n"
                    "        raise Error(url)\n")
    call = cli("apply_edit", stdin={"path": "a.py",
                                    "old_text": "def fetch(url):\n    retries = 0\n"
                                                "    if retries > MAX:\n",
                                    "new_text": "x"})
    error = call.error
    assert error["code"] == "no_match"
    closest = error["details"]["closest"]
    assert (closest["start_line"], closest["matching_lines"]) == (1, 2)
    first = error["details"]["first_difference"]
    assert first["file_line"] == 3
    assert "re-read lines 1-" in error["hint"]


def test_replace_all_replaces_every_occurrence_and_checks_the_count(ws: Path,
                                                                    cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"foo bar\r\nfoo baz\r\n")
    result = cli("apply_edit", stdin={"path": "a.txt", "old_text": "foo", "new_text": "qux",
                                      "replace_all": True, "expected_count": 2}).result
    assert result["replacements"] == 2
    assert f.read_bytes() == b"qux bar\r\nqux baz\r\n"
    call = cli("apply_edit", stdin={"path": "a.txt", "old_text": "qux", "new_text": "foo",
                                    "replace_all": True, "expected_count": 3})
    assert call.error["code"] == "ambiguous_match"
    assert f.read_bytes() == b"qux bar\r\nqux baz\r\n"


def test_replace_all_of_a_self_overlapping_pattern_is_left_to_right(ws: Path,
                                                                   cli: CliRunner) -> None:
    f = put(ws, "a.txt", "aaaa\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "aa", "new_text": "b",
                             "replace_all": True}).result
    assert f.read_text() == "bb\n"


def test_dry_run_reports_the_diff_and_writes_nothing(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    before = snapshot(ws)
    result = cli("apply_edit", stdin={"path": "a.txt", "old_text": "x", "new_text": "y",
                                      "dry_run": True}).result
    assert result["dry_run"] is True
    assert "+y" in result["diff"]
    assert snapshot(ws) == before


def test_a_stale_sha256_is_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.txt", "old_text": "x", "new_text": "y",
                                    "expected_sha256": "0" * 64})
    assert call.error["code"] == "stale_file"
    assert snapshot(ws) == before
    sha = cli("read_file", "--path", "a.txt").result["sha256"]
    assert cli("apply_edit", stdin={"path": "a.txt", "old_text": "x", "new_text": "y",
                                    "expected_sha256": sha}).code == 0


def test_both_single_and_patches_is_invalid(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    call = cli("apply_edit", stdin={"path": "a.txt", "old_text": "x", "new_text": "y",
                                    "patches": [{"old_text": "x", "new_text": "z"}]})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"


def test_the_tool_aliases_and_edit_file_aliases_work(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "one\n")
    cli("apply_patch", stdin={"file_path": "a.txt", "old_string": "one",
                              "new_string": "two"}).result
    cli("edit_file", stdin={"path": "a.txt", "old": "two", "new": "three"}).result
    cli("edit_file", stdin={"path": "a.txt", "from": "three", "to": "four"}).result
    cli("edit_file", stdin={"path": "a.txt", "old_content": "four",
                            "new_content": "five"}).result
    assert f.read_text() == "five\n"


def test_binary_and_missing_files_are_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "b.bin", b"\x00\x01x")
    assert cli("apply_edit", stdin={"path": "b.bin", "old_text": "x",
                                    "new_text": "y"}).error["code"] == "binary_file"
    assert cli("apply_edit", stdin={"path": "nope", "old_text": "x",
                                    "new_text": "y"}).error["code"] == "not_found"


def test_the_text_rendering_shows_the_tier_and_the_diff(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    out = cli("apply_edit", "--path", "a.txt", "--old-text", "x", "--new-text", "y",
              "--text").out
    assert out.startswith("Edited a.txt: lines 1-1 (exact)\n")
    assert "+y" in out



def test_an_ambiguous_edit_as_text_lists_each_candidate_with_the_line_that_tells_it_apart(
        ws: Path, cli: CliRunner) -> None:
    # The text is all a model sees through MCP; the hint must not point at hidden details.
    put(ws, "a.py", "def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    out = cli("apply_edit", "--path", "a.py", "--old-text", "    return 1", "--new-text",
              "    return 2", "--text").out
    assert out.startswith("error[ambiguous_match]: ")
    assert "details" not in out
    assert "  - line 2 (line 1: def f():)\n" in out
    assert "  - line 6 (line 5: def g():)\n" in out


def test_a_missed_edit_as_text_shows_the_diff_against_the_closest_candidate(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "def helper():\n    return 1\n\n\ndef other():\n    pass\n")
    call = cli("apply_edit", "--text", stdin={"path": "a.py", "new_text": "x",
                                              "old_text": "def helperX():\n    return 1"})
    lines = call.out.splitlines()
    assert lines[0].startswith("error[no_match]: ")
    at = lines.index("closest match (- your old_text, + the file):")
    # The file lines after the end of old_text are context, not something to add.
    assert lines[at + 1:] == ["-       | def helperX():", "+     1 | def helper():",
                              "      2 |     return 1", "      3 | ", "      4 | "]

def test_a_hash_anchor_pins_the_edit_and_a_stale_one_is_refused(ws: Path,
                                                                cli: CliRunner) -> None:
    f = put(ws, "a.py", "x = 1\nvalue = 0\nx = 1\n")
    read = cli("read_file", "--path", "a.py", "--hashes").result
    h3 = read["line_hashes"][2]
    text = cli("read_file", "--path", "a.py", "--hashes", "--text").out
    assert text.splitlines()[2] == f"     3:{h3}\tx = 1"
    cli("apply_edit", stdin={"path": "a.py", "old_text": "x = 1", "new_text": "x = 3",
                             "anchor": f"3:{h3}"}).result
    assert f.read_text() == "x = 1\nvalue = 0\nx = 3\n"
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.py", "old_text": "x = 3", "new_text": "x = 4",
                                    "anchor": f"3:{h3}"})
    assert call.error["code"] == "stale_anchor"
    assert call.error["details"]["current_text"] == "x = 3"
    assert snapshot(ws) == before


def test_hash_prefixed_lines_pasted_from_a_read_are_stripped(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "a = 1\nb = 2\n")
    text = cli("read_file", "--path", "a.py", "--hashes", "--text").out
    second = text.splitlines()[1]
    cli("apply_edit", stdin={"path": "a.py", "old_text": second, "new_text": "b = 3"}).result
    assert f.read_text() == "a = 1\nb = 3\n"


def test_paired_elision_markers_keep_the_elided_lines(ws: Path, cli: CliRunner) -> None:
    src = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n"
    f = put(ws, "a.py", src)
    result = cli("apply_edit", stdin={
        "path": "a.py",
        "old_text": "def f():\n    a = 1\n    # ... existing code ...\n    return a\n",
        "new_text": "def f():\n    a = 10\n    # ... existing code ...\n    return a + 1\n",
    }).result
    assert {e["matched_with"] for e in result["edits"]} == {"elision"}
    assert f.read_text() == "def f():\n    a = 10\n    b = 2\n    c = 3\n    return a + 1\n"


def test_unpaired_elision_markers_are_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "def f():\n    a = 1\n    b = 2\n    return a\n")
    call = cli("apply_edit", stdin={"path": "a.py",
                                    "old_text": "def f():\n    ...\n    return a\n",
                                    "new_text": "def f():\n    return b\n"})
    assert call.error["code"] in ("no_match", "placeholder_in_new")


SIMILAR = ("def fetch(self, url):\n"
           "    retries = 0\n"
           "    while retries < self.max_retries:\n"
           "        response = self.session.get(url, timeout=self.timeout)\n"
           "        if response.ok:\n"
           "            return response.json()\n"
           "        retries += 1\n"
           "    raise FetchError(url)\n")


def test_a_near_miss_in_an_unchanged_line_is_merged_keeping_the_file_s_line(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", SIMILAR)
    old = SIMILAR.replace("self.max_retries", "self.max_retry")  # misremembered, not edited
    new = old.replace("retries += 1", "retries += 2")
    result = cli("apply_edit", stdin={"path": "a.py", "old_text": old, "new_text": new}).result
    assert result["matched_with"] == "similarity"
    assert f.read_text() == SIMILAR.replace("retries += 1", "retries += 2")


def test_a_near_miss_on_the_edited_line_itself_is_a_conflict(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", SIMILAR)
    old = SIMILAR.replace("self.max_retries", "self.max_retry")
    new = old.replace("self.max_retry", "self.retry_limit")
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "a.py", "old_text": old, "new_text": new})
    assert call.error["code"] == "edit_conflict"
    assert snapshot(ws) == before
    assert f.read_text() == SIMILAR


def test_a_big_file_is_edited_on_bytes_with_everything_else_untouched(
        ws: Path, cli: CliRunner) -> None:
    body = b"".join(b"line %07d caf\xc3\xa9\n" % i for i in range(400_000))  # ~7 MB, UTF-8
    f = put(ws, "big.txt", body + b"UNIQUE MARKER\n" + body[:1000])
    result = cli("apply_edit", stdin={"path": "big.txt", "old_text": "UNIQUE MARKER",
                                      "new_text": "changed\nmarker"}).result
    assert (result["start_line"], result["matched_with"]) == (400_001, "exact")
    assert "@@ -399998,7 +399998,8 @@\n line 0399997 café\n" in result["diff"]
    assert f.read_bytes() == body + b"changed\nmarker\n" + body[:1000]
    ambiguous = cli("apply_edit", stdin={"path": "big.txt", "old_text": "line 0000001 ",
                                         "new_text": "x"})
    assert ambiguous.error["code"] == "ambiguous_match"  # the engine explains what the bytes
    # fast path only detects


def test_a_big_file_whose_write_fails_reports_the_failure_and_stays_as_it_was(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """The big-file path writes in a background thread while it counts lines: a failure
    there is the call's error, never a success."""
    from zbtools.contract import ToolError
    from zbtools.core.editing import cycle as editing

    body = b"".join(b"line %07d\n" % i for i in range(500_000))  # ~6 MB
    f = put(ws, "big.txt", body + b"UNIQUE MARKER\n")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise ToolError("no_space", "big.txt: no space left on device")

    monkeypatch.setattr(editing, "replace_parts", full_disk)
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"path": "big.txt", "old_text": "UNIQUE MARKER",
                                    "new_text": "changed"})
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before and f.read_bytes().endswith(b"UNIQUE MARKER\n")


def test_patches_written_as_a_sequence_apply_in_order_with_a_warning(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "alpha\nbeta\n")
    call = cli("apply_edit", stdin={"path": "a.txt", "patches": [
        {"old_text": "alpha", "new_text": "gamma"},
        {"old_text": "gamma\nbeta", "new_text": "gamma\ndelta"}]})
    assert f.read_text() == "gamma\ndelta\n"
    assert any("in sequence" in w for w in call.json["warnings"])


def test_the_file_s_curly_quotes_survive_in_the_unedited_part_of_a_changed_line(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.md", "She said \u201chello there\u201d to the whole room today.\n")
    result = cli("apply_edit", stdin={
        "path": "a.md", "old_text": 'She said "hello there" to the whole room today.',
        "new_text": 'She said "hello there" to the whole class today.'}).result
    assert result["matched_with"] == "typography"
    assert f.read_text() == "She said \u201chello there\u201d to the whole class today.\n"


def test_parallel_edits_of_one_file_by_separate_processes_all_land(ws: Path) -> None:
    # Agents fire tool calls in parallel, one process each: no edit may be silently dropped.
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    f = put(ws, "a.py", "".join(f"v{i} = 0\n" for i in range(8)))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    children = [subprocess.Popen(
        [sys.executable, "-m", "zbtools", "apply_edit", "--args",
         json.dumps({"path": "a.py", "old_text": f"v{i} = 0", "new_text": f"v{i} = 1"})],
        cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE) for i in range(8)]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, (out, err)
    assert f.read_text() == "".join(f"v{i} = 1\n" for i in range(8))


def test_parallel_edits_patches_appends_and_editor_writes_all_land(ws: Path) -> None:
    """Every file-changing tool holds the same workspace lock: an append, a patch or an editor
    write that races an edit of the same file is never undone by the edit's rename."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    f = put(ws, "a.py", "".join(f"v{i} = 0\n" for i in range(6)))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    calls: list[tuple[str, dict[str, str]]] = []
    for i in range(3):
        calls.append(("apply_edit", {"path": "a.py", "old_text": f"v{i} = 0",
                                     "new_text": f"v{i} = 1"}))
    for i in range(3, 6):
        calls.append(("apply_patch", {"patch": f"--- a/a.py\n+++ b/a.py\n@@\n-v{i} = 0\n"
                                               f"+v{i} = 1\n"}))
    for i in range(4):
        calls.append(("write_append", {"path": "a.py", "content": f"tail{i} = 1\n"}))
    children = [subprocess.Popen(
        [sys.executable, "-m", "zbtools", tool, "--args", json.dumps(args)], cwd=ws, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for tool, args in calls]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, (out, err)
    lines = f.read_text().splitlines()
    assert lines[:6] == [f"v{i} = 1" for i in range(6)]
    assert sorted(lines[6:]) == [f"tail{i} = 1" for i in range(4)]


def test_the_edit_lock_creates_nothing_and_is_reentrant(ws: Path) -> None:
    from tests.conftest import snapshot
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Workspace
    from zbtools.core.state.store import EditLock

    put(ws, "a.txt", "x\n")
    before = snapshot(ws.parent)
    workspace = Workspace(str(ws))
    ctx = Context(workspace, state_root=str(ws.parent / "never-created"))
    try:
        with EditLock(ctx), EditLock(ctx):  # nested: the inner one is a no-op, no deadlock
            held = ctx.holds_edit_lock
        assert held and not ctx.holds_edit_lock
    finally:
        workspace.close()
    assert snapshot(ws.parent) == before


def test_an_ambiguous_match_names_each_line_once_with_its_count(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "foo\nfoo bar foo\nfoo\n")
    error = cli("apply_edit", stdin={"path": "a.txt", "old_text": "foo", "new_text": "x"}).error
    assert error["code"] == "ambiguous_match"
    assert error["message"].endswith("line 1, line 2 (2 times), line 3")
    assert error["details"]["count"] == 4


def test_a_look_alike_met_first_is_refused_not_edited_when_a_closer_block_stands_further_on(
        ws: Path, proc: CliRunner) -> None:
    """A real process, the file on disk: the similarity tier once edited the look-alike at
    line 1 of this file (its anchors' first 200 occurrences never reached the closer block
    at the end); now it refuses and the file keeps every byte."""
    from tests.core.editing.matching.test_matching_tiers import _decoy_file

    text, old, new, first = _decoy_file(260)
    put(ws, "t.py", text)
    before = snapshot(ws)
    call = proc("apply_edit", stdin={"path": "t.py", "old_text": old, "new_text": new})
    assert call.code == 1
    assert call.error["code"] == "no_match"
    assert snapshot(ws) == before
    # the same request, the look-alike gone: the block meant is edited
    put(ws, "t.py", "\n".join(text.split("\n")[first - 1:]))
    done = proc("apply_edit", stdin={"path": "t.py", "old_text": old, "new_text": new})
    assert done.result["matched_with"] == "similarity"
    assert done.result["start_line"] == 1
    assert "expected)  # checked" in (ws / "t.py").read_text()


# ---- bounded cost: sizes that were quadratic -------------------------------------------------

def _numbered(count: int, tag: str = "") -> str:
    return "".join(f"    value_{i} = compute({i}, 'x{tag}')\n" for i in range(count))


def test_a_miss_of_a_60000_line_old_text_against_a_60000_line_file_answers_at_once(
        ws: Path, proc: CliRunner) -> None:
    """The closest-window diagnosis scored whole texts by edit distance, quadratic in their
    length: 8,000 lines took 2 s, 60,000 lines about 2 minutes."""
    put(ws, "big.py", _numbered(60_000))
    call = proc("apply_edit", stdin={"path": "big.py", "old_text": _numbered(60_000, "q"),
                                     "new_text": "pass\n"}, timeout=60)
    error = call.error
    assert error["code"] == "no_match"
    assert error["details"]["closest"]["start_line"] == 1
    assert 0.9 < error["details"]["closest"]["similarity"] < 1


def test_a_miss_of_one_long_line_against_another_long_line_answers_at_once(
        ws: Path, proc: CliRunner) -> None:
    """Both were compared whole, by edit distance: two lines of 1 MB took 15 s of CPU."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    put(ws, "long.txt", "".join(letters[i * 7 % 26] for i in range(2_000_000)) + "\n")
    old = "".join(letters[i * 5 % 26] for i in range(2_000_000)) + "\n"
    call = proc("apply_edit", stdin={"path": "long.txt", "old_text": old, "new_text": "x"},
                timeout=60)
    assert call.error["code"] == "no_match"


def test_old_text_of_long_lines_with_scattered_differences_is_refused_at_once(
        ws: Path, proc: CliRunner) -> None:
    """The similarity tier scores hundreds of windows by edit distance: 30 lines of 4,000
    characters took 3 s, of 100,000 characters about half an hour. Past 24,000 characters of
    old text it does not run."""
    import random

    rnd = random.Random(5)
    lines = [f"    result_{i} = transform("
             + "".join(rnd.choice("abcdefgh ") for _ in range(20_000)) + ")\n"
             for i in range(40)]
    put(ws, "wide.py", "".join(lines))
    old = [line[:20] + "XY" + line[22:10_000] + "ZW" + line[10_002:] if i % 3 == 0 else line
           for i, line in enumerate(lines[10:40])]
    before = snapshot(ws)
    call = proc("apply_edit", stdin={"path": "wide.py", "old_text": "".join(old),
                                     "new_text": "pass\n"}, timeout=60)
    assert call.error["code"] == "no_match"
    assert snapshot(ws) == before


def test_a_patch_of_2000_hunks_is_applied_and_its_diff_shows_each_hunk(
        ws: Path, proc: CliRunner) -> None:
    """The diff of many scattered changes was aligned by difflib, quadratic in the number of
    hunks (1,000 hunks 1.3 s, 2,000 5 s); it is now aligned in pieces between unique lines."""
    text = _numbered(2000 * 13 + 10)
    lines = text.splitlines(True)
    patch = ["--- a/f.py\n", "+++ b/f.py\n"]
    expected = list(lines)
    for h in range(2000):
        start = 10 + h * 13
        patch.append(f"@@ -{start + 1},3 +{start + 1},3 @@\n")
        patch += ["-" + lines[start + k] for k in range(3)]
        patch += ["+" + lines[start + k].replace("compute", "calc") for k in range(3)]
        for k in range(3):
            expected[start + k] = lines[start + k].replace("compute", "calc")
    put(ws, "f.py", text)
    call = proc("apply_edit", stdin={"patch": "".join(patch)}, timeout=60)
    result = call.result
    assert (ws / "f.py").read_text() == "".join(expected)
    assert result["diff"].count("\n@@ ") == 2000
    assert result["diff"].count("\n-    value_") == 6000


def test_one_line_nested_deeper_in_new_text_takes_a_tab_in_a_tab_indented_file(
        ws: Path, cli: CliRunner) -> None:
    """Old text of one line gives no indent step; new text's own (2 columns here) is one
    level, a tab in a file indented with tabs: never tabs and spaces mixed in one indent."""
    f = ws / "deploy.sh"
    f.write_text("case $ENV in\n\tproduction)\n\t\tHOST=prod.example.com\n\t\t;;\nesac\n")
    cli("apply_edit", stdin={"path": "deploy.sh", "old_text": "    HOST=prod.example.com\n",
                             "new_text": "    if [ -n \"$F\" ]; then\n      HOST=prod.example.com"
                                         "\n    fi\n"}).result
    assert f.read_text() == ("case $ENV in\n\tproduction)\n\t\tif [ -n \"$F\" ]; then\n"
                             "\t\t\tHOST=prod.example.com\n\t\tfi\n\t\t;;\nesac\n")

