"""Running one point: an ordinary run (plan, directory, execute) whose console summary is left out, since
the sweep prints one table for all its points. An open-loop point is sent on a schedule that realises its
rate exactly over its window (`loadgen.sweep.exact_rate`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loadgen.run import execute, plan_run, prepare_run_dir
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.sweep.exact_rate import exact_rate_offsets
from loadgen.sweep.points import PointPlan
from metrics.results import JsonObject, json_object, summary_or_none

EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class PointOutcome:
    code: int  # the point's exit code, as `goodput run` would have returned it
    summary: JsonObject | None  # its summary.json; None when the run wrote none (nothing was sent)

    @property
    def interrupted(self) -> bool:
        return self.code == EXIT_INTERRUPTED

    @property
    def has_data(self) -> bool:
        return self.summary is not None


def _quiet(_line: str) -> None:
    """A point directory left by an interrupted sweep is replaced without a notice: resuming says so."""


def run_point(spec: RunSpec, secrets: Secrets, *, point: PointPlan | None = None) -> PointOutcome:
    """Run one point into `spec.outputs.output` (ValueError: the spec cannot be run, a usage error).
    `point`: the plan the spec was made from; an open-loop one gets its exact-rate schedule."""
    offsets = exact_rate_offsets(point, spec.load.arrival) if point is not None else None
    setup = plan_run(spec, secrets, offsets=offsets)
    assert spec.outputs.output is not None
    run_dir = prepare_run_dir(Path(spec.outputs.output), overwrite=True, notice=_quiet)
    code = execute(setup, run_dir, console=False)
    return PointOutcome(code, read_summary(run_dir.path))


def read_summary(run_dir: Path) -> JsonObject | None:
    """The point's summary.json as JSON values, checked once here; None when the run wrote none."""
    summary = summary_or_none(run_dir)
    return json_object(summary) if summary is not None else None
