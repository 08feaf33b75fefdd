"""Track subtasks of a multi-step job: create, update, get or list tasks.

``operation: create`` needs a ``title`` (``description`` and ``status`` optional; status defaults
to pending) and returns the new task with its id; ids are short, stable and unique in the
workspace (``t1``, ``t2``, ... never reused; ``"3"`` is accepted for ``t3``). ``update`` needs
the ``id`` and a new ``status`` (and/or ``title``, ``description``); ``get`` needs the ``id``;
``list`` returns every task, or those with ``status``. Statuses: ``pending``, ``in_progress``,
``completed``. The tasks persist between calls in the workspace's state directory (outside the
workspace), behind a lock, so parallel creates never lose a task or share an id.

Failure modes: ``invalid_arguments`` (a required field missing for the operation, an empty
title), ``unknown_id`` (no task has that id; the valid ids are listed), ``state_corrupt`` (the
task state file is unreadable or from a newer zbtools; it is never overwritten).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.state.store import TASKS, StateFile
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context

STATUSES = ("pending", "in_progress", "completed")
MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
MAX_TITLE = 2000
MAX_DESCRIPTION = 64 * 1024
MAX_TASKS = 10000


class Params(Struct):
    operation: Literal["create", "update", "get", "list"] = field(
        aliases=("op", "action"), help="The operation to perform")
    id: str | None = field(default=None, aliases=("task_id",),
                           help="Task ID (required for update/get, ignored for create/list)")
    title: str | None = field(default=None, aliases=("subject",),
                              help="Task title (required for create)")
    description: str | None = field(default=None, help="Optional task description")
    status: Literal["pending", "in_progress", "completed"] | None = field(
        default=None, help="New status (required for update); for list, only tasks with it")


class TaskItem(Struct):
    id: str = field(help="The task's id")
    title: str = field(help="Task title")
    description: str | None = field(help="Task description")
    status: str = field(help="pending, in_progress or completed")
    created_at: float = field(help="When it was created (Unix time)")
    updated_at: float = field(help="When it last changed (Unix time)")


class Result(Struct):
    operation: str = field(help="The operation performed")
    task: TaskItem | None = field(help="The task created, updated or read (null for list)")
    tasks: list[TaskItem] | None = field(help="The tasks listed, oldest first (null unless list)")
    counts: dict[str, int] | None = field(help="Tasks per status, all tasks (list only)")


def _invalid(message: str, hint: str) -> ToolError:
    return ToolError("invalid_arguments", message, hint=hint)


def _load(state: StateFile) -> list[dict[str, Any]]:
    tasks = state.data.get("tasks", [])
    if not isinstance(tasks, list) or not all(
            isinstance(t, dict) and isinstance(t.get("id"), str)
            and isinstance(t.get("title"), str) and t.get("status") in STATUSES
            and isinstance(t.get("description"), str | None)
            and isinstance(t.get("created_at"), int | float)
            and isinstance(t.get("updated_at"), int | float) for t in tasks):
        raise state.corrupt("has tasks of the wrong shape")
    if type(state.data.get("next_id", 1)) is not int:
        raise state.corrupt("has a bad id counter")
    return tasks


def _item(task: dict[str, Any]) -> TaskItem:
    return TaskItem(id=task["id"], title=task["title"], description=task["description"],
                    status=task["status"], created_at=task["created_at"],
                    updated_at=task["updated_at"])


def _title(raw: str) -> str:
    title = raw.strip()
    if not title:
        raise _invalid("the title is empty", hint="give the task a short title")
    if len(title) > MAX_TITLE:
        raise _invalid(f"the title is longer than {MAX_TITLE} characters",
                       hint="keep the title short and put details in description")
    return title


def _description(raw: str | None) -> str | None:
    if raw is not None and len(raw) > MAX_DESCRIPTION:
        raise _invalid(f"the description is longer than {MAX_DESCRIPTION} characters",
                       hint="keep task descriptions short; long plans belong in save_plan")
    return raw or None


def _find(tasks: list[dict[str, Any]], raw: str) -> dict[str, Any]:
    wanted = raw.strip()
    if wanted.isdigit():
        wanted = f"t{int(wanted)}"
    for task in tasks:
        if task["id"] == wanted or task["id"] == wanted.lower():
            return task
    ids = [t["id"] for t in tasks]
    raise ToolError("unknown_id", f"no task has the id {raw!r}",
                    hint="task list shows every task and its id" if ids else
                    "there are no tasks yet: create one with operation create",
                    details={"ids": ids[-50:], "count": len(ids)})


def run(params: Params, ctx: Context) -> Result:
    op = params.operation
    if op in ("update", "get") and params.id is None:
        raise _invalid(f"operation {op} needs the task's id", hint="task list shows the ids")
    if op == "create" and params.title is None:
        raise _invalid("operation create needs a title", hint='e.g. {"operation": "create", '
                       '"title": "Write the parser tests"}')
    if op == "update" and params.status is None and params.title is None \
            and params.description is None:
        raise _invalid("operation update needs a new status (or title, description)",
                       hint='e.g. {"operation": "update", "id": "t1", "status": "completed"}')
    if op in ("create", "list") and params.id is not None:
        ctx.warn(f"id is ignored by operation {op}")
    if op in ("get", "list"):
        with StateFile(ctx, TASKS, shared=True) as state:
            tasks = _load(state)
            if op == "get":
                assert params.id is not None
                return Result(operation=op, task=_item(_find(tasks, params.id)), tasks=None,
                              counts=None)
            counts = {s: sum(1 for t in tasks if t["status"] == s) for s in STATUSES}
            shown = [t for t in tasks if params.status is None or t["status"] == params.status]
            return Result(operation=op, task=None, tasks=[_item(t) for t in shown],
                          counts=counts)
    now = round(ctx.clock(), 3)
    with StateFile(ctx, TASKS) as state:
        tasks = _load(state)
        if op == "create":
            assert params.title is not None
            if len(tasks) >= MAX_TASKS:
                raise _invalid(f"a workspace holds at most {MAX_TASKS} tasks",
                               hint="this is a tracker for the current job, not an archive")
            number: int = state.data.get("next_id", 1)
            task = {"id": f"t{number}", "title": _title(params.title),
                    "description": _description(params.description),
                    "status": params.status or "pending", "created_at": now, "updated_at": now}
            state.data["next_id"] = number + 1
            tasks.append(task)
        else:
            assert params.id is not None
            task = _find(tasks, params.id)
            if params.title is not None:
                task["title"] = _title(params.title)
            if params.description is not None:
                task["description"] = _description(params.description)
            if params.status is not None:
                task["status"] = params.status
            task["updated_at"] = now
        state.data["tasks"] = tasks
        state.save()
        return Result(operation=op, task=_item(task), tasks=None, counts=None)


def _line(task: TaskItem) -> str:
    return f"{task.id} {MARKS[task.status]} {task.title}\n"


def render(result: Result) -> str:
    if result.tasks is not None:
        if not result.tasks:
            return "no tasks\n"
        assert result.counts is not None
        head = ", ".join(f"{n} {s}" for s, n in result.counts.items())
        return f"{len(result.tasks)} task(s) shown ({head})\n" + "".join(
            _line(t) for t in result.tasks)
    assert result.task is not None
    verb = {"create": "created", "update": "updated", "get": ""}[result.operation]
    out = (f"{verb} " if verb else "") + _line(result.task)
    if result.operation == "get" and result.task.description:
        out += result.task.description.rstrip("\n") + "\n"
    return out


TOOL = ToolSpec(
    name="task",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    category="tasks",
)
