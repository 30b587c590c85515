"""Where a point of a sweep or a capacity search lives: moved to the results contract,
metrics.results.points; these names stay importable from here."""

from __future__ import annotations

from metrics.results.layout import POINTS_DIR as POINTS_DIR
from metrics.results.points import MAX_LABEL_CHARS as MAX_LABEL_CHARS
from metrics.results.points import check_label as check_label
from metrics.results.points import check_labels as check_labels
from metrics.results.points import point_path as point_path
