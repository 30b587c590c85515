"""Where a point of a sweep or a capacity search lives: `DIR/points/<label>/`, and nowhere else.

A label comes back from sweep.json or capacity.json, files anyone could have edited, so it is read as a
name, never as a path: one path component made of the characters goodput itself puts in a label
(`03-rate-2.5`, `00-ceiling-c256`, `05-rate-2.5-run2`), and the directory it names must resolve (symbolic
links followed) to a directory inside DIR/points. Anything else is refused with one line (ValueError)
before a byte is read or written there: `goodput sweep --resume` would otherwise write, and
`goodput report` read, wherever a tampered file pointed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from metrics.results.layout import POINTS_DIR

MAX_LABEL_CHARS = 100
_LABEL = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]*")


def check_label(label: object) -> str:
    """The label itself when it is a name goodput could have given a point (ValueError otherwise)."""
    if not isinstance(label, str) or len(label) > MAX_LABEL_CHARS or not _LABEL.fullmatch(label):
        raise ValueError(f"point label {str(label)[:MAX_LABEL_CHARS]!r} is not a point name (letters, digits, "
                         "'.', '-', '_'; one path component)")
    return label


def check_labels(labels: Iterable[object]) -> list[str]:
    """Every label checked, and none given twice (two points never share a directory)."""
    seen: list[str] = []
    for label in labels:
        if check_label(label) in seen:
            raise ValueError(f"point label {label!r} is given twice")
        seen.append(str(label))
    return seen


def point_path(directory: Path, label: object) -> Path:
    """DIR/points/<label>, after checking that it is (or would be) a directory inside DIR/points once every
    symbolic link on the way is followed (ValueError otherwise)."""
    name = check_label(label)
    points = directory / POINTS_DIR
    path = points / name
    root = directory.resolve()
    if points.is_symlink() or points.resolve().parent != root:
        raise ValueError(f"{points} is not a directory inside {directory} (a symbolic link?)")
    if path.is_symlink() or not _inside(path.resolve(), points.resolve()):
        raise ValueError(f"{path} leads outside {points} (a symbolic link?); refusing to use it")
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} exists and is not a directory")
    return path


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
