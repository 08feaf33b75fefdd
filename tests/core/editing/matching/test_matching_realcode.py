"""Edits shaped like real code's near misses (issue 15): never a silent wrong success, and the
near misses models make recovered, each unique or refused.

The shapes come from ``benchmarks/edit_realcode.py``'s classes: garbled duplicate insertions,
false "already applied", Python's own ``...``, a blank last line under indentation drift, and
the recoveries (one typo, one missing line, one extra line, old-only elision).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching import MatchError, Request, apply_requests


def apply(text: str, old: str, new: str) -> tuple[str, str]:
    """The new text and the tier it matched with."""
    done = apply_requests(text, [Request(old, new)])
    return done.text, done.reports[0]["matched_with"]


def refused(text: str, old: str, new: str) -> MatchError:
    with pytest.raises(MatchError) as info:
        apply_requests(text, [Request(old, new)])
    return info.value


CALL = """\
def build(config):
    result = compose(
        config.name,
        config.version,
        config.options,
    )
    return result


def other():
    return 1
"""


# --- never a silent wrong success -----------------------------------------------------------


def test_a_context_line_old_text_lacks_and_new_text_keeps_is_written_once() -> None:
    old = "    result = compose(\n        config.name,\n        config.options,\n    )"
    new = ("    result = compose(\n        config.name,\n        config.version,\n"
           "        config.options,\n        strict=True,\n    )")
    text, tier = apply(CALL, old, new)
    assert text == CALL.replace("        config.options,\n",
                                "        config.options,\n        strict=True,\n")
    assert text.count("config.version") == 1
    assert tier == "near_miss"


def test_a_line_old_text_has_and_the_file_lacks_is_not_written_even_when_new_repeats_it() -> None:
    old = ("    result = compose(\n        config.name,\n        config.extra,\n"
           "        config.version,\n        config.options,\n    )")
    new = old.replace("config.options", "config.settings")
    text, tier = apply(CALL, old, new)
    assert text == CALL.replace("config.options", "config.settings")
    assert "config.extra" not in text
    assert tier == "near_miss"


def test_a_deletion_with_a_typo_in_the_deleted_line_is_not_already_applied() -> None:
    file = "from typing import (\n    Any,\n    Callable,\n    Dict,\n    Mapping,\n)\n"
    try:
        text, tier = apply(file, "    Callable,\n    Ditc,", "    Callable,")
    except MatchError:
        return  # too little text around the typo to be sure: refused, which is safe
    assert tier != "already_applied"
    assert text == file.replace("    Dict,\n", "")


def test_already_applied_needs_new_text_as_whole_lines() -> None:
    file = ("x = (\n    compute(a)\n).format(value=repr(item))\nif ready:\n    go()\n")
    # new text ")" stands inside the longer line ").format(...)": not applied there; the
    # typo in the changed line is recovered (or refused), never a no-op.
    try:
        text, tier = apply(file, "    compute(a)\n).format(vaule=repr(item))",
                           "    compute(a)\n)")
    except MatchError:
        return
    assert tier != "already_applied"
    assert text == file.replace(").format(value=repr(item))", ")")



def test_a_deletion_already_made_of_a_line_new_text_also_keeps_is_a_no_op() -> None:
    # corpus case P16 already-applied-delete: the deleted "{" is also a kept line of new text
    file = ("namespace Tools\n{\n    public static class Program\n    {\n"
            "        public static int Main(string[] args)\n            if (args.Length == 0)\n"
            "            {\n                return 1;\n            }\n    }\n}\n")
    old = ("    public static class Program\n    {\n        public static int Main(string[] args)"
           "\n        {\n")
    new = "    public static class Program\n    {\n        public static int Main(string[] args)\n"
    text, tier = apply(file, old, new)
    assert (text, tier) == (file, "already_applied")


def test_a_rename_already_made_next_to_a_look_alike_line_is_a_no_op() -> None:
    # corpus case P16 already-applied-rename: "stdio.h" is a typo's distance from the kept
    # line "stdlib.h", which is new text's own line, not the renamed line still standing
    file = ("#include <stdio_v2.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
            "#define RING_OK 0\n")
    old = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    text, tier = apply(file, old, old.replace("stdio.h", "stdio_v2.h"))
    assert (text, tier) == (file, "already_applied")

def test_new_text_elsewhere_does_not_make_an_approximate_old_text_already_applied() -> None:
    file = ("def first():\n    if check(value):\n        handle(value)\n    else:\n"
            "        fallback(value)\n    return value\n\n\ndef second():\n"
            "    if check(value):\n        handle(value)\n    return value\n")
    old = ("    if check(value):\n        handle(value)\n        log(value)\n    else:\n"
           "        fallback(value)")
    new = "    if check(value):\n        handle(value)"
    try:
        text, tier = apply(file, old, new)
    except MatchError:
        return
    assert tier != "already_applied"
    assert text == file.replace("    else:\n        fallback(value)\n", "", 1)


def test_a_blank_last_line_of_old_text_under_indentation_drift_is_removed() -> None:
    file = "class T:\n    def test_one(self):\n\n        check()\n"
    text, _ = apply(file, "  def test_one(self):\n", "  def test_one(self):")
    assert text == "class T:\n    def test_one(self):\n        check()\n"


def test_a_whole_line_sent_less_indented_is_deleted_whole() -> None:
    file = "ITEMS = [\n        'a',\n        'b',\n        'c',\n]\n"
    text, _ = apply(file, "      'b',\n", "")
    assert text == "ITEMS = [\n        'a',\n        'c',\n]\n"


def test_a_whole_line_sent_less_indented_gets_its_added_lines_reindented() -> None:
    file = "class A:\n    value: int = field(default=1)\n"
    text, _ = apply(file, "value: int = field(default=1)",
                    "value: int = field(\n    default=1\n)")
    assert text == "class A:\n    value: int = field(\n        default=1\n    )\n"



def test_old_text_starting_inside_the_indentation_is_spliced_as_sent() -> None:
    # 2 of 4 spaces left before old text is no lost indentation level, and new text's second
    # line is at the file's own depth: old text starts mid-line (corpus case P11
    # start-mid-line), so new text goes in as a splice, its later lines as written
    file = "def count(items):\n    return sum(1 for _ in items)\n"
    text, _ = apply(file, "  return sum(1 for _ in items)\n",
                    "  total = 0\n    return sum(1 for _ in items)\n")
    assert text == "def count(items):\n    total = 0\n    return sum(1 for _ in items)\n"


def test_a_line_shifted_by_part_of_a_level_still_gets_its_added_lines_reindented() -> None:
    file = 'def f():\n    """Doc.\n\n        "Exec" the script with globals.\n    """\n'
    text, _ = apply(file, '    "Exec" the script with globals.',
                    "    Evaluate the script\n    with globals.")
    assert text == ('def f():\n    """Doc.\n\n        Evaluate the script\n'
                    '        with globals.\n    """\n')

# --- Python's own ``...`` --------------------------------------------------------------------


STUBS = "class P(Protocol):\n    def size(self) -> int:\n        ...\n"


def test_a_bare_ellipsis_body_in_new_text_is_code() -> None:
    file = "class A:\n    def run(self, x: int) -> int:\n        return x\n"
    new = ("    @overload\n    def run(self, x: str) -> str:\n        ...\n"
           "    def run(self, x: int) -> int:")
    text, _ = apply(file, "    def run(self, x: int) -> int:", new)
    assert "        ...\n    def run(self, x: int)" in text


def test_an_ellipsis_body_in_old_text_is_code_not_an_elision_marker() -> None:
    new = "    def size(self) -> int:\n        ...\n\n    def name(self) -> str:\n        ..."
    text, _ = apply(STUBS, "    def size(self) -> int:\n        ...", new)
    assert text == STUBS + "\n    def name(self) -> str:\n        ...\n"


def test_a_comment_placeholder_in_new_text_is_still_refused() -> None:
    err = refused(CALL, "    return result", "    # ... rest of code ...\n    return result")
    assert err.code == "placeholder_in_new"


# --- recovered near misses -------------------------------------------------------------------


def test_a_typo_in_the_changed_line_is_replaced_when_the_rest_identifies_the_place() -> None:
    old = "    result = compose(\n        config.nmae,\n        config.version,"
    new = "    result = compose(\n        config.title,\n        config.version,"
    text, tier = apply(CALL, old, new)
    assert text == CALL.replace("config.name", "config.title")
    assert tier == "near_miss"


def test_a_typo_in_a_kept_line_keeps_the_files_line() -> None:
    old = "def build(confgi):\n    result = compose(\n        config.name,"
    new = "def build(confgi):\n    result = compose(\n        config.label,"
    text, _ = apply(CALL, old, new)
    assert text == CALL.replace("config.name", "config.label")


def test_a_single_line_typo_is_replaced_when_no_other_line_is_close() -> None:
    text, _ = apply(CALL, "def biuld(config):", "def build(settings):")
    assert text == CALL.replace("build(config)", "build(settings)")


@pytest.mark.parametrize("old", [
    "    result = Compose(\n        config.name,\n        config.version,",  # case only
    "    result = composes(\n        config.name,\n        config.version,",  # a plural
    "    result = compose(\n        config.name2,\n        config.version,",  # a digit
])
def test_differences_that_are_not_typos_are_refused(old: str) -> None:
    new = old.replace("Compose(", "assemble(").replace("composes(", "assemble(").replace(
        "name2", "title")
    err = refused(CALL, old, new)
    assert err.code in ("no_match", "edit_conflict")


def test_an_underscore_for_a_letter_inside_a_name_is_a_typo() -> None:
    file = "import sys\nPY_3_12_PLUS = sys.version_info[:2] >= (3, 12)\n"
    text, tier = apply(file, "PY_3_12_PLUS = sys.versioneinfo[:2] >= (3, 12)\n",
                       "PY_3_12_PLUS = sys.versioneinfo[:2] >= (3, 12)\n"
                       "PY_3_13_PLUS = sys.version_info[:2] >= (3, 13)\n")
    assert text == file + "PY_3_13_PLUS = sys.version_info[:2] >= (3, 13)\n"
    assert tier == "near_miss"


def test_a_long_typo_line_beside_a_short_line_identifies_the_place() -> None:
    file = ("def run(check):\n    with pytest.raises(ValueError):\n        check(1)\n"
            "    with pytest.raises(ValueError):\n        c(33)\n")
    text, _ = apply(file, "    with pyeest.raises(ValueError):\n        c(33)",
                    "    with pyeest.raises(ValueError):\n        c.converter(33)")
    assert text == file.replace("c(33)", "c.converter(33)")


def test_a_look_alike_two_slips_away_does_not_rival_a_typo() -> None:
    # Line 2 differs from old text by the typo only; line 5 by the typo and a bracket.
    file = ('def f():\n    x = ("<instance_of validator for <int>>]) or None>"\n    )\n'
            'def g():\n    x = ("<instance_of validator for <int>>)) or None>"\n    )\n')
    old = '    x = ("<instance_of valiadtor for <int>>]) or None>"\n    )'
    text, _ = apply(file, old, old + ".format(1)")
    assert text == file.replace("]) or None>\"\n    )", "]) or None>\"\n    ).format(1)")


def test_a_look_alike_one_slip_away_still_rivals_a_typo() -> None:
    # "C1areSlots" is a typo of "C1BareSlots" (1 edit) but just as close to "C1areSlots2"
    # (another name, 1 edit); a look-alike 3 edits away in one word does not rival it.
    file = "class A(C1BareSlots):\n    pass\nclass A(C1areSlots2):\n    pass\n"
    err = refused(file, "class A(C1areSlots):\n    pass", "class A(C1areSlots):\n    x = 1")
    assert err.code in ("no_match", "edit_conflict")
    farther = file.replace("C1areSlots2", "C1Slots")
    text, _ = apply(farther, "class A(C1areSlots):\n    pass", "class A(C1areSlots):\n    x = 1")
    assert text == farther.replace("    pass\n", "    x = 1\n", 1)


def test_a_near_miss_at_two_places_is_ambiguous() -> None:
    block = "    if ready:\n        start(job)\n        wait(job)\n"
    file = f"def a():\n{block}\n\ndef b():\n{block}"
    err = refused(file, "    if ready:\n        strat(job)\n        wait(job)",
                  "    if ready:\n        begin(job)\n        wait(job)")
    assert err.code == "ambiguous_match"


def test_a_missing_line_next_to_the_change_that_new_text_does_not_pair_is_refused() -> None:
    file = "def f():\n    alpha = 1\n    beta = 2\n    gamma = 3\n    return alpha\n"
    err = refused(file, "    alpha = 1\n    gamma = 3\n    return alpha",
                  "    alpha = 1\n    gamma = 30\n    return alpha")
    assert err.code == "edit_conflict"
    assert "beta = 2" in err.message


def test_a_missing_line_away_from_the_change_is_kept() -> None:
    file = ("def f():\n    alpha = 1\n    beta = 2\n    gamma = 3\n    delta = 4\n"
            "    return alpha\n")
    text, _ = apply(file, "    alpha = 1\n    gamma = 3\n    delta = 4\n    return alpha",
                    "    alpha = 1\n    gamma = 3\n    delta = 40\n    return alpha")
    assert text == file.replace("delta = 4\n", "delta = 40\n")


def test_a_missing_changed_line_rewritten_in_new_text_is_replaced() -> None:
    file = ("    type: object = ...,\n    converter: Optional[_Conv] = ...,\n"
            "    factory: Optional[Callable[[], _T]] = ...,\n    kw_only: bool = ...,\n")
    text, _ = apply(file, "    type: object = ...,\n    factory: Optional[Callable[[], _T]] = ...,"
                    "\n    kw_only: bool = ...,",
                    "    type: object = ...,\n    converter: _Conv | None = ...,\n"
                    "    factory: Callable[[], _T] | None = ...,\n    kw_only: bool = ...,")
    assert text == ("    type: object = ...,\n    converter: _Conv | None = ...,\n"
                    "    factory: Callable[[], _T] | None = ...,\n    kw_only: bool = ...,\n")



SHUTIL = """\
            if srcentry.is_dir():
                copytree(srcobj, dstname)
            else:
                copy_function(srcobj, dstname)
        elif srcentry.is_dir():
            copytree(srcobj, dstname)
        else:
            # Will raise a SpecialFileError for unsupported file types
            copy_function(srcobj, dstname)
"""


def test_an_extra_line_reading_elsewhere_yields_to_a_window_that_differs_in_one_line() -> None:
    # corpus case P19 case-on-edited-line: old text stands at lines 7-9 but for a changed case
    # (no typo); lines 3-4 match it but for the comment, which an extra-line reading would put
    # there: the edit must not land at lines 3-4
    old = ("        else:\n            # Will raise a SpecialFileError for Unsupported file types\n"
           "            copy_function(srcobj, dstname)\n")
    new = old.replace("Will", "Will_v2")
    err = refused(SHUTIL, old, new)
    assert err.code in ("no_match", "edit_conflict")


def test_a_wrap_already_made_is_a_no_op_not_a_near_miss_reapplied() -> None:
    # corpus case P16 already-applied-wrap: the file line old text lacks is the one the edit
    # adds; the near-miss reading would wrap the wrapped line again
    file = ("def f(x):\n    if x == 1:\n        return 1\n    else:\n        if flag:\n"
            "            state = 'a'\n    return 0\n")
    old = "    if x == 1:\n        return 1\n    else:\n        state = 'a'\n    return 0\n"
    new = ("    if x == 1:\n        return 1\n    else:\n        if flag:\n"
           "            state = 'a'\n    return 0\n")
    done = apply_requests(file, [Request(old, new)])
    assert done.text == file
    assert done.reports[0]["matched_with"] == "already_applied"

# --- old-only elision ------------------------------------------------------------------------


BODY = """\
def handler(event):
    if event.kind == "open":
        prepare(event)
        record(event)
        notify(event)
    elif event.kind == "close":
        release(event)
    return event
"""


@pytest.mark.parametrize("marker", ["...", "# ...", "# ... existing code ..."])
def test_old_only_elision_replaces_the_whole_span(marker: str) -> None:
    old = f'    if event.kind == "open":\n        {marker}\n        notify(event)'
    new = '    if event.kind == "open":\n        prepare(event)\n        notify(event)'
    text, tier = apply(BODY, old, new)
    assert text == BODY.replace("        record(event)\n", "")
    assert tier == "elision"


def test_old_only_elision_refuses_when_the_last_segment_follows_twice() -> None:
    file = BODY + "\n\ndef other(event):\n    notify(event)\n"
    err = refused(file.replace("    return event\n", "    notify(event)\n    return event\n"),
                  '    if event.kind == "open":\n        ...\n    notify(event)',
                  '    if event.kind == "open":\n        prepare(event)\n    notify(event)')
    assert err.code in ("no_match", "ambiguous_match")


def test_old_only_elision_refuses_when_first_segments_chain_at_two_places() -> None:
    block = "def f{n}(x):\n    start(x)\n    work(x)\n    finish(x)\n"
    file = block.format(n=1) + "\n" + block.format(n=2)
    err = refused(file, "    start(x)\n    ...\n    finish(x)",
                  "    start(x)\n    work(x)\n    finish(x, True)")
    assert err.code in ("no_match", "ambiguous_match")


OVERLOADS = """\
@overload
def make(
    maybe_cls: _C,
    these: Optional[Dict[str, Any]] = ...,
    repr_ns: Optional[str] = ...,
) -> _C: ...
@overload
def make(
    maybe_cls: _C,
    on_setattr: Optional[_OnSetAttrArgType] = ...,
    field_transformer: Optional[_FieldTransformer] = ...,
    repr_ns: Optional[str] = ...,
) -> _C: ...
"""


def test_old_only_elision_takes_the_fewest_elided_lines_new_text_writes_out() -> None:
    # Both places chain "maybe_cls ... repr_ns"; only the first one's elided line is the one
    # new text writes out (edited), by a clear margin.
    old = "    maybe_cls: _C,\n    ...\n    repr_ns: Optional[str] = ...,"
    new = ("    maybe_cls: _C,\n    these: dict[str, Any] | None = ...,\n"
           "    repr_ns: str | None = ...,")
    text, tier = apply(OVERLOADS, old, new)
    assert tier == "elision"
    assert text == OVERLOADS.replace(
        "    these: Optional[Dict[str, Any]] = ...,\n    repr_ns: Optional[str] = ...,",
        "    these: dict[str, Any] | None = ...,\n    repr_ns: str | None = ...,", 1)


def test_old_only_elision_refuses_two_places_new_text_cannot_tell_apart() -> None:
    file = OVERLOADS.replace("    on_setattr: Optional[_OnSetAttrArgType] = ...,\n",
                             "    these: Optional[Dict[str, Any]] = ...,\n")
    err = refused(file, "    maybe_cls: _C,\n    ...\n    repr_ns: Optional[str] = ...,",
                  "    maybe_cls: _C,\n    these: dict | None = ...,\n    repr_ns: str = ...,")
    assert err.code == "ambiguous_match"


def test_old_only_elision_with_a_blank_first_segment() -> None:
    file = "x = 1\n\n@attrs(hash=True)\nclass V:\n    pass\n"
    text, tier = apply(file, "\n# ... existing code ...\nclass V:",
                       "\n@attrs(unsafe_hash=True)\nclass V:")
    assert text == file.replace("hash=True", "unsafe_hash=True")
    assert tier == "elision"


@pytest.mark.parametrize("old", ["    x = 1\n    ...\n", "    ...\n    x = 1\n"])
def test_old_only_elision_with_a_marker_at_an_end_is_refused(old: str) -> None:
    err = refused("def f():\n    x = 1\n    y = 2\n", old, "    x = 3\n    y = 2\n")
    assert err.code == "no_match"
    assert "begin and end with real lines" in err.message


def test_old_only_elision_deleted_across_the_marker_replaces_the_span() -> None:
    file = ("def f():\n    import io\n\n    f = io.StringIO()\n    return f\n")
    text, _ = apply(file, "    import io\n# ...\n    f = io.StringIO()", "    f = StringIO()")
    assert text == "def f():\n    f = StringIO()\n    return f\n"


def test_old_only_elision_with_a_seam_in_new_text_is_refused() -> None:
    # New text changes a line next to the marker one for one: keep the gap or drop it?
    err = refused(BODY, '    if event.kind == "open":\n        ...\n        notify(event)',
                  '    if event.kind == "opened":\n        notify(event)')
    assert err.code == "no_match"
    assert "does not say what becomes of the elided lines 3-4" in err.message


def test_old_only_elision_refuses_when_new_text_repeats_a_line_past_the_span() -> None:
    file = ("def f(a):\n    start(a)\n    step(a)\n    finish(a)\n    cleanup_everything(a)\n")
    err = refused(file, "    start(a)\n    ...\n    finish(a)",
                  "    start(a)\n    step(a, 2)\n    finish(a)\n    cleanup_everything(a)")
    assert err.code == "no_match"
    assert "outside the span" in err.message


def test_else_with_an_elided_body_is_not_already_applied_elsewhere() -> None:
    file = ("def a(x):\n    if x:\n        one()\n    else:\n        two()\n\n\n"
            "def b(x):\n    if x:\n        three()\n    else:\n        four()\n")
    try:
        text, tier = apply(file, "        three()\n    else:\n        ...",
                           "        three()\n    else:\n        five()")
    except MatchError:
        return
    assert tier != "already_applied"
    assert text == file.replace("four()", "five()")


def test_a_missing_line_among_look_alikes_is_read_the_way_that_merges() -> None:
    file = ("    call(\n        compose(\n            name,\n            flags,\n        )\n"
            "    )\n    after = 1\n")
    old = "            name,\n            flags,\n        )\n    after = 1"
    new = ("            name,\n            flags,\n            extra,\n        )\n    )\n"
           "    after = 1")
    text, tier = apply(file, old, new)
    assert text == file.replace("            flags,\n", "            flags,\n            extra,\n")
    assert tier == "near_miss"


@pytest.mark.parametrize(("old", "new"), [
    ("    total = compute(b, config)", "    total = compute(b, config, strict=True)"),  # short name
    ("    total = compote(a, confog)", "    total = compote(a, confog, strict=True)"),  # two words
])
def test_a_single_line_that_differs_in_a_short_name_or_two_words_is_refused(
        old: str, new: str) -> None:
    file = "def run(a, config):\n    total = compute(a, config)\n    return total\n"
    err = refused(file, old, new)
    assert err.code == "no_match"


# --- properties: a near miss lands where it was meant, or is refused -------------------------


_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
          "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo")


def _program(seed: int, lines: int) -> list[str]:
    import random

    rng = random.Random(seed)
    out = []
    for i in range(lines):
        a, b = rng.sample(_WORDS, 2)
        out.append(f"    {a}_{i % 7} = {b}_value({rng.randrange(100)}, {a}_{rng.randrange(5)})")
    return out


@given(seed=st.integers(0, 10_000), start=st.integers(0, 30), size=st.integers(3, 6),
       kind=st.sampled_from(["typo_kept", "missing_kept", "extra", "typo_changed"]),
       duplicate=st.booleans())
@settings(max_examples=120, deadline=None)
def test_a_near_miss_applies_where_it_was_meant_or_is_refused(
        seed: int, start: int, size: int, kind: str, duplicate: bool) -> None:
    import random

    rng = random.Random(seed)
    body = _program(seed, 40)
    block = body[start:start + size]
    if duplicate:  # the same block elsewhere: the near miss must not pick one
        body = [*body, "", *block]
    file = "def main():\n" + "\n".join(body) + "\n"
    changed = rng.randrange(size)
    new_block = list(block)
    new_block[changed] = block[changed] + "  # edited"
    expected = file.replace("\n".join(block) + "\n", "\n".join(new_block) + "\n", 1)
    old, new = list(block), list(new_block)
    kept = [i for i in range(1, size - 1) if i != changed] or [i for i in range(size)
                                                                 if i != changed]
    k = rng.choice(kept)
    word = old[k].split()[0]
    typo = word[0] + word[2] + word[1] + word[3:] if word[1] != word[2] else word[:-1]
    if kind == "typo_kept":
        old[k] = new[k] = old[k].replace(word, typo, 1)
    elif kind == "typo_changed":
        w = old[changed].split()[0]
        old[changed] = old[changed].replace(w, w[0] + w[2] + w[1] + w[3:], 1)
    elif kind == "missing_kept" and 0 < k < size - 1:
        del old[k]
    elif kind == "extra":
        stray = "    stray_line = unrelated_call(12345)"
        old.insert(k, stray)
        new.insert(k, stray)
    try:
        done = apply_requests(file, [Request("\n".join(old), "\n".join(new))])
    except MatchError:
        return  # refused: safe
    assert done.text == expected, (kind, duplicate, old, new)
