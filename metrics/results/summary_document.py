"""summary.json as metrics.summary.build makes it: typed sections (the views of metrics.results.summary_*),
written in one step (`to_json`) to the document, key for key as it has always been (schema SUMMARY_SCHEMA_VERSION).

`run` is run.json as the run wrote it (metrics.results.documents), which the summary repeats with the
measurement window, the percentile method and the client's saturation added. The run adds `input`,
`roofline`, `gpu` and `server.prometheus` to the written document from their own JSON (loadgen.run).
"""

from __future__ import annotations

from collections.abc import Mapping

from metrics.results.frozen_view import frozen
from metrics.results.summary_goodput import Goodput, Reasoning, ToolCalls
from metrics.results.summary_parse import Json, JsonObject
from metrics.results.summary_requests import Requests, Throughput
from metrics.results.summary_run import Saturation, Window
from metrics.results.summary_server import Server
from metrics.results.summary_sessions import Sessions, Stalls
from metrics.results.summary_stats import Stats
from metrics.results.summary_tokens import Tokens
from metrics.results.summary_view import Bucket
from metrics.results.versions import SUMMARY_SCHEMA_VERSION


@frozen
class SummaryDocument:
    run: Mapping[str, Json]
    window: Window
    percentile_method: str
    client_saturation: Saturation
    requests: Requests
    throughput: Throughput
    latency: dict[str, Stats]
    stalls: Stalls
    tokens: Tokens
    burst_delivered: Mapping[str, Json]  # as metrics.burst makes it
    goodput: Goodput
    buckets: tuple[Bucket, ...]
    server: Server
    reasoning: Reasoning | None = None  # with tool_calls, or neither (metrics.summary.answers)
    tool_calls: ToolCalls | None = None
    sessions: Sessions | None = None  # runs with conversations only

    def to_json(self) -> JsonObject:
        run: JsonObject = dict(self.run)
        run.update(window=self.window.to_json(), percentile_method=self.percentile_method,
                   client_saturated=self.client_saturation.saturated,
                   client_saturation=self.client_saturation.to_json())
        out: JsonObject = {
            "schema_version": SUMMARY_SCHEMA_VERSION,
            "run": run,
            "requests": self.requests.to_json(),
            "throughput": self.throughput.to_json(),
            "latency": {name: block.to_json() for name, block in self.latency.items()},
            "stalls": self.stalls.to_json(),
            "tokens": self.tokens.to_json(),
            "burst_delivered": dict(self.burst_delivered),
            "goodput": self.goodput.to_json(),
            "buckets": [bucket.to_json() for bucket in self.buckets],
            "server": self.server.to_json(),
        }
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning.to_json()
        if self.tool_calls is not None:
            out["tool_calls"] = self.tool_calls.to_json()
        if self.sessions is not None:
            out["sessions"] = self.sessions.to_json()
        return out
