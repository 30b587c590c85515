"""The model a run requests: `--model`, else the first entry of the server's `GET /v1/models`.

With `--model` nothing is listed (a server that never answers the listing cannot hold the run up), except
on the embedded reference server, which has just answered `/health` and whose sim engine announces
there what it simulates (loadgen.run.roofline). The listing waits at most `MODELS_TIMEOUT_S`, says so
when it takes longer than a moment (loadgen.run.startup), and fails as one line with the hint that fits.
"""

from __future__ import annotations

from typing import Any

import httpx

from loadgen.http.payload import endpoint_url, needs_tls, public_url
from loadgen.run.startup import announced, http_status_line, unreachable_line
from loadgen.types import ClientConfig

MODELS_TIMEOUT_S = 10.0


def models_url(base_url: str) -> str:
    """`http://host:8000[/prefix][/v1]` → `http://host:8000[/prefix]/v1/models`."""
    return endpoint_url(base_url, "completions").removesuffix("completions") + "models"


def list_models(config: ClientConfig, *, quiet: bool = False, timeout_s: float | None = None) -> list[dict[str, Any]]:
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
    return list(entries)
