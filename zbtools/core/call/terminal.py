"""Text made safe for a terminal: the control characters of content shown, not acted on.

A file's bytes, a file's name, a match, a command's output or a command about to be approved
may carry escape sequences (clear the screen, retitle the window, move the cursor over what was
shown) and characters that reorder or overwrite a line. ``visible`` shows each of them as
printable text, the way ``less`` and ``cat -v`` do; ``visible_name`` does the same for a name,
where a tab or a newline is part of the name and not layout. The human format always renders
content through them, the text format when its stdout is a terminal (piped, the text stays byte
for byte what the model reads), and the approval prompt always.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# Everything a terminal may act on rather than print: C0 controls but tab and newline (a
# carriage return only when no newline follows it: CRLF is a line end), DEL, the C1 controls
# (U+009B is CSI on terminals that read 8-bit controls), the bidirectional controls that let
# text display in another order than it reads, and lone surrogates (a name's undecodable bytes,
# which would reach the terminal as raw bytes).
_BEYOND_C0 = r"\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = rf"[\x00-\x08\x0b\x0c\x0e-\x1f{_BEYOND_C0}]|\r(?!\n)"
_UNSAFE_IN_NAMES = rf"[\x00-\x1f{_BEYOND_C0}]"
_compiled: dict[str, re.Pattern[str]] = {}


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20 or code == 0x7F:
        return "^" + chr(code ^ 0x40)  # caret notation: ESC is ^[, DEL is ^?
    if 0xDC80 <= code <= 0xDCFF:
        return f"<{code - 0xDC00:02X}>"  # an undecodable byte, as less shows it
    return f"<U+{code:04X}>"


def _sub(pattern: str, text: str) -> str:
    compiled = _compiled.get(pattern)
    if compiled is None:
        import re

        compiled = _compiled[pattern] = re.compile(pattern)
    return compiled.sub(_shown, text)


def visible(text: str) -> str:
    """``text`` with every character a terminal would act on shown as printable text: C0
    controls and DEL in caret notation (``^[`` for ESC, ``^H``, ``^M`` for a carriage return
    not followed by a newline, ``^?``), C1 and bidirectional controls as ``<U+009B>``, an
    undecodable byte of a name as ``<9B>``. Tabs, newlines and CRLF line ends stay layout."""
    return _sub(_UNSAFE, text)


def visible_name(name: str) -> str:
    """``visible`` for a path or a name: a tab, newline or carriage return in it is shown too
    (``^I``, ``^J``, ``^M``), so that one name never looks like two."""
    return _sub(_UNSAFE_IN_NAMES, name)
