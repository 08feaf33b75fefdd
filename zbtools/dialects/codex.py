"""The ``codex`` dialect: OpenAI Codex CLI's tools apply_patch, shell and update_plan.

* ``apply_patch`` -> apply_edit's ``patch``: ``input`` is the whole ``*** Begin Patch`` ...
  ``*** End Patch`` envelope (``*** Add File:``, ``*** Update File:`` with ``@@`` hunks and
  ``*** Move to:``, ``*** Delete File:``), applied to every file it names all or nothing.
* ``shell`` -> bash: ``command`` is an argv array; ``["bash", "-lc", SCRIPT]`` (or ``sh -c``,
  ``zsh -lc``...) runs SCRIPT, any other argv is shell-quoted and run as one command.
  ``workdir`` -> ``cwd`` (inside the workspace), ``timeout_ms`` as bash.
  ``with_escalated_permissions`` and ``justification`` are accepted and ignored: zbtools'
  approval policy and sandbox are configured, not requested per call.
* ``update_plan`` -> update_plan: ``plan: [{step, status}]`` sets the whole plan,
  ``explanation`` the note.
* ``view_image`` -> read_file: ``path`` to a picture (PNG, JPEG, GIF, WebP, BMP), returned as
  image content; ``detail`` ``high`` (the default) downscales a picture over read_file's size
  limits as Codex resizes to fit, ``original`` keeps its exact resolution (``too_large`` over
  the limits). Any other file is ``unsupported_format``.

Not mapped: Codex's experimental tools.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.dialects import Dialect, DialectTool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

# apply_patch's matching tolerances (docs/dialects.md#tiers): Codex's own (trailing, then all
# surrounding whitespace, then Unicode punctuation), which here are the line tiers T2-T5.
PATCH_TIERS = ["trailing_whitespace", "indentation", "inner_whitespace", "typography"]
SHELLS = {"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh",
          "/usr/bin/zsh"}


class ApplyPatchParams(Struct):
    input: str = field(text_body=True,
                       help="The entire contents of the apply_patch command: *** Begin Patch, "
                       "file sections (*** Add File / *** Update File / *** Delete File), "
                       "*** End Patch")


class ShellParams(Struct):
    command: list[str] = field(help="The command to execute")
    workdir: str | None = field(default=None,
                                help="The working directory to execute the command in")
    timeout_ms: int | None = field(default=None,
                                   help="The timeout for the command in milliseconds")
    with_escalated_permissions: bool | None = field(
        default=None, help="Whether to request escalated permissions (accepted, not used)")
    justification: str | None = field(
        default=None, help="Why escalated permissions are needed (accepted, not used)")


class PlanItem(Struct):
    step: str = field(help="What the step does")
    status: Literal["pending", "in_progress", "completed"] = field(
        help="One of: pending, in_progress, completed")


class UpdatePlanParams(Struct):
    explanation: str | None = field(default=None, help="A note on this update")
    plan: list[PlanItem] = field(help="The list of steps")


def _apply_patch(params: ApplyPatchParams, out: dict[str, Any]) -> None:
    out.pop("input", None)
    out["patch"] = params.input


def _shell(params: ShellParams, out: dict[str, Any]) -> None:
    import shlex

    argv = params.command
    if not argv:
        raise ToolError("invalid_arguments", "command is empty",
                        hint='e.g. {"command": ["bash", "-lc", "ls -la"]}',
                        details={"problems": [{"problem": "missing_argument",
                                               "argument": "command",
                                               "message": "command is an empty array"}]})
    if len(argv) == 3 and argv[0] in SHELLS and argv[1] in ("-c", "-lc", "-cl"):
        script = argv[2]
    else:
        script = shlex.join(argv)
    for key in ("command", "workdir", "with_escalated_permissions", "justification"):
        out.pop(key, None)
    out["command"] = script
    if params.workdir is not None:
        out["cwd"] = params.workdir


def _plan(params: UpdatePlanParams, out: dict[str, Any]) -> None:
    out.pop("plan", None)
    out["steps"] = [{"title": item.step, "status": item.status} for item in params.plan]


class ViewImageParams(Struct):
    path: str = field(help="Local filesystem path to an image file.")
    detail: Literal["high", "original"] | None = field(
        default=None, help="Image detail level. Defaults to `high`; use `original` to preserve "
        "exact resolution.")


def _view_image(params: ViewImageParams, out: dict[str, Any]) -> None:
    out.pop("detail", None)
    out["downscale"] = params.detail != "original"


def _only_images(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("kind") != "image":
        raise ToolError("unsupported_format", f"{result.get('path')}: not an image: view_image "
                        "shows PNG, JPEG, GIF, WebP and BMP files",
                        hint='read other files with shell, e.g. ["bash", "-lc", "cat PATH"]',
                        details={"path": result.get("path")})
    return result


def _image_error(error: ToolError) -> ToolError:
    if error.code == "too_large" and error.hint:
        error.hint = "leave detail out (or pass detail: \"high\") for a smaller copy"
    return error


def _tools() -> list[DialectTool]:
    return [
        DialectTool("apply_patch", "apply_edit", params=ApplyPatchParams,
                    translate=_apply_patch, closed=True, fixed={"tiers": PATCH_TIERS},
                    description=(
                        "Use the `apply_patch` tool to edit files. The patch is an envelope: "
                        "*** Begin Patch, then for each file *** Add File: PATH (lines prefixed "
                        "with +), *** Delete File: PATH, or *** Update File: PATH (optionally "
                        "*** Move to: NEW_PATH) followed by @@ hunks whose lines start with a "
                        "space (context), - (remove) or + (add); then *** End Patch. Paths are "
                        "relative.")),
        DialectTool("shell", "bash", params=ShellParams, translate=_shell, description=(
            "Runs a shell command and returns its output. The command is an argv array, "
            'usually ["bash", "-lc", "<script>"]; set workdir rather than using cd.')),
        DialectTool("update_plan", "update_plan", params=UpdatePlanParams, translate=_plan,
                    closed=True, description=(
                        "Updates the task plan: the full list of steps, each with a status "
                        "(pending, in_progress, completed); at most one step in_progress.")),
        DialectTool("view_image", "read_file", params=ViewImageParams, translate=_view_image,
                    adapt=_only_images, adapt_error=_image_error, closed=True, description=(
                        "View a local image file from the filesystem when visual inspection "
                        "is needed. Use this for images already available on disk.")),
    ]


DIALECT = Dialect("codex", _tools)
