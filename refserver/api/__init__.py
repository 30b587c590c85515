"""The reference server's HTTP layer: OpenAI-compatible routes over an `AsyncEngine`.

`create_app(engine, tokenizer, AppConfig(...))` gives the ASGI app; `build_server_app` also builds the
engine, tokenizer and chat template from an `EngineConfig`; `run_server` serves an app on uvicorn.
"""

from __future__ import annotations

from refserver.api.app import create_app
from refserver.api.errors import APIError
from refserver.api.serve import build_server_app, run_server
from refserver.api.state import AppConfig

__all__ = ["APIError", "AppConfig", "build_server_app", "create_app", "run_server"]
