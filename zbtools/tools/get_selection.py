"""Get the currently selected text of the active file, read from the file as it is now.

Returns the text between the selection's start and end positions (line endings included as they
are in the file) and the positions themselves; with nothing selected, ``text`` is empty and the
positions are the cursor's. If the file changed since the selection was made, the selection is
re-anchored to where its text is now (``reanchored: true``, with a warning); if that text cannot
be found unambiguously nearby, the call fails with ``stale_file`` instead of returning other text.

Failure modes: ``no_active_file``, ``stale_file``, ``binary_file``, ``too_large``,
``state_corrupt``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor, load
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    pass


class Result(Struct):
    path: str = field(help="The active file, relative to the workspace root")
    text: str = field(help="The selected text (empty when nothing is selected)")
    empty: bool = field(help="Nothing is selected")
    start_line: int = field(help="Line where the selection starts")
    start_column: int = field(help="Column where it starts")
    end_line: int = field(help="Line where it ends")
    end_column: int = field(help="Column where it ends (exclusive)")
    reanchored: bool = field(help="The file changed and the selection was found again")
    sha256: str = field(help="SHA-256 of the whole file as read")


def run(params: Params, ctx: Context) -> Result:
    with Editor(ctx) as editor:
        tab = editor.active_tab()
        with ctx.workspace.resolve(tab.path) as res:
            loaded = load(res, tab.path)
        shifted = editor.sync(tab, loaded, strict=True)
        editor.save()
        model = loaded.model
        start = tab.selection[:2] if tab.selection else tab.cursor
        end = tab.selection[2:] if tab.selection else tab.cursor
        text = model.text[model.offset(*start):model.offset(*end)]
        if loaded.decoded.invalid_utf8:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return Result(path=tab.path, text=text, empty=tab.selection is None,
                      start_line=start[0], start_column=start[1], end_line=end[0],
                      end_column=end[1], reanchored=shifted, sha256=loaded.sha256)


def render(result: Result) -> str:
    if result.empty:
        return (f"nothing is selected in {result.path} (cursor at line {result.start_line}, "
                f"column {result.start_column})\n")
    text = result.text if result.text.endswith("\n") else result.text + "\n"
    return text


TOOL = ToolSpec(
    name="get_selection",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="editor",
)
