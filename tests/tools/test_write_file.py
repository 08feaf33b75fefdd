"""write_file (alias create_file): create or replace a whole file, atomically, byte-faithfully."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, leftovers, ok


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- success ---------------------------------------------------------------------------------


def test_a_new_file_is_created_with_exactly_the_content(ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "hello.txt", "content": "hi\nthere\n"})
    assert call.code == 0
    result = call.result
    assert (ws / "hello.txt").read_bytes() == b"hi\nthere\n"
    assert result["path"] == "hello.txt"
    assert result["action"] == "created"
    assert result["changed"] is True
    assert result["bytes_written"] == 9
    assert result["sha256"] == sha(b"hi\nthere\n")
    assert result["encoding"] == "utf-8"
    assert result["newline"] == "lf"
    assert result["parents_created"] == []
    assert result["hardlink_broken"] is False
    assert call.json["warnings"] == []
    assert leftovers(ws) == []


def test_a_new_file_gets_the_default_mode_under_the_umask(ws: Path, cli: CliRunner) -> None:
    old = os.umask(0o027)
    try:
        ok(cli("write_file", "--path", "m.txt", "--content", "x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((ws / "m.txt").stat().st_mode) == 0o640


def test_missing_parent_directories_are_created_and_reported(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": "a/b/c.txt", "content": "deep"}).result
    assert (ws / "a" / "b" / "c.txt").read_text() == "deep"
    assert result["path"] == "a/b/c.txt"
    assert result["parents_created"] == ["a", "a/b"]


def test_an_empty_content_creates_an_empty_file(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": "empty", "content": ""}).result
    assert (ws / "empty").read_bytes() == b""
    assert result["bytes_written"] == 0
    assert result["newline"] == "none"


def test_an_existing_file_is_overwritten_by_default(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("old content\n")
    result = cli("write_file", stdin={"path": "a.txt", "content": "new\n"}).result
    assert (ws / "a.txt").read_text() == "new\n"
    assert result["action"] == "overwritten"
    assert result["changed"] is True
    assert result["bytes_written"] == 4


def test_an_absolute_path_inside_the_workspace_is_accepted(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": str(ws / "sub" / "abs.txt"), "content": "x"}).result
    assert result["path"] == "sub/abs.txt"
    assert (ws / "sub" / "abs.txt").read_text() == "x"


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_every_path_alias_names_the_file(ws: Path, cli: CliRunner, alias: str) -> None:
    result = cli("write_file", stdin={alias: f"{alias}.txt", "content": "x"}).result
    assert result["path"] == f"{alias}.txt"
    assert (ws / f"{alias}.txt").read_text() == "x"


@pytest.mark.parametrize("alias", ["content", "contents", "text", "data"])
def test_every_content_alias_is_the_content(ws: Path, cli: CliRunner, alias: str) -> None:
    ok(cli("write_file", stdin={"path": "f.txt", alias: f"via {alias}\n"}))
    assert (ws / "f.txt").read_text() == f"via {alias}\n"


def test_create_file_is_an_alias_of_write_file(ws: Path, cli: CliRunner) -> None:
    call = cli("create_file", stdin={"path": "src/new_module.rs",
                                     "content": "pub fn hello() {}\n"})
    assert call.json["tool"] == "write_file"
    assert call.result["parents_created"] == ["src"]
    assert (ws / "src" / "new_module.rs").read_text() == "pub fn hello() {}\n"


def test_flags_args_and_stdin_are_equivalent_spellings(ws: Path, cli: CliRunner) -> None:
    ok(cli("write_file", "--file-path", "flags.txt", "--text", "one"))
    ok(cli("write_file", "--args", json.dumps({"path": "args.txt", "data": "two"})))
    ok(cli("write_file", stdin={"filename": "stdin.txt", "contents": "three"}))
    assert (ws / "flags.txt").read_text() == "one"
    assert (ws / "args.txt").read_text() == "two"
    assert (ws / "stdin.txt").read_text() == "three"


def test_a_flag_overrides_the_same_field_from_stdin(ws: Path, cli: CliRunner) -> None:
    ok(cli("write_file", "--stdin", "--content", "from flag",
           stdin={"path": "f.txt", "text": "from stdin"}))
    assert (ws / "f.txt").read_text() == "from flag"


def test_the_real_subprocess_creates_the_file(ws: Path, proc: CliRunner) -> None:
    call = proc("create_file", stdin={"file_path": "p/q.txt", "contents": "via subprocess\n"})
    assert call.code == 0, call
    assert call.result["parents_created"] == ["p"]
    assert (ws / "p" / "q.txt").read_text() == "via subprocess\n"


# --- overwrite: false, expected_sha256 -------------------------------------------------------


def test_overwrite_false_refuses_an_existing_file_and_names_the_edit_tools(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("keep me\n")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "a.txt", "content": "clobber", "overwrite": False})
    assert call.code == 1
    error = call.error
    assert error["code"] == "already_exists"
    assert "edit_file" in error["hint"] and "apply_edit" in error["hint"]
    assert error["details"]["size"] == 8
    assert snapshot(ws) == before


def test_overwrite_false_as_a_negated_flag(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("keep me\n")
    before = snapshot(ws)
    call = cli("write_file", "--path", "a.txt", "--content", "x", "--no-overwrite")
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


def test_overwrite_false_still_creates_a_new_file(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": "n/new.txt", "content": "x",
                                      "overwrite": False}).result
    assert result["action"] == "created"
    assert (ws / "n" / "new.txt").read_text() == "x"


def test_a_matching_expected_sha256_allows_the_replacement(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_bytes(b"v1\n")
    result = cli("write_file", stdin={"path": "a.txt", "content": "v2\n",
                                      "expected_sha256": sha(b"v1\n").upper()}).result
    assert result["action"] == "overwritten"
    assert (ws / "a.txt").read_bytes() == b"v2\n"


def test_a_stale_expected_sha256_refuses_and_leaves_the_file_untouched(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_bytes(b"changed by someone else\n")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "a.txt", "content": "mine\n",
                                    "expected_sha256": sha(b"what I read\n")})
    assert call.code == 1
    assert call.error["code"] == "stale_file"
    assert call.error["details"]["current_sha256"] == sha(b"changed by someone else\n")
    assert call.error["details"]["expected_sha256"] == sha(b"what I read\n")
    assert snapshot(ws) == before


def test_expected_sha256_for_a_missing_file_is_stale_and_creates_no_parents(
        ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "x/y/gone.txt", "content": "c",
                                    "expected_sha256": sha(b"old")})
    assert call.error["code"] == "stale_file"
    assert call.error["details"]["current_sha256"] is None
    assert snapshot(ws) == before


# --- no-op, mode, hard links -----------------------------------------------------------------


def test_identical_content_is_unchanged_and_keeps_mtime_and_inode(
        ws: Path, cli: CliRunner) -> None:
    path = ws / "same.txt"
    path.write_bytes(b"same\n")
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = path.stat()
    result = cli("write_file", stdin={"path": "same.txt", "content": "same\n"}).result
    assert result["action"] == "unchanged"
    assert result["changed"] is False
    after = path.stat()
    assert after.st_mtime_ns == before.st_mtime_ns
    assert after.st_ino == before.st_ino


def test_permission_bits_are_kept_when_overwriting(ws: Path, cli: CliRunner) -> None:
    path = ws / "script.sh"
    path.write_text("#!/bin/sh\necho old\n")
    path.chmod(0o751)
    ok(cli("write_file", stdin={"path": "script.sh", "content": "#!/bin/sh\necho new\n"}))
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == "#!/bin/sh\necho new\n"


def test_a_hard_linked_file_whose_links_are_all_inside_keeps_its_inode(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_bytes(b"shared\n")
    (ws / "d").mkdir()
    os.link(ws / "a.txt", ws / "d" / "b.txt")
    inode = (ws / "a.txt").stat().st_ino
    call = cli("write_file", stdin={"path": "a.txt", "content": "both\n"})
    assert call.result["hardlink_broken"] is False
    assert call.json["warnings"] == []
    assert (ws / "d" / "b.txt").read_bytes() == b"both\n"
    assert (ws / "a.txt").stat().st_ino == inode and (ws / "a.txt").stat().st_nlink == 2


def test_replacing_a_file_linked_from_outside_breaks_the_link_and_says_so(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_bytes(b"shared\n")
    outside = ws.parent / "outside" / "b.txt"
    os.link(ws / "a.txt", outside)
    call = cli("write_file", stdin={"path": "a.txt", "content": "only a\n"})
    assert call.result["hardlink_broken"] is True
    assert "hardlink_broken" in call.json["warnings"][0]
    assert (ws / "a.txt").read_bytes() == b"only a\n"
    assert outside.read_bytes() == b"shared\n"  # never written through the shared inode
    assert (ws / "a.txt").stat().st_nlink == 1


def test_a_read_only_file_is_refused_even_for_root(ws: Path, cli: CliRunner) -> None:
    path = ws / "ro.txt"
    path.write_text("frozen\n")
    path.chmod(0o444)
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "ro.txt", "content": "thawed\n"})
    assert call.code == 1
    assert call.error["code"] == "permission_denied"
    assert "0444" in call.error["message"]
    assert snapshot(ws) == before


# --- line endings and encodings --------------------------------------------------------------


def test_a_crlf_file_keeps_crlf_when_the_new_content_has_bare_lf(
        ws: Path, cli: CliRunner) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    result = cli("write_file", stdin={"path": "win.txt", "content": "uno\ndos\ntres\n"}).result
    assert (ws / "win.txt").read_bytes() == b"uno\r\ndos\r\ntres\r\n"
    assert result["newline"] == "crlf"


def test_newline_as_is_writes_the_content_exactly_as_given(ws: Path, cli: CliRunner) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    ok(cli("write_file", stdin={"path": "win.txt", "content": "uno\ndos\n",
                                "newline": "as_is"}))
    assert (ws / "win.txt").read_bytes() == b"uno\ndos\n"


def test_newline_lf_and_crlf_convert_explicitly(ws: Path, cli: CliRunner) -> None:
    (ws / "win.txt").write_bytes(b"one\r\n")
    ok(cli("write_file", stdin={"path": "win.txt", "content": "a\r\nb\n", "newline": "lf"}))
    assert (ws / "win.txt").read_bytes() == b"a\nb\n"
    ok(cli("write_file", "--path", "new.txt", "--content", "a\nb\r\n", "--newline", "crlf"))
    assert (ws / "new.txt").read_bytes() == b"a\r\nb\r\n"


def test_a_new_file_is_written_as_given_in_utf8(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": "u.txt", "content": "naïve ☃\r\nx\n"}).result
    assert (ws / "u.txt").read_bytes() == "naïve ☃\r\nx\n".encode()
    assert result["newline"] == "mixed"


def test_an_invalid_newline_choice_is_an_argument_error(ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "a", "content": "x", "newline": "cr"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert not (ws / "a").exists()


def test_a_utf8_bom_is_kept(ws: Path, cli: CliRunner) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfold\n")
    result = cli("write_file", stdin={"path": "bom.txt", "content": "new ✓\n"}).result
    assert (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbf" + "new ✓\n".encode()
    assert result["encoding"] == "utf-8-bom"


def test_a_utf16_file_keeps_its_encoding_bom_and_crlf(ws: Path, cli: CliRunner) -> None:
    (ws / "w16.txt").write_bytes(b"\xff\xfe" + "old\r\nline\r\n".encode("utf-16-le"))
    result = cli("write_file", stdin={"path": "w16.txt", "content": "neu\nzeile\n"}).result
    assert (ws / "w16.txt").read_bytes() == b"\xff\xfe" + "neu\r\nzeile\r\n".encode("utf-16-le")
    assert result["encoding"] == "utf-16-le"


LATIN1_TEXT = ("Le café au lait du matin, à la française: une crème brûlée, un gâteau, "
               "des œufs à la coque et une tarte aux pommes préparée par ma grand-mère.\n"
               "Déjà vu: naïve façade, château, forêt, hôtel, élève, où, là, très.\n")


def test_a_latin1_file_stays_latin1(ws: Path, cli: CliRunner) -> None:
    original = LATIN1_TEXT.replace("œ", "oe").encode("latin-1")
    (ws / "fr.txt").write_bytes(original)
    ok(cli("write_file", stdin={"path": "fr.txt", "content": "café olé\n"}))
    assert (ws / "fr.txt").read_bytes() == "café olé\n".encode("latin-1")


def test_a_latin1_file_accepts_every_latin1_letter(ws: Path, cli: CliRunner) -> None:
    # A French latin-1 file must take French text: "è", "à", "û" are all Latin-1 characters.
    original = LATIN1_TEXT.replace("œ", "oe").encode("latin-1")
    (ws / "fr.txt").write_bytes(original)
    call = cli("write_file", stdin={"path": "fr.txt", "content": "crème brûlée à la française\n"})
    assert call.code == 0, call.json
    assert (ws / "fr.txt").read_bytes() == "crème brûlée à la française\n".encode("latin-1")


def test_a_character_the_encoding_cannot_hold_is_an_encoding_error(
        ws: Path, cli: CliRunner) -> None:
    (ws / "fr.txt").write_bytes(LATIN1_TEXT.replace("œ", "oe").encode("latin-1"))
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "fr.txt", "content": "café 日本\n"})
    assert call.code == 1
    assert call.error["code"] == "encoding_error"
    assert "日" in call.error["details"]["character"]
    assert snapshot(ws) == before
    assert leftovers(ws) == []


def test_an_explicit_encoding_is_written(ws: Path, cli: CliRunner) -> None:
    result = cli("write_file", stdin={"path": "l1.txt", "content": "crème\n",
                                      "encoding": "latin-1"}).result
    assert (ws / "l1.txt").read_bytes() == b"cr\xe8me\n"
    assert result["encoding"] == "iso8859-1"


def test_encoding_utf8_converts_a_latin1_file(ws: Path, cli: CliRunner) -> None:
    (ws / "fr.txt").write_bytes(LATIN1_TEXT.replace("œ", "oe").encode("latin-1"))
    result = cli("write_file", stdin={"path": "fr.txt", "content": "café 日本\n",
                                      "encoding": "utf-8"}).result
    assert (ws / "fr.txt").read_bytes() == "café 日本\n".encode()
    assert result["encoding"] == "utf-8"


def test_encoding_utf8_drops_a_bom_and_utf8_sig_adds_one(ws: Path, cli: CliRunner) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfold\n")
    ok(cli("write_file", stdin={"path": "bom.txt", "content": "x\n", "encoding": "utf-8"}))
    assert (ws / "bom.txt").read_bytes() == b"x\n"
    ok(cli("write_file", stdin={"path": "bom.txt", "content": "y\n", "encoding": "utf-8-sig"}))
    assert (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbfy\n"


def test_an_unknown_encoding_is_an_argument_error(ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "a.txt", "content": "x", "encoding": "klingon"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert not (ws / "a.txt").exists()


def test_a_binary_file_is_replaced_by_utf8_text(ws: Path, cli: CliRunner) -> None:
    (ws / "blob").write_bytes(b"\x00\x01\x02")
    result = cli("write_file", stdin={"path": "blob", "content": "text now\n"}).result
    assert (ws / "blob").read_bytes() == b"text now\n"
    assert result["encoding"] == "utf-8"


# --- wrong kinds of target -------------------------------------------------------------------


def test_writing_to_a_directory_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "dir").mkdir()
    (ws / "dir" / "inside.txt").write_text("x")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "dir", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "is_directory"
    assert snapshot(ws) == before


@pytest.mark.parametrize("root", [".", "./", "sub/.."])
def test_writing_to_the_workspace_root_is_refused(ws: Path, cli: CliRunner, root: str) -> None:
    (ws / "sub").mkdir()
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": root, "content": "x"})
    assert call.error["code"] == "is_directory"
    assert snapshot(ws) == before


def test_a_file_used_as_a_parent_directory_is_not_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "plain").write_text("x")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "plain/child.txt", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_a_fifo_is_never_opened_or_replaced(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "pipe", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "special_file"
    assert snapshot(ws) == before


def test_missing_content_is_an_argument_error(ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "a.txt"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert not (ws / "a.txt").exists()


def test_two_aliases_of_the_content_at_once_are_an_argument_error(
        ws: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "a.txt", "content": "x", "text": "y"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert not (ws / "a.txt").exists()


# --- symlinks and containment ----------------------------------------------------------------


def test_writing_through_a_symlink_inside_the_workspace_writes_its_target(
        ws: Path, cli: CliRunner) -> None:
    (ws / "real.txt").write_text("old\n")
    (ws / "link.txt").symlink_to("real.txt")
    result = cli("write_file", stdin={"path": "link.txt", "content": "new\n"}).result
    assert result["path"] == "real.txt"
    assert (ws / "real.txt").read_text() == "new\n"
    assert (ws / "link.txt").is_symlink()
    assert os.readlink(ws / "link.txt") == "real.txt"


def test_a_dangling_symlink_inside_the_workspace_is_refused_not_followed_to_create(
        ws: Path, cli: CliRunner) -> None:
    (ws / "link.txt").symlink_to("sub/target.txt")
    call = cli("write_file", stdin={"path": "link.txt", "content": "made\n"})
    assert call.code == 1
    assert call.error["code"] == "dangling_symlink"
    assert not (ws / "sub").exists()


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_writing_through_a_symlink_to_outside_is_refused(ws: Path, cli: CliRunner,
                                                          how: str) -> None:
    secret = ws.parent / "outside" / "secret.txt"
    (ws / "link.txt").symlink_to(secret if how == "absolute" else "../outside/secret.txt")
    before, outside = snapshot(ws), snapshot(ws.parent / "outside")
    call = cli("write_file", stdin={"path": "link.txt", "content": "pwned\n"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert secret.read_text() == "top secret\n"
    assert snapshot(ws) == before
    assert snapshot(ws.parent / "outside") == outside


def test_a_dangling_symlink_to_outside_creates_nothing_outside(ws: Path, cli: CliRunner) -> None:
    target = ws.parent / "outside" / "planted.txt"
    (ws / "link.txt").symlink_to(target)
    (ws / "rel.txt").symlink_to("../outside/planted2.txt")
    before = snapshot(ws)
    for name in ("link.txt", "rel.txt"):
        call = cli("write_file", stdin={"path": name, "content": "pwned\n", "overwrite": False})
        assert call.code == 3
        assert call.error["code"] == "outside_workspace"
    assert not target.exists()
    assert not (ws.parent / "outside" / "planted2.txt").exists()
    assert snapshot(ws) == before


def test_a_symlinked_parent_directory_to_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "out").symlink_to(ws.parent / "outside")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "out/new/file.txt", "content": "x"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert sorted(os.listdir(ws.parent / "outside")) == ["secret.txt"]
    assert snapshot(ws) == before


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/zbtools-test", "~/x",
                                  "a\x00b"])
def test_paths_outside_the_workspace_are_refused(ws: Path, cli: CliRunner, path: str) -> None:
    call = cli("write_file", stdin={"path": path, "content": "x"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"
    assert snapshot(ws) == {}


def test_a_refusal_from_a_real_subprocess_exits_3(ws: Path, proc: CliRunner) -> None:
    call = proc("write_file", "--path", "../outside/secret.txt", "--content", "x")
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"


# --- failures half-way: nothing changes, nothing is left behind ------------------------------


def test_a_full_disk_while_publishing_a_new_file_changes_nothing(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "keep").mkdir()
    before = snapshot(ws)
    failed = fail_with(monkeypatch, "link")
    call = cli("write_file", stdin={"path": "keep/new/deeper/f.txt", "content": "x" * 1000})
    assert failed
    assert call.code == 1
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before  # the created parents were rolled back, no temp file remains


def test_a_full_disk_while_replacing_keeps_the_old_file(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("precious\n")
    before = snapshot(ws)
    fail_with(monkeypatch, "rename")
    call = cli("write_file", stdin={"path": "a.txt", "content": "replacement\n"})
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before


def test_a_failing_write_or_fsync_leaves_no_temp_file(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("precious\n")
    before = snapshot(ws)
    fail_with(monkeypatch, "fsync", errno.EDQUOT)
    call = cli("write_file", stdin={"path": "a.txt", "content": "replacement\n"})
    assert call.error["code"] == "no_space"
    monkeypatch.undo()
    fail_with(monkeypatch, "write", errno.EIO, when=lambda fd, data: len(data) == 5)
    call = cli("write_file", stdin={"path": "b/c.txt", "content": "12345"})
    assert call.error["code"] == "io_error"
    assert snapshot(ws) == before


def test_parents_created_before_a_failing_component_are_rolled_back(
        ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "new/" + "x" * 300 + "/f.txt", "content": "x"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"  # file name too long
    assert snapshot(ws) == before


def test_parents_are_rolled_back_when_the_file_name_is_too_long(
        ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "new/dir/" + "y" * 300, "content": "x"})
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_a_long_multibyte_name_is_written(ws: Path, cli: CliRunner) -> None:
    name = "日" * 80  # 240 bytes: valid, but a temp name made of its first 100 characters is not
    ok(cli("write_file", stdin={"path": name, "content": "x"}))
    assert (ws / name).read_text() == "x"
    ok(cli("write_file", stdin={"path": name, "content": "y"}))
    assert (ws / name).read_text() == "y"
    assert leftovers(ws) == []


def test_no_temp_files_remain_after_many_writes(ws: Path, cli: CliRunner) -> None:
    for i in range(5):
        ok(cli("write_file", stdin={"path": "d/f.txt", "content": f"v{i}\n"}))
        cli("write_file", stdin={"path": "d/f.txt", "content": "x", "overwrite": False})
    assert sorted(os.listdir(ws / "d")) == ["f.txt"]
    assert leftovers(ws) == []


def test_a_symlink_loop_is_reported(ws: Path, cli: CliRunner) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    before = snapshot(ws)
    call = cli("write_file", stdin={"path": "a", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "symlink_loop"
    assert snapshot(ws) == before


def test_a_directory_that_refuses_new_entries_is_permission_denied(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "locked").mkdir()
    before = snapshot(ws)
    fail_with(monkeypatch, "open", errno.EACCES,
              when=lambda path, flags, *a, **k: ".zbtmp-" in str(path))
    call = cli("write_file", stdin={"path": "locked/new.txt", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "permission_denied"
    assert snapshot(ws) == before


def test_a_codec_that_is_not_a_text_encoding_is_an_argument_error(ws: Path,
                                                                   cli: CliRunner) -> None:
    (ws / "w.txt").write_text("x\n")
    for name in ("rot13", "base64", "hex", "zlib"):
        call = cli("write_file", stdin={"path": "w.txt", "content": "a", "encoding": name})
        assert (call.code, call.error["code"]) == (2, "invalid_arguments"), name
        assert "not a text encoding" in call.error["message"]
    assert (ws / "w.txt").read_text() == "x\n"
