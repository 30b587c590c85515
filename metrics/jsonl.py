"""records.jsonl → RequestFrame without RequestRecord objects (the `goodput report` fast path).

Each line is decoded by orjson and goes straight into the frame's column builder; no RequestRecord is
made, and chunk lists are copied into flat numpy buffers as they are read, so memory holds one line's
Python objects at a time instead of 20 M Python ints. A torn last line (a run killed mid-write) is
skipped, as `read_records` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from metrics.frame import Columns, RequestFrame, gc_paused


def _add(cols: Columns, d: dict[str, Any]) -> None:
    cols.add(
        rid=d["id"], intended_ns=d["intended_ns"], sent_ns=d.get("sent_ns"), closed_ns=d.get("closed_ns"),
        status=d.get("status", "ok"), error_kind=d.get("error_kind"), chunk_ns=d.get("chunk_ns") or [],
        chunk_tokens=d.get("chunk_tokens"), token_source=d.get("token_source", "estimate"),
        output_tokens=d.get("output_tokens"), output_estimated=d.get("output_tokens_estimated", True),
        prompt_tokens=d.get("prompt_tokens"), prompt_estimated=d.get("prompt_tokens_estimated", True),
        prompt_target=d.get("prompt_tokens_target"), cached_tokens=d.get("cached_tokens"),
        server_chunk_s=d.get("server_chunk_s"), server=d.get("server"), tags=d.get("tags"),
    )


def frame_from_lines(lines: Iterable[bytes]) -> RequestFrame:
    """A frame from records.jsonl lines (bytes, newline optional); lines that are not records are skipped."""
    cols = Columns()
    with gc_paused():
        for raw in lines:
            if not raw.strip():
                continue
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # a torn last line from a killed run
            if isinstance(data, dict) and "id" in data:
                _add(cols, data)
        return cols.build()


def read_jsonl_frame(path: str | Path) -> RequestFrame:
    with Path(path).open("rb") as f:
        return frame_from_lines(f)
