"""`goodput run --config FILE` and `--print-config`: every flag has a key, one validation, flags win."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from loadgen.cli import run_cli
from loadgen.cli.app import app
from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec
from loadgen.spec.config_file import config_values, merge_values
from loadgen.spec.options import BY_PARAM, NOT_OPTIONS
from loadgen.spec.run_spec import RunSpec

UNREACHABLE = "http://127.0.0.1:9"


def _printed_spec(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch | None = None
                  ) -> RunSpec:
    assert run_cli(["run", *args, "--print-config"]) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    return build_spec(merge_values(run_defaults(), config_values(yaml.safe_load(text), source="out"), {}))[0]


def test_every_run_flag_has_a_config_key_and_every_key_a_flag() -> None:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    params = {p.name for p in command.params if p.name not in ("help", "ctx")}
    assert params - NOT_OPTIONS == set(BY_PARAM)
    for param, option in BY_PARAM.items():
        flag = next(p for p in command.params if p.name == param)
        assert option.flag in flag.opts, (param, flag.opts)
        assert flag.rich_help_panel == option.panel, param  # type: ignore[attr-defined]


@pytest.mark.parametrize(("param", "flag_value", "file_value", "needle"), [
    ("rate", "-1", -1, "--rate must be a positive"),
    ("requests", "0", 0, "--requests must be >= 1"),
    ("duration", "soon", "soon", "--duration"),
    ("prompt_tokens", "zipf:1:2", "zipf:1:2", "unknown length distribution"),
    ("slo", "ttft=fast", ["ttft=fast"], "invalid SLO ttft='fast'"),
    ("extra_body", "{nope", "{nope", "--extra-body is not valid JSON"),
    ("arrival", "weibull", "weibull", "unknown arrival process"),
    ("cache_full_ratio", "2", 2.0, "--cache-full-ratio must be in (0, 1]"),
    ("metrics_port", "70000", 70000, "--metrics-port must be in 0..65535"),
    ("threshold", "ttft:p(99)<<3", ["ttft:p(99)<<3"], "invalid threshold"),
    ("endpoint", "embeddings", "embeddings", "--endpoint must be one of chat, completions, responses, messages"),
    ("turns", "0", 0, "bad length '0'"),
    ("think_time", "soon", "soon", "--think-time: bad value"),
    ("trace_format", "parquet", "parquet", "unknown --trace-format 'parquet'"),
    ("prompt_sizing", "exact", "exact", "unknown --prompt-sizing 'exact'"),
    ("time_scale", "-1", -1, "--time-scale must be greater than 0"),
    ("trace_start", "later", "later", "--trace-start"),
    ("trace_duration", "0s", "0s", "--trace-duration must be greater than 0"),
    ("workers", "many", "many", "--workers expects a number of workers or auto"),
    ("workers", "0", 0, "--workers must be >= 1"),
    ("on_worker_failure", "retry", "retry", "--on-worker-failure must be stop or continue"),
    ("ray_placement", "zone=a", "zone=a", "--ray-placement needs --ray"),
])
def test_a_flag_and_its_config_key_are_checked_alike(param: str, flag_value: str, file_value: Any, needle: str,
                                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    option = BY_PARAM[param]
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", option.flag, flag_value, "--print-config"]) == 2
    from_flag = capsys.readouterr().err
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({option.file_key: file_value}))
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--config", str(config), "--print-config"]) == 2
    from_file = capsys.readouterr().err
    assert needle in from_flag and needle in from_file, (from_flag, from_file)
    assert len(from_flag.strip().splitlines()) == 1 and len(from_file.strip().splitlines()) == 1


def test_flags_win_over_the_file_and_lists_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "run.toml"
    config.write_text('url = "http://127.0.0.1:8000"\nrate = 8\nduration = "2m"\nprompt-tokens = 512\n'
                      'tags = {scenario = "chat", tenant = "a"}\nslo = {ttft = "500ms", tpot = "50ms"}\n'
                      'thresholds = ["ttft:p(99) < 800ms"]\nheaders = ["X-Team: infra"]\n')
    spec = _printed_spec(["--config", str(config), "--rate", "3", "--tag", "tenant=b", "--slo", "ttft=300ms",
                          "--threshold", "errors:rate<0.01"], capsys)
    assert spec.target.url == "http://127.0.0.1:8000"
    assert spec.load.arrival.rate == 3.0 and spec.load.duration_s == 120.0  # the flag won, the file filled in
    assert int(spec.workload.prompt_tokens.a) == 512
    assert dict(spec.workload.tags) == {"scenario": "chat", "tenant": "b"}
    assert spec.metrics.slo.ttft_s == 0.3 and spec.metrics.slo.tpot_s == 0.05
    assert [t.text for t in spec.gate.thresholds] == ["ttft:p(99) < 800ms", "errors:rate<0.01"]
    assert spec.request.headers == (("X-Team", "infra"),)
    monkeypatch.setenv("GOODPUT_URL", "http://127.0.0.1:9000")  # an environment variable beats the file too
    assert _printed_spec(["--config", str(config)], capsys).target.url == "http://127.0.0.1:9000"


def test_print_config_feeds_back_into_the_same_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--url", "http://127.0.0.1:8000/v1", "--arrival", "gamma", "--rate", "7.5", "--burstiness", "0.4",
            "--duration", "90s", "--warmup", "10s", "--prompt-tokens", "lognormal:900:0.6", "--output-tokens",
            "uniform:32:256", "--slo", "ttft=400ms", "--threshold", "goodput:attainment>=0.9", "--abort-on-fail",
            "--tag", "scenario=rag", "--prompt-buckets", "0,256,1024,4096", "--model-config", "Llama-3.1-8B",
            "--gpu", "H100-SXM", "--timeout-total", "5m", "--workers", "3", "--ray", "auto", "--ray-placement",
            "zone=a", "--on-worker-failure", "continue"]
    direct = _printed_spec(args, capsys)
    assert run_cli(["run", *args, "--print-config"]) == 0
    config = tmp_path / "printed.yaml"
    config.write_text(capsys.readouterr().out)
    assert _printed_spec(["--config", str(config)], capsys) == direct
    assert direct.gate.abort_thresholds == direct.gate.thresholds and direct.load.duration_s == 90.0
    assert (direct.scale.workers, direct.scale.ray, direct.scale.node_label(), direct.scale.on_worker_failure) == (
        3, "auto", {"zone": "a"}, "continue")


def test_a_null_key_is_the_flags_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`key: null` (or an empty value) for every key, the non-optional ones included (a TypeError deep in
    the spec's checks before): the run is the one without the file."""
    from loadgen.spec.options import BY_FILE_KEY

    config = tmp_path / "nulls.yaml"
    config.write_text("".join(f"{key}: null\n" for key, option in BY_FILE_KEY.items() if not option.secret))
    url = ["--url", "http://127.0.0.1:8000"]
    assert _printed_spec([*url, "--config", str(config)], capsys) == _printed_spec(url, capsys)


@pytest.mark.parametrize(("content", "needle"), [
    ("rat: 8\n", "unknown key 'rat'; did you mean 'rate'?"),
    ("tag: {a: b}\n", "unknown key 'tag'; did you mean 'tags'?"),
    ("promt_tokens: 5\n", "did you mean 'prompt_tokens'?"),
    ("api_key: sk-123\n", "api_key is a credential and is not read from files; set OPENAI_API_KEY"),
    ("rate: fast\n", "rate must be a number"),
    ("- just\n- a list\n", "must be a mapping"),
    ("rate: [1\n", "not valid YAML"),
])
def test_a_bad_config_file_is_one_line_naming_the_key(content: str, needle: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(content)
    assert run_cli(["run", "--config", str(config), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err


def _records(path: Path, n: int = 20) -> None:
    from tests.loadgen.test_report_damaged import record

    path.mkdir()
    # TTFT 20 ms for even ids, 60 ms for odd ones: a 50 ms TTFT SLO is met by half of them.
    lines = [record(i, chunk_ns=[100_000_000 * i + (20 if i % 2 == 0 else 60) * 1_000_000 + j * 5_000_000
                                 for j in range(5)]) for i in range(n)]
    (path / "records.jsonl").write_bytes(b"".join(lines))


def test_report_reads_a_schema_1_run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run directory written before the run spec existed: its settings still apply."""
    import json

    run = tmp_path / "old"
    _records(run)
    (run / "run.json").write_text(json.dumps({"target": "http://127.0.0.1:1", "model": "m", "complete": True,
                                              "settings": {"slo": ["ttft=50ms"], "warmup_s": 0.5}}))
    assert run_cli(["report", str(run), "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["goodput"]["slo"]["ttft_s"] == 0.05 and summary["run"]["window"]["warmup_s"] == 0.5
    assert summary["goodput"]["good"] == summary["goodput"]["measured"] // 2


def test_report_and_gate_read_the_spec_of_a_schema_2_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    spec, _ = build_spec({**run_defaults(), "slo": ["ttft=50ms"], "warmup": "500ms", "prompt_buckets": "0,16,64"})
    run = tmp_path / "new"
    _records(run)
    (run / "run.json").write_text(json.dumps({"schema_version": 2, "spec": spec.to_json(),
                                              "resolved": {"schedule_end_s": None, "roofline": None},
                                              "target": "http://127.0.0.1:1", "model": "m", "complete": True}))
    assert run_cli(["report", str(run), "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["goodput"]["slo"]["ttft_s"] == 0.05 and summary["run"]["window"]["warmup_s"] == 0.5
    assert {b["label"] for b in summary["buckets"] if b["dimension"] == "prompt_tokens"} == {"16-64"}
    assert summary["goodput"]["good"] == summary["goodput"]["measured"] // 2
    capsys.readouterr()
    # The gate knows the run's own bucket edges and SLOs.
    assert run_cli(["gate", str(run), "--threshold", "goodput:attainment >= 0.9",
                    "--threshold", "ttft{prompt_tokens:16-64}:p(50) < 1s"]) == 99
    assert "FAIL goodput:attainment" in capsys.readouterr().out
    assert run_cli(["report", str(run), "--quiet", "--slo", "ttft=100ms"]) == 0  # a re-judgement
    assert json.loads((run / "summary.json").read_text())["goodput"]["attainment"] == 1.0


def test_a_flag_wins_over_the_files_slo_key_even_when_valid_only_beside_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `fluidity=0.8` alone is not an SLO (it needs its deadlines, here the file's ttft and tpot), and
    # `max_itl` is another name for the file's `itl_max`: each replaces the file's key instead of being
    # refused as given twice.
    config = tmp_path / "run.yaml"
    config.write_text("url: http://127.0.0.1:8000\nslo: {fluidity: 0.9, ttft: 500ms, tpot: 50ms, itl_max: 2s}\n")
    spec = _printed_spec(["--config", str(config), "--slo", "fluidity=0.8", "--slo", "max_itl=1s"], capsys)
    assert spec.metrics.slo.fluidity_min == 0.8 and spec.metrics.slo.itl_max_s == 1.0
    assert spec.metrics.slo.ttft_s == 0.5 and spec.metrics.slo.tpot_s == 0.05
