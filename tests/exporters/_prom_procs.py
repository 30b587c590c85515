"""Debian's `prometheus` and `prometheus-pushgateway`, started by tests on free loopback ports.

Each process is stopped in a `finally`, also when the test fails; a test skips (with the reason) only
when the binary is not installed — `.ci/run` installs both.

Neither can bind port 0 and say which port it got, so each is given a port that was free a moment ago;
another process may take it in between, so a start that fails on "address already in use" is retried on
a new port (`ATTEMPTS` in all).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

PROMETHEUS = "prometheus"
PUSHGATEWAY = "prometheus-pushgateway"
PROMTOOL = "promtool"


def need(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        pytest.skip(f"{binary} is not installed (apt-get install prometheus prometheus-pushgateway)")
    return path


ATTEMPTS = 5


def free_port() -> int:
    """A port that was free a moment ago: the caller retries when it was taken meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AddressInUse(RuntimeError):
    """The process exited at start because its port was taken after `free_port()` chose it."""


def _start(cmd: list[str], ready_url: str, log: Path, start_timeout_s: float) -> subprocess.Popen[bytes]:
    """Start `cmd` and wait for `ready_url` to answer 200; stopped again if it never does."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if proc.poll() is not None:
                text = log.read_text(errors="replace")
                error = AddressInUse if "address already in use" in text else RuntimeError
                raise error(f"{cmd[0]} exited with {proc.returncode}:\n{text[-3000:]}")
            try:
                if httpx.get(ready_url, timeout=2.0).status_code == 200:
                    return proc
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[0]} not ready after {start_timeout_s} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
    except BaseException:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def process(command: Callable[[int], tuple[list[str], str]], log: Path, *,
            start_timeout_s: float = 60.0) -> Iterator[int]:
    """Run `command(port)` (its argv and its ready URL) on a free port until the block ends, yielding the
    port; wait for the ready URL to answer 200 first; a new port when the chosen one was taken."""
    for attempt in range(ATTEMPTS):
        port = free_port()
        cmd, ready_url = command(port)
        try:
            proc = _start(cmd, ready_url, log, start_timeout_s)
        except AddressInUse:
            if attempt == ATTEMPTS - 1:
                raise
            continue
        try:
            yield port
        finally:
            _stop(proc)
        return


# bcrypt (cost 4) of "goodput-test-password", for the basic-auth test.
TEST_USER, TEST_PASSWORD = "loadtest", "goodput-test-password"
TEST_HASH = "$2b$04$hDX7p71XhNM5eaPQty7LHOOq3/fpykMRCXx/.bx8ucpxq0OApBso6"


@contextmanager
def pushgateway(tmp: Path, *, basic_auth: bool = False) -> Iterator[str]:
    binary = need(PUSHGATEWAY)
    web = tmp / "web.yml"
    if basic_auth:
        web.write_text(f'basic_auth_users:\n  {TEST_USER}: "{TEST_HASH}"\n')

    def command(port: int) -> tuple[list[str], str]:
        # Debian's default persists to /var/lib/prometheus: an empty file name keeps the test's state in memory.
        cmd = [binary, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="]
        if not basic_auth:
            return cmd, f"http://127.0.0.1:{port}/-/ready"
        return [*cmd, f"--web.config.file={web}"], f"http://{TEST_USER}:{TEST_PASSWORD}@127.0.0.1:{port}/-/ready"

    with process(command, tmp / "pushgateway.log") as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def prometheus(config: Path, tmp: Path) -> Iterator[str]:
    """Prometheus with `config`, a fresh TSDB under `tmp`, the lifecycle API on (for reloads)."""
    binary = need(PROMETHEUS)
    def command(port: int) -> tuple[list[str], str]:
        data = tmp / f"tsdb-{port}"  # a fresh TSDB for each attempt
        data.mkdir()
        cmd = [binary, f"--config.file={config}", f"--storage.tsdb.path={data}",
               f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle", "--log.level=warn"]
        return cmd, f"http://127.0.0.1:{port}/-/ready"

    with process(command, tmp / "prometheus.log") as port:
        yield f"http://127.0.0.1:{port}"
