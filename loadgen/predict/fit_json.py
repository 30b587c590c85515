"""server-model.json's `fit`: how `goodput calibrate` fitted the model (the runs it read, the steps and rows
fitted, each form's residual, the residuals and the server's checks per run, where each limit came from).

Calibrate writes it (loadgen.predict.calibrate.build_model, then loadgen.cli.calibrate); `load_model` reads
it back with `parse_fit`, once. The predictor never reads it: it only informs. So an entry of another shape
than calibrate writes (a file of an older calibrate, or edited by hand) is left out of the fit read back
rather than refused, as the whole section was never checked; a `fit` that is not an object is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from metrics.results import Json, int_or_none, number_or_none


class DecodeCheck(TypedDict):
    """Decode time per output token, seconds: the server's, the model's and the chunk times'."""
    server: float | None
    model: float | None
    chunks: float | None


class PrefillCheck(TypedDict):
    """Mean prefill time, seconds: the server's and the model's, over how many requests each."""
    server: float | None
    model: float | None
    server_requests: float
    requests: int
    fitted: bool
    note: NotRequired[str]


class BatchCheck(TypedDict):
    """The running (and waiting) gauges' means over the busy scrapes, and the batch the steps imply."""
    scrapes: int
    running: float
    waiting: float | None
    steps_imply: float


class ServerCheck(TypedDict):
    """One run's comparison with the server, as server-model.json's fit.runs.<run>.server holds it."""
    decode_per_token_s: DecodeCheck
    prefill_mean_s: PrefillCheck
    queue_mean_s: float | None
    batch: BatchCheck | None


class RunFit(TypedDict):
    """fit.runs.<run>: the run's steps, mean measured step and residuals (seconds), then what calibrate adds."""
    steps: float
    mean_step_s: float
    rms_residual_s: float
    mean_residual_s: float
    step_source: NotRequired[str]  # engine (engine_steps.jsonl) | chunks (the chunk times)
    server: NotRequired[ServerCheck]


class PrefillSteps(TypedDict):
    """fit.prefill_steps: the steps that carry prefill tokens, and those left out as outliers."""
    all: int
    left_out: int


class ServerRows(TypedDict):
    """fit.server_rows: the parameters the server's mean prefill times were fitted for, one row per run."""
    parameters: list[str]
    runs: list[str]
    weight: str
    exact: bool


class FitJson(TypedDict, total=False):
    """server-model.json's `fit` (empty for a model no calibration made)."""
    sources: list[str]
    points: int
    aggregate_rows: int
    residual_rms_s: float
    form: str  # additive | overlapped
    forms_residual_rms_s: dict[str, float]
    pinned: list[str]
    runs: dict[str, RunFit]
    limits_source: dict[str, str]
    prefill_steps: PrefillSteps
    server_rows: ServerRows


def _has(m: Mapping[str, Json], numbers: tuple[str, ...] = (), optional: tuple[str, ...] = (),
         ints: tuple[str, ...] = ()) -> bool:
    """Whether `m` holds a number at each of `numbers`, a number or null at each of `optional`, an integer
    at each of `ints`."""
    return (all(number_or_none(m.get(k)) is not None for k in numbers)
            and all(k in m and (m[k] is None or number_or_none(m[k]) is not None) for k in optional)
            and all(int_or_none(m.get(k)) is not None for k in ints))


def _texts(value: Json) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if isinstance(v, str)]
    return None


def _by_name(value: Json) -> dict[str, float] | None:
    if not isinstance(value, Mapping):
        return None
    out = {k: n for k, v in value.items() if (n := number_or_none(v)) is not None}
    return out if len(out) == len(value) else None


def _texts_by_name(value: Json) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    out = {k: v for k, v in value.items() if isinstance(v, str)}
    return out if len(out) == len(value) else None


def _decode(value: Json) -> DecodeCheck | None:
    if not isinstance(value, Mapping) or not _has(value, optional=("server", "model", "chunks")):
        return None
    return {"server": number_or_none(value["server"]), "model": number_or_none(value["model"]), "chunks": number_or_none(value["chunks"])}


def _prefill(value: Json) -> PrefillCheck | None:
    if not isinstance(value, Mapping) or not _has(value, ("server_requests",), ("server", "model"), ("requests",)):
        return None
    fitted, note = value.get("fitted"), value.get("note", "")
    server_requests, requests = number_or_none(value["server_requests"]), int_or_none(value["requests"])
    if not isinstance(fitted, bool) or not isinstance(note, str) or server_requests is None or requests is None:
        return None
    out: PrefillCheck = {"server": number_or_none(value["server"]), "model": number_or_none(value["model"]),
                         "server_requests": server_requests, "requests": requests, "fitted": fitted}
    if "note" in value:
        out["note"] = note
    return out


def _batch(value: Json) -> BatchCheck | None:
    if not isinstance(value, Mapping) or not _has(value, ("running", "steps_imply"), ("waiting",), ("scrapes",)):
        return None
    scrapes, running, steps_imply = int_or_none(value["scrapes"]), number_or_none(value["running"]), number_or_none(value["steps_imply"])
    if scrapes is None or running is None or steps_imply is None:
        return None
    return {"scrapes": scrapes, "running": running, "waiting": number_or_none(value["waiting"]), "steps_imply": steps_imply}


def parse_server_check(value: Json) -> ServerCheck | None:
    """fit.runs.<run>.server as calibrate writes it; None when it has another shape."""
    if not isinstance(value, Mapping) or not _has(value, optional=("queue_mean_s",)) or "batch" not in value:
        return None
    decode, prefill, batch = _decode(value.get("decode_per_token_s")), _prefill(value.get("prefill_mean_s")), None
    if value["batch"] is not None and (batch := _batch(value["batch"])) is None:
        return None
    if decode is None or prefill is None:
        return None
    return {"decode_per_token_s": decode, "prefill_mean_s": prefill, "queue_mean_s": number_or_none(value["queue_mean_s"]),
            "batch": batch}


def parse_run_fit(value: Json) -> RunFit | None:
    """fit.runs.<run> as calibrate writes it; None when it has another shape (a malformed `server` check or
    `step_source` is left out of it)."""
    if not isinstance(value, Mapping):
        return None
    steps, mean_step = number_or_none(value.get("steps")), number_or_none(value.get("mean_step_s"))
    rms, mean = number_or_none(value.get("rms_residual_s")), number_or_none(value.get("mean_residual_s"))
    if steps is None or mean_step is None or rms is None or mean is None:
        return None
    out: RunFit = {"steps": steps, "mean_step_s": mean_step, "rms_residual_s": rms, "mean_residual_s": mean}
    if isinstance(source := value.get("step_source"), str):
        out["step_source"] = source
    if (check := parse_server_check(value.get("server"))) is not None:
        out["server"] = check
    return out


def _runs(value: Json) -> dict[str, RunFit] | None:
    if not isinstance(value, Mapping):
        return None
    return {k: run for k, v in value.items() if (run := parse_run_fit(v)) is not None}


def _prefill_steps(value: Json) -> PrefillSteps | None:
    if not isinstance(value, Mapping):
        return None
    carrying, left_out = int_or_none(value.get("all")), int_or_none(value.get("left_out"))
    return {"all": carrying, "left_out": left_out} if carrying is not None and left_out is not None else None


def _server_rows(value: Json) -> ServerRows | None:
    if not isinstance(value, Mapping):
        return None
    parameters, runs, weight, exact = _texts(value.get("parameters")), _texts(value.get("runs")), \
        value.get("weight"), value.get("exact")
    if parameters is None or runs is None or not isinstance(weight, str) or not isinstance(exact, bool):
        return None
    return {"parameters": parameters, "runs": runs, "weight": weight, "exact": exact}


def _put(out: FitJson, key: str, value: Json) -> None:
    """out[key] = value parsed, when `key` is one of the fit's and `value` has its shape."""
    match key:
        case "sources":
            if (sources := _texts(value)) is not None:
                out["sources"] = sources
        case "pinned":
            if (pinned := _texts(value)) is not None:
                out["pinned"] = pinned
        case "points":
            if (points := int_or_none(value)) is not None:
                out["points"] = points
        case "aggregate_rows":
            if (rows := int_or_none(value)) is not None:
                out["aggregate_rows"] = rows
        case "residual_rms_s":
            if (rms := number_or_none(value)) is not None:
                out["residual_rms_s"] = rms
        case "form":
            if isinstance(value, str):
                out["form"] = value
        case "forms_residual_rms_s":
            if (forms := _by_name(value)) is not None:
                out["forms_residual_rms_s"] = forms
        case "runs":
            if (runs := _runs(value)) is not None:
                out["runs"] = runs
        case "limits_source":
            if (limits := _texts_by_name(value)) is not None:
                out["limits_source"] = limits
        case "prefill_steps":
            if (steps := _prefill_steps(value)) is not None:
                out["prefill_steps"] = steps
        case "server_rows":
            if (server_rows := _server_rows(value)) is not None:
                out["server_rows"] = server_rows


def parse_fit(value: Json, source: str) -> FitJson:
    """server-model.json's `fit` (absent: empty), in the file's order; ValueError when it is not an object."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{source}: not a server model (its fit is not an object)")
    out: FitJson = {}
    for key, item in value.items():
        _put(out, key, item)
    return out
