"""Line alignment and unified diffs, without importing ``difflib``.

``line_opcodes(a, b)`` returns ``difflib.SequenceMatcher(None, a, b, autojunk=False)``-style
opcodes: the common head and tail are trimmed and the middle aligned by a longest common
subsequence; a middle over ``LCS_MAX_CELLS`` pairs is cut into pieces at the lines that stand
once on each side (as patience diff does), so the work stays linear where difflib's is
quadratic (benchmarks/README.md#figures-behind-the-code). The alignment is always valid, may
differ from difflib's among equally long ones, and depends on the middle only, which lets a
diff be made from the lines around the changes. ``unified_diff`` renders difflib's format.
Never raises.

Map: ``line_opcodes``, ``unified_diff``, ``excerpt_diff``. The bottom of ``matching``: it
imports no other part.
"""

from __future__ import annotations

Opcode = tuple[str, int, int, int, int]
LCS_MAX_CELLS = 40_000
ANCHOR_WORK = 8
ANCHOR_DEPTH = 64


def line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """``SequenceMatcher.get_opcodes`` for line lists, without difflib: the common head and
    tail are trimmed, and a middle of at most ``LCS_MAX_CELLS`` line pairs is aligned by a
    longest common subsequence, a bigger one in pieces between lines unique to both sides."""
    n, m = len(a), len(b)
    head, tail = _common_ends(a, b)
    a_mid, b_mid = a[head:n - tail], b[head:m - tail]
    ops: list[Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    budget = [ANCHOR_WORK * (len(a_mid) + len(b_mid))]
    ops += _anchored(a_mid, b_mid, head, head, budget, 0)
    if tail:
        ops.append(("equal", n - tail, n, m - tail, m))
    merged: list[Opcode] = []
    for op in ops:  # adjacent equal runs become one, as difflib reports them
        if merged and op[0] == "equal" == merged[-1][0]:
            merged[-1] = ("equal", merged[-1][1], op[2], merged[-1][3], op[4])
        else:
            merged.append(op)
    return merged


def _anchored(a: list[str], b: list[str], da: int, db: int, budget: list[int],
              depth: int) -> list[Opcode]:
    """Opcodes of a middle: by LCS when small, else in pieces between unique common lines
    (each piece's common head and tail trimmed first). ``budget`` is the lines still allowed
    to be counted; past it, or ``ANCHOR_DEPTH`` levels down, a big piece is one replace."""
    n, m = len(a), len(b)
    if n * m <= LCS_MAX_CELLS:
        return _lcs_opcodes(a, b, da, db)
    budget[0] -= n + m
    anchors = _unique_anchors(a, b) if budget[0] >= 0 and depth < ANCHOR_DEPTH else []
    if not anchors:
        return [("replace", da, da + n, db, db + m)]
    ops: list[Opcode] = []
    i0 = j0 = 0
    for i, j in [*anchors, (n, m)]:
        piece_a, piece_b = a[i0:i], b[j0:j]
        head, tail = _common_ends(piece_a, piece_b)
        if head:
            ops.append(("equal", da + i0, da + i0 + head, db + j0, db + j0 + head))
        ops += _anchored(piece_a[head:len(piece_a) - tail], piece_b[head:len(piece_b) - tail],
                         da + i0 + head, db + j0 + head, budget, depth + 1)
        if tail:
            ops.append(("equal", da + i - tail, da + i, db + j - tail, db + j))
        if i < n:
            ops.append(("equal", da + i, da + i + 1, db + j, db + j + 1))
        i0, j0 = i + 1, j + 1
    return ops


def _unique_anchors(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """(i, j) of the lines that stand once in ``a`` and once in ``b``: the longest run of
    them in the same order in both (longest increasing subsequence, O(k log k))."""
    from bisect import bisect_left

    count_a: dict[str, int] = {}
    for line in a:
        count_a[line] = count_a.get(line, 0) + 1
    at_b: dict[str, int] = {}
    for j, line in enumerate(b):
        at_b[line] = -1 if line in at_b else j
    pairs = [(i, at_b[line]) for i, line in enumerate(a)
             if count_a[line] == 1 and at_b.get(line, -1) >= 0]
    ends: list[int] = []  # ends[k]: the smallest j ending an increasing run of length k + 1
    ends_at: list[int] = []  # the index in pairs of that run's last pair
    previous: list[int] = []
    for k, (_, j) in enumerate(pairs):
        pos = bisect_left(ends, j)
        if pos == len(ends):
            ends.append(j)
            ends_at.append(k)
        else:
            ends[pos] = j
            ends_at[pos] = k
        previous.append(ends_at[pos - 1] if pos else -1)
    run: list[tuple[int, int]] = []
    k = ends_at[-1] if ends_at else -1
    while k >= 0:
        run.append(pairs[k])
        k = previous[k]
    run.reverse()
    return run


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their head, then at their tail (not overlapping)."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    return head, tail


def _lcs_opcodes(a: list[str], b: list[str], da: int, db: int) -> list[Opcode]:
    n, m = len(a), len(b)
    if not n and not m:
        return []
    if not n:
        return [("insert", da, da, db, db + m)]
    if not m:
        return [("delete", da, da + n, db, db)]
    # lengths[i][j]: LCS of a[i:] and b[j:]
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lengths[i], lengths[i + 1]
        ai = a[i]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if ai == b[j] else max(below[j], row[j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    ops: list[Opcode] = []
    i = j = 0
    for pi, pj in [*pairs, (n, m)]:
        if i < pi and j < pj:
            ops.append(("replace", da + i, da + pi, db + j, db + pj))
        elif i < pi:
            ops.append(("delete", da + i, da + pi, db + j, db + j))
        elif j < pj:
            ops.append(("insert", da + i, da + i, db + j, db + pj))
        if pi < n:
            if ops and ops[-1][0] == "equal" and ops[-1][2] == da + pi:
                _, s1, _, s2, _ = ops[-1]
                ops[-1] = ("equal", s1, da + pi + 1, s2, db + pj + 1)
            else:
                ops.append(("equal", da + pi, da + pi + 1, db + pj, db + pj + 1))
        i, j = pi + 1, pj + 1
    return ops


def _range(start: int, stop: int, offset: int) -> str:
    """difflib's unified range format: "N" for one line, "N,len" else (N-1 when empty)."""
    beginning, length = start + 1 + offset, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _grouped(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """``SequenceMatcher.get_grouped_opcodes``: hunks with ``n`` lines of context."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        lo_a, lo_b = i1, j1
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            lo_a, lo_b = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, lo_a, i2, lo_b, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _lines(text: str) -> list[str]:
    """Lines with their ends, broken at ``\n`` only: a lone CR (or any other character
    ``splitlines`` breaks at) is part of its line, as the matcher sees it."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


TRIM_CHARS = 64 * 1024


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of ``a`` and ``b`` (compared a chunk at a time, in C)."""
    n = min(len(a), len(b))
    lo, step = 0, 1 << 16
    while lo < n and a[lo:lo + step] == b[lo:lo + step]:
        lo += step
    hi = min(lo + step, n)
    while lo < hi:  # the first difference is in [lo, hi]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of ``a`` and ``b``, at most ``limit``."""
    la, lb = len(a), len(b)
    n = min(la, lb, limit)
    lo, step = 0, 1 << 16
    while lo < n:
        hi = min(lo + step, n)
        if a[la - hi:la - lo] != b[lb - hi:lb - lo]:
            break
        lo = hi
    else:
        return n
    hi = min(lo + step, n)
    while lo < hi:  # the last difference is within [lo, hi] characters from the end
        mid = (lo + hi + 1) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _lines_in(text: str) -> int:
    """``len(_lines(text))`` for a text that ends with a line break."""
    return text.count("\n")


def _trimmed(before: str, after: str, context: int) -> tuple[str, str, int]:
    """``before`` and ``after`` without their common whole lines beyond ``context`` lines of
    the first and last difference, and the number of lines cut from the top.

    The cuts are where ``line_opcodes`` would find them, or further out: at the top, the line
    of the first different character; at the bottom, the first line wholly inside the common
    suffix (aligned from the end, as the common tail of lines is), but never above the top
    cut. The middle ``line_opcodes`` aligns is then the same, and its alignment depends on
    nothing else, so the diff is the same too."""
    head = _common_prefix(before, after)
    top = before.rfind("\n", 0, head) + 1  # the first line that differs
    cut = top
    for _ in range(context):
        if cut == 0:
            break
        cut = before.rfind("\n", 0, cut - 1) + 1
    tail = _common_suffix(before, after, min(len(before), len(after)))
    end_b, end_a = len(before), len(after)
    shift = end_b - end_a
    newline = before.find("\n", end_b - tail)
    stop = newline + 1 if newline != -1 else end_b  # the first common tail line
    # The tail never reaches above the first different line, in either text.
    stop = max(stop, top, top + shift)
    for _ in range(context):
        newline = before.find("\n", stop)
        if newline == -1:
            stop = end_b
            break
        stop = newline + 1
    if stop < end_b:
        end_a -= end_b - stop
        end_b = stop
    return before[cut:end_b], after[cut:end_a], _lines_in(before[:cut]) if cut else 0


def unified_diff(path: str, before: str, after: str, context: int = 3,
                 first_line: int = 1) -> str:
    """A unified diff in difflib's format, from ``line_opcodes`` (no difflib import on the hot
    path; the common head and tail are trimmed first, so a small change in a big file costs
    little). ``first_line`` numbers the hunks when ``before`` is an excerpt
    starting at that line. Texts over ``TRIM_CHARS`` lose their common whole lines beyond
    the context first, compared in C (``_trimmed``), so the lines of a big file are never
    split or compared one by one."""
    if before == after:
        return ""
    if len(before) + len(after) > TRIM_CHARS:
        few_before, few_after, skipped = _trimmed(before, after, context)
        a, b = _lines(few_before), _lines(few_after)
        first_line += skipped
    else:
        a, b = _lines(before), _lines(after)
    offset = first_line - 1
    out: list[str] = []
    for group in _grouped(line_opcodes(a, b), context):
        if not out:
            out += [f"--- a/{path}\n", f"+++ b/{path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2], offset)} "
                   f"+{_range(first[3], last[4], offset)} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in out)


def excerpt_diff(path: str, before: str, after: str, first_line: int, at_start: bool,
                 at_end: bool, context: int = 3) -> str | None:
    """``unified_diff`` of two excerpts that stand for whole texts identical outside them,
    when it is provably the whole texts' diff, else None (the caller diffs the whole texts).
    The excerpts start and end on line boundaries; ``at_start``/``at_end``: they begin at the
    texts' start, end at their end.

    Proof: when the excerpts' common head of lines stops at a line that differs (not at the
    shorter excerpt's end), the whole texts' common head is the lines before the excerpts
    plus it; their common tail, taken after the head and bounded by it, is then the lines
    after the excerpts plus the excerpts' own (which stops at a difference or at the same
    bound). So the middle ``line_opcodes`` aligns is the same, and so are its opcodes; with
    ``context`` common lines inside each end (or the text's own end), the hunks show the
    same lines (the alignment of a middle depends on nothing else)."""
    if not excerpt_is_whole(before, after, at_start, at_end, context):
        return None
    return unified_diff(path, before, after, context, first_line)


def excerpt_is_whole(before: str, after: str, at_start: bool, at_end: bool,
                     context: int = 3) -> bool:
    """Whether ``excerpt_diff`` of these excerpts is the whole texts' diff (its proof)."""
    if at_start and at_end:
        return True  # the excerpts are the whole texts
    a, b = _lines(before), _lines(after)
    head, tail = _common_ends(a, b)
    return not (head >= min(len(a), len(b)) or (head < context and not at_start) or
                (tail < context and not at_end))
