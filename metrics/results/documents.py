"""The one reader and the one writer of each result document: run.json, summary.json, sweep.json and
capacity.json. Nothing else in goodput parses or writes them (tests/test_imports.py holds it).

Each reader keeps the behaviour its callers rely on; where callers need different answers to a missing
or damaged file, the document has one variant per answer, all parsing through `_load`:

- run.json: `read_run` ({} when absent or not an object; a damaged file raises), `run_or_none` (None
  unless it is a readable object), `read_run_view` (read_run's answer as a typed `RunDocument`);
- summary.json: `load_summary` (the parsed JSON; OSError/ValueError as they come), `read_summary`
  (ValueError, one line, when absent or not an object), `summary_or_none`;
- sweep.json / capacity.json: `load_sweep` (raw, for `--resume`), `read_document` (checked: kind,
  points, point labels), `read_sweep` (read_document's sweep.json as a SweepView), `read_capacity`
  (checked: kind, capacity, point labels; a CapacityView).

Writers replace the file atomically (metrics.results.atomic). Schema versions: metrics.results.versions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metrics.results.atomic import write_json
from metrics.results.layout import CAPACITY_FILE, RUN_FILE, SUMMARY_FILE, SWEEP_FILE
from metrics.results.points import check_label

if TYPE_CHECKING:  # imported where they are read: a run imports this module before its first request
    from metrics.results.capacity_view import CapacityView
    from metrics.results.row_view import PointRow
    from metrics.results.run_view import RunDocument
    from metrics.results.summary_parse import Json, JsonObject
    from metrics.results.sweep_view import SweepView


def _load(path: Path) -> Json:
    """A result document parsed (OSError when it cannot be read, ValueError when it is not JSON): what
    `json.loads` gives is made of JSON's types only."""
    data: Json = json.loads(path.read_text(encoding="utf-8"))
    return data


# run.json


def write_run(directory: Path, info: Mapping[str, Json]) -> None:
    write_json(directory / RUN_FILE, info)


def read_run(directory: Path) -> JsonObject:
    """run.json: {} when there is none or it is not a JSON object (ValueError: not JSON)."""
    path = directory / RUN_FILE
    if not path.exists():
        return {}
    data = _load(path)
    return data if isinstance(data, dict) else {}


def run_or_none(directory: Path) -> JsonObject | None:
    """run.json when it is a readable JSON object; None otherwise."""
    try:
        data = _load(directory / RUN_FILE)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# summary.json


def write_summary(directory: Path, summary: Mapping[str, Json]) -> None:
    write_json(directory / SUMMARY_FILE, summary)


def load_summary(directory: Path) -> Any:
    """summary.json parsed, whatever it holds (OSError, ValueError as they come)."""
    return _load(directory / SUMMARY_FILE)


def read_summary(directory: Path) -> JsonObject:
    """summary.json (ValueError when it is missing or not a JSON object)."""
    path = directory / SUMMARY_FILE
    if not path.is_file():
        raise ValueError(f"no {SUMMARY_FILE} in {directory}: run `goodput report {directory}` first")
    summary = _load(path)
    if not isinstance(summary, dict):
        raise ValueError(f"{path} is not a JSON object")
    return summary


def summary_or_none(directory: Path) -> JsonObject | None:
    """summary.json when it is a readable JSON object; None otherwise."""
    try:
        data = load_summary(directory)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# sweep.json and capacity.json


def write_sweep(directory: Path, doc: SweepView) -> None:
    write_json(directory / SWEEP_FILE, doc.to_json())


def write_capacity(directory: Path, doc: CapacityView) -> None:
    write_json(directory / CAPACITY_FILE, doc.to_json())


def load_sweep(directory: Path) -> Any:
    """sweep.json parsed, whatever it holds (OSError, ValueError as they come)."""
    return _load(directory / SWEEP_FILE)


def read_document(directory: Path, name: str, kind: str) -> JsonObject:
    """sweep.json or capacity.json (ValueError, one line, when it is missing or is not one)."""
    path = directory / name
    try:
        data = _load(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    points = data.get("points") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("kind") != kind or not isinstance(points, list):
        raise ValueError(f"{path} is not a {name} written by goodput {kind}")
    try:  # each label names a directory under points/: a name, never a path
        for p in points:
            plan = p.get("plan") if isinstance(p, dict) else None
            if isinstance(plan, dict) and "label" in plan:
                check_label(plan["label"])
        for p in points:  # sweep.json nests each row under `row`; capacity.json lists the rows
            row = p.get("row") if isinstance(p, dict) and isinstance(p.get("row"), dict) else p
            label = row.get("label") if isinstance(row, dict) else None
            if label:
                check_label(str(label))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return data


def point_labels(rows: Iterable[PointRow], *, finished: bool = False) -> list[str]:
    """The labels of these rows (those of points that finished, with `finished`)."""
    return [r.label for r in rows if r.label and (r.status == "done" or not finished)]


def _capacity_json(directory: Path) -> JsonObject:
    """A capacity search's capacity.json (ValueError, one line, when it is missing or not one)."""
    path = directory / CAPACITY_FILE
    try:
        data = _load(path)
    except OSError as exc:
        raise ValueError(f"{directory} is not a capacity search ({CAPACITY_FILE}: {exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "capacity" or not isinstance(data.get("capacity"), dict):
        raise ValueError(f"{path} is not a capacity.json written by goodput capacity")
    points = data.get("points")
    for row in points if isinstance(points, list) else []:  # each label names a directory under points/, never a path
        try:
            check_label(row.get("label") if isinstance(row, dict) else None)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return data


def is_capacity_dir(directory: Path) -> bool:
    return (directory / CAPACITY_FILE).is_file()


# the typed views of sweep.json and capacity.json


def read_sweep(directory: Path, *, every_row: bool = False) -> SweepView:
    """sweep.json, checked as `read_document` checks it (ValueError, one line), as a typed view (a point
    without its row left out; with `every_row`, such a point is a ValueError)."""
    from metrics.results.sweep_view import SweepView

    data = read_document(directory, SWEEP_FILE, "sweep")
    points = data.get("points")  # a list: read_document checked it
    if every_row and not (isinstance(points, list)
                          and all(isinstance(p, dict) and isinstance(p.get("row"), dict) for p in points)):
        raise ValueError(f"{directory / SWEEP_FILE} is malformed (a point without its row)")
    return SweepView.from_json(data)


def read_capacity(directory: Path) -> CapacityView:
    """A capacity search's capacity.json (ValueError, one line, when it is missing or not one)."""
    from metrics.results.capacity_view import CapacityView

    return CapacityView.from_json(_capacity_json(directory))


def read_capacity_points(directory: Path) -> CapacityView:
    """capacity.json checked as `read_document` checks it (kind, points, point labels), as a typed view: the
    reader of the capacity page and of `goodput predict --measured`, which need its rows."""
    from metrics.results.capacity_view import CapacityView

    return CapacityView.from_json(read_document(directory, CAPACITY_FILE, "capacity"))


# the typed view of run.json


def read_run_view(directory: Path) -> RunDocument:
    """run.json as `read_run` reads it (absent or not an object: an empty view; ValueError: not JSON), as a
    typed view."""
    from metrics.results.run_view import RunDocument

    return RunDocument.from_json(read_run(directory))
