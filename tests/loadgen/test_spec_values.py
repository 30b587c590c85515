"""The typed option values (loadgen.spec.values): one field per run option, of the type its kind gives, and a
value of the wrong kind refused once, at the edge, naming its flag."""

from __future__ import annotations

from pathlib import Path

import pytest

import loadgen.spec.values as values_module
from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec
from loadgen.spec.field_block import field_type, replace_block
from loadgen.spec.options import BY_PARAM, OPTIONS
from loadgen.spec.sections import SpecError
from loadgen.spec.values import OptionValues


def test_fields_are_the_options_in_order_with_their_kinds_type() -> None:
    fields = list(OptionValues.__annotations__.items())
    assert fields == [(o.param, field_type(o)) for o in OPTIONS]
    assert field_type(BY_PARAM["threshold"]) == "tuple[ThresholdEntry, ...]"
    assert field_type(BY_PARAM["rate"]) == "float | None" and field_type(BY_PARAM["dataset"]) == "str | None"
    assert field_type(BY_PARAM["seed"]) == "int"


def test_the_field_block_is_made_from_the_declarations() -> None:
    source = Path(values_module.__file__).read_text()
    assert replace_block(source) == source, "run: python -m loadgen.spec.field_block loadgen/spec/values.py"
    assert replace_block(source.replace("    seed: int\n", "")) == source
    with pytest.raises(ValueError, match="no generated field block"):
        replace_block("class OptionValues: ...")


def test_the_defaults_parse_to_the_declared_defaults() -> None:
    values = OptionValues.parse(run_defaults())
    for option in OPTIONS:
        expected = () if option.kind == "list" else option.default
        assert getattr(values, option.param) == expected, option.param


@pytest.mark.parametrize(("param", "value", "message"), [
    ("max_connections", "many", "--max-connections must be an integer, got 'many'"),
    ("seed", True, "--seed must be an integer, got True"),
    ("cache_bust", "yes", "--cache-bust must be true or false, got 'yes'"),
    ("rate", "fast", "--rate must be a number, got 'fast'"),
    ("tag", ["a=b", 3], "--tag must be a list of strings, got ['a=b', 3]"),
    ("endpoint", None, "--endpoint must be a string, got None"),
])
def test_a_value_of_the_wrong_kind_is_refused_naming_its_flag(param: str, value: object, message: str) -> None:
    with pytest.raises(SpecError) as info:
        build_spec({**run_defaults(), param: value})  # type: ignore[dict-item]
    assert str(info.value) == message


def test_an_unknown_option_is_refused_not_ignored() -> None:
    with pytest.raises(SpecError, match="unknown run option 'max_conections'"):
        build_spec({**run_defaults(), "max_conections": 8})


def test_paths_and_numbers_become_text_where_the_option_is_text() -> None:
    values = OptionValues.parse({**run_defaults(), "output": Path("runs/x"), "workers": 3, "prompt_tokens": 64})
    assert (values.output, values.workers, values.prompt_tokens) == ("runs/x", "3", "64")
    assert build_spec(values)[0].scale.workers == 3


def test_the_values_are_read_only() -> None:
    values = OptionValues.parse(run_defaults())
    with pytest.raises(AttributeError):
        values.rate = 5.0  # type: ignore[misc]
    assert values.rate is None and "rate=None" in repr(values)
