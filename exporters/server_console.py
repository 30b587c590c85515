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

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Histogram, Quantile, Server, ServerPrometheus, Stats


NARROW_BUCKET_RATIO = 2.0
_HISTOGRAMS = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("e2e_s", "E2E"), ("queue_s", "queue"),
               ("prefill_s", "prefill"), ("decode_s", "decode"))
_LONG_S = 10.0  # bounds from here up are printed in seconds


def _ms(value: float | None) -> str:
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


def quantile_text(value: float | None, bucket: Sequence[float | None] | None) -> str:
    """One histogram quantile as what the histogram actually knows about it (see the module doc): `bucket`
    is the range the data allows (summary `p50_range`: the bucket cut by what the sum and count allow), or
    the bare bucket (`p50_bucket`) in a summary written before ranges were."""
    if bucket is None or len(bucket) != 2 or bucket[0] is None or value is None:
        return "-"
    lower, upper = float(bucket[0]), bucket[1]
    if upper is None:
        return f"> {_bound(lower)}"
    upper = float(upper)
    if lower <= 0:
        return f"≤ {_bound(upper)}"
    if upper <= NARROW_BUCKET_RATIO * lower:
        return f"≈{_value(float(value))} ({_range(lower, upper)})"
    return _range(lower, upper)


WIDTH = 100
_INDENT = "  "
_LABEL = 8  # the quantity's name, padded


def _histogram_part(hist: Histogram) -> str | None:
    if not hist.count:
        return None
    mean_text = f"mean {_value(float(hist.mean))}" if hist.mean is not None else "mean -"
    return f"{mean_text}, p50 {histogram_quantile_text(hist.p50)}, p99 {histogram_quantile_text(hist.p99)}"


def histogram_quantile_text(quantile: Quantile) -> str:
    """A quantile (p50, p99) of a summary histogram, from its allowed range (its bucket when it has none)."""
    return quantile_text(quantile.value, quantile.range if quantile.range is not None else quantile.bucket)


def _exact_part(block: Stats | None) -> str | None:
    if block is None or not block.count:
        return None
    return f"p50 {_ms(block.p50)} ms, p99 {_ms(block.p99)} ms"


def _quantity_lines(server: Server, hists: dict[str, Histogram]) -> tuple[list[str], set[str]]:
    """One line per quantity (exact first, else its histogram), and which sources were used."""
    lines, used = [], set()
    for key, label in _HISTOGRAMS:
        part, source = _exact_part(server.per_request.get(key)), "per request"
        if part is None and key in hists:
            part, source = _histogram_part(hists[key]), "/metrics"
        if part is None:
            continue
        used.add(source)
        lines.append(f"{_INDENT}{label:<{_LABEL}}{part}  ({source})")
        diff = server.per_request.get("ttft_client_minus_server_s")
        if key == "ttft_s" and source == "per request" and diff is not None and diff.count:
            lines.append(f"{_INDENT}{'':<{_LABEL}}client − server TTFT p50 {_ms(diff.p50)} ms, "
                         f"p99 {_ms(diff.p99)} ms (network, client overhead)")
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


def _load_lines(prom: ServerPrometheus) -> list[str]:
    load = []
    for key, label, fmt in (("running", "running", "{:.0f}"), ("waiting", "waiting", "{:.0f}"),
                            ("kv_cache_usage", "KV usage", "{:.0%}")):
        g = prom.gauges.get(key)
        if g is not None:
            load.append(f"{label} mean/max {fmt.format(g.mean)}/{fmt.format(g.max)}")
    rate = prom.prefix_cache_hit_rate
    if rate is not None:
        load.append(f"prefix-cache hit rate {rate:.1%}")
    return _wrapped("", load, "  ") if load else []


def format_server_section(server: Server) -> list[str]:
    """The console lines of summary `server` (per-request figures and `prometheus`); [] when it has none."""
    prom = server.prometheus
    hists = prom.histograms if prom is not None and prom.available else {}
    lines, used = _quantity_lines(server, hists)
    sources = []
    if "per request" in used:
        sources.append("per request: sent with each response, exact")
    if prom is not None and prom.available:
        sources.append(f"/metrics: {prom.scrapes} scrapes, last − first; quantiles as the range the "
                       "data allows")
    elif prom is not None:
        sources.append(f"/metrics at {prom.url} not available ({prom.last_failure})")
    if not lines and not sources:
        return []
    if prom is not None and prom.available:
        lines += _load_lines(prom)
        if not used and len(lines) == 0:
            lines.append(f"{_INDENT}no vLLM-named metrics")
        if prom.absent:
            lines += _wrapped("absent on the server: ", list(prom.absent), ", ")
    return [f"server ({'; '.join(sources)}):" if len(sources) == 1 else "server:",
            *([] if len(sources) == 1 else [f"{_INDENT}{s}" for s in sources]), *lines]
