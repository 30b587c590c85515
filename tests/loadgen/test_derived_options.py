"""The run options made from their declarations alone (loadgen.spec.derived): which they are, that each
declared spec field exists and fits its codec, that none is also written by hand in build.py, and that their
values go into the spec and come back as the hand-written code did."""

from __future__ import annotations

import ast
import inspect
import typing
from dataclasses import fields

import pytest

import loadgen.spec.agent_options as agent_options
import loadgen.spec.build as build
from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec, spec_values
from loadgen.spec.derived import DERIVED, SECTIONS, section_values
from loadgen.spec.options import OPTIONS
from loadgen.spec.run_spec import RunSpec
from loadgen.spec.sections import SpecError
from loadgen.spec.values import OptionValues
from loadgen.workload import LengthDist, ThinkTime
from metrics import SLO

# Written in two places: the declaration (with spec= and codec=) and the section's field.
EXPECTED = (
    "model", "endpoint", "duration", "warmup", "cooldown", "seed", "dataset", "dataset_format", "prompt_tokens",
    "output_tokens", "prefix_groups", "prefix_tokens", "prefix_weights", "tag", "tokenizer", "prompt_sizing", "turns",
    "think_time", "trace", "trace_format", "cache_bust", "tool_latency", "tool_result_tokens", "max_tool_turns",
    "cancel_rate", "cancel_after", "time_scale", "trace_start", "trace_duration", "max_failed", "keep_going",
    "workers", "ray", "ray_placement", "on_worker_failure", "ignore_eos", "min_tokens", "temperature", "usage",
    "continuous_usage", "extra_body", "timeout_connect", "timeout_first_byte", "timeout_between_chunks",
    "timeout_total", "max_connections", "slo", "stall_threshold", "lag_threshold", "prompt_buckets", "output_buckets",
    "cache_full_ratio", "absent_cache_is_zero", "output", "html", "overwrite", "grace", "quiet", "metrics_port",
    "metrics_host", "metrics_linger", "pushgateway_job", "pushgateway_interval", "pushgateway_delete", "scrape",
    "server_metrics", "server_metrics_interval", "baseline", "abort_delay", "abort_interval", "junit", "markdown",
)
# The field type each codec makes, given the option's own (copy) type.
CODEC_TYPES = {"or_none": str | None, "text": str | None, "duration": float, "duration_or_none": float | None,
               "positive_duration": float | None, "length": LengthDist, "length_or_none": LengthDist | None,
               "think_time": ThinkTime, "numbers": tuple[float, ...] | None,
               "edges": tuple[int, ...] | None, "pairs": tuple[tuple[str, str], ...], "strings": tuple[str, ...],
               "count_or_auto": int | None, "json_object": str | None, "fail_limit": str, "slo": SLO}
KIND_TYPES = {"str": str, "path": str, "int": int, "float": float, "bool": bool}


def test_the_derived_options_are_these() -> None:
    assert tuple(o.param for o in DERIVED) == EXPECTED
    assert len(DERIVED) == 72 and len(OPTIONS) - len(DERIVED) == 25


def test_the_sections_are_the_run_specs() -> None:
    hints = typing.get_type_hints(RunSpec)
    assert {name: hints[name] for name in SECTIONS} == SECTIONS
    assert set(SECTIONS) == {f.name for f in fields(RunSpec)}


@pytest.mark.parametrize("option", DERIVED, ids=lambda o: o.param)
def test_a_declared_spec_field_exists_and_fits_its_codec(option: typing.Any) -> None:
    section, dot, name = option.spec.partition(".")
    assert dot and section in SECTIONS, f"{option.param}: no spec section {section!r}"
    hints = typing.get_type_hints(SECTIONS[section])
    assert name in hints, f"{option.param}: {SECTIONS[section].__name__} has no field {name!r}"
    want = CODEC_TYPES.get(option.codec)
    if want is None:  # copy: the option's own type
        want = KIND_TYPES[option.kind] | None if option.default is None else KIND_TYPES[option.kind]
    assert hints[name] == want, f"{option.param}: {option.codec} makes {want}, the field is {hints[name]}"


def _hand_written() -> tuple[set[str], set[str]]:
    """The spec fields build.py sets by hand (`SECTION.FIELD`: the keyword arguments of each `make(Section, ...)`
    and the agent and tool fields it spreads in), and the options spec_values writes by hand."""
    by_class = {cls.__name__: name for name, cls in SECTIONS.items()}
    set_by_hand: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(build))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "make":
            assert isinstance(node.args[0], ast.Name)
            section = by_class[node.args[0].id]
            set_by_hand |= {f"{section}.{k.arg}" for k in node.keywords if k.arg is not None}
    set_by_hand |= {f"request.{k}" for k in agent_options.ToolFields.__annotations__}
    written: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(spec_values))):
        if isinstance(node, ast.Dict):
            written |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return set_by_hand, written


def test_no_derived_option_is_also_written_by_hand() -> None:
    set_by_hand, written = _hand_written()
    derived = {o.param for o in DERIVED}
    assert not set_by_hand & {o.spec for o in DERIVED}, "a derived field set by hand in build_spec"
    assert {"load.arrival", "load.requests", "workload.images", "gate.thresholds"} <= set_by_hand
    assert not written & derived, f"written by hand in spec_values: {sorted(written & derived)}"
    assert written == {o.param for o in OPTIONS} - derived, "spec_values writes every other option by hand"


def test_derived_values_go_into_the_spec_and_come_back() -> None:
    given = {"warmup": "2s", "trace_duration": "20s", "time_scale": 2.0, "trace": "t.jsonl", "timeout_total": "1h",
             "prompt_tokens": "uniform:10:20", "abort_delay": "500ms", "output": "out", "quiet": True}
    spec, _ = build_spec({**run_defaults(), **given, "prompt_tokens": "uniform:10:20"})
    assert spec.load.warmup_s == 2.0 and spec.load.trace_duration_s == 20.0 and spec.load.time_scale == 2.0
    assert spec.timeouts.total_s == 3600.0 and spec.workload.trace == "t.jsonl" and spec.outputs.output == "out"
    assert spec.workload.prompt_tokens == LengthDist("uniform", 10.0, 20.0) and spec.outputs.quiet is True
    assert spec.gate.abort_delay_s == 0.5
    assert build_spec({**run_defaults(), "model": "", "ray": ""})[0].target.model is None  # or_none: empty is absent
    back = spec_values(spec)
    assert {k: back[k] for k in ("warmup", "trace_duration", "timeout_total", "prompt_tokens", "trace")} == {
        "warmup": "2s", "trace_duration": "20s", "timeout_total": "1h", "prompt_tokens": "uniform:10:20",
        "trace": "t.jsonl"}


def test_derived_fields_are_parsed_in_the_sections_field_order() -> None:
    v = OptionValues.parse({**run_defaults(), "grace": "3s", "trace_start": "1s"})
    assert list(section_values(v, "load")) == ["duration_s", "warmup_s", "cooldown_s", "seed", "grace_s", "time_scale",
                                                "trace_start_s", "trace_duration_s", "max_failed", "keep_going"]
    with pytest.raises(SpecError, match=r"^--grace: invalid duration"):  # --grace before --trace-start, as always
        build_spec({**run_defaults(), "grace": "x", "trace_start": "y"})
    with pytest.raises(SpecError, match=r"^--timeout-connect must be greater than 0, got '0s'$"):
        build_spec({**run_defaults(), "timeout_connect": "0s"})
    with pytest.raises(SpecError, match=r"^--warmup must be a string, got None$"):  # at the edge, in OptionValues
        build_spec({**run_defaults(), "warmup": None})
