"""predict.html and `goodput predict --measured`: the page holds the predicted points and each measured
directory's points (read from the figure JSON embedded in the page), every measured point is predicted at
its own rate, the errors are the hand-derived ones, a measured workload that differs is said, and a bad
--measured path is one line and exit 2.

The server model's every step lasts 0.1 s. At 1 or 2 req/s of constant arrivals with 4 output tokens a
request finds the engine idle (it is done 0.4 s after it arrives): TTFT = one step = 0.1 s, TPOT = 0.1 s,
E2E = 4 steps = 0.4 s, and the 10 requests' 40 tokens take (n − 1) / rate + 0.4 s.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli.commands import run_cli
from loadgen.cli.run import run_defaults
from loadgen.predict.compare import compare
from loadgen.predict.measured import read_measured
from loadgen.predict.step_model import StepModel
from loadgen.spec.build import build_spec
from loadgen.sweep.document import SweepState
from loadgen.sweep.points import PointLength, plan_point
from metrics.results import PredictedBand, PredictedPoint, PredictView, SweepMode
from tests.exporters._browser import browser_page, chromium_path, open_report
from tests.exporters._sweep_docs import capacity_doc

PREDICT = ["--requests", "10", "--arrival", "constant", "--output-tokens", "4", "--slo", "ttft=150ms"]
LENGTH = PointLength(10.0, None)


def spec_json(prompt_tokens: str = "64", slo_ttft_s: float = 0.15, rate: float = 4.0) -> dict[str, Any]:
    values = run_defaults()
    values.update(prompt_tokens=prompt_tokens, output_tokens="4", arrival="constant", rate=rate, requests=10,
                  slo=[f"ttft={slo_ttft_s * 1e3:g}ms"])
    return build_spec(values)[0].to_json()


def summary(rps: float, good: int, measured: int, ttft: float, tpot: float, e2e: float, tps: float) -> dict[str, Any]:
    """A point's summary.json, as much as a row reads: p90 = 1.5 × p50, p99 = 2 × p50."""
    latency = {key: {"count": measured, "p50": v, "p90": v * 1.5, "p99": v * 2.0}
               for key, v in (("ttft_s", ttft), ("itl_s", tpot), ("tpot_s", tpot), ("e2e_s", e2e))}
    return {"run": {"complete": True, "client_saturated": False, "client_saturation": {"lag_p99_s": 0.001}},
            "requests": {"in_window": measured, "in_window_failed": 0, "sent": measured},
            "throughput": {"offered_rps": rps, "achieved_rps": rps, "requests_per_s": rps, "output_tokens_per_s": tps},
            "goodput": {"good": good, "attainment": good / measured, "requests_per_s": rps * good / measured},
            "latency": latency}


# rate → the measured point's summary
MEASURED = {1.0: summary(1.0, 9, 10, ttft=0.08, tpot=0.125, e2e=0.5, tps=5.0),
            2.0: summary(2.0, 10, 10, ttft=0.2, tpot=0.1, e2e=0.32, tps=8.0)}


def write_sweep(path: Path, spec: dict[str, Any]) -> Path:
    """A sweep directory as goodput sweep leaves it: sweep.json and each point's run.json."""
    from loadgen.spec.run_spec import RunSpec

    plans = [plan_point(i, "rate", rate, LENGTH, seed=0) for i, rate in enumerate(MEASURED, start=1)]
    state = SweepState(spec=RunSpec.from_json(spec), mode=SweepMode(rates=tuple(MEASURED)), length=LENGTH, points=plans)
    from loadgen.sweep.rows import point_row

    for plan in plans:
        state.rows[plan.label] = point_row(plan, status="done", code=0, summary=MEASURED[plan.value])
        (path / "points" / plan.label).mkdir(parents=True)
        (path / "points" / plan.label / "run.json").write_text(json.dumps({"spec": spec, "resolved": {"ignore_eos": True}}))
    (path / "sweep.json").write_text(json.dumps(state.view().to_json()))
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    StepModel(fixed_s=0.1).save(path)
    return path


def figures(page: Path) -> dict[str, dict[str, Any]]:
    """Each chart's figure JSON embedded in the page, by title."""
    found = re.findall(r'<script type="application/json" id="fig-\d+">(.*?)</script>', page.read_text(), re.S)
    return {f["layout"]["title"]["text"]: f for f in (json.loads(s.replace("<\\/", "</")) for s in found)}


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in figure["data"] if t["name"] == name)


def test_the_page_plots_the_prediction_and_the_measured_points(tmp_path: Path, model: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep(tmp_path / "sw", spec_json())
    out = tmp_path / "out" / "predict.json"
    assert run_cli(["predict", "--server-model", str(model), "--rates", "4", *PREDICT, "--prompt-tokens", "64",
                    "--measured", str(sweep), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [p["rate"] for p in doc["points"]] == [1.0, 2.0, 4.0]  # each measured rate predicted too
    assert "WARNING" not in capsys.readouterr().out
    charts = figures(out.with_suffix(".html"))
    ttft = charts["TTFT p50, p90 and p99 against the offered rate"]
    predicted = trace(ttft, "predicted TTFT p50")
    assert predicted["x"] == [1.0, 2.0, 4.0]
    assert predicted["y"] == pytest.approx([p["latency_s"]["ttft"]["p50"] * 1e3 for p in doc["points"]], rel=1e-5)
    assert predicted["y"][:2] == pytest.approx([100.0, 100.0], rel=1e-5)  # one 0.1 s step
    measured = trace(ttft, "measured sw TTFT p99")
    assert measured["x"] == [1.0, 2.0] and measured["y"] == pytest.approx([160.0, 400.0], rel=1e-5)
    attainment = charts["SLO attainment against the offered rate"]
    assert trace(attainment, "predicted attainment")["y"][:2] == [100.0, 100.0]
    assert trace(attainment, "measured sw")["y"] == pytest.approx([90.0, 100.0])
    tokens = charts["Output tokens/s against the offered rate"]
    assert trace(tokens, "predicted output tokens/s")["y"][:2] == pytest.approx([40 / 9.4, 40 / 4.9], rel=1e-5)
    assert trace(tokens, "measured sw output tokens/s")["y"] == [5.0, 8.0]


def test_errors_per_rate_are_the_hand_derived_ones(tmp_path: Path, model: Path) -> None:
    sweep = write_sweep(tmp_path / "sw", spec_json())
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64",
                    "--measured", str(sweep), "--json", str(out)]) == 0
    entry = json.loads(out.read_text())["measured"][0]
    assert entry["workload_differences"] == [] and entry["notes"] == []
    at1, at2 = entry["points"]
    # predicted 0.1 s against measured p50 0.08, p90 0.12, p99 0.16
    assert [at1["error_pct"]["ttft"][p] for p in ("p50", "p90", "p99")] == pytest.approx([25.0, -100 / 6, -37.5])
    assert at1["error_pct"]["tpot"]["p50"] == pytest.approx(-20.0)  # 0.1 against 0.125
    assert at1["error_pct"]["e2e"]["p50"] == pytest.approx(-20.0)  # 0.4 against 0.5
    assert at1["attainment_error_pp"] == pytest.approx(10.0)  # 100 % against 9 of 10
    assert at2["error_pct"]["ttft"]["p50"] == pytest.approx(-50.0)  # 0.1 against 0.2
    assert at2["error_pct"]["e2e"]["p50"] == pytest.approx(25.0)  # 0.4 against 0.32
    assert at2["attainment_error_pp"] == pytest.approx(0.0)
    html = out.with_suffix(".html").read_text()
    assert "+25.0 %" in html and "-37.5 %" in html and "+10.0 pp" in html


def test_the_capacity_error_against_a_capacity_search(tmp_path: Path) -> None:
    """capacity.json's capacity is 12 req/s (bracket 12-14 at 90 %); a predicted 13.2 is +10 %."""
    measured = read_measured(write_capacity(tmp_path / "cap"))
    assert sorted({r.rate for r in measured.rows}) == [8.0, 12.0, 14.0, 16.0]
    predicted = {r.rate: PredictedPoint.from_json({
        "latency_s": {m: {p: 0.1 for p in ("p50", "p90", "p99")} for m in ("ttft", "tpot", "e2e")},
        "attainment": 0.95, "output_tokens_per_s": 100.0}) for r in measured.rows}
    band = PredictedBand.from_json({"rate": 13.2, "low": 12.5, "high": 13.9})
    entry = compare(measured, predicted, spec=spec_json(), slo={"ttft_s": 0.15}, target=0.9, band=band).to_json()
    assert entry["capacity"]["measured"]["rate"] == 12.0 and entry["capacity"]["measured"]["upper"] == 14.0
    assert entry["capacity"]["error_pct"] == pytest.approx(10.0)
    # Another SLO: attainment and capacity are not compared, and the page's notes say why.
    other = compare(measured, predicted, spec=spec_json(), slo={"ttft_s": 0.3}, target=0.9, band=band).to_json()
    assert other["capacity"]["error_pct"] is None
    assert all(p["attainment_error_pp"] is None for p in other["points"])
    assert any("another SLO" in n for n in other["notes"])
    # Another attainment target: the capacities are not compared.
    assert compare(measured, predicted, spec=spec_json(), slo={"ttft_s": 0.15}, target=0.99,
                   band=band).to_json()["capacity"]["error_pct"] is None


def test_a_measured_run_of_another_workload_is_said(tmp_path: Path, model: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run-512"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(MEASURED[1.0]))
    (run / "run.json").write_text(json.dumps({"spec": spec_json(prompt_tokens="uniform:256:768", rate=1.0), "open_loop": True}))
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64",
                    "--measured", str(run), "--json", str(out)]) == 0
    said = "prompt tokens: measured uniform:256:768, predicted 64"
    assert f"WARNING: run-512 measured another workload than the one predicted ({said})" in capsys.readouterr().out
    entry = json.loads(out.read_text())["measured"][0]
    assert entry["kind"] == "run" and entry["workload_differences"] == [said]
    assert [p["rate"] for p in entry["points"]] == [1.0]  # the run's own arrival rate
    html = out.with_suffix(".html").read_text()
    assert "Another workload." in html and said in html
    ttft = figures(out.with_suffix(".html"))["TTFT p50, p90 and p99 against the offered rate"]
    assert trace(ttft, "measured run-512 (another workload) TTFT p50")["y"] == pytest.approx([80.0])


@pytest.mark.parametrize("what", ["missing", "empty", "file"])
def test_a_bad_measured_path_is_one_line_and_exit_2(tmp_path: Path, model: Path, what: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nowhere"
    if what == "empty":
        path.mkdir()
    elif what == "file":
        path.write_text("{}")
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--measured", str(path),
                    "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--measured {path}" in err
    assert not out.exists()


def test_no_html_writes_only_the_json(tmp_path: Path, model: Path) -> None:
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1", *PREDICT, "--no-html",
                    "--json", str(out)]) == 0
    assert out.is_file() and not out.with_suffix(".html").exists()


def write_capacity(path: Path) -> Path:
    """A capacity directory whose search found 12 req/s (bracket 12-14) at 90 % of TTFT <= 150 ms."""
    doc = capacity_doc([(8.0, 200, 200), (16.0, 100, 200), (12.0, 185, 200), (12.0, 198, 200), (14.0, 150, 200)]).to_json()
    doc["slo"] = {"ttft_s": 0.15}
    doc["spec"] = spec_json()
    path.mkdir()
    (path / "capacity.json").write_text(json.dumps(doc))
    return path


def test_the_page_draws_the_predicted_capacity_its_band_and_the_measured_one(tmp_path: Path, model: Path) -> None:
    cap = write_capacity(tmp_path / "cap")
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64", "--capacity",
                    "--measured", str(cap), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    band, entry = doc["capacity"], doc["measured"][0]
    assert entry["capacity"]["error_pct"] == pytest.approx((band["rate"] - 12.0) / 12.0 * 100)
    chart = figures(out.with_suffix(".html"))["SLO attainment against the offered rate, target 90 %"]
    assert trace(chart, f"predicted capacity {band['rate']:.3g} req/s")["x"] == pytest.approx([band["rate"]] * 2,
                                                                                               rel=1e-5)
    assert trace(chart, "measured cap: capacity 12 req/s")["x"] == [12.0, 12.0]
    if band["high"] > band["low"]:
        shape = chart["layout"]["shapes"][0]
        assert (shape["x0"], shape["x1"]) == (band["low"], band["high"])
    measured = trace(chart, "measured cap")
    assert measured["x"] == [8.0, 16.0, 12.0, 12.0, 14.0]  # every run at its own rate
    assert measured["y"] == pytest.approx([100.0, 50.0, 92.5, 99.0, 75.0])


@pytest.mark.slow
@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install chromium)")
def test_predict_html_draws_offline_in_a_browser(tmp_path: Path, model: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    sweep, cap = write_sweep(tmp_path / "sw", spec_json()), write_capacity(tmp_path / "cap")
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1,4,8", *PREDICT, "--prompt-tokens", "64",
                    "--capacity", "--measured", str(sweep), "--measured", str(cap), "--json", str(out)]) == 0
    shot = tmp_path / "predict.png"
    with browser_page() as (page, loaded):
        open_report(page, loaded, out.with_suffix(".html"))
        assert loaded.console_errors == [] and loaded.page_errors == [] and loaded.network == []
        assert len(loaded.charts) == 5
        assert [c["title"] for c in loaded.charts if not (c["drawn"] and c["marks"] > 0)] == []
        page.screenshot(path=str(shot), full_page=True)
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")


def test_what_is_not_compared_is_noted(tmp_path: Path, model: Path) -> None:
    """A closed-loop run has no offered rate to predict at; a run that did not ask for exactly max_tokens may
    have stopped early, where every predicted request runs to its max tokens: both are said."""
    closed, free = tmp_path / "closed", tmp_path / "free"
    for path, run in ((closed, {"spec": spec_json(), "open_loop": False, "resolved": {"ignore_eos": True}}),
                      (free, {"spec": spec_json(rate=1.0), "open_loop": True, "resolved": {"ignore_eos": False}})):
        path.mkdir()
        (path / "summary.json").write_text(json.dumps(MEASURED[1.0]))
        (path / "run.json").write_text(json.dumps(run))
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64", "--measured",
                    str(closed), "--measured", str(free), "--json", str(out)]) == 0
    first, second = json.loads(out.read_text())["measured"]
    assert first["points"] == [] and first["notes"] == ["closed ran closed loop (no offered rate to predict at): left out"]
    assert [p["rate"] for p in second["points"]] == [1.0] and second["points"][0]["attainment_error_pp"] == pytest.approx(10.0)
    assert second["notes"] == ["free did not ask for exactly max_tokens (no --ignore-eos): a request may have ended "
                               "early, where the prediction runs every request to its max tokens"]


def test_the_predicted_cost_table_names_predict_json(tmp_path: Path) -> None:
    from exporters.html.page import Table
    from exporters.html.predict_page import predict_page

    doc = {"server_model": "m.json", "points": [], "replicas": 1, "routing": "round-robin",
           "capacity": {"attainment": 0.9, "rate": 4.0, "low": 3.5, "high": 4.5},
           "cost": {"rate": 4.0, "gpu_hour_cost": 2.0, "gpus_per_replica": 1, "cost_per_hour_per_replica": 2.0,
                    "mean_output_tokens": 32.0, "per_million_requests": 2.0 * 1e6 / (3600 * 4.0),
                    "per_million_output_tokens": 2.0 * 1e6 / (3600 * 4.0 * 32)}}
    tables = {i.caption: i for s in predict_page(PredictView.from_json(doc)).sections for i in s.items
              if isinstance(i, Table)}
    cost = tables["Cost at the capacity (predict.json 'cost')"]
    assert ["per million requests", "$138.89"] in cost.rows
    assert "known only from below" not in cost.note  # a predicted capacity is not a search's lower bound
    assert tables["Capacity at 90 % attainment, 1 replica(s)"].rows[0][1:3] == ["4 req/s", "3.5 – 4.5 req/s"]


def test_a_searchs_workload_is_its_probes_not_its_ceilings(tmp_path: Path) -> None:
    """A capacity search's spec, and its ceiling point's run.json, hold the closed loop the ceiling ran; its
    probes ran the arrivals compared: those are checked, so a search of the predicted workload differs in
    nothing, and one whose probes ran Poisson arrivals differs in its arrivals only."""
    closed = spec_json()
    closed["load"]["arrival"].update(kind="concurrency", concurrency=8)
    for probe_arrival, expected in (("constant", []), ("poisson", ["arrivals: measured poisson, predicted constant"])):
        doc = capacity_doc([(8.0, 200, 200), (12.0, 190, 200)], ceiling_rps=20.0).to_json()
        doc.update(slo={"ttft_s": 0.15}, spec=closed)
        path = tmp_path / probe_arrival
        for row in doc["points"]:
            probe = spec_json()
            probe["load"]["arrival"]["kind"] = probe_arrival
            (path / "points" / row["label"]).mkdir(parents=True)
            run = {"spec": closed if row["rate"] is None else probe}
            (path / "points" / row["label"] / "run.json").write_text(json.dumps(run))
        (path / "capacity.json").write_text(json.dumps(doc))
        measured = read_measured(path)
        assert [r.rate for r in measured.rows] == [8.0, 12.0]
        predicted = {r.rate: PredictedPoint.from_json({
            "latency_s": {m: {p: 0.1 for p in ("p50", "p90", "p99")} for m in ("ttft", "tpot", "e2e")},
            "attainment": 1.0}) for r in measured.rows}
        entry = compare(measured, predicted, spec=spec_json(), slo={"ttft_s": 0.15}, target=0.9, band=None).to_json()
        assert entry["workload_differences"] == expected

