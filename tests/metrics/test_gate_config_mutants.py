"""The gate config file's messages and forms, word for word as a user reads them (written out by hand):
an unreadable or unknown file, invalid YAML, where each message says the problem is, the k6 mapping form,
`nodata: fail`, and an SLO written as a list."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics.gate.config import (
    GateConfigError,
    load_gate_config,
    parse_gate_config,
    read_config_data,
    threshold_entries,
)
from metrics.slo import SLO

TOP = "abort_delay, abort_interval, abort_on_fail, baseline, junit, markdown, slo, thresholds"


def _message(call: object) -> str:
    assert callable(call)
    with pytest.raises(GateConfigError) as info:
        call()
    return str(info.value)


def test_a_missing_file_is_named_with_the_systems_reason(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    assert _message(lambda: read_config_data(path)) == f"cannot read config {path}: No such file or directory"


def test_a_file_without_a_suffix_says_none(tmp_path: Path) -> None:
    path = tmp_path / "gate"
    path.write_text("slo: {ttft: 1s}\n")
    assert _message(lambda: read_config_data(path)) == \
        f"config {path}: unknown format '(none)'; use .yaml, .yml or .toml"


def test_invalid_yaml_quotes_the_parsers_words_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("a: b: c\n")
    text = _message(lambda: read_config_data(path))
    assert text.startswith(f"config {path}: not valid YAML: mapping values are not allowed here")
    assert "\n" not in text and "  " not in text


def test_a_files_messages_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("nope: 1\n")
    assert _message(lambda: load_gate_config(path)) == f"{path}: unknown key(s) 'nope'; expected {TOP}"


def test_without_a_source_the_messages_say_config() -> None:
    assert _message(lambda: parse_gate_config({"nope": 1, "also": 2})) == \
        f"config: unknown key(s) 'also', 'nope'; expected {TOP}"
    assert _message(lambda: parse_gate_config([1])) == f"config: the top level must be a mapping with keys {TOP}"
    assert _message(lambda: parse_gate_config({"abort_interval": "soon"})).startswith("config: abort_interval: ")


def test_the_k6_form_never_aborts_and_an_entry_names_its_keys() -> None:
    assert threshold_entries({"ttft": ["p(99)<1s", "p(50)<500ms"]}, "config") == [
        ("config: thresholds.ttft[0]", "ttft:p(99)<1s", False),
        ("config: thresholds.ttft[1]", "ttft:p(50)<500ms", False),
    ]
    assert _message(lambda: threshold_entries([{"expr": "ttft:p(99)<1s", "when": 1, "why": 2}], "config")) == \
        "config: thresholds[0]: unknown key(s) 'when', 'why'; expected abort_on_fail, expr, nodata"


def test_nodata_fail_is_accepted() -> None:
    cfg = parse_gate_config({"thresholds": [{"expr": "ttft:p(99)<1s", "nodata": "fail"}]})
    assert len(cfg.thresholds) == 1


def test_an_slo_written_as_a_list_of_items() -> None:
    assert parse_gate_config({"slo": ["ttft=1s", "tpot=50ms"]}).slo == SLO(ttft_s=1.0, tpot_s=0.05)
