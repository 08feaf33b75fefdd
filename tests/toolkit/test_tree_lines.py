"""``tree_lines`` (a listing drawn as a tree) on any sequence of depths, jumps included (a
structure view leaves entries out), draws what the first, plain drawing drew: each line's
prefix from the open levels above it, ``└──`` for the last of its siblings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.toolkit.listing import Entry, tree_lines


def reference(root: str, entries: list[Entry]) -> list[str]:
    """The first drawing: a prefix joined for every entry, siblings found by a dict."""
    last = [False] * len(entries)
    seen: dict[int, bool] = {}
    for i in range(len(entries) - 1, -1, -1):
        depth = entries[i].depth
        last[i] = not seen.get(depth, False)
        seen[depth] = True
        for deeper in [d for d in seen if d > depth]:
            del seen[deeper]
    lines = [root if root.endswith("/") else root + "/"]
    open_levels: list[bool] = []
    for entry, is_last in zip(entries, last, strict=True):
        del open_levels[entry.depth - 1:]
        prefix = "".join("│   " if more else "    " for more in open_levels)
        label = entry.name + ("/" if entry.type == "directory" else "")
        if entry.type == "symlink":
            label += f" -> {entry.target}"
        lines.append(prefix + ("└── " if is_last else "├── ") + label)
        open_levels.append(not is_last)
    return lines


entries = st.lists(st.builds(
    lambda depth, kind, name: Entry(path=name, name=name, type=kind, size=None, depth=depth,
                                    target="t" if kind == "symlink" else None),
    st.integers(1, 6), st.sampled_from(["file", "directory", "symlink"]),
    st.sampled_from(["a", "b", "é"])), max_size=30)


@settings(max_examples=300, deadline=None)
@given(entries, st.sampled_from([".", "src", "src/"]))
def test_the_tree_is_the_plain_drawing(listed: list[Entry], root: str) -> None:
    assert tree_lines(root, listed) == reference(root, listed)
