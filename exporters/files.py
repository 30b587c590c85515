"""Result files of a run: summary.csv, records.parquet (summary.json: metrics.results). Every write is
atomic (temp file + rename, metrics.results.atomic), so a reader never sees half a file and an interrupted
write leaves the old one.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from metrics.records import RequestRecord, read_records
from metrics.results import create_temp as _create_temp
from metrics.results import named_error as _failed
from metrics.results import write_atomic

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Json, Stats


def _latency_rows(scope: str, label: str, latency: dict[str, Stats]) -> Iterator[list[str | float | None]]:
    for metric, block in latency.items():
        yield [scope, label, metric, *block.values()]


def summary_csv_rows(summary: Mapping[str, Json]) -> Iterator[list[str | float | None]]:
    """Long format: one row per (scope, bucket label, metric) with every statistic as a column."""
    from metrics.results import STAT_KEYS, SummaryView

    view = SummaryView.from_json(summary)
    yield ["scope", "label", "metric", *STAT_KEYS]
    yield from _latency_rows("overall", "all", view.latency)
    for bucket in view.buckets:
        yield from _latency_rows(bucket.dimension, bucket.label, bucket.latency)


def write_summary_csv(path: Path, summary: Mapping[str, Json]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(summary_csv_rows(summary))
    write_atomic(path, buf.getvalue().encode())


def _drop_empty_structs(table: Any) -> Any:
    """Parquet cannot store a struct without fields (`tags` when no request had a tag): leave it out."""
    import pyarrow as pa

    for name in list(table.column_names):
        kind = table.schema.field(name).type
        if pa.types.is_struct(kind) and kind.num_fields == 0:
            table = table.drop_columns([name])
    return table


def _table_from_records(records: list[RequestRecord]) -> Any:
    import pyarrow as pa

    from metrics.records import record_schema  # pyarrow: kept off the start of a run

    schema = record_schema()
    cols: dict[str, pa.Array | list[str | None]] = {
        f.name: pa.array([getattr(r, f.name) for r in records], type=f.type) for f in schema}
    cols["tags"] = [json.dumps(r.tags, sort_keys=True) for r in records]
    cols["server"] = [json.dumps(r.server) if r.server is not None else None for r in records]
    return pa.table(cols)


def write_records_parquet(path: Path, records_jsonl: Path, table: Any = None) -> None:
    """records.jsonl → records.parquet: one row per request, chunk times and token counts as list columns,
    tags and server figures as struct columns. `table` is the file already parsed by
    `metrics.records.frame_arrow.read_records_table`; None when Arrow could not type its lines, and then the
    records are written with tags and server figures as JSON text (no second Arrow parse).

    A torn last line (a run killed mid-write) is left out, as `goodput report` leaves it out.
    """
    import pyarrow as pa

    if table is not None:
        try:
            _write_parquet(path, _drop_empty_structs(table))
            return
        except pa.ArrowException:  # e.g. an empty object nested in `server`: Parquet has no empty struct
            pass
    _write_parquet(path, _table_from_records(read_records(str(records_jsonl))))


# Chunk times rise within a request: delta encoding stores them in a third less space than plain +
# snappy, and skipping the dictionary attempt on 20 M distinct values saves most of the write's CPU.
class ParquetOptions(TypedDict):
    """The keyword arguments of pyarrow.parquet.write_table that goodput sets."""

    use_dictionary: list[str]  # columns dictionary-encoded
    column_encoding: dict[str, str]  # column path → encoding


_PARQUET_OPTIONS: ParquetOptions = {
    "use_dictionary": ["status", "error_kind", "error_message", "token_source", "finish_reason"],
    "column_encoding": {"chunk_ns.list.element": "DELTA_BINARY_PACKED",
                        "chunk_tokens.list.element": "DELTA_BINARY_PACKED"},
}


def _write_parquet(path: Path, table: Any) -> None:
    import pyarrow.parquet as pq

    try:
        fd, tmp = _create_temp(path)  # Arrow then truncates and fills it, keeping its mode
        os.close(fd)
    except OSError as exc:
        raise _failed(path, exc) from exc
    try:
        pq.write_table(table, str(tmp), **_PARQUET_OPTIONS)
        os.replace(tmp, path)
    except OSError as exc:  # Arrow's I/O errors are OSErrors
        tmp.unlink(missing_ok=True)
        raise _failed(path, exc) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
