"""Thresholds on a capacity search (capacity.json), no server: every operator, baselines, no data, the
verdict lines, JUnit and Markdown, and the refusals (a run threshold on a capacity, a capacity threshold
on a run)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli
from loadgen.sweep.capacity_doc import is_capacity_dir, read_capacity
from loadgen.sweep.gate import gate_capacity_dir
from metrics.gate.thresholds import parse_threshold


def _capacity_dir(path: Path, *, rate: float | None, upper: float | None = 7.1, requests: int = 2940,
                  complete: bool = True) -> Path:
    path.mkdir(parents=True)
    doc: dict[str, Any] = {
        "kind": "capacity", "schema_version": 1, "complete": complete, "interrupted": not complete,
        "capacity": {"rate": rate, "upper": upper, "attainment": 0.94 if rate else None, "interval": None,
                     "status": "bracketed", "reason": "", "points": 7, "requests": requests, "target": 0.9,
                     "confidence": 0.95, "interval_method": "wilson", "tolerance": 0.05, "min_rate": None,
                     "max_rate": None, "max_points": 12},
        "rates": [], "points": [], "notes": [],
    }
    (path / "capacity.json").write_text(json.dumps(doc))
    return path


def _gate(directory: Path, *thresholds: str, **kwargs: Any) -> int:
    return gate_capacity_dir(directory, thresholds=list(thresholds), config=kwargs.get("config"),
                             baseline=kwargs.get("baseline"), slo=kwargs.get("slo"), junit=kwargs.get("junit"),
                             markdown=kwargs.get("markdown"))


@pytest.mark.parametrize(("expr", "passes"), [
    ("capacity:rate >= 6", True), ("capacity:rate >= 6.3", True), ("capacity:rate > 6.3", False),
    ("capacity:rate < 7", True), ("capacity:rate <= 6.2", False), ("capacity:rate == 6.3", True),
    ("capacity:rate != 6.3", False), ("capacity:upper < 8", True), ("capacity:attainment >= 90%", True),
    ("capacity:points <= 6", False), ("capacity:requests < 3000", True),
])
def test_every_operator_and_aggregation(expr: str, passes: bool, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=6.3)
    assert _gate(cap, expr) == (0 if passes else 99)
    out = capsys.readouterr().out
    assert f"{'PASS' if passes else 'FAIL'} {expr}  measured" in out


def test_relative_to_a_baseline_capacity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main, cand = _capacity_dir(tmp_path / "main", rate=6.6), _capacity_dir(tmp_path / "cand", rate=6.3)
    assert _gate(cand, "capacity:rate >= baseline * 0.95", baseline=main) == 0  # 6.3 >= 6.27
    assert "limit 6.27/s (baseline 6.6/s)" in capsys.readouterr().out
    assert _gate(cand, "capacity:rate >= baseline - 0.2", baseline=main) == 99
    with pytest.raises(ValueError, match="pass --baseline"):
        _gate(cand, "capacity:rate >= baseline * 0.95")
    with pytest.raises(ValueError, match=r"--baseline: .* is not a capacity search"):
        _gate(cand, "capacity:rate >= baseline * 0.95", baseline=tmp_path / "nothing")


def test_no_capacity_is_no_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    none = _capacity_dir(tmp_path / "none", rate=None)
    assert _gate(none, "capacity:rate >= 6") == 99
    assert "measured no data" in capsys.readouterr().out
    assert _gate(none, "capacity:rate >= 6 | nodata=pass") == 0
    main = _capacity_dir(tmp_path / "main", rate=6.0)
    assert _gate(main, "capacity:rate >= baseline", baseline=none) == 99
    assert "baseline has no data" in capsys.readouterr().out


def test_junit_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=6.3)
    junit, md = tmp_path / "cap.xml", tmp_path / "cap.md"
    assert _gate(cap, "capacity:rate >= 6", "capacity:rate >= 7", junit=junit, markdown=md) == 99
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == 2 and cases[1].find("failure") is not None
    assert "capacity:rate >= 7" in md.read_text()
    assert "thresholds: 1 of 2 failed" in capsys.readouterr().out


def test_config_file_thresholds(tmp_path: Path) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=6.3)
    config = tmp_path / "gate.yaml"
    config.write_text("thresholds:\n  - capacity:rate >= 6\n  - expr: capacity:upper < 5\n    nodata: pass\n")
    assert _gate(cap, config=config) == 99


def test_incomplete_search_is_judged_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=6.3, complete=False)
    assert _gate(cap, "capacity:rate >= 6") == 0
    assert "incomplete capacity search" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "needle"), [
    ({"thresholds": ["ttft:p(99) < 1s"]}, "is about a run"),
    ({"thresholds": []}, "no thresholds"),
    ({"thresholds": ["capacity:rate >= 6"], "slo": ["ttft=1s"]}, "--slo re-judges a run"),
    ({"thresholds": ["capacity{cache:none}:rate >= 6"]}, "not per bucket"),
    ({"thresholds": ["capacity:p(99) >= 6"]}, "unknown aggregation"),
    ({"thresholds": ["capacity:rate >= 6ms"]}, "does not fit"),
])
def test_refusals(args: dict[str, Any], needle: str, tmp_path: Path) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=6.3)
    with pytest.raises(ValueError, match=needle):
        gate_capacity_dir(cap, thresholds=args["thresholds"], config=None, baseline=None, slo=args.get("slo"),
                          junit=None, markdown=None)


def test_a_run_refuses_capacity_thresholds_before_sending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = run_cli(["run", "--url", "http://127.0.0.1:9", "--model", "m", "--output", str(out),
                    "--threshold", "capacity:rate >= 6"])
    assert code == 2 and not out.exists()
    assert "result of a capacity search, not of a run" in capsys.readouterr().err
    assert run_cli(["gate", str(tmp_path), "--threshold", "capacity:rate >= 6"]) == 2


def test_capacity_directory_detection(tmp_path: Path) -> None:
    cap = _capacity_dir(tmp_path / "cap", rate=1.0)
    assert is_capacity_dir(cap) and not is_capacity_dir(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "capacity.json").write_text('{"kind": "sweep"}')
    with pytest.raises(ValueError, match=r"not a capacity\.json"):
        read_capacity(tmp_path / "other")
    assert parse_threshold("capacity:rate >= 6").query.of_capacity
    assert not parse_threshold("goodput:rate >= 6").query.of_capacity


def test_goodput_gate_on_a_capacity_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Needs the capacity branch of `goodput gate` (loadgen/cli/gate.py calls loadgen.sweep.gate.gate_capacity_dir).
    main, cand = _capacity_dir(tmp_path / "main", rate=6.6), _capacity_dir(tmp_path / "cand", rate=6.3)
    assert run_cli(["gate", str(cand), "--threshold", "capacity:rate >= 6"]) == 0
    assert "PASS capacity:rate >= 6  measured 6.3/s, limit 6/s" in capsys.readouterr().out
    assert run_cli(["gate", str(cand), "--baseline", str(main), "--threshold", "capacity:rate >= baseline"]) == 99
    assert run_cli(["gate", str(cand), "--threshold", "ttft:p(99) < 1s"]) == 2
    assert "is about a run" in capsys.readouterr().err
