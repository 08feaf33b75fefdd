"""Generated trees for the ignore and search tests: ignore-rule patterns, and whole trees.

``patterns`` draws one gitignore line from ``PIECES`` (anchored ``/x``, directory-only ``x/``,
negated ``!x``, ``**``, ``?``, character classes, an escaped space);
``tests/core/search/test_ignore.py`` checks the walk against git with it, and
``tests/invariants/test_search_parity.py`` against ripgrep. ``trees`` draws a whole ``Tree``:
nested ``.gitignore``/``.ignore``/``.rgignore`` files (and sometimes a repository's
``.git/info/exclude``), hidden files and directories, odd names (spaces, unicode, a leading
dash, brackets, a newline), symlinks to files and directories (dangling too), and contents that
are text (CRLF, a BOM, invalid UTF-8), "big" (longer than a size the caller makes the streaming
threshold), binary with a NUL byte early (inside the first 8 KiB) or only late (after it).
``Tree.build`` lays it out in a directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

NAMES = ["a", "b", "c.py", "d.log", "e.txt", ".h", "x y", "ab"]
PIECES = ["a", "b", "*", "**", "?", "*.py", "*.log", "[ab]", "[!a]", "c.py", "d*", "x\\ y",
          "*b"]


@st.composite
def patterns(draw: st.DrawFn, pieces: list[str] | None = None) -> str:
    parts = draw(st.lists(st.sampled_from(pieces or PIECES), min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()) and draw(st.booleans()):
        text = "/" + text
    if draw(st.booleans()) and draw(st.booleans()):
        text += "/"
    if draw(st.integers(0, 3)) == 0:
        text = "!" + text
    return text


# Path components of the search trees: NAMES and odd ones; "target" is a default excluded
# directory of zbtools (left out unless exclude_dirs says otherwise)
COMPONENTS = [*NAMES, ".d", "caf\u00e9", "-dash", "[x]", "target", "n\nl"]
# rule pieces that can name them too (a newline cannot stand in an ignore file)
TREE_PIECES = [*PIECES, ".*", ".h", ".d", "caf\u00e9", "-dash", "\\[x]", "target", "e.txt",
               "[a-c]*"]
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
NEEDLE_LINES = [b"needle", b"a needle b", b"nothing here", b"", b"NEEDLE up", b"needleneedle",
                b"needle\r", b"\xff needle \xc3", b"ne edle", "caf\u00e9 needle".encode()]
BINARY_PROBE = 8192  # zbtools' rule: a NUL byte in the first 8 KiB makes a file binary


@dataclass
class Tree:
    """Files by path (relative, POSIX) with their bytes, symlinks by path with their target,
    and whether the root is a git repository (a ``.git`` directory)."""

    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    repository: bool = False

    def build(self, root: Path) -> None:
        if self.repository:
            (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        for rel, data in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for rel, target in self.links.items():
            os.symlink(target, root / rel)

    def late_nul(self) -> list[str]:
        """The files whose first NUL byte lies past the first 8 KiB (text to zbtools)."""
        return [rel for rel, data in self.files.items()
                if data.find(b"\0") >= BINARY_PROBE]


def glob_escape(name: str) -> str:
    """``name`` as a gitignore pattern that matches it literally."""
    return "".join("\\" + c if c in "[]*?\\" else c for c in name)


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@st.composite
def contents(draw: st.DrawFn, big: int) -> bytes:
    """A file's bytes: text, text longer than ``big``, or binary (a NUL early or late)."""
    lines = draw(st.lists(st.sampled_from(NEEDLE_LINES), max_size=8))
    kind = draw(st.sampled_from(["text", "text", "text", "big", "early", "late", "empty"]))
    eol = b"\r\n" if draw(st.integers(0, 5)) == 0 else b"\n"
    final_eol = draw(st.booleans())
    text = eol.join(lines) + (eol if lines and final_eol else b"")
    if draw(st.integers(0, 7)) == 0:
        text = b"\xef\xbb\xbf" + text
    if kind == "empty":
        return b""
    if kind == "big":
        filler = b"filler line padding\n"
        body = text + b"\n" if text and not text.endswith(b"\n") else text
        count = big // max(len(body) + len(filler), 1) + 2
        return (body + filler) * count + text
    if kind == "early":
        at = draw(st.integers(0, len(text)))
        return text[:at] + b"\0" + text[at:]
    if kind == "late":
        line = b"filler line before a late NUL byte\n"
        pad = line * (BINARY_PROBE // len(line) + 1)
        return text + b"\n" + pad + b"\0" + text + b"\nneedle after\n"
    return text


@st.composite
def trees(draw: st.DrawFn, big: int = 600) -> Tree:
    """A ``Tree`` of up to ~14 files below up to 3 levels, with ignore files, hidden entries,
    odd names, symlinks, big and binary files (``big``: the size a big file exceeds)."""
    tree = Tree(repository=draw(st.integers(0, 3)) == 0)
    paths = draw(st.lists(st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=3)
                          .map("/".join), min_size=1, max_size=14, unique=True))
    taken: set[str] = set()
    dirs: set[str] = {""}
    for rel in paths:
        # a name used both as a file and as a directory: keep the first
        if rel in dirs or any(a in taken for a in _ancestors(rel)):
            continue
        taken.add(rel)
        dirs.update(_ancestors(rel))
        tree.files[rel] = draw(contents(big))
    kinds = [*IGNORE_FILES, *([".git/info/exclude"] if tree.repository else [])]
    ignores: dict[str, list[str]] = {}

    def rules_of(d: str, kind: str) -> list[str] | None:
        rel = kind if kind == ".git/info/exclude" else (f"{d}/{kind}" if d else kind)
        if rel in tree.files or rel in dirs:
            return None
        return ignores.setdefault(rel, [])

    for d in draw(st.lists(st.sampled_from(sorted(dirs)), max_size=4)):
        rules = rules_of(d, draw(st.sampled_from(kinds)))
        if rules is not None:
            rules += draw(st.lists(patterns(TREE_PIECES), min_size=1, max_size=5))
    files = sorted(rel for rel in taken if "\n" not in rel)
    for _ in range(draw(st.integers(0, 3)) if files else 0):
        # a broad rule, and a negation re-including one file: in the same file, or deeper in a
        # file of another kind (where the precedence between kinds decides)
        chosen = draw(st.sampled_from(files))
        chain = ["", *_ancestors(chosen)]
        inner = draw(st.integers(0, len(chain) - 1))
        outer = draw(st.integers(0, inner))
        broad = rules_of(chain[outer], draw(st.sampled_from(kinds)))
        narrow = rules_of(chain[inner], draw(st.sampled_from(kinds)))
        if broad is not None and narrow is not None:
            target = glob_escape(chosen.rpartition("/")[2])
            broad.append(draw(st.sampled_from([target, "*" + target[-2:], "*", "*.*", ".*",
                                               "[a-e]*"])))
            narrow.append("!" + target)
    for rel, rules in ignores.items():
        if rules:
            tree.files[rel] = ("\n".join(rules) + "\n").encode()
    targets = sorted(tree.files) + sorted(d for d in dirs if d)
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.sampled_from(sorted(dirs)))
        name = draw(st.sampled_from(["link", ".hlink", "link e.txt"]))
        rel = f"{where}/{name}" if where else name
        if rel in tree.files or rel in dirs or rel in tree.links:
            continue
        target = draw(st.sampled_from([*targets, "missing"]))
        up = "../" * where.count("/") + ("../" if where else "")
        tree.links[rel] = up + target
    return tree
