"""Any trace, dataset or run config file ends in a result or one clear error, never a traceback.

"Clear" is checked, not assumed: the error is a ValueError (the CLI's usage error, exit 2) whose message
is one line of printable characters (loadgen.quoting), whatever bytes the file held.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec
from loadgen.spec.config_file import merge_values, read_config_file
from loadgen.spec.options import OPTIONS
from loadgen.workload.conversations import load_jsonl_conversations, load_sharegpt_conversations
from loadgen.workload.prefix_cache import predict_hits
from loadgen.workload.sources import load_jsonl, load_sharegpt
from loadgen.workload.text import WordCounter
from loadgen.workload.trace_shape import trace_shape
from loadgen.workload.traces import load_trace

FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
_names = itertools.count()

# Values as a JSON or YAML file may hold them, with the awkward ones made likely.
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(-2, 10**6), st.sampled_from([0, -1, 2**63, 2**70, 10**30, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e18, 1e30, 1e300, -0.0, 0.5]),
    st.text(max_size=12), st.sampled_from(["\x1b[31mred", "\x1b]0;title\x07", "a\x00b", "\u202eevil", "1e400"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                           max_size=3), max_leaves=8)


def _path(tmp_path: Path, suffix: str) -> Path:
    return tmp_path / f"input-{next(_names)}{suffix}"  # a new name each time: the trace reader caches by file


def _clear_error(exc: ValueError) -> None:
    message = str(exc)
    assert message and message.isprintable(), repr(message)  # one line, no control character


def _ends_well(read: Any, *args: Any) -> Any:
    try:
        return read(*args)
    except ValueError as exc:  # SpecError is a ValueError
        _clear_error(exc)
        return None


# --- traces ----------------------------------------------------------------------------------------

mooncake_rows = st.fixed_dictionaries(
    {"timestamp": scalars, "input_length": scalars, "output_length": scalars},
    optional={"hash_ids": st.lists(scalars, max_size=4) | scalars, "\x1b[2Jkey": scalars},
)
csv_cells = st.one_of(scalars.map(str), st.sampled_from(["2023-11-16 18:15:46.6805900", "9999-12-31 23:59:59",
                                                          '"', "x" * 200_000]))
csv_headers = st.sampled_from(["TIMESTAMP,ContextTokens,GeneratedTokens", "Timestamp,Request tokens,Response tokens",
                               "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", "a,\x1b[31mb"])
trace_files = st.one_of(
    st.binary(max_size=300),
    st.lists(mooncake_rows, min_size=1, max_size=5).map(
        lambda rows: "\n".join(json.dumps(r) for r in rows).encode()),
    st.tuples(csv_headers, st.lists(st.lists(csv_cells, min_size=1, max_size=4), max_size=4)).map(
        lambda hr: (hr[0] + "\n" + "\n".join(",".join(row) for row in hr[1])).encode()),
)


@FUZZ
@given(data=trace_files, fmt=st.sampled_from(["auto", "mooncake", "azure", "burstgpt"]))
def test_any_trace_file_is_read_or_refused_in_one_line(tmp_path: Path, data: bytes, fmt: str) -> None:
    path = _path(tmp_path, ".jsonl")
    path.write_bytes(data)
    trace = _ends_well(load_trace, str(path), fmt)
    if trace is not None:
        shape = trace_shape(trace)
        assert shape["requests"] == trace.n
        assert shape["peak_rate_per_min"] is None or shape["peak_rate_per_min"] >= shape["mean_rate_per_min"]
        predict_hits(trace, block_size=16)


# --- datasets --------------------------------------------------------------------------------------

messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "assistant", "\x1b[31mx"])},
                                          optional={"content": scalars}), max_size=3)
jsonl_rows = st.one_of(
    values,
    st.fixed_dictionaries({"messages": messages | scalars}, optional={"max_tokens": scalars, "tags": values}),
    st.fixed_dictionaries({"prompt": scalars}, optional={"max_tokens": scalars}),
    st.fixed_dictionaries({"turns": st.lists(st.fixed_dictionaries({"messages": messages},
                                                                   optional={"max_tokens": scalars}), max_size=3)}),
)
sharegpt_entries = st.lists(st.one_of(values, st.fixed_dictionaries({"conversations": st.lists(
    st.fixed_dictionaries({"from": st.sampled_from(["human", "gpt", "system", "x"]), "value": scalars}),
    max_size=4)})), max_size=4)


def _json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


dataset_files = st.one_of(
    st.binary(max_size=300),
    st.lists(jsonl_rows, max_size=4).map(lambda rows: "\n".join(_json_text(r) for r in rows).encode()),
    sharegpt_entries.map(lambda entries: _json_text(entries).encode()),
    st.sampled_from([b"[" * 5000 + b"]" * 5000, b'{"messages": [], "max_tokens": 1' + b"0" * 5000 + b"}"]),
)
LOADERS = [load_jsonl, load_sharegpt, load_jsonl_conversations, load_sharegpt_conversations]


@FUZZ
@given(data=dataset_files, loader=st.sampled_from(LOADERS))
def test_any_dataset_file_is_read_or_refused_in_one_line(tmp_path: Path, data: bytes, loader: Any) -> None:
    path = _path(tmp_path, ".jsonl")
    path.write_bytes(data)
    _ends_well(loader, str(path), WordCounter(), {})


# --- run config files ------------------------------------------------------------------------------

config_keys = st.sampled_from([o.file_key for o in OPTIONS] + ["nope", "\x1b[31mkey"])
configs = st.dictionaries(config_keys, values, max_size=4)


def _config_text(data: dict[str, Any], suffix: str) -> str:
    if suffix == ".toml":  # TOML has no null: a plain rendering of what it can hold
        return "\n".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in data.items() if v is not None)
    return yaml.safe_dump(data, allow_unicode=False)


@FUZZ
@given(data=configs, suffix=st.sampled_from([".yaml", ".toml"]))
def test_any_run_config_is_a_spec_or_refused_in_one_line(tmp_path: Path, data: dict[str, Any], suffix: str) -> None:
    path = _path(tmp_path, suffix)
    path.write_text(_config_text(data, suffix))

    def build(config: Path) -> Any:
        return build_spec(merge_values(run_defaults(), read_config_file(config), {}))

    _ends_well(build, path)


@FUZZ
@given(data=st.binary(max_size=200) | st.sampled_from([b"a = " + b"[" * 3000, b"- " * 3000, b"\xff\xfe",
                                                        b"prompt_tokens: 1e400", b"requests: 1" + b"0" * 5000]),
       suffix=st.sampled_from([".yaml", ".toml"]))
def test_any_config_bytes_are_a_spec_or_refused_in_one_line(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = _path(tmp_path, suffix)
    path.write_bytes(data)
    _ends_well(lambda p: build_spec(merge_values(run_defaults(), read_config_file(p), {})), path)


@pytest.mark.parametrize("text", ["prompt_tokens: 1e400\n", "requests: 99999999999999999999999\n",
                                  "seed: 99999999999999999999999\n", "output_tokens: .inf\n"])
def test_config_values_past_the_maxima_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        build_spec(merge_values(run_defaults(), read_config_file(path), {}))
    _clear_error(caught.value)


def test_a_huge_config_value_is_quoted_short(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"requests": list(range(100_000))}))
    with pytest.raises(ValueError) as caught:
        read_config_file(path)
    _clear_error(caught.value)
    assert len(str(caught.value)) < 300
