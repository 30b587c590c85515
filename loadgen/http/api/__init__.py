"""The streaming APIs the client speaks, one module each, found by name (`api_for`, `api_names`)."""

from __future__ import annotations

from loadgen.http.api import chat, completions, messages, responses
from loadgen.http.api.registry import Api, ProbeAnswer, api_for, api_names, register
from loadgen.http.api.url import endpoint_url

__all__ = ["Api", "ProbeAnswer", "api_for", "api_names", "endpoint_url", "register"]

for _module in (chat, completions, responses, messages):  # the order `--endpoint` lists them in
    register(_module.API)
