"""`goodput calibrate`: fit the step-time model of a server (loadgen.predict) from its measured runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from metrics.results import POINTS_DIR, RECORDS_FILE

FEW_PREFILL_STEPS = 10  # fewer fitted steps that carry prefill tokens than this: calibrate says the cost rests on them

CALIBRATE_HELP = """Fit a step-time model of the served engine from measured runs.

Reads each run directory's records.jsonl (a sweep or capacity directory: every point's), rebuilds the
engine's steps from the chunk times (the reference server's per-chunk server times when present) and
fits step_s = fixed + prefill·P + prefill_ctx·P·context + decode_seq·D + decode_kv·K by least squares,
additive or overlapped (fixed + max(memory + decode_kv·K, the rest)): the better fit wins.
Prints each parameter with its standard error and the residuals per run; writes --output for
goodput predict. Where the runs scraped the server's /metrics (vLLM, the reference server):
block size, KV blocks and prefix caching come from vllm:cache_config_info, and its prefill, decode
and queue histograms and running/waiting gauges are printed beside each run's residuals; its mean
prefill time is fitted where the chunk times cannot identify prefill_s. A flag overrides the server;
--max-num-seqs and --max-num-batched-tokens are never published: give the server's.
With --model and --gpu the roofline bounds each parameter from below (no token computes faster than
its FLOPs at peak); a parameter the runs cannot identify is then held at its bound. Otherwise: exit 2
with one line when the runs cannot identify a parameter (pin it with --fix NAME=VALUE).

\b
Examples:
  goodput calibrate runs/sweep-a --output server-model.json
  goodput calibrate runs/r2 runs/r4 runs/r8 --max-num-seqs 256 \\
      --max-num-batched-tokens 8192 --num-blocks 30000 \\
      --fix prefill_ctx_s=0 --output server-model.json
  goodput calibrate runs/sweep-a --model Llama-3.1-8B --gpu H100-SXM
"""


def _run_dirs(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for p in paths:
        if (p / RECORDS_FILE).is_file():
            found.append(p)
        else:
            found.extend(sorted(q.parent for q in p.glob(f"{POINTS_DIR}/*/{RECORDS_FILE}")))
    return found


def _fixed(items: list[str]) -> dict[str, float]:
    from loadgen.predict import PARAMS

    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in PARAMS:
            raise ValueError(f"--fix expects NAME=VALUE with NAME one of {', '.join(PARAMS)}, got {item!r}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--fix {name}: {value!r} is not a number") from None
    return out


def calibrate(
    runs: Annotated[list[Path], typer.Argument(help="Run, sweep or capacity directories.", show_default=False)],
    output: Annotated[Path, typer.Option(help="Where to write the server model.")] = Path("server-model.json"),
    fix: Annotated[list[str] | None, typer.Option(help="Pin a parameter instead of fitting it: prefill_ctx_s=0 (repeat).")] = None,
    max_num_seqs: Annotated[int | None, typer.Option(help="The server's running-sequence cap (default 64).", show_default=False)] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option(help="The server's token budget per step (default 512).", show_default=False)] = None,
    block_size: Annotated[int | None, typer.Option(help="KV block size, tokens (default: the server's, else 16).", show_default=False)] = None,
    num_blocks: Annotated[int | None, typer.Option(help="KV blocks in the server's pool (default: the server's, else 65536).", show_default=False)] = None,
    model: Annotated[str | None, typer.Option(help="The served model (preset or config.json), with --gpu: roofline lower bounds of the parameters; one the runs cannot identify is held at its bound.")] = None,
    gpu: Annotated[str | None, typer.Option(help="The GPU preset (H100-SXM, L4, ...), with --model.")] = None,
    tp: Annotated[int, typer.Option(help="Tensor-parallel size, with --model and --gpu.")] = 1,
    prefix_caching: Annotated[bool | None, typer.Option("--prefix-caching/--no-prefix-caching", help="Whether the server caches prefixes (default: the server's, else on).", show_default=False)] = None,
    server_metrics: Annotated[bool, typer.Option("--server-metrics/--no-server-metrics", help="Read the server's /metrics as the runs scraped it (limits, prefill time, checks).")] = True,
) -> int:
    from dataclasses import replace

    from loadgen.predict import (
        PARAMS,
        FitJson,
        IdentifyError,
        RunFit,
        ServerRows,
        Step,
        build_model,
        check_against_server,
        check_line,
        fit_best,
        left_out_prefill,
        no_steps_message,
        prefill_aggregate,
        prefill_unidentified,
        read_engine_steps,
        read_server_run,
        reconstruct,
        replay,
        resolve_limits,
        roofline_bounds,
        server_limits,
        split_chunks,
        trim,
    )
    from metrics.records import read_records

    try:
        pinned = _fixed(fix or [])
        if (model is None) != (gpu is None):
            raise ValueError("--model and --gpu go together (the roofline needs both)")
        lower = roofline_bounds(model, gpu, tp=tp) if model is not None and gpu is not None else {}
        dirs = _run_dirs(runs)
        if not dirs:
            raise ValueError("no records.jsonl in " + ", ".join(map(str, runs)))
        servers = {str(d): read_server_run(d) if server_metrics else None for d in dirs}
        for name, found in servers.items():
            if found is not None and found.malformed:
                typer.echo(f"goodput calibrate: note: {name}: " + "; ".join(found.malformed)
                           + ": taken as absent", err=True)
        flags = {"max_num_seqs": max_num_seqs, "max_num_batched_tokens": max_num_batched_tokens,
                 "block_size": block_size, "num_blocks": num_blocks, "enable_prefix_caching": prefix_caching}
        given = tuple(k for k, v in flags.items() if v is not None)
        limits, limit_sources = resolve_limits(flags, server_limits(servers, given))
        budget = limits.max_num_batched_tokens
        records = {str(d): split_chunks(read_records(str(d / RECORDS_FILE))) for d in dirs}
        engine_steps = {str(d): read_engine_steps(d) for d in dirs}
        by_run: dict[str, list[Step]] = {k: e if (e := engine_steps[k]) else reconstruct(v, max_batched_tokens=budget)
                                         for k, v in records.items()}
        all_steps = [s for steps in by_run.values() for s in steps]
        if not all_steps:
            raise ValueError(no_steps_message([r for recs in records.values() for r in recs]))
        # Only a run whose server gave figures is replayed (the replay is for its prefill row and check).
        prefills = {k: replay(v, max_batched_tokens=budget) for k, v in records.items()
                    if (found := servers[k]) is not None and found.has_figures}
        need = prefill_unidentified(all_steps, pinned)
        rows = {k: a for k, p in prefills.items() if (a := prefill_aggregate(p, servers[k])) is not None}
        try:
            trimmed = trim(fit_best, all_steps, pinned, lower, tuple(rows.values()) if need else ())
            fit, forms = trimmed.fit, trimmed.forms
        except IdentifyError as exc:
            prefill_named = bool(set(exc.names) & set(need))
            hint = ("; the server's mean prefill time (one row per run) was fitted too" if prefill_named and rows else
                    "; the server's prefill-time histogram (vllm:request_prefill_time_seconds, scraped during "
                    "the runs) would identify it" if prefill_named else "")
            raise ValueError(str(exc) + hint) from None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    server = build_model(fit, limits, by_run, [str(d) for d in dirs], forms)
    exact = bool(need) and len(rows) == len(need)  # as many rows as unknowns: each mean is met exactly
    checks = {k: check_against_server(server, by_run[k], prefills[k].per_request, records[k], s, fitted=exact and k in rows)
              for k, s in servers.items() if s is not None and s.has_figures}
    run_fit: dict[str, RunFit] = {k: {**v, "step_source": "engine" if engine_steps.get(k) else "chunks"}
                                  for k, v in server.fit["runs"].items()}
    for k in run_fit.keys() & checks.keys():
        run_fit[k]["server"] = checks[k]
    server_rows: ServerRows | None = {"parameters": need, "runs": sorted(rows), "weight": "sqrt(distinct prefill steps)",
                                      "exact": exact} if need and rows else None
    dropped, carrying = left_out_prefill(all_steps, trimmed.kept)
    fitted: FitJson = {**server.fit, "runs": run_fit, "limits_source": limit_sources,
                       "prefill_steps": {"all": carrying, "left_out": dropped}}
    if server_rows:
        fitted["server_rows"] = server_rows
    server = replace(server, fit=fitted)
    for name in PARAMS:
        err = fit.std_err.get(name)
        held = " (held: --fix, or at its lower bound)"
        typer.echo(f"{name:>14} = {fit.values[name]:.4g}" + (f" ± {err:.2g}" if err is not None else held))
    extra = f" + {len(rows)} server rows" if server_rows else ""
    typer.echo(f"{len(all_steps)} steps{extra}, {server.fit['form']} form, residual RMS {fit.residual_rms_s * 1e3:.3f} ms ("
               + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in forms.items()) + ")")
    if server_rows:
        typer.echo(f"{', '.join(need)}: from the server's mean prefill time of {len(rows)} run(s), one row each "
                   f"weighted by the square root of the distinct steps its prefills span (the chunk times time "
                   f"no prefill-only step)" + ("; as many rows as parameters: each run's prefill mean is met "
                                               "exactly, (fitted) below" if exact else ""))
    if carrying:
        typer.echo(f"prefill steps: {carrying - dropped} of {carrying} fitted ({dropped} left out as outliers)")
    if carrying and carrying - dropped < FEW_PREFILL_STEPS:
        typer.echo(f"goodput calibrate: note: the prefill cost rests on {carrying - dropped} steps (of {carrying} "
                   f"that carry prefill tokens, {dropped} left out as outliers): " + (
                       "their times spread wider than the decode steps'" if all(engine_steps.values())
                       else "chunk times place prefills loosely; the server's own engine steps (the reference "
                            "server, scraped during the runs) or longer runs identify it better"), err=True)
    typer.echo("limits: " + ", ".join(f"{k} {getattr(limits, k)} ({limit_sources[k]})" for k in limit_sources))
    for run, r in run_fit.items():
        source = "the server's engine steps" if engine_steps.get(run) else "steps rebuilt from chunk times"
        typer.echo(f"  {run}: {r['steps']:.0f} steps ({source}), mean {r['mean_step_s'] * 1e3:.2f} ms, "
                   f"residual RMS {r['rms_residual_s'] * 1e3:.3f} ms")
        if "server" in r:
            typer.echo(f"    {check_line(r['server'])}")
    try:
        server.save(output)
    except OSError as exc:
        typer.echo(f"goodput calibrate: cannot write {output}: {exc}", err=True)
        return 1
    typer.echo(f"wrote {output}")
    return 0
