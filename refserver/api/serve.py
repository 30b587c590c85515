"""Run the app on uvicorn: bind (port 0 = any free port), announce the URL once ready, stop on signals.

The announcement `goodput refserver listening on http://HOST:PORT` is printed (flushed) only after
the engine started and the socket accepts connections; other processes wait for that line. SIGTERM
and SIGINT shut down gracefully (in-flight streams get `GRACEFUL_SHUTDOWN_S`) and exit with status 0.
Connections get the head and body deadlines and the cap of `ConnectionLimits` (connection_guard.py).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import TYPE_CHECKING, Any

import uvicorn

from refserver.api.app import create_app
from refserver.api.connection_guard import ConnectionLimits, guarded_protocol
from refserver.api.state import AppConfig
from refserver.text import load_chat_template, load_tokenizer

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from refserver.engine import EngineConfig

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


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name) means only this machine: a loopback address, or a name all
    of whose addresses are loopback. Wildcards (0.0.0.0, ::) and unresolvable names are not."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {str(info[4][0]).partition("%")[0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def exposure_warning(host: str, api_key: str | None) -> str | None:
    """The warning for a server that anyone on the network may use: bound beyond loopback, no API key."""
    if api_key or is_loopback(host):  # an empty key is no protection either
        return None
    return (
        f"goodput serve: warning: --host {host} without an API key: the server is reachable from the network "
        "without authentication; set --api-key (or GOODPUT_API_KEY), or bind 127.0.0.1"
    )


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


def server_config(
    app: Any, *, limits: ConnectionLimits | None = None, log_level: str = "warning", graceful_shutdown_s: float = GRACEFUL_SHUTDOWN_S
) -> uvicorn.Config:
    """uvicorn's settings for `app`: the guarded h11 protocol with `limits`, lifespan on, no access log."""
    return uvicorn.Config(
        app,
        http=guarded_protocol(limits or ConnectionLimits()),
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=int(graceful_shutdown_s),
        access_log=False,
    )


def run_server(
    app: Any, *, host: str, port: int, log_level: str = "warning", limits: ConnectionLimits | None = None
) -> None:
    """Serve `app` until SIGTERM/SIGINT. Raises OSError when the address cannot be bound."""
    sock = bind_socket(host, port)
    config = server_config(app, limits=limits, log_level=log_level)
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
