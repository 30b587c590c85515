"""`python -m refserver` as a subprocess (start line, port 0, clean exit on signals) and the CLI's errors."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from refserver.__main__ import main as _main  # noqa: F401  (the module must import cheaply and cleanly)
from refserver.cli import serve

_LINE = re.compile(r"^goodput refserver listening on (http://127\.0\.0\.1:(\d+))$")


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "refserver", "--port", "0", "--num-blocks", "64", "--device", "cpu", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    found: list[str] = []
    done = threading.Event()

    def read_first_line() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            found.append(line.rstrip("\n"))
            if _LINE.match(found[-1]):
                break
        done.set()

    threading.Thread(target=read_first_line, daemon=True).start()
    done.wait(120.0)
    match = _LINE.match(found[-1]) if found else None
    if match is None:
        proc.kill()
        raise AssertionError(f"no start line; output: {found}")
    assert int(match.group(2)) > 0
    return proc, match.group(1)


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc, url = _start()
    try:
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_subprocess_serves_then_exits_cleanly(server: tuple[subprocess.Popen[str], str], sig: signal.Signals) -> None:
    proc, url = server
    assert httpx.get(f"{url}/health", timeout=30.0).status_code == 200
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "ignore_eos": True}
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60.0)
    assert response.status_code == 200
    assert response.json()["usage"]["completion_tokens"] == 4
    proc.send_signal(sig)
    assert proc.wait(timeout=60.0) == 0


def test_cli_rejects_bad_options() -> None:
    runner = CliRunner()
    import typer

    app = typer.Typer()
    app.command()(serve)
    result = runner.invoke(app, ["--engine", "tpu"])
    assert result.exit_code == 2
    assert "--engine" in result.output
    result = runner.invoke(app, ["--fault-500", "0.7", "--fault-429", "0.6"])
    assert result.exit_code == 2
    assert "add up to" in result.output
    result = runner.invoke(app, ["--model", "/nonexistent/model/dir", "--port", "0"])
    assert result.exit_code == 2
    assert "error" in result.output


def test_cli_help_has_examples() -> None:
    import typer

    app = typer.Typer()
    app.command()(serve)
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "goodput serve --port 0" in result.output
    assert "127.0.0.1" in result.output
