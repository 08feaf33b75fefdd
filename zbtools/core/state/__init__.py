"""State kept between calls, outside the workspace.

``store`` (locked, versioned JSON state files, the lock helper shared with the undo journal, the
workspace edit lock, and the hooks that keep the editor's tabs in step with moves and deletes),
``plans`` (plan documents and the live plan).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

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

# Callers outside the package import these names from the submodule named here (the import line
# says which file to read, and loads only that file); tests/test_public_surface.py holds them to
# it. ``__getattr__`` resolves the same names lazily for a reader at a prompt: this ``__init__``
# imports nothing when it runs (docs/internals/performance.md#start-up-budget).
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


def __getattr__(name: str) -> object:
    submodule = _SUBMODULE.get(name)
    if submodule is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(__import__(f"{__name__}.{submodule}", fromlist=[name]), name)
    globals()[name] = value
    return value
