"""Which patterns the native engine searches, and how ripgrep is asked for them.

Only what both read the same way runs there (``plan``): line-local patterns (``line_local``).
Those that cannot match a character the python engine decodes from an invalid byte (no ``.``,
negated classes, ``\\W \\S \\D``, U+FFFD or U+FEFF in the pattern) and ask for no word
boundary (``\\b \\B``, whole words) go to ripgrep as they are, and so do those whose only such
part is a ``.`` repeated without bound, sent as any byte but a newline (``BYTE_DOT``;
``byte_dots`` says why a line then matches alike, and when not);
a ``^`` pattern would miss line 1 of a file starting with a byte-order mark (the python engine
drops it), so such patterns also search for U+FEFF, and every file with that character is
searched again by the python engine (content mode only). The others go to ripgrep as a literal
of at least 3 characters that every match holds (``required_literal``), and the python regex
decides which of those lines match: exact, since a match lies in one line and every line with
a match holds the literal.

Map: ``Plan`` (what ``plan`` decided), ``usable``, ``Reading``/``reading`` (how a pattern meets
bytes), ``byte_dots``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Plan:
    """How ripgrep searches for a pattern: the pattern itself (``anchored``: it holds a ``^``,
    so U+FEFF is searched for too; ``pattern``: rewritten for ripgrep by ``byte_dots``), or a
    ``literal`` every match holds, whose lines the python regex then decides (patterns whose
    ``.``, negated classes, ``\\W \\S \\D`` would meet an invalid byte otherwise than the
    python engine's U+FFFD)."""

    def __init__(self, *, anchored: bool = False, literal: str | None = None,
                 pattern: str | None = None) -> None:
        self.anchored = anchored
        self.literal = literal
        self.pattern = pattern


def plan(pattern: str, *, fixed_strings: bool, multiline: bool, per_file: bool,
         word: bool = False) -> Plan | None:
    """How the native engine searches for ``pattern``, or None where it cannot answer exactly
    what the python engine would (see the module docstring). ``word``: whole words only.

    A word boundary (``\\b \\B``, ``word``) goes the literal way: ripgrep decodes the
    character before a position from the last byte within 4 that can start one, so stray
    continuation bytes are read as the end of the character before them (``a\\x80`` ends in
    ``a``, ``é\\x80`` in ``é``), where the python engine's text has U+FFFD, no word character."""
    from zbtools.core.search.engine import line_local, plain_text, required_literal

    if not line_local(pattern, fixed_strings=fixed_strings, multiline=multiline):
        return None
    if "\ufffd" in pattern or "\ufeff" in pattern:
        return None
    if fixed_strings:
        if not word:
            return Plan()
        return Plan(literal=pattern) if pattern else None
    if plain_text(pattern) and not word:
        return Plan()  # what reading() finds in text alone, without its parse
    read = reading(pattern)
    if read is not None and not read.boundary and not word and \
            not (read.anchored and per_file):
        if read.dot_runs == 0:
            return Plan(anchored=read.anchored)
        rewritten = None if read.plus_runs > 1 else byte_dots(pattern, read.dot_runs)
        if rewritten is not None:
            return Plan(anchored=read.anchored, pattern=rewritten)
    literal = required_literal(pattern)
    return Plan(literal=literal.decode("utf-8")) if literal is not None else None


def usable(pattern: str, *, fixed_strings: bool, multiline: bool, per_file: bool,
           word: bool = False) -> bool:
    """Whether the native engine can search for ``pattern`` (``plan``)."""
    return plan(pattern, fixed_strings=fixed_strings, multiline=multiline,
                per_file=per_file, word=word) is not None


class Reading:
    """What ``reading`` found in a pattern: whether it holds a ``^`` (``anchored``), how many
    ``.`` repeat without bound (``.*``, ``.+``, greedy or lazy: ``dot_runs``; ``plus_runs``
    of them at least once), and whether it holds a word boundary (``\\b \\B``)."""

    def __init__(self) -> None:
        self.anchored = False
        self.dot_runs = 0
        self.plus_runs = 0
        self.boundary = False


def reading(pattern: str) -> Reading | None:
    """How ``pattern`` (one ``line_local`` accepted) meets bytes, or None when a part of it
    other than a ``.`` that repeats without bound could match a character decoded from an
    invalid byte (another ``.``, a negated class, ``\\W \\S \\D``), or such a ``.`` stands
    inside a repeated group (``(.+){2}`` would ask for two of them)."""
    from zbtools.core.search.engine import parse_stdlib

    got = parse_stdlib(pattern)
    if got is None:
        return None
    parser, parsed = got
    unsafe = {parser.CATEGORY_NOT_DIGIT, parser.CATEGORY_NOT_WORD, parser.CATEGORY_NOT_SPACE}
    found = Reading()

    def alike(items: Sequence[tuple[Any, Any]], repeated: bool = False) -> bool:
        for op, arg in items:
            if op in (parser.MAX_REPEAT, parser.MIN_REPEAT):
                low, high, body = arg
                if list(body) == [(parser.ANY, None)] and low in (0, 1) and \
                        high == parser.MAXREPEAT and not repeated:
                    found.dot_runs += 1
                    found.plus_runs += low
                elif not alike(body, True):
                    return False
            elif op is parser.ANY or op is parser.NOT_LITERAL or op is parser.NEGATE or \
                    (op is parser.CATEGORY and arg in unsafe):
                return False
            elif op is parser.AT:
                found.boundary |= arg in (parser.AT_BOUNDARY, parser.AT_NON_BOUNDARY)
                found.anchored |= arg is parser.AT_BEGINNING
            elif (op is parser.IN and not alike(arg, repeated)) or \
                    (op is parser.BRANCH and not all(alike(b, repeated) for b in arg[1])) or \
                    (op is parser.SUBPATTERN and not alike(arg[3], repeated)):
                return False
        return True

    return found if alike(parsed.data) else None


# Any byte but a newline: a character, or any byte past ASCII. Not the class of those same
# bytes, (?-u:.): repeated, it makes ripgrep 14.1 report matches shorter than the pattern
# allows next to a literal with several forms (``(?-u:.)+a[ab]`` finds "aa" in "aa1",
# ``ab(?-u:.)*b`` with -i finds "ab").
BYTE_DOT = "(?:.|(?-u:[\\x80-\\xff]))"


def byte_dots(pattern: str, runs: int) -> str | None:
    """``pattern`` for ripgrep with each of its ``runs`` unbounded ``.`` repeats (``.*``,
    ``.+``, greedy or lazy) written ``BYTE_DOT``; None when the dots found in its text are not
    exactly those (a ``.`` standing otherwise, or one the text scan misreads).

    Why this reads alike on both sides: the python engine decodes each invalid byte sequence
    to one U+FFFD, which its ``.`` matches, and ripgrep's Unicode ``.`` matches no invalid
    byte. Every other part of such a pattern (``reading``) matches valid characters only, and
    a valid character never starts inside a sequence the decoder replaced (one replaced
    sequence is the start of a valid one: it ends at the first byte that cannot continue
    it). So the other parts meet the same characters at the same places; in between, a
    stretch of adjacent dot runs covers a run of characters without a newline on one side
    exactly when it covers the run of bytes they were decoded from on the other, a non-empty
    one too when one of them is a ``.+`` (all of it can go to that one): a line matches on
    one side exactly when it matches on the other. Counting is where the two differ: a single
    ``.``, ``.?`` or ``.{n}``, two ``.+`` (``.+.+`` is two bytes against two characters) or
    one in a repeated group, and a word boundary asked between two bytes of one character;
    the caller leaves those patterns to the literal plan (``reading`` tells them)."""
    out: list[str] = []
    found = i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif ch == "[":  # a class: a "]" right after "[" or "[^" is a member
            end = i + 1
            end += pattern.startswith("^", end)
            end += pattern.startswith("]", end)
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            out.append(pattern[i:end + 1])
            i = end + 1
        elif ch == ".":
            if pattern[i + 1:i + 2] not in ("*", "+"):
                return None
            out.append(BYTE_DOT)
            found += 1
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out) if found == runs else None
