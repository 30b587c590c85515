"""Each run option is checked in one place (docs/architecture.md, "Where values are parsed"): a check's
message naming a flag is written in one module only. The run's Prometheus options are checked by the spec
(loadgen/spec), and loadgen/run/prometheus.py builds its `PromOptions` from the checked spec without
checking again (`--scrape`'s NAME=URL parser lives in loadgen/run/gpu_scrape.py; the spec calls it)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loadgen", "metrics", "exporters")
CHECK = re.compile(r"^--[a-z][a-z-]* .*\b(must|needs?)\b")

# Written twice on purpose or owned elsewhere; each is the same rule on two inputs, or a check a lower
# layer keeps for callers that do not come through the spec. Shrink this list, never grow it.
KNOWN = {
    "--abort-on-fail, --baseline, --junit and --markdown need thresholds (--threshold or --config)",
    "--arrival ramp needs --duration (the ramp's length)",
    "--arrival trace needs --trace FILE",
    "--tool-choice needs --tools",
}
PROMETHEUS_FLAGS = ("--metrics-port", "--metrics-linger", "--pushgateway", "--server-metrics", "--scrape")


def _messages() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and CHECK.match(node.value.strip()):
                    found[node.value.strip()].add(path.relative_to(ROOT).as_posix())
    return found


def test_a_check_message_naming_a_flag_is_written_once() -> None:
    twice = {message: sorted(where) for message, where in _messages().items()
             if len(where) > 1 and message not in KNOWN}
    assert twice == {}


def test_the_run_layer_does_not_check_prometheus_options_again() -> None:
    in_run = {message: sorted(where) for message, where in _messages().items()
              if message.startswith(PROMETHEUS_FLAGS) and "loadgen/run/prometheus.py" in where}
    assert in_run == {}
