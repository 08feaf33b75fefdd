"""Every ignore rule that applies in one directory, compiled into one matcher of its entries'
names (docs/internals/search.md#directory-matcher).

The walk asks, for each entry of a directory, what the ignore layers decide for it
(``layers.layered_decision``: the highest-ranked kind of ignore file with a matching rule, the
innermost file of that kind, its last matching line). Asked rule file by rule file, that is a
loop over the layers with a prefix test, a slice and a bucket lookup each, for every entry.
Here the question is turned around: each rule gets one number, its *ordinal*, smaller for the
rule that would decide first (layers in the precedence order, then lines from the last), so
the deciding rule is simply the matching rule with the smallest ordinal, whichever file it
comes from. The plain names and the ``*suffix`` rules of all the layers are then merged into
one table each (a name costs one lookup, a suffix one lookup per suffix length), the globs of
``*`` and plain characters into one list in ordinal order, and the other rules keep their own
file's regex, asked only while it could still win.

``Tables`` is the part that depends only on the layers (shared by every directory below the
last ignore file); ``matchers_for`` adds what depends on the directory itself (anchored
rules naming a path in it, anchored globs) and returns ``decide(name)`` for its files and for
its directories: True ignored, False re-included, None no rule, exactly as
``layered_decision`` answers for the entry's path.

Map: ``MatcherCache`` (``matchers_for``: one directory's matchers, the layers' tables kept),
``Tables`` (what the layers decide by name), ``SHIFT``/``MASK`` (the ordinals).
"""

# The hot lookups compare with ``if hit < best`` rather than ``min()``: a call per probe is
# measurable at a microsecond per entry.
# ruff: noqa: PLR1730

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from zbtools.core.search.ignore import IgnoreRules
    from zbtools.core.search.layers import Layer

    Decide = Callable[[str], "bool | None"]
    Pair = tuple[Decide | None, Decide | None]

# A rule's ordinal: ``(order << SHIFT) | (MASK - line index)``, ``order`` its layer's place in
# precedence order (0 decides first). An ignore file is at most 1 MiB: far fewer than 2**32 lines.
SHIFT = 32
MASK = (1 << SHIFT) - 1
NONE = 1 << 62  # no rule matched (larger than any ordinal)
# Tuples of layers whose tables are kept: the walk is depth-first, so the ones in use are those
# of the directories being listed (their tables copy the outer files' names: a bound on memory)
KEPT = 64


def _precedence(layers: Sequence[Layer], dir_slash: str) -> list[tuple[IgnoreRules, str]]:
    """The layers that apply in the directory ``dir_slash`` ("" or "a/b/"), in the order
    ``layered_decision`` lets them decide (highest rank, then innermost), each with the
    directory's path as its rules see it."""
    from zbtools.core.search.layers import OuterRules

    found: list[tuple[int, int, IgnoreRules, str]] = []
    for position, (prefix, rules) in enumerate(layers):
        # prefix ends with "/" and a name holds none: the entry's path starts with it exactly
        # when the directory's does
        if prefix and not dir_slash.startswith(prefix):
            continue
        sub = dir_slash[len(prefix):]
        if isinstance(rules, OuterRules):
            path = rules.above + sub
            if rules.prefix and not path.startswith(rules.prefix):
                continue
            found.append((rules.rank, position, rules.rules, path[len(rules.prefix):]))
        else:
            found.append((rules.rank, position, rules, sub))
    found.sort(key=lambda item: (-item[0], -item[1]))
    return [(rules, sub) for _, _, rules, sub in found]


class Tables:
    """The merged name tables of some layers, for files or for directories: what decides an
    entry whatever its directory (plain names, ``*suffix`` rules, unanchored globs)."""

    __slots__ = ("ends", "lengths", "names", "negated", "regexes", "star_match", "stars",
                 "suffixes")

    def __init__(self, ordered: list[IgnoreRules], dirs: bool) -> None:
        self.names: dict[str, int] = {}
        self.suffixes: dict[str, int] = {}
        # (the layer's first ordinal, its regex of unanchored globs, group -> line index)
        self.regexes: list[tuple[int, Any, list[int]]] = []
        self.negated = [rules.negated for rules in ordered]
        names = self.names
        suffixes = self.suffixes
        # unanchored globs of ``*`` and plain characters: (ordinal, parts), smallest first
        self.stars: list[tuple[int, tuple[str, ...]]] = []
        stars = self.stars
        from zbtools.core.search.ignore import star_match  # loaded: its rules are here

        self.star_match = star_match
        for order, rules in enumerate(ordered):
            buckets = rules.dirs if dirs else rules.files
            top = order << SHIFT
            # layers come in precedence order: a name already there has the smaller ordinal
            for name, index in buckets.names.items():
                if name not in names:
                    names[name] = top | (MASK - index)
            for suffix, index in buckets.suffixes.items():
                if suffix not in suffixes:
                    suffixes[suffix] = top | (MASK - index)
            stars.extend((top | (MASK - index), parts) for index, parts in buckets.stars)
            if buckets.base_regex is not None:
                self.regexes.append((top, buckets.base_regex.regex, buckets.base_regex.groups))
        stars.sort()
        self.lengths = tuple(sorted({len(s) for s in suffixes}))
        self.ends = tuple(suffixes)

    def best(self, name: str) -> int:
        """The smallest ordinal of a rule matching ``name`` (``NONE`` for none)."""
        best = self.names.get(name, NONE)
        if self.lengths and name.endswith(self.ends):  # one C call for the names none fits
            size = len(name)
            suffixes = self.suffixes
            for length in self.lengths:
                if length > size:
                    break
                hit = suffixes.get(name[size - length:], NONE)
                if hit < best:
                    best = hit
        for hit, parts in self.stars:
            if hit >= best:
                break
            if self.star_match(name, parts):
                best = hit
                break
        for top, regex, groups in self.regexes:
            if best < top:
                break  # this layer and the later ones decide after the rule found
            m = regex.fullmatch(name)
            if m is not None:
                hit = top | (MASK - groups[m.lastindex])
                if hit < best:
                    best = hit
        return best

    def decide(self, name: str) -> bool | None:
        """True ignored, False re-included, None no rule: for an entry named ``name``."""
        best = self.best(name)
        if best == NONE:
            return None
        return not self.negated[best >> SHIFT][MASK - (best & MASK)]

    @property
    def empty(self) -> bool:
        return not (self.names or self.suffixes or self.stars or self.regexes)


class _Here:
    """One directory's matcher, for files or for directories: its layers' tables, then the
    anchored plain paths naming its entries and the anchored globs (asked on the entry's path
    as their rules see it)."""

    __slots__ = ("globs", "paths", "tables")

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.paths: list[tuple[int, dict[str, int]]] = []  # (layer's first ordinal, base->line)
        self.globs: list[tuple[int, Any, list[int], str]] = []  # (..., regex, groups, sub)

    def decide(self, name: str) -> bool | None:
        tables = self.tables
        best = tables.best(name)
        for top, table in self.paths:
            index = table.get(name)
            if index is not None:
                hit = top | (MASK - index)
                if hit < best:
                    best = hit
        for top, regex, groups, sub in self.globs:
            if best < top:
                break
            m = regex.fullmatch(sub + name)
            if m is not None:
                hit = top | (MASK - groups[m.lastindex])
                if hit < best:
                    best = hit
        if best == NONE:
            return None
        return not tables.negated[best >> SHIFT][MASK - (best & MASK)]


class _Kept:
    """What one tuple of layers gives every directory that shares it (the first directory
    seen with it, ``dir_slash``, and those below)."""

    __slots__ = ("dir_slash", "dirs", "every", "files", "layers", "local", "ordered", "shared",
                 "subs")

    def __init__(self, layers: tuple[Layer, ...], dir_slash: str) -> None:
        self.layers = layers  # held: the cache is keyed by its id
        self.dir_slash = dir_slash
        pairs = _precedence(layers, dir_slash)
        self.ordered = [rules for rules, _ in pairs]
        self.subs = [sub for _, sub in pairs]
        self.every = len(pairs) == len(layers)
        self.files = Tables(self.ordered, False)
        self.dirs = Tables(self.ordered, True)
        # whether some rule depends on the directory (anchored): then each one gets its own
        self.local = any(b.paths or b.path_regex_by_top or b.path_regex is not None
                         for rules in self.ordered for b in (rules.files, rules.dirs))
        self.shared: Pair = (None if self.files.empty else self.files.decide,
                             None if self.dirs.empty else self.dirs.decide)

    def here(self, dir_slash: str) -> Pair:
        rest = dir_slash[len(self.dir_slash):]
        made: list[Decide | None] = []
        for dirs, tables in ((False, self.files), (True, self.dirs)):
            one: _Here | None = None
            for order, rules in enumerate(self.ordered):
                buckets = rules.dirs if dirs else rules.files
                sub = self.subs[order] + rest
                top = order << SHIFT
                here = buckets.paths_by_dir().get(sub) if buckets.paths else None
                globs = []
                if sub and buckets.path_regex_by_top:
                    by_top = buckets.path_regex_by_top.get(sub[:sub.find("/")])
                    if by_top is not None:
                        globs.append(by_top)
                if buckets.path_regex is not None:
                    globs.append(buckets.path_regex)
                if not here and not globs:
                    continue
                if one is None:
                    one = _Here(tables)
                if here:
                    one.paths.append((top, here))
                one.globs.extend((top, alt.regex, alt.groups, sub) for alt in globs)
            if one is not None:
                made.append(one.decide)
            else:
                made.append(None if tables.empty else tables.decide)
        return made[0], made[1]


class MatcherCache:
    """The matchers of one walk's directories; the tables of each distinct tuple of layers
    are built once (a directory without ignore files of its own shares its parent's)."""

    def __init__(self) -> None:
        self._kept: dict[int, _Kept] = {}

    def matchers_for(self, layers: tuple[Layer, ...], dir_rel: str) -> Pair:
        """``(files, dirs)``: each ``decide(name)`` for the entries of the directory
        ``dir_rel`` ("." for the root) of that kind, or None when no rule can match one."""
        if not layers:
            return (None, None)
        dir_slash = "" if dir_rel == "." else dir_rel + "/"
        kept = self._kept.get(id(layers))
        # the tuple's sharers are the directory it was made for and those below, where each
        # layer's view of the path grows by the same tail (and the layers that apply stay)
        # (every layer applies there: below, a layer that did not may start to)
        if kept is None or kept.layers is not layers or not (
                dir_slash == kept.dir_slash
                or (kept.every and dir_slash.startswith(kept.dir_slash))):
            if len(self._kept) >= KEPT:
                del self._kept[next(iter(self._kept))]  # the oldest: its subtree is walked
            kept = self._kept[id(layers)] = _Kept(layers, dir_slash)
        return kept.here(dir_slash) if kept.local else kept.shared
