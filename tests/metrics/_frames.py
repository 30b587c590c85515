"""Comparing two RequestFrames field by field (the readers must build identical ones)."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from metrics.records.frame import RequestFrame


def assert_same_frame(a: RequestFrame, b: RequestFrame) -> None:
    for f in fields(RequestFrame):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype or f.name == "status", f.name
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif isinstance(x, dict):
            assert x.keys() == y.keys(), f.name
            for key in x:
                np.testing.assert_array_equal(np.asarray(x[key]), np.asarray(y[key]), err_msg=f"{f.name}.{key}")
        else:
            assert x == y, f.name
