"""run.json's typed view (metrics.results.run_view): the golden run's fields, missing keys and values of
another type read as its readers read them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metrics.results import RUN_FILE, PlannedLoad, RunDocument, read_run, read_run_view

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "run"


def test_golden_run_fields(tmp_path: Path) -> None:
    shutil.copy(GOLDEN / RUN_FILE, tmp_path / RUN_FILE)
    run = read_run_view(tmp_path)
    raw = read_run(tmp_path)
    assert run.present and run.has_spec and run.schema_version == 2
    assert run.spec == raw["spec"]
    assert run.schedule_end_s == 1.0942806952647546
    assert run.roofline is not None and run.roofline["gpu"] == "H100-SXM"
    assert run.resolved_ignore_eos is True
    assert run.planned == PlannedLoad("poisson", 20.0, False, None)
    assert run.thresholds == () and run.gate_baseline is None
    assert run.start_unix_s == 1796429902.590892
    assert run.open_loop is True and run.complete is True
    assert not run.aborted and not run.interrupted and run.unwritten_records == 0
    assert run.settings is None and run.settings_slo is None and run.workers_lost is None


def test_missing_file_and_keys(tmp_path: Path) -> None:
    assert read_run_view(tmp_path) == RunDocument()
    (tmp_path / RUN_FILE).write_text("[1, 2]")
    assert read_run_view(tmp_path) == RunDocument()
    run = RunDocument.from_json({"tool_version": "0.1.0"})
    assert run.present and not run.has_spec and run.roofline is None and run.complete is None


def test_schema_1_reads_settings() -> None:
    run = RunDocument.from_json({"settings": {"thresholds": ["ttft_p99<1", 2], "baseline": "base",
                                              "roofline": {"model": "m"}, "slo": ["ttft:1"]},
                                 "workers": {"lost": 1}})
    assert run.thresholds == ("ttft_p99<1", "2") and run.gate_baseline == "base"
    assert run.roofline == {"model": "m"} and run.settings_slo == ["ttft:1"] and run.workers_lost == 1
    # a schema-2 run keeps its gate in the spec, its roofline in `resolved`
    run = RunDocument.from_json({"spec": {"gate": {"thresholds": ["e2e_p50<2"], "baseline": ""}},
                                 "settings": {"thresholds": ["x"], "roofline": {"model": "m"}}})
    assert run.thresholds == ("e2e_p50<2",) and run.gate_baseline is None and run.roofline is None


@pytest.mark.parametrize("key, value", [
    ("start_unix_s", 1), ("start_unix_s", "1.5"), ("complete", "yes"), ("open_loop", 1),
    ("unwritten_records", True), ("write_error", 3), ("schema_version", "2"), ("spec", [1]),
    ("resolved", "x"), ("settings", 3),
])
def test_wrong_types_read_as_missing(key: str, value: object) -> None:
    run = RunDocument.from_json({key: value})
    assert (run.start_unix_s, run.complete, run.open_loop, run.unwritten_records, run.write_error,
            run.schema_version, run.spec, run.schedule_end_s, run.settings) == (
        None, None, None, 0, None, None, None, None, None)


def test_not_json_raises(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text("{")
    with pytest.raises(ValueError):
        read_run_view(tmp_path)
    json.loads((GOLDEN / RUN_FILE).read_text())


def test_summary_runs_lost_workers_count_a_list_only() -> None:
    """summary.json's run.workers.lost is a list of the lost workers; another value is read as none lost
    (a number there made the reader raise TypeError before)."""
    from metrics.results import Run

    assert Run.from_json({"workers": {"lost": [{"worker": 1}, {"worker": 2}]}}).workers_lost == 2
    for lost in (5, "w1", {"worker": 1}, None):
        assert Run.from_json({"workers": {"lost": lost}}).workers_lost == 0
    assert Run.from_json({"workers": 3}).workers_lost == 0
