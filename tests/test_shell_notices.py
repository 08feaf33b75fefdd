"""Notices name parameters the way their reader passes them: flags for a person (the human
format, ``--paths``' stderr), JSON words for a model (``--format text``, JSON), one to one."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliRunner
from tests.invariants.budget import invariant
from zbtools.dispatch import parse_tool_flags
from zbtools.registry import find
from zbtools.textout import as_flags


def test_text_keeps_json_words_and_paths_notices_name_flags(ws: Path, cli: CliRunner,
                                                            proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n" * 10)
    (ws / "big.log").write_text("x\n" * 100)
    text = cli("read_file", "a.txt", "--limit", "2", "--text").out
    assert "continue with offset=3" in text
    human = cli("read_file", "a.txt", "--limit", "2500", "--format", "human").out
    assert "warning:" not in human  # a short file: nothing to say
    paths = proc("grep_search", "x", "--paths", "--max-filesize", "100")
    assert "raise --max-filesize to search it" in paths.err, paths
    assert "max_filesize" not in paths.err
    hint = proc("grep_search", "x(", "--paths").err
    assert "pass --fixed-strings" in hint and "fixed_strings: true" not in hint


_FOUND = find("grep_search")
assert _FOUND is not None
SPEC = _FOUND
FIELDS = SPEC.params.fields()
VALUES = {"head_limit": st.integers(0, 9999), "max_count": st.integers(0, 50),
          "context": st.integers(0, 50), "case_insensitive": st.booleans(),
          "word_regexp": st.booleans(), "include_hidden": st.booleans(),
          "exclude_dirs": st.lists(st.sampled_from(["a", "b c", "node_modules"]), max_size=2),
          "output_mode": st.sampled_from(["content", "count"]),
          "glob": st.sampled_from(["*.py", "src/**"])}


@invariant(examples=150)
@given(name=st.sampled_from(sorted(VALUES)), data=st.data(),
       form=st.sampled_from(["{n}={v}", "{n}: {v}"]))
def test_a_notices_flag_means_what_its_json_words_mean(name: str, data: st.DataObject,
                                                       form: str) -> None:
    """For every parameter and value: the flags ``as_flags`` writes for ``name: value``, parsed
    as the command line parses them, give back exactly ``{name: value}``."""
    value = data.draw(VALUES[name])
    note = "raise " + form.format(n=name, v=json.dumps(value)) + " to see more"
    flagged = as_flags(note, FIELDS)
    words = shlex.split(flagged.removeprefix("raise ").removesuffix(" to see more"))
    values, problems = parse_tool_flags([SPEC.params], words)
    assert problems == [] and values == {name: value}, (note, flagged, values, problems)
