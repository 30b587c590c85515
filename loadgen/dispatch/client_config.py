"""The streaming client's configuration from the run spec and the secrets it may not hold: what the run's own
process and every worker (a local process, a Ray actor) build their client from."""

from __future__ import annotations

import json

from loadgen.redact import secret_values
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.tools import tool_options
from loadgen.types import ClientConfig
from metrics.results import JsonObject, json_object


def client_config_of(spec: RunSpec, secrets: Secrets, *, base_url: str, model: str) -> ClientConfig:
    """The client's configuration: the spec's request options and the secrets, for `base_url` and `model`."""
    r, t = spec.request, spec.timeouts
    # The spec holds the user's --extra-body as the canonical text of a JSON object (checked where it was given).
    extra: JsonObject = json_object(json.loads(r.extra_body)) if r.extra_body else {}
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
