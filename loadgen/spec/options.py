"""Every `goodput run` option once: its config-file key, its flag, its help panel and its value kind.

The command line and a config file both produce the same flat mapping of option values (the flag names
with underscores), and `loadgen.spec.build.build_spec` turns that mapping into a `RunSpec`: one
validation for both. A config-file key is the flag without its dashes; the repeatable flags take a plural
key (`--tag` → `tags`), as the gate's config file always had (`thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Option:
    param: str  # the `goodput run` parameter (flag without dashes, underscores)
    panel: str
    kind: str  # str | int | float | bool | list | path
    key: str = ""  # the config-file key; the parameter name unless plural
    secret: bool = False  # never read from a file, never written

    @property
    def file_key(self) -> str:
        return self.key or self.param

    @property
    def flag(self) -> str:
        return "--" + self.param.replace("_", "-")


OPTIONS: tuple[Option, ...] = (
    Option("url", TARGET, "str"),
    Option("model", TARGET, "str"),
    Option("endpoint", TARGET, "str"),
    Option("api_key", TARGET, "str", secret=True),
    Option("server_arg", TARGET, "list", key="server_args"),
    Option("dataset", WORKLOAD, "path"),
    Option("dataset_format", WORKLOAD, "str"),
    Option("prompt_tokens", WORKLOAD, "str"),
    Option("output_tokens", WORKLOAD, "str"),
    Option("prefix_groups", WORKLOAD, "int"),
    Option("prefix_tokens", WORKLOAD, "int"),
    Option("prefix_weights", WORKLOAD, "str"),
    Option("tag", WORKLOAD, "list", key="tags"),
    Option("tokenizer", WORKLOAD, "str"),
    Option("prompt_sizing", WORKLOAD, "str"),
    Option("turns", WORKLOAD, "str"),
    Option("think_time", WORKLOAD, "str"),
    Option("trace", WORKLOAD, "path"),
    Option("trace_format", WORKLOAD, "str"),
    Option("cache_bust", WORKLOAD, "bool"),
    Option("images", WORKLOAD, "str"),
    Option("image_size", WORKLOAD, "str"),
    Option("image_format", WORKLOAD, "str"),
    Option("image_pool", WORKLOAD, "int"),
    Option("tool_latency", WORKLOAD, "str"),
    Option("tool_result_tokens", WORKLOAD, "str"),
    Option("max_tool_turns", WORKLOAD, "int"),
    Option("cancel_rate", WORKLOAD, "float"),
    Option("cancel_after", WORKLOAD, "str"),
    Option("arrival", LOAD, "str"),
    Option("rate", LOAD, "float"),
    Option("rate_end", LOAD, "float"),
    Option("burstiness", LOAD, "float"),
    Option("concurrency", LOAD, "int"),
    Option("duration", LOAD, "str"),
    Option("requests", LOAD, "int"),
    Option("warmup", LOAD, "str"),
    Option("cooldown", LOAD, "str"),
    Option("seed", LOAD, "int"),
    Option("grace", LOAD, "str"),
    Option("time_scale", LOAD, "float"),
    Option("trace_start", LOAD, "str"),
    Option("trace_duration", LOAD, "str"),
    Option("max_failed", LOAD, "str"),
    Option("keep_going", LOAD, "bool"),
    Option("workers", SCALE, "str"),
    Option("ray", SCALE, "str"),
    Option("ray_placement", SCALE, "str"),
    Option("on_worker_failure", SCALE, "str"),
    Option("ignore_eos", REQUEST, "bool"),
    Option("min_tokens", REQUEST, "int"),
    Option("temperature", REQUEST, "float"),
    Option("usage", REQUEST, "bool"),
    Option("continuous_usage", REQUEST, "bool"),
    Option("extra_body", REQUEST, "str"),
    Option("tools", REQUEST, "path"),
    Option("tool_choice", REQUEST, "str"),
    Option("header", REQUEST, "list", key="headers"),
    Option("max_connections", REQUEST, "int"),
    Option("slo", SLO_GATE, "list"),
    Option("threshold", SLO_GATE, "list", key="thresholds"),
    Option("baseline", SLO_GATE, "path"),
    Option("abort_on_fail", SLO_GATE, "bool"),
    Option("abort_delay", SLO_GATE, "str"),
    Option("abort_interval", SLO_GATE, "str"),
    Option("junit", SLO_GATE, "path"),
    Option("markdown", SLO_GATE, "path"),
    Option("stall_threshold", METRICS, "str"),
    Option("lag_threshold", METRICS, "str"),
    Option("prompt_buckets", METRICS, "str"),
    Option("output_buckets", METRICS, "str"),
    Option("cache_full_ratio", METRICS, "float"),
    Option("absent_cache_is_zero", METRICS, "bool"),
    Option("output", OUTPUTS, "path"),
    Option("overwrite", OUTPUTS, "bool"),
    Option("html", OUTPUTS, "bool"),
    Option("quiet", OUTPUTS, "bool"),
    Option("metrics_port", PROMETHEUS, "int"),
    Option("metrics_host", PROMETHEUS, "str"),
    Option("metrics_linger", PROMETHEUS, "str"),
    Option("pushgateway", PROMETHEUS, "str"),
    Option("pushgateway_job", PROMETHEUS, "str"),
    Option("pushgateway_user", PROMETHEUS, "str"),
    Option("pushgateway_password", PROMETHEUS, "str", secret=True),
    Option("pushgateway_interval", PROMETHEUS, "str"),
    Option("pushgateway_delete", PROMETHEUS, "bool"),
    Option("server_metrics", PROMETHEUS, "str"),
    Option("server_metrics_interval", PROMETHEUS, "str"),
    Option("scrape", PROMETHEUS, "list"),
    Option("timeout_connect", TIMEOUTS, "str"),
    Option("timeout_first_byte", TIMEOUTS, "str"),
    Option("timeout_between_chunks", TIMEOUTS, "str"),
    Option("timeout_total", TIMEOUTS, "str"),
    Option("model_config", ROOFLINE, "str"),
    Option("gpu", ROOFLINE, "str"),
    Option("tp", ROOFLINE, "int"),
    Option("weight_dtype", ROOFLINE, "str"),
)

BY_PARAM = {o.param: o for o in OPTIONS}
BY_FILE_KEY = {o.file_key: o for o in OPTIONS}
# Parameters of `goodput run` that are not run options: they say where options come from.
NOT_OPTIONS = frozenset({"config", "print_config"})
# Options only the gate's config file knew, with no flag of their own.
FILE_ONLY = frozenset({"abort_interval"})
