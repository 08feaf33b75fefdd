"""zbtools.core.editing.matching.merge: a located edit rendered into the file's own lines."""

from __future__ import annotations

import pytest

from zbtools.core.editing.matching.apply import apply_requests
from zbtools.core.editing.matching.errors import MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.ladder import locate
from zbtools.core.editing.matching.merge import Edit, merge_lines, render_edit
from zbtools.core.editing.matching.requests import Request
from zbtools.core.editing.matching.threeway import keep_file_spelling


def rendered(text: str, request: Request) -> Edit:
    model = FileModel(text)
    return render_edit(model, locate(model, request))


def test_a_character_edit_can_join_lines_and_keep_the_final_newline_state() -> None:
    assert apply_requests("a\nb\nc\n", [Request("a\n", "a")]).text == "ab\nc\n"
    assert apply_requests("a\nlast", [Request("last", "LAST")]).text == "a\nLAST"
    assert apply_requests("a\nlast", [Request("last", "LAST\n")]).text == "a\nLAST\n"
    assert apply_requests("a\r\nb\r\n", [Request("b\n", "")]).text == "a\r\n"


def test_lines_the_caller_left_unchanged_keep_the_files_bytes() -> None:
    edit = rendered("a = 1  \nb = 2\t\nc = 3\n",
                    Request("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n"))
    assert edit.located.tier == "trailing_whitespace"
    assert (edit.start, edit.end) == (0, 3)
    assert edit.lines == [("a = 1  ", "\n"), ("b = 20", "\n"), ("c = 3", "\n")]


def test_new_lines_take_the_line_ending_of_the_region() -> None:
    edit = rendered("a\r\nb\r\n", Request("a\n", "a\nx\n"))
    assert edit.lines == [("a", "\r\n"), ("x", "\r\n")]


def test_each_rewritten_line_keeps_its_own_ending_in_a_mixed_file() -> None:
    model = FileModel("a\r\nb\nc\r\n")
    assert merge_lines(model, 0, 3, ["a", "b", "c"], ["A", "B", "c"], str, True) == [
        ("A", "\r\n"), ("B", "\n"), ("c", "\r\n")]


def test_new_lines_are_reindented_level_by_level_into_a_tab_indented_file() -> None:
    edit = rendered("def f():\n\tif x:\n\t\ty()\n",
                    Request("if x:\n    y()\n", "if x:\n    y()\n    z()\n"))
    assert edit.located.tier == "indentation"
    assert edit.lines == [("\tif x:", "\n"), ("\t\ty()", "\n"), ("\t\tz()", "\n")]
    assert edit.transforms == ["reindented"]


def test_a_change_of_indent_unit_is_converted_for_the_new_lines_too() -> None:
    edit = rendered("    def f():\n        return 1\n",
                    Request("def f():\n  return 1\n", "def f():\n  return 2\n  # done\n"))
    assert edit.lines == [("    def f():", "\n"), ("        return 2", "\n"),
                          ("        # done", "\n")]


def test_the_files_curly_quotes_survive_in_the_unedited_part_of_a_changed_line() -> None:
    edit = rendered("msg = “hello” + name\n",
                    Request('msg = "hello" + name\n', 'msg = "hello" + user\n'))
    assert edit.located.tier == "typography"
    assert edit.lines == [("msg = “hello” + user", "\n")]


def test_curly_quotes_the_request_invented_are_written_the_files_way() -> None:
    edit = rendered('msg = "hello" + name\n',
                    Request("msg = “hello” + name\n", "msg = “hello” + user\n"))
    assert edit.lines == [('msg = "hello" + user', "\n")]
    assert edit.transforms == ["typography_restored"]


def test_an_insertion_after_a_last_line_without_newline_keeps_that_state() -> None:
    request = Request("", "x\n")
    request.insert_at = 2
    edit = rendered("a\nb", request)
    assert (edit.start, edit.end) == (1, 2)
    assert edit.lines == [("b", "\n"), ("x", "")]


SIMILAR_FILE = ("def load_configuration(path):\n"
                "    with open(path) as handle:\n"
                "        data = json.load(handle)\n"
                "    return validate_settings(data)\n")
SIMILAR_OLD = SIMILAR_FILE.replace("as handle", "as fh")


def test_the_similarity_merge_applies_the_change_onto_the_files_own_lines() -> None:
    edit = rendered(SIMILAR_FILE, Request(
        SIMILAR_OLD, SIMILAR_OLD.replace("validate_settings", "check")))
    assert edit.located.tier == "similarity"
    assert edit.lines == [("def load_configuration(path):", "\n"),
                          ("    with open(path) as handle:", "\n"),
                          ("        data = json.load(handle)", "\n"),
                          ("    return check(data)", "\n")]



def test_the_similarity_merge_keeps_the_files_spelling_in_the_unedited_part_of_a_line() -> None:
    # corpus cases P6 to-ascii(em=--)+new: "--" for an em dash sends the edit to T8, and the
    # changed line was written with the request's "..." and plain space for the file's "…"
    # and NBSP
    file = ("# Guide\n\n1. Create a virtual environment \u2014 any Python will do.\n"
            "2. Install the package with pip install -e '.[dev]'.\n"
            "3. Run make check\u2026 it takes about 20\u00a0seconds.\n\nThe end.\n")
    old = ("1. Create a virtual environment -- any Python will do.\n"
           "2. Install the package with pip install -e '.[dev]'.\n"
           "3. Run make check... it takes about 20 seconds.\n")
    done = apply_requests(file, [Request(old, old.replace("takes", "takes_v2"))])
    assert done.reports[0]["matched_with"] == "similarity"
    assert done.text == file.replace("takes", "takes_v2")


def test_keep_file_spelling_maps_only_the_spans_the_edit_leaves_alone() -> None:
    assert keep_file_spelling('  say "hi" now', "  say \u201chi\u201d now",
                              '    say "yo" now') == "    say \u201cyo\u201d now"
    # the edit cuts through "..." (the file's "…"): new text is written as sent
    assert keep_file_spelling("wait... go", "wait\u2026 go", "wait.. go") is None
    # not the same line up to typography
    assert keep_file_spelling("a -- b", "a \u2014 b", "a -- c") is None

def test_the_similarity_merge_refuses_to_change_a_line_that_differs_from_the_file() -> None:
    with pytest.raises(MatchError) as caught:
        rendered(SIMILAR_FILE, Request(SIMILAR_OLD, SIMILAR_OLD.replace("as fh", "as f")))
    assert caught.value.code == "edit_conflict"
    assert caught.value.hint == ("re-read lines 1-4 and resend old_text with the file's current "
                                 "text")


CALL = ("def build(configuration):\n    result = compose_the_package_metadata(\n"
        "        configuration.distribution_name,\n        configuration.version,\n"
        "        configuration.platform_options,\n        configuration.build_requirements,\n"
        "        configuration.optional_dependencies,\n        configuration.entry_points,\n"
        "        configuration.license_expression,\n    )\n    return result\n")


def similar_edit(text: str, old: str, new: str) -> list[str]:
    """The similarity tier's own merge (the near-miss step, tried first, bypassed)."""
    from zbtools.core.editing.matching.similarity import find_similar

    model = FileModel(text)
    located = find_similar(model, Request(old, new))
    assert located is not None and located.tier == "similarity"
    edit = render_edit(model, located)
    lines = model.all_lines()
    return lines[:edit.start] + [line for line, _ in edit.lines] + lines[edit.end:]


@pytest.mark.parametrize("extra", [
    "        configuration.version,\n",  # new text keeps the line old text dropped
    "        configuration.version,\n        configuration.tags,\n",  # and adds one after it
    "        configuration.tags,\n        configuration.version,\n",  # and one before it
])
def test_the_similarity_merge_writes_a_line_both_sides_add_once(extra: str) -> None:
    old = CALL.replace("        configuration.version,\n", "")
    new = old.replace("        configuration.platform_options,\n",
                      extra + "        configuration.platform_options,\n")
    new = new.replace("    )\n", "        configuration.extra,\n    )\n")
    lines = similar_edit(CALL, old, new)
    expected = CALL.replace("        configuration.version,\n", extra).replace(
        "    )\n", "        configuration.extra,\n    )\n")
    assert "\n".join(lines) + "\n" == expected


def test_the_similarity_merge_keeps_a_file_line_old_text_lacks_beside_a_line_edit() -> None:
    old = CALL.replace("        configuration.version,\n", "")
    new = old.replace("distribution_name", "project_name")
    lines = similar_edit(CALL, old, new)
    assert "\n".join(lines) + "\n" == CALL.replace("distribution_name", "project_name")


def test_the_similarity_merge_refuses_a_deletion_next_to_a_file_line_old_text_lacks() -> None:
    # The file's "configuration.version," may continue the deleted line: keep it or not?
    old = CALL.replace("        configuration.version,\n", "")
    new = old.replace("        configuration.distribution_name,\n", "")
    from zbtools.core.editing.matching.similarity import find_similar

    model = FileModel(CALL)
    located = find_similar(model, Request(old, new))
    assert located is not None
    with pytest.raises(MatchError) as caught:
        render_edit(model, located)
    assert caught.value.code == "edit_conflict"
    assert "line 4 'configuration.version,'" in caught.value.message
