"""Where the reference server's time goes, per generated token, under the comparison's load.

The server runs in this process exactly as `goodput serve` runs it (the same app, uvicorn on the
main thread's event loop, the engine step loop on its own thread); `goodput run` drives it from a
separate process with the flags of `bench.refserver_throughput`. Functions of the engine and of the
HTTP layer are wrapped in this process only (`bench.time_accounts`), one warm-up run is excluded, and
over the measured run each part's wall and thread-CPU time is divided by the tokens generated:

  engine thread   forward (model + lm head) · sampling · runner input tensors (the rest of `execute`)
                  · scheduler + block manager (the rest of `step`, plus admission and aborts)
                  · step loop rest (locks, hand-over to the event loop; thread CPU not in a wrapped call)
  event loop      request parsing + chat template + tokenize · detokenize · per-token bookkeeping
                  (times, /metrics) · SSE chunk build + JSON · HTTP server + asyncio (the thread's rest)
  other threads   torch's intra-op workers and the rest of the process

Usage: .venv/bin/python -m bench.profile_refserver [--model-dir DIR | --builtin-tiny] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.goodput_runs import Scenario, Shared, read_run, run_command
from bench.time_accounts import Accounts, overhead_per_call_ns, thread_cpu_ns
from bench.tiny_model_dir import export_tiny

# (row, engine thread?, accounts added, accounts subtracted): exclusive time of each part.
ROWS: list[tuple[str, bool, tuple[str, ...], tuple[str, ...]]] = [
    ("forward (model + lm head)", True, ("forward", "logits"), ()),
    ("sampling", True, ("sample",), ()),
    ("runner input tensors", True, ("execute",), ("forward", "logits", "sample")),
    ("scheduler + block manager", True, ("step", "add_request", "abort"), ("execute",)),
    ("request parse + template + tokenize", False, ("parse", "prompt_ids", "sampling_params"), ()),
    ("detokenize", False, ("detok_add", "detok_finish"), ()),
    ("per-token bookkeeping (times, /metrics)", False, ("consume",), ("detok_add",)),
    (
        "SSE chunk build + JSON encode",
        False,
        ("chunk_content", "chunk_finish", "chunk_role", "chunk_usage", "sse_event"),
        (),
    ),
]
ENGINE_ACCOUNTS = ("step", "add_request", "abort")
LOOP_ACCOUNTS = ("parse", "prompt_ids", "sampling_params", "detok_finish", "consume", "chunk_content", "chunk_finish",
                 "chunk_role", "chunk_usage", "sse_event")  # fmt: skip


def instrument(app: Any, accounts: Accounts) -> None:
    """Wrap the parts named in ROWS. Engine and runner objects are wrapped per instance; the HTTP
    layer's functions where the handlers look them up (module globals and classes)."""
    from refserver.api import app as app_module
    from refserver.api import detokenize, generate, state, streaming

    llm = app.state.server.engine.engine
    runner = llm.runner
    accounts.wrap(llm, "step", "step")
    accounts.wrap(llm, "add_request", "add_request")
    accounts.wrap(llm, "abort", "abort")
    accounts.wrap(llm, "_append", "token")  # one call per generated token: the count to divide by
    accounts.wrap(runner, "execute", "execute")
    accounts.wrap(runner, "_sample", "sample")
    accounts.wrap(runner.model, "forward", "forward")
    accounts.wrap(runner.model, "compute_logits", "logits")
    accounts.wrap(app_module, "parse_request", "parse")
    accounts.wrap(state.ServerState, "prompt_ids", "prompt_ids")
    accounts.wrap(state.ServerState, "sampling_params", "sampling_params")
    accounts.wrap(detokenize.OutputText, "add", "detok_add")
    accounts.wrap(detokenize.OutputText, "finish", "detok_finish")
    accounts.wrap(generate.Generation, "_consume", "consume")
    accounts.wrap(streaming, "sse_event", "sse_event")
    for method in ("content", "finish", "role", "usage_only"):
        accounts.wrap(streaming.ChunkBuilder, method, f"chunk_{method.removesuffix('_only')}")


def instrument_attention(accounts: Accounts) -> bool:
    """Split the forward pass further where the model module still has its paged-attention functions
    (internal names: the profile goes on without the split when they move)."""
    from refserver.model import llama

    if not all(hasattr(llama, name) for name in ("paged_attention", "write_kv")):
        return False
    accounts.wrap(llama, "paged_attention", "attention")
    accounts.wrap(llama, "write_kv", "kv_write")
    return True


def exclusive(accounts: Accounts, add: tuple[str, ...], sub: tuple[str, ...], attr: str) -> int:
    return sum(int(getattr(accounts.get(n), attr)) for n in add) - sum(
        int(getattr(accounts.get(n), attr)) for n in sub
    )


def report_rows(
    accounts: Accounts, clocks: dict[str, int], tokens: int
) -> list[tuple[str, float, float | None]]:
    """(part, CPU µs per token, wall µs per token or None): the wrapped parts, then each thread's rest."""
    per = 1e-3 / tokens
    rows: list[tuple[str, float, float | None]] = [
        (name, exclusive(accounts, add, sub, "cpu_ns") * per, exclusive(accounts, add, sub, "wall_ns") * per)
        for name, _engine, add, sub in ROWS
    ]
    engine_wrapped = sum(accounts.get(n).cpu_ns for n in ENGINE_ACCOUNTS)
    loop_wrapped = sum(accounts.get(n).cpu_ns for n in LOOP_ACCOUNTS)
    rows.insert(4, ("step loop rest (locks, hand-over)", (clocks["engine"] - engine_wrapped) * per, None))
    rows.append(("HTTP server + asyncio (event loop rest)", (clocks["loop"] - loop_wrapped) * per, None))
    rows.append(
        (
            "other threads (torch workers, ...)",
            (clocks["process"] - clocks["engine"] - clocks["loop"]) * per,
            None,
        )
    )
    return rows


def attention_row(accounts: Accounts, tokens: int) -> tuple[str, float, float | None]:
    names = ("attention", "kv_write")
    per = 1e-3 / tokens
    cpu = sum(accounts.get(n).cpu_ns for n in names) * per
    return ("  of which paged attention + KV write", cpu, sum(accounts.get(n).wall_ns for n in names) * per)


def engine_busy(accounts: Accounts) -> float | None:
    """Share of the span from the first step's start to the last step's end spent inside steps."""
    step = accounts.get("step")
    if step.first_ns is None or step.last_ns is None or step.last_ns <= step.first_ns:
        return None
    return step.wall_ns / (step.last_ns - step.first_ns)


def print_table(
    rows: list[tuple[str, float, float | None]],
    accounts: Accounts,
    clocks: dict[str, int],
    tokens: int,
    split: bool,
    overhead_ns: float,
) -> None:
    total = sum(cpu for _, cpu, _ in rows)
    print("| part | CPU µs/token | share of process CPU | wall µs/token |")
    print("| --- | ---: | ---: | ---: |")
    for name, cpu, wall in rows:
        print(
            f"| {name} | {cpu:.1f} | {100 * cpu / total:.1f} % | {'-' if wall is None else f'{wall:.1f}'} |"
        )
        if name.startswith("forward") and split:
            sub, sub_cpu, sub_wall = attention_row(accounts, tokens)
            print(f"| {sub} | {sub_cpu:.1f} | {100 * sub_cpu / total:.1f} % | {sub_wall:.1f} |")
    print(f"| **process total** | **{total:.1f}** | 100 % | |")
    step = accounts.get("step")
    steps = max(step.calls, 1)
    busy = engine_busy(accounts)
    calls = sum(a.calls for a in accounts.by_name.values())
    print(f"\n{tokens} tokens in {step.calls} engine steps ({tokens / steps:.1f} tokens per step, {step.wall_ns / steps / 1e3:.0f} µs "
          f"per step); the engine thread was inside a step {'-' if busy is None else f'{100 * busy:.0f} %'} of the time "
          f"from its first to its last step; thread CPU: engine {clocks['engine'] / 1e9:.2f} s, event loop "
          f"{clocks['loop'] / 1e9:.2f} s, whole process {clocks['process'] / 1e9:.2f} s; {calls / tokens:.1f} timed "
          f"calls per token at {overhead_ns / 1e3:.1f} µs each: the profile itself adds ~{calls / tokens * overhead_ns / 1e3:.0f} "
          "µs per token, included above")  # fmt: skip


def drive(
    server: Any, accounts: Accounts, args: argparse.Namespace, url: str, result: dict[str, Any]
) -> None:
    """In a helper thread: warm up, measure one run with the accounts on, then stop the server."""
    try:
        while not server.started:
            time.sleep(0.05)
        bindir = Path(sys.executable).parent
        shared = Shared(
            goodput=str(bindir / "goodput"), model=args.model_name, tokenizer=args.tokenizer, seed=args.seed
        )
        runs = Path(tempfile.mkdtemp(prefix="goodput-profile-"))
        warm = Scenario(args.concurrency, args.prompt_tokens, args.output_tokens, args.warmup)
        subprocess.run(run_command(shared, warm, url, runs / "warmup"), check=True, capture_output=True)
        scenario = Scenario(args.concurrency, args.prompt_tokens, args.output_tokens, args.duration)
        engine_thread = next(t for t in threading.enumerate() if t.name == "refserver-engine")
        main_id, engine_id = threading.main_thread().ident, engine_thread.ident
        assert main_id is not None and engine_id is not None
        accounts.reset()
        before = {
            "engine": thread_cpu_ns(engine_id),
            "loop": thread_cpu_ns(main_id),
            "process": time.process_time_ns(),
        }
        accounts.active = True
        subprocess.run(run_command(shared, scenario, url, runs / "measured"), check=True, capture_output=True)
        accounts.active = False
        after = {
            "engine": thread_cpu_ns(engine_id),
            "loop": thread_cpu_ns(main_id),
            "process": time.process_time_ns(),
        }
        result["clocks"] = {k: after[k] - before[k] for k in before}
        result["run"] = read_run(runs / "measured")
    except BaseException as exc:  # report it from the main thread
        result["error"] = exc
    finally:
        server.should_exit = True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-dir", default=str(Path(tempfile.gettempdir()) / "goodput-tiny"))
    parser.add_argument(
        "--builtin-tiny",
        action="store_true",
        help="the built-in tiny model (`goodput serve` with no --model)",
    )
    parser.add_argument(
        "--threads", type=int, help="torch intra-op threads (default: as `goodput serve` sets them)"
    )
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--prompt-tokens", type=int, default=32)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch

    from refserver.api import AppConfig
    from refserver.api.serve import bind_socket, build_server_app, server_config, url_of
    from refserver.engine.config import EngineConfig

    model_dir = None if args.builtin_tiny else str(Path(args.model_dir).resolve())
    if model_dir is not None and not (Path(model_dir) / "config.json").is_file():
        export_tiny(model_dir, args.seed)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    args.model_name = model_dir or "goodput-tiny"
    args.tokenizer = str(Path(model_dir) / "tokenizer.json") if model_dir else "bytes"
    app = build_server_app(
        EngineConfig(model_dir=model_dir, device="cpu", seed=args.seed), AppConfig(model_name=args.model_name)
    )
    accounts = Accounts()
    instrument(app, accounts)
    split = instrument_attention(accounts)

    import uvicorn

    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(server_config(app))
    result: dict[str, Any] = {}
    driver = threading.Thread(target=drive, args=(server, accounts, args, url_of(sock), result), daemon=True)
    driver.start()
    server.run(sockets=[sock])
    driver.join()
    if "error" in result:
        raise result["error"]
    tokens = accounts.get("token").calls
    print(f"model {args.model_name}, torch threads {torch.get_num_threads()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; {args.concurrency} streams, {args.prompt_tokens}-token prompts, max_tokens "
          f"{args.output_tokens}, greedy, no ignore_eos, {args.duration:g} s measured after {args.warmup:g} s warm-up\n")  # fmt: skip
    print_table(
        report_rows(accounts, result["clocks"], tokens),
        accounts,
        result["clocks"],
        tokens,
        split,
        overhead_per_call_ns(),
    )
    run = result["run"]
    print(f"goodput run's view of the same run: {run.output_tok_s:,.0f} output tok/s, TTFT p50 {run.ttft_p50_ms:.0f} ms, "
          f"TPOT p50 {run.tpot_p50_ms:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
