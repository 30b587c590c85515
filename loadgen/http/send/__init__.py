"""Sending: the streaming client (one request in, one record out) and the prompt-sizing probes, above the
API modules they look up (loadgen.http.api) and the parts they build on (loadgen.http).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.http.send.client import StreamingClient
    from loadgen.http.send.probe import (
        ProbeFailed,
        ProbesRefused,
        ServerSilent,
        ServerUnreachable,
        calibrate,
        learn_table,
        server_message,
        tokenize_url,
    )

__all__ = [
    "ProbeFailed", "ProbesRefused", "ServerSilent", "ServerUnreachable", "StreamingClient", "calibrate",
    "learn_table", "server_message", "tokenize_url",
]

__getattr__ = lazy_names(__name__, {
    "StreamingClient": "client",
    "ProbeFailed": "probe", "ProbesRefused": "probe", "ServerSilent": "probe", "ServerUnreachable": "probe",
    "calibrate": "probe", "learn_table": "probe", "server_message": "probe", "tokenize_url": "probe",
})
