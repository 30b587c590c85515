"""No input without a bound (loadgen.workload.bounds): a length, count or time past its documented maximum
is refused before anything is sent, in one line naming the option or the file's line, with exit 2.

The command-line cases run `goodput` in a subprocess under a 4 GiB address-space limit: an input that
made the client build a 10^8-token prompt or a 10^12-element array would crash there (or segfault), not
print one line.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from loadgen.http.payload import encode_body
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from loadgen.workload.bounds import MAX_BODY_BYTES, MAX_TOKENS
from loadgen.workload.lengths import LengthDist, parse_length
from tests.servers.scripted import ScriptedServer

MEMORY_LIMIT = 4 << 30
NOWHERE = ["--url", "http://127.0.0.1:9", "--model", "m"]  # nothing listens: a check that passes would fail later


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def goodput(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from loadgen.cli import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, preexec_fn=_limited, check=False)


def assert_one_line_exit_2(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert all(n in lines[0] for n in needles), lines[0]
    assert lines[0].isprintable(), repr(lines[0])
    return lines[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["--prompt-tokens", "100000000"], "--prompt-tokens 100000000"),
    (["--prompt-tokens", "99999999999999999999999"], "--prompt-tokens"),
    (["--output-tokens", "99999999999999999999999"], "--output-tokens"),
    (["--prompt-tokens", "lognormal:1000:4"], "--prompt-tokens lognormal"),
    (["--prefix-groups", "4", "--prefix-tokens", "99999999999"], "--prefix-tokens"),
    (["--min-tokens", "99999999999999999999999"], "--min-tokens"),
    (["--requests", "99999999999999999999999"], "--requests"),
    (["--rate", "1e9", "--duration", "1h"], "--rate"),
    (["--arrival", "concurrency", "--concurrency", "99999999999"], "--concurrency"),
    (["--duration", "1e300s"], "--duration"),
    (["--seed", "99999999999999999999999"], "--seed"),
    (["--turns", "99999999999"], "--turns"),
    (["--rate", "1e-300", "--requests", "3"], "--rate"),
    (["--arrival", "concurrency", "--concurrency", "2", "--rate", "1e-300"], "--rate"),
])
def test_an_option_past_its_maximum_is_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    assert_one_line_exit_2(goodput("run", *NOWHERE, *args, "--output", str(tmp_path / "out"), cwd=tmp_path), needle)
    assert not (tmp_path / "out").exists()


def test_the_maximum_itself_is_accepted(tmp_path: Path) -> None:
    result = goodput("run", *NOWHERE, "--prompt-tokens", str(MAX_TOKENS - 128), "--print-config", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def _mooncake(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}


@pytest.mark.parametrize(("row", "needle"), [
    ({"timestamp": 100, "input_length": 10**12, "output_length": 5}, "input_length"),
    ({"timestamp": 100, "input_length": 10, "output_length": 10**30}, "output_length"),
    ({"timestamp": 1e18, "input_length": 10, "output_length": 5}, "timestamp"),
    ({"timestamp": 100, "input_length": 10, "output_length": 5, "hash_ids": [2**70]}, "hash_ids"),
])
@pytest.mark.parametrize("command", ["run", "inspect"])
def test_a_trace_row_past_a_maximum_is_refused_with_its_line(tmp_path: Path, row: dict[str, object], needle: str,
                                                              command: str) -> None:
    trace = _mooncake(tmp_path / "t.jsonl", [GOOD, row])
    args = ["run", *NOWHERE, "--trace", str(trace)] if command == "run" else ["trace", "inspect", str(trace)]
    assert_one_line_exit_2(goodput(*args, cwd=tmp_path), "t.jsonl:2", needle)


def test_a_replay_slowed_past_the_horizon_is_refused(tmp_path: Path) -> None:
    trace = _mooncake(tmp_path / "t.jsonl", [GOOD, {**GOOD, "timestamp": 1000}])
    assert_one_line_exit_2(goodput("run", *NOWHERE, "--trace", str(trace), "--time-scale", "1e-300", cwd=tmp_path),
                           "--time-scale", "366 days")


@pytest.mark.parametrize("max_tokens", ["1" + "0" * 30, "1e30"])
def test_a_dataset_row_with_a_huge_max_tokens_is_refused_with_its_line(tmp_path: Path, max_tokens: str) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "hello"}\n{"prompt": "hi", "max_tokens": ' + max_tokens + "}\n")
    for turns in ([], ["--turns", "2"]):
        assert_one_line_exit_2(goodput("run", *NOWHERE, "--dataset", str(data), *turns, cwd=tmp_path),
                               "d.jsonl:2", "max_tokens")


@pytest.mark.parametrize("text", ["\x1b[31mred", "\x1b]0;pwned\x07", "nul\x00byte", "\u202eevil"])
def test_control_characters_from_files_are_escaped(tmp_path: Path, text: str) -> None:
    trace = _mooncake(tmp_path / "t.jsonl", [GOOD, {**GOOD, "input_length": text}])
    line = assert_one_line_exit_2(goodput("trace", "inspect", str(trace), cwd=tmp_path), "t.jsonl:2")
    assert ascii(text)[1:-1] in line
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"messages": [{"role": text, "content": "x"}, {"role": "user", "content": "y"}]}))
    line = assert_one_line_exit_2(goodput("run", *NOWHERE, "--dataset", str(data), "--turns", "2", cwd=tmp_path),
                                  "d.jsonl:1")
    assert ascii(text)[1:-1] in line
    csv = tmp_path / "t.csv"
    csv.write_text(f"{text},b\n1,2\n")
    assert_one_line_exit_2(goodput("trace", "inspect", str(csv), cwd=tmp_path), "columns found")


# --- the body limit --------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_never_encoded() -> None:
    config = ClientConfig(base_url="http://h", model="m")
    with pytest.raises(ValueError, match="over the 1,000-byte limit"):
        encode_body(WorkItem(prompt="x" * 1001), config, limit=1000)
    with pytest.raises(ValueError, match="over the 1,000-byte limit"):  # the prompt fits, the body does not
        encode_body(WorkItem(messages=[{"role": "user", "content": "é" * 600}]), config, limit=1000)
    assert len(encode_body(WorkItem(prompt="x" * 800), config, limit=1000)) <= 1000


def test_a_request_over_the_body_limit_is_an_invalid_request_record_and_is_not_sent() -> None:
    received: list[object] = []

    def handler(request: object) -> list[object]:
        received.append(request)
        return []

    async def main() -> object:
        async with ScriptedServer(handler) as server, \
                StreamingClient(ClientConfig(base_url=server.url, model="m")) as client:
            return await client.send(WorkItem(prompt="x" * (MAX_BODY_BYTES + 1), max_tokens=4), request_id=1,
                                     intended_ns=0, anchor_ns=0)

    record = asyncio.run(main())
    assert record.error_kind == "invalid_request" and record.sent_ns is None  # type: ignore[attr-defined]
    assert not received


def test_a_prompt_of_the_most_tokens_fits_the_body_limit(tmp_path: Path) -> None:
    """The two maxima agree: the longest prompt, in the words counter's text, encodes under the body limit,
    within the memory limit."""
    script = ("from loadgen.workload.sources import SyntheticWorkload\n"
              "from loadgen.workload.lengths import LengthDist\n"
              "from loadgen.workload.text import WordCounter\n"
              "from loadgen.http.payload import encode_body\n"
              "from loadgen.types import ClientConfig\n"
              f"w = SyntheticWorkload(LengthDist('fixed', {MAX_TOKENS - 1}.0), LengthDist('fixed', 1.0), 0, 'words',"
              " WordCounter())\n"
              "print(len(encode_body(w.item(0), ClientConfig(base_url='http://h', model='m'))))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            preexec_fn=_limited, check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout) <= MAX_BODY_BYTES


# --- lengths ---------------------------------------------------------------------------------------


def test_no_draw_exceeds_the_maximum() -> None:
    wide = LengthDist("lognormal", 1000.0, 2.0)  # accepted by parse_length; its rare far draws are cut
    draws = wide.sample(200_000, np.random.default_rng(0))
    assert draws.max() == MAX_TOKENS and draws.min() >= 1


@pytest.mark.parametrize("text", ["inf", "1e400", "nan", "uniform:1:inf"])
def test_lengths_that_are_not_finite_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="length"):
        parse_length(text)
