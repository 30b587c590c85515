"""The cancellation plan: its forms, its checks, a seeded and repeatable draw per item that leaves the rest of
the workload unchanged, on every workload kind; a cancelled turn ends its session."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadgen.dispatch.runner import Runner
from loadgen.spec.sections import SpecError, WorkloadSpec
from loadgen.types import WorkItem
from loadgen.workload.build import build_workload
from loadgen.workload.cancel import CancelAfter, CancelPlan, parse_cancel_after
from loadgen.workload.lengths import LengthDist, parse_length
from loadgen.workload.think import ThinkTime
from metrics.records.record import RequestRecord
from tests.loadgen.test_sessions import by_session, plan, sessions


@pytest.mark.parametrize(("text", "expected"), [
    ("500ms", CancelAfter(time=ThinkTime("fixed", 0.5))),
    ("uniform:200ms:2s", CancelAfter(time=ThinkTime("uniform", 0.2, 2.0))),
    ("exponential:1s", CancelAfter(time=ThinkTime("exponential", 1.0))),
    ("tokens:16", CancelAfter(tokens=LengthDist("fixed", 16.0))),
    ("tokens:uniform:8:64", CancelAfter(tokens=LengthDist("uniform", 8.0, 64.0))),
])
def test_cancel_after_forms_parse_and_print_back(text: str, expected: CancelAfter) -> None:
    assert parse_cancel_after(text) == expected
    assert parse_cancel_after(str(expected)) == expected


@pytest.mark.parametrize(("bad", "needle"), [
    ("tokens:0", "bad length"), ("tokens:", "bad length"), ("bogus:1s", "--cancel-after: unknown distribution"),
    ("-1s", "--cancel-after"), ("uniform:2s:1s", "--cancel-after"),
])
def test_bad_cancel_after_is_refused_in_one_line(bad: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as info:
        parse_cancel_after(bad)
    assert "\n" not in str(info.value) and "--cancel-after" in str(info.value)


@pytest.mark.parametrize(("rate", "after", "needle"), [
    (0.2, None, "--cancel-rate needs --cancel-after"), (0.0, "1s", "--cancel-after needs --cancel-rate"),
    (1.5, "1s", "from 0 to 1"), (float("nan"), "1s", "from 0 to 1"), (0.5, "tokens:x", "bad length"),
])
def test_the_spec_refuses_half_a_plan(rate: float, after: str | None, needle: str) -> None:
    with pytest.raises(SpecError, match=needle):
        WorkloadSpec(cancel_rate=rate, cancel_after=after)


def test_the_draw_is_seeded_per_item_and_follows_the_rate() -> None:
    plan_ = CancelPlan(0.3, parse_cancel_after("uniform:100ms:1s"), seed=7)
    draws = [plan_.draw(i) for i in range(4000)]
    assert draws == [CancelPlan(0.3, parse_cancel_after("uniform:100ms:1s"), seed=7).draw(i) for i in range(4000)]
    assert [plan_.draw(i) for i in reversed(range(50))] == draws[:50][::-1]  # no dependence on order
    cancelled = [s for s, k in draws if s is not None]
    assert all(k is None for _, k in draws)
    # Binomial(4000, 0.3): sd 29; ±5 sd is 0.3 ± 0.036.
    assert abs(len(cancelled) / 4000 - 0.3) < 0.036
    assert all(0.1 <= s <= 1.0 for s in cancelled)
    other = [CancelPlan(0.3, parse_cancel_after("uniform:100ms:1s"), seed=8).draw(i) for i in range(4000)]
    assert other != draws
    assert all(k == 5 and s is None for s, k in (CancelPlan(1.0, parse_cancel_after("tokens:5"), 0).draw(i)
                                                 for i in range(20)))


def _spec(**kw: Any) -> WorkloadSpec:
    return WorkloadSpec(prompt_tokens=parse_length("8"), output_tokens=parse_length("4"), tokenizer="words", **kw)


def _plain(item: WorkItem) -> WorkItem:
    return replace(item, cancel_after_s=None, cancel_after_tokens=None)


def test_single_request_workloads_carry_the_plan_and_nothing_else_changes(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"messages": [{"role": "user", "content": f"q {i}"}]}) + "\n"
                            for i in range(10)))
    for extra in ({}, {"dataset": str(rows)}, {"cache_bust": True}):
        base = build_workload(_spec(**extra), seed=3, embedded=False)
        cancelling = build_workload(_spec(cancel_rate=0.5, cancel_after="tokens:uniform:2:9", **extra),
                                    seed=3, embedded=False)
        again = build_workload(_spec(cancel_rate=0.5, cancel_after="tokens:uniform:2:9", **extra),
                               seed=3, embedded=False)
        items = [cancelling.item(i) for i in range(200)]  # type: ignore[union-attr]
        planned = [i.cancel_after_tokens for i in items if i.cancel_after_tokens is not None]
        assert 60 < len(planned) < 140 and all(2 <= k <= 9 for k in planned)
        assert all(i.cancel_after_s is None for i in items)
        assert [again.item(i).cancel_after_tokens for i in range(200)] == [  # type: ignore[union-attr]
            i.cancel_after_tokens for i in items]
        if "cache_bust" not in extra:  # a cache-bust prefix holds a random run token
            assert [_plain(i) for i in items] == [base.item(i) for i in range(200)]  # type: ignore[union-attr]
        assert cancelling.describe()["cancel"] == {"rate": 0.5, "after": "tokens:uniform:2:9"}


def test_conversations_draw_per_session_and_turn() -> None:
    spec = _spec(turns=parse_length("4"), cancel_rate=0.25, cancel_after="300ms")
    workload = build_workload(spec, seed=1, embedded=False)
    again = build_workload(spec, seed=1, embedded=False)
    turns = [t for s in range(100) for t in workload.session(s).turns]  # type: ignore[union-attr]
    assert turns == [t for s in range(100) for t in again.session(s).turns]  # type: ignore[union-attr]
    timed = [t.cancel_after_s for t in turns if t.cancel_after_s is not None]
    assert 50 < len(timed) < 150 and set(timed) == {0.3}  # 400 turns at 0.25: sd 8.7


class CancellingSender:
    """Answers every turn; a turn with a planned cancellation comes back cancelled as the client makes it."""

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None) -> RequestRecord:
        self.items.append(item)
        sent = time.perf_counter_ns() - anchor_ns
        await asyncio.sleep(0.005)
        now = time.perf_counter_ns() - anchor_ns
        if item.cancel_after_s is not None:
            return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, status="cancelled",
                                 error_kind="planned_cancel", chunk_ns=[now], closed_ns=now)
        if text_out is not None:
            text_out.append("an answer")
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, chunk_ns=[now], closed_ns=now)


async def test_a_cancelled_turn_ends_its_session_as_a_failed_turn_does() -> None:
    from loadgen.workload.cancel import CancellingSessions

    # Turn 2 of every session is cancelled (rate 1 would cancel turn 1: pick the plan by turn instead).
    class SecondTurn(CancellingSessions):
        def session(self, index: int) -> Any:
            out = super().session(index)
            out.turns = [replace(t, cancel_after_s=0.1 if n == 2 else None) for n, t in enumerate(out.turns, 1)]
            return out

    workload = SecondTurn(sessions("4"), CancelPlan(0.0, parse_cancel_after("1s"), 0))
    sender = CancellingSender()
    state = await Runner(sender, workload, plan(count=2)).run()
    assert [i.cancel_after_s for i in sender.items] == [None, 0.1, None, 0.1]
    for turns in by_session(state.records).values():
        assert [r.error_kind for r in turns] == [None, "planned_cancel", "session_ended", "session_ended"]
        assert "was cancelled as planned" in (turns[2].error_message or "")


def test_a_trace_replay_carries_the_plan_and_keeps_its_cache_prediction(tmp_path: Path) -> None:
    from loadgen.run.cache_prediction import run_prediction
    from loadgen.workload.traces import load_trace
    from tests.loadgen._traces import reuse_rows, write_mooncake

    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(30))
    trace = load_trace(str(path))
    rows = np.arange(trace.n, dtype=np.int64)
    base = build_workload(_spec(trace=str(path)), seed=2, embedded=False, trace=trace, rows=rows)
    cancelling = build_workload(_spec(trace=str(path), cancel_rate=0.5, cancel_after="tokens:3"), seed=2,
                                embedded=False, trace=trace, rows=rows)
    items = [cancelling.item(i) for i in range(30)]  # type: ignore[union-attr]
    assert 5 <= sum(i.cancel_after_tokens == 3 for i in items) <= 25
    assert [_plain(i) for i in items] == [base.item(i) for i in range(30)]  # type: ignore[union-attr]
    assert run_prediction(cancelling, None) == run_prediction(base, None) is not None


@pytest.mark.parametrize(("args", "expected"), [
    (["--cancel-rate", "0.2"], "--cancel-rate needs --cancel-after (when to close: 500ms, uniform:200ms:2s, tokens:16)"),
    (["--cancel-rate", "2", "--cancel-after", "1s"], "--cancel-rate must be a share from 0 to 1, got 2"),
    (["--cancel-rate", "0.2", "--cancel-after", "soon"], "use DURATION, exponential:MEAN, uniform:LO:HI or lognormal:MEDIAN:SIGMA"),
])
def test_a_bad_cancel_option_is_one_line_and_exit_2(args: list[str], expected: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from loadgen.cli import run_cli

    out = tmp_path / "out"
    code = run_cli(["run", "--url", "http://127.0.0.1:9", "--model", "m", "--output", str(out), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.endswith(expected), err
    assert not out.exists()


def test_print_config_writes_the_plan_and_reads_it_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loadgen.cli import run_cli

    args = ["run", "--url", "http://127.0.0.1:9", "--cancel-rate", "0.25", "--cancel-after", "tokens:uniform:4:32"]
    assert run_cli([*args, "--print-config"]) == 0
    text = capsys.readouterr().out
    assert "cancel_rate: 0.25" in text and "cancel_after: tokens:uniform:4:32" in text
    config = tmp_path / "printed.yaml"
    config.write_text(text)
    assert run_cli(["run", "--config", str(config), "--print-config"]) == 0
    assert capsys.readouterr().out == text


def test_a_plan_with_a_model_mix_and_images_keeps_each_request_whole() -> None:
    """The plan, a --model list and --images together: every request keeps its model, its images and its
    cancellation, and a conversation keeps its model on every turn beside the planned cancels."""
    from loadgen.workload.images.attach import ImageWorkload
    from loadgen.workload.images.spec import ImageSpec
    from loadgen.workload.models import parse_models

    mix = parse_models("a,b")
    spec = _spec(cancel_rate=1.0, cancel_after="tokens:3", images=ImageSpec(count="1", size="8x8", format="png"))
    single: Any = build_workload(spec, seed=5, embedded=False, models=mix)
    assert isinstance(single, ImageWorkload) and hasattr(single, "prime")
    items = [single.item(i) for i in range(10)]
    assert all(i.cancel_after_tokens == 3 and i.images == 1 for i in items)
    assert [i.model for i in items] == [mix.draw(5, i) for i in range(10)]
    single.close()
    sessions: Any = build_workload(_spec(turns=parse_length("3"), cancel_rate=1.0, cancel_after="1s"), seed=5,
                                   embedded=False, models=mix)
    for s in range(10):
        session = sessions.session(s)
        assert session.model == mix.draw(5, s) and all(t.cancel_after_s == 1.0 for t in session.turns)
