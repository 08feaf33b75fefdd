"""Update the live structured plan: set the whole ordered list of steps, or update single steps.

Give ``steps`` (each ``{title, status}``; ``status`` is ``pending``, ``in_progress`` or
``completed``, default pending) to set the whole plan, or ``updates`` (each ``{index | id,
status?, title?}``) to change some steps, or one step's ``index``/``id`` with ``status`` and/or
``title`` directly. At most one step may be ``in_progress`` at a time: complete the current one
in the same call that starts the next. Steps keep short stable ids (``s1``, ``s2``, ...); setting
a whole new list keeps the id of a step whose title is unchanged. ``explanation`` attaches a note
(an empty string clears it). The result is the plan afterwards, as get_plan returns it; its text
rendering is a checklist (``[x]``, ``[~]``, ``[ ]``). Parallel calls are serialised by a lock, so
no update is lost.

Failure modes: ``invalid_arguments`` (two steps in progress, an empty title, duplicate ids,
several or no modes given), ``unknown_id`` (an update names a step that does not exist; the
valid ids are listed), ``state_corrupt`` (the plan state file is unreadable or from a newer
zbtools; it is never overwritten).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.state.plans import (
    MAX_STEPS,
    check_one_in_progress,
    check_title,
    load_steps,
)
from zbtools.core.state.store import PLAN, StateFile
from zbtools.toolkit.plans import PlanResult, plan_result
from zbtools.toolkit.plans import render as render_plan
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context

TITLE_ALIASES = ("step", "content", "text")


class Step(Struct):
    title: str = field(aliases=TITLE_ALIASES, help="What the step does")
    status: Literal["pending", "in_progress", "completed"] = field(
        default="pending", help="pending, in_progress or completed")
    id: str | None = field(default=None, help="Keep this id (default: a new or matching one)")


class StepUpdate(Struct):
    index: int | None = field(default=None, minimum=1, help="The step's position (1-based)")
    id: str | None = field(default=None, help="The step's id")
    status: Literal["pending", "in_progress", "completed"] | None = field(
        default=None, help="New status")
    title: str | None = field(default=None, aliases=TITLE_ALIASES, help="New title")


class Params(Struct):
    steps: list[Step] | None = field(default=None, aliases=("plan", "todos", "items"),
                                     help="The whole plan: ordered steps {title, status}")
    updates: list[StepUpdate] | None = field(
        default=None, help="Changes to single steps: {index or id, status?, title?}")
    index: int | None = field(default=None, minimum=1,
                              help="One step to change, by position (1-based)")
    id: str | None = field(default=None, help="One step to change, by id")
    status: Literal["pending", "in_progress", "completed"] | None = field(
        default=None, help="New status of that one step")
    title: str | None = field(default=None, help="New title of that one step")
    explanation: str | None = field(default=None, aliases=("note",),
                                    help="A note on this update (empty string: clear it)")


def _invalid(message: str, hint: str) -> ToolError:
    return ToolError("invalid_arguments", message, hint=hint)


def _replace(state: StateFile, old: list[dict[str, Any]], steps: list[Step]
             ) -> list[dict[str, Any]]:
    from zbtools.core.state.plans import new_id

    if len(steps) > MAX_STEPS:
        raise _invalid(f"a plan has at most {MAX_STEPS} steps, got {len(steps)}",
                       hint="group the work into fewer, larger steps")
    given = [s.id for s in steps if s.id is not None]
    for wanted in given:
        if not wanted.strip() or len(wanted) > 64:
            raise _invalid(f"step id {wanted!r} must be 1-64 characters",
                           hint="omit id to get one (s1, s2, ...)")
    if len(set(given)) != len(given):
        dup = sorted({s for s in given if given.count(s) > 1})
        raise _invalid(f"duplicate step ids: {', '.join(dup)}", hint="ids must be unique")
    reusable: dict[str, list[str]] = {}
    for previous in old:
        if previous["id"] not in given:
            reusable.setdefault(previous["title"], []).append(previous["id"])
    out = []
    taken = set(given)
    for i, step in enumerate(steps, 1):
        title = check_title(step.title, f"steps[{i}]")
        sid = step.id
        if sid is None and reusable.get(title):
            sid = reusable[title].pop(0)
        while sid is None or (sid in taken and step.id is None):
            sid = new_id(state)
        taken.add(sid)
        out.append({"id": sid, "title": title, "status": step.status})
    return out


def _apply(steps: list[dict[str, Any]], updates: list[StepUpdate]) -> None:
    for k, update in enumerate(updates, 1):
        where = f"updates[{k}]" if len(updates) > 1 else "the update"
        if (update.index is None) == (update.id is None):
            raise _invalid(f"{where}: give exactly one of index and id",
                           hint="index is the step's 1-based position, id its stable id (s1...)")
        if update.status is None and update.title is None:
            raise _invalid(f"{where}: nothing to change", hint="give status and/or title")
        if update.index is not None:
            target = steps[update.index - 1] if update.index <= len(steps) else None
        else:
            target = next((s for s in steps if s["id"] == update.id), None)
        if target is None:
            asked = f"index {update.index}" if update.index is not None else f"id {update.id!r}"
            raise ToolError("unknown_id", f"{where}: the plan has no step with {asked} (it has "
                            f"{len(steps)} step{'s' if len(steps) != 1 else ''})",
                            hint="get_plan lists the steps; steps: [...] sets a new plan",
                            details={"ids": [s["id"] for s in steps], "count": len(steps)})
        if update.title is not None:
            target["title"] = check_title(update.title, where)
        if update.status is not None:
            target["status"] = update.status


def run(params: Params, ctx: Context) -> PlanResult:
    single = any(v is not None for v in (params.index, params.id, params.status, params.title))
    modes = [params.steps is not None, params.updates is not None, single]
    if sum(modes) > 1:
        raise _invalid("give one of: steps (the whole plan), updates (a list of changes), or "
                       "one step's index/id with status/title",
                       hint="these are three ways to update the plan; use one per call")
    if sum(modes) == 0 and params.explanation is None:
        raise _invalid("nothing to update: give steps, updates, or index/id with status",
                       hint='e.g. steps: [{"title": "Write tests", "status": "in_progress"}]; '
                       "get_plan reads the plan")
    with StateFile(ctx, PLAN) as state:
        steps = load_steps(state)
        if params.steps is not None:
            steps = _replace(state, steps, params.steps)
        elif params.updates is not None or single:
            updates = params.updates if params.updates is not None else [StepUpdate(
                index=params.index, id=params.id, status=params.status, title=params.title)]
            _apply(steps, updates)
        if params.explanation is not None:
            state.data["explanation"] = params.explanation or None
        check_one_in_progress(steps)
        state.data["steps"] = steps
        state.data["updated_at"] = round(ctx.clock(), 3)
        state.save()
        return plan_result(state.data, steps)


TOOL = ToolSpec(
    name="update_plan",
    doc=__doc__,
    params=Params,
    result=PlanResult,
    run=run,
    render_text=render_plan,
    category="plans",
)
