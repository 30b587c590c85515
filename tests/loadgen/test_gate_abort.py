"""The abort-on-fail watcher on a stand-in runner: no data never aborts, a definite failure stops the
runner without marking it interrupted, and the run fields say why."""

from __future__ import annotations

import asyncio

from loadgen.dispatch.runner import RunState
from loadgen.run.gate import GatePlan, abort_fields, watch_for_abort
from metrics.gate.thresholds import parse_threshold
from metrics.records.record import RequestRecord
from metrics.summary.build import SummaryConfig

MS = 1_000_000


class StandInRunner:
    def __init__(self) -> None:
        self.state = RunState()
        self.stops: list[bool] = []

    def stop(self, *, interrupted: bool = True) -> None:
        self.stops.append(interrupted)
        self.state.stopping = True


def _record(i: int, ok: bool) -> RequestRecord:
    a = i * 10 * MS
    if not ok:
        return RequestRecord(id=i, intended_ns=a, sent_ns=a, status="error", error_kind="http_status", closed_ns=a + MS)
    return RequestRecord(id=i, intended_ns=a, sent_ns=a, chunk_ns=[a + 5 * MS, a + 6 * MS], chunk_tokens=[1, 1],
                         token_source="server", output_tokens=2, output_tokens_estimated=False, closed_ns=a + 7 * MS)


def _plan(*texts: str) -> GatePlan:
    thresholds = [parse_threshold(t) for t in texts]
    return GatePlan(thresholds=thresholds, abort_thresholds=thresholds, abort_delay_s=0.0, abort_interval_s=0.01)


async def test_a_definite_failure_stops_the_runner() -> None:
    runner = StandInRunner()
    plan = _plan("ttft:p(99) < 1s", "errors:rate < 0.1")
    runner.state.records.extend(_record(i, ok=i % 2 == 0) for i in range(10))
    await asyncio.wait_for(watch_for_abort(runner, plan, SummaryConfig(), {}), timeout=60)  # type: ignore[arg-type]
    assert runner.stops == [False]  # stopped, not interrupted
    assert [v.threshold.text for v in plan.abort_verdicts] == ["errors:rate < 0.1"]
    fields = abort_fields(plan)
    assert fields["aborted"] is True and "errors:rate < 0.1" in fields["abort_reason"]


async def test_no_data_and_passing_thresholds_do_not_abort() -> None:
    runner = StandInRunner()
    plan = _plan("ttft:p(99) < 1s", "ttft{cache:full}:p(99) < 1s")  # nobody has a full cache hit: no data
    watcher = asyncio.create_task(watch_for_abort(runner, plan, SummaryConfig(), {}))  # type: ignore[arg-type]
    for i in range(5):
        runner.state.records.append(_record(i, ok=True))
        await asyncio.sleep(0.05)
    assert not watcher.done() and runner.stops == []
    runner.state.stopping = True  # the run ended on its own: the watcher leaves
    await asyncio.wait_for(watcher, timeout=60)
    assert abort_fields(plan) == {"aborted": False}


async def test_nothing_to_watch_without_abort_thresholds() -> None:
    runner = StandInRunner()
    plan = GatePlan(thresholds=[parse_threshold("errors:rate < 0.1")])
    runner.state.records.extend(_record(i, ok=False) for i in range(3))
    await asyncio.wait_for(watch_for_abort(runner, plan, SummaryConfig(), {}), timeout=60)  # type: ignore[arg-type]
    assert runner.stops == [] and abort_fields(None) == {"aborted": False}
