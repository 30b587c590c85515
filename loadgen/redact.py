"""Credentials out of server text: what goodput stores (records.jsonl, records.parquet, summaries) or prints
may quote a server, and a server may quote the credential it was sent ("Incorrect API key provided: sk-…").

goodput knows every credential of a run (`loadgen.secrets.Secrets`: the API key, the Pushgateway
password, secret header values, the password in a URL), so it replaces each one with `[redacted]` in any
server text before that text is kept or shown. The streaming client scrubs the error messages of its records
with the credentials it sends (`ClientConfig`); the run remembers the rest once (`remember`) for the lines it
prints (`redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from loadgen.secrets import Secrets

REDACTED = "[redacted]"
SUBSTRING_MIN = 8  # a credential this long is redacted wherever it appears; a shorter one only as a whole word
TAIL_MIN = 4  # a message cut short ("…") that ends in this much of a credential loses that tail too

_remembered: tuple[str, ...] = ()


def credential_parts(values: Iterable[str]) -> tuple[str, ...]:
    """The strings to look for: each value, and the credential of an `Authorization`-style value
    ("Bearer sk-1" → also "sk-1"; "Basic dXNlcjpw" → also "dXNlcjpw"), longest first."""
    out: set[str] = set()
    for value in values:
        value = value.strip()
        if not value:
            continue
        out.add(value)
        scheme, _, credential = value.partition(" ")
        if credential.strip() and scheme.isalpha():
            out.add(credential.strip())
    return tuple(sorted(out, key=lambda v: (-len(v), v)))


def secret_values(secrets: Secrets) -> tuple[str, ...]:
    """Every credential of a run: the secrets' values and the password of a URL given with one."""
    values = list(secrets.values())
    for arg in secrets.server_args:  # `--api-key=K`: K alone is what a server would quote
        values.append(arg.partition("=")[2] if arg.startswith("--") else arg)
    if secrets.url:
        try:
            password = urlsplit(secrets.url).password
        except ValueError:
            password = None
        if password:
            values.append(password)
    return tuple(v for v in values if v and not v.startswith("--"))


def remember(values: Iterable[str]) -> None:
    """The run's credentials, for `redact` without an explicit list (set once, before the run starts)."""
    global _remembered
    _remembered = credential_parts([*_remembered, *values])


def redact(text: str, values: Iterable[str] | None = None) -> str:
    """`text` with every credential of `values` (default: those remembered) replaced by `[redacted]`."""
    parts = _remembered if values is None else credential_parts(values)
    if not parts or not text:
        return text
    return _pattern(parts).sub(REDACTED, text)


@lru_cache(maxsize=16)
def _pattern(parts: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = []
    for part in parts:
        escaped = re.escape(part)
        if len(part) >= SUBSTRING_MIN:
            alternatives.append(escaped)
        else:  # "k" must not eat every k of a message: a short credential only as a word of its own
            alternatives.append(rf"(?<![\w-]){escaped}(?![\w-])")
        # A message bounded with "…" may have cut a credential: its start, right before the cut, goes too.
        for n in range(len(part) - 1, TAIL_MIN - 1, -1):
            alternatives.append(rf"{re.escape(part[:n])}(?=…$)")
    return re.compile("|".join(alternatives))
