"""Asking the server how it counts tokens, before the run (loadgen.run.sizing decides what to ask).

- `learn_table`: the server's `POST /tokenize` (vLLM's and SGLang's shape, which the reference server
  answers too: `{"model", "prompt", "add_special_tokens"}` or `{"model", "messages",
  "add_generation_prompt"}` → `{"count", "tokens", "max_model_len"}`) counts each word of the synthetic
  vocabulary at the start of a text and after a space, and the chat template's tokens.
- `calibrate`: a few non-streamed requests for one output token, in the run's API (`loadgen.http.api`), with
  prompts of known numbers of words; the prompt tokens their usage reports fit tokens ≈ overhead +
  tokens_per_word × words.
Both raise ProbeFailed with a one-line reason when the server does not answer the way they need.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlsplit

import httpx
import numpy as np

from loadgen.http.api import Api, ProbeAnswer, api_for, endpoint_url
from loadgen.http.payload import needs_tls
from loadgen.types import Message
from loadgen.workload import WORDS, RatioCounter, TableCounter, TemplateCost, fit_line, random_words

if TYPE_CHECKING:
    from metrics.results import JsonObject

PROBE_TIMEOUT_S = httpx.Timeout(30.0, connect=10.0)
TOKENIZE_CONCURRENCY = 16
CALIBRATION_WORDS = (16, 32, 48, 64, 96, 128, 192, 256)  # one user message each
CALIBRATION_TURNS = (24, 64, 128)  # words over a (user, assistant, user) conversation: the per-message cost


class ProbeFailed(Exception):
    """The server cannot size prompts this way; the message says why, in one line."""


class ServerUnreachable(ProbeFailed):
    """No connection at all: the run itself will say so; probing stops at the first attempt."""


class ServerSilent(ProbeFailed):
    """Connected, but no answer within the probe's timeout: probing stops at the first such probe."""


class ProbeAnswered(ProbeFailed):
    """A probe request answered with an HTTP error status (`status`); the message quotes the server."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ProbesRefused(ProbeFailed):
    """Every probe request was refused with the same HTTP status (a wrong model, a missing key, an option the
    server rejects): the run's own requests will most likely be refused alike, so it is no sizing problem."""


def _failed(what: str, exc: httpx.HTTPError) -> ProbeFailed:
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return ServerUnreachable(f"{what}: {type(exc).__name__}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return ServerSilent(f"{what}: no answer within {PROBE_TIMEOUT_S.read:g} s")
    return ProbeFailed(f"{what}: {type(exc).__name__}: {exc}")


def tokenize_url(base_url: str) -> str:
    """`http://host:8000[/v1]` → `http://host:8000/tokenize` (vLLM serves it beside /v1, not under it)."""
    parts = urlsplit(endpoint_url(base_url, "chat"))
    root = parts.path.removesuffix("/chat/completions").removesuffix("/v1")
    return f"{parts.scheme}://{parts.netloc}{root}/tokenize"


def _auth(api_key: str | None, headers: dict[str, str], api: Api | None = None) -> dict[str, str]:
    """The probes' headers: the API's own (its version header, its way of sending the key), else a bearer
    key (the tokenize endpoint is vLLM's own)."""
    out = {**(api.headers if api is not None else {}), **headers}
    if api_key:
        out.update(api.auth(api_key) if api is not None else {"Authorization": f"Bearer {api_key}"})
    return out


class TokenizeText(TypedDict):
    model: str
    prompt: str
    add_special_tokens: bool


class TokenizeChat(TypedDict):
    model: str
    messages: list[Message]
    add_generation_prompt: bool


async def _count(client: httpx.AsyncClient, url: str, body: TokenizeText | TokenizeChat,
                 seen: JsonObject | None = None) -> int:
    try:
        resp = await client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise _failed(f"POST {urlsplit(url).path}", exc) from None
    if resp.status_code != 200:
        said = server_message(resp)
        raise ProbeFailed(f"POST {urlsplit(url).path} answered HTTP {resp.status_code}" + (f": {said}" if said else ""))
    try:
        data = resp.json()
    except ValueError:
        raise ProbeFailed(f"POST {urlsplit(url).path} answered no JSON") from None
    if seen is not None and isinstance(data, dict) and "max_model_len" not in seen:
        seen["max_model_len"] = data.get("max_model_len")  # vLLM's and the reference server's answers carry it
    count = data.get("count") if isinstance(data, dict) else None
    if type(count) is not int:
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise ProbeFailed(f"POST {urlsplit(url).path} answered no count")
        count = len(tokens)
    return count


async def learn_table(base_url: str, model: str, *, chat: bool, api_key: str | None = None,
                      headers: dict[str, str] | None = None, seen: JsonObject | None = None) -> TableCounter:
    """The server's word table; `seen` (when given) gets the first answer's `max_model_len`."""
    url = tokenize_url(base_url)
    async with httpx.AsyncClient(headers=_auth(api_key, headers or {}), timeout=PROBE_TIMEOUT_S,
                                 trust_env=False, verify=needs_tls(url)) as client:
        def text(prompt: str) -> TokenizeText:
            return {"model": model, "prompt": prompt, "add_special_tokens": False}

        anchor = await _count(client, url, text("the"), seen)  # also: is there an endpoint at all
        empty = await _count(client, url, text(""))
        gate = asyncio.Semaphore(TOKENIZE_CONCURRENCY)

        async def counted(prompt: str) -> int:
            async with gate:
                return await _count(client, url, text(prompt))

        firsts = await asyncio.gather(*(counted(w) for w in WORDS))
        spaced = await asyncio.gather(*(counted("the " + w) for w in WORDS))
        sample = " ".join(WORDS)
        per_char = await counted(sample) / len(sample)
        template = TemplateCost()
        if chat:
            first_the = anchor - empty

            async def chat_count(roles: tuple[str, ...]) -> int:
                body: TokenizeChat = {"model": model, "messages": [{"role": r, "content": "the"} for r in roles],
                                      "add_generation_prompt": True}
                return await _count(client, url, body) - len(roles) * first_the

            one = await chat_count(("user",))
            system = await chat_count(("system", "user"))
            pair = await chat_count(("user", "assistant", "user"))
            template = TemplateCost(one, system - one, pair - one)
    table = TableCounter("server_tokenize", {w: c - empty for w, c in zip(WORDS, firsts, strict=True)},
                         {w: c - anchor for w, c in zip(WORDS, spaced, strict=True)}, template, per_char)
    return table


async def calibrate(base_url: str, model: str, *, chat: bool, api_key: str | None = None,
                    headers: dict[str, str] | None = None, extra_body: JsonObject | None = None,
                    endpoint: str | None = None) -> RatioCounter:
    """`endpoint`: the run's API (default: chat, or completions when `chat` is false)."""
    api = api_for(endpoint or ("chat" if chat else "completions"))
    chat = api.chat_template
    url = endpoint_url(base_url, api.name)
    rng = np.random.default_rng(20_240_611)
    shapes = [(n, 1) for n in CALIBRATION_WORDS] + ([(n, 3) for n in CALIBRATION_TURNS] if chat else [])
    words: list[int] = []
    extra: list[int] = []
    tokens: list[int] = []
    reasons: list[str] = []
    statuses: set[int | None] = set()  # of the refused probes (None: refused without an HTTP status)
    async with httpx.AsyncClient(headers=_auth(api_key, headers or {}, api), timeout=PROBE_TIMEOUT_S,
                                 trust_env=False, verify=needs_tls(url)) as client:
        for n, messages in shapes:
            parts = [random_words(max(1, n // messages), rng) for _ in range(messages)]
            roles = ("user", "assistant", "user")[:messages]
            fixed = api.probe_body(model, [{"role": r, "content": p} for r, p in zip(roles, parts, strict=True)])
            # The user's extra body may name the model; the prompt, the one token and no streaming stay.
            body = {**fixed, **(extra_body or {}), **{k: v for k, v in fixed.items() if k != "model"}}
            try:
                prompt_tokens = await _usage(client, url, body, api)
            except (ServerUnreachable, ServerSilent):
                raise
            except ProbeFailed as exc:
                reasons.append(str(exc))
                statuses.add(exc.status if isinstance(exc, ProbeAnswered) else None)
                continue
            words.append(sum(len(p.split()) for p in parts))
            extra.append(messages - 1)
            tokens.append(prompt_tokens)
    if sum(1 for e in extra if e == 0) < 3:
        too_long = {400, 413}  # the probe was longer than the context: a sizing matter, not a refusal
        if not tokens and len(set(reasons)) == 1 and len(statuses) == 1 and statuses.isdisjoint({None, *too_long}):
            raise ProbesRefused(reasons[0])
        raise ProbeFailed(reasons[0] if reasons else "too few probe requests succeeded")
    a, b, e = fit_line(words, extra, tokens)
    template = TemplateCost(round(a), per_system=e, per_pair=2 * e) if chat else TemplateCost()
    return RatioCounter(b, template, probes=len(tokens), rejected=tuple(reasons), longest_words=max(words))


async def _usage(client: httpx.AsyncClient, url: str, body: dict[str, Any], api: Api) -> int:
    try:
        resp = await client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise _failed("a probe request failed", exc) from None
    if resp.status_code != 200:
        said = server_message(resp)
        raise ProbeAnswered(f"a probe request answered HTTP {resp.status_code}" + (f": {said}" if said else ""),
                            resp.status_code)
    answer: ProbeAnswer | None
    try:
        answer = resp.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ProbeFailed("a probe request answered no JSON object")
    prompt = api.probe_prompt_tokens(answer)
    if prompt is None:
        raise ProbeFailed(f"the server reports no prompt tokens in its usage ({api.name} API)")
    return prompt


def server_message(resp: httpx.Response, limit: int = 160) -> str:
    """The server's own reason for refusing a probe (OpenAI's `error.message`, or `message`/`detail`), on
    one line and cut to `limit` characters; "" when it gave none."""
    try:
        data = resp.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    said = error.get("message") if isinstance(error, dict) else error
    if not isinstance(said, str):
        said = data.get("message", data.get("detail"))
    if not isinstance(said, str):
        return ""
    said = " ".join(said.split())
    return said if len(said) <= limit else said[: limit - 1] + "…"
