"""Fixtures shared by the reference server's tests: the tiny model, engines built on it, and a served
fake engine."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread

if TYPE_CHECKING:
    from refserver.engine.llm_engine import LLMEngine

@pytest.fixture(scope="session")
def model() -> Any:
    """The tiny random Llama (seed 0), built once: engines read its weights and never change them.

    On the CPU unless GOODPUT_TEST_DEVICE names another torch device (`cuda`), so the engine's tests
    (equivalence with a full recompute, preemption, prefix hits) also run on a GPU: bench/cuda_check.py.
    """
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend
    from refserver.model import tiny_model

    return tiny_model(0, dtype="float32", device=os.environ.get("GOODPUT_TEST_DEVICE", "cpu"))


@pytest.fixture
def make_engine(model: Any) -> Callable[..., LLMEngine]:
    """Builds a synchronous engine on the torch runner. Keywords: `model` (default: the tiny model),
    `num_blocks`, `block_size`, `budget` (tokens per step), `max_num_seqs`, `prefix_caching`, and `seed`
    (the runner's shared sampling generator, used by requests without their own seed)."""
    from refserver.engine.config import EngineConfig
    from refserver.engine.llm_engine import LLMEngine
    from refserver.engine.runner import TorchModelRunner

    default_model = model

    def build(*, model: Any = None, num_blocks: int = 64, block_size: int = 16, budget: int = 512,
              max_num_seqs: int = 64, prefix_caching: bool = True, seed: int = 0) -> LLMEngine:
        config = EngineConfig(num_blocks=num_blocks, block_size=block_size, max_num_batched_tokens=budget,
                              max_num_seqs=max_num_seqs, enable_prefix_caching=prefix_caching)
        runner = TorchModelRunner(default_model if model is None else model, num_blocks=num_blocks,
                                  block_size=block_size, seed=seed)
        return LLMEngine(runner, config)

    return build


@pytest.fixture(scope="module")
def fake_app_config() -> dict[str, Any]:
    """AppConfig fields of the app the fake servers below serve; a test module overrides this fixture."""
    return {}


@pytest.fixture
def base_url(fake_app_config: dict[str, Any]) -> Iterator[str]:
    """A fresh FakeEngine served over HTTP on a free loopback port for each test (its prefix cache and
    counters start empty), stopped after the test."""
    with serve_in_thread(make_app(FakeEngine(), **fake_app_config)) as url:
        yield url


@pytest.fixture(scope="module")
def shared_base_url(fake_app_config: dict[str, Any]) -> Iterator[str]:
    """One FakeEngine server for a whole module whose tests leave no state behind (refusals): saves a
    server start and stop per test."""
    with serve_in_thread(make_app(FakeEngine(), **fake_app_config)) as url:
        yield url
