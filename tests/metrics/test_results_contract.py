"""The results contract's readers: what each variant answers for a missing, damaged or foreign document, and
that a document written by its writer reads back as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metrics.results import (
    CAPACITY_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    SWEEP_FILE,
    SWEEP_SCHEMA_VERSION,
    CapacityView,
    PointRow,
    SweepLength,
    SweepMode,
    SweepPoint,
    SweepView,
    check_not_newer,
    load_summary,
    load_sweep,
    read_capacity,
    read_document,
    read_run,
    read_summary,
    read_sweep,
    run_or_none,
    summary_or_none,
    write_capacity,
    write_run,
    write_summary,
    write_sweep,
)


def test_run_json_missing_damaged_and_foreign(tmp_path: Path) -> None:
    assert read_run(tmp_path) == {} and run_or_none(tmp_path) is None
    (tmp_path / RUN_FILE).write_text("[1, 2]")
    assert read_run(tmp_path) == {} and run_or_none(tmp_path) is None
    (tmp_path / RUN_FILE).write_text("{}")
    assert read_run(tmp_path) == {} and run_or_none(tmp_path) == {}
    (tmp_path / RUN_FILE).write_text('{"model": "m"')
    with pytest.raises(ValueError):
        read_run(tmp_path)
    assert run_or_none(tmp_path) is None


def test_summary_json_missing_damaged_and_foreign(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"no summary.json in {tmp_path}: run `goodput report {tmp_path}` first"):
        read_summary(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_summary(tmp_path)
    assert summary_or_none(tmp_path) is None
    (tmp_path / SUMMARY_FILE).write_text('"text"')
    with pytest.raises(ValueError, match="is not a JSON object"):
        read_summary(tmp_path)
    assert load_summary(tmp_path) == "text" and summary_or_none(tmp_path) is None
    (tmp_path / SUMMARY_FILE).write_text("{")
    with pytest.raises(ValueError):
        read_summary(tmp_path)
    assert summary_or_none(tmp_path) is None


def test_sweep_and_capacity_documents_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"cannot read {tmp_path / SWEEP_FILE}: "):
        read_document(tmp_path, SWEEP_FILE, "sweep")
    with pytest.raises(ValueError, match=f"{tmp_path} is not a capacity search \\(capacity.json: "):
        read_capacity(tmp_path)
    (tmp_path / SWEEP_FILE).write_text("{")
    with pytest.raises(ValueError, match="is not valid JSON"):
        read_document(tmp_path, SWEEP_FILE, "sweep")
    with pytest.raises(ValueError):
        load_sweep(tmp_path)
    (tmp_path / SWEEP_FILE).write_text(json.dumps({"kind": "capacity", "points": []}))
    with pytest.raises(ValueError, match=re.escape("is not a sweep.json written by goodput sweep")):
        read_document(tmp_path, SWEEP_FILE, "sweep")
    (tmp_path / CAPACITY_FILE).write_text(json.dumps({"kind": "capacity", "points": []}))
    with pytest.raises(ValueError, match=re.escape("is not a capacity.json written by goodput capacity")):
        read_capacity(tmp_path)


def test_a_newer_schema_is_refused_an_older_or_equal_one_is_not() -> None:
    check_not_newer({"schema_version": SWEEP_SCHEMA_VERSION}, SWEEP_FILE, SWEEP_SCHEMA_VERSION)
    check_not_newer({"schema_version": 0}, SWEEP_FILE, SWEEP_SCHEMA_VERSION)
    for bad in ({"schema_version": SWEEP_SCHEMA_VERSION + 1}, {"schema_version": "1"}, {}):
        with pytest.raises(ValueError, match="is newer than this goodput understands"):
            check_not_newer(bad, SWEEP_FILE, SWEEP_SCHEMA_VERSION)


def test_each_writer_writes_what_its_reader_reads(tmp_path: Path) -> None:
    run, summary = {"schema_version": 2, "model": "m", "complete": True}, {"schema_version": 2, "requests": {}}
    write_run(tmp_path, run)
    write_summary(tmp_path, summary)
    capacity = CapacityView.from_json({"capacity": {}, "points": [{"label": "01-rate-1"}]})
    write_capacity(tmp_path, capacity)
    sweep = SweepView(SweepMode(rates=(1.0,)), SweepLength(10.0, None, None),
                      (SweepPoint(None, PointRow("01-rate-1", "rate", 1.0, "pending")),))
    write_sweep(tmp_path, sweep)
    assert read_run(tmp_path) == run and read_summary(tmp_path) == summary
    assert read_capacity(tmp_path) == capacity and [r.label for r in capacity.points] == ["01-rate-1"]
    assert read_sweep(tmp_path) == sweep
    assert (tmp_path / RUN_FILE).read_text() == json.dumps(run, indent=2) + "\n"
    assert (tmp_path / CAPACITY_FILE).is_file() and not list(tmp_path.glob(".*.tmp"))
