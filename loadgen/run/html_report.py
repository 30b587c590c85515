"""A run directory's HTML report (exporters.html), with the metric settings read from its run.json the way
its summary read them, and the gate's baseline run for thresholds relative to it.

`goodput report DIR --html` calls it with the frame and ITL samples it has just summarised; `goodput run`
at the end of a run, likewise, with its gate's baseline already loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from exporters.html import run_gate_baseline, summary_run, write_report
from loadgen.run.gate import load_run_view
from loadgen.run.outputs import run_summary_config
from metrics import SLO
from metrics.gate import RunView
from metrics.latency import Samples
from metrics.records import RequestFrame
from metrics.results import RunDocument, read_summary


def gate_baseline(run_dir: Path, *, quiet: bool = False) -> RunView | None:
    """The baseline run the run's gate compared with, re-judged with the run's SLOs as the gate does; None
    when it had none, or (said on stderr unless `quiet`) when it cannot be read any more."""
    run = RunDocument.from_json(summary_run(read_summary(run_dir)))
    base_dir = run_gate_baseline(run)
    if base_dir is None:
        return None
    slo = run_summary_config(run).slo
    try:
        return load_run_view(Path(base_dir), slo=slo if slo != SLO() else None)
    except ValueError as exc:
        if not quiet:
            print(f"goodput: the gate's baseline {base_dir} could not be read ({exc}); thresholds relative to it "
                  "are not judged in the HTML report", file=sys.stderr)
        return None


def write_run_report(run_dir: Path, *, path: Path | None = None, frame: RequestFrame | None = None,
                     gaps: tuple[Samples, Samples] | None = None, baseline: RunView | None = None,
                     load_baseline: bool = True) -> Path:
    """Write DIR/report.html (or `path`) for a run whose summary.json is written; return where.

    `frame` and `gaps` (ITL and ITL per token, sorted) save reading and sorting them again; `baseline` is the
    gate's baseline run when the caller has it loaded, else it is loaded here unless `load_baseline` is
    false. ValueError: not a run directory with a summary; OSError: reading or writing failed; RuntimeError:
    the plotting library is not installed."""
    config = run_summary_config(RunDocument.from_json(summary_run(read_summary(run_dir))))
    if baseline is None and load_baseline:
        baseline = gate_baseline(run_dir)
    return write_report(run_dir, config, path=path, frame=frame, gaps=gaps, baseline=baseline)
