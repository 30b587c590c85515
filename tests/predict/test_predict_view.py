"""predict.json through its typed view: what `goodput predict` writes reads back into typed fields (the
predicted points, the capacity and its band, each --measured comparison) and writes back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from loadgen.cli.commands import run_cli
from loadgen.predict.step_model import StepModel
from metrics.results import PredictView
from tests.predict.test_predict_html import PREDICT, spec_json, write_capacity, write_sweep


def test_predict_json_reads_into_typed_fields_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.1).save(model)
    sweep, cap = write_sweep(tmp_path / "sw", spec_json()), write_capacity(tmp_path / "cap")
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--prompt-tokens", "64", "--capacity",
                    "--gpu-hour-cost", "2", "--measured", str(sweep), "--measured", str(cap), "--json", str(out),
                    "--no-html"]) == 0
    written = out.read_text()
    view = PredictView.from_json(json.loads(written))
    assert json.dumps(view.to_json(), indent=2, allow_nan=False) + "\n" == written
    # Every step lasts 0.1 s (fixed_s) and a request is 4 output tokens: its TTFT is at least one step.
    assert view.points and all((p.latency_s["ttft"]["p50"] or 0) >= 0.1 - 1e-9 for p in view.points)
    assert view.capacity is not None and view.capacity.attainment == 0.9
    assert view.capacity.band.low <= view.capacity.band.rate <= view.capacity.band.high
    assert view.cost is not None and view.cost["gpu_hour_cost"] == 2.0
    assert view.measured is not None and [m.kind for m in view.measured] == ["sweep", "capacity"]
    found = view.measured[1].capacity
    assert found is not None and (found.measured.rate, found.measured.upper) == (12.0, 14.0)  # capacity.json's
    assert [p.rate for p in view.measured[0].points] == [1.0, 2.0]  # the sweep's offered rates
