"""The model a run requests: `--model`, else the first entry of the server's `GET /v1/models`.

With `--model` nothing is listed (a server that never answers the listing cannot hold the run up), except
on the embedded reference server, which has just answered `/health` and whose sim engine announces
there what it simulates (loadgen.run.roofline). The listing waits at most `MODELS_TIMEOUT_S`, says so
when it takes longer than a moment (loadgen.run.startup), and fails as one line with the hint that fits.

A `--model` mix of several models (loadgen.workload.models) is checked model by model (`check_mix`): the
run's first request must not be where a misspelt adapter name is found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import httpx

from loadgen.http import merge_body, needs_tls, public_url
from loadgen.http.api import endpoint_url
from loadgen.http.send import server_message
from loadgen.run.roofline import RooflineSpecJSON, spec_from_models_entry
from loadgen.run.startup import announced, http_status_line, unreachable_line
from loadgen.types import ClientConfig

if TYPE_CHECKING:
    from metrics.results import Json

MODELS_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class ServedModel:
    """One entry of `GET /v1/models`, as read once (`list_models`): what the run uses of it."""

    id: str
    max_model_len: int | None = None  # vLLM's (and the reference server's) context length; None: not said
    # The roofline spec a sim-engine target announces (its `"engine": "sim"`): run.json's resolved.roofline.
    sim_roofline: RooflineSpecJSON | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Json]) -> ServedModel:
        """The entry as the server sent it (a JSON object with an `id`)."""
        value = entry.get("max_model_len")
        length = value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
        return cls(id=str(entry["id"]), max_model_len=length, sim_roofline=spec_from_models_entry(entry))


class _ProbeBody(TypedDict, total=False):
    """`check_mix`'s one-token request: chat's (messages) or completions' (prompt)."""

    model: str
    max_tokens: int
    stream: bool
    prompt: str
    messages: list[dict[str, str]]


def models_url(base_url: str) -> str:
    """`http://host:8000[/prefix][/v1]` → `http://host:8000[/prefix]/v1/models`."""
    return endpoint_url(base_url, "completions").removesuffix("completions") + "models"


def list_models(config: ClientConfig, *, quiet: bool = False, timeout_s: float | None = None) -> list[ServedModel]:
    """The server's `GET /v1/models` entries; RuntimeError with one line when it cannot say."""
    timeout_s = MODELS_TIMEOUT_S if timeout_s is None else timeout_s
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    url = models_url(config.base_url)
    shown = public_url(url)
    try:
        with announced(f"GET {shown}", timeout_s, quiet=quiet):
            resp = httpx.get(url, headers=headers, timeout=timeout_s, verify=needs_tls(url))
    except httpx.HTTPError as exc:
        raise RuntimeError(unreachable_line(shown, exc, timeout_s=timeout_s)) from None
    if resp.status_code != 200:
        raise RuntimeError(http_status_line(shown, resp.status_code))
    try:
        entries = resp.json()["data"]
    except (ValueError, KeyError, TypeError):
        entries = None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "id" in e for e in entries):
        raise RuntimeError(f"GET {shown} answered, but not as an OpenAI-compatible server does (no JSON list "
                           "of models): is --url an OpenAI-compatible server? (one that lists no models needs --model)")
    if not entries:
        raise RuntimeError(f"GET {shown} lists no model: pass --model")
    return [ServedModel.from_entry(e) for e in entries]


class ModelNotServed(RuntimeError):
    """A model of a `--model` mix was refused where another of the mix was served (exit 1, nothing sent)."""


def check_mix(config: ClientConfig, names: tuple[str, ...], *, quiet: bool = False,
              timeout_s: float | None = None) -> None:
    """Each model of a mix asked once (`max_tokens: 1`, not streamed, on the run's endpoint): when the server
    answers for one model and refuses another with HTTP 4xx, the only difference is the name, so the run
    stops here with the server's own words. A server that refuses them all, or cannot be reached, is left to
    the run itself (as with one model: its sizing line and records say what the server said)."""
    timeout_s = MODELS_TIMEOUT_S if timeout_s is None else timeout_s
    url = endpoint_url(config.base_url, config.endpoint)
    headers = dict(config.extra_headers)
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    refused: list[tuple[str, int, str]] = []
    served = False
    with announced(f"POST {public_url(url)} for each of the {len(names)} models", timeout_s * len(names),
                   quiet=quiet), httpx.Client(headers=headers, timeout=timeout_s, verify=needs_tls(url),
                                             trust_env=False) as client:
        for name in names:
            body: _ProbeBody = {"model": name, "max_tokens": 1, "stream": False}
            if config.endpoint == "completions":
                body["prompt"] = "Hello"
            else:
                body["messages"] = [{"role": "user", "content": "Hello"}]
            try:
                resp = client.post(url, json=merge_body(config.extra_body, dict(body)))
            except httpx.HTTPError:
                return
            if resp.status_code == 200:
                served = True
            elif 400 <= resp.status_code < 500 and resp.status_code != 429:
                refused.append((name, resp.status_code, server_message(resp)))
    if served and refused:
        name, status, said = refused[0]
        more = f" ({len(refused) - 1} more of the mix refused too)" if len(refused) > 1 else ""
        raise ModelNotServed(f"--model: the server refused a request for {name!r} and answered one for another "
                             f"model of the mix: HTTP {status}" + (f": {said}" if said else "") + more)
