"""`goodput gate` (thresholds on a finished run) and `goodput compare` (candidate vs baseline with
bootstrap intervals). Exit codes: 0 pass, 99 thresholds failed (or, with --fail-on-regression, a
flagged regression), 2 invalid thresholds / config / run directory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from loadgen.run import run_summary_config
from metrics import SLO, parse_slo
from metrics.results import RECORDS_FILE, read_run_view, summary_or_none

if TYPE_CHECKING:  # imported by the commands themselves: `goodput --help` stays light
    from metrics.gate import Row, RunSamples
    from metrics.summary import SummaryConfig

GATE_HELP = """Check a finished run against thresholds; exit 99 when any fails (k6's code), 2 when a threshold is invalid.

A threshold is the pass condition METRIC[{FILTERS}]:AGGREGATION OP VALUE. Bare numbers on durations
are seconds. An empty metric fails unless the threshold ends with '| nodata=pass'.

\b
Examples:
  goodput gate runs/cand --threshold 'ttft:p(99)<500ms' \\
      --threshold 'goodput:attainment>=0.95'
  goodput gate runs/cand --baseline runs/main \\
      --threshold 'ttft:p(99) < baseline * 1.10' \\
      --threshold 'goodput:attainment >= baseline - 0.02' \\
      --junit gate.xml --markdown gate.md
  # SLOs, thresholds and outputs in one file
  goodput gate runs/cand --config gate.yaml
  goodput gate runs/cand \\
      --threshold 'ttft{prompt_bucket:2k-8k,cache:none}:p(95)<2s' \\
      --threshold 'errors:rate<1%'
"""

COMPARE_HELP = """Compare a candidate run with baseline runs: what changed beyond noise, per metric and bucket.

Takes one baseline run, or several runs of the baseline configuration, then the candidate. Per metric and
bucket: the change and a bootstrap confidence interval over requests (seeded). A change is
flagged only when its interval excludes zero, it leaves the run-to-run spread of the baseline runs (given
two or more), and it is at least --min-change of the baseline (and --min-change-abs for durations), so
noise is not mistaken for a regression. Prints the table and writes it as Markdown.

\b
Examples:
  # writes runs/cand/compare.md
  goodput compare runs/main runs/cand
  # three baseline runs, then the candidate
  goodput compare runs/main-1 runs/main-2 runs/main-3 runs/cand
  goodput compare runs/main runs/cand --stat 'ttft:p(90)' --stat 'tpot:avg' \\
      --output compare.md
  # exit 99 on a regression
  goodput compare runs/main runs/cand --fail-on-regression --min-change 10%
  # also the runs overlaid, as a page with plots
  goodput compare runs/main runs/cand --html compare.html
"""


def _bad(message: str) -> typer.BadParameter:
    return typer.BadParameter(message)


def gate(
    run_dir: Annotated[Path, typer.Argument(help="A finished run's output directory.")],
    threshold: Annotated[list[str] | None, typer.Option(help="Pass condition, e.g. 'ttft:p(99)<500ms' (repeat).")] = None,
    config: Annotated[Path | None, typer.Option(envvar="GOODPUT_GATE_CONFIG", help="YAML or TOML file with slo, thresholds and options.")] = None,
    baseline: Annotated[Path | None, typer.Option(help="Baseline run directory for 'baseline * 1.10' limits.")] = None,
    slo: Annotated[list[str] | None, typer.Option(help="Re-judge goodput with these SLOs: ttft=500ms, tpot=50ms (repeat).")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here (one test case per threshold).")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY).")] = None,
) -> int:
    from metrics.results import is_capacity_dir

    if is_capacity_dir(run_dir):  # a `goodput capacity` directory: capacity:* thresholds on its capacity.json
        from loadgen.sweep import gate_capacity_dir

        try:
            code = gate_capacity_dir(run_dir, thresholds=threshold or [], config=config, baseline=baseline,
                                     slo=slo, junit=junit, markdown=markdown)
        except (LookupError, ValueError) as exc:
            raise _bad(str(exc)) from None
        except OSError as exc:  # --junit / --markdown checked beforehand, and still not writable
            raise typer.Exit(_write_failed(exc)) from None
        if code:
            raise typer.Exit(code)
        return 0
    from loadgen.run import build_gate_plan, judge, load_run_view  # here: `goodput --help` stays light
    from metrics.gate import load_gate_config
    from metrics.results import RunDocument

    try:
        own = run_summary_config(read_run_view(run_dir) if run_dir.is_dir() else RunDocument())  # the run's edges and SLOs
        cfg = load_gate_config(config) if config is not None else None
        cfg_slo = cfg.slo if cfg is not None and cfg.slo != SLO() else None
        rejudge = parse_slo(slo, base=cfg_slo) if slo else cfg_slo  # --slo on top of the config file's
        plan = build_gate_plan(thresholds=threshold or [], config=cfg, baseline=baseline, abort_on_fail=False,
                               abort_delay_s=None, junit=junit, markdown=markdown,
                               prompt_edges=own.prompt_bucket_edges, output_edges=own.output_bucket_edges,
                               slo=own.slo, rejudge=rejudge)
        if plan is None:
            raise _bad("no thresholds: give --threshold or --config")
        run = load_run_view(run_dir, slo=rejudge)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    info = RunDocument.from_json(run.summary.get("run"))
    if info.complete is False:
        why = "aborted by a threshold" if info.aborted else "interrupted"
        typer.echo(f"warning: {run_dir} is an incomplete run ({why}); judging what it measured", err=True)
    try:
        code = judge(plan, run, label=str(run_dir))
    except (LookupError, ValueError) as exc:
        raise _bad(str(exc)) from None
    except OSError as exc:
        raise typer.Exit(_write_failed(exc)) from None
    if code:
        raise typer.Exit(code)
    return 0


def _write_failed(exc: OSError) -> int:
    typer.echo(f"goodput gate: error: cannot write {exc.filename or 'an output file'}: {exc.strerror or exc}",
               err=True)
    return 1


def _fraction(text: str, name: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise _bad(f"{name} expects a number or a percentage, got {text!r}") from None
    if value < 0:
        raise _bad(f"{name} must not be negative")
    return value


def compare(
    base_dirs: Annotated[list[Path], typer.Argument(
        metavar="BASELINE", help="One or more baseline run directories (repeated runs of one configuration).")],
    cand_dir: Annotated[Path, typer.Argument(metavar="CANDIDATE", help="The candidate run directory.")],
    stat: Annotated[list[str] | None, typer.Option(help="Statistic to compare, e.g. 'ttft:p(99)' (repeat; default: a standard set).")] = None,
    output: Annotated[Path | None, typer.Option(help="Markdown file to write (default CANDIDATE/compare.md).")] = None,
    slo: Annotated[list[str] | None, typer.Option(help="Judge goodput of every run with these SLOs.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
    confidence: Annotated[float, typer.Option(help="Confidence: family-wise for the intervals (Bonferroni over rows), per row for the run-to-run band.")] = 0.95,
    min_change: Annotated[str, typer.Option(help="Smallest change flagged, relative to the baseline, e.g. 10%; 0 turns it off.")] = "5%",
    min_change_abs: Annotated[str, typer.Option(help="Smallest change flagged on a duration, e.g. 5ms; 0 turns it off.")] = "1ms",
    buckets: Annotated[bool, typer.Option("--buckets/--no-buckets", help="Compare per bucket too.")] = True,
    fail_on_regression: Annotated[bool, typer.Option(help="Exit 99 when a regression is flagged.")] = False,
    html: Annotated[Path | None, typer.Option("--html", metavar="PATH", help="Also write an HTML page overlaying the runs (CDFs, over time) with this table.")] = None,
) -> int:
    from exporters import change_cells, compare_markdown, compare_rule_text, render_table, write_markdown
    from loadgen.run import EXIT_THRESHOLDS_FAILED, check_output_file
    from metrics import parse_duration
    from metrics.gate import DEFAULT_STATS, RunSamples, compare_runs, parse_stat
    from metrics.records import frame_from_jsonl

    try:  # both written at the end: checked before the runs are read
        if output is not None or cand_dir.is_dir():  # a missing candidate is reported as such below
            check_output_file(output or cand_dir / "compare.md", "--output")
        if html is not None:
            check_output_file(html, "--html")
    except ValueError as exc:
        raise _bad(str(exc)) from None
    run_dirs = [*base_dirs, cand_dir]
    stats = list(stat or DEFAULT_STATS)
    min_rel = _fraction(min_change, "--min-change")
    try:
        min_abs = parse_duration(min_change_abs)
    except ValueError as exc:
        raise _bad(f"--min-change-abs: {exc}") from None
    try:
        for s in stats:
            parse_stat(s)
        judged_with = parse_slo(slo) if slo else None
        runs = []
        for d in run_dirs:
            if not (d / RECORDS_FILE).is_file():
                raise ValueError(f"no {RECORDS_FILE} in {d}")
            config = run_summary_config(read_run_view(d), slo=judged_with)
            runs.append((config, RunSamples(frame_from_jsonl(d / RECORDS_FILE), config)))
        rows = compare_runs([r for _, r in runs[:-1]], runs[-1][1], stats, resamples=resamples,
                            confidence=confidence, min_change=min_rel, min_change_abs=min_abs, seed=seed,
                            buckets=buckets)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    if not slo and any(config.slo != runs[0][0].slo for config, _ in runs):
        typer.echo("warning: the runs were judged with different SLOs; goodput rows compare unlike things "
                   "(pass --slo to judge them all alike)", err=True)
    table = [["scope", "metric", "n", "baseline", "candidate", "change", "interval", ""]]
    for r in rows:
        table.append([r.scope, r.query.describe(), f"{r.base_n}/{r.cand_n}", *change_cells(r)])
    print(render_table(table))
    path = output or cand_dir / "compare.md"
    write_markdown(path, compare_markdown(rows, base=[str(d) for d in base_dirs], cand=str(cand_dir),
                                          confidence=confidence, seed=seed, min_change=min_rel,
                                          min_change_abs_s=min_abs))
    if len(base_dirs) == 1:
        print("baseline: 1 run — run-to-run variance not measured, so a flag may be a whole run shifted by a busy "
              "machine; pass 3-5 repeated baseline runs (BASELINE... CANDIDATE) to account for it")
    else:
        print(f"baseline: {len(base_dirs)} runs — a flag must also leave their run-to-run spread")
    regressions = [r for r in rows if r.flag == "regression"]
    print(f"{len(regressions)} regression(s) flagged; markdown: {path}")
    if html is not None:
        rule = compare_rule_text(baselines=len(base_dirs), confidence=confidence, seed=seed, min_change=min_rel,
                                 min_change_abs_s=min_abs)
        try:
            print(f"HTML report: {write_compare_html(html, run_dirs, runs, rows, rule)}")
        except (OSError, RuntimeError) as exc:
            typer.echo(f"goodput compare: error: {exc}", err=True)
            raise typer.Exit(1) from None
    if regressions and fail_on_regression:
        raise typer.Exit(EXIT_THRESHOLDS_FAILED)
    return 0


def write_compare_html(path: Path, run_dirs: list[Path], runs: list[tuple[SummaryConfig, RunSamples]],
                       rows: list[Row], rule: str) -> Path:
    """The comparison page, from the samples the table was computed from (the last run is the candidate)."""
    from exporters.html import read_server_series, run_data, run_label, write_compare_report

    loaded = []
    for d, (config, samples) in zip(run_dirs, runs, strict=True):
        summary = summary_or_none(d) or {}  # flags need it; the figures come from the records
        loaded.append(run_data(run_label(d), summary, read_run_view(d), samples.frame,
                               config, gaps=(samples.samples["itl_s"], samples.samples["itl_token_s"]),
                               server_series=read_server_series(d)))
    return write_compare_report(path, loaded[:-1], loaded[-1], rows, rule)
