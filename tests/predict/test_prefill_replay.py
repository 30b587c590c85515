"""Which steps computed each prompt (loadgen.predict.prefill), replayed by hand on a few requests."""

from __future__ import annotations

import pytest

from loadgen.predict import prefill
from loadgen.predict.prefill import prefill_steps
from loadgen.predict.step_model import StepFeatures
from metrics.records.record import RequestRecord


def _record(rid: int, prompt: int, sent_s: float, chunks_s: list[float]) -> RequestRecord:
    return RequestRecord(id=rid, intended_ns=int(sent_s * 1e9), sent_ns=int(sent_s * 1e9),
                         chunk_ns=[round(t * 1e9) for t in chunks_s], chunk_tokens=[1] * len(chunks_s),
                         token_source="usage_delta", output_tokens=len(chunks_s), output_tokens_estimated=False,
                         prompt_tokens=prompt, cached_tokens=0)


def test_a_prompt_that_waits_behind_another_spans_two_steps() -> None:
    """Budget 512. C (10-token prompt) decodes in every step, ending at 0.0, 0.1, ... 0.5 s. A (400 tokens,
    sent at 0.01) and B (300, sent at 0.02) both arrive during the step ending at 0.1, so both may start
    in the step ending at 0.2 (budget 512 - 1 decode = 511): A's first token comes from it, so A takes its
    400 and B the 111 left. B's first token comes from the step ending at 0.3 (decodes: C and A, budget
    510), which computes B's last 189 tokens. B's prefill time spans both steps. Each chunk counts × the
    context after it: A's 400 × 400, B's 111 × 111, then B's 189 × 300."""
    records = [_record(0, 10, -0.5, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]), _record(1, 400, 0.01, [0.2, 0.3]),
               _record(2, 300, 0.02, [0.3, 0.4])]
    c_first = StepFeatures(10, 10.0 * 10, 0, 0)
    step_02 = StepFeatures(400 + 111, 400.0 * 400 + 111.0 * 111, 1, 10 + 2)  # C's third token: 12 KV tokens
    step_03 = StepFeatures(189, 189.0 * 300, 2, (10 + 3) + (400 + 1))
    assert prefill_steps(records, max_batched_tokens=512) == [(c_first,), (step_02,), (step_02, step_03)]
    # Without the budget nothing is shared: each prompt is whole in the step of its first token.
    assert prefill_steps(records)[2] == (StepFeatures(300, 300.0 * 300, 2, 414),)


def test_a_prompt_longer_than_the_steps_seen_gets_steps_of_its_own() -> None:
    # 1,000 tokens alone on an idle engine with a 512-token budget: the scheduler computes a full budget
    # (512) in a step no chunk marks, then the other 488 in the step of its first token.
    records = [_record(0, 1000, 0.0, [0.2, 0.3, 0.4])]
    own, last = prefill_steps(records, max_batched_tokens=512)[0]
    assert own == StepFeatures(512, 512.0 * 512, 0, 0)
    assert last == StepFeatures(488, 488.0 * 1000, 0, 0)


def test_first_tokens_of_one_step_share_its_budget_first_come_first_served() -> None:
    """Budget 512, no decodes. A (600 tokens) sent at 0 and B (100) at 0.05 both get their first token in
    the step ending at 0.2. The scheduler runs A's first 512 in a step no chunk marks (B not yet sent when it
    began), then A's last 88 and B's 100 in the step of both first tokens: 188 tokens. A's prefill spans
    the 512-token step and the 188-token one, B's only the 188-token one."""
    records = [_record(0, 600, 0.0, [0.2, 0.3]), _record(1, 100, 0.05, [0.2, 0.3])]
    hidden = StepFeatures(512, 512.0 * 512, 0, 0)
    shared = StepFeatures(88 + 100, 88.0 * 600 + 100.0 * 100, 0, 0)
    assert prefill_steps(records, max_batched_tokens=512) == [(hidden, shared), (shared,)]
    # Sent the other way round, B's 100 come first: B 100 and A 412 in the unmarked step, A's last 188 after.
    swapped = [_record(0, 600, 0.05, [0.2, 0.3]), _record(1, 100, 0.0, [0.2, 0.3])]
    early = StepFeatures(512, 100.0 * 100 + 412.0 * 412, 0, 0)
    late = StepFeatures(188, 188.0 * 600, 0, 0)
    assert prefill_steps(swapped, max_batched_tokens=512) == [(early, late), (early, late)]


def test_the_replay_sorts_the_requests_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear, not quadratic: each request's send time is read once, however many steps there are (before,
    every step re-sorted every waiting request)."""
    calls = []
    real = prefill._sent
    monkeypatch.setattr(prefill, "_sent", lambda c, k: calls.append(k) or real(c, k))
    records = [_record(i, 50, i * 0.1, [i * 0.1 + 0.05 + 0.1 * s for s in range(5)]) for i in range(40)]
    assert len(prefill_steps(records, max_batched_tokens=512)) == 40
    assert len(calls) == 40


def test_requests_of_one_burst_share_their_prefill_steps() -> None:
    # Two 100-token prompts sent together on an idle engine both prefill in the step ending at 0.2: two
    # requests, one distinct prefill step (the weight of the server's prefill row counts steps, not requests).
    from loadgen.predict.prefill import replay

    found = replay([_record(0, 100, 0.0, [0.2, 0.3]), _record(1, 100, 0.0, [0.2, 0.3])], max_batched_tokens=512)
    shared = StepFeatures(200, 2 * 100.0 * 100, 0, 0)
    assert found.per_request == [(shared,), (shared,)] and found.steps == 1
