"""A Ray head on this host for the tests, in a process of its own, stopped when its stdin closes.

    with ray_head(cpus=2) as (address, env): ...  # env: what a `goodput run --ray ADDRESS` needs

Ray's token authentication is on, with a token made for this head only and passed through the environment
(never written to a file). `python tests/loadgen/_ray_head.py CPUS` is the head itself.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

START_TIMEOUT_S = 90.0


@contextlib.contextmanager
def ray_head(*, cpus: int = 2) -> Iterator[tuple[str, dict[str, str]]]:
    """The head's address and the environment that joins it; RuntimeError when Ray cannot start here."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([sys.executable, str(Path(__file__)), str(cpus)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        line = ""
        while time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline().strip()
            if line.startswith("address "):
                break
        if not line.startswith("address "):
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise RuntimeError(f"the Ray head did not start: {err.strip().splitlines()[-1:] or 'no output'}")
        yield line.removeprefix("address "), env
    finally:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()  # the head shuts its cluster down and exits
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _serve(cpus: int) -> None:
    import ray

    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    print("address", ray.get_runtime_context().gcs_address, flush=True)
    sys.stdin.read()
    ray.shutdown()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
