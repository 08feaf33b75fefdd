"""State kept between calls, outside the workspace.

``store`` (locked, versioned JSON state files, the lock helper shared with the undo journal, the
workspace edit lock, and the hooks that keep the editor's tabs in step with moves and deletes),
``plans`` (plan documents and the live plan).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.state.plans import (
        MAX_STEPS,
        PLAN_DIR,
        check_one_in_progress,
        check_title,
        checklist,
        load_steps,
        new_id,
        plan_name,
        plan_path,
    )
    from zbtools.core.state.store import (
        EDITOR,
        PLAN,
        TASKS,
        EditLock,
        StateFile,
        acquire_lock,
        on_path_deleted,
        on_path_moved,
        replace_durably,
    )

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["EDITOR", "MAX_STEPS", "PLAN", "PLAN_DIR", "TASKS", "EditLock", "StateFile",
           "acquire_lock", "check_one_in_progress", "check_title", "checklist", "load_steps",
           "new_id", "on_path_deleted", "on_path_moved", "plan_name", "plan_path",
           "replace_durably"]

_SUBMODULE = {"EDITOR": "store", "MAX_STEPS": "plans", "PLAN": "store", "PLAN_DIR": "plans",
              "TASKS": "store", "EditLock": "store", "StateFile": "store", "acquire_lock": "store",
              "check_one_in_progress": "plans", "check_title": "plans", "checklist": "plans",
              "load_steps": "plans", "new_id": "plans", "on_path_deleted": "store",
              "on_path_moved": "store", "plan_name": "plans", "plan_path": "plans",
              "replace_durably": "store"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
