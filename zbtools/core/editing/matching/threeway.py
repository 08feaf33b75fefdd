"""The merges of the tolerant tiers: the caller's change applied onto lines that differ.

A near miss or a T8 window is not old text as sent, so new text cannot simply replace it.
``merge_similar`` (T8) aligns old text with the window (``difflib`` on the T5 line keys) and
applies old -> new as a three-way merge: a line the caller changes that differs in the file is
a conflict, a line both sides insert is written once, and the file's own typography is kept in
the unedited parts of a changed line (``keep_file_spelling``). ``merge_near_readings`` applies
a near miss under each reading of which line is missing, and the readings must agree. Both
re-indent new lines into the file's. Failure mode: ``edit_conflict``.

Map: ``keep_file_spelling``, ``merge_similar``, ``merge_near_readings``. Imports the parts below
it (docs/internals/matching.md#parts); ``merge`` calls it; ``difflib`` and ``rapidfuzz`` on use.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import near_conflict
from zbtools.core.editing.matching.diff import line_opcodes
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.indentation import leading_ws
from zbtools.core.editing.matching.linekeys import LINE_KEYS
from zbtools.core.editing.matching.reindent import (
    later_lines_in_file_columns,
    maps_onto,
    region_eol,
    reindenter,
    uncut,
)
from zbtools.core.editing.matching.requests import pattern_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from zbtools.core.editing.matching.candidates import Located
    from zbtools.core.editing.matching.filemodel import FileModel

_SLIP = 0.9  # Indel similarity of a file line and old text's line with a slip in it


def keep_file_spelling(old: str, found: str, new: str) -> str | None:
    """``new`` with the file's own spelling in the spans of the line the edit left alone.

    ``old`` is the caller's version of the file's line ``found``, equal to it up to typography
    and whitespace (``"..."`` for ``"…"``, a space for a NBSP, ``--`` never: that is another
    text). Each span that ``old -> new`` keeps is written as the file has it; what the edit
    changes is written as sent. None when the lines are not equal up to typography, when the
    edit cuts through a span the caller spelt differently, or when the result would differ
    from ``new`` other than in typography. Indentation is ``new``'s.
    """
    import difflib

    key = LINE_KEYS["typography"]
    o, f = old.lstrip(" \t"), found.lstrip(" \t")
    indent = leading_ws(new)
    n = new[len(indent):]
    if o == f or key(o) != key(f):
        return None
    spans = difflib.SequenceMatcher(None, o, f, autojunk=False).get_opcodes()

    def file_text(a: int, b: int) -> str | None:
        out = []
        for tag, o1, o2, f1, f2 in spans:
            if tag == "equal":
                lo, hi = max(a, o1), min(b, o2)
                if lo < hi:
                    out.append(f[f1 + lo - o1:f1 + hi - o1])
            elif o1 == o2:  # characters only the file has
                if a < o1 < b:
                    out.append(f[f1:f2])
            elif a <= o1 and o2 <= b:
                out.append(f[f1:f2])
            elif o1 < b and a < o2:
                return None  # the edit cuts through a span spelt otherwise
        return "".join(out)

    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, o, n, autojunk=False).get_opcodes():
        piece = file_text(i1, i2) if tag == "equal" else n[j1:j2]
        if piece is None:
            return None
        out.append(piece)
    merged = "".join(out)
    if key(merged) != key(n):
        return None
    return indent + merged


def merge_similar(model: FileModel, located: Located) -> list[tuple[str, str]]:
    """3-way merge for T8: the caller's change applied onto lines that may differ from old."""
    import difflib

    cand = located.candidate
    request = located.request
    old_lines = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
    file_lines = model.lines[cand.start:cand.end]
    key = LINE_KEYS["typography"]
    b = difflib.SequenceMatcher(None, [key(x) for x in old_lines], [key(x) for x in file_lines],
                                autojunk=False)
    from rapidfuzz.distance import Indel

    old_to_file: dict[int, int] = {}
    slipped: set[int] = set()  # file lines old text has but for a slip (a typo): not lacking
    for op, i1, i2, j1, j2 in b.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                old_to_file[i1 + k] = j1 + k
        elif op == "replace":
            slipped.update(j1 + k for k in range(min(i2 - i1, j2 - j1))
                           if Indel.normalized_similarity(key(old_lines[i1 + k]),
                                                          key(file_lines[j1 + k])) >= _SLIP)
    aligned = [cand.start + old_to_file[i] if i in old_to_file else None
               for i in range(len(old_lines))]
    old_lines, new_lines = uncut(model, cand.start, old_lines, new_lines, aligned)
    if not maps_onto(model, cand.start, old_lines, aligned):
        raise MatchError(
            "edit_conflict", f"{request.label}old_text matched lines {cand.first_line}-"
            f"{cand.last_line} only approximately, and its indentation does not map onto the "
            "file's (lines at one depth in old_text stand at different depths there)",
            hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with the "
            "file's current text", details={"start_line": cand.first_line,
                                             "end_line": cand.last_line})
    render = reindenter(model, cand.start, old_lines, aligned)
    eol = region_eol(model, cand.start, cand.end)
    a = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    replacements: list[tuple[int, int, list[tuple[str, str]]]] = []  # [f1, f2) -> lines
    for op, i1, i2, j1, j2 in a.get_opcodes():
        if op == "equal":
            continue
        changed = list(range(i1, i2))
        missing = [i for i in changed if i not in old_to_file]
        if missing:
            raise MatchError(
                "edit_conflict",
                f"{request.label}old_text matched lines {cand.first_line}-{cand.last_line} only "
                "approximately, and a line you are changing differs from the file: "
                f"{old_lines[missing[0]].strip()[:SNIPPET_CHARS]!r}",
                hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with "
                "the file's current text", details={"start_line": cand.first_line,
                                                     "end_line": cand.last_line})
        if changed:
            mapped = [old_to_file[i] for i in changed]
            if mapped != list(range(mapped[0], mapped[0] + len(mapped))):
                raise MatchError(
                    "edit_conflict", f"{request.label}the file has lines that old_text lacks "
                    f"inside the region you are changing (near line {cand.start + mapped[0] + 1})",
                    hint="re-read the region and resend old_text with the file's current text")
            f1, f2 = mapped[0], mapped[-1] + 1
        elif i1 in old_to_file:  # pure insertion before old line i1
            f1 = f2 = old_to_file[i1]
        elif i1 - 1 in old_to_file:
            f1 = f2 = old_to_file[i1 - 1] + 1
        else:
            raise MatchError("edit_conflict", f"{request.label}the place of the insertion "
                             "differs from the file", hint="re-read the region and resend")
        # File lines old text lacks right before or after the lines replaced (or at the point
        # of an insertion) that new text writes too: the caller and the file made the same
        # insertion, which is written once, with the file's bytes.
        mapped_lines = set(old_to_file.values()) | slipped
        pre = f1
        while pre > 0 and pre - 1 not in mapped_lines:
            pre -= 1
        post = f2
        while post < len(file_lines) and post not in mapped_lines:
            post += 1
        emitted: list[tuple[str, str]] | None = None
        if (pre, post) != (f1, f2):
            extra = list(range(pre, f1)) + list(range(f2, post))
            wanted = [key(x) for x in new_lines[j1:j2]]
            region = list(range(pre, post))
            blocks = difflib.SequenceMatcher(
                None, [key(file_lines[k]) for k in region], wanted, autojunk=False
            ).get_matching_blocks()
            from_file = {j + n: region[i + n] for i, j, size in blocks for n in range(size)}
            if set(extra) <= set(from_file.values()):
                # every extra line is among new text's lines: new text rewrites the whole
                # region, extras included, and writes the extras as the file has them
                emitted = [(file_lines[from_file[n]], model.eols[cand.start + from_file[n]])
                           if from_file.get(n, -1) in extra else (render(line), eol)
                           for n, line in enumerate(new_lines[j1:j2])]
                f1, f2 = pre, post
        if emitted is None:
            if (pre, post) != (f1, f2) and not _edits_line_for_line(
                    [key(x) for x in old_lines[i1:i2]], [key(x) for x in new_lines[j1:j2]]):
                # An insertion, deletion or rewrite next to a file line old text lacks: whether
                # that line is part of what changes (or on which side of it new lines go)
                # cannot be told.
                near = pre if pre < f1 else f2
                raise MatchError(
                    "edit_conflict", f"{request.label}old_text matched lines {cand.first_line}-"
                    f"{cand.last_line} only approximately, and the file has a line old_text "
                    f"lacks next to the lines you change: line {cand.start + near + 1} "
                    f"{file_lines[near].strip()[:SNIPPET_CHARS]!r}",
                    hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text "
                    "with the file's current text", details={"start_line": cand.first_line,
                                                             "end_line": cand.last_line,
                                                             "line": cand.start + near + 1})
            emitted = [(render(line), eol) for line in new_lines[j1:j2]]
            if op == "replace" and i2 - i1 == j2 - j1 and (f1, f2) == (mapped[0], mapped[-1] + 1):
                # A line changed in place keeps the file's spelling (curly quotes, "…", NBSP)
                # in the parts the edit did not touch (corpus cases P6 to-ascii+new).
                for k in range(i2 - i1):
                    kept = keep_file_spelling(old_lines[i1 + k], file_lines[f1 + k],
                                              emitted[k][0])
                    if kept is not None:
                        emitted[k] = (kept, eol)
        replacements.append((f1, f2, emitted))
    out: list[tuple[str, str]] = []
    cursor = 0
    for f1, f2, lines in sorted(replacements):
        if f1 < cursor:
            raise MatchError("edit_conflict", f"{request.label}two of your changes meet lines "
                             "the file has and old_text lacks", hint="re-read the region and "
                             "resend old_text with the file's current text")
        out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, f1)]
        out += lines
        cursor = f2
    out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, len(file_lines))]
    for k in range(len(out) - 1):
        if out[k][1] == "":  # the file's last line, no longer last: it needs an ending now
            out[k] = (out[k][0], eol)
    if out and out[-1][1] == "" and model.eols[cand.end - 1] != "":
        out[-1] = (out[-1][0], eol)
    elif out and out[-1][1] != "" and model.eols[cand.end - 1] == "":
        out[-1] = (out[-1][0], "")  # the file ends without a line break: it still does
    return out


def _edits_line_for_line(old: list[str], new: list[str]) -> bool:
    """Whether old lines become as many new lines, each an edit of its own (Indel >= 0.6)."""
    from rapidfuzz.distance import Indel

    return len(old) == len(new) > 0 and all(
        Indel.normalized_similarity(a, b, score_cutoff=0.6) >= 0.6
        for a, b in zip(old, new, strict=True))


class _Misfit(MatchError):
    """A near miss's reading whose alignment old text's indentation contradicts."""


def _leans_towards(file: str, mine: str, new: str) -> bool:
    """Whether ``mine`` is ``file`` part-way to ``new``: characters ``new`` brings, put in.

    Every edit from the file's line to old text's lies on a shortest path to new text's, and
    one of them adds or changes a character (dropping characters that new text drops anyway
    is a slip, not the edit's result leaking into old text).
    """
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(file, mine)
    if all(op.tag == "delete" for op in ops):
        return False
    return len(ops) + Levenshtein.distance(mine, new) == Levenshtein.distance(file, new)


_PAIRING_MIN_WORD_CHARS = 2


def _pairs_with(line: str, added: list[str], removed: list[str]) -> bool:
    """Whether one of ``added`` is ``line`` or a rewrite of it rather than of a removed line."""
    from rapidfuzz.distance import Indel

    key = LINE_KEYS["typography"]
    text = key(line)
    if sum(ch.isalnum() for ch in text) < _PAIRING_MIN_WORD_CHARS:
        return False  # ")" or a blank line is like many lines: no line pairs with it
    for new in added:
        score = Indel.normalized_similarity(text, key(new))
        if score >= 0.6 and all(Indel.normalized_similarity(key(old), key(new)) < score
                                for old in removed):
            return True
    return False


def merge_near_readings(model: FileModel, located: Located
                         ) -> tuple[list[tuple[str, str]], int]:
    """``_merge_near`` for each reading of which line is missing; they must agree.

    When lines equal up to indentation stand around the gap, any of them could be the one old
    text lacks: every reading must merge, to the same lines. A reading is set aside only when
    old text's own indentation contradicts it (``_Misfit``); a reading refused for anything
    else (its change meets the line it says is lacking) refuses the edit.
    """
    readings = [(located.alignment, located.dropped), *located.alternatives]
    results: list[tuple[list[tuple[str, str]], int]] = []
    first_error: MatchError | None = None
    misfit: MatchError | None = None
    for align, dropped in readings:
        located.alignment, located.dropped = align, dropped
        try:
            results.append(_merge_near(model, located))
        except _Misfit as err:
            misfit = misfit or err  # old text's indentation says it does not sit this way
        except MatchError as err:
            first_error = first_error or err
    located.alignment, located.dropped = readings[0]
    if first_error is not None:
        # One reading's change meets the line it says old text lacks, where another's does
        # not: which one is lacking decides where the change goes.
        raise first_error
    if not results:
        assert misfit is not None
        raise misfit
    if any(r != results[0] for r in results[1:]):
        raise near_conflict(located, "which of the look-alike lines there old_text lacks "
                             "cannot be told")
    return results[0]


def _merge_near(model: FileModel, located: Located) -> tuple[list[tuple[str, str]], int]:
    """The merge for a near miss: old -> new applied onto the window, line by line.

    Lines the caller kept keep the file's bytes (a typo in a kept line is the caller's, not
    the file's); a line old text has and the file lacks is never written, even where new text
    repeats it; the file line old text lacks is kept once: as it is when the edit does not
    touch it, in place of new text's copy of it when new text has it where the edit inserts,
    replaced when the edit inserts a rewrite of it there (a similar line). Anything else that
    touches it is refused (``edit_conflict``): the caller cannot have meant to drop a line it
    did not see. So is new text put where the missing line is a blank line or a bracket (fewer
    than two letters or digits: like too many lines to pair with one of them), and an edit
    that rewrites only lines the file lacks (was the line a slip, or invented?).
    """
    from rapidfuzz.distance import Indel

    cand = located.candidate
    request = located.request
    old_lines = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
    align = list(located.alignment)
    dropped = located.dropped
    end = cand.end
    if request.new and request.old.endswith("\n") != request.new.endswith("\n"):
        # As for the whole-line tiers: the edit removes (or adds) its last line break.
        if request.old.endswith("\n") and end < len(model.lines):
            old_lines = [*old_lines, model.lines[end]]
            new_lines = [*new_lines[:-1], new_lines[-1] + model.lines[end]]
            align.append(end)
            end += 1
        elif request.new.endswith("\n"):
            new_lines = [*new_lines, ""]
    key = LINE_KEYS["typography"]
    first = next((i for i, f in enumerate(align) if f is not None), 0)
    first_file = align[first]
    assert first_file is not None
    sent = [old_lines[i] for i, f in enumerate(align) if f is not None]
    old_lines, new_lines = uncut(model, first_file - first, old_lines, new_lines, align)
    if all(leading_ws(old_lines[i]) == leading_ws(model.lines[f])
           for i, f in enumerate(align) if f is not None and old_lines[i].strip()):
        render: Callable[[str], str] = str
    elif maps_onto(model, first_file - first, old_lines, align):
        render = reindenter(model, first_file - first, old_lines, align)
        if later_lines_in_file_columns(model, first_file, old_lines, new_lines):
            # One line sent less indented whose new text goes on in the file's own columns:
            # only the first line moves, and old text's line with it (as the whole-line
            # tiers read it), so a new line that repeats it is the file's.
            old_lines = [render(old_lines[0]), *old_lines[1:]]
            new_lines = [render(new_lines[0]), *new_lines[1:]]
            render = str
    else:
        near = near_conflict(located, "its indentation does not map onto the file's (lines "
                              "at one depth in old_text stand at different depths there)")
        raise _Misfit(near.code, near.message, hint=near.hint, details=near.details)
    del sent
    eol = region_eol(model, cand.start, end)
    out: list[tuple[str, str]] = []
    cursor = cand.start
    used_dropped = False

    def emit_file(upto: int) -> None:
        nonlocal cursor
        while cursor < upto:
            out.append((model.lines[cursor], model.eols[cursor]))
            cursor += 1

    def mapped_before(i: int) -> int:
        for k in range(i - 1, -1, -1):
            f = align[k]
            if f is not None:
                return f + 1
        return cand.start

    for op, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if op == "equal":
            for i in range(i1, i2):
                f = align[i]
                if f is None:
                    continue  # the file lacks this line: new text's copy is not written
                emit_file(f)
                emit_file(f + 1)
            continue
        mapped = [f for f in (align[i] for i in range(i1, i2)) if f is not None]
        if i2 > i1 and j2 > j1 and not mapped:
            # Only lines the file lacks rewritten: whether the rewrite belongs there (the
            # line was a slip of old text) or nowhere (it was invented) cannot be told.
            raise near_conflict(located, "the lines you change are not in the file: "
                                 f"{old_lines[i1].strip()[:SNIPPET_CHARS]!r}")
        r1, r2 = (mapped[0], mapped[-1] + 1) if mapped else (mapped_before(i1),) * 2
        added = new_lines[j1:j2]
        for i in range(i1, i2):
            f = align[i]
            if f is None or key(old_lines[i]) == key(model.lines[f]):
                continue
            # The line with the typo is one the edit changes: refused when it leans towards
            # new text (the result of the edit leaking into old text), not a slip.
            if any(_leans_towards(key(model.lines[f]), key(old_lines[i]), key(line))
                   for line in added):
                raise near_conflict(located, "the line you change differs from the file's "
                                     "in a way that looks like the edit's result: "
                                     f"{model.lines[f].strip()[:SNIPPET_CHARS]!r}")
        rendered = [(render(line), eol) for line in added]
        if dropped is not None and not used_dropped and (
                (r1 <= dropped <= r2 and (dropped < r2 or r1 == r2)) or
                (dropped in (r1 - 1, r2) and _pairs_with(model.lines[dropped], added,
                                                         old_lines[i1:i2]))):
            # The edit touches the file line old text lacks.
            text = key(model.lines[dropped])
            if r1 == r2 and sum(ch.isalnum() for ch in text) < _PAIRING_MIN_WORD_CHARS and \
                    any(key(line) != text for line in added):
                # New lines put where the file has a blank line or a bracket old text lacks,
                # one of them like it: is it that line, and on which side of it do the others
                # go? A line like many others cannot tell.
                raise near_conflict(located, "the edit touches a file line old_text lacks, "
                                     f"{model.lines[dropped].strip()!r}, which new text's "
                                     "lines cannot be told apart from")
            same = [k for k, line in enumerate(added) if key(line) == text]
            if same:
                k = same[0]
                if leading_ws(rendered[k][0]) == leading_ws(model.lines[dropped]):
                    rendered[k] = (model.lines[dropped], model.eols[dropped] or eol)
            elif not any(Indel.normalized_similarity(text, key(line)) >= 0.6 for line in added):
                raise near_conflict(located, "the edit touches a file line old_text lacks: "
                                     f"{model.lines[dropped].strip()[:SNIPPET_CHARS]!r}")
            r1, r2 = min(r1, dropped), max(r2, dropped + 1)
            used_dropped = True
        elif dropped is not None and not used_dropped and dropped in (r1 - 1, r2):
            # Right next to the lines the edit changes, a file line old text lacks: whether
            # the change meant to take it in cannot be told.
            raise near_conflict(located, "right next to the lines you change the file has a "
                                 f"line old_text lacks: {model.lines[dropped].strip()[:60]!r}")
        if mapped and mapped != list(range(r1, r1 + len(mapped))) and \
                [f for f in range(r1, r2) if f != dropped] != mapped:
            raise near_conflict(located, "the lines you change are not together in the file")
        emit_file(r1)
        out += rendered
        cursor = max(cursor, r2)
    emit_file(end)
    for k in range(len(out) - 1):
        if out[k][1] == "":
            out[k] = (out[k][0], eol)
    if out and out[-1][1] == "" and model.eols[end - 1] != "":
        out[-1] = (out[-1][0], eol)
    if out and model.eols[end - 1] == "" and out[-1][1] != "":
        out[-1] = (out[-1][0], "")
    return out, end
