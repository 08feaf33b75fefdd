"""Find files by glob pattern (``**/*.py``, ``src/**/*.{ts,tsx}``), newest first or by path.

``pattern`` is matched against each path relative to ``path`` (default ``.``, the workspace root;
aliases ``dir``, ``directory``): ``*`` and ``?`` stay within one directory, ``**`` spans any
number of directories (zero included), ``[abc]`` is a character class and ``{a,b}`` alternatives.
**A pattern without ``/`` matches at any depth**, like ripgrep's ``-g``: ``*.py`` is taken as
``**/*.py`` (use ``./*.py`` for the top level only). A pattern with ``/`` is anchored at ``path``:
``src/**/*.tsx``. Matching is case-insensitive unless ``case_sensitive``. ``sort`` is ``path``
(default: tree order, a directory's contents right after it, siblings by name) or ``mtime``
(newest first, as Claude's Glob). ``type`` chooses ``file`` (default: anything but a
directory), ``directory`` or ``any``; a pattern ending in ``/`` means directories. Each match
has ``path`` (relative to the workspace root), ``type``, ``size`` and ``modified``; ``patterns``
shows the patterns actually matched.

Hidden entries, entries matched by ``.gitignore``/``.ignore``/``.rgignore``/ ``.git/info/exclude``
and the default excluded directories (``.git``, ``node_modules``, ``target``, ``__pycache__``,
``vendor``, ``.venv``...) are not searched but counted in ``skipped``; ``include_hidden``,
``include_ignored`` and ``exclude_dirs`` (replacing the default list; ``[]`` excludes nothing) bring
them back. A pattern that names them opts them in: a segment starting with ``.`` matches hidden
names (``.github/**/*.yml``, ``**/.env``), and a literal segment naming an excluded directory enters
it (``node_modules/react/**/*.js``). Ignored files need ``include_ignored``. Symlinks are matched by
their own path and never followed. A literal leading directory (``src/**/*.ts``) is where the search
starts, so the rest of the tree is neither walked nor counted in ``skipped``.

Limits and failure modes: at most ``limit`` matches (default 100, at most 10000, ``0`` for no
cap; ``truncated`` tells); at most 200000 entries are examined (``scan_limited`` tells). Errors:
``invalid_arguments`` for a pattern that is empty, absolute, has a ``..`` segment, is over 1000
characters or expands to more than 1000 alternatives; ``not_found``, ``not_a_directory``,
``outside_workspace`` for ``path``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import (
    DEFAULT_EXCLUDED_DIRS,
    MAX_DEPTH,
    Skipped,
    WalkSwitches,
    derived,
)
from zbtools.core.search.walk import Walk
from zbtools.toolkit.finding import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_PATTERN,
    NO_CAP,
    SCAN_CAP,
    Match,
    found,
    loop_warning,
    match_paths,
    path_match,
    render_matches,
    to_match,
)
from zbtools.toolkit.params import SEARCH_DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    from zbtools.core.call.context import Context
    from zbtools.core.search.entries import Entry as WalkEntry
    from zbtools.core.search.globs import PathFilter

MAX_ALTERNATIVES = 1000
MAGIC = frozenset("*?[\\")


class Params(WalkSwitches):
    pattern: str = field(aliases=("glob",),
                         help="Glob relative to `path`: '**/*.py', 'src/**/*.{ts,tsx}'. Without "
                         "'/' it matches at any depth ('*.md' = '**/*.md')")
    path: str = field(default=".", aliases=SEARCH_DIR_ALIASES,
                      help="Directory to search, relative to the workspace root")
    case_sensitive: bool = field(default=False, help="Match letter case exactly")
    sort: Literal["path", "mtime"] = field(
        default="path", help="path (tree order) or mtime (most recently modified first)")
    type: Literal["file", "directory", "any"] = field(
        default="file", help="file (anything but a directory), directory, or any")
    limit: int = field(default=DEFAULT_LIMIT, minimum=0, maximum=MAX_LIMIT,
                       help="Most matches to return (at most 10000; 0: no cap)")
    exclude: list[str] | None = field(
        default=None, aliases=("exclude_patterns",),
        help="Globs of matches to leave out, e.g. ['*.log', '*.backup', 'build/**']: without "
        "'/' a glob tests the base name, with '/' the path relative to `path`")
    include_hidden: bool = field(default=False,
                                 help="Also search names starting with '.' (a pattern segment "
                                 "starting with '.' opts them in anyway)")


class Result(Struct):
    path: str = field(help="The directory searched, relative to the workspace root")
    patterns: list[str] = field(help="The patterns matched, after brace expansion and the "
                                "'no slash: any depth' rule")
    matches: list[Match] = field(help="The matches, in the requested order")
    count: int = field(help="Number of matches returned")
    truncated: bool = field(help="More matches exist than limit allowed")
    scan_limited: bool = field(help="The search stopped after 200000 entries: more matches "
                               "may exist")
    skipped: Skipped = field(help="What was not searched, by kind (hidden, ignored...); hidden "
                             "also counts hidden paths left out that the pattern would match")


def _invalid(pattern: str, why: str, hint: str) -> ToolError:
    return ToolError("invalid_arguments", f"invalid pattern {pattern!r}: {why}", hint=hint,
                     details={"pattern": pattern})


def expand(pattern: str) -> tuple[list[str], bool]:
    """The patterns to match (braces expanded, validated, normalized) and "directories only"."""
    raw = pattern.strip()
    if not raw or len(raw) > MAX_PATTERN or "\0" in raw:
        raise _invalid(pattern, "must be 1 to 1000 characters", "e.g. '**/*.py' or 'src/*.ts'")
    if raw.startswith(("/", "\\", "~")) or (len(raw) > 1 and raw[1] == ":" and raw[0].isalpha()):
        raise _invalid(pattern, "absolute patterns are not allowed",
                       "make the pattern relative and put the directory in path, e.g. "
                       "{\"path\": \"src\", \"pattern\": \"**/*.py\"}")
    if "{" not in raw:  # nothing to expand: bracex (and re) stay unimported
        alternatives = [raw]
    else:
        import bracex

        try:
            alternatives = bracex.expand(raw, keep_escapes=True, limit=MAX_ALTERNATIVES)
        except bracex.ExpansionLimitException as exc:
            raise _invalid(pattern, f"braces expand to more than {MAX_ALTERNATIVES} patterns",
                           "use fewer or smaller {a,b} groups and ranges") from exc
    dirs_only = raw.endswith("/")
    out: list[str] = []
    for alt in alternatives:
        anchored = "/" in alt.rstrip("/")
        segments = [s for s in alt.split("/") if s not in ("", ".")]
        if ".." in segments:
            raise _invalid(pattern, "'..' segments are not allowed",
                           "search a parent directory by setting path instead")
        if alt.startswith(("/", "\\", "~")):
            raise _invalid(pattern, "absolute patterns are not allowed",
                           "make the pattern relative and put the directory in path")
        if not segments:
            continue
        if not anchored and not alt.startswith("./") and segments[0] != "**":
            segments.insert(0, "**")
        joined = "/".join(segments)
        if joined not in out:
            out.append(joined)
    if not out:
        raise _invalid(pattern, "matches nothing", "e.g. '**/*.py' or 'src/*.ts'")
    return out, dirs_only


def _compile(original: str, patterns: list[str], case_sensitive: bool,
             dotglob: bool) -> Callable[[str], bool]:
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.FORCEUNIX
    if dotglob:
        flags |= glob.DOTGLOB
    if not case_sensitive:
        flags |= glob.IGNORECASE
    try:
        matcher = glob.compile(patterns, flags=flags, limit=MAX_ALTERNATIVES)
    except Exception as exc:  # wcmatch's PatternLimitException, or a pattern it cannot read
        raise _invalid(original, str(exc), "simplify the pattern") from exc
    return matcher.match


def base_name_matcher(patterns: list[str], case_sensitive: bool,
                      slow: Callable[[], Callable[[str], bool]]) -> Callable[[str], bool] | None:
    """A matcher for the common shapes, testing the base name only, without wcmatch: every
    pattern is ``**/NAME``, ``**/*SUFFIX`` or ``**/PREFIX*`` with ASCII letters and no other
    glob syntax (``**/*.py``, ``**/*.{ts,tsx}``, ``**/Makefile``). None for any other shape.

    Exact for what the walk yields when no pattern segment names a hidden entry: the walk
    yields no hidden entry but those an ignore file re-includes, or every one with
    ``include_hidden``, and ``*`` and ``**`` match leading dots then (wcmatch's DOTGLOB), so
    ``**/`` matches every directory chain the walk yields. Letter case
    is folded for ASCII names only; a name with other characters (whose Unicode case folding
    may meet an ASCII letter, like the Kelvin sign and ``k``) is left to ``slow()``.
    """
    names: set[str] = set()
    suffixes: list[str] = []
    prefixes: list[str] = []
    for pattern in patterns:
        head, _, seg = pattern.rpartition("/")
        if head != "**" or not seg.isascii() or seg.startswith("."):
            return None
        star = seg.count("*")
        if MAGIC.intersection(seg.replace("*", "")) or "{" in seg or "]" in seg or star > 1:
            return None
        fold = seg if case_sensitive else seg.lower()
        if star == 0:
            names.add(fold)
        elif seg.startswith("*"):
            suffixes.append(fold[1:])
        elif seg.endswith("*"):
            prefixes.append(fold[:-1])
        else:
            return None
    ends, starts = tuple(suffixes), tuple(prefixes)
    fallback: list[Callable[[str], bool]] = []

    def match(rel: str) -> bool:
        name = rel.rpartition("/")[2]
        if not name.isascii():
            if not fallback:
                fallback.append(slow())
            return fallback[0](rel)
        if not case_sensitive:
            name = name.lower()
        return name in names or (bool(ends) and name.endswith(ends)) or (
            bool(starts) and name.startswith(starts))

    return match


def literal_prefix(patterns: list[str]) -> list[str]:
    """The leading directory names every pattern spells out literally (``src/lib/**/*.ts`` ->
    ``["src", "lib"]``): the walk can start there instead of at ``path``."""
    common: list[str] | None = None
    for pattern in patterns:
        segments = pattern.split("/")[:-1]
        literal: list[str] = []
        for segment in segments:
            if MAGIC.intersection(segment) or "{" in segment:
                break
            literal.append(segment)
        if common is None:
            common = literal
        else:
            n = 0
            while n < min(len(common), len(literal)) and common[n] == literal[n]:
                n += 1
            common = common[:n]
        if not common:
            return []
    return common or []


def _unambiguous(root: str, base: str, prefix: list[str]) -> list[str]:
    """The part of ``prefix`` that names, ignoring case, exactly one entry spelt that way
    (``src`` when there is no ``SRC`` beside it). Only a hint for where to start: the walk
    itself resolves the start safely."""
    import os

    here = root if base == "." else os.path.join(root, base)
    kept: list[str] = []
    for segment in prefix:
        if segment.lower() != segment.upper():
            try:
                names = os.listdir(here)
            except OSError:
                break
            folded = segment.casefold()
            if [n for n in names if n.casefold() == folded] != [segment]:
                break
        kept.append(segment)
        here = os.path.join(here, segment)
    return kept


def _start_below_prefix(open_walk: Callable[[str, int], Walk], root: str, path: str,
                        patterns: list[str], depth: int, include_ignored: bool,
                        case_sensitive: bool) -> tuple[Walk | None, str, bool]:
    """(a walk of ``path``/prefix, the rel of ``path``, whether the prefix is missing) when
    that walk answers exactly what a walk of ``path`` would: the prefix is real directories
    (no symlink, which the full walk would not follow) and not ignored. (None, "", False)
    otherwise. ``path`` itself is validated either way."""
    prefix = literal_prefix(patterns)
    if not prefix:
        return None, "", False
    base_walk = open_walk(path, 0)
    base = base_walk.rel
    base_walk.close()
    if not case_sensitive:
        prefix = _unambiguous(root, base, prefix)
        if not prefix:
            return None, "", False
    start = "/".join(prefix) if base == "." else base + "/" + "/".join(prefix)
    try:
        walk = open_walk(start, depth if depth == MAX_DEPTH else max(depth - len(prefix), 0))
    except ToolError as exc:
        if exc.code in ("not_found", "not_a_directory"):
            return None, base, True
        return None, "", False  # an escaping symlink, a loop...: the full walk reports it
    if walk.rel != start or (walk.start_ignored and not include_ignored):
        walk.close()
        return None, "", False
    return walk, base, False


def run(params: Params, ctx: Context) -> Result:
    patterns, dirs_only = expand(params.pattern)
    segments = [s for p in patterns for s in p.split("/")]
    names_hidden = any(s.startswith(".") for s in segments)
    depth = MAX_DEPTH if "**" in segments else max(p.count("/") + 1 for p in patterns)
    exclude = list(DEFAULT_EXCLUDED_DIRS if params.exclude_dirs is None else params.exclude_dirs)
    named = {s for s in segments if not MAGIC.intersection(s)}
    exclude = [d for d in exclude if d not in named]
    def full_matcher() -> Callable[[str], bool]:
        # without a hidden segment in the pattern the walk alone decides which hidden entries
        # come (none, or those an ignore file re-includes, or all with include_hidden): the
        # pattern's * and ** then match their leading dots
        return _compile(params.pattern, patterns, params.case_sensitive,
                        params.include_hidden or not names_hidden)

    fast = None if names_hidden else base_name_matcher(patterns, params.case_sensitive,
                                                        full_matcher)
    match = fast if fast is not None else full_matcher()
    # Hidden names are walked only when a segment names them; the matcher (without DOTGLOB)
    # then keeps just the paths whose hidden components the pattern spells out.
    hidden_check = None if params.include_hidden or not names_hidden else \
        _compile(params.pattern, patterns, params.case_sensitive, True)
    want = "directory" if dirs_only else params.type
    excluded = None
    if params.exclude:
        from zbtools.core.search.globs import PathFilter, split_globs

        excluded = PathFilter(["!" + g for p in params.exclude for g in split_globs(p)], [])

    def open_walk(start: str, max_depth: int) -> Walk:
        return Walk(ctx.workspace, start, max_depth=max_depth, max_entries=SCAN_CAP,
                    include_hidden=params.include_hidden or names_hidden,
                    include_ignored=params.include_ignored, exclude_dirs=exclude,
                    with_stat=False, cache=ctx.search_cache)

    # A literal leading directory (src/**/*.ts) is where the walk starts: the rest of the tree
    # cannot match.
    prefixed, base, missing = _start_below_prefix(
        open_walk, ctx.workspace.root, params.path, patterns, depth, params.include_ignored,
        params.case_sensitive)
    if missing:
        return Result(path=base, patterns=patterns, matches=[], count=0, truncated=False,
                      scan_limited=False, skipped=Skipped())
    walk = prefixed or open_walk(params.path, depth)
    if prefixed is None:
        base = walk.rel
    cut = 0 if base == "." else len(base) + 1
    by_path = params.sort == "path"
    limit = params.limit or NO_CAP
    # what this call picks from the walk depends only on the walk's entries and these: a
    # session that replays the same walk reuses the pick (then only sizes and mtimes are news).
    # ``cut`` too: the patterns match paths relative to ``path``, and one walk serves several
    # (``path: a`` with ``a/**`` walks ``a`` when ``a/a`` is not there, as ``a/**`` from ``.``)
    memo_key = ("glob", tuple(patterns), params.case_sensitive, params.include_hidden, want,
                tuple(params.exclude or ()), limit if by_path else 0, cut)
    known = walk.memo(memo_key)
    stat = True
    made: dict[str, tuple[object, Match]] = {}  # each entry's match, while its stat holds
    if known is not None:
        picked, truncated, hidden_left_out, state, made = known
        walk.restore(state)
        for entry in picked:
            walk.refresh(entry)
        walk.close()
        found = list(picked)
    else:
        # the text rendering shows paths only: no stat where nothing else is kept or sorted by
        stat = not (ctx.text_only and by_path and walk.cache is None)
        found, truncated, hidden_left_out = _pick(walk, match, want, cut, excluded, hidden_check,
                                                  limit if by_path else None, stat)
        walk.keep_memo(memo_key, (tuple(found), truncated, hidden_left_out, walk.state(), made),
                       400 * len(found) + 200)
    if not by_path:
        found.sort(key=lambda e: (-e.mtime, e.rel))
        truncated = len(found) > limit
        del found[limit:]
    loop_warning(walk, ctx)
    skipped = walk.skipped
    skipped.hidden += hidden_left_out
    if walk.cache is not None:
        matches = [derived(made, entry, to_match) for entry in found]
    else:
        matches = [(to_match if stat else path_match)(entry) for entry in found]
    return Result(path=base, patterns=patterns, matches=matches, count=len(matches),
                  truncated=truncated, scan_limited=walk.truncated,
                  skipped=skipped)


def _pick(walk: Walk, match: Callable[[str], bool], want: str, cut: int,
          excluded: PathFilter | None, hidden_check: Callable[[str], bool] | None,
          limit: int | None, stat: bool = True) -> tuple[list[WalkEntry], bool, int]:
    """The walk's entries the pattern and filters accept, stat'ed (unless ``stat`` is False),
    in walk order, stopping after ``limit`` (None: all); whether more existed; hidden paths the
    pattern would match."""
    found: list[WalkEntry] = []
    truncated = False
    hidden_left_out = 0
    dirs = want == "directory"
    for entry in walk:
        if want != "any" and (entry.kind == "directory") != dirs:  # wanted_type, inline
            continue
        rel = entry.rel[cut:]
        if excluded is not None and not excluded.accepts(rel, entry.name):
            continue
        if not match(rel):
            if hidden_check is not None and hidden_check(rel):
                hidden_left_out += 1
            continue
        if limit is not None and len(found) >= limit:
            truncated = True
            break
        if stat:
            walk.stat(entry)
        found.append(entry)
    return found, truncated, hidden_left_out


def render(result: Result) -> str:
    return render_matches(result.matches, result.count, result.truncated, result.scan_limited,
                          result.skipped)


TOOL = ToolSpec(
    name="find_files_glob",
    aliases=("glob", "find"),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    operand=("pattern", "path"),
    exit_status=found,
    paths=match_paths,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)
