"""`goodput plan`: capacity and roofline arithmetic (docs/capacity.md) for a model on a GPU, before any run.

The numbers come from `metrics.model.capacity` and `metrics.model.roofline`; this module only gathers them into one
plan (`build_plan`, also the `--json` output) and formats it as a table.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from loadgen.cli.cost_options import (
    COST,
    GPU_HOUR_COST_HELP,
    GPUS_PER_REPLICA_HELP,
    TARGET_RATE_HELP,
    parse_cost_options,
)
from loadgen.cli.plan_json import PlanCost, PlanJson
from metrics.model import (
    DEFAULT_BATCHED_TOKENS,
    DEFAULT_MAX_NUM_SEQS,
    GIB,
    GPU_PRESETS,
    MODEL_PRESETS,
    CostOptions,
    UnsupportedModelError,
    blocks_for_window,
    cost_lines,
    decode_step_cost,
    dtype_bytes,
    floors,
    kv_bytes_for_sequence,
    kv_bytes_per_token,
    max_sequences_in_pool,
    paged_kv_bytes_for_sequence,
    paged_usage,
    param_breakdown,
    plan_memory,
    prefill_cost,
    request_throughput_bound,
    resolve_gpu,
    resolve_model,
    time_bound,
)


def build_plan(*, model: str, gpu: str, tp: int, dtype: str, kv_dtype: str | None, block_size: int,
               prompt_tokens: int, output_tokens: int, concurrency: int, cached_tokens: int = 0,
               gpu_memory_utilization: float = 0.9, efficiency: float = 1.0,
               max_num_batched_tokens: int = DEFAULT_BATCHED_TOKENS) -> PlanJson:
    """Every figure of the plan, in base units (bytes, seconds, FLOPs). Raises ValueError on bad input."""
    for flag, value, least in (("--tp", tp, 1), ("--block-size", block_size, 1), ("--prompt-tokens", prompt_tokens, 1),
                               ("--output-tokens", output_tokens, 1), ("--concurrency", concurrency, 1),
                               ("--cached-tokens", cached_tokens, 0),
                               ("--max-num-batched-tokens", max_num_batched_tokens, 1)):
        if value < least:
            raise ValueError(f"{flag} must be >= {least}, got {value}")
    for flag, fraction in (("--gpu-memory-utilization", gpu_memory_utilization), ("--efficiency", efficiency)):
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"{flag} must be in (0, 1], got {fraction}")
    cfg, spec = resolve_model(model), resolve_gpu(gpu)
    kv_dtype = kv_dtype or dtype
    wb, kb = dtype_bytes(dtype), dtype_bytes(kv_dtype)
    if cached_tokens >= prompt_tokens:
        raise ValueError("--cached-tokens must be smaller than --prompt-tokens (one token is always computed)")
    seq_tokens = prompt_tokens + output_tokens
    if cfg.max_position_embeddings is not None and seq_tokens > cfg.max_position_embeddings:
        raise ValueError(f"prompt + output = {seq_tokens} tokens exceeds the model's "
                         f"{cfg.max_position_embeddings} positions")
    params = param_breakdown(cfg, tp=tp)
    memory = plan_memory(cfg, memory_bytes=spec.memory_bytes, seq_tokens=seq_tokens, concurrency=concurrency,
                         weight_dtype_bytes=wb, kv_dtype_bytes=kb, tp=tp, block_size=block_size,
                         utilization=gpu_memory_utilization, batched_tokens=max_num_batched_tokens,
                         max_num_seqs=DEFAULT_MAX_NUM_SEQS)
    blocks = paged_usage([seq_tokens] * concurrency, block_size)
    prefill = prefill_cost(cfg, prompt_tokens, cached_tokens=cached_tokens, weight_dtype_bytes=wb,
                           kv_dtype_bytes=kb, tp=tp)
    decode = decode_step_cost(cfg, [prompt_tokens] * concurrency, weight_dtype_bytes=wb, kv_dtype_bytes=kb, tp=tp)
    prefill_t = time_bound(prefill, spec, efficiency=efficiency)
    decode_t = time_bound(decode, spec, efficiency=efficiency)
    floor = floors(cfg, spec, prompt_tokens, output_tokens, concurrency, weight_dtype=dtype, kv_dtype=kv_dtype,
                   tp=tp, efficiency=efficiency, cached_tokens=cached_tokens)
    # The most sequences that could ever decode together: all the memory weights leave, each sequence
    # holding no more than its prompt and one token (generous on purpose: the bound must stay a bound).
    decode_batch = max(1, max_sequences_in_pool(
        memory.budget - memory.weights,
        paged_kv_bytes_for_sequence(cfg, prompt_tokens + 1, block_size=block_size, kv_dtype_bytes=kb, tp=tp)))
    throughput = request_throughput_bound(cfg, spec, prompt_tokens, output_tokens, max_batch=decode_batch,
                                          weight_dtype=dtype, kv_dtype=kv_dtype, tp=tp, efficiency=efficiency,
                                          cached_tokens=cached_tokens)
    return {
        "model": {"name": cfg.name, "layers": cfg.num_layers, "hidden_size": cfg.hidden_size,
                  "num_heads": cfg.num_heads, "num_kv_heads": cfg.num_kv_heads, "head_dim": cfg.head_dim,
                  "intermediate_size": cfg.intermediate_size, "vocab_size": cfg.vocab_size,
                  "sliding_windows": sorted({w for w in cfg.layer_windows if w is not None}),
                  "params_per_rank": params.total, "params_total": param_breakdown(cfg).total},
        "gpu": {"name": spec.name, "peak_flops": spec.peak_flops, "bandwidth_bytes_per_s": spec.bandwidth,
                "memory_bytes": spec.memory_bytes, "source": spec.source},
        "settings": {"tp": tp, "dtype": dtype, "kv_dtype": kv_dtype, "block_size": block_size,
                     "prompt_tokens": prompt_tokens, "output_tokens": output_tokens, "concurrency": concurrency,
                     "cached_tokens": cached_tokens, "gpu_memory_utilization": gpu_memory_utilization,
                     "efficiency": efficiency, "max_num_batched_tokens": max_num_batched_tokens},
        "kv": {"bytes_per_token": kv_bytes_per_token(cfg, kv_dtype_bytes=kb, tp=tp),
               "bytes_per_sequence_logical": kv_bytes_for_sequence(cfg, seq_tokens, kv_dtype_bytes=kb, tp=tp),
               "bytes_per_sequence_paged": memory.kv_per_sequence},
        "blocks": {"per_sequence": blocks.blocks // concurrency, "total": blocks.blocks,
                   "reserved_slots": blocks.reserved_slots, "unused_slots": blocks.unused_slots,
                   "fragmentation": blocks.fragmentation,
                   "sliding_layer_blocks_per_sequence": max(
                       (blocks_for_window(seq_tokens, block_size, w) for w in cfg.layer_windows if w is not None),
                       default=None)},
        "memory": {"budget": memory.budget, "weights": memory.weights, "activation": memory.activation,
                   "overhead": memory.overhead, "kv": memory.kv_for_concurrency, "total": memory.total,
                   "headroom": memory.headroom, "kv_pool": memory.kv_pool, "fits": memory.headroom >= 0},
        "max_concurrency": memory.max_sequences,
        "prefill": {"tokens": prompt_tokens - cached_tokens, "flops": prefill.flops, "bytes": prefill.bytes,
                    "intensity": prefill.intensity, "compute_s": prefill_t.compute_s,
                    "memory_s": prefill_t.memory_s, "bound": prefill_t.bound},
        "decode_step": {"batch": concurrency, "context": prompt_tokens, "flops": decode.flops,
                        "bytes": decode.bytes, "intensity": decode.intensity, "compute_s": decode_t.compute_s,
                        "memory_s": decode_t.memory_s, "bound": decode_t.bound},
        "floors": {"ttft_floor_s": floor["ttft_floor_s"], "tpot_floor_s": floor["tpot_floor_s"],
                   "e2e_floor_s": floor["e2e_floor_s"], "decode_tokens_per_s": floor["decode_tokens_per_s"]},
        "throughput_bound": throughput,
    }


def _bytes(n: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,.0f} B"


def _ms(s: float | None) -> str:
    return "n/a (one output token)" if s is None else f"{s * 1e3:,.3f} ms"


def format_plan(plan: PlanJson) -> str:
    m, g, s, kv, b, mem = plan["model"], plan["gpu"], plan["settings"], plan["kv"], plan["blocks"], plan["memory"]
    pf, dc, fl, tb = plan["prefill"], plan["decode_step"], plan["floors"], plan["throughput_bound"]
    n, seq = s["concurrency"], s["prompt_tokens"] + s["output_tokens"]
    window = f", sliding window {m['sliding_windows']}" if m["sliding_windows"] else ""
    rows = [
        f"goodput plan: {m['name']} on {g['name']}, TP={s['tp']}, weights {s['dtype']}, KV {s['kv_dtype']}",
        "(per GPU rank; roofline bounds are floors, not predictions)",
        "",
        f"model        {m['layers']} layers, D={m['hidden_size']}, Hq={m['num_heads']}, Hkv={m['num_kv_heads']}, "
        f"d={m['head_dim']}, F={m['intermediate_size']}, V={m['vocab_size']}{window}; "
        f"{m['params_total'] / 1e9:.2f} B params",
        f"gpu          {g['peak_flops'] / 1e12:,.1f} TFLOP/s dense, {g['bandwidth_bytes_per_s'] / 1e12:.2f} TB/s, "
        f"{_bytes(g['memory_bytes'])}  [{g['source']}]",
        f"KV / token   {_bytes(kv['bytes_per_token'])}",
        f"KV / request {_bytes(kv['bytes_per_sequence_logical'])} logical, {_bytes(kv['bytes_per_sequence_paged'])} "
        f"in whole blocks ({seq} tokens)",
        f"blocks       {b['per_sequence']} per request of block size {s['block_size']}; {b['total']} for {n}: "
        f"{b['reserved_slots']} slots reserved, {b['unused_slots']} unused ({b['fragmentation']:.1%})"
        + (f"; sliding-window layers hold at most {b['sliding_layer_blocks_per_sequence']} per request"
           if b["sliding_layer_blocks_per_sequence"] is not None else ""),
        "",
        f"memory       budget      {_bytes(mem['budget']):>13}  ({s['gpu_memory_utilization']:.2f} of "
        f"{_bytes(g['memory_bytes'])})",
        f"             weights     {_bytes(mem['weights']):>13}",
        f"             activation  {_bytes(mem['activation']):>13}  (estimate: {s['max_num_batched_tokens']}-token step)",
        f"             overhead    {_bytes(mem['overhead']):>13}  (allowance: context, workspaces)",
        f"             KV for {n:<5}{_bytes(mem['kv']):>13}",
        f"             headroom    {_bytes(mem['headroom']):>13}" + ("" if mem["fits"] else "  DOES NOT FIT"),
        f"max concurrency  {plan['max_concurrency']} requests of {seq} tokens",
        "",
        f"prefill      {pf['tokens']} tokens: {pf['flops'] / 1e12:,.2f} TFLOP, {pf['bytes'] / 1e9:,.2f} GB, "
        f"I={pf['intensity']:,.0f} FLOP/B -> compute {_ms(pf['compute_s'])}, memory {_ms(pf['memory_s'])}: "
        f"{pf['bound']}-bound",
        f"decode step  batch {dc['batch']} at context {dc['context']}: {dc['flops'] / 1e9:,.1f} GFLOP, "
        f"{dc['bytes'] / 1e9:,.2f} GB, I={dc['intensity']:,.1f} FLOP/B -> compute {_ms(dc['compute_s'])}, "
        f"memory {_ms(dc['memory_s'])}: {dc['bound']}-bound",
        "",
        f"floors       TTFT >= {_ms(fl['ttft_floor_s'])}   TPOT >= {_ms(fl['tpot_floor_s'])}   "
        f"E2E >= {_ms(fl['e2e_floor_s'])}"
        + (f"   decode <= {fl['decode_tokens_per_s']:,.0f} tokens/s" if fl["decode_tokens_per_s"] else ""),
        f"throughput   <= {tb['requests_per_s']:,.3g} requests/s of this shape ({tb['bound']}-bound: compute "
        f"<= {tb['compute_requests_per_s']:,.3g}"
        + (f", memory <= {tb['memory_requests_per_s']:,.3g} with up to {tb['max_batch']} sequences decoding"
           if tb["memory_requests_per_s"] is not None else "")
        + "); a ceiling for any SLO, not a prediction",
    ]
    if s["efficiency"] != 1.0:
        rows.append(f"             (peaks scaled by efficiency {s['efficiency']})")
    return "\n".join(rows)


def plan(
    model: Annotated[str, typer.Option(help=f"Preset ({', '.join(MODEL_PRESETS)}) or path to a config.json / model directory.")] = "Llama-3.1-8B",
    gpu: Annotated[str, typer.Option(help=f"GPU preset: {', '.join(GPU_PRESETS)}.")] = "H100-SXM",
    tp: Annotated[int, typer.Option(help="Tensor-parallel size (figures are per rank).")] = 1,
    dtype: Annotated[str, typer.Option(help="Weight dtype: bf16, fp16, fp32, fp8, int8.")] = "bf16",
    kv_dtype: Annotated[str | None, typer.Option(help="KV-cache dtype (default: --dtype).")] = None,
    block_size: Annotated[int, typer.Option(help="Tokens per KV block.")] = 16,
    prompt_tokens: Annotated[int, typer.Option(help="Prompt length of each request.")] = 1024,
    output_tokens: Annotated[int, typer.Option(help="Output length of each request.")] = 256,
    concurrency: Annotated[int, typer.Option(help="Requests decoding together (the decode batch).")] = 1,
    cached_tokens: Annotated[int, typer.Option(help="Prompt tokens served from the prefix cache.")] = 0,
    gpu_memory_utilization: Annotated[float, typer.Option(help="Fraction of GPU memory the server may use.")] = 0.9,
    efficiency: Annotated[float, typer.Option(help="Achieved fraction of peak FLOP/s and bandwidth.")] = 1.0,
    max_num_batched_tokens: Annotated[int, typer.Option(help="Largest step in tokens (sets the activation estimate).")] = DEFAULT_BATCHED_TOKENS,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON (base units) instead of a table.")] = False,
    gpu_hour_cost: Annotated[float | None, typer.Option(help=GPU_HOUR_COST_HELP, rich_help_panel=COST)] = None,
    gpus_per_replica: Annotated[int | None, typer.Option(help=GPUS_PER_REPLICA_HELP + " Default: --tp.", rich_help_panel=COST)] = None,
    target_rate: Annotated[float | None, typer.Option(help=TARGET_RATE_HELP, rich_help_panel=COST)] = None,
) -> int:
    """Capacity and roofline plan: KV per token, blocks, memory, max concurrency, TTFT/TPOT floors, requests/s bound.

    The requests/s bound is a ceiling for requests of this shape: `goodput capacity` can never measure more.
    With --gpu-hour-cost the cost per million requests and output tokens at that bound is a floor, and the
    replicas for --target-rate a least number.

    \b
    Examples:
      goodput plan --model Llama-3.1-8B --gpu H100-SXM --prompt-tokens 2048 \\
          --output-tokens 256 --concurrency 64
      goodput plan --model Llama-3.1-70B --gpu H200 --tp 4 --kv-dtype fp8
      goodput plan --model ./my-model/config.json --gpu L40S --json
      goodput plan --model Llama-3.1-70B --gpu H100-SXM --tp 4 \\
          --gpu-hour-cost 2.50 --target-rate 40
    """
    try:
        costs = parse_cost_options(gpu_hour_cost, gpus_per_replica, target_rate, default_gpus=tp)
        result = build_plan(model=model, gpu=gpu, tp=tp, dtype=dtype, kv_dtype=kv_dtype, block_size=block_size,
                            prompt_tokens=prompt_tokens, output_tokens=output_tokens, concurrency=concurrency,
                            cached_tokens=cached_tokens, gpu_memory_utilization=gpu_memory_utilization,
                            efficiency=efficiency, max_num_batched_tokens=max_num_batched_tokens)
    except (ValueError, FileNotFoundError, UnsupportedModelError) as exc:
        typer.echo(f"goodput plan: error: {exc}", err=True)
        raise typer.Exit(2) from None
    if costs is not None:
        result["cost"] = plan_cost(result, costs)
    text = format_plan(result)
    if costs is not None:
        text += "\n" + "\n".join(cost_lines(result["cost"], bound=True))
    typer.echo(json.dumps(result, indent=2) if as_json else text)
    return 0


def plan_cost(result: PlanJson, costs: CostOptions) -> PlanCost:
    """The cost at the plan's requests/s bound: a floor on what serving requests of this shape costs."""
    from metrics.model import cost_block

    block = cost_block(result["throughput_bound"]["requests_per_s"], result["settings"]["output_tokens"],
                       gpu_hour_cost=costs.gpu_hour_cost, gpus_per_replica=costs.gpus_per_replica,
                       target_rps=costs.target_rate)
    return {**block, "basis": "roofline throughput bound: costs are floors, replicas a least number"}
