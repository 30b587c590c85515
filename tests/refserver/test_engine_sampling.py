"""Sampling and stop rules: max_tokens, ignore_eos, min_tokens, stop ids, seeds, top-k / top-p."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from refserver.engine.config import EngineConfig  # noqa: E402
from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.runner import TorchModelRunner  # noqa: E402
from refserver.engine.sampling import apply_top_k, apply_top_p, banned_token_ids, sample  # noqa: E402
from refserver.engine.types import SamplingParams, TokenEvent  # noqa: E402
from refserver.model import tiny_config, tiny_model  # noqa: E402

PROMPT = [72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100]


def make_engine(model: Any, *, num_blocks: int = 64) -> LLMEngine:
    config = EngineConfig(num_blocks=num_blocks, block_size=16)
    return LLMEngine(TorchModelRunner(model, num_blocks=num_blocks, block_size=16, seed=123), config)


def generate(engine: LLMEngine, params: SamplingParams, prompt: list[int] = PROMPT, rid: str = "r") -> list[TokenEvent]:
    engine.add_request(rid, prompt, params)
    events: list[TokenEvent] = []
    while engine.has_unfinished():
        events.extend(e for r, e in engine.step() if r == rid)
    return events


def tokens_of(events: list[TokenEvent]) -> list[int]:
    return [t for e in events for t in e.new_token_ids]


@pytest.fixture(scope="module")
def model() -> Any:
    return tiny_model(0, device="cpu")


@pytest.fixture(scope="module")
def first_greedy_token(model: Any) -> int:
    return int(model.forward_reference(PROMPT)[-1].argmax())


@pytest.fixture(scope="module")
def eos_first_model(first_greedy_token: int) -> Any:
    """The same weights, but eos is the token greedy decoding produces first for PROMPT."""
    return tiny_model(0, config=dataclasses.replace(tiny_config(), eos_token_ids=(first_greedy_token,)), device="cpu")


@pytest.mark.parametrize("max_tokens", [1, 7, 33])
def test_ignore_eos_with_max_tokens_gives_exactly_that_many(eos_first_model: Any, max_tokens: int) -> None:
    events = generate(make_engine(eos_first_model), SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True))
    assert len(tokens_of(events)) == max_tokens
    assert events[-1].finished and events[-1].finish_reason == "length"
    assert sum(e.finished for e in events) == 1


def test_eos_stops_generation(eos_first_model: Any, first_greedy_token: int) -> None:
    events = generate(make_engine(eos_first_model), SamplingParams(max_tokens=20, temperature=0.0))
    assert tokens_of(events) == [first_greedy_token]
    assert events[-1].finish_reason == "stop"


def test_min_tokens_suppresses_eos(eos_first_model: Any, first_greedy_token: int) -> None:
    events = generate(make_engine(eos_first_model), SamplingParams(max_tokens=20, min_tokens=5, temperature=0.0))
    out = tokens_of(events)
    assert len(out) >= 5
    assert first_greedy_token not in out[:5]
    assert events[-1].finish_reason in ("stop", "length")


def test_stop_token_ids_stop_generation(model: Any, first_greedy_token: int) -> None:
    params = SamplingParams(max_tokens=20, temperature=0.0, stop_token_ids=[first_greedy_token])
    events = generate(make_engine(model), params)
    assert tokens_of(events) == [first_greedy_token]
    assert events[-1].finish_reason == "stop"


def test_seeded_sampling_is_reproducible(model: Any) -> None:
    params = SamplingParams(max_tokens=24, temperature=1.0, seed=42, ignore_eos=True)
    a = tokens_of(generate(make_engine(model), params))
    b = tokens_of(generate(make_engine(model), params))
    assert a == b
    # Also with other requests sharing the batches and the shared generator advanced.
    engine = make_engine(model)
    engine.add_request("noise", PROMPT[::-1], SamplingParams(max_tokens=30, temperature=1.0, ignore_eos=True))
    assert tokens_of(generate(engine, params)) == a
    other = tokens_of(generate(make_engine(model), dataclasses.replace(params, seed=43)))
    assert other != a


def test_top_k_one_and_tiny_top_p_are_greedy(model: Any) -> None:
    greedy = tokens_of(generate(make_engine(model), SamplingParams(max_tokens=16, temperature=0.0, ignore_eos=True)))
    top_k = tokens_of(generate(make_engine(model), SamplingParams(max_tokens=16, temperature=2.0, top_k=1, ignore_eos=True)))
    top_p = tokens_of(generate(make_engine(model), SamplingParams(max_tokens=16, temperature=2.0, top_p=1e-6, ignore_eos=True)))
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
