"""`goodput predict --measured` on input it cannot predict at or read: a point offered no finite positive rate
is left out and said, a malformed file is one line naming it (exit 2), --rates takes finite rates only,
and a directory judged by another SLO is marked so on the attainment chart. The model and measured
points are tests.predict.test_predict_html's (every step 0.1 s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli.commands import run_cli
from loadgen.predict.step_model import StepModel
from tests.predict.test_predict_html import PREDICT, figures, spec_json, summary, trace, write_sweep


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    StepModel(fixed_s=0.1).save(path)
    return path


def _sweep_with_values(path: Path, values: list[Any]) -> Path:
    """write_sweep's directory with its points' offered rates replaced (their summaries stay)."""
    write_sweep(path, spec_json())
    doc = json.loads((path / "sweep.json").read_text())
    for point, value in zip(doc["points"], values, strict=True):
        point["row"]["value"] = value
    (path / "sweep.json").write_text(json.dumps(doc).replace('"INF"', "1e400"))
    return path


def test_points_without_a_finite_positive_rate_are_left_out_and_said(tmp_path: Path, model: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # Of two points, one offered at a rate a prediction cannot run at: only the other is predicted.
    for bad, shown in ((None, "None"), (-3, "-3"), (0, "0"), ("INF", "inf")):
        sweep = _sweep_with_values(tmp_path / f"sw-{shown}", [bad, 2.0])
        out = tmp_path / f"p-{shown}.json"
        assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64",
                        "--measured", str(sweep), "--json", str(out)]) == 0, capsys.readouterr().err
        doc = json.loads(out.read_text())
        assert [p["rate"] for p in doc["points"]] == [2.0]
        assert [p["rate"] for p in doc["measured"][0]["points"]] == [2.0]
        printed = capsys.readouterr()
        assert f"has no finite positive offered rate ({shown})" in printed.out.replace("1e400", "inf")
        assert "RuntimeWarning" not in printed.err and "--rate" not in printed.out + printed.err


@pytest.mark.parametrize(("offered", "shown"), [(0, "0"), (1e400, "inf")])
def test_a_run_offered_no_finite_positive_rate_is_left_out(tmp_path: Path, model: Path, offered: float, shown: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    doc = summary(1.0, 9, 10, ttft=0.08, tpot=0.125, e2e=0.5, tps=5.0)
    doc["throughput"]["offered_rps"] = offered
    (run / "summary.json").write_text(json.dumps(doc))
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1", *PREDICT, "--measured", str(run),
                    "--json", str(out)]) == 0
    assert [p["rate"] for p in json.loads(out.read_text())["points"]] == [1.0]
    printed = capsys.readouterr()
    assert f"note: run: point run has no finite positive offered rate ({shown}): left out" in printed.out
    assert "RuntimeWarning" not in printed.err


@pytest.mark.parametrize("what", ["sweep value", "summary latency"])
def test_a_malformed_measured_file_is_one_line_naming_it(tmp_path: Path, model: Path, what: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    if what == "sweep value":
        path, name = write_sweep(tmp_path / "sw", spec_json()), "sweep.json"
        doc = json.loads((path / "sweep.json").read_text())
        doc["points"] = 7  # not a list of points
        (path / "sweep.json").write_text(json.dumps(doc))
    else:
        path, name = tmp_path / "run", "summary.json"
        path.mkdir()
        (path / name).write_text(json.dumps({**summary(1.0, 9, 10, 0.08, 0.125, 0.5, 5.0), "latency": 3}))
    code = run_cli(["predict", "--server-model", str(model), "--rates", "1", *PREDICT, "--measured", str(path),
                    "--json", str(tmp_path / "p.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"--measured {path}" in err and name in err, err


@pytest.mark.parametrize("rates", ["inf", "1,nan", "1e400"])
def test_rates_must_be_finite(tmp_path: Path, model: Path, rates: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["predict", "--server-model", str(model), "--rates", rates, *PREDICT,
                    "--json", str(tmp_path / "p.json")]) == 2
    assert "--rates needs finite positive rates" in capsys.readouterr().err


def test_attainment_judged_by_another_slo_is_marked_on_the_chart(tmp_path: Path, model: Path) -> None:
    """The sweep judged TTFT <= 300 ms, the prediction 150 ms: its attainment is drawn, named 'another SLO',
    never as a plain measured point beside the predicted line; its latencies are still held against it."""
    sweep = write_sweep(tmp_path / "sw", spec_json(slo_ttft_s=0.3))
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64",
                    "--measured", str(sweep), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["measured"][0]["slo_compared"] is False
    charts = figures(out.with_suffix(".html"))
    names = [t["name"] for t in charts["SLO attainment against the offered rate"]["data"]]
    assert "measured sw (another SLO)" in names and "measured sw" not in names
    assert trace(charts["SLO attainment against the offered rate"], "measured sw (another SLO)")["y"] == \
        pytest.approx([90.0, 100.0])
    assert trace(charts["TTFT p50, p90 and p99 against the offered rate"], "measured sw TTFT p50")["y"] == \
        pytest.approx([80.0, 200.0])


def test_a_sweep_point_without_a_rate_does_not_stop_the_capacity_comparison(tmp_path: Path, model: Path) -> None:
    sweep = _sweep_with_values(tmp_path / "sw", [None, 2.0])
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64", "--capacity",
                    "--measured", str(sweep), "--json", str(out)]) == 0
    entry = json.loads(out.read_text())["measured"][0]
    assert [p["rate"] for p in entry["points"]] == [2.0] and entry["capacity"] is not None
