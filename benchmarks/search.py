"""Search tools against ripgrep: ``grep_search``, ``find_files_glob`` and ``list_directory``.

Goals (docs/internals/performance.md#goals and the issue): the Python-engine ``grep_search`` at
most 2x
``rg -n PAT .`` on the real-source corpus and at most 1.5x on the 200k-file synthetic tree;
``find_files_glob '**/*.py'`` and ``list_directory`` at most 2x ``rg --files``; memory bounded
(peak RSS under GNU ``/usr/bin/time -f %M``, reported next to rg's).

Corpora, each a ``git init``'ed directory (rg honours ``.gitignore`` only inside a repository):

* ``real``: a copy of this interpreter's standard library (``sysconfig.get_paths()['stdlib']``,
  without its ``site-packages`` and ``__pycache__``) and of the site-packages of the venv
  running this script, plus a few ``.gitignore`` files (one with a negation);
* ``synth``: ``gen_tree.py`` at ``--scale`` (0.1 by default, about 20,000 files; 1.0 is the
  200,000-file tree).

Correctness before speed: each grep case runs ``rg -n PAT .`` and ``zbtools grep_search
--format text`` once, parses both into ``path:line:text`` lines and compares the sorted lists;
a disagreement is reported as MISMATCH with the first differing lines, and not timed. Glob and
list compare file sets with ``rg --files -g '*.py' .`` and ``rg --files .``. zbtools runs with
``--exclude-dirs '[]'`` (rg has no built-in excluded directories: a default-settings difference
is not a bug) and its largest limits (10,000); a result cut at the limit is compared as a subset
and flagged ``capped``. ``grep -rnI`` is timed against rg as an extra reference row.

Usage::

    .venv/bin/python benchmarks/search.py [--scale 0.1] [--corpora real,synth] [--dir DIR]
        [--runs 10] [--warmup 2] [--venv DIR | --keep-venv DIR] [--rss-runs 3] [--profile]

Exit status 0 whatever the verdicts: this is a report, not a gate (2 when it cannot run).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Command,
    Venv,
    add_timing_arguments,
    add_venv_arguments,
    bench_env,
    check_ok,
    describe_run,
    measure_pairs,
    ms,
    peak_rss,
    prepare_venv,
    print_profile,
    rg_and_git,
    spawn,
    table,
    verdict,
    working_directory,
    write_export,
)
from gen_tree import ensure_tree

GOAL_GREP = {"real": 2.0, "synth": 1.5}  # the default engine's (auto); python's rows: reference
GOAL_FILES = 2.0
LIMIT = 10_000
PATTERNS = (("literal", "def get_"), ("regex", r"class \w+\(.*Error\)"),
            ("no-literal", r"\w+\(\w+\):$"))
LINE_RE = re.compile(rb"^(.*?):(\d+):(.*)$", re.DOTALL)
REAL_STAMP = ".zbbench-real"


# --------------------------------------------------------------------------------------------
# Corpora


def ensure_real(root: Path) -> str:
    """Copy the stdlib and the running venv's site-packages into ``root`` (reused if stamped)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = Path(sysconfig.get_paths()["purelib"])
    key = f"{stdlib} {site}"
    stamp = root / REAL_STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == key:
        return "reused"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "site-packages", "dist-packages")
    shutil.copytree(stdlib, root / "stdlib", symlinks=True, ignore=skip)
    shutil.copytree(site, root / "site-packages", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\n*.so\n", encoding="utf-8")
    test = root / "stdlib" / "test"
    if test.is_dir():
        (test / ".gitignore").write_text("*.wav\n*.aif*\ndecimaltestdata/\n", encoding="utf-8")
    (root / "site-packages" / ".gitignore").write_text("*.dist-info/\n*.pth\n",
                                                       encoding="utf-8")
    email = root / "stdlib" / "email"
    if email.is_dir():
        (email / ".gitignore").write_text("*.py\n!__init__.py\n!message.py\n",
                                          encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    stamp.write_text(key + "\n", encoding="utf-8")
    return f"copied from {stdlib} and {site}"


def rg_files(rg: str, root: Path, env: dict[str, str]) -> list[bytes]:
    with working_directory(root):
        out = check_ok(Command((rg, "--files", ".")), env).stdout
    return [_strip(p) for p in out.splitlines()]


def corpus_bytes(root: Path, files: list[bytes]) -> int:
    return sum((root / os.fsdecode(f)).lstat().st_size for f in files)


# --------------------------------------------------------------------------------------------
# Comparisons


def _strip(path: bytes) -> bytes:
    return path[2:] if path.startswith(b"./") else path


@dataclasses.dataclass
class Parsed:
    lines: list[tuple[bytes, int, bytes]]
    notes: list[bytes]


def parse_grep(out: bytes) -> Parsed:
    lines: list[tuple[bytes, int, bytes]] = []
    notes: list[bytes] = []
    for raw in out.split(b"\n"):
        if not raw:
            continue
        m = LINE_RE.match(raw)
        if m is None:
            notes.append(raw)
            continue
        lines.append((_strip(m.group(1)), int(m.group(2)), m.group(3)))
    lines.sort()
    return Parsed(lines, notes)


def _show(item: tuple[bytes, int, bytes]) -> str:
    text = item[2].decode("utf-8", "backslashreplace")
    if len(text) > 160:
        text = text[:160] + f"...[{len(item[2])} bytes]"
    return f"{item[0].decode('utf-8', 'backslashreplace')}:{item[1]}:{text}"


def compare_grep(zb: Parsed, rg: Parsed, capped: bool) -> list[str]:
    """Problems (empty when equal); a capped result need only be a subset of rg's."""
    problems: list[str] = []
    rg_by_key = {(p, n): t for p, n, t in rg.lines}
    zb_by_key = {(p, n): t for p, n, t in zb.lines}
    only_zb = sorted(set(zb_by_key) - set(rg_by_key))
    only_rg = [] if capped else sorted(set(rg_by_key) - set(zb_by_key))
    differ = sorted(k for k in set(zb_by_key) & set(rg_by_key) if zb_by_key[k] != rg_by_key[k])
    long_cut = [k for k in differ if len(rg_by_key[k]) > 500]
    differ = [k for k in differ if len(rg_by_key[k]) <= 500]
    if only_rg:
        files = sorted({p for p, _ in only_rg})
        problems.append(f"{len(only_rg)} lines only in rg ({len(files)} files), first: "
                        + "; ".join(_show((p, n, rg_by_key[(p, n)])) for p, n in only_rg[:3]))
        problems.append("  files: " + ", ".join(f.decode(errors="replace") for f in files[:8]))
    if only_zb:
        files = sorted({p for p, _ in only_zb})
        problems.append(f"{len(only_zb)} lines only in zbtools ({len(files)} files), first: "
                        + "; ".join(_show((p, n, zb_by_key[(p, n)])) for p, n in only_zb[:3]))
        problems.append("  files: " + ", ".join(f.decode(errors="replace") for f in files[:8]))
    if differ:
        problems.append(f"{len(differ)} lines with different text, first: "
                        + "; ".join(f"rg {_show((*k, rg_by_key[k]))!r} vs zbtools "
                                    f"{zb_by_key[k].decode('utf-8', 'backslashreplace')[:160]!r}"
                                    for k in differ[:2]))
    if long_cut and not problems:
        print(f"#   note: {len(long_cut)} lines over 500 bytes differ (zbtools cuts them around "
              "the match by design); not counted as a mismatch")
    return problems


def compare_sets(zb: set[bytes], rg: set[bytes], capped: bool) -> list[str]:
    problems: list[str] = []
    only_rg = [] if capped else sorted(rg - zb)
    only_zb = sorted(zb - rg)
    for name, items in (("only in rg", only_rg), ("only in zbtools", only_zb)):
        if items:
            problems.append(f"{len(items)} files {name}, first: "
                            + ", ".join(i.decode(errors="replace") for i in items[:6]))
    return problems


def zb_json(cmd: Command, env: dict[str, str]) -> dict[str, object]:
    """Run a zbtools command in JSON format; returns its ``result``."""
    out = check_ok(cmd, env).stdout
    data = json.loads(out)
    if not data.get("ok"):
        raise SystemExit(f"error: zbtools failed: {out[:500]!r}")
    result: dict[str, object] = data["result"]
    return result


# --------------------------------------------------------------------------------------------
# Main


@dataclasses.dataclass
class Runner:
    args: argparse.Namespace
    venv: Venv
    env: dict[str, str]
    rg: str
    rows: list[list[str]] = dataclasses.field(default_factory=list)
    results: dict[str, object] = dataclasses.field(default_factory=dict)
    commands: list[str] = dataclasses.field(default_factory=list)
    mismatches: list[str] = dataclasses.field(default_factory=list)

    def zb(self, *argv: str) -> Command:
        base = ((str(self.venv.script),) if self.args.script
                else (str(self.venv.python), "-I", "-m", "zbtools"))
        return Command((*base, *argv))

    def mismatch(self, label: str, goal: float | None, problems: list[str]) -> None:
        self.rows.append([label, "-", "-", "-", "-" if goal is None else f"{goal:.1f}",
                          "MISMATCH", "-", "-", "-", "-"])
        self.results[label] = {"mismatch": problems}
        self.mismatches.append(f"{label}:\n    " + "\n    ".join(problems))
        print(f"# MISMATCH, not timed: {label}", flush=True)
        for p in problems:
            print(f"#   {p}", flush=True)

    def timed(self, label: str, target: Command, ref: Command, goal: float | None,
              note: str = "", rss: bool = True) -> None:
        self.commands += [f"  {label}:", f"    {target.display()}", f"    {ref.display()}"]
        paired = measure_pairs(target, ref, self.args.runs, self.args.warmup, self.args.engine,
                               self.env)
        lo, hi = paired.ratio_iqr()
        t_rss = peak_rss(target, self.env, self.args.rss_runs) if rss else None
        r_rss = peak_rss(ref, self.env, self.args.rss_runs) if rss else None
        verdict_text = verdict(paired.ratio, goal) + (f" ({note})" if note else "")
        self.rows.append([label, f"{ms(statistics.median(paired.target_s)):.1f}",
                          f"{ms(statistics.median(paired.ref_s)):.1f}", f"{paired.ratio:.2f}",
                          "-" if goal is None else f"{goal:.1f}", verdict_text,
                          t_rss.text() if t_rss else "-", r_rss.text() if r_rss else "-",
                          f"{lo:.2f}-{hi:.2f}", paired.engine])
        self.results[label] = {"command": target.display(), "reference": ref.display(),
                               "rss_kib": t_rss.kib if t_rss else None,
                               "ref_rss_kib": r_rss.kib if r_rss else None, **paired.to_json()}
        print(f"# timed {label}: ratio {paired.ratio:.2f}", flush=True)

    def grep_cases(self, corpus: str, root: Path) -> None:
        grep = shutil.which("grep")
        for kind, pattern in PATTERNS:
            for engine, goal in (("python", None), ("auto", GOAL_GREP[corpus])):
                self.grep_case(corpus, root, kind, pattern, engine, goal)
            if grep is not None:
                rg = Command((self.rg, "-n", pattern, "."))
                gr = Command((grep, "-rnIE", "--exclude-dir=.git", pattern, "."))
                with working_directory(root):
                    self.timed(f"{corpus}: grep -rnIE {kind} (ref row, vs rg)", gr, rg, None,
                               rss=False)

    def grep_case(self, corpus: str, root: Path, kind: str, pattern: str, engine: str,
                  goal: float | None) -> None:
        label = f"{corpus}: grep {kind} '{pattern}' engine {engine}"
        common = ("--pattern", pattern, "--path", ".", "--head-limit", str(LIMIT), "--timeout",
                  "120", "--exclude-dirs", "[]", "--engine", engine)
        zb = self.zb("grep_search", *common, "--format", "text")
        rg = Command((self.rg, "-n", pattern, "."))
        with working_directory(root):
            info = zb_json(self.zb("grep_search", *common, "--output-mode", "count"), self.env)
            zb_out = parse_grep(check_ok(zb, self.env).stdout)
            rg_sample = spawn(rg, self.env)
            if rg_sample.exit_code not in (0, 1):
                raise SystemExit(f"error: rg failed: {rg_sample.stderr[:500]!r}")
            rg_out = parse_grep(rg_sample.stdout)
            capped = len(zb_out.lines) >= LIMIT
            print(f"# {label}: rg {len(rg_out.lines):,} lines, zbtools "
                  f"{len(zb_out.lines):,}{' (capped)' if capped else ''}; zbtools count "
                  f"mode: engine {info.get('engine')}, files_searched "
                  f"{info.get('files_searched')}, skipped {info.get('skipped')}; notes "
                  f"{[n[:100] for n in zb_out.notes[:3]]}", flush=True)
            problems = compare_grep(zb_out, rg_out, capped)
            if problems:
                self.mismatch(label, goal, problems)
            else:
                self.timed(label, zb, rg, goal, "capped" if capped else "")

    def file_cases(self, corpus: str, root: Path, all_files: list[bytes]) -> None:
        rg_py = Command((self.rg, "--files", "-g", "*.py", "."))
        glob = self.zb("find_files_glob", "--pattern", "**/*.py", "--path", ".", "--format",
                       "text", "--limit", str(LIMIT), "--exclude-dirs", "[]")
        with working_directory(root):
            rg_g = {_strip(p) for p in check_ok(rg_py, self.env).stdout.splitlines()}
            # rg's -g globs override .gitignore for the files they match: compare with the
            # gitignore-honouring set, rg --files filtered on the suffix
            rg_set = {f for f in all_files if f.endswith(b".py")}
            res = zb_json(self.zb("find_files_glob", "--pattern", "**/*.py", "--path", ".",
                                  "--limit", str(LIMIT), "--exclude-dirs", "[]"), self.env)
            matches = res["matches"]
            assert isinstance(matches, list)
            zb_set = {os.fsencode(m["path"]) for m in matches}
            text_lines = check_ok(glob, self.env).stdout.splitlines()
            capped = bool(res.get("truncated")) or len(zb_set) >= LIMIT
            label = f"{corpus}: glob '**/*.py'"
            print(f"# {label}: rg --files | grep '[.]py$' {len(rg_set):,} files (rg --files -g "
                  f"'*.py' {len(rg_g):,}: -g re-includes ignored files), zbtools {len(zb_set):,}"
                  f"{' (capped)' if capped else ''}, text output {len(text_lines):,} lines; "
                  f"skipped {res.get('skipped')}", flush=True)
            problems = compare_sets(zb_set, rg_set, capped)
            if problems:
                self.mismatch(label, GOAL_FILES, problems)
            else:
                self.timed(label, glob, rg_py, GOAL_FILES, "capped" if capped else "")

            label = f"{corpus}: list_directory (all)"
            rg_all = Command((self.rg, "--files", "."))
            listing = self.zb("list_directory", "--path", ".", "--max-depth", "100", "--limit",
                              str(LIMIT), "--exclude-dirs", "[]")
            res = zb_json(listing, self.env)
            entries = res["entries"]
            assert isinstance(entries, list)
            zb_files = {os.fsencode(e["path"]) for e in entries if e["type"] != "directory"}
            capped = bool(res.get("truncated")) or len(entries) >= LIMIT
            print(f"# {label}: rg {len(all_files):,} files, zbtools {len(zb_files):,} files "
                  f"in {len(entries):,} entries{' (capped)' if capped else ''}; skipped "
                  f"{res.get('skipped')}", flush=True)
            problems = compare_sets(zb_files, set(all_files), capped)
            if problems:
                self.mismatch(label, GOAL_FILES, problems)
            else:
                self.timed(label, listing, rg_all, GOAL_FILES, "capped" if capped else "")

    def profile(self, root: Path) -> None:
        """cProfile of one grep_search (literal) on ``root``: top functions."""
        with tempfile.NamedTemporaryFile(suffix=".prof") as prof, working_directory(root):
            argv = [str(self.venv.python), "-I", "-m", "cProfile", "-o", prof.name, "-m",
                    "zbtools", "grep_search", "--pattern", PATTERNS[0][1], "--path", ".",
                    "--format", "text", "--head-limit", str(LIMIT), "--timeout", "120",
                    "--exclude-dirs", "[]"]
            print(f"\n# cProfile: {' '.join(argv[4:])} (in {root}; forked workers, if any, "
                  "are not profiled)")
            subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=self.env)
            print_profile(self.venv.python, prof.name, "tottime", "cumulative")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_venv_arguments(parser)
    add_timing_arguments(parser, runs=10)
    parser.set_defaults(warmup=2)
    parser.add_argument("--scale", type=float, default=0.1,
                        help="synthetic tree scale (1.0 = 200,000 files; default 0.1)")
    parser.add_argument("--corpora", default="real,synth",
                        help="comma-separated: real, synth (default both)")
    parser.add_argument("--dir", type=Path, metavar="DIR",
                        help="keep the corpora in DIR and reuse them (default: a temporary "
                        "directory, deleted at exit)")
    parser.add_argument("--rss-runs", type=int, default=3,
                        help="separate runs that measure peak RSS (max reported; default 3)")
    parser.add_argument("--script", action="store_true",
                        help="run the console script VENV/bin/zbtools, not python -I -m zbtools")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of one grep run on the real corpus")
    parser.add_argument("--default-budget", action="store_true",
                        help="keep zbtools' text-output budget (2,000 lines / 50 KB, the rest "
                        "spilled to a file); by default it is lifted so that zbtools prints "
                        "everything, as rg does")
    args = parser.parse_args(argv)
    env = bench_env()
    rg = rg_and_git()
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    with contextlib.ExitStack() as stack:
        venv = stack.enter_context(prepare_venv(args))
        if args.dir is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-srch-")))
        else:
            work = args.dir.resolve()
            work.mkdir(parents=True, exist_ok=True)
        roots: dict[str, tuple[Path, str]] = {}
        if "real" in corpora:
            roots["real"] = (work / "real", ensure_real(work / "real"))
        if "synth" in corpora:
            root = work / f"synth-{args.scale:g}"
            roots["synth"] = (root, ensure_tree(root, args.scale))
        env["ZBTOOLS_STATE_DIR"] = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="zbbench-state-"))
        if not args.default_budget:
            env["ZBTOOLS_MAX_LINES"] = str(10**8)
            env["ZBTOOLS_MAX_BYTES"] = str(10**10)
        describe_run(venv)
        print(f"# zbtools env: {', '.join(f'{k}={v}' for k, v in env.items() if 'ZBTOOLS' in k)}")
        rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True,
                                    check=False).stdout.splitlines()[0]
        print(f"# {rg_version} ({rg}); {args.runs} measured pairs per case after "
              f"{args.warmup} warm-up pairs, interleaved; ratio = median of per-pair ratios; "
              f"RSS: max of {args.rss_runs} separate runs")
        run = Runner(args, venv, env, rg)
        floor = peak_rss(Command((str(venv.python), "-I", "-c", "pass")), env, 3)
        corpus_info: dict[str, object] = {}
        for name, (root, done) in roots.items():
            files = rg_files(rg, root, env)
            size = corpus_bytes(root, files)
            on_disk = sum(1 for _ in root.rglob("*"))
            print(f"# corpus {name}: {root} ({done}); rg --files | wc -l = {len(files):,}, "
                  f"{size:,} bytes ({size / 1e6:.1f} MB) visible; {on_disk:,} entries on disk",
                  flush=True)
            corpus_info[name] = {"root": str(root), "rg_files": len(files), "bytes": size}
            run.grep_cases(name, root)
            run.file_cases(name, root, files)
        print()
        print(table(["case", "zbtools ms", "ref ms", "ratio", "goal", "verdict",
                     "zbtools RSS MB", "ref RSS MB", "ratio p25-p75", "via"], run.rows))
        print("\nref = rg (the grep -rnIE rows: grep vs rg). Goals: grep <= 2x rg on the real "
              "corpus, <= 1.5x on the synthetic tree (the issue; goals G2/G3 of "
              "docs/internals/performance.md allow "
              "2.5x/1.5x); glob and list <= 2x rg --files; 'capped': zbtools stopped at "
              f"its {LIMIT:,}-result limit, so it did less work than rg (ratio not comparable). "
              f"Peak RSS floor: python -I -c pass {floor.text()} MB ({floor.method})")
        if run.mismatches:
            print("\nmismatches (not timed):")
            print("\n".join(f"  {m}" for m in run.mismatches))
        print("\ncommands (run in the corpus directory):")
        print("\n".join(run.commands))
        if args.profile and "real" in roots:
            run.profile(roots["real"][0])
        write_export(args.export, {"benchmark": "search", "zbtools": venv.version,
                                   "corpora": corpus_info, "runs": args.runs,
                                   "warmup": args.warmup, "cases": run.results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
