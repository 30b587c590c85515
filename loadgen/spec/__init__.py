"""The run spec: every `goodput run` option once (`options`), one frozen dataclass per concern (`sections`),
`build_spec` from the option values (`build`), `RunSpec` and its JSON form (`run_spec`), the config file
(`config_file`) and `--print-config` (`render`). See docs/architecture.md, "The run spec".

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.spec.build import build_spec, spec_values
    from loadgen.spec.config_file import merge_values, read_config_file, text_items
    from loadgen.spec.fail_limit import parse_fail_limit
    from loadgen.spec.options import BY_PARAM, OPTIONS, OUTPUTS, PARAMETERS, Option
    from loadgen.spec.render import render_config
    from loadgen.spec.run_spec import RunSpec
    from loadgen.spec.scrape_targets import ScrapeTarget, parse_scrape_targets
    from loadgen.spec.sections import GateSpec, LoadSpec, OutputSpec, PrometheusSpec, RooflineSpec, TargetSpec
    from loadgen.spec.values import OptionValue, OptionValues

__all__ = [
    "BY_PARAM",
    "OPTIONS",
    "OUTPUTS",
    "PARAMETERS",
    "GateSpec",
    "LoadSpec",
    "Option",
    "OptionValue",
    "OptionValues",
    "OutputSpec",
    "PrometheusSpec",
    "RooflineSpec",
    "RunSpec",
    "ScrapeTarget",
    "TargetSpec",
    "build_spec",
    "merge_values",
    "parse_fail_limit",
    "parse_scrape_targets",
    "read_config_file",
    "render_config",
    "spec_values",
    "text_items",
]

__getattr__ = lazy_names(__name__, {
    "build_spec": "build", "spec_values": "build",
    "merge_values": "config_file", "read_config_file": "config_file", "text_items": "config_file",
    "parse_fail_limit": "fail_limit",
    "BY_PARAM": "options", "OPTIONS": "options", "OUTPUTS": "options", "Option": "options",
    "PARAMETERS": "options",
    "render_config": "render",
    "RunSpec": "run_spec",
    "ScrapeTarget": "scrape_targets", "parse_scrape_targets": "scrape_targets",
    "GateSpec": "sections", "LoadSpec": "sections", "OutputSpec": "sections", "PrometheusSpec": "sections",
    "RooflineSpec": "sections", "TargetSpec": "sections",
    "OptionValue": "values", "OptionValues": "values",
})
