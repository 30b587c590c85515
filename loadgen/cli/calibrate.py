"""`goodput calibrate`: fit the step-time model of a server (loadgen.predict) from its measured runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

CALIBRATE_HELP = """Fit a step-time model of the served engine from measured runs.

Reads each run directory's records.jsonl (a sweep or capacity directory: every point's), rebuilds the
engine's steps from the chunk times (the reference server's per-chunk server times when present) and
fits step_s = fixed + prefill·P + prefill_ctx·P·context + decode_seq·D + decode_kv·K by least squares,
additive or overlapped (fixed + max(memory + decode_kv·K, the rest)): the better fit wins.
Prints each parameter with its standard error and the residuals per run; writes --output for
goodput predict. The scheduler limits are not measured: give the server's (--max-num-seqs, ...).
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
        if (p / "records.jsonl").is_file():
            found.append(p)
        else:
            found.extend(sorted(q.parent for q in p.glob("points/*/records.jsonl")))
    return found


def _fixed(items: list[str]) -> dict[str, float]:
    from loadgen.predict.step_model import PARAMS

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
    max_num_seqs: Annotated[int, typer.Option(help="The server's running-sequence cap.")] = 64,
    max_num_batched_tokens: Annotated[int, typer.Option(help="The server's token budget per step.")] = 512,
    block_size: Annotated[int, typer.Option(help="KV block size, tokens.")] = 16,
    num_blocks: Annotated[int, typer.Option(help="KV blocks in the server's pool.")] = 65_536,
    model: Annotated[str | None, typer.Option(help="The served model (preset or config.json), with --gpu: roofline lower bounds of the parameters; one the runs cannot identify is held at its bound.")] = None,
    gpu: Annotated[str | None, typer.Option(help="The GPU preset (H100-SXM, L4, ...), with --model.")] = None,
    tp: Annotated[int, typer.Option(help="Tensor-parallel size, with --model and --gpu.")] = 1,
    prefix_caching: Annotated[bool, typer.Option("--prefix-caching/--no-prefix-caching", help="Whether the server caches prefixes.")] = True,
) -> int:
    from loadgen.predict.bounds import roofline_bounds
    from loadgen.predict.calibrate import build_model, fit_best
    from loadgen.predict.expand import split_chunks
    from loadgen.predict.robust import trimmed_fit
    from loadgen.predict.step_model import PARAMS, SchedulerLimits
    from loadgen.predict.steps import Step, reconstruct
    from metrics.records.record import read_records

    try:
        limits = SchedulerLimits(max_num_seqs, max_num_batched_tokens, block_size, num_blocks, prefix_caching)
        pinned = _fixed(fix or [])
        if (model is None) != (gpu is None):
            raise ValueError("--model and --gpu go together (the roofline needs both)")
        lower = roofline_bounds(model, gpu, tp=tp) if model is not None and gpu is not None else {}
        dirs = _run_dirs(runs)
        if not dirs:
            raise ValueError("no records.jsonl in " + ", ".join(map(str, runs)))
        by_run: dict[str, list[Step]] = {str(d): reconstruct(split_chunks(read_records(str(d / "records.jsonl"))),
                                                   max_batched_tokens=max_num_batched_tokens) for d in dirs}
        fit, forms = trimmed_fit(fit_best, [s for steps in by_run.values() for s in steps], pinned, lower)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    server = build_model(fit, limits, by_run, [str(d) for d in dirs], forms)
    for name in PARAMS:
        err = fit.std_err.get(name)
        held = " (held: --fix, or at its lower bound)"
        typer.echo(f"{name:>14} = {fit.values[name]:.4g}" + (f" ± {err:.2g}" if err is not None else held))
    typer.echo(f"{fit.points} steps, {server.fit['form']} form, residual RMS {fit.residual_rms_s * 1e3:.3f} ms ("
               + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in forms.items()) + ")")
    for run, r in server.fit["runs"].items():
        typer.echo(f"  {run}: {r['steps']:.0f} steps, mean {r['mean_step_s'] * 1e3:.2f} ms, "
                   f"residual RMS {r['rms_residual_s'] * 1e3:.3f} ms")
    try:
        server.save(output)
    except OSError as exc:
        typer.echo(f"goodput calibrate: cannot write {output}: {exc}", err=True)
        return 1
    typer.echo(f"wrote {output}")
    return 0
