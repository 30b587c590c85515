"""The console warning for burst-delivered streams (metrics.burst): output that reached the client
all at once, whose TPOT and ITL say nothing about decoding."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import SummaryView


BURST_WARNING = 0.01  # warn when at least this share of the streams with a TPOT came in one burst


def burst_warning(summary: SummaryView) -> str | None:
    section = summary.burst_delivered
    if section is None:
        return None
    bursts, streams, share = section.requests, section.of, section.share
    if bursts is None or streams is None or share is None:
        return None
    if bursts == 0 or share < BURST_WARNING:
        return None
    below = section.tpot_below_s
    pace = f"under {below * 1e6:g} µs per token" if below is not None else "at once"
    verdict = ("; the TPOT bound counts them as not met"
               if summary.goodput is not None and summary.goodput.bound("tpot_s") is not None else "")
    return (f"WARNING: {bursts} of {streams} streams arrived in one burst (output {pace}: the server or a"
            f" proxy sent what was already generated all at once); their TPOT and ITL are ~0 and say nothing"
            f" about decoding, and their TTFT is nearly their E2E{verdict}")
