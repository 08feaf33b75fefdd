"""The large edit-matching corpus (docs/internals/matching.md#corpus): generate it, run it, print
the metrics.

Generates ~5k seeded cases (every enabled perturbation family x ``--per-family``, plus the
peer-regression cases), runs each through ``apply_edit`` in-process (the JSON contract only),
and prints the metrics table with its gates, the per-family and tier breakdowns, latency by
file size, and the failing cases. Optionally runs baselines through the same corpus: an
exact-unique ``str.replace`` and a first-match one (Aider/Codex-like), whose wrong-location
counts on duplicated spans are what the matcher's extra refusals buy.

Reports, never gates: exits 0 whatever the numbers (2 only when it cannot run).

    .venv/bin/python benchmarks/edit_corpus.py                      # ~5k cases, seed 0
    .venv/bin/python benchmarks/edit_corpus.py --seed 7 --families P2,P3,P15
    .venv/bin/python benchmarks/edit_corpus.py --families all       # with P8/P10/P13/P24/P25
    .venv/bin/python benchmarks/edit_corpus.py --jsonl /tmp/corpus.jsonl --baselines
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.edit_corpus.generate import (  # noqa: E402
    ALL_FAMILIES,
    DEFAULT_FAMILIES,
    LATER_FAMILIES,
    Corpus,
    dumps_jsonl,
    generate_corpus,
)
from tests.edit_corpus.harness import (  # noqa: E402
    Applier,
    Metrics,
    Outcome,
    compute_metrics,
    format_failures,
    format_families,
    format_metrics,
    reference_applier,
    run_cases,
    zbtools_applier,
)


def parse_families(text: str) -> tuple[str, ...]:
    if text == "default":
        return DEFAULT_FAMILIES
    if text == "all":
        return ALL_FAMILIES
    if text == "later":
        return LATER_FAMILIES
    families = tuple(f.strip().upper() for f in text.split(",") if f.strip())
    unknown = [f for f in families if f not in ALL_FAMILIES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown families: {', '.join(unknown)}")
    return families


def describe_corpus(corpus: Corpus) -> str:
    lines = [f"corpus: seed {corpus.seed}, {len(corpus.cases)} cases, families "
             f"{','.join(corpus.families)}"]
    by_family = corpus.by_family()
    rows = []
    for family, cases in by_family.items():
        labels = Counter(c.label for c in cases)
        rows.append(f"  {family:<5} {len(cases):>5}  " + " ".join(
            f"{k}={labels[k]}" for k in ("must_apply", "must_refuse", "either", "noop")
            if labels[k]))
    lines += rows
    if corpus.shortfall:
        lines.append("shortfall (cases the generator could not make): " +
                     ", ".join(f"{k}: {v}" for k, v in corpus.shortfall.items()))
    dropped = sum(corpus.discarded.values())
    if dropped:
        top = sorted(corpus.discarded.items(), key=lambda kv: -kv[1])[:8]
        lines.append(f"discarded by the oracle: {dropped} (" +
                     "; ".join(f"{v}x {k}" for k, v in top) + ")")
    if corpus.skipped_sources:
        lines.append("stdlib sources skipped (hash changed or missing): " +
                     ", ".join(sorted(corpus.skipped_sources)))
    return "\n".join(lines)


def run(corpus: Corpus, applier: Applier, workdir: Path) -> tuple[list[Outcome], Metrics, float]:
    t0 = time.perf_counter()
    outcomes = run_cases(corpus.cases, applier, workdir)
    return outcomes, compute_metrics(outcomes), time.perf_counter() - t0


def failures_by_family(outcomes: list[Outcome]) -> str:
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for o in outcomes:
        if not o.passed:
            counts[o.case.family] += 1
            reasons[o.why.split(":")[0].split(" (")[0]] += 1
    if not counts:
        return "failing cases by family: none"
    return ("failing cases by family: " + ", ".join(f"{k}={v}" for k, v in sorted(
        counts.items(), key=lambda kv: -kv[1])) + "\nfailing cases by reason: " +
        ", ".join(f"{k}={v}" for k, v in reasons.most_common()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--families", type=parse_families, default=DEFAULT_FAMILIES,
                        help="comma list (P0,P2,...), or default | all | later "
                        "(default: the enabled families)")
    parser.add_argument("--per-family", type=int, default=240,
                        help="cases per family (default 240: ~5.3k cases with the defaults)")
    parser.add_argument("--no-peers", action="store_true", help="leave out the peer cases")
    parser.add_argument("--tool", default="apply_edit", help="zbtools tool to run")
    parser.add_argument("--baselines", action="store_true",
                        help="also run exact-unique and first-match str.replace baselines")
    parser.add_argument("--failures", type=int, default=60,
                        help="failing cases to list (default 60)")
    parser.add_argument("--jsonl", type=Path, help="write the cases as JSONL to this file")
    parser.add_argument("--export", type=Path,
                        help="write every outcome (id, family, label, kind, code, tier, "
                        "latency, passed, why) as JSON to this file")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    corpus = generate_corpus(args.seed, families=args.families, per_family=args.per_family,
                             peers=not args.no_peers)
    gen_s = time.perf_counter() - t0
    print(describe_corpus(corpus))
    print(f"generated in {gen_s:.1f} s")
    if args.jsonl:
        args.jsonl.write_text(dumps_jsonl(corpus.cases), encoding="utf-8")
        print(f"cases written to {args.jsonl}")

    with tempfile.TemporaryDirectory(prefix="zb-edit-corpus-") as tmp:
        workdir = Path(tmp)
        env = {"ZBTOOLS_STATE_DIR": str(workdir / "state"),
               "ZBTOOLS_CONFIG": os.devnull}
        for var in [v for v in os.environ if v.startswith("ZBTOOLS_")]:
            del os.environ[var]
        outcomes, metrics, run_s = run(corpus, zbtools_applier(args.tool, env=env), workdir)
        baselines: list[tuple[str, Metrics]] = []
        if args.baselines:
            for name, applier in (("exact-unique str.replace", reference_applier()),
                                  ("first-match str.replace", reference_applier(unique=False))):
                baselines.append((name, run(corpus, applier, workdir)[1]))

    print()
    print(f"== {args.tool}: {metrics.n} cases in {run_s:.1f} s")
    print(format_metrics(metrics))
    hard = metrics.check(Metrics.HARD_GATES)
    targets = metrics.check(Metrics.TARGETS)
    print("hard gates: " + ("pass" if not hard else "FAIL: " + "; ".join(hard)))
    print("targets: " + ("pass" if not targets else "missed: " + "; ".join(targets)))
    print()
    print(format_families(metrics))
    print()
    print(failures_by_family(outcomes))
    print(format_failures(outcomes, limit=args.failures))
    for name, m in baselines:
        print()
        print(f"== baseline: {name}")
        print(f"wrong_location_rate={m.wrong_location_rate:.4f} "
              f"({round(m.wrong_location_rate * m.n)} cases), "
              f"apply_success_rate={m.apply_success_rate or 0:.4f}, "
              f"refusal_recall={m.refusal_recall or 0:.4f}, "
              f"collateral_damage_rate={m.collateral_damage_rate:.4f}")
    if args.export:
        args.export.write_text(json.dumps([{
            "id": o.case.id, "family": o.case.family, "variant": o.case.variant,
            "label": o.case.label, "kind": o.kind, "code": o.code, "tier": o.matched_with,
            "latency_ms": round(o.latency_ms, 3), "lines": o.lines, "passed": o.passed,
            "why": o.why} for o in outcomes], indent=1), encoding="utf-8")
        print(f"outcomes written to {args.export}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
