"""Records: one `RequestRecord` per request (`record`), read back into a columnar `RequestFrame`
(`columns`, `frame`; from Parquet: `frame_arrow`), records.jsonl copied and read (`jsonl`), and the input
checks of `goodput report` (`record_check`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.records.columns import CANCELLED, ERROR, OK, RequestFrame
    from metrics.records.frame import frame_from_jsonl, frame_from_records
    from metrics.records.frame_arrow import frame_from_table, read_records_checked, record_schema
    from metrics.records.jsonl import copy_records, read_jsonl_frame
    from metrics.records.record import RequestRecord, TokenSource, read_records
    from metrics.records.record_check import InputReport

__all__ = [
    "CANCELLED",
    "ERROR",
    "OK",
    "InputReport",
    "RequestFrame",
    "RequestRecord",
    "TokenSource",
    "copy_records",
    "frame_from_jsonl",
    "frame_from_records",
    "frame_from_table",
    "read_jsonl_frame",
    "read_records",
    "read_records_checked",
    "record_schema",
]

__getattr__ = lazy_names(__name__, {
    "CANCELLED": "columns", "ERROR": "columns", "OK": "columns", "RequestFrame": "columns",
    "frame_from_jsonl": "frame", "frame_from_records": "frame",
    "frame_from_table": "frame_arrow", "read_records_checked": "frame_arrow", "record_schema": "frame_arrow",
    "copy_records": "jsonl", "read_jsonl_frame": "jsonl",
    "RequestRecord": "record", "TokenSource": "record", "read_records": "record",
    "InputReport": "record_check",
})
