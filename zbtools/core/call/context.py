"""The per-call context handed to every tool: workspace, limits, state directory, clock.

Tools never read globals or the environment directly; everything they may depend on is here, so
tests and ``batch`` mode can build contexts explicitly.

State lives outside the workspace (docs/internals/security.md#state) under
``<state root>/<first 16 hex of sha256(workspace real path)>/``, created with mode 0700 on first
use only. Spill files (full text of truncated results) are written to its ``spill/`` folder and
pruned to the newest 200 files.

A surface that can cancel a call or report its progress (the MCP server) sets ``cancel_check``
(a plain callable, e.g. a ``threading.Event``'s ``is_set``) and ``progress_sink``; long loops
call ``check_cancelled()`` (or read ``cancelled``) and ``progress()``, which cost nothing when
neither is set.
"""

from __future__ import annotations

import os
import time

from zbtools.contract import ToolError
from zbtools.core.call.config import Limits
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

SPILL_KEEP = 200
# (state root, workspace root) -> the journal directory of unfinished changes (see
# Context.unfinished_changes): a long-lived batch or server computes it once
_TXN_DIRS: dict[tuple[str | None, str], str] = {}
# (state root, workspace root) -> the workspace's state directory: a batch or server edit
# asks for it several times a call (a hash and a path normalisation each).
_STATE_PATHS: dict[tuple[str, str], str] = {}
# writers folder -> its mtime when it last held no other process's log (writers_logged): a
# batch or server lists it again only once it has changed
_WRITERS_QUIET: dict[str, int] = {}
_WRITERS_DIRS: dict[str, str] = {}  # a journal directory -> its writers folder, beside it


class Context:
    def __init__(self, workspace: Workspace, *, limits: Limits | None = None,
                 env: Mapping[str, str] | None = None, state_root: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.workspace = workspace
        self.limits = limits or Limits()
        self.env: Mapping[str, str] = env if env is not None else os.environ
        self._state_root = state_root
        self.clock = clock
        self.warnings: list[str] = []
        self.holds_edit_lock = False  # see core.state.EditLock
        # a long-lived session's warm search cache (batch, mcp): a core.search.cache.SearchCache
        self.search_cache: Any = None
        # Set by a surface that can cancel the call (True: stop now) or show its progress.
        self.cancel_check: Callable[[], bool] | None = None
        self.progress_sink: Callable[[float, float | None, str | None], None] | None = None
        # Set by a surface that shows a foreground command's output as it comes (a person at
        # a terminal): called with "stdout" or "stderr" and each chunk the command writes.
        self.output_sink: Callable[[str, bytes], None] | None = None
        self.output_shown = False  # the sink has shown some output (set by the sink)
        # The syntax guard (core/editing/syntaxguard.py): the call's own check_syntax (None:
        # the workspace's setting), and what it found, for the result's ``syntax`` field.
        self.check_syntax: str | None = None
        self.syntax_reports: list[dict[str, Any]] = []
        # Set for a call of which only the text rendering is shown (``--format text``): a
        # tool may leave out of its result what that rendering never shows (a listing's
        # sizes and times: a stat per file).
        self.text_only = False
        # Set for a call of which only the JSON text is made (the command line's ``--format
        # json``, canonical tools): a tool may give parts of its result as ready-made JSON
        # text (``fastjson.Encoded``), which nothing else reads.
        self.json_text = False
        # Set for the command line's one call, in a process of its own that exits after it:
        # a walk may fork a second scanner (core/search/walk_split.py).
        self.may_fork = False

    @property
    def cancelled(self) -> bool:
        """Whether the caller has cancelled this call."""
        return self.cancel_check is not None and self.cancel_check()

    def check_cancelled(self) -> None:
        """Raise ``interrupted`` when the caller has cancelled this call."""
        if self.cancel_check is not None and self.cancel_check():
            raise ToolError("interrupted", "the call was cancelled by the client",
                            hint="nothing was left half-written (writes are atomic)")

    def ticker(self, what: str) -> Callable[[int], None] | None:
        """For a loop over many items (``what``: "files searched"): a callable taking the count
        done so far that raises ``interrupted`` once the call is cancelled and reports the
        count as progress; None when nobody can cancel or listens (the loop skips it)."""
        if self.cancel_check is None and self.progress_sink is None:
            return None

        def tick(done: int) -> None:
            self.check_cancelled()
            self.progress(done, None, f"{done} {what}")

        return tick

    def progress(self, done: float, total: float | None = None,
                 message: str | None = None) -> None:
        """Report how far a long call has got (files searched, seconds run...), if anyone
        listens; ``done`` only grows."""
        if self.progress_sink is not None:
            self.progress_sink(done, total, message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    @property
    def known_state_root(self) -> str | None:
        """The state root once it has been looked up (None before): a batch or a server passes
        it on to the next call's context so that the lookup happens once."""
        return self._state_root

    def state_path(self) -> str:
        """Where this workspace's state directory is (not created)."""
        if self._state_root is None:
            from zbtools.core.call.config import state_root

            self._state_root = state_root(self.env)
        cached = _STATE_PATHS.get((self._state_root, self.workspace.root))
        if cached is not None:
            return cached
        key = sha256_hex(os.fsencode(self.workspace.root))[:16]
        path = os.path.abspath(os.path.join(self._state_root, key))
        if os.path.isabs(self._state_root):  # a relative root depends on the cwd
            _STATE_PATHS[(self._state_root, self.workspace.root)] = path
        return path

    def unfinished_changes(self) -> bool:
        """Whether a multi-file change of this workspace was left unfinished (its journal
        directory exists: ``core.editing.txn``). One ``stat``; every call asks, before anything
        else."""
        root = self._state_root
        path = _TXN_DIRS.get((root, self.workspace.root)) if root is not None else None
        if path is None:
            try:
                path = os.path.join(self.state_path(), "txn")
            except (OSError, ToolError):
                return False
            if os.path.isabs(self._state_root or ""):  # a batch or server: ask once
                _TXN_DIRS[(self._state_root, self.workspace.root)] = path
        return os.access(path, os.F_OK)  # a bool, not an exception: ~1 us

    def writers_logged(self) -> bool:
        """Whether another process logged where it writes temp entries (``files.writerlog``):
        it may have been killed and left them. After ``unfinished_changes``: a ``stat`` and,
        unless the folder is unchanged since it last held no other process's log, a listing
        (a mostly empty folder)."""
        txn = _TXN_DIRS.get((self._state_root, self.workspace.root))
        try:
            folder = _WRITERS_DIRS.get(txn) if txn is not None else None
            if folder is None:
                folder = os.path.join(os.path.dirname(txn) if txn is not None
                                      else self.state_path(), "writers")
                if txn is not None:
                    _WRITERS_DIRS[txn] = folder
            changed = os.stat(folder).st_mtime_ns
            if _WRITERS_QUIET.get(folder) == changed:
                return False
            own = f"{os.getpid()}-"
            if any(not name.startswith(own) for name in os.listdir(folder)):
                return True
        except (OSError, ToolError):
            return False
        if len(_WRITERS_QUIET) > 64:
            _WRITERS_QUIET.clear()
        _WRITERS_QUIET[folder] = changed
        return False

    @property
    def state_dir(self) -> str:
        """This workspace's private state directory (created on demand, mode 0700)."""
        path = self.state_path()
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def spill_file(self, path: str) -> str | None:
        """``path``'s name when it names a spill file of this workspace (which read_file may
        read although it lies outside the workspace), else None."""
        if not os.path.isabs(path) or "spill" not in os.path.normcase(path):
            return None  # (most reads: no spill folder in the path, nothing to normalise)
        folder, name = os.path.split(os.path.normpath(path))
        spill = os.path.join(self.state_path(), "spill")
        if not name or os.path.normcase(folder) != os.path.normcase(spill):
            return None
        return name

    def spill(self, tool: str, text: str) -> str:
        """Keep ``text`` in a spill file and return its absolute path."""
        folder = os.path.join(self.state_dir, "spill")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(self.clock()))
        path = os.path.join(folder, f"{stamp}-{tool}-{os.urandom(4).hex()}.txt")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        self._prune(folder)
        return path

    @staticmethod
    def _prune(folder: str) -> None:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names[:-SPILL_KEEP]:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
