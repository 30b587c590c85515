"""What `goodput predict --measured DIR` holds a prediction against: a run (summary.json), a sweep
(sweep.json) or a capacity search (capacity.json), read with the readers of their own pages.

Every measured point becomes the row a sweep gives a point (loadgen.sweep.rows: p50/p90/p99 of TTFT,
TPOT and E2E, attainment, good and measured requests), a run's summary made into that row by the same
function, with the offered rate it was planned at (a sweep point's rate, a probe's rate, a run's arrival
rate, else the rate its schedule offered). Closed-loop points have no offered rate to predict at, and a
rate that is not a finite positive number (0, negative, infinite, missing) cannot be predicted: each is
left out, and said in one note. A file of the wrong shape is one ValueError naming it. What the directory's run.json records of its workload is kept, so that a difference from
the predicted workload is said rather than compared silently (`workload_differences`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from exporters.html import capacity_verdict, done, sweep_capacity, sweep_rows
from loadgen.sweep import PointPlan, as_float, point_row
from metrics.results import (
    CAPACITY_FILE,
    SUMMARY_FILE,
    SWEEP_FILE,
    CapacityView,
    Json,
    MeasuredCapacity,
    PointRow,
    RunDocument,
    SweepView,
    finite_or_none,
    float_or_none,
    json_object,
    object_or_empty,
    point_path,
    read_capacity_points,
    read_summary,
    read_sweep,
    replace,
    run_or_none,
)

# The run spec's workload settings a prediction depends on, and how the page names them.
WORKLOAD_KEYS: tuple[tuple[str, str], ...] = (
    ("dataset", "dataset"), ("trace", "trace"), ("prompt_tokens", "prompt tokens"),
    ("output_tokens", "output tokens"), ("prefix_groups", "prefix groups"), ("prefix_tokens", "prefix tokens"),
    ("prefix_weights", "prefix weights"), ("turns", "turns"), ("cache_bust", "cache bust"),
)
PATH_KEYS = ("dataset", "trace")  # settings naming a file: the same file is the same setting
TRACE_SETS = ("prompt_tokens", "output_tokens")  # every row of a trace gives both: these settings do not apply


def workload_keys(workload: Mapping[str, Json]) -> tuple[tuple[str, str], ...]:
    """The WORKLOAD_KEYS that apply to a run spec's workload (a trace's rows set both lengths)."""
    if workload.get("trace") in (None, ""):
        return WORKLOAD_KEYS
    return tuple((key, name) for key, name in WORKLOAD_KEYS if key not in TRACE_SETS)


OPEN_LOOP_RATE = ("constant", "poisson", "gamma")  # arrivals whose planned rate is the offered rate


def _rate(value: Json) -> float | None:
    """A rate a prediction can run at: a finite positive number, else None."""
    rate = finite_or_none(value)
    return rate if rate is not None and rate > 0 else None


def _no_rate(label: str, point: str, value: Json) -> str:
    return f"{label}: point {point} has no finite positive offered rate ({value!r}): left out"


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What a prediction reads of a run.json, parsed once where it is read."""

    spec: Mapping[str, Json]  # the run spec's own JSON, as the sweep and capacity views hold it ({} when none)
    resolved_ignore_eos: bool | None  # run.json's resolved.ignore_eos, when a bool
    closed_loop: bool  # it says open_loop: false
    planned_rate: float | None  # an open-loop arrival's finite positive rate (no trace), else None
    recorded: bool  # run.json was a non-empty object

    @classmethod
    def from_json(cls, data: object) -> RunFacts:
        run = RunDocument.from_json(data)
        planned = run.planned.arrival_kind in OPEN_LOOP_RATE and not run.planned.trace
        return cls(run.spec or {}, run.resolved_ignore_eos, run.open_loop is False,
                   _rate(run.planned.rate) if planned else None, run.present)


@dataclass(slots=True)
class Measured:
    path: str
    kind: str  # run | sweep | capacity
    rows: list[PointRow]  # finished open-loop points, each with its offered `rate`
    spec: Mapping[str, Json]  # the run spec its run.json records ({} when none is recorded)
    slo: dict[str, float]  # the SLO its attainment was judged with (parts not given left out)
    ignore_eos: bool | None  # whether its requests were asked for exactly max_tokens (run.json)
    doc: SweepView | CapacityView | None = None  # sweep.json / capacity.json
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return Path(self.path).name or self.path


def slo_given(slo: Json) -> dict[str, float]:
    """An SLO's parts that are set (summary.json and capacity.json list the others as null)."""
    return {k: n for k, v in object_or_empty(slo).items() if (n := float_or_none(v)) is not None}


def _run_json(path: Path) -> RunFacts:
    return RunFacts.from_json(run_or_none(path))


def _shared_spec(doc: SweepView | CapacityView) -> Mapping[str, Json]:
    """The spec every point of a sweep or search starts from, less its load: each point sets its own arrivals
    (a search's spec holds the ceiling's closed loop), so only a point's run.json says what they were."""
    return {k: v for k, v in doc.spec.items() if k != "load"}


def _first_point_run(directory: Path, rows: list[PointRow]) -> RunFacts:
    """run.json of the first of these points that has one (an empty one when none has)."""
    for row in rows:
        try:
            found = _run_json(point_path(directory, row.label))
        except ValueError:
            continue
        if found.recorded:
            return found
    return RunFacts.from_json(None)


def _resolved_ignore_eos(run: RunFacts, spec: Mapping[str, Json]) -> bool | None:
    if run.resolved_ignore_eos is not None:
        return run.resolved_ignore_eos
    asked = object_or_empty(spec.get("request")).get("ignore_eos")
    return asked if isinstance(asked, bool) else None


def _run_rate(run: RunFacts, summary: Mapping[str, Json]) -> Json:
    """The run's planned rate, else the rate its summary says was offered (as written: checked by the caller)."""
    if run.planned_rate is not None:
        return run.planned_rate
    return object_or_empty(summary.get("throughput")).get("offered_rps")


def _read_run(directory: Path) -> Measured:
    summary = json_object(read_summary(directory))
    run = RunFacts.from_json(run_or_none(directory) or summary.get("run"))
    spec = run.spec
    judged = object_or_empty(summary.get("goodput")).get("slo")  # the summary's (`goodput report --slo` may change it)
    slo = judged if isinstance(judged, dict) else object_or_empty(spec.get("metrics")).get("slo")
    out = Measured(str(directory), "run", [], spec, slo_given(slo), _resolved_ignore_eos(run, spec))
    offered = _run_rate(run, summary)
    if run.closed_loop or offered is None:
        out.notes.append(f"{out.label} ran closed loop (no offered rate to predict at): left out")
        return out
    rate = _rate(offered)
    if rate is None:
        out.notes.append(_no_rate(out.label, "run", offered))
        return out
    plan = PointPlan(out.label, "rate", rate, None, None, 0.0, 0)
    out.rows.append(replace(point_row(plan, status="done", code=0, summary=summary), has_rate=True, rate=rate))
    return out


def _read_sweep(directory: Path) -> Measured:
    doc = read_sweep(directory)
    finished = done(sweep_rows(doc))
    open_loop = [r for r in finished if r.kind == "rate" and r.role != "ceiling"]
    rows = [replace(r, has_rate=True, rate=_rate(r.value)) for r in open_loop if _rate(r.value) is not None]
    bad = [_no_rate(directory.name or str(directory), r.label, r.value) for r in open_loop if _rate(r.value) is None]
    run = _first_point_run(directory, rows)
    spec = run.spec or _shared_spec(doc)
    out = Measured(str(directory), "sweep", rows, spec, slo_given(object_or_empty(spec.get("metrics")).get("slo")),
                   _resolved_ignore_eos(run, spec), doc, bad)
    if len(open_loop) < len(finished):
        out.notes.append(f"{out.label}: {len(finished) - len(open_loop)} closed-loop point(s) (no offered rate to "
                         "predict at) left out")
    return out


def _read_capacity(directory: Path) -> Measured:
    doc = read_capacity_points(directory)
    finished = [r for r in doc.points if r.status == "done"]
    rows = [replace(r, rate=_rate(r.rate)) for r in finished if _rate(r.rate) is not None]
    bad = [_no_rate(directory.name or str(directory), r.label, r.rate) for r in finished if _rate(r.rate) is None]
    run = _first_point_run(directory, rows)
    spec = run.spec or _shared_spec(doc)
    return Measured(str(directory), "capacity", rows, spec, slo_given(doc.slo),
                    _resolved_ignore_eos(run, spec), doc, bad)


def read_measured(directory: Path) -> Measured:
    """A run, sweep or capacity directory (ValueError, one line, for anything else)."""
    if not directory.is_dir():
        raise ValueError(f"--measured {directory}: not a directory")
    for name, reader in ((CAPACITY_FILE, _read_capacity), (SWEEP_FILE, _read_sweep), (SUMMARY_FILE, _read_run)):
        if not (directory / name).is_file():
            continue
        try:
            return reader(directory)
        except ValueError as exc:
            raise ValueError(f"--measured {directory}: {exc}") from None
        except (TypeError, AttributeError, KeyError, IndexError) as exc:
            raise ValueError(f"--measured {directory}: {name} is malformed ({type(exc).__name__}: {exc})") from None
    raise ValueError(f"--measured {directory}: no summary.json, sweep.json or capacity.json there (a run, sweep "
                     "or capacity directory of goodput)")


def measured_capacity(m: Measured, target: float) -> MeasuredCapacity | None:
    """The capacity a capacity search found (capacity.json), or the one a sweep's points show by the
    search's rule at `target` (exporters.html.sweep_data); None for a run."""
    if isinstance(m.doc, CapacityView):
        v = capacity_verdict(m.doc)
        return MeasuredCapacity(v.rate, v.upper, v.target, v.status, "capacity.json's capacity")
    if isinstance(m.doc, SweepView):
        rated = [r for r in sweep_rows(m.doc) if _rate(r.value) is not None]  # as read_measured keeps
        found = sweep_capacity(rated, target=target)
        if found is None:
            return None
        return MeasuredCapacity(found.capacity, found.upper, target, found.status,
                                "read from the sweep's points by goodput capacity's rule")
    return None


def setting_text(value: Json) -> str:
    """A workload setting as the command line writes it (a length distribution as `uniform:64:512`)."""
    if isinstance(value, Mapping) and {"kind", "a"} <= set(value):
        from loadgen.workload import LengthDist

        return str(LengthDist(str(value["kind"]), as_float(value["a"]), as_float(value.get("b") or 0.0)))
    if value is None:
        return "none"
    return str(value)


def same_setting(key: str, a: Json, b: Json) -> bool:
    """Two runs' values of a workload setting agree: the same text, or for a file (PATH_KEYS) the same
    file however it was named (a relative path read from the current directory)."""
    if setting_text(a) == setting_text(b):
        return True
    if key not in PATH_KEYS or not isinstance(a, str) or not isinstance(b, str):
        return False
    try:
        return Path(a).samefile(b)
    except OSError:  # either file is gone or unreadable: the names are all there is to compare
        return False


def workload_differences(predicted: Mapping[str, Json], measured: Mapping[str, Json]) -> list[str]:
    """'prompt tokens: measured 512, predicted 1024' for each WORKLOAD_KEYS setting that differs between two
    run specs' workloads, and the arrival process; [] when they agree."""
    pw, mw = object_or_empty(predicted.get("workload")), object_or_empty(measured.get("workload"))
    keys = [k for k in workload_keys(pw) if k in workload_keys(mw)]
    out = [f"{name}: measured {setting_text(mw.get(key))}, predicted {setting_text(pw.get(key))}"
           for key, name in keys if key in mw and not same_setting(key, mw.get(key), pw.get(key))]
    pa = object_or_empty(object_or_empty(predicted.get("load")).get("arrival"))
    ma = object_or_empty(object_or_empty(measured.get("load")).get("arrival"))
    for key, name in (("kind", "arrivals"), ("burstiness", "burstiness")):
        if key in ma and ma.get(key) != pa.get(key):
            out.append(f"{name}: measured {setting_text(ma.get(key))}, predicted {setting_text(pa.get(key))}")
    return out
