"""The servers under comparison as child processes: start, wait until ready, pause, resume, stop.

While one server is measured the other is stopped with SIGSTOP, so the measured one has the machine
as it would alone (an idle server can still spend CPU: a scheduler thread, a timer). Each server's own
CPU seconds are read from /proc, so a table can show what the paused one spent (it should be 0).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

_LISTENING = re.compile(r"listening on (http://\S+)")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    name: str
    command: list[str]
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None

    def start(self, ready_timeout_s: float = 300.0) -> None:
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,
            )
        deadline = time.monotonic() + ready_timeout_s
        while not self._ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} not ready after {ready_timeout_s:.0f} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def _ready(self) -> bool:
        if not self.url:
            match = _LISTENING.search(self.log_path.read_text(errors="replace"))
            if match is None:
                return False
            self.url = match.group(1)
        try:
            return httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _signal(self, sig: signal.Signals) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def cpu_s(self) -> float:
        """User + system CPU seconds of the server process (all its threads) so far."""
        if self.proc is None:
            return 0.0
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def stop(self) -> None:
        if self.proc is None:
            return
        self.resume()
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


def refserver_process(
    goodput: str, model_dir: str, log_dir: Path, extra: list[str], env: dict[str, str]
) -> ServerProcess:
    command = [goodput, "serve", "--port", "0", "--model", model_dir, "--served-model-name", model_dir,
               "--device", "cpu", *extra]  # fmt: skip
    return ServerProcess("goodput serve", command, log_dir / "refserver.log", env)


def transformers_process(
    transformers: str, model_dir: str, log_dir: Path, extra: list[str], env: dict[str, str]
) -> ServerProcess:
    port = free_port()
    command = [transformers, "serve", model_dir, "--continuous-batching", "--device", "cpu",
               "--host", "127.0.0.1", "--port", str(port), *extra]  # fmt: skip
    # Offline: the model is a local directory; nothing may be fetched.
    server = ServerProcess("transformers serve", command, log_dir / "transformers.log",
                           {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **env})  # fmt: skip
    server.url = f"http://127.0.0.1:{port}"
    return server


def greedy_text(url: str, model: str, prompt: str, max_tokens: int) -> str:
    """The content of one non-streamed greedy chat completion."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=120.0)
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


def first_difference(a: str, b: str) -> int | None:
    """Index of the first differing character; None when equal."""
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@contextlib.contextmanager
def running(servers: list[ServerProcess]) -> Iterator[list[ServerProcess]]:
    """Start every server (then pause it), stop them all on the way out, also on failure."""
    try:
        for server in servers:
            server.start()
            server.pause()
        yield servers
    finally:
        for server in servers:
            server.stop()
