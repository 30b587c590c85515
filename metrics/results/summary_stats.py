"""The typed view of a latency block of summary.json: `{count, mean, std, min, p50, p90, p95, p99, p999, max}`
(metrics.latency.stats writes it), and of the objects that hold one per metric (`latency`, a bucket's)."""

from __future__ import annotations

from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import int_or_none, number_or_none

STAT_KEYS = ("count", "mean", "std", "min", "p50", "p90", "p95", "p99", "p999", "max")
_STATISTICS = STAT_KEYS[1:]  # the numbers after the count


@frozen
class Stats:
    """One distribution; a key the block lacks (or holds null) is None. An empty one has count 0."""

    count: int | None = None
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None

    @classmethod
    def from_json(cls, block: Any) -> Stats | None:
        """The view of a block; None when it is not a JSON object."""
        if not isinstance(block, dict):
            return None
        return cls(int_or_none(block.get("count")),
                   *(number_or_none(block.get(key)) for key in _STATISTICS))

    @classmethod
    def empty(cls) -> Stats:
        """The block of a distribution with no samples: count 0, every statistic None (never 0)."""
        return cls(0)

    def to_json(self) -> dict[str, int | float | None]:
        """The block as summary.json holds it: every key of STAT_KEYS, in that order."""
        return {"count": self.count, "mean": self.mean, "std": self.std, "min": self.min, "p50": self.p50,
                "p90": self.p90, "p95": self.p95, "p99": self.p99, "p999": self.p999, "max": self.max}

    def values(self) -> tuple[float | None, ...]:
        """The statistics in STAT_KEYS order (summary.csv's columns)."""
        return tuple(getattr(self, key) for key in STAT_KEYS)

    def stat(self, key: str) -> float | None:
        """The statistic named `key` (one of STAT_KEYS; None for another name)."""
        return getattr(self, key) if key in STAT_KEYS else None

    @property
    def has_samples(self) -> bool:
        return bool(self.count)


def stats_map(value: Any) -> dict[str, Stats]:
    """`latency` (or a bucket's): metric name → block, in the document's order; entries that are not
    objects are left out. {} when not an object."""
    if not isinstance(value, dict):
        return {}
    out = {}
    for name, block in value.items():
        stats = Stats.from_json(block)
        if stats is not None:
            out[str(name)] = stats
    return out
