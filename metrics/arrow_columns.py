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
