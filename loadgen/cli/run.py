"""`goodput run`: validate every option (exit 2 before any request is sent), then hand over to `session`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from loadgen.http.payload import endpoint_url
from loadgen.run.directory import prepare_run_dir
from loadgen.run.outputs import summary_config
from loadgen.run.prometheus import parse_prom_options
from loadgen.types import ClientConfig, Timeouts
from loadgen.workload.arrivals import Arrival, parse_arrival, schedule
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, Workload, load_jsonl, load_sharegpt
from loadgen.workload.text import make_counter
from metrics.slo import parse_slo
from metrics.units import parse_duration

RUN_HELP = """Run a load test against an OpenAI-compatible streaming server and write its results.

With no --url, the bundled reference server is started on a free loopback port and stopped afterwards.
The output directory is checked before anything is sent: one that already holds a run is refused unless
--overwrite, and one that cannot be written is a usage error (exit 2).

\b
Examples:
  goodput run --requests 50 --rate 5          # embedded reference server, Poisson at 5 req/s
  goodput run --url http://127.0.0.1:8000 --model meta-llama/Llama-3.1-8B-Instruct \\
      --arrival gamma --rate 8 --burstiness 0.5 --duration 2m --warmup 15s \\
      --prompt-tokens lognormal:1000:0.6 --output-tokens 256 --slo ttft=500ms --slo tpot=50ms
  goodput run --url http://127.0.0.1:8000 --arrival concurrency --concurrency 32 \\
      --requests 500 --dataset sharegpt.json --output runs/c32
  goodput run --url http://127.0.0.1:8000 --rate 8 --duration 1m --threshold 'ttft:p(99)<800ms'
"""


DEFAULT_RATE = 4.0


def _fail(message: str) -> typer.BadParameter:
    return typer.BadParameter(message)


def _duration(value: str | None, name: str) -> float | None:
    if value is None:
        return None
    text = value.strip()
    try:
        if text.endswith("m") and not text.endswith("ms"):
            seconds = 60 * parse_duration(text[:-1])
        elif text.endswith("h"):
            seconds = 3600 * parse_duration(text[:-1])
        else:
            seconds = parse_duration(text)
    except ValueError as exc:
        raise _fail(f"{name}: {exc} (or m, h for minutes, hours)") from None
    if seconds < 0:
        raise _fail(f"{name} must not be negative, got {value!r}")
    return seconds


def _positive(value: str | None, name: str) -> float | None:
    seconds = _duration(value, name)
    if seconds is not None and seconds <= 0:
        raise _fail(f"{name} must be greater than 0, got {value!r}")
    return seconds


def _schedule_end(arrival: Arrival, duration_s: float | None, count: int | None, seed: int) -> float | None:
    """Where the cool-down is measured back from: the duration when it is what ends dispatching, else the
    last planned send (open loop) or None (a count-bound closed loop, whose end is not known in advance:
    the metrics then take the last intended send). Known before the run, so the live exporters, the
    summary and `goodput report` after a kill all use the same window. Drawing the schedule here also
    refuses a schedule that cannot be drawn."""
    if not arrival.open_loop:
        return duration_s if count is None else None
    offsets = schedule(arrival, duration_s=duration_s, count=count, seed=seed)
    if duration_s is not None and (count is None or offsets.size < count):
        return duration_s
    return float(offsets[-1]) if offsets.size else None


def _pairs(values: list[str], name: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        key, found, val = v.partition(sep)
        if not found or not key.strip():
            raise _fail(f"{name} expects KEY{sep}VALUE, got {v!r}")
        out[key.strip()] = val.strip()
    return out


def _edges(value: str | None, name: str) -> list[int] | None:
    if value is None:
        return None
    try:
        edges = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise _fail(f"{name} expects comma-separated integers, got {value!r}") from None
    if not edges or edges != sorted(set(edges)) or edges[0] < 0:
        raise _fail(f"{name} must be increasing non-negative integers, got {value!r}")
    return edges


def _roofline_spec(model_config: str | None, gpu: str | None, tp: int, dtype: str) -> dict[str, Any] | None:
    """Validated now (exit 2 before any request) and kept in the settings, so `report` can recompute."""
    if model_config is None and gpu is None:
        return None
    if model_config is None or gpu is None:
        raise _fail("--model-config and --gpu go together (roofline floors need both)")
    from metrics.model.presets import dtype_bytes, resolve_gpu, resolve_model

    if tp < 1:
        raise _fail(f"--tp must be >= 1, got {tp}")
    model, spec = resolve_model(model_config), resolve_gpu(gpu)  # ValueError: a one-line usage error
    dtype_bytes(dtype)
    return {"model": model_config, "model_name": model.name, "gpu": spec.name, "tp": tp, "dtype": dtype,
            "source": "--model-config/--gpu"}


def build_workload(*, dataset: str | None, dataset_format: str, prompt_tokens: str, output_tokens: str,
                   prefix_groups: int, prefix_tokens: int, prefix_weights: str | None, tags: dict[str, str],
                   tokenizer: str, seed: int) -> Workload:
    counter_name, counter = make_counter(tokenizer)
    output = parse_length(output_tokens)
    if dataset is not None:
        fmt = dataset_format
        if fmt == "auto":
            fmt = "jsonl" if dataset.endswith((".jsonl", ".ndjson")) else "sharegpt"
        if fmt not in ("jsonl", "sharegpt"):
            raise ValueError(f"unknown --dataset-format {dataset_format!r}; choose auto, jsonl or sharegpt")
        loader = load_jsonl if fmt == "jsonl" else load_sharegpt
        return DatasetWorkload(fmt, dataset, loader(dataset, counter, tags), seed, output)
    weights = None
    if prefix_weights:
        try:
            weights = [float(w) for w in prefix_weights.split(",")]
        except ValueError:
            raise ValueError(f"--prefix-weights expects comma-separated numbers, got {prefix_weights!r}") from None
    if prefix_groups < 0 or prefix_tokens < 0:
        raise ValueError("--prefix-groups and --prefix-tokens must not be negative")
    if prefix_groups and not prefix_tokens:
        raise ValueError("--prefix-groups needs --prefix-tokens > 0")
    return SyntheticWorkload(parse_length(prompt_tokens), output, seed, counter_name, counter,
                             prefix_groups=prefix_groups, prefix_tokens=prefix_tokens, prefix_weights=weights,
                             tags=tags)


def run(
    url: Annotated[str | None, typer.Option(envvar="GOODPUT_URL", help="Server base URL (with or without /v1). Omit to start the bundled reference server on loopback.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name to request; default: the first of GET /v1/models.")] = None,
    endpoint: Annotated[str, typer.Option(help="chat (/v1/chat/completions) or completions (/v1/completions).")] = "chat",
    api_key: Annotated[str | None, typer.Option(envvar="OPENAI_API_KEY", help="Bearer token; never written anywhere.", show_default=False)] = None,
    arrival: Annotated[str, typer.Option(help="constant | poisson | gamma | ramp | concurrency (closed loop: subject to coordinated omission).")] = "poisson",
    rate: Annotated[float | None, typer.Option(help="Requests/s (default 4; start rate for ramp; optional cap for concurrency).")] = None,
    rate_end: Annotated[float | None, typer.Option(help="Ramp: requests/s at the end of --duration.")] = None,
    burstiness: Annotated[float, typer.Option(help="Gamma shape: 1 = Poisson, <1 burstier, >1 smoother.")] = 1.0,
    concurrency: Annotated[int | None, typer.Option(help="Closed loop: requests kept in flight.")] = None,
    duration: Annotated[str | None, typer.Option(help="Dispatch for this long (e.g. 30s, 2m).")] = None,
    requests: Annotated[int | None, typer.Option(help="Send this many requests (default 100 when no --duration).")] = None,
    warmup: Annotated[str, typer.Option(help="Exclude requests scheduled in the first part of the run.")] = "0s",
    cooldown: Annotated[str, typer.Option(help="Exclude requests scheduled in the last part of the run.")] = "0s",
    seed: Annotated[int, typer.Option(help="Seed of the schedule and the workload.")] = 0,
    dataset: Annotated[str | None, typer.Option(help="JSONL of chat requests or ShareGPT JSON; default: synthetic prompts.")] = None,
    dataset_format: Annotated[str, typer.Option(help="auto | jsonl | sharegpt.")] = "auto",
    prompt_tokens: Annotated[str, typer.Option(help="Synthetic prompt length: N, uniform:LO:HI, normal:MEAN:STD, lognormal:MEDIAN:SIGMA.")] = "256",
    output_tokens: Annotated[str, typer.Option(help="Output length (max_tokens), same forms as --prompt-tokens.")] = "128",
    prefix_groups: Annotated[int, typer.Option(help="Shared-prefix mode: number of groups with a common system prompt.")] = 0,
    prefix_tokens: Annotated[int, typer.Option(help="Shared-prefix mode: tokens in each group's system prompt.")] = 0,
    prefix_weights: Annotated[str | None, typer.Option(help="Shared-prefix mode: comma-separated group weights.")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="KEY=VALUE tag on every request (scenario, tenant); becomes a bucket.")] = None,
    tokenizer: Annotated[str, typer.Option(help="Counting tokens: words | bytes | path to tokenizer.json. Sizes prompts, and splits or estimates output tokens when the server reports no per-chunk usage. Default: bytes for the embedded server, else words.")] = "auto",
    ignore_eos: Annotated[bool | None, typer.Option("--ignore-eos/--no-ignore-eos", help="Ask the server to generate exactly max_tokens (vLLM extension; default on for the embedded server).")] = None,
    min_tokens: Annotated[int | None, typer.Option(help="min_tokens on every request (vLLM extension).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature on every request.")] = None,
    usage: Annotated[bool, typer.Option("--usage/--no-usage", help="Ask for stream_options.include_usage.")] = True,
    continuous_usage: Annotated[bool, typer.Option("--continuous-usage/--no-continuous-usage", help="Ask for per-chunk running usage (exact tokens per chunk).")] = True,
    extra_body: Annotated[str | None, typer.Option(help="JSON object merged into every request body.")] = None,
    header: Annotated[list[str] | None, typer.Option(help="'Name: value' header on every request.")] = None,
    timeout_connect: Annotated[str, typer.Option(help="Connect timeout.")] = "10s",
    timeout_first_byte: Annotated[str, typer.Option(help="Request written → response headers.")] = "10m",
    timeout_between_chunks: Annotated[str, typer.Option(help="Longest silence inside a stream.")] = "2m",
    timeout_total: Annotated[str, typer.Option(help="Longest whole request.")] = "30m",
    max_connections: Annotated[int, typer.Option(help="Connection pool size (requests beyond it queue in the client, visible as dispatch lag).")] = 10_000,
    slo: Annotated[list[str] | None, typer.Option(help="SLO for goodput: ttft=500ms, tpot=50ms, e2e=10s, itl_max=1s (repeat).")] = None,
    stall_threshold: Annotated[str, typer.Option(help="An inter-chunk gap above this is a stall.")] = "1s",
    lag_threshold: Annotated[str, typer.Option(help="Flag the client as saturated when dispatch lag p99 exceeds this.")] = "10ms",
    prompt_buckets: Annotated[str | None, typer.Option(help="Prompt-token bucket edges, e.g. 0,128,512,2048,8192,32768.")] = None,
    output_buckets: Annotated[str | None, typer.Option(help="Output-token bucket edges.")] = None,
    cache_full_ratio: Annotated[float, typer.Option(help="Cache-hit class 'full' when cached/prompt >= this.")] = 0.9,
    absent_cache_is_zero: Annotated[bool, typer.Option(help="Read a missing cached_tokens as 0 (vLLM omits it when 0).")] = False,
    output: Annotated[Path | None, typer.Option(help="Output directory (default runs/<timestamp>, never shared by two runs). One that already holds a run is refused.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the run already in --output: its result files are removed first (nothing else in the directory).")] = False,
    grace: Annotated[str, typer.Option(help="On SIGINT/SIGTERM, wait this long for in-flight requests.")] = "10s",
    quiet: Annotated[bool, typer.Option(help="No live progress (for CI).")] = False,
    server_arg: Annotated[list[str] | None, typer.Option(help="Extra argument for the embedded reference server, e.g. --server-arg=--max-num-seqs=64.")] = None,
    model_config: Annotated[str | None, typer.Option(help="Roofline floors in the summary: model preset (Llama-3.1-8B, ...) or config.json of the deployment under test; needs --gpu.")] = None,
    gpu: Annotated[str | None, typer.Option(help="Roofline floors: GPU preset (H100-SXM, H200, A100-80GB, L40S, ...).")] = None,
    tp: Annotated[int, typer.Option(help="Roofline floors: tensor-parallel size of the deployment.")] = 1,
    weight_dtype: Annotated[str, typer.Option(help="Roofline floors: weight (and KV) dtype of the deployment.")] = "bf16",
    metrics_port: Annotated[int | None, typer.Option(envvar="GOODPUT_METRICS_PORT", help="Serve live Prometheus metrics on this port during the run (0 = any free port).")] = None,
    metrics_host: Annotated[str, typer.Option(help="Address of the live metrics endpoint (loopback unless you choose otherwise).")] = "127.0.0.1",
    metrics_linger: Annotated[str, typer.Option(help="After the run, keep serving the final metrics this long (for a last scrape).")] = "0s",
    pushgateway: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY", help="Pushgateway URL: push the run's metrics there at the end (grouping key job, run_id, worker).")] = None,
    pushgateway_job: Annotated[str, typer.Option(help="Pushgateway job label.")] = "goodput",
    pushgateway_user: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY_USER", help="Pushgateway basic-auth user.", show_default=False)] = None,
    pushgateway_password: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY_PASSWORD", help="Pushgateway basic-auth password; never written anywhere.", show_default=False)] = None,
    pushgateway_interval: Annotated[str, typer.Option(help="Also push every this often during the run (0 = only at the end).")] = "0s",
    pushgateway_delete: Annotated[bool, typer.Option("--pushgateway-delete", help="At the end, delete the run's group from the Pushgateway instead of leaving the final push (with --pushgateway-interval).")] = False,
    server_metrics: Annotated[str, typer.Option(help="Server /metrics to scrape before, during and after the run: URL, auto (the target's /metrics when it answers) or none.")] = "auto",
    server_metrics_interval: Annotated[str, typer.Option(help="Scrape the server's metrics this often during the run.")] = "5s",
    threshold: Annotated[list[str] | None, typer.Option(help="Pass condition judged at the end, e.g. 'ttft:p(99)<500ms' (repeat); exit 99 on failure.")] = None,
    config: Annotated[Path | None, typer.Option(envvar="GOODPUT_GATE_CONFIG", help="Gate config file (YAML/TOML): slo, thresholds, options.")] = None,
    baseline: Annotated[Path | None, typer.Option(help="Baseline run directory for 'baseline * 1.10' thresholds.")] = None,
    abort_on_fail: Annotated[bool, typer.Option(help="Stop the run early when a threshold fails (after --abort-delay).")] = False,
    abort_delay: Annotated[str | None, typer.Option(help="Do not judge abort-on-fail thresholds before this much of the run (default 10s).")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write threshold results as JUnit XML here.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write threshold results as Markdown here (e.g. $GITHUB_STEP_SUMMARY).")] = None,
) -> int:
    # Imported here, not with the module: `goodput --help` and `goodput report` stay light.
    from loadgen.run.gate import build_gate_plan
    from loadgen.run.session import RunSetup, execute

    try:
        if rate is None and arrival != "concurrency":
            rate = DEFAULT_RATE
        arr = parse_arrival(arrival, rate=rate, burstiness=burstiness, rate_end=rate_end, concurrency=concurrency)
        duration_s = _positive(duration, "--duration")
        if requests is not None and requests < 1:
            raise _fail(f"--requests must be >= 1, got {requests}")
        if duration_s is None and requests is None:
            requests = 100
        schedule_end_s = _schedule_end(arr, duration_s, requests, seed)
        if endpoint not in ("chat", "completions"):
            raise _fail(f"--endpoint must be chat or completions, got {endpoint!r}")
        if url is not None:
            endpoint_url(url, "chat" if endpoint == "chat" else "completions")  # ValueError: a usage error
        tags = _pairs(tag or [], "--tag", "=")
        headers = _pairs(header or [], "--header", ":")
        try:
            extra = json.loads(extra_body) if extra_body else {}
        except json.JSONDecodeError as exc:
            raise _fail(f"--extra-body is not valid JSON: {exc.msg}") from None
        if not isinstance(extra, dict):
            raise _fail("--extra-body must be a JSON object")
        if min_tokens is not None:
            if min_tokens < 0:
                raise _fail(f"--min-tokens must be >= 0, got {min_tokens}")
            extra = {"min_tokens": min_tokens, **extra}
        if max_connections < 1:
            raise _fail("--max-connections must be >= 1")
        if not 0 < cache_full_ratio <= 1:
            raise _fail("--cache-full-ratio must be in (0, 1]")
        parse_slo(slo or [])
        embedded = url is None
        counter_spec = tokenizer if tokenizer != "auto" else ("bytes" if embedded else "words")
        workload = build_workload(dataset=dataset, dataset_format=dataset_format, prompt_tokens=prompt_tokens,
                                  output_tokens=output_tokens, prefix_groups=prefix_groups,
                                  prefix_tokens=prefix_tokens, prefix_weights=prefix_weights, tags=tags,
                                  tokenizer=counter_spec, seed=seed)
        timeouts = Timeouts(connect_s=_positive(timeout_connect, "--timeout-connect"),
                            first_byte_s=_positive(timeout_first_byte, "--timeout-first-byte"),
                            between_chunks_s=_positive(timeout_between_chunks, "--timeout-between-chunks"),
                            total_s=_positive(timeout_total, "--timeout-total"))
        settings: dict[str, Any] = {
            "slo": list(slo or []),
            "warmup_s": _duration(warmup, "--warmup"),
            "cooldown_s": _duration(cooldown, "--cooldown"),
            "stall_threshold_s": _duration(stall_threshold, "--stall-threshold"),
            "lag_threshold_s": _duration(lag_threshold, "--lag-threshold"),
            "prompt_bucket_edges": _edges(prompt_buckets, "--prompt-buckets"),
            "output_bucket_edges": _edges(output_buckets, "--output-buckets"),
            "cache_full_ratio": cache_full_ratio,
            "absent_cache_is_zero": absent_cache_is_zero,
            "roofline": _roofline_spec(model_config, gpu, tp, weight_dtype),
            "schedule_end_s": schedule_end_s,
        }
        summary_config(settings)  # every metric setting checked now, not after the run
        grace_s = _duration(grace, "--grace") or 0.0
        gate_plan = build_gate_plan(thresholds=threshold or [], config=config, baseline=baseline,
                                    abort_on_fail=abort_on_fail, abort_delay_s=_duration(abort_delay, "--abort-delay"),
                                    junit=junit, markdown=markdown, prompt_edges=settings["prompt_bucket_edges"],
                                    output_edges=settings["output_bucket_edges"], slo=settings["slo"])
        if gate_plan is not None and gate_plan.slo:
            settings["slo"] = [*gate_plan.slo, *settings["slo"]]
            parse_slo(settings["slo"])
        prom = parse_prom_options(
            metrics_port=metrics_port, metrics_host=metrics_host,
            metrics_linger_s=_duration(metrics_linger, "--metrics-linger") or 0.0,
            pushgateway=pushgateway, pushgateway_job=pushgateway_job, pushgateway_user=pushgateway_user,
            pushgateway_password=pushgateway_password,
            pushgateway_interval_s=_duration(pushgateway_interval, "--pushgateway-interval") or 0.0,
            pushgateway_delete=pushgateway_delete, server_metrics=server_metrics,
            server_metrics_interval_s=_duration(server_metrics_interval, "--server-metrics-interval") or 0.0)
        client = ClientConfig(base_url=url or "", model=model or "", endpoint=endpoint,  # type: ignore[arg-type]
                              api_key=api_key, timeouts=timeouts, max_connections=max_connections,
                              include_usage=usage, continuous_usage_stats=continuous_usage,
                              ignore_eos=ignore_eos if ignore_eos is not None else embedded,
                              extra_body=extra, extra_headers=headers, temperature=temperature,
                              token_counter=counter_spec)
        # Last: the directory is created only once everything else is known to be valid, and `execute`
        # (which removes it again if nothing gets sent) takes it over at once.
        run_dir = prepare_run_dir(output, overwrite=overwrite)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    setup = RunSetup(client=client, workload=workload, arrival=arr, duration_s=duration_s, count=requests,
                     seed=seed, grace_s=grace_s, settings=settings, run_dir=run_dir, quiet=quiet,
                     embedded_args=list(server_arg or []), token_counter=counter_spec, prom=prom,
                     gate=gate_plan)
    code = execute(setup)
    if code:
        raise typer.Exit(code)
    return 0
