"""The console's one server section: the server's own figures over the run, whichever way they came.

Two sources describe the same quantities: figures the server sent with each request (summary `server`:
TTFT and ITL from its chunk stamps, the reference server's queue / prefill / decode times), exact; and
its Prometheus `/metrics` histograms scraped before and after the run (`server.prometheus`), which only
know each quantile's bucket. Each quantity is printed once, from the exact source when there is one.

A histogram quantile is printed as the range the data allows (summary `p50_range`: its bucket, cut by
what the sum and count allow; interpolating inside a wide bucket makes up a figure, a 6 ms queue time
reads "150 ms" from vLLM's [0, 300 ms] bucket): `≤ 300 ms` for the first bucket, `> 60 s` for +Inf,
`100–250 ms` for a wide one, and an interpolated figure only when the range is narrow
(upper ≤ NARROW_BUCKET_RATIO × lower), with the range beside it. The mean (sum / count) is exact and
always printed. `goodput run` and `goodput report` print the same section from summary.json, each line
within WIDTH columns.
"""

from __future__ import annotations

from typing import Any

NARROW_BUCKET_RATIO = 2.0
_HISTOGRAMS = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("e2e_s", "E2E"), ("queue_s", "queue"),
               ("prefill_s", "prefill"), ("decode_s", "decode"))
_LONG_S = 10.0  # bounds from here up are printed in seconds


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _short(value: float) -> str:
    """Three significant figures, never in exponent form (a bound from the sum is not a round number)."""
    return f"{value:.0f}" if value >= 100 else f"{float(f'{value:.3g}'):g}"


def _bound(seconds: float) -> str:
    return f"{_short(seconds)} s" if seconds >= _LONG_S else f"{_short(seconds * 1e3)} ms"


def _value(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= _LONG_S else f"{seconds * 1e3:.1f} ms"


def _range(lower: float, upper: float) -> str:
    if upper >= _LONG_S:
        return f"{_short(lower)}–{_short(upper)} s"
    return f"{_short(lower * 1e3)}–{_short(upper * 1e3)} ms"


def quantile_text(value: Any, bucket: Any) -> str:
    """One histogram quantile as what the histogram actually knows about it (see the module doc): `bucket`
    is the range the data allows (summary `p50_range`: the bucket cut by what the sum and count allow), or
    the bare bucket (`p50_bucket`) in a summary written before ranges were."""
    if not isinstance(bucket, list | tuple) or len(bucket) != 2 or not isinstance(value, int | float):
        return "-"
    lower, upper = bucket
    if upper is None:
        return f"> {_bound(float(lower))}"
    lower, upper = float(lower), float(upper)
    if lower <= 0:
        return f"≤ {_bound(upper)}"
    if upper <= NARROW_BUCKET_RATIO * lower:
        return f"≈{_value(float(value))} ({_range(lower, upper)})"
    return _range(lower, upper)


WIDTH = 100
_INDENT = "  "
_LABEL = 8  # the quantity's name, padded


def _histogram_part(hist: dict[str, Any]) -> str | None:
    if not hist.get("count"):
        return None
    mean = hist.get("mean")
    mean_text = f"mean {_value(float(mean))}" if isinstance(mean, int | float) else "mean -"
    return f"{mean_text}, p50 {histogram_quantile_text(hist, 'p50')}, p99 {histogram_quantile_text(hist, 'p99')}"


def histogram_quantile_text(hist: dict[str, Any], key: str) -> str:
    """`key` (p50, p99) of a summary histogram, from its allowed range (its bucket when it has none)."""
    allowed = hist.get(f"{key}_range")
    return quantile_text(hist.get(key), allowed if allowed is not None else hist.get(f"{key}_bucket"))


def _exact_part(block: Any) -> str | None:
    if not isinstance(block, dict) or not block.get("count"):
        return None
    return f"p50 {_ms(block.get('p50'))} ms, p99 {_ms(block.get('p99'))} ms"


def _quantity_lines(server: dict[str, Any], hists: dict[str, Any]) -> tuple[list[str], set[str]]:
    """One line per quantity (exact first, else its histogram), and which sources were used."""
    lines, used = [], set()
    for key, label in _HISTOGRAMS:
        part, source = _exact_part(server.get(key)), "per request"
        if part is None and isinstance(hists.get(key), dict):
            part, source = _histogram_part(hists[key]), "/metrics"
        if part is None:
            continue
        used.add(source)
        lines.append(f"{_INDENT}{label:<{_LABEL}}{part}  ({source})")
        diff = server.get("ttft_client_minus_server_s")
        if key == "ttft_s" and source == "per request" and isinstance(diff, dict) and diff.get("count"):
            lines.append(f"{_INDENT}{'':<{_LABEL}}client − server TTFT p50 {_ms(diff.get('p50'))} ms, "
                         f"p99 {_ms(diff.get('p99'))} ms (network, client overhead)")
    return lines, used


def _wrapped(head: str, items: list[str], sep: str) -> list[str]:
    """`head` then `items` joined by `sep`, broken into lines of at most WIDTH columns."""
    lines, line = [], _INDENT + head
    for n, item in enumerate(items):
        piece = item if n == 0 else sep + item
        if n > 0 and len(line) + len(piece) > WIDTH:
            lines.append(line + sep.rstrip())
            line, piece = _INDENT * 2 + item, ""
        line += piece
    return [*lines, line]


def _load_lines(prom: dict[str, Any]) -> list[str]:
    load = []
    gauges = prom.get("gauges", {})
    for key, label, fmt in (("running", "running", "{:.0f}"), ("waiting", "waiting", "{:.0f}"),
                            ("kv_cache_usage", "KV usage", "{:.0%}")):
        g = gauges.get(key)
        if g:
            load.append(f"{label} mean/max {fmt.format(g['mean'])}/{fmt.format(g['max'])}")
    rate = prom.get("prefix_cache_hit_rate")
    if rate is not None:
        load.append(f"prefix-cache hit rate {rate:.1%}")
    return _wrapped("", load, "  ") if load else []


def format_server_section(server: dict[str, Any] | None) -> list[str]:
    """The console lines of summary `server` (per-request figures and `prometheus`); [] when it has none."""
    server = server or {}
    prom = server.get("prometheus") if isinstance(server.get("prometheus"), dict) else None
    hists = prom.get("histograms", {}) if prom and prom.get("available") else {}
    lines, used = _quantity_lines(server, hists)
    sources = []
    if "per request" in used:
        sources.append("per request: sent with each response, exact")
    if prom and prom.get("available"):
        sources.append(f"/metrics: {prom.get('scrapes')} scrapes, last − first; quantiles as the range the "
                       "data allows")
    elif prom:
        sources.append(f"/metrics at {prom.get('url')} not available ({prom.get('last_failure', 'no data')})")
    if not lines and not sources:
        return []
    if prom and prom.get("available"):
        lines += _load_lines(prom)
        if not used and len(lines) == 0:
            lines.append(f"{_INDENT}no vLLM-named metrics")
        if prom.get("absent"):
            lines += _wrapped("absent on the server: ", list(prom["absent"]), ", ")
    return [f"server ({'; '.join(sources)}):" if len(sources) == 1 else "server:",
            *([] if len(sources) == 1 else [f"{_INDENT}{s}" for s in sources]), *lines]
