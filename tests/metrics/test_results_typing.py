"""The results contract reads and writes typed JSON: its views parse what `json.loads` gave once, as the
recursive `Json` type, and an untyped JSON object (`dict[str, Any]`, `Mapping[str, Any]`,
`dict[str, object]`, `Mapping[str, object]`) is left in metrics/results only where listed, with its reason.
A malformed document still reads the way it always has: the same one-line errors, a value of another type
read as missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metrics.results import (
    CAPACITY_FILE,
    SWEEP_FILE,
    CapacityView,
    PointRow,
    SweepView,
    read_capacity,
    read_capacity_points,
    read_document,
    read_sweep,
    run_or_none,
    summary_or_none,
    write_capacity,
)
from tests.untyped_json import aliases, counts

SCOPE = ("metrics/results",)

ALLOWED = {
    # json_object: a section built as a TypedDict (a Mapping[str, object] to the type checker), checked once
    "metrics/results/summary_parse.py": 1,
}


def test_untyped_json_objects_are_left_only_where_listed() -> None:
    assert counts(SCOPE) == ALLOWED
    assert aliases(SCOPE) == []


def _write(path: Path, doc: object) -> None:
    path.write_text(json.dumps(doc))


def test_a_malformed_sweep_json_gives_the_same_one_line_errors(tmp_path: Path) -> None:
    _write(tmp_path / SWEEP_FILE, {"kind": "sweep", "points": {"01-rate-1": {}}})  # points not a list
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / SWEEP_FILE} is not a sweep.json written by")):
        read_document(tmp_path, SWEEP_FILE, "sweep")
    # a point that is not an object, a plan without a label and a row whose label is a number: all pass the
    # label check; the view leaves out the points without a row
    _write(tmp_path / SWEEP_FILE, {"kind": "sweep", "points": [3, {"plan": {}, "row": {"label": 7}},
                                                               {"plan": {"label": "01-rate-1"}}]})
    view = read_sweep(tmp_path)
    assert [p.row.label for p in view.points] == ["7"] and view.points[0].plan is None
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / SWEEP_FILE} is malformed (a point without its row)")):
        read_sweep(tmp_path, every_row=True)
    _write(tmp_path / SWEEP_FILE, {"kind": "sweep", "points": [{"plan": {"label": None}, "row": {}}]})
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / SWEEP_FILE}: point label 'None' is not a point")):
        read_document(tmp_path, SWEEP_FILE, "sweep")
    _write(tmp_path / SWEEP_FILE, {"kind": "sweep", "points": [{"row": {"label": "a/b"}}]})
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / SWEEP_FILE}: point label 'a/b' is not a point")):
        read_sweep(tmp_path)


def test_a_malformed_capacity_json_gives_the_same_one_line_errors(tmp_path: Path) -> None:
    _write(tmp_path / CAPACITY_FILE, {"kind": "capacity", "capacity": [], "points": []})
    with pytest.raises(ValueError, match=re.escape("is not a capacity.json written by goodput capacity")):
        read_capacity(tmp_path)
    _write(tmp_path / CAPACITY_FILE, {"kind": "capacity", "capacity": {}, "points": [{"label": ".."}]})
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / CAPACITY_FILE}: point label '..' is not a point")):
        read_capacity(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / CAPACITY_FILE}: point label '..' is not a point")):
        read_capacity_points(tmp_path)


def test_values_of_another_type_read_as_missing_in_the_spec_slo_and_cost(tmp_path: Path) -> None:
    spec = {"metrics": {"slo": {"ttft_s": 0.5, "e2e_s": "2", "tpot_s": 1, "itl_s": None}, "lag_threshold_s": "x"}}
    sweep = SweepView.from_json({"mode": {"auto": {"points": 4, "concurrency": "8"}}, "spec": spec,
                                 "points": [{"plan": [], "row": {"label": "01-rate-1"}}, {"row": []}]})
    assert sweep.slo == {"ttft_s": 0.5, "tpot_s": 1} and isinstance(sweep.slo["tpot_s"], int)
    assert sweep.lag_threshold_s is None and sweep.mode.auto_points == 4 and sweep.mode.auto_concurrency is None
    assert [p.row.role for p in sweep.points] == ["point"] and SweepView.from_json({"spec": [1]}).spec == {}
    cost = {"gpu_hour_cost": "two", "basis": 3}  # kept as found, written back unchanged
    doc = CapacityView.from_json({"capacity": {}, "slo": {"ttft_s": True, "e2e_s": 2.0}, "cost": cost,
                                  "points": [{"label": "01-rate-1", "rate": "1"}]})
    assert doc.slo == {"e2e_s": 2.0} and doc.cost == cost and doc.points == (PointRow("01-rate-1", "", None, "", has_rate=True),)
    write_capacity(tmp_path, doc)
    assert json.loads((tmp_path / CAPACITY_FILE).read_text())["cost"] == cost
    assert CapacityView.from_json({"capacity": {}, "cost": [cost]}).cost is None


def test_the_json_readers_answer_an_object_or_none(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text("[1]")
    (tmp_path / "run.json").write_text('{"model": "m", "nested": {"a": [1, 2.5, null]}}')
    assert summary_or_none(tmp_path) is None
    assert run_or_none(tmp_path) == {"model": "m", "nested": {"a": [1, 2.5, None]}}
