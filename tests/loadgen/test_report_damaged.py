"""`goodput report` on a damaged records.jsonl: every line that is not a record is counted and reported,
the rest is summarised, exit 1 unless --allow-damaged; a torn last line is reported and harmless."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest

from loadgen.cli import run_cli
from loadgen.run.outputs import build_outputs

RUN = {"target": "http://127.0.0.1:1", "model": "m", "load": "poisson@10.00", "complete": True, "settings": {}}


def record(rid: int, **changes: Any) -> bytes:
    base: dict[str, Any] = {
        "id": rid, "intended_ns": 100_000_000 * rid, "sent_ns": 100_000_000 * rid + 1_000, "status": "ok",
        "chunk_ns": [100_000_000 * rid + 20_000_000 + j * 5_000_000 for j in range(5)], "chunk_tokens": [1] * 5,
        "token_source": "server", "output_tokens": 5, "output_tokens_estimated": False, "prompt_tokens": 30,
        "prompt_tokens_estimated": False, "closed_ns": 100_000_000 * rid + 50_000_000, "tags": {"scenario": "s"},
    }
    base.update(changes)
    return orjson.dumps(base) + b"\n"


def run_dir(path: Path, lines: list[bytes]) -> Path:
    path.mkdir()
    (path / "records.jsonl").write_bytes(b"".join(lines))
    (path / "run.json").write_text(json.dumps(RUN))
    return path


# The issue's damage, one line each, between good records (lines 1, 3, 5, ... are records).
ISSUE_DAMAGE = [b"garbage\n", b"{}\n", b"[1,2,3]\n", b"null\n", b'{"id": 91, "status": "ok"}\n',
                record(92, intended_ns="abc")]


def damaged_lines() -> list[bytes]:
    lines = []
    for i, bad in enumerate(ISSUE_DAMAGE):
        lines += [record(i), bad]
    return [*lines, record(len(ISSUE_DAMAGE))]


def summary_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path / "summary.json").read_text())
    return data


def test_the_issues_damaged_lines_are_counted_reported_and_exit_1(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = run_dir(tmp_path / "run", damaged_lines())
    assert run_cli(["report", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert ("records.jsonl: 6 of 13 lines are not records and were skipped (line 2: not valid JSON; "
            "line 4: id is missing or null; line 6: not a JSON object; 3 more") in err
    assert "the other 7 records are summarised; exit 1 (--allow-damaged: 0)" in err
    summary = summary_of(out)
    assert summary["input"] == {
        "records_file": "records.jsonl", "lines": 13, "records": 7, "blank_lines": 0, "skipped": 6,
        "skipped_lines": [{"line": 2, "reason": "not valid JSON"}, {"line": 4, "reason": "id is missing or null"},
                          {"line": 6, "reason": "not a JSON object"}, {"line": 8, "reason": "not a JSON object"},
                          {"line": 10, "reason": "intended_ns is missing or null"},
                          {"line": 12, "reason": "intended_ns is not an integer"}],
        "torn_last_line": None,
    }
    assert summary["requests"]["sent"] == 7
    assert pq.read_table(out / "records.parquet").column("id").to_pylist() == list(range(7))
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []  # no temporary copy left


def test_allow_damaged_exits_0_and_still_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_dir(tmp_path / "run", damaged_lines())
    assert run_cli(["report", str(out), "--quiet", "--allow-damaged"]) == 0
    err = capsys.readouterr().err
    assert "6 of 13 lines are not records" in err and "exit 1" not in err
    assert summary_of(out)["input"]["skipped"] == 6


def test_the_summary_is_that_of_the_records_alone(tmp_path: Path) -> None:
    """Damage Arrow reads (a `{}` line) and damage it cannot (garbage): either way the summary and
    records.parquet are those of the same file without the damaged lines."""
    clean = [record(i) for i in range(6)]
    expected = build_outputs(run_dir(tmp_path / "clean", clean), dict(RUN)).summary
    for name, bad in (("arrow", b"{}\n"), ("lines", b"garbage\n")):
        out = run_dir(tmp_path / name, [*clean[:3], bad, *clean[3:]])
        summary = build_outputs(out, dict(RUN)).summary
        assert summary.pop("input")["skipped_lines"] == [{"line": 4, "reason": {"arrow": "id is missing or null",
                                                                                  "lines": "not valid JSON"}[name]}]
        assert summary == {k: v for k, v in expected.items() if k != "input"}, name
        assert pq.read_table(out / "records.parquet").equals(pq.read_table(tmp_path / "clean" / "records.parquet"))


def test_a_torn_last_line_is_reported_but_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_dir(tmp_path / "run", [record(0), record(1), record(2)[:25]])
    assert run_cli(["report", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "records.jsonl: last line 3 is cut short (the run was killed while writing it) and was left out" in err
    assert "not records" not in err
    read = summary_of(out)["input"]
    assert (read["lines"], read["records"], read["skipped"], read["torn_last_line"]) == (3, 2, 0, 3)


def test_a_clean_file_says_nothing_and_the_summary_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_dir(tmp_path / "run", [record(0), record(1)])
    assert run_cli(["report", str(out), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert summary_of(out)["input"] == {"records_file": "records.jsonl", "lines": 2, "records": 2, "blank_lines": 0,
                                        "skipped": 0, "skipped_lines": [], "torn_last_line": None}


def test_an_output_that_cannot_be_written_is_one_line_and_exit_1(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = run_dir(tmp_path / "run", [record(0)])
    (out / "summary.json").mkdir()
    assert run_cli(["report", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("goodput report: error: ") and err.count("\n") == 1 and "summary.json" in err


def test_every_record_twice_is_damage_counted_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    once = [record(i) for i in range(20)]
    out = run_dir(tmp_path / "run", once + once)
    assert run_cli(["report", str(out)]) == 1  # damage: exit 1, as for any line that is not a record
    captured = capsys.readouterr()
    assert "requests: 20 = 20 sent" in captured.out
    assert "20 of 40 lines are not records and were skipped (line 21: duplicate id 0 (first on line 1)" in captured.err
    summary = summary_of(out)
    assert summary["requests"]["records"] == 20 and summary["input"]["skipped"] == 20
    rate = summary["throughput"]["requests_per_s"]
    single = run_dir(tmp_path / "single", once)
    assert run_cli(["report", str(single), "--quiet"]) == 0
    assert summary_of(single)["throughput"]["requests_per_s"] == rate
    assert pq.read_table(out / "records.parquet").num_rows == 20
    assert run_cli(["report", str(out), "--quiet", "--allow-damaged"]) == 0
