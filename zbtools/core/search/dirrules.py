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
``Tables`` (what the layers decide by name, merged from each layer's ``_LayerTables``),
``SHIFT``/``MASK``/``_base`` (the ordinals).
"""

# The hot lookups compare with ``if hit < best`` rather than ``min()``: a call per probe is
# measurable at a microsecond per entry.
# ruff: noqa: PLR1730

from __future__ import annotations

from zbtools.core.search.layers import TOP_RANK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from zbtools.core.search.ignore import IgnoreRules
    from zbtools.core.search.layers import Layer

    Decide = Callable[[str], "bool | None"]
    Pair = tuple[Decide | None, Decide | None]

# A rule's ordinal: ``(base << SHIFT) | (MASK - line index)``, its layer's ``base`` from the
# layer's kind (rank) and place in the tuple (``_base``): the same in every tuple that holds the
# layer (a directory's tuple is its parent's and its own files), so each layer's ordinals are
# computed once. An ignore file is at most 1 MiB (fewer than 2**32 lines); a walk holds at most
# a few ignore files per level of MAX_DEPTH (fewer than 2**16 layers).
SHIFT = 32
MASK = (1 << SHIFT) - 1
POSITIONS = 0xFFFF
NONE = 1 << 62  # no rule matched (larger than any ordinal)
# Tuples of layers whose tables are kept: the walk is depth-first, so the ones in use are those
# of the directories being listed (their tables copy the outer files' names: a bound on memory)
KEPT = 64
MERGED = 32  # a layer with more names and suffixes keeps its own tables (see Tables)


def _base(rank: int, position: int) -> int:
    """The high bits of a layer's ordinals: a higher rank first, then a later (inner) file."""
    return ((TOP_RANK - rank) << 16) | (POSITIONS - min(position, POSITIONS))



def _precedence(layers: Sequence[Layer], dir_slash: str) -> list[tuple[int, IgnoreRules, str]]:
    """The layers that apply in the directory ``dir_slash`` ("" or "a/b/"), in the order
    ``layered_decision`` lets them decide (highest rank, then innermost): each as its
    ``_base``, its rules and the directory's path as its rules see it."""
    from zbtools.core.search.layers import OuterRules

    found: list[tuple[int, IgnoreRules, str]] = []
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
            found.append((_base(rules.rank, position), rules.rules, path[len(rules.prefix):]))
        else:
            found.append((_base(rules.rank, position), rules, sub))
    found.sort(key=lambda item: item[0])
    return found


class _LayerTables:
    """One layer's rules that decide by name, for files or for directories, as ordinals."""

    __slots__ = ("big", "group", "lengths", "names", "regex", "rules", "stars", "suffixes")

    def __init__(self, rules: IgnoreRules, base: int, dirs: bool) -> None:
        self.rules = rules  # held: kept by its id
        buckets = rules.dirs if dirs else rules.files
        top = base << SHIFT
        self.names = {name: top | (MASK - index) for name, index in buckets.names.items()}
        self.suffixes = {s: top | (MASK - index) for s, index in buckets.suffixes.items()}
        self.lengths = frozenset(buckets.suffix_lengths)
        self.big = len(self.names) + len(self.suffixes) > MERGED
        self.group = (self.names, self.suffixes, tuple(buckets.suffix_lengths),
                      tuple(self.suffixes))
        self.stars = [(top | (MASK - index), parts) for index, parts in buckets.stars]
        alt = buckets.base_regex
        self.regex: tuple[int, Any, list[int]] | None = \
            (top, alt.regex, alt.groups) if alt is not None else None


class Tables:
    """The name tables of some layers, for files or for directories: what decides an entry
    whatever its directory (plain names, ``*suffix`` rules, unanchored globs). The layers with
    few such rules are merged into one group; a layer with many stays a group of its own, its
    tables shared, not copied, by every tuple of layers that holds it (an ignore file in every
    directory would otherwise copy the outer files' rules into each)."""

    __slots__ = ("groups", "negated", "regexes", "star_match", "stars")

    def __init__(self, layers: list[_LayerTables], negated: dict[int, list[bool]]) -> None:
        """``layers`` in precedence order (the first decides first)."""
        from zbtools.core.search.ignore import star_match  # loaded: its rules are here

        self.star_match = star_match
        # (names, suffixes, suffix lengths ascending, the suffixes as a tuple for endswith)
        self.groups: list[tuple[dict[str, int], dict[str, int], tuple[int, ...],
                                tuple[str, ...]]] = []
        # unanchored globs of ``*`` and plain characters: (ordinal, parts), smallest first
        self.stars: list[tuple[int, tuple[str, ...]]] = []
        # (the layer's first ordinal, its regex of unanchored globs, group -> line index)
        self.regexes: list[tuple[int, Any, list[int]]] = []
        self.negated = negated  # ordinal >> SHIFT -> the layer's negations by line
        names: dict[str, int] = {}
        suffixes: dict[str, int] = {}
        lengths: set[int] = set()
        for layer in reversed(layers):  # the last update of a key is the one deciding first
            if layer.big:
                self.groups.append(layer.group)
            elif layer.names or layer.suffixes:
                names.update(layer.names)
                suffixes.update(layer.suffixes)
                lengths.update(layer.lengths)
            self.stars += layer.stars
            if layer.regex is not None:
                self.regexes.append(layer.regex)
        if names or suffixes:
            self.groups.append((names, suffixes, tuple(sorted(lengths)), tuple(suffixes)))
        self.stars.sort()
        self.regexes.reverse()

    def best(self, name: str) -> int:
        """The smallest ordinal of a rule matching ``name`` (``NONE`` for none)."""
        best = NONE
        for names, suffixes, lengths, ends in self.groups:
            hit = names.get(name, NONE)
            if hit < best:
                best = hit
            if lengths and name.endswith(ends):  # one C call for the names none fits
                size = len(name)
                for length in lengths:
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
        return not (self.groups or self.stars or self.regexes)


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

    __slots__ = ("dir_slash", "dirs", "every", "files", "layers", "local", "ordered", "shared")

    def __init__(self, layers: tuple[Layer, ...], dir_slash: str,
                 per_layer: Callable[[IgnoreRules, int, bool], _LayerTables]) -> None:
        self.layers = layers  # held: the cache is keyed by its id
        self.dir_slash = dir_slash
        self.ordered = _precedence(layers, dir_slash)
        self.every = len(self.ordered) == len(layers)
        negated = {base: rules.negated for base, rules, _ in self.ordered}
        self.files = Tables([per_layer(r, b, False) for b, r, _ in self.ordered], negated)
        self.dirs = Tables([per_layer(r, b, True) for b, r, _ in self.ordered], negated)
        # whether some rule depends on the directory (anchored): then each one gets its own
        self.local = any(b.paths or b.path_regex_by_top or b.path_regex is not None
                         for _, rules, _ in self.ordered for b in (rules.files, rules.dirs))
        self.shared: Pair = (None if self.files.empty else self.files.decide,
                             None if self.dirs.empty else self.dirs.decide)

    def here(self, dir_slash: str) -> Pair:
        rest = dir_slash[len(self.dir_slash):]
        made: list[Decide | None] = []
        for dirs, tables in ((False, self.files), (True, self.dirs)):
            one: _Here | None = None
            for base, rules, first_sub in self.ordered:
                buckets = rules.dirs if dirs else rules.files
                sub = first_sub + rest
                top = base << SHIFT
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
        # each layer's ordinals, by (id of its rules, base, for directories)
        self._layers: dict[tuple[int, int, bool], _LayerTables] = {}

    def _layer(self, rules: IgnoreRules, base: int, dirs: bool) -> _LayerTables:
        key = (id(rules), base, dirs)
        got = self._layers.get(key)
        if got is None or got.rules is not rules:
            got = self._layers[key] = _LayerTables(rules, base, dirs)
        return got

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
            kept = self._kept[id(layers)] = _Kept(layers, dir_slash, self._layer)
        return kept.here(dir_slash) if kept.local else kept.shared
