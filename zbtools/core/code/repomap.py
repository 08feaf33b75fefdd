"""A repository map: the definitions of many files, the most referenced first, within a budget.

Ranking (docs/internals/code.md#repository-map): a definition's score is the number of *other*
files that reference its name (a file counts once however often it names it), divided by the
number of files that define that name (a name defined in many files, ``run`` or ``__init__``,
says little about which one a reference means), times aider's name weights (a long
``snake_case`` or ``camelCase`` name x10, a ``_private`` one x0.1). This is aider's idea of
ranking by references with plain counts instead of a PageRank over the file graph: the same
order on the definitions that matter, computed in one pass, so a session recomputes it after
every change. Definitions nobody references follow, shallowest first. The map takes definitions
in that order while they fit the budget; a nested definition brings its enclosing ones (a method
shows its class), and each file a header line. What is left out is counted.

The map is rendered as text (``path:``, then one line per definition, indented by nesting: ``12:
def name(args)``); its size in lines and estimated tokens is what the budget limits. A line's
tokens are estimated as its characters (with the line break) divided by 4, rounded up: the usual
rule for code under byte-pair tokenizers, exact enough for a budget.

Map: ``rank`` (every definition, in order: a ``Ranking``, which ``cut`` makes small enough to
keep), ``within_budget`` (a ``RepoMap`` of ``MapFile`` within a budget), ``build_map`` (both),
``line_tokens``, ``def_line``, ``render_map``.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.code.tagpool import DefTuple, Tags


def line_tokens(line: str) -> int:
    """The estimated tokens of one line of the map (with its line break)."""
    return (len(line) + 4) // 4


def def_line(d: DefTuple) -> str:
    label = d[7] or f"{d[0]} {d[1]}"
    return f"{'  ' * (d[4] + 1)}{d[5]}: {label}"


class MapFile:
    """One file of the map: its path, language and the definitions shown (file order), each
    with its score."""

    __slots__ = ("definitions", "language", "path", "rank", "scores")

    def __init__(self, path: str, language: str) -> None:
        self.path = path
        self.language = language
        self.definitions: list[DefTuple] = []
        self.scores: list[float] = []
        self.rank = 0.0  # the best score shown: files are listed by it


class RepoMap:
    __slots__ = ("definitions_shown", "definitions_total", "files", "files_total", "lines",
                 "tokens", "truncated")

    def __init__(self) -> None:
        self.files: list[MapFile] = []
        self.files_total = 0  # files with definitions
        self.definitions_total = 0
        self.definitions_shown = 0
        self.lines = 0
        self.tokens = 0
        self.truncated = False


class Ranking:
    """Definitions in the order the map takes them: ``order`` holds (file, definition, score)
    indexes into ``files``. A ranking ``cut`` to its first candidates (``complete`` false) keeps
    only the files and definitions they need (enclosing ones included), small enough to keep on
    disk; a budget it cannot fill needs the whole ranking again."""

    __slots__ = ("complete", "definitions_total", "files", "files_total", "order")

    def __init__(self, files: list[tuple[str, Tags]], order: list[tuple[int, int, float]],
                 complete: bool, files_total: int, definitions_total: int) -> None:
        self.files = files
        self.order = order
        self.complete = complete
        self.files_total = files_total
        self.definitions_total = definitions_total

    def cut(self, size: int) -> Ranking:
        """The first ``size`` candidates, with what they need of their files."""
        if len(self.order) <= size:
            return self
        keep: dict[int, set[int]] = {}
        parents: dict[int, list[int]] = {}
        for f, i, _ in self.order[:size]:
            wanted = keep.setdefault(f, set())
            up = parents.get(f)
            if up is None:
                up = parents[f] = _parents(self.files[f][1][1])
            j = i
            while j >= 0 and j not in wanted:  # with its enclosing definitions
                wanted.add(j)
                j = up[j]
        new_file: dict[int, int] = {}
        new_def: dict[tuple[int, int], int] = {}
        files: list[tuple[str, Tags]] = []
        for f in sorted(keep):
            path, tags = self.files[f]
            kept = sorted(keep[f])
            new_file[f] = len(files)
            for n, i in enumerate(kept):
                new_def[f, i] = n
            files.append((path, (tags[0], tuple(tags[1][i] for i in kept), (), tags[3])))
        order = [(new_file[f], new_def[f, i], score) for f, i, score in self.order[:size]]
        return Ranking(files, order, False, self.files_total, self.definitions_total)

    def to_data(self) -> tuple[object, ...]:
        return (self.files, self.order, self.complete, self.files_total,
                self.definitions_total)

    @classmethod
    def from_data(cls, data: object) -> Ranking | None:
        """A ranking ``to_data`` made; None for anything else (every index is checked, so a
        damaged one is refused here rather than failing a map)."""
        if not (type(data) is tuple and len(data) == 5 and type(data[0]) is list
                and type(data[1]) is list and type(data[2]) is bool
                and type(data[3]) is int and type(data[4]) is int):
            return None
        files, order = data[0], data[1]
        sizes = []
        for item in files:
            if not (type(item) is tuple and len(item) == 2 and type(item[0]) is str
                    and type(item[1]) is tuple and len(item[1]) == 4
                    and type(item[1][0]) is str and type(item[1][1]) is tuple
                    and all(type(d) is tuple and len(d) == 8 for d in item[1][1])):
                return None
            sizes.append(len(item[1][1]))
        for item in order:
            if not (type(item) is tuple and len(item) == 3 and type(item[0]) is int
                    and 0 <= item[0] < len(sizes) and type(item[1]) is int
                    and 0 <= item[1] < sizes[item[0]]):
                return None
        return cls(*data)


def _parents(defs: tuple[DefTuple, ...]) -> list[int]:
    """Each definition's enclosing definition (its index), -1 at the top: definitions come in
    file order, each right after the ones enclosing it."""
    parents = []
    stack: list[int] = []
    for i, d in enumerate(defs):
        while stack and (defs[stack[-1]][4] >= d[4] or defs[stack[-1]][6] < d[5]):
            stack.pop()
        parents.append(stack[-1] if stack and d[4] > 0 else -1)
        stack.append(i)
    return parents


def _weight(name: str) -> float:
    """Aider's weights: a long snake_case or camelCase name is specific (x10), a private one
    (``_name``) is seldom what a reader of the map wants (x0.1); ``join`` or ``get`` are
    referenced everywhere through other types' methods of the same name."""
    weight = 1.0
    if len(name) >= 8 and (("_" in name.strip("_") and any(c.isalpha() for c in name))
                           or (any(c.isupper() for c in name[1:])
                               and any(c.islower() for c in name))):
        weight = 10.0
    if name.startswith("_"):
        weight *= 0.1
    return weight


def rank(files: list[tuple[str, Tags]]) -> Ranking:
    """Every definition of ``files`` (path and record, in walk order), in the map's order."""
    referencing = Counter(chain.from_iterable(tags[2] for _, tags in files))
    files = [item for item in files if item[1][1]]
    defined_in = Counter(chain.from_iterable({d[1] for d in tags[1]} for _, tags in files))
    ranked: list[tuple[float, int, int, int]] = []  # (-score, depth, file, def)
    unreferenced: list[tuple[int, int, int, float]] = []
    total = 0
    get = referencing.get
    for f, (_, tags) in enumerate(files):
        own = tags[2]
        own_set = frozenset(own) if len(own) > 8 else own
        for i, d in enumerate(tags[1]):
            name = d[1]
            count = get(name, 0)
            if count and name in own_set:
                count -= 1
            if count:
                ranked.append((-count * _weight(name) / defined_in[name], d[4], f, i))
            else:
                unreferenced.append((d[4], f, i, 0.0))
        total += len(tags[1])
    ranked.sort()
    unreferenced.sort()
    order = [(f, i, -neg) for neg, _, f, i in ranked]
    order.extend((f, i, score) for _, f, i, score in unreferenced)
    return Ranking(files, order, True, len(files), total)


# candidates tried in a row without one fitting: the budget is as good as full
MISFITS = 256


def within_budget(ranking: Ranking, max_lines: int, max_tokens: int) -> RepoMap | None:
    """The map within the budget; None when a cut ranking runs out before the budget does."""
    result = RepoMap()
    result.files_total = ranking.files_total
    result.definitions_total = ranking.definitions_total
    files = ranking.files
    shown: dict[int, dict[int, float]] = {}  # file -> def -> score
    scores: dict[tuple[int, int], float] = {}
    parents: dict[int, list[int]] = {}
    lines = tokens = misfits = 0
    exhausted = True
    for f, i, score in ranking.order:
        scores[f, i] = score
        if lines >= max_lines or tokens >= max_tokens or misfits >= MISFITS:
            exhausted = False
            break
        chosen = shown.get(f)
        if chosen is not None and i in chosen:
            chosen[i] = score  # shown already, as the parent of another
            continue
        defs = files[f][1][1]
        wanted = [i]
        if defs[i][4] > 0:
            up = parents.get(f)
            if up is None:
                up = parents[f] = _parents(defs)
            p = up[i]
            while p >= 0 and (chosen is None or p not in chosen):
                wanted.append(p)
                p = up[p]
        need_lines = len(wanted) + (chosen is None)
        need_tokens = sum(line_tokens(def_line(defs[j])) for j in wanted)
        if chosen is None:
            need_tokens += line_tokens(files[f][0] + ":")
        if lines + need_lines > max_lines or tokens + need_tokens > max_tokens:
            misfits += 1
            continue  # a smaller one further down may still fit
        misfits = 0
        if chosen is None:
            chosen = shown[f] = {}
        for j in wanted:
            chosen[j] = scores.get((f, j), 0.0)
        lines += need_lines
        tokens += need_tokens
    if exhausted and not ranking.complete:
        return None
    for f in sorted(shown):
        path, tags = files[f]
        entry = MapFile(path, tags[0])
        for i in sorted(shown[f]):
            entry.definitions.append(tags[1][i])
            entry.scores.append(shown[f][i])
        entry.rank = max(entry.scores)
        result.files.append(entry)
        result.definitions_shown += len(entry.definitions)
    result.files.sort(key=lambda m: -m.rank)  # stable: walk order among equals
    result.lines = lines
    result.tokens = tokens
    result.truncated = result.definitions_shown < result.definitions_total
    return result


def build_map(files: list[tuple[str, Tags]], max_lines: int, max_tokens: int) -> RepoMap:
    """The map of ``files`` (path and record, in walk order) within the budget."""
    found = within_budget(rank(files), max_lines, max_tokens)
    assert found is not None  # a complete ranking
    return found


def render_map(files: list[MapFile]) -> list[str]:
    """The map's text lines."""
    out = []
    for entry in files:
        out.append(entry.path + ":")
        out.extend(def_line(d) for d in entry.definitions)
    return out
