"""Token accounting against stream shapes of servers this project did not write, scripted byte for byte.

- `transformers serve`: a role event, several tokens per content event, usage only on the finish event,
  no `[DONE]`.
- llama-cpp-python's server: a role event, one event per token of which byte-fallback tokens carry
  `"content": ""`, a finish event, `[DONE]`, no usage at all; and the stream it sends to an in-flight
  request when a new one arrives: role event, `[DONE]`, nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, Endpoint, WorkItem
from metrics.records.record import RequestRecord
from metrics.summary.build import SummaryConfig, summarize
from tests.loadgen._tiny_tokenizer import byte_level_bpe
from tests.servers.scripted import DONE, END, ReceivedRequest, ScriptedServer, Send, chunk, event, head, usage

# What the model generated, one entry per token; "" marks a byte-fallback token whose bytes the server
# holds back until the character is complete (they arrive with the next token's text).
LLAMA_TOKENS = [" the", "", " qu", "ick", "", "", " br", "own", " fox", "", " j", "umps"]
# Chunks of several tokens each (transformers serve); whole words, so a byte-level BPE tokenizes the
# concatenation as the concatenation of the chunks.
HF_CHUNKS = [" the quick", " brown fox jumps", " over", " the lazy dog", " while the cat sleeps"]


def _llama(obj_choices: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "logprobs": None, "finish_reason": None, **obj_choices}]}


def llama_cpp_stream(_: ReceivedRequest) -> list[Send]:
    events = [_llama({"delta": {"role": "assistant"}})]
    events += [_llama({"delta": {"content": t}}) for t in LLAMA_TOKENS]
    events.append(_llama({"delta": {}, "finish_reason": "length"}))
    return [Send(head()), Send(b"".join(chunk(event(e)) for e in events) + chunk(DONE) + END)]


def llama_cpp_interrupted(_: ReceivedRequest) -> list[Send]:
    return [Send(head()), Send(chunk(event(_llama({"delta": {"role": "assistant"}}))) + chunk(DONE) + END)]


def llama_cpp_finished_without_content(_: ReceivedRequest) -> list[Send]:
    events = [_llama({"delta": {"role": "assistant"}}), _llama({"delta": {}, "finish_reason": "stop"})]
    return [Send(head()), Send(b"".join(chunk(event(e)) for e in events) + chunk(DONE) + END)]


def transformers_stream(final_tokens: int) -> Any:
    def handler(_: ReceivedRequest) -> list[Send]:
        def obj(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {"object": "chat.completion.chunk", "id": "req_0", "created": 1, "model": "m",
                    "system_fingerprint": "", "choices": [{"delta": delta, "index": 0, "finish_reason": reason,
                                                           "logprobs": None}]}

        events = [obj({"role": "assistant", "content": ""})]
        events += [obj({"content": text}) for text in HF_CHUNKS]
        final = obj({}, "length")
        final["usage"] = usage(21, final_tokens)
        events.append(final)
        # One event per write, 20 ms apart, so every gap is measurable; no [DONE], the stream just ends.
        return [Send(head()), *(Send(chunk(event(e)), at_s=0.02 * i) for i, e in enumerate(events)),
                Send(END, at_s=0.02 * len(events))]

    return handler


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return byte_level_bpe(tmp_path_factory.mktemp("tok"))


def _encode(path: Path, text: str) -> int:
    from tokenizers import Tokenizer

    return len(Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids)


async def _send_all(handler: Any, items: list[WorkItem], *, counter: str | None = None,
                    endpoint: Endpoint = "chat") -> list[RequestRecord]:
    async with ScriptedServer(handler) as server:
        config = ClientConfig(base_url=server.url, model="m", endpoint=endpoint, token_counter=counter)
        async with StreamingClient(config) as client:
            return [await client.send(item, request_id=i, intended_ns=0, anchor_ns=0)
                    for i, item in enumerate(items)]


async def _send(handler: Any, item: WorkItem | None = None, **kw: Any) -> RequestRecord:
    return (await _send_all(handler, [item or WorkItem(prompt="hi", max_tokens=16)], **kw))[0]


# --- 18: an interrupted stream is a failure ------------------------------------------------------------

async def test_interrupted_stream_is_an_empty_stream_failure() -> None:
    r = await _send(llama_cpp_interrupted)
    assert (r.status, r.error_kind, r.http_status) == ("error", "empty_stream", 200)
    assert r.chunk_ns == [] and r.finish_reason is None


async def test_finish_reason_without_content_stays_a_success() -> None:
    r = await _send(llama_cpp_finished_without_content)
    assert (r.status, r.error_kind, r.finish_reason) == ("ok", None, "stop")
    assert r.chunk_ns == []


async def test_a_run_of_interrupted_streams_is_not_a_run_of_successes() -> None:
    answers = iter([llama_cpp_interrupted] * 4 + [llama_cpp_stream, llama_cpp_finished_without_content])

    def handler(request: ReceivedRequest) -> list[Send]:
        return next(answers)(request)

    records = await _send_all(handler, [WorkItem(prompt="hi", max_tokens=16) for _ in range(6)])
    summary = summarize(records, SummaryConfig(), {})
    req = summary["requests"]
    assert (req["succeeded"], req["failed"], req["errors"]) == (2, 4, {"empty_stream": 4})
    assert req["ok_without_content"] == 1
    assert summary["latency"]["ttft_s"]["count"] == 1  # only the stream that answered


# --- 19: output tokens without usage --------------------------------------------------------------------

async def test_without_usage_or_tokenizer_every_token_event_counts() -> None:
    r = await _send(llama_cpp_stream, counter="words")  # words is no tokenizer
    content = [t for t in LLAMA_TOKENS if t]
    assert len(r.chunk_ns) == len(content)
    assert (r.output_tokens, r.output_tokens_estimated) == (len(LLAMA_TOKENS), True)
    assert r.token_source == "estimate_token_events"
    # Each empty event's token goes to the chunk that follows it (the one carrying its held-back bytes).
    assert r.chunk_tokens == [1, 2, 1, 3, 1, 1, 2, 1]


async def test_without_usage_the_tokenizer_estimates_from_the_received_text(tokenizer_path: Path) -> None:
    r = await _send(llama_cpp_stream, counter=str(tokenizer_path))
    text = "".join(LLAMA_TOKENS)
    assert r.token_source == "estimate_tokenizer" and r.output_tokens_estimated
    assert r.output_tokens == _encode(tokenizer_path, text)
    assert r.chunk_tokens is not None and sum(r.chunk_tokens) == r.output_tokens


async def test_summary_names_the_output_estimate(tokenizer_path: Path) -> None:
    with_tok = await _send(llama_cpp_stream, counter=str(tokenizer_path))
    without = await _send(llama_cpp_stream)
    tokens = summarize([with_tok, without], SummaryConfig(), {})["tokens"]
    assert tokens["output_estimated"] == 2
    assert tokens["output_estimate_basis"] == {"one_token_per_event": 1, "tokenizer": 1}
    assert tokens["token_source"] == {"estimate_token_events": 1, "estimate_tokenizer": 1}


# --- 20: prompt tokens without usage are the client's count of what it sent ----------------------------

async def test_prompt_tokens_without_usage_are_the_clients_count() -> None:
    item = WorkItem(prompt="hi", max_tokens=16, prompt_tokens_target=64, prompt_tokens_counted=66,
                    template_tokens=9)
    chat = await _send(llama_cpp_stream, item)
    assert (chat.prompt_tokens, chat.prompt_tokens_estimated, chat.prompt_tokens_target) == (75, True, 64)
    text = await _send(llama_cpp_stream, item, endpoint="completions")  # no chat template there
    assert (text.prompt_tokens, text.prompt_tokens_estimated) == (66, True)
    unknown = await _send(llama_cpp_stream, WorkItem(prompt="hi", prompt_tokens_target=64, prompt_tokens_counted=66))
    assert (unknown.prompt_tokens, unknown.prompt_tokens_estimated) == (66, True)


async def test_prompt_tokens_from_usage_win_over_the_clients_count() -> None:
    item = WorkItem(prompt="hi", max_tokens=16, prompt_tokens_target=64, prompt_tokens_counted=66, template_tokens=9)
    r = await _send(transformers_stream(30), item)
    assert (r.prompt_tokens, r.prompt_tokens_estimated) == (21, False)


# --- 21: per-token ITL when only the final usage is known ----------------------------------------------

async def test_final_usage_split_by_tokenizer(tokenizer_path: Path) -> None:
    per_chunk = [_encode(tokenizer_path, t) for t in HF_CHUNKS]
    exact = await _send(transformers_stream(sum(per_chunk)), counter=str(tokenizer_path))
    assert exact.status == "ok", exact.error_message
    assert exact.token_source == "final_split_by_tokenizer"
    assert exact.chunk_tokens == per_chunk
    assert (exact.output_tokens, exact.output_tokens_estimated) == (sum(per_chunk), False)
    # The server counted one more (e.g. its stop token): N stays the server's, spread in proportion.
    more = await _send(transformers_stream(sum(per_chunk) + 1), counter=str(tokenizer_path))
    assert more.chunk_tokens is not None and sum(more.chunk_tokens) == sum(per_chunk) + 1
    assert sum(abs(a - b) for a, b in zip(more.chunk_tokens, per_chunk, strict=True)) == 1


async def test_final_usage_split_by_text_length_without_tokenizer() -> None:
    lengths = [len(t) for t in HF_CHUNKS]
    r = await _send(transformers_stream(sum(lengths) // 2))
    assert r.token_source == "final_split_by_text_length"
    assert r.chunk_tokens is not None and sum(r.chunk_tokens) == sum(lengths) // 2
    for k, length in zip(r.chunk_tokens, lengths, strict=True):
        assert abs(k - length / 2) < 1


async def test_itl_per_token_is_no_longer_the_per_chunk_itl(tokenizer_path: Path) -> None:
    per_chunk = [_encode(tokenizer_path, t) for t in HF_CHUNKS]
    records = [await _send(transformers_stream(sum(per_chunk)), counter=str(tokenizer_path))]
    summary = summarize(records, SummaryConfig(), {})
    itl, per_token = summary["latency"]["itl_s"], summary["latency"]["itl_token_s"]
    assert itl["count"] == len(HF_CHUNKS) - 1
    assert per_token["count"] == sum(per_chunk[1:])  # one sample per token of chunks 2..K
    assert per_token["p50"] < itl["p50"]
    assert summary["tokens"]["itl_token_basis"] == "split_by_tokenizer"
    plain = summarize([await _send(transformers_stream(sum(per_chunk)))], SummaryConfig(), {})
    assert plain["tokens"]["itl_token_basis"] == "split_by_text_length"
