"""Markdown for CI step summaries (`$GITHUB_STEP_SUMMARY`, GitLab notes): the gate's verdicts and the
side-by-side table of `goodput compare`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from exporters.files import write_atomic
from metrics.compare import Row
from metrics.threshold_eval import Verdict, format_value


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
    """[baseline, candidate, change, interval, flag] as text."""
    kind = row.query.kind
    base = "-" if row.base is None else format_value(kind, row.base)
    cand = "-" if row.cand is None else format_value(kind, row.cand)
    delta, rel = row.delta, row.relative
    change = "-" if delta is None else _signed(kind, delta) + ("" if rel is None else f" ({rel * 100:+.1f}%)")
    ci = "-" if row.ci is None else f"[{_signed(kind, row.ci[0])}, {_signed(kind, row.ci[1])}]"
    return [base, cand, change, ci, row.flag or ("n.s." if row.ci is not None else row.note)]


def _signed(kind: str, value: float) -> str:
    if kind == "duration":
        return f"{value * 1e3:+.4g} ms"
    if kind == "fraction":
        return f"{value * 100:+.2f} pp"
    return f"{value:+.4g}"


def compare_markdown(rows: Sequence[Row], *, base: str, cand: str, confidence: float, seed: int) -> str:
    flagged = [r for r in rows if r.flag == "regression"]
    head = f"{len(flagged)} regression(s)" if flagged else "no significant regression"
    lines = [f"### goodput compare: {head}", "", f"Baseline `{base}` → candidate `{cand}`. Intervals: bootstrap over "
             f"requests (seed {seed}), {confidence:.0%} family-wise (Bonferroni over the rows); pp = percentage "
             "points; n.s. = the interval includes zero. No interval for min/max, under 10 requests, or a percentile "
             "with under 5 samples beyond it (p99 needs 500).", "",
             "| Scope | Metric | n base/cand | Baseline | Candidate | Change | Interval | |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        cells = change_cells(r)
        mark = {"regression": "❌ regression", "improvement": "✅ improvement"}.get(r.flag, cells[4])
        lines.append(f"| {_cell(r.scope)} | `{r.query.describe()}` | {r.base_n}/{r.cand_n} | "
                     + " | ".join(_cell(c) for c in cells[:4]) + f" | {mark} |")
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # CI paths like reports/gate.md need not exist yet
    write_atomic(path, text.encode())
