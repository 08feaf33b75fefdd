"""State kept between calls, outside the workspace.

``store`` (locked, versioned JSON state files, the lock helper shared with the undo journal, the
workspace edit lock, and the hooks that keep the editor's tabs in step with moves and deletes),
``plans`` (plan documents and the live plan).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""
