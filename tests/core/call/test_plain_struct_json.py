"""A plain result Struct (every field a scalar, none left out when null) gives its own dict's copy
as its JSON form when that dict holds exactly its fields in order: against the field-by-field
rule, the JSON text is the same whatever the order the fields were given in, an attribute that
is no field never shows, and the form returned is a copy (changing it leaves the entry as it
was)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.call.fastjson import dumps_ascii
from zbtools.toolkit.listing import Entry, to_entry

NAMES = list(Entry.fields())
VALUES = {"path": st.text(max_size=8), "name": st.text(max_size=8),
          "type": st.sampled_from(["file", "directory", "symlink"]),
          "size": st.none() | st.integers(0, 2**40), "depth": st.integers(1, 512),
          "target": st.none() | st.text(max_size=8)}


def field_by_field(entry: Entry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in NAMES}


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_the_json_form_is_in_field_order_whatever_the_order_given(data: Any) -> None:
    values = {name: data.draw(VALUES[name]) for name in NAMES}
    order = data.draw(st.permutations(NAMES))
    entry = Entry(**{name: values[name] for name in order})
    if data.draw(st.booleans()):
        entry.extra = "not a field"  # type: ignore[attr-defined]
    got = entry.to_json()
    assert list(got.items()) == list(field_by_field(entry).items())
    assert dumps_ascii(got) == dumps_ascii(field_by_field(entry))


def test_the_json_form_of_a_listed_entry_is_a_copy() -> None:
    from zbtools.core.search.entries import Entry as WalkEntry

    entry = to_entry(WalkEntry("a/b.py", "b.py", "file", 3, 2, None))
    got = entry.to_json()
    assert got == {"path": "a/b.py", "name": "b.py", "type": "file", "size": 3, "depth": 2,
                   "target": None}
    got["path"] = "changed"
    assert entry.path == "a/b.py"
