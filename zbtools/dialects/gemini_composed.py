"""The two Gemini CLI tools composed of several canonical tool calls, ``read_many_files`` and
``save_memory`` (docs/dialects.md#gemini), and what the ``gemini`` module, where their tool
declarations are, shares with them.

* ``invalid``, ``call_canonical`` (one canonical tool's call), ``respects_git``, ``anchored``,
  ``FileFilteringOptions``: what both modules use.
* ``read_many``, ``read_many_text``: the files that ``include`` (and the older ``paths``) name
  or match, read with read_file and joined with Gemini's ``--- PATH ---`` separators.
* ``save_memory``, ``memory_content``, ``sanitize_fact``: a fact added as a ``- fact`` line under
  "## Gemini Added Memories" of ``MEMORY_FILE``, as Gemini CLI adds it to its GEMINI.md.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.context import Context

# Where save_memory keeps its facts: inside the workspace's own state folder, next to the plans
# (docs/dialects.md#gemini), never in the user's home or a project's GEMINI.md.
MEMORY_FILE = ".zbtools/memory/GEMINI.md"
PROJECT_MEMORY_FILE = ".zbtools/memory/MEMORY.md"
MEMORY_SECTION_HEADER = "## Gemini Added Memories"
MAX_MANY_FILES = 1000
# What Gemini's read_file returns as inline data (SVG is read as text), and its largest file
# (20 MB there; 16 MiB, the most a zbtools result carries, here)
INLINE_TYPES = {"png", "jpg", "jpeg", "gif", "webp", "bmp", "mp3", "wav", "aiff", "aif", "aac",
                "ogg", "flac", "pdf"}
MAX_INLINE_BYTES = 16 * 1024 * 1024
# Gemini's read_file returns its first 2,000 lines whatever their size (lines cut at 2,000
# characters): its own limit comes before the configured result budget.
READ_BYTES = 2000 * 2000


def invalid(message: str, hint: str, argument: str) -> ToolError:
    return ToolError("invalid_arguments", message, hint=hint, details={"problems": [
        {"problem": "invalid_value", "argument": argument, "message": message}]})


class FileFilteringOptions(Struct):
    respect_git_ignore: bool | None = field(
        default=None, help="Optional: Whether to respect .gitignore patterns when listing files. "
        "Only available in git repositories. Defaults to true.")
    respect_gemini_ignore: bool | None = field(
        default=None, help="Optional: Whether to respect .geminiignore patterns when listing "
        "files. Defaults to true.")


def call_canonical(name: str, args: dict[str, Any], ctx: Context) -> Any:
    """Run the canonical tool ``name`` (validated, within the call's limits)."""
    from zbtools.core.call.args import validate
    from zbtools.registry import find
    from zbtools.toolspec import apply_call_limits

    spec = find(name)
    assert spec is not None  # listed only when its canonical tools exist
    params = validate(spec.params, args)
    apply_call_limits(params, ctx)
    return spec.call(params, ctx)


def respects_git(options: FileFilteringOptions | None) -> bool:
    return options is None or options.respect_git_ignore is not False


def anchored(pattern: str) -> str:
    """A glob as Gemini matches it: a pattern without '/' names entries of the directory
    searched only (``*.md``), where the canonical tool would match at any depth."""
    return pattern if "/" in pattern else f"./{pattern}"


class ReadManyParams(Struct):
    include: list[str] | None = field(default=None, help="An array of glob patterns or paths. "
                                      'Examples: ["src/**/*.ts"], ["README.md", "docs/"]')
    paths: list[str] | None = field(default=None, help="Older form: glob patterns or paths, "
                                    "read together with include")
    exclude: list[str] | None = field(default=None, help="Optional. Glob patterns for "
                                      "files/directories to exclude. Example: \"**/*.log\"")
    recursive: bool = field(default=True, help="Optional. Whether to search recursively "
                            "(primarily controlled by `**` in glob patterns). Defaults to true.")
    useDefaultExcludes: bool = field(default=True, help="Optional. Whether to apply a list of "
                                     "default exclusion patterns (e.g., node_modules, .git, "
                                     "binary files). Defaults to true.")
    file_filtering_options: FileFilteringOptions | None = field(
        default=None, help="Whether to respect ignore patterns from .gitignore or .geminiignore")


class SaveMemoryParams(Struct):
    fact: str = field(help="The specific fact or piece of information to remember. Should be a "
                      "clear, self-contained statement.")
    scope: Literal["global", "project"] | None = field(
        default=None, help="Where to save the memory: 'global' (default) or 'project'.")


# -- results of the tools composed here -----------------------------------------------------------


class SkippedFile(Struct):
    path: str = field(help="The file, relative to the workspace root")
    reason: str = field(help="Why it was not read")


class InlineFile(Struct):
    path: str = field(help="The file, relative to the workspace root")
    mime: str = field(help="Its MIME type")
    data: str = field(help="Its bytes, base64-encoded")


class ReadManyResult(Struct):
    content: str = field(help="Each file as '--- PATH ---', a blank line, its text, a blank "
                         "line; then '--- End of content ---'")
    files: list[str] = field(help="The files read, in order")
    inline_data: list[InlineFile] = field(help="The images, audio files and PDFs read, which "
                                          "Gemini passes to the model whole: asked for by "
                                          "extension or name")
    skipped: list[SkippedFile] = field(help="Files matched but not read, with the reason")
    truncated: bool = field(help="More files matched than one call reads (1000)")


class MemoryResult(Struct):
    success: bool = field(help="The fact was saved")
    message: str = field(help="What was remembered")
    path: str = field(help="The memory file, relative to the workspace root")
    fact: str = field(help="The fact as saved (on one line, without a leading '-')")


# -- read_many_files ------------------------------------------------------------------------------


def _kind(ctx: Context, path: str) -> tuple[int | None, str]:
    """The mode and workspace path of what ``path`` names, or (None, "") for a pattern."""
    try:
        with ctx.workspace.resolve(path, create_parents=True) as res:
            if res.exists and res.st is not None:
                return res.st.st_mode, res.rel
    except ToolError:  # under a file, or outside the workspace: the glob reports it
        pass
    return None, ""


def read_many(params: ReadManyParams, ctx: Context) -> ReadManyResult:
    patterns = [*(params.paths or []), *(params.include or [])]
    if not patterns:
        raise invalid("params/include must NOT have fewer than 1 items",
                      'e.g. {"include": ["src/**/*.ts", "README.md"]}', "include")
    for i, pattern in enumerate(patterns):
        if not pattern:
            raise invalid(f"params/include/{i} must NOT have fewer than 1 characters",
                          "remove the empty pattern", "include")
    files, skipped = _matched(params, patterns, ctx)
    truncated = len(files) > MAX_MANY_FILES
    parts: list[str] = []
    read: list[str] = []
    inline: list[InlineFile] = []
    for path in files[:MAX_MANY_FILES]:
        asset = path.rsplit(".", 1)[-1].lower() in INLINE_TYPES
        if asset and not _asked_for(path, patterns):
            skipped.append(SkippedFile(path=path, reason="asset file (image/pdf/audio) was not "
                                       "explicitly requested by name or extension"))
            continue
        args: dict[str, Any] = ({"path": path, "as_base64": True,
                                 "max_base64_bytes": MAX_INLINE_BYTES} if asset else
                                {"path": path, "max_bytes": READ_BYTES})
        try:
            got = call_canonical("read_file", args, ctx)
        except ToolError as exc:
            skipped.append(SkippedFile(path=path, reason=exc.message))
            continue
        if asset:
            inline.append(InlineFile(path=path, mime=got.mime, data=got.data))
        elif got.kind != "text":
            skipped.append(SkippedFile(path=path, reason=f"not a text file ({got.kind})"))
            continue
        else:
            note = ("[WARNING: This file was truncated. To view the full content, use the "
                    "'read_file' tool on this specific file.]\n\n" if got.truncated else "")
            parts.append(f"--- {path} ---\n\n{note}{got.content}\n\n")
        read.append(path)
    parts.append("\n--- End of content ---" if read else
                 "No files matching the criteria were found or all were skipped.")
    return ReadManyResult(content="".join(parts), files=read, inline_data=inline,
                          skipped=skipped, truncated=truncated)


def read_many_text(result: ReadManyResult) -> str:
    """The text a model reads: the files' content as Gemini joins it, then what was left out."""
    lines = [result.content]
    lines += [f"[{f.mime} data of {f.path}: {len(f.data)} base64 characters]"
              for f in result.inline_data]
    lines += [f"skipped {s.path}: {s.reason}" for s in result.skipped]
    return "\n".join(lines) + "\n"


def _matched(params: ReadManyParams, patterns: list[str],
             ctx: Context) -> tuple[list[str], list[SkippedFile]]:
    """The files the patterns name or match, in path order, and the patterns that failed."""
    import stat

    walk: dict[str, Any] = {"include_hidden": True,
                            "include_ignored": not respects_git(params.file_filtering_options)}
    if not params.useDefaultExcludes:
        walk["exclude_dirs"] = []
    chosen: list[str] = []
    failed: list[SkippedFile] = []
    for pattern in patterns:
        kind, rel = _kind(ctx, pattern)
        if kind is not None and stat.S_ISREG(kind):
            chosen.append(rel)
            continue
        if kind is not None and stat.S_ISDIR(kind):
            base, glob = rel, "**/*" if params.recursive else "*"
        else:
            base, glob = ".", anchored(pattern)
        try:
            found = call_canonical("find_files_glob", {
                "pattern": glob, "path": base, "limit": 0, "exclude": params.exclude or None,
                **walk}, ctx)
        except ToolError as exc:  # outside the workspace, say: that pattern reads nothing
            failed.append(SkippedFile(path=pattern, reason=exc.message))
            continue
        chosen.extend(m.path for m in found.matches)
    return sorted(dict.fromkeys(chosen)), failed


def _asked_for(path: str, patterns: list[str]) -> bool:
    """Gemini reads an image, audio file or PDF only when a pattern names its extension or
    its name."""
    name = path.rsplit("/", 1)[-1].lower()
    ext = "." + name.rsplit(".", 1)[-1]
    return any(ext in p.lower() or name in p.lower() for p in patterns)


# -- save_memory ----------------------------------------------------------------------------------


def sanitize_fact(fact: str) -> str:
    """The fact on one line, without leading dashes or angle brackets (Gemini CLI's rule)."""
    import re

    text = re.sub(r"[\r\n]", " ", fact).strip()
    text = re.sub(r"^(-+\s*)+", "", text).strip()
    return re.sub(r"[<>]", " ", text)


def memory_content(current: str, fact: str, scope: str | None = None) -> str:
    """``current`` with ``fact`` added as Gemini CLI adds it: a ``- fact`` line at the end of the
    "## Gemini Added Memories" section (made at the end of the file when missing); in the
    project file, a ``- fact`` line at the end."""
    item = f"- {sanitize_fact(fact)}"
    if scope == "project":
        if not current:
            return f"{item}\n"
        return f"{current}{item}\n" if current.endswith("\n") else f"{current}\n{item}\n"
    at = current.find(MEMORY_SECTION_HEADER)
    if at == -1:
        if not current or current.endswith("\n\n"):
            separator = ""
        elif current.endswith("\n"):
            separator = "\n"
        else:
            separator = "\n\n"
        return f"{current}{separator}{MEMORY_SECTION_HEADER}\n{item}\n"
    start = at + len(MEMORY_SECTION_HEADER)
    end = current.find("\n## ", start)
    if end == -1:
        end = len(current)
    before = current[:start].rstrip()
    section = current[start:end].rstrip() + f"\n{item}"
    return f"{before}\n{section.lstrip()}\n{current[end:]}".rstrip() + "\n"


def save_memory(params: SaveMemoryParams, ctx: Context) -> MemoryResult:
    from zbtools.core.files.reading import read_bytes

    if not params.fact.strip():
        raise invalid('Parameter "fact" must be a non-empty string.',
                       "give the fact to remember", "fact")
    path = PROJECT_MEMORY_FILE if params.scope == "project" else MEMORY_FILE
    current = ""
    with ctx.workspace.resolve(path, create_parents=True) as res:
        if res.exists:
            current = read_bytes(res, shown=path).decode("utf-8", errors="replace")
    content = memory_content(current, params.fact, params.scope)
    call_canonical("write_file", {"path": path, "content": content, "newline": "as_is"}, ctx)
    fact = sanitize_fact(params.fact)
    return MemoryResult(success=True, message=f'Okay, I\'ve remembered that: "{fact}"',
                        path=path, fact=fact)
