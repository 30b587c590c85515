"""Text from a user's file, made safe to print in an error line.

A trace or dataset may hold any bytes: an ANSI colour or window-title escape, a NUL, a bidirectional
override or a line break in a key, a column name or a value would act on the terminal (or split the one
error line) if echoed as it is. `printable` escapes every character Python does not call printable
(`\\x1b`, `\\x00`, `\\u202e`, `\\n`), keeps the rest, and shortens what is long.
"""

from __future__ import annotations

from typing import Any

MAX_SHOWN_CHARS = 80


def printable(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` with its unprintable characters escaped, at most about `limit` characters."""
    cut = len(text) > limit
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text[:limit])
    return out + "…" if cut else out


def quoted(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A value from a file as an error line shows it: `repr`, which escapes what is unprintable, shortened."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
