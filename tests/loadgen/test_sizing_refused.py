"""A server that refuses every sizing probe alike (vLLM asked for a model it does not serve) is no prompt-
sizing problem: the warning quotes the server and never sends the user to --tokenizer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.http.send.probe import ProbeFailed, ProbesRefused, calibrate
from tests.loadgen._stream_server import threaded_server
from tests.servers.refusing import json_answer, posts_only, vllm
from tests.servers.scripted import Action, ReceivedRequest

QUICK = ["--prompt-tokens", "8", "--output-tokens", "4", "--server-metrics", "none", "--no-html",
         "--requests", "12", "--rate", "100"]


def test_a_wrong_model_is_not_blamed_on_the_prompt_sizing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with threaded_server(vllm("served")) as server:
        code = run_cli(["run", "--url", server.url, "--model", "nope", *QUICK, "--output", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 1
    sizing = [line for line in err.splitlines() if "sizes prompts" in line or "sized" in line]
    assert sizing == ["goodput: warning: the server refused every request that sizes prompts (a probe request "
                      "answered HTTP 404: The model `nope` does not exist.), so prompts are sized by counting "
                      "words; the run's requests may be refused alike"], err
    assert "--tokenizer" not in err and "no tokenize endpoint" not in err


def test_probes_refused_only_when_every_probe_got_the_same_refusal() -> None:
    def refuse_long(request: ReceivedRequest) -> list[Action]:
        words = sum(len(str(m.get("content", "")).split()) for m in request.json().get("messages", []))
        if words > 70:  # longer than the context: HTTP 400, as vLLM answers
            return json_answer(400, {"error": {"message": "too long", "type": "BadRequestError", "code": 400}})
        return json_answer(200, {"usage": {"prompt_tokens": words + 3, "completion_tokens": 1}})

    with threaded_server(vllm("served")) as server, pytest.raises(ProbesRefused, match="HTTP 404"):
        asyncio.run(calibrate(server.url, "nope", chat=True))
    with threaded_server(posts_only(refuse_long)) as server:  # some fit: a fit, with the rest counted as rejected
        ratio = asyncio.run(calibrate(server.url, "m", chat=True))
        assert ratio.rejected and ratio.probes >= 3
    with threaded_server(posts_only(lambda r: json_answer(400, {"error": {"message": "too long"}}))) as server:
        with pytest.raises(ProbeFailed) as info:  # every probe too long: not a refusal of the request itself
            asyncio.run(calibrate(server.url, "m", chat=True))
        assert not isinstance(info.value, ProbesRefused)
