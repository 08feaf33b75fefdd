"""Get the live structured plan that update_plan maintains: its steps and their status.

Each step has a stable ``id``, its 1-based ``index``, a ``title`` and a ``status`` (``pending``,
``in_progress`` or ``completed``); the counts and the step in progress come with it. The text
rendering is a checklist: ``[x]`` completed, ``[~]`` in progress, ``[ ]`` pending. With no plan
set yet the list is empty. The plan lives in the workspace's state directory (outside the
workspace); plan documents saved with save_plan are files under ``.zbtools/plans/``.

Failure modes: ``state_corrupt`` (the plan state file is unreadable or from a newer zbtools; it is
never overwritten), ``io_error``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.state.plans import checklist, load_steps
from zbtools.core.state.store import PLAN, StateFile
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context


class PlanStep(Struct):
    id: str = field(help="Stable id of the step (s1, s2, ...)")
    index: int = field(help="Position in the plan (1-based)")
    title: str = field(help="What the step does")
    status: str = field(help="pending, in_progress or completed")


class Params(Struct):
    pass


class Result(Struct):
    steps: list[PlanStep] = field(help="The steps, in order")
    explanation: str | None = field(help="The note that came with the last update")
    total: int = field(help="Number of steps")
    completed: int = field(help="Steps completed")
    in_progress: str | None = field(help="Id of the step in progress (at most one)")
    pending: int = field(help="Steps not started")
    updated_at: float | None = field(help="When the plan last changed (Unix time)")


def plan_result(data: dict[str, Any], steps: list[dict[str, Any]]) -> Result:
    busy = [s["id"] for s in steps if s["status"] == "in_progress"]
    return Result(
        steps=[PlanStep(id=s["id"], index=i, title=s["title"], status=s["status"])
               for i, s in enumerate(steps, 1)],
        explanation=data.get("explanation"), total=len(steps),
        completed=sum(1 for s in steps if s["status"] == "completed"),
        in_progress=busy[0] if busy else None,
        pending=sum(1 for s in steps if s["status"] == "pending"),
        updated_at=data.get("updated_at"))


def run(params: Params, ctx: Context) -> Result:
    with StateFile(ctx, PLAN, shared=True) as state:
        return plan_result(state.data, load_steps(state))


def render(result: Result) -> str:
    return checklist([s.to_json() for s in result.steps], result.explanation)


TOOL = ToolSpec(
    name="get_plan",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="plans",
)
