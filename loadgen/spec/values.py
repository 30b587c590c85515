"""The option values of `goodput run`, typed: the one place where the raw values from the command line, a
config file and the defaults (see `loadgen.spec.options`) are checked against each option's kind.

Flags (Typer has converted them), a config file (`loadgen.spec.config_file` has coerced its keys) and the
defaults each give a layer of raw values keyed by the parameter name; `merge_values` stacks the layers and
`OptionValues.parse` checks the merged layer once, so `loadgen.spec.build` reads typed fields. The fields
are the options of `loadgen.spec.options.OPTIONS`, in their order, with the type their kind gives:
generated from the declarations by `python -m loadgen.spec.field_block loadgen/spec/values.py`
(tests/loadgen/test_spec_values.py keeps the two equal): str, int, float, bool as such, a path as its
text (a `Path` from the command line too), a repeatable option as a tuple (empty when not given), and
`| None` where the option's default is None.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loadgen.spec.options import BY_PARAM, OPTIONS, Option
from loadgen.spec.sections import SpecError

# A threshold given in a config file may carry its own abort_on_fail; from a flag it is just text.
ThresholdEntry = str | tuple[str, bool]
# One raw value as a layer holds it (before `OptionValues.parse`): a flag's, a config file's or a default.
OptionValue = (str | int | float | bool | Path | list[str] | list[ThresholdEntry] | tuple[str, ...]
               | tuple[ThresholdEntry, ...] | None)


class OptionValues:
    """Every run option's value, checked (see the module doc); read-only. Made only by `parse`, which sets
    each field from its checked value: a plain class with slots, not a dataclass, because generating a
    dataclass's methods for ~95 fields costs a run's start-up milliseconds for nothing used here."""

    __slots__ = tuple(o.param for o in OPTIONS)

    # fields: generated from loadgen/spec/options.py (python -m loadgen.spec.field_block)
    url: str | None
    model: str | None
    endpoint: str
    api_key: str | None
    arrival: str
    rate: float | None
    rate_end: float | None
    burstiness: float
    concurrency: int | None
    duration: str | None
    requests: int | None
    warmup: str
    cooldown: str
    seed: int
    dataset: str | None
    dataset_format: str
    prompt_tokens: str
    output_tokens: str
    prefix_groups: int
    prefix_tokens: int
    prefix_weights: str | None
    tag: tuple[str, ...]
    tokenizer: str
    prompt_sizing: str
    turns: str | None
    think_time: str
    trace: str | None
    trace_format: str
    cache_bust: bool
    images: str
    image_size: str
    image_format: str
    image_pool: int
    tool_latency: str
    tool_result_tokens: str
    max_tool_turns: int
    cancel_rate: float
    cancel_after: str | None
    time_scale: float
    trace_start: str
    trace_duration: str | None
    max_failed: str
    keep_going: bool
    workers: str
    ray: str | None
    ray_placement: str
    on_worker_failure: str
    ignore_eos: bool | None
    min_tokens: int | None
    temperature: float | None
    usage: bool
    continuous_usage: bool
    extra_body: str | None
    tools: str | None
    tool_choice: str | None
    header: tuple[str, ...]
    timeout_connect: str
    timeout_first_byte: str
    timeout_between_chunks: str
    timeout_total: str
    max_connections: int
    slo: tuple[str, ...]
    stall_threshold: str
    lag_threshold: str
    prompt_buckets: str | None
    output_buckets: str | None
    cache_full_ratio: float
    absent_cache_is_zero: bool
    output: str | None
    html: bool
    overwrite: bool
    grace: str
    quiet: bool
    server_arg: tuple[str, ...]
    model_config: str | None
    gpu: str | None
    tp: int
    weight_dtype: str
    metrics_port: int | None
    metrics_host: str
    metrics_linger: str
    pushgateway: str | None
    pushgateway_job: str
    pushgateway_user: str | None
    pushgateway_password: str | None
    pushgateway_interval: str
    pushgateway_delete: bool
    scrape: tuple[str, ...]
    server_metrics: str
    server_metrics_interval: str
    threshold: tuple[ThresholdEntry, ...]
    baseline: str | None
    abort_on_fail: bool
    abort_delay: str | None
    abort_interval: str | None
    junit: str | None
    markdown: str | None
    # /fields

    @classmethod
    def parse(cls, raw: Mapping[str, OptionValue]) -> OptionValues:
        """The values of `raw` (every option, keyed by parameter), each checked against its option's kind;
        SpecError names the flag of a value of the wrong kind, and a key that is no option."""
        unknown = sorted(set(raw) - set(BY_PARAM))
        if unknown:
            raise SpecError(f"unknown run option {unknown[0]!r}")
        values = object.__new__(cls)
        for option in OPTIONS:  # the fields, each set once from its checked value
            object.__setattr__(values, option.param, _checked(option, raw.get(option.param)))
        return values

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"OptionValues are read-only (set by parse): {name}")

    def __repr__(self) -> str:
        return f"OptionValues({', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)})"


def _checked(option: Option, value: OptionValue) -> OptionValue:
    if value is None and option.kind == "list":
        return ()
    if value is None and option.default is None:
        return None
    kind, flag = option.kind, option.flag
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if kind in ("str", "path") and isinstance(value, str | int | float | Path) and not isinstance(value, bool):
        return value if isinstance(value, str) else str(value)
    if kind == "list" and isinstance(value, list | tuple):
        items = [x for x in value if _item_ok(option, x)]
        if len(items) == len(value):
            return tuple(items)
    raise SpecError(f"{flag} must be {_KINDS[kind]}, got {value!r}")


def _item_ok(option: Option, item: str | tuple[str, bool]) -> bool:
    if option.param == "threshold" and isinstance(item, tuple):
        return len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], bool)
    return isinstance(item, str)


_KINDS = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string",
          "path": "a path", "list": "a list of strings"}
