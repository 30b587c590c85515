"""Columns read from Arrow buffers equal what pyarrow itself reports, across chunks, slices and nulls."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

from metrics.records import arrow_columns as columns


def _sliced_chunks(values: Sequence[object], kind: pa.DataType) -> pa.ChunkedArray:
    whole = pa.array(values, type=kind)
    return pa.chunked_array([whole.slice(0, 3), whole.slice(3, 4), whole.slice(7)], type=kind)


@pytest.mark.parametrize(("kind", "dtype", "fill"), [(pa.int64(), np.int64, -1), (pa.float64(), np.float64, np.nan),
                                                     (pa.bool_(), np.bool_, True), (pa.int32(), np.int32, 0)])
def test_numbers_with_nulls_over_sliced_chunks(kind: pa.DataType, dtype: type, fill: object) -> None:
    ints = [1, None, 3, 4, None, 6, 7, 8, None, 10, 11]
    raw: list[object] = [None if v is None else bool(v % 2) for v in ints] if kind == pa.bool_() else list(ints)
    col = _sliced_chunks(raw, kind)
    values, valid = columns.numbers(col, dtype, fill)
    assert valid.tolist() == [v is not None for v in raw]
    expected: np.ndarray = np.array([fill if v is None else v for v in raw], dtype=dtype)
    np.testing.assert_array_equal(values, expected)


def test_lists_flatten_like_arrow_and_null_rows_are_empty() -> None:
    raw = [[1, 2], None, [], [3], [4, 5, 6], None, [7]]
    col = _sliced_chunks(raw, pa.list_(pa.int64()))
    values, lengths, valid = columns.lists(col)
    assert values.tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert lengths.tolist() == [2, 0, 0, 1, 3, 0, 1]
    assert valid.tolist() == [True, False, True, True, True, False, True]


def test_a_null_inside_a_list_is_refused() -> None:
    with pytest.raises(ValueError, match="null"):
        columns.lists(pa.chunked_array([pa.array([[1, None]])]))


def test_empty_columns() -> None:
    values, lengths, valid = columns.lists(pa.chunked_array([], type=pa.list_(pa.int64())))
    assert values.size == lengths.size == valid.size == 0
    assert columns.numbers(pa.chunked_array([], type=pa.int64()), np.int64, 0)[0].size == 0


def test_struct_fields_carry_the_parents_nulls() -> None:
    col = pa.chunked_array([pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}])])
    fields = columns.struct_fields(col)
    assert pa.chunked_array(fields["a"]).to_pylist() == [1, None, None]
    assert pa.chunked_array(fields["b"]).to_pylist() == ["x", None, "y"]


def test_list_shapes_null_items_and_backward_steps_row_by_row_over_sliced_chunks() -> None:
    raw = [[1, 2], None, [], [3, None], [9, 5, 6], [1], [2, 2, 3], [None], [8, 7]]
    col = _sliced_chunks(raw, pa.list_(pa.int64()))
    lengths, valid = columns.list_lengths(col)
    assert lengths.tolist() == [0 if r is None else len(r) for r in raw]
    assert valid.tolist() == [r is not None for r in raw]
    assert columns.rows_with_null_items(col).tolist() == [r is not None and None in r for r in raw]
    # [9, 5, 6] and [8, 7] go backwards; the step from [9, 5, 6] down to [1] is between rows, not inside one.
    backwards = columns.rows_going_backwards(col).tolist()
    assert [i for i, b in enumerate(backwards) if b and None not in (raw[i] or [])] == [4, 8]


def test_valid_and_shapes_of_empty_columns() -> None:
    empty = pa.chunked_array([], type=pa.list_(pa.int64()))
    assert columns.valid(empty).size == columns.list_lengths(empty)[0].size == 0
    assert columns.rows_with_null_items(empty).size == columns.rows_going_backwards(empty).size == 0
