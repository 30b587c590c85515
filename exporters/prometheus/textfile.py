"""`metrics.prom`: the run's final metrics in the text format that node_exporter's textfile collector
reads. Written atomically (a temporary file in the same directory, then a rename), so a collector never
reads half a file."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from metrics.results import TEXTFILE as TEXTFILE
from metrics.results import write_atomic


def write_textfile(path: Path, registry: CollectorRegistry) -> Path:
    """Write `registry` to `path` atomically; returns the path. A failed write raises OSError naming `path`
    (never a temporary file, nor no file at all) and leaves no temporary file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, generate_latest(registry))
    return path
