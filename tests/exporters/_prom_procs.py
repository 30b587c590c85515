"""Debian's `prometheus` and `prometheus-pushgateway`, started by tests on free loopback ports.

Each process is stopped in a `finally`, also when the test fails; a test skips (with the reason) only
when the binary is not installed — `.ci/run` installs both.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def process(cmd: list[str], ready_url: str, log: Path, *, start_timeout_s: float = 60.0) -> Iterator[None]:
    """Run `cmd` until the block ends; wait for `ready_url` to answer 200 first."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(ready_url, timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[0]} not ready after {start_timeout_s} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# bcrypt (cost 4) of "goodput-test-password", for the basic-auth test.
TEST_USER, TEST_PASSWORD = "loadtest", "goodput-test-password"
TEST_HASH = "$2b$04$hDX7p71XhNM5eaPQty7LHOOq3/fpykMRCXx/.bx8ucpxq0OApBso6"


@contextmanager
def pushgateway(tmp: Path, *, basic_auth: bool = False) -> Iterator[str]:
    binary = need(PUSHGATEWAY)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Debian's default persists to /var/lib/prometheus: an empty file name keeps the test's state in memory.
    cmd = [binary, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="]
    ready = f"{url}/-/ready"
    if basic_auth:
        web = tmp / "web.yml"
        web.write_text(f'basic_auth_users:\n  {TEST_USER}: "{TEST_HASH}"\n')
        cmd.append(f"--web.config.file={web}")
        ready = f"http://{TEST_USER}:{TEST_PASSWORD}@127.0.0.1:{port}/-/ready"
    with process(cmd, ready, tmp / "pushgateway.log"):
        yield url


@contextmanager
def prometheus(config: Path, tmp: Path) -> Iterator[str]:
    """Prometheus with `config`, a fresh TSDB under `tmp`, the lifecycle API on (for reloads)."""
    binary = need(PROMETHEUS)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = tmp / "tsdb"
    data.mkdir()
    cmd = [binary, f"--config.file={config}", f"--storage.tsdb.path={data}",
           f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle", "--log.level=warn"]
    with process(cmd, f"{url}/-/ready", tmp / "prometheus.log"):
        yield url
