"""Pushing a run's final metrics to a Prometheus Pushgateway, and deleting its group.

The grouping key is job + `run_id` + `worker`: every worker of every run owns its own group, so workers
never overwrite each other and a rerun never mixes with an old run. A push replaces the whole group
(HTTP PUT). Basic-auth credentials go only into the request's Authorization header: credentials written
in the URL (`http://user:pass@host:9091`) are taken out of it by `split_credentials`, and a
`PushTarget` refuses a URL that still carries them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

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
    password: str | None = field(default=None, repr=False)  # never shown
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--pushgateway must be an http(s) URL, got {_safe(self.url)!r}")
        if "@" in urlsplit(self.url).netloc:
            raise ValueError("a PushTarget URL must not carry credentials: pass username and password "
                             "(see split_credentials)")
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


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """`http://user:pass@host:9091/x` → (`http://host:9091/x`, user, pass), percent-decoded; a URL without
    credentials comes back as it is, with (None, None). ValueError for a user without a password."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"--pushgateway {_safe(url)!r} is not a valid URL: {exc}") from None
    userinfo, at, hostinfo = parts.netloc.rpartition("@")
    if not at:
        return url, None, None
    user, colon, password = userinfo.partition(":")
    if not colon:
        raise ValueError(f"--pushgateway {_safe(url)}: the URL names a user but no password; write "
                         "http://USER:PASSWORD@HOST:PORT or use --pushgateway-user and --pushgateway-password")
    return urlunsplit(parts._replace(netloc=hostinfo)), unquote(user), unquote(password)


def credentials_out_of_url(url: str, user: str | None, password: str | None) -> tuple[str, str | None, str | None]:
    """(URL without credentials, user, password) from `--pushgateway` and the user/password flags: credentials
    in the URL become the basic-auth pair; giving them both ways is a ValueError (a usage error)."""
    plain, url_user, url_password = split_credentials(url)
    if url_user is None:
        return url, user, password
    if user is not None or password is not None:
        raise ValueError(f"--pushgateway {plain}: credentials in the URL and --pushgateway-user/--pushgateway-password "
                         "both given; use one of them")
    return plain, url_user, url_password


def _safe(url: str) -> str:
    """The gateway as it may be shown in a message: without userinfo (also when the scheme is missing)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{slash}{path}"


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
