"""What sweep.json and capacity.json share: the server their points were sent to and the throughput
ceiling a closed-loop point measured. Typed, frozen views written back as the JSON goodput writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict

from metrics.results.fields import flag, integer, num, obj, obj_or_none, text
from metrics.results.frozen_view import frozen

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json


class EmptyJson(TypedDict):
    """`{}`: what a document says of a server it does not know (yet)."""


class ServerJson(TypedDict):
    url: str | None
    embedded: bool
    server_args: NotRequired[list[str]]
    started: NotRequired[str]


class CeilingJson(TypedDict):
    concurrency: int | None
    requests_per_s: float | None
    label: str | None
    measured_as: NotRequired[str]


@frozen
class ServerInfo:
    """`server`: the URL every point went to; an embedded reference server's arguments and when it started."""

    url: str | None
    embedded: bool
    server_args: tuple[str, ...] | None = None  # embedded only
    started: str | None = None  # embedded only: "once, for every point"

    def to_json(self) -> ServerJson:
        out: ServerJson = {"url": self.url, "embedded": self.embedded}
        if self.server_args is not None:
            out["server_args"] = list(self.server_args)
        if self.started is not None:
            out["started"] = self.started
        return out

    @classmethod
    def from_json(cls, value: Json) -> ServerInfo | None:
        """None when the document has no server (written before one was known)."""
        data = obj_or_none(value)
        if not data:
            return None
        args = data.get("server_args")
        return cls(text(data.get("url")), bool(flag(data.get("embedded"))),
                   tuple(str(a) for a in args) if isinstance(args, list) else None, text(data.get("started")))


@frozen
class Ceiling:
    """`ceiling`: the requests/s a closed-loop point completed at `concurrency` (the point `label`)."""

    concurrency: int | None
    requests_per_s: float | None
    label: str | None
    measured_as: str | None = None  # capacity.json's note on what was counted

    def to_json(self) -> CeilingJson:
        out: CeilingJson = {"concurrency": self.concurrency, "requests_per_s": self.requests_per_s,
                            "label": self.label}
        if self.measured_as is not None:
            out["measured_as"] = self.measured_as
        return out

    @classmethod
    def from_json(cls, value: Json) -> Ceiling | None:
        data = obj_or_none(value)
        if not data:
            return None
        return cls(integer(data.get("concurrency")), num(data.get("requests_per_s")), text(data.get("label")),
                   text(data.get("measured_as")))


def spec_json(value: Json) -> Mapping[str, Json]:
    """The run spec every point starts from, as JSON (loadgen.spec reads it: RunSpec.from_json)."""
    return obj(value)


def numbers(value: Json) -> dict[str, float]:
    """An object's numbers by name, as written (an int stays an int), in its order; the rest left out."""
    return {k: n for k, v in obj(value).items() if (n := num(v)) is not None}


def spec_slo(spec: Mapping[str, Json]) -> dict[str, float]:
    """The SLO the run spec sets (`metrics.slo`): its parts that are numbers."""
    return numbers(obj(spec.get("metrics")).get("slo"))


def spec_lag_threshold_s(spec: Mapping[str, Json]) -> float | None:
    """The run spec's --lag-threshold (`metrics.lag_threshold_s`), None when not set."""
    return num(obj(spec.get("metrics")).get("lag_threshold_s"))
