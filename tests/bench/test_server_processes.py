"""Servers under comparison: paused while the other is measured (no CPU), started and stopped cleanly."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from bench.server_processes import ServerProcess, first_difference, refserver_process

BUSY = "import time\nwhile True: sum(range(1000))"


def _state(pid: int) -> str:
    """The process's scheduler state from /proc ('R' running, 'S' sleeping, 'T' stopped, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    """Wait for an observable state, not a fixed time: a busy host may give the child little CPU."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never reached: {what}"
        time.sleep(0.02)


def test_a_paused_server_spends_no_cpu(tmp_path: Path) -> None:
    server = ServerProcess("busy", [sys.executable, "-c", BUSY], tmp_path / "busy.log")
    server.proc = subprocess.Popen(server.command, start_new_session=True)
    pid = server.proc.pid
    try:
        _until(lambda: server.cpu_s() > 0.05, "the child spends CPU")
        server.pause()
        _until(lambda: _state(pid) == "T", "the child is stopped")  # a stop is delivered asynchronously
        paused_at = server.cpu_s()
        time.sleep(0.8)
        assert server.cpu_s() - paused_at < 0.05  # stopped: no CPU (a running child would spend some)
        server.resume()
        resumed_at = server.cpu_s()
        _until(lambda: server.cpu_s() - resumed_at > 0.1, "the resumed child spends CPU again")
    finally:
        server.stop()
    assert server.proc.returncode is not None


def test_first_difference() -> None:
    assert first_difference("abc", "abc") is None
    assert first_difference("abX", "abc") == 2
    assert first_difference("ab", "abc") == 2


@pytest.mark.slow
def test_reference_server_starts_on_a_free_port_and_stops(tmp_path: Path) -> None:
    goodput = str(Path(sys.executable).with_name("goodput"))
    server = refserver_process(goodput, "", tmp_path, [], {})
    server.command = [
        c for c in server.command if c not in ("--model", "--served-model-name", "")
    ]  # built-in tiny
    try:
        server.start(ready_timeout_s=120)
        assert server.url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200
    finally:
        server.stop()
    assert server.proc is not None and server.proc.returncode is not None
