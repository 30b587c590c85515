"""`goodput run --scrape NAME=URL` against a fake DCGM exporter: the summary's `gpu` section from values
scripted over time, derived by hand; the parsing, the window cut and the failures on their own."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from exporters.gpu_console import gpu_lines
from exporters.html.gpu_section import gpu_section as html_gpu_section
from loadgen.cli import run_cli
from loadgen.run.gpu_scrape import GPU_FILE, add_gpu_section, gpu_samples
from loadgen.spec.scrape_targets import parse_scrape_targets
from metrics.results import SummaryView
from metrics.server.gpu import gpu_section
from metrics.server.gpu_json import read_gpu_document
from tests.servers.fake_dcgm import FakeDcgm, exposition, uuid_of

REQUESTS, OUTPUT_TOKENS = 10, 8


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], float, str]:
    out = tmp_path_factory.mktemp("gpu") / "run"
    t0 = time.time()

    def script(t: float) -> dict[int, dict[str, float]]:
        # GPU 0's power climbs 10 W a second from 300 W at t0; GPU 1 holds 100 W.
        return {0: {"power_w": 300.0 + 10.0 * (t - t0), "util_pct": 80, "fb_used_mib": 1000, "sm_active": 0.5},
                1: {"power_w": 100.0, "util_pct": 20, "fb_used_mib": 500, "sm_active": 0.25, "temp_c": 60}}

    down = f"http://127.0.0.1:{_closed_port()}/metrics"
    with FakeDcgm(script) as dcgm:
        code = run_cli(["run", "--requests", str(REQUESTS), "--rate", "10", "--prompt-tokens", "32",
                        "--output-tokens", str(OUTPUT_TOKENS), "--server-arg=--engine=sim", "--quiet",
                        "--server-metrics-interval", "0.2s", "--scrape", f"dcgm={dcgm.url}",
                        "--scrape", f"down={down}", "--output", str(out)])
        assert len(dcgm.scrapes) >= 3  # before, during, after
    assert code == 0
    return out, json.loads((out / "summary.json").read_text()), t0, down


def test_gpu_section_matches_the_script(scraped: tuple[Path, dict[str, Any], float, str]) -> None:
    _, summary, t0, _ = scraped
    gpu, run = summary["gpu"], summary["run"]
    assert gpu["available"] is True
    lo = run["start_unix_s"] + run["window"]["start_s"]
    hi = run["start_unix_s"] + run["window"]["end_s"]
    assert gpu["window"]["start_unix_s"] == pytest.approx(lo) and gpu["window"]["end_unix_s"] == pytest.approx(hi)
    g0, g1 = gpu["gpus"]
    assert (g0["gpu"], g0["uuid"], g0["model_name"], g0["hostname"]) == ("0", uuid_of(0), "NVIDIA H100 80GB HBM3",
                                                                         "node-1")
    assert g0["utilization_pct"] == {"mean": 80.0, "max": 80.0} and g1["sm_active"] == {"mean": 0.25, "max": 0.25}
    assert g0["memory_used_mib_max"] == 1000.0 and g1["memory_used_mib_max"] == 500.0
    # Power linear in time integrates exactly under the trapezoid rule: ∫ 300 + 10 (t − t0) dt over [lo, hi].
    # (The fake evaluates at the request, the client stamps after the response: a few ms apart.)
    e0 = 300.0 * (hi - lo) + 5.0 * ((hi - t0) ** 2 - (lo - t0) ** 2)
    e1 = 100.0 * (hi - lo)
    assert g0["energy_j"] == pytest.approx(e0, rel=2e-3) and g1["energy_j"] == pytest.approx(e1, rel=1e-9)
    total = gpu["total"]
    assert total["gpus"] == 2 and total["memory_used_mib_max"] == 1500.0
    assert total["utilization_pct"] == {"mean": 50.0, "max": 80.0}
    assert total["output_tokens"] == REQUESTS * OUTPUT_TOKENS
    assert total["joules_per_output_token"] == pytest.approx((e0 + e1) / (REQUESTS * OUTPUT_TOKENS), rel=2e-3)


def test_a_failed_endpoint_is_a_note(scraped: tuple[Path, dict[str, Any], float, str]) -> None:
    out, summary, _, down = scraped
    sources = {s["name"]: s for s in summary["gpu"]["sources"]}
    assert sources["dcgm"]["failed_scrapes"] == 0 and sources["dcgm"]["scrapes"] >= 3
    assert sources["down"]["scrapes"] == 0 and sources["down"]["failed_scrapes"] == 1
    assert sources["down"]["url"] == down and "ConnectError" in sources["down"]["last_failure"]
    assert any("down: 1 of 1 scrapes failed" in line for line in gpu_lines(SummaryView.from_json(summary).gpu))
    assert json.loads((out / GPU_FILE).read_text())["sources"] == summary["gpu"]["sources"]


def test_console_and_report_show_it(scraped: tuple[Path, dict[str, Any], float, str]) -> None:
    _, summary, _, _ = scraped
    lines = gpu_lines(SummaryView.from_json(summary).gpu)
    assert lines[1].startswith("  dcgm/node-1:gpu0  util 80/80 %  SM 0.50/0.50  mem 1,000 MiB")
    jpt = summary["gpu"]["total"]["joules_per_output_token"]
    assert f"  energy per output token: {jpt:.3g} J (80 output tokens)" in lines
    assert all(len(line) <= 100 for line in lines)
    section = html_gpu_section(SummaryView.from_json(summary).gpu)
    assert section is not None and f"{jpt:.4g} J" in str(section.items[0])


def test_report_rebuilds_the_section(scraped: tuple[Path, dict[str, Any], float, str], tmp_path: Path) -> None:
    out, summary, _, _ = scraped
    rebuilt = {k: v for k, v in summary.items() if k != "gpu"}
    (tmp_path / GPU_FILE).write_text((out / GPU_FILE).read_text())
    add_gpu_section(tmp_path, rebuilt)
    assert rebuilt["gpu"] == summary["gpu"]


def test_no_scrape_no_section(tmp_path: Path) -> None:
    summary = {"run": {"start_unix_s": 0.0}}
    add_gpu_section(tmp_path, summary)
    assert summary == {"run": {"start_unix_s": 0.0}} and not (tmp_path / "summary.json").exists()


def test_gpu_samples_read_dcgm_text() -> None:
    text = exposition({0: {"power_w": 250.5, "util_pct": 42, "temp_c": 70}, 3: {"fb_used_mib": 8192}})
    assert gpu_samples(text) == [
        {"gpu": "0", "uuid": uuid_of(0), "model_name": "NVIDIA H100 80GB HBM3", "hostname": "node-1",
         "util_pct": 42.0, "power_w": 250.5},
        {"gpu": "3", "uuid": uuid_of(3), "model_name": "NVIDIA H100 80GB HBM3", "hostname": "node-1",
         "fb_used_mib": 8192.0},
    ]
    with pytest.raises(ValueError):
        gpu_samples("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 1\n")


def _doc(*points: tuple[float, float]) -> dict[str, Any]:
    return {"sources": [{"name": "d"}],
            "samples": [{"source": "d", "gpu": "0", "uuid": "U", "unix_s": t, "power_w": w} for t, w in points]}


def test_energy_cut_to_the_window() -> None:
    # Samples at 100, 102, 104 s of 100, 200, 200 W; window 101..103 s: (150 + 200) / 2 + 200 = 375 J.
    section = gpu_section(read_gpu_document(_doc((100.0, 100.0), (102.0, 200.0), (104.0, 200.0))),
                          start_unix_s=100.0, window_start_s=1.0, window_end_s=3.0, output_tokens=150)
    assert section is not None
    total = section.to_json()["total"]
    assert total["energy_j"] == pytest.approx(375.0) and total["joules_per_output_token"] == pytest.approx(2.5)
    assert section.to_json()["gpus"][0]["power_w_mean"] == 200.0  # the one sample inside the window


def test_samples_short_of_the_window_give_no_joules_per_token() -> None:
    section = gpu_section(read_gpu_document(_doc((100.0, 100.0), (102.0, 100.0))), start_unix_s=100.0,
                          window_start_s=1.0, window_end_s=5.0, output_tokens=10)
    assert section is not None
    total = section.to_json()["total"]
    assert total["energy_j"] == pytest.approx(100.0) and total["joules_per_output_token"] is None
    assert "cover 1.00 s of the 4.00 s window" in total["energy_note"]


def test_the_file_is_checked_once_where_it_is_read() -> None:
    # A sample without a time, a figure that is not a number and a label that is not text are dropped there,
    # so that the section never meets them.
    raw = {"sources": [{"name": "d", "url": 3, "scrapes": 2}, "junk"],
           "samples": [{"source": "d", "gpu": 0, "unix_s": 1.0, "power_w": "300", "util_pct": 50},
                       {"source": "d", "power_w": 100.0}, "junk"]}
    document = read_gpu_document(raw)
    assert document["sources"] == [{"name": "d", "scrapes": 2}, {}]
    assert document["samples"] == [{"source": "d", "unix_s": 1.0, "gpu": None, "uuid": None, "model_name": None,
                                    "hostname": None, "util_pct": 50}]


@pytest.mark.parametrize(("value", "message"), [
    ("dcgm", "--scrape expects NAME=URL"),
    ("=http://127.0.0.1:9400/metrics", "--scrape expects NAME=URL"),
    ("dc gm=http://x/metrics", "--scrape name must be letters"),
    ("dcgm=ftp://x/metrics", "the URL must be http(s)"),
    ("dcgm=http://user:secret@x:9400/metrics", "the URL must carry no credentials and no query"),
    ("dcgm=http://x:9400/metrics?token=abc", "the URL must carry no credentials and no query"),
])
def test_bad_targets(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_scrape_targets([value])
    with pytest.raises(ValueError, match="given twice"):
        parse_scrape_targets(["a=http://x/m", "a=http://y/m"])


def test_cli_rejects_a_bad_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["run", "--url", "http://127.0.0.1:9", "--requests", "1", "--scrape", "nourl",
                    "--output", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--scrape expects NAME=URL" in err and not (tmp_path / "r").exists()


def test_the_spec_names_scrape_only_when_given() -> None:
    import dataclasses

    from loadgen.spec.run_spec import RunSpec
    from loadgen.spec.sections import PrometheusSpec

    plain = RunSpec()
    assert "scrape" not in plain.to_json()["prometheus"]  # run.json of a run without --scrape is unchanged
    scraped = dataclasses.replace(plain, prometheus=PrometheusSpec(scrape=("dcgm=http://127.0.0.1:9400/metrics",)))
    assert scraped.to_json()["prometheus"]["scrape"] == ["dcgm=http://127.0.0.1:9400/metrics"]
    assert RunSpec.from_json(scraped.to_json()) == scraped and RunSpec.from_json(plain.to_json()) == plain
