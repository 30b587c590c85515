"""Result files of a run: summary.json, summary.csv, records.parquet. Every write is atomic
(temp file + rename), so a reader never sees half a file and an interrupted write leaves the old one."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from metrics.record import RequestRecord

STAT_KEYS = ("count", "mean", "std", "min", "p50", "p90", "p95", "p99", "p999", "max")


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode())


def _latency_rows(scope: str, label: str, latency: dict[str, Any]) -> Iterator[list[Any]]:
    for metric, block in latency.items():
        if isinstance(block, dict):
            yield [scope, label, metric, *(block.get(k) for k in STAT_KEYS)]


def summary_csv_rows(summary: dict[str, Any]) -> Iterator[list[Any]]:
    """Long format: one row per (scope, bucket label, metric) with every statistic as a column."""
    yield ["scope", "label", "metric", *STAT_KEYS]
    yield from _latency_rows("overall", "all", summary.get("latency", {}))
    for bucket in summary.get("buckets", []):
        yield from _latency_rows(str(bucket.get("dimension")), str(bucket.get("label")), bucket.get("latency", {}))


def write_summary_csv(path: Path, summary: dict[str, Any]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(summary_csv_rows(summary))
    write_atomic(path, buf.getvalue().encode())


_SCALARS = ("id", "intended_ns", "sent_ns", "status", "error_kind", "error_message", "http_status",
            "token_source", "output_tokens", "output_tokens_estimated", "prompt_tokens", "prompt_tokens_estimated",
            "prompt_tokens_target", "cached_tokens", "finish_reason", "first_byte_ns", "closed_ns",
            "output_tokens_target", "worker")


def write_records_parquet(path: Path, records: Sequence[RequestRecord]) -> None:
    """One row per request; chunk times and token counts as list columns, tags and server as JSON text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict[str, Any] = {name: [getattr(r, name) for r in records] for name in _SCALARS}
    cols["chunk_ns"] = pa.array([r.chunk_ns for r in records], type=pa.list_(pa.int64()))
    cols["chunk_tokens"] = pa.array([r.chunk_tokens for r in records], type=pa.list_(pa.int64()))
    cols["server_chunk_s"] = pa.array([r.server_chunk_s for r in records], type=pa.list_(pa.float64()))
    cols["tags"] = [json.dumps(r.tags, sort_keys=True) for r in records]
    cols["server"] = [json.dumps(r.server) if r.server is not None else None for r in records]
    table = pa.table(cols)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
