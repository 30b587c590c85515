"""The reference server against `transformers serve --continuous-batching`, measured as users measure.

Both servers load one local directory (the tiny model, exported by `bench.tiny_model_dir`, or any
Llama directory both can load) and are driven by `goodput run` as a process with the same flags, so
the request bodies are identical: the same prompts (same seed, same `--tokenizer`), greedy
(`--temperature 0`), `--no-ignore-eos` (transformers refuses `ignore_eos`), closed loop at N streams.

1. Both servers start; a greedy probe checks that they answer one prompt with the same text.
2. Warm-up: one excluded run against each server (transformers' first requests after start take
   seconds; the reference server's first forward passes are slower too).
3. Per scenario, measured runs alternate A B A B … (`--rounds` each); the server not being measured
   is paused (SIGSTOP), and its CPU seconds during the other's run are printed to show it.
4. Per scenario: the median of each figure over the runs, each run's tok/s, the ratio of medians,
   and how many request ids ended with the same output length on both servers.

Usage (nothing is downloaded; `transformers serve` needs the serving extra: `pip install openai accelerate`):
  .venv/bin/python -m bench.refserver_throughput                         # defaults below
  .venv/bin/python -m bench.refserver_throughput --servers refserver --concurrency 1,8,32
  .venv/bin/python -m bench.refserver_throughput --model-dir ./TinyLlama --prompt-tokens 128 --duration 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from bench.goodput_runs import (
    RunFigures,
    Scenario,
    Shared,
    agreement,
    alternating_order,
    figures_table,
    fmt,
    median,
    ratio,
    read_run,
    run_command,
)
from bench.server_processes import (
    ServerProcess,
    first_difference,
    greedy_text,
    refserver_process,
    running,
    transformers_process,
)
from bench.tiny_model_dir import check_export, export_tiny

REPO = Path(__file__).resolve().parent.parent
PROBE_PROMPT = "Tell me a story about a lighthouse."


def versions() -> list[str]:
    import torch
    import transformers

    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout
    return [
        f"python {platform.python_version()}, torch {torch.__version__} (default intra-op threads {torch.get_num_threads()}), "
        f"transformers {transformers.__version__}, goodput {commit}{' + local changes' if dirty else ''}",
        f"machine: {os.cpu_count()} cores, {platform.machine()}, load average at start {os.getloadavg()[0]:.2f}",
    ]


def torch_threads(env: dict[str, str]) -> str:
    """The intra-op threads torch starts with in a server process given `env` (neither server sets them
    for a model directory)."""
    import torch

    if "OMP_NUM_THREADS" in env:
        return f"{env['OMP_NUM_THREADS']} (OMP_NUM_THREADS)"
    return f"{torch.get_num_threads()} (torch's default)"


def settings(server: ServerProcess) -> list[str]:
    lines = [f"{server.name}: {shlex.join(server.command)}" + (f"  (env {server.env})" if server.env else "")]
    lines.append(f"  torch intra-op threads: {torch_threads(server.env)}")
    if server.name == "goodput serve":
        from refserver.engine.config import EngineConfig

        c = EngineConfig()
        lines.append(
            f"  engine defaults unless set above: dtype {c.dtype} (float32 on CPU), block size {c.block_size}, "
            f"max-num-seqs {c.max_num_seqs}, max-num-batched-tokens {c.max_num_batched_tokens}, prefix caching "
            f"{c.enable_prefix_caching}"
        )
    else:
        from transformers import ContinuousBatchingConfig

        c2 = ContinuousBatchingConfig()
        lines.append(
            f"  continuous batching defaults unless set above: page size {c2.page_size}, num blocks / max batch "
            f"tokens {c2.num_blocks} / {c2.max_batch_tokens} (None: sized from memory), scheduler {c2.scheduler_type}"
        )
    return lines


def measured_run(
    server: ServerProcess, others: list[ServerProcess], shared: Shared, scenario: Scenario, out: Path
) -> tuple[RunFigures, float]:
    """One `goodput run` against `server` (resumed for it); returns its figures and the CPU seconds
    the other (paused) servers spent meanwhile."""
    server.resume()
    before = sum(o.cpu_s() for o in others)
    try:
        done = subprocess.run(run_command(shared, scenario, server.url, out), capture_output=True, text=True)
    finally:
        server.pause()
    if done.returncode != 0:
        raise RuntimeError(
            f"goodput run against {server.name} exited {done.returncode}:\n{done.stderr[-2000:]}"
        )
    return read_run(out), sum(o.cpu_s() for o in others) - before


def compare(
    args: argparse.Namespace, servers: list[ServerProcess], shared: Shared, runs_dir: Path
) -> dict[str, object]:
    header = versions() + [line for server in servers for line in settings(server)]
    print("\n".join(header))
    scenarios: list[dict[str, object]] = []
    report: dict[str, object] = {"header": header, "scenarios": scenarios}
    if len(servers) == 2:
        texts = []
        for server in servers:
            server.resume()
            texts.append(greedy_text(server.url, shared.model, PROBE_PROMPT, 48))
            server.pause()
        diff = first_difference(*texts)
        probe = (
            "identical text"
            if diff is None
            else f"texts differ from character {diff}: {texts[0][:60]!r} vs {texts[1][:60]!r}"
        )
        print(f"greedy probe (48 tokens, {PROBE_PROMPT!r}): {probe}")
        report["probe"] = probe
    first = Scenario(args.concurrency[0], args.prompt_tokens[0], args.output_tokens, args.warmup)
    for server in servers:
        t0 = time.monotonic()
        warm, _ = measured_run(server, [], shared, first, runs_dir / f"warmup-{server.name.split()[0]}")
        print(f"warm-up {server.name} (excluded): {time.monotonic() - t0:.1f} s, {fmt(warm.output_tok_s)} tok/s, "
              f"TTFT p99 {fmt(warm.ttft_p99_ms)} ms")  # fmt: skip
    for concurrency in args.concurrency:
        for prompt_tokens in args.prompt_tokens:
            scenario = Scenario(concurrency, prompt_tokens, args.output_tokens, args.duration)
            scenarios.append(run_scenario(scenario, servers, shared, args.rounds, runs_dir))
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return report


def run_scenario(
    scenario: Scenario, servers: list[ServerProcess], shared: Shared, rounds: int, runs_dir: Path
) -> dict[str, object]:
    runs: dict[str, list[RunFigures]] = {s.name: [] for s in servers}
    idle_cpu: dict[str, list[float]] = {s.name: [] for s in servers}
    by_name = {s.name: s for s in servers}
    for round_index, name in alternating_order([s.name for s in servers], rounds):
        others = [s for s in servers if s.name != name]
        out = runs_dir / f"{scenario.label}-r{round_index}-{name.split()[0]}"
        figures, other_cpu = measured_run(by_name[name], others, shared, scenario, out)
        runs[name].append(figures)
        idle_cpu[name].append(other_cpu)
        print(f"  {scenario.label} round {round_index} {name}: {fmt(figures.output_tok_s)} tok/s "
              f"(paused other server used {other_cpu:.2f} CPU s; load {os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    print(f"\n{scenario.concurrency} streams, {scenario.prompt_tokens}-token prompts (+ chat template), "
          f"max_tokens {scenario.output_tokens}, {scenario.duration_s:g} s per run, {rounds} runs each\n")  # fmt: skip
    rows = figures_table([(name, figs) for name, figs in runs.items()])
    print("\n".join(rows))
    result: dict[str, object] = {
        "scenario": asdict(scenario),
        "table": rows,
        "runs": {n: [asdict(f) | {"outputs": None} for f in figs] for n, figs in runs.items()},
        "paused_server_cpu_s": idle_cpu,
    }
    if len(servers) == 2:
        (a, fa), (b, fb) = runs.items()
        tok = ratio(median([f.output_tok_s for f in fa]), median([f.output_tok_s for f in fb]))
        ttft = [
            fmt(median([getattr(f, k) for f in runs_of]))
            for runs_of in (fa, fb)
            for k in ("ttft_p50_ms", "ttft_p99_ms")
        ]
        common, same = agreement(fa[0].outputs, fb[0].outputs)
        line = (f"\n{a} / {b}: output tok/s {fmt(tok, 2)}× (ratio of medians); TTFT p50/p99 {ttft[0]}/{ttft[1]} ms "
                f"vs {ttft[2]}/{ttft[3]} ms; same output length and finish reason on {same} of {common} common "
                "request ids (first round)")  # fmt: skip
        print(line)
        result["ratio"] = line.strip()
    print()
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-dir", default=str(Path(tempfile.gettempdir()) / "goodput-tiny"),
                        help="local HF directory both servers load; exported from the tiny model when absent")  # fmt: skip
    parser.add_argument("--servers", default="refserver,transformers", help="refserver, transformers or both")
    parser.add_argument("--concurrency", default="32", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--prompt-tokens", default="32,160", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of dispatch per measured run")
    parser.add_argument(
        "--warmup", type=float, default=20.0, help="seconds of the excluded warm-up run per server"
    )
    parser.add_argument("--rounds", type=int, default=3, help="measured runs per server and scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS for both servers (default: torch's own)")
    parser.add_argument("--refserver-args", default="", help="extra `goodput serve` options")
    parser.add_argument("--transformers-args", default="", help="extra `transformers serve` options")
    parser.add_argument("--runs-dir", help="keep every run directory here (default: a temporary directory)")
    parser.add_argument("--json", help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    bindir = Path(sys.executable).parent
    model_dir = str(Path(args.model_dir).resolve())
    if not (Path(model_dir) / "config.json").is_file():
        export_tiny(model_dir, args.seed)
        problems = check_export(model_dir, args.seed)
        if problems:
            raise SystemExit("exported directory does not match the tiny model: " + "; ".join(problems))
    env = {} if args.threads is None else {"OMP_NUM_THREADS": str(args.threads)}
    with tempfile.TemporaryDirectory(prefix="goodput-bench-") as tmp:
        runs_dir = Path(args.runs_dir or tmp)
        runs_dir.mkdir(parents=True, exist_ok=True)
        servers: list[ServerProcess] = []
        for name in args.servers.split(","):
            if name == "refserver":
                servers.append(
                    refserver_process(
                        str(bindir / "goodput"), model_dir, runs_dir, shlex.split(args.refserver_args), env
                    )
                )
            elif name == "transformers":
                servers.append(
                    transformers_process(
                        str(bindir / "transformers"),
                        model_dir,
                        runs_dir,
                        shlex.split(args.transformers_args),
                        env,
                    )
                )
            else:
                raise SystemExit(f"unknown server {name!r}: use refserver and/or transformers")
        shared = Shared(
            goodput=str(bindir / "goodput"),
            model=model_dir,
            tokenizer=str(Path(model_dir) / "tokenizer.json"),
            seed=args.seed,
        )
        print(
            "goodput run flags (every server): "
            + shlex.join(
                run_command(
                    shared,
                    Scenario(args.concurrency[0], args.prompt_tokens[0], args.output_tokens, args.duration),
                    "URL",
                    Path("DIR"),
                )[2:]
            )
        )
        with running(servers):
            report = compare(args, servers, shared, runs_dir)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
