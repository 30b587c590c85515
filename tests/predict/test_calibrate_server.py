"""`goodput calibrate` against a vLLM-like run directory (tests.predict._vllm_run): the scheduler limits read
from vllm:cache_config_info, a flag overriding them, prefill_s and prefill_ctx_s identified by the server's
prefill-time histogram where the chunk times cannot, the per-run checks, and the refusals.

The truth: step_s = 0.02 + 5e-5·P + 2e-8·PC + 4e-4·D + 1e-6·K. Requests come in bursts on an idle engine,
so every prefill runs in a step where nothing decodes: no chunk times it, and the chunk times alone cannot
identify prefill_s or prefill_ctx_s. A burst of prompts of 171 and 208 tokens prefills in one step of
0.02 + 5e-5·379 + 2e-8·(171² + 208²) = 0.0404 s (PC: each prompt × its context, the prompt itself), which
is both requests' prefill time in vLLM's sense (first scheduled to first token)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadgen.cli.commands import run_cli
from loadgen.predict.step_model import SchedulerLimits, StepFeatures, StepModel, load_model
from tests.predict._vllm_run import simulate_bursts, write_vllm_run

TRUE = StepModel(fixed_s=0.02, prefill_s=5e-5, prefill_ctx_s=2e-8, decode_seq_s=4e-4, decode_kv_s=1e-6,
                 limits=SchedulerLimits(max_num_seqs=32, max_num_batched_tokens=2048, block_size=32, num_blocks=3000,
                                        enable_prefix_caching=False))
FLAGS = ["--max-num-seqs", "32", "--max-num-batched-tokens", "2048"]  # never published by vLLM


def _bursts(base: int, step: int) -> list[list[int]]:
    """12 bursts of 1, 2 or 3 requests; prompt lengths base + step·(0..4)."""
    return [[base + step * ((b * 3 + i) % 5) for i in range(1 + b % 3)] for b in range(12)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("vllm")
    return [write_vllm_run(root / "short", TRUE, _bursts(60, 37))[0], write_vllm_run(root / "long", TRUE, _bursts(300, 71))[0]]


def _calibrate(tmp_path: Path, runs: list[Path], *extra: str) -> tuple[int, Path]:
    out = tmp_path / "m.json"
    return run_cli(["calibrate", *map(str, runs), *FLAGS, *extra, "--output", str(out)]), out


def _by_hand_prefill_mean(bursts: list[list[int]]) -> float:
    """Every request of a burst waits the burst's one prefill step: the mean over requests of that step."""
    per_request = [0.02 + 5e-5 * sum(b) + 2e-8 * sum(p * p for p in b) for b in bursts for _ in b]
    return float(np.mean(per_request))


def test_the_fixture_holds_what_vllm_would_report(runs: list[Path]) -> None:
    assert _bursts(60, 37)[:2] == [[60], [171, 208]]
    section = json.loads((runs[0] / "server_prometheus.json").read_text())
    prefill = section["histograms"]["prefill_s"]
    assert prefill["metric"] == "vllm:request_prefill_time_seconds"
    assert prefill["count"] == 24  # the run's requests only: the 'before' scrape's traffic is subtracted
    assert prefill["mean"] == pytest.approx(_by_hand_prefill_mean(_bursts(60, 37)), rel=1e-9)
    _, truth = simulate_bursts(TRUE, [[171, 208]], gap_s=1.0, max_tokens=4, sample_every_s=0.5)
    assert truth.prefill_s == pytest.approx({0: 0.0404001, 1: 0.0404001})  # the docstring's burst, by hand
    assert section["cache_config"]["num_gpu_blocks"] == "3000"


def test_the_limits_are_read_from_cache_config_info(tmp_path: Path, runs: list[Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _calibrate(tmp_path, runs)
    assert code == 0
    fitted = load_model(out)
    assert fitted.limits == TRUE.limits  # block size 32, 3,000 blocks, no prefix caching: none of them defaults
    assert fitted.fit["limits_source"] == {"max_num_seqs": "flag", "max_num_batched_tokens": "flag",
                                           "block_size": "server", "num_blocks": "server",
                                           "enable_prefix_caching": "server"}
    assert "num_blocks 3000 (server)" in capsys.readouterr().out


def test_a_flag_overrides_the_server(tmp_path: Path, runs: list[Path]) -> None:
    code, out = _calibrate(tmp_path, runs, "--block-size", "16", "--num-blocks", "5000", "--prefix-caching")
    assert code == 0
    limits = load_model(out).limits
    assert (limits.block_size, limits.num_blocks, limits.enable_prefix_caching) == (16, 5000, True)
    assert load_model(out).fit["limits_source"]["num_blocks"] == "flag"
    code, out = _calibrate(tmp_path, runs, "--no-server-metrics", "--fix", "prefill_s=5e-5", "--fix", "prefill_ctx_s=2e-8")
    assert code == 0  # the server not read: its limits neither
    assert load_model(out).limits == SchedulerLimits(max_num_seqs=32, max_num_batched_tokens=2048)


def test_the_server_prefill_time_identifies_what_the_chunk_times_cannot(
        tmp_path: Path, runs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _calibrate(tmp_path, runs)
    assert code == 0
    fitted = load_model(out)
    for name in ("fixed_s", "prefill_s", "prefill_ctx_s", "decode_seq_s", "decode_kv_s"):
        assert getattr(fitted, name) == pytest.approx(getattr(TRUE, name), rel=1e-3), name
    assert fitted.fit["server_rows"] == {"parameters": ["prefill_s", "prefill_ctx_s"],
                                         "runs": sorted(map(str, runs)), "weight": "sqrt(distinct prefill steps)",
                                         "exact": True}
    # the steps (as the console counts them) apart from the two server rows
    assert (fitted.fit["points"], fitted.fit["aggregate_rows"]) == (360, 2)
    printed = capsys.readouterr().out
    assert "prefill_s, prefill_ctx_s: from the server's mean prefill time of 2 run(s)" in printed
    assert "360 steps + 2 server rows" in printed
    # Two rows for two unknowns: each run's mean is met by construction, so it is not shown as a check.
    assert printed.count("ms (fitted)") == 2 and "prefill 35.91 ms (model" not in printed
    code, _ = _calibrate(tmp_path, runs, "--no-server-metrics")
    err = capsys.readouterr().err
    assert code == 2 and "cannot tell apart" in err and "prefill_s" in err and "the server's prefill-time histogram (vllm:request_prefill_time_seconds" in err
    code, _ = _calibrate(tmp_path, runs[:1])  # one run: one row cannot give two parameters
    err = capsys.readouterr().err
    assert code == 2 and "the server's mean prefill time (one row per run) was fitted too" in err
    code, out = _calibrate(tmp_path, runs[:1], "--fix", "prefill_ctx_s=2e-8")
    assert code == 0 and load_model(out).prefill_s == pytest.approx(5e-5, rel=1e-3)


def test_the_server_check_per_run(tmp_path: Path, runs: list[Path]) -> None:
    code, out = _calibrate(tmp_path, runs)
    assert code == 0
    check = load_model(out).fit["runs"][str(runs[0])]["server"]
    hand = _by_hand_prefill_mean(_bursts(60, 37))
    assert check["prefill_mean_s"]["server"] == pytest.approx(hand, rel=1e-9)
    assert check["prefill_mean_s"]["model"] == pytest.approx(hand, rel=1e-3)
    decode = check["decode_per_token_s"]  # each decoding request waits one step per token after its first
    assert decode["server"] == pytest.approx(decode["chunks"], rel=1e-6)
    assert decode["model"] == pytest.approx(decode["chunks"], rel=1e-3)
    assert check["queue_mean_s"] == 0.0  # every burst is scheduled in the step it arrives
    batch = check["batch"]
    assert batch["running"] == pytest.approx(batch["steps_imply"]) and batch["scrapes"] >= 5
    assert 1.0 <= batch["running"] <= 3.0  # bursts of 1 to 3 requests
    assert batch["waiting"] == 0.0


def test_runs_of_two_server_configurations_are_refused(tmp_path: Path, runs: list[Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = write_vllm_run(tmp_path / "other", replace(TRUE, limits=replace(TRUE.limits, num_blocks=9000)),
                           _bursts(300, 71))[0]
    code, out = _calibrate(tmp_path, [runs[0], other])
    err = capsys.readouterr().err
    assert code == 2 and "the runs' servers differ in num_gpu_blocks (3000 in" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    code, out = _calibrate(tmp_path, [runs[0], other], "--num-blocks", "3000")  # a flag settles it
    assert code == 0 and load_model(out).limits.num_blocks == 3000


@pytest.mark.parametrize(("change", "reason"), [
    ({"chunk_tokens": None, "output_tokens": 40, "output_tokens_estimated": False}, "24 carried several tokens"),
    ({"chunk_tokens": None, "output_tokens": 9, "output_tokens_estimated": False},
     "24 had fewer tokens than content chunks"),
    ({"token_source": "estimate_token_events", "output_tokens_estimated": True},
     "24 had no count of tokens per chunk (the server sent no usage)"),
])
def test_runs_without_a_timeable_step_are_refused(tmp_path: Path, runs: list[Path], capsys: pytest.CaptureFixture[str],
                                                  change: dict[str, object], reason: str) -> None:
    """A server that streams several tokens per chunk (or whose tokens per chunk are unknown): its histograms
    are still there, but means per run are no steps, so calibrate says why rather than fit them alone."""
    run = tmp_path / "multi"
    run.mkdir()
    for name in ("server_prometheus.json", "server_metrics.jsonl", "run.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    lines = []
    for line in (runs[0] / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "chunk_ns" in change:  # 16 tokens in 8 chunks, at the record's own times
            change = {**change, "chunk_ns": rec["chunk_ns"][1::2]}
        lines.append(json.dumps({**rec, **change}))
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    code, out = _calibrate(tmp_path, [run])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and not out.exists()
    assert "no engine step can be timed: of 24 requests, " + reason in err
    assert "the server's histograms alone give means per run, not steps" in err
    assert "--continuous-usage" not in err  # already goodput run's default: no flag would help
    assert ("merged by the client or the server" in err) == ("several tokens" in reason)


def test_cache_config_labels_and_the_decode_fallback() -> None:
    from loadgen.predict.server_run import decode_per_token, parse_cache_config

    # vLLM publishes str() of every CacheConfig field: "None" before the KV cache is sized.
    assert parse_cache_config({"block_size": "16", "num_gpu_blocks": "None", "enable_prefix_caching": "True",
                               "swap_space": "4"}) == {"block_size": 16, "enable_prefix_caching": True}
    # 10 requests, 2 s of decode, 210 tokens: 2 / (210 - 10) = 10 ms per token after the first.
    section = {"histograms": {"decode_s": {"count": 10, "sum": 2.0}, "itl_s": {"count": 4, "sum": 0.2}},
               "counters": {"generation_tokens": {"delta": 210}}}
    assert decode_per_token(section) == pytest.approx(0.01)
    del section["counters"]  # no generation counter: the inter-token latency histogram's mean
    assert decode_per_token(section) == pytest.approx(0.05)


def test_a_metrics_endpoint_without_vllm_figures_gives_limits_only(tmp_path: Path) -> None:
    from loadgen.predict.server_run import read_server_run

    (tmp_path / "server_prometheus.json").write_text(json.dumps({
        "available": True, "block_size": 64, "histograms": {}, "counters": {}, "absent": []}))
    run = read_server_run(tmp_path)
    assert run is not None and run.cache_config == {"block_size": 64} and not run.has_figures
    (tmp_path / "server_prometheus.json").write_text(json.dumps({"available": False}))  # fewer than two scrapes
    assert read_server_run(tmp_path) is None


def _copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


PIN = ("--fix", "prefill_s=5e-5", "--fix", "prefill_ctx_s=2e-8")


@pytest.mark.parametrize(("file", "change", "named"), [
    ("server_prometheus.json", lambda d: d.update(histograms=[]), "histograms is not an object"),
    ("server_prometheus.json", lambda d: d["histograms"]["prefill_s"].update(sum=None),
     "histogram prefill_s has no numeric count and sum"),
    ("server_prometheus.json", lambda d: d["counters"]["generation_tokens"].update(delta="12"),
     "counters.generation_tokens.delta is not a number"),
    ("server_prometheus.json", lambda d: d.update(cache_config=["x"]), "cache_config is not an object"),
    ("server_metrics.jsonl", lambda d: d.update(running=None), "gauge line(s) with a time, running or waiting"),
])
def test_a_malformed_server_figure_is_taken_as_absent_and_said(
        tmp_path: Path, runs: list[Path], capsys: pytest.CaptureFixture[str], file: str,
        change: Any, named: str) -> None:
    run = _copy_run(runs[0], tmp_path / "bad")
    if file.endswith(".jsonl"):
        lines = [json.loads(line) for line in (run / file).read_text().splitlines()]
        for line in lines:
            if "running" in line:
                change(line)
        (run / file).write_text("".join(json.dumps(line) + "\n" for line in lines))
    else:
        doc = json.loads((run / file).read_text())
        change(doc)
        (run / file).write_text(json.dumps(doc))
    code, out = _calibrate(tmp_path, [run], *PIN, "--block-size", "32", "--num-blocks", "3000")
    err = capsys.readouterr().err
    assert code == 0 and out.exists(), err
    notes = err.strip().splitlines()
    assert len(notes) == 1 and named in notes[0] and file in notes[0] and notes[0].endswith("taken as absent")


def test_no_prefill_replay_without_server_figures(tmp_path: Path, runs: list[Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay serves only the server's prefill row and check: a run without them is not replayed."""
    from loadgen.predict import prefill

    calls: list[int] = []
    real = prefill.clusters
    monkeypatch.setattr(prefill, "clusters", lambda *a, **k: calls.append(1) or real(*a, **k))
    code, _ = _calibrate(tmp_path, runs, "--no-server-metrics", *PIN)
    assert code == 0 and calls == []
    code, _ = _calibrate(tmp_path, runs)
    assert code == 0 and len(calls) == 2


def test_the_prefill_hint_is_given_only_for_a_prefill_parameter(
        tmp_path: Path, runs: list[Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from loadgen.predict import calibrate as cal

    def refuse(*_: Any, **__: Any) -> Any:
        raise cal.IdentifyError("the runs cannot tell apart decode_seq_s", ("decode_seq_s",))

    monkeypatch.setattr(cal, "fit_best", refuse)
    code, _ = _calibrate(tmp_path, runs)
    err = capsys.readouterr().err
    assert code == 2 and "decode_seq_s" in err and "prefill" not in err


def test_a_server_count_other_than_the_usable_requests_is_said() -> None:
    from loadgen.predict.server_check import check_line, server_check
    from loadgen.predict.server_run import ServerRun

    prefills = [(StepFeatures(100, 1e4, 0, 0),)] * 4
    check = server_check(TRUE, [], prefills, [], ServerRun(prefill_mean_s=0.03, prefill_count=6.0))
    pre = check["prefill_mean_s"]
    assert pre["model"] == pytest.approx(0.02 + 5e-5 * 100 + 2e-8 * 1e4)  # by hand: 25.2 ms
    assert pre["note"] == "the server timed 6 prefills, the chunk times place 4: the means are over different requests"
    assert "prefill 30.00 ms (model 25.20 ms)" in check_line(check) and pre["note"] in check_line(check)
    same = server_check(TRUE, [], prefills, [], ServerRun(prefill_mean_s=0.0252, prefill_count=4.0), fitted=True)
    assert "note" not in same["prefill_mean_s"] and "prefill 25.20 ms (fitted)" in check_line(same)
    # A row of an exact fit that the model still misses (a parameter held at 0) is shown against the model.
    missed = server_check(TRUE, [], prefills, [], ServerRun(prefill_mean_s=0.03, prefill_count=4.0), fitted=True)
    assert "prefill 30.00 ms (model 25.20 ms)" in check_line(missed)
