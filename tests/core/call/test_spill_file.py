"""``Context.spill_file`` (a path naming one of the workspace's spill files, which read_file
may read outside the workspace): its quick refusal of paths without ``spill`` in them answers
as the whole check does, on generated paths around the spill folder."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.call.context import Context
from zbtools.core.files.workspace import Workspace


def reference(ctx: Context, path: str) -> str | None:
    """The whole check, with no quick refusal."""
    if not os.path.isabs(path):
        return None
    folder, name = os.path.split(os.path.normpath(path))
    spill = os.path.join(ctx.state_path(), "spill")
    if not name or os.path.normcase(folder) != os.path.normcase(spill):
        return None
    return name


SEGMENTS = st.sampled_from(["spill", "..", ".", "", "x", "spill.txt", "a-spill", "SPILL"])


@settings(max_examples=200, deadline=None)
@given(inside=st.lists(SEGMENTS, max_size=4), absolute=st.booleans())
def test_the_quick_refusal_answers_as_the_whole_check(
        inside: list[str], absolute: bool) -> None:
    ws = Path(os.path.realpath(os.environ.get("TMPDIR", "/tmp")))
    space = Workspace(str(ws))
    try:
        ctx = Context(space)
        base = ctx.state_path() if absolute else "state"
        for path in (os.path.join(base, *inside), os.path.join(base, "spill", *inside),
                     os.path.join(base, "spill", "out.txt", *inside)):
            assert ctx.spill_file(path) == reference(ctx, path), path
    finally:
        space.close()
