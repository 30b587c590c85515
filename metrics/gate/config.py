"""The gate's config file (YAML or TOML, by extension): SLOs, thresholds and gate options in one place.

    # gate.yaml
    slo:                       # goodput SLO (same keys as --slo); a mapping or a list of "key=value"
      ttft: 500ms
      tpot: 50ms
    thresholds:                # a list of expressions (metrics.gate.thresholds), or k6's mapping form
      - ttft:p(99) < 500ms
      - goodput:attainment >= 0.95
      - expr: errors:rate < 0.01
        abort_on_fail: true    # this one may stop `goodput run` early
      - expr: ttft{cache:full}:p(95) < 200ms
        nodata: pass           # same as the "| nodata=pass" suffix
    abort_on_fail: false       # all thresholds may abort the run
    abort_delay: 10s           # never abort before this much of the run has passed
    abort_interval: 1s         # how often a running test is checked
    baseline: runs/main        # for `baseline * 1.10` limits
    junit: gate.xml
    markdown: gate.md

k6's mapping form is also accepted: `thresholds: {ttft: ["p(99)<500ms"], goodput: ["attainment>=0.95"]}`.
Paths are used as written (relative to the working directory, where CI runs). Every mistake is a
`GateConfigError` naming the file and the entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metrics.gate.thresholds import Threshold, ThresholdError, parse_threshold
from metrics.slo import SLO, parse_slo
from metrics.units import parse_duration

_TOP_KEYS = frozenset({"slo", "thresholds", "abort_on_fail", "abort_delay", "abort_interval", "baseline",
                       "junit", "markdown"})
_ENTRY_KEYS = frozenset({"expr", "abort_on_fail", "nodata"})


class GateConfigError(ValueError):
    pass


@dataclass(slots=True)
class GateConfig:
    slo: SLO = field(default_factory=SLO)  # parsed here, where the file's text enters
    thresholds: list[Threshold] = field(default_factory=list)
    abort_thresholds: list[Threshold] = field(default_factory=list)  # may stop a run (subset of thresholds)
    abort_on_fail: bool = False
    abort_delay_s: float | None = None
    abort_interval_s: float | None = None
    baseline: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None


def read_config_data(path: Path) -> Any:
    """The parsed content of a YAML (.yaml, .yml) or TOML (.toml) file; GateConfigError, one line, on
    anything wrong. Run config files are read with it too (loadgen.spec.config_file)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise GateConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise GateConfigError(f"config {path}: unknown format {suffix or '(none)'!r}; use .yaml, .yml or .toml")
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        import yaml

        return yaml.safe_load(text)
    except tomllib.TOMLDecodeError as exc:
        raise GateConfigError(f"config {path}: not valid TOML: {exc}") from None
    except Exception as exc:  # yaml.YAMLError, without importing yaml at module level
        raise GateConfigError(f"config {path}: not valid YAML: {' '.join(str(exc).split())}") from None


def load_gate_config(path: Path) -> GateConfig:
    """Read and validate a config file; GateConfigError on anything wrong."""
    return parse_gate_config(read_config_data(path), source=str(path))


def parse_gate_config(data: Any, *, source: str = "config") -> GateConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GateConfigError(f"{source}: the top level must be a mapping with keys {', '.join(sorted(_TOP_KEYS))}")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise GateConfigError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; "
                              f"expected {', '.join(sorted(_TOP_KEYS))}")
    cfg = GateConfig()
    cfg.slo = _slo(data.get("slo"), source)
    cfg.abort_on_fail = _bool(data.get("abort_on_fail", False), f"{source}: abort_on_fail")
    cfg.abort_delay_s = _duration(data.get("abort_delay"), f"{source}: abort_delay")
    cfg.abort_interval_s = _duration(data.get("abort_interval"), f"{source}: abort_interval")
    for key in ("baseline", "junit", "markdown"):
        value = data.get(key)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise GateConfigError(f"{source}: {key} must be a path string")
            setattr(cfg, key, Path(value))
    for where, expr, abort in threshold_entries(data.get("thresholds"), source):
        try:
            threshold = parse_threshold(expr)
        except ThresholdError as exc:
            raise GateConfigError(f"{where}: {exc}") from None
        cfg.thresholds.append(threshold)
        if abort:
            cfg.abort_thresholds.append(threshold)
    return cfg


def threshold_entries(raw: Any, source: str) -> list[tuple[str, str, bool]]:
    """(where, expression, abort_on_fail) per threshold, from the list or the k6 mapping form."""
    if raw is None:
        return []
    out: list[tuple[str, str, bool]] = []
    if isinstance(raw, dict):
        for metric, conditions in raw.items():
            conds = [conditions] if isinstance(conditions, str) else conditions
            if not isinstance(conds, list) or not all(isinstance(c, str) for c in conds):
                raise GateConfigError(f"{source}: thresholds.{metric} must be a list of conditions like 'p(99)<500ms'")
            out += [(f"{source}: thresholds.{metric}[{i}]", f"{metric}:{c}", False) for i, c in enumerate(conds)]
        return out
    if not isinstance(raw, list):
        raise GateConfigError(f"{source}: thresholds must be a list of expressions")
    for i, entry in enumerate(raw):
        where = f"{source}: thresholds[{i}]"
        if isinstance(entry, str):
            out.append((where, entry, False))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("expr"), str):
            raise GateConfigError(f"{where}: expected an expression string or a mapping with 'expr'")
        unknown = sorted(set(entry) - _ENTRY_KEYS)
        if unknown:
            raise GateConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                                  f"expected {', '.join(sorted(_ENTRY_KEYS))}")
        expr = entry["expr"]
        nodata = entry.get("nodata")
        if nodata is not None:
            if nodata not in ("pass", "fail"):
                raise GateConfigError(f"{where}: nodata must be 'pass' or 'fail', got {nodata!r}")
            if "|" in expr:
                raise GateConfigError(f"{where}: give nodata either in the expression or as a key, not both")
            expr = f"{expr} | nodata={nodata}"
        out.append((where, expr, _bool(entry.get("abort_on_fail", False), f"{where}: abort_on_fail")))
    return out


def _slo(raw: Any, source: str) -> SLO:
    if raw is None:
        return SLO()
    if isinstance(raw, dict):
        items = [f"{k}={v}" for k, v in raw.items()]
    elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        items = list(raw)
    else:
        raise GateConfigError(f"{source}: slo must be a mapping (ttft: 500ms) or a list of 'key=value'")
    try:
        return parse_slo(items)
    except ValueError as exc:
        raise GateConfigError(f"{source}: slo: {exc}") from None


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise GateConfigError(f"{where} must be true or false, got {value!r}")
    return value


def _duration(value: Any, where: str) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(str(value))
    except ValueError as exc:
        raise GateConfigError(f"{where}: {exc}") from None
