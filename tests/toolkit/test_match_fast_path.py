"""grep's ``Match`` is built (``Match.of``) and written as JSON (``Match.to_json``) on fast
paths, as a result may hold thousands of matches: each against the generic ``Struct`` way it
stands for, on any strings, lines and scope."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zbtools.core.call.args import Struct
from zbtools.toolkit.grep import Match, Scope

TEXT = st.text(max_size=8)
LINES = st.lists(TEXT, max_size=3)
SCOPES = st.none() | st.builds(Scope, kind=TEXT, qualname=TEXT, start_line=st.integers(1, 9),
                               end_line=st.integers(1, 9))


@given(path=TEXT, line=st.integers(1, 10**6), text=TEXT, before=LINES, after=LINES)
def test_of_makes_what_the_constructor_makes(path: str, line: int, text: str, before: list[str],
                                              after: list[str]) -> None:
    fast = Match.of(path, line, text, before, after)
    slow = Match(path=path, line=line, text=text, before=before, after=after)
    assert vars(fast) == vars(slow) and type(fast) is Match
    assert fast.before is before and fast.after is after  # as the constructor keeps them


@given(path=TEXT, line=st.integers(1, 10**6), text=TEXT, before=LINES, after=LINES,
       scope=SCOPES)
def test_to_json_is_the_generic_structs(path: str, line: int, text: str, before: list[str],
                                        after: list[str], scope: Scope | None) -> None:
    match = Match(path=path, line=line, text=text, before=before, after=after, scope=scope)
    got = match.to_json()
    want = Struct.to_json(match)
    assert got == want and list(got) == list(want)  # the same keys, in the same order
    assert got["before"] is not before  # the caller's copy, as the generic one gives
