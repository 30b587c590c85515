"""The console's lines about the prompts sent and the prefix cache (exporters.workload_notes): the cause a
prompt-length warning names, a server that reports no cached counts (vLLM's two usage shapes, from a
small fake server), and a warm cache under a workload whose prompts share nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from exporters.console import format_summary
from exporters.console_notes import prompt_warning
from exporters.workload_notes import absent_cache_note, warm_cache_warning
from loadgen.cli import run_cli
from metrics.results.summary_run import Run
from metrics.results.summary_tokens import Tokens
from tests.loadgen._stream_server import paced_server


def _prompt_warning(tokens: dict[str, Any], run: dict[str, Any]) -> str | None:
    return prompt_warning(Tokens.from_json(tokens), Run.from_json(run))


def _warm(tokens: dict[str, Any], run: dict[str, Any]) -> str | None:
    return warm_cache_warning(Tokens.from_json(tokens), Run.from_json(run))


def _absent(tokens: dict[str, Any]) -> str | None:
    return absent_cache_note(Tokens.from_json(tokens))

_OFF = {"prompt_accuracy": {"count": 5, "mean_error_tokens": 40.0, "abs_rel_error": {"p50": 0.3}}}


def test_the_prompt_warning_always_names_what_sized_the_prompts() -> None:
    line = _prompt_warning(_OFF, {"workload": {"kind": "jsonl"}})  # a summary that records no counter
    assert line is not None and "the prompts' sizes" not in line and "does not count tokens" not in line
    assert "does not record how its prompts were sized" in line
    words = _prompt_warning(_OFF, {"workload": {"token_counter": "words"}})
    assert words is not None and "'words' token counter, which does not count tokens the way the server does" in words


@pytest.mark.parametrize("run", [
    {"workload": {"token_counter": "server_tokenize"}},
    {"workload": {}, "resolved": {"prompt_sizing": {"method": "tokenize", "counter": "server_tokenize"}}},
])
def test_the_servers_own_tokenizer_is_never_blamed(run: dict[str, Any]) -> None:
    line = _prompt_warning(_OFF, run)
    assert line is not None and "server's own tokenizer" in line
    assert "does not count tokens the way the server does" not in line and "pass --tokenizer" not in line


def _summary(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "summary.json").read_text()))


@pytest.mark.parametrize(("cached", "noted"), [(None, True), (0, False)])
def test_a_server_that_reports_no_cached_counts_is_named_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             cached: int | None, noted: bool) -> None:
    # vLLM without --enable-prompt-tokens-details: usage has no prompt_tokens_details at all; with the flag,
    # cached_tokens 0 on every request.
    with paced_server(first_s=0.002, gap_s=0.001, cached=cached) as srv:
        code = run_cli(["run", "--url", srv.url, "--model", "m", "--requests", "4", "--rate", "50",
                        "--output-tokens", "3", "--prompt-sizing", "counter", "--server-metrics", "none",
                        "--output", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert code == 0
    lines = [x for x in out.splitlines() if "--enable-prompt-tokens-details" in x]
    assert len(lines) == (1 if noted else 0)
    if noted:
        assert "--enable-cache-report" in lines[0] and _summary(tmp_path / "run")["tokens"]["cached_unknown"] == 4


def _cache(ratio: float) -> dict[str, Any]:
    return {"prefix_cache": {"requests": 160, "prompt_tokens": 40_000, "cached_tokens": round(40_000 * ratio),
                             "cached_ratio": ratio}}


def test_a_warm_cache_under_prompts_that_share_nothing_is_a_warning() -> None:
    run = {"seed": 0, "workload": {"kind": "synthetic", "token_counter": "server_tokenize"}}
    line = _warm(_cache(0.94), run)
    assert line is not None and line.startswith("WARNING: the server's prefix cache served 94% of the prompt tokens")
    assert "--cache-bust" in line and "--seed 0" in line
    assert _warm(_cache(0.02), run) is None  # a fresh server: the template's few tokens at most
    shared = {**run, "workload": {**run["workload"], "prefix": {"groups": 4, "tokens": 512}}}
    assert _warm(_cache(0.94), shared) is None  # built to share prefixes: hits are the point
    for kind in ("sessions", "trace", "jsonl"):
        assert _warm(_cache(0.94), {**run, "workload": {"kind": kind}}) is None
    assert _warm(_cache(0.94), {**run, "workload": {**run["workload"], "cache_bust": True}}) is None


def test_the_console_prints_the_warm_cache_warning_and_the_absent_cache_note() -> None:
    summary = {"run": {"seed": 3, "workload": {"kind": "synthetic"}}, "tokens": {**_cache(0.9)}}
    text = format_summary(summary)
    assert "WARNING: the server's prefix cache served 90%" in text and "--seed 3" in text
    assert _absent({"requests": 4, "cached_unknown": 3}) is None
    summary["tokens"].update(requests=4, cached_unknown=4)
    assert "--enable-cache-report" in format_summary(summary)


def test_a_long_chat_template_on_short_prompts_is_no_warm_cache() -> None:
    # 160 prompts of 16 tokens behind a 32-token template: a fresh server caches the template's two blocks
    # of 16 on every request (67 % of the prompt tokens), which is no sign of an earlier run.
    share = {"prefix_cache": {"requests": 160, "prompt_tokens": 160 * 48, "cached_tokens": 160 * 32,
                              "cached_ratio": 32 / 48}}
    run = {"seed": 0, "workload": {"kind": "synthetic", "chat_template_tokens": 32}}
    assert _warm(share, run) is None
    warm = {"prefix_cache": {**share["prefix_cache"], "cached_tokens": 160 * 47, "cached_ratio": 47 / 48}}
    assert _warm(warm, run) is not None
