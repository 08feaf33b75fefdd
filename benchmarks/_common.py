"""Shared helpers of the zbtools benchmarks: the venv under test, paired timing, tables.

The benchmarks time an *installed* zbtools, as users get it: a wheel built from the repo and
installed (not editable) into a fresh venv, so every module has its .pyc file. In this
environment ``PYTHONDONTWRITEBYTECODE=1`` is set, which makes an editable or source checkout
recompile every module on every call (benchmarks/README.md#how-it-measures-and-the-traps-it-avoids);
timing the dev venv would measure the compiler, not zbtools.

Timing is always *paired*: the command under test and its reference run back to back (A B, then
B A, ...) and the ratio reported is the median of the per-pair ratios, which is robust to the
drift of a noisy 2-core VM. Two engines:

* ``hyperfine``: one ``hyperfine -N --output=pipe --runs 1 --export-json`` invocation per pair
  (used when hyperfine is on PATH). hyperfine < 1.16 has no ``--input``, so cases that feed the
  request on stdin fall back to the loop engine there.
* ``loop``: ``os.posix_spawn`` + ``os.wait4`` timed with ``time.perf_counter``; stdout is drained
  through a pipe (as ``--output=pipe`` does).

Peak RSS comes from separate runs under GNU ``/usr/bin/time -f %M`` (see ``peak_rss`` for why
``wait4``/``getrusage`` from this process are only an upper bound).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib.util
import json
import os
import resource
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 120.0


# --------------------------------------------------------------------------------------------
# The venv under test


@dataclasses.dataclass(frozen=True)
class Venv:
    root: Path
    python: Path  # VENV/bin/python
    script: Path  # VENV/bin/zbtools, the console script pip wrote
    version: str
    package_dir: Path
    origin: str  # how it came to be, for the report
    pyc: str  # bytecode status, for the report
    pip: str = "pip ?"  # the venv's own pip (which wrote the console script, unless pipx or uv)


def add_venv_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("venv under test (default: a fresh temporary one)")
    group.add_argument("--repo", type=Path, default=REPO,
                       help=f"zbtools checkout to build the wheel from (default {REPO})")
    group.add_argument("--python", metavar="EXE",
                       help="interpreter the venv is created with (default: the base "
                       "interpreter of the one running this script; a pyenv shim is refused)")
    excl = group.add_mutually_exclusive_group()
    excl.add_argument("--venv", type=Path, metavar="DIR",
                      help="reuse this existing venv as it is: no build, no install")
    excl.add_argument("--keep-venv", type=Path, metavar="DIR",
                      help="build the wheel and install it into DIR (created if missing, "
                      "reinstalled if DIR is already a venv), and keep DIR afterwards")


def add_timing_arguments(parser: argparse.ArgumentParser, runs: int) -> None:
    group = parser.add_argument_group("timing")
    group.add_argument("--runs", type=int, default=runs,
                       help=f"measured pairs per case (default {runs})")
    group.add_argument("--warmup", type=int, default=3,
                       help="unmeasured warm-up pairs per case (default 3)")
    group.add_argument("--engine", choices=("auto", "hyperfine", "loop"), default="auto",
                       help="auto: hyperfine when on PATH, else the perf_counter loop")
    group.add_argument("--export", type=Path, metavar="FILE",
                       help="also write every sample and summary as JSON to FILE")


def _fail(message: str) -> SystemExit:
    print(f"error: {message}", file=sys.stderr)
    return SystemExit(2)


def rg_and_git() -> str:
    """The ``rg`` binary the comparisons run (on PATH, else beside this interpreter: the
    ripgrep wheel's), after checking that git is there too (rg honours .gitignore only in a
    repository, and the corpora are made ones); exit status 2 when either is missing."""
    rg = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
    if not Path(rg).exists():
        raise _fail("rg (ripgrep) is not on PATH nor next to this interpreter")
    if shutil.which("git") is None:
        raise _fail("git is needed (rg honours .gitignore only in a repository)")
    return rg


def base_python(explicit: str | None) -> Path:
    """The real interpreter binary to make venvs with: never the pyenv shim (87-99 ms)."""
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise _fail(f"--python {explicit}: not found")
        candidate = Path(found)
    else:
        candidate = Path(getattr(sys, "_base_executable", "") or sys.executable)
    real = candidate.resolve()
    if not real.is_file():
        raise _fail(f"interpreter {candidate} does not exist")
    with real.open("rb") as fh:
        if fh.read(2) == b"#!" or "shims" in real.parts:
            raise _fail(f"{candidate} is a script (a pyenv shim?), not an interpreter binary; "
                        "pass --python /path/to/bin/python3.X")
    return real


def _run(argv: Sequence[str | Path], what: str, **kwargs: object) -> str:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False,
                          **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise _fail(f"{what} failed (exit {proc.returncode}): {shlex.join(map(str, argv))}")
    out: str = proc.stdout
    return out


def build_wheel(repo: Path, outdir: Path) -> Path:
    """``python -m build --wheel`` when the build package is there, else ``pip wheel``."""
    if not (repo / "pyproject.toml").is_file():
        raise _fail(f"{repo} has no pyproject.toml")
    if importlib.util.find_spec("build") is not None:
        argv: list[str | Path] = [sys.executable, "-m", "build", "--wheel", "--outdir", outdir,
                                  repo]
    else:
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
                "-q", "-w", outdir, repo]
    print(f"# building the wheel: {shlex.join(map(str, argv))}", flush=True)
    _run(argv, "building the wheel")
    wheels = sorted(outdir.glob("zbtools-*.whl"))
    if len(wheels) != 1:
        raise _fail(f"expected one zbtools wheel in {outdir}, found {wheels}")
    return wheels[0]


def _inspect_venv(root: Path, origin: str) -> Venv:
    python = root / "bin" / "python"
    script = root / "bin" / "zbtools"
    if not python.exists():
        raise _fail(f"{root} is not a venv (no bin/python)")
    probe = _run([python, "-I", "-c",
                  "import zbtools, os, importlib.metadata as md; print(zbtools.__version__); "
                  "print(os.path.dirname(zbtools.__file__))\n"
                  "try: print('pip ' + md.version('pip'))\n"
                  "except md.PackageNotFoundError: print('no pip in the venv')"],
                 "importing zbtools in the venv")
    version, package, pip = probe.splitlines()[:3]
    package_dir = Path(package)
    if not package_dir.resolve().is_relative_to(root.resolve()):
        print(f"# WARNING: zbtools in {root} is imported from {package_dir} (an editable or "
              "path install): with PYTHONDONTWRITEBYTECODE=1 it is recompiled on every call, "
              "so start-up figures are too slow", flush=True)
    if not script.exists():
        raise _fail(f"{root} has no bin/zbtools console script")
    return Venv(root, python, script, version, package_dir, origin,
                _ensure_pyc(python, package_dir), pip)


def _ensure_pyc(python: Path, package_dir: Path) -> str:
    """Check that every zbtools module has an up-to-date .pyc; compile the missing ones."""
    sources = sorted(package_dir.rglob("*.py"))

    def missing() -> list[Path]:
        out = []
        for src in sources:
            pyc = Path(importlib.util.cache_from_source(str(src)))
            if not pyc.exists() or pyc.stat().st_mtime < src.stat().st_mtime:
                out.append(src)
        return out

    absent = missing()
    if not absent:
        return f"all {len(sources)} zbtools modules have .pyc files"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    _run([python, "-m", "compileall", "-q", package_dir], "compileall", env=env)
    still = missing()
    return (f"{len(absent)} of {len(sources)} zbtools modules lacked .pyc; compileall fixed "
            f"{len(absent) - len(still)}")


@contextlib.contextmanager
def prepare_venv(args: argparse.Namespace) -> Iterator[Venv]:
    """The venv to benchmark, per --venv / --keep-venv; a temporary one is removed at exit.
    The wheel brings every tool's libraries (and the ripgrep wheel where one exists)."""
    if args.venv is not None:
        yield _inspect_venv(args.venv.resolve(), "reused as is (--venv)")
        return
    base = base_python(args.python)
    with contextlib.ExitStack() as stack:
        if args.keep_venv is not None:
            root = args.keep_venv.resolve()
            origin = f"built from {args.repo} and kept (--keep-venv {root})"
        else:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-venv-")))
            origin = f"built from {args.repo} into a temporary venv (deleted at exit)"
        wheel_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zbbench-whl-")))
        wheel = build_wheel(args.repo.resolve(), wheel_dir)
        python = root / "bin" / "python"
        if not python.exists():
            print(f"# creating the venv: {base} -m venv {root}", flush=True)
            _run([base, "-m", "venv", root], "creating the venv")
        pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        print(f"# installing {wheel.name} (not editable) and its dependencies", flush=True)
        _run([*pip, str(wheel)], "pip install")
        _run([*pip, "--force-reinstall", "--no-deps", wheel], "pip install --force-reinstall")
        yield _inspect_venv(root, f"{origin}; wheel {wheel.name}")


def print_profile(python: Path, path: str, *sorts: str) -> None:
    """The top 20 functions of the cProfile file ``path``, read by ``python`` (the venv under
    test), once per sort order (``tottime``, ``cumulative``...); blank lines left out."""
    script = "import pstats, sys; s = pstats.Stats(sys.argv[1]); " + "; ".join(
        f"s.sort_stats({sort!r}).print_stats(20)" for sort in sorts)
    out = subprocess.run([str(python), "-I", "-c", script, path], capture_output=True,
                         text=True, check=True).stdout
    print("\n".join(line for line in out.splitlines() if line.strip()))


def describe_run(venv: Venv) -> None:
    """Header lines: what is measured, where, and how loaded the machine is."""
    load = os.getloadavg()
    print(f"# machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}")
    if load[0] > 0.5:
        print("# WARNING: the machine is busy (1-minute load > 0.5): expect noisy figures; "
              "re-run when it is quiet")
    version = _run([venv.python, "-I", "-c", "import sys; print(sys.version.split()[0])"],
                   "python --version").strip()
    print(f"# zbtools {venv.version}, CPython {version}, venv {venv.root}")
    print(f"# venv: {venv.origin}")
    print(f"# bytecode: {venv.pyc}")
    print(f"# git: {_git_state(REPO)}")


def _git_state(repo: Path) -> str:
    git = shutil.which("git")
    if git is None or not (repo / ".git").exists():
        return "n/a"
    head = subprocess.run([git, "-C", str(repo), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run([git, "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.splitlines()
    return f"HEAD {head or '?'}" + (f", {len(dirty)} modified tracked files (measured as they "
                                     "were at build time)" if dirty else ", clean")


def bench_env() -> dict[str, str]:
    """The environment of timed runs: this one, minus ZBTOOLS_* settings that would change them."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ZBTOOLS_")}


# --------------------------------------------------------------------------------------------
# Running and timing commands


@dataclasses.dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    stdin: Path | None = None  # a file fed on stdin; None: /dev/null
    idle_stdin: bool = False  # stdin is a pipe that stays open and empty (an idle harness)

    def display(self) -> str:
        text = shlex.join(self.argv)
        if self.idle_stdin:
            return text + " <idle-pipe"
        if self.stdin is not None:
            return f"{text} < {shlex.quote(self.stdin.name)}"
        return text + " </dev/null"


@dataclasses.dataclass(frozen=True)
class Sample:
    seconds: float
    exit_code: int
    maxrss_kib: int
    stdout: bytes
    stderr: bytes


def spawn(cmd: Command, env: dict[str, str]) -> Sample:
    """Run once in the current directory; wall time from spawn to reaping, stdout piped."""
    out_r, out_w = os.pipe()  # both close-on-exec: only the dup2'ed copy reaches the child
    idle_w = -1
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = []
    if cmd.idle_stdin:
        in_r, idle_w = os.pipe()
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        in_r = -1
        actions.append((os.POSIX_SPAWN_OPEN, 0, str(cmd.stdin or os.devnull), os.O_RDONLY, 0))
    with tempfile.TemporaryFile() as err:
        actions += [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
        chunks: list[bytes] = []
        start = time.perf_counter()
        pid = os.posix_spawn(cmd.argv[0], list(cmd.argv), env, file_actions=actions)
        os.close(out_w)
        if in_r >= 0:
            os.close(in_r)
        deadline = start + RUN_TIMEOUT_S
        try:
            while True:
                left = max(0.0, deadline - time.perf_counter())
                ready, _, _ = select.select([out_r], [], [], left)
                if not ready:
                    os.kill(pid, 9)
                    raise _fail(f"timed out after {RUN_TIMEOUT_S:.0f} s: {cmd.display()}")
                chunk = os.read(out_r, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            _, status, usage = os.wait4(pid, 0)
            elapsed = time.perf_counter() - start
        finally:
            os.close(out_r)
            if idle_w >= 0:
                os.close(idle_w)
        err.seek(0)
        return Sample(elapsed, os.waitstatus_to_exitcode(status), usage.ru_maxrss,
                      b"".join(chunks), err.read())


def check_ok(cmd: Command, env: dict[str, str]) -> Sample:
    """Run once and insist on exit status 0 (timing a failure measures nothing)."""
    sample = spawn(cmd, env)
    if sample.exit_code != 0:
        sys.stderr.write(sample.stdout.decode(errors="replace")[-2000:])
        sys.stderr.write(sample.stderr.decode(errors="replace")[-2000:])
        raise _fail(f"exit status {sample.exit_code}: {cmd.display()}")
    return sample


@functools.cache
def hyperfine_exe() -> str | None:
    return shutil.which("hyperfine")


@functools.cache
def hyperfine_has_input() -> bool:
    exe = hyperfine_exe()
    if exe is None:
        return False
    return "--input" in subprocess.run([exe, "--help"], capture_output=True, text=True,
                                       check=False).stdout


def engine_for(requested: str, cmds: Sequence[Command]) -> str:
    if requested == "loop" or hyperfine_exe() is None:
        if requested == "hyperfine":
            raise _fail("--engine hyperfine: hyperfine is not on PATH")
        return "loop"
    if any(c.idle_stdin for c in cmds):
        return "loop"
    stdins = {c.stdin for c in cmds if c.stdin is not None}
    if stdins and (len(stdins) > 1 or not hyperfine_has_input()):
        return "loop"  # hyperfine 1.15 (Debian 12) cannot feed stdin with -N
    return "hyperfine"


def _hyperfine_once(cmds: Sequence[Command], env: dict[str, str]) -> list[float]:
    exe = hyperfine_exe()
    assert exe is not None
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        argv = [exe, "-N", "--output=pipe", "--runs", "1", "--style", "none",
                "--export-json", report.name]
        stdins = [c.stdin for c in cmds if c.stdin is not None]
        if stdins:
            argv += ["--input", str(stdins[0])]
        argv += ["--", *(shlex.join(c.argv) for c in cmds)]
        _run(argv, "hyperfine", env=env, stdin=subprocess.DEVNULL)
        data = json.load(report)
    return [float(r["times"][0]) for r in data["results"]]


@dataclasses.dataclass
class Paired:
    """Interleaved samples of a command and its reference."""

    engine: str
    target_s: list[float] = dataclasses.field(default_factory=list)
    ref_s: list[float] = dataclasses.field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        return [t / r for t, r in zip(self.target_s, self.ref_s, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def ratio_iqr(self) -> tuple[float, float]:
        if len(self.ratios) < 2:
            return self.ratio, self.ratio
        q = statistics.quantiles(self.ratios, n=4)
        return q[0], q[2]

    def to_json(self) -> dict[str, object]:
        return {"engine": self.engine, "target_s": self.target_s, "ref_s": self.ref_s,
                "median_target_ms": ms(statistics.median(self.target_s)),
                "median_ref_ms": ms(statistics.median(self.ref_s)),
                "median_ratio": self.ratio, "ratio_iqr": list(self.ratio_iqr())}


def measure_pairs(target: Command, ref: Command, runs: int, warmup: int, engine: str,
                  env: dict[str, str],
                  prepare: Callable[[int], object] | None = None) -> Paired:
    """``warmup`` + ``runs`` interleaved pairs, alternating which command goes first.

    ``prepare(i)``, when given, runs untimed before pair ``i`` (warm-ups included): e.g. to
    rewrite the request a command reads, so that every run of an editing command changes
    something.
    """
    used = engine_for(engine, (target, ref))
    result = Paired(used)
    for i in range(warmup + max(1, runs)):
        if prepare is not None:
            prepare(i)
        order = (target, ref) if i % 2 == 0 else (ref, target)
        if used == "hyperfine":
            times = _hyperfine_once(order, env)
        else:
            samples = [spawn(c, env) for c in order]
            for cmd, s in zip(order, samples, strict=True):
                if s.exit_code != 0:
                    raise _fail(f"exit status {s.exit_code} while timing: {cmd.display()}")
            times = [s.seconds for s in samples]
        if i < warmup:
            continue
        t, r = (0, 1) if order[0] is target else (1, 0)
        result.target_s.append(times[t])
        result.ref_s.append(times[r])
    return result


@dataclasses.dataclass(frozen=True)
class PeakRss:
    kib: list[int]  # one value per run
    method: str
    masked: bool = False  # True: each value is only an upper bound (see peak_rss)

    def mb(self) -> float:
        return max(self.kib) * 1024 / 1e6

    def text(self) -> str:
        return f"{'<=' if self.masked else ''}{self.mb():.1f}"


def peak_rss(cmd: Command, env: dict[str, str], runs: int,
             gnu_time: Path = Path("/usr/bin/time")) -> PeakRss:
    """Peak RSS of ``runs`` separate runs: ``/usr/bin/time -f %M`` when present, else ``wait4``.

    ``wait4``'s ``ru_maxrss`` of a child started from this (big) Python process counts the
    parent's pages too: fork copies the page tables and exec records the old high-water mark.
    So is ``getrusage(RUSAGE_CHILDREN)``, a maximum over all children. A value at or below this
    process's own peak is therefore only an upper bound, and is flagged ``masked``. GNU time is
    a small C program, so the children it starts are not inflated.
    """
    values: list[int] = []
    if gnu_time.exists():
        with tempfile.NamedTemporaryFile(suffix=".txt") as out:
            wrapped = Command((str(gnu_time), "-f", "%M", "-o", out.name, *cmd.argv),
                              cmd.stdin, cmd.idle_stdin)
            for _ in range(runs):
                check_ok(wrapped, env)
                out.seek(0)
                values.append(int(out.read().split()[-1]))
        return PeakRss(values, "/usr/bin/time -f %M")
    for _ in range(runs):
        values.append(check_ok(cmd, env).maxrss_kib)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if max(values) <= own:
        return PeakRss(values, f"os.wait4 ru_maxrss, an upper bound: this script's own "
                       f"{own * 1024 / 1e6:.1f} MB masks it (install GNU time)", masked=True)
    return PeakRss(values, "os.wait4 ru_maxrss")


# --------------------------------------------------------------------------------------------
# Reporting


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A plain text table: the first ``left`` columns left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i < left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def verdict(value: float, goal: float | None) -> str:
    if goal is None:
        return "info"
    return "ok" if value <= goal else "MISS"


def write_export(path: Path | None, payload: dict[str, object]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"# raw samples written to {path}")


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """posix_spawn has no cwd argument in 3.11: the benchmark itself moves there."""
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)
