"""Which files a search reads: the caller's globs and file types, applied to the walk's files.

``split_globs`` reads a comma-separated glob list (braces expanded by ``expand_braces``, to at
most ``MAX_GLOBS`` globs); ``PathFilter`` holds the globs (``!`` excludes) and the globs of the
file types asked for (``filetypes``, as ``rg --type-list`` names them); ``files_to_search``
yields the regular files of a ``walk.Walk`` that the filter accepts, in walk order. Globs are
read as ripgrep reads ``-g``, with gitignore's syntax (``ignore.translate``): ``*``, ``?`` and
``[...]`` never match ``/``, ``**/`` is zero or more directories; a glob without ``/`` matches
a base name at any depth, one with ``/`` the path from the searched directory; an excluding
glob also excludes what lies below a directory it matches, as ripgrep prunes that directory. An
unknown type, or braces past the limit, fail with ``invalid_arguments``.
"""

from __future__ import annotations

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from zbtools.core.search.entries import Entry
    from zbtools.core.search.walk import Walk


MAX_GLOBS = 1000  # globs one list may expand to, as find_files_glob's patterns
MAX_BRACES = 256  # brace groups in one list: each is a level of expand_braces


def _too_many(text: str, why: str) -> ToolError:
    return ToolError("invalid_arguments", f"glob {text[:80]!r}{'...' if len(text) > 80 else ''}: "
                     f"{why}", hint="use fewer or smaller {a,b} groups, or several calls",
                     details={"problems": [{"problem": "invalid_value", "argument": "glob",
                                            "message": why}]})


def split_globs(text: str) -> list[str]:
    """``"*.rs, *.{ts,tsx}"`` -> ``["*.rs", "*.ts", "*.tsx"]``: commas outside braces split."""
    if text.count("{") > MAX_BRACES:
        raise _too_many(text, f"more than {MAX_BRACES} brace groups")
    return _split_globs(text)


def _split_globs(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}" and depth > 0)
        current += ch
    parts.append(current)
    out: list[str] = []
    for part in (p.strip() for p in parts):
        if part:
            out.extend(expand_braces(part))
            if len(out) > MAX_GLOBS:
                raise _too_many(text, f"braces expand to more than {MAX_GLOBS} globs")
    return out


def expand_braces(glob: str) -> list[str]:
    """``a.{x,y}`` -> ``["a.x", "a.y"]`` (nested braces too); unbalanced braces stay literal."""
    open_at = glob.find("{")
    if open_at < 0:
        return [glob]
    depth = 0
    for i in range(open_at, len(glob)):
        if glob[i] == "{":
            depth += 1
        elif glob[i] == "}":
            depth -= 1
            if depth == 0:
                inner = glob[open_at + 1:i]
                options = _split_globs(inner) if "," in inner else ["{" + inner + "}"]
                tails = expand_braces(glob[i + 1:])
                if len(options) * len(tails) > MAX_GLOBS:  # before making them all
                    raise _too_many(glob, f"braces expand to more than {MAX_GLOBS} globs")
                return [head + tail for head in (glob[:open_at] + o for o in options)
                        for tail in tails]
    return [glob]


class PathFilter:
    """Which files to search: globs (``!`` excludes; no ``/`` means the base name) and types."""

    def __init__(self, globs: list[str], types: list[str]) -> None:
        self.include: list[str] = []
        self.exclude: list[str] = []
        for glob in globs:
            if glob.startswith("!"):
                self.exclude.append(glob[1:])
            else:
                self.include.append(glob)
        self.type_globs: list[str] = []
        self._compiled: tuple[list[Any], list[Any], list[Any]] | None = None
        if types:
            from zbtools.core.search.filetypes import TYPE_ALIASES, TYPES
        for name in types:
            key = TYPE_ALIASES.get(name.lower(), name.lower())
            if key not in TYPES:
                from zbtools.core.call.args import did_you_mean

                known = [*TYPES, *TYPE_ALIASES]
                raise ToolError("invalid_arguments", f"unknown file type {name!r}"
                                + did_you_mean(name.lower(), known),
                                hint=f"{len(TYPES)} types are known, as in `rg --type-list` "
                                "(py, js, ts, rust, go, java, c, cpp, html, css, md, ...); "
                                "or use glob, e.g. \"*.ext\"",
                                details={"type": name, "known": sorted(known)})
            self.type_globs.extend(TYPES[key])

    @property
    def active(self) -> bool:
        return bool(self.include or self.exclude or self.type_globs)

    def _matchers(self, globs: list[str]) -> list[tuple[bool, bool, Any]]:
        """Each glob as (matches paths: it has a ``/``, matches directories only: it ends in
        ``/``, its compiled pattern); a glob that can never match (an unclosed ``[``) is left
        out."""
        import re

        from zbtools.core.search.ignore import translate

        out = []
        for glob in globs:
            dir_only = glob.endswith("/")
            body = glob.rstrip("/")
            anchored = "/" in body
            regex = translate(body[1:] if body.startswith("/") else body)
            if regex is not None:
                out.append((anchored, dir_only, re.compile(regex, re.DOTALL)))
        return out

    @staticmethod
    def _match(matchers: list[tuple[bool, bool, Any]], rel: str, name: str,
               below: bool = False) -> bool:
        """Whether a glob matches the file ``rel`` (base name ``name``), or, with ``below``,
        one of the directories it lies in."""
        for anchored, dir_only, pattern in matchers:
            if not dir_only and pattern.fullmatch(rel if anchored else name):
                return True
            if below and "/" in rel:
                parts = rel.split("/")[:-1]
                for i, part in enumerate(parts):
                    if pattern.fullmatch("/".join(parts[:i + 1]) if anchored else part):
                        return True
        return False

    def accepts(self, rel: str, name: str) -> bool:
        """``rel``: the path relative to the searched directory; ``name``: its base name."""
        if self._compiled is None:
            self._compiled = (self._matchers(self.include), self._matchers(self.exclude),
                              self._matchers(self.type_globs))
        include, exclude, types = self._compiled
        if exclude and self._match(exclude, rel, name, below=True):
            return False
        if self.include and not self._match(include, rel, name):
            return False
        return not self.type_globs or self._match(types, rel, name)


def files_to_search(walk: Walk, path_filter: PathFilter) -> Iterator[Entry]:
    """The regular files of ``walk`` that ``path_filter`` accepts, in walk order (while one is
    handled, ``walk.parent_fd`` is its directory)."""
    prefix = "" if walk.rel == "." else walk.rel + "/"
    active = path_filter.active
    for entry in walk:
        if entry.kind != "file":
            continue
        if active and not path_filter.accepts(entry.rel[len(prefix):], entry.name):
            continue
        yield entry

