"""`metrics.prom`: the run's final metrics in the text format that node_exporter's textfile collector
reads. Written atomically (a temporary file in the same directory, then a rename), so a collector never
reads half a file."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, write_to_textfile

TEXTFILE = "metrics.prom"


def write_textfile(path: Path, registry: CollectorRegistry) -> Path:
    """Write `registry` to `path` atomically; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(str(path), registry)
    return path
