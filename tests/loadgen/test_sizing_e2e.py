"""Prompt sizing against the reference server as users run it (`--url`, no `--tokenizer`): what the
prompt-length check compares and the lines it prints, for a dataset, a conversation, a calibration that
some probes could not pass, and a trace replay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli

SHOWN = ["--server-metrics", "none"]  # without --quiet: the prompt-sizing line is shown


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from loadgen.run.embedded import embedded_server

    with embedded_server(["--engine=sim"]) as url:
        yield url


def _run(args: list[str], out: Path, capsys: pytest.CaptureFixture[str]
         ) -> tuple[dict[str, Any], list[dict[str, Any]], str, str]:
    code = run_cli(["run", *args, *SHOWN, "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return json.loads((out / "summary.json").read_text()), records, captured.out, captured.err


def test_a_dataset_has_no_target_and_no_prompt_warning(server: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.jsonl"
    # Short prompts: the chat template's 3 tokens are a quarter of each, which once read as a sizing error.
    data.write_text("".join(json.dumps({"messages": [{"role": "user", "content": text}], "max_tokens": 4}) + "\n"
                            for text in ("the cat sat", "a dog ran far", "hello there", "one two three")))
    summary, records, out, _ = _run(["--url", server, "--dataset", str(data), "--requests", "8", "--rate", "20"],
                                    tmp_path / "run", capsys)
    assert summary["requests"]["in_window_ok"] == 8
    assert all(r["prompt_tokens_target"] is None and r["prompt_tokens"] > 0 for r in records)
    assert summary["tokens"]["prompt_accuracy"]["count"] == 0
    assert "missed their target" not in out


def test_a_conversation_compares_each_turn_with_the_prompt_it_sent(server: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # The reference model's answers are random bytes: streamed as text, each invalid byte becomes U+FFFD
    # (three bytes when re-sent), so the history the run re-sends is not what the server generated.
    summary, records, out, err = _run(["--url", server, "--turns", "4", "--requests", "2", "--rate", "8",
                                       "--prompt-tokens", "48", "--output-tokens", "32", "--think-time", "10ms"],
                                      tmp_path / "run", capsys)
    assert "prompts sized with the server's tokenizer" in err
    assert summary["requests"]["in_window_ok"] == 8
    by_turn = {(r["session"], r["turn"]): r for r in records}
    for (session, turn), r in by_turn.items():
        if turn == 1:
            assert r["prompt_tokens_target"] == 48 and r["prompt_tokens"] == 48 + 3  # + the byte chat template
        else:  # the previous prompt and answer as the server counted them, and the new message
            before = by_turn[(session, turn - 1)]
            assert r["prompt_tokens_target"] == before["prompt_tokens"] + before["output_tokens"] + 48
    accuracy = summary["tokens"]["prompt_accuracy"]
    assert accuracy["count"] == 2 and accuracy["mean_error_tokens"] == 3
    assert accuracy["later_turns"]["count"] == 6
    assert "missed their target" not in out and "server_tokenize" not in out


def test_a_second_run_with_the_same_seed_is_warned_of_its_warm_cache(server: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--url", server, "--requests", "8", "--rate", "20", "--prompt-tokens", "128", "--output-tokens", "4",
            "--tokenizer", "bytes", "--seed", "11"]
    first, _, out, _ = _run(args, tmp_path / "first", capsys)
    assert first["tokens"]["prefix_cache"]["cached_ratio"] < 0.25 and "prefix cache served" not in out
    second, _, out, _ = _run(args, tmp_path / "second", capsys)  # the same prompts: the server has them cached
    assert second["tokens"]["prefix_cache"]["cached_ratio"] > 0.8
    line = next(x for x in out.splitlines() if "prefix cache served" in x)
    assert line.startswith("WARNING: ") and "--cache-bust" in line and "--seed 11" in line
    busted, _, out, _ = _run([*args, "--cache-bust"], tmp_path / "busted", capsys)
    assert busted["tokens"]["prefix_cache"]["cached_tokens"] == 0 and "prefix cache served" not in out


def test_a_calibration_says_how_many_probes_the_server_rejected(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from tests.refserver.fake_engine import make_app, serve_in_thread

    # A small context: the longer probes are refused with HTTP 400, as vLLM refuses a prompt too long.
    with serve_in_thread(make_app(tokenize_endpoint=False, max_model_len=600)) as url:
        _, _, _, err = _run(["--url", url, "--requests", "3", "--rate", "20", "--prompt-tokens", "64",
                             "--output-tokens", "4"], tmp_path / "run", capsys)
    line = next(x for x in err.splitlines() if "prompts sized by calibration" in x)
    assert "fitted on 7 of 11 probe requests" in line and "4 were rejected (HTTP 400 × 4; the first said: the prompt is" in line
    assert "so the fit covers prompts up to 96 words" in line
    sizing = json.loads((tmp_path / "run" / "run.json").read_text())["resolved"]["prompt_sizing"]
    assert sizing["probes"] == 7 and sizing["probes_rejected"] == 4 and len(sizing["probe_rejections"]) == 4


def test_the_local_counter_is_named_and_a_missing_metrics_endpoint_is_one_plain_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.loadgen._stream_server import paced_server

    with paced_server(first_s=0.002, gap_s=0.001) as srv:  # answers GET /metrics with 404, as llama.cpp does
        code = run_cli(["run", "--url", srv.url, "--model", "m", "--requests", "3", "--rate", "50",
                        "--output-tokens", "3", "--tokenizer", "words", "--output", str(tmp_path / "run")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "goodput: prompts sized with the local token counter 'words' (--tokenizer)" in captured.err
    prom = json.loads((tmp_path / "run" / "summary.json").read_text())["server"]["prometheus"]
    assert prom["last_failure"] == "HTTP 404: the server has no /metrics"
    assert "mozilla" not in captured.out + captured.err and "For more information" not in captured.out
