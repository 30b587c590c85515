"""What a run needs but must never write down: credentials. They travel beside the `RunSpec`, never in it,
so nothing that stores or prints a spec (run.json, `--print-config`, a sweep's points) can leak them."""

from __future__ import annotations

from dataclasses import dataclass

# Headers whose values are credentials: kept out of the spec, only their names are recorded.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie"})


def is_secret_header(name: str) -> bool:
    lowered = name.strip().lower()
    return lowered in SECRET_HEADERS or "token" in lowered or "secret" in lowered or "key" in lowered


@dataclass(frozen=True, slots=True)
class Secrets:
    api_key: str | None = None
    pushgateway_password: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # secret headers with their values
    url: str | None = None  # the target URL as given, when it carries credentials or a query
    server_args: tuple[str, ...] = ()  # embedded-server arguments that carry a credential (--api-key)

    def __repr__(self) -> str:  # never print a value, even in a traceback
        given = [name for name in ("api_key", "pushgateway_password") if getattr(self, name)]
        given += [f"header {name}" for name, _ in self.headers]
        given += ["url credentials"] if self.url else []
        given += ["server arguments"] if self.server_args else []
        return f"Secrets({', '.join(given) or 'none'})"

    def values(self) -> list[str]:
        """Every secret value, for tests and redaction."""
        out = [v for v in (self.api_key, self.pushgateway_password) if v]
        return out + [v for _, v in self.headers if v] + list(self.server_args)


# Flags of the embedded reference server whose value is a credential.
SECRET_SERVER_FLAGS = ("--api-key",)


def split_server_args(args: list[str]) -> tuple[list[str], list[str]]:
    """(plain, secret) embedded-server arguments: `--api-key=K` and `--api-key K` are secret."""
    plain: list[str] = []
    secret: list[str] = []
    take_next = False
    for arg in args:
        if take_next:
            secret.append(arg)
            take_next = False
        elif arg in SECRET_SERVER_FLAGS:
            secret.append(arg)
            take_next = True
        elif arg.startswith(tuple(f"{flag}=" for flag in SECRET_SERVER_FLAGS)):
            secret.append(arg)
        else:
            plain.append(arg)
    return plain, secret
