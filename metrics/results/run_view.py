"""The typed, frozen view of run.json (`RunDocument.from_json`, read with `documents.read_run_view`): what
its readers read (the gate's thresholds and baseline, the roofline deployment, the schedule's end, how the
run ended, when it started, the plan `goodput predict --measured` compares), each key parsed once.

A key a run.json lacks, or holding a value of another type, reads as its readers always read it: None,
False, 0 or an empty tuple. run.json of schema 1 (no `spec`) keeps its values under `settings`; the
fields below read either. The run spec itself stays JSON (`spec`), for `RunSpec.from_json` to parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import (
    Json,
    JsonObject,
    bool_or_none,
    int_or_none,
    json_object,
    json_value,
    number_or_none,
    object_or_empty,
)


def _object_or_none(value: Any) -> JsonObject | None:
    return json_object(value) if isinstance(value, dict) else None


def _thresholds(run: Mapping[str, Json]) -> tuple[str, ...]:
    spec = run.get("spec")
    gate = spec.get("gate") if isinstance(spec, Mapping) else None
    found = gate.get("thresholds") if isinstance(gate, Mapping) else object_or_empty(run.get("settings")).get("thresholds")
    return tuple(str(t) for t in found) if isinstance(found, list) else ()


def _baseline(run: Mapping[str, Json]) -> str | None:
    spec = run.get("spec")
    gate = spec.get("gate") if isinstance(spec, Mapping) else None
    found = gate.get("baseline") if isinstance(gate, Mapping) else object_or_empty(run.get("settings")).get("baseline")
    return found if isinstance(found, str) and found else None


@frozen
class PlannedLoad:
    """What the spec planned (`spec.load.arrival`, `spec.workload.trace`, `spec.request.ignore_eos`)."""

    arrival_kind: str | None = None
    rate: float | None = None  # a number, as the spec holds it
    trace: bool = False  # the workload replays a trace
    asked_ignore_eos: bool | None = None

    @classmethod
    def from_json(cls, spec: Mapping[str, Json]) -> PlannedLoad:
        arrival = object_or_empty(object_or_empty(spec.get("load")).get("arrival"))
        kind = arrival.get("kind")
        return cls(kind if isinstance(kind, str) else None, number_or_none(arrival.get("rate")),
                   object_or_empty(spec.get("workload")).get("trace") is not None,
                   bool_or_none(object_or_empty(spec.get("request")).get("ignore_eos")))


@frozen
class RunDocument:
    """run.json as its readers read it."""

    present: bool = False  # the document is a (non-empty) JSON object
    schema_version: int | None = None
    has_spec: bool = False  # the document has a `spec` key (schema 2), whatever it holds
    spec: JsonObject | None = None  # schema 2: the run spec, for `RunSpec.from_json`
    settings: JsonObject | None = None  # schema 1's settings (schema 2: what `goodput report --slo` judged)
    settings_slo: Json = None  # settings.slo as written: the SLO items a re-judgement stored
    schedule_end_s: float | None = None  # resolved.schedule_end_s
    roofline: JsonObject | None = None  # resolved.roofline (schema 1: settings.roofline)
    resolved_ignore_eos: bool | None = None
    planned: PlannedLoad = PlannedLoad()
    thresholds: tuple[str, ...] = ()  # spec.gate.thresholds (schema 1: settings.thresholds), as text
    gate_baseline: str | None = None  # spec.gate.baseline (schema 1: settings.baseline); None when empty
    start_unix_s: float | None = None  # a float only, as written by the run
    open_loop: bool | None = None
    complete: bool | None = None
    aborted: bool = False
    interrupted: bool = False
    unwritten_records: int = 0
    write_error: str | None = None
    workers_lost: Json = None  # workers.lost as written

    @classmethod
    def from_json(cls, value: Any) -> RunDocument:
        run = object_or_empty(value)
        spec = _object_or_none(run.get("spec")) if "spec" in run else None
        raw_spec = object_or_empty(run.get("spec"))
        resolved = object_or_empty(run.get("resolved"))
        settings = object_or_empty(run.get("settings"))
        roofline = (resolved if "spec" in run else settings).get("roofline")
        start = run.get("start_unix_s")
        error = run.get("write_error")
        return cls(
            present=bool(run),
            schema_version=int_or_none(run.get("schema_version")),
            has_spec="spec" in run,
            spec=spec,
            settings=_object_or_none(run.get("settings")),
            settings_slo=json_value(settings.get("slo")),
            schedule_end_s=number_or_none(resolved.get("schedule_end_s")),
            roofline=_object_or_none(roofline),
            resolved_ignore_eos=bool_or_none(resolved.get("ignore_eos")),
            planned=PlannedLoad.from_json(raw_spec),
            thresholds=_thresholds(run),
            gate_baseline=_baseline(run),
            start_unix_s=start if isinstance(start, float) else None,
            open_loop=bool_or_none(run.get("open_loop")),
            complete=bool_or_none(run.get("complete")),
            aborted=bool(run.get("aborted")),
            interrupted=bool(run.get("interrupted")),
            unwritten_records=int_or_none(run.get("unwritten_records")) or 0,
            write_error=error if isinstance(error, str) and error else None,
            workers_lost=json_value(object_or_empty(run.get("workers")).get("lost")),
        )
