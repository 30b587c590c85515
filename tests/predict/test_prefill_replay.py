"""Which steps computed each prompt (loadgen.predict.prefill), replayed by hand on three requests."""

from __future__ import annotations

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
    510), which computes B's last 189 tokens. B's prefill time spans both steps."""
    records = [_record(0, 10, -0.5, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]), _record(1, 400, 0.01, [0.2, 0.3]),
               _record(2, 300, 0.02, [0.3, 0.4])]
    c_first = StepFeatures(10, 10.0 * 10, 0, 0)
    step_02 = StepFeatures(400 + 111, 400.0 * 400 + 111.0 * 300, 1, 10 + 2)  # C's third token: 12 KV tokens
    step_03 = StepFeatures(189, 189.0 * 300, 2, (10 + 3) + (400 + 1))
    assert prefill_steps(records, max_batched_tokens=512) == [(c_first,), (step_02,), (step_02, step_03)]
    # Without the budget nothing is shared: each prompt is whole in the step of its first token.
    assert prefill_steps(records)[2] == (StepFeatures(300, 300.0 * 300, 2, 414),)


def test_a_prompt_longer_than_the_steps_seen_gets_steps_of_its_own() -> None:
    # 1,000 tokens alone on an idle engine with a 512-token budget: the chunk times see only the step of
    # its first token, which is given a budget's worth (512); the other 488 get a step no chunk marks.
    records = [_record(0, 1000, 0.0, [0.2, 0.3, 0.4])]
    own, last = prefill_steps(records, max_batched_tokens=512)[0]
    assert own == StepFeatures(488, 488.0 * 488, 0, 0)
    assert last == StepFeatures(512, 1000.0 * 512, 0, 0)  # chunk × the prompt, capped with the step
