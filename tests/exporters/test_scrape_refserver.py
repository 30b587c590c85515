"""`goodput run` against the embedded reference server: its /metrics scraped around the run agree with
the per-request figures of its timing extension (exactly for counters, within a bucket for quantiles)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from loadgen.cli import run_cli
from loadgen.run.scrape import SERIES_FILE
from metrics.records.record import RequestRecord, read_records
from metrics.server.histograms import bucket_of
from refserver.api.server_metrics import REQUEST_LATENCY_BUCKETS, TTFT_BUCKETS
from tests.exporters._quantiles import check_quantile

N = 40
# The sim engine: the reference server's real scheduler, KV blocks, prefix cache, /metrics and timing
# extension, steps paced by the roofline instead of computed by torch. These tests are about what the
# server reports, not about the torch model, and the sim engine starts in a quarter of the time.
SIM = "--server-arg=--engine=sim"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[RequestRecord]]:
    out = tmp_path_factory.mktemp("scrape") / "run"
    code = run_cli(["run", SIM, "--requests", str(N), "--rate", "20", "--prompt-tokens", "uniform:32:200",
                    "--output-tokens", "24", "--prefix-groups", "2", "--prefix-tokens", "96", "--quiet",
                    "--server-metrics-interval", "0.5s", "--output", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    return out, summary, read_records(str(out / "records.jsonl"))


def test_counters_match_usage_exactly(run: tuple[Path, dict[str, Any], list[RequestRecord]]) -> None:
    _, summary, records = run
    prom = summary["server"]["prometheus"]
    assert prom["available"] and prom["absent"] == [] and prom["failed_scrapes"] == 0
    assert all(r.status == "ok" for r in records)
    counters = prom["counters"]
    assert counters["prompt_tokens"]["delta"] == sum(r.prompt_tokens or 0 for r in records)
    assert counters["generation_tokens"]["delta"] == sum(r.output_tokens or 0 for r in records)
    assert counters["requests_finished"]["delta"] == N
    assert counters["prefix_cache_hits"]["delta"] == sum(r.cached_tokens or 0 for r in records) > 0
    assert 0 < prom["prefix_cache_hit_rate"] < 1
    for key in ("ttft_s", "e2e_s", "queue_s", "prefill_s", "decode_s"):
        assert prom["histograms"][key]["count"] == N


@pytest.mark.parametrize("key", ["ttft_s", "queue_s", "prefill_s", "decode_s"])
def test_delta_quantiles_agree_with_timing_extension(run: tuple[Path, dict[str, Any], list[RequestRecord]],
                                                     key: str) -> None:
    _, summary, records = run
    phases = [r.server or {} for r in records]
    if key == "ttft_s":  # the server's TTFT histogram: arrival → first token = queue + prefill
        exact_values = np.array([p["queue_s"] + p["prefill_s"] for p in phases])
    else:
        exact_values = np.array([p[key] for p in phases])
    hist = summary["server"]["prometheus"]["histograms"][key]
    bounds = TTFT_BUCKETS if key == "ttft_s" else REQUEST_LATENCY_BUCKETS
    assert hist["sum"] == pytest.approx(exact_values.sum(), rel=1e-6, abs=1e-9)
    for p, q in (("p50", 50), ("p90", 90), ("p99", 99)):
        exact = float(np.percentile(exact_values, q))
        check_quantile(hist[p], exact, exact_values, q / 100, bounds)
        assert hist[f"{p}_bucket"] == list(bucket_of(hist[p], bounds))


def test_gauge_series_and_textfile_are_saved(run: tuple[Path, dict[str, Any], list[RequestRecord]]) -> None:
    out, summary, _ = run
    lines = [json.loads(line) for line in (out / SERIES_FILE).read_text().splitlines()]
    assert len(lines) >= 2 and all("running" in p and "kv_cache_usage" in p for p in lines)
    assert [p["t_s"] for p in lines] == sorted(p["t_s"] for p in lines)
    assert summary["server"]["prometheus"]["gauges"]["running"]["samples"] == len(lines)
    names = {s.name for f in text_string_to_metric_families((out / "metrics.prom").read_text()) for s in f.samples}
    assert "goodput_ttft_seconds_bucket" in names and "goodput_requests_total" in names


def test_server_metrics_none_scrapes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(["run", SIM, "--requests", "3", "--rate", "50", "--output-tokens", "4", "--quiet",
                    "--server-metrics", "none", "--output", str(out)]) == 0
    assert "prometheus" not in json.loads((out / "summary.json").read_text())["server"]
    assert not (out / SERIES_FILE).exists() and (out / "metrics.prom").exists()


@pytest.mark.parametrize("args", [["--server-metrics", "ftp://x"], ["--metrics-port", "70000"],
                                  ["--pushgateway-delete"], ["--pushgateway", "nohost"]])
def test_bad_prometheus_options_are_usage_errors(args: list[str], tmp_path: Path) -> None:
    assert run_cli(["run", "--requests", "1", "--output", str(tmp_path / "x"), *args]) == 2
    assert not (tmp_path / "x").exists()


def test_report_helpers_rebuild_textfile_and_section(run: tuple[Path, dict[str, Any], list[RequestRecord]],
                                                     tmp_path: Path) -> None:
    from loadgen.run.prometheus import SECTION_FILE, load_server_section, rebuild_textfile
    from metrics.records.frame import frame_from_records

    out, summary, records = run
    assert load_server_section(out) == summary["server"]["prometheus"]
    assert (out / SECTION_FILE).exists() and load_server_section(tmp_path) is None
    run_info = json.loads((out / "run.json").read_text())
    copy = tmp_path / out.name
    copy.mkdir()
    rebuilt = rebuild_textfile(copy, frame_from_records(records), run_info).read_text()
    original = (out / "metrics.prom").read_text()

    def histograms(text: str) -> set[tuple[str, tuple[tuple[str, str], ...], float]]:
        return {(s.name, tuple(sorted(s.labels.items())), s.value) for f in text_string_to_metric_families(text)
                for s in f.samples if s.name.startswith(("goodput_ttft", "goodput_good", "goodput_evaluated"))}

    assert histograms(rebuilt) == histograms(original) != set()


def test_report_prints_the_server_section_the_run_printed(run: tuple[Path, dict[str, Any], list[RequestRecord]],
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    from exporters.server_console import format_server_section
    from metrics.results import Server

    out, summary, _ = run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    capsys.readouterr()
    assert run_cli(["report", str(copy)]) == 0
    printed = capsys.readouterr().out.splitlines()
    section = format_server_section(Server.from_json(summary["server"]))  # what `goodput run` printed from its summary
    assert any("/metrics: " in line for line in section) and any("running mean/max" in line for line in section)
    start = printed.index(section[0])
    assert printed[start:start + len(section)] == section
    assert sum(line.startswith("server") for line in printed) == 1
