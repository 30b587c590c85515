"""The throughput ceiling of a closed-loop point: what the server completed per second while it was kept full.

The point's own `requests_per_s` counts only its *measured* requests (sent after the warm-up) over its
window. A closed loop at a concurrency far above what the server batches sends its first wave at once,
before the warm-up ends, and the requests measured are the ones that queued behind that wave: on a heavy
workload a 6 s point then measured 2 requests over 48 s, 0.04 req/s, for a server that completes 5.
So the ceiling counts every request the point completed, from its first send to its last completion.
"""

from __future__ import annotations

from pathlib import Path

from metrics import NS_PER_S
from metrics.records import OK, frame_from_jsonl
from metrics.results import RECORDS_FILE
from metrics.summary import completion_ns


def completed_rate(point_dir: Path) -> float | None:
    """Successful requests / (last completion − first send) over the whole point; None when it cannot say
    (no records, nothing completed, or every completion at the first send)."""
    try:
        frame = frame_from_jsonl(point_dir / RECORDS_FILE)
    except (OSError, ValueError):
        return None
    done, known = completion_ns(frame)
    ok = (frame.status == OK) & known
    if not ok.any() or not frame.has_sent.any():
        return None
    span_ns = int(done[ok].max()) - int(frame.sent_ns[frame.has_sent].min())
    return int(ok.sum()) / (span_ns / NS_PER_S) if span_ns > 0 else None
