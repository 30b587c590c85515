"""The reference server's HTTP layer: OpenAI-compatible routes over an `AsyncEngine`.

`create_app(engine, tokenizer, AppConfig(...))` gives the ASGI app; `build_server_app` also builds the
engine, tokenizer and chat template from an `EngineConfig`; `run_server` serves an app on uvicorn.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from refserver.api.app import create_app
    from refserver.api.behaviour import Behaviour, parse_token_dist
    from refserver.api.connection_guard import ConnectionLimits
    from refserver.api.errors import APIError
    from refserver.api.faults import FaultConfig
    from refserver.api.serve import build_server_app, exposure_warning, run_server
    from refserver.api.state import AppConfig

__all__ = [
    "APIError", "AppConfig", "Behaviour", "ConnectionLimits", "FaultConfig", "build_server_app", "create_app",
    "exposure_warning", "parse_token_dist", "run_server",
]

__getattr__ = lazy_names(__name__, {
    "create_app": "app",
    "Behaviour": "behaviour", "parse_token_dist": "behaviour",
    "ConnectionLimits": "connection_guard",
    "APIError": "errors",
    "FaultConfig": "faults",
    "build_server_app": "serve", "exposure_warning": "serve", "run_server": "serve",
    "AppConfig": "state",
})
