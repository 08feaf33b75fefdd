"""The ignore files a walk reads, and which of their rules decides.

Ignore files have git's syntax, compiled by ``ignore.py`` (imported only when an ignore file
exists): ``.git/info/exclude`` at the workspace root, then in every directory its
``.gitignore``, ``.ignore`` and ``.rgignore``, each applying to its own subtree. Which rule
decides is ripgrep's precedence (``layered_decision``): a ``.rgignore`` rule over an ``.ignore``
rule over a ``.gitignore`` rule over ``.git/info/exclude``, wherever each file lives, and among
files of one kind the deepest (with only ``.gitignore`` files, git's own precedence). A
workspace root inside a repository also gets the ignore files of the directories between the
repository's root and itself (``OuterRules``); they are read, never walked. Ignore files over
1 MiB are not read, nor those above the enclosing repository's root or git's global
``core.excludesFile``.

Map: ``RuleFiles`` (the files one walk reads: the start's ancestors', each directory's own,
and what the warm cache checks them by), ``layered_decision``/``ignored_by`` (the deciding
rule), ``OuterRules`` and ``repository_above`` (rules from above the root), ``read_small``.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.files.workspace import DIR_FLAGS, display_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.ignore import IgnoreRules

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # in increasing precedence
# Precedence between kinds of ignore file, as ripgrep's: a rule of a higher rank decides over any
# rule of a lower one, wherever either lives; within a rank the innermost file decides.
RANKS = {".git/info/exclude": 0, ".gitignore": 1, ".ignore": 2, ".rgignore": 3}
TOP_RANK = 3
IGNORE_FILE_LIMIT = 1024 * 1024
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK

# An ignore layer: (directory prefix relative to the root, "" or "a/b/", compiled rules).
Layer = tuple[str, "IgnoreRules | OuterRules"]
# What an ignore file read was: (where, its stat signature); a listing's cache check holds these
# for every ignore file that decided it.
Print = tuple[str, tuple[int, int, int, int, int] | None]


def read_small(dir_fd: int, name: str) -> tuple[str | None, os.stat_result | None]:
    """A regular file's text (``None`` if absent, not regular, unreadable or over 1 MiB), and
    its ``fstat`` when it could be opened."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > IGNORE_FILE_LIMIT:
            return None, st
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "replace"), st
    except OSError:
        return None, None
    finally:
        os.close(fd)


def compile_rules(text: str, rank: int) -> IgnoreRules:
    from zbtools.core.search.ignore import IgnoreRules

    return IgnoreRules.parse(text, rank)


class OuterRules:
    """One ignore file above a root, up to the enclosing repository's root: paths below the
    root are matched as that directory sees them (``above`` is the root's path from there,
    ``prefix`` the file's directory's)."""

    __slots__ = ("above", "prefix", "rank", "rules")

    def __init__(self, prefix: str, rules: IgnoreRules, above: str) -> None:
        self.prefix = prefix
        self.rules = rules
        self.above = above
        self.rank = rules.rank

    def decide(self, sub: str, name: str, is_dir: bool) -> bool | None:
        path = self.above + sub
        if self.prefix and not path.startswith(self.prefix):
            return None
        return self.rules.decide(path[len(self.prefix):], name, is_dir)


def repository_above(root: str) -> int | None:
    """How many components of ``root`` (a real path) the nearest ancestor holding ``.git``
    has, or None when ``root`` itself holds one (or no ancestor does)."""
    comps = [c for c in root.split("/") if c]
    for keep in range(len(comps), -1, -1):
        try:
            os.lstat("/" + "/".join([*comps[:keep], ".git"]))
        except OSError:
            continue
        return keep if keep < len(comps) else None
    return None


def layered_decision(layers: Sequence[Layer], path: str, name: str,
                     is_dir: bool) -> bool | None:
    """What the layers decide for ``path`` (base name ``name``): True ignored, False
    re-included, None no rule. The highest ``RANKS`` kind with a rule for it decides, and
    within a kind the innermost file (ripgrep's precedence: a root ``.ignore``'s ``*.log``
    beats a deeper ``.gitignore``'s ``!keep.log``)."""
    found: bool | None = None
    found_rank = -1
    for prefix, rules in reversed(layers):  # innermost first
        rank = rules.rank
        if rank <= found_rank or (prefix and not path.startswith(prefix)):
            continue
        decided = rules.decide(path[len(prefix):], name, is_dir)
        if decided is not None:
            if rank == TOP_RANK:
                return decided
            found, found_rank = decided, rank
    return found


def ignored_by(layers: Sequence[Layer], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` (relative to the root) is ignored: the innermost deciding rule wins."""
    return layered_decision(layers, rel, rel[rel.rfind("/") + 1:], is_dir) is True


class RuleFiles:
    """The ignore files one walk reads. ``now`` (the cache's clock; None without a cache)
    makes ``print`` record each file's stat signature for the cache's checks."""

    def __init__(self, workspace: Workspace, now: int | None) -> None:
        self.workspace = workspace
        self.now = now
        self.start_prints: list[Print] = []  # the ignore files above the start
        self.unsteady = False  # an ignore file read is too new to cache a listing by
        # an ignore file with other links: written through one elsewhere, it raises no event in
        # the directories watched, so a walk it decided is never recorded
        self.linked = False
        self.start_ignored = False  # the start (or a directory above it) is ignored

    def ancestor_layers(self, rel: str) -> tuple[Layer, ...]:
        """The ignore rules that apply at the start: info/exclude and every ancestor's files."""
        # the root the walk is in; base: "" in the primary root, the root's path in another
        root_fd, base, parts = self.workspace.root_of(rel)
        layers: list[Layer] = []
        outer = self.outer_rules(base or self.workspace.root)
        if outer is not None:
            layers.extend((base.rstrip("/") + "/" if base else "", one) for one in outer)
        exclude, st = self.read_path(root_fd, [".git", "info", "exclude"])
        self.start_prints.append(self.print(".git/info/exclude", st))
        if exclude:
            layers.append((base.rstrip("/") + "/" if base else "",
                           compile_rules(exclude, RANKS[".git/info/exclude"])))
        fd = os.dup(root_fd)
        try:
            for i in range(len(parts)):
                layers.extend(self.own_layers(fd, display_path(base, parts[:i]),
                                               prints=self.start_prints))
                nxt = os.open(parts[i], DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
        except OSError:
            pass  # changed under us: the walk itself will meet the same problem
        finally:
            os.close(fd)
        # named explicitly, an ignored start is listed all the same; its entries are judged
        # by every rule, as rg judges them below a path it is given
        self.start_ignored = bool(parts) and any(
            ignored_by(layers, display_path(base, parts[:i]), True)
            for i in range(1, len(parts) + 1))
        return tuple(layers)

    def outer_rules(self, root: str) -> list[OuterRules] | None:
        """The ignore files of the directories above ``root`` up to the enclosing repository's
        root (its ``.git/info/exclude``, then each directory's ``.gitignore``, ``.ignore`` and
        ``.rgignore``), outermost first, as rg and fd read them; None when there are none, when
        ``root`` is not inside a repository or is one, or when they ignore ``root`` itself (a
        workspace opened in an ignored directory is listed, as a start named explicitly is)."""
        top = repository_above(root)
        if top is None:
            return None
        comps = [c for c in root.split("/") if c]
        raw: list[tuple[str, IgnoreRules]] = []
        for depth in range(top, len(comps)):
            where = "/" + "/".join(comps[:depth])
            try:
                fd = os.open(where, DIR_FLAGS)
            except OSError:
                return None
            try:
                prefix = "/".join(comps[top:depth])
                if depth == top:
                    text, st = self.read_path(fd, [".git", "info", "exclude"])
                    self.start_prints.append(self.print(where + "/.git/info/exclude", st))
                    if text:
                        raw.append(("", compile_rules(text, RANKS[".git/info/exclude"])))
                for name in IGNORE_FILES:
                    text, st = read_small(fd, name)
                    self.start_prints.append(self.print(f"{where}/{name}", st))
                    if text:
                        raw.append((prefix + "/" if prefix else "",
                                    compile_rules(text, RANKS[name])))
            finally:
                os.close(fd)
        if not raw or any(ignored_by(raw, "/".join(comps[top:k]), True)
                          for k in range(top + 1, len(comps) + 1)):
            return None
        above = "/".join(comps[top:]) + "/"
        return [OuterRules(prefix, rules, above) for prefix, rules in raw]

    @staticmethod
    def read_path(root_fd: int, parts: list[str]) -> tuple[str | None, os.stat_result | None]:
        fd = os.dup(root_fd)
        try:
            for comp in parts[:-1]:
                nxt = os.open(comp, DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return read_small(fd, parts[-1])
        except OSError:
            return None, None
        finally:
            os.close(fd)

    def print(self, where: str, st: os.stat_result | None) -> Print:
        """An ignore file's part of a cache check; notes a file too new to cache by."""
        if self.now is None:
            return (where, None)
        from zbtools.core.search.cache import settled, signature

        if st is not None and not settled(st, self.now):
            self.unsteady = True
        return (where, signature(st) if st is not None else None)

    def own_layers(self, fd: int, rel: str, names: frozenset[str] | None = None,
                    prints: list[Print] | None = None) -> list[Layer]:
        prefix = "" if rel in ("", ".") else rel + "/"
        out: list[Layer] = []
        for name in IGNORE_FILES:
            if names is not None and name not in names:
                continue
            text, st = read_small(fd, name)
            if st is not None and st.st_nlink > 1:
                self.linked = True
            if prints is not None and (names is not None or st is not None):
                prints.append(self.print(prefix + name, st))
            rules = compile_rules(text, RANKS[name]) if text else None
            if rules:
                out.append((prefix, rules))
        return out

