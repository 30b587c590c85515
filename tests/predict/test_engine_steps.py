"""The reference server's own engine steps: the engine records each step as it ran it, `goodput run`
collects them beside its /metrics scrapes (engine_steps.jsonl), and `goodput calibrate` fits from them
when a run has them, saying which source each run's steps came from."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest

from loadgen.cli.commands import run_cli
from loadgen.predict.calibrate import fit_steps
from loadgen.predict.engine_steps import read_engine_steps
from loadgen.predict.step_model import PARAMS, SchedulerLimits, StepModel, load_model
from loadgen.predict.virtual import make_engine
from loadgen.run.engine_steps import EngineSteps
from metrics.records.record import RequestRecord
from refserver.engine.runner_base import ScheduledBatch
from refserver.engine.step_log import StepLog
from tests.predict.test_calibrate_cli import drive

TRUE = StepModel(fixed_s=0.003, prefill_s=4e-5, prefill_ctx_s=2e-8, decode_seq_s=3e-4, decode_kv_s=2e-7,
                 limits=SchedulerLimits(max_num_seqs=16, max_num_batched_tokens=512, num_blocks=4000))
MAX_TOKENS = 12
Seen = list[list[tuple[int, int]]]  # per executed batch: (tokens, start position) per scheduled sequence


def _serve(log: StepLog) -> httpx.Client:
    """A client whose GET of the steps URL answers what the server's route answers for this log."""
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=log.after(int(request.url.params.get("after", "0"))))
    return httpx.Client(transport=httpx.MockTransport(handler))


def _run(rate: float, n: int, seed: int, out: Path, *, collect: bool = True,
         seen: Seen | None = None) -> tuple[list[RequestRecord], list[int]]:
    """n requests through the virtual engine (steps of TRUE's time) with a step log, polled as `goodput run`
    polls it (the first poll before the first request, a last one after); engine_steps.jsonl in `out`."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    prompts = [int(p) for p in rng.integers(32, 1500, n)]
    engine, runner = make_engine(TRUE, max_positions=4096, waiting=n)
    engine.step_log = StepLog()
    if seen is not None:
        execute = runner.execute

        def spy(batch: ScheduledBatch) -> list[int]:
            seen.append([(len(s.token_ids), s.start_pos) for s in batch.seqs])
            return execute(batch)
        runner.execute = spy  # type: ignore[method-assign]
    client, collector = _serve(engine.step_log), EngineSteps("http://127.0.0.1:1/v1/goodput/steps")
    engine.step_log.record(ScheduledBatch(), 0.0, 1.0)  # a step before the run: not the run's
    collector.poll(client)

    def poll_every_50() -> None:
        if engine.num_steps % 50 == 0:
            collector.poll(client)

    records = drive(engine, runner, arrivals, prompts, MAX_TOKENS, poll_every_50)
    collector.poll(client)
    out.mkdir(parents=True)
    if collect:
        collector.save(out)
    (out / "records.jsonl").write_bytes(b"".join(r.to_json() + b"\n" for r in records))
    return records, prompts


def test_the_step_log_records_each_batch_the_engine_ran(tmp_path: Path) -> None:
    seen: Seen = []
    _, prompts = _run(8, 40, 0, tmp_path / "r", seen=seen)
    steps = read_engine_steps(tmp_path / "r")
    assert steps is not None and len(steps) == len(seen)  # every step of the run, none from before it
    for step, batch in zip(steps, seen, strict=True):
        f = step.features
        assert f.prefill_tokens + f.decode_seqs == sum(n for n, _ in batch)
        assert f.decode_seqs == sum(1 for n, _ in batch if n == 1)
        assert f.kv_tokens == sum(pos + 1 for n, pos in batch if n == 1)
        assert f.prefill_ctx == sum(n * (pos + n) for n, pos in batch if n > 1)
        assert step.duration_s == pytest.approx(TRUE.step_s(f), abs=1e-9)
    computed = sum(s.features.prefill_tokens + s.features.decode_seqs for s in steps)
    assert computed == sum(prompts) + len(prompts) * (MAX_TOKENS - 1)  # every prompt token, every decode
    assert any(s.features.prefill_tokens and not s.features.decode_seqs for s in steps)  # prefill-only steps


def test_the_ring_says_how_many_steps_a_late_reader_missed() -> None:
    log = StepLog(capacity=4)
    for k in range(10):
        log.record(ScheduledBatch(), float(k), k + 0.5)
    body = log.after(3)
    assert [row[0] for row in body["steps"]] == [7, 8, 9, 10]
    assert body["last"] == 10 and body["dropped"] == 3
    assert log.after(10) == {"fields": body["fields"], "steps": [], "last": 10, "dropped": 0}


def test_a_steps_time_takes_the_loops_time_before_the_next_busy_step(tmp_path: Path) -> None:
    log = StepLog()
    log.record(ScheduledBatch(), 0.0, 0.010, busy=True)  # work left: the next step's lead is the loop's
    log.record(ScheduledBatch(), 0.013, 0.020, busy=False)  # idle after it: the next lead is not timed
    log.record(ScheduledBatch(), 5.0, 5.004, busy=True)
    assert [row[3] for row in log.after(0)["steps"]] == [None, pytest.approx(0.003), None]
    collector = EngineSteps("http://127.0.0.1:1/v1/goodput/steps")
    collector.poll(_serve(log))
    log.record(ScheduledBatch(), 5.006, 5.010)
    for k in range(3):
        log.record(ScheduledBatch(), 6.0 + k, 6.0 + k + 0.01, busy=True)
    collector.poll(_serve(log))
    assert collector.save(tmp_path) is not None
    steps = read_engine_steps(tmp_path)
    assert [s.duration_s for s in steps or []] == pytest.approx([0.004, 0.01 + 0.99, 0.01 + 0.99, 0.01])


def test_the_fit_from_engine_steps_recovers_every_parameter(tmp_path: Path) -> None:
    steps = []
    for k, rate in enumerate((4, 12, 30)):
        _run(rate, 60, k, tmp_path / f"r{k}")
        steps += read_engine_steps(tmp_path / f"r{k}") or []
    fit = fit_steps(steps)
    for name in PARAMS:
        assert fit.values[name] == pytest.approx(getattr(TRUE, name), rel=1e-6, abs=1e-12), name


def test_calibrate_prefers_the_engine_steps_and_says_which_runs_had_them(tmp_path: Path) -> None:
    runs = [tmp_path / f"r{rate}" for rate in (4, 12, 30)]
    for k, (rate, run) in enumerate(zip((4, 12, 30), runs, strict=True)):
        _run(rate, 60, k, run, collect=k != 2)
    out = tmp_path / "server-model.json"
    args = ["--max-num-seqs", "16", "--max-num-batched-tokens", "512", "--num-blocks", "4000", "--output", str(out)]
    assert run_cli(["calibrate", *map(str, runs), *args]) == 0
    fitted = load_model(out)
    assert [fitted.fit["runs"][str(r)]["step_source"] for r in runs] == ["engine", "engine", "chunks"]
    engine_only = tmp_path / "engine-only.json"
    assert run_cli(["calibrate", *map(str, runs[:2]), *args[:-1], str(engine_only)]) == 0
    exact = load_model(engine_only)
    assert not exact.overlap
    for name in ("fixed_s", "prefill_s", "prefill_ctx_s", "decode_seq_s", "decode_kv_s"):
        assert getattr(exact, name) == pytest.approx(getattr(TRUE, name), rel=1e-6), name
    rebuilt = json.loads((runs[2] / "records.jsonl").read_text().splitlines()[0])
    assert rebuilt["server_chunk_s"]  # the third run still calibrates from its chunk times


def test_calibrate_says_the_source_of_each_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [tmp_path / "a", tmp_path / "b"]
    _run(12, 60, 0, runs[0])
    _run(30, 60, 1, runs[1], collect=False)
    assert run_cli(["calibrate", *map(str, runs), "--max-num-batched-tokens", "512", "--fix", "prefill_ctx_s=0",
                    "--output", str(tmp_path / "m.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(f"{runs[0]}:" in line and "(the server's engine steps)" in line for line in lines)
    assert any(f"{runs[1]}:" in line and "(steps rebuilt from chunk times)" in line for line in lines)


def test_a_malformed_steps_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    _run(12, 30, 0, run)
    (run / "engine_steps.jsonl").write_text('{"fields": ["seq"]}\n[1]\n')
    code = run_cli(["calibrate", str(run), "--output", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2 and "engine_steps.jsonl is malformed" in err
