"""The reference server's engine: scheduler, paged KV blocks with prefix caching, model runners.

`build_engine(EngineConfig(...))` gives the AsyncEngine the HTTP layer serves from.
"""

from __future__ import annotations

from refserver.engine.async_engine import AsyncLLMEngine
from refserver.engine.config import EngineConfig
from refserver.engine.factory import build_engine, build_llm_engine, build_runner
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.types import AsyncEngine, EngineStats, QueueFullError, SamplingParams, TokenEvent

__all__ = [
    "AsyncEngine",
    "AsyncLLMEngine",
    "EngineConfig",
    "EngineStats",
    "LLMEngine",
    "QueueFullError",
    "SamplingParams",
    "TokenEvent",
    "build_engine",
    "build_llm_engine",
    "build_runner",
]
