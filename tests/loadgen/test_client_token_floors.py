"""Output tokens that never become text, and text that re-tokenizes into more tokens than were generated,
against the stream shapes of servers this project did not write, scripted byte for byte.

- llama-cpp-python's server: one event per token; a byte-fallback token whose character is not complete
  yet is sent as `"content": ""` (its bytes arrive with the token that completes the character); a
  finish event with an empty delta; `[DONE]`; no usage.
- `transformers serve`: a role event, several tokens per content event, each chunk decoded on its own so
  that a byte token whose character is split across chunks decodes as U+FFFD; usage only on the finish
  event; no `[DONE]`.
- vLLM without usage (`--no-usage`): one event per token, a finish event with empty content, `[DONE]`.

In each fake the model's tokens are listed one by one, so the true counts come from the script itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from exporters.console import format_summary
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from metrics.records.record import RequestRecord
from metrics.summary.build import SummaryConfig, summarize
from tests.loadgen._tiny_tokenizer import byte_level_bpe, metaspace_bpe
from tests.servers.scripted import DONE, END, ReceivedRequest, ScriptedServer, Send, chunk, event, head, usage

BYTE = 0  # a byte-fallback token in the scripts below: it has no text of its own

# llama-cpp-python: what each token event carries. "" is a byte token of a character still incomplete;
# the character's last byte token carries the whole character. " 日本 é" took 3 + 3 + 2 byte tokens.
LLAMA_EVENTS = [" the", " ", "", "", "日", "", "", "本", " fox", " ", "", "é"]
LLAMA_GAP_S = 0.005  # one token event every 5 ms

# transformers serve: the tokens of each content chunk. BYTE tokens of a character split across chunks
# decode to one U+FFFD each (the tokenizer's byte-fallback decoder replaces each invalid byte).
HF_CHUNK_TOKENS: list[list[Any]] = [
    [" the", " while"], [BYTE, BYTE, BYTE], [BYTE, BYTE, BYTE], [" and"], [BYTE, BYTE, BYTE], [" like"], [" words"],
]

# vLLM: one event per token; BYTE tokens that never form a character are sent as U+FFFD.
VLLM_TOKENS: list[Any] = [" the", BYTE, " while", BYTE, BYTE, " and", " like", BYTE, " words", " one"]
# The same engine serving a model whose tokens the run's tokenizer cuts into many pieces.
FOREIGN_TOKENS = [" brown"] * 10


def _decode(tokens: list[Any]) -> str:
    return "".join("\ufffd" if t == BYTE else t for t in tokens)


def _llama(choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "logprobs": None, "finish_reason": None, **choice}]}


def llama_cpp_bytes(_: ReceivedRequest) -> list[Send]:
    events = [_llama({"delta": {"role": "assistant"}})]
    events += [_llama({"delta": {"content": t}}) for t in LLAMA_EVENTS]
    events.append(_llama({"delta": {}, "finish_reason": "length"}))
    sends = [Send(head())]
    sends += [Send(chunk(event(e)), at_s=LLAMA_GAP_S * i) for i, e in enumerate(events)]
    sends.append(Send(chunk(DONE) + END, at_s=LLAMA_GAP_S * len(events)))
    return sends


def transformers_bytes(_: ReceivedRequest) -> list[Send]:
    def obj(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {"object": "chat.completion.chunk", "id": "req_0", "created": 1, "model": "m",
                "system_fingerprint": "", "choices": [{"delta": delta, "index": 0, "finish_reason": reason,
                                                       "logprobs": None}]}

    events = [obj({"role": "assistant", "content": ""})]
    events += [obj({"content": _decode(tokens)}) for tokens in HF_CHUNK_TOKENS]
    final = obj({}, "length")
    final["usage"] = usage(21, sum(map(len, HF_CHUNK_TOKENS)))
    events.append(final)
    return [Send(head()), *(Send(chunk(event(e)), at_s=0.01 * i) for i, e in enumerate(events)),
            Send(END, at_s=0.01 * len(events))]


def vllm_without_usage(tokens: list[Any]) -> Any:
    def handler(_: ReceivedRequest) -> list[Send]:
        def obj(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]}

        events = [obj({"role": "assistant", "content": ""})]
        events += [obj({"content": _decode([t])}) for t in tokens]
        events.append(obj({"content": ""}, "length"))
        return [Send(head()), Send(b"".join(chunk(event(e)) for e in events) + chunk(DONE) + END)]

    return handler


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tok")
    return {"bytes": byte_level_bpe(root / "bytes"), "meta": metaspace_bpe(root / "meta")}


def _encode(path: Path, text: str) -> int:
    from tokenizers import Tokenizer

    return len(Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids)


async def _send(handler: Any, tokenizer: Path) -> tuple[RequestRecord, ReceivedRequest]:
    async with ScriptedServer(handler) as server:
        config = ClientConfig(base_url=server.url, model="m", token_counter=str(tokenizer))
        async with StreamingClient(config) as client:
            record = await client.send(WorkItem(prompt="hi", max_tokens=16), request_id=0, intended_ns=0,
                                       anchor_ns=0)
        return record, server.requests[0]


async def test_llama_cpp_empty_token_events_are_a_floor_under_the_tokenizer(tokenizers: dict[str, Path]) -> None:
    r, request = await _send(llama_cpp_bytes, tokenizers["meta"])
    text = "".join(LLAMA_EVENTS)
    by_tokenizer = _encode(tokenizers["meta"], text)
    assert by_tokenizer < len(LLAMA_EVENTS)  # the script's premise: each character re-tokenizes as one token
    assert (r.output_tokens, r.output_tokens_estimated) == (len(LLAMA_EVENTS), True)
    assert r.token_source == "estimate_token_events_tokenizer_low"
    assert (r.output_tokens_by_events, r.output_tokens_by_tokenizer) == (len(LLAMA_EVENTS), by_tokenizer)
    assert r.chunk_tokens == [1, 1, 3, 3, 1, 1, 2]  # each empty event's token with the chunk that follows it
    # TPOT over the true N: the server wrote one token every LLAMA_GAP_S (its own write stamps are the truth).
    writes = request.writes_ns[2:-2]  # the token events: after the head and the role event, before the finish
    true_tpot_s = (writes[-1] - writes[0]) / 1e9 / (len(LLAMA_EVENTS) - 1)
    summary = summarize([r], SummaryConfig(), {})
    assert summary["latency"]["tpot_s"]["p50"] == pytest.approx(true_tpot_s, rel=0.2)
    assert " ~TPOT " in format_summary(summary)  # N is an estimate, and TPOT divides by it


async def test_transformers_final_usage_split_gives_every_text_chunk_a_token(tokenizers: dict[str, Path]) -> None:
    r, _ = await _send(transformers_bytes, tokenizers["bytes"])
    assert r.status == "ok", r.error_message
    assert r.token_source == "final_split_by_tokenizer"
    assert r.chunk_tokens == [len(tokens) for tokens in HF_CHUNK_TOKENS]  # exact: U+FFFD weighs one token
    assert r.output_tokens == sum(map(len, HF_CHUNK_TOKENS)) and not r.output_tokens_estimated


async def test_no_usage_tokenizer_count_is_not_inflated_by_replacement_characters(
        tokenizers: dict[str, Path]) -> None:
    r, _ = await _send(vllm_without_usage(VLLM_TOKENS), tokenizers["bytes"])
    assert _encode(tokenizers["bytes"], _decode(VLLM_TOKENS)) > 1.5 * len(VLLM_TOKENS)  # U+FFFD: 3 tokens each
    assert (r.token_source, r.output_tokens) == ("estimate_tokenizer", len(VLLM_TOKENS))
    assert r.chunk_tokens == [1] * len(VLLM_TOKENS)


async def test_no_usage_tokenizer_far_above_the_events_is_recorded_not_believed(
        tokenizers: dict[str, Path]) -> None:
    r, _ = await _send(vllm_without_usage(FOREIGN_TOKENS), tokenizers["bytes"])
    by_tokenizer = _encode(tokenizers["bytes"], "".join(FOREIGN_TOKENS))
    assert by_tokenizer > 1.5 * len(FOREIGN_TOKENS)  # " brown" is five tokens of the test vocabulary
    assert r.token_source == "estimate_token_events_tokenizer_high"
    assert (r.output_tokens, r.output_tokens_by_events, r.output_tokens_by_tokenizer) == (
        len(FOREIGN_TOKENS), len(FOREIGN_TOKENS), by_tokenizer)
    summary = summarize([r], SummaryConfig(), {})
    assert summary["tokens"]["output_estimate_basis"] == {"one_token_per_event_tokenizer_high": 1}
    assert ("note: output tokens counted as one per token event, not by the tokenizer, for 1 request: the"
            " tokenizer counted far more tokens than the stream's token events") in format_summary(summary)
