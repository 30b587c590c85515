"""The console warning for burst-delivered streams (metrics.burst): output that reached the client
all at once, whose TPOT and ITL say nothing about decoding."""

from __future__ import annotations

from typing import Any

BURST_WARNING = 0.01  # warn when at least this share of the streams with a TPOT came in one burst


def burst_warning(summary: dict[str, Any]) -> str | None:
    section = summary.get("burst_delivered")
    if not isinstance(section, dict):
        return None
    bursts, streams, share = section.get("requests"), section.get("of"), section.get("share")
    if not (isinstance(bursts, int) and isinstance(streams, int) and isinstance(share, int | float)):
        return None
    if bursts == 0 or share < BURST_WARNING:
        return None
    below = section.get("tpot_below_s")
    pace = f"under {below * 1e6:g} µs per token" if isinstance(below, int | float) else "at once"
    slo = (summary.get("goodput") or {}).get("slo") or {}
    verdict = "; the TPOT bound counts them as not met" if slo.get("tpot_s") is not None else ""
    return (f"WARNING: {bursts} of {streams} streams arrived in one burst (output {pace}: the server or a"
            f" proxy sent what was already generated all at once); their TPOT and ITL are ~0 and say nothing"
            f" about decoding, and their TTFT is nearly their E2E{verdict}")
