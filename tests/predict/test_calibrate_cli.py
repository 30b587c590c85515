"""`goodput calibrate` and `goodput predict` end to end on records made by the virtual engine itself:
a known step model → per-chunk times → the fit recovers it; refusals are one line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from loadgen.cli.commands import run_cli
from loadgen.predict.step_model import SchedulerLimits, StepModel, load_model
from loadgen.predict.virtual import ModelStepRunner, make_engine
from metrics.records.record import RequestRecord
from refserver.engine import LLMEngine, SamplingParams

TRUE = StepModel(fixed_s=0.02, prefill_s=5e-5, prefill_ctx_s=0.0, decode_seq_s=4e-4, decode_kv_s=1e-6,
                 limits=SchedulerLimits(max_num_seqs=32, max_num_batched_tokens=2048, num_blocks=8000))


def drive(engine: LLMEngine, runner: ModelStepRunner, arrivals: np.ndarray, prompts: list[int], max_tokens: int,
          on_step: Callable[[], None] | None = None) -> list[RequestRecord]:
    """Run the requests through the virtual engine, each added at its arrival, and record what a client
    would: chunk times per token (`on_step` after each engine step)."""
    n = len(prompts)
    times: dict[int, list[float]] = {i: [] for i in range(n)}
    i = 0
    while i < n or engine.has_unfinished():
        if not engine.has_unfinished():
            runner.clock.t = max(runner.clock.t, float(arrivals[i]))
        while i < n and arrivals[i] <= runner.clock.t:
            engine.add_request(str(i), list(range(i * 7, i * 7 + prompts[i])),
                               SamplingParams(max_tokens=max_tokens, ignore_eos=True), arrival_s=float(arrivals[i]))
            i += 1
        for rid, event in engine.step():
            times[int(rid)].append(event.now_s)
        if on_step is not None:
            on_step()
    return [RequestRecord(id=k, intended_ns=int(arrivals[k] * 1e9), sent_ns=int(arrivals[k] * 1e9),
                          chunk_ns=[int(t * 1e9) for t in ts], chunk_tokens=[1] * len(ts), token_source="server",
                          prompt_tokens=prompts[k], cached_tokens=0,
                          server_chunk_s=[t - float(arrivals[k]) for t in ts]) for k, ts in times.items()]


def _records(rate: float, n: int, seed: int) -> list[RequestRecord]:
    """Run n requests through the virtual engine and record what a client would: chunk times per token."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    prompts = [int(p) for p in rng.integers(32, 1024, n)]
    engine, runner = make_engine(TRUE, max_positions=4096, waiting=n)
    return drive(engine, runner, arrivals, prompts, 24)


def _write_run(path: Path, records: list[RequestRecord]) -> Path:
    path.mkdir(parents=True)
    (path / "records.jsonl").write_bytes(b"".join(r.to_json() + b"\n" for r in records))
    return path


def test_calibrate_recovers_the_model_that_made_the_records(tmp_path: Path) -> None:
    runs = [_write_run(tmp_path / f"r{rate}", _records(rate, 120, seed)) for seed, rate in enumerate((5, 20, 40))]
    out = tmp_path / "server-model.json"
    code = run_cli(["calibrate", *map(str, runs), "--max-num-seqs", "32", "--max-num-batched-tokens", "2048",
                    "--num-blocks", "8000", "--fix", "prefill_ctx_s=0", "--output", str(out)])
    assert code == 0
    fitted = load_model(out)
    assert not fitted.overlap or fitted.fit["forms_residual_rms_s"]["overlapped"] < 1e-4
    assert fitted.fixed_s + fitted.memory_s == pytest.approx(TRUE.fixed_s, rel=0.05)
    assert fitted.decode_seq_s == pytest.approx(TRUE.decode_seq_s, rel=0.10)
    assert fitted.prefill_s == pytest.approx(TRUE.prefill_s, rel=0.10)
    assert fitted.limits == TRUE.limits
    assert set(fitted.fit["runs"]) == {str(r) for r in runs}


@pytest.mark.parametrize(("tokens", "message"), [
    (1, "no engine step can be timed: of 1 requests, 1 had fewer than two content chunks"),  # no step is timed
    (24, "cannot tell apart fixed_s, prefill_s"),  # one request decoding alone: never a prefill beside it
])
def test_calibrate_refuses_runs_that_cannot_identify_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               tokens: int, message: str) -> None:
    record = _records(2, 1, 0)[0]
    record.chunk_ns, record.chunk_tokens = record.chunk_ns[:tokens], record.chunk_tokens[:tokens]  # type: ignore[index]
    record.server_chunk_s = record.server_chunk_s[:tokens]  # type: ignore[index]
    run = _write_run(tmp_path / "r", [record])
    code = run_cli(["calibrate", str(run), "--output", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.json").exists()


def test_predict_writes_one_point_per_rate(tmp_path: Path) -> None:
    model = tmp_path / "m.json"
    TRUE.save(model)
    out = tmp_path / "p.json"
    code = run_cli(["predict", "--server-model", str(model), "--rates", "1,8", "--requests", "40",
                    "--prompt-tokens", "200", "--output-tokens", "16", "--slo", "ttft=200ms", "--json", str(out)])
    assert code == 0
    points = json.loads(out.read_text())["points"]
    assert [p["rate"] for p in points] == [1.0, 8.0]
    # At 1 req/s a request is alone: TTFT = one prefill step of its prompt (200 + the template's tokens).
    assert 0.02 + 200 * 5e-5 <= points[0]["latency_s"]["ttft"]["p50"] <= 0.02 + 220 * 5e-5
    assert points[0]["attainment"] == 1.0


def test_predict_needs_rates_or_capacity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    TRUE.save(model)
    assert run_cli(["predict", "--server-model", str(model)]) == 2
    assert "--rates" in capsys.readouterr().err
    model.write_text('{"schema_version": 9}')
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1"]) == 2
    assert "schema_version 9" in capsys.readouterr().err


def test_predict_capacity_doubles_with_two_replicas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    TRUE.save(model)
    caps = []
    for replicas in ("1", "2"):
        out = tmp_path / f"p{replicas}.json"
        args = ["predict", "--server-model", str(model), "--capacity", "--slo", "ttft=300ms", "--attainment", "0.9",
                "--requests", "60", "--arrival", "constant", "--prompt-tokens", "1500", "--output-tokens", "2",
                "--replicas", replicas, "--json", str(out)]
        assert run_cli(args) == 0
        cap = json.loads(out.read_text())["capacity"]
        assert cap["low"] <= cap["rate"] <= cap["high"]
        caps.append(cap["rate"])
    # Prefill-bound (a 1,500-token prompt takes one 0.095 s step): two replicas take twice the rate, to the
    # search's 1 % tolerance and the 60-request schedule's granularity.
    assert caps[1] == pytest.approx(2 * caps[0], rel=0.05)
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1", "--routing", "random"]) == 2
    assert "--routing must be round-robin or least-loaded" in capsys.readouterr().err


def test_predict_replays_a_trace_and_its_prefix_reuse(tmp_path: Path) -> None:
    from tests.loadgen._traces import reuse_rows, write_mooncake

    trace = write_mooncake(tmp_path / "t.jsonl", reuse_rows(40, gap_ms=400))
    ttft = {}
    for caching in (True, False):
        model = tmp_path / f"m{caching}.json"
        StepModel(fixed_s=0.01, prefill_s=1e-4,
                  limits=SchedulerLimits(max_num_batched_tokens=8192, enable_prefix_caching=caching)).save(model)
        out = tmp_path / f"p{caching}.json"
        assert run_cli(["predict", "--server-model", str(model), "--trace", str(trace), "--rates", "2",
                        "--json", str(out)]) == 0
        point = json.loads(out.read_text())["points"][0]
        assert point["requests"] == 40
        ttft[caching] = point["latency_s"]["ttft"]["p50"]
    # Requests read shared 512-token documents: with the prefix cache most of each prompt is not recomputed.
    assert ttft[True] < 0.7 * ttft[False], ttft


def test_predict_refuses_a_request_the_kv_pool_cannot_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.01, limits=SchedulerLimits(num_blocks=10)).save(model)  # 160 tokens
    code = run_cli(["predict", "--server-model", str(model), "--rates", "1", "--requests", "3",
                    "--prompt-tokens", "300", "--json", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 2 and "does not fit the model's KV pool of 160 tokens" in err
    assert len(err.strip().splitlines()) == 1


def test_predict_prices_the_predicted_capacity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """$2/GPU-hour x 2 GPUs per replica, 2 replicas: the fleet costs $8/hour. At the predicted capacity C
    req/s (the fleet's), a million requests take 1e6 / C s, so cost $8 * 1e6 / (3600 C); each carries its
    16 output tokens (the virtual engine runs every request to its max tokens)."""
    model = tmp_path / "m.json"
    TRUE.save(model)
    out = tmp_path / "p.json"
    args = ["predict", "--server-model", str(model), "--capacity", "--slo", "ttft=300ms", "--requests", "60",
            "--arrival", "constant", "--prompt-tokens", "1500", "--output-tokens", "16", "--replicas", "2",
            "--gpu-hour-cost", "2", "--gpus-per-replica", "2", "--target-rate", "100", "--json", str(out)]
    assert run_cli(args) == 0
    doc = json.loads(out.read_text())
    rate, cost = doc["capacity"]["rate"], doc["cost"]
    assert cost["per_million_requests"] == pytest.approx(8 * 1e6 / (3600 * rate))
    assert cost["per_million_output_tokens"] == pytest.approx(8 * 1e6 / (3600 * rate * 16))
    assert cost["target"]["replicas"] == int(np.ceil(100 / (rate / 2) - 1e-9))
    assert "per million requests" in capsys.readouterr().out
    assert run_cli([*args[:-8], "--json", str(out)]) == 0  # the same without cost flags: no cost block
    assert "cost" not in json.loads(out.read_text())
    rates_only = ["predict", "--server-model", str(model), "--rates", "1", "--gpu-hour-cost", "2"]
    assert run_cli(rates_only) == 2
    assert "add --capacity" in capsys.readouterr().err
