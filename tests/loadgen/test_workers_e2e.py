"""`goodput run --workers 2` end to end, as users run it (a subprocess), against the scripted test server:
the same requests at the same intended times as one process, figures within noise of one process, one
records.jsonl and one /metrics that agree with summary.json, Ctrl-C, and a worker killed mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.loadgen._stream_server import paced_server

pytestmark = pytest.mark.slow
GOODPUT = str(Path(sys.executable).with_name("goodput"))
BASE = ["--model", "m", "--tokenizer", "words", "--server-metrics", "none", "--no-html", "--quiet",
        "--prompt-tokens", "8"]


def start(url: str, out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([GOODPUT, "run", "--url", url, *BASE, "--output", str(out), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]


def summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())  # type: ignore[no-any-return]


def wait_for_records(out: Path, n: int, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    path = out / "records.jsonl"
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} records in time (exit {proc.poll()})")


def worker_pids(out: Path) -> list[int]:
    return list(json.loads((out / "run.json").read_text())["workers"]["pids"])


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def scrape_while_lingering(proc: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The live endpoint's text, read while the run serves its final values (--metrics-linger)."""
    assert proc.stderr is not None
    lines, url = [], None
    for line in proc.stderr:
        lines.append(line)
        if (m := re.match(r"live metrics: (http://\S+)", line)) is not None:
            url = m.group(1)
        if "serving final values" in line:
            assert url is not None
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.read().decode(), lines
    raise AssertionError("the run never served its final values:\n" + "".join(lines))


def samples(text: str) -> dict[str, float]:
    """Metric sample name → the sum over its label sets."""
    out: Counter[str] = Counter()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name] += s.value
    return dict(out)


@contextlib.contextmanager
def pushgateway() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """A stand-in Pushgateway on loopback that keeps every push (path, body)."""
    pushes: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            pushes.append((self.path, body.decode()))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", pushes
    finally:
        server.shutdown()
        server.server_close()


LOAD = ["--rate", "40", "--requests", "80", "--output-tokens", "6", "--seed", "3"]


def test_two_workers_send_the_one_schedule_with_the_figures_of_one_process(tmp_path: Path) -> None:
    with paced_server(first_s=0.02, gap_s=0.005) as srv, pushgateway() as (gateway, pushes):
        code, err = finish(start(srv.url, tmp_path / "one", *LOAD))
        assert code == 0, err
        proc = start(srv.url, tmp_path / "two", *LOAD, "--workers", "2", "--metrics-port", "0",
                     "--metrics-linger", "3s", "--pushgateway", gateway)
        live, _ = scrape_while_lingering(proc)
        code, err = finish(proc)
        assert code == 0, err
        assert sum(r.method == "POST" for r in srv.requests) == 160
    one, two = records(tmp_path / "one"), records(tmp_path / "two")
    # Poisson at 40/s, seed 3, built by hand: request 0 at t = 0, request i after the first i Exp(1)/40 gaps.
    gaps = np.random.default_rng(3).standard_exponential(80) / 40.0
    drawn = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    expected = [(i, round(float(t) * 1e9)) for i, t in enumerate(drawn)]
    assert sorted((r["id"], r["intended_ns"]) for r in two) == sorted((r["id"], r["intended_ns"]) for r in one) == expected
    assert {r["worker"] for r in one} == {0} and all(r["id"] % 2 == r["worker"] for r in two)
    assert Counter(r["worker"] for r in two) == {0: 40, 1: 40}
    s1, s2 = summary(tmp_path / "one"), summary(tmp_path / "two")
    for key in ("records", "sent", "succeeded", "failed", "in_window"):
        assert s1["requests"][key] == s2["requests"][key], key
    assert s2["requests"]["records"] == s2["requests"]["succeeded"] == 80
    # Figures against the server's own log, not wall-clock constants: it scripts 20 ms to the first chunk
    # and 5 ms between chunks, and stamps (on the same monotonic clock) when it had read each request and
    # when it wrote each chunk, so its lateness on a loaded machine is in the log too. A request's client
    # TTFT interval (sent → first chunk read) contains the server's (read → first chunk written).
    lat1, lat2 = s1["latency"], s2["latency"]
    posts = [r for r in srv.requests if r.method == "POST"]  # run "one" first, then run "two"
    for s, log in ((lat1, posts[:80]), (lat2, posts[80:])):
        server_ttft = float(np.median([(r.writes_ns[1] - r.received_ns) / 1e9 for r in log]))
        server_itl = float(np.median([(b - a) / 1e9 for r in log
                                      for a, b in zip(r.writes_ns[1:-2], r.writes_ns[2:-1], strict=True)]))
        assert server_ttft >= 0.020  # never before the script says
        assert server_ttft <= s["ttft_s"]["p50"] <= server_ttft + 0.010
        assert abs(s["itl_s"]["p50"] - server_itl) <= 0.004
    assert abs(lat1["ttft_s"]["p50"] - lat2["ttft_s"]["p50"]) < 0.010
    assert abs(lat1["e2e_s"]["p50"] - lat2["e2e_s"]["p50"]) < 0.015
    # One /metrics for the run, the workers folded: it counts what summary.json counts.
    got = samples(live)
    assert got["goodput_requests_total"] == got["goodput_requests_dispatched_total"] == 80
    assert got["goodput_worker_requests_total"] == got["goodput_worker_requests_dispatched_total"] == 80
    assert got["goodput_in_flight_requests"] == 0 and got["goodput_worker_up"] == 2
    assert got["goodput_ttft_seconds_count"] == s2["requests"]["in_window_ok"]
    assert got["goodput_good_requests_total"] == s2["goodput"]["good"]
    assert (tmp_path / "two" / "metrics.prom").read_text().count("goodput_worker_requests_total{") == 2
    workers = json.loads((tmp_path / "two" / "run.json").read_text())["workers"]
    assert workers["mode"] == "processes" and workers["count"] == 2 and workers["lost"] == []
    # The Pushgateway gets the run folded, once, in the run's one group, the per-worker series inside it.
    ((path, body),) = pushes
    assert path == "/metrics/job/goodput/run_id/two/worker/0"
    pushed = samples(body)
    assert pushed["goodput_requests_total"] == pushed["goodput_worker_requests_total"] == 80
    assert body.count("goodput_worker_requests_total{") == 2


@pytest.mark.parametrize("shape", [
    ["--arrival", "concurrency", "--concurrency", "3", "--requests", "31"],
    ["--rate", "30", "--requests", "9", "--turns", "3", "--cache-bust"],
])
def test_closed_loops_and_conversations_split_without_sharing_an_id(tmp_path: Path, shape: list[str]) -> None:
    with paced_server(first_s=0.005, gap_s=0.002) as srv:
        code, err = finish(start(srv.url, tmp_path / "run", *shape, "--output-tokens", "3", "--workers", "2"))
        assert code == 0, err
        posts = [r for r in srv.requests if r.method == "POST"]
        prompts = [json.dumps(r.json()["messages"][0]) for r in posts]
    recs = records(tmp_path / "run")
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == summary(tmp_path / "run")["requests"]["succeeded"]
    if "--turns" in shape:
        assert len(recs) == 27 and {r["session"] for r in recs} == set(range(9))
        assert all(r["session"] % 2 == r["worker"] for r in recs)  # a session never crosses workers
        firsts = [p for p, r in zip(prompts, posts, strict=True) if len(r.json()["messages"]) == 1]
        assert len(set(firsts)) == 9  # --cache-bust: every session's prefix is its own
    else:
        assert sorted(ids) == list(range(31)) and all(r["id"] % 2 == r["worker"] for r in recs)
        assert min(r["intended_ns"] for r in recs) >= 0


def test_ctrl_c_reaches_every_worker_and_the_outputs_are_complete(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with paced_server(first_s=0.02, gap_s=0.05) as srv:  # 20 tokens: about a second per request
        proc = start(srv.url, out, "--rate", "20", "--duration", "60s", "--output-tokens", "20", "--grace", "5s",
                     "--workers", "2")
        wait_for_records(out, 5, proc)
        pids = worker_pids(out)
        proc.send_signal(signal.SIGINT)
        code, err = finish(proc, timeout=60)
    assert code == 130, err
    info = json.loads((out / "run.json").read_text())
    assert info["interrupted"] and not info["complete"]
    recs, s = records(out), summary(out)
    assert len(recs) == s["requests"]["records"] == s["requests"]["sent"] + s["requests"]["never_sent"]
    assert {r["worker"] for r in recs} == {0, 1} and len({r["id"] for r in recs}) == len(recs)
    assert all(gone(pid) for pid in pids)


def _kill_a_worker(tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "run"
    with paced_server(first_s=0.02, gap_s=0.05) as srv:
        proc = start(srv.url, out, "--rate", "20", "--output-tokens", "20", "--workers", "2", *extra)
        wait_for_records(out, 5, proc)
        os.kill(worker_pids(out)[0], signal.SIGKILL)
        code, err = finish(proc, timeout=90)
    return code, err, out


def test_a_killed_worker_is_reported_its_requests_recorded_lost_and_the_run_stops(tmp_path: Path) -> None:
    code, err, out = _kill_a_worker(tmp_path, "--duration", "60s")
    assert code == 1, err
    lines = [line for line in err.splitlines() if "worker 0 was lost" in line]
    assert len(lines) == 1 and "killed by SIGKILL" in lines[0] and lines[0].startswith("goodput: error:")
    recs, s = records(out), summary(out)
    lost = [r for r in recs if r["error_kind"] == "worker_lost"]
    assert lost and all(r["worker"] == 0 and r["sent_ns"] is None and r["status"] == "error" for r in lost)
    assert s["requests"]["errors"]["worker_lost"] == len(lost) == s["requests"]["lost_with_worker"]
    assert len(recs) == s["requests"]["records"] == (s["requests"]["sent"] + s["requests"]["never_sent"]
                                                     + s["requests"]["lost_with_worker"])
    # In flight or never sent, nobody knows: not among the requests "failed before sending".
    assert s["requests"]["failed_before_send"] == sum(1 for r in recs if r["sent_ns"] is None) - len(lost)
    from exporters.console import format_summary

    line = next(x for x in format_summary(s).splitlines() if x.startswith("requests:"))
    assert f"+ {len(lost)} lost with a worker (in flight or never sent)" in line
    info = json.loads((out / "run.json").read_text())
    assert not info["complete"] and [w["worker"] for w in info["workers"]["lost"]] == [0]
    assert max(r["intended_ns"] for r in recs) < 30e9  # the run stopped there: it did not go on for its 60 s


def test_with_continue_the_run_goes_on_and_every_request_is_counted_once(tmp_path: Path) -> None:
    code, err, out = _kill_a_worker(tmp_path, "--requests", "60", "--on-worker-failure", "continue")
    assert code == 0, err
    assert "goodput: warning: worker 0 was lost (killed by SIGKILL)" in err and "the run goes on" in err
    recs = records(out)
    assert sorted(r["id"] for r in recs) == list(range(60))  # lost or answered, each request exactly once
    lost = [r for r in recs if r["error_kind"] == "worker_lost"]
    assert lost and {r["worker"] for r in lost} == {0}
    assert all(r["status"] == "ok" for r in recs if r["worker"] == 1)
    assert max(r["id"] for r in lost) >= 56  # the dead worker's share to the end of the schedule
    assert summary(out)["requests"]["errors"] == {"worker_lost": len(lost)}


def test_abort_on_fail_judges_the_records_of_every_worker(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with paced_server(first_s=0.03, gap_s=0.005) as srv:  # every TTFT is about 30 ms: the threshold fails for sure
        code, err = finish(start(srv.url, out, "--rate", "20", "--duration", "60s", "--output-tokens", "4",
                                 "--workers", "2", "--threshold", "ttft:p(50) < 5ms", "--abort-on-fail",
                                 "--abort-delay", "1s", "--abort-interval", "250ms"))
    assert code == 99, err
    info = json.loads((out / "run.json").read_text())
    assert info["aborted"] and not info["complete"] and not info["interrupted"]
    recs = records(out)
    assert {r["worker"] for r in recs} == {0, 1} and max(r["intended_ns"] for r in recs) < 20e9
