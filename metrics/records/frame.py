"""Records as columns (the layout: metrics.records.columns), built from RequestRecord objects or straight
from a records.jsonl file. Everything of metrics.records.columns is importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from metrics.collector import gc_paused  # the columns' row tuples are not cyclic
from metrics.records.answer_columns import answer_row
from metrics.records.columns import (
    CANCELLED,
    ERROR,
    OK,
    SERVER_PHASES,
    STATUS_CODES,
    BoolArray,
    Columns,
    FloatArray,
    IntArray,
    RequestFrame,
    check_chunk_order,
)
from metrics.records.record import RequestRecord

__all__ = [
    "CANCELLED", "ERROR", "OK", "SERVER_PHASES", "STATUS_CODES", "BoolArray", "Columns", "FloatArray", "IntArray",
    "RequestFrame", "check_chunk_order", "frame_from_jsonl", "frame_from_records",
]


def frame_from_records(records: Iterable[RequestRecord]) -> RequestFrame:
    """Columns from RequestRecord objects."""
    cols = Columns()
    with gc_paused():
        for r in records:
            cols.add(
                rid=r.id, intended_ns=r.intended_ns, sent_ns=r.sent_ns, closed_ns=r.closed_ns, status=r.status,
                error_kind=r.error_kind, chunk_ns=r.chunk_ns, chunk_tokens=r.chunk_tokens,
                token_source=r.token_source, output_tokens=r.output_tokens,
                output_estimated=r.output_tokens_estimated, prompt_tokens=r.prompt_tokens,
                prompt_estimated=r.prompt_tokens_estimated, prompt_target=r.prompt_tokens_target,
                cached_tokens=r.cached_tokens, server_chunk_s=r.server_chunk_s, server=r.server, tags=r.tags,
                session=r.session, turn=r.turn, error_message=r.error_message, http_status=r.http_status,
                finish_reason=r.finish_reason, output_target=r.output_tokens_target, model=r.model,
                answer=answer_row(r),
                images=r.images,
            )
        return cols.build()


def frame_from_jsonl(path: str | Path) -> RequestFrame:
    """Columns straight from a records.jsonl file (no RequestRecord objects); lines that are not records
    are left out (metrics.records.jsonl.read_jsonl_frame also says which)."""
    from metrics.records.jsonl import read_jsonl_frame  # its parser is only needed by `report`

    return read_jsonl_frame(path)[0]
