"""What a sweep or capacity search shows: the console table of its points, sweep.csv, the one-line
capacity verdict, and the progress lines printed as points finish."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from exporters import render_table
from loadgen.sweep.rows import COLUMNS
from metrics.results import CapacityView, PointRow, write_atomic


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _pair(row: PointRow, name: str) -> str:
    p50, p99 = row.percentile(name, "p50"), row.percentile(name, "p99")
    return "-" if p50 is None else f"{_ms(p50)} / {_ms(p99)}"


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _state(row: PointRow) -> str:
    flags = []
    if row.status != "done":
        flags.append(row.status.upper())
    elif row.complete is False:
        flags.append("INCOMPLETE")
    if row.client_saturated:
        flags.append("client saturated")
    if row.exit_code not in (0, None) and row.status == "done":
        flags.append(f"exit {row.exit_code}")
    if row.verdict:
        flags.insert(0, row.verdict)
    return ", ".join(flags)


def points_table(rows: Sequence[PointRow]) -> str:
    """One line per point: load, throughput, latency p50 / p99 in ms, attainment, goodput, errors."""
    header = ["point", "offered", "achieved", "req/s", "out tok/s", "TTFT p50/p99", "ITL p50/p99",
              "TPOT p50/p99", "E2E p50/p99", "n", "SLO ok", "goodput", "errors", ""]
    table = [header]
    for r in rows:
        table.append([r.label, _num(r.offered_rps), _num(r.achieved_rps), _num(r.requests_per_s),
                      _num(r.output_tokens_per_s, "{:.1f}"), _pair(r, "ttft"), _pair(r, "itl"), _pair(r, "tpot"),
                      _pair(r, "e2e"), "-" if r.measured is None else str(r.measured), _pct(r.attainment),
                      _num(r.goodput_rps), _pct(r.error_rate), _state(r)])
    return render_table(table) + "\n(rates in req/s, latencies in ms)"


def write_points_csv(path: Path, rows: Sequence[PointRow]) -> None:
    """sweep.csv: one row per planned point (pending ones too, empty), latencies in seconds."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow(["" if r.column(c) is None else r.column(c) for c in COLUMNS])
    write_atomic(path, buf.getvalue().encode())


def progress(line: str, *, quiet: bool) -> None:
    """A line on stderr as each point starts or ends (stdout keeps the table and the verdicts)."""
    if not quiet:
        print(line, file=sys.stderr, flush=True)


def overall_progress(point: int, points: int, requests: int) -> str:
    """Where a sweep or search stands as a point starts: `point 3 of 8, 1,234 requests sent so far`
    (`points` is a sweep's plan, or a search's --max-points: at most that many)."""
    return f"point {point} of {points}, {_count(requests)} requests sent so far"


def point_line(row: PointRow) -> str:
    att = _pct(row.attainment)
    return (f"{row.label}: {row.measured or 0} measured, SLO ok {att}, TTFT p99 {_ms(row.ttft_p99_s)} ms,"
            f" {_num(row.requests_per_s)} req/s" + (f"  [{_state(row)}]" if _state(row) else ""))


def _count(n: int) -> str:
    return f"{n:,}"


def capacity_line(doc: CapacityView) -> str:
    """`capacity 6.3 req/s at 90 % attainment (95 % conf.; bracket 6.3–7.1 req/s; 7 points, 2,940 requests)`."""
    cap = doc.capacity
    target, conf = cap.target * 100, cap.confidence * 100
    spent = f"{cap.points} points, {_count(cap.requests)} requests"
    basis = f"{target:g} % attainment ({conf:g} % conf.; "
    rate, upper = cap.rate, cap.upper
    status = cap.status
    if rate is None:
        why = {"below_min": "not even --min-rate passed", "interrupted": "interrupted before any rate passed"}.get(
            status, cap.reason or "no rate passed")
        low = f"; lowest rate not shown to pass {upper:g} req/s" if upper is not None else ""
        return f"capacity: no rate shown to meet {basis}{why}{low}; {spent})"
    if upper is not None:
        return f"capacity {rate:g} req/s at {basis}bracket {rate:g}–{upper:g} req/s; {spent})"
    limit = {"client_limited": "the client could not offer more",
             "at_least": f"nothing failed up to --max-rate {cap.max_rate or rate:g} req/s",
             "max_points": "--max-points reached before a rate failed",
             "interrupted": "interrupted before a rate failed"}.get(status, "nothing above it was shown to fail")
    return f"capacity at least {rate:g} req/s at {basis}{limit}; {spent})"
