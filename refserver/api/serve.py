"""Run the app on uvicorn: bind (port 0 = any free port), announce the URL once ready, stop on signals.

The announcement `goodput refserver listening on http://HOST:PORT` is printed (flushed) only after
the engine started and the socket accepts connections; other processes wait for that line. SIGTERM
and SIGINT shut down gracefully (in-flight streams get `GRACEFUL_SHUTDOWN_S`) and exit with status 0.
"""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Any

import uvicorn

from refserver.api.app import create_app
from refserver.api.state import AppConfig
from refserver.chat_template import load_chat_template
from refserver.tokenizer import load_tokenizer

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from refserver.engine.config import EngineConfig

GRACEFUL_SHUTDOWN_S = 5.0
ANNOUNCEMENT = "goodput refserver listening on {url}"


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, url: str) -> None:
        super().__init__(config)
        self.url = url

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            print(ANNOUNCEMENT.format(url=self.url), flush=True)

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        # uvicorn re-raises a captured signal after shutting down; a requested stop is a clean exit here.
        self._captured_signals.clear()


def run_server(app: Any, *, host: str, port: int, log_level: str = "warning") -> None:
    """Serve `app` until SIGTERM/SIGINT. Raises OSError when the address cannot be bound."""
    sock = bind_socket(host, port)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN_S),
        access_log=False,
    )
    server = _Server(config, url_of(sock))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        print("goodput refserver failed to start (see the log above)", file=sys.stderr, flush=True)
        raise SystemExit(1)


def build_server_app(engine_config: EngineConfig, app_config: AppConfig, *, max_model_len: int | None = None) -> Starlette:
    """Tokenizer, chat template and engine for `engine_config`, and the app serving them.

    The context limit the HTTP layer enforces is the engine's (model positions capped by the KV pool),
    lowered to `max_model_len` when given.
    """
    from refserver.engine import build_engine

    tokenizer = load_tokenizer(engine_config.model_dir)
    template = load_chat_template(engine_config.model_dir, tokenizer)
    engine = build_engine(engine_config)
    context = engine.max_context
    app_config.max_model_len = context if max_model_len is None else min(context, max_model_len)
    return create_app(engine, tokenizer, app_config, chat_template=template)
