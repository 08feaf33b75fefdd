"""``--format text`` is what a model reads byte for byte, except on a terminal: there the control
characters of content are shown, not acted on (the terminal module, imported only then)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_inprocess


def test_control_characters_are_shown_on_a_terminal_only(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("red \x1b[31mALERT\x1b[0m\n")
    argv = ["grep_search", "--pattern", "ALERT", "--format", "text"]
    piped = run_inprocess(argv, workspace=tmp_path)
    shown = run_inprocess(argv, workspace=tmp_path, stdout_isatty=True)
    assert piped.code == shown.code == 0
    assert "\x1b[31m" in piped.out
    assert "\x1b" not in shown.out and "ALERT" in shown.out
