"""run.json's typed writer (metrics.results.run_write): the document a run wrote, rebuilt from its sections,
is the same file byte for byte, and the typed view reads back what was written (each optional key in the
place a run has always put it)."""

from __future__ import annotations

import json
from pathlib import Path

from metrics.results import (
    RUN_FILE,
    RunDocument,
    RunEnd,
    RunFile,
    RunResolved,
    RunStart,
    read_run,
    read_run_view,
    write_run_file,
)

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "run" / RUN_FILE


def _start(raw: dict[str, object], **changes: object) -> RunStart:
    """The start of the golden run, from its run.json's own values."""
    resolved = raw["resolved"]
    assert isinstance(resolved, dict)
    fields = dict(
        spec=raw["spec"],
        resolved=RunResolved(schedule_end_s=resolved["schedule_end_s"], roofline=resolved["roofline"],
                             token_counter=resolved["token_counter"], ignore_eos=resolved["ignore_eos"],
                             prompt_sizing=resolved["prompt_sizing"]),
        target=raw["target"], embedded=raw["embedded"], model=raw["model"], endpoint=raw["endpoint"],
        load=raw["load"], open_loop=raw["open_loop"], duration_s=raw["duration_s"], requests=raw["requests"],
        seed=raw["seed"], workload=raw["workload"], tool_version=raw["tool_version"], output_dir=raw["output_dir"])
    fields.update(changes)
    return RunStart(**fields)  # type: ignore[arg-type]


def test_the_golden_run_json_is_written_byte_for_byte(tmp_path: Path) -> None:
    golden = GOLDEN.read_text()
    raw = json.loads(golden)
    end = RunEnd(start_unix_s=raw["start_unix_s"], complete=raw["complete"], interrupted=raw["interrupted"],
                 unwritten_records=raw["unwritten_records"], aborted=raw["aborted"])
    write_run_file(tmp_path, RunFile(_start(raw)).ended(end))
    assert (tmp_path / RUN_FILE).read_text() == golden
    assert read_run_view(tmp_path) == read_run_view(GOLDEN.parent)
    view = read_run_view(tmp_path)
    assert view.complete is True and view.start_unix_s == 1796429902.590892 and view.schema_version == 2
    assert view.roofline == raw["resolved"]["roofline"] and view.spec == raw["spec"]


def test_before_the_first_request_the_run_is_not_complete(tmp_path: Path) -> None:
    raw = json.loads(GOLDEN.read_text())
    write_run_file(tmp_path, RunFile(_start(raw)))
    written = read_run(tmp_path)
    ended = ("start_unix_s", "interrupted", "unwritten_records", "aborted")
    assert list(written) == [k for k in raw if k not in ended]  # `complete` last, where the end keeps it
    assert written["complete"] is False
    view = read_run_view(tmp_path)
    assert view.complete is False and view.start_unix_s is None and not view.aborted


def test_optional_keys_keep_their_places_and_read_back(tmp_path: Path) -> None:
    raw = json.loads(GOLDEN.read_text())
    prediction = {"hit_rate": 0.5}
    start = _start(raw, model="a,b", models={"a": 0.5, "b": 0.5},
                   resolved=RunResolved(1.5, None, "bytes", False, {"method": "counter", "counter": "bytes"},
                                        prefix_cache_prediction=prediction))
    lost = [{"worker": 1, "reason": "exit code 9", "at_s": 0.5}]
    end = RunEnd(start_unix_s=12.5, complete=False, interrupted=False, unwritten_records=3, aborted=True,
                 abort_reason="threshold failed at 1.0 s: x", write_error="records.jsonl: No space left on device",
                 stopped_early="the first 8 requests all failed alike")
    run = RunFile(start).with_workers({"mode": "processes", "count": 2, "pids": [1, 2]})
    run = run.with_workers({"mode": "processes", "count": 2, "pids": [1, 2], "lost": lost}).ended(end)
    assert run.workers_lost and not RunFile(start).workers_lost
    write_run_file(tmp_path, run)
    written = read_run(tmp_path)
    assert list(written) == ["schema_version", "spec", "resolved", "target", "embedded", "model", "models",
                             "endpoint", "load", "open_loop", "duration_s", "requests", "seed", "workload",
                             "tool_version", "output_dir", "complete", "workers", "start_unix_s", "interrupted",
                             "unwritten_records", "aborted", "abort_reason", "write_error", "stopped_early"]
    assert list(written["resolved"]) == ["schedule_end_s", "roofline", "token_counter", "ignore_eos",
                                         "prompt_sizing", "prefix_cache_prediction"]
    assert written["models"] == {"a": 0.5, "b": 0.5} and written["resolved"]["prefix_cache_prediction"] == prediction
    view = read_run_view(tmp_path)
    assert view == RunDocument.from_json(run.to_json())
    assert view.complete is False and view.aborted and view.unwritten_records == 3
    assert view.write_error == "records.jsonl: No space left on device" and view.workers_lost == lost
    assert view.schedule_end_s == 1.5 and view.roofline is None and view.resolved_ignore_eos is False
    assert (tmp_path / RUN_FILE).read_text() == json.dumps(written, indent=2) + "\n"
