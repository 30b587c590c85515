"""One console paragraph with the server's own `/metrics` figures over the run, beside the client's table.

A histogram quantile is only known to lie in its bucket, and interpolating inside a wide bucket makes
up a figure (a 6 ms queue time reads "150 ms" from the [0, 300 ms] bucket). So a quantile is printed as
its bucket — `≤ 300 ms` for the first bucket, `> 60 s` for +Inf, `100–250 ms` for a wide one — and as
an interpolated figure only when the bucket is narrow (upper ≤ NARROW_BUCKET_RATIO × lower), with the
bucket beside it. The mean (sum / count) is exact and always printed. Where the server also sent the
same figure per request (summary `server`, e.g. the reference server's queue / prefill / decode times),
that exact figure replaces the histogram's.
"""

from __future__ import annotations

from typing import Any

NARROW_BUCKET_RATIO = 2.0
_HISTOGRAMS = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("e2e_s", "E2E"), ("queue_s", "queue"),
               ("prefill_s", "prefill"), ("decode_s", "decode"))
_LONG_S = 10.0  # bounds from here up are printed in seconds


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _bound(seconds: float) -> str:
    return f"{seconds:g} s" if seconds >= _LONG_S else f"{seconds * 1e3:g} ms"


def _value(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= _LONG_S else f"{seconds * 1e3:.1f} ms"


def _range(lower: float, upper: float) -> str:
    if upper >= _LONG_S:
        return f"{lower:g}–{upper:g} s"
    return f"{lower * 1e3:g}–{upper * 1e3:g} ms"


def quantile_text(value: Any, bucket: Any) -> str:
    """One histogram quantile as what the histogram actually knows about it (see the module doc)."""
    if not isinstance(bucket, list | tuple) or len(bucket) != 2 or not isinstance(value, int | float):
        return "-"
    lower, upper = bucket
    if upper is None:
        return f"> {_bound(float(lower))}"
    lower, upper = float(lower), float(upper)
    if lower <= 0:
        return f"≤ {_bound(upper)}"
    if upper <= NARROW_BUCKET_RATIO * lower:
        return f"≈{_value(float(value))} (in {_range(lower, upper)})"
    return _range(lower, upper)


def _histogram_part(label: str, hist: dict[str, Any]) -> str | None:
    if not hist.get("count"):
        return None
    mean = hist.get("mean")
    mean_text = f"mean {_ms(mean)} ms" if isinstance(mean, int | float) else "mean -"
    return (f"{label} {mean_text}, p50 {quantile_text(hist.get('p50'), hist.get('p50_bucket'))},"
            f" p99 {quantile_text(hist.get('p99'), hist.get('p99_bucket'))}")


def _exact_part(label: str, block: Any) -> str | None:
    if not isinstance(block, dict) or not block.get("count"):
        return None
    return f"{label} p50/p99 {_ms(block.get('p50'))} / {_ms(block.get('p99'))} ms (exact, per request)"


def format_server_metrics(section: dict[str, Any] | None, exact: dict[str, Any] | None = None) -> str:
    """'' when the server's metrics were not scraped; otherwise what the scrapes say, absent named.

    `exact`: the summary's `server` section (figures the server sent with each request), preferred
    over the histograms for the same quantity."""
    if not section:
        return ""
    if not section.get("available"):
        return f"server /metrics ({section.get('url')}): not available ({section.get('last_failure', 'no data')})"
    hists = section.get("histograms", {})
    lines = [f"server /metrics ({section.get('scrapes')} scrapes; histogram means exact, quantiles as their bucket):"]
    for key, label in _HISTOGRAMS:
        part = _exact_part(label, (exact or {}).get(key))
        if part is None and isinstance(hists.get(key), dict):
            part = _histogram_part(label, hists[key])
        if part is not None:
            lines.append(f"  {part}")
    load = []
    gauges = section.get("gauges", {})
    for key, label, fmt in (("running", "running", "{:.0f}"), ("waiting", "waiting", "{:.0f}"),
                            ("kv_cache_usage", "KV usage", "{:.0%}")):
        g = gauges.get(key)
        if g:
            load.append(f"{label} mean/max {fmt.format(g['mean'])}/{fmt.format(g['max'])}")
    rate = section.get("prefix_cache_hit_rate")
    if rate is not None:
        load.append(f"prefix-cache hit rate {rate:.1%}")
    if load:
        lines.append("  " + "  ".join(load))
    if len(lines) == 1:
        lines[0] += " no vLLM-named metrics"
    if section.get("absent"):
        lines.append("  absent on the server: " + ", ".join(section["absent"]))
    return "\n".join(lines)
