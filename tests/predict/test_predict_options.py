"""`goodput predict` and the `goodput run` options it inherits: --output DIR writes DIR/predict.json and
DIR/predict.html (--json PATH still works; both is a usage error), and every run option a prediction does
not use (it sends nothing) is hidden from its --help and refused when given on the command line, in one
line naming them all, exit 2; set in the environment they are not used, and a config file's are noted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from loadgen.cli.commands import build_app, run_cli
from loadgen.cli.predict_options import USED
from loadgen.predict.step_model import SchedulerLimits, StepModel

GOODPUT = str(Path(sys.executable).with_name("goodput"))
PREDICT = ["--requests", "4", "--arrival", "constant", "--output-tokens", "4", "--rates", "1"]


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    StepModel(fixed_s=0.1, limits=SchedulerLimits(num_blocks=256)).save(path)
    return path


def _predict_command():  # type: ignore[no-untyped-def]
    return typer.main.get_command(build_app(only="predict")).commands["predict"]  # type: ignore[attr-defined]


def test_output_dir_holds_predict_json_and_its_page(tmp_path: Path, model: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "pred"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--output", str(out)]) == 0
    assert json.loads((out / "predict.json").read_text())["points"][0]["rate"] == 1.0
    assert (out / "predict.html").is_file()
    assert not (tmp_path / "predict.json").exists()  # --json's default is not written as well


def test_json_still_decides_without_output(tmp_path: Path, model: Path) -> None:
    out = tmp_path / "elsewhere" / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--json", str(out)]) == 0
    assert out.is_file() and out.with_suffix(".html").is_file()


@pytest.mark.parametrize("clash", ["json", "file"])
def test_output_with_json_or_onto_a_file_is_one_line_and_exit_2(tmp_path: Path, model: Path, clash: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "taken"
    extra = ["--json", str(tmp_path / "p.json")] if clash == "json" else []
    if clash == "file":
        target.write_text("x")
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--output", str(target), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert ("--json PATH, not both" in err[0]) if clash == "json" else ("not a directory" in err[0])
    assert not (tmp_path / "p.json").exists() and not target.is_dir()


def test_every_run_option_a_prediction_does_not_use_is_refused_in_one_line(
        tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unused = [p for p in _predict_command().params if p.name not in USED and p.name in _run_names()]
    assert {"url", "timeout_total", "workers", "metrics_port", "pushgateway", "threshold", "quiet",
            "overwrite", "warmup"} <= {p.name for p in unused}
    argv = [arg for p in unused for arg in ([p.opts[0]] if p.is_flag else [p.opts[0], "1"])]
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, *argv, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a prediction sends nothing: drop --" in err[0]
    named = err[0].split("drop ", 1)[1].split(" (", 1)[0].split(", ")
    assert sorted(named) == sorted(p.opts[0] for p in unused)
    assert not out.exists()


def _run_names() -> set[str]:
    from loadgen.cli.predict import RUN_NAMES

    return RUN_NAMES


def test_one_refused_option_is_named_alone(tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--timeout-total", "5s",
                    "--json", str(tmp_path / "p.json")]) == 2
    assert "drop --timeout-total (goodput run's options" in capsys.readouterr().err


def test_the_environment_is_not_refused_and_a_config_files_keys_are_noted(
        tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GOODPUT_METRICS_PORT", "0")
    config = tmp_path / "run.yaml"
    config.write_text(f"url: http://127.0.0.1:9\ntimeout_total: 5s\nrequests: 3\noutput: {tmp_path / 'run'}\n")
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT[2:], "--config", str(config),
                    "--no-html", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["points"][0]["requests"] == 3  # the config's workload is used
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["goodput predict: note: the config file's output, timeout_total, url are not used by a "
                   "prediction (nothing is sent; --output or --json place predict.json)"]
    assert not (tmp_path / "run").exists()


def test_help_shows_only_the_options_a_prediction_uses() -> None:
    env = {**os.environ, "COLUMNS": "80", "TERMINAL_WIDTH": "80"}
    text = subprocess.run([GOODPUT, "predict", "--help"], capture_output=True, text=True, env=env,
                          timeout=120, check=True).stdout
    for flag in ("--url", "--timeout-total", "--workers", "--metrics-port", "--threshold", "--quiet",
                 "--overwrite", "--warmup", "--ignore-eos"):
        assert f"{flag} " not in text and f"{flag}\n" not in text
    for flag in ("--server-model", "--output", "--json", "--prompt-tokens", "--trace", "--slo", "--config"):
        assert flag in text
    assert "Directory to write predict.json and" in text


def test_predict_json_is_written_atomically(tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """predict.json arrives by a rename of a whole temporary file beside it, as every result file does."""
    import metrics.results.atomic as atomic

    renamed: list[tuple[str, str]] = []
    real = atomic.os.replace

    def spy(src: Any, dst: Any) -> None:
        renamed.append((Path(src).parent.name, Path(dst).name))
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy)
    out = tmp_path / "o" / "predict.json"
    assert run_cli(["predict", "--server-model", str(model), "--rates", "1", "--requests", "4", "--no-html",
                    "--json", str(out)]) == 0
    assert ("o", "predict.json") in renamed and json.loads(out.read_text())["points"][0]["rate"] == 1.0
