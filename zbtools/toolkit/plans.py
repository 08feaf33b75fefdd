"""What the plan tools share (get_plan, update_plan): the plan as a result.

``PlanResult`` (a list of ``PlanStep``) is what both return; ``plan_result`` builds it from the
stored plan, ``render`` is its text form.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.state.plans import checklist

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class PlanStep(Struct):
    id: str = field(help="Stable id of the step (s1, s2, ...)")
    index: int = field(help="Position in the plan (1-based)")
    title: str = field(help="What the step does")
    status: str = field(help="pending, in_progress or completed")


class PlanResult(Struct):
    steps: list[PlanStep] = field(help="The steps, in order")
    explanation: str | None = field(help="The note that came with the last update")
    total: int = field(help="Number of steps")
    completed: int = field(help="Steps completed")
    in_progress: str | None = field(help="Id of the step in progress (at most one)")
    pending: int = field(help="Steps not started")
    updated_at: float | None = field(help="When the plan last changed (Unix time)")


def plan_result(data: dict[str, Any], steps: list[dict[str, Any]]) -> PlanResult:
    busy = [s["id"] for s in steps if s["status"] == "in_progress"]
    return PlanResult(
        steps=[PlanStep(id=s["id"], index=i, title=s["title"], status=s["status"])
               for i, s in enumerate(steps, 1)],
        explanation=data.get("explanation"), total=len(steps),
        completed=sum(1 for s in steps if s["status"] == "completed"),
        in_progress=busy[0] if busy else None,
        pending=sum(1 for s in steps if s["status"] == "pending"),
        updated_at=data.get("updated_at"))


def render(result: PlanResult) -> str:
    return checklist([s.to_json() for s in result.steps], result.explanation)
