"""Building an engine from an EngineConfig: the model runner (torch or sim), then the engine around it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from refserver.engine.config import EngineConfig, choose_num_blocks
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.runner_base import ModelRunner

if TYPE_CHECKING:
    from refserver.engine.async_engine import AsyncLLMEngine
    from refserver.engine.runner import TorchModelRunner


def build_torch_runner(config: EngineConfig) -> TorchModelRunner:
    import torch

    from refserver.engine.runner import TorchModelRunner
    from refserver.model import load_model, tiny_model

    if config.model_dir is None:
        model = tiny_model(config.seed, dtype=config.dtype, device=config.device)
    else:
        model = load_model(config.model_dir, dtype=config.dtype, device=config.device)
    weight = model.lm_head.weight
    if weight.device.type == "cpu":
        # The tiny model's ops are far too small to split across threads; on a shared machine the
        # threads only spin against each other (10x slower steps measured under load).
        threads = config.cpu_threads or (1 if config.model_dir is None else None)
        if threads is not None:
            torch.set_num_threads(threads)
    free_bytes = torch.cuda.mem_get_info(weight.device)[0] if weight.device.type == "cuda" else None
    num_blocks = choose_num_blocks(config, model.config, weight.element_size(), free_bytes)
    return TorchModelRunner(model, num_blocks=num_blocks, block_size=config.block_size, seed=config.seed)


def build_runner(config: EngineConfig) -> ModelRunner:
    if config.runner == "torch":
        return build_torch_runner(config)
    # Imported here, like the torch runner above: a server builds one kind of runner, not both.
    from refserver.engine.sim_runner import make_sim_runner

    return make_sim_runner(config)


def build_llm_engine(config: EngineConfig) -> LLMEngine:
    """The synchronous engine (tests and benchmarks drive its step() directly)."""
    return LLMEngine(build_runner(config), config)


def build_engine(config: EngineConfig) -> AsyncLLMEngine:
    """The AsyncEngine the HTTP layer serves from; call `await engine.start()` before generating."""
    from refserver.engine.async_engine import AsyncLLMEngine
    from refserver.engine.step_log import StepLog

    engine = build_llm_engine(config)
    engine.step_log = StepLog()  # served at GET /v1/goodput/steps
    return AsyncLLMEngine(engine)
