"""`goodput sweep`: a series of load points against one server, each a complete run in `DIR/points/`, and
the table they make together (sweep.json, sweep.csv, the console).

Modes: `--rates 1,2,4,8` (open loop, the run's arrival process at each rate), `--concurrencies 1,4,16`
(closed loop), or `--auto`: first a closed-loop point at high concurrency measures the throughput
ceiling, then `--points` open-loop rates are spread evenly from ceiling × 1.1 / N up to ceiling × 1.1,
from light load to a little past what the server can complete.

sweep.json is rewritten after every point; sweep.html (unless --no-html) is written once the sweep
ends, however it ends, from the points it finished. Ctrl-C stops the point in flight (its requests get
--grace), keeps every finished point, and says which are missing; `goodput sweep --resume DIR` runs them.

Exit codes: 130 interrupted; 1 a point could not run at all (the sweep stops there), a point had a
runtime error (e.g. no request succeeded), or sweep.html could not be written; 99 a point failed its thresholds; 0 otherwise.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from loadgen.run import EmbeddedServerError, RunDir
from loadgen.secrets import Secrets
from loadgen.spec import GateSpec
from loadgen.sweep.directory import discard
from loadgen.sweep.document import SweepState, write_sweep
from loadgen.sweep.execute import run_point
from loadgen.sweep.html_pages import write_page_at_end
from loadgen.sweep.points import PointLength, PointPlan, plan_point, point_gate, point_spec
from loadgen.sweep.report import point_line, points_table, progress
from loadgen.sweep.rows import point_row
from loadgen.sweep.target import SharedServer, shared_server
from metrics.capacity_search import round_rate
from metrics.results import (
    POINTS_DIR,
    SWEEP_CSV_FILE,
    SWEEP_FILE,
    SWEEP_REPORT_FILE,
    Ceiling,
    PointRow,
    SweepMode,
    point_path,
)

DEFAULT_AUTO_POINTS = 8
DEFAULT_CEILING_CONCURRENCY = 256
AUTO_HEADROOM = 1.1  # an auto sweep's top rate, relative to the measured ceiling
EXIT_RUNTIME_ERROR = 1
EXIT_THRESHOLDS_FAILED = 99
EXIT_INTERRUPTED = 130


def parse_list(text: str, flag: str, *, whole: bool) -> list[float]:
    """`1,2,4.5` → [1, 2, 4.5]: positive, distinct; whole numbers when `whole`."""
    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"{flag} expects comma-separated numbers, got {item!r}") from None
        if not (math.isfinite(value) and value > 0) or (whole and not value.is_integer()):
            raise ValueError(f"{flag}: {item} is not a positive {'whole number' if whole else 'number'}")
        values.append(value)
    if not values:
        raise ValueError(f"{flag} needs at least one value")
    if len(set(values)) != len(values):
        raise ValueError(f"{flag} lists a value twice")
    return values


def sweep_mode(*, rates: list[float] | None, concurrencies: list[float] | None, auto_points: int | None,
               ceiling_concurrency: int) -> SweepMode:
    """sweep.json's `mode`: exactly one of the three."""
    given = [m for m, v in (("--rates", rates), ("--concurrencies", concurrencies), ("--auto", auto_points)) if v]
    if len(given) != 1:
        raise ValueError("give exactly one of --rates, --concurrencies and --auto"
                         + (f" (got {' and '.join(given)})" if given else ""))
    if rates:
        return SweepMode(rates=tuple(rates))
    if concurrencies:
        return SweepMode(concurrencies=tuple(int(c) for c in concurrencies))
    assert auto_points is not None
    if auto_points < 2:
        raise ValueError(f"--points must be >= 2, got {auto_points}")
    if ceiling_concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1, got {ceiling_concurrency}")
    return SweepMode(auto_points=auto_points, auto_concurrency=ceiling_concurrency)


def plan_sweep(mode: SweepMode, length: PointLength, *, seed: int) -> list[PointPlan]:
    """The points known before anything runs: every rate or concurrency, or an auto sweep's ceiling."""
    if mode.rates is not None:
        return [plan_point(i, "rate", float(r), length, seed=seed) for i, r in enumerate(mode.rates, start=1)]
    if mode.concurrencies is not None:
        return [plan_point(i, "concurrency", float(c), length, seed=seed)
                for i, c in enumerate(mode.concurrencies, start=1)]
    return [plan_point(0, "concurrency", float(mode.auto_concurrency or 0), length, seed=seed, role="ceiling")]


def auto_rates(ceiling_rps: float, points: int) -> list[float]:
    """N rates evenly spaced from ceiling × 1.1 / N to ceiling × 1.1 (three significant digits)."""
    top = ceiling_rps * AUTO_HEADROOM
    rates = sorted({round_rate(top * i / points) for i in range(1, points + 1)})
    return [r for r in rates if r > 0]


def _plan_auto_rates(state: SweepState, ceiling_row: PointRow) -> str | None:
    """After the ceiling point: plan the rates (None), or say why they cannot be planned."""
    rps = ceiling_row.requests_per_s
    if not isinstance(rps, float) or rps <= 0:
        return "the ceiling point completed no request, so there is no throughput to spread rates under"
    state.ceiling = Ceiling(state.mode.auto_concurrency, rps, ceiling_row.label)
    start = len(state.points)
    state.points += [plan_point(start + i, "rate", r, state.length, seed=state.spec.load.seed)
                     for i, r in enumerate(auto_rates(rps, int(state.mode.auto_points or 0)))]
    return None


def _run_one(state: SweepState, point: PointPlan, server: SharedServer, secrets: Secrets,
             sweep_dir: Path) -> int:
    """Run a point, record its row; its exit code."""
    point_dir = point_path(sweep_dir, point.label)  # ValueError: it would lead outside the sweep
    gate = point_gate(state.spec, point_dir) if state.spec.gate.enabled else GateSpec()
    outcome = run_point(point_spec(state.spec, point, run_dir=point_dir, server_url=server.url, gate=gate), secrets,
                        point=point)
    status = "interrupted" if outcome.interrupted else ("done" if outcome.has_data else "failed")
    state.rows[point.label] = point_row(point, status=status, code=outcome.code, summary=outcome.summary)
    return outcome.code


def run_sweep(state: SweepState, secrets: Secrets, run_dir: RunDir, *, quiet: bool) -> int:
    """Run every pending point (all of them, or what an earlier sweep left), writing sweep.json after each;
    print the table; the exit code (see the module doc)."""
    sweep_dir = run_dir.path
    codes: list[int] = []
    stopped: str | None = None
    ran_any = bool(state.rows)
    try:
        with shared_server(state.spec, secrets) as server:
            state.server = server.info
            state.interrupted = False
            write_sweep(sweep_dir, state)
            while (pending := state.pending()) and stopped is None:
                point = pending[0]
                done = len(state.points) - len(pending)
                spent = sum(int(r.sent or 0) for r in state.rows.values())
                progress(f"point {done + 1}/{len(state.points)}{'+' if state.auto and state.ceiling is None else ''}: "
                         f"{point.label} ... ({spent:,} requests sent so far)", quiet=quiet)
                code = _run_one(state, point, server, secrets, sweep_dir)
                row = state.rows[point.label]
                ran_any = ran_any or row.status != "failed"
                progress(point_line(row), quiet=quiet)
                if row.status == "interrupted":
                    state.interrupted = True
                    break
                if row.status == "failed":
                    stopped = f"point {point.label} could not run (exit {code}); the sweep stops here"
                    break
                codes.append(code)
                if point.role == "ceiling":
                    stopped = _plan_auto_rates(state, row)
                write_sweep(sweep_dir, state)
    except KeyboardInterrupt:
        state.interrupted = True
    except EmbeddedServerError as exc:
        stopped = f"the reference server could not start: {exc}"
    except ValueError as exc:  # a point directory that leads outside the sweep (point_path)
        stopped = str(exc)
    except OSError as exc:  # sweep.json or sweep.csv cannot be written (disk full, permissions)
        stopped = f"cannot write {exc.filename or sweep_dir}: {exc.strerror or exc}"
    if not ran_any:
        discard(run_dir)
        print(f"goodput sweep: {'interrupted before any point ran; nothing was sent' if state.interrupted else 'error: ' + str(stopped)}",
              file=sys.stderr)
        return EXIT_INTERRUPTED if state.interrupted else EXIT_RUNTIME_ERROR
    try:
        write_sweep(sweep_dir, state)
    except OSError as exc:
        stopped = stopped or f"cannot write {exc.filename or sweep_dir}: {exc.strerror or exc}"
    print(points_table([state.row(p) for p in state.points]))
    page, page_error = write_page_at_end("sweep", sweep_dir, capacity=False) if state.spec.outputs.html else (None, None)
    print(f"results: {sweep_dir} ({SWEEP_FILE}, {SWEEP_CSV_FILE}, {SWEEP_REPORT_FILE + ', ' if page else ''}"
          f"{POINTS_DIR}/<point>/)")
    code = _finish(state, sweep_dir, codes, stopped)
    if page_error is not None:
        print(f"goodput sweep: error: cannot write {page_error.filename or SWEEP_REPORT_FILE}: "
              f"{page_error.strerror or page_error}", file=sys.stderr)
        return code or EXIT_RUNTIME_ERROR
    return code


def _finish(state: SweepState, sweep_dir: Path, codes: list[int], stopped: str | None) -> int:
    missing = state.missing()
    if stopped is not None:
        print(f"goodput sweep: error: {stopped}", file=sys.stderr)
    if state.interrupted or stopped is not None:
        done = len(state.points) - len(state.pending())
        print(f"goodput sweep: {done} of {len(state.points)} planned points finished; missing: {', '.join(missing)}; "
              f"`goodput sweep --resume {sweep_dir}` runs them", file=sys.stderr)
    if state.interrupted:
        return EXIT_INTERRUPTED
    if stopped is not None:
        return EXIT_RUNTIME_ERROR
    if EXIT_THRESHOLDS_FAILED in codes:
        return EXIT_THRESHOLDS_FAILED
    return EXIT_RUNTIME_ERROR if any(c not in (0, EXIT_THRESHOLDS_FAILED) for c in codes) else 0
