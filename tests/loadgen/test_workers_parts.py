"""The pieces of `--workers` / `--ray` that need no process: splitting the load, the clock-offset estimate,
which requests of a lost worker are recorded as lost, and the options."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.cli.run import run_defaults
from loadgen.run.setup import local_worker_count
from loadgen.spec.build import build_spec
from loadgen.spec.sections import SpecError
from loadgen.workers.clock import estimate_offset
from loadgen.workers.lost import WORKER_LOST, Ledger
from loadgen.workers.share import Share, closed_loop_slots, split
from loadgen.workload.arrivals import parse_arrival, schedule
from loadgen.workload.lengths import parse_length
from loadgen.workload.sessions import SyntheticSessions
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from loadgen.workload.think import ThinkTime
from metrics.records.record import RequestRecord

POISSON = parse_arrival("poisson", rate=100.0, burstiness=1.0, rate_end=None, concurrency=None)
WORKLOAD = SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words, tags={"scenario": "a"})


def closed(concurrency: int, rate: float | None = None) -> Any:
    return parse_arrival("concurrency", rate=rate, burstiness=1.0, rate_end=None, concurrency=concurrency)


@pytest.mark.parametrize("workers", [1, 2, 3, 7])
def test_open_loop_shares_interleave_and_merge_into_the_schedule(workers: int) -> None:
    offsets = schedule(POISSON, duration_s=None, count=50, seed=1)
    shares = split(POISSON, offsets, None, workers)
    merged = np.sort(np.concatenate([s.ids for s in shares if s.ids is not None]))
    assert merged.tolist() == list(range(50))
    assert all(s.ids is not None and np.all(s.ids % workers == s.worker) for s in shares)
    assert max(s.ids.size for s in shares if s.ids is not None) - min(s.ids.size for s in shares if s.ids is not None) <= 1


def test_closed_loop_splits_slots_rate_and_count_with_disjoint_ids() -> None:
    shares = split(closed(7, rate=30.0), None, 20, 3)
    assert [s.concurrency for s in shares] == [3, 2, 2] and sum(s.concurrency for s in shares) == 7
    assert all(s.rate_cap == pytest.approx(10.0) for s in shares)
    assert [s.count for s in shares] == [7, 7, 6]
    ids = sorted(s.global_id(i) for s in shares for i in range(s.count or 0))
    assert ids == list(range(20))
    assert sum(closed_loop_slots(5, k, 5) for k in range(5)) == 5
    with pytest.raises(ValueError, match="cannot be split"):
        split(closed(2), None, 10, 3)


def test_auto_workers_leave_a_core_for_the_parent_and_never_outnumber_the_slots() -> None:
    assert local_worker_count(None, POISSON, cores=8) == 7
    assert local_worker_count(None, POISSON, cores=1) == 1
    assert local_worker_count(None, closed(3), cores=16) == 3
    assert local_worker_count(4, POISSON, cores=2) == 4


def test_the_clock_offset_comes_from_the_shortest_round_trip() -> None:
    # The remote clock is 5 ms ahead; the fast round trip (10 µs) bounds it tightly, the slow ones do not.
    true = 5_000_000
    samples = [(0, 400_000 + true, 1_000_000), (2_000_000, 2_004_000 + true, 2_010_000),
               (3_000_000, 3_100_000 + true, 3_900_000)]
    est = estimate_offset(samples)
    assert est.rtt_ns == 10_000 and est.uncertainty_ns == 5_000 and est.samples == 3
    assert abs(est.offset_ns - true) <= est.uncertainty_ns
    with pytest.raises(ValueError):
        estimate_offset([])
    with pytest.raises(ValueError):
        estimate_offset([(10, 0, 5)])


def _ok(rid: int, *, worker: int = 0, session: int | None = None, turn: int | None = None,
        status: str = "ok") -> RequestRecord:
    return RequestRecord(id=rid, intended_ns=0, sent_ns=1, status=status, worker=worker, session=session,  # type: ignore[arg-type]
                         turn=turn)


def test_a_lost_open_loop_worker_loses_what_was_due_and_with_continue_the_rest_as_it_falls_due() -> None:
    offsets = np.arange(10, dtype=np.float64)  # request i at i seconds
    share = split(POISSON, offsets, None, 2)[1]  # ids 1, 3, 5, 7, 9
    ledger = Ledger(share, offsets=offsets, sessions=False, count=None)
    for rid in (1, 3):
        ledger.note(_ok(rid, worker=1))
    ledger.lose("killed by SIGKILL", at_ns=5_500_000_000)
    now = ledger.due(5_500_000_000, WORKLOAD)  # 5 was due (in flight or its record unsent); 7 and 9 were not
    assert [(r.id, r.intended_ns, r.status, r.error_kind, r.sent_ns, r.worker) for r in now] == [
        (5, 5_000_000_000, "error", WORKER_LOST, None, 1)]
    assert now[0].tags == {"scenario": "a"} and now[0].output_tokens_target == 2
    assert "killed by SIGKILL" in (now[0].error_message or "")
    assert ledger.due(5_900_000_000, WORKLOAD) == []
    assert [r.id for r in ledger.due(None, WORKLOAD)] == [7, 9]  # the run went on to its end
    assert ledger.due(None, WORKLOAD) == [] and ledger.records == 5 and ledger.lost_records == 3


def test_a_lost_closed_loop_worker_loses_what_it_started_and_with_continue_its_unsent_ids() -> None:
    share = split(closed(4), None, 12, 2)[0]  # ids 0, 2, 4, 6, 8, 10
    ledger = Ledger(share, offsets=None, sessions=False, count=12)
    ledger.started.update({0, 2, 4})
    ledger.note(_ok(0))
    ledger.lose("exited with code 1", at_ns=7)
    assert [(r.id, r.intended_ns) for r in ledger.due(100, WORKLOAD)] == [(2, 7), (4, 7)]
    assert ledger.due(200, WORKLOAD) == []  # stopped there: nothing more was due
    assert [r.id for r in ledger.due(None, WORKLOAD)] == [6, 8, 10]


def test_a_lost_worker_loses_the_turns_its_sessions_still_owed() -> None:
    sessions = SyntheticSessions(WORKLOAD, parse_length("3"), ThinkTime())
    offsets = np.zeros(4)
    share = split(POISSON, offsets, None, 2)[0]  # sessions 0 and 2
    ledger = Ledger(share, offsets=offsets, sessions=True, count=None)
    ledger.note(_ok(0, session=0, turn=1))
    ledger.note(_ok(2, session=0, turn=2))
    ledger.note(_ok(4, session=2, turn=1, status="cancelled"))  # the run stopped session 2: nothing more was due
    ledger.lose("ActorDiedError", at_ns=9)
    lost = ledger.due(10, sessions)
    assert [(r.session, r.turn, r.intended_ns) for r in lost] == [(0, 3, 9)]
    assert lost[0].id == 6 and lost[0].id % 2 == 0  # above the ids the worker used, in its own residue class


def _values(**changes: Any) -> dict[str, Any]:
    return {**run_defaults(), "url": "http://127.0.0.1:9", **changes}


def test_the_scale_options_build_and_check_like_every_option() -> None:
    spec, _ = build_spec(_values(workers="auto", ray="10.0.0.1:6379", ray_placement="zone=a",
                                 on_worker_failure="continue"))
    assert spec.scale.workers is None and spec.scale.node_label() == {"zone": "a"} and spec.scale.distributed
    assert build_spec(_values(workers="3"))[0].scale.workers == 3
    assert not build_spec(_values())[0].scale.distributed
    for bad, message in [({"workers": "many"}, "--workers expects"), ({"workers": "0"}, "--workers must be >= 1"),
                         ({"on_worker_failure": "retry"}, "--on-worker-failure must be stop or continue"),
                         ({"ray_placement": "zone=a"}, "--ray-placement needs --ray"),
                         ({"ray": "auto", "ray_placement": "zone"}, "KEY=VALUE"),
                         ({"arrival": "concurrency", "concurrency": 2, "workers": "3"}, "cannot split --concurrency 2")]:
        with pytest.raises(SpecError, match=message):
            build_spec(_values(**bad))


def test_a_share_maps_local_and_global_ids_both_ways() -> None:
    share = Share(worker=2, workers=3, concurrency=1)
    assert [share.global_id(i) for i in range(3)] == [2, 5, 8]
    assert [share.local_index(g) for g in (2, 5, 8)] == [0, 1, 2]


async def test_a_worker_that_cannot_start_fails_the_run_before_anything_is_sent() -> None:
    from loadgen.dispatch.runner import RunPlan
    from loadgen.secrets import Secrets
    from loadgen.workers.core import WorkerTask
    from loadgen.workers.local import LocalWorkers

    offsets = np.zeros(2)
    plan = RunPlan(arrival=POISSON, duration_s=None, count=2, offsets=offsets)
    bad = {"spec_version": 1, "load": {"requests": 0}}  # a spec no worker accepts
    tasks = [WorkerTask(spec=bad, secrets=Secrets(), base_url="http://127.0.0.1:9", model="m", workload=WORKLOAD,
                        plan=plan, share=share) for share in split(POISSON, offsets, None, 2)]
    pool = LocalWorkers(tasks)
    try:
        with pytest.raises(RuntimeError, match=r"worker \d could not start: SpecError: --requests must be >= 1"):
            await pool.start()
    finally:
        await pool.close()
    assert all(w.proc.returncode is not None for w in pool.workers)
