"""sweep.json: everything a sweep planned and measured, written after every point, so an interrupted or
killed sweep keeps its finished points and `goodput sweep --resume DIR` can run the rest exactly as
planned.

    {
      "kind": "sweep", "schema_version": 1, "complete": false, "interrupted": true,
      "mode": {"rates": [1, 2, 4, 8]} | {"concurrencies": [...]} | {"auto": {"points": 8, "concurrency": 256}},
      "length": {"duration_s": 30.0, "requests": null, "warmup_s": null},
      "server": {"url": "http://127.0.0.1:41234", "embedded": true, ...},
      "ceiling": {"concurrency": 256, "requests_per_s": 7.9} | null,
      "spec": {... the run spec every point starts from ...},
      "points": [{"plan": {...}, "row": {... see loadgen.sweep.rows ...}}, ...],
      "missing": ["03-rate-4", "04-rate-8"]
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadgen.spec import RunSpec
from loadgen.sweep.exact_rate import RATE_BASIS
from loadgen.sweep.points import PointLength, PointPlan
from loadgen.sweep.report import write_points_csv
from loadgen.sweep.rows import point_row
from metrics.results import SWEEP_CSV_FILE as SWEEP_CSV
from metrics.results import (
    SWEEP_FILE,
    Ceiling,
    PointRow,
    ServerInfo,
    SweepLength,
    SweepMode,
    SweepPoint,
    SweepView,
    check_label,
    check_labels,
    check_not_newer,
    load_sweep,
)
from metrics.results import SWEEP_SCHEMA_VERSION as SCHEMA_VERSION
from metrics.results import write_sweep as write_sweep_document

AUTO_PLANNED_LATER = "(rates planned after the ceiling point)"


@dataclass(slots=True)
class SweepState:
    spec: RunSpec  # what every point starts from (secrets excluded)
    mode: SweepMode
    length: PointLength
    points: list[PointPlan]  # planned so far (an auto sweep adds its rates once the ceiling is known)
    rows: dict[str, PointRow] = field(default_factory=dict)  # by label, for points that ran
    server: ServerInfo | None = None
    ceiling: Ceiling | None = None
    interrupted: bool = False

    @property
    def auto(self) -> bool:
        return self.mode.auto

    def row(self, point: PointPlan) -> PointRow:
        return self.rows.get(point.label) or point_row(point, status="pending", code=None, summary=None)

    def pending(self) -> list[PointPlan]:
        return [p for p in self.points if self.row(p).status != "done"]

    def missing(self) -> list[str]:
        labels = [p.label for p in self.pending()]
        if self.auto and self.ceiling is None:
            labels.append(AUTO_PLANNED_LATER)
        return labels

    @property
    def complete(self) -> bool:
        return not self.missing()

    def view(self) -> SweepView:
        """What sweep.json says of this state."""
        return SweepView(
            mode=self.mode, length=SweepLength(self.length.duration_s, self.length.requests, self.length.warmup_s),
            points=tuple(SweepPoint(p, self.row(p)) for p in self.points), complete=self.complete,
            interrupted=self.interrupted, rate_basis=RATE_BASIS, server=self.server, ceiling=self.ceiling,
            spec=self.spec.to_json(), missing=tuple(self.missing()), schema_version=SCHEMA_VERSION,
        )

    @classmethod
    def from_json(cls, data: Any) -> SweepState:
        """The state sweep.json holds (ValueError, one line, when it is not a sweep this version can resume)."""
        if not isinstance(data, dict) or data.get("kind") != "sweep":
            raise ValueError("not a sweep.json written by goodput sweep")
        check_not_newer(data, SWEEP_FILE, SCHEMA_VERSION)
        try:
            length = data["length"]
            points = [PointPlan.from_json(p["plan"]) for p in data["points"]]
            check_labels(p.label for p in points)  # names of directories under points/, never paths
            rows = {check_label(p["row"]["label"]): PointRow.from_json(p["row"]) for p in data["points"]
                    if p["row"].get("status") == "done"}
            state = cls(spec=RunSpec.from_json(data["spec"]), mode=SweepMode.from_json(dict(data["mode"])),
                        length=PointLength(length["duration_s"], length["requests"], length["warmup_s"]),
                        points=points, rows=rows, server=ServerInfo.from_json(data.get("server")),
                        ceiling=Ceiling.from_json(data.get("ceiling")))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"sweep.json is malformed ({exc})") from None
        return state


def write_sweep(sweep_dir: Path, state: SweepState) -> None:
    """sweep.json and sweep.csv, each replaced atomically."""
    write_sweep_document(sweep_dir, state.view())
    write_points_csv(sweep_dir / SWEEP_CSV, [state.row(p) for p in state.points])


def read_sweep(sweep_dir: Path) -> SweepState:
    try:
        data = load_sweep(sweep_dir)
    except OSError as exc:
        raise ValueError(f"--resume {sweep_dir}: cannot read {SWEEP_FILE} ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"--resume {sweep_dir}: {SWEEP_FILE} is not valid JSON ({exc})") from None
    try:
        return SweepState.from_json(data)
    except ValueError as exc:
        raise ValueError(f"--resume {sweep_dir}: {exc}") from None
