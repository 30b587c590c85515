"""`goodput run --ray ADDRESS --workers 2` against a Ray head started here (on this host, stopped afterwards):
two actors send the one schedule, exactly as `--workers 2` does, and run.json holds each node's clock
offset with its uncertainty. Skipped, with the reason, only where Ray is not installed or cannot start."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.loadgen._stream_server import paced_server
from tests.loadgen.test_workers_e2e import BASE, GOODPUT, records, summary

pytestmark = pytest.mark.slow
LOAD = ["--rate", "40", "--requests", "40", "--output-tokens", "4", "--seed", "5", "--workers", "2"]


@pytest.fixture(scope="module")
def head() -> Iterator[tuple[str, dict[str, str]]]:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'goodput[ray]')")
    from tests.loadgen._ray_head import ray_head

    try:
        with ray_head(cpus=2) as running:
            yield running
    except RuntimeError as exc:
        if "did not start" in str(exc):
            pytest.skip(f"Ray cannot start a head on this machine: {exc}")
        raise


def run(url: str, out: Path, *args: str, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run([GOODPUT, "run", "--url", url, *BASE, "--output", str(out), *LOAD, *args],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr


def test_ray_actors_send_what_worker_processes_send(head: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    address, env = head
    with paced_server(first_s=0.01, gap_s=0.003) as srv:
        run(srv.url, tmp_path / "ray", "--ray", address, env=env)
        run(srv.url, tmp_path / "local")
    on_ray, local = records(tmp_path / "ray"), records(tmp_path / "local")
    assert sorted((r["id"], r["intended_ns"], r["worker"]) for r in on_ray) == \
        sorted((r["id"], r["intended_ns"], r["worker"]) for r in local)
    s_ray, s_local = summary(tmp_path / "ray"), summary(tmp_path / "local")
    assert s_ray["requests"] == s_local["requests"] and s_ray["requests"]["succeeded"] == 40
    workers = json.loads((tmp_path / "ray" / "run.json").read_text())["workers"]
    assert workers["mode"] == "ray" and workers["count"] == 2 and workers["lost"] == []
    assert address.rpartition(":")[2] in workers["address"]
    assert {a["worker"] for a in workers["actors"]} == {0, 1}
    (node,) = workers["nodes"]  # one host: one node, whose clock is the driver's
    assert node["same_clock_as_driver"] and node["applied_offset_ns"] == 0
    assert node["samples"] >= 9 and node["rtt_min_ns"] > 0
    # The true offset is 0 here: the estimate must contain it within its stated uncertainty.
    assert abs(node["clock_offset_ns"]) <= node["clock_uncertainty_ns"] == (node["rtt_min_ns"] + 1) // 2
    assert abs(node["end"]["clock_offset_ns"]) <= node["end"]["clock_uncertainty_ns"]


def test_a_lost_actor_is_reported_and_its_requests_recorded_lost(head: tuple[str, dict[str, str]],
                                                                  tmp_path: Path) -> None:
    import os
    import signal

    from tests.loadgen.test_workers_e2e import finish, wait_for_records

    address, env = head
    out = tmp_path / "run"
    with paced_server(first_s=0.02, gap_s=0.05) as srv:
        proc = subprocess.Popen([GOODPUT, "run", "--url", srv.url, *BASE, "--output", str(out), "--rate", "20",
                                 "--duration", "60s", "--output-tokens", "20", "--workers", "2", "--ray", address],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        wait_for_records(out, 5, proc)
        actors = json.loads((out / "run.json").read_text())["workers"]["actors"]
        os.kill(actors[0]["pid"], signal.SIGKILL)  # the actor's process: Ray tells the driver it died
        code, err = finish(proc, timeout=120)
    assert code == 1, err
    assert len([line for line in err.splitlines() if "worker 0 was lost" in line]) == 1
    lost = [r for r in records(out) if r["error_kind"] == "worker_lost"]
    assert lost and {r["worker"] for r in lost} == {0}
    assert summary(out)["requests"]["errors"]["worker_lost"] == len(lost)
