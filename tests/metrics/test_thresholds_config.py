"""The gate config file: YAML and TOML read to the same config; every mistake named with its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics.gate.config import GateConfigError, load_gate_config, parse_gate_config
from metrics.slo import SLO

YAML = """
slo:
  ttft: 500ms
  tpot: 50ms
thresholds:
  - ttft:p(99) < 500ms
  - expr: errors:rate < 0.01
    abort_on_fail: true
  - expr: ttft{cache:full}:p(95) < 200ms
    nodata: pass
abort_delay: 15s
abort_interval: 2s
baseline: runs/main
junit: gate.xml
markdown: gate.md
"""

TOML = """
slo = { ttft = "500ms", tpot = "50ms" }
thresholds = [
  "ttft:p(99) < 500ms",
  { expr = "errors:rate < 0.01", abort_on_fail = true },
  { expr = "ttft{cache:full}:p(95) < 200ms", nodata = "pass" },
]
abort_delay = "15s"
abort_interval = "2s"
baseline = "runs/main"
junit = "gate.xml"
markdown = "gate.md"
"""


@pytest.mark.parametrize(("name", "text"), [("gate.yaml", YAML), ("gate.yml", YAML), ("gate.toml", TOML)])
def test_yaml_and_toml_read_alike(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    cfg = load_gate_config(path)
    assert cfg.slo == SLO(ttft_s=0.5, tpot_s=0.05)  # typed where the file is read
    assert [t.text for t in cfg.thresholds] == ["ttft:p(99) < 500ms", "errors:rate < 0.01",
                                                "ttft{cache:full}:p(95) < 200ms | nodata=pass"]
    assert cfg.thresholds[2].nodata_pass
    assert [t.text for t in cfg.abort_thresholds] == ["errors:rate < 0.01"]
    assert (cfg.abort_on_fail, cfg.abort_delay_s, cfg.abort_interval_s) == (False, 15.0, 2.0)
    assert (cfg.baseline, cfg.junit, cfg.markdown) == (Path("runs/main"), Path("gate.xml"), Path("gate.md"))


def test_k6_mapping_form() -> None:
    cfg = parse_gate_config({"thresholds": {"ttft": ["p(99)<500ms", "avg<100ms"], "goodput": "attainment>=0.95"}})
    assert [t.text for t in cfg.thresholds] == ["ttft:p(99)<500ms", "ttft:avg<100ms", "goodput:attainment>=0.95"]


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("")
    cfg = load_gate_config(path)
    assert cfg.thresholds == [] and cfg.slo == SLO()


@pytest.mark.parametrize(("data", "needle"), [
    ([1, 2], "top level must be a mapping"),
    ({"threshold": ["ttft:p(99)<1s"]}, r"unknown key\(s\) 'threshold'"),
    ({"thresholds": "ttft:p(99)<1s"}, "thresholds must be a list"),
    ({"thresholds": ["ttft:p(99)<1s", "ttft:p(101)<1s"]}, r"thresholds\[1\]: invalid threshold 'ttft:p\(101\)<1s'"),
    ({"thresholds": [{"expression": "ttft:p(99)<1s"}]}, r"thresholds\[0\]: expected an expression"),
    ({"thresholds": [{"expr": "ttft:p(99)<1s", "abort": True}]}, r"unknown key\(s\) 'abort'"),
    ({"thresholds": [{"expr": "ttft:p(99)<1s", "nodata": "skip"}]}, "nodata must be 'pass' or 'fail'"),
    ({"thresholds": [{"expr": "ttft:p(99)<1s | nodata=pass", "nodata": "pass"}]}, "not both"),
    ({"thresholds": [{"expr": "ttft:p(99)<1s", "abort_on_fail": "yes"}]}, "must be true or false"),
    ({"thresholds": {"ttft": [5]}}, r"thresholds.ttft must be a list"),
    ({"slo": {"ttft": "fast"}}, "slo: invalid SLO ttft='fast'"),
    ({"slo": {"latency": "1s"}}, "unknown SLO key 'latency'"),
    ({"slo": 5}, "slo must be a mapping"),
    ({"abort_delay": "soon"}, "abort_delay: invalid duration"),
    ({"abort_on_fail": 1}, "abort_on_fail must be true or false"),
    ({"junit": 3}, "junit must be a path"),
])
def test_mistakes_are_named(data: object, needle: str) -> None:
    with pytest.raises(GateConfigError, match=needle) as err:
        parse_gate_config(data, source="gate.yaml")
    assert str(err.value).startswith("gate.yaml")


def test_file_level_mistakes(tmp_path: Path) -> None:
    with pytest.raises(GateConfigError, match="cannot read config"):
        load_gate_config(tmp_path / "missing.yaml")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("thresholds: [unclosed\n")
    with pytest.raises(GateConfigError, match="not valid YAML"):
        load_gate_config(bad_yaml)
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("thresholds = [\n")
    with pytest.raises(GateConfigError, match="not valid TOML"):
        load_gate_config(bad_toml)
    other = tmp_path / "gate.json"
    other.write_text("{}")
    with pytest.raises(GateConfigError, match=r"unknown format '\.json'"):
        load_gate_config(other)
