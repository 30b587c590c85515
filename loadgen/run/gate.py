"""The gate inside `goodput run` and `goodput gate`: build the plan before any request, watch a running
test for abort-on-fail, and judge the finished run (console verdicts, JUnit XML, Markdown, exit 99).

Abort-on-fail (k6's `abortOnFail` + `delayAbortEval`): after `abort_delay_s` of the run, every
`abort_interval_s` the records so far are summarised off the event loop and the abort thresholds are
evaluated (less often when judging a long run takes a while); the first definite failure stops dispatching (`Runner.stop(interrupted=False)`), in-flight
requests get the grace period, and the outputs are written as usual. No data is never a reason to abort
(early in a run most metrics have none). An aborted run has `run.aborted: true`, `run.abort_reason`,
and `complete: false` — the planned load was not all sent, so nothing may read it as a full test —
while `interrupted` stays false (nobody pressed Ctrl-C). Its exit code is 99.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict

from exporters import gate_markdown, write_junit, write_markdown
from loadgen.dispatch import RunState
from loadgen.run.output_files import check_output_files
from loadgen.run.outputs import RECORDS_FILE, read_run, run_summary_config
from loadgen.spec import RunSpec
from metrics import SLO
from metrics.gate import GateConfig, RunView, Threshold, Verdict, check_labels, failed, parse_threshold
from metrics.gate import evaluate_thresholds as evaluate
from metrics.records import RequestRecord
from metrics.results import SUMMARY_FILE, load_summary
from metrics.summary import DEFAULT_OUTPUT_EDGES, DEFAULT_PROMPT_EDGES, SummaryConfig, summarize

if TYPE_CHECKING:
    from metrics.results import JsonObject

EXIT_THRESHOLDS_FAILED = 99
DEFAULT_ABORT_DELAY_S = 10.0
DEFAULT_ABORT_INTERVAL_S = 1.0


@dataclass(slots=True)
class GatePlan:
    thresholds: list[Threshold]
    abort_thresholds: list[Threshold] = field(default_factory=list)
    abort_delay_s: float = DEFAULT_ABORT_DELAY_S
    abort_interval_s: float = DEFAULT_ABORT_INTERVAL_S
    baseline: RunView | None = None
    baseline_dir: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    abort_verdicts: list[Verdict] = field(default_factory=list)  # filled when the watcher stopped the run
    aborted_at_s: float | None = None


def build_gate_plan(
    *,
    thresholds: Sequence[str],
    config: GateConfig | None,
    baseline: Path | None,
    abort_on_fail: bool,
    abort_delay_s: float | None,
    junit: Path | None,
    markdown: Path | None,
    prompt_edges: Sequence[int] | None = None,
    output_edges: Sequence[int] | None = None,
    slo: SLO | None = None,
    rejudge: SLO | None = None,
) -> GatePlan | None:
    """Every gate option checked (ValueError with a user-facing message); None when nothing is gated.

    `config`: the gate's config file, loaded. `rejudge`: the SLO the candidate is re-judged with (the config
    file's with --slo on top), else None; the baseline is re-judged with it, or with the candidate's own
    `slo`, so relative goodput thresholds compare like with like."""
    cfg = config
    parsed = [parse_threshold(t) for t in thresholds]
    if cfg is not None:
        parsed = [*cfg.thresholds, *parsed]
    if not parsed:
        if abort_on_fail or baseline or junit or markdown:
            raise ValueError("--abort-on-fail, --baseline, --junit and --markdown need thresholds (--threshold or --config)")
        return None
    check_labels(parsed, prompt_edges=prompt_edges or DEFAULT_PROMPT_EDGES,
                 output_edges=output_edges or DEFAULT_OUTPUT_EDGES)
    abort_all = abort_on_fail or (cfg is not None and cfg.abort_on_fail)
    plan = GatePlan(
        thresholds=parsed,
        abort_thresholds=list(parsed) if abort_all else list(cfg.abort_thresholds if cfg else []),
        baseline_dir=baseline or (cfg.baseline if cfg else None),
        junit=junit or (cfg.junit if cfg else None),
        markdown=markdown or (cfg.markdown if cfg else None),
    )
    check_output_files(junit=plan.junit, markdown=plan.markdown)
    delay = abort_delay_s if abort_delay_s is not None else (cfg.abort_delay_s if cfg else None)
    if delay is not None:
        plan.abort_delay_s = delay
    if cfg is not None and cfg.abort_interval_s:
        plan.abort_interval_s = cfg.abort_interval_s
    if plan.baseline_dir is not None:
        own = slo if slo is not None and slo != SLO() else None
        plan.baseline = load_run_view(plan.baseline_dir, slo=rejudge if rejudge is not None else own)
    relative = [t.text for t in parsed if t.needs_baseline]
    if relative and plan.baseline is None:
        raise ValueError(f"threshold {relative[0]!r} is relative to a baseline: pass --baseline DIR")
    return plan


def gate_plan(spec: RunSpec) -> GatePlan | None:
    """The gate of `goodput run`, from its spec; None when nothing is gated. Loads the baseline run, re-judged
    with the candidate's SLOs so relative goodput thresholds compare like with like (ValueError: usage)."""
    gate, metrics = spec.gate, spec.metrics
    if not gate.enabled:
        return None
    check_labels(gate.thresholds, prompt_edges=metrics.prompt_bucket_edges or DEFAULT_PROMPT_EDGES,
                 output_edges=metrics.output_bucket_edges or DEFAULT_OUTPUT_EDGES)
    plan = GatePlan(thresholds=list(gate.thresholds), abort_thresholds=list(gate.abort_thresholds),
                    baseline_dir=Path(gate.baseline) if gate.baseline is not None else None,
                    junit=Path(gate.junit) if gate.junit is not None else None,
                    markdown=Path(gate.markdown) if gate.markdown is not None else None)
    check_output_files(junit=plan.junit, markdown=plan.markdown)
    if gate.abort_delay_s is not None:
        plan.abort_delay_s = gate.abort_delay_s
    if gate.abort_interval_s is not None:
        plan.abort_interval_s = gate.abort_interval_s
    if plan.baseline_dir is not None:
        plan.baseline = load_run_view(plan.baseline_dir, slo=metrics.slo if metrics.slo != SLO() else None)
    return plan


def load_run_view(run_dir: Path, *, slo: SLO | None = None) -> RunView:
    """A finished run's summary.json (re-judged from records.jsonl when `slo` replaces its SLOs), with
    its records behind it for questions the summary cannot answer. ValueError if it is not a run."""
    summary_path = run_dir / SUMMARY_FILE
    records_path = run_dir / RECORDS_FILE
    if not summary_path.is_file() and not records_path.is_file():
        raise ValueError(f"{run_dir} is not a run directory (no {SUMMARY_FILE} or {RECORDS_FILE})")
    try:
        run = read_run(run_dir)
        summary = load_summary(run_dir) if summary_path.is_file() else None
    except (OSError, ValueError) as exc:
        raise ValueError(f"unreadable run in {run_dir}: {exc}") from None
    if summary is not None and not run:
        run = dict(summary.get("run", {}))
    from metrics.results import RunDocument  # the view of run.json: loaded once a run is judged

    config = run_summary_config(RunDocument.from_json(run), slo=slo)

    def samples() -> Any:
        from metrics.gate import RunSamples
        from metrics.records import frame_from_jsonl

        if not records_path.is_file():
            raise ValueError(f"no {RECORDS_FILE} in {run_dir}")
        return RunSamples(frame_from_jsonl(records_path), config)

    if summary is None or slo is not None:
        if not records_path.is_file():
            raise ValueError(f"no {RECORDS_FILE} in {run_dir} to re-judge with other SLOs")
        from metrics.records import frame_from_jsonl

        summary = summarize(frame_from_jsonl(records_path), config, run)
    return RunView(summary=summary, records=samples)


class Stoppable(Protocol):
    """What abort-on-fail watches and stops: a runner, or the coordinator of worker processes."""

    @property
    def state(self) -> RunState: ...

    def stop(self, *, interrupted: bool = True) -> None: ...


async def watch_for_abort(runner: Stoppable, plan: GatePlan, config: SummaryConfig, run_info: JsonObject) -> None:
    """Stop the runner at the first definite failure of an abort threshold (see the module docstring)."""
    if not plan.abort_thresholds:
        return
    await asyncio.sleep(plan.abort_delay_s)
    pause_s = plan.abort_interval_s
    while not runner.state.stopping:
        snapshot = list(runner.state.records)
        if snapshot:
            started = time.perf_counter()
            verdicts = await asyncio.to_thread(_judge_live, plan, snapshot, config, dict(run_info))
            # The worker thread still competes for the GIL with the event loop: on a long run, judge
            # less often rather than let the judging take more than a fifth of the time.
            pause_s = max(plan.abort_interval_s, 4 * (time.perf_counter() - started))
            # A failure measured on this run; "no data" (here or in the baseline) is never a reason to stop.
            definite = [v for v in verdicts if not v.passed and v.value is not None and v.limit is not None]
            if definite and not runner.state.stopping:
                plan.abort_verdicts = definite
                plan.aborted_at_s = runner.state.elapsed_s()
                runner.stop(interrupted=False)
                return
        await asyncio.sleep(pause_s)


def _judge_live(
    plan: GatePlan, records: list[RequestRecord], config: SummaryConfig, run_info: JsonObject
) -> list[Verdict]:
    """The abort thresholds over the records so far (runs in a worker thread, off the event loop)."""
    from metrics.gate import RunSamples
    from metrics.records import frame_from_records

    frame = frame_from_records(records)
    view = RunView(summarize(frame, config, run_info), records=lambda: RunSamples(frame, config))
    return evaluate(plan.abort_thresholds, view, plan.baseline)


class AbortFields(TypedDict):
    """run.json / summary.json `run` fields telling whether and why the gate stopped the run."""

    aborted: bool
    abort_reason: NotRequired[str]  # only when it did


def abort_fields(plan: GatePlan | None) -> AbortFields:
    """run.json / summary.json `run` fields telling whether and why the gate stopped the run."""
    if plan is None or not plan.abort_verdicts:
        return {"aborted": False}
    reason = "; ".join(v.line() for v in plan.abort_verdicts)
    return {"aborted": True, "abort_reason": f"threshold failed at {plan.aborted_at_s or 0:.1f} s: {reason}"}


def judge(plan: GatePlan, run: RunView, *, label: str) -> int:
    """Evaluate, print one verdict line per threshold and the count on stdout, write the CI files;
    0 pass, 99 fail. Errors that stop the evaluation are raised (the caller puts them on stderr)."""
    verdicts = evaluate(plan.thresholds, run, plan.baseline)
    for v in verdicts:
        print(v.line())
    if plan.junit is not None:
        write_junit(plan.junit, verdicts, run=label)
    if plan.markdown is not None:
        baseline = str(plan.baseline_dir) if plan.baseline_dir else None
        write_markdown(plan.markdown, gate_markdown(verdicts, run=label, baseline=baseline))
    # The whole verdict goes to stdout, pass or fail: it is the command's result, and a CI log read
    # from one stream must not lose the summary line exactly when the gate failed.
    bad = failed(verdicts)
    if bad:
        print(f"thresholds: {len(bad)} of {len(verdicts)} failed")
        return EXIT_THRESHOLDS_FAILED
    print(f"thresholds: all {len(verdicts)} passed")
    return 0


def finish_run_gate(plan: GatePlan | None, out_dir: Path, summary: JsonObject) -> int:
    """After `goodput run` wrote its outputs: judge the run (0 when nothing is gated)."""
    if plan is None:
        return 0
    if plan.abort_verdicts:
        print(f"run aborted: {abort_fields(plan)['abort_reason']}")  # part of the verdict: stdout, as judge()
    from metrics.results import RunDocument  # the view of run.json: loaded once a run is judged

    config = run_summary_config(RunDocument.from_json(summary.get("run", {})))

    def samples() -> Any:
        from metrics.gate import RunSamples
        from metrics.records import frame_from_jsonl

        return RunSamples(frame_from_jsonl(out_dir / RECORDS_FILE), config)

    try:
        code = judge(plan, RunView(summary=summary, records=samples), label=str(out_dir))
        # Stopped by a threshold: failed, even if requests that finished after the stop pulled the
        # whole-run figure back under the limit.
        return EXIT_THRESHOLDS_FAILED if plan.abort_verdicts else code
    except (LookupError, ValueError) as exc:
        print(f"goodput: error: thresholds could not be evaluated: {exc}", file=sys.stderr)
        return 2
