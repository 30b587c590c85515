"""Golden test: recorded run, sweep and capacity directories replayed through `goodput report`, every output
compared byte for byte with what the code wrote when the fixtures were recorded.

The inputs (tests/fixtures/golden/{run,sweep,capacity}/) were made once by real commands against the
embedded reference server's sim engine, with fixed seeds:

    goodput run --server-arg=--engine=sim --server-arg=--fault-500=0.1 --server-arg=--fault-seed=1 \\
        --server-arg=--reasoning-tokens=uniform:2:8 --requests 24 --rate 20 --arrival poisson --seed 7 \\
        --prompt-tokens uniform:20:200 --output-tokens uniform:4:40 --slo ttft=50ms --slo tpot=20ms \\
        --cancel-rate 0.1 --cancel-after tokens:3 --prompt-buckets 64,128 --output-buckets 16 \\
        --tag scenario=golden --max-failed 50% --no-html --quiet --output run2
    goodput sweep --server-arg=--engine=sim --rates 5,20 --point-requests 8 --seed 3 --prompt-tokens 40 \\
        --output-tokens 8 --slo ttft=20ms --no-html --quiet --output sweep1
    goodput capacity --server-arg=--engine=sim --server-arg=--sim-step-overhead-ms=4 --slo ttft=25ms \\
        --attainment 0.5 --min-rate 2 --max-rate 60 --point-requests 8 --max-points 4 --seed 3 \\
        --prompt-tokens 40 --output-tokens 8 --no-html --quiet --output cap2

of which the run keeps what `goodput report` reads (run.json, records.jsonl, records.status.json,
server_metrics.jsonl, server_prometheus.json: SLOs, prompt/output/tag buckets, HTTP 500s, planned
cancellations, reasoning), the sweep its sweep.json and sweep.csv, the capacity search its capacity.json
(`goodput report` reads nothing else of them). The expected outputs (tests/fixtures/golden/expected/) are
what today's code writes and prints for them: for the run summary.json, summary.csv, metrics.prom, stdout,
stderr and the list of files the report added; for the sweep and the capacity search stdout, stderr and the
(empty) list of files added.

What is not compared byte for byte, and why (nothing else is normalised):
- records.parquet: its footer names the pyarrow version that wrote it; only its presence (files.txt) and
  its row count are checked;
- metrics.prom's `run_id` label is the run directory's name: the fixture is copied to a directory of the
  same name (`run`), so it is compared unchanged.
No output holds a timestamp of the report's own run or an absolute path (the tool version in summary.json
is the one recorded in run.json).

To rewrite the expected files after an intended change of an output (review the diff!):

    GOODPUT_GOLDEN_REGENERATE=1 .venv/bin/python -m pytest -q tests/loadgen/test_report_golden.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from loadgen.cli import run_cli

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden"
EXPECTED = GOLDEN / "expected"
REGENERATE = os.environ.get("GOODPUT_GOLDEN_REGENERATE") == "1"
RUN_OUTPUTS = ("summary.json", "summary.csv", "metrics.prom")
RECORDS_IN_FIXTURE = 24


def replay(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, bytes]]:
    """`goodput report` on a copy of the fixture `case`; its outputs by the expected file's name."""
    directory = tmp_path / case
    shutil.copytree(GOLDEN / case, directory)
    before = {p.name for p in directory.iterdir()}
    capsys.readouterr()
    code = run_cli(["report", str(directory)])
    captured = capsys.readouterr()
    added = sorted(p.name for p in directory.iterdir() if p.name not in before)
    got = {"exit_code.txt": f"{code}\n".encode(), "stdout.txt": captured.out.encode(),
           "stderr.txt": captured.err.encode(), "files.txt": "".join(f"{n}\n" for n in added).encode()}
    return directory, got


def compare(case: str, got: dict[str, bytes]) -> None:
    expected_dir = EXPECTED / case
    if REGENERATE:
        expected_dir.mkdir(parents=True, exist_ok=True)
        for name, data in got.items():
            (expected_dir / name).write_bytes(data)
    differ = [name for name, data in got.items() if (expected_dir / name).read_bytes() != data]
    assert not differ, f"{case}: differs from tests/fixtures/golden/expected/{case}/: {', '.join(differ)}"


def test_a_recorded_run_reports_byte_for_byte_as_recorded(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    directory, got = replay("run", tmp_path, capsys)
    got.update({name: (directory / name).read_bytes() for name in RUN_OUTPUTS})
    compare("run", got)
    assert pq.read_metadata(directory / "records.parquet").num_rows == RECORDS_IN_FIXTURE


@pytest.mark.parametrize("case", ["sweep", "capacity"])
def test_a_recorded_sweep_or_capacity_search_reports_as_recorded(case: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _, got = replay(case, tmp_path, capsys)
    compare(case, got)
