"""Parsing unified diffs and Codex ``*** Begin Patch`` envelopes into per-file edit plans.

Both formats become ``FilePatch`` objects (update, add, delete, or rename or copy with optional
hunks; git's quoted names read by ``_unquote``, its ``new mode`` kept for the caller to check);
each hunk becomes a matcher ``Request`` (old text its context and ``-`` lines, new text its
context and ``+`` lines), located by the same ladder as every other edit
(docs/internals/matching.md#hunks). The parser is lenient where models are sloppy and strict
where it matters: hunk counts are ignored and ``-a,b`` is only a hint; a context line that lost
its leading space counts as context; absolute paths and ``..`` are refused, as GNU patch and
``git apply`` refuse them; a pure addition needs an anchor (a scope line, ``-N,0`` or
``*** End of File``), else ``anchor_required``. In a Codex hunk a line starting with a space is
context whatever follows it, and only the last ``*** End Patch`` ends the patch. It parses by
hand because ``unidiff`` rejects miscounted hunks, the commonest defect of model-written diffs,
and knows no Codex envelope.

Map: ``Hunk``, ``FilePatch``, ``parse_patch``, ``hunk_requests``, ``check_patch_path``,
``parse_error``. Failure modes: ``patch_parse_error``,
``anchor_required``.
"""

from __future__ import annotations

import re

from zbtools.core.editing.matching import MatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HUNK = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_BARE_HUNK = re.compile(r"^@@+(?: (.*))?$")


class Hunk:
    def __init__(self) -> None:
        self.old: list[str] = []
        self.new: list[str] = []
        self.old_start: int | None = None
        self.old_count: int | None = None
        self.scopes: list[str] = []
        self.end_of_file = False
        self.old_no_newline = False
        self.new_no_newline = False
        self.has_context = False

    @property
    def pure_addition(self) -> bool:
        return not self.old


class FilePatch:
    def __init__(self, kind: str, path: str, new_path: str | None = None) -> None:
        self.kind = kind  # update | add | delete
        self.path = path
        self.new_path = new_path  # rename target (update with a move), or copy target
        self.copy = False  # new_path is a copy: the file itself stays (git's copy from/to)
        self.new_mode: int | None = None  # git's "new mode": the permission bits it asks for
        self.hunks: list[Hunk] = []
        self.add_lines: list[str] = []
        self.add_no_newline = False
        self.line_no: int | None = None  # of its header in the patch (Codex envelopes)


def parse_error(message: str, line_no: int | None = None) -> MatchError:
    where = f" (patch line {line_no})" if line_no is not None else ""
    return MatchError("patch_parse_error", f"{message}{where}",
                      hint="send a unified diff (--- a/f, +++ b/f, @@ hunks) or a Codex patch "
                      "(*** Begin Patch / *** Update File: f / @@ / *** End Patch)",
                      details={"line": line_no})


def check_patch_path(path: str, line_no: int) -> str:
    clean = _unquote(path.strip())
    if not clean:
        raise parse_error("empty file name", line_no)
    if clean.startswith("/"):
        raise MatchError("patch_parse_error", f"absolute path {clean!r} in the patch "
                         f"(patch line {line_no})", hint="patches name files relative to the "
                         "workspace root", details={"line": line_no, "path": clean})
    if ".." in clean.split("/"):
        raise MatchError("patch_parse_error", f"path {clean!r} in the patch climbs with '..' "
                         f"(patch line {line_no})", hint="name files inside the workspace",
                         details={"line": line_no, "path": clean})
    return clean


def parse_patch(text: str) -> list[FilePatch]:
    """Parse either format; raise ``patch_parse_error`` with the offending line."""
    text = text.replace("\r\n", "\n")
    if "*** Begin Patch" in text:
        return _parse_codex(text)
    return _parse_unified(text)


# ---------------------------------------------------------------------------------------------
# Unified diff


def _strip_prefix(path: str) -> str:
    return _drop_side(_unquote(path.split("\t", 1)[0].strip()))


def _drop_side(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(name: str) -> str:
    """A path as git writes it: ``"b/na\\303\\257ve.txt"`` (quoted, C escapes and octal
    bytes, for names with non-ASCII bytes, quotes, backslashes or control characters) is
    ``b/naïve.txt``; an unquoted name is itself. Bytes that are not UTF-8 stay as
    surrogate escapes, as a listing shows them."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    out = bytearray()
    body = name[1:-1]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
        elif body[i + 1] in "01234567":
            digits = body[i + 1:i + 4]
            j = next((k for k, d in enumerate(digits) if d not in "01234567"), len(digits))
            out.append(int(digits[:j], 8) & 0xFF)
            i += 1 + j
        else:
            out.append(_C_ESCAPES.get(body[i + 1], ord(body[i + 1]) if body[i + 1].isascii()
                                      else ord("?")))
            i += 2
    return out.decode("utf-8", "surrogateescape")


def _git_names(rest: str) -> list[str]:
    """The two names of a ``diff --git`` line (quoted ones read by ``_unquote``); a line whose
    unquoted names hold spaces gives more or fewer than two, which the caller leaves to the
    ``---``/``+++`` lines."""
    names: list[str] = []
    i = 0
    while i < len(rest):
        if rest[i] == " ":
            i += 1
            continue
        if rest[i] == '"':
            j = i + 1
            while j < len(rest) and rest[j] != '"':
                j += 2 if rest[j] == "\\" else 1
            names.append(_unquote(rest[i:j + 1]))
            i = j + 1
        else:
            j = rest.find(" ", i)
            j = len(rest) if j < 0 else j
            names.append(rest[i:j])
            i = j
    return names


def _parse_unified(text: str) -> list[FilePatch]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    old_name: str | None = None
    rename_from: str | None = None
    pending_mode: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        no = i + 1
        if line.startswith("diff --git "):
            current, hunk, old_name, rename_from, pending_mode = None, None, None, None, None
            parts = _git_names(line[len("diff --git "):])
            if len(parts) == 2:
                current = FilePatch("update", check_patch_path(_drop_side(parts[0]), no))
                patches.append(current)
        elif line.startswith(("new file mode", "deleted file mode")):
            pending_mode = "add" if line.startswith("new") else "delete"
            if " 120000" in line:
                raise MatchError("patch_parse_error", f"the patch creates or deletes a symlink "
                                 f"(mode 120000, patch line {no}), which is refused",
                                 hint="edit regular files only", details={"line": no})
            if current is not None:
                current.kind = pending_mode
        elif line.startswith(("old mode", "new mode")):
            if " 120000" in line:
                raise MatchError("patch_parse_error", f"symlink mode change (patch line {no}) is "
                                 "refused", hint="edit regular files only", details={"line": no})
            if line.startswith("new mode ") and current is not None:
                try:
                    current.new_mode = int(line[len("new mode "):].strip(), 8) & 0o7777
                except ValueError:
                    raise parse_error(f"unreadable mode {line[9:]!r}", no) from None
        elif line.startswith(("rename from ", "copy from ")):
            rename_from = check_patch_path(line.split(" ", 2)[2], no)
        elif line.startswith(("rename to ", "copy to ")):
            target = check_patch_path(line.split(" ", 2)[2], no)
            if current is None:
                current = FilePatch("update", rename_from or target)
                patches.append(current)
            current.path = rename_from or current.path
            current.new_path = target
            current.copy = line.startswith("copy")
        elif line.startswith(("index ", "similarity index", "dissimilarity index",
                              "Binary files", "GIT binary patch")):
            if line.startswith(("Binary files", "GIT binary patch")):
                raise MatchError("patch_parse_error", f"binary patches are not supported (patch "
                                 f"line {no})", hint="send text diffs only",
                                 details={"line": no})
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old_name = line[4:]
            new_name = lines[i + 1][4:]
            i += 1
            old_path = None if old_name.split("\t")[0].strip() == "/dev/null" else \
                check_patch_path(_strip_prefix(old_name), no)
            new_path = None if new_name.split("\t")[0].strip() == "/dev/null" else \
                check_patch_path(_strip_prefix(new_name), no + 1)
            if old_path is None and new_path is None:
                raise parse_error("both sides are /dev/null", no)
            kind = "add" if old_path is None else "delete" if new_path is None else "update"
            path = old_path or new_path
            assert path is not None
            if current is not None and not current.hunks and current.path in (old_path,
                                                                              new_path):
                current.kind = kind if kind != "update" else current.kind
                if kind == "update" and old_path != new_path:
                    current.path, current.new_path = old_path or path, new_path
            else:
                current = FilePatch(kind, path, new_path if kind == "update" and
                                    new_path != old_path else None)
                patches.append(current)
            hunk = None
        elif line.startswith("@@"):
            match = _HUNK.match(line)
            if current is None:
                current = FilePatch("update", "")  # hunks with no file header: caller's path
                patches.append(current)
            hunk = Hunk()
            if match:
                hunk.old_start = int(match.group(1))
                hunk.old_count = int(match.group(2)) if match.group(2) is not None else 1
                scope = match.group(5).strip()
            else:
                bare = _BARE_HUNK.match(line)
                scope = (bare.group(1) or "").strip() if bare else ""
            if scope:
                hunk.scopes.append(scope)
            current.hunks.append(hunk)
        elif hunk is not None and current is not None:
            if line.startswith("\\"):
                kind = _last_kind(lines, i)  # the marker applies to the line before it
                hunk.old_no_newline = hunk.old_no_newline or kind in ("-", " ")
                hunk.new_no_newline = hunk.new_no_newline or kind in ("+", " ")
            elif line.startswith("+"):
                hunk.new.append(line[1:])
            elif line.startswith("-"):
                hunk.old.append(line[1:])
            elif line.startswith(" ") or line == "":
                body = line[1:] if line else ""
                hunk.old.append(body)
                hunk.new.append(body)
                hunk.has_context = True
            else:
                # A context line that lost its leading space (a common model slip).
                hunk.old.append(line)
                hunk.new.append(line)
                hunk.has_context = True
        elif line.strip() and current is None and not patches:
            pass  # prose before the diff (e.g. a commit message) is ignored
        i += 1
    for patch in patches:
        if patch.kind == "add":
            for h in patch.hunks:
                if h.old:
                    raise parse_error(f"new file {patch.path} has removed or context lines")
                patch.add_lines += h.new
                patch.add_no_newline = h.new_no_newline
            patch.hunks = []
    if not patches:
        raise parse_error("no file changes found")
    return patches


def _last_kind(lines: list[str], i: int) -> str:
    for j in range(i - 1, -1, -1):
        prev = lines[j]
        if prev.startswith("\\"):
            continue
        return prev[:1] if prev[:1] in "+- " else " "
    return " "


# ---------------------------------------------------------------------------------------------
# Codex envelope


def _parse_codex(text: str) -> list[FilePatch]:
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "*** Begin Patch"), None)
    if start is None:
        raise parse_error("missing *** Begin Patch")
    # the last marker ends the patch: one before it would drop what follows (Codex refuses it)
    end = next((i for i in range(len(lines) - 1, start, -1) if lines[i].strip() == "*** End Patch"),
               None)
    if end is None:
        raise parse_error("missing *** End Patch", len(lines))
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    for i in range(start + 1, end):
        line = lines[i]
        no = i + 1
        if hunk is not None and line.startswith(" "):
            # in a hunk a space starts a context line whatever follows, as Codex reads it: a
            # file line such as `*** Update File: x` or `*** End Patch` is the file's text
            hunk.old.append(line[1:])
            hunk.new.append(line[1:])
            hunk.has_context = True
            continue
        # Elsewhere headers are read with the line's surrounding blanks trimmed, as Codex reads
        # a section's first line (models indent them).
        header = line.strip() if line.startswith((" ", "\t")) else line
        if header == "*** End Patch":
            raise parse_error("*** End Patch before the end of the patch: what follows it would "
                              "be dropped", no)
        if header.startswith("*** Add File: "):
            current = FilePatch("add", check_patch_path(header[len("*** Add File: "):], no))
            patches.append(current)
            hunk = None
        elif header.startswith("*** Delete File: "):
            current = FilePatch("delete",
                                check_patch_path(header[len("*** Delete File: "):], no))
            patches.append(current)
            hunk = None
        elif header.startswith("*** Update File: "):
            current = FilePatch("update",
                                check_patch_path(header[len("*** Update File: "):], no))
            current.line_no = no
            patches.append(current)
            hunk = None
        elif header.startswith("*** Move to: "):
            if current is None or current.kind != "update":
                raise parse_error("*** Move to: outside an Update File section", no)
            current.new_path = check_patch_path(header[len("*** Move to: "):], no)
        elif line.strip() == "*** End of File":
            if hunk is None:
                raise parse_error("*** End of File outside a hunk", no)
            hunk.end_of_file = True
        elif current is None:
            if line.strip():
                raise parse_error(f"unexpected line {line[:40]!r} before a file header", no)
        elif current.kind == "add":
            if not line.startswith("+") and line != "":
                raise parse_error("lines of an added file must start with +", no)
            current.add_lines.append(line[1:] if line else "")
        elif current.kind == "delete":
            if line.strip():
                raise parse_error("a Delete File section has no body", no)
        elif line.startswith("@@"):
            scope = line[2:].strip()
            if hunk is not None and not hunk.old and not hunk.new:
                if scope:
                    hunk.scopes.append(scope)  # nested @@ scopes: class, then method
            else:
                hunk = Hunk()
                if scope:
                    hunk.scopes.append(scope)
                current.hunks.append(hunk)
        else:
            if hunk is None:
                hunk = Hunk()
                current.hunks.append(hunk)
            if line.startswith("+"):
                hunk.new.append(line[1:])
            elif line.startswith("-"):
                hunk.old.append(line[1:])
            else:
                body = line[1:] if line.startswith(" ") else line
                hunk.old.append(body)
                hunk.new.append(body)
                hunk.has_context = True
    for patch in patches:
        # A trailing empty line before *** End Patch is an artefact, not content.
        if patch.kind == "add" and patch.add_lines and patch.add_lines[-1] == "" and \
                lines[end - 1] == "":
            patch.add_lines.pop()
        for h in patch.hunks:
            while h.old and h.new and h.old[-1] == "" and h.new[-1] == "" and \
                    h is patch.hunks[-1]:
                h.old.pop()
                h.new.pop()
        patch.hunks = [h for h in patch.hunks if h.old or h.new]
    if not patches:
        raise parse_error("no file sections between *** Begin Patch and *** End Patch")
    for patch in patches:
        if patch.kind == "update" and not patch.hunks and patch.new_path is None:
            raise parse_error(f"*** Update File: {patch.path} has no hunks: nothing to change",
                              patch.line_no)
    return patches


def hunk_requests(patch: FilePatch, label_prefix: str = "") -> list[Any]:
    """One matcher request per hunk of an update."""
    from zbtools.core.editing.matching import Request

    requests = []
    for n, hunk in enumerate(patch.hunks):
        label = f"{label_prefix}hunk {n + 1}: "
        new = "\n".join(hunk.new) + ("" if hunk.new_no_newline or not hunk.new else "\n")
        if hunk.pure_addition:
            request = Request("", new, label=label)
            if hunk.end_of_file:
                request.insert_at = 1 << 62  # clamped to the end of the file
            elif hunk.scopes:
                request.scopes = list(hunk.scopes)
                request.insert_after_scope = True
            elif hunk.old_start is not None and hunk.old_count == 0:
                request.insert_at = hunk.old_start  # git: "-N,0" inserts after line N
            else:
                raise MatchError(
                    "anchor_required", f"{label}only adds lines and has nothing to anchor them",
                    hint="add 1-3 unchanged context lines around the addition, a @@ line naming "
                    "the enclosing function, or (Codex) *** End of File to append",
                    details={"hunk": n + 1})
            requests.append(request)
            continue
        old = "\n".join(hunk.old) + ("" if hunk.old_no_newline else "\n")
        request = Request(old, new, start_line=hunk.old_start, label=label)
        request.scopes = list(hunk.scopes)
        request.whole_lines = True
        requests.append(request)
    return requests
