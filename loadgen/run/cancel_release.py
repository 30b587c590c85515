"""After a run with planned cancellations: did the server release them? (metrics.server.release)

The scraped gauges (`server_metrics.jsonl`, unix times) are put on the records' clock through the run's
`start_unix_s`, the report goes into `server.prometheus.cancel_release` of summary.json, and one line says
on stderr how long the release took, or warns that the server never released them within the run. The
section is written back to server_prometheus.json, so `goodput report` shows it too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.records import RequestFrame
from metrics.results import SERVER_SECTION_FILE as SECTION_FILE
from metrics.results import SERVER_SERIES_FILE as SERIES_FILE
from metrics.results import float_or_none, write_json
from metrics.server import GaugePoint, ServerPrometheusJSON, release_report, release_warning
from metrics.summary import planned

if TYPE_CHECKING:
    from metrics.results import RunDocument


def gauge_points(path: Path, start_unix_s: float) -> list[GaugePoint]:
    """The scrapes that carry the running gauge, in seconds from the run's anchor ([] without the file)."""
    points: list[GaugePoint] = []
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return points
    for line in lines:
        try:
            p = json.loads(line)
        except ValueError:
            continue
        if isinstance(p, dict) and isinstance(p.get("running"), int | float) and isinstance(p.get("unix_s"), float):
            asked = float_or_none(p.get("started_unix_s"))
            points.append(GaugePoint(p["unix_s"] - start_unix_s, float(p["running"]),
                                     float_or_none(p.get("waiting")), float_or_none(p.get("kv_cache_usage")),
                                     asked - start_unix_s if asked is not None else None))
    return points


def with_cancel_release(section: ServerPrometheusJSON | None, out: Path, frame: RequestFrame, run: RunDocument,
                        *, console: bool = True) -> ServerPrometheusJSON | None:
    """`section` (the server's Prometheus section) with `cancel_release` added when the run cancelled
    requests as planned and the server was scraped; prints the release or the warning when `console`."""
    cancelled = planned(frame)
    start = run.start_unix_s
    if section is None or not section.get("available") or not cancelled.any() or start is None:
        return section
    sent = frame.has_sent
    last_cancel_s = float(frame.closed_ns[cancelled].max()) / 1e9  # when the client closed the last one
    report = release_report(gauge_points(out / SERIES_FILE, start), last_cancel_s=last_cancel_s,
                            cancels=int(cancelled.sum()), sent_ns=frame.sent_ns[sent], closed_ns=frame.closed_ns[sent])
    if console:
        warning = release_warning(report)
        if warning is not None:
            print(f"goodput: warning: {warning}", file=sys.stderr)
        elif report.get("released"):
            print(f"goodput: the server released the cancelled requests within {report['released_after_s']:.2f} s "
                  f"of the last planned cancel (scrapes {report['resolution_s']:.2f} s apart)", file=sys.stderr)
    out_section: ServerPrometheusJSON = {**section, "cancel_release": report}
    write_json(out / SECTION_FILE, out_section)  # `goodput report` reads it from there; OSError: an output error
    return out_section
