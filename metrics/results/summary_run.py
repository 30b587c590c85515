"""The typed view of summary.json's `run` section: run.json as the run wrote it (metrics.results.documents)
plus the measurement window, the percentile method and the client's saturation (metrics.summary.build).
Only what the exporters read is viewed; run.json keeps the rest.

Values printed as the document holds them (a target, a load) are kept as their text (`str(value)`,
which is what an f-string prints); None where the document does not have them.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import (
    Json,
    count,
    int_or_none,
    number_or_none,
    object_or_empty,
    text_or_none,
)


def _length(value: Json) -> int:
    """How many items a JSON list holds; 0 for anything else (absent, null, another type)."""
    return len(value) if isinstance(value, list) else 0


def _text(value: Any) -> str | None:
    """The text a reader prints for a value; None when it is null or absent."""
    return None if value is None else str(value)


def _number(value: Any) -> float:
    """A number as the document holds it (0.0 stays 0.0); 0 when it is not one."""
    number = number_or_none(value)
    return 0 if number is None else number


@frozen
class Window:
    """`run.window` (metrics.summary.window): the measured span and the requests in it."""

    measured: int | None = None
    duration_s: float | None = None
    warmup_s: float = 0
    cooldown_s: float = 0
    present: bool = False  # the document has a (non-empty) window
    start_s: float | None = None  # the first measured send, the last measured completion (the run's clock)
    end_s: float | None = None

    @classmethod
    def from_json(cls, value: Any) -> Window:
        w = object_or_empty(value)
        return cls(int_or_none(w.get("measured")), number_or_none(w.get("duration_s")),
                   _number(w.get("warmup_s", 0)), _number(w.get("cooldown_s", 0)), bool(w),
                   number_or_none(w.get("start_s")), number_or_none(w.get("end_s")))

    def to_json(self) -> dict[str, float | int | None]:
        return {"start_s": self.start_s, "end_s": self.end_s, "duration_s": self.duration_s,
                "warmup_s": self.warmup_s, "cooldown_s": self.cooldown_s, "measured": self.measured}


@frozen
class Saturation:
    """`run.client_saturation`: whether the client sent late (dispatch lag p99 over its threshold)."""

    saturated: bool
    lag_p99_s: float | None
    threshold_s: float | None

    @classmethod
    def from_json(cls, value: Any) -> Saturation | None:
        if not isinstance(value, dict):
            return None
        return cls(bool(value.get("saturated")), number_or_none(value.get("lag_p99_s")),
                   number_or_none(value.get("threshold_s")))

    def to_json(self) -> dict[str, bool | float | None]:
        return {"saturated": self.saturated, "lag_p99_s": self.lag_p99_s, "threshold_s": self.threshold_s}


@frozen
class Workload:
    """`run.workload`: what was sent (loadgen.workload's description)."""

    kind: str | None = None
    prefix: bool = False
    cache_bust: bool = False
    token_counter: str | None = None
    chat_template_tokens: int = 0
    prompt_tokens: str | None = None
    output_tokens: str | None = None
    path: str | None = None
    present: bool = False

    @classmethod
    def from_json(cls, value: Any) -> Workload:
        w = object_or_empty(value)
        return cls(_text(w.get("kind", "?")) if w else None, bool(w.get("prefix")), bool(w.get("cache_bust")),
                   text_or_none(w.get("token_counter")), count(w.get("chat_template_tokens")),
                   _text(w.get("prompt_tokens")), _text(w.get("output_tokens")), _text(w.get("path")), bool(w))


@frozen
class Resolved:
    """`run.resolved`: what the run resolved before its first request."""

    ignore_eos: bool | None = None
    sizing_counter: str | None = None  # prompt_sizing.counter
    sizing_method: str | None = None  # prompt_sizing.method: counter | tokenize | calibrate
    sizing_chat_template_tokens: int = 0
    predicted_hit_rate: float | None = None  # prefix_cache_prediction.hit_rate
    predicted_blocks: str = "block size not recorded"

    @classmethod
    def from_json(cls, value: Any) -> Resolved:
        r = object_or_empty(value)
        sizing, predicted = object_or_empty(r.get("prompt_sizing")), object_or_empty(r.get("prefix_cache_prediction"))
        ignore_eos = r.get("ignore_eos")
        return cls(ignore_eos if isinstance(ignore_eos, bool) else None, text_or_none(sizing.get("counter")),
                   text_or_none(sizing.get("method")), count(sizing.get("chat_template_tokens")),
                   number_or_none(predicted.get("hit_rate")),
                   str(predicted.get("blocks", "block size not recorded")))


@frozen
class Run:
    target: str | None = None
    embedded: bool = False
    model: str | None = None
    load: str | None = None
    open_loop: bool | None = None
    requests: int | None = None
    duration_s: float | None = None
    seed: int | None = None
    tool_version: str | None = None
    start_unix_s: float | None = None
    complete: bool = True
    interrupted: bool = False
    aborted: bool = False
    abort_reason: str | None = None
    write_error: str | None = None
    stopped_early: str | None = None  # why (its text), when the run stopped early
    ended_by: str | None = None
    workers_lost: int = 0
    unwritten_records: int | None = None
    percentile_method: str = "linear"
    client_saturated: bool = False
    client_saturation: Saturation | None = None
    window: Window = field(default_factory=Window)
    workload: Workload = field(default_factory=Workload)
    resolved: Resolved = field(default_factory=Resolved)

    @classmethod
    def from_json(cls, value: Any) -> Run:
        run = object_or_empty(value)
        open_loop, stopped = run.get("open_loop"), run.get("stopped_early")
        return cls(
            target=_text(run.get("target")), embedded=bool(run.get("embedded")), model=_text(run.get("model")),
            load=_text(run.get("load")), open_loop=None if open_loop is None else bool(open_loop),
            requests=int_or_none(run.get("requests")), duration_s=number_or_none(run.get("duration_s")),
            seed=int_or_none(run.get("seed")), tool_version=_text(run.get("tool_version")),
            start_unix_s=number_or_none(run.get("start_unix_s")), complete=bool(run.get("complete", True)),
            interrupted=bool(run.get("interrupted")), aborted=bool(run.get("aborted")),
            abort_reason=_text(run.get("abort_reason")), write_error=_text(run.get("write_error")),
            stopped_early=str(stopped) if stopped else None, ended_by=_text(run.get("ended_by")),
            workers_lost=_length(object_or_empty(run.get("workers")).get("lost")),
            unwritten_records=int_or_none(run.get("unwritten_records")),
            percentile_method=str(run.get("percentile_method", "linear")),
            client_saturated=bool(run.get("client_saturated")),
            client_saturation=Saturation.from_json(run.get("client_saturation")),
            window=Window.from_json(run.get("window")), workload=Workload.from_json(run.get("workload")),
            resolved=Resolved.from_json(run.get("resolved")),
        )
