"""The shipped dashboards and rules: in sync with their generators, well-formed, on known metrics,
and the alert rules pass `promtool check rules` and their unit tests (which are shown able to fail)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exporters.grafana.export import bundle
from loadgen.cli.dashboards import dashboards_app
from tests.dashboards._names import (
    DASHBOARDS,
    OLDER_VLLM,
    RECORDED,
    dashboard_exprs,
    dashboard_files,
    exported_names,
    names_in,
    recorded_names,
    rule_exprs,
    variable_queries,
)
from tests.exporters._prom_procs import PROMTOOL, need


def test_repository_copy_is_the_generated_bundle() -> None:
    files = bundle()
    on_disk = {str(p.relative_to(DASHBOARDS)) for p in DASHBOARDS.rglob("*") if p.is_file()}
    assert on_disk == set(files)
    for rel, content in files.items():
        assert (DASHBOARDS / rel).read_text() == content, f"{rel} is stale: run `goodput dashboards export dashboards`"


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: p.name)
def test_dashboard_structure(path: Path) -> None:
    board = json.loads(path.read_text())
    for key in ("uid", "title", "panels", "templating", "schemaVersion", "time"):
        assert key in board
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    occupied: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24
        cells = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
        assert not cells & occupied, f"panel {panel['title']} overlaps another"
        occupied |= cells
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for t in panel["targets"]:
            assert t["datasource"]["uid"] == "${datasource}", (panel["title"], t)
    for var in variables.values():
        if var["type"] == "query":
            assert var["datasource"]["uid"] == "${datasource}"


def test_every_metric_name_is_one_we_or_vllm_export() -> None:
    known = exported_names() | OLDER_VLLM
    used = {name for e in [*dashboard_exprs(), *variable_queries(), *rule_exprs()] for name in names_in(e.promql)}
    assert used, "no metric names found"
    assert used - known == set()
    assert any(n.startswith("vllm:") for n in used) and any(n.startswith("goodput_") for n in used)
    recorded = {n for e in rule_exprs() for n in RECORDED.findall(e.promql)}
    assert recorded <= recorded_names()


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([need(PROMTOOL), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_promtool_check_rules() -> None:
    result = _promtool("check", "rules", "goodput-recording.rules.yml", "goodput-alerts.rules.yml",
                       cwd=DASHBOARDS / "prometheus")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_alert_unit_tests_pass() -> None:
    result = _promtool("test", "rules", "goodput-alerts.test.yml", cwd=DASHBOARDS / "prometheus")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("old", "new"), [
    ("'0+48x300'", "'0+60x300'"),  # the "bad" scenario made good: the burn-rate alerts must not fire
    ("'0+20x120'", "'0+60x120'"),  # the "slow" scenario made fast: the goodput alert must not fire
    ("scenario=\"chat\", prompt_bucket=\"128-512\", cache=\"none\", tenant=\"\"}'\n        values: '0+60x300'\n"
     "      - series: 'goodput_evaluated", "scenario=\"chat\", prompt_bucket=\"128-512\", cache=\"none\", "
     "tenant=\"\"}'\n        values: '0+30x300'\n      - series: 'goodput_evaluated"),  # "chat" made bad
])
def test_alert_unit_tests_fail_when_the_series_change(tmp_path: Path, old: str, new: str) -> None:
    for path in (DASHBOARDS / "prometheus").glob("*.yml"):
        shutil.copy(path, tmp_path)
    test_file = tmp_path / "goodput-alerts.test.yml"
    text = test_file.read_text()
    assert old in text
    test_file.write_text(text.replace(old, new))
    result = _promtool("test", "rules", test_file.name, cwd=tmp_path)
    assert result.returncode != 0 and "FAILED" in result.stdout + result.stderr


def test_export_command(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(dashboards_app, ["export", str(tmp_path / "out"), "--objective", "0.995"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out/grafana/goodput-loadgen.json").exists()
    assert "> 0.072" in (tmp_path / "out/prometheus/goodput-alerts.rules.yml").read_text()  # 14.4 x 0.005
    bad = runner.invoke(dashboards_app, ["export", str(tmp_path / "bad"), "--objective", "0.9"])
    assert bad.exit_code == 2 and not (tmp_path / "bad").exists()
