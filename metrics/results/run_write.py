"""The typed writer of run.json: the run's document as frozen sections, serialised to the exact JSON (keys
in the same order) that `RunDocument` (metrics.results.run_view) and `read_run` read back.

A run writes run.json up to three times: when it starts (`RunStart`: the spec, what was resolved, the
target, the load), once its worker processes are known (`workers`), and when it ends (`RunEnd`: how it
ended). `complete` keeps its place after `output_dir` whichever write it is: false until the end says
otherwise. The sections the load generator describes in its own types (the spec, the workload, the
prompt sizing, the workers) are kept as JSON objects, checked once when the document is built
(`json_object`).

Light: the standard library only, like the rest of the contract a run imports before its first request;
its sections are named tuples, which cost a run's start-up a fifth of what frozen dataclasses did (each
is made once, when the module loads).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from metrics.results.atomic import write_json
from metrics.results.layout import RUN_FILE
from metrics.results.versions import RUN_SCHEMA_VERSION

if TYPE_CHECKING:
    from metrics.results.summary_parse import JsonObject


class RunResolved(NamedTuple):
    """`resolved`: what the run settled at its start, beyond its spec."""

    schedule_end_s: float | None  # where the measurement window's cool-down is measured back from
    roofline: JsonObject | None  # the deployment the roofline floors are for
    token_counter: str | None  # the client's token counter, as its configuration names it
    ignore_eos: bool
    prompt_sizing: JsonObject  # how prompts were sized: the method, then its detail
    prefix_cache_prediction: JsonObject | None = None  # a trace replay's; written only when there is one

    def to_json(self) -> JsonObject:
        out: JsonObject = {"schedule_end_s": self.schedule_end_s, "roofline": self.roofline,
                           "token_counter": self.token_counter, "ignore_eos": self.ignore_eos,
                           "prompt_sizing": self.prompt_sizing}
        if self.prefix_cache_prediction is not None:
            out["prefix_cache_prediction"] = self.prefix_cache_prediction
        return out


class RunStart(NamedTuple):
    """What run.json says before the first request is sent."""

    spec: JsonObject  # RunSpec.to_json()
    resolved: RunResolved
    target: str  # the server's public URL (no user info)
    embedded: bool
    model: str | None  # the model under test, or a mix's `--model` text
    endpoint: str
    load: str  # the arrival process as text ("poisson@20.00")
    open_loop: bool
    duration_s: float | None
    requests: int | None
    seed: int
    workload: JsonObject
    tool_version: str
    output_dir: str
    models: JsonObject | None = None  # a mix of more than one model: its shares, written after `model`
    schema_version: int = RUN_SCHEMA_VERSION

    def to_json(self, *, complete: bool) -> JsonObject:
        out: JsonObject = {"schema_version": self.schema_version, "spec": self.spec,
                           "resolved": self.resolved.to_json(), "target": self.target, "embedded": self.embedded,
                           "model": self.model}
        if self.models is not None:
            out["models"] = self.models
        out.update({"endpoint": self.endpoint, "load": self.load, "open_loop": self.open_loop,
                    "duration_s": self.duration_s, "requests": self.requests, "seed": self.seed,
                    "workload": self.workload, "tool_version": self.tool_version, "output_dir": self.output_dir,
                    "complete": complete})
        return out


class RunEnd(NamedTuple):
    """How the run ended, written once its last request is done."""

    start_unix_s: float  # the wall time of the run's time zero
    complete: bool  # the planned load was all sent and every record written
    interrupted: bool  # Ctrl-C or SIGTERM
    unwritten_records: int
    aborted: bool  # the gate stopped the run (abort-on-fail)
    abort_reason: str | None = None  # written only when it did
    write_error: str | None = None  # records.jsonl could not be written: 'PATH: reason'
    stopped_early: str | None = None  # dispatching stopped on the first requests all failing alike

    def to_json(self) -> JsonObject:
        out: JsonObject = {"start_unix_s": self.start_unix_s, "interrupted": self.interrupted,
                           "unwritten_records": self.unwritten_records, "aborted": self.aborted}
        for key, value in (("abort_reason", self.abort_reason), ("write_error", self.write_error),
                           ("stopped_early", self.stopped_early)):
            if value is not None:
                out[key] = value
        return out


class RunFile(NamedTuple):
    """run.json as the run writes it: its start, the worker processes (when there are), its end."""

    start: RunStart
    workers: JsonObject | None = None  # the pool (`Pool.describe`), and at the end the workers lost
    end: RunEnd | None = None

    def with_workers(self, workers: JsonObject) -> RunFile:
        return self._replace(workers=workers)

    def ended(self, end: RunEnd) -> RunFile:
        return self._replace(end=end)

    @property
    def workers_lost(self) -> bool:
        """Workers were lost during the run (their share of the load was not all sent)."""
        return bool(self.workers.get("lost")) if self.workers is not None else False

    def to_json(self) -> JsonObject:
        """The document, keys in the order its readers have always found them (a new top-level object each time)."""
        out = self.start.to_json(complete=self.end.complete if self.end is not None else False)
        if self.workers is not None:
            out["workers"] = self.workers
        if self.end is not None:
            out.update(self.end.to_json())
        return out


def write_run_file(directory: Path, run: RunFile) -> None:
    """run.json in `directory`, replaced atomically (OSError naming it when it cannot be written)."""
    write_json(directory / RUN_FILE, run.to_json())
