"""Gitignore rules, compiled into buckets so that a lookup costs a few probes whatever the number
of rules (docs/internals/search.md#ignore-buckets).

``IgnoreRules.parse(text, rank)`` reads one ignore file (``.gitignore``, ``.ignore``,
``.rgignore``, ``.git/info/exclude``; ``rank`` says which, for the walk's precedence) with git's
syntax (gitignore(5)): escapes, trailing spaces, ``!`` negation, a trailing ``/`` for
directories, anchoring slashes, ``*``, ``?`` and ``[...]`` never matching ``/``, and ``**``
leading, trailing or in the middle (any other ``**`` is a plain ``*``). ``decide(sub, name,
is_dir)`` answers for one path relative to the file's directory: True (ignored), False
(re-included by a negation) or None (no rule says). The last matching line wins, as in git. An
unclosed ``[`` matches nothing; POSIX classes are translated; matching is case-sensitive.

Map: ``IgnoreRules`` (``parse``, ``decide``), ``Rule``, ``parse_line``, ``translate``.
"""

# The hot lookup compares with ``if hit > best`` rather than ``max()``: a call per bucket is
# measurable at a microsecond per path.
# ruff: noqa: PLR1730

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WILDCARDS = frozenset("*?[\\")
POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class Rule:
    """One parsed line: its pattern (escapes kept), flags and line order."""

    __slots__ = ("anchored", "dir_only", "index", "negated", "pattern")

    def __init__(self, pattern: str, index: int, negated: bool, dir_only: bool,
                 anchored: bool) -> None:
        self.pattern = pattern
        self.index = index
        self.negated = negated
        self.dir_only = dir_only
        self.anchored = anchored


def parse_line(line: str, index: int) -> Rule | None:
    """The rule on one line of an ignore file, or None for blanks and comments."""
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are dropped unless the last one is escaped with a backslash.
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        backslashes = 0
        k = end - 2
        while k >= 0 and line[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2:
            break
        end -= 1
    line = line[:end]
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
        if not line:
            return None
    if line.startswith("**/"):
        # ``**/x`` is ``x`` at any depth: unanchored when the rest has no slash.
        rest = line[3:]
        while rest.startswith("**/"):
            rest = rest[3:]
        if rest and "/" not in rest:
            line, anchored = rest, False
    return Rule(line, index, negated, dir_only, anchored)


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


def _is_plain(text: str) -> bool:
    """No wildcard (a backslash escape counts as plain only after unescaping)."""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "*?[":
            return False
        i += 1
    return True


def _bracket(pattern: str, i: int) -> tuple[str, int] | None:
    """Translate the ``[...]`` starting at ``pattern[i]``: (regex class, index after it)."""
    import re

    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    parts: list[str] = []
    first = True
    while j < len(pattern):
        ch = pattern[j]
        if ch == "]" and not first:
            body = "".join(parts)
            return ("[^/" + body + "]" if negate else "(?!/)[" + body + "]"), j + 1
        first = False
        if ch == "[" and pattern.startswith("[:", j):
            close = pattern.find(":]", j + 2)
            if close < 0:
                return None
            name = pattern[j + 2:close]
            if name not in POSIX_CLASSES:
                return None
            parts.append(POSIX_CLASSES[name])
            j = close + 2
            continue
        if ch == "\\" and j + 1 < len(pattern):
            j += 1
            ch = pattern[j]
        if j + 2 < len(pattern) and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            hi = pattern[j + 2]
            if hi == "\\" and j + 3 < len(pattern):
                hi = pattern[j + 3]
                j += 1
            if ord(hi) >= ord(ch):
                parts.append(re.escape(ch) + "-" + re.escape(hi))
            j += 3
            continue
        parts.append(re.escape(ch))
        j += 1
    return None  # unclosed


def translate(pattern: str) -> str | None:
    """The regex (for ``fullmatch``) of a glob; None when it can never match (unclosed ``[``)."""
    import re

    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2
            at_start = i == 0 or pattern[i - 1] == "/"
            at_end = j == n or pattern[j] == "/"
            if double and at_start and at_end:
                if j == n:  # a trailing ``/**`` (or the whole pattern ``**``): anything below
                    out.append(".*")
                else:  # ``**/`` at the start or in the middle: zero or more directories
                    out.append("(?:.*/)?")
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            got = _bracket(pattern, i)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
        elif ch == "\\":
            if i + 1 < n:
                out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


STAR_ONLY_NOT = frozenset("?[\\/")
STARS_ALONE = 4  # more such rules in a file go into its regex


def star_match(name: str, parts: tuple[str, ...]) -> bool:
    """Whether ``name`` (no ``/``) matches the glob ``"*".join(parts)`` (at least one star;
    each matches any run of characters, as ``[^/]*`` does within a name)."""
    first, last = parts[0], parts[-1]
    start, end = len(first), len(name) - len(last)
    if end < start or not name.startswith(first) or not name.endswith(last):
        return False
    for middle in parts[1:-1]:
        if middle:
            found = name.find(middle, start, end)
            if found < 0:
                return False
            start = found + len(middle)
    return True


class _Alternation:
    """Many globs in one regex; the alternative that matches first is the highest line."""

    __slots__ = ("groups", "regex")

    def __init__(self, items: list[tuple[int, str]]) -> None:
        import re

        items.sort(key=lambda item: -item[0])
        self.groups = [0] + [index for index, _ in items]
        self.regex: Any = re.compile("|".join(f"({source})" for _, source in items),
                                     re.DOTALL)

    def best(self, text: str) -> int:
        m = self.regex.fullmatch(text)
        return -1 if m is None else self.groups[m.lastindex]


class _Buckets:
    """The rules that apply to one kind of entry (files, or directories)."""

    __slots__ = ("_by_dir", "base_regex", "names", "path_regex", "path_regex_by_top", "paths",
                 "stars", "suffix_lengths", "suffixes")

    def __init__(self, rules: list[Rule]) -> None:
        self._by_dir: dict[str, dict[str, int]] | None = None
        self.names: dict[str, int] = {}
        self.suffixes: dict[str, int] = {}
        self.paths: dict[str, int] = {}
        # unanchored globs of plain characters and ``*`` only: (line index, the parts between
        # the stars), highest line first
        self.stars: list[tuple[int, tuple[str, ...]]] = []
        base_items: list[tuple[int, str]] = []
        path_items: list[tuple[int, str]] = []
        by_top: dict[str, list[tuple[int, str]]] = {}
        for rule in rules:
            p = rule.pattern
            if _is_plain(p):
                table = self.paths if rule.anchored else self.names
                table[_unescape(p)] = rule.index  # rules come in order: the last one stays
                continue
            if not rule.anchored and p.startswith("*") and len(p) > 1 and _is_plain(p[1:]):
                self.suffixes[_unescape(p[1:])] = rule.index
                continue
            if not rule.anchored and not STAR_ONLY_NOT.intersection(p):
                # only ``*`` (``.env*``, ``*.aif*``): matched without a regex (nor ``re``)
                self.stars.append((rule.index, tuple(p.split("*"))))
                continue
            source = translate(p)
            if source is None:
                continue
            if not rule.anchored:
                base_items.append((rule.index, source))
                continue
            # Most anchored globs start with a plain directory name (``docs/*.md``): bucket
            # them by it, so a path only meets the globs of its own top directory.
            top, slash, _ = p.partition("/")
            if slash and _is_plain(top):
                by_top.setdefault(_unescape(top), []).append((rule.index, source))
            else:
                path_items.append((rule.index, source))
        if len(self.stars) > STARS_ALONE or base_items:
            # a regex is compiled anyway, or one alternation beats many string tests
            for index, parts in self.stars:
                source = translate("*".join(parts))
                if source is not None:
                    base_items.append((index, source))
            self.stars = []
        self.stars.sort(reverse=True)  # the highest line first
        self.suffix_lengths = sorted({len(s) for s in self.suffixes})
        self.base_regex = _Alternation(base_items) if base_items else None
        self.path_regex = _Alternation(path_items) if path_items else None
        self.path_regex_by_top = {top: _Alternation(items) for top, items in by_top.items()}

    def paths_by_dir(self) -> dict[str, dict[str, int]]:
        """``paths`` by the directory they name an entry of ("" or "a/b/"): base name -> line
        index (``dirrules`` asks it once per directory)."""
        if self._by_dir is None:
            self._by_dir = {}
            for path, index in self.paths.items():
                head, slash, base = path.rpartition("/")
                self._by_dir.setdefault(head + slash, {})[base] = index
        return self._by_dir

    def best(self, sub: str, name: str) -> int:
        """The highest line index matching (``-1`` for none)."""
        best = self.names.get(name, -1)
        if self.paths:
            hit = self.paths.get(sub, -1)
            if hit > best:
                best = hit
        if self.suffixes:
            size = len(name)
            for length in self.suffix_lengths:
                if length > size:
                    break
                hit = self.suffixes.get(name[size - length:], -1)
                if hit > best:
                    best = hit
        for index, parts in self.stars:
            if index <= best:
                break
            if star_match(name, parts):
                best = index
                break
        if self.base_regex is not None:
            hit = self.base_regex.best(name)
            if hit > best:
                best = hit
        if self.path_regex_by_top:
            slash = sub.find("/")
            if slash > 0:
                by_top = self.path_regex_by_top.get(sub[:slash])
                if by_top is not None:
                    hit = by_top.best(sub)
                    if hit > best:
                        best = hit
        if self.path_regex is not None:
            hit = self.path_regex.best(sub)
            if hit > best:
                best = hit
        return best


class IgnoreRules:
    """The compiled rules of one ignore file; see the module docstring."""

    __slots__ = ("dirs", "files", "negated", "rank")

    def __init__(self, rules: list[Rule], rank: int = 1) -> None:
        # which kind of file the rules come from, the walk's precedence between kinds
        # (layers.RANKS): .git/info/exclude 0, .gitignore 1, .ignore 2, .rgignore 3
        self.rank = rank
        self.negated = [rule.negated for rule in rules]
        self.files = _Buckets([r for r in rules if not r.dir_only])
        self.dirs = _Buckets(rules)

    @classmethod
    def parse(cls, text: str, rank: int = 1) -> IgnoreRules:
        rules: list[Rule] = []
        for line in text.split("\n"):
            rule = parse_line(line, len(rules))
            if rule is not None:
                rules.append(rule)
        return cls(rules, rank)

    def __bool__(self) -> bool:
        return bool(self.negated)

    def decide(self, sub: str, name: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included; None: no rule matches ``sub`` (base name ``name``)."""
        best = (self.dirs if is_dir else self.files).best(sub, name)
        if best < 0:
            return None
        return not self.negated[best]
