"""`RunSpec`: the whole description of one run, typed, immutable, valid by construction.

It is built once from flags and an optional config file (`loadgen.spec.build`), stored in `run.json`
(`to_json`), read back by `goodput report` and `goodput gate` (`from_json`), and is everything a sweep
point or a worker process needs to know. `RunSpec.from_json(spec.to_json()) == spec` holds exactly.

Secrets (API key, Pushgateway password, secret header values) are never part of it: they travel beside
it as `loadgen.secrets.Secrets`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loadgen.spec.limits import check_limits
from loadgen.spec.sections import (
    GateSpec,
    LoadSpec,
    MetricsSpec,
    OutputSpec,
    PrometheusSpec,
    RequestSpec,
    ScaleSpec,
    SpecError,
    TargetSpec,
    WorkloadSpec,
)
from loadgen.types import Timeouts
from loadgen.workload import Arrival, LengthDist, ThinkTime, parse_arrival, parse_length, parse_think_time
from metrics import LENGTH_KINDS, SLO
from metrics.gate import Threshold, parse_threshold

if TYPE_CHECKING:
    from metrics.results import Json, JsonObject

SPEC_VERSION = 1


@dataclass(frozen=True, slots=True)
class RunSpec:
    target: TargetSpec = field(default_factory=TargetSpec)
    request: RequestSpec = field(default_factory=RequestSpec)
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    load: LoadSpec = field(default_factory=LoadSpec)
    scale: ScaleSpec = field(default_factory=ScaleSpec)
    timeouts: Timeouts = field(default_factory=Timeouts)
    metrics: MetricsSpec = field(default_factory=MetricsSpec)
    outputs: OutputSpec = field(default_factory=OutputSpec)
    prometheus: PrometheusSpec = field(default_factory=PrometheusSpec)
    gate: GateSpec = field(default_factory=GateSpec)

    def __post_init__(self) -> None:
        """What one section cannot check alone: a trace replay is a workload and a load shape at once; a
        closed loop's slots are split between the workers."""
        trace, kind = self.workload.trace is not None, self.load.arrival.kind
        if trace and kind != "trace":
            raise SpecError(f"--trace dispatches at the trace's own timestamps: --arrival {kind} does not apply "
                            "(--rate rescales the trace's mean rate)")
        if kind == "trace" and not trace:
            raise SpecError("--arrival trace needs --trace FILE")
        if self.workload.images.enabled and self.target.endpoint == "completions":
            raise SpecError("--images needs a chat endpoint: a completions prompt is text only")
        if self.request.tool_list is not None and self.target.endpoint == "completions":
            raise SpecError("--tools does not apply to --endpoint completions (that API takes no tools)")
        if self.target.endpoint in ("responses", "messages") and not (self.request.usage and self.request.continuous_usage):
            flag = "--no-usage" if not self.request.usage else "--no-continuous-usage"
            raise SpecError(f"{flag} does not apply to --endpoint {self.target.endpoint} (stream_options are chat's "
                            "and completions'; that API always ends its stream with the usage)")
        workers, arrival = self.scale.workers, self.load.arrival
        if workers is not None and workers > arrival.concurrency and not arrival.open_loop:
            raise SpecError(f"--workers {workers} cannot split --concurrency {arrival.concurrency}: each worker "
                            "keeps at least one request in flight (lower --workers, or use --workers auto)")
        try:
            check_limits(self.workload, self.request, self.load, self.scale, self.metrics)
        except ValueError as exc:
            raise SpecError(str(exc)) from None

    def to_json(self) -> JsonObject:
        """Plain JSON values (seconds as numbers, distributions and thresholds in their own forms), built and
        checked as a `JsonObject`."""
        out: JsonObject = {"spec_version": SPEC_VERSION}
        for f in dataclasses.fields(self):
            out[f.name] = _encode(getattr(self, f.name))
        prometheus = out["prometheus"]
        if isinstance(prometheus, dict) and not prometheus.get("scrape"):  # written only when given: run.json
            prometheus.pop("scrape", None)  # without --scrape is unchanged
        return out

    @classmethod
    def from_json(cls, data: Any) -> RunSpec:
        """The spec `to_json` wrote. Sections or fields it lacks take their defaults (a spec written by an
        older version); an unknown one is an error, as is any value the sections refuse."""
        if not isinstance(data, dict):
            raise SpecError("a run spec must be a JSON object")
        version = data.get("spec_version", SPEC_VERSION)
        if not isinstance(version, int) or version > SPEC_VERSION:
            raise SpecError(f"run spec version {version!r} is newer than this goodput understands ({SPEC_VERSION})")
        body = {k: v for k, v in data.items() if k != "spec_version"}
        return typing.cast(RunSpec, _decode_dataclass(cls, body, "spec"))


# --- encoding -------------------------------------------------------------------------------------


def _encode(value: object) -> Json:
    if isinstance(value, Threshold):
        return value.text
    if isinstance(value, SLO):
        return {k: v for k, v in value.to_dict().items() if v is not None}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"a run spec field of a type JSON has not: {type(value).__name__}")


# --- decoding, driven by the sections' type hints --------------------------------------------------


def _decode_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise SpecError(f"{where}: unknown field(s) {', '.join(unknown)}")
    kwargs = {name: _decode(hints[name], value, f"{where}.{name}") for name, value in data.items()}
    try:
        return cls(**kwargs)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{where}: {exc}") from None


def _decode(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None:
            if type(None) in options:
                return None
            raise SpecError(f"{where}: must not be null")
        inner = [o for o in options if o is not type(None)]
        return _decode(inner[0], value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise SpecError(f"{where}: expected a list, got {type(value).__name__}")
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise SpecError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if hint is Threshold:
        if not isinstance(value, str):
            raise SpecError(f"{where}: expected a threshold expression")
        try:
            return parse_threshold(value)
        except ValueError as exc:
            raise SpecError(f"{where}: {exc}") from None
    if dataclasses.is_dataclass(hint):
        decoded = _decode_dataclass(typing.cast(type, hint), value, where)
        _check_value(decoded, where)
        return decoded
    return _scalar(hint, value, where)


def _check_value(value: Any, where: str) -> None:
    """Arrival processes and length distributions are checked by their parsers, not on construction."""
    try:
        if isinstance(value, Arrival):
            parse_arrival(value.kind, rate=value.rate if value.kind != "concurrency" else value.rate or None,
                          burstiness=value.burstiness, rate_end=value.rate_end or None,
                          concurrency=value.concurrency or None)
        elif isinstance(value, ThinkTime):
            if parse_think_time(str(value)) != value:
                raise ValueError(f"not a valid think time: {value}")
        elif isinstance(value, LengthDist) and (value.kind not in LENGTH_KINDS or parse_length(str(value)) != value):
            raise ValueError(f"not a valid length distribution: {value}")
    except ValueError as exc:
        raise SpecError(f"{where}: {exc}") from None


def _scalar(hint: Any, value: Any, where: str) -> Any:
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - a section field of a type this decoder was not taught
        raise SpecError(f"{where}: cannot decode a {hint!r}")
    raise SpecError(f"{where}: expected {hint.__name__}, got {value!r}")
