"""Outlier steps left out of the step-time fit: steps merged in pairs (D and K doubled, one step's
duration) and stalls pull a plain least-squares fit's slopes; the trimmed fit recovers the parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadgen.cli.calibrate import FEW_PREFILL_STEPS
from loadgen.cli.commands import run_cli
from loadgen.predict.calibrate import fit_best
from loadgen.predict.expand import split_chunks
from loadgen.predict.robust import left_out_prefill, outliers, trim
from loadgen.predict.step_model import StepFeatures, StepModel, load_model
from loadgen.predict.steps import Step, reconstruct
from metrics.records import read_records
from tests.predict.test_calibrate_cli import _records, _write_run

TRUE = StepModel(fixed_s=0.085, prefill_s=2e-5, decode_kv_s=6.4e-7)


def _steps(n: int, bad: float, seed: int = 0) -> list[Step]:
    """Steps of the TRUE model with 1 % noise; a share `bad` of them measured wrong."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(n):
        d = int(rng.integers(1, 50))
        p = int(rng.integers(0, 2)) * int(rng.integers(64, 512 - d))
        f = StepFeatures(p, float(p * p), d, d * int(rng.integers(100, 600)))
        t = TRUE.step_s(f) * (1 + 0.01 * rng.standard_normal())
        if rng.random() < bad:  # two steps clustered as one, or a stall
            f, t = (StepFeatures(2 * p, 2 * f.prefill_ctx, 2 * d, 2 * f.kv_tokens), t) if rng.random() < 0.5 \
                else (f, t + float(rng.uniform(0.05, 0.3)))
        steps.append(Step(f, t))
    return steps


def test_outlier_steps_are_left_out_and_the_slopes_recovered() -> None:
    steps = _steps(400, bad=0.15)
    plain, _ = fit_best(steps, {"prefill_ctx_s": 0.0})
    fit = trim(fit_best, steps, {"prefill_ctx_s": 0.0}).fit
    assert plain.values["decode_kv_s"] != pytest.approx(TRUE.decode_kv_s, rel=0.2)  # what the outliers do
    assert fit.values["decode_kv_s"] == pytest.approx(TRUE.decode_kv_s, rel=0.1)
    assert fit.values["fixed_s"] == pytest.approx(TRUE.fixed_s, rel=0.02)
    assert 320 <= fit.points < 400


def test_clean_steps_lose_almost_nothing() -> None:
    steps = _steps(200, bad=0.0, seed=1)
    fit = trim(fit_best, steps, {"prefill_ctx_s": 0.0}).fit
    assert fit.points >= 196 and fit.values["decode_kv_s"] == pytest.approx(TRUE.decode_kv_s, rel=0.05)
    exact = [Step(s.features, TRUE.step_s(s.features)) for s in steps]
    assert not outliers(fit_best(exact)[0], exact).any()  # a perfect fit (MAD 0) leaves nothing out


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "calibration-3s"



def test_calibrate_says_when_most_prefill_steps_were_left_out(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The recorded 3 s calibration (tests/fixtures/calibration-3s): its chunk times place 31 prefill steps
    among 166, and the decode steps' spread leaves 28 of them out. Fitted on the 3 left, its model took a
    1,024-token prompt's prefill steps as 14 % longer than the server ran them: calibrate says so."""
    steps = [s for rate in ("rate-4", "rate-10")
             for s in reconstruct(split_chunks(read_records(str(FIXTURE / rate / "records.jsonl"))),
                                  max_batched_tokens=512)]
    trimmed = trim(fit_best, steps)
    assert left_out_prefill(steps, trimmed.kept) == (28, 31)
    out = tmp_path / "server-model.json"
    code = run_cli(["calibrate", str(FIXTURE / "rate-4"), str(FIXTURE / "rate-10"), "--max-num-seqs", "64",
                    "--max-num-batched-tokens", "512", "--num-blocks", "2000", "--output", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    err = captured.err
    assert "note: the prefill cost rests on 3 steps (of 31 that carry prefill tokens, 28 left out" in err
    assert "chunk times place prefills loosely" in err
    assert "prefill steps: 3 of 31 fitted (28 left out as outliers)" in captured.out
    assert load_model(out).fit["prefill_steps"] == {"all": 31, "left_out": 28}



def test_calibrate_is_quiet_when_the_prefill_steps_were_kept(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_write_run(tmp_path / f"r{rate}", _records(rate, 120, seed)) for seed, rate in enumerate((5, 20, 40))]
    out = tmp_path / "server-model.json"
    assert run_cli(["calibrate", *map(str, runs), "--max-num-seqs", "32", "--max-num-batched-tokens", "2048",
                    "--num-blocks", "8000", "--fix", "prefill_ctx_s=0", "--output", str(out)]) == 0
    assert "prefill cost rests on" not in capsys.readouterr().err
    counts = load_model(out).fit["prefill_steps"]
    assert counts["all"] - counts["left_out"] >= FEW_PREFILL_STEPS
