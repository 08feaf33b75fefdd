"""find_files_glob (aliases glob, find): glob patterns driven by the shared gitignore-aware walk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner, snapshot

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def paths(result: dict[str, Any]) -> list[str]:
    return [match["path"] for match in result["matches"]]


def glob(cli: CliRunner, **args: Any) -> list[str]:
    return paths(cli("find_files_glob", stdin=args).result)


@pytest.mark.parametrize("tool", ["find_files_glob", "glob", "find"])
def test_every_name_finds_files_with_globstar(ws: Path, cli: CliRunner, tool: str) -> None:
    make(ws, {"main.go": "x", "cmd/app/main.go": "", "cmd/app/util.go": "", "README.md": ""})
    result = cli(tool, stdin={"pattern": "**/main.go"}).result
    assert paths(result) == ["cmd/app/main.go", "main.go"]
    assert result["patterns"] == ["**/main.go"]
    assert result["count"] == 2 and result["truncated"] is False
    assert result["scan_limited"] is False
    top = result["matches"][1]
    assert top["type"] == "file" and top["size"] == 1 and top["modified"].endswith("Z")


@pytest.mark.parametrize("alias", ["path", "dir", "directory"])
def test_the_seed_aliases_of_path_choose_the_base_directory(ws: Path, cli: CliRunner,
                                                            alias: str) -> None:
    make(ws, {"src/a/x.tsx": "", "src/b.tsx": "", "other/c.tsx": ""})
    result = cli("glob", stdin={"pattern": "**/*.tsx", alias: "src"}).result
    assert result["path"] == "src"
    assert paths(result) == ["src/a/x.tsx", "src/b.tsx"]


def test_a_pattern_without_a_slash_matches_at_any_depth(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.py": "", "pkg/b.py": "", "pkg/deep/c.py": "", "pkg/d.txt": ""})
    result = cli("glob", stdin={"pattern": "*.py"}).result
    assert result["patterns"] == ["**/*.py"]
    assert paths(result) == ["a.py", "pkg/b.py", "pkg/deep/c.py"]


def test_a_leading_dot_slash_keeps_the_pattern_to_the_top_level(ws: Path,
                                                                cli: CliRunner) -> None:
    make(ws, {"a.py": "", "pkg/b.py": ""})
    assert glob(cli, pattern="./*.py") == ["a.py"]


def test_a_pattern_with_a_slash_is_anchored_at_the_base_directory(ws: Path,
                                                                  cli: CliRunner) -> None:
    make(ws, {"src/app.ts": "", "src/lib/x.ts": "", "other/src/y.ts": ""})
    assert glob(cli, pattern="src/*.ts") == ["src/app.ts"]
    assert glob(cli, pattern="src/**/*.ts") == ["src/app.ts", "src/lib/x.ts"]


def test_braces_expand_to_alternatives(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.ts": "", "b.tsx": "", "c.js": "", "lib/d.ts": "", "src/e.ts": ""})
    result = cli("glob", stdin={"pattern": "*.{ts,tsx}"}).result
    assert result["patterns"] == ["**/*.ts", "**/*.tsx"]
    assert paths(result) == ["a.ts", "b.tsx", "lib/d.ts", "src/e.ts"]
    assert glob(cli, pattern="{lib,src}/*.ts") == ["lib/d.ts", "src/e.ts"]


def test_character_classes_and_question_marks_match_one_character(ws: Path,
                                                                  cli: CliRunner) -> None:
    make(ws, {"f1.txt": "", "f2.txt": "", "f10.txt": "", "fa.txt": ""})
    assert glob(cli, pattern="f[0-9].txt") == ["f1.txt", "f2.txt"]
    assert glob(cli, pattern="f?.txt") == ["f1.txt", "f2.txt", "fa.txt"]


def test_matching_ignores_case_unless_case_sensitive(ws: Path, cli: CliRunner) -> None:
    make(ws, {"Docs/README.MD": "", "docs/notes.md": ""})
    assert glob(cli, pattern="docs/*.md") == ["Docs/README.MD", "docs/notes.md"]
    assert glob(cli, pattern="docs/*.md", case_sensitive=True) == ["docs/notes.md"]


def test_sort_mtime_returns_the_newest_first(ws: Path, cli: CliRunner) -> None:
    make(ws, {"old.py": "", "mid/new.py": "", "newest.py": ""})
    for rel, when in (("old.py", 1_000_000), ("mid/new.py", 2_000_000),
                      ("newest.py", 3_000_000)):
        os.utime(ws / rel, (when, when))
    assert glob(cli, pattern="*.py") == ["mid/new.py", "newest.py", "old.py"]
    assert glob(cli, pattern="*.py", sort="mtime") == ["newest.py", "mid/new.py", "old.py"]
    result = cli("glob", stdin={"pattern": "*.py", "sort": "mtime", "limit": 1}).result
    assert paths(result) == ["newest.py"] and result["truncated"] is True


def test_hidden_directories_are_found_when_the_pattern_names_them(ws: Path,
                                                                  cli: CliRunner) -> None:
    make(ws, {".github/workflows/ci.yml": "", ".github/dependabot.yml": "",
              ".cache/x.yml": "", "app.yml": "", ".env": "", "sub/.env": ""})
    assert glob(cli, pattern=".github/**/*.yml") == [".github/dependabot.yml",
                                                     ".github/workflows/ci.yml"]
    assert glob(cli, pattern=".env") == [".env", "sub/.env"]


def test_hidden_matches_left_out_are_counted_and_included_on_request(ws: Path,
                                                                     cli: CliRunner) -> None:
    make(ws, {".github/workflows/ci.yml": "", "app.yml": ""})
    result = cli("glob", stdin={"pattern": "**/*.yml"}).result
    assert paths(result) == ["app.yml"]
    assert result["skipped"]["hidden"] == 1
    assert glob(cli, pattern="**/*.yml", include_hidden=True) == [".github/workflows/ci.yml",
                                                                  "app.yml"]


def test_gitignored_files_are_skipped_and_counted_until_include_ignored(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "dist/\n*.gen.ts\n", "dist/bundle.ts": "", "a.gen.ts": "",
              "a.ts": ""})
    result = cli("glob", stdin={"pattern": "**/*.ts"}).result
    assert paths(result) == ["a.ts"]
    assert result["skipped"]["ignored"] == 2
    assert glob(cli, pattern="**/*.ts", include_ignored=True) == ["a.gen.ts", "a.ts",
                                                                  "dist/bundle.ts"]


def test_excluded_directories_are_entered_only_when_named_or_asked(ws: Path,
                                                                   cli: CliRunner) -> None:
    make(ws, {"node_modules/react/index.js": "", "vendor/lib.js": "", "app.js": ""})
    result = cli("find", stdin={"pattern": "*.js"}).result
    assert paths(result) == ["app.js"]
    assert result["skipped"]["excluded_dirs"] == 2
    assert glob(cli, pattern="node_modules/**/*.js") == ["node_modules/react/index.js"]
    assert glob(cli, pattern="*.js", exclude_dirs=["vendor"]) == [
        "app.js", "node_modules/react/index.js"]


def test_type_and_a_trailing_slash_select_directories(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a/x.py": "", "src/b.py": ""})
    assert glob(cli, pattern="src/*/") == ["src/a"]
    assert glob(cli, pattern="src/*", type="any") == ["src/a", "src/b.py"]
    assert glob(cli, pattern="src/*") == ["src/b.py"]


def test_limit_truncates_and_the_text_output_says_so(ws: Path, cli: CliRunner) -> None:
    make(ws, {f"f{i:02}.txt": "" for i in range(12)})
    result = cli("glob", stdin={"pattern": "*.txt", "limit": 10}).result
    assert result["count"] == 10 and result["truncated"] is True
    out = cli("glob", "--pattern", "*.txt", "--limit", "10", *TEXT).out
    assert out.splitlines()[:2] == ["f00.txt", "f01.txt"]
    assert "[showing the first 10 matches; raise limit or narrow the search]\n" in out


def test_text_output_with_no_match_explains_what_was_skipped(ws: Path,
                                                              cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "debug.log": ""})
    call = cli("glob", "--pattern", "*.log", *TEXT)
    assert call.code == 0
    assert call.out == ("[0 matches; skipped: 1 ignored, 1 hidden; to search them: "
                        "include_hidden: true, include_ignored: true]\n")


def test_symlinks_are_never_followed_outside_the_workspace(ws: Path, cli: CliRunner) -> None:
    (ws / "escape").symlink_to(ws.parent / "outside")
    make(ws, {"real/inner.txt": ""})
    (ws / "inside").symlink_to("real")
    result = cli("glob", stdin={"pattern": "**/*", "type": "any"}).result
    assert paths(result) == ["escape", "inside", "real", "real/inner.txt"]
    assert glob(cli, pattern="escape/*") == []
    assert glob(cli, pattern="**/secret.txt") == []


@pytest.mark.parametrize("pattern,why", [
    ("/etc/*", "absolute"), ("~/x", "absolute"), ("../outside/*", "'..'"),
    ("src/../../x", "'..'"), ("{a,..}/x", "'..'"), ("{1..5000}.txt", "more than 1000"),
    ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}", "more than 1000"),
    ("x" * 1001, "1 to 1000"), ("", "1 to 1000")])
def test_unsafe_or_exploding_patterns_are_invalid_arguments(ws: Path, cli: CliRunner,
                                                            pattern: str, why: str) -> None:
    call = cli("glob", stdin={"pattern": pattern})
    assert call.code != 0
    assert call.error["code"] == "invalid_arguments"
    assert why in call.error["message"] and call.error["hint"]


def test_unbalanced_braces_are_literal_characters(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a{b.txt": ""})
    assert glob(cli, pattern="a{b.txt") == ["a{b.txt"]


@pytest.mark.parametrize("path,code", [
    ("missing", "not_found"), ("file.txt", "not_a_directory"), ("..", "outside_workspace"),
    ("/etc", "outside_workspace"), ("escape", "outside_workspace")])
def test_errors_have_stable_codes(ws: Path, cli: CliRunner, path: str, code: str) -> None:
    make(ws, {"file.txt": ""})
    (ws / "escape").symlink_to(ws.parent / "outside")
    call = cli("find_files_glob", stdin={"pattern": "*", "path": path})
    assert call.code != 0
    assert call.error["code"] == code


def test_searching_changes_nothing(ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "x\n", "a/b/c": "d"})
    before = snapshot(ws)
    cli("glob", stdin={"pattern": "**/*", "include_hidden": True})
    assert snapshot(ws) == before


def prefix_tree(ws: Path) -> None:
    make(ws, {"src/a.py": "", "src/pkg/b.py": "", "src/pkg/c.txt": "", "other/d.py": "",
              "other/.hidden.py": "", "build/e.py": "", ".gitignore": "build/\n"})


def test_a_literal_leading_directory_is_where_the_walk_starts(ws: Path, cli: CliRunner) -> None:
    prefix_tree(ws)
    result = cli("glob", stdin={"pattern": "src/**/*.py"}).result
    assert paths(result) == ["src/a.py", "src/pkg/b.py"]
    assert result["path"] == "."
    # other/ and build/ were never looked at: nothing there is counted as skipped
    assert result["skipped"]["hidden"] == 0 and result["skipped"]["ignored"] == 0
    everywhere = cli("glob", stdin={"pattern": "**/*.py"}).result
    assert everywhere["skipped"]["hidden"] == 2 and everywhere["skipped"]["ignored"] == 1


def test_a_prefix_below_path_is_relative_to_path(ws: Path, cli: CliRunner) -> None:
    prefix_tree(ws)
    result = cli("glob", stdin={"pattern": "pkg/*.py", "path": "src"}).result
    assert paths(result) == ["src/pkg/b.py"]
    assert result["path"] == "src"


def test_a_prefix_matches_case_insensitively_like_the_full_walk(ws: Path,
                                                                cli: CliRunner) -> None:
    prefix_tree(ws)
    assert glob(cli, pattern="SRC/PKG/*.PY") == ["src/pkg/b.py"]
    assert glob(cli, pattern="SRC/PKG/*.PY", case_sensitive=True) == []
    make(ws, {"Src/z.py": ""})  # two spellings: both must still be found
    assert glob(cli, pattern="src/*.py") == ["Src/z.py", "src/a.py"]


def test_a_missing_prefix_finds_nothing_without_error(ws: Path, cli: CliRunner) -> None:
    prefix_tree(ws)
    result = cli("glob", stdin={"pattern": "nope/**/*.py", "case_sensitive": True}).result
    assert result["matches"] == [] and result["count"] == 0
    assert cli("glob", stdin={"pattern": "src/a.py/*.py", "case_sensitive": True}).result[
        "count"] == 0


def test_an_ignored_or_symlinked_prefix_answers_as_the_full_walk(ws: Path,
                                                                 cli: CliRunner) -> None:
    prefix_tree(ws)
    (ws / "link").symlink_to("src")
    assert glob(cli, pattern="build/*.py") == []
    assert cli("glob", stdin={"pattern": "build/*.py"}).result["skipped"]["ignored"] == 1
    assert glob(cli, pattern="build/*.py", include_ignored=True) == ["build/e.py"]
    assert glob(cli, pattern="link/**/*.py") == []


# -- the base-name fast path agrees with wcmatch ---------------------------------------------------

NAME_CHARS = "abcAB.-_K\u212a\u017fs0"


@given(segments=st.lists(st.text(alphabet=NAME_CHARS, min_size=1, max_size=6).filter(
           lambda s: s not in (".", "..")), min_size=1, max_size=3),  # real names only
       shape=st.lists(st.tuples(st.sampled_from(["name", "suffix", "prefix"]),
                                st.text(alphabet="abcAB.-_s0", min_size=0, max_size=4)),
                      min_size=1, max_size=3),
       case_sensitive=st.booleans(), dotglob=st.booleans())
@settings(max_examples=400, deadline=None)
def test_the_base_name_fast_path_matches_exactly_what_wcmatch_matches(
        segments: list[str], shape: list[tuple[str, str]], case_sensitive: bool,
        dotglob: bool) -> None:
    from zbtools.tools.find_files_glob import _compile, base_name_matcher

    patterns = []
    for kind, text in shape:
        seg = {"name": text or "x", "suffix": "*" + text, "prefix": text + "*"}[kind]
        if seg.startswith("."):
            continue  # names a hidden entry: the fast path is not taken
        patterns.append("**/" + seg)
    if not patterns:
        return
    rel = "/".join(segments)
    if not dotglob and any(s.startswith(".") for s in segments):
        return  # the walk yields no hidden entry without include_hidden

    def slow() -> Any:
        return _compile("p", patterns, case_sensitive, dotglob)

    fast = base_name_matcher(patterns, case_sensitive, slow)
    assert fast is not None
    assert fast(rel) == slow()(rel), (patterns, rel)


@pytest.mark.parametrize("pattern", ["src/**/*.py", "**/*.py[cd]", "**/a?.py", "**/*a*b",
                                     "**/.env", "*/x.py", "**/[ab].py"])
def test_other_glob_shapes_take_the_full_matcher(pattern: str) -> None:
    from zbtools.tools.find_files_glob import base_name_matcher, expand

    patterns, _ = expand(pattern)
    assert base_name_matcher(patterns, False, lambda: lambda rel: False) is None


def test_a_plain_extension_glob_imports_neither_wcmatch_nor_bracex(ws: Path) -> None:
    import subprocess
    import sys

    make(ws, {"a.py": "", "b/c.py": ""})
    code = ("import sys\nfrom zbtools.entry import main_with_argv\n"
            "rc = main_with_argv(['find_files_glob', '--pattern', '**/*.py'])\n"
            "print('\\n' + str(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('wcmatch', 'bracex'))))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, text=True,
                         check=True).stdout
    assert out.rstrip().endswith("[]"), out
    assert '"a.py"' in out and '"b/c.py"' in out


def test_exclude_leaves_out_matches_by_base_name_or_path(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.py": "", "a.py.backup": "", "run.log": "", "build/gen.py": "", "src/b.py": ""})
    assert glob(cli, pattern="**/*", exclude=["*.log", "*.backup"]) == [
        "a.py", "build/gen.py", "src/b.py"]
    assert glob(cli, pattern="**/*.py", exclude=["build/**"]) == ["a.py", "src/b.py"]
    assert glob(cli, pattern="**/*.py", exclude=["*.{py,log}"]) == []
