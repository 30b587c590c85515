"""A run's schedule is made in one place (loadgen/workload/schedule.py), once per run (loadgen.run.setup), and
passed on: the runner dispatches on the offsets it is given and the measurement window's end is read off
them; neither draws a schedule of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from loadgen.dispatch import Runner, RunPlan
from loadgen.run.setup import plan_run, schedule_end_s
from loadgen.secrets import Secrets
from loadgen.spec.run_spec import RunSpec
from loadgen.spec.sections import LoadSpec, TargetSpec
from loadgen.types import WorkItem
from loadgen.workload.arrivals import Arrival
from loadgen.workload.lengths import parse_length
from loadgen.workload.schedule import Schedule, run_schedule
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from metrics.records.record import RequestRecord

ROOT = Path(__file__).resolve().parents[2]
POISSON = Arrival("poisson", rate=4.0)
WORKLOAD = SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words)


class Instant:
    def __init__(self) -> None:
        self.intended_s: list[float] = []

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        self.intended_s.append(intended_ns / 1e9)
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=intended_ns, closed_ns=intended_ns)


def test_the_runner_refuses_an_open_loop_plan_without_its_schedule() -> None:
    with pytest.raises(ValueError, match="dispatched on its schedule"):
        Runner(Instant(), WORKLOAD, RunPlan(arrival=POISSON, duration_s=None, count=3, seed=0))


async def test_the_runner_sends_the_offsets_it_is_given() -> None:
    """Offsets no seed of the arrival process would draw: the runner sends exactly these."""
    sender = Instant()
    plan = RunPlan(arrival=POISSON, duration_s=None, count=3, seed=0, offsets=np.array([0.0, 0.01, 0.02]))
    await Runner(sender, WORKLOAD, plan).run()
    assert sender.intended_s == [0.0, 0.01, 0.02]


def test_the_window_end_is_read_off_the_runs_schedule() -> None:
    load = LoadSpec(arrival=POISSON, requests=3, seed=0)
    assert schedule_end_s(load, Schedule(np.array([0.0, 0.5, 7.25]))) == 7.25
    with pytest.raises(ValueError, match="pass the run's schedule"):
        schedule_end_s(load, None)
    closed = LoadSpec(arrival=Arrival("concurrency", concurrency=2), duration_s=5.0, requests=None)
    assert schedule_end_s(closed, None) == 5.0


def test_a_sweep_points_schedule_is_taken_not_drawn_and_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan_run with the caller's offsets (a sweep point's exact rate) draws nothing from the seed, and the
    window ends where those offsets do."""
    def no_draw(*args: object, **kwargs: object) -> np.ndarray:
        raise AssertionError("a schedule was drawn")

    monkeypatch.setattr("loadgen.workload.schedule.schedule", no_draw)
    spec = RunSpec(target=TargetSpec(url="http://127.0.0.1:9", model="m"), load=LoadSpec(arrival=POISSON, requests=3))
    given = np.array([0.0, 0.25, 0.75])
    setup = plan_run(spec, Secrets(), offsets=given)
    assert setup.schedule is not None and setup.schedule.offsets.tolist() == [0.0, 0.25, 0.75]
    assert setup.schedule_end_s == 0.75
    plan = setup.run_plan()
    assert plan.offsets is not None and plan.offsets.tolist() == [0.0, 0.25, 0.75]


def test_plan_run_draws_the_schedule_that_is_dispatched() -> None:
    spec = RunSpec(target=TargetSpec(url="http://127.0.0.1:9", model="m"),
                   load=LoadSpec(arrival=POISSON, requests=5, seed=3))
    setup = plan_run(spec, Secrets())
    drawn = run_schedule(spec.load)
    assert drawn is not None and setup.schedule is not None
    assert setup.run_plan().offsets.tolist() == drawn.offsets.tolist()  # type: ignore[union-attr]
    assert setup.schedule_end_s == drawn.end_s


def _calls_of(tree: ast.AST, names: set[str]) -> list[int]:
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id in names)
        or (isinstance(node.func, ast.Attribute) and node.func.attr in names))]


def test_only_the_schedule_module_draws_an_arrival_schedule() -> None:
    """`loadgen.workload.arrivals.schedule` is called by loadgen/workload/schedule.py alone, and the run's
    schedule (`run_schedule`) is made by plan_run alone on the run path (and by `goodput predict`, which
    makes its own workload's)."""
    drawers = []
    makers = []
    for path in sorted((ROOT / "loadgen").rglob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "loadgen.workload.arrivals" for alias in node.names if alias.name == "schedule"}
        where = str(path.relative_to(ROOT))
        drawers += [f"{where}:{line}" for line in _calls_of(tree, imported)]
        makers += [f"{where}:{line}" for line in _calls_of(tree, {"run_schedule"})]
    assert [d.rpartition(":")[0] for d in drawers] == ["loadgen/workload/schedule.py"], drawers
    assert sorted({m.rpartition(":")[0] for m in makers}) == ["loadgen/predict/requests.py", "loadgen/run/setup.py"]
    assert len([m for m in makers if m.startswith("loadgen/run/setup.py")]) == 1, makers
