"""What the command line says when an option is wrong or missing: plain words, the user's own numbers
(never `None`, never `64.0` for a `64` the user typed), one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loadgen.cli import run_cli
from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec
from loadgen.spec.config_file import config_values, merge_values

UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: a usage error must fire before any connect


@pytest.mark.parametrize(("args", "expected"), [
    (["--arrival", "ramp", "--rate", "1", "--duration", "10s"],
     "--arrival ramp needs --rate-end: the rate (requests/s) it reaches at the end of --duration"),
    (["--arrival", "ramp", "--rate", "1", "--rate-end", "-2", "--duration", "10s"],
     "--rate-end must be a positive number of requests/s, got -2"),
    (["--arrival", "gamma", "--rate", "3", "--burstiness", "0"], "--burstiness must be greater than 0, got 0"),
    (["--arrival", "concurrency", "--concurrency", "2", "--rate", "-3"],
     "--rate (the cap of --arrival concurrency) must be a positive number of requests/s, got -3"),
    (["--rate", "-1.5"], "--rate must be a positive number of requests/s for --arrival poisson, got -1.5"),
    (["--time-scale", "0", "--trace", "x.jsonl"], "--time-scale must be greater than 0, got 0"),
])
def test_arrival_errors_use_plain_words_and_the_numbers_given(args: list[str], expected: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--output", str(out), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.endswith(expected), err
    assert "None" not in err and ".0" not in err
    assert not out.exists()


def test_print_config_writes_distributions_with_the_numbers_given(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--url", UNREACHABLE, "--prompt-tokens", "uniform:64:256", "--output-tokens", "normal:100:12.5",
            "--turns", "uniform:2:8", "--think-time", "lognormal:3s:1", "--prefix-groups", "2",
            "--prefix-tokens", "10", "--prefix-weights", "1,2.5"]
    assert run_cli(["run", *args, "--print-config"]) == 0
    text = capsys.readouterr().out
    printed = yaml.safe_load(text)
    assert printed["prompt_tokens"] == "uniform:64:256"
    assert printed["output_tokens"] == "normal:100:12.5"
    assert printed["turns"] == "uniform:2:8"
    assert printed["think_time"] == "lognormal:3s:1"
    assert printed["prefix_weights"] == "1,2.5"
    # ...and it still reads back into the very same spec.
    config = tmp_path / "printed.yaml"
    config.write_text(text)
    assert run_cli(["run", "--config", str(config), "--print-config"]) == 0
    assert capsys.readouterr().out == text
    spec = build_spec(merge_values(run_defaults(), config_values(printed, source="printed"), {}))[0]
    assert (spec.workload.output_tokens.a, spec.workload.output_tokens.b) == (100.0, 12.5)
    assert spec.workload.prefix_weights == (1.0, 2.5)


def test_a_length_too_precise_for_short_notation_keeps_every_digit(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--url", UNREACHABLE, "--prompt-tokens", "lognormal:1234567:0.123456789",
                    "--print-config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["prompt_tokens"] == "lognormal:1234567:0.123456789"


@pytest.mark.parametrize(("server_args", "needle"), [
    (["--server-arg=--bogus=1"], "--server-arg: the reference server has no option --bogus"),
    (["--server-arg=--max-num-seqs=abc"], "--server-arg: Invalid value for '--max-num-seqs'"),
    (["--server-arg=--max-num-seqs"], "--server-arg: Option '--max-num-seqs' requires an argument"),
    (["--server-arg=--api-key=sk-never-shown", "--server-arg=--bogus"], "no option --bogus"),
    # Refused by the server itself once started (its own checks, not its option parser):
    (["--server-arg=--engine=bogus"], "--server-arg: the reference server refused its arguments: "
                                      "Invalid value for --engine: must be 'torch' or 'sim', got 'bogus'"),
])
def test_a_bad_server_arg_is_one_line_naming_it_and_exit_2(server_args: list[str], needle: str, tmp_path: Path,
                                                           capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = run_cli(["run", *server_args, "--requests", "1", "--quiet", "--output", str(out)])
    err = capfd.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and needle in err, err
    assert "refserver" not in err and "Usage" not in err and "sk-never-shown" not in err
    assert not out.exists()
