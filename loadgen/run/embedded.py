"""The embedded default target: `goodput run` with no `--url` starts the bundled reference server on a free
loopback port in a child process (so its forward passes never steal the load generator's event loop),
waits for `/health`, and stops it afterwards, also on failure or interrupt."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from loadgen.run.startup import announced

_LISTENING = re.compile(rb"listening on (http://\S+)")
# How the reference server's command line refuses an argument (exit 2): Click's last line, or its own.
_REFUSED = re.compile(r"^(?:Error|goodput serve: error): (.+)$")
EXIT_USAGE = 2


class EmbeddedServerError(RuntimeError):
    pass


class ServerArgumentError(EmbeddedServerError):
    """The reference server refused its arguments (`--server-arg`) at start-up: a usage error of the run."""


@contextmanager
def embedded_server(args: list[str], *, start_timeout_s: float = 120.0, quiet: bool = True) -> Iterator[str]:
    """Start `python -m refserver --port 0 ARGS`; yield its base URL; stop it on exit. It has
    `start_timeout_s` to listen and answer /health (a wait announced on stderr unless `quiet`)."""
    cmd = [sys.executable, "-m", "refserver", "--host", "127.0.0.1", "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    lines: list[bytes] = []
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:  # keep reading so the child never blocks on a full pipe
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            del lines[:-50]
            m = _LISTENING.search(line)
            if m and not found:
                found.append(m.group(1).decode())
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + start_timeout_s
        with announced("the reference server to start", start_timeout_s, quiet=quiet):
            ready.wait(start_timeout_s)
            if not found:
                raise _start_failure(proc, lines)
            url = found[0]
            _wait_healthy(url, proc, deadline=deadline)
        yield url
    finally:
        _stop(proc)


def _start_failure(proc: subprocess.Popen[bytes], lines: list[bytes]) -> EmbeddedServerError:
    """Why the server never said it was listening: one line for an argument it refused, else its last lines."""
    try:
        code: int | None = proc.wait(timeout=5)  # its output ended: it is exiting
    except subprocess.TimeoutExpired:
        code = None
    text = b"".join(lines[-20:]).decode(errors="replace")
    refused = [m.group(1).strip() for m in map(_REFUSED.match, text.splitlines()) if m]
    if code == EXIT_USAGE and refused:
        return ServerArgumentError(f"--server-arg: the reference server refused its arguments: {refused[-1]}")
    return EmbeddedServerError(f"reference server did not start (exit {code}):\n{text}")


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the load generator dies, even by SIGKILL."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], *, deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EmbeddedServerError(f"reference server exited with code {proc.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=2.0, verify=False).status_code == 200:  # loopback, plain http
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise EmbeddedServerError("reference server did not become healthy in time")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
