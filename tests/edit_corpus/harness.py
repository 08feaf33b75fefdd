"""Running corpus cases against an edit tool and scoring them (docs/internals/matching.md#gates).

A case is run in a fresh workspace: its file bytes are written, the request goes to the tool
through its JSON contract only (``zbtools.entry.run`` in-process, via ``tests.conftest``), and
the bytes on disk afterwards are compared with the case's expectations:

* ``wrong_location`` - the file changed outside the truth span(s) but inside what the tool
  reported as its matched region (it edited another place, and said so);
* ``collateral`` - the file changed outside both the truth span(s) and the reported region
  (EOL flips, BOM loss, tab expansion, a refusal that wrote anyway, ...);
* ``bytes_ok`` - an apply produced exactly the expected bytes.

The applier is a parameter, so the harness can be checked against small reference appliers
whose behaviour is known (see ``tests/core/editing/test_edit_corpus.py``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.edit_corpus.generate import Case
from tests.edit_corpus.sources import BOM, FileModel

Envelope = dict[str, Any]
Applier = Callable[[Path, dict[str, Any]], tuple[int, Envelope]]

SIZE_BUCKETS = ((1_000, "<=1k lines"), (10_000, "<=10k lines"), (50_000, "<=50k lines"),
                (10**12, ">50k lines"))
MAX_LISTED_CANDIDATES = 5  # docs/internals/matching.md#messages: errors list at most 5 candidates
NEAR_MISS_FAMILIES = frozenset({"P10", "P13", "P14", "P19"})  # closest_hit is measured on these


def zbtools_applier(tool: str = "apply_edit", env: dict[str, str] | None = None) -> Applier:
    """Call zbtools in-process with the request as JSON on stdin."""
    from tests.conftest import run_inprocess

    def apply(ws: Path, request: dict[str, Any]) -> tuple[int, Envelope]:
        call = run_inprocess([tool], stdin=json.dumps(request), workspace=ws, env=env)
        try:
            envelope = call.json
        except (AssertionError, ValueError):
            envelope = {"ok": False, "error": {"code": "unparseable_output",
                                               "message": (call.out + call.err)[:300]}}
        return call.code, envelope

    return apply


# --------------------------------------------------------------------------------------------
# Reference appliers (baselines and harness self-checks)


def _refuse(code: str, **details: Any) -> tuple[int, Envelope]:
    return 1, {"ok": False, "error": {"code": code, "message": code, "details": details}}


def _occurrences(text: str, needle: str) -> list[int]:
    if not needle:
        return []
    out, pos = [], text.find(needle)
    while pos != -1:
        out.append(pos)
        pos = text.find(needle, pos + len(needle))
    return out


def _lines_of(text: str, pos: int, length: int) -> dict[str, int]:
    start = text.count("\n", 0, pos) + 1
    return {"start_line": start, "end_line": start + text.count("\n", pos, pos + max(0, length
                                                                                         - 1))}


def reference_applier(*, unique: bool = True, flatten_crlf: bool = False,
                      write_on_refusal: bool = False) -> Applier:
    """A tiny str.replace edit tool speaking apply_edit's JSON contract: the harness's own
    check, and the benchmark's baselines (exact-unique; first-match like Aider/Codex).

    ``unique=False`` edits the first occurrence (Aider/Codex-like first match);
    ``flatten_crlf`` rewrites the file with LF endings; ``write_on_refusal`` empties the file
    when it refuses (cline #9555)."""

    def apply(ws: Path, request: dict[str, Any]) -> tuple[int, Envelope]:
        path = ws / request["path"]
        raw = path.read_bytes()
        bom = BOM if raw.startswith(BOM) else b""
        text = raw[len(bom):].decode("utf-8", "surrogateescape")
        if flatten_crlf:
            text = text.replace("\r\n", "\n")
        code, envelope, out = _reference(text, request, unique)
        if out is not None:
            path.write_bytes(bom + out.encode("utf-8", "surrogateescape"))
        elif write_on_refusal and code == 1:
            path.write_bytes(b"")
        return code, envelope

    return apply


def _reference(text: str, request: dict[str, Any], unique: bool
               ) -> tuple[int, Envelope, str | None]:
    patches = request.get("patches") or [request]
    edits: list[tuple[int, int, str, dict[str, int]]] = []
    for patch in patches:
        old, new = patch["old_text"], patch["new_text"]
        if old == new:
            code, env = _refuse("no_change")
            return code, env, None
        occ = _occurrences(text, old)
        if request.get("replace_all"):
            count = request.get("expected_count")
            if not occ or (count is not None and count != len(occ)):
                code, env = _refuse("no_match")
                return code, env, None
            edits += [(p, p + len(old), new, _lines_of(text, p, len(old))) for p in occ]
            continue
        if not occ:
            if len(patches) == 1 and new not in old and len(_occurrences(text, new)) == 1:
                return 0, {"ok": True, "result": {"changed": False}}, None
            code, env = _refuse("no_match")
            return code, env, None
        if len(occ) > 1 and unique:
            code, env = _refuse("ambiguous_match",
                                candidates=[_lines_of(text, p, len(old)) for p in occ])
            return code, env, None
        edits.append((occ[0], occ[0] + len(old), new, _lines_of(text, occ[0], len(old))))
    edits.sort()
    for (_, b, _, _), (c, _, _, _) in itertools.pairwise(edits):
        if c < b:
            code, env = _refuse("overlapping_edits")
            return code, env, None
    for a, b, new, _ in reversed(edits):
        text = text[:a] + new + text[b:]
    result = {"changed": True, "matched_with": "exact", "edits": [e[3] for e in edits],
              **edits[0][3]}
    return 0, {"ok": True, "result": result}, text


# --------------------------------------------------------------------------------------------
# One case


@dataclass
class Outcome:
    case: Case
    kind: str  # applied | noop | refused | error
    exit_code: int
    code: str | None  # error code (refused / error)
    message: str
    matched_with: str | None
    latency_ms: float
    bytes_ok: bool  # the file holds exactly what a correct tool produces for this outcome
    unchanged: bool
    wrong_location: bool
    collateral: bool
    code_ok: bool | None  # refusals: the code is one the case accepts
    truth_listed: bool | None  # ambiguous refusals: the truth span is among the candidates
    reported: list[tuple[int, int]]
    stray_files: list[str]
    passed: bool
    why: str
    patch_codes: list[str] = field(default_factory=list)
    lines: int = 0  # lines in the case's file (latency buckets)
    closest_hit: bool | None = None  # near-miss no_match: the closest candidate is the truth

    def summary(self) -> str:
        c = self.case
        extra = f" code={self.code}" if self.code else ""
        extra += f" tier={self.matched_with}" if self.matched_with else ""
        return (f"{c.id} [{c.family}/{c.variant}] label={c.label} -> {self.kind}{extra}: "
                f"{self.why}")


def _line_regions(fm: FileModel, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges of whole lines ``s..e`` (``e < s``: the empty range before line ``s``)."""
    n = len(fm.lines)
    out = []
    for start, end in spans:
        s = min(max(start, 1), n + 1)
        e = min(max(end, s - 1), n)
        out.append((fm.byte_starts[s - 1], fm.byte_starts[e]))
    return _merge(out)


def _merge(regions: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(regions):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def changed_only_inside(before: bytes, after: bytes, regions: Sequence[tuple[int, int]]) -> bool:
    """``after`` = ``before`` with (possibly) each region replaced, nothing else touched."""
    if before == after:
        return True
    if not regions:
        return False
    head = before[:regions[0][0]]
    tail = before[regions[-1][1]:]
    if not after.startswith(head) or not after.endswith(tail):
        return False
    pos = len(head)
    limit = len(after) - len(tail)
    for (_, b), (c, _) in itertools.pairwise(regions):
        gap = before[b:c]
        found = after.find(gap, pos, limit)
        if found == -1:
            return False
        pos = found + len(gap)
    return pos <= limit


def _reported(result: dict[str, Any]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    edits = result.get("edits")
    if isinstance(edits, list):
        for e in edits:
            if isinstance(e, dict) and isinstance(e.get("start_line"), int):
                end = e.get("end_line")
                spans.append((e["start_line"], end if isinstance(end, int) else e["start_line"]))
    if not spans and isinstance(result.get("start_line"), int):
        end = result.get("end_line")
        spans.append((result["start_line"], end if isinstance(end, int) else
                      result["start_line"]))
    return spans


def _candidates(details: dict[str, Any]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    sources: list[Any] = [details]
    patches = details.get("patches")
    if isinstance(patches, list):
        sources += [p for p in patches if isinstance(p, dict)]
        sources += [p.get("error") for p in patches if isinstance(p, dict)
                    and isinstance(p.get("error"), dict)]
    for src in sources:
        for c in src.get("candidates") or []:
            if isinstance(c, dict) and isinstance(c.get("start_line"), int):
                end = c.get("end_line")
                out.append((c["start_line"], end if isinstance(end, int) else c["start_line"]))
    return out


def _patch_codes(details: dict[str, Any]) -> list[str]:
    out = []
    for p in details.get("patches") or []:
        if not isinstance(p, dict):
            continue
        for key in ("code", "error_code", "status"):
            if isinstance(p.get(key), str):
                out.append(p[key])
        err = p.get("error")
        if isinstance(err, dict) and isinstance(err.get("code"), str):
            out.append(err["code"])
        elif isinstance(err, str):
            out.append(err)
    return out


def run_case(case: Case, applier: Applier, workdir: Path) -> Outcome:
    ws = workdir / "ws"
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    path = ws / case.source.name
    before = case.file_bytes
    path.write_bytes(before)
    t0 = time.perf_counter()
    exit_code, envelope = applier(ws, case.request)
    latency = (time.perf_counter() - t0) * 1000
    after = path.read_bytes() if path.is_file() else b""
    stray = sorted(set(os.listdir(ws)) - {case.source.name})
    fm = FileModel.parse(before)

    ok = envelope.get("ok") is True
    result = envelope.get("result") if isinstance(envelope.get("result"), dict) else {}
    error = envelope.get("error") if isinstance(envelope.get("error"), dict) else {}
    assert isinstance(result, dict) and isinstance(error, dict)
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    assert isinstance(details, dict)
    code = error.get("code") if isinstance(error.get("code"), str) else None
    if exit_code == 0 and ok:
        kind = "applied" if (result.get("changed") is not False or after != before) else "noop"
    elif exit_code == 1 and not ok:
        kind = "refused"
    else:
        kind = "error"
    unchanged = after == before
    reported = _reported(result) if kind in ("applied", "noop") else []

    truth = [(t.start_line, t.end_line) for t in case.truth if t is not None]
    truth_regions = _line_regions(fm, truth)
    claimed = _line_regions(fm, truth + reported)
    collateral = not changed_only_inside(before, after, claimed) or bool(stray)
    wrong_location = (not unchanged) and not collateral and \
        not changed_only_inside(before, after, truth_regions)

    expected = case.expected_bytes
    if kind == "applied":
        bytes_ok = after == expected
    else:
        bytes_ok = unchanged

    code_ok: bool | None = None
    truth_listed: bool | None = None
    patch_codes = _patch_codes(details)
    if kind == "refused":
        accepted = case.refuse_codes
        code_ok = not accepted or code in accepted or any(c in accepted for c in patch_codes)
        if code == "ambiguous_match" or "ambiguous_match" in patch_codes:
            cands = _candidates(details)
            truth_listed = any(
                cs == t.start_line and ce >= t.start_line - 1 and cs <= t.end_line
                for t in case.truth if t is not None for cs, ce in cands)

    closest_hit: bool | None = None
    truths = [t for t in case.truth if t is not None]
    if kind == "refused" and code == "no_match" and case.family in NEAR_MISS_FAMILIES and truths:
        closest = details.get("closest")
        closest_hit = False
        if isinstance(closest, dict) and isinstance(closest.get("start_line"), int):
            c_start: int = closest["start_line"]
            c_end = closest.get("end_line")
            c_end = c_end if isinstance(c_end, int) else c_start
            closest_hit = any(c_start <= t.end_line and c_end >= t.start_line for t in truths)
    passed, why = _judge(case, kind, code, bytes_ok, unchanged, wrong_location, collateral,
                         after, expected)
    message = str(error.get("message", ""))[:200] if error else ""
    return Outcome(case, kind, exit_code, code, message,
                   result.get("matched_with") if isinstance(result.get("matched_with"), str)
                   else None, latency, bytes_ok, unchanged, wrong_location, collateral, code_ok,
                   truth_listed, reported, stray, passed, why, patch_codes, len(fm.lines),
                   closest_hit)


def _first_difference(a: bytes, b: bytes) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a),
                                                                                    len(b)))
    line = a[:n].count(b"\n") + 1
    return f"first difference at byte {n} (line {line}): got {a[n:n + 40]!r}, " \
           f"want {b[n:n + 40]!r}"


def _judge(case: Case, kind: str, code: str | None, bytes_ok: bool, unchanged: bool,
           wrong_location: bool, collateral: bool, after: bytes, expected: bytes
           ) -> tuple[bool, str]:
    if collateral:
        return False, "COLLATERAL: bytes changed outside the truth and the reported region"
    if wrong_location:
        return False, "WRONG LOCATION: the edit landed outside the truth span"
    if kind == "error":
        return False, f"tool error ({code})"
    label = case.label
    if label == "must_apply":
        if kind == "applied":
            return (True, "applied") if bytes_ok else \
                (False, "applied, wrong bytes: " + _first_difference(after, expected))
        return False, f"false refusal ({code})" if kind == "refused" else "no-op instead of apply"
    if label == "must_refuse":
        if kind == "refused":
            return (True, "refused") if unchanged else (False, "refused but wrote the file")
        return False, "MISSED REFUSAL: " + ("applied" if kind == "applied" else "no-op success")
    if label == "either":
        if kind == "refused":
            return (True, "refused") if unchanged else (False, "refused but wrote the file")
        if kind == "applied":
            return (True, "applied") if bytes_ok else \
                (False, "applied, wrong bytes: " + _first_difference(after, expected))
        return False, "no-op on an either case"
    # noop
    if not unchanged:
        return False, ("RE-APPLIED: an already-applied edit changed the file again"
                       if case.noop_kind == "already_applied" else "the file changed")
    if case.noop_kind == "identical":
        return (kind == "refused" and code == "no_change"), f"{kind} ({code})"
    if kind == "refused":  # the file as it was, with the refusal the oracle allows
        return code in case.refuse_codes, f"{kind} ({code})"
    return kind == "noop", f"{kind} ({code})" if code else kind


def run_cases(cases: Sequence[Case], applier: Applier, workdir: Path) -> list[Outcome]:
    return [run_case(case, applier, workdir) for case in cases]


# --------------------------------------------------------------------------------------------
# Metrics


def _rate(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


@dataclass
class Metrics:
    n: int
    wrong_location_rate: float
    collateral_damage_rate: float
    apply_success_rate: float | None
    false_refusal_rate: float | None
    refusal_precision: float | None
    refusal_recall: float | None
    refusal_code_accuracy: float | None
    candidate_recall: float | None
    closest_hit: float | None
    noop_correctness: float | None
    atomicity: float | None
    latency_p50_ms: float
    latency_p95_ms: float
    latency_max_ms: float
    latency_p95_small_ms: float  # files of at most 10k lines
    latency_by_size: dict[str, tuple[int, float, float]]  # bucket -> (n, p50, p95)
    tiers: dict[str, int]
    counts: dict[str, int]
    per_family: dict[str, dict[str, Any]]

    HARD_GATES = (("wrong_location_rate", "==", 0.0), ("collateral_damage_rate", "==", 0.0),
                  ("refusal_recall", "==", 1.0), ("atomicity", "==", 1.0))
    TARGETS = (("apply_success_rate", ">=", 0.97), ("refusal_precision", ">=", 0.97),
               ("false_refusal_rate", "<=", 0.03), ("refusal_code_accuracy", ">=", 0.95),
               ("candidate_recall", "==", 1.0), ("noop_correctness", "==", 1.0),
               ("latency_p95_small_ms", "<=", 50.0), ("latency_max_ms", "<=", 1000.0))

    def check(self, gates: Sequence[tuple[str, str, float]]) -> list[str]:
        """Names and values of the gates that fail (a metric with no cases passes)."""
        failed = []
        for name, op, bound in gates:
            value = getattr(self, name)
            if value is None:
                continue
            ok = {"==": abs(value - bound) < 1e-12, ">=": value >= bound - 1e-12,
                  "<=": value <= bound + 1e-12}[op]
            if not ok:
                failed.append(f"{name} = {value:.4f} (gate {op} {bound})")
        return failed


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def compute_metrics(outcomes: Sequence[Outcome]) -> Metrics:
    n = len(outcomes)
    must_apply = [o for o in outcomes if o.case.label == "must_apply"]
    must_refuse = [o for o in outcomes if o.case.label == "must_refuse"]
    refusals = [o for o in outcomes if o.kind == "refused" and o.case.label != "noop"]
    coded = [o for o in refusals if o.case.label in ("must_refuse", "either")
             and o.case.refuse_codes]
    ambiguous = [o for o in outcomes if o.truth_listed is not None
                 and o.case.oracle.get("truth_in_candidates")
                 and len(o.case.oracle.get("candidates", [])) <= MAX_LISTED_CANDIDATES]
    noops = [o for o in outcomes if o.case.label == "noop"]
    multi = [o for o in outcomes if o.case.kind == "patches"
             and (o.kind == "refused" or o.case.label == "must_refuse")]
    latencies = [o.latency_ms for o in outcomes]
    by_size: dict[str, tuple[int, float, float]] = {}
    for _limit, name in SIZE_BUCKETS:
        vals = [o.latency_ms for o in outcomes if _bucket(o.lines) == name]
        if vals:
            by_size[name] = (len(vals), _percentile(vals, 50), _percentile(vals, 95))
    tiers: dict[str, int] = {}
    for o in outcomes:
        if o.kind == "applied":
            key = o.matched_with or "?"
            tiers[key] = tiers.get(key, 0) + 1
    counts = {k: sum(1 for o in outcomes if o.case.label == k)
              for k in ("must_apply", "must_refuse", "either", "noop")}
    counts.update({f"outcome:{k}": sum(1 for o in outcomes if o.kind == k)
                   for k in ("applied", "noop", "refused", "error")})
    counts["passed"] = sum(1 for o in outcomes if o.passed)
    per_family: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        fam = per_family.setdefault(o.case.family, {
            "n": 0, "passed": 0, "must_apply": 0, "applied_ok": 0, "must_refuse": 0,
            "refused_ok": 0, "either": 0, "noop": 0, "wrong_location": 0, "collateral": 0})
        fam["n"] += 1
        fam["passed"] += o.passed
        fam[o.case.label] += 1
        fam["applied_ok"] += o.case.label == "must_apply" and o.kind == "applied" and o.bytes_ok
        fam["refused_ok"] += o.case.label == "must_refuse" and o.kind == "refused" and o.unchanged
        fam["wrong_location"] += o.wrong_location
        fam["collateral"] += o.collateral
    return Metrics(
        n=n,
        wrong_location_rate=(sum(o.wrong_location for o in outcomes) / n) if n else 0.0,
        collateral_damage_rate=(sum(o.collateral for o in outcomes) / n) if n else 0.0,
        apply_success_rate=_rate(sum(o.kind == "applied" and o.bytes_ok for o in must_apply),
                                 len(must_apply)),
        false_refusal_rate=_rate(sum(o.kind == "refused" for o in must_apply), len(must_apply)),
        refusal_precision=_rate(sum(o.case.label in ("must_refuse", "either") for o in refusals),
                                len(refusals)),
        refusal_recall=_rate(sum(o.kind == "refused" and o.unchanged for o in must_refuse),
                             len(must_refuse)),
        refusal_code_accuracy=_rate(sum(bool(o.code_ok) for o in coded), len(coded)),
        candidate_recall=_rate(sum(bool(o.truth_listed) for o in ambiguous), len(ambiguous)),
        closest_hit=_rate(sum(bool(o.closest_hit) for o in outcomes),
                          sum(o.closest_hit is not None for o in outcomes)),
        noop_correctness=_rate(sum(o.passed for o in noops), len(noops)),
        atomicity=_rate(sum(o.kind == "refused" and o.unchanged for o in multi), len(multi)),
        latency_p50_ms=_percentile(latencies, 50),
        latency_p95_ms=_percentile(latencies, 95),
        latency_max_ms=max(latencies, default=0.0),
        latency_p95_small_ms=_percentile([o.latency_ms for o in outcomes if o.lines <= 10_000],
                                         95),
        latency_by_size=by_size,
        tiers=dict(sorted(tiers.items(), key=lambda kv: -kv[1])),
        counts=counts,
        per_family=dict(sorted(per_family.items(), key=lambda kv: _family_order(kv[0]))),
    )


def _bucket(lines: int) -> str:
    return next(name for limit, name in SIZE_BUCKETS if lines <= limit)


def _family_order(family: str) -> tuple[int, str]:
    return (int(family[1:]), family) if family[1:].isdigit() else (10**6, family)


# --------------------------------------------------------------------------------------------
# Reports


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def format_metrics(m: Metrics) -> str:
    rows = [
        ("cases", str(m.n), ""),
        ("wrong_location_rate", _fmt(m.wrong_location_rate), "== 0 (hard)"),
        ("collateral_damage_rate", _fmt(m.collateral_damage_rate), "== 0 (hard)"),
        ("refusal_recall", _fmt(m.refusal_recall), "== 1.0 (hard)"),
        ("atomicity", _fmt(m.atomicity), "== 1.0 (hard)"),
        ("apply_success_rate", _fmt(m.apply_success_rate), ">= 0.97"),
        ("false_refusal_rate", _fmt(m.false_refusal_rate), "<= 0.03"),
        ("refusal_precision", _fmt(m.refusal_precision), ">= 0.97"),
        ("refusal_code_accuracy", _fmt(m.refusal_code_accuracy), ">= 0.95"),
        ("candidate_recall", _fmt(m.candidate_recall), "== 1.0"),
        ("closest_hit", _fmt(m.closest_hit), "report; target >= 0.9"),
        ("noop_correctness", _fmt(m.noop_correctness), "== 1.0"),
        ("latency p50 / p95 ms", f"{m.latency_p50_ms:.1f} / {m.latency_p95_ms:.1f}", ""),
        ("latency_p95_small_ms", f"{m.latency_p95_small_ms:.1f}", "<= 50 (files <= 10k lines)"),
        ("latency_max_ms", f"{m.latency_max_ms:.1f}", "<= 1000 (any case)"),
    ]
    failed = {f.split(" ")[0] for f in m.check(Metrics.HARD_GATES + Metrics.TARGETS)}
    width = max(len(r[0]) for r in rows)
    out = [f"{'metric':<{width}}  {'value':>22}  gate"]
    for name, value, gate in rows:
        flag = "  FAIL" if name in failed else ""
        out.append(f"{name:<{width}}  {value:>22}  {gate}{flag}")
    out.append("")
    out.append("labels: " + ", ".join(f"{k}={v}" for k, v in m.counts.items()
                                      if not k.startswith("outcome") and k != "passed"))
    out.append("outcomes: " + ", ".join(f"{k.split(':')[1]}={v}" for k, v in m.counts.items()
                                        if k.startswith("outcome")) +
               f", passed={m.counts['passed']}/{m.n}")
    out.append("latency by file size: " + ", ".join(
        f"{k}: n={n} p50={p50:.1f} p95={p95:.1f}" for k, (n, p50, p95) in
        m.latency_by_size.items()))
    total = sum(m.tiers.values())
    out.append("tier histogram (applies): " + (", ".join(
        f"{k}={v} ({v / total:.0%})" for k, v in m.tiers.items()) if total else "none"))
    return "\n".join(out)


def format_families(m: Metrics) -> str:
    cols = ("n", "passed", "must_apply", "applied_ok", "must_refuse", "refused_ok", "either",
            "noop", "wrong_location", "collateral")
    head = f"{'family':<8}" + "".join(f"{c:>15}" for c in cols)
    out = [head]
    for fam, row in m.per_family.items():
        out.append(f"{fam:<8}" + "".join(f"{row[c]:>15}" for c in cols))
    return "\n".join(out)


def format_failures(outcomes: Sequence[Outcome], limit: int = 40) -> str:
    failing = [o for o in outcomes if not o.passed]
    if not failing:
        return "no failing cases"
    order = {"COLLATERAL": 0, "WRONG LOCATION": 1, "MISSED REFUSAL": 2, "RE-APPLIED": 3}
    failing.sort(key=lambda o: (min((v for k, v in order.items() if o.why.startswith(k)),
                                    default=9), o.case.family, o.case.id))
    lines = [f"{len(failing)} failing case(s):"]
    lines += ["  " + o.summary()[:300] for o in failing[:limit]]
    if len(failing) > limit:
        lines.append(f"  ... and {len(failing) - limit} more")
    return "\n".join(lines)
