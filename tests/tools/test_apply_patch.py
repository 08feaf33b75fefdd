"""apply_edit with a patch: unified diffs and Codex envelopes, validated whole before any write."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with


def put(ws: Path, name: str, text: str | bytes) -> Path:
    path = ws / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def patch(cli: CliRunner, text: str, **extra: object) -> object:
    return cli("apply_edit", stdin={"patch": text, **extra})


def refused(ws: Path, cli: CliRunner, text: str, code: str, *words: str) -> dict[str, Any]:
    """Send the patch ``text``: refused with ``code``, its message naming ``words``, and the
    workspace exactly as it was. Returns the error."""
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"patch": text})
    assert call.error["code"] == code, call
    for word in words:
        assert word in call.error["message"], call
    assert snapshot(ws) == before
    error: dict[str, Any] = call.error
    return error


SRC = "def f():\n    return 1\n\ndef g():\n    return 2\n"


def test_a_unified_diff_updates_a_file(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "m.py", SRC)
    diff = ("--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,2 @@\n def g():\n-    return 2\n"
            "+    return 20\n")
    result = cli("apply_edit", stdin={"patch": diff}).result
    assert f.read_text() == SRC.replace("return 2", "return 20")
    assert result["files"] == [{"path": "m.py", "action": "updated", "edits": 1}]


def test_stale_line_numbers_and_wrong_counts_are_only_hints(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "m.py", SRC)
    diff = ("--- a/m.py\n+++ b/m.py\n@@ -40,7 +40,9 @@\n def g():\n-    return 2\n"
            "+    return 20\n")
    cli("apply_edit", stdin={"patch": diff}).result
    assert "return 20" in f.read_text()


def test_hunks_without_file_headers_apply_to_the_given_path(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "m.py", SRC)
    cli("apply_edit", stdin={"path": "m.py",
                             "patch": "@@\n def f():\n-    return 1\n+    return 10\n"}).result
    assert "return 10" in f.read_text()
    call = cli("apply_edit", stdin={"patch": "@@\n def f():\n-    return 10\n+    return 1\n"})
    assert call.error["code"] == "invalid_arguments"


def test_a_multi_file_unified_diff_creates_deletes_and_renames(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.py", SRC)
    put(ws, "old.txt", "bye\n")
    put(ws, "a.txt", "keep\n")
    diff = (
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n"
        "@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
    )
    result = cli("apply_edit", stdin={"patch": diff}).result
    actions = {f["path"]: f["action"] for f in result["files"]}
    assert actions == {"new.txt": "created", "old.txt": "deleted", "a.txt": "renamed"}
    assert (ws / "new.txt").read_text() == "hello\nworld\n"
    assert not (ws / "old.txt").exists()
    assert not (ws / "a.txt").exists()
    assert (ws / "b.txt").read_text() == "keep\n"


def test_no_newline_at_end_of_file_markers_are_honoured(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "one\ntwo")
    diff = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n"
            "+TWO\n\\ No newline at end of file\n")
    cli("apply_edit", stdin={"patch": diff}).result
    assert f.read_bytes() == b"one\nTWO"


def test_a_failing_file_in_a_multi_file_patch_writes_nothing(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.py", SRC)
    put(ws, "other.py", "x = 1\n")
    diff = ("--- a/m.py\n+++ b/m.py\n@@\n-    return 1\n+    return 10\n"
            "--- a/other.py\n+++ b/other.py\n@@\n-y = 2\n+y = 3\n"
            "--- /dev/null\n+++ b/created.txt\n@@ -0,0 +1 @@\n+new\n")
    refused(ws, cli, diff, "no_match", "other.py")


def test_a_codex_patch_adds_updates_moves_and_deletes(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.py", SRC)
    put(ws, "gone.txt", "x\n")
    text = ("*** Begin Patch\n"
            "*** Add File: pkg/new.py\n+print('hi')\n"
            "*** Update File: m.py\n*** Move to: n.py\n@@ def g():\n-    return 2\n+    return 3\n"
            "*** Delete File: gone.txt\n"
            "*** End Patch\n")
    result = cli("apply_edit", stdin={"patch": text}).result
    assert {f["action"] for f in result["files"]} == {"created", "renamed", "deleted"}
    assert (ws / "pkg/new.py").read_text() == "print('hi')\n"
    assert (ws / "n.py").read_text() == SRC.replace("return 2", "return 3")
    assert not (ws / "m.py").exists() and not (ws / "gone.txt").exists()


def test_codex_scope_lines_pick_the_right_one_of_two_equal_bodies(ws: Path,
                                                                  cli: CliRunner) -> None:
    src = ("class A:\n    def close(self):\n        self.conn.close()\n\n"
           "class B:\n    def close(self):\n        self.conn.close()\n")
    f = put(ws, "c.py", src)
    text = ("*** Begin Patch\n*** Update File: c.py\n@@ class B:\n@@     def close(self):\n"
            "-        self.conn.close()\n+        self.pool.release(self.conn)\n*** End Patch")
    cli("apply_edit", stdin={"patch": text}).result
    assert f.read_text() == src[: src.rindex("self.conn.close()")] + \
        "self.pool.release(self.conn)\n"
    ambiguous = ("*** Begin Patch\n*** Update File: c.py\n@@     def close(self):\n"
                 "-        self.conn.close()\n+        x()\n*** End Patch")
    assert cli("apply_edit", stdin={"patch": ambiguous}).error["code"] == "ambiguous_scope"


def test_a_pure_addition_needs_an_anchor(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "m.py", SRC)
    before = snapshot(ws)
    bare = "*** Begin Patch\n*** Update File: m.py\n+import os\n*** End Patch"
    assert cli("apply_edit", stdin={"patch": bare}).error["code"] == "anchor_required"
    assert snapshot(ws) == before
    at_end = "*** Begin Patch\n*** Update File: m.py\n@@\n+# end\n*** End of File\n*** End Patch"
    cli("apply_edit", stdin={"patch": at_end}).result
    assert f.read_text() == SRC + "# end\n"
    after_scope = "*** Begin Patch\n*** Update File: m.py\n@@ def f():\n+    '''doc'''\n" \
                  "*** End Patch"
    cli("apply_edit", stdin={"patch": after_scope}).result
    assert f.read_text().startswith("def f():\n    '''doc'''\n    return 1\n")


def test_a_zero_context_unified_hunk_inserts_after_its_line(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "one\ntwo\nthree\n")
    cli("apply_edit", stdin={"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -2,0 +3 @@\n+two.5\n"}
        ).result
    assert f.read_text() == "one\ntwo\ntwo.5\nthree\n"


def test_paths_that_leave_the_workspace_or_are_symlinks_are_refused(ws: Path,
                                                                    cli: CliRunner) -> None:
    for text in ("--- a/../x\n+++ b/../x\n@@\n-a\n+b\n",
                 "--- /etc/passwd\n+++ /etc/passwd\n@@\n-a\n+b\n",
                 "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch",
                 "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@"
                 "\n+/etc/passwd\n"):
        call = cli("apply_edit", stdin={"patch": text})
        assert call.error["code"] == "patch_parse_error", text
        assert call.code == 2
    assert not (ws.parent / "evil.txt").exists()


def test_adding_a_file_that_exists_is_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "x\n")
    text = "*** Begin Patch\n*** Add File: a.txt\n+y\n*** End Patch"
    assert cli("apply_edit", stdin={"patch": text}).error["code"] == "already_exists"
    assert (ws / "a.txt").read_text() == "x\n"


def test_a_patch_dry_run_writes_nothing(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.py", SRC)
    before = snapshot(ws)
    text = "*** Begin Patch\n*** Add File: z.txt\n+z\n*** Update File: m.py\n@@\n-    return 1\n" \
           "+    return 9\n*** End Patch"
    result = cli("apply_edit", stdin={"patch": text, "dry_run": True}).result
    assert result["dry_run"] is True and "+    return 9" in result["diff"]
    assert snapshot(ws) == before


def test_malformed_patches_are_parse_errors_with_a_line_number(ws: Path,
                                                              cli: CliRunner) -> None:
    call = cli("apply_edit", stdin={"patch": "*** Begin Patch\n*** Update File: a\n-x\n"})
    assert call.error["code"] == "patch_parse_error"
    assert cli("apply_edit", stdin={"patch": "just some text"}).error["code"] == \
        "patch_parse_error"


def test_codex_input_alias_and_apply_patch_name(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "x\n")
    cli("apply_patch", stdin={"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n"
                                       "*** End Patch"}).result
    assert f.read_text() == "y\n"


def test_a_rename_whose_source_cannot_be_removed_leaves_nothing_behind(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    put(ws, "m.py", SRC)
    put(ws, "other.py", "x = 1\n")
    before = snapshot(ws)
    fail_with(monkeypatch, "unlink", errno.EPERM, when=lambda name, **kw: name == "m.py")
    for text in ("*** Begin Patch\n*** Update File: other.py\n@@\n-x = 1\n+x = 2\n"
                 "*** Update File: m.py\n*** Move to: pkg/sub/n.py\n@@ def g():\n"
                 "-    return 2\n+    return 3\n*** End Patch\n",
                 "diff --git a/m.py b/pkg/n.py\nsimilarity index 100%\n"
                 "rename from m.py\nrename to pkg/n.py\n"):
        call = cli("apply_edit", stdin={"patch": text})
        assert call.code == 1 and call.error["code"] == "permission_denied", call
        assert snapshot(ws) == before


def test_a_created_file_that_cannot_be_written_leaves_no_new_directories(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    put(ws, "m.py", SRC)
    before = snapshot(ws)
    fail_with(monkeypatch, "write", errno.ENOSPC)
    call = cli("apply_edit",
               stdin={"patch": "*** Begin Patch\n*** Add File: pkg/sub/new.py\n+x\n"
                      "*** End Patch\n"})
    assert call.code == 1 and call.error["code"] == "no_space", call
    assert snapshot(ws) == before


def test_a_codex_file_header_padded_with_blanks_is_read_as_codex_reads_it(
        ws: Path, cli: CliRunner) -> None:
    (ws / "x.txt").write_text("old\n")
    patch = "*** Begin Patch\n  *** Update File: x.txt\n@@\n-old\n+new\n*** End Patch"
    call = cli("--dialect", "codex", "apply_patch", stdin={"input": patch})
    assert call.code == 0, call
    assert (ws / "x.txt").read_text() == "new\n"


def test_a_codex_update_section_without_hunks_is_refused_not_a_silent_success(
        ws: Path, cli: CliRunner) -> None:
    (ws / "x.txt").write_text("old\n")
    patch = "*** Begin Patch\n*** Update File: x.txt\n*** End Patch"
    call = cli("--dialect", "codex", "apply_patch", stdin={"input": patch})
    assert call.code == 2  # a malformed patch, like every patch_parse_error
    assert call.error["code"] == "patch_parse_error"
    assert "no hunks" in call.error["message"]
    renamed = cli("--dialect", "codex", "apply_patch", stdin={
        "input": "*** Begin Patch\n*** Update File: x.txt\n*** Move to: y.txt\n*** End Patch"})
    assert renamed.code == 0, renamed  # a move alone is a rename, not an empty update
    assert (ws / "y.txt").read_text() == "old\n" and not (ws / "x.txt").exists()


def test_a_lone_cr_ends_a_line_for_a_patch(ws: Path, cli: CliRunner) -> None:
    """A patch's lines are broken at LF, CRLF and a lone CR, as newer Codex reads them
    (docs/internals/matching.md#file-model): ``two`` is a line of ``one\\rtwo`` and keeps
    its neighbour's CR; a hunk never matches from the middle of a line."""
    f = put(ws, "f.txt", b"one\rtwo\nthree\n")
    call = cli("--dialect", "codex", "apply_patch", stdin={
        "input": "*** Begin Patch\n*** Update File: f.txt\n@@\n-two\n+TWO\n*** End Patch\n"})
    assert call.code == 0, call
    assert f.read_bytes() == b"one\rTWO\nthree\n"
    f.write_bytes(b"one\rtwo\nthree\n")
    mid = put(ws, "g.txt", "atwo\nthree\n")
    call = cli("apply_edit", stdin={"patch": "--- a/g.txt\n+++ b/g.txt\n@@\n-two\n+TWO\n"})
    assert call.error["code"] == "no_match", call
    assert mid.read_text() == "atwo\nthree\n"
    call = cli("--dialect", "codex", "apply_patch", stdin={
        "input": "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\rtwo\n+ONE\n*** End Patch\n"})
    assert call.code == 0, call
    assert f.read_bytes() == b"ONE\nthree\n"
    assert "\\ No newline" not in call.result["diff"]


def test_a_no_match_never_names_lines_past_the_end_of_the_file(ws: Path,
                                                               cli: CliRunner) -> None:
    put(ws, "f.txt", b"x\ny\na\rb\rc\n")  # five lines, to a patch (a lone CR ends one)
    call = cli("--dialect", "codex", "apply_patch", stdin={
        "input": "*** Begin Patch\n*** Update File: f.txt\n@@\n-c\n-zz\n+X\n*** End Patch\n"})
    error = call.error
    assert error["code"] == "no_match"
    assert error["details"]["closest"]["end_line"] <= 5
    assert "lines 5-5" in error["message"] and "5-6" not in error["message"]
    assert "5-6" not in error["hint"]


def test_a_refused_patch_file_leaves_no_descriptor_open(ws: Path, cli: CliRunner) -> None:
    # A batch or MCP session runs thousands of calls in one process: each refusal of a patch's
    # file (exists, missing, no match, move onto a file) once kept that file's directory open.
    import os

    (ws / "sub").mkdir()
    put(ws, "sub/a.txt", "one\n")
    put(ws, "sub/b.txt", "two\n")
    refusals = [
        "*** Begin Patch\n*** Add File: sub/a.txt\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: sub/missing.txt\n@@\n-x\n+y\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: sub/a.txt\n@@\n-absent\n+y\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: sub/a.txt\n*** Move to: sub/b.txt\n@@\n-one\n+1\n"
        "*** End Patch\n",
    ]
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        for patch in refusals:
            assert cli("apply_edit", stdin={"patch": patch}).code == 1
    assert len(os.listdir("/proc/self/fd")) == before


# ---- git's copies, modes and quoted names; Codex's context lines ------------------------------


@pytest.mark.parametrize("hunks", [True, False], ids=["with hunks", "whole copy"])
def test_a_git_copy_writes_the_copy_and_keeps_the_source(ws: Path, cli: CliRunner,
                                                         hunks: bool) -> None:
    put(ws, "src.txt", "one\ntwo\n")
    diff = ("diff --git a/src.txt b/dst.txt\nsimilarity index 50%\ncopy from src.txt\n"
            "copy to dst.txt\n")
    if hunks:
        diff += "--- a/src.txt\n+++ b/dst.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
    result = cli("apply_edit", stdin={"patch": diff}).result
    assert (ws / "src.txt").read_text() == "one\ntwo\n"
    assert (ws / "dst.txt").read_text() == ("ONE\ntwo\n" if hunks else "one\ntwo\n")
    assert result["changed"] is True
    assert result["files"] == [{"path": "src.txt", "action": "copied", "edits": int(hunks),
                                "destination": "dst.txt"}]
    undone = cli("undo", stdin={"path": "dst.txt"}).result  # the copy goes, the source stays
    assert undone["action"] == "deleted"
    assert not (ws / "dst.txt").exists() and (ws / "src.txt").read_text() == "one\ntwo\n"


def test_a_git_copy_onto_an_existing_file_is_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "src.txt", "one\n")
    put(ws, "dst.txt", "mine\n")
    refused(ws, cli, "diff --git a/src.txt b/dst.txt\ncopy from src.txt\ncopy to dst.txt\n",
            "already_exists", "copies")


@pytest.mark.parametrize("now,asked", [(0o644, "100755"), (0o755, "100644")])
def test_a_git_mode_change_is_refused_unless_the_file_has_that_mode(ws: Path, cli: CliRunner,
                                                                    now: int,
                                                                    asked: str) -> None:
    """apply_edit changes contents, not modes: a patch asking for another mode is refused
    whole (not answered ok with the mode left as it was); one whose mode the file already
    has applies."""
    f = put(ws, "run.sh", "echo hi\n")
    f.chmod(now)
    before = snapshot(ws)
    diff = (f"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode {asked}\n"
            "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo hi\n+echo ho\n")
    call = cli("apply_edit", stdin={"patch": diff})
    assert call.error["code"] == "patch_parse_error" and "chmod" in call.error["hint"]
    assert snapshot(ws) == before and f.stat().st_mode & 0o777 == now
    f.chmod(0o755 if asked == "100755" else 0o644)
    cli("apply_edit", stdin={"patch": diff}).result
    assert f.read_text() == "echo ho\n"


def test_quoted_git_names_are_decoded(ws: Path, cli: CliRunner) -> None:
    """git quotes names with non-ASCII bytes, quotes or backslashes, with octal escapes."""
    diff = ('diff --git "a/na\\303\\257ve.txt" "b/na\\303\\257ve.txt"\nnew file mode 100644\n'
            '--- /dev/null\n+++ "b/na\\303\\257ve.txt"\n@@ -0,0 +1 @@\n+hello\n')
    cli("apply_edit", stdin={"patch": diff}).result
    assert (ws / "na\u00efve.txt").read_text() == "hello\n"
    assert sorted(p.name for p in ws.iterdir()) == ["na\u00efve.txt"]
    put(ws, 'say "hi".txt', "x\n")
    diff = ('--- "a/say \\"hi\\".txt"\n+++ "b/say \\"hi\\".txt"\n@@ -1 +1 @@\n-x\n+y\n')
    cli("apply_edit", stdin={"patch": diff}).result
    assert (ws / 'say "hi".txt').read_text() == "y\n"


def test_a_codex_context_line_that_looks_like_a_header_is_context(ws: Path,
                                                                   cli: CliRunner) -> None:
    """In a hunk, a line starting with a space is context whatever follows (as Codex reads
    it): the file's own `*** Update File:` line never switches the patch to another file."""
    f = put(ws, "f.md", "intro\n*** Update File: g.txt\nold line\n")
    g = put(ws, "g.txt", "old line\n")
    text = ("*** Begin Patch\n*** Update File: f.md\n@@\n-intro\n+INTRO\n"
            " *** Update File: g.txt\n-old line\n+new line\n*** End Patch\n")
    cli("apply_edit", stdin={"patch": text}).result
    assert f.read_text() == "INTRO\n*** Update File: g.txt\nnew line\n"
    assert g.read_text() == "old line\n"
    h = put(ws, "h.txt", "a\n*** End Patch\nb\n")
    text = ("*** Begin Patch\n*** Update File: h.txt\n@@\n-a\n+A\n *** End Patch\n-b\n+B\n"
            "*** End Patch\n")
    cli("apply_edit", stdin={"patch": text}).result
    assert h.read_text() == "A\n*** End Patch\nB\n"


def test_a_codex_end_marker_before_the_end_is_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "i.txt", "x\n")
    put(ws, "j.txt", "y\n")
    text = ("*** Begin Patch\n*** Update File: i.txt\n@@\n-x\n+X\n*** End Patch\n"
            "*** Update File: j.txt\n@@\n-y\n+Y\n*** End Patch\n")
    refused(ws, cli, text, "patch_parse_error", "before the end")


def test_a_path_the_patch_does_not_change_is_refused(ws: Path, cli: CliRunner) -> None:
    """path a.txt with a patch of b.txt: neither file is edited; the path the patch names (or
    its rename target) is accepted, as is ./a.txt spelt otherwise."""
    put(ws, "a.txt", "one\n")
    put(ws, "b.txt", "one\n")
    before = snapshot(ws)
    diff = "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
    call = cli("apply_edit", stdin={"path": "a.txt", "patch": diff})
    assert call.error["code"] == "invalid_arguments" and call.error["details"]["files"] == \
        ["b.txt"]
    assert snapshot(ws) == before
    for path in ("b.txt", "./b.txt", str(ws / "b.txt")):
        (ws / "b.txt").write_text("one\n")
        cli("apply_edit", stdin={"path": path, "patch": diff}).result
        assert (ws / "b.txt").read_text() == "ONE\n"
