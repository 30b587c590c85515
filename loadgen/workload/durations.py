"""Durations as people type them in flags and config files (`500ms`, `30s`, `2m`, `1h`), and back.

Parsing goes through `metrics.units.parse_duration` (exact decimal arithmetic: `50ms` is the float
nearest 0.05), with minutes and hours on top for run lengths. `format_duration` writes a duration so that
parsing it gives back exactly the same float: `--print-config` output can be fed back unchanged.
"""

from __future__ import annotations

from loadgen.workload.bounds import MAX_HORIZON_S
from metrics import parse_duration


def parse_duration_flag(text: str, flag: str) -> float:
    """Seconds from a flag's value; ValueError naming the flag and the accepted forms."""
    value = text.strip()
    try:
        if value.endswith("m") and not value.endswith("ms"):
            seconds = 60 * parse_duration(value[:-1])
        elif value.endswith("h"):
            seconds = 3600 * parse_duration(value[:-1])
        else:
            seconds = parse_duration(value)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc} (or m, h for minutes, hours)") from None
    if abs(seconds) > MAX_HORIZON_S:
        raise ValueError(f"{flag} {value}: at most {MAX_HORIZON_S / 86_400:.0f} days")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest readable form that parses back to exactly `seconds`."""
    candidates = []
    if seconds >= 60 and seconds % 3600 == 0:
        candidates.append(f"{int(seconds // 3600)}h")
    if seconds >= 60 and seconds % 60 == 0:
        candidates.append(f"{int(seconds // 60)}m")
    if 0 < seconds < 1:
        candidates.append(f"{seconds * 1000:g}ms")
    candidates.append(f"{seconds:g}s")
    for text in candidates:
        try:
            if parse_duration_flag(text, "") == seconds:
                return text
        except ValueError:
            continue
    return f"{seconds!r}s"
