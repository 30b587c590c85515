"""The reference server as a reasoning model (`--reasoning-tokens`) and a tool-calling model
(`--tool-call-rate`), in each API's own form, against the fake engine (exact text) and the sim engine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from refserver.api.behaviour import Behaviour, Tool, parse_token_dist
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread, sse_payloads
from tests.refserver.named_sse import Event, post, read_stream

SCRIPT_TEXT = bytes(DEFAULT_SCRIPT).decode()  # "Hello, world! "
K = 5
HELLO = [{"role": "user", "content": "Say hello"}]
SCHEMA = {"type": "object", "properties": {"days": {"type": "integer"}, "city": {"type": "string"}}}
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": SCHEMA}]
MESSAGES_TOOLS = [{"name": "get_weather", "input_schema": SCHEMA}]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """A server that reasons for exactly K tokens and calls a tool whenever the request requires one."""
    with serve_in_thread(make_app(FakeEngine(), behaviour=Behaviour(reasoning=parse_token_dist(str(K))))) as base:
        yield base


def chat_stream(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = post(f"{url}/v1/chat/completions", {**body, "stream": True,
                                                    "stream_options": {"include_usage": True}})
    events = sse_payloads(response.text)
    assert events[-1] == "[DONE]"
    return list(events[:-1])


def tokens(events: list[Event], name: str, delta_type: str | None = None) -> int:
    return sum(e.data["goodput"]["n"] for e in events
               if e.name == name and (delta_type is None or e.data["delta"]["type"] == delta_type))


def test_chat_streams_the_first_k_tokens_as_reasoning_content(url: str) -> None:
    chunks = chat_stream(url, {"messages": HELLO})
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    reasoning = [(d["reasoning_content"], c["goodput"]["n"]) for d, c in zip(deltas, chunks, strict=False)
                 if "reasoning_content" in d]
    assert "".join(text for text, _ in reasoning) == SCRIPT_TEXT[:K]
    assert sum(n for _, n in reasoning) == K
    assert "".join(d.get("content") or "" for d in deltas) == SCRIPT_TEXT[K:]
    usage = chunks[-1]["usage"]
    assert usage["completion_tokens_details"] == {"reasoning_tokens": K}
    assert usage["completion_tokens"] == len(DEFAULT_SCRIPT) + 1 == sum(c["goodput"]["n"] for c in chunks)
    body = post(f"{url}/v1/chat/completions", {"messages": HELLO}).json()
    message = body["choices"][0]["message"]
    assert (message["reasoning_content"], message["content"]) == (SCRIPT_TEXT[:K], SCRIPT_TEXT[K:])
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == K


def test_responses_stream_a_reasoning_item_then_the_message(url: str) -> None:
    events = read_stream(f"{url}/v1/responses", {"input": "Say hello"})
    added = [e.data["item"]["type"] for e in events if e.name == "response.output_item.added"]
    assert added == ["reasoning", "message"]
    names = [e.name for e in events]
    assert names[2:4] == ["response.output_item.added", "response.content_part.added"]
    assert events[3].data["part"] == {"type": "reasoning_text", "text": ""}
    reasoning = "".join(e.data["delta"] for e in events if e.name == "response.reasoning_text.delta")
    assert reasoning == SCRIPT_TEXT[:K]
    assert tokens(events, "response.reasoning_text.delta") == K
    # the reasoning item closes before the message opens
    assert names.index("response.reasoning_text.done") < names.index("response.output_item.done") < \
        [i for i, e in enumerate(events) if e.name == "response.output_item.added"][1]
    response = events[-1].data["response"]
    assert response["output"][0]["content"] == [{"type": "reasoning_text", "text": SCRIPT_TEXT[:K]}]
    assert response["output"][1]["content"][0]["text"] == SCRIPT_TEXT[K:]
    assert response["usage"]["output_tokens_details"] == {"reasoning_tokens": K}
    assert response["usage"]["output_tokens"] == sum(e.data["goodput"]["n"] for e in events)


def test_messages_stream_a_thinking_block_with_its_signature(url: str) -> None:
    events = read_stream(f"{url}/v1/messages", {"messages": HELLO, "max_tokens": 64})
    starts = [e.data["content_block"] for e in events if e.name == "content_block_start"]
    assert starts == [{"type": "thinking", "thinking": "", "signature": ""}, {"type": "text", "text": ""}]
    block0 = [e.data["delta"] for e in events if e.name == "content_block_delta" and e.data["index"] == 0]
    assert [d["type"] for d in block0] == ["thinking_delta"] * K + ["signature_delta"]
    assert "".join(d["thinking"] for d in block0[:-1]) == SCRIPT_TEXT[:K]
    assert block0[-1]["signature"]
    assert tokens(events, "content_block_delta", "thinking_delta") == K
    text = "".join(e.data["delta"].get("text", "") for e in events if e.name == "content_block_delta")
    assert text == SCRIPT_TEXT[K:]
    body = post(f"{url}/v1/messages", {"messages": HELLO, "max_tokens": 64}).json()
    assert [b["type"] for b in body["content"]] == ["thinking", "text"]
    assert body["content"][0]["thinking"] == SCRIPT_TEXT[:K]
    assert body["content"][0]["signature"] == block0[-1]["signature"]


def test_an_answer_cut_while_reasoning_is_all_reasoning(url: str) -> None:
    """Even with a call required: max tokens ended the output before the call could begin."""
    events = read_stream(f"{url}/v1/responses", {"input": "Say hello", "max_output_tokens": 3,
                                                 "tools": RESPONSES_TOOLS, "tool_choice": "required"})
    assert events[-1].name == "response.incomplete"
    usage = events[-1].data["response"]["usage"]
    assert usage["output_tokens"] == 3 and usage["output_tokens_details"]["reasoning_tokens"] == 3
    assert [i["type"] for i in events[-1].data["response"]["output"]] == ["reasoning"]


def test_no_eos_among_the_reasoning_tokens() -> None:
    """The script ends (eos) after 14 tokens; a 20-token reasoning still gets an answer after it."""
    with serve_in_thread(make_app(FakeEngine(), behaviour=Behaviour(reasoning=parse_token_dist("20")))) as base:
        body = post(f"{base}/v1/responses", {"input": "x", "max_output_tokens": 40}).json()
    assert body["usage"]["output_tokens_details"]["reasoning_tokens"] == 20
    assert body["output"][1]["content"][0]["text"] == SCRIPT_TEXT[20 % len(SCRIPT_TEXT)]
    assert body["usage"]["output_tokens"] == 22  # 20 reasoning, one answer token, eos


def arguments(text: str) -> dict[str, Any]:
    parsed = json.loads(text)
    assert isinstance(parsed, dict)
    return parsed


def test_chat_tool_call_streams_json_arguments(url: str) -> None:
    chunks = chat_stream(url, {"messages": HELLO, "tools": CHAT_TOOLS, "tool_choice": "required"})
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and
             "tool_calls" in c["choices"][0]["delta"]]
    assert calls[0]["id"].startswith("call_") and calls[0]["type"] == "function"
    assert calls[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert all(c["index"] == 0 for c in calls)
    joined = "".join(c["function"]["arguments"] for c in calls)
    assert arguments(joined) == {"city": SCRIPT_TEXT[K:]}  # the first string property
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finish[-1] == "tool_calls"
    assert chunks[-1]["usage"]["completion_tokens"] == sum(c["goodput"]["n"] for c in chunks)
    body = post(f"{url}/v1/chat/completions", {"messages": HELLO, "tools": CHAT_TOOLS,
                                               "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
    message = body.json()["choices"][0]["message"]
    assert message["content"] is None
    assert arguments(message["tool_calls"][0]["function"]["arguments"]) == {"city": SCRIPT_TEXT[K:]}


def test_responses_function_call_item(url: str) -> None:
    events = read_stream(f"{url}/v1/responses", {"input": "x", "tools": RESPONSES_TOOLS, "tool_choice": "required"})
    added = [e.data for e in events if e.name == "response.output_item.added"]
    assert [a["item"]["type"] for a in added] == ["reasoning", "function_call"]
    call = added[1]["item"]
    assert (call["name"], call["arguments"], call["status"]) == ("get_weather", "", "in_progress")
    assert call["call_id"].startswith("call_")
    deltas = [e.data for e in events if e.name == "response.function_call_arguments.delta"]
    assert all(d["item_id"] == call["id"] and d["output_index"] == 1 for d in deltas)
    done = next(e.data for e in events if e.name == "response.function_call_arguments.done")
    assert done["arguments"] == "".join(d["delta"] for d in deltas)
    assert arguments(done["arguments"]) == {"city": SCRIPT_TEXT[K:]}
    final = events[-1]
    assert final.name == "response.completed"
    item = final.data["response"]["output"][1]
    assert item == {**call, "arguments": done["arguments"], "status": "completed"}


def test_messages_tool_use_block(url: str) -> None:
    body = {"messages": HELLO, "max_tokens": 64, "tools": MESSAGES_TOOLS, "tool_choice": {"type": "any"}}
    events = read_stream(f"{url}/v1/messages", body)
    starts = [e.data for e in events if e.name == "content_block_start"]
    block = starts[1]["content_block"]
    assert (block["type"], block["name"], block["input"]) == ("tool_use", "get_weather", {})
    assert block["id"].startswith("toolu_")
    partial = [e.data["delta"]["partial_json"] for e in events if e.name == "content_block_delta" and
               e.data["delta"]["type"] == "input_json_delta"]
    assert arguments("".join(partial)) == {"city": SCRIPT_TEXT[K:]}
    assert events[-2].data["delta"]["stop_reason"] == "tool_use"
    complete = post(f"{url}/v1/messages", body).json()
    assert complete["content"][1]["input"] == {"city": SCRIPT_TEXT[K:]}
    assert complete["stop_reason"] == "tool_use"


def test_arguments_stay_valid_json_whatever_the_text() -> None:
    script = list(b'say "hi" \\ then\n\ttab')
    with serve_in_thread(make_app(FakeEngine(script=script), behaviour=Behaviour(tool_call_rate=1.0))) as base:
        events = read_stream(f"{base}/v1/responses", {"input": "x", "tools": [{"type": "function", "name": "f"}]})
    done = next(e.data for e in events if e.name == "response.function_call_arguments.done")
    assert arguments(done["arguments"]) == {"input": bytes(script).decode()}  # no string property: "input"


def test_no_call_without_tools_or_with_tool_choice_none() -> None:
    with serve_in_thread(make_app(FakeEngine(), behaviour=Behaviour(tool_call_rate=1.0))) as base:
        plain = post(f"{base}/v1/responses", {"input": "x"}).json()
        refused = post(f"{base}/v1/responses", {"input": "x", "tools": RESPONSES_TOOLS, "tool_choice": "none"}).json()
        called = post(f"{base}/v1/responses", {"input": "x", "tools": RESPONSES_TOOLS}).json()
    assert [i["type"] for i in plain["output"]] == ["message"]
    assert [i["type"] for i in refused["output"]] == ["message"]
    assert [i["type"] for i in called["output"]] == ["function_call"]


def outcome(base: str, seed: int | None) -> tuple[int, bool]:
    body: dict[str, Any] = {"input": "x", "tools": RESPONSES_TOOLS, "max_output_tokens": 40}
    if seed is not None:
        body["seed"] = seed
    response = post(f"{base}/v1/responses", body).json()
    called = response["output"][-1]["type"] == "function_call"
    return response["usage"]["output_tokens_details"]["reasoning_tokens"], called


def test_draws_are_seeded() -> None:
    def server(seed: int) -> Any:
        behaviour = Behaviour(reasoning=parse_token_dist("uniform:1:8"), tool_call_rate=0.5, seed=seed)
        return serve_in_thread(make_app(FakeEngine(), behaviour=behaviour))

    with server(7) as first, server(7) as second, server(8) as other:
        # a request's own seed: the same plan whatever came before it
        forward = {s: outcome(first, s) for s in range(10)}
        backward = {s: outcome(second, s) for s in reversed(range(10))}
        assert forward == backward
        assert {called for _, called in forward.values()} == {True, False}
        assert len({k for k, _ in forward.values()}) > 1
        # no seed: the server's own generator, in arrival order
        unseeded = [outcome(first, None) for _ in range(10)]
        assert unseeded == [outcome(second, None) for _ in range(10)]
        assert unseeded != [outcome(other, None) for _ in range(10)]


def test_the_share_of_tool_calls_follows_the_rate() -> None:
    tools = [Tool("a"), Tool("b")]
    for rate, low, high in ((0.0, 0, 0), (0.3, 240, 360), (1.0, 1000, 1000)):
        behaviour = Behaviour(tool_call_rate=rate, seed=3)
        plans = [behaviour.plan(request_seed=None, tools=tools, tool_choice="auto") for _ in range(1000)]
        calls = [p.tool_call for p in plans if p.tool_call is not None]
        assert low <= len(calls) <= high  # binomial(1000, 0.3): 300 ± 3.8 sd
        assert {c.tool.name for c in calls} <= {"a", "b"}


def test_metrics_count_the_new_apis_like_chat(url: str) -> None:
    before = httpx.get(f"{url}/metrics").text
    post(f"{url}/v1/messages", {"messages": HELLO, "max_tokens": 64})
    read_stream(f"{url}/v1/responses", {"input": "x"})
    after = httpx.get(f"{url}/metrics").text

    def stops(text: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith('vllm:request_success_total{finished_reason="stop"'))
        return float(line.rsplit(" ", 1)[1])

    assert stops(after) - stops(before) == 2


def test_every_api_end_to_end_on_the_sim_engine() -> None:
    """The real engine path (scheduler, KV blocks, the sim runner's clock and filler text): reasoning and a
    tool call in each API, the token counts equal to what was streamed, each event stamped by the server
    before the client read it."""
    from refserver.api.app import AppConfig
    from refserver.api.serve import build_server_app
    from refserver.engine.config import EngineConfig
    from refserver.engine.sim_runner import SimOptions

    config = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM"), max_num_seqs=8)
    behaviour = Behaviour(reasoning=parse_token_dist("4"), tool_call_rate=1.0)
    app = build_server_app(config, AppConfig(model_name="sim", behaviour=behaviour))
    filler = "lorem ipsum dolor sit amet"
    with serve_in_thread(app) as base:
        responses = read_stream(f"{base}/v1/responses", {"input": "x", "max_output_tokens": 12,
                                                         "tools": RESPONSES_TOOLS})
        messages = read_stream(f"{base}/v1/messages", {"messages": HELLO, "max_tokens": 12, "tools": MESSAGES_TOOLS})
        chat = chat_stream(base, {"messages": HELLO, "max_tokens": 12, "tools": CHAT_TOOLS})
    for events in (responses, messages):
        assert all(e.data["goodput"]["t"] <= e.client_s for e in events)
        assert [e.data["goodput"]["t"] for e in events] == sorted(e.data["goodput"]["t"] for e in events)
    usage = responses[-1].data["response"]["usage"]
    assert usage["output_tokens"] == 12 == sum(e.data["goodput"]["n"] for e in responses)
    assert usage["output_tokens_details"]["reasoning_tokens"] == 4 == tokens(responses, "response.reasoning_text.delta")
    done = next(e.data for e in responses if e.name == "response.function_call_arguments.done")
    assert arguments(done["arguments"]) == {"city": filler[4:12]}
    assert responses[-1].name == "response.completed"  # a call is closed when the output ends, also at max tokens
    assert tokens(messages, "content_block_delta", "thinking_delta") == 4
    assert sum(e.data["goodput"]["n"] for e in messages) == 12 == messages[-2].data["usage"]["output_tokens"]
    partial = "".join(e.data["delta"].get("partial_json", "") for e in messages if e.name == "content_block_delta")
    assert arguments(partial) == {"city": filler[4:12]}
    assert messages[-2].data["delta"]["stop_reason"] == "tool_use"
    assert chat[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] == 4
    assert [c["choices"][0]["finish_reason"] for c in chat if c["choices"]][-1] == "tool_calls"


@pytest.mark.parametrize("spec", ["64", "1", "uniform:32:128", "normal:64:16", "lognormal:64:0.5", "0", "-3", "1.5",
                                  "uniform:5:2", "normal:0:1", "lognormal:64:-1", "gamma:1:2", "uniform:1", "x", ""])
def test_the_length_grammar_is_goodput_runs(spec: str) -> None:
    """`--reasoning-tokens` takes what `goodput run` takes for lengths, and refuses what it refuses."""
    from loadgen.workload.lengths import parse_length

    try:
        expected = parse_length(spec)
    except ValueError as exc:
        with pytest.raises(ValueError) as refused:
            parse_token_dist(spec)
        assert str(refused.value) == str(exc)
        return
    parsed = parse_token_dist(spec)
    assert (parsed.kind, parsed.a, parsed.b) == (expected.kind, expected.a, expected.b)


def test_cli_options_reach_the_app_and_bad_ones_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    import refserver.api.serve as serve_module
    from refserver.cli import serve

    apps: list[Any] = []
    monkeypatch.setattr(serve_module, "run_server", lambda app, **kwargs: apps.append(app))
    cli = typer.Typer()
    cli.command()(serve)
    ok = CliRunner().invoke(cli, ["--engine", "sim", "--reasoning-tokens", "uniform:2:9", "--tool-call-rate", "0.25",
                                  "--seed", "5"])
    assert ok.exit_code == 0, ok.output
    behaviour = apps[0].state.server.config.behaviour
    assert (behaviour.reasoning, behaviour.tool_call_rate, behaviour.seed) == (parse_token_dist("uniform:2:9"), 0.25, 5)
    for args, flag in ((["--reasoning-tokens", "uniform:9"], "--reasoning-tokens"),
                       (["--tool-call-rate", "1.5"], "--tool-call-rate")):
        bad = CliRunner().invoke(cli, ["--engine", "sim", *args])
        assert bad.exit_code == 2 and flag in bad.output
