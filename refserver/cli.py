"""`goodput serve`: the bundled reference server on loopback (also `python -m refserver`).

Only typer is imported here: torch, uvicorn and the app load inside `serve` so `goodput --help` is fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

_FAULTS = "Fault injection"
_ENGINE = "Engine"
_SIM = "Sim engine (--engine sim)"
_CONNECTIONS = "Connections"
_BEHAVIOUR = "Reasoning and tool calls"


def _seconds(text: str, flag: str) -> float:
    from metrics import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None


def _names(given: list[str]) -> list[str]:
    """`--served-model-name` repeated and/or comma-separated, in order, each once; BadParameter for an empty one."""
    names: list[str] = []
    for text in given:
        for name in text.split(","):
            if not name.strip():
                raise typer.BadParameter(f"an empty name in {text!r}", param_hint="--served-model-name")
            if name.strip() not in names:
                names.append(name.strip())
    return names


def serve(
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps it off the network (beyond it without --api-key: a warning).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port; 0 picks a free one (printed on start).", min=0, max=65535)] = 8000,
    model: Annotated[
        str | None, typer.Option(help="Local HF Llama directory (config.json, *.safetensors, tokenizer.json).")
    ] = None,
    served_model_name: Annotated[list[str] | None, typer.Option(metavar="NAME",
        help="Model id(s) it answers to (repeat it, or a comma list: the same weights under each name, as "
             "adapters of a model mix); the first one labels /metrics.")] = None,
    engine: Annotated[str, typer.Option(help="torch (real forward pass) or sim (roofline clock).")] = "torch",
    dtype: Annotated[str, typer.Option(help="auto, float32, bfloat16, float16.", rich_help_panel=_ENGINE)] = "auto",
    device: Annotated[str, typer.Option(help="auto, cpu, cuda, cuda:N.", rich_help_panel=_ENGINE)] = "auto",
    block_size: Annotated[int, typer.Option(help="Tokens per KV block.", min=1, rich_help_panel=_ENGINE)] = 16,
    num_blocks: Annotated[
        int | None, typer.Option(help="KV pool size in blocks (default: from memory).", min=1, rich_help_panel=_ENGINE)
    ] = None,
    max_num_batched_tokens: Annotated[
        int, typer.Option(help="Per-step token budget (decode + prefill chunks).", min=1, rich_help_panel=_ENGINE)
    ] = 512,
    max_num_seqs: Annotated[int, typer.Option(help="Most sequences per step.", min=1, rich_help_panel=_ENGINE)] = 64,
    max_waiting: Annotated[
        int, typer.Option(help="Waiting queue bound; past it requests get 429.", min=1, rich_help_panel=_ENGINE)
    ] = 256,
    max_model_len: Annotated[
        int | None, typer.Option(help="Cap on prompt + output tokens (default: the engine's).", min=2)
    ] = None,
    prefix_caching: Annotated[
        bool, typer.Option("--prefix-caching/--no-prefix-caching", help="Reuse cached prompt blocks.", rich_help_panel=_ENGINE)
    ] = True,
    seed: Annotated[int, typer.Option(help="Tiny-model weights, sampling, and reasoning/tool-call draws seed.", rich_help_panel=_ENGINE)] = 0,
    cpu_threads: Annotated[int | None, typer.Option(min=1, help="torch threads on the CPU (default: 1 for the tiny model, else torch's own).", rich_help_panel=_ENGINE)] = None,
    api_key: Annotated[
        str | None, typer.Option(help="Require 'Authorization: Bearer KEY' on /v1/*.", envvar="GOODPUT_API_KEY")
    ] = None,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body accepted.", min=1)] = 4 << 20,
    tokenize_endpoint: Annotated[
        bool, typer.Option("--tokenize-endpoint/--no-tokenize-endpoint", help="Answer POST /tokenize (vLLM's shape), with which clients size prompts exactly.")
    ] = True,
    max_tokens_limit: Annotated[int | None, typer.Option(help="Refuse larger max_tokens.", min=1)] = None,
    header_timeout: Annotated[
        str, typer.Option(help="A request head must arrive within this (else 408 and close).", rich_help_panel=_CONNECTIONS)
    ] = "10s",
    body_timeout: Annotated[
        str, typer.Option(help="A request body must arrive within this of its head (else 408 and close).", rich_help_panel=_CONNECTIONS)
    ] = "30s",
    max_connections: Annotated[
        int, typer.Option(help="Open connections at most; past it a new one gets 503 and is closed.", min=1, rich_help_panel=_CONNECTIONS)
    ] = 2048,
    fault_500: Annotated[float, typer.Option(help="Fraction answered HTTP 500.", rich_help_panel=_FAULTS)] = 0.0,
    fault_429: Annotated[float, typer.Option(help="Fraction answered HTTP 429.", rich_help_panel=_FAULTS)] = 0.0,
    fault_disconnect: Annotated[
        float, typer.Option(help="Fraction cut off mid-stream.", rich_help_panel=_FAULTS)
    ] = 0.0,
    fault_stall: Annotated[float, typer.Option(help="Fraction that stall mid-stream.", rich_help_panel=_FAULTS)] = 0.0,
    fault_malformed: Annotated[
        float, typer.Option(help="Fraction sent one invalid-JSON event.", rich_help_panel=_FAULTS)
    ] = 0.0,
    fault_stall_s: Annotated[float, typer.Option(help="Length of a stall.", rich_help_panel=_FAULTS)] = 5.0,
    fault_after_chunks: Annotated[
        int, typer.Option(help="Content chunks sent before a mid-stream fault.", rich_help_panel=_FAULTS)
    ] = 1,
    fault_token_delay_s: Annotated[
        float, typer.Option(help="Extra delay per output token.", rich_help_panel=_FAULTS)
    ] = 0.0,
    fault_first_token_delay_s: Annotated[
        float, typer.Option(help="Extra delay before the first token.", rich_help_panel=_FAULTS)
    ] = 0.0,
    fault_seed: Annotated[int, typer.Option(help="Seed of the per-request fault draw.", rich_help_panel=_FAULTS)] = 0,
    sim_model: Annotated[
        str | None, typer.Option(help="Model preset or config.json to simulate (default: --model, else Llama-3.1-8B).", rich_help_panel=_SIM)
    ] = None,
    sim_gpu: Annotated[str, typer.Option(help="GPU preset: H100-SXM, H200, A100-80GB, L40S, MI300X, B200, ...", rich_help_panel=_SIM)] = "H100-SXM",
    sim_tp: Annotated[int, typer.Option(help="Tensor-parallel size simulated.", rich_help_panel=_SIM)] = 1,
    sim_dtype: Annotated[str, typer.Option(help="Weight dtype simulated: bf16, fp16, fp8, ...", rich_help_panel=_SIM)] = "bf16",
    sim_kv_dtype: Annotated[str | None, typer.Option(help="KV-cache dtype simulated (default: --sim-dtype).", rich_help_panel=_SIM)] = None,
    sim_efficiency: Annotated[float, typer.Option(help="Achieved fraction of peak FLOP/s and bandwidth.", rich_help_panel=_SIM)] = 0.75,
    sim_step_overhead_ms: Annotated[float, typer.Option(help="Fixed time added to every step.", rich_help_panel=_SIM)] = 0.3,
    sim_gpu_memory_utilization: Annotated[float, typer.Option(help="GPU memory fraction for weights + KV pool.", rich_help_panel=_SIM)] = 0.9,
    sim_eos_after: Annotated[int | None, typer.Option(help="Emit eos after this many tokens (default: never).", rich_help_panel=_SIM)] = None,
    reasoning_tokens: Annotated[
        str | None, typer.Option(metavar="DIST", help="Reason first: the first K output tokens of each chat, Responses or Messages answer are streamed as reasoning, K drawn per request: N, uniform:LO:HI, normal:MEAN:STD, lognormal:MEDIAN:SIGMA.", rich_help_panel=_BEHAVIOUR)
    ] = None,
    tool_call_rate: Annotated[
        float, typer.Option(metavar="P", help="Share of answers to requests with tools that are one tool call with streamed JSON arguments (tool_choice required/named: all; none: no call).", rich_help_panel=_BEHAVIOUR)
    ] = 0.0,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
) -> None:
    """Run the bundled OpenAI-compatible reference server (continuous batching, paged KV, prefix cache):
    chat and completions, the Responses API and Anthropic's Messages API.

    Prints `goodput refserver listening on http://HOST:PORT` once it accepts connections; SIGTERM or
    SIGINT stop it cleanly. /metrics speaks vLLM's metric names.

    \b
    Examples:
      # tiny random model on http://127.0.0.1:8000
      goodput serve
      # any free port, named in the "listening on" line
      goodput serve --port 0
      goodput serve --model ./TinyLlama --device cuda --dtype bfloat16 \\
          --num-blocks 4096
      # roofline-timed steps instead of a forward pass
      goodput serve --engine sim
      goodput serve --engine sim --sim-model Llama-3.1-70B --sim-gpu H200 \\
          --sim-tp 4 --max-num-seqs 256
      # one model under several names (a LoRA adapter mix's names)
      goodput serve --engine sim --served-model-name base,lora-a,lora-b
      goodput serve --fault-500 0.05 --fault-stall 0.02 --fault-stall-s 3 \\
          --fault-seed 1
      GOODPUT_API_KEY=secret goodput serve --host 0.0.0.0
      goodput serve --header-timeout 5s --body-timeout 20s --max-connections 512
      # a reasoning, tool-calling model on every API (chat, responses,
      # messages)
      goodput serve --engine sim --reasoning-tokens uniform:32:256 \\
          --tool-call-rate 0.3
    """
    from refserver.api import (
        AppConfig,
        Behaviour,
        ConnectionLimits,
        FaultConfig,
        build_server_app,
        exposure_warning,
        parse_token_dist,
        run_server,
    )
    from refserver.engine import EngineConfig, sim_options_from_flags

    if engine not in ("torch", "sim"):
        raise typer.BadParameter(f"must be 'torch' or 'sim', got {engine!r}", param_hint="--engine")
    try:
        reasoning = None if reasoning_tokens is None else parse_token_dist(reasoning_tokens)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--reasoning-tokens") from None
    try:
        behaviour = Behaviour(reasoning=reasoning, tool_call_rate=tool_call_rate, seed=seed)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--tool-call-rate "), param_hint="--tool-call-rate") from None
    try:
        limits = ConnectionLimits(
            header_timeout_s=_seconds(header_timeout, "--header-timeout"),
            body_timeout_s=_seconds(body_timeout, "--body-timeout"),
            max_connections=max_connections,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    names = _names(served_model_name or [])
    try:
        faults = FaultConfig(
            error_500=fault_500,
            error_429=fault_429,
            disconnect=fault_disconnect,
            stall=fault_stall,
            malformed=fault_malformed,
            stall_s=fault_stall_s,
            after_chunks=fault_after_chunks,
            token_delay_s=fault_token_delay_s,
            first_token_delay_s=fault_first_token_delay_s,
            seed=fault_seed,
        )
        faults.validate()
        engine_config = EngineConfig(
            model_dir=model,
            dtype=dtype,
            device=device,
            block_size=block_size,
            num_blocks=num_blocks,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            max_waiting=max_waiting,
            seed=seed,
            cpu_threads=cpu_threads,
            enable_prefix_caching=prefix_caching,
            runner="sim" if engine == "sim" else "torch",
            sim=sim_options_from_flags(
                model=sim_model, gpu=sim_gpu, tp=sim_tp, dtype=sim_dtype, kv_dtype=sim_kv_dtype,
                efficiency=sim_efficiency, step_overhead_ms=sim_step_overhead_ms,
                gpu_memory_utilization=sim_gpu_memory_utilization, eos_after_tokens=sim_eos_after,
            ) if engine == "sim" else None,
        )
        app_config = AppConfig(
            model_name=names[0] if names else model or "goodput-tiny",
            other_names=tuple(names[1:]),
            api_key=api_key,
            max_body_bytes=max_body_bytes,
            max_tokens_limit=max_tokens_limit,
            faults=faults,
            tokenize_endpoint=tokenize_endpoint,
            behaviour=behaviour,
        )
        app = build_server_app(engine_config, app_config, max_model_len=max_model_len)
    except (ValueError, FileNotFoundError) as exc:
        typer.echo(f"goodput serve: error: {exc}", err=True)
        raise typer.Exit(2) from None
    if engine == "sim":
        # Pacing: full collections over hundreds of live sequences stall every thread for 10-15 ms
        # (bench/README.md, Sim engine); start-up objects are frozen and gen-0 runs rarely.
        import gc

        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000)
    warning = exposure_warning(host, api_key)
    if warning is not None:
        typer.echo(warning, err=True)
    try:
        run_server(app, host=host, port=port, log_level=log_level, limits=limits)
    except OSError as exc:
        typer.echo(f"goodput serve: cannot listen on {host}:{port}: {exc}", err=True)
        raise typer.Exit(1) from None

