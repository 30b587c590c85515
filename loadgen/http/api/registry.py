"""The seam between the client and the streaming APIs it speaks: one `Api` per API, registered by name.

An `Api` owns everything that differs between APIs: the URL path under `/v1`, the streamed request body
built from a work item, the headers (fixed ones and how the key is sent), a fresh stream decoder per
request, and the two calls prompt sizing makes (a non-streamed one-token request, and its prompt count).
The client, the prompt-sizing probes, calibration and `--endpoint` all ask the registry; adding an API is
one module with its `API`, registered in `loadgen.http.api`, plus its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from loadgen.http.chunks import ChunkAccumulator
from loadgen.types import ClientConfig, Message, WorkItem


class ProbeAnswer(TypedDict, total=False):
    """A non-streamed answer's JSON object, as the server sent it: its `usage` is checked where it is read."""

    usage: object


class ProbeBody(TypedDict):
    """A non-streamed one-token request (each API's probe body adds its prompt and its token limit)."""

    model: str
    stream: bool


def bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


@dataclass(frozen=True, slots=True)
class Api:
    name: str
    path: str  # after `/v1/`
    build: Callable[[WorkItem, ClientConfig], dict[str, Any]]  # the streamed request's JSON body
    decoder: Callable[[], ChunkAccumulator]  # a fresh stream decoder for one request
    # A non-streamed request for one output token (calibration): (model, chat messages) → body.
    probe_body: Callable[[str, list[Message]], ProbeBody]
    probe_prompt_tokens: Callable[[ProbeAnswer], int | None]  # its answer → the prompt's tokens
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with every request
    auth: Callable[[str], dict[str, str]] = bearer  # the API key's header(s)
    chat_template: bool = True  # the server renders the prompt with the model's chat template
    tools: bool = True  # the API takes a tool list


_APIS: dict[str, Api] = {}


def register(api: Api) -> Api:
    _APIS[api.name] = api
    return api


def api_for(name: str) -> Api:
    """The API called `name`; ValueError naming the known ones otherwise."""
    try:
        return _APIS[name]
    except KeyError:
        raise ValueError(f"unknown endpoint {name!r}; expected one of {', '.join(_APIS)}") from None


def api_names() -> tuple[str, ...]:
    return tuple(_APIS)
