"""Thresholds on a capacity search: `goodput gate CAPACITY_DIR` and `goodput capacity --threshold ...`.

`capacity:*` thresholds (metrics.gate.thresholds) are judged on capacity.json the way run thresholds are
judged on summary.json: same grammar, operators, `| nodata=pass`, baselines (another capacity
directory: `capacity:rate >= baseline * 0.95`), verdict lines, JUnit XML and Markdown, exit 99.
A capacity search answers nothing else: a run threshold given for it is a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from loadgen.run import GatePlan, check_output_files, judge
from metrics.gate import RunView, Threshold, load_gate_config, parse_threshold
from metrics.results import CapacityView, json_object, read_capacity


def capacity_view(directory: Path) -> RunView:
    """A capacity search as thresholds see it (ValueError when `directory` is not one)."""
    return RunView(summary=json_object(read_capacity(directory).to_json()))


def check_capacity_thresholds(thresholds: Sequence[Threshold]) -> None:
    run_only = [t.text for t in thresholds if not t.query.of_capacity]
    if run_only:
        raise ValueError(f"threshold {run_only[0]!r} is about a run; a capacity search is judged on capacity:* "
                         "(rate, upper, attainment, points, requests); gate one of its points with "
                         "`goodput gate DIR/points/<point>`")


def capacity_gate_plan(thresholds: Sequence[Threshold], *, baseline: Path | None, junit: Path | None,
                       markdown: Path | None) -> GatePlan:
    """The gate of a capacity search, its baseline (another capacity search) loaded now: ValueError for
    anything that is wrong, before the search sends a request."""
    check_capacity_thresholds(thresholds)
    check_output_files(junit=junit, markdown=markdown)
    relative = [t.text for t in thresholds if t.needs_baseline]
    if relative and baseline is None:
        raise ValueError(f"threshold {relative[0]!r} is relative to a baseline: pass --baseline CAPACITY_DIR")
    view = None
    if baseline is not None:
        try:
            view = capacity_view(baseline)
        except ValueError as exc:
            raise ValueError(f"--baseline: {exc}") from None
    return GatePlan(thresholds=list(thresholds), baseline=view, baseline_dir=baseline, junit=junit, markdown=markdown)


def judge_capacity(plan: GatePlan, doc: CapacityView, *, label: str) -> int:
    """Print the verdicts (stdout), write JUnit / Markdown; 0 pass, 99 fail (ValueError / LookupError when
    a threshold cannot be judged at all)."""
    return judge(plan, RunView(summary=json_object(doc.to_json())), label=label)  # thresholds query the document's JSON


def gate_capacity_dir(directory: Path, *, thresholds: Sequence[str], config: Path | None, baseline: Path | None,
                      slo: Sequence[str] | None, junit: Path | None, markdown: Path | None) -> int:
    """`goodput gate CAPACITY_DIR`: 0 every threshold passed, 99 one failed; ValueError (exit 2) for an
    invalid threshold, config, directory or baseline."""
    if slo:
        raise ValueError("--slo re-judges a run's requests; a capacity search was made with its SLO: run "
                         "`goodput capacity` again with the other one")
    cfg = load_gate_config(config) if config is not None else None
    parsed = [*(cfg.thresholds if cfg else []), *(parse_threshold(t) for t in thresholds)]
    if not parsed:
        raise ValueError("no thresholds: give --threshold or --config")
    doc = read_capacity(directory)
    plan = capacity_gate_plan(parsed, baseline=baseline or (cfg.baseline if cfg else None),
                              junit=junit or (cfg.junit if cfg else None),
                              markdown=markdown or (cfg.markdown if cfg else None))
    if doc.complete is False:
        print(f"warning: {directory} is an incomplete capacity search (interrupted); judging what it found",
              file=sys.stderr)
    return judge_capacity(plan, doc, label=str(directory))
