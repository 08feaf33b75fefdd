"""Every tier on a 100,000-line file of real code (issue 16): the lazy file model (only the
request's lines looked up) gives exactly the answer of the whole-file index, and each case
lands on the tier it was made for.

The file is the first 100,000 lines of the stdlib's modules, concatenated; each request is
made from a block near the middle. Each case is run twice through ``apply_requests``: as is
(a file this big gets the lazy index) and with ``LAZY_MIN_LINES`` raised past the file (the
whole-file index, as before issue 16); the new text, reports and warnings, or the error's code,
message and details, must be the same.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path
from typing import Any

import pytest

from zbtools.core.editing.matching import (
    MatchError,
    Request,
    apply_requests,
    candidates,
    filemodel,
    nearmiss,
    similarity,
)

LINES = 100_000


@pytest.fixture(scope="module")
def text() -> str:
    out: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        out += path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")[:-1]
        if len(out) >= LINES:
            break
    if len(out) < LINES:
        pytest.skip("the stdlib has fewer lines than the test needs")
    return "".join(line + "\n" for line in out[:LINES])


def _block(text: str, start: int, n: int, want: str = "") -> list[str]:
    """``n`` non-blank lines from line ``start`` on, containing ``want``, unique in the file
    even with whitespace ignored (so that every tier has one candidate)."""
    lines = text.split("\n")
    norm = [" ".join(x.split()) for x in lines]
    for i in range(start, len(lines) - n):
        block = lines[i:i + n]
        joined = "".join(x + "\n" for x in block)
        if not (all(len(x.strip()) > 8 for x in block) and want in joined and
                len("".join(joined.split())) > 60):
            continue
        if sum(1 for j, key in enumerate(norm) if key == norm[i] and
               norm[j:j + n] == norm[i:i + n]) == 1:
            return block
    raise AssertionError("no block")


def _join(lines: list[str]) -> str:
    return "".join(x + "\n" for x in lines)


def _answer(text: str, old: str, new: str) -> tuple[Any, ...]:
    try:
        applied = apply_requests(text, [Request(old, new)])
    except MatchError as err:
        return ("error", err.code, err.message, err.details)
    return ("ok", applied.text, applied.reports, applied.warnings)


def _both(text: str, old: str, new: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    lazy = _answer(text, old, new)
    with monkeypatch.context() as patch:
        patch.setattr(filemodel, "LAZY_MIN_LINES", 1 << 40)
        whole = _answer(text, old, new)
    assert lazy == whole
    return lazy


def _cases(text: str) -> list[tuple[str, str, str, str]]:
    """(tier or error code expected, name, old, new)."""
    mid = LINES // 2
    block = _block(text, mid, 5)
    edited = [block[0] + "  # edited", *block[1:]]
    out = [("exact", "exact block", _join(block), _join(edited)),
           ("trailing_whitespace", "trailing spaces",
            _join([x + "  " for x in block]), _join(edited)),
           ("indentation", "re-indented", _join(["    " + x for x in block]),
            _join(["    " + x for x in edited]))]
    spaced = _block(text, mid + 300, 4, want=" = ")
    out.append(("inner_whitespace", "inner spaces doubled",
                _join([x.replace(" = ", "  =  ", 1) for x in spaced]),
                _join([spaced[0] + "  # edited", *spaced[1:]])))
    quoted = _block(text, mid + 600, 4, want="'")
    out.append(("typography", "curly quotes",
                _join([x.replace("'", "\u2019") for x in quoted]),
                _join([quoted[0] + "  # edited", *[x.replace("'", "\u2019") for x in
                                                   quoted[1:]]])))
    assert "\\" not in _join(block)
    out.append(("unescape", "escaped line breaks", "\\n".join(block) + "\\n",
                "\\n".join([block[0] + "  # edited", *block[1:]]) + "\\n"))
    long_block = _block(text, mid + 900, 9)
    out.append(("elision", "elided middle",
                _join([*long_block[:2], "...", *long_block[-2:]]),
                _join([long_block[0] + "  # edited", long_block[1], "...", *long_block[-2:]])))
    typo = list(block)
    cut = len(typo[2]) - len(typo[2].lstrip()) + 3
    word = typo[2][cut - 3:]
    if word[:4].isalpha():
        typo[2] = typo[2][:cut] + "x" + typo[2][cut:]
    else:  # a letter doubled inside the first long word
        first = next(i for i, ch in enumerate(typo[2]) if ch.isalpha() and
                     typo[2][i:i + 5].isalpha())
        typo[2] = typo[2][:first + 2] + typo[2][first + 1] + typo[2][first + 2:]
    out.append(("near_miss", "one typo in a kept line", _join(typo),
                _join([typo[0] + "  # edited", *typo[1:]])))
    out.append(("no_match", "absent block",
                "def surely_not_in_the_stdlib(a, b):\n    return a.frobnicate(b) + 42\n"
                "    # nothing like it\n", "pass\n"))
    out.append(("ambiguous_match", "a repeated line", "        return None\n",
                "        return 0\n"))
    return out


@pytest.mark.slow
def test_every_tier_at_100k_lines_answers_as_the_whole_file_index_does(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert text.count("\n") == LINES
    for expected, name, old, new in _cases(text):
        answer = _both(text, old, new, monkeypatch)
        if answer[0] == "ok":
            got = answer[2][0]["matched_with"]
        else:
            got = answer[1]
        assert got == expected, (name, answer[:2] if answer[0] == "error" else got)
        if answer[0] == "ok":
            # only the edited lines changed
            before, after = text.split("\n"), answer[1].split("\n")
            report = answer[2][0]
            lo, hi = report["start_line"] - 1, report["end_line"]
            assert before[:lo] == after[:lo], name
            assert before[hi:] == after[len(after) - (len(before) - hi):], name


def test_an_edit_already_made_at_100k_lines_is_a_no_op(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    block = _block(text, LINES // 2 + 1200, 5)
    old, new = _join(block), _join([block[0] + "  # edited", *block[1:]])
    done = _both(text, old, new, monkeypatch)
    assert done[0] == "ok"
    again = _both(done[1], old, new, monkeypatch)
    assert again[0] == "ok" and again[1] == done[1]
    assert again[2][0]["matched_with"] == "already_applied"


def test_a_deletion_already_made_is_a_no_op_though_the_line_stands_elsewhere() -> None:
    """Corpus case P16 already-applied-delete: the deleted line is gone from where new text
    stands; the same line in another function proves nothing."""
    text = ("def first(items):\n    for item in items:\n        total += item\n"
            "    return None\n\n\ndef last(items):\n    result = None\n        result = item\n"
            "    return result\n")
    applied = apply_requests(text, [Request("    for item in items:\n        result = item\n",
                                            "        result = item\n")])
    assert not applied.changed
    assert applied.reports[0]["matched_with"] == "already_applied"


def _every_line_starts(keys: list[str], index: Any) -> set[int]:
    """The window starts near misses looked at before issue 16's shortcut: every line's
    first 200 occurrences (the reference ``nearmiss._near_starts`` must agree with)."""
    starts: set[int] = set()
    for i, key in enumerate(keys):
        if not key:
            continue
        for pos in index.get(key, ())[:200]:
            starts.update((pos - i - 1, pos - i, pos - i + 1))
        if len(starts) > nearmiss.NEAR_MAX_STARTS:
            break
    return starts


def _every_line_counted(keys: list[str], index: Any) -> list[int]:
    """``similarity._informative`` as it was: every line's occurrences counted in full."""
    scored = []
    for i, key in enumerate(keys):
        if key in candidates.TRIVIAL or sum(ch.isalnum() for ch in key) < 8:
            continue
        hits = len(index.get(key, ()))
        if hits:
            scored.append((hits, -len(key), i))
    return [i for _, _, i in sorted(scored)[:3]]


def _near_cases(text: str) -> list[tuple[str, str, str]]:
    """(name, old, new): a typo, a reworded line, a line missing and one extra, in blocks
    with common lines (``return``, docstring quotes), and a block that stands twice."""
    lines = text.split("\n")
    out = []
    for n, at in enumerate(range(LINES // 2, LINES // 2 + 4000, 2000)):
        block = lines[at:at + 9]
        if sum(1 for x in block if x.strip()) < 5:
            continue
        k = max(range(9), key=lambda i: len(lines[at + i]))
        typo = list(block)
        typo[k] = typo[k].replace("e", "ee", 1) if "e" in typo[k] else typo[k] + "x"
        reworded = list(block)
        reworded[k] = reworded[k].strip() + " and then some more words"
        out += [(f"typo {n}", _join(typo), _join([typo[0] + "  # edited", *typo[1:]])),
                (f"reworded {n}", _join(reworded), _join(reworded).replace("\n", "  # e\n", 1)),
                (f"missing {n}", _join(block[:4] + block[5:]), _join(block[:3] + block[5:])),
                (f"extra {n}", _join([*block[:4], "    extra = 1", *block[4:]]),
                 _join(block[:4] + block[5:]))]
    return out


@pytest.mark.slow
def test_near_misses_look_at_two_lines_and_answer_as_every_line_would(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``nearmiss._near_starts`` looks up two lines whose occurrences are all known (longest
    first) and ``_informative`` counts lines only as far as they can rank: the answers are
    those of every line looked up in full, on a big file's lazy index and on the whole-file
    one, also when the block stands twice (then refused)."""
    block = _block(text, LINES // 2 + 2000, 6)
    twice = text + "\n" + _join(block)
    typo = list(block)
    typo[3] = typo[3].replace("e", "ee", 1) if "e" in typo[3] else typo[3] + "x"
    cases = [(text, *case) for case in _near_cases(text)]
    for source, name in ((text, "a typo in a block"), (twice, "the block standing twice")):
        cases.append((source, name, _join(typo), _join([typo[0] + "  # edited", *typo[1:]])))
    outcomes = set()
    answers = {}
    for source, name, old, new in cases:
        answer = answers[name] = _both(source, old, new, monkeypatch)
        with monkeypatch.context() as patch:
            patch.setattr(nearmiss, "_near_starts", _every_line_starts)
            patch.setattr(similarity, "_informative", _every_line_counted)
            assert _answer(source, old, new) == answer, name
        outcomes.add(answer[2][0]["matched_with"] if answer[0] == "ok" else answer[1])
    # the second copy is seen: what one copy accepts, two refuse
    assert answers["a typo in a block"][0] == "ok"
    assert answers["the block standing twice"][0] == "error"
    assert {"near_miss", "similarity"} <= outcomes, outcomes
