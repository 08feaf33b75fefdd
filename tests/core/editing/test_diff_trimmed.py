"""A big text's diff is made from the lines around its changes (issue 16), and is the same
diff, hunks and line numbers, as the one made from the whole texts."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

from zbtools.core.editing.matching import diff


def _both(before: str, after: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.setattr(diff, "TRIM_CHARS", 0)
    trimmed = diff.unified_diff("p", before, after)
    monkeypatch.setattr(diff, "TRIM_CHARS", 1 << 60)
    whole = diff.unified_diff("p", before, after)
    return trimmed, whole


@pytest.mark.parametrize("seed", range(4))
def test_random_changes_give_the_whole_texts_diff(seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    source = (Path(sysconfig.get_paths()["stdlib"]) / "_collections_abc.py").read_text()
    rng = random.Random(seed)
    for _ in range(40):
        lines = source.split("\n")[:rng.choice([30, 400, 1200])]
        if rng.random() < 0.2:
            lines = [line + ("\r" if rng.random() < 0.5 else "") for line in lines]
        if rng.random() < 0.1:
            lines = [line.replace("e", "\x0c", 1) if rng.random() < 0.05 else line
                     for line in lines]
        before = "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")
        changed = before.split("\n")
        for _ in range(rng.choice([1, 1, 2, 5])):
            i = rng.randrange(len(changed))
            op = rng.random()
            if op < 0.3:
                changed[i] += " #x"
            elif op < 0.5:
                del changed[i]
            elif op < 0.7:
                changed.insert(i, changed[max(i - 1, 0)])  # a repeated line: ambiguous places
            elif op < 0.85:
                changed[i:i] = ["new"] * rng.randint(1, 4)
            else:
                changed[i] = changed[i][: len(changed[i]) // 2]
        after = "\n".join(changed)
        if rng.random() < 0.1:
            after = after.rstrip("\n")
        trimmed, whole = _both(before, after, monkeypatch)
        assert trimmed == whole


def test_blank_lines_and_repeats_around_the_change(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f"line {i}\n" for i in range(30))
    for before, after in [
            (body + "x\n\n\n\nclass A:\n" + body, body + "x\n\n\nclass A:\n" + body),
            (body + "r\nn\n" + body, body + "r\nr\nn\n" + body),
            (body, body + "tail"),
            (body + "end", body + "END"),
            ("a\r\n" + body, "a\r" + body)]:
        trimmed, whole = _both(before, after, monkeypatch)
        assert trimmed == whole
