"""The reference server's engine: scheduler, paged KV blocks with prefix caching, model runners.

`build_engine(EngineConfig(...))` gives the AsyncEngine the HTTP layer serves from.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from refserver.engine.async_engine import AsyncLLMEngine
    from refserver.engine.config import EngineConfig
    from refserver.engine.factory import build_engine, build_llm_engine, build_runner
    from refserver.engine.llm_engine import LLMEngine
    from refserver.engine.runner_base import ScheduledBatch
    from refserver.engine.sim_runner import SimDescription, describe_engine, sim_options_from_flags
    from refserver.engine.step_log import StepLog, batch_work
    from refserver.engine.types import AsyncEngine, EngineStats, QueueFullError, SamplingParams, TokenEvent

__all__ = [
    "AsyncEngine", "AsyncLLMEngine", "EngineConfig", "EngineStats", "LLMEngine", "QueueFullError",
    "SamplingParams", "ScheduledBatch", "SimDescription", "StepLog", "TokenEvent", "batch_work", "build_engine",
    "build_llm_engine", "build_runner", "describe_engine", "sim_options_from_flags",
]

__getattr__ = lazy_names(__name__, {
    "AsyncLLMEngine": "async_engine",
    "EngineConfig": "config",
    "build_engine": "factory", "build_llm_engine": "factory", "build_runner": "factory",
    "LLMEngine": "llm_engine",
    "ScheduledBatch": "runner_base",
    "SimDescription": "sim_runner", "describe_engine": "sim_runner", "sim_options_from_flags": "sim_runner",
    "StepLog": "step_log", "batch_work": "step_log",
    "AsyncEngine": "types", "EngineStats": "types", "QueueFullError": "types", "SamplingParams": "types",
    "TokenEvent": "types",
})
