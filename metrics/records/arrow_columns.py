"""Arrow columns as numpy arrays, read straight from their buffers.

pyarrow.compute would do the same (fill_null, list_flatten, struct_field), but its first call sets up
the function registry: ~0.25 s, as long as building the rest of a 100,000-request frame. Nothing here
needs it: a column is a list of chunks, each a validity bitmap and a data buffer (lists: offsets into a
child array; structs: one child per field).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]


def validity(chunk: Any) -> BoolArray:
    """Which slots of one Arrow array are not null."""
    n = len(chunk)
    bitmap = chunk.buffers()[0]
    if bitmap is None or chunk.null_count == 0:
        return np.ones(n, dtype=np.bool_)
    if chunk.null_count == n:
        return np.zeros(n, dtype=np.bool_)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[chunk.offset : chunk.offset + n].astype(np.bool_)


def _values(chunk: Any) -> npt.NDArray[Any]:
    """The data of one numeric or boolean array, nulls included as whatever the buffer holds."""
    import pyarrow as pa

    n = len(chunk)
    data = chunk.buffers()[1]
    if pa.types.is_boolean(chunk.type):
        if data is None:
            return np.zeros(n, dtype=np.bool_)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[chunk.offset : chunk.offset + n].astype(np.bool_)
    dtype = np.dtype(chunk.type.to_pandas_dtype())
    if data is None:
        return np.zeros(n, dtype=dtype)
    return np.frombuffer(data, dtype=dtype)[chunk.offset : chunk.offset + n]


def numbers(column: Any, dtype: Any, fill: Any) -> tuple[npt.NDArray[Any], BoolArray]:
    """(values as `dtype` with nulls set to `fill`, validity) of a numeric or boolean column."""
    values = np.empty(len(column), dtype=dtype)
    valid = np.empty(len(column), dtype=np.bool_)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        values[at : at + n] = _values(chunk)
        valid[at : at + n] = validity(chunk)
        at += n
    values[~valid] = fill
    return values, valid


def lists(column: Any) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64], BoolArray]:
    """(flat values, per-row lengths with null = 0, per-row validity) of a list column of numbers.

    Raises ValueError on a null inside a list (a number was expected).
    """
    flat, lengths, valid = [], np.empty(len(column), dtype=np.int64), np.empty(len(column), dtype=np.bool_)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        ok = validity(chunk)
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + n + 1]
        sizes = np.diff(offsets).astype(np.int64)
        if (sizes[~ok] == 0).all():  # null rows hold no values: the child slice is the flat column
            child = chunk.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])) if n else chunk.values.slice(0, 0)
        else:
            child = chunk.flatten()
        if child.null_count:
            raise ValueError("a list holds null where a number was expected")
        flat.append(_values(child))
        sizes[~ok] = 0
        lengths[at : at + n], valid[at : at + n] = sizes, ok
        at += n
    values = np.concatenate(flat) if flat else np.zeros(0)
    return values, lengths, valid


def struct_fields(column: Any) -> dict[str, list[Any]]:
    """Each field of a struct column as chunks (the parent's nulls folded in), by field name."""
    out: dict[str, list[Any]] = {column.type.field(i).name: [] for i in range(column.type.num_fields)}
    for chunk in column.chunks:
        for name, child in zip(out, chunk.flatten(), strict=True):
            out[name].append(child)
    return out


def valid(column: Any) -> BoolArray:
    """Which rows of a column are not null."""
    return np.concatenate([validity(chunk) for chunk in column.chunks]) if column.num_chunks else np.zeros(0, np.bool_)


def _offsets(chunk: Any) -> npt.NDArray[np.int32]:
    buffer = chunk.buffers()[1]
    if buffer is None:  # an empty array may have none
        return np.zeros(1, dtype=np.int32)
    return np.frombuffer(buffer, dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]


def _rows_of(positions: npt.NDArray[Any], offsets: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
    """The row owning each position of a list array's child."""
    return (np.searchsorted(offsets, positions, side="right") - 1).astype(np.int64)


def list_lengths(column: Any) -> tuple[npt.NDArray[np.int64], BoolArray]:
    """(per-row lengths with null = 0, per-row validity) of a list column."""
    lengths, ok = np.zeros(len(column), dtype=np.int64), valid(column)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        lengths[at : at + n] = np.diff(_offsets(chunk))
        at += n
    lengths[~ok] = 0
    return lengths, ok


def rows_with_null_items(column: Any) -> BoolArray:
    """Rows of a list column that hold a null item."""
    out = np.zeros(len(column), dtype=np.bool_)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        if n and chunk.values.null_count:
            offsets = _offsets(chunk)
            holes = np.flatnonzero(~validity(chunk.values)[offsets[0] : offsets[-1]]) + offsets[0]
            out[at + _rows_of(holes, offsets)] = True
            out[at : at + n] &= validity(chunk)
        at += n
    return out


def rows_going_backwards(column: Any) -> BoolArray:
    """Rows of a list column of numbers in which a value is smaller than the one before it."""
    out = np.zeros(len(column), dtype=np.bool_)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        offsets = _offsets(chunk)
        if n and offsets[-1] - offsets[0] > 1:
            values = _values(chunk.values)[offsets[0] : offsets[-1]]
            drops = np.flatnonzero(values[1:] < values[:-1]) + offsets[0]  # the value after each is smaller
            if drops.size:
                rows = _rows_of(drops, offsets)
                inside = drops + 1 < offsets[rows + 1]  # not the step from one row's last value to the next's first
                out[at + rows[inside]] = True
                out[at : at + n] &= validity(chunk)
        at += n
    return out
