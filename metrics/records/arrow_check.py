"""The Arrow reader's share of metrics.records.record_check: which rows of a parsed records table are not records,
found column by column (no pass over the rows in Python), and whether the parse can be trusted at all.

Arrow's parser already refuses a file with a value of the wrong type in a typed field, so what is left to
find here is what it lets through: null or absent required fields (a `{}` or `null` line parses as a row
of nulls), an unknown status, list lengths that disagree, a null inside a list, chunk times going
backwards, tags that are not strings and a `server` that is not an object.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.records import arrow_columns as columns
from metrics.records.record_check import REQUIRED, STATUSES

BoolArray = npt.NDArray[np.bool_]


def check_decoded(table: Any) -> None:
    """Raise pyarrow.ArrowInvalid where the parse may differ from a JSON decoder's: text that is not
    UTF-8 (Arrow keeps its bytes; a decoder refuses the line)."""
    import pyarrow as pa

    table.validate(full=True)  # checks the UTF-8 of every string value
    if any("\ufffd" in name for name in _field_names(table.schema.types, table.column_names)):
        raise pa.ArrowInvalid("a field name is not valid UTF-8")


def _field_names(types: list[Any], names: list[str]) -> list[str]:
    import pyarrow as pa

    out = list(names)
    for kind in types:
        if pa.types.is_struct(kind):
            out += _field_names([kind.field(i).type for i in range(kind.num_fields)],
                                [kind.field(i).name for i in range(kind.num_fields)])
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            out += _field_names([kind.value_type], [])
    return out


def damaged_rows(table: Any) -> BoolArray:
    """Rows that metrics.records.record_check.record_problem would refuse (on a table Arrow parsed with
    metrics.records.frame_arrow.record_schema)."""
    bad = np.zeros(table.num_rows, dtype=np.bool_)
    for name in REQUIRED:
        bad |= ~columns.valid(table.column(name))
    allowed = set(STATUSES)
    bad |= np.fromiter((s not in allowed for s in table.column("status").to_pylist()), np.bool_, table.num_rows)
    lengths = {}
    for name in ("chunk_ns", "chunk_tokens", "server_chunk_s"):
        lengths[name] = columns.list_lengths(table.column(name))
        bad |= columns.rows_with_null_items(table.column(name))
    k = lengths["chunk_ns"][0]
    tok_len, tok_valid = lengths["chunk_tokens"]
    srv_len, srv_valid = lengths["server_chunk_s"]
    bad |= tok_valid & (tok_len != k)
    bad |= srv_valid & (k > 0) & (srv_len != k)
    bad |= columns.rows_going_backwards(table.column("chunk_ns"))
    names = table.column_names
    if "tags" in names:
        bad |= _tags_not_strings(table.column("tags"))
    if "server" in names:
        bad |= _not_an_object(table.column("server"))
    return bad


def _not_an_object(column: Any) -> BoolArray:
    import pyarrow as pa

    if pa.types.is_struct(column.type) or pa.types.is_null(column.type):
        return np.zeros(len(column), dtype=np.bool_)
    return columns.valid(column)


def _tags_not_strings(column: Any) -> BoolArray:
    import pyarrow as pa

    bad = _not_an_object(column)
    if not pa.types.is_struct(column.type):
        return bad
    for name, chunks in columns.struct_fields(column).items():
        kind = column.type.field(name).type
        if not (pa.types.is_string(kind) or pa.types.is_null(kind)):
            bad |= columns.valid(pa.chunked_array(chunks, type=kind))
    return bad
