"""`goodput predict --point-duration`: each rate predicted as one point of `goodput capacity` sends it (the
same send times, the same warm-up left out), so a predicted capacity is the one the search would measure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench.predict_workloads import write_prefix_trace
from loadgen.cli.commands import run_cli
from loadgen.cli.run import run_defaults
from loadgen.predict.measured import Measured
from loadgen.predict.predict import Fleet, point
from loadgen.predict.requests import Requests, RequestSource
from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.run.setup import plan_run
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.spec.build import build_spec
from loadgen.sweep import PointLength, exact_rate_offsets, plan_point, point_spec
from metrics.slo import SLO

LIMITS = SchedulerLimits(max_num_seqs=8, max_num_batched_tokens=256, block_size=16, num_blocks=4096)


def _spec(**settings: str | int) -> RunSpec:
    values = run_defaults()
    values.update(tokenizer="bytes", prompt_tokens="64", output_tokens="4", **settings)
    return build_spec(values)[0]


def _capacity_point_offsets(spec: RunSpec, rate: float, length: PointLength) -> tuple[np.ndarray, float]:
    """What `goodput capacity` sends at `rate` with points of `length` (loadgen.sweep.capacity's probe)."""
    plan = plan_point(3, "rate", rate, length, seed=spec.load.seed, role="probe")
    probe = point_spec(spec, plan, run_dir=Path("points/x"), server_url="http://127.0.0.1:9")
    setup = plan_run(probe, Secrets(), offsets=exact_rate_offsets(plan, probe.load.arrival))
    assert setup.schedule is not None
    return setup.schedule.offsets, plan.warmup_s


@pytest.mark.parametrize("rate", [0.7, 3.0, 17.5])
def test_a_predicted_point_sends_what_a_capacity_probe_sends(rate: float) -> None:
    spec = _spec()
    length = PointLength(20.0, None)
    want, warmup = _capacity_point_offsets(spec, rate, length)
    got = RequestSource(spec).at(rate, length)
    np.testing.assert_array_equal(got.offsets, want)
    assert got.warmup_s == warmup == 2.0
    assert int(got.measured().sum()) == round(rate * 18.0)  # the window holds exactly its rate's share
    assert int((~got.measured()).sum()) == round(rate * 2.0)


def test_a_trace_point_replays_the_trace_as_a_probe_does(tmp_path: Path) -> None:
    spec = _spec(trace=str(write_prefix_trace(tmp_path / "t.jsonl", 200)))
    length = PointLength(10.0, None)
    want, warmup = _capacity_point_offsets(spec, 6.0, length)
    got = RequestSource(spec).at(6.0, length)
    np.testing.assert_array_equal(got.offsets, want)
    assert got.warmup_s == warmup == 1.0


def test_without_a_point_every_request_is_measured() -> None:
    got = RequestSource(_spec(requests=30)).at(4.0)
    assert got.warmup_s == 0.0 and bool(got.measured().all()) and got.offsets.size == 30


def test_the_warm_up_is_run_but_left_out_of_the_figures() -> None:
    """Two requests, one in the warm-up: both are run (the second waits behind the first), only the second's
    TTFT is the point's figure, and attainment is of it alone."""
    model = StepModel(fixed_s=0.05, limits=LIMITS)
    prompts, max_tokens = [[1] * 32, [2] * 32], [4, 4]
    both = Requests(prompts, max_tokens, np.array([0.0, 0.01]))
    warm = Requests(prompts, max_tokens, np.array([0.0, 0.01]), warmup_s=0.005)
    slo = SLO(ttft_s=0.06)
    all_in = point(model, 1.0, lambda _rate: both, slo, Fleet())
    measured = point(model, 1.0, lambda _rate: warm, slo, Fleet())
    assert (all_in.requests, measured.requests) == (2, 1)
    assert all_in.attainment == 0.5 and measured.attainment == 0.0  # the first passes, the second does not
    first, second = all_in.latency["ttft"]["p50"], measured.latency["ttft"]["p50"]
    assert first is not None and second is not None and second > first  # the p50 of the one that waited


def test_the_cli_predicts_points_and_refuses_two_lengths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.01, prefill_s=1e-5, decode_seq_s=1e-3, limits=LIMITS).save(model)
    out = tmp_path / "p.json"
    common = ["predict", "--server-model", str(model), "--prompt-tokens", "64", "--output-tokens", "4",
              "--tokenizer", "bytes", "--no-html", "--json", str(out)]
    assert run_cli([*common, "--rates", "3", "--point-duration", "20s"]) == 0
    doc = json.loads(out.read_text())
    assert doc["points"][0]["requests"] == 54  # 3 req/s × (20 s − 2 s of warm-up)
    load = doc["spec"]["load"]
    assert (load["duration_s"], load["requests"], load["warmup_s"]) == (20.0, None, 2.0)
    assert run_cli([*common, "--rates", "3", "--point-duration", "20s", "--duration", "20s"]) == 2
    assert "--point-duration sets each rate's length: leave out --duration and --requests" in capsys.readouterr().err
    assert run_cli([*common, "--rates", "3", "--point-duration", "-1s"]) == 2
    assert "--point-duration" in capsys.readouterr().err


def _measured(kind: str, duration: float | None, requests: int | None, warmup: float) -> Measured:
    load = {"duration_s": duration, "requests": requests, "warmup_s": warmup}
    return Measured(f"runs/{kind}", kind, [], {"load": load}, {}, True)


def test_a_measured_window_unlike_the_predicted_one_is_said() -> None:
    from loadgen.predict.compare import length_note

    points = {"load": {"duration_s": 30.0, "requests": None, "warmup_s": 3.0}}
    plain = {"load": {"duration_s": None, "requests": 100, "warmup_s": 0.0}}
    assert length_note(_measured("capacity", 30.0, None, 3.0), points) is None
    assert length_note(_measured("capacity", 30.0, None, 3.0), plain) == (
        "capacity: each point ran 30s with a 3s warm-up, each predicted rate 100 requests: past the rate a "
        "server sustains its queue grows with the window (--point-duration 30s predicts its points)")
    assert length_note(_measured("run", 30.0, None, 0.0), plain) == (
        "run: the run ran 30s, each predicted rate 100 requests: past the rate a server sustains its queue "
        "grows with the window")
    assert length_note(_measured("sweep", 20.0, 50, 2.0), points) == (
        "sweep: each point ran 20s or 50 requests, whichever ends first with a 2s warm-up, each predicted rate "
        "30s with a 3s warm-up: past the rate a server sustains its queue grows with the window")
    assert length_note(_measured("run", None, None, 0.0), {}) is None  # nothing recorded: nothing said
