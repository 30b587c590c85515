"""`goodput capacity`: the highest open-loop request rate whose SLO attainment is shown to meet a target,
found by the search of `metrics.capacity_search` with each probe an ordinary run in `DIR/points/`.

Without `--max-rate`, a closed-loop point at `--concurrency` (default 256) first measures the throughput
ceiling T (every request it completed, `loadgen.sweep.ceiling`): the search then starts at 0.75·T. T is a
hint, not a limit: while rates pass the search keeps doubling until one fails. That point is not SLO
evidence (a closed loop hides queueing), but it counts towards --max-points.

A probe the client could not keep up with is judged against its load (`metrics.capacity_search.saturation`):
dispatch lag against the gap between arrivals, and the rate sent against the rate planned; with
`--lag-threshold` given, against that absolute lag instead.

capacity.json is rewritten after every probe (`complete: false`, status `interrupted` until the search
ends), so Ctrl-C or a kill keeps everything measured so far; capacity.html (unless --no-html) is written
once the search ends.

Exit codes: 130 interrupted; 1 a probe could not run (nothing sent: server gone), ended with a runtime
error (no request succeeded, or its results could not be written), the ceiling completed nothing, or
capacity.html could not be written; 99 a `capacity:*` threshold failed; 0 otherwise, including a search in which no
rate passed (the result says so; gate on `capacity:rate` to fail a pipeline on it).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from loadgen.run import EmbeddedServerError, GatePlan, RunDir
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.sweep.capacity_cost import cost_console_lines, with_cost
from loadgen.sweep.capacity_doc import capacity_document
from loadgen.sweep.ceiling import completed_rate
from loadgen.sweep.directory import discard
from loadgen.sweep.execute import PointOutcome, run_point
from loadgen.sweep.gate import judge_capacity
from loadgen.sweep.html_pages import write_page_at_end
from loadgen.sweep.json_read import section, whole
from loadgen.sweep.points import (
    DEFAULT_WARMUP_FRACTION,
    PointLength,
    PointPlan,
    plan_point,
    point_spec,
)
from loadgen.sweep.report import capacity_line, overall_progress, point_line, points_table, progress
from loadgen.sweep.rows import point_row
from loadgen.sweep.target import SharedServer, shared_server
from metrics.capacity_search import (
    Observation,
    Probe,
    SearchSettings,
    Stop,
    client_hint,
    client_limited,
    conclude,
    from_ceiling,
    next_step,
    pool,
    requests_per_point,
    round_rate,
)
from metrics.model import CostOptions
from metrics.results import (
    CAPACITY_FILE,
    POINTS_DIR,
    CapacityView,
    Ceiling,
    Json,
    PointRow,
    point_path,
    replace,
    write_capacity,
)
from metrics.results import CAPACITY_REPORT_FILE as CAPACITY_PAGE

DEFAULT_POINT_DURATION_S = 60.0
EXIT_RUNTIME_ERROR = 1
EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class CapacityJob:
    spec: RunSpec  # what every probe starts from
    secrets: Secrets
    settings: SearchSettings
    length: PointLength
    ceiling_concurrency: int | None  # None: no ceiling run (--max-rate bounds the search)
    gate: GatePlan | None
    quiet: bool
    absolute_lag_s: float | None = None  # --lag-threshold given: judge the client by it, not by the load
    costs: CostOptions | None = None  # --gpu-hour-cost: the cost at the capacity (loadgen.sweep.capacity_cost)


def with_floor(settings: SearchSettings, length: PointLength) -> SearchSettings:
    """The search never probes a rate whose point cannot measure enough requests for a verdict: with a
    point duration D and warm-up w, that is `requests_per_point` / (D − w) (ValueError: above --max-rate)."""
    if length.duration_s is None:
        return settings  # a count-bound point measures its count at any rate
    warmup = length.warmup_s if length.warmup_s is not None else DEFAULT_WARMUP_FRACTION * length.duration_s
    window = length.duration_s - warmup
    if window <= 0:
        return settings
    return dataclasses.replace(settings, floor_rate=round_rate(requests_per_point(settings) / window))


@dataclass(slots=True)
class _Search:
    job: CapacityJob
    settings: SearchSettings
    server: SharedServer | None = None
    observations: list[Observation] | None = None
    rows: list[PointRow] | None = None
    requests: int = 0
    ceiling: Ceiling | None = None
    stop: Stop | None = None
    error: str | None = None
    interrupted: bool = False

    def __post_init__(self) -> None:
        self.observations, self.rows = [], []

    def document(self) -> CapacityView:
        assert self.observations is not None and self.rows is not None
        stop = self.stop
        if stop is None:  # not (yet) ended by the search's own rule
            stop = Stop("error", self.error) if self.error else Stop("interrupted", "the search did not finish")
        result = conclude(self.settings, self.observations, stop)
        doc = capacity_document(spec=self.job.spec, settings=self.settings, result=result, rows=self.rows,
                                requests=self.requests, ceiling=self.ceiling,
                                server=self.server.info if self.server else None,
                                complete=self.stop is not None, interrupted=self.interrupted,
                                absolute_lag_s=self.job.absolute_lag_s)
        return with_cost(doc, self.job.costs)


def _run(search: _Search, point: PointPlan, out: Path) -> PointOutcome:
    assert search.server is not None and search.rows is not None
    point_dir = point_path(out, point.label)  # ValueError: a symbolic link leading outside the search
    progress(f"{point.label} ... ({overall_progress(len(search.rows) + 1, search.settings.max_points, search.requests)})",
             quiet=search.job.quiet)
    return run_point(point_spec(search.job.spec, point, run_dir=point_dir, server_url=search.server.url),
                     search.job.secrets, point=point)


def _record(search: _Search, point: PointPlan, outcome: PointOutcome) -> PointRow | None:
    """The row of a point that measured something (None: interrupted before it sent, or nothing sent)."""
    assert search.rows is not None
    if outcome.interrupted:
        search.interrupted = True
    if not outcome.has_data:
        if not outcome.interrupted:
            search.error = f"point {point.label} could not run (exit {outcome.code}); the search stops here"
        return None
    assert outcome.summary is not None
    status = "interrupted" if outcome.interrupted else "done"
    row = replace(point_row(point, status=status, code=outcome.code, summary=outcome.summary), has_rate=True,
                  rate=point.value if point.kind == "rate" else None)
    search.requests += whole(section(outcome.summary, "requests").get("sent"))
    search.rows.append(row)
    if outcome.code == EXIT_RUNTIME_ERROR and not outcome.interrupted and not _too_short(outcome.summary):
        # Nothing succeeded (a server gone, refusing connections) or results could not be written: no
        # attainment to learn from, and a search that read it as "fails at every rate" would mislead.
        search.error = f"point {point.label} ended with a runtime error (exit 1, above); the search stops here"
        return None
    return row


def _too_short(summary: Mapping[str, Json]) -> bool:
    """A point that sent requests, none of which failed, but held none in its measurement window: too short
    for its rate (the search moves up), not a server that failed."""
    requests = section(summary, "requests")
    return bool(requests.get("sent")) and not requests.get("in_window") and not requests.get("failed")


def _ceiling(search: _Search, out: Path) -> None:
    job = search.job
    assert job.ceiling_concurrency is not None
    point = plan_point(0, "concurrency", float(job.ceiling_concurrency), job.length, seed=job.spec.load.seed,
                       role="ceiling")
    row = _record(search, point, _run(search, point, out))
    if row is None or search.interrupted:
        return
    row = _update_last(search, replace(row, verdict="ceiling"))
    progress(point_line(row), quiet=job.quiet)
    rps = completed_rate(out / POINTS_DIR / point.label)
    if rps is None:
        search.error = "the ceiling point completed no request: there is no throughput to search under"
        return
    _update_last(search, replace(row, ceiling_rps=rps))
    search.ceiling = Ceiling(job.ceiling_concurrency, rps, point.label,
                             "every request the point completed, from its first send to its last completion")
    search.settings = from_ceiling(search.settings, rps)


def _probe(search: _Search, step: Probe, index: int, out: Path) -> None:
    assert search.observations is not None
    job = search.job
    repeat = sum(1 for o in search.observations if o.rate == step.rate)
    point = plan_point(index, "rate", step.rate, job.length, seed=job.spec.load.seed + repeat, role="probe")
    if repeat:
        point = replace(point, label=f"{point.label}-run{repeat + 1}")
    row = _record(search, point, _run(search, point, out))
    if row is None or search.interrupted:
        return
    saturated = client_limited(rate=step.rate, lag_p99_s=row.dispatch_lag_p99_s, offered_rps=row.offered_rps,
                               achieved_rps=row.achieved_rps, absolute_lag_s=job.absolute_lag_s)
    row = _update_last(search, replace(row, client_saturated=saturated))
    search.observations.append(Observation(step.rate, int(row.good or 0), int(row.measured or 0), bool(saturated)))
    entry = next(e for e in pool(search.settings, search.observations) if e.rate == step.rate)
    row = _update_last(search, replace(row, verdict="not evidence" if saturated else entry.verdict.replace("_", " ")))
    progress(point_line(row), quiet=job.quiet)


def _update_last(search: _Search, row: PointRow) -> PointRow:
    """The search's last row replaced by `row` (a row is frozen: its verdict comes once it is pooled)."""
    assert search.rows
    search.rows[-1] = row
    return row


def _save(search: _Search, out: Path) -> None:
    write_capacity(out, search.document())


def run_capacity(job: CapacityJob, run_dir: RunDir) -> int:
    """Run the search into `run_dir`, print the points and the capacity line, judge the thresholds."""
    out = run_dir.path
    search = _Search(job=job, settings=job.settings)
    try:
        with shared_server(job.spec, job.secrets) as server:
            search.server = server
            if job.ceiling_concurrency is not None:
                _ceiling(search, out)
                _save(search, out)
            index = 1
            while search.error is None and not search.interrupted:
                assert search.rows is not None and search.observations is not None
                step = next_step(search.settings, search.observations, len(search.rows))
                if isinstance(step, Stop):
                    search.stop = step
                    break
                _probe(search, step, index, out)
                index += 1
                _save(search, out)
    except KeyboardInterrupt:
        search.interrupted = True
    except EmbeddedServerError as exc:
        search.error = f"the reference server could not start: {exc}"
    except OSError as exc:  # capacity.json cannot be written (disk full, permissions)
        search.error = f"cannot write {exc.filename or out}: {exc.strerror or exc}"
    except ValueError as exc:  # a point directory that leads outside the search (point_path)
        search.error = str(exc)
    return _finish(search, run_dir)


def _client_hint(rows: list[PointRow]) -> str:
    limited = [r for r in rows if r.client_saturated and r.rate]
    low = min(limited, key=lambda r: r.rate or 0.0) if limited else None
    return client_hint(low.rate, low.dispatch_lag_p99_s) if low else client_hint(None, None)


def _finish(search: _Search, run_dir: RunDir) -> int:
    out = run_dir.path
    if not search.rows:
        discard(run_dir)
        line = ("interrupted before the first probe; nothing was sent" if search.interrupted
                else f"error: {search.error}")
        print(f"goodput capacity: {line}", file=sys.stderr)
        return EXIT_INTERRUPTED if search.interrupted else EXIT_RUNTIME_ERROR
    doc = search.document()
    try:
        write_capacity(out, doc)
    except OSError as exc:
        search.error = search.error or f"cannot write {exc.filename or out}: {exc.strerror or exc}"
    print(points_table(search.rows or []))
    for note in doc.notes:
        print(f"note: {note}")
    print(capacity_line(doc))
    for line in cost_console_lines(doc):
        print(line)
    if doc.capacity.status == "client_limited":
        print(_client_hint(search.rows or []))
    page, page_error = write_page_at_end("capacity", out, capacity=True) if search.job.spec.outputs.html else (None, None)
    print(f"results: {out} ({CAPACITY_FILE}, {CAPACITY_PAGE + ', ' if page else ''}{POINTS_DIR}/<point>/)")
    if page_error is not None:
        print(f"goodput capacity: error: cannot write {page_error.filename or CAPACITY_PAGE}: "
              f"{page_error.strerror or page_error}", file=sys.stderr)
    if search.error is not None:
        print(f"goodput capacity: error: {search.error}", file=sys.stderr)
    if search.interrupted:
        print("goodput capacity: interrupted; capacity.json holds what was measured (complete: false)",
              file=sys.stderr)
    code = 0
    if search.job.gate is not None:
        try:
            code = judge_capacity(search.job.gate, doc, label=str(out))
        except (LookupError, ValueError) as exc:
            print(f"goodput capacity: error: thresholds could not be evaluated: {exc}", file=sys.stderr)
            code = 2
        except OSError as exc:
            print(f"goodput capacity: error: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
            code = EXIT_RUNTIME_ERROR
    if search.interrupted:
        return EXIT_INTERRUPTED
    if search.error is not None:
        return EXIT_RUNTIME_ERROR
    return code or (EXIT_RUNTIME_ERROR if page_error is not None else 0)
