"""A workload that cannot fit the server's context is refused before the first request (loadgen.run.model_len).

The fake server answers `GET /v1/models` exactly as vLLM's OpenAI server does (its entry carries
`max_model_len`) and streams chat answers; it records every request, so a test can tell nothing was sent.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.loadgen._stream_server import _Running, paced_stream, threaded_server
from tests.servers.scripted import Action, ReceivedRequest, Send, head

MODEL = "tiny-llama"
CONTEXT = 2048


def vllm_models(model: str, max_model_len: int) -> bytes:
    """vLLM's `GET /v1/models` body (ModelCard): one entry per served model, with `max_model_len`."""
    card = {"id": model, "object": "model", "created": 1733300000, "owned_by": "vllm", "root": f"/models/{model}",
            "parent": None, "max_model_len": max_model_len,
            "permission": [{"id": "modelperm-1", "object": "model_permission", "created": 1733300000,
                            "allow_create_engine": False, "allow_sampling": True, "allow_logprobs": True,
                            "allow_search_indices": False, "allow_view": True, "allow_fine_tuning": False,
                            "organization": "*", "group": None, "is_blocking": False}]}
    return orjson.dumps({"object": "list", "data": [card]})


def vllm_tokenize(request: dict[str, object]) -> bytes:
    """vLLM's `POST /tokenize` answer (`count`, `max_model_len`, `tokens`): one token per word here, and 3
    per chat message for the template."""
    messages = request.get("messages")
    if isinstance(messages, list):
        n = sum(3 + len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))
    else:
        n = len(str(request.get("prompt", "")).split())
    return json.dumps({"count": n, "max_model_len": CONTEXT, "tokens": list(range(n)), "token_strs": None}).encode()


@contextlib.contextmanager
def vllm_like_server() -> Iterator[_Running]:
    streams = paced_stream(0.001, 0.001)

    def handler(request: ReceivedRequest) -> list[Action]:
        if request.method == "GET" and request.path == "/v1/models":
            body = vllm_models(MODEL, CONTEXT)
            return [Send(head(200, "application/json", chunked=False, length=len(body)) + body)]
        if request.method == "POST" and request.path == "/tokenize":
            body = vllm_tokenize(request.json())
            return [Send(head(200, "application/json", chunked=False, length=len(body)) + body)]
        return list(streams(request))

    with threaded_server(handler) as server:
        yield server


def goodput(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from loadgen.cli import main; main()", *args, "--quiet",
                           "--no-html", "--server-metrics", "none"], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def _posts(server: _Running) -> int:
    """Generation requests sent (the tokenize probes that size prompts are not)."""
    return sum(r.method == "POST" and r.path != "/tokenize" for r in server.requests)


@pytest.mark.parametrize("model", [["--model", MODEL], []], ids=["tokenize-says", "models-listed"])
def test_synthetic_prompts_longer_than_the_context_are_refused_before_sending(tmp_path: Path, model: list[str]) -> None:
    # With --model the models are not listed (a start-up that cannot hang): the tokenize answer gives the context.
    with vllm_like_server() as server:
        result = goodput("run", "--url", server.url, *model, "--prompt-tokens", "2000",
                         "--output-tokens", "100", "--requests", "3", "--output", str(tmp_path / "out"), cwd=tmp_path)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert "--prompt-tokens 2000" in lines[0] and "max_model_len is 2048" in lines[0], lines[0]
        assert _posts(server) == 0 and not (tmp_path / "out").exists()


def test_a_trace_row_longer_than_the_context_is_refused_with_its_line(tmp_path: Path) -> None:
    rows = [{"timestamp": i * 10, "input_length": 100, "output_length": 4} for i in range(4)]
    rows[2]["input_length"] = 3000
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with vllm_like_server() as server:
        result = goodput("run", "--url", server.url, "--model", MODEL, "--trace", str(trace), cwd=tmp_path)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert "t.jsonl:3" in lines[0] and "max_model_len, 2048" in lines[0] and "1 of the 4" in lines[0], lines[0]
        assert _posts(server) == 0


def test_a_workload_that_fits_runs(tmp_path: Path) -> None:
    with vllm_like_server() as server:
        result = goodput("run", "--url", server.url, "--model", MODEL, "--prompt-tokens", "1900",
                         "--output-tokens", "4", "--requests", "2", "--output", str(tmp_path / "out"), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert _posts(server) >= 2
