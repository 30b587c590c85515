"""A run config file (YAML or TOML, by extension): every `goodput run` option as a key, flags on top.

    # run.yaml — `goodput run --config run.yaml`; `goodput run --print-config` writes a starting point
    url: http://127.0.0.1:8000
    arrival: poisson
    rate: 8
    duration: 2m
    prompt_tokens: lognormal:1000:0.6
    tags: {scenario: chat}
    slo: {ttft: 500ms, tpot: 50ms}
    thresholds:
      - ttft:p(99) < 800ms
      - expr: errors:rate < 0.01
        abort_on_fail: true

Keys are the flags without dashes (`--prompt-tokens` → `prompt_tokens`; dashes are accepted too), the
repeatable flags in the plural (`tags`, `headers`, `thresholds`, `server_args`). The gate's config keys
(`slo`, `thresholds`, `abort_on_fail`, `abort_delay`, `abort_interval`, `baseline`, `junit`, `markdown`)
are run options like any other. Credentials are refused: they belong in the environment.

Precedence: a flag given on the command line (or by its environment variable) beats the file, which beats
the default. Lists merge: `slo`, `tags` and `headers` key by key (the flag wins a clash), thresholds
add up.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.quoting import quoted
from loadgen.spec.options import BY_FILE_KEY, BY_PARAM, Option
from loadgen.spec.sections import SpecError
from metrics import slo_field
from metrics.gate import GateConfigError, parse_threshold, read_config_data, threshold_entries

if TYPE_CHECKING:
    from loadgen.spec.values import OptionValue, ThresholdEntry

_SECRET_ENV = {"api_key": "OPENAI_API_KEY", "pushgateway_password": "GOODPUT_PUSHGATEWAY_PASSWORD"}


def read_config_file(path: Path) -> dict[str, OptionValue]:
    """The option values a config file sets, keyed by `goodput run` parameter; SpecError on any mistake."""
    try:
        data = read_config_data(path)
    except GateConfigError as exc:
        raise SpecError(str(exc)) from None
    return config_values(data, source=str(path))


def config_values(data: Any, *, source: str) -> dict[str, OptionValue]:
    """The YAML or TOML document as read (the one untyped value here) → option values by parameter."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError(f"{source}: the top level must be a mapping of option keys")
    out: dict[str, OptionValue] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        option = BY_FILE_KEY.get(key)
        if option is None:
            raise SpecError(f"{source}: unknown key {quoted(raw_key)}{_nearest(key)}")
        if option.secret:
            raise SpecError(f"{source}: {key} is a credential and is not read from files; "
                            f"set {_SECRET_ENV[key]} in the environment")
        if value is None:  # `key: null` or `key:` left empty: as if the key were absent (the flag's default)
            continue
        out[option.param] = _coerce(option, value, f"{source}: {key}")
    return out


def _nearest(key: str) -> str:
    singular = {o.param: o.file_key for o in BY_PARAM.values() if o.key}
    if key in singular:
        return f"; did you mean {singular[key]!r}?"
    match = difflib.get_close_matches(key, list(BY_FILE_KEY), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def _coerce(option: Option, value: Any, where: str) -> OptionValue:
    kind = option.kind
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise SpecError(f"{where} must be true or false, got {quoted(value)}")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SpecError(f"{where} must be an integer, got {quoted(value)}")
    if kind == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise SpecError(f"{where} must be a number, got {quoted(value)}")
    if kind in ("str", "path"):
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        raise SpecError(f"{where} must be a string, got {quoted(value)}")
    return _list(option, value, where)


def _list(option: Option, value: Any, where: str) -> list[str] | list[ThresholdEntry]:
    if option.param == "threshold":
        out: list[ThresholdEntry] = []
        try:
            for entry_where, expr, abort in threshold_entries(value, where):
                try:
                    parse_threshold(expr)  # checked here, where the entry can be named
                except ValueError as exc:
                    raise SpecError(f"{entry_where}: {exc}") from None
                out.append(expr if not abort else (expr, True))
        except GateConfigError as exc:
            raise SpecError(str(exc)) from None
        return out
    if isinstance(value, Mapping) and option.param in ("slo", "tag", "header"):
        sep = ": " if option.param == "header" else "="
        return [f"{k}{sep}{v}" for k, v in value.items()]
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(x, str | int | float) and not isinstance(x, bool) for x in value):
        return [str(x) for x in value]
    raise SpecError(f"{where} must be a list of strings{' or a mapping' if option.param != 'server_arg' else ''}")


# --- precedence ------------------------------------------------------------------------------------


def merge_values(defaults: Mapping[str, OptionValue], file: Mapping[str, OptionValue],
                 given: Mapping[str, OptionValue]) -> dict[str, OptionValue]:
    """Defaults, then the file, then what the command line gave explicitly (see the module doc)."""
    out = dict(defaults)
    for layer in (file, given):
        for param, value in layer.items():
            base = out.get(param)
            if param in ("slo", "tag", "header") and base and value:
                out[param] = _merge_keyed(param, text_items(base), text_items(value))
            elif param == "threshold" and base and value:
                out[param] = [*_entries(base), *_entries(value)]
            else:
                out[param] = value
    return out


def text_items(value: OptionValue) -> list[str]:
    """A repeatable option's items (`slo`, `tag`, `header`: text)."""
    if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
        raise SpecError(f"expected a list of strings, got {value!r}")
    return [x for x in value if isinstance(x, str)]


def _entries(value: OptionValue) -> list[ThresholdEntry]:
    """The thresholds' items (text, or text with its own abort_on_fail)."""
    if not isinstance(value, list | tuple):
        raise SpecError(f"--threshold expects a list, got {value!r}")
    return list(value)


def _merge_keyed(param: str, base: list[str], top: list[str]) -> list[str]:
    def key(item: str) -> str:
        if param == "slo":
            return slo_field(item) or item  # an unknown key: kept, and refused by the build with its own message
        return item.partition(":" if param == "header" else "=")[0].strip().lower()

    if param == "slo":  # "ttft=500ms,tpot=50ms" is two items
        base, top = ([x.strip() for item in items for x in item.split(",") if x.strip()] for items in (base, top))
    merged = {key(item): item for item in base}
    merged.update({key(item): item for item in top})
    return list(merged.values())
