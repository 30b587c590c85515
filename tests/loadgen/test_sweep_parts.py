"""The pieces of a sweep without a server: point plans and their run specs, warm-up and length rules,
the capacity line, the directory rules, sweep.json's round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadgen.run.directory import OutputDirError
from loadgen.spec.build import build_spec
from loadgen.spec.run_spec import RunSpec
from loadgen.sweep.directory import discard, prepare_sweep_dir
from loadgen.sweep.document import SweepState, read_sweep, write_sweep
from loadgen.sweep.points import (
    PointLength,
    PointPlan,
    format_number,
    plan_point,
    point_gate,
    point_length,
    point_spec,
)
from loadgen.sweep.report import capacity_line
from loadgen.sweep.rows import point_row
from loadgen.sweep.sweep import auto_rates, plan_sweep, sweep_mode
from metrics.results import CapacityView, SweepMode


def _spec(**values: Any) -> RunSpec:
    from loadgen.cli.run import run_defaults

    return build_spec({**run_defaults(), **values})[0]


def test_labels_and_numbers() -> None:
    length = PointLength(10.0, None)
    assert plan_point(3, "rate", 2.5, length, seed=0).label == "03-rate-2.5"
    assert plan_point(1, "concurrency", 16, length, seed=0).label == "01-concurrency-16"
    assert plan_point(0, "concurrency", 256, length, seed=0, role="ceiling").label == "00-ceiling-c256"
    assert format_number(1200.0) == "1200" and format_number(0.125) == "0.125"
    with pytest.raises(ValueError, match="whole number"):
        plan_point(1, "concurrency", 2.5, length, seed=0)


@pytest.mark.parametrize(("length", "kind", "value", "warmup"), [
    (PointLength(30.0, None), "rate", 4.0, 3.0),  # 10 % of the duration
    (PointLength(None, 200), "rate", 4.0, 5.0),  # 10 % of 200 requests at 4/s
    (PointLength(30.0, 200), "rate", 4.0, 3.0),  # whichever ends first
    (PointLength(None, 200), "concurrency", 8.0, 0.0),  # no planned length: no default warm-up
    (PointLength(30.0, None, warmup_s=1.5), "rate", 4.0, 1.5),  # given: as given
])
def test_warmup(length: PointLength, kind: Any, value: float, warmup: float) -> None:
    assert plan_point(1, kind, value, length, seed=0).warmup_s == warmup


def test_point_length_precedence() -> None:
    spec = _spec(duration="20s", warmup="2s")
    assert point_length(spec, set(), duration_s=None, requests=None, default_duration_s=60.0) == PointLength(60.0, None)
    assert point_length(spec, {"duration"}, duration_s=None, requests=None, default_duration_s=60.0) == \
        PointLength(20.0, None)
    assert point_length(spec, {"duration", "warmup"}, duration_s=5.0, requests=None, default_duration_s=60.0) == \
        PointLength(5.0, None, 2.0)
    assert point_length(_spec(), set(), duration_s=None, requests=None, default_duration_s=None) == \
        PointLength(None, 100)  # the sweep without any length: the run's own default
    with pytest.raises(ValueError, match="--point-requests"):
        point_length(spec, set(), duration_s=None, requests=0, default_duration_s=None)


def test_point_spec_keeps_everything_but_the_load() -> None:
    base = _spec(arrival="gamma", burstiness=0.5, slo=["ttft=500ms"], tag=["team=a"], seed=7, cooldown="1s")
    point = plan_point(2, "rate", 9.0, PointLength(10.0, None), seed=7)
    spec = point_spec(base, point, run_dir=Path("/s/points/02-rate-9"), server_url=None)
    assert spec.load.arrival.kind == "gamma" and spec.load.arrival.rate == 9.0 and spec.load.arrival.burstiness == 0.5
    assert (spec.load.duration_s, spec.load.requests, spec.load.warmup_s, spec.load.cooldown_s) == (10.0, None, 1.0, 1.0)
    assert spec.metrics == base.metrics and spec.workload == base.workload and spec.target == base.target
    assert spec.outputs.output == "/s/points/02-rate-9" and spec.outputs.quiet
    ramp = point_spec(_spec(arrival="ramp", rate_end=9.0, duration="5s"), point, run_dir=Path("/x"), server_url=None)
    assert ramp.load.arrival.kind == "poisson"  # a ramp is no point of a sweep
    closed = point_spec(base, plan_point(1, "concurrency", 4, PointLength(None, 50), seed=0), run_dir=Path("/x"),
                        server_url=None)
    assert (closed.load.arrival.kind, closed.load.arrival.concurrency) == ("concurrency", 4)


def test_a_trace_point_replays_the_trace_rescaled_to_its_rate(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(f'{{"timestamp": {1000 * i}, "input_length": 64, "output_length": 4}}\n'
                             for i in range(10)))
    point = plan_point(1, "rate", 4.0, PointLength(2.0, None), seed=0)
    spec = point_spec(_spec(trace=str(trace)), point, run_dir=Path("/x"), server_url=None)
    assert (spec.load.arrival.kind, spec.load.arrival.rate) == ("trace", 4.0)


def test_a_shared_embedded_server_gets_what_embedded_resolved_to() -> None:
    base = _spec(server_arg=["--engine=sim"])
    assert base.target.embedded and base.workload.tokenizer == "auto"
    spec = point_spec(base, plan_point(1, "rate", 2.0, PointLength(5.0, None), seed=0), run_dir=Path("/x"),
                      server_url="http://127.0.0.1:4000")
    assert spec.target.url == "http://127.0.0.1:4000" and spec.target.server_args == ()
    assert spec.request.ignore_eos is True and spec.workload.tokenizer == "bytes"  # as a plain embedded run sends
    assert RunSpec.from_json(spec.to_json()) == spec


def test_thresholds_write_their_files_into_each_point(tmp_path: Path) -> None:
    base = _spec(threshold=["errors:rate < 1%"], junit=str(tmp_path / "ci" / "gate.xml"), markdown="gate.md")
    gate = point_gate(base, tmp_path / "points" / "01-rate-2")
    assert gate.junit == str(tmp_path / "points" / "01-rate-2" / "gate.xml")
    assert gate.markdown == str(tmp_path / "points" / "01-rate-2" / "gate.md")
    assert gate.thresholds == base.gate.thresholds


def test_modes_and_auto_rates() -> None:
    length = PointLength(None, 10)
    assert [p.value for p in plan_sweep(sweep_mode(rates=[1.0, 2.0], concurrencies=None, auto_points=None,
                                                   ceiling_concurrency=256), length, seed=0)] == [1.0, 2.0]
    auto = sweep_mode(rates=None, concurrencies=None, auto_points=4, ceiling_concurrency=64)
    assert [p.role for p in plan_sweep(auto, length, seed=0)] == ["ceiling"]
    assert auto_rates(10.0, 4) == [2.75, 5.5, 8.25, 11.0]
    with pytest.raises(ValueError, match="exactly one"):
        sweep_mode(rates=[1.0], concurrencies=[2.0], auto_points=None, ceiling_concurrency=1)


def test_capacity_lines() -> None:
    cap: dict[str, Any] = {"rate": 6.3, "upper": 7.1, "target": 0.9, "confidence": 0.95, "points": 7,
                           "requests": 2940, "status": "bracketed", "max_rate": None}
    assert capacity_line(CapacityView.from_json({"capacity": cap})) == \
        "capacity 6.3 req/s at 90 % attainment (95 % conf.; bracket 6.3–7.1 req/s; 7 points, 2,940 requests)"
    at_least = {**cap, "upper": None, "status": "at_least", "max_rate": 6.5}
    assert capacity_line(CapacityView.from_json({"capacity": at_least})).startswith(
        "capacity at least 6.3 req/s at 90 % attainment (95 % conf.; nothing failed up to --max-rate 6.5 req/s")
    max_points = {**cap, "upper": None, "status": "max_points"}
    assert "--max-points reached before a rate failed" in capacity_line(CapacityView.from_json({"capacity": max_points}))
    none = {**cap, "rate": None, "upper": 2.0, "status": "below_min"}
    assert capacity_line(CapacityView.from_json({"capacity": none})) == (
        "capacity: no rate shown to meet 90 % attainment (95 % conf.; not even --min-rate passed; lowest rate not "
        "shown to pass 2 req/s; 7 points, 2,940 requests)")


def test_sweep_directory_rules(tmp_path: Path) -> None:
    fresh = prepare_sweep_dir(tmp_path / "a" / "b", kind="sweep")
    assert fresh.path.is_dir() and fresh.created_root == tmp_path / "a"
    discard(fresh)
    assert not (tmp_path / "a").exists()  # nothing sent, nothing left
    taken = tmp_path / "taken"
    (taken / "points" / "01-rate-1").mkdir(parents=True)
    (taken / "points" / "01-rate-1" / "run.json").write_text("{}")
    (taken / "points" / "01-rate-1" / "notes.txt").write_text("mine")
    (taken / "sweep.json").write_text("{}")
    with pytest.raises(OutputDirError, match="already holds a sweep"):
        prepare_sweep_dir(taken, kind="sweep")
    prepare_sweep_dir(taken, kind="sweep", overwrite=True)
    assert not (taken / "sweep.json").exists() and not (taken / "points" / "01-rate-1" / "run.json").exists()
    assert (taken / "points" / "01-rate-1" / "notes.txt").read_text() == "mine"  # only what a sweep wrote
    existing = prepare_sweep_dir(tmp_path / "empty", kind="capacity")
    assert existing.created_root == tmp_path / "empty"
    again = prepare_sweep_dir(existing.path, kind="capacity")  # the directory is there before this sweep:
    assert again.created_root is None
    discard(again)
    assert existing.path.is_dir()  # so discarding this sweep leaves it, empty as it was
    assert list(existing.path.iterdir()) == []


def test_sweep_json_round_trip(tmp_path: Path) -> None:
    spec = _spec(slo=["ttft=1s"])
    length = PointLength(3.0, None)
    points = [plan_point(1, "rate", 2.0, length, seed=0), plan_point(2, "rate", 4.0, length, seed=0)]
    state = SweepState(spec=spec, mode=SweepMode(rates=(2.0, 4.0)), length=length, points=points)
    state.rows[points[0].label] = point_row(points[0], status="done", code=0, summary={
        "run": {"complete": True}, "requests": {"in_window": 5, "sent": 6}, "goodput": {"good": 5, "attainment": 1.0}})
    state.interrupted = True
    write_sweep(tmp_path, state)
    back = read_sweep(tmp_path)
    assert back.spec == spec and back.points == points and back.length == length
    assert [p.label for p in back.pending()] == ["02-rate-4"] and back.missing() == ["02-rate-4"]
    assert back.rows["01-rate-2"].measured == 5
    assert (tmp_path / "sweep.csv").read_text().count("\n") == 3
    assert PointPlan.from_json(points[1].to_json()) == points[1]


def test_point_labels_are_names_in_every_reader(tmp_path: Path) -> None:
    import json as _json

    from exporters.html.sweep_write import read_document
    from loadgen.sweep.capacity_doc import read_capacity
    from metrics.results import check_label, point_path

    for good in ("03-rate-2.5", "00-ceiling-c256", "05-rate-2.5-run2"):
        assert check_label(good) == good and point_path(tmp_path, good) == tmp_path / "points" / good
    for bad in ("", ".", "..", "../x", "/etc", "a/b", "a\\b", "x\n", 7, None, "a" * 101):
        with pytest.raises(ValueError, match="not a point name"):
            check_label(bad)
    (tmp_path / "capacity.json").write_text(_json.dumps(
        {"kind": "capacity", "capacity": {}, "points": [{"label": "/tmp/elsewhere"}]}))
    with pytest.raises(ValueError, match="not a point name"):
        read_capacity(tmp_path)
    with pytest.raises(ValueError, match="not a point name"):
        read_document(tmp_path, "capacity.json", "capacity")
    (tmp_path / "sweep.json").write_text(_json.dumps(
        {"kind": "sweep", "points": [{"plan": {"label": ".."}, "row": {"label": "01-rate-1"}}]}))
    with pytest.raises(ValueError, match="not a point name"):
        read_document(tmp_path, "sweep.json", "sweep")
