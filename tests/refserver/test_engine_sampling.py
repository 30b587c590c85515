"""Sampling and stop rules: max_tokens, ignore_eos, min_tokens, stop ids, seeds, top-k / top-p."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.sampling import apply_top_k, apply_top_p, banned_token_ids, sample  # noqa: E402
from refserver.engine.types import SamplingParams, TokenEvent  # noqa: E402
from refserver.model import tiny_config, tiny_model  # noqa: E402

PROMPT = [72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100]


def generate(engine: LLMEngine, params: SamplingParams, prompt: list[int] = PROMPT, rid: str = "r") -> list[TokenEvent]:
    engine.add_request(rid, prompt, params)
    events: list[TokenEvent] = []
    while engine.has_unfinished():
        events.extend(e for r, e in engine.step() if r == rid)
    return events


def tokens_of(events: list[TokenEvent]) -> list[int]:
    return [t for e in events for t in e.new_token_ids]


@pytest.fixture(scope="module")
def first_greedy_token(model: Any) -> int:
    return int(model.forward_reference(PROMPT)[-1].argmax())


@pytest.fixture(scope="module")
def eos_first_model(first_greedy_token: int) -> Any:
    """The same weights, but eos is the token greedy decoding produces first for PROMPT."""
    return tiny_model(0, config=dataclasses.replace(tiny_config(), eos_token_ids=(first_greedy_token,)), device="cpu")


@pytest.mark.parametrize("max_tokens", [1, 7, 33])
def test_ignore_eos_with_max_tokens_gives_exactly_that_many(
    make_engine: Callable[..., LLMEngine], eos_first_model: Any, max_tokens: int
) -> None:
    params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
    events = generate(make_engine(model=eos_first_model), params)
    assert len(tokens_of(events)) == max_tokens
    assert events[-1].finished and events[-1].finish_reason == "length"
    assert sum(e.finished for e in events) == 1


def test_eos_stops_generation(
    make_engine: Callable[..., LLMEngine], eos_first_model: Any, first_greedy_token: int
) -> None:
    events = generate(make_engine(model=eos_first_model), SamplingParams(max_tokens=20, temperature=0.0))
    assert tokens_of(events) == [first_greedy_token]
    assert events[-1].finish_reason == "stop"


def test_min_tokens_suppresses_eos(
    make_engine: Callable[..., LLMEngine], eos_first_model: Any, first_greedy_token: int
) -> None:
    events = generate(make_engine(model=eos_first_model), SamplingParams(max_tokens=20, min_tokens=5, temperature=0.0))
    out = tokens_of(events)
    assert len(out) >= 5
    assert first_greedy_token not in out[:5]
    assert events[-1].finish_reason in ("stop", "length")


def test_stop_token_ids_stop_generation(make_engine: Callable[..., LLMEngine], first_greedy_token: int) -> None:
    params = SamplingParams(max_tokens=20, temperature=0.0, stop_token_ids=[first_greedy_token])
    events = generate(make_engine(), params)
    assert tokens_of(events) == [first_greedy_token]
    assert events[-1].finish_reason == "stop"


def test_seeded_sampling_is_reproducible(make_engine: Callable[..., LLMEngine]) -> None:
    params = SamplingParams(max_tokens=24, temperature=1.0, seed=42, ignore_eos=True)
    a = tokens_of(generate(make_engine(seed=123), params))
    b = tokens_of(generate(make_engine(seed=123), params))
    assert a == b
    # Also with other requests sharing the batches and the shared generator advanced.
    engine = make_engine(seed=123)
    engine.add_request("noise", PROMPT[::-1], SamplingParams(max_tokens=30, temperature=1.0, ignore_eos=True))
    assert tokens_of(generate(engine, params)) == a
    other = tokens_of(generate(make_engine(seed=123), dataclasses.replace(params, seed=43)))
    assert other != a


def test_top_k_one_and_tiny_top_p_are_greedy(make_engine: Callable[..., LLMEngine]) -> None:
    greedy = tokens_of(generate(make_engine(seed=123), SamplingParams(max_tokens=16, temperature=0.0, ignore_eos=True)))
    top_k = tokens_of(generate(make_engine(seed=123), SamplingParams(max_tokens=16, temperature=2.0, top_k=1, ignore_eos=True)))
    top_p = tokens_of(generate(make_engine(seed=123), SamplingParams(max_tokens=16, temperature=2.0, top_p=1e-6, ignore_eos=True)))
    assert greedy == top_k == top_p


def test_top_k_keeps_the_k_largest() -> None:
    logits = torch.tensor([0.1, 3.0, 2.0, -1.0, 2.5])
    kept = torch.isfinite(apply_top_k(logits, 2))
    assert kept.tolist() == [False, True, False, False, True]
    assert torch.equal(apply_top_k(logits, 0), logits)


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs.log()
    assert torch.isfinite(apply_top_p(logits, 0.7)).tolist() == [True, True, False, False]
    assert torch.isfinite(apply_top_p(logits, 0.8)).tolist() == [True, True, False, False]
    assert torch.isfinite(apply_top_p(logits, 0.81)).tolist() == [True, True, True, False]
    # Order of the vocabulary does not matter.
    perm = torch.tensor([2, 0, 3, 1])
    assert torch.isfinite(apply_top_p(logits[perm], 0.7)).tolist() == [False, True, False, True]


def test_banned_ids_apply_only_below_min_tokens() -> None:
    params = SamplingParams(min_tokens=2, stop_token_ids=[9])
    assert banned_token_ids(params, 0, (5,)) == [5, 9]
    assert banned_token_ids(params, 2, (5,)) == []
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 9.0, 1.0]])
    assert sample(logits, [SamplingParams(temperature=0.0)], [None], [[5, 9]]) == [10]
