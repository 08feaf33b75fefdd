"""Reading the native engine's ripgrep log: what its walk left out, and where it could differ.

With ``--debug`` ripgrep logs every entry it leaves out and why (hidden, an ignore rule, an
override, its size, binary data at an offset) and every ignore file it reads. ``LogReader``
sorts those lines into ``Events``: the skipped entries keyed by their place in walk order
(``parent_key``: siblings sorted by name, depth first), so that the replay gives the
``skipped`` counts, also where a limit stopped the search; the files too large; the files with
binary data and its offset. Anything that could make the two walks disagree raises
``Declined`` (the python walk then answers): a message or log line not understood, an ignore
file the python walk reads otherwise (``check_opened``), a repository nested below the start,
a hidden entry whitelisted by a negation, a path below a directory the python walk does not
enter (``MAX_DEPTH`` levels below the start: ``LogReader.walked``). ripgrep walks without that limit
(a glob of as many levels costs every search milliseconds), so a tree that deep is declined
where ripgrep reports or logs anything below the limit; where nothing there matches or is left
out, ripgrep's answer has searched more than the python walk would, and says nothing of a
limit it did not meet.
"""

from __future__ import annotations

import sys

from zbtools.core.search.entries import MAX_DEPTH, walk_order

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# Debug lines from these modules say nothing about the file set.
QUIET_MODULES = ("rg::flags", "globset", "grep_regex", "rg::search", "grep_searcher")
# compiled by ``LogReader.prepare``: a cold call imports ``re`` while ripgrep runs
DEBUG_LINE = rb"^rg: DEBUG\|([^|]*)\|[^ ]*: (.*)$"
SIZE_REASON = rb"^(\d+) bytes$"
BINARY_REASON = rb"^found binary data at offset (\d+)$"
FS_ENCODING, FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


class Declined(Exception):
    """The two walkers could disagree here: the python walk answers instead."""


def rel_of(raw: bytes) -> str:
    """A path as ripgrep printed it, relative to the workspace root."""
    text = raw.decode(FS_ENCODING, FS_ERRORS)  # os.fsdecode, without its checks per call
    if text.startswith("./"):
        text = text[2:]
    return text


def parent_key(rel: str) -> str:
    """Where the walk counts what it skipped in ``rel``'s directory: when it lists it, after
    the directory itself and before anything in it."""
    return walk_order(rel.rpartition("/")[0]) + "\0" if "/" in rel else "\0"


class Events:
    """The skipped entries and per-file facts of the log, by root-relative path."""

    def __init__(self) -> None:
        self.skips: list[tuple[str, str]] = []  # (walk key, kind) for hidden/ignored/excluded
        self.too_large: list[str] = []
        self.binary: dict[str, int] = {}  # path -> offset of the first NUL byte
        self.opened: list[str] = []  # ignore files read


class LogReader:
    """The log of one search below ``start`` (root-relative, "." for the root) in the
    workspace root ``root``, walked with these switches."""

    def __init__(self, root: str, start: str, *, include_hidden: bool,
                 exclude: frozenset[str]) -> None:
        self.root = root
        self.prefix = "" if start == "." else start + "/"
        self.include_hidden = include_hidden
        self.exclude = exclude
        self.patterns: tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]] | None = None

    def prepare(self) -> None:
        """Compile what reading the log takes (a cold call's ``re`` import: done while
        ripgrep runs, not before it starts or after it ends)."""
        import re

        self.patterns = (re.compile(DEBUG_LINE), re.compile(SIZE_REASON),
                         re.compile(BINARY_REASON))

    def walked(self, raw: bytes) -> str:
        """The root-relative path of an entry ripgrep reported or logged (``rel_of``);
        ``Declined`` when it lies below a directory the python walk does not enter, more than
        ``MAX_DEPTH`` levels below the start."""
        rel = rel_of(raw)
        if rel.count("/", len(self.prefix)) >= MAX_DEPTH:
            raise Declined("a tree deeper than the python walk's limit: it says so")
        return rel

    def events(self, err: bytes) -> Events:
        if self.patterns is None:
            self.prepare()
        assert self.patterns is not None
        debug_line = self.patterns[0]
        found = Events()
        for line in err.split(b"\n"):
            if not line:
                continue
            m = debug_line.match(line)
            if m is None:
                raise Declined("an rg message")  # an error: unreadable, vanished...
            module, message = m.group(1), m.group(2)
            if module.startswith(b"ignore::walk") or module.startswith(b"grep_printer") \
                    or module.startswith(b"rg::haystack"):
                self.entry_event(found, message)
            elif module.startswith(b"ignore::gitignore"):
                if message.startswith(b"opened gitignore file: "):
                    found.opened.append(rel_of(message[len(b"opened gitignore file: "):]))
            elif not module.decode("ascii", "replace").startswith(QUIET_MODULES):
                raise Declined("an rg log line not understood")
        self.check_opened(found.opened)
        return found

    def entry_event(self, found: Events, message: bytes) -> None:
        verb, _, rest = message.partition(b" ")
        if verb == b"whitelisting":
            path, sep, _reason = rest.partition(b": Whitelist(")
            if not sep:
                raise Declined("a whitelist line not understood")
            rel = self.walked(path)
            if not self.include_hidden and any(part.startswith(".")
                                               for part in rel[len(self.prefix):].split("/")):
                raise Declined("a hidden entry whitelisted by a negation")
            return
        if verb != b"ignoring":
            raise Declined("a walk line not understood")
        path, sep, reason = rest.partition(b": Ignore(IgnoreMatch(")
        if sep:
            rel = self.walked(path)
            self.skip_event(found, rel, reason)
            return
        if b": failed to pass haystack filter" in rest:
            return  # a symlink or a special file: the python walk passes them silently too
        path, sep, reason = rest.rpartition(b": ")
        if not sep:
            raise Declined("a walk line not understood")
        rel = self.walked(path)
        assert self.patterns is not None  # (events prepared them)
        size = self.patterns[1].match(reason)
        if size is not None:
            found.too_large.append(rel)
            return
        binary = self.patterns[2].match(reason)
        if binary is not None:
            found.binary[rel] = int(binary.group(1))
            return
        raise Declined("a walk line not understood")

    def skip_event(self, found: Events, rel: str, reason: bytes) -> None:
        name = rel.rpartition("/")[2]
        parts = rel[len(self.prefix):].split("/")
        if ".git" in parts[:-1] or (name == ".git" and rel != ".git"):
            raise Declined("a repository nested below the start")
        if reason.startswith(b"Hidden)"):
            kind = "hidden"
        elif reason.startswith(b"Override("):
            if b'original: "!.*.zb*"' in reason:
                from zbtools.core.files.tempnames import is_temp_name

                if is_temp_name(name):
                    return  # our own temp files: never listed or searched, not counted
                raise Declined("a hidden name like our temp files")
            if name not in self.exclude:
                raise Declined("an override not understood")
            kind = "excluded_dirs"
        elif reason.startswith(b"Gitignore("):
            # the python walk tests for a hidden name before the ignore rules
            kind = "hidden" if name.startswith(".") and not self.include_hidden else "ignored"
        else:
            raise Declined("an ignore reason not understood")
        found.skips.append((parent_key(rel), kind))

    def check_opened(self, opened: list[str]) -> None:
        """The ignore files ripgrep read must be those the python walk reads: ``.gitignore``
        files at or below the start, the start's ancestors' up to the workspace root (ripgrep
        names those by absolute path), and the root's ``.git/info/exclude``."""
        root = self.root.rstrip("/") + "/"
        for logged in opened:
            path = logged
            if path.startswith("/"):
                if not path.startswith(root):
                    raise Declined("an ignore file above the workspace root")
                path = path[len(root):]
                inside = path.rpartition("/")[0]
                if inside and path != ".git/info/exclude" \
                        and not self.prefix.startswith(inside + "/"):
                    raise Declined("an ignore file outside the start's ancestors")
            name = path.rpartition("/")[2]
            if name == ".gitignore" or path == ".git/info/exclude":
                continue
            raise Declined(f"rg read {name}, which the python walk reads otherwise")
