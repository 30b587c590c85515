"""Runs against servers that refuse the requests or do not honour them: the server's own words on the
console and in summary.json, an early stop when the first requests all fail alike, the --max-failed limit,
the ignore_eos note, and no credential in anything stored or printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loadgen.cli import run_cli
from loadgen.run.failing import EARLY_STOP_AFTER
from tests.loadgen._stream_server import threaded_server
from tests.servers.refusing import (
    Handler,
    echoes_key,
    json_answer,
    llama_cpp_stops_early,
    posts_only,
    stream,
    transformers_serve,
    vllm,
)
from tests.servers.scripted import Action, Hang, ReceivedRequest

QUICK = ["--prompt-tokens", "8", "--output-tokens", "4", "--tokenizer", "words", "--prompt-sizing", "counter",
         "--server-metrics", "none", "--no-html", "--quiet"]
VLLM_404 = "HTTP 404: NotFoundError: The model `nope` does not exist."


def run_and_read(handler: Handler, out: Path, capsys: pytest.CaptureFixture[str], *args: str,
                 ) -> tuple[int, int, str, list[str], dict[str, Any]]:
    """(exit code, chat requests the server received, stdout, stderr lines, summary.json)."""
    with threaded_server(handler) as server:
        code = run_cli(["run", "--url", server.url, *QUICK, "--output", str(out), *args])
        received = sum(r.method == "POST" for r in server.requests)
    captured = capsys.readouterr()
    return code, received, captured.out, captured.err.strip().splitlines(), json.loads((out / "summary.json").read_text())


def test_a_wrong_model_stops_early_with_the_servers_message(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM answers 404 to every request for a model it does not serve: the run stops after the first
    EARLY_STOP_AFTER, says why in one line quoting vLLM, and exits 1."""
    code, received, out, err, summary = run_and_read(vllm("served"), tmp_path / "run", capsys,
                                                     "--model", "nope", "--requests", "200", "--rate", "100")
    assert code == 1
    assert err == [f"goodput: error: stopped early: the first {EARLY_STOP_AFTER} requests all failed the same way: "
                   f"{VLLM_404} (--keep-going sends every request anyway)"]
    assert received < 100  # 2 s of the planned load at most, not all 200 requests
    req = summary["requests"]
    assert req["failure_messages"] == [{"kind": "http_status", "http_status": 404, "message": VLLM_404,
                                        "count": req["failed"]}]
    assert req["failure_messages_distinct"] == 1 and req["succeeded"] == 0
    assert summary["run"]["stopped_early"] and summary["run"]["complete"] is False
    assert "[STOPPED EARLY" in out and "interrupted" not in out
    assert f"FAILED: all {req['failed']} requests failed the same way: {VLLM_404}" in out.splitlines()


def test_keep_going_sends_everything_and_says_every_request_failed_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`transformers serve` refuses `ignore_eos` with 422: with --keep-going every request is sent, and one
    line says they all failed the same way, quoting the server (not "http_status 500", which reads as HTTP 500)."""
    code, received, out, err, summary = run_and_read(transformers_serve, tmp_path / "run", capsys, "--model", "m",
                                                     "--ignore-eos", "--requests", "30", "--rate", "200",
                                                     "--keep-going")
    said = "HTTP 422: Unexpected keys in the request: {'ignore_eos'}"
    assert (code, received) == (1, 30)
    assert err == [f"goodput: error: all 30 requests failed the same way: {said}"]
    assert f"FAILED: all 30 requests failed the same way: {said}" in out.splitlines()
    assert summary["requests"]["failure_messages"] == [{"kind": "http_status", "http_status": 422, "message": said,
                                                        "count": 30}]


def test_timeouts_never_stop_a_run_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A server too slow to answer is not one that refuses: every request is sent."""
    code, received, _, err, summary = run_and_read(posts_only(lambda _r: [Hang()]), tmp_path / "run", capsys, "--model", "m",
                                                   "--requests", "15", "--rate", "200", "--timeout-first-byte", "0.3s")
    assert (code, received) == (1, 15)
    assert summary["requests"]["errors"] == {"timeout_first_byte": 15}
    assert err == ["goodput: error: all 15 requests failed the same way: timeout_first_byte: no response headers "
                   "within 0.3 s"]


@posts_only
def admits_the_first(request: ReceivedRequest) -> list[Action]:
    """A server that admits its first request (a stream of 0.6 s) and turns the next ones away (queue full)."""
    if request.json()["messages"] and getattr(admits_the_first, "seen", False):
        return json_answer(429, {"error": {"message": "queue full", "type": "rate_limit_error", "code": "queue_full"}})
    admits_the_first.seen = True  # type: ignore[attr-defined]
    return stream(4, first_s=0.3, gap_s=0.1)


def test_rejections_behind_a_request_in_flight_do_not_stop_the_run(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Requests 1.. are refused (429) while request 0 is still streaming: not a server that refuses
    everything, so the run goes on; with 19 of 20 failed it is over the default --max-failed 10% (exit 1)."""
    admits_the_first.seen = False  # type: ignore[attr-defined]
    code, received, _, err, summary = run_and_read(admits_the_first, tmp_path / "run", capsys, "--model", "m",
                                                   "--requests", "20", "--arrival", "constant", "--rate", "100")
    assert (code, received) == (1, 20)
    assert summary["requests"]["succeeded"] == 1 and "stopped_early" not in summary["run"]
    assert err == ["goodput: error: 19 of 20 requests failed (95% > --max-failed 10%); --max-failed 100% accepts "
                   "any number"]


def dies_after(ok: int) -> Handler:
    """A server that answers `ok` requests and then is gone: every later request gets 502 from a proxy."""
    answered: list[int] = []

    @posts_only
    def handler(request: ReceivedRequest) -> list[Action]:
        answered.append(1)
        if len(answered) <= ok:
            return stream(4)
        return json_answer(502, {"error": {"message": "upstream connect error", "type": "bad_gateway"}})

    return handler


@pytest.mark.parametrize(("args", "code"), [((), 1), (("--max-failed", "100%"), 0), (("--max-failed", "43"), 0),
                                           (("--max-failed", "42"), 1), (("--max-failed", "75%"), 0)])
def test_max_failed(args: tuple[str, ...], code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """43 of 60 failed after the server died: over the default limit (exit 1, one line); --max-failed 100%
    accepts it as before, and a count or a share above 43 of 60 does too."""
    got, received, _, err, summary = run_and_read(dies_after(17), tmp_path / "run", capsys, "--model", "m",
                                                  "--requests", "60", "--arrival", "concurrency", "--concurrency",
                                                  "1", *args)
    assert (got, received, summary["requests"]["failed"]) == (code, 60, 43)
    limit = args[1] if args else "10%"
    shown = "43" if not limit.endswith("%") else "72%"
    assert err == ([] if code == 0 else
                   [f"goodput: error: 43 of 60 requests failed ({shown} > --max-failed {limit}); --max-failed 100% "
                    "accepts any number"])


def test_a_bad_max_failed_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--url", "http://127.0.0.1:9", "--model", "m", "--max-failed", "lots",
                    "--output", str(tmp_path / "o")]) == 2
    assert "--max-failed must be a percentage (10%) or a count of requests (25), got 'lots'" in capsys.readouterr().err


@pytest.mark.parametrize("ignore_eos", [True, False])
def test_ignore_eos_not_honoured_is_said_once(ignore_eos: bool, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp ends each stream with "stop" after 3 tokens although --ignore-eos asked for all 8."""
    flag = "--ignore-eos" if ignore_eos else "--no-ignore-eos"
    code, _, out, _, summary = run_and_read(llama_cpp_stops_early(3), tmp_path / "run", capsys, "--model", "m",
                                            "--requests", "6", "--rate", "100", "--output-tokens", "8", flag)
    assert code == 0
    assert summary["requests"]["stopped_before_max_tokens"] == 6
    notes = [line for line in out.splitlines() if "does not honour ignore_eos" in line]
    assert notes == (["WARNING: the server does not honour ignore_eos: 6 of 6 successful requests ended with "
                      "finish_reason 'stop' before their max_tokens although every request asked to ignore the end "
                      "of sequence; their output lengths are the model's own, not --output-tokens"]
                     if ignore_eos else [])


@pytest.mark.parametrize("preamble", [0, 230])
def test_an_echoed_api_key_is_never_stored_or_printed(preamble: int, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The server quotes the key it was sent; with a long preamble the quote is cut by the message bound."""
    key = "sk-test-0123456789abcdefXYZ"
    out = tmp_path / "run"
    with threaded_server(echoes_key(preamble)) as server:
        code = run_cli(["run", "--url", server.url, *QUICK[:-1], "--model", "m", "--api-key", key, "--requests", "12",
                        "--rate", "200", "--output", str(out)])
        assert server.requests[0].headers["authorization"] == f"Bearer {key}"  # it was sent, and quoted back
    captured = capsys.readouterr()
    assert code == 1
    stored = [(out / name).read_bytes() for name in ("records.jsonl", "summary.json", "run.json")]
    stored.append(str(pq.read_table(out / "records.parquet").to_pylist()).encode())
    for text in [*stored, captured.out.encode(), captured.err.encode()]:
        assert key[:6].encode() not in text
    messages = [json.loads(line)["error_message"] for line in (out / "records.jsonl").read_text().splitlines()]
    assert all("Incorrect API key provided: [redacted]" in m for m in messages)
    assert all(m.endswith("[redacted]…") for m in messages) == (preamble > 0)  # the key was cut by the bound


@pytest.mark.slow
def test_workers_stop_early_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With worker processes the parent sees the records and stops them all the same way."""
    code, received, _, err, summary = run_and_read(vllm("served"), tmp_path / "run", capsys, "--model", "nope",
                                                   "--requests", "400", "--rate", "100", "--workers", "2")
    assert code == 1 and len(err) == 1 and err[0].startswith("goodput: error: stopped early: the first ")
    assert VLLM_404 in err[0] and received < 300 and summary["run"]["stopped_early"], received


def _ended(i: int, kind: str | None = "http_status", status: int | None = 404, message: str = "HTTP 404: no") -> Any:
    from metrics.records.record import RequestRecord

    if kind is None:
        return RequestRecord(id=i, intended_ns=0, sent_ns=1, status="ok")
    cancelled = kind in ("session_ended", "client_cancelled")
    return RequestRecord(id=i, intended_ns=0, sent_ns=1, status="cancelled" if cancelled else "error",
                         error_kind=kind, http_status=status, error_message=message)


def test_the_early_stop_rule() -> None:
    """K alike failures with request 0 among them stop; request 0 still out holds it; any success, another
    failure or a timeout disarms it for good; records never sent say nothing."""
    from loadgen.run.failing import FailingAlike, StopWhenFailingAlike

    hook = StopWhenFailingAlike(after=3)
    for i in (1, 2, 3, 4):  # request 0 still in flight: no verdict yet
        hook(_ended(i))
    hook(_ended(5, "session_ended", None, "turn 1 failed"))
    with pytest.raises(FailingAlike, match=r"the first 5 requests all failed the same way: HTTP 404: no"):
        hook(_ended(0))
    hook(_ended(6))  # raised once only
    for first, later in (((0, None), (1, "http_status")), ((0, "timeout_first_byte"), (1, "http_status"))):
        other = StopWhenFailingAlike(after=2)
        other(_ended(first[0], first[1]))
        for i in range(1, 5):
            other(_ended(i, later[1]))
        assert not other.armed
    mixed = StopWhenFailingAlike(after=2)
    mixed(_ended(0))
    mixed(_ended(1, message="HTTP 404: another"))
    mixed(_ended(2))
    assert not mixed.armed


def test_sweep_points_are_not_held_to_max_failed(tmp_path: Path) -> None:
    """Failures beyond capacity are what a point measures: its spec lifts the limit, keeps the early stop."""
    from loadgen.spec.run_spec import RunSpec
    from loadgen.sweep.points import PointLength, plan_point, point_spec

    point = plan_point(0, "rate", 4.0, PointLength(duration_s=5.0, requests=None), seed=0)
    spec = point_spec(RunSpec(), point, run_dir=tmp_path / "p", server_url=None)
    assert (RunSpec().load.max_failed, spec.load.max_failed, spec.load.keep_going) == ("10%", "100%", False)


def test_a_planned_cancel_says_nothing_to_the_early_stop_rule() -> None:
    """A stream closed as planned (--cancel-rate) may have ended before any answer: neither a success
    that disarms the rule nor a failure that counts."""
    from loadgen.run.failing import FailingAlike, StopWhenFailingAlike

    hook = StopWhenFailingAlike(after=2)
    hook(_ended(1, "planned_cancel", None, "closed 0 s after the send, as planned"))
    assert hook.armed and hook.count == 0
    hook(_ended(2))
    with pytest.raises(FailingAlike):
        hook(_ended(0))
