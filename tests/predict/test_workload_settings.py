"""What `goodput predict` says of a workload: the settings that apply to it, and a file named two ways is one
file (loadgen.predict.measured.workload_differences, loadgen.predict.report.workload_text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.predict.measured import workload_differences
from loadgen.predict.report import workload_text
from metrics.results import Json

FIXED_256: Json = {"kind": "fixed", "a": 256.0, "b": 0.0}
FIXED_128: Json = {"kind": "fixed", "a": 128.0, "b": 0.0}


def workload(**settings: Json) -> dict[str, Json]:
    base: dict[str, Json] = {"trace": None, "dataset": None, "prompt_tokens": FIXED_256, "output_tokens": FIXED_128}
    base.update(settings)
    return base


def spec(**settings: Json) -> dict[str, Json]:
    return {"workload": workload(**settings), "load": {"arrival": {"kind": "poisson"}}}


def test_one_trace_named_relative_and_absolute_is_the_same_workload(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.jsonl").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    assert workload_differences(spec(trace="t.jsonl"), spec(trace=str(tmp_path / "t.jsonl"))) == []
    assert workload_differences(spec(dataset="./t.jsonl"), spec(dataset=str(tmp_path / "t.jsonl"))) == []


def test_two_files_alike_are_still_two_workloads(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n")
    assert workload_differences(spec(trace=str(a)), spec(trace=str(b))) == [f"trace: measured {b}, predicted {a}"]
    gone = str(tmp_path / "gone.jsonl")  # a file no longer there: its name is all there is to compare
    assert workload_differences(spec(trace=gone), spec(trace=gone)) == []
    assert workload_differences(spec(trace=str(a)), spec(trace=gone)) == [f"trace: measured {gone}, predicted {a}"]


def test_a_traces_rows_set_the_lengths_so_the_length_settings_are_not_said(tmp_path: Path) -> None:
    trace = str(tmp_path / "t.jsonl")
    other = spec(trace=trace, prompt_tokens={"kind": "fixed", "a": 1024.0, "b": 0.0})
    assert workload_differences(spec(trace=trace), other) == []
    assert workload_text(workload(trace=trace)) == f"trace {trace}"
    # without a trace the lengths are what is predicted, and said
    assert workload_text(workload()) == "prompt tokens 256, output tokens 128"
    assert workload_differences(spec(), spec(prompt_tokens={"kind": "fixed", "a": 1024.0, "b": 0.0})) == [
        "prompt tokens: measured 1024, predicted 256"]
