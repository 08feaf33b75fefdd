"""Words of an error or a warning put in a tool's own vocabulary: names renamed, advice dropped.

A message or a hint written once, by the code that raises it, names the canonical tools and
parameters. A tool that speaks other names (a dialect's tool, or ``edit_file``, which takes
``old_content`` where the engine it shares says ``old_text``) passes its errors through a
``Wording``: each name it has its own word for is renamed; a piece of advice that names something
it lacks is dropped, as a whole clause (the parts of a hint are separated by ``; ``), an
alternative (``..., or X``) or a parenthesis. The convention the raising code keeps, so that a
name is recognised (docs/internals/surfaces.md#dialect-layer): a name with an underscore is
written as it is, a one-word parameter as ``name: value``, ``name=value`` or ``name[i]``.

* ``Wording(names, shifts, forms)``: ``names`` maps a canonical word to the tool's (None: it has
  none); ``shifts`` adds to the number written after a parameter (fiz's 0-based ``offset``:
  -1); ``forms`` writes ``name=N`` the tool's way (Anthropic: ``view_range=[N, -1]``).
* ``Wording.text`` (renames, for a message), ``Wording.advice`` (renames and drops, for a hint
  or a warning; may be empty), ``Wording.error`` (a ``ToolError`` reworded in place).

Stdlib and the contract only.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from zbtools.contract import ToolError

__all__ = ["NAME_AFTER", "NAME_BEFORE", "Wording"]

# A name stands alone: not inside a path or a file name (``src/read_file``, ``old_text.py``);
# also how the shell's notices find a parameter (``textout.as_flags``).
NAME_BEFORE = r"(?<![\w./-])"
NAME_AFTER = r"(?![\w/-]|\.\w)"
_ALTERNATIVE = re.compile(r"(,? or )")
_PARENTHESIS = re.compile(r" ?\([^()]*\)")


class Wording:
    """How one tool names things: ``names`` canonical word -> its own (None: it has none)."""

    def __init__(self, names: Mapping[str, str | None],
                 shifts: Mapping[str, int] | None = None,
                 forms: Mapping[str, str] | None = None) -> None:
        self.names = dict(names)
        self.shifts = dict(shifts or {})
        self.forms = dict(forms or {})
        # a word with an underscore, or one renamed, is a name wherever it stands; a plain word
        # the tool lacks only as a parameter given a value (``occurrence: 2``, ``offset=10``,
        # ``patches[0]``): "limit" is also English
        bare = sorted((w for w, own in self.names.items()
                       if "_" in w or not w.isalpha() or own is not None), key=len, reverse=True)
        plain = sorted((w for w in self.names if w not in bare), key=len, reverse=True)
        parts = []
        if bare:
            parts.append(NAME_BEFORE + "(" + "|".join(map(re.escape, bare)) + ")" + NAME_AFTER)
        if plain:
            parts.append(NAME_BEFORE + "(" + "|".join(map(re.escape, plain)) + r")(?=: |=|\[)")
        self._words = re.compile("|".join(parts)) if parts else None
        valued = {*self.shifts, *self.forms}
        self._shifted = (re.compile(NAME_BEFORE + "(" + "|".join(map(re.escape, valued))
                                    + r")(=|: )(-?\d+)") if valued else None)

    def _rename(self, match: re.Match[str]) -> str:
        word = match.group(match.lastindex or 0)
        own = self.names.get(word)
        return own if own is not None else match.group(0)

    def _shift(self, match: re.Match[str], shift: bool = True) -> str:
        name = match.group(1)
        value = int(match.group(3)) + (self.shifts.get(name, 0) if shift else 0)
        form = self.forms.get(name)
        return form.format(value) if form is not None else f"{name}{match.group(2)}{value}"

    def _lacks(self, text: str) -> bool:
        """True when ``text`` still names something this tool has no word for."""
        if self._words is None:
            return False
        return any(self.names.get(m.group(m.lastindex or 0)) is None
                   for m in self._words.finditer(text))

    def text(self, text: str, *, shift: bool = True) -> str:
        """``text`` with every name this tool has a word for renamed (a message: nothing is
        dropped, it says what happened). ``shift=False``: its numbers are the tool's already
        (a rendering of the adapted result)."""
        if self._shifted is not None:
            text = self._shifted.sub(lambda m: self._shift(m, shift), text)
        if self._words is not None:
            text = self._words.sub(self._rename, text)
        return text

    def advice(self, text: str, *, shift: bool = True) -> str:
        """``text`` renamed, without the advice naming what this tool lacks ("" if nothing is
        left)."""
        text = self.text(text, shift=shift)
        if not self._lacks(text):
            return text
        text = _PARENTHESIS.sub(lambda m: "" if self._lacks(m.group(0)) else m.group(0), text)
        kept = []
        for clause in text.split("; "):
            if not self._lacks(clause):
                kept.append(clause)
                continue
            pieces = _ALTERNATIVE.split(clause)  # [first, sep, alt, sep, alt...]
            if self._lacks(pieces[0]):
                continue  # the advice itself, not an alternative, needs what is missing
            out = pieces[0]
            for sep, alternative in zip(pieces[1::2], pieces[2::2], strict=True):
                if not self._lacks(alternative):
                    out += sep + alternative
            kept.append(out.rstrip(" ,"))
        return "; ".join(k for k in kept if k.strip())

    def error(self, error: ToolError, fallback: str) -> ToolError:
        """``error`` reworded in place: message and problem messages renamed, the hint's advice
        kept only where this tool can follow it (else ``fallback``)."""
        error.message = self.text(error.message)
        if error.hint:
            error.hint = self.advice(error.hint) or fallback
        problems = error.details.get("problems") if error.details else None
        if isinstance(problems, list):
            for problem in problems:
                if not isinstance(problem, dict):
                    continue
                for key in ("argument", "message"):
                    if isinstance(problem.get(key), str):
                        problem[key] = self.text(problem[key])
        return error
