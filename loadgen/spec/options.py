"""Every `goodput run` option once: its config-file key, its flag, its help panel and its value kind.

The command line and a config file both produce the same flat mapping of option values (the flag names
with underscores), and `loadgen.spec.build.build_spec` turns that mapping into a `RunSpec`: one
validation for both. A config-file key is the flag without its dashes; the repeatable flags take a plural
key (`--tag` → `tags`), as the gate's config file always had (`thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

# Help panels, in the order `goodput run --help` shows them (and `--print-config` writes them).
TARGET = "Target"
WORKLOAD = "Workload"
LOAD = "Load shape"
SCALE = "Scale-out"
REQUEST = "Request options"
SLO_GATE = "SLO and gate"
METRICS = "Metrics and buckets"
OUTPUTS = "Outputs"
PROMETHEUS = "Prometheus"
TIMEOUTS = "Timeouts"
ROOFLINE = "Roofline floors"
PANELS = (TARGET, WORKLOAD, LOAD, SCALE, REQUEST, SLO_GATE, METRICS, OUTPUTS, PROMETHEUS, TIMEOUTS, ROOFLINE)
# How a derived option's value becomes its spec field and back (see loadgen.spec.derived).
Codec = Literal["copy", "or_none", "text", "duration", "duration_or_none", "positive_duration", "length",
                # and those of loadgen.spec.codecs
                "length_or_none", "think_time", "numbers", "edges", "pairs", "strings",
                "count_or_auto", "json_object", "fail_limit", "slo"]
CONFIG = "Config file"  # where the options come from (not written by --print-config)


@dataclass(frozen=True, slots=True)
class Option:
    """A parameter of `goodput run`, declared once: what its flag is (name, type, default, help, help panel,
    environment variable) and what its config-file key is. `loadgen.cli.run` makes the command's signature
    from these, so `goodput sweep`/`capacity` (which take run's parameters), the config file,
    `--print-config` and docs/run-config.md's key table (a test) all read the same declaration."""

    param: str  # the `goodput run` parameter (flag without dashes, underscores)
    panel: str
    kind: str  # how a config file's value is checked: str | int | float | bool | list | path (| config)
    type: Any  # the command line's type, which Typer converts the flag's text to
    default: Any
    help: str
    key: str = ""  # the config-file key; the parameter name unless plural
    secret: bool = False  # never read from a file, never written
    decls: tuple[str, ...] = ()  # the flag's own spelling, where it is not --param (bool switches)
    envvar: str | list[str] | None = None
    show_default: bool = True
    spec: str = ""  # SECTION.FIELD of the RunSpec made from this option alone (loadgen.spec.derived)
    codec: Codec = "copy"  # how that field is made from the value and back (loadgen.spec.derived)

    @property
    def file_key(self) -> str:
        return self.key or self.param

    @property
    def flag(self) -> str:
        return "--" + self.param.replace("_", "-")


# Every parameter of `goodput run`, in the order its --help lists them.
PARAMETERS: tuple[Option, ...] = (
    Option("url", TARGET, "str", str | None, None, 'Server base URL (with or without /v1). Omit to start the bundled reference server on loopback.', envvar='GOODPUT_URL'),
    Option("model", TARGET, "str", str | None, None, 'Model name to request; default: the first of GET /v1/models. A list mixes models per request: a,b,c (equal shares) or base:0.6,lora-a:0.4.', spec='target.model', codec='or_none'),
    Option("endpoint", TARGET, "str", str, 'chat', "chat (/v1/chat/completions), completions (/v1/completions), responses (/v1/responses) or messages (/v1/messages, Anthropic's).", spec='target.endpoint'),
    Option("api_key", TARGET, "str", str | None, None, 'API key (a bearer token; for messages also x-api-key); never written anywhere.', secret=True, envvar='OPENAI_API_KEY', show_default=False),
    Option("arrival", LOAD, "str", str, 'poisson', 'constant | poisson | gamma | ramp | concurrency (closed loop: subject to coordinated omission).'),
    Option("rate", LOAD, "float", float | None, None, 'Requests/s (default 4; start rate for ramp; optional cap for concurrency; new sessions/s with --turns; with --trace: the mean rate the trace is rescaled to).'),
    Option("rate_end", LOAD, "float", float | None, None, 'Ramp: requests/s at the end of --duration.'),
    Option("burstiness", LOAD, "float", float, 1.0, 'Gamma shape: 1 = Poisson, <1 burstier, >1 smoother.'),
    Option("concurrency", LOAD, "int", int | None, None, 'Closed loop: requests kept in flight.'),
    Option("duration", LOAD, "str", str | None, None, 'Dispatch for this long (e.g. 30s, 2m).', spec='load.duration_s', codec='positive_duration'),
    Option("requests", LOAD, "int", int | None, None, 'Send this many requests (sessions with --turns; default 100 when no --duration, the whole trace with --trace).'),
    Option("warmup", LOAD, "str", str, '0s', 'Exclude requests scheduled in the first part of the run.', spec='load.warmup_s', codec='duration'),
    Option("cooldown", LOAD, "str", str, '0s', 'Exclude requests scheduled in the last part of the run.', spec='load.cooldown_s', codec='duration'),
    Option("seed", LOAD, "int", int, 0, 'Seed of the schedule and the workload.', spec='load.seed'),
    Option("dataset", WORKLOAD, "path", str | None, None, 'JSONL of chat requests or ShareGPT JSON; default: synthetic prompts.', spec='workload.dataset', codec='text'),
    Option("dataset_format", WORKLOAD, "str", str, 'auto', 'auto | jsonl | sharegpt.', spec='workload.dataset_format'),
    Option("prompt_tokens", WORKLOAD, "str", str, '256', 'Synthetic prompt length: N, uniform:LO:HI, normal:MEAN:STD, lognormal:MEDIAN:SIGMA.', spec='workload.prompt_tokens', codec='length'),
    Option("output_tokens", WORKLOAD, "str", str, '128', 'Output length (max_tokens), same forms as --prompt-tokens.', spec='workload.output_tokens', codec='length'),
    Option("prefix_groups", WORKLOAD, "int", int, 0, 'Shared-prefix mode: number of groups with a common system prompt.', spec='workload.prefix_groups'),
    Option("prefix_tokens", WORKLOAD, "int", int, 0, "Shared-prefix mode: tokens in each group's system prompt.", spec='workload.prefix_tokens'),
    Option("prefix_weights", WORKLOAD, "str", str | None, None, 'Shared-prefix mode: comma-separated group weights.', spec='workload.prefix_weights', codec='numbers'),
    Option("tag", WORKLOAD, "list", list[str] | None, None, 'KEY=VALUE tag on every request (scenario, tenant); becomes a bucket.', key='tags', spec='workload.tags', codec='pairs'),
    Option("tokenizer", WORKLOAD, "str", str, 'auto', 'Counting tokens: words | bytes | path to tokenizer.json. Sizes prompts, and splits or estimates output tokens when the server reports no per-chunk usage. Default: bytes for the embedded server, else words.', spec='workload.tokenizer'),
    Option("prompt_sizing", WORKLOAD, "str", str, 'auto', 'How prompts are sized: auto (the embedded server or --tokenizer: the local counter; another server: its POST /tokenize, else a calibration), tokenize, calibrate (a few max_tokens=1 probes), counter (the --tokenizer counter only).', spec='workload.prompt_sizing'),
    Option("turns", WORKLOAD, "str", str | None, None, 'Conversations: turns per session (N, uniform:LO:HI, ...); each turn re-sends the history with the answers streamed so far. --rate, --concurrency and --requests then count sessions. With --dataset: its conversations turn by turn, at most this many turns each.', spec='workload.turns', codec='length_or_none'),
    Option("think_time", WORKLOAD, "str", str, '0s', "Conversations: wait between a turn's answer and the next turn: 2s, exponential:5s, uniform:1s:4s, lognormal:3s:0.5.", spec='workload.think_time', codec='think_time'),
    Option("trace", WORKLOAD, "path", str | None, None, 'Replay a trace at its own timestamps with its lengths: Mooncake JSONL, Azure or BurstGPT CSV (see goodput trace inspect).', spec='workload.trace', codec='text'),
    Option("trace_format", WORKLOAD, "str", str, 'auto', 'auto | mooncake | azure | burstgpt.', spec='workload.trace_format'),
    Option("cache_bust", WORKLOAD, "bool", bool, False, 'A unique prefix on every request, so no prompt can hit the prefix cache (cold-cache TTFT).', decls=('--cache-bust',), spec='workload.cache_bust'),
    Option("images", WORKLOAD, "str", str, '0', 'Images per request (VLMs): N, uniform:LO:HI or VALUE:WEIGHT,... (0:0.5,2:0.5); synthetic, seeded, sent inline as data URLs.'),
    Option("image_size", WORKLOAD, "str", str, '512x512', 'Image size: WxH, uniform:WxH:WxH or WxH:WEIGHT,... (512x512:0.7,1024x1024:0.3).'),
    Option("image_format", WORKLOAD, "str", str, 'png', 'png | jpeg.'),
    Option("image_pool", WORKLOAD, "int", int, 0, "Draw the images from this many distinct ones (reuse, for a server's multimodal cache); 0: every image unique."),
    Option("tool_latency", WORKLOAD, "str", str, '0s', "Conversations with --tools: how long a tool takes before its result and the model's next turn (the forms of --think-time).", spec='workload.tool_latency', codec='think_time'),
    Option("tool_result_tokens", WORKLOAD, "str", str, '64', 'Conversations with --tools: tokens of each tool result (a length distribution).', spec='workload.tool_result_tokens', codec='length'),
    Option("max_tool_turns", WORKLOAD, "int", int, 4, 'Conversations with --tools: tool turns at most after each turn (0: a tool call ends the turn).', spec='workload.max_tool_turns'),
    Option("cancel_rate", WORKLOAD, "float", float, 0.0, "Share of requests (0-1) the client cancels mid-stream, closing the connection as a browser's stop button does; needs --cancel-after.", spec='workload.cancel_rate'),
    Option("cancel_after", WORKLOAD, "str", str | None, None, 'When a cancelled request is closed: a time after the send (500ms, exponential:1s, uniform:200ms:2s, lognormal:1s:0.5) or tokens:K after K output tokens (K as --output-tokens).', spec='workload.cancel_after', codec='text'),
    Option("time_scale", LOAD, "float", float, 1.0, 'Trace replay: speed-up (2 = twice as fast).', spec='load.time_scale'),
    Option("trace_start", LOAD, "str", str, '0s', 'Trace replay: skip this much of the trace (trace time).', spec='load.trace_start_s', codec='duration'),
    Option("trace_duration", LOAD, "str", str | None, None, 'Trace replay: replay only this much of the trace (trace time).', spec='load.trace_duration_s', codec='positive_duration'),
    Option("max_failed", LOAD, "str", str, '10%', 'Exit 1 when more requests than this failed: a share of those that ended (10%) or a count (25); 100% never trips.', spec='load.max_failed', codec='fail_limit'),
    Option("keep_going", LOAD, "bool", bool, False, 'Send every request even when the first 10 to end all failed the same way (by default the run stops there, exit 1).', decls=('--keep-going',), spec='load.keep_going'),
    Option("workers", SCALE, "str", str, '1', 'Dispatch the one schedule from N worker processes (auto = cores - 1); with --ray: N actors (auto = one per node). 1 = this process.', spec='scale.workers', codec='count_or_auto'),
    Option("ray", SCALE, "str", str | None, None, "Run the workers as Ray actors: auto (the cluster Ray finds) or the cluster's address (needs goodput[ray] on every node).", spec='scale.ray', codec='or_none'),
    Option("ray_placement", SCALE, "str", str, 'spread', 'Ray: spread the actors over the nodes, or KEY=VALUE to place them only on nodes with that label.', spec='scale.ray_placement'),
    Option("on_worker_failure", SCALE, "str", str, 'stop', 'A worker that dies: stop the run (exit 1) or continue without it; its unfinished requests are recorded as lost either way.', spec='scale.on_worker_failure'),
    Option("ignore_eos", REQUEST, "bool", bool | None, None, 'Ask the server to generate exactly max_tokens (vLLM extension; default on for the embedded server).', decls=('--ignore-eos/--no-ignore-eos',), spec='request.ignore_eos'),
    Option("min_tokens", REQUEST, "int", int | None, None, 'min_tokens on every request (vLLM extension).', spec='request.min_tokens'),
    Option("temperature", REQUEST, "float", float | None, None, 'Sampling temperature on every request.', spec='request.temperature'),
    Option("usage", REQUEST, "bool", bool, True, 'Ask for stream_options.include_usage.', decls=('--usage/--no-usage',), spec='request.usage'),
    Option("continuous_usage", REQUEST, "bool", bool, True, 'Ask for per-chunk running usage (exact tokens per chunk).', decls=('--continuous-usage/--no-continuous-usage',), spec='request.continuous_usage'),
    Option("extra_body", REQUEST, "str", str | None, None, 'JSON object merged into every request body.', spec='request.extra_body', codec='json_object'),
    Option("tools", REQUEST, "path", Path | None, None, "JSON file of an OpenAI-style tool list sent with every request, in each API's form (a dataset row's own tools win). Not with --endpoint completions."),
    Option("tool_choice", REQUEST, "str", str | None, None, 'auto | required | none | the name of one of --tools.'),
    Option("header", REQUEST, "list", list[str] | None, None, "'Name: value' header on every request.", key='headers'),
    Option("timeout_connect", TIMEOUTS, "str", str, '10s', 'Connect timeout.', spec='timeouts.connect_s', codec='positive_duration'),
    Option("timeout_first_byte", TIMEOUTS, "str", str, '10m', 'Request written → response headers.', spec='timeouts.first_byte_s', codec='positive_duration'),
    Option("timeout_between_chunks", TIMEOUTS, "str", str, '2m', 'Longest silence inside a stream.', spec='timeouts.between_chunks_s', codec='positive_duration'),
    Option("timeout_total", TIMEOUTS, "str", str, '30m', 'Longest whole request.', spec='timeouts.total_s', codec='positive_duration'),
    Option("max_connections", REQUEST, "int", int, 10000, 'Connection pool size (requests beyond it queue in the client, visible as dispatch lag).', spec='request.max_connections'),
    Option("slo", SLO_GATE, "list", list[str] | None, None, 'SLO for goodput: ttft=500ms, ttfo=2s, tpot=50ms, e2e=10s, itl_max=1s (repeat).', spec='metrics.slo', codec='slo'),
    Option("stall_threshold", METRICS, "str", str, '1s', 'An inter-chunk gap above this is a stall.', spec='metrics.stall_threshold_s', codec='duration'),
    Option("lag_threshold", METRICS, "str", str, '10ms', 'Flag the client as saturated when dispatch lag p99 exceeds this.', spec='metrics.lag_threshold_s', codec='duration'),
    Option("prompt_buckets", METRICS, "str", str | None, None, 'Prompt-token bucket edges, e.g. 0,128,512,2048,8192,32768.', spec='metrics.prompt_bucket_edges', codec='edges'),
    Option("output_buckets", METRICS, "str", str | None, None, 'Output-token bucket edges.', spec='metrics.output_bucket_edges', codec='edges'),
    Option("cache_full_ratio", METRICS, "float", float, 0.9, "Cache-hit class 'full' when cached/prompt >= this.", spec='metrics.cache_full_ratio'),
    Option("absent_cache_is_zero", METRICS, "bool", bool, False, 'Read a missing cached_tokens as 0. vLLM sends it (0 included) only when started with --enable-prompt-tokens-details and omits it on every request without; SGLang needs --enable-cache-report: prefer those flags, since absent then means unknown, not 0.', spec='metrics.absent_cache_is_zero'),
    Option("output", OUTPUTS, "path", Path | None, None, 'Output directory (default runs/<timestamp>, never shared by two runs). One that already holds a run is refused.', spec='outputs.output', codec='text'),
    Option("html", OUTPUTS, "bool", bool, True, 'Write report.html (plots and tables, one self-contained file) at the end.', decls=('--html/--no-html',), spec='outputs.html'),
    Option("overwrite", OUTPUTS, "bool", bool, False, 'Replace the run already in --output: its result files are removed first (nothing else in the directory).', decls=('--overwrite',), spec='outputs.overwrite'),
    Option("grace", LOAD, "str", str, '10s', 'On SIGINT/SIGTERM, wait this long for in-flight requests.', spec='load.grace_s', codec='duration'),
    Option("quiet", OUTPUTS, "bool", bool, False, 'No live progress (for CI).', spec='outputs.quiet'),
    Option("server_arg", TARGET, "list", list[str] | None, None, 'Extra argument for the embedded reference server, e.g. --server-arg=--max-num-seqs=64.', key='server_args'),
    Option("model_config", ROOFLINE, "str", str | None, None, 'Roofline floors in the summary: model preset (Llama-3.1-8B, ...) or config.json of the deployment under test; needs --gpu.'),
    Option("gpu", ROOFLINE, "str", str | None, None, 'Roofline floors: GPU preset (H100-SXM, H200, A100-80GB, L40S, ...).'),
    Option("tp", ROOFLINE, "int", int, 1, 'Roofline floors: tensor-parallel size of the deployment.'),
    Option("weight_dtype", ROOFLINE, "str", str, 'bf16', 'Roofline floors: weight (and KV) dtype of the deployment.'),
    Option("metrics_port", PROMETHEUS, "int", int | None, None, 'Serve live Prometheus metrics on this port during the run (0 = any free port).', envvar='GOODPUT_METRICS_PORT', spec='prometheus.metrics_port'),
    Option("metrics_host", PROMETHEUS, "str", str, '127.0.0.1', 'Address of the live metrics endpoint (loopback unless you choose otherwise).', spec='prometheus.metrics_host'),
    Option("metrics_linger", PROMETHEUS, "str", str, '0s', 'After the run, keep serving the final metrics this long (for a last scrape).', spec='prometheus.metrics_linger_s', codec='duration'),
    Option("pushgateway", PROMETHEUS, "str", str | None, None, "Pushgateway URL: push the run's metrics there at the end (grouping key job, run_id, worker).", envvar='GOODPUT_PUSHGATEWAY'),
    Option("pushgateway_job", PROMETHEUS, "str", str, 'goodput', 'Pushgateway job label.', spec='prometheus.pushgateway_job'),
    Option("pushgateway_user", PROMETHEUS, "str", str | None, None, 'Pushgateway basic-auth user.', envvar='GOODPUT_PUSHGATEWAY_USER', show_default=False),
    Option("pushgateway_password", PROMETHEUS, "str", str | None, None, 'Pushgateway basic-auth password; never written anywhere.', secret=True, envvar='GOODPUT_PUSHGATEWAY_PASSWORD', show_default=False),
    Option("pushgateway_interval", PROMETHEUS, "str", str, '0s', 'Also push every this often during the run (0 = only at the end).', spec='prometheus.pushgateway_interval_s', codec='duration'),
    Option("pushgateway_delete", PROMETHEUS, "bool", bool, False, "At the end, delete the run's group from the Pushgateway instead of leaving the final push (with --pushgateway-interval).", decls=('--pushgateway-delete',), spec='prometheus.pushgateway_delete'),
    Option("scrape", PROMETHEUS, "list", list[str] | None, None, "NAME=URL: also scrape this Prometheus endpoint like the server's (repeatable); NVIDIA DCGM exporter GPU metrics go to summary.json 'gpu' (utilisation, memory, power, joules per output token).", spec='prometheus.scrape', codec='strings'),
    Option("server_metrics", PROMETHEUS, "str", str, 'auto', "Server /metrics to scrape before, during and after the run: URL, auto (the target's /metrics when it answers) or none.", spec='prometheus.server_metrics'),
    Option("server_metrics_interval", PROMETHEUS, "str", str, '5s', "Scrape the server's metrics this often during the run.", spec='prometheus.server_metrics_interval_s', codec='duration'),
    Option("threshold", SLO_GATE, "list", list[str] | None, None, "Pass condition judged at the end, e.g. 'ttft:p(99)<500ms' (repeat); exit 99 on failure.", key='thresholds'),
    Option("config", CONFIG, "config", Path | None, None, 'Run config file (YAML or TOML): any option below as a key (flags given here win); gate configs (slo, thresholds, ...) work as they are.', envvar=['GOODPUT_CONFIG', 'GOODPUT_GATE_CONFIG']),
    Option("print_config", CONFIG, "config", bool, False, 'Print the effective run spec as a YAML config file and exit (nothing is sent).', decls=('--print-config',)),
    Option("baseline", SLO_GATE, "path", Path | None, None, "Baseline run directory for 'baseline * 1.10' thresholds.", spec='gate.baseline', codec='text'),
    Option("abort_on_fail", SLO_GATE, "bool", bool, False, 'Stop the run early when a threshold fails (after --abort-delay).'),
    Option("abort_delay", SLO_GATE, "str", str | None, None, 'Do not judge abort-on-fail thresholds before this much of the run (default 10s).', spec='gate.abort_delay_s', codec='duration_or_none'),
    Option("abort_interval", SLO_GATE, "str", str | None, None, 'How often abort-on-fail thresholds are judged during the run (default 1s).', spec='gate.abort_interval_s', codec='duration_or_none'),
    Option("junit", SLO_GATE, "path", Path | None, None, 'Write threshold results as JUnit XML here.', spec='gate.junit', codec='text'),
    Option("markdown", SLO_GATE, "path", Path | None, None, 'Write threshold results as Markdown here (e.g. $GITHUB_STEP_SUMMARY).', spec='gate.markdown', codec='text'),
)
# Parameters of `goodput run` that are not run options: they say where options come from.
NOT_OPTIONS = frozenset({"config", "print_config"})
OPTIONS: tuple[Option, ...] = tuple(o for o in PARAMETERS if o.param not in NOT_OPTIONS)

BY_PARAM = {o.param: o for o in OPTIONS}
BY_FILE_KEY = {o.file_key: o for o in OPTIONS}
# Options only the gate's config file knew, with no flag of their own.
FILE_ONLY = frozenset({"abort_interval"})
