"""`--endpoint responses|messages`, `--tools FILE` and `--tool-choice` on the command line: accepted into the
spec and the client's configuration, refused with one line and exit 2 where they cannot apply; a dataset's
rows may carry their own tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loadgen.cli import run_cli
from loadgen.cli.run import run_defaults
from loadgen.dispatch import client_config_of
from loadgen.http.api import api_names
from loadgen.secrets import Secrets
from loadgen.spec.build import build_spec
from loadgen.spec.config_file import config_values, merge_values
from loadgen.spec.sections import ENDPOINTS
from loadgen.workload.sources import load_jsonl
from loadgen.workload.text import WordCounter

UNREACHABLE = "http://127.0.0.1:9"
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]


def _printed(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", *args, "--print-config"]) == 0, capsys.readouterr().err
    return dict(yaml.safe_load(capsys.readouterr().out))


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", *args, "--print-config"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_the_spec_knows_every_registered_api() -> None:
    assert api_names() == ENDPOINTS


@pytest.mark.parametrize("endpoint", ["responses", "messages"])
def test_the_new_endpoints_are_accepted(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _printed(["--endpoint", endpoint], capsys)["endpoint"] == endpoint


def test_tools_reach_the_client_and_print_config_feeds_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    printed = _printed(["--endpoint", "messages", "--tools", str(path), "--tool-choice", "lookup"], capsys)
    assert printed["tools"] == str(path) and printed["tool_choice"] == "lookup"
    spec, secrets = build_spec(merge_values(run_defaults(), config_values(printed, source="out"), {}))
    config = client_config_of(spec, secrets, base_url=UNREACHABLE, model="m")
    assert config.tools == TOOLS and config.tool_choice == {"type": "function", "name": "lookup"}
    # A worker rebuilds the client from the spec alone (its JSON): the list travels without the file.
    path.unlink()
    from loadgen.spec.run_spec import RunSpec

    again = client_config_of(RunSpec.from_json(spec.to_json()), Secrets(), base_url=UNREACHABLE, model="m")
    assert again.tools == TOOLS


@pytest.mark.parametrize(("content", "needle"), [
    ("[{", "not JSON"),
    ("{}", "a non-empty JSON array"),
    ('[{"type": "function", "function": {}}]', "tool 0 has no function name"),
])
def test_a_bad_tool_file_is_one_line_and_exit_2(content: str, needle: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content)
    assert needle in _refused(["--tools", str(path)], capsys)


def test_tool_choice_needs_a_known_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    assert "no tool of that name" in _refused(["--tools", str(path), "--tool-choice", "search"], capsys)
    assert "--tool-choice needs --tools" in _refused(["--tool-choice", "auto"], capsys)
    assert "--tools does not apply to --endpoint completions" in _refused(
        ["--endpoint", "completions", "--tools", str(path)], capsys)
    assert "--endpoint must be one of chat, completions, responses, messages" in _refused(
        ["--endpoint", "embeddings"], capsys)


@pytest.mark.parametrize("endpoint", ["responses", "messages"])
def test_chat_stream_options_are_refused_where_they_do_not_apply(endpoint: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert "--no-usage does not apply to --endpoint " + endpoint in _refused(
        ["--endpoint", endpoint, "--no-usage"], capsys)
    assert "--no-continuous-usage does not apply" in _refused(["--endpoint", endpoint, "--no-continuous-usage"], capsys)
    assert _printed(["--endpoint", "completions", "--no-usage"], capsys)["usage"] is False


def test_dataset_rows_carry_their_own_tools(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "find it"}], "tools": TOOLS,
                                "tool_choice": "required"}) + "\n"
                    + json.dumps({"prompt": "no tools here"}) + "\n")
    with_tools, without = load_jsonl(str(path), WordCounter(), {})
    assert with_tools.tools == TOOLS and with_tools.tool_choice == "required"
    assert without.tools is None
    path.write_text(json.dumps({"prompt": "x", "tools": [{"type": "function"}]}) + "\n")
    with pytest.raises(ValueError, match=r"rows.jsonl:1: tool 0 is not"):
        load_jsonl(str(path), WordCounter(), {})
