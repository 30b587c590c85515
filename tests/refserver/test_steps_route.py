"""GET /v1/goodput/steps serves the engine's step log, and `goodput run`'s scraper collects the steps made
between its first and last scrape into engine_steps.jsonl (none for a server without the route)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from loadgen.run.scrape import ServerScraper
from refserver.engine.runner_base import ScheduledBatch, ScheduledSeq
from refserver.engine.step_log import StepLog
from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread


@dataclass
class _Inner:
    step_log: StepLog = field(default_factory=StepLog)


@dataclass
class LoggingEngine(FakeEngine):
    """FakeEngine with the step log an AsyncLLMEngine's engine keeps."""

    engine: _Inner = field(default_factory=_Inner)


def _batch(*items: tuple[int, int]) -> ScheduledBatch:
    """Scheduled sequences of (tokens, start position); the sequence objects are not read."""
    return ScheduledBatch([ScheduledSeq(None, [0] * n, pos, [], True) for n, pos in items])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, StepLog]]:
    engine = LoggingEngine()
    with serve_in_thread(make_app(engine)) as url:
        yield url, engine.engine.step_log


def test_the_route_serves_the_steps_after_a_given_one(served: tuple[str, StepLog]) -> None:
    url, log = served
    before = httpx.get(f"{url}/v1/goodput/steps", timeout=10).json()["last"]
    log.record(_batch((300, 0), (1, 99), (1, 41)), 1.0, 1.25)
    body = httpx.get(f"{url}/v1/goodput/steps", params={"after": before}, timeout=10).json()
    assert body["last"] == before + 1 and body["dropped"] == 0
    assert dict(zip(body["fields"], body["steps"][0], strict=True)) == {
        "seq": before + 1, "start_s": 1.0, "duration_s": 0.25, "lead_s": None, "prefill_tokens": 300,
        "prefill_ctx": 300 * 300, "decode_seqs": 2, "kv_tokens": 100 + 42}
    bad = httpx.get(f"{url}/v1/goodput/steps", params={"after": "-1"}, timeout=10)
    assert bad.status_code == 400 and "after must be a whole number" in bad.json()["error"]["message"]


def test_an_engine_without_a_step_log_answers_404() -> None:
    with serve_in_thread(make_app(FakeEngine())) as url:
        assert httpx.get(f"{url}/v1/goodput/steps", timeout=10).status_code == 404
        scraper = ServerScraper(f"{url}/metrics", interval_s=60)
        scraper.start()
        scraper.stop()
        assert not scraper.steps.active


def test_the_scraper_keeps_the_steps_of_the_run_only(served: tuple[str, StepLog], tmp_path: Path) -> None:
    url, log = served
    log.record(_batch((64, 0)), 0.0, 0.01)  # before the run
    scraper = ServerScraper(f"{url}/metrics", interval_s=60)
    scraper.start()
    log.record(_batch((1, 64)), 0.02, 0.03)
    log.record(_batch((128, 0), (1, 65)), 0.03, 0.05)
    scraper.stop()
    scraper.save(tmp_path)
    head, *rows = [json.loads(line) for line in (tmp_path / "engine_steps.jsonl").read_text().splitlines()]
    assert head["dropped"] == 0 and head["over_limit"] == 0
    at = {name: head["fields"].index(name) for name in ("prefill_tokens", "decode_seqs", "duration_s")}
    assert [(r[at["prefill_tokens"]], r[at["decode_seqs"]]) for r in rows] == [(0, 1), (128, 1)]
    assert [r[at["duration_s"]] for r in rows] == pytest.approx([0.01, 0.02])
