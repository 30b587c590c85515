"""Prefix caching through the engine: shared prompt prefixes are served from cached blocks."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.types import SamplingParams, TokenEvent  # noqa: E402

PARAMS = SamplingParams(max_tokens=4, temperature=0.0, ignore_eos=True)


def run(engine: LLMEngine, rid: str, prompt: list[int]) -> list[TokenEvent]:
    engine.add_request(rid, prompt, PARAMS)
    events: list[TokenEvent] = []
    while engine.has_unfinished():
        events.extend(e for r, e in engine.step() if r == rid)
    return events


def prompts_with_shared_prefix(n_prefix: int = 64) -> tuple[list[int], list[int]]:
    rng = random.Random(5)
    prefix = [rng.randrange(256) for _ in range(n_prefix)]
    return [*prefix, 1, 2, 3, 4, 5], [*prefix, 9, 8, 7]


@pytest.mark.parametrize("budget", [512, 24])  # whole-prompt prefill, and a prefill chunked mid-block
def test_second_request_reuses_a_64_token_prefix(make_engine: Callable[..., LLMEngine], budget: int) -> None:
    engine = make_engine(budget=budget)
    first, second = prompts_with_shared_prefix()
    ev1 = run(engine, "a", first)
    assert all(e.num_cached_tokens == 0 for e in ev1)
    ev2 = run(engine, "b", second)
    assert ev2[0].num_cached_tokens >= 48
    assert ev2[0].num_cached_tokens == 64  # all four full blocks of the shared prefix
    assert ev2[-1].finished and ev2[-1].num_cached_tokens == 64
    stats = engine.stats()
    assert stats.prefix_queries_tokens == len(first) + len(second)
    assert stats.prefix_hit_tokens == 64


def test_cached_prefix_is_shared_while_the_first_request_still_runs(make_engine: Callable[..., LLMEngine]) -> None:
    engine = make_engine()
    first, second = prompts_with_shared_prefix()
    engine.add_request("a", first, SamplingParams(max_tokens=50, temperature=0.0, ignore_eos=True))
    engine.step()  # a's prompt is computed and its full blocks registered
    engine.add_request("b", second, PARAMS)
    engine.step()
    a, b = engine.seqs["a"], engine.seqs["b"]
    assert b.num_cached_tokens == 64
    assert a.block_table[:4] == b.block_table[:4]
    assert all(engine.block_manager.blocks[x].ref_count == 2 for x in a.block_table[:4])


def test_identical_prompt_recomputes_its_last_token(make_engine: Callable[..., LLMEngine]) -> None:
    engine = make_engine()
    prompt, _ = prompts_with_shared_prefix()
    run(engine, "a", prompt[:64])
    events = run(engine, "b", prompt[:64])
    assert events[0].num_cached_tokens == 48  # the block holding the last prompt token is recomputed


def test_no_hits_with_prefix_caching_off(make_engine: Callable[..., LLMEngine]) -> None:
    engine = make_engine(prefix_caching=False)
    first, second = prompts_with_shared_prefix()
    run(engine, "a", first)
    assert run(engine, "b", second)[0].num_cached_tokens == 0
    assert engine.stats().prefix_hit_tokens == 0
