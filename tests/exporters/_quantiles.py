"""How close a histogram quantile must be to the exact percentile of the same samples.

numpy's `linear` p-th percentile lies between the order statistics x[k] and x[k + 1], k = ⌊(n − 1)q⌋;
Prometheus's rank q·n falls in the bucket of one of those two. So the estimate must lie between the
lower bound of x[k]'s bucket and the upper bound of x[k + 1]'s — and when both share one bucket, it is
within that bucket's width of the exact value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from metrics.latency import derive
from metrics.records.frame import OK, frame_from_records
from metrics.records.record import RequestRecord
from metrics.server.histograms import bucket_of
from metrics.summary.window import measurement_window


def check_quantile(estimate: float, exact: float, samples: npt.ArrayLike, q: float, bounds: Sequence[float]) -> None:
    values = np.sort(np.asarray(samples, dtype=np.float64))
    n = values.size
    k = math.floor((n - 1) * q)
    below, above = float(values[k]), float(values[min(k + 1, n - 1)])
    assert below <= exact <= above, (below, exact, above)
    lo_bucket, hi_bucket = bucket_of(below, bounds), bucket_of(above, bounds)
    assert lo_bucket[0] <= estimate <= hi_bucket[1], (estimate, exact, lo_bucket, hi_bucket)
    if lo_bucket == hi_bucket:
        assert abs(estimate - exact) <= lo_bucket[1] - lo_bucket[0], (estimate, exact, lo_bucket)


def latency_samples(records: Sequence[RequestRecord], key: str, *, warmup_s: float = 0.0) -> npt.NDArray[np.float64]:
    """The samples behind summary["latency"][key]: status ok, measured requests, from metrics.latency.derive."""
    frame = frame_from_records(records)
    sampled = measurement_window(frame, warmup_s=warmup_s, cooldown_s=0.0, schedule_end_s=None).measured
    sampled &= frame.status == OK
    per_request = {"ttft_s": derive.ttft_s, "ttft_from_schedule_s": derive.ttft_from_schedule_s,
                   "tpot_s": derive.tpot_s, "e2e_s": derive.e2e_s, "dispatch_lag_s": derive.dispatch_lag_s}
    if key in per_request:
        values = per_request[key](frame)[sampled]
        return values[~np.isnan(values)]
    gaps = derive.chunk_gaps(frame)
    if key == "itl_s":
        return derive.itl_s(gaps)[sampled[gaps.owner]]
    token_ns, owner = derive.itl_token_ns(gaps)
    return np.asarray(token_ns[sampled[owner]] / 1e9, dtype=np.float64)
