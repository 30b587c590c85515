"""`python -m refserver` as a subprocess (start line, port 0, clean exit on signals) and the CLI's errors."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

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


def _invoke_without_binding(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Any, list[dict[str, Any]]]:
    """`goodput serve ARGS` with everything but the bind: a test must not listen on the network."""
    import typer

    import refserver.api.serve as serve_module

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(serve_module, "run_server", lambda app, **kwargs: calls.append(kwargs))
    app = typer.Typer()
    app.command()(serve)
    result = CliRunner().invoke(app, ["--device", "cpu", "--num-blocks", "16", *args])
    return result, calls


@pytest.mark.parametrize(
    ("args", "warns"),
    [
        (["--host", "0.0.0.0"], True),
        (["--host", "::"], True),
        (["--host", "0.0.0.0", "--api-key", ""], True),
        (["--host", "0.0.0.0", "--api-key", "k"], False),
        (["--host", "127.0.0.1"], False),
        (["--host", "localhost"], False),
        (["--host", "::1"], False),
    ],
)
def test_network_bind_without_api_key_warns(monkeypatch: pytest.MonkeyPatch, args: list[str], warns: bool) -> None:
    monkeypatch.delenv("GOODPUT_API_KEY", raising=False)
    result, calls = _invoke_without_binding(monkeypatch, *args)
    assert result.exit_code == 0, result.output
    assert calls and calls[0]["host"] == args[1]
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    if warns:
        assert len(warning) == 1
        assert f"--host {args[1]}" in warning[0]
        assert "reachable from the network without authentication" in warning[0]
        assert "--api-key" in warning[0]
    else:
        assert warning == []


def test_connection_flags_reach_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    result, calls = _invoke_without_binding(
        monkeypatch, "--header-timeout", "2s", "--body-timeout", "1500ms", "--max-connections", "7"
    )
    assert result.exit_code == 0, result.output
    limits = calls[0]["limits"]
    assert (limits.header_timeout_s, limits.body_timeout_s, limits.max_connections) == (2.0, 1.5, 7)


@pytest.mark.parametrize(
    ("args", "flag"),
    [(["--header-timeout", "0s"], "--header-timeout"), (["--body-timeout", "soon"], "--body-timeout"),
     (["--max-connections", "0"], "--max-connections")],
)
def test_bad_connection_flags_are_usage_errors(monkeypatch: pytest.MonkeyPatch, args: list[str], flag: str) -> None:
    result, calls = _invoke_without_binding(monkeypatch, *args)
    assert result.exit_code == 2
    assert flag in result.output
    assert calls == []


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("192.0.2.1", False), ("no-such-host.invalid", False)],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    from refserver.api.serve import is_loopback

    assert is_loopback(host) is loopback


def test_cpu_threads_reach_the_engine_config(monkeypatch: pytest.MonkeyPatch) -> None:
    import refserver.api.serve as serve_module

    seen: list[Any] = []
    real = serve_module.build_server_app
    monkeypatch.setattr(serve_module, "build_server_app",
                        lambda config, *a, **k: (seen.append(config), real(config, *a, **k))[1])
    result, calls = _invoke_without_binding(monkeypatch, "--cpu-threads", "3")
    assert result.exit_code == 0, result.output
    assert seen[0].cpu_threads == 3 and calls
    result, calls = _invoke_without_binding(monkeypatch, "--cpu-threads", "0")
    assert result.exit_code == 2 and calls == []
