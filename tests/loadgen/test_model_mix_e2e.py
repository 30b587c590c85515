"""A model mix end to end against the reference server (sim engine) serving one model under several names:
its listing, each request's model as drawn, per-model buckets, one model per conversation, and a name it
does not serve caught before the first request with the server's own words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from loadgen.cli import run_cli
from loadgen.workload.models import parse_models
from refserver.api.app import AppConfig
from refserver.api.serve import build_server_app
from refserver.engine.config import EngineConfig
from refserver.engine.sim_runner import SimOptions
from tests.refserver.fake_engine import serve_in_thread

pytest.importorskip("uvicorn")

NAMES = ("base", "lora-a", "lora-b")
QUICK = ["--prompt-tokens", "8", "--output-tokens", "2", "--tokenizer", "words", "--prompt-sizing", "counter",
         "--server-metrics", "none", "--no-html", "--quiet", "--seed", "4"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    engine = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM"))
    app = build_server_app(engine, AppConfig(model_name=NAMES[0], other_names=NAMES[1:]))
    with serve_in_thread(app) as base:
        yield base


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_the_server_answers_every_name_and_refuses_others(url: str) -> None:
    listed = httpx.get(f"{url}/v1/models").json()["data"]
    assert [m["id"] for m in listed] == list(NAMES) and all(m["max_model_len"] > 0 for m in listed)
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    for name in NAMES:
        answer = httpx.post(f"{url}/v1/chat/completions", json={**body, "model": name})
        assert answer.status_code == 200 and answer.json()["model"] == name
    refused = httpx.post(f"{url}/v1/chat/completions", json={**body, "model": "lora-x"})
    assert refused.status_code == 404 and refused.json()["error"]["message"] == "The model `lora-x` does not exist."
    assert httpx.post(f"{url}/tokenize", json={"model": "lora-b", "prompt": "hi"}).status_code == 200


def test_a_mix_run_sends_and_records_each_model(url: str, tmp_path: Path) -> None:
    text = "base:0.6,lora-a:0.3,lora-b:0.1"
    out = tmp_path / "run"
    assert run_cli(["run", "--url", url, "--model", text, "--requests", "16", "--rate", "200", *QUICK,
                    "--output", str(out)]) == 0
    records = sorted(_records(out), key=lambda r: r["id"])
    mix = parse_models(text)
    assert all(r["status"] == "ok" for r in records)
    assert [r["model"] for r in records] == [mix.draw(4, i) for i in range(16)]
    summary = json.loads((out / "summary.json").read_text())
    counts = {b["label"]: b["measured"] for b in summary["buckets"] if b["dimension"] == "model"}
    assert counts == {m: sum(r["model"] == m for r in records) for m in counts} and sum(counts.values()) == 16
    run = json.loads((out / "run.json").read_text())
    assert run["model"] == text and run["models"] == {"base": 0.6, "lora-a": 0.3, "lora-b": 0.1}


def test_a_conversation_keeps_its_model(url: str, tmp_path: Path) -> None:
    out = tmp_path / "chats"
    assert run_cli(["run", "--url", url, "--model", "base,lora-a,lora-b", "--turns", "3", "--requests", "8",
                    "--concurrency", "4", *QUICK, "--output", str(out)]) == 0
    by_session: dict[int, set[str]] = {}
    for r in _records(out):
        by_session.setdefault(r["session"], set()).add(r["model"])
    assert all(len(models) == 1 for models in by_session.values())
    assert len(set.union(*by_session.values())) >= 2  # and the sessions do not all share one model


def test_a_name_the_server_does_not_serve_stops_the_run_at_start(url: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bad"
    code = run_cli(["run", "--url", url, "--model", "base,lora-x", "--requests", "4", "--rate", "50", *QUICK,
                    "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and not out.exists()
    assert err == ["goodput: error: --model: the server refused a request for 'lora-x' and answered one for "
                   "another model of the mix: HTTP 404: The model `lora-x` does not exist."]


def test_serve_takes_names_repeated_or_as_a_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import refserver.api.serve as serving
    from loadgen.cli.app import app

    seen: list[AppConfig] = []
    monkeypatch.setattr(serving, "build_server_app", lambda _engine, config, **_kw: seen.append(config))
    monkeypatch.setattr(serving, "run_server", lambda *_a, **_kw: None)
    result = CliRunner().invoke(app, ["serve", "--served-model-name", "base,lora-a",
                                      "--served-model-name", "lora-b", "--served-model-name", "base"])
    assert result.exit_code == 0, result.output
    assert (seen[0].model_name, seen[0].other_names) == ("base", ("lora-a", "lora-b"))
    result = CliRunner().invoke(app, ["serve", "--served-model-name", "base,,lora-a"])
    assert result.exit_code == 2 and "an empty name" in result.output


def test_the_start_check_blames_a_name_only_when_another_was_served() -> None:
    from loadgen.run.models import ModelNotServed, check_mix
    from loadgen.types import ClientConfig
    from tests.loadgen._stream_server import threaded_server
    from tests.servers.refusing import vllm

    with threaded_server(vllm("base")) as server:
        config = ClientConfig(base_url=server.url, model="base")
        with pytest.raises(ModelNotServed, match=r"'lora-x' .*HTTP 404: The model `lora-x` does not exist\. "
                                                 r"\(1 more of the mix refused too\)$"):
            check_mix(config, ("lora-x", "base", "lora-y"), quiet=True)
        check_mix(config, ("lora-x", "lora-y"), quiet=True)  # all refused: a wrong URL or key as likely; the run says
        check_mix(config, ("base",), quiet=True)
