"""Build the real-code edit benchmark's data from two releases of public Python packages.

For every pair of consecutive releases given (unpacked sdists), each ``.py`` file present in
both is diffed line by line (difflib); every changed block of at most ``MAX_BLOCK`` lines on
either side becomes a *hunk*: the old release's lines it replaces and the new release's lines
that replace them. Each hunk's request is the changed block plus the least context around it
that makes it unique in the old file; then one mistake a model makes is applied per class
(``CLASSES``), deterministically from ``--seed``. The expected result of a request is the old
file with that one hunk applied (or, for the ``absent``/``twice`` classes, a refusal).

The output (``benchmarks/data/realcode.json.gz``) holds the old files the cases need, the
sources (package, versions, licence) and the cases; ``benchmarks/edit_realcode.py`` runs them.

    .venv/bin/python benchmarks/realcode_build.py --pair DIR_OLD DIR_NEW NAME LICENCE ...

Data provenance: ``benchmarks/data/README.md``.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

MAX_BLOCK = 12
MAX_CONTEXT = 12
MIN_CHARS = 12
CLASSES = ("exact", "trailing_ws", "crlf", "replace_all", "indentation", "typo_changed",
           "typo_context", "missing_line", "extra_line", "elision", "stub_ellipsis", "absent",
           "twice")
EXACT_CLASSES = ("exact", "crlf", "replace_all", "twice", "trailing_ws", "stub_ellipsis",
                 "indentation")
MARKERS = ("...", "# ...", "# ... existing code ...")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def _hunks(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in ops
            if op != "equal" and i2 - i1 <= MAX_BLOCK and j2 - j1 <= MAX_BLOCK]


def _count(text: str, needle: str) -> int:
    n, pos = 0, text.find(needle)
    while pos != -1 and n < 3:
        n += 1
        pos = text.find(needle, pos + 1)
    return n


def _context(old: list[str], text: str, i1: int, i2: int) -> tuple[int, int] | None:
    """The least context [a, b) around old[i1:i2] that is unique and informative."""
    a, b = i1, i2
    above = True
    while True:
        block = "\n".join(old[a:b])
        informative = sum(len(x.strip()) for x in old[a:b]) >= MIN_CHARS and b > a
        if informative and _count(text, block) == 1 and (b - a) >= 1 and (
                i1 < i2 or (a < i1 and b > i2)):
            return a, b
        if (i1 - a) + (b - i2) >= 2 * MAX_CONTEXT:
            return None
        if above and a > 0:
            a -= 1
        elif b < len(old):
            b += 1
        elif a > 0:
            a -= 1
        else:
            return None
        above = not above


def _typo(line: str, rng: random.Random) -> str | None:
    idents = list(_IDENT.finditer(line))
    if not idents:
        return None
    m = rng.choice(idents)
    word = m.group()
    k = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "sub", "drop"))
    if kind == "swap" and word[k] != word[k + 1]:
        typo = word[:k] + word[k + 1] + word[k] + word[k + 2:]
    elif kind == "drop":
        typo = word[:k] + word[k + 1:]
    else:
        repl = "e" if word[k] != "e" else "a"
        typo = word[:k] + repl + word[k + 1:]
    return line[:m.start()] + typo + line[m.end():]


def _shift(lines: list[str], how: str) -> list[str]:
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        if how == "tabs":
            out.append("\t" * (indent // 4) + " " * (indent % 4) + line[indent:])
        else:
            delta = int(how)
            out.append(" " * (indent + delta) + line[indent:])
    return out


def build(pairs: list[tuple[Path, Path, str, str]], seed: int,
          per_class: int = 60) -> dict[str, Any]:
    files: dict[str, str] = {}
    sources = []
    cases: list[dict[str, Any]] = []
    all_hunks: list[tuple[str, list[str], list[str], tuple[int, int, int, int]]] = []
    for old_dir, new_dir, name, licence in pairs:
        sources.append({"package": name, "old": old_dir.name, "new": new_dir.name,
                        "licence": licence})
        for old_path in sorted([*old_dir.rglob("*.py"), *old_dir.rglob("*.pyi")]):
            rel = old_path.relative_to(old_dir)
            new_path = new_dir / rel
            if not new_path.is_file():
                continue
            try:
                old_text = old_path.read_text(encoding="utf-8")
                new_text = new_path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if old_text == new_text or "\r" in old_text or not old_text.endswith("\n"):
                continue
            old, new = old_text.split("\n")[:-1], new_text.split("\n")[:-1]
            key = f"{old_dir.name}/{rel}"
            for hunk in _hunks(old, new):
                all_hunks.append((key, old, new, hunk))
                files[key] = old_text
    rng = random.Random(seed)
    for n, (key, old, new, (i1, i2, j1, j2)) in enumerate(all_hunks):
        text = files[key]
        ctx = _context(old, text, i1, i2)
        if ctx is None:
            continue
        a, b = ctx
        old_block = old[a:b]
        new_block = old[a:i1] + new[j1:j2] + old[i2:b]
        expect = {"i1": i1, "i2": i2, "repl": new[j1:j2]}
        base = {"file": key, "hunk": n}

        def add(cls: str, o: list[str], nw: list[str], exp: dict[str, Any] | None = expect,
                text: str = text, base: dict[str, Any] = base, **extra: Any) -> None:
            old_text, new_text = "\n".join(o), "\n".join(nw)
            if not nw:  # a deletion of whole lines: the line breaks go too
                old_text += "\n"
            if cls not in EXACT_CLASSES and _count(text, old_text) > 0:
                return  # the mistake left old text still in the file: not a mistake
            cases.append({**base, "cls": cls, "old": old_text, "new": new_text,
                          "expect": exp, **extra})

        add("exact", old_block, new_block)
        if any(x.strip() == "..." for x in new_block):  # Python's own ``...`` in new text
            add("stub_ellipsis", old_block, new_block)
        add("crlf", old_block, new_block, crlf=True)
        add("trailing_ws", [x.rstrip() for x in old_block], [x.rstrip() for x in new_block],
            {"i1": i1, "i2": i2, "repl": [x.rstrip() for x in new[j1:j2]]})
        how = rng.choice(("2", "4", "-2", "-4", "tabs"))
        if how.startswith("-") and any(x.strip() and len(x) - len(x.lstrip(" ")) < -int(how)
                                       for x in old_block + new_block):
            how = how[1:]
        if how == "tabs" and not any(x.startswith("    ") for x in old_block):
            how = "4"
        add("indentation", _shift(old_block, how), _shift(new_block, how), shift=how)
        # replace_all: a one-line change, every occurrence of the old line replaced
        if i2 - i1 == 1 and j2 - j1 == 1 and old[i1].strip() and len(old[i1].strip()) >= 8:
            add("replace_all", [old[i1]], [new[j1]], {"replace_all": True}, replace_all=True)
        lead, changed, trail = i1 - a, i2 - i1, b - i2
        # typos: one in a line the edit changes, one in a kept context line
        if changed:
            k = lead + rng.randrange(changed)
            typo = _typo(old_block[k], rng)
            if typo is not None:
                o = list(old_block)
                o[k] = typo
                add("typo_changed", o, new_block)
        if lead + trail:
            k = rng.choice([x for x in range(len(old_block)) if x < lead or x >= lead + changed])
            typo = _typo(old_block[k], rng)
            if typo is not None:
                o = list(old_block)
                o[k] = typo
                nk = k if k < lead else k - changed + (j2 - j1)
                nw = list(new_block)
                nw[nk] = typo
                add("typo_context", o, nw)
        interior = [x for x in range(1, len(old_block) - 1) if old_block[x].strip()]
        if interior:
            k = rng.choice(interior)
            add("missing_line", old_block[:k] + old_block[k + 1:], new_block, dropped=k)
        if len(old_block) >= 2:
            k = rng.randrange(1, len(old_block))
            others = [x for x in old if x.strip() and len(x.strip()) >= 8 and x not in old_block]
            if others:
                extra = rng.choice(others)
                o = [*old_block[:k], extra, *old_block[k:]]
                nw = list(new_block)
                if k <= lead:
                    nw = [*nw[:k], extra, *nw[k:]]
                elif k >= lead + changed:
                    nk = k - changed + (j2 - j1)
                    nw = [*nw[:nk], extra, *nw[nk:]]
                add("extra_line", o, nw, inserted=k)
        if len(old_block) >= 3:
            span = rng.randint(1, min(3, len(old_block) - 2))
            k = rng.randrange(1, len(old_block) - span)
            indent = old_block[k][: len(old_block[k]) - len(old_block[k].lstrip())]
            marker = indent + rng.choice(MARKERS)
            add("elision", [*old_block[:k], marker, *old_block[k + span:]], new_block,
                elided=[k, k + span])
        # refusals: text from another file; a block present twice
        other = all_hunks[(n * 7919 + 13) % len(all_hunks)]
        if other[0] != key:
            oi1, oi2 = other[3][0], other[3][1]
            block = other[1][max(oi1 - 1, 0):oi2 + 1]
            if sum(len(x.strip()) for x in block) >= MIN_CHARS and \
                    _count(text, "\n".join(block)) == 0:
                add("absent", block, [x + "  # changed" if x.strip() else x for x in block],
                    None)
        if changed and _count(text, "\n".join(old[i1:i2])) >= 2 and \
                sum(len(x.strip()) for x in old[i1:i2]) >= 4 and old[i1:i2] != new[j1:j2]:
            add("twice", old[i1:i2], new[j1:j2], None)
    # Python's own ``...`` in new text: an overload stub (a bare ``...`` body) added above a
    # real one-line ``def`` header.
    for key in sorted({case["file"] for case in cases}):
        text = files[key]
        lines = text.split("\n")[:-1]
        defs = [i for i, x in enumerate(lines) if x.lstrip().startswith("def ") and
                x.rstrip().endswith(":") and _count(text, x) == 1]
        for i in defs[:: max(1, len(defs) // 2)][:2]:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            stub = [f"{indent}@overload", lines[i], f"{indent}    ..."]
            cases.append({"file": key, "hunk": -1, "cls": "stub_ellipsis", "old": lines[i],
                          "new": "\n".join([*stub, lines[i]]),
                          "expect": {"i1": i, "i2": i, "repl": stub}})
    by_class: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        by_class.setdefault(case["cls"], []).append(case)
    picked: list[dict[str, Any]] = []
    for cls in CLASSES:
        group = by_class.get(cls, [])
        picked += group if len(group) <= per_class else sorted(
            rng.sample(group, per_class), key=lambda c: (c["file"], c["hunk"]))
    used = {case["file"] for case in picked}
    return {"seed": seed, "sources": sources,
            "files": {k: v for k, v in files.items() if k in used}, "cases": picked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", nargs=4, action="append", required=True,
                        metavar=("OLD_DIR", "NEW_DIR", "NAME", "LICENCE"))
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--per-class", type=int, default=60)
    parser.add_argument("--out", default=str(Path(__file__).parent / "data" /
                                             "realcode.json.gz"))
    args = parser.parse_args(argv)
    pairs = [(Path(o), Path(n), name, lic) for o, n, name, lic in args.pair]
    data = build(pairs, args.seed, args.per_class)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    out.write_bytes(gzip.compress(payload, mtime=0))
    counts: dict[str, int] = {}
    for case in data["cases"]:
        counts[case["cls"]] = counts.get(case["cls"], 0) + 1
    print(f"{len(data['cases'])} cases from {len(data['files'])} files, "
          f"{out.stat().st_size} bytes: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
