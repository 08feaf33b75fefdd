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

from zbtools.core.call.args import Struct
from zbtools.core.state.plans import load_steps
from zbtools.core.state.store import PLAN, StateFile
from zbtools.toolkit.plans import PlanResult, plan_result, render
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:

    from zbtools.core.call.context import Context


class Params(Struct):
    pass


def run(params: Params, ctx: Context) -> PlanResult:
    with StateFile(ctx, PLAN, shared=True) as state:
        return plan_result(state.data, load_steps(state))


TOOL = ToolSpec(
    name="get_plan",
    doc=__doc__,
    params=Params,
    result=PlanResult,
    run=run,
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="plans",
)
