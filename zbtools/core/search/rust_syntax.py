"""ripgrep's pattern syntax (Rust's ``regex`` crate) read into the python engine's ``regex``
module syntax (docs/internals/search.md#engines).

grep_search is modelled on ripgrep, and agents write ripgrep's syntax: ``\\x{54}``,
``[[:^digit:]]``, ``[a-z&&[^aeiou]]``, ``\\z``, ``\\<``, ``(?x)`` with spaces in classes,
``(?U)``, ``\\p{Greek}``. Read as Python syntax some of these fail and some silently mean
something else (``[a&&b]`` is a class of ``a``, ``&``, ``b``; ``a(?i)b`` is case-insensitive
throughout). ``translate`` parses a pattern with the Rust crate's grammar (regex-syntax 0.8, as
ripgrep 14 ships it) and writes the same matcher in ``regex`` syntax, copying what both read
alike so that most patterns come back unchanged. A pattern Rust's grammar rejects (lookaround,
backreferences, ``\\Z``, ``{,3}``) is not Rust syntax: ``translate`` returns None and the
pattern is read as Python syntax, as before. What Rust accepts but a search over decoded text
cannot express (``(?-u)`` matching single bytes: ``.``, ``\\W``, negated classes, ``\\xFF``)
fails with ``regex_error``, never a silent miss.

How ripgrep reads lines decides the anchors: in line mode each line is matched on its own, so
``\\A`` and ``\\z`` are the line's start and end; with ``multiline`` they are the file's.

Under ``-i`` the characters the ``regex`` module folds more widely than ripgrep (``FOLDS_APART``)
are matched as ripgrep matches them, in literals (``folded_apart``, also for fixed strings) and
in classes (``fold_as_rg``).

Map: ``translate`` (cached), ``Unsupported``; the parser ``_Parser`` (``alternation``,
``group``, ``escape``, ``bracket``), the class sets ``_Set`` and ``_ascii_set``;
``FOLDS_APART``, ``folded_apart``, ``fold_as_rg``.
"""

from __future__ import annotations

import functools


class NotRust(Exception):
    """The pattern is not in Rust's syntax (its grammar rejects it)."""


class Unsupported(Exception):
    """Rust syntax the python engine cannot match the same way; the message says why."""


# ripgrep's ASCII classes, [[:name:]]
POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\x0b\\x0c\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
META = frozenset("\\.+*?()|[]{}^$#&-~")
SPECIAL = {"a": "\x07", "f": "\x0c", "t": "\t", "n": "\n", "r": "\r", "v": "\x0b"}
ASCII_WORD = "[0-9A-Za-z_]"
PERL_ASCII = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\x0b\\x0c\\r "}
CLASS_ESCAPE = frozenset("\\]-[^&~|")


@functools.lru_cache(maxsize=256)
def translate(pattern: str, *, multiline: bool = False,
              ignore_case: bool = False) -> str | None:
    """``pattern`` (ripgrep's syntax) in ``regex`` syntax with the same matches, or None when
    it is not Rust syntax. Raises ``Unsupported`` for Rust syntax with no equivalent.
    ``multiline``: ripgrep's ``-U --multiline-dotall``; ``ignore_case``: its ``-i`` (the
    caller compiles with ``IGNORECASE``; ``(?-i)`` turns it off where it appears)."""
    try:
        return _Parser(pattern, multiline, ignore_case).parse()
    except (NotRust, RecursionError):  # Rust's parser refuses nesting past 250 levels too
        return None


class _Flags:
    __slots__ = ("R", "U", "i", "m", "s", "u")

    def __init__(self) -> None:
        self.i = self.s = self.U = self.R = False
        self.m = self.u = True  # ripgrep turns multi-line mode on

    def copy(self) -> _Flags:
        new = _Flags()
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        return new


class _Set:
    """A character class being built: a flat ``[...]`` body, or an expression that matches
    one character of the set (``expr``) when set operations or a negated part need one."""

    __slots__ = ("expr", "negated", "parts")

    def __init__(self, parts: list[str] | None = None, expr: str | None = None,
                 negated: bool = False) -> None:
        self.parts = parts if parts is not None else []
        self.expr = expr
        self.negated = negated

    def render(self) -> str:
        if self.expr is not None:
            return self.expr
        if not self.parts:
            return "[\\s\\S]" if self.negated else "(?!)"
        if self.negated and _complete(self.parts):
            return "(?!)"  # the regex module matches any character with [^\\s\\S]
        parts = self.parts
        if len(parts) > 1 and parts[-1] == "\\-":
            parts = [*parts[:-1], "-"]  # a last - is literal to both: [\\w-] stays as written
        return "[" + ("^" if self.negated else "") + "".join(parts) + "]"

    def negate(self) -> _Set:
        if self.expr is None:
            return _Set(list(self.parts), negated=not self.negated)
        return _Set(expr=f"(?:(?!{self.expr})[\\s\\S])")


def _complete(parts: list[str]) -> bool:
    """Whether the parts hold a class and its complement (``\\s`` and ``\\S``...)."""
    have = set(parts)
    return any(p.startswith("\\") and len(p) > 1 and p[1] in "dswp" and
               "\\" + p[1].upper() + p[2:] in have for p in have)


def _union(sets: list[_Set]) -> _Set:
    flat = [s for s in sets if s.expr is None and not s.negated]
    other = [s for s in sets if not (s.expr is None and not s.negated)]
    merged = _Set([p for s in flat for p in s.parts])
    if not other:
        return merged
    if len(other) == 1 and not flat:
        return other[0]
    alts = ([merged.render()] if flat else []) + [s.render() for s in other]
    return _Set(expr="(?:" + "|".join(alts) + ")")


def _binary(op: str, lhs: _Set, rhs: _Set) -> _Set:
    a, b = lhs.render(), rhs.render()
    if op == "&&":
        return _Set(expr=f"(?:(?={a}){b})")
    if op == "--":
        return _Set(expr=f"(?:(?!{b}){a})")
    return _Set(expr=f"(?:(?!{b}){a}|(?!{a}){b})")


# What the ``regex`` module's IGNORECASE pairs each of these with beyond Unicode's simple case
# folding, which ripgrep's ``-i`` uses: the Turkish dotted and dotless i, three Greek and
# ligature pairs.
_EXTRA_FOLDS = {"\u0130": "iI", "\u0131": "iI", "\u0390": "\u1fd3", "\u1fd3": "\u0390",
                "\u03b0": "\u1fe3", "\u1fe3": "\u03b0", "\ufb05": "\ufb06",
                "\ufb06": "\ufb05"}
# Every character those pairs involve, and exactly what ripgrep's ``-i`` matches it with.
FOLDS_APART = {**{c: c for c in _EXTRA_FOLDS}, "i": "iI", "I": "iI"}


def fold_as_rg(cls: str) -> str:
    """A class (``regex`` syntax) under IGNORECASE, kept from matching what only the regex
    module's folding adds: the characters of ``_EXTRA_FOLDS`` it does not hold as written, and
    their extra partners when it does."""
    import regex

    held = regex.compile(cls, regex.VERSION0)
    left_out: set[str] = set()
    for special, partners in _EXTRA_FOLDS.items():
        if held.fullmatch(special):
            left_out.update(p for p in partners if not held.fullmatch(p))
        else:
            left_out.add(special)
    if not left_out:
        return cls
    return f"(?:(?-i:(?![{''.join(sorted(left_out))}])){cls})"  # (the test itself exact)


def folded_apart(c: str) -> str | None:
    """``c`` under IGNORECASE as ripgrep's ``-i`` matches it (a case-sensitive group), for the
    characters of ``FOLDS_APART``; None for any other."""
    chars = FOLDS_APART.get(c)
    if chars is None:
        return None
    return f"(?-i:[{chars}])" if len(chars) > 1 else f"(?-i:{chars})"


def _lit(c: str) -> str:
    """One character as a ``regex`` literal."""
    if c.isalnum() or c == "_" or (ord(c) > 0x7f and c.isprintable()):
        return c
    if c in "\t\n\r\f\v":
        return {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\v": "\\v"}[c]
    if c.isprintable() and ord(c) < 0x80:
        return "\\" + c
    return f"\\x{{{ord(c):x}}}" if ord(c) > 0xff else f"\\x{ord(c):02x}"


def _class_lit(c: str) -> str:
    if c in CLASS_ESCAPE:
        return "\\" + c
    return _lit(c) if not c.isprintable() else c


class _Parser:
    """A recursive descent over regex-syntax 0.8's grammar (ripgrep 14), writing ``regex``
    syntax as it goes. Positions in errors are not kept: a pattern this parser rejects goes to
    the Python reading, whose own error has one."""

    def __init__(self, pattern: str, multiline: bool, ignore_case: bool) -> None:
        self.p = pattern
        self.global_i = ignore_case
        self.i = 0
        self.x = False  # ignore whitespace and # comments
        self.multiline = multiline
        self.names: set[str] = set()

    # -- reading -------------------------------------------------------------------------

    def eof(self) -> bool:
        return self.i >= len(self.p)

    def char(self) -> str:
        return self.p[self.i]

    def bump(self) -> bool:
        if self.eof():
            return False
        self.i += 1
        return not self.eof()

    def bump_space(self) -> None:
        if not self.x:
            return
        while not self.eof():
            c = self.char()
            if c.isspace():
                self.i += 1
            elif c == "#":
                end = self.p.find("\n", self.i)
                self.i = len(self.p) if end < 0 else end + 1
            else:
                break

    def bump_and_bump_space(self) -> bool:
        if not self.bump():
            return False
        self.bump_space()
        return not self.eof()

    def peek_space(self) -> str | None:
        """The next character after this one, past spaces in ``x`` mode (Rust's ``peek_space``,
        which stops at the first non-space character even inside a comment)."""
        j = self.i + 1
        if not self.x:
            return self.p[j] if j < len(self.p) else None
        in_comment = False
        while j < len(self.p):
            c = self.p[j]
            if c.isspace():
                j += 1
            elif not in_comment and c == "#":
                in_comment = True
                j += 1
            else:
                return c
        return None

    def starts(self, prefix: str) -> bool:
        if self.p.startswith(prefix, self.i):
            self.i += len(prefix)
            return True
        return False

    # -- the pattern ---------------------------------------------------------------------

    def parse(self) -> str:
        flags = _Flags()
        flags.i = self.global_i
        flags.s = self.multiline
        return self.alternation(flags, top=True)

    def alternation(self, flags: _Flags, *, top: bool = False) -> str:
        """Branches up to the closing ``)`` (not consumed) or the end; ``flags`` set by
        ``(?flags)`` last to the end of the group, across later branches."""
        flags = flags.copy()
        branches: list[str] = []
        # each item: (text, kind) with kind "atom", "rep", "flags" or "empty"
        items: list[tuple[str, str]] = []
        while True:
            self.bump_space()
            if self.eof():
                if not top:
                    raise NotRust("unclosed group")
                break
            c = self.char()
            if c == ")":
                if top:
                    raise NotRust("unopened group")
                break
            if c == "|":
                branches.append("".join(t for t, _ in items))
                items = []
                self.i += 1
            elif c == "(":
                items.append(self.group(flags))
            elif c == "[":
                items.append((self.wrap_case(self.bracket(flags), flags), "atom"))
            elif c in "?*+":
                self.repeat(items, c, flags)
            elif c == "{":
                self.counted(items, flags)
            else:
                items.append((self.primitive(flags), "atom"))
        branches.append("".join(t for t, _ in items))
        return "|".join(branches)

    def repeat(self, items: list[tuple[str, str]], op: str, flags: _Flags) -> None:
        if not items or items[-1][1] == "flags":
            raise NotRust("repetition operator missing expression")
        self.bump()
        greedy = True
        if not self.eof() and self.char() == "?":
            greedy = False
            self.bump()
        self.apply(items, op, greedy, flags)

    def counted(self, items: list[tuple[str, str]], flags: _Flags) -> None:
        if not items or items[-1][1] == "flags":
            raise NotRust("repetition operator missing expression")
        if not self.bump_and_bump_space():
            raise NotRust("unclosed counted repetition")
        low = self.decimal()
        high: int | None = low
        if self.eof():
            raise NotRust("unclosed counted repetition")
        if self.char() == ",":
            if not self.bump_and_bump_space():
                raise NotRust("unclosed counted repetition")
            high = None if self.char() == "}" else self.decimal()
        if self.eof() or self.char() != "}":
            raise NotRust("unclosed counted repetition")
        greedy = True
        if self.bump_and_bump_space() and self.char() == "?":
            greedy = False
            self.bump()
        if high is not None and low > high:
            raise NotRust("invalid repetition count range")
        op = f"{{{low}}}" if high == low else f"{{{low},}}" if high is None else \
            f"{{{low},{high}}}"
        self.apply(items, op, greedy, flags)

    def decimal(self) -> int:
        while not self.eof() and self.char().isspace():
            self.bump()
        digits = ""
        while not self.eof() and "0" <= self.char() <= "9":
            digits += self.char()
            self.bump_and_bump_space()
        while not self.eof() and self.char().isspace():
            self.bump_and_bump_space()
        if not digits or int(digits) > 0xffffffff:
            raise NotRust("repetition quantifier expects a valid decimal")
        return int(digits)

    def apply(self, items: list[tuple[str, str]], op: str, greedy: bool,
              flags: _Flags) -> None:
        text, kind = items.pop()
        # Python repeats neither a repetition nor an assertion: a group around them
        if kind == "rep" or text in ("^", "$", "\\b", "\\B", "\\A", "\\Z") or \
                text.startswith(("(?=", "(?!", "(?<=", "(?<!")):
            text = f"(?:{text})"
        if greedy == flags.U:  # (?U) swaps greedy and lazy
            op += "?"
        items.append((text + op, "rep"))

    def group(self, flags: _Flags) -> tuple[str, str]:
        self.bump()
        self.bump_space()
        for look in ("?=", "?!", "?<=", "?<!"):
            if self.p.startswith(look, self.i):
                raise NotRust("look-around is not supported")
        if self.starts("?P<") or self.starts("?<"):
            self.capture_name()
            return self.group_body(flags, "(", None), "atom"
        if self.starts("?"):
            if self.eof():
                raise NotRust("unclosed group")
            new = flags.copy()
            x = self.set_flags(new)
            end = self.char()
            self.bump()
            if end == ")":
                # flags for the rest of the group: change ``flags`` in place
                for name in _Flags.__slots__:
                    setattr(flags, name, getattr(new, name))
                if x is not None:
                    self.x = x
                return "", "flags"
            return self.group_body(new, "(?:", x), "atom"
        return self.group_body(flags, "(", None), "atom"

    def group_body(self, flags: _Flags, opening: str, x: bool | None) -> str:
        saved = self.x
        if x is not None:
            self.x = x
        body = self.alternation(flags)
        self.x = saved
        self.i += 1  # the )
        return opening + body + ")"

    def capture_name(self) -> None:
        start = self.i
        while not self.eof() and self.char() != ">":
            c = self.char()
            first = self.i == start
            if not (c == "_" or c.isalpha() or (not first and (c in ".[]" or c.isalnum()))):
                raise NotRust("invalid capture group character")
            self.i += 1
        if self.eof():
            raise NotRust("unclosed capture group name")
        name = self.p[start:self.i]
        self.i += 1
        if not name:
            raise NotRust("empty capture group name")
        if name in self.names:
            raise NotRust("duplicate capture group name")
        self.names.add(name)

    def set_flags(self, flags: _Flags) -> bool | None:
        """Read ``i-s`` up to ``:`` or ``)`` into ``flags``; the new ``x`` if it was set."""
        seen: set[str] = set()
        negate = False
        dangling = False
        x: bool | None = None
        while self.char() not in ":)":
            c = self.char()
            if c == "-":
                if negate:
                    raise NotRust("repeated flag negation")
                negate = dangling = True
            elif c in "imsUuRx":
                if c in seen:
                    raise NotRust("duplicate flag")
                seen.add(c)
                dangling = False
                if c == "x":
                    x = not negate
                else:
                    setattr(flags, c, not negate)
            else:
                raise NotRust("unrecognized flag")
            if not self.bump():
                raise NotRust("unexpected end of flags")
        if dangling:
            raise NotRust("dangling flag negation operator")
        if not seen and not negate and self.char() == ")":
            raise NotRust("repetition operator missing expression")
        return x

    # -- primitives ----------------------------------------------------------------------

    def primitive(self, flags: _Flags) -> str:
        c = self.char()
        if c == "\\":
            return self.escape(flags, in_class=False)
        self.i += 1
        if c == ".":
            return self.dot(flags)
        if c == "^":
            return self.anchor("^", flags)
        if c == "$":
            return self.anchor("$", flags)
        return self.literal(c, c, flags)

    def literal(self, c: str, source: str, flags: _Flags) -> str:
        if not flags.u and ord(c) > 0x7f and source.startswith("\\"):
            raise Unsupported(f"(?-u) makes {source} the single byte {ord(c):#04x}, which a "
                              "search over the text as UTF-8 cannot match; drop (?-u)")
        text = source if self.same_literal(c, source) else _lit(c)
        if not flags.u and c.lower() != c.upper():
            # ASCII case folding only, as Rust's (?-u)
            return self.exact(f"[{c.lower()}{c.upper()}]" if flags.i and c.isascii() else text)
        if flags.i and c in FOLDS_APART:
            return folded_apart(c) or text
        return self.wrap_case(text, flags) if c.lower() != c.upper() else text

    def exact(self, text: str) -> str:
        """``text`` matched with its case as written, even under the caller's IGNORECASE."""
        return f"(?-i:{text})" if self.global_i else text

    @staticmethod
    def same_literal(c: str, source: str) -> bool:
        if len(source) == 1:
            return c not in ".^$*+?{[\\|()"
        if source[1] in META or (len(source) == 2 and source[1] in SPECIAL):
            return True
        return len(source) in (4, 6, 10) and source[1] in "xuU" and "{" not in source

    def wrap_case(self, text: str, flags: _Flags) -> str:
        if flags.i == self.global_i or not flags.u:
            return text
        return f"(?{'i' if flags.i else '-i'}:{text})"

    def dot(self, flags: _Flags) -> str:
        if not flags.u:
            raise Unsupported("(?-u) makes . match any single byte, which a search over the "
                              "text as UTF-8 cannot do; drop (?-u)")
        if flags.s:
            return "." if self.multiline else "(?s:.)"
        if flags.R:
            return "[^\\r\\n]"
        return "[^\\n]" if self.multiline else "."

    def anchor(self, which: str, flags: _Flags) -> str:
        """``^ $ \\A \\z`` as ripgrep reads them (see the module docstring)."""
        line = (which in "^$" and flags.m) or not self.multiline
        start = which in ("^", "A")
        if not line:
            return "\\A" if start else "\\Z"
        if flags.R and which in "^$":
            return ("(?:(?<![^\\r\\n])(?<!\\r(?=\\n)))" if start else
                    "(?:(?<!\\r(?=\\n))(?=[\\r\\n]|\\Z))")
        return "^" if start else "$"

    def word(self, flags: _Flags) -> str:
        return "\\w" if flags.u else self.exact(ASCII_WORD)

    def escape(self, flags: _Flags, *, in_class: bool) -> str:
        """An escape, as ``regex`` text; raises ``NotRust`` for one Rust rejects."""
        start = self.i
        if not self.bump():
            raise NotRust("incomplete escape")
        c = self.char()
        if c in "01234567" or c in "89":
            raise NotRust("backreferences are not supported")
        if c in "xuU":
            value = self.hex(c)
            if in_class:
                return self._class_char(value, self.p[start:self.i], flags)
            return self.literal(value, self.p[start:self.i], flags)
        if c in "pP":
            text = self.unicode_class(flags)
            return text if in_class else self.wrap_case(text, flags)
        if c in "dswDSW":
            self.i += 1
            return self.perl(c, flags, in_class=in_class)
        self.i += 1
        if c in META or (c.isascii() and not c.isalnum() and c not in "<>"):
            return self._class_char(c, self.p[start:self.i], flags) if in_class else \
                self.literal(c, self.p[start:self.i], flags)
        if c in SPECIAL:
            return self._class_char(SPECIAL[c], self.p[start:self.i], flags) if in_class \
                else self.literal(SPECIAL[c], self.p[start:self.i], flags)
        if in_class:
            raise NotRust("invalid escape in a class")
        if c in "Az":
            return self.anchor("A" if c == "A" else "z", flags)
        w = self.word(flags)
        if c == "<":
            return f"(?:(?<!{w})(?={w}))"
        if c == ">":
            return f"(?:(?<={w})(?!{w}))"
        if c == "B":
            return "\\B" if flags.u else f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"
        if c == "b":
            special = self.special_boundary(w)
            if special is not None:
                return special
            return "\\b" if flags.u else f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))"
        raise NotRust("unrecognized escape")

    def special_boundary(self, w: str) -> str | None:
        """``\\b{start}`` and its kin, or None when the ``{`` starts a repetition."""
        if self.eof() or self.char() != "{":
            return None
        back = self.i
        if not self.bump_and_bump_space():
            raise NotRust("unexpected end after \\b{")
        name = ""
        if not (self.char().isascii() and (self.char().isalpha() or self.char() == "-")):
            self.i = back
            return None
        while not self.eof() and self.char().isascii() and (self.char().isalpha()
                                                            or self.char() == "-"):
            name += self.char()
            self.bump_and_bump_space()
        if self.eof() or self.char() != "}":
            raise NotRust("special word boundary is unclosed")
        self.i += 1
        forms = {"start": f"(?:(?<!{w})(?={w}))", "end": f"(?:(?<={w})(?!{w}))",
                 "start-half": f"(?<!{w})", "end-half": f"(?!{w})"}
        if name not in forms:
            raise NotRust("unrecognized special word boundary")
        return forms[name]

    def hex(self, kind: str) -> str:
        digits = {"x": 2, "u": 4, "U": 8}[kind]
        if not self.bump_and_bump_space():
            raise NotRust("incomplete hex escape")
        text = ""
        if self.char() == "{":
            while self.bump_and_bump_space() and self.char() != "}":
                if self.char() not in "0123456789abcdefABCDEF":
                    raise NotRust("invalid hexadecimal digit")
                text += self.char()
            if self.eof():
                raise NotRust("unclosed hex escape")
            self.bump_and_bump_space()
            if not text:
                raise NotRust("empty hex escape")
        else:
            for n in range(digits):
                if n and not self.bump_and_bump_space():
                    raise NotRust("incomplete hex escape")
                if self.char() not in "0123456789abcdefABCDEF":
                    raise NotRust("invalid hexadecimal digit")
                text += self.char()
            self.bump_and_bump_space()
        value = int(text, 16)
        if value > 0x10ffff or 0xd800 <= value <= 0xdfff:
            raise NotRust("not a Unicode scalar value")
        return chr(value)

    def unicode_class(self, flags: _Flags) -> str:
        negated = self.char() == "P"
        if not self.bump_and_bump_space():
            raise NotRust("incomplete \\p")
        if self.char() == "{":
            name = ""
            while self.bump_and_bump_space() and self.char() != "}":
                name += self.char()
            if self.eof():
                raise NotRust("unclosed \\p{")
            self.i += 1
        else:
            name = self.char()
            if name == "\\":
                raise NotRust("invalid Unicode class")
            self.bump_and_bump_space()
        if not flags.u:
            raise NotRust("Unicode classes are not allowed under (?-u)")
        name = "".join(name.split())
        if "!=" in name:
            negated = not negated
            name = name.replace("!=", "=", 1)
        elif ":" in name:
            name = name.replace(":", "=", 1)
        if not name or any(ch in name for ch in "{}\\"):
            raise NotRust("invalid Unicode class")
        return ("\\P{" if negated else "\\p{") + name + "}"

    def perl(self, c: str, flags: _Flags, *, in_class: bool = False) -> str:
        if flags.u:
            return "\\" + c
        if in_class:  # a byte set, checked whole by ascii_class
            return "[^" + PERL_ASCII[c.lower()] + "]" if c.isupper() else \
                "[" + PERL_ASCII[c] + "]"
        if c.isupper():
            raise Unsupported(f"(?-u) makes \\{c} match any single byte outside its class, "
                              "which a search over the text as UTF-8 cannot do; drop (?-u) "
                              f"or use [^...] without (?-u)")
        return self.exact("[" + PERL_ASCII[c] + "]")

    # -- classes -------------------------------------------------------------------------

    @staticmethod
    def _class_char(c: str, source: str, flags: _Flags) -> str:
        """A literal inside a class: a marker ``\\0`` + the character, kept for ranges."""
        return "\0" + c

    def bracket(self, flags: _Flags) -> str:
        node = self.bracket_node(flags)
        if not flags.u:
            return self.ascii_class(node, flags)
        return fold_as_rg(node.render()) if flags.i else node.render()

    def bracket_node(self, flags: _Flags) -> _Set:
        """One ``[...]``, nested classes and set operations included (the parser is at ``[``).
        Rust's rules: ``^`` first negates; any ``-`` first, then a ``]`` first, are literal;
        ``&&``, ``--`` and ``~~`` bind less than the union and apply left to right."""
        if not self.bump_and_bump_space():
            raise NotRust("unclosed class")
        negated = False
        if self.char() == "^":
            negated = True
            if not self.bump_and_bump_space():
                raise NotRust("unclosed class")
        items: list[_Set] = []
        while self.char() == "-":
            items.append(_Set([_class_lit("-")]))
            if not self.bump_and_bump_space():
                raise NotRust("unclosed class")
        if not items and self.char() == "]":
            items.append(_Set([_class_lit("]")]))
            if not self.bump_and_bump_space():
                raise NotRust("unclosed class")
        lhs: _Set | None = None
        op: str | None = None
        while True:
            self.bump_space()
            if self.eof():
                raise NotRust("unclosed class")
            c = self.char()
            two = self.p[self.i:self.i + 2]
            if c == "[":
                posix = self.posix_class()
                items.append(posix if posix is not None else self.bracket_node(flags))
            elif c == "]":
                self.i += 1
                current = _union(items)
                node = current if op is None or lhs is None else _binary(op, lhs, current)
                return node.negate() if negated else node
            elif two in ("&&", "--", "~~"):
                self.i += 2
                current = _union(items)
                lhs = current if op is None or lhs is None else _binary(op, lhs, current)
                op = two
                items = []
            else:
                items.append(self.class_range(flags))

    def posix_class(self) -> _Set | None:
        """``[:alpha:]`` or ``[:^alpha:]`` at ``[`` inside a class, else None (unmoved)."""
        back = self.i
        text = self.p[self.i:]
        end = text.find(":]", 2)
        if not text.startswith("[:") or end < 0:
            return None
        name = text[2:end]
        negated = name.startswith("^")
        if negated:
            name = name[1:]
        if name not in POSIX or ":" in name:
            self.i = back
            return None
        self.i += end + 2
        node = _Set([POSIX[name]])
        return node.negate() if negated else node

    def class_range(self, flags: _Flags) -> _Set:
        first = self.class_item(flags)
        self.bump_space()
        if self.eof():
            raise NotRust("unclosed class")
        if self.char() != "-" or self.peek_space() in ("]", "-"):
            if first.startswith("\0"):
                return _Set([_class_lit(first[1])])
            if first.startswith("[^"):  # (?-u) \W \D \S: a negated byte set
                return _Set([first[2:-1]], negated=True)
            return _Set([first[1:-1] if first.startswith("[") else first])
        if not self.bump_and_bump_space():
            raise NotRust("unclosed class")
        second = self.class_item(flags)
        if not (first.startswith("\0") and second.startswith("\0")):
            raise NotRust("invalid range boundary, must be a literal")
        if first[1] > second[1]:
            raise NotRust("invalid class range")
        return _Set([_class_lit(first[1]) + "-" + _class_lit(second[1])])

    def class_item(self, flags: _Flags) -> str:
        """``\\0`` + a literal character, or the ``regex`` text of a class escape."""
        if self.char() == "\\":
            return self.escape(flags, in_class=True)
        c = self.char()
        self.i += 1
        return "\0" + c

    def ascii_class(self, node: _Set, flags: _Flags) -> str:
        """Under ``(?-u)`` a class is a set of bytes: exact when every member is ASCII."""
        import regex

        body = node.render()
        try:  # (?i) folds each operand before the set operations, as Rust does
            compiled = regex.compile(body, regex.VERSION0 | (regex.IGNORECASE if flags.i else 0))
        except regex.error:
            raise NotRust("invalid class") from None
        members = {b for b in range(256) if compiled.fullmatch(chr(b))}
        if any(b > 0x7f for b in members):
            raise Unsupported("(?-u) makes this class match single bytes outside ASCII, which "
                              "a search over the text as UTF-8 cannot do; drop (?-u)")
        return self.exact(_Set([_class_lit(chr(b)) for b in sorted(members)]).render())
