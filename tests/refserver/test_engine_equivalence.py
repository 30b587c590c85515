"""Greedy output of the paged, batched, chunked-prefill engine equals a naive full-recompute forward (seed F4)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.types import SamplingParams  # noqa: E402

MAX_TOKENS = 12


_reference_cache: dict[tuple[int, ...], list[int]] = {}


def reference_greedy(model: Any, prompt: list[int], n: int) -> list[int]:
    key = (*prompt, -n)
    if key not in _reference_cache:
        tokens = list(prompt)
        for _ in range(n):
            tokens.append(int(model.forward_reference(tokens)[-1].argmax()))
        _reference_cache[key] = tokens[len(prompt) :]
    return _reference_cache[key]


def run_all(engine: LLMEngine, prompts: list[list[int]], *, max_tokens: int = MAX_TOKENS) -> dict[str, list[int]]:
    params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
    out: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        engine.add_request(f"r{i}", p, params)
        out[f"r{i}"] = []
    steps = 0
    while engine.has_unfinished():
        for rid, event in engine.step():
            out[rid].extend(event.new_token_ids)
        steps += 1
        assert steps < 10_000, "engine made no progress"
    return out


def random_prompts(seed: int, count: int, lo: int = 3, hi: int = 90) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(256) for _ in range(rng.randrange(lo, hi))] for _ in range(count)]


@pytest.mark.parametrize("concurrency", [1, 4, 16])
@pytest.mark.parametrize("budget", [7, 37, 512])  # 7 and 37 cut prompts inside blocks of 16
def test_greedy_matches_full_recompute(model: Any, make_engine: Callable[..., LLMEngine], concurrency: int, budget: int) -> None:
    prompts = random_prompts(concurrency * 1000 + budget, concurrency)
    engine = make_engine(num_blocks=256, budget=budget)
    got = run_all(engine, prompts)
    for i, p in enumerate(prompts):
        assert got[f"r{i}"] == reference_greedy(model, p, MAX_TOKENS), f"prompt {i} (len {len(p)}) diverged"
    assert engine.block_manager.num_free_blocks == 256


def test_greedy_matches_under_preemption(model: Any, make_engine: Callable[..., LLMEngine]) -> None:
    # 12 blocks of 4 tokens = 48 slots for 8 sequences of up to ~40 tokens: preemption is unavoidable.
    prompts = random_prompts(7, 8, lo=10, hi=28)
    engine = make_engine(num_blocks=12, budget=13, block_size=4)
    got = run_all(engine, prompts)
    assert engine.scheduler.num_preemptions > 0
    for i, p in enumerate(prompts):
        assert got[f"r{i}"] == reference_greedy(model, p, MAX_TOKENS)
    assert engine.block_manager.num_free_blocks == 12


def test_greedy_matches_with_prefix_cache_hits(model: Any, make_engine: Callable[..., LLMEngine]) -> None:
    rng = random.Random(3)
    shared = [rng.randrange(256) for _ in range(40)]
    first = [[*shared, *[rng.randrange(256) for _ in range(rng.randrange(1, 20))]] for _ in range(3)]
    second = [[*shared, *[rng.randrange(256) for _ in range(rng.randrange(1, 20))]] for _ in range(5)]
    engine = make_engine(num_blocks=64, budget=29, block_size=8)
    got_first = run_all(engine, first)
    hits_before = engine.scheduler.prefix_hit_tokens
    got_second = run_all(engine, second)
    assert engine.scheduler.prefix_hit_tokens - hits_before >= 5 * 32  # 4 full shared blocks of 8 each
    for prompts, got in ((first, got_first), (second, got_second)):
        for i, p in enumerate(prompts):
            assert got[f"r{i}"] == reference_greedy(model, p, MAX_TOKENS)


def test_generation_across_many_blocks_matches(model: Any, make_engine: Callable[..., LLMEngine]) -> None:
    # Long decode: the sequence crosses many block boundaries after its prompt.
    prompts = random_prompts(11, 2, lo=5, hi=9)
    engine = make_engine(num_blocks=32, budget=64, block_size=4)
    got = run_all(engine, prompts, max_tokens=40)
    for i, p in enumerate(prompts):
        assert got[f"r{i}"] == reference_greedy(model, p, 40)


def test_greedy_rows_unaffected_by_sampled_neighbours(model: Any, make_engine: Callable[..., LLMEngine]) -> None:
    prompts = random_prompts(21, 6)
    engine = make_engine(num_blocks=128, budget=40)
    greedy = SamplingParams(max_tokens=MAX_TOKENS, temperature=0.0, ignore_eos=True)
    hot = SamplingParams(max_tokens=MAX_TOKENS, temperature=1.5, top_k=50, top_p=0.9, ignore_eos=True)
    out: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        engine.add_request(f"r{i}", p, greedy if i % 2 == 0 else hot)
        out[f"r{i}"] = []
    while engine.has_unfinished():
        for rid, event in engine.step():
            out[rid].extend(event.new_token_ids)
    for i, p in enumerate(prompts):
        assert len(out[f"r{i}"]) == MAX_TOKENS
        if i % 2 == 0:
            assert out[f"r{i}"] == reference_greedy(model, p, MAX_TOKENS)
