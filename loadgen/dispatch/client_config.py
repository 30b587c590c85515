"""The streaming client's configuration from the run spec and the secrets it may not hold: what the run's own
process and every worker (a local process, a Ray actor) build their client from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from loadgen.redact import secret_values
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.tools import tool_options
from loadgen.types import ClientConfig

if TYPE_CHECKING:
    from metrics.results import JsonObject


def client_config_of(spec: RunSpec, secrets: Secrets, *, base_url: str, model: str) -> ClientConfig:
    """The client's configuration: the spec's request options and the secrets, for `base_url` and `model`."""
    r, t = spec.request, spec.timeouts
    extra = extra_body_of(r.extra_body)
    if r.min_tokens is not None:
        extra = {"min_tokens": r.min_tokens, **extra}
    headers = dict(r.headers)
    headers.update(secrets.headers)
    return ClientConfig(base_url=base_url, model=model, endpoint=spec.target.endpoint,  # type: ignore[arg-type]
                        api_key=secrets.api_key,
                        timeouts=t,
                        max_connections=r.max_connections, spare_connection=spec.load.arrival.open_loop,
                        include_usage=r.usage,
                        continuous_usage_stats=r.continuous_usage,
                        ignore_eos=r.resolved_ignore_eos(spec.target.embedded), extra_body=extra,
                        extra_headers=headers, temperature=r.temperature,
                        token_counter=spec.workload.token_counter(spec.target.embedded),
                        redact=secret_values(secrets), **tool_options(r.tool_list, r.tool_choice))


def extra_body_of(text: str | None) -> JsonObject:
    """The spec's `--extra-body` text as the JSON object it holds ({} for none); ValueError when it holds another
    JSON value (the flag refuses one where it is given; a spec made otherwise is checked here, once per process)."""
    if not text:
        return {}
    extra = json.loads(text)
    if not isinstance(extra, dict):
        raise ValueError(f"--extra-body must be a JSON object, not {type(extra).__name__}")
    return extra
