"""Editing: locating an edit, applying it, and taking it back.

``matching`` (locating old text at the tiers and applying it: a sub-package whose parts, from
request normalisation through the tiers and the merge to applying, its docstring lists in
dependency order), ``patching`` (unified diffs and Codex patch envelopes into per-file plans),
``cycle`` (the read-modify-write shared by the edit tools; a plain exact edit done on the
bytes, checked by ``bytescan`` and hashed by ``splicehash``), ``patchcycle`` (a multi-file
patch, every file checked before any is written), ``txn`` (multi-file changes and
long appends all or nothing under ``kill -9``: the intent journal and its recovery), ``undo``
(the journal of previous versions), ``editor`` (the headless editor's tabs, cursors and
selections, re-anchored through matching).

May import ``zbtools.core.files``, ``zbtools.core.call`` and ``zbtools.core.state``.
"""
