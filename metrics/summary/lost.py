"""Requests lost with a worker: a worker process or Ray actor that died took with it what it knew of the
requests it owned, so whether each had been sent is not known (loadgen.workers.lost records them with
status "error", error_kind "worker_lost" and no send time). They are counted apart, never as "never sent":
the count may not claim what nobody knows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame

WORKER_LOST = "worker_lost"  # loadgen.http.errors.WorkerLost.kind


def lost_with_worker(frame: RequestFrame) -> npt.NDArray[np.bool_]:
    """Per record: a request lost with its worker (no send time, and none can be known)."""
    return np.fromiter((kind == WORKER_LOST for kind in frame.error_kind), np.bool_, frame.n) & ~frame.has_sent
