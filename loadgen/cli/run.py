"""`goodput run`: every option (flags, environment, a config file) → one `RunSpec`, checked before anything
is sent (exit 2 with one line), then handed to `loadgen.run.session`."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from loadgen.spec.options import (
    LOAD,
    METRICS,
    OUTPUTS,
    PROMETHEUS,
    REQUEST,
    ROOFLINE,
    SCALE,
    SLO_GATE,
    TARGET,
    TIMEOUTS,
    WORKLOAD,
)

CONFIG = "Config file"

RUN_HELP = """Run a load test against an OpenAI-compatible streaming server and write its results.

With no --url, the bundled reference server is started on a free loopback port and stopped afterwards.
The output directory is checked before anything is sent: one that already holds a run is refused unless
--overwrite, and one that cannot be written is a usage error (exit 2).

\b
Examples:
  # the embedded reference server, Poisson arrivals at 5 req/s
  goodput run --requests 50 --rate 5
  goodput run --url http://127.0.0.1:8000 \\
      --model meta-llama/Llama-3.1-8B-Instruct \\
      --arrival gamma --rate 8 --burstiness 0.5 --duration 2m --warmup 15s \\
      --prompt-tokens lognormal:1000:0.6 --output-tokens 256 \\
      --slo ttft=500ms --slo tpot=50ms
  goodput run --url http://127.0.0.1:8000 --arrival concurrency \\
      --concurrency 32 --requests 500 --dataset sharegpt.json \\
      --output runs/c32
  goodput run --url http://127.0.0.1:8000 --rate 8 --duration 1m \\
      --threshold 'ttft:p(99)<800ms'
  # GPU utilisation, memory, power and joules per output token (DCGM exporter)
  goodput run --url http://127.0.0.1:8000 --rate 8 --duration 1m \\
      --scrape dcgm=http://127.0.0.1:9400/metrics
  goodput run --url http://127.0.0.1:8000 --trace mooncake.jsonl \\
      --time-scale 2 --trace-duration 10m
  goodput run --url http://127.0.0.1:8000 --turns uniform:2:8 \\
      --think-time exponential:5s --rate 0.5
  # all cores
  goodput run --url http://127.0.0.1:8000 --rate 400 --duration 2m \\
      --workers auto
  # a checked-in config file; flags win over it
  goodput run --config loadtest.yaml --rate 16
  # start a config file
  goodput run --url http://127.0.0.1:8000 --rate 8 \\
      --print-config > loadtest.yaml
"""


def run(
    ctx: typer.Context,
    url: Annotated[str | None, typer.Option(envvar="GOODPUT_URL", help="Server base URL (with or without /v1). Omit to start the bundled reference server on loopback.", rich_help_panel=TARGET)] = None,
    model: Annotated[str | None, typer.Option(help="Model name to request; default: the first of GET /v1/models. A list mixes models per request: a,b,c (equal shares) or base:0.6,lora-a:0.4.", rich_help_panel=TARGET)] = None,
    endpoint: Annotated[str, typer.Option(help="chat (/v1/chat/completions), completions (/v1/completions), responses (/v1/responses) or messages (/v1/messages, Anthropic's).", rich_help_panel=TARGET)] = "chat",
    api_key: Annotated[str | None, typer.Option(envvar="OPENAI_API_KEY", help="API key (a bearer token; for messages also x-api-key); never written anywhere.", show_default=False, rich_help_panel=TARGET)] = None,
    arrival: Annotated[str, typer.Option(help="constant | poisson | gamma | ramp | concurrency (closed loop: subject to coordinated omission).", rich_help_panel=LOAD)] = "poisson",
    rate: Annotated[float | None, typer.Option(help="Requests/s (default 4; start rate for ramp; optional cap for concurrency; new sessions/s with --turns; with --trace: the mean rate the trace is rescaled to).", rich_help_panel=LOAD)] = None,
    rate_end: Annotated[float | None, typer.Option(help="Ramp: requests/s at the end of --duration.", rich_help_panel=LOAD)] = None,
    burstiness: Annotated[float, typer.Option(help="Gamma shape: 1 = Poisson, <1 burstier, >1 smoother.", rich_help_panel=LOAD)] = 1.0,
    concurrency: Annotated[int | None, typer.Option(help="Closed loop: requests kept in flight.", rich_help_panel=LOAD)] = None,
    duration: Annotated[str | None, typer.Option(help="Dispatch for this long (e.g. 30s, 2m).", rich_help_panel=LOAD)] = None,
    requests: Annotated[int | None, typer.Option(help="Send this many requests (sessions with --turns; default 100 when no --duration, the whole trace with --trace).", rich_help_panel=LOAD)] = None,
    warmup: Annotated[str, typer.Option(help="Exclude requests scheduled in the first part of the run.", rich_help_panel=LOAD)] = "0s",
    cooldown: Annotated[str, typer.Option(help="Exclude requests scheduled in the last part of the run.", rich_help_panel=LOAD)] = "0s",
    seed: Annotated[int, typer.Option(help="Seed of the schedule and the workload.", rich_help_panel=LOAD)] = 0,
    dataset: Annotated[str | None, typer.Option(help="JSONL of chat requests or ShareGPT JSON; default: synthetic prompts.", rich_help_panel=WORKLOAD)] = None,
    dataset_format: Annotated[str, typer.Option(help="auto | jsonl | sharegpt.", rich_help_panel=WORKLOAD)] = "auto",
    prompt_tokens: Annotated[str, typer.Option(help="Synthetic prompt length: N, uniform:LO:HI, normal:MEAN:STD, lognormal:MEDIAN:SIGMA.", rich_help_panel=WORKLOAD)] = "256",
    output_tokens: Annotated[str, typer.Option(help="Output length (max_tokens), same forms as --prompt-tokens.", rich_help_panel=WORKLOAD)] = "128",
    prefix_groups: Annotated[int, typer.Option(help="Shared-prefix mode: number of groups with a common system prompt.", rich_help_panel=WORKLOAD)] = 0,
    prefix_tokens: Annotated[int, typer.Option(help="Shared-prefix mode: tokens in each group's system prompt.", rich_help_panel=WORKLOAD)] = 0,
    prefix_weights: Annotated[str | None, typer.Option(help="Shared-prefix mode: comma-separated group weights.", rich_help_panel=WORKLOAD)] = None,
    tag: Annotated[list[str] | None, typer.Option(help="KEY=VALUE tag on every request (scenario, tenant); becomes a bucket.", rich_help_panel=WORKLOAD)] = None,
    tokenizer: Annotated[str, typer.Option(help="Counting tokens: words | bytes | path to tokenizer.json. Sizes prompts, and splits or estimates output tokens when the server reports no per-chunk usage. Default: bytes for the embedded server, else words.", rich_help_panel=WORKLOAD)] = "auto",
    prompt_sizing: Annotated[str, typer.Option(help="How prompts are sized: auto (the embedded server or --tokenizer: the local counter; another server: its POST /tokenize, else a calibration), tokenize, calibrate (a few max_tokens=1 probes), counter (the --tokenizer counter only).", rich_help_panel=WORKLOAD)] = "auto",
    turns: Annotated[str | None, typer.Option(help="Conversations: turns per session (N, uniform:LO:HI, ...); each turn re-sends the history with the answers streamed so far. --rate, --concurrency and --requests then count sessions. With --dataset: its conversations turn by turn, at most this many turns each.", rich_help_panel=WORKLOAD)] = None,
    think_time: Annotated[str, typer.Option(help="Conversations: wait between a turn's answer and the next turn: 2s, exponential:5s, uniform:1s:4s, lognormal:3s:0.5.", rich_help_panel=WORKLOAD)] = "0s",
    trace: Annotated[str | None, typer.Option(help="Replay a trace at its own timestamps with its lengths: Mooncake JSONL, Azure or BurstGPT CSV (see goodput trace inspect).", rich_help_panel=WORKLOAD)] = None,
    trace_format: Annotated[str, typer.Option(help="auto | mooncake | azure | burstgpt.", rich_help_panel=WORKLOAD)] = "auto",
    cache_bust: Annotated[bool, typer.Option("--cache-bust", help="A unique prefix on every request, so no prompt can hit the prefix cache (cold-cache TTFT).", rich_help_panel=WORKLOAD)] = False,
    images: Annotated[str, typer.Option(help="Images per request (VLMs): N, uniform:LO:HI or VALUE:WEIGHT,... (0:0.5,2:0.5); synthetic, seeded, sent inline as data URLs.", rich_help_panel=WORKLOAD)] = "0",
    image_size: Annotated[str, typer.Option(help="Image size: WxH, uniform:WxH:WxH or WxH:WEIGHT,... (512x512:0.7,1024x1024:0.3).", rich_help_panel=WORKLOAD)] = "512x512",
    image_format: Annotated[str, typer.Option(help="png | jpeg.", rich_help_panel=WORKLOAD)] = "png",
    image_pool: Annotated[int, typer.Option(help="Draw the images from this many distinct ones (reuse, for a server's multimodal cache); 0: every image unique.", rich_help_panel=WORKLOAD)] = 0,
    tool_latency: Annotated[str, typer.Option(help="Conversations with --tools: how long a tool takes before its result and the model's next turn (the forms of --think-time).", rich_help_panel=WORKLOAD)] = "0s",
    tool_result_tokens: Annotated[str, typer.Option(help="Conversations with --tools: tokens of each tool result (a length distribution).", rich_help_panel=WORKLOAD)] = "64",
    max_tool_turns: Annotated[int, typer.Option(help="Conversations with --tools: tool turns at most after each turn (0: a tool call ends the turn).", rich_help_panel=WORKLOAD)] = 4,
    cancel_rate: Annotated[float, typer.Option(help="Share of requests (0-1) the client cancels mid-stream, closing the connection as a browser's stop button does; needs --cancel-after.", rich_help_panel=WORKLOAD)] = 0.0,
    cancel_after: Annotated[str | None, typer.Option(help="When a cancelled request is closed: a time after the send (500ms, exponential:1s, uniform:200ms:2s, lognormal:1s:0.5) or tokens:K after K output tokens (K as --output-tokens).", rich_help_panel=WORKLOAD)] = None,
    time_scale: Annotated[float, typer.Option(help="Trace replay: speed-up (2 = twice as fast).", rich_help_panel=LOAD)] = 1.0,
    trace_start: Annotated[str, typer.Option(help="Trace replay: skip this much of the trace (trace time).", rich_help_panel=LOAD)] = "0s",
    trace_duration: Annotated[str | None, typer.Option(help="Trace replay: replay only this much of the trace (trace time).", rich_help_panel=LOAD)] = None,
    max_failed: Annotated[str, typer.Option(help="Exit 1 when more requests than this failed: a share of those that ended (10%) or a count (25); 100% never trips.", rich_help_panel=LOAD)] = "10%",
    keep_going: Annotated[bool, typer.Option("--keep-going", help="Send every request even when the first 10 to end all failed the same way (by default the run stops there, exit 1).", rich_help_panel=LOAD)] = False,
    workers: Annotated[str, typer.Option(help="Dispatch the one schedule from N worker processes (auto = cores - 1); with --ray: N actors (auto = one per node). 1 = this process.", rich_help_panel=SCALE)] = "1",
    ray: Annotated[str | None, typer.Option(help="Run the workers as Ray actors: auto (the cluster Ray finds) or the cluster's address (needs goodput[ray] on every node).", rich_help_panel=SCALE)] = None,
    ray_placement: Annotated[str, typer.Option(help="Ray: spread the actors over the nodes, or KEY=VALUE to place them only on nodes with that label.", rich_help_panel=SCALE)] = "spread",
    on_worker_failure: Annotated[str, typer.Option(help="A worker that dies: stop the run (exit 1) or continue without it; its unfinished requests are recorded as lost either way.", rich_help_panel=SCALE)] = "stop",
    ignore_eos: Annotated[bool | None, typer.Option("--ignore-eos/--no-ignore-eos", help="Ask the server to generate exactly max_tokens (vLLM extension; default on for the embedded server).", rich_help_panel=REQUEST)] = None,
    min_tokens: Annotated[int | None, typer.Option(help="min_tokens on every request (vLLM extension).", rich_help_panel=REQUEST)] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature on every request.", rich_help_panel=REQUEST)] = None,
    usage: Annotated[bool, typer.Option("--usage/--no-usage", help="Ask for stream_options.include_usage.", rich_help_panel=REQUEST)] = True,
    continuous_usage: Annotated[bool, typer.Option("--continuous-usage/--no-continuous-usage", help="Ask for per-chunk running usage (exact tokens per chunk).", rich_help_panel=REQUEST)] = True,
    extra_body: Annotated[str | None, typer.Option(help="JSON object merged into every request body.", rich_help_panel=REQUEST)] = None,
    tools: Annotated[Path | None, typer.Option(help="JSON file of an OpenAI-style tool list sent with every request, in each API's form (a dataset row's own tools win).", rich_help_panel=REQUEST)] = None,
    tool_choice: Annotated[str | None, typer.Option(help="auto | required | none | the name of one of --tools.", rich_help_panel=REQUEST)] = None,
    header: Annotated[list[str] | None, typer.Option(help="'Name: value' header on every request.", rich_help_panel=REQUEST)] = None,
    timeout_connect: Annotated[str, typer.Option(help="Connect timeout.", rich_help_panel=TIMEOUTS)] = "10s",
    timeout_first_byte: Annotated[str, typer.Option(help="Request written → response headers.", rich_help_panel=TIMEOUTS)] = "10m",
    timeout_between_chunks: Annotated[str, typer.Option(help="Longest silence inside a stream.", rich_help_panel=TIMEOUTS)] = "2m",
    timeout_total: Annotated[str, typer.Option(help="Longest whole request.", rich_help_panel=TIMEOUTS)] = "30m",
    max_connections: Annotated[int, typer.Option(help="Connection pool size (requests beyond it queue in the client, visible as dispatch lag).", rich_help_panel=REQUEST)] = 10_000,
    slo: Annotated[list[str] | None, typer.Option(help="SLO for goodput: ttft=500ms, ttfo=2s, tpot=50ms, e2e=10s, itl_max=1s (repeat).", rich_help_panel=SLO_GATE)] = None,
    stall_threshold: Annotated[str, typer.Option(help="An inter-chunk gap above this is a stall.", rich_help_panel=METRICS)] = "1s",
    lag_threshold: Annotated[str, typer.Option(help="Flag the client as saturated when dispatch lag p99 exceeds this.", rich_help_panel=METRICS)] = "10ms",
    prompt_buckets: Annotated[str | None, typer.Option(help="Prompt-token bucket edges, e.g. 0,128,512,2048,8192,32768.", rich_help_panel=METRICS)] = None,
    output_buckets: Annotated[str | None, typer.Option(help="Output-token bucket edges.", rich_help_panel=METRICS)] = None,
    cache_full_ratio: Annotated[float, typer.Option(help="Cache-hit class 'full' when cached/prompt >= this.", rich_help_panel=METRICS)] = 0.9,
    absent_cache_is_zero: Annotated[bool, typer.Option(help="Read a missing cached_tokens as 0. vLLM sends it (0 included) only when started with --enable-prompt-tokens-details and omits it on every request without; SGLang needs --enable-cache-report: prefer those flags, since absent then means unknown, not 0.", rich_help_panel=METRICS)] = False,
    output: Annotated[Path | None, typer.Option(help="Output directory (default runs/<timestamp>, never shared by two runs). One that already holds a run is refused.", rich_help_panel=OUTPUTS)] = None,
    html: Annotated[bool, typer.Option("--html/--no-html", help="Write report.html (plots and tables, one self-contained file) at the end.", rich_help_panel=OUTPUTS)] = True,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the run already in --output: its result files are removed first (nothing else in the directory).", rich_help_panel=OUTPUTS)] = False,
    grace: Annotated[str, typer.Option(help="On SIGINT/SIGTERM, wait this long for in-flight requests.", rich_help_panel=LOAD)] = "10s",
    quiet: Annotated[bool, typer.Option(help="No live progress (for CI).", rich_help_panel=OUTPUTS)] = False,
    server_arg: Annotated[list[str] | None, typer.Option(help="Extra argument for the embedded reference server, e.g. --server-arg=--max-num-seqs=64.", rich_help_panel=TARGET)] = None,
    model_config: Annotated[str | None, typer.Option(help="Roofline floors in the summary: model preset (Llama-3.1-8B, ...) or config.json of the deployment under test; needs --gpu.", rich_help_panel=ROOFLINE)] = None,
    gpu: Annotated[str | None, typer.Option(help="Roofline floors: GPU preset (H100-SXM, H200, A100-80GB, L40S, ...).", rich_help_panel=ROOFLINE)] = None,
    tp: Annotated[int, typer.Option(help="Roofline floors: tensor-parallel size of the deployment.", rich_help_panel=ROOFLINE)] = 1,
    weight_dtype: Annotated[str, typer.Option(help="Roofline floors: weight (and KV) dtype of the deployment.", rich_help_panel=ROOFLINE)] = "bf16",
    metrics_port: Annotated[int | None, typer.Option(envvar="GOODPUT_METRICS_PORT", help="Serve live Prometheus metrics on this port during the run (0 = any free port).", rich_help_panel=PROMETHEUS)] = None,
    metrics_host: Annotated[str, typer.Option(help="Address of the live metrics endpoint (loopback unless you choose otherwise).", rich_help_panel=PROMETHEUS)] = "127.0.0.1",
    metrics_linger: Annotated[str, typer.Option(help="After the run, keep serving the final metrics this long (for a last scrape).", rich_help_panel=PROMETHEUS)] = "0s",
    pushgateway: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY", help="Pushgateway URL: push the run's metrics there at the end (grouping key job, run_id, worker).", rich_help_panel=PROMETHEUS)] = None,
    pushgateway_job: Annotated[str, typer.Option(help="Pushgateway job label.", rich_help_panel=PROMETHEUS)] = "goodput",
    pushgateway_user: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY_USER", help="Pushgateway basic-auth user.", show_default=False, rich_help_panel=PROMETHEUS)] = None,
    pushgateway_password: Annotated[str | None, typer.Option(envvar="GOODPUT_PUSHGATEWAY_PASSWORD", help="Pushgateway basic-auth password; never written anywhere.", show_default=False, rich_help_panel=PROMETHEUS)] = None,
    pushgateway_interval: Annotated[str, typer.Option(help="Also push every this often during the run (0 = only at the end).", rich_help_panel=PROMETHEUS)] = "0s",
    pushgateway_delete: Annotated[bool, typer.Option("--pushgateway-delete", help="At the end, delete the run's group from the Pushgateway instead of leaving the final push (with --pushgateway-interval).", rich_help_panel=PROMETHEUS)] = False,
    scrape: Annotated[list[str] | None, typer.Option(help="NAME=URL: also scrape this Prometheus endpoint like the server's (repeatable); NVIDIA DCGM exporter GPU metrics go to summary.json 'gpu' (utilisation, memory, power, joules per output token).", rich_help_panel=PROMETHEUS)] = None,
    server_metrics: Annotated[str, typer.Option(help="Server /metrics to scrape before, during and after the run: URL, auto (the target's /metrics when it answers) or none.", rich_help_panel=PROMETHEUS)] = "auto",
    server_metrics_interval: Annotated[str, typer.Option(help="Scrape the server's metrics this often during the run.", rich_help_panel=PROMETHEUS)] = "5s",
    threshold: Annotated[list[str] | None, typer.Option(help="Pass condition judged at the end, e.g. 'ttft:p(99)<500ms' (repeat); exit 99 on failure.", rich_help_panel=SLO_GATE)] = None,
    config: Annotated[Path | None, typer.Option(envvar=["GOODPUT_CONFIG", "GOODPUT_GATE_CONFIG"], help="Run config file (YAML or TOML): any option below as a key (flags given here win); gate configs (slo, thresholds, ...) work as they are.", rich_help_panel=CONFIG)] = None,
    print_config: Annotated[bool, typer.Option("--print-config", help="Print the effective run spec as a YAML config file and exit (nothing is sent).", rich_help_panel=CONFIG)] = False,
    baseline: Annotated[Path | None, typer.Option(help="Baseline run directory for 'baseline * 1.10' thresholds.", rich_help_panel=SLO_GATE)] = None,
    abort_on_fail: Annotated[bool, typer.Option(help="Stop the run early when a threshold fails (after --abort-delay).", rich_help_panel=SLO_GATE)] = False,
    abort_delay: Annotated[str | None, typer.Option(help="Do not judge abort-on-fail thresholds before this much of the run (default 10s).", rich_help_panel=SLO_GATE)] = None,
    abort_interval: Annotated[str | None, typer.Option(help="How often abort-on-fail thresholds are judged during the run (default 1s).", rich_help_panel=SLO_GATE)] = None,
    junit: Annotated[Path | None, typer.Option(help="Write threshold results as JUnit XML here.", rich_help_panel=SLO_GATE)] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write threshold results as Markdown here (e.g. $GITHUB_STEP_SUMMARY).", rich_help_panel=SLO_GATE)] = None,
) -> int:
    # Imported here, not with the module: `goodput --help` stays light.
    from loadgen.run.directory import prepare_run_dir
    from loadgen.run.session import execute
    from loadgen.run.setup import plan_run
    from loadgen.spec.build import build_spec
    from loadgen.spec.config_file import merge_values, read_config_file

    try:
        file_values = read_config_file(config) if config is not None else {}
        spec, secrets = build_spec(merge_values(run_defaults(), file_values, given_values(ctx)))
        if print_config:
            from loadgen.spec.render import render_config

            typer.echo(render_config(spec), nl=False)
            return 0
        setup = plan_run(spec, secrets)
        # Last: the directory is created only once everything else is known to be valid, and `execute`
        # (which removes it again if nothing gets sent) takes it over at once.
        output_dir = spec.outputs.output
        run_dir = prepare_run_dir(Path(output_dir) if output_dir is not None else None,
                                  overwrite=spec.outputs.overwrite)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    code = execute(setup, run_dir)
    if code:
        raise typer.Exit(code)
    return 0


def run_defaults() -> dict[str, Any]:
    """Every run option at its default, as `goodput run` with no flags would have it."""
    from loadgen.spec.options import BY_PARAM

    params = inspect.signature(run).parameters
    return {name: params[name].default for name in BY_PARAM}


def given_values(ctx: typer.Context) -> dict[str, Any]:
    """The options the user set on the command line or through their environment variable."""
    from loadgen.spec.options import BY_PARAM

    given = {}
    for name, value in ctx.params.items():
        source = ctx.get_parameter_source(name)
        if name in BY_PARAM and source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given[name] = value
    return given
