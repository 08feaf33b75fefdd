"""The Python API: a harness written in Python calls the tools in its own process.

``Toolbox(workspace=..., dialect=...)`` is one ``zbtools batch`` session held in memory: the
same ``Batch`` object (zbtools/surfaces/batch.py) with its warm search cache, its workspace
handle and its dialect, so ``tb.call("grep_search", {"pattern": "x"})`` returns the envelope the
command line prints as JSON, as a dict, without a process, a pipe or a JSON round trip per call.
A failed call is an error envelope, never an exception; only a caller's programming errors
raise (``TypeError`` for a name or arguments of the wrong type, ``RuntimeError`` after
``close``). Calls from several threads are safe: one lock runs them one at a time, in the order
they take it. Edits are written and fsync-ed before their call returns, as a lone command-line
call's are (no batch group holds them back: there is no next line to wait for). What users may
rely on is docs/python.md#python-api; how it is built, docs/internals/surfaces.md#python-api.

* ``Toolbox``: ``call``, ``schema``, ``tools``, ``close`` and the context manager protocol.
* ``ToolboxError``: a Toolbox that cannot be made (its workspace, dialect or configuration), or
  a ``schema`` that cannot be listed; ``error`` is the error object the command line prints.
"""

from __future__ import annotations

import os
import threading

from zbtools.contract import ToolError
from zbtools.surfaces.batch import Batch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import TracebackType
    from typing import Any

    from zbtools.core.call.config import Limits
    from zbtools.core.files.workspace import Workspace
    from zbtools.dialects import Dialect
    from zbtools.dispatch import Options

__all__ = ["Toolbox", "ToolboxError"]


class ToolboxError(ValueError):
    """What the command line would have printed as an error, raised where there is no call to
    answer with an envelope: making a ``Toolbox``, listing a ``schema``."""

    def __init__(self, error: ToolError) -> None:
        super().__init__(error.message)
        self.code: str = error.code
        self.error: dict[str, Any] = error.to_json()  # code, message, hint, details


class Toolbox:
    """The tools of one workspace and dialect, called in-process with a session's warm caches.

    ``workspace``: the root directory (default ``$ZBTOOLS_WORKSPACE``, else the current
    directory); ``dialect``: the tool set whose names and parameters calls use (default
    ``$ZBTOOLS_DIALECT``, else the canonical tools); ``env``: the environment the configuration
    and the commands run see (default a copy of ``os.environ`` made now); ``text=True`` adds to
    each envelope, as ``zbtools batch --format text`` does, ``"text"``: the rendering a model
    should read.
    """

    def __init__(self, workspace: str | os.PathLike[str] | None = None,
                 dialect: str | None = None, *, env: Mapping[str, str] | None = None,
                 text: bool = False) -> None:
        from zbtools.dispatch import (
            Options,
            debugging,
            make_context,
            selected_dialect,
            uses_dialect,
        )

        if workspace is not None and not isinstance(workspace, (str, os.PathLike)):
            raise TypeError(f"workspace must be a path, got {type(workspace).__name__}")
        if dialect is not None and not isinstance(dialect, str):
            raise TypeError(f"dialect must be a str, got {type(dialect).__name__}")
        self._lock = threading.Lock()
        self._batch: _Session | None = None
        opts = Options()
        opts.workspace = os.fspath(workspace) if workspace is not None else None
        opts.dialect = dialect
        environ = dict(os.environ if env is None else env)
        try:
            chosen = selected_dialect(opts, environ) if uses_dialect(opts, environ) else None
            base = make_context(opts, environ)
        except ToolError as error:
            raise ToolboxError(error) from None
        self._batch = _Session(opts, base.workspace, base.limits, base.env, chosen, None,
                               debug=debugging(opts, environ), text=text)

    @property
    def workspace(self) -> str:
        """The workspace root, absolute."""
        return self._session().workspace.root

    @property
    def dialect(self) -> str:
        """The dialect's name (``zblade``: the canonical tools)."""
        session = self._session()
        return session.dialect.name if session.dialect is not None else "zblade"

    @property
    def closed(self) -> bool:
        return self._batch is None

    def call(self, name: str, args: Mapping[str, object] | None = None) -> dict[str, Any]:
        """Run the tool ``name`` (a name of the dialect, or an alias) with ``args``: the
        envelope ``zbtools NAME`` prints as JSON, as a dict (``ok``, then ``result``,
        ``truncated`` and ``warnings``, or ``error`` with ``code``, ``message`` and ``hint``).
        The dict is the caller's: nothing the session keeps refers to it."""
        if type(name) is not str:
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if args is None:
            arguments: dict[str, Any] = {}
        elif type(args) is dict:
            arguments = dict(args)  # a tool may fill in defaults: the caller's dict stays
        elif _is_mapping(args):
            arguments = dict(args.items())
        else:
            raise TypeError(f"args must be a mapping of argument names to values, got "
                            f"{type(args).__name__}")
        for key in arguments:
            if type(key) is not str:  # a JSON object's keys are strings
                raise TypeError(f"args must be keyed by argument names (str), got {key!r}")
        with self._lock:
            batch = self._batch
            if batch is None:
                raise RuntimeError(CLOSED)
            return batch.run(name, arguments)

    def schema(self, format: str = "jsonschema", tools: Sequence[str] = ()
               ) -> list[dict[str, Any]]:
        """The tool definitions of the dialect, as ``zbtools schema --format FORMAT [TOOL...]``
        prints them: ``jsonschema``, ``anthropic`` (``name``, ``description``,
        ``input_schema``), ``openai``, ``openai-strict`` or ``mcp``; ``tools`` picks some, in
        that order. A fresh list each time: the caller may change it."""
        from zbtools.dialects import get_dialect
        from zbtools.dialects.definitions import FORMATS, definitions

        if type(format) is not str:
            raise TypeError(f"format must be a str, got {type(format).__name__}")
        if isinstance(tools, str) or not all(type(t) is str for t in tools):
            raise TypeError("tools must be a sequence of tool names (str)")
        session = self._session()
        if format not in FORMATS:
            raise ToolboxError(ToolError("usage_error", f"unknown schema format {format!r}",
                                         hint=f"use one of {', '.join(FORMATS)}",
                                         details={"formats": list(FORMATS)}))
        try:
            chosen = session.dialect if session.dialect is not None else get_dialect("zblade")
            listed: list[dict[str, Any]] = definitions(chosen, format, list(tools))
        except ToolError as error:
            raise ToolboxError(error) from None
        return listed

    def tools(self) -> list[str]:
        """The names of the dialect's tools, as ``schema`` lists them."""
        from zbtools.dialects import get_dialect

        session = self._session()
        chosen = session.dialect if session.dialect is not None else get_dialect("zblade")
        return [t.name for t in chosen.tools()]

    def close(self) -> None:
        """Let go of the workspace handle and the warm caches (and the change monitor's
        watches). Waits for a call running in another thread; closing twice is harmless."""
        with self._lock:
            batch, self._batch = self._batch, None
        if batch is not None:
            batch.close()

    def __enter__(self) -> Toolbox:
        self._session()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:
        # a Toolbox dropped without close() must not keep inotify watches and a directory
        # open for the rest of the process; getattr: __init__ may have failed before _batch
        batch = getattr(self, "_batch", None)
        if batch is not None:
            self._batch = None
            try:
                batch.close()
            except Exception:  # at interpreter exit the modules may be half torn down
                pass

    def __repr__(self) -> str:
        if self._batch is None:
            return "<zbtools.Toolbox closed>"
        return f"<zbtools.Toolbox workspace={self.workspace!r} dialect={self.dialect!r}>"

    def _session(self) -> _Session:
        batch = self._batch
        if batch is None:
            raise RuntimeError(CLOSED)
        return batch


CLOSED = "this Toolbox is closed: make a new one to call tools again"


class _Session(Batch):
    """A batch session whose unknown tool is the command line's error (the same names listed,
    the same hint), as every other answer of the API is the command line's."""

    def __init__(self, opts: Options, workspace: Workspace, limits: Limits,
                 env: Mapping[str, str], dialect: Dialect | None, state_root: str | None,
                 debug: bool, text: bool) -> None:
        super().__init__(workspace, limits, env, dialect, state_root, debug=debug, text=text)
        self.opts = opts

    def unknown(self, tool_name: str) -> ToolError:
        from zbtools.dispatch import unknown_tool_error

        return unknown_tool_error(tool_name, self.opts, self.env)


def _is_mapping(value: object) -> bool:
    from collections.abc import Mapping

    return isinstance(value, Mapping)
