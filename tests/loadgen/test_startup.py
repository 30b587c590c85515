"""Start-up of `goodput run` against servers that are not there, not at that path, not OpenAI servers, or
never answer: one line with the hint that fits, no model listing when --model is given, every wait bounded
and announced, and SIGINT or SIGTERM honoured at any moment of it, even when goodput was started with SIGINT
ignored (a background job of a non-interactive shell)."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from tests.loadgen._stream_server import paced_server
from tests.servers.scripted import closed_port

GOODPUT = str(Path(sys.executable).with_name("goodput"))


@contextlib.contextmanager
def _http_server(status: int, content_type: str, body: bytes) -> Iterator[str]:
    """A loopback HTTP server answering every GET with the same status and body (not an OpenAI server)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextlib.contextmanager
def _silent_server() -> Iterator[str]:
    """Connections complete (the kernel's backlog takes them) and nothing ever answers."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}"


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "developer.mozilla.org" not in err and "Traceback" not in err
    return err


def test_connection_refused_says_nothing_listens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with closed_port() as port:  # bound and not listening: refused, and no other process can take it
        code = run_cli(["run", "--url", f"http://127.0.0.1:{port}", "--requests", "1", "--output", str(tmp_path / "o")])
    err = _one_line(capsys)
    assert code == 1 and not (tmp_path / "o").exists()
    assert err == (f"goodput: error: cannot connect to 127.0.0.1:{port}: connection refused (nothing listens "
                   f"there): is the server running, and is {port} its port?")


def test_a_wrong_path_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _http_server(404, "application/json", b'{"detail":"Not Found"}') as url:
        code = run_cli(["run", "--url", f"{url}/wrong", "--requests", "1", "--output", str(tmp_path / "o")])
    err = _one_line(capsys)
    assert code == 1 and not (tmp_path / "o").exists()
    assert err.startswith(f"goodput: error: GET {url}/wrong/v1/models answered HTTP 404 (not found): "
                          "is the URL the API's root?")
    assert "pass --model" not in err


def test_a_server_that_is_not_an_openai_server_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _http_server(200, "text/html", b"<html><body>It works!</body></html>") as url:
        code = run_cli(["run", "--url", url, "--requests", "1", "--output", str(tmp_path / "o")])
    err = _one_line(capsys)
    assert code == 1
    assert f"GET {url}/v1/models answered, but not as an OpenAI-compatible server does" in err


def test_a_model_listing_that_never_answers_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("loadgen.run.models.MODELS_TIMEOUT_S", 0.5)
    with _silent_server() as url:
        started = time.monotonic()
        code = run_cli(["run", "--url", url, "--requests", "1", "--quiet", "--output", str(tmp_path / "o")])
        took = time.monotonic() - started
    err = _one_line(capsys)
    assert code == 1 and took < 5
    assert err == f"goodput: error: {url}/v1/models did not answer within 0.5 s: is the server stuck or overloaded?"


def test_with_model_given_the_models_are_not_listed(tmp_path: Path) -> None:
    with paced_server() as srv:
        proc = subprocess.run([GOODPUT, "run", "--url", srv.url, "--model", "m", "--requests", "2", "--rate", "50",
                               "--output-tokens", "2", "--tokenizer", "words", "--server-metrics", "none",
                               "--quiet", "--no-html", "--output", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=120)
        paths = [(r.method, r.path) for r in srv.requests]
    assert proc.returncode == 0, proc.stderr
    assert ("GET", "/v1/models") not in paths
    assert paths.count(("POST", "/v1/chat/completions")) == 2


def _ignore_sigint() -> None:
    """In the child: SIGINT ignored, as a shell without job control starts a background job (`cmd &`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(("model", "waiting_for"), [
    ([], "GET "),  # the model listing
    (["--model", "m"], "the server to size prompts"),  # no listing: the first wait is the prompt sizing
], ids=["listing models", "model given"])
def test_a_signal_during_a_start_up_wait_stops_it_even_if_sigint_was_ignored(
        sig: signal.Signals, model: list[str], waiting_for: str, tmp_path: Path) -> None:
    """The server accepts connections and never answers. goodput says what it waits for; the signal then
    ends it at once: exit 130, one line, nothing sent, no output directory."""
    out = tmp_path / "o"
    with _silent_server() as url:
        proc = subprocess.Popen([GOODPUT, "run", "--url", url, *model, "--requests", "3", "--output", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_ignore_sigint)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")),  # type: ignore[union-attr]
                                  daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 60
            while not any(line.startswith("goodput: waiting for ") for line in lines):
                assert proc.poll() is None, lines
                assert time.monotonic() < deadline, f"no start-up wait announced: {lines}"
                time.sleep(0.02)
            signalled = time.monotonic()
            proc.send_signal(sig)
            proc.wait(timeout=20)
            took = time.monotonic() - signalled
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(10)
    announced = [line for line in lines if line.startswith("goodput: waiting for ")]
    assert announced[0].startswith(f"goodput: waiting for {waiting_for}") and "(at most " in announced[0]
    assert proc.returncode == 130, lines
    assert took < 10
    assert lines[-1].strip() == "goodput: interrupted before the first request; nothing was sent", lines
    assert not any("Traceback" in line for line in lines)
    assert not out.exists()
