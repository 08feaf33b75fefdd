"""The last partial rows of the dialect audit, each pinned (docs/dialects.md).

* zblade ``run_command``: ``cwd`` is required in the listed schema, as Zaguán Blade's reference
  says; a call without it still runs in the workspace root.
* Whole-file writes keep an existing file's CRLF line endings and byte-order mark, in every
  dialect whose writer overwrites (zblade ``write_file``, Claude ``Write``, fiz ``write``);
  ``newline: as_is`` with ``encoding: utf-8`` writes the string as received; the writers that
  never overwrite (zkit ``write``, Anthropic ``create``, Codex ``*** Add File``) leave the file
  as it was.
* The 16 MiB request cap (``max_request_bytes``): ``too_large`` with a message and a hint that
  names no tool, through a real process and in ``batch``, nothing written.
* Codex ``view_image``: a picture through read_file, as image content over MCP.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner, run_inprocess

BOM = b"\xef\xbb\xbf"
CRLF_FILE = BOM + b"old\r\nlines\r\n"


# -- run_command's cwd ------------------------------------------------------------------------


def test_zblade_lists_cwd_as_required_yet_runs_without_it(ws: Path, cli: CliRunner) -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect("zblade", {})
    listed = next(t for t in dialect.tools() if t.name == "run_command").input_schema()
    assert listed["required"] == ["command", "cwd"] and "default" not in listed["properties"]["cwd"]
    found = dialect.lookup("run_command")
    assert found is not None and found.input_schema()["required"] == ["command", "cwd"]
    schema = json.loads(cli("schema", "run_command").out)
    assert schema[0]["required"] == ["command", "cwd"]
    # other dialects' canonical fallback is untouched, and so is the runtime default
    fallback = get_dialect("claude", {}).lookup("run_command")
    assert fallback is not None and fallback.input_schema()["required"] == ["command"]
    (ws / "sub").mkdir()
    without = cli("run_command", stdin={"command": "pwd"}).json["result"]
    assert without["cwd"] == "." and without["stdout"].strip() == str(ws.resolve())
    inside = cli("run_command", stdin={"command": "pwd", "cwd": "sub"}).json["result"]
    assert inside["stdout"].strip() == str((ws / "sub").resolve())


# -- whole-file writes --------------------------------------------------------------------------

WRITERS: dict[str, tuple[str, Callable[[str, str], dict[str, Any]]]] = {  # dialect -> tool
    "zblade": ("write_file", lambda p, c: {"path": p, "content": c}),
    "claude": ("Write", lambda p, c: {"file_path": p, "content": c}),
    "fiz": ("write", lambda p, c: {"path": p, "content": c}),
}


@pytest.mark.parametrize("dialect", sorted(WRITERS))
def test_an_overwrite_keeps_crlf_and_the_bom(ws: Path, cli: CliRunner, dialect: str) -> None:
    tool, args = WRITERS[dialect]
    (ws / "f.txt").write_bytes(CRLF_FILE)
    out = cli("--dialect", dialect, tool, stdin=args("f.txt", "new\ntext\n")).json
    assert out["ok"], out
    assert (ws / "f.txt").read_bytes() == BOM + b"new\r\ntext\r\n"
    # the string as received, when asked
    exact = dict(args("f.txt", "as\nsent\n"), newline="as_is", encoding="utf-8")
    assert cli("--dialect", dialect, tool, stdin=exact).json["ok"]
    assert (ws / "f.txt").read_bytes() == b"as\nsent\n"
    # a new file is the string as received, whatever its line endings
    assert cli("--dialect", dialect, tool, stdin=args("g.txt", "a\r\nb\n")).json["ok"]
    assert (ws / "g.txt").read_bytes() == b"a\r\nb\n"


def test_content_with_its_own_bom_does_not_double_it(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(CRLF_FILE)
    assert cli("write_file", stdin={"path": "f.txt", "content": "\ufeffx\n"}).json["ok"]
    assert (ws / "f.txt").read_bytes() == BOM + b"x\r\n"


@pytest.mark.parametrize(("dialect", "tool", "args"), [
    ("zkit", "write", {"path": "f.txt", "content": "x\n"}),
    ("anthropic", "str_replace_based_edit_tool",
     {"command": "create", "path": "f.txt", "file_text": "x\n"}),
    ("codex", "apply_patch",
     {"input": "*** Begin Patch\n*** Add File: f.txt\n+x\n*** End Patch\n"}),
])
def test_writers_that_never_overwrite_leave_the_bytes(ws: Path, cli: CliRunner, dialect: str,
                                                     tool: str, args: dict[str, Any]) -> None:
    (ws / "f.txt").write_bytes(CRLF_FILE)
    assert cli("--dialect", dialect, tool, stdin=args).error["code"] == "already_exists"
    assert (ws / "f.txt").read_bytes() == CRLF_FILE


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(st.characters(codec="utf-8", exclude_characters="\r\ufeff"),
                       max_size=40))
def test_overwrite_rule_for_any_content(ws: Path, content: str) -> None:
    """A CRLF file with a BOM, overwritten: the BOM, then the content with CRLF endings."""
    (ws / "f.txt").write_bytes(CRLF_FILE)
    call = run_inprocess(["write_file"], stdin=json.dumps({"path": "f.txt", "content": content}),
                         workspace=ws)
    assert json.loads(call.out)["ok"], call.out
    assert (ws / "f.txt").read_bytes() == BOM + content.replace("\n", "\r\n").encode()


# -- the request cap ----------------------------------------------------------------------------

SMALL_CAP = {"ZBTOOLS_MAX_REQUEST_BYTES": "4096"}


def check_too_large(error: dict[str, Any]) -> None:
    assert error["code"] == "too_large"
    assert "4096" in error["message"] and error["details"]["limit"] == 4096
    assert "ZBTOOLS_MAX_REQUEST_BYTES" in error["hint"]
    assert "write_append" not in error["hint"]  # the hint names no tool a dialect may lack


def test_the_cap_in_a_real_process(ws: Path, proc: CliRunner) -> None:
    big = {"file_path": "big.txt", "content": "x" * 5000}
    call = proc("--dialect", "claude", "Write", stdin=big, env=SMALL_CAP)
    check_too_large(call.error)
    assert call.err == "" and not (ws / "big.txt").exists()


def test_the_cap_in_batch(ws: Path, cli: CliRunner) -> None:
    big = {"id": 1, "tool": "Write", "args": {"file_path": "big.txt", "content": "x" * 5000}}
    small = {"id": 2, "tool": "Write", "args": {"file_path": "small.txt", "content": "y\n"}}
    call = cli("--dialect", "claude", "batch",
               stdin="".join(json.dumps(r) + "\n" for r in (big, small)), env=SMALL_CAP)
    first, second = (json.loads(line) for line in call.out.splitlines())
    check_too_large(first["error"])
    assert first["error"]["details"]["line"] == 1
    assert second["id"] == 2 and second["ok"]
    assert not (ws / "big.txt").exists() and (ws / "small.txt").read_text() == "y\n"


# -- Codex view_image -----------------------------------------------------------------------


def picture(path: Path, size: tuple[int, int] = (8, 6)) -> bytes:
    pil = pytest.importorskip("PIL.Image")
    image = pil.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    image.save(path)
    return path.read_bytes()


def test_view_image(ws: Path, cli: CliRunner) -> None:
    import base64

    data = picture(ws / "p.png")
    result = cli("--dialect", "codex", "view_image", stdin={"path": "p.png"}).json["result"]
    assert result["kind"] == "image" and base64.b64decode(result["data"]) == data
    (ws / "t.txt").write_text("text\n")
    error = cli("--dialect", "codex", "view_image", stdin={"path": "t.txt"}).error
    assert error["code"] == "unsupported_format" and "shell" in error["hint"]
    # detail: original keeps the exact picture, refused over the limits; high downscales it
    picture(ws / "big.png", (200, 200))
    limited = {"path": "big.png", "max_image_bytes": 2048}
    refused = cli("--dialect", "codex", "view_image",
                  stdin=dict(limited, detail="original")).error
    assert refused["code"] == "too_large" and "downscale" not in refused["hint"]
    smaller = cli("--dialect", "codex", "view_image", stdin=limited).json["result"]
    assert smaller["downscaled"] is True


def test_view_image_in_a_real_process(ws: Path, proc: CliRunner) -> None:
    picture(ws / "p.png")
    call = proc("--dialect", "codex", "view_image", "--path", "p.png", "--format", "text")
    assert call.code == 0 and call.out.startswith("[image p.png: image/png, 8x6 pixels")


def test_view_image_over_mcp_is_image_content(ws: Path) -> None:
    pytest.importorskip("mcp")
    import base64

    from mcp import types

    from tests.surfaces.mcp_memory import in_memory

    data = picture(ws / "p.png")
    [result] = in_memory(ws, [("view_image", {"path": str(ws / "p.png")})], dialect="codex")
    assert result.is_error is False
    image = result.content[1]
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == data
