"""`goodput run --print-config`: the effective run spec as a YAML config file, one commented section per
help panel, every option present (null where unset), credentials never. Feeding the output back with
`--config` gives the same spec."""

from __future__ import annotations

from typing import Any

from loadgen.spec.build import spec_values
from loadgen.spec.options import OPTIONS, PANELS
from loadgen.spec.run_spec import RunSpec


def _file_value(param: str, value: Any) -> Any:
    if param == "threshold":
        return [{"expr": v[0], "abort_on_fail": True} if isinstance(v, tuple) else v for v in value]
    return value


def render_config(spec: RunSpec) -> str:
    import yaml

    values = spec_values(spec)
    lines = ["# goodput run config: `goodput run --config FILE`; flags given on the command line win."]
    for panel in PANELS:
        lines += ["", f"# {panel}"]
        for option in OPTIONS:
            if option.panel != panel or option.secret:
                continue
            entry = {option.file_key: _file_value(option.param, values[option.param])}
            lines.append(yaml.safe_dump(entry, default_flow_style=False, sort_keys=False, allow_unicode=True,
                                        width=1000).rstrip())
    return "\n".join(lines) + "\n"
