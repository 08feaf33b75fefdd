"""Which files a search reads: the caller's globs and file types, applied to the walk's files.

``split_globs`` reads a comma-separated glob list (braces expanded by ``expand_braces``);
``PathFilter`` holds the globs (``!`` excludes; a glob without ``/`` matches the base name) and
the globs of the file types asked for (``filetypes``, as ``rg --type-list`` names them);
``files_to_search`` yields the regular files of a ``walk.Walk`` that the filter accepts, in walk
order. An unknown type fails with ``invalid_arguments``.
"""

from __future__ import annotations

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from zbtools.core.search.entries import Entry
    from zbtools.core.search.walk import Walk


def split_globs(text: str) -> list[str]:
    """``"*.rs, *.{ts,tsx}"`` -> ``["*.rs", "*.ts", "*.tsx"]``: commas outside braces split."""
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
                options = split_globs(inner) if "," in inner else ["{" + inner + "}"]
                return [head + tail for head in (glob[:open_at] + o for o in options)
                        for tail in expand_braces(glob[i + 1:])]
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

    @staticmethod
    def _match(globs: list[str], rel: str, name: str) -> bool:
        from fnmatch import fnmatchcase

        for glob in globs:
            if "/" in glob:
                g = glob[1:] if glob.startswith("/") else glob
                if fnmatchcase(rel, g) or (g.startswith("**/") and fnmatchcase(rel, g[3:])):
                    return True
            elif fnmatchcase(name, glob):
                return True
        return False

    def accepts(self, rel: str, name: str) -> bool:
        """``rel``: the path relative to the searched directory; ``name``: its base name."""
        if self.exclude and self._match(self.exclude, rel, name):
            return False
        if self.include and not self._match(self.include, rel, name):
            return False
        return not self.type_globs or self._match(self.type_globs, rel, name)


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

