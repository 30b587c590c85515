"""What the routes share: the app's settings, and the per-request steps before generation starts.

Authentication (constant-time key compare), the bounded body read, the prompt as the model sees it
(chat template + tokenizer) with its context check, and the engine's `SamplingParams`.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass, field

import orjson
from starlette.requests import Request

from refserver.api.behaviour import Behaviour
from refserver.api.body import read_body
from refserver.api.errors import bad_request, unauthorized
from refserver.api.faults import FaultConfig, FaultInjector
from refserver.api.images import image_token_ids
from refserver.api.protocol import GenerationRequest
from refserver.api.server_metrics import ServerMetrics
from refserver.engine import AsyncEngine, SamplingParams
from refserver.text import ChatTemplate, Tokenizer


@dataclass(slots=True)
class AppConfig:
    model_name: str = "goodput-tiny"  # the first served name: the /metrics label and a request naming none
    other_names: tuple[str, ...] = ()  # more names for the same weights (adapters' names in a model mix)
    max_model_len: int = 4096  # prompt + output tokens one request may reach (the engine's context)
    api_key: str | None = field(default=None, repr=False)  # never shown in logs or reprs
    max_body_bytes: int = 4 << 20
    max_tokens_limit: int | None = None  # refuse larger max_tokens; None = only the context limits
    faults: FaultConfig = field(default_factory=FaultConfig)
    tokenize_endpoint: bool = True  # POST /tokenize (vLLM's shape): lets clients size prompts exactly
    behaviour: Behaviour = field(default_factory=Behaviour)  # reasoning and tool calls (refserver.api.behaviour)


def served_names(config: AppConfig) -> tuple[str, ...]:
    """Every name the server answers to, the first one first."""
    return (config.model_name, *config.other_names)


class ServerState:
    def __init__(self, engine: AsyncEngine, tokenizer: Tokenizer, template: ChatTemplate, config: AppConfig) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.template = template
        self.config = config
        self.metrics = ServerMetrics(
            model_name=config.model_name, max_model_len=config.max_model_len, stats=engine.stats
        )
        self.injector = FaultInjector(config.faults)
        self.created = int(time.time())

    def check_auth(self, request: Request) -> None:
        if self.config.api_key is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":  # the Messages API's clients send the key as x-api-key
            token = request.headers.get("x-api-key", "")
        expected = self.config.api_key.encode()
        if not hmac.compare_digest(token.strip().encode(), expected):
            raise unauthorized()

    async def read_json(self, request: Request) -> object:
        body = await read_body(request, self.config.max_body_bytes)
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"the request body is not valid JSON: {exc}", code="invalid_json") from None

    def prompt_ids(self, req: GenerationRequest) -> list[int]:
        if req.kind != "completion":
            assert req.messages is not None
            try:
                text = self.template.render(req.messages)
            except Exception as exc:  # a model's own template may reject a conversation (raise_exception)
                raise bad_request(f"the chat template failed on these messages: {exc}", param="messages") from None
            ids = self.tokenizer.encode(text, add_bos=self.template.add_bos)
            if req.image_urls:
                ids = [*ids, *image_token_ids(req.image_urls, self.tokenizer.vocab_size)]
            param = "messages"
        elif isinstance(req.prompt, list):
            ids, param = req.prompt, "prompt"
            bad = next((t for t in ids if t >= self.tokenizer.vocab_size), None)
            if bad is not None:
                raise bad_request(f"token id {bad} is outside the vocabulary of {self.tokenizer.vocab_size}", param=param)
        else:
            ids, param = self.tokenizer.encode(req.prompt or "", add_bos=True), "prompt"
        limit = self.config.max_model_len
        if len(ids) >= limit:
            raise bad_request(
                f"the prompt is {len(ids)} tokens; the context holds {limit} tokens (prompt + output)",
                param=param,
                code="context_length_exceeded",
            )
        return ids

    def sampling_params(self, req: GenerationRequest, prompt_len: int) -> SamplingParams:
        room = self.config.max_model_len - prompt_len
        max_tokens = room if req.max_tokens is None else req.max_tokens
        if max_tokens > room:
            raise bad_request(
                f"{req.max_tokens_param}={max_tokens} plus the prompt's {prompt_len} tokens exceeds the context of "
                f"{self.config.max_model_len} tokens",
                param=req.max_tokens_param,
                code="context_length_exceeded",
            )
        cap = self.config.max_tokens_limit
        if cap is not None and max_tokens > cap:
            name = req.max_tokens_param
            raise bad_request(f"{name}={max_tokens} exceeds this server's limit of {cap}", param=name)
        return SamplingParams(
            max_tokens=max_tokens,
            temperature=req.temperature,
            top_p=req.top_p,
            top_k=req.top_k,
            seed=req.seed,
            ignore_eos=req.ignore_eos,
            min_tokens=min(req.min_tokens, max_tokens),
            stop_token_ids=[] if req.ignore_eos else self.tokenizer.stop_token_ids,
        )
