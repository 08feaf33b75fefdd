"""grep_search's native engine (ripgrep walks and matches): exactly the python engine's answer,
or it declines and another engine answers; never a different file set, count or order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner
from tests.tools.test_grep_engines import CASES, make_tree, write_files
from zbtools.core.files.tempnames import temp_name
from zbtools.core.search import native, native_log, native_plan
from zbtools.core.search.entries import walk_order
from zbtools.core.search.ripgrep import find_rg

RG = find_rg(os.environ)
needs_rg = pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")


def native_tree(ws: Path) -> None:
    """The engines' shared tree, without the ``.ignore`` file that makes the native engine
    decline, plus what only the native engine's log reading has to get right."""
    make_tree(ws)
    (ws / "src" / "util" / ".ignore").unlink()
    extra: dict[str, bytes] = {
        "src/bom-anchor.py": b"\xef\xbb\xbfimport os\nimport sys\n",
        "src/utf16.txt": "TODO in UTF-16\n".encode("utf-16"),
        "big/huge.txt": b"TODO\n" + b"x" * (10 * 1024 * 1024),
        "pkg/.env": b"TODO=hidden and ignored\n",
        "pkg/.cache/data.txt": b"TODO in a hidden directory\n",
        "pkg/__pycache__/m.pyc": b"TODO excluded directory\n",
        "deep/a/b/c/d/e/f.txt": b"TODO deep\n",
        "sp ace/colon: name.txt": b"TODO odd name\n",
        "uni/caf\u00e9.txt": b"TODO unicode name\n",
    }
    write_files(ws, extra)
    with (ws / ".gitignore").open("ab") as f:
        f.write(b".env\n")
    (ws / "src" / temp_name("app.py")).write_bytes(b"TODO our own temp file\n")


def compare(cli: CliRunner, *args: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(python's result, auto's result, the engine auto used), engine names removed."""
    py = cli("grep_search", *args, "--engine", "python")
    auto = cli("grep_search", *args)
    assert py.code == auto.code == 0, (py, auto)
    a, b = py.result, auto.result
    a.pop("engine")
    return a, b, b.pop("engine")


NATIVE_CASES = [
    *CASES,
    ("--pattern", "^import"),  # a BOM file: searched again by the python engine
    ("--pattern", "^\\s+\\w+\\(\\w+\\)$"),
    ("--pattern", "TODO", "--head-limit", "3", "--include-hidden"),
    ("--pattern", "TODO", "--head-limit", "2", "--output-mode", "files_with_matches"),
    ("--pattern", "TODO", "--glob", "*.txt", "--head-limit", "4"),
    ("--pattern", "TODO", "--path", "deep/a"),
    ("--pattern", "TODO", "--path", "src", "--include-ignored", "--include-hidden"),
    ("--pattern", "todo", "-i", "--exclude-dirs", '["deep", "pkg"]'),
    ("--pattern", "TODO", "--max-filesize", "20M"),  # the big file, streamed by python
    ("--pattern", "TODO", "--max-filesize", "100"),
    ("--pattern", "TODO", "--head-limit", "0"),
    ("--pattern", "^import", "--output-mode", "count"),
    ("--pattern", "^import", "--output-mode", "files_with_matches", "--head-limit", "1"),
    ("--pattern", "caf.", "-C", "1"),
    ("--pattern", "TODO.*", "--head-limit", "2"),
    ("--pattern", "TODO [^h]", "-i"),
]


@needs_rg
@pytest.mark.parametrize("args", NATIVE_CASES, ids=[" ".join(c) for c in NATIVE_CASES])
def test_the_native_engine_gives_exactly_the_python_result(ws: Path, cli: CliRunner,
                                                           args: tuple[str, ...]) -> None:
    native_tree(ws)
    python, auto, engine = compare(cli, *args)
    assert auto == python
    pattern = args[args.index("--pattern") + 1]
    how = native_plan.plan(pattern, fixed_strings="--fixed-strings" in args, multiline=False,
                      per_file="--output-mode" in args)
    if how is None:
        return
    if how.literal is None:
        assert engine == "native"  # auto takes it
    explicit = cli("grep_search", *args, "--engine", "native").result  # verify plans too
    assert explicit.pop("engine") == "native"
    assert explicit == python


@needs_rg
def test_what_the_native_engine_counts_and_searches_again(ws: Path, cli: CliRunner) -> None:
    native_tree(ws)
    call = cli("grep_search", "--pattern", "TODO", "--head-limit", "10000", "--engine", "native")
    result = call.result
    assert result["engine"] == "native"
    paths = {m["path"] for m in result["matches"]}
    assert "bin/late-nul.txt" in paths  # NUL past 8 KiB: text to the python engine
    assert "src/utf16.txt" not in paths  # binary: no encoding is guessed
    assert "sp ace/colon: name.txt" in paths
    assert "uni/café.txt" in paths
    assert not any(".zbtmp" in p for p in paths)
    assert "big/huge.txt" in paths  # over 10 MiB: searched all the same, as rg does
    assert result["skipped"]["too_large"] == 0
    assert result["skipped"]["hidden"] >= 3  # .env is hidden before it is ignored
    bom = cli("grep_search", "--pattern", "^import", "--engine", "native").result
    assert [(m["path"], m["line"], m["text"]) for m in bom["matches"]][:2] == [
        ("src/app.py", 1, "import os"), ("src/bom-anchor.py", 1, "import os")]


@needs_rg
@pytest.mark.parametrize("plant", ["dot-ignore", "rgignore", "nested-repo", "whitelisted-hidden"])
def test_where_the_walks_could_differ_another_engine_answers(ws: Path, cli: CliRunner,
                                                             plant: str) -> None:
    native_tree(ws)
    if plant == "dot-ignore":
        (ws / "src" / ".ignore").write_bytes(b"!build/\n")
    elif plant == "rgignore":
        (ws / "docs" / ".rgignore").write_bytes(b"guide.md\n")
    elif plant == "nested-repo":
        (ws / "many" / ".git").mkdir()
    else:
        with (ws / ".gitignore").open("ab") as f:
            f.write(b"!.hidden/\n")
    python, auto, engine = compare(cli, "--pattern", "TODO", "--head-limit", "10000")
    assert engine != "native"
    assert auto == python


@needs_rg
def test_a_start_inside_a_nested_repository_is_left_to_the_python_walk(
        ws: Path, cli: CliRunner) -> None:
    native_tree(ws)
    (ws / "many" / ".git").mkdir()
    python, auto, engine = compare(cli, "--pattern", "TODO", "--path", "many/d1")
    assert engine != "native"
    assert auto == python


@needs_rg
def test_a_subdirectory_search_applies_the_rules_above_it(ws: Path, cli: CliRunner) -> None:
    native_tree(ws)
    (ws / "src" / "x.log").write_bytes(b"TODO ignored by the root's rules\n")
    python, auto, engine = compare(cli, "--pattern", "TODO", "--path", "src")
    assert engine == "native"
    assert auto == python
    assert "src/x.log" not in {m["path"] for m in auto["matches"]}


@needs_rg
def test_a_symlink_out_of_the_workspace_is_never_followed(ws: Path, cli: CliRunner) -> None:
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("TODO secret\n")
    (ws / "in.txt").write_text("TODO inside\n")
    os.symlink(outside, ws / "linkdir")
    os.symlink(outside / "secret.txt", ws / "link.txt")
    call = cli("grep_search", "--pattern", "TODO|secret", "--engine", "native")
    assert call.result["engine"] == "native"
    assert [m["path"] for m in call.result["matches"]] == ["in.txt"]


@needs_rg
def test_a_reported_path_reached_through_a_symlink_declines(ws: Path) -> None:
    """The containment check behind every reported file: a symlinked directory fails."""
    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.request import SearchJob, SearchRequest

    (ws.parent / "out").mkdir()
    (ws.parent / "out" / "f.txt").write_text("x\n")
    os.symlink(ws.parent / "out", ws / "d")
    workspace = Workspace(str(ws))
    assert RG is not None
    search = native.NativeSearch(SearchJob(workspace, SearchRequest(pattern="x", limit=10)), RG,
                                 ".", native_plan.Plan())
    try:
        with pytest.raises(native_log.Declined):
            search.check_file("d/f.txt")
    finally:
        search.close()
        workspace.close()


@needs_rg
@pytest.mark.parametrize("bottom", ["bottom.txt", ".hidden.txt"])
def test_a_tree_deeper_than_the_walk_limit_is_left_to_the_python_walk(
        ws: Path, cli: CliRunner, bottom: str) -> None:
    """ripgrep walks without the limit: a match or an entry left out below it shows, and
    the python walk answers, saying what it did not enter."""
    deep = ws
    for _ in range(520):
        deep = deep / "d"
    os.makedirs(deep)
    (deep / bottom).write_text("TODO\n")
    (ws / "top.txt").write_text("TODO\n")
    call = cli("grep_search", "--pattern", "TODO")
    assert call.result["engine"] != "native"
    assert any("deeper than 512 levels" in w for w in call.json["warnings"])


@needs_rg
def test_a_deep_tree_with_nothing_to_report_below_the_limit_is_searched_whole(
        ws: Path, cli: CliRunner) -> None:
    """Where nothing below the python walk's limit matches or is left out, ripgrep's answer
    stands: it searched those files too (counted), so it tells of no limit."""
    deep = ws
    for _ in range(520):
        deep = deep / "d"
    os.makedirs(deep)
    (deep / "bottom.txt").write_text("nothing here\n")
    (ws / "top.txt").write_text("TODO\n")
    call = cli("grep_search", "--pattern", "TODO", "--engine", "native")
    assert call.result["engine"] == "native"
    assert [m["path"] for m in call.result["matches"]] == ["top.txt"]
    assert call.result["files_searched"] == 2
    assert not any("deeper than" in w for w in call.json["warnings"])


@pytest.mark.parametrize(("pattern", "fixed", "per_file", "expected"), [
    ("def get_", False, False, True),
    ("def get_\\w+\\(", False, True, True),
    ("\\bget_[xy]\\b", False, False, True),
    ("^\\s+pass$", False, False, True),
    ("^\\s+pass$", False, True, True),  # count mode: rg finds "pass", python decides
    ("caf.", False, False, True),  # '.' meets U+FFFD: rg finds "caf", python decides
    ("ca.", False, False, False),  # no literal of 3 characters to search for
    ("[^a-z]", False, False, False),
    ("\\W+", False, False, False),
    ("\\S+", False, False, False),
    ("\\D", False, False, False),
    ("class \\w+\\(.*Error\\)", False, True, True),
    ("^import", False, True, True),  # count mode: rg finds "import", python decides
    ("^\\w+", False, True, False),  # count mode, anchored and no literal
    ("[\\w\\s]+x", False, False, True),
    ("\\w+\\b", False, False, False),  # a word boundary, and no literal of 3 characters
    ("a.b", True, False, True),  # fixed strings: '.' is a dot
    ("\ufffd", True, False, False),
    ("(?<=a)b", False, False, False),
])
def test_usable_accepts_only_patterns_that_read_alike_on_bytes_and_text(
        pattern: str, fixed: bool, per_file: bool, expected: bool) -> None:
    assert native_plan.usable(pattern, fixed_strings=fixed, multiline=False,
                         per_file=per_file) is expected


@needs_rg
def test_engine_native_refuses_a_pattern_it_would_read_differently(ws: Path,
                                                                   cli: CliRunner) -> None:
    call = cli("grep_search", "--pattern", "[^a-z ]+", "--engine", "native")
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert "negated classes" in call.error["message"]


@needs_rg
def test_auto_takes_the_native_engine_in_a_one_shot_call_and_the_warm_walk_in_batch(
        ws: Path) -> None:
    native_tree(ws)
    one = subprocess.run([sys.executable, "-m", "zbtools", "grep_search", "--pattern", "TODO"],
                         cwd=ws, capture_output=True, text=True, check=False)
    assert '"engine": "native"' in one.stdout
    lines = '{"tool": "grep_search", "args": {"pattern": "TODO"}}\n' * 2
    batch = subprocess.run([sys.executable, "-m", "zbtools", "batch"], input=lines, cwd=ws,
                           capture_output=True, text=True, check=False)
    assert batch.stdout.count('"engine": "python"') == 2, batch.stdout[:500]


def test_walk_order_keys_sort_a_directory_before_its_contents_and_siblings_by_name() -> None:
    rels = ["a.txt", "a/b", "a-b/c", "a/b/c", "ab"]
    assert sorted(rels, key=walk_order) == ["a/b", "a/b/c", "a-b/c", "a.txt", "ab"]
    assert native_log.parent_key("a/b/c") < walk_order("a/b/c")
    assert walk_order("a/b") < native_log.parent_key("a/b/c")


@needs_rg
def test_a_workspace_inside_a_repository_is_left_to_the_python_walk(ws: Path,
                                                                    cli: CliRunner) -> None:
    """The rules above the workspace root (up to the repository's) are the python walk's."""
    native_tree(ws)
    (ws.parent / ".git").mkdir()
    (ws.parent / ".gitignore").write_bytes(b"*.md\n")
    python, auto, engine = compare(cli, "--pattern", "TODO", "--head-limit", "10000")
    assert engine != "native"
    assert auto == python
    assert not any(m["path"].endswith(".md") for m in auto["matches"])


@needs_rg
def test_a_native_search_never_imports_the_regex_module(ws: Path) -> None:
    """ripgrep matches the pattern: the 12 ms import of ``regex`` is left out of the call."""
    native_tree(ws)
    code = ("import sys\nfrom zbtools.entry import main_with_argv\n"
            "code = main_with_argv(['grep_search', '--pattern', r'def get_\\w+\\('])\n"
            "sys.stderr.write('REGEX=%s CODE=%s' % ('regex' in sys.modules, code))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, text=True,
                          check=False)
    assert '"engine": "native"' in done.stdout
    assert "REGEX=False CODE=0" in done.stderr


@needs_rg
def test_a_tree_with_many_ignored_files_is_left_to_the_python_walk(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """ripgrep logs every file it leaves out: past LOG_LIMIT the log costs more than the
    python walk's free counting, so the run stops and the python walk answers."""
    native_tree(ws)
    # enough ignored files that ripgrep is still logging them when the watcher first looks
    # (it looks every 2 ms; a run that finishes first is answered natively, just as well)
    for d in range(40):
        (ws / f"logs{d}").mkdir()
        for i in range(60):
            (ws / f"logs{d}" / f"run{i}.log").write_text("TODO in an ignored log\n")
    monkeypatch.setattr(native, "LOG_LIMIT", 4000)
    python, auto, engine = compare(cli, "--pattern", "TODO", "--head-limit", "10000")
    assert engine != "native"
    assert auto == python
    assert auto["skipped"]["ignored"] >= 60


@needs_rg
def test_a_log_larger_than_its_pipe_is_drained_while_ripgrep_runs(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """ripgrep's log goes to a pipe: one much larger than the pipe (forced down to a page)
    is read while ripgrep writes it, so ripgrep never waits and the counts are whole."""
    native_tree(ws)
    for i in range(300):  # about 75 KB of log: each ignored file is one line
        (ws / "pkg" / f"run{i}.log").write_text("TODO in an ignored log\n")
    with (ws / ".gitignore").open("a") as f:
        f.write("*.log\n")
    monkeypatch.setattr(native, "LOG_PIPE_BYTES", 4096)
    python, auto, engine = compare(cli, "--pattern", "TODO", "--head-limit", "10000",
                                   "--timeout", "20")
    assert engine == "native"
    assert auto == python
    assert auto["skipped"]["ignored"] >= 300


@needs_rg
def test_a_failure_while_looking_at_the_run_lets_the_python_walk_answer(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of ripgrep's log failing (while ripgrep runs, or after) stops ripgrep and
    declines: the python walk answers, instead of a traceback or a log nobody reads."""
    native_tree(ws)
    broke: list[bool] = []

    def broken(self: native.Spawned) -> None:
        broke.append(True)
        raise OSError("the log pipe broke")

    monkeypatch.setattr(native.Spawned, "drain", broken)
    python, auto, engine = compare(cli, "--pattern", "TODO", "--head-limit", "10000",
                                   "--timeout", "20")
    assert broke
    assert engine == "python"
    assert auto == python


@needs_rg
def test_a_search_past_its_deadline_stops_ripgrep_and_says_so(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.search.engine import Searcher

    native_tree(ws)
    monkeypatch.setattr(Searcher, "time_left", lambda self: -1.0)  # past it at once
    call = cli("grep_search", "--pattern", "TODO", "--engine", "native")
    assert call.code == 1 and call.error["code"] == "regex_timeout", call


@needs_rg
def test_the_end_of_ripgrep_is_seen_without_a_pidfd(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there are no pidfds the wait sleeps between looks, and answers the same."""
    native_tree(ws)
    with_pidfd = compare(cli, "--pattern", "TODO", "--head-limit", "10000")
    monkeypatch.setattr(native, "exit_signal", lambda pid: None)
    assert compare(cli, "--pattern", "TODO", "--head-limit", "10000") == with_pidfd


@pytest.mark.parametrize("engine", ["rg", "native"])
def test_an_invalid_pattern_is_a_regex_error_whichever_engine_was_asked(
        ws: Path, cli: CliRunner, engine: str) -> None:
    call = cli("grep_search", "--pattern", "(", "--engine", engine)
    assert call.code == 2
    assert call.error["code"] == "regex_error"
    assert call.error["details"]["position"] == 1


LINE_PIECES = [b"a", b"b", b"1", b" ", b"\t", b"\r", "\u00e9".encode(), "\u20ac".encode(),
               b"\xe9", b"\xe2\x82", b"\xf0", b"\x80", b"\xc3"]  # the last five: invalid
PATTERN_PIECES = ["a", "b", "ab", "\u00e9", "\u20ac", "\\w", "[a-c]", "\\d", "\\s",
                  "[\u00e9\u20ac]", "\\w+", ".*", ".+", ".*?", ".+?", "(.+)", "(.+){2}",
                  "(a|.*)", "(?:\\w.+)+", "(\u00e9.*)?", "\\b"]


@needs_rg
@given(lines=st.lists(st.lists(st.sampled_from(LINE_PIECES), max_size=8), min_size=1,
                      max_size=12),
       pieces=st.lists(st.sampled_from(PATTERN_PIECES), min_size=1, max_size=4),
       start=st.booleans(), end=st.booleans(), ignore_case=st.booleans())
# ripgrep reads a stray continuation byte as the end of the character before it
@example(lines=[[b"a", b"\x80"]], pieces=["\\b"], start=False, end=True, ignore_case=False)
# sent as ab(?-u:.)*b, ripgrep 14.1 with -i found "ab"
@example(lines=[[b"a", b"b"]], pieces=["ab", ".*", "b"], start=False, end=False,
         ignore_case=True)
@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_unbounded_dots_read_alike_on_bytes_and_on_decoded_text(
        ws: Path, cli: CliRunner, lines: list[list[bytes]], pieces: list[str], start: bool,
        end: bool, ignore_case: bool) -> None:
    """A ``.*`` or ``.+`` goes to ripgrep as any byte but a newline: whatever the bytes
    around it (characters of several bytes, invalid sequences, a lone continuation byte, CR),
    ripgrep picks exactly the lines the python engine's ``.`` on the decoded text picks."""
    (ws / "f.txt").write_bytes(b"\n".join(b"".join(line) for line in lines) + b"\n")
    pattern = ("^" if start else "") + "".join(pieces) + ("$" if end else "")
    args = ["--pattern", pattern, "--head-limit", "1000"] + (["-i"] if ignore_case else [])
    python = cli("grep_search", *args, "--engine", "python").result
    how = native_plan.plan(pattern, fixed_strings=False, multiline=False, per_file=False)
    event("rewritten" if how is not None and how.pattern is not None else "other plan")
    if how is None:
        return
    got = cli("grep_search", *args, "--engine", "native").result
    python.pop("engine")
    assert got.pop("engine") == "native"
    assert got == python, (pattern, how.pattern)


ANY_BYTE = "(?:.|(?-u:[\\x80-\\xff]))"  # but a newline: how ripgrep gets .* and .+


@pytest.mark.parametrize(("pattern", "sent"), [
    ("class \\w+\\(.*Error\\)", f"class \\w+\\({ANY_BYTE}*Error\\)"),
    ("x.*y.*?z", f"x{ANY_BYTE}*y{ANY_BYTE}*?z"),
    ("^def .+:$", f"^def {ANY_BYTE}+:$"),
    ("[.]x.*", f"[.]x{ANY_BYTE}*"),  # a dot in a class is a dot
    ("\\.x.+", f"\\.x{ANY_BYTE}+"),
    ("a.*b.+c", f"a{ANY_BYTE}*b{ANY_BYTE}+c"),
    ("a.+b.+", None),  # two runs of at least one: bytes and characters counted apart
    ("(a.+){2}", None),  # a run in a repeated group
    ("\\bdef .*x", None),  # a word boundary: the literal plan
    ("def .*x\\b", None),
    ("ca.", None),  # a lone dot
    ("a.{2,}", None),
])
def test_unbounded_dots_are_sent_to_ripgrep_byte_wise_only_where_that_reads_alike(
        pattern: str, sent: str | None) -> None:
    how = native_plan.plan(pattern, fixed_strings=False, multiline=False, per_file=False)
    assert (how.pattern if how is not None else None) == sent


@needs_rg
@pytest.mark.parametrize("args", [
    ["--pattern", "\\babc"],
    ["--pattern", "abc", "--word-regexp"],
    ["--pattern", "abc", "--word-regexp", "--fixed-strings"],
])
def test_a_word_boundary_after_a_stray_continuation_byte_is_the_python_engines(
        ws: Path, cli: CliRunner, args: list[str]) -> None:
    """Before ``abc``: ``é`` and a stray continuation byte, U+FFFD to the python engine (no
    word character, so a boundary) and the end of ``é`` to ripgrep (no boundary). The native
    engine has ripgrep find the literal and the python regex decide the line."""
    (ws / "f.txt").write_bytes("\u00e9".encode() + b"\x80abc\n")
    python = cli("grep_search", *args, "--engine", "python").result
    got = cli("grep_search", *args, "--engine", "native").result
    python.pop("engine")
    assert got.pop("engine") == "native"
    assert got == python
    assert python["total_matches"] == 1
