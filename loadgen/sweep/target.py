"""The server every point of a sweep or capacity search is sent to.

With `--url`, the points go there. Without it, the bundled reference server is started ONCE for the
whole sweep and every point is pointed at it: its caches and warm state carry from point to point (as
they would on a real deployment under changing load), and its start-up is not paid per point.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from loadgen.run import embedded_server
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from metrics.results import ServerInfo


@dataclass(frozen=True, slots=True)
class SharedServer:
    url: str | None  # the embedded server's URL, which every point's spec gets; None: the spec's own --url
    info: ServerInfo  # what sweep.json / capacity.json say about it


@contextlib.contextmanager
def shared_server(spec: RunSpec, secrets: Secrets) -> Iterator[SharedServer]:
    """Start the embedded server when the spec has no --url (EmbeddedServerError when it cannot), and stop
    it afterwards, also on failure or interrupt."""
    target = spec.target
    if target.url is not None:
        yield SharedServer(None, ServerInfo(target.url, embedded=False))
        return
    with embedded_server([*target.server_args, *secrets.server_args]) as url:
        yield SharedServer(url, ServerInfo(url, embedded=True, server_args=tuple(target.server_args),
                                           started="once, for every point"))
