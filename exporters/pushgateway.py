"""Pushing a run's final metrics to a Prometheus Pushgateway, and deleting its group.

The grouping key is job + `run_id` + `worker`: every worker of every run owns its own group, so workers
never overwrite each other and a rerun never mixes with an old run. A push replaces the whole group
(HTTP PUT). Basic-auth credentials go only into the request's Authorization header.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, delete_from_gateway, push_to_gateway
from prometheus_client.exposition import basic_auth_handler, default_handler

Handler = Callable[..., Callable[[], None]]


@dataclass(frozen=True, slots=True)
class PushTarget:
    url: str
    job: str = "goodput"
    run_id: str = ""
    worker: int = 0
    username: str | None = None
    password: str | None = None
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--pushgateway must be an http(s) URL, got {self.url!r}")
        if not self.job:
            raise ValueError("--pushgateway-job must not be empty")
        if (self.username is None) != (self.password is None):
            raise ValueError("Pushgateway basic auth needs both a user and a password")

    def grouping_key(self) -> dict[str, str]:
        return {"run_id": self.run_id or "unnamed", "worker": str(self.worker)}

    def handler(self) -> Handler:
        if self.username is None:
            return default_handler
        user, password = self.username, self.password or ""

        def with_auth(url: str, method: str, timeout: float | None, headers: list[tuple[str, str]],
                      data: bytes) -> Callable[[], None]:
            return basic_auth_handler(url, method, timeout, headers, data, user, password)

        return with_auth


def _safe(url: str) -> str:
    """The gateway as it may be shown in a message: without userinfo."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"


def push(target: PushTarget, registry: CollectorRegistry) -> None:
    """Replace the run's group on the gateway with `registry`. Raises RuntimeError with a clear message."""
    try:
        push_to_gateway(target.url, job=target.job, registry=registry, grouping_key=target.grouping_key(),
                        timeout=target.timeout_s, handler=target.handler())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"push to Pushgateway {_safe(target.url)} failed: {_reason(exc)}") from None


def delete(target: PushTarget) -> None:
    """Delete the run's group from the gateway."""
    try:
        delete_from_gateway(target.url, job=target.job, grouping_key=target.grouping_key(),
                            timeout=target.timeout_s, handler=target.handler())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"delete on Pushgateway {_safe(target.url)} failed: {_reason(exc)}") from None


def _reason(exc: Any) -> str:
    return str(getattr(exc, "reason", None) or exc)


class PushLoop:
    """Pushes `registry` every `interval_s` in a thread while a run lasts (batch runs that Prometheus
    cannot scrape); failures are kept, not raised, so a flaky gateway never stops a load test."""

    def __init__(self, target: PushTarget, registry: CollectorRegistry, interval_s: float) -> None:
        import threading

        if interval_s <= 0:
            raise ValueError(f"push interval must be > 0, got {interval_s}")
        self.target = target
        self.registry = registry
        self.interval_s = interval_s
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="goodput-push", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                push(self.target, self.registry)
            except RuntimeError as exc:
                self.failures.append(str(exc))

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
