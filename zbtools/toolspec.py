"""What a tool declares: ``ToolSpec``, the object each module under ``zbtools/tools/`` exports.

A tool module defines ``Params`` and ``Result`` (``Struct`` declarations), a ``run`` function and
``TOOL = ToolSpec(...)``. Everything the surfaces show of a tool comes from here: its names, its
description (the module docstring), its parameters and result, its annotations (read-only,
destructive, idempotent, parallel-safe) and its text rendering. ``ToolSpec.call`` is the one
place a tool runs: it takes the workspace edit lock for every tool that changes files.

Imports only ``zbtools.core``; the registry (which finds tool modules) sits above the tools.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.call.args import Struct
    from zbtools.core.call.context import Context


class ToolSpec:
    """Everything the surfaces need to know about one tool."""

    def __init__(
        self,
        *,
        name: str,
        params: type[Struct],
        result: type[Struct],
        run: Callable[[Any, Context], Struct],
        doc: str | None,
        aliases: tuple[str, ...] = (),
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        parallel_safe: bool = False,
        render_text: Callable[[Any], str] | None = None,
        category: str = "files",
        operand: str | tuple[str, ...] | None = None,
        exit_status: Callable[[Any], int] | None = None,
        paths: Callable[[Any], list[str]] | None = None,
    ) -> None:
        self.name = name
        self.params = params
        self.result = result
        self.run = run
        self.doc = (doc or "").strip()
        self.aliases = aliases
        self.read_only = read_only
        self.destructive = destructive
        self.idempotent = idempotent
        self.parallel_safe = parallel_safe
        self.render_text = render_text
        self.category = category
        # The parameter(s) a shell user may give positionally, in order (``zbtools read_file
        # README.md``, ``zbtools move_file a b``).
        self.operands: tuple[str, ...] = (
            () if operand is None else (operand,) if isinstance(operand, str) else operand)
        # ``--exit-status``: the exit status a successful result means to a shell (0 yes, 1 no,
        # or a command's own status); without it a success always exits 0.
        self.exit_status = exit_status
        # ``--paths``/``-0``: the paths a listing or search found, one per line (or NUL-ended).
        self.paths = paths

    @property
    def summary(self) -> str:
        """The first paragraph of the module docstring: what agents see as the description
        (its reStructuredText literals as plain text, ``plain_literals``)."""
        return plain_literals(self.summary_rst)

    @property
    def summary_rst(self) -> str:
        """The first paragraph as written (reStructuredText: the man page's)."""
        return " ".join(self.doc.split("\n\n", 1)[0].split())

    @property
    def details(self) -> str:
        parts = self.doc.split("\n\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def operand_placeholders(self) -> list[tuple[str, str]]:
        """Each operand with the word that stands for it in help and the man page: its value's
        name (``GLOB``, ``zbtools.core.call.flags.value_name``), else its own upper-cased (a
        choice, or two operands that would both be ``PATH``: ``SOURCE DESTINATION``)."""
        from zbtools.core.call.flags import value_name

        fields = self.params.fields()
        operands = [op for op in self.operands if op in fields]
        shown = [value_name(fields[op]) for op in operands]
        if len(set(shown)) < len(shown) or any(not s or s.startswith("{") for s in shown):
            shown = [op.upper() for op in operands]
        return list(zip(operands, shown, strict=True))

    @property
    def changes_files(self) -> bool:
        """Whether a call holds the workspace edit lock (``zbtools.core.state.store.EditLock``):
        every tool that is not read-only, but the commands (a build must not keep edits
        waiting)."""
        return not self.read_only and self.category != "commands"

    def call(self, params: Any, ctx: Context) -> Struct:
        """Run the tool, under the workspace edit lock when it changes files. Every surface
        (command line, batch, MCP, dialects) calls tools through here.

        First of all, a multi-file change that a killed process left unfinished is rolled back
        or completed (``zbtools.core.editing.txn``), whatever the tool; the result's warnings
        say so. Then the temp entries killed writers left are removed
        (``zbtools.core.editing.leftovers``)."""
        ctx.workspace.new_call()  # what a previous call (a batch, a server) saw may be stale
        if ctx.unfinished_changes():
            from zbtools.core.editing.txn import recover

            _log_writes(ctx)  # completing a change writes its undo records
            recover(ctx)
        if ctx.writers_logged():  # after the journals, which may still need their backups
            from zbtools.core.editing.leftovers import sweep_dead_writers

            sweep_dead_writers(ctx)
        if not self.changes_files:
            return self.run(params, ctx)
        from zbtools.core.state.store import EditLock

        _log_writes(ctx)
        with EditLock(ctx):
            result = self.run(params, ctx)
        if ctx.syntax_reports and "syntax" in self.result.fields():
            # what the syntax guard of the call's writes found (core/editing/syntaxguard.py)
            result.syntax = ctx.syntax_reports  # type: ignore[attr-defined]
        return result


def _log_writes(ctx: Context) -> None:
    """Where this process writes temp entries from now on is logged in this workspace's state
    (``zbtools.core.files.writerlog``), so that the next call cleans up if it is killed."""
    from zbtools.contract import ToolError
    from zbtools.core.files import writerlog
    from zbtools.core.files.tempnames import own_host, own_start

    try:
        writerlog.use(ctx.state_path(), own_start(), own_host())
    except (OSError, ToolError):
        pass  # no state directory: nothing is logged (the next write there sweeps)


class Outcome:
    """What one call produced: the ``ToolSpec`` run, its result object and the dialect's JSON."""

    def __init__(self, spec: ToolSpec, result: Struct, payload: dict[str, Any]) -> None:
        self.spec = spec
        self.result = result
        self.payload = payload


def apply_call_limits(params: Any, ctx: Context) -> None:
    """A call's own ``max_bytes``/``max_lines`` override the configured limits for that call,
    and its ``check_syntax`` the configured syntax guard."""
    per_call = {key: getattr(params, key, None) for key in ("max_bytes", "max_lines")}
    if any(v is not None for v in per_call.values()):
        ctx.limits = ctx.limits.with_overrides(**per_call)
    check = getattr(params, "check_syntax", None)
    if check is not None:
        ctx.check_syntax = check


def plain_literals(text: str) -> str:
    """A docstring's reStructuredText inline literals (````x````) as plain text (``x``): what
    help, tool descriptions and the tools reference show, to people and models alike (the man
    page keeps the reStructuredText)."""
    if "``" not in text:
        return text
    import re

    return re.sub(r"``(.+?)``", r"\1", text, flags=re.DOTALL)
