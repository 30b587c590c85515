"""bench/run_path.py's instrument: its figures from records, the cost fit, and one short run end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson

from bench.run_path import Case, run_order
from bench.run_path_figures import cpu_at, fit_cost, gap_errors_ns, read_run_records, steady_window

ROOT = Path(__file__).resolve().parents[2]


def test_gap_error_is_client_gap_minus_server_gap() -> None:
    errors = gap_errors_ns([1_000, 3_500, 4_000], [0.0, 0.000002, 0.000003])
    assert np.round(errors, 6).tolist() == [500.0, -500.0]
    assert gap_errors_ns([1, 2], None).size == 0 and gap_errors_ns([1, 2], [0.0]).size == 0


def test_fit_recovers_a_known_cost_model() -> None:
    requests = np.array([100, 200, 100, 400, 50.0])
    chunks = np.array([100, 12_800, 25_600, 1_000, 6_400.0])
    cpu = 0.8 + 250e-6 * requests + 15e-6 * chunks
    a, b, c = fit_cost(cpu.tolist(), requests.tolist(), chunks.tolist())
    assert (round(a, 6), round(b * 1e6, 3), round(c * 1e6, 3)) == (0.8, 250.0, 15.0)


def test_steady_window_counts_work_and_interpolates_cpu(tmp_path: Path) -> None:
    lines = [{"intended_ns": 0, "sent_ns": 5, "status": "ok", "chunk_ns": [10, 1_500_000_000]},
             {"intended_ns": 10, "sent_ns": 1_200_000_000, "status": "ok", "chunk_ns": [1_300_000_000],
              "server_chunk_s": [0.1]},
             {"intended_ns": 20, "sent_ns": None, "status": "error", "chunk_ns": []}]
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    records = read_run_records(path)
    assert (records.ok, records.failed, records.chunk_ns.size) == (2, 1, 3)
    anchor = 10_000_000_000
    samples = [(anchor, 0), (anchor + 2_000_000_000, 1_000_000_000)]  # half a core
    assert cpu_at(samples, anchor + 1_000_000_000) == 0.5
    window = steady_window(records, samples, anchor, 1.0, 2.0)
    assert (window.requests, window.chunks, window.cpu_s, window.seconds) == (1, 2, 0.5, 1.0)


def test_no_tree_always_runs_first() -> None:
    """A comparison of trees: each case once per tree per pass, and each tree first in as many passes as the
    others, so that the position in a pass is not read as a difference between trees."""
    cases = [Case(16, 200.0), Case(64, 50.0)]
    order = run_order(cases, ["this", "before", "other"], 6)
    assert len(order) == 12 and all(sorted(names) == ["before", "other", "this"] for _, _, names in order)
    for case in cases:
        firsts = [names[0] for _, c, names in order if c == case]
        assert sorted(firsts) == ["before", "before", "other", "other", "this", "this"]
    assert [c.label for rep, c, _ in order if rep == 1] == ["64@50", "16@200"]


def test_one_short_run_end_to_end() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run_path.py"), "--cases", "4@40", "--duration", "1.5",
                           "--skip", "0.5", "--repeat", "1", "--no-pin", "--floor"],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "machine:" in out and "python 3." in out and "medians of 1" in out
    assert "steady window: cpu =" in out and "floor: cpu =" in out
    median_row = out.split("medians of 1:")[1].splitlines()[2].split()
    assert median_row[0] == "4@40" and int(median_row[1]) > 20  # requests sent
    assert median_row[-2] == "0"  # failed
