"""Git's own files, whatever they are called: the places a write must never change.

``workspace.check_writable`` refuses a path with a ``.git`` component, but git also keeps its
internals, and runs code, from places not named ``.git``. ``GitGuard`` finds them the way git
finds a repository, from the directory of the written path up to ``/``: git directories (by a
``.git`` entry, a ``gitdir:`` line, a ``commondir`` file, or the shape of a git directory),
the config files they include, and the hooks directories those name
(docs/internals/files.md#git-places, docs/internals/security.md#t6). Config files are read with
a small parser of git's syntax; nothing here raises, so a broken repository never makes a write
fail with anything but ``protected_path``. What it finds is cached until the guard is dropped
(once per call).

Map: ``GitGuard`` (``refusal`` answers for one absolute, resolved path), ``git_inside``,
``parse_config``, ``inside``, ``CONFIG_LIMIT``, ``HOOK_NAMES``.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CONFIG_LIMIT = 1 << 20  # bytes of one config file read; git's own are a few KiB
INCLUDE_DEPTH = 10  # git's own limit of nested includes
HOOK_NAMES = frozenset((
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change"))


def inside(path: str, area: str) -> bool:
    """Whether the absolute ``path`` is ``area`` or lies below it (compared by components)."""
    return path == area or path.startswith(area.rstrip("/") + "/")


class _Value:
    """The parse of one config value: the text and where the line ends."""

    def __init__(self, text: str, end: int) -> None:
        self.text = text
        self.end = end


ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


def _value(text: str, pos: int) -> _Value | None:
    """Read a value from ``pos`` (after ``=``) to its line's end: quotes, escapes, comments and
    backslash-newline continuations as git reads them; None when it is malformed."""
    out: list[str] = []
    quoted = False
    pending = ""  # unquoted whitespace, kept only if more text follows it
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "\n" and not quoted:
            break
        if c == "\n":
            return None  # a quote left open at the line's end
        if c == "\\":
            nxt = text[pos + 1] if pos + 1 < n else ""
            if nxt == "\n" or (nxt == "\r" and text[pos + 2:pos + 3] == "\n"):
                pos += 2 if nxt == "\n" else 3
                continue
            if nxt not in ESCAPES:
                return None
            out.append(pending + ESCAPES[nxt])
            pending = ""
            pos += 2
            continue
        if c == '"':
            out.append(pending)
            pending = ""
            quoted = not quoted
        elif not quoted and c in "#;":
            while pos < n and text[pos] != "\n":
                pos += 1
            break
        elif not quoted and c in " \t\r":
            if out or pending:
                pending += c
        else:
            out.append(pending + c)
            pending = ""
        pos += 1
    if quoted:
        return None
    return _Value("".join(out), pos)


def parse_config(text: str) -> list[tuple[str, str, str | None]]:
    """Every ``(section, key, value)`` of a git config text, in order: the section lower-cased
    with its subsection after a dot as written (``includeif.gitdir:~/x``), the key lower-cased,
    the value ``None`` for a bare key (git's true). Malformed lines are skipped."""
    entries: list[tuple[str, str, str | None]] = []
    section = ""
    pos = 0
    n = len(text)
    if text.startswith("\ufeff"):
        pos = 1
    while pos < n:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            break
        c = text[pos]
        if c in "#;":
            pos = _line_end(text, pos)
            continue
        if c == "[":
            header = _section(text, pos)
            if header is None:
                section = "\0"  # keys under an unreadable header belong to no known section
                pos = _line_end(text, pos)
                continue
            section, pos = header
            continue
        start = pos
        while pos < n and (text[pos].isalnum() or text[pos] == "-") and text[pos].isascii():
            pos += 1
        key = text[start:pos].lower()
        while pos < n and text[pos] in " \t\r":
            pos += 1
        if not key or not key[0].isalpha():
            pos = _line_end(text, pos)
            continue
        if pos >= n or text[pos] in "\n#;":
            entries.append((section, key, None))
            pos = _line_end(text, pos)
            continue
        if text[pos] != "=":
            pos = _line_end(text, pos)
            continue
        value = _value(text, pos + 1)
        if value is None:
            pos = _line_end(text, pos)
            continue
        entries.append((section, key, value.text))
        pos = value.end
    return entries


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end + 1


def _section(text: str, pos: int) -> tuple[str, int] | None:
    """A ``[section]``, ``[section "sub"]`` or ``[section.sub]`` header at ``pos``: the section
    name as ``parse_config`` gives it and where reading goes on (a key may follow on the line)."""
    n = len(text)
    pos += 1
    start = pos
    while pos < n and (text[pos].isalnum() or text[pos] in "-.") and text[pos].isascii():
        pos += 1
    name = text[start:pos].lower()
    if not name:
        return None
    if pos < n and text[pos] == "]":
        return name, pos + 1
    if pos >= n or text[pos] not in " \t":
        return None
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n or text[pos] != '"':
        return None
    pos += 1
    sub: list[str] = []
    while pos < n and text[pos] != '"':
        if text[pos] == "\n":
            return None
        if text[pos] == "\\" and pos + 1 < n and text[pos + 1] != "\n":
            pos += 1
        sub.append(text[pos])
        pos += 1
    if pos + 1 >= n or text[pos + 1] != "]":
        return None
    return f"{name}.{''.join(sub)}", pos + 2


def _read_small(path: str) -> str | None:
    """The text of a regular file of at most ``CONFIG_LIMIT`` bytes, else None (never raises)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > CONFIG_LIMIT:
            return None
        data = os.read(fd, CONFIG_LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def _real(base: str, value: str) -> str | None:
    """``value`` (a path from a git file: ``~`` expanded, relative to ``base``) made absolute
    with its symlinks resolved, or None when it cannot be."""
    try:
        if value.startswith("~"):
            value = os.path.expanduser(value)
        return os.path.realpath(os.path.join(base, value))
    except (OSError, ValueError):
        return None


class _Repo:
    """What one repository (found at its top) protects."""

    def __init__(self) -> None:
        self.areas: list[tuple[str, str]] = []  # (place, what it is): all below it protected
        self.hook_dirs: list[str] = []  # only the hook files directly inside are protected


class GitGuard:
    """The protected places seen from paths in one workspace, found on demand and cached."""

    def __init__(self, roots: list[str], show: Callable[[str], str] = str) -> None:
        self.roots = roots
        self.show = show  # an absolute path as messages name it
        self._dirs: dict[str, tuple[bool, _Repo | None]] = {}

    def refusal(self, path: str, *, is_dir: bool = False) -> str | None:
        """Why the absolute, resolved ``path`` belongs to git (a phrase for the message), or
        None. ``is_dir``: the path is a directory, which may itself be a git directory."""
        comps = [c for c in path.split("/") if c]
        last = len(comps) if is_dir else len(comps) - 1
        for depth in range(last + 1):
            here = "/" + "/".join(comps[:depth])
            if depth and comps[depth - 1].casefold() == ".git":
                return f"lies inside the .git directory {self.show(here)}"
            is_git, repo = self._dir(here)
            if is_git:
                return f"lies inside {self.show(here)}, a git directory"
            if repo is None:
                continue
            for area, what in repo.areas:
                if inside(path, area):
                    verb = "is" if path == area else "lies inside"
                    return (f"{verb} {self.show(area)}, {what} of the repository at "
                            f"{self.show(here)}")
            for hooks in repo.hook_dirs:
                if os.path.dirname(path) == hooks and os.path.basename(path) in HOOK_NAMES:
                    return (f"is a hook git runs from {self.show(hooks)} (core.hooksPath of "
                            f"the repository at {self.show(here)})")
        if comps and comps[-1].casefold() == ".git":
            return "is a repository's .git"
        return None

    def below(self, path: str) -> str | None:
        """A protected place strictly below the directory ``path`` that the repositories seen
        from it know of (a hooks directory, a ``gitdir:`` target), or None."""
        comps = [c for c in path.split("/") if c]
        for depth in range(len(comps) + 1):
            _, repo = self._dir("/" + "/".join(comps[:depth]))
            if repo is None:
                continue
            for area, _ in repo.areas:
                if area != path and inside(area, path):
                    return area
        return None

    def git_dirs_outside(self) -> list[str]:
        """The protected places found so far that lie outside every root (for a search of the
        names of a hard-linked file there)."""
        found: list[str] = []
        for _, repo in self._dirs.values():
            for area, _ in repo.areas if repo is not None else ():
                if not any(inside(area, root) or inside(root, area) for root in self.roots):
                    found.append(area)
        return found

    def _dir(self, path: str) -> tuple[bool, _Repo | None]:
        """(the directory is shaped like a git directory, the repository whose top it is)."""
        known = self._dirs.get(path)
        if known is None:
            known = self._dirs[path] = (_shaped_like_git(path), self._repo_at(path))
        return known

    def _repo_at(self, top: str) -> _Repo | None:
        dot = os.path.join(top, ".git")
        try:
            st = os.stat(dot)  # a symlinked .git is followed, as git follows it
        except (OSError, ValueError):
            try:
                os.lstat(dot)  # a dangling .git symlink: nothing to protect beyond its name
            except (OSError, ValueError):
                return None
            return _Repo()
        repo = _Repo()
        if stat.S_ISDIR(st.st_mode):
            gitdir = _real(top, ".git")
        else:
            text = _read_small(dot) or ""
            first = text.split("\n", 1)[0].rstrip("\r")
            gitdir = _real(top, first[8:]) if first.startswith("gitdir: ") and first[8:] \
                else None
        if gitdir is None:
            return repo
        repo.areas.append((gitdir, "the git directory"))
        dirs = [gitdir]
        common = _read_small(os.path.join(gitdir, "commondir"))
        if common is not None and common.strip("\r\n"):
            shared = _real(gitdir, common.strip("\r\n"))
            if shared is not None:
                repo.areas.append((shared, "the common git directory"))
                dirs.insert(0, shared)
        hooks: list[str] = []
        worktrees: list[str] = []
        for folder in dirs:
            for name in ("config", "config.worktree"):
                self._read_config(os.path.join(folder, name), repo, hooks, worktrees, 0)
        bases = [top, gitdir, *(w for w in (_real(gitdir, v) for v in worktrees) if w)]
        for value in hooks:
            for base in bases:
                place = _real(base, value)
                if place is None:
                    continue
                if any(inside(top, place) or inside(root, place) for root in self.roots):
                    repo.hook_dirs.append(place)  # it holds the worktree: only its hooks
                else:
                    repo.areas.append((place, "the hooks directory (core.hooksPath)"))
        return repo

    def _read_config(self, path: str, repo: _Repo, hooks: list[str], worktrees: list[str],
                     depth: int) -> None:
        text = _read_small(path)
        if text is None:
            return
        for section, key, value in parse_config(text):
            if value is None or not value:
                continue
            if section == "core" and key == "hookspath":
                hooks.append(value)
            elif section == "core" and key == "worktree":
                worktrees.append(value)
            elif key == "path" and (section == "include" or section.startswith("includeif.")):
                included = _real(os.path.dirname(path), value)
                if included is None:
                    continue
                repo.areas.append((included, "a config file included"))
                if depth < INCLUDE_DEPTH:
                    self._read_config(included, repo, hooks, worktrees, depth + 1)


def _shaped_like_git(path: str) -> bool:
    """Two of ``HEAD`` (a file or symlink), ``objects/``, ``refs/``, or ``HEAD`` with a
    ``commondir`` file: git's own test of a git directory, less one part."""
    def present(name: str, want_dir: bool) -> bool:
        try:
            st = os.stat(os.path.join(path, name)) if want_dir else \
                os.lstat(os.path.join(path, name))
        except (OSError, ValueError):
            return False
        return stat.S_ISDIR(st.st_mode) == want_dir

    head = present("HEAD", False)
    objects = present("objects", True)
    if head and objects:
        return True
    if head:
        return present("refs", True) or present("commondir", False)
    return objects and present("refs", True)


GIT_MARKS = {"HEAD": False, "objects": True, "refs": True, "commondir": False}  # name: is a dir


def git_inside(top_fd: int) -> str | None:
    """The first ``.git`` entry (any case), or directory shaped like a git directory, at any
    depth below the directory ``top_fd`` (its path below it; ``""`` for the top itself), or
    None. A full walk (``treewalk.walk_tree``): a recursive delete walks the tree anyway."""
    from zbtools.core.files.treewalk import walk_tree

    marks: dict[str, set[str]] = {}
    found: list[str] = []

    def visit(rel: str, name: str, st: os.stat_result) -> bool:
        here = f"{rel}/{name}" if rel else name
        if name.casefold() == ".git":
            found.append(here)
            return True
        want_dir = GIT_MARKS.get(name)
        if want_dir is None or stat.S_ISDIR(st.st_mode) != want_dir:
            return False
        seen = marks.setdefault(rel, set())
        seen.add(name)
        if len(seen) >= 2 and ("HEAD" in seen or {"objects", "refs"} <= seen):
            found.append(rel)
            return True
        return False

    walk_tree(top_fd, visit)
    return found[0] if found else None
