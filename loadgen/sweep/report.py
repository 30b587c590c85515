"""What a sweep or capacity search shows: the console table of its points, sweep.csv, the one-line
capacity verdict, and the progress lines printed as points finish."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from exporters import render_table
from loadgen.sweep.rows import COLUMNS
from metrics.results import write_atomic


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _pair(row: dict[str, Any], name: str) -> str:
    p50, p99 = row.get(f"{name}_p50_s"), row.get(f"{name}_p99_s")
    return "-" if p50 is None else f"{_ms(p50)} / {_ms(p99)}"


def _num(value: Any, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _state(row: dict[str, Any]) -> str:
    flags = []
    if row.get("status") != "done":
        flags.append(str(row.get("status")).upper())
    elif row.get("complete") is False:
        flags.append("INCOMPLETE")
    if row.get("client_saturated"):
        flags.append("client saturated")
    if row.get("exit_code") not in (0, None) and row.get("status") == "done":
        flags.append(f"exit {row['exit_code']}")
    verdict = row.get("verdict")
    if verdict:
        flags.insert(0, str(verdict))
    return ", ".join(flags)


def points_table(rows: Sequence[dict[str, Any]]) -> str:
    """One line per point: load, throughput, latency p50 / p99 in ms, attainment, goodput, errors."""
    header = ["point", "offered", "achieved", "req/s", "out tok/s", "TTFT p50/p99", "ITL p50/p99",
              "TPOT p50/p99", "E2E p50/p99", "n", "SLO ok", "goodput", "errors", ""]
    table = [header]
    for r in rows:
        table.append([str(r["label"]), _num(r.get("offered_rps")), _num(r.get("achieved_rps")),
                      _num(r.get("requests_per_s")), _num(r.get("output_tokens_per_s"), "{:.1f}"),
                      _pair(r, "ttft"), _pair(r, "itl"), _pair(r, "tpot"), _pair(r, "e2e"),
                      "-" if r.get("measured") is None else str(r["measured"]), _pct(r.get("attainment")),
                      _num(r.get("goodput_rps")), _pct(r.get("error_rate")), _state(r)])
    return render_table(table) + "\n(rates in req/s, latencies in ms)"


def write_points_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """sweep.csv: one row per planned point (pending ones too, empty), latencies in seconds."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow(["" if r.get(c) is None else r.get(c) for c in COLUMNS])
    write_atomic(path, buf.getvalue().encode())


def progress(line: str, *, quiet: bool) -> None:
    """A line on stderr as each point starts or ends (stdout keeps the table and the verdicts)."""
    if not quiet:
        print(line, file=sys.stderr, flush=True)


def overall_progress(point: int, points: int, requests: int) -> str:
    """Where a sweep or search stands as a point starts: `point 3 of 8, 1,234 requests sent so far`
    (`points` is a sweep's plan, or a search's --max-points: at most that many)."""
    return f"point {point} of {points}, {_count(requests)} requests sent so far"


def point_line(row: dict[str, Any]) -> str:
    att = _pct(row.get("attainment"))
    return (f"{row['label']}: {row.get('measured') or 0} measured, SLO ok {att}, TTFT p99 {_ms(row.get('ttft_p99_s'))} ms,"
            f" {_num(row.get('requests_per_s'))} req/s" + (f"  [{_state(row)}]" if _state(row) else ""))


def _count(n: int) -> str:
    return f"{n:,}"


def capacity_line(doc: dict[str, Any]) -> str:
    """`capacity 6.3 req/s at 90 % attainment (95 % conf.; bracket 6.3–7.1 req/s; 7 points, 2,940 requests)`."""
    cap = doc["capacity"]
    target, conf = cap["target"] * 100, cap["confidence"] * 100
    spent = f"{cap['points']} points, {_count(cap['requests'])} requests"
    basis = f"{target:g} % attainment ({conf:g} % conf.; "
    rate, upper = cap.get("rate"), cap.get("upper")
    status = cap.get("status")
    if rate is None:
        why = {"below_min": "not even --min-rate passed", "interrupted": "interrupted before any rate passed"}.get(
            str(status), str(cap.get("reason") or "no rate passed"))
        low = f"; lowest rate not shown to pass {upper:g} req/s" if upper is not None else ""
        return f"capacity: no rate shown to meet {basis}{why}{low}; {spent})"
    if upper is not None:
        return f"capacity {rate:g} req/s at {basis}bracket {rate:g}–{upper:g} req/s; {spent})"
    limit = {"client_limited": "the client could not offer more",
             "at_least": f"nothing failed up to --max-rate {cap.get('max_rate') or rate:g} req/s",
             "max_points": "--max-points reached before a rate failed",
             "interrupted": "interrupted before a rate failed"}.get(str(status), "nothing above it was shown to fail")
    return f"capacity at least {rate:g} req/s at {basis}{limit}; {spent})"
