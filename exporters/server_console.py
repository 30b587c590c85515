"""One console paragraph with the server's own `/metrics` figures over the run, beside the client's table."""

from __future__ import annotations

from typing import Any


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _pair(block: dict[str, Any] | None) -> str | None:
    if not block or not block.get("count"):
        return None
    return f"{_ms(block.get('p50'))} / {_ms(block.get('p99'))}"


def format_server_metrics(section: dict[str, Any] | None) -> str:
    """'' when the server's metrics were not scraped; otherwise what the scrapes say, absent named."""
    if not section:
        return ""
    if not section.get("available"):
        return f"server /metrics ({section.get('url')}): not available ({section.get('last_failure', 'no data')})"
    hists = section.get("histograms", {})
    parts = []
    for key, label in (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("e2e_s", "E2E"), ("queue_s", "queue")):
        pair = _pair(hists.get(key))
        if pair is not None:
            parts.append(f"{label} p50/p99 {pair} ms")
    gauges = section.get("gauges", {})
    for key, label, fmt in (("running", "running", "{:.0f}"), ("waiting", "waiting", "{:.0f}"),
                            ("kv_cache_usage", "KV usage", "{:.0%}")):
        g = gauges.get(key)
        if g:
            parts.append(f"{label} mean/max {fmt.format(g['mean'])}/{fmt.format(g['max'])}")
    rate = section.get("prefix_cache_hit_rate")
    if rate is not None:
        parts.append(f"prefix-cache hit rate {rate:.1%}")
    lines = [f"server /metrics ({section.get('scrapes')} scrapes, histogram quantiles interpolated): "
             + ("  ".join(parts) if parts else "no vLLM-named metrics")]
    if section.get("absent"):
        lines.append("  absent on the server: " + ", ".join(section["absent"]))
    return "\n".join(lines)
