"""Markdown for CI step summaries (`$GITHUB_STEP_SUMMARY`, GitLab notes): the gate's verdicts and the
side-by-side table of `goodput compare`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metrics.gate import (
    DEFAULT_MIN_CHANGE,
    DEFAULT_MIN_CHANGE_ABS_S,
    INCLUDES_ZERO,
    WITHIN_RUN_SPREAD,
    Row,
    Verdict,
    format_value,
)
from metrics.results import write_atomic


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def gate_markdown(verdicts: Sequence[Verdict], *, run: str, baseline: str | None = None) -> str:
    failed = sum(1 for v in verdicts if not v.passed)
    head = "PASSED" if not failed else f"FAILED ({failed} of {len(verdicts)} thresholds)"
    lines = [f"### goodput gate: {head}", "", f"Run: `{run}`" + (f"  Baseline: `{baseline}`" if baseline else ""), "",
             "| | Threshold | Measured | Limit | Note |", "| --- | --- | ---: | ---: | --- |"]
    for v in verdicts:
        kind = v.threshold.query.kind
        measured = "no data" if v.value is None else format_value(kind, v.value)
        limit = "-" if v.limit is None else format_value(kind, v.limit)
        if v.threshold.needs_baseline and v.baseline is not None:
            limit += f" (baseline {format_value(kind, v.baseline)})"
        mark = "✅" if v.passed else "❌"
        lines.append(f"| {mark} | `{_cell(v.threshold.text)}` | {measured} | {_cell(limit)} | {_cell(v.note)} |")
    return "\n".join(lines) + "\n"


def change_cells(row: Row) -> list[str]:
    """[baseline, candidate, change, interval, verdict] as text. The verdict is the flag, or why a row
    with an interval is not flagged (n.s. = the interval includes zero), or why it has no interval."""
    kind = row.query.kind
    base = "-" if row.base is None else format_value(kind, row.base)
    cand = "-" if row.cand is None else format_value(kind, row.cand)
    delta, rel = row.delta, row.relative
    change = "-" if delta is None else _signed(kind, delta) + ("" if rel is None else f" ({rel * 100:+.1f}%)")
    ci = "-" if row.ci is None else f"[{_signed(kind, row.ci[0])}, {_signed(kind, row.ci[1])}]"
    verdict = row.flag or row.why or (INCLUDES_ZERO if row.ci is not None else row.note)
    if row.why == WITHIN_RUN_SPREAD and row.spread is not None:
        verdict += f" (±{_unsigned(kind, row.spread)})"
    return [base, cand, change, ci, verdict]


def _signed(kind: str, value: float) -> str:
    if kind == "duration":
        return f"{value * 1e3:+.4g} ms"
    if kind == "fraction":
        return f"{value * 100:+.2f} pp"
    return f"{value:+.4g}"


def _unsigned(kind: str, value: float) -> str:
    return _signed(kind, value).lstrip("+")


def compare_rule_text(*, baselines: int, confidence: float, seed: int, min_change: float, min_change_abs_s: float) -> str:
    """The rule behind the flags, in one paragraph (the Markdown header; the console prints its gist)."""
    if baselines >= 2:
        spread = (f"{baselines} baseline runs: a flag also needs the change to leave the {confidence:.0%} "
                  "prediction interval of one more baseline run (their run-to-run spread; "
                  "'within run-to-run spread' otherwise).")
    else:
        spread = ("One baseline run: run-to-run variance is not measured, so a flag may be a whole run shifted "
                  "by a busy machine; pass 3-5 repeated baseline runs to account for it.")
    return (f"Intervals: bootstrap over requests (seed {seed}), {confidence:.0%} family-wise (Bonferroni over the "
            f"rows); pp = percentage points; n.s. = the interval includes zero. {spread} Changes under "
            f"{min_change:.0%} of the baseline (or {min_change_abs_s * 1e3:g} ms for durations) are not flagged "
            "('below min change'). No interval for min/max, under 10 requests, or a percentile with under 5 "
            "samples beyond it (p99 needs 500).")


def compare_markdown(rows: Sequence[Row], *, base: str | Sequence[str], cand: str, confidence: float, seed: int,
                     min_change: float = DEFAULT_MIN_CHANGE, min_change_abs_s: float = DEFAULT_MIN_CHANGE_ABS_S) -> str:
    bases = [base] if isinstance(base, str) else list(base)
    flagged = [r for r in rows if r.flag == "regression"]
    head = f"{len(flagged)} regression(s)" if flagged else "no significant regression"
    names = ", ".join(f"`{b}`" for b in bases)
    rule = compare_rule_text(baselines=len(bases), confidence=confidence, seed=seed, min_change=min_change,
                             min_change_abs_s=min_change_abs_s)
    lines = [f"### goodput compare: {head}", "",
             f"Baseline {names}" + (f" ({len(bases)} runs, their mean)" if len(bases) > 1 else "")
             + f" → candidate `{cand}`. {rule}", "",
             "| Scope | Metric | n base/cand | Baseline | Candidate | Change | Interval | |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        cells = change_cells(r)
        mark = {"regression": "❌ regression", "improvement": "✅ improvement"}.get(r.flag, cells[4])
        lines.append(f"| {_cell(r.scope)} | `{r.query.describe()}` | {r.base_n}/{r.cand_n} | "
                     + " | ".join(_cell(c) for c in cells[:4]) + f" | {_cell(mark)} |")
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # CI paths like reports/gate.md need not exist yet
    write_atomic(path, text.encode())
