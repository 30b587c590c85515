"""Shared value types of the load generator: what a workload yields and how the client is configured, and
the JSON shapes every part of it passes along (OpenAI's chat tool list and tool choice; `loadgen.tools`
checks a tool list once, where it is read)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NotRequired, Required, TypedDict

if TYPE_CHECKING:
    from metrics.results import JsonObject

Endpoint = Literal["chat", "completions", "responses", "messages"]


class ImageURL(TypedDict):
    url: str  # a data URL (the image inline) or an http(s) URL the server fetches
    detail: NotRequired[str]


class ContentPart(TypedDict, total=False):
    """A chat content part: `{"type": "text", "text"}` or `{"type": "image_url", "image_url": {"url"}}` (a
    dataset's `image_url` may be the URL alone; its other kinds of part are sent as they are)."""

    type: Required[str]
    text: str
    image_url: ImageURL | str


class ToolCallFunction(TypedDict):
    name: str
    arguments: str  # JSON text


class ToolCall(TypedDict):
    """A tool call in an assistant message (as streamed, or as a dataset's history gives it)."""

    id: str
    type: NotRequired[str]  # "function"
    function: ToolCallFunction


class Message(TypedDict):
    """A chat message, as a workload makes it or a dataset gives it (checked where the file is read)."""

    role: str
    content: NotRequired[str | list[ContentPart] | None]
    tool_calls: NotRequired[list[ToolCall]]
    tool_call_id: NotRequired[str]


class ToolFunction(TypedDict):
    """A tool's function as OpenAI's chat API takes it (and as `--tools` and a dataset row give it)."""

    name: str
    description: NotRequired[str]
    parameters: NotRequired[JsonObject]  # the user's JSON schema, sent as given


class Tool(TypedDict):
    type: Literal["function"]
    function: ToolFunction


class NamedChoice(TypedDict):
    """`--tool-choice NAME`: that tool must be called (each API sends it in its own form)."""

    type: Literal["function"]
    name: str


ToolChoice = Literal["auto", "required", "none"] | NamedChoice


# What a workload says of itself in run.json (`workload`): each kind of workload fills the keys that describe
# it, each wrapper adds its own (`images`, `cache_bust`, `cancel`, `models`), in the file's key order.


class PrefixDescription(TypedDict):
    groups: int
    tokens: int
    weights: list[float] | None


class ImagesDescription(TypedDict):
    count: str
    size: str
    format: str
    pool: int


class CancelDescription(TypedDict):
    rate: float
    after: str


class WorkloadDescription(TypedDict, total=False):
    kind: str  # synthetic | jsonl | sharegpt | trace | sessions
    source: str  # sessions: synthetic or the dataset's format
    format: str  # a trace's
    path: str
    prompt_tokens: str  # length distributions, as given
    output_tokens: str
    token_counter: str
    chat_template_tokens: int | None
    prefix: PrefixDescription
    requests_in_file: int
    requests: int
    block_tokens: int
    conversations_in_file: int
    turns_in_file: int
    turns: str
    think_time: str
    images: ImagesDescription
    cache_bust: bool
    cancel: CancelDescription
    models: dict[str, float]  # each model's share of the mix

@dataclass(slots=True)
class WorkItem:
    """One request to send, as the workload made it (before any timing)."""

    messages: list[Message] | None = None  # chat endpoint
    prompt: str | None = None  # completions endpoint (or flattened messages)
    max_tokens: int | None = None
    min_tokens: int | None = None
    prompt_tokens_target: int | None = None
    # The run's token counter applied to the prompt as built (system prompt / shared prefix included),
    # and the chat template's estimated overhead for these messages (None: unknown). When the server
    # reports no usage, the client records their sum (chat; the count alone for completions) as the
    # prompt tokens, marked as an estimate.
    prompt_tokens_counted: int | None = None
    template_tokens: int | None = None
    tags: dict[str, str] = field(default_factory=dict)
    model: str | None = None  # this request's model (a --model mix or a dataset/trace row); None: the run's
    tools: list[Tool] | None = None  # OpenAI-style tool list; each API sends it in its own form
    tool_choice: ToolChoice | None = None
    # Images ride in `messages` as chat content parts ({"type": "image_url", "image_url": {"url": data}});
    # the Responses and Messages bodies convert them. These are their totals, recorded with the request.
    images: int = 0
    image_pixels: int = 0
    image_bytes: int = 0
    # A planned cancellation: close the stream this long after the send, or after this many output tokens.
    cancel_after_s: float | None = None
    cancel_after_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Every limit explicit (httpx's 5 s default would corrupt a load test). None = no limit."""

    connect_s: float | None = 10.0
    first_byte_s: float | None = 600.0  # request written → response headers
    between_chunks_s: float | None = 120.0  # any two reads of the body, the first included
    total_s: float | None = 1800.0  # request written → stream closed

    def __post_init__(self) -> None:
        for name, flag in (("connect_s", "--timeout-connect"), ("first_byte_s", "--timeout-first-byte"),
                           ("between_chunks_s", "--timeout-between-chunks"), ("total_s", "--timeout-total")):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{flag} must be greater than 0, got {value}")


@dataclass(slots=True)
class ClientConfig:
    base_url: str  # e.g. http://127.0.0.1:8000 (with or without /v1)
    model: str
    endpoint: Endpoint = "chat"
    api_key: str | None = field(default=None, repr=False)  # never written to records, summaries or logs
    timeouts: Timeouts = field(default_factory=Timeouts)
    max_connections: int = 10_000
    # Keep one connection ready beyond those in use (loadgen.http.transport `spare`): an open-loop run's requests
    # then seldom connect between their wake-up and their send, where a connect would count as dispatch lag.
    spare_connection: bool = False
    include_usage: bool = True
    continuous_usage_stats: bool = True
    ignore_eos: bool = False
    extra_body: JsonObject = field(default_factory=dict)  # --extra-body: the user's JSON object, sent as given
    extra_headers: dict[str, str] = field(default_factory=dict, repr=False)  # may hold secret header values
    temperature: float | None = None
    # The run's token counter (`--tokenizer`: words | bytes | path to tokenizer.json): used only when the
    # server does not count output tokens per chunk, to split or estimate them from the received text.
    # None: no counter (output estimated one token per streamed event, final usage split by text length).
    token_counter: str | None = None
    # Credentials the client does not send itself (the Pushgateway password, a URL's password): scrubbed from
    # server text it records, as the API key and secret header values are (loadgen.redact).
    redact: tuple[str, ...] = field(default=(), repr=False)
    # `--tools` / `--tool-choice`: sent with every request whose work item carries no tools of its own.
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
