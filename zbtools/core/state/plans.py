"""Plans: markdown documents in the workspace, and the live structured plan
(docs/internals/sources.md#zkit).

Plan documents are workspace files ``.zbtools/plans/<name>.md`` (docs/internals/security.md#state:
users share and edit them), written through the workspace resolver (a ``.zbtools`` or ``plans``
symlink that leads outside is refused) with the atomic write of the file tools. A plan name is 1 to
``NAME_MAX`` (64) characters of letters, digits, ``.``, ``_`` and ``-``, not starting with a dot
or a dash and without ``..``: no separators, no traversal, no hidden files. A trailing ``.md``
is accepted and dropped (``"release.md"`` is the plan ``release``).

The live plan of update_plan/get_plan is an ordered list of steps, each ``pending``,
``in_progress`` or ``completed``, with at most one step in progress. It is session state like
the editor's (what a plan pane renders while the agent works), so it lives in the workspace's
state directory as the locked, versioned state document ``plan.json`` (``core/state/store.py``):
parallel updates never lose each other's changes, and nothing in the workspace changes when an
agent ticks a step. Step ids (``s1``, ``s2``, ...) are short and stable: never reused, and kept
when a whole new list repeats a step's title.

Failure modes: ``invalid_arguments`` (a bad plan name, two steps in progress, empty titles,
duplicate ids), ``unknown_id`` (an update names no step), ``state_corrupt``.
"""

from __future__ import annotations

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.state.store import StateFile

PLAN_DIR = ".zbtools/plans"
NAME_MAX = 64
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
STATUSES = ("pending", "in_progress", "completed")
MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
MAX_STEPS = 500
MAX_TITLE = 2000


def plan_name(raw: str) -> str:
    """The validated plan name (``invalid_arguments`` otherwise)."""
    name = raw[:-3] if raw.endswith(".md") else raw
    problem = None
    if not name:
        problem = "is empty"
    elif len(name) > NAME_MAX:
        problem = f"is longer than {NAME_MAX} characters"
    elif "/" in name or "\\" in name:
        problem = "contains a path separator"
    elif ".." in name:
        problem = "contains '..'"
    elif name[0] in ".-":
        problem = "starts with a dot or a dash"
    elif not set(name) <= NAME_CHARS:
        bad = sorted(set(name) - NAME_CHARS)
        problem = f"contains {''.join(bad)!r}"
    if problem is not None:
        raise ToolError("invalid_arguments", f"plan name {raw!r} {problem}",
                        hint=f"use 1-{NAME_MAX} letters, digits, '.', '_' or '-' (not starting "
                        "with '.' or '-'), e.g. release-plan; the plan is saved as "
                        f"{PLAN_DIR}/<name>.md", details={"name": raw})
    return name


def plan_path(name: str) -> str:
    return f"{PLAN_DIR}/{name}.md"


# ---------------------------------------------------------------------------------------------
# The live structured plan


def load_steps(state: StateFile) -> list[dict[str, Any]]:
    """The steps of the plan document, checked for shape (``state_corrupt`` otherwise)."""
    steps = state.data.get("steps", [])
    if not isinstance(steps, list) or not all(
            isinstance(s, dict) and isinstance(s.get("id"), str)
            and isinstance(s.get("title"), str) and s.get("status") in STATUSES
            for s in steps):
        raise state.corrupt("has steps of the wrong shape")
    if type(state.data.get("next_id", 1)) is not int:
        raise state.corrupt("has a bad step counter")
    explanation = state.data.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise state.corrupt("has a bad explanation")
    return steps


def new_id(state: StateFile) -> str:
    number: int = state.data.get("next_id", 1)
    state.data["next_id"] = number + 1
    return f"s{number}"


def check_title(title: str, where: str) -> str:
    cleaned = title.strip()
    if not cleaned:
        raise ToolError("invalid_arguments", f"{where}: the title is empty",
                        hint="give every step a short title")
    if len(cleaned) > MAX_TITLE:
        raise ToolError("invalid_arguments", f"{where}: the title is longer than {MAX_TITLE} "
                        "characters", hint="keep step titles short; put details in a plan "
                        "document (save_plan)")
    return cleaned


def check_one_in_progress(steps: list[dict[str, Any]]) -> None:
    busy = [(i, s) for i, s in enumerate(steps, 1) if s["status"] == "in_progress"]
    if len(busy) > 1:
        listed = ", ".join(f"step {i} ({s['id']}) {s['title']!r}" for i, s in busy)
        raise ToolError(
            "invalid_arguments", f"at most one step may be in_progress at a time, but this "
            f"would leave {len(busy)}: {listed}",
            hint="complete the current step (or set it back to pending) in the same call, e.g. "
            'updates: [{"index": 1, "status": "completed"}, {"index": 2, "status": '
            '"in_progress"}]', details={"in_progress": [s["id"] for _, s in busy]})


def checklist(steps: list[dict[str, Any]], explanation: str | None = None) -> str:
    """The text rendering: one ``N. [x] title`` line per step."""
    if not steps:
        return "no plan yet (update_plan sets one)\n"
    done = sum(1 for s in steps if s["status"] == "completed")
    out = f"plan: {done}/{len(steps)} completed\n"
    if explanation:
        out += f"{explanation}\n"
    width = len(str(len(steps)))
    out += "".join(f"{i:>{width}}. {MARKS[s['status']]} {s['title']}\n"
                   for i, s in enumerate(steps, 1))
    return out
