"""Editing: locating an edit, applying it, and taking it back.

``matching`` (locating old text at the tiers and applying it: a sub-package whose parts, from
request normalisation through the tiers and the merge to applying, its docstring lists in
dependency order), ``patching`` (unified diffs and Codex patch envelopes into per-file plans),
``cycle`` (the read-modify-write shared by the edit tools; a plain exact edit done on the
bytes, checked by ``bytescan`` and hashed by ``splicehash``), ``patchcycle`` (a multi-file
patch, every file checked before any is written), ``syntaxguard`` (what every writer does
with a change that breaks the parse), ``txn`` (multi-file changes and
long appends all or nothing under ``kill -9``: the intent journal and its recovery), ``undo``
(the journal of previous versions), ``editor`` (the headless editor's tabs, cursors and
selections, re-anchored through matching), ``bysymbol`` (an edit placed by a definition:
replace it or its body, insert before or after it).

May import ``zbtools.core.files``, ``zbtools.core.call`` and ``zbtools.core.state``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.editing.bysymbol import plan_edit
    from zbtools.core.editing.cycle import EditOutcome, edit_file_text
    from zbtools.core.editing.editor import (
        Editor,
        EditReport,
        Tab,
        edit_active,
        load,
        order,
        stat_key,
    )
    from zbtools.core.editing.leftovers import sweep_dead_writers
    from zbtools.core.editing.matching import (
        Applied,
        FileModel,
        MatchError,
        Request,
        apply_requests,
        replace_all,
    )
    from zbtools.core.editing.patchcycle import apply_patch_text
    from zbtools.core.editing.syntaxguard import check_change
    from zbtools.core.editing.txn import (
        Step,
        journaled_append,
        recover,
        replace_file,
        run_transaction,
    )
    from zbtools.core.editing.undo import Journal, Undoing, other_names, record

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["Applied", "EditOutcome", "EditReport", "Editor", "FileModel", "Journal", "MatchError",
           "Request",
           "Step", "Tab", "Undoing", "apply_patch_text", "apply_requests", "check_change",
           "edit_active", "edit_file_text", "journaled_append", "load", "order", "other_names",
           "plan_edit", "record", "recover", "replace_all", "replace_file", "run_transaction",
           "stat_key",
           "sweep_dead_writers"]

_SUBMODULE = {"Applied": "matching", "EditOutcome": "cycle", "EditReport": "editor",
              "Editor": "editor", "FileModel": "matching", "Journal": "undo",
              "MatchError": "matching", "Request": "matching",
              "Tab": "editor", "apply_patch_text": "patchcycle", "apply_requests": "matching",
              "check_change": "syntaxguard", "edit_active": "editor", "edit_file_text": "cycle",
              "journaled_append": "txn", "load": "editor", "order": "editor",
              "other_names": "undo", "plan_edit": "bysymbol", "record": "undo",
              "recover": "txn", "replace_all": "matching", "replace_file": "txn",
              "stat_key": "editor", "sweep_dead_writers": "leftovers", "Step": "txn",
              "run_transaction": "txn", "Undoing": "undo"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
